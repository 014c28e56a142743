// The mbarrier object as a small value type with pure transition functions.
//
// PTX ISA "Parallel Synchronization and Communication Instructions: mbarrier" (9.7.13.15 in PTX
// 8.x, 9.7.15.16 in PTX 9.x), subsections "Contents of the mbarrier object" (ranges), "Lifecycle
// of the mbarrier object", "Phase of the mbarrier object", "Tracking asynchronous operations by
// the mbarrier object" (tx-count), "Phase completion", "Primary phase" (a phase is to be
// observed by a wait before the next phase's arrive-on; the model reports only the completion
// of the next phase, M1009, see CheckLostPhase in mbarrier.cc), and the instructions
// mbarrier.init/inval/expect_tx/complete_tx/arrive/arrive_drop/test_wait/try_wait/pending_count and cp.async.mbarrier.arrive. CUDA Programming Guide,
// "Asynchronous Barriers: a barrier's phase" restates the token and observation rules.
//
// Model:
//   * state: life (uninitialised, live, invalidated), phase number, pending arrival count,
//     expected arrival count (for the following phases), tx-count.
//   * ranges (.layout::v0, the only layout on sm_90): expected 1..2^20-1, pending 0..2^20-1,
//     tx -(2^20-1)..2^20-1; the arrive count operand 1..2^20-1. The txCount operand is a u32; the
//     rule is on the resulting tx-count, not on the operand.
//   * phase completion: whenever an arrive-on, a complete-tx or an expect-tx leaves pending == 0
//     and tx == 0,
//     the phase completes: phase += 1, pending = expected (tx is 0 already). tx may be negative
//     transiently (complete_tx before the matching expect_tx); no completion while tx != 0. An
//     expect_tx that brings tx back to 0 with nothing pending also completes it (measured on
//     the H100, see MbarrierExpectTx).
//   * every transition is a function of (state, operands) only; the engine owns nondeterminism
//     (which agent runs, when bytes land, whether try_wait fails spuriously) and passes it in.
//
// On a violation the state is left unchanged and the result carries the Violation: the operation
// is undefined behaviour in PTX, so the engine reports it and stops exploring that path. The rule
// has no exceptions, so callers never have to guess what a half-applied operation did. When
// several rules are broken at once, one violation is reported, the first in this order: life
// (M1001/M1002), count operand range (M1010), drop (M1011), tx range (M1006),
// over-arrival (M1005), noComplete (M1007). M1009 is a note on an applied operation (MbarrierResult::note).
//
// Cost: every function is a handful of integer operations, no allocation.
#ifndef PARITY_SIM_MODEL_MBARRIER_H_
#define PARITY_SIM_MODEL_MBARRIER_H_

#include <cstdint>
#include <optional>
#include <tuple>

#include "sim/model/codes.h"

namespace parity::model {

// Largest expected/pending count and largest |tx-count| (PTX ISA, contents of the mbarrier object).
inline constexpr int32_t kMbarrierMaxCount = (1 << 20) - 1;
inline constexpr int32_t kMbarrierMaxTx = (1 << 20) - 1;

enum class MbarrierLife : uint8_t { kUninitialized, kLive, kInvalidated };

struct MbarrierState {
  MbarrierLife life = MbarrierLife::kUninitialized;
  // Set when a wait has returned true for the immediately preceding (completed) phase; cleared
  // when a phase completes. Rule M1009: an update that would complete a phase whose predecessor
  // was never observed is reported (the predecessor is lost; an arrive-on alone is not). True
  // after init (phase 0 has no predecessor to observe).
  bool preceding_phase_observed = true;
  // Number of completed phases since init (wraps after 2^32 phases; ignored). Parity = phase & 1.
  uint32_t phase = 0;
  int32_t pending_count = 0;
  int32_t expected_count = 0;
  int32_t tx_count = 0;

