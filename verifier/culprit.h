// The culprit of a deadlock by repair: for each operation that could be wrong — a blocked
// parity wait (and every other parity wait), a barrier's init count, an expect_tx byte count —
// the smallest consistent change to it alone is applied to a copy of the program (flip the
// wait's parity, or derive it from the ring index the wait uses; set the count to the
// arrivals that really come per phase; set the bytes to those that land), and the schedule is
// re-run: with the deadlocked run's policy (or along an explore counterexample's order as far
// as it stays enabled) and under the eager, lazy and round-robin policies. The first change, in
// rank order, after which every run completes without a finding the original run did not have
// is the culprit, reported at its line with the change ("init count of empty[s] at
// gemm.pipe:48 is 2 but 6 arrivals come per phase: set it to 6").
//
// Rank (most direct evidence first): an expect_tx of a blocked phase whose bytes did not all
// land or were too many; an init count that differs from the arrivals its barrier measurably
// received per phase (distinct arriving agents, each with its arrive count); the parity of a
// blocked wait (flipped, then derived from the ring index); the parity of the wait the heuristic
// diagnosis blames; every other parity wait. Bounded: at most max_candidates changes and
// max_total_steps engine steps over all re-runs (wall clock only as a safety net); when nothing
// fixes the run, the heuristic diagnosis stands.
#ifndef PARITY_VERIFIER_CULPRIT_H_
#define PARITY_VERIFIER_CULPRIT_H_

#include <cstdint>
#include <vector>

#include "sim/engine/engine.h"
#include "sim/ir/ir.h"
#include "verifier/deadlock.h"

namespace parity::verifier {

struct RepairOptions {
  // The deadlocked run's options (policy and seed); its re-runs use them first.
  engine::EngineOptions options;
  // An explore counterexample: the re-run follows its choices while they stay enabled, then
  // goes on with the eager policy. Null for a `check` run.
  const std::vector<engine::Choice>* counterexample = nullptr;
  size_t max_candidates = 48;
  // Engine steps of all re-runs together: the bound that keeps the answer the same on every
  // machine (`parity check` of a 2x2-cluster GEMM with 512 k-tiles and its fix, four re-runs,
  // takes 0.7 s in all).
  uint64_t max_total_steps = 40'000'000;
  double budget_s = 20.0;  // wall clock for all re-runs together: a safety net only
};

// One candidate change (exposed for tests).
struct RepairCandidate {
  enum class Kind : uint8_t { kParity, kCount, kExpectTx };
  Kind kind = Kind::kParity;
  uint32_t role = 0;           // the role whose statement changes (kCount on a decl: unused)
  SourceLocation where;        // the statement (or the barrier declaration) that changes
  bool on_declaration = false; // kCount: the declaration's count (an `init` without one)
  uint32_t barrier = 0, index = 0, cta = 0, agent = 0;
  int64_t old_value = 0, new_value = 0;  // kCount, kExpectTx
  ir::ExprId new_expr = ir::kNoExpr;     // kParity: in the candidate program's arena
  std::string old_text, new_text;        // kParity: the expressions as written
  bool flip = false;                     // kParity: the old parity ^ 1
  int tier = 0;
};

// Re-runs the deadlocked schedule with one change at a time and, when one fixes it, replaces
// report->culprit (and the summary) with it. Returns whether a change fixed the run. `engine`
// is the deadlocked run (its trace recorded), `params` its bound params.
bool FindCulpritByRepair(const ir::Program& program, const std::vector<int64_t>& params,
                         const engine::Engine& engine, const RepairOptions& options,
                         DeadlockReport* report);

// The same search for a run that stopped at a model violation (an over-arrival, a phase that
// completed before anyone observed the one before, ...): a count or parity mistake often
// shows as one of those before it can deadlock. No phase is blocked, so the candidates are
// the measured init counts and every parity wait. found = false when no change fixes the run.
DeadlockCulprit FindCulpritOfViolation(const ir::Program& program,
                                       const std::vector<int64_t>& params,
                                       const engine::Engine& engine, const RepairOptions& options);

// DiagnoseDeadlock, then FindCulpritByRepair with the engine's own options.
DeadlockReport DiagnoseDeadlockWithRepair(
    const ir::Program& program, const engine::Engine& engine, const engine::RunResult& result,
    const std::vector<int64_t>& params,
    const std::vector<engine::Choice>* counterexample = nullptr);

}  // namespace parity::verifier

#endif  // PARITY_VERIFIER_CULPRIT_H_
