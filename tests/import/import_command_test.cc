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
  // ws_pipeline.cu releases ld.shared-read stages to the next TMA load without
  // fence.proxy.async (DeepEP #621's pattern): by default the reads are use.generic and check
  // reports the cross-proxy write-after-read; --no-generic-reads imports them as plain `use`.
  const std::string generic = out + ".generic.pipe";
  CliResult g = RunParity(With(kWs, {"--arg", "1=6", "-o", generic}));
  ASSERT_EQ(g.exit_code, 0) << g.err;
  CliResult gc = RunParity({"check", generic});
  EXPECT_EQ(gc.exit_code, 1) << gc.out << gc.err;
  EXPECT_NE(gc.out.find("P2006"), std::string::npos) << gc.out;
  EXPECT_NE(gc.out.find("use.generic"), std::string::npos) << gc.out;
  CliResult r = RunParity(With(kWs, {"--arg", "1=6", "--no-generic-reads", "-o", out}));
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
  CliResult s = RunParity(With(kWs, {"--arg", "1=6", "--no-generic-reads"}));
  ASSERT_EQ(s.exit_code, 0) << s.err;
  EXPECT_EQ(s.out, text.str());
}

// persistent_struct.cu: CUTLASS's launch idioms (a by-value __grid_constant__ Params struct with
// a CUtensorMap at +128, warp roles from __shfl_sync, a persistent tile loop whose trip counts
// come from a shuffle prefix sum and a ballot).
const std::string kPs = "persistent_struct_param_0";
const std::vector<std::string> kPsBase = {
    "import", "tests/import/persistent_struct.ptx", "--entry", "persistent_struct",
    "--block",  "384", "--clusters", "2"};
// Three tiles in two groups (2 tiles of 2 k-tiles, 1 tile of 3 k-tiles).
const std::vector<std::string> kPsFields = {
    "--param", kPs + "+40=3", "--param", kPs + "+0=2",  "--param", kPs + "+4=2",
    "--param", kPs + "+8=1",  "--param", kPs + "+20=2", "--param", kPs + "+24=3"};
const std::vector<std::string> kPsMap = {"--tensormap", kPs + "+128=bf16:4096x4096:64x64:128B"};

TEST_F(ImportCommand, StructParamsAndWarpShufflesImportExactly) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  const std::string out = std::string(tmp != nullptr ? tmp : "/tmp") + "/ps.pipe";
  CliResult r = RunParity(With(With(With(kPsBase, kPsFields), kPsMap), {"-o", out}));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::ifstream f(out);
  std::stringstream text;
  text << f.rdbuf();
  const std::string s = text.str();
  // The shuffled warp index splits the warps into the producer, the two consumer groups' first
  // warps (which release stages) and each group's other warps (their named barrier differs);
  // warps 1-3 do nothing but sync.
  EXPECT_NE(s.find("role warp1_3 count 3 threads 32 {"), std::string::npos) << s;
  EXPECT_NE(s.find("role warp4_8_cl0_cta0 count 2 threads 32"), std::string::npos) << s;
  EXPECT_NE(s.find("role warp5_7_cl0_cta0 count 3 threads 32"), std::string::npos) << s;
  EXPECT_NE(s.find("role warp9_11_cl0_cta0 count 3 threads 32"), std::string::npos) << s;
  // The consumer groups' named barrier id is the shuffled warp-group index (1 and 2).
  EXPECT_NE(s.find("    bar.sync 1 + agent, 128"), std::string::npos) << s;
  // The tensor map inside the struct.
  EXPECT_NE(s.find("tensormap tmap_" + kPs + "_128 dtype bf16 dims [4096, 4096] box [64, 64] "
                   "swizzle 128B"),
            std::string::npos)
      << s;
  // CTA 0 runs tiles 0 (group 0: 2 k-tiles) and 2 (group 1: 3 k-tiles): 5 stages consumed, the
  // last load at k-tile 2 of tile 2; CTA 1 runs tile 1 (2 k-tiles).
  EXPECT_NE(s.find("  for k in 0 .. 5 {"), std::string::npos) << s;
  EXPECT_NE(s.find("tma.load tmap_" + kPs + "_128 coords [128, 128] -> smem[1] bar full[1]"),
            std::string::npos)
      << s;
  EXPECT_NE(s.find("tma.load tmap_" + kPs + "_128 coords [64 * k, 64] -> smem[k]"),
            std::string::npos)
      << s;
  // `explore` verifies it too (1.8M states, about 30 s here: too slow for a unit test).
  CliResult c = RunParity({"check", out});
  EXPECT_EQ(c.exit_code, 0) << c.out << c.err;
  EXPECT_NE(c.out.find("all 24 agent(s) of 2 CTA(s) exited"), std::string::npos) << c.out;
  // The same fields by byte offset in the parameter space (param_0 starts at 0).
  CliResult abs = RunParity(With(With(kPsBase, kPsMap),
                                 {"--param", "40=3", "--param", "0=2", "--param", "4=2",
                                  "--param", "8=1", "--param", "0x14=2", "--param", "24=3"}));
  ASSERT_EQ(abs.exit_code, 0) << abs.err;
  EXPECT_NE(abs.out.find("  for k in 0 .. 5 {"), std::string::npos) << abs.out;
}

