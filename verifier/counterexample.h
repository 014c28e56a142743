// Counterexamples of `parity explore`: validating one by replaying it on the engine, and making
// one shorter within a time budget.
//
// The depth-first search finds a violation or deadlock quickly, but its path is whatever order
// the search took: other agents run ahead, copies complete that the finding does not need. The
// guaranteed-shortest path needs a breadth-first search over every state up to that depth, which
// on a large schedule takes far longer than the finding (millions of states). So explore reports
// the first path at once and then shortens it:
//  1. Removal (ShortenByRemoval): a step is dropped when the rest of the path, replayed on the
//     engine, still reaches the same finding. The candidates are an agent's last steps in the
//     path, in blocks of halving size (the agent then stops earlier), then every single step
//     (a completion the finding does not need stays in flight; an agent whose step is dropped
//     does its next one instead), until a whole pass drops nothing or the budget is spent. A
//     step is named by what it is, not by its position: an agent by its number, a completion by
//     the operation (kind, issuer, target, slot, element, issuing instruction, object), so that
//     a completion is still found when an earlier step that changes the in-flight list is gone;
//     a step that is not enabled in the replay is left out. What counts is only the replay.
//  2. A breadth-first search bounded in depth by the shortened length minus one (explore.cc):
//     if it finishes within the budget and finds nothing, the shortened path is a shortest one
//     in the explored graph; if it finds something, that is shorter.
// Every counterexample explore reports is replayed (ReplayFinding) and must reproduce its
// finding; one that does not is an internal error, never printed.
#ifndef PARITY_VERIFIER_COUNTEREXAMPLE_H_
#define PARITY_VERIFIER_COUNTEREXAMPLE_H_

#include <chrono>
#include <cstdint>
#include <optional>
#include <vector>

#include "sim/engine/engine.h"
#include "sim/ir/ir.h"

namespace parity::verifier {

// What a counterexample must reproduce: how the run ends and with which codes.
struct FindingKey {
  engine::Outcome outcome = engine::Outcome::kRunning;
  // kViolation: the model violation's code; otherwise 0.
  uint32_t violation_code = 0;
  // kCompleted with protocol rule errors: their codes, sorted and distinct.
  std::vector<uint32_t> rule_codes;
  bool operator==(const FindingKey&) const = default;
};

// Replays `path` from the initial state. The finding it ends in (nullopt: a step is not enabled
// where it is taken, the run ends before the last step, or it ends in no finding: running,
// completed without a protocol rule error). With check_rules, a completed run is a finding when the
// protocol rules (verifier/rules.h) report an error on it.
// The finding the run of `end` ended in (nullopt: none; ReplayFinding without the replay).
std::optional<FindingKey> FindingOf(const ir::Program& program, const engine::Engine& end,
                                    bool check_rules);

std::optional<FindingKey> ReplayFinding(const ir::Program& program,
                                        const std::vector<int64_t>& params,
                                        const std::vector<engine::Choice>& path, bool check_rules);

// The result of ShortenByRemoval.
struct Shortened {
  std::vector<engine::Choice> path;  // reproduces the finding of the original path
  uint32_t replays = 0;              // replays tried
  bool budget_spent = false;         // the deadline stopped it before a pass dropped nothing
};

// Drops steps of `path` (which must reproduce `key`) while the rest still reproduces it, until no
// single step can be dropped or `deadline` passes. The result reproduces `key` (checked by
// replaying each candidate).
Shortened ShortenByRemoval(const ir::Program& program, const std::vector<int64_t>& params,
                           const std::vector<engine::Choice>& path, const FindingKey& key,
                           bool check_rules, std::chrono::steady_clock::time_point deadline);
// The same from a copy of `init`, the program's initial state (kept with record_trace when `key`
// names rule codes: the rules read the trace).
Shortened ShortenByRemoval(const ir::Program& program, const engine::Engine& init,
                           const std::vector<engine::Choice>& path, const FindingKey& key,
                           bool check_rules, std::chrono::steady_clock::time_point deadline);

}  // namespace parity::verifier

#endif  // PARITY_VERIFIER_COUNTEREXAMPLE_H_
