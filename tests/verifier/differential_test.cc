// Differential tests of the explorer over generated schedules (issue 24, item 6): for every
// schedule of tests/verifier/gen, three searches of every interleaving must agree:
//   the naive oracle (tests/verifier/gen/naive_explore.h: breadth first over Choices / Step),
//   the explorer's brute force (ExploreOptions::reduction = false: successor prediction,
//     batching, the agent-step memo), and
//   the explorer's reduced search (persistent sets, guarded waits, symmetry, phase bounds).
// Agreement: the same reachable completed and deadlocked end states (fingerprints; symmetric
// fingerprints where symmetry applies, then the brute force's counts are compared with the
// oracle's as "some" / "none"), the same "a violation is reachable" and "a deadlock is
// reachable", and the verdict of a search that stops at the first finding is the oracle's class
// (verified when the oracle saw only completed ends), its counterexample replays to the reported
// outcome, and a reported violation's code is one the oracle reached.
// The protocol rules (verifier/rules.h) are off: explore runs them on one path per end state,
// which is not an interleaving property (issue 24, item 3).
//
// A failure prints the seed and the schedule's text; `gen_schedule SEED` prints it again.
// PARITY_DIFF_SCHEDULES=N and PARITY_DIFF_SEED=S run N schedules from seed S (a long run).
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "sim/engine/engine.h"
#include "sim/ir/ir.h"
#include "sim/ir/parser.h"
#include "sim/model/codes.h"
#include "tests/verifier/gen/naive_explore.h"
#include "tests/verifier/gen/schedule_gen.h"
#include "verifier/explore.h"
#include "verifier/rules.h"

