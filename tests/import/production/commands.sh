#!/usr/bin/env bash
# Every command that produced ptx/ (run from SRC_ROOT, the extracted sources: README.md). One
# nvcc at a time; each CUTLASS/FA3 translation unit takes minutes.
set -euo pipefail
: "${SRC_ROOT:?set SRC_ROOT (README.md)}"
cd "$SRC_ROOT"
here=${PRODUCTION_DIR:-$(cd "$(dirname "$0")" && pwd)}
C=cutlass-7107b055
DG=deepgemm-54e22612
FA=fa-0251105a/hopper
DG_FLAGS=(-I$DG/deep_gemm/include -Icutlass-f3fde583/include --expt-extended-lambda
          --diag-suppress=39,161,174,177,186,940,550)
# FA3's setup.py flags; the feature switches it offers turn off what hdim-128 bf16 forward without
# varlen, paging, split, softcap, local or packgqa does not instantiate (three kernels remain:
# causal, and non-causal with and without the cluster of 2).
FA_FLAGS=(-I$FA -Icutlass-71275920/include --expt-extended-lambda --use_fast_math
          -DCUTE_SM90_EXTENDED_MMA_SHAPES_ENABLED -DCUTLASS_ENABLE_GDC_FOR_SM90
          -DCUTLASS_DEBUG_TRACE_LEVEL=0 -DNDEBUG -DFLASHATTENTION_DISABLE_LOCAL
          -DFLASHATTENTION_DISABLE_VARLEN -DFLASHATTENTION_DISABLE_APPENDKV
          -DFLASHATTENTION_DISABLE_PAGEDKV -DFLASHATTENTION_DISABLE_SPLIT
          -DFLASHATTENTION_DISABLE_SOFTCAP -DFLASHATTENTION_DISABLE_PACKGQA
          -DFLASHATTENTION_DISABLE_BACKWARD -DFLASHATTENTION_DISABLE_SM8x)
DG_CU=$here/src/deepgemm_sm90_bf16_gemm.cu
DG_IMPL=$DG/deep_gemm/include/deep_gemm/impls/sm90_bf16_gemm.cuh
DG_FP8_IMPL=$DG/deep_gemm/include/deep_gemm/impls/sm90_fp8_gemm_1d2d.cuh

