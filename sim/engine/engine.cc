// Execution: the step semantics of every op (Exec: agent steps, completions of in-flight
// operations, wake-ups), the driving API (Choices, Step, Run), and the partial-order
// reduction's queries that run an agent's code ahead (AgentFuture, PeekFootprint).
#include "sim/engine/engine.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cassert>
#include <cstddef>
#include <cstring>
#include <deque>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <variant>

#include "sim/common/bytes.h"
#include "sim/common/check.h"
#include "sim/engine/code.h"
#include "sim/model/tensor_map.h"
#include "sim/model/tma.h"

namespace parity::engine {

// Agent a's async-group states (the step's group predicates read them).
const model::CpAsyncState& Engine::CpState(uint32_t a) const {
  static const model::CpAsyncState kInitial;
  const uint32_t i = code_->group_state[a];
  return i == kNoGroups ? kInitial : cp_[i];
}

const model::BulkAsyncState& Engine::BulkState(uint32_t a) const {
  static const model::BulkAsyncState kInitial;
  const uint32_t i = code_->group_state[a];
  return i == kNoGroups ? kInitial : bulk_[i];
}

// ---------------------------------------------------------------------------------------------
// Execution.

struct Engine::Exec {
  Engine& e;
  const Code& c;
  const ir::Program& p;

  explicit Exec(Engine& engine) : e(engine), c(*engine.code_), p(*engine.code_->program) {}

  // --- footprint (explorer only; null in Run) ---
  Footprint* fp_ = nullptr;
  // Marks what a step changes for the incremental fingerprint (Engine::FpCache): every object
  // it touches, and agents' private state at GroupsObj (set by Step while the cache is valid).
  bool mark_ = false;
  bool track_ = false;  // Step: renew AgentState::gen (Run renews every agent's at its end)
  __attribute__((always_inline)) void Touch(uint32_t object, Access kind = Access::kOther) {
    Dirty(object);
    if (fp_ != nullptr) [[unlikely]] fp_->Add(object, kind);
  }
  __attribute__((always_inline)) void Dirty(uint32_t object) {
    if (!mark_) return;
    uint64_t& word = e.fpc_.w[object >> 6];  // FpCache's dirty bits
    const uint64_t bit = uint64_t{1} << (object & 63);
    if ((word & bit) != 0) return;
    word |= bit;
    if (e.step_log_ok_) e.LogStep(object);  // RestoreStep
  }
  // An agent's pc, status or variables may change: a new AgentState::gen, and its fingerprint
  // component is stale.
  void DirtyAgent(uint32_t agent) {
    if (!track_) return;
    e.agents_[agent].gen = NextAgentGen();
    Dirty(GroupsObj(agent));
  }
  uint32_t ClusterObj(uint32_t cluster) const {
    return static_cast<uint32_t>(e.barriers_.size()) + cluster;
  }
  uint32_t NamedObj(uint32_t cta_global) const {
    return static_cast<uint32_t>(e.barriers_.size()) + c.clusters + cta_global;
  }
  uint32_t GroupsObj(uint32_t agent) const {
    return static_cast<uint32_t>(e.barriers_.size()) + c.clusters + c.num_ctas + agent;
  }
  // Agent a's async-group states, for the operations that only a role with Code::role_groups
  // executes (an async-group operation, or the completion of one it issued).
  model::CpAsyncState& Cp(uint32_t a) { return e.cp_[c.group_state[a]]; }
  model::BulkAsyncState& Bulk(uint32_t a) { return e.bulk_[c.group_state[a]]; }

  // --- trace ---
  // Not recording (exploration): only counted; a violation's event is kept in its
  // ViolationInfo, so it is filled in. Callers may write more fields: into the scratch.
  __attribute__((always_inline)) TraceEvent& Emit(EventKind kind, uint32_t agent,
                                                  uint32_t target_cta, uint32_t object,
                                                  uint32_t index, int64_t value, int64_t value2,
                                                  uint32_t pc, bool async = false) {
    if (!e.options_.record_trace && kind != EventKind::kViolation) [[likely]] {
      ++e.events_;
      return scratch_;
    }
    return Record(kind, agent, target_cta, object, index, value, value2, pc, async);
  }
  TraceEvent& Record(EventKind kind, uint32_t agent, uint32_t target_cta, uint32_t object,
                     uint32_t index, int64_t value, int64_t value2, uint32_t pc, bool async) {
    const AgentInfo& info = c.agents[agent];
    // Fields are written in place (building the record on the stack and copying it costs a
    // store-forwarding stall per event).
    TraceEvent& ev = e.options_.record_trace ? e.trace_.emplace_back() : scratch_;
    ev.time = e.events_++;
    ev.kind = static_cast<uint8_t>(kind);
    ev.cluster = static_cast<uint16_t>(info.cluster);
    ev.cta = static_cast<uint8_t>(info.cta);
    ev.target_cta = static_cast<uint8_t>(target_cta);
    ev.flags = target_cta != info.cta ? trace::kFlagRemote : 0;
    ev.agent = async ? trace::kNoAgent : static_cast<uint16_t>(info.index_in_cta);
    ev.object = static_cast<uint16_t>(object);
    ev.index = static_cast<uint16_t>(index);
    ev.value = static_cast<int32_t>(value);
    ev.value2 = static_cast<int32_t>(value2);
    ev.pc = static_cast<uint16_t>(pc);
    ev.phase = 0;
    ev.parity = 0;
    return ev;
  }
  TraceEvent scratch_{};

  // --- ending ---
  void Error(Status s) {
    if (e.outcome_ != Outcome::kRunning) return;
    e.outcome_ = Outcome::kError;
    e.result_.error = std::move(s);
  }
  void ErrorAt(const std::string& rule, const std::string& msg, const SourceLocation* where) {
    SourceLocation w = where ? *where : SourceLocation{};
    if (w.file.empty()) w.file = p.file;
    Error(Status(rule, msg, w));
  }
  // The byte operand of expect_tx / complete_tx is a .b32 (PTX ISA, mbarrier): a value the
  // schedule computes outside 0..2^32-1 is a bad schedule (engine.tx-range), not a state the
  // model can take.
  bool TxOperandInRange(const char* op, int64_t tx, const SourceLocation* where) {
    if (tx >= 0 && tx <= int64_t{UINT32_MAX}) return true;
    ErrorAt("engine.tx-range",
            std::string(op) + " bytes " + std::to_string(tx) + " is outside 0..4294967295 (a u32)",
            where);
    return false;
  }
  // Reports a model violation caused by `agent` at instruction `pc` on (object, index) of CTA
  // `target`. Errors end the run; warnings are recorded and the run goes on.
  void Violate(const model::Violation& v, uint32_t agent, uint32_t pc, uint32_t target,
               uint32_t object, uint32_t index, bool from_async) {
    TraceEvent& ev = Emit(EventKind::kViolation, agent, target, object, index,
                          static_cast<int64_t>(v.code), v.value, pc, from_async);
    ViolationInfo info;
    info.violation = v;
    info.agent = agent;
    info.from_async = from_async;
    const auto& instrs = c.roles[c.agents[agent].role];
    if (pc < instrs.size() && instrs[pc].where) info.where = *instrs[pc].where;
    if (info.where.file.empty()) info.where.file = p.file;
    info.event = ev;
    if (model::CodeSeverity(v.code) == model::Severity::kWarning) {
      e.result_.warnings.push_back(info);
      return;
    }
    if (e.outcome_ != Outcome::kRunning) return;
    e.outcome_ = Outcome::kViolation;
    e.result_.violation = info;
  }

  // --- expressions ---
  uint32_t env_agent_ = 0;  // the agent whose Env() is current (static-expression row)
  ir::EvalEnv Env(uint32_t a) {
    env_agent_ = a;
    ir::EvalEnv env;
    env.params = c.params.data();
    env.num_params = c.params.size();
    env.vars = e.vars_.data() + c.var_offset[a];
    env.num_vars = p.roles[c.agents[a].role].num_vars;
    env.builtins = &c.builtins[a];
    return env;
  }
  // Evaluates; on a fault ends the run with the Status and returns false.
  __attribute__((always_inline)) bool Ev(ir::ExprId id, const ir::EvalEnv& env, int64_t* out) {
    if (id < c.fast.size()) [[likely]] {
      const Code::FastExpr& f = c.fast[id];
      switch (f.cls) {
        case Code::FastExpr::kConst:
          *out = f.value;
          return true;
        case Code::FastExpr::kVar:
          if (f.arg < env.num_vars) [[likely]] {
            *out = env.vars[f.arg];
            return true;
          }
          break;
        case Code::FastExpr::kStatic: {
          const size_t at = static_cast<size_t>(env_agent_) * c.num_static + f.arg;
          if (c.static_ok[at]) [[likely]] {
            *out = c.static_values[at];
            return true;
          }
          break;
        }
        case Code::FastExpr::kBinary: {
          int64_t x = 0, y = 0;
          if (FastLeaf(f.a, env, &x) && FastLeaf(f.b, env, &y) &&
              FastBinary(static_cast<ir::BinaryOp>(f.op), x, y, out)) {
            return true;
          }
          break;
        }
        case Code::FastExpr::kGeneral:
          break;
      }
    }
    return EvSlow(id, env, out);
  }
  // An operand of a kBinary node: leaves and nested kBinary nodes, never the tree walker (false:
  // let the caller fall back).
  bool FastOperand(ir::ExprId id, const ir::EvalEnv& env, int64_t* out) {
    const Code::FastExpr& f = c.fast[id];
    switch (f.cls) {
      case Code::FastExpr::kConst:
        *out = f.value;
        return true;
      case Code::FastExpr::kVar:
        if (f.arg >= env.num_vars) return false;
        *out = env.vars[f.arg];
        return true;
      case Code::FastExpr::kStatic: {
        const size_t at = static_cast<size_t>(env_agent_) * c.num_static + f.arg;
        if (!c.static_ok[at]) return false;
        *out = c.static_values[at];
        return true;
      }
      case Code::FastExpr::kBinary: {
        int64_t x = 0, y = 0;
        return FastLeaf(f.a, env, &x) && FastLeaf(f.b, env, &y) &&
               FastBinary(static_cast<ir::BinaryOp>(f.op), x, y, out);
      }
      case Code::FastExpr::kGeneral:
        return false;
    }
    return false;
  }
  // FastOperand with its two commonest cases, a constant and a variable, inline (no call).
  __attribute__((always_inline)) bool FastLeaf(ir::ExprId id, const ir::EvalEnv& env,
                                               int64_t* out) {
    const Code::FastExpr& f = c.fast[id];
    if (f.cls == Code::FastExpr::kConst) {
      *out = f.value;
      return true;
    }
    if (f.cls == Code::FastExpr::kVar && f.arg < env.num_vars) {
      *out = env.vars[f.arg];
      return true;
    }
    return FastOperand(id, env, out);
  }
  // ir::Eval's semantics for the operators it covers; false where ir::Eval would report a fault.
  __attribute__((always_inline)) static bool FastBinary(ir::BinaryOp op, int64_t a, int64_t b,
                                                       int64_t* r) {
    switch (op) {
      case ir::BinaryOp::kAdd: return !__builtin_add_overflow(a, b, r);
      case ir::BinaryOp::kSub: return !__builtin_sub_overflow(a, b, r);
      case ir::BinaryOp::kMul: return !__builtin_mul_overflow(a, b, r);
      case ir::BinaryOp::kDiv:
      case ir::BinaryOp::kMod:
        if (b == 0 || (b == -1 && a == INT64_MIN)) return false;
        *r = op == ir::BinaryOp::kDiv ? a / b : a % b;
        return true;
      case ir::BinaryOp::kBitAnd: *r = a & b; return true;
      case ir::BinaryOp::kBitOr: *r = a | b; return true;
      case ir::BinaryOp::kBitXor: *r = a ^ b; return true;
      case ir::BinaryOp::kEq: *r = a == b; return true;
      case ir::BinaryOp::kNe: *r = a != b; return true;
      case ir::BinaryOp::kLt: *r = a < b; return true;
      case ir::BinaryOp::kLe: *r = a <= b; return true;
      case ir::BinaryOp::kGt: *r = a > b; return true;
      case ir::BinaryOp::kGe: *r = a >= b; return true;
      case ir::BinaryOp::kMin: *r = a < b ? a : b; return true;
      case ir::BinaryOp::kMax: *r = a > b ? a : b; return true;
      default: return false;
    }
  }
  __attribute__((noinline)) bool EvSlow(ir::ExprId id, const ir::EvalEnv& env, int64_t* out) {
    ir::EvalFault fault;
    *out = ir::EvalFast(p, id, env, &fault);
    if (!fault.ok()) {
      Error(ir::EvalFaultStatus(p, fault));
      return false;
    }
    return true;
  }
  __attribute__((always_inline)) bool EvOr(ir::ExprId id, const ir::EvalEnv& env, int64_t dflt,
                                            int64_t* out) {
    if (id == ir::kNoExpr) {
      *out = dflt;
      return true;
    }
    return Ev(id, env, out);
  }

