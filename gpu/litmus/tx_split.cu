// gpu/litmus/tx_split (issue 28): how an mbarrier's tx-count follows the bytes of one TMA or bulk
// copy when the expect_tx announces fewer bytes than the copy delivers.
//
// One CTA, two warps. Thread 0 initialises one mbarrier (count 1). Warp 1's lane 0 (the
// observer) spins on a plain shared load of the barrier's 64-bit word and records every value it
// sees change, with its clock64; warp 0's lane 0 (the producer) announces E bytes with
// mbarrier.arrive.expect_tx and issues one copy of N bytes onto the barrier (in this order, or
// the copy first), then polls test_wait.parity 0 until the window ends. In the quiet runs
// (observe=0) nobody watches or polls: only a probe at the end of the window. A phase that
// completes with E < N shows that complete_tx reached the barrier in pieces and that tx-count
// passed through 0 with no arrival pending. Reading a live mbarrier with ld.shared is outside
// PTX's contract; it is done only to look, never to decide anything in the kernel, and on Hopper
// the word does not hold the live barrier's state (the reads return what was stored there before
// the init, traces/import/bad_tx/README.md): the completion counts are the measurement.
//
// Copies: 2-D TMA of u16 boxes 64 x R (R = 32, 64, 128; 128B swizzle, and 64 x 64 without
// swizzle) from a 64 x 65536 tensor, and 1-D cp.async.bulk of 8192 and 16384 bytes. The source
// is zeros or a pattern (zeros only for the 64 x 64 tile of tests/import's ws_pipeline); the L2
// is hot (the same tile every run) or cold (a 256 MiB memset between runs, another tile each).
//
// Output: `calib` lines (the raw word after known operations, to decode its fields), then per
// configuration one `cfg` line:
//   cfg copy=C N=.. E=.. order=expect_first|copy_first l2=hot|cold data=zero|pattern
//       observe=0|1 runs=R completed=K completed_at_median=CYC values_hist={n:count,...}
//       final={raw:count,...}
// and, for observe=1, `seq` lines with the observer's values in the first two runs (cycles
// after the producer's first operation). Exit 0 done, 2 CUDA or usage error.
#include <algorithm>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "gpu/host.cuh"
#include "gpu/ptx.cuh"

