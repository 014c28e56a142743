// How a kernel project checks its pipeline from its own unit tests: this file includes nothing
// of Parity but the public header parity/parity.h and depends on the one target //parity.
#include "parity/parity.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "tests/api/api_load.h"

namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using parity::api::Schedule;

using parity::testing::kLoad;

TEST(ParityApi, ParsesFromStringAndChecksACorrectLoad) {
  auto schedule = Schedule::FromString(kLoad, "api_load.pipe");
  ASSERT_TRUE(schedule.ok()) << schedule.error().ToString();
  EXPECT_EQ(schedule->name(), "api_load");
  EXPECT_EQ(schedule->hash().size(), 16u);
  auto report = parity::api::Check(*schedule);
  ASSERT_TRUE(report.ok()) << report.error().ToString();
  EXPECT_EQ(report->outcome, parity::api::Outcome::kCompleted);
  EXPECT_FALSE(report->has_errors());
  EXPECT_TRUE(report->findings.empty());
  ASSERT_FALSE(report->events.empty());
  EXPECT_EQ(report->events.size(), report->events_count);
  // The arrive.expect_tx is line 12 of the text.
  bool found = false;
  for (const auto& e : report->events) {
    if (e.text.find("expect_tx") != std::string::npos) {
      found = true;
      EXPECT_EQ(e.location.file, "api_load.pipe");
      EXPECT_EQ(e.location.line, 12);
      EXPECT_EQ(e.agent, "CTA 0 loader[0]");
    }
  }
  EXPECT_TRUE(found);
}

TEST(ParityApi, OverriddenParamMakesADeadlockWithLocatedFindings) {
  auto schedule = Schedule::FromString(kLoad, "api_load.pipe");
  ASSERT_TRUE(schedule.ok());
  const Schedule correct = *schedule;
  ASSERT_TRUE(schedule->SetParam("FACTOR", 2).ok());
  // Derived defaults follow the override; the copy taken before keeps its values.
  EXPECT_EQ(schedule->params()[0].value, 2);
  EXPECT_EQ(correct.params()[0].value, 1);

  auto report = parity::api::Check(*schedule);
  ASSERT_TRUE(report.ok()) << report.error().ToString();
  EXPECT_EQ(report->outcome, parity::api::Outcome::kDeadlock);
  EXPECT_TRUE(report->has_errors());
  ASSERT_FALSE(report->findings.empty());
  const parity::api::Finding& f = report->findings[0];
  EXPECT_EQ(f.code, "P2001");
  EXPECT_EQ(f.slug, "deadlock");
  EXPECT_EQ(f.severity, parity::api::Severity::kError);
  EXPECT_EQ(f.agent, "CTA 0 loader[0]");
  // The culprit is the expect_tx whose bytes no copy delivers (the change that repairs the run),
  // not the wait that blocks; the blocked wait is among the related places.
  EXPECT_EQ(f.location.line, 12);
  EXPECT_EQ(f.location.column, 3);
  ASSERT_FALSE(f.related.empty());
  bool wait_related = false;
  for (const auto& r : f.related) {
    wait_related |= r.location.line == 14 && r.message.find("full[0] of CTA 0") != std::string::npos;
  }
  EXPECT_TRUE(wait_related);
  // The change a re-run proved, and its cause.
  EXPECT_EQ(f.suggested_change, "set the expect_tx bytes to 8192");
  EXPECT_EQ(f.culprit_cause, "tx-over-expected");
  EXPECT_THAT(f.ToString(), HasSubstr("api_load.pipe:12:3: error[P2001]"));
  // The code and title are fields of their own, not repeated in the message.
  EXPECT_EQ(f.message.find("P2001"), std::string::npos) << f.message;
  EXPECT_THAT(f.ToString(), Not(HasSubstr("P2001 deadlock"))) << f.ToString();
  EXPECT_THAT(f.message, HasSubstr("blocked forever"));

  EXPECT_EQ(parity::api::Check(correct)->outcome, parity::api::Outcome::kCompleted);
}

// A Schedule that was moved from is still the same schedule (a test fixture may move one into a
// container and keep using its own name): no member may read a program that is gone.
TEST(ParityApi, MovedFromScheduleStaysUsable) {
  auto schedule = Schedule::FromString(kLoad, "api_load.pipe");
  ASSERT_TRUE(schedule.ok());
  Schedule source = *schedule;
  Schedule moved = std::move(source);
  Schedule assigned = *schedule;
  assigned = std::move(moved);
  for (Schedule* s : {&source, &moved, &assigned}) {
    EXPECT_EQ(s->name(), "api_load");
    EXPECT_EQ(s->file(), "api_load.pipe");
    ASSERT_EQ(s->params().size(), 2u);
    auto report = parity::api::Check(*s);
    ASSERT_TRUE(report.ok()) << report.error().ToString();
    EXPECT_EQ(report->outcome, parity::api::Outcome::kCompleted);
  }
  // Overriding one leaves the others as they were.
  ASSERT_TRUE(source.SetParam("FACTOR", 2).ok());
  EXPECT_EQ(parity::api::Check(source)->outcome, parity::api::Outcome::kDeadlock);
  EXPECT_EQ(parity::api::Check(assigned)->outcome, parity::api::Outcome::kCompleted);
}

