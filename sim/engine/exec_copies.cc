// The step semantics of the asynchronous copies: TMA and bulk loads and stores, st.async,
// cp.async and their async groups; issuing in-flight operations and their completions
// (Deliver), which update the barriers' tx-counts and the groups.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "sim/engine/exec.h"

namespace parity::engine {

void Engine::Exec::IssueDeliveries(uint32_t a, uint8_t kind, const BarAddr& b, uint32_t barrier,
                                   uint32_t bytes, const std::vector<uint32_t>* dests, uint32_t pc,
                                   uint64_t dst_slot, uint32_t offset, uint32_t place_slot) {
  const AgentInfo& info = c.agents[a];
  // An assert's `landed` reads which copies are in flight (Exec::ReadState): the issue marks
  // the issuer's groups object, which those reads touch.
  if (c.tracks_landed) Touch(GroupsObj(a));
  InFlight f;
  f.kind = kind;
  if (dst_slot != kNoDstSlot) f.id = dst_slot;
  f.offset = offset;
  f.place_slot = place_slot;
  f.object = static_cast<uint16_t>(barrier);
  f.agent = a;
  f.index = b.index;
  f.bytes = bytes;
  f.pc = pc;
  if (dests == nullptr) {
    f.target_cta = b.cta;
    f.slot = b.slot;
    Issue(f);
    return;
  }
  f.flags = trace::kFlagMulticast;
  for (uint32_t d : *dests) {
    f.target_cta = d;
    f.slot = SlotOf(info.cluster, d, barrier, b.index);
    Issue(f);
  }
}

void Engine::Exec::Do(uint32_t a, const Instr& in, const ir::EvalEnv& env, const ir::TmaLoad& op) {
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
  const uint32_t off = OffsetInSlot(op.dst.buffer, dst);
  Place(dst.slot, off, a);
  IssueDeliveries(a, InFlight::kTmaDeliver, b, op.bar.barrier, map.box_bytes, dests, pc,
                  dst.slot, off, dst.slot);
  Advance(a);
}

void Engine::Exec::Do(uint32_t a, const Instr& in, const ir::EvalEnv& env, const ir::BulkLoad& op) {
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
  const uint32_t off = OffsetInSlot(op.dst.buffer, dst);
  Place(dst.slot, off, a);
  IssueDeliveries(a, InFlight::kBulkDeliver, b, op.bar.barrier, plan->complete_tx_bytes, dests,
                  pc, dst.slot, off, dst.slot);
  Advance(a);
}

void Engine::Exec::Do(uint32_t a, const Instr& in, const ir::EvalEnv& env, const ir::StAsync& op) {
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
  const uint32_t off = OffsetInSlot(op.dst.buffer, dst);
  Place(dst.slot, off, a);
  IssueDeliveries(a, InFlight::kStAsync, b, op.bar.barrier, dst.bytes, nullptr, pc, kNoDstSlot,
                  off, dst.slot);
  Advance(a);
}

void Engine::Exec::IssueStore(uint32_t a, uint32_t buffer, uint32_t slot, uint32_t offset,
                              uint32_t bytes, uint32_t pc) {
  InFlight f;
  f.kind = InFlight::kStoreRead;
  f.object = static_cast<uint16_t>(buffer);
  f.agent = a;
  f.target_cta = c.agents[a].cta;
  f.index = slot;
  f.bytes = bytes;
  f.pc = pc;
  f.offset = offset;
  f.id = Bulk(a).Issue();
  Issue(f);
}

void Engine::Exec::Do(uint32_t a, const Instr& in, const ir::EvalEnv& env, const ir::TmaStore& op) {
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
  const uint32_t off = OffsetInSlot(op.src.buffer, src);
  Place(src.slot, off, a);
  IssueStore(a, op.src.buffer, src.slot, off, map.box_bytes, pc);
  Advance(a);
}

void Engine::Exec::Do(uint32_t a, const Instr& in, const ir::EvalEnv& env,
                      const ir::BulkStore& op) {
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
  const uint32_t off = OffsetInSlot(op.src.buffer, src);
  Place(src.slot, off, a);
  IssueStore(a, op.src.buffer, src.slot, off, plan->bytes, pc);
  Advance(a);
}

template <typename Groups>
void Engine::Exec::CommitGroup(uint32_t a, Groups& groups, EventKind kind) {
  const uint32_t pc = Pc(a);
  std::optional<model::Violation> w = groups.Commit();
  if (w) Violate(*w, a, pc, c.agents[a].cta, 0, 0, false);
  Emit(kind, a, c.agents[a].cta, 0, 0, static_cast<int64_t>(groups.committed_groups()) - 1, 0,
       pc);
  Advance(a);
}

void Engine::Exec::Do(uint32_t a, const Instr&, const ir::EvalEnv&, const ir::BulkCommit&) {
  CommitGroup(a, Bulk(a), EventKind::kBulkCommit);
}

void Engine::Exec::Do(uint32_t a, const Instr& in, const ir::EvalEnv& env, const ir::BulkWait& op) {
  AgentState& s = Agent(a);
  model::BulkAsyncState& bulk = Bulk(a);
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
    std::optional<model::Violation> w = bulk.CheckWaitGroup(static_cast<uint32_t>(n));
    if (w) Violate(*w, a, pc, c.agents[a].cta, 0, 0, false);
    Emit(EventKind::kBulkWaitBegin, a, c.agents[a].cta, 0, 0, n, op.read, pc);
  }
  if (!bulk.WaitGroupSatisfied(static_cast<uint32_t>(n), op.read)) {
    Block(a, WaitKind::kBulkGroups, static_cast<uint32_t>(n), op.read ? 1 : 0);
    return;
  }
  Emit(EventKind::kBulkWaitEnd, a, c.agents[a].cta, 0, 0, n, op.read, pc);
  s.wait = WaitKind::kNone;
  Advance(a);
}

