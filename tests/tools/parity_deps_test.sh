#!/usr/bin/env bash
# //tools/cli:parity must build without the GPU programs (nvcc): `tools/parity` builds them only
# for `parity gpu ...`, so a first run of any other command does not wait for nvcc. The input is
# `bazel query deps(//tools/cli:parity)` (the genquery :parity_deps).
set -euo pipefail
deps="$TEST_SRCDIR/${TEST_WORKSPACE:-parity}/tests/tools/parity_deps"
[ -s "$deps" ] || { echo "FAIL: no dependency list at $deps" >&2; exit 1; }
# The list really is parity's closure: it names parity and its simulator library.
grep -qx '//tools/cli:parity' "$deps" || { echo "FAIL: //tools/cli:parity not in the list" >&2; exit 1; }
grep -q '^//sim/engine' "$deps" || { echo "FAIL: //sim/engine not in the list" >&2; exit 1; }
if bad=$(grep -E '^//gpu[:/]|^@local_cuda//|_nvcc_' "$deps"); then
  echo "FAIL: //tools/cli:parity depends on GPU targets:" >&2
  echo "$bad" >&2
  exit 1
fi
echo "PASS: $(wc -l <"$deps") targets, none of them GPU programs"
