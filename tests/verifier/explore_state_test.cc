// verifier/explore: symmetry reduction, the parallel searches, and the engine's state operations
// the searches rely on (RestoreStep, PeekDeliveryDelta, Pack), with successor prediction.
#include "verifier/explore.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "sim/engine/engine.h"
#include "sim/ir/ir.h"
#include "sim/ir/parser.h"
#include "sim/model/codes.h"
#include "tests/common/sanitized.h"
#include "tests/verifier/explore_test_util.h"

// In the helpers' namespace: their names (Load, Search, ReplayEnd, Engine, ...) unqualified.
namespace parity::verifier::explore_test_util {
namespace {

// --- symmetry reduction (explore.h): interchangeable agents of one role in one CTA ---

// Two consumers of one CTA taking their first step: the two states differ by swapping the two
// agents, so their plain fingerprints differ and their symmetric fingerprints are equal; a state
// that is not such a swap keeps a different symmetric fingerprint.
TEST(ExploreSymmetryTest, SwappedAgentsShareTheSymmetricFingerprint) {
  Loaded l = Load("pipelines/cuda_pipeline/producer_consumer.pipe");
  auto e = Engine::Create(l.program, l.params);
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  std::vector<uint32_t> cls(e->num_agents(), Engine::kNoGroup);
  std::vector<uint32_t> consumers;
  uint32_t other = Engine::kNoGroup;
  for (uint32_t a = 0; a < e->num_agents(); ++a) {
    if (e->role_name(a) == "consumer" && e->agent_info(a).cta_global == 0) {
      cls[a] = 0;
      consumers.push_back(a);
    } else if (other == Engine::kNoGroup) {
      other = a;
    }
  }
  ASSERT_GE(consumers.size(), 2u);
  ASSERT_NE(other, Engine::kNoGroup);
  Engine x = *e, y = *e, z = *e;
  x.Step({engine::Choice::Kind::kAgent, consumers[0]});
  y.Step({engine::Choice::Kind::kAgent, consumers[1]});
  z.Step({engine::Choice::Kind::kAgent, other});
  EXPECT_NE(x.Fingerprint(), y.Fingerprint());
  EXPECT_EQ(x.SymmetricFingerprint(cls), y.SymmetricFingerprint(cls));
  EXPECT_NE(x.SymmetricFingerprint(cls), z.SymmetricFingerprint(cls));
  EXPECT_NE(e->SymmetricFingerprint(cls), x.SymmetricFingerprint(cls));
}

// Which schedules get symmetry: several consumers that do not read `agent` do; roles that read
// `agent` (the ring's producers and consumers split the k-tiles by it) do not.
TEST(ExploreSymmetryTest, AppliedOnlyToRolesThatDoNotReadAgent) {
  {
    Loaded l = Load("pipelines/cuda_pipeline/producer_consumer.pipe");
    const ExploreResult r = Explore(l.program, l.params);
    EXPECT_TRUE(r.symmetry_applied) << r.symmetry;
    EXPECT_NE(r.symmetry.find("consumer"), std::string::npos) << r.symmetry;
  }
  {
    Loaded l = Load("sim/examples/explore/ring_2p2c.pipe", {{"STAGES", 2}, {"K_TILES", 2}});
    const ExploreResult r = Explore(l.program, l.params);
    EXPECT_FALSE(r.symmetry_applied) << r.symmetry;
    EXPECT_NE(r.symmetry.find("not applied"), std::string::npos) << r.symmetry;
  }
  {
    // One consumer per CTA: no agents to permute, but the pair's two CTAs are interchangeable
    // (each multicasts its half to both).
    Loaded l = Load("sim/examples/explore/gemm_multicast_pair.pipe");
    const ExploreResult r = Explore(l.program, l.params);
    EXPECT_TRUE(r.symmetry_applied) << r.symmetry;
    EXPECT_NE(r.symmetry.find("interchangeable CTAs: a group of 2"), std::string::npos)
        << r.symmetry;
    EXPECT_NE(r.symmetry.find("agents: symmetry reduction: not applied"), std::string::npos)
        << r.symmetry;
  }
}

// Symmetry on and off against each other and against the brute force: same verdicts, the same
// end states up to symmetry (terminals are symmetric fingerprints in every search), fewer states
// with symmetry on; the known-bad cuda::pipeline and pipeline_async variants (several consumers
// each) are still caught.
TEST(ExploreSymmetryTest, SameVerdictsAndEndsAsBruteForce) {
  for (const char* path : {"pipelines/cuda_pipeline/producer_consumer.pipe",
                           "pipelines/cuda_pipeline/bad_count_budgets_arrive_on.pipe",
                           "pipelines/cuda_pipeline/bad_count_consumers_only.pipe",
                           "pipelines/cuda_pipeline/bad_no_initial_ready.pipe",
                           "pipelines/pipeline_async/bad_count_warps.pipe"}) {
    const Loaded l = Load(path);
    ExploreOptions o;
    o.stop_at_first = false;
    o.collect_terminals = true;
    o.max_states = 2'000'000;
    const ExploreResult sym = Explore(l.program, l.params, o);
    o.symmetry = false;
    const ExploreResult nosym = Explore(l.program, l.params, o);
    o.reduction = false;
    const ExploreResult full = Explore(l.program, l.params, o);
    ASSERT_TRUE(full.bound.empty()) << path << ": the brute force hit " << full.bound;
    EXPECT_TRUE(sym.symmetry_applied) << path << ": " << sym.symmetry;
    EXPECT_FALSE(nosym.symmetry_applied) << path;
    EXPECT_EQ(sym.verdict, full.verdict) << path;
    EXPECT_EQ(nosym.verdict, full.verdict) << path;
    EXPECT_EQ(sym.terminals, full.terminals) << path;
    EXPECT_EQ(nosym.terminals, full.terminals) << path;
    EXPECT_EQ(sym.stats.violation_ends > 0, full.stats.violation_ends > 0) << path;
    EXPECT_LE(sym.stats.states, nosym.stats.states) << path;
  }
  // The 2x2 GEMM with two consumers per CTA: symmetry cuts the states (without exact peers,
  // whose commuting cluster arrivals leave little for symmetry to merge here).
  const Loaded l = Load("sim/examples/gemm_tma_multicast_2x2.pipe",
                        {{"STAGES", 1}, {"K_TILES", 1}, {"CONSUMERS", 2}});
  ExploreOptions o;
  o.collect_terminals = true;
  o.exact_peer_futures = false;
  const ExploreResult sym = Explore(l.program, l.params, o);
  o.symmetry = false;
  const ExploreResult nosym = Explore(l.program, l.params, o);
  EXPECT_TRUE(sym.symmetry_applied) << sym.symmetry;
  EXPECT_EQ(sym.verdict, ExploreVerdict::kVerified);
  EXPECT_EQ(nosym.verdict, ExploreVerdict::kVerified);
  EXPECT_EQ(sym.terminals, nosym.terminals);
  EXPECT_LT(sym.stats.states * 2, nosym.stats.states);
}

}  // namespace
}  // namespace parity::verifier::explore_test_util

