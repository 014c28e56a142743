// The naive oracle of the differential tests: every interleaving of a schedule's steps,
// breadth first over Engine::Choices / Engine::Step, with no reduction, no successor
// prediction, no batching and no symmetry (the same walk as tests/sim/engine's ExploreAll, with
// its end states kept). Running states are told apart by Engine::StateHash and
// Engine::Fingerprint together (a state is new when either differs); an end state is
// kept by its Engine::Fingerprint (the explorer's terminal identity, outcome included), so the
// sets compare with ExploreResult::terminals.
//
// Lifetime (codes P2010 / P2011, verifier/lifetime.h), by the definition: a transition that
// changes an mbarrier of a CTA all of whose agents have exited is an access after that CTA's exit
// (every remote arrive, expect_tx and complete_tx and every copy delivery changes its barrier's
// state); P2011 when it is the delivery of a copy an agent of that CTA issued, else P2010. Every
// transition of the walk is looked at, so this is "some interleaving does it".
#ifndef PARITY_TESTS_VERIFIER_GEN_NAIVE_EXPLORE_H_
#define PARITY_TESTS_VERIFIER_GEN_NAIVE_EXPLORE_H_

#include <cstdint>
#include <set>
#include <vector>

#include "sim/engine/engine.h"
#include "sim/ir/ir.h"
#include "sim/model/codes.h"

namespace parity::gen {

struct NaiveEnds {
  bool complete = true;      // false: max_states stopped the walk
  uint64_t states = 0;       // distinct running states visited
  std::set<uint64_t> completed;   // fingerprints of completed end states
  std::set<uint64_t> deadlocked;  // of deadlocked end states
  std::set<uint64_t> violating;   // of end states after a model violation
  std::set<model::Code> codes;    // the codes of every reachable violation
  bool error = false;             // some run hit a run-time input error (kError)
  bool step_limit = false;        // some run hit the step limit
  bool stuck = false;             // a running state had no enabled step (an engine bug)
  std::set<model::Code> lifetime;  // P2010 / P2011 where some transition exhibits them
  // User assertions (ir::Program::assertions): the ids of the asserts and forall properties
  // that fail in some reachable run (P2033), and the exists properties that hold in some
  // completed end state (Engine::ExistsHeld bits).
  std::set<int64_t> failed_assertions;
  uint64_t exists_held = 0;
};

NaiveEnds NaiveExplore(const ir::Program& program, const std::vector<int64_t>& params,
                       uint64_t max_states);

}  // namespace parity::gen

#endif  // PARITY_TESTS_VERIFIER_GEN_NAIVE_EXPLORE_H_
