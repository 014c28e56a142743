// Regression tests of issue 29's defects: bad input is exit 2 with file:line:col and the rule,
// never a crash or an internal error (exit 3), and never a false OK.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include "parity/parity.h"
#include "tests/tools/cli_runner.h"

namespace parity::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// One CTA, one TMA load: the smallest complete schedule; each test edits one line of it.
constexpr const char* kBase = R"(schedule base
param ROWS = 64
param BYTES = ROWS * 128
cluster 1x1
clusters 1
buffer tile[1] bytes BYTES
barrier full[1] count 1
tensormap tm dtype f16 dims [1024, 1024] box [64, ROWS] swizzle 128B
role producer threads 1 {
  init full[0]
  fence.mbarrier_init
  arrive.expect_tx full[0] bytes BYTES
  tma.load tm coords [0, 0] -> tile[0] bar full[0]
  wait full[0] parity 0
  use tile[0]
}
)";

std::string Replace(std::string text, const std::string& from, const std::string& to) {
  const size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

std::string Write(const std::string& name, const std::string& text) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  const std::string path = std::string(tmp ? tmp : "/tmp") + "/" + name;
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

// Exit 2, the rule and the file:line: of the offending declaration.
void ExpectBadInput(const CliResult& r, const std::string& rule, const std::string& where) {
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr("[" + rule + "]"));
  EXPECT_THAT(r.err, HasSubstr(where));
  EXPECT_THAT(r.err, Not(HasSubstr("internal error")));
}

TEST(Robustness, BaseScheduleIsClean) {
  const std::string f = Write("base.pipe", kBase);
  EXPECT_EQ(RunParity({"check", f}).exit_code, 0);
}

// Defect 1: a tx operand outside u32 reached the model's internal check.
TEST(Robustness, TxBytesOutsideU32AreBadInput) {
  std::string f = Write("tx_big.pipe", Replace(kBase, "bytes BYTES\n  tma", "bytes 4294967296\n  tma"));
  ExpectBadInput(RunParity({"check", f}), "engine.tx-range", "tx_big.pipe:12:3");
  f = Write("tx_neg.pipe", Replace(kBase, "  wait full[0]", "  complete_tx full[0] bytes -1\n  wait full[0]"));
  ExpectBadInput(RunParity({"check", f}), "engine.tx-range", "tx_neg.pipe:14:3");
}

// Defect 2: a cluster without agents built a cluster barrier of no participants.
TEST(Robustness, ClusterWithoutAgentsIsBadInput) {
  const std::string f = Write("count0.pipe", Replace(kBase, "role producer threads 1 {",
                                                     "role producer count 0 threads 1 {"));
  ExpectBadInput(RunParity({"check", f}), "engine.no-agents", "count0.pipe:9:");
  ExpectBadInput(RunParity({"explain", f}), "engine.no-agents", "count0.pipe:9:");
}

// Defects 3 and 13: the cluster size product overflowed; the error had no line:col.
TEST(Robustness, ClusterShapeOverflowIsBadInputAtTheDeclaration) {
  std::string f = Write("shape.pipe", Replace(kBase, "cluster 1x1", "cluster 9223372036854775807x2"));
  ExpectBadInput(RunParity({"check", f}), "engine.cluster-shape", "shape.pipe:4:9");
  f = Write("shape2.pipe", Replace(kBase, "cluster 1x1", "cluster (1<<62)x4"));
  ExpectBadInput(RunParity({"check", f}), "engine.cluster-shape", "shape2.pipe:4:");
  f = Write("clusters.pipe", Replace(kBase, "clusters 1", "clusters 70000"));
  ExpectBadInput(RunParity({"check", f}), "engine.clusters", "clusters.pipe:5:10");
}

// Defect 4: a long left-associative chain overflowed the evaluators' stack.
TEST(Robustness, LongOperatorChainsAreRefusedNotACrash) {
  std::string chain = "1";
  for (int i = 0; i < 10000; ++i) chain += "+1";
  std::string f = Write("chain.pipe", Replace(kBase, "param ROWS = 64", "param ROWS = " + chain));
  ExpectBadInput(RunParity({"check", f}), "parse.expr-too-deep", "chain.pipe:2:");
  f = Write("let.pipe", Replace(kBase, "  init full[0]", "  let x = " + chain + "\n  init full[0]"));
  ExpectBadInput(RunParity({"check", f}), "parse.expr-too-deep", "let.pipe:10:");
  // A chain within the limit still evaluates.
  std::string ok = "0";
  for (int i = 0; i < 64; ++i) ok += "+1";
  f = Write("chain_ok.pipe", Replace(kBase, "param ROWS = 64", "param ROWS = " + ok));
  EXPECT_EQ(RunParity({"check", f}).exit_code, 0);
}

