// The CUDA programming guide's TMA patterns, written against Parity's trace API
// (gpu/include/parity/trace.cuh): a 2-D tile round trip (a TMA load completing on an mbarrier
// that every thread of the block arrives on, a generic-proxy update of the tile in shared
// memory, the async-proxy fence, a TMA store and a bulk wait_group.read before the block may
// reuse the tile), and the same round trip as 1-D bulk copies (cp.async.bulk) of a contiguous
// array. `parity import` reads the PTX of this file; with PARITY_TRACE the same kernels record
// their operations for `parity replay`.
#include <cuda.h>

#include <cstdint>

#include "gpu/include/parity/trace.cuh"

namespace {

constexpr int kTile = 64;                          // a kTile x kTile tile of u16
constexpr uint32_t kTileBytes = kTile * kTile * 2;
constexpr uint32_t kBulkBytes = 4096;              // the 1-D round trip's bytes

}  // namespace

// Block (128 threads) b moves the tile at (x, y + 64 b), adding one to every element.
extern "C" __global__ void tma_roundtrip(const __grid_constant__ CUtensorMap in,
                                         const __grid_constant__ CUtensorMap out, int x, int y) {
  __shared__ alignas(1024) uint16_t tile[kTile * kTile];
  __shared__ alignas(8) uint64_t bar;
  const uint32_t b = parity::dev::SmemAddr(&bar);
  if (threadIdx.x == 0) {
    parity::dev::MbarrierInit(b, blockDim.x);
    parity::dev::FenceMbarrierInit();
  }
  parity::dev::SyncThreads();
  const int row = y + kTile * static_cast<int>(blockIdx.x);
  if (threadIdx.x == 0) {
    // The leader announces the bytes and issues the copy; its arrive counts as one thread's.
    parity::dev::MbarrierArriveExpectTx(b, kTileBytes);
    parity::dev::TmaLoad2d(parity::dev::SmemAddr(tile), &in, x, row, b, kTileBytes);
  } else {
    parity::dev::MbarrierArrive(b);
  }
  parity::dev::MbarrierWait(b, 0);
  for (int i = threadIdx.x; i < kTile * kTile; i += blockDim.x) tile[i] += 1;
  // The generic writes above become visible to the async proxy before the store reads them.
  parity::dev::FenceProxyAsync();
  parity::dev::SyncThreads();
  if (threadIdx.x == 0) {
    parity::dev::TmaStore2d(&out, x, row, parity::dev::SmemAddr(tile), kTileBytes);
    parity::dev::BulkCommit();
    parity::dev::BulkWaitRead0();
  }
}

// Block b moves kBulkBytes of `src` at b * kBulkBytes to `dst`, adding one to every word.
extern "C" __global__ void bulk_roundtrip(const uint32_t* src, uint32_t* dst) {
  __shared__ alignas(128) uint32_t buf[kBulkBytes / 4];
  __shared__ alignas(8) uint64_t bar;
  const uint32_t b = parity::dev::SmemAddr(&bar);
  if (threadIdx.x == 0) {
    parity::dev::MbarrierInit(b, 1);
    parity::dev::FenceMbarrierInit();
  }
  parity::dev::SyncThreads();
  const size_t base = static_cast<size_t>(blockIdx.x) * (kBulkBytes / 4);
  if (threadIdx.x == 0) {
    parity::dev::MbarrierArriveExpectTx(b, kBulkBytes);
    parity::dev::BulkLoad(parity::dev::SmemAddr(buf), src + base, kBulkBytes, b);
  }
  parity::dev::MbarrierWait(b, 0);
  for (int i = threadIdx.x; i < static_cast<int>(kBulkBytes / 4); i += blockDim.x) buf[i] += 1;
  parity::dev::FenceProxyAsync();
  parity::dev::SyncThreads();
  if (threadIdx.x == 0) {
    parity::dev::BulkStore(dst + base, parity::dev::SmemAddr(buf), kBulkBytes);
    parity::dev::BulkCommit();
    parity::dev::BulkWaitRead0();
  }
}
