// verifier/every_path.h, item (3) of issue 24: the reduced search (persistent sets, guarded
// waits, symmetry) and the brute force (--no-reduction) find the same SET of rule findings and
// race pairs on generated schedules, not only the same verdict. Each search collects every
// finding of every completed (state, history digest) pair (CheckRulesOnEveryPath with
// collect_all); the sets are compared by rule, role and statement of both parties, object and
// element (a symmetric search may report an interchangeable agent of the same role).
// Schedules with offsets that only a run knows (GenOptions::variable_offsets) are half of them:
// a race of one loop iteration's stage must be a race of both searches.
//
// The parallel every-path search (ExploreOptions::threads > 1) finds the same sets as one
// thread: every generated schedule's reduced search runs on 1, 2 and 4 threads, and so does
// every bundled schedule of pipelines/ and sim/examples/ whose every-path search completes
// within a bound (there the threads do split their work: the hand-overs are counted).
//
// PARITY_SETS_SCHEDULES=N and PARITY_SETS_SEED=S run N schedules from seed S (a long run).
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <utility>

#include "sim/engine/engine.h"
#include "sim/ir/ir.h"
#include "sim/ir/parser.h"
#include "sim/model/codes.h"
#include "tests/verifier/gen/schedule_gen.h"
#include "verifier/every_path.h"
#include "verifier/explore.h"
#include "verifier/rules.h"

