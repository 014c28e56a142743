#!/usr/bin/env bash
# The production corpus (README.md): every kernel of kernels.tsv is decompressed, imported with
# its recorded arguments, checked and explored (explore bounded by --time-limit), and each step's
# outcome must be the one expected.tsv records for it:
#   import   ok | exit2:RULE (the rule named in the error)
#   check    clean | CODE[,CODE...] (the set of rule codes reported) | - (not reached)
#   explore  verified | undecided (no finding within the time limit: verified or incomplete) |
#            CODE@FILE:LINE (the first finding, at the CUDA line its operation came from; for a
#            race, of either access) | -
# A seeded-bug twin expects its code at the line its edit changed. A kernel imported with
# --source-chain cites its operations' whole inlined call chains (`a.hpp:1 > b.hpp:2`); its
# CODE@FILE:LINE matches when FILE:LINE is one frame of the chain of the finding's operation (an
# edit in a header the kernel inlines, such as CUTLASS's sm90_pipeline.hpp, is a frame there).
set -uo pipefail
parity="$PWD/tools/cli/parity"
dir="$PWD/tests/import/production"
tmp="${TEST_TMPDIR:-$(mktemp -d)}"
limit="${CORPUS_EXPLORE_SECONDS:-10}"
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# The CUDA location `file:line` of the operation at PIPE:LINE (the comment the importer writes:
# `# x.ptx:12,40 (file.cuh:381)`), or "?". A finding at a role's header (A1003: the agent exits
# with copies in flight) is at the role's last operation, the one before its exit.
cuda_line() {
  local line="$2"
  [ "$line" -gt 0 ] 2>/dev/null || { echo "?"; return; }
  if sed -n "${line}p" "$1" | grep -q '^role '; then
    line=$(awk -v s="$line" 'NR > s && /^}/ { print NR - 1; exit }' "$1")
    while [ "$line" -gt "$2" ] && ! sed -n "${line}p" "$1" | grep -q '(.*:[0-9]*)'; do
      line=$((line - 1))
    done
  fi
  sed -n "${line}p" "$1" | sed -n 's/.*(\([^()]*:[0-9][0-9]*\))[^()]*$/\1/p' | head -1 | grep . || echo "?"
}

