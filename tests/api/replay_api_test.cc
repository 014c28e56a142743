// Trace and Replay of the public header (parity/parity.h): a run written as a trace file, read
// back and replayed on the schedule's model, as `parity run` and `parity replay` do.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "parity/parity.h"
#include "tests/api/api_load.h"

namespace {

using ::testing::HasSubstr;
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

}  // namespace
