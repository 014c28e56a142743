// The kernel parameters of the four CUTLASS 7107b055 example 49 kernels of
// src/cutlass49_kernels.cu, as the example's ExampleRunner::run builds them (its Arguments, then
// GemmKernel::to_underlying_arguments), for the problem given on the command line, printed by
// param_dump.h. No GPU is needed: the device allocations stay empty (the pointers are only
// encoded into tensor maps) and the stream-K workspace is a host buffer (only its address is a
// parameter).
//   cutlass49_params cooperative|pingpong|stream_k|kernel_tma M N K SMS
#include "param_dump.h"

#include "src/cutlass49_kernels.cu"

namespace {

template <class Runner>
int Dump(int m, int n, int k, int sms) {
  using Gemm = typename Runner::Gemm;
  using GemmKernel = typename Gemm::GemmKernel;
  // ExampleRunner::initialize's strides for L = 1.
  auto stride_a = cutlass::make_cute_packed_stride(typename Runner::StrideA{}, cute::make_shape(m, k, 1));
  auto stride_b = cutlass::make_cute_packed_stride(typename Runner::StrideB{}, cute::make_shape(n, k, 1));
  auto stride_c = cutlass::make_cute_packed_stride(typename Runner::StrideC{}, cute::make_shape(m, n, 1));
  auto stride_d = cutlass::make_cute_packed_stride(typename Runner::StrideD{}, cute::make_shape(m, n, 1));
  cutlass::KernelHardwareInfo hw_info;
  hw_info.device_id = 0;
  hw_info.sm_count = sms;
  typename Gemm::Arguments arguments{
      cutlass::gemm::GemmUniversalMode::kGemm,
      {m, n, k, 1},
      {nullptr, stride_a, nullptr, stride_b},
      {{}, nullptr, stride_c, nullptr, stride_d},
      hw_info};
  // The example's defaults (Options: alpha 1, beta 0).
  arguments.epilogue.thread.alpha = 1.f;
  arguments.epilogue.thread.beta = 0.f;
  if (!GemmKernel::can_implement(arguments)) return 3;
  static std::vector<char> workspace;
  workspace.assign(GemmKernel::get_workspace_size(arguments) + 256, 0);
  auto params = GemmKernel::to_underlying_arguments(arguments, workspace.data());
  const dim3 grid = GemmKernel::get_grid_shape(params);
  std::printf("grid %u %u %u\nblock %u\nworkspace %zu\n", grid.x, grid.y, grid.z,
              GemmKernel::MaxThreadsPerBlock, workspace.size() - 256);
  param_dump::Print(stdout, &params, sizeof(params));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 6) return 2;
  const std::string kernel = argv[1];
  const int m = std::atoi(argv[2]), n = std::atoi(argv[3]), k = std::atoi(argv[4]);
  const int sms = std::atoi(argv[5]);
  if (kernel == "cooperative") return Dump<corpus49::Cooperative>(m, n, k, sms);
  if (kernel == "pingpong") return Dump<corpus49::Pingpong>(m, n, k, sms);
  if (kernel == "stream_k") return Dump<corpus49::StreamK>(m, n, k, sms);
  if (kernel == "kernel_tma") return Dump<corpus49::KernelTma>(m, n, k, sms);
  return 2;
}
