// DeepGEMM 54e22612 sm90_bf16_gemm_impl, instantiated as its JIT does
// (csrc/jit_kernels/impls/sm90_bf16_gemm.hpp, SM90BF16GemmRuntime::generate_impl) for a
// 4096x4096x4096 bf16 GEMM with compiled_dims "nk" (the Python default): K-major A and B,
// 128x128x64 tiles, 128B swizzle for A, B and D, 6 stages, 128 TMA + 256 math threads,
// a cluster of 2 with A multicast, 132 SMs, no accumulation, bf16 D.
#include <deep_gemm/impls/sm90_bf16_gemm.cuh>

using namespace deep_gemm;

static void __instantiate_kernel() {
  auto ptr = reinterpret_cast<void*>(
      &sm90_bf16_gemm_impl<cute::UMMA::Major::K, cute::UMMA::Major::K, 0, 4096, 4096, 1, 128, 128,
                           64, 128, 128, 128, 6, 128, 256, 2, true, 132, GemmType::Normal, false,
                           cutlass::bfloat16_t>);
}