# Whether explore's outcome GOT matches WANT: equal, or both CODE@..., the same code, and WANT's
# FILE:LINE one frame of GOT's chain.
explore_matches() {
  [ "$1" = "$2" ] && return 0
  [[ "$1" == *@* && "$2" == *@* && "${1%%@*}" = "${2%%@*}" ]] || return 1
  local frames=" ${1#*@} "
  frames=${frames// > / }
  [[ "$frames" == *" ${2#*@} "* ]]
}

declare -A want_import want_check want_explore
while IFS=$'\t' read -r name imp chk exp _; do
  [[ -z "$name" || "$name" == \#* ]] && continue
  want_import[$name]=$imp; want_check[$name]=$chk; want_explore[$name]=$exp
done < "$dir/expected.tsv"

# Bazel's test sharding (BUILD: shard_count): shard I of N takes the kernels whose position in
# kernels.tsv is I modulo N, so that the imports, which dominate, spread over the shards.
shards="${TEST_TOTAL_SHARDS:-1}"
shard="${TEST_SHARD_INDEX:-0}"
[ -n "${TEST_SHARD_STATUS_FILE:-}" ] && touch "$TEST_SHARD_STATUS_FILE"

n=0
pos=0
while IFS=$'\t' read -r name source ptx args; do
  [[ -z "$name" || "$name" == \#* ]] && continue
  pos=$((pos + 1))
  [ $(((pos - 1) % shards)) -eq "$shard" ] || continue
  n=$((n + 1))
  [[ -n "${want_import[$name]:-}" ]] || { fail "$name: no line in expected.tsv"; continue; }
  xz -dc "$PWD/$ptx" > "$tmp/$name.ptx" || { fail "$name: cannot decompress $ptx"; continue; }
  read -r -a argv <<< "$args"
  "$parity" import "$tmp/$name.ptx" "${argv[@]}" -o "$tmp/$name.pipe" > "$tmp/$name.import" 2>&1
  rc=$?
  got="ok"
  if [ $rc -ne 0 ]; then
    rule=$(grep -o 'error\[[a-z.-]*\]' "$tmp/$name.import" | head -1 | sed 's/error\[\(.*\)\]/\1/')
    got="exit$rc:$rule"
  fi
  if [ "$got" != "${want_import[$name]}" ]; then
    fail "$name: import gave $got, expected ${want_import[$name]}: $(tail -2 "$tmp/$name.import" | cut -c1-400)"
    continue
  fi
  [ "$got" = ok ] || { echo "ok: $name: import $got as expected"; continue; }

  "$parity" check "$tmp/$name.pipe" --format json > "$tmp/$name.check.json" 2> "$tmp/$name.check.err"
  rc=$?
  codes=$(grep -o '"code": *"[A-Z][0-9]*"' "$tmp/$name.check.json" | grep -o '[A-Z][0-9]*' | sort -u | paste -sd, -)
  [ $rc -eq 0 ] && [ -z "$codes" ] && codes="clean"
  if [ $rc -gt 1 ]; then
    fail "$name: check exited $rc: $(tail -2 "$tmp/$name.check.err")"
    continue
  fi
  [ "$codes" = "${want_check[$name]}" ] || fail "$name: check reported $codes, expected ${want_check[$name]}"

  [ "${want_explore[$name]}" = "-" ] && continue
  "$parity" explore "$tmp/$name.pipe" --time-limit "$limit" --shorten-budget 0 > "$tmp/$name.explore" 2>&1
  rc=$?
  case $rc in
    0|4) got="undecided"; [ $rc -eq 0 ] && [ "${want_explore[$name]}" = verified ] && got=verified ;;
    1)
      code=$(grep -m1 -oE '^[A-Z][0-9]{4}' "$tmp/$name.explore")
      # The finding's locations: its first line's and the next's (`by AGENT at X.pipe:L`); the
      # first is where it is reported. A race (P2005, P2006, P2009) is a pair of accesses, and
      # which of the two comes second on the path explore finds first depends on the schedule's
      # interleaving order: its twin's line may be either access's (tried below).
      locs=$(grep -m1 -A1 -E '^[A-Z][0-9]{4}' "$tmp/$name.explore" | grep -oE 'at [^ ]*\.pipe:[0-9]+' | sed 's/.*:\([0-9]*\)$/\1/')
      at=$(echo "$locs" | head -1)
      where=$(cuda_line "$tmp/$name.pipe" "${at:-0}")
      # A deadlock's most likely cause names a barrier (a count too high): its place is the init
      # that set the count; a cause that names a wait (a parity one phase off: `the wait at
      # X.pipe:LINE`) is at that wait.
      cause=$(grep -m1 -E 'most likely cause \([a-z-]+\) at ' "$tmp/$name.explore")
      bar=$(echo "$cause" | grep -oE 'most likely cause \([a-z-]+\) at [A-Za-z0-9_]+' | sed 's/.* at //')
      wait_at=$(echo "$cause" | grep -oE 'the wait at [^ ]*\.pipe:[0-9]+' | sed 's/.*:\([0-9]*\)$/\1/')
      if [ "$code" = P2001 ] && [ -n "$wait_at" ]; then
        where=$(cuda_line "$tmp/$name.pipe" "$wait_at")
      elif [ "$code" = P2001 ] && [ -n "$bar" ]; then
        init=$(grep -n -m1 -E "^ *init $bar(\[| )" "$tmp/$name.pipe" | cut -d: -f1)
        [ -n "$init" ] && where=$(cuda_line "$tmp/$name.pipe" "$init")
      fi
      got="$code@$where"
      if [[ "$code" =~ ^P20(05|06|09)$ ]] && ! explore_matches "$got" "${want_explore[$name]}"; then
        for l in $(echo "$locs" | tail -n +2); do
          other="$code@$(cuda_line "$tmp/$name.pipe" "$l")"
          explore_matches "$other" "${want_explore[$name]}" && { got=$other; break; }
        done
      fi ;;
    *) got="exit$rc" ;;
  esac
  if ! explore_matches "$got" "${want_explore[$name]}"; then
    fail "$name: explore gave $got, expected ${want_explore[$name]}: $(grep -m3 -E 'FOUND|VERIFIED|INCOMPLETE|^[A-Z][0-9]{4}' "$tmp/$name.explore" | cut -c1-300)"
  else
    echo "ok: $name: check $codes, explore $got"
  fi
done < "$dir/kernels.tsv"

[ $pos -gt 0 ] || fail "kernels.tsv lists no kernel"
[ $fails -eq 0 ] || { echo "$fails failure(s)"; exit 1; }
echo "PASS: $n kernels"