namespace parity::verifier {
namespace {

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr uint64_t kSchedules = 40;
#else
constexpr uint64_t kSchedules = 240;
#endif
// Searches past this many pairs are not compared (counted): the generator keeps them rare.
constexpr uint64_t kMaxPairs = 20'000;
// Bundled schedules whose every-path search stores more pairs are skipped (counted).
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr uint64_t kMaxBundledPairs = 2'000;
#else
constexpr uint64_t kMaxBundledPairs = 10'000;
#endif

uint64_t EnvOr(const char* name, uint64_t fallback) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? std::strtoull(v, nullptr, 0) : fallback;
}

// (rule, role and statement of the agent, of the other party, object kind, object, element).
using Key = std::tuple<std::string, int64_t, uint32_t, int64_t, uint32_t, bool, uint32_t, uint32_t>;

std::set<Key> Keys(const engine::Engine& e, const std::vector<Finding>& findings) {
  auto role = [&](uint32_t a) -> int64_t {
    return a < e.num_agents() ? int64_t{e.agent_info(a).role} : -1;
  };
  std::set<Key> out;
  for (const Finding& f : findings) {
    const bool other = f.other_agent < e.num_agents();
    std::pair<int64_t, uint32_t> x{role(f.agent), f.pc}, y{role(f.other_agent),
                                                           other ? f.other_pc : 0};
    // A race is a pair of unordered accesses: which one started first is the path's.
    const bool race = f.code() == model::Code::kDataRace ||
                      f.code() == model::Code::kReleaseScopeNarrow;
    if (race && y < x) std::swap(x, y);
    out.emplace(std::string(model::CodeId(f.code())), x.first, x.second, y.first, y.second,
                f.object_is_buffer, f.object, f.index);
  }
  return out;
}

std::string Show(const std::set<Key>& s) {
  std::string out;
  for (const auto& [code, ra, pa, rb, pb, buf, obj, idx] : s) {
    out += "\n    " + code + " role " + std::to_string(ra) + " pc " + std::to_string(pa) +
           ", role " + std::to_string(rb) + " pc " + std::to_string(pb) + ", " +
           (buf ? "buffer " : "barrier ") + std::to_string(obj) + "[" + std::to_string(idx) + "]";
  }
  return out.empty() ? " none" : out;
}

struct Tally {
  uint64_t compared = 0, bounded = 0, with_findings = 0, races = 0, findings = 0;  // distinct
  uint64_t reduced_pairs = 0, brute_pairs = 0;
  uint64_t whole_pairs = 0, held_smaller = 0;  // non-warp-specialised rings: the rule off
  // Rings and chains: schedules whose reduced search stored fewer pairs with exact peers
  // (ExploreOptions::exact_peer_futures) than without.
  uint64_t exact_peer_hits = 0;
  std::map<std::string, uint64_t> codes;  // schedules whose findings have each rule code
};

// The rule findings whose per-run check is documented to depend on the run beyond
// happens-before: P2005 / P2006 (rules.cc matches copies and accesses per slot on the run
// checked) and the P2009 that CheckRules leaves out where they name the slot; P2002 (the phase
// current at the issue: timing, every_path.h); P2010 / P2011 where a wait passes at once on a
// phase a delivery kept from completing (verifier/lifetime.h: the delivery's phase differs
// between runs; seed 2018 of --small --offsets with 3 trips is one). Two searches that check
// other runs of one pair may differ in these.
std::set<Key> HappensBeforeRules(std::set<Key> k) {
  std::erase_if(k, [](const Key& x) {
    const std::string& c = std::get<0>(x);
    return c == "P2002" || c == "P2005" || c == "P2006" || c == "P2009" || c == "P2010" ||
           c == "P2011";
  });
  return k;
}

// The search on 2 and 4 threads finds `one`'s race pairs and findings (one: a complete search
// on one thread); returns the hand-overs between threads.
uint64_t ExpectSameOnMoreThreads(const ir::Program& p, const std::vector<int64_t>& params,
                                 const engine::Engine& e, ExploreOptions o,
                                 const EveryPathResult& one) {
  uint64_t handovers = 0;
  // (Headroom: the number of pairs may differ, parallel_dfs.h says why.)
  o.max_states *= 4;
  for (const int threads : {2, 4}) {
    SCOPED_TRACE(std::to_string(threads) + " threads");
    o.threads = threads;
    const EveryPathResult par = CheckRulesOnEveryPath(p, params, o, 0, /*collect_all=*/true);
    EXPECT_TRUE(par.complete) << par.bound;
    EXPECT_EQ(par.found, one.found);
    const std::set<Key> r1 = Keys(e, one.races), rt = Keys(e, par.races);
    EXPECT_EQ(rt, r1) << "race pairs:\n  " << threads << " threads:" << Show(rt)
                      << "\n  one thread:" << Show(r1);
    const std::set<Key> f1 = HappensBeforeRules(Keys(e, one.findings));
    const std::set<Key> ft = HappensBeforeRules(Keys(e, par.findings));
    EXPECT_EQ(ft, f1) << "findings:\n  " << threads << " threads:" << Show(ft)
                      << "\n  one thread:" << Show(f1);
    handovers += par.handovers;
  }
  return handovers;
}

void CompareOne(uint64_t seed, bool offsets, Tally* t, bool nonws = false, bool chains = false,
                bool proxies = false, bool late = false) {
  gen::GenOptions g;
  // The later rules' operations (GenOptions::late_rules: P2030, P2031, P2032) with shared-memory
  // atomics (red / atom, local and of the peer).
  g.late_rules = g.atomics = late;
  // Reads that name their proxy and fence.proxy.async (P2006's cross-proxy pairs), with the
  // extended operations: named barriers, whose instance an arrival joins is in the digest.
  g.proxies = g.extended_ops = proxies;
  g.max_agents_per_cta = 2;
  g.max_trips = offsets ? 3 : 2;
  g.max_ops = 3;
  g.variable_offsets = offsets;
  g.nonws = nonws;
  if (chains) {
    g.cta_chains = true;
    g.max_ctas = 4;
  }
  const std::string text = gen::GenerateSchedule(seed, g);
  SCOPED_TRACE("seed " + std::to_string(seed) + "; the schedule (gen_schedule " +
               std::string(chains ? "--chains" : "--small") +
               std::string(offsets ? " --offsets" : "") + std::string(nonws ? " --nonws" : "") +
               std::string(proxies ? " with GenOptions::proxies and extended_ops" : "") +
               std::string(late ? " with GenOptions::late_rules and atomics" : "") +
               " " + std::to_string(seed) +
               ", with up to " + std::to_string(g.max_trips) + " trips):\n" + text);
  auto parsed = ir::ParseProgram(text, "gen_" + std::to_string(seed) + ".pipe");
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  const ir::Program& p = *parsed;
  auto bound = ir::BindParams(p, {});
  ASSERT_TRUE(bound.ok()) << bound.status().ToString();
  auto e = engine::Engine::Create(p, *bound, {});
  if (!e.ok()) return;
  ExploreOptions o;
  o.max_states = kMaxPairs;
  o.reduction = true;
  const EveryPathResult reduced = CheckRulesOnEveryPath(p, *bound, o, 0, /*collect_all=*/true);
  if (reduced.complete) ExpectSameOnMoreThreads(p, *bound, *e, o, reduced);
  o.reduction = false;
  const EveryPathResult brute = CheckRulesOnEveryPath(p, *bound, o, 0, /*collect_all=*/true);
  if (!reduced.complete || !brute.complete) {
    ++t->bounded;
    return;
  }
  ++t->compared;
  t->reduced_pairs += reduced.states;
  t->brute_pairs += brute.states;
  if (chains) {
    o.reduction = true;
    o.exact_peer_futures = false;
    const EveryPathResult inexact = CheckRulesOnEveryPath(p, *bound, o, 0, true);
    if (inexact.complete && reduced.states < inexact.states) ++t->exact_peer_hits;
    o.exact_peer_futures = true;
    o.reduction = false;
  }
  // The race pairs of every path (verifier/races.h before CheckRules' per-run suppression).
  const std::set<Key> rr = Keys(*e, reduced.races);
  const std::set<Key> br = Keys(*e, brute.races);
  EXPECT_EQ(rr, br) << "the reduced search's race pairs differ from the brute force's:\n  "
                       "reduced:" << Show(rr) << "\n  brute force:" << Show(br);
  // The rule findings, but for those whose per-run check depends on the run.
  const std::set<Key> r = HappensBeforeRules(Keys(*e, reduced.findings));
  const std::set<Key> b = HappensBeforeRules(Keys(*e, brute.findings));
  EXPECT_EQ(r, b) << "the reduced search's findings differ from the brute force's:\n  reduced:"
                  << Show(r) << "\n  brute force:" << Show(b);
  EXPECT_EQ(reduced.found, brute.found);
  if (nonws) {
    // With whole futures (the held-phase rule off, explore/held_phase.cc): the same sets.
    o.reduction = true;
    o.held_phase_futures = false;
    const EveryPathResult whole = CheckRulesOnEveryPath(p, *bound, o, 0, /*collect_all=*/true);
    if (whole.complete) {
      EXPECT_EQ(Keys(*e, whole.races), br);
      EXPECT_EQ(HappensBeforeRules(Keys(*e, whole.findings)), b);
      t->whole_pairs += whole.states;
      t->held_smaller += reduced.states < whole.states;
    }
  }
  if (!b.empty() || !br.empty()) ++t->with_findings;
  std::set<std::string> codes;
  for (const Key& k : b) codes.insert(std::get<0>(k));
  for (const std::string& c : codes) ++t->codes[c];
  t->findings += b.size();
  t->races += br.size();
}

Tally RunRange(uint64_t first, uint64_t count, bool offsets, bool nonws = false,
               bool chains = false, bool proxies = false, bool late = false) {
  Tally t;
  const auto start = std::chrono::steady_clock::now();
  for (uint64_t seed = first; seed < first + count; ++seed) {
    CompareOne(seed, offsets, &t, nonws, chains, proxies, late);
    if (::testing::Test::HasFailure()) break;
  }
  const double s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("seeds %llu..%llu%s: %llu compared, %llu over %llu pairs; %llu with findings (%llu "
              "rule findings, %llu race pairs); pairs reduced %llu, brute force %llu; %.1f s\n",
              (unsigned long long)first, (unsigned long long)(first + count - 1),
              offsets ? " (variable offsets)" : "", (unsigned long long)t.compared,
              (unsigned long long)t.bounded, (unsigned long long)kMaxPairs,
              (unsigned long long)t.with_findings, (unsigned long long)t.findings,
              (unsigned long long)t.races, (unsigned long long)t.reduced_pairs,
              (unsigned long long)t.brute_pairs, s);
  std::printf("  schedules with each rule code:");
  for (const auto& [code, n] : t.codes) std::printf(" %s %llu", code.c_str(), (unsigned long long)n);
  std::printf("\n");
  if (chains) {
    std::printf("  rings and chains: fewer pairs with exact peers in %llu\n",
                (unsigned long long)t.exact_peer_hits);
  }
  if (nonws) {
    std::printf("  non-warp-specialised rings: pairs with held-phase futures %llu, without %llu; "
                "fewer in %llu schedules\n",
                (unsigned long long)t.reduced_pairs, (unsigned long long)t.whole_pairs,
                (unsigned long long)t.held_smaller);
    if (count >= 40) {
      EXPECT_GT(t.compared, count / 2);
      EXPECT_GT(t.with_findings, t.compared / 20);
      EXPECT_GT(t.held_smaller, t.compared / 10);  // the rule is exercised
    }
    return t;
  }
  if (count >= 100) {
    EXPECT_GT(t.compared, count / 2);
    EXPECT_GT(t.with_findings, t.compared / 20);  // the comparison sees findings
    EXPECT_GT(t.races, 0u);
  }
  return t;
}

uint64_t Count() { return EnvOr("PARITY_SETS_SCHEDULES", kSchedules); }
uint64_t First() { return EnvOr("PARITY_SETS_SEED", 1); }

TEST(EveryPathSetsTest, ReducedAndBruteForceFindTheSameSetWithOffsetsOfRuns) {
  RunRange(First(), Count() / 2, /*offsets=*/true);
}
// Non-warp-specialised rings (GenOptions::nonws): the held-phase futures apply.
TEST(EveryPathSetsTest, ReducedAndBruteForceFindTheSameSetOnNonWsRings) {
#if defined(__SANITIZE_ADDRESS__)
  constexpr uint64_t kNonWs = 20;
#else
  constexpr uint64_t kNonWs = 120;
#endif
  RunRange(EnvOr("PARITY_SETS_NONWS_SEED", 1), EnvOr("PARITY_SETS_NONWS_SCHEDULES", kNonWs),
           /*offsets=*/false, /*nonws=*/true);
}

TEST(EveryPathSetsTest, ReducedAndBruteForceFindTheSameSet) {
  RunRange(First() + Count() / 2, Count() - Count() / 2, /*offsets=*/false);
}

// Rings and chains of 2-4 CTAs (GenOptions::cta_chains): the rule of exact peers must apply.
TEST(EveryPathSetsTest, ReducedAndBruteForceFindTheSameSetOnRingsOfCtas) {
  const Tally t = RunRange(EnvOr("PARITY_SETS_CHAIN_SEED", 1),
                           EnvOr("PARITY_SETS_CHAIN_SCHEDULES", kSchedules / 4),
                           /*offsets=*/false, /*nonws=*/false, /*chains=*/true);
  EXPECT_GT(t.exact_peer_hits, t.compared / 4);
}

// Reads that name their proxy among loads, writes and fence.proxy.async, with named barriers
// (GenOptions::proxies, extended_ops). PARITY_SETS_PROXY_SCHEDULES=N for a long run.
TEST(EveryPathSetsTest, ReducedAndBruteForceFindTheSameSetWithProxiesAndNamedBarriers) {
  RunRange(EnvOr("PARITY_SETS_PROXY_SEED", 1), EnvOr("PARITY_SETS_PROXY_SCHEDULES", kSchedules / 4),
           /*offsets=*/false, /*nonws=*/false, /*chains=*/false, /*proxies=*/true);
}

// The later rules' operations (GenOptions::late_rules) with atomics: tensor map updates and their
// fences against the TMAs of the map (P2031, P2032), DSMEM accesses and atomics of a peer with
// and without a cluster barrier first (P2030), red / atom against plain accesses and copies.
// Each of the three codes must be among the compared findings. PARITY_SETS_LATE_SCHEDULES=N for
// a long run.
TEST(EveryPathSetsTest, ReducedAndBruteForceFindTheSameSetWithLateRulesAndAtomics) {
  const uint64_t n = EnvOr("PARITY_SETS_LATE_SCHEDULES", kSchedules);
  const Tally t = RunRange(EnvOr("PARITY_SETS_LATE_SEED", 1), n, /*offsets=*/false,
                           /*nonws=*/false, /*chains=*/false, /*proxies=*/false, /*late=*/true);
  if (n < 100) return;  // the sanitized run's few seeds
  for (const char* code : {"P2030", "P2031", "P2032"}) {
    EXPECT_GT(t.codes.count(code) ? t.codes.at(code) : 0, 0u) << code << " never compared";
  }
}

// Bundled schedules: searches large enough that the threads split their work.
TEST(EveryPathSetsTest, BundledSchedulesSameSetsOnOneTwoAndFourThreads) {
  std::vector<std::string> files;
  for (const char* dir : {"pipelines", "sim/examples"}) {
    for (const auto& f : std::filesystem::recursive_directory_iterator(dir)) {
      if (f.path().extension() == ".pipe") files.push_back(f.path().generic_string());
    }
  }
  std::sort(files.begin(), files.end());
  uint64_t compared = 0, skipped = 0, with_races = 0, handovers = 0;
  for (const std::string& file : files) {
    SCOPED_TRACE(file);
    auto parsed = ir::ParseFile(file);
    ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
    auto bound = ir::BindParams(*parsed, {});
    ASSERT_TRUE(bound.ok()) << bound.status().ToString();
    auto e = engine::Engine::Create(*parsed, *bound, {});
    if (!e.ok()) continue;
    ExploreOptions o;
    o.max_states = kMaxBundledPairs;
    const EveryPathResult one = CheckRulesOnEveryPath(*parsed, *bound, o, 0, true);
    if (!one.complete) {
      ++skipped;
      continue;
    }
    ++compared;
    with_races += one.races.empty() ? 0 : 1;
    handovers += ExpectSameOnMoreThreads(*parsed, *bound, *e, o, one);
    if (::testing::Test::HasFailure()) break;
  }
  std::printf("bundled: %llu every-path searches compared on 1, 2 and 4 threads (%llu with race "
              "pairs), %llu over %llu pairs skipped; %llu hand-overs between threads\n",
              (unsigned long long)compared, (unsigned long long)with_races,
              (unsigned long long)skipped, (unsigned long long)kMaxBundledPairs,
              (unsigned long long)handovers);
  EXPECT_GT(compared, 40u);
  EXPECT_GT(with_races, 0u);
  EXPECT_GT(handovers, compared);  // the threads did split the searches
}

}  // namespace
}  // namespace parity::verifier
