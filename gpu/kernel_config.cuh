// The configuration the executor kernel (gpu/executor.cu) receives and the host launcher
// (gpu/launch.cu) fills: the tensor maps and DeviceConfig, passed by value at each launch.
// For nvcc only (CUDA types).
#ifndef PARITY_GPU_KERNEL_CONFIG_CUH_
#define PARITY_GPU_KERNEL_CONFIG_CUH_

#include <cuda.h>

#include <cstdint>

#include "gpu/executor.h"
#include "sim/ir/exec.h"
#include "sim/trace/event.h"

namespace parity::gpu {

// Dynamic shared memory the kernel may ask for: 227 KB per block on sm_90, less what the kernel
// declares statically (the DeviceConfig copy).
constexpr uint64_t kMaxDynamicSmem = 227 * 1024 - 1024;

struct TensorMaps {
  CUtensorMap map[kMaxTensorMaps];
};

// Everything the kernel needs besides the tensor maps (passed by value): the schedule's layout
// that the shared executor reads (exec::Layout, filled by FillLayout), and the launch's own.
struct DeviceConfig : exec::Layout {
  const AgentSlot* agents;
  uint32_t num_words;
  uint32_t words_in_smem;  // 1: the kernel copies `words` to dynamic shared memory at smem_bytes
  uint32_t clusters, warps_per_cta;
  uint32_t barrier_elements, init_bitmap_offset;
  uint32_t buffers_begin, smem_bytes;
  uint32_t map_rank[kMaxTensorMaps], map_box_bytes[kMaxTensorMaps];
  long long budget_cycles;
  // Results.
  trace::TraceEvent* ring;      // [agent_global * ring_capacity]
  uint32_t ring_capacity;
  AgentRecord* records;         // [agent_global]
  volatile uint32_t* abort_flag;
  HangReport* hang;             // written by the agent that wins hang_claim
  uint32_t* hang_claim;
  uint32_t* exit_count;         // [cluster]
  const uint32_t* agents_per_cluster;
  // [0..4] uses, used chunks, bad chunks, zero chunks, finished agents; [5..8] uses of `global`
  // buffers, their chunks, chunks with initial contents, bad chunks.
  unsigned long long* stats;
  // The global source of cp.async and bulk.load and destination of bulk.store: one pattern
  // chunk per 16 bytes of the buffer area, addressed by the region's offset from buffers_begin.
  uint8_t* bulk_global;
  // Litmus delays: spin cycles before an agent's first op, and a seeded per-op jitter.
  const uint32_t* start_delay;  // [agent_global] or null
  uint32_t op_jitter;           // max spin cycles before each op (0: none)
  uint32_t seed;
  // Agents resolved by the host (ResolveAgent): [2 g] first record, [2 g + 1] record count, or
  // kNone there for an agent the kernel interprets. Null: every agent is interpreted.
  const exec::ResolvedOp* resolved;
  const uint32_t* resolved_index;
  // Programmatic dependent launch: which grid this launch runs (0 the schedule's own, the
  // dependent one when there is a primary; 1 the primary), the cluster number its trace records
  // and hang reports start at (the engine numbers the primary's clusters after the schedule's),
  // whether an agent that runs off the end of its program records kExit (a primary's exits are
  // what releases the dependent's griddepcontrol.wait in the model, so a replay needs them).
  uint32_t grid;
  uint32_t trace_cluster_base;
  uint32_t emit_exit;
  uint32_t* grid_done;           // agents of this grid that ran to their end (or `exit`)
  const uint32_t* primary_done;  // the dependent grid: the primary's grid_done; null: none
  uint32_t primary_agents;       // the dependent grid: the primary grid's agents
  // `global` buffers (LaunchSpec::global_offset into one allocation both grids receive).
  uint8_t* globals;
  uint64_t global_offset[kMaxGlobalDecls];
};

// The executor kernel's variants: traced or not, and the launch bound (256 threads for up to 8
// agents per CTA, whose register budget keeps the interpreter out of local memory; else 1024).
using ExecutorKernelFn = void (*)(TensorMaps, DeviceConfig);
ExecutorKernelFn ExecutorKernelFor(bool trace, bool narrow);

}  // namespace parity::gpu

#endif  // PARITY_GPU_KERNEL_CONFIG_CUH_
