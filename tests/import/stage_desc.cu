// The wgmma addressing of DeepGEMM 54e22612's sm90_bf16_gemm.cuh in a small kernel the importer
// tests run on (written against Parity's trace API, gpu/include/parity/trace.cuh):
// - the math warp group's index comes from `__shfl_sync(0xffffffff, threadIdx.x / 128, 0)`
//   (sm90_bf16_gemm.cuh:213);
// - the shared-memory matrix descriptors are built once, for stage 0, with the start address
//   field `smem >> 4` (mma/sm90.cuh:197-209 make_smem_desc), and their low words are broadcast
//   with __shfl_sync (sm90_bf16_gemm.cuh:217-220);
// - each k-block's descriptors are that low word plus `stage * (bytes per stage / 16)`
//   (sm90_bf16_gemm.cuh:241-242), advanced per wgmma k-step by `(k * 16 * sizeof(bf16)) >> 4`
//   (sm90_bf16_gemm.cuh:261-264, mma/sm90.cuh:239-241 advance_gmma_desc_lo);
// - every math warp's lane 0 releases the stage after wgmma.wait_group 0 (sm90_bf16_gemm.cuh:
//   233-236 empty_barrier_arrive).
// The importer must keep each k-block's stage: a wgmma reads stage k % kStages, not stage 0.
#include <cuda.h>

#include <cstdint>

#include "gpu/include/parity/trace.cuh"

namespace {

constexpr int kStages = 2;
constexpr int kBlockK = 64;
constexpr uint32_t kBytesA = 64 * kBlockK * 2;  // BLOCK_M 64 x BLOCK_K 64, bf16
constexpr uint32_t kBytesB = 8 * kBlockK * 2;   // BLOCK_N 8
constexpr int kMathWarps = 4;

// A wgmma shared-memory matrix descriptor (PTX ISA 9.7.15.5.1): start address >> 4 in bits
// 0-13, leading and stride byte offsets >> 4 in bits 16-29 and 32-45, the swizzle in 62-63.
union Desc {
  uint64_t all;
  struct {
    uint32_t lo;
    uint32_t hi;
  } words;
  struct {
    uint16_t start : 14, : 2;
    uint16_t leading : 14, : 2;
    uint16_t stride : 14, : 2;
    uint8_t : 1, base : 3, : 4;
    uint8_t : 6, layout : 2;
  } bits;
};

__device__ __forceinline__ uint32_t Smem(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

__device__ __forceinline__ Desc MakeDesc(const void* smem) {
  Desc d;
  d.all = 0;
  d.bits.start = Smem(smem) >> 4;
  d.bits.layout = 1;  // 128-byte swizzle
  d.bits.leading = 0;
  d.bits.stride = 1024 >> 4;
  d.bits.base = 0;
  return d;
}

__device__ __forceinline__ void Wgmma(float (&acc)[4], uint64_t a, uint64_t b, int scale_d) {
  asm volatile(
      "{\n"
      ".reg .pred p;\n"
      "setp.ne.b32 p, %6, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16 {%0, %1, %2, %3}, %4, %5, p, 1, 1, 0, "
      "0;\n"
      "}\n"
      : "+f"(acc[0]), "+f"(acc[1]), "+f"(acc[2]), "+f"(acc[3])
      : "l"(a), "l"(b), "r"(scale_d));
}

}  // namespace

extern "C" __global__ void __launch_bounds__(32 * (kMathWarps + 1))
    stage_desc(const __grid_constant__ CUtensorMap tmap_a,
               const __grid_constant__ CUtensorMap tmap_b, uint32_t k_blocks, float* out) {
  extern __shared__ __align__(1024) uint8_t smem[];
  uint8_t* smem_a = smem;
  uint8_t* smem_b = smem + kStages * kBytesA;
  uint64_t* full = reinterpret_cast<uint64_t*>(smem_b + kStages * kBytesB);
  uint64_t* empty = full + kStages;
  const uint32_t warp_idx = __shfl_sync(0xffffffff, threadIdx.x / 32, 0);
  const uint32_t lane_idx = threadIdx.x % 32;
  if (warp_idx == kMathWarps && lane_idx == 0) {
    for (int s = 0; s < kStages; ++s) {
      parity::dev::MbarrierInit(Smem(&full[s]), 1);
      parity::dev::MbarrierInit(Smem(&empty[s]), kMathWarps);
    }
    parity::dev::FenceMbarrierInit();
  }
  parity::dev::SyncThreads();
  if (warp_idx == kMathWarps) {
    if (lane_idx == 0) {
      for (uint32_t k = 0; k < k_blocks; ++k) {
        const uint32_t s = k % kStages;
        parity::dev::MbarrierWait(Smem(&empty[s]), ((k / kStages) & 1) ^ 1);
        parity::dev::MbarrierArriveExpectTx(Smem(&full[s]), kBytesA + kBytesB);
        parity::dev::TmaLoad2d(Smem(smem_a + s * kBytesA), &tmap_a, 0, k * 64, Smem(&full[s]),
                               kBytesA);
        parity::dev::TmaLoad2d(Smem(smem_b + s * kBytesB), &tmap_b, 0, k * 8, Smem(&full[s]),
                               kBytesB);
      }
    }
    return;
  }
  const uint32_t math_wg_idx = __shfl_sync(0xffffffff, threadIdx.x / 128, 0);
  Desc a_desc = MakeDesc(smem_a + math_wg_idx * 64 * kBlockK * 2);
  Desc b_desc = MakeDesc(smem_b);
  const uint32_t a_desc_lo = __shfl_sync(0xffffffff, a_desc.words.lo, 0);
  const uint32_t b_desc_lo = __shfl_sync(0xffffffff, b_desc.words.lo, 0);
  float acc[4] = {0, 0, 0, 0};
  for (uint32_t k = 0; k < k_blocks; ++k) {
    const uint32_t s = k % kStages;
    const uint32_t a_base_lo = a_desc_lo + s * (kBytesA / 16);
    const uint32_t b_base_lo = b_desc_lo + s * (kBytesB / 16);
    parity::dev::MbarrierWait(Smem(&full[s]), (k / kStages) & 1);
    asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
#pragma unroll
    for (int kk = 0; kk < kBlockK / 16; ++kk) {
      a_desc.words.lo = a_base_lo + ((kk * 16 * 2) >> 4);
      b_desc.words.lo = b_base_lo + ((kk * 16 * 2) >> 4);
      Wgmma(acc, a_desc.all, b_desc.all, k > 0 || kk > 0);
    }
    asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
    asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
    if (lane_idx == 0) parity::dev::MbarrierArrive(Smem(&empty[s]));
  }
  out[threadIdx.x] = acc[0] + acc[1] + acc[2] + acc[3];
}
