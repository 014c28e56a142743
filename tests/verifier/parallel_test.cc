// The parallel searches (ExploreOptions::threads > 1) are sound and agree with one thread:
//  - breadth-first (verifier/explore.h), on every schedule of pipelines/ and sim/examples/ at its
//    file's default parameters (those whose breadth-first search completes within a state bound;
//    the others are counted): 1, 2 and 4 threads give the same verdict, the same number of
//    distinct states, the same end states and the same counterexample; the default depth-first
//    search (one thread) the same end states, and without symmetry the same number of states;
//  - depth-first (verifier/parallel_dfs.h), on the same schedules: 2 threads give the one-thread
//    depth-first search's end states and end counts, whether there is a finding, and a
//    counterexample that replays to its finding (the number of states may differ: which
//    representative of a state is stored depends on timing, parallel_dfs.h says why);
//  - a sample of generated schedules (tests/verifier/gen, as in differential_test.cc), searched
//    on 2 threads with and without reduction, against the naive oracle: the same completed and
//    deadlocked end states, "a violation is reachable" the same, and 4 threads as 2;
//  - generated schedules with races, lifetime findings (extended operations: early exits) and
//    deadlocks, searched depth-first on 1, 2 and 4 threads: the same end states and counts
//    (the oracle's), the same verdict with the rules on every path where no violation or
//    deadlock is reachable (else a finding on every thread count), and every counterexample
//    replays to its finding;
//  - the st.async ring of 3 CTAs on 1, 2, 4 and 8 threads: the same end states and verdict.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "sim/ir/ir.h"
#include "sim/ir/parser.h"
#include "tests/verifier/gen/naive_explore.h"
#include "tests/verifier/gen/schedule_gen.h"
#include "verifier/counterexample.h"
#include "verifier/explore.h"

