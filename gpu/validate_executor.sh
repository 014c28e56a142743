#!/bin/bash
# One device call (the `run` tool, H100) that checks the executor kernel after a change to it or
# to the shared executor (sim/ir/exec.h): every pipeline, every top-level example and the GPU op
# schedule, run twice, from host-resolved op streams (the default, where the runner can resolve)
# and interpreted (--interpret). Per file: both exit codes, the agents line, the data line; a
# correct schedule must exit 0 with no bad chunk in both modes, and the two modes must agree.
# Run from the repository root with the binary carried in .device/:
#   bash gpu/validate_executor.sh
# Files back: log.txt, traces.tgz (<dir>__<name>.<mode>.trace, to replay on the CPU with
# `parity replay FILE TRACE`). Ends with "validate_executor: N files, M problems".
set -u
bin=${PARITY_GPU_BIN:-.device/parity_gpu}
out=${OUT:-/tmp/out}
mkdir -p "$out/t"
log="$out/log.txt"
problems=0
files=0
{
  date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  for f in pipelines/*/*.pipe sim/examples/*.pipe tests/gpu/schedules/gpu_ops.pipe; do
    name=$(basename "$(dirname "$f")")__$(basename "$f" .pipe)
    files=$((files + 1))
    declare -A rc=()
    for mode in resolved interpret; do
      flag=""
      [ "$mode" = interpret ] && flag=--interpret
      # `timeout`: barrier.cluster.wait and bar.sync have no bounded form; a kill ends the context.
      timeout 30 "$bin" run "$f" $flag --timeout-ms 500 --trace "$out/t/$name.$mode.trace" \
        > "$out/t/$name.$mode.log" 2>&1
      rc[$mode]=$?
      echo "$name $mode exit=${rc[$mode]}: $(grep -E 'agents:|completed|hang observed|trapped|fault|refuses|CUDA error|not pattern|neither pattern' "$out/t/$name.$mode.log" | tr '\n' ' ' | cut -c1-300)"
    done
    if [ "${rc[resolved]}" != "${rc[interpret]}" ]; then
      # A known-bad schedule with a race (an init race, a wait that passes early) traps, hangs or
      # completes depending on timing, so its two runs may differ; a correct one's may not.
      case "$(basename "$f")" in
        bad_*)
          echo "note $name: the modes differ (resolved exit ${rc[resolved]}, interpreted ${rc[interpret]}): a timing-dependent known-bad schedule" ;;
        *)
          echo "PROBLEM $name: the modes disagree (resolved exit ${rc[resolved]}, interpreted ${rc[interpret]})"
          problems=$((problems + 1)) ;;
      esac
    fi
    case "$(basename "$f")" in
      bad_*|gemm_tx_overcount.pipe|gemm_empty_count_high.pipe|gemm_wrong_producer_phase.pipe) ;;
      *)
        for mode in resolved interpret; do
          if [ "${rc[$mode]}" != 0 ] && ! grep -q "refuses\|unsupported op\|unsupported on the GPU" "$out/t/$name.$mode.log"; then
            echo "PROBLEM $name: a correct schedule exits ${rc[$mode]} ($mode)"
            problems=$((problems + 1))
          fi
        done
        ;;
    esac
    unset rc
  done
  tar czf "$out/traces.tgz" -C "$out" t && rm -rf "$out/t"
  echo "validate_executor: $files files, $problems problems"
  date -u
} > "$log" 2>&1
tail -c 11000 "$log"