void Engine::Exec::Do(uint32_t a, const Instr& in, const ir::EvalEnv& env, const ir::CpAsync& op) {
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
  f.offset = OffsetInSlot(op.dst.buffer, dst);
  f.id = Cp(a).Issue();
  Issue(f);
  Emit(EventKind::kCpAsyncIssue, a, f.target_cta, op.dst.buffer, dst.slot, dst.bytes, 0, pc);
  Place(dst.slot, f.offset, a);
  Advance(a);
}

void Engine::Exec::Do(uint32_t a, const Instr&, const ir::EvalEnv&, const ir::CpAsyncCommit&) {
  CommitGroup(a, Cp(a), EventKind::kCpAsyncCommit);
}

void Engine::Exec::Do(uint32_t a, const Instr& in, const ir::EvalEnv& env,
                      const ir::CpAsyncWait& op) {
  AgentState& s = Agent(a);
  const uint32_t pc = Pc(a);
  model::CpAsyncState& cp = Cp(a);
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
      cp.BeginWaitAll();
    } else if (auto w = cp.CheckWaitGroup(static_cast<uint32_t>(n))) {
      Violate(*w, a, pc, c.agents[a].cta, 0, 0, false);
    }
    Emit(EventKind::kCpAsyncWaitBegin, a, c.agents[a].cta, 0, 0, n, 0, pc);
  }
  if (!cp.WaitGroupSatisfied(static_cast<uint32_t>(n))) {
    Block(a, WaitKind::kCpAsyncGroups, static_cast<uint32_t>(n), 0);
    return;
  }
  Emit(EventKind::kCpAsyncWaitEnd, a, c.agents[a].cta, 0, 0, n, 0, pc);
  s.wait = WaitKind::kNone;
  Advance(a);
}

void Engine::Exec::Do(uint32_t a, const Instr& in, const ir::EvalEnv& env,
                      const ir::CpAsyncMbarrierArrive& op) {
  BarAddr b;
  if (!ResolveBar(a, op.bar, env, in.where, &b)) return;
  const uint32_t pc = Pc(a);
  model::MbarrierState& st = Slot(b.slot, Access::kOther);
  model::CpAsyncState& cp = Cp(a);
  model::MbarrierResult r = model::MbarrierAsyncArriveIssue(st, op.noinc);
  Emit(EventKind::kCpAsyncArrive, a, b.cta, op.bar.barrier, b.index, op.noinc ? 1 : 0,
       st.pending_count, pc);
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
  f.id = cp.IssuedCount();
  cp.MarkTrackedByMbarrier();
  if (cp.AllCompleteBefore(f.id)) {
    Issue(f);
  } else {
    Defer(f);
  }
  Advance(a);
}
uint16_t Engine::Exec::WriterTag(uint32_t a) const {
  return static_cast<uint16_t>(c.agents[a].index_in_cta + 1);
}

bool Engine::Exec::IsBulkStore(const InFlight& f) const {
  const std::vector<Instr>& code = c.roles[c.agents[f.agent].role];
  return f.pc < code.size() && code[f.pc].kind == Instr::kOp &&
         std::holds_alternative<ir::BulkStore>(*code[f.pc].op);
}

