// A host harness for DeepGEMM 54e22612's sm90_bf16_gemm_impl, for `parity capture` on the H100
// (issue 35 item 9): the kernel instantiated as tests/import/production/src/deepgemm_sm90_bf16_gemm.cu
// does (the JIT's template arguments for a 4096x4096x4096 bf16 GEMM, compiled_dims "nk"), its
// tensor maps encoded and the kernel launched the way DeepGEMM's own host code does it, and D
// checked against a reference GEMM on the GPU. Exit 0 when every element agrees. An optional
// argument gives M (a multiple of 128, default 4096): N and K are the instantiation's.
//
// DeepGEMM's host side, followed here (csrc/ of the pinned commit):
// - jit/handle.hpp: the driver from dlopen("libcuda.so.1") and dlsym (cuTensorMapEncodeTiled);
//   the launch by cudaLaunchKernelExC with a cluster-dimension attribute of 2 along x.
// - jit_kernels/impls/runtime_utils.hpp make_tma_2d_desc: dims {inner, outer}, the outer stride
//   in bytes, the box's inner extent = swizzle bytes / element size, L2 promotion 256B, no OOB
//   fill; make_tma_a_desc / make_tma_b_desc / make_tma_cd_desc pick (K, M), (K, N), (N, M).
// - jit_kernels/heuristics/sm90.hpp: smem = align(BLOCK_M*BLOCK_N*2, 1024) + 16*8*2 barriers +
//   stages * (A + B per stage); one CTA per SM (132 on the H100).
//
// Build: launches/build.sh (nvcc -gencode=arch=compute_90a,code=sm_90a, static cudart).
#include <cuda.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <dlfcn.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>

#include <deep_gemm/impls/sm90_bf16_gemm.cuh>

namespace {

constexpr uint32_t kMaxM = 4096, kN = 4096, kK = 4096;
uint32_t g_m = kMaxM;  // M: from argv (main), before any use
constexpr uint32_t kBlockM = 128, kBlockN = 128, kBlockK = 64;
constexpr uint32_t kSwizzle = 128;  // bytes, for A, B and D
constexpr uint32_t kStages = 6;
constexpr uint32_t kTmaThreads = 128, kMathThreads = 256;
constexpr uint32_t kCluster = 2;
constexpr uint32_t kNumSMs = 132;
constexpr uint32_t kSmem = 32768 + 16 * 8 * 2 + kStages * (kBlockM + kBlockN) * kBlockK * 2;

// The instantiation of tests/import/production/src/deepgemm_sm90_bf16_gemm.cu.
constexpr auto kKernel =
    &deep_gemm::sm90_bf16_gemm_impl<cute::UMMA::Major::K, cute::UMMA::Major::K, 0, kN, kK, 1,
                                    kBlockM, kBlockN, kBlockK, kSwizzle, kSwizzle, kSwizzle,
                                    kStages, kTmaThreads, kMathThreads, kCluster, true, kNumSMs,
                                    deep_gemm::GemmType::Normal, false, cutlass::bfloat16_t>;

#define CHECK_CUDA(x)                                                                  \
  do {                                                                                 \
    cudaError_t e_ = (x);                                                              \
    if (e_ != cudaSuccess) {                                                           \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x,                 \
                   cudaGetErrorString(e_));                                            \
      std::exit(1);                                                                    \
    }                                                                                  \
  } while (0)

// Small exact values (multiples of 1/8 in [-1, 1]): the bf16 products and their fp32 sums are
// exact in both GEMMs, so D differs from the reference only by the final rounding to bf16.
__global__ void Fill(__nv_bfloat16* p, size_t n, uint32_t seed) {
  for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    uint32_t h = static_cast<uint32_t>(i) * 2654435761u ^ seed;
    h ^= h >> 15;
    h *= 2246822519u;
    h ^= h >> 13;
    p[i] = __float2bfloat16(static_cast<float>(static_cast<int>(h % 17) - 8) / 8.0f);
  }
}

// D_ref[m][n] = sum_k A[m][k] * B[n][k] (both K-major), in fp32.
__global__ void Reference(const __nv_bfloat16* a, const __nv_bfloat16* b, float* d) {
  const uint32_t n = blockIdx.x * blockDim.x + threadIdx.x;
  const uint32_t m = blockIdx.y;
  if (n >= kN) return;
  float acc = 0;
  for (uint32_t k = 0; k < kK; ++k) {
    acc += __bfloat162float(a[static_cast<size_t>(m) * kK + k]) *
           __bfloat162float(b[static_cast<size_t>(n) * kK + k]);
  }
  d[static_cast<size_t>(m) * kN + n] = acc;
}

__global__ void Compare(const __nv_bfloat16* d, const float* ref, uint32_t m,
                        unsigned long long* bad, float* worst) {
  for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < static_cast<size_t>(m) * kN;
       i += gridDim.x * blockDim.x) {
    const float got = __bfloat162float(d[i]);
    const float err = fabsf(got - ref[i]);
    // bf16 keeps 8 significant bits: one rounding of the fp32 sum is within 2^-8 of it.
    if (!(err <= fabsf(ref[i]) * (1.0f / 256) + 1e-3f)) atomicAdd(bad, 1ull);
    atomicMax(reinterpret_cast<int*>(worst), __float_as_int(err));
  }
}

using EncodeTiled = CUresult (*)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*,
                                 const cuuint64_t*, const cuuint64_t*, const cuuint32_t*,
                                 const cuuint32_t*, CUtensorMapInterleave, CUtensorMapSwizzle,
                                 CUtensorMapL2promotion, CUtensorMapFloatOOBfill);

