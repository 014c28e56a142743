// Holds the H100 traces of the aliased-buffer pipelines of issue 25 (gpu/memory_order_batch.sh,
// traces/alias_pipelines/) against the model on the CPU:
// - each trace is a source="h100" trace of the current schedule (same content hash), with the
//   params it was run with;
// - pipelines/fa3_forward/forward.pipe (O aliased over V, barrier_O, ping-pong named barriers)
//   and persistent_gemm/persistent_epilogue.pipe (C aliased over the A stages, epi_free), at
//   their defaults and a larger size, from resolved op streams and interpreted: a clean run (no
//   wait timed out, every `use` read pattern data, as many uses, writes and TMA issues as the
//   simulator), a complete replay on the model, and nothing `parity compare` finds against the
//   simulator;
// - fa3_forward/bad_empty_tile_disagreement.pipe hangs on the H100 where the model deadlocks;
// - the race variants' litmus histograms (races/) belong to the current schedules, every run
//   completed, and none saw wrong bytes (their mixes are pattern-valid: the README says why).
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "sim/engine/engine.h"
#include "sim/ir/hash.h"
#include "sim/ir/ir.h"
#include "sim/ir/parser.h"
#include "sim/litmus/outcome.h"
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
  return testing::LoadTrace(pipe, "traces/alias_pipelines", trace_name, {"H100", "H200"});
}

TEST(AliasPipelinesTraces, Fa3ForwardMatchesTheModel) {
  for (const char* name : {"fa3_forward.resolved", "fa3_forward.interpret",
                           "fa3_forward_t3.resolved", "fa3_forward_t3.interpret"}) {
    SCOPED_TRACE(name);
    const Loaded l = Load("pipelines/fa3_forward/forward.pipe", name);
    ExpectMatchesTheModel(l);
    // One TMA store of O per tile, after every V stage it overwrites was read.
    EXPECT_EQ(Count(l.h100.events, EventKind::kTmaStoreIssue),
              static_cast<size_t>(l.params[0]));
  }
}

TEST(AliasPipelinesTraces, PersistentEpilogueMatchesTheModel) {
  for (const char* name : {"persistent_epilogue.resolved", "persistent_epilogue.interpret",
                           "persistent_epilogue_c2_t5.resolved",
                           "persistent_epilogue_c2_t5.interpret"}) {
    SCOPED_TRACE(name);
    const Loaded l = Load("pipelines/persistent_gemm/persistent_epilogue.pipe", name);
    ExpectMatchesTheModel(l);
  }
}

// The empty tile the consumers skip and the producer loads: the H100 hangs (bounded waits time
// out), replaying its events does not diverge from the model, and the model, run on, deadlocks.
TEST(AliasPipelinesTraces, EmptyTileDisagreementHangsWhereTheModelDeadlocks) {
  for (const char* name : {"fa3_bad_empty_tile_disagreement.resolved",
                           "fa3_bad_empty_tile_disagreement.interpret"}) {
    SCOPED_TRACE(name);
    const Loaded l = Load("pipelines/fa3_forward/bad_empty_tile_disagreement.pipe", name);
    ASSERT_TRUE(l.ok);
    EXPECT_EQ(l.sim_outcome, engine::Outcome::kDeadlock);
    EXPECT_GT(Count(l.h100.events, EventKind::kWaitTimeout), 0u);
    Expected<verifier::ReplayResult> r = verifier::ReplayTrace(l.program, l.params, l.h100);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_FALSE(r->diverged) << verifier::FormatReplayResult(*r, l.h100);
    EXPECT_EQ(r->model_run_on, engine::Outcome::kDeadlock);
  }
}

// The race variants under `parity_gpu litmus`: recorded from the current schedules, 200 runs
// that all completed, none with a use that saw non-pattern bytes.
TEST(AliasPipelinesTraces, RaceVariantHistogramsArePinned) {
  const std::pair<const char*, const char*> files[] = {
      {"bad_o_write_before_v_consumed", "pipelines/fa3_forward/bad_o_write_before_v_consumed.pipe"},
      {"bad_v_load_over_o", "pipelines/fa3_forward/bad_v_load_over_o.pipe"},
      {"bad_epilogue_alias_early", "pipelines/persistent_gemm/bad_epilogue_alias_early.pipe"},
  };
  for (const auto& [stem, pipe] : files) {
    SCOPED_TRACE(stem);
    const std::string path = std::string("traces/alias_pipelines/races/") + stem + ".h100.txt";
    std::ifstream in(path);
    ASSERT_TRUE(in) << path;
    std::stringstream text;
    text << in.rdbuf();
    auto h = litmus::ParseHistogram(text.str(), path);
    ASSERT_TRUE(h.ok()) << h.status().ToString();
    auto program = ir::ParseFile(pipe);
    ASSERT_TRUE(program.ok()) << program.status().ToString();
    EXPECT_EQ(h->hash, ir::ContentHashHex(*program));
    EXPECT_EQ(h->runs, 200u);
    ASSERT_EQ(h->counts.size(), 1u);
    EXPECT_EQ(h->counts.begin()->first.rfind("ok ", 0), 0u) << h->counts.begin()->first;
    EXPECT_NE(text.str().find("# runs with wrong data (a use saw non-pattern bytes): 0;"),
              std::string::npos);
  }
}

}  // namespace
}  // namespace parity
