// Hand-built schedules shared by the engine tests and bench/engine_bench: the CUTLASS-style TMA
// multicast main loop (sm90 PipelineTmaAsync), written with ProgramBuilder.
#ifndef PARITY_SIM_TESTING_PIPELINES_H_
#define PARITY_SIM_TESTING_PIPELINES_H_

#include <cstdint>

#include "sim/ir/ir.h"

namespace parity::testing {

struct GemmPipelineShape {
  int64_t cluster_m = 2;
  int64_t cluster_n = 1;
  int64_t clusters = 1;
  int64_t stages = 4;
  int64_t k_tiles = 8;
  int64_t consumers = 1;
  // Bug knobs for negative tests.
  int64_t extra_tx_cta = -1;       // this CTA rank expects one extra A slice of bytes
  int64_t empty_count_delta = 0;   // added to the empty barrier count
  bool producer_parity_starts_at_0 = false;  // the classic wrong starting phase
};

// Tiles: A and B are 128 x 64 f16 (16 KiB) per stage. A is multicast along the CTAs with the same
// cta_x (N of them), B along the CTAs with the same cta_y (M of them); like CUTLASS, every CTA of a
// multicast group issues one slice of the tile to the whole group, so every CTA receives exactly
// A_BYTES + B_BYTES per stage, and its empty barrier needs a release from every CTA of its row
// and column: (cluster_m + cluster_n - 1) * consumers arrivals.
//
//   role producer { if agent == 0 { init full[i], empty[i]; fence.mbarrier_init }
//                   cluster.arrive; cluster.wait
//                   for k { s = k % STAGES; wait empty[s] parity ((k / STAGES) & 1) ^ 1
//                           arrive.expect_tx full[s] bytes A_BYTES + B_BYTES
//                           tma.load tmA ... -> A[s] + cta_y * A_SLICE bar full[s] multicast row
//                           tma.load tmB ... -> B[s] + cta_x * B_SLICE bar full[s] multicast col } }
//   role consumer count CONSUMERS { cluster.arrive; cluster.wait
//                   for k { s; wait full[s] parity (k / STAGES) & 1; use A[s]; use B[s]
//                           arrive empty[s] mask row | col } }
ir::Program GemmPipeline(const GemmPipelineShape& g);

}  // namespace parity::testing

#endif  // PARITY_SIM_TESTING_PIPELINES_H_
