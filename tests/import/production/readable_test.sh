#!/usr/bin/env bash
# Issue 35 item 5, readable schedules, on the corpus's DeepGEMM kernel (kernels.tsv's arguments):
# its operations cite the kernel's own lines (the outermost frame of the .loc inlining chain,
# not barrier.h's mbarrier.try_wait), its two barrier rings are named by their roles, the A and
# B stages and the D tile are separate buffers, and each warp's k-block loop is re-rolled into
# ONE `for` over the 64 k-blocks.
set -uo pipefail
parity="$PWD/tools/cli/parity"
dir="$PWD/tests/import/production"
tmp="${TEST_TMPDIR:-$(mktemp -d)}"
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
expect() {  # expect WHAT COUNT PATTERN: the schedule has COUNT lines matching PATTERN (ERE)
  local got
  got=$(grep -cE -- "$3" "$tmp/dg.pipe")
  [ "$got" = "$2" ] || fail "$1: $got lines match /$3/, expected $2"
}

name=deepgemm_sm90_bf16_gemm
line=$(awk -F'\t' -v n="$name" '$1 == n' "$dir/kernels.tsv")
[ -n "$line" ] || { echo "FAIL: $name is not in kernels.tsv"; exit 1; }
ptx=$(echo "$line" | cut -f3)
read -r -a argv <<< "$(echo "$line" | cut -f4)"
xz -dc "$PWD/$ptx" > "$tmp/dg.ptx" || { echo "FAIL: cannot decompress $ptx"; exit 1; }
"$parity" import "$tmp/dg.ptx" "${argv[@]}" -o "$tmp/dg.pipe" > "$tmp/import.log" 2>&1 ||
  { echo "FAIL: import: $(tail -2 "$tmp/import.log")"; exit 1; }

# Barriers by role: `full` (TMA transactions fill it, the math warps wait) and `empty` (the math
# warps arrive, the producer waits), never by their offset in the dynamic shared memory.
expect "full barrier" 1 '^barrier full\[6\] count 1 '
expect "empty barrier" 1 '^barrier empty\[6\] count 16 '
expect "offset names" 0 '^barrier smem_buffer'
# Buffers: A and B (two tensor maps load them) and the D tile (a third stores it).
expect "A stages" 1 '^buffer smem_buffer_32768\[6\] bytes 16384 .*: tmap4\)$'
expect "B stages" 1 '^buffer smem_buffer_131072\[6\] bytes 16384 .*: tmap5\)$'
expect "D tile" 1 '^buffer smem_buffer\[2\] bytes 16384 .*: tmap6\)$'
# Sources: the kernel's lines (sm90_bf16_gemm.cuh), no header frame of an inlined call.
expect "header frames" 0 '\((barrier|utils|tma_copy|sm90)\.(h|cuh):[0-9]+\)'
# The math warps: warp 0 (it also releases), warps 1-3 and warps 4-7 (each warpgroup arrives on
# its own tensor core's wgmma barriers, so the two warpgroups are roles of their own).
expect "consumers' full waits" 3 '^    wait full\[k % 6\] parity \(k / 6\) & 1 +#.*\(sm90_bf16_gemm\.cuh:[0-9]+\)$'
# One loop per warp over the 64 k-blocks: the producer's (one per CTA: CTA 0 multicasts A), the
# three math roles' and the two tensor cores', and the loops that initialise the tensor cores'
# barriers (one element per k-block: 2 per warpgroup); no wait outside them but the producers'
# drain of the last six stages.
expect "producer loops" 2 '^    wait empty\[k % 6\] parity \(\(k / 6\) & 1\) \^ 1 '
expect "k-block loops" 11 '^  for k in 0 \.\. 64 \{'
expect "full waits" 3 'wait full\['
expect "empty waits" 4 'wait empty\['

if [ "$fails" -gt 0 ]; then
  echo "$fails failures; the schedule:"
  sed -n '1,80p' "$tmp/dg.pipe"
  exit 1
fi
echo "ok: $name reads as its source does"
