#!/bin/bash
# One device call (Hopper) for programmatic dependent launch through the executor (issue 25):
# `parity_gpu run` launches the primary grid, then the schedule's grid on the same stream with
# cudaLaunchAttributeProgrammaticStreamSerialization; both interpret (or run host-resolved op
# streams of) their own roles, and `global` buffers are one device allocation both receive.
# Every schedule of pipelines/pdl/ (the good one and the known-bad ones) runs from host-resolved
# op streams and interpreted (--interpret), with a trace; tests/gpu/schedules/pdl_early_trigger
# (the primary triggers at its start, then works before it writes) runs RUNS times with the
# dependent's griddepcontrol.wait before its read (WAIT=1) and after it (WAIT=0).
# Run from the repository root:
#   PARITY_GPU_BIN=.device/parity_gpu OUT=... bash gpu/pdl_executor_batch.sh
# Files back: log.txt and traces.tgz (t/<name>.<mode>.trace + .agents + .log), which
# //tests/gpu:pdl_executor_traces_test replays once committed under traces/pdl_executor/.
# Expected: gemm_then_consumer exit 0 in both modes; bad_primary_hangs exit 1 (hang observed in
# the primary grid, empty[0] or full[0] of a primary cluster; the dependents never pass
# griddepcontrol.wait); bad_read_before_wait, bad_no_wait exit 0 or 1 (1: a stale read, which
# the model allows: P2020); pdl_early_trigger WAIT=1 exit 0 (no stale read), WAIT=0 exit 0 or 1.
set -u
bin=${PARITY_GPU_BIN:-.device/parity_gpu}
out=${OUT:-/tmp/out}
runs=${RUNS:-3}
mkdir -p "$out/t"
log="$out/log.txt"
run() {  # name mode file [args...]
  local name=$1 mode=$2 f=$3
  shift 3
  local flag=""
  [ "$mode" = interpret ] && flag=--interpret
  # `timeout`: barrier.cluster.wait, bar.sync and griddepcontrol.wait have no bounded form; the
  # runner's own watchdog exits first, a kill ends the context.
  timeout 60 "$bin" run "$f" "$@" $flag --timeout-ms 500 --trace "$out/t/$name.$mode.trace" \
    > "$out/t/$name.$mode.log" 2>&1
  local rc=$?
  echo "$name $mode exit=$rc: $(grep -E 'agents:|completed|hang observed|timed out|blocked|trapped|fault|refuses|unsupported|CUDA error|not pattern|global buffers|stale' "$out/t/$name.$mode.log" | tr '\n' ' ' | cut -c1-700)"
}
{
  date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader
  for f in pipelines/pdl/*.pipe; do
    "$bin" resolve "$f" 2>&1 | head -3
    name=$(basename "$f" .pipe)
    run "$name" resolved "$f"
    run "$name" interpret "$f"
  done
  early=tests/gpu/schedules/pdl_early_trigger.pipe
  for k in $(seq 1 "$runs"); do
    run "early_wait.r$k" resolved "$early" -D WAIT=1
    run "early_nowait.r$k" resolved "$early" -D WAIT=0
  done
  run early_wait interpret "$early" -D WAIT=1
  run early_nowait interpret "$early" -D WAIT=0
  tar czf "$out/traces.tgz" -C "$out" t && rm -rf "$out/t"
  echo "pdl_executor_batch: done"
  date -u
} > "$log" 2>&1
tail -c 11000 "$log"
