// The step semantics (Engine::Exec): one step of an agent or one completion of an in-flight
// operation, applied to the engine's state, with the wake-ups, violations and trace events it
// causes; and the look-ahead that runs an agent's code without changing the state
// (SoloFuture). The op families' handlers are in exec_sync.h (mbarriers, fences, cluster and
// named barriers), exec_copies.h (TMA, bulk, st.async and cp.async copies and their
// completions) and exec_future.h (the look-ahead). Included only by engine.cc: the handlers
// are inline, so that one translation unit compiles the whole step.
#ifndef PARITY_SIM_ENGINE_EXEC_H_
#define PARITY_SIM_ENGINE_EXEC_H_

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
#include "sim/engine/engine.h"
#include "sim/ir/arith.h"
#include "sim/model/tensor_map.h"
#include "sim/model/tma.h"

namespace parity::engine {

struct Engine::Exec {
  // The state is read through `e`, which is const: every write of a part of the state (the
  // component table, components.h) goes through an accessor below, which marks what it touches
  // (the footprint for the partial-order reduction, the incremental fingerprint's marks, the
  // undo log, the agents' generations), so that no handler can change state without marking
  // it. The run's bookkeeping (outcome, result, trace, counters, ready list) is not state and
  // is written through run_.
  Engine& run_;
  const Engine& e;
  const Code& c;
  const ir::Program& p;

  explicit Exec(Engine& engine)
      : run_(engine), e(engine), c(*engine.code_), p(*engine.code_->program) {}

  // --- footprint (explorer only; null in Run) ---
  Footprint* fp_ = nullptr;
  // Marks what a step changes for the incremental fingerprint (Engine::FpCache): every object
  // it touches, and agents' private state at GroupsObj (set by Step while the cache is valid).
  bool mark_ = false;
  bool track_ = false;  // Step: renew AgentState::gen (Run renews every agent's at its end)

  // --- the state's accessors: each marks what it touches ---
  // mbarrier slot `slot`, accessed as `kind` (read or written).
  __attribute__((always_inline)) model::MbarrierState& Slot(uint32_t slot, Access kind) {
    Touch(slot, kind);
    return run_.barriers_[slot];
  }
  __attribute__((always_inline)) model::ClusterBarrier& Cluster(uint32_t cluster, Access kind) {
    Touch(ClusterObj(cluster), kind);
    return run_.clusters_[cluster];
  }
  model::NamedBarriers& Named(uint32_t cta_global, Access kind) {
    Touch(NamedObj(cta_global), kind);
    return run_.named_[cta_global];
  }
  // Agent a's async-group states, for the operations that only a role with Code::role_groups
  // executes (an async-group operation, or the completion of one it issued).
  __attribute__((always_inline)) model::CpAsyncState& Cp(uint32_t a) {
    Touch(GroupsObj(a));
    return run_.cp_[c.group_state[a]];
  }
  __attribute__((always_inline)) model::BulkAsyncState& Bulk(uint32_t a) {
    Touch(GroupsObj(a));
    return run_.bulk_[c.group_state[a]];
  }
  // The same, read by any agent (the initial states for a role without async groups).
  const model::CpAsyncState& CpRead(uint32_t a) {
    Touch(GroupsObj(a));
    return e.CpState(a);
  }
  const model::BulkAsyncState& BulkRead(uint32_t a) {
    Touch(GroupsObj(a));
    return e.BulkState(a);
  }
  // Agent a's private state and variables (its pc, status, wait, flags): a new generation and a
  // stale fingerprint component. The footprint does not list them (private to the agent).
  __attribute__((always_inline)) AgentState& Agent(uint32_t a) {
    DirtyAgent(a);
    return run_.agents_[a];
  }
  __attribute__((always_inline)) int64_t* Vars(uint32_t a) {
    DirtyAgent(a);
    return run_.vars_.data() + c.var_offset[a];
  }
  // In-flight and deferred operations belong to their issuer's component.
  void Issue(const InFlight& f) {
    Dirty(GroupsObj(f.agent));
    run_.in_flight_.push_back(f);
  }
  void Defer(const InFlight& f) {
    Dirty(GroupsObj(f.agent));
    run_.deferred_.push_back(f);
  }
  InFlight TakeInFlight(uint32_t i) {
    const InFlight f = e.in_flight_[i];
    Dirty(GroupsObj(f.agent));  // its in-flight operations change (its status: MakeReady)
    run_.in_flight_[i] = run_.in_flight_.back();
    run_.in_flight_.pop_back();
    return f;
  }
  InFlight TakeDeferred(size_t i) {
    const InFlight f = e.deferred_[i];
    Dirty(GroupsObj(f.agent));
    run_.deferred_[i] = run_.deferred_.back();
    run_.deferred_.pop_back();
    return f;
  }
  // `readback` data (code.h Code::tracks_data). A CTA's shared-memory content tag: the store
  // source reads of every agent read the tags, so a write depends on every agent's group state.
  uint16_t& SmemTag(uint32_t cta_global, uint32_t buffer, uint32_t slot) {
    TouchAllGroups();
    return run_.smem_data_[static_cast<size_t>(cta_global) * c.buffer_slots +
                           c.buffer_slot_base[buffer] + slot];
  }
  // The global image: written by agent a's store completions (guarded by a's group state) and
  // read whole, with every agent's stores, by a readback (which depends on every agent's).
  uint16_t& GlobalTag(uint32_t a, uint32_t buffer, uint32_t slot) {
    Touch(GroupsObj(a));
    return run_.global_data_[c.buffer_slot_base[buffer] + slot];
  }
  const Slice<uint16_t>& GlobalImage() {
    TouchAllGroups();
    return e.global_data_;
  }