void Engine::Exec::Deliver(uint32_t i) {
  const InFlight f = TakeInFlight(i);
  BarAddr b{f.target_cta, f.index, f.slot};
  switch (f.kind) {
    case InFlight::kTmaDeliver:
    case InFlight::kBulkDeliver:
      if (CouldLandInPieces(f)) {
        const uint64_t key = TxPieceKey(f.slot, e.barriers_[f.slot].phase);
        run_.result_.tx_piece_keys.push_back(key);
        const std::vector<uint64_t>& at = e.options_.tx_pieces_at;
        if (e.options_.tx_pieces || std::binary_search(at.begin(), at.end(), key)) {
          DeliverPiece(f, b);
          return;
        }
        run_.result_.tx_pieces_differ = true;
      }
      [[fallthrough]];
    case InFlight::kStAsync:
      CompleteTx(f.agent, b, f.object, f.bytes, f.pc, InFlight::kLandsAs[f.kind], true, f.flags,
                 f.kind == InFlight::kStAsync ? kNoDstSlot : f.id, f.place_slot, f.offset);
      return;
    case InFlight::kCpAsync: {
      Cp(f.agent).Complete(f.id);
      Emit(InFlight::kLandsAs[f.kind], f.agent, f.target_cta, f.object, f.index, f.bytes, 0,
           f.pc, true);
      Place(f.index, f.offset, f.agent);
      ReleaseDeferred(f.agent);
      RecheckGroups(f.agent);
      return;
    }
    case InFlight::kCpAsyncArrive: {
      model::MbarrierState& st = Slot(f.slot, Access::kOther);
      model::MbarrierArriveResult r = model::MbarrierAsyncArriveLand(st);
      TraceEvent& ev = Emit(InFlight::kLandsAs[f.kind], f.agent, f.target_cta, f.object,
                            f.index, 1, st.pending_count, f.pc, true);
      Place(0, 0, f.agent);
      ev.phase = static_cast<uint8_t>(st.parity());
      if (!Check(r, f.agent, f.pc, b, f.object, true)) return;
      if (r.phase_completed) PhaseCompleted(f.agent, f.slot, f.object, f.index, f.target_cta,
                                            f.pc, true);
      return;
    }
    case InFlight::kStoreRead: {
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
      Emit(InFlight::kLandsAs[f.kind], f.agent, f.target_cta, f.object, f.index, f.bytes, 0, f.pc,
           true);
      Place(f.index, f.offset, f.agent);
      InFlight w = f;
      w.kind = InFlight::kStoreWrite;
      w.slot = data;
      Issue(w);
      RecheckGroups(f.agent);
      return;
    }
    case InFlight::kStoreWrite: {
      Bulk(f.agent).WriteDone(f.id);
      if (c.tracks_data && IsBulkStore(f)) {
        GlobalTag(f.agent, f.object, f.index) = static_cast<uint16_t>(f.slot);
      }
      Emit(InFlight::kLandsAs[f.kind], f.agent, f.target_cta, f.object, f.index, f.bytes, 0,
           f.pc, true);
      Place(f.index, f.offset, f.agent);
      RecheckGroups(f.agent);
      return;
    }
  }
}

// EngineOptions::tx_pieces: a load that meets 0 < tx-count < its bytes credits tx-count bytes
// (the piece that brings tx-count to 0 and may complete the phase) and leaves the rest in flight
// as an operation of its own, appended like any new operation. Its bytes have not all landed,
// so the piece names no buffer slot and places nothing; the rest does both when it lands.
// The landing read tx-count to choose, so it does not commute with other complete_tx by
// arithmetic (Access::kOther): the option is for runs, replays and the litmus enumeration, not
// for the explorer's reductions.
void Engine::Exec::DeliverPiece(const InFlight& f, const BarAddr& b) {
  const model::MbarrierState& now = Slot(f.slot, Access::kOther);
  const uint32_t piece = static_cast<uint32_t>(now.tx_count);
  if (!CompleteTx(f.agent, b, f.object, piece, f.pc, InFlight::kLandsAs[f.kind], true,
                  static_cast<uint8_t>(f.flags | trace::kFlagPiece), kNoDstSlot, 0, 0)) {
    return;
  }
  InFlight rest = f;
  rest.bytes = f.bytes - piece;
  Issue(rest);
}

// Whether load `f` would land in pieces here (0 < tx-count < its bytes): a run with
// EngineOptions::tx_pieces differs from this one from this landing on. Reads without marking:
// the landing that follows touches the slot anyway.
bool Engine::Exec::CouldLandInPieces(const InFlight& f) const {
  const model::MbarrierState& now = e.barriers_[f.slot];
  return now.life == model::MbarrierLife::kLive && now.tx_count > 0 &&
         static_cast<uint32_t>(now.tx_count) < f.bytes;
}

void Engine::Exec::ReleaseDeferred(uint32_t agent) {
  for (size_t i = 0; i < e.deferred_.size();) {
    const InFlight& d = e.deferred_[i];
    if (d.agent == agent && Cp(agent).AllCompleteBefore(d.id)) {
      Issue(TakeDeferred(i));
    } else {
      ++i;
    }
  }
}

}  // namespace parity::engine

