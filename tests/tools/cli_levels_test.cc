// docs/levels.md: a finding's level is its own. The epilogue-reuse handoff of FlashAttention-3
// and humming PR #56 (a .cta-scoped release after the store read the tile out) is a P2013
// warning: printed and counted, "warning" in JSON and SARIF, exit 0; --strict makes it an error
// (exit 1) for check and explore, and explore's VERIFIED names the warning.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "tests/tools/cli_runner.h"

namespace parity::testing {
namespace {

using ::testing::HasSubstr;
using nlohmann::json;

const char kReuse[] = "pipelines/tma_store/epilogue_reuse_cta_scope.pipe";
const char kEarly[] = "pipelines/tma_store/bad_epilogue_reuse_release_before_read.pipe";

TEST(CliLevels, CheckPrintsAWarningAndExitsCleanUnlessStrict) {
  const std::string file = Runfile(kReuse);
  CliResult r = RunParity({"check", file});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("OK with warnings: the run completed"));
  EXPECT_THAT(r.out, HasSubstr("warning P2013"));
  EXPECT_THAT(r.out, HasSubstr("an error under --strict"));
  CliResult s = RunParity({"check", file, "--strict"});
  EXPECT_EQ(s.exit_code, 1) << s.out << s.err;
  EXPECT_THAT(s.out, ::testing::Not(HasSubstr("warning P2013")));
  // The same code without the completed read before the release is an error.
  CliResult e = RunParity({"check", Runfile(kEarly)});
  EXPECT_EQ(e.exit_code, 1);
  EXPECT_THAT(e.out, ::testing::Not(HasSubstr("warning P2013")));
}

TEST(CliLevels, JsonAndSarifCarryTheLevel) {
  const std::string file = Runfile(kReuse);
  for (bool strict : {false, true}) {
    std::vector<std::string> args = {"check", file, "--format", "json"};
    if (strict) args.push_back("--strict");
    CliResult j = RunParity(args);
    EXPECT_EQ(j.exit_code, strict ? 1 : 0);
    const json doc = json::parse(j.out);
    size_t p2013 = 0;
    for (const json& f : doc["findings"]) {
      if (f["code"] != "P2013") continue;
      ++p2013;
      EXPECT_EQ(f["severity"], strict ? "error" : "warning");
    }
    EXPECT_GE(p2013, 1u) << j.out;
    args[3] = "sarif";
    CliResult s = RunParity(args);
    const json log = json::parse(s.out);
    size_t results = 0;
    for (const json& x : log["runs"][0]["results"]) {
      ++results;
      EXPECT_EQ(x["level"], strict ? "error" : "warning");
    }
    EXPECT_GE(results, 1u) << s.out;
  }
}

TEST(CliLevels, ExploreVerifiedNamesItsWarningsAndStrictFindsThem) {
  const std::string file = Runfile(kReuse);
  CliResult r = RunParity({"explore", file});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("VERIFIED"));
  EXPECT_THAT(r.out, HasSubstr("1 warning (above; --strict makes them errors)"));
  EXPECT_THAT(r.out, HasSubstr("warning P2013"));
  CliResult j = RunParity({"explore", file, "--format", "json"});
  const json doc = json::parse(j.out);
  EXPECT_EQ(doc["verdict"], "verified");
  ASSERT_EQ(doc["warnings"].size(), 1u);
  EXPECT_EQ(doc["warnings"][0]["severity"], "warning");
  CliResult s = RunParity({"explore", file, "--strict"});
  EXPECT_EQ(s.exit_code, 1) << s.out;
  EXPECT_THAT(s.out, HasSubstr("FOUND"));
}

}  // namespace
}  // namespace parity::testing
