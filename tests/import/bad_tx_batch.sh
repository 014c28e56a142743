#!/bin/bash
# One device call for the expect_tx twin of issue 28 (ws_pipeline_bad_tx: expect_tx of half the
# 8192-byte TMA tile): what the hardware does when fewer bytes are announced than a copy
# delivers, and how often the kernel and its imported schedule complete or hang.
#   1. gpu/litmus/tx_split: one TMA / bulk copy of N bytes with E <= N announced (before or
#      after the copy), a warp watching the barrier word; per configuration how many runs
#      completed the phase and the values the word went through.
#   2. the native kernel (tests/import/native, trace API on) RUNS times, and the correct
#      ws_pipeline 3 times as a control;
#   3. its imported schedule on the executor (`parity_gpu run`, host-resolved op streams) RUNS
#      times, and with --interpret RUNS/2 times;
#   4. `parity_gpu litmus` (seeded delays between agents) on the schedule, and on the litmus
#      tests litmus/tx_short_expect_*.pipe.
# Every process runs under `timeout`. Run from the repository root:
#   PARITY_GPU_BIN=.device/parity_gpu NATIVE_DIR=.device/native PIPES_DIR=.device/pipes \
#     TX_SPLIT_BIN=.device/tx_split OUT=... bash tests/import/bad_tx_batch.sh
# Files back under $OUT: log.txt (summary: one histogram line per part), tx_split.txt,
# native/bad_tx.N.{out,trace}, gpu/bad_tx.N.{out,trace}, gpu/interp.N.out, litmus/*.h100.txt.
set -u
gpu=${PARITY_GPU_BIN:-.device/parity_gpu}
nat=${NATIVE_DIR:-.device/native}
pipes=${PIPES_DIR:-.device/pipes}
tx=${TX_SPLIT_BIN:-.device/tx_split}
out=${OUT:-/tmp/out}
runs=${RUNS:-40}
mkdir -p "$out/native" "$out/gpu" "$out/litmus"
log="$out/log.txt"
# hist NAME FILE...: the first line of each file, counted.
hist() {
  local name=$1
  shift
  echo "$name: $(for f in "$@"; do head -n1 "$f" | sed 's/, [0-9]* records.*//; s/trace .*//'; done | sort | uniq -c | tr '\n' ';')"
}
{
  date -u
  nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader
  timeout 300 "$tx" --runs "${TX_RUNS:-60}" > "$out/tx_split.txt" 2>&1
  echo "tx_split exit=$?: $(grep -c '^cfg' "$out/tx_split.txt") configurations"
  grep '^cfg copy=tma64x64s128 N=8192 E=4096 ' "$out/tx_split.txt" | sed 's/ values_hist.*//'
  echo "tx_split: configurations with a completed phase while E < N:"
  grep '^cfg' "$out/tx_split.txt" | awk '{split($3,n,"=");split($4,e,"="); if (e[2] < n[2] && $0 !~ / completed=0 /) print}' | sed 's/ values_hist.*//'
  for i in $(seq 1 "$runs"); do
    timeout 30 "$nat/ws_pipeline_bad_tx_native" "$out/native/bad_tx.$i.trace" 6 \
      > "$out/native/bad_tx.$i.out" 2>&1
    echo "exit=$?" >> "$out/native/bad_tx.$i.out"
  done
  hist "native ws_pipeline_bad_tx x$runs" "$out"/native/bad_tx.*.out
  for i in 1 2 3; do
    timeout 30 "$nat/ws_pipeline_native" "$out/native/ws_pipeline.$i.trace" 6 \
      > "$out/native/ws_pipeline.$i.out" 2>&1
  done
  hist "native ws_pipeline x3" "$out"/native/ws_pipeline.*.out
  for i in $(seq 1 "$runs"); do
    timeout 30 "$gpu" run "$pipes/ws_pipeline_bad_tx.pipe" --timeout-ms 100 \
      --trace "$out/gpu/bad_tx.$i.trace" > "$out/gpu/bad_tx.$i.out" 2>&1
    rc=$?
    { echo "exit=$rc"; cat "$out/gpu/bad_tx.$i.out"; } > "$out/gpu/bad_tx.$i.tmp"
    mv "$out/gpu/bad_tx.$i.tmp" "$out/gpu/bad_tx.$i.out"
  done
  hist "executor ws_pipeline_bad_tx x$runs (resolved)" "$out"/gpu/bad_tx.*.out
  for i in $(seq 1 $((runs / 2))); do
    timeout 30 "$gpu" run "$pipes/ws_pipeline_bad_tx.pipe" --interpret --timeout-ms 100 \
      --no-trace > "$out/gpu/interp.$i.out" 2>&1
    rc=$?
    { echo "exit=$rc"; cat "$out/gpu/interp.$i.out"; } > "$out/gpu/interp.$i.tmp"
    mv "$out/gpu/interp.$i.tmp" "$out/gpu/interp.$i.out"
  done
  hist "executor ws_pipeline_bad_tx x$((runs / 2)) (--interpret)" "$out"/gpu/interp.*.out
  timeout 120 "$gpu" litmus "$pipes/ws_pipeline_bad_tx.pipe" --runs 200 --out "$out/litmus" \
    --seed 1 --start-delay 4000 --op-jitter 400 --timeout-ms 5 2>&1 | tail -n 8
  for t in litmus/tx_short_expect_*.pipe; do
    timeout 120 "$gpu" litmus "$t" --runs 500 --out "$out/litmus" \
      --seed 1 --start-delay 4000 --op-jitter 400 --timeout-ms 5 2>&1 | tail -n 6
  done
  echo "bad_tx_batch: done"
  date -u
} > "$log" 2>&1
tail -c 11000 "$log"
