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

// Interchangeable CTAs (CtaSymmetryGroup, issue 26 item 1).
namespace parity::verifier {
namespace {

#if defined(__SANITIZE_ADDRESS__)
constexpr uint64_t kCtaSchedules = 10;
#else
constexpr uint64_t kCtaSchedules = 60;
#endif
constexpr uint64_t kCtaMaxStates = 3'000;

struct CtaWalk {
  bool complete = true, error = false, deadlock = false, violation = false;
  std::set<uint64_t> ends;  // completed and deadlocked, canonical fingerprints
  bool closed = true;       // the reachable states are closed under every element of the group
  uint64_t states = 0;
};

// Every interleaving, breadth first, with no reduction (as Walk above). Besides the end states
// (by the explorer's canonical fingerprint) it checks the group's claim independently of the
// merging: the set of reachable states, each hashed after the identity, equals the same set
// hashed after each permutation g (the fingerprint of g(s) is s hashed after g), i.e. g maps
// reachable states to reachable states.
CtaWalk WalkCta(const ir::Program& p, const std::vector<int64_t>& params,
                const std::vector<uint32_t>& classes, const CtaSymmetry& cta) {
  CtaWalk out;
  auto root = Engine::Create(p, params, {});
  if (!root.ok()) {
    out.error = true;
    return out;
  }
  const std::vector<uint32_t>* group = classes.empty() ? nullptr : &classes;
  std::vector<std::set<uint64_t>> images(cta.perms.size());
  auto key = [](const Engine& e) {
    uint64_t z = e.StateHash() ^ (e.Fingerprint() * 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 31)) * 0xbf58476d1ce4e5b9ull;
    return z ^ (z >> 29);
  };
  auto visit = [&](const Engine& e) {
    ++out.states;
    for (size_t g = 0; g < cta.perms.size(); ++g) {
      images[g].insert(e.MinPermutedFingerprint({cta.perms[g]}, group, cta.hidden));
    }
    const uint64_t fp = cta.empty() ? (classes.empty() ? e.Fingerprint()
                                                       : e.SymmetricFingerprint(classes))
                                    : CanonicalFingerprint(e, cta, classes);
    switch (e.outcome()) {
      case Outcome::kCompleted: out.ends.insert(fp); break;
      case Outcome::kDeadlock: out.ends.insert(fp); out.deadlock = true; break;
      case Outcome::kViolation: out.violation = true; break;
      case Outcome::kError: out.error = true; break;
      default: break;
    }
  };
  std::unordered_set<uint64_t> seen{key(*root)};
  std::deque<Engine> frontier{*root};
  visit(*root);
  std::vector<engine::Choice> choices;
  while (!frontier.empty()) {
    if (seen.size() > kCtaMaxStates) {
      out.complete = false;
      return out;
    }
    Engine e = std::move(frontier.front());
    frontier.pop_front();
    if (e.outcome() != Outcome::kRunning) continue;
    e.Choices(&choices);
    const std::vector<engine::Choice> here = choices;
    for (const engine::Choice& c : here) {
      Engine next = e;
      next.Step(c);
      if (seen.insert(key(next)).second) {
        visit(next);
        frontier.push_back(std::move(next));
      }
    }
  }
  for (size_t g = 1; g < images.size(); ++g) out.closed = out.closed && images[g] == images[0];
  return out;
}

struct CtaTally {
  uint64_t compared = 0, skipped = 0, symmetric = 0, apart = 0, findings = 0, verified = 0;
  uint64_t walk_states = 0, reduced_states = 0;
};

void CompareCta(uint64_t seed, CtaTally* t) {
  const std::string text = gen::GenerateCtaSymmetrySchedule(seed);
  SCOPED_TRACE("seed " + std::to_string(seed) + "; the schedule:\n" + text);
  auto parsed = ir::ParseProgram(text, "gen_cta_" + std::to_string(seed) + ".pipe");
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  const ir::Program& p = *parsed;
  auto bound = ir::BindParams(p, {});
  ASSERT_TRUE(bound.ok());
  auto created = Engine::Create(p, *bound, {});
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  std::string why, cta_why;
  const std::vector<uint32_t> classes = SymmetryClasses(p, *bound, *created, &why);
  const CtaSymmetry cta = CtaSymmetryGroup(p, *bound, *created, classes, &cta_why);
  if (!cta.empty()) {
    // The identity is an element; every element is a permutation.
    ASSERT_FALSE(cta.perms.empty());
    for (const auto& g : cta.perms) {
      std::vector<uint32_t> s = g;
      std::sort(s.begin(), s.end());
      for (uint32_t r = 0; r < s.size(); ++r) ASSERT_EQ(s[r], r);
    }
  }
  const CtaWalk walk = WalkCta(p, *bound, classes, cta);
  if (!walk.complete) {
    ++t->skipped;
    return;
  }
  ++t->compared;
  t->walk_states += walk.states;
  (cta.empty() ? t->apart : t->symmetric) += 1;
  EXPECT_TRUE(walk.closed) << "a permutation of the group maps a reachable state to an "
                              "unreachable one: " << cta_why;
  ExploreOptions o;
  o.stop_at_first = false;
  o.collect_terminals = true;
  o.check_rules = false;
  o.max_states = 10 * kCtaMaxStates;
  const ExploreResult reduced = Explore(p, *bound, o);
  ASSERT_TRUE(reduced.bound.empty()) << reduced.bound;
  if (walk.error) {
    EXPECT_EQ(reduced.verdict, ExploreVerdict::kBadInput) << ExploreVerdictName(reduced.verdict);
    return;
  }
  t->reduced_states += reduced.stats.states;
  const std::vector<uint64_t> ends(walk.ends.begin(), walk.ends.end());
  EXPECT_EQ(reduced.terminals, ends) << "end states differ from the exhaustive walk's; "
                                     << reduced.symmetry;
  EXPECT_EQ(reduced.stats.deadlock_ends > 0, walk.deadlock);
  EXPECT_EQ(reduced.stats.violation_ends > 0, walk.violation);
  // With the rules (races included) on every path, the verdict with symmetry is the verdict
  // without it.
  ExploreOptions f;
  const ExploreResult with = Explore(p, *bound, f);
  f.symmetry = false;
  const ExploreResult without = Explore(p, *bound, f);
  EXPECT_EQ(with.verdict, without.verdict)
      << ExploreVerdictName(with.verdict) << " vs " << ExploreVerdictName(without.verdict);
  (with.verdict == ExploreVerdict::kVerified ? t->verified : t->findings) += 1;
}

TEST(CtaSymmetryDifferentialTest, GeneratedClustersAgreeWithTheExhaustiveWalk) {
  const char* env = std::getenv("PARITY_CTA_SCHEDULES");
  const uint64_t count = env != nullptr ? std::strtoull(env, nullptr, 0) : kCtaSchedules;
  CtaTally t;
  for (uint64_t seed = 1; seed <= count; ++seed) {
    CompareCta(seed, &t);
    if (::testing::Test::HasFailure()) break;
  }
  std::printf("%llu compared (%llu skipped), %llu with CTA symmetry, %llu without; %llu "
              "verified, %llu findings; walk states %llu, reduced states %llu\n",
              (unsigned long long)t.compared, (unsigned long long)t.skipped,
              (unsigned long long)t.symmetric, (unsigned long long)t.apart,
              (unsigned long long)t.verified, (unsigned long long)t.findings,
              (unsigned long long)t.walk_states, (unsigned long long)t.reduced_states);
  // Both kinds and both verdicts must be common, else the comparison proves little (checked
  // at full seed counts; the sanitized build runs a few).
  if (count >= 40) {
    EXPECT_GT(t.symmetric, count / 5);
    EXPECT_GT(t.apart, count / 10);
    EXPECT_GT(t.verified, count / 10);
    EXPECT_GT(t.findings, count / 10);
  }
}

// The group CtaSymmetryGroup finds for a hand-written schedule (its size; 0: none).
size_t GroupSize(const std::string& text, std::string* why) {
  auto p = ir::ParseProgram(text, "t.pipe");
  EXPECT_TRUE(p.ok()) << p.status().ToString();
  if (!p.ok()) return 0;
  auto params = ir::BindParams(*p, {});
  auto e = Engine::Create(*p, *params, {});
  EXPECT_TRUE(e.ok()) << e.status().ToString();
  if (!e.ok()) return 0;
  std::string w;
  const auto classes = SymmetryClasses(*p, *params, *e, &w);
  return CtaSymmetryGroup(*p, *params, *e, classes, why).perms.size();
}

std::string Ring(const std::string& cluster, const std::string& body) {
  return "schedule t\ncluster " + cluster +
         "\nbuffer buf[1] bytes 4096\nbarrier mb[2] count 1\nrole p threads 1 {\n"
         "  init mb[0]\n  init mb[1]\n  fence.mbarrier_init\n  cluster.arrive\n"
         "  cluster.wait\n  let right = (cta_rank + 1) % cluster_size\n" +
         body + "  cluster.arrive\n  cluster.wait\n}\n";
}

TEST(CtaSymmetryGroupTest, RingsRotateAndGridsFlip) {
  std::string why;
  // A ring that sends right: the rotations (not the reflections, which send left).
  EXPECT_EQ(GroupSize(Ring("4x1", "  arrive mb[0] @cta(right)\n  wait mb[0] parity 0\n"), &why),
            4u)
      << why;
  // Only local barriers and the whole-cluster mask: every permutation the candidates generate
  // (the dihedral group of the ring).
  why.clear();
  EXPECT_EQ(GroupSize(Ring("4x1", "  arrive mb[1] mask (1 << cluster_size) - 1\n"), &why), 8u)
      << why;
  // The 2x2 multicast GEMM: flips of each axis.
  why.clear();
  auto p = ir::ParseProgram(
      "schedule g\ncluster 2x2\nbuffer A[1] bytes 2048\nbarrier full[1] count 1\n"
      "tensormap tm dtype f16 dims [64, 64] box [32, 16] swizzle none\n"
      "role w threads 1 {\n  init full[0]\n  fence.mbarrier_init\n  cluster.arrive\n"
      "  cluster.wait\n  let mc = (1 << cta_x) | (1 << (cta_x + cluster_m))\n"
      "  arrive.expect_tx full[0] bytes 2048\n"
      "  tma.load tm coords [0, cta_y * 16] -> A[0] + cta_y * 1024 bytes 1024 bar full[0] "
      "multicast mc\n  wait full[0] parity 0\n  use A[0]\n  cluster.arrive\n  cluster.wait\n}\n",
      "g.pipe");
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  auto params = ir::BindParams(*p, {});
  auto e = Engine::Create(*p, *params, {});
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  const CtaSymmetry g = CtaSymmetryGroup(*p, *params, *e, {}, &why);
  EXPECT_EQ(g.perms.size(), 4u) << why;
  ExploreOptions o;
  // Without exact peers the CTAs' cluster arrivals interleave, which is what symmetry merges
  // here (with them the reduced search is nearly one path, and there is nothing to merge).
  o.exact_peer_futures = false;
  const ExploreResult with = Explore(*p, *params, o);
  o.symmetry = false;
  const ExploreResult without = Explore(*p, *params, o);
  EXPECT_EQ(with.verdict, ExploreVerdict::kVerified) << ExploreVerdictName(with.verdict);
  EXPECT_EQ(without.verdict, ExploreVerdict::kVerified);
  EXPECT_LT(with.stats.states, without.stats.states);
}

TEST(CtaSymmetryGroupTest, RanksThatMatterKeepCtasApart) {
  for (const char* body : {"  if cta_rank == 0 {\n    arrive mb[1]\n  }\n",
                           "  arrive mb[0] @cta(0)\n", "  wait mb[0] parity cta_rank & 1\n",
                           "  arrive mb[cta_rank % 2]\n",
                           "  for i in 0 .. cta_rank {\n    arrive mb[1]\n  }\n",
                           "  write buf[0] + cta_rank * 512 bytes 1024\n",
                           "  arrive mb[1] mask 1 << cta_rank | 1\n",
                           "  for k in 0 .. 2 {\n    let t = (cta_rank + k) % cluster_size\n"
                           "    arrive mb[0] @cta(t)\n  }\n"}) {
    std::string why;
    EXPECT_EQ(GroupSize(Ring("2x1", body), &why), 0u) << body;
    EXPECT_FALSE(why.empty());
  }
  // A stripe another access reads in part: stripe 0 differs from stripe 1.
  std::string why;
  EXPECT_EQ(GroupSize(Ring("2x1", "  write buf[0] + cta_rank * 1024 bytes 64\n"
                                  "  use buf[0] bytes 64\n"),
                      &why),
            0u);
  // ... the whole slot does not.
  why.clear();
  EXPECT_EQ(GroupSize(Ring("2x1", "  write buf[0] + cta_rank * 1024 bytes 64\n  use buf[0]\n"),
                      &why),
            2u)
      << why;
}

// A race across CTAs (DSMEM writes into the right neighbour's stripe while it reads it) is
// found with and without CTA symmetry; ordered by the cluster barrier it is not.
TEST(CtaSymmetryRulesTest, DsmemRacesAreFoundWithAndWithoutSymmetry) {
  for (const bool sync : {false, true}) {
    const std::string text = Ring(
        "3x1", std::string("  write buf[0] + cta_rank * 1024 bytes 64 @cta(right)\n") +
                   (sync ? "  cluster.arrive\n  cluster.wait\n" : "") +
                   "  use buf[0] + ((cta_rank + 2) % cluster_size) * 1024 bytes 64\n");
    SCOPED_TRACE(text);
    auto p = ir::ParseProgram(text, "t.pipe");
    ASSERT_TRUE(p.ok()) << p.status().ToString();
    auto params = ir::BindParams(*p, {});
    ExploreOptions o;
    const ExploreResult with = Explore(*p, *params, o);
    o.symmetry = false;
    const ExploreResult without = Explore(*p, *params, o);
    EXPECT_TRUE(with.symmetry_applied) << with.symmetry;
    EXPECT_EQ(with.verdict, without.verdict);
    EXPECT_EQ(with.verdict, sync ? ExploreVerdict::kVerified : ExploreVerdict::kRuleViolation)
        << ExploreVerdictName(with.verdict) << "\n" << with.symmetry;
  }
}

}  // namespace
}  // namespace parity::verifier
