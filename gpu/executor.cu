// The schedule executor kernel (see gpu/executor.h for the agent model; its host launcher, RunOnGpu,
// is gpu/launch.cu).
// The kernel reads the compact encoding of sim/ir/encoding.h word for word and issues, for each
// operation, the PTX instruction it stands for (gpu/ptx.cuh). When every agent's run is fixed
// before the launch (no state tokens, no test_wait results, only the ops of Resolve), the host
// runs the same control flow and operand resolution over each agent's program first and the
// kernel executes the resulting streams of resolved ops instead (ResolvedOp, RunResolved): the
// same instructions with the same operands and trace records, without decoding (a streaming copy
// went from 54 to 82 % of cudaMemcpy bandwidth: traces/h100/README.md). --interpret turns it off.
//
// No hang: every mbarrier wait is a try_wait.parity loop bounded by a clock64 budget. The first
// agent whose budget expires records kWaitTimeout, publishes a HangReport and sets a global abort
// flag; every agent polls that flag in its waits and before each operation, and leaves. Before a
// CTA's warps return they meet on a global per-cluster exit counter (bounded too), so that no CTA
// leaves while a peer may still arrive on its barriers or multicast into it.
// barrier.cluster.wait and bar.sync have no bounded form (PTX ISA 9.7.13.3, 9.7.13.1); a kernel
// stuck there is caught by the host watchdog in RunOnGpu, which reports the hang and exits the
// process (the driver then ends the kernel). griddepcontrol.wait (a programmatic dependent
// launch) has none either: it returns once the primary grid completed, which the primary's
// bounded waits guarantee (an abort there ends that grid too); the dependent then reads the
// primary's count of agents that ran to their end to tell a completion from an abort.
#include <algorithm>
#include <iterator>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "gpu/executor.h"
#include "gpu/resolve.h"
#include "gpu/host.cuh"
#include "gpu/kernel_config.cuh"
#include "gpu/ptx.cuh"
#include "gpu/use_check.cuh"

