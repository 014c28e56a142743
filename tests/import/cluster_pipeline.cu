// A 2x1-cluster multicast main loop: in each CTA, warp 0 (one elected lane) loads its half of
// every stage's tile with a multicast TMA into both CTAs, so each CTA's full[s] expects both
// halves; warp 1 consumes the stage and releases it to BOTH CTAs (a remote arrive on each CTA's
// empty[s] through mapa), since the next multicast into the slot writes both CTAs' copies. The
// importer tests import the PTX nvcc emits for this kernel and expect it VERIFIED. Written
// against Parity's trace API (gpu/include/parity/trace.cuh).
#include <cuda.h>

#include <cstdint>

#include "gpu/include/parity/trace.cuh"

namespace {

constexpr int kStages = 2;
constexpr uint32_t kHalfBytes = 32 * 64 * 2;
constexpr uint32_t kHalfElems = 32 * 64;

__device__ __forceinline__ uint32_t Smem(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

__device__ __forceinline__ void ClusterSync(uint32_t line = __builtin_LINE()) {
  parity::dev::ClusterSync(line);
}

__device__ __forceinline__ void Wait(uint32_t bar, uint32_t parity,
                                     uint32_t line = __builtin_LINE()) {
  parity::dev::MbarrierWait(bar, parity, line);
}

}  // namespace

extern "C" __global__ void __cluster_dims__(2, 1, 1) __launch_bounds__(64)
    cluster_pipeline(const __grid_constant__ CUtensorMap tmap, int k_tiles, float* out) {
  extern __shared__ __align__(1024) uint8_t smem[];
  uint16_t* tiles = reinterpret_cast<uint16_t*>(smem);
  uint64_t* full = reinterpret_cast<uint64_t*>(smem + kStages * 2 * kHalfBytes);
  uint64_t* empty = full + kStages;
  uint32_t rank;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(rank));
  const int warp = threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  if (threadIdx.x == 0) {
    for (int s = 0; s < kStages; ++s) {
      parity::dev::MbarrierInit(Smem(&full[s]), 1);
      parity::dev::MbarrierInit(Smem(&empty[s]), 2);
    }
    parity::dev::FenceMbarrierInit();
  }
  ClusterSync();
  float acc = 0.0f;
  if (warp == 0) {
    if (lane == 0) {
      for (int k = 0; k < k_tiles; ++k) {
        const int s = k % kStages;
        if (k >= kStages) Wait(Smem(&empty[s]), ((k / kStages) - 1) & 1);
        parity::dev::MbarrierArriveExpectTx(Smem(&full[s]), 2 * kHalfBytes);
        const uint16_t mask = 0x3;
        parity::dev::TmaLoad2dMulticast(Smem(tiles + (2 * s + rank) * kHalfElems), &tmap, 0,
                                        k * 64 + static_cast<int>(rank) * 32, Smem(&full[s]),
                                        mask, kHalfBytes);
      }
    }
  } else {
    for (int k = 0; k < k_tiles; ++k) {
      const int s = k % kStages;
      Wait(Smem(&full[s]), (k / kStages) & 1);
      acc += static_cast<float>(tiles[2 * s * kHalfElems + lane]);
      acc += static_cast<float>(tiles[(2 * s + 1) * kHalfElems + lane]);
      __syncwarp();
      if (lane == 0) {
        for (uint32_t peer = 0; peer < 2; ++peer) {
          parity::dev::MbarrierArriveCluster(Smem(&empty[s]), peer);
        }
      }
    }
  }
  // No CTA exits while its peer may still arrive on its barriers.
  ClusterSync();
  out[(blockIdx.x * blockDim.x + threadIdx.x)] = acc;
}
