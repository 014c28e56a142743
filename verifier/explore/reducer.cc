// Reducer (reducer.h): the units of a state, their futures (the memo of Engine::AgentFuture),
// the general closure and the dependency relation it closes under (Conflict, Meets).
#include "verifier/explore/reducer.h"

#include <algorithm>
#include <cassert>
#include <cstdint>
#include <utility>
#include <vector>

namespace parity::verifier::reduction {

Reducer::Reducer(const Engine& root, bool guarded_waits, bool masks, bool phase_bounded,
                 bool held_phase, bool exact_peers, bool arrival_costs, bool named_rule)
    : n_obj_(root.num_objects()),
      guarded_(guarded_waits),
      phase_bounded_(phase_bounded),
      held_phase_(held_phase && guarded_waits),
      exact_peers_(exact_peers),
      arrival_costs_(arrival_costs),
      named_rule_(named_rule) {
  masks_ = masks && n_obj_ <= 64;
  n_slots_ = root.num_barrier_slots();
  for (uint32_t a = 0; a < root.num_agents(); ++a) {
    n_clusters_ = std::max(n_clusters_, root.agent_info(a).cluster + 1);
  }
  static_future_.resize(root.num_agents());
  for (uint32_t a = 0; a < root.num_agents(); ++a) {
    static_future_[a].assign(n_obj_, kNone);
    for (uint32_t o : root.AgentMayTouch(a)) static_future_[a][o] = kOther;
  }
  peek_.resize(root.num_agents());
  static_mask_.assign(root.num_agents(), 0);
  static_km_.assign(root.num_agents(), KindMasks{});
  for (uint32_t a = 0; a < root.num_agents(); ++a) {
    for (uint32_t o = 0; o < n_obj_; ++o) {
      if (static_future_[a][o] != kNone) static_mask_[a] |= ObjBit(o);
    }
    static_km_[a].k[kOther] = static_km_[a].any = static_mask_[a];
  }
}

std::vector<Reducer::SlotReport> Reducer::Report(Engine& e) {
  const uint32_t n_agents = static_cast<uint32_t>(e.num_agents());
  e_ = &e;
  n_units_ = 0;
  full_.resize(n_agents);
  any_gate_ = false;
  for (uint32_t a = 0; a < n_agents; ++a) {
    full_[a] = Future(e, a, false);
    any_gate_ = any_gate_ || (e.agent_state(a).status != 2 && !full_[a]->seq.empty());
  }
  UpdateAgentSums(e);
  std::vector<SlotReport> out;
  for (uint32_t o = 0; o < e.num_barrier_slots(); ++o) {
    SlotReport b;
    b.slot = o;
    if (n_inexact_ == 0) {
      engine::UpdateTally t = WholeSums(e, o);
      b.whole = BalancedSlot(e.slot_state(o), t);
      if (MayGate(e, o)) t = GatedSums(e, o);
      b.phase = b.whole || BalancedSlot(e.slot_state(o), t);
      b.arrivals = t.arrivals;
      b.expect = t.expect;
      b.complete = t.complete;
    }
    out.push_back(b);
  }
  return out;
}

const Footprint* Reducer::Peek(Engine& e, uint32_t a, uint32_t* blocks_on) {
  PeekMemo& m = peek_[a];
  const uint32_t pc = e.agent_state(a).pc;
  const uint64_t gen = e.agent_state(a).gen;
  // The same gen: the same pc and variables (AgentState::gen), no need to compare them.
  auto same_vars = [&] {
    return std::equal(m.vars.begin(), m.vars.end(), e.agent_vars(a),
                      e.agent_vars(a) + e.agent_num_vars(a));
  };
  if (m.valid && (m.gen == gen || (m.pc == pc && same_vars())) &&
      (m.wait_slot == Engine::kNoSlot || e.slot_state(m.wait_slot) == m.wait_state)) {
    assert(m.pc == pc && same_vars());
    m.gen = gen;
    if (blocks_on != nullptr) *blocks_on = m.blocks_on;
    return &m.fp;
  }
  m.valid = false;
  uint32_t b = Engine::kNoSlot;
  if (!e.PeekFootprint(a, &m.fp, &b)) {
    if (blocks_on != nullptr) *blocks_on = Engine::kNoSlot;
    return nullptr;
  }
  if (blocks_on != nullptr) *blocks_on = b;
  m.wait_slot = Engine::kNoSlot;
  bool memo = true;
  for (uint32_t k = 0; k < m.fp.n; ++k) {
    if (m.fp.kinds[k] != engine::Access::kWait) continue;
    if (m.fp.objects[k] >= n_slots_ || m.wait_slot != Engine::kNoSlot) {
      memo = false;  // a cluster wait (or more than one wait)
    } else {
      m.wait_slot = m.fp.objects[k];
    }
  }
  if (memo) {
    m.valid = true;
    m.pc = pc;
    m.gen = gen;
    m.vars.assign(e.agent_vars(a), e.agent_vars(a) + e.agent_num_vars(a));
    m.blocks_on = blocks_on != nullptr ? b : Engine::kNoSlot;
    if (m.wait_slot != Engine::kNoSlot) m.wait_state = e.slot_state(m.wait_slot);
  }
  return &m.fp;
}

void Reducer::Choose(Engine& e, const std::vector<Choice>& choices,
                     const std::vector<const Footprint*>& fps, const std::vector<uint32_t>& guard,
                     std::vector<uint8_t>* take) {
  const size_t n_enabled = choices.size();
  const uint32_t n_agents = static_cast<uint32_t>(e.num_agents());
  e_ = &e;
  balanced_ready_ = false;
  futures_set_ = false;
  full_.resize(n_agents);
  any_gate_ = false;
  for (uint32_t a = 0; a < n_agents; ++a) {
    full_[a] = Future(e, a, false);
    any_gate_ = any_gate_ || (e.agent_state(a).status != 2 && !full_[a]->seq.empty());
  }
  stuck_.assign(n_agents, 0);
  stuck_may_known_.assign(n_agents, 0);
  stuck_may_.resize(n_agents);
  if (masks_) {
    size_t n_units = n_enabled;
    for (uint32_t a = 0; a < n_agents; ++a) {
      n_units += (!guard.empty() && guard[a] != Engine::kNoSlot) ||
                 e.agent_state(a).status == 1;
    }
    if (n_units <= 64) {
      trunc_km_.assign(n_agents, nullptr);
      ChooseMasks(e, choices, fps, guard, take);
      return;
    }
  }
  trunc_.assign(n_agents, nullptr);
  trunc_mask_.resize(n_agents);

  n_units_ = 0;
  for (size_t i = 0; i < n_enabled; ++i) {
    Unit& u = NewUnit();
    u.enabled = true;
    const Footprint& fi = *fps[i];
    u.now_all = fi.overflow;
    for (uint32_t k = 0; k < fi.n; ++k) {
      if (!Shared(choices[i], fi, k)) continue;
      u.now.push_back({fi.objects[k], static_cast<uint8_t>(fi.kinds[k])});
    }
    for (const auto& [o, k] : u.now) u.now_mask |= ObjBit(o);
    if (choices[i].kind == Choice::Kind::kAgent) {
      u.agent = choices[i].index;
      continue;
    }
    // An in-flight operation's future: its step's objects and, for a delivery, its slot
    // (a sparse list); a cp.async completion may release the agent's deferred
    // cp.async.mbarrier.arrive: the issuing agent's whole static future.
    const Engine::InFlight& f = e.in_flight_ops()[choices[i].index];
    if (f.kind == Engine::InFlight::kCpAsync) {
      u.own_dense = &static_future_[f.agent];
      u.own_mask = static_mask_[f.agent];
      continue;
    }
    for (const auto& [o, k] : u.now) MergeOwn(u, o, k);
    switch (f.kind) {
      case Engine::InFlight::kTmaDeliver:
      case Engine::InFlight::kBulkDeliver:
      case Engine::InFlight::kStAsync:
        MergeOwn(u, f.slot, kTx);
        u.own_slot = f.slot;
        break;
      case Engine::InFlight::kCpAsyncArrive:
        MergeOwn(u, f.slot, kOther);
        break;
      default:  // stores: the agent's group state
        MergeOwn(u, e.GroupsObject(f.agent), kOther);
        break;
    }
  }
  for (uint32_t a = 0; a < n_agents; ++a) {
    const Engine::AgentState& s = e.agent_state(a);
    if (!guard.empty() && guard[a] != Engine::kNoSlot) {
      Unit& u = NewUnit();
      u.enabled = false;
      u.agent = a;
      u.now.push_back({guard[a], kWaitNes});
      u.now_mask = ObjBit(guard[a]);
      continue;
    }
    if (s.status != 1) continue;  // only blocked agents (runnable ones are choices)
    Unit& u = NewUnit();
    u.enabled = false;
    u.agent = a;
    const engine::AgentInfo& info = e.agent_info(a);
    switch (s.wait) {
      case engine::WaitKind::kMbarrierParity:
      case engine::WaitKind::kMbarrierToken:
        u.now.push_back({s.wait_slot, kWaitNes});
        break;
      case engine::WaitKind::kClusterBarrier:
        u.now.push_back({e.ClusterObject(info.cluster), kWaitNes});
        break;
      case engine::WaitKind::kNamedBarrier:
        u.now.push_back({e.NamedObject(info.cta_global), kOther});
        break;
      case engine::WaitKind::kCpAsyncGroups:
      case engine::WaitKind::kBulkGroups:
        u.now.push_back({e.GroupsObject(a), kOther});
        break;
      case engine::WaitKind::kGridDependency: {
        // Woken by the prerequisite grid's exits, which touch its CTAs' named-barrier objects
        // (a blocked griddepcontrol.wait has one).
        const uint32_t pre = info.grid + 1;
        for (uint32_t x = e.grid_first_cta(pre); x < e.grid_first_cta(pre + 1); ++x) {
          u.now.push_back({e.NamedObject(x), kOther});
        }
        break; }
      case engine::WaitKind::kNone:
        u.now_all = true;
        break;
    }
    for (const auto& [o, k] : u.now) u.now_mask |= ObjBit(o);
  }
  if (named_rule_) NamedJoinsGeneral();
  const size_t n = n_units_;
  unit_cluster_.resize(n);
  for (size_t y = 0; y < n; ++y) {
    unit_cluster_[y] = units_[y].agent != kNoAgent ? e.agent_info(units_[y].agent).cluster
                                                   : 0xffffffffu;
  }
  in_.assign(n, 0);
  fmask_.resize(n);
  // Pass 1: the first start whose closure holds one enabled step.
  size_t best = n + 1;
  for (size_t start = 0; start < n_enabled; ++start) {
    SetFutures(start);
    if (Closure(start, 2) == 1) {
      best = 1;
      best_set_ = in_;
      break;
    }
  }
  // Pass 2 (no singleton): the smallest closure over every start.
  for (size_t start = 0; start < n_enabled && best > 1; ++start) {
    SetFutures(start);
    const size_t enabled_in = Closure(start, best);
    if (enabled_in < best) {
      best = enabled_in;
      best_set_ = in_;
    }
  }
  take->assign(n_enabled, 0);
  for (size_t i = 0; i < n_enabled; ++i) (*take)[i] = best_set_[i];
}

Reducer::Unit& Reducer::NewUnit() {
  if (n_units_ == units_.size()) units_.emplace_back();
  Unit& u = units_[n_units_++];
  u.enabled = false;
  u.now_all = false;
  u.agent = kNoAgent;
  u.now.clear();
  u.own.clear();
  u.own_dense = nullptr;
  u.future = nullptr;
  u.own_slot = 0xffffffffu;
  u.now_mask = u.own_mask = u.future_mask = 0;
  u.named_obj = kNoNamed;
  u.named_join.clear();
  return u;
}

void Reducer::MergeOwn(Unit& u, uint32_t o, uint8_t k) {
  u.own_mask |= ObjBit(o);
  for (auto& [oo, kk] : u.own) {
    if (oo == o) {
      kk = static_cast<uint8_t>(
          engine::MergeAccess(static_cast<engine::Access>(kk), static_cast<engine::Access>(k)));
      return;
    }
  }
  u.own.push_back({o, k});
}

void Reducer::SetFutures(size_t start) {
  const Engine& e = *e_;
  uint32_t trunc_cluster = 0xffffffffu;
  size_t own = n_units_;  // the truncating unit itself keeps its full future
  if (units_[start].agent != kNoAgent && units_[start].enabled &&
      !e.ClusterArrivalOutstanding(units_[start].agent)) {
    trunc_cluster = e.agent_info(units_[start].agent).cluster;
    own = start;
  }
  if (!futures_set_ || trunc_cluster != futures_cluster_) {
    futures_set_ = true;
    futures_cluster_ = trunc_cluster;
    futures_full_ = n_units_;
    for (size_t y = 0; y < n_units_; ++y) {
      Unit& u = units_[y];
      if (u.agent == kNoAgent) {
        u.future = u.own_dense;
        u.future_mask = u.own_mask;
      } else if (unit_cluster_[y] == trunc_cluster) {
        SetTrunc(y);
      } else {
        u.future = &full_[u.agent]->kinds;
        u.future_mask = full_[u.agent]->mask;
      }
      fmask_[y] = u.future_mask;
    }
  }
  // Every agent unit of the truncating cluster has its truncated future except `own`.
  if (futures_full_ != own) {
    if (futures_full_ < n_units_) SetTrunc(futures_full_);
    if (own < n_units_) {
      Unit& u = units_[own];
      u.future = &full_[u.agent]->kinds;
      u.future_mask = full_[u.agent]->mask;
      fmask_[own] = u.future_mask;
    }
    futures_full_ = own;
  }
}

void Reducer::SetTrunc(size_t y) {
  Unit& u = units_[y];
  if (e_->ClusterWaitPasses(u.agent)) {
    // It arrived in a cluster phase that has completed: its next wait passes without the
    // truncating agent, so its future does not end there (a review found the reduced search
    // missing an arrival behind such a wait).
    u.future = &full_[u.agent]->kinds;
    u.future_mask = full_[u.agent]->mask;
    fmask_[y] = u.future_mask;
    return;
  }
  if (trunc_[u.agent] == nullptr) {
    const CacheEntry* c = Future(*e_, u.agent, true);
    trunc_[u.agent] = &c->kinds;
    trunc_mask_[u.agent] = c->mask;
  }
  u.future = trunc_[u.agent];
  u.future_mask = trunc_mask_[u.agent];
  fmask_[y] = u.future_mask;
}

size_t Reducer::Closure(size_t start, size_t bound) {
  const size_t n = n_units_;
  std::fill(in_.begin(), in_.end(), 0);
  work_.clear();
  in_[start] = 1;
  work_.push_back(start);
  size_t enabled_in = 1;
  while (!work_.empty() && enabled_in < bound) {
    const size_t x = work_.back();
    work_.pop_back();
    const Unit& ux = units_[x];
    if (n <= 64 && !ux.now_all) {
      // Meets needs a common object: the candidates by the objects' bits first (one
      // branch-free pass), then Meets on them in ascending order as below.
      const uint64_t nm = ux.now_mask;
      uint64_t cand = 0, in_bits = 0;
      for (size_t y = 0; y < n; ++y) {
        cand |= uint64_t{(nm & fmask_[y]) != 0} << y;
        in_bits |= uint64_t{in_[y] != 0} << y;
      }
      for (cand &= ~in_bits; cand != 0 && enabled_in < bound; cand &= cand - 1) {
        const size_t y = static_cast<size_t>(__builtin_ctzll(cand));
        if (Meets(y, x)) {
          in_[y] = 1;
          work_.push_back(y);
          if (units_[y].enabled) ++enabled_in;
        }
      }
      continue;
    }
    for (size_t y = 0; y < n && enabled_in < bound; ++y) {
      if (in_[y] || (!ux.now_all && (ux.now_mask & fmask_[y]) == 0)) continue;
      if (ux.now_all || Meets(y, x)) {
        in_[y] = 1;
        work_.push_back(y);
        if (units_[y].enabled) ++enabled_in;
      }
    }
  }
  return enabled_in;
}

bool Reducer::Conflict(uint32_t o, uint8_t k, uint8_t fk) const {
  if (fk == kNone) return false;
  if (k == kWaitNes) {
    // A blocked mbarrier wait is enabled only by the phase completing. With the pending count
    // above zero that needs an arrival (kArrive or kOther; complete_tx never lowers the
    // pending count), so only units that may arrive (or init/inval) are necessary to enable it.
    if (TxCommutes(o)) return fk == kOther || fk == kArr;
    return fk != kWaitK;  // another wait never enables it
  }
  if (k == kWaitK && fk == kWaitK) return false;  // two waits commute
  if (k == kOther || fk == kOther) return true;
  const bool bal = o < balanced_.size() && balanced_[o];
  if (k == kTx && fk == kTx) return !(bal || TxCommutes(o));
  if ((k == kTx || k == kArr) && (fk == kTx || fk == kArr)) return !bal;
  if (k == kCArrive && fk == kCArrive) return false;
  if (k == kExitAcc && fk == kExitAcc) return false;
  return true;
}

bool Reducer::Meets(size_t y, size_t x) {
  EnsureBalanced();
  if (const Unit& ux = units_[x]; ux.named_obj != kNoNamed &&
      FutureKind(y, ux.named_obj) != kNone &&
      std::binary_search(ux.named_join.begin(), ux.named_join.end(), y)) {
    return true;  // taken in by the named-barrier rule (reducer_named.cc)
  }
  for (const auto& [o, k] : units_[x].now) {
    uint8_t fk = FutureKind(y, o);
    if (fk == kNone) continue;
    if (held_phase_ && (k == kTx || k == kArr) && o < balanced_.size() && balanced_[o]) {
      // x holds a necessary update of o's current phase: y counts only what it does to o
      // before its wait on that phase (explore/held_phase.cc).
      const uint8_t hk = HeldPhaseKind(y, o, fk);
      if (hk != fk && Conflict(o, k, fk) && (hk == kNone || !Conflict(o, k, hk))) {
        ++held_phase_cuts_;
      }
      fk = hk;
      if (fk == kNone) continue;
    }
    if (k == kWaitK && o < n_slots_ && units_[x].agent != kNoAgent &&
        Stuck(o, units_[x].agent)) {
      // x's wait passes (or fails) the same way after any steps outside the set: o's
      // current phase cannot complete before x's agent moves (StuckWhileStopped). A unit
      // that cannot update o before then only waits on it; a complete_tx commutes with the
      // wait; an arrival reads the observed flag the wait may set (M1009): it must be set.
      if (!StuckMay(units_[x].agent, units_[y].agent)) continue;
      if (fk == kTx || (fk == kArr && e_->slot_state(o).preceding_phase_observed)) continue;
    }
    if (o < balanced_.size() && balanced_[o]) {
      // On a balanced barrier the phase completes exactly with the last of the outstanding
      // updates (ComputeBalanced), so while a unit of the set still holds one, no step
      // outside the set completes it, and no update outside the set is observable by a
      // wait (a wait and an update that does not complete the phase commute: the wait reads
      // only the phase).
      const bool upd_k = k == kTx || k == kArr;
      const bool upd_f = fk == kTx || fk == kArr;
      if (k == kWaitNes && complete_with_last_[o]) {
        // A blocked wait: every path that enables it completes the phase and so contains
        // every outstanding update; one holder of one is a necessary enabling set.
        const std::vector<uint32_t>& hs = holders_[o];
        if (!hs.empty()) {
          if (HeldInSet(o, x)) continue;
          if (hs[0] == y) return true;
          continue;
        }
      }
      // The wait may set the "preceding phase observed" flag that an arrive-on reads (M1009):
      // with an arrival involved the flag must already be set (it stays set: the phase does
      // not complete outside the set).
      const bool flag_ok = observed_[o] != 0;
      if (upd_k && fk == kWaitK && (k == kTx || flag_ok) && HeldInSet(o, x)) continue;
      if (k == kWaitK && upd_f && (fk == kTx || flag_ok) && HeldInSet(o, x)) continue;
      if (upd_k && fk == kOther && flag_ok && HeldInSet(o, x)) continue;
    }
    if (Conflict(o, k, fk)) return true;
  }
  return false;
}

bool Reducer::HeldInSet(uint32_t o, size_t x) const {
  for (uint32_t h : holders_[o]) {
    if (h != x && in_[h]) return true;
  }
  return SelfHeld(o, x);
}

bool Reducer::SelfHeld(uint32_t o, size_t x) const {
  const Unit& u = units_[x];
  if (u.agent == kNoAgent) return false;
  const CacheEntry& c = *full_[u.agent];
  if (!std::binary_search(c.updates.begin(), c.updates.end(), o)) return false;
  const uint32_t n = gated_[o] ? gated_pre_[size_t{o} * e_->num_agents() + u.agent]
                               : std::binary_search(c.multi.begin(), c.multi.end(), o) ? 2 : 1;
  bool now_upd = false;
  for (const auto& [no, k] : u.now) now_upd = now_upd || (no == o && (k == kTx || k == kArr));
  return n >= (now_upd ? 2u : 1u);
}

const Reducer::CacheEntry* Reducer::Future(Engine& e, uint32_t a, bool truncate) {
  const Engine::AgentState& st = e.agent_state(a);
  // Most steps move one agent: the others' keys are those of the previous state (the same
  // AgentState::gen: the same pc, status and variables, no need to compare them).
  std::vector<const CacheEntry*>& last = last_[truncate ? 1 : 0];
  std::vector<uint64_t>& last_gen = last_gen_[truncate ? 1 : 0];
  if (last.size() <= a) {
    last.resize(a + 1, nullptr);
    last_gen.resize(a + 1, 0);
  }
  if (const CacheEntry* c = last[a]; c != nullptr && last_gen[a] == st.gen) {
    assert(c->pc == st.pc && c->status == st.status &&
           std::equal(c->vars.begin(), c->vars.end(), e.agent_vars(a),
                      e.agent_vars(a) + e.agent_num_vars(a)));
    return c;
  }
  last_gen[a] = st.gen;
  const int64_t* vars = e.agent_vars(a);
  const uint32_t nv = e.agent_num_vars(a);
  if (const CacheEntry* c = last[a];
      c != nullptr && c->pc == st.pc && c->status == st.status &&
      std::equal(c->vars.begin(), c->vars.end(), vars, vars + nv)) {
    return c;
  }
  uint64_t h = (uint64_t{a} << 33) ^ (uint64_t{st.pc} << 1) ^ (truncate ? 1 : 0) ^
               (uint64_t{st.status} << 60);
  for (uint32_t i = 0; i < nv; ++i) {
    h ^= static_cast<uint64_t>(vars[i]) + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
  }
  // A strong mix (the table indexes by the low bits).
  h ^= h >> 31;
  h *= 0x7fb5d329728ea185ull;
  h ^= h >> 27;
  h *= 0x81dadef4bc2dd44dull;
  h ^= h >> 33;
  // Open addressing over entries_ (index + 1; 0: empty), at most half full.
  if ((entries_.size() + 1) * 2 > ctab_.size()) GrowCacheTable();
  size_t i = h & (ctab_.size() - 1);
  for (; ctab_[i] != 0; i = (i + 1) & (ctab_.size() - 1)) {
    const CacheEntry& c = entries_[ctab_[i] - 1];
    if (c.hash == h && c.agent == a && c.pc == st.pc && c.truncate == truncate &&
        c.status == st.status && std::equal(c.vars.begin(), c.vars.end(), vars, vars + nv)) {
      last[a] = &c;
      return &c;
    }
  }
  ctab_[i] = static_cast<uint32_t>(entries_.size() + 1);
  CacheEntry c;
  c.hash = h;
  c.agent = a;
  c.pc = st.pc;
  c.status = st.status;
  c.truncate = truncate;
  c.vars.assign(vars, vars + nv);
  bool truncated = false;
  // Exact peers (explore.h): with guarded waits a barrier.cluster.wait touches no shared
  // object, in a future as in a step, so it is left out (a peer's wait would make its
  // cluster arrivals look dependent with others'); an st.async counts the one barrier slot
  // it completes, with its bytes.
  if (e.AgentFuture(a, &scratch_, truncate, &truncated, &tally_scratch_,
                    /*cluster_waits=*/!(guarded_ && exact_peers_),
                    /*exact_st_async=*/exact_peers_,
                    named_rule_ && !truncate ? &named_scratch_ : nullptr)) {
    if (named_rule_ && !truncate) {
      c.named = named_scratch_;
      c.named_exact = true;
    }
    c.kinds.assign(n_obj_, kNone);
    for (uint32_t i = 0; i < scratch_.n; ++i) {
      Merge(c.kinds, scratch_.objects[i], static_cast<uint8_t>(scratch_.kinds[i]));
    }
    c.exact = true;
    // One record per slot, by slot (the look-ahead gives one per operation: summed in
    // tally_acc_, indexed by slot).
    touched_.clear();
    bool any_gate = false;
    for (const engine::UpdateTally& t : tally_scratch_) {
      if (t.gate >= 0) {  // a gate, or a wait that only reads (kept in seq, below)
        any_gate = any_gate || t.gate != engine::UpdateTally::kReadsPhase;
        continue;
      }
      if (!truncate) {
        if (t.slot >= count_acc_.size()) count_acc_.resize(t.slot + 1, 0);
        if (count_acc_[t.slot]++ == 1) {
          c.multi.push_back(t.slot);
          c.multi_mask |= ObjBit(t.slot);
        }
      }
      if (t.slot >= tally_acc_.size()) tally_acc_.resize(t.slot + 1, {kUnusedSlot});
      engine::UpdateTally& u = tally_acc_[t.slot];
      if (u.slot == kUnusedSlot) {
        u = {t.slot};
        touched_.push_back(t.slot);
      }
      u.arrivals += t.arrivals;
      u.expect += t.expect;
      u.complete += t.complete;
      u.breaks = u.breaks || t.breaks;
    }
    std::sort(touched_.begin(), touched_.end());
    for (uint32_t slot : touched_) {
      c.tally.push_back(tally_acc_[slot]);
      tally_acc_[slot].slot = kUnusedSlot;
      if (slot < count_acc_.size()) count_acc_[slot] = 0;
    }
    std::sort(c.multi.begin(), c.multi.end());
    // In order, with the gates (GatedSums), when there is one (else `tally` is the same).
    if (any_gate && !truncate) {
      c.seq = tally_scratch_;
      for (const engine::UpdateTally& t : c.seq) {
        if (t.gate == 0 || t.gate == 1) c.gate_slots.push_back(t.slot);
      }
      std::sort(c.gate_slots.begin(), c.gate_slots.end());
      c.gate_slots.erase(std::unique(c.gate_slots.begin(), c.gate_slots.end()),
                         c.gate_slots.end());
    }
  } else {
    c.kinds = static_future_[a];
  }
  for (uint32_t o = 0; o < n_obj_; ++o) {
    if (c.kinds[o] == kTx || c.kinds[o] == kArr) c.updates.push_back(o);
    if (c.kinds[o] != kNone) {
      c.mask |= ObjBit(o);
      c.km.k[c.kinds[o]] |= ObjBit(o);
    }
  }
  c.km.any = c.mask;
  entries_.push_back(std::move(c));
  last[a] = &entries_.back();
  return &entries_.back();
}

void Reducer::GrowCacheTable() {
  ctab_.assign(std::max<size_t>(1024, ctab_.size() * 2), 0);
  for (size_t j = 0; j < entries_.size(); ++j) {
    size_t i = entries_[j].hash & (ctab_.size() - 1);
    while (ctab_[i] != 0) i = (i + 1) & (ctab_.size() - 1);
    ctab_[i] = static_cast<uint32_t>(j + 1);
  }
}

}  // namespace parity::verifier::reduction
