#!/bin/bash
# Checks //gpu:parity_gpu without a GPU: it is self-contained (static cudart, no spdlog/fmt: only
# the C/C++ runtime is dynamic), and it refuses a schedule with an op the executor does not
# implement, naming the op and the line, before touching CUDA (exit 2).
set -euo pipefail
bin=$1
unsupported=$2
source tests/gpu/self_contained.sh  # runfiles (data)
fail() { echo "FAIL: $*" >&2; exit 1; }
[ -x "$bin" ] || fail "$bin is not an executable"
if "$bin" run x.pipe 2>&1 | grep -q "skipped: CUDA (nvcc) was not found"; then
  echo "CUDA was not available at build time: parity_gpu is a stub; nothing more to check"
  exit 0
fi
if command -v ldd >/dev/null; then
  libs=$(non_runtime_libs "$bin")
  [ -z "$libs" ] || fail "parity_gpu links dynamically against: $libs"
fi
set +e
msg=$("$bin" run "$unsupported" 2>&1)
rc=$?
set -e
echo "$msg"
[ "$rc" -eq 2 ] || fail "expected exit 2 for an unsupported op, got $rc"
echo "$msg" | grep -q "unsupported op 'cp.async'" || fail "the message does not name cp.async"
echo "$msg" | grep -q "sgemm_sm80.pipe:40:" || fail "the message does not name the line"
echo "$msg" | grep -qi "cuda" && fail "it reached CUDA before refusing"
set +e
"$bin" run 2>/dev/null; rc=$?
set -e
[ "$rc" -eq 2 ] || fail "usage error must exit 2, got $rc"
echo "ok"
