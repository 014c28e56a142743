// Races on global memory (`global` buffers): the access model of programmatic dependent launch
// (codes P2020 pdl-wait-missing and P2009 data-race, sim/model/codes.h).
//
// Every `use` / `write` of a global buffer is one access: agent, global buffer, slot, byte
// range, source line. Two accesses of overlapping bytes, at least one a write, by different
// agents are a race unless happens-before orders them:
//   - the same cluster of the same grid: verifier/happens_before.h (program order, mbarriers,
//     bar.sync, barrier.cluster: their release/acquire orders every memory access of the
//     threads, global ones included);
//   - two clusters of one grid: nothing in the language orders them (no edge crosses clusters);
//   - one access of the primary grid and one of the dependent grid: ordered (primary first)
//     exactly when the dependent's access happens after a griddepcontrol.wait of an agent of its
//     own cluster (its own earlier wait, or another agent's wait before a barrier it passed).
//     PTX ISA (griddepcontrol): .wait returns once every prerequisite grid has completed and all
//     its memory operations are performed and made visible to the current grid, so every primary
//     access (before its agent's exit) happens before the wait's return. launch_dependents
//     orders nothing: it only lets the dependent grid be scheduled early. The cross-grid pair is
//     P2020 (reported at the dependent's access, naming the primary's), any other pair P2009.
// Not followed (conservative: a race may be reported where a copy's completion is the only
// link from a wait to an access): the clock a TMA/bulk delivery carries from its issuer.
#ifndef PARITY_VERIFIER_PDL_H_
#define PARITY_VERIFIER_PDL_H_

#include <span>
#include <vector>

#include "sim/engine/engine.h"
#include "sim/ir/ir.h"
#include "sim/trace/event.h"
#include "verifier/rules.h"

namespace parity::verifier {

// P2020 and P2009 findings on global buffers of a finished (or stopped) run, in the order of
// the later access of each pair; one per pair of source statements and global slot. Empty for a
// program without `global` buffers.
std::vector<Finding> CheckGlobalRaces(const ir::Program& program, const engine::Engine& engine,
                                      std::span<const trace::TraceEvent> trace);

}  // namespace parity::verifier

#endif  // PARITY_VERIFIER_PDL_H_
