#!/usr/bin/env bash
# Compiles a seeded-bug twin: one sed edit of one file of the pinned sources, then compile.sh.
#   twin.sh NAME FILE SED_EXPRESSION SOURCE.cu [extra nvcc flags...]
# FILE is relative to SRC_ROOT; the edit is applied to a copy of SRC_ROOT (the pinned sources stay
# as they are) and must change exactly one line (an edit that no longer applies fails).
set -euo pipefail
name=$1; file=$2; edit=$3; shift 3
: "${SRC_ROOT:?set SRC_ROOT to the folder holding the extracted sources (README.md)}"
here=${PRODUCTION_DIR:-$(cd "$(dirname "$0")" && pwd)}
copy=$(mktemp -d)
trap 'rm -rf "$copy"' EXIT
top=${file%%/*}
cp -r "$SRC_ROOT/$top" "$copy/$top"
sed -i -e "$edit" "$copy/$file"
changed=$(diff "$SRC_ROOT/$file" "$copy/$file" | grep -c '^>' || true)
if [ "$changed" != 1 ]; then
  echo "$name: the edit changed $changed lines of $file (expected 1)" >&2
  exit 1
fi
{ diff "$SRC_ROOT/$file" "$copy/$file" || true; } | sed -n 's/^\([0-9]*\)c.*/edited line \1/p'
# Every other top-level folder of SRC_ROOT is shared with the copy.
for d in "$SRC_ROOT"/*/; do
  d=${d%/}; [ -e "$copy/$(basename "$d")" ] || ln -s "$d" "$copy/$(basename "$d")"
done
cd "$copy"
SRC_ROOT="$copy" PRODUCTION_DIR="$here" "$here/compile.sh" "$name" "$@"
