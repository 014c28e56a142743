// `parity check`, `run` and `explain` on the bundled examples: the exit-code contract (0 clean,
// 1 violations/deadlock, 2 bad input) and the key lines of their reports.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <nlohmann/json.hpp>

#include "tests/tools/cli_runner.h"

namespace parity::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

std::string Example(const std::string& name) { return Runfile("sim/examples/" + name + ".pipe"); }

std::string ReadRunfile(const std::string& path) {
  std::ifstream in(Runfile(path));
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string TempFile(const std::string& name, const std::string& text) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  std::string path = std::string(tmp ? tmp : "/tmp") + "/" + name;
  std::ofstream(path) << text;
  return path;
}

TEST(CliCheck, CorrectPipelineExitsZero) {
  CliResult r = RunParity({"check", Example("gemm_tma_multicast_2x2")});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("OK: the run completed"));
}

TEST(CliCheck, EveryPolicyCompletesTheCorrectPipeline) {
  for (const char* policy : {"eager", "lazy", "round-robin", "random"}) {
    CliResult r = RunParity({"check", Example("gemm_tma_multicast_2x2"), "--policy", policy,
                             "--seed", "5", "-D", "STAGES=2", "-D", "K_TILES=5"});
    EXPECT_EQ(r.exit_code, 0) << policy << ": " << r.out << r.err;
  }
}