// Defects 9 and 10: directories and devices as inputs.
TEST(Robustness, DirectoriesAndDevicesAreRefused) {
  const std::string dir = std::getenv("TEST_TMPDIR") ? std::getenv("TEST_TMPDIR") : "/tmp";
  const std::string f = Write("base2.pipe", kBase);
  CliResult r = RunParity({"check", dir});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("is a directory"));
  r = RunParity({"replay", f, dir});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("is a directory"));
  r = RunParity({"check", "/dev/zero"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("not a regular file"));
  r = RunParity({"trace", "export", "--perfetto", dir + "/out.json", "/dev/zero"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("not a regular file"));
}

// Every input goes through one reader (sim/common/read_file.h): the C++ API and each command
// that reads a schedule refuse the same paths with the same words.
TEST(Robustness, OneReaderOneMessage) {
  const std::string dir = std::getenv("TEST_TMPDIR") ? std::getenv("TEST_TMPDIR") : "/tmp";
  for (const std::string& path : {dir, std::string("/dev/zero"), dir + "/no_such.pipe"}) {
    const auto api = api::Schedule::FromFile(path);
    ASSERT_FALSE(api.ok()) << path;
    const std::string said = "parity: " + api.error().ToString() + "\n";
    for (const char* command : {"check", "explore", "explain"}) {
      const CliResult r = RunParity({command, path});
      EXPECT_EQ(r.exit_code, 2) << command << " " << path;
      EXPECT_EQ(r.err, said) << command << " " << path;
    }
  }
  const CliResult r = RunParity({"import", dir + "/no_such.ptx", "--entry", "k", "--block", "128"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("cannot read the PTX file: "));
}

TEST(Robustness, OversizedScheduleFileIsRefused) {
  std::string big(17u << 20, '#');
  const std::string f = Write("big.pipe", big);
  const CliResult r = RunParity({"check", f});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("larger than 16 MiB"));
}

// Defect 12: stages x bytes wrapped to 0 (and stages was truncated): a false OK.
TEST(Robustness, HugeBufferIsNotAFalseOk) {
  const std::string f = Write("buf.pipe", Replace(kBase, "buffer tile[1] bytes BYTES",
                                                  "buffer tile[1125899906842624] bytes 16384"));
  ExpectBadInput(RunParity({"check", f}), "engine.smem-size", "buf.pipe:6:");
}

// Defect 14: `-D X=--4` read as 4; a lone CR did not end a line.
TEST(Robustness, DoubleSignedDefineIsRefused) {
  const std::string f = Write("base3.pipe", kBase);
  CliResult r = RunParity({"check", f, "-D", "ROWS=--4"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("not an integer"));
  r = RunParity({"check", f, "-D", "ROWS=-+4"});
  EXPECT_EQ(r.exit_code, 2);
  r = RunParity({"check", f, "-D", "ROWS=64"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

TEST(Robustness, CrOnlyLineEndingsEndLines) {
  std::string cr = kBase;
  for (char& c : cr) {
    if (c == '\n') c = '\r';
  }
  std::string f = Write("cr.pipe", cr);
  CliResult r = RunParity({"check", f});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  // Errors still name the right line.
  f = Write("cr_bad.pipe", Replace(cr, "clusters 1", "clusters 0"));
  ExpectBadInput(RunParity({"check", f}), "engine.clusters", "cr_bad.pipe:5:");
}

// Defect 8: bytes that are not UTF-8 (here in the file name, which is also the default schedule
// name and so lands in the trace header) made the JSON writers throw.
TEST(Robustness, NonUtf8NamesDoNotBreakJson) {
  const std::string f = Write("bad\xff\xfe.pipe", Replace(kBase, "schedule base\n", ""));
  CliResult r = RunParity({"check", f, "--format", "json"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("\xEF\xBF\xBD"));  // U+FFFD in place of the bad bytes
  const std::string dir = std::getenv("TEST_TMPDIR") ? std::getenv("TEST_TMPDIR") : "/tmp";
  const std::string trace = dir + "/bad.trace";
  r = RunParity({"run", f, "--trace", trace});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = RunParity({"trace", "export", "--perfetto", dir + "/bad.json", trace});
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

// Defect 11: a name the trace header cannot hold passed check and crashed run --trace.
TEST(Robustness, NamesTooLongForATraceAreRefusedAtCheck) {
  const std::string name(5000, 'P');
  const std::string f = Write("long.pipe", Replace(kBase, "param ROWS = 64", "param ROWS = 64\nparam " + name + " = 1"));
  CliResult r = RunParity({"check", f});
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_THAT(r.err, HasSubstr("long.pipe:3:7"));
  EXPECT_THAT(r.err, HasSubstr("names are at most 1024"));
  const std::string dir = std::getenv("TEST_TMPDIR") ? std::getenv("TEST_TMPDIR") : "/tmp";
  r = RunParity({"run", f, "--trace", dir + "/long.trace"});
  EXPECT_EQ(r.exit_code, 2);
}

// Defect 5: a schedule that never ends grew memory until bad_alloc (exit 3) in check, run and
// explain; explore ended the same way even with --time-limit.
constexpr const char* kEndless = R"(schedule endless
cluster 1x1
buffer b[1] bytes 128
role r threads 1 {
  for i in 0 .. 1000000000000 {
    fence.proxy.async
  }
}
)";

TEST(Robustness, EndlessRunsStopAtTheEventCap) {
  const std::string f = Write("endless.pipe", kEndless);
  for (const char* cmd : {"check", "explain"}) {
    const CliResult r = RunParity({cmd, "--max-events", "5000", f});
    EXPECT_EQ(r.exit_code, 2) << cmd << r.err;
    EXPECT_THAT(r.err, HasSubstr("[limit.events]"));
    EXPECT_THAT(r.err, HasSubstr("after 5000 events"));
    EXPECT_THAT(r.err, HasSubstr("--max-events"));
  }
  const std::string dir = std::getenv("TEST_TMPDIR") ? std::getenv("TEST_TMPDIR") : "/tmp";
  CliResult r = RunParity({"run", "--max-events", "5000", "--trace", dir + "/e.trace", f});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("--max-events"));
  // The default cap applies without the option (20M events, about a second).
  r = RunParity({"check", f});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("after 20000000 events"));
  // A run under the cap is unaffected.
  const std::string ok = Write("base5.pipe", kBase);
  EXPECT_EQ(RunParity({"check", "--max-events", "100", ok}).exit_code, 0);
}

TEST(Robustness, ExploreStopsAtMaxMemoryWithExit4) {
  const std::string f = Write("endless2.pipe", kEndless);
  const CliResult r = RunParity({"explore", "--max-memory", "200", f});
  EXPECT_EQ(r.exit_code, 4) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("INCOMPLETE"));
  EXPECT_THAT(r.out, HasSubstr("--max-memory 200 MiB"));
}

// Running out of memory is an incomplete run (exit 4, limit.memory), never an internal error
// (exit 3): here the endless run's trace outgrows a 200 MB address space before the event cap.
TEST(Robustness, OutOfMemoryIsExit4Incomplete) {
  const std::string f = Write("endless3.pipe", kEndless);
  for (const char* format : {"text", "json"}) {
    const CliResult r = RunBinary(
        "/bin/sh", {"-c", "ulimit -v 200000 && exec \"$0\" check --format \"$1\" \"$2\"",
                    Runfile("tools/cli/parity"), format, f});
    EXPECT_EQ(r.exit_code, 4) << format << r.out << r.err;
    EXPECT_THAT(r.err, HasSubstr("[limit.memory]: out of memory: the check stopped"));
    EXPECT_THAT(r.err, HasSubstr("NOT verified"));
    EXPECT_THAT(r.err, Not(HasSubstr("internal error")));
    if (std::string(format) == "json") {
      EXPECT_THAT(r.out, HasSubstr("\"limit.memory\""));
    }
  }
}

TEST(Robustness, RingZeroSaysPositiveInteger) {
  const std::string f = Write("base4.pipe", kBase);
  const CliResult r = RunParity({"gpu", "run", f, "--ring", "0"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("positive integer"));
  EXPECT_THAT(r.err, Not(HasSubstr("e+308")));
  EXPECT_THAT(r.err, Not(HasSubstr("1797693")));
}

}  // namespace
}  // namespace parity::testing
