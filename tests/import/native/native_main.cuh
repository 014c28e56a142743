// Host side of the native runs of tests/import's kernels on the H100 (tests/import/device_run.sh):
// tensor maps, a launch under a watchdog, and the dump of the kernel's Parity trace (the kernels
// are compiled with PARITY_TRACE, gpu/include/parity/trace.cuh). Each main prints one line:
//   native NAME: completed|a wait timed out, N records (D dropped), trace PATH
// and exits 0 when the kernel completed, 1 when a bounded wait gave up (the kernel hangs), 4
// when the watchdog fired (the kernel did not finish even with bounded waits), 2 on a CUDA error.
#ifndef PARITY_TESTS_IMPORT_NATIVE_NATIVE_MAIN_CUH_
#define PARITY_TESTS_IMPORT_NATIVE_NATIVE_MAIN_CUH_

#include <cuda.h>
#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

#include "gpu/host.cuh"
#include "gpu/include/parity/trace.cuh"

namespace parity::native {

// A 2-D u16 tensor map of a row-major W x H array (W innermost) with a BW x BH box.
inline CUtensorMap MakeMap2d(void* base, uint64_t w, uint64_t h, uint32_t bw, uint32_t bh,
                             CUtensorMapSwizzle swizzle) {
  CUtensorMap map;
  const cuuint64_t dims[2] = {w, h};
  const cuuint64_t strides[1] = {w * 2};
  const cuuint32_t box[2] = {bw, bh};
  const cuuint32_t elem[2] = {1, 1};
  const CUresult r = parity::gpu::GetTensorMapEncodeTiled()(
      &map, CU_TENSOR_MAP_DATA_TYPE_UINT16, 2, base, dims, strides, box, elem,
      CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle, CU_TENSOR_MAP_L2_PROMOTION_NONE,
      CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS) {
    std::fprintf(stderr, "cuTensorMapEncodeTiled failed (%d)\n", static_cast<int>(r));
    std::exit(parity::gpu::kExitCudaError);
  }
  return map;
}

inline void* DeviceZeros(size_t bytes) {
  void* p = nullptr;
  PARITY_CUDA_CHECK(cudaMalloc(&p, bytes));
  PARITY_CUDA_CHECK(cudaMemset(p, 0, bytes));
  return p;
}

// Launches (through `launch`) with the ring bound, waits at most `watchdog_s`, dumps the trace.
template <typename Launch>
int RunTraced(const std::string& name, const std::string& trace_path, Launch launch,
              double watchdog_s = 20.0) {
  parity::dev::HostRing ring = parity::dev::HostRing::Create(1u << 18);
  launch();
  PARITY_CUDA_CHECK(cudaGetLastError());
  const auto start = std::chrono::steady_clock::now();
  while (cudaStreamQuery(0) == cudaErrorNotReady) {
    if (std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() >
        watchdog_s) {
      std::printf("native %s: watchdog: the kernel did not finish in %.0f s\n", name.c_str(),
                  watchdog_s);
      std::fflush(stdout);
      std::_Exit(4);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  PARITY_CUDA_CHECK(cudaDeviceSynchronize());
  cudaDeviceProp prop{};
  PARITY_CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  uint32_t dropped = 0;
  const size_t n = ring.Read(&dropped).size();
  const bool aborted = ring.Aborted();
  if (!ring.Dump(trace_path, name, prop.name)) {
    std::fprintf(stderr, "cannot write %s\n", trace_path.c_str());
    return parity::gpu::kExitCudaError;
  }
  std::printf("native %s: %s, %zu records (%u dropped), trace %s\n", name.c_str(),
              aborted ? "a wait timed out" : "completed", n, dropped, trace_path.c_str());
  ring.Free();
  return aborted ? 1 : 0;
}

inline int IntArg(int argc, char** argv, int i, int fallback) {
  return argc > i ? std::atoi(argv[i]) : fallback;
}

}  // namespace parity::native

#endif  // PARITY_TESTS_IMPORT_NATIVE_NATIVE_MAIN_CUH_