namespace parity::verifier::explore_test_util {
namespace {

// --- parallel search (ExploreOptions::threads): the same result on any number of threads ---

// Two threads give what one thread gives, breadth-first (the parallel search is level by level
// breadth-first): the same verdict, states, records (so the same counterexample), terminal set
// and statistics; with stop_at_first = false every end state, with a state bound the same cut.
TEST(ExploreParallelTest, TwoThreadsSameResultAsOne) {
  struct Case {
    const char* path;
    std::vector<std::pair<std::string, int64_t>> defs;
    bool stop;
    uint64_t max_states;
  };
  const std::vector<Case> cases = {
      {"sim/examples/explore/ring_2p2c.pipe", {}, false, 20'000'000},
      {"sim/examples/explore/poll_instead_of_wait.pipe", {}, true, 20'000'000},
      {"sim/examples/explore/phase_overrun.pipe", {}, false, 20'000'000},
      {"sim/examples/gemm_tma_multicast_2x2.pipe",
       {{"STAGES", 1}, {"K_TILES", 1}, {"CONSUMERS", 2}},
       false,
       20'000'000},  // symmetry applied
      {"sim/examples/gemm_tma_multicast_2x2.pipe",
       {{"STAGES", 2}, {"K_TILES", 2}, {"CONSUMERS", 1}},
       false,
       500},  // stopped by the state bound
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.path);
    Loaded l = Load(c.path, c.defs);
    ExploreOptions o;
    o.collect_terminals = true;
    o.stop_at_first = c.stop;
    o.max_states = c.max_states;
    o.breadth_first = true;
    const ExploreResult one = Explore(l.program, l.params, o);
    o.threads = 2;
    const ExploreResult two = Explore(l.program, l.params, o);
    for (const ExploreResult* r : {&two}) {
      EXPECT_EQ(r->verdict, one.verdict) << ExploreVerdictName(r->verdict);
      EXPECT_EQ(r->stats.states, one.stats.states);
      EXPECT_EQ(r->stats.expanded, one.stats.expanded);
      EXPECT_EQ(r->stats.transitions, one.stats.transitions);
      EXPECT_EQ(r->stats.enabled, one.stats.enabled);
      EXPECT_EQ(r->stats.depth, one.stats.depth);
      EXPECT_EQ(r->stats.completed_ends, one.stats.completed_ends);
      EXPECT_EQ(r->stats.deadlock_ends, one.stats.deadlock_ends);
      EXPECT_EQ(r->stats.violation_ends, one.stats.violation_ends);
      EXPECT_EQ(r->terminals, one.terminals);
      EXPECT_EQ(r->counterexample, one.counterexample);
      EXPECT_EQ(r->bound, one.bound);
    }
    // And the default depth-first search on one and on two threads (verifier/parallel_dfs.h)
    // reaches the same end states.
    if (c.max_states > 1000 && !c.stop) {
      ExploreOptions d;
      d.collect_terminals = true;
      d.stop_at_first = false;
      const ExploreResult dfs = Explore(l.program, l.params, d);
      EXPECT_EQ(dfs.verdict, one.verdict);
      EXPECT_EQ(dfs.terminals, one.terminals);
      d.threads = 2;
      const ExploreResult dfs2 = Explore(l.program, l.params, d);
      EXPECT_EQ(dfs2.verdict, one.verdict);
      EXPECT_EQ(dfs2.terminals, one.terminals);
      EXPECT_EQ(dfs2.stats.completed_ends, dfs.stats.completed_ends);
      EXPECT_EQ(dfs2.stats.deadlock_ends, dfs.stats.deadlock_ends);
    }
  }
}


// Brute force, whose levels are wide (hundreds of states, many reached from several states of
// the level: each thread packs such a state once): two threads store the same states as one.
TEST(ExploreParallelTest, WideLevelsTwoThreadsSameResultAsOne) {
  Loaded l = Load("sim/examples/explore/ring_2p2c.pipe", {{"STAGES", 2}, {"K_TILES", 4}});
  ExploreOptions o;
  o.reduction = false;
  o.collect_terminals = true;
  o.stop_at_first = false;
  o.breadth_first = true;
  const ExploreResult one = Explore(l.program, l.params, o);
  o.threads = 2;
  const ExploreResult two = Explore(l.program, l.params, o);
  EXPECT_EQ(one.verdict, ExploreVerdict::kVerified);
  EXPECT_GT(one.stats.peak_frontier, 64u);  // several blocks of 16 per level
  EXPECT_EQ(two.verdict, one.verdict);
  EXPECT_EQ(two.stats.states, one.stats.states);
  EXPECT_EQ(two.stats.transitions, one.stats.transitions);
  EXPECT_EQ(two.stats.depth, one.stats.depth);
  EXPECT_EQ(two.terminals, one.terminals);
  EXPECT_GT(one.stats.frontier_bytes, 0u);
  EXPECT_GT(two.stats.frontier_bytes, 0u);
}

// --- Engine::RestoreStep (the depth-first search's undo) ---

// Along a random run of each schedule, every enabled step is taken on a copy, undone with
// RestoreStep, and taken again: the copy must be back to the state (same fingerprint and state
// hash) and the second step must give the same state as the first. Two steps in a row are
// undone too. The schedules cover mbarriers and TMA (GEMM, ring), cp.async groups and
// cp.async.mbarrier.arrive, bar.sync, st.async, bulk stores with `readback` data, exits and
// cluster barriers. (Builds with assertions also compare the whole state every 8th undo.)
const std::vector<std::string>& StepSchedules() {
  static const std::vector<std::string> files = {
      "sim/examples/gemm_tma_multicast_2x2.pipe",
      "sim/examples/explore/ring_2p2c.pipe",
      "pipelines/ampere_multistage/sgemm_sm80.pipe",
      "pipelines/ampere_multistage/bad_mainloop_no_commit.pipe",
      "pipelines/cuda_pipeline/cp_async_arrive_on.pipe",
      "pipelines/cuda_pipeline/prefetch.pipe",
      "pipelines/pipeline_async/pipeline_async.pipe",
      "pipelines/st_async_ring/ring.pipe",
      "pipelines/tma_async_gemm/gemm.pipe",
      "pipelines/single_tma_load/bad_countN_no_syncthreads.pipe",
      "litmus/bulk_store_readback_after_wait.pipe",
      "litmus/bulk_store_overwrite_after_read.pipe",
  };
  return files;
}

// The random runs' choices: a fixed LCG, the same runs everywhere.
struct Lcg {
  uint64_t state;
  size_t operator()(size_t n) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<size_t>((state >> 33) % n);
  }
};

