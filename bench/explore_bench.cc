// bench/explore_bench: the explorer's throughput (stored states per second on one core), bytes per
// stored state and the reduction factor (states without reduction / states with), on the
// 2-producer 2-consumer 4-stage ring (sim/examples/explore/ring_2p2c.pipe) and on the 2x2
// multicast GEMM main loop (sim/examples/gemm_tma_multicast_2x2.pipe).
//   bazel run -c opt //bench:explore_bench -- [--gemm-seconds S]
// Each search has a time bound; a search that hits it is reported as incomplete, and its
// reduction factor as a lower bound.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "sim/ir/ir.h"
#include "sim/ir/parser.h"
#include "verifier/explore.h"

namespace {

using parity::verifier::Explore;
using parity::verifier::ExploreOptions;
using parity::verifier::ExploreResult;
using parity::verifier::ExploreVerdict;
using parity::verifier::ExploreVerdictName;

void Line(const char* what, const ExploreResult& r) {
  std::printf("  %-22s %-10s %10llu states %8.3f s %10.0f states/s %6.1f B/state depth %u\n", what,
              ExploreVerdictName(r.verdict), static_cast<unsigned long long>(r.stats.states),
              r.stats.seconds, r.stats.states_per_second(), r.stats.bytes_per_state(),
              r.stats.depth);
}

int Bench(const char* title, const std::string& path,
          const std::vector<std::pair<std::string, int64_t>>& defs, double seconds) {
  auto p = parity::ir::ParseFile(path);
  if (!p.ok()) {
    std::fprintf(stderr, "%s\n", p.status().ToString().c_str());
    return 2;
  }
  auto v = parity::ir::BindParams(*p, defs);
  if (!v.ok()) {
    std::fprintf(stderr, "%s\n", v.status().ToString().c_str());
    return 2;
  }
  std::printf("%s\n", title);
  ExploreOptions o;
  o.time_limit_s = seconds;
  o.stop_at_first = false;
  const ExploreResult red = Explore(*p, *v, o);
  Line("with reduction", red);
  o.reduction = false;
  const ExploreResult full = Explore(*p, *v, o);
  Line("without reduction", full);
  std::printf("  reduction factor %.2fx%s (transitions: %llu taken of %llu enabled)\n",
              double(full.stats.states) / double(red.stats.states ? red.stats.states : 1),
              full.verdict == ExploreVerdict::kIncomplete ? " (at least; unreduced incomplete)"
              : red.verdict == ExploreVerdict::kIncomplete ? " (reduced search incomplete)"
                                                           : "",
              static_cast<unsigned long long>(red.stats.transitions),
              static_cast<unsigned long long>(red.stats.enabled));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  double gemm_seconds = 30;
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::strcmp(argv[i], "--gemm-seconds") == 0) gemm_seconds = std::atof(argv[i + 1]);
  }
  // bazel run: the runfiles tree holds the schedules under their workspace paths.
  int rc = Bench("ring_2p2c: 2 producers, 2 consumers, 4 stages, 8 k-tiles, 1 CTA",
                 "sim/examples/explore/ring_2p2c.pipe", {}, 120);
  rc |= Bench("gemm_tma_multicast_2x2: STAGES=1 K_TILES=1 CONSUMERS=1",
              "sim/examples/gemm_tma_multicast_2x2.pipe",
              {{"STAGES", 1}, {"K_TILES", 1}, {"CONSUMERS", 1}}, gemm_seconds);
  return rc;
}
