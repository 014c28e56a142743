#include "sim/model/mbarrier.h"

#include <cstdint>
#include <numeric>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace parity::model {
namespace {

constexpr int64_t kMax = kMbarrierMaxCount;  // 2^20 - 1

// ---------------------------------------------------------------------------------------------
// A tiny op language so that tests are tables.

enum class K {
  kInit,  // a = count
  kInval,
  kArrive,             // a = count
  kArriveTx,           // a = tx, b = count
  kExpectTx,           // a = tx
  kCompleteTx,         // a = tx
  kNoComplete,         // a = count
  kDrop,               // a = count
  kDropNoComplete,     // a = count
  kWaitPhase,          // test_wait with a token for absolute phase a
  kWaitParity,         // test_wait.parity a
  kTryParitySpurious,  // try_wait.parity a, failing spuriously
  kAsyncIssue,         // cp.async.mbarrier.arrive issue (no .noinc)
  kAsyncIssueNoinc,
  kAsyncLand,
};

struct Op {
  K k;
  int64_t a = 0;
  int64_t b = 1;
};

struct Outcome {
  bool phase_completed = false;
  bool wait_complete = false;
  std::optional<Violation> violation;
  MbarrierToken token;
};

Outcome Apply(MbarrierState& s, const Op& op) {
  Outcome o;
  auto take = [&](const auto& r) {
    o.phase_completed = r.phase_completed;
    o.violation = r.violation;
  };
  auto take_arrive = [&](const MbarrierArriveResult& r) {
    take(r);
    o.token = r.token;
  };
  auto take_wait = [&](const MbarrierWaitResult& r) {
    o.wait_complete = r.complete;
    o.violation = r.violation;
  };
  switch (op.k) {
    case K::kInit:
      take(MbarrierInit(s, op.a));
      break;
    case K::kInval:
      take(MbarrierInval(s));
      break;
    case K::kArrive:
      take_arrive(MbarrierArrive(s, op.a));
      break;
    case K::kArriveTx:
      take_arrive(MbarrierArriveExpectTx(s, op.a, op.b));
      break;
    case K::kExpectTx:
      take(MbarrierExpectTx(s, op.a));
      break;
    case K::kCompleteTx:
      take(MbarrierCompleteTx(s, op.a));
      break;
    case K::kNoComplete:
      take_arrive(MbarrierArriveNoComplete(s, op.a));
      break;
    case K::kDrop:
      take_arrive(MbarrierArriveDrop(s, op.a));
      break;
    case K::kDropNoComplete:
      take_arrive(MbarrierArriveDrop(s, op.a, true));
      break;
    case K::kWaitPhase:
      take_wait(MbarrierTestWait(s, MbarrierToken{static_cast<uint32_t>(op.a), 0}));
      break;
    case K::kWaitParity:
      take_wait(MbarrierTestWaitParity(s, static_cast<uint32_t>(op.a)));
      break;
    case K::kTryParitySpurious:
      take_wait(MbarrierTryWaitParity(s, static_cast<uint32_t>(op.a), true));
      break;
    case K::kAsyncIssue:
      take(MbarrierAsyncArriveIssue(s, false));
      break;
    case K::kAsyncIssueNoinc:
      take(MbarrierAsyncArriveIssue(s, true));
      break;
    case K::kAsyncLand:
      take_arrive(MbarrierAsyncArriveLand(s));
      break;
  }
  return o;
}

MbarrierState Live(uint32_t phase, int32_t pending, int32_t expected, int32_t tx,
                   bool observed = true) {
  MbarrierState s;
  s.life = MbarrierLife::kLive;
  s.phase = phase;
  s.pending_count = pending;
  s.expected_count = expected;
  s.tx_count = tx;
  s.preceding_phase_observed = observed;
  return s;
}

// ---------------------------------------------------------------------------------------------
// Every mbarrier violation code, produced by a real transition; the state must be unchanged.

struct ViolationCase {
  const char* name;
  std::vector<Op> prefix;  // each must succeed
  Op op;
  Violation expected;
  const char* text;
};

TEST(MbarrierTest, EveryViolationCode) {
  const ViolationCase cases[] = {
      {"arrive on uninitialised",
       {},
       {K::kArrive, 1},
       {Code::kMbarrierUninitialized, 0, 0},
       "M1001 mbarrier-uninitialized: operation on an uninitialised mbarrier (only mbarrier.init "
       "is allowed there)"},
      {"wait on uninitialised",
       {},
       {K::kWaitParity, 0},
       {Code::kMbarrierUninitialized, 0, 0},
       nullptr},
      {"inval on uninitialised", {}, {K::kInval}, {Code::kMbarrierUninitialized, 0, 0}, nullptr},
      {"complete_tx on uninitialised",
       {},
       {K::kCompleteTx, 16},
       {Code::kMbarrierUninitialized, 0, 0},
       nullptr},
      {"async issue on uninitialised",
       {},
       {K::kAsyncIssueNoinc},
       {Code::kMbarrierUninitialized, 0, 0},
       nullptr},
      {"arrive after inval",
       {{K::kInit, 1}, {K::kInval}},
       {K::kArrive, 1},
       {Code::kMbarrierInvalidated, 0, 0},
       "M1002 mbarrier-invalidated: operation on an invalidated mbarrier (only mbarrier.init is "
       "allowed there)"},
      {"expect_tx after inval",
       {{K::kInit, 1}, {K::kInval}},
       {K::kExpectTx, 8},
       {Code::kMbarrierInvalidated, 0, 0},
       nullptr},
      {"double inval",
       {{K::kInit, 1}, {K::kInval}},
       {K::kInval},
       {Code::kMbarrierInvalidated, 0, 0},
       nullptr},
      {"init of live",
       {{K::kInit, 1}, {K::kArrive, 1}, {K::kWaitParity, 0}},
       {K::kInit, 2},
       {Code::kMbarrierInitLive, 1, 0},
       "M1003 mbarrier-init-live: mbarrier.init on a live mbarrier (in phase 1); mbarrier.inval "
       "must come first"},
      {"init count 0",
       {},
       {K::kInit, 0},
       {Code::kMbarrierExpectedCountRange, 0, kMax},
       "M1004 mbarrier-expected-count-range: mbarrier.init count 0 is outside 1..1048575"},
      {"init count 2^20",
       {},
       {K::kInit, kMax + 1},
       {Code::kMbarrierExpectedCountRange, kMax + 1, kMax},
       nullptr},
      {"over-arrival",
       {{K::kInit, 4}, {K::kArrive, 3}},
       {K::kArrive, 3},
       {Code::kMbarrierOverArrival, 3, 1},
       "M1005 mbarrier-over-arrival: arrive of count 3 on a barrier with 1 pending arrival"},
      {"arrive with bytes outstanding and no pending",
       {{K::kInit, 1}, {K::kExpectTx, 64}, {K::kArrive, 1}},
       {K::kArrive, 1},
       {Code::kMbarrierOverArrival, 1, 0},
       nullptr},
      {"expect_tx above 2^20-1",
       {{K::kInit, 1}, {K::kExpectTx, kMax}},
       {K::kExpectTx, 1},
       {Code::kMbarrierTxRange, kMax + 1, kMax},
       "M1006 mbarrier-tx-range: tx-count would become 1048576, outside -1048575..1048575"},
      {"complete_tx below -(2^20-1)",
       {{K::kInit, 1}},
       {K::kCompleteTx, kMax + 1},
       {Code::kMbarrierTxRange, -(kMax + 1), kMax},
       nullptr},
      {"arrive.expect_tx above range",
       {{K::kInit, 2}},
       {K::kArriveTx, kMax + 5, 1},
       {Code::kMbarrierTxRange, kMax + 5, kMax},
       nullptr},
      {"noComplete completes",
       {{K::kInit, 3}, {K::kArrive, 1}},
       {K::kNoComplete, 2},
       {Code::kMbarrierNoCompleteCompletes, 2, 2},
       "M1007 mbarrier-nocomplete-completes: arrive.noComplete of count 2 on a barrier with 2 "
       "pending arrivals and tx-count 0 would complete the phase"},
      {"arrive_drop.noComplete completes",
       {{K::kInit, 3}, {K::kArrive, 2}},
       {K::kDropNoComplete, 1},
       {Code::kMbarrierNoCompleteCompletes, 1, 1},
       nullptr},
      {"token two phases back",
       {{K::kInit, 1}, {K::kArrive, 1}, {K::kWaitParity, 0}, {K::kArrive, 1}, {K::kWaitParity, 1}},
       {K::kWaitPhase, 0},
       {Code::kMbarrierWaitStalePhase, 0, 2},
       "M1008 mbarrier-wait-stale-phase: wait on phase 0 while the barrier is in phase 2; only the "
       "current phase or the one before it may be waited on"},
      {"token from the future",
       {{K::kInit, 1}},
       {K::kWaitPhase, 1},
       {Code::kMbarrierWaitStalePhase, 1, 0},
       nullptr},
      {"arrive count 0",
       {{K::kInit, 2}},
       {K::kArrive, 0},
       {Code::kMbarrierArriveCountRange, 0, kMax},
       "M1010 mbarrier-arrive-count-range: arrive count 0 is outside 1..1048575"},
      {"arrive count 2^20",
       {{K::kInit, 2}},
       {K::kArrive, kMax + 1},
       {Code::kMbarrierArriveCountRange, kMax + 1, kMax},
       nullptr},
      {"arrive_drop count 0",
       {{K::kInit, 2}},
       {K::kDrop, 0},
       {Code::kMbarrierArriveCountRange, 0, kMax},
       nullptr},
      {"arrive_drop to zero expected",
       {{K::kInit, 2}},
       {K::kDrop, 2},
       {Code::kMbarrierDropBelowOne, 2, 2},
       "M1011 mbarrier-drop-below-one: arrive_drop of count 2 on a barrier expecting 2 arrivals "
       "per phase leaves the expected count at 0 (must stay >= 1)"},
      {"last participant drops",
       {{K::kInit, 2}, {K::kDrop, 1}},
       {K::kDrop, 1},
       {Code::kMbarrierDropBelowOne, 1, 1},
       nullptr},
  };
  for (const ViolationCase& c : cases) {
    SCOPED_TRACE(c.name);
    MbarrierState s;
    for (const Op& op : c.prefix) {
      const Outcome o = Apply(s, op);
      ASSERT_FALSE(o.violation.has_value()) << Describe(*o.violation);
    }
    const MbarrierState before = s;
    const Outcome o = Apply(s, c.op);
    ASSERT_TRUE(o.violation.has_value());
    EXPECT_EQ(*o.violation, c.expected) << Describe(*o.violation);
    EXPECT_FALSE(o.phase_completed);
    EXPECT_FALSE(o.wait_complete);
    EXPECT_EQ(s, before) << "a violating operation must leave the state unchanged";
    if (c.text != nullptr) {
      EXPECT_EQ(Describe(*o.violation), c.text);
    }
  }
}

TEST(MbarrierTest, PendingOverflowFromAsyncIncrement) {
  MbarrierState s = Live(0, kMax, kMax, 0);
  const MbarrierResult r = MbarrierAsyncArriveIssue(s, /*noinc=*/false);
  ASSERT_TRUE(r.violation.has_value());
  EXPECT_EQ(*r.violation, (Violation{Code::kMbarrierPendingOverflow, kMax + 1, kMax}));
  EXPECT_EQ(Describe(*r.violation),
            "M1012 mbarrier-pending-overflow: pending count would become 1048576, above 1048575");
  EXPECT_EQ(s.pending_count, kMax);
  // .noinc never increments, so it cannot overflow.
  EXPECT_TRUE(MbarrierAsyncArriveIssue(s, /*noinc=*/true).ok());
  EXPECT_EQ(s.pending_count, kMax);
}

// ---------------------------------------------------------------------------------------------
// Successful transitions: exact states after each step.

TEST(MbarrierTest, InitSetsPhaseZeroAndCounts) {
  MbarrierState s;
  ASSERT_TRUE(MbarrierInit(s, 5).ok());
  EXPECT_EQ(s, Live(0, 5, 5, 0));
  ASSERT_TRUE(MbarrierInval(s).ok());
  EXPECT_EQ(s.life, MbarrierLife::kInvalidated);
  // init after inval starts afresh (this is how a barrier's memory is repurposed).
  ASSERT_TRUE(MbarrierInit(s, kMax).ok());
  EXPECT_EQ(s, Live(0, kMax, kMax, 0));
}

TEST(MbarrierTest, PhaseFlipsOverSeveralPhases) {
  MbarrierState s;
  ASSERT_TRUE(MbarrierInit(s, 3).ok());
  for (uint32_t phase = 0; phase < 6; ++phase) {
    SCOPED_TRACE(phase);
    EXPECT_EQ(s.phase, phase);
    EXPECT_EQ(s.parity(), phase & 1);
    auto a = MbarrierArrive(s, 1);
    ASSERT_TRUE(a.ok());
    EXPECT_EQ(a.token, (MbarrierToken{phase, 3}));
    EXPECT_FALSE(a.phase_completed);
    EXPECT_EQ(s.pending_count, 2);
    // Waiting on the current phase: false, by parity and by token.
    EXPECT_FALSE(MbarrierTestWaitParity(s, phase & 1).complete);
    EXPECT_FALSE(MbarrierTestWait(s, a.token).complete);
    auto b = MbarrierArrive(s, 2);
    ASSERT_TRUE(b.ok());
    EXPECT_EQ(b.token, (MbarrierToken{phase, 2}));
    EXPECT_TRUE(b.phase_completed);
    EXPECT_EQ(s, Live(phase + 1, 3, 3, 0, /*observed=*/false));
    // The token of the completed phase now waits true, and marks the phase observed.
    auto w = MbarrierTestWait(s, a.token);
    ASSERT_TRUE(w.ok());
    EXPECT_TRUE(w.complete);
    EXPECT_TRUE(s.preceding_phase_observed);
  }
}

TEST(MbarrierTest, ParityWaitAtPhaseZeroOnParityOneSucceeds) {
  // The CUTLASS producer starts its empty-barrier pipeline state at phase 1: its first wait on a
  // fresh barrier must pass at once.
  MbarrierState s;
  ASSERT_TRUE(MbarrierInit(s, 2).ok());
  auto w = MbarrierTestWaitParity(s, 1);
  ASSERT_TRUE(w.ok());
  EXPECT_TRUE(w.complete);
  EXPECT_FALSE(MbarrierTestWaitParity(s, 0).complete);
  // Only the low bit of the operand counts.
  EXPECT_TRUE(MbarrierTestWaitParity(s, 3).complete);
  EXPECT_FALSE(MbarrierTestWaitParity(s, 2).complete);
}

TEST(MbarrierTest, ParityWaitAliasesWhereTokenWaitIsCaught) {
  // Two phases complete; a consumer still on phase 0 waits with parity 0: the barrier is in
  // phase 2, parity 0, so the parity wait says "incomplete" (aliasing: it now names phase 2).
  // The same wait expressed as a token for phase 0 is reported.
  MbarrierState s;
  ASSERT_TRUE(MbarrierInit(s, 1).ok());
  ASSERT_TRUE(MbarrierArrive(s, 1).ok());
  ASSERT_TRUE(MbarrierTestWaitParity(s, 0).complete);
  ASSERT_TRUE(MbarrierArrive(s, 1).ok());
  EXPECT_EQ(s.phase, 2u);
  auto p = MbarrierTestWaitParity(s, 0);
  EXPECT_TRUE(p.ok());
  EXPECT_FALSE(p.complete);
  auto t = MbarrierTestWait(s, MbarrierToken{0, 0});
  ASSERT_TRUE(t.violation.has_value());
  EXPECT_EQ(t.violation->code, Code::kMbarrierWaitStalePhase);
  // Previous phase by token: true.
  EXPECT_TRUE(MbarrierTestWait(s, MbarrierToken{1, 0}).complete);
}

TEST(MbarrierTest, SpuriousTryWaitReturnsFalseWithoutEffect) {
  MbarrierState s;
  ASSERT_TRUE(MbarrierInit(s, 1).ok());
  const MbarrierToken tok = MbarrierArrive(s, 1).token;
  const MbarrierState before = s;
  auto w = MbarrierTryWait(s, tok, /*spurious_fail=*/true);
  EXPECT_TRUE(w.ok());
  EXPECT_FALSE(w.complete);
  EXPECT_EQ(s, before);
  auto w2 = MbarrierTryWait(s, tok, /*spurious_fail=*/false);
  EXPECT_TRUE(w2.complete);
  EXPECT_TRUE(s.preceding_phase_observed);
  // A stale wait is reported even when the engine asked for a spurious failure.
  ASSERT_TRUE(MbarrierArrive(s, 1).ok());
  ASSERT_TRUE(MbarrierTestWaitParity(s, 1).complete);
  ASSERT_TRUE(MbarrierArrive(s, 1).ok());
  auto stale = MbarrierTryWait(s, tok, /*spurious_fail=*/true);
  ASSERT_TRUE(stale.violation.has_value());
  EXPECT_EQ(stale.violation->code, Code::kMbarrierWaitStalePhase);
  // try_wait.parity without a spurious failure behaves as test_wait.parity.
  EXPECT_TRUE(MbarrierTryWaitParity(s, 0, false).complete);
  EXPECT_FALSE(MbarrierTryWaitParity(s, 1, false).complete);
}

TEST(MbarrierTest, TxNegativeThenPositive) {
  // Bytes land before the expect (multicast from a peer CTA can beat the local producer).
  MbarrierState s;
  ASSERT_TRUE(MbarrierInit(s, 1).ok());
  auto c = MbarrierCompleteTx(s, 4096);
  ASSERT_TRUE(c.ok());
  EXPECT_FALSE(c.phase_completed);
  EXPECT_EQ(s, Live(0, 1, 1, -4096));
  // The producer's arrive.expect_tx of the whole stage: tx back to 0 and pending 0: complete.
  auto a = MbarrierArriveExpectTx(s, 8192);
  ASSERT_TRUE(a.ok());
  EXPECT_FALSE(a.phase_completed);  // 4096 bytes still outstanding
  EXPECT_EQ(s, Live(0, 0, 1, 4096));
  auto c2 = MbarrierCompleteTx(s, 4096);
  ASSERT_TRUE(c2.ok());
  EXPECT_TRUE(c2.phase_completed);
  EXPECT_EQ(s, Live(1, 1, 1, 0, false));
}

TEST(MbarrierTest, ArriveExpectTxIsAtomic) {
  // The expect happens before the arrive in one step, so the arrive cannot complete the phase
  // with the new bytes outstanding.
  MbarrierState s;
  ASSERT_TRUE(MbarrierInit(s, 1).ok());
  auto a = MbarrierArriveExpectTx(s, 256);
  ASSERT_TRUE(a.ok());
  EXPECT_FALSE(a.phase_completed);
  EXPECT_EQ(s, Live(0, 0, 1, 256));
  EXPECT_TRUE(MbarrierCompleteTx(s, 128).ok());
  EXPECT_EQ(s.tx_count, 128);
  EXPECT_TRUE(MbarrierCompleteTx(s, 128).phase_completed);
  // arrive.expect_tx with count > 1 and tx 0 (a plain arrive of count 2).
  ASSERT_TRUE(MbarrierTestWaitParity(s, 0).complete);
  ASSERT_TRUE(MbarrierInval(s).ok());
  ASSERT_TRUE(MbarrierInit(s, 3).ok());
  auto b = MbarrierArriveExpectTx(s, 0, 2);
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(s, Live(0, 1, 3, 0));
}

TEST(MbarrierTest, ExpectTxBackToZeroWithNoPendingCompletes) {
  // Measured on the H100 (litmus/tx_expect_brings_zero): bytes first, every arrival in, then an
  // expect_tx that brings tx back to 0 completes the phase.
  MbarrierState s = Live(0, 1, 1, 0);
  ASSERT_TRUE(MbarrierCompleteTx(s, 32).ok());
  ASSERT_TRUE(MbarrierArrive(s, 1).ok());
  EXPECT_EQ(s, Live(0, 0, 1, -32));
  auto part = MbarrierExpectTx(s, 16);  // tx -16: not yet
  ASSERT_TRUE(part.ok());
  EXPECT_FALSE(part.phase_completed);
  EXPECT_EQ(s, Live(0, 0, 1, -16));
  auto e = MbarrierExpectTx(s, 16);
  ASSERT_TRUE(e.ok());
  EXPECT_TRUE(e.phase_completed);
  EXPECT_EQ(s, Live(1, 1, 1, 0, false));
  EXPECT_TRUE(MbarrierTestWaitParity(s, 0).complete);
  // expect_tx is not an arrive-on: allowed before the completion is observed; with an arrival
  // pending it never completes the phase.
  EXPECT_TRUE(MbarrierExpectTx(s, 64).ok());
  EXPECT_EQ(s.tx_count, 64);
  EXPECT_EQ(s.phase, 1u);
}

TEST(MbarrierTest, CompleteTxOfZeroBytesWithArrivalsPendingCompletesNothing) {
  // pending 0 and tx 0 can no longer be left incomplete (expect_tx completes it too); a
  // complete_tx of 0 bytes after the completing arrive finds phase 1 with an arrival pending.
  MbarrierState s = Live(0, 1, 1, 0);
  ASSERT_TRUE(MbarrierArrive(s, 1).phase_completed);
  auto c = MbarrierCompleteTx(s, 0);
  ASSERT_TRUE(c.ok());
  EXPECT_FALSE(c.phase_completed);  // pending is 1 again in phase 1
  EXPECT_EQ(s, Live(1, 1, 1, 0, false));
}

TEST(MbarrierTest, ExpectTxOnly) {
  MbarrierState s = Live(0, 2, 2, 0);
  auto e = MbarrierExpectTx(s, 1024);
  ASSERT_TRUE(e.ok());
  EXPECT_FALSE(e.phase_completed);
  EXPECT_EQ(s, Live(0, 2, 2, 1024));
  ASSERT_TRUE(MbarrierExpectTx(s, kMax - 1024).ok());
  EXPECT_EQ(s.tx_count, kMax);
}

TEST(MbarrierTest, ArriveNoCompleteLeavingBytesOutstandingIsAccepted) {
  // OPEN(litmus) choice: only an arrive that completes the phase by itself is M1007.
  MbarrierState s = Live(0, 2, 2, 0);
  ASSERT_TRUE(MbarrierArriveNoComplete(s, 1).ok());
  EXPECT_EQ(s, Live(0, 1, 2, 0));
  ASSERT_TRUE(MbarrierExpectTx(s, 16).ok());
  auto a = MbarrierArriveNoComplete(s, 1);
  ASSERT_TRUE(a.ok());
  EXPECT_FALSE(a.phase_completed);
  EXPECT_EQ(s, Live(0, 0, 2, 16));
  EXPECT_TRUE(MbarrierCompleteTx(s, 16).phase_completed);
}

TEST(MbarrierTest, ArriveDropOverPhases) {
  MbarrierState s;
  ASSERT_TRUE(MbarrierInit(s, 4).ok());
  // Phase 0: one thread drops, three arrive. The drop counts as an arrival now and lowers the
  // expected count of the following phases.
  auto d = MbarrierArriveDrop(s, 1);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d.token, (MbarrierToken{0, 4}));
  EXPECT_EQ(s, Live(0, 3, 3, 0));
  ASSERT_TRUE(MbarrierArrive(s, 3).phase_completed);
  EXPECT_EQ(s, Live(1, 3, 3, 0, false));
  ASSERT_TRUE(MbarrierTestWaitParity(s, 0).complete);
  // Phase 1: a drop of 2 completes the phase by itself; pending resets to the lowered count.
  ASSERT_TRUE(MbarrierArrive(s, 1).ok());
  auto d2 = MbarrierArriveDrop(s, 2);
  ASSERT_TRUE(d2.ok());
  EXPECT_TRUE(d2.phase_completed);
  EXPECT_EQ(s, Live(2, 1, 1, 0, false));
  ASSERT_TRUE(MbarrierTestWaitParity(s, 1).complete);
  // Phase 2: the last expected participant arrives normally.
  EXPECT_TRUE(MbarrierArrive(s, 1).phase_completed);
  EXPECT_EQ(s, Live(3, 1, 1, 0, false));
  // arrive_drop.noComplete that does not complete is fine.
  ASSERT_TRUE(MbarrierTestWaitParity(s, 0).complete);
  MbarrierState t = Live(0, 3, 3, 0);
  ASSERT_TRUE(MbarrierArriveDrop(t, 1, /*no_complete=*/true).ok());
  EXPECT_EQ(t, Live(0, 2, 2, 0));
}

