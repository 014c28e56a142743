#!/bin/bash
# One device call (the `run` tool, H100): everything GPU-side that this tree records, written
# under $OUT. Run from the repository root with the binary carried in .device/:
#   bash gpu/device_run.sh [litmus-only|all] [RUNS]
# Files back (at most 8): log.txt, bench.txt, litmus.tgz, pipelines.tgz, gpu_ops.trace.
set -u
mode=${1:-all}; runs=${2:-1000}
bin=.device/parity_gpu
out=${OUT:-/tmp/out}
mkdir -p "$out/litmus" "$out/pl"
log="$out/log.txt"
{
  date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader
  if [ "$mode" = all ]; then
    echo "=== gpu_ops"
    timeout 60 $bin run tests/gpu/schedules/gpu_ops.pipe --timeout-ms 500 --trace "$out/gpu_ops.trace"; echo "exit=$?"
    echo "=== pipelines"
    timeout 300 bash traces/h100/record_pipelines.sh $bin pipelines "$out/pl"
    tar czf "$out/pipelines.tgz" -C "$out" pl && rm -rf "$out/pl"
    echo "=== bench"
    sm=$(nvidia-smi --query-gpu=name --format=csv,noheader | grep -q PCIe && echo 114 || echo 132)
    for v in "" "-D BOXR=48" "-D PRODUCERS=4 -D BOXR=48" "-D PRODUCERS=1" "-D CHECK=0 -D BOXR=48"; do
      echo "# $(date -u +%F) gpu/device_run.sh: parity_gpu bench gpu/bench/stream_copy.pipe -D NSM=$sm $v --pairs 31" >> "$out/bench.txt"
      timeout 120 $bin bench gpu/bench/stream_copy.pipe -D NSM=$sm $v --pairs 31 --out "$out/bench.txt"; echo "exit=$?"
    done
    echo "# parity_gpu bench pipelines/tma_async_gemm/gemm.pipe --pairs 31" >> "$out/bench.txt"
    timeout 120 $bin bench pipelines/tma_async_gemm/gemm.pipe --pairs 31 --out "$out/bench.txt"; echo "exit=$?"
  fi
  echo "=== litmus ($runs runs)"
  for f in litmus/*.pipe; do
    if [ $SECONDS -gt ${BUDGET_S:-500} ]; then echo "$(basename "$f") SKIPPED: time budget"; continue; fi
    timeout 30 $bin litmus "$f" --runs "$runs" --out "$out/litmus" > "$out/litmus/$(basename "$f" .pipe).log" 2>&1
    rc=$?
    echo "$(basename "$f") exit=$rc $(head -c 300 "$out/litmus/$(basename "$f" .pipe).log" | head -3 | tr '\n' ' ')"
  done
  tar czf "$out/litmus.tgz" -C "$out" litmus && rm -rf "$out/litmus"
  date -u
} > "$log" 2>&1
tail -c 11000 "$log"
