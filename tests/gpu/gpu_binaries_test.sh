#!/bin/bash
# Checks the GPU binaries without a GPU: they are built, self-contained (static cudart; only the
# C/C++ runtime libraries are dynamic, so they run on a machine that has just the driver), and
# the sweep's case list (tma_sweep --dry-run) still matches the recorded H100 outcomes.
# Without CUDA at build time, cuda_binary builds stubs: then only the stubs' message is checked.
set -euo pipefail
smoke=$1
sweep=$2
recorded=$3
source tests/gpu/self_contained.sh  # runfiles (data)
fail() { echo "FAIL: $*" >&2; exit 1; }

for b in "$smoke" "$sweep"; do
  [ -x "$b" ] || fail "$b is not an executable"
done

if "$smoke" 2>/dev/null | grep -q "skipped: CUDA (nvcc) was not found"; then
  echo "CUDA was not available at build time: GPU binaries are stubs; nothing more to check"
  exit 0
fi

if command -v ldd >/dev/null; then
  for b in "$smoke" "$sweep"; do
    libs=$(non_runtime_libs "$b")
    [ -z "$libs" ] || fail "$b links dynamically against: $libs (must be self-contained)"
    ! ldd "$b" | grep -q cudart || fail "$b links libcudart dynamically"
  done
  echo "ok: both binaries depend only on the C/C++ runtime"
fi

# The host side of the sweep runs without a GPU in --dry-run mode: its case list must be the one
# recorded on the H100 (every field but smem=, which only the GPU knows).
tmp=${TEST_TMPDIR:-/tmp}/dry.txt
"$sweep" --out "$tmp" --dry-run >/dev/null
want=$(grep '^case ' "$recorded" | sed 's/ smem=0x[0-9a-f]*//' | md5sum)
got=$(grep '^case ' "$tmp" | sed 's/ smem=0x[0-9a-f]*//' | md5sum)
n=$(grep -c '^case ' "$tmp")
[ "$n" -gt 500 ] || fail "only $n cases in the dry run"
[ "$want" = "$got" ] || fail "tma_sweep's case list differs from $recorded: re-record it on an H100"
echo "ok: $n sweep cases match the recording"
