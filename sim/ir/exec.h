// The executor of the compact encoding (sim/ir/encoding.h), compiled by g++ and by nvcc: the GPU
// kernel (gpu/executor.cu) interprets schedules with it, the host resolves agents' op streams
// with it before a launch (gpu/resolve.cc), and CPU tests check it against ir::Eval and the
// engine (tests/sim/ir/exec_test.cc). Three parts, shared by every side:
//   EvalExpr  evaluates an expression record, with ir::Eval's semantics (sim/ir/eval.h): C
//             truncating / and %, and division by zero, INT64_MIN / -1, shift counts outside
//             0..63 and signed overflow of + - * << and unary minus are faults, not values;
//   NextOp    walks a role's control code (the engine's compilation of let, for, while, if and
//             break, carried by the encoding) to its next op statement, with the engine's
//             walker (sim/engine/walk.h WalkToOp);
//   Resolve   evaluates an op's operands (barrier element and CTA, buffer region, counts) into
//             a ResolvedOp, with the range checks that stop a run before a bad instruction.
//
// Device-safe by construction: fixed-size arrays, no std:: containers, no allocation, no
// exceptions. The agent type is a template parameter (the GPU's agent lives in registers and
// local memory, the host's in a plain struct); it needs the fields of AgentPlace, int64_t
// vars[kMaxVars], uint8_t token_parity[kMaxVars] and `bool OnWalked(const C&)` (called every
// kWalkCheck control instructions walked without an op; true: leave, with kAbortSeen).
//
// A header of templates rather than a compilation unit by design: nvcc compiles them into the
// kernel itself (the GPU build links no relocatable device code, so device code can call only
// what its own unit defines), and g++ into the host resolution, from the one text.
#ifndef PARITY_SIM_IR_EXEC_H_
#define PARITY_SIM_IR_EXEC_H_

#include <cstdint>

#include "sim/common/host_device.h"
#include "sim/engine/walk.h"
#include "sim/ir/arith.h"
#include "sim/ir/op_layout.h"
#include "sim/ir/ops.h"

