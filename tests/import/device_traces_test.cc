// The H100 runs of `parity import` (traces/import/, tests/import/device_run.sh): every kernel of
// tests/import ran natively with the device trace API and as its imported schedule on
// parity_gpu. Checked here without a GPU:
//   - each executor trace replays on its imported schedule (`parity replay`);
//   - the kernel and its schedule agree on the outcome: both complete, or both time out on the
//     same barrier (the kernel's timed-out address mapped to the schedule's barrier through the
//     order of the inits, which the kernel and the schedule issue alike);
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
  bool hangs;
  // The executor's run of the schedule disagreed with the kernel and with the model (see
  // traces/import/README.md): checked as recorded, so that a new recording is looked at.
  bool executor_disagrees = false;
  // The executor's trace does not replay, for this reason (a protocol violation of the schedule
  // that the hardware went past), or "" (it replays).
  std::string replay_stops = "";
};

const std::vector<Kernel>& Kernels() {
  static const std::vector<Kernel> k = {
      {"single_tma", false},
      {"ws_pipeline", false},
      {"cluster_pipeline", false},
      {"tma_roundtrip", false},
      {"bulk_roundtrip", false},
      {"cp_async_pipeline", false},
      // The seeded-bug twins (tests/import/BUILD): the races complete, the others hang.
      {"ws_pipeline_bad_tx", true, /*executor_disagrees=*/true, "deadlock"},
      {"ws_pipeline_bad_parity", true},
      // The second consumer's release lands on the next phase of empty[s] (count 1) before the
      // producer observed the first: M1009, where the model ends its run.
      {"ws_pipeline_bad_empty", true, false, "M1009"},
      {"ws_pipeline_early_exit", true},
      {"cluster_pipeline_bad_release", true},
      {"tma_roundtrip_no_wait", false},
      {"cp_async_pipeline_short_wait", false},
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
      // bad_tx: the executor's consumers saw the first full barrier complete with tx_count
      // -4096 (expect_tx 4096, an 8192-byte TMA), which the model cannot (and the kernel
      // itself hung).
      EXPECT_TRUE(r->diverged);
      EXPECT_NE(r->divergence.reason.find(k.replay_stops), std::string::npos)
          << verifier::FormatReplayResult(*r, gpu);
      continue;
    }
    EXPECT_FALSE(r->diverged) << verifier::FormatReplayResult(*r, gpu);
    EXPECT_EQ(r->timeouts > 0, k.hangs);
  }
}

TEST(DeviceTraces, KernelAndScheduleAgreeOnTheOutcome) {
  for (const Kernel& k : Kernels()) {
    SCOPED_TRACE(k.name);
    const trace::TraceFile native = Read("traces/import/native/" + k.name + ".trace");
    const trace::TraceFile gpu = Read("traces/import/gpu/" + k.name + ".trace");
    EXPECT_EQ(native.header.source, "kernel");
    const auto native_timeouts = OfKind(native, EventKind::kWaitTimeout);
    const auto gpu_timeouts = OfKind(gpu, EventKind::kWaitTimeout);
    EXPECT_EQ(!native_timeouts.empty(), k.hangs);
    EXPECT_EQ(!gpu_timeouts.empty(), k.hangs && !k.executor_disagrees);
    if (!k.hangs || k.executor_disagrees) continue;
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
    if (k.hangs) continue;  // a hung run stops mid-way in each at its own point
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
