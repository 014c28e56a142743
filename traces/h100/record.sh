#!/bin/bash
# Records H100 traces of every bundled example with gpu:parity_gpu (see README.md).
# usage: record.sh PARITY_GPU_BINARY EXAMPLES_DIR OUT_DIR
set -u
bin=$1; examples=$2; out=$3
mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for ex in single_tma_load gemm_tma_multicast_2x2 gemm_empty_count_high gemm_tx_overcount gemm_wrong_producer_phase; do
  echo "=== $ex"
  start=$(date +%s%N)
  timeout 60 "$bin" run "$examples/$ex.pipe" --timeout-ms 1000 --trace "$out/$ex.trace"
  rc=$?; echo "exit=$rc wall_ms=$(( ($(date +%s%N) - start) / 1000000 ))"
done
# Repeat the broken ones to see whether the hardware names the same barrier every time.
for rep in 2 3; do
  for ex in gemm_empty_count_high gemm_tx_overcount gemm_wrong_producer_phase; do
    echo "=== $ex (repeat $rep)"
    timeout 60 "$bin" run "$examples/$ex.pipe" --timeout-ms 1000 | grep -E "hang observed|completed"
  done
done
echo "=== gemm_tma_multicast_2x2 without tracing"
timeout 60 "$bin" run "$examples/gemm_tma_multicast_2x2.pipe" --no-trace
echo "exit=$?"
