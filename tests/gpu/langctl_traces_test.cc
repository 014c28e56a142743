// Holds the H100 traces of the control constructs (gpu/langctl_batch.sh, traces/langctl/)
// against the model on the CPU:
// - each trace is a source="h100" trace of the current schedule (same content hash), with the
//   params it was run with;
// - persistent.pipe (per-cluster trip counts of a `while`, at two grid sizes) and peer_load.pipe
//   (a TMA load into a peer CTA completing on that CTA's barrier): a clean run (no wait timed
//   out, every `use` read pattern data, as many uses as the simulator), a complete replay on
//   the model, and nothing `parity compare` finds against the simulator; the loads CTA 1 of
//   peer_load issues name CTA 0 as their target;
// - the known-bad variants hang where the model deadlocks or reports its violation, and a
//   `while` past its bound faults on the H100 after the passes the engine makes.
#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "sim/engine/engine.h"
#include "sim/ir/ir.h"
#include "sim/trace/event.h"
#include "tests/gpu/h100_trace_fixture.h"
#include "verifier/replay.h"

namespace parity {
namespace {

using trace::EventKind;
using trace::TraceEvent;

using Loaded = testing::LoadedTrace;
using testing::Count;
using testing::ExpectMatchesTheModel;

Loaded Load(const std::string& pipe, const std::string& trace_name) {
  return testing::LoadTrace(pipe, "traces/langctl", trace_name, {"H100"});
}

TEST(LangctlTraces, PersistentGemmPerClusterTripCounts) {
  for (const char* name : {"persistent.resolved", "persistent.interpret",
                           "persistent_c3_t7.resolved", "persistent_c3_t7.interpret"}) {
    SCOPED_TRACE(name);
    const Loaded l = Load("pipelines/persistent_gemm/persistent.pipe", name);
    ExpectMatchesTheModel(l);
  }
}

TEST(LangctlTraces, TmaLoadIntoAPeerCompletesOnItsBarrier) {
  for (const char* name : {"peer_load.resolved", "peer_load.interpret", "peer_load_i8.resolved",
                           "peer_load_i8.interpret"}) {
    SCOPED_TRACE(name);
    const Loaded l = Load("pipelines/persistent_gemm/peer_load.pipe", name);
    ExpectMatchesTheModel(l);
    // CTA 1's loads go into CTA 0 (target 0) on both sides; CTA 0's stay in CTA 0.
    size_t peer = 0;
    for (const TraceEvent& e : l.h100.events) {
      if (e.kind != static_cast<uint8_t>(EventKind::kTmaIssue)) continue;
      EXPECT_EQ(e.target_cta, 0u);
      peer += e.cta == 1;
    }
    EXPECT_EQ(peer, Count(l.h100.events, EventKind::kTmaIssue) / 2);
  }
}

// `while` over a per-CTA tile schedule with a `break` out of an inner `for` and one out of the
// `while`: the passes each CTA made are its `write`s (one per inner pass, then one whose byte
// count is 16 x the passes), the same on the H100 as in the model.
TEST(LangctlTraces, WhileAndBreakMakeTheSamePasses) {
  for (const char* name : {"while_break.resolved", "while_break.interpret"}) {
    SCOPED_TRACE(name);
    const Loaded l = Load("tests/gpu/schedules/while_break.pipe", name);
    ExpectMatchesTheModel(l, /*uses=*/false);
    EXPECT_EQ(Count(l.h100.events, EventKind::kWrite), 17u + 6u);
    // grid_cta 0..5 (cluster-major): tiles {0, 6}, {1}, {2}, {3}, {4}, {5}, 2 or 3 passes each.
    const int64_t want[6] = {4, 3, 2, 3, 2, 3};
    size_t finals = 0;
    for (const TraceEvent& e : l.h100.events) {
      if (e.kind != static_cast<uint8_t>(EventKind::kWrite) || e.index != 3) continue;
      ++finals;
      EXPECT_EQ(e.value, 16 * want[e.cluster * 2 + e.cta])
          << "cluster " << e.cluster << " CTA " << e.cta;
    }
    EXPECT_EQ(finals, 6u);
  }
}

// The known-bad variants: the hang the H100 showed is the model's deadlock (replay confirms the
// timed-out waits and, run on, the model deadlocks), and the over-arrival's run stops in the
// model at its violation (M1005 / M1009) where the H100 went on to hang.
TEST(LangctlTraces, KnownBadVariantsHangWhereTheModelSays) {
  for (const char* name : {"bad_per_cta_trip_count.resolved", "bad_per_cta_trip_count.interpret"}) {
    SCOPED_TRACE(name);
    const Loaded l = Load("pipelines/persistent_gemm/bad_per_cta_trip_count.pipe", name);
    ASSERT_TRUE(l.ok);
    EXPECT_EQ(l.sim_outcome, engine::Outcome::kDeadlock);
    Expected<verifier::ReplayResult> r = verifier::ReplayTrace(l.program, l.params, l.h100);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_FALSE(r->diverged) << verifier::FormatReplayResult(*r, l.h100);
    // Both agents of cluster 1 CTA 0: the consumer on full[0] (the bytes that never come) and
    // the producer's tail on the empty barrier its consumer never releases.
    EXPECT_EQ(r->timeouts, 2u);
    EXPECT_EQ(r->model_run_on, engine::Outcome::kDeadlock);
    size_t on_full = 0;
    for (const TraceEvent& e : l.h100.events) {
      if (e.kind != static_cast<uint8_t>(EventKind::kWaitTimeout)) continue;
      EXPECT_EQ(e.cluster, 1u);
      EXPECT_EQ(e.cta, 0u);
      on_full += l.program.barriers[e.object].name == "full" && e.index == 0;
    }
    EXPECT_EQ(on_full, 1u);
  }
  for (const char* name :
       {"bad_state_reset_per_tile.resolved", "bad_state_reset_per_tile.interpret"}) {
    SCOPED_TRACE(name);
    const Loaded l = Load("pipelines/persistent_gemm/bad_state_reset_per_tile.pipe", name);
    ASSERT_TRUE(l.ok);
    EXPECT_GT(Count(l.h100.events, EventKind::kWaitTimeout), 0u);
    Expected<verifier::ReplayResult> r = verifier::ReplayTrace(l.program, l.params, l.h100);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    ASSERT_TRUE(r->diverged);
    const std::string why = verifier::FormatReplayResult(*r, l.h100);
    EXPECT_TRUE(why.find("M1005") != std::string::npos || why.find("M1009") != std::string::npos)
        << why;
  }
}

// A `while` past its bound: the H100's agent made exactly the passes the bound allows (16
// arrives, 16 waits) before its interpreter fault, and the model, replaying them, stops with
// engine.while-bound at the next test.
TEST(LangctlTraces, WhileBoundFaultsAfterTheSamePasses) {
  for (const char* name : {"while_bound.resolved", "while_bound.interpret"}) {
    SCOPED_TRACE(name);
    const Loaded l = Load("tests/gpu/schedules/while_bound.pipe", name);
    ASSERT_TRUE(l.ok);
    EXPECT_EQ(l.sim_outcome, engine::Outcome::kError);
    EXPECT_EQ(Count(l.h100.events, EventKind::kArrive), 16u);
    EXPECT_EQ(Count(l.h100.events, EventKind::kWaitEnd), 16u);
    Expected<verifier::ReplayResult> r = verifier::ReplayTrace(l.program, l.params, l.h100);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_FALSE(r->diverged) << verifier::FormatReplayResult(*r, l.h100);
    EXPECT_EQ(r->model_run_on, engine::Outcome::kError);
  }
}

}  // namespace
}  // namespace parity
