// `parity import` on the command line: the schedule it writes is accepted by `parity check` and
// `parity explore`; bad input is exit 2 naming what is wrong.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "tests/tools/cli_runner.h"

namespace parity::testing {
namespace {

class ImportCommand : public ::testing::Test {
 protected:
  void SetUp() override {
#ifdef PARITY_NO_NVCC
    GTEST_SKIP() << "CUDA (nvcc) was not found when this was built; the kernels' PTX is missing";
#endif
  }
};

const std::vector<std::string> kWs = {
    "import",      "tests/import/ws_pipeline.ptx", "--entry", "ws_pipeline", "--block", "96",
    "--tensormap", "0=u16:64x1024:64x64:128B"};

std::vector<std::string> With(std::vector<std::string> args, const std::vector<std::string>& more) {
  args.insert(args.end(), more.begin(), more.end());
  return args;
}

TEST_F(ImportCommand, WritesAScheduleThatChecksAndVerifies) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  const std::string out = std::string(tmp != nullptr ? tmp : "/tmp") + "/ws.pipe";
  CliResult r = RunParity(With(kWs, {"--arg", "1=6", "-o", out}));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::ifstream f(out);
  std::stringstream text;
  text << f.rdbuf();
  EXPECT_NE(text.str().find("role warp1_2 count 2 threads 32"), std::string::npos);
  CliResult c = RunParity({"check", out});
  EXPECT_EQ(c.exit_code, 0) << c.out << c.err;
  CliResult e = RunParity({"explore", out});
  EXPECT_EQ(e.exit_code, 0) << e.out << e.err;
  EXPECT_NE(e.out.find("VERIFIED"), std::string::npos) << e.out;
  // Without -o the schedule goes to stdout.
  CliResult s = RunParity(With(kWs, {"--arg", "1=6"}));
  ASSERT_EQ(s.exit_code, 0) << s.err;
  EXPECT_EQ(s.out, text.str());
}

TEST_F(ImportCommand, BadInputIsExitTwoNamingWhatIsWrong) {
  CliResult missing_arg = RunParity(kWs);
  EXPECT_EQ(missing_arg.exit_code, 2);
  EXPECT_NE(missing_arg.err.find("import.missing-arg"), std::string::npos) << missing_arg.err;
  EXPECT_NE(missing_arg.err.find("--arg"), std::string::npos) << missing_arg.err;
  CliResult missing_map = RunParity({"import", "tests/import/ws_pipeline.ptx", "--entry",
                                     "ws_pipeline", "--block", "96", "--arg", "1=2"});
  EXPECT_EQ(missing_map.exit_code, 2);
  EXPECT_NE(missing_map.err.find("import.missing-tensormap"), std::string::npos) << missing_map.err;
  CliResult entry =
      RunParity({"import", "tests/import/ws_pipeline.ptx", "--entry", "nope", "--block", "96"});
  EXPECT_EQ(entry.exit_code, 2);
  EXPECT_NE(entry.err.find("import.entry-not-found"), std::string::npos) << entry.err;
  CliResult not_ptx = RunParity(
      {"import", "tests/import/ws_pipeline.cu", "--entry", "ws_pipeline", "--block", "96"});
  EXPECT_EQ(not_ptx.exit_code, 2);
  EXPECT_NE(not_ptx.err.find("import.not-ptx"), std::string::npos) << not_ptx.err;
  CliResult bad_block = RunParity(With(kWs, {"--arg", "1=2", "--block", "0"}));
  EXPECT_EQ(bad_block.exit_code, 2) << bad_block.err;
  CliResult bad_arg = RunParity(With(kWs, {"--arg", "one=2"}));
  EXPECT_EQ(bad_arg.exit_code, 2);
  EXPECT_NE(bad_arg.err.find("INDEX=VALUE"), std::string::npos) << bad_arg.err;
  // PTX for another target: the file's .target line is named.
  const char* tmp = std::getenv("TEST_TMPDIR");
  ASSERT_NE(tmp, nullptr);
  std::ifstream in("tests/import/ws_pipeline.ptx");
  std::stringstream text;
  text << in.rdbuf();
  std::string ptx = text.str();
  const size_t at = ptx.find(".target sm_90a");
  ASSERT_NE(at, std::string::npos);
  ptx.replace(at, 14, ".target sm_80");
  const std::string sm80 = std::string(tmp) + "/sm80.ptx";
  std::ofstream(sm80) << ptx;
  CliResult other = RunParity({"import", sm80, "--entry", "ws_pipeline", "--block", "96", "--arg",
                               "1=2", "--tensormap", "0=u16:64x1024:64x64:128B"});
  EXPECT_EQ(other.exit_code, 2);
  EXPECT_NE(other.err.find("import.ptx-target"), std::string::npos) << other.err;
  EXPECT_NE(other.err.find("sm80.ptx"), std::string::npos) << other.err;
  EXPECT_NE(other.err.find("sm_80"), std::string::npos) << other.err;
}

// `parity replay IMPORTED.pipe KERNEL.trace`: a kernel's own H100 trace (traces/import/native/,
// gpu/include/parity/trace.cuh) on the schedule imported from it (needs no nvcc: both are data).
TEST(ReplayKernelTrace, ReplaysCleanOrReportsTheFirstDivergenceAtItsLines) {
  CliResult ok = RunParity({"replay", "traces/import/pipes/ws_pipeline.pipe",
                            "traces/import/native/ws_pipeline.trace"});
  EXPECT_EQ(ok.exit_code, 0) << ok.out << ok.err;
  EXPECT_NE(ok.out.find("OK: all 67 records of the kernel trace match the schedule"),
            std::string::npos)
      << ok.out;
  // The twin arming the full barrier with half the tile, against the correct kernel's schedule.
  CliResult twin = RunParity({"replay", "traces/import/pipes/ws_pipeline.pipe",
                              "traces/import/native/ws_pipeline_bad_tx.trace"});
  EXPECT_EQ(twin.exit_code, 1) << twin.out << twin.err;
  EXPECT_NE(twin.out.find("DIVERGENCE at kernel record"), std::string::npos) << twin.out;
  EXPECT_NE(twin.out.find("4096 bytes, at ws_pipeline.cu:60"), std::string::npos) << twin.out;
  EXPECT_NE(twin.out.find("imported from:   ws_pipeline.ptx:348 (ws_pipeline.cu:60)"),
            std::string::npos)
      << twin.out;
  CliResult json = RunParity({"replay", "traces/import/pipes/ws_pipeline.pipe",
                              "traces/import/native/ws_pipeline_bad_tx.trace", "--format",
                              "json"});
  EXPECT_EQ(json.exit_code, 1);
  EXPECT_NE(json.out.find("\"imported_from\": \"ws_pipeline.ptx:348 (ws_pipeline.cu:60)\""),
            std::string::npos)
      << json.out;
  // A schedule `parity import` did not make has no warp map: bad input.
  const char* tmp = std::getenv("TEST_TMPDIR");
  const std::string hand = std::string(tmp != nullptr ? tmp : "/tmp") + "/hand.pipe";
  {
    std::ofstream f(hand);
    f << "schedule hand\nbarrier b[1] count 1\nrole p threads 32 {\n  init b[0]\n}\n";
  }
  CliResult bad = RunParity({"replay", hand, "traces/import/native/ws_pipeline.trace"});
  EXPECT_EQ(bad.exit_code, 2) << bad.out << bad.err;
  EXPECT_NE(bad.err.find("replay.kernel-map"), std::string::npos) << bad.err;
  EXPECT_NE(bad.err.find("hand.pipe"), std::string::npos) << bad.err;
}

}  // namespace
}  // namespace parity::testing