TEST_F(ImportCommand, StructParamBadInputIsExitTwoNamingTheField) {
  // The persistent loop's bound (Params::total_tiles, 8 bytes at +40) is not given: its offset,
  // width, the PTX line that loads it and the CUDA line are named.
  CliResult missing = RunParity(With(kPsBase, kPsMap));
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.err.find("error[import.missing-param]"), std::string::npos) << missing.err;
  EXPECT_NE(missing.err.find("kernel parameter " + kPs +
                             "+40 (8 bytes at parameter-space byte 40), read by `ld.param.u64` "
                             "at PTX line "),
            std::string::npos)
      << missing.err;
  EXPECT_NE(missing.err.find("persistent_struct.cu:"), std::string::npos) << missing.err;
  EXPECT_NE(missing.err.find("pass --param " + kPs + "+40=VALUE"), std::string::npos)
      << missing.err;
  struct Case {
    std::vector<std::string> extra;
    std::string message;
  };
  const std::vector<Case> cases = {
      // --arg on a struct used to be accepted and ignored.
      {{"--arg", "0=5"}, "is a 256-byte by-value struct, not a scalar"},
      // A field no load reads.
      {{"--param", kPs + "+44=1"}, "no load of the kernel reads " + kPs + " at byte 44"},
      {{"--param", kPs + "+300=1"}, kPs + " has 256 bytes"},
      {{"--param", "nope+4=1"}, "the entry has no parameter nope"},
      {{"--param", "40=7"}, kPs + "+40 is given twice"},
      {{"--param", "x=y"}, "is not NAME+OFFSET=VALUE"},
      {{"--param", "300=1"}, "byte 300 of the parameter space is in no parameter"},
      // Params::k_tiles_of_group[2] is a 4-byte field.
      {{"--param", kPs + "+28=0x100000000"}, "does not fit the 4-byte field `ld.param.u32`"},
      // A tensor map that does not fit, or that no TMA copy uses.
      {{"--tensormap", kPs + "+192=bf16:64x64:64x64"}, "does not fit there"},
      {{"--tensormap", kPs + "+64=bf16:64x64:64x64"}, "no TMA copy of the kernel uses"},
      {{"--tensormap", "0=bf16:64x64:64x64"}, "--tensormap " + kPs + "+OFFSET="},
  };
  for (const Case& c : cases) {
    CliResult r = RunParity(With(With(With(kPsBase, kPsFields), kPsMap), c.extra));
    EXPECT_EQ(r.exit_code, 2) << c.extra[1] << ": " << r.err;
    EXPECT_NE(r.err.find("import.bad-option"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(c.message), std::string::npos) << c.extra[1] << ": " << r.err;
  }
  // The struct's tensor map not described: the --tensormap spelling for a field is suggested.
  CliResult no_map = RunParity(With(kPsBase, kPsFields));
  EXPECT_EQ(no_map.exit_code, 2);
  EXPECT_NE(no_map.err.find("--tensormap " + kPs + "+128=DTYPE"), std::string::npos)
      << no_map.err;
  // A byte of a CUtensorMap parameter that no load reads (the TMA unit reads the map, not the
  // kernel) is not silently accepted either.
  CliResult unread = RunParity(With(kWs, {"--arg", "1=6", "--param", "ws_pipeline_param_0+8=9"}));
  EXPECT_EQ(unread.exit_code, 2) << unread.err;
  EXPECT_NE(unread.err.find("no load of the kernel reads ws_pipeline_param_0 at byte 8"),
            std::string::npos)
      << unread.err;
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
