// A generator of small random schedules for differential tests of the explorer (issue 24, item
// 6; in the spirit of herd's diy): 1-2 CTAs, 1-3 agents per CTA, 1-2 mbarriers and buffers;
// TMA and bulk loads (multicast on two CTAs), TMA and bulk stores with their group waits,
// arrives (local, remote, masked, with counts), arrive.expect_tx and expect_tx with right and
// wrong byte counts, waits and test_waits with constant and loop-index parities, uses and
// writes, loops of 1-3 trips, and code guarded by `agent` and `cta_rank`, so that agent and
// CTA indices matter.
//
// The output is `.pipe` text that the real parser reads: a failing case is reproduced from its
// text alone (or from its seed: the same seed gives the same text on every platform; the random
// numbers come from splitmix64, not from the standard library's distributions).
//
// extended_ops adds cp.async, st.async and named barriers to the free shape.
//
// Two shapes, half each: a producer/consumer ring (one full and one empty barrier, a loop over
// k-tiles) with random mutations of its parities, counts, bytes, releases and prologue, and
// free sequences of random operations. The mutations make the verdicts mixed: a good part of
// the ring schedules complete, the rest deadlock or break an mbarrier rule.
#ifndef PARITY_TESTS_VERIFIER_GEN_SCHEDULE_GEN_H_
#define PARITY_TESTS_VERIFIER_GEN_SCHEDULE_GEN_H_

#include <cstdint>
#include <string>

namespace parity::gen {

struct GenOptions {
  int max_ctas = 2;           // 1 or 2
  int max_agents_per_cta = 3;
  int max_trips = 3;          // loop trip counts are 1..max_trips
  int max_ops = 5;            // operations per role in the free shape
  // The free shape also draws cp.async (with commit, wait and cp.async.mbarrier.arrive),
  // st.async into the peer CTA, and named barriers (bar.sync / bar.arrive over the CTA's
  // agents); with two CTAs, a CTA that exits early while its peer still arrives on it or stores
  // into it is then common (lifetime, verifier/lifetime.h).
  bool extended_ops = false;
  // Offsets that only a run knows: the ring has two stages in one buffer slot, at
  // `tile[0] + (k % 2) * TILE` (its barriers indexed `k % 2`, parities `(k / 2) & 1`; a mutation
  // makes the consumer read the other stage), and the free shape's slots hold two 128-byte
  // halves that operations address by loop index, `agent` and `cta_rank` (`d0[0] + (i & 1) *
  // 128 bytes 128`, `use d0[0] + agent * 64 bytes 64`, multicast halves at `cta_rank * 128`).
  bool variable_offsets = false;
  // Every schedule is a non-warp-specialised ring instead (NonWs in schedule_gen.cc): every
  // agent of the one role consumes and agent 0 also produces, on 1-2 CTAs (multicast and
  // releases to both with 2), 1-2 stages in one slot, with mutations of its parities, counts,
  // bytes, releases, prefetch and drain. What the held-phase futures of the explorer
  // (explore/held_phase.cc) reduce: producers that wait on the barrier everyone releases.
  bool nonws = false;
  // Instead of the two shapes below: rings and chains of 2..max(2, min(4, max_ctas)) CTAs, each
  // CTA sending items to its right neighbour's shared memory (st.async, or a DSMEM write with a
  // remote arrive or remote complete_tx) and releasing its left neighbour's slot with a remote
  // arrive, between cluster barriers, with mutations (wrong bytes, counts, parities and
  // neighbours, a missing release or fence, a cluster wait without an arrival, a second
  // arrival, a CTA that exits early).
  bool cta_chains = false;
  // The free shape also draws memory-order qualifiers (arrives `.release.cluster`,
  // `.relaxed[.cluster]`, waits and test_waits `.acquire.cluster`, `.relaxed[.cluster]`),
  // fence.acq_rel.cta / .cluster, a relaxed cluster barrier (`cluster.arrive.relaxed` then
  // `cluster.wait`), and with two CTAs DSMEM reads and writes of the peer's buffers
  // (`use` / `write ... @cta(cta_rank ^ 1)`): release patterns, acquire patterns and scopes
  // too narrow for the CTAs they link (P2013).
  bool memory_order = false;
  // The free shape's reads name their proxy at random (`use`, `use.generic` for ld.shared,
  // `use.async` for wgmma operands) and fence.proxy.async is drawn more often: the cross-proxy
  // rule of verifier/races.cc (P2006) against the oracle.
  bool proxies = false;
  // The free shape also draws shared-memory atomics (`red` / `atom`, docs/language.md §8.8) on
  // its own slots and, with two CTAs, on the peer's (`@cta(cta_rank ^ 1)`): atomics that do not
  // race with each other, and that race with a plain access or a copy of the same bytes.
  bool atomics = false;
  // The free shape also draws the operations of the later rules: tensor map updates and their
  // proxy fences (`tensormap.replace tm`, `fence.proxy.tensormap.release`,
  // `fence.proxy.tensormap.acquire tm`; P2031 / P2032 against the TMA loads and stores of `tm`),
  // and with two CTAs DSMEM reads, writes and atomics of the peer's buffers while the prologue's
  // cluster.sync is left out more often (P2030: no cluster barrier proves the peer started).
  bool late_rules = false;
  // Instead of the shapes above: chains of 2-4 grids of programmatic dependent launches
  // (`primary` blocks, docs/language.md §8.9) reading and writing one `global` buffer, with
  // griddepcontrol.wait present, late or absent in each grid, and now and then a grid that
  // hangs (PdlChain in schedule_gen.cc).
  bool pdl_chains = false;
  // Instead of the shapes above: DeepGEMM's cluster of two (LeaderMulticast in
  // schedule_gen.cc): CTA 0's producer multicasts A into both CTAs, each CTA loads its own B,
  // every consumer releases the stage in both CTAs (what the arrival costs of the explorer's
  // balance analysis reduce, explore/reducer.h), with mutations.
  bool leader_multicast = false;
  // User assertions (docs/language.md, Assertions) added to any shape: `assert` statements with
  // state reads (phase, pending, tx of its barriers, landed of its buffer slots) compared with
  // small constants, before random statements of the roles, and a `forall` and an `exists` at
  // the end, so that some hold on every path, some on some paths only, some on none.
  bool assertions = false;
  // Instead of the shapes above: named barriers over 2-5 agents of counted roles (NamedShape in
  // schedule_gen.cc): an epilogue's bar.sync over the math warps, or two warpgroups' ordered
  // ping-pong, with mutations; what the explorer's named-barrier rule reduces
  // (verifier/explore/reducer_named.cc).
  bool named_barriers = false;
};

// The schedule for `seed`, as `.pipe` text. Deterministic.
std::string GenerateSchedule(uint64_t seed, const GenOptions& options = {});

}  // namespace parity::gen

#endif  // PARITY_TESTS_VERIFIER_GEN_SCHEDULE_GEN_H_