  // --- addressing ---
  struct BarAddr {
    uint32_t cta = 0;    // rank in the cluster
    uint32_t index = 0;  // element
    uint32_t slot = 0;   // global slot
  };
  uint32_t SlotOf(uint32_t cluster, uint32_t cta, uint32_t barrier, uint32_t index) const {
    return (cluster * c.cluster_size + cta) * c.barriers_per_cta + c.barrier_base[barrier] + index;
  }
  __attribute__((always_inline)) bool ResolveBar(uint32_t a, const ir::BarrierRef& ref,
                                                 const ir::EvalEnv& env,
                                                 const SourceLocation* where, BarAddr* out) {
    const AgentInfo& info = c.agents[a];
    int64_t idx = 0, cta = info.cta;
    if (!Ev(ref.index, env, &idx) || !EvOr(ref.cta, env, info.cta, &cta)) return false;
    if (idx < 0 || idx >= c.barrier_size[ref.barrier]) {
      ErrorAt("engine.index-range",
              "barrier " + p.barriers[ref.barrier].name + "[" + std::to_string(idx) +
                  "] is outside 0.." + std::to_string(c.barrier_size[ref.barrier] - 1),
              where);
      return false;
    }
    if (cta < 0 || cta >= c.cluster_size) {
      ErrorAt("engine.cta-range",
              "CTA rank " + std::to_string(cta) + " is outside the cluster (0.." +
                  std::to_string(c.cluster_size - 1) + ")",
              where);
      return false;
    }
    out->cta = static_cast<uint32_t>(cta);
    out->index = static_cast<uint32_t>(idx);
    out->slot = SlotOf(info.cluster, out->cta, ref.barrier, out->index);
    return true;
  }
  struct BufAddr {
    uint32_t slot = 0;
    uint32_t address = 0;  // CTA shared window address
    uint32_t bytes = 0;
    uint32_t cta = 0;
  };
  bool ResolveBuf(uint32_t a, const ir::BufferRef& ref, const ir::EvalEnv& env,
                  const SourceLocation* where, BufAddr* out) {
    const Code::Buffer& b = c.buffers[ref.buffer];
    const AgentInfo& info = c.agents[a];
    int64_t slot = 0, off = 0, bytes = 0, cta = info.cta;
    if (!EvOr(ref.slot, env, 0, &slot) || !EvOr(ref.offset, env, 0, &off)) return false;
    if (slot < 0 || slot >= b.stages) {
      ErrorAt("engine.index-range",
              "buffer " + p.buffers[ref.buffer].name + "[" + std::to_string(slot) +
                  "] is outside 0.." + std::to_string(b.stages - 1),
              where);
      return false;
    }
    if (off < 0 || off > b.bytes) {
      ErrorAt("engine.buffer-range", "offset " + std::to_string(off) + " is outside the slot",
              where);
      return false;
    }
    if (!EvOr(ref.bytes, env, b.bytes - off, &bytes) || !EvOr(ref.cta, env, info.cta, &cta)) {
      return false;
    }
    if (bytes < 0 || off + bytes > b.bytes) {
      ErrorAt("engine.buffer-range",
              std::to_string(bytes) + " bytes at offset " + std::to_string(off) +
                  " do not fit in a slot of " + std::to_string(b.bytes) + " bytes of buffer " +
                  p.buffers[ref.buffer].name,
              where);
      return false;
    }
    if (cta < 0 || cta >= c.cluster_size) {
      ErrorAt("engine.cta-range", "CTA rank " + std::to_string(cta) + " is outside the cluster",
              where);
      return false;
    }
    out->slot = static_cast<uint32_t>(slot);
    out->address = b.base + static_cast<uint32_t>(slot) * b.bytes + static_cast<uint32_t>(off);
    out->bytes = static_cast<uint32_t>(bytes);
    out->cta = static_cast<uint32_t>(cta);
    return true;
  }
  // The model's multicast destinations for a mask (memoised: the hot path does not allocate).
  const std::vector<uint32_t>* Destinations(int64_t mask, const SourceLocation* where) {
    if (mask < 0 || mask > 0xffff) {
      ErrorAt("tma.multicast-mask",
              "multicast mask " + std::to_string(mask) + " is not a 16-bit ctaMask", where);
      return nullptr;
    }
    if (c.multicast_index.empty()) c.multicast_index.assign(1u << 16, -1);
    int32_t& slot = c.multicast_index[static_cast<size_t>(mask)];
    if (slot < 0) {
      slot = static_cast<int32_t>(c.multicast.size());
      c.multicast.push_back(
          model::MulticastDestinations(c.cluster_size, static_cast<uint16_t>(mask)));
    }
    const Expected<std::vector<uint32_t>>& d = c.multicast[static_cast<size_t>(slot)];
    if (!d.ok()) {
      SourceLocation w = where ? *where : SourceLocation{};
      if (w.file.empty()) w.file = p.file;
      Error(d.status().At(w));
      return nullptr;
    }
    return &*d;
  }

  // The model's shared-address rules for a tensor copy of `map` at `address` (memoised).
  bool SmemAddressOk(const Code::Map& map, uint32_t address, const SourceLocation* where) {
    const uint32_t key = address / 128;
    const bool memo = address % 128 == 0 && key < map.smem_ok.size();
    if (memo && map.smem_ok[key] == 1) return true;
    Status st = model::ValidateTmaSharedAddress(address, map.box_bytes);
    if (memo) map.smem_ok[key] = st.ok() ? 1 : 2;
    if (st.ok()) return true;
    ErrorAt(st.rule(), st.message(), where);
    return false;
  }

  // --- scheduling state ---
  void MakeReady(uint32_t a) {
    AgentState& s = e.agents_[a];
    if (s.status == kReady) return;
    DirtyAgent(a);
    s.status = kReady;
    s.ready_pos = static_cast<uint32_t>(e.ready_.size());
    e.ready_.push_back(a);
  }
  void RemoveReady(uint32_t a) {
    AgentState& s = e.agents_[a];
    const uint32_t pos = s.ready_pos;
    const uint32_t last = e.ready_.back();
    e.ready_[pos] = last;
    e.agents_[last].ready_pos = pos;
    e.ready_.pop_back();
  }
  void Block(uint32_t a, WaitKind w, uint32_t slot, uint32_t arg) {
    DirtyAgent(a);
    AgentState& s = e.agents_[a];
    s.wait = w;
    s.wait_slot = slot;
    s.wait_arg = arg;
    if (s.status == kReady) RemoveReady(a);
    s.status = kBlocked;
  }
  // Wakes agents of the barrier's CTA blocked on that slot: they re-run their wait. Only the
  // owning CTA's agents can wait on a barrier (PTX: waits are on shared::cta barriers).
  void WakeBarrier(uint32_t slot) {
    e.step_scanned_ = true;
    const uint32_t cta = slot / c.barriers_per_cta;
    for (uint32_t a = c.cta_first_agent[cta]; a < c.cta_first_agent[cta + 1]; ++a) {
      const AgentState& s = e.agents_[a];
      if (s.status == kBlocked && s.wait_slot == slot &&
          (s.wait == WaitKind::kMbarrierParity || s.wait == WaitKind::kMbarrierToken)) {
        MakeReady(a);
      }
    }
  }
  void PhaseCompleted(uint32_t agent, uint32_t slot, uint32_t barrier, uint32_t index,
                      uint32_t target, uint32_t pc, bool async) {
    const model::MbarrierState& st = e.barriers_[slot];
    TraceEvent& ev = Emit(EventKind::kPhaseComplete, agent, target, barrier, index,
                          static_cast<int64_t>(st.phase - 1), 0, pc, async);
    ev.phase = static_cast<uint8_t>(st.parity());
    WakeBarrier(slot);
  }

  // --- cluster barrier and named barriers (sim/model/sync_barriers.h) ---
  // Participant of the cluster barrier: the agent's index within its cluster (an agent's
  // threads arrive and wait together).
  uint32_t ClusterParticipant(uint32_t a) const {
    return a - c.cluster_first_agent[c.agents[a].cluster];
  }
  void WakeCluster(uint32_t cluster) {
    e.step_scanned_ = true;
    for (uint32_t a = c.cluster_first_agent[cluster]; a < c.cluster_first_agent[cluster + 1];
         ++a) {
      if (e.agents_[a].status == kBlocked && e.agents_[a].wait == WaitKind::kClusterBarrier) {
        MakeReady(a);
      }
    }
  }
  void WakeNamed(uint32_t cta_global, uint32_t id_mask) {
    e.step_scanned_ = true;
    for (uint32_t o = c.cta_first_agent[cta_global]; o < c.cta_first_agent[cta_global + 1]; ++o) {
      const AgentState& os = e.agents_[o];
      if (os.status == kBlocked && os.wait == WaitKind::kNamedBarrier &&
          ((id_mask >> os.wait_slot) & 1u)) {
        MakeReady(o);
      }
    }
  }

  // --- group predicates (sim/model/async_groups.h) ---
  void RecheckGroups(uint32_t a) {
    AgentState& s = e.agents_[a];
    if (s.status != kBlocked) return;
    if (s.wait == WaitKind::kCpAsyncGroups && e.CpState(a).WaitGroupSatisfied(s.wait_slot)) {
      MakeReady(a);
    } else if (s.wait == WaitKind::kBulkGroups &&
               e.BulkState(a).WaitGroupSatisfied(s.wait_slot, s.wait_arg != 0)) {
      MakeReady(a);
    }
  }

