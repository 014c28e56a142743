// CUTLASS 7107b055 example 49 (49_hopper_gemm_with_collective_builder.cu): four of its seven
// kernels, as the example's own ExampleRunner builds them, in one translation unit:
//   cooperative  ExampleRunner<> (the builder's automatic schedule: cooperative, auto stages)
//   pingpong     ExampleRunner<KernelTmaWarpSpecializedPingpong, TmaWarpSpecialized>
//   stream_k     ExampleRunner<KernelTmaWarpSpecializedCooperative,
//                              TmaWarpSpecializedCooperative, StageCountAuto, StreamKScheduler>
//   kernel_tma   ExampleRunner<KernelTma, NoSmemWarpSpecialized>
// The example's main() instantiates all seven runners and their host verification; it is turned
// into a function template that is never instantiated, so that only the four kernels named here
// are compiled (one nvcc of this TU takes minutes, seven kernels twice as long).
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

// Taking each kernel's address instantiates it (as the example's GemmUniversalAdapter::run does).
void* corpus49_kernels[] = {
    reinterpret_cast<void*>(&cutlass::device_kernel<corpus49::Cooperative::GemmKernel>),
    reinterpret_cast<void*>(&cutlass::device_kernel<corpus49::Pingpong::GemmKernel>),
    reinterpret_cast<void*>(&cutlass::device_kernel<corpus49::StreamK::GemmKernel>),
    reinterpret_cast<void*>(&cutlass::device_kernel<corpus49::KernelTma::GemmKernel>),
};
