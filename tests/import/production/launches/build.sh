#!/usr/bin/env bash
# Builds the two programs `parity capture` ran on the H100 (README.md here): CUTLASS 7107b055's
# example 48 and the DeepGEMM 54e22612 harness beside this script. Static cudart; libcuda comes
# from the machine's driver at run time.
#   CUTLASS_ROOT=... DEEPGEMM_ROOT=... DEEPGEMM_CUTLASS_ROOT=... build.sh OUT_DIR
# CUTLASS_ROOT: CUTLASS at 7107b055; DEEPGEMM_ROOT: DeepGEMM at 54e22612; DEEPGEMM_CUTLASS_ROOT:
# CUTLASS at f3fde583 (DeepGEMM's third-party/cutlass submodule at that commit).
set -euo pipefail
out=${1:?OUT_DIR}
: "${CUTLASS_ROOT:?}" "${DEEPGEMM_ROOT:?}" "${DEEPGEMM_CUTLASS_ROOT:?}"
here=$(cd "$(dirname "$0")" && pwd)
nvcc=${NVCC:-/usr/local/cuda/bin/nvcc}
mkdir -p "$out"
flags=(-gencode=arch=compute_90a,code=sm_90a -O3 -std=c++17 --expt-relaxed-constexpr
       -cudart static)
nice -n 10 "$nvcc" "${flags[@]}" -I"$CUTLASS_ROOT/include" -I"$CUTLASS_ROOT/tools/util/include" \
  -I"$CUTLASS_ROOT/examples/common" \
  -o "$out/48_hopper_warp_specialized_gemm" \
  "$CUTLASS_ROOT/examples/48_hopper_warp_specialized_gemm/48_hopper_warp_specialized_gemm.cu"
# DeepGEMM's JIT compiles with -std=c++20 and --expt-extended-lambda (csrc/jit/compiler.hpp).
nice -n 10 "$nvcc" "${flags[@]/-std=c++17/-std=c++20}" --expt-extended-lambda \
  -I"$DEEPGEMM_ROOT/deep_gemm/include" -I"$DEEPGEMM_CUTLASS_ROOT/include" \
  -o "$out/deepgemm_bf16_harness" "$here/deepgemm_bf16_harness.cu" -ldl
