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
//   - accesses of two grids of a chain (ir::Program::primaries; grid g + 1 is launched just
//     before grid g): the earlier grid's access is ordered first exactly when the later grid's
//     access happens after a griddepcontrol.wait of an agent of its own cluster (its own earlier
//     wait, or another agent's wait before a barrier it passed) and every grid launched between
//     the two executed a griddepcontrol.wait. PTX ISA (griddepcontrol): .wait returns once every
//     prerequisite grid has completed and all its memory operations are performed and made
//     visible to the current grid, so every access of the prerequisite (before its agent's exit)
//     happens before the wait's return; the prerequisite of a launch is the kernel launched
//     just before it on the stream. A grid between the two that never waits may complete
//     before its own prerequisite (it was launched with the programmatic attribute and nothing
//     holds it back: NVIDIA/cccl #9134, #3131), so a later wait then says nothing about the
//     grids before it. launch_dependents orders nothing: it only lets the next grid be
//     scheduled early. A cross-grid pair is P2020 (reported at the later grid's access, naming
//     the earlier one's, and the grid that breaks the chain of waits if one does), any other
//     pair P2009. The accesses are compared per (global buffer, slot).
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