TEST(MbarrierTest, PendingCountFromToken) {
  // PTX mbarrier.pending_count: the pending count before the arrive, from a .noComplete state.
  MbarrierState s = Live(0, 4, 4, 0);
  auto a = MbarrierArriveNoComplete(s, 1);
  ASSERT_TRUE(a.ok());
  EXPECT_TRUE(a.token.from_no_complete);
  auto pa = MbarrierPendingCount(a.token);
  ASSERT_TRUE(pa.ok());
  EXPECT_EQ(pa.count, 4);
  auto b = MbarrierArriveDrop(s, 2, /*no_complete=*/true);
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(MbarrierPendingCount(b.token).count, 3);
  // The token of an ordinary arrive may not be queried.
  auto c = MbarrierArrive(s, 1);
  ASSERT_TRUE(c.ok());
  EXPECT_FALSE(c.token.from_no_complete);
  auto pc = MbarrierPendingCount(c.token);
  ASSERT_TRUE(pc.violation.has_value());
  EXPECT_EQ(*pc.violation, (Violation{Code::kMbarrierPendingCountToken, 0, 0}));
  EXPECT_EQ(Describe(*pc.violation),
            "M1013 mbarrier-pending-count-token: mbarrier.pending_count on a state that no "
            "arrive.noComplete or arrive_drop.noComplete returned");
}

