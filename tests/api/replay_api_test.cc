// Trace, Replay and Compare of the public header (parity/parity.h): a run written as a trace
// file, read back, replayed on the schedule's model and compared with another, as `parity run`,
// `parity replay` and `parity compare` do.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "parity/parity.h"
#include "tests/api/api_load.h"

namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;
using parity::api::Schedule;

std::string TmpPath(const std::string& name) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  return std::string(tmp ? tmp : "/tmp") + "/" + name;
}

// Runs kLoad (FACTOR = 1: it completes) and writes its trace; returns the trace's path.
std::string WriteLoadTrace(const Schedule& schedule, uint64_t* events) {
  auto report = parity::api::Check(schedule);
  EXPECT_TRUE(report.ok());
  const std::string path = TmpPath("replay_api_test.trace");
  auto written = parity::api::WriteTrace(*report, path);
  EXPECT_TRUE(written.ok()) << written.error().ToString();
  *events = report->events_count;
  return path;
}

TEST(ReplayApi, ARunReplaysOnItsOwnSchedule) {
  auto schedule = Schedule::FromString(parity::testing::kLoad, "api_load.pipe");
  ASSERT_TRUE(schedule.ok()) << schedule.error().ToString();
  uint64_t events = 0;
  auto trace = parity::api::Trace::FromFile(WriteLoadTrace(*schedule, &events));
  ASSERT_TRUE(trace.ok()) << trace.error().ToString();
  EXPECT_EQ(trace->source(), "sim");
  EXPECT_EQ(trace->schedule(), "api_load");
  EXPECT_EQ(trace->policy(), "eager");
  EXPECT_EQ(trace->events(), events);

  auto replay = parity::api::Replay(*schedule, *trace);
  ASSERT_TRUE(replay.ok()) << replay.error().ToString();
  EXPECT_FALSE(replay->diverged);
  EXPECT_EQ(replay->replayed, events);
  EXPECT_EQ(replay->model_outcome, "completed");
  EXPECT_THAT(parity::api::FormatReplay(*replay),
              StartsWith("OK: all " + std::to_string(events)));
  // The picture needs the model's run, kept on request.
  EXPECT_EQ(parity::api::PhasePictureHtml(*replay, "T"), "");
  parity::api::ReplayOptions options;
  options.keep_model = true;
  replay = parity::api::Replay(*schedule, *trace, options);
  ASSERT_TRUE(replay.ok());
  const std::string html = parity::api::PhasePictureHtml(*replay, "REPLAY-TITLE");
  EXPECT_THAT(html, HasSubstr("<svg"));
  EXPECT_THAT(html, HasSubstr("REPLAY-TITLE"));
}

TEST(ReplayApi, OverridesThatDifferFromTheTracesParamsAreAnError) {
  auto schedule = Schedule::FromString(parity::testing::kLoad, "api_load.pipe");
  ASSERT_TRUE(schedule.ok());
  uint64_t events = 0;
  auto trace = parity::api::Trace::FromFile(WriteLoadTrace(*schedule, &events));
  ASSERT_TRUE(trace.ok());
  Schedule other = *schedule;
  ASSERT_TRUE(other.SetParam("FACTOR", 2).ok());
  auto replay = parity::api::Replay(other, *trace);
  ASSERT_FALSE(replay.ok());
  EXPECT_EQ(replay.error().rule, "replay.params");
  EXPECT_EQ(replay.error().location.file, trace->path());
  // The same value as recorded is no difference.
  Schedule same = *schedule;
  ASSERT_TRUE(same.SetParam("FACTOR", 1).ok());
  EXPECT_TRUE(parity::api::Replay(same, *trace).ok());
}

TEST(ReplayApi, ATraceOfAnotherScheduleOrNoFileIsAnError) {
  auto schedule = Schedule::FromString(parity::testing::kLoad, "api_load.pipe");
  ASSERT_TRUE(schedule.ok());
  uint64_t events = 0;
  auto trace = parity::api::Trace::FromFile(WriteLoadTrace(*schedule, &events));
  ASSERT_TRUE(trace.ok());
  std::string text = parity::testing::kLoad;
  text.replace(text.find("use tile[0]"), 11, "use tile[0]\n  use tile[0]");
  auto changed = Schedule::FromString(text, "changed.pipe");
  ASSERT_TRUE(changed.ok()) << changed.error().ToString();
  auto replay = parity::api::Replay(*changed, *trace);
  ASSERT_FALSE(replay.ok());
  EXPECT_EQ(replay.error().rule, "replay.hash-mismatch");

  auto missing = parity::api::Trace::FromFile(TmpPath("no_such.trace"));
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(missing.error().ToString(), HasSubstr("no_such.trace"));
}

TEST(CompareApi, TracesOfOneScheduleCompareAndOfTwoAreAnError) {
  auto schedule = Schedule::FromString(parity::testing::kLoad, "api_load.pipe");
  ASSERT_TRUE(schedule.ok());
  uint64_t events = 0;
  auto eager = parity::api::Trace::FromFile(WriteLoadTrace(*schedule, &events));
  ASSERT_TRUE(eager.ok());
  auto same = parity::api::Compare(*eager, *eager);
  ASSERT_TRUE(same.ok()) << same.error().ToString();
  EXPECT_TRUE(same->same());
  EXPECT_FALSE(same->compared.empty());
  EXPECT_THAT(parity::api::FormatCompare(*same), HasSubstr("SAME: "));

  std::string text = parity::testing::kLoad;
  text.replace(text.find("use tile[0]"), 11, "use tile[0]\n  use tile[0]");
  auto changed = Schedule::FromString(text, "changed.pipe");
  ASSERT_TRUE(changed.ok());
  auto report = parity::api::Check(*changed);
  ASSERT_TRUE(report.ok());
  const std::string other_path = TmpPath("replay_api_test_other.trace");
  ASSERT_TRUE(parity::api::WriteTrace(*report, other_path).ok());
  auto other = parity::api::Trace::FromFile(other_path);
  ASSERT_TRUE(other.ok());
  auto mismatch = parity::api::Compare(*eager, *other);
  ASSERT_FALSE(mismatch.ok());
  EXPECT_EQ(mismatch.error().rule, "compare.hash-mismatch");
  EXPECT_EQ(mismatch.error().location.file, other_path);
}