  // --- agent step ---
  void StepAgent(uint32_t a) {
    DirtyAgent(a);
    AgentState& s = e.agents_[a];
    const AgentInfo& info = c.agents[a];
    const std::vector<Instr>& code = c.roles[info.role];
    const ir::EvalEnv env = Env(a);
    int64_t* vars = e.vars_.data() + c.var_offset[a];
    // Control flow until the next operation (bounded: a loop without operations is a bug).
    for (uint32_t guard = 0;; ++guard) {
      if (guard > (1u << 24)) {
        ErrorAt("engine.no-progress", "more than 2^24 control steps without an operation",
                code[s.pc].where);
        return;
      }
      const Instr& in = code[s.pc];
      int64_t v = 0;
      switch (in.kind) {
        case Instr::kLet:
          if (!Ev(in.e1, env, &v)) return;
          vars[in.var] = v;
          ++s.pc;
          continue;
        case Instr::kJump:
          s.pc = in.target;
          continue;
        case Instr::kJumpIfFalse:
          if (!Ev(in.e1, env, &v)) return;
          s.pc = v != 0 ? s.pc + 1 : in.target;
          continue;
        case Instr::kForInit:
          if (!Ev(in.e1, env, &v)) return;
          vars[in.var] = v;
          ++s.pc;
          continue;
        case Instr::kForTest:
          if (!Ev(in.e1, env, &v)) return;
          s.pc = vars[in.var] < v ? s.pc + 1 : in.target;
          continue;
        case Instr::kForStep:
          if (!EvOr(in.e1, env, 1, &v)) return;
          if (v <= 0) {
            ErrorAt("engine.for-step", "for loop step " + std::to_string(v) + " is not positive",
                    in.where);
            return;
          }
          if (__builtin_add_overflow(vars[in.var], v, &vars[in.var])) {
            ErrorAt("eval.overflow", "for loop variable overflows", in.where);
            return;
          }
          s.pc = in.target;
          continue;
        case Instr::kEnd:
          DoExit(a, s.pc, in.where);
          return;
        case Instr::kOp:
          ExecOp(a, in, env);
          return;
      }
    }
  }

  void DoExit(uint32_t a, uint32_t pc, const SourceLocation* where) {
    AgentState& s = e.agents_[a];
    const AgentInfo& info = c.agents[a];
    Touch(GroupsObj(a));
    Touch(ClusterObj(info.cluster), Access::kExit);
    Touch(NamedObj(info.cta_global), Access::kExit);
    std::optional<model::Violation> v = e.CpState(a).CheckExit();
    if (!v) v = e.BulkState(a).CheckExit();
    if (v) {
      Violate(*v, a, pc, info.cta, 0, 0, false);
      if (e.outcome_ != Outcome::kRunning) return;
    }
    Emit(EventKind::kExit, a, info.cta, 0, 0, 0, 0, pc);
    if (s.status == kReady) RemoveReady(a);
    s.status = kExited;
    s.wait = WaitKind::kNone;
    ++e.exited_count_;
    // Exited threads leave the cluster barrier's expected set and the CTA's named barriers
    // that count all CTA threads (PTX ISA exit: barriers waiting only on exited threads are
    // released).
    if (e.clusters_[info.cluster].Exit(ClusterParticipant(a))) WakeCluster(info.cluster);
    const uint32_t released = e.named_[info.cta_global].ThreadsExited(info.threads);
    if (released != 0) WakeNamed(info.cta_global, released);
  }

  // A switch rather than std::visit: the handlers inline into one dispatch (std::visit's
  // table of thunks prevents that).
  void ExecOp(uint32_t a, const Instr& in, const ir::EvalEnv& env) {
    static_assert(std::variant_size_v<ir::Op> == 25, "a new op needs a case here");
    switch (in.op->index()) {
      case 0: return Do(a, in, env, *std::get_if<0>(in.op));
      case 1: return Do(a, in, env, *std::get_if<1>(in.op));
      case 2: return Do(a, in, env, *std::get_if<2>(in.op));
      case 3: return Do(a, in, env, *std::get_if<3>(in.op));
      case 4: return Do(a, in, env, *std::get_if<4>(in.op));
      case 5: return Do(a, in, env, *std::get_if<5>(in.op));
      case 6: return Do(a, in, env, *std::get_if<6>(in.op));
      case 7: return Do(a, in, env, *std::get_if<7>(in.op));
      case 8: return Do(a, in, env, *std::get_if<8>(in.op));
      case 9: return Do(a, in, env, *std::get_if<9>(in.op));
      case 10: return Do(a, in, env, *std::get_if<10>(in.op));
      case 11: return Do(a, in, env, *std::get_if<11>(in.op));
      case 12: return Do(a, in, env, *std::get_if<12>(in.op));
      case 13: return Do(a, in, env, *std::get_if<13>(in.op));
      case 14: return Do(a, in, env, *std::get_if<14>(in.op));
      case 15: return Do(a, in, env, *std::get_if<15>(in.op));
      case 16: return Do(a, in, env, *std::get_if<16>(in.op));
      case 17: return Do(a, in, env, *std::get_if<17>(in.op));
      case 18: return Do(a, in, env, *std::get_if<18>(in.op));
      case 19: return Do(a, in, env, *std::get_if<19>(in.op));
      case 20: return Do(a, in, env, *std::get_if<20>(in.op));
      case 21: return Do(a, in, env, *std::get_if<21>(in.op));
      case 22: return Do(a, in, env, *std::get_if<22>(in.op));
      case 23: return Do(a, in, env, *std::get_if<23>(in.op));
      case 24: return Do(a, in, env, *std::get_if<24>(in.op));
      default: PARITY_CHECK(false, "unknown op");
    }
  }

  // Result plumbing shared by the mbarrier operations.
  template <typename R>
  bool Check(const R& r, uint32_t a, uint32_t pc, const BarAddr& b, uint32_t barrier,
             bool async = false) {
    if (r.violation) {
      Violate(*r.violation, a, pc, b.cta, barrier, b.index, async);
      return false;
    }
    return true;
  }

  void Do(uint32_t a, const Instr& in, const ir::EvalEnv& env, const ir::MbarrierInit& op) {
    BarAddr b;
    if (!ResolveBar(a, op.bar, env, in.where, &b)) return;
    int64_t count = 0;
    if (!EvOr(op.count, env, c.barrier_count[b.slot], &count)) return;
    Touch(b.slot);
    model::MbarrierResult r = model::MbarrierInit(e.barriers_[b.slot], count);
    const uint32_t pc = Pc(a);
    Emit(EventKind::kInit, a, b.cta, op.bar.barrier, b.index, count, 0, pc);
    if (!Check(r, a, pc, b, op.bar.barrier)) return;
    Advance(a);
  }
  void Do(uint32_t a, const Instr& in, const ir::EvalEnv& env, const ir::MbarrierInval& op) {
    BarAddr b;
    if (!ResolveBar(a, op.bar, env, in.where, &b)) return;
    const uint32_t pc = Pc(a);
    Touch(b.slot);
    model::MbarrierResult r = model::MbarrierInval(e.barriers_[b.slot]);
    Emit(EventKind::kInval, a, b.cta, op.bar.barrier, b.index, 0, 0, pc);
    if (!Check(r, a, pc, b, op.bar.barrier)) return;
    Advance(a);
  }
  void Do(uint32_t a, const Instr& in, const ir::EvalEnv& env, const ir::MbarrierArrive& op) {
    BarAddr b;
    if (!ResolveBar(a, op.bar, env, in.where, &b)) return;
    int64_t count = 1, tx = 0, mask = -1;
    if (!EvOr(op.count, env, 1, &count) || !EvOr(op.expect_tx, env, 0, &tx) ||
        !EvOr(op.mask, env, -1, &mask) || !TxOperandInRange("expect_tx", tx, in.where)) {
      return;
    }
    const uint32_t pc = Pc(a);
    if (mask < 0) {
      if (!ArriveOne(a, op, b, count, tx, pc, 0)) return;
    } else {
      // One arrive per destination CTA of the mask (CUTLASS ClusterBarrier::arrive(cta, pred)
      // in a loop). A bit beyond the cluster is a bad schedule, as for TMA multicast.
      const std::vector<uint32_t>* dests = Destinations(mask, in.where);
      if (dests == nullptr) return;
      for (uint32_t d : *dests) {
        BarAddr t = b;
        t.cta = d;
        t.slot = SlotOf(c.agents[a].cluster, d, op.bar.barrier, b.index);
        if (!ArriveOne(a, op, t, count, tx, pc, trace::kFlagMulticast)) return;
      }
    }
    Advance(a);
  }
  bool ArriveOne(uint32_t a, const ir::MbarrierArrive& op, const BarAddr& b, int64_t count,
                 int64_t tx, uint32_t pc, uint8_t flags) {
    Touch(b.slot, op.expect_tx != ir::kNoExpr || op.kind == ir::MbarrierArrive::Kind::kArrive
                      ? Access::kArrive
                      : Access::kOther);
    model::MbarrierState& st = e.barriers_[b.slot];
    model::MbarrierArriveResult r;
    EventKind kind = EventKind::kArrive;
    if (op.expect_tx != ir::kNoExpr) {
      r = model::MbarrierArriveExpectTx(st, tx, count);
      kind = EventKind::kArriveExpectTx;
    } else if (op.kind == ir::MbarrierArrive::Kind::kNoComplete) {
      r = model::MbarrierArriveNoComplete(st, count);
    } else if (op.kind == ir::MbarrierArrive::Kind::kDrop) {
      r = model::MbarrierArriveDrop(st, count);
    } else {
      r = model::MbarrierArrive(st, count);
    }
    TraceEvent& ev = Emit(kind, a, b.cta, op.bar.barrier, b.index, count,
                          kind == EventKind::kArrive ? st.pending_count : tx, pc);
    ev.phase = static_cast<uint8_t>(st.parity());
    ev.flags |= flags;
    if (!Check(r, a, pc, b, op.bar.barrier)) return false;
    if (op.token_var != 0xffffffffu) {
      e.vars_[c.var_offset[a] + op.token_var] = EncodeToken(r.token);
    }
    if (r.phase_completed) PhaseCompleted(a, b.slot, op.bar.barrier, b.index, b.cta, pc, false);
    return true;
  }
  void Do(uint32_t a, const Instr& in, const ir::EvalEnv& env, const ir::MbarrierExpectTx& op) {
    BarAddr b;
    int64_t tx = 0;
    if (!ResolveBar(a, op.bar, env, in.where, &b) || !Ev(op.bytes, env, &tx) ||
        !TxOperandInRange("expect_tx", tx, in.where)) {
      return;
    }
    const uint32_t pc = Pc(a);
    Touch(b.slot);
    model::MbarrierState& st = e.barriers_[b.slot];
    model::MbarrierResult r = model::MbarrierExpectTx(st, tx);
    Emit(EventKind::kExpectTx, a, b.cta, op.bar.barrier, b.index, tx, st.tx_count, pc).phase =
        static_cast<uint8_t>(st.parity());
    if (!Check(r, a, pc, b, op.bar.barrier)) return;
    if (r.phase_completed) PhaseCompleted(a, b.slot, op.bar.barrier, b.index, b.cta, pc, false);
    Advance(a);
  }
  void Do(uint32_t a, const Instr& in, const ir::EvalEnv& env,
          const ir::MbarrierCompleteTx& op) {
    BarAddr b;
    int64_t tx = 0;
    if (!ResolveBar(a, op.bar, env, in.where, &b) || !Ev(op.bytes, env, &tx) ||
        !TxOperandInRange("complete_tx", tx, in.where)) {
      return;
    }
    const uint32_t pc = Pc(a);
    if (!CompleteTx(a, b, op.bar.barrier, tx, pc, EventKind::kCompleteTx, false, 0)) return;
    Advance(a);
  }
  bool CompleteTx(uint32_t a, const BarAddr& b, uint32_t barrier, int64_t tx, uint32_t pc,
                  EventKind kind, bool async, uint8_t flags, uint64_t dst_slot = kNoDstSlot) {
    Touch(b.slot, Access::kCompleteTx);
    model::MbarrierState& st = e.barriers_[b.slot];
    model::MbarrierResult r = model::MbarrierCompleteTx(st, tx);
    TraceEvent& ev = Emit(kind, a, b.cta, barrier, b.index, tx, st.tx_count, pc, async);
    ev.phase = static_cast<uint8_t>(st.parity());
    ev.flags |= flags;
    if (dst_slot <= trace::kMaxEventSlot) {
      ev.flags |= trace::kFlagSlot;
      ev.parity = static_cast<uint8_t>(dst_slot);
    }
    if (!Check(r, a, pc, b, barrier, async)) return false;
    if (r.phase_completed) PhaseCompleted(a, b.slot, barrier, b.index, b.cta, pc, async);
    return true;
  }
  void Do(uint32_t a, const Instr& in, const ir::EvalEnv& env, const ir::MbarrierWait& op) {
    BarAddr b;
    if (!ResolveBar(a, op.bar, env, in.where, &b)) return;
    const AgentInfo& info = c.agents[a];
    AgentState& s = e.agents_[a];
    const uint32_t pc = Pc(a);
    Touch(b.slot, Access::kWait);
    // mbarrier.test_wait/try_wait exist only for the .shared::cta state space (PTX ISA
    // mbarrier.test_wait/try_wait; every cuda::ptx mbarrier_try_wait form is .shared::cta), so a
    // wait on a peer CTA's barrier is not expressible: bad input, not a run-time violation.
    if (b.cta != info.cta) {
      ErrorAt("engine.remote-wait",
              "mbarrier waits are only defined on the executing CTA's own barriers "
              "(shared::cta); this waits on CTA " + std::to_string(b.cta),
              in.where);
      return;
    }
    model::MbarrierState& st = e.barriers_[b.slot];
    const bool by_token = op.token_var != 0xffffffffu;
    uint32_t parity = 0;
    model::MbarrierToken token;
    if (by_token) {
      token.phase = static_cast<uint32_t>(e.vars_[c.var_offset[a] + op.token_var]);
    } else {
      int64_t par = 0;
      if (!Ev(op.parity, env, &par)) return;
      if (par != 0 && par != 1) {
        ErrorAt("engine.parity-range", "wait parity " + std::to_string(par) + " is not 0 or 1",
                in.where);
        return;
      }
      parity = static_cast<uint32_t>(par);
    }
    if (op.test_only) {
      model::MbarrierWaitResult r = by_token ? model::MbarrierTestWait(st, token)
                                             : model::MbarrierTestWaitParity(st, parity);
      TraceEvent& ev = Emit(EventKind::kTestWait, a, b.cta, op.bar.barrier, b.index,
                            r.complete ? 1 : 0, 0, pc);
      ev.phase = static_cast<uint8_t>(st.parity());
      ev.parity = static_cast<uint8_t>(by_token ? token.phase & 1 : parity);
      if (!Check(r, a, pc, b, op.bar.barrier)) return;
      if (op.result_var != 0xffffffffu) {
        e.vars_[c.var_offset[a] + op.result_var] = r.complete ? 1 : 0;
      }
      Advance(a);
      return;
    }
    const bool resumed = s.wait != WaitKind::kNone;
    const uint8_t shown_parity = static_cast<uint8_t>(by_token ? token.phase & 1 : parity);
    if (!resumed) {
      TraceEvent& ev = Emit(EventKind::kWaitBegin, a, b.cta, op.bar.barrier, b.index, 0, 0, pc);
      ev.phase = static_cast<uint8_t>(st.parity());
      ev.parity = shown_parity;
    }
    model::MbarrierWaitResult r = by_token ? model::MbarrierTryWait(st, token, false)
                                           : model::MbarrierTryWaitParity(st, parity, false);
    if (!Check(r, a, pc, b, op.bar.barrier)) return;
    if (!r.complete) {
      Block(a, by_token ? WaitKind::kMbarrierToken : WaitKind::kMbarrierParity, b.slot,
            by_token ? token.phase : parity);
      return;
    }
    TraceEvent& ev = Emit(EventKind::kWaitEnd, a, b.cta, op.bar.barrier, b.index, 1, 0, pc);
    ev.phase = static_cast<uint8_t>(st.parity());
    ev.parity = shown_parity;
    s.wait = WaitKind::kNone;
    Advance(a);
  }