// An engine of the schedule that keeps no trace (as the explorer's).
Expected<Engine> CreateUntraced(const Loaded& l) {
  engine::EngineOptions eo;
  eo.record_trace = false;
  return Engine::Create(l.program, l.params, eo);
}

// Three random runs of up to 400 steps of each of StepSchedules(), seeded: visit(file, state,
// its choices, depth, the generator, a scratch engine) at each running state, before the run's
// random step. The scratch engine (for copies of the state) is emptied before its program goes.
// Stops at the first fatal failure (an ASSERT in visit).
template <typename Visit>
void ForEachStateOfRandomRuns(uint64_t seed, Visit visit) {
  Lcg next{seed};
  std::optional<Engine> scratch;
  for (const std::string& f : StepSchedules()) {
    SCOPED_TRACE(f);
    Loaded l = Load(f);
    auto created = CreateUntraced(l);
    ASSERT_TRUE(created.ok()) << created.status().ToString();
    for (int run = 0; run < 3; ++run) {
      Engine s = *created;
      std::vector<engine::Choice> choices;
      for (int depth = 0; depth < 400 && s.outcome() == Outcome::kRunning; ++depth) {
        s.Choices(&choices);
        visit(f, s, choices, depth, next, scratch);
        if (::testing::Test::HasFatalFailure()) return;
        s.Step(choices[next(choices.size())]);
      }
    }
    scratch.reset();
  }
}

