// The step semantics of synchronisation: mbarrier init, inval, arrive, expect_tx, complete_tx and
// waits; fences; the cluster barrier and the CTAs' named barriers.
#include <cstdint>
#include <vector>

#include "sim/engine/exec.h"

namespace parity::engine {

void Engine::Exec::Do(uint32_t a, const Instr& in, const ir::EvalEnv& env,
                      const ir::MbarrierInit& op) {
  BarAddr b;
  if (!ResolveBar(a, op.bar, env, in.where, &b)) return;
  int64_t count = 0;
  if (!EvOr(op.count, env, c.barrier_count[b.slot], &count)) return;
  model::MbarrierResult r = model::MbarrierInit(Slot(b.slot, Access::kOther), count);
  const uint32_t pc = Pc(a);
  Emit(EventKind::kInit, a, b.cta, op.bar.barrier, b.index, count, 0, pc);
  if (!Check(r, a, pc, b, op.bar.barrier)) return;
  Advance(a);
}

void Engine::Exec::Do(uint32_t a, const Instr& in, const ir::EvalEnv& env,
                      const ir::MbarrierInval& op) {
  BarAddr b;
  if (!ResolveBar(a, op.bar, env, in.where, &b)) return;
  const uint32_t pc = Pc(a);
  model::MbarrierResult r = model::MbarrierInval(Slot(b.slot, Access::kOther));
  Emit(EventKind::kInval, a, b.cta, op.bar.barrier, b.index, 0, 0, pc);
  if (!Check(r, a, pc, b, op.bar.barrier)) return;
  Advance(a);
}

void Engine::Exec::Do(uint32_t a, const Instr& in, const ir::EvalEnv& env,
                      const ir::MbarrierArrive& op) {
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

bool Engine::Exec::ArriveOne(uint32_t a, const ir::MbarrierArrive& op, const BarAddr& b,
                             int64_t count, int64_t tx, uint32_t pc, uint8_t flags) {
  model::MbarrierState& st =
      Slot(b.slot, op.expect_tx != ir::kNoExpr || op.kind == ir::MbarrierArrive::Kind::kArrive
                       ? Access::kArrive
                       : Access::kOther);
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
  ev.flags |= flags | trace::OrderFlags(op.sem == ir::MemSem::kRelaxed,
                                        op.scope == ir::MemScope::kCluster);
  if (!Check(r, a, pc, b, op.bar.barrier)) return false;
  if (op.token_var != 0xffffffffu) {
    Vars(a)[op.token_var] = EncodeToken(r.token);
  }
  if (r.phase_completed) PhaseCompleted(a, b.slot, op.bar.barrier, b.index, b.cta, pc, false);
  return true;
}

void Engine::Exec::Do(uint32_t a, const Instr& in, const ir::EvalEnv& env,
                      const ir::MbarrierExpectTx& op) {
  BarAddr b;
  int64_t tx = 0;
  if (!ResolveBar(a, op.bar, env, in.where, &b) || !Ev(op.bytes, env, &tx) ||
      !TxOperandInRange("expect_tx", tx, in.where)) {
    return;
  }
  const uint32_t pc = Pc(a);
  model::MbarrierState& st = Slot(b.slot, Access::kOther);
  model::MbarrierResult r = model::MbarrierExpectTx(st, tx);
  Emit(EventKind::kExpectTx, a, b.cta, op.bar.barrier, b.index, tx, st.tx_count, pc).phase =
      static_cast<uint8_t>(st.parity());
  if (!Check(r, a, pc, b, op.bar.barrier)) return;
  if (r.phase_completed) PhaseCompleted(a, b.slot, op.bar.barrier, b.index, b.cta, pc, false);
  Advance(a);
}

void Engine::Exec::Do(uint32_t a, const Instr& in, const ir::EvalEnv& env,
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

bool Engine::Exec::CompleteTx(uint32_t a, const BarAddr& b, uint32_t barrier, int64_t tx,
                              uint32_t pc, EventKind kind, bool async, uint8_t flags,
                              uint64_t dst_slot, uint64_t place_slot, uint32_t place_offset) {
  model::MbarrierState& st = Slot(b.slot, Access::kCompleteTx);
  model::MbarrierResult r = model::MbarrierCompleteTx(st, tx);
  TraceEvent& ev = Emit(kind, a, b.cta, barrier, b.index, tx, st.tx_count, pc, async);
  Place(place_slot, place_offset, a);
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

void Engine::Exec::Do(uint32_t a, const Instr& in, const ir::EvalEnv& env,
                      const ir::MbarrierWait& op) {
  BarAddr b;
  if (!ResolveBar(a, op.bar, env, in.where, &b)) return;
  const AgentInfo& info = c.agents[a];
  AgentState& s = Agent(a);
  const uint32_t pc = Pc(a);
  model::MbarrierState& st = Slot(b.slot, Access::kWait);
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
  const bool by_token = op.token_var != 0xffffffffu;
  uint32_t parity = 0;
  model::MbarrierToken token;
  if (by_token) {
    token.phase = static_cast<uint32_t>(Vars(a)[op.token_var]);
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
    ev.flags |= trace::OrderFlags(op.sem == ir::MemSem::kRelaxed,
                                  op.scope == ir::MemScope::kCluster);
    if (!Check(r, a, pc, b, op.bar.barrier)) return;
    if (op.result_var != 0xffffffffu) {
      Vars(a)[op.result_var] = r.complete ? 1 : 0;
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
  ev.flags |= trace::OrderFlags(op.sem == ir::MemSem::kRelaxed,
                                op.scope == ir::MemScope::kCluster);
  s.wait = WaitKind::kNone;
  Advance(a);
}
void Engine::Exec::Do(uint32_t a, const Instr&, const ir::EvalEnv&, const ir::Fence& op) {
  const uint32_t pc = Pc(a);
  // index: the tensor map a fence.proxy.tensormap acquire names (verifier/tensormap.h).
  Emit(EventKind::kFence, a, c.agents[a].cta, static_cast<uint32_t>(op.kind),
       op.kind == ir::Fence::Kind::kProxyTensormapAcquire ? op.tensor_map : 0, 0, 0, pc);
  Advance(a);
}

void Engine::Exec::Do(uint32_t a, const Instr&, const ir::EvalEnv&, const ir::ClusterArrive& op) {
  const AgentInfo& info = c.agents[a];
  const uint32_t pc = Pc(a);
  model::ClusterBarrier& cb = Cluster(info.cluster, Access::kClusterArrive);
  model::ClusterArrival r = cb.Arrive(ClusterParticipant(a));
  Emit(EventKind::kClusterArrive, a, info.cta, 0, 0, op.relaxed ? 1 : 0, cb.arrived(), pc);
  if (r.violation) {
    Violate(*r.violation, a, pc, info.cta, 0, 0, false);
    return;
  }
  Agent(a).cluster_arrived = 1;
  if (r.completed) WakeCluster(info.cluster);
  Advance(a);
}

void Engine::Exec::Do(uint32_t a, const Instr&, const ir::EvalEnv&, const ir::ClusterWait&) {
  AgentState& s = Agent(a);
  const AgentInfo& info = c.agents[a];
  const uint32_t pc = Pc(a);
  model::ClusterBarrier& cb = Cluster(info.cluster, Access::kWait);
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

void Engine::Exec::Do(uint32_t a, const Instr& in, const ir::EvalEnv& env,
                      const ir::NamedBarrier& op) {
  AgentState& s = Agent(a);
  const AgentInfo& info = c.agents[a];
  const uint32_t pc = Pc(a);
  model::NamedBarriers& nb = Named(info.cta_global, Access::kOther);
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

}  // namespace parity::engine

