// Replaying a kernel's own trace (gpu/include/parity/trace.cuh, header source "kernel") against
// the schedule `parity import` made of that kernel's PTX.
//
// A kernel names things the way the hardware does: a warp by its index in the CTA, an mbarrier or
// a copy's shared side by its shared-memory address. The schedule names agents by role and
// instance, barriers by (array, index) and copies by buffer slot. The mapping comes from two
// places:
//   - warps: the importer writes, before each role, `# kernel: role NAME = warps W0 W1 ...`
//     (instance k of the role is warp Wk of every CTA the role runs in);
//   - addresses: each warp's records are matched, in program order, with the operations its agent
//     issues in the schedule (one run of the model gives every agent's sequence: a schedule made
//     by the importer has no data-dependent control flow). The first record of an address binds
//     it to the barrier (or buffer slot) of the matching operation. Barriers are bound one to
//     one (an address is one barrier; a barrier is one address): the mbarrier.init records bind
//     every barrier first, so a kernel that later arrives on or waits for another barrier than
//     its schedule says diverges at that record. A buffer slot may have several addresses (each
//     warp's lowest lane copies to its own offset), but an address is in one slot only.
// A record that differs from its agent's next operation (another kind, count, byte count,
// parity, target CTA or multicast mask), a warp with no agent, or an agent whose operations the
// kernel did not issue by the end of a completed run is a divergence at that record. Records
// that match are rewritten in the schedule's names and the whole order is then replayed on the
// model (verifier/replay.h): a wait the kernel saw complete must be complete in the model when
// it happened, and so on. The first divergence of either check (in the kernel's record order)
// is reported, with the kernel's CUDA source line (a trace.cuh record's pc) and the schedule
// operation's `.pipe` line and the PTX lines the importer wrote beside it.
//
// What a kernel does not record (trace.cuh has no wrapper for it, or it happens in the memory
// system): reads and writes of buffers (`use`/`write`), exits, phase completions, copy
// deliveries, test_wait, inval, named-barrier arrive without sync. Those are unobserved kinds of
// the replay.
#ifndef PARITY_VERIFIER_KERNEL_TRACE_H_
#define PARITY_VERIFIER_KERNEL_TRACE_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "sim/common/status.h"
#include "sim/ir/ir.h"
#include "sim/trace/trace_file.h"
#include "verifier/replay.h"

namespace parity::verifier {

// A role of the schedule that is no warp of the kernel: a warpgroup's tensor core
// (`# kernel: role tensor_core_wgG = wgmma of warps A-B`, sim/ptx/import_wgmma.cc).
struct KernelTensorCore {
  int first_warp = 0, last_warp = 0;  // the warpgroup whose wgmma.mma_async it executes
  int line = 0;                       // its `# kernel:` line (1-based)
};

// What `parity import` wrote into the schedule for replaying the kernel's trace.
struct KernelMap {
  std::string file;                                    // the .pipe
  std::map<std::string, std::vector<int>> role_warps;  // role name -> warp of each instance
  std::map<std::string, KernelTensorCore> tensor_cores;  // role name -> its warpgroup
  std::vector<std::string> lines;                      // the .pipe's lines (0-based)
};

// Reads the `# kernel: role NAME = warps ...` and `# kernel: role NAME = wgmma of warps A-B`
// lines. Error "replay.kernel-map" (naming the file) when the schedule has no warp line (not
// made by `parity import`) or one is malformed.
Expected<KernelMap> ParseKernelMap(std::string_view pipe_text, const std::string& file);

struct KernelDivergence {
  size_t record = 0;           // 1-based, in the kernel trace's (time) order
  trace::TraceEvent observed{};
  std::string kernel_did;      // the record in the kernel's terms (warp, address, CUDA line)
  std::string reason;
  std::string schedule_op;     // the agent's operation in the schedule ("" if none)
  SourceLocation schedule_at;  // its .pipe line
  std::string ptx;             // the importer's note on that line: PTX lines (CUDA line)
  std::string agent;           // the schedule's agent ("warp1_2[0] of CTA 0, cluster 0")
  bool from_replay = false;    // the order check found it (else the per-warp match)
};

struct KernelReplayResult {
  bool diverged = false;
  KernelDivergence divergence;
  std::string schedule;  // the program's name
  size_t records = 0;    // records of the kernel trace
  size_t matched = 0;  // records matched with their agents' operations
  size_t merged = 0;   // per-lane records summed into the one before them (arrive counts)
  // Records of a warp after its wait timed out: its other lanes went on without the lane that
  // left the kernel (not matched).
  size_t after_abort = 0;
  size_t barriers_bound = 0;
  size_t addresses_bound = 0;  // barrier and buffer addresses
  // The replay of the records in the schedule's names (up to the first per-warp divergence).
  ReplayResult replay;
  trace::TraceFile translated;
  std::vector<size_t> origin;  // translated event -> kernel record (0-based)
};

// Replays `kernel` (header source "kernel") on `program` (the imported schedule, bound with
// `params`; `map` from its text). Errors (exit 2): a trace of another source, an engine that
// cannot be built, a schedule with a tensor-core role ("replay.kernel-wgmma", at its `# kernel:`
// line): trace.cuh records neither wgmma.mma_async nor wgmma.wait_group, so the warps' arrives
// on wgmma_issued_wgG and waits on wgmma_done_wgG, and every step of the tensor core, have no
// record to be matched with or ordered by. A divergence is a result.
Expected<KernelReplayResult> ReplayKernelTrace(const ir::Program& program,
                                               const std::vector<int64_t>& params,
                                               const KernelMap& map,
                                               const trace::TraceFile& kernel);

// "OK: ..." or the divergence with both sides' lines.
std::string FormatKernelReplayResult(const KernelReplayResult& result,
                                     const trace::TraceFile& kernel);

}  // namespace parity::verifier

#endif  // PARITY_VERIFIER_KERNEL_TRACE_H_
