#!/usr/bin/env bash
# Builds and runs a Bazel client of the C++ API in a workspace outside the repository, with the
# WORKSPACE snippet the README gives (local_repository @parity plus what //parity links), in a
# Bazel of its own (a scratch output root): the way another Bazel project depends on Parity.
#   tests/install/bazel_client_test.sh            # from the repository root; .ci/run runs it
# It compiles the API's closure in the client's own output base (a few minutes on 2 cores), so it
# is a step of .ci/run rather than a Bazel test (a Bazel inside a Bazel test's sandbox).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
tmp="$(mktemp -d)"
trap 'bazel --output_user_root="$tmp/root" shutdown >/dev/null 2>&1 || true; rm -rf "$tmp"' EXIT
client="$tmp/client"
mkdir -p "$client"
sed "s|PARITY|$root|g" "$root/tests/install/bazel_client/WORKSPACE.client" >"$client/WORKSPACE"
cp "$root/tests/install/bazel_client/BUILD.client" "$client/BUILD"
cp "$root/tests/install/bazel_client/bazelrc.client" "$client/.bazelrc"
cp "$root/tests/install/client/client.cc" "$client/"
cd "$client"
# The client's own Bazel: no user bazelrc, a scratch output root (the system one says where
# Debian's Bazel is installed).
bazel --nohome_rc --output_user_root="$tmp/root" build --noshow_progress //:client
./bazel-bin/client "$root/pipelines/single_tma_load/count1.pipe" \
  "$root/pipelines/single_tma_load/bad_count1_expect_f32_bytes.pipe"
echo "bazel_client_test: 1 passed, 0 failed"