namespace parity::gpu {
namespace {

namespace ptx = parity::gpu::ptx;
namespace layout = parity::ir::layout;  // the op records' fields (sim/ir/op_layout.h)
using trace::EventKind;
using trace::TraceEvent;

using exec::kNone;
using exec::OpKind;
using exec::ResolvedOp;
constexpr uint32_t kFull = 0xffffffffu;
// The scalars of an agent, everything but its variables (exec::AgentPlace: its place, fault and
// loop count, which the shared executor reads and writes).
struct AgentCore : exec::AgentPlace {
  uint32_t lane, warp, cta_global, agent_global;
  uint32_t smem_base;  // 1024-aligned shared-window address
  uint8_t* smem_ptr;   // generic pointer to the same byte
  uint32_t events;
  uint32_t capacity;  // c.ring_capacity (read per event: kept with the agent, not in shared memory)
  TraceEvent* ring;  // this agent's trace ring
  uint32_t bulk_groups;  // bulk async-groups committed so far
  uint32_t cp_groups;    // cp.async-groups committed so far
  uint32_t ops;          // ops issued (seeds the litmus jitter)
  unsigned long long uses, used_chunks, bad_chunks, zero_chunks;  // `use` statistics
  uint32_t griddep_aborted;  // griddepcontrol.wait returned because the primary grid aborted
};

struct Agent : AgentCore {
  static constexpr bool kVars = true;  // has variables (state tokens, test_wait results)
  int64_t vars[kMaxVars];
  // For a variable holding a state token: the parity of the phase the arrive was counted in,
  // probed just before the arrive (the token itself is opaque, PTX ISA mbarrier.arrive).
  uint8_t token_parity[kMaxVars];
  // Every exec::kWalkCheck control instructions without an op: leave after another agent's
  // timeout (also checked in every wait and before the unbounded barriers), not per
  // instruction: the flag is an L2 load.
  template <typename C>
  PARITY_HD bool OnWalked(const C& c);
};

// An agent's scalars without its variables, for RunResolved: a local copy that nothing takes
// the address of stays in registers, while the kernel's Agent lives in local memory
// (Interpret passes it by reference), where every access is an L2 round trip once the buffers
// take most of the L1. No variables: resolved agents have no tokens and no test_wait results.
struct HotAgent : AgentCore {
  static constexpr bool kVars = false;
};

__device__ __forceinline__ uint32_t Mix(uint32_t x) {
  x ^= x >> 16;
  x *= 0x7feb352dU;
  x ^= x >> 15;
  x *= 0x846ca68bU;
  x ^= x >> 16;
  return x;
}

// Busy-waits `cycles` clock64 cycles (litmus delays; no memory traffic).
__device__ __forceinline__ void Spin(uint32_t cycles) {
  const long long start = clock64();
  while (clock64() - start < static_cast<long long>(cycles)) {
  }
}

template <bool kTrace, typename A>
__device__ __forceinline__ void Emit(const DeviceConfig& c, A& a, EventKind kind,
                                     uint32_t target_cta, uint32_t object, uint32_t index,
                                     int32_t value, int32_t value2, uint32_t phase, uint32_t parity,
                                     uint32_t pc, uint8_t flags = 0) {
  if constexpr (kTrace) {
    // Every lane packs the record and counts it (no divergent branch around the packing); only
    // lane 0 stores it.
    {
      if (a.events < a.capacity) {  // the ring's capacity, in a register
        // The 32-byte TraceEvent as two 16-byte stores of its words (trace::PackTraceEvent:
        // the field layout of sim/trace/event.h), streaming past L1: only the host reads it.
        const uint32_t fl = flags | (target_cta != a.cta ? trace::kFlagRemote : 0);
        const trace::TraceEventWords e = trace::PackTraceEvent(
            static_cast<uint64_t>(clock64()), kind, fl, a.cluster + c.trace_cluster_base, a.cta,
            target_cta,
            a.slot.index_in_cta, object, index, value, value2, phase, parity, pc);
        const uint4 lo = make_uint4(e.w[0], e.w[1], e.w[2], e.w[3]);
        const uint4 hi = make_uint4(e.w[4], e.w[5], e.w[6], e.w[7]);
        uint4* dst = reinterpret_cast<uint4*>(a.ring + a.events);
        if (a.lane == 0) {
          __stcs(dst, lo);
          __stcs(dst + 1, hi);
        }
      }
      ++a.events;
    }
  }
}

__device__ __forceinline__ bool Aborted(const DeviceConfig& c) { return *c.abort_flag != 0; }

// The kernel's form of the shared evaluator (sim/ir/exec.h).
__device__ __forceinline__ int64_t Eval(const DeviceConfig& c, Agent& a, uint32_t ref) {
  return exec::EvalExpr(c, a, ref);
}

// Operands as shared-window addresses (the shared resolver gives offsets from the CTA's base).
__device__ __forceinline__ bool BarrierAddr(const DeviceConfig& c, Agent& a, const uint32_t* f,
                                            uint32_t* bar, uint32_t* index, uint32_t* cta,
                                            uint32_t* addr) {
  if (!exec::BarrierOperand(c, a, f, bar, index, cta, addr)) return false;
  *addr += a.smem_base;
  return true;
}
__device__ __forceinline__ bool BufferAddr(const DeviceConfig& c, Agent& a, const uint32_t* f,
                                           uint32_t* buf, uint32_t* slot, uint32_t* offset,
                                           uint32_t* bytes, uint32_t* addr) {
  if (!exec::BufferOperand(c, a, f, buf, slot, offset, bytes, addr)) return false;
  *addr += a.smem_base;
  return true;
}

template <typename C>
PARITY_HD bool Agent::OnWalked(const C& c) {
#ifdef __CUDA_ARCH__
  return __shfl_sync(kFull, Aborted(c) ? 1 : 0, 0) != 0;
#else
  return false;  // the kernel's agents run on the device only
#endif
}

template <bool kTrace, typename A>
__device__ __forceinline__ void Abort(const DeviceConfig& c, A& a, uint32_t kind, uint32_t barrier,
                      uint32_t index, uint32_t parity, uint32_t pc) {
  if (a.lane == 0) {
    if (atomicCAS(c.hang_claim, 0u, 1u) == 0u) {
      c.hang->kind = kind;
      c.hang->cluster = a.cluster + c.trace_cluster_base;
      c.hang->grid = c.grid;
      c.hang->cta = a.cta;
      c.hang->agent = a.slot.index_in_cta;
      c.hang->barrier = barrier;
      c.hang->index = index;
      c.hang->parity = parity;
      c.hang->pc = pc;
      c.hang->fault = a.fault;
      c.hang->eval_error = a.eval_error;
      __threadfence();
    }
    *c.abort_flag = 1;
    __threadfence();
  }
  __syncwarp();
}

// Bounded try_wait.parity loop run by all 32 lanes (each lane acquires, so every lane may read
// the bytes the completed phase guarded). Returns 0 done, 1 timed out, 2 aborted by a peer.
__device__ __forceinline__ int WaitBounded(const DeviceConfig& c, uint32_t lane, uint32_t addr, uint32_t parity,
                           bool by_token, uint64_t token, uint32_t order) {
  const long long start = clock64();
  uint32_t polls = 0;
  while (true) {
    const bool ok = by_token ? ptx::MbarrierTryWaitToken(addr, token)
                             : ptx::MbarrierTryWaitParityOrdered(addr, parity, order);
    if (__all_sync(kFull, ok)) return 0;
    // The abort flag is an L2 load: read after every 8th failed try_wait, so that a phase that
    // completes meanwhile is seen sooner; the budget (clock64) after every one.
    int stop = 0;
    if (lane == 0) {
      stop = (++polls & 7) == 0 && Aborted(c) ? 2 : (clock64() - start > c.budget_cycles ? 1 : 0);
    }
    stop = __shfl_sync(kFull, stop, 0);
    if (stop != 0) return stop;
  }
}

template <typename A>
__device__ __forceinline__ void SetInitBit(const DeviceConfig& c, A& a, uint32_t element) {
  uint32_t* bitmap = reinterpret_cast<uint32_t*>(a.smem_ptr + c.init_bitmap_offset);
  atomicOr(&bitmap[element / 32], 1u << (element % 32));
}

// `use` (count the 16-byte chunks of the region that are not pattern data, and the all-zero
// ones) or `write` (store the pattern of agent `who`) of the region at shared-window address
// `addr` (generic pointer `p`), all 32 lanes. Returns the warp's (bad, zero) counts. Takes no
// Agent, so that the agent's scalars can stay in registers in RunResolved.
__device__ __noinline__ uint2 CheckOrWrite(uint8_t* p, uint32_t addr, uint32_t off, uint32_t bytes,
                                           bool write, uint32_t lane, uint32_t who) {
  const uint32_t chunks = bytes / 16;
  uint32_t bad = 0, zero = 0;
  if (write) {
    for (uint32_t k = lane; k < chunks; k += 32) {
      const uint32_t idx = (off / 16 + k) ^ who;
      const uint32_t tag = kPatternTagBase | 0xffu;
      const uint32_t h = PatternHash(idx, tag);
      *reinterpret_cast<uint4*>(p + 16 * k) = make_uint4(idx, tag, h, ~h);
    }
  } else {
    const uint2 n = CheckPatternChunks(addr, chunks, lane);
    bad = n.x;
    zero = n.y;
  }
  return make_uint2(__reduce_add_sync(kFull, bad), __reduce_add_sync(kFull, zero));
}

// CheckOrWrite on another CTA's shared memory at shared::cluster address `remote` (mapa):
// the same pattern and the same checks, through ld/st.shared::cluster.
__device__ __noinline__ uint2 CheckOrWriteRemote(uint32_t remote, uint32_t off, uint32_t bytes,
                                                 bool write, uint32_t lane, uint32_t who) {
  const uint32_t chunks = bytes / 16;
  uint32_t bad = 0, zero = 0;
  for (uint32_t k = lane; k < chunks; k += 32) {
    if (write) {
      const uint32_t idx = (off / 16 + k) ^ who;
      const uint32_t tag = kPatternTagBase | 0xffu;
      const uint32_t h = PatternHash(idx, tag);
      ptx::StSharedCluster16(remote + 16 * k, make_uint4(idx, tag, h, ~h));
    } else {
      const uint4 v = ptx::LdSharedCluster16(remote + 16 * k);
      if ((v.x | v.y | v.z | v.w) == 0) {
        ++zero;
      } else if ((v.y & 0xff000000u) != kPatternTagBase || v.z != PatternHash(v.x, v.y) ||
                 v.w != ~v.z) {
        ++bad;
      }
    }
  }
  return make_uint2(__reduce_add_sync(kFull, bad), __reduce_add_sync(kFull, zero));
}

// ---------------------------------------------------------------------------------------------
// Resolved operations. Every statement of the ops below is executed in two steps: Resolve
// evaluates its operands (expressions, barrier and buffer addresses, the checks that can fault)
// into a ResolvedOp, and Execute issues the instruction from that record. The interpreter does
// both on the device, statement by statement. For an agent whose whole run is fixed before the
// launch (it runs only these ops, none of which writes a variable from the hardware: no state
// token, no test_wait result), the host runs the same NextOp and Resolve (sim/ir/exec.h,
// compiled for both sides; gpu/resolve.cc) over the agent's program once, and the kernel executes
// the agent's stream of records (RunResolved) without decoding a statement or evaluating an
// expression: the same instructions, in the same order, with the same operands and trace
// records. exec::ResolvedOp lists the fields of each op's record.

// Issues a resolved op. Returns true when the agent must stop (exit, wait timeout or abort).
template <bool kTrace, typename A>
__device__ __forceinline__ bool Execute(const DeviceConfig& c, const TensorMaps& maps, A& a,
                                        const ResolvedOp& r) {
  const OpKind op = exec::ResolvedKind(r);
  const uint32_t spc = exec::ResolvedPc(r);
  switch (op) {
    case OpKind::kMbarrierInit: {  // init
      const exec::BarrierOperands& b = r.barrier.b;
      const uint32_t addr = a.smem_base + b.addr;
      if (a.lane == 0) {
        ptx::MbarrierInit(addr, r.barrier.value);
        SetInitBit(c, a, c.barrier_first[b.bar] + b.index);
      }
      Emit<kTrace>(c, a, EventKind::kInit, b.cta, b.bar, b.index, static_cast<int32_t>(r.barrier.value),
                   0, 0, 0, spc);
      return false;
    }
    case OpKind::kMbarrierInval: {  // inval
      const exec::BarrierOperands& b = r.barrier.b;
      if (a.lane == 0) ptx::MbarrierInval(a.smem_base + b.addr);
      Emit<kTrace>(c, a, EventKind::kInval, b.cta, b.bar, b.index, 0, 0, 0, 0, spc);
      __syncwarp();
      return false;
    }
    case OpKind::kMbarrierArrive: {  // arrive
      // kind: 0 arrive, 1 arrive.noComplete, 2 arrive_drop (ir::MbarrierArrive::Kind). The
      // runner refuses the forms PTX lacks (noComplete or a token on a remote barrier).
      const exec::ResolvedArrive& x = r.arrive;
      const uint32_t akind = x.kind, b = x.b.bar, i = x.b.index, addr = a.smem_base + x.b.addr;
      const uint32_t count = x.count, tx = x.tx, mask = x.mask;
      const uint32_t token_var = A::kVars ? x.token_var : kNone;
      const bool has_tx = x.has_tx != 0, masked = x.masked != 0;
      // The schedule's semantics and scope, issued as written (PTX default .release.cta). The
      // runner refuses qualifiers on noComplete and arrive_drop, which keep their defaults.
      const uint32_t order = x.order;
      const uint32_t csize = c.cluster_m * c.cluster_n;
      for (uint32_t rk = 0; rk < csize; ++rk) {
        if ((mask >> rk & 1u) == 0) continue;
        if (a.lane == 0) {
          if (rk == a.cta) {
            uint64_t token = 0;
            uint32_t tparity = 0;
            // The phase the arrive is counted in: the current one, whose parity is 1 exactly
            // when the phase of parity 0 before it completed (test_wait.parity 0). Nothing
            // but this arrive can complete it in between unless others over-arrive.
            if (token_var < kMaxVars) tparity = ptx::MbarrierTestWaitParity(addr, 0) ? 1u : 0u;
            if (has_tx && count == 1) {
              token = ptx::MbarrierArriveExpectTxOrdered(addr, tx, order);
            } else if (has_tx) {
              ptx::MbarrierExpectTx(addr, tx);
              token = ptx::MbarrierArriveOrdered(addr, count, order);
            } else if (akind == 1) {
              token = ptx::MbarrierArriveNoComplete(addr, count);
            } else if (akind == 2) {
              token = ptx::MbarrierArriveDrop(addr, count);
            } else {
              token = ptx::MbarrierArriveOrdered(addr, count, order);
            }
            if constexpr (A::kVars) {
              if (token_var < kMaxVars) {
                a.vars[token_var] = static_cast<int64_t>(token);
                a.token_parity[token_var] = static_cast<uint8_t>(tparity);
              }
            }
          } else {
            const uint32_t remote = ptx::MapaSharedCluster(addr, rk);
            if (has_tx && count == 1) {
              ptx::MbarrierArriveExpectTxRemoteOrdered(remote, tx, order);
            } else if (akind == 2 && !has_tx) {
              ptx::MbarrierArriveDropRemote(remote, count);
            } else {
              if (has_tx) ptx::MbarrierExpectTxRemote(remote, tx);
              ptx::MbarrierArriveRemoteOrdered(remote, count, order);
            }
          }
        }
        Emit<kTrace>(c, a, has_tx ? EventKind::kArriveExpectTx : EventKind::kArrive, rk, b, i,
                     static_cast<int32_t>(count), static_cast<int32_t>(tx), 0, 0, spc,
                     (masked ? trace::kFlagMulticast : 0) |
                         trace::OrderFlags((order & ptx::kOrderRelaxed) != 0,
                                           (order & ptx::kOrderCluster) != 0));
      }
      if constexpr (A::kVars) {
        if (token_var < kMaxVars) {
          // Every lane holds lane 0's token (the lanes interpret in lockstep).
          a.vars[token_var] = static_cast<int64_t>(
              __shfl_sync(kFull, static_cast<unsigned long long>(a.vars[token_var]), 0));
          a.token_parity[token_var] = static_cast<uint8_t>(
              __shfl_sync(kFull, static_cast<uint32_t>(a.token_parity[token_var]), 0));
        }
      }
      __syncwarp();
      return false;
    }
    case OpKind::kMbarrierExpectTx:    // expect_tx
    case OpKind::kMbarrierCompleteTx: {  // complete_tx
      const exec::BarrierOperands& b = r.barrier.b;
      const uint32_t t = b.cta, addr = a.smem_base + b.addr, n = r.barrier.value;
      if (a.lane == 0) {
        if (t == a.cta) {
          if (op == OpKind::kMbarrierExpectTx) ptx::MbarrierExpectTx(addr, n); else ptx::MbarrierCompleteTx(addr, n);
        } else {
          const uint32_t remote = ptx::MapaSharedCluster(addr, t);
          if (op == OpKind::kMbarrierExpectTx) ptx::MbarrierExpectTxRemote(remote, n); else ptx::MbarrierCompleteTxRemote(remote, n);
        }
      }
      Emit<kTrace>(c, a, op == OpKind::kMbarrierExpectTx ? EventKind::kExpectTx : EventKind::kCompleteTx, t, b.bar, b.index,
                   static_cast<int32_t>(n), 0, 0, 0, spc);
      __syncwarp();
      return false;
    }
    case OpKind::kMbarrierWait: {  // wait
      const exec::ResolvedWait& x = r.wait;
      const uint32_t b = x.b.bar, i = x.b.index, t = x.b.cta, addr = a.smem_base + x.b.addr;
      const uint32_t parity = x.parity;
      const uint32_t token_var = A::kVars ? x.token_var : kNone;
      const bool by_token = token_var < kMaxVars;
      uint64_t token = 0;
      if constexpr (A::kVars) {
        if (by_token) token = static_cast<uint64_t>(a.vars[token_var]);
      }
      const uint32_t order = x.order;  // the runner refuses qualifiers on token waits
      const uint8_t oflags = trace::OrderFlags((order & ptx::kOrderRelaxed) != 0,
                                               (order & ptx::kOrderCluster) != 0);
      if (x.test_only != 0) {  // test_wait: one non-blocking probe into the result variable
        uint32_t ok = 0;
        if (a.lane == 0) {
          ok = (by_token ? ptx::MbarrierTestWaitToken(addr, token)
                         : ptx::MbarrierTestWaitParityOrdered(addr, parity, order)) ? 1u : 0u;
        }
        ok = __shfl_sync(kFull, ok, 0);
        if constexpr (A::kVars) {
          if (x.result_var < kMaxVars) a.vars[x.result_var] = ok;
        }
        Emit<kTrace>(c, a, EventKind::kTestWait, t, b, i, static_cast<int32_t>(ok), 0, 0, parity, spc,
                     oflags);
        return false;
      }
      Emit<kTrace>(c, a, EventKind::kWaitBegin, t, b, i, 0, 0, 0, parity, spc);
      const int res = WaitBounded(c, a.lane, addr, parity, by_token, token, order);
      if (res == 0) {
        Emit<kTrace>(c, a, EventKind::kWaitEnd, t, b, i, 1, 0, 0, parity, spc, oflags);
        return false;
      }
      if (res == 1) {
        Emit<kTrace>(c, a, EventKind::kWaitTimeout, t, b, i, 0, 0, 0, parity, spc);
        Abort<kTrace>(c, a, 1, b, i, parity, spc);
      } else {
        Emit<kTrace>(c, a, EventKind::kWaitTimeout, t, b, i, 0, 0, 0, parity, spc, kFlagAborted);
      }
      return true;
    }
    case OpKind::kTmaLoad: {  // tma.load
      const exec::ResolvedTmaLoad& x = r.tma_load;
      // `bar B[i] @cta(r)` (unicast): a load into CTA r, as the model delivers it: the bytes land
      // in A[s] of CTA r and complete_tx on B[i] there. Both operands are .shared::cluster
      // addresses; mapa.shared::cluster gives CTA r's, the own CTA's shared::cta ones are valid.
      const bool peer = x.b.cta != a.cta;
      const uint32_t m = x.map;
      const uint32_t dst = peer ? ptx::MapaSharedCluster(a.smem_base + x.dst, x.b.cta)
                                : a.smem_base + x.dst;
      const uint32_t bar = peer ? ptx::MapaSharedCluster(a.smem_base + x.b.addr, x.b.cta)
                                : a.smem_base + x.b.addr;
      const bool mc = x.multicast != 0;
      const uint32_t mask = x.mask, n = x.rank;
      const int32_t x0 = x.coords[0], x1 = x.coords[1], x2 = x.coords[2], x3 = x.coords[3],
                    x4 = x.coords[4];
      if (a.lane == 0) {
        const void* tm = &maps.map[m];
        const uint16_t cm = static_cast<uint16_t>(mask);
        switch (n) {
          case 1: mc ? ptx::TmaLoadMulticast1D(dst, tm, bar, cm, x0) : ptx::TmaLoad1D(dst, tm, bar, x0); break;
          case 2: mc ? ptx::TmaLoadMulticast2D(dst, tm, bar, cm, x0, x1) : ptx::TmaLoad2D(dst, tm, bar, x0, x1); break;
          case 3: mc ? ptx::TmaLoadMulticast3D(dst, tm, bar, cm, x0, x1, x2) : ptx::TmaLoad3D(dst, tm, bar, x0, x1, x2); break;
          case 4: mc ? ptx::TmaLoadMulticast4D(dst, tm, bar, cm, x0, x1, x2, x3) : ptx::TmaLoad4D(dst, tm, bar, x0, x1, x2, x3); break;
          default: mc ? ptx::TmaLoadMulticast5D(dst, tm, bar, cm, x0, x1, x2, x3, x4) : ptx::TmaLoad5D(dst, tm, bar, x0, x1, x2, x3, x4); break;
        }
      }
      // The target is the barrier's CTA, as the engine records it (a peer's for `@cta(r)`).
      Emit<kTrace>(c, a, EventKind::kTmaIssue, x.b.cta, m, x.slot,
                   static_cast<int32_t>(c.map_box_bytes[m]),
                   static_cast<int32_t>(mask), 0, 0, spc, mc ? trace::kFlagMulticast : 0);
      __syncwarp();
      return false;
    }
    case OpKind::kTmaStore: {  // tma.store
      const exec::ResolvedTmaStore& x = r.tma_store;
      const uint32_t m = x.map, src = a.smem_base + x.src, n = x.rank;
      const int32_t x0 = x.coords[0], x1 = x.coords[1], x2 = x.coords[2], x3 = x.coords[3],
                    x4 = x.coords[4];
      if (a.lane == 0) {
        const void* tm = &maps.map[m];
        switch (n) {
          case 1: ptx::TmaStore1D(tm, src, x0); break;
          case 2: ptx::TmaStore2D(tm, src, x0, x1); break;
          case 3: ptx::TmaStore3D(tm, src, x0, x1, x2); break;
          case 4: ptx::TmaStore4D(tm, src, x0, x1, x2, x3); break;
          default: ptx::TmaStore5D(tm, src, x0, x1, x2, x3, x4); break;
        }
      }
      Emit<kTrace>(c, a, EventKind::kTmaStoreIssue, a.cta, m, x.slot,
                   static_cast<int32_t>(c.map_box_bytes[m]), 0, 0, 0, spc);
      __syncwarp();
      return false;
    }
    case OpKind::kBulkCommit: {  // bulk.commit
      // value: the group's number, counted from 0 (as sim/engine numbers them).
      if (a.lane == 0) ptx::BulkCommitGroup();
      Emit<kTrace>(c, a, EventKind::kBulkCommit, a.cta, 0, 0, static_cast<int32_t>(a.bulk_groups), 0, 0, 0, spc);
      ++a.bulk_groups;
      __syncwarp();
      return false;
    }
    case OpKind::kBulkWait: {  // bulk.wait
      const uint32_t n = r.bulk_wait.pending;
      const bool read = r.bulk_wait.read != 0;
      Emit<kTrace>(c, a, EventKind::kBulkWaitBegin, a.cta, 0, 0, static_cast<int32_t>(n), read ? 1 : 0, 0, 0, spc);
      if (a.lane == 0) ptx::BulkWaitGroupDynamic(n, read);
      __syncwarp();
      Emit<kTrace>(c, a, EventKind::kBulkWaitEnd, a.cta, 0, 0, static_cast<int32_t>(n), read ? 1 : 0, 0, 0, spc);
      return false;
    }
    case OpKind::kFence: {  // fence
      switch (r.fence_kind) {
        case 0: ptx::FenceMbarrierInit(); break;
        case 1: ptx::FenceProxyAsyncSharedCta(); break;
        case 2: ptx::FenceProxyAsyncGlobal(); break;
        case 4: ptx::FenceAcqRelCta(); break;
        default: ptx::FenceAcqRelCluster(); break;
      }
      Emit<kTrace>(c, a, EventKind::kFence, a.cta, r.fence_kind, 0, 0, 0, 0, 0, spc);
      return false;
    }
    case OpKind::kClusterArrive: {  // cluster.arrive
      __syncwarp();
      if (r.relaxed) ptx::ClusterArriveRelaxed(); else ptx::ClusterArrive();
      Emit<kTrace>(c, a, EventKind::kClusterArrive, a.cta, 0, 0, static_cast<int32_t>(r.relaxed), 0, 0, 0, spc);
      return false;
    }
    case OpKind::kClusterWait: {  // cluster.wait
      Emit<kTrace>(c, a, EventKind::kClusterWaitBegin, a.cta, 0, 0, 0, 0, 0, 0, spc);
      ptx::ClusterWait();
      Emit<kTrace>(c, a, EventKind::kClusterWaitEnd, a.cta, 0, 0, 0, 0, 0, 0, spc);
      return false;
    }
    case OpKind::kNamedBarrier: {  // bar.sync / bar.arrive
      const uint32_t id = r.named.id, hw = r.named.hw_threads;
      const int32_t threads = static_cast<int32_t>(r.named.threads);
      __syncwarp();
      if (r.named.sync != 0) {
        Emit<kTrace>(c, a, EventKind::kNamedBarrierSyncBegin, a.cta, id, 0, threads, 0, 0, 0, spc);
        ptx::NamedBarrierSync(id, hw);
        Emit<kTrace>(c, a, EventKind::kNamedBarrierSyncEnd, a.cta, id, 0, 0, 0, 0, 0, spc);
      } else {
        ptx::NamedBarrierArrive(id, hw);
        Emit<kTrace>(c, a, EventKind::kNamedBarrierArrive, a.cta, id, 0, threads, 0, 0, 0, spc);
      }
      return false;
    }
    case OpKind::kBufferAccess: {  // use / write
      const exec::ResolvedAccess& x = r.access;
      const uint32_t off = x.offset, bytes = x.bytes;
      const bool write = x.write != 0;
      // DSMEM (`@cta(r)`, r not this CTA): mapa, then ld/st.shared::cluster.
      const uint2 r2 =
          x.cta == a.cta
              ? CheckOrWrite(a.smem_ptr + x.addr, a.smem_base + x.addr, off, bytes, write, a.lane,
                             static_cast<uint32_t>(a.slot.index_in_cta) << 20)
              : CheckOrWriteRemote(ptx::MapaSharedCluster(a.smem_base + x.addr, x.cta), off,
                                   bytes, write, a.lane,
                                   static_cast<uint32_t>(a.slot.index_in_cta) << 20);
      if (!write) {  // summed per agent, added to the global stats once at its end
        a.uses += 1;
        a.used_chunks += bytes / 16;
        a.bad_chunks += r2.x;
        a.zero_chunks += r2.y;
      }
      Emit<kTrace>(c, a, write ? EventKind::kWrite : EventKind::kUse, x.cta, x.buf, x.slot,
                   static_cast<int32_t>(bytes), static_cast<int32_t>(off), 0, 0, spc,
                   r2.x != 0 ? kFlagDataBad : 0);
      __syncwarp();
      return false;
    }
    case OpKind::kGridDepControl: {  // griddepcontrol.launch_dependents / .wait
      if (r.griddep == 0) {
        // A scheduling hint for this CTA (repeats have no effect): every lane issues it.
        ptx::GriddepcontrolLaunchDependents();
        Emit<kTrace>(c, a, EventKind::kGridDepLaunch, a.cta, 0, 0, 0, 0, 0, 0, spc);
        return false;
      }
      // Every lane waits: each of them reads the primary's writes after it. No bounded form: it
      // returns once the primary grid completed, which an abort there (every wait of the
      // primary is bounded) also brings about; barrier.cluster.wait or bar.sync stuck in the
      // primary leaves it to the host watchdog.
      ptx::GriddepcontrolWait();
      uint32_t value = 0;
      if (c.primary_done != nullptr) {
        // The primary grid completed and its memory operations are visible: its count of
        // agents that ran to their end is final. Short of all of them, the primary ended by an
        // abort, and the model's griddepcontrol.wait never returns: leave without a record.
        uint32_t done = 0;
        if (a.lane == 0) done = *reinterpret_cast<const volatile uint32_t*>(c.primary_done);
        done = __shfl_sync(kFull, done, 0);
        if (done != c.primary_agents) {
          a.griddep_aborted = 1;
          return true;
        }
        value = c.primary_agents;  // the engine's: primary agents that exited
      }
      Emit<kTrace>(c, a, EventKind::kGridDepWait, a.cta, 0, 0, static_cast<int32_t>(value), 0, 0,
                   0, spc);
      return false;
    }
    case OpKind::kGlobalAccess: {  // use / write of a `global` buffer
      // All lanes, 16-byte chunks: `write` stores `write` pattern chunks (st.global), `use`
      // loads (ld.global) and sorts each chunk into initial contents (no write had reached it:
      // stale when the other grid writes it), `write` data, or neither (bad).
      const exec::ResolvedGlobalAccess& x = r.global_access;
      const uint64_t at = c.global_offset[x.global] +
                          static_cast<uint64_t>(x.slot) * c.global_slot_bytes[x.global] + x.offset;
      uint8_t* p = c.globals + at;
      const uint32_t chunks = x.bytes / 16, first = static_cast<uint32_t>(at / 16);
      uint32_t initial = 0, bad = 0;
      for (uint32_t k = a.lane; k < chunks; k += 32) {
        if (x.write != 0) {
          const uint32_t h = PatternHash(first + k, kWriteTag);
          ptx::StGlobal16(p + 16ull * k, make_uint4(first + k, kWriteTag, h, ~h));
        } else {
          const uint4 v = ptx::LdGlobal16(p + 16ull * k);
          const bool valid = (v.y & 0xff000000u) == kPatternTagBase &&
                             v.z == PatternHash(v.x, v.y) && v.w == ~v.z;
          if (valid && v.y == kGlobalInitialTag && v.x == first + k) {
            ++initial;
          } else if (!valid || v.y != kWriteTag) {
            ++bad;
          }
        }
      }
      initial = __reduce_add_sync(kFull, initial);
      bad = __reduce_add_sync(kFull, bad);
      if (x.write == 0 && a.lane == 0) {
        atomicAdd(&c.stats[5], 1ull);
        atomicAdd(&c.stats[6], static_cast<unsigned long long>(chunks));
        atomicAdd(&c.stats[7], static_cast<unsigned long long>(initial));
        atomicAdd(&c.stats[8], static_cast<unsigned long long>(bad));
      }
      Emit<kTrace>(c, a, x.write != 0 ? EventKind::kGlobalWrite : EventKind::kGlobalUse, a.cta,
                   x.global, x.slot, static_cast<int32_t>(x.bytes), static_cast<int32_t>(x.offset),
                   0, 0, spc,
                   static_cast<uint8_t>((bad != 0 ? kFlagDataBad : 0) |
                                        (initial != 0 ? kFlagInitialData : 0)));
      __syncwarp();
      return false;
    }
    case OpKind::kExit:  // exit
      Emit<kTrace>(c, a, EventKind::kExit, a.cta, 0, 0, 0, 0, 0, 0, spc);
      return true;
    default:
      exec::Fail(a, exec::kFaultBadWord);
      return false;
  }
}

// Per op, before it is issued: leave if another agent timed out (before the unbounded barriers,
// cluster.arrive/wait and bar.sync, where no budget applies), then the litmus jitter.
// Returns true when the agent must leave.
template <typename A>
__device__ __forceinline__ bool BeforeOp(const DeviceConfig& c, A& a, OpKind op) {
  const bool unbounded = op == OpKind::kClusterArrive || op == OpKind::kClusterWait ||
                         op == OpKind::kNamedBarrier;
  if (unbounded && __shfl_sync(kFull, Aborted(c) ? 1 : 0, 0) != 0) return true;
  if (c.op_jitter != 0) {
    // Seeded, per agent and op: the same seed gives the same delays (recorded by the runner).
    // (a.ops counts only here: the agent lives in local memory, and with the buffers taking
    // most of the L1 every access to it is an L2 round trip on the op's path.)
    Spin(Mix(c.seed ^ Mix(a.agent_global * 0x10001u + a.ops)) % (c.op_jitter + 1));
    ++a.ops;
  }
  return false;
}

// How an agent's program ended: it left early (a wait timed out, another agent's timeout, a
// fault, the primary grid's abort), ran off the end of its program, or executed `exit`.
enum RunEnd : int { kLeft = 0, kRanOff = 1, kExited = 2 };

template <bool kTrace>
__device__ int Interpret(const DeviceConfig& c, const TensorMaps& maps, Agent& a) {
  exec::Walk k = exec::StartWalk(c, a);
  const uint32_t* W = c.words;
  while (true) {
    const int adv = exec::NextOp(c, a, k);
    if (adv == exec::kFaulted) {
      Abort<kTrace>(c, a, 2, 0, 0, 0, exec::StatementAt(c, k));
      return kLeft;
    }
    if (adv != exec::kAtOp) return adv == exec::kEnded ? kRanOff : kLeft;
    const OpKind op = exec::OpAt(c, k);
    const uint32_t* f = W + k.rec + 1;
    const uint32_t spc = k.rec - k.body;  // statement pc: word offset in the role body
    ++k.pc;
    if (BeforeOp(c, a, op)) return kLeft;
    ResolvedOp r;
    const uint32_t res = exec::Resolve(c, a, op, f, spc, &r);
    if (res == exec::kResolved) {
      if (Execute<kTrace>(c, maps, a, r)) return op == OpKind::kExit ? kExited : kLeft;
      continue;
    }
    if (res == exec::kResolveFault) continue;  // NextOp reports the fault
    switch (op) {
      case OpKind::kBulkLoad: {
        using L = layout::BulkLoad;
        uint32_t buf, slot, off, bytes, dst;
        uint32_t b, i, t, bar;
        if (!BufferAddr(c, a, f + L::kDst, &buf, &slot, &off, &bytes, &dst)) break;
        if (!BarrierAddr(c, a, f + L::kBar, &b, &i, &t, &bar)) break;
        const bool mc = f[L::kMulticast] != kNone;
        const uint32_t mask = mc ? static_cast<uint32_t>(Eval(c, a, f[L::kMulticast])) & 0xffffu : 0u;
        if (bytes % 16 != 0 || (dst - a.smem_base) % 16 != 0) { exec::Fail(a, exec::kFaultRange); break; }
        if (a.fault != 0) break;
        const uint8_t* src = c.bulk_global + (dst - a.smem_base - c.buffers_begin);
        if (a.lane == 0) {
          if (mc) {
            ptx::BulkLoadMulticast(dst, src, bytes, bar, static_cast<uint16_t>(mask));
          } else {
            ptx::BulkLoad(dst, src, bytes, bar);
          }
        }
        Emit<kTrace>(c, a, EventKind::kBulkIssue, t, buf, slot, static_cast<int32_t>(bytes),
                     mc ? static_cast<int32_t>(mask) : -1, 0, 0, spc, mc ? trace::kFlagMulticast : 0);
        __syncwarp();
        break;
      }
      case OpKind::kBulkStore: {
        uint32_t buf, slot, off, bytes, src;
        if (!BufferAddr(c, a, f + layout::OneBuffer::kBuf, &buf, &slot, &off, &bytes, &src)) break;
        if (bytes % 16 != 0 || (src - a.smem_base) % 16 != 0) { exec::Fail(a, exec::kFaultRange); break; }
        uint8_t* dstg = c.bulk_global + (src - a.smem_base - c.buffers_begin);
        if (a.lane == 0) ptx::BulkStore(dstg, src, bytes);
        Emit<kTrace>(c, a, EventKind::kBulkIssue, a.cta, buf, slot, static_cast<int32_t>(bytes), 0,
                     0, 0, spc);
        __syncwarp();
        break;
      }
      case OpKind::kCpAsync: {
        // Lane 0 issues every copy of the agent, so that the agent's cp.async-groups and a
        // cp.async.mbarrier.arrive cover them all (both are per thread, PTX ISA cp.async).
        uint32_t buf, slot, off, bytes, dst;
        if (!BufferAddr(c, a, f + layout::OneBuffer::kBuf, &buf, &slot, &off, &bytes, &dst)) break;
        if (bytes % 4 != 0 || (dst - a.smem_base) % 4 != 0) { exec::Fail(a, exec::kFaultRange); break; }
        const uint8_t* src = c.bulk_global + (dst - a.smem_base - c.buffers_begin);
        if (a.lane == 0) {
          uint32_t k = 0;
          for (; k < bytes && (dst + k) % 16 != 0; k += 4) ptx::CpAsync4(dst + k, src + k);
          for (; k + 16 <= bytes; k += 16) ptx::CpAsync16(dst + k, src + k);
          for (; k < bytes; k += 4) ptx::CpAsync4(dst + k, src + k);
        }
        Emit<kTrace>(c, a, EventKind::kCpAsyncIssue, a.cta, buf, slot, static_cast<int32_t>(bytes),
                     0, 0, 0, spc);
        __syncwarp();
        break;
      }
      case OpKind::kCpAsyncCommit: {  // cp.async.commit
        if (a.lane == 0) ptx::CpAsyncCommitGroup();
        Emit<kTrace>(c, a, EventKind::kCpAsyncCommit, a.cta, 0, 0, static_cast<int32_t>(a.cp_groups),
                     0, 0, 0, spc);
        ++a.cp_groups;
        __syncwarp();
        break;
      }
      case OpKind::kCpAsyncWait: {  // cp.async.wait pending (kNone: cp.async.wait_all)
        const uint32_t pending = f[layout::CpAsyncWait::kPending];
        const bool all = pending == kNone;
        const uint32_t n = all ? 0u : static_cast<uint32_t>(Eval(c, a, pending));
        if (n > 7) { exec::Fail(a, exec::kFaultCount); break; }
        if (a.fault != 0) break;
        Emit<kTrace>(c, a, EventKind::kCpAsyncWaitBegin, a.cta, 0, 0, static_cast<int32_t>(n), 0, 0, 0, spc);
        if (a.lane == 0) {
          if (all) {
            ptx::CpAsyncWaitAll();
            ++a.cp_groups;  // wait_all commits the open group first
          } else {
            ptx::CpAsyncWaitGroupDynamic(n);
          }
        }
        // Lane 0's copies are now visible to lane 0; the warp barrier makes them visible to
        // the other lanes (__syncwarp orders memory among the participating threads).
        __syncwarp();
        Emit<kTrace>(c, a, EventKind::kCpAsyncWaitEnd, a.cta, 0, 0, static_cast<int32_t>(n), 0, 0, 0, spc);
        break;
      }
      case OpKind::kCpAsyncMbarrierArrive: {
        using L = layout::CpAsyncMbarrierArrive;
        uint32_t b, i, t, addr;
        if (!BarrierAddr(c, a, f + L::kBar, &b, &i, &t, &addr)) break;
        const bool noinc = f[L::kNoinc] != 0;
        if (a.lane == 0) {
          if (noinc) ptx::CpAsyncMbarrierArriveNoinc(addr); else ptx::CpAsyncMbarrierArrive(addr);
        }
        Emit<kTrace>(c, a, EventKind::kCpAsyncArrive, t, b, i, noinc ? 1 : 0, 0, 0, 0, spc);
        __syncwarp();
        break;
      }
      case OpKind::kStAsync: {  // st.async buf with @cta, bar
        // The barrier is in the destination CTA (st.async's mbarrier operand, PTX ISA st.async);
        // every lane stores 16-byte `write`-pattern chunks, each completing 16 bytes of tx.
        using L = layout::StAsync;
        uint32_t buf, slot, off, bytes, dst;
        uint32_t b, i, t, bar;
        if (!BufferAddr(c, a, f + L::kDst, &buf, &slot, &off, &bytes, &dst)) break;
        if (!BarrierAddr(c, a, f + L::kBar, &b, &i, &t, &bar)) break;
        const uint32_t dst_cta = f[L::kDst + layout::BufRef::kCta];
        const int64_t dcta = dst_cta == kNone ? a.cta : Eval(c, a, dst_cta);
        if (dcta < 0 || dcta >= c.cluster_m * c.cluster_n) { exec::Fail(a, exec::kFaultRange); break; }
        if (f[L::kBar + layout::BarRef::kCta] == kNone) t = static_cast<uint32_t>(dcta);
        if (bytes % 16 != 0 || (dst - a.smem_base) % 16 != 0) { exec::Fail(a, exec::kFaultRange); break; }
        if (a.fault != 0) break;
        const uint32_t rdst = ptx::MapaSharedCluster(dst, static_cast<uint32_t>(dcta));
        const uint32_t rbar = ptx::MapaSharedCluster(bar, t);
        for (uint32_t k = a.lane; k < bytes / 16; k += 32) {
          const uint32_t idx = (off / 16 + k) ^ (a.slot.index_in_cta << 20);
          const uint32_t tag = kPatternTagBase | 0xffu;
          const uint32_t h = PatternHash(idx, tag);
          ptx::StAsyncV4(rdst + 16 * k, make_uint4(idx, tag, h, ~h), rbar);
        }
        Emit<kTrace>(c, a, EventKind::kStAsync, t, b, i, static_cast<int32_t>(bytes), 0, 0, 0, spc);
        __syncwarp();
        break;
      }
      case OpKind::kMbarrierPendingCount: {
        // Every lane holds lane 0's token (the arrive broadcasts it), so every lane reads the same
        // count. A token of a plain arrive gives whatever the H100 gives (undefined in PTX).
        using L = layout::MbarrierPendingCount;
        const uint32_t token_var = f[L::kTokenVar], result_var = f[L::kResultVar];
        const uint32_t n =
            token_var < kMaxVars ? ptx::MbarrierPendingCount(static_cast<uint64_t>(a.vars[token_var])) : 0u;
        if (result_var < kMaxVars) a.vars[result_var] = n;
        Emit<kTrace>(c, a, EventKind::kPendingCount, a.cta, 0, 0, static_cast<int32_t>(n), 0, 0, 0, spc);
        break;
      }
      case OpKind::kGlobalReadback: {
        // What a generic-proxy read of the bulk.store destination of the region sees, per 4-byte
        // word against two images (ir::GlobalReadback): the runner's initial bulk pattern (tag
        // 0xfe, chunk index K from the start of the buffer area) and this agent's own `write`
        // pattern of the region (use/write). Class 0 all old, 1 all new, 2 only old and new words,
        // 3 any other word.
        uint32_t buf, slot, off, bytes, addr;
        using L = layout::GlobalReadback;
        if (!BufferAddr(c, a, f + L::kBuf, &buf, &slot, &off, &bytes, &addr)) break;
        const uint32_t result_var = f[L::kResultVar];
        const uint32_t base_chunk = (addr - a.smem_base - c.buffers_begin) / 16;
        const uint32_t who = static_cast<uint32_t>(a.slot.index_in_cta) << 20;
        const uint32_t chunks = bytes / 16;
        constexpr uint32_t kOldTag = kPatternTagBase | 0xfeu, kNewTag = kPatternTagBase | 0xffu;
        uint32_t seen = 0;  // bit 0: a word only the old image has, 1: only the new, 2: neither
        for (uint32_t k = a.lane; k < chunks; k += 32) {
          const uint32_t K = base_chunk + k;
          const uint4 v = ptx::LdGlobalRelaxedGpu16(c.bulk_global + 16ull * K);
          const uint32_t ho = PatternHash(K, kOldTag);
          const uint32_t idx = (off / 16 + k) ^ who;
          const uint32_t hn = PatternHash(idx, kNewTag);
          const uint32_t got[4] = {v.x, v.y, v.z, v.w};
          const uint32_t old_w[4] = {K, kOldTag, ho, ~ho};
          const uint32_t new_w[4] = {idx, kNewTag, hn, ~hn};
          for (int j = 0; j < 4; ++j) {
            const bool is_old = got[j] == old_w[j], is_new = got[j] == new_w[j];
            if (is_old && !is_new) seen |= 1u;
            if (is_new && !is_old) seen |= 2u;
            if (!is_old && !is_new) seen |= 4u;
          }
        }
        seen = __reduce_or_sync(kFull, seen);
        const uint32_t cls = (seen & 4u) != 0 ? 3u : seen == 3u ? 2u : seen == 2u ? 1u : 0u;
        if (result_var < kMaxVars) a.vars[result_var] = cls;
        Emit<kTrace>(c, a, EventKind::kGlobalReadback, a.cta, buf, slot, static_cast<int32_t>(cls),
                     static_cast<int32_t>(bytes), 0, 0, spc);
        __syncwarp();
        break;
      }
      default:
        // The runner refuses schedules with other ops; reaching here is a bad encoding.
        exec::Fail(a, exec::kFaultBadWord);
        break;
    }
  }
}

// Runs an agent's resolved stream (records ops[0..n), made by the host's ResolveAgent) on `h`.
// Records are loaded three ahead of the one executing (a record is an L2 load the first time: a
// chain of quick ops such as tma.store, bulk.commit, bulk.wait, arrive must not wait for each).
template <bool kTrace>
__device__ __forceinline__ int RunResolvedOn(const DeviceConfig& c, const TensorMaps& maps, HotAgent& h,
                                             const ResolvedOp* ops, uint32_t n) {
  constexpr uint32_t kAhead = 3;
  if (n == 0) return kRanOff;
  ResolvedOp q0 = ops[0], q1 = n > 1 ? ops[1] : q0, q2 = n > 2 ? ops[2] : q0;
  for (uint32_t k = 0; k < n; ++k) {
    const ResolvedOp cur = q0;
    q0 = q1;
    q1 = q2;
    if (k + kAhead < n) q2 = ops[k + kAhead];
    const OpKind op = exec::ResolvedKind(cur);
    // As the interpreter checks at every 16th loop iteration: leave after another agent's timeout.
    if ((k & 15) == 15 && __shfl_sync(kFull, Aborted(c) ? 1 : 0, 0) != 0) return kLeft;
    if (BeforeOp(c, h, op)) return kLeft;
    if (Execute<kTrace>(c, maps, h, cur)) return op == OpKind::kExit ? kExited : kLeft;
    if (h.fault != 0) {
      Abort<kTrace>(c, h, 2, 0, 0, 0, exec::ResolvedPc(cur));
      return kLeft;
    }
  }
  return kRanOff;
}

// Runs agent `a` from its resolved stream on a HotAgent copy of its scalars, then copies them
// back (trace count, fault, statistics).
template <bool kTrace>
__device__ __noinline__ int RunResolved(const DeviceConfig& c, const TensorMaps& maps, Agent& a,
                                        const ResolvedOp* ops, uint32_t n) {
  HotAgent h;
  static_cast<AgentCore&>(h) = a;
  const int end = RunResolvedOn<kTrace>(c, maps, h, ops, n);
  static_cast<AgentCore&>(a) = h;
  return end;
}

// kThreads: the launch bound. Schedules of up to 8 agents per CTA use the 256-thread variant,
// whose register budget (255 per thread instead of 64) keeps the interpreter out of local memory.
template <bool kTrace, int kThreads>
__global__ void __launch_bounds__(kThreads, 1)
    ExecutorKernel(const __grid_constant__ TensorMaps maps, const DeviceConfig c_param) {
  extern __shared__ __align__(16) uint8_t smem_raw[];
  const uint32_t raw = ptx::SmemAddress(smem_raw);
  const uint32_t base = (raw + 1023u) & ~1023u;
  uint8_t* base_ptr = smem_raw + (base - raw);
  // The interpreter reads its configuration and the schedule's words on every statement: keep
  // both in shared memory (about 30 cycles a load) rather than in per-thread local copies and
  // global memory (L2 latency on every dependent load of the decode chain).
  __shared__ DeviceConfig config;
  if (threadIdx.x == 0) {
    config = c_param;
    if (c_param.words_in_smem) config.words = reinterpret_cast<const uint32_t*>(base_ptr + c_param.smem_bytes);
  }
  if (c_param.words_in_smem) {
    uint32_t* w = reinterpret_cast<uint32_t*>(base_ptr + c_param.smem_bytes);
    for (uint32_t k = threadIdx.x; k < c_param.num_words; k += blockDim.x) w[k] = c_param.words[k];
  }
  __syncthreads();
  const DeviceConfig& c = config;

  // Poison the buffers (so that an unwritten chunk cannot pass a `use`) and clear the init
  // bitmap; then order these generic writes before the async proxy's (TMA) writes.
  for (uint32_t k = threadIdx.x; k < (c.smem_bytes - c.buffers_begin) / 16; k += blockDim.x) {
    reinterpret_cast<uint4*>(base_ptr + c.buffers_begin)[k] =
        make_uint4(0xDEADBEEFu, 0xDEADBEEFu, 0xDEADBEEFu, 0xDEADBEEFu);
  }
  for (uint32_t k = threadIdx.x; k < (c.barrier_elements + 31) / 32; k += blockDim.x) {
    reinterpret_cast<uint32_t*>(base_ptr + c.init_bitmap_offset)[k] = 0;
  }
  ptx::FenceProxyAsyncSharedCta();
  __syncthreads();

  Agent a;
  a.lane = threadIdx.x % 32;
  a.warp = threadIdx.x / 32;
  a.cta = ptx::ClusterCtaRank();
  a.cta_x = a.cta % c.cluster_m;
  a.cta_y = a.cta / c.cluster_m;
  a.cluster = ptx::ClusterIdX();
  a.cta_global = a.cluster * c.cluster_m * c.cluster_n + a.cta;
  a.agent_global = a.cta_global * c.warps_per_cta + a.warp;
  a.slot = c.agents[a.agent_global];
  a.smem_base = base;
  a.smem_ptr = base_ptr;
  a.events = 0;
  a.ring = c.ring + static_cast<size_t>(a.agent_global) * c.ring_capacity;
  a.capacity = c.ring_capacity;
  a.bulk_groups = 0;
  a.cp_groups = 0;
  a.ops = 0;
  a.iters = 0;
  a.uses = a.used_chunks = a.bad_chunks = a.zero_chunks = 0;
  a.griddep_aborted = 0;
  a.fault = 0;
  a.eval_error = 0;
  for (uint32_t v = 0; v < kMaxVars; ++v) {
    a.vars[v] = 0;
    a.token_parity[v] = 0;
  }
  if (!a.slot.valid) return;  // a warp with no agent in this CTA

  AgentRecord rec;
  rec.cta_global = a.cta_global + c.trace_cluster_base * c.cluster_m * c.cluster_n;
  rec.grid = c.grid;
  rec.warp = a.warp;
  rec.smid = ptx::SmId();
  rec.clock_start = static_cast<uint64_t>(clock64());
  rec.globaltimer_start = ptx::GlobalTimer();

  if (c.start_delay != nullptr) Spin(c.start_delay[a.agent_global]);
  int end = kLeft;
  if (c.resolved_index != nullptr && c.resolved_index[2 * a.agent_global + 1] != kNone) {
    end = RunResolved<kTrace>(c, maps, a, c.resolved + c.resolved_index[2 * a.agent_global],
                              c.resolved_index[2 * a.agent_global + 1]);
  } else {
    end = Interpret<kTrace>(c, maps, a);
  }
  __syncwarp();
  if (end == kRanOff && c.emit_exit != 0) {
    Emit<kTrace>(c, a, EventKind::kExit, a.cta, 0, 0, 0, 0, 0, 0, 0);
  }
  if (end != kLeft && a.lane == 0) {
    // Counted after the agent's own memory operations (the dependent reads the count after its
    // griddepcontrol.wait, which makes the whole primary grid's writes visible).
    __threadfence();
    atomicAdd(c.grid_done, 1u);
  }
  rec.griddep_released_by_abort = a.griddep_aborted;
  if (a.lane == 0 && a.uses != 0) {
    atomicAdd(&c.stats[0], a.uses);
    atomicAdd(&c.stats[1], a.used_chunks);
    atomicAdd(&c.stats[2], a.bad_chunks);
    atomicAdd(&c.stats[3], a.zero_chunks);
  }

  // Exit rendezvous: stay until every agent of the cluster is done (bounded), so that no CTA
  // leaves while a peer may still access its shared memory.
  if (a.lane == 0) {
    __threadfence();
    atomicAdd(&c.exit_count[a.cluster], 1u);
    const long long start = clock64();
    const uint32_t want = c.agents_per_cluster[a.cluster];
    while (atomicAdd(&c.exit_count[a.cluster], 0u) < want && clock64() - start < c.budget_cycles) {
    }
  }
  __syncwarp();
  // End-of-run probe: agent 0 of each CTA reads the current phase bit of every initialised
  // barrier of its CTA with test_wait.parity 0 (true: the preceding phase had parity 0, so an
  // odd number of phases completed). Skipped after an abort (TMA may still be in flight).
  if (a.slot.index_in_cta == 0 && __shfl_sync(kFull, Aborted(c) ? 1 : 0, 0) == 0) {
    const uint32_t* bitmap = reinterpret_cast<const uint32_t*>(base_ptr + c.init_bitmap_offset);
    for (uint32_t b = 0; b < c.num_barriers; ++b) {
      for (uint32_t i = 0; i < c.barrier_size[b]; ++i) {
        const uint32_t e = c.barrier_first[b] + i;
        if ((bitmap[e / 32] >> (e % 32) & 1u) == 0) continue;
        const bool odd = ptx::MbarrierTestWaitParity(base + 8 * e, 0);
        Emit<kTrace>(c, a, EventKind::kTestWait, a.cta, b, i, odd ? 1 : 0, 0, odd ? 1 : 0, 0, kProbePc);
      }
    }
  }
  if (a.lane == 0) {
    rec.events = a.events < c.ring_capacity ? a.events : c.ring_capacity;
    rec.dropped = a.events - rec.events;
    c.records[a.agent_global] = rec;
    atomicAdd(&c.stats[4], 1ull);
  }
}

}  // namespace

ExecutorKernelFn ExecutorKernelFor(bool trace, bool narrow) {
  if (trace) return narrow ? ExecutorKernel<true, 256> : ExecutorKernel<true, 1024>;
  return narrow ? ExecutorKernel<false, 256> : ExecutorKernel<false, 1024>;
}

}  // namespace parity::gpu
