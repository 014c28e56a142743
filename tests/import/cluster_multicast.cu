// A 2x1-cluster kernel exercising the PTX forms the importer has to read beyond the basics:
// elect.sync, %cluster_ctarank, mapa, barrier.cluster, fence.proxy.async, multicast TMA with a
// CTA mask, remote mbarrier arrive, st.async, cp.async with commit/wait_group and
// cp.async.mbarrier.arrive, setmaxnreg, and a non-inlined device function (.func + call).
// The importer tests parse the PTX nvcc emits for this kernel.
#include <cuda.h>

#include <cstdint>

namespace {

constexpr uint32_t kTileBytes = 32 * 64 * 2;

__device__ __forceinline__ uint32_t Smem(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

__device__ __forceinline__ uint32_t ClusterRank() {
  uint32_t r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
  return r;
}

__device__ __forceinline__ bool ElectOne() {
  uint32_t pred = 0;
  asm volatile(
      "{\n"
      ".reg .b32 lane;\n"
      ".reg .pred elected;\n"
      "elect.sync lane|elected, 0xffffffff;\n"
      "selp.u32 %0, 1, 0, elected;\n"
      "}\n"
      : "=r"(pred));
  return pred != 0;
}

__device__ __noinline__ uint32_t Checksum(const uint16_t* tile, int n) {
  uint32_t s = 0;
  for (int i = 0; i < n; ++i) s += tile[i];
  return s;
}

}  // namespace

__global__ void __cluster_dims__(2, 1, 1)
    cluster_multicast(const __grid_constant__ CUtensorMap tmap, const uint32_t* src,
                      uint32_t* out) {
  __shared__ alignas(128) uint16_t tile[32 * 64 * 2];
  __shared__ alignas(16) uint32_t staged[128];
  __shared__ alignas(8) uint64_t full;
  __shared__ alignas(8) uint64_t released;
  __shared__ alignas(8) uint64_t copied;
  __shared__ alignas(8) uint32_t mailbox;
  const uint32_t rank = ClusterRank();
  asm volatile("setmaxnreg.inc.sync.aligned.u32 232;" ::: "memory");
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(Smem(&full)), "r"(1) : "memory");
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(Smem(&released)), "r"(2)
                 : "memory");
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(Smem(&copied)), "r"(32)
                 : "memory");
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  asm volatile("barrier.cluster.arrive.release.aligned;\n"
               "barrier.cluster.wait.acquire.aligned;" ::: "memory");
  if (threadIdx.x < 32 && ElectOne()) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(Smem(&full)),
                 "r"(2 * kTileBytes)
                 : "memory");
    const uint16_t mask = 0x3;
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
        ".multicast::cluster [%0], [%1, {%2, %3}], [%4], %5;" ::"r"(
            Smem(tile + rank * 32 * 64)),
        "l"(&tmap), "r"(0), "r"(static_cast<int>(rank) * 32), "r"(Smem(&full)), "h"(mask)
        : "memory");
  }
  if (threadIdx.x < 32) {
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4;" ::"r"(Smem(&staged[threadIdx.x])),
                 "l"(src + threadIdx.x)
                 : "memory");
    asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];" ::"r"(Smem(&copied))
                 : "memory");
    asm volatile("cp.async.commit_group;" ::: "memory");
    asm volatile("cp.async.wait_group 0;" ::: "memory");
  }
  asm volatile(
      "{\n"
      ".reg .pred p;\n"
      "WAIT:\n"
      "mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 p, [%0], 0, 0x989680;\n"
      "@!p bra WAIT;\n"
      "}\n" ::"r"(Smem(&full))
      : "memory");
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  if (threadIdx.x == 0) {
    // Release the tile to both CTAs of the cluster: arrive on each CTA's `released` barrier.
    for (uint32_t peer = 0; peer < 2; ++peer) {
      uint32_t remote;
      asm volatile("mapa.shared::cluster.u32 %0, %1, %2;"
                   : "=r"(remote)
                   : "r"(Smem(&released)), "r"(peer));
      asm volatile("mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%0];" ::"r"(remote)
                   : "memory");
    }
    uint32_t remote_box;
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;"
                 : "=r"(remote_box)
                 : "r"(Smem(&mailbox)), "r"(rank ^ 1));
    uint32_t remote_bar;
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;"
                 : "=r"(remote_bar)
                 : "r"(Smem(&copied)), "r"(rank ^ 1));
    asm volatile("st.async.shared::cluster.mbarrier::complete_tx::bytes.u32 [%0], %1, [%2];" ::"r"(
                     remote_box),
                 "r"(rank), "r"(remote_bar)
                 : "memory");
  }
  out[blockIdx.x * blockDim.x + threadIdx.x] = Checksum(tile, 64) + staged[threadIdx.x % 128];
  asm volatile("barrier.cluster.arrive.release.aligned;\n"
               "barrier.cluster.wait.acquire.aligned;" ::: "memory");
}
