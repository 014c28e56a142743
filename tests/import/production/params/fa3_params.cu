// The kernel parameters of FlashAttention-3 (flash-attention 0251105a, hopper/) forward, hdim 128,
// bf16, as run_mha_fwd_ builds them (flash_fwd_launch_template.h, run_flash_fwd) for a problem
// given on the command line, printed by param_dump.h. No GPU is needed: the CUDA runtime calls
// run_flash_fwd makes are replaced below, and the launch records its grid, block, cluster and
// parameter bytes instead of launching.
//   fa3_params B H SEQLEN_Q SEQLEN_K CAUSAL(0|1) PARAM_BYTES
// PARAM_BYTES is the size of the kernel's parameter (`.param .b8 param_0[N]` in the PTX).
// Built like cutlass48_params.cu but with `-cudart shared` (so that these definitions are the
// ones run_flash_fwd calls) and a device pass for compute_80 (the sm90 kernels' bodies compile
// away there; only their host side matters).
#include "param_dump.h"

#include "flash_fwd_launch_template.h"

namespace {
size_t g_param_bytes = 0;

void Record(dim3 grid, dim3 block, dim3 cluster, void** args) {
  std::printf("grid %u %u %u\nblock %u %u %u\ncluster %u %u %u\n", grid.x, grid.y, grid.z,
              block.x, block.y, block.z, cluster.x, cluster.y, cluster.z);
  param_dump::Print(stdout, args[0], g_param_bytes);
}
}  // namespace

// Host only: the device pass sees cuda_device_runtime_api.h's device versions of some of these.
#if !defined(__CUDA_ARCH__)
extern "C" {
cudaError_t cudaGetDevice(int* device) {
  *device = 0;
  return cudaSuccess;
}
cudaError_t cudaFuncSetAttribute(const void*, enum cudaFuncAttribute, int) { return cudaSuccess; }
cudaError_t cudaGetLastError(void) { return cudaSuccess; }
cudaError_t cudaPeekAtLastError(void) { return cudaSuccess; }
cudaError_t cudaLaunchKernel(const void*, dim3 grid, dim3 block, void** args, size_t,
                             cudaStream_t) {
  Record(grid, block, dim3(1, 1, 1), args);
  return cudaSuccess;
}
// CUDA 13's `<<<...>>>` (the launch of a kernel without a cluster, cutlass::kernel_launch) calls
// this, not cudaLaunchKernel (crt/host_runtime.h, __cudaLaunch).
cudaError_t __cudaLaunchKernel(cudaKernel_t, dim3 grid, dim3 block, void** args, size_t,
                               cudaStream_t) {
  Record(grid, block, dim3(1, 1, 1), args);
  return cudaSuccess;
}
cudaError_t cudaLaunchKernelExC(const cudaLaunchConfig_t* config, const void*, void** args) {
  dim3 cluster(1, 1, 1);
  for (unsigned i = 0; i < config->numAttrs; ++i) {
    if (config->attrs[i].id == cudaLaunchAttributeClusterDimension) {
      cluster = dim3(config->attrs[i].val.clusterDim.x, config->attrs[i].val.clusterDim.y,
                     config->attrs[i].val.clusterDim.z);
    }
  }
  Record(config->gridDim, config->blockDim, cluster, args);
  return cudaSuccess;
}
}
#endif  // !defined(__CUDA_ARCH__)

int main(int argc, char** argv) {
  if (argc != 7) return 2;
  const int b = std::atoi(argv[1]), h = std::atoi(argv[2]);
  const int seqlen_q = std::atoi(argv[3]), seqlen_k = std::atoi(argv[4]);
  const bool causal = std::atoi(argv[5]) != 0;
  g_param_bytes = static_cast<size_t>(std::atoll(argv[6]));
  // What flash_api.cpp's set_params_fprop and mha_fwd set for contiguous (b, s, h, d) tensors
  // with d = dv = 128, no dropout, softcap, window, paging or splits; the pointers are only
  // encoded into tensor maps.
  static char fake[16];
  Flash_fwd_params p;
  std::memset(&p, 0, sizeof(p));
  p.is_bf16 = true;
  p.q_ptr = p.k_ptr = p.v_ptr = p.o_ptr = fake;
  p.softmax_lse_ptr = fake;
  p.d = p.dv = 128;
  p.d_rounded = p.dv_rounded = 128;
  p.b = b;
  p.h = p.h_k = h;
  p.seqlen_q = seqlen_q;
  p.seqlen_k = seqlen_k;
  p.seqlen_q_rounded = (seqlen_q + 127) / 128 * 128;
  p.seqlen_k_rounded = (seqlen_k + 127) / 128 * 128;
  p.q_row_stride = p.k_row_stride = p.v_row_stride = p.o_row_stride = int64_t{h} * 128;
  p.q_head_stride = p.k_head_stride = p.v_head_stride = p.o_head_stride = 128;
  p.v_dim_stride = 1;
  p.q_batch_stride = p.o_batch_stride = int64_t{seqlen_q} * h * 128;
  p.k_batch_stride = p.v_batch_stride = int64_t{seqlen_k} * h * 128;
  p.scale_softmax = 1.0f / std::sqrt(128.0f);
  p.p_dropout = 1.f;
  p.rp_dropout = 1.f;
  p.is_causal = causal;
  p.window_size_left = -1;
  p.window_size_right = causal ? 0 : -1;
  p.attention_chunk = 0;
  p.num_splits = 1;
  p.arch = 90;
  p.num_sm = 132;
  p.tile_count_semaphore = reinterpret_cast<int*>(fake);
  run_mha_fwd_<90, cutlass::bfloat16_t, 128, 128, false, false, false, false>(p, nullptr);
  return 0;
}
