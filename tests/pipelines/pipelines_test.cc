// The pipeline library (//pipelines): each correct schedule completes under every scheduling
// policy, at its defaults and with -D variations, and ends with its barriers in the phase its
// trip counts imply; each known-bad variant is caught the way its header comment promises
// (outcome, rule code, barrier, CTA, agent), under the policy the header names. This is what
// `parity check FILE [-D ...] --policy P --seed S` computes: Engine::Run, the protocol rules
// (verifier::CheckRules, P2002..P2008) on the run's trace, and verifier::DiagnoseDeadlock for a
// deadlock.
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "sim/engine/engine.h"
#include "sim/ir/ir.h"
#include "sim/ir/parser.h"
#include "sim/model/codes.h"
#include "verifier/deadlock.h"
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
      // 8 items over 3 stages: stage 0 gets 0, 3, 6; stage 2 gets 2, 5.
      {"pipeline_async/pipeline_async.pipe", {}, {{"full", 0, 0, 3}, {"full", 2, 0, 2}, {"empty", 1, 0, 3}}},
      {"pipeline_async/pipeline_async.pipe",
       {{"PRODUCER_WARPS", 2}, {"CONSUMER_WARPS", 1}, {"STAGES", 2}},
       {{"full", 0, 0, 4}, {"empty", 1, 0, 4}}},
      {"tma_store/tma_store.pipe", {}, {}},
      {"tma_store/tma_store.pipe", {{"STAGES", 3}, {"TILES", 7}, {"WARPS", 8}}, {}},
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
    EXPECT_TRUE(r.findings.empty()) << what << ": " << OutcomeText(r);
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
// Known-bad variants.

struct BadCase {
  std::string file;
  Defines defines;
  EngineOptions options;       // the policy the header names
  engine::Outcome outcome;     // kDeadlock, kViolation, or kCompleted (warnings / findings)
  std::string code;            // P2001, an M/A/S violation code, a warning code, or a protocol
                               // finding code P2002..P2008 (checked before the outcome's own)
  // Deadlock: the primary blocked wait; violation: the violating agent and (mbarrier codes)
  // the barrier of the violation event; warnings: the first warning's agent and the count.
  std::string barrier;         // barrier name ("" = not checked; "bar.sync" = named barrier)
  uint32_t index = 0;
  uint32_t cta = 0;
  std::string cause;           // deadlock cause name ("" = not checked)
  std::string agent;           // violation / first warning agent label ("" = not checked)
  size_t warnings = 0;         // number of warnings of `code` (0 = not checked)
  bool every_policy = false;   // the outcome and code are the same under every policy
};

