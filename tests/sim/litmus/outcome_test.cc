// OutcomeOf on hand-built traces (the simulator's and the GPU executor's recording
// conventions), and the histogram text format: round trip and every malformed-input error.
#include "sim/litmus/outcome.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "sim/ir/ir.h"
#include "sim/model/codes.h"
#include "sim/trace/event.h"

namespace parity::litmus {
namespace {

using trace::EventKind;
using trace::TraceEvent;

ir::Program TwoBarriers() {
  ir::Program p;
  for (const char* name : {"full", "empty"}) {
    ir::BarrierDecl b;
    b.name = name;
    p.barriers.push_back(b);
  }
  return p;
}

TraceEvent Ev(EventKind kind, uint8_t cta, uint16_t agent, uint16_t object = 0,
              uint16_t index = 0, int32_t value = 0, uint8_t parity = 0, uint16_t pc = 1) {
  TraceEvent e{};
  e.kind = static_cast<uint8_t>(kind);
  e.cta = cta;
  e.target_cta = cta;
  e.agent = agent;
  e.object = object;
  e.index = index;
  e.value = value;
  e.parity = parity;
  e.pc = pc;
  return e;
}

TEST(OutcomeOf, TestWaitResultsPerAgentInProgramOrderAndPhaseCounts) {
  const ir::Program p = TwoBarriers();
  // Two agents interleaved; agent 1 of CTA 0 tests 0 then 1, agent 0 tests 1.
  std::vector<TraceEvent> t = {
      Ev(EventKind::kInit, 0, 0, 0, 0, 1),
      Ev(EventKind::kInit, 0, 0, 1, 2, 1),
      Ev(EventKind::kTestWait, 0, 1, 0, 0, 0),
      Ev(EventKind::kPhaseComplete, 0, 0, 0, 0, 0),
      Ev(EventKind::kTestWait, 0, 0, 0, 0, 1),
      Ev(EventKind::kTestWait, 0, 1, 0, 0, 1),
      Ev(EventKind::kPhaseComplete, 0, 0, 1, 2, 0),
      Ev(EventKind::kPhaseComplete, 0, 0, 1, 2, 1),
  };
  EXPECT_EQ(OutcomeOf(p, t), "ok tw{c0a0=1 c0a1=01} ph{full[0]@0=1 empty[2]@0=0}");
}

TEST(OutcomeOf, ReinitRestartsThePhaseCount) {
  const ir::Program p = TwoBarriers();
  std::vector<TraceEvent> t = {
      Ev(EventKind::kInit, 0, 0, 0, 0, 1),
      Ev(EventKind::kPhaseComplete, 0, 0, 0, 0, 0),
      Ev(EventKind::kInval, 0, 0, 0, 0),
      Ev(EventKind::kInit, 0, 0, 0, 0, 1),
  };
  EXPECT_EQ(OutcomeOf(p, t), "ok ph{full[0]@0=0}");
}

TEST(OutcomeOf, GpuProbeGivesTheFinalParitiesAndIsNotATestWait) {
  const ir::Program p = TwoBarriers();
  // The GPU records no kPhaseComplete; its end-of-run probe says phase parity 1 for full[0] of
  // CTA 1 and 0 for CTA 0.
  std::vector<TraceEvent> t = {
      Ev(EventKind::kInit, 0, 0, 0, 0, 1),
      Ev(EventKind::kInit, 1, 0, 0, 0, 1),
      Ev(EventKind::kTestWait, 1, 0, 0, 0, 1),
      Ev(EventKind::kTestWait, 0, 0, 0, 0, 0, 0, kProbePc),
      Ev(EventKind::kTestWait, 1, 0, 0, 0, 1, 0, kProbePc),
  };
  EXPECT_EQ(OutcomeOf(p, t), "ok tw{c1a0=1} ph{full[0]@0=0 full[0]@1=1}");
}

TEST(OutcomeOf, SimulatorDeadlockIsAHangWithoutFinalParities) {
  const ir::Program p = TwoBarriers();
  std::vector<TraceEvent> t = {
      Ev(EventKind::kInit, 0, 0, 0, 0, 1),
      Ev(EventKind::kTestWait, 0, 0, 0, 0, 0),
      Ev(EventKind::kWaitBegin, 0, 0, 0, 0, 0, 0),
      Ev(EventKind::kWaitEnd, 0, 0, 0, 0, 1, 0),  // a wait that completed: not a hang
      Ev(EventKind::kWaitBegin, 0, 0, 1, 0, 0, 1),
      Ev(EventKind::kWaitBegin, 0, 1, 0, 0, 0, 1),
  };
  EXPECT_EQ(OutcomeOf(p, t), "hang{c0a0@empty[0]/p1 c0a1@full[0]/p1} tw{c0a0=0}");
}

TEST(OutcomeOf, GpuTimeoutsAreTheSameHang) {
  const ir::Program p = TwoBarriers();
  TraceEvent aborted = Ev(EventKind::kWaitTimeout, 0, 1, 0, 0, 0, 1);
  aborted.flags = 0x40;  // gpu kFlagAborted: still blocked when another agent timed out
  std::vector<TraceEvent> t = {
      Ev(EventKind::kInit, 0, 0, 0, 0, 1),
      Ev(EventKind::kTestWait, 0, 0, 0, 0, 0),
      Ev(EventKind::kWaitBegin, 0, 0, 1, 0, 0, 1),
      Ev(EventKind::kWaitBegin, 0, 1, 0, 0, 0, 1),
      Ev(EventKind::kWaitTimeout, 0, 0, 1, 0, 0, 1),
      aborted,
  };
  EXPECT_EQ(OutcomeOf(p, t), "hang{c0a0@empty[0]/p1 c0a1@full[0]/p1} tw{c0a0=0}");
}

TEST(OutcomeOf, OtherBlockingWaitsAtADeadlock) {
  const ir::Program p = TwoBarriers();
  std::vector<TraceEvent> t = {
      Ev(EventKind::kClusterWaitBegin, 1, 0),
      Ev(EventKind::kNamedBarrierSyncBegin, 0, 2),
      Ev(EventKind::kBulkWaitBegin, 0, 3),
      Ev(EventKind::kBulkWaitEnd, 0, 3),
  };
  EXPECT_EQ(OutcomeOf(p, t), "hang{c0a2@bar.sync c1a0@cluster.wait}");
}

TEST(OutcomeOf, ErrorViolationIsUndefinedWarningsAreIgnored) {
  const ir::Program p = TwoBarriers();
  std::vector<TraceEvent> warn = {
      Ev(EventKind::kInit, 0, 0, 0, 0, 1),
      Ev(EventKind::kViolation, 0, 0, 0, 0, static_cast<int32_t>(model::Code::kCpAsyncEmptyCommit)),
  };
  EXPECT_EQ(OutcomeOf(p, warn), "ok ph{full[0]@0=0}");
  std::vector<TraceEvent> ub = {
      Ev(EventKind::kInit, 0, 0, 0, 0, 1),
      Ev(EventKind::kTestWait, 0, 0, 0, 0, 1),
      Ev(EventKind::kViolation, 0, 0, 1, 3,
         static_cast<int32_t>(model::Code::kMbarrierOverArrival)),
  };
  EXPECT_EQ(OutcomeOf(p, ub), "ub{M1005@empty[3]@0} tw{c0a0=1}");
}

TEST(OutcomeOf, OtherClustersAreNamed) {
  const ir::Program p = TwoBarriers();
  TraceEvent e = Ev(EventKind::kTestWait, 1, 0, 0, 0, 1);
  e.cluster = 2;
  std::vector<TraceEvent> t = {Ev(EventKind::kTestWait, 0, 0, 0, 0, 0), e};
  EXPECT_EQ(OutcomeOf(p, t), "ok tw{c0a0=0 k2c1a0=1}");
}

// pending_count values per agent, comma-separated in program order (multi-digit counts stay
// distinct); readback classes one digit per read; both between tw{} and ph{}.
TEST(OutcomeOf, PendingCountsAndReadbacks) {
  const ir::Program p = TwoBarriers();
  std::vector<TraceEvent> t = {
      Ev(EventKind::kInit, 0, 0, 0, 0, 1),
      Ev(EventKind::kPendingCount, 0, 1, 0, 0, 12),
      Ev(EventKind::kGlobalReadback, 0, 0, 0, 1, 1),
      Ev(EventKind::kTestWait, 0, 0, 0, 0, 0),
      Ev(EventKind::kPendingCount, 0, 1, 0, 0, 3),
      Ev(EventKind::kPendingCount, 0, 0, 0, 0, 1),
      Ev(EventKind::kGlobalReadback, 0, 0, 0, 1, 3),
      Ev(EventKind::kGlobalReadback, 0, 1, 0, 1, 0),
      Ev(EventKind::kPhaseComplete, 0, 0, 0, 0, 0),
  };
  EXPECT_EQ(OutcomeOf(p, t),
            "ok tw{c0a0=0} cnt{c0a0=1 c0a1=12,3} rb{c0a0=13 c0a1=0} ph{full[0]@0=1}");
  // A class outside 0..3 (a corrupt record) shows as 9, never as a valid class.
  std::vector<TraceEvent> bad = {Ev(EventKind::kGlobalReadback, 0, 0, 0, 0, 7)};
  EXPECT_EQ(OutcomeOf(p, bad), "ok rb{c0a0=9}");
}

// M1013 (mbarrier.pending_count on a token that no .noComplete arrive returned) names no
// barrier; A1103 (readback before the store's write completed) is not an mbarrier code.
TEST(OutcomeOf, UndefinedObservationsNameNoBarrier) {
  const ir::Program p = TwoBarriers();
  std::vector<TraceEvent> t = {
      Ev(EventKind::kInit, 0, 0, 0, 0, 1),
      Ev(EventKind::kViolation, 0, 0, 0, 0,
         static_cast<int32_t>(model::Code::kMbarrierPendingCountToken)),
  };
  EXPECT_EQ(OutcomeOf(p, t), "ub{M1013}");
  t[1].value = static_cast<int32_t>(model::Code::kBulkDestinationReadEarly);
  EXPECT_EQ(OutcomeOf(p, t), "ub{A1103}");
}

TEST(OutcomeOf, EmptyTraceIsOk) {
  EXPECT_EQ(OutcomeOf(TwoBarriers(), {}), "ok");
}

TEST(Histogram, FormatAndParseRoundTrip) {
  std::map<std::string, uint64_t> counts = {{"ok tw{c0a1=1} ph{b[0]@0=1}", 612},
                                            {"ok tw{c0a1=0} ph{b[0]@0=1}", 388}};
  const std::string text = FormatHistogram("race", "0123456789abcdef", "h100", 1000, counts);
  EXPECT_EQ(text,
            "Test race  Hash=0123456789abcdef  Source=h100  Runs=1000\n"
            "388  ok tw{c0a1=0} ph{b[0]@0=1}\n"
            "612  ok tw{c0a1=1} ph{b[0]@0=1}\n");
  auto h = ParseHistogram(text + "# device H100; trailing comment\n\n", "race.h100.txt");
  ASSERT_TRUE(h.ok()) << h.status().ToString();
  EXPECT_EQ(h->name, "race");
  EXPECT_EQ(h->hash, "0123456789abcdef");
  EXPECT_EQ(h->source, "h100");
  EXPECT_EQ(h->runs, 1000u);
  EXPECT_EQ(h->counts, counts);
  EXPECT_EQ(FormatHistogram(*h), text);
}

void ExpectError(const std::string& text, int line, const std::string& fragment) {
  auto h = ParseHistogram(text, "x.h100.txt");
  ASSERT_FALSE(h.ok()) << text;
  EXPECT_EQ(h.status().rule(), "litmus.format");
  EXPECT_EQ(h.status().where().file, "x.h100.txt");
  EXPECT_EQ(h.status().where().line, line) << h.status().ToString();
  EXPECT_NE(h.status().message().find(fragment), std::string::npos) << h.status().ToString();
}

TEST(Histogram, GarbledInputNamesTheLine) {
  const std::string hdr = "Test t  Hash=0123456789abcdef  Source=h100  Runs=10\n";
  ExpectError("", 0, "no header");
  ExpectError("# only a comment\n", 0, "no header");
  ExpectError("Tst t  Hash=0123456789abcdef  Source=h100  Runs=10\n", 1, "expected the header");
  ExpectError("Test t  Hash=0123  Source=h100  Runs=10\n", 1, "16 lower-case hex");
  ExpectError("Test t  Hash=0123456789ABCDEF  Source=h100  Runs=10\n", 1, "16 lower-case hex");
  ExpectError("Test t  Hash=0123456789abcdef  Source=gpu  Runs=10\n", 1, "Source must be");
  ExpectError("Test t  Hash=0123456789abcdef  Source=sim  Runs=ten\n", 1, "Runs must be");
  ExpectError(hdr + "\n5x  ok\n", 3, "count must be a number");
  ExpectError(hdr + "5\n", 2, "expected `COUNT  OUTCOME`");
  ExpectError(hdr + "3  ok\n4  ok\n", 3, "listed twice");
  ExpectError(hdr + "6  ok\n5  hang{c0a0@b[0]/p0}\n", 3, "more than Runs=10");
}

}  // namespace
}  // namespace parity::litmus
