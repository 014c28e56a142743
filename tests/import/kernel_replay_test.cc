// The kernels of tests/import ran on the H100 with the device trace API
// (gpu/include/parity/trace.cuh, tests/import/device_run.sh); their own traces
// (traces/import/native/) replay on the schedules `parity import` made of their PTX
// (traces/import/pipes/, verifier/kernel_trace.h):
//   - every kernel's trace matches and replays on its own imported schedule (a hanging twin's
//     timed-out waits are confirmed: the model cannot complete those phases either);
//   - a twin's trace against the correct kernel's schedule diverges at the twin's edit, reported
//     with the kernel's CUDA line and the schedule's .pipe and PTX lines;
//   - edits of a recorded trace (a parity, a barrier address, a lost record) diverge at the
//     edited record.
#include <algorithm>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "sim/ir/parser.h"
#include "sim/trace/event.h"
#include "sim/trace/trace_file.h"
#include "verifier/kernel_trace.h"

namespace parity {
namespace {

using trace::EventKind;
using trace::TraceEvent;

constexpr uint8_t K(EventKind k) { return static_cast<uint8_t>(k); }

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

struct Loaded {
  ir::Program program;
  std::vector<int64_t> params;
  verifier::KernelMap map;
};

Loaded Load(const std::string& name) {
  const std::string path = "traces/import/pipes/" + name + ".pipe";
  const std::string text = Slurp(path);
  Loaded l;
  auto p = ir::ParseProgram(text, path);
  EXPECT_TRUE(p.ok()) << p.status().ToString();
  if (!p.ok()) return l;
  l.program = std::move(p).value();
  auto params = ir::BindParams(l.program, {});
  EXPECT_TRUE(params.ok()) << params.status().ToString();
  if (params.ok()) l.params = *params;
  auto map = verifier::ParseKernelMap(text, path);
  EXPECT_TRUE(map.ok()) << map.status().ToString();
  if (map.ok()) l.map = std::move(map).value();
  return l;
}

trace::TraceFile Native(const std::string& name) {
  auto t = trace::ReadTraceFile("traces/import/native/" + name + ".trace");
  EXPECT_TRUE(t.ok()) << t.status().ToString();
  return t.ok() ? *t : trace::TraceFile{};
}

verifier::KernelReplayResult Replay(const Loaded& l, const trace::TraceFile& t) {
  auto r = verifier::ReplayKernelTrace(l.program, l.params, l.map, t);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? *r : verifier::KernelReplayResult{};
}

struct Kernel {
  std::string name;
  bool hangs;  // a bounded wait of the kernel gave up
};

// The kernels of tests/import that use the trace API and the seeded-bug twins that complete or
// hang on the H100 (traces/import/README.md).
const std::vector<Kernel>& Kernels() {
  static const std::vector<Kernel> k = {
      {"single_tma", false},
      {"ws_pipeline", false},
      {"cluster_pipeline", false},
      {"tma_roundtrip", false},
      {"bulk_roundtrip", false},
      {"cp_async_pipeline", false},
      {"ws_pipeline_bad_tx", true},
      {"ws_pipeline_bad_parity", true},
      {"ws_pipeline_bad_empty", true},
      {"ws_pipeline_early_exit", true},
      {"cluster_pipeline_bad_release", true},
      {"tma_roundtrip_no_wait", false},
      {"cp_async_pipeline_short_wait", false},
  };
  return k;
}

TEST(KernelReplay, EveryKernelTraceReplaysOnItsImportedSchedule) {
  for (const Kernel& k : Kernels()) {
    SCOPED_TRACE(k.name);
    const Loaded l = Load(k.name);
    const trace::TraceFile t = Native(k.name);
    ASSERT_EQ(t.header.source, "kernel");
    const verifier::KernelReplayResult r = Replay(l, t);
    EXPECT_FALSE(r.diverged) << verifier::FormatKernelReplayResult(r, t);
    EXPECT_GT(r.matched, 0u);
    EXPECT_GT(r.barriers_bound + r.addresses_bound, 0u);
    // Every record is matched, summed into a matched one, a confirmed timeout, or a record of
    // a timed-out warp's other lanes.
    EXPECT_EQ(r.matched + r.merged + r.replay.timeouts + r.after_abort, t.events.size());
    if (!k.hangs) {
      EXPECT_EQ(r.after_abort, 0u);
    }
    EXPECT_EQ(r.replay.timeouts > 0, k.hangs);
    if (k.hangs) {
      // The GPU hung where the schedule deadlocks.
      const bool deadlock = r.replay.model_outcome == engine::Outcome::kDeadlock ||
                            r.replay.model_run_on == engine::Outcome::kDeadlock;
      EXPECT_TRUE(deadlock) << verifier::FormatKernelReplayResult(r, t);
    }
  }
}

// The expect_tx twin run 40 times on an H100 (traces/import/bad_tx/, tests/import/bad_tx_batch.sh):
// every run hung, at the first full barrier when each tile was credited whole, further on when
// the first tiles were credited in pieces (their phases completed with half of the tile still
// landing). Every one of the 40 traces replays on the imported schedule, with its timeouts
// confirmed; the later hangs only with the landings the hardware credited in pieces.
TEST(KernelReplay, EveryRunOfTheExpectTxTwinReplays) {
  const Loaded l = Load("ws_pipeline_bad_tx");
  int whole = 0, pieces = 0;
  for (int i = 1; i <= 40; ++i) {
    SCOPED_TRACE(i);
    const std::string path = "traces/import/bad_tx/native/bad_tx." + std::to_string(i) + ".trace";
    auto t = trace::ReadTraceFile(path);
    ASSERT_TRUE(t.ok()) << t.status().ToString();
    const verifier::KernelReplayResult r = Replay(l, *t);
    EXPECT_FALSE(r.diverged) << verifier::FormatKernelReplayResult(r, *t);
    EXPECT_GT(r.replay.timeouts, 0u);  // every run hung
    // A run that hung at the first full barrier has 29 records; the others got further.
    EXPECT_EQ(r.replay.tx_pieces, t->events.size() > 29)
        << verifier::FormatKernelReplayResult(r, *t);
    (r.replay.tx_pieces ? pieces : whole) += 1;
  }
  // Both: the hardware chose, run by run.
  EXPECT_GT(whole, 0);
  EXPECT_GT(pieces, 0);
}

// The kernel's warps are mapped to agents by the schedule's `# kernel:` lines, not by the order
// of its roles: the 2x1 cluster pipeline's trace replays as well on the schedule the importer
// makes now, whose producers of both CTAs are one role reading `cta_rank` (the golden).
TEST(KernelReplay, TraceReplaysOnTheScheduleWithFoldedRoles) {
  const std::string path = "tests/import/golden/cluster_pipeline.pipe";
  const std::string text = Slurp(path);
  ASSERT_NE(text.find("32 * cta_rank"), std::string::npos);
  Loaded l;
  auto p = ir::ParseProgram(text, path);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  l.program = std::move(p).value();
  auto params = ir::BindParams(l.program, {});
  ASSERT_TRUE(params.ok());
  l.params = *params;
  auto map = verifier::ParseKernelMap(text, path);
  ASSERT_TRUE(map.ok()) << map.status().ToString();
  l.map = std::move(map).value();
  const trace::TraceFile t = Native("cluster_pipeline");
  const verifier::KernelReplayResult r = Replay(l, t);
  EXPECT_FALSE(r.diverged) << verifier::FormatKernelReplayResult(r, t);
  EXPECT_EQ(r.matched, t.events.size());
}

// The line of `needle` in the .pipe (1-based), 0 if absent.
int PipeLine(const Loaded& l, const std::string& needle) {
  for (size_t i = 0; i < l.map.lines.size(); ++i) {
    if (l.map.lines[i].find(needle) != std::string::npos) return static_cast<int>(i) + 1;
  }
  return 0;
}

TEST(KernelReplay, TwinWithHalfTheBytesDivergesAtItsExpectTx) {
  const Loaded l = Load("ws_pipeline");
  const trace::TraceFile t = Native("ws_pipeline_bad_tx");
  const verifier::KernelReplayResult r = Replay(l, t);
  ASSERT_TRUE(r.diverged);
  const verifier::KernelDivergence& d = r.divergence;
  EXPECT_EQ(d.observed.kind, K(EventKind::kArriveExpectTx));
  EXPECT_EQ(d.observed.value2, 4096);
  EXPECT_EQ(d.observed.pc, 60);  // ws_pipeline.cu:60, the producer's arrive.expect_tx
  EXPECT_NE(d.reason.find("expect_tx byte count differs"), std::string::npos) << d.reason;
  EXPECT_EQ(d.schedule_at.line, PipeLine(l, "arrive.expect_tx"));
  // The first stage's: the first of the PTX lines the loop's note lists.
  EXPECT_EQ(d.ptx, "ws_pipeline.ptx:348 (ws_pipeline.cu:60)");
  EXPECT_FALSE(d.from_replay);
}

TEST(KernelReplay, TwinWaitingOnTheIterationParityDivergesAtItsWait) {
  const Loaded l = Load("ws_pipeline");
  const trace::TraceFile t = Native("ws_pipeline_bad_parity");
  const verifier::KernelReplayResult r = Replay(l, t);
  ASSERT_TRUE(r.diverged);
  const verifier::KernelDivergence& d = r.divergence;
  EXPECT_EQ(d.observed.kind, K(EventKind::kWaitBegin));
  EXPECT_EQ(d.observed.pc, 69);  // the consumers' BarWait on full[s]
  EXPECT_EQ(d.observed.parity, 1);
  EXPECT_NE(d.reason.find("parity waited on differs"), std::string::npos) << d.reason;
  EXPECT_NE(d.schedule_op.find("wait"), std::string::npos) << d.schedule_op;
  EXPECT_NE(d.ptx.find("ws_pipeline.ptx:"), std::string::npos) << d.ptx;
}

TEST(KernelReplay, TwinReleasingOnlyItsOwnCtaDivergesAtItsRelease) {
  const Loaded l = Load("cluster_pipeline");
  const trace::TraceFile t = Native("cluster_pipeline_bad_release");
  const verifier::KernelReplayResult r = Replay(l, t);
  ASSERT_TRUE(r.diverged);
  const verifier::KernelDivergence& d = r.divergence;
  // CTA 1's consumer releases the stage to itself where the schedule's releases to CTA 0 first.
  EXPECT_EQ(d.observed.kind, K(EventKind::kArrive));
  EXPECT_EQ(d.observed.pc, 74);  // cluster_pipeline.cu:74, the release loop
  EXPECT_EQ(d.observed.cta, 1);
  EXPECT_NE(d.reason.find("target CTA differs"), std::string::npos) << d.reason;
  EXPECT_NE(d.schedule_op.find("arrive smem_16400[0] @cta(0)"), std::string::npos)
      << d.schedule_op;
  EXPECT_EQ(d.ptx, "cluster_pipeline.ptx:157 (cluster_pipeline.cu:74)");
}

// The ws_pipeline trace with one record changed.
verifier::KernelReplayResult Edited(const Loaded& l, trace::TraceFile t, size_t* at,
                                    bool (*edit)(std::vector<TraceEvent>&, size_t*)) {
  EXPECT_TRUE(edit(t.events, at));
  return Replay(l, t);
}

TEST(KernelReplay, EditsOfARecordedTraceDivergeAtTheEditedRecord) {
  const Loaded l = Load("ws_pipeline");
  const trace::TraceFile t = Native("ws_pipeline");
  ASSERT_FALSE(Replay(l, t).diverged);
  size_t at = 0;
  // A consumer waits on the other parity.
  auto r = Edited(l, t, &at, [](std::vector<TraceEvent>& ev, size_t* at) {
    for (size_t i = 0; i < ev.size(); ++i) {
      if (ev[i].kind == K(EventKind::kWaitBegin) && ev[i].agent == 1) {
        ev[i].parity ^= 1;
        *at = i;
        return true;
      }
    }
    return false;
  });
  ASSERT_TRUE(r.diverged);
  EXPECT_EQ(r.divergence.record, at + 1);
  // A consumer waits on the barrier its producer arms next (another barrier than the
  // schedule's): the inits bound every address, so the binding refuses it.
  r = Edited(l, t, &at, [](std::vector<TraceEvent>& ev, size_t* at) {
    uint16_t other = 0;
    for (const TraceEvent& e : ev) {
      if (e.kind == K(EventKind::kInit) && e.value == 2) other = e.index;  // an empty barrier
    }
    for (size_t i = 0; i < ev.size(); ++i) {
      if (ev[i].kind == K(EventKind::kWaitBegin) && ev[i].agent == 2 && other != 0) {
        ev[i].index = other;
        *at = i;
        return true;
      }
    }
    return false;
  });
  ASSERT_TRUE(r.diverged);
  EXPECT_EQ(r.divergence.record, at + 1);
  EXPECT_NE(r.divergence.reason.find("by the kernel's earlier records"), std::string::npos)
      << r.divergence.reason;
  // The producer's last TMA load is lost: the consumers' wait for it cannot end in the model
  // (the order check finds it before the end-of-run check would find the missing operation).
  r = Edited(l, t, &at, [](std::vector<TraceEvent>& ev, size_t* at) {
    for (size_t i = ev.size(); i-- > 0;) {
      if (ev[i].kind == K(EventKind::kTmaIssue)) {
        ev.erase(ev.begin() + static_cast<std::ptrdiff_t>(i));
        *at = i;
        return true;
      }
    }
    return false;
  });
  ASSERT_TRUE(r.diverged);
  EXPECT_TRUE(r.divergence.from_replay) << verifier::FormatKernelReplayResult(r, t);
  EXPECT_EQ(r.divergence.observed.kind, K(EventKind::kWaitEnd));
  EXPECT_GT(r.divergence.record, at);
  EXPECT_NE(r.divergence.reason.find("blocked in the model"), std::string::npos)
      << r.divergence.reason;
}

TEST(KernelReplay, ScheduleWithoutKernelLinesIsBadInput) {
  auto map = verifier::ParseKernelMap("schedule s\nrole p { }\n", "s.pipe");
  ASSERT_FALSE(map.ok());
  EXPECT_EQ(map.status().rule(), "replay.kernel-map");
  auto bad = verifier::ParseKernelMap("# kernel: role p = warps\n", "s.pipe");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().ToString().find("s.pipe:1"), std::string::npos)
      << bad.status().ToString();
}

}  // namespace
}  // namespace parity
