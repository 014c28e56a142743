// The step semantics that are not one op family's (exec.h declares them): trace records,
// violations and errors, operand resolution, wake-ups, the agent step's control flow,
// assertions, exits, programmatic dependent launch, global accesses and readbacks, and the end
// of a run.
#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "sim/common/check.h"
#include "sim/engine/code.h"
#include "sim/engine/engine.h"
#include "sim/engine/exec.h"
#include "sim/engine/walk.h"
#include "sim/model/tma.h"

namespace parity::engine {

TraceEvent& Engine::Exec::Record(EventKind kind, uint32_t agent, uint32_t target_cta,
                                 uint32_t object, uint32_t index, int64_t value, int64_t value2,
                                 uint32_t pc, bool async) {
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

void Engine::Exec::Error(Status s) {
  if (e.outcome_ != Outcome::kRunning) return;
  run_.outcome_ = Outcome::kError;
  run_.result_.error = std::move(s);
}

void Engine::Exec::ErrorAt(const std::string& rule, const std::string& msg,
                           const SourceLocation* where) {
  SourceLocation w = where ? *where : SourceLocation{};
  if (w.file.empty()) w.file = p.file;
  Error(Status(rule, msg, w));
}

bool Engine::Exec::TxOperandInRange(const char* op, int64_t tx, const SourceLocation* where) {
  if (tx >= 0 && tx <= int64_t{UINT32_MAX}) return true;
  ErrorAt("engine.tx-range",
          std::string(op) + " bytes " + std::to_string(tx) + " is outside 0..4294967295 (a u32)",
          where);
  return false;
}

void Engine::Exec::Violate(const model::Violation& v, uint32_t agent, uint32_t pc, uint32_t target,
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

bool Engine::Exec::EvSlow(ir::ExprId id, const ir::EvalEnv& env, int64_t* out) {
  ir::EvalFault fault;
  *out = ir::EvalFast(p, id, env, &fault);
  if (!fault.ok()) {
    Error(ir::EvalFaultStatus(p, fault));
    return false;
  }
  return true;
}

bool Engine::Exec::ResolveBuf(uint32_t a, const ir::BufferRef& ref, const ir::EvalEnv& env,
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

const std::vector<uint32_t>* Engine::Exec::Destinations(int64_t mask, const SourceLocation* where) {
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

bool Engine::Exec::SmemAddressOk(const Code::Map& map, uint32_t address,
                                 const SourceLocation* where) {
  const uint32_t key = address / 128;
  const bool memo = address % 128 == 0 && key < map.smem_ok.size();
  if (memo && map.smem_ok[key] == 1) return true;
  Status st = model::ValidateTmaSharedAddress(address, map.box_bytes);
  if (memo) map.smem_ok[key] = st.ok() ? 1 : 2;
  if (st.ok()) return true;
  ErrorAt(st.rule(), st.message(), where);
  return false;
}

void Engine::Exec::WakeBarrier(uint32_t slot) {
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

void Engine::Exec::PhaseCompleted(uint32_t agent, uint32_t slot, uint32_t barrier, uint32_t index,
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

void Engine::Exec::WakeCluster(uint32_t cluster) {
  run_.step_scanned_ = true;
  for (uint32_t a = c.cluster_first_agent[cluster]; a < c.cluster_first_agent[cluster + 1];
       ++a) {
    if (e.agents_[a].status == kBlocked && e.agents_[a].wait == WaitKind::kClusterBarrier) {
      MakeReady(a);
    }
  }
}

void Engine::Exec::WakeNamed(uint32_t cta_global, uint32_t id_mask) {
  run_.step_scanned_ = true;
  for (uint32_t o = c.cta_first_agent[cta_global]; o < c.cta_first_agent[cta_global + 1]; ++o) {
    const AgentState& os = e.agents_[o];
    if (os.status == kBlocked && os.wait == WaitKind::kNamedBarrier &&
        ((id_mask >> os.wait_slot) & 1u)) {
      MakeReady(o);
    }
  }
}

void Engine::Exec::RecheckGroups(uint32_t a) {
  const AgentState& s = e.agents_[a];
  if (s.status != kBlocked) return;
  if (s.wait == WaitKind::kCpAsyncGroups && e.CpState(a).WaitGroupSatisfied(s.wait_slot)) {
    MakeReady(a);
  } else if (s.wait == WaitKind::kBulkGroups &&
             e.BulkState(a).WaitGroupSatisfied(s.wait_slot, s.wait_arg != 0)) {
    MakeReady(a);
  }
}

void Engine::Exec::StepAgent(uint32_t a) {
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

bool Engine::Exec::ReadState(ir::StateFn fn, uint32_t decl, int64_t index, uint32_t cta_global,
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

void Engine::Exec::CheckForall() {
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

bool Engine::Exec::CtaExited(uint32_t cta_global) const {
  bool any = false;
  for (uint32_t x = 0; x < c.agents.size(); ++x) {
    if (c.agents[x].cta_global != cta_global) continue;
    any = true;
    if (e.agents_[x].status != kExited) return false;
  }
  return any;
}

void Engine::Exec::DoExit(uint32_t a, uint32_t pc, const SourceLocation* where) {
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

uint32_t Engine::Exec::GridExited(uint32_t g) const {
  uint32_t n = 0;
  for (uint32_t x = c.grid_agent[g]; x < c.grid_agent[g + 1]; ++x) {
    n += e.agents_[x].status == kExited;
  }
  return n;
}

void Engine::Exec::WakeGridDependents(uint32_t dependent) {
  run_.step_scanned_ = true;
  for (uint32_t x = c.grid_agent[dependent]; x < c.grid_agent[dependent + 1]; ++x) {
    if (e.agents_[x].status == kBlocked && e.agents_[x].wait == WaitKind::kGridDependency) {
      MakeReady(x);
    }
  }
}

void Engine::Exec::Do(uint32_t a, const Instr&, const ir::EvalEnv&, const ir::GridDepControl& op) {
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

void Engine::Exec::Do(uint32_t a, const Instr& in, const ir::EvalEnv& env,
                      const ir::GlobalAccess& op) {
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

void Engine::Exec::Do(uint32_t a, const Instr& in, const ir::EvalEnv& env,
                      const ir::BufferAccess& op) {
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

void Engine::Exec::Do(uint32_t a, const Instr&, const ir::EvalEnv&,
                      const ir::TensormapReplace& op) {
  Emit(EventKind::kTensormapReplace, a, c.agents[a].cta, op.tensor_map, 0, 0, 0, Pc(a));
  Advance(a);
}

void Engine::Exec::Do(uint32_t a, const Instr& in, const ir::EvalEnv&, const ir::Exit&) {
  DoExit(a, Pc(a), in.where);
}

void Engine::Exec::Do(uint32_t a, const Instr&, const ir::EvalEnv&,
                      const ir::MbarrierPendingCount& op) {
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

void Engine::Exec::Do(uint32_t a, const Instr& in, const ir::EvalEnv& env,
                      const ir::GlobalReadback& op) {
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

void Engine::Exec::End() {
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

}  // namespace parity::engine
