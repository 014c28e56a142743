// The pipeline library (//pipelines): each correct schedule completes under every scheduling
// policy, at its defaults and with -D variations, and ends with its barriers in the phase its
// trip counts imply; each known-bad variant is caught the way its `# expect:` lines say
// (rule code, barrier, CTA, agent, cause; verifier/expect.h), under the policy they name. This is what
// `parity check FILE [-D ...] --policy P --seed S` computes: Engine::Run, the protocol rules
// (verifier::CheckRules, P2002..P2009) on the run's trace, and verifier::DiagnoseDeadlock for a
// deadlock.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "sim/engine/engine.h"
#include "sim/ir/ir.h"
#include "sim/ir/parser.h"
#include "sim/model/codes.h"
#include "verifier/culprit.h"
#include "verifier/deadlock.h"
#include "verifier/expect.h"
#include "verifier/rules.h"

namespace parity {
namespace {

using engine::Engine;
using engine::EngineOptions;
using engine::Outcome;
using engine::Policy;
using engine::RunResult;
using Defines = std::vector<std::pair<std::string, int64_t>>;

struct Ran {
  std::unique_ptr<ir::Program> program;  // the engine points into it
  std::unique_ptr<Engine> engine;
  RunResult result;
  std::vector<verifier::Finding> findings;  // the protocol rules on the run's trace
  std::vector<int64_t> params;              // the bound param values
};

// Parses, binds and runs; fails the test (and returns an empty engine) on bad input.
Ran RunPipe(const std::string& file, const Defines& defines, const EngineOptions& options) {
  Ran ran;
  auto parsed = ir::ParseFile("pipelines/" + file);
  EXPECT_TRUE(parsed.ok()) << parsed.status().ToString();
  if (!parsed.ok()) return ran;
  ran.program = std::make_unique<ir::Program>(std::move(parsed).value());
  auto params = ir::BindParams(*ran.program, defines);
  EXPECT_TRUE(params.ok()) << params.status().ToString();
  if (!params.ok()) return ran;
  ran.params = *params;
  auto engine = Engine::Create(*ran.program, *params, options);
  EXPECT_TRUE(engine.ok()) << file << ": " << engine.status().ToString();
  if (!engine.ok()) return ran;
  ran.engine = std::make_unique<Engine>(std::move(engine).value());
  ran.result = ran.engine->Run();
  ran.findings = verifier::CheckRules(*ran.program, *ran.engine, ran.engine->trace());
  EXPECT_NE(ran.result.outcome, Outcome::kError) << file << ": " << ran.result.error.ToString();
  return ran;
}

EngineOptions Opt(Policy p, uint64_t seed = 0) {
  EngineOptions o;
  o.policy = p;
  o.seed = seed;
  return o;
}

std::vector<EngineOptions> AllPolicies() {
  std::vector<EngineOptions> out = {Opt(Policy::kEager), Opt(Policy::kLazy),
                                    Opt(Policy::kRoundRobin)};
  for (uint64_t seed = 1; seed <= 8; ++seed) out.push_back(Opt(Policy::kRandom, seed));
  return out;
}

std::string Name(const EngineOptions& o) {
  std::string s = engine::PolicyName(o.policy);
  if (o.policy == Policy::kRandom) s += " seed=" + std::to_string(o.seed);
  return s;
}

std::string DefinesText(const Defines& d) {
  std::string s;
  for (const auto& [k, v] : d) s += " -D " + k + "=" + std::to_string(v);
  return s;
}

uint32_t BarrierIndex(const ir::Program& p, const std::string& name) {
  for (uint32_t i = 0; i < p.barriers.size(); ++i) {
    if (p.barriers[i].name == name) return i;
  }
  ADD_FAILURE() << "no barrier " << name << " in " << p.file;
  return 0;
}

std::string OutcomeText(const Ran& r) {
  std::string s = engine::OutcomeName(r.result.outcome);
  if (r.result.violation) s += " " + model::Describe(r.result.violation->violation);
  for (const verifier::Finding& f : r.findings) {
    s += "\n  " + std::string(model::CodeId(f.code())) + " " + f.message;
  }
  return s;
}

// ---------------------------------------------------------------------------------------------
// Correct pipelines.

// After the run, barrier `name[index]` of CTA `cta` has completed `phase` phases.
struct PhaseCheck {
  std::string name;
  uint32_t index = 0;
  uint32_t cta = 0;
  uint32_t phase = 0;
};

struct GoodCase {
  std::string file;
  Defines defines;
  std::vector<PhaseCheck> phases;
  size_t warnings = 0;  // findings that are warnings (docs/levels.md), none an error
};

std::vector<GoodCase> GoodCases() {
  return {
      // 8 k-tiles over 4 stages: every full and empty barrier completes 2 phases (the empty
      // barriers' second phase is the producer tail's).
      {"tma_async_gemm/gemm.pipe", {}, {{"full", 0, 0, 2}, {"full", 3, 3, 2}, {"empty", 2, 1, 2}}},
      {"tma_async_gemm/gemm.pipe",
       {{"CLUSTER_M", 1}, {"CLUSTER_N", 1}},
       {{"full", 0, 0, 2}, {"empty", 3, 0, 2}}},
      // 4x2 cluster, 7 k-tiles over 3 stages: stage 0 gets k = 0, 3, 6 (3 phases), stage 2 gets 2.
      {"tma_async_gemm/gemm.pipe",
       {{"CLUSTER_M", 4}, {"CLUSTER_N", 2}, {"STAGES", 3}, {"K_TILES", 7}},
       {{"full", 0, 7, 3}, {"full", 2, 5, 2}, {"empty", 0, 7, 3}}},
      {"tma_async_gemm/gemm.pipe",
       {{"CLUSTER_M", 1}, {"CLUSTER_N", 4}, {"STAGES", 2}},
       {{"full", 1, 3, 4}, {"empty", 1, 2, 4}}},
      // CUTLASS's cluster prologue as it ships: fence.mbarrier_init, cluster.arrive.relaxed.
      {"tma_async_gemm/cluster_init_relaxed.pipe",
       {},
       {{"full", 0, 0, 2}, {"full", 3, 3, 2}, {"empty", 2, 1, 2}}},
      // 8 items over 3 stages: stage 0 gets 0, 3, 6; stage 2 gets 2, 5.
      {"pipeline_async/pipeline_async.pipe", {}, {{"full", 0, 0, 3}, {"full", 2, 0, 2}, {"empty", 1, 0, 3}}},
      {"pipeline_async/pipeline_async.pipe",
       {{"PRODUCER_WARPS", 2}, {"CONSUMER_WARPS", 1}, {"STAGES", 2}},
       {{"full", 0, 0, 4}, {"empty", 1, 0, 4}}},
      {"tma_store/tma_store.pipe", {}, {}},
      {"tma_store/tma_store.pipe", {{"STAGES", 3}, {"TILES", 7}, {"WARPS", 8}}, {}},
      // FA3's / humming's epilogue reuse: a .cta-scoped handoff after the store read the tile
      // out, one P2013 warning (docs/levels.md, L1).
      {"tma_store/epilogue_reuse_cta_scope.pipe", {}, {{"full", 0, 1, 1}}, 1},
      // An unfenced fill rewritten whole, after it, by a fenced write: coherence hides it.
      {"tma_store/flashkda_state_overwrite.pipe", {}, {{"out_full", 0, 0, 2}}},
      {"tma_store/flashkda_state_overwrite.pipe", {{"T_TILES", 1}}, {{"out_empty", 0, 0, 1}}},
      // 3 tiles x 6 k-tiles = 18 iterations over 4 stages: stages 0, 1 get 5, stages 2, 3 get 4.
      {"ws_gemm/cooperative.pipe", {}, {{"full", 0, 0, 5}, {"full", 3, 0, 4}, {"empty", 1, 0, 5}}},
      {"ws_gemm/cooperative.pipe", {{"STAGES", 2}, {"TILES", 2}}, {{"full", 0, 0, 6}}},
      // 4 tiles x 6 = 24 iterations over 4 stages: 6 phases each.
      {"ws_gemm/pingpong.pipe", {}, {{"full", 0, 0, 6}, {"empty", 3, 0, 6}}},
      {"ws_gemm/pingpong.pipe", {{"K_TILES", 3}, {"TILES", 5}}, {{"full", 0, 0, 4}, {"full", 3, 0, 3}}},
      // 6 iterations over 2 buffers: 3 phases of each barrier.
      {"cuda_pipeline/producer_consumer.pipe", {}, {{"ready", 0, 0, 3}, {"filled", 1, 0, 3}}},
      {"cuda_pipeline/producer_consumer.pipe",
       {{"CONSUMER_WARPS", 1}, {"ITERS", 3}},
       {{"filled", 0, 0, 2}, {"filled", 1, 0, 1}}},
      {"cuda_pipeline/cp_async_arrive_on.pipe", {}, {{"filled", 0, 0, 3}, {"ready", 1, 0, 3}}},
      {"cuda_pipeline/cp_async_arrive_on.pipe",
       {{"CONSUMER_WARPS", 1}, {"ITERS", 3}},
       {{"filled", 0, 0, 2}}},
      {"cuda_pipeline/prefetch.pipe", {}, {}},
      {"cuda_pipeline/prefetch.pipe", {{"STAGES", 2}}, {}},
      {"cuda_pipeline/prefetch.pipe", {{"STAGES", 4}, {"BATCHES", 3}}, {}},
      {"ampere_multistage/sgemm_sm80.pipe", {}, {}},
      {"ampere_multistage/sgemm_sm80.pipe", {{"K_PIPE_MAX", 2}}, {}},
      {"ampere_multistage/sgemm_sm80.pipe", {{"K_PIPE_MAX", 4}, {"K_TILES", 3}}, {}},
      // 6 items over 2 slots: 3 phases of every filled and ready barrier, in every CTA.
      {"st_async_ring/ring.pipe", {}, {{"filled", 0, 0, 3}, {"filled", 1, 7, 3}, {"ready", 0, 4, 3}}},
      {"st_async_ring/ring.pipe", {{"STAGES", 4}, {"ITEMS", 2}}, {{"filled", 1, 3, 1}, {"filled", 2, 3, 0}}},
      {"single_tma_load/count1.pipe", {}, {{"full", 0, 0, 1}}},
      {"single_tma_load/count1.pipe", {{"ROWS", 128}, {"COLS", 32}}, {{"full", 0, 0, 1}}},
      {"single_tma_load/countN.pipe", {}, {{"full", 0, 0, 1}}},
      {"single_tma_load/countN.pipe", {{"ROWS", 32}, {"WARPS", 8}}, {{"full", 0, 0, 1}}},
      // The static tile scheduler gives cluster 0 tiles 0 and 2 (4 k-iterations, 2 per stage)
      // and cluster 1 (CTAs 2, 3) tile 1 only: the phases count each cluster's own trip count.
      {"persistent_gemm/persistent.pipe", {},
       {{"full", 0, 0, 2}, {"full", 1, 1, 2}, {"empty", 0, 1, 2}, {"full", 0, 2, 1},
        {"empty", 1, 3, 1}}},
      // 7 tiles over 3 clusters, 3 k-tiles each: cluster 0 gets tiles 0, 3, 6 (9 iterations:
      // stage 0 takes 0, 2, 4, 6, 8), cluster 2 (CTAs 4, 5) tiles 2, 5 (6: stage 0 takes 0, 2, 4).
      {"persistent_gemm/persistent.pipe",
       {{"CLUSTERS", 3}, {"TILES", 7}, {"K_TILES", 3}},
       {{"full", 0, 0, 5}, {"full", 1, 0, 4}, {"full", 0, 4, 3}, {"full", 1, 5, 3}}},
      // CTA 0's full barriers complete per stage (both halves, one from CTA 1); CTA 1's empty
      // barriers take CTA 0's releases; CTA 1's own full barriers are never used.
      {"persistent_gemm/peer_load.pipe", {},
       {{"full", 0, 0, 2}, {"full", 1, 0, 2}, {"empty", 1, 1, 2}, {"full", 0, 1, 0}}},
      // Programmatic dependent launch: the dependent grid's CTAs 0, 1 load W once; the primary
      // grid's CTAs (2, 3 after them) run 2 k-tiles over 2 stages, 4 over 2 with -D.
      {"pdl/gemm_then_consumer.pipe", {},
       {{"wfull", 0, 0, 1}, {"wfull", 0, 1, 1}, {"full", 0, 2, 1}, {"full", 1, 3, 1},
        {"empty", 0, 2, 1}, {"wfull", 0, 2, 0}}},
      {"pdl/gemm_then_consumer.pipe", {{"TILES", 3}, {"K_TILES", 4}},
       {{"full", 0, 3, 2}, {"full", 1, 5, 2}, {"empty", 1, 4, 2}, {"wfull", 0, 2, 1}}},

      // Tiles 0 and 1 on one cluster: 4 k-iterations (2 per stage), and one hand-over of the
      // aliased epilogue tile per tile (epi_free) in each CTA.
      {"persistent_gemm/persistent_epilogue.pipe", {},
       {{"full", 0, 0, 2}, {"full", 1, 1, 2}, {"empty", 0, 1, 2}, {"epi_free", 0, 0, 2},
        {"epi_free", 0, 1, 2}}},
      // 5 tiles over 2 clusters, 3 k-tiles: cluster 0 gets tiles 0, 2, 4 (9 iterations: stage 0
      // takes 0, 2, 4, 6, 8), cluster 1 (CTAs 2, 3) tiles 1, 3 (6 iterations, 3 per stage).
      {"persistent_gemm/persistent_epilogue.pipe",
       {{"CLUSTERS", 2}, {"TILES", 5}, {"K_TILES", 3}},
       {{"full", 0, 0, 5}, {"full", 1, 1, 4}, {"epi_free", 0, 0, 3}, {"full", 0, 2, 3},
        {"epi_free", 0, 3, 2}}},
      // 2 tiles x 2 KV blocks over 2 stages: 2 phases of every K and V barrier; Q and barrier_O
      // complete once per tile.
      {"fa3_forward/forward.pipe", {},
       {{"full_k", 0, 0, 2}, {"empty_k", 1, 0, 2}, {"full_v", 1, 0, 2}, {"empty_v", 0, 0, 2},
        {"full_q", 0, 0, 2}, {"bar_o", 0, 0, 2}}},
      // 3 tiles x 4 KV blocks over 3 stages: 12 iterations, 4 per stage.
      {"fa3_forward/forward.pipe", {{"TILES", 3}, {"N_BLOCKS", 4}, {"STAGES", 3}},
       {{"full_k", 2, 0, 4}, {"empty_v", 1, 0, 4}, {"full_q", 0, 0, 3}, {"bar_o", 0, 0, 3}}},
  };
}

class GoodPipelineTest : public ::testing::TestWithParam<GoodCase> {};

TEST_P(GoodPipelineTest, CompletesUnderEveryPolicy) {
  const GoodCase& c = GetParam();
  for (const EngineOptions& o : AllPolicies()) {
    Ran r = RunPipe(c.file, c.defines, o);
    ASSERT_TRUE(r.engine) << c.file;
    const std::string what = c.file + DefinesText(c.defines) + " " + Name(o);
    ASSERT_EQ(r.result.outcome, Outcome::kCompleted) << what << ": " << OutcomeText(r);
    EXPECT_TRUE(r.result.warnings.empty())
        << what << ": " << model::Describe(r.result.warnings.front().violation);
    EXPECT_EQ(r.engine->in_flight(), 0u) << what;
    EXPECT_EQ(r.findings.size(), c.warnings) << what << ": " << OutcomeText(r);
    EXPECT_FALSE(verifier::HasErrors(r.findings)) << what << ": " << OutcomeText(r);
    for (const PhaseCheck& pc : c.phases) {
      const uint32_t b = BarrierIndex(*r.program, pc.name);
      EXPECT_EQ(r.engine->barrier_state(pc.cta, b, pc.index).phase, pc.phase)
          << what << ": " << pc.name << "[" << pc.index << "] of CTA " << pc.cta;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Pipelines, GoodPipelineTest, ::testing::ValuesIn(GoodCases()));

// The gemm's empty barriers are initialised with (cluster_m + cluster_n - 1) x CONSUMERS for
// any cluster shape (PipelineTmaAsync's multicast_consumer_arrival_count).
TEST(PipelinesTest, GemmEmptyCountFollowsTheClusterShape) {
  for (auto [m, n] : std::vector<std::pair<int64_t, int64_t>>{{1, 1}, {2, 1}, {2, 2}, {4, 2}, {1, 4}}) {
    Ran r = RunPipe("tma_async_gemm/gemm.pipe", {{"CLUSTER_M", m}, {"CLUSTER_N", n}},
                    Opt(Policy::kEager));
    ASSERT_TRUE(r.engine);
    ASSERT_EQ(r.result.outcome, Outcome::kCompleted) << m << "x" << n << ": " << OutcomeText(r);
    const uint32_t empty = BarrierIndex(*r.program, "empty");
    for (uint32_t cta = 0; cta < static_cast<uint32_t>(m * n); ++cta) {
      EXPECT_EQ(r.engine->barrier_state(cta, empty, 0).expected_count, (m + n - 1) * 2)
          << m << "x" << n << " CTA " << cta;
    }
  }
}

// The CUDA guide's cp.async + __pipeline_arrive_on pattern: the producer thread never waits
// for its own copies; the consumers learn of their completion through the mbarrier, which
// cp.async.mbarrier.arrive made track them. Exiting before they land is legal (no A1003), also
// under the lazy policy, which lands the copies as late as possible (after the exit).
TEST(PipelinesTest, CpAsyncArriveOnProducerMayExitWithTrackedCopiesInFlight) {
  Ran r = RunPipe("cuda_pipeline/cp_async_arrive_on.pipe", {}, Opt(Policy::kLazy));
  ASSERT_TRUE(r.engine);
  ASSERT_EQ(r.result.outcome, Outcome::kCompleted) << OutcomeText(r);
  EXPECT_TRUE(r.findings.empty()) << OutcomeText(r);
}

// ---------------------------------------------------------------------------------------------
// Known-bad variants: each says what `parity check` must report in its `# expect:` lines
// (verifier/expect.h), which this test reads and checks.

// Every known-bad file of the library (pipelines/*/bad_*.pipe), relative to pipelines/.
std::vector<std::string> BadFiles() {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::recursive_directory_iterator("pipelines")) {
    const std::string name = e.path().filename().string();
    if (name.rfind("bad_", 0) == 0 && e.path().extension() == ".pipe") {
      out.push_back(e.path().string().substr(std::string("pipelines/").size()));
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

struct BadCase {
  std::string file;  // under pipelines/
  verifier::Expectation expect;
};

std::vector<BadCase> BadCases() {
  std::vector<BadCase> out;
  for (const std::string& f : BadFiles()) {
    auto expects = verifier::ReadExpectationsFile("pipelines/" + f);
    EXPECT_TRUE(expects.ok()) << expects.status().ToString();
    if (!expects.ok()) continue;
    for (const verifier::Expectation& x : *expects) {
      if (!x.explore) out.push_back({f, x});
    }
  }
  return out;
}

std::string CaseName(const BadCase& c) { return c.file + ": " + c.expect.Text(); }

void ExpectCaught(const BadCase& c, const EngineOptions& o, bool details) {
  Ran r = RunPipe(c.file, c.expect.defines, o);
  ASSERT_TRUE(r.engine) << c.file;
  const std::string what = c.file + DefinesText(c.expect.defines) + " " + Name(o);
  verifier::DeadlockReport report;
  if (r.result.outcome == Outcome::kDeadlock) {
    report = verifier::DiagnoseDeadlockWithRepair(*r.program, *r.engine, r.result, r.params);
  }
  verifier::CheckRun run;
  run.program = r.program.get();
  run.engine = r.engine.get();
  run.result = &r.result;
  run.findings = &r.findings;
  run.deadlock = r.result.outcome == Outcome::kDeadlock ? &report : nullptr;
  verifier::DeadlockCulprit violation_culprit;
  const verifier::Expectation& e = c.expect;
  if (r.result.outcome == Outcome::kViolation && details &&
      (!e.cause.empty() || !e.change.empty() || e.culprit_line != 0)) {
    verifier::RepairOptions ro;
    ro.options = o;
    violation_culprit = verifier::FindCulpritOfViolation(*r.program, r.params, *r.engine, ro);
  }
  run.violation_culprit = &violation_culprit;
  verifier::Expectation x = c.expect;
  if (!details) {  // the code only
    verifier::Expectation code_only;
    code_only.code = x.code;
    x = code_only;
  }
  EXPECT_EQ(verifier::MatchCheck(x, run), "") << what << ": " << OutcomeText(r);
  if (r.result.violation) {
    EXPECT_EQ(r.result.violation->where.file, "pipelines/" + c.file);
    EXPECT_GT(r.result.violation->where.line, 0) << what;
  }
}

class BadPipelineTest : public ::testing::TestWithParam<BadCase> {};

TEST_P(BadPipelineTest, IsCaught) {
  const BadCase& c = GetParam();
  SCOPED_TRACE(CaseName(c));
  ExpectCaught(c, c.expect.Options(), /*details=*/true);
  if (c.expect.every_policy) {
    for (const EngineOptions& o : AllPolicies()) ExpectCaught(c, o, /*details=*/false);
  }
}

INSTANTIATE_TEST_SUITE_P(Pipelines, BadPipelineTest, ::testing::ValuesIn(BadCases()));

// Every known-bad file of the library says what a correct tool reports, for `parity check` and
// for `parity explore` (a new bad_*.pipe without expect lines fails).
TEST(PipelinesTest, EveryBadVariantHasExpectations) {
  const std::vector<std::string> bad = BadFiles();
  EXPECT_GE(bad.size(), 26u);
  for (const std::string& f : bad) {
    auto expects = verifier::ReadExpectationsFile("pipelines/" + f);
    ASSERT_TRUE(expects.ok()) << expects.status().ToString();
    size_t check = 0, explore = 0;
    for (const verifier::Expectation& x : *expects) (x.explore ? explore : check) += 1;
    EXPECT_GE(check, 1u) << f << ": no `# expect:` line for parity check";
    EXPECT_GE(explore, 1u) << f << ": no `# expect: ... explore` line";
  }
}

// pipelines/README.md's table of known-bad variants restates what `parity check` reports in
// prose: every rule code it names for a file is one of the file's `# expect:` codes.
TEST(PipelinesTest, ReadmeTableNamesOnlyExpectedCodes) {
  std::ifstream in("pipelines/README.md");
  ASSERT_TRUE(in) << "pipelines/README.md";
  const std::regex code(R"(\b[MAPS][0-9]{4}\b)");
  std::string line;
  size_t rows = 0;
  while (std::getline(in, line)) {
    if (line.rfind("| `", 0) != 0 || line.find("bad_") == std::string::npos) continue;
    const size_t open = 3, close = line.find('`', open);
    const std::string file = line.substr(open, close - open);
    const std::string reports = line.substr(line.rfind('|', line.size() - 2));
    auto expects = verifier::ReadExpectationsFile("pipelines/" + file);
    ASSERT_TRUE(expects.ok()) << expects.status().ToString();
    ++rows;
    for (std::sregex_iterator m(reports.begin(), reports.end(), code), end; m != end; ++m) {
      bool found = false;
      for (const verifier::Expectation& x : *expects) found |= !x.explore && x.code == m->str();
      EXPECT_TRUE(found) << file << ": the README says " << m->str()
                         << ", which none of its `# expect:` lines does";
    }
  }
  EXPECT_EQ(rows, BadFiles().size());
}

// The consumers of bad_count_budgets_arrive_on are stuck on filled[0] with exactly the 32
// budgeted-but-never-made arrivals pending, although every agent arrived in that phase.
TEST(PipelinesTest, BudgetedArriveOnLeavesFilledShortBy32) {
  Ran r = RunPipe("cuda_pipeline/bad_count_budgets_arrive_on.pipe", {}, Opt(Policy::kEager));
  ASSERT_TRUE(r.engine);
  ASSERT_EQ(r.result.outcome, Outcome::kDeadlock);
  const uint32_t filled = BarrierIndex(*r.program, "filled");
  int consumers = 0;
  for (const engine::BlockedAgent& b : r.result.deadlock.blocked) {
    if (r.engine->role_name(b.agent) != "consumer") continue;
    ++consumers;
    EXPECT_EQ(b.barrier, filled);
    EXPECT_EQ(b.barrier_index, 0u);
    EXPECT_EQ(b.state.expected_count, 160);
    EXPECT_EQ(b.state.pending_count, 32);
  }
  EXPECT_EQ(consumers, 3);
}

}  // namespace
}  // namespace parity
