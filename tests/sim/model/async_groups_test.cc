#include "sim/model/async_groups.h"

#include <cstdint>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "sim/model/mbarrier.h"

namespace parity::model {
namespace {

using Ids = std::vector<uint64_t>;

TEST(CpAsyncTest, WaitGroupArithmeticOverSeveralGroups) {
  CpAsyncState t;
  // g0 = {0, 1}, g1 = {2}, g2 = {3, 4, 5}
  t.Issue();
  t.Issue();
  EXPECT_EQ(t.Commit(), std::nullopt);
  t.Issue();
  EXPECT_EQ(t.Commit(), std::nullopt);
  t.Issue();
  t.Issue();
  t.Issue();
  EXPECT_EQ(t.Commit(), std::nullopt);
  EXPECT_EQ(t.committed_groups(), 3u);
  EXPECT_EQ(t.in_flight_count(), 6u);

  EXPECT_TRUE(t.WaitGroupSatisfied(3));  // nothing older than the newest 3
  EXPECT_TRUE(t.WaitGroupSatisfied(7));
  EXPECT_FALSE(t.WaitGroupSatisfied(2));  // needs g0
  EXPECT_EQ(t.BlockingCopies(2), (Ids{0, 1}));
  EXPECT_EQ(t.BlockingCopies(1), (Ids{0, 1, 2}));
  EXPECT_EQ(t.BlockingCopies(0), (Ids{0, 1, 2, 3, 4, 5}));

  // Completion order is free: finishing g1 first does not satisfy wait_group 2.
  t.Complete(2);
  EXPECT_FALSE(t.WaitGroupSatisfied(2));
  EXPECT_FALSE(t.WaitGroupSatisfied(1));
  t.Complete(1);
  EXPECT_FALSE(t.WaitGroupSatisfied(2));
  t.Complete(0);
  EXPECT_TRUE(t.WaitGroupSatisfied(2));
  EXPECT_TRUE(t.WaitGroupSatisfied(1));  // g0 and g1 done
  EXPECT_FALSE(t.WaitGroupSatisfied(0));
  t.Complete(5);
  t.Complete(3);
  EXPECT_EQ(t.BlockingCopies(0), (Ids{4}));
  t.Complete(4);
  EXPECT_TRUE(t.WaitGroupSatisfied(0));
  EXPECT_EQ(t.CheckExit(), std::nullopt);
}

TEST(CpAsyncTest, UncommittedCopiesAreNotWaitedFor) {
  CpAsyncState t;
  t.Issue();
  EXPECT_EQ(t.Commit(), std::nullopt);
  t.Issue();
  t.Issue();  // forgot cp.async.commit_group
  t.Complete(0);
  EXPECT_TRUE(t.WaitGroupSatisfied(0));  // the two uncommitted copies are not covered
  const auto v = t.CheckWaitGroup(0);
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(*v, (Violation{Code::kCpAsyncWaitUncommitted, 0, 2}));
  EXPECT_EQ(Describe(*v),
            "A1001 cp-async-wait-uncommitted: cp.async.wait_group 0 does not cover 2 uncommitted "
            "cp.async copies");
  EXPECT_EQ(CodeSeverity(v->code), Severity::kWarning);
  // A copy that completes before its commit still belongs to the group that commit creates.
  t.Complete(1);
  EXPECT_EQ(t.Commit(), std::nullopt);
  EXPECT_EQ(t.uncommitted_count(), 0u);
  EXPECT_FALSE(t.WaitGroupSatisfied(0));
  EXPECT_EQ(t.BlockingCopies(0), (Ids{2}));
  EXPECT_EQ(t.CheckWaitGroup(0), std::nullopt);
}

TEST(CpAsyncTest, EmptyCommitCreatesAGroupAndWarns) {
  CpAsyncState t;
  t.Issue();
  EXPECT_EQ(t.Commit(), std::nullopt);  // g0 = {0}
  const auto v = t.Commit();            // g1 = {} (pipeline tail)
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(*v, (Violation{Code::kCpAsyncEmptyCommit, 1, 0}));
  EXPECT_EQ(Describe(*v),
            "A1002 cp-async-empty-commit: cp.async.commit_group creates empty group 1 (no "
            "cp.async since the last commit)");
  EXPECT_EQ(t.committed_groups(), 2u);
  // The empty group shifts the arithmetic: wait_group 1 now requires g0.
  EXPECT_FALSE(t.WaitGroupSatisfied(1));
  t.Complete(0);
  EXPECT_TRUE(t.WaitGroupSatisfied(1));
}

TEST(CpAsyncTest, WaitAllCommitsThenWaitsForEverything) {
  CpAsyncState t;
  t.Issue();
  EXPECT_EQ(t.Commit(), std::nullopt);
  t.Issue();  // uncommitted
  t.BeginWaitAll();
  EXPECT_EQ(t.uncommitted_count(), 0u);
  EXPECT_EQ(t.committed_groups(), 2u);
  EXPECT_FALSE(t.WaitGroupSatisfied(0));
  t.Complete(0);
  EXPECT_FALSE(t.WaitGroupSatisfied(0));
  t.Complete(1);
  EXPECT_TRUE(t.WaitGroupSatisfied(0));
}

TEST(CpAsyncTest, ExitWithCopiesInFlight) {
  CpAsyncState t;
  t.Issue();
  t.Issue();
  EXPECT_EQ(t.Commit(), std::nullopt);
  t.Complete(1);
  const auto v = t.CheckExit();
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(*v, (Violation{Code::kAsyncExitInFlight, 1, 0}));
  EXPECT_EQ(Describe(*v),
            "A1003 async-exit-in-flight: thread exits with 1 asynchronous copy in flight");
}

TEST(CpAsyncTest, MbarrierArriveFiresAfterPriorCopiesOnly) {
  // Thread issues copies 0 and 1, then cp.async.mbarrier.arrive (no .noinc), then copy 2.
  // The barrier (count 1: this thread's own arrive) must complete only when copies 0 and 1 land,
  // independent of copy 2 and of any commit.
  CpAsyncState t;
  MbarrierState bar;
  ASSERT_TRUE(MbarrierInit(bar, 1).ok());
  t.Issue();
  t.Issue();
  const uint64_t fence = t.IssuedCount();
  ASSERT_TRUE(MbarrierAsyncArriveIssue(bar, /*noinc=*/false).ok());
  t.Issue();
  ASSERT_TRUE(MbarrierArrive(bar, 1).ok());
  EXPECT_EQ(bar.pending_count, 1);  // the async arrive still outstanding
  EXPECT_FALSE(t.AllCompleteBefore(fence));
  t.Complete(1);
  EXPECT_FALSE(t.AllCompleteBefore(fence));
  t.Complete(0);
  EXPECT_TRUE(t.AllCompleteBefore(fence));  // copy 2 still in flight: irrelevant
  EXPECT_EQ(t.in_flight_count(), 1u);
  const auto land = MbarrierAsyncArriveLand(bar);
  ASSERT_TRUE(land.ok());
  EXPECT_TRUE(land.phase_completed);
  EXPECT_TRUE(MbarrierTestWaitParity(bar, 0).complete);
  // A fence taken with no prior copies is satisfied at once.
  CpAsyncState empty;
  EXPECT_TRUE(empty.AllCompleteBefore(empty.IssuedCount()));
}

TEST(BulkAsyncTest, ReadVersusFullCompletion) {
  BulkAsyncState t;
  t.Issue();  // TMA store 0
  EXPECT_EQ(t.Commit(), std::nullopt);
  EXPECT_FALSE(t.WaitGroupSatisfied(0, /*read_only=*/true));
  EXPECT_FALSE(t.WaitGroupSatisfied(0, /*read_only=*/false));
  t.ReadDone(0);
  EXPECT_TRUE(t.WaitGroupSatisfied(0, true));    // smem source may be reused
  EXPECT_FALSE(t.WaitGroupSatisfied(0, false));  // writes not yet visible
  EXPECT_EQ(t.CheckExit(), std::nullopt);        // only global writes outstanding
  t.WriteDone(0);
  EXPECT_TRUE(t.WaitGroupSatisfied(0, false));
  EXPECT_EQ(t.in_flight_count(), 0u);
}

TEST(BulkAsyncTest, WaitGroupNOverSeveralGroups) {
  BulkAsyncState t;
  // g0 = {0, 1}, g1 = {2}, g2 = {3}
  t.Issue();
  t.Issue();
  EXPECT_EQ(t.Commit(), std::nullopt);
  t.Issue();
  EXPECT_EQ(t.Commit(), std::nullopt);
  t.Issue();
  EXPECT_EQ(t.Commit(), std::nullopt);
  // wait_group.read 1: g0 and g1 read.
  t.ReadDone(0);
  t.ReadDone(2);
  EXPECT_FALSE(t.WaitGroupSatisfied(1, true));
  EXPECT_FALSE(t.WaitGroupSatisfied(2, false));  // g0 writes outstanding
  t.ReadDone(1);
  EXPECT_TRUE(t.WaitGroupSatisfied(1, true));
  EXPECT_TRUE(t.WaitGroupSatisfied(2, true));
  EXPECT_FALSE(t.WaitGroupSatisfied(0, true));  // g2's op 3 unread
  EXPECT_FALSE(t.WaitGroupSatisfied(2, false));
  t.WriteDone(1);
  t.WriteDone(0);
  EXPECT_TRUE(t.WaitGroupSatisfied(2, false));
  EXPECT_FALSE(t.WaitGroupSatisfied(1, false));
  EXPECT_TRUE(t.WaitGroupSatisfied(3, false));
}

TEST(BulkAsyncTest, Warnings) {
  BulkAsyncState t;
  const auto empty = t.Commit();
  ASSERT_TRUE(empty.has_value());
  EXPECT_EQ(*empty, (Violation{Code::kBulkEmptyCommit, 0, 0}));
  EXPECT_EQ(Describe(*empty),
            "A1102 bulk-empty-commit: cp.async.bulk.commit_group creates empty bulk group 0 (no "
            "bulk operation since the last commit)");
  t.Issue();                                    // never committed
  EXPECT_TRUE(t.WaitGroupSatisfied(0, false));  // not covered by the wait
  const auto w = t.CheckWaitGroup(0);
  ASSERT_TRUE(w.has_value());
  EXPECT_EQ(*w, (Violation{Code::kBulkWaitUncommitted, 0, 1}));
  EXPECT_EQ(Describe(*w),
            "A1101 bulk-wait-uncommitted: cp.async.bulk.wait_group 0 does not cover 1 uncommitted "
            "bulk operation");
  // Exiting before the store has read its source is a note (safe on H100: traces/a1003/).
  const auto exit = t.CheckExit();
  ASSERT_TRUE(exit.has_value());
  EXPECT_EQ(*exit, (Violation{Code::kBulkExitReadsPending, 1, 0}));
  EXPECT_EQ(CodeSeverity(exit->code), Severity::kNote);
  EXPECT_EQ(Describe(*exit),
            "A1004 bulk-exit-reads-pending: thread exits before 1 bulk store has read shared "
            "memory (no cp.async.bulk.wait_group.read 0; safe on H100, not promised by the ISA)");
}

// Randomized: both classes against a brute-force model that stores (group, read, written) for
// every operation ever issued and evaluates the PTX sentences directly.
struct NaiveOp {
  uint64_t group;
  bool read = false;
  bool written = false;
};

// The engine's fingerprint hashes ForEachWord: states whose waits answer differently must
// differ there, even where the counters the old fingerprint hashed (committed groups,
// uncommitted copies, copies in flight) are equal. Here one copy is in flight in both, two
// groups are committed and none is open, but the copy belongs to group 0 in one (an empty group
// 1 follows) and to group 1 in the other: wait_group 1 passes only in the second.
template <typename State>
std::vector<uint64_t> Words(const State& s) {
  std::vector<uint64_t> w;
  s.ForEachWord([&w](uint64_t v) { w.push_back(v); });
  return w;
}

TEST(AsyncGroupsTest, WordsTellApartStatesWhoseWaitsDiffer) {
  CpAsyncState first, later;
  first.Issue();
  EXPECT_EQ(first.Commit(), std::nullopt);
  EXPECT_NE(first.Commit(), std::nullopt);  // empty group 1 (a warning)
  EXPECT_NE(later.Commit(), std::nullopt);  // empty group 0
  later.Issue();
  EXPECT_EQ(later.Commit(), std::nullopt);
  ASSERT_EQ(first.committed_groups(), later.committed_groups());
  ASSERT_EQ(first.uncommitted_count(), later.uncommitted_count());
  ASSERT_EQ(first.in_flight_count(), later.in_flight_count());
  ASSERT_EQ(first.untracked_in_flight(), later.untracked_in_flight());
  EXPECT_FALSE(first.WaitGroupSatisfied(1));
  EXPECT_TRUE(later.WaitGroupSatisfied(1));
  EXPECT_NE(Words(first), Words(later));

  BulkAsyncState bfirst, blater;
  bfirst.Issue();
  EXPECT_EQ(bfirst.Commit(), std::nullopt);
  EXPECT_NE(bfirst.Commit(), std::nullopt);
  EXPECT_NE(blater.Commit(), std::nullopt);
  blater.Issue();
  EXPECT_EQ(blater.Commit(), std::nullopt);
  ASSERT_EQ(bfirst.committed_groups(), blater.committed_groups());
  ASSERT_EQ(bfirst.uncommitted_count(), blater.uncommitted_count());
  EXPECT_FALSE(bfirst.WaitGroupSatisfied(1, false));
  EXPECT_TRUE(blater.WaitGroupSatisfied(1, false));
  EXPECT_NE(Words(bfirst), Words(blater));
  // Reading done changes what wait_group.read answers: a word too.
  const std::vector<uint64_t> before = Words(bfirst);
  bfirst.ReadDone(0);
  EXPECT_NE(Words(bfirst), before);
}

TEST(AsyncGroupsTest, RandomSequencesMatchBruteForce) {
  int64_t satisfied_checks = 0, unsatisfied_checks = 0;
  for (uint64_t seed = 1; seed <= 200; ++seed) {
    std::mt19937_64 rng(seed);
    auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
    CpAsyncState cp;
    BulkAsyncState bulk;
    std::vector<NaiveOp> cp_ops, bulk_ops;
    uint64_t cp_groups = 0, bulk_groups = 0;
    std::vector<uint64_t> fences;
    for (int step = 0; step < 200; ++step) {
      const int r = pick(0, 9);
      if (r <= 2) {
        EXPECT_EQ(cp.Issue(), cp_ops.size());
        cp_ops.push_back({cp_groups});
        EXPECT_EQ(bulk.Issue(), bulk_ops.size());
        bulk_ops.push_back({bulk_groups});
      } else if (r == 3) {
        bool cp_empty = true, bulk_empty = true;
        for (const NaiveOp& o : cp_ops) cp_empty &= o.group != cp_groups;
        for (const NaiveOp& o : bulk_ops) bulk_empty &= o.group != bulk_groups;
        EXPECT_EQ(cp.Commit().has_value(), cp_empty);
        EXPECT_EQ(bulk.Commit().has_value(), bulk_empty);
        ++cp_groups;
        ++bulk_groups;
      } else if (r == 4) {
        fences.push_back(cp.IssuedCount());
      } else {
        // Complete a random in-flight copy / advance a random bulk op.
        std::vector<size_t> cp_live, bulk_live;
        for (size_t i = 0; i < cp_ops.size(); ++i)
          if (!cp_ops[i].written) cp_live.push_back(i);
        for (size_t i = 0; i < bulk_ops.size(); ++i) {
          if (!bulk_ops[i].written) bulk_live.push_back(i);
        }
        if (!cp_live.empty()) {
          const size_t i = cp_live[pick(0, static_cast<int>(cp_live.size()) - 1)];
          cp.Complete(i);
          cp_ops[i].written = true;
        }
        if (!bulk_live.empty()) {
          const size_t i = bulk_live[pick(0, static_cast<int>(bulk_live.size()) - 1)];
          if (!bulk_ops[i].read) {
            bulk.ReadDone(i);
            bulk_ops[i].read = true;
          } else {
            bulk.WriteDone(i);
            bulk_ops[i].written = true;
          }
        }
      }
      // Check every wait predicate against the brute force.
      for (uint32_t n = 0; n <= 4; ++n) {
        bool cp_ok = true, bulk_read_ok = true, bulk_full_ok = true;
        std::vector<uint64_t> blocking;
        for (size_t i = 0; i < cp_ops.size(); ++i) {
          const bool older = cp_ops[i].group + n < cp_groups;  // committed and not newest n
          if (older && !cp_ops[i].written) {
            cp_ok = false;
            blocking.push_back(i);
          }
        }
        for (const NaiveOp& o : bulk_ops) {
          if (o.group + n < bulk_groups) {
            bulk_read_ok &= o.read;
            bulk_full_ok &= o.written;
          }
        }
        ASSERT_EQ(cp.WaitGroupSatisfied(n), cp_ok) << "seed " << seed << " step " << step;
        ASSERT_EQ(cp.BlockingCopies(n), blocking);
        ASSERT_EQ(bulk.WaitGroupSatisfied(n, true), bulk_read_ok);
        ASSERT_EQ(bulk.WaitGroupSatisfied(n, false), bulk_full_ok);
        (cp_ok ? satisfied_checks : unsatisfied_checks) += 1;
      }
      for (uint64_t fence : fences) {
        bool all = true;
        for (uint64_t i = 0; i < fence; ++i) all &= cp_ops[i].written;
        ASSERT_EQ(cp.AllCompleteBefore(fence), all);
      }
    }
  }
  EXPECT_GT(satisfied_checks, 10000);
  EXPECT_GT(unsatisfied_checks, 10000);
}

}  // namespace
}  // namespace parity::model