  // Issues one complete_tx delivery per destination CTA.
  // `dst_slot`: the destination buffer slot of a TMA or bulk load (kNoDstSlot otherwise). It is
  // part of the operation's identity: two copies of one instruction onto one barrier element
  // that fill different slots are different operations, and the delivery event names its slot
  // so that a trace's reader knows which bytes landed (trace::kFlagSlot).
  static constexpr uint64_t kNoDstSlot = ~uint64_t{0};
  void IssueDeliveries(uint32_t a, uint8_t kind, const BarAddr& b, uint32_t barrier,
                       uint32_t bytes, const std::vector<uint32_t>* dests, uint32_t pc,
                       uint64_t dst_slot = kNoDstSlot) {
    const AgentInfo& info = c.agents[a];
    InFlight f;
    f.kind = kind;
    if (dst_slot != kNoDstSlot) f.id = dst_slot;
    f.object = static_cast<uint16_t>(barrier);
    f.agent = a;
    f.index = b.index;
    f.bytes = bytes;
    f.pc = pc;
    if (dests == nullptr) {
      f.target_cta = b.cta;
      f.slot = b.slot;
      e.in_flight_.push_back(f);
      return;
    }
    f.flags = trace::kFlagMulticast;
    for (uint32_t d : *dests) {
      f.target_cta = d;
      f.slot = SlotOf(info.cluster, d, barrier, b.index);
      e.in_flight_.push_back(f);
    }
  }

