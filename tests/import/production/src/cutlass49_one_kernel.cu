// One of the four example-49 kernels of cutlass49_kernels.cu, alone in its translation unit, for
// the seeded-bug twins (twin.sh): an edit of a shared header such as
// include/cutlass/pipeline/sm90_pipeline.hpp then changes this kernel only, and nvcc compiles one
// kernel, not four. CORPUS49_RUNNER names the runner (corpus49::KernelTma, corpus49::Cooperative,
// corpus49::Pingpong or corpus49::StreamK); the kernel's mangled name is the same as in
// cutlass49_kernels.cu, so kernels.tsv's --entry and parameters apply unchanged.
#ifndef CORPUS49_RUNNER
#error "compile with -DCORPUS49_RUNNER=corpus49::KernelTma (or another runner of cutlass49_kernels.cu)"
#endif
#define main(...) \
  example49_main_declaration();  \
  template <class Unused>        \
  int example49_main(__VA_ARGS__)
#include "49_hopper_gemm_with_collective_builder/49_collective_builder.cu"
#undef main

namespace corpus49 {
using Cooperative = ExampleRunner<>;
using Pingpong = ExampleRunner<cutlass::gemm::KernelTmaWarpSpecializedPingpong,
                               cutlass::epilogue::TmaWarpSpecialized>;
using StreamK = ExampleRunner<cutlass::gemm::KernelTmaWarpSpecializedCooperative,
                              cutlass::epilogue::TmaWarpSpecializedCooperative,
                              cutlass::gemm::collective::StageCountAuto,
                              cutlass::gemm::StreamKScheduler>;
using KernelTma = ExampleRunner<cutlass::gemm::KernelTma, cutlass::epilogue::NoSmemWarpSpecialized>;
}  // namespace corpus49

void* corpus49_kernel =
    reinterpret_cast<void*>(&cutlass::device_kernel<CORPUS49_RUNNER::GemmKernel>);
