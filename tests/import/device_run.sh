#!/bin/bash
# The H100 agreement batch of `parity import` (issue 28): every kernel of tests/import runs
# natively with the device trace API enabled (gpu/include/parity/trace.cuh; bounded waits, a
# watchdog in the host program) and its imported schedule runs on the schedule executor
# (`parity_gpu run`). Both must complete, or both must stop on the same barrier for a hanging
# twin. The native traces replay against the imported schedules (`parity replay --kernel`).
# Run from the repository root:
#   PARITY_GPU_BIN=.device/parity_gpu NATIVE_DIR=.device/native PIPES_DIR=.device/pipes \
#     OUT=... bash tests/import/device_run.sh
# Optional: ONLY="NAME ..." runs just those kernels, GPU_ONLY=1 only their schedules.
# NATIVE_DIR holds the `bazel build //tests/import:all` binaries *_native, PIPES_DIR the imported
# schedules (tests/import/make_device_pipes.sh). Writes under $OUT: log.txt, native/NAME.trace
# (the kernel's own trace), gpu/NAME.trace (the executor's trace of the imported schedule).
set -u
gpu=${PARITY_GPU_BIN:-.device/parity_gpu}
nat=${NATIVE_DIR:-.device/native}
pipes=${PIPES_DIR:-.device/pipes}
out=${OUT:-/tmp/out}
mkdir -p "$out/native" "$out/gpu"
log="$out/log.txt"
step() {
  local name=$1
  shift
  timeout 30 "$@" > "$out/$name.out" 2>&1
  local rc=$?
  echo "$name exit=$rc: $(grep -v '^ *cluster .* ops$' "$out/$name.out" | tail -c 400 | tr '\n' ' ')"
}
{
  date -u
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  # name | native command (after the binary) | schedule
  while read -r name bin args; do
    # ONLY="a b": just these kernels; GPU_ONLY=1: the schedules only (re-imported pipes).
    if [ -n "${ONLY:-}" ] && [[ " $ONLY " != *" $name "* ]]; then continue; fi
    args=${args//OUTDIR/$out/native}
    [ -n "${GPU_ONLY:-}" ] || step "native_$name" "$nat/$bin" $args
    step "gpu_$name" "$gpu" run "$pipes/$name.pipe" --timeout-ms 1000 --trace "$out/gpu/$name.trace"
  done <<'LIST'
single_tma single_tma_native OUTDIR/single_tma.trace
ws_pipeline ws_pipeline_native OUTDIR/ws_pipeline.trace 6
cluster_pipeline cluster_pipeline_native OUTDIR/cluster_pipeline.trace 5
tma_roundtrip guide_tma_native tma OUTDIR/tma_roundtrip.trace 4
bulk_roundtrip guide_tma_native bulk OUTDIR/bulk_roundtrip.trace 4
cp_async_pipeline cp_async_pipeline_native OUTDIR/cp_async_pipeline.trace 6
ws_pipeline_bad_tx ws_pipeline_bad_tx_native OUTDIR/ws_pipeline_bad_tx.trace 6
ws_pipeline_bad_parity ws_pipeline_bad_parity_native OUTDIR/ws_pipeline_bad_parity.trace 6
ws_pipeline_bad_empty ws_pipeline_bad_empty_native OUTDIR/ws_pipeline_bad_empty.trace 6
ws_pipeline_early_exit ws_pipeline_early_exit_native OUTDIR/ws_pipeline_early_exit.trace 6
cluster_pipeline_bad_release cluster_pipeline_bad_release_native OUTDIR/cluster_pipeline_bad_release.trace 5
tma_roundtrip_no_wait guide_tma_no_wait_native tma OUTDIR/tma_roundtrip_no_wait.trace 4
cp_async_pipeline_short_wait cp_async_pipeline_short_wait_native OUTDIR/cp_async_pipeline_short_wait.trace 6
LIST
  date -u
} > "$log" 2>&1
cat "$log"
