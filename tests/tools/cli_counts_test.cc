// `parity counts`: exit codes 0/1/2, the derivation lines, --check explanations and json.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "tests/tools/cli_runner.h"

namespace parity::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

std::vector<std::string> Gemm2x2(std::vector<std::string> extra) {
  std::vector<std::string> args = {"counts",   "tma-async", "--cluster", "2x2",
                                   "--consumers", "2",      "--tile-a",  "128x64",
                                   "--tile-b", "128x64",    "--dtype",   "f16",
                                   "--stages", "4"};
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

TEST(CountsCommand, PrintsEveryCountWithItsDerivation) {
  CliResult r = RunParity(Gemm2x2({}));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("init.full = 1\n"));
  EXPECT_THAT(r.out, HasSubstr("init.empty = 6\n"));
  EXPECT_THAT(r.out, HasSubstr("tx.full = 32768\n"));
  EXPECT_THAT(r.out, HasSubstr("empty = (cluster_m + cluster_n - 1) x 2 warpgroups = 6: a CTA "
                               "receives a release from every consumer warpgroup of each CTA it "
                               "multicast to (its row and column), itself counted once"));
  EXPECT_THAT(r.out, HasSubstr("tx = A 128x64 + B 128x64 elements x 2 bytes = 16384 + 16384 = "
                               "32768"));
}

TEST(CountsCommand, AllChecksMatchExitsZero) {
  CliResult r = RunParity(Gemm2x2(
      {"--check", "init.empty=6", "--check", "init.full=1", "--check", "tx.full=32768"}));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("ok init.empty = 6"));
  EXPECT_THAT(r.out, Not(HasSubstr("MISMATCH")));
}

TEST(CountsCommand, MismatchExitsOneAndExplains) {
  CliResult r = RunParity(Gemm2x2(
      {"--check", "init.empty=8", "--check", "init.full=1", "--check", "tx.full=131072"}));
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_THAT(r.out, HasSubstr("MISMATCH init.empty: you have 8, correct is 6 = (cluster_m + "
                               "cluster_n - 1) x 2 warpgroups: you counted all 4 CTAs of the "
                               "cluster, but only the 3 in this CTA's row and column multicast "
                               "into it"));
  EXPECT_THAT(r.out, HasSubstr("ok init.full = 1"));
  EXPECT_THAT(r.out, HasSubstr("MISMATCH tx.full: you have 131072, correct is 32768"));
  EXPECT_THAT(r.out, HasSubstr("multiplied by the cluster size"));
}