namespace parity::verifier {
namespace {

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr uint64_t kMaxStates = 1'000;  // the sanitized engine is about 30x slower
constexpr uint64_t kSeeds = 16;
constexpr int kMinCompared = 25;
constexpr uint64_t kDfsSeeds = 6;  // per generator option set
#else
constexpr uint64_t kMaxStates = 20'000;
constexpr uint64_t kSeeds = 200;
constexpr int kMinCompared = 80;
constexpr uint64_t kDfsSeeds = 60;
#endif

std::vector<std::string> BundledSchedules() {
  std::vector<std::string> files;
  for (const char* dir : {"pipelines", "sim/examples"}) {
    for (const auto& e : std::filesystem::recursive_directory_iterator(dir)) {
      if (e.path().extension() == ".pipe") files.push_back(e.path().generic_string());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

bool IsFinding(ExploreVerdict v) {
  return v == ExploreVerdict::kViolation || v == ExploreVerdict::kDeadlock ||
         v == ExploreVerdict::kRuleViolation;
}

void ExpectSame(const ExploreResult& a, const ExploreResult& b) {
  EXPECT_EQ(a.verdict, b.verdict) << ExploreVerdictName(a.verdict) << " vs "
                                  << ExploreVerdictName(b.verdict);
  EXPECT_EQ(a.stats.states, b.stats.states);
  EXPECT_EQ(a.stats.transitions, b.stats.transitions);
  EXPECT_EQ(a.stats.completed_ends, b.stats.completed_ends);
  EXPECT_EQ(a.stats.deadlock_ends, b.stats.deadlock_ends);
  EXPECT_EQ(a.stats.violation_ends, b.stats.violation_ends);
  EXPECT_EQ(a.terminals, b.terminals);
  EXPECT_EQ(a.counterexample, b.counterexample);
}

TEST(ParallelSearchTest, BundledSchedulesSameResultOnOneTwoAndFourThreads) {
  int compared = 0, skipped = 0;
  for (const std::string& f : BundledSchedules()) {
    SCOPED_TRACE(f);
    auto p = ir::ParseFile(f);
    ASSERT_TRUE(p.ok()) << p.status().ToString();
    auto params = ir::BindParams(*p, {});
    ASSERT_TRUE(params.ok()) << params.status().ToString();
    for (const bool stop : {true, false}) {
      SCOPED_TRACE(stop ? "stop at the first finding" : "every end state");
      ExploreOptions o;
      o.breadth_first = true;
      o.stop_at_first = stop;
      o.collect_terminals = true;
      o.check_rules = false;  // run on the first path to an end state: order-dependent
      o.max_states = kMaxStates;
      const ExploreResult one = Explore(*p, *params, o);
      if (!one.bound.empty()) {  // not exhaustive (it may have found something
                                 // before)
        ++skipped;
        continue;
      }
      ++compared;
      o.threads = 2;
      const ExploreResult two = Explore(*p, *params, o);
      o.threads = 4;
      const ExploreResult four = Explore(*p, *params, o);
      ExpectSame(two, one);
      ExpectSame(four, one);
      if (!stop) {
        ExploreOptions d;  // the default: depth-first, one thread
        d.stop_at_first = false;
        d.collect_terminals = true;
        d.check_rules = false;
        d.max_states = kMaxStates;
        d.shorten_budget_s = 0;
        const ExploreResult dfs = Explore(*p, *params, d);
        ASSERT_TRUE(dfs.bound.empty()) << dfs.bound;
        // (Which finding comes first depends on the order: only whether there is one.)
        EXPECT_EQ(IsFinding(dfs.verdict), IsFinding(one.verdict));
        EXPECT_EQ(dfs.terminals, one.terminals);
        // The same persistent sets: the same stored states, unless symmetry picked other
        // representatives.
        if (!one.symmetry_applied) {
          EXPECT_EQ(dfs.stats.states, one.stats.states);
        }
        // The parallel depth-first search against the one-thread one.
        d.threads = 2;
        const ExploreResult pdfs = Explore(*p, *params, d);
        ASSERT_TRUE(pdfs.bound.empty()) << pdfs.bound;
        EXPECT_EQ(IsFinding(pdfs.verdict), IsFinding(dfs.verdict));
        EXPECT_EQ(pdfs.terminals, dfs.terminals);
        EXPECT_EQ(pdfs.stats.completed_ends, dfs.stats.completed_ends);
        EXPECT_EQ(pdfs.stats.deadlock_ends, dfs.stats.deadlock_ends);
        EXPECT_EQ(pdfs.stats.violation_ends, dfs.stats.violation_ends);
      } else if (IsFinding(one.verdict)) {
        // Stopping at the first finding: the parallel depth-first search finds one too, on a
        // path that replays to it.
        ExploreOptions d;
        d.check_rules = false;
        d.max_states = kMaxStates;
        d.shorten_budget_s = 0;
        d.threads = 2;
        const ExploreResult pdfs = Explore(*p, *params, d);
        EXPECT_TRUE(IsFinding(pdfs.verdict)) << ExploreVerdictName(pdfs.verdict);
        EXPECT_TRUE(ReplayFinding(*p, *params, pdfs.counterexample, false).has_value());
      }
    }
    if (::testing::Test::HasFailure()) break;
  }
  std::printf("%d searches compared, %d over %llu states skipped\n", compared, skipped,
              static_cast<unsigned long long>(kMaxStates));
  EXPECT_GT(compared, kMinCompared);
}

std::vector<uint64_t> Sorted(const std::set<uint64_t>& a, const std::set<uint64_t>& b) {
  std::vector<uint64_t> v(a.begin(), a.end());
  v.insert(v.end(), b.begin(), b.end());
  std::sort(v.begin(), v.end());
  return v;
}

TEST(ParallelSearchTest, GeneratedSchedulesOnTwoThreadsAgreeWithTheOracle) {
  int compared = 0;
  for (uint64_t seed = 1; seed <= kSeeds; ++seed) {
    const std::string text = gen::GenerateSchedule(seed);
    SCOPED_TRACE("seed " + std::to_string(seed) + ":\n" + text);
    auto p = ir::ParseProgram(text, "gen_" + std::to_string(seed) + ".pipe");
    ASSERT_TRUE(p.ok()) << p.status().ToString();
    auto params = ir::BindParams(*p, {});
    ASSERT_TRUE(params.ok()) << params.status().ToString();
    const gen::NaiveEnds naive = gen::NaiveExplore(*p, *params, 20'000);
    if (!naive.complete || naive.error) continue;
    ++compared;
    // Whether symmetry applies (then every search's end states are symmetric fingerprints).
    bool symmetric = false;
    for (const bool reduction : {true, false}) {
      SCOPED_TRACE(reduction ? "reduced" : "brute force");
      ExploreOptions o;
      o.reduction = reduction;
      o.stop_at_first = false;
      o.collect_terminals = true;
      o.check_rules = false;
      o.max_states = 400'000;
      o.breadth_first = true;  // the level-synchronous search (its result is exact)
      o.threads = 2;
      const ExploreResult two = Explore(*p, *params, o);
      ASSERT_TRUE(two.bound.empty()) << two.bound;
      if (reduction) symmetric = two.symmetry_applied;
      if (!symmetric) {
        EXPECT_EQ(two.terminals, Sorted(naive.completed, naive.deadlocked));
      }
      EXPECT_EQ(two.stats.completed_ends > 0, !naive.completed.empty());
      EXPECT_EQ(two.stats.deadlock_ends > 0, !naive.deadlocked.empty());
      EXPECT_EQ(two.stats.violation_ends > 0, !naive.violating.empty());
      o.threads = 1;
      o.breadth_first = false;
      o.shorten_budget_s = 0;
      const ExploreResult one_dfs = Explore(*p, *params, o);
      EXPECT_EQ(IsFinding(two.verdict), IsFinding(one_dfs.verdict));
      EXPECT_EQ(two.stats.violation_ends > 0, one_dfs.stats.violation_ends > 0);
      EXPECT_EQ(two.terminals, one_dfs.terminals);
      o.threads = 4;
      o.breadth_first = true;
      ExpectSame(Explore(*p, *params, o), two);
    }
    if (::testing::Test::HasFailure()) break;
  }
  std::printf("%d generated schedules compared\n", compared);
  EXPECT_GT(compared, static_cast<int>(kSeeds / 2));
}

// The parallel depth-first search on generated schedules (races, lifetime findings, deadlocks):
// see the top. Returns the number of schedules compared; counts what was found in *found.
struct DfsTally {
  int compared = 0, deadlocks = 0, violations = 0, rule_findings = 0, lifetime = 0;
};
void CompareDepthFirst(const gen::GenOptions& g, uint64_t first, uint64_t seeds, DfsTally* t) {
  for (uint64_t seed = first; seed < first + seeds; ++seed) {
    const std::string text = gen::GenerateSchedule(seed, g);
    SCOPED_TRACE("seed " + std::to_string(seed) + (g.extended_ops ? " (extended)" : "") +
                 ":\n" + text);
    auto p = ir::ParseProgram(text, "gen_" + std::to_string(seed) + ".pipe");
    ASSERT_TRUE(p.ok()) << p.status().ToString();
    auto params = ir::BindParams(*p, {});
    ASSERT_TRUE(params.ok()) << params.status().ToString();
    const gen::NaiveEnds naive = gen::NaiveExplore(*p, *params, 20'000);
    if (!naive.complete || naive.error) continue;
    ++t->compared;
    t->deadlocks += naive.deadlocked.empty() ? 0 : 1;
    t->violations += naive.violating.empty() ? 0 : 1;
    t->lifetime += naive.lifetime.empty() ? 0 : 1;
    // Whether symmetry applies (then every search's end states are symmetric fingerprints,
    // with or without reduction).
    bool symmetric = false;
    for (const bool reduction : {true, false}) {
      SCOPED_TRACE(reduction ? "reduced" : "brute force");
      // Every end state.
      ExploreOptions o;
      o.reduction = reduction;
      o.stop_at_first = false;
      o.collect_terminals = true;
      o.check_rules = false;
      o.shorten_budget_s = 0;
      o.max_states = 400'000;
      const ExploreResult one = Explore(*p, *params, o);
      ASSERT_TRUE(one.bound.empty()) << one.bound;
      if (reduction) symmetric = one.symmetry_applied;
      if (!symmetric) {
        EXPECT_EQ(one.terminals, Sorted(naive.completed, naive.deadlocked));
      }
      for (const int threads : {2, 4}) {
        SCOPED_TRACE(std::to_string(threads) + " threads");
        o.threads = threads;
        const ExploreResult par = Explore(*p, *params, o);
        ASSERT_TRUE(par.bound.empty()) << par.bound;
        // (Which finding is the first, a violation or a deadlock, depends on timing.)
        EXPECT_EQ(IsFinding(par.verdict), IsFinding(one.verdict));
        EXPECT_EQ(par.terminals, one.terminals);
        EXPECT_EQ(par.stats.completed_ends, one.stats.completed_ends);
        EXPECT_EQ(par.stats.deadlock_ends, one.stats.deadlock_ends);
        EXPECT_EQ(par.stats.violation_ends, one.stats.violation_ends);
        EXPECT_EQ(par.stats.violation_ends > 0, !naive.violating.empty());
        if (IsFinding(par.verdict)) {
          EXPECT_TRUE(ReplayFinding(*p, *params, par.counterexample, false).has_value());
        }
      }
      o.threads = 1;
      // The default: rules and races on every path, stop at the first finding, shortened.
      ExploreOptions d;
      d.reduction = reduction;
      d.shorten_budget_s = 0.2;
      const ExploreResult first = Explore(*p, *params, d);
      const bool model_finding = !naive.deadlocked.empty() || !naive.violating.empty();
      if (first.verdict == ExploreVerdict::kRuleViolation) ++t->rule_findings;
      for (const int threads : {2, 4}) {
        SCOPED_TRACE(std::to_string(threads) + " threads, rules on");
        d.threads = threads;
        const ExploreResult par = Explore(*p, *params, d);
        EXPECT_EQ(IsFinding(par.verdict), IsFinding(first.verdict));
        if (!model_finding) {
          EXPECT_EQ(par.verdict, first.verdict)
              << ExploreVerdictName(par.verdict) << " vs " << ExploreVerdictName(first.verdict);
        }
        if (IsFinding(par.verdict)) {
          EXPECT_TRUE(ReplayFinding(*p, *params, par.counterexample,
                                    par.verdict == ExploreVerdict::kRuleViolation)
                          .has_value());
        }
      }
    }
    if (::testing::Test::HasFailure()) return;
  }
}

TEST(ParallelSearchTest, DepthFirstOnTwoAndFourThreadsAgreesWithOneAndTheOracle) {
  DfsTally t;
  CompareDepthFirst(gen::GenOptions{}, 1, kDfsSeeds, &t);
  gen::GenOptions extended;
  extended.extended_ops = true;  // cp.async, st.async, named barriers, early exits
  CompareDepthFirst(extended, 1, kDfsSeeds, &t);
  std::printf("parallel depth-first: %d generated schedules compared: %d with a reachable "
              "deadlock, %d a violation, %d a lifetime finding; %d rule findings\n",
              t.compared, t.deadlocks, t.violations, t.lifetime, t.rule_findings);
  EXPECT_GT(t.compared, static_cast<int>(kDfsSeeds));
  // The sample must exercise what it is meant to (at full size; too few seeds under ASan).
  if (kDfsSeeds >= 60) {
    EXPECT_GT(t.deadlocks, 5);
    EXPECT_GT(t.violations, 5);
    EXPECT_GT(t.rule_findings, 5);
    EXPECT_GT(t.lifetime, 0);
  }
}

// The st.async ring of 3 CTAs (several stores in flight at once, interchangeable CTAs): the
// number of stored states may vary with the number of threads, since a state is stored as the
// engine of the first path that reached it, whose order of in-flight operations (and, with
// symmetry, which member of its class) decides the persistent set the reducer picks
// (parallel_dfs.h). What must not vary: the end states up to symmetry, their counts, and the
// verdict with the rules and races on every path.
TEST(ParallelSearchTest, RingOfThreeCtasSameEndStatesAndVerdictOnAnyThreadCount) {
  auto p = ir::ParseFile("pipelines/st_async_ring/ring.pipe");
  ASSERT_TRUE(p.ok()) << p.status().ToString();
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  const int64_t items = 1;
#else
  const int64_t items = 3;
#endif
  auto params = ir::BindParams(*p, {{"CTAS", 3}, {"ITEMS", items}});
  ASSERT_TRUE(params.ok()) << params.status().ToString();
  ExploreOptions o;
  o.stop_at_first = false;
  o.collect_terminals = true;
  o.check_rules = false;
  const ExploreResult one = Explore(*p, *params, o);
  ASSERT_EQ(one.verdict, ExploreVerdict::kVerified) << ExploreVerdictName(one.verdict);
  ASSERT_GT(one.stats.completed_ends, 0u);
  for (const int threads : {2, 4, 8}) {
    SCOPED_TRACE(std::to_string(threads) + " threads");
    o.threads = threads;
    const ExploreResult par = Explore(*p, *params, o);
    EXPECT_EQ(par.verdict, ExploreVerdict::kVerified) << ExploreVerdictName(par.verdict);
    EXPECT_EQ(par.terminals, one.terminals);
    EXPECT_EQ(par.stats.completed_ends, one.stats.completed_ends);
    EXPECT_EQ(par.stats.deadlock_ends, 0u);
    EXPECT_EQ(par.stats.violation_ends, 0u);
    std::printf("ring, 3 CTAs, %lld items: %d threads %llu states (one thread %llu)\n",
                static_cast<long long>(items), threads,
                static_cast<unsigned long long>(par.stats.states),
                static_cast<unsigned long long>(one.stats.states));
  }
  for (const int threads : {1, 2, 4}) {
    SCOPED_TRACE(std::to_string(threads) + " threads, rules on every path");
    ExploreOptions d;  // the default: rules and races on every path
    d.threads = threads;
    const ExploreResult r = Explore(*p, *params, d);
    EXPECT_EQ(r.verdict, ExploreVerdict::kVerified) << ExploreVerdictName(r.verdict);
    EXPECT_GT(r.stats.history_states, 0u);  // the every-path search ran
  }
}

}  // namespace
}  // namespace parity::verifier