// ExportPerfetto: without a schedule the lanes are numbered (and a note says how to name them);
// with one they carry its names. A simulator trace needs no inference.
TEST(TraceExportApi, TheScheduleNamesTheLanes) {
  auto schedule = Schedule::FromString(parity::testing::kLoad, "api_load.pipe");
  ASSERT_TRUE(schedule.ok());
  uint64_t events = 0;
  auto trace = parity::api::Trace::FromFile(WriteLoadTrace(*schedule, &events));
  ASSERT_TRUE(trace.ok());
  auto bare = parity::api::ExportPerfetto(*trace, nullptr);
  ASSERT_TRUE(bare.ok()) << bare.error().ToString();
  EXPECT_THAT(bare->json, HasSubstr("traceEvents"));
  EXPECT_THAT(bare->json, Not(HasSubstr("loader[0]")));
  ASSERT_EQ(bare->notes.size(), 1u);
  EXPECT_THAT(bare->notes[0], HasSubstr("lanes are numbered"));
  auto named = parity::api::ExportPerfetto(*trace, &*schedule);
  ASSERT_TRUE(named.ok()) << named.error().ToString();
  EXPECT_THAT(named->json, HasSubstr("loader[0]"));
  EXPECT_THAT(named->json, HasSubstr("full[0]"));
  EXPECT_TRUE(named->notes.empty());
  // A schedule whose params the trace's header does not bind is an Error naming the trace.
  std::string text = parity::testing::kLoad;
  text.replace(text.find("param FACTOR = 1"), 16, "param FACTOR = 1\nparam EXTRA = 2");
  auto other = Schedule::FromString(text, "other.pipe");
  ASSERT_TRUE(other.ok()) << other.error().ToString();
  auto refused = parity::api::ExportPerfetto(*trace, &*other);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().location.file, trace->path());
}

// ReplayKernel wants a kernel's own trace and an imported schedule: a simulator trace of a
// hand-written schedule is an Error, not a divergence.
TEST(KernelReplayApi, AScheduleWithoutAKernelMapIsAnError) {
  auto schedule = Schedule::FromString(parity::testing::kLoad, "api_load.pipe");
  ASSERT_TRUE(schedule.ok());
  uint64_t events = 0;
  auto trace = parity::api::Trace::FromFile(WriteLoadTrace(*schedule, &events));
  ASSERT_TRUE(trace.ok());
  auto r = parity::api::ReplayKernel(*schedule, *trace);
  ASSERT_FALSE(r.ok());
  EXPECT_FALSE(r.error().rule.empty());
}

// SimulateLitmus and CompareLitmus: the model's outcomes of a schedule, written and parsed back
// in the histogram format, held against an H100 histogram of the same schedule that shows one
// of them (agree) or an outcome the model does not allow (FAIL).
TEST(LitmusApi, ObservedOutcomesAreHeldAgainstTheModels) {
  auto schedule = Schedule::FromString(parity::testing::kLoad, "api_load.pipe");
  ASSERT_TRUE(schedule.ok());
  auto sim = parity::api::SimulateLitmus(*schedule, "api_load");
  ASSERT_TRUE(sim.ok()) << sim.error().ToString();
  EXPECT_EQ(sim->name, "api_load");
  EXPECT_EQ(sim->source, "sim");
  EXPECT_EQ(sim->hash.size(), 16u);
  ASSERT_FALSE(sim->counts.empty());
  auto back = parity::api::LitmusHistogram::Parse(sim->ToText(), "api_load.sim.txt");
  ASSERT_TRUE(back.ok()) << back.error().ToString();
  EXPECT_EQ(back->counts, sim->counts);
  EXPECT_EQ(back->hash, sim->hash);

  parity::api::LitmusHistogram h100 = *sim;
  h100.source = "h100";
  h100.counts = {{sim->counts.begin()->first, 10}};
  h100.runs = 10;
  auto agree = parity::api::CompareLitmus(*sim, h100);
  ASSERT_TRUE(agree.ok()) << agree.error().ToString();
  EXPECT_EQ(agree->verdict, parity::api::LitmusVerdict::kAgree);
  EXPECT_STREQ(parity::api::LitmusVerdictName(agree->verdict), "agree");
  EXPECT_TRUE(agree->unexpected.empty());

  h100.counts = {{"not_an_outcome_of_the_model=1", 10}};
  auto fail = parity::api::CompareLitmus(*sim, h100);
  ASSERT_TRUE(fail.ok()) << fail.error().ToString();
  EXPECT_EQ(fail->verdict, parity::api::LitmusVerdict::kFail);
  EXPECT_EQ(fail->unexpected, std::vector<std::string>{"not_an_outcome_of_the_model=1"});

  h100.hash = "0123456789abcdef";
  auto other = parity::api::CompareLitmus(*sim, h100);
  ASSERT_FALSE(other.ok());
  EXPECT_EQ(other.error().rule, "litmus.hash");
}

}  // namespace