TEST(CountsCommand, SingleCtaClusterCountsConsumerThreads) {
  CliResult r = RunParity({"counts", "tma-async", "--consumers", "2", "--tile-a", "128x64",
                           "--tile-b", "128x64", "--check", "init.empty=2"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_THAT(r.out, HasSubstr("init.empty = 256\n"));
  CliResult wg = RunParity({"counts", "tma-async", "--consumers", "2", "--signal", "warpgroup",
                            "--tile-a", "128x64", "--tile-b", "128x64", "--check",
                            "init.empty=2"});
  EXPECT_EQ(wg.exit_code, 0) << wg.err;
}

TEST(CountsCommand, OtherKinds) {
  CliResult store = RunParity({"counts", "tma-store", "--stages", "4"});
  ASSERT_EQ(store.exit_code, 0) << store.err;
  EXPECT_THAT(store.out, HasSubstr("wait_group.read = 3\n"));
  EXPECT_THAT(store.out, HasSubstr("no mbarriers"));

  CliResult single = RunParity({"counts", "single-tma", "--box", "64x128", "--dtype", "bf16",
                                "--threads", "128", "--check", "init.full=128", "--check",
                                "tx.full=16384"});
  EXPECT_EQ(single.exit_code, 0) << single.err;

  CliResult async = RunParity({"counts", "async", "--producers", "1", "--consumers", "128",
                               "--check", "init.empty=4"});
  EXPECT_EQ(async.exit_code, 1) << async.err;
  EXPECT_THAT(async.out, HasSubstr("MISMATCH init.empty: you have 4, correct is 128"));
}

TEST(CountsCommand, CpAsyncMultistageLoop) {
  CliResult r = RunParity({"counts", "cp-async", "--stages", "3"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("prefetch = 2\n"));
  EXPECT_THAT(r.out, HasSubstr("wait_group = 1\n    wait_group = prefetch - 1 = stages - 2 = 1:"));
  EXPECT_THAT(r.out, HasSubstr("commit.per_ktile = 1\n"));

  CliResult tiles = RunParity({"counts", "cp-async", "--stages", "4", "--tile-a", "128x32",
                               "--tile-b", "128x32", "--threads", "128", "--check",
                               "wait_group=2", "--check", "copies.per_thread=8", "--format",
                               "json"});
  ASSERT_EQ(tiles.exit_code, 0) << tiles.err;
  const nlohmann::json j = nlohmann::json::parse(tiles.out);
  EXPECT_EQ(j["kind"], "cp-async");
  EXPECT_EQ(j["counts"]["smem.bytes"]["value"], 65536);
  EXPECT_EQ(j["checks"].size(), 2u);

  CliResult racy = RunParity({"counts", "cp-async", "--stages", "4", "--check", "wait_group=3"});
  EXPECT_EQ(racy.exit_code, 1);
  EXPECT_THAT(racy.out, HasSubstr("MISMATCH wait_group: you have 3, correct is 2"));
  EXPECT_THAT(racy.out, HasSubstr("still writing"));

  EXPECT_EQ(RunParity({"counts", "cp-async", "--stages", "1"}).exit_code, 2);
  EXPECT_EQ(RunParity({"counts", "cp-async", "--tile-a", "128x32"}).exit_code, 2);
  EXPECT_EQ(RunParity({"counts", "cp-async", "--check", "init.full=1"}).exit_code, 2);
}

TEST(CountsCommand, JsonCarriesCountsAndChecks) {
  CliResult r = RunParity(Gemm2x2({"--format", "json", "--check", "init.empty=8"}));
  ASSERT_EQ(r.exit_code, 1) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["kind"], "tma-async");
  EXPECT_EQ(j["counts"]["init.empty"]["value"], 6);
  EXPECT_EQ(j["counts"]["init.empty"]["formula"], "(cluster_m + cluster_n - 1) x 2 warpgroups");
  EXPECT_EQ(j["counts"]["tx.full"]["value"], 32768);
  ASSERT_EQ(j["checks"].size(), 1u);
  EXPECT_EQ(j["checks"][0]["yours"], 8);
  EXPECT_EQ(j["checks"][0]["correct"], 6);
  EXPECT_EQ(j["checks"][0]["match"], false);
}

TEST(CountsCommand, BadInputExitsTwo) {
  const std::vector<std::vector<std::string>> bad = {
      {"counts", "tma-sync"},                                    // unknown kind
      Gemm2x2({"--check", "init.bogus=1"}),                      // unknown key
      Gemm2x2({"--check", "init.empty"}),                        // no value
      Gemm2x2({"--check", "init.empty=six"}),                    // malformed value
      Gemm2x2({"--cluster", "2by2"}),                            // malformed cluster
      Gemm2x2({"--multicast", "c"}),                             // unknown multicast
      Gemm2x2({"--dtype", "f12"}),                               // unknown dtype
      {"counts", "tma-async", "--cluster", "2x2"},               // tiles missing
      {"counts", "single-tma"},                                  // box missing
      {"counts", "tma-store", "--stages", "0"},                  // out of range
      {"counts", "tma-store", "--check", "init.full=1"},         // no mbarriers in tma-store
      Gemm2x2({"--consumers", "-2"}),  // negative (it was read as "the default", 1)
      {"counts", "async", "--consumers", "-5"},
  };
  for (const auto& args : bad) {
    CliResult r = RunParity(args);
    std::string joined;
    for (const auto& a : args) joined += a + " ";
    EXPECT_EQ(r.exit_code, 2) << joined << "\n" << r.out << r.err;
    EXPECT_THAT(r.out, Not(HasSubstr("MISMATCH"))) << joined;
  }
}

}  // namespace
}  // namespace parity::testing
