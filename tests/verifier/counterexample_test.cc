// verifier/counterexample.h and explore's counterexample modes: the first counterexample of the
// depth-first search is reported at once and reproduces its finding; the shortened one reproduces
// it too and is never longer; --shortest (shortest_counterexample) is as short as a breadth-first
// search's; the budget and the time limit bound the work. Over bundled bad schedules and generated
// ones (tests/verifier/gen), where a brute-force breadth-first search gives the shortest
// counterexample of the schedule: nothing that reproduces a finding can be shorter than that.
#include "verifier/counterexample.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "sim/engine/engine.h"
#include "sim/ir/ir.h"
#include "sim/ir/parser.h"
#include "tests/verifier/gen/schedule_gen.h"
#include "verifier/explore.h"

namespace parity::verifier {
namespace {

using engine::Choice;
using engine::Outcome;

struct Loaded {
  ir::Program program;
  std::vector<int64_t> params;
  bool ok = false;
};

Loaded FromText(const std::string& text, const std::string& name) {
  Loaded l;
  auto p = ir::ParseProgram(text, name);
  EXPECT_TRUE(p.ok()) << p.status().ToString();
  if (!p.ok()) return l;
  l.program = std::move(p).value();
  auto v = ir::BindParams(l.program, {});
  EXPECT_TRUE(v.ok()) << v.status().ToString();
  if (!v.ok()) return l;
  l.params = *v;
  l.ok = true;
  return l;
}

Loaded FromFile(const std::string& path) {
  Loaded l;
  auto p = ir::ParseFile(path);
  EXPECT_TRUE(p.ok()) << p.status().ToString();
  if (!p.ok()) return l;
  l.program = std::move(p).value();
  auto v = ir::BindParams(l.program, {});
  EXPECT_TRUE(v.ok()) << v.status().ToString();
  if (!v.ok()) return l;
  l.params = *v;
  l.ok = true;
  return l;
}

bool IsFinding(ExploreVerdict v) {
  return v == ExploreVerdict::kViolation || v == ExploreVerdict::kDeadlock ||
         v == ExploreVerdict::kRuleViolation;
}

Outcome OutcomeOf(ExploreVerdict v) {
  switch (v) {
    case ExploreVerdict::kDeadlock:
      return Outcome::kDeadlock;
    case ExploreVerdict::kViolation:
      return Outcome::kViolation;
    default:
      return Outcome::kCompleted;
  }
}

// The counterexample of r replays to r's verdict, and its first one (which a breadth-first search
// may have replaced by a shorter path to another finding) to a finding. rules: the search ran the
// protocol rules.
void ExpectReproduces(const Loaded& l, const ExploreResult& r, bool rules) {
  ASSERT_TRUE(IsFinding(r.verdict)) << ExploreVerdictName(r.verdict);
  const auto key = ReplayFinding(l.program, l.params, r.counterexample, rules);
  ASSERT_TRUE(key.has_value()) << "the counterexample does not reproduce a finding";
  EXPECT_EQ(key->outcome, OutcomeOf(r.verdict));
  if (r.verdict == ExploreVerdict::kRuleViolation) {
    ASSERT_FALSE(r.findings.empty());
    EXPECT_FALSE(key->rule_codes.empty());
  }
  if (!r.first_counterexample.empty()) {
    EXPECT_TRUE(ReplayFinding(l.program, l.params, r.first_counterexample, rules).has_value())
        << "the first counterexample does not reproduce a finding";
    EXPECT_LE(r.counterexample.size(), r.first_counterexample.size());
  }
}

// The bundled schedules with a finding at their default parameters (fast ones: the depth-first
// search finds them in milliseconds).
const char* const kBad[] = {
    "pipelines/cuda_pipeline/bad_arrive_on_noinc.pipe",
    "pipelines/cuda_pipeline/bad_count_budgets_arrive_on.pipe",
    "pipelines/cuda_pipeline/bad_prefetch_tail_wait.pipe",
    "pipelines/single_tma_load/bad_count1_expect_f32_bytes.pipe",
    "pipelines/tma_async_gemm/bad_consumer_start_phase.pipe",
    "pipelines/ws_gemm/bad_coop_empty_threads.pipe",
    "sim/examples/explore/exit_with_copies_in_flight.pipe",
    "sim/examples/explore/phase_overrun.pipe",
    "sim/examples/explore/poll_instead_of_wait.pipe",
};

// The first counterexample is handed out once, before the shortening, and both it and the reported
// one reproduce the finding; the reported one is never longer.
TEST(CounterexampleTest, FirstIsReportedAtOnceAndShortenedOneReproduces) {
  for (const char* f : kBad) {
    SCOPED_TRACE(f);
    const Loaded l = FromFile(f);
    ASSERT_TRUE(l.ok);
    ExploreOptions o;
    o.shorten_budget_s = 1;
    int calls = 0;
    std::vector<Choice> seen;
    o.on_first_counterexample = [&](const ExploreResult& first) {
      ++calls;
      seen = first.counterexample;
      EXPECT_TRUE(IsFinding(first.verdict));
      EXPECT_TRUE(ReplayFinding(l.program, l.params, first.counterexample, true).has_value());
    };
    const ExploreResult r = Explore(l.program, l.params, o);
    ExpectReproduces(l, r, true);
    EXPECT_EQ(calls, 1);
    EXPECT_EQ(seen, r.first_counterexample);
    EXPECT_FALSE(r.shortening.empty());
  }
}

// A zero budget reports the first path as found; a budget already spent leaves it as found too (the
// outcome, not the timing, is checked).
TEST(CounterexampleTest, NoBudgetLeavesTheFirstPath) {
  const Loaded l = FromFile("pipelines/cuda_pipeline/bad_prefetch_tail_wait.pipe");
  ASSERT_TRUE(l.ok);
  for (const double budget : {0.0, 1e-9}) {
    ExploreOptions o;
    o.shorten_budget_s = budget;
    const ExploreResult r = Explore(l.program, l.params, o);
    ExpectReproduces(l, r, true);
    EXPECT_EQ(r.counterexample, r.first_counterexample) << "budget " << budget;
    EXPECT_FALSE(r.counterexample_shortest);
  }
}

// A time limit bounds the whole run, the shortening included: with one that has passed, the search
// stops at its first check (every 256 expansions) with nothing found, or, when it found something
// before, the first counterexample is reported as found. With or without --shortest.
TEST(CounterexampleTest, TimeLimitBoundsTheWholeRun) {
  for (const char* f : {"sim/examples/explore/phase_overrun.pipe",
                        "pipelines/cuda_pipeline/bad_prefetch_tail_wait.pipe",
                        "pipelines/ampere_multistage/bad_no_drain.pipe"}) {
    SCOPED_TRACE(f);
    const Loaded l = FromFile(f);
    ASSERT_TRUE(l.ok);
    for (const bool shortest : {false, true}) {
      ExploreOptions o;
      o.time_limit_s = 1e-9;
      o.shortest_counterexample = shortest;
      const ExploreResult r = Explore(l.program, l.params, o);
      if (r.verdict == ExploreVerdict::kIncomplete) {
        EXPECT_EQ(r.bound, "--time-limit");
        EXPECT_TRUE(r.counterexample.empty());
        continue;
      }
      ExpectReproduces(l, r, true);
      EXPECT_EQ(r.counterexample, r.first_counterexample);
      EXPECT_FALSE(r.counterexample_shortest);
      EXPECT_FALSE(r.has_bfs_stats);
    }
  }
}

// Generated schedules: against the brute-force breadth-first search (the shortest counterexample of
// the schedule, any finding):
//  - the default (reduced, depth-first, shortened) counterexample reproduces and is no shorter;
//  - --shortest without reduction is exactly as short; with reduction, no longer than the reduced
//    breadth-first search's and no shorter than the schedule's;
//  - ShortenByRemoval on the brute force's depth-first path reproduces and is no shorter.
TEST(CounterexampleTest, GeneratedSchedulesShortestMatchesBreadthFirst) {
#if defined(__SANITIZE_ADDRESS__)
  constexpr uint64_t kSeeds = 30;  // the sanitized engine is about 30x slower
#else
  constexpr uint64_t kSeeds = 400;
#endif
  int compared = 0, shortened = 0;
  for (uint64_t seed = 1; seed <= kSeeds; ++seed) {
    const std::string text = gen::GenerateSchedule(seed);
    SCOPED_TRACE("seed " + std::to_string(seed) + ":\n" + text);
    const Loaded l = FromText(text, "gen_" + std::to_string(seed) + ".pipe");
    ASSERT_TRUE(l.ok);
    ExploreOptions b;
    b.check_rules = false;
    b.reduction = false;
    b.breadth_first = true;
    b.max_states = 200'000;
    const ExploreResult bfs = Explore(l.program, l.params, b);
    if (!IsFinding(bfs.verdict)) continue;
    ++compared;
    const size_t shortest = bfs.counterexample.size();

    ExploreOptions o;
    o.check_rules = false;
    o.max_states = 200'000;
    const ExploreResult def = Explore(l.program, l.params, o);
    ExpectReproduces(l, def, false);
    EXPECT_GE(def.counterexample.size(), shortest);
    if (def.counterexample.size() < def.first_counterexample.size()) ++shortened;
    ExploreOptions rb = o;
    rb.breadth_first = true;
    const ExploreResult reduced_bfs = Explore(l.program, l.params, rb);
    ASSERT_TRUE(IsFinding(reduced_bfs.verdict));
    if (def.counterexample_shortest) {
      // Claimed shortest in the reduced graph: its breadth-first search finds none shorter.
      EXPECT_GE(reduced_bfs.counterexample.size(), def.counterexample.size());
    }

    ExploreOptions s = o;
    s.reduction = false;
    s.shortest_counterexample = true;
    const ExploreResult brute_shortest = Explore(l.program, l.params, s);
    ExpectReproduces(l, brute_shortest, false);
    EXPECT_EQ(brute_shortest.counterexample.size(), shortest);
    EXPECT_TRUE(brute_shortest.counterexample_shortest);

    // With reduction: no longer than the reduced breadth-first search's (the dropped-steps path
    // need not lie in the reduced graph, so it can be shorter), never below the schedule's.
    s.reduction = true;
    const ExploreResult reduced_shortest = Explore(l.program, l.params, s);
    ExpectReproduces(l, reduced_shortest, false);
    EXPECT_LE(reduced_shortest.counterexample.size(), reduced_bfs.counterexample.size());
    EXPECT_GE(reduced_shortest.counterexample.size(), shortest);
    EXPECT_TRUE(reduced_shortest.counterexample_shortest);

    ExploreOptions d = o;
    d.reduction = false;
    d.shorten_budget_s = 0;
    const ExploreResult dfs = Explore(l.program, l.params, d);
    ASSERT_TRUE(IsFinding(dfs.verdict));
    const auto key = ReplayFinding(l.program, l.params, dfs.counterexample, false);
    ASSERT_TRUE(key.has_value());
    const Shortened cut =
        ShortenByRemoval(l.program, l.params, dfs.counterexample, *key, false,
                         std::chrono::steady_clock::now() + std::chrono::seconds(5));
    EXPECT_EQ(ReplayFinding(l.program, l.params, cut.path, false), key);
    EXPECT_GE(cut.path.size(), shortest);
    EXPECT_LE(cut.path.size(), dfs.counterexample.size());
    if (::testing::Test::HasFailure()) break;
  }
  std::printf("%d generated schedules with a finding compared, %d shortened\n", compared,
              shortened);
  EXPECT_GT(compared, static_cast<int>(kSeeds / 4));
  EXPECT_GT(shortened, 0);  // the shortening does something on these
}

// Replaying a path that does not reproduce: a step that is not enabled, a path that stops before
// its finding.
TEST(CounterexampleTest, ReplayFindingRejectsPathsThatDoNotReproduce) {
  const Loaded l = FromFile("sim/examples/explore/phase_overrun.pipe");
  ASSERT_TRUE(l.ok);
  ExploreOptions o;
  o.shorten_budget_s = 0;
  const ExploreResult r = Explore(l.program, l.params, o);
  ASSERT_TRUE(IsFinding(r.verdict));
  ASSERT_GE(r.counterexample.size(), 2u);
  std::vector<Choice> prefix(r.counterexample.begin(), r.counterexample.end() - 1);
  EXPECT_FALSE(ReplayFinding(l.program, l.params, prefix, true).has_value());
  std::vector<Choice> bogus = r.counterexample;
  bogus.insert(bogus.begin(), Choice{Choice::Kind::kAsync, 1000});
  EXPECT_FALSE(ReplayFinding(l.program, l.params, bogus, true).has_value());
  EXPECT_TRUE(ReplayFinding(l.program, l.params, r.counterexample, true).has_value());
}

}  // namespace
}  // namespace parity::verifier
