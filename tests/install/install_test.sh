#!/usr/bin/env bash
# Installs the C++ API from the files Bazel built (tools/install_layout.sh, the last step of
# tools/install) into a scratch prefix, then builds and runs a client project outside the
# repository against it twice: with CMake (find_package(Parity), target Parity::parity) and with
# pkg-config and a plain compiler line. The client checks a clean and a deadlocking schedule.
set -euo pipefail
runfiles="${TEST_SRCDIR:-$PWD/..}/parity"
cd "$runfiles"
tmp="${TEST_TMPDIR:-$(mktemp -d)}"
prefix="$tmp/prefix with space"
version="$(sed -n 's/.*kParityVersion\[\] = "\([^"]*\)".*/\1/p' tools/cli/version.h)"
[ -n "$version" ] || { echo "no version in tools/cli/version.h" >&2; exit 1; }
tools/install_layout.sh parity/parity_archive.a parity/parity_archive.linkflags parity/parity.h \
  "$version" "$prefix"

for f in include/parity/parity.h lib/libparity.a lib/pkgconfig/parity.pc \
         lib/cmake/Parity/ParityConfig.cmake lib/cmake/Parity/ParityConfigVersion.cmake; do
  [ -f "$prefix/$f" ] || { echo "missing $prefix/$f" >&2; exit 1; }
done
defined="$(nm -C --defined-only "$prefix/lib/libparity.a" | grep -c ' parity::api::Check(' || true)"
[ "$defined" -ge 1 ] || { echo "libparity.a does not define parity::api::Check" >&2; exit 1; }

clean="$runfiles/pipelines/single_tma_load/count1.pipe"
bad="$runfiles/pipelines/single_tma_load/bad_count1_expect_f32_bytes.pipe"

# The client is copied out of the repository first: nothing of the source tree is visible to it.
client="$tmp/client"
rm -rf "$client"
cp -r tests/install/client "$client"

echo "== CMake"
cmake -S "$client" -B "$client/build" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release \
  >"$tmp/cmake.log" 2>&1 || { cat "$tmp/cmake.log"; exit 1; }
cmake --build "$client/build" >"$tmp/build.log" 2>&1 || { cat "$tmp/build.log"; exit 1; }
"$client/build/client" "$clean" "$bad"

# A version the install does not satisfy is refused by find_package.
mkdir -p "$tmp/too_new"
sed 's/find_package(Parity 0.1 REQUIRED)/find_package(Parity 99 REQUIRED)/' \
  "$client/CMakeLists.txt" >"$tmp/too_new/CMakeLists.txt"
cp "$client/client.cc" "$tmp/too_new/"
if cmake -S "$tmp/too_new" -B "$tmp/too_new/build" -DCMAKE_PREFIX_PATH="$prefix" \
    >"$tmp/too_new.log" 2>&1; then
  echo "find_package(Parity 99) succeeded against $version" >&2
  exit 1
fi

echo "== pkg-config"
# The installed tree is moved first (the files find their prefix relative to themselves), and to
# a path without spaces: pkg-config's output is split into words by the shell.
moved="$tmp/moved_prefix"
rm -rf "$moved"
cp -r "$prefix" "$moved"
export PKG_CONFIG_PATH="$moved/lib/pkgconfig"
[ "$(pkg-config --modversion parity)" = "$version" ] || { echo "pkg-config version" >&2; exit 1; }
# shellcheck disable=SC2046  # pkg-config's output is a list of words
g++ -O1 -o "$tmp/client_pc" "$client/client.cc" $(pkg-config --cflags --libs parity)
"$tmp/client_pc" "$clean" "$bad"
echo "install_test: CMake and pkg-config clients built and passed"