  uint32_t parity() const { return phase & 1u; }
  bool operator==(const MbarrierState&) const = default;
  // Every field, once, in declaration order: the engine's state words and fingerprint
  // (sim/engine/components.h) are made from this list.
  auto Fields() const {
    return std::tie(life, preceding_phase_observed, phase, pending_count, expected_count,
                    tx_count);
  }
  // The value a reader of reachable states is shown (the explorer's collect_barrier_states):
  // life, phase and the two counts that decide when it completes.
  auto ValueFields() const { return std::tie(life, phase, pending_count, tx_count); }
  auto ValueFields() { return std::tie(life, phase, pending_count, tx_count); }
};

// The opaque 64-bit `state` returned by mbarrier.arrive, as the model sees it: the barrier's phase
// and pending count immediately BEFORE the arrive-on.
// PTX (mbarrier.arrive): the state captures "the phase of the mbarrier object prior to the
// arrive-on operation"; (mbarrier.pending_count): the count read from it is "the pending count of
// the mbarrier object prior to the arrive-on operation", and the state "must be the result of a
// prior mbarrier.arrive.noComplete or mbarrier.arrive_drop.noComplete" (M1013 otherwise).
// An engine that knows which absolute phase a program means (e.g. from its own phase tracking)
// may build a token {phase} to wait on that phase; this is how parity aliasing is detected.
struct MbarrierToken {
  uint32_t phase = 0;
  int32_t pending_count = 0;
  bool from_no_complete = false;  // produced by arrive.noComplete / arrive_drop.noComplete

  bool operator==(const MbarrierToken&) const = default;
};

// Result of an operation that may complete a phase.
struct MbarrierResult {
  bool phase_completed = false;  // this operation completed the current phase
  std::optional<Violation> violation;
  // A note (Severity::kNote, M1009) on an operation that is applied: reported, not an error.
  std::optional<Violation> note;

  bool ok() const { return !violation.has_value(); }
};

// Result of an arrive-on: as MbarrierResult plus the state token.
struct MbarrierArriveResult {
  bool phase_completed = false;
  std::optional<Violation> violation;
  std::optional<Violation> note;  // as MbarrierResult::note
  MbarrierToken token;  // meaningful only when ok()

  bool ok() const { return !violation.has_value(); }
};

// Result of test_wait / try_wait: waitComplete.
struct MbarrierWaitResult {
  bool complete = false;
  std::optional<Violation> violation;

