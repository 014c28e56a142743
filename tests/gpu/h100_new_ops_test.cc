// Holds the H100 traces of the executor's newer ops (traces/h100/record_new_ops.sh: cp.async with
// groups and cp.async.mbarrier.arrive, 1-D bulk loads/stores with multicast, state tokens,
// arrive.noComplete, arrive_drop, st.async around a cluster ring) against the model on the CPU:
// - each trace is a source="h100" trace of the current schedule (same content hash);
// - all four replay on the model event for event (verifier/replay.h, per-agent replay of
//   executor traces), and show the ops they exist for, as many as the simulator runs;
// - `compare` with the simulator's own trace finds no difference (program order per agent,
//   copies per issuing instruction, no wait that never ended);
// - no wait timed out, every `use` read pattern data (no kFlagDataBad).
// The executor records the issue of cp.async.mbarrier.arrive and st.async but neither the
// deferred arrive (when the thread's prior cp.asyncs land) nor the remote complete_tx (when the
// st.async's bytes land in the peer CTA): replay infers them where the model has them in flight
// and a recorded wait needs them, and counts them in inferred_completions (checked below).
#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "sim/trace/event.h"
#include "tests/gpu/h100_trace_fixture.h"

namespace parity {
namespace {

using trace::EventKind;
using trace::TraceEvent;

using Loaded = testing::LoadedTrace;
using testing::Count;
using testing::ExpectCleanRun;
using testing::ExpectReplays;
using testing::ExpectSameAsSimulator;

Loaded Load(const std::string& pipe, const std::string& trace_name) {
  return testing::LoadTrace(pipe, "traces/h100", trace_name, {});
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
  ExpectSameAsSimulator(l);
}

TEST(H100NewOps, Sgemm80CpAsyncGroups) {
  const Loaded l = Load("pipelines/ampere_multistage/sgemm_sm80.pipe", "ampere_multistage__sgemm_sm80");
  ExpectCleanRun(l);
  EXPECT_GT(Count(l.h100.events, EventKind::kCpAsyncIssue), 0u);
  EXPECT_EQ(Count(l.h100.events, EventKind::kCpAsyncIssue), Count(l.sim_events, EventKind::kCpAsyncIssue));
  EXPECT_EQ(Count(l.h100.events, EventKind::kCpAsyncCommit), Count(l.sim_events, EventKind::kCpAsyncCommit));
  EXPECT_EQ(Count(l.h100.events, EventKind::kCpAsyncWaitEnd), Count(l.sim_events, EventKind::kCpAsyncWaitEnd));
  ExpectReplays(l);
  ExpectSameAsSimulator(l);
}

TEST(H100NewOps, CpAsyncArriveOnDeferredArrives) {
  const Loaded a =
      Load("pipelines/cuda_pipeline/cp_async_arrive_on.pipe", "cuda_pipeline__cp_async_arrive_on");
  ExpectCleanRun(a);
  const size_t arrive_ons = Count(a.h100.events, EventKind::kCpAsyncArrive);
  EXPECT_EQ(arrive_ons, 6u);  // one per iteration (ITERS = 6)
  EXPECT_EQ(arrive_ons, Count(a.sim_events, EventKind::kCpAsyncArrive));
  // The executor records no asynchronous arrive (agent kNoAgent): replay infers one deferred
  // arrive per cp.async.mbarrier.arrive and, before it, the cp.async copy it waits for.
  for (const TraceEvent& e : a.h100.events) {
    EXPECT_FALSE(e.kind == static_cast<uint8_t>(EventKind::kArrive) && e.agent == trace::kNoAgent);
  }
  EXPECT_EQ(ExpectReplays(a), arrive_ons + Count(a.h100.events, EventKind::kCpAsyncIssue));
  ExpectSameAsSimulator(a);
}

TEST(H100NewOps, StAsyncRingRemoteCompleteTx) {
  const Loaded s = Load("pipelines/st_async_ring/ring.pipe", "st_async_ring__ring");
  ExpectCleanRun(s);
  EXPECT_EQ(Count(s.h100.events, EventKind::kStAsync), Count(s.sim_events, EventKind::kStAsync));
  EXPECT_EQ(Count(s.h100.events, EventKind::kStAsync), 8u * 6u);  // 8 CTAs x ITEMS
  // Each st.async writes into the next CTA of the ring; its complete_tx there is not recorded by
  // the executor, and replay infers exactly one per st.async.
  for (const TraceEvent& e : s.h100.events) {
    if (e.kind != static_cast<uint8_t>(EventKind::kStAsync)) continue;
    EXPECT_EQ(e.target_cta, (e.cta + 1) % 8);
    EXPECT_EQ(e.flags & trace::kFlagRemote, trace::kFlagRemote);
  }
  EXPECT_EQ(Count(s.h100.events, EventKind::kCompleteTx), 0u);
  EXPECT_EQ(ExpectReplays(s), Count(s.h100.events, EventKind::kStAsync));
  ExpectSameAsSimulator(s);
}

// Every correct pipeline of pipelines/ and the two correct examples of sim/examples/explore as
// the H100 ran them (traces/h100/pipelines/ and traces/h100/examples/, both recorded by
// record_pipelines.sh, most from host-resolved op streams): a clean run, a complete replay, and
// nothing `parity compare` finds against the simulator's own trace.
TEST(H100NewOps, CorrectPipelinesAndExamplesMatchTheSimulator) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"pipelines/ampere_multistage/sgemm_sm80.pipe", "pipelines/ampere_multistage__sgemm_sm80"},
      {"pipelines/cuda_pipeline/cp_async_arrive_on.pipe", "pipelines/cuda_pipeline__cp_async_arrive_on"},
      {"pipelines/cuda_pipeline/prefetch.pipe", "pipelines/cuda_pipeline__prefetch"},
      {"pipelines/cuda_pipeline/producer_consumer.pipe", "pipelines/cuda_pipeline__producer_consumer"},
      {"pipelines/pipeline_async/pipeline_async.pipe", "pipelines/pipeline_async__pipeline_async"},
      {"pipelines/single_tma_load/count1.pipe", "pipelines/single_tma_load__count1"},
      {"pipelines/single_tma_load/countN.pipe", "pipelines/single_tma_load__countN"},
      {"pipelines/st_async_ring/ring.pipe", "pipelines/st_async_ring__ring"},
      {"pipelines/tma_async_gemm/gemm.pipe", "pipelines/tma_async_gemm__gemm"},
      {"pipelines/tma_store/tma_store.pipe", "pipelines/tma_store__tma_store"},
      {"pipelines/ws_gemm/cooperative.pipe", "pipelines/ws_gemm__cooperative"},
      {"pipelines/ws_gemm/pingpong.pipe", "pipelines/ws_gemm__pingpong"},
      {"sim/examples/explore/gemm_multicast_pair.pipe", "examples/explore__gemm_multicast_pair"},
      {"sim/examples/explore/ring_2p2c.pipe", "examples/explore__ring_2p2c"},
  };
  for (const auto& [pipe, trace_name] : cases) {
    SCOPED_TRACE(trace_name);
    const Loaded l = Load(pipe, trace_name);
    ExpectCleanRun(l);
    ExpectReplays(l);
    ExpectSameAsSimulator(l);
  }
}

}  // namespace
}  // namespace parity
