// The interface between the schedule runner (gpu/runner.cc, plain C++: parses and encodes the
// schedule with sim/ir) and the interpreter kernel (gpu/executor.cu, nvcc). Pure C++ with no
// CUDA types, so that both compilers see the same layout.
//
// Agent model (as sim/engine): every role is instantiated `count` times per CTA; here each agent
// is one warp. All 32 lanes run the interpreter in lockstep (same words, same values); lane 0
// issues the instructions that one elected thread would (mbarrier ops, TMA), all lanes take part
// in what every thread does (barrier.cluster, fences, the reads of `use`). An agent's `threads`
// is metadata, except that bar.sync thread counts are scaled to 32 threads per agent.
#ifndef PARITY_GPU_EXECUTOR_H_
#define PARITY_GPU_EXECUTOR_H_

#include <cstdint>
#include <string>
#include <vector>

#include "sim/common/host_device.h"
#include "sim/ir/exec.h"
#include "sim/trace/event.h"

namespace parity::gpu {

// The limits and types of the shared executor (sim/ir/exec.h).
using exec::AgentSlot;
using exec::kMaxBarrierDecls;
using exec::kMaxBufferDecls;
using exec::kMaxGlobalDecls;
using exec::kMaxRoles;
using exec::kMaxTensorMaps;
using exec::kMaxVars;
inline constexpr uint32_t kMaxWarpsPerCta = 32; // 1024 threads

// TraceEvent::flags bits the executor adds (kind-specific, next to kFlagRemote/kFlagMulticast).
inline constexpr uint8_t kFlagDataBad = 0x80;   // kUse: some 16-byte chunk was not a pattern chunk
inline constexpr uint8_t kFlagAborted = 0x40;   // kWaitTimeout: still blocked when another agent's
                                                // timeout aborted the run (not itself expired)
inline constexpr uint8_t kFlagInitialData = 0x40;  // kGlobalUse: some chunk still held the global
                                                   // buffer's initial contents (no write yet)
// TraceEvent::pc of the end-of-run probe (kTestWait parity 0 on every initialised barrier).
inline constexpr uint16_t kProbePc = 0xffff;

// The 16-byte pattern chunk that global tensor `map` holds at chunk index `i` (byte offset 16 i):
// self-validating, so that a consumer can tell pattern bytes from poison or zeros.
PARITY_HD inline uint32_t PatternHash(uint32_t i, uint32_t tag) {
  uint32_t h = i * 0x9E3779B1u ^ tag * 0x85EBCA77u;
  h ^= h >> 15;
  h *= 0x2C1B3C6Du;
  h ^= h >> 12;
  return h | 1u;  // never 0, so an all-zero chunk is never a pattern chunk
}
inline constexpr uint32_t kPatternTagBase = 0xA5000000u;  // w[1] = base | map index (0xff: `write`)
// The initial contents of `global` buffers: pattern chunks tagged base | 0xfd whose w[0] is the
// chunk's index in the launch's global area, so that a `use` can tell data no `write` has
// reached yet (a stale read of the other grid's output) from written and from garbage bytes.
inline constexpr uint32_t kGlobalInitialTag = kPatternTagBase | 0xfdu;
inline constexpr uint32_t kWriteTag = kPatternTagBase | 0xffu;

struct TensorMapSpec {
  uint32_t dtype = 0, swizzle = 0, interleave = 0, oob_fill = 0;  // CUtensorMap* enum values
  uint32_t rank = 0, elem_bytes = 0;
  uint64_t dims[5] = {}, strides[4] = {};  // strides: bytes, dims 1..rank-1
  uint32_t box[5] = {}, elem_strides[5] = {};
  uint32_t box_bytes = 0;
  uint64_t global_bytes = 0;
};

struct LaunchSpec {
  std::vector<uint32_t> words;  // ir::Encode output
  uint32_t cluster_m = 1, cluster_n = 1, clusters = 1;
  uint32_t warps_per_cta = 1;
  std::vector<AgentSlot> agents;  // [cta_global * warps_per_cta + warp]
  uint32_t role_body_begin[kMaxRoles] = {};  // word offsets (the roles' code: header word 28)
  uint32_t role_num_vars[kMaxRoles] = {};
  uint32_t role_threads[kMaxRoles] = {};  // the schedule's `threads` per agent (bar.sync counts)
  // Named barrier id and the schedule's thread count of a bar.sync/bar.arrive -> the hardware
  // count (32 x the warps' participations in a phase) where the runner could tell it statically;
  // a count missing from the table is scaled by the executing role's threads.
  uint32_t named_threads[exec::kMaxNamedBarriers][exec::kNamedCounts] = {};
  uint32_t named_hw_threads[exec::kMaxNamedBarriers][exec::kNamedCounts] = {};
  uint32_t num_roles = 0;
  // Shared memory, byte offsets from a 1024-byte aligned base. Barrier elements are numbered
  // barrier_first[b] + index; element e lives at 8 e.
  uint32_t num_barriers = 0;
  uint32_t barrier_first[kMaxBarrierDecls] = {}, barrier_size[kMaxBarrierDecls] = {};
  uint32_t barrier_count_ref[kMaxBarrierDecls] = {};  // expression ref: the declared count
  uint32_t barrier_elements = 0;
  uint32_t init_bitmap_offset = 0;  // one bit per barrier element: initialised (for the probe)
  uint32_t num_buffers = 0;
  uint32_t buffer_offset[kMaxBufferDecls] = {}, buffer_slot_bytes[kMaxBufferDecls] = {},
           buffer_stages[kMaxBufferDecls] = {};
  uint32_t buffers_begin = 0, smem_bytes = 0;  // smem_bytes excludes the alignment slack
  std::vector<TensorMapSpec> maps;
  bool trace = true;
  uint32_t ring_capacity = 4096;  // events kept per agent (the first ones: the prefix matters)
  double timeout_ms = 2000;       // per-wait budget
  // Litmus delays (empty / 0: none): spin cycles before each agent's first op (indexed like
  // `agents`), and up to `op_jitter` cycles before every op, drawn from `seed`.
  std::vector<uint32_t> start_delay;
  uint32_t op_jitter = 0;
  uint32_t seed = 0;
  // Benchmark (parity_gpu bench): after the recorded run, `bench_pairs` pairs of launches with
  // tracing compiled in and compiled out (ABBA order), and as many cudaMemcpy device-to-device
  // copies of `memcpy_bytes`, all timed with CUDA events in the same process.
  uint32_t bench_pairs = 0;
  uint64_t memcpy_bytes = 0;
  // Resolve on the host the agents whose run is fixed before the launch, so the kernel executes
  // their pre-resolved op streams instead of interpreting (gpu/executor.cu, ResolvedOp). Off:
  // every agent is interpreted (parity_gpu --interpret).
  bool resolve = true;
  // Programmatic dependent launch (ir::Program::primary_clusters): the primary grid runs first,
  // `primary_clusters` clusters of the same shape and shared-memory layout with the primary
  // roles' agents ([cta * primary_warps_per_cta + warp] of its own grid); the grid above is its
  // dependent, launched on the same stream with cudaLaunchAttributeProgrammaticStreamSerialization.
  // 0: one grid. Trace events of the primary grid carry cluster = clusters + its cluster id
  // (the engine numbers the primary grid's clusters after the schedule's own).
  uint32_t primary_clusters = 0, primary_warps_per_cta = 0;
  std::vector<AgentSlot> primary_agents;
  // `global` buffers, one device allocation both grids receive: buffer k at byte global_offset[k]
  // (256-aligned), global_slots[k] slots of global_slot_bytes[k] bytes.
  uint32_t num_globals = 0;
  uint64_t global_offset[kMaxGlobalDecls] = {};
  uint32_t global_slots[kMaxGlobalDecls] = {}, global_slot_bytes[kMaxGlobalDecls] = {};
  uint64_t global_bytes = 0;
};

struct HangReport {
  uint32_t kind = 0;  // 0 none, 1 wait timeout, 2 interpreter fault
  uint32_t cluster = 0, cta = 0, agent = 0, barrier = 0, index = 0, parity = 0, pc = 0;
  uint32_t fault = 0;  // kind 2: FaultCode
  uint32_t eval_error = 0;  // fault kFaultEval: the ir::EvalError (0: a loop step not positive)
  uint32_t grid = 0;   // 0 the schedule's own grid, 1 the primary grid (`cluster` is the trace's)
};

// Interpreter faults (checks that stop the run instead of issuing a bad instruction).
using exec::FaultCode;
using exec::kFaultBadWord;
using exec::kFaultAlign;
using exec::kFaultBound;
using exec::kFaultCount;
using exec::kFaultEval;
using exec::kFaultIndex;
using exec::kFaultNesting;
using exec::kFaultNone;
using exec::kFaultRange;
using exec::kFaultStack;
const char* FaultName(uint32_t code);  // gpu/resolve.cc

struct AgentRecord {
  uint32_t cta_global = 0, warp = 0, smid = 0, events = 0, dropped = 0;
  uint64_t clock_start = 0, globaltimer_start = 0;
  // cta_global counts the primary grid's CTAs after the schedule's own (the engine's numbering).
  uint32_t grid = 0;  // 0 the schedule's own grid, 1 the primary grid
  // 1: the agent's griddepcontrol.wait returned because the primary grid ended by an abort (a
  // wait timed out or faulted there): the model's wait never returns; the agent left there.
  uint32_t griddep_released_by_abort = 0;
};

struct RunOutput {
  std::string device_name;
  int sm_count = 0;
  bool completed = false;  // every agent ran to its end and no wait timed out
  // The kernel raised an exception (e.g. cudaErrorLaunchFailure): the CUDA error name. The
  // context is then unusable: nothing else was read back, and the process must not launch again.
  std::string trap;
  HangReport hang;
  std::vector<trace::TraceEvent> events;  // merged, sorted by calibrated time
  std::vector<AgentRecord> agents;
  uint64_t uses = 0, used_chunks = 0, bad_chunks = 0, zero_chunks = 0;
  // Global tensors after the run, per 16-byte chunk: written by a TMA store (a `write` pattern
  // chunk), or neither the original pattern nor a `write` chunk (poison or garbage stored).
  uint64_t stored_chunks = 0, bad_global_chunks = 0;
  // `use` of `global` buffers: the uses, their 16-byte chunks, the chunks that still held the
  // initial contents, and the chunks that were neither initial nor `write` data.
  uint64_t global_uses = 0, global_used_chunks = 0, global_initial_chunks = 0, global_bad_chunks = 0;
  double kernel_ms = 0;
  std::vector<float> traced_ms, untraced_ms, memcpy_ms;  // bench_pairs entries each
  bool bench_ok = true;  // every bench launch completed (no hang, no fault)
  double clock_ghz = 0;
  // Agents run from host-resolved op streams, agents interpreted, and why the first interpreted
  // one could not be resolved.
  uint32_t resolved_agents = 0, interpreted_agents = 0;
  std::string interpret_reason;
};

// What the host's resolution makes of a launch (gpu/resolve.cc, exec::ResolvedOp), without CUDA:
// either every agent's run is fixed before the launch (resolved: ops per agent, indexed like
// LaunchSpec::agents, 0 for an invalid slot) or the first agent that is not, and why.
struct ResolveReport {
  bool resolved = false;
  std::vector<uint32_t> ops_per_agent;
  uint64_t bytes = 0;  // the records' size on the device
  uint32_t failed_agent = 0;
  std::string reason;
};
ResolveReport ResolveOnHost(const LaunchSpec& spec);  // gpu/resolve.cc

// Runs the schedule on GPU 0. Returns "" or an error message (CUDA failure, bad spec).
std::string RunOnGpu(const LaunchSpec& spec, RunOutput* out);

}  // namespace parity::gpu

#endif  // PARITY_GPU_EXECUTOR_H_
