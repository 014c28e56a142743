#!/usr/bin/env bash
# A call of `bazel build` from a shell with another PATH (pyenv, a virtualenv, an IDE, a CI step)
# must execute no action: the project's .bazelrc gives every action a fixed environment
# (--incompatible_strict_action_env, --shell_executable) and nvcc is found by the repository rule
# third_party/cuda.bzl, not on PATH.
#
# A nested Bazel (its own output root under /tmp: the sandbox's TEST_TMPDIR is too long for
# Bazel's Unix socket; no ~/.bazelrc, so no shared disk cache) builds a small workspace with this
# project's .bazelrc and cuda.bzl: a C++ library and binary and a shell genrule. It builds once,
# then again with another PATH, LD_LIBRARY_PATH and USER-unrelated variables, and asserts from
# Bazel's own process summary and --explain log that the second build executed nothing. A control
# build with the strict environment turned off must execute again: the assertion can fail.
set -euo pipefail

rc_file="$TEST_SRCDIR/${TEST_WORKSPACE:-parity}/.bazelrc"
cuda_bzl="$TEST_SRCDIR/${TEST_WORKSPACE:-parity}/third_party/cuda.bzl"
[ -f "$rc_file" ] || { echo "missing $rc_file" >&2; exit 1; }
[ -f "$cuda_bzl" ] || { echo "missing $cuda_bzl" >&2; exit 1; }
bazel_bin=$(command -v bazel) || { echo "no bazel on PATH ($PATH)" >&2; exit 1; }
# The offline stand-ins for rules_cc and friends (.bazelignore'd, so no data dependency): found
# through the runfile's link into the source tree (the test runs unsandboxed).
repo_root=$(dirname "$(readlink -f "$rc_file")")
third_party="$repo_root/third_party"
[ -f "$third_party/rules_cc/WORKSPACE" ] || { echo "no rules_cc stand-in under $third_party" >&2; exit 1; }

tmp=$(mktemp -d /tmp/parity_action_env.XXXXXX)
ws="$tmp/ws"
root="$tmp/root"
# Startup options: our own output root, no user rc file (so no shared disk cache: a cache hit
# would hide an execution from the process count), and a server that exits soon if left behind.
startup=(--output_user_root="$root" --nohome_rc --max_idle_secs=60)
cleanup() {
  (cd "$ws" && "$bazel_bin" "${startup[@]}" shutdown >/dev/null 2>&1) || true
  chmod -R u+w "$tmp" 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT

mkdir -p "$ws"
cp "$rc_file" "$ws/.bazelrc"
cp "$cuda_bzl" "$ws/cuda.bzl"
# As the project's WORKSPACE: Bazel's own downloads replaced by the offline stand-ins.
cat >"$ws/WORKSPACE" <<EOF
workspace(name = "action_env")
local_repository(name = "rules_cc", path = "$third_party/rules_cc")
local_repository(name = "rules_java", path = "$third_party/rules_java")
local_repository(name = "remote_coverage_tools", path = "$third_party/remote_coverage_tools")
load("//:cuda.bzl", "cuda_configure")
cuda_configure(name = "local_cuda")
EOF
cat >"$ws/BUILD" <<'EOF'
load("@local_cuda//:defs.bzl", "CUDA_AVAILABLE")
cc_library(name = "lib", srcs = ["lib.cc"], hdrs = ["lib.h"])
cc_binary(name = "main", srcs = ["main.cc"], deps = [":lib"])
genrule(
    name = "gen",
    outs = ["gen.txt"],
    cmd = "echo cuda=%s > $@" % CUDA_AVAILABLE,
)
EOF
printf 'int Answer();\n' >"$ws/lib.h"
printf '#include "lib.h"\nint Answer() { return 42; }\n' >"$ws/lib.cc"
printf '#include "lib.h"\nint main() { return Answer() == 42 ? 0 : 1; }\n' >"$ws/main.cc"

# Runs `bazel build` with the environment given as NAME=VALUE words; prints how many processes
# other than Bazel's internal ones it executed (from "INFO: N processes: K internal, ...").
build() {
  local log="$tmp/build.log"
  (cd "$ws" && env "$@" "$bazel_bin" "${startup[@]}" build --explain="$tmp/explain.log" \
     --verbose_explanations //:main //:gen) >"$log" 2>&1 || {
    cat "$log" >&2
    echo "FAIL: the build failed" >&2
    exit 1
  }
  local line total internal
  line=$(grep -E '^INFO: [0-9]+ process(es)?' "$log" | tail -1)
  [ -n "$line" ] || { cat "$log" >&2; echo "FAIL: no process summary" >&2; exit 1; }
  total=$(sed -E 's/^INFO: ([0-9]+) process.*/\1/' <<<"$line")
  internal=$(grep -oE '[0-9]+ internal' <<<"$line" | grep -oE '[0-9]+' || echo 0)
  echo $((total - internal))
}

base_path="/usr/local/bin:/usr/bin:/bin"
first=$(build PATH="$base_path" HOME="$tmp")
[ "$first" -gt 0 ] || { echo "FAIL: the first build executed nothing ($first)" >&2; exit 1; }

# Another PATH (a directory first, the same directories in another order), LD_LIBRARY_PATH and a
# virtualenv's variables.
mkdir -p "$tmp/venv/bin"
second=$(build PATH="$tmp/venv/bin:/bin:/usr/bin:/usr/local/bin" HOME="$tmp" \
               LD_LIBRARY_PATH="$tmp/venv/lib" VIRTUAL_ENV="$tmp/venv" PYTHONPATH="$tmp/venv")
if [ "$second" -ne 0 ]; then
  echo "FAIL: a build with another PATH executed $second processes:" >&2
  grep -E '^Executing action' "$tmp/explain.log" >&2 || cat "$tmp/explain.log" >&2
  exit 1
fi
# Bazel's workspace status action runs on every build (internal, unconditional): not ours.
if grep -E '^Executing action' "$tmp/explain.log" | grep -qv 'BazelWorkspaceStatusAction'; then
  echo "FAIL: --explain lists executed actions:" >&2
  grep -E '^Executing action' "$tmp/explain.log" >&2
  exit 1
fi

# Control: with the caller's PATH passed to actions again, the same change re-executes them,
# so the two checks above can fail.
control() {
  (cd "$ws" && env "$@" "$bazel_bin" "${startup[@]}" build --noincompatible_strict_action_env \
     //:main //:gen) >"$tmp/control.log" 2>&1 || { cat "$tmp/control.log" >&2; exit 1; }
  grep -E '^INFO: [0-9]+ process(es)?' "$tmp/control.log" | tail -1
}
control PATH="$base_path" HOME="$tmp" >/dev/null
line=$(control PATH="$tmp/venv/bin:$base_path" HOME="$tmp")
if ! grep -qE '[0-9]+ (processwrapper-sandbox|local|linux-sandbox)' <<<"$line"; then
  echo "FAIL: the control build with the caller's PATH executed nothing: $line" >&2
  exit 1
fi
echo "PASS: first build $first processes, rebuild with another PATH 0; control: $line"
