#include "sim/pipelines/counts.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

namespace parity::pipelines {
namespace {

int64_t Value(const CountsResult& r, const std::string& key) {
  for (const CountItem& i : r.items) {
    if (i.key == key) return i.value;
  }
  ADD_FAILURE() << "no item " << key;
  return -1;
}

const CountItem& Find(const CountsResult& r, const std::string& key) {
  for (const CountItem& i : r.items) {
    if (i.key == key) return i;
  }
  static const CountItem kNone;
  ADD_FAILURE() << "no item " << key;
  return kNone;
}

CountsRequest Gemm(int m, int n, int consumers, Signal signal = Signal::kAuto,
                   Multicast mc = Multicast::kAB) {
  CountsRequest r;
  r.kind = PipelineKind::kTmaAsync;
  r.cluster_m = m;
  r.cluster_n = n;
  r.consumers = consumers;
  r.signal = signal;
  r.multicast = mc;
  r.tile_a_m = 128;
  r.tile_a_k = 64;
  r.tile_b_n = 256;
  r.tile_b_k = 64;
  r.elem_bytes = 2;
  r.stages = 4;
  return r;
}

struct EmptyCase {
  int m, n, consumers;
  Signal signal;
  Multicast mc;
  int64_t empty;
};

// Expected values from CUTLASS's PipelineTmaAsync::init_barriers: (M + N - 1) x warpgroups for a
// multi-CTA cluster, num_consumers threads for a 1-CTA cluster; and from the multicast pattern
// for the non-CUTLASS variants (a: cluster_n senders, b: cluster_m, none: 1).
TEST(TmaAsyncCounts, EmptyCountTable) {
  const std::vector<EmptyCase> cases = {
      {1, 1, 2, Signal::kAuto, Multicast::kAB, 256},  // CUTLASS: every consumer thread arrives
      {1, 1, 1, Signal::kAuto, Multicast::kAB, 128},
      {1, 1, 2, Signal::kWarpgroup, Multicast::kAB, 2},
      {1, 1, 2, Signal::kWarp, Multicast::kAB, 8},
      {2, 1, 2, Signal::kAuto, Multicast::kAB, 4},
      {1, 2, 2, Signal::kAuto, Multicast::kAB, 4},
      {2, 2, 2, Signal::kAuto, Multicast::kAB, 6},
      {2, 2, 1, Signal::kAuto, Multicast::kAB, 3},
      {4, 2, 2, Signal::kAuto, Multicast::kAB, 10},
      {4, 2, 1, Signal::kWarp, Multicast::kAB, 20},
      {2, 2, 2, Signal::kWarp, Multicast::kAB, 24},
      {2, 2, 2, Signal::kThread, Multicast::kAB, 768},
      {2, 2, 2, Signal::kAuto, Multicast::kA, 4},   // A goes to the cluster_n = 2 CTAs of a column
      {4, 2, 1, Signal::kAuto, Multicast::kA, 2},
      {4, 2, 1, Signal::kAuto, Multicast::kB, 4},   // B goes to the cluster_m = 4 CTAs of a row
      {2, 2, 2, Signal::kAuto, Multicast::kNone, 2},
  };
  for (const EmptyCase& c : cases) {
    Expected<CountsResult> r = ComputeCounts(Gemm(c.m, c.n, c.consumers, c.signal, c.mc));
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(Value(*r, "init.empty"), c.empty)
        << c.m << "x" << c.n << " consumers " << c.consumers << " signal "
        << static_cast<int>(c.signal) << " multicast " << static_cast<int>(c.mc);
    EXPECT_EQ(Value(*r, "init.full"), 1);
    EXPECT_EQ(Value(*r, "stages"), 4);
  }
}

TEST(TmaAsyncCounts, TxIsBytesLandingInThisCtaIndependentOfCluster) {
  for (auto [m, n] : std::vector<std::pair<int, int>>{{1, 1}, {2, 1}, {1, 2}, {2, 2}, {4, 2}}) {
    Expected<CountsResult> r = ComputeCounts(Gemm(m, n, 2));
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(Value(*r, "tx.full"), 128 * 64 * 2 + 256 * 64 * 2) << m << "x" << n;
  }
  CountsRequest f8 = Gemm(2, 2, 2);
  f8.elem_bytes = 1;
  EXPECT_EQ(Value(*ComputeCounts(f8), "tx.full"), 128 * 64 + 256 * 64);
}

TEST(TmaAsyncCounts, DerivationOfTheTwoByTwoCluster) {
  Expected<CountsResult> r = ComputeCounts(Gemm(2, 2, 2));
  ASSERT_TRUE(r.ok());
  const CountItem& e = Find(*r, "init.empty");
  EXPECT_EQ(e.derivation.rfind("empty = (cluster_m + cluster_n - 1) x 2 warpgroups = 6: ", 0), 0u)
      << e.derivation;
  EXPECT_NE(e.derivation.find("its row and column"), std::string::npos);
  EXPECT_NE(e.derivation.find("itself counted once"), std::string::npos);
  Expected<CountsResult> single = ComputeCounts(Gemm(1, 1, 2));  // kept alive: Find returns a reference
  ASSERT_TRUE(single.ok());
  const CountItem& one = Find(*single, "init.empty");
  EXPECT_NE(one.derivation.find("x 128 threads = 256"), std::string::npos) << one.derivation;
}

TEST(TmaAsyncCounts, RejectsBadParameters) {
  CountsRequest r = Gemm(0, 2, 1);
  EXPECT_EQ(ComputeCounts(r).status().rule(), "counts.param");
  r = Gemm(8, 4, 1);  // 32 CTAs
  EXPECT_EQ(ComputeCounts(r).status().rule(), "counts.param");
  r = Gemm(2, 2, 0);
  EXPECT_EQ(ComputeCounts(r).status().rule(), "counts.param");
  r = Gemm(2, 2, 1);
  r.tile_b_k = 32;  // K of A and B differ
  EXPECT_EQ(ComputeCounts(r).status().rule(), "counts.param");
  r = Gemm(2, 3, 1);  // A (128 rows) cannot be split into 3 multicast slices
  EXPECT_EQ(ComputeCounts(r).status().rule(), "counts.param");
  r.multicast = Multicast::kB;  // only B is sliced (256 / 2): fine
  EXPECT_TRUE(ComputeCounts(r).ok());
}

// Runs --check on one claim and returns the outcome.
CheckOutcome Check(const CountsRequest& req, const std::string& key, int64_t yours) {
  Expected<CountsResult> res = ComputeCounts(req);
  EXPECT_TRUE(res.ok());
  Expected<std::vector<CheckOutcome>> out = CheckCounts(req, *res, {{key, yours}});
  EXPECT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(out->size(), 1u);
  return out->front();
}

void ExpectWhy(const CheckOutcome& o, const std::string& part) {
  EXPECT_FALSE(o.match);
  EXPECT_NE(o.explanation.find(part), std::string::npos) << o.explanation;
}

TEST(TmaAsyncCheck, MatchesAndExplainsEachClassOfMistake) {
  const CountsRequest g22 = Gemm(2, 2, 2);
  const CheckOutcome ok = Check(g22, "init.empty", 6);
  EXPECT_TRUE(ok.match);
  EXPECT_TRUE(ok.explanation.empty());

  const CheckOutcome all = Check(g22, "init.empty", 8);
  EXPECT_EQ(all.correct, 6);
  EXPECT_EQ(all.explanation.rfind("init.empty: you have 8, correct is 6 = "
                                  "(cluster_m + cluster_n - 1) x 2 warpgroups: ",
                                  0),
            0u)
      << all.explanation;
  ExpectWhy(all, "you counted all 4 CTAs of the cluster, but only the 3 in this CTA's row and "
                 "column multicast into it");

  const CountsRequest g42 = Gemm(4, 2, 2);  // correct 10
  ExpectWhy(Check(g42, "init.empty", 12), "counted this CTA twice");
  ExpectWhy(Check(g42, "init.empty", 16), "all 8 CTAs");
  ExpectWhy(Check(g42, "init.empty", 2), "only this CTA's consumers");
  ExpectWhy(Check(g42, "init.empty", 40), "one arrival per warp,");
  ExpectWhy(Check(g42, "init.empty", 5), "did not multiply by the 2 consumer warpgroups");
  ExpectWhy(Check(g42, "init.empty", 0), "outside 1..2^20-1");
  ExpectWhy(Check(Gemm(1, 1, 2), "init.empty", 2), "signals once per thread");

  const int64_t tx = 128 * 64 * 2 + 256 * 64 * 2;
  EXPECT_TRUE(Check(g42, "tx.full", tx).match);
  ExpectWhy(Check(g42, "tx.full", tx * 8), "multiplied by the cluster size");
  // This CTA issues 128/2 rows of A and 256/4 rows of B.
  ExpectWhy(Check(g42, "tx.full", 64 * 64 * 2 + 64 * 64 * 2), "only the slices this CTA issues");
  ExpectWhy(Check(g42, "tx.full", 256 * 64 * 2), "left out the A tile");
  ExpectWhy(Check(Gemm(2, 2, 2, Signal::kAuto, Multicast::kNone), "tx.full", 128 * 64 * 2),
            "left out the B tile");

  ExpectWhy(Check(g42, "init.full", 128), "only the elected producer leader arrives");
  ExpectWhy(Check(g42, "init.full", 8), "counts bytes, not arrivals");
}

TEST(TmaAsyncCheck, UnknownKeyIsBadInput) {
  const CountsRequest req = Gemm(2, 2, 2);
  Expected<CountsResult> res = ComputeCounts(req);
  ASSERT_TRUE(res.ok());
  EXPECT_EQ(CheckCounts(req, *res, {{"init.bogus", 1}}).status().rule(), "counts.key");
  EXPECT_EQ(CheckCounts(req, *res, {{"wait_group.read", 1}}).status().rule(), "counts.key");
}

TEST(AsyncCounts, ProducerAndConsumerArrivals) {
  CountsRequest r;
  r.kind = PipelineKind::kAsync;
  r.producers = 128;
  r.consumers = 256;
  Expected<CountsResult> res = ComputeCounts(r);
  ASSERT_TRUE(res.ok());
  EXPECT_EQ(Value(*res, "init.full"), 128);
  EXPECT_EQ(Value(*res, "init.empty"), 256);
  ExpectWhy(Check(r, "init.empty", 8), "you counted warps");
  ExpectWhy(Check(r, "init.full", 1), "correct is 128 = producers");
  r.consumers = 0;
  EXPECT_EQ(ComputeCounts(r).status().rule(), "counts.param");
}

TEST(TmaStoreCounts, WaitGroupReadDepthIsStagesMinusOne) {
  CountsRequest r;
  r.kind = PipelineKind::kTmaStore;
  for (int s : {1, 2, 4}) {
    r.stages = s;
    Expected<CountsResult> res = ComputeCounts(r);
    ASSERT_TRUE(res.ok());
    EXPECT_EQ(Value(*res, "wait_group.read"), s - 1);
    EXPECT_EQ(res->notes.size(), 1u);  // no mbarriers
    for (const CountItem& i : res->items) EXPECT_NE(i.key.rfind("init.", 0), 0u) << i.key;
  }
  r.stages = 4;
  ExpectWhy(Check(r, "wait_group.read", 4), "race");
  ExpectWhy(Check(r, "wait_group.read", 0), "serialises");
  r.stages = 0;
  EXPECT_EQ(ComputeCounts(r).status().rule(), "counts.param");
}

TEST(SingleTmaCounts, CountOneAndCountN) {
  CountsRequest r;
  r.kind = PipelineKind::kSingleTma;
  r.box = {64, 128};
  r.elem_bytes = 2;
  Expected<CountsResult> one = ComputeCounts(r);
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(Value(*one, "init.full"), 1);
  EXPECT_EQ(Value(*one, "tx.full"), 64 * 128 * 2);
  ExpectWhy(Check(r, "init.full", 128), "never completes");

  r.threads = 128;
  Expected<CountsResult> n = ComputeCounts(r);
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(Value(*n, "init.full"), 128);
  EXPECT_EQ(Value(*n, "tx.full"), 64 * 128 * 2);  // only one thread expects the bytes
  ExpectWhy(Check(r, "init.full", 1), "complete early");
  ExpectWhy(Check(r, "tx.full", 64 * 128 * 2 * 128), "only one thread expects the bytes");

  r.box = {64, 512};  // box extents are at most 256
  EXPECT_EQ(ComputeCounts(r).status().rule(), "counts.param");
}

TEST(Parsers, AcceptWellFormedAndRejectMalformedText) {
  EXPECT_EQ(*ParseKind("tma-async"), PipelineKind::kTmaAsync);
  EXPECT_EQ(*ParseKind("single-tma"), PipelineKind::kSingleTma);
  EXPECT_EQ(ParseKind("tma").status().rule(), "counts.parse");
  EXPECT_EQ(*ParseSignal("warp"), Signal::kWarp);
  EXPECT_FALSE(ParseSignal("cta").ok());
  EXPECT_EQ(*ParseMulticast("ab"), Multicast::kAB);
  EXPECT_FALSE(ParseMulticast("c").ok());
  EXPECT_EQ(*ParseDtypeBytes("bf16"), 2);
  EXPECT_EQ(*ParseDtypeBytes("e4m3"), 1);
  EXPECT_EQ(*ParseDtypeBytes("tf32"), 4);
  EXPECT_FALSE(ParseDtypeBytes("f12").ok());
  EXPECT_EQ(*ParsePair("4x2"), std::make_pair(int64_t{4}, int64_t{2}));
  EXPECT_FALSE(ParsePair("4x2x1").ok());
  EXPECT_FALSE(ParsePair("4x").ok());
  EXPECT_FALSE(ParsePair("0x2").ok());
  EXPECT_EQ(*ParseDims("64,128"), (std::vector<int64_t>{64, 128}));
  EXPECT_EQ(*ParseClaim("init.empty=8"), std::make_pair(std::string("init.empty"), int64_t{8}));
  EXPECT_FALSE(ParseClaim("init.empty").ok());
  EXPECT_FALSE(ParseClaim("=8").ok());
  EXPECT_FALSE(ParseClaim("init.empty=-1").ok());
  EXPECT_FALSE(ParseClaim("init.empty=8x").ok());
}


// ---------------------------------------------------------------- cp-async (Ampere multistage)

CountsRequest Multistage(int stages) {
  CountsRequest r;
  r.kind = PipelineKind::kCpAsync;
  r.stages = stages;
  return r;
}

TEST(CpAsyncCounts, PrefetchAndWaitGroupFollowTheStages) {
  for (int stages : {2, 3, 4, 5, 8}) {
    Expected<CountsResult> r = ComputeCounts(Multistage(stages));
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(Value(*r, "stages"), stages);
    EXPECT_EQ(Value(*r, "prefetch"), stages - 1);
    EXPECT_EQ(Value(*r, "wait_group"), stages - 2);
    EXPECT_EQ(Value(*r, "commit.per_ktile"), 1);
    // Without tiles, no byte counts.
    for (const CountItem& i : r->items) EXPECT_NE(i.key, "bytes.stage");
  }
  Expected<CountsResult> r = ComputeCounts(Multistage(3));
  EXPECT_EQ(Find(*r, "wait_group").derivation.substr(0, 47),
            "wait_group = prefetch - 1 = stages - 2 = 1: whe");
  ASSERT_FALSE(r->notes.empty());
  EXPECT_NE(r->notes[0].find("no mbarriers"), std::string::npos);
}

TEST(CpAsyncCounts, TilesGiveStageBytesSharedMemoryAndCopiesPerThread) {
  CountsRequest req = Multistage(4);
  req.tile_a_m = 128;
  req.tile_a_k = 32;
  req.tile_b_n = 128;
  req.tile_b_k = 32;
  req.elem_bytes = 2;
  req.threads = 128;
  Expected<CountsResult> r = ComputeCounts(req);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(Value(*r, "bytes.stage"), 16384);
  EXPECT_EQ(Value(*r, "smem.bytes"), 65536);
  EXPECT_EQ(Value(*r, "copies.per_thread"), 8);  // 16384 / (16 x 128)
  EXPECT_EQ(r->notes.size(), 1u);                // fits sm_80; 16-byte copies divide evenly

  // 5 stages of 128x64 f32 tiles: 320 KB, beyond even sm_90's 227 KB.
  req.stages = 5;
  req.tile_a_k = req.tile_b_k = 64;
  req.elem_bytes = 4;
  r = ComputeCounts(req);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(Value(*r, "smem.bytes"), 5 * 65536);
  bool over = false;
  for (const std::string& n : r->notes) over = over || n.find("227 KB") != std::string::npos;
  EXPECT_TRUE(over);
}

TEST(CpAsyncCounts, RejectsBadParameters) {
  EXPECT_EQ(ComputeCounts(Multistage(1)).status().rule(), "counts.param");
  EXPECT_EQ(ComputeCounts(Multistage(65)).status().rule(), "counts.param");
  CountsRequest half = Multistage(3);
  half.tile_a_m = 128;
  half.tile_a_k = 32;  // no B tile
  EXPECT_EQ(ComputeCounts(half).status().rule(), "counts.param");
  CountsRequest k = Multistage(3);
  k.tile_a_m = k.tile_b_n = 128;
  k.tile_a_k = 32;
  k.tile_b_k = 16;
  EXPECT_EQ(ComputeCounts(k).status().rule(), "counts.param");
  EXPECT_TRUE(ParseKind("cp-async").ok());
  EXPECT_EQ(KindName(PipelineKind::kCpAsync), "cp-async");
}

TEST(CpAsyncCheck, ExplainsEachClassOfMistake) {
  const CountsRequest req = Multistage(4);
  Expected<CountsResult> r = ComputeCounts(req);
  ASSERT_TRUE(r.ok());
  auto check = [&](const std::string& key, int64_t yours) {
    Expected<std::vector<CheckOutcome>> c = CheckCounts(req, *r, {{key, yours}});
    EXPECT_TRUE(c.ok()) << c.status().ToString();
    return c.ok() ? (*c)[0] : CheckOutcome{};
  };
  EXPECT_TRUE(check("wait_group", 2).match);
  EXPECT_TRUE(check("prefetch", 3).match);
  const CheckOutcome racy = check("wait_group", 3);
  EXPECT_FALSE(racy.match);
  EXPECT_NE(racy.explanation.find("still writing"), std::string::npos) << racy.explanation;
  const CheckOutcome slow = check("wait_group", 0);
  EXPECT_NE(slow.explanation.find("drains the whole pipeline"), std::string::npos);
  const CheckOutcome over = check("prefetch", 4);
  EXPECT_NE(over.explanation.find("overwrites a stage"), std::string::npos) << over.explanation;
  const CheckOutcome idle = check("prefetch", 2);
  EXPECT_NE(idle.explanation.find("1 stage stay idle"), std::string::npos) << idle.explanation;
  const CheckOutcome nocommit = check("commit.per_ktile", 0);
  EXPECT_NE(nocommit.explanation.find("A1001"), std::string::npos);
  const CheckOutcome two = check("commit.per_ktile", 2);
  EXPECT_NE(two.explanation.find("(stages - 2) x 2"), std::string::npos) << two.explanation;
  EXPECT_EQ(CheckCounts(req, *r, {{"init.full", 1}}).status().rule(), "counts.key");
}

}  // namespace
}  // namespace parity::pipelines