TEST(MbarrierTest, AsyncArriveWithoutNoincNetsZero) {
  // cp.async.mbarrier.arrive (no .noinc) on a barrier of count 1 with one ordinary participant:
  // the increment at issue keeps the phase open until the copies land.
  MbarrierState s = Live(0, 1, 1, 0);
  ASSERT_TRUE(MbarrierAsyncArriveIssue(s, false).ok());
  EXPECT_EQ(s, Live(0, 2, 1, 0));
  auto a = MbarrierArrive(s, 1);  // the thread's own arrive
  ASSERT_TRUE(a.ok());
  EXPECT_FALSE(a.phase_completed);
  EXPECT_EQ(s.pending_count, 1);
  auto land = MbarrierAsyncArriveLand(s);
  ASSERT_TRUE(land.ok());
  EXPECT_TRUE(land.phase_completed);
  EXPECT_EQ(s, Live(1, 1, 1, 0, false));
}

TEST(MbarrierTest, AsyncArriveNoincMustBeBudgeted) {
  // With .noinc the init count includes the async arrive: count 2 = one thread + one async.
  MbarrierState s = Live(0, 2, 2, 0);
  ASSERT_TRUE(MbarrierAsyncArriveIssue(s, true).ok());
  EXPECT_EQ(s, Live(0, 2, 2, 0));
  ASSERT_TRUE(MbarrierArrive(s, 1).ok());
  EXPECT_TRUE(MbarrierAsyncArriveLand(s).phase_completed);
  // Not budgeted: count 1 with a thread arrive and a .noinc async arrive over-arrives.
  MbarrierState t = Live(0, 1, 1, 0);
  ASSERT_TRUE(MbarrierAsyncArriveIssue(t, true).ok());
  ASSERT_TRUE(MbarrierArrive(t, 1).phase_completed);
  // The async arrive lands in phase 1 and completes it before anyone observed phase 0: applied,
  // with the note M1009 (phase 0 is lost to later waits: the classic budget bug shows as a wait
  // that aliases, litmus/cpasync_noinc_overbudget hangs on the H100).
  auto land = MbarrierAsyncArriveLand(t);
  ASSERT_TRUE(land.ok());
  EXPECT_TRUE(land.phase_completed);
  ASSERT_TRUE(land.note.has_value());
  EXPECT_EQ(land.note->code, Code::kMbarrierArriveBeforeObserved);
}