  void Do(uint32_t a, const Instr& in, const ir::EvalEnv& env, const ir::TmaLoad& op) {
    const Code::Map& map = c.maps[op.tensor_map];
    BufAddr dst;
    BarAddr b;
    int64_t mask = -1;
    if (!ResolveBuf(a, op.dst, env, in.where, &dst) || !ResolveBar(a, op.bar, env, in.where, &b) ||
        !EvOr(op.multicast_mask, env, -1, &mask)) {
      return;
    }
    for (ir::ExprId coord : op.coords) {
      int64_t v = 0;
      if (!Ev(coord, env, &v)) return;  // coordinates are not needed for counts, but must be valid
    }
    const uint32_t pc = Pc(a);
    // Box bytes (complete_tx credits the full box, OOB included: sim/model/tma.h) and the
    // shared-address rules come from the model.
    if (!SmemAddressOk(map, dst.address, in.where)) return;
    if (map.box_bytes > dst.bytes) {
      ErrorAt("engine.tma-dst-overflow",
              "the box of tensormap " + p.tensor_maps[op.tensor_map].name + " is " +
                  std::to_string(map.box_bytes) + " bytes but the destination " +
                  p.buffers[op.dst.buffer].name + " slot holds " + std::to_string(dst.bytes),
              in.where);
      return;
    }
    const std::vector<uint32_t>* dests = nullptr;
    if (mask >= 0) {
      dests = Destinations(mask, in.where);
      if (dests == nullptr) return;
    }
    TraceEvent& ev = Emit(EventKind::kTmaIssue, a, b.cta, op.tensor_map, dst.slot, map.box_bytes,
                          mask, pc);
    if (dests) ev.flags |= trace::kFlagMulticast;
    IssueDeliveries(a, InFlight::kTmaDeliver, b, op.bar.barrier, map.box_bytes, dests, pc,
                    dst.slot);
    Advance(a);
  }
  void Do(uint32_t a, const Instr& in, const ir::EvalEnv& env, const ir::BulkLoad& op) {
    BufAddr dst;
    BarAddr b;
    int64_t mask = -1;
    if (!ResolveBuf(a, op.dst, env, in.where, &dst) || !ResolveBar(a, op.bar, env, in.where, &b) ||
        !EvOr(op.multicast_mask, env, -1, &mask)) {
      return;
    }
    auto plan = model::PlanBulkCopy(model::BulkCopyKind::kGlobalToShared, dst.address, 0,
                                    dst.bytes);
    if (!plan.ok()) {
      ErrorAt(plan.status().rule(), plan.status().message(), in.where);
      return;
    }
    const std::vector<uint32_t>* dests = nullptr;
    if (mask >= 0) {
      dests = Destinations(mask, in.where);
      if (dests == nullptr) return;
    }
    const uint32_t pc = Pc(a);
    TraceEvent& ev = Emit(EventKind::kBulkIssue, a, b.cta, op.dst.buffer, dst.slot,
                          plan->complete_tx_bytes, mask, pc);
    if (dests) ev.flags |= trace::kFlagMulticast;
    IssueDeliveries(a, InFlight::kBulkDeliver, b, op.bar.barrier, plan->complete_tx_bytes, dests,
                    pc, dst.slot);
    Advance(a);
  }
  void Do(uint32_t a, const Instr& in, const ir::EvalEnv& env, const ir::StAsync& op) {
    BufAddr dst;
    BarAddr b;
    if (!ResolveBuf(a, op.dst, env, in.where, &dst) || !ResolveBar(a, op.bar, env, in.where, &b)) {
      return;
    }
    // st.async's mbarrier is in the destination CTA: the barrier operand names it there.
    if (op.bar.cta == ir::kNoExpr) {
      b.cta = dst.cta;
      b.slot = SlotOf(c.agents[a].cluster, dst.cta, op.bar.barrier, b.index);
    }
    const uint32_t pc = Pc(a);
    Emit(EventKind::kStAsync, a, b.cta, op.bar.barrier, b.index, dst.bytes, 0, pc);
    IssueDeliveries(a, InFlight::kStAsync, b, op.bar.barrier, dst.bytes, nullptr, pc);
    Advance(a);
  }
  void IssueStore(uint32_t a, uint32_t buffer, uint32_t slot, uint32_t bytes, uint32_t pc) {
    InFlight f;
    f.kind = InFlight::kStoreRead;
    f.object = static_cast<uint16_t>(buffer);
    f.agent = a;
    f.target_cta = c.agents[a].cta;
    f.index = slot;
    f.bytes = bytes;
    f.pc = pc;
    f.id = Bulk(a).Issue();
    Touch(GroupsObj(a));
    e.in_flight_.push_back(f);
  }
  void Do(uint32_t a, const Instr& in, const ir::EvalEnv& env, const ir::TmaStore& op) {
    const Code::Map& map = c.maps[op.tensor_map];
    BufAddr src;
    if (!ResolveBuf(a, op.src, env, in.where, &src)) return;
    for (ir::ExprId coord : op.coords) {
      int64_t v = 0;
      if (!Ev(coord, env, &v)) return;
    }
    if (!SmemAddressOk(map, src.address, in.where)) return;
    const uint32_t pc = Pc(a);
    Emit(EventKind::kTmaStoreIssue, a, c.agents[a].cta, op.tensor_map, src.slot, map.box_bytes, 0,
         pc);
    IssueStore(a, op.src.buffer, src.slot, map.box_bytes, pc);
    Advance(a);
  }
  void Do(uint32_t a, const Instr& in, const ir::EvalEnv& env, const ir::BulkStore& op) {
    BufAddr src;
    if (!ResolveBuf(a, op.src, env, in.where, &src)) return;
    auto plan = model::PlanBulkCopy(model::BulkCopyKind::kSharedToGlobal, 0, src.address,
                                    src.bytes);
    if (!plan.ok()) {
      ErrorAt(plan.status().rule(), plan.status().message(), in.where);
      return;
    }
    const uint32_t pc = Pc(a);
    Emit(EventKind::kBulkIssue, a, c.agents[a].cta, op.src.buffer, src.slot, plan->bytes, 0, pc);
    IssueStore(a, op.src.buffer, src.slot, plan->bytes, pc);
    Advance(a);
  }
  void Do(uint32_t a, const Instr&, const ir::EvalEnv&, const ir::BulkCommit&) {
    const uint32_t pc = Pc(a);
    Touch(GroupsObj(a));
    std::optional<model::Violation> w = Bulk(a).Commit();
    if (w) Violate(*w, a, pc, c.agents[a].cta, 0, 0, false);
    Emit(EventKind::kBulkCommit, a, c.agents[a].cta, 0, 0,
         static_cast<int64_t>(Bulk(a).committed_groups()) - 1, 0, pc);
    Advance(a);
  }
  void Do(uint32_t a, const Instr& in, const ir::EvalEnv& env, const ir::BulkWait& op) {
    AgentState& s = e.agents_[a];
    Touch(GroupsObj(a));
    int64_t n = 0;
    if (!EvOr(op.pending, env, 0, &n)) return;
    if (n < 0 || n > 63) {
      ErrorAt("engine.group-count", "wait_group " + std::to_string(n) + " is outside 0..63",
              in.where);
      return;
    }
    const uint32_t pc = Pc(a);
    const bool resumed = s.wait != WaitKind::kNone;
    if (!resumed) {
      std::optional<model::Violation> w = Bulk(a).CheckWaitGroup(static_cast<uint32_t>(n));
      if (w) Violate(*w, a, pc, c.agents[a].cta, 0, 0, false);
      Emit(EventKind::kBulkWaitBegin, a, c.agents[a].cta, 0, 0, n, op.read, pc);
    }
    if (!Bulk(a).WaitGroupSatisfied(static_cast<uint32_t>(n), op.read)) {
      Block(a, WaitKind::kBulkGroups, static_cast<uint32_t>(n), op.read ? 1 : 0);
      return;
    }
    Emit(EventKind::kBulkWaitEnd, a, c.agents[a].cta, 0, 0, n, op.read, pc);
    s.wait = WaitKind::kNone;
    Advance(a);
  }
  void Do(uint32_t a, const Instr& in, const ir::EvalEnv& env, const ir::CpAsync& op) {
    BufAddr dst;
    if (!ResolveBuf(a, op.dst, env, in.where, &dst)) return;
    const uint32_t pc = Pc(a);
    InFlight f;
    f.kind = InFlight::kCpAsync;
    f.object = static_cast<uint16_t>(op.dst.buffer);
    f.agent = a;
    f.target_cta = c.agents[a].cta;
    f.index = dst.slot;
    f.bytes = dst.bytes;
    f.pc = pc;
    f.id = Cp(a).Issue();
    Touch(GroupsObj(a));
    e.in_flight_.push_back(f);
    Emit(EventKind::kCpAsyncIssue, a, f.target_cta, op.dst.buffer, dst.slot, dst.bytes, 0, pc);
    Advance(a);
  }
  void Do(uint32_t a, const Instr&, const ir::EvalEnv&, const ir::CpAsyncCommit&) {
    const uint32_t pc = Pc(a);
    Touch(GroupsObj(a));
    std::optional<model::Violation> w = Cp(a).Commit();
    if (w) Violate(*w, a, pc, c.agents[a].cta, 0, 0, false);
    Emit(EventKind::kCpAsyncCommit, a, c.agents[a].cta, 0, 0,
         static_cast<int64_t>(Cp(a).committed_groups()) - 1, 0, pc);
    Advance(a);
  }
  void Do(uint32_t a, const Instr& in, const ir::EvalEnv& env, const ir::CpAsyncWait& op) {
    AgentState& s = e.agents_[a];
    const uint32_t pc = Pc(a);
    Touch(GroupsObj(a));
    const bool wait_all = op.pending == ir::kNoExpr;
    int64_t n = 0;
    if (!EvOr(op.pending, env, 0, &n)) return;
    if (n < 0 || n > 63) {
      ErrorAt("engine.group-count", "wait_group " + std::to_string(n) + " is outside 0..63",
              in.where);
      return;
    }
    const bool resumed = s.wait != WaitKind::kNone;
    if (!resumed) {
      // cp.async.wait_all = cp.async.commit_group + cp.async.wait_group 0 (PTX ISA).
      if (wait_all) {
        Cp(a).BeginWaitAll();
      } else if (auto w = Cp(a).CheckWaitGroup(static_cast<uint32_t>(n))) {
        Violate(*w, a, pc, c.agents[a].cta, 0, 0, false);
      }
      Emit(EventKind::kCpAsyncWaitBegin, a, c.agents[a].cta, 0, 0, n, 0, pc);
    }
    if (!Cp(a).WaitGroupSatisfied(static_cast<uint32_t>(n))) {
      Block(a, WaitKind::kCpAsyncGroups, static_cast<uint32_t>(n), 0);
      return;
    }
    Emit(EventKind::kCpAsyncWaitEnd, a, c.agents[a].cta, 0, 0, n, 0, pc);
    s.wait = WaitKind::kNone;
    Advance(a);
  }
  void Do(uint32_t a, const Instr& in, const ir::EvalEnv& env,
          const ir::CpAsyncMbarrierArrive& op) {
    BarAddr b;
    if (!ResolveBar(a, op.bar, env, in.where, &b)) return;
    const uint32_t pc = Pc(a);
    Touch(b.slot);
    Touch(GroupsObj(a));
    model::MbarrierResult r = model::MbarrierAsyncArriveIssue(e.barriers_[b.slot], op.noinc);
    Emit(EventKind::kCpAsyncArrive, a, b.cta, op.bar.barrier, b.index, op.noinc ? 1 : 0,
         e.barriers_[b.slot].pending_count, pc);
    if (!Check(r, a, pc, b, op.bar.barrier)) return;
    InFlight f;
    f.kind = InFlight::kCpAsyncArrive;
    f.object = static_cast<uint16_t>(op.bar.barrier);
    f.agent = a;
    f.target_cta = b.cta;
    f.slot = b.slot;
    f.index = b.index;
    f.pc = pc;
    // The arrive lands once every cp.async the agent issued before it has completed.
    f.id = Cp(a).IssuedCount();
    Cp(a).MarkTrackedByMbarrier();
    if (Cp(a).AllCompleteBefore(f.id)) {
      e.in_flight_.push_back(f);
    } else {
      e.deferred_.push_back(f);
    }
    Advance(a);
  }
  void Do(uint32_t a, const Instr&, const ir::EvalEnv&, const ir::Fence& op) {
    const uint32_t pc = Pc(a);
    Emit(EventKind::kFence, a, c.agents[a].cta, static_cast<uint32_t>(op.kind), 0, 0, 0, pc);
    Advance(a);
  }
  void Do(uint32_t a, const Instr&, const ir::EvalEnv&, const ir::ClusterArrive& op) {
    const AgentInfo& info = c.agents[a];
    const uint32_t pc = Pc(a);
    model::ClusterBarrier& cb = e.clusters_[info.cluster];
    Touch(ClusterObj(info.cluster), Access::kClusterArrive);
    model::ClusterArrival r = cb.Arrive(ClusterParticipant(a));
    Emit(EventKind::kClusterArrive, a, info.cta, 0, 0, op.relaxed ? 1 : 0, cb.arrived(), pc);
    if (r.violation) {
      Violate(*r.violation, a, pc, info.cta, 0, 0, false);
      return;
    }
    e.agents_[a].cluster_arrived = 1;
    if (r.completed) WakeCluster(info.cluster);
    Advance(a);
  }
  void Do(uint32_t a, const Instr&, const ir::EvalEnv&, const ir::ClusterWait&) {
    AgentState& s = e.agents_[a];
    const AgentInfo& info = c.agents[a];
    const uint32_t pc = Pc(a);
    model::ClusterBarrier& cb = e.clusters_[info.cluster];
    Touch(ClusterObj(info.cluster), Access::kWait);
    const bool resumed = s.wait != WaitKind::kNone;
    if (!resumed) {
      Emit(EventKind::kClusterWaitBegin, a, info.cta, 0, 0, 0, 0, pc).phase =
          static_cast<uint8_t>(cb.phase() & 1);
    }
    model::ClusterWait r = cb.Wait(ClusterParticipant(a));
    if (r.violation) {
      Violate(*r.violation, a, pc, info.cta, 0, 0, false);
      return;
    }
    if (!r.complete) {
      Block(a, WaitKind::kClusterBarrier, info.cluster, cb.phase());
      return;
    }
    s.wait = WaitKind::kNone;
    s.cluster_arrived = 0;
    Emit(EventKind::kClusterWaitEnd, a, info.cta, 0, 0, 0, 0, pc).phase =
        static_cast<uint8_t>(cb.phase() & 1);
    Advance(a);
  }
  void Do(uint32_t a, const Instr& in, const ir::EvalEnv& env, const ir::NamedBarrier& op) {
    AgentState& s = e.agents_[a];
    const AgentInfo& info = c.agents[a];
    const uint32_t pc = Pc(a);
    model::NamedBarriers& nb = e.named_[info.cta_global];
    Touch(NamedObj(info.cta_global));
    if (s.wait != WaitKind::kNone) {  // resumed bar.sync
      if (!nb.Passed(s.wait_slot, s.wait_arg)) {
        Block(a, WaitKind::kNamedBarrier, s.wait_slot, s.wait_arg);
        return;
      }
      Emit(EventKind::kNamedBarrierSyncEnd, a, info.cta, s.wait_slot, 0, 0, 0, pc);
      s.wait = WaitKind::kNone;
      Advance(a);
      return;
    }
    int64_t id = 0, threads = 0;
    if (!Ev(op.id, env, &id) || !Ev(op.threads, env, &threads)) return;
    if (id < 0 || id > 0xffff || threads < 0 || threads > 0xffffff) {
      ErrorAt("engine.named-barrier", "bar id " + std::to_string(id) + " or thread count " +
                                          std::to_string(threads) + " is not representable",
              in.where);
      return;
    }
    // The model counts arrivals per warp: an agent of T threads arrives as ceil(T / 32) warps.
    model::NamedBarrierArrival r;
    for (uint32_t left = info.threads; left > 0;) {
      const uint32_t warp = left < model::kWarpSize ? left : model::kWarpSize;
      r = nb.Arrive(static_cast<uint32_t>(id), static_cast<uint32_t>(threads), warp);
      if (r.violation) {
        Violate(*r.violation, a, pc, info.cta, static_cast<uint32_t>(id), 0, false);
        return;
      }
      left -= warp;
    }
    Emit(op.sync ? EventKind::kNamedBarrierSyncBegin : EventKind::kNamedBarrierArrive, a, info.cta,
         static_cast<uint32_t>(id), 0, threads, nb.arrived(static_cast<uint32_t>(id)), pc);
    if (r.completed) WakeNamed(info.cta_global, 1u << id);
    if (op.sync) {
      if (!nb.Passed(static_cast<uint32_t>(id), r.generation)) {
        Block(a, WaitKind::kNamedBarrier, static_cast<uint32_t>(id), r.generation);
        return;
      }
      Emit(EventKind::kNamedBarrierSyncEnd, a, info.cta, static_cast<uint32_t>(id), 0, 0, 0, pc);
    }
    Advance(a);
  }
  void Do(uint32_t a, const Instr& in, const ir::EvalEnv& env, const ir::BufferAccess& op) {
    BufAddr buf;
    if (!ResolveBuf(a, op.buf, env, in.where, &buf)) return;
    const uint32_t pc = Pc(a);
    if (c.tracks_data && op.write) {
      // What the slot holds now (see Code::tracks_data): the GPU's `write` data depends only on
      // the agent's index in its CTA and the byte offset, so a partial write keeps a slot that
      // agent wrote whole and makes any other slot unnamed. Store source reads depend on it.
      for (uint32_t x = 0; x < c.agents.size(); ++x) Touch(GroupsObj(x));
      uint16_t& tag = e.smem_data_[static_cast<size_t>(c.agents[a].cta_global) * c.buffer_slots +
                                   c.buffer_slot_base[op.buf.buffer] + buf.slot];
      const bool whole = buf.bytes == c.buffers[op.buf.buffer].bytes;
      tag = whole || tag == WriterTag(a) ? WriterTag(a) : kDataOther;
    }
    Emit(op.write ? EventKind::kWrite : EventKind::kUse, a, c.agents[a].cta, op.buf.buffer,
         buf.slot, buf.bytes, buf.address - c.buffers[op.buf.buffer].base -
                                  buf.slot * c.buffers[op.buf.buffer].bytes,
         pc);
    Advance(a);
  }
  void Do(uint32_t a, const Instr& in, const ir::EvalEnv&, const ir::Exit&) {
    DoExit(a, Pc(a), in.where);
  }
  // mbarrier.pending_count (PTX ISA, mbarrier.pending_count): the count the token recorded, from
  // the model (M1013 unless the token came from a .noComplete arrive). Reads only the agent's
  // own variable: no shared object is touched.
  void Do(uint32_t a, const Instr&, const ir::EvalEnv&, const ir::MbarrierPendingCount& op) {
    const uint32_t pc = Pc(a);
    int64_t* vars = e.vars_.data() + c.var_offset[a];
    const model::MbarrierPendingCountResult r =
        model::MbarrierPendingCount(DecodeToken(vars[op.token_var]));
    const uint32_t cta = c.agents[a].cta;
    if (r.violation) {
      // The token names no barrier: the violation event carries none (object/index 0).
      Violate(*r.violation, a, pc, cta, 0, 0, false);
      return;
    }
    Emit(EventKind::kPendingCount, a, cta, 0, 0, r.count, 0, pc);
    vars[op.result_var] = r.count;
    Advance(a);
  }
  // `readback` (ir::GlobalReadback): what a generic-proxy read of the bulk.store destination of
  // a buffer slot sees. PTX ISA (Completion mechanisms for asynchronous copy operations): reading
  // the destination before the copy completes is undefined, so a read while some bulk.store of
  // the slot has not finished its global write is A1103; otherwise the bytes are those of the
  // last store whose write completed (its source as read, sim/model: the `write` data of the
  // agent that last wrote the whole slot), or the initial contents.
  void Do(uint32_t a, const Instr& in, const ir::EvalEnv& env, const ir::GlobalReadback& op) {
    BufAddr buf;
    if (!ResolveBuf(a, op.buf, env, in.where, &buf)) return;
    const Code::Buffer& decl = c.buffers[op.buf.buffer];
    if (buf.bytes != decl.bytes) {
      ErrorAt("engine.readback-region",
              "`readback` observes whole buffer slots; " + std::to_string(buf.bytes) + " of the " +
                  std::to_string(decl.bytes) + " bytes of " + p.buffers[op.buf.buffer].name +
                  " are named",
              in.where);
      return;
    }
    // The global image is shared by every agent's stores: depend on every agent's group state
    // (the store steps touch their issuer's).
    for (uint32_t x = 0; x < c.agents.size(); ++x) Touch(GroupsObj(x));
    const uint32_t pc = Pc(a);
    const uint32_t cta = c.agents[a].cta;
    int64_t writing = 0;
    for (const InFlight& f : e.in_flight_) {
      if ((f.kind == InFlight::kStoreRead || f.kind == InFlight::kStoreWrite) &&
          f.object == op.buf.buffer && f.index == buf.slot && IsBulkStore(f)) {
        ++writing;
      }
    }
    if (writing > 0) {
      Violate(model::Violation{model::Code::kBulkDestinationReadEarly, writing, 0}, a, pc, cta,
              op.buf.buffer, buf.slot, false);
      return;
    }
    const uint16_t tag = e.global_data_[c.buffer_slot_base[op.buf.buffer] + buf.slot];
    if (tag == kDataOther) {
      ErrorAt("engine.readback-untracked",
              "the global bytes of " + p.buffers[op.buf.buffer].name + "[" +
                  std::to_string(buf.slot) +
                  "] come from a bulk.store whose source the model does not name (not a whole "
                  "slot last written by `write`)",
              in.where);
      return;
    }
    const int64_t cls = tag == kDataInitial ? 0 : tag == WriterTag(a) ? 1 : 3;
    Emit(EventKind::kGlobalReadback, a, cta, op.buf.buffer, buf.slot, cls, buf.bytes, pc);
    e.vars_[c.var_offset[a] + op.result_var] = cls;
    Advance(a);
  }
  uint16_t WriterTag(uint32_t a) const {
    return static_cast<uint16_t>(c.agents[a].index_in_cta + 1);
  }
  bool IsBulkStore(const InFlight& f) const {
    const std::vector<Instr>& code = c.roles[c.agents[f.agent].role];
    return f.pc < code.size() && code[f.pc].kind == Instr::kOp &&
           std::holds_alternative<ir::BulkStore>(*code[f.pc].op);
  }