namespace parity::gpu {
namespace {

namespace ptx = parity::gpu::ptx;

constexpr int kMaxValues = 64;
constexpr uint32_t kTileOffset = 0;        // 1024-aligned tile at the start of dynamic smem
constexpr uint32_t kBarOffset = 32768;     // the barrier after the largest tile (16 KiB)
constexpr uint32_t kSmemBytes = kBarOffset + 64;

struct RunRecord {
  long long issue;                 // producer's clock64 just before the first operation
  long long completed_at;          // clock64 of the first successful test_wait, 0 if none
  unsigned long long raw_init;     // the word after init
  unsigned long long raw_final;    // the word at the end of the window
  uint32_t completed;              // test_wait.parity 0 at the end of the window
  uint32_t parity1;                // test_wait.parity 1 at the end of the window
  uint32_t n_values;
  uint32_t pad;
  long long when[kMaxValues];
  unsigned long long value[kMaxValues];
};

__device__ __forceinline__ unsigned long long LoadRaw(uint32_t addr) {
  unsigned long long v;
  asm volatile("ld.volatile.shared.u64 %0, [%1];" : "=l"(v) : "r"(addr) : "memory");
  return v;
}

__global__ void __launch_bounds__(64)
    TxSplit(const __grid_constant__ CUtensorMap tmap, const uint8_t* bulk_src, int copy_kind,
            uint32_t bytes, uint32_t expect, int copy_first, int row, long long window,
            int observe, RunRecord* rec) {
  extern __shared__ __align__(1024) uint8_t smem[];
  const uint32_t base = ptx::SmemAddress(smem);
  const uint32_t bar = base + kBarOffset;
  const uint32_t tile = base + kTileOffset;
  if (threadIdx.x == 0) {
    ptx::MbarrierInit(bar, 1);
    ptx::FenceMbarrierInit();
    rec->raw_init = LoadRaw(bar);
  }
  __syncthreads();
  if (threadIdx.x == 32 && observe) {  // observer
    const long long start = clock64();
    unsigned long long last = LoadRaw(bar);
    uint32_t n = 0;
    long long now = start;
    while (now - start < window && n < kMaxValues) {
      const unsigned long long v = LoadRaw(bar);
      now = clock64();
      if (v != last) {
        rec->when[n] = now;
        rec->value[n] = v;
        ++n;
        last = v;
      }
    }
    rec->n_values = n;
  } else if (threadIdx.x == 0) {  // producer
    const long long spin = clock64();
    while (clock64() - spin < 2000) {
    }
    const long long issue = clock64();
    auto copy = [&] {
      if (copy_kind == 0) {
        ptx::TmaLoad2D(tile, &tmap, bar, 0, row);
      } else {
        ptx::BulkLoad(tile, bulk_src + static_cast<size_t>(row) * 128, bytes, bar);
      }
    };
    if (copy_first) copy();
    ptx::MbarrierArriveExpectTx(bar, expect);
    if (!copy_first) copy();
    long long done_at = 0;
    long long now = issue;
    while (now - issue < window) {
      now = clock64();
      if (observe && done_at == 0 && ptx::MbarrierTestWaitParity(bar, 0)) done_at = now;
    }
    rec->issue = issue;
    rec->completed_at = done_at;
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    rec->raw_final = LoadRaw(bar);
    rec->completed = ptx::MbarrierTestWaitParity(bar, 0) ? 1u : 0u;
    rec->parity1 = ptx::MbarrierTestWaitParity(bar, 1) ? 1u : 0u;
  }
}

// The raw word after sequences of known operations, to decode where pending count, phase and
// tx-count sit. out[i] = the word after step i.
__global__ void Calibrate(unsigned long long* out) {
  __shared__ __align__(8) uint64_t b[2];
  if (threadIdx.x != 0) return;
  const uint32_t bar = ptx::SmemAddress(&b[0]);
  const uint32_t bar2 = ptx::SmemAddress(&b[1]);
  int i = 0;
  ptx::MbarrierInit(bar, 1);
  out[i++] = LoadRaw(bar);                     // 0: init 1
  ptx::MbarrierExpectTx(bar, 1);
  out[i++] = LoadRaw(bar);                     // 1: +1
  ptx::MbarrierExpectTx(bar, 15);
  out[i++] = LoadRaw(bar);                     // 2: +16
  ptx::MbarrierExpectTx(bar, 4096 - 16);
  out[i++] = LoadRaw(bar);                     // 3: +4096
  ptx::MbarrierCompleteTx(bar, 4096);
  out[i++] = LoadRaw(bar);                     // 4: 0
  ptx::MbarrierCompleteTx(bar, 128);
  out[i++] = LoadRaw(bar);                     // 5: -128
  ptx::MbarrierCompleteTx(bar, 4096 - 128);
  out[i++] = LoadRaw(bar);                     // 6: -4096
  ptx::MbarrierExpectTx(bar, 4096 + 8192);
  out[i++] = LoadRaw(bar);                     // 7: +8192
  ptx::MbarrierArriveExpectTx(bar, 0);
  out[i++] = LoadRaw(bar);                     // 8: pending 0, tx 8192
  ptx::MbarrierCompleteTx(bar, 8192);
  out[i++] = LoadRaw(bar);                     // 9: phase 1 complete, pending 1, tx 0
  ptx::MbarrierCompleteTx(bar, 4096);
  out[i++] = LoadRaw(bar);                     // 10: phase 1, tx -4096
  ptx::MbarrierInit(bar2, 5);
  out[i++] = LoadRaw(bar2);                    // 11: init 5
  ptx::MbarrierArrive(bar2);
  out[i++] = LoadRaw(bar2);                    // 12: pending 4
  ptx::MbarrierArriveCount(bar2, 4);
  out[i++] = LoadRaw(bar2);                    // 13: phase 1 complete, pending 5
  ptx::MbarrierExpectTx(bar2, (1u << 20) - 1);
  out[i++] = LoadRaw(bar2);                    // 14: tx 2^20 - 1
  out[i++] = ptx::MbarrierTestWaitParity(bar2, 0) ? 1 : 0;  // 15: 1 (phase 0 done)
}

struct Copy {
  const char* name;
  int kind;        // 0 TMA, 1 bulk
  uint32_t rows;   // TMA box rows (64 u16 wide)
  CUtensorMapSwizzle swizzle;
  uint32_t bytes;
};

void Die(const char* what) {
  std::fprintf(stderr, "tx_split: %s\n", what);
  std::exit(kExitCudaError);
}

}  // namespace
}  // namespace parity::gpu