// An arrive-on in the next phase before any wait observed the previous one is defined (the H100
// completes both phases: litmus/arrive_next_phase_unobserved) and is what multicast pipelines do
// when a peer CTA's consumer releases a stage early; completing that next phase while the
// previous one is still unobserved is applied too, with the note M1009 (the previous phase is
// lost to later waits). An async increment completes nothing.
TEST(MbarrierTest, ArriveInNextPhaseBeforeObservedIsDefinedCompletingItIsANote) {
  MbarrierState s = Live(0, 2, 2, 0);
  ASSERT_TRUE(MbarrierArrive(s, 2).phase_completed);
  auto early = MbarrierArrive(s, 1);  // a peer's release of the next round
  ASSERT_TRUE(early.ok());
  EXPECT_FALSE(early.note.has_value());
  EXPECT_FALSE(early.phase_completed);
  ASSERT_TRUE(MbarrierAsyncArriveIssue(s, false).ok());
  EXPECT_EQ(s, Live(1, 2, 2, 0, /*observed=*/false));
  auto lost = MbarrierArrive(s, 2);  // completes phase 1: phase 0 is lost
  ASSERT_TRUE(lost.ok());
  EXPECT_TRUE(lost.phase_completed);
  ASSERT_TRUE(lost.note.has_value());
  EXPECT_EQ(*lost.note, (Violation{Code::kMbarrierArriveBeforeObserved, 1, 0}));
  EXPECT_EQ(s, Live(2, 2, 2, 0, /*observed=*/false));
  // The same through complete_tx, and a spurious try_wait observes nothing.
  MbarrierState t = Live(0, 1, 1, 0);
  ASSERT_TRUE(MbarrierArrive(t, 1).phase_completed);
  EXPECT_FALSE(MbarrierTryWaitParity(t, 0, /*spurious_fail=*/true).complete);
  ASSERT_TRUE(MbarrierArriveExpectTx(t, 16, 1).ok());
  auto tx = MbarrierCompleteTx(t, 16);
  ASSERT_TRUE(tx.ok());
  EXPECT_TRUE(tx.phase_completed);
  ASSERT_TRUE(tx.note.has_value());
  // Observed in between: no note.
  MbarrierState u = Live(0, 1, 1, 0);
  ASSERT_TRUE(MbarrierArrive(u, 1).phase_completed);
  EXPECT_TRUE(MbarrierTryWaitParity(u, 0, false).complete);
  auto seen = MbarrierArrive(u, 1);
  EXPECT_TRUE(seen.phase_completed);
  EXPECT_FALSE(seen.note.has_value());
}

