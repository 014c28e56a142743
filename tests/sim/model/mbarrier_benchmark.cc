// Throughput of the mbarrier transitions on the engine's hot path: one full pipeline stage
// (arrive.expect_tx, two complete_tx, a parity wait) per iteration, i.e. 4 events.
//   bazel run -c opt //tests/sim/model:mbarrier_benchmark
#include "benchmark/benchmark.h"
#include "sim/model/mbarrier.h"

namespace parity::model {
namespace {

void BM_StagePerIteration(benchmark::State& state) {
  MbarrierState s;
  (void)MbarrierInit(s, 1);
  uint32_t parity = 0;
  for (auto _ : state) {
    auto a = MbarrierArriveExpectTx(s, 8192);
    auto c1 = MbarrierCompleteTx(s, 4096);
    auto c2 = MbarrierCompleteTx(s, 4096);
    auto w = MbarrierTryWaitParity(s, parity, false);
    parity ^= 1;
    benchmark::DoNotOptimize(a);
    benchmark::DoNotOptimize(c1);
    benchmark::DoNotOptimize(c2);
    benchmark::DoNotOptimize(w);
  }
  state.SetItemsProcessed(state.iterations() * 4);
}
BENCHMARK(BM_StagePerIteration);

}  // namespace
}  // namespace parity::model
