// How check and explore report, like a compiler (tools/cli/diagnostics.h): grouped diagnostics
// ("and N more like it"), --max-findings/--all, a closing `N errors, M warnings, K notes` line,
// text/JSON/SARIF agreeing on the counts, a flood that fits a screen, suppressions (inline
// `# parity: allow` and --suppressions), and notes reported as notes everywhere.
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/tools/cli_runner.h"

namespace parity::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

std::string Read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream in(text);
  std::string line;
  while (std::getline(in, line)) out.push_back(line);
  return out;
}

std::string TmpPath(const std::string& name) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  return std::string(tmp != nullptr ? tmp : "/tmp") + "/" + name;
}

// gemm_tma_multicast_2x2 with fence.proxy.async in place of its fence.mbarrier_init: every
// remote arrive and multicast completion of the run is a P2007 (96 findings), the flood of one
// mistake. (The proxy fence keeps the inits visible to the CTA's own copies: without any fence
// each CTA's own complete_tx is a P2006 too.) `edit` may change the lines (1-based numbering of
// the result) before the file is written.
std::string WriteFlood(const std::string& name,
                       void (*edit)(std::vector<std::string>&) = nullptr) {
  std::vector<std::string> lines;
  for (const std::string& l : Lines(Read("sim/examples/gemm_tma_multicast_2x2.pipe"))) {
    if (l.find("fence.mbarrier_init") != std::string::npos &&
        l.find_first_not_of(' ') == l.find("fence")) {
      lines.push_back(l.substr(0, l.find("fence")) + "fence.proxy.async");
      continue;
    }
    lines.push_back(l);
  }
  if (edit != nullptr) edit(lines);
  const std::string path = TmpPath(name);
  std::ofstream out(path);
  for (const std::string& l : lines) out << l << "\n";
  return path;
}

// The 1-based number of the first line containing `needle` (0 when none).
int LineOf(const std::vector<std::string>& lines, const std::string& needle) {
  for (size_t i = 0; i < lines.size(); ++i) {
    if (lines[i].find(needle) != std::string::npos) return static_cast<int>(i) + 1;
  }
  return 0;
}

TEST(CliReport, FloodFitsAScreenWithGroupedDiagnosticsAndASummary) {
  const std::string flood = WriteFlood("flood.pipe");
  CliResult r = RunParity({"check", flood});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  const std::vector<std::string> lines = Lines(r.out);
  EXPECT_LE(lines.size(), 80u) << r.out;
  EXPECT_THAT(r.out, HasSubstr("more like it: CTAs "));
  ASSERT_FALSE(lines.empty());
  EXPECT_THAT(lines.back(), ::testing::MatchesRegex(
                                "[0-9]+ errors, 0 warnings, 0 notes \\(96 findings in [0-9]+ "
                                "diagnostics\\)"));
  // JSON: every finding, the same groups and counts.
  CliResult j = RunParity({"check", flood, "--format", "json"});
  EXPECT_EQ(j.exit_code, 1) << j.err;
  const nlohmann::json doc = nlohmann::json::parse(j.out);
  EXPECT_EQ(doc["findings"].size(), 96u);
  EXPECT_EQ(doc["summary"]["findings"], 96);
  EXPECT_EQ(doc["summary"]["text"], lines.back());
  const size_t errors = doc["summary"]["errors"];
  EXPECT_EQ(doc["diagnostics"].size(), errors);
  size_t members = 0;
  for (const auto& d : doc["diagnostics"]) members += d["count"].get<size_t>();
  EXPECT_EQ(members, 96u);
  // SARIF: one result per diagnostic, its findings as occurrenceCount; the summary in the run.
  CliResult s = RunParity({"check", flood, "--format", "sarif"});
  EXPECT_EQ(s.exit_code, 1) << s.err;
  const nlohmann::json sarif = nlohmann::json::parse(s.out);
  const auto& run = sarif["runs"][0];
  EXPECT_EQ(run["results"].size(), errors);
  size_t occurrences = 0;
  for (const auto& res : run["results"]) occurrences += res.value("occurrenceCount", 1);
  EXPECT_EQ(occurrences, 96u);
  EXPECT_EQ(run["properties"]["summary"]["text"], lines.back());
  // --max-findings cuts the printed diagnostics, not the counts; --all prints every one.
  CliResult two = RunParity({"check", flood, "--max-findings", "2"});
  EXPECT_THAT(two.out, HasSubstr(std::to_string(errors - 2) + " diagnostics more not shown"));
  EXPECT_EQ(Lines(two.out).back(), lines.back());
  CliResult all = RunParity({"check", flood, "--all", "--max-findings", "1"});
  EXPECT_THAT(all.out, Not(HasSubstr("more not shown")));
}

