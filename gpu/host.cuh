// Host-side helpers shared by Parity's GPU programs: CUDA error checks and the driver's
// cuTensorMapEncodeTiled reached through the runtime (no link against libcuda, so the binaries
// run on any machine that has only the driver installed).
#ifndef PARITY_GPU_HOST_CUH_
#define PARITY_GPU_HOST_CUH_

#include <cuda.h>  // CUtensorMap and its enums (types only; libcuda is not linked)
#include <cuda_runtime.h>
#include <cudaTypedefs.h>  // PFN_cuTensorMapEncodeTiled

#include <cstdio>
#include <cstdlib>

namespace parity::gpu {

// Exit status of GPU programs on a CUDA failure (the CLI's "bad input / environment" code).
inline constexpr int kExitCudaError = 2;

// Checks a CUDA runtime call; on failure prints file, line, the call and the error, and exits.
#define PARITY_CUDA_CHECK(call)                                                               \
  do {                                                                                        \
    const cudaError_t parity_err_ = (call);                                                   \
    if (parity_err_ != cudaSuccess) {                                                         \
      std::fprintf(stderr, "%s:%d: CUDA error in %s: %s (%s)\n", __FILE__, __LINE__, #call,   \
                   cudaGetErrorName(parity_err_), cudaGetErrorString(parity_err_));           \
      std::exit(::parity::gpu::kExitCudaError);                                               \
    }                                                                                         \
  } while (0)

// After a kernel launch: the launch error, then the execution error.
#define PARITY_CUDA_CHECK_LAUNCH()                  \
  do {                                              \
    PARITY_CUDA_CHECK(cudaGetLastError());          \
    PARITY_CUDA_CHECK(cudaDeviceSynchronize());     \
  } while (0)

// The driver's cuTensorMapEncodeTiled (introduced in CUDA 12.0), found once through
// cudaGetDriverEntryPointByVersion. Exits with kExitCudaError when the driver lacks it.
inline PFN_cuTensorMapEncodeTiled_v12000 GetTensorMapEncodeTiled() {
  static PFN_cuTensorMapEncodeTiled_v12000 fn = [] {
    void* p = nullptr;
    cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
    PARITY_CUDA_CHECK(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &p, 12000,
                                                       cudaEnableDefault, &found));
    if (found != cudaDriverEntryPointSuccess || p == nullptr) {
      std::fprintf(stderr, "cuTensorMapEncodeTiled not available from the driver (query %d)\n",
                   static_cast<int>(found));
      std::exit(kExitCudaError);
    }
    return reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(p);
  }();
  return fn;
}

}  // namespace parity::gpu

#endif  // PARITY_GPU_HOST_CUH_
