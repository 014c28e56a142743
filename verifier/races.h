// Data races of one run over one access model (code P2009, sim/model/codes.h).
//
// Every shared-memory access of the run is one Access: a generic read (`use`) or write
// (`write`) of an agent; the write of a TMA / bulk / st.async / cp.async copy into each
// destination CTA (a multicast writes into every CTA of its mask); the async-proxy read of a TMA
// or bulk store's source. Each has its CTA, buffer, slot and byte range, its proxy, the agent
// (the issuer for a copy) and its source line.
//
// Happens-before (PTX ISA, Memory Consistency Model) is a vector clock per agent and per
// mbarrier element (phases observed), built from the trace:
//   - program order of an agent;
//   - a copy's access is ordered after its issue (its clock is the issuer's clock at the issue);
//   - mbarrier: every arrive and remote arrive (.release unless .relaxed) of a phase is ordered
//     before every wait / successful test_wait that observes that phase's completion
//     (try_wait/test_wait .acquire); a standalone expect_tx / complete_tx is .relaxed and a
//     copy's complete-tx publishes only the copy's own bytes (happens_before.h); a parity wait
//     that passes on a barrier whose waited phase never completed (a fresh barrier, parity 1)
//     observes nothing;
//   - bar.sync / bar.arrive instances and barrier.cluster arrive -> wait;
//   - an access A "completes" for others through a set of witnesses (clock component, value): a
//     generic access at its agent's epoch; a copy's write when its bytes completed on barrier
//     phase P (a later observer of P); a store's source read at the issuer's bulk wait_group
//     (.read or not) that covers its bulk group; a cp.async write at the issuer's
//     cp.async.wait_group / wait_all covering it or the phase its cp.async.mbarrier.arrive lands
//     in. A happens before B iff B's clock (for a copy: its issue clock) reaches a witness of A.
// Accesses are ordered by their start (the event, or the copy's issue); an access can only
// happen before an access that starts later, so each pair is tested once.
//
// Byte ranges are exact per dynamic access: the range of `use`/`write` is in its event (offset
// and bytes; a `write` without `bytes` writes the rest of the slot), and a copy's slot and
// offset are the engine's evaluation of its operands at that issue (Engine::trace_places: a
// loop index, `k % STAGES`, `cta_rank * SLICE` alike), its length the event's bytes; a delivery
// is matched with the copy of its slot and offset. Two accesses overlap when their byte ranges
// intersect, with one exception that is the language's meaning of a range without `bytes`: a
// `write` or `cp.async` statement whose operand has no `bytes` stands for the threads of all
// the agents of its role writing their shares of the range (an epilogue's warps each writing
// their part of a tile), so its accesses by two agents of that role do not overlap each other;
// against every other access they cover the whole range. Where a trace carries no places (a trace that is not the engine's own run) a
// copy's range is the whole slot, and an st.async's every slot of its buffer: it overlaps
// every access there (a finding may be too many, none is missed).
// A generic write -> async-proxy read also needs fence.proxy.async: that is P2006's (rules.cc),
// so here a generic write ordered before a store's issue counts as ordered.
// DSMEM accesses (`use`/`write ... @cta(r)`) are accesses of the target CTA's memory. Accesses
// are compared by CTA shared-memory bytes, so that an `aliases` buffer meets the one it reuses.
// Scopes and semantics (ir::MemSem, ir::MemScope): a .relaxed arrive releases nothing and a
// .relaxed wait acquires nothing, unless a fence.acq_rel makes a release/acquire pattern of it;
// a release and an acquire in different CTAs synchronise only when both are .cluster-scoped.
// A generic write (st.shared, DSMEM st, cp.async) ordered only through such a narrow pair is
// P2013 (release-scope-narrow); a read, or an async-proxy copy write whose completion was
// observed on its barrier, ordered through it is ordered (the weak clock of happens_before.h,
// docs/language.md §10).
#ifndef PARITY_VERIFIER_RACES_H_
#define PARITY_VERIFIER_RACES_H_

#include <cstdint>
#include <span>
#include <vector>

#include "sim/engine/engine.h"
#include "sim/ir/ir.h"
#include "sim/trace/event.h"
#include "verifier/rules.h"

namespace parity::verifier {

// How CheckRaces finds the unordered pairs. kChains: per later agent, a binary search over its
// accesses (their clocks only grow) for the first one ordered after the earlier access; only
// the unordered ones before it are tested (near-linear on a well-synchronised run). kAllPairs:
// every pair of intersecting byte ranges is tested (quadratic on a long run of one slot); the
// reference the tests compare kChains with (the same findings, message for message).
enum class RaceScan : uint8_t { kChains, kAllPairs };

// P2009 findings of a finished (or stopped) run, in the order of the later access of each pair;
// one finding per pair of source statements and buffer slot.
std::vector<Finding> CheckRaces(const ir::Program& program, const engine::Engine& engine,
                                std::span<const trace::TraceEvent> trace,
                                RaceScan scan = RaceScan::kChains);

}  // namespace parity::verifier

#endif  // PARITY_VERIFIER_RACES_H_
