// gpu/litmus/pdl_litmus (issue 25): what griddepcontrol.wait orders, measured on Hopper.
//
// Two kernels on one stream. The primary grid (one CTA per slice) may execute
// griddepcontrol.launch_dependents, then spins `delay` cycles (a slow epilogue), then writes its
// slice of `data` with this run's epoch, then counts itself done. The dependent grid is launched
// with cudaLaunchAttributeProgrammaticStreamSerialization (programmatic dependent launch), reads
// how many primary CTAs were done when it started, optionally executes griddepcontrol.wait, and
// then reads the slice of its primary CTA and counts the words that are not the epoch (stale).
//
// Variants (--variant):
//   wait            trigger at the primary's start; the dependent waits before reading.
//   nowait          trigger at the primary's start; the dependent reads without waiting.
//   nowait_late     trigger after the primary's writes; the dependent reads without waiting
//                   (launch_dependents after a write does not promise that write's visibility).
//   nowait_none     no trigger (the implicit one at the primary's completion); no wait.
//   serial          no launch attribute, no trigger, no wait: plain stream order.
// PTX ISA (griddepcontrol): .wait waits until all prerequisite grids have completed and their
// memory operations are performed and visible; .launch_dependents only lets the dependents be
// scheduled early. The model (sim/engine, verifier/races.cc) says: a read after the wait is
// ordered after every primary write; any read without the wait races with them.
//
// Output (traces/pdl/README.md): a header line, one line per run, then the summary line
//   summary variant=V runs=R stale_runs=S early_runs=E stale_words=W
// (early_runs: runs in which some dependent CTA started while a primary CTA had not finished).
// Exit: 0 done, 2 CUDA or usage error.
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "gpu/host.cuh"
#include "gpu/ptx.cuh"