// make_tma_2d_desc for a bf16 tensor: dims {inner, outer}, box {swizzle / 2, outer block}.
CUtensorMap Desc(EncodeTiled encode, void* p, uint64_t inner, uint64_t outer, uint32_t box_outer) {
  CUtensorMap map;
  const cuuint64_t dims[2] = {inner, outer};
  const cuuint64_t strides[1] = {inner * 2};
  const cuuint32_t box[2] = {kSwizzle / 2, box_outer};
  const cuuint32_t elem_strides[2] = {1, 1};
  const CUresult r = encode(&map, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, p, dims, strides, box,
                            elem_strides, CU_TENSOR_MAP_INTERLEAVE_NONE,
                            CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                            CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS) {
    std::fprintf(stderr, "cuTensorMapEncodeTiled: error %d\n", static_cast<int>(r));
    std::exit(1);
  }
  return map;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1) {
    g_m = static_cast<uint32_t>(std::strtoul(argv[1], nullptr, 10));
    if (g_m == 0 || g_m % kBlockM != 0 || g_m > kMaxM) {
      std::fprintf(stderr, "M must be a positive multiple of %u up to %u\n", kBlockM, kMaxM);
      return 2;
    }
  }
  void* driver = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
  if (driver == nullptr) {
    std::fprintf(stderr, "libcuda.so.1: %s\n", dlerror());
    return 1;
  }
  auto encode = reinterpret_cast<EncodeTiled>(dlsym(driver, "cuTensorMapEncodeTiled"));
  if (encode == nullptr) {
    std::fprintf(stderr, "cuTensorMapEncodeTiled not found\n");
    return 1;
  }
  cudaDeviceProp prop;
  CHECK_CUDA(cudaGetDeviceProperties(&prop, 0));
  std::printf("device: %s, %d SMs, sm_%d%d\n", prop.name, prop.multiProcessorCount, prop.major,
              prop.minor);
  if (prop.multiProcessorCount != static_cast<int>(kNumSMs)) {
    std::printf("note: the kernel is instantiated for %u SMs\n", kNumSMs);
  }

  __nv_bfloat16 *a, *b, *d;
  float* ref;
  unsigned long long* bad;
  float* worst;
  CHECK_CUDA(cudaMalloc(&a, sizeof(__nv_bfloat16) * g_m * kK));
  CHECK_CUDA(cudaMalloc(&b, sizeof(__nv_bfloat16) * kN * kK));
  CHECK_CUDA(cudaMalloc(&d, sizeof(__nv_bfloat16) * g_m * kN));
  CHECK_CUDA(cudaMalloc(&ref, sizeof(float) * g_m * kN));
  CHECK_CUDA(cudaMalloc(&bad, sizeof(unsigned long long)));
  CHECK_CUDA(cudaMalloc(&worst, sizeof(float)));
  CHECK_CUDA(cudaMemset(bad, 0, sizeof(unsigned long long)));
  CHECK_CUDA(cudaMemset(worst, 0, sizeof(float)));
  CHECK_CUDA(cudaMemset(d, 0xff, sizeof(__nv_bfloat16) * g_m * kN));  // NaN until written
  Fill<<<1024, 256>>>(a, static_cast<size_t>(g_m) * kK, 1);
  Fill<<<1024, 256>>>(b, static_cast<size_t>(kN) * kK, 2);
  CHECK_CUDA(cudaGetLastError());

  CUtensorMap map_a = Desc(encode, a, kK, g_m, kBlockM);
  CUtensorMap map_b = Desc(encode, b, kK, kN, kBlockN);
  CUtensorMap map_cd = Desc(encode, d, kN, g_m, kBlockM);

  CHECK_CUDA(cudaFuncSetAttribute(kKernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmem));
  cudaLaunchConfig_t config = {};
  config.gridDim = dim3(kNumSMs, 1, 1);
  config.blockDim = dim3(kTmaThreads + kMathThreads, 1, 1);
  config.dynamicSmemBytes = kSmem;
  config.stream = nullptr;
  cudaLaunchAttribute attrs[1];
  attrs[0].id = cudaLaunchAttributeClusterDimension;
  attrs[0].val.clusterDim.x = kCluster;
  attrs[0].val.clusterDim.y = 1;
  attrs[0].val.clusterDim.z = 1;
  config.attrs = attrs;
  config.numAttrs = 1;
  int* grouped_layout = nullptr;
  uint32_t m = g_m, n = kN, k = kK;
  void* args[] = {&grouped_layout, &m, &n, &k, &map_a, &map_b, &map_cd};
  CHECK_CUDA(cudaLaunchKernelExC(&config, reinterpret_cast<const void*>(kKernel), args));
  CHECK_CUDA(cudaGetLastError());
  CHECK_CUDA(cudaDeviceSynchronize());

  Reference<<<dim3(kN / 128, g_m), 128>>>(a, b, ref);
  Compare<<<1024, 256>>>(d, ref, g_m, bad, worst);
  CHECK_CUDA(cudaGetLastError());
  unsigned long long bad_host = 0;
  float worst_host = 0;
  CHECK_CUDA(cudaMemcpy(&bad_host, bad, sizeof bad_host, cudaMemcpyDeviceToHost));
  CHECK_CUDA(cudaMemcpy(&worst_host, worst, sizeof worst_host, cudaMemcpyDeviceToHost));
  std::printf("deepgemm sm90_bf16_gemm_impl %ux%ux%u: %llu of %llu elements differ from the "
              "reference GEMM (largest difference %g)\n",
              g_m, kN, kK, bad_host, static_cast<unsigned long long>(g_m) * kN, worst_host);
  return bad_host == 0 ? 0 : 1;
}
