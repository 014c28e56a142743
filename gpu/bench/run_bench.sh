#!/bin/bash
# The issue-6 benchmarks on the GPU machine (writes BENCH_OUT, default $OUT/bench.txt): tracing
# overhead and executor-vs-cudaMemcpy bandwidth of gpu/bench/stream_copy.pipe on every SM (the
# default: agents run from op streams resolved on the host; once more with --interpret, every
# agent interpreted), the tracing overhead of a real pipeline (pipelines/tma_async_gemm/gemm.pipe),
# and the ceiling: the same streaming copy written by hand (//gpu:ref_copy, gpu/bench/ref_copy.cu).
#   bash gpu/bench/run_bench.sh [PARITY_GPU [REF_COPY]]
set -u
bin=${1:-.device/parity_gpu}
ref=${2:-.device/ref_copy}
out=${BENCH_OUT:-${OUT:-/tmp}/bench.txt}
sm=$(nvidia-smi --query-gpu=name --format=csv,noheader | grep -q PCIe && echo 114 || echo 132)
for v in "" "-D BOXR=48" "-D CHECK=0" "--interpret"; do
  echo "# $(date -u '+%F %H:%M') gpu/bench/run_bench.sh: parity_gpu bench gpu/bench/stream_copy.pipe -D NSM=$sm $v --pairs 31" >> "$out"
  timeout 120 "$bin" bench gpu/bench/stream_copy.pipe -D NSM=$sm $v --pairs 31 --out "$out"
done
echo "# $(date -u '+%F %H:%M') gpu/bench/run_bench.sh: parity_gpu bench pipelines/tma_async_gemm/gemm.pipe --pairs 31" >> "$out"
timeout 120 "$bin" bench pipelines/tma_async_gemm/gemm.pipe --pairs 31 --out "$out"
if [ -x "$ref" ]; then
  echo "# $(date -u '+%F %H:%M') gpu/bench/run_bench.sh: ref_copy --nsm $sm --runs 31 4,2,32,1 4,2,32,2 4,2,48,2 4,2,32,0 (STAGES,PRODUCERS,BOXR,CHECK)" >> "$out"
  timeout 120 "$ref" --nsm $sm --runs 31 4,2,32,1 4,2,32,2 4,2,48,2 4,2,32,0 >> "$out"
fi
