#!/bin/bash
# Runs every schedule of sim/examples/explore and sim/examples/rules on the GPU (the five
# top-level examples are record.sh's) and prints one line each; traces go to
# OUT_DIR/<sub>__<name>.trace, the runner's output to OUT_DIR/<sub>__<name>.log.
# usage: record_examples.sh PARITY_GPU_BINARY EXAMPLES_DIR OUT_DIR
set -u
bin=$1; examples=$2; out=$3
mkdir -p "$out"
for f in "$examples"/explore/*.pipe "$examples"/rules/*.pipe; do
  name=$(basename "$(dirname "$f")")__$(basename "$f" .pipe)
  start=$(date +%s%N)
  # `timeout`: barrier.cluster.wait and bar.sync have no bounded form; a kill ends the context.
  timeout 30 "$bin" run "$f" --timeout-ms 500 --trace "$out/$name.trace" > "$out/$name.log" 2>&1
  rc=$?
  ms=$(( ($(date +%s%N) - start) / 1000000 ))
  echo "$name exit=$rc ${ms}ms: $(grep -E 'refuses|completed|hang observed|trapped|fault|CUDA error|not pattern' "$out/$name.log" | grep -v 'parity_gpu: agents:' | tr '\n' ' ' | cut -c1-260)"
done
