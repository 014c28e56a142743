#!/usr/bin/env bash
# How `parity explore --threads T` scales on a many-core machine (issue 26 item 4; the figures
# go to bench/RESULTS.md). Run from the repository root:
#   PARITY_BIN=.device/parity OUT=/some/dir bench/threads_scaling.sh [threads_scaling.py options]
# PARITY_BIN: a self-contained parity binary (`bazel build -c opt //tools/cli:parity`; shared
# libraries it needs beside it in lib/, found through LD_LIBRARY_PATH). OUT: where the results
# go (threads_scaling.csv, threads_scaling.md, machine.txt, log.txt). Every command runs under
# a timeout and the whole batch within a budget (threads_scaling.py --budget, default 330 s).
set -euo pipefail
BIN=${PARITY_BIN:-.device/parity}
OUT=${OUT:-/tmp/threads_scaling}
mkdir -p "$OUT"
LIB="$(cd "$(dirname "$BIN")" && pwd)/lib"
if [ -d "$LIB" ]; then
  export LD_LIBRARY_PATH="$LIB${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi
{
  echo "nproc: $(nproc)"
  ldd "$BIN" || true
} >"$OUT/log.txt" 2>&1
python3 bench/threads_scaling.py --bin "$BIN" --out "$OUT" "$@" 2>&1 | tee -a "$OUT/log.txt"
