#include "sim/model/sync_barriers.h"

#include "gtest/gtest.h"

namespace parity::model {
namespace {

TEST(NamedBarriersTest, SyncCompletesWhenCountReachedAndResets) {
  NamedBarriers b(/*cta_threads=*/384);
  // Two consumer warp groups (256 threads) sync on id 1; 8 warps arrive.
  uint32_t gen = 0;
  for (int w = 0; w < 8; ++w) {
    const auto a = b.Arrive(1, 256);
    ASSERT_TRUE(a.ok());
    EXPECT_EQ(a.generation, 0u);
    EXPECT_EQ(a.completed, w == 7);
    if (w < 7) {
      EXPECT_FALSE(b.Passed(1, 0));
      EXPECT_EQ(b.arrived(1), 32u * (w + 1));
    }
    gen = a.generation;
  }
  EXPECT_TRUE(b.Passed(1, gen));
  EXPECT_EQ(b.arrived(1), 0u);
  EXPECT_EQ(b.generation(1), 1u);
  // The next use may pick another count (a new instance).
  const auto next = b.Arrive(1, 64);
  ASSERT_TRUE(next.ok());
  EXPECT_EQ(next.generation, 1u);
  EXPECT_FALSE(b.Passed(1, 1));
  EXPECT_TRUE(b.Arrive(1, 64).completed);
  EXPECT_TRUE(b.Passed(1, 1));
  // Other ids are independent.
  EXPECT_EQ(b.generation(2), 0u);
}

TEST(NamedBarriersTest, ArriveAndSyncMixOnOneId) {
  // Producer warp: bar.arrive; consumer warps: bar.sync; same id and count. Arrive does not wait,
  // so the producer never calls Passed; the consumers pass once the count is reached.
  NamedBarriers b(128);
  const auto producer = b.Arrive(3, 96);
  const auto c1 = b.Arrive(3, 96);
  ASSERT_TRUE(producer.ok());
  ASSERT_TRUE(c1.ok());
  EXPECT_FALSE(b.Passed(3, c1.generation));
  const auto c2 = b.Arrive(3, 96);
  EXPECT_TRUE(c2.completed);
  EXPECT_TRUE(b.Passed(3, c1.generation));
}

TEST(NamedBarriersTest, NoOperandMeansAllCtaThreads) {
  NamedBarriers b(64);
  ASSERT_TRUE(b.Arrive(0, std::nullopt).ok());
  EXPECT_EQ(b.count(0), 64u);
  // A partial last warp (e.g. a CTA of 48 threads) contributes its threads.
  NamedBarriers odd(48);
  ASSERT_TRUE(odd.Arrive(0, std::nullopt, 32).ok());
  EXPECT_TRUE(odd.Arrive(0, std::nullopt, 16).completed);
}

TEST(NamedBarriersTest, ExitReleasesAllThreadBarriers) {
  // PTX exit: barriers waiting only on exited threads are released.
  NamedBarriers b(128);
  ASSERT_TRUE(b.Arrive(0, std::nullopt).ok());
  ASSERT_TRUE(b.Arrive(0, std::nullopt).ok());
  ASSERT_TRUE(b.Arrive(5, 128).ok());
  EXPECT_EQ(b.ThreadsExited(32), 0u);  // 64 of 96 arrived
  EXPECT_EQ(b.count(0), 96u);
  EXPECT_EQ(b.ThreadsExited(32), 1u << 0);  // 64 of 64: released
  EXPECT_TRUE(b.Passed(0, 0));
  // The explicit-count barrier 5 is not released.
  EXPECT_FALSE(b.Passed(5, 0));
  EXPECT_EQ(b.arrived(5), 32u);
}

struct NamedViolationCase {
  const char* name;
  uint32_t prior_arrivals;  // warps arriving first, with prior_count
  std::optional<uint32_t> prior_count;
  uint32_t id;
  std::optional<uint32_t> count;
  uint32_t arriving_threads;
  Violation expected;
  const char* text;
};

TEST(NamedBarriersTest, Violations) {
  const NamedViolationCase cases[] = {
      {"id 16",
       0,
       std::nullopt,
       16,
       64,
       32,
       {Code::kNamedBarrierId, 16, 15},
       "S1001 named-barrier-id: named barrier id 16 is outside 0..15"},
      {"count 48",
       0,
       std::nullopt,
       2,
       48,
       32,
       {Code::kNamedBarrierCountAlign, 48, 32},
       "S1002 named-barrier-count-align: named barrier thread count 48 is not a positive "
       "multiple of the warp size 32"},
      {"count 0", 0, std::nullopt, 2, 0, 32, {Code::kNamedBarrierCountAlign, 0, 32}, nullptr},
      {"count mismatch",
       1,
       128,
       4,
       64,
       32,
       {Code::kNamedBarrierCountMismatch, 64, 128},
       "S1003 named-barrier-count-mismatch: named barrier used with thread count 64 while the "
       "current instance counts 128 threads"},
      {"explicit count vs all threads",
       1,
       128,
       4,
       std::nullopt,
       32,
       {Code::kNamedBarrierCountMismatch, 256, 128},
       nullptr},
      // A CTA of 48 threads: its full warp and its 16-thread warp complete a 64-count barrier
      // only with 16 more threads; a full warp overshoots.
      {"arrivals beyond count",
       1,
       64,
       7,
       64,
       48,
       {Code::kNamedBarrierOverArrival, 80, 64},
       "S1004 named-barrier-over-arrival: 80 threads arrived at a named barrier counting 64 "
       "threads"},
  };
  for (const NamedViolationCase& c : cases) {
    SCOPED_TRACE(c.name);
    NamedBarriers b(256);
    for (uint32_t i = 0; i < c.prior_arrivals; ++i) {
      ASSERT_TRUE(b.Arrive(c.id, c.prior_count).ok());
    }
    const uint32_t slot = c.id < kNamedBarrierCount ? c.id : 0;
    const uint32_t arrived_before = b.arrived(slot);
    const auto a = b.Arrive(c.id, c.count, c.arriving_threads == 48 ? 16 : c.arriving_threads);
    if (c.arriving_threads == 48) {
      // Reach 48 of 64 first, then a full warp.
      ASSERT_TRUE(a.ok());
      const auto over = b.Arrive(c.id, c.count, 32);
      ASSERT_TRUE(over.violation.has_value());
      EXPECT_EQ(*over.violation, c.expected);
      EXPECT_EQ(Describe(*over.violation), c.text);
      EXPECT_EQ(b.arrived(slot), 48u) << "violating arrival must not be applied";
      continue;
    }
    ASSERT_TRUE(a.violation.has_value());
    EXPECT_EQ(*a.violation, c.expected);
    if (c.text != nullptr) {
      EXPECT_EQ(Describe(*a.violation), c.text);
    }
    EXPECT_EQ(b.arrived(slot), arrived_before) << "violating arrival must not be applied";
  }
}

TEST(ClusterBarrierTest, ArriveWaitOverSeveralPhases) {
  ClusterBarrier c(3);
  for (uint32_t phase = 0; phase < 3; ++phase) {
    SCOPED_TRACE(phase);
    EXPECT_EQ(c.phase(), phase);
    ASSERT_TRUE(c.Arrive(0).ok());
    ASSERT_TRUE(c.Arrive(2).ok());
    const auto w = c.Wait(0);
    ASSERT_TRUE(w.ok());
    EXPECT_FALSE(w.complete);  // participant 1 missing
    const auto last = c.Arrive(1);
    ASSERT_TRUE(last.ok());
    EXPECT_TRUE(last.completed);
    EXPECT_EQ(c.arrived(), 0u);
    for (uint32_t p = 0; p < 3; ++p) {
      const auto done = c.Wait(p);
      ASSERT_TRUE(done.ok());
      EXPECT_TRUE(done.complete);
    }
  }
}

TEST(ClusterBarrierTest, EarlyArriverMayWaitLate) {
  // Participant 0 arrives, the phase completes, others re-arrive for the next phase: 0's wait
  // still refers to the phase it arrived in, which is complete.
  ClusterBarrier c(2);
  ASSERT_TRUE(c.Arrive(0).ok());
  ASSERT_TRUE(c.Arrive(1).completed);
  ASSERT_TRUE(c.Wait(1).complete);
  ASSERT_TRUE(c.Arrive(1).ok());  // phase 1
  EXPECT_TRUE(c.Wait(0).complete);
  EXPECT_FALSE(c.Wait(1).complete);
}

TEST(ClusterBarrierTest, ExitLeavesTheExpectedSet) {
  ClusterBarrier c(3);
  ASSERT_TRUE(c.Arrive(0).ok());
  ASSERT_TRUE(c.Arrive(1).ok());
  EXPECT_FALSE(c.Wait(0).complete);
  EXPECT_TRUE(c.Exit(2));  // the only missing participant exits: released
  EXPECT_EQ(c.phase(), 1u);
  EXPECT_TRUE(c.Wait(0).complete);
  EXPECT_TRUE(c.Wait(1).complete);
  EXPECT_EQ(c.expected(), 2u);
  // An arrived participant that exits is no longer counted as arrived.
  ASSERT_TRUE(c.Arrive(0).ok());
  EXPECT_FALSE(c.Exit(0));
  EXPECT_EQ(c.arrived(), 0u);
  EXPECT_TRUE(c.Arrive(1).completed);
}

TEST(ClusterBarrierTest, Violations) {
  ClusterBarrier c(4);
  ASSERT_TRUE(c.Arrive(2).ok());
  const auto twice = c.Arrive(2);
  ASSERT_TRUE(twice.violation.has_value());
  EXPECT_EQ(*twice.violation, (Violation{Code::kClusterArriveTwice, 2, 0}));
  EXPECT_EQ(Describe(*twice.violation),
            "S1101 cluster-arrive-twice: barrier.cluster.arrive by participant 2 again before its "
            "barrier.cluster.wait");
  EXPECT_EQ(c.arrived(), 1u);  // not applied
  const auto no_arrive = c.Wait(3);
  ASSERT_TRUE(no_arrive.violation.has_value());
  EXPECT_EQ(*no_arrive.violation, (Violation{Code::kClusterWaitWithoutArrive, 3, 0}));
  EXPECT_EQ(Describe(*no_arrive.violation),
            "S1102 cluster-wait-without-arrive: barrier.cluster.wait by participant 3 without a "
            "preceding barrier.cluster.arrive");
  // Re-arrive after completion but without a wait: reported (fail closed).
  ClusterBarrier d(1);
  ASSERT_TRUE(d.Arrive(0).completed);
  ASSERT_TRUE(d.Arrive(0).violation.has_value());
  ASSERT_TRUE(d.Wait(0).complete);
  EXPECT_TRUE(d.Arrive(0).ok());
}

}  // namespace
}  // namespace parity::model
