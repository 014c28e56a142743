// FlashAttention-3's hdim-128 bf16 forward kernel without a cluster, non-causal (the corpus's
// fa3_fwd_hdim128_bf16), alone in its translation unit for the seeded-bug twins (twin.sh): the
// instantiation file flash_fwd_hdim128_bf16_sm90.cu instantiates run_mha_fwd_, whose switches
// compile three kernels (causal, and non-causal with and without the cluster of 2); this
// instantiates the one run_flash_fwd that run_mha_fwd_ calls for Is_causal = false, ClusterM = 1
// (flash_fwd_launch_template.h), so nvcc compiles one kernel with the same mangled name.
#include "flash_fwd_launch_template.h"

template void run_flash_fwd<90, 128, 128, 1, cutlass::bfloat16_t, cutlass::bfloat16_t,
                            /*Is_causal=*/false, /*Is_local=*/false, /*Has_softcap=*/false,
                            /*Varlen=*/false, /*PagedKVNonTMA=*/false, /*AppendKV=*/false,
                            /*HasQv=*/false, /*PackGQA=*/false, /*Split=*/false,
                            /*V_colmajor=*/false>(Flash_fwd_params& params, cudaStream_t stream);