TEST(CliCheck, DeadlockExitsOneWithDiagnosisAndBehaviour) {
  CliResult r = RunParity({"check", Example("gemm_tx_overcount"), "--last", "5"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_THAT(r.out, HasSubstr("P2001 deadlock"));
  EXPECT_THAT(r.out, HasSubstr("tx-over-expected"));
  EXPECT_THAT(r.out, HasSubstr("full[0] of CTA 0"));
  EXPECT_THAT(r.out, HasSubstr("| wait full[s] parity"));  // the quoted source line
  EXPECT_THAT(r.out, HasSubstr("earlier events (--full prints all)"));
}

// The file's own `# expect:` lines that apply to the run are shown with their verdict; a
// mismatch is shown, and changes no exit code (the run's result decides it).
TEST(CliCheck, ShowsTheFilesExpectations) {
  CliResult r = RunParity({"check", Example("gemm_tx_overcount")});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_THAT(r.out, HasSubstr("expected by the file (line "));
  EXPECT_THAT(r.out, HasSubstr("P2001 (deadlock) on full[0] of CTA 0 by CTA 0 producer[0], cause "
                               "tx-over-expected, fix \"set the expect_tx bytes to 32768\" at "
                               "line 79, policy eager (the code under every policy) — matched"));
  CliResult lazy = RunParity({"check", Example("gemm_tx_overcount"), "--policy", "lazy"});
  EXPECT_THAT(lazy.out, HasSubstr("P2001 (deadlock), policy lazy (the code under every policy) — "
                                  "matched"));
  EXPECT_THAT(lazy.out, Not(HasSubstr("P2003 (")));  // an eager-only expectation

  const std::string wrong = TempFile(
      "wrong_expect.pipe", ReadRunfile("sim/examples/gemm_tx_overcount.pipe") +
                               "# expect: P2001 object=empty[0] cause=count-too-high\n");
  CliResult w = RunParity({"check", wrong});
  EXPECT_EQ(w.exit_code, 1) << w.err;
  EXPECT_THAT(w.out, HasSubstr("— NOT matched: culprit on full[0], not empty[0]; cause "
                               "tx-over-expected, not count-too-high"));
  CliResult j = RunParity({"check", Example("gemm_tx_overcount"), "--format", "json"});
  const nlohmann::json parsed = nlohmann::json::parse(j.out);
  ASSERT_EQ(parsed["expected_by_file"].size(), 2u);
  EXPECT_EQ(parsed["expected_by_file"][0]["matched"], true);
  EXPECT_EQ(parsed["expected_by_file"][0]["difference"], "");
}

TEST(CliCheck, JsonNamesBarrierCtaAndCause) {
  CliResult r = RunParity({"check", Example("gemm_empty_count_high"), "--format", "json"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["outcome"], "deadlock");
  EXPECT_EQ(j["deadlock"]["code"], "P2001");
  const auto& first = j["deadlock"]["blocked"][0];
  EXPECT_EQ(first["barrier"], "empty");
  EXPECT_EQ(first["cause"], "count-too-high");
  EXPECT_EQ(first["expected"], 8);
  EXPECT_EQ(first["pending"], 2);
  EXPECT_EQ(j["params"]["STAGES"], 4);
}

// The right culprit (issue 24): an earlier wait that passed at once is named with its line, in
// the text and in the JSON; "could still signal" lists only agents that reach the barrier.
TEST(CliCheck, DeadlockNamesTheEarlierWaitThatPassedAtOnce) {
  const std::string file = Runfile("pipelines/tma_async_gemm/bad_consumer_start_phase.pipe");
  CliResult r = RunParity({"check", file, "-D", "CLUSTER_M=1", "-D", "CLUSTER_N=1"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_THAT(r.out, HasSubstr("most likely cause (parity-passed-at-once) at full[0] of CTA 0, "
                               "the wait at "));
  EXPECT_THAT(r.out, HasSubstr("bad_consumer_start_phase.pipe:87:5"));
  EXPECT_THAT(r.out, HasSubstr("| wait full[s] parity ((k / STAGES) & 1) ^ 1"));
  CliResult j = RunParity(
      {"check", file, "-D", "CLUSTER_M=1", "-D", "CLUSTER_N=1", "--format", "json"});
  nlohmann::json d = nlohmann::json::parse(j.out)["deadlock"];
  EXPECT_EQ(d["culprit"]["cause"], "parity-passed-at-once");
  EXPECT_EQ(d["culprit"]["barrier"], "full");
  EXPECT_THAT(d["culprit"]["location"].get<std::string>(), HasSubstr(":87:5"));
}

TEST(CliCheck, CouldStillSignalListsOnlyAgentsThatReachTheBarrier) {
  CliResult r = RunParity(
      {"check", Runfile("pipelines/tma_async_gemm/bad_producer_start_phase.pipe")});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_THAT(r.out, HasSubstr("could still signal it, but blocked: CTA 0 consumer[0], CTA 0 "
                               "consumer[1], CTA 1 consumer[0], CTA 1 consumer[1], CTA 2 "
                               "consumer[0], CTA 2 consumer[1]\n"));
}

TEST(CliCheck, DotFileIsWritten) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  std::string dot = std::string(tmp ? tmp : "/tmp") + "/wf.dot";
  CliResult r = RunParity({"check", Example("gemm_wrong_producer_phase"), "--dot", dot});
  EXPECT_EQ(r.exit_code, 1);
  std::ifstream in(dot);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_THAT(text, HasSubstr("digraph wait_for"));
  EXPECT_THAT(text, HasSubstr("producer[0]"));
}

TEST(CliCheck, MalformedScheduleExitsTwoNamingFileLineAndRule) {
  std::string path = TempFile("bad.pipe", "cluster 1x1\nbarrier full[1] count 1\nrole p {\n  arrive full[0\n}\n");
  CliResult r = RunParity({"check", path});
  EXPECT_EQ(r.exit_code, 2);
  // Newlines inside [ ] do not end a statement, so the parser notices at the `}` of line 5.
  EXPECT_THAT(r.err, HasSubstr("bad.pipe:5:1: error[parse]: expected `]` after barrier index"));
}

TEST(CliCheck, MissingFileExitsTwo) {
  CliResult r = RunParity({"check", "/no/such/file.pipe"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("/no/such/file.pipe"));
}

TEST(CliCheck, BadDefineExitsTwo) {
  CliResult r = RunParity({"check", Example("single_tma_load"), "-D", "NOPE=3"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("NOPE"));
  r = RunParity({"check", Example("single_tma_load"), "-D", "STAGES"});
  EXPECT_EQ(r.exit_code, 2);
}

TEST(CliCheck, UnknownPolicyExitsTwo) {
  CliResult r = RunParity({"check", Example("single_tma_load"), "--policy", "fastest"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("fastest"));
}

TEST(CliRun, WritesATraceFile) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  std::string trace = std::string(tmp ? tmp : "/tmp") + "/t.trace";
  CliResult r = RunParity({"run", Example("single_tma_load"), "--trace", trace, "--dump"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("events written to"));
  std::ifstream in(trace, std::ios::binary);
  char magic[8] = {};
  in.read(magic, 8);
  EXPECT_EQ(std::string(magic, 8), "PARITYTR");
}

TEST(CliExplain, NarratesPhaseFlips) {
  CliResult r = RunParity({"explain", Example("single_tma_load")});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("PHASE COMPLETE full[0] of CTA 0"));
  EXPECT_THAT(r.out, HasSubstr("this completes phase 0 of full[0] of CTA 0: no arrival left to "
                               "come and tx-count 0"));
  EXPECT_THAT(r.out, HasSubstr("returns at once: parity 0 names phase 0, the preceding phase, "
                               "complete since event 6."));
  EXPECT_THAT(r.out, HasSubstr("Outcome: completed"));
}

}  // namespace
}  // namespace parity::testing