namespace parity::gpu {
namespace {

namespace ptx = parity::gpu::ptx;

constexpr int kThreads = 128;

enum Trigger : int { kTriggerNone = 0, kTriggerStart = 1, kTriggerAfterWrites = 2 };

__global__ void Primary(uint32_t* data, uint32_t* done, int words, long long delay, int trigger,
                        uint32_t epoch) {
  if (trigger == kTriggerStart) ptx::GriddepcontrolLaunchDependents();
  if (threadIdx.x == 0) {
    const long long start = clock64();
    while (clock64() - start < delay) {
    }
  }
  __syncthreads();
  uint32_t* slice = data + static_cast<size_t>(blockIdx.x) * words;
  for (int i = threadIdx.x; i < words; i += blockDim.x) slice[i] = epoch;
  __syncthreads();
  if (trigger == kTriggerAfterWrites) ptx::GriddepcontrolLaunchDependents();
  if (threadIdx.x == 0) {
    __threadfence();
    atomicAdd(done, 1u);
  }
}

__global__ void Dependent(const uint32_t* data, const uint32_t* done, uint32_t* stale,
                          uint32_t* done_at_start, int words, int primary_ctas, int wait,
                          uint32_t epoch) {
  if (threadIdx.x == 0) {
    done_at_start[blockIdx.x] = *reinterpret_cast<const volatile uint32_t*>(done);
  }
  if (wait) ptx::GriddepcontrolWait();
  const uint32_t* slice = data + static_cast<size_t>(blockIdx.x % primary_ctas) * words;
  uint32_t mine = 0;
  for (int i = threadIdx.x; i < words; i += blockDim.x) {
    // A volatile load: one read per word, as the schedule's `use` of the global buffer.
    if (reinterpret_cast<const volatile uint32_t*>(slice)[i] != epoch) ++mine;
  }
  if (mine != 0) atomicAdd(&stale[blockIdx.x], mine);
}

struct Options {
  std::string variant = "wait";
  int runs = 200;
  long long delay = 200000;
  int ctas = 0;  // 0: one per SM
  int words = 4096;
};

int Usage() {
  std::fprintf(stderr,
               "usage: pdl_litmus --variant wait|nowait|nowait_late|nowait_none|serial "
               "[--runs R] [--delay CYCLES] [--ctas N] [--words W]\n");
  return kExitCudaError;
}

int Main(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (i + 1 >= argc) return Usage();
    const char* v = argv[++i];
    if (a == "--variant") {
      o.variant = v;
    } else if (a == "--runs") {
      o.runs = std::atoi(v);
    } else if (a == "--delay") {
      o.delay = std::atoll(v);
    } else if (a == "--ctas") {
      o.ctas = std::atoi(v);
    } else if (a == "--words") {
      o.words = std::atoi(v);
    } else {
      return Usage();
    }
  }
  int trigger = kTriggerNone, wait = 0, pdl = 1;
  if (o.variant == "wait") {
    trigger = kTriggerStart;
    wait = 1;
  } else if (o.variant == "nowait") {
    trigger = kTriggerStart;
  } else if (o.variant == "nowait_late") {
    trigger = kTriggerAfterWrites;
  } else if (o.variant == "nowait_none") {
  } else if (o.variant == "serial") {
    pdl = 0;
  } else {
    return Usage();
  }
  if (o.runs <= 0 || o.words <= 0 || o.delay < 0) return Usage();
  cudaDeviceProp prop{};
  PARITY_CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  const int ctas = o.ctas > 0 ? o.ctas : prop.multiProcessorCount;
  const size_t data_bytes = static_cast<size_t>(ctas) * o.words * sizeof(uint32_t);
  uint32_t *data = nullptr, *done = nullptr, *stale = nullptr, *done_at_start = nullptr;
  PARITY_CUDA_CHECK(cudaMalloc(&data, data_bytes));
  PARITY_CUDA_CHECK(cudaMalloc(&done, sizeof(uint32_t)));
  PARITY_CUDA_CHECK(cudaMalloc(&stale, ctas * sizeof(uint32_t)));
  PARITY_CUDA_CHECK(cudaMalloc(&done_at_start, ctas * sizeof(uint32_t)));
  cudaStream_t stream;
  PARITY_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  std::printf("pdl_litmus device=\"%s\" variant=%s pdl=%d trigger=%d wait=%d runs=%d delay=%lld "
              "ctas=%d threads=%d words=%d\n",
              prop.name, o.variant.c_str(), pdl, trigger, wait, o.runs, o.delay, ctas, kThreads,
              o.words);
  std::vector<uint32_t> h_stale(ctas), h_start(ctas);
  int stale_runs = 0, early_runs = 0;
  uint64_t stale_words = 0;
  std::map<int, int> hist_stale_ctas;
  for (int run = 0; run < o.runs; ++run) {
    const uint32_t epoch = 0x5eed0000u + static_cast<uint32_t>(run) + 1;
    PARITY_CUDA_CHECK(cudaMemsetAsync(data, 0, data_bytes, stream));
    PARITY_CUDA_CHECK(cudaMemsetAsync(done, 0, sizeof(uint32_t), stream));
    PARITY_CUDA_CHECK(cudaMemsetAsync(stale, 0, ctas * sizeof(uint32_t), stream));
    Primary<<<ctas, kThreads, 0, stream>>>(data, done, o.words, o.delay, trigger, epoch);
    PARITY_CUDA_CHECK(cudaGetLastError());
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3(ctas);
    cfg.blockDim = dim3(kThreads);
    cfg.dynamicSmemBytes = 0;
    cfg.stream = stream;
    cudaLaunchAttribute attr[1];
    attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attr[0].val.programmaticStreamSerializationAllowed = 1;
    cfg.attrs = attr;
    cfg.numAttrs = pdl ? 1 : 0;
    PARITY_CUDA_CHECK(cudaLaunchKernelEx(&cfg, Dependent, static_cast<const uint32_t*>(data),
                                         static_cast<const uint32_t*>(done), stale, done_at_start,
                                         o.words, ctas, wait, epoch));
    PARITY_CUDA_CHECK(cudaStreamSynchronize(stream));
    PARITY_CUDA_CHECK(cudaMemcpy(h_stale.data(), stale, ctas * sizeof(uint32_t),
                                 cudaMemcpyDeviceToHost));
    PARITY_CUDA_CHECK(cudaMemcpy(h_start.data(), done_at_start, ctas * sizeof(uint32_t),
                                 cudaMemcpyDeviceToHost));
    int stale_ctas = 0;
    uint64_t words = 0;
    uint32_t min_done = ctas;
    for (int c = 0; c < ctas; ++c) {
      if (h_stale[c] != 0) ++stale_ctas;
      words += h_stale[c];
      if (h_start[c] < min_done) min_done = h_start[c];
    }
    if (stale_ctas != 0) ++stale_runs;
    if (min_done < static_cast<uint32_t>(ctas)) ++early_runs;
    stale_words += words;
    ++hist_stale_ctas[stale_ctas];
    std::printf("run %d stale_ctas=%d stale_words=%" PRIu64 " min_done_at_start=%u\n", run,
                stale_ctas, words, min_done);
  }
  std::printf("hist_stale_ctas");
  for (const auto& [k, n] : hist_stale_ctas) std::printf(" %d:%d", k, n);
  std::printf("\nsummary variant=%s runs=%d stale_runs=%d early_runs=%d stale_words=%" PRIu64 "\n",
              o.variant.c_str(), o.runs, stale_runs, early_runs, stale_words);
  PARITY_CUDA_CHECK(cudaStreamDestroy(stream));
  PARITY_CUDA_CHECK(cudaFree(data));
  PARITY_CUDA_CHECK(cudaFree(done));
  PARITY_CUDA_CHECK(cudaFree(stale));
  PARITY_CUDA_CHECK(cudaFree(done_at_start));
  return 0;
}

}  // namespace
}  // namespace parity::gpu

int main(int argc, char** argv) { return parity::gpu::Main(argc, argv); }