// ---------------------------------------------------------------------------------------------
// Randomized comparison with a naive model that keeps the whole history of the current phase
// (every arrival and every byte event) and the list of observed phases, and recomputes counts
// from it.

struct NaiveBarrier {
  MbarrierLife life = MbarrierLife::kUninitialized;
  uint32_t phase = 0;
  int64_t expected = 0;
  int64_t phase_start_pending = 0;
  std::vector<int64_t> arrivals;   // this phase; an async increment is recorded as -1
  std::vector<int64_t> tx_events;  // this phase; +expect, -complete
  std::vector<bool> observed;      // observed[p]: some wait returned true for phase p

  int64_t Pending() const {
    return phase_start_pending - std::accumulate(arrivals.begin(), arrivals.end(), int64_t{0});
  }
  int64_t Tx() const { return std::accumulate(tx_events.begin(), tx_events.end(), int64_t{0}); }
  bool PrecedingObserved() const { return phase == 0 || observed[phase - 1]; }

  void MaybeComplete(bool& completed) {
    if (Pending() == 0 && Tx() == 0) {
      ++phase;
      observed.push_back(false);
      phase_start_pending = expected;
      arrivals.clear();
      tx_events.clear();
      completed = true;
    }
  }

  MbarrierState AsState() const {
    MbarrierState s;
    s.life = life;
    if (life == MbarrierLife::kUninitialized) return s;
    s.phase = phase;
    s.pending_count = static_cast<int32_t>(Pending());
    s.expected_count = static_cast<int32_t>(expected);
    s.tx_count = static_cast<int32_t>(Tx());
    s.preceding_phase_observed = PrecedingObserved();
    return s;
  }

