// Holds the committed H100 traces of the bundled examples (traces/h100/, recorded with
// //gpu:parity_gpu, see traces/h100/README.md) against the simulator, on the CPU:
// - every trace is a valid source="h100" trace of the current schedule (same content hash);
// - correct examples: the simulator completes; per barrier (CTA, name, index) the H100 trace's
//   arrivals divided by the init count equal the simulator's kPhaseComplete count, and the
//   hardware's end-of-run probe (mbarrier.test_wait.parity 0: the current phase bit) agrees with
//   that count's parity; every `use` read pattern data, as many uses as in the simulator;
// - broken examples: the simulator deadlocks, and the barrier named by the H100's first expired
//   wait (the run's hang report) is the barrier of the simulator's primary deadlock entry
//   (verifier/deadlock.h); the CTA each side names is printed (it may differ: every CTA hangs).
#include <cstdio>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "gpu/executor.h"
#include "gtest/gtest.h"
#include "sim/engine/engine.h"
#include "sim/ir/hash.h"
#include "sim/ir/ir.h"
#include "sim/ir/parser.h"
#include "sim/trace/event.h"
#include "sim/trace/trace_file.h"
#include "verifier/deadlock.h"

namespace parity {
namespace {

using trace::EventKind;
using trace::TraceEvent;
using Key = std::tuple<uint32_t, uint32_t, uint32_t>;  // target CTA, barrier, index

struct Loaded {
  ir::Program program;
  std::vector<int64_t> params;
  trace::TraceFile h100;
  engine::RunResult sim;
  std::vector<TraceEvent> sim_events;
  std::unique_ptr<engine::Engine> engine;
};

Loaded Load(const std::string& name) {
  Loaded l;
  Expected<ir::Program> p = ir::ParseFile("sim/examples/" + name + ".pipe");
  EXPECT_TRUE(p.ok()) << p.status().ToString();
  l.program = *p;
  Expected<std::vector<int64_t>> params = ir::BindParams(l.program, {});
  EXPECT_TRUE(params.ok());
  l.params = *params;
  Expected<trace::TraceFile> t = trace::ReadTraceFile("traces/h100/" + name + ".trace");
  EXPECT_TRUE(t.ok()) << t.status().ToString();
  l.h100 = *t;
  Expected<engine::Engine> e = engine::Engine::Create(l.program, l.params, {});
  EXPECT_TRUE(e.ok()) << e.status().ToString();
  l.engine = std::make_unique<engine::Engine>(std::move(e).value());
  l.sim = l.engine->Run();
  l.sim_events = l.engine->trace();
  return l;
}

bool Is(const TraceEvent& e, EventKind k) { return e.kind == static_cast<uint8_t>(k); }

void CheckHeader(const Loaded& l) {
  EXPECT_EQ(l.h100.header.source, "h100");
  EXPECT_NE(l.h100.header.device.find("H100"), std::string::npos) << l.h100.header.device;
  EXPECT_EQ(l.h100.header.schedule, l.program.name);
  EXPECT_EQ(l.h100.header.schedule_hash, ir::ContentHash(l.program))
      << "the schedule changed since the H100 trace was recorded: re-record (traces/h100/README.md)";
  ASSERT_EQ(l.h100.header.params.size(), l.program.params.size());
  for (size_t k = 0; k < l.params.size(); ++k) EXPECT_EQ(l.h100.header.params[k].second, l.params[k]);
}

void CheckCorrect(const std::string& name) {
  SCOPED_TRACE(name);
  Loaded l = Load(name);
  CheckHeader(l);
  ASSERT_EQ(l.sim.outcome, engine::Outcome::kCompleted);

  std::map<Key, int64_t> sim_completions, init_count, arrivals, probe;
  size_t sim_uses = 0, gpu_uses = 0;
  for (const TraceEvent& e : l.sim_events) {
    if (Is(e, EventKind::kPhaseComplete)) ++sim_completions[{e.target_cta, e.object, e.index}];
    if (Is(e, EventKind::kUse)) ++sim_uses;
  }
  for (const TraceEvent& e : l.h100.events) {
    const Key k{e.target_cta, e.object, e.index};
    if (Is(e, EventKind::kInit)) init_count[k] = e.value;
    if (Is(e, EventKind::kArrive) || Is(e, EventKind::kArriveExpectTx)) arrivals[k] += e.value;
    if (Is(e, EventKind::kTestWait) && e.pc == gpu::kProbePc) probe[k] = e.value;
    if (Is(e, EventKind::kUse)) {
      ++gpu_uses;
      EXPECT_EQ(e.flags & gpu::kFlagDataBad, 0) << "a use read bytes that are not pattern data";
    }
    EXPECT_FALSE(Is(e, EventKind::kWaitTimeout));
  }
  EXPECT_EQ(gpu_uses, sim_uses);
  ASSERT_FALSE(init_count.empty());
  for (const auto& [k, count] : init_count) {
    ASSERT_GT(count, 0);
    const int64_t gpu_completions = arrivals[k] / count;
    EXPECT_EQ(arrivals[k] % count, 0) << "a phase left incomplete";
    const auto sim_it = sim_completions.find(k);
    const int64_t sim_n = sim_it == sim_completions.end() ? 0 : sim_it->second;
    EXPECT_EQ(gpu_completions, sim_n) << "barrier " << l.program.barriers[std::get<1>(k)].name << "["
                                      << std::get<2>(k) << "] of CTA " << std::get<0>(k);
    ASSERT_TRUE(probe.count(k)) << "no end-of-run probe of an initialised barrier";
    EXPECT_EQ(probe[k], gpu_completions % 2) << "the hardware phase bit disagrees";
  }
  for (const auto& [k, n] : sim_completions) EXPECT_TRUE(init_count.count(k)) << "sim-only barrier";
}

void CheckBroken(const std::string& name) {
  SCOPED_TRACE(name);
  Loaded l = Load(name);
  CheckHeader(l);
  ASSERT_EQ(l.sim.outcome, engine::Outcome::kDeadlock);
  const verifier::DeadlockReport report = verifier::DiagnoseDeadlock(l.program, *l.engine, l.sim);
  ASSERT_LT(report.primary, report.blocked.size());
  const engine::BlockedAgent& sim_primary = report.blocked[report.primary].blocked;

  // The H100's hang report: every agent's wait that expired (its own budget) or was still
  // blocked when the first expiry aborted the run. Which one expires first is a race between
  // waits that began within a microsecond of each other (the executor's agents reach their waits
  // that fast), so the test holds the whole set against the simulator, not the first one.
  using Wait = std::tuple<uint32_t, uint32_t, uint32_t, uint32_t>;  // CTA, barrier, index, parity
  std::set<Wait> expired, gpu_blocked;
  const TraceEvent* first = nullptr;
  size_t timeouts = 0;
  for (const TraceEvent& e : l.h100.events) {
    if (!Is(e, EventKind::kWaitTimeout)) continue;
    ++timeouts;
    const Wait w{e.cta, e.object, e.index, e.parity};
    gpu_blocked.insert(w);
    if ((e.flags & gpu::kFlagAborted) == 0) {
      expired.insert(w);
      if (first == nullptr) first = &e;
    }
  }
  ASSERT_NE(first, nullptr) << "no expired wait in the H100 trace";
  // Every agent left: the producer and both consumers of each of the 4 CTAs.
  EXPECT_EQ(timeouts, 12u);
  const std::string sim_name = l.program.barriers[sim_primary.barrier].name + "[" +
                               std::to_string(sim_primary.barrier_index) + "]";
  const std::string gpu_name =
      l.program.barriers[first->object].name + "[" + std::to_string(first->index) + "]";
  std::printf("%s: simulator primary %s parity %u in CTA %u (%s); H100: %zu expired waits, first %s "
              "parity %u in CTA %u agent %u\n",
              name.c_str(), sim_name.c_str(), sim_primary.parity, sim_primary.cta,
              verifier::DeadlockCauseName(report.blocked[report.primary].cause), expired.size(),
              gpu_name.c_str(), first->parity, first->cta, first->agent);
  // The simulator's diagnosis is a wait the H100 saw expire: same barrier, CTA and parity.
  EXPECT_TRUE(expired.count(Wait{sim_primary.cta, sim_primary.barrier, sim_primary.barrier_index,
                                 sim_primary.parity}))
      << "the H100 did not report the diagnosed wait " << sim_name << " parity " << sim_primary.parity
      << " of CTA " << sim_primary.cta << " as expired";
  // And every wait the H100 reports blocked is one the simulator's deadlock has blocked.
  std::set<Wait> sim_blocked;
  for (const auto& b : report.blocked) {
    sim_blocked.insert(Wait{b.blocked.cta, b.blocked.barrier, b.blocked.barrier_index, b.blocked.parity});
  }
  for (const Wait& w : gpu_blocked) {
    EXPECT_TRUE(sim_blocked.count(w)) << "the H100 reports a wait blocked that the simulator does not: "
                                      << l.program.barriers[std::get<1>(w)].name << "[" << std::get<2>(w)
                                      << "] parity " << std::get<3>(w) << " of CTA " << std::get<0>(w);
  }
}

TEST(H100Traces, SingleTmaLoad) { CheckCorrect("single_tma_load"); }
TEST(H100Traces, GemmTmaMulticast2x2) { CheckCorrect("gemm_tma_multicast_2x2"); }
TEST(H100Traces, GemmEmptyCountHigh) { CheckBroken("gemm_empty_count_high"); }
TEST(H100Traces, GemmTxOvercount) { CheckBroken("gemm_tx_overcount"); }
TEST(H100Traces, GemmWrongProducerPhase) { CheckBroken("gemm_wrong_producer_phase"); }

}  // namespace
}  // namespace parity
