// A multistage cp.async main loop (the pre-TMA software pipeline of Ampere GEMMs): 128 threads
// copy one 4 KiB stage of `src` per k-iteration with 16-byte cp.async, one commit group per
// stage, kStages - 1 stages in flight; before consuming stage k the block waits until at most
// kStages - 2 groups are pending (cp.async.wait_group) and synchronises (each thread reads words
// other threads copied), and synchronises again before the stage is overwritten. Written
// against Parity's trace API (gpu/include/parity/trace.cuh).
#include <cstdint>

#include "gpu/include/parity/trace.cuh"

namespace {

constexpr int kStages = 3;
constexpr int kThreads = 128;
constexpr int kStageBytes = kThreads * 16 * 2;  // two 16-byte chunks per thread

__device__ __forceinline__ void LoadStage(uint8_t* stage, const uint8_t* src, int k) {
  for (int c = 0; c < 2; ++c) {
    const int off = (c * kThreads + static_cast<int>(threadIdx.x)) * 16;
    parity::dev::CpAsync16(parity::dev::SmemAddr(stage + off),
                           src + static_cast<size_t>(k) * kStageBytes + off);
  }
}

}  // namespace

extern "C" __global__ void __launch_bounds__(kThreads)
    cp_async_pipeline(const uint8_t* src, int k_tiles, uint32_t* out) {
  __shared__ alignas(128) uint8_t stages[kStages][kStageBytes];
  uint32_t acc = 0;
  // Prologue: kStages - 1 stages in flight (an empty group where there is no tile keeps the
  // group count per iteration constant).
  for (int k = 0; k < kStages - 1; ++k) {
    if (k < k_tiles) LoadStage(stages[k], src, k);
    parity::dev::CpAsyncCommit();
  }
  for (int k = 0; k < k_tiles; ++k) {
    parity::dev::CpAsyncWait<kStages - 2>();
    parity::dev::SyncThreads();
    const uint32_t* words = reinterpret_cast<const uint32_t*>(stages[k % kStages]);
    acc += words[(threadIdx.x * 7) % (kStageBytes / 4)];
    parity::dev::SyncThreads();
    const int next = k + kStages - 1;
    if (next < k_tiles) LoadStage(stages[next % kStages], src, next);
    parity::dev::CpAsyncCommit();
  }
  out[blockIdx.x * blockDim.x + threadIdx.x] = acc;
}