  // Applies op; returns the violation code or nullopt; sets completed / wait_complete.
  std::optional<Code> Do(const Op& op, bool& completed, bool& wait_complete) {
    completed = false;
    wait_complete = false;
    if (op.k == K::kInit) {
      if (life == MbarrierLife::kLive) return Code::kMbarrierInitLive;
      if (op.a < 1 || op.a > kMax) return Code::kMbarrierExpectedCountRange;
      *this = NaiveBarrier{};
      life = MbarrierLife::kLive;
      expected = phase_start_pending = op.a;
      observed.push_back(false);
      return std::nullopt;
    }
    if (life == MbarrierLife::kUninitialized) return Code::kMbarrierUninitialized;
    if (life == MbarrierLife::kInvalidated) return Code::kMbarrierInvalidated;
    auto arrive = [&](int64_t count, int64_t tx, bool drop,
                      bool nocomplete) -> std::optional<Code> {
      if (count < 1 || count > kMax) return Code::kMbarrierArriveCountRange;
      if (drop && expected - count < 1) return Code::kMbarrierDropBelowOne;
      if (Tx() + tx < -kMax || Tx() + tx > kMax) return Code::kMbarrierTxRange;
      if (count > Pending()) return Code::kMbarrierOverArrival;
      if (nocomplete && Pending() - count == 0 && Tx() + tx == 0) {
        return Code::kMbarrierNoCompleteCompletes;
      }
      // M1009 (completing a phase whose predecessor no wait observed) is a note: applied.
      if (drop) expected -= count;
      if (tx != 0) tx_events.push_back(tx);
      arrivals.push_back(count);
      MaybeComplete(completed);
      return std::nullopt;
    };
    auto wait = [&](uint32_t p, bool spurious) -> std::optional<Code> {
      if (p == phase) return std::nullopt;
      if (phase == 0 ? p != UINT32_MAX : p != phase - 1) return Code::kMbarrierWaitStalePhase;
      if (spurious) return std::nullopt;
      wait_complete = true;
      if (phase > 0) observed[phase - 1] = true;
      return std::nullopt;
    };
    const uint32_t cur_parity = phase & 1;
    switch (op.k) {
      case K::kInit:
        break;
      case K::kInval:
        life = MbarrierLife::kInvalidated;
        return std::nullopt;
      case K::kArrive:
        return arrive(op.a, 0, false, false);
      case K::kArriveTx:
        return arrive(op.b, op.a, false, false);
      case K::kNoComplete:
        return arrive(op.a, 0, false, true);
      case K::kDrop:
        return arrive(op.a, 0, true, false);
      case K::kDropNoComplete:
        return arrive(op.a, 0, true, true);
      case K::kAsyncLand:
        return arrive(1, 0, false, false);
      case K::kExpectTx:
      case K::kCompleteTx: {
        const int64_t d = op.k == K::kExpectTx ? op.a : -op.a;
        if (Tx() + d < -kMax || Tx() + d > kMax) return Code::kMbarrierTxRange;
        tx_events.push_back(d);
        MaybeComplete(completed);  // expect-tx too (H100: litmus/tx_expect_brings_zero)
        return std::nullopt;
      }
      case K::kWaitPhase:
        return wait(static_cast<uint32_t>(op.a), false);
      case K::kWaitParity:
      case K::kTryParitySpurious: {
        const uint32_t p = (static_cast<uint32_t>(op.a) & 1) == cur_parity ? phase : phase - 1;
        return wait(p, op.k == K::kTryParitySpurious);
      }
      case K::kAsyncIssueNoinc:
        return std::nullopt;
      case K::kAsyncIssue:
        if (Pending() + 1 > kMax) return Code::kMbarrierPendingOverflow;
        arrivals.push_back(-1);
        return std::nullopt;
    }
    return std::nullopt;
  }
};

