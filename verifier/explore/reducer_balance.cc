// The barrier balance analysis of the persistent sets (explore.h, "Refinements"): which mbarrier
// slots' arrive/complete_tx updates commute in a state (ComputeBalanced, GatedSums, Fixpoint), and
// the holders of their outstanding updates (EnsureBalanced). Members of Reducer, declared in
// reducer.h with what they mean.
#include "verifier/explore/reducer.h"

#include <algorithm>
#include <cstdint>
#include <vector>

namespace parity::verifier::reduction {

void Reducer::EnsureBalanced() {
  if (balanced_ready_) return;
  balanced_ready_ = true;
  const Engine& e = *e_;
  ComputeBalanced(e);
  const size_t n = n_units_;
  // Holders of outstanding updates of balanced barriers (exact full futures; in-flight
  // deliveries), and whether the phase completes exactly with the last of them (pending ==
  // arrivals still to come).
  holders_.resize(balanced_.size());
  complete_with_last_.assign(balanced_.size(), 0);
  observed_.assign(balanced_.size(), 0);
  bool any_balanced = false;
  for (uint32_t o = 0; o < balanced_.size(); ++o) {
    holders_[o].clear();
    if (!balanced_[o]) continue;
    any_balanced = true;
    complete_with_last_[o] = e.slot_state(o).pending_count == sum_[o].arrivals;
    observed_[o] = e.slot_state(o).preceding_phase_observed;
  }
  // Each unit's update objects (sparse lists; ascending y keeps each holder list in unit
  // order, as the one-holder rule expects).
  for (size_t y = 0; any_balanced && y < n; ++y) {
    const Unit& u = units_[y];
    if (u.agent == kNoAgent) {
      for (const auto& [o, k] : u.now) {
        if (o < balanced_.size() && balanced_[o] &&
            (OwnKind(u, o) == kTx || OwnKind(u, o) == kArr)) {
          holders_[o].push_back(static_cast<uint32_t>(y));
        }
      }
      if (u.own_slot < balanced_.size() && balanced_[u.own_slot] &&
          (OwnKind(u, u.own_slot) == kTx || OwnKind(u, u.own_slot) == kArr) &&
          (holders_[u.own_slot].empty() || holders_[u.own_slot].back() != y)) {
        holders_[u.own_slot].push_back(static_cast<uint32_t>(y));
      }
    } else {
      for (uint32_t o : full_[u.agent]->updates) {
        if (balanced_[o] &&
            (!gated_[o] || gated_pre_[size_t{o} * e.num_agents() + u.agent] != 0)) {
          holders_[o].push_back(static_cast<uint32_t>(y));
        }
      }
    }
  }
}

void Reducer::Merge(std::vector<uint8_t>& f, uint32_t o, uint8_t k) {
  f[o] = f[o] == kNone ? k
                       : static_cast<uint8_t>(engine::MergeAccess(
                             static_cast<engine::Access>(f[o]), static_cast<engine::Access>(k)));
}

void Reducer::ComputeBalanced(const Engine& e) {
  const uint32_t n_slots = e.num_barrier_slots();
  balanced_.assign(n_slots, 0);
  UpdateAgentSums(e);
  if (n_inexact_ != 0) return;
  sum_.resize(n_slots);
  for (uint32_t o = 0; o < n_slots; ++o) {
    const AgentSum& g = agent_sum_[o];
    sum_[o] = {o, g.arrivals, g.expect, g.complete, g.breaks != 0};
  }
  for (const Engine::InFlight& f : e.in_flight_ops()) {
    if (f.slot < sum_.size()) AddInFlight(f, &sum_[f.slot]);
  }
  for (const Engine::InFlight& f : e.deferred_ops()) {
    engine::UpdateTally t;
    t.slot = f.slot;
    t.breaks = true;
    Add(t);
  }
  gated_.assign(n_slots, 0);
  // The gated sums only where a closure may ask (Meets reads the balance of the objects of
  // a member's step), as the mask path's Slot does: the same sets, less work.
  asked_.assign(n_slots, 0);
  for (size_t y = 0; y < n_units_; ++y) {
    for (const auto& [o, k] : units_[y].now) {
      if (o < n_slots) asked_[o] = 1;
    }
  }
  for (uint32_t o = 0; o < n_slots; ++o) {
    balanced_[o] = BalancedSlot(e.slot_state(o), sum_[o]);
    if (balanced_[o] || !asked_[o] || !MayGate(e, o)) continue;
    const engine::UpdateTally t = GatedSums(e, o);
    if (!BalancedSlot(e.slot_state(o), t)) continue;
    balanced_[o] = 1;
    gated_[o] = 1;
    sum_[o] = t;
    const uint32_t n_agents = static_cast<uint32_t>(e.num_agents());
    gated_pre_.resize(size_t{n_slots} * n_agents);
    std::copy(pre_.begin(), pre_.end(), gated_pre_.begin() + size_t{o} * n_agents);
  }
}

void Reducer::AddInFlight(const Engine::InFlight& f, engine::UpdateTally* t) {
  switch (f.kind) {
    case Engine::InFlight::kTmaDeliver:
    case Engine::InFlight::kBulkDeliver:
    case Engine::InFlight::kStAsync:
      t->complete += f.bytes;
      break;
    case Engine::InFlight::kCpAsyncArrive:
      t->breaks = true;
      break;
    default:
      break;
  }
}

engine::UpdateTally Reducer::WholeSums(const Engine& e, uint32_t o) const {
  const AgentSum& g = agent_sum_[o];
  engine::UpdateTally t{o, g.arrivals, g.expect, g.complete, g.breaks != 0};
  for (const Engine::InFlight& op : e.in_flight_ops()) {
    if (op.slot == o) AddInFlight(op, &t);
  }
  for (const Engine::InFlight& op : e.deferred_ops()) t.breaks = t.breaks || op.slot == o;
  return t;
}

bool Reducer::BalancedSlot(const model::MbarrierState& st, const engine::UpdateTally& t) {
  constexpr int64_t kTxMax = (int64_t{1} << 20) - 1;  // PTX ISA: tx-count range
  return st.life == model::MbarrierLife::kLive && !t.breaks && st.pending_count >= t.arrivals &&
         int64_t{st.tx_count} + t.expect - t.complete == 0 &&
         int64_t{st.tx_count} - t.complete >= -kTxMax &&
         int64_t{st.tx_count} + t.expect <= kTxMax;
}

bool Reducer::MayGate(const Engine& e, uint32_t o) const {
  if (!phase_bounded_ || n_inexact_ != 0) return false;
  const model::MbarrierState& st = e.slot_state(o);
  return st.life == model::MbarrierLife::kLive && any_gate_;
}

engine::UpdateTally Reducer::GatedSums(const Engine& e, uint32_t o) {
  return Fixpoint(e, o, kNoAgent, nullptr);
}

bool Reducer::StuckWhileStopped(const Engine& e, uint32_t o, uint32_t stopped) {
  if (!phase_bounded_ || n_inexact_ != 0 || !any_gate_) return false;
  const model::MbarrierState& st = e.slot_state(o);
  if (st.life != model::MbarrierLife::kLive) return false;
  bool starved = false;
  Fixpoint(e, o, stopped, &starved);
  return starved;
}

bool Reducer::Stuck(uint32_t o, uint32_t a) {
  if (a >= stuck_.size()) return false;
  if (stuck_[a] == 0) {
    if (!sums_ready_) {
      sums_ready_ = true;
      UpdateAgentSums(*e_);
    }
    stuck_[a] = StuckWhileStopped(*e_, o, a) ? 2 : 1;
    if (stuck_[a] == 2) {
      // Which agents may still update o before a moves (an update or breaking access of
      // o ahead of their cuts); the others only wait on o until then.
      if (stuck_pre_.size() < stuck_.size()) stuck_pre_.resize(stuck_.size());
      stuck_pre_[a] = pre_;
      stuck_may_known_[a] = 0;
    }
  }
  return stuck_[a] == 2;
}

bool Reducer::StuckMay(uint32_t a, uint32_t y_agent) const {
  return y_agent == kNoAgent || stuck_pre_[a][y_agent] != 0;
}

uint64_t Reducer::StuckMayMask(uint32_t a) {
  if (!stuck_may_known_[a]) {
    stuck_may_known_[a] = 1;
    uint64_t m = 0;
    for (size_t y = 0; y < n_units_; ++y) {
      if (StuckMay(a, mu_[y].agent)) m |= uint64_t{1} << y;
    }
    stuck_may_[a] = m;
  }
  return stuck_may_[a];
}

engine::UpdateTally Reducer::Fixpoint(const Engine& e, uint32_t o, uint32_t stopped,
                                             bool* o_starved) {
  const uint32_t n_slots = e.num_barrier_slots();
  const uint32_t n_agents = static_cast<uint32_t>(e.num_agents());
  gate_q_.assign(n_slots, kNoHyp);
  for (uint32_t a = 0; a < n_agents; ++a) {
    if (e.agent_state(a).status == 2) continue;
    for (uint32_t w : full_[a]->gate_slots) {
      if (w >= n_slots) continue;
      const model::MbarrierState& st = e.slot_state(w);
      if (st.life == model::MbarrierLife::kLive) gate_q_[w] = st.phase;
    }
  }
  gate_q_[o] = e.slot_state(o).phase;
  gate_a_.assign(n_slots, 0);
  gate_e_.assign(n_slots, 0);
  gate_c_.assign(n_slots, 0);
  gate_breaks_.assign(n_slots, 0);
  gate_raised_.assign(n_slots, 0);
  pre_.assign(n_agents, 0);
  // Arrival-only o (ArrivalCost): every update o will ever see is an arrival, and its tx-count
  // is 0, so its current phase completes at the arrival that brings its pending count to 0.
  const model::MbarrierState& ost = e.slot_state(o);
  bool pure_o = arrival_costs_ && o_starved == nullptr && ost.life == model::MbarrierLife::kLive &&
                ost.tx_count == 0 && ost.pending_count > 0 && agent_sum_[o].expect == 0 &&
                agent_sum_[o].complete == 0 && agent_sum_[o].breaks == 0;
  for (const Engine::InFlight& f : e.in_flight_ops()) pure_o = pure_o && f.slot != o;
  for (const Engine::InFlight& f : e.deferred_ops()) pure_o = pure_o && f.slot != o;
  o_arr_.assign(n_agents, 0);
  wrec_.clear();
  bool ordered = true;  // the records come in the agent's program order (its seq)
  engine::UpdateTally t{o};
  auto add = [&](uint32_t a, const engine::UpdateTally& r) {
    if (r.slot >= n_slots) return;
    if (pure_o && ordered && a != kNoAgent && r.arrivals > 0) {
      if (r.slot == o) {
        o_arr_[a] += r.arrivals;
      } else {
        wrec_.push_back({a, r.slot, r.arrivals, o_arr_[a]});
      }
    }
    gate_a_[r.slot] += r.arrivals;
    gate_e_[r.slot] += r.expect;
    gate_c_[r.slot] += r.complete;
    if (r.breaks) gate_breaks_[r.slot] = 1;
    if (r.slot != o) return;
    t.arrivals += r.arrivals;
    t.expect += r.expect;
    t.complete += r.complete;
    t.breaks = t.breaks || r.breaks;
    if (a != kNoAgent && pre_[a] < 2) ++pre_[a];  // 0, 1, 2: two or more
  };
  for (const Engine::InFlight& f : e.in_flight_ops()) {
    if (f.slot >= n_slots) continue;
    engine::UpdateTally g{f.slot};
    AddInFlight(f, &g);
    add(kNoAgent, g);
  }
  for (const Engine::InFlight& f : e.deferred_ops()) {
    if (f.slot >= n_slots) continue;
    gate_breaks_[f.slot] = 1;
    if (f.slot == o) t.breaks = true;
  }
  // The cuts only move later as hypotheses are raised, so each agent's walk resumes where it
  // stopped and the sums are accumulated once (the same sums as walking again from the start
  // under the final hypotheses). walk_lo_: per agent and slot, lo_w (valid when walk_ep_ is
  // this call's call_ep_).
  if (++call_ep_ == 0) {
    std::fill(walk_ep_.begin(), walk_ep_.end(), 0);
    call_ep_ = 1;
  }
  walk_pos_.assign(n_agents, 0);
  if (walk_lo_.size() < size_t{n_agents} * n_slots) {
    walk_lo_.resize(size_t{n_agents} * n_slots);
    walk_ep_.resize(size_t{n_agents} * n_slots, 0);
  }
  auto walk = [&](uint32_t a) {
    const std::vector<engine::UpdateTally>& seq = full_[a]->seq;
    size_t i = walk_pos_[a];
    for (; i < seq.size(); ++i) {
      const engine::UpdateTally& r = seq[i];
      if (r.gate < 0) {
        add(a, r);
        continue;
      }
      if (r.slot >= n_slots || r.gate == engine::UpdateTally::kReadsPhase) continue;
      const size_t k = size_t{a} * n_slots + r.slot;
      if (walk_ep_[k] != call_ep_) {  // the agent's first wait on it: lo_w = cur(w)
        walk_ep_[k] = call_ep_;
        walk_lo_[k] = e.slot_state(r.slot).phase;
      }
      uint32_t& lo = walk_lo_[k];
      if (static_cast<uint32_t>(r.gate) != (lo & 1u)) continue;  // taken to pass
      if (gate_q_[r.slot] != kNoHyp && lo == gate_q_[r.slot]) break;  // surely blocks
      ++lo;
    }
    walk_pos_[a] = static_cast<uint32_t>(i);
  };
  for (uint32_t a = 0; a < n_agents; ++a) {
    if (e.agent_state(a).status == 2 || a == stopped) continue;
    const CacheEntry& c = *full_[a];
    if (c.seq.empty()) {  // no gate ahead: the whole future (by slot: no order, no costs)
      ordered = false;
      for (const engine::UpdateTally& r : c.tally) add(a, r);
      ordered = true;
      continue;
    }
    walk(a);
  }
  for (;;) {
    // The sums only grow as cuts move later: more arrivals than pending stays unbalanced.
    if (o_starved == nullptr && t.arrivals > e.slot_state(o).pending_count) return t;
    bool changed = false;
    for (uint32_t w = 0; w < n_slots; ++w) {
      if ((w == o && o_starved == nullptr) || gate_q_[w] == kNoHyp) continue;
      const model::MbarrierState& st = e.slot_state(w);
      const int64_t need =
          int64_t{st.pending_count} + int64_t{gate_q_[w] - st.phase} * st.expected_count;
      const int64_t a = gate_a_[w];
      const bool starved = gate_breaks_[w] == 0 &&
                           (a < need || (a == need && gate_c_[w] < st.tx_count + gate_e_[w]) ||
                            (pure_o && w != o && ArrivalCost(w, need) >= ost.pending_count));
      if (!starved && w == o) {  // StuckWhileStopped: o may complete
        *o_starved = false;
        return t;
      }
      if (!starved) {
        gate_q_[w] = gate_q_[w] - st.phase < kGateAhead ? gate_q_[w] + 1 : kNoHyp;
        gate_raised_[w] = 1;
        changed = true;
      }
    }
    if (!changed) {
      if (o_starved != nullptr) *o_starved = true;
      return t;
    }
    for (uint32_t a = 0; a < n_agents; ++a) {
      if (e.agent_state(a).status == 2 || a == stopped) continue;
      const std::vector<engine::UpdateTally>& seq = full_[a]->seq;
      const uint32_t i = walk_pos_[a];
      if (i < seq.size() && gate_raised_[seq[i].slot] != 0) walk(a);  // cut there: resume
    }
    std::fill(gate_raised_.begin(), gate_raised_.end(), 0);
  }
}

int64_t Reducer::ArrivalCost(uint32_t w, int64_t need) {
  int64_t recorded = 0;
  for (const WRec& r : wrec_) recorded += r.slot == w ? r.arrivals : 0;
  // Arrivals on w without a recorded cost (in-flight operations, agents without a gate, whose
  // sums carry no order) are free.
  const int64_t rest = need - (gate_a_[w] - recorded);
  if (rest <= 0) return 0;
  constexpr int64_t kMaxNeed = 4096;  // beyond: no bound (0), which only keeps w unstarved
  if (rest > kMaxNeed) return 0;
  constexpr int64_t kInf = INT64_MAX / 4;
  // cost_[j]: the fewest arrivals on o that j of the recorded arrivals on w (capped at rest)
  // need ahead of them. An agent's arrivals come in its program order, so taking its first
  // arrivals up to one record costs that record's count of o arrivals before it.
  cost_.assign(static_cast<size_t>(rest) + 1, kInf);
  cost_[0] = 0;
  for (size_t i = 0; i < wrec_.size(); ++i) {
    if (wrec_[i].slot != w) continue;
    const uint32_t a = wrec_[i].agent;
    bool first = true;  // the agent's first record of w (its others follow it here)
    for (size_t j = 0; j < i && first; ++j) first = !(wrec_[j].slot == w && wrec_[j].agent == a);
    if (!first) continue;
    next_cost_ = cost_;
    int64_t taken = 0;
    for (size_t k = i; k < wrec_.size(); ++k) {
      if (wrec_[k].slot != w || wrec_[k].agent != a) continue;
      taken += wrec_[k].arrivals;
      for (int64_t j = 0; j <= rest; ++j) {
        if (cost_[j] == kInf) continue;
        const int64_t to = std::min(rest, j + taken);
        next_cost_[to] = std::min(next_cost_[to], cost_[j] + wrec_[k].o_before);
      }
    }
    cost_.swap(next_cost_);
  }
  return cost_[rest] == kInf ? INT64_MAX : cost_[rest];
}

void Reducer::UpdateAgentSums(const Engine& e) {
  const uint32_t n_slots = e.num_barrier_slots();
  const uint32_t n_agents = static_cast<uint32_t>(e.num_agents());
  if (agent_sum_.size() != n_slots || contrib_.size() != n_agents) {
    agent_sum_.assign(n_slots, AgentSum{});
    contrib_.assign(n_agents, Contrib{});
    n_inexact_ = 0;
  }
  for (uint32_t a = 0; a < n_agents; ++a) {
    const uint8_t kind = e.agent_state(a).status == 2 ? 0 : full_[a]->exact ? 2 : 1;
    const std::vector<engine::UpdateTally>* t = kind == 2 ? &full_[a]->tally : nullptr;
    Contrib& cur = contrib_[a];
    if (cur.kind == kind && cur.tally == t) continue;
    ApplyContrib(cur, -1);
    cur = {t, kind};
    ApplyContrib(cur, 1);
  }
}

void Reducer::ApplyContrib(const Contrib& c, int64_t sign) {
  if (c.kind == 1) n_inexact_ += static_cast<uint32_t>(sign);
  if (c.kind != 2) return;
  for (const engine::UpdateTally& t : *c.tally) {
    if (t.slot >= agent_sum_.size()) continue;
    AgentSum& g = agent_sum_[t.slot];
    g.arrivals += sign * t.arrivals;
    g.expect += sign * t.expect;
    g.complete += sign * t.complete;
    g.breaks += t.breaks ? sign : 0;
  }
}

void Reducer::Add(const engine::UpdateTally& t) {
  if (t.slot >= sum_.size()) return;
  engine::UpdateTally& s = sum_[t.slot];
  s.arrivals += t.arrivals;
  s.expect += t.expect;
  s.complete += t.complete;
  s.breaks = s.breaks || t.breaks;
}

}  // namespace parity::verifier::reduction

