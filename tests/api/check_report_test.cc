// What a Check run holds besides its findings, through the public header only (parity/parity.h):
// the deadlock's and violation's structure, the file's own expectations, the narration, the
// event cap, and the texts, pictures and trace files `parity check`, `explain` and `run` print
// from it (the command line is a client of these, as a kernel project's test would be).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "parity/parity.h"
#include "tests/api/api_load.h"

namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;
using parity::api::Outcome;
using parity::api::Schedule;

// kLoad with FACTOR = 2 waits for bytes that never come: a deadlock at the wait (line 14). Its
// expect line (line 17) matches the eager run of FACTOR = 2.
const std::string kDeadlocking =
    std::string(parity::testing::kLoad) + "# expect: P2001 -D FACTOR=2\n";

Schedule Deadlocking(const std::string& text = kDeadlocking) {
  auto schedule = Schedule::FromString(text, "api_load.pipe");
  EXPECT_TRUE(schedule.ok()) << schedule.error().ToString();
  Schedule out = *schedule;
  EXPECT_TRUE(out.SetParam("FACTOR", 2).ok());
  return out;
}

size_t Lines(const std::string& text) {
  size_t n = 0;
  for (char c : text) n += c == '\n';
  return n;
}

TEST(CheckReport, DeadlockCarriesItsDiagnosisAsDataAndText) {
  auto report = parity::api::Check(Deadlocking());
  ASSERT_TRUE(report.ok()) << report.error().ToString();
  ASSERT_EQ(report->outcome, Outcome::kDeadlock);
  EXPECT_EQ(report->policy, "eager");
  EXPECT_EQ(report->agents, 1u);
  EXPECT_EQ(report->ctas, 1u);
  EXPECT_GE(report->steps, 4u);
  EXPECT_FALSE(report->violation.has_value());
  ASSERT_TRUE(report->deadlock.has_value());
  const parity::api::Deadlock& d = *report->deadlock;
  EXPECT_FALSE(d.summary.empty());
  ASSERT_EQ(d.blocked.size(), 1u);
  const parity::api::BlockedAgent& b = d.blocked[0];
  EXPECT_EQ(b.agent, "CTA 0 loader[0]");
  EXPECT_EQ(b.location.line, 14);
  ASSERT_TRUE(b.on_mbarrier);
  EXPECT_EQ(b.barrier, "full");
  EXPECT_EQ(b.parity, 0u);
  EXPECT_EQ(b.phase, 0u);
  EXPECT_EQ(b.tx, 64 * 64 * 2);  // the bytes asked for beyond those delivered
  EXPECT_FALSE(b.cause.empty());
  // The culprit a re-run proved: the expect_tx of line 12.
  ASSERT_TRUE(d.culprit.found);
  EXPECT_EQ(d.culprit.location.line, 12);
  EXPECT_EQ(d.culprit.barrier, "full");
  EXPECT_EQ(d.culprit.suggested_change, "set the expect_tx bytes to 8192");
  EXPECT_EQ(d.culprit.changes, "expect_tx");

  // The file's own expect line, matched against this run.
  ASSERT_EQ(report->expected_by_file.size(), 1u);
  EXPECT_EQ(report->expected_by_file[0].line, 17);
  EXPECT_EQ(report->expected_by_file[0].difference, "");
  EXPECT_TRUE(report->expectations_error.empty());

  // The texts and pictures of the run.
  const std::string diagnosis = parity::api::FormatDiagnosis(*report, 1);
  EXPECT_THAT(diagnosis, HasSubstr("full[0]"));
  EXPECT_THAT(diagnosis, HasSubstr(d.summary));
  EXPECT_THAT(parity::api::WaitForGraphDot(*report), StartsWith("digraph"));
  // The last two events, numbered from the start, after a line counting the earlier ones.
  const std::string last = parity::api::FormatBehaviour(*report, 2);
  EXPECT_EQ(Lines(last), 3u) << last;
  EXPECT_THAT(last, HasSubstr(std::to_string(report->events_count) + ". CTA 0 loader[0]"));
  EXPECT_EQ(Lines(parity::api::FormatBehaviour(*report, 0)), report->events_count);
  const std::string html = parity::api::PhasePictureHtml(*report, "TITLE-X", "OUTCOME-Y");
  EXPECT_THAT(html, HasSubstr("<svg"));
  EXPECT_THAT(html, HasSubstr("TITLE-X"));
  EXPECT_THAT(html, HasSubstr("OUTCOME-Y"));
}