namespace parity::verifier {
namespace {

using engine::Outcome;

#if defined(__SANITIZE_ADDRESS__)
constexpr uint64_t kSchedules = 200;  // the sanitized engine runs about 30x slower here
#else
constexpr uint64_t kSchedules = 3000;
#endif
// Schedules whose oracle walk passes this many states are skipped (counted): the generator
// keeps them rare.
constexpr uint64_t kMaxNaiveStates = 20'000;

uint64_t EnvOr(const char* name, uint64_t fallback) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? std::strtoull(v, nullptr, 0) : fallback;
}

struct Tally {
  uint64_t compared = 0, skipped = 0, verified = 0, deadlock = 0, violation = 0, both = 0;
  uint64_t bad_input = 0, symmetric = 0, naive_states = 0, brute_states = 0, reduced_states = 0;
  // Non-warp-specialised rings: schedules where the held-phase futures (explore/held_phase.cc)
  // kept a unit out of some closure, and where the search stored fewer states with them.
  uint64_t held_cut = 0, held_smaller = 0, whole_states = 0;
  // Exact peers (ExploreOptions::exact_peer_futures): schedules whose reduced search stored
  // fewer states with it than without (the rule changed some persistent set), and the states
  // of the searches without it.
  uint64_t exact_peer_hits = 0, inexact_states = 0;
  // Arrival costs (ExploreOptions::arrival_costs): schedules whose reduced search stored fewer
  // states with them than without, and the states of the searches without them.
  uint64_t cost_hits = 0, costless_states = 0;
  // The named-barrier rule (ExploreOptions::named_barrier_commute): schedules whose reduced
  // search stored fewer states with it than without, and the states without it.
  uint64_t named_hits = 0, unnamed_states = 0;
  uint64_t rule_findings = 0;  // and where the search with rules found a rule or race finding
  std::map<std::string, uint64_t> codes;
  // GenOptions::assertions: schedules where some assertion fails on some path, and where the
  // exists property holds in no completed end state.
  uint64_t assert_failed = 0, exists_none = 0;
};

std::vector<uint64_t> Sorted(const std::set<uint64_t>& a, const std::set<uint64_t>& b) {
  std::vector<uint64_t> v(a.begin(), a.end());
  v.insert(v.end(), b.begin(), b.end());
  std::sort(v.begin(), v.end());
  return v;
}

// The verdict of a search that stops at its first finding, against the oracle.
void CheckVerdict(const ir::Program& p, const std::vector<int64_t>& params,
                  const gen::NaiveEnds& naive, bool reduction) {
  ExploreOptions o;
  o.reduction = reduction;
  o.check_rules = false;
  const ExploreResult r = Explore(p, params, o);
  SCOPED_TRACE(reduction ? "reduced, first finding" : "brute force, first finding");
  const bool bad = !naive.violating.empty() || !naive.deadlocked.empty();
  if (!bad) {
    // A schedule with `exists` properties: a complete search with no other finding reports each
    // one that holds in no completed end state of the oracle (P2034, no counterexample).
    const std::vector<Finding> missing = ExistsFindings(p, naive.exists_held, false);
    if (missing.empty()) {
      EXPECT_EQ(r.verdict, ExploreVerdict::kVerified) << ExploreVerdictName(r.verdict);
      return;
    }
    EXPECT_EQ(r.verdict, ExploreVerdict::kRuleViolation) << ExploreVerdictName(r.verdict);
    EXPECT_TRUE(r.counterexample.empty());
    ASSERT_EQ(r.findings.size(), missing.size());
    for (size_t i = 0; i < missing.size(); ++i) {
      EXPECT_EQ(r.findings[i].violation, missing[i].violation);
    }
    return;
  }
  ASSERT_TRUE(r.verdict == ExploreVerdict::kViolation || r.verdict == ExploreVerdict::kDeadlock)
      << ExploreVerdictName(r.verdict);
  auto end = Replay(p, params, r.counterexample);
  ASSERT_TRUE(end.ok()) << end.status().ToString();
  if (r.verdict == ExploreVerdict::kDeadlock) {
    EXPECT_FALSE(naive.deadlocked.empty());
    EXPECT_EQ(end->outcome(), Outcome::kDeadlock) << engine::OutcomeName(end->outcome());
  } else {
    EXPECT_FALSE(naive.violating.empty());
    ASSERT_EQ(end->outcome(), Outcome::kViolation) << engine::OutcomeName(end->outcome());
    ASSERT_TRUE(end->result().violation.has_value());
    const model::Code code = end->result().violation->violation.code;
    EXPECT_TRUE(naive.codes.count(code)) << "reported " << model::CodeId(code)
                                         << ", which the oracle never reached";
  }
}

void CompareOne(uint64_t seed, Tally* t, const gen::GenOptions& g = {}) {
  const std::string text = gen::GenerateSchedule(seed, g);
  SCOPED_TRACE("seed " + std::to_string(seed) + "; the schedule (gen_schedule " +
               std::string(g.nonws ? "--nonws " : "") + std::to_string(seed) + "):\n" + text);
  auto parsed = ir::ParseProgram(text, "gen_" + std::to_string(seed) + ".pipe");
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  const ir::Program& p = *parsed;
  auto bound = ir::BindParams(p, {});
  ASSERT_TRUE(bound.ok()) << bound.status().ToString();
  const std::vector<int64_t>& params = *bound;

  const gen::NaiveEnds naive = gen::NaiveExplore(p, params, kMaxNaiveStates);
  if (!naive.complete) {
    ++t->skipped;
    return;
  }
  ASSERT_FALSE(naive.stuck) << "a running state without an enabled step";
  ASSERT_FALSE(naive.step_limit);
  ++t->compared;
  t->naive_states += naive.states;

  ExploreOptions o;
  o.stop_at_first = false;
  o.collect_terminals = true;
  o.check_rules = false;
  o.max_states = 10 * kMaxNaiveStates;
  o.reduction = false;
  const ExploreResult brute = Explore(p, params, o);
  o.reduction = true;
  const ExploreResult reduced = Explore(p, params, o);
  ASSERT_TRUE(brute.bound.empty()) << brute.bound;
  ASSERT_TRUE(reduced.bound.empty()) << reduced.bound;
  if (g.cta_chains) {  // the rings' searches without exact peers, to count where it applies
    o.exact_peer_futures = false;
    const ExploreResult inexact = Explore(p, params, o);
    o.exact_peer_futures = true;
    ASSERT_TRUE(inexact.bound.empty()) << inexact.bound;
    EXPECT_EQ(inexact.terminals, brute.terminals) << "without exact peers";
    if (reduced.verdict != ExploreVerdict::kBadInput) {
      t->inexact_states += inexact.stats.states;
      if (reduced.stats.states < inexact.stats.states) ++t->exact_peer_hits;
    }
  }

  if (g.leader_multicast) {  // the same search without arrival costs: the same end states
    o.arrival_costs = false;
    const ExploreResult costless = Explore(p, params, o);
    o.arrival_costs = true;
    ASSERT_TRUE(costless.bound.empty()) << costless.bound;
    EXPECT_EQ(costless.terminals, brute.terminals) << "without arrival costs";
    EXPECT_EQ(costless.stats.violation_ends > 0, reduced.stats.violation_ends > 0);
    if (reduced.verdict != ExploreVerdict::kBadInput) {
      t->costless_states += costless.stats.states;
      if (reduced.stats.states < costless.stats.states) ++t->cost_hits;
    }
    // With the protocol rules and races on every path (every_path.h), as `parity explore`
    // runs: VERIFIED with the reduction exactly when the brute force says VERIFIED (the
    // mutations that read a stage before its wait or after its release race).
    ExploreOptions full;
    full.reduction = false;
    const ExploreResult brute_rules = Explore(p, params, full);
    full.reduction = true;
    const ExploreResult reduced_rules = Explore(p, params, full);
    EXPECT_EQ(reduced_rules.verdict == ExploreVerdict::kVerified,
              brute_rules.verdict == ExploreVerdict::kVerified)
        << "with rules: reduced " << ExploreVerdictName(reduced_rules.verdict) << ", brute force "
        << ExploreVerdictName(brute_rules.verdict);
    t->rule_findings += reduced_rules.verdict == ExploreVerdict::kRuleViolation;
  }

  if (g.named_barriers) {
    // Without the rule: the same end states; the object-by-object closure takes the same sets
    // as the masks; with the protocol rules and races on every path, VERIFIED exactly when the
    // brute force says so.
    o.named_barrier_commute = false;
    const ExploreResult unnamed = Explore(p, params, o);
    o.named_barrier_commute = true;
    ASSERT_TRUE(unnamed.bound.empty()) << unnamed.bound;
    EXPECT_EQ(unnamed.terminals, brute.terminals) << "without the named-barrier rule";
    EXPECT_EQ(unnamed.stats.violation_ends > 0, reduced.stats.violation_ends > 0);
    o.mask_closure = false;
    const ExploreResult objects = Explore(p, params, o);
    o.mask_closure = true;
    EXPECT_EQ(objects.stats.states, reduced.stats.states) << "object by object";
    EXPECT_EQ(objects.terminals, reduced.terminals);
    if (reduced.verdict != ExploreVerdict::kBadInput) {
      t->unnamed_states += unnamed.stats.states;
      if (reduced.stats.states < unnamed.stats.states) ++t->named_hits;
    }
    ExploreOptions full;
    full.reduction = false;
    const ExploreResult brute_rules = Explore(p, params, full);
    full.reduction = true;
    const ExploreResult reduced_rules = Explore(p, params, full);
    EXPECT_EQ(reduced_rules.verdict == ExploreVerdict::kVerified,
              brute_rules.verdict == ExploreVerdict::kVerified)
        << "with rules: reduced " << ExploreVerdictName(reduced_rules.verdict) << ", brute force "
        << ExploreVerdictName(brute_rules.verdict);
    t->rule_findings += reduced_rules.verdict == ExploreVerdict::kRuleViolation;
  }

  if (naive.error) {
    ++t->bad_input;
    EXPECT_EQ(brute.verdict, ExploreVerdict::kBadInput) << ExploreVerdictName(brute.verdict);
    EXPECT_EQ(reduced.verdict, ExploreVerdict::kBadInput) << ExploreVerdictName(reduced.verdict);
    return;
  }
  t->brute_states += brute.stats.states;
  t->reduced_states += reduced.stats.states;

  // The brute force against the oracle.
  if (!reduced.symmetry_applied) {
    EXPECT_EQ(brute.terminals, Sorted(naive.completed, naive.deadlocked))
        << "the brute force's completed and deadlocked end states differ from the oracle's";
    EXPECT_EQ(brute.stats.completed_ends, naive.completed.size());
    EXPECT_EQ(brute.stats.deadlock_ends, naive.deadlocked.size());
    EXPECT_EQ(brute.stats.violation_ends, naive.violating.size());
  } else {
    ++t->symmetric;
    EXPECT_EQ(brute.stats.completed_ends > 0, !naive.completed.empty());
    EXPECT_EQ(brute.stats.deadlock_ends > 0, !naive.deadlocked.empty());
    EXPECT_EQ(brute.stats.violation_ends > 0, !naive.violating.empty());
  }
  // The reduced search against the brute force and the oracle.
  EXPECT_EQ(reduced.terminals, brute.terminals)
      << "the reduced search's completed and deadlocked end states differ from the brute force's";
  EXPECT_EQ(reduced.stats.deadlock_ends > 0, !naive.deadlocked.empty());
  EXPECT_EQ(reduced.stats.violation_ends > 0, !naive.violating.empty())
      << "a violation is reachable in " << (naive.violating.empty() ? "neither the oracle"
                                                                     : "the oracle")
      << " but the reduced search saw " << reduced.stats.violation_ends;

  CheckVerdict(p, params, naive, /*reduction=*/false);
  CheckVerdict(p, params, naive, /*reduction=*/true);

  if (g.assertions) {
    // The brute force fails the same assertions as the oracle (asserts and foralls, by id).
    // The reduced search keeps one interleaving per trace: a failure is a violation that ends
    // its run, so of several failures (or a failure and another violation) in independent
    // steps it may reach only one, as for any violation; it reports only failures the oracle
    // has, and one when the oracle's only violations are assertion failures. The end states of
    // complete runs are all kept (terminals above), so every exists property holds in the
    // same end states as in the oracle.
    const std::vector<int64_t> failed(naive.failed_assertions.begin(),
                                      naive.failed_assertions.end());
    EXPECT_EQ(brute.failed_assertions, failed) << "brute force against the oracle";
    EXPECT_TRUE(std::includes(failed.begin(), failed.end(), reduced.failed_assertions.begin(),
                              reduced.failed_assertions.end()))
        << "the reduced search fails an assertion the oracle never fails";
    if (naive.codes == std::set<model::Code>{model::Code::kAssertionFailed}) {
      EXPECT_FALSE(reduced.failed_assertions.empty())
          << "only assertion failures are reachable, and the reduced search found none";
    }
    EXPECT_EQ(brute.exists_held, naive.exists_held);
    EXPECT_EQ(reduced.exists_held, naive.exists_held);
    t->assert_failed += !failed.empty();
    t->exists_none += naive.exists_held == 0 && !naive.completed.empty();
  }

  if (g.nonws) {
    // Whole futures (the held-phase rule off) reach the same end states; the object-by-object
    // closure takes the same persistent sets as the masks with the rule on.
    o.held_phase_futures = false;
    const ExploreResult whole = Explore(p, params, o);
    ASSERT_TRUE(whole.bound.empty()) << whole.bound;
    EXPECT_EQ(whole.terminals, brute.terminals);
    EXPECT_EQ(whole.stats.violation_ends > 0, !naive.violating.empty());
    EXPECT_EQ(reduced.stats.held_phase_cuts > 0 || reduced.stats.states < whole.stats.states,
              reduced.stats.held_phase_cuts > 0)
        << "fewer states without the rule ever applying";
    o.held_phase_futures = true;
    o.mask_closure = false;
    const ExploreResult objects = Explore(p, params, o);
    EXPECT_EQ(objects.stats.states, reduced.stats.states);
    EXPECT_EQ(objects.stats.transitions, reduced.stats.transitions);
    EXPECT_EQ(objects.terminals, reduced.terminals);
    t->held_cut += reduced.stats.held_phase_cuts > 0;
    t->held_smaller += reduced.stats.states < whole.stats.states;
    t->whole_states += whole.stats.states;
  }

  const bool v = !naive.violating.empty(), d = !naive.deadlocked.empty();
  (v && d ? t->both : v ? t->violation : d ? t->deadlock : t->verified) += 1;
  for (model::Code c : naive.codes) ++t->codes[std::string(model::CodeId(c))];
}

Tally RunRange(uint64_t first, uint64_t count, const gen::GenOptions& g = {}) {
  Tally t;
  const auto start = std::chrono::steady_clock::now();
  for (uint64_t seed = first; seed < first + count; ++seed) {
    CompareOne(seed, &t, g);
    if (::testing::Test::HasFailure()) break;  // one reproducible failure is enough
  }
  const double s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("seeds %llu..%llu%s: %llu compared (%llu skipped: oracle over %llu states), %.1f s\n",
              (unsigned long long)first, (unsigned long long)(first + count - 1),
              g.nonws ? " (non-warp-specialised rings)" : "", (unsigned long long)t.compared,
              (unsigned long long)t.skipped,
              (unsigned long long)kMaxNaiveStates, s);
  std::printf("  verdicts: %llu verified, %llu deadlock only, %llu violation only, %llu both, "
              "%llu bad input; %llu with symmetry\n",
              (unsigned long long)t.verified, (unsigned long long)t.deadlock,
              (unsigned long long)t.violation, (unsigned long long)t.both,
              (unsigned long long)t.bad_input, (unsigned long long)t.symmetric);
  std::printf("  states: oracle %llu, brute force %llu, reduced %llu (without exact peers %llu; "
              "fewer with them in %llu schedules)\n  codes:",
              (unsigned long long)t.naive_states, (unsigned long long)t.brute_states,
              (unsigned long long)t.reduced_states, (unsigned long long)t.inexact_states,
              (unsigned long long)t.exact_peer_hits);
  for (const auto& [code, n] : t.codes) std::printf(" %s %llu", code.c_str(), (unsigned long long)n);
  std::printf("\n");
  if (g.named_barriers) return t;  // GeneratedNamedBarriers asks for its own mix
  if (g.pdl_chains) {
    // No mbarrier rule is in play: completed and hung chains, both common.
    if (count >= 50) {
      EXPECT_GT(t.compared, count * 3 / 4);
      EXPECT_GT(t.verified, count / 4);
      EXPECT_GT(t.deadlock, count / 20);
    }
    return t;
  }
  if (g.nonws) {
    std::printf("  held-phase futures: applied in %llu schedules, fewer states in %llu; states "
                "with the rule %llu, without %llu\n",
                (unsigned long long)t.held_cut, (unsigned long long)t.held_smaller,
                (unsigned long long)t.reduced_states, (unsigned long long)t.whole_states);
    // The new rule must be exercised, and the verdicts mixed.
    if (count >= 100) {
      EXPECT_GT(t.compared, count / 2);
      EXPECT_GT(t.held_smaller, t.compared / 5);
      EXPECT_GT(t.verified, t.compared / 10);
      EXPECT_GT(t.deadlock + t.violation + t.both, t.compared / 10);
    }
    return t;
  }
  // The generator must give a real mix, else the comparison proves little (with assertions
  // most schedules fail one: GeneratedSchedulesWithAssertions asks for its own mix).
  if (count >= 200 && !g.assertions) {
    EXPECT_GT(t.compared, count * 3 / 4);
    EXPECT_GT(t.verified, count / 10);
    EXPECT_GT(t.deadlock + t.both, count / 10);
    EXPECT_GT(t.violation + t.both, count / 10);
  }
  return t;
}

// Four quarters (shards) of the seeds.
uint64_t Count() { return EnvOr("PARITY_DIFF_SCHEDULES", kSchedules); }
uint64_t First() { return EnvOr("PARITY_DIFF_SEED", 1); }

TEST(DifferentialTest, GeneratedSchedulesQuarter1) { RunRange(First(), Count() / 4); }
TEST(DifferentialTest, GeneratedSchedulesQuarter2) {
  RunRange(First() + Count() / 4, Count() / 4);
}
TEST(DifferentialTest, GeneratedSchedulesQuarter3) {
  RunRange(First() + 2 * (Count() / 4), Count() / 4);
}
TEST(DifferentialTest, GeneratedSchedulesQuarter4) {
  RunRange(First() + 3 * (Count() / 4), Count() - 3 * (Count() / 4));
}

// Non-warp-specialised rings (GenOptions::nonws), where the held-phase futures of the reduction
// apply (explore/held_phase.cc): the same agreement, and the same end states without the rule.
#if defined(__SANITIZE_ADDRESS__)
constexpr uint64_t kNonWsSchedules = 60;
#else
constexpr uint64_t kNonWsSchedules = 300;
#endif
TEST(DifferentialTest, NonWarpSpecialisedRings) {
  gen::GenOptions g;
  g.nonws = true;
  RunRange(EnvOr("PARITY_NONWS_SEED", 1), EnvOr("PARITY_NONWS_SCHEDULES", kNonWsSchedules), g);
}

// Rings and chains of 2-4 CTAs (GenOptions::cta_chains): st.async, DSMEM writes with remote
// arrives and remote complete_tx, remote releases, cluster barriers. Exact peers must change the
// persistent sets of a good part of them (else this test would not exercise the rule).
uint64_t ChainCount() { return EnvOr("PARITY_CHAIN_SCHEDULES", kSchedules / 60); }
TEST(DifferentialTest, GeneratedCtaChains) {
  gen::GenOptions g;
  g.cta_chains = true;
  g.max_ctas = 4;
  const uint64_t n = ChainCount();
  const Tally t = RunRange(EnvOr("PARITY_CHAIN_SEED", 1), n, g);
  if (n < 20) return;  // the sanitized run's few seeds: too few to ask for a mix
  EXPECT_GT(t.exact_peer_hits, t.compared / 4);
  EXPECT_GT(t.verified, 0u);
  EXPECT_GT(t.deadlock + t.violation + t.both, 0u);
}

// DeepGEMM's cluster of two (GenOptions::leader_multicast): CTA 0 multicasts A into both CTAs,
// consumers release both CTAs' stages one after the other. The arrival costs of the balance
// analysis (explore/reducer.h, ArrivalCost) must change the persistent sets of a good part of
// them, and the mutations (CTA 1 loading its own A: a CTA a round ahead of its peer's releases)
// keep the verdicts mixed.
TEST(DifferentialTest, GeneratedLeaderMulticast) {
  gen::GenOptions g;
  g.leader_multicast = true;
  const uint64_t n = EnvOr("PARITY_LEADER_SCHEDULES", kSchedules / 30);
  const Tally t = RunRange(EnvOr("PARITY_LEADER_SEED", 1), n, g);
  std::printf("  arrival costs: fewer states in %llu schedules; states with them %llu, "
              "without %llu; a rule or race found with rules on in %llu\n",
              (unsigned long long)t.cost_hits, (unsigned long long)t.reduced_states,
              (unsigned long long)t.costless_states, (unsigned long long)t.rule_findings);
  if (n < 20) return;
  EXPECT_GT(t.compared, n / 2);
  EXPECT_GT(t.cost_hits, t.compared / 10);
  EXPECT_GT(t.rule_findings, 0u);
  EXPECT_GT(t.verified, t.compared / 10);
  EXPECT_GT(t.deadlock + t.violation + t.both, t.compared / 10);
}

// Named barriers over many agents (GenOptions::named_barriers): epilogue barriers and ordered
// ping-pong with mutations. The named-barrier rule (verifier/explore/reducer_named.cc) must
// change the persistent sets of a good part of them, and the verdicts stay mixed.
TEST(DifferentialTest, GeneratedNamedBarriers) {
  gen::GenOptions g;
  g.named_barriers = true;
  const uint64_t n = EnvOr("PARITY_NAMED_SCHEDULES", kSchedules / 30);
  const Tally t = RunRange(EnvOr("PARITY_NAMED_SEED", 1), n, g);
  std::printf("  named-barrier rule: fewer states in %llu schedules; states with it %llu, "
              "without %llu; a rule or race found with rules on in %llu\n",
              (unsigned long long)t.named_hits, (unsigned long long)t.reduced_states,
              (unsigned long long)t.unnamed_states, (unsigned long long)t.rule_findings);
  if (n < 20) return;
  EXPECT_GT(t.compared, n / 2);
  EXPECT_GT(t.named_hits, t.compared / 5);
  EXPECT_GT(t.rule_findings, 0u);
  EXPECT_GT(t.verified, t.compared / 10);
  EXPECT_GT(t.deadlock + t.violation + t.both, t.compared / 10);
}

// Chains of 2-4 grids of programmatic dependent launches (GenOptions::pdl_chains): which
// griddepcontrol.wait blocks on which grid's exits, and the reduction's footprints for them
// (the exits of the prerequisite grid's CTAs), against the oracle and the brute force.
TEST(DifferentialTest, GeneratedPdlChains) {
  gen::GenOptions g;
  g.pdl_chains = true;
  RunRange(EnvOr("PARITY_PDL_SEED", 1), EnvOr("PARITY_PDL_SCHEDULES", kSchedules / 30), g);
}

// Assertions (GenOptions::assertions): asserts with state reads, forall and exists on top of
// the generated shapes; the reduction must keep the same failing assertions and the same end
// states the exists properties are judged on.
uint64_t AssertCount() { return EnvOr("PARITY_ASSERT_SCHEDULES", kSchedules / 16); }
TEST(DifferentialTest, GeneratedSchedulesWithAssertions) {
  gen::GenOptions g;
  g.assertions = true;
  const uint64_t n = AssertCount();
  const Tally t = RunRange(EnvOr("PARITY_ASSERT_SEED", 1), n, g);
  std::printf("  assertions: some fails in %llu schedules; exists holds nowhere in %llu\n",
              (unsigned long long)t.assert_failed, (unsigned long long)t.exists_none);
  if (n < 20) return;
  EXPECT_GT(t.compared, n * 3 / 4);
  EXPECT_GT(t.assert_failed, t.compared / 10);
  EXPECT_LT(t.assert_failed, t.compared);
  EXPECT_GT(t.exists_none, 0u);
}

// The later rules' operations (GenOptions::late_rules) with atomics: tensor map updates and their
// proxy fences, DSMEM reads, writes and atomics of the peer, the prologue's cluster barrier
// often left out; reduced explore, brute force and the oracle reach the same ends.
TEST(DifferentialTest, GeneratedLateRuleOpsAndAtomics) {
  gen::GenOptions g;
  g.late_rules = true;
  g.atomics = true;
  const uint64_t n = EnvOr("PARITY_LATE_SCHEDULES", kSchedules / 30);
  const Tally t = RunRange(EnvOr("PARITY_LATE_SEED", 1), n, g);
  if (n < 50) return;
  EXPECT_GT(t.verified, 0u);
  EXPECT_GT(t.deadlock + t.violation + t.both, 0u);
}

// The generator is deterministic and its schedules parse.
TEST(ScheduleGenTest, SameSeedSameTextAndEveryScheduleParses) {
  for (uint64_t seed = 0; seed < 500; ++seed) {
    const std::string text = gen::GenerateSchedule(seed);
    ASSERT_EQ(text, gen::GenerateSchedule(seed));
    auto p = ir::ParseProgram(text, "gen.pipe");
    ASSERT_TRUE(p.ok()) << p.status().ToString() << "\n" << text;
    gen::GenOptions g;
    g.nonws = true;
    const std::string nonws = gen::GenerateSchedule(seed, g);
    ASSERT_EQ(nonws, gen::GenerateSchedule(seed, g));
    auto q = ir::ParseProgram(nonws, "gen.pipe");
    ASSERT_TRUE(q.ok()) << q.status().ToString() << "\n" << nonws;
    gen::GenOptions chains;
    chains.cta_chains = true;
    chains.max_ctas = 4;
    const std::string chain = gen::GenerateSchedule(seed, chains);
    ASSERT_EQ(chain, gen::GenerateSchedule(seed, chains));
    auto c = ir::ParseProgram(chain, "gen.pipe");
    ASSERT_TRUE(c.ok()) << c.status().ToString() << "\n" << chain;
    gen::GenOptions late;
    late.late_rules = late.atomics = true;
    auto e = ir::ParseProgram(gen::GenerateSchedule(seed, late), "gen.pipe");
    ASSERT_TRUE(e.ok()) << e.status().ToString() << "\n" << gen::GenerateSchedule(seed, late);
    gen::GenOptions pdl;
    pdl.pdl_chains = true;
    const std::string grids = gen::GenerateSchedule(seed, pdl);
    ASSERT_EQ(grids, gen::GenerateSchedule(seed, pdl));
    auto d = ir::ParseProgram(grids, "gen.pipe");
    ASSERT_TRUE(d.ok()) << d.status().ToString() << "\n" << grids;
  }
  EXPECT_NE(gen::GenerateSchedule(1), gen::GenerateSchedule(2));
}

}  // namespace
}  // namespace parity::verifier
