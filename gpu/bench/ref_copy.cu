// The ceiling of gpu/bench/stream_copy.pipe (issue 6, performance): the same streaming copy
// written by hand, with no interpreter. Each CTA (one per SM) streams TILES tiles of BOXR rows of
// 1 KiB through STAGES shared-memory stages: PRODUCERS producer warps (lane 0 waits empty[s],
// arrive.expect_tx on full[s], cp.async.bulk.tensor load), one consumer warp per stage (wait
// full[s], check every 16-byte chunk, TMA store, bulk commit, wait_group.read 0, arrive
// empty[s]). The same barriers, instructions and check as the executor runs for the schedule, so
// the gap between this and `parity_gpu bench gpu/bench/stream_copy.pipe` is the interpreter's.
//
//   ref_copy [--nsm N] [--tiles T] [--runs R] CONFIG...     CONFIG = STAGES,PRODUCERS,BOXR,CHECK[,L2]
// CHECK: 0 none, 1 every chunk is the source's chunk (index, tag, hash), 2 the executor's `use`
// check (pattern data, any index).
// prints per config the median kernel time over R runs, the bandwidth (2 x bytes / time), the
// median cudaMemcpy device-to-device of the same bytes measured in the same loop, and the ratio.
// Every wait is bounded (clock64 budget); a timeout or a bad chunk fails the config (exit 1).
#include <cuda.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "gpu/executor.h"
#include "gpu/host.cuh"
#include "gpu/ptx.cuh"
#include "gpu/use_check.cuh"