case "${1:-all}" in
  all|kernels)
    "$here/compile.sh" cutlass48_ws_cooperative \
      $C/examples/48_hopper_warp_specialized_gemm/48_hopper_warp_specialized_gemm.cu \
      -I$C/include -I$C/tools/util/include -I$C/examples/common
    CXX_STD=c++20 "$here/compile.sh" deepgemm_sm90_bf16_gemm "$DG_CU" "${DG_FLAGS[@]}"
    "$here/compile.sh" fa3_fwd_hdim128_bf16 $FA/instantiations/flash_fwd_hdim128_bf16_sm90.cu \
      "${FA_FLAGS[@]}"
    CXX_STD=c++20 "$here/compile.sh" deepgemm_sm90_fp8_gemm_1d2d \
      "$here/src/deepgemm_sm90_fp8_gemm_1d2d.cu" "${DG_FLAGS[@]}"
    # Example 49's four kernels: compile.sh's flags give this PTX from src/cutlass49_kernels.cu;
    # the committed one is what nvcc kept (-keep) while building params/cutlass49_params.cu,
    # which includes that file and adds host code only (same device code, same flags), its
    # paths rewritten as compile.sh does.
    "$here/compile.sh" cutlass49_kernels "$here/src/cutlass49_kernels.cu" \
      -I$C/include -I$C/tools/util/include -I$C/examples -I$C/examples/common
    ;;&
  all|params)
    # The parameter dumpers (params/): host programs that build each kernel's Params with the
    # project's own host code; no GPU. Their output goes through params_to_args.py.
    out=${PARAMS_OUT:-/tmp}
    nice -n 10 /usr/local/cuda/bin/nvcc -gencode=arch=compute_90a,code=compute_90a -O3 \
      -lineinfo -keep -keep-dir "$out" \
      -std=c++17 --expt-relaxed-constexpr -DCUTLASS_ENABLE_DIRECT_CUDA_DRIVER_CALL \
      -I"$here" -I"$here/params" -I$C/include -I$C/tools/util/include -I$C/examples \
      -I$C/examples/common -o "$out/cutlass49_params" "$here/params/cutlass49_params.cu"
    nice -n 10 /usr/local/cuda/bin/nvcc -gencode=arch=compute_80,code=compute_80 -O1 \
      -std=c++17 --expt-relaxed-constexpr -cudart shared -DCUTLASS_ENABLE_DIRECT_CUDA_DRIVER_CALL \
      -I"$here/params" "${FA_FLAGS[@]}" -o "$out/fa3_params" "$here/params/fa3_params.cu"
    ;;&
  all|manifest)
    # The manifest's parameter options from the dumps (PARITY: a `parity` binary). FA3's causal
    # kernel (the one run_mha_fwd_ launches for is_causal; its parameter is 2944 bytes):
    out=${PARAMS_OUT:-/tmp}
    E=$(awk -F'\t' '$1 == "fa3_fwd_hdim128_bf16_causal" { split($4, a, " "); print a[2] }' \
      "$here/kernels.tsv")
    xz -dc "$here/ptx/fa3_fwd_hdim128_bf16.ptx.xz" > "$out/fa3_fwd_hdim128_bf16.ptx"
    LD_LIBRARY_PATH=/usr/local/cuda/lib64 "$out/fa3_params" 1 1 256 256 1 2944 > "$out/fa3_causal.dump"
    python3 "$here/params/params_to_args.py" "${PARITY:?}" "$out/fa3_causal.dump" \
      "$out/fa3_fwd_hdim128_bf16.ptx" -- --entry "$E" --block 384 --clusters 1
    ;;&
  all|twins)
    # Seeded-bug twins of DeepGEMM's bf16 GEMM, one edited line each (issue 35 item 8).
    export CXX_STD=c++20
    "$here/twin.sh" deepgemm_bf16_bad_empty_count $DG_IMPL \
      '117s|init(kNumTMAMulticast \* kNumMathThreads / 32)|init(kNumTMAMulticast * kNumMathThreads / 32 + 1)|' \
      "$DG_CU" "${DG_FLAGS[@]}"
    "$here/twin.sh" deepgemm_bf16_short_init $DG_IMPL \
      '115s|i < kNumStages;|i < kNumStages - 1;|' "$DG_CU" "${DG_FLAGS[@]}"
    "$here/twin.sh" deepgemm_bf16_no_full_wait $DG_IMPL \
      '249s|full_barriers\[stage_idx\]->wait(phase);|;|' "$DG_CU" "${DG_FLAGS[@]}"
    "$here/twin.sh" deepgemm_bf16_bad_parity $DG_IMPL \
      '249s|wait(phase)|wait(k_block_idx \& 1)|' "$DG_CU" "${DG_FLAGS[@]}"
    "$here/twin.sh" deepgemm_bf16_release_own_cta $DG_IMPL \
      '237s|scheduler.is_peer_cta_alive ? lane_idx : cute::block_rank_in_cluster()|cute::block_rank_in_cluster()|' \
      "$DG_CU" "${DG_FLAGS[@]}"
    # A twin of DeepGEMM's fp8 1d2d GEMM (issue 35 item 8: a new corpus kernel).
    "$here/twin.sh" deepgemm_fp8_bad_empty_count $DG_FP8_IMPL \
      '136s|init(kNumTMAMulticast \* kNumMathThreads / 32)|init(kNumTMAMulticast * kNumMathThreads / 32 + 1)|' \
      "$here/src/deepgemm_sm90_fp8_gemm_1d2d.cu" "${DG_FLAGS[@]}"
    # Twins of CUTLASS example 49's KernelTma and cooperative kernels and of FA3's hdim-128 kernel
    # without a cluster: each twin's translation unit holds its one kernel (src/*_one_kernel.cu),
    # so that an edit of a header every kernel includes (sm90_pipeline.hpp) changes that kernel
    # only; the kernel's mangled name, parameters and arguments are the corpus kernel's.
    export CXX_STD=c++17
    C49=(-I$C/include -I$C/tools/util/include -I$C/examples -I$C/examples/common)
    C_PIPE=$C/include/cutlass/pipeline/sm90_pipeline.hpp
    "$here/twin.sh" cutlass49_kernel_tma_no_full_wait $C_PIPE \
      '613s|full_barrier_ptr_\[stage\].wait(phase);|;|' \
      "$here/src/cutlass49_one_kernel.cu" "${C49[@]}" -DCORPUS49_RUNNER=corpus49::KernelTma
    "$here/twin.sh" cutlass49_cooperative_bad_parity $C_PIPE \
      '513s|wait(phase);|wait(phase ^ 1);|' \
      "$here/src/cutlass49_one_kernel.cu" "${C49[@]}" -DCORPUS49_RUNNER=corpus49::Cooperative
    # Example 48's translation unit holds its one kernel already.
    "$here/twin.sh" cutlass48_no_full_wait $C_PIPE \
      '621s|full_barrier_ptr_\[stage\].wait(phase);|;|' \
      $C/examples/48_hopper_warp_specialized_gemm/48_hopper_warp_specialized_gemm.cu \
      -I$C/include -I$C/tools/util/include -I$C/examples/common
    "$here/twin.sh" fa3_hdim128_no_q_wait $FA/mainloop_fwd_sm90_tma_gmma_ws.hpp \
      '1096s|barrier_Q.wait(work_idx % 2);|;|' \
      "$here/src/fa3_fwd_hdim128_bf16_one_kernel.cu" "${FA_FLAGS[@]}"
    "$here/twin.sh" fa3_hdim128_short_init cutlass-71275920/include/cutlass/arch/barrier.h \
      '135s|i < Stages;|i < Stages - 1;|' \
      "$here/src/fa3_fwd_hdim128_bf16_one_kernel.cu" "${FA_FLAGS[@]}"
    ;;
esac
