#!/bin/bash
# One device call (the `run` tool, H100) for issue 25's memory-ordering litmus tests and the
# FA3-style and persistent-epilogue pipelines.
#   1. litmus/mo_*.pipe (a write, then an arrive of some semantics and scope, a waiter that
#      reads): `parity_gpu litmus`, RUNS runs each with the default delays (run r in delay mode
#      r % 4: none, random start delays, per-op jitter, both), then TIGHT_RUNS runs with no
#      delay at all (every agent starts at once: the arrive follows the stores as closely as the
#      executor allows). The executor poisons the buffer before each run, so a read that sees
#      stale bytes is a run with wrong data (counted per delay mode in each histogram's comments).
#      Every wait is bounded (--timeout-ms) and each test runs under `timeout`.
#   2. pipelines/fa3_forward/*.pipe, persistent_gemm/persistent_epilogue.pipe and its bad
#      variant: `parity_gpu run` from host-resolved op streams and interpreted, with a trace
#      (a bar.sync or cluster wait has no bounded form: `timeout` ends a stuck process), then the
#      race variants under `parity_gpu litmus` (RACE_RUNS runs, --op-jitter 50000) to see whether
#      the race shows as wrong bytes.
# Run from the repository root with the binaries carried in .device/:
#   PARITY_GPU_BIN=.device/parity_gpu OUT=... bash gpu/memory_order_batch.sh
# Files back: log.txt, litmus/<test>.h100.txt (for traces/litmus/), litmus_tight/<test>.h100.txt,
# races/<stem>.h100.txt, traces.tgz (t/<name>.<mode>.trace + .agents + .log).
set -u
bin=${PARITY_GPU_BIN:-.device/parity_gpu}
out=${OUT:-/tmp/out}
runs=${RUNS:-4000}
tight_runs=${TIGHT_RUNS:-2000}
tests=(litmus/mo_*.pipe)
race_runs=${RACE_RUNS:-200}
budget=${BUDGET_S:-480}
mkdir -p "$out/litmus" "$out/litmus_tight" "$out/races" "$out/t"
log="$out/log.txt"
# The machine's own C++ runtime first; the copies in .device/lib where it is too old.
if ! "$bin" resolve litmus/mo_local_release.pipe > /dev/null 2>&1; then
  export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}$(dirname "$bin")/lib
fi
litmus() {  # dir runs file [options...]
  local dir=$1 n=$2 f=$3
  shift 3
  local stem
  stem=$(basename "$f" .pipe)
  if [ $SECONDS -gt "$budget" ]; then echo "$stem ($dir) SKIPPED: time budget"; return; fi
  timeout 120 "$bin" litmus "$f" --runs "$n" --timeout-ms 5 --trap-runs 20 "$@" --out "$out/$dir" \
    > "$out/$dir/$stem.log" 2>&1
  echo "$stem ($dir) exit=$? $(head -c 1500 "$out/$dir/$stem.log" | tr '\n' ' ' | cut -c1-400)"
  grep -h "^# runs with wrong data" "$out/$dir/$stem.h100.txt" 2>/dev/null | cut -c1-200
}
run() {  # name file [args...]
  local name=$1 f=$2
  shift 2
  for mode in resolved interpret; do
    local flag=""
    [ "$mode" = interpret ] && flag=--interpret
    if [ $SECONDS -gt "$budget" ]; then echo "$name $mode SKIPPED: time budget"; continue; fi
    timeout 30 "$bin" run "$f" "$@" $flag --timeout-ms 500 --trace "$out/t/$name.$mode.trace" \
      > "$out/t/$name.$mode.log" 2>&1
    local rc=$?
    echo "$name $mode exit=$rc: $(grep -E 'agents:|completed|hang observed|trapped|fault|refuses|unsupported|CUDA error|not pattern|neither pattern' "$out/t/$name.$mode.log" | tr '\n' ' ' | cut -c1-400)"
  done
}
{
  date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader
  for f in "${tests[@]}"; do litmus litmus "$runs" "$f"; done
  for f in "${tests[@]}"; do
    litmus litmus_tight "$tight_runs" "$f" --start-delay 0 --op-jitter 0
  done
  run fa3_forward pipelines/fa3_forward/forward.pipe
  run fa3_forward_t3 pipelines/fa3_forward/forward.pipe -D TILES=3 -D N_BLOCKS=4 -D STAGES=2
  run fa3_bad_o_write_before_v_consumed pipelines/fa3_forward/bad_o_write_before_v_consumed.pipe
  run fa3_bad_v_load_over_o pipelines/fa3_forward/bad_v_load_over_o.pipe
  run fa3_bad_empty_tile_disagreement pipelines/fa3_forward/bad_empty_tile_disagreement.pipe
  run persistent_epilogue pipelines/persistent_gemm/persistent_epilogue.pipe
  run persistent_epilogue_c2_t5 pipelines/persistent_gemm/persistent_epilogue.pipe -D CLUSTERS=2 -D TILES=5 -D K_TILES=3
  run bad_epilogue_alias_early pipelines/persistent_gemm/bad_epilogue_alias_early.pipe
  for f in pipelines/fa3_forward/bad_o_write_before_v_consumed.pipe \
           pipelines/fa3_forward/bad_v_load_over_o.pipe \
           pipelines/persistent_gemm/bad_epilogue_alias_early.pipe; do
    litmus races "$race_runs" "$f" --op-jitter 50000
  done
  tar czf "$out/traces.tgz" -C "$out" t && rm -rf "$out/t"
  echo "memory_order_batch: done in ${SECONDS} s"
  date -u
} > "$log" 2>&1
tail -c 11000 "$log"
