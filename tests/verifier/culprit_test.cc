// The culprit of a deadlock by repair (verifier/culprit.h): adversarial schedules whose blocked
// waits are far from the mistake, each with the statement, cause and change a re-run proves;
// schedules no single change fixes keep the heuristic diagnosis; a change that only hides the
// bug (a consumer let through before its data arrived) is not accepted.
#include "verifier/culprit.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "parity/parity.h"
#include "sim/engine/engine.h"
#include "sim/ir/parser.h"
#include "verifier/explore.h"

namespace parity::verifier {
namespace {

using ::testing::HasSubstr;

struct Diagnosed {
  ir::Program program;
  std::vector<int64_t> params;
  std::unique_ptr<engine::Engine> engine;
  DeadlockReport report;
  bool deadlocked = false;
};

std::unique_ptr<Diagnosed> Diagnose(const std::string& path, engine::Policy policy,
                                    std::vector<std::pair<std::string, int64_t>> defines = {}) {
  auto program = ir::ParseFile(path);
  EXPECT_TRUE(program.ok()) << program.status().ToString();
  if (!program.ok()) return nullptr;
  auto d = std::make_unique<Diagnosed>();
  d->program = std::move(program).value();
  auto params = ir::BindParams(d->program, defines);
  EXPECT_TRUE(params.ok());
  if (!params.ok()) return nullptr;
  d->params = *params;
  engine::EngineOptions o;
  o.policy = policy;
  auto e = engine::Engine::Create(d->program, d->params, o);
  EXPECT_TRUE(e.ok());
  if (!e.ok()) return nullptr;
  d->engine = std::make_unique<engine::Engine>(std::move(e).value());
  const engine::RunResult r = d->engine->Run();
  d->deadlocked = r.outcome == engine::Outcome::kDeadlock;
  if (d->deadlocked) {
    d->report = DiagnoseDeadlockWithRepair(d->program, *d->engine, r, d->params);
  }
  return d;
}

struct Case {
  const char* file;
  engine::Policy policy;
  DeadlockCause cause;
  int line;             // the statement the change is made to
  const char* change;   // DeadlockCulprit::change, word for word
  const char* kind;     // DeadlockCulprit::change_kind
  const char* barrier;  // the culprit's barrier array
};

class RepairCase : public ::testing::TestWithParam<Case> {};

TEST_P(RepairCase, ReportsTheStatementTheCauseAndTheChange) {
  const Case& c = GetParam();
  auto d = Diagnose(c.file, c.policy);
  ASSERT_NE(d, nullptr);
  ASSERT_TRUE(d->deadlocked) << c.file;
  const DeadlockCulprit& k = d->report.culprit;
  ASSERT_TRUE(k.found) << d->report.summary;
  EXPECT_EQ(DeadlockCauseName(k.cause), std::string(DeadlockCauseName(c.cause)))
      << d->report.summary;
  EXPECT_EQ(k.where.line, c.line) << d->report.summary;
  EXPECT_EQ(k.change, c.change);
  EXPECT_EQ(k.change_kind, c.kind);
  EXPECT_EQ(d->program.barriers[k.barrier].name, c.barrier);
  // The headline says where and what to change.
  EXPECT_THAT(d->report.summary, HasSubstr(DeadlockCauseName(c.cause)));
  EXPECT_THAT(d->report.summary, HasSubstr(":" + std::to_string(c.line) + ":"));
  EXPECT_THAT(d->report.summary, HasSubstr(c.change));
  EXPECT_THAT(FormatDeadlockReport(d->report, d->program, *d->engine, ""), HasSubstr(c.change));
}

constexpr auto kEager = engine::Policy::kEager;
constexpr auto kLazy = engine::Policy::kLazy;
constexpr auto kRoundRobin = engine::Policy::kRoundRobin;

INSTANTIATE_TEST_SUITE_P(
    Culprits, RepairCase,
    ::testing::Values(
        // The empty barrier's count without the multicast factor: the blocked waits look as if
        // a parity skipped a phase; the count is the culprit (item 7 of issue 34).
        Case{"pipelines/tma_async_gemm/bad_empty_count_no_multicast.pipe", kEager,
             DeadlockCause::kCountTooLow, 46, "set the init count of empty to 4", "count",
             "empty"},
        Case{"pipelines/tma_async_gemm/bad_empty_count_no_multicast.pipe", kRoundRobin,
             DeadlockCause::kCountTooLow, 46, "set the init count of empty to 4", "count",
             "empty"},
        // FA3's producer waiting on barrier_O with work_idx % 2 (flash-attention #1317): the
        // producer's own wait, not a consumer's wait on a K stage (item 8).
        Case{"pipelines/fa3_forward/bad_barrier_o_parity.pipe", kEager,
             DeadlockCause::kWrongInitialPhase, 77,
             "wait with parity (t & 1) ^ 1 instead of t & 1", "parity", "bar_o"},
        // A count too high: set to the one release that comes.
        Case{"tests/verifier/testdata/culprit/empty_count_too_high.pipe", kEager,
             DeadlockCause::kCountTooHigh, 6, "set the init count of empty to 1", "count",
             "empty"},
        Case{"tests/verifier/testdata/culprit/empty_count_too_high.pipe", kLazy,
             DeadlockCause::kCountTooHigh, 6, "set the init count of empty to 1", "count",
             "empty"},
        // Only CTA 1's init is wrong: the init in CTA 1's branch, not the wait.
        Case{"tests/verifier/testdata/culprit/peer_barrier_count.pipe", kEager,
             DeadlockCause::kCountTooHigh, 10, "set the init count of full to 1", "count",
             "full"},
        // A wrong expect_tx byte count, too high and too low: the expect_tx statement.
        Case{"tests/verifier/testdata/culprit/multicast_expect_one_box_over.pipe", kEager,
             DeadlockCause::kTxOverExpected, 12, "set the expect_tx bytes to 8192", "expect_tx",
             "full"},
        Case{"tests/verifier/testdata/culprit/expect_tx_too_small.pipe", kEager,
             DeadlockCause::kTxOverDelivered, 11, "set the expect_tx bytes to 4096", "expect_tx",
             "full"},
        Case{"pipelines/single_tma_load/bad_count1_expect_f32_bytes.pipe", kLazy,
             DeadlockCause::kTxOverExpected, 29, "set the expect_tx bytes to 8192", "expect_tx",
             "full"},
        // A wrong initial phase: the producer's first wait on a buffer-free barrier.
        Case{"pipelines/tma_async_gemm/bad_producer_start_phase.pipe", kEager,
             DeadlockCause::kWrongInitialPhase, 60,
             "wait with parity ((k / STAGES) & 1) ^ 1 instead of (k / STAGES) & 1", "parity",
             "empty"},
        // A parity from the wrong loop index: derived from the ring index the wait uses.
        Case{"tests/verifier/testdata/culprit/ring_parity_loop_index.pipe", kLazy,
             DeadlockCause::kWaitSkipsPhase, 27, "wait with parity (k / 3) & 1 instead of k & 1",
             "parity", "full"},
        Case{"pipelines/tma_async_gemm/bad_consumer_loop_index_parity.pipe", kLazy,
             DeadlockCause::kWaitSkipsPhase, 86,
             "wait with parity (k / STAGES) & 1 instead of k & 1", "parity", "full"},
        // The consumer's start phase: its wait that passed at once, although flipping the
        // producer's blocked wait instead also completes every run with no finding (the
        // consumers would then read stages nothing wrote yet: no fix).
        Case{"pipelines/pipeline_async/bad_consumer_phase.pipe", kEager,
             DeadlockCause::kParityPassedAtOnce, 52,
             "wait with parity (k / STAGES) & 1 instead of ((k / STAGES) & 1) ^ 1", "parity",
             "full"}),
    [](const auto& info) { return "case" + std::to_string(info.index); });

// No single change of a wait, count or expect_tx fixes these: the heuristic diagnosis stands
// and no change is suggested.
TEST(CulpritTest, WithoutAFixingChangeTheHeuristicStands) {
  const struct {
    const char* file;
    DeadlockCause cause;
  } kCases[] = {
      {"tests/verifier/testdata/culprit/release_into_wrong_cta.pipe", DeadlockCause::kNoSignaller},
      {"tests/verifier/testdata/culprit/missing_release_on_one_path.pipe",
       DeadlockCause::kMissedSignal},
      {"tests/verifier/testdata/culprit/named_barrier_count.pipe", DeadlockCause::kNotMbarrier},
  };
  for (const auto& c : kCases) {
    auto d = Diagnose(c.file, kEager);
    ASSERT_NE(d, nullptr);
    ASSERT_TRUE(d->deadlocked) << c.file;
    EXPECT_TRUE(d->report.culprit.change.empty()) << c.file << ": " << d->report.summary;
    const DeadlockCause got = d->report.culprit.found
                                  ? d->report.culprit.cause
                                  : d->report.blocked[d->report.primary].cause;
    EXPECT_EQ(DeadlockCauseName(got), std::string(DeadlockCauseName(c.cause))) << c.file;
  }
}

// The search is bounded: with no time for re-runs the report is the heuristic one.
TEST(CulpritTest, NoBudgetLeavesTheHeuristicReport) {
  auto d = Diagnose("pipelines/tma_async_gemm/bad_empty_count_no_multicast.pipe", kEager);
  ASSERT_NE(d, nullptr);
  ASSERT_TRUE(d->deadlocked);
  DeadlockReport heuristic =
      DiagnoseDeadlock(d->program, *d->engine, d->engine->result(), nullptr, &d->params);
  const std::string summary = heuristic.summary;
  RepairOptions o;
  o.options = d->engine->options();
  o.budget_s = 0;
  EXPECT_FALSE(FindCulpritByRepair(d->program, d->params, *d->engine, o, &heuristic));
  EXPECT_EQ(heuristic.summary, summary);
  // The old diagnosis: a wait that "skipped a phase", the advice this mechanism corrects.
  EXPECT_THAT(summary, HasSubstr("wait-skips-a-phase"));
}

// explore's counterexample is re-run along its own order: the same culprit and change.
TEST(CulpritTest, ExploreCounterexampleGetsTheSameChange) {
  auto program = ir::ParseFile("tests/verifier/testdata/culprit/empty_count_too_high.pipe");
  ASSERT_TRUE(program.ok());
  auto params = ir::BindParams(*program, {});
  ASSERT_TRUE(params.ok());
  ExploreOptions o;
  o.max_states = 100'000;
  o.shorten_budget_s = 0;
  const ExploreResult r = Explore(*program, *params, o);
  ASSERT_EQ(r.verdict, ExploreVerdict::kDeadlock);
  auto end = Replay(*program, *params, r.counterexample);
  ASSERT_TRUE(end.ok());
  const DeadlockReport report =
      DiagnoseDeadlockWithRepair(*program, *end, end->result(), *params, &r.counterexample);
  ASSERT_TRUE(report.culprit.found) << report.summary;
  EXPECT_EQ(report.culprit.cause, DeadlockCause::kCountTooHigh);
  EXPECT_EQ(report.culprit.where.line, 6);
  EXPECT_EQ(report.culprit.change, "set the init count of empty to 1");
}

// The API's P2001 finding carries the culprit's line, its cause and the suggested change (the
// JSON and SARIF outputs print them), for check and for explore.
TEST(CulpritTest, FindingCarriesTheSuggestedChange) {
  auto schedule =
      api::Schedule::FromFile("tests/verifier/testdata/culprit/multicast_expect_one_box_over.pipe");
  ASSERT_TRUE(schedule.ok());
  auto checked = api::Check(*schedule, api::CheckOptions{});
  ASSERT_TRUE(checked.ok());
  api::ExploreOptions eo;
  eo.max_states = 100'000;
  auto explored = api::Explore(*schedule, eo);
  ASSERT_TRUE(explored.ok());
  for (const std::vector<api::Finding>* findings : {&checked->findings, &explored->findings}) {
    const api::Finding* f = nullptr;
    for (const api::Finding& x : *findings) {
      if (x.code == "P2001") f = &x;
    }
    ASSERT_NE(f, nullptr);
    EXPECT_EQ(f->location.line, 12);
    EXPECT_EQ(f->culprit_cause, "tx-over-expected");
    EXPECT_EQ(f->suggested_change, "set the expect_tx bytes to 8192");
    EXPECT_THAT(f->message, HasSubstr("set the expect_tx bytes to 8192"));
  }
}

// A count or parity mistake that shows as a model violation first (an over-arrival, M1005)
// gets the same search: the finding names the change, for check and explore; a violation no
// such change fixes (a missing __syncthreads after the init, M1001) gets none.
TEST(CulpritTest, ViolationsGetTheChangeThatFixesThem) {
  const std::string file = "pipelines/tma_async_gemm/bad_empty_count_no_multicast.pipe";
  auto schedule = api::Schedule::FromFile(file);
  ASSERT_TRUE(schedule.ok());
  api::CheckOptions co;
  co.policy = api::Policy::kLazy;
  auto checked = api::Check(*schedule, co);
  ASSERT_TRUE(checked.ok());
  api::ExploreOptions eo;
  eo.max_states = 100'000;
  auto explored = api::Explore(*schedule, eo);
  ASSERT_TRUE(explored.ok());
  for (const std::vector<api::Finding>* findings : {&checked->findings, &explored->findings}) {
    const api::Finding* f = nullptr;
    for (const api::Finding& x : *findings) {
      if (x.code == "M1005") f = &x;
    }
    ASSERT_NE(f, nullptr);
    EXPECT_EQ(f->culprit_cause, "count-too-low");
    EXPECT_EQ(f->suggested_change, "set the init count of empty to 4");
    EXPECT_THAT(f->message, HasSubstr("bad_empty_count_no_multicast.pipe:46:"));
  }
  auto other =
      api::Schedule::FromFile("pipelines/single_tma_load/bad_countN_no_syncthreads.pipe");
  ASSERT_TRUE(other.ok());
  auto no_fix = api::Check(*other);
  ASSERT_TRUE(no_fix.ok());
  ASSERT_FALSE(no_fix->findings.empty());
  for (const api::Finding& f : no_fix->findings) {
    EXPECT_TRUE(f.suggested_change.empty()) << f.code << ": " << f.suggested_change;
  }
}

// A parity change that only makes the wait vacuous is no fix: a wait nobody signals, flipped,
// would pass at once on the fresh barrier (the phase before phase 0) in a role that writes no
// buffer; a second wait of a phase its agent already observed, flipped, would re-observe it.
// Both runs then complete, yet nothing waits for the missing phase: no change is suggested and
// the heuristic cause stands.
TEST(CulpritTest, AVacuousWaitIsNoFix) {
  const struct {
    const char* text;
    const char* cause;
  } kCases[] = {
      {"barrier b[1] count 1\n"
       "role w {\n"
       "  init b[0]\n"
       "  wait b[0] parity 0\n"
       "}\n",
       "no-signaller"},
      {"barrier b[1] count 1\n"
       "role w threads 32 {\n"
       "  init b[0]\n"
       "  bar.sync 1, 64\n"
       "  wait b[0] parity 0\n"
       "  wait b[0] parity 1\n"
       "}\n"
       "role p threads 32 {\n"
       "  bar.sync 1, 64\n"
       "  arrive b[0]\n"
       "}\n",
       "signaller-exited"},
  };
  for (const auto& c : kCases) {
    auto schedule = api::Schedule::FromString(c.text, "vacuous.pipe");
    ASSERT_TRUE(schedule.ok()) << c.text;
    auto checked = api::Check(*schedule);
    ASSERT_TRUE(checked.ok());
    ASSERT_FALSE(checked->findings.empty());
    const api::Finding& f = checked->findings.front();
    EXPECT_EQ(f.code, "P2001");
    EXPECT_TRUE(f.suggested_change.empty()) << f.suggested_change;
    EXPECT_THAT(f.message, HasSubstr(c.cause)) << f.message;
  }
}

}  // namespace
}  // namespace parity::verifier
