#!/bin/bash
# One device call (H100) for the control constructs of the language (issue 25): `while`/`break`
# and CTA- and cluster-dependent trip counts (num_clusters, grid_cta, grid_size) in the
# persistent 2-CTA GEMM, a tma.load into a peer CTA completing on that CTA's barrier (mapa of
# both addresses), and a `while` that exceeds its bound (the executor's kFaultBound). Each
# schedule runs from host-resolved op streams and interpreted (--interpret), with a trace.
# Run from the repository root:
#   PARITY_GPU_BIN=.device/parity_gpu OUT=... bash gpu/langctl_batch.sh [all|control]
# (`control`: only while_break and while_bound, the second batch.)
# Files back: log.txt and traces.tgz (t/<name>.<mode>.trace + .agents + .log), which
# //tests/gpu:langctl_traces_test replays once committed under traces/langctl/.
# Expected: persistent*, peer_load: exit 0 (completed, pattern data) in both modes;
# bad_per_cta_trip_count: exit 1 (hang observed on full[0] of cluster 1 CTA 0);
# bad_state_reset_per_tile: exit 1 or 0 (a stale read: timing-dependent; the log shows which);
# while_break: exit 0; while_bound: exit 2 with "a `while` condition still holds after its bound".
set -u
mode=${1:-all}
bin=${PARITY_GPU_BIN:-.device/parity_gpu}
out=${OUT:-/tmp/out}
mkdir -p "$out/t"
log="$out/log.txt"
run() {  # name file [args...]
  local name=$1 f=$2
  shift 2
  for mode in resolved interpret; do
    local flag=""
    [ "$mode" = interpret ] && flag=--interpret
    # `timeout`: barrier.cluster.wait and bar.sync have no bounded form; a kill ends the context.
    timeout 30 "$bin" run "$f" "$@" $flag --timeout-ms 500 --trace "$out/t/$name.$mode.trace" \
      > "$out/t/$name.$mode.log" 2>&1
    local rc=$?
    echo "$name $mode exit=$rc: $(grep -E 'agents:|completed|hang observed|trapped|fault|refuses|unsupported|CUDA error|not pattern|neither pattern' "$out/t/$name.$mode.log" | tr '\n' ' ' | cut -c1-400)"
  done
}
{
  date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader
  if [ "$mode" = all ]; then
    run persistent pipelines/persistent_gemm/persistent.pipe
    run persistent_c3_t7 pipelines/persistent_gemm/persistent.pipe -D CLUSTERS=3 -D TILES=7 -D K_TILES=4 -D STAGES=3
    run peer_load pipelines/persistent_gemm/peer_load.pipe
    run peer_load_i8 pipelines/persistent_gemm/peer_load.pipe -D ITERS=8
    run bad_per_cta_trip_count pipelines/persistent_gemm/bad_per_cta_trip_count.pipe
    run bad_state_reset_per_tile pipelines/persistent_gemm/bad_state_reset_per_tile.pipe
  fi
  run while_break tests/gpu/schedules/while_break.pipe
  run while_bound tests/gpu/schedules/while_bound.pipe
  tar czf "$out/traces.tgz" -C "$out" t && rm -rf "$out/t"
  echo "langctl_batch: done"
  date -u
} > "$log" 2>&1
tail -c 11000 "$log"
