// A PTX reader fixture (tests/import/ptx_reader_test.cc) in hand-written inline assembly, for the
// forms it exercises (an inline asm block whose labels repeat in every inlined copy). A warp-
// specialised multi-stage producer/consumer: warp 0 (one elected lane) is the producer, loading one
// TMA tile per k-iteration into stage k % kStages after waiting on that stage's `empty` barrier;
// warps 1..kConsumers consume a stage once its `full` barrier completes and then release it by
// arriving on `empty` (one arrival per consumer warp). Barriers and tiles live in dynamic shared
// memory. The importer tests parse the PTX nvcc emits for this kernel.
#include <cuda.h>

#include <cstdint>

namespace {

constexpr int kStages = 4;
constexpr int kConsumers = 2;
constexpr uint32_t kTileBytes = 64 * 64 * 2;

__device__ __forceinline__ uint32_t Smem(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

__device__ __forceinline__ void BarInit(uint32_t bar, uint32_t count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(bar), "r"(count) : "memory");
}

__device__ __forceinline__ void BarWait(uint32_t bar, uint32_t parity) {
  asm volatile(
      "{\n"
      ".reg .pred p;\n"
      "LAB_WAIT:\n"
      "mbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\n"
      "@p bra DONE;\n"
      "bra LAB_WAIT;\n"
      "DONE:\n"
      "}\n" ::"r"(bar),
      "r"(parity)
      : "memory");
}

__device__ __forceinline__ void BarArrive(uint32_t bar) {
  asm volatile("mbarrier.arrive.release.cta.shared::cta.b64 _, [%0];" ::"r"(bar) : "memory");
}

}  // namespace

extern "C" __global__ void __launch_bounds__(32 * (1 + kConsumers))
    ws_pipeline(const __grid_constant__ CUtensorMap tmap, int k_tiles, float* out) {
  extern __shared__ __align__(1024) uint8_t smem[];
  uint16_t* tiles = reinterpret_cast<uint16_t*>(smem);
  uint64_t* full = reinterpret_cast<uint64_t*>(smem + kStages * kTileBytes);
  uint64_t* empty = full + kStages;
  const int warp = threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  if (threadIdx.x == 0) {
    for (int s = 0; s < kStages; ++s) {
      BarInit(Smem(&full[s]), 1);
      BarInit(Smem(&empty[s]), kConsumers);
    }
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  __syncthreads();
  if (warp == 0) {
    if (lane == 0) {
      for (int k = 0; k < k_tiles; ++k) {
        const int s = k % kStages;
        if (k >= kStages) BarWait(Smem(&empty[s]), ((k / kStages) - 1) & 1);
        asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(
                         Smem(&full[s])),
                     "r"(kTileBytes)
                     : "memory");
        asm volatile(
            "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
            " [%0], [%1, {%2, %3}], [%4];" ::"r"(Smem(tiles + s * 64 * 64)),
            "l"(&tmap), "r"(0), "r"(k * 64), "r"(Smem(&full[s]))
            : "memory");
      }
    }
  } else {
    float acc = 0.0f;
    for (int k = 0; k < k_tiles; ++k) {
      const int s = k % kStages;
      BarWait(Smem(&full[s]), (k / kStages) & 1);
      acc += static_cast<float>(tiles[s * 64 * 64 + lane]) * 0.5f;
      __syncwarp();
      if (lane == 0) BarArrive(Smem(&empty[s]));
    }
    out[threadIdx.x] = acc;
  }
}
