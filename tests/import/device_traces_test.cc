// The H100 runs of `parity import` (traces/import/, tests/import/device_run.sh): every kernel of
// tests/import ran natively with the device trace API and as its imported schedule on
// parity_gpu. Checked here without a GPU:
//   - each executor trace replays on its imported schedule (`parity replay`);
//   - the kernel and its schedule agree on the outcome: both complete, or both time out on the
//     same barrier (the kernel's timed-out address mapped to the schedule's barrier through the
//     order of the inits, which the kernel and the schedule issue alike), or, where the hardware
//     itself goes either way (a tile credited at once or in pieces), each run's outcome is one
//     the model has (traces/import/bad_tx/: every recorded run of that batch replays);
//   - the kernel issued the protocol operations its schedule issues (per CTA: inits with their
//     counts, expect_tx bytes, TMA loads and stores, bulk copies).
#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "gtest/gtest.h"
#include "sim/ir/parser.h"
#include "sim/trace/event.h"
#include "sim/trace/trace_file.h"
#include "verifier/replay.h"

namespace parity {
namespace {

using trace::EventKind;
using trace::TraceEvent;

constexpr uint8_t K(EventKind k) { return static_cast<uint8_t>(k); }

struct Kernel {
  std::string name;
  bool native_hangs;  // the kernel's recorded run timed out
  bool gpu_hangs;     // the executor's recorded run of the imported schedule timed out
  // The executor trace replays only with loads credited in pieces (verifier::ReplayResult::
  // tx_pieces): a phase completed mid-copy. Where the kernel and the executor differ, this is
  // why, and the model admits both outcomes (traces/import/bad_tx/).
  bool gpu_pieces = false;
  // The executor's trace does not replay, for this reason (a protocol violation of the schedule
  // that the hardware went past), or "" (it replays).
  std::string replay_stops = "";
};

const std::vector<Kernel>& Kernels() {
  static const std::vector<Kernel> k = {
      {"single_tma", false, false},
      {"ws_pipeline", false, false},
      {"cluster_pipeline", false, false},
      {"tma_roundtrip", false, false},
      {"bulk_roundtrip", false, false},
      {"cp_async_pipeline", false, false},
      // The seeded-bug twins (tests/import/BUILD): the races complete, the others hang.
      // bad_tx: half the tile announced. The kernel's run hung with the tile credited at once;
      // the executor's completed, the tile credited in pieces (the phase completed when half of
      // it had landed): both are outcomes of the schedule.
      {"ws_pipeline_bad_tx", true, false, /*gpu_pieces=*/true},
      {"ws_pipeline_bad_parity", true, true},
      // The second consumer's release lands on the next phase of empty[s] (count 1) before the
      // producer observed the first: M1009, where the model ends its run.
      {"ws_pipeline_bad_empty", true, true, false, "M1009"},
      {"ws_pipeline_early_exit", true, true},
      {"cluster_pipeline_bad_release", true, true},
      {"tma_roundtrip_no_wait", false, false},
      {"cp_async_pipeline_short_wait", false, false},
  };
  return k;
}

trace::TraceFile Read(const std::string& path) {
  auto t = trace::ReadTraceFile(path);
  EXPECT_TRUE(t.ok()) << t.status().ToString();
  return t.ok() ? *t : trace::TraceFile{};
}

std::vector<TraceEvent> OfKind(const trace::TraceFile& t, EventKind kind) {
  std::vector<TraceEvent> out;
  for (const TraceEvent& e : t.events) {
    if (e.kind == K(kind)) out.push_back(e);
  }
  return out;
}

TEST(DeviceTraces, ExecutorTracesReplayOnTheImportedSchedules) {
  for (const Kernel& k : Kernels()) {
    SCOPED_TRACE(k.name);
    auto program = ir::ParseFile("traces/import/pipes/" + k.name + ".pipe");
    ASSERT_TRUE(program.ok()) << program.status().ToString();
    const trace::TraceFile gpu = Read("traces/import/gpu/" + k.name + ".trace");
    auto params = verifier::BindTraceParams(*program, gpu.header);
    ASSERT_TRUE(params.ok()) << params.status().ToString();
    auto r = verifier::ReplayTrace(*program, *params, gpu);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    if (!k.replay_stops.empty()) {
      EXPECT_TRUE(r->diverged);
      EXPECT_NE(r->divergence.reason.find(k.replay_stops), std::string::npos)
          << verifier::FormatReplayResult(*r, gpu);
      continue;
    }
    EXPECT_FALSE(r->diverged) << verifier::FormatReplayResult(*r, gpu);
    EXPECT_EQ(r->timeouts > 0, k.gpu_hangs);
    EXPECT_EQ(r->tx_pieces, k.gpu_pieces) << verifier::FormatReplayResult(*r, gpu);
  }
}

// The expect_tx twin's schedule run 40 times on the executor on an H100 (traces/import/bad_tx/):
// some runs completed, others hung on the full barrier of one stage or another, as the tiles were
// credited whole or in pieces landing by landing. Every run's trace replays on the schedule:
// its outcome is one the model has.
TEST(DeviceTraces, EveryExecutorRunOfTheExpectTxTwinReplays) {
  auto program = ir::ParseFile("traces/import/pipes/ws_pipeline_bad_tx.pipe");
  ASSERT_TRUE(program.ok()) << program.status().ToString();
  int completed = 0, whole = 0;
  std::set<std::pair<int, int>> hung_on;
  for (int i = 1; i <= 40; ++i) {
    SCOPED_TRACE(i);
    const trace::TraceFile gpu =
        Read("traces/import/bad_tx/gpu/bad_tx." + std::to_string(i) + ".trace");
    auto params = verifier::BindTraceParams(*program, gpu.header);
    ASSERT_TRUE(params.ok()) << params.status().ToString();
    auto r = verifier::ReplayTrace(*program, *params, gpu);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_FALSE(r->diverged) << verifier::FormatReplayResult(*r, gpu);
    const auto timeouts = OfKind(gpu, EventKind::kWaitTimeout);
    EXPECT_EQ(r->timeouts > 0, !timeouts.empty());
    if (timeouts.empty()) ++completed;
    // A run that hung on the first full barrier needs no pieces; every other one does.
    bool first_only = !timeouts.empty();
    for (const TraceEvent& e : timeouts) {
      hung_on.insert({e.object, e.index});
      if (!(e.object == 0 && e.index == 0) && !(e.object == 1 && e.index == 0)) {
        first_only = false;
      }
    }
    EXPECT_EQ(r->tx_pieces, !first_only) << verifier::FormatReplayResult(*r, gpu);
    whole += first_only ? 1 : 0;
  }
  // As recorded (traces/import/bad_tx/runs.txt): 9 of 40 completed, and the hangs were on the
  // full barriers of every stage (smem_32768[0..3]).
  EXPECT_EQ(completed, 9);
  EXPECT_GT(whole, 0);
  for (int s = 0; s < 4; ++s) EXPECT_TRUE(hung_on.count({0, s})) << s;
}

TEST(DeviceTraces, KernelAndScheduleAgreeOnTheOutcome) {
  for (const Kernel& k : Kernels()) {
    SCOPED_TRACE(k.name);
    const trace::TraceFile native = Read("traces/import/native/" + k.name + ".trace");
    const trace::TraceFile gpu = Read("traces/import/gpu/" + k.name + ".trace");
    EXPECT_EQ(native.header.source, "kernel");
    const auto native_timeouts = OfKind(native, EventKind::kWaitTimeout);
    const auto gpu_timeouts = OfKind(gpu, EventKind::kWaitTimeout);
    EXPECT_EQ(!native_timeouts.empty(), k.native_hangs);
    EXPECT_EQ(!gpu_timeouts.empty(), k.gpu_hangs);
    // Different outcomes only where the model has both (the completed run replays with the
    // copies credited in pieces, ExecutorTracesReplayOnTheImportedSchedules; the hung kernel's
    // trace replays with its timeouts confirmed, kernel_replay_test).
    if (k.native_hangs != k.gpu_hangs) {
      EXPECT_TRUE(k.gpu_pieces);
    }
    if (!k.native_hangs || !k.gpu_hangs) continue;
    // The kernel names barriers by address (index = shared address / 8), the schedule by
    // (object, index): the n-th init of a CTA is the same barrier in both.
    std::map<std::tuple<int, int, int>, std::pair<int, int>> barrier_of;  // cl, cta, addr
    std::map<std::pair<int, int>, std::vector<TraceEvent>> gpu_inits;
    for (const TraceEvent& e : OfKind(gpu, EventKind::kInit)) {
      gpu_inits[{e.cluster, e.cta}].push_back(e);
    }
    std::map<std::pair<int, int>, size_t> n;
    for (const TraceEvent& e : OfKind(native, EventKind::kInit)) {
      const auto& list = gpu_inits[{e.cluster, e.cta}];
      size_t& i = n[{e.cluster, e.cta}];
      ASSERT_LT(i, list.size());
      EXPECT_EQ(e.value, list[i].value);  // the same init count
      barrier_of[{e.cluster, e.cta, e.index}] = {list[i].object, list[i].index};
      ++i;
    }
    std::set<std::pair<int, int>> native_barriers, gpu_barriers;
    for (const TraceEvent& e : native_timeouts) {
      auto it = barrier_of.find({e.cluster, e.target_cta, e.index});
      ASSERT_NE(it, barrier_of.end());
      native_barriers.insert(it->second);
    }
    for (const TraceEvent& e : gpu_timeouts) gpu_barriers.insert({e.object, e.index});
    EXPECT_EQ(native_barriers, gpu_barriers);
  }
}

TEST(DeviceTraces, KernelIssuedTheOperationsOfItsSchedule) {
  // Compared by value (count, bytes) or, where the kernel's record is per warp and per
  // instruction while the schedule's is per operation, by number only.
  const std::vector<std::pair<EventKind, bool>> kinds = {
      {EventKind::kInit, true},           {EventKind::kArriveExpectTx, true},
      {EventKind::kTmaIssue, true},       {EventKind::kTmaStoreIssue, true},
      {EventKind::kBulkIssue, true},      {EventKind::kBulkCommit, false},
      {EventKind::kCpAsyncIssue, false},  {EventKind::kCpAsyncCommit, false},
  };
  for (const Kernel& k : Kernels()) {
    // A hung run stops mid-way at its own point.
    if (k.native_hangs || k.gpu_hangs) continue;
    SCOPED_TRACE(k.name);
    const trace::TraceFile native = Read("traces/import/native/" + k.name + ".trace");
    const trace::TraceFile gpu = Read("traces/import/gpu/" + k.name + ".trace");
    size_t compared = 0;
    for (const auto& [kind, by_value] : kinds) {
      SCOPED_TRACE(trace::EventKindName(K(kind)));
      // Per CTA of the grid.
      std::map<std::pair<int, int>, std::multiset<int64_t>> a, b;
      auto value = [&](const TraceEvent& e) -> int64_t {
        if (!by_value) return 0;
        return kind == EventKind::kArriveExpectTx ? e.value2 : e.value;
      };
      for (const TraceEvent& e : OfKind(native, kind)) a[{e.cluster, e.cta}].insert(value(e));
      for (const TraceEvent& e : OfKind(gpu, kind)) b[{e.cluster, e.cta}].insert(value(e));
      EXPECT_EQ(a, b);
      for (const auto& [cta, v] : a) compared += v.size();
    }
    EXPECT_GT(compared, 0u);
  }
}

}  // namespace
}  // namespace parity