TEST(RestoreStepTest, UndoesEveryStepAlongRandomRuns) {
  size_t undone = 0;
  std::vector<engine::Choice> later;
  ForEachStateOfRandomRuns(
      7, [&](const std::string&, const Engine& s, const std::vector<engine::Choice>& choices,
             int depth, Lcg& next, std::optional<Engine>& t) {
        const uint64_t fp = s.Fingerprint();
        const uint64_t hash = s.StateHash();
        t = s;
        for (const engine::Choice c : choices) {
          t->Step(c);
          const uint64_t after = t->Fingerprint();
          // Sometimes a second step before the undo.
          t->Choices(&later);
          if (!later.empty() && next(3) == 0) {
            t->Step(later[next(later.size())]);
            t->Fingerprint();
          }
          t->RestoreStep(s);
          ASSERT_EQ(t->Fingerprint(), fp) << "depth " << depth;
          ASSERT_EQ(t->StateHash(), hash) << "depth " << depth;
          ASSERT_EQ(t->outcome(), s.outcome());
          t->Step(c);
          ASSERT_EQ(t->Fingerprint(), after) << "depth " << depth;
          t->RestoreStep(s);
          ++undone;
        }
      });
  EXPECT_GT(undone, size_t{5000});
}

// Predictor::PeekDeliveryDelta against the step itself, along random runs: where it answers, the
// step leaves the run going, adds exactly that to FingerprintSum, marks the objects the
// explorer's prediction records (the barrier slot, the issuer and the agents it wakes: exactly
// those whose status went from blocked to ready); where it declines a byte delivery, the step
// fails or ends the run, or the schedule tracks readback data (so the shortcut would have been
// wrong). Phase completions are among the peeks.
TEST(PeekDeliveryTest, AgreesWithTheStepAlongRandomRuns) {
  size_t peeked = 0, peeked_phase = 0, woke = 0;
  ForEachStateOfRandomRuns(
      11, [&](const std::string& f, const Engine& s, const std::vector<engine::Choice>& choices,
              int depth, Lcg&, std::optional<Engine>& copy) {
        const uint64_t sum = Predictor(s).FingerprintSum();
        for (const engine::Choice c : choices) {
          if (c.kind != engine::Choice::Kind::kAsync) continue;
          const Engine::InFlight op = s.in_flight_ops()[c.index];
          uint64_t delta = 0;
          uint32_t woken[Predictor::kPeekWokenMax];
          uint32_t n_woken = 0;
          const bool peek = Predictor(s).PeekDeliveryDelta(c.index, &delta, woken, &n_woken);
          copy = s;
          Engine& t = *copy;
          t.Step(c);
          if (peek) {
            ++peeked;
            if (t.slot_state(op.slot).phase != s.slot_state(op.slot).phase) ++peeked_phase;
            woke += n_woken;
            ASSERT_EQ(t.outcome(), Outcome::kRunning) << "depth " << depth;
            ASSERT_EQ(Predictor(t).FingerprintSum(), sum + delta) << "depth " << depth;
            ASSERT_EQ(t.Fingerprint(),
                      Predictor::FinishFingerprint(sum + delta, Outcome::kRunning));
            const uint32_t* marked = nullptr;
            uint32_t n = 0;
            ASSERT_TRUE(Predictor(t).StepMarks(&marked, &n));
            std::vector<uint32_t> got(marked, marked + n);
            std::vector<uint32_t> want = {op.slot, t.GroupsObject(op.agent)};
            for (uint32_t a = 0; a < s.num_agents(); ++a) {
              const bool wakes = std::find(woken, woken + n_woken, a) != woken + n_woken;
              ASSERT_EQ(wakes, s.agent_state(a).status == 1 && t.agent_state(a).status == 0)
                  << "agent " << a << " depth " << depth;
              if (wakes) want.push_back(t.GroupsObject(a));
            }
            std::sort(got.begin(), got.end());
            std::sort(want.begin(), want.end());
            want.erase(std::unique(want.begin(), want.end()), want.end());
            ASSERT_EQ(got, want) << "depth " << depth;
          } else if (op.kind == Engine::InFlight::kTmaDeliver ||
                     op.kind == Engine::InFlight::kBulkDeliver ||
                     op.kind == Engine::InFlight::kStAsync) {
            EXPECT_TRUE(t.outcome() != Outcome::kRunning || choices.size() < 2 ||
                        f.find("readback") != std::string::npos)
                << "depth " << depth;
          }
        }
      });
  EXPECT_GT(peeked, size_t{5000});
  EXPECT_GT(peeked_phase, size_t{1000});
  EXPECT_GT(woke, size_t{800});
}

