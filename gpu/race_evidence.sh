#!/bin/bash
# One device call (the `run` tool, H100): shows that the races of pipelines/races/ are real on
# silicon. Each known-bad schedule runs RUNS times under `parity_gpu litmus` (seeded start delays
# and per-op jitter, run r in delay mode r % 4; every mbarrier wait bounded by --timeout-ms, so a
# wait that the race turns into a hang is an outcome, not a stuck kernel); the executor poisons
# every buffer before the run, so a `use` that reads a stage before its bytes land counts bad
# chunks ("runs with wrong data" in the histogram), and a bulk store's read-back classifies what
# reached global memory (rb 1 own data; 2 or 3: the overwrite got in). Each schedule also runs
# under `timeout` (a trap or a bar.sync that never completes ends the process, not the batch).
# Run from the repository root with the binary carried in .device/:
#   bash gpu/race_evidence.sh [RUNS [FILE.pipe...]]   (default: the race variants listed below)
# LITMUS_EXTRA adds litmus options (e.g. "--op-jitter 50000": a jitter of tens of microseconds
# before each op lets a peer's issue fall after the reader's `use`); PER_SCHEDULE_S bounds each
# schedule's process (default 90 s), BUDGET_S the batch (default 420 s).
# Files back: log.txt and races/<stem>.h100.txt (the histograms, to copy to traces/races/).
set -u
runs=${1:-400}
shift $(( $# > 0 ? 1 : 0 ))
files=("$@")
if [ ${#files[@]} -eq 0 ]; then
  files=(pipelines/races/bad_use_before_wait.pipe pipelines/races/bad_fresh_barrier_parity.pipe
         pipelines/races/bad_cp_async_use_before_wait.pipe pipelines/races/bad_loop_parity_start.pipe
         pipelines/races/bad_st_async_use_before_wait.pipe
         pipelines/races/bad_multicast_use_before_wait.pipe
         pipelines/races/bad_overwrite_before_store_read.pipe pipelines/races/bad_write_vs_tma.pipe
         pipelines/races/bad_load_over_store.pipe
         pipelines/races/bad_big_tma_use_before_wait.pipe
         pipelines/races/bad_big_cp_async_use_before_wait.pipe)
fi
bin=${PARITY_GPU_BIN:-.device/parity_gpu}
out=${OUT:-/tmp/out}
mkdir -p "$out/races"
log="$out/log.txt"
{
  date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  for f in "${files[@]}"; do
    stem=$(basename "$f" .pipe)
    if [ $SECONDS -gt ${BUDGET_S:-420} ]; then echo "$stem SKIPPED: time budget"; continue; fi
    # shellcheck disable=SC2086  # LITMUS_EXTRA is a list of options
    timeout "${PER_SCHEDULE_S:-90}" "$bin" litmus "$f" --runs "$runs" --timeout-ms 5 --trap-runs 20 \
      ${LITMUS_EXTRA:-} --out "$out/races" > "$out/races/$stem.log" 2>&1
    echo "$stem exit=$? $(head -c 2000 "$out/races/$stem.log" | tr '\n' ' ' | cut -c1-600)"
    grep -h "^# runs with wrong data" "$out/races/$stem.h100.txt" 2>/dev/null | cut -c1-200
  done
  date -u
} > "$log" 2>&1
tail -c 11000 "$log"
