// A 2x1-cluster multicast main loop: in each CTA, warp 0 (one elected lane) loads its half of
// every stage's tile with a multicast TMA into both CTAs, so each CTA's full[s] expects both
// halves; warp 1 consumes the stage and releases it to BOTH CTAs (a remote arrive on each CTA's
// empty[s] through mapa), since the next multicast into the slot writes both CTAs' copies. The
// importer tests import the PTX nvcc emits for this kernel and expect it VERIFIED.
#include <cuda.h>

#include <cstdint>

namespace {

constexpr int kStages = 2;
constexpr uint32_t kHalfBytes = 32 * 64 * 2;
constexpr uint32_t kHalfElems = 32 * 64;

__device__ __forceinline__ uint32_t Smem(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

__device__ __forceinline__ void ClusterSync() {
  asm volatile("barrier.cluster.arrive.release.aligned;\n"
               "barrier.cluster.wait.acquire.aligned;" ::: "memory");
}

__device__ __forceinline__ void Wait(uint32_t bar, uint32_t parity) {
  asm volatile(
      "{\n"
      ".reg .pred p;\n"
      "LAB_WAIT:\n"
      "mbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\n"
      "@!p bra LAB_WAIT;\n"
      "}\n" ::"r"(bar),
      "r"(parity)
      : "memory");
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
      asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(Smem(&full[s])) : "memory");
      asm volatile("mbarrier.init.shared::cta.b64 [%0], 2;" ::"r"(Smem(&empty[s])) : "memory");
    }
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  ClusterSync();
  float acc = 0.0f;
  if (warp == 0) {
    if (lane == 0) {
      for (int k = 0; k < k_tiles; ++k) {
        const int s = k % kStages;
        if (k >= kStages) Wait(Smem(&empty[s]), ((k / kStages) - 1) & 1);
        asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(
                         Smem(&full[s])),
                     "r"(2 * kHalfBytes)
                     : "memory");
        const uint16_t mask = 0x3;
        asm volatile(
            "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
            ".multicast::cluster [%0], [%1, {%2, %3}], [%4], %5;" ::"r"(
                Smem(tiles + (2 * s + rank) * kHalfElems)),
            "l"(&tmap), "r"(0), "r"(k * 64 + static_cast<int>(rank) * 32), "r"(Smem(&full[s])),
            "h"(mask)
            : "memory");
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
          uint32_t remote;
          asm volatile("mapa.shared::cluster.u32 %0, %1, %2;"
                       : "=r"(remote)
                       : "r"(Smem(&empty[s])), "r"(peer));
          asm volatile("mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%0];" ::"r"(
                           remote)
                       : "memory");
        }
      }
    }
  }
  // No CTA exits while its peer may still arrive on its barriers.
  ClusterSync();
  out[(blockIdx.x * blockDim.x + threadIdx.x)] = acc;
}
