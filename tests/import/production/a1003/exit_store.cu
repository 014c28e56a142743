// Does a CTA that exits with a bulk store still reading its shared memory (no
// cp.async.bulk.wait_group.read 0 before exit, as DeepGEMM's sm90 GEMM epilogue) let the next CTA
// on that SM overwrite the bytes before the store has read them? Each CTA takes almost all of an
// SM's shared memory (one CTA per SM, so the next CTA there gets the same bytes), fills it with
// its own pattern, issues bulk stores of all of it to its own part of global memory, commits and
// exits (mode 0) or waits for the reads first (mode 1, the control). The next CTA's first act is
// to overwrite the shared memory with its pattern. The host counts the words of global memory
// that are not their CTA's pattern. Mode 2 (the positive control) overwrites the bytes in the
// same CTA right after the issue. KIND `bulk` issues cp.async.bulk (no tensor map); `tensor`
// issues cp.async.bulk.tensor.2d stores through a tensor map, as DeepGEMM's epilogue does.
//   exit_store MODE ROUNDS [bulk|tensor]
#include <cuda.h>
#include <dlfcn.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

constexpr uint32_t kBytes = 200 * 1024;   // per CTA: one CTA per SM
constexpr uint32_t kChunk = 40 * 1024;    // one bulk store
constexpr uint32_t kThreads = 256;

// The global memory seen through the tensor map: rows of 1 KB (256 words), a CTA's 200 KB are
// its 200 rows; a box of 256 x 40 words is one 40 KB chunk, dense in shared memory (no swizzle).
constexpr uint32_t kRowWords = 256;
constexpr uint32_t kBoxRows = kChunk / (kRowWords * 4);
constexpr uint32_t kCtaRows = kBytes / (kRowWords * 4);

__global__ void __launch_bounds__(kThreads, 1)
    exit_store(uint32_t* out, int mode, uint32_t salt, int tensor,
               const __grid_constant__ CUtensorMap map) {
  extern __shared__ __align__(128) uint32_t smem[];
  const uint32_t pattern = (blockIdx.x * 2654435761u) ^ salt;
  for (uint32_t i = threadIdx.x; i < kBytes / 4; i += kThreads) smem[i] = pattern + i;
  // The generic writes become visible to the async proxy (PTX ISA: proxy fences).
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  __syncthreads();
  if (threadIdx.x == 0) {
    const uint32_t s = static_cast<uint32_t>(__cvta_generic_to_shared(smem));
    char* g = reinterpret_cast<char*>(out) + static_cast<size_t>(blockIdx.x) * kBytes;
    for (uint32_t off = 0; off < kBytes; off += kChunk) {
      if (tensor) {
        const uint32_t row = blockIdx.x * kCtaRows + off / (kRowWords * 4);
        asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%1, %2}], [%3];"
                     :: "l"(&map), "r"(0), "r"(row), "r"(s + off) : "memory");
      } else {
        asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;"
                     :: "l"(g + off), "r"(s + off), "r"(kChunk) : "memory");
      }
    }
    asm volatile("cp.async.bulk.commit_group;" ::: "memory");
    if (mode == 1) asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory");
  }
  if (mode == 2) {
    // The positive control: the CTA itself overwrites the bytes right after the issue, without
    // waiting; wrong words here show that the stores are still reading when a next CTA would
    // start writing, so that mode 0's count can tell.
    __syncthreads();
    for (uint32_t i = threadIdx.x; i < kBytes / 4; i += kThreads) smem[i] = ~(pattern + i);
  }
}

int main(int argc, char** argv) {
  const int mode = argc > 1 ? std::atoi(argv[1]) : 0;
  const int rounds = argc > 2 ? std::atoi(argv[2]) : 20;
  const int tensor = argc > 3 && std::strcmp(argv[3], "tensor") == 0;
  int sms = 0;
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  const uint32_t ctas = static_cast<uint32_t>(sms) * 16;  // 16 waves on every SM
  uint32_t* out = nullptr;
  if (cudaMalloc(&out, static_cast<size_t>(ctas) * kBytes) != cudaSuccess) return 3;
  cudaFuncSetAttribute(exit_store, cudaFuncAttributeMaxDynamicSharedMemorySize, kBytes);
  // The tensor map over `out` (the driver's encoder, found as DeepGEMM's JIT finds it).
  CUtensorMap map;
  std::memset(&map, 0, sizeof map);
  if (tensor) {
    using EncodeTiled = CUresult (*)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*,
                                     const cuuint64_t*, const cuuint64_t*, const cuuint32_t*,
                                     const cuuint32_t*, CUtensorMapInterleave, CUtensorMapSwizzle,
                                     CUtensorMapL2promotion, CUtensorMapFloatOOBfill);
    void* driver = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
    auto encode = driver ? reinterpret_cast<EncodeTiled>(dlsym(driver, "cuTensorMapEncodeTiled"))
                         : nullptr;
    const cuuint64_t dims[2] = {kRowWords, static_cast<cuuint64_t>(ctas) * kCtaRows};
    const cuuint64_t strides[1] = {kRowWords * 4};
    const cuuint32_t box[2] = {kRowWords, kBoxRows};
    const cuuint32_t elem[2] = {1, 1};
    if (encode == nullptr ||
        encode(&map, CU_TENSOR_MAP_DATA_TYPE_UINT32, 2, out, dims, strides, box, elem,
               CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE,
               CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) != CUDA_SUCCESS) {
      std::printf("cuTensorMapEncodeTiled failed\n");
      return 3;
    }
  }
  std::vector<uint32_t> host(static_cast<size_t>(ctas) * kBytes / 4);
  uint64_t bad_words = 0, bad_ctas = 0;
  for (int r = 0; r < rounds; ++r) {
    const uint32_t salt = 0x9e3779b9u * static_cast<uint32_t>(r + 1);
    cudaMemset(out, 0, static_cast<size_t>(ctas) * kBytes);
    exit_store<<<ctas, kThreads, kBytes>>>(out, mode, salt, tensor, map);
    if (cudaDeviceSynchronize() != cudaSuccess) {
      std::printf("launch failed: %s\n", cudaGetErrorString(cudaGetLastError()));
      return 3;
    }
    cudaMemcpy(host.data(), out, host.size() * 4, cudaMemcpyDeviceToHost);
    for (uint32_t b = 0; b < ctas; ++b) {
      const uint32_t pattern = (b * 2654435761u) ^ salt;
      uint64_t bad = 0;
      for (uint32_t i = 0; i < kBytes / 4; ++i) {
        bad += host[static_cast<size_t>(b) * (kBytes / 4) + i] != pattern + i;
      }
      bad_words += bad;
      bad_ctas += bad != 0;
    }
  }
  std::printf("%s mode %d (%s): %d rounds x %u CTAs (%d SMs, %u bytes each): %llu CTAs with %llu "
              "wrong words\n",
              tensor ? "cp.async.bulk.tensor.2d" : "cp.async.bulk", mode,
              mode == 0 ? "exit without wait"
              : mode == 1 ? "wait_group.read 0 before exit"
                          : "overwrite right after the issue", rounds,
              ctas, sms, kBytes, static_cast<unsigned long long>(bad_ctas),
              static_cast<unsigned long long>(bad_words));
  return 0;
}
