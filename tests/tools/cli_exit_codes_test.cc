// The exit-code contract of the `parity` command: 0 clean, 1 violations, 2 bad input or usage,
// 3 internal error. Later subcommands add their own cases next to their tests.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/tools/cli_runner.h"
#include "tools/cli/version.h"

namespace parity::testing {
namespace {

using ::testing::HasSubstr;

TEST(CliExitCodes, VersionIsCleanAndPrintsTheVersion) {
  CliResult r = RunParity({"version"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr(std::string("parity ") + parity::cli::kParityVersion));
}

TEST(CliExitCodes, NoSubcommandIsAUsageError) {
  CliResult r = RunParity({});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("subcommand"));
}

TEST(CliExitCodes, UnknownSubcommandIsAUsageError) {
  CliResult r = RunParity({"frobnicate"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("frobnicate"));
}

TEST(CliExitCodes, UnknownOptionIsAUsageError) {
  CliResult r = RunParity({"version", "--no-such-option"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("--no-such-option"));
}

TEST(CliExitCodes, HelpIsClean) {
  CliResult r = RunParity({"--help"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_THAT(r.out, HasSubstr("Exit codes"));
  EXPECT_THAT(r.out, HasSubstr("version"));
}

TEST(CliRules, ListsEveryCodeAndExplainsOne) {
  CliResult r = RunParity({"rules"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_THAT(r.out, HasSubstr("M1005"));
  EXPECT_THAT(r.out, HasSubstr("P2001"));
  r = RunParity({"rules", "M1005"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_THAT(r.out, HasSubstr("mbarrier-over-arrival"));
  r = RunParity({"rules", "mbarrier-over-arrival"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_THAT(r.out, HasSubstr("M1005"));
  r = RunParity({"rules", "X9999"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("X9999"));
}

}  // namespace
}  // namespace parity::testing
