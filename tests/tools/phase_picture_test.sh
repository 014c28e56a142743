#!/usr/bin/env bash
# The phase picture in a real browser: `parity explain --html` and `parity replay --html` pages
# are loaded by headless Chromium (file://, no network); the DOM it renders (its layout: the
# page's own script records what was drawn, with sizes from getBBox) must have the lanes, phase
# segments of both parities, the arrows (multicast fan-out, remote arrives), the waits and, after
# a deadlock, the blocked waits and the culprit barrier highlighted; the timeline fills the
# width, counts are text, every wait is linked to the phase it observed or waits for (hovering it
# highlights them), named barriers have lanes by name (phase_picture_check.py); a screenshot must
# not be blank. tools/setup installs chromium; without it the test says so and passes (skip).
set -uo pipefail
parity="$PWD/tools/cli/parity"
check="$PWD/tests/tools/phase_picture_check.py"
tmp="${TEST_TMPDIR:-$(mktemp -d)}"
browser=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$browser" ]; then
  echo "SKIPPED: no chromium on PATH (tools/setup installs Debian's chromium for this test)"
  exit 0
fi
export HOME="$tmp/home"
mkdir -p "$HOME"
chrome() {
  timeout 120 "$browser" --headless --no-sandbox --disable-gpu --no-first-run \
    --hide-scrollbars --user-data-dir="$tmp/chrome" "$@" 2>>"$tmp/chrome.log"
}
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# name, parity command (writing $tmp/name.html), expectations for the checker
picture() {
  local name="$1"; shift
  local expect="$1"; shift
  "$parity" "$@" --html "$tmp/$name.html" >"$tmp/$name.out" 2>&1
  local rc=$?
  [ -s "$tmp/$name.html" ] || { fail "$name: no HTML written (exit $rc): $(tail -3 "$tmp/$name.out")"; return; }
  grep -qiE '(src|href)="(https?:)?//' "$tmp/$name.html" && fail "$name: the page refers to the network"
  chrome --window-size=1400,900 --dump-dom "file://$tmp/$name.html" >"$tmp/$name.dom" ||
    { fail "$name: chromium could not load the page: $(tail -3 "$tmp/chrome.log")"; return; }
  python3 "$check" dom "$tmp/$name.dom" "$expect" || fail "$name: rendered DOM"
}

picture multicast_disagreement deadlock \
  explain sim/examples/rules/multicast_disagreement.pipe
picture gemm_multicast_pair completed \
  explain sim/examples/explore/gemm_multicast_pair.pipe
"$parity" run sim/examples/explore/gemm_multicast_pair.pipe --trace "$tmp/pair.trace" >/dev/null
picture replay_pair completed \
  replay sim/examples/explore/gemm_multicast_pair.pipe "$tmp/pair.trace"
picture replay_h100_hang h100-hang \
  replay sim/examples/gemm_tx_overcount.pipe traces/h100/gemm_tx_overcount.trace
picture named_barrier named \
  explain tests/verifier/testdata/culprit/named_barrier_by_name.pipe

# A screenshot of the deadlock picture: decoded, it has many colours and is not mostly blank.
chrome --window-size=1400,700 --screenshot="$tmp/shot.png" \
  "file://$tmp/multicast_disagreement.html" >/dev/null
python3 "$check" png "$tmp/shot.png" || fail "screenshot"

if [ "$fails" -gt 0 ]; then
  echo "$fails failure(s)"
  exit 1
fi
echo "PASS: 5 pages rendered by $("$browser" --version 2>/dev/null | head -1)"
