// Lifetime of a CTA's shared memory and mbarriers (codes P2010, P2011, P2030,
// sim/model/codes.h).
//
// Its start (P2030): the CTAs of a cluster are co-scheduled, not started together, so an agent
// may touch a peer's shared memory (a `use` / `write` / `atom` / `red` @cta(r)) only after it
// observed an operation of an agent of that peer — through a cluster barrier (of any
// semantics: barrier.cluster.wait returns when every thread arrived), a barrier phase, or a
// chain of them (HappensBefore::Mode::kCausal: relaxed and .cta-scoped edges count, since an
// observation proves that the observed thread ran). The events the access did not observe can
// all run after it (the argument below), so one run decides. A remote arrive, expect_tx or
// complete_tx and a copy completing on a peer's barrier are not checked here: P2007 orders
// them after the peer's own init, an operation of the peer.
//
// A CTA's shared memory and the mbarriers in it exist until the CTA exits, that is until the
// last of its agents exits. Anything else that touches them must do so before:
//   - a remote arrive / arrive.expect_tx / expect_tx / complete_tx of an agent of another CTA
//     (a masked arrive to each CTA of its mask), a DSMEM read or write (`use` / `write ...
//     @cta(r)`), a multicast load's delivery into a peer, an st.async landing in a peer: P2010
//     access-after-exit;
//   - a TMA or bulk load that an agent of the CTA issued into the CTA itself, or the deferred
//     arrive-on of its cp.async.mbarrier.arrive: P2011 exit-with-copy-in-flight (an asynchronous
//     operation whose completion nobody in the CTA waits for).
// (cp.async and TMA/bulk store sources are per-thread completions: a thread that exits with them
// in flight is A1003, found by the engine.)
//
// When an access is ordered before the exit of an agent y of the target CTA X. Happens-before
// is the one of verifier/happens_before.h (program order, mbarrier release -> acquire with PTX's
// semantics and scopes, barrier.cluster, named barriers, a copy's issue before its delivery):
//   (a) an access that counts in a phase of one of X's barriers (an arrive, expect_tx or
//       complete_tx on it, a copy whose bytes complete there, a landing deferred arrive) is
//       done once that phase completes. A wait of X (or a successful test_wait) that observes
//       the completion — whatever its semantics: reading the barrier's own state is coherence
//       on the barrier, not an acquire — and happens before y's exit orders it. This is the only
//       witness of a copy: nothing its issuer does later (a cluster barrier included) waits for
//       bytes in flight;
//   (b) an agent's own operation (a remote barrier update, a DSMEM access) is ordered when it
//       happens before y's exit: a release after it whose scope includes X — a `.release.cluster`
//       arrive acquired by a `.cluster` wait of X, a barrier.cluster.arrive that is not
//       `.relaxed` (or a relaxed one after fence.acq_rel.cluster) — and a chain from there to
//       the exit. A `.relaxed` arrive, of an mbarrier or of barrier.cluster, releases nothing:
//       a closing cluster barrier whose arrive is relaxed lets X exit while the peer's earlier
//       remote arrives are still on their way. A `.cta`-scoped release (the default of
//       mbarrier.arrive) observed by another CTA orders nothing across CTAs
//       (HappensBefore::weak_clock); the finding says so. A DSMEM read is the exception: a read
//       has returned its value when the release after it issues, so a release of any scope
//       (the weak clock) orders it, as the race checker holds (docs/language.md §10).
//
// The check asks, on one run, whether each such access is ordered before the exit of some agent
// of the target CTA; if it is ordered before none of them, some execution runs it after the CTA
// exited. Why that is enough (for the interleaving part; the memory model's weaker orders only
// remove edges): let A be the access and S the set of events that A happens before (A
// included). S contains no exit of the CTA. The events outside S are closed downwards under
// happens-before (if e is outside S and d happens before e, d is outside S too, else A would
// happen before e), so running every event outside S first, in the run's order, and then S, in
// the run's order, respects happens-before: every exit of the CTA comes before A. Conversely, an
// access ordered before the exit of one agent is ordered before the CTA's exit (the last exit)
// on every execution. So the check does not depend on the order the run took: `check` reports
// it under every policy, and explore on any path that contains both the access and the exits.
//
// Where one run does not speak for the others: the argument assumes the other interleavings
// make the same synchronisation, which holds when the run has no other protocol finding. When
// the phase a copy's bytes count in depends on the order (an arrive racing its expect_tx, P2002)
// or a wait passes at once on a phase that a delivery kept from completing, another run can
// differ; tests/verifier/lifetime_test compares the check with every interleaving of generated
// schedules (made .cluster-scoped, where happens-before is the interleavings' order) and counts
// those runs apart.
//
// A run in which some agent of the CTA never exits (a deadlock, a violation that stopped the
// run) has no CTA exit to check against for that CTA.
#ifndef PARITY_VERIFIER_LIFETIME_H_
#define PARITY_VERIFIER_LIFETIME_H_

#include <span>
#include <vector>

#include "sim/engine/engine.h"
#include "sim/ir/ir.h"
#include "sim/trace/event.h"
#include "verifier/rules.h"

namespace parity::verifier {

// P2010 / P2011 / P2030 findings of a finished (or stopped) run, in trace order of the access; one per
// code, target CTA, accessing statement and barrier.
std::vector<Finding> CheckLifetime(const ir::Program& program, const engine::Engine& engine,
                                   std::span<const trace::TraceEvent> trace);

}  // namespace parity::verifier

#endif  // PARITY_VERIFIER_LIFETIME_H_
