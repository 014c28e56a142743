// The simulator side of the litmus suite (litmus/*.pipe, issue 7), in the manner of herdtools'
// herd: the set of outcomes the model allows for a test is the set of sim/litmus OutcomeOf over
// every interleaving the engine can take (agent steps and in-flight completions, sim/engine
// Choices/Step), found by an exhaustive search. The comparator then holds an H100 histogram
// (recorded by the GPU litmus runner in the same text format) against that set.
//
// Search: depth-first over Engine copies. Two states are merged only when the engine's state
// fingerprint AND everything recorded so far that the outcome reads but the state may not hold
// (each agent's sequence of test_wait results: a result variable can be overwritten) are equal,
// so merging never hides an outcome. No partial-order reduction (litmus tests are a few dozen
// steps; verifier/explore.h is the scalable explorer). A run that ends in a deadlock yields its
// hang outcome, one that ends at an error-severity model violation its `ub{...}` outcome.
#ifndef PARITY_VERIFIER_LITMUS_H_
#define PARITY_VERIFIER_LITMUS_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "sim/common/status.h"
#include "sim/ir/ir.h"
#include "sim/litmus/outcome.h"

namespace parity::verifier {

struct LitmusSearchOptions {
  // Distinct states visited before giving up (rule "litmus.too-big": a litmus test must be
  // small enough to enumerate exactly; a partial set would make the comparison unsound).
  uint64_t max_states = 2'000'000;
};

// All outcomes the model allows for `program` (bound with its default params). Histogram:
// name = `name`, hash = ir::ContentHashHex, source "sim", runs = distinct end states, counts =
// end states per outcome. Errors: the engine refuses the program (its Status), a run that ends
// in an engine error (expression fault etc.) or its step limit, or the search exceeds max_states.
Expected<litmus::Histogram> SimulateLitmus(const ir::Program& program, std::string_view name,
                                           const LitmusSearchOptions& options = {});

enum class LitmusVerdict : uint8_t {
  kAgree,      // every observed outcome is allowed by the model
  kFail,       // some observed outcome is not allowed: the model is wrong (or the silicon is
               // running another test)
  kUndefined,  // the model calls the test undefined behaviour (a ub{} outcome is allowed) and
               // the silicon showed outcomes outside the defined ones: reported, not failed
  kNotRun,     // no H100 histogram for this test
};
const char* LitmusVerdictName(LitmusVerdict v);

struct LitmusComparison {
  LitmusVerdict verdict = LitmusVerdict::kNotRun;
  std::vector<std::string> unexpected;      // observed, not allowed (with kFail/kUndefined)
  std::vector<std::string> never_observed;  // allowed, never observed on the H100
  uint64_t h100_runs = 0;
};

// Compares the simulator's set with an H100 histogram. Bad input (rule "litmus.hash"): the
// hashes differ (the histograms are of different schedules), or the sources are not sim / h100.
Expected<LitmusComparison> CompareLitmus(const litmus::Histogram& sim,
                                         const litmus::Histogram& h100);

}  // namespace parity::verifier

#endif  // PARITY_VERIFIER_LITMUS_H_
