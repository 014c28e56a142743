// The look-ahead of the partial-order reduction (Engine::AgentFuture, PeekFootprint): an agent's
// code run ahead on a copy of its registers, collecting the objects its remaining operations
// touch, without changing the engine's state; and the barrier a wait blocks on.
#include <cstdint>
#include <vector>

#include "sim/engine/exec.h"

namespace parity::engine {

bool Engine::Exec::SoloFuture(uint32_t a, Footprint* fp, bool stop_at_cluster_wait, bool* truncated,
                              std::vector<UpdateTally>* tally, bool one_op, uint32_t* blocks_on,
                              bool cluster_waits, bool exact_st_async,
                              std::vector<NamedAccess>* named) {
  const AgentInfo& info = c.agents[a];
  const std::vector<Instr>& code = c.roles[info.role];
  const ir::EvalEnv env0 = Env(a);
  // The look-ahead evaluates on the agent's variables in place and puts them back before it
  // returns (no change of state: unmarked, the one write past Exec's accessors).
  int64_t* vars = run_.vars_.data() + c.var_offset[a];
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
  // An assert before the next operation (checked in the same step) makes that step more than a
  // wait that only blocks: it reads the state and may fail, so *blocks_on stays kNoSlot.
  bool asserts = false;
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
      for (uint32_t d = 0; d < c.cluster_size; ++d)
        add(SlotOf(info.cluster, d, ref.barrier, b.index));
    } else {
      add(b.slot);
    }
    return true;
  };
  UpdateTally breaks;
  breaks.breaks = true;
  *truncated = false;
  // Operations and control steps together count against the look-ahead's bound.
  uint32_t steps = 0;
  bool first_op = true;  // no operation reached yet (NamedAccess::first)
  auto exit_read = [&](uint32_t object) {
    if (named == nullptr) return;
    NamedAccess r;
    r.object = object;
    r.id = NamedAccess::kExitRead;
    r.valid = true;
    r.first = first_op;
    named->push_back(r);
  };
  for (; ok; ++pc, ++steps, first_op = false) {
    if (fp->overflow) {
      ok = false;
      break;
    }
    // A pass beyond a `while` bound, a bad step or an over-long walk is a run error or worse:
    // the look-ahead gives up there.
    const Control r = WalkToOp(
        code.data(), &pc, vars, [&](ir::ExprId id, int64_t* v) { return Ev(id, env0, v); },
        1u << 16, &steps);
    if (r == Control::kEnd) break;
    if (r != Control::kAtOp && r != Control::kAtAssert) {
      ok = false;
      break;
    }
    const Instr& in = code[pc];
    if (r == Control::kAtAssert) {
      // The objects its state reads read (Exec::ReadState), as kOther accesses, and a
      // breaking tally record per barrier slot: the balance analysis must not let updates
      // of a slot an assert reads commute around it.
      bool good = true;
      ForEachStateRead(p, in.e1, [&](ir::StateFn fn, uint32_t decl, ir::ExprId index) {
        // The tally records the reads in program order among the updates and gates: the
        // held-phase rule (explore/held_phase.cc) counts only the accesses of a unit ahead of
        // its gate, and knows them from these records.
        auto read_slot = [&](uint32_t slot) {
          fp->Add(slot);
          if (tally != nullptr) {
            UpdateTally t = breaks;
            t.slot = slot;
            tally->push_back(t);
          }
        };
        if (fn == ir::StateFn::kLanded) {
          const uint32_t first = info.cluster * c.cluster_size * c.barriers_per_cta;
          for (uint32_t o = 0; o < c.cluster_size * c.barriers_per_cta; ++o) read_slot(first + o);
          for (uint32_t x = 0; x < c.agents.size(); ++x) fp->Add(GroupsObj(x));
          return;
        }
        ir::EvalFault fault;
        const int64_t i = ir::EvalFast(p, index, env0, &fault);
        if (!fault.ok() || i < 0 || i >= c.barrier_size[decl]) {
          good = false;  // a nested state read or a fault: the static footprint instead
          return;
        }
        read_slot(info.cta_global * c.barriers_per_cta + c.barrier_base[decl] +
                  static_cast<uint32_t>(i));
      });
      if (!(ok = good)) break;
      asserts = true;
      continue;  // on from the next instruction
    }
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
      if (ok && one_op && blocks_on != nullptr && !o->test_only && !asserts) {
        *blocks_on = WaitBlocksOn(a, *o, env0);
      }
      BarAddr b;
      if (ok && tally != nullptr && ResolveBar(a, o->bar, env0, nullptr, &b)) {
        // A gate (UpdateTally::gate), or a wait that only reads the phase (kReadsPhase): a
        // test_wait, a token wait, a wait on a peer CTA's barrier (a run-time error whatever
        // the phase), or a parity that does not evaluate here (the wait faults when the agent
        // gets there; the look-ahead itself stays exact).
        UpdateTally g;
        g.slot = b.slot;
        g.gate = UpdateTally::kReadsPhase;
        if (!o->test_only && o->token_var == 0xffffffffu && o->parity != ir::kNoExpr &&
            b.cta == info.cta) {
          ir::EvalFault fault;
          const int64_t par = ir::EvalFast(p, o->parity, env0, &fault);
          if (fault.ok() && (par == 0 || par == 1)) g.gate = static_cast<int8_t>(par);
        }
        tally->push_back(g);
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
    } else if (const auto* o = std::get_if<ir::StAsync>(&op); o != nullptr && !exact_st_async) {
      ok = bar_slots(o->bar, true, -1, Access::kCompleteTx, &breaks);
    } else if (const auto* o = std::get_if<ir::StAsync>(&op)) {
      // Do(StAsync): the complete_tx lands on the barrier of the destination CTA (the
      // barrier operand's own CTA when it names one), with the store's bytes. Both are
      // operands evaluated on the agent's variables, as exact as any other barrier operand
      // here: one slot, not the barrier in every CTA of the cluster, and an additive update
      // that the balance analysis can count.
      BufAddr dst;
      BarAddr b;
      ok = ResolveBuf(a, o->dst, env0, nullptr, &dst) && ResolveBar(a, o->bar, env0, nullptr, &b);
      if (ok) {
        if (o->bar.cta == ir::kNoExpr) {
          b.slot = SlotOf(info.cluster, dst.cta, o->bar.barrier, b.index);
        }
        fp->Add(b.slot, Access::kCompleteTx);
        if (tally != nullptr) {
          UpdateTally t;
          t.slot = b.slot;
          t.complete = dst.bytes;
          // Zero bytes change nothing (as for complete_tx): no update a holder holds.
          t.breaks = dst.bytes == 0;
          tally->push_back(t);
        }
      }
    } else if (const auto* o = std::get_if<ir::CpAsyncMbarrierArrive>(&op)) {
      ok = bar_slots(o->bar, false, -1, Access::kOther, &breaks);
    }
    else if (std::holds_alternative<ir::ClusterArrive>(op)) {
      fp->Add(ClusterObj(info.cluster), Access::kClusterArrive);
    } else if (std::holds_alternative<ir::ClusterWait>(op)) {
      if (cluster_waits) fp->Add(ClusterObj(info.cluster), Access::kWait);
      if (one_op && blocks_on != nullptr && !asserts) {
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
    } else if (const auto* o = std::get_if<ir::NamedBarrier>(&op)) {
      fp->Add(NamedObj(info.cta_global));
      if (named != nullptr) {
        // The operands as Do(NamedBarrier) evaluates them; `valid` only where its model
        // accepts them (NamedBarriers::Arrive: S1001, S1002).
        NamedAccess r;
        r.object = NamedObj(info.cta_global);
        r.sync = o->sync;
        r.first = first_op;
        ir::EvalFault fault;
        const int64_t id = ir::EvalFast(p, o->id, env0, &fault);
        const int64_t threads = fault.ok() ? ir::EvalFast(p, o->threads, env0, &fault) : 0;
        r.valid = fault.ok() && id >= 0 && id < model::kNamedBarrierCount && threads > 0 &&
                  threads <= 0xffffff && threads % model::kWarpSize == 0 && info.threads > 0;
        r.id = r.valid ? static_cast<uint32_t>(id) : 0;
        r.count = r.valid ? static_cast<uint32_t>(threads) : 0;
        named->push_back(r);
      }
    } else if (const auto* o = std::get_if<ir::GridDepControl>(&op);
               o != nullptr && o->kind == ir::GridDepControl::Kind::kWait &&
               info.grid + 1 < c.grids()) {
      // Do(GridDepControl): the prerequisite grid's CTAs' exits (their named-barrier objects).
      const uint32_t pre = info.grid + 1;
      for (uint32_t x = c.grid_cluster[pre] * c.cluster_size;
           x < c.grid_cluster[pre + 1] * c.cluster_size; ++x) {
        fp->Add(NamedObj(x));
        exit_read(NamedObj(x));
      }
    }
    if (const auto* o = std::get_if<ir::BufferAccess>(&op);
        o != nullptr && o->buf.cta != ir::kNoExpr) {
      // A DSMEM access reads whether the peer CTA exited (Do(BufferAccess)).
      int64_t cta = 0;
      if (!(ok = Ev(o->buf.cta, env0, &cta))) break;
      if (cta >= 0 && cta < c.cluster_size) {
        fp->Add(NamedObj(info.cluster * c.cluster_size + static_cast<uint32_t>(cta)));
        exit_read(NamedObj(info.cluster * c.cluster_size + static_cast<uint32_t>(cta)));
      }
    }
    if (const auto* o = std::get_if<ir::BufferAccess>(&op);
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
  }
  std::copy(saved, saved + nv, vars);
  if (e.outcome_ != saved_outcome) {  // a fault while evaluating: undo it
    run_.outcome_ = saved_outcome;
    run_.result_.error = Status();
    ok = false;
  }
  return ok;
}

uint32_t Engine::Exec::WaitBlocksOn(uint32_t a, const ir::MbarrierWait& op,
                                    const ir::EvalEnv& env) {
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

}  // namespace parity::engine