TEST(ParityApi, BadInputIsAnErrorNamingFileLineAndRule) {
  auto bad = Schedule::FromString(
      "cluster 1x1\nbarrier full[1] count 1\nrole p {\n  arrive full[0\n}\n", "bad.pipe");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().rule, "parse");
  EXPECT_EQ(bad.error().location.file, "bad.pipe");
  EXPECT_EQ(bad.error().location.line, 5);
  EXPECT_THAT(bad.error().ToString(), HasSubstr("bad.pipe:5:1: error[parse]"));

  auto schedule = Schedule::FromString(kLoad, "api_load.pipe");
  ASSERT_TRUE(schedule.ok());
  auto set = schedule->SetParam("NOPE", 3);
  ASSERT_FALSE(set.ok());
  EXPECT_EQ(set.error().rule, "param.unknown");
  EXPECT_THAT(set.error().message, HasSubstr("FACTOR"));

  auto missing = Schedule::FromFile("no/such/file.pipe");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().rule, "io");
  EXPECT_EQ(missing.error().location.file, "no/such/file.pipe");

  // Not a file: refused, not read (a directory reads as nothing, /dev/zero never ends).
  auto dir = Schedule::FromFile("pipelines");
  ASSERT_FALSE(dir.ok());
  EXPECT_THAT(dir.error().message, HasSubstr("is a directory"));
  auto device = Schedule::FromFile("/dev/zero");
  ASSERT_FALSE(device.ok());
  EXPECT_THAT(device.error().message, HasSubstr("not a regular file"));
}

TEST(ParityApi, ExploreVerifiesTheCorrectLoad) {
  auto schedule = Schedule::FromFile("pipelines/single_tma_load/count1.pipe");
  ASSERT_TRUE(schedule.ok()) << schedule.error().ToString();
  auto report = parity::api::Explore(*schedule);
  ASSERT_TRUE(report.ok()) << report.error().ToString();
  EXPECT_EQ(report->verdict, parity::api::Verdict::kVerified);
  EXPECT_GT(report->states, 1u);
  EXPECT_TRUE(report->findings.empty());
  EXPECT_TRUE(report->counterexample.empty());
}

TEST(ParityApi, ExploreReturnsTheCounterexampleStepsOfADeadlock) {
  auto schedule = Schedule::FromFile("sim/examples/explore/poll_instead_of_wait.pipe");
  ASSERT_TRUE(schedule.ok()) << schedule.error().ToString();
  auto report = parity::api::Explore(*schedule, {.max_states = 1'000'000});
  ASSERT_TRUE(report.ok()) << report.error().ToString();
  EXPECT_EQ(report->verdict, parity::api::Verdict::kDeadlock);
  ASSERT_FALSE(report->counterexample.empty());
  size_t events = 0;
  for (const auto& step : report->counterexample) {
    EXPECT_FALSE(step.label.empty());
    EXPECT_FALSE(step.agent.empty());
    // A step's label says what it did (its first event), not only who stepped.
    if (!step.events.empty()) {
      EXPECT_EQ(step.label.rfind(step.events.front().text, 0), 0u) << step.label;
    }
    EXPECT_EQ(step.label.find("takes a step"), std::string::npos) << step.label;
    events += step.events.size();
  }
  EXPECT_GT(events, 0u);
  ASSERT_EQ(report->findings.size(), 1u);
  const auto& f = report->findings[0];
  EXPECT_EQ(f.code, "P2001");
  EXPECT_EQ(f.location.file, "sim/examples/explore/poll_instead_of_wait.pipe");
  EXPECT_GT(f.location.line, 0);
  EXPECT_FALSE(f.related.empty());
  for (const auto& r : f.related) EXPECT_GT(r.location.line, 0) << r.agent;
}

TEST(ParityApi, RuleFindingsNameBothAgentsOfARace) {
  auto schedule = Schedule::FromFile("sim/examples/rules/use_without_wait.pipe");
  ASSERT_TRUE(schedule.ok()) << schedule.error().ToString();
  auto report = parity::api::Check(*schedule);
  ASSERT_TRUE(report.ok()) << report.error().ToString();
  auto race = std::find_if(report->findings.begin(), report->findings.end(),
                           [](const parity::api::Finding& f) { return f.code == "P2005"; });
  ASSERT_NE(race, report->findings.end());
  EXPECT_TRUE(report->has_errors());
  ASSERT_EQ(race->related.size(), 2u);
  EXPECT_NE(race->related[0].agent, race->related[1].agent);
  for (const auto& r : race->related) EXPECT_GT(r.location.line, 0) << r.agent;
}

TEST(ParityApi, RuleTableCarriesCitations) {
  auto rules = parity::api::Rules();
  ASSERT_GT(rules.size(), 30u);
  auto m1005 = std::find_if(rules.begin(), rules.end(),
                            [](const parity::api::Rule& r) { return r.code == "M1005"; });
  ASSERT_NE(m1005, rules.end());
  EXPECT_EQ(m1005->slug, "mbarrier-over-arrival");
  EXPECT_THAT(m1005->citation, HasSubstr("PTX ISA ("));
  EXPECT_EQ(m1005->severity, parity::api::Severity::kError);
}

}  // namespace