std::vector<BadCase> BadCases() {
  const EngineOptions eager = Opt(Policy::kEager), lazy = Opt(Policy::kLazy);
  return {
      {"tma_async_gemm/bad_release_own_cta.pipe", {}, eager, Outcome::kDeadlock, "P2001",
       "empty", 0, 0, "count-too-high", "", 0, true},
      {"tma_async_gemm/bad_tx_own_slices.pipe", {}, lazy, Outcome::kViolation, "M1005", "full", 0,
       2, "", "CTA 2 producer[0]"},
      {"tma_async_gemm/bad_syncthreads_not_cluster.pipe", {}, eager, Outcome::kViolation,
       "M1001", "", 0, 0, "", "CTA 3 producer[0]"},
      {"pipeline_async/bad_count_warps.pipe", {}, eager, Outcome::kViolation, "M1005", "full", 0,
       0, "", "CTA 0 producer[0]", 0, true},
      {"pipeline_async/bad_consumer_phase.pipe", {}, eager, Outcome::kDeadlock, "P2001", "empty",
       0, 0, "", ""},
      {"tma_store/bad_no_proxy_fence.pipe", {}, eager, Outcome::kCompleted, "P2006", "out", 0, 0,
       "", "CTA 0 epilogue[0]", 0, true},
      {"tma_async_gemm/bad_syncthreads_not_cluster.pipe", {}, lazy, Outcome::kCompleted, "P2007",
       "", 0, 0, "", "CTA 0 producer[0]"},
      {"tma_async_gemm/bad_tx_own_slices.pipe", {}, Opt(Policy::kRoundRobin), Outcome::kCompleted,
       "P2002", "full", 0, 0, "", ""},
      {"single_tma_load/bad_count1_arrive_without_expect.pipe", {}, lazy, Outcome::kCompleted,
       "P2002", "full", 0, 0, "", "CTA 0 loader[0]"},
      {"tma_store/bad_no_tail_wait.pipe", {}, lazy, Outcome::kViolation, "A1003", "", 0, 0, "",
       "CTA 0 epilogue[0]"},
      {"tma_store/bad_commit_other_thread.pipe", {}, lazy, Outcome::kViolation, "A1003", "", 0, 0,
       "", "CTA 0 epilogue[0]"},
      {"tma_store/bad_commit_other_thread.pipe", {}, eager, Outcome::kCompleted, "A1102", "", 0,
       0, "", "CTA 0 epilogue[1]", 6},
      {"ws_gemm/bad_coop_empty_one_warpgroup.pipe", {}, eager, Outcome::kViolation, "M1009",
       "empty", 0, 0, "", "CTA 0 consumer[0]"},
      {"ws_gemm/bad_coop_empty_one_warpgroup.pipe", {}, lazy, Outcome::kViolation, "M1005", "full",
       0, 0, "", "CTA 0 producer[0]"},
      {"ws_gemm/bad_coop_empty_threads.pipe", {}, eager, Outcome::kDeadlock, "P2001", "empty", 0,
       0, "count-too-high", "", 0, true},
      {"ws_gemm/bad_pingpong_no_first_turn.pipe", {}, eager, Outcome::kDeadlock, "P2001",
       "bar.sync", 2, 0, "not-mbarrier", "", 0, true},
      {"ws_gemm/bad_pingpong_no_turn_order.pipe", {}, eager, Outcome::kViolation, "M1009", "empty",
       0, 0, "", "CTA 0 consumer[0]", 0, true},
      {"cuda_pipeline/bad_no_initial_ready.pipe", {}, eager, Outcome::kDeadlock, "P2001", "ready",
       0, 0, "count-too-high", "", 0, true},
      {"cuda_pipeline/bad_count_consumers_only.pipe", {}, eager, Outcome::kViolation, "M1009", "",
       0, 0, "", "CTA 0 consumer[2]", 0, true},
      {"cuda_pipeline/bad_arrive_on_noinc.pipe", {}, eager, Outcome::kViolation, "M1005",
       "filled", 0, 0, "", "CTA 0 producer[0]"},
      {"cuda_pipeline/bad_count_budgets_arrive_on.pipe", {}, eager, Outcome::kDeadlock, "P2001",
       "filled", 0, 0, "count-too-high", "", 0, true},
      {"cuda_pipeline/bad_prefetch_tail_wait.pipe", {}, lazy, Outcome::kViolation, "A1003", "", 0,
       0, "", "CTA 0 block[3]"},
      {"cuda_pipeline/bad_prefetch_no_commit.pipe", {}, eager, Outcome::kCompleted, "A1001", "",
       0, 0, "", "CTA 0 block[3]", 28},
      {"cuda_pipeline/bad_prefetch_no_commit.pipe", {}, lazy, Outcome::kViolation, "A1003", "", 0,
       0, "", "CTA 0 block[3]"},
      {"ampere_multistage/bad_no_drain.pipe", {{"K_PIPE_MAX", 4}}, lazy, Outcome::kViolation,
       "A1003", "", 0, 0, "", "CTA 0 mma[2]"},
      {"ampere_multistage/bad_mainloop_no_commit.pipe", {}, eager, Outcome::kCompleted, "A1001",
       "", 0, 0, "", "CTA 0 mma[3]", 32},
      {"st_async_ring/bad_expect_ring_bytes.pipe", {}, eager, Outcome::kDeadlock, "P2001",
       "filled", 0, 0, "tx-over-expected", "", 0, true},
      {"st_async_ring/bad_no_backpressure.pipe", {}, eager, Outcome::kViolation, "M1009",
       "ready", 0, 6, "", "CTA 7 consumer[0]"},
      {"st_async_ring/bad_no_backpressure.pipe", {}, Opt(Policy::kRoundRobin), Outcome::kDeadlock,
       "P2001", "filled", 1, 0, "tx-over-delivered", ""},
      {"single_tma_load/bad_count1_expect_f32_bytes.pipe", {}, eager, Outcome::kDeadlock, "P2001",
       "full", 0, 0, "tx-over-expected", "", 0, true},
      {"single_tma_load/bad_count1_arrive_without_expect.pipe", {}, eager, Outcome::kDeadlock,
       "P2001", "full", 0, 0, "tx-over-delivered", ""},
      {"single_tma_load/bad_countN_init_count_one.pipe", {}, eager, Outcome::kViolation, "M1005",
       "full", 0, 0, "", "CTA 0 block[3]"},
      {"single_tma_load/bad_countN_no_syncthreads.pipe", {}, eager, Outcome::kViolation, "M1001",
       "full", 0, 0, "", "CTA 0 block[3]"},
  };
}

