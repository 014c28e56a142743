// The launch and dispatch idioms of CUTLASS 7107b055's Hopper warp-specialised GEMMs, in a small
// kernel the importer tests run on (written against Parity's trace API,
// gpu/include/parity/trace.cuh):
// - the kernel takes one by-value `__grid_constant__` Params struct (device_kernel.h:118), whose
//   CUtensorMap sits at a 128-byte-aligned offset and whose scalar fields are read with
//   `ld.param [param_0+OFFSET]`;
// - warp and warp-group indices come from `__shfl_sync(0xffffffff, threadIdx.x / 32, 0)`
//   (cutlass.h:127-133 canonical_warp_idx_sync, :149-155 canonical_warp_group_idx) and the roles
//   branch on them (sm90_gemm_tma_warpspecialized_cooperative.hpp:402-408);
// - one lane per warp is chosen with elect.sync (cute/arch/cluster_sm90.hpp:180-194
//   elect_one_sync);
// - a persistent tile loop runs from blockIdx.x while the linear tile index is below the
//   scheduler's tile count, advancing by the grid size (static_tile_scheduler.hpp:141-170, 192);
// - a tile's group comes from a warp-wide prefix sum with __shfl_up_sync, a __ballot_sync of the
//   lanes whose group holds the tile, __ffs and a __shfl_sync from that lane
//   (sm90_tile_scheduler_group.hpp:366-380), and the group's k-tile count is the mainloop's trip
//   count.
// Warp group 0's first warp produces (one elected lane issues the TMA loads); warp groups 1 and 2
// consume, one elected lane of each group's first warp releasing a stage once the group's four
// warps have all read it (a named barrier per group stands for the warpgroup-wide wgmma wait of
// the real consumer; without it a warp that never arrives could fall a whole ring behind).
#include <cuda.h>

#include <cstdint>

#include "gpu/include/parity/trace.cuh"

namespace {

constexpr int kStages = 3;
constexpr int kMaxGroups = 4;
constexpr uint32_t kTileBytes = 64 * 64 * 2;

struct Params {
  uint32_t groups;                        // +0
  uint32_t tiles_per_group[kMaxGroups];   // +4
  uint32_t k_tiles_of_group[kMaxGroups];  // +20
  uint64_t total_tiles;                   // +40
  alignas(128) CUtensorMap tmap_a;        // +128
};

__device__ __forceinline__ uint32_t Smem(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

__device__ __forceinline__ int WarpIdxSync() {
  return __shfl_sync(0xffffffff, threadIdx.x / 32, 0);
}
__device__ __forceinline__ int WarpGroupIdx() {
  return __shfl_sync(0xffffffff, threadIdx.x / 128, 0);
}

__device__ __forceinline__ bool ElectOneSync() {
  uint32_t pred = 0;
  asm volatile(
      "{\n"
      ".reg .b32 rx;\n"
      ".reg .pred px;\n"
      "  elect.sync rx|px, %1;\n"
      "@px mov.s32 %0, 1;\n"
      "}\n"
      : "+r"(pred)
      : "r"(0xffffffff));
  return pred != 0;
}

// The k-tile count of the group that holds linear tile `tile`: every lane holds one group's tile
// count, an inclusive prefix sum gives each group's end, the first lane whose end lies past the
// tile owns it.
__device__ __forceinline__ uint32_t KTilesOfTile(const Params& p, uint32_t tile) {
  const int lane = threadIdx.x % 32;
  const uint32_t mine = lane < static_cast<int>(p.groups) && lane < kMaxGroups
                            ? p.tiles_per_group[lane & (kMaxGroups - 1)]
                            : 0;
  uint32_t end = mine;
#pragma unroll
  for (int i = 1; i < 32; i *= 2) {
    const uint32_t n = __shfl_up_sync(0xffffffff, end, i);
    end = lane >= i ? end + n : end;
  }
  const uint32_t owners = __ballot_sync(0xffffffff, tile < end && mine != 0);
  const int first = __ffs(owners) - 1;
  const uint32_t k = lane < kMaxGroups ? p.k_tiles_of_group[lane & (kMaxGroups - 1)] : 0;
  return __shfl_sync(0xffffffff, k, first < 0 ? 0 : first);
}

}  // namespace

extern "C" __global__ void __launch_bounds__(384)
    persistent_struct(const __grid_constant__ Params params) {
  extern __shared__ __align__(1024) uint8_t smem[];
  uint64_t* full = reinterpret_cast<uint64_t*>(smem + kStages * kTileBytes);
  uint64_t* empty = full + kStages;
  const int warp_idx = WarpIdxSync();
  const int warp_group = WarpGroupIdx();
  const int warp_in_group = warp_idx % 4;
  const bool elected = ElectOneSync();
  if (warp_idx == 0 && elected) {
    for (int s = 0; s < kStages; ++s) {
      parity::dev::MbarrierInit(Smem(&full[s]), 1);
      parity::dev::MbarrierInit(Smem(&empty[s]), 2);
    }
    parity::dev::FenceMbarrierInit();
  }
  parity::dev::SyncThreads();
  uint32_t iter = 0;
  for (uint64_t tile = blockIdx.x; tile < params.total_tiles; tile += gridDim.x) {
    const uint32_t k_tiles = KTilesOfTile(params, static_cast<uint32_t>(tile));
    if (warp_group == 0) {
      if (warp_in_group == 0 && elected) {
        for (uint32_t k = 0; k < k_tiles; ++k, ++iter) {
          const uint32_t s = iter % kStages;
          parity::dev::MbarrierWait(Smem(&empty[s]), ((iter / kStages) & 1) ^ 1);
          parity::dev::MbarrierArriveExpectTx(Smem(&full[s]), kTileBytes);
          parity::dev::TmaLoad2d(Smem(smem + s * kTileBytes), &params.tmap_a, k * 64,
                                 static_cast<int>(tile) * 64, Smem(&full[s]), kTileBytes);
        }
      } else {
        iter += k_tiles;
      }
    } else {
      for (uint32_t k = 0; k < k_tiles; ++k, ++iter) {
        const uint32_t s = iter % kStages;
        parity::dev::MbarrierWait(Smem(&full[s]), (iter / kStages) & 1);
        asm volatile("bar.sync %0, 128;" ::"r"(warp_group) : "memory");
        if (warp_in_group == 0 && elected) parity::dev::MbarrierArrive(Smem(&empty[s]));
      }
    }
  }
}
