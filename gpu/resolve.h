// The host side of the GPU executor that needs no CUDA: the shared layout of a launch and the
// resolution of agents' op streams before it (with the kernel's own control flow and operand
// resolution, sim/ir/exec.h). Compiled by g++ only, so that CPU tests reach it.
#ifndef PARITY_GPU_RESOLVE_H_
#define PARITY_GPU_RESOLVE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "gpu/executor.h"
#include "sim/ir/exec.h"

namespace parity::gpu {

// The schedule facts of `s` that the shared executor reads; `words` points into s.words.
void FillLayout(const LaunchSpec& s, exec::Layout* layout);

// Records the host resolves at most, over all agents (64 B each: 64 MiB).
inline constexpr size_t kMaxResolvedOps = size_t{1} << 20;

// Runs agent `g`'s program with the shared NextOp and Resolve (the agent's place and builtins
// as the kernel computes them) and appends its records to `out`. False, with the reason in *why
// and `out` unchanged, when the run is not fixed before the launch (an op that only the
// interpreter runs, a state token or a test_wait result the hardware decides), it faults (the
// interpreter then reports the fault on the device), or it is too long.
bool ResolveAgent(const exec::Layout& layout, const LaunchSpec& s, uint32_t g,
                  std::vector<exec::ResolvedOp>* out, std::string* why);

// Resolves every valid agent of the launch (all or none: agents of one launch run at the same
// kind of speed, and a schedule that faults faults as the interpreter reports it): fills `ops`
// and `index` ([2 g] first record, [2 g + 1] count) and returns true, or returns false with the
// first agent that cannot be resolved and why.
bool ResolveAll(const LaunchSpec& s, std::vector<exec::ResolvedOp>* ops,
                std::vector<uint32_t>* index, uint32_t* failed_agent, std::string* why);

// The launch spec of the primary grid of `s` (LaunchSpec::primary_clusters > 0): the same
// schedule, layout and options with the primary's clusters, warps and agents (its builtins count
// its own clusters), and no primary of its own.
LaunchSpec PrimaryView(const LaunchSpec& s);

// The stale reads in the trace of a programmatic dependent launch: each `use` of a `global`
// buffer by the schedule's own (dependent) grid, cluster < own_clusters, that saw the buffer's
// initial contents (kFlagInitialData) in a slot where some `write` of the primary grid (cluster
// >= own_clusters) covers bytes of the use's region: it read before the primary's write reached
// it. Indices into `events`, in order. (Per use, not per chunk: a use whose initial chunks lie
// outside the bytes the primary writes would count too; the executor records only the flag.)
std::vector<size_t> StaleGlobalReads(const std::vector<trace::TraceEvent>& events,
                                     uint32_t own_clusters);

}  // namespace parity::gpu

#endif  // PARITY_GPU_RESOLVE_H_
