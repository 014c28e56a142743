// The data-race checker against the race oracle over generated schedules (issue 24, item 6):
// on every path of every schedule (tests/verifier/gen/race_oracle.h walks them all, no state
// caching), verifier::CheckRaces (vector clocks of verifier/happens_before.h) and the oracle
// (the definition applied by reachability in an explicit happens-before graph) give the same
// set of race pairs. And where every path completes and some path races, explore's reduced
// search does not say VERIFIED.
//
// PARITY_RACE_SCHEDULES=N and PARITY_RACE_SEED=S run N schedules from seed S (a long run);
// PARITY_RACE_OFFSET_SCHEDULES, PARITY_RACE_ASYNC_SCHEDULES and PARITY_RACE_PROXY_SCHEDULES set
// the other modes' counts.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <string>

#include "sim/ir/ir.h"
#include "sim/ir/parser.h"
#include "sim/model/codes.h"
#include "tests/verifier/gen/race_oracle.h"
#include "tests/verifier/gen/schedule_gen.h"
#include "verifier/explore.h"

namespace parity::verifier {
namespace {

#if defined(__SANITIZE_ADDRESS__)
constexpr uint64_t kSchedules = 100;
constexpr uint64_t kOffsetSchedules = 15;
constexpr uint64_t kAsyncSchedules = 30;
constexpr uint64_t kProxySchedules = 30;
#else
constexpr uint64_t kSchedules = 600;
constexpr uint64_t kOffsetSchedules = 60;
constexpr uint64_t kAsyncSchedules = 150;
constexpr uint64_t kProxySchedules = 150;
#endif
// Schedules with more paths than this are compared on random runs instead (counted).
constexpr uint64_t kMaxPaths = 500;
constexpr uint64_t kRandomRuns = 20;

uint64_t EnvOr(const char* name, uint64_t fallback) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? std::strtoull(v, nullptr, 0) : fallback;
}

std::string Show(const std::set<gen::RacePair>& s) {
  std::string out;
  for (const auto& [ra, pa, rb, pb, buf, slot] : s) {
    out += " (role " + std::to_string(ra) + " pc " + std::to_string(pa) + ", role " +
           std::to_string(rb) + " pc " + std::to_string(pb) + ", buffer " + std::to_string(buf) +
           "[" + std::to_string(slot) + "])";
  }
  return out.empty() ? " none" : out;
}

struct Tally {
  uint64_t compared = 0, skipped = 0, uncovered = 0, paths = 0, racy_paths = 0;
  uint64_t racy_schedules = 0, clean_schedules = 0, all_complete_racy = 0;
  uint64_t explore_verified_racy = 0;  // explore said VERIFIED although a completed run races
  uint64_t explore_race_only_clean = 0;  // explore found only races the oracle never saw
};

// Which generator options a run draws from (schedule_gen.h).
enum class Mode {
  kPlain,
  kOffsets,  // GenOptions::variable_offsets
  kAsync,    // extended_ops (cp.async, st.async, named barriers) and memory_order
  kProxies,  // GenOptions::proxies: reads that name their proxy, fence.proxy.async
  kAtomics,  // kAsync and atomics (red / atom, local and DSMEM)
  kLateRules,  // GenOptions::late_rules and atomics: tensor map updates, peer accesses
};

void CompareOne(uint64_t seed, Mode mode, Tally* t) {
  // Small schedules: every path is walked.
  gen::GenOptions g;
  g.max_agents_per_cta = 2;
  g.max_trips = 2;
  g.max_ops = 3;
  g.variable_offsets = mode == Mode::kOffsets;
  g.extended_ops = g.memory_order = mode == Mode::kAsync || mode == Mode::kAtomics;
  g.atomics = mode == Mode::kAtomics || mode == Mode::kLateRules;
  g.late_rules = mode == Mode::kLateRules;
  g.proxies = mode == Mode::kProxies;
  const std::string text = gen::GenerateSchedule(seed, g);
  SCOPED_TRACE("seed " + std::to_string(seed) + "; the schedule (gen_schedule " +
               std::to_string(seed) + " with smaller options" +
               (mode == Mode::kOffsets ? ", variable offsets"
                : mode == Mode::kAsync   ? ", extended ops and memory orders"
                : mode == Mode::kAtomics ? ", extended ops, memory orders and atomics"
                : mode == Mode::kProxies ? ", reads that name their proxy"
                : mode == Mode::kLateRules ? ", the later rules' operations and atomics"
                                         : "") +
               "):\n" + text);
  auto parsed = ir::ParseProgram(text, "gen_" + std::to_string(seed) + ".pipe");
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  const ir::Program& p = *parsed;
  if (!gen::OracleCovers(p)) {
    ++t->uncovered;
    return;
  }
  auto bound = ir::BindParams(p, {});
  ASSERT_TRUE(bound.ok()) << bound.status().ToString();
  gen::PathRaces r = gen::AllPathRaces(p, *bound, kMaxPaths);
  const bool every_path = r.complete;
  if (!every_path) {
    ++t->skipped;
    r = gen::RandomRunRaces(p, *bound, kRandomRuns, seed * 1000);
  }
  ++t->compared;
  t->paths += r.paths;
  t->racy_paths += r.racy_paths;
  EXPECT_EQ(r.mismatches, 0u) << "paths where the checker and the oracle differ; on the first:\n"
                              << "  oracle:" << Show(r.first_oracle) << "\n"
                              << "  checker:" << Show(r.first_checker)
                              << (r.problem.empty() ? "" : "\n  oracle's run: " + r.problem);
  (r.all.empty() ? t->clean_schedules : t->racy_schedules) += 1;
  if (!every_path || r.bad_end) return;
  // Every run completes: explore (reduced and brute force) is VERIFIED exactly when no run
  // breaks a rule; where one races, it must not be VERIFIED; where it reports only races, some
  // run races.
  for (bool reduction : {true, false}) {
    ExploreOptions o;
    o.reduction = reduction;
    const ExploreResult x = Explore(p, *bound, o);
    if (r.completed_racy && x.verdict == ExploreVerdict::kVerified) ++t->explore_verified_racy;
    if (x.verdict == ExploreVerdict::kRuleViolation) {
      bool only_races = true;
      for (const Finding& f : x.findings) {
        if (model::CodeSeverity(f.code()) == model::Severity::kError &&
            f.code() != model::Code::kDataRace && f.code() != model::Code::kSharedMemoryRace &&
            f.code() != model::Code::kReleaseScopeNarrow) {
          only_races = false;
        }
      }
      if (only_races && !r.completed_racy) ++t->explore_race_only_clean;
    }
  }
  if (r.completed_racy) ++t->all_complete_racy;
}

void RunRange(uint64_t first, uint64_t count, Mode mode = Mode::kPlain) {
  Tally t;
  const auto start = std::chrono::steady_clock::now();
  for (uint64_t seed = first; seed < first + count; ++seed) {
    CompareOne(seed, mode, &t);
    if (::testing::Test::HasFailure()) break;
  }
  const double s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("seeds %llu..%llu: %llu compared, %llu on random runs only (over %llu paths), %llu not covered "
              "(aliases), %.1f s\n",
              (unsigned long long)first, (unsigned long long)(first + count - 1),
              (unsigned long long)t.compared, (unsigned long long)t.skipped,
              (unsigned long long)kMaxPaths, (unsigned long long)t.uncovered, s);
  std::printf("  paths %llu, racy paths %llu; schedules with a race %llu, without %llu\n",
              (unsigned long long)t.paths, (unsigned long long)t.racy_paths,
              (unsigned long long)t.racy_schedules, (unsigned long long)t.clean_schedules);
  std::printf("  every run completes and one races: %llu; explore (reduced or brute force) said "
              "VERIFIED on such a schedule %llu times; reported only races where no run races %llu "
              "times\n",
              (unsigned long long)t.all_complete_racy,
              (unsigned long long)t.explore_verified_racy,
              (unsigned long long)t.explore_race_only_clean);
  EXPECT_EQ(t.explore_verified_racy, 0u) << "explore said VERIFIED although a run races";
  EXPECT_EQ(t.explore_race_only_clean, 0u) << "explore reported a race that no run has";
  // The comparison must see both kinds of schedule, else it proves little.
  if (count >= 150 && mode == Mode::kPlain) {
    EXPECT_GT(t.compared, count / 2);
    EXPECT_GT(t.racy_schedules, t.compared / 20);
    EXPECT_GT(t.clean_schedules, t.compared / 20);
  }
}

uint64_t Count() { return EnvOr("PARITY_RACE_SCHEDULES", kSchedules); }
uint64_t First() { return EnvOr("PARITY_RACE_SEED", 1); }

// Schedules whose offsets only a run knows (GenOptions::variable_offsets: loop-indexed stages,
// halves addressed by `agent` and `cta_rank`): the oracle's ranges come from its own run of
// each agent's program. PARITY_RACE_OFFSET_SCHEDULES=N for a long run.
TEST(RaceOracleTest, CheckerEqualsOracleWithOffsetsOfRuns) {
  const uint64_t n = EnvOr("PARITY_RACE_OFFSET_SCHEDULES", kOffsetSchedules);
  RunRange(First(), n, Mode::kOffsets);
}

// Schedules with cp.async (groups, waits, cp.async.mbarrier.arrive), st.async into the peer,
// named barriers, memory-order qualifiers, fence.acq_rel patterns, relaxed cluster barriers and
// DSMEM accesses (GenOptions::extended_ops, memory_order). PARITY_RACE_ASYNC_SCHEDULES=N for a
// long run.
TEST(RaceOracleTest, CheckerEqualsOracleWithAsyncCopiesAndMemoryOrders) {
  const uint64_t n = EnvOr("PARITY_RACE_ASYNC_SCHEDULES", kAsyncSchedules);
  RunRange(First(), n, Mode::kAsync);
}

// Reads that name their proxy (`use.generic`, `use.async`) among TMA / bulk loads, writes and
// fence.proxy.async: the cross-proxy pairs (P2006, verifier/races.cc CrossProxy) against the
// oracle's. PARITY_RACE_PROXY_SCHEDULES=N for a long run.
TEST(RaceOracleTest, CheckerEqualsOracleWithProxies) {
  const uint64_t n = EnvOr("PARITY_RACE_PROXY_SCHEDULES", kProxySchedules);
  RunRange(First(), n, Mode::kProxies);
}

// The same with shared-memory atomics (GenOptions::atomics): two atomics of the same bytes never
// race, an atomic and a plain access or copy do unless ordered; the checker must agree with the
// oracle on every path. PARITY_RACE_ATOMIC_SCHEDULES=N for a long run.
TEST(RaceOracleTest, CheckerEqualsOracleWithAtomics) {
  const uint64_t n = EnvOr("PARITY_RACE_ATOMIC_SCHEDULES", kAsyncSchedules);
  RunRange(First(), n, Mode::kAtomics);
}

// The later rules' operations (GenOptions::late_rules) with atomics: tensor map updates and
// their proxy fences, DSMEM reads, writes and atomics of the peer with and without a cluster
// barrier first. They add no happens-before edge, so the race pairs stay the oracle's.
// PARITY_RACE_LATE_SCHEDULES=N for a long run.
TEST(RaceOracleTest, CheckerEqualsOracleWithLateRulesAndAtomics) {
  const uint64_t n = EnvOr("PARITY_RACE_LATE_SCHEDULES", kAsyncSchedules * 2 / 3);
  RunRange(First(), n, Mode::kLateRules);
}

// Two halves of the seeds (shards).
TEST(RaceOracleTest, CheckerEqualsOracleOnEveryPathHalf1) { RunRange(First(), Count() / 2); }
TEST(RaceOracleTest, CheckerEqualsOracleOnEveryPathHalf2) {
  RunRange(First() + Count() / 2, Count() - Count() / 2);
}

}  // namespace
}  // namespace parity::verifier
