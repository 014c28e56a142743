// `parity explore`: its verdicts, exit codes (0 verified, 1 found, 2 bad input, 4 incomplete)
// and what it claims to have covered when a bound stops it.
#include <algorithm>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/tools/cli_runner.h"

namespace parity::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TEST(CliExplore, CorrectPipelineIsVerified) {
  CliResult r = RunParity({"explore", "pipelines/single_tma_load/count1.pipe"});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("VERIFIED: the search was complete"));
  EXPECT_THAT(r.out, HasSubstr("bytes/state"));
  // No work nobody asked for: the brute-force search runs only with --measure-reduction, and
  // the symmetry reduction's account only with --verbose.
  EXPECT_THAT(r.out, Not(HasSubstr("brute force")));
  EXPECT_THAT(r.out, Not(HasSubstr("reduction factor")));
  EXPECT_THAT(r.out, Not(HasSubstr("symmetry")));
  EXPECT_TRUE(r.out.ends_with("\n0 errors\n")) << r.out;
  CliResult v = RunParity({"explore", "pipelines/single_tma_load/count1.pipe", "--verbose"});
  EXPECT_EQ(v.exit_code, 0) << v.out << v.err;
  EXPECT_THAT(v.out, HasSubstr("symmetry"));
}

// The brute-force search behind the reduction factor says how many of its transitions it
// took without stepping (successor prediction); the reduced search predicts none, so its line
// (printed first) does not say it: the first mention comes after the brute-force label.
TEST(CliExplore, BruteForceLineCountsPredictedTransitions) {
  CliResult r = RunParity({"explore", "sim/examples/explore/ring_2p2c.pipe", "-D", "STAGES=2",
                           "-D", "K_TILES=3", "--measure-reduction"});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  const size_t brute = r.out.find("brute force (no reduction");
  ASSERT_NE(brute, std::string::npos) << r.out;
  EXPECT_THAT(r.out, HasSubstr("reduction factor: "));
  const size_t predicted = r.out.find("to stored states predicted without stepping");
  EXPECT_NE(predicted, std::string::npos) << r.out;
  EXPECT_GT(predicted, brute) << r.out;
}

TEST(CliExplore, ScheduleDependentDeadlockIsFoundWithACounterexample) {
  CliResult r = RunParity({"explore", "sim/examples/explore/poll_instead_of_wait.pipe"});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("FOUND: a reachable interleaving deadlocks (P2001)"));
  EXPECT_THAT(r.out, HasSubstr("State 1:"));
  EXPECT_THAT(r.out, HasSubstr("P2001 deadlock"));
}

// --threads 2: the parallel depth-first search (verifier/parallel_dfs.h) says what it is and
// gives the one-thread verdicts: verified, a deadlock with its counterexample (exit 1), and
// incomplete under a bound (exit 4).
TEST(CliExplore, TwoThreadsSearchDepthFirstWithTheSameVerdicts) {
  CliResult ok = RunParity({"explore", "pipelines/ws_gemm/pingpong.pipe", "--threads", "2"});
  EXPECT_EQ(ok.exit_code, 0) << ok.out << ok.err;
  EXPECT_THAT(ok.out, HasSubstr("depth-first on parallel threads"));
  EXPECT_THAT(ok.out, HasSubstr("VERIFIED: the search was complete"));
  CliResult bad =
      RunParity({"explore", "sim/examples/explore/poll_instead_of_wait.pipe", "--threads", "2"});
  EXPECT_EQ(bad.exit_code, 1) << bad.out << bad.err;
  EXPECT_THAT(bad.out, HasSubstr("FOUND: a reachable interleaving deadlocks (P2001)"));
  EXPECT_THAT(bad.out, HasSubstr("counterexample: "));
  EXPECT_THAT(bad.out, HasSubstr("State 0: initial state"));
  CliResult cut = RunParity(
      {"explore", "pipelines/tma_async_gemm/gemm.pipe", "--max-states", "200", "--threads", "2"});
  EXPECT_EQ(cut.exit_code, 4) << cut.out << cut.err;
}

