// Execution: the driving API (Choices, Step, Run) over the step semantics (exec.h), and the
// partial-order reduction's queries that run an agent's code ahead (AgentFuture, PeekFootprint).
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
#include "sim/engine/exec.h"
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
    case WaitKind::kGridDependency: return "griddepcontrol.wait";
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

uint32_t Engine::primary_first_agent() const { return code_->primary_agent; }
uint32_t Engine::primary_first_cluster() const { return code_->primary_cluster; }
uint32_t Engine::num_grids() const { return code_->grids(); }
uint32_t Engine::grid_first_cluster(uint32_t grid) const { return code_->grid_cluster[grid]; }
uint32_t Engine::grid_first_cta(uint32_t grid) const {
  return code_->grid_cluster[grid] * code_->cluster_size;
}
uint32_t Engine::grid_first_agent(uint32_t grid) const { return code_->grid_agent[grid]; }
uint32_t Engine::primary_first_cta() const {
  return code_->primary_cluster * code_->cluster_size;
}

bool Engine::AgentFuture(uint32_t agent, Footprint* out) {
  bool truncated = false;
  return AgentFuture(agent, out, false, &truncated);
}

bool Engine::AgentFuture(uint32_t agent, Footprint* out, bool stop_at_cluster_wait,
                         bool* truncated, std::vector<UpdateTally>* tally, bool cluster_waits,
                         bool exact_st_async, std::vector<NamedAccess>* named) {
  if (tally != nullptr) tally->clear();
  if (named != nullptr) named->clear();
  out->Clear();
  *truncated = false;
  if (agents_[agent].status == kExited) return true;
  if (!code_->role_solo_ok[code_->agents[agent].role]) return false;
  out->Add(GroupsObject(agent));
  Exec x(*this);
  if (!x.SoloFuture(agent, out, stop_at_cluster_wait, truncated, tally, false, nullptr,
                    cluster_waits, exact_st_async, named)) {
    return false;
  }
  if (!*truncated) {
    // Every agent ends by exiting (or the run ends): DoExit's accesses.
    out->Add(ClusterObject(code_->agents[agent].cluster), Access::kExit);
    out->Add(NamedObject(code_->agents[agent].cta_global), Access::kExit);
    if (is_primary_agent(agent)) {
      out->Add(NamedObject(grid_first_cta(code_->agents[agent].grid)), Access::kExit);
    }
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
    if (is_primary_agent(agent)) {
      out->Add(NamedObject(grid_first_cta(code_->agents[agent].grid)), Access::kExit);
    }
  }
  return !out->overflow;
}

bool Engine::ClusterWaitPasses(uint32_t agent) const {
  const uint32_t cluster = code_->agents[agent].cluster;
  return clusters_[cluster].ArrivedInCompletedPhase(agent - code_->cluster_first_agent[cluster]);
}


bool Engine::ReadStateAt(ir::StateFn fn, uint32_t decl, int64_t index, uint32_t cta_global,
                         int64_t* out) const {
  const Code& c = *code_;
  if (fn != ir::StateFn::kLanded) {
    if (decl >= c.barrier_size.size() || index < 0 || index >= c.barrier_size[decl]) return false;
    const model::MbarrierState& st =
        barriers_[cta_global * c.barriers_per_cta + c.barrier_base[decl] +
                  static_cast<uint32_t>(index)];
    *out = fn == ir::StateFn::kPhase     ? static_cast<int64_t>(st.phase)
           : fn == ir::StateFn::kPending ? st.pending_count
                                         : st.tx_count;
    return true;
  }
  if (decl >= c.buffers.size() || index < 0 || index >= c.buffers[decl].stages) return false;
  const uint64_t lo = c.buffers[decl].base + static_cast<uint64_t>(index) * c.buffers[decl].bytes;
  const uint64_t hi = lo + c.buffers[decl].bytes;
  *out = 1;
  for (const InFlight& f : in_flight_) {
    // The shared-memory writes in flight: loads, st.async and cp.async (stores only read).
    uint32_t buffer = 0, slot = 0;
    const AgentInfo& issuer = c.agents[f.agent];
    const ir::Op* op = c.roles[issuer.role][f.pc].op;
    if (f.kind == InFlight::kTmaDeliver || f.kind == InFlight::kBulkDeliver ||
        f.kind == InFlight::kStAsync) {
      if (op == nullptr) continue;
      if (const auto* t = std::get_if<ir::TmaLoad>(op)) buffer = t->dst.buffer;
      else if (const auto* b = std::get_if<ir::BulkLoad>(op)) buffer = b->dst.buffer;
      else if (const auto* st = std::get_if<ir::StAsync>(op)) buffer = st->dst.buffer;
      else continue;
      slot = f.place_slot;
    } else if (f.kind == InFlight::kCpAsync) {
      buffer = f.object;
      slot = f.index;
    } else {
      continue;
    }
    if (issuer.cluster * c.cluster_size + f.target_cta != cta_global) continue;
    const uint64_t at = c.buffers[buffer].base +
                        static_cast<uint64_t>(slot) * c.buffers[buffer].bytes + f.offset;
    // A piece of a load (EngineOptions::tx_pieces) carries part of the bytes: the whole range
    // of the copy is still counted until its last piece lands.
    const uint64_t len = std::max<uint64_t>(f.bytes, 1);
    if (at < hi && lo < at + len) {
      *out = 0;
      return true;
    }
  }
  return true;
}