// Cluster-wide deadlocks with many blocked agents and many findings: each report fits a screen.
TEST(CliReport, KnownBadSchedulesFitAScreen) {
  for (const char* file : {"sim/examples/gemm_tx_overcount.pipe",
                           "sim/examples/gemm_empty_count_high.pipe",
                           "pipelines/tma_async_gemm/bad_tx_own_slices.pipe"}) {
    CliResult r = RunParity({"check", file});
    EXPECT_EQ(r.exit_code, 1) << file << r.err;
    EXPECT_LE(Lines(r.out).size(), 80u) << r.out;
    EXPECT_THAT(Lines(r.out).back(), ::testing::MatchesRegex("[0-9]+ errors?, .*")) << file;
  }
}

TEST(CliReport, ExploreOfTheFloodFitsAScreenDiagnosisFirst) {
  const std::string flood = WriteFlood("flood_explore.pipe");
  CliResult r = RunParity({"explore", flood, "--shorten-budget", "0.5"});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  const std::vector<std::string> lines = Lines(r.out);
  EXPECT_LE(lines.size(), 80u) << r.out;
  const size_t found = r.out.find("\nFOUND: ");
  const size_t diagnosis = r.out.find("\nP2007 ", found);
  const size_t steps = r.out.find("counterexample: ", found);
  ASSERT_NE(found, std::string::npos) << r.out;
  ASSERT_NE(diagnosis, std::string::npos) << r.out;
  ASSERT_NE(steps, std::string::npos) << r.out;
  EXPECT_LT(diagnosis, steps);
  EXPECT_THAT(lines.back(), ::testing::MatchesRegex("[0-9]+ errors?, 0 warnings, 0 notes.*"));
  // JSON and SARIF count what the text counts (without shortening, which a time budget bounds,
  // the three runs report the same counterexample).
  CliResult t = RunParity({"explore", flood, "--shorten-budget", "0"});
  const std::string summary = Lines(t.out).back();
  CliResult j = RunParity({"explore", flood, "--shorten-budget", "0", "--format", "json"});
  EXPECT_EQ(j.exit_code, 1) << j.err;
  const nlohmann::json doc = nlohmann::json::parse(j.out);
  EXPECT_EQ(doc["summary"]["text"], summary);
  CliResult s = RunParity({"explore", flood, "--shorten-budget", "0", "--format", "sarif"});
  const nlohmann::json run = nlohmann::json::parse(s.out)["runs"][0];
  EXPECT_EQ(run["properties"]["summary"]["text"], summary);
  EXPECT_EQ(run["results"].size(), doc["diagnostics"].size());
  // --full prints every step of the counterexample.
  CliResult full = RunParity({"explore", flood, "--shorten-budget", "0.5", "--full"});
  EXPECT_GT(Lines(full.out).size(), lines.size());
}

TEST(CliReport, CleanRunsEndWithZeroErrors) {
  CliResult c = RunParity({"check", "pipelines/single_tma_load/count1.pipe"});
  EXPECT_EQ(c.exit_code, 0) << c.out << c.err;
  EXPECT_EQ(Lines(c.out).back(), "0 errors");
  CliResult j = RunParity({"check", "pipelines/single_tma_load/count1.pipe", "--format", "json"});
  EXPECT_EQ(nlohmann::json::parse(j.out)["summary"]["text"], "0 errors");
}

// An allow on the line of the finding's operation suppresses it: counted, not printed (unless
// --show-suppressed), exit 0 when nothing else is wrong, SARIF `suppressions` with the reason.
// An allow that matches nothing is a warning.
TEST(CliReport, InlineAllowSuppressesAndAnUnusedOneWarns) {
  const std::string path = WriteFlood("flood_allowed.pipe", [](std::vector<std::string>& l) {
    for (const char* op : {"tma.load tmA", "tma.load tmB", "arrive empty[s] mask"}) {
      l[LineOf(l, op) - 1] += "   # parity: allow P2007 -- test: the init fence is elsewhere";
    }
  });
  CliResult r = RunParity({"check", path});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(Lines(r.out).back(), "0 errors, 96 suppressed") << r.out;
  EXPECT_THAT(r.out, Not(HasSubstr("P2007 remote")));
  CliResult shown = RunParity({"check", path, "--show-suppressed"});
  EXPECT_THAT(shown.out, HasSubstr("suppressed (allowed at "));
  EXPECT_THAT(shown.out, HasSubstr("test: the init fence is elsewhere"));
  CliResult s = RunParity({"check", path, "--format", "sarif"});
  EXPECT_EQ(s.exit_code, 0) << s.err;
  const nlohmann::json run = nlohmann::json::parse(s.out)["runs"][0];
  ASSERT_FALSE(run["results"].empty());
  for (const auto& res : run["results"]) {
    ASSERT_TRUE(res.contains("suppressions")) << res.dump();
    EXPECT_EQ(res["suppressions"][0]["kind"], "inSource");
    EXPECT_EQ(res["suppressions"][0]["justification"], "test: the init fence is elsewhere");
  }
  EXPECT_EQ(run["properties"]["summary"]["suppressed"], 96);
  // explore stops at its first finding: with that one allowed nothing beyond it was searched,
  // so the verdict is incomplete (exit 4), never verified.
  CliResult e = RunParity({"explore", path, "--shorten-budget", "0.2"});
  EXPECT_EQ(e.exit_code, 4) << e.out << e.err;
  EXPECT_THAT(e.out, HasSubstr("INCOMPLETE (not verified): the search stopped at a finding the "
                               "schedule allows"));
  EXPECT_THAT(e.out, Not(HasSubstr("VERIFIED")));
  // One allow that matches nothing (P2005 on the expect_tx line): a warning, counted.
  const std::string extra = WriteFlood("flood_unused.pipe", [](std::vector<std::string>& l) {
    l[LineOf(l, "arrive.expect_tx full[s]") - 1] += "  # parity: allow P2005 -- never raced";
  });
  CliResult u = RunParity({"check", extra});
  EXPECT_THAT(u.out, HasSubstr(": warning: `allow P2005` matches no finding of this run"));
  EXPECT_THAT(Lines(u.out).back(), ::testing::MatchesRegex("[0-9]+ errors, 1 warning, 0 notes.*"));
}