TEST(CheckReport, AnExpectLineTheRunDoesNotMatchSaysWhatDiffers) {
  std::string text = kDeadlocking;
  text.replace(text.find("# expect: P2001"), 15, "# expect: M1005");
  Schedule schedule = Deadlocking(text);
  auto report = parity::api::Check(schedule);
  ASSERT_TRUE(report.ok());
  ASSERT_EQ(report->expected_by_file.size(), 1u);
  EXPECT_FALSE(report->expected_by_file[0].difference.empty());
  // An expect line of other params does not apply to this run.
  ASSERT_TRUE(schedule.SetParam("FACTOR", 1).ok());
  report = parity::api::Check(schedule);
  ASSERT_TRUE(report.ok());
  EXPECT_EQ(report->outcome, Outcome::kCompleted);
  EXPECT_TRUE(report->expected_by_file.empty());
  EXPECT_FALSE(report->deadlock.has_value());
  EXPECT_EQ(parity::api::FormatDiagnosis(*report, 1), "");
  EXPECT_EQ(parity::api::WaitForGraphDot(*report), "");
}

TEST(CheckReport, NarrationHasAnEntryPerEvent) {
  const Schedule schedule = Deadlocking();
  parity::api::CheckOptions options;
  options.narrate = true;
  auto report = parity::api::Check(schedule, options);
  ASSERT_TRUE(report.ok());
  ASSERT_EQ(report->narration.size(), report->events_count);
  EXPECT_THAT(report->narration.front(), HasSubstr("init"));
  // Without the option there is none.
  EXPECT_TRUE(parity::api::Check(schedule)->narration.empty());
}

TEST(CheckReport, EventCapStopsTheRun) {
  const Schedule schedule = Deadlocking();
  parity::api::CheckOptions options;
  options.max_events = 3;
  auto report = parity::api::Check(schedule, options);
  ASSERT_TRUE(report.ok());
  EXPECT_EQ(report->outcome, Outcome::kStepLimit);
  EXPECT_EQ(report->events_count, 3u);
}

TEST(CheckReport, ViolationIsTheEnginesAccountWithoutTheDiagnosis) {
  auto schedule = Schedule::FromFile("pipelines/cuda_pipeline/bad_arrive_on_noinc.pipe");
  ASSERT_TRUE(schedule.ok()) << schedule.error().ToString();
  auto report = parity::api::Check(*schedule);
  ASSERT_TRUE(report.ok()) << report.error().ToString();
  ASSERT_EQ(report->outcome, Outcome::kViolation);
  ASSERT_TRUE(report->violation.has_value());
  const parity::api::Violation& v = *report->violation;
  EXPECT_EQ(v.code, "M1005");
  EXPECT_EQ(v.agent, "CTA 0 producer[0]");
  EXPECT_EQ(v.location.line, 43);
  EXPECT_FALSE(v.from_async);
  EXPECT_EQ(v.message, "filled[0] of CTA 0: arrive of count 32 on a barrier with 31 pending "
                       "arrivals");
  // The finding words the same violation, with the culprit's account appended when one is found.
  ASSERT_FALSE(report->findings.empty());
  EXPECT_THAT(report->findings[0].message, StartsWith(v.message));
  EXPECT_EQ(report->violation_culprit.found, !report->findings[0].culprit_cause.empty());
}

TEST(CheckReport, WritesTheRunAsATraceFile) {
  const Schedule schedule = Deadlocking();
  auto report = parity::api::Check(schedule);
  ASSERT_TRUE(report.ok());
  const char* tmp = std::getenv("TEST_TMPDIR");
  const std::string path = std::string(tmp ? tmp : "/tmp") + "/check_report_test.trace";
  auto written = parity::api::WriteTrace(*report, path);
  ASSERT_TRUE(written.ok()) << written.error().ToString();
  EXPECT_EQ(*written, report->events_count);
  std::ifstream in(path, std::ios::binary);
  std::stringstream bytes;
  bytes << in.rdbuf();
  EXPECT_GT(bytes.str().size(), 32 * report->events_count);  // 32 bytes an event, and a header
  const std::string dump = parity::api::DumpTrace(*report);
  EXPECT_THAT(dump, HasSubstr("api_load"));
  EXPECT_GE(Lines(dump), report->events_count);
  // A path that cannot be written is an Error naming it.
  auto bad = parity::api::WriteTrace(*report, "/no/such/dir/x.trace");
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.error().ToString(), HasSubstr("/no/such/dir/x.trace"));
}

}  // namespace
