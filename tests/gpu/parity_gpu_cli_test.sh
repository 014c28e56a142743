#!/bin/bash
# Checks //gpu:parity_gpu without a GPU: it is self-contained (static cudart, no spdlog/fmt: only
# the C/C++ runtime is dynamic); it refuses a schedule with an op the executor does not issue
# (a multicast TMA load with the mbarrier of one other CTA, a form PTX lacks, and a readback of a tma.store source, which the executor would read in the wrong place),
# naming the op and the line, before touching CUDA (exit 2); the litmus and bench subcommands
# refuse bad usage with exit 2; and it accepts every op of the bundled pipelines and litmus
# tests, the programmatic dependent launches of pipelines/pdl included (no "unsupported op" or
# refusal before the CUDA call).
set -euo pipefail
bin=$1
unsupported=$2  # a multicast tma.load with a remote barrier
unsupported_readback=$3  # a readback of a tma.store source
# then: schedules whose every op must be accepted
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
echo "$msg" | grep -q "unsupported op 'tma.load' (tma.load with multicast and a barrier @cta)" ||
  fail "the message does not name tma.load multicast @cta"
echo "$msg" | grep -q "unsupported_remote_tma_bar.pipe:18:" || fail "the message does not name the line"
echo "$msg" | grep -qi "cuda" && fail "it reached CUDA before refusing"
set +e
msg=$("$bin" run "$unsupported_readback" 2>&1)
rc=$?
set -e
[ "$rc" -eq 2 ] || fail "expected exit 2 for a readback of a tma.store source, got $rc"
echo "$msg" | grep -q "unsupported op 'readback' (readback of a buffer that is a tma.store source)" ||
  fail "the message does not name the readback: $msg"
set +e
"$bin" run 2>/dev/null; rc=$?
set -e
[ "$rc" -eq 2 ] || fail "usage error must exit 2, got $rc"
for args in "litmus x.pipe" "litmus --runs 10" "bench" "frobnicate" "litmus x.pipe --out /tmp --runs nope"; do
  set +e
  "$bin" $args >/dev/null 2>&1; rc=$?
  set -e
  [ "$rc" -eq 2 ] || fail "parity_gpu $args must exit 2, got $rc"
done
# Host resolution (parity_gpu resolve, no CUDA): stream_copy's agents run fixed op streams whose
# lengths follow from the schedule: with TILES=8, STAGES=4, PRODUCERS=2, producer 0 runs 8 inits,
# the fence, bar.sync and (wait, arrive.expect_tx, tma.load) for its 4 tiles = 22 ops, producer 1
# 1 + 12 = 13, each consumer bar.sync, (wait, use, tma.store, commit, bulk.wait, arrive) for its
# 2 tiles and the final bulk.wait = 14. Schedules with a state token or a cp.async are interpreted.
stream_copy=$7; sgemm=$8; arrive_on=$9; ring_2p2c=${11}
msg=$("$bin" resolve "$stream_copy" -D NSM=2 -D TILES=8)
echo "$msg"
echo "$msg" | grep -q "stream_copy: all 12 agents run from op streams resolved on the host: 182 ops" ||
  fail "stream_copy is not resolved as expected"
for want in "producer\[0\]: 22 ops" "producer\[1\]: 13 ops" "consumer\[0\]: 14 ops" "consumer\[3\]: 14 ops"; do
  echo "$msg" | grep -q "CTA 0 $want" || fail "stream_copy: no '$want'"
done
msg=$("$bin" resolve "$arrive_on")
echo "$msg" | grep -q "the kernel interprets all 4 agents: .* an arrive keeps a state token" ||
  fail "cp_async_arrive_on: $msg"
# ring_2p2c's `bar.sync 1, 256` joins 2 producers of 32 threads and 2 consumers of 96: the
# runner maps it to 4 warps (128 hardware threads) instead of faulting on 256 / 96.
msg=$("$bin" resolve "$ring_2p2c")
echo "$msg" | grep -q "ring_2p2c: all 4 agents run from op streams resolved on the host: 61 ops" ||
  fail "ring_2p2c: $msg"
echo "$msg" | grep -q "named barrier 1: the schedule's 256 threads are 4 warp arrivals (128 hardware threads)" ||
  fail "ring_2p2c: bar.sync 1 not mapped to 4 warps: $msg"