Op RandomOp(std::mt19937_64& rng, const NaiveBarrier& ref) {
  auto pick = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  const int64_t r = pick(0, 99);
  // Small counts and byte sizes keep sequences in the interesting region; rare extremes hit the
  // range rules.
  auto count = [&]() -> int64_t {
    const int64_t c = pick(0, 49);
    if (c == 0) return 0;
    if (c == 1) return kMax + 1;
    return pick(1, 3);
  };
  auto bytes = [&]() -> int64_t {
    const int64_t c = pick(0, 49);
    if (c == 0) return kMax + pick(0, 2);
    return 16 * pick(0, 8);
  };
  if (r < 3) return {K::kInit, pick(0, 10) == 0 ? 0 : pick(1, 5)};
  if (r < 4) return {K::kInval};
  if (r < 24) return {K::kArrive, count()};
  if (r < 32) return {K::kArriveTx, bytes(), count()};
  // Byte events that settle the outstanding tx-count, so that phases keep completing.
  const int64_t tx = ref.Tx();
  if (r < 38) return {K::kExpectTx, (tx < 0 && pick(0, 1) == 0) ? -tx : bytes()};
  if (r < 48) return {K::kCompleteTx, (tx > 0 && pick(0, 2) != 0) ? tx : bytes()};
  if (r < 52) return {K::kNoComplete, count()};
  if (r < 55) return {K::kDrop, count()};
  if (r < 57) return {K::kDropNoComplete, count()};
  if (r < 65) {
    // Token for a phase near the current one (two back .. one ahead).
    const int64_t p = static_cast<int64_t>(ref.phase) + pick(-2, 1);
    return {K::kWaitPhase, static_cast<int64_t>(static_cast<uint32_t>(p))};
  }
  if (r < 82) return {K::kWaitParity, pick(0, 1)};
  if (r < 86) return {K::kTryParitySpurious, pick(0, 1)};
  if (r < 91) return {K::kAsyncIssue};
  if (r < 93) return {K::kAsyncIssueNoinc};
  return {K::kAsyncLand};
}