// The steps a search did not take when it stopped at a finding are not blamed on a bound (the
// search line said "left when the bound stopped the search" with no bound given).
TEST(CliExplore, StepsLeftAtAFindingAreNotBlamedOnABound) {
  CliResult r = RunParity({"explore", "sim/examples/explore/phase_overrun.pipe"});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("left when the search stopped at its finding"));
  EXPECT_THAT(r.out, Not(HasSubstr("bound")));
}

// A depth-first search stopped by a bound has covered some paths, not whole levels: it must
// not claim that every state within its depth was reached (it did: "within 707 steps" after
// 1000 states).
TEST(CliExplore, IncompleteDepthFirstSearchClaimsNoLevels) {
  CliResult r =
      RunParity({"explore", "pipelines/tma_async_gemm/gemm.pipe", "--max-states", "500"});
  EXPECT_EQ(r.exit_code, 4) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("INCOMPLETE (not verified): --max-states 500 stopped the "
                               "search after 500 states"));
  EXPECT_THAT(r.out, HasSubstr("only part of the state graph (depth-first"));
  EXPECT_THAT(r.out, Not(HasSubstr("every state reachable within")));
  EXPECT_THAT(r.out, HasSubstr("left when the bound stopped the search"));
  EXPECT_THAT(r.out, Not(HasSubstr("VERIFIED")));
}

TEST(CliExplore, IncompleteBreadthFirstSearchNamesTheCompleteLevels) {
  CliResult r = RunParity(
      {"explore", "pipelines/tma_async_gemm/gemm.pipe", "--max-states", "200", "--bfs"});
  EXPECT_EQ(r.exit_code, 4) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("covered: every state reachable within"));
  EXPECT_THAT(r.out, HasSubstr("and part of the next level"));
}

TEST(CliExplore, BadInputIsExitTwoNamingTheProblem) {
  CliResult r = RunParity({"explore", "pipelines/single_tma_load/count1.pipe", "-D", "NOPE=3"});
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr("unknown parameter `NOPE`"));
  r = RunParity({"explore", "no/such/file.pipe"});
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr("no/such/file.pipe"));
}

// Bounds that cannot mean anything are usage errors, not a search (--threads 0 and -3 ran
// on one thread; --max-states 0 stored one state and called the search incomplete; a negative
// --time-limit meant no limit).
TEST(CliExplore, MeaninglessBoundsAreExitTwo) {
  const struct {
    const char* option;
    const char* value;
    const char* message;
  } cases[] = {
      {"--threads", "0", "--threads: Value 0 not in range 1 to 1024"},
      {"--threads", "-3", "--threads: Value -3 not in range 1 to 1024"},
      {"--max-states", "0", "--max-states: must be at least 1 (got 0)"},
      {"--time-limit", "-1", "--time-limit: must be at least 0 (0: no time limit) (got -1)"},
  };
  for (const auto& c : cases) {
    CliResult r =
        RunParity({"explore", "pipelines/single_tma_load/count1.pipe", c.option, c.value});
    EXPECT_EQ(r.exit_code, 2) << c.option << " " << c.value << "\n" << r.out << r.err;
    EXPECT_THAT(r.err, HasSubstr(c.message));
    EXPECT_THAT(r.out, Not(HasSubstr("search (depth-first)")));
  }
  CliResult ok = RunParity({"explore", "pipelines/single_tma_load/count1.pipe", "--time-limit",
                            "0", "--max-states", "1", "--threads", "1"});
  EXPECT_EQ(ok.exit_code, 4) << ok.out << ok.err;  // one state stored: incomplete, not verified
}