  // The marking primitives (only the accessors above call them).
  __attribute__((always_inline)) void Touch(uint32_t object, Access kind = Access::kOther) {
    Dirty(object);
    if (fp_ != nullptr) [[unlikely]] fp_->Add(object, kind);
  }
  void TouchAllGroups() {
    for (uint32_t x = 0; x < c.agents.size(); ++x) Touch(GroupsObj(x));
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
  // component is stale. Once per step and agent (renewed_: the first agents renewed in this
  // step; past kRenewedMax an agent may be renewed twice, which only costs a number).
  static constexpr uint32_t kRenewedMax = 8;
  uint32_t renewed_[kRenewedMax];
  uint32_t n_renewed_ = 0;
  __attribute__((always_inline)) void DirtyAgent(uint32_t agent) {
    if (!track_) return;
    for (uint32_t i = 0; i < n_renewed_; ++i) {
      if (renewed_[i] == agent) return;
    }
    if (n_renewed_ < kRenewedMax) renewed_[n_renewed_++] = agent;
    run_.agents_[agent].gen = NextAgentGen();
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

  // --- trace ---
  // Not recording (exploration): only counted; a violation's event is kept in its
  // ViolationInfo, so it is filled in. Callers may write more fields: into the scratch.
  __attribute__((always_inline)) TraceEvent& Emit(EventKind kind, uint32_t agent,
                                                  uint32_t target_cta, uint32_t object,
                                                  uint32_t index, int64_t value, int64_t value2,
                                                  uint32_t pc, bool async = false) {
    if (!e.options_.record_trace && kind != EventKind::kViolation) [[likely]] {
      ++run_.events_;
      return scratch_;
    }
    return Record(kind, agent, target_cta, object, index, value, value2, pc, async);
  }
  TraceEvent& Record(EventKind kind, uint32_t agent, uint32_t target_cta, uint32_t object,
                     uint32_t index, int64_t value, int64_t value2, uint32_t pc, bool async) {
    const AgentInfo& info = c.agents[agent];
    // Fields are written in place (building the record on the stack and copying it costs a
    // store-forwarding stall per event).
    TraceEvent& ev = e.options_.record_trace ? run_.trace_.emplace_back() : scratch_;
    if (e.options_.record_trace) run_.trace_places_.emplace_back();
    ev.time = run_.events_++;
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
  // Where the bytes of the event just emitted are (Engine::trace_places).
  __attribute__((always_inline)) void Place(uint64_t slot, uint32_t offset,
                                            uint32_t agent) {
    if (e.options_.record_trace) [[unlikely]] {
      run_.trace_places_.back() = Engine::TracePlace{static_cast<uint32_t>(slot), offset, agent};
    }
  }

  // --- ending ---
  void Error(Status s) {
    if (e.outcome_ != Outcome::kRunning) return;
    run_.outcome_ = Outcome::kError;
    run_.result_.error = std::move(s);
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
    if (model::CodeSeverity(v.code) != model::Severity::kError) {
      run_.result_.warnings.push_back(info);
      return;
    }
    if (e.outcome_ != Outcome::kRunning) return;
    run_.outcome_ = Outcome::kViolation;
    run_.result_.violation = info;
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
  // The shared arithmetic (sim/ir/arith.h); false on a fault, which EvSlow re-evaluates to
  // report with its location.
  __attribute__((always_inline)) static bool FastBinary(ir::BinaryOp op, int64_t a, int64_t b,
                                                       int64_t* r) {
    return ir::ApplyBinary(op, a, b, r) == ir::EvalError::kNone;
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
  // The byte offset of a resolved buffer operand into its slot.
  uint32_t OffsetInSlot(uint32_t buffer, const BufAddr& x) const {
    return x.address - c.buffers[buffer].base - x.slot * c.buffers[buffer].bytes;
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
    if (e.agents_[a].status == kReady) return;
    AgentState& s = Agent(a);
    s.status = kReady;
    s.ready_pos = static_cast<uint32_t>(run_.ready_.size());
    run_.ready_.push_back(a);
  }
  // The ready list and ready_pos are bookkeeping, not state (AgentState::OtherFields).
  void RemoveReady(uint32_t a) {
    const uint32_t pos = e.agents_[a].ready_pos;
    const uint32_t last = run_.ready_.back();
    run_.ready_[pos] = last;
    run_.agents_[last].ready_pos = pos;
    run_.ready_.pop_back();
  }
  void Block(uint32_t a, WaitKind w, uint32_t slot, uint32_t arg) {
    AgentState& s = Agent(a);
    s.wait = w;
    s.wait_slot = slot;
    s.wait_arg = arg;
    if (s.status == kReady) RemoveReady(a);
    s.status = kBlocked;
  }
  // Wakes agents of the barrier's CTA blocked on that slot: they re-run their wait. Only the
  // owning CTA's agents can wait on a barrier (PTX: waits are on shared::cta barriers).
  void WakeBarrier(uint32_t slot) {
    run_.step_scanned_ = true;
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
    if (note_.has_value()) {  // M1009 comes with the completion it notes: after its event
      const model::Violation v = *note_;
      note_.reset();
      Violate(v, agent, pc, target, barrier, index, async);
    }
  }
  // A note (MbarrierResult::note) of the current operation, reported after its phase completion.
  std::optional<model::Violation> note_;

  // --- cluster barrier and named barriers (sim/model/sync_barriers.h) ---
  // Participant of the cluster barrier: the agent's index within its cluster (an agent's
  // threads arrive and wait together).
  uint32_t ClusterParticipant(uint32_t a) const {
    return a - c.cluster_first_agent[c.agents[a].cluster];
  }
  void WakeCluster(uint32_t cluster) {
    run_.step_scanned_ = true;
    for (uint32_t a = c.cluster_first_agent[cluster]; a < c.cluster_first_agent[cluster + 1];
         ++a) {
      if (e.agents_[a].status == kBlocked && e.agents_[a].wait == WaitKind::kClusterBarrier) {
        MakeReady(a);
      }
    }
  }
  void WakeNamed(uint32_t cta_global, uint32_t id_mask) {
    run_.step_scanned_ = true;
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
    const AgentState& s = e.agents_[a];
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
    AgentState& s = Agent(a);
    const AgentInfo& info = c.agents[a];
    const std::vector<Instr>& code = c.roles[info.role];
    const ir::EvalEnv env = Env(a);
    int64_t* vars = Vars(a);
    // Control flow until the next operation (bounded: a loop without operations is a bug).
    uint32_t steps = 0;
    int64_t detail = 0;
    for (;; ++s.pc, ++steps) {
      const Control r = WalkToOp(
          code.data(), &s.pc, vars, [&](ir::ExprId id, int64_t* v) { return Ev(id, env, v); },
          1u << 24, &steps, &detail);
      const Instr& in = code[s.pc];
      switch (r) {
        case Control::kAtOp:
          ExecOp(a, in, env);
          return;
        case Control::kAtAssert: {
          // Checked in the step of the agent's next operation: the state it reads is one that
          // step may start from, and the agent is runnable from its previous step until then,
          // so every state an assert as a step of its own could see is seen here too.
          AssertReader reader(this, info.cta_global);
          ir::EvalEnv with_state = env;
          with_state.state = &reader;
          ir::EvalFault fault;
          const int64_t v = ir::EvalFast(p, in.e1, with_state, &fault);
          if (!fault.ok()) {
            Error(ir::EvalFaultStatus(p, fault));
            return;
          }
          if (v == 0) {
            Violate(model::Violation{model::Code::kAssertionFailed, in.var, info.cta_global}, a,
                    s.pc, info.cta, 0, 0, false);
            return;
          }
          continue;  // on from the next instruction
        }
        case Control::kEnd:
          DoExit(a, s.pc, in.where);
          return;
        case Control::kNoProgress:
          ErrorAt("engine.no-progress", "more than 2^24 control steps without an operation",
                  in.where);
          return;
        case Control::kWhileBound:
          ErrorAt("engine.while-bound",
                  "the `while` condition still holds after " + std::to_string(vars[in.var]) +
                      " passes, its bound " + std::to_string(detail) +
                      ": the bound is the most passes the loop may make (raise it if the "
                      "kernel really loops more, else the loop's exit condition is wrong)",
                  in.where);
          return;
        case Control::kBadStep:
          ErrorAt("engine.for-step",
                  "for loop step " + std::to_string(detail) + " is not positive", in.where);
          return;
        case Control::kStepOverflow:
          ErrorAt("eval.overflow", "for loop variable overflows", in.where);
          return;
        case Control::kEvalFault:  // Ev reported it
        case Control::kStop:       // no stop pc given
          return;
      }
    }
  }

  // --- assertions (ir::Assertion; docs/language.md, Assertions) ---
  // The state reads of an assert, for CTA `cta_global`. Each read marks what it reads as an
  // access of kind kOther, so that the partial-order reduction orders the assert against every
  // step that changes it: a barrier slot's phase, pending count and tx-count change only in
  // steps that touch the slot; which copies into a buffer are in flight changes at an issue
  // (the issuer's groups object: IssueDeliveries and Cp mark it while Code::tracks_landed) and
  // at a landing (its barrier slot, a slot of the cluster, or, for cp.async, the issuer's
  // groups object).
  struct AssertReader final : ir::StateReader {
    AssertReader(Exec* exec, uint32_t cta) : x(exec), cta_global(cta) {}
    bool Read(ir::StateFn fn, uint32_t decl, int64_t index, int64_t* out) const override {
      return x->ReadState(fn, decl, index, cta_global, out);
    }
    Exec* x;
    uint32_t cta_global;
  };
  bool ReadState(ir::StateFn fn, uint32_t decl, int64_t index, uint32_t cta_global,
                 int64_t* out) {
    if (fn == ir::StateFn::kLanded) {
      const uint32_t first = (cta_global / c.cluster_size) * c.cluster_size * c.barriers_per_cta;
      for (uint32_t o = 0; o < c.cluster_size * c.barriers_per_cta; ++o) Touch(first + o);
      TouchAllGroups();
    } else if (decl < c.barrier_size.size() && index >= 0 && index < c.barrier_size[decl]) {
      Touch(cta_global * c.barriers_per_cta + c.barrier_base[decl] +
            static_cast<uint32_t>(index));
    }
    return e.ReadStateAt(fn, decl, index, cta_global, out);
  }
  // The end of a complete run: every `forall` property must hold (for every CTA).
  void CheckForall() {
    for (uint32_t id = 0; id < p.assertions.size(); ++id) {
      if (p.assertions[id].kind != ir::Assertion::Kind::kForall) continue;
      bool holds = true;
      uint32_t cta = 0;
      Status st = e.EvalProperty(id, &holds, &cta);
      if (!st.ok()) {
        run_.outcome_ = Outcome::kRunning;  // Error reports only while running
        Error(std::move(st));
        return;
      }
      if (holds) continue;
      // The finding of the first CTA it fails for, at the property's line; the agent is that
      // CTA's first (a property belongs to no agent; reports name the CTA through it).
      uint32_t agent = cta < c.num_ctas && c.cta_first_agent[cta] < c.cta_first_agent[cta + 1]
                           ? c.cta_first_agent[cta]
                           : 0;
      const model::Violation v{model::Code::kAssertionFailed, id, cta};
      TraceEvent& ev = Emit(EventKind::kViolation, agent, c.agents[agent].cta, 0, 0,
                            static_cast<int64_t>(v.code), v.value, 0);
      ViolationInfo info;
      info.violation = v;
      info.agent = agent;
      info.where = p.assertions[id].where;
      if (info.where.file.empty()) info.where.file = p.file;
      info.event = ev;
      run_.outcome_ = Outcome::kViolation;
      run_.result_.violation = info;
      return;
    }
  }

  // Whether every agent of CTA `cta_global` exited (a CTA without agents never ran any).
  bool CtaExited(uint32_t cta_global) const {
    bool any = false;
    for (uint32_t x = 0; x < c.agents.size(); ++x) {
      if (c.agents[x].cta_global != cta_global) continue;
      any = true;
      if (e.agents_[x].status != kExited) return false;
    }
    return any;
  }

  void DoExit(uint32_t a, uint32_t pc, const SourceLocation* where) {
    AgentState& s = Agent(a);
    const AgentInfo& info = c.agents[a];
    const model::CpAsyncState& cp = CpRead(a);
    model::ClusterBarrier& cluster = Cluster(info.cluster, Access::kExit);
    model::NamedBarriers& named = Named(info.cta_global, Access::kExit);
    std::optional<model::Violation> v = cp.CheckExit();
    if (!v) v = BulkRead(a).CheckExit();
    if (v) {
      Violate(*v, a, pc, info.cta, 0, 0, false);
      if (e.outcome_ != Outcome::kRunning) return;
    }
    Emit(EventKind::kExit, a, info.cta, 0, 0, 0, 0, pc);
    if (s.status == kReady) RemoveReady(a);
    s.status = kExited;
    s.wait = WaitKind::kNone;
    ++run_.exited_count_;
    // Exited threads leave the cluster barrier's expected set and the CTA's named barriers
    // that count all CTA threads (PTX ISA exit: barriers waiting only on exited threads are
    // released).
    if (cluster.Exit(ClusterParticipant(a))) WakeCluster(info.cluster);
    const uint32_t released = named.ThreadsExited(info.threads);
    if (released != 0) WakeNamed(info.cta_global, released);
    if (a >= c.primary_agent) {
      // Whether this exit completes its grid depends on every agent of the grid: the step
      // looked at other agents (no successor memo), and every exit of the grid touches one
      // common object (the grid's first CTA's named barriers, as an exit: exits commute), so
      // that the explorer never carries one exit's effect past another's.
      const uint32_t g = c.agents[a].grid;
      run_.step_scanned_ = true;
      Touch(NamedObj(c.grid_cluster[g] * c.cluster_size), Access::kExit);
      if (GridExited(g) == c.grid_agent[g + 1] - c.grid_agent[g]) WakeGridDependents(g - 1);
    }
  }

  // --- programmatic dependent launch (ir::GridDepControl) ---
  // Agents of grid g that exited.
  uint32_t GridExited(uint32_t g) const {
    uint32_t n = 0;
    for (uint32_t x = c.grid_agent[g]; x < c.grid_agent[g + 1]; ++x) {
      n += e.agents_[x].status == kExited;
    }
    return n;
  }
  // Grid `dependent`'s prerequisite completed: its griddepcontrol.waits re-run (and pass).
  void WakeGridDependents(uint32_t dependent) {
    run_.step_scanned_ = true;
    for (uint32_t x = c.grid_agent[dependent]; x < c.grid_agent[dependent + 1]; ++x) {
      if (e.agents_[x].status == kBlocked && e.agents_[x].wait == WaitKind::kGridDependency) {
        MakeReady(x);
      }
    }
  }
  // griddepcontrol.wait (PTX ISA griddepcontrol): blocks until every prerequisite grid has
  // completed and its memory operations are visible. Grid g's prerequisite is grid g + 1, the
  // one launched just before it (a chain: each launch names the preceding kernel of the
  // stream); it completes when all of its agents exited (nothing of it is in flight then: an
  // agent with a copy in flight cannot exit cleanly, P2011/A-codes). Reads every prerequisite
  // CTA's exits, which touch its named-barrier object (DoExit), so the explorer orders this
  // step against them; it looked at other agents (step_scanned_), so the successor memo never
  // replays it. The first grid launched has no prerequisite: its wait returns at once, as
  // without the launch attribute. launch_dependents changes nothing the model tracks (it lets
  // the dependent start early, and the model lets every grid run from the start: their
  // accesses are ordered only by waits).
  void Do(uint32_t a, const Instr&, const ir::EvalEnv&, const ir::GridDepControl& op) {
    const uint32_t pc = Pc(a);
    const uint32_t cta = c.agents[a].cta;
    if (op.kind == ir::GridDepControl::Kind::kLaunchDependents) {
      Emit(EventKind::kGridDepLaunch, a, cta, 0, 0, 0, 0, pc);
      Advance(a);
      return;
    }
    const uint32_t pre = c.agents[a].grid + 1;
    uint32_t exited = 0, total = 0;
    if (pre < c.grids()) {
      for (uint32_t x = c.grid_cluster[pre] * c.cluster_size;
           x < c.grid_cluster[pre + 1] * c.cluster_size; ++x) {
        Touch(NamedObj(x));
      }
      run_.step_scanned_ = true;
      exited = GridExited(pre);
      total = c.grid_agent[pre + 1] - c.grid_agent[pre];
    }
    AgentState& s = Agent(a);
    if (exited < total) {
      Block(a, WaitKind::kGridDependency, 0, 0);
      return;
    }
    s.wait = WaitKind::kNone;
    Emit(EventKind::kGridDepWait, a, cta, 0, 0, static_cast<int32_t>(exited), 0, pc);
    Advance(a);
  }
  // `use` / `write` of a global buffer (ir::GlobalAccess): no state of the model changes (the
  // race checker orders them, verifier/races.h); the range is checked against the slot.
  void Do(uint32_t a, const Instr& in, const ir::EvalEnv& env, const ir::GlobalAccess& op) {
    const Code::Global& g = c.globals[op.global];
    int64_t slot = 0, offset = 0, bytes = 0;
    if (!Ev(op.slot, env, &slot) || !EvOr(op.offset, env, 0, &offset)) return;
    if (slot < 0 || slot >= g.slots) {
      ErrorAt("engine.index-range",
              "global buffer " + p.globals[op.global].name + " slot " + std::to_string(slot) +
                  " is outside 0.." + std::to_string(g.slots - 1),
              in.where);
      return;
    }
    if (!EvOr(op.bytes, env, g.bytes - offset, &bytes)) return;
    if (offset < 0 || bytes < 1 || offset > g.bytes || bytes > g.bytes - offset) {
      ErrorAt("engine.buffer-range",
              "bytes [" + std::to_string(offset) + ", " + std::to_string(offset + bytes) +
                  ") of global buffer " + p.globals[op.global].name + " are outside its slot of " +
                  std::to_string(g.bytes) + " bytes",
              in.where);
      return;
    }
    Emit(op.write ? EventKind::kGlobalWrite : EventKind::kGlobalUse, a, c.agents[a].cta,
         op.global, static_cast<uint32_t>(slot), static_cast<int32_t>(bytes),
         static_cast<int32_t>(offset), Pc(a));
    Advance(a);
  }

  // A switch rather than std::visit: the handlers inline into one dispatch (std::visit's
  // table of thunks prevents that).
  // One Do overload per ir::Op alternative: an op without one does not compile.
  void ExecOp(uint32_t a, const Instr& in, const ir::EvalEnv& env) {
    std::visit([&](const auto& op) { Do(a, in, env, op); }, *in.op);
  }

  // Result plumbing shared by the mbarrier operations.
  template <typename R>
  bool Check(const R& r, uint32_t a, uint32_t pc, const BarAddr& b, uint32_t barrier,
             bool async = false);

  void Do(uint32_t a, const Instr& in, const ir::EvalEnv& env, const ir::MbarrierInit& op);
  void Do(uint32_t a, const Instr& in, const ir::EvalEnv& env, const ir::MbarrierInval& op);
  void Do(uint32_t a, const Instr& in, const ir::EvalEnv& env, const ir::MbarrierArrive& op);
  bool ArriveOne(uint32_t a, const ir::MbarrierArrive& op, const BarAddr& b, int64_t count,
                 int64_t tx, uint32_t pc, uint8_t flags);
  void Do(uint32_t a, const Instr& in, const ir::EvalEnv& env, const ir::MbarrierExpectTx& op);
  void Do(uint32_t a, const Instr& in, const ir::EvalEnv& env,
          const ir::MbarrierCompleteTx& op);
  // `dst_slot`: the destination buffer slot of a TMA or bulk load (kNoDstSlot otherwise). It is
  // part of the operation's identity: two copies of one instruction onto one barrier element
  // that fill different slots are different operations, and the delivery event names its slot
  // so that a trace's reader knows which bytes landed (trace::kFlagSlot).
  static constexpr uint64_t kNoDstSlot = ~uint64_t{0};
  // `place_slot`, `place_offset`: where a landing copy's bytes are (Engine::trace_places).
  bool CompleteTx(uint32_t a, const BarAddr& b, uint32_t barrier, int64_t tx, uint32_t pc,
                  EventKind kind, bool async, uint8_t flags, uint64_t dst_slot = kNoDstSlot,
                  uint64_t place_slot = 0, uint32_t place_offset = 0);
  void Do(uint32_t a, const Instr& in, const ir::EvalEnv& env, const ir::MbarrierWait& op);
  // EngineOptions::tx_pieces: delivers the piece of load `f` that brings its barrier's tx-count
  // to 0 and appends the rest (CouldLandInPieces(f) holds).
  void DeliverPiece(const InFlight& f, const BarAddr& b);
  bool CouldLandInPieces(const InFlight& f) const;

  // Issues one complete_tx delivery per destination CTA.
  // `dst_slot` and `offset`: where the bytes land in each destination CTA.
  void IssueDeliveries(uint32_t a, uint8_t kind, const BarAddr& b, uint32_t barrier,
                       uint32_t bytes, const std::vector<uint32_t>* dests, uint32_t pc,
                       uint64_t dst_slot, uint32_t offset, uint32_t place_slot);

  void Do(uint32_t a, const Instr& in, const ir::EvalEnv& env, const ir::TmaLoad& op);
  void Do(uint32_t a, const Instr& in, const ir::EvalEnv& env, const ir::BulkLoad& op);
  void Do(uint32_t a, const Instr& in, const ir::EvalEnv& env, const ir::StAsync& op);
  void IssueStore(uint32_t a, uint32_t buffer, uint32_t slot, uint32_t offset, uint32_t bytes,
                  uint32_t pc);
  void Do(uint32_t a, const Instr& in, const ir::EvalEnv& env, const ir::TmaStore& op);
  void Do(uint32_t a, const Instr& in, const ir::EvalEnv& env, const ir::BulkStore& op);
  void Do(uint32_t a, const Instr&, const ir::EvalEnv&, const ir::BulkCommit&);
  void Do(uint32_t a, const Instr& in, const ir::EvalEnv& env, const ir::BulkWait& op);
  void Do(uint32_t a, const Instr& in, const ir::EvalEnv& env, const ir::CpAsync& op);
  void Do(uint32_t a, const Instr&, const ir::EvalEnv&, const ir::CpAsyncCommit&);
  void Do(uint32_t a, const Instr& in, const ir::EvalEnv& env, const ir::CpAsyncWait& op);
  void Do(uint32_t a, const Instr& in, const ir::EvalEnv& env,
          const ir::CpAsyncMbarrierArrive& op);
  void Do(uint32_t a, const Instr&, const ir::EvalEnv&, const ir::Fence& op);
  void Do(uint32_t a, const Instr&, const ir::EvalEnv&, const ir::ClusterArrive& op);
  void Do(uint32_t a, const Instr&, const ir::EvalEnv&, const ir::ClusterWait&);
  void Do(uint32_t a, const Instr& in, const ir::EvalEnv& env, const ir::NamedBarrier& op);
  void Do(uint32_t a, const Instr& in, const ir::EvalEnv& env, const ir::BufferAccess& op) {
    BufAddr buf;
    if (!ResolveBuf(a, op.buf, env, in.where, &buf)) return;
    const uint32_t pc = Pc(a);
    if (buf.cta != c.agents[a].cta) {
      // DSMEM (mapa + ld/st.shared::cluster): the peer's shared memory exists only while the
      // peer runs. Its agents' exits touch its named-barrier object (DoExit), so this access
      // and those exits are dependent steps for the explorer.
      const uint32_t peer = c.agents[a].cluster * c.cluster_size + buf.cta;
      Touch(NamedObj(peer));
      // Whether the peer exited is its agents' statuses, which the named-barrier object's
      // fingerprint component does not hold: no successor memo for this step.
      run_.step_scanned_ = true;
      if (CtaExited(peer)) {
        Violate(model::Violation{model::Code::kDsmemExitedCta, buf.cta, 0}, a, pc, buf.cta,
                op.buf.buffer, buf.slot, false);
        if (e.outcome_ != Outcome::kRunning) return;
      }
    }
    if (c.tracks_data && op.write) {
      // What the slot holds now (see Code::tracks_data): the GPU's `write` data depends only on
      // the agent's index in its CTA and the byte offset, so a partial write keeps a slot that
      // agent wrote whole and makes any other slot unnamed. Store source reads depend on it.
      uint16_t& tag = SmemTag(c.agents[a].cta_global, op.buf.buffer, buf.slot);
      const bool whole = buf.bytes == c.buffers[op.buf.buffer].bytes;
      tag = whole || tag == WriterTag(a) ? WriterTag(a) : kDataOther;
    }
    const uint32_t off = OffsetInSlot(op.buf.buffer, buf);
    TraceEvent& ev = Emit(op.write ? EventKind::kWrite : EventKind::kUse, a, buf.cta,
                          op.buf.buffer, buf.slot, buf.bytes, off, pc);
    if (op.atomic) ev.flags |= trace::kFlagAtomic;
    Place(buf.slot, off, a);
    Advance(a);
  }
  // A tensor map update touches no state of the machine: what it may overlap or follow is
  // happens-before on the trace (verifier/tensormap.h), the same in every interleaving.
  void Do(uint32_t a, const Instr&, const ir::EvalEnv&, const ir::TensormapReplace& op) {
    Emit(EventKind::kTensormapReplace, a, c.agents[a].cta, op.tensor_map, 0, 0, 0, Pc(a));
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
    int64_t* vars = Vars(a);
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
    const Slice<uint16_t>& image = GlobalImage();
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
    const uint16_t tag = image[c.buffer_slot_base[op.buf.buffer] + buf.slot];
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
    Vars(a)[op.result_var] = cls;
    Advance(a);
  }
  uint16_t WriterTag(uint32_t a) const;
  bool IsBulkStore(const InFlight& f) const;

  uint32_t Pc(uint32_t a) const { return e.agents_[a].pc; }
  void Advance(uint32_t a);

  // --- async completion ---
  void Deliver(uint32_t i);
  // Moves cp.async.mbarrier.arrive of `agent` whose earlier cp.async have all completed into
  // the in-flight list.
  void ReleaseDeferred(uint32_t agent);

  // --- future footprint (explorer) ---
  // Runs agent a's code from its current pc on a scratch copy of its variables, as if every wait
  // passed, and adds every object its remaining operations (and the async operations they
  // issue) touch. Exact when the agent's control flow and operands do not depend on what the
  // barriers answer, which the caller ensures (roles with test_wait results or state tokens are
  // not asked). Returns false (caller falls back to the static footprint) on an expression
  // fault or a runaway loop; the engine's state is unchanged either way.
  bool SoloFuture(uint32_t a, Footprint* fp, bool stop_at_cluster_wait, bool* truncated,
                  std::vector<UpdateTally>* tally, bool one_op = false,
                  uint32_t* blocks_on = nullptr, bool cluster_waits = true,
                  bool exact_st_async = true);

  // The slot agent a's try_wait loop `op` would block on now (Do(MbarrierWait): the model's
  // try_wait answers false without a violation), else kNoSlot. A failing try_wait changes no
  // barrier (model WaitOnPhase), so it is tested on a copy of the barrier's state.
  uint32_t WaitBlocksOn(uint32_t a, const ir::MbarrierWait& op, const ir::EvalEnv& env);

  // --- end of run ---
  // Inlined into every step: the common case (something can still run) is two compares.
  __attribute__((always_inline)) void CheckEnd() {
    if (e.outcome_ != Outcome::kRunning) return;
    if (!run_.ready_.empty() || !e.in_flight_.empty()) return;
    End();
  }
  // Nothing can run: completed or deadlocked.
  void End() {
    PARITY_CHECK(e.deferred_.empty(), "a deferred cp.async arrive with no cp.async in flight");
    if (run_.exited_count_ == c.agents.size()) {
      run_.outcome_ = Outcome::kCompleted;
      if (c.has_forall) CheckForall();
      return;
    }
    run_.outcome_ = Outcome::kDeadlock;
    DeadlockInfo& d = run_.result_.deadlock;
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
        case WaitKind::kGridDependency: {
          const uint32_t pre = info.grid + 1;  // blocked, so it exists
          bl.arrived = GridExited(pre);
          bl.expected = c.grid_agent[pre + 1] - c.grid_agent[pre];
          break;
        }
        case WaitKind::kNone:
          break;
      }
      d.blocked.push_back(bl);
    }
  }
};

}  // namespace parity::engine

#include "sim/engine/exec_copies.h"  // IWYU pragma: export
#include "sim/engine/exec_future.h"  // IWYU pragma: export
#include "sim/engine/exec_sync.h"  // IWYU pragma: export

#endif  // PARITY_SIM_ENGINE_EXEC_H_
