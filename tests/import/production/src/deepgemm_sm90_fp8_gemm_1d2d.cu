// DeepGEMM 54e22612 sm90_fp8_gemm_1d2d_impl, instantiated as its JIT does
// (csrc/jit_kernels/impls/sm90_fp8_gemm_1d2d.hpp, SM90FP8Gemm1D2DRuntime::generate_impl) for a
// 4096x4096x4096 fp8 (e4m3) GEMM with 1x128 A scales, 128x128 B scales (K-major) and bf16 D,
// compiled_dims "nk" (the Python default). get_best_config<SM90ArchSpec>
// (csrc/jit_kernels/heuristics/sm90.hpp, common.hpp) picks, for 132 SMs: 256x128x128 tiles,
// 128B swizzle for A, B and D, 3 stages, 128 TMA + 256 math threads, a cluster of 2 along N
// (cluster_n = 2, so A is multicast), no accumulation, the identity epilogue.
#include <deep_gemm/impls/sm90_fp8_gemm_1d2d.cuh>

using namespace deep_gemm;

static void __instantiate_kernel() {
  auto ptr = reinterpret_cast<void*>(
      &sm90_fp8_gemm_1d2d_impl<cute::UMMA::Major::K, 0, 4096, 4096, 1, 256, 128, 128, 128, 128,
                               128, 3, 128, 256, 2, true, 132, GemmType::Normal,
                               cutlass::bfloat16_t, epilogue::transform::EpilogueIdentity>);
}
