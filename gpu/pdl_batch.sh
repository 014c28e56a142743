#!/bin/bash
# One device call (H100) for programmatic dependent launch (issue 25): gpu/litmus/pdl_litmus
# under every variant and three primary delays (0, ~0.1 ms, ~1 ms of clock64 spinning before
# the primary writes), 200 runs each, every run under a 60 s watchdog per variant.
# Run from the repository root:
#   PDL_LITMUS_BIN=.device/pdl_litmus OUT=... bash gpu/pdl_batch.sh
# Files back: log.txt (one line per variant) and pdl/<variant>.d<delay>.txt (the program's
# output), which //tests/verifier:pdl_evidence_test checks once committed under traces/pdl/.
# Expected: `wait` and `serial`: stale_runs=0 at every delay; `nowait` with a delay: stale runs
# (the dependent starts before the primary's writes); nowait_late / nowait_none: recorded.
set -u
bin=${PDL_LITMUS_BIN:-.device/pdl_litmus}
out=${OUT:-/tmp/out}
runs=${PDL_RUNS:-200}
mkdir -p "$out/pdl"
log="$out/log.txt"
{
  date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader
  for delay in 0 200000 2000000; do
    for v in wait nowait nowait_late nowait_none serial; do
      f="$out/pdl/$v.d$delay.txt"
      timeout 60 "$bin" --variant "$v" --runs "$runs" --delay "$delay" > "$f" 2>&1
      rc=$?
      echo "$v delay=$delay exit=$rc: $(grep -E '^summary|^hist|error' "$f" | tr '\n' ' ')"
    done
  done
  echo "pdl_batch: done"
  date -u
} > "$log" 2>&1
tail -c 11000 "$log"