TEST(MbarrierTest, RandomSequencesMatchNaiveModel) {
  int64_t completions = 0, violations = 0, waits_true = 0;
  std::vector<int64_t> code_hits(AllCodes().size(), 0);
  for (uint64_t seed = 1; seed <= 400; ++seed) {
    std::mt19937_64 rng(seed);
    MbarrierState s;
    NaiveBarrier ref;
    for (int step = 0; step < 300; ++step) {
      Op op = RandomOp(rng, ref);
      // Start most sequences with an init so that they reach the interesting states.
      if (step == 0 && seed % 8 != 0) op = {K::kInit, 1 + static_cast<int64_t>(seed % 4)};
      bool ref_completed = false, ref_wait = false;
      const std::optional<Code> ref_code = ref.Do(op, ref_completed, ref_wait);
      const Outcome o = Apply(s, op);
      ASSERT_EQ(o.violation.has_value(), ref_code.has_value())
          << "seed " << seed << " step " << step << " op " << static_cast<int>(op.k) << " a "
          << op.a << (o.violation ? " model: " + Describe(*o.violation) : std::string());
      if (ref_code) {
        ASSERT_EQ(o.violation->code, *ref_code) << "seed " << seed << " step " << step;
        ++violations;
        ++code_hits[static_cast<size_t>(*ref_code)];
      }
      ASSERT_EQ(o.phase_completed, ref_completed) << "seed " << seed << " step " << step;
      ASSERT_EQ(o.wait_complete, ref_wait) << "seed " << seed << " step " << step;
      ASSERT_EQ(s, ref.AsState()) << "seed " << seed << " step " << step;
      completions += o.phase_completed;
      waits_true += o.wait_complete;
    }
  }
  // The generator must actually exercise the model, not just fail early.
  EXPECT_GT(completions, 2000);
  EXPECT_GT(waits_true, 2000);
  EXPECT_GT(violations, 1000);
  for (Code c : AllCodes()) {
    if (CodeId(c).substr(0, 2) != "M1") continue;
    if (c == Code::kMbarrierPendingOverflow) continue;    // needs 2^20 increments; tested above
    if (c == Code::kMbarrierPendingCountToken) continue;  // not an op on the state; tested above
    if (c == Code::kMbarrierArriveBeforeObserved) continue;  // a note, never a violation
    EXPECT_GT(code_hits[static_cast<size_t>(c)], 0) << CodeId(c) << " never produced";
  }
}

}  // namespace
}  // namespace parity::model