namespace {
// The state reads of a property, without marking (no step follows an end state).
struct PropertyReader final : ir::StateReader {
  PropertyReader(const Engine& e, uint32_t cta) : engine(e), cta_global(cta) {}
  bool Read(ir::StateFn fn, uint32_t decl, int64_t index, int64_t* out) const override {
    return engine.ReadStateAt(fn, decl, index, cta_global, out);
  }
  const Engine& engine;
  uint32_t cta_global;
};
}  // namespace

Status Engine::EvalProperty(uint32_t id, bool* holds, uint32_t* failing_cta) const {
  const Code& c = *code_;
  const ir::Program& p = *c.program;
  *holds = true;
  for (uint32_t cta = 0; cta < c.num_ctas; ++cta) {
    const uint32_t rank = cta % c.cluster_size;
    const ir::BuiltinValues b = ir::MakeBuiltins(
        rank, rank % c.cluster_m, rank / c.cluster_m, c.cluster_m, c.cluster_n,
        cta / c.cluster_size, 0, c.clusters);
    PropertyReader reader(*this, cta);
    ir::EvalEnv env;
    env.params = c.params.data();
    env.num_params = c.params.size();
    env.builtins = &b;
    env.state = &reader;
    ir::EvalFault fault;
    const int64_t v = ir::EvalFast(p, p.assertions[id].cond, env, &fault);
    if (!fault.ok()) return ir::EvalFaultStatus(p, fault);
    if (v == 0) {
      *holds = false;
      if (failing_cta != nullptr) *failing_cta = cta;
      return Status::Ok();
    }
  }
  return Status::Ok();
}

uint64_t Engine::ExistsHeld() const {
  const ir::Program& p = *code_->program;
  uint64_t out = 0;
  uint32_t k = 0;
  for (uint32_t id = 0; id < p.assertions.size() && k < 64; ++id) {
    if (p.assertions[id].kind != ir::Assertion::Kind::kExists) continue;
    bool holds = false;
    if (EvalProperty(id, &holds).ok() && holds) out |= uint64_t{1} << k;
    ++k;
  }
  return out;
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
  if (is_primary_agent(agent)) out.push_back(NamedObject(grid_first_cta(info.grid)));
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
    else if (const auto* o = std::get_if<ir::GridDepControl>(&op);
             o != nullptr && o->kind == ir::GridDepControl::Kind::kWait) {
      // griddepcontrol.wait reads whether the prerequisite grid's agents exited (their
      // exits touch their CTAs' named-barrier objects).
      const uint32_t pre = prerequisite_grid(info.grid);
      if (pre < num_grids()) {
        for (uint32_t x = grid_first_cta(pre); x < grid_first_cta(pre + 1); ++x) {
          out.push_back(NamedObject(x));
        }
      }
    }
    else if (const auto* o = std::get_if<ir::BufferAccess>(&op);
             std::holds_alternative<ir::GlobalReadback>(op) ||
             (c.tracks_data && o != nullptr && o->write)) {
      for (uint32_t x = 0; x < c.agents.size(); ++x) out.push_back(GroupsObject(x));
    }
    if (const auto* o = std::get_if<ir::BufferAccess>(&op);
        o != nullptr && o->buf.cta != ir::kNoExpr) {
      // A DSMEM access reads whether the peer CTA exited (its named-barrier object).
      for (uint32_t r = 0; r < c.cluster_size; ++r) {
        out.push_back(NamedObject(info.cluster * c.cluster_size + r));
      }
    }
    // Group ops, stores, cluster and named barriers: the three objects above.
  }
  // Assertions: what their state reads read (Exec::ReadState).
  for (const Instr& in : c.roles[info.role]) {
    if (in.kind != Instr::kAssert) continue;
    ForEachStateRead(*c.program, in.e1, [&](ir::StateFn fn, uint32_t decl, ir::ExprId) {
      if (fn == ir::StateFn::kLanded) {
        const uint32_t first = info.cluster * c.cluster_size * c.barriers_per_cta;
        for (uint32_t o = 0; o < c.cluster_size * c.barriers_per_cta; ++o) out.push_back(first + o);
        for (uint32_t x = 0; x < c.agents.size(); ++x) out.push_back(GroupsObject(x));
      } else {
        ir::BarrierRef ref;
        ref.barrier = decl;
        bar(ref, false);
      }
    });
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

}  // namespace parity::engine
