// The kernel parameters of CUTLASS 7107b055 example 48 (48_hopper_warp_specialized_gemm.cu) as
// its own host code builds them (args_from_options, then GemmKernel::to_underlying_arguments),
// for the problem given on the command line, printed by param_dump.h. No GPU is needed: the
// device allocations are left empty (the pointers are only encoded into tensor maps).
//   cutlass48_params M N K SMS
#include "param_dump.h"

#define main example48_main
#include "48_hopper_warp_specialized_gemm.cu"
#undef main

int main(int argc, char** argv) {
  if (argc != 5) return 2;
  Options options;
  options.m = std::atoi(argv[1]);
  options.n = std::atoi(argv[2]);
  options.k = std::atoi(argv[3]);
  stride_A = cutlass::make_cute_packed_stride(StrideA{}, {options.m, options.k, 1});
  stride_B = cutlass::make_cute_packed_stride(StrideB{}, {options.n, options.k, 1});
  stride_C = cutlass::make_cute_packed_stride(StrideC{}, {options.m, options.n, 1});
  stride_D = cutlass::make_cute_packed_stride(StrideD{}, {options.m, options.n, 1});
  cutlass::KernelHardwareInfo hw_info;
  hw_info.device_id = 0;
  hw_info.sm_count = std::atoi(argv[4]);
  typename Gemm::Arguments arguments{
      cutlass::gemm::GemmUniversalMode::kGemm,
      {options.m, options.n, options.k},
      {block_A.get(), stride_A, block_B.get(), stride_B},
      {{options.alpha, options.beta}, block_C.get(), stride_C, block_D.get(), stride_D},
      hw_info};
  arguments.scheduler.raster_order = options.raster;
  arguments.scheduler.max_swizzle_size = options.swizzle;
  auto params = Gemm::GemmKernel::to_underlying_arguments(arguments, nullptr);
  const dim3 grid = Gemm::GemmKernel::get_grid_shape(params);
  std::printf("grid %u %u %u\nblock %u\n", grid.x, grid.y, grid.z,
              Gemm::GemmKernel::MaxThreadsPerBlock);
  param_dump::Print(stdout, &params, sizeof(params));
  return 0;
}