namespace {

using parity::gpu::kPatternTagBase;
using parity::gpu::PatternHash;
namespace ptx = parity::gpu::ptx;

constexpr uint32_t kRowBytes = 1024;  // 256 u32 per row, the schedule's BOXC
constexpr uint32_t kMaxStages = 8;
constexpr long long kBudgetCycles = 2'000'000'000LL;  // about a second at 1.98 GHz

struct Params {
  uint32_t stages, producers, rows, check, tiles;
};

struct Result {
  unsigned long long bad;       // chunks that were not pattern data
  unsigned int timeouts;        // waits that ran out of budget
};

__global__ void FillPattern(uint4* p, uint64_t chunks) {
  const uint32_t tag = kPatternTagBase;  // map 0, as the runner fills tensor map 0
  for (uint64_t i = blockIdx.x * uint64_t{blockDim.x} + threadIdx.x; i < chunks;
       i += uint64_t{gridDim.x} * blockDim.x) {
    const uint32_t idx = static_cast<uint32_t>(i);
    const uint32_t h = PatternHash(idx, tag);
    p[i] = make_uint4(idx, tag, h, ~h);
  }
}

__global__ void __launch_bounds__(32 * (kMaxStages + 4), 1)
    RefCopy(const __grid_constant__ CUtensorMap src, const __grid_constant__ CUtensorMap dst,
            Params p, Result* result) {
  extern __shared__ __align__(1024) uint8_t smem[];
  const uint32_t tile_bytes = p.rows * kRowBytes;
  const uint32_t base = ptx::SmemAddress(smem);
  const uint32_t bars = base + p.stages * tile_bytes;  // full[s] at bars + 8 s, empty[s] after
  const uint32_t warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (threadIdx.x == 0) {
    for (uint32_t s = 0; s < p.stages; ++s) {
      ptx::MbarrierInit(bars + 8 * s, 1);
      ptx::MbarrierInit(bars + 8 * (p.stages + s), 1);
    }
    ptx::FenceMbarrierInit();
  }
  __syncthreads();
  const int32_t row0 = static_cast<int32_t>(blockIdx.x * p.tiles * p.rows);
  if (warp < p.producers) {
    if (lane == 0) {
      for (uint32_t k = warp; k < p.tiles; k += p.producers) {
        const uint32_t s = k % p.stages;
        if (!ptx::WaitParityBounded(bars + 8 * (p.stages + s), ((k / p.stages) & 1) ^ 1,
                                    kBudgetCycles)) {
          atomicAdd(&result->timeouts, 1u);
          return;
        }
        ptx::MbarrierArriveExpectTx(bars + 8 * s, tile_bytes);
        ptx::TmaLoad2D(base + s * tile_bytes, &src, bars + 8 * s, 0,
                       row0 + static_cast<int32_t>(k * p.rows));
      }
    }
    return;
  }
  const uint32_t s = warp - p.producers;
  if (s >= p.stages) return;
  const uint32_t sbase = base + s * tile_bytes;
  const uint32_t chunks = tile_bytes / 16;
  uint32_t bad = 0;
  for (uint32_t k = s; k < p.tiles; k += p.stages) {
    if (!ptx::WaitParityBounded(bars + 8 * s, (k / p.stages) & 1, kBudgetCycles)) {
      if (lane == 0) atomicAdd(&result->timeouts, 1u);
      return;
    }
    if (p.check == 2) {  // the executor's `use` check (gpu/use_check.cuh), inline
      const uint2 n = parity::gpu::CheckPatternChunks(sbase, chunks, lane);
      bad += n.x + n.y;
    } else if (p.check) {
      const uint32_t first = (blockIdx.x * p.tiles + k) * chunks;  // global chunk index
      for (uint32_t c = lane; c < chunks; c += 32) {
        const uint4 v = ptx::LdShared16(sbase + 16 * c);
        if (v.x != first + c || v.y != kPatternTagBase || v.z != PatternHash(v.x, v.y) ||
            v.w != ~v.z) {
          ++bad;
        }
      }
    }
    __syncwarp();
    if (lane == 0) {
      ptx::TmaStore2D(&dst, sbase, 0, row0 + static_cast<int32_t>(k * p.rows));
      ptx::BulkCommitGroup();
      ptx::BulkWaitGroupRead<0>();
      ptx::MbarrierArrive(bars + 8 * (p.stages + s));
    }
    __syncwarp();
  }
  if (lane == 0) ptx::BulkWaitGroup<0>();
  bad = __reduce_add_sync(0xffffffffu, bad);
  if (lane == 0 && bad != 0) atomicAdd(&result->bad, static_cast<unsigned long long>(bad));
}

CUtensorMap Encode(void* base, uint64_t rows, uint32_t box_rows, uint32_t l2) {
  CUtensorMap m;
  const cuuint64_t dims[2] = {kRowBytes / 4, rows};
  const cuuint64_t strides[1] = {kRowBytes};
  const cuuint32_t box[2] = {kRowBytes / 4, box_rows};
  const cuuint32_t es[2] = {1, 1};
  const CUresult r = parity::gpu::GetTensorMapEncodeTiled()(
      &m, CU_TENSOR_MAP_DATA_TYPE_UINT32, 2, base, dims, strides, box, es,
      CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE,
      static_cast<CUtensorMapL2promotion>(l2), CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS) {
    std::fprintf(stderr, "cuTensorMapEncodeTiled failed (%d)\n", static_cast<int>(r));
    std::exit(2);
  }
  return m;
}

float Median(std::vector<float> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  uint32_t nsm = 0, tiles = 128, runs = 25;
  std::vector<std::string> configs;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if ((a == "--nsm" || a == "--tiles" || a == "--runs") && i + 1 < argc) {
      const uint32_t v = static_cast<uint32_t>(std::strtoul(argv[++i], nullptr, 10));
      (a == "--nsm" ? nsm : a == "--tiles" ? tiles : runs) = v;
    } else {
      configs.push_back(a);
    }
  }
  if (configs.empty()) configs = {"4,2,32,1", "4,2,32,0"};
  cudaDeviceProp prop;
  PARITY_CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  if (nsm == 0) nsm = static_cast<uint32_t>(prop.multiProcessorCount);
  std::printf("# ref_copy on %s (%d SMs): %u CTAs x %u tiles, %u runs per config\n", prop.name,
              prop.multiProcessorCount, nsm, tiles, runs);
  int failed = 0;
  for (const std::string& cfg : configs) {
    Params p{};
    uint32_t l2 = 0;
    if (std::sscanf(cfg.c_str(), "%u,%u,%u,%u,%u", &p.stages, &p.producers, &p.rows, &p.check,
                    &l2) < 4 ||
        p.stages == 0 || p.stages > kMaxStages || p.producers == 0 || p.producers > 4 ||
        p.rows == 0 || p.rows > 256 || l2 > 3) {
      std::fprintf(stderr, "bad config '%s' (STAGES<=8,PRODUCERS<=4,BOXR<=256,CHECK[,L2<=3])\n",
                   cfg.c_str());
      return 2;
    }
    p.tiles = tiles;
    const uint64_t rows = uint64_t{nsm} * tiles * p.rows;
    const uint64_t bytes = rows * kRowBytes;
    const size_t smem = size_t{p.stages} * p.rows * kRowBytes + 16 * p.stages;
    if (smem > 227 * 1024) {
      std::fprintf(stderr, "config '%s' needs %zu bytes of shared memory\n", cfg.c_str(), smem);
      return 2;
    }
    void *s = nullptr, *d = nullptr, *d2 = nullptr;
    Result* res = nullptr;
    PARITY_CUDA_CHECK(cudaMalloc(&s, bytes));
    PARITY_CUDA_CHECK(cudaMalloc(&d, bytes));
    PARITY_CUDA_CHECK(cudaMalloc(&d2, bytes));
    PARITY_CUDA_CHECK(cudaMalloc(&res, sizeof(Result)));
    PARITY_CUDA_CHECK(cudaMemset(res, 0, sizeof(Result)));
    FillPattern<<<1024, 256>>>(static_cast<uint4*>(s), bytes / 16);
    PARITY_CUDA_CHECK_LAUNCH();
    const CUtensorMap ms = Encode(s, rows, p.rows, l2), md = Encode(d, rows, p.rows, l2);
    PARITY_CUDA_CHECK(
        cudaFuncSetAttribute(RefCopy, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
    const dim3 block(32 * (p.producers + p.stages));
    cudaEvent_t e0, e1;
    PARITY_CUDA_CHECK(cudaEventCreate(&e0));
    PARITY_CUDA_CHECK(cudaEventCreate(&e1));
    std::vector<float> tk, tm;
    for (uint32_t r = 0; r < runs + 3; ++r) {
      float ms_k = 0, ms_m = 0;
      PARITY_CUDA_CHECK(cudaEventRecord(e0));
      RefCopy<<<nsm, block, smem>>>(ms, md, p, res);
      PARITY_CUDA_CHECK(cudaEventRecord(e1));
      PARITY_CUDA_CHECK_LAUNCH();
      PARITY_CUDA_CHECK(cudaEventElapsedTime(&ms_k, e0, e1));
      PARITY_CUDA_CHECK(cudaEventRecord(e0));
      PARITY_CUDA_CHECK(cudaMemcpy(d2, s, bytes, cudaMemcpyDeviceToDevice));
      PARITY_CUDA_CHECK(cudaEventRecord(e1));
      PARITY_CUDA_CHECK(cudaEventSynchronize(e1));
      PARITY_CUDA_CHECK(cudaEventElapsedTime(&ms_m, e0, e1));
      if (r >= 3) {  // the first three are warm-up
        tk.push_back(ms_k);
        tm.push_back(ms_m);
      }
    }
    Result h{};
    PARITY_CUDA_CHECK(cudaMemcpy(&h, res, sizeof(h), cudaMemcpyDeviceToHost));
    // The copy itself: dst must equal src byte for byte.
    std::vector<uint8_t> hs(bytes), hd(bytes);
    PARITY_CUDA_CHECK(cudaMemcpy(hs.data(), s, bytes, cudaMemcpyDeviceToHost));
    PARITY_CUDA_CHECK(cudaMemcpy(hd.data(), d, bytes, cudaMemcpyDeviceToHost));
    const bool same = std::memcmp(hs.data(), hd.data(), bytes) == 0;
    const float k = Median(tk), m = Median(tm);
    const double gbk = 2.0 * bytes / (k * 1e-3) / 1e9, gbm = 2.0 * bytes / (m * 1e-3) / 1e9;
    std::printf(
        "stages %u producers %u box_rows %u (%u KiB tiles) check %u l2 %u: kernel %.4f ms "
        "%.1f GB/s, cudaMemcpy D2D %.4f ms %.1f GB/s: %.1f%%  [bad chunks %llu, timeouts %u, "
        "dst %s]\n",
        p.stages, p.producers, p.rows, p.rows, p.check, l2, k, gbk, m, gbm, 100.0 * gbk / gbm,
        h.bad, h.timeouts, same ? "== src" : "DIFFERS");
    std::fflush(stdout);
    if (h.bad != 0 || h.timeouts != 0 || !same) failed = 1;
    PARITY_CUDA_CHECK(cudaFree(s));
    PARITY_CUDA_CHECK(cudaFree(d));
    PARITY_CUDA_CHECK(cudaFree(d2));
    PARITY_CUDA_CHECK(cudaFree(res));
    PARITY_CUDA_CHECK(cudaEventDestroy(e0));
    PARITY_CUDA_CHECK(cudaEventDestroy(e1));
  }
  return failed;
}
