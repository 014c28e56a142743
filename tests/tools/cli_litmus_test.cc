// `parity litmus` end to end: the table, the exit codes (0 agree / not run, 1 an observed
// outcome the model does not allow, 2 garbled or mismatched H100 file, no tests), --write-sim.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "tests/tools/cli_runner.h"

namespace parity::testing {
namespace {

namespace fs = std::filesystem;

const char kTest[] = "race_test_wait_vs_arrive";

std::string TmpDir(const std::string& name) {
  const char* base = std::getenv("TEST_TMPDIR");
  fs::path p = fs::path(base ? base : "/tmp") / name;
  fs::remove_all(p);
  fs::create_directories(p);
  return p.string();
}

std::string Read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

void Write(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

std::string Pipe() { return Runfile(std::string("litmus/") + kTest + ".pipe"); }

// The simulator's histogram of kTest, as `--write-sim` writes it.
std::string SimHistogram() {
  const std::string dir = TmpDir("sim");
  CliResult r = RunParity({"litmus", Pipe(), "--h100-dir", dir, "--write-sim", dir});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return Read(dir + "/" + kTest + ".sim.txt");
}

// The same histogram claimed as H100 outcomes.
std::string AsH100(std::string text) {
  const size_t at = text.find("Source=sim");
  EXPECT_NE(at, std::string::npos);
  text.replace(at, 10, "Source=h100");
  return text;
}

TEST(CliLitmus, NotRunOnH100IsListedNotFailed) {
  CliResult r = RunParity({"litmus", Pipe(), "--h100-dir", TmpDir("empty")});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("not run on H100"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(std::string("not run on H100: ") + kTest), std::string::npos) << r.out;
}

TEST(CliLitmus, WriteSimAndAgreement) {
  const std::string sim = SimHistogram();
  EXPECT_EQ(sim.rfind(std::string("Test ") + kTest + "  Hash=", 0), 0u) << sim;
  EXPECT_NE(sim.find("  ok tw{c0a1=0} ph{b[0]@0=1}\n"), std::string::npos) << sim;
  EXPECT_NE(sim.find("  ok tw{c0a1=1} ph{b[0]@0=1}\n"), std::string::npos) << sim;
  const std::string dir = TmpDir("agree");
  Write(dir + "/" + kTest + ".h100.txt", AsH100(sim));
  CliResult r = RunParity({"litmus", Pipe(), "--h100-dir", dir});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("agree"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("allowed, never observed"), std::string::npos) << r.out;
}

TEST(CliLitmus, ObservedOutcomeNotAllowedExitsOne) {
  std::string text = AsH100(SimHistogram());
  // Claim one more run, with an outcome the model does not allow (the observer never waited).
  const size_t runs = text.find("Runs=");
  const size_t eol = text.find('\n');
  const uint64_t n = std::stoull(text.substr(runs + 5, eol - runs - 5));
  text = text.substr(0, runs + 5) + std::to_string(n + 1) + text.substr(eol);
  text += "1  hang{c0a1@b[0]/p0} tw{c0a1=0}\n";
  const std::string dir = TmpDir("tampered");
  Write(dir + "/" + kTest + ".h100.txt", text);
  CliResult r = RunParity({"litmus", Pipe(), "--h100-dir", dir});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("FAIL"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("observed, not allowed: hang{c0a1@b[0]/p0} tw{c0a1=0}  (1 runs)"),
            std::string::npos)
      << r.out;
}

TEST(CliLitmus, GarbledH100FileNamesFileAndLine) {
  const std::string dir = TmpDir("garbled");
  const std::string path = dir + "/" + kTest + ".h100.txt";
  std::string text = AsH100(SimHistogram());
  Write(path, text + "5x  ok\n");
  CliResult r = RunParity({"litmus", Pipe(), "--h100-dir", dir});
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_NE(r.err.find(path + ":4"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("litmus.format"), std::string::npos) << r.err;
}

TEST(CliLitmus, DifferentScheduleHashIsRefused) {
  const std::string dir = TmpDir("hash");
  std::string text = AsH100(SimHistogram());
  const size_t at = text.find("Hash=");
  text.replace(at + 5, 16, "0123456789abcdef");
  Write(dir + "/" + kTest + ".h100.txt", text);
  CliResult r = RunParity({"litmus", Pipe(), "--h100-dir", dir});
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("litmus.hash"), std::string::npos) << r.err;
}

TEST(CliLitmus, NoTestsIsUsageError) {
  CliResult r = RunParity({"litmus"});
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
}

}  // namespace
}  // namespace parity::testing
