// Lifetime of a CTA's shared memory and mbarriers (codes P2010, P2011, sim/model/codes.h).
//
// A CTA's shared memory and the mbarriers in it exist until the CTA exits, that is until the
// last of its agents exits. Anything else that touches them must do so before:
//   - a remote arrive / arrive.expect_tx / expect_tx / complete_tx of an agent of another CTA
//     (a masked arrive to each CTA of its mask), a multicast load's delivery into a peer, an
//     st.async landing in a peer: P2010 access-after-exit;
//   - a TMA or bulk load that an agent of the CTA issued into the CTA itself, or the deferred
//     arrive-on of its cp.async.mbarrier.arrive: P2011 exit-with-copy-in-flight (an asynchronous
//     operation whose completion nobody in the CTA waits for).
// (cp.async and TMA/bulk store sources are per-thread completions: a thread that exits with them
// in flight is A1003, found by the engine.)
//
// The check asks, on one run, whether each such access happens before the exit of some agent of
// the target CTA; if it happens before none of them, some interleaving runs it after the CTA
// exited. Why that is enough: let A be the access and S the set of events that A happens before
// (A included). S contains no exit of the CTA. The events outside S are closed downwards under
// happens-before (if e is outside S and d happens before e, d is outside S too, else A would
// happen before e), so running every event outside S first, in the run's order, and then S, in
// the run's order, respects happens-before: every exit of the CTA comes before A. Conversely, an
// access that happens before the exit of one agent happens before the CTA's exit (the last exit)
// on every interleaving. So the check does not depend on the order the run took: `check` reports
// it under every policy, and explore on any path that contains both the access and the exits.
//
// Happens-before is the one of the access model (verifier/races.h): vector clocks per agent
// and per mbarrier slot built from the trace; program order; an arrive / expect_tx /
// complete_tx / delivery of a phase before every wait (or successful test_wait) that observes
// that phase's completion (a parity wait that passes on a barrier whose waited phase never
// completed observes nothing); a copy's issue before its delivery; barrier.cluster arrive ->
// wait of the same phase; bar.sync / bar.arrive instances. An access is ordered before an exit
// when the exiting agent's clock reaches the access's witness: for an agent's remote operation
// its own epoch at the operation, for a delivery the phase its bytes complete in (the next
// completion of that barrier).
//
// Where one run does not speak for the others: the argument assumes the other interleavings
// make the same synchronisation, which holds when the run has no other protocol finding. When
// the phase a copy's bytes count in depends on the order (an arrive racing its expect_tx, P2002)
// or a wait passes at once on a phase that a delivery kept from completing, another run can
// differ; tests/verifier/lifetime_test compares the check with every interleaving of generated
// schedules and counts those runs apart.
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

// P2010 / P2011 findings of a finished (or stopped) run, in trace order of the access; one per
// code, target CTA, accessing statement and barrier.
std::vector<Finding> CheckLifetime(const ir::Program& program, const engine::Engine& engine,
                                   std::span<const trace::TraceEvent> trace);

}  // namespace parity::verifier

#endif  // PARITY_VERIFIER_LIFETIME_H_
