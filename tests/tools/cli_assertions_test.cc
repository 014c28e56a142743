// User assertions from the command line (docs/language.md §7.6): a failed `assert` is P2033 at
// its line with its message, in text, JSON and SARIF alike, exit 1; `explore` finds one that
// only some interleavings fail and prints the path; an unsatisfied `exists` is P2034; a bad
// assertion is a parse error at file:line:col, exit 2.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "tests/tools/cli_runner.h"

namespace parity::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

std::string TempFile(const std::string& name, const std::string& text) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  std::string path = std::string(tmp ? tmp : "/tmp") + "/" + name;
  std::ofstream(path) << text;
  return path;
}

std::string Pipeline(const std::string& name) {
  return Runfile("pipelines/ws_gemm/" + name + ".pipe");
}

// The clean twin proves its properties; the known-bad one fails the alternation assertion.
TEST(CliAssertions, CheckReportsTheFailedAssertionInEveryFormat) {
  CliResult ok = RunParity({"check", Pipeline("pingpong_asserted")});
  EXPECT_EQ(ok.exit_code, 0) << ok.out << ok.err;

  const std::string bad = Pipeline("bad_pingpong_turn_twice");
  CliResult text = RunParity({"check", bad});
  EXPECT_EQ(text.exit_code, 1) << text.err;
  EXPECT_THAT(text.out, HasSubstr("P2033 a user assertion does not hold: assert "
                                  "pending(turns[0]) == TURNS - t -- the warpgroups' GEMMs "
                                  "alternate in tile order is false here (CTA 0)"));
  EXPECT_THAT(text.out, HasSubstr("bad_pingpong_turn_twice.pipe:67:5"));

  CliResult json = RunParity({"check", bad, "--format", "json"});
  EXPECT_EQ(json.exit_code, 1);
  const nlohmann::json j = nlohmann::json::parse(json.out);
  ASSERT_FALSE(j["findings"].empty());
  EXPECT_EQ(j["findings"][0]["code"], "P2033");
  EXPECT_EQ(j["findings"][0]["location"]["line"], 67);
  EXPECT_THAT(j["findings"][0]["message"].get<std::string>(), HasSubstr("alternate in tile order"));

  CliResult sarif = RunParity({"check", bad, "--format", "sarif"});
  EXPECT_EQ(sarif.exit_code, 1);
  const nlohmann::json s = nlohmann::json::parse(sarif.out);
  const nlohmann::json& results = s["runs"][0]["results"];
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0]["ruleId"], "P2033");
  EXPECT_EQ(results[0]["locations"][0]["physicalLocation"]["region"]["startLine"], 67);
  bool cited = false;
  for (const nlohmann::json& rule : s["runs"][0]["tool"]["driver"]["rules"]) {
    if (rule["id"] == "P2033") cited = rule["properties"]["citation"] == "user assertion";
  }
  EXPECT_TRUE(cited) << "P2033's SARIF rule cites the user assertion";
}

// Only an interleaving in which the consumer checks before the copy lands fails: `check`
// (eager: copies land at once) passes, `explore` finds it and prints the path to it.
TEST(CliAssertions, ExploreFindsAFailureOnlySomeInterleavingsReach) {
  const std::string file = TempFile("landed.pipe", R"(schedule landed
buffer tile[1] bytes 128
barrier full[1] count 1
role producer {
  init full[0]
  fence.mbarrier_init
  cluster.sync
  arrive.expect_tx full[0] bytes 128
  bulk.load tile[0] bar full[0]
}
role consumer threads 128 {
  cluster.sync
  assert landed(tile[0]) -- the bytes are in
  wait full[0] parity 0
}
)");
  CliResult check = RunParity({"check", file});
  EXPECT_EQ(check.exit_code, 0) << check.out << check.err;
  CliResult explore = RunParity({"explore", file, "--full"});
  EXPECT_EQ(explore.exit_code, 1) << explore.out << explore.err;
  EXPECT_THAT(explore.out, HasSubstr("P2033"));
  EXPECT_THAT(explore.out, HasSubstr("assert landed(tile[0]) -- the bytes are in is false here"));
  EXPECT_THAT(explore.out, HasSubstr("landed.pipe:13:3"));
  EXPECT_THAT(explore.out, HasSubstr("cp.async.bulk issued on tile[0]"));  // the path to it
}

// `exists`: judged over every complete run of a complete search.
TEST(CliAssertions, ExistsIsJudgedOverEveryCompleteRun) {
  const std::string body = R"(buffer tile[1] bytes 128
barrier b[1] count 2
role r count 2 {
  if agent == 0 {
    init b[0]
  }
  cluster.sync
  arrive b[0]
}
)";
  const std::string never = TempFile("never.pipe", body + "exists phase(b[0]) == 0 -- open\n");
  CliResult r = RunParity({"explore", never});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("P2034"));
  EXPECT_THAT(r.out, HasSubstr("exists phase(b[0]) == 0 -- open holds in the final state of no "
                               "complete run"));
  // The finding is of no agent: its statement alone, not "by -".
  EXPECT_THAT(r.out, HasSubstr("\n  at " + never + ":10:1\n"));
  EXPECT_THAT(r.out, Not(HasSubstr("by -")));
  const std::string always = TempFile("always.pipe", body + "exists phase(b[0]) == 1\n");
  r = RunParity({"explore", always});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("VERIFIED"));
  r = RunParity({"check", never, "--format", "json"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(nlohmann::json::parse(r.out)["findings"][0]["code"], "P2034");
}

TEST(CliAssertions, BadAssertionIsAParseErrorAtItsColumn) {
  const std::string file = TempFile("bad_assert.pipe", R"(barrier b[1] count 1
role r {
  init b[0]
  let p = pending(b[0])
}
)");
  CliResult r = RunParity({"check", file});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("bad_assert.pipe:4:11: error[parse.state-outside-assertion]"));
}

}  // namespace
}  // namespace parity::testing