namespace parity::exec {

namespace layout = ir::layout;  // the op records' fields (sim/ir/op_layout.h)

using ir::BinaryOp;
using ir::Builtin;
using ir::EncodedExprOp;
using ir::EncodedStmtKind;
using ir::EvalError;
using ir::OpKind;
using ir::UnaryOp;

inline constexpr uint32_t kNone = 0xffffffffu;  // "no expression / no variable" in a record
inline constexpr uint32_t kMaxRoles = 8;
inline constexpr uint32_t kMaxBarrierDecls = 16;
inline constexpr uint32_t kMaxBufferDecls = 16;
inline constexpr uint32_t kMaxTensorMaps = 4;
inline constexpr uint32_t kMaxVars = 48;     // variable slots per role
inline constexpr uint32_t kStackDepth = 24;  // expression stack (values)
inline constexpr uint32_t kMaxNamedBarriers = 16;
// Thread counts per named barrier id that the runner maps statically: one id may serve several
// counts (FA3's epilogue syncs 256 threads and arrives with 288 on EpilogueBarrier).
inline constexpr uint32_t kNamedCounts = 4;
inline constexpr uint32_t kMaxGlobalDecls = 16;  // `global` buffers (programmatic dependent launch)

// Faults: checks that stop a run instead of issuing a bad instruction.
enum FaultCode : uint32_t {
  kFaultNone = 0,
  kFaultEval = 1,        // an expression fault (AgentPlace::eval_error says which)
  kFaultIndex = 2,       // barrier index or buffer slot out of range
  kFaultNesting = 3,     // a host walk past its cap of control instructions without an op
  kFaultBadWord = 4,     // unknown statement or expression word
  kFaultStack = 5,       // expression stack overflow
  kFaultRange = 6,       // buffer region outside the slot / CTA rank outside the cluster
  kFaultCount = 7,       // bulk.wait N > 7, or a bar.sync thread count that is not whole warps
  kFaultBound = 8,       // a `while` whose condition still holds after `bound` passes
  kFaultAlign = 9,       // a global buffer access whose offset or size is not whole 16-byte chunks
};

// Where an agent runs (one per role instance; the GPU gives each agent a warp).
struct AgentSlot {
  uint16_t role = 0;
  uint16_t index_in_role = 0;
  uint16_t index_in_cta = 0;
  uint16_t valid = 0;
};

// The scalars the executor reads and writes besides the variables.
struct AgentPlace {
  uint32_t cta, cta_x, cta_y, cluster;
  AgentSlot slot;
  uint32_t fault;       // FaultCode of the first fault, 0: none
  uint32_t eval_error;  // kFaultEval: the ir::EvalError
  uint32_t iters;       // OnWalked's count
};

// The schedule facts the executor reads: the encoded words and the per-CTA layout the runner
// computed from them (gpu/runner.cc; shared-memory byte offsets from the CTA's aligned base).
struct Layout {
  const uint32_t* words;
  uint32_t pool;  // expression pool word offset (header word 8)
  uint32_t cluster_m, cluster_n;
  uint32_t clusters;  // clusters in the grid (num_clusters)
  uint32_t role_body_begin[kMaxRoles];  // word offsets of the role bodies
  uint32_t role_code[kMaxRoles];        // word offsets of the roles' instruction 0 (FindRoleCode)
  uint32_t role_threads[kMaxRoles];  // the schedule's `threads` per agent (bar.sync counts)
  uint32_t role_num_vars[kMaxRoles];
  // Named barrier id and the schedule's thread count -> the hardware count where the runner
  // could tell it statically; a count missing from the table is scaled by the executing role's
  // threads.
  uint32_t named_threads[kMaxNamedBarriers][kNamedCounts],
      named_hw_threads[kMaxNamedBarriers][kNamedCounts];
  uint32_t num_barriers;
  uint32_t barrier_first[kMaxBarrierDecls], barrier_size[kMaxBarrierDecls];
  uint32_t barrier_count_ref[kMaxBarrierDecls];  // expression ref: the declared count
  uint32_t num_buffers;
  uint32_t buffer_offset[kMaxBufferDecls], buffer_slot_bytes[kMaxBufferDecls],
      buffer_stages[kMaxBufferDecls];
  uint32_t num_maps;
  // `global` buffers: slots and bytes per slot (their device addresses are the kernel's).
  uint32_t num_globals;
  uint32_t global_slots[kMaxGlobalDecls], global_slot_bytes[kMaxGlobalDecls];
};

// Records the first fault only.
template <typename A>
PARITY_HD inline void Fail(A& a, uint32_t code, EvalError error = EvalError::kNone) {
  if (a.fault == kFaultNone) {
    a.fault = code;
    a.eval_error = static_cast<uint32_t>(error);
  }
}

// The value of builtin `id` for agent `a` (ir::MakeBuiltins' values); false: no such builtin.
template <typename C, typename A>
PARITY_HD inline bool BuiltinValue(const C& c, const A& a, uint32_t id, int64_t* v) {
  switch (static_cast<Builtin>(id)) {
    case Builtin::kCtaRank: *v = a.cta; return true;
    case Builtin::kCtaX: *v = a.cta_x; return true;
    case Builtin::kCtaY: *v = a.cta_y; return true;
    case Builtin::kClusterM: *v = c.cluster_m; return true;
    case Builtin::kClusterN: *v = c.cluster_n; return true;
    case Builtin::kClusterSize: *v = static_cast<int64_t>(c.cluster_m) * c.cluster_n; return true;
    case Builtin::kClusterId: *v = a.cluster; return true;
    case Builtin::kAgent: *v = a.slot.index_in_role; return true;
    case Builtin::kNumClusters: *v = c.clusters; return true;
    case Builtin::kGridCta:
      *v = static_cast<int64_t>(a.cluster) * c.cluster_m * c.cluster_n + a.cta;
      return true;
    case Builtin::kGridSize:
      *v = static_cast<int64_t>(c.clusters) * c.cluster_m * c.cluster_n;
      return true;
  }
  return false;
}

// a op b for the binary operators of a kBinary word (never && and ||, which are jumps), or a
// fault: ir::ApplyBinary, the arithmetic every evaluator shares (sim/ir/arith.h).
template <typename A>
PARITY_HD inline int64_t Binary(A& a, uint32_t op, int64_t x, int64_t y) {
  const auto o = static_cast<BinaryOp>(op);
  if (o == BinaryOp::kAnd || o == BinaryOp::kOr) {
    Fail(a, kFaultBadWord, EvalError::kBadOp);
    return 0;
  }
  int64_t r = 0;
  const EvalError error = ir::ApplyBinary(o, x, y, &r);
  if (error == EvalError::kNone) return r;
  Fail(a, error == EvalError::kBadOp ? kFaultBadWord : kFaultEval, error);
  return 0;
}

// Evaluates the expression record at pool offset `ref` for agent `a` (0 for kNone). On a fault
// returns 0 and records it in `a` (the first one wins), as ir::EvalFast does.
template <typename C, typename A>
PARITY_HD_NOINLINE int64_t EvalExpr(const C& c, A& a, uint32_t ref) {
  if (ref == kNone) return 0;
  const uint32_t* w = c.words + c.pool + ref;
  const uint32_t n = w[0];
  const uint32_t num_vars = c.role_num_vars[a.slot.role];
  // The common one-operand records (a constant, a variable) need no stack.
  if (n == 3 && (w[1] & 0xffu) == static_cast<uint32_t>(EncodedExprOp::kConst)) {
    return static_cast<int64_t>(static_cast<uint64_t>(w[2]) | (static_cast<uint64_t>(w[3]) << 32));
  }
  if (n == 1 && (w[1] & 0xffu) == static_cast<uint32_t>(EncodedExprOp::kVar) &&
      (w[1] >> 8) < num_vars) {
    return a.vars[w[1] >> 8];
  }
  int64_t st[kStackDepth];
  uint32_t sp = 0;
  uint32_t pc = 1;
  while (pc <= n) {
    if (a.fault != kFaultNone) return 0;
    const uint32_t word = w[pc];
    const uint32_t arg = word >> 8;
    if (sp >= kStackDepth - 1) {
      Fail(a, kFaultStack, EvalError::kBadOp);
      return 0;
    }
    switch (static_cast<EncodedExprOp>(word & 0xffu)) {
      case EncodedExprOp::kConst:
        if (pc + 2 > n) break;
        st[sp++] = static_cast<int64_t>(static_cast<uint64_t>(w[pc + 1]) |
                                        (static_cast<uint64_t>(w[pc + 2]) << 32));
        pc += 3;
        continue;
      case EncodedExprOp::kVar:
        if (arg >= num_vars || arg >= kMaxVars) {
          Fail(a, kFaultBadWord, EvalError::kBadReference);
          return 0;
        }
        st[sp++] = a.vars[arg];
        ++pc;
        continue;
      case EncodedExprOp::kBuiltin: {
        int64_t v = 0;
        if (!BuiltinValue(c, a, arg, &v)) {
          Fail(a, kFaultBadWord, EvalError::kBadReference);
          return 0;
        }
        st[sp++] = v;
        ++pc;
        continue;
      }
      case EncodedExprOp::kUnary: {
        if (sp < 1) break;
        int64_t& x = st[sp - 1];
        const EvalError error = ir::ApplyUnary(static_cast<UnaryOp>(arg), x, &x);
        if (error != EvalError::kNone) {
          Fail(a, error == EvalError::kBadOp ? kFaultBadWord : kFaultEval, error);
          return 0;
        }
        ++pc;
        continue;
      }
      case EncodedExprOp::kBinary: {
        if (sp < 2) break;
        const int64_t y = st[--sp];
        st[sp - 1] = Binary(a, arg, st[sp - 1], y);
        ++pc;
        continue;
      }
      case EncodedExprOp::kJumpIfZero:
        if (sp < 1) break;
        pc += st[--sp] == 0 ? 1 + arg : 1;
        continue;
      case EncodedExprOp::kJump:
        pc += 1 + arg;
        continue;
      case EncodedExprOp::kAndJump:  // && : a zero left operand is the result
        if (sp < 1) break;
        if (st[sp - 1] == 0) {
          pc += 1 + arg;
        } else {
          --sp;
          ++pc;
        }
        continue;
      case EncodedExprOp::kOrJump:  // || : a non-zero left operand makes the result 1
        if (sp < 1) break;
        if (st[sp - 1] != 0) {
          st[sp - 1] = 1;
          pc += 1 + arg;
        } else {
          --sp;
          ++pc;
        }
        continue;
      case EncodedExprOp::kBool:
        if (sp < 1) break;
        st[sp - 1] = st[sp - 1] != 0;
        ++pc;
        continue;
    }
    // An unknown opcode, a missing operand or a truncated constant: a malformed record.
    Fail(a, kFaultBadWord, EvalError::kBadOp);
    return 0;
  }
  if (a.fault != kFaultNone) return 0;
  if (sp != 1) {
    Fail(a, kFaultBadWord, EvalError::kBadOp);
    return 0;
  }
  return st[0];
}

// ---------------------------------------------------------------------------------------------
// Operand resolution.

// A barrier ref (layout::BarRef at `f`): the barrier declaration, element and target CTA, and
// the element's byte offset from the CTA's shared-memory base.
template <typename C, typename A>
PARITY_HD_NOINLINE bool BarrierOperand(const C& c, A& a, const uint32_t* f, uint32_t* bar,
                                     uint32_t* index, uint32_t* cta, uint32_t* offset) {
  using R = layout::BarRef;
  *bar = f[R::kBarrier];
  if (*bar >= c.num_barriers) {
    Fail(a, kFaultIndex);
    return false;
  }
  const int64_t i = EvalExpr(c, a, f[R::kIndex]);
  const int64_t t = f[R::kCta] == kNone ? static_cast<int64_t>(a.cta) : EvalExpr(c, a, f[R::kCta]);
  if (a.fault != kFaultNone) return false;
  if (i < 0 || i >= c.barrier_size[*bar]) {
    Fail(a, kFaultIndex);
    return false;
  }
  if (t < 0 || t >= static_cast<int64_t>(c.cluster_m) * c.cluster_n) {
    Fail(a, kFaultRange);
    return false;
  }
  *index = static_cast<uint32_t>(i);
  *cta = static_cast<uint32_t>(t);
  *offset = 8u * (c.barrier_first[*bar] + *index);
  return true;
}

// A buffer ref (layout::BufRef at `f`; the cta word is the caller's):
// the region's slot, offset in the slot, bytes, and byte offset from the CTA's base.
template <typename C, typename A>
PARITY_HD_NOINLINE bool BufferOperand(const C& c, A& a, const uint32_t* f, uint32_t* buf,
                                    uint32_t* slot, uint32_t* offset, uint32_t* bytes,
                                    uint32_t* at) {
  using R = layout::BufRef;
  *buf = f[R::kBuffer];
  if (*buf >= c.num_buffers) {
    Fail(a, kFaultIndex);
    return false;
  }
  const int64_t s = EvalExpr(c, a, f[R::kSlot]);
  const int64_t o = f[R::kOffset] == kNone ? 0 : EvalExpr(c, a, f[R::kOffset]);
  const int64_t slot_bytes = c.buffer_slot_bytes[*buf];
  const int64_t n = f[R::kBytes] == kNone ? slot_bytes - o : EvalExpr(c, a, f[R::kBytes]);
  if (a.fault != kFaultNone) return false;
  if (s < 0 || s >= c.buffer_stages[*buf]) {
    Fail(a, kFaultIndex);
    return false;
  }
  if (o < 0 || n < 0 || o + n > slot_bytes) {
    Fail(a, kFaultRange);
    return false;
  }
  *slot = static_cast<uint32_t>(s);
  *offset = static_cast<uint32_t>(o);
  *bytes = static_cast<uint32_t>(n);
  *at = c.buffer_offset[*buf] + *slot * static_cast<uint32_t>(slot_bytes) + *offset;
  return true;
}

// An op with its operands evaluated, as the kernel issues it: `head` = OpKind | statement pc << 16,
// then the op's fields (addresses are byte offsets from the CTA's 1024-aligned shared-memory
// base). 64 bytes: the kernel loads a record with four 16-byte loads.
struct BarrierOperands {
  uint32_t bar;    // Program::barriers index
  uint32_t index;  // array element
  uint32_t cta;    // target CTA rank
  uint32_t addr;   // the element's offset
};
struct ResolvedBarrierOp {  // init (value: count), inval, expect_tx / complete_tx (value: bytes)
  BarrierOperands b;
  uint32_t value;
};
struct ResolvedArrive {
  uint32_t kind;  // ir::MbarrierArrive::Kind
  BarrierOperands b;
  uint32_t count, tx;
  uint32_t has_tx, masked;
  uint32_t mask;       // CTAs the arrive goes to (bit r: CTA rank r)
  uint32_t token_var;  // kNone: no state token kept
  uint32_t order;      // kSemRelaxedBit | kScopeClusterBit (sim/ir/ops.h)
};
struct ResolvedWait {
  BarrierOperands b;
  uint32_t parity;  // of the phase waited for (a token wait: of the token's phase)
  uint32_t token_var, test_only, result_var;
  uint32_t order;  // kSemRelaxedBit | kScopeClusterBit (sim/ir/ops.h)
};
struct ResolvedTmaLoad {
  uint32_t map, slot, dst;
  BarrierOperands b;
  uint32_t multicast, mask, rank;
  int32_t coords[5];
};
struct ResolvedTmaStore {
  uint32_t map, slot, src, rank;
  int32_t coords[5];
};
struct ResolvedBulkWait {
  uint32_t pending, read;
};
struct ResolvedNamedBarrier {
  uint32_t id, threads, hw_threads, sync;
};
struct ResolvedAccess {  // use / write
  uint32_t buf, slot, offset, bytes, addr, write;
  uint32_t cta;  // the CTA whose shared memory is accessed (DSMEM when not the agent's own)
};
struct ResolvedGlobalAccess {  // use / write of a `global` buffer
  uint32_t global, slot, offset, bytes, write;
};
struct alignas(16) ResolvedOp {
  uint32_t head;
  union {
    ResolvedBarrierOp barrier;  // init, inval, expect_tx, complete_tx
    ResolvedArrive arrive;
    ResolvedWait wait;
    ResolvedTmaLoad tma_load;
    ResolvedTmaStore tma_store;
    ResolvedBulkWait bulk_wait;
    uint32_t fence_kind;        // ir::Fence::Kind
    uint32_t relaxed;           // cluster.arrive
    ResolvedNamedBarrier named;
    ResolvedAccess access;
    ResolvedGlobalAccess global_access;
    uint32_t griddep;           // ir::GridDepControl::Kind: 0 launch_dependents, 1 wait
    uint32_t words[15];         // bulk.commit, cluster.wait, exit: none
  };
};
static_assert(sizeof(ResolvedOp) == 64, "four 16-byte loads per record");

PARITY_HD inline OpKind ResolvedKind(const ResolvedOp& r) {
  return static_cast<OpKind>(r.head & 0xffu);
}
PARITY_HD inline uint32_t ResolvedPc(const ResolvedOp& r) { return r.head >> 16; }

enum ResolveResult : uint32_t { kResolveFault = 0, kResolved = 1, kNotResolvable = 2 };

// Resolves op `op` (statement fields at `f`, statement pc `spc`) for agent `a`. kResolveFault
// where the interpreter stops before issuing (a.fault set); kNotResolvable for the ops the
// interpreter runs itself (copies that need the global source, st.async, pending_count,
// readback).
template <typename C, typename A>
PARITY_HD inline uint32_t Resolve(const C& c, A& a, OpKind op, const uint32_t* f, uint32_t spc,
                                  ResolvedOp* r) {
  r->head = static_cast<uint32_t>(op) | spc << 16;
  switch (op) {
    case OpKind::kMbarrierInit: {
      using L = layout::MbarrierInit;
      BarrierOperands& b = r->barrier.b;
      if (!BarrierOperand(c, a, f + L::kBar, &b.bar, &b.index, &b.cta, &b.addr)) {
        return kResolveFault;
      }
      const int64_t n =
          EvalExpr(c, a, f[L::kCount] == kNone ? c.barrier_count_ref[b.bar] : f[L::kCount]);
      if (a.fault != kFaultNone) return kResolveFault;
      r->barrier.value = static_cast<uint32_t>(n);
      return kResolved;
    }
    case OpKind::kMbarrierInval:
    case OpKind::kMbarrierExpectTx:
    case OpKind::kMbarrierCompleteTx: {
      using L = layout::MbarrierTx;
      static_assert(layout::MbarrierInval::kBar == L::kBar);
      BarrierOperands& b = r->barrier.b;
      if (!BarrierOperand(c, a, f + L::kBar, &b.bar, &b.index, &b.cta, &b.addr)) {
        return kResolveFault;
      }
      const int64_t n = op == OpKind::kMbarrierInval ? 0 : EvalExpr(c, a, f[L::kBytes]);
      if (a.fault != kFaultNone) return kResolveFault;
      r->barrier.value = static_cast<uint32_t>(n);
      return kResolved;
    }
    case OpKind::kMbarrierArrive: {
      using L = layout::MbarrierArrive;
      ResolvedArrive& x = r->arrive;
      BarrierOperands& b = x.b;
      if (!BarrierOperand(c, a, f + L::kBar, &b.bar, &b.index, &b.cta, &b.addr)) {
        return kResolveFault;
      }
      x.count = f[L::kCount] == kNone ? 1u : static_cast<uint32_t>(EvalExpr(c, a, f[L::kCount]));
      x.has_tx = f[L::kExpectTx] != kNone ? 1u : 0u;
      x.tx = x.has_tx ? static_cast<uint32_t>(EvalExpr(c, a, f[L::kExpectTx])) : 0u;
      x.masked = f[L::kMask] != kNone ? 1u : 0u;
      x.mask = x.masked ? static_cast<uint32_t>(EvalExpr(c, a, f[L::kMask])) : (1u << b.cta);
      if (a.fault != kFaultNone) return kResolveFault;
      x.kind = f[L::kKind] & 0xffu;
      x.order = f[L::kKind] & (ir::kSemRelaxedBit | ir::kScopeClusterBit);
      x.token_var = f[L::kTokenVar];
      return kResolved;
    }
    case OpKind::kMbarrierWait: {
      using L = layout::MbarrierWait;
      ResolvedWait& x = r->wait;
      BarrierOperands& b = x.b;
      if (!BarrierOperand(c, a, f + L::kBar, &b.bar, &b.index, &b.cta, &b.addr)) {
        return kResolveFault;
      }
      x.token_var = f[L::kTokenVar];
      // Token waits are traced with the parity of the token's phase (probed at the arrive).
      x.parity = x.token_var < kMaxVars
                     ? a.token_parity[x.token_var]
                     : static_cast<uint32_t>(EvalExpr(c, a, f[L::kParity])) & 1u;
      if (a.fault != kFaultNone) return kResolveFault;
      x.test_only = f[L::kTestOnly] & 1u;
      x.order = f[L::kTestOnly] & (ir::kSemRelaxedBit | ir::kScopeClusterBit);
      x.result_var = f[L::kResultVar];
      return kResolved;
    }
    case OpKind::kTmaLoad: {
      using L = layout::TmaLoad;
      ResolvedTmaLoad& x = r->tma_load;
      BarrierOperands& b = x.b;
      uint32_t buf, off, bytes;
      if (f[L::kMap] >= c.num_maps) {
        Fail(a, kFaultIndex);
        return kResolveFault;
      }
      if (!BufferOperand(c, a, f + L::kDst, &buf, &x.slot, &off, &bytes, &x.dst)) {
        return kResolveFault;
      }
      if (!BarrierOperand(c, a, f + L::kBar, &b.bar, &b.index, &b.cta, &b.addr)) {
        return kResolveFault;
      }
      x.multicast = f[L::kMulticast] != kNone ? 1u : 0u;
      x.mask = x.multicast ? static_cast<uint32_t>(EvalExpr(c, a, f[L::kMulticast])) & 0xffffu
                           : 0u;
      x.rank = f[L::kRank];
      for (uint32_t k = 0; k < 5; ++k) {
        x.coords[k] = k < x.rank ? static_cast<int32_t>(EvalExpr(c, a, f[L::kCoords + k])) : 0;
      }
      if (a.fault != kFaultNone) return kResolveFault;
      x.map = f[L::kMap];
      return kResolved;
    }
    case OpKind::kTmaStore: {
      using L = layout::TmaStore;
      ResolvedTmaStore& x = r->tma_store;
      uint32_t buf, off, bytes;
      if (f[L::kMap] >= c.num_maps) {
        Fail(a, kFaultIndex);
        return kResolveFault;
      }
      if (!BufferOperand(c, a, f + L::kSrc, &buf, &x.slot, &off, &bytes, &x.src)) {
        return kResolveFault;
      }
      x.rank = f[L::kRank];
      for (uint32_t k = 0; k < 5; ++k) {
        x.coords[k] = k < x.rank ? static_cast<int32_t>(EvalExpr(c, a, f[L::kCoords + k])) : 0;
      }
      if (a.fault != kFaultNone) return kResolveFault;
      x.map = f[L::kMap];
      return kResolved;
    }
    case OpKind::kBulkCommit:
    case OpKind::kClusterWait:
    case OpKind::kExit:
      return kResolved;
    case OpKind::kBulkWait: {
      using L = layout::BulkWait;
      const int64_t n = f[L::kPending] == kNone ? 0 : EvalExpr(c, a, f[L::kPending]);
      if (a.fault != kFaultNone) return kResolveFault;
      if (n < 0 || n > 7) {
        Fail(a, kFaultCount);
        return kResolveFault;
      }
      r->bulk_wait.pending = static_cast<uint32_t>(n);
      r->bulk_wait.read = f[L::kRead] != 0 ? 1u : 0u;
      return kResolved;
    }
    case OpKind::kFence:
      // The tensormap fences' map index above the kind: never executed.
      r->fence_kind = f[layout::Fence::kKind] & 0xffu;
      return kResolved;
    case OpKind::kClusterArrive:
      r->relaxed = f[layout::ClusterArrive::kRelaxed];
      return kResolved;
    case OpKind::kNamedBarrier: {
      using L = layout::NamedBarrier;
      const int64_t id = EvalExpr(c, a, f[L::kId]);
      const int64_t threads = EvalExpr(c, a, f[L::kThreads]);
      if (a.fault != kFaultNone) return kResolveFault;
      // The schedule counts each agent as its role's `threads`; on the GPU an agent is a warp.
      // The runner's table gives the warps of barriers shared by roles of different `threads`.
      const int64_t per_agent = c.role_threads[a.slot.role];
      int64_t hw = 0;
      if (id >= 0 && id < kMaxNamedBarriers) {
        for (uint32_t j = 0; j < kNamedCounts; ++j) {
          if (c.named_threads[id][j] != 0 && threads == c.named_threads[id][j]) {
            hw = c.named_hw_threads[id][j];
          }
        }
      }
      if (hw == 0) {
        if (id < 0 || id >= kMaxNamedBarriers || per_agent < 1 || threads % per_agent != 0 ||
            threads / per_agent * 32 > 1024) {
          Fail(a, kFaultCount);
          return kResolveFault;
        }
        hw = threads / per_agent * 32;
      }
      r->named.id = static_cast<uint32_t>(id);
      r->named.threads = static_cast<uint32_t>(threads);
      r->named.hw_threads = static_cast<uint32_t>(hw);
      r->named.sync = f[L::kSync] != 0 ? 1u : 0u;
      return kResolved;
    }
    case OpKind::kBufferAccess: {
      using L = layout::BufferAccess;
      ResolvedAccess& x = r->access;
      if (!BufferOperand(c, a, f + L::kBuf, &x.buf, &x.slot, &x.offset, &x.bytes, &x.addr)) {
        return kResolveFault;
      }
      x.write = (f[L::kFlags] & 1u) != 0 ? 1u : 0u;  // bits 1-2: atomic, returns; 3-4: proxy
      // The buffer ref's cta word: `use`/`write ... @cta(r)`.
      const uint32_t cta_ref = f[L::kBuf + layout::BufRef::kCta];
      const int64_t t = cta_ref == kNone ? static_cast<int64_t>(a.cta) : EvalExpr(c, a, cta_ref);
      if (a.fault != kFaultNone) return kResolveFault;
      if (t < 0 || t >= static_cast<int64_t>(c.cluster_m * c.cluster_n)) {
        Fail(a, kFaultIndex);
        return kResolveFault;
      }
      x.cta = static_cast<uint32_t>(t);
      return kResolved;
    }
    case OpKind::kGridDepControl:
      r->griddep = f[layout::GridDepControl::kKind];
      return kResolved;
    case OpKind::kGlobalAccess: {
      // The engine's range rules (engine.index-range, engine.buffer-range: at least one byte,
      // inside the slot); the executor reads and writes whole 16-byte pattern chunks.
      using L = layout::GlobalAccess;
      ResolvedGlobalAccess& x = r->global_access;
      const uint32_t g = f[L::kGlobal];
      if (g >= c.num_globals) {
        Fail(a, kFaultIndex);
        return kResolveFault;
      }
      const int64_t slot_bytes = c.global_slot_bytes[g];
      const int64_t s = EvalExpr(c, a, f[L::kSlot]);
      const int64_t o = f[L::kOffset] == kNone ? 0 : EvalExpr(c, a, f[L::kOffset]);
      const int64_t n = f[L::kBytes] == kNone ? slot_bytes - o : EvalExpr(c, a, f[L::kBytes]);
      if (a.fault != kFaultNone) return kResolveFault;
      if (s < 0 || s >= c.global_slots[g]) {
        Fail(a, kFaultIndex);
        return kResolveFault;
      }
      if (o < 0 || n < 1 || o > slot_bytes || n > slot_bytes - o) {
        Fail(a, kFaultRange);
        return kResolveFault;
      }
      if (o % 16 != 0 || n % 16 != 0) {
        Fail(a, kFaultAlign);
        return kResolveFault;
      }
      x.global = g;
      x.slot = static_cast<uint32_t>(s);
      x.offset = static_cast<uint32_t>(o);
      x.bytes = static_cast<uint32_t>(n);
      x.write = f[L::kWrite] != 0 ? 1u : 0u;
      return kResolved;
    }
    default:
      return kNotResolvable;
  }
}

// ---------------------------------------------------------------------------------------------
// Control flow: the role's control code (sim/ir/encoding.h, header word 28), the engine's own
// compilation of the body, walked with the engine's walker (sim/engine/walk.h).

// One instruction of the encoded control code, as its six words lie in the encoding.
struct EncodedInstr {
  uint32_t kind;    // engine::InstrKind
  uint32_t var;     // variable slot
  uint32_t e1, e2;  // expression refs
  uint32_t target;  // instruction index
  uint32_t at;      // word offset of the statement's record in the role body
};
static_assert(sizeof(EncodedInstr) == 6 * sizeof(uint32_t), "six words per instruction");
inline constexpr uint32_t kEncodedInstrWords = 6;

// The word offset of each of the first `num_roles` roles' instruction 0 (`code[r]`).
PARITY_HD inline void FindRoleCode(const uint32_t* words, uint32_t num_roles, uint32_t* code) {
  uint32_t o = words[ir::kHdrRoleCode];
  for (uint32_t r = 0; r < num_roles; ++r) {
    code[r] = o + 1;
    o += 1 + kEncodedInstrWords * words[o];
  }
}

// Where an agent is in its role's program.
struct Walk {
  uint32_t pc;     // the instruction (TraceEvent::pc numbering, as the engine's)
  uint32_t code;   // word offset of the role's instruction 0
  uint32_t body;   // word offset of the role body, where statement offsets count from
  uint32_t rec;    // after kAtOp: word offset of the op's record
  uint32_t steps;  // control instructions walked since the agent last called OnWalked
};
enum AdvanceResult : int { kAtOp = 0, kEnded = 1, kFaulted = 2, kAbortSeen = 3 };

// The agent's OnWalked runs after every kWalkCheck control instructions without an op between:
// the GPU's agents look there whether another agent gave up (a loop without ops must leave),
// the host's count toward their cap.
inline constexpr uint32_t kWalkCheck = 32;

// A walk at the start of agent `a`'s role body.
template <typename C, typename A>
PARITY_HD inline Walk StartWalk(const C& c, const A& a) {
  Walk k{};
  k.code = c.role_code[a.slot.role];
  k.body = c.role_body_begin[a.slot.role];
  return k;
}

// Walks to the next op statement (k.rec its record; the caller moves past it with ++k.pc),
// with the engine's semantics (sim/engine/exec.h StepAgent): a `for` step that is not positive
// or a loop variable that overflows is kFaultEval, a `while` still true at its bound
// kFaultBound (engine.while-bound), an expression fault kFaultEval with its EvalError.
template <typename C, typename A>
PARITY_HD inline int NextOp(const C& c, A& a, Walk& k) {
  const EncodedInstr* code = reinterpret_cast<const EncodedInstr*>(c.words + k.code);
  auto ev = [&](uint32_t ref, int64_t* v) {
    *v = EvalExpr(c, a, ref);
    return a.fault == kFaultNone;
  };
  while (true) {
    if (a.fault != kFaultNone) return kFaulted;
    switch (engine::WalkToOp(code, &k.pc, a.vars, ev, kWalkCheck, &k.steps)) {
      case engine::Control::kAtOp:
        k.rec = k.body + code[k.pc].at;
        k.steps = 0;
        return kAtOp;
      case engine::Control::kEnd:
        return kEnded;
      case engine::Control::kNoProgress:
        k.steps = 0;
        if (a.OnWalked(c)) return kAbortSeen;
        continue;
      case engine::Control::kWhileBound:
        Fail(a, kFaultBound);
        continue;
      case engine::Control::kBadStep:
        Fail(a, kFaultEval, EvalError::kNone);
        continue;
      case engine::Control::kStepOverflow:
        Fail(a, kFaultEval, EvalError::kOverflow);
        continue;
      case engine::Control::kEvalFault:  // EvalExpr recorded it
        continue;
      case engine::Control::kAtAssert:  // not in encoded code (an assert is a fall-through)
      case engine::Control::kStop:      // no stop pc given
        Fail(a, kFaultBadWord);
        continue;
    }
    Fail(a, kFaultBadWord);
  }
}

// The word offset in the role body of the statement whose instruction the walk is at (after
// kFaulted: the statement that faulted; the implicit exit: the body's length).
template <typename C>
PARITY_HD inline uint32_t StatementAt(const C& c, const Walk& k) {
  return reinterpret_cast<const EncodedInstr*>(c.words + k.code)[k.pc].at;
}

// The op of the statement at `k.rec` after NextOp returned kAtOp.
template <typename C>
PARITY_HD inline OpKind OpAt(const C& c, const Walk& k) {
  return static_cast<OpKind>((c.words[k.rec] & 0xffu) -
                             static_cast<uint32_t>(EncodedStmtKind::kOpBase));
}

// A plain agent for host-side walks (the GPU runner's resolution, tests): gives up after
// kMaxHostWalkChecks * kWalkCheck control instructions without an op (kFaultNesting).
inline constexpr uint32_t kMaxHostWalkChecks = 1u << 20;
struct HostAgent : AgentPlace {
  int64_t vars[kMaxVars];
  uint8_t token_parity[kMaxVars];
  template <typename C>
  PARITY_HD bool OnWalked(const C&) {
    if (++iters > kMaxHostWalkChecks) Fail(*this, kFaultNesting);
    return false;
  }
};

// Agent `g` of a launch whose agents are numbered [cta_global * warps_per_cta + warp] (the GPU
// runner's numbering), with every variable 0.
PARITY_HD inline HostAgent MakeHostAgent(uint32_t g, AgentSlot slot, uint32_t cluster_m,
                                         uint32_t cluster_n, uint32_t warps_per_cta) {
  HostAgent a{};
  const uint32_t csize = cluster_m * cluster_n;
  const uint32_t cta_global = g / warps_per_cta;
  a.cluster = cta_global / csize;
  a.cta = cta_global % csize;
  a.cta_x = a.cta % cluster_m;
  a.cta_y = a.cta / cluster_m;
  a.slot = slot;
  return a;
}

}  // namespace parity::exec

#endif  // PARITY_SIM_IR_EXEC_H_
