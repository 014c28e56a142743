// Symmetry reduction over agents that read their index (verifier/symmetry.h, issue 26 item 1).
//
// Differential: for every schedule of the generator's symmetry mode
// (tests/verifier/gen/symmetry_gen.h), an exhaustive walk over Engine::Choices / Step with no
// reduction (as tests/verifier/gen/naive_explore.h, its end states kept by
// Engine::SymmetricFingerprint under the classes SymmetryClasses found) must reach exactly the
// completed and deadlocked end states of the reduced search (persistent sets, guarded waits,
// symmetry), and the same "a violation is reachable", "a deadlock is reachable" and "bad input";
// a search that stops at its first finding reports the oracle's class with a counterexample that
// replays to it. Unit tests pin which uses of `agent` keep warps interchangeable and which do
// not, on hand-written schedules.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <deque>
#include <set>
#include <string>
#include <unordered_set>
#include <vector>

#include "sim/engine/engine.h"
#include "sim/ir/ir.h"
#include "sim/ir/parser.h"
#include "tests/verifier/gen/symmetry_gen.h"
#include "verifier/explore.h"
#include "verifier/symmetry.h"

namespace parity::verifier {
namespace {

using engine::Engine;
using engine::Outcome;

#if defined(__SANITIZE_ADDRESS__)
constexpr uint64_t kSchedules = 150;
#else
constexpr uint64_t kSchedules = 800;
#endif
constexpr uint64_t kMaxStates = 20'000;

struct Ends {
  bool complete = true, error = false;
  std::set<uint64_t> ends;  // completed and deadlocked, symmetric fingerprints
  bool deadlock = false, violation = false;
};

// Every interleaving, breadth first; running states told apart by StateHash and Fingerprint
// (no symmetry), end states recorded by their symmetric fingerprint.
Ends Walk(const ir::Program& p, const std::vector<int64_t>& params,
          const std::vector<uint32_t>& classes) {
  Ends out;
  engine::EngineOptions o;
  o.record_trace = false;
  auto root = Engine::Create(p, params, o);
  if (!root.ok()) {
    out.error = true;
    return out;
  }
  auto key = [](const Engine& e) {
    uint64_t z = e.StateHash() ^ (e.Fingerprint() * 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 31)) * 0xbf58476d1ce4e5b9ull;
    return z ^ (z >> 29);
  };
  auto record = [&](const Engine& e) {
    const uint64_t fp = classes.empty() ? e.Fingerprint() : e.SymmetricFingerprint(classes);
    switch (e.outcome()) {
      case Outcome::kCompleted: out.ends.insert(fp); break;
      case Outcome::kDeadlock: out.ends.insert(fp); out.deadlock = true; break;
      case Outcome::kViolation: out.violation = true; break;
      case Outcome::kError: out.error = true; break;
      default: break;
    }
  };
  std::unordered_set<uint64_t> seen;
  std::deque<Engine> frontier;
  if (root->outcome() != Outcome::kRunning) {
    record(*root);
    return out;
  }
  seen.insert(key(*root));
  frontier.push_back(*root);
  std::vector<engine::Choice> choices;
  while (!frontier.empty()) {
    if (seen.size() > kMaxStates) {
      out.complete = false;
      return out;
    }
    Engine e = std::move(frontier.front());
    frontier.pop_front();
    e.Choices(&choices);
    const std::vector<engine::Choice> here = choices;
    for (const engine::Choice& c : here) {
      Engine next = e;
      if (next.Step(c) != Outcome::kRunning) {
        record(next);
      } else if (seen.insert(key(next)).second) {
        frontier.push_back(std::move(next));
      }
    }
  }
  return out;
}

struct Tally {
  uint64_t compared = 0, skipped = 0, symmetric = 0, apart = 0, verified = 0, bad = 0;
  uint64_t walk_states = 0, reduced_states = 0;
};

void CompareOne(uint64_t seed, Tally* t) {
  const std::string text = gen::GenerateSymmetrySchedule(seed);
  SCOPED_TRACE("seed " + std::to_string(seed) + "; the schedule:\n" + text);
  auto parsed = ir::ParseProgram(text, "gen_sym_" + std::to_string(seed) + ".pipe");
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  const ir::Program& p = *parsed;
  auto bound = ir::BindParams(p, {});
  ASSERT_TRUE(bound.ok());
  const std::vector<int64_t>& params = *bound;
  engine::EngineOptions eo;
  eo.record_trace = false;
  auto created = Engine::Create(p, params, eo);
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  std::string why;
  const std::vector<uint32_t> classes = SymmetryClasses(p, params, *created, &why);

  const Ends walk = Walk(p, params, classes);
  if (!walk.complete) {
    ++t->skipped;
    return;
  }
  ++t->compared;
  ExploreOptions o;
  o.stop_at_first = false;
  o.collect_terminals = true;
  o.check_rules = false;
  o.max_states = 10 * kMaxStates;
  const ExploreResult reduced = Explore(p, params, o);
  ASSERT_TRUE(reduced.bound.empty()) << reduced.bound;
  EXPECT_EQ(reduced.symmetry_applied, !classes.empty()) << reduced.symmetry;
  (classes.empty() ? t->apart : t->symmetric) += 1;
  if (walk.error) {
    ++t->bad;
    EXPECT_EQ(reduced.verdict, ExploreVerdict::kBadInput) << ExploreVerdictName(reduced.verdict);
    return;
  }
  t->reduced_states += reduced.stats.states;
  const std::vector<uint64_t> ends(walk.ends.begin(), walk.ends.end());
  EXPECT_EQ(reduced.terminals, ends) << "end states differ from the exhaustive walk's; "
                                     << reduced.symmetry;
  EXPECT_EQ(reduced.stats.deadlock_ends > 0, walk.deadlock);
  EXPECT_EQ(reduced.stats.violation_ends > 0, walk.violation);

  // The first finding.
  ExploreOptions f;
  f.check_rules = false;
  const ExploreResult first = Explore(p, params, f);
  if (!walk.deadlock && !walk.violation) {
    ++t->verified;
    EXPECT_EQ(first.verdict, ExploreVerdict::kVerified) << ExploreVerdictName(first.verdict);
    return;
  }
  ASSERT_TRUE(first.verdict == ExploreVerdict::kViolation ||
              first.verdict == ExploreVerdict::kDeadlock)
      << ExploreVerdictName(first.verdict);
  auto end = Replay(p, params, first.counterexample);
  ASSERT_TRUE(end.ok()) << end.status().ToString();
  EXPECT_EQ(end->outcome(),
            first.verdict == ExploreVerdict::kDeadlock ? Outcome::kDeadlock : Outcome::kViolation);
}

TEST(SymmetryDifferentialTest, GeneratedSchedulesAgreeWithTheExhaustiveWalk) {
  const char* env = std::getenv("PARITY_SYM_SCHEDULES");
  const uint64_t count = env != nullptr ? std::strtoull(env, nullptr, 0) : kSchedules;
  Tally t;
  for (uint64_t seed = 1; seed <= count; ++seed) {
    CompareOne(seed, &t);
    if (::testing::Test::HasFailure()) break;
  }
  std::printf("%llu compared (%llu skipped), %llu with symmetry, %llu without; %llu verified, "
              "%llu bad input; reduced states %llu\n",
              (unsigned long long)t.compared, (unsigned long long)t.skipped,
              (unsigned long long)t.symmetric, (unsigned long long)t.apart,
              (unsigned long long)t.verified, (unsigned long long)t.bad,
              (unsigned long long)t.reduced_states);
  // Both kinds must be common, else the comparison proves little.
  EXPECT_GT(t.symmetric, count / 5);
  EXPECT_GT(t.apart, count / 10);
  EXPECT_GT(t.verified, count / 10);
  EXPECT_GT(t.compared - t.verified - t.bad, count / 10);
}

// The classes SymmetryClasses gives a hand-written schedule.
std::vector<uint32_t> Classes(const std::string& text, std::string* why) {
  auto p = ir::ParseProgram(text, "t.pipe");
  EXPECT_TRUE(p.ok()) << p.status().ToString();
  if (!p.ok()) return {};
  auto params = ir::BindParams(*p, {});
  auto e = Engine::Create(*p, *params, {});
  EXPECT_TRUE(e.ok()) << e.status().ToString();
  if (!e.ok()) return {};
  return SymmetryClasses(*p, *params, *e, why);
}

constexpr char kHead[] =
    "schedule t\ncluster 1x1\nbuffer buf[2] bytes 64\nbarrier mb[4] count 4\n";

std::string Warps(const std::string& body, const std::string& more = "") {
  return std::string(kHead) + "role w count 4 threads 32 {\n" +
         "  if agent == 0 {\n    init mb[0]\n  }\n  bar.sync 0, 128\n" + body + "}\n" + more;
}

TEST(SymmetryClassesTest, StripeOffsetsKeepWarpsInterchangeable) {
  std::string why;
  const auto c = Classes(Warps("  cp.async buf[1] + agent * 16 bytes 16\n"
                               "  cp.async.wait_all\n  use buf[1] + 8 + agent * 16 bytes 8\n"
                               "  use buf[0]\n"),
                         &why);
  ASSERT_EQ(c.size(), 4u) << why;
  // Warp 0 initialises the barrier: it stands apart; warps 1..3 are one class.
  EXPECT_EQ(c[0], Engine::kNoGroup);
  EXPECT_NE(c[1], Engine::kNoGroup);
  EXPECT_EQ(c[1], c[2]);
  EXPECT_EQ(c[2], c[3]);
}

TEST(SymmetryClassesTest, FixedVariablesMayScaleTheStripe) {
  std::string why;
  const auto c = Classes(Warps("  let part = 64 / 4\n  use buf[0] + agent * part bytes part\n"),
                         &why);
  ASSERT_EQ(c.size(), 4u) << why;
  EXPECT_EQ(c[1], c[3]);
}

TEST(SymmetryClassesTest, IndexThatDecidesBarriersParitiesOrCountsKeepsWarpsApart) {
  for (const char* body : {"  arrive mb[agent]\n", "  wait mb[agent] parity 0\n",
                           "  arrive mb[0] count agent + 1\n",
                           "  for i in 0 .. agent {\n    arrive mb[1]\n  }\n",
                           "  let x = agent\n  arrive mb[x]\n"}) {
    std::string why;
    EXPECT_TRUE(Classes(Warps(body), &why).empty()) << body << why;
  }
  // agent % 2, agent & 1: warps 1 and 3 name the same barrier or parity (warp 0 is apart by
  // its init).
  for (const char* body : {"  arrive mb[agent % 2]\n", "  wait mb[0] parity agent & 1\n"}) {
    std::string why;
    const auto c = Classes(Warps(body), &why);
    ASSERT_EQ(c.size(), 4u) << why;
    EXPECT_EQ(c[1], c[3]);
    EXPECT_NE(c[1], Engine::kNoGroup);
    EXPECT_EQ(c[2], Engine::kNoGroup);
  }
}

TEST(SymmetryClassesTest, OffsetsThatAreNotStripesKeepWarpsApart) {
  for (const char* body : {
           "  use buf[0] + agent * 8 bytes 16\n",        // overlapping
           "  use buf[0] + agent * 32 bytes 16\n",       // the last stripes leave the slot
           "  for k in 0 .. 2 {\n    use buf[0] + k * agent * 8 bytes 8\n  }\n",
           "  use buf[0] + agent * 16\n",                // bytes to the slot's end
       }) {
    std::string why;
    EXPECT_TRUE(Classes(Warps(body), &why).empty()) << body << why;
  }
  // Another role reading the first stripe only tells stripe 1 from stripes 2 and 3.
  std::string why;
  EXPECT_TRUE(Classes(Warps("  write buf[0] + agent * 16 bytes 16\n",
                            "role p threads 32 {\n  bar.sync 0, 160\n  use buf[0] + 16 bytes 16\n}\n"),
                      &why)
                  .empty())
      << why;
  // ... while one reading the whole slot, or another slot's bytes, does not.
  for (const char* other : {"  use buf[0]\n", "  use buf[1] + 16 bytes 16\n"}) {
    const auto c = Classes(Warps("  write buf[0] + agent * 16 bytes 16\n",
                                 std::string("role p threads 32 {\n  bar.sync 0, 160\n") + other +
                                     "}\n"),
                           &why);
    if (std::string(other).find("buf[1]") != std::string::npos) {
      // Offsets are within a slot: buf[1] + 16 is stripe 1 of every slot, so it is apart.
      EXPECT_TRUE(c.empty()) << why;
    } else {
      ASSERT_EQ(c.size(), 5u) << why;
      EXPECT_EQ(c[1], c[3]);
    }
  }
}

}  // namespace
}  // namespace parity::verifier

