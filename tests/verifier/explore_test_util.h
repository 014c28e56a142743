// Helpers of the explorer's tests (explore_test.cc, explore_state_test.cc): a schedule loaded
// with its params, and searches and replays of it.
#ifndef PARITY_TESTS_VERIFIER_EXPLORE_TEST_UTIL_H_
#define PARITY_TESTS_VERIFIER_EXPLORE_TEST_UTIL_H_

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "sim/engine/engine.h"
#include "sim/ir/ir.h"
#include "sim/ir/parser.h"
#include "verifier/explore.h"

namespace parity::verifier::explore_test_util {

using engine::Engine;
using engine::Outcome;
using engine::Predictor;

struct Loaded {
  ir::Program program;
  std::vector<int64_t> params;
};

inline Loaded Load(const std::string& path,
                   std::vector<std::pair<std::string, int64_t>> defs = {}) {
  Loaded l;
  auto p = ir::ParseFile(path);
  EXPECT_TRUE(p.ok()) << p.status().ToString();
  if (!p.ok()) return l;
  l.program = std::move(p).value();
  auto v = ir::BindParams(l.program, defs);
  EXPECT_TRUE(v.ok()) << v.status().ToString();
  if (v.ok()) l.params = *v;
  return l;
}

inline Outcome EagerOutcome(const Loaded& l) {
  auto e = Engine::Create(l.program, l.params);
  EXPECT_TRUE(e.ok()) << e.status().ToString();
  if (!e.ok()) return Outcome::kError;
  return e->Run().outcome;
}

inline ExploreResult Search(const Loaded& l, bool reduction, bool collect = false,
                            bool stop = true) {
  ExploreOptions o;
  o.reduction = reduction;
  o.collect_terminals = collect;
  o.stop_at_first = stop;
  o.max_states = 20'000'000;
  return Explore(l.program, l.params, o);
}

// The replayed counterexample must end in the reported finding.
inline engine::RunResult ReplayEnd(const Loaded& l, const ExploreResult& r) {
  auto e = Replay(l.program, l.params, r.counterexample);
  EXPECT_TRUE(e.ok());
  return e.ok() ? e->result() : engine::RunResult{};
}

}  // namespace parity::verifier::explore_test_util

#endif  // PARITY_TESTS_VERIFIER_EXPLORE_TEST_UTIL_H_
