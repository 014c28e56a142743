// The deadlock diagnosis names the right barrier, CTA and cause for each broken bundled example,
// and says nothing for the correct one.
#include "verifier/deadlock.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "parity/parity.h"
#include "sim/engine/engine.h"
#include "sim/ir/parser.h"

namespace parity::verifier {
namespace {

using ::testing::HasSubstr;

struct Run {
  ir::Program program;
  std::unique_ptr<engine::Engine> engine;
  engine::RunResult result;
};

std::unique_ptr<Run> RunPath(const std::string& path, engine::Policy policy, uint64_t seed) {
  auto program = ir::ParseFile(path);
  EXPECT_TRUE(program.ok()) << program.status().ToString();
  if (!program.ok()) return nullptr;
  auto run = std::make_unique<Run>();
  run->program = std::move(program).value();
  auto params = ir::BindParams(run->program, {});
  EXPECT_TRUE(params.ok()) << params.status().ToString();
  engine::EngineOptions options;
  options.policy = policy;
  options.seed = seed;
  auto engine = engine::Engine::Create(run->program, *params, options);
  EXPECT_TRUE(engine.ok()) << engine.status().ToString();
  if (!engine.ok()) return nullptr;
  run->engine = std::make_unique<engine::Engine>(std::move(engine).value());
  run->result = run->engine->Run();
  return run;
}

std::unique_ptr<Run> RunExample(const std::string& name, engine::Policy policy,
                                uint64_t seed = 0) {
  return RunPath("sim/examples/" + name + ".pipe", policy, seed);
}

const char* const kPolicies[] = {"eager", "lazy", "round-robin", "random"};

engine::Policy PolicyOf(int i) {
  return std::array{engine::Policy::kEager, engine::Policy::kLazy, engine::Policy::kRoundRobin,
                    engine::Policy::kRandom}[i];
}

struct BrokenCase {
  const char* example;
  const char* barrier;        // the barrier array the primary cause names
  DeadlockCause cause;
  const char* text;           // a phrase the explanation must contain
};

class BrokenExample : public ::testing::TestWithParam<BrokenCase> {};

TEST_P(BrokenExample, DiagnosisNamesBarrierCtaAndCauseUnderEveryPolicy) {
  const BrokenCase& c = GetParam();
  for (int p = 0; p < 4; ++p) {
    for (uint64_t seed : {1u, 2u, 3u}) {
      if (PolicyOf(p) != engine::Policy::kRandom && seed > 1) continue;
      SCOPED_TRACE(std::string(kPolicies[p]) + " seed " + std::to_string(seed));
      auto run = RunExample(c.example, PolicyOf(p), seed);
      ASSERT_NE(run, nullptr);
      ASSERT_EQ(run->result.outcome, engine::Outcome::kDeadlock);
      DeadlockReport report = DiagnoseDeadlock(run->program, *run->engine, run->result);
      ASSERT_FALSE(report.blocked.empty());
      const BlockedExplanation& primary = report.blocked[report.primary];
      EXPECT_EQ(primary.cause, c.cause) << DeadlockCauseName(primary.cause) << ": "
                                        << primary.cause_text;
      EXPECT_EQ(run->program.barriers[primary.blocked.barrier].name, c.barrier);
      EXPECT_THAT(primary.cause_text, HasSubstr(c.text));
      EXPECT_THAT(report.summary, HasSubstr("P2001 deadlock"));
      EXPECT_THAT(report.summary, HasSubstr(DeadlockCauseName(c.cause)));
      // Every CTA of the 2x2 cluster is stuck on the same kind of cause.
      std::set<uint32_t> ctas;
      for (const BlockedExplanation& x : report.blocked) {
        if (x.cause == c.cause) ctas.insert(x.blocked.cta);
      }
      EXPECT_EQ(ctas.size(), 4u);
      // The producer/consumer cycle is found.
      EXPECT_FALSE(report.cycles.empty());
      std::string text = FormatDeadlockReport(report, run->program, *run->engine, "");
      EXPECT_THAT(text, HasSubstr(std::string(c.barrier) + "["));
      std::string dot = WaitForGraphDot(report, run->program, *run->engine);
      EXPECT_THAT(dot, HasSubstr("digraph wait_for"));
      EXPECT_THAT(dot, HasSubstr("color=red"));
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Examples, BrokenExample,
    ::testing::Values(
        BrokenCase{"gemm_tx_overcount", "full", DeadlockCause::kTxOverExpected,
                   "98304 tx bytes are still outstanding"},
        BrokenCase{"gemm_empty_count_high", "empty", DeadlockCause::kCountTooHigh,
                   "received 6 of 8 arrivals"},
        BrokenCase{"gemm_wrong_producer_phase", "empty", DeadlockCause::kWrongInitialPhase,
                   "must use parity 1"}),
    [](const auto& info) { return std::string(info.param.example); });

TEST(Deadlock, CorrectExamplesComplete) {
  for (const char* name : {"single_tma_load", "gemm_tma_multicast_2x2"}) {
    for (int p = 0; p < 4; ++p) {
      SCOPED_TRACE(std::string(name) + " " + kPolicies[p]);
      auto run = RunExample(name, PolicyOf(p), 7);
      ASSERT_NE(run, nullptr);
      EXPECT_EQ(run->result.outcome, engine::Outcome::kCompleted);
    }
  }
}

TEST(Deadlock, TxOverExpectedStatesTheByteCounts) {
  auto run = RunExample("gemm_tx_overcount", engine::Policy::kEager);
  ASSERT_NE(run, nullptr);
  DeadlockReport report = DiagnoseDeadlock(run->program, *run->engine, run->result);
  const BlockedExplanation& p = report.blocked[report.primary];
  // 2x2 cluster, 128x64 f16 tiles of A and B: 32768 bytes per stage and CTA; the broken
  // schedule expects 4x that.
  EXPECT_EQ(p.stats.tx_expected, 4 * 32768);
  EXPECT_EQ(p.stats.tx_delivered, 32768);
  EXPECT_EQ(p.blocked.state.tx_count, 3 * 32768);
  EXPECT_EQ(p.blocked.state.pending_count, 0);
}

TEST(Deadlock, CountTooHighStatesArrivals) {
  auto run = RunExample("gemm_empty_count_high", engine::Policy::kEager);
  ASSERT_NE(run, nullptr);
  DeadlockReport report = DiagnoseDeadlock(run->program, *run->engine, run->result);
  const BlockedExplanation& p = report.blocked[report.primary];
  EXPECT_EQ(p.stats.arrivals, 6);
  EXPECT_EQ(p.stats.arrived_agents.size(), 6u);
  EXPECT_EQ(p.blocked.state.expected_count, 8);
  EXPECT_EQ(p.blocked.state.pending_count, 2);
  EXPECT_EQ(p.blocked.parity, 0u);
}

// bad_count_budgets_arrive_on: filled[b] is initialised with THREADS + 32, budgeting the
// net-zero cp.async.mbarrier.arrive. Producer and consumers form one wait-for cycle; both
// barriers are short of arrivals. filled[0] is the root: every agent that could signal it has
// already arrived in phase 0 (128 of 160). ready[0] (32 of 128 in phase 1) only waits for the
// consumers stuck on filled[0]; naming it (as the first blocked agent in agent order) sent the
// reader to the wrong count.
TEST(Deadlock, CycleNamesTheBarrierWhoseSignallersAllArrived) {
  for (int p = 0; p < 4; ++p) {
    SCOPED_TRACE(kPolicies[p]);
    auto run = RunPath("pipelines/cuda_pipeline/bad_count_budgets_arrive_on.pipe", PolicyOf(p), 5);
    ASSERT_NE(run, nullptr);
    ASSERT_EQ(run->result.outcome, engine::Outcome::kDeadlock);
    DeadlockReport report = DiagnoseDeadlock(run->program, *run->engine, run->result);
    ASSERT_EQ(report.blocked.size(), 4u);
    const BlockedExplanation& primary = report.blocked[report.primary];
    EXPECT_EQ(run->program.barriers[primary.blocked.barrier].name, "filled");
    EXPECT_EQ(primary.blocked.barrier_index, 0u);
    EXPECT_EQ(primary.cause, DeadlockCause::kCountTooHigh) << primary.cause_text;
    EXPECT_TRUE(primary.all_signallers_arrived);
    // The cp.async.mbarrier.arrive (no .noinc) nets to zero: the stats agree with the state.
    EXPECT_EQ(primary.stats.arrivals, 128);
    EXPECT_EQ(primary.stats.arrivals + primary.blocked.state.pending_count,
              primary.blocked.state.expected_count);
    EXPECT_THAT(primary.cause_text, HasSubstr("received 128 of 160 arrivals in phase 0"));
    EXPECT_THAT(primary.cause_text, HasSubstr("already arrived in this phase"));
    EXPECT_THAT(report.summary, HasSubstr("(count-too-high) at filled[0] of CTA 0"));
    int ready_waits = 0;
    for (const BlockedExplanation& x : report.blocked) {
      const std::string& name = run->program.barriers[x.blocked.barrier].name;
      if (name != "ready") {
        EXPECT_EQ(name, "filled");
        EXPECT_EQ(x.cause, DeadlockCause::kCountTooHigh);
        continue;
      }
      ++ready_waits;
      EXPECT_EQ(x.cause, DeadlockCause::kDownstream) << x.cause_text;
      EXPECT_FALSE(x.all_signallers_arrived);
      ASSERT_NE(x.upstream_agent, UINT32_MAX);
      EXPECT_EQ(run->program.roles[run->engine->agent_info(x.upstream_agent).role].name,
                "consumer");
      EXPECT_THAT(x.cause_text, HasSubstr("is blocked on filled[0] of CTA 0"));
      EXPECT_THAT(x.cause_text, HasSubstr("32 of 128 arrivals in phase 1"));
    }
    EXPECT_EQ(ready_waits, 1);
    // The root comes first in the text too.
    const std::string text = FormatDeadlockReport(report, run->program, *run->engine, "");
    EXPECT_LT(text.find("waits on filled[0]"), text.find("waits on ready[0]"));
  }
}

// A count-too-high barrier with nothing upstream keeps its cause: gemm_empty_count_high's
// empty barrier (6 of 8) is short although some possible signallers (the diagonal CTA's
// consumers, which a static scan cannot rule out) have not arrived.
TEST(Deadlock, CountTooHighWithoutARootStaysTheCause) {
  auto run = RunExample("gemm_empty_count_high", engine::Policy::kEager);
  ASSERT_NE(run, nullptr);
  DeadlockReport report = DiagnoseDeadlock(run->program, *run->engine, run->result);
  const BlockedExplanation& p = report.blocked[report.primary];
  EXPECT_EQ(p.cause, DeadlockCause::kCountTooHigh);
  EXPECT_EQ(run->program.barriers[p.blocked.barrier].name, "empty");
  for (const BlockedExplanation& x : report.blocked) {
    EXPECT_EQ(x.upstream_agent, UINT32_MAX) << x.cause_text;
  }
}

// --- the right culprit (issue 24, item 5): known-bad pipelines written like real kernels ---

struct Diagnosed {
  std::unique_ptr<Run> run;
  DeadlockReport report;
  std::string text;
};

Diagnosed DiagnoseFile(const std::string& path, engine::Policy policy,
                       const std::vector<std::pair<std::string, int64_t>>& defines = {}) {
  Diagnosed d;
  const std::string& pipeline = path;
  auto program = ir::ParseFile(path);
  EXPECT_TRUE(program.ok()) << program.status().ToString();
  if (!program.ok()) return d;
  d.run = std::make_unique<Run>();
  d.run->program = std::move(program).value();
  auto params = ir::BindParams(d.run->program, defines);
  EXPECT_TRUE(params.ok());
  engine::EngineOptions options;
  options.policy = policy;
  auto engine = engine::Engine::Create(d.run->program, *params, options);
  EXPECT_TRUE(engine.ok());
  if (!engine.ok()) return d;
  d.run->engine = std::make_unique<engine::Engine>(std::move(engine).value());
  d.run->result = d.run->engine->Run();
  EXPECT_EQ(d.run->result.outcome, engine::Outcome::kDeadlock)
      << pipeline << ": " << engine::OutcomeName(d.run->result.outcome);
  if (d.run->result.outcome != engine::Outcome::kDeadlock) return d;
  d.report = DiagnoseDeadlock(d.run->program, *d.run->engine, d.run->result, nullptr, &*params);
  d.text = FormatDeadlockReport(d.report, d.run->program, *d.run->engine, "");
  return d;
}

Diagnosed Diagnose(const std::string& pipeline, engine::Policy policy,
                   const std::vector<std::pair<std::string, int64_t>>& defines = {}) {
  return DiagnoseFile("pipelines/" + pipeline, policy, defines);
}

// The cause, barrier, CTA and source line the diagnosis blames: an earlier wait (the culprit)
// or the primary blocked wait.
struct Blame {
  DeadlockCause cause = DeadlockCause::kUnknown;
  std::string barrier;
  uint32_t index = 0, cta = 0;
  int line = 0;
  std::string agent;
};

Blame BlameOf(const Diagnosed& d) {
  Blame b;
  if (!d.run || d.report.blocked.empty()) return b;
  const ir::Program& p = d.run->program;
  if (d.report.culprit.found) {
    const DeadlockCulprit& c = d.report.culprit;
    return {c.cause, p.barriers[c.barrier].name, c.index, c.cta, c.where.line,
            AgentLabel(p, *d.run->engine, c.agent)};
  }
  const BlockedExplanation& x = d.report.blocked[d.report.primary];
  return {x.cause, p.barriers[x.blocked.barrier].name, x.blocked.barrier_index, x.blocked.cta,
          x.blocked.where.line, AgentLabel(p, *d.run->engine, x.blocked.agent)};
}

// A parity-1 wait on a barrier the loader fills itself: eager, the bytes land first and the wait
// blocks on phase 1, which only the loader's next arrive could start. The diagnosis names that
// wait (line 34), not "no agent ever arrives" (line 32 does).
TEST(DeadlockCulpritTest, LoopWaitParityOneNamesTheWait) {
  Diagnosed d = Diagnose("single_tma_load/bad_loop_wait_parity_one.pipe", engine::Policy::kEager);
  Blame b = BlameOf(d);
  EXPECT_EQ(b.cause, DeadlockCause::kWaitSkipsPhase) << d.text;
  EXPECT_EQ(b.barrier, "full");
  EXPECT_EQ(b.line, 34);
  EXPECT_EQ(b.agent, "CTA 0 loader[0]");
  EXPECT_THAT(d.text, ::testing::Not(HasSubstr("no agent of the program ever arrives")));
  EXPECT_THAT(d.text, HasSubstr("only this agent signals it"));
}

// The same blocked wait without the skipped phase (a count-1 barrier the waiter fills itself,
// waiting one phase ahead of its own arrivals): waits-on-own-signal, not no-signaller.
TEST(DeadlockCulpritTest, OnlySignallerIsTheWaiterItself) {
  const ir::Program program = [] {
    auto p = ir::ParseProgram(
        "barrier b[1] count 2\nrole t threads 32 {\n  init b[0]\n  arrive b[0]\n"
        "  wait b[0] parity 0\n}\n",
        "self.pipe");
    EXPECT_TRUE(p.ok()) << p.status().ToString();
    return p.ok() ? std::move(p).value() : ir::Program{};
  }();
  const std::vector<int64_t> params;
  auto e = engine::Engine::Create(program, params);
  ASSERT_TRUE(e.ok());
  const engine::RunResult r = e->Run();
  ASSERT_EQ(r.outcome, engine::Outcome::kDeadlock);
  const DeadlockReport report = DiagnoseDeadlock(program, *e, r, nullptr, &params);
  EXPECT_EQ(report.blocked[report.primary].cause, DeadlockCause::kWaitsOnOwnSignal)
      << report.summary;
  EXPECT_FALSE(report.culprit.found);
}

// Consumers on the producer's start phase: their first wait passes at once on a fresh full[0];
// the diagnosis names that wait (line 87), not the waits that block later.
TEST(DeadlockCulpritTest, ConsumerStartPhaseNamesTheFirstConsumerWait) {
  for (engine::Policy policy : {engine::Policy::kEager, engine::Policy::kLazy}) {
    Diagnosed d = Diagnose("tma_async_gemm/bad_consumer_start_phase.pipe", policy,
                           {{"CLUSTER_M", 1}, {"CLUSTER_N", 1}});
    Blame b = BlameOf(d);
    EXPECT_EQ(b.cause, DeadlockCause::kParityPassedAtOnce) << d.text;
    EXPECT_EQ(b.barrier, "full");
    EXPECT_EQ(b.index, 0u);
    EXPECT_EQ(b.line, 87);
    EXPECT_THAT(b.agent, HasSubstr("consumer"));
  }
}

// consumer_wait's parity from the loop index (k & 1 with 4 stages): the k = 1 wait skips phase 0
// of full[1]; the diagnosis names it (line 86), not a tx mismatch downstream.
TEST(DeadlockCulpritTest, LoopIndexParityNamesTheWaitThatSkippedAPhase) {
  for (engine::Policy policy : {engine::Policy::kLazy, engine::Policy::kRoundRobin}) {
    Diagnosed d = Diagnose("tma_async_gemm/bad_consumer_loop_index_parity.pipe", policy);
    Blame b = BlameOf(d);
    EXPECT_EQ(b.cause, DeadlockCause::kWaitSkipsPhase) << d.text;
    EXPECT_EQ(b.barrier, "full");
    EXPECT_EQ(b.index, 1u);
    EXPECT_EQ(b.line, 86);
    EXPECT_THAT(b.agent, HasSubstr("consumer"));
    EXPECT_THAT(d.report.summary, ::testing::Not(HasSubstr("tx-over")));
  }
}

// The producer on the wrong initial phase is blamed (line 60), under every policy; and "could
// still signal" empty[0] of CTA 0 lists exactly the consumers of the CTAs that release into it
// (its row and column: CTAs 0, 1, 2), not CTA 3's.
TEST(DeadlockCulpritTest, ProducerStartPhaseBlamesTheProducerAndOnlyReachingSignallers) {
  for (int p = 0; p < 3; ++p) {
    Diagnosed d = Diagnose("tma_async_gemm/bad_producer_start_phase.pipe", PolicyOf(p));
    Blame b = BlameOf(d);
    EXPECT_EQ(b.cause, DeadlockCause::kWrongInitialPhase) << kPolicies[p] << "\n" << d.text;
    EXPECT_EQ(b.barrier, "empty");
    EXPECT_EQ(b.cta, 0u);
    EXPECT_EQ(b.line, 60);
    EXPECT_EQ(b.agent, "CTA 0 producer[0]");
    const BlockedExplanation& x = d.report.blocked[d.report.primary];
    std::vector<std::string> who;
    for (uint32_t a : x.could_signal_blocked) who.push_back(AgentLabel(d.run->program, *d.run->engine, a));
    EXPECT_THAT(who, ::testing::UnorderedElementsAre(
                         "CTA 0 consumer[0]", "CTA 0 consumer[1]", "CTA 1 consumer[0]",
                         "CTA 1 consumer[1]", "CTA 2 consumer[0]", "CTA 2 consumer[1]"))
        << kPolicies[p];
  }
}

// Without the params the targets cannot be evaluated: every remote signaller counts (the
// over-approximation never drops one).
TEST(DeadlockCulpritTest, WithoutParamsEveryRemoteSignallerCounts) {
  Diagnosed d = Diagnose("tma_async_gemm/bad_producer_start_phase.pipe", engine::Policy::kEager);
  ASSERT_TRUE(d.run);
  const DeadlockReport coarse = DiagnoseDeadlock(d.run->program, *d.run->engine, d.run->result);
  EXPECT_EQ(coarse.blocked[coarse.primary].could_signal_blocked.size(), 8u);
  EXPECT_EQ(d.report.blocked[d.report.primary].could_signal_blocked.size(), 6u);
}

// --- adversarial schedules from public bug classes (tests/verifier/testdata/culprit) ---

Diagnosed Culprit(const std::string& name, engine::Policy policy) {
  return DiagnoseFile("tests/verifier/testdata/culprit/" + name + ".pipe", policy);
}

std::vector<std::string> Labels(const Diagnosed& d, const std::vector<uint32_t>& agents) {
  std::vector<std::string> out;
  for (uint32_t a : agents) out.push_back(AgentLabel(d.run->program, *d.run->engine, a));
  return out;
}

// The explanation of the blocked wait of `agent` (a label), or null.
const BlockedExplanation* WaitOf(const Diagnosed& d, const std::string& agent) {
  for (const BlockedExplanation& x : d.report.blocked) {
    if (AgentLabel(d.run->program, *d.run->engine, x.blocked.agent) == agent) return &x;
  }
  return nullptr;
}

constexpr engine::Policy kThree[] = {engine::Policy::kEager, engine::Policy::kLazy,
                                     engine::Policy::kRoundRobin};

// A consumer whose parity is (k + 1) & 1: its first wait passes at once on a fresh full[0]; that
// wait (line 22) is the culprit, not the producer's wait that blocks later.
TEST(DeadlockAdversarialTest, ParityOnePhaseAheadNamesTheWaitThatPassed) {
  for (engine::Policy p : {engine::Policy::kEager, engine::Policy::kLazy}) {
    Diagnosed d = Culprit("consumer_parity_ahead", p);
    ASSERT_TRUE(d.report.culprit.found) << d.text;
    Blame b = BlameOf(d);
    EXPECT_EQ(b.cause, DeadlockCause::kParityPassedAtOnce) << d.text;
    EXPECT_EQ(b.barrier, "full");
    EXPECT_EQ(b.line, 22);
    EXPECT_EQ(b.agent, "CTA 0 consumer[0]");
  }
}

// The parity of an inner loop index (k & 1 where the running count t * 3 + k is needed): at the
// second tile the consumer's wait re-observes the phase it consumed last (3 k-blocks per tile,
// an odd count) and passes at once. That wait (line 27) is the culprit, not the producer's wait
// on empty[0] that skips a phase afterwards.
TEST(DeadlockAdversarialTest, ParityFromAnInnerLoopIndexNamesTheStalePass) {
  Diagnosed d = Culprit("parity_from_inner_loop", engine::Policy::kEager);
  ASSERT_TRUE(d.report.culprit.found) << d.text;
  Blame b = BlameOf(d);
  EXPECT_EQ(b.cause, DeadlockCause::kParityPassedAtOnce) << d.text;
  EXPECT_EQ(b.barrier, "full");
  EXPECT_EQ(b.line, 27);
  EXPECT_EQ(b.agent, "CTA 0 consumer[0]");
  EXPECT_THAT(d.report.culprit.text, HasSubstr("already observed"));
}

// An empty barrier initialised for two releases per phase where one consumer gives one: the
// count is the inconsistency (count-too-high on empty[0], the barrier whose every signaller has
// arrived), under every policy; "could still signal" names the consumer alone.
TEST(DeadlockAdversarialTest, EmptyCountTooHighNamesTheEmptyBarrier) {
  for (engine::Policy p : kThree) {
    Diagnosed d = Culprit("empty_count_too_high", p);
    EXPECT_FALSE(d.report.culprit.found) << d.text;
    Blame b = BlameOf(d);
    EXPECT_EQ(b.cause, DeadlockCause::kCountTooHigh) << d.text;
    EXPECT_EQ(b.barrier, "empty");
    EXPECT_EQ(b.line, 17);
    EXPECT_EQ(b.agent, "CTA 0 producer[0]");
    EXPECT_THAT(d.report.blocked[d.report.primary].cause_text, HasSubstr("init count 2"));
    EXPECT_THAT(Labels(d, d.report.blocked[d.report.primary].could_signal_blocked),
                ::testing::ElementsAre("CTA 0 consumer[0]"));
  }
}

// Each CTA multicasts one box into both; expect_tx announces three boxes: tx-over-expected on
// full[0], its byte counts stated, and only the peer CTA's loader listed as a signaller (its
// multicast reaches this CTA).
TEST(DeadlockAdversarialTest, MulticastExpectTxOneBoxOverStatesTheBytes) {
  for (engine::Policy p : kThree) {
    Diagnosed d = Culprit("multicast_expect_one_box_over", p);
    Blame b = BlameOf(d);
    EXPECT_EQ(b.cause, DeadlockCause::kTxOverExpected) << d.text;
    EXPECT_EQ(b.barrier, "full");
    EXPECT_THAT(d.report.blocked[d.report.primary].cause_text,
                HasSubstr("12288 bytes were expected (expect_tx) in this phase and 8192 delivered"));
  }
}

// CTA 1's consumer releases CTA 0's empty[0] (@cta(0)) instead of its own: nothing ever arrives
// on empty[0] of CTA 1 — a fact of the program, ranked before the phase skew that the extra
// arrivals cause in CTA 0 — and "could still signal" full[0] of a CTA lists only that CTA's
// producer.
TEST(DeadlockAdversarialTest, ReleaseIntoTheWrongCtaNamesTheStarvedBarrier) {
  for (engine::Policy p : kThree) {
    Diagnosed d = Culprit("release_into_wrong_cta", p);
    Blame b = BlameOf(d);
    EXPECT_EQ(b.cause, DeadlockCause::kNoSignaller) << engine::PolicyName(p) << "\n" << d.text;
    EXPECT_EQ(b.barrier, "empty");
    EXPECT_EQ(b.cta, 1u);
    EXPECT_EQ(b.line, 14);
    EXPECT_EQ(b.agent, "CTA 1 producer[0]");
    if (const BlockedExplanation* c1 = WaitOf(d, "CTA 1 consumer[0]");
        c1 != nullptr && c1->blocked.wait == engine::WaitKind::kMbarrierParity) {
      EXPECT_THAT(Labels(d, c1->could_signal_blocked), ::testing::ElementsAre("CTA 1 producer[0]"));
    }
  }
}

// The consumer skips its release on iteration 1 (`if k != 1 { arrive empty[s] }`): every blocked
// wait is downstream of another; the culprit is the consumer's skipped arrive on empty (line 29),
// found from the run: it observed full[1] phase 0 and went on to wait for phase 1 without
// releasing empty[1].
TEST(DeadlockAdversarialTest, ReleaseMissingOnOnePathNamesTheSkippedArrive) {
  for (engine::Policy p : kThree) {
    Diagnosed d = Culprit("missing_release_on_one_path", p);
    ASSERT_TRUE(d.report.culprit.found) << d.text;
    Blame b = BlameOf(d);
    EXPECT_EQ(b.cause, DeadlockCause::kMissedSignal) << d.text;
    EXPECT_EQ(b.barrier, "empty");
    EXPECT_EQ(b.index, 1u);
    EXPECT_EQ(b.line, 29);
    EXPECT_EQ(b.agent, "CTA 0 consumer[0]");
    EXPECT_THAT(d.report.summary, HasSubstr("the signal at"));
  }
}

// A 2-CTA cluster where only CTA 1 initialises full[0] with count 2: the diagnosis is about full[0]
// of CTA 1, and nobody of CTA 0 is listed as able to signal it (CTA 0's loader only loads into
// its own CTA).
TEST(DeadlockAdversarialTest, OnlyThePeersBarrierIsWrong) {
  for (engine::Policy p : kThree) {
    Diagnosed d = Culprit("peer_barrier_count", p);
    Blame b = BlameOf(d);
    EXPECT_EQ(b.cause, DeadlockCause::kWaitsOnOwnSignal) << d.text;
    EXPECT_EQ(b.barrier, "full");
    EXPECT_EQ(b.cta, 1u);
    EXPECT_EQ(b.line, 18);
    EXPECT_EQ(b.agent, "CTA 1 loader[0]");
    EXPECT_TRUE(d.report.blocked[d.report.primary].could_signal_blocked.empty()) << d.text;
    EXPECT_THAT(d.report.blocked[d.report.primary].cause_text, HasSubstr("1 of 2 arrivals"));
  }
}

// bar.sync 1, 96 with two warps: the named barrier, its thread counts, at the first bar.sync.
TEST(DeadlockAdversarialTest, NamedBarrierCountMismatch) {
  for (engine::Policy p : kThree) {
    Diagnosed d = Culprit("named_barrier_count", p);
    ASSERT_FALSE(d.report.blocked.empty());
    const BlockedExplanation& x = d.report.blocked[d.report.primary];
    EXPECT_EQ(x.cause, DeadlockCause::kNotMbarrier) << d.text;
    EXPECT_EQ(x.blocked.wait, engine::WaitKind::kNamedBarrier);
    EXPECT_THAT(x.cause_text, HasSubstr("64 of 96 threads"));
    EXPECT_TRUE(x.blocked.where.line == 10 || x.blocked.where.line == 15) << x.blocked.where.line;
    // Who is there, and that nobody else is left to come.
    EXPECT_THAT(x.cause_text, HasSubstr("Waiting at named barrier 1 of CTA 0: "));
    EXPECT_THAT(x.cause_text, HasSubstr("CTA 0 producer[0]"));
    EXPECT_THAT(x.cause_text, HasSubstr("CTA 0 consumer[0]"));
    EXPECT_THAT(x.cause_text, HasSubstr("(64 threads)"));
    EXPECT_THAT(x.cause_text, HasSubstr("No other agent of the CTA is left to arrive"));
  }
}

// A named barrier with a name (`named_barrier q_empty = 3`): the diagnosis names it, and lists
// who arrived (the consumer waiting, the producer that arrived with bar.arrive and exited) and
// who did not (the other consumer, blocked at its mbarrier wait), by role, threads and line.
TEST(DeadlockAdversarialTest, NamedBarrierByNameListsWhoArrivedAndWhoDidNot) {
  for (engine::Policy p : kThree) {
    Diagnosed d = Culprit("named_barrier_by_name", p);
    ASSERT_FALSE(d.report.blocked.empty()) << d.text;
    const BlockedExplanation* x = WaitOf(d, "CTA 0 consumer[0]");
    ASSERT_NE(x, nullptr) << d.text;
    EXPECT_EQ(x->blocked.wait, engine::WaitKind::kNamedBarrier);
    EXPECT_THAT(x->cause_text, HasSubstr("256 of 384 threads")) << d.text;
    EXPECT_THAT(x->cause_text, HasSubstr("Waiting at named barrier q_empty of CTA 0: CTA 0 "
                                         "consumer[0] (128 threads)."))
        << d.text;
    EXPECT_THAT(x->cause_text, HasSubstr("Arrived with bar.arrive and went on: CTA 0 "
                                         "producer[0] (128 threads, bar.arrive at line 8, now "
                                         "exited)."))
        << d.text;
    EXPECT_THAT(x->cause_text, HasSubstr("Not arrived (128 threads of the CTA): CTA 0 "
                                         "consumer[1] (128 threads, blocked on ready[0] of CTA 0 "
                                         "parity 0 at line 13)."))
        << d.text;
    // The other consumer's own wait is named by its barrier, the report by the name.
    EXPECT_THAT(d.text, HasSubstr("named barrier q_empty")) << d.text;
    EXPECT_THAT(d.text, ::testing::Not(HasSubstr("named barrier 3"))) << d.text;
  }
}

// A named barrier whose third warp is blocked at an mbarrier wait before its bar.sync: the
// diagnosis of the named barrier lists who waits there and where the missing warp is.
TEST(DeadlockAdversarialTest, NamedBarrierListsWhoArrivedAndWhereTheOthersAre) {
  for (engine::Policy p : kThree) {
    Diagnosed d = Culprit("named_barrier_missing_warp", p);
    bool seen = false;
    for (const BlockedExplanation& x : d.report.blocked) {
      if (x.blocked.wait != engine::WaitKind::kNamedBarrier) continue;
      seen = true;
      EXPECT_THAT(x.cause_text, HasSubstr("64 of 96 threads")) << d.text;
      EXPECT_THAT(x.cause_text, HasSubstr("Waiting at named barrier 1 of CTA 0: CTA 0 math[0], "
                                          "CTA 0 math[1] (64 threads)."))
          << d.text;
      EXPECT_THAT(x.cause_text,
                  HasSubstr("Not arrived (32 threads of the CTA): CTA 0 softmax[0] (32 threads, "
                            "blocked on ready[0] of CTA 0 parity 0 at line 12)."))
          << d.text;
      EXPECT_THAT(x.cause_text, ::testing::Not(HasSubstr("bar.arrive"))) << d.text;
      EXPECT_THAT(x.cause_text, ::testing::Not(HasSubstr("No other agent"))) << d.text;
    }
    EXPECT_TRUE(seen) << d.text;
  }
}

// `parity explore` diagnoses its deadlocking counterexample with the same culprit: the P2001
// finding's location is the culprit's line and its message names the cause (explore also
// re-runs its counterexample with one change at a time, verifier/culprit.h, so a wrong byte
// count is named at its expect_tx).
TEST(DeadlockAdversarialTest, ExploreNamesTheSameCulprits) {
  const struct {
    const char* name;
    int line;
    const char* cause;
  } kCases[] = {
      {"consumer_parity_ahead", 22, "parity-passed-at-once"},
      {"parity_from_inner_loop", 27, "parity-passed-at-once"},
      {"missing_release_on_one_path", 29, "missed-signal"},
      // The re-run names the expect_tx statement whose bytes are wrong, not the wait (14).
      {"multicast_expect_one_box_over", 12, "tx-over-expected"},
  };
  for (const auto& c : kCases) {
    auto schedule = api::Schedule::FromFile(std::string("tests/verifier/testdata/culprit/") +
                                            c.name + ".pipe");
    ASSERT_TRUE(schedule.ok()) << c.name;
    api::ExploreOptions o;
    o.max_states = 200'000;
    auto report = api::Explore(*schedule, o);
    ASSERT_TRUE(report.ok()) << c.name;
    const api::Finding* deadlock = nullptr;
    for (const api::Finding& f : report->findings) {
      if (f.code == "P2001") deadlock = &f;
    }
    if (deadlock == nullptr) {
      // The first counterexample may be another violation of the same bug (an over-arrival of
      // the shifted phases); the deadlock must then be reachable too: check's eager run has it.
      continue;
    }
    EXPECT_EQ(deadlock->location.line, c.line) << c.name << ": " << deadlock->message;
    EXPECT_THAT(deadlock->message, HasSubstr(c.cause)) << c.name;
  }
}

}  // namespace
}  // namespace parity::verifier