TEST(CliReport, SuppressionsFileAndMalformedAllows) {
  const std::string flood = WriteFlood("flood_listed.pipe");
  const std::vector<std::string> flood_lines = Lines(Read(flood));
  const std::string list = TmpPath("suppressions.txt");
  {
    std::ofstream out(list);
    out << "# intended findings\n";
    for (const char* op : {"tma.load tmA", "tma.load tmB", "arrive empty[s] mask"}) {
      out << "P2007 " << flood << ":" << LineOf(flood_lines, op) << " -- listed\n";
    }
  }
  CliResult r = RunParity({"check", flood, "--suppressions", list});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(Lines(r.out).back(), HasSubstr("96 suppressed"));
  CliResult s = RunParity({"check", flood, "--suppressions", list, "--format", "sarif"});
  const nlohmann::json run = nlohmann::json::parse(s.out)["runs"][0];
  ASSERT_FALSE(run["results"].empty());
  EXPECT_EQ(run["results"][0]["suppressions"][0]["kind"], "external");
  // Malformed: bad input (exit 2) naming the place and the rule.
  {
    std::ofstream out(list);
    out << "P9999 " << flood << ":3 -- no such rule\n";
  }
  CliResult bad = RunParity({"check", flood, "--suppressions", list});
  EXPECT_EQ(bad.exit_code, 2) << bad.out << bad.err;
  EXPECT_THAT(bad.err, HasSubstr(list + ":1:1: error[suppression]"));
  EXPECT_THAT(bad.err, HasSubstr("`P9999` is not a rule code"));
  const std::string inline_bad = WriteFlood("flood_bad_allow.pipe", [](std::vector<std::string>& l) {
    l[LineOf(l, "tma.load tmA") - 1] += "  # parity: allow -- no code";
  });
  CliResult bad2 = RunParity({"explore", inline_bad});
  EXPECT_EQ(bad2.exit_code, 2) << bad2.out << bad2.err;
  EXPECT_THAT(bad2.err, HasSubstr("error[suppression]"));
}

// M1009 is a note in check's text, JSON and SARIF and in the narration (explain), and its message
// names its barrier instead of repeating its code.
TEST(CliReport, NotesAreNotesEverywhereAndNameTheirBarrier) {
  // The consumers' arrivals complete ready[s] twice before the producer's wait observes it.
  const char* file = "pipelines/cuda_pipeline/bad_count_consumers_only.pipe";
  CliResult j = RunParity({"check", file, "--format", "json"});
  const nlohmann::json doc = nlohmann::json::parse(j.out);
  bool seen = false;
  for (const auto& f : doc["findings"]) {
    if (f["code"] != "M1009") continue;
    seen = true;
    EXPECT_EQ(f["severity"], "note");
    EXPECT_THAT(f["message"].get<std::string>(), HasSubstr("ready["));
    EXPECT_THAT(f["message"].get<std::string>(), Not(HasSubstr("M1009")));
  }
  ASSERT_TRUE(seen) << j.out;
  EXPECT_GE(doc["summary"]["notes"].get<int>(), 1);
  CliResult t = RunParity({"check", file});
  EXPECT_THAT(t.out, HasSubstr("note M1009 a phase completes before any wait observed the "
                               "previous phase: ready[0] of CTA 0: this update completes"));
  CliResult s = RunParity({"check", file, "--format", "sarif"});
  for (const auto& res : nlohmann::json::parse(s.out)["runs"][0]["results"]) {
    if (res["ruleId"] == "M1009") {
      EXPECT_EQ(res["level"], "note");
    }
  }
  CliResult e = RunParity({"explain", file});
  EXPECT_THAT(e.out, HasSubstr("note M1009"));
  EXPECT_THAT(e.out, Not(HasSubstr("VIOLATION M1009")));
}

}  // namespace
}  // namespace parity::testing
