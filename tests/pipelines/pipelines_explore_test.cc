// Issue 5, "all pipelines verify exhaustively at small sizes": `parity explore` (verifier::Explore,
// partial-order reduction on) proves every correct pipeline of //pipelines at a small size, and
// finds every known-bad variant (except the warning-only one, see below) with the rule code and
// barrier its header promises. pipelines_test.cc holds the same variants against `check`.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "sim/engine/engine.h"
#include "sim/ir/ir.h"
#include "sim/ir/parser.h"
#include "sim/model/codes.h"
#include "sim/model/mbarrier.h"
#include "verifier/culprit.h"
#include "verifier/deadlock.h"
#include "verifier/expect.h"
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
  o.shorten_budget_s = 0;  // the depth-first path is enough to name the finding
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
      {"tma_store/flashkda_state_overwrite.pipe", {}},
      // Verified with one warning (docs/levels.md, L1).
      {"tma_store/epilogue_reuse_cta_scope.pipe", {}},
      {"cuda_pipeline/prefetch.pipe", {{"BATCHES", 4}}},
      {"cuda_pipeline/producer_consumer.pipe", {}},
      {"cuda_pipeline/cp_async_arrive_on.pipe", {}},
      {"ampere_multistage/sgemm_sm80.pipe", {{"K_TILES", 4}, {"WARPS", 2}}},
      {"single_tma_load/count1.pipe", {}},
      {"single_tma_load/countN.pipe", {}},
      {"st_async_ring/ring.pipe", {{"CTAS", 2}}},
      {"st_async_ring/ring.pipe", {{"CTAS", 3}, {"ITEMS", 2}}},
      {"tma_async_gemm/deepgemm_multicast.pipe", {}},
      {"tma_async_gemm/deepgemm_multicast.pipe", {{"MULTICAST", 1}}},
      {"tma_async_gemm/cluster_init_relaxed.pipe",
       {{"STAGES", 2}, {"K_TILES", 2}, {"CONSUMERS", 1}}},
      // Per-cluster trip counts (2 tiles and 1) of the persistent loop, a `while`.
      {"persistent_gemm/persistent.pipe", {}},
      {"persistent_gemm/peer_load.pipe", {}},
      // A primary grid and its programmatic dependent (griddepcontrol.wait before the reads).
      {"pdl/gemm_then_consumer.pipe", {}},

      // Epilogue tiles aliased over the main loop's stages, handed back to the producer.
      {"persistent_gemm/persistent_epilogue.pipe", {}},
      {"fa3_forward/forward.pipe", {}},
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

// The DeepGEMM-style pipeline is clean although, in some interleavings, a peer CTA's consumer
// arrives on a CTA's empty barrier in a phase whose predecessor that CTA's producer has not
// observed yet (the arrive-on that M1009 once reported; the H100 completes such phases:
// litmus/arrive_next_phase_unobserved). Random runs must reach such a state, else the pipeline
// would not exercise the pattern it is here for.
TEST(PipelinesExploreTest, DeepGemmReleasesReachAnUnobservedPhaseAndStayClean) {
  Loaded l = Load({"tma_async_gemm/deepgemm_multicast.pipe", {}});
  ASSERT_TRUE(l.ok);
  engine::EngineOptions o;
  o.record_trace = false;
  bool early_arrival = false;
  for (uint64_t seed = 1; seed <= 200 && !early_arrival; ++seed) {
    o.policy = engine::Policy::kRandom;
    o.seed = seed;
    auto e = engine::Engine::Create(l.program, l.params, o);
    ASSERT_TRUE(e.ok());
    std::vector<engine::Choice> choices;
    uint64_t x = seed;
    while (e->outcome() == engine::Outcome::kRunning) {
      e->Choices(&choices);
      ASSERT_FALSE(choices.empty());
      x = x * 6364136223846793005ull + 1442695040888963407ull;
      e->Step(choices[(x >> 33) % choices.size()]);
      for (uint32_t slot = 0; slot < e->num_barrier_slots(); ++slot) {
        const model::MbarrierState& b = e->slot_state(slot);
        early_arrival |= b.life == model::MbarrierLife::kLive && !b.preceding_phase_observed &&
                         b.pending_count < b.expected_count;
      }
    }
    EXPECT_EQ(e->outcome(), engine::Outcome::kCompleted) << "seed " << seed;
  }
  EXPECT_TRUE(early_arrival);
}

// A known-bad variant and what `parity explore` must find on it (its `# expect: ... explore`
// line, verifier/expect.h): the code, and the barrier or buffer the finding names (no object:
// none, as for the async-group codes). The verdict follows from the code: P2001 a deadlock,
// P2002..P2009 a rule violation, any other a violation.
struct BadCase {
  Case c;
  ExploreVerdict verdict;
  std::string code;
  std::string barrier;
  verifier::Expectation expect;  // its cause, change and culprit-at, when it names them
};

