// Holds the H100 traces of the executor's newer ops (traces/h100/record_new_ops.sh: cp.async with
// groups and cp.async.mbarrier.arrive, 1-D bulk loads/stores with multicast, state tokens,
// arrive.noComplete, arrive_drop) against the model on the CPU:
// - each trace is a source="h100" trace of the current schedule (same content hash);
// - gpu_ops and sgemm_sm80 replay on the model event for event (verifier/replay.h, per-agent
//   replay of executor traces), and show the ops they exist for, as many as the simulator runs;
// - no wait timed out, every `use` read pattern data (no kFlagDataBad).
// cp_async_arrive_on and st_async_ring are recorded too but do not replay yet (the deferred
// arrive of cp.async.mbarrier.arrive and st.async's remote complete_tx are not recorded by the
// executor, and replay does not infer them): their checks here are the data and timeout ones.
#include <string>
#include <vector>

#include "gpu/executor.h"
#include "gtest/gtest.h"
#include "sim/engine/engine.h"
#include "sim/ir/hash.h"
#include "sim/ir/ir.h"
#include "sim/ir/parser.h"
#include "sim/trace/event.h"
#include "sim/trace/trace_file.h"
#include "verifier/replay.h"

namespace parity {
namespace {

using trace::EventKind;
using trace::TraceEvent;

struct Loaded {
  ir::Program program;
  std::vector<int64_t> params;
  trace::TraceFile h100;
  std::vector<TraceEvent> sim_events;
  engine::Outcome sim_outcome = engine::Outcome::kRunning;
};

Loaded Load(const std::string& pipe, const std::string& trace_name) {
  Loaded l;
  Expected<ir::Program> p = ir::ParseFile(pipe);
  EXPECT_TRUE(p.ok()) << p.status().ToString();
  if (!p.ok()) return l;
  l.program = *p;
  Expected<trace::TraceFile> t = trace::ReadTraceFile("traces/h100/" + trace_name + ".trace");
  EXPECT_TRUE(t.ok()) << t.status().ToString();
  if (!t.ok()) return l;
  l.h100 = *t;
  EXPECT_EQ(l.h100.header.source, "h100");
  EXPECT_EQ(l.h100.header.schedule_hash, ir::ContentHash(l.program))
      << trace_name << ": recorded from another version of " << pipe << ": re-record it";
  Expected<std::vector<int64_t>> params = verifier::BindTraceParams(l.program, l.h100.header);
  EXPECT_TRUE(params.ok()) << params.status().ToString();
  if (!params.ok()) return l;
  l.params = *params;
  Expected<engine::Engine> e = engine::Engine::Create(l.program, l.params, {});
  EXPECT_TRUE(e.ok()) << e.status().ToString();
  if (!e.ok()) return l;
  engine::Engine engine = std::move(e).value();
  l.sim_outcome = engine.Run().outcome;
  l.sim_events = engine.trace();
  return l;
}

size_t Count(const std::vector<TraceEvent>& events, EventKind kind, uint8_t flag = 0) {
  size_t n = 0;
  for (const TraceEvent& e : events) {
    if (e.kind == static_cast<uint8_t>(kind) && (e.flags & flag) == flag) ++n;
  }
  return n;
}

void ExpectCleanRun(const Loaded& l) {
  EXPECT_EQ(Count(l.h100.events, EventKind::kWaitTimeout), 0u);
  EXPECT_EQ(Count(l.h100.events, EventKind::kUse, gpu::kFlagDataBad), 0u)
      << "a use read bytes that were not pattern data";
  EXPECT_EQ(Count(l.h100.events, EventKind::kUse), Count(l.sim_events, EventKind::kUse));
  EXPECT_EQ(l.sim_outcome, engine::Outcome::kCompleted);
}

void ExpectReplays(const Loaded& l) {
  Expected<verifier::ReplayResult> r = verifier::ReplayTrace(l.program, l.params, l.h100);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_FALSE(r->diverged) << verifier::FormatReplayResult(*r, l.h100);
  EXPECT_EQ(r->timeouts, 0u);
}

TEST(H100NewOps, GpuOpsBulkTokensNoCompleteDrop) {
  const Loaded l = Load("tests/gpu/schedules/gpu_ops.pipe", "gpu_ops");
  ExpectCleanRun(l);
  // Per CTA a plain bulk load and a bulk store; CTA 0 also the multicast load to both CTAs.
  EXPECT_EQ(Count(l.h100.events, EventKind::kBulkIssue), 5u);
  EXPECT_EQ(Count(l.h100.events, EventKind::kBulkIssue, trace::kFlagMulticast), 1u);
  for (const TraceEvent& e : l.h100.events) {
    if (e.kind == static_cast<uint8_t>(EventKind::kBulkIssue) && (e.flags & trace::kFlagMulticast)) {
      EXPECT_EQ(e.value2, 3) << "multicast mask";
      EXPECT_EQ(e.value, 4096) << "bytes";
    }
  }
  // Waits: full, mc, tok (by token), drop twice, per CTA; each ended.
  EXPECT_EQ(Count(l.h100.events, EventKind::kWaitEnd), 10u);
  EXPECT_EQ(Count(l.h100.events, EventKind::kWaitEnd), Count(l.sim_events, EventKind::kWaitEnd));
  // The bulk store wrote `write` data: counted in the run's output, here the commit and wait.
  EXPECT_EQ(Count(l.h100.events, EventKind::kBulkCommit), 2u);
  EXPECT_EQ(Count(l.h100.events, EventKind::kBulkWaitEnd), 2u);
  ExpectReplays(l);
}

TEST(H100NewOps, Sgemm80CpAsyncGroups) {
  const Loaded l = Load("pipelines/ampere_multistage/sgemm_sm80.pipe", "ampere_multistage__sgemm_sm80");
  ExpectCleanRun(l);
  EXPECT_GT(Count(l.h100.events, EventKind::kCpAsyncIssue), 0u);
  EXPECT_EQ(Count(l.h100.events, EventKind::kCpAsyncIssue), Count(l.sim_events, EventKind::kCpAsyncIssue));
  EXPECT_EQ(Count(l.h100.events, EventKind::kCpAsyncCommit), Count(l.sim_events, EventKind::kCpAsyncCommit));
  EXPECT_EQ(Count(l.h100.events, EventKind::kCpAsyncWaitEnd), Count(l.sim_events, EventKind::kCpAsyncWaitEnd));
  ExpectReplays(l);
}

TEST(H100NewOps, CpAsyncArriveOnAndStAsyncRingRanClean) {
  const Loaded a = Load("pipelines/cuda_pipeline/cp_async_arrive_on.pipe", "cuda_pipeline__cp_async_arrive_on");
  ExpectCleanRun(a);
  EXPECT_EQ(Count(a.h100.events, EventKind::kCpAsyncArrive), Count(a.sim_events, EventKind::kCpAsyncArrive));
  EXPECT_GT(Count(a.h100.events, EventKind::kCpAsyncArrive), 0u);
  const Loaded s = Load("pipelines/st_async_ring/ring.pipe", "st_async_ring__ring");
  ExpectCleanRun(s);
  EXPECT_EQ(Count(s.h100.events, EventKind::kStAsync), Count(s.sim_events, EventKind::kStAsync));
  EXPECT_EQ(Count(s.h100.events, EventKind::kStAsync), 8u * 6u);  // 8 CTAs x ITEMS
}

}  // namespace
}  // namespace parity