std::string CaseName(const BadCase& c) {
  return c.file + DefinesText(c.defines) + " " + Name(c.options);
}

void ExpectCaught(const BadCase& c, const EngineOptions& o, bool details) {
  Ran r = RunPipe(c.file, c.defines, o);
  ASSERT_TRUE(r.engine) << c.file;
  const std::string what = c.file + DefinesText(c.defines) + " " + Name(o);
  const ir::Program& p = *r.program;
  ASSERT_EQ(r.result.outcome, c.outcome) << what << ": " << OutcomeText(r);
  if (c.code.size() == 5 && c.code.rfind("P2", 0) == 0 && c.code != "P2001") {
    const verifier::Finding* f = nullptr;
    for (const verifier::Finding& x : r.findings) {
      if (model::CodeId(x.code()) == c.code) {
        f = &x;
        break;
      }
    }
    ASSERT_NE(f, nullptr) << what << ": no " << c.code << ": " << OutcomeText(r);
    if (!details) return;
    if (!c.agent.empty()) {
      EXPECT_EQ(verifier::AgentLabel(p, *r.engine, f->agent), c.agent) << what;
    }
    if (!c.barrier.empty()) {
      EXPECT_EQ(f->object_is_buffer ? p.buffers[f->object].name : p.barriers[f->object].name,
                c.barrier)
          << what << ": " << f->message;
      EXPECT_EQ(f->index, c.index) << what << ": " << f->message;
      EXPECT_EQ(f->cta, c.cta) << what << ": " << f->message;
    }
    return;
  }
  if (c.outcome == Outcome::kDeadlock) {
    EXPECT_EQ(c.code, "P2001");
    verifier::DeadlockReport report = verifier::DiagnoseDeadlock(p, *r.engine, r.result);
    ASSERT_LT(report.primary, report.blocked.size()) << what;
    EXPECT_NE(report.summary.find("P2001"), std::string::npos) << report.summary;
    if (!details) return;
    const verifier::BlockedExplanation& x = report.blocked[report.primary];
    if (c.barrier == "bar.sync") {
      EXPECT_EQ(x.blocked.wait, engine::WaitKind::kNamedBarrier) << what;
      EXPECT_EQ(x.blocked.barrier, c.index) << what;
    } else if (!c.barrier.empty()) {
      ASSERT_TRUE(x.blocked.wait == engine::WaitKind::kMbarrierParity ||
                  x.blocked.wait == engine::WaitKind::kMbarrierToken)
          << what;
      EXPECT_EQ(p.barriers[x.blocked.barrier].name, c.barrier) << what << ": " << report.summary;
      EXPECT_EQ(x.blocked.barrier_index, c.index) << what << ": " << report.summary;
    }
    EXPECT_EQ(r.engine->agent_info(x.blocked.agent).cta, c.cta) << what << ": " << report.summary;
    if (!c.cause.empty()) {
      EXPECT_EQ(verifier::DeadlockCauseName(x.cause), c.cause) << what << ": " << report.summary;
    }
    return;
  }
  if (c.outcome == Outcome::kCompleted) {  // caught as warnings
    size_t n = 0;
    for (const auto& w : r.result.warnings) n += model::CodeId(w.violation.code) == c.code;
    ASSERT_GT(n, 0u) << what << ": no " << c.code << " warning";
    if (!details) return;
    if (c.warnings != 0) {
      EXPECT_EQ(n, c.warnings) << what;
    }
    EXPECT_EQ(model::CodeId(r.result.warnings.front().violation.code), c.code) << what;
    if (!c.agent.empty()) {
      EXPECT_EQ(verifier::AgentLabel(p, *r.engine, r.result.warnings.front().agent), c.agent)
          << what;
    }
    return;
  }
  const engine::ViolationInfo& v = *r.result.violation;
  EXPECT_EQ(model::CodeId(v.violation.code), c.code) << what << ": " << OutcomeText(r);
  if (!details) return;
  if (!c.agent.empty()) {
    EXPECT_EQ(verifier::AgentLabel(p, *r.engine, v.agent), c.agent) << what << ": " << OutcomeText(r);
  }
  if (!c.barrier.empty()) {  // mbarrier codes: the barrier the violating event acted on
    ASSERT_LT(v.event.object, p.barriers.size()) << what;
    EXPECT_EQ(p.barriers[v.event.object].name, c.barrier) << what << ": " << OutcomeText(r);
    EXPECT_EQ(v.event.index, c.index) << what << ": " << OutcomeText(r);
    EXPECT_EQ(v.event.target_cta, c.cta) << what << ": " << OutcomeText(r);
  }
  EXPECT_EQ(v.where.file, "pipelines/" + c.file);
  EXPECT_GT(v.where.line, 0) << what;
}