// The depth-first search's finding is announced as soon as it is found (with the length of its
// counterexample), before the search's statistics (which come once the shortening is done); at
// the end the diagnosis comes first, then the reported counterexample, no longer than the first,
// saying how it was obtained, and the summary line last. --verbose prints the first one in full.
TEST(CliExplore, FindingIsAnnouncedThenDiagnosedThenShown) {
  CliResult r = RunParity({"explore", "pipelines/cuda_pipeline/bad_prefetch_tail_wait.pipe",
                           "--shorten-budget", "0.5"});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  const size_t found = r.out.find("FOUND after ");
  const size_t stats = r.out.find("search (depth-first):");
  ASSERT_NE(found, std::string::npos) << r.out;
  ASSERT_NE(stats, std::string::npos) << r.out;
  EXPECT_LT(found, stats);
  EXPECT_THAT(r.out, Not(HasSubstr("First counterexample (")));
  EXPECT_THAT(r.out, HasSubstr("shortening it (at most 0.5 s"));
  const size_t of = r.out.find("a counterexample of ", found);
  ASSERT_NE(of, std::string::npos) << r.out;
  const size_t first_len = std::stoul(r.out.substr(of + 20));
  const size_t verdict = r.out.find("\nFOUND: ", stats);
  ASSERT_NE(verdict, std::string::npos) << r.out;
  // The schedule has two bugs: the depth-first path ends in the race P2005; a shortening that
  // gets further within its budget may reach the exit with copies in flight (A1003) sooner.
  const size_t diagnosis = std::min(r.out.find("P2005 ", verdict), r.out.find("A1003 ", verdict));
  const size_t final_at = r.out.find("counterexample: ", verdict);
  ASSERT_NE(diagnosis, std::string::npos) << r.out;
  ASSERT_NE(final_at, std::string::npos) << r.out;
  EXPECT_LT(diagnosis, final_at);
  const size_t final_len = std::stoul(r.out.substr(final_at + 16));
  EXPECT_LE(final_len, first_len);
  EXPECT_THAT(r.out.substr(final_at), HasSubstr("dropped by replaying without them"));
  // The shortening's budget is named as what stopped it, not --time-limit (none was given).
  EXPECT_THAT(r.out, Not(HasSubstr("--time-limit at depth")));
  // The summary line comes last (how many findings the shortened path ends with depends on
  // how far the time-bounded shortening got).
  ASSERT_FALSE(r.out.empty());
  const size_t last_line = r.out.rfind('\n', r.out.size() - 2);
  EXPECT_THAT(r.out.substr(last_line + 1),
              ::testing::MatchesRegex("[0-9]+ errors?, 0 warnings, 0 notes.*\n"));
  CliResult v = RunParity({"explore", "pipelines/cuda_pipeline/bad_prefetch_tail_wait.pipe",
                           "--shorten-budget", "0.5", "--verbose"});
  EXPECT_EQ(v.exit_code, 1) << v.out << v.err;
  EXPECT_THAT(v.out, HasSubstr("First counterexample (" + std::to_string(first_len) + " steps"));
}

// --shortest: the breadth-first search runs without the budget and the result says shortest;
// --shorten-budget 0: the first counterexample is the one reported.
TEST(CliExplore, ShortestAndNoShortening) {
  CliResult s = RunParity({"explore", "sim/examples/explore/phase_overrun.pipe", "--shortest"});
  EXPECT_EQ(s.exit_code, 1) << s.out << s.err;
  EXPECT_THAT(s.out, HasSubstr("searching breadth-first for the shortest counterexample"));
  EXPECT_THAT(s.out, HasSubstr("(shortest in the explored graph)"));
  CliResult n =
      RunParity({"explore", "sim/examples/explore/phase_overrun.pipe", "--shorten-budget", "0"});
  EXPECT_EQ(n.exit_code, 1) << n.out << n.err;
  EXPECT_THAT(n.out, HasSubstr("The counterexample: 11 steps (the depth-first search's path, "
                               "not shortened; NOT known to be the shortest)"));
  // M1009 is a note wherever it is printed, naming its barrier.
  EXPECT_THAT(n.out, HasSubstr("note M1009 a phase completes before any wait observed the "
                               "previous phase (full[0] of CTA 0)"));
  EXPECT_THAT(n.out, Not(HasSubstr("VIOLATION M1009")));
}

}  // namespace
}  // namespace parity::testing