  bool ok() const { return !violation.has_value(); }
};

// mbarrier.init [addr], count: phase 0, pending = expected = count, tx = 0.
// M1003 if live (inval first); M1004 if count not in 1..2^20-1. Allowed on an uninitialised or
// invalidated barrier.
MbarrierResult MbarrierInit(MbarrierState& s, int64_t count);

// mbarrier.inval [addr]. M1001 / M1002 unless live.
MbarrierResult MbarrierInval(MbarrierState& s);

// mbarrier.arrive [addr]{, count}: pending -= count, then the completion check.
// M1001/M1002, M1010 (count range), M1005 (count > pending); note M1009 (it completes the phase while the
// preceding phase was never observed).
MbarrierArriveResult MbarrierArrive(MbarrierState& s, int64_t count = 1);

// mbarrier.arrive.expect_tx [addr], tx{, count}: expect_tx(tx) then arrive(count), atomically
// (no completion check in between). Violations as MbarrierExpectTx and MbarrierArrive.
MbarrierArriveResult MbarrierArriveExpectTx(MbarrierState& s, int64_t tx, int64_t count = 1);

// mbarrier.expect_tx [addr], tx: tx += tx, then the completion check. M1001/M1002, M1006 (result
// out of range), M1009 (it would complete the phase while the preceding one was never
// observed). `tx` is the u32 operand: a value outside 0..2^32-1 is an engine bug (PARITY_CHECK).
// Completion: PTX lists "mbarrier potentially completing the current phase" as a step of the
// arrive-on and complete-tx operations only, and the model first left an expect_tx without one.
// The H100 settled it (litmus/tx_expect_brings_zero, traces/litmus: 1000 of 1000 runs): bytes
// landed first (tx -16), every arrival in (pending 0), then expect_tx(16) -> tx 0 completes the
// phase at once. An expect_tx can only complete a phase this way (tx negative before it, no
// arrival pending); with arrivals pending it never does.
MbarrierResult MbarrierExpectTx(MbarrierState& s, int64_t tx);

// complete_tx by tx bytes (the "complete-tx operation" performed by cp.async.bulk{.tensor},
// st.async, red.async, mbarrier.complete_tx): tx -= tx, then the completion check. Not an
// arrive-on. M1001/M1002, M1006, M1009 (as for expect_tx). `tx` in 0..2^32-1 as for expect_tx.
MbarrierResult MbarrierCompleteTx(MbarrierState& s, int64_t tx);

// mbarrier.arrive.noComplete [addr], count: as arrive, but M1007 if it would complete the phase
// (pending reaches 0 while tx == 0).
// PTX says the arrive "must not cause the phase to complete". We flag only an arrive that
// completes it by itself; one that leaves pending 0 with bytes still outstanding is accepted (the
// later complete_tx then completes the phase; the H100 agrees, litmus/
// nocomplete_with_tx_outstanding). One that would complete it is undefined; the H100 simply
// completes the phase (litmus/nocomplete_would_complete), the model keeps reporting M1007.
MbarrierArriveResult MbarrierArriveNoComplete(MbarrierState& s, int64_t count);

// mbarrier.arrive_drop{.noComplete} [addr]{, count}: expected -= count (for all following phases),
// then an arrive-on of count in the current phase (so a phase completed by it resets pending to
// the lowered expected count). M1011 if the expected count would drop below 1 (PTX: "If the
// decrement causes the expected arrivals count to be zero, the behavior is undefined"), plus
// arrive's violations, and M1007 with no_complete as for MbarrierArriveNoComplete.
MbarrierArriveResult MbarrierArriveDrop(MbarrierState& s, int64_t count = 1,
                                        bool no_complete = false);

// mbarrier.test_wait [addr], state: true iff the phase named by the token is complete.
//   token.phase == phase      -> false (current, incomplete)
//   token.phase == phase - 1  -> true  (immediately preceding; marks it observed)
//   otherwise                 -> M1008 (value = token.phase, limit = phase)
// M1001/M1002 unless live.
MbarrierWaitResult MbarrierTestWait(MbarrierState& s, MbarrierToken token);
// mbarrier.test_wait.parity [addr], parity: the phase with that parity among {current,
// preceding}: (parity & 1) == (phase & 1) -> false, else true. Only the low bit counts (the
// operand is a u32 whose "integer parity" is used). At phase 0, parity 1 returns true: this is why
// a CUTLASS producer starts its empty-barrier wait at phase 1. A parity wait cannot tell a phase
// two behind from the current one (it aliases); to catch that, wait with a token instead.
MbarrierWaitResult MbarrierTestWaitParity(MbarrierState& s, uint32_t parity);
// mbarrier.try_wait{.parity}: as test_wait, but may return false although the phase is complete
// (time limit). The engine chooses: spurious_fail = true makes a wait that would succeed return
// false without changing the state (violations are still reported).
MbarrierWaitResult MbarrierTryWait(MbarrierState& s, MbarrierToken token, bool spurious_fail);
MbarrierWaitResult MbarrierTryWaitParity(MbarrierState& s, uint32_t parity, bool spurious_fail);

// mbarrier.pending_count count, state: the pending count before the arrive that made the token.
// M1013 when the token did not come from a .noComplete arrive (value/limit 0).
struct MbarrierPendingCountResult {
  int32_t count = 0;
  std::optional<Violation> violation;

  bool ok() const { return !violation.has_value(); }
};
MbarrierPendingCountResult MbarrierPendingCount(MbarrierToken token);

// cp.async.mbarrier.arrive{.noinc} [addr], issue half. Without .noinc the pending count is
// incremented by 1 now (M1012 if it would exceed 2^20-1), so that the later asynchronous arrive
// nets to zero; with .noinc nothing happens now and the init count must budget for the arrive.
// M1001/M1002 unless live (the increment completes nothing, so M1009 cannot apply; the landing
// arrive is checked as any arrive-on). The arrive half is
// MbarrierAsyncArriveLand, which the engine calls once all cp.async issued by the thread before
// this instruction have completed (see CpAsyncState::AllCompleteBefore in async_groups.h).
MbarrierResult MbarrierAsyncArriveIssue(MbarrierState& s, bool noinc);
// The asynchronous arrive-on of count 1 that cp.async.mbarrier.arrive triggers. Same rules as
// MbarrierArrive(s, 1).
MbarrierArriveResult MbarrierAsyncArriveLand(MbarrierState& s);

}  // namespace parity::model

#endif  // PARITY_SIM_MODEL_MBARRIER_H_