class BadPipelineTest : public ::testing::TestWithParam<BadCase> {};

TEST_P(BadPipelineTest, IsCaught) {
  const BadCase& c = GetParam();
  SCOPED_TRACE(CaseName(c));
  ExpectCaught(c, c.options, /*details=*/true);
  if (c.every_policy) {
    for (const EngineOptions& o : AllPolicies()) ExpectCaught(c, o, /*details=*/false);
  }
}

INSTANTIATE_TEST_SUITE_P(Pipelines, BadPipelineTest, ::testing::ValuesIn(BadCases()));

// Every known-bad file of the library is listed above (a new bad_*.pipe without a test fails).
TEST(PipelinesTest, EveryBadVariantIsTested) {
  const std::vector<std::string> bad = {
      "tma_async_gemm/bad_release_own_cta.pipe",
      "tma_async_gemm/bad_tx_own_slices.pipe",
      "tma_async_gemm/bad_syncthreads_not_cluster.pipe",
      "pipeline_async/bad_count_warps.pipe",
      "pipeline_async/bad_consumer_phase.pipe",
      "tma_store/bad_no_tail_wait.pipe",
      "tma_store/bad_commit_other_thread.pipe",
      "tma_store/bad_no_proxy_fence.pipe",
      "ws_gemm/bad_coop_empty_one_warpgroup.pipe",
      "ws_gemm/bad_coop_empty_threads.pipe",
      "ws_gemm/bad_pingpong_no_first_turn.pipe",
      "ws_gemm/bad_pingpong_no_turn_order.pipe",
      "cuda_pipeline/bad_no_initial_ready.pipe",
      "cuda_pipeline/bad_count_consumers_only.pipe",
      "cuda_pipeline/bad_arrive_on_noinc.pipe",
      "cuda_pipeline/bad_count_budgets_arrive_on.pipe",
      "cuda_pipeline/bad_prefetch_tail_wait.pipe",
      "cuda_pipeline/bad_prefetch_no_commit.pipe",
      "ampere_multistage/bad_no_drain.pipe",
      "ampere_multistage/bad_mainloop_no_commit.pipe",
      "st_async_ring/bad_expect_ring_bytes.pipe",
      "st_async_ring/bad_no_backpressure.pipe",
      "single_tma_load/bad_count1_expect_f32_bytes.pipe",
      "single_tma_load/bad_count1_arrive_without_expect.pipe",
      "single_tma_load/bad_countN_init_count_one.pipe",
      "single_tma_load/bad_countN_no_syncthreads.pipe",
  };
  for (const std::string& f : bad) {
    bool listed = false;
    for (const BadCase& c : BadCases()) listed |= c.file == f;
    EXPECT_TRUE(listed) << f;
  }
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
