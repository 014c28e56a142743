#!/bin/bash
# Runs every DIR/*/*.pipe (pipelines/, or sim/examples for its explore/ and rules/) on the GPU
# and prints one line each; traces go to OUT_DIR/<dir>__<name>.trace.
# usage: record_pipelines.sh PARITY_GPU_BINARY PIPELINES_DIR OUT_DIR
set -u
bin=$1; pipes=$2; out=$3
mkdir -p "$out"
for f in "$pipes"/*/*.pipe; do
  name=$(basename "$(dirname "$f")")__$(basename "$f" .pipe)
  start=$(date +%s%N)
  # `timeout`: barrier.cluster.wait and bar.sync have no bounded form; a kill ends the context.
  timeout 30 "$bin" run "$f" --timeout-ms 500 --trace "$out/$name.trace" > "$out/$name.log" 2>&1
  rc=$?
  ms=$(( ($(date +%s%N) - start) / 1000000 ))
  echo "$name exit=$rc ${ms}ms: $(grep -E 'refuses|completed|hang observed|trapped|fault|CUDA error|not pattern' "$out/$name.log" | grep -v 'parity_gpu: agents:' | tr '\n' ' ' | cut -c1-260)"
done
