// The step semantics (Engine::Exec): one step of an agent or one completion of an in-flight
// operation, applied to the engine's state, with the wake-ups, violations and trace events it
// causes; and the look-ahead that runs an agent's code without changing the state
// (SoloFuture). Internal to the engine (engine.cc drives it). The handlers are defined in
// exec.cc (control flow, errors, wake-ups, exits, assertions, the run's end and the ops of no
// family), exec_sync.cc (mbarriers, fences, cluster and named barriers), exec_copies.cc (TMA,
// bulk, st.async and cp.async copies and their completions) and exec_future.cc (the
// look-ahead). What stays defined here is what every one of those units calls on each step
// (the state's accessors and their marking, trace emission, the expression fast path, barrier
// operand resolution): inline, so that each handler compiles them into itself.
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
                     uint32_t index, int64_t value, int64_t value2, uint32_t pc, bool async);
  TraceEvent scratch_{};
  // Where the bytes of the event just emitted are (Engine::trace_places).
  __attribute__((always_inline)) void Place(uint64_t slot, uint32_t offset,
                                            uint32_t agent) {
    if (e.options_.record_trace) [[unlikely]] {
      run_.trace_places_.back() = Engine::TracePlace{static_cast<uint32_t>(slot), offset, agent};
    }
  }

  // --- ending ---
  void Error(Status s);
  void ErrorAt(const std::string& rule, const std::string& msg, const SourceLocation* where);
  // The byte operand of expect_tx / complete_tx is a .b32 (PTX ISA, mbarrier): a value the
  // schedule computes outside 0..2^32-1 is a bad schedule (engine.tx-range), not a state the
  // model can take.
  bool TxOperandInRange(const char* op, int64_t tx, const SourceLocation* where);
  // Reports a model violation caused by `agent` at instruction `pc` on (object, index) of CTA
  // `target`. Errors end the run; warnings are recorded and the run goes on.
  void Violate(const model::Violation& v, uint32_t agent, uint32_t pc, uint32_t target,
               uint32_t object, uint32_t index, bool from_async);

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
  __attribute__((noinline)) bool EvSlow(ir::ExprId id, const ir::EvalEnv& env, int64_t* out);
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
                  const SourceLocation* where, BufAddr* out);
  // The byte offset of a resolved buffer operand into its slot.
  uint32_t OffsetInSlot(uint32_t buffer, const BufAddr& x) const {
    return x.address - c.buffers[buffer].base - x.slot * c.buffers[buffer].bytes;
  }
  // The model's multicast destinations for a mask (memoised: the hot path does not allocate).
  const std::vector<uint32_t>* Destinations(int64_t mask, const SourceLocation* where);

  // The model's shared-address rules for a tensor copy of `map` at `address` (memoised).
  bool SmemAddressOk(const Code::Map& map, uint32_t address, const SourceLocation* where);

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
  void WakeBarrier(uint32_t slot);
  void PhaseCompleted(uint32_t agent, uint32_t slot, uint32_t barrier, uint32_t index,
                      uint32_t target, uint32_t pc, bool async);
  // A note (MbarrierResult::note) of the current operation, reported after its phase completion.
  std::optional<model::Violation> note_;

  // --- cluster barrier and named barriers (sim/model/sync_barriers.h) ---
  // Participant of the cluster barrier: the agent's index within its cluster (an agent's
  // threads arrive and wait together).
  uint32_t ClusterParticipant(uint32_t a) const {
    return a - c.cluster_first_agent[c.agents[a].cluster];
  }
  void WakeCluster(uint32_t cluster);
  void WakeNamed(uint32_t cta_global, uint32_t id_mask);

  // --- group predicates (sim/model/async_groups.h) ---
  void RecheckGroups(uint32_t a);

  // --- agent step ---
  void StepAgent(uint32_t a);

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
                 int64_t* out);
  // The end of a complete run: every `forall` property must hold (for every CTA).
  void CheckForall();

  // Whether every agent of CTA `cta_global` exited (a CTA without agents never ran any).
  bool CtaExited(uint32_t cta_global) const;

  void DoExit(uint32_t a, uint32_t pc, const SourceLocation* where);

  // --- programmatic dependent launch (ir::GridDepControl) ---
  // Agents of grid g that exited.
  uint32_t GridExited(uint32_t g) const;
  // Grid `dependent`'s prerequisite completed: its griddepcontrol.waits re-run (and pass).
  void WakeGridDependents(uint32_t dependent);
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
  void Do(uint32_t a, const Instr&, const ir::EvalEnv&, const ir::GridDepControl& op);
  // `use` / `write` of a global buffer (ir::GlobalAccess): no state of the model changes (the
  // race checker orders them, verifier/races.h); the range is checked against the slot.
  void Do(uint32_t a, const Instr& in, const ir::EvalEnv& env, const ir::GlobalAccess& op);

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
  // commit_group of agent a's cp.async or bulk async-groups (`groups`, either model state):
  // the same step for both kinds, `kind` the event it records.
  template <typename Groups>
  void CommitGroup(uint32_t a, Groups& groups, EventKind kind);
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
  void Do(uint32_t a, const Instr& in, const ir::EvalEnv& env, const ir::BufferAccess& op);
  // A tensor map update touches no state of the machine: what it may overlap or follow is
  // happens-before on the trace (verifier/tensormap.h), the same in every interleaving.
  void Do(uint32_t a, const Instr&, const ir::EvalEnv&, const ir::TensormapReplace& op);
  void Do(uint32_t a, const Instr& in, const ir::EvalEnv&, const ir::Exit&);
  // mbarrier.pending_count (PTX ISA, mbarrier.pending_count): the count the token recorded, from
  // the model (M1013 unless the token came from a .noComplete arrive). Reads only the agent's
  // own variable: no shared object is touched.
  void Do(uint32_t a, const Instr&, const ir::EvalEnv&, const ir::MbarrierPendingCount& op);
  // `readback` (ir::GlobalReadback): what a generic-proxy read of the bulk.store destination of
  // a buffer slot sees. PTX ISA (Completion mechanisms for asynchronous copy operations): reading
  // the destination before the copy completes is undefined, so a read while some bulk.store of
  // the slot has not finished its global write is A1103; otherwise the bytes are those of the
  // last store whose write completed (its source as read, sim/model: the `write` data of the
  // agent that last wrote the whole slot), or the initial contents.
  void Do(uint32_t a, const Instr& in, const ir::EvalEnv& env, const ir::GlobalReadback& op);
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
                  bool exact_st_async = true, std::vector<NamedAccess>* named = nullptr);

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
  void End();
};

// Shared by the mbarrier operations of exec_sync.cc and exec_copies.cc.
template <typename R>
inline bool Engine::Exec::Check(const R& r, uint32_t a, uint32_t pc, const BarAddr& b,
                                uint32_t barrier, bool async) {
  if (r.violation) {
    Violate(*r.violation, a, pc, b.cta, barrier, b.index, async);
    return false;
  }
  if constexpr (requires { r.note; }) {
    // A note (M1009) goes with the run's warnings, after the phase completion it notes (the
    // operation was applied): PhaseCompleted reports it.
    note_ = r.note;
  }
  return true;
}

inline void Engine::Exec::Advance(uint32_t a) {
  if (e.outcome_ == Outcome::kRunning) Agent(a).pc++;
}

}  // namespace parity::engine

#endif  // PARITY_SIM_ENGINE_EXEC_H_
