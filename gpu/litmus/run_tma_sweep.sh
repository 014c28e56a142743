#!/bin/bash
# Runs the TMA placement sweep to completion: tma_sweep exits 3 after a sticky CUDA error in
# case N (the context is dead), so it is restarted with --start N+1, at most 40 times.
# usage: run_tma_sweep.sh TMA_SWEEP_BINARY OUTPUT_FILE [more tma_sweep options]
set -u
bin=$1
out=$2
shift 2
start=0
for attempt in $(seq 1 40); do
  "$bin" --out "$out" --start "$start" "$@"
  rc=$?
  if [ "$rc" -ne 3 ]; then exit "$rc"; fi
  last=$(grep -o '^abort id=[0-9]*' "$out" | tail -n1 | cut -d= -f2)
  echo "run_tma_sweep: restart after sticky error in case $last (attempt $attempt)" >&2
  start=$((last + 1))
done
exit 3
