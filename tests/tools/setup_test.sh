#!/usr/bin/env bash
# tools/setup installs exactly the Debian packages that are missing, once, non-interactively,
# and nothing when all are there; without root or sudo it names what is missing and exits 2.
# dpkg-query, apt-get, id and sudo are fakes on PATH (no package is touched).
set -uo pipefail
setup="$PWD/tools/setup"
[ -x "$setup" ] || { echo "tools/setup not found in the runfiles"; exit 1; }
tmp="${TEST_TMPDIR:-$(mktemp -d)}"
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

all=(bazel-bootstrap g++ libspdlog-dev libfmt-dev libboost-graph-dev libgtest-dev libgmock-dev
     libbenchmark-dev libcli11-dev nlohmann-json3-dev libsimdjson-dev)

# A fake machine: $tmp/<case>/installed lists "package status" lines; apt-get installs by
# appending "package install ok installed"; every apt-get and sudo call is logged.
make_machine() {
  local dir="$tmp/$1" uid="$2" with_sudo="$3"
  rm -rf "$dir" && mkdir -p "$dir/bin"
  : >"$dir/installed"
  : >"$dir/log"
  for tool in bash grep env cat tail; do ln -s "$(command -v "$tool")" "$dir/bin/$tool"; done
  cat >"$dir/bin/dpkg-query" <<FAKE
#!/usr/bin/env bash
# dpkg-query -W -f='\${Status}\n' PKG
pkg="\${@: -1}"
line=\$(grep "^\$pkg " "$dir/installed" | tail -1)
[ -n "\$line" ] || { echo "dpkg-query: no packages found matching \$pkg" >&2; exit 1; }
echo "\${line#* }"
FAKE
  cat >"$dir/bin/apt-get" <<FAKE
#!/usr/bin/env bash
echo "apt-get DEBIAN_FRONTEND=\${DEBIAN_FRONTEND:-unset} \$*" >>"$dir/log"
[ "\$1" = "-o" ] && shift 2
if [ "\$1" = install ]; then
  for a in "\$@"; do
    case "\$a" in install|-*) ;; *) echo "\$a install ok installed" >>"$dir/installed" ;; esac
  done
fi
FAKE
  printf '#!/usr/bin/env bash\necho %s\n' "$uid" >"$dir/bin/id"
  if [ "$with_sudo" = yes ]; then
    # Like sudo's env_reset: the command runs without the caller's environment.
    printf '#!/usr/bin/env bash\necho "sudo $*" >>"%s"\nexec /usr/bin/env -i PATH="$PATH" "$@"\n' \
      "$dir/log" >"$dir/bin/sudo"
  fi
  chmod +x "$dir/bin/"*
}
run_setup() { local m="$1"; shift; PATH="$tmp/$m/bin" DEBIAN_FRONTEND= "$setup" "$@" >"$tmp/$m/out" 2>&1; }

# 1. Everything installed: no apt-get at all.
make_machine full 0 no
for p in "${all[@]}"; do echo "$p install ok installed" >>"$tmp/full/installed"; done
run_setup full; rc=$?
[ $rc -eq 0 ] || fail "all installed: exit $rc"
[ ! -s "$tmp/full/log" ] || fail "all installed: apt-get ran: $(cat "$tmp/full/log")"

# 1b. The same machine for tests (tools/test: --for-tests): only the test-only packages (the
#     browser, clang with libFuzzer for tools/fuzz, cmake and pkg-config for the install test).
run_setup full --for-tests; rc=$?
[ $rc -eq 0 ] || fail "for tests: exit $rc: $(cat "$tmp/full/out")"
grep -q "install -y -qq --no-install-recommends chromium clang libclang-rt-14-dev cmake pkg-config$" "$tmp/full/log" ||
  fail "for tests: install line: $(cat "$tmp/full/log")"
: >"$tmp/full/log"
run_setup full --for-tests; rc=$?
[ $rc -eq 0 ] && [ ! -s "$tmp/full/log" ] || fail "for tests, second run: exit $rc, $(cat "$tmp/full/log")"

# 2. Two missing (one never installed, one removed with its config left), as root: one update,
#    one install of exactly those two, non-interactive; a second run installs nothing.
make_machine partial 0 no
for p in "${all[@]}"; do
  case "$p" in
    libsimdjson-dev) ;;
    libgmock-dev) echo "$p deinstall ok config-files" >>"$tmp/partial/installed" ;;
    *) echo "$p install ok installed" >>"$tmp/partial/installed" ;;
  esac
done
run_setup partial; rc=$?
[ $rc -eq 0 ] || fail "partial: exit $rc: $(cat "$tmp/partial/out")"
grep -q "installing missing Debian packages: libgmock-dev libsimdjson-dev$" "$tmp/partial/out" ||
  fail "partial: message: $(cat "$tmp/partial/out")"
[ "$(grep -c ' update' "$tmp/partial/log")" = 1 ] || fail "partial: updates: $(cat "$tmp/partial/log")"
grep -q "^apt-get DEBIAN_FRONTEND=noninteractive -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends libgmock-dev libsimdjson-dev$" \
  "$tmp/partial/log" || fail "partial: install line: $(cat "$tmp/partial/log")"
: >"$tmp/partial/log"
run_setup partial; rc=$?
[ $rc -eq 0 ] && [ ! -s "$tmp/partial/log" ] || fail "partial, second run: exit $rc, $(cat "$tmp/partial/log")"

# 3. Not root, sudo available: apt-get runs through sudo and still sees DEBIAN_FRONTEND.
make_machine sudo 1000 yes
echo "g++ install ok installed" >>"$tmp/sudo/installed"
run_setup sudo; rc=$?
[ $rc -eq 0 ] || fail "sudo: exit $rc: $(cat "$tmp/sudo/out")"
grep -q "^sudo env DEBIAN_FRONTEND=noninteractive apt-get" "$tmp/sudo/log" ||
  fail "sudo: not through sudo: $(cat "$tmp/sudo/log")"
grep -q "^apt-get DEBIAN_FRONTEND=noninteractive .* install .*bazel-bootstrap libspdlog-dev" "$tmp/sudo/log" ||
  fail "sudo: install line: $(cat "$tmp/sudo/log")"
grep -q "install .* g++" "$tmp/sudo/log" && fail "sudo: installed g++ although present"

# 4. Not root, no sudo: exit 2 naming the missing packages, nothing run.
make_machine nosudo 1000 no
for p in "${all[@]}"; do
  [ "$p" = libcli11-dev ] || echo "$p install ok installed" >>"$tmp/nosudo/installed"
done
run_setup nosudo; rc=$?
[ $rc -eq 2 ] || fail "no sudo: exit $rc"
grep -q "missing and I am not root (no sudo): libcli11-dev$" "$tmp/nosudo/out" ||
  fail "no sudo: message: $(cat "$tmp/nosudo/out")"
[ ! -s "$tmp/nosudo/log" ] || fail "no sudo: apt-get ran"

# 5. The package list covers every library the WORKSPACE points at (third_party/*.BUILD).
for p in "${all[@]}"; do
  grep -qE "^ *[^#]*\b$p\b" "$setup" || fail "tools/setup does not list $p"
done

[ $fails -eq 0 ] && echo "PASS: tools/setup" || exit 1