  uint32_t Pc(uint32_t a) const { return e.agents_[a].pc; }
  void Advance(uint32_t a) {
    if (e.outcome_ == Outcome::kRunning) e.agents_[a].pc++;
  }

  // --- async completion ---
  void Deliver(uint32_t i) {
    const InFlight f = e.in_flight_[i];
    Dirty(GroupsObj(f.agent));  // its in-flight operations change (its status: MakeReady)
    e.in_flight_[i] = e.in_flight_.back();
    e.in_flight_.pop_back();
    BarAddr b{f.target_cta, f.index, f.slot};
    switch (f.kind) {
      case InFlight::kTmaDeliver:
      case InFlight::kBulkDeliver:
      case InFlight::kStAsync:
        CompleteTx(f.agent, b, f.object, f.bytes, f.pc,
                   f.kind == InFlight::kTmaDeliver ? EventKind::kTmaDeliver
                   : f.kind == InFlight::kBulkDeliver ? EventKind::kBulkComplete
                                                      : EventKind::kCompleteTx,
                   true, f.flags, f.kind == InFlight::kStAsync ? kNoDstSlot : f.id);
        return;
      case InFlight::kCpAsync: {
        Touch(GroupsObj(f.agent));
        Cp(f.agent).Complete(f.id);
        Emit(EventKind::kCpAsyncComplete, f.agent, f.target_cta, f.object, f.index, f.bytes, 0,
             f.pc, true);
        ReleaseDeferred(f.agent);
        RecheckGroups(f.agent);
        return;
      }
      case InFlight::kCpAsyncArrive: {
        Touch(f.slot);
        model::MbarrierState& st = e.barriers_[f.slot];
        model::MbarrierArriveResult r = model::MbarrierAsyncArriveLand(st);
        TraceEvent& ev = Emit(EventKind::kArrive, f.agent, f.target_cta, f.object, f.index, 1,
                              st.pending_count, f.pc, true);
        ev.phase = static_cast<uint8_t>(st.parity());
        if (!Check(r, f.agent, f.pc, b, f.object, true)) return;
        if (r.phase_completed) PhaseCompleted(f.agent, f.slot, f.object, f.index, f.target_cta,
                                              f.pc, true);
        return;
      }
      case InFlight::kStoreRead: {
        Touch(GroupsObj(f.agent));
        Bulk(f.agent).ReadDone(f.id);
        // The data the write will carry (InFlight::slot of a kStoreWrite): the source slot's
        // contents as read now. 0 when data is not tracked, so other programs hash as before.
        uint32_t data = 0;
        if (c.tracks_data && IsBulkStore(f)) {
          const bool whole = f.bytes == c.buffers[f.object].bytes;
          data = whole ? e.smem_data_[static_cast<size_t>(c.agents[f.agent].cta_global) *
                                          c.buffer_slots +
                                      c.buffer_slot_base[f.object] + f.index]
                       : kDataOther;
        }
        Emit(EventKind::kTmaStoreRead, f.agent, f.target_cta, f.object, f.index, f.bytes, 0, f.pc,
             true);
        InFlight w = f;
        w.kind = InFlight::kStoreWrite;
        w.slot = data;
        e.in_flight_.push_back(w);
        RecheckGroups(f.agent);
        return;
      }
      case InFlight::kStoreWrite: {
        Touch(GroupsObj(f.agent));
        Bulk(f.agent).WriteDone(f.id);
        if (c.tracks_data && IsBulkStore(f)) {
          e.global_data_[c.buffer_slot_base[f.object] + f.index] = static_cast<uint16_t>(f.slot);
        }
        Emit(EventKind::kTmaStoreWrite, f.agent, f.target_cta, f.object, f.index, f.bytes, 0,
             f.pc, true);
        RecheckGroups(f.agent);
        return;
      }
    }
  }
  // Moves cp.async.mbarrier.arrive of `agent` whose earlier cp.async have all completed into
  // the in-flight list.
  void ReleaseDeferred(uint32_t agent) {
    for (size_t i = 0; i < e.deferred_.size();) {
      const InFlight& d = e.deferred_[i];
      if (d.agent == agent && Cp(agent).AllCompleteBefore(d.id)) {
        e.in_flight_.push_back(d);
        e.deferred_[i] = e.deferred_.back();
        e.deferred_.pop_back();
      } else {
        ++i;
      }
    }
  }

