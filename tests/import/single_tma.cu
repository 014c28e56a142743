// One TMA tile load completing on an mbarrier: thread 0 initialises the barrier, arms it with
// the tile's byte count (expect_tx), issues cp.async.bulk.tensor, and every thread waits on
// phase 0 with a try_wait loop. The importer tests parse the PTX nvcc emits for this kernel.
// Written against Parity's trace API (gpu/include/parity/trace.cuh).
#include <cuda.h>

#include <cstdint>

#include "gpu/include/parity/trace.cuh"

namespace {

constexpr uint32_t kTileBytes = 64 * 64 * 2;

__device__ __forceinline__ uint32_t Smem(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

}  // namespace

__global__ void single_tma_load(const __grid_constant__ CUtensorMap tmap, int x, int y,
                                uint16_t* out) {
  __shared__ alignas(128) uint16_t tile[64 * 64];
  __shared__ alignas(8) uint64_t bar;
  const uint32_t bar_addr = Smem(&bar);
  if (threadIdx.x == 0) {
    parity::dev::MbarrierInit(bar_addr, 1);
    parity::dev::FenceMbarrierInit();
  }
  parity::dev::SyncThreads();
  if (threadIdx.x == 0) {
    parity::dev::MbarrierArriveExpectTx(bar_addr, kTileBytes);
    parity::dev::TmaLoad2d(Smem(tile), &tmap, x, y, bar_addr, kTileBytes);
  }
  parity::dev::MbarrierWait(bar_addr, 0);
  out[threadIdx.x] = tile[threadIdx.x];
}
