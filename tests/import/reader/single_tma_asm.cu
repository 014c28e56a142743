// A PTX reader fixture (tests/import/ptx_reader_test.cc) in hand-written inline assembly, for the
// forms it exercises (a try_wait loop on a named predicate in a `{ }` scope). One TMA tile load
// completing on an mbarrier: thread 0 initialises the barrier, arms it with the tile's byte count
// (expect_tx), issues cp.async.bulk.tensor, and every thread waits on phase 0 with a try_wait loop.
// The importer tests parse the PTX nvcc emits for this kernel.
#include <cuda.h>

#include <cstdint>

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
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(bar_addr), "r"(1) : "memory");
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar_addr),
                 "r"(kTileBytes)
                 : "memory");
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
        " [%0], [%1, {%2, %3}], [%4];" ::"r"(Smem(tile)),
        "l"(&tmap), "r"(x), "r"(y), "r"(bar_addr)
        : "memory");
  }
  asm volatile(
      "{\n"
      ".reg .pred done;\n"
      "WAIT_%=:\n"
      "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
      "@!done bra WAIT_%=;\n"
      "}\n" ::"r"(bar_addr),
      "r"(0)
      : "memory");
  out[threadIdx.x] = tile[threadIdx.x];
}
