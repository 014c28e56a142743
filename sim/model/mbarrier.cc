#include "sim/model/mbarrier.h"

#include "sim/common/check.h"

namespace parity::model {
namespace {

constexpr int64_t kMaxU32 = 0xffffffffLL;

// M1001 / M1002 for every operation but init (PTX: mbarrier.inval, "Performing any mbarrier
// operation except mbarrier.init on a memory location that does not contain a valid mbarrier
// object, results in undefined behaviour").
std::optional<Violation> CheckLive(const MbarrierState& s) {
  switch (s.life) {
    case MbarrierLife::kLive:
      return std::nullopt;
    case MbarrierLife::kUninitialized:
      return Violation{Code::kMbarrierUninitialized, 0, 0};
    case MbarrierLife::kInvalidated:
      return Violation{Code::kMbarrierInvalidated, 0, 0};
  }
  return std::nullopt;
}

std::optional<Violation> CheckTxResult(int64_t tx) {
  if (tx < -int64_t{kMbarrierMaxTx} || tx > kMbarrierMaxTx) {
    return Violation{Code::kMbarrierTxRange, tx, kMbarrierMaxTx};
  }
  return std::nullopt;
}

// M1009, a note: the update completes the current phase (pending arrivals and tx-count both 0
// after it) while no wait has observed the preceding phase. The update is defined and applied:
// the H100 completes both phases (litmus/arrive_next_phase_unobserved, 1000 of 1000 runs), and
// an arrive-on in the new phase is common (a cluster peer's consumer releasing a stage early,
// pipelines/tma_async_gemm/deepgemm_multicast.pipe). What it puts at risk is a later wait: the
// barrier keeps only the current phase and its predecessor, so a wait meant for the unobserved
// phase now names another one (a token wait is M1008; a parity wait aliases, which shows as a
// hang or as a read before the bytes, P2001 / P2005 / P2009). So it is reported beside the run,
// never as its end.
std::optional<Violation> CheckLostPhase(const MbarrierState& s, int64_t pending_after,
                                        int64_t tx_after) {
  if (!s.preceding_phase_observed && pending_after == 0 && tx_after == 0) {
    return Violation{Code::kMbarrierArriveBeforeObserved, s.phase, 0};
  }
  return std::nullopt;
}

// Phase completion ("Phase completion of the mbarrier object"): pending arrivals 0 and tx-count
// 0. An expected count of 0 cannot occur (M1011 rejects the drop that would make it).
bool CompleteIfDone(MbarrierState& s) {
  if (s.pending_count != 0 || s.tx_count != 0) return false;
  s.phase += 1;
  s.pending_count = s.expected_count;
  s.preceding_phase_observed = false;
  return true;
}

// The common arrive-on: checks, then (expected -= drop), (tx += expect), pending -= count, then
// the completion check, as one atomic step. `no_complete` adds M1007. `drop` is 0 or count.
MbarrierArriveResult ArriveOn(MbarrierState& s, int64_t count, int64_t expect_tx, int64_t drop,
                              bool no_complete) {
  MbarrierArriveResult r;
  if ((r.violation = CheckLive(s))) return r;
  if (count < 1 || count > kMbarrierMaxCount) {
    r.violation = Violation{Code::kMbarrierArriveCountRange, count, kMbarrierMaxCount};
    return r;
  }
  if (drop > 0 && s.expected_count - drop < 1) {
    r.violation = Violation{Code::kMbarrierDropBelowOne, drop, s.expected_count};
    return r;
  }
  const int64_t tx = int64_t{s.tx_count} + expect_tx;
  if ((r.violation = CheckTxResult(tx))) return r;
  if (count > s.pending_count) {
    r.violation = Violation{Code::kMbarrierOverArrival, count, s.pending_count};
    return r;
  }
  if (no_complete && count == s.pending_count && tx == 0) {
    r.violation = Violation{Code::kMbarrierNoCompleteCompletes, count, s.pending_count};
    return r;
  }
  r.note = CheckLostPhase(s, s.pending_count - count, tx);
  r.token = MbarrierToken{s.phase, s.pending_count, no_complete};
  s.expected_count -= static_cast<int32_t>(drop);
  s.tx_count = static_cast<int32_t>(tx);
  s.pending_count -= static_cast<int32_t>(count);
  r.phase_completed = CompleteIfDone(s);
  return r;
}

// test_wait/try_wait on an absolute phase. Valid only for the current incomplete phase (false)
// and the immediately preceding one (true) (PTX: mbarrier.test_wait/try_wait). Unsigned
// arithmetic: phase 2^32-1 precedes phase 0, which is how a wait on "phase -1" right after init
// (the producer's start state) reads as complete.
MbarrierWaitResult WaitOnPhase(MbarrierState& s, uint32_t wait_phase, bool spurious_fail) {
  MbarrierWaitResult r;
  if ((r.violation = CheckLive(s))) return r;
  if (wait_phase == s.phase) return r;  // current, incomplete
  if (static_cast<uint32_t>(wait_phase + 1u) != s.phase) {
    r.violation = Violation{Code::kMbarrierWaitStalePhase, wait_phase, s.phase};
    return r;
  }
  if (spurious_fail) return r;  // try_wait's time limit: false, and nothing observed
  r.complete = true;
  s.preceding_phase_observed = true;
  return r;
}

}  // namespace

MbarrierResult MbarrierInit(MbarrierState& s, int64_t count) {
  MbarrierResult r;
  if (s.life == MbarrierLife::kLive) {
    r.violation = Violation{Code::kMbarrierInitLive, s.phase, 0};
    return r;
  }
  if (count < 1 || count > kMbarrierMaxCount) {
    r.violation = Violation{Code::kMbarrierExpectedCountRange, count, kMbarrierMaxCount};
    return r;
  }
  s = MbarrierState{};
  s.life = MbarrierLife::kLive;
  s.pending_count = static_cast<int32_t>(count);
  s.expected_count = static_cast<int32_t>(count);
  return r;
}

MbarrierResult MbarrierInval(MbarrierState& s) {
  MbarrierResult r;
  if ((r.violation = CheckLive(s))) return r;
  s.life = MbarrierLife::kInvalidated;
  return r;
}

MbarrierArriveResult MbarrierArrive(MbarrierState& s, int64_t count) {
  return ArriveOn(s, count, /*expect_tx=*/0, /*drop=*/0, /*no_complete=*/false);
}

MbarrierArriveResult MbarrierArriveExpectTx(MbarrierState& s, int64_t tx, int64_t count) {
  PARITY_CHECK(tx >= 0 && tx <= kMaxU32, "expect_tx operand is a u32");
  return ArriveOn(s, count, tx, /*drop=*/0, /*no_complete=*/false);
}

MbarrierResult MbarrierExpectTx(MbarrierState& s, int64_t tx) {
  PARITY_CHECK(tx >= 0 && tx <= kMaxU32, "expect_tx operand is a u32");
  MbarrierResult r;
  if ((r.violation = CheckLive(s))) return r;
  const int64_t next = int64_t{s.tx_count} + tx;
  if ((r.violation = CheckTxResult(next))) return r;
  r.note = CheckLostPhase(s, s.pending_count, next);
  s.tx_count = static_cast<int32_t>(next);
  // H100 (litmus/tx_expect_brings_zero, 1000 of 1000 runs): an expect_tx that brings tx-count
  // back to 0 while no arrival is pending completes the phase (see the header).
  r.phase_completed = CompleteIfDone(s);
  return r;
}

MbarrierResult MbarrierCompleteTx(MbarrierState& s, int64_t tx) {
  PARITY_CHECK(tx >= 0 && tx <= kMaxU32, "complete_tx operand is a u32");
  MbarrierResult r;
  if ((r.violation = CheckLive(s))) return r;
  const int64_t next = int64_t{s.tx_count} - tx;
  if ((r.violation = CheckTxResult(next))) return r;
  r.note = CheckLostPhase(s, s.pending_count, next);
  s.tx_count = static_cast<int32_t>(next);
  r.phase_completed = CompleteIfDone(s);
  return r;
}

MbarrierArriveResult MbarrierArriveNoComplete(MbarrierState& s, int64_t count) {
  return ArriveOn(s, count, /*expect_tx=*/0, /*drop=*/0, /*no_complete=*/true);
}

MbarrierArriveResult MbarrierArriveDrop(MbarrierState& s, int64_t count, bool no_complete) {
  // The drop is checked with the arrive's count range first, so a drop of 0 is M1010.
  const int64_t drop = (count >= 1 && count <= kMbarrierMaxCount) ? count : 0;
  return ArriveOn(s, count, /*expect_tx=*/0, drop, no_complete);
}

MbarrierWaitResult MbarrierTestWait(MbarrierState& s, MbarrierToken token) {
  return WaitOnPhase(s, token.phase, /*spurious_fail=*/false);
}

MbarrierWaitResult MbarrierTestWaitParity(MbarrierState& s, uint32_t parity) {
  // The parity names the current phase when it matches, else the preceding one.
  const uint32_t wait_phase = ((parity & 1u) == s.parity()) ? s.phase : s.phase - 1u;
  return WaitOnPhase(s, wait_phase, /*spurious_fail=*/false);
}

MbarrierWaitResult MbarrierTryWait(MbarrierState& s, MbarrierToken token, bool spurious_fail) {
  return WaitOnPhase(s, token.phase, spurious_fail);
}

MbarrierWaitResult MbarrierTryWaitParity(MbarrierState& s, uint32_t parity, bool spurious_fail) {
  const uint32_t wait_phase = ((parity & 1u) == s.parity()) ? s.phase : s.phase - 1u;
  return WaitOnPhase(s, wait_phase, spurious_fail);
}

MbarrierPendingCountResult MbarrierPendingCount(MbarrierToken token) {
  MbarrierPendingCountResult r;
  if (!token.from_no_complete) {
    r.violation = Violation{Code::kMbarrierPendingCountToken, 0, 0};
    return r;
  }
  r.count = token.pending_count;
  return r;
}

MbarrierResult MbarrierAsyncArriveIssue(MbarrierState& s, bool noinc) {
  MbarrierResult r;
  if ((r.violation = CheckLive(s))) return r;
  if (noinc) return r;
  const int64_t next = int64_t{s.pending_count} + 1;
  if (next > kMbarrierMaxCount) {
    r.violation = Violation{Code::kMbarrierPendingOverflow, next, kMbarrierMaxCount};
    return r;
  }
  s.pending_count = static_cast<int32_t>(next);
  return r;
}

MbarrierArriveResult MbarrierAsyncArriveLand(MbarrierState& s) { return MbarrierArrive(s, 1); }

}  // namespace parity::model
