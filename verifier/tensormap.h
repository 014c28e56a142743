// Updates of a tensor map while TMAs use it (codes P2031, P2032, sim/model/codes.h).
//
// A TMA (tma.load, tma.store) reads its tensor map — the 128-byte CUtensorMap — through the
// tensormap proxy, from its issue until it is done with it. A kernel that edits a descriptor in
// place (`tensormap.replace TM`: tensormap.replace.tile.* on it, or generic stores of a new
// descriptor into its memory, as DeepGEMM's grouped GEMM does per group) has two obligations:
//   - P2031 tensormap-not-fenced: a TMA issued after the update (the update happens before the
//     issue) reads the new descriptor only through PTX's proxy fences: a
//     fence.proxy.tensormap::generic.release by the updater after the update, happens-before,
//     and a fence.proxy.tensormap::generic.acquire of that map by the TMA's issuer before the
//     TMA (`fence.proxy.tensormap.release`, `fence.proxy.tensormap.acquire TM`). Without them
//     the TMA may read a stale or torn descriptor.
//   - P2032 tensormap-modified-in-flight: an update that is not ordered after a TMA of the map
//     is done with it, while the TMA's issue is not ordered after the update either: on some
//     execution the descriptor changes while the TMA reads it (PTX ISA, asynchronous copy
//     completion: modifying the tensor descriptor before the operation completes is undefined).
//     A TMA is done with its descriptor once a wait observed the barrier phase one of its
//     deliveries completed in (its bytes landed, so the descriptor was read), or once its
//     issuer's later cp.async.bulk.wait_group[.read] returned — the ordering DeepGEMM's fix
//     relies on (sm90_fp8_gemm_1d1d.cuh, commit a6a9339: tma_desc_commit_group /
//     tma_desc_wait_group before the global descriptor is overwritten).
// Both compare pairs of events through happens-before (verifier/happens_before.h), so, like a
// data race, one run decides for every interleaving with the same synchronisation.
#ifndef PARITY_VERIFIER_TENSORMAP_H_
#define PARITY_VERIFIER_TENSORMAP_H_

#include <span>
#include <vector>

#include "sim/engine/engine.h"
#include "sim/ir/ir.h"
#include "sim/trace/event.h"
#include "verifier/rules.h"

namespace parity::verifier {

// P2031 / P2032 findings of a run; one per code, tensor map and pair of statements.
std::vector<Finding> CheckTensorMaps(const ir::Program& program, const engine::Engine& engine,
                                     std::span<const trace::TraceEvent> trace);

}  // namespace parity::verifier

#endif  // PARITY_VERIFIER_TENSORMAP_H_
