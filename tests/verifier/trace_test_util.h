// Shared by the replay/compare tests: record simulator traces of a schedule in memory, and turn
// one into what the H100 executor records (no phase completions or TMA deliveries, no state read
// back, clock64-like timestamps).
#ifndef PARITY_TESTS_VERIFIER_TRACE_TEST_UTIL_H_
#define PARITY_TESTS_VERIFIER_TRACE_TEST_UTIL_H_

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "sim/engine/engine.h"
#include "sim/ir/hash.h"
#include "sim/ir/ir.h"
#include "sim/ir/parser.h"
#include "sim/trace/trace_file.h"

namespace parity::testing {

struct Schedule {
  ir::Program program;
  std::vector<int64_t> params;
};

inline Schedule Load(const std::string& path) {
  Schedule s;
  auto p = ir::ParseFile(path);
  EXPECT_TRUE(p.ok()) << p.status().ToString();
  if (!p.ok()) return s;
  s.program = std::move(p).value();
  auto v = ir::BindParams(s.program, {});
  EXPECT_TRUE(v.ok()) << v.status().ToString();
  if (v.ok()) s.params = *v;
  return s;
}

struct Recorded {
  trace::TraceFile trace;
  engine::RunResult result;
};

inline Recorded Record(const Schedule& s, engine::EngineOptions o) {
  Recorded r;
  auto e = engine::Engine::Create(s.program, s.params, o);
  EXPECT_TRUE(e.ok()) << e.status().ToString();
  if (!e.ok()) return r;
  r.result = e->Run();
  r.trace.header.schedule_hash = ir::ContentHash(s.program);
  r.trace.header.source = "sim";
  r.trace.header.device = "parity-engine";
  r.trace.header.schedule = s.program.name;
  r.trace.header.policy = engine::PolicyName(o.policy);
  for (size_t i = 0; i < s.program.params.size(); ++i) {
    r.trace.header.params.emplace_back(s.program.params[i].name, s.params[i]);
  }
  r.trace.events = e->trace();
  return r;
}

inline std::vector<engine::EngineOptions> Policies() {
  std::vector<engine::EngineOptions> out;
  for (engine::Policy p :
       {engine::Policy::kEager, engine::Policy::kLazy, engine::Policy::kRoundRobin}) {
    engine::EngineOptions o;
    o.policy = p;
    out.push_back(o);
  }
  for (uint64_t seed = 1; seed <= 4; ++seed) {
    engine::EngineOptions o;
    o.policy = engine::Policy::kRandom;
    o.seed = seed;
    out.push_back(o);
  }
  return out;
}

// Every bundled schedule (sim/examples and the pipeline library), sorted.
inline std::vector<std::string> BundledSchedules() {
  std::vector<std::string> out;
  for (const char* dir : {"sim/examples", "pipelines"}) {
    for (const auto& entry : std::filesystem::recursive_directory_iterator(dir)) {
      if (entry.path().extension() == ".pipe") out.push_back(entry.path().string());
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

// What the H100 executor records of the same run: no phase completions and no TMA deliveries
// (it cannot observe them), state fields left 0, timestamps in clock64 cycles. (The real
// executor also numbers pcs differently and records no exits; see traces/h100.)
inline trace::TraceFile AsH100(const trace::TraceFile& sim) {
  trace::TraceFile out = sim;
  out.header.source = "h100";
  out.header.device = "NVIDIA H100 80GB HBM3";
  out.header.policy = "hardware";
  out.events.clear();
  uint64_t clock = 1'000'000;
  for (trace::TraceEvent e : sim.events) {
    if (e.kind == static_cast<uint8_t>(trace::EventKind::kPhaseComplete) ||
        e.kind == static_cast<uint8_t>(trace::EventKind::kTmaDeliver)) {
      continue;
    }
    clock += 37;
    e.time = clock;
    if (e.kind != static_cast<uint8_t>(trace::EventKind::kTmaIssue)) e.value2 = 0;
    e.phase = 0;  // flags stay: the executor records remote/multicast too
    out.events.push_back(e);
  }
  return out;
}

inline size_t IndexOf(const trace::TraceFile& t, trace::EventKind kind, size_t from = 0) {
  for (size_t i = from; i < t.events.size(); ++i) {
    if (t.events[i].kind == static_cast<uint8_t>(kind)) return i;
  }
  ADD_FAILURE() << "no " << trace::EventKindName(static_cast<uint8_t>(kind)) << " event";
  return t.events.size();
}

}  // namespace parity::testing

#endif  // PARITY_TESTS_VERIFIER_TRACE_TEST_UTIL_H_
