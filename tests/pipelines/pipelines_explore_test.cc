// Issue 5, "all pipelines verify exhaustively at small sizes": `parity explore` (verifier::Explore,
// partial-order reduction on) proves every correct pipeline of //pipelines at a small size, and
// finds every known-bad variant (except the warning-only one, see below) with the rule code and
// barrier its header promises. pipelines_test.cc holds the same variants against `check`.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "sim/engine/engine.h"
#include "sim/ir/ir.h"
#include "sim/ir/parser.h"
#include "sim/model/codes.h"
#include "verifier/deadlock.h"
#include "verifier/explore.h"

namespace parity {
namespace {

using Defines = std::vector<std::pair<std::string, int64_t>>;
using verifier::ExploreResult;
using verifier::ExploreVerdict;

struct Case {
  std::string file;  // under pipelines/
  Defines defines;
};

std::string Describe(const Case& c) {
  std::string s = c.file;
  for (const auto& [k, v] : c.defines) s += " -D " + k + "=" + std::to_string(v);
  return s;
}

struct Loaded {
  ir::Program program;
  std::vector<int64_t> params;
  bool ok = false;
};

Loaded Load(const Case& c) {
  Loaded l;
  auto p = ir::ParseFile("pipelines/" + c.file);
  EXPECT_TRUE(p.ok()) << p.status().ToString();
  if (!p.ok()) return l;
  l.program = std::move(p).value();
  auto v = ir::BindParams(l.program, c.defines);
  EXPECT_TRUE(v.ok()) << v.status().ToString();
  if (!v.ok()) return l;
  l.params = *v;
  l.ok = true;
  return l;
}

ExploreResult Search(const Loaded& l) {
  verifier::ExploreOptions o;
  o.max_states = 3'000'000;  // a bound, so that a regression fails as kIncomplete, not a hang
  o.shortest_counterexample = false;  // the depth-first path is enough to name the finding
  return verifier::Explore(l.program, l.params, o);
}

// Small sizes: 2x2 clusters, 2 stages, 2 k-tiles (the 4-stage, 3-k-tile GEMM is bench material:
// bench/RESULTS.md), 2- and 3-CTA rings.
std::vector<Case> Correct() {
  return {
      {"tma_async_gemm/gemm.pipe", {{"STAGES", 2}, {"K_TILES", 2}, {"CONSUMERS", 1}}},
      {"tma_async_gemm/gemm.pipe",
       {{"CLUSTER_M", 2}, {"CLUSTER_N", 1}, {"STAGES", 2}, {"K_TILES", 3}, {"CONSUMERS", 1}}},
      {"ws_gemm/cooperative.pipe", {{"STAGES", 2}, {"K_TILES", 2}, {"TILES", 2}}},
      {"ws_gemm/pingpong.pipe", {{"STAGES", 2}, {"K_TILES", 2}, {"TILES", 2}}},
      {"pipeline_async/pipeline_async.pipe", {{"ITERS", 4}, {"CONSUMER_WARPS", 2}}},
      {"tma_store/tma_store.pipe", {}},
      {"cuda_pipeline/prefetch.pipe", {{"BATCHES", 4}}},
      {"cuda_pipeline/producer_consumer.pipe", {}},
      {"cuda_pipeline/cp_async_arrive_on.pipe", {}},
      {"ampere_multistage/sgemm_sm80.pipe", {{"K_TILES", 4}, {"WARPS", 2}}},
      {"single_tma_load/count1.pipe", {}},
      {"single_tma_load/countN.pipe", {}},
      {"st_async_ring/ring.pipe", {{"CTAS", 2}}},
      {"st_async_ring/ring.pipe", {{"CTAS", 3}, {"ITEMS", 2}}},
  };
}

TEST(PipelinesExploreTest, EveryCorrectPipelineIsVerifiedAtASmallSize) {
  for (const Case& c : Correct()) {
    Loaded l = Load(c);
    ASSERT_TRUE(l.ok) << Describe(c);
    const ExploreResult r = Search(l);
    EXPECT_EQ(r.verdict, ExploreVerdict::kVerified)
        << Describe(c) << ": " << verifier::ExploreVerdictName(r.verdict) << " " << r.bound
        << " after " << r.stats.states << " states";
    EXPECT_GT(r.stats.states, 1u) << Describe(c);
    EXPECT_GE(r.stats.completed_ends, 1u) << Describe(c);
  }
}

struct BadCase {
  Case c;
  ExploreVerdict verdict;
  std::string code;     // model code of the violation / rule finding; "P2001" for a deadlock
  std::string barrier;  // the barrier the finding names ("" for async-group findings)
};

// The code and barrier a finding names: a model violation's or a protocol finding's code and
// object, or P2001 and the barrier of the deadlock diagnosis's primary blocked wait.
std::pair<std::string, std::string> Named(const Loaded& l, const ExploreResult& r) {
  if (r.verdict == ExploreVerdict::kRuleViolation) {
    if (r.findings.empty()) return {"", ""};
    const verifier::Finding& f = r.findings.front();
    std::string object;
    if (f.object_is_buffer) {
      object = l.program.buffers[f.object].name;
    } else if (f.object < l.program.barriers.size()) {
      object = l.program.barriers[f.object].name;
    }
    return {std::string(model::CodeId(f.code())), object};
  }
  auto e = verifier::Replay(l.program, l.params, r.counterexample);
  EXPECT_TRUE(e.ok());
  if (!e.ok()) return {"", ""};
  const engine::RunResult& end = e->result();
  if (end.outcome == engine::Outcome::kDeadlock) {
    // The barrier the deadlock diagnosis blames (its primary blocked wait), as `parity explore`
    // prints it under the counterexample.
    const verifier::DeadlockReport report = verifier::DiagnoseDeadlock(l.program, *e, end);
    if (report.primary >= report.blocked.size()) return {"P2001", ""};
    const engine::BlockedAgent& b = report.blocked[report.primary].blocked;
    const bool mbarrier =
        b.wait == engine::WaitKind::kMbarrierParity || b.wait == engine::WaitKind::kMbarrierToken;
    return {"P2001", mbarrier ? l.program.barriers[b.barrier].name : "bar.sync"};
  }
  if (end.outcome == engine::Outcome::kViolation && end.violation.has_value()) {
    // mbarrier codes (M....): the barrier the violating event acted on; async-group codes
    // name no barrier.
    const engine::ViolationInfo& v = *end.violation;
    const std::string id(model::CodeId(v.violation.code));
    const bool on_barrier = id[0] == 'M' && v.event.object < l.program.barriers.size();
    return {id, on_barrier ? l.program.barriers[v.event.object].name : ""};
  }
  return {"", ""};
}

std::vector<BadCase> Bad() {
  const Defines gemm = {{"STAGES", 2}, {"K_TILES", 2}, {"CONSUMERS", 1}};
  const Defines ws = {{"STAGES", 2}, {"K_TILES", 2}, {"TILES", 2}};
  const Defines pa = {{"ITERS", 4}, {"CONSUMER_WARPS", 2}};
  const Defines ring = {{"CTAS", 2}, {"ITEMS", 4}};
  using V = ExploreVerdict;
  return {
      {{"tma_async_gemm/bad_release_own_cta.pipe", gemm}, V::kDeadlock, "P2001", "empty"},
      {{"tma_async_gemm/bad_syncthreads_not_cluster.pipe", gemm},
       V::kRuleViolation,
       "P2007",
       "full"},
      {{"tma_async_gemm/bad_tx_own_slices.pipe", gemm}, V::kRuleViolation, "P2002", "full"},
      {{"ws_gemm/bad_coop_empty_one_warpgroup.pipe", ws}, V::kViolation, "M1009", "empty"},
      {{"ws_gemm/bad_coop_empty_threads.pipe", ws}, V::kDeadlock, "P2001", "empty"},
      {{"ws_gemm/bad_pingpong_no_first_turn.pipe", ws}, V::kDeadlock, "P2001", "bar.sync"},
      {{"ws_gemm/bad_pingpong_no_turn_order.pipe", ws}, V::kViolation, "M1005", "full"},
      {{"pipeline_async/bad_count_warps.pipe", pa}, V::kViolation, "M1005", "full"},
      {{"pipeline_async/bad_consumer_phase.pipe", pa}, V::kDeadlock, "P2001", "empty"},
      {{"tma_store/bad_no_proxy_fence.pipe", {}}, V::kRuleViolation, "P2006", "out"},
      {{"tma_store/bad_no_tail_wait.pipe", {}}, V::kViolation, "A1003", ""},
      {{"tma_store/bad_commit_other_thread.pipe", {}}, V::kViolation, "A1003", ""},
      {{"cuda_pipeline/bad_no_initial_ready.pipe", {}}, V::kDeadlock, "P2001", "ready"},
      {{"cuda_pipeline/bad_count_consumers_only.pipe", {}}, V::kDeadlock, "P2001", "filled"},
      // Depth-first, the first end state is a completed run in which the stray asynchronous
      // arrivals count toward later phases, so the consumers read buf before its bytes (the
      // shortest counterexample, breadth-first, is M1009 on filled).
      {{"cuda_pipeline/bad_arrive_on_noinc.pipe", {}}, V::kRuleViolation, "P2005", "buf"},
      {{"cuda_pipeline/bad_count_budgets_arrive_on.pipe", {}}, V::kDeadlock, "P2001", "filled"},
      {{"cuda_pipeline/bad_prefetch_tail_wait.pipe", {{"BATCHES", 4}}}, V::kViolation, "A1003", ""},
      {{"cuda_pipeline/bad_prefetch_no_commit.pipe", {{"BATCHES", 3}}}, V::kViolation, "A1003", ""},
      {{"ampere_multistage/bad_no_drain.pipe", {{"K_TILES", 3}, {"WARPS", 2}}},
       V::kViolation,
       "A1003",
       ""},
      {{"single_tma_load/bad_count1_arrive_without_expect.pipe", {}},
       V::kRuleViolation,
       "P2002",
       "full"},
      {{"single_tma_load/bad_count1_expect_f32_bytes.pipe", {}}, V::kDeadlock, "P2001", "full"},
      {{"single_tma_load/bad_countN_init_count_one.pipe", {}}, V::kViolation, "M1005", "full"},
      {{"single_tma_load/bad_countN_no_syncthreads.pipe", {}}, V::kViolation, "M1001", "full"},
      {{"st_async_ring/bad_expect_ring_bytes.pipe", ring}, V::kDeadlock, "P2001", "filled"},
      {{"st_async_ring/bad_no_backpressure.pipe", ring}, V::kViolation, "M1009", "ready"},
      // Copies never committed to a group: no wait covers them, so the reads of the stage race
      // with them (the warning A1001 ends no run).
      {{"ampere_multistage/bad_mainloop_no_commit.pipe", {{"K_TILES", 3}}},
       V::kRuleViolation,
       "P2005",
       "sA"},
  };
}

TEST(PipelinesExploreTest, EveryKnownBadVariantIsFoundWithItsCode) {
  for (const BadCase& b : Bad()) {
    Loaded l = Load(b.c);
    ASSERT_TRUE(l.ok) << Describe(b.c);
    const ExploreResult r = Search(l);
    EXPECT_EQ(r.verdict, b.verdict)
        << Describe(b.c) << ": got " << verifier::ExploreVerdictName(r.verdict) << " " << r.bound;
    const auto [code, barrier] = Named(l, r);
    EXPECT_EQ(code, b.code) << Describe(b.c);
    EXPECT_EQ(barrier, b.barrier) << Describe(b.c);
  }
}

}  // namespace
}  // namespace parity