// The culprit a re-run of the counterexample proved (verifier/culprit.h), if any.
struct Culprit {
  std::string cause, change;
  uint32_t line = 0;
};

// The code and barrier a finding names: a model violation's or a protocol finding's code and
// object, or P2001 and the barrier of the deadlock diagnosis's primary blocked wait.
std::pair<std::string, std::string> Named(const Loaded& l, const ExploreResult& r,
                                          Culprit* culprit) {
  if (r.verdict == ExploreVerdict::kRuleViolation) {
    if (r.findings.empty()) return {"", ""};
    const verifier::Finding& f = r.findings.front();
    std::string object;
    if (f.object_is_global) {
      object = l.program.globals[f.object].name;
    } else if (f.object_is_tensor_map) {
      object = l.program.tensor_maps[f.object].name;
    } else if (f.object_is_buffer) {
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
    // The barrier the deadlock diagnosis blames (an earlier wait that passed at once, else its
    // primary blocked wait), as `parity explore` prints it under the counterexample.
    const verifier::DeadlockReport report =
        verifier::DiagnoseDeadlockWithRepair(l.program, *e, end, l.params, &r.counterexample);
    if (report.culprit.found && !report.culprit.change.empty()) {
      *culprit = {verifier::DeadlockCauseName(report.culprit.cause), report.culprit.change,
                  static_cast<uint32_t>(report.culprit.where.line)};
    }
    if (report.culprit.found) return {"P2001", l.program.barriers[report.culprit.barrier].name};
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
    verifier::RepairOptions ro;
    ro.counterexample = &r.counterexample;
    const verifier::DeadlockCulprit c =
        verifier::FindCulpritOfViolation(l.program, l.params, *e, ro);
    if (c.found) {
      *culprit = {verifier::DeadlockCauseName(c.cause), c.change,
                  static_cast<uint32_t>(c.where.line)};
    }
    const bool on_barrier = id[0] == 'M' && v.event.object < l.program.barriers.size();
    return {id, on_barrier ? l.program.barriers[v.event.object].name : ""};
  }
  return {"", ""};
}

std::vector<BadCase> Bad() {
  std::vector<BadCase> out;
  for (const auto& e : std::filesystem::recursive_directory_iterator("pipelines")) {
    const std::string name = e.path().filename().string();
    if (name.rfind("bad_", 0) != 0 || e.path().extension() != ".pipe") continue;
    auto expects = verifier::ReadExpectationsFile(e.path().string());
    EXPECT_TRUE(expects.ok()) << expects.status().ToString();
    if (!expects.ok()) continue;
    for (const verifier::Expectation& x : *expects) {
      if (!x.explore) continue;
      // P2033 (a failed assert or forall) ends its run as a violation; P2034 is a finding.
      const bool finding = x.code.rfind("P2", 0) == 0 && x.code != "P2001" && x.code != "P2033";
      out.push_back({{e.path().string().substr(std::string("pipelines/").size()), x.defines},
                     x.code == "P2001" ? ExploreVerdict::kDeadlock
                     : finding         ? ExploreVerdict::kRuleViolation
                                       : ExploreVerdict::kViolation,
                     x.code,
                     x.object,
                     x});
    }
  }
  std::sort(out.begin(), out.end(),
            [](const BadCase& a, const BadCase& b) { return a.c.file < b.c.file; });
  EXPECT_GE(out.size(), 26u);
  return out;
}

TEST(PipelinesExploreTest, EveryKnownBadVariantIsFoundWithItsCode) {
  for (const BadCase& b : Bad()) {
    Loaded l = Load(b.c);
    ASSERT_TRUE(l.ok) << Describe(b.c);
    const ExploreResult r = Search(l);
    EXPECT_EQ(r.verdict, b.verdict)
        << Describe(b.c) << ": got " << verifier::ExploreVerdictName(r.verdict) << " " << r.bound;
    Culprit culprit;
    const auto [code, barrier] = Named(l, r, &culprit);
    EXPECT_EQ(code, b.code) << Describe(b.c);
    EXPECT_EQ(barrier, b.barrier) << Describe(b.c);
    if (!b.expect.cause.empty()) {
      EXPECT_EQ(culprit.cause, b.expect.cause) << Describe(b.c);
    }
    if (!b.expect.change.empty()) {
      EXPECT_EQ(culprit.change, b.expect.change) << Describe(b.c);
    }
    if (b.expect.culprit_line != 0) {
      EXPECT_EQ(culprit.line, b.expect.culprit_line) << Describe(b.c);
    }
  }
}

}  // namespace
}  // namespace parity
