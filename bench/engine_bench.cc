// Engine throughput: events per second on one core for a large schedule.
//
// The schedule is the CUTLASS-style TMA multicast main loop (sim/testing/pipelines.h):
// 132 CTAs in 2x1 clusters (66 clusters, the H100 SXM SM count), 4 stages, 1000 k-tiles, one
// producer (expect_tx + two TMA loads per k-tile, B multicast to both CTAs) and one consumer per
// CTA. The engine is created once; every iteration copies the pristine engine (which reuses the
// destination's vectors, trace capacity included) and runs it to completion, so the timed loop
// measures the step path, not allocation.
//
//   bazel run -c opt //bench:engine_bench
#include <cstdint>
#include <vector>

#include "benchmark/benchmark.h"
#include "sim/engine/engine.h"
#include "sim/testing/pipelines.h"

namespace parity::engine {
namespace {

ir::Program BigPipeline() {
  testing::GemmPipelineShape g;
  g.cluster_m = 2;
  g.cluster_n = 1;
  g.clusters = 66;
  g.stages = 4;
  g.k_tiles = 1000;
  g.consumers = 1;
  return testing::GemmPipeline(g);
}

void RunBench(benchmark::State& state, Policy policy, bool record) {
  static const ir::Program program = BigPipeline();
  std::vector<int64_t> params;
  for (const auto& p : program.params) params.push_back(p.default_value);
  EngineOptions o;
  o.policy = policy;
  o.seed = 1;
  o.record_trace = record;
  auto created = Engine::Create(program, params, o);
  if (!created.ok()) {
    state.SkipWithError(created.status().ToString().c_str());
    return;
  }
  const Engine pristine = *created;
  Engine e = pristine;
  e.Run();  // warm-up: grows the trace and in-flight vectors once
  uint64_t events = 0;
  for (auto _ : state) {
    e = pristine;
    RunResult r = e.Run();
    if (r.outcome != Outcome::kCompleted) {
      state.SkipWithError(OutcomeName(r.outcome));
      return;
    }
    events += r.events;
    benchmark::DoNotOptimize(e.trace().data());
  }
  state.counters["events/s"] = benchmark::Counter(static_cast<double>(events),
                                                  benchmark::Counter::kIsRate);
  state.counters["events/run"] =
      benchmark::Counter(static_cast<double>(events) / static_cast<double>(state.iterations()));
}

void BM_Eager(benchmark::State& s) { RunBench(s, Policy::kEager, true); }
void BM_EagerNoTrace(benchmark::State& s) { RunBench(s, Policy::kEager, false); }
void BM_Lazy(benchmark::State& s) { RunBench(s, Policy::kLazy, true); }
void BM_RoundRobin(benchmark::State& s) { RunBench(s, Policy::kRoundRobin, true); }
void BM_Random(benchmark::State& s) { RunBench(s, Policy::kRandom, true); }

BENCHMARK(BM_Eager)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_EagerNoTrace)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Lazy)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_RoundRobin)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Random)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace parity::engine

BENCHMARK_MAIN();