  // --- future footprint (explorer) ---
  // Runs agent a's code from its current pc on a scratch copy of its variables, as if every wait
  // passed, and adds every object its remaining operations (and the async operations they
  // issue) touch. Exact when the agent's control flow and operands do not depend on what the
  // barriers answer, which the caller ensures (roles with test_wait results or state tokens are
  // not asked). Returns false (caller falls back to the static footprint) on an expression
  // fault or a runaway loop; the engine's state is unchanged either way.
  bool SoloFuture(uint32_t a, Footprint* fp, bool stop_at_cluster_wait, bool* truncated,
                  std::vector<UpdateTally>* tally, bool one_op = false,
                  uint32_t* blocks_on = nullptr) {
    const AgentInfo& info = c.agents[a];
    const std::vector<Instr>& code = c.roles[info.role];
    const ir::EvalEnv env0 = Env(a);
    int64_t* vars = e.vars_.data() + c.var_offset[a];
    const uint32_t nv = env0.num_vars;
    // The variables are restored at the end (a small buffer on the stack avoids an allocation
    // on the explorer's hot path).
    int64_t saved_small[32];
    std::vector<int64_t> saved_big;
    int64_t* saved = saved_small;
    if (nv > 32) {
      saved_big.assign(vars, vars + nv);
      saved = saved_big.data();
    } else {
      std::copy(vars, vars + nv, saved_small);
    }
    const Outcome saved_outcome = e.outcome_;
    uint32_t pc = e.agents_[a].pc;
    bool ok = true;
    // `t` (arrivals, expect, complete, breaks) is tallied for every destination slot; a wait
    // (kOther, not a tally) reads the barrier without changing it.
    auto bar_slots = [&](const ir::BarrierRef& ref, bool any_cta, int64_t mask,
                         Access kind = Access::kOther, const UpdateTally* t = nullptr) {
      BarAddr b;
      if (!ResolveBar(a, ref, env0, nullptr, &b)) return false;
      auto add = [&](uint32_t slot) {
        fp->Add(slot, kind);
        if (tally != nullptr && t != nullptr) {
          UpdateTally u = *t;
          u.slot = slot;
          tally->push_back(u);
        }
      };
      if (mask >= 0) {
        const std::vector<uint32_t>* dests = Destinations(mask, nullptr);
        if (dests == nullptr) return false;
        for (uint32_t d : *dests) add(SlotOf(info.cluster, d, ref.barrier, b.index));
      } else if (any_cta) {
        for (uint32_t d = 0; d < c.cluster_size; ++d) add(SlotOf(info.cluster, d, ref.barrier, b.index));
      } else {
        add(b.slot);
      }
      return true;
    };
    UpdateTally breaks;
    breaks.breaks = true;
    *truncated = false;
    for (uint32_t guard = 0; ok; ++guard) {
      if (guard > (1u << 16) || fp->overflow) {
        ok = false;
        break;
      }
      const Instr& in = code[pc];
      int64_t v = 0;
      if (in.kind == Instr::kEnd) break;
      switch (in.kind) {
        case Instr::kLet:
        case Instr::kForInit:
          if (!(ok = Ev(in.e1, env0, &v))) break;
          vars[in.var] = v;
          ++pc;
          continue;
        case Instr::kJump:
          pc = in.target;
          continue;
        case Instr::kJumpIfFalse:
          if (!(ok = Ev(in.e1, env0, &v))) break;
          pc = v != 0 ? pc + 1 : in.target;
          continue;
        case Instr::kForTest:
          if (!(ok = Ev(in.e1, env0, &v))) break;
          pc = vars[in.var] < v ? pc + 1 : in.target;
          continue;
        case Instr::kForStep:
          if (!(ok = EvOr(in.e1, env0, 1, &v)) || v <= 0 ||
              __builtin_add_overflow(vars[in.var], v, &vars[in.var])) {
            ok = false;
            break;
          }
          pc = in.target;
          continue;
        default:
          break;
      }
      if (!ok) break;
      const ir::Op& op = *in.op;
      int64_t mask = -1;
      if (std::holds_alternative<ir::Exit>(op)) break;
      if (one_op && (std::holds_alternative<ir::TmaLoad>(op) ||
                     std::holds_alternative<ir::BulkLoad>(op) ||
                     std::holds_alternative<ir::StAsync>(op))) {
        // Issuing a copy touches no shared object (its deliveries are separate steps).
        *truncated = true;
        break;
      }
      if (const auto* o = std::get_if<ir::MbarrierInit>(&op)) {
        ok = bar_slots(o->bar, false, -1, Access::kOther, &breaks);
      } else if (const auto* o = std::get_if<ir::MbarrierInval>(&op)) {
        ok = bar_slots(o->bar, false, -1, Access::kOther, &breaks);
      } else if (const auto* o = std::get_if<ir::MbarrierArrive>(&op)) {
        int64_t count = 1, tx = 0;
        ok = EvOr(o->mask, env0, -1, &mask) && EvOr(o->count, env0, 1, &count) &&
             EvOr(o->expect_tx, env0, 0, &tx);
        const bool additive = o->expect_tx != ir::kNoExpr ||
                              o->kind == ir::MbarrierArrive::Kind::kArrive;
        UpdateTally t;
        t.arrivals = count;
        t.expect = tx;
        t.breaks = !additive;
        ok = ok && bar_slots(o->bar, false, mask, additive ? Access::kArrive : Access::kOther, &t);
      } else if (const auto* o = std::get_if<ir::MbarrierExpectTx>(&op)) {
        ok = bar_slots(o->bar, false, -1, Access::kOther, &breaks);
      } else if (const auto* o = std::get_if<ir::MbarrierCompleteTx>(&op)) {
        UpdateTally t;
        ok = Ev(o->bytes, env0, &t.complete);
        // Zero bytes change nothing, so the phase never needs them: not an update that a
        // holder could be said to hold (the explorer's one-holder and held-in-set rules).
        t.breaks = ok && t.complete == 0;
        ok = ok && bar_slots(o->bar, false, -1, Access::kCompleteTx, &t);
      } else if (const auto* o = std::get_if<ir::MbarrierWait>(&op)) {
        ok = bar_slots(o->bar, false, -1, Access::kWait);
        if (ok && one_op && blocks_on != nullptr && !o->test_only) *blocks_on = WaitBlocksOn(a, *o, env0);
        if (ok && tally != nullptr && !o->test_only && o->token_var == 0xffffffffu &&
            o->parity != ir::kNoExpr) {
          // A gate (UpdateTally::gate). A parity that does not evaluate here is no gate (the
          // wait faults when the agent gets there; the look-ahead itself stays exact).
          ir::EvalFault fault;
          const int64_t par = ir::EvalFast(p, o->parity, env0, &fault);
          BarAddr b;
          if (fault.ok() && (par == 0 || par == 1) && ResolveBar(a, o->bar, env0, nullptr, &b)) {
            UpdateTally g;
            g.slot = b.slot;
            g.gate = static_cast<int8_t>(par);
            tally->push_back(g);
          }
        }
      }
      else if (const auto* o = std::get_if<ir::TmaLoad>(&op)) {
        UpdateTally t;
        t.complete = c.maps[o->tensor_map].box_bytes;
        ok = EvOr(o->multicast_mask, env0, -1, &mask) &&
             bar_slots(o->bar, false, mask, Access::kCompleteTx, &t);
      } else if (const auto* o = std::get_if<ir::BulkLoad>(&op)) {
        ok = EvOr(o->multicast_mask, env0, -1, &mask) &&
             bar_slots(o->bar, false, mask, Access::kCompleteTx, &breaks);
      } else if (const auto* o = std::get_if<ir::StAsync>(&op)) {
        ok = bar_slots(o->bar, true, -1, Access::kCompleteTx, &breaks);
      } else if (const auto* o = std::get_if<ir::CpAsyncMbarrierArrive>(&op)) {
        ok = bar_slots(o->bar, false, -1, Access::kOther, &breaks);
      }
      else if (std::holds_alternative<ir::ClusterArrive>(op)) {
        fp->Add(ClusterObj(info.cluster), Access::kClusterArrive);
      } else if (std::holds_alternative<ir::ClusterWait>(op)) {
        fp->Add(ClusterObj(info.cluster), Access::kWait);
        if (one_op && blocks_on != nullptr) {
          // Do(ClusterWait) blocks, changing nothing else, when the wait is not complete and
          // not a violation: asked of a copy (Wait consumes the arrival when it passes).
          model::ClusterBarrier cb = e.clusters_[info.cluster];
          const model::ClusterWait r = cb.Wait(ClusterParticipant(a));
          if (!r.complete && !r.violation) *blocks_on = ClusterObj(info.cluster);
        }
        if (stop_at_cluster_wait) {
          *truncated = true;
          break;
        }
      } else if (std::holds_alternative<ir::NamedBarrier>(op)) {
        fp->Add(NamedObj(info.cta_global));
      } else if (const auto* o = std::get_if<ir::BufferAccess>(&op);
                 std::holds_alternative<ir::GlobalReadback>(op) ||
                 (c.tracks_data && o != nullptr && o->write)) {
        // `readback` and (with data tracking) `write`: every agent's group state, as the steps
        // themselves touch (Do(GlobalReadback), Do(BufferAccess)).
        for (uint32_t x = 0; x < c.agents.size(); ++x) fp->Add(GroupsObj(x));
      }
      // Everything else touches only the agent's own groups (added by the caller) or nothing
      // shared; the exit's objects are added by the caller.
      if (one_op) {
        *truncated = true;
        break;
      }
      ++pc;
    }
    std::copy(saved, saved + nv, vars);
    if (e.outcome_ != saved_outcome) {  // a fault while evaluating: undo it
      e.outcome_ = saved_outcome;
      e.result_.error = Status();
      ok = false;
    }
    return ok;
  }

  // The slot agent a's try_wait loop `op` would block on now (Do(MbarrierWait): the model's
  // try_wait answers false without a violation), else kNoSlot. A failing try_wait changes no
  // barrier (model WaitOnPhase), so it is tested on a copy of the barrier's state.
  uint32_t WaitBlocksOn(uint32_t a, const ir::MbarrierWait& op, const ir::EvalEnv& env) {
    BarAddr b;
    if (!ResolveBar(a, op.bar, env, nullptr, &b) || b.cta != c.agents[a].cta) return kNoSlot;
    model::MbarrierState st = e.barriers_[b.slot];
    model::MbarrierWaitResult r;
    if (op.token_var != 0xffffffffu) {
      model::MbarrierToken token;
      token.phase = static_cast<uint32_t>(e.vars_[c.var_offset[a] + op.token_var]);
      r = model::MbarrierTryWait(st, token, false);
    } else {
      int64_t par = 0;
      if (!Ev(op.parity, env, &par) || (par != 0 && par != 1)) return kNoSlot;
      r = model::MbarrierTryWaitParity(st, static_cast<uint32_t>(par), false);
    }
    return r.complete || r.violation ? kNoSlot : b.slot;
  }