namespace parity::verifier {
namespace {

// The protocol rules' data races (P2009) over stripes: the verdict with symmetry is the
// verdict without it, racy or not.
TEST(SymmetryRulesTest, StripeRacesAreFoundWithAndWithoutSymmetry) {
  for (const bool sync : {false, true}) {
    const std::string text =
        std::string("schedule t\ncluster 1x1\nbuffer buf[1] bytes 64\n") +
        "role w count 4 threads 32 {\n  write buf[0] + agent * 16 bytes 16\n" +
        (sync ? "  bar.sync 1, 160\n" : "") + "}\nrole p threads 32 {\n" +
        (sync ? "  bar.sync 1, 160\n" : "") + "  use buf[0]\n}\n";
    SCOPED_TRACE(text);
    auto p = ir::ParseProgram(text, "t.pipe");
    ASSERT_TRUE(p.ok()) << p.status().ToString();
    auto params = ir::BindParams(*p, {});
    ExploreOptions o;
    const ExploreResult with = Explore(*p, *params, o);
    o.symmetry = false;
    const ExploreResult without = Explore(*p, *params, o);
    EXPECT_TRUE(with.symmetry_applied) << with.symmetry;
    EXPECT_FALSE(without.symmetry_applied);
    EXPECT_EQ(with.verdict, without.verdict);
    EXPECT_EQ(with.verdict, sync ? ExploreVerdict::kVerified : ExploreVerdict::kRuleViolation)
        << ExploreVerdictName(with.verdict);
  }
}

}  // namespace
}  // namespace parity::verifier
