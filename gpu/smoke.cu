// gpu/smoke: the smallest end-to-end TMA program (issue 2). One thread initialises an mbarrier
// (count 1), fences the init, arms it with arrive.expect_tx(tile bytes), issues one 2-D
// cp.async.bulk.tensor load through a __grid_constant__ tensor map and waits on parity 0 with a
// clock64 budget. The CTA then checks every byte of the tile in shared memory against the global
// pattern. Exit status: 0 pass, 1 data mismatch or timeout, 2 CUDA error.
//
// The tile is unswizzled (CU_TENSOR_MAP_SWIZZLE_NONE), so the expected layout is simply the box
// rows packed densely, row-major: smem[r * kBoxW + c] = global[(y0 + r) * kWidth + x0 + c].
#include <cstdint>
#include <cstdio>
#include <vector>

#include "gpu/host.cuh"
#include "gpu/ptx.cuh"

namespace parity::gpu {
namespace {

namespace ptx = parity::gpu::ptx;

constexpr uint32_t kWidth = 256;   // global tensor, elements (u32) per row
constexpr uint32_t kHeight = 128;  // rows
constexpr uint32_t kBoxW = 32;     // box: 32 x u32 = 128 bytes per row
constexpr uint32_t kBoxH = 16;
constexpr uint32_t kTileBytes = kBoxW * kBoxH * sizeof(uint32_t);
constexpr int32_t kX0 = 64;  // box origin (element coordinates)
constexpr int32_t kY0 = 40;
constexpr long long kWaitBudgetCycles = 2'000'000'000LL;  // ~1 s at H100 clocks
constexpr int kThreads = 128;

__host__ __device__ constexpr uint32_t Pattern(uint32_t x, uint32_t y) {
  return (y << 16) ^ (x * 2654435761u) ^ 0x5A5A0000u;
}

struct SmokeResult {
  uint32_t completed;     // the phase-0 wait succeeded
  uint32_t mismatches;    // tile words that differ from the pattern
  uint32_t first_bad;     // index of the first mismatching word (kTileBytes/4 if none)
  uint32_t smem_address;  // shared-window address of the tile
  long long wait_cycles;  // clock64 cycles from issue to completion (or to the timeout)
};

__global__ void SmokeKernel(const __grid_constant__ CUtensorMap tmap, SmokeResult* result) {
  __shared__ alignas(1024) uint32_t tile[kBoxW * kBoxH];
  __shared__ alignas(8) uint64_t bar;
  __shared__ uint32_t completed;

  const ptx::SmemAddr tile_addr = ptx::SmemAddress(tile);
  const ptx::SmemAddr bar_addr = ptx::SmemAddress(&bar);

  // Poison the destination so that an unwritten word cannot pass.
  for (uint32_t i = threadIdx.x; i < kBoxW * kBoxH; i += blockDim.x) tile[i] = 0xDEADBEEFu;
  ptx::FenceProxyAsyncSharedCta();  // generic writes above before the async-proxy writes below
  __syncthreads();

  if (threadIdx.x == 0) {
    ptx::MbarrierInit(bar_addr, 1);
    ptx::FenceMbarrierInit();
    const long long t0 = clock64();
    ptx::MbarrierArriveExpectTx(bar_addr, kTileBytes);
    ptx::TmaLoad2D(tile_addr, &tmap, bar_addr, kX0, kY0);
    long long cycles = 0;
    const bool done = ptx::WaitParityBounded(bar_addr, 0, kWaitBudgetCycles, &cycles);
    completed = done ? 1u : 0u;
    result->completed = completed;
    result->wait_cycles = clock64() - t0;
    result->smem_address = tile_addr;
    result->mismatches = 0;
    result->first_bad = kBoxW * kBoxH;
  }
  __syncthreads();
  if (completed == 0) return;  // timeout: nothing to check (recorded above)

  // Every thread checks its words; the mbarrier's acquire (try_wait) plus __syncthreads makes the
  // TMA's writes visible to all threads.
  for (uint32_t i = threadIdx.x; i < kBoxW * kBoxH; i += blockDim.x) {
    const uint32_t want = Pattern(kX0 + i % kBoxW, kY0 + i / kBoxW);
    if (tile[i] != want) {
      atomicAdd(&result->mismatches, 1u);
      atomicMin(&result->first_bad, i);
    }
  }
  __syncthreads();
  if (threadIdx.x == 0) ptx::MbarrierInval(bar_addr);
}

int Main() {
  int device = 0;
  PARITY_CUDA_CHECK(cudaGetDevice(&device));
  cudaDeviceProp prop{};
  PARITY_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  int driver = 0;
  int runtime = 0;
  PARITY_CUDA_CHECK(cudaDriverGetVersion(&driver));
  PARITY_CUDA_CHECK(cudaRuntimeGetVersion(&runtime));
  std::printf("device: %s (sm_%d%d), driver %d, runtime %d\n", prop.name, prop.major, prop.minor,
              driver, runtime);
  if (prop.major != 9) {
    std::fprintf(stderr, "smoke: needs a Hopper GPU (sm_90), found sm_%d%d\n", prop.major,
                 prop.minor);
    return kExitCudaError;
  }

  std::vector<uint32_t> host(kWidth * kHeight);
  for (uint32_t y = 0; y < kHeight; ++y)
    for (uint32_t x = 0; x < kWidth; ++x) host[y * kWidth + x] = Pattern(x, y);
  uint32_t* global = nullptr;
  PARITY_CUDA_CHECK(cudaMalloc(&global, host.size() * sizeof(uint32_t)));
  PARITY_CUDA_CHECK(
      cudaMemcpy(global, host.data(), host.size() * sizeof(uint32_t), cudaMemcpyHostToDevice));

  CUtensorMap tmap{};
  const cuuint64_t dims[2] = {kWidth, kHeight};
  const cuuint64_t strides[1] = {kWidth * sizeof(uint32_t)};
  const cuuint32_t box[2] = {kBoxW, kBoxH};
  const cuuint32_t elem_strides[2] = {1, 1};
  const CUresult enc = GetTensorMapEncodeTiled()(
      &tmap, CU_TENSOR_MAP_DATA_TYPE_UINT32, 2, global, dims, strides, box, elem_strides,
      CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_L2_PROMOTION_NONE,
      CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (enc != CUDA_SUCCESS) {
    std::fprintf(stderr, "smoke: cuTensorMapEncodeTiled failed: CUresult %d\n",
                 static_cast<int>(enc));
    return kExitCudaError;
  }

  SmokeResult* result = nullptr;
  PARITY_CUDA_CHECK(cudaMalloc(&result, sizeof(SmokeResult)));
  PARITY_CUDA_CHECK(cudaMemset(result, 0, sizeof(SmokeResult)));
  SmokeKernel<<<1, kThreads>>>(tmap, result);
  PARITY_CUDA_CHECK_LAUNCH();
  SmokeResult r{};
  PARITY_CUDA_CHECK(cudaMemcpy(&r, result, sizeof(r), cudaMemcpyDeviceToHost));
  PARITY_CUDA_CHECK(cudaFree(result));
  PARITY_CUDA_CHECK(cudaFree(global));

  const bool pass = r.completed == 1 && r.mismatches == 0;
  std::printf(
      "smoke: %s  tile %ux%u u32 = %u bytes at (%d,%d), smem 0x%x, completed=%u, "
      "mismatched words=%u%s, cycles=%lld\n",
      pass ? "PASS" : "FAIL", kBoxW, kBoxH, kTileBytes, kX0, kY0, r.smem_address, r.completed,
      r.mismatches, r.mismatches ? " (first at word index shown below)" : "", r.wait_cycles);
  if (r.mismatches) std::printf("smoke: first mismatching word index %u\n", r.first_bad);
  if (!r.completed) std::printf("smoke: TIMEOUT: phase 0 did not complete within the budget\n");
  return pass ? 0 : 1;
}

}  // namespace
}  // namespace parity::gpu

int main() { return parity::gpu::Main(); }