  // --- end of run ---
  // Inlined into every step: the common case (something can still run) is two compares.
  __attribute__((always_inline)) void CheckEnd() {
    if (e.outcome_ != Outcome::kRunning) return;
    if (!e.ready_.empty() || !e.in_flight_.empty()) return;
    End();
  }
  // Nothing can run: completed or deadlocked.
  void End() {
    PARITY_CHECK(e.deferred_.empty(), "a deferred cp.async arrive with no cp.async in flight");
    if (e.exited_count_ == c.agents.size()) {
      e.outcome_ = Outcome::kCompleted;
      return;
    }
    e.outcome_ = Outcome::kDeadlock;
    DeadlockInfo& d = e.result_.deadlock;
    for (uint32_t a = 0; a < c.agents.size(); ++a) {
      const AgentState& s = e.agents_[a];
      if (s.status == kExited) {
        d.exited.push_back(a);
        continue;
      }
      const AgentInfo& info = c.agents[a];
      BlockedAgent bl;
      bl.agent = a;
      bl.wait = s.wait;
      const auto& instrs = c.roles[info.role];
      if (instrs[s.pc].where) bl.where = *instrs[s.pc].where;
      if (bl.where.file.empty()) bl.where.file = p.file;
      bl.cta = info.cta;
      switch (s.wait) {
        case WaitKind::kMbarrierParity:
        case WaitKind::kMbarrierToken: {
          const uint32_t within = s.wait_slot % c.barriers_per_cta;
          for (uint32_t k = 0; k < c.barrier_base.size(); ++k) {
            if (within >= c.barrier_base[k] && within < c.barrier_base[k] + c.barrier_size[k]) {
              bl.barrier = k;
              bl.barrier_index = within - c.barrier_base[k];
            }
          }
          if (s.wait == WaitKind::kMbarrierParity) bl.parity = s.wait_arg;
          else bl.token_phase = s.wait_arg;
          bl.state = e.barriers_[s.wait_slot];
          break;
        }
        case WaitKind::kClusterBarrier:
          bl.arrived = e.clusters_[info.cluster].arrived();
          bl.expected = e.clusters_[info.cluster].expected();
          break;
        case WaitKind::kNamedBarrier: {
          const model::NamedBarriers& nb = e.named_[info.cta_global];
          bl.barrier = s.wait_slot;
          bl.arrived = nb.arrived(s.wait_slot);
          bl.expected = nb.count(s.wait_slot);
          break;
        }
        case WaitKind::kCpAsyncGroups:
        case WaitKind::kBulkGroups:
          bl.pending = s.wait_slot;
          break;
        case WaitKind::kNone:
          break;
      }
      d.blocked.push_back(bl);
    }
  }
};

// ---------------------------------------------------------------------------------------------
// Public driving API.

void Engine::Choices(std::vector<Choice>* out) const {
  out->clear();
  if (outcome_ != Outcome::kRunning) return;
  const size_t nr = ready_.size();
  const uint32_t nf = static_cast<uint32_t>(in_flight_.size());
  out->resize(nr + nf);
  Choice* o = out->data();
  // The ready agents by index: through a bit set when there are at most 64 agents.
  if (agents_.size() <= 64) {
    uint64_t m = 0;
    for (uint32_t a : ready_) m |= uint64_t{1} << a;
    for (; m != 0; m &= m - 1) {
      *o++ = {Choice::Kind::kAgent, static_cast<uint32_t>(__builtin_ctzll(m))};
    }
    assert(o == out->data() + nr);  // an agent is in the ready list once
  } else {
    for (uint32_t a : ready_) *o++ = {Choice::Kind::kAgent, a};
    std::sort(out->data(), o, [](const Choice& x, const Choice& y) { return x.index < y.index; });
  }
  for (uint32_t i = 0; i < nf; ++i) *o++ = {Choice::Kind::kAsync, i};
}

Outcome Engine::Step(Choice choice) { return Step(choice, nullptr); }

Outcome Engine::Step(Choice choice, Footprint* touched) {
  if (touched != nullptr) touched->Clear();
  step_scanned_ = false;
  if (outcome_ != Outcome::kRunning) return outcome_;
  Exec x(*this);
  x.fp_ = touched;
  x.mark_ = fpc_.valid;
  x.track_ = true;
  if (choice.kind == Choice::Kind::kAgent) {
    PARITY_CHECK(choice.index < agents_.size() && agents_[choice.index].status == kReady,
                 "Step: agent is not runnable");
    x.StepAgent(choice.index);
  } else {
    PARITY_CHECK(choice.index < in_flight_.size(), "Step: no such in-flight operation");
    x.Deliver(choice.index);
  }
  ++steps_;
  if ((steps_ >= options_.max_steps || events_ >= options_.max_events) &&
      outcome_ == Outcome::kRunning) {
    outcome_ = Outcome::kStepLimit;
  }
  x.CheckEnd();
  result_.outcome = outcome_;
  result_.steps = steps_;
  result_.events = events_;
  return outcome_;
}

RunResult Engine::Run() {
  fpc_.valid = false;  // steps below are not marked (nor are agents' gens renewed)
  Exec x(*this);
  while (outcome_ == Outcome::kRunning) {
    const bool have_async = !in_flight_.empty();
    const bool have_agent = !ready_.empty();
    switch (options_.policy) {
      case Policy::kEager:
        if (have_async) {
          x.Deliver(0);
        } else {
          x.StepAgent(ready_.back());
        }
        break;
      case Policy::kLazy:
        if (have_agent) {
          x.StepAgent(ready_.back());
        } else {
          x.Deliver(static_cast<uint32_t>(in_flight_.size() - 1));
        }
        break;
      case Policy::kRoundRobin: {
        if (have_async && (rr_async_turn_ || !have_agent)) {
          x.Deliver(0);
          rr_async_turn_ = false;
          break;
        }
        const uint32_t n = static_cast<uint32_t>(agents_.size());
        uint32_t a = rr_cursor_ % n;
        while (agents_[a].status != kReady) a = (a + 1) % n;
        rr_cursor_ = a + 1;
        rr_async_turn_ = true;
        x.StepAgent(a);
        break;
      }
      case Policy::kRandom: {
        const uint64_t total = ready_.size() + in_flight_.size();
        // Lemire's multiply-shift range reduction (no 64-bit division on the hot path).
        const uint64_t pick = static_cast<uint64_t>(
            (static_cast<unsigned __int128>(SplitMix(rng_)) * total) >> 64);
        if (pick < ready_.size()) {
          x.StepAgent(ready_[pick]);
        } else {
          x.Deliver(static_cast<uint32_t>(pick - ready_.size()));
        }
        break;
      }
    }
    ++steps_;
    if ((steps_ >= options_.max_steps || events_ >= options_.max_events) &&
        outcome_ == Outcome::kRunning) {
      outcome_ = Outcome::kStepLimit;
    }
    x.CheckEnd();
  }
  // The steps above did not renew AgentState::gen (the hot path of a run): renew them now.
  for (AgentState& s : agents_) s.gen = NextAgentGen();
  result_.outcome = outcome_;
  result_.steps = steps_;
  result_.events = events_;
  return result_;
}

const char* PolicyName(Policy p) {
  switch (p) {
    case Policy::kEager: return "eager";
    case Policy::kLazy: return "lazy";
    case Policy::kRoundRobin: return "round-robin";
    case Policy::kRandom: return "random";
  }
  return "?";
}

const char* OutcomeName(Outcome o) {
  switch (o) {
    case Outcome::kRunning: return "running";
    case Outcome::kCompleted: return "completed";
    case Outcome::kDeadlock: return "deadlock";
    case Outcome::kViolation: return "violation";
    case Outcome::kError: return "error";
    case Outcome::kStepLimit: return "step-limit";
  }
  return "?";
}

const char* WaitKindName(WaitKind k) {
  switch (k) {
    case WaitKind::kNone: return "none";
    case WaitKind::kMbarrierParity: return "mbarrier.parity";
    case WaitKind::kMbarrierToken: return "mbarrier.token";
    case WaitKind::kClusterBarrier: return "barrier.cluster";
    case WaitKind::kNamedBarrier: return "bar.sync";
    case WaitKind::kCpAsyncGroups: return "cp.async.wait_group";
    case WaitKind::kBulkGroups: return "cp.async.bulk.wait_group";
  }
  return "?";
}

uint32_t Engine::ClusterObject(uint32_t cluster) const {
  return static_cast<uint32_t>(barriers_.size()) + cluster;
}
uint32_t Engine::NamedObject(uint32_t cta_global) const {
  return static_cast<uint32_t>(barriers_.size()) + code_->clusters + cta_global;
}
uint32_t Engine::cta_first_agent(uint32_t cta_global) const {
  return code_->cta_first_agent[cta_global];
}

bool Engine::AgentFuture(uint32_t agent, Footprint* out) {
  bool truncated = false;
  return AgentFuture(agent, out, false, &truncated);
}

bool Engine::AgentFuture(uint32_t agent, Footprint* out, bool stop_at_cluster_wait,
                         bool* truncated, std::vector<UpdateTally>* tally) {
  if (tally != nullptr) tally->clear();
  out->Clear();
  *truncated = false;
  if (agents_[agent].status == kExited) return true;
  if (!code_->role_solo_ok[code_->agents[agent].role]) return false;
  out->Add(GroupsObject(agent));
  Exec x(*this);
  if (!x.SoloFuture(agent, out, stop_at_cluster_wait, truncated, tally)) return false;
  if (!*truncated) {
    // Every agent ends by exiting (or the run ends): DoExit's accesses.
    out->Add(ClusterObject(code_->agents[agent].cluster), Access::kExit);
    out->Add(NamedObject(code_->agents[agent].cta_global), Access::kExit);
  }
  return !out->overflow;
}

bool Engine::PeekFootprint(uint32_t agent, Footprint* out, uint32_t* blocks_on) {
  out->Clear();
  if (blocks_on != nullptr) *blocks_on = kNoSlot;
  if (agents_[agent].status == kExited) return false;
  out->Add(GroupsObject(agent));
  bool stopped = false;
  Exec x(*this);
  if (!x.SoloFuture(agent, out, false, &stopped, nullptr, /*one_op=*/true, blocks_on)) {
    if (blocks_on != nullptr) *blocks_on = kNoSlot;
    return false;
  }
  if (!stopped) {  // the next step is the exit
    out->Add(ClusterObject(code_->agents[agent].cluster), Access::kExit);
    out->Add(NamedObject(code_->agents[agent].cta_global), Access::kExit);
  }
  return !out->overflow;
}

bool Engine::ClusterWaitPasses(uint32_t agent) const {
  const uint32_t cluster = code_->agents[agent].cluster;
  return clusters_[cluster].ArrivedInCompletedPhase(agent - code_->cluster_first_agent[cluster]);
}


std::vector<uint32_t> Engine::AgentMayTouch(uint32_t agent) const {
  const Code& c = *code_;
  const AgentInfo& info = c.agents[agent];
  std::vector<uint32_t> out;
  // Every slot of barrier array `decl` in this CTA, or in every CTA of the cluster.
  auto bar = [&](const ir::BarrierRef& ref, bool any_cta) {
    any_cta = any_cta || ref.cta != ir::kNoExpr;
    for (uint32_t r = 0; r < c.cluster_size; ++r) {
      if (!any_cta && r != info.cta) continue;
      const uint32_t cta_global = info.cluster * c.cluster_size + r;
      for (uint32_t i = 0; i < c.barrier_size[ref.barrier]; ++i) {
        out.push_back(cta_global * c.barriers_per_cta + c.barrier_base[ref.barrier] + i);
      }
    }
  };
  // Exit touches these three; every agent exits (or deadlocks, which ends the run).
  out.push_back(GroupsObject(agent));
  out.push_back(ClusterObject(info.cluster));
  out.push_back(NamedObject(info.cta_global));
  for (const Instr& in : c.roles[info.role]) {
    if (in.kind != Instr::kOp) continue;
    const ir::Op& op = *in.op;
    if (const auto* o = std::get_if<ir::MbarrierInit>(&op)) bar(o->bar, false);
    else if (const auto* o = std::get_if<ir::MbarrierInval>(&op)) bar(o->bar, false);
    else if (const auto* o = std::get_if<ir::MbarrierArrive>(&op)) bar(o->bar, o->mask != ir::kNoExpr);
    else if (const auto* o = std::get_if<ir::MbarrierExpectTx>(&op)) bar(o->bar, false);
    else if (const auto* o = std::get_if<ir::MbarrierCompleteTx>(&op)) bar(o->bar, false);
    else if (const auto* o = std::get_if<ir::MbarrierWait>(&op)) bar(o->bar, false);
    else if (const auto* o = std::get_if<ir::TmaLoad>(&op)) bar(o->bar, o->multicast_mask != ir::kNoExpr);
    else if (const auto* o = std::get_if<ir::BulkLoad>(&op)) bar(o->bar, o->multicast_mask != ir::kNoExpr);
    else if (const auto* o = std::get_if<ir::StAsync>(&op)) bar(o->bar, true);
    else if (const auto* o = std::get_if<ir::CpAsyncMbarrierArrive>(&op)) bar(o->bar, false);
    else if (const auto* o = std::get_if<ir::BufferAccess>(&op);
             std::holds_alternative<ir::GlobalReadback>(op) ||
             (c.tracks_data && o != nullptr && o->write)) {
      for (uint32_t x = 0; x < c.agents.size(); ++x) out.push_back(GroupsObject(x));
    }
    // Group ops, stores, cluster and named barriers: the three objects above.
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

}  // namespace parity::engine