// --- Engine::Pack / Unpack (the breadth-first frontier) ---

// Along random runs of the same schedules, every running state is packed and unpacked into an
// engine that held another state (the last one unpacked, or a fresh copy): it must be the same
// state (fingerprint, state hash, choices) and behave the same (every enabled step gives the
// same fingerprint on both). On the 2x2 GEMM a packed state is a few hundred bytes.
TEST(PackTest, UnpackedStatesEqualTheOriginalsAndStepAlike) {
  Lcg next{11};
  size_t checked = 0;
  for (const std::string& f : StepSchedules()) {
    SCOPED_TRACE(f);
    Loaded l = Load(f);
    auto created = CreateUntraced(l);
    ASSERT_TRUE(created.ok()) << created.status().ToString();
    const Engine base = *created;
    Engine u = base;  // the unpack target, reused
    uint64_t bytes = 0, packs = 0;
    std::vector<uint8_t> packed;
    for (int run = 0; run < 3; ++run) {
      Engine s = base;
      std::vector<engine::Choice> choices, uchoices;
      for (int depth = 0; depth < 400 && s.outcome() == Outcome::kRunning; ++depth) {
        packed.clear();
        s.Pack(base, &packed);
        bytes += packed.size();
        ++packs;
        if (next(4) == 0) u = base;  // sometimes a fresh target
        u.Unpack(base, packed.data(), packed.size());
        ASSERT_EQ(u.Fingerprint(), s.Fingerprint()) << "depth " << depth;
        ASSERT_EQ(u.StateHash(), s.StateHash()) << "depth " << depth;
        ASSERT_EQ(u.outcome(), Outcome::kRunning);
        ASSERT_EQ(u.result().steps, s.result().steps);
        ASSERT_EQ(u.events(), s.events());
        s.Choices(&choices);
        u.Choices(&uchoices);
        ASSERT_EQ(uchoices, choices);
        for (const engine::Choice c : choices) {
          Engine a = s, b = u;
          a.Step(c);
          b.Step(c);
          ASSERT_EQ(b.Fingerprint(), a.Fingerprint()) << "depth " << depth;
          ASSERT_EQ(b.outcome(), a.outcome());
          ++checked;
        }
        s.Step(choices[next(choices.size())]);
      }
    }
    if (f == "sim/examples/gemm_tma_multicast_2x2.pipe") {
      // About 800 bytes, varying a little with the run (the sanitized build lands on 800): the
      // bound catches a fall back to whole-engine copies (several KB), not small growth.
      EXPECT_LT(bytes / packs, 1000u) << "mean packed bytes";
    }
  }
  EXPECT_GT(checked, size_t{5000});
}

