// verifier/every_path.h: explore's VERIFIED means no race and no rule violation on any path.
// A schedule whose happens-before depends on the path (the end state is the same on every run)
// is a rule violation for the reduced and the brute-force search, with a counterexample that
// replays to the race; the bundled clean pipelines stay VERIFIED with the every-path search run.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "sim/engine/engine.h"
#include "sim/ir/ir.h"
#include "sim/ir/parser.h"
#include "sim/model/codes.h"
#include "verifier/explore.h"
#include "verifier/rules.h"

namespace parity::verifier {
namespace {

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

ir::Program Parse(const std::string& path) {
  auto p = ir::ParseProgram(ReadFile(path), path);
  EXPECT_TRUE(p.ok()) << p.status().ToString();
  return std::move(p).value();
}

bool HasRace(const std::vector<Finding>& findings, int later_line, int earlier_line) {
  for (const Finding& f : findings) {
    if (f.code() != model::Code::kDataRace) continue;
    const bool named = f.message.find(":" + std::to_string(earlier_line) + ":") !=
                           std::string::npos &&
                       f.message.find(":" + std::to_string(later_line) + ":") != std::string::npos;
    if (named) return true;
  }
  return false;
}

TEST(EveryPathTest, RaceOnOnePathOfTwoToTheSameEndStateIsFound) {
  const std::string file = "tests/verifier/testdata/hb_path_dependent.pipe";
  const ir::Program p = Parse(file);
  auto params = ir::BindParams(p, {});
  ASSERT_TRUE(params.ok());
  for (bool reduction : {true, false}) {
    SCOPED_TRACE(reduction ? "reduced" : "brute force");
    ExploreOptions o;
    o.reduction = reduction;
    o.collect_terminals = true;
    const ExploreResult r = Explore(p, *params, o);
    EXPECT_EQ(r.verdict, ExploreVerdict::kRuleViolation) << ExploreVerdictName(r.verdict);
    // One end state only: one path per end state could not see both histories.
    EXPECT_EQ(r.terminals.size(), 1u);
    EXPECT_EQ(r.stats.completed_ends, 1u);
    EXPECT_GE(r.stats.history_completed, 1u);
    // The write (line 23) and the read (line 41), both named.
    EXPECT_TRUE(HasRace(r.findings, 41, 23) || HasRace(r.findings, 23, 41));
    auto end = Replay(p, *params, r.counterexample);
    ASSERT_TRUE(end.ok());
    EXPECT_EQ(end->outcome(), engine::Outcome::kCompleted);
    EXPECT_TRUE(HasErrors(CheckRules(p, *end, end->trace())));
  }
  // Without the rules the same search is VERIFIED (no deadlock, no violation): the finding is
  // the every-path rule check's.
  ExploreOptions off;
  off.check_rules = false;
  EXPECT_EQ(Explore(p, *params, off).verdict, ExploreVerdict::kVerified);
}

// A named barrier that two warpgroups share (tile-ai/TileOPs b39c3189): every run ends in the
// same state, and which warps' arrivals complete which instance depends on the path; the
// instance an arrival joined is part of the history digest, so the racing path is checked. With
// one id per warpgroup the same search is VERIFIED.
TEST(EveryPathTest, NamedBarrierInstanceJoinedIsPartOfTheHistory) {
  for (const std::string name : {"bad_named_barrier_shared_id", "fixed_named_barrier_per_group"}) {
    const ir::Program p = Parse("pipelines/proxy/" + name + ".pipe");
    auto params = ir::BindParams(p, {});
    ASSERT_TRUE(params.ok());
    const bool bad = name.rfind("bad_", 0) == 0;
    for (bool reduction : {true, false}) {
      SCOPED_TRACE(name + (reduction ? " reduced" : " brute force"));
      ExploreOptions o;
      o.reduction = reduction;
      o.collect_terminals = true;
      const ExploreResult r = Explore(p, *params, o);
      EXPECT_EQ(r.terminals.size(), 1u);
      EXPECT_EQ(r.verdict, bad ? ExploreVerdict::kRuleViolation : ExploreVerdict::kVerified)
          << ExploreVerdictName(r.verdict);
      bool race = false;
      for (const Finding& f : r.findings) race |= f.code() == model::Code::kDataRace;
      EXPECT_EQ(race, bad);
    }
  }
}

TEST(EveryPathTest, CleanPipelinesStayVerified) {
  for (const char* file : {"pipelines/single_tma_load/count1.pipe",
                           "sim/examples/explore/ring_2p2c.pipe"}) {
    std::ifstream probe(file);
    if (!probe) continue;
    SCOPED_TRACE(file);
    const ir::Program p = Parse(file);
    auto params = ir::BindParams(p, {});
    ASSERT_TRUE(params.ok());
    const ExploreResult r = Explore(p, *params, {});
    EXPECT_EQ(r.verdict, ExploreVerdict::kVerified) << ExploreVerdictName(r.verdict) << " "
                                                     << (r.findings.empty()
                                                             ? std::string()
                                                             : r.findings[0].message);
    EXPECT_GE(r.stats.history_completed, r.stats.completed_ends);
  }
}

}  // namespace
}  // namespace parity::verifier
