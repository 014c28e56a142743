#!/bin/bash
# The issue-6 benchmarks on the GPU machine (writes BENCH_OUT, default $OUT/bench.txt): tracing
# overhead and executor-vs-cudaMemcpy bandwidth of gpu/bench/stream_copy.pipe on every SM, and
# the tracing overhead of a real pipeline (pipelines/tma_async_gemm/gemm.pipe).
#   bash gpu/bench/run_bench.sh [PARITY_GPU]
set -u
bin=${1:-.device/parity_gpu}
out=${BENCH_OUT:-${OUT:-/tmp}/bench.txt}
sm=$(nvidia-smi --query-gpu=name --format=csv,noheader | grep -q PCIe && echo 114 || echo 132)
for v in "" "-D BOXR=48" "-D CHECK=0"; do
  echo "# $(date -u '+%F %H:%M') gpu/bench/run_bench.sh: parity_gpu bench gpu/bench/stream_copy.pipe -D NSM=$sm $v --pairs 31" >> "$out"
  timeout 120 "$bin" bench gpu/bench/stream_copy.pipe -D NSM=$sm $v --pairs 31 --out "$out"
done
echo "# $(date -u '+%F %H:%M') gpu/bench/run_bench.sh: parity_gpu bench pipelines/tma_async_gemm/gemm.pipe --pairs 31" >> "$out"
timeout 120 "$bin" bench pipelines/tma_async_gemm/gemm.pipe --pairs 31 --out "$out"