// The depth-first search with successors generated in batches from the start (which undoes
// steps: ExploreOptions::batch_table_bytes = 0), the default one (one successor at a time while
// the table is small) and the breadth-first one store the same states and reach the same end
// states, brute force and reduced (symmetry off: with it the representative stored for a class
// may differ), on schedules with `readback` data, cp.async, bar.sync (the ping-pong turns) and
// multicast TMA.
TEST(RestoreStepTest, BatchedDepthFirstStoresTheSameStates) {
  struct Case {
    std::string file;
    std::vector<std::pair<std::string, int64_t>> defs;
    bool brute;  // the brute-force search is small enough too
  };
  const std::vector<Case> cases = {
      {"litmus/bulk_store_readback_after_wait.pipe", {}, true},
      {"litmus/bulk_store_overwrite_after_read.pipe", {}, true},
      {"pipelines/cuda_pipeline/cp_async_arrive_on.pipe", {}, true},
      {"sim/examples/explore/ring_2p2c.pipe", {{"STAGES", 2}, {"K_TILES", 3}}, true},
      {"pipelines/ws_gemm/pingpong.pipe", {{"STAGES", 2}, {"K_TILES", 2}, {"TILES", 2}}, true},
      {"sim/examples/gemm_tma_multicast_2x2.pipe",
       {{"STAGES", 2}, {"K_TILES", 2}, {"CONSUMERS", 1}},
       false}};
  for (const Case& c : cases) {
    SCOPED_TRACE(c.file);
    Loaded l = Load(c.file, c.defs);
    for (const bool reduction : {false, true}) {
      if (!reduction && !c.brute) continue;
      SCOPED_TRACE(reduction ? "reduced" : "brute force");
      ExploreOptions o;
      o.reduction = reduction;
      o.symmetry = false;
      o.stop_at_first = false;
      o.check_rules = false;
      o.collect_terminals = true;
      o.max_states = 3'000'000;
      const ExploreResult lazy = Explore(l.program, l.params, o);
      o.batch_table_bytes = 0;
      const ExploreResult batched = Explore(l.program, l.params, o);
      o.breadth_first = true;
      const ExploreResult bfs = Explore(l.program, l.params, o);
      EXPECT_EQ(lazy.verdict, ExploreVerdict::kVerified);
      EXPECT_EQ(batched.verdict, lazy.verdict);
      EXPECT_EQ(bfs.verdict, lazy.verdict);
      EXPECT_EQ(batched.stats.states, lazy.stats.states);
      EXPECT_EQ(bfs.stats.states, lazy.stats.states);
      EXPECT_EQ(batched.terminals, lazy.terminals);
      EXPECT_EQ(bfs.terminals, lazy.terminals);
      EXPECT_GT(lazy.stats.states, 10u);
    }
  }
}