int main(int argc, char** argv) {
  using namespace parity::gpu;
  int runs = 100;
  long long window = 60000;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--runs") == 0 && i + 1 < argc) {
      runs = std::atoi(argv[++i]);
    } else if (std::strcmp(argv[i], "--window") == 0 && i + 1 < argc) {
      window = std::atoll(argv[++i]);
    } else {
      Die("usage: tx_split [--runs N] [--window CYCLES]");
    }
  }
  if (runs <= 0 || window <= 0) Die("usage: tx_split [--runs N] [--window CYCLES]");
  cudaDeviceProp prop{};
  PARITY_CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  int clock_khz = 0;
  PARITY_CUDA_CHECK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, 0));
  std::printf("device %s sm_clock_khz %d l2_bytes %d runs %d window %lld\n", prop.name,
              clock_khz, prop.l2CacheSize, runs, window);

  unsigned long long* calib = nullptr;
  PARITY_CUDA_CHECK(cudaMallocManaged(&calib, 32 * sizeof(unsigned long long)));
  std::memset(calib, 0, 32 * sizeof(unsigned long long));
  Calibrate<<<1, 32>>>(calib);
  PARITY_CUDA_CHECK_LAUNCH();
  const char* steps[] = {"init1", "expect+1", "expect+16", "expect+4096", "complete-4096(tx0)",
                         "complete-128(tx-128)", "complete(tx-4096)", "expect(tx+8192)",
                         "arrive.expect_tx0(pending0,tx8192)", "complete-8192(phase1)",
                         "complete-4096(phase1,tx-4096)", "init5", "arrive(pending4)",
                         "arrive4(phase1,pending5)", "expect(tx2^20-1)", "test_wait_p0"};
  for (int i = 0; i < 16; ++i) {
    std::printf("calib %2d %-36s 0x%016llx\n", i, steps[i], calib[i]);
  }

  constexpr uint64_t kW = 64, kH = 65536;
  const size_t tensor_bytes = kW * kH * 2;
  uint8_t* zeros = nullptr;
  uint8_t* pattern = nullptr;
  uint8_t* scratch = nullptr;
  const size_t scratch_bytes = size_t{256} << 20;
  PARITY_CUDA_CHECK(cudaMalloc(&zeros, tensor_bytes));
  PARITY_CUDA_CHECK(cudaMalloc(&pattern, tensor_bytes));
  PARITY_CUDA_CHECK(cudaMalloc(&scratch, scratch_bytes));
  PARITY_CUDA_CHECK(cudaMemset(zeros, 0, tensor_bytes));
  {
    std::vector<uint32_t> h(tensor_bytes / 4);
    for (size_t i = 0; i < h.size(); ++i) h[i] = static_cast<uint32_t>(i * 2654435761u) | 1u;
    PARITY_CUDA_CHECK(cudaMemcpy(pattern, h.data(), tensor_bytes, cudaMemcpyHostToDevice));
  }
  RunRecord* dev_rec = nullptr;
  PARITY_CUDA_CHECK(cudaMalloc(&dev_rec, sizeof(RunRecord)));
  RunRecord host_rec;
  RunRecord* rec = &host_rec;
  PARITY_CUDA_CHECK(cudaFuncSetAttribute(TxSplit, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         static_cast<int>(kSmemBytes)));

  const Copy copies[] = {
      {"tma64x32s128", 0, 32, CU_TENSOR_MAP_SWIZZLE_128B, 4096},
      {"tma64x64s128", 0, 64, CU_TENSOR_MAP_SWIZZLE_128B, 8192},
      {"tma64x128s128", 0, 128, CU_TENSOR_MAP_SWIZZLE_128B, 16384},
      {"tma64x64none", 0, 64, CU_TENSOR_MAP_SWIZZLE_NONE, 8192},
      {"bulk8192", 1, 0, CU_TENSOR_MAP_SWIZZLE_NONE, 8192},
      {"bulk16384", 1, 0, CU_TENSOR_MAP_SWIZZLE_NONE, 16384},
  };
  for (const Copy& cp : copies) {
    // Zeros and pattern for the tile of tests/import's ws_pipeline, pattern for the others.
    const bool main_copy = std::strcmp(cp.name, "tma64x64s128") == 0;
    for (int data = main_copy ? 0 : 1; data < 2; ++data) {
      uint8_t* src = data == 0 ? zeros : pattern;
      CUtensorMap map;
      std::memset(&map, 0, sizeof(map));
      if (cp.kind == 0) {
        const cuuint64_t dims[2] = {kW, kH};
        const cuuint64_t strides[1] = {kW * 2};
        const cuuint32_t box[2] = {static_cast<cuuint32_t>(kW), cp.rows};
        const cuuint32_t elem[2] = {1, 1};
        const CUresult r = GetTensorMapEncodeTiled()(
            &map, CU_TENSOR_MAP_DATA_TYPE_UINT16, 2, src, dims, strides, box, elem,
            CU_TENSOR_MAP_INTERLEAVE_NONE, cp.swizzle, CU_TENSOR_MAP_L2_PROMOTION_NONE,
            CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
        if (r != CUDA_SUCCESS) Die("cuTensorMapEncodeTiled failed");
      }
      const uint32_t n = cp.bytes;
      std::vector<uint32_t> expects = {n, n * 3 / 4, n / 2, n / 4, 1024, 128, 16};
      std::sort(expects.begin(), expects.end(), std::greater<uint32_t>());
      expects.erase(std::unique(expects.begin(), expects.end()), expects.end());
      for (uint32_t e : expects) {
        if (e > n) continue;
        for (int copy_first = 0; copy_first < 2; ++copy_first) {
          for (int cold = 0; cold < 2; ++cold) {
           for (int observe = 1; observe >= 0; --observe) {
            int completed = 0;
            std::vector<long long> done_at;
            std::map<uint32_t, int> values_hist;
            std::map<unsigned long long, int> finals;
            std::string seqs;
            for (int r = 0; r < runs; ++r) {
              if (cold) PARITY_CUDA_CHECK(cudaMemsetAsync(scratch, r & 0xff, scratch_bytes));
              const int row = cold ? static_cast<int>((r * 97 + 1) % (kH / 128)) *
                                         static_cast<int>(cp.kind == 0 ? cp.rows : 128)
                                   : 0;
              PARITY_CUDA_CHECK(cudaMemsetAsync(dev_rec, 0, sizeof(RunRecord)));
              TxSplit<<<1, 64, kSmemBytes>>>(map, src, cp.kind, n, e, copy_first, row, window,
                                             observe, dev_rec);
              PARITY_CUDA_CHECK_LAUNCH();
              PARITY_CUDA_CHECK(
                  cudaMemcpy(rec, dev_rec, sizeof(RunRecord), cudaMemcpyDeviceToHost));
              completed += rec->completed ? 1 : 0;
              if (rec->completed_at != 0) done_at.push_back(rec->completed_at - rec->issue);
              ++values_hist[rec->n_values];
              ++finals[rec->raw_final];
              if (r < 2) {
                char buf[96];
                std::snprintf(buf, sizeof(buf), "seq run=%d init=0x%016llx done_at=%lld:", r,
                              rec->raw_init,
                              rec->completed_at ? rec->completed_at - rec->issue : -1);
                seqs += buf;
                for (uint32_t k = 0; k < rec->n_values; ++k) {
                  std::snprintf(buf, sizeof(buf), " %lld:0x%016llx", rec->when[k] - rec->issue,
                                rec->value[k]);
                  seqs += buf;
                }
                seqs += "\n";
              }
            }
            std::sort(done_at.begin(), done_at.end());
            std::printf("cfg copy=%s N=%u E=%u order=%s l2=%s data=%s observe=%d runs=%d "
                        "completed=%d completed_at_median=%lld values_hist={",
                        cp.name, n, e, copy_first ? "copy_first" : "expect_first",
                        cold ? "cold" : "hot", data ? "pattern" : "zero", observe, runs, completed,
                        done_at.empty() ? -1 : done_at[done_at.size() / 2]);
            bool first = true;
            for (const auto& [k, c] : values_hist) {
              std::printf("%s%u:%d", first ? "" : ",", k, c);
              first = false;
            }
            std::printf("} final={");
            first = true;
            for (const auto& [k, c] : finals) {
              std::printf("%s0x%llx:%d", first ? "" : ",", k, c);
              first = false;
            }
            std::printf("}\n%s", observe ? seqs.c_str() : "");
            std::fflush(stdout);
           }
          }
        }
      }
    }
  }
  std::printf("tx_split: done\n");
  return 0;
}
