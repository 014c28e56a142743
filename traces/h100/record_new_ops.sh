#!/bin/bash
# Records H100 traces of the schedules that exercise the executor's cp.async, st.async, bulk-copy,
# token, arrive.noComplete and arrive_drop paths (checked by //tests/gpu:h100_new_ops_test).
# usage (repository root, on the GPU machine): record_new_ops.sh PARITY_GPU_BINARY OUT_DIR
set -u
bin=$1; out=$2
mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
while read -r name pipe; do
  echo "=== $name ($pipe)"
  timeout 60 "$bin" run "$pipe" --timeout-ms 500 --trace "$out/$name.trace"
  echo "exit=$?"
done <<'LIST'
gpu_ops tests/gpu/schedules/gpu_ops.pipe
cuda_pipeline__cp_async_arrive_on pipelines/cuda_pipeline/cp_async_arrive_on.pipe
ampere_multistage__sgemm_sm80 pipelines/ampere_multistage/sgemm_sm80.pipe
st_async_ring__ring pipelines/st_async_ring/ring.pipe
LIST