// Successor prediction (ExploreOptions::predict_successors, brute force): a successor that a
// step commuting with the step before it leads to, that a byte delivery leads to
// (Predictor::PeekDeliveryDelta) or that an agent step the memo of agent steps knows leads to is
// looked up by its predicted fingerprint, not stepped. The search must be the same search: the same states in the same order (the
// same counterexample), transitions, end states and barrier values, one successor at a time
// and batched; and the prediction must actually be used where agents run side by side.
TEST(ExplorePredictTest, SameSearchAsWithoutPrediction) {
  PARITY_SKIP_LARGE_SEARCH_IF_SANITIZED();
  struct Case {
    std::string file;
    std::vector<std::pair<std::string, int64_t>> defs;
    bool predicts;  // steps commute there (else: readback data, no prediction)
  };
  const std::vector<Case> cases = {
      {"sim/examples/explore/ring_2p2c.pipe", {{"STAGES", 2}, {"K_TILES", 3}}, true},
      {"sim/examples/explore/gemm_multicast_pair.pipe", {}, true},
      {"sim/examples/explore/phase_overrun.pipe", {}, true},
      {"sim/examples/explore/exit_with_copies_in_flight.pipe", {}, true},
      {"sim/examples/explore/poll_instead_of_wait.pipe", {}, true},
      {"pipelines/cuda_pipeline/cp_async_arrive_on.pipe", {}, true},
      {"pipelines/ws_gemm/pingpong.pipe", {{"STAGES", 2}, {"K_TILES", 2}, {"TILES", 2}}, true},
      // Bulk stores: a delivery that appends an operation (the read done, the write in flight).
      {"pipelines/tma_store/tma_store.pipe", {}, true},
      {"litmus/bulk_store_readback_after_wait.pipe", {}, false},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.file);
    Loaded l = Load(c.file, c.defs);
    // One successor at a time until the table is 4 MiB (no batching in these searches), from
    // 4 KiB on (both kinds of frames on one path), and batched from the start.
#if defined(__SANITIZE_ADDRESS__)  // memory errors, not search logic: one mixed batching
    for (const uint64_t batch : {uint64_t{4} << 10}) {
#else
    for (const uint64_t batch : {uint64_t{4} << 20, uint64_t{4} << 10, uint64_t{0}}) {
#endif
      SCOPED_TRACE("batch_table_bytes " + std::to_string(batch));
      // Barrier values collected: every new successor is stepped when stored (Reached);
      // not collected: a new one predicted is stepped only when the search descends into it.
      for (const auto& [stop, collect] : {std::pair{false, true}, std::pair{true, true},
                                          std::pair{false, false}, std::pair{true, false}}) {
        SCOPED_TRACE(collect ? "barrier values collected" : "barrier values not collected");
        SCOPED_TRACE(stop ? "stop at the first finding" : "complete search");
        ExploreOptions o;
        o.reduction = false;
        o.stop_at_first = stop;
        o.shorten_budget_s = 0;
        o.check_rules = false;
        o.collect_terminals = true;
        o.collect_barrier_states = collect;
        o.batch_table_bytes = batch;
        o.max_states = 2'000'000;
        const ExploreResult with = Explore(l.program, l.params, o);
        o.predict_successors = false;
        const ExploreResult without = Explore(l.program, l.params, o);
        EXPECT_NE(with.verdict, ExploreVerdict::kIncomplete);
        EXPECT_EQ(with.verdict, without.verdict);
        EXPECT_EQ(with.stats.states, without.stats.states);
        EXPECT_EQ(with.stats.expanded, without.stats.expanded);
        EXPECT_EQ(with.stats.transitions, without.stats.transitions);
        EXPECT_EQ(with.stats.enabled, without.stats.enabled);
        EXPECT_EQ(with.stats.depth, without.stats.depth);
        EXPECT_EQ(with.stats.completed_ends, without.stats.completed_ends);
        EXPECT_EQ(with.stats.deadlock_ends, without.stats.deadlock_ends);
        EXPECT_EQ(with.stats.violation_ends, without.stats.violation_ends);
        EXPECT_EQ(with.terminals, without.terminals);
        EXPECT_EQ(with.barrier_states, without.barrier_states);
        EXPECT_EQ(with.counterexample, without.counterexample);
        EXPECT_EQ(without.stats.predicted, 0u);
        EXPECT_EQ(without.stats.predicted_new, 0u);
        EXPECT_EQ(without.stats.memo_hits, 0u);
        if (c.predicts && !stop && with.stats.transitions > 1000) {
          EXPECT_GT(with.stats.predicted, with.stats.transitions / 10);
          // Agent steps predicted from the memo of agent steps (dropping its checks of the
          // touched objects, of the wakes or of async-group agents' operations fails the test:
          // the descent's check of a stored successor fires).
          EXPECT_GT(with.stats.memo_hits, with.stats.states / 50);
          // Batched, without barrier values: new states stored without a step.
          if (batch == 0 && !collect) {
            EXPECT_GT(with.stats.predicted_new, with.stats.states / 20);
          }
        } else if (!c.predicts) {
          EXPECT_EQ(with.stats.predicted, 0u);
        }
        if (collect) {
          EXPECT_EQ(with.stats.predicted_new, 0u);
        }
      }
    }
  }
}