# fa3_forward's named barriers: ids evaluated per agent (`bar.sync SCHED + agent`), so the
# 288-thread QueryEmpty barrier of a 32-thread producer and two 128-thread warpgroups maps to 3
# warps and the per-warpgroup ones to 2, instead of faulting on 288 / 128.
fa3=${15}; mo_dsmem=${16}
msg=$("$bin" resolve "$fa3")
echo "$msg" | grep -q "fa3_forward: all 3 agents run from op streams resolved on the host" ||
  fail "fa3_forward: $msg"
for want in "named barrier 1: the schedule's 288 threads are 3 warp arrivals (96 hardware threads)" \
            "named barrier 3: the schedule's 256 threads are 2 warp arrivals (64 hardware threads)" \
            "named barrier 4: the schedule's 256 threads are 2 warp arrivals (64 hardware threads)"; do
  echo "$msg" | grep -qF "$want" || fail "fa3_forward: no '$want': $msg"
done
# A wait with semantics and scope (`wait.acquire.cluster`) runs from a resolved stream.
msg=$("$bin" resolve "$mo_dsmem")
echo "$msg" | grep -q "mo_dsmem_release_cluster: all 2 agents run from op streams resolved" ||
  fail "mo_dsmem_release_cluster: $msg"
# A programmatic dependent launch (pipelines/pdl): each grid is resolved on its own, the primary
# grid's 2 CTAs (producer: 4 inits, the fence, bar.sync, (wait, arrive.expect_tx, 2 tma.load)
# for 2 k-tiles = 14 ops; consumer: bar.sync, (wait, 2 uses, arrive) x 2, write C,
# launch_dependents = 11) and the dependent's (init, fence, arrive.expect_tx, tma.load, wait,
# use W, griddepcontrol.wait, use C = 8), with no refusal.
pdl=${17}
msg=$("$bin" resolve "$pdl")
echo "$msg"
echo "$msg" | grep -q "pdl_gemm_then_consumer (the primary grid): all 4 agents run from op streams resolved on the host: 50 ops" ||
  fail "gemm_then_consumer: the primary grid is not resolved as expected: $msg"
echo "$msg" | grep -q "pdl_gemm_then_consumer (the dependent grid): all 2 agents run from op streams resolved on the host: 16 ops" ||
  fail "gemm_then_consumer: the dependent grid is not resolved as expected: $msg"
for want in "cluster 0 CTA 0 producer\[0\]: 14 ops" "cluster 0 CTA 0 consumer\[0\]: 11 ops" "cluster 0 CTA 0 consumer2\[0\]: 8 ops"; do
  echo "$msg" | grep -q "$want" || fail "gemm_then_consumer: no '$want': $msg"
done
# fa3_forward's epilogue uses EpilogueBarrier (id 2) with two counts: 256 (both warpgroups, the
# second as a 96-thread and a 32-thread role) and 288, for which the last warp arrives and then
# syncs (256 + 32): 3 and 4 warp arrivals. Mapping only one count (or scaling 256 by each role's
# threads) gives warps of one phase different hardware counts, which the H100 traps.
epilogue=${20}
msg=$("$bin" resolve "$epilogue")
for want in "named barrier 1: the schedule's 288 threads are 4 warp arrivals (128 hardware threads)" \
            "named barrier 2: the schedule's 256 threads are 3 warp arrivals (96 hardware threads)" \
            "named barrier 2: the schedule's 288 threads are 4 warp arrivals (128 hardware threads)"; do
  echo "$msg" | grep -qF "$want" || fail "epilogue_o_over_v: no '$want': $msg"
done
msg=$("$bin" resolve "$sgemm")
echo "$msg" | grep -q "the kernel interprets all .* an op the interpreter runs directly" || fail "sgemm_sm80: $msg"
# Every op of these schedules is issued by the executor: parity_gpu gets past the op check and
# only then needs CUDA (which this machine lacks, or which runs it: either way no refusal).
shift 3
for f in "$@"; do
  set +e
  out=$(timeout 20 "$bin" run "$f" --timeout-ms 1 2>&1)
  set -e
  if echo "$out" | grep -q "unsupported op\|refuses the schedule"; then fail "$f: $out"; fi
done
echo "ok: $# schedules pass the op check"
echo "ok"
