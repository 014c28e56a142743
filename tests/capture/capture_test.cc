// `parity capture` and `parity import --launch` on the CPU: capture_app reaches a fake libcuda the
// ways the CUDA runtime and DeepGEMM's host code do; the launch file records each launch as the
// program made it; importing a recorded launch gives the schedule the same arguments given by
// hand give; a launch that does not fit the kernel is exit 2 naming what is missing.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "tests/tools/cli_runner.h"

namespace parity::testing {
namespace {

using nlohmann::json;

std::string TmpPath(const std::string& name) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  return std::string(tmp != nullptr ? tmp : "/tmp") + "/" + name;
}

std::string ReadText(const std::string& path) {
  std::ifstream f(path);
  std::stringstream text;
  text << f.rdbuf();
  return text.str();
}

class Capture : public ::testing::Test {
 protected:
  void SetUp() override {
#ifdef PARITY_NO_NVCC
    // Without CUDA's headers neither the capture library nor the fake driver and program it
    // intercepts can be built (tests/capture/BUILD gives them no data then); CI's machine has
    // CUDA, so there the test always runs.
    GTEST_SKIP() << "CUDA was not found when this was built: no cuda.h, no capture library";
#endif
  }

  // Captures capture_app once per test into `path` and returns the document.
  json CaptureApp(const std::string& path) {
    CliResult r = RunParity({"capture", "-o", path, "--", Runfile("tests/capture/capture_app"),
                             Runfile("tests/capture/libfake_cuda.so")});
    // The program's own exit status comes back.
    EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
    EXPECT_NE(r.err.find("5 launches of 4 kernels recorded (5 seen), 4 tensor maps identified"),
              std::string::npos)
        << r.err;
    return json::parse(ReadText(path));
  }
};

// A schedule from its `schedule` line on (the header above it says where the arguments came from).
std::string Schedule(const std::string& text) {
  const size_t at = text.find("\nschedule ");
  return at == std::string::npos ? text : text.substr(at);
}

std::string Hex(const std::vector<unsigned char>& bytes) {
  static const char kDigits[] = "0123456789abcdef";
  std::string out;
  for (unsigned char b : bytes) {
    out += kDigits[b >> 4];
    out += kDigits[b & 15];
  }
  return out;
}

TEST_F(Capture, RecordsEveryLaunchAsTheProgramMadeIt) {
  const json doc = CaptureApp(TmpPath("app.json"));
  EXPECT_EQ(doc["schema"], "parity-launches");
  EXPECT_EQ(doc["version"], 1);
  EXPECT_EQ(doc["launches_seen"], 5);
  ASSERT_EQ(doc["launches"].size(), 5u);
  EXPECT_NE(doc["program"][0].get<std::string>().find("capture_app"), std::string::npos);

  // 0: through cuGetProcAddress (the runtime's way), the per-thread-stream variant.
  const json& l0 = doc["launches"][0];
  EXPECT_EQ(l0["kernel"], "persistent_struct");
  EXPECT_EQ(l0["api"], "cuLaunchKernelEx_ptsz");
  EXPECT_EQ(l0["per_thread_stream"], true);
  EXPECT_EQ(l0["grid"], json({2, 1, 1}));
  EXPECT_EQ(l0["block"], json({384, 1, 1}));
  EXPECT_EQ(l0["cluster"], json({1, 1, 1}));
  EXPECT_EQ(l0["cluster_source"], "none");
  EXPECT_EQ(l0["dynamic_smem"], 99328);
  // The bytes at the device-side offsets the driver reports (the 128-byte aligned struct at 112,
  // as driver 580 does); the importer moves them to the ABI's.
  EXPECT_EQ(l0["params"]["size"], 112 + 256);
  EXPECT_EQ(l0["params"]["layout_source"], "cuFuncGetParamInfo");
  EXPECT_EQ(l0["params"]["layout"], json::parse(R"([{"offset": 112, "size": 256}])"));
  // Params: groups 2, tiles_per_group {2, 1, 0, 0}, k_tiles_of_group {2, 3, 0, 0}, 4 bytes of
  // padding, total_tiles 3 (little-endian).
  const std::string bytes = l0["params"]["bytes"];
  EXPECT_EQ(bytes.substr(2 * 112, 96),
            "02000000" "02000000" "01000000" "00000000" "00000000"
            "02000000" "03000000" "00000000" "00000000" "00000000"
            "0300000000000000");
  ASSERT_EQ(l0["tensor_maps"].size(), 1u);
  EXPECT_EQ(l0["tensor_maps"][0]["offset"], 112 + 128);
  const json& e0 = l0["tensor_maps"][0]["encode"];
  EXPECT_EQ(e0["api"], "cuTensorMapEncodeTiled");
  EXPECT_EQ(e0["data_type"], "bf16");
  EXPECT_EQ(e0["rank"], 2);
  EXPECT_EQ(e0["global_address"], "0x7000");
  EXPECT_EQ(e0["global_dim"], json({4096, 4096}));
  EXPECT_EQ(e0["global_strides"], json({8192}));
  EXPECT_EQ(e0["box_dim"], json({64, 64}));
  EXPECT_EQ(e0["element_strides"], json({1, 1}));
  EXPECT_EQ(e0["swizzle"], "128B");
  EXPECT_EQ(e0["l2_promotion"], 3);

  // 1: through dlsym on the driver's handle (DeepGEMM's way): a CUtensorMap parameter and two
  // scalars.
  const json& l1 = doc["launches"][1];
  EXPECT_EQ(l1["kernel"], "ws_pipeline");
  EXPECT_EQ(l1["api"], "cuLaunchKernel");
  EXPECT_EQ(l1["params"]["size"], 256);
  const std::string b1 = l1["params"]["bytes"];
  EXPECT_EQ(b1.substr(2 * 240), "06000000" "00000000" "00a0000000000000");
  ASSERT_EQ(l1["tensor_maps"].size(), 1u);
  EXPECT_EQ(l1["tensor_maps"][0]["offset"], 112);
  EXPECT_EQ(l1["tensor_maps"][0]["encode"]["data_type"], "u16");
  EXPECT_EQ(l1["tensor_maps"][0]["encode"]["global_dim"], json({64, 1024}));

  // 2: the same parameters from an `extra` buffer: the ABI's layout as the program built it, no
  // per-parameter layout; the same values and the same tensor map.
  const json& l2 = doc["launches"][2];
  EXPECT_EQ(l2["params"]["layout_source"], "extra");
  EXPECT_EQ(l2["params"]["size"], 144);
  const std::string b2 = l2["params"]["bytes"];
  EXPECT_EQ(b2.substr(0, 256), b1.substr(2 * 112, 256));
  EXPECT_EQ(b2.substr(256), b1.substr(2 * 240));
  ASSERT_EQ(l2["tensor_maps"].size(), 1u);
  EXPECT_EQ(l2["tensor_maps"][0]["offset"], 0);
  EXPECT_EQ(l2["tensor_maps"][0]["encode"], l1["tensor_maps"][0]["encode"]);

  // 3: a library kernel: its compile-time cluster shape.
  const json& l3 = doc["launches"][3];
  EXPECT_EQ(l3["kernel"], "cluster_pipeline");
  EXPECT_EQ(l3["cluster"], json({2, 1, 1}));
  EXPECT_EQ(l3["cluster_source"], "kernel");
  EXPECT_EQ(l3["grid"], json({4, 1, 1}));
  // A CUkernel launched as a CUfunction: its layout from cuKernelGetParamInfo (cuFuncGetParamInfo
  // answers one parameter of 8 bytes on it).
  EXPECT_EQ(l3["params"]["layout_source"], "cuKernelGetParamInfo");
  EXPECT_EQ(l3["params"]["size"], 256);
  EXPECT_EQ(l3["tensor_maps"].size(), 1u);

  // 4: no name from the driver: the one it was looked up by; the cluster from the launch.
  const json& l4 = doc["launches"][4];
  EXPECT_EQ(l4["kernel"], "anonymous");
  EXPECT_EQ(l4["api"], "cuLaunchKernelEx");
  EXPECT_EQ(l4["cluster"], json({2, 1, 1}));
  EXPECT_EQ(l4["cluster_source"], "launch-attribute");
  EXPECT_EQ(l4["params"]["bytes"], Hex({0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11}));
  ASSERT_EQ(l4["attributes"].size(), 1u);
  EXPECT_EQ(l4["attributes"][0]["id"], 4);  // CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION
  EXPECT_TRUE(l4["tensor_maps"].empty());
}

TEST_F(Capture, ProgramExitStatusAndBadInput) {
  // A program that cannot be started is exit 2; one that launches nothing leaves an empty record.
  CliResult missing = RunParity({"capture", "-o", TmpPath("none.json"), "--", "/nonexistent/app"});
  EXPECT_EQ(missing.exit_code, 2) << missing.err;
  EXPECT_NE(missing.err.find("error[capture.no-program]: cannot run '/nonexistent/app'"),
            std::string::npos)
      << missing.err;
  const std::string empty = TmpPath("empty.json");
  CliResult ran = RunParity({"capture", "-o", empty, "--", "/bin/sh", "-c", "exit 5"});
  EXPECT_EQ(ran.exit_code, 5) << ran.err;
  const json doc = json::parse(ReadText(empty));
  EXPECT_EQ(doc["schema"], "parity-launches");
  EXPECT_TRUE(doc["launches"].empty());
  EXPECT_EQ(doc["program"], json({"/bin/sh", "-c", "exit 5"}));
  CliResult signal = RunParity({"capture", "-o", empty, "--", "/bin/sh", "-c", "kill -9 $$"});
  EXPECT_EQ(signal.exit_code, 128 + 9) << signal.err;
}

// The import with a recorded launch equals the import with the same arguments given by hand.
TEST_F(Capture, ImportWithTheLaunchEqualsTheHandGivenArguments) {
  const std::string file = TmpPath("import.json");
  CaptureApp(file);
  const std::string ps = "persistent_struct_param_0";
  const std::string ps_ptx = Runfile("tests/import/persistent_struct.ptx");
  CliResult by_hand = RunParity(
      {"import", ps_ptx, "--entry", "persistent_struct", "--block", "384", "--clusters", "2",
       "--param", ps + "+40=3", "--param", ps + "+0=2", "--param", ps + "+4=2", "--param",
       ps + "+8=1", "--param", ps + "+20=2", "--param", ps + "+24=3", "--tensormap",
       ps + "+128=bf16:4096x4096:64x64:128B"});
  ASSERT_EQ(by_hand.exit_code, 0) << by_hand.err;
  // --entry is the one entry of the PTX with launches in the file; the launch's grid of 2 CTAs
  // runs in full with --clusters 2.
  CliResult launched = RunParity({"import", ps_ptx, "--launch", file, "--clusters", "2"});
  ASSERT_EQ(launched.exit_code, 0) << launched.err;
  EXPECT_EQ(Schedule(launched.out), Schedule(by_hand.out));
  EXPECT_NE(launched.out.find("# block 384,1,1, cluster 1x1, launch 0 (cuLaunchKernelEx_ptsz) of " +
                              file + "\n"),
            std::string::npos)
      << launched.out;
  EXPECT_NE(launched.out.find("  for k in 0 .. 5 {"), std::string::npos) << launched.out;

  // One cluster of the grid: CTA 0 still strides by the launch's gridDim.x of 2 (tiles 0 and 2,
  // 5 k-tiles); with a grid of its own it would run all three tiles (7 k-tiles).
  CliResult first = RunParity({"import", ps_ptx, "--launch", file});
  ASSERT_EQ(first.exit_code, 0) << first.err;
  EXPECT_NE(first.out.find("clusters 1"), std::string::npos) << first.out;
  EXPECT_NE(first.out.find("  for k in 0 .. 5 {"), std::string::npos) << first.out;

  const std::string ws_ptx = Runfile("tests/import/ws_pipeline.ptx");
  CliResult ws_hand = RunParity({"import", ws_ptx, "--entry", "ws_pipeline", "--block", "96",
                                 "--tensormap", "0=u16:64x1024:64x64:128B", "--arg", "1=6"});
  ASSERT_EQ(ws_hand.exit_code, 0) << ws_hand.err;
  for (const char* index : {"0", "1"}) {  // by kernelParams, and by the `extra` buffer
    CliResult ws = RunParity({"import", ws_ptx, "--launch", file, "--launch-index", index});
    ASSERT_EQ(ws.exit_code, 0) << ws.err;
    EXPECT_EQ(Schedule(ws.out), Schedule(ws_hand.out)) << "launch index " << index;
    // The launch's scalar k_tiles is the schedule's ARG1, as --arg 1=6 makes it.
    EXPECT_NE(ws.out.find("param ARG1 = 6   # kernel argument 1"), std::string::npos) << ws.out;
  }
  // The cluster shape comes from the launch (the kernel's __cluster_dims__(2, 1, 1)).
  CliResult cl = RunParity({"import", Runfile("tests/import/cluster_pipeline.ptx"), "--launch",
                            file});
  ASSERT_EQ(cl.exit_code, 0) << cl.err;
  EXPECT_NE(cl.out.find("cluster 2x1"), std::string::npos) << cl.out;
}

TEST_F(Capture, ALaunchThatDoesNotFitTheKernelIsExitTwo) {
  const std::string file = TmpPath("bad.json");
  const json doc = CaptureApp(file);
  const std::string ws_ptx = Runfile("tests/import/ws_pipeline.ptx");
  auto import = [&](const std::vector<std::string>& more) {
    std::vector<std::string> args = {"import", ws_ptx, "--entry", "ws_pipeline"};
    args.insert(args.end(), more.begin(), more.end());
    return RunParity(args);
  };
  auto expect_exit2 = [](const CliResult& r, const std::string& message) {
    EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
    EXPECT_NE(r.err.find(message), std::string::npos) << r.err;
  };
  expect_exit2(import({"--launch", file, "--launch-index", "2"}),
               "error[import.bad-launch]: --launch-index 2: the file has 2 launches of "
               "ws_pipeline (indices 0..1)");
  expect_exit2(import({"--launch", file, "--block", "128"}),
               "--block 128,1,1 disagrees with launch 1 (cuLaunchKernel)'s block 96,1,1");
  expect_exit2(import({"--launch", file, "--tensormap", "0=u16:64x1024:64x64:128B"}),
               "is also launch 1 (cuLaunchKernel): the CUtensorMap at parameter byte 0");
  expect_exit2(import({"--launch-index", "1"}), "--block is required (or --launch FILE.json)");

  // Another build of the kernel: the parameter space differs.
  json other = doc;
  other["launches"][1]["params"]["size"] = 140;
  other["launches"][1]["params"]["bytes"] =
      other["launches"][1]["params"]["bytes"].get<std::string>().substr(0, 280);
  other["launches"][1]["params"]["layout"] = json::array();
  const std::string other_file = TmpPath("other.json");
  std::ofstream(other_file) << other.dump();
  expect_exit2(import({"--launch", other_file}),
               "launch 1 (cuLaunchKernel) passed 140 parameter bytes; ws_pipeline in the PTX "
               "takes 144: the PTX and the program are different builds of the kernel");
  // Another kernel altogether.
  json renamed = doc;
  for (json& l : renamed["launches"]) {
    if (l["kernel"] == "ws_pipeline") l["kernel"] = "_Z11ws_pipelinev";
  }
  const std::string renamed_file = TmpPath("renamed.json");
  std::ofstream(renamed_file) << renamed.dump();
  expect_exit2(import({"--launch", renamed_file}), "no launch of ws_pipeline (5 launches, of ");
  // A layout that disagrees parameter by parameter.
  json layout = doc;
  layout["launches"][1]["params"]["layout"][1]["size"] = 8;
  const std::string layout_file = TmpPath("layout.json");
  std::ofstream(layout_file) << layout.dump();
  expect_exit2(import({"--launch", layout_file}),
               "parameter 1 is 8 bytes; the PTX's ws_pipeline_param_1 is 4: the PTX and the "
               "program are different builds of the kernel");
  // Parameters that overlap in the recorded layout.
  json overlap = doc;
  overlap["launches"][1]["params"]["layout"][1]["offset"] = 200;
  const std::string overlap_file = TmpPath("overlap.json");
  std::ofstream(overlap_file) << overlap.dump();
  expect_exit2(import({"--launch", overlap_file}),
               "parameter 1 (4 bytes at 200) overlaps the one before it");
  // Not a launch file, and not JSON: named with the line and column.
  const std::string bad_file = TmpPath("bad_syntax.json");
  std::ofstream(bad_file) << "{\n  \"schema\": \"parity-launches\",\n  \"version\": 1,,\n}\n";
  CliResult syntax = import({"--launch", bad_file});
  expect_exit2(syntax, bad_file + ":3:");
  expect_exit2(syntax, "error[import.bad-launch]: not JSON");
  const std::string v2_file = TmpPath("v2.json");
  std::ofstream(v2_file) << R"({"schema": "parity-launches", "version": 2, "launches": []})";
  expect_exit2(import({"--launch", v2_file}),
               "launch file version 2; this parity reads version 1");
}

}  // namespace
}  // namespace parity::testing