// On a violation, the batched depth-first search finds one too, and its counterexample replays
// to a violation.
TEST(RestoreStepTest, BatchedDepthFirstFindsViolations) {
  for (const std::string f : {"sim/examples/explore/phase_overrun.pipe",
                              "sim/examples/explore/exit_with_copies_in_flight.pipe",
                              "sim/examples/explore/poll_instead_of_wait.pipe"}) {
    SCOPED_TRACE(f);
    Loaded l = Load(f);
    ExploreOptions o;
    o.batch_table_bytes = 0;
    o.shorten_budget_s = 0;
    const ExploreResult r = Explore(l.program, l.params, o);
    ExploreOptions d;
    d.shorten_budget_s = 0;
    const ExploreResult lazy = Explore(l.program, l.params, d);
    EXPECT_EQ(r.verdict, lazy.verdict);
    ASSERT_TRUE(r.verdict == ExploreVerdict::kViolation || r.verdict == ExploreVerdict::kDeadlock)
        << ExploreVerdictName(r.verdict);
    const engine::RunResult end = ReplayEnd(l, r);
    EXPECT_EQ(end.outcome, r.verdict == ExploreVerdict::kViolation ? Outcome::kViolation
                                                                    : Outcome::kDeadlock);
  }
}

}  // namespace
}  // namespace parity::verifier::explore_test_util
