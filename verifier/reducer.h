// The persistent-set computation of `parity explore` (explore.h): for a state's enabled choices
// and blocked agents, a subset of the choices whose exploration suffices (Reducer::Choose), from
// each agent's future accesses (Engine::AgentFuture, memoised here) and the barriers' balance.
// Included by the searches (verifier/explore/, parallel_dfs.cc, every_path.cc); its functions are
// inline so that the search loop compiles them with itself (reducer_balance.h holds the barrier
// balance analysis's, reducer_masks.h the bit-parallel closure's).
#ifndef PARITY_VERIFIER_REDUCER_H_
#define PARITY_VERIFIER_REDUCER_H_

#include <algorithm>
#include <climits>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "sim/common/check.h"
#include "sim/engine/engine.h"
#include "verifier/explore.h"

namespace parity::verifier::reduction {

using engine::Choice;
using engine::Engine;
using engine::Footprint;
using engine::Outcome;

// Persistent-set computation (explore.h): units are the enabled choices followed by the blocked
// agents. A unit's *future* is a dense array over Engine::num_objects() holding how it may access
// each object from now on (engine::Access, or kNone).
constexpr uint8_t kNone = 0xff;
constexpr uint8_t kOther = static_cast<uint8_t>(engine::Access::kOther);
constexpr uint8_t kTx = static_cast<uint8_t>(engine::Access::kCompleteTx);
constexpr uint8_t kCArrive = static_cast<uint8_t>(engine::Access::kClusterArrive);
constexpr uint8_t kExitAcc = static_cast<uint8_t>(engine::Access::kExit);
constexpr uint8_t kArr = static_cast<uint8_t>(engine::Access::kArrive);
constexpr uint8_t kWaitK = static_cast<uint8_t>(engine::Access::kWait);
// A blocked unit's wait: what can enable it (see Conflict).
constexpr uint8_t kWaitNes = 0xfe;

// Per access kind (engine::Access, kOther .. kWait) the objects (Reducer::ObjBit) accessed so,
// and their union.
struct KindMasks {
  uint64_t k[6] = {};
  uint64_t any = 0;
};

class Reducer {
  struct CacheEntry;

 public:
  // `masks`: use the bit-parallel closure (ChooseMasks) when the schedule has at most 64
  // objects; false: the per-object one (Choose's general path) everywhere (tests compare them).
  // `held_phase`: held-phase futures (verifier/held_phase.h; only with guarded waits).
  // `exact_peers`: ExploreOptions::exact_peer_futures.
  Reducer(const Engine& root, bool guarded_waits, bool masks = true, bool phase_bounded = true,
          bool held_phase = true, bool exact_peers = true, bool arrival_costs = true,
          bool named_rule = true)
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

  uint64_t cache_entries() const { return entries_.size(); }
  // How often the held-phase rule (verifier/held_phase.h) kept a unit out of a closure that
  // its whole future would have brought in (a statistic: ExploreStats::held_phase_cuts).
  uint64_t held_phase_cuts() const { return held_phase_cuts_; }

  // AnalyseBalance (explore.h): Slot's sums, without the units.
  std::vector<SlotBalance> Report(Engine& e) {
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
    std::vector<SlotBalance> out;
    for (uint32_t o = 0; o < e.num_barrier_slots(); ++o) {
      SlotBalance b;
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

  // Agent a's next step's footprint (Engine::PeekFootprint; *blocks_on as there, nullptr:
  // not asked), or nullptr when it cannot be predicted. Memoised per agent by pc and variables
  // (the prediction depends on nothing else), and for an mbarrier wait also by the state of
  // its barrier slot (whether it would block depends on nothing else: Engine WaitBlocksOn);
  // cluster waits are peeked again. The footprint stays valid until the next Peek of a.
  const Footprint* Peek(Engine& e, uint32_t a, uint32_t* blocks_on) {
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

  // Marks in `take` (one flag per choice) the steps of the smallest persistent set found.
  // `guard` (per agent, empty for none): the mbarrier slot a runnable agent's next step would
  // only block on (Search::Expand left that step out of `choices`); such an agent is a unit like
  // a blocked one.
  // The starts are tried in unit order, first for a closure with one enabled step (no set is
  // smaller; a start's closure is abandoned as soon as a second enabled unit joins), then, when
  // there is none, for the smallest closure. The per-slot balance of the barriers (and its
  // holders) is computed only when a closure first asks about a barrier.
  void Choose(Engine& e, const std::vector<Choice>& choices,
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

 private:
  static constexpr uint32_t kNoAgent = 0xffffffffu;
  struct Unit {
    bool enabled = false;
    bool now_all = false;
    uint32_t agent = kNoAgent;  // agent units (enabled or blocked); kNoAgent: in-flight op
    std::vector<std::pair<uint32_t, uint8_t>> now;  // the step's footprint, or the wait
    // Per object: access kind or kNone (agents: their full or truncated future; in-flight
    // operations: own_dense, or nullptr for the sparse `own`).
    const std::vector<uint8_t>* future = nullptr;
    std::vector<std::pair<uint32_t, uint8_t>> own;  // in-flight operations' future (sparse)
    const std::vector<uint8_t>* own_dense = nullptr;  // or a dense one (cp.async completions)
    uint32_t own_slot = 0xffffffffu;  // a delivery's slot (besides `now`'s objects)
    // ObjBit of every object of `now`, of `own`, of `future`: two units whose masks do not
    // meet share no object.
    uint64_t now_mask = 0, own_mask = 0, future_mask = 0;
    // The named-barrier rule (reducer_named.h): the CTA's named-barrier object of its step or
    // wait (kNoNamed: the rule does not apply) and the units it takes in there, ascending.
    uint32_t named_obj = 0xffffffffu;
    std::vector<uint32_t> named_join;
  };
  // The next unit of this state, reusing an earlier state's (keeps the vectors' capacity).
  Unit& NewUnit() {
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
  static uint64_t ObjBit(uint32_t o) { return uint64_t{1} << (o & 63); }
  // Whether access k of choice c's step (footprint fi) is to a shared object: with guarded
  // waits a barrier.cluster.wait step touches only its own participant's arrival record
  // (explore.h), no shared object.
  bool Shared(const Choice& c, const Footprint& fi, uint32_t k) const {
    return !(guarded_ && c.kind == Choice::Kind::kAgent && fi.kinds[k] == engine::Access::kWait &&
             fi.objects[k] >= n_slots_ && fi.objects[k] < n_slots_ + n_clusters_);
  }
  static void MergeOwn(Unit& u, uint32_t o, uint8_t k) {
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
  static uint8_t OwnKind(const Unit& u, uint32_t o) {
    if (u.own_dense != nullptr) return (*u.own_dense)[o];
    for (const auto& [oo, k] : u.own) {
      if (oo == o) return k;
    }
    return kNone;
  }
  // How unit y may access object o from now on, under the current start's futures.
  uint8_t FutureKind(size_t y, uint32_t o) const {
    const Unit& u = units_[y];
    return u.future != nullptr ? (*u.future)[o] : OwnKind(u, o);
  }
  // Every unit's future (and its mask in fmask_) for closures from `start`: an agent that is
  // still expected in its cluster barrier's current phase and takes no step outside the set
  // keeps every peer of its cluster from passing its next barrier.cluster.wait: the peers'
  // futures end there (Engine::AgentFuture), except a peer that arrived in a phase that has
  // completed since (its next wait passes: Engine::ClusterWaitPasses).
  void SetFutures(size_t start) {
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
  void SetTrunc(size_t y) {
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

  // The closure of {start} under Meets (explore.h); stops as soon as it holds `bound` enabled
  // units. Returns the number of enabled units in it (>= bound: stopped).
  size_t Closure(size_t start, size_t bound) {
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
  // Whether two complete_tx-only accesses of mbarrier slot o commute from this state on, given
  // that every unit that may access the slot otherwise (arrivals, waits, init, ...) is in the
  // set (Conflict pulls those in): the barrier is live and its pending count is above zero,
  // and only arrivals lower it, so no complete_tx can complete the phase on any path of steps
  // outside the set (engine.h, Access::kCompleteTx).
  bool TxCommutes(uint32_t o) const {
    if (o >= n_slots_) return false;
    const model::MbarrierState& st = e_->slot_state(o);
    return st.life == model::MbarrierLife::kLive && st.pending_count > 0;
  }
  // The balanced barriers (ComputeBalanced) and the holders of their outstanding updates, on
  // first use in this state.
  void EnsureBalanced();
  static void Merge(std::vector<uint8_t>& f, uint32_t o, uint8_t k);

  // Per mbarrier slot: whether every additive update (arrive-on with count and expect_tx,
  // complete_tx, TMA delivery) of every unit commutes with every other from this state on. With
  // the sums over every unit's future (exact look-aheads, in-flight deliveries included):
  //   A = arrivals still to come, E = their expect_tx bytes, C = complete_tx bytes to come,
  // the barrier is *balanced* when it is live, pending >= A, tx + E - C == 0, no future access
  // is anything but such an update or a wait (UpdateTally::breaks), and tx stays within the
  // tx-count range whatever the order. Then along any path, pending - A(remaining) >= 0 and
  // tx + E(remaining) - C(remaining) == 0 stay invariant until the phase completes, so when two
  // updates are both still to come neither can complete the phase alone: an arrival completing
  // alone needs pending == its count, i.e. no other arrival to come (pending >= A), and then
  // tx + its bytes == C(remaining) > 0 while a delivery is still to come; a complete_tx needs
  // pending == 0, i.e. no arrival to come, and then tx == C(remaining) exceeds its own bytes.
  // Two updates that do not complete the phase give the same state in either order (pending
  // and tx are sums; the checks they make read only the count range, which pending >= A keeps,
  // and the phase and its observed flag, which they do not change).
  void ComputeBalanced(const Engine& e);
  // Adds an in-flight operation's part to the sums of its slot: a delivery's bytes
  // (complete_tx), a deferred cp.async arrive breaks; other operations (cp.async and store
  // completions, whose `slot` is no barrier) add nothing.
  static void AddInFlight(const Engine::InFlight& f, engine::UpdateTally* t);
  // One slot's sums over every unit's whole future (ComputeBalanced's sum_[o], for one slot):
  // the agents' part (UpdateAgentSums), the deliveries in flight, deferred arrives breaking.
  engine::UpdateTally WholeSums(const Engine& e, uint32_t o) const;
  // The balance condition of one slot (ComputeBalanced) given the sums over every unit's future.
  static bool BalancedSlot(const model::MbarrierState& st, const engine::UpdateTally& t);
  // Phase-bounded balance. BalancedSlot over every unit's whole future fails on a barrier that
  // is reused (a ring stage: the producer's arrival for the next phase counts in A, so pending
  // < A). What matters is what can happen *before the current phase of o completes*.
  // Hypotheses: for some slots w, a phase q_w >= cur(w) (the current phase) that does not
  // complete first; q_o = cur(o). Under them each agent's future (an exact straight-line
  // look-ahead: engine UpdateTally, with its blocking parity waits as gates) is cut at the first
  // wait that surely blocks: with lo_w the lowest phase w can be in when the agent gets there
  // (cur(w), raised by one for each earlier wait of the agent that needed phase lo_w to
  // complete), a wait whose parity is that of lo_w needs phase lo_w to complete, and surely
  // blocks when lo_w == q_w (w is then in phase q_w exactly, which does not complete); any
  // other wait is taken to pass (more updates: safe). A(w), E(w), C(w): the arrivals,
  // expect_tx and complete_tx bytes on w ahead of the cuts, with the deliveries in flight.
  // (w, q_w) is *starved* when no breaking access to w is ahead of the cuts and, with
  // need = pending(w) + (q_w - cur(w)) * count(w) arrivals to complete phase q_w, A(w) < need,
  // or A(w) == need (every one of them then comes first, expect_tx bytes included) and
  // C(w) < tx(w) + E(w) (too few bytes to bring tx back to 0).
  // Claim: if every hypothesis but o's is starved, no phase q_w completes before o's current
  // phase does. Proof: on a path where one does, take the first completion of any hypothesised
  // phase; it is not o's. Until then every slot w is at most in phase q_w, so no agent got past
  // its cut, and w saw at most A(w) arrivals (and the bytes above): phase q_w cannot complete,
  // a contradiction. Hence until o's phase completes every agent is ahead of its cut, and the
  // updates to o before then are among those ahead of the cuts (`pre_`: the agents holding
  // one). The hypotheses are found as a greatest fixpoint: start with q_w = cur(w) for every
  // live slot some agent waits on and raise q_w of each one not starved (up to kGateAhead
  // phases ahead, then none) until all are; raising one only moves cuts later.
  // With these sums in place of the whole futures', BalancedSlot's argument is unchanged: only
  // these updates can occur before the phase completes, and an update after a cut cannot occur
  // on a path whose steps avoid a unit of the set holding one of these (the phase needs them
  // all, or never completes). Cuts on other waits (tokens, cluster and named barriers) are not
  // taken: fewer cuts only add updates, which is safe.
  bool MayGate(const Engine& e, uint32_t o) const;
  static constexpr uint32_t kNoHyp = 0xffffffffu, kGateAhead = 3;
  engine::UpdateTally GatedSums(const Engine& e, uint32_t o);
  // Whether the current phase of slot o cannot complete while agent `stopped` takes no step
  // (the same argument with o's hypothesis starved too and the agent's whole future cut). Then
  // an enabled wait of that agent on o commutes with every arrive/complete_tx of o outside a
  // persistent set holding it: o's phase and parity stay as they are on such paths, and the
  // wait reads nothing else (its observed flag aside, see Meets).
  bool StuckWhileStopped(const Engine& e, uint32_t o, uint32_t stopped);
  // StuckWhileStopped for agent a's enabled wait on slot o, once per state (an agent's step
  // waits on one slot).
  bool Stuck(uint32_t o, uint32_t a);
  // With Stuck(o, a): whether unit y may access o other than by waiting before a moves.
  bool StuckMay(uint32_t a, uint32_t y_agent) const;
  // The same as a mask of ChooseMasks's units.
  uint64_t StuckMayMask(uint32_t a);
  // GatedSums, and with o_starved != nullptr StuckWhileStopped: o's hypothesis is then checked
  // like the others (*o_starved: whether it held) and `stopped`'s future counts nothing.
  engine::UpdateTally Fixpoint(const Engine& e, uint32_t o, uint32_t stopped, bool* o_starved);
  // Arrival costs (GatedSums only). When every update o will see is an arrival and its
  // tx-count is 0, its current phase completes at the arrival that brings its pending count to
  // 0 (PTX ISA 9.7.13.15: a phase completes when the pending arrival count and the tx-count are
  // both 0). An agent's arrival on another slot w ahead of its cut comes after every arrival on
  // o that precedes it in the agent's program order. So (w, q_w) is also starved when every
  // choice of need(w) arrivals among those ahead of the cuts needs at least pending(o) arrivals
  // on o before them: in the proof above, at the first completion of a hypothesised phase
  // (not o's) o would already have seen pending(o) arrivals in its current phase and completed
  // first, a contradiction. (DeepGEMM's consumers release CTA 1's empty barrier and then CTA
  // 0's: CTA 0's producer cannot pass its wait on CTA 0's empty stage while CTA 1's stays
  // incomplete.) ArrivalCost(w, need) is that least count: a knapsack over the agents'
  // recorded arrivals on w (arrivals without a record cost nothing); INT64_MAX when the
  // recorded arrivals cannot give need.
  int64_t ArrivalCost(uint32_t w, int64_t need);
  struct WRec {
    uint32_t agent;
    uint32_t slot;
    int64_t arrivals;
    int64_t o_before;  // the agent's arrivals on o ahead of this record
  };
  std::vector<WRec> wrec_;        // Fixpoint: arrival records on slots other than o, walk order
  std::vector<int64_t> o_arr_;    // Fixpoint: per agent, its arrivals on o walked so far
  std::vector<int64_t> cost_, next_cost_;  // ArrivalCost's table
  // The agents' part of the sums (exited agents count nothing; one with a static
  // over-approximation means no counts: nothing is balanced, n_inexact_ > 0), kept across
  // states: only the agents whose memo entry changed since the last state are subtracted and
  // added again.
  void UpdateAgentSums(const Engine& e);
  struct AgentSum {
    int64_t arrivals = 0, expect = 0, complete = 0;
    int64_t breaks = 0;  // how many tallies break
  };
  struct Contrib {
    const std::vector<engine::UpdateTally>* tally = nullptr;  // kind 2: the memo entry's
    uint8_t kind = 0;  // 0 exited (or none yet), 1 no exact future, 2 exact
  };
  void ApplyContrib(const Contrib& c, int64_t sign);
  void Add(const engine::UpdateTally& t);

  // Whether an access (o, k) of a unit in the set and a unit whose future accesses o as `fk`
  // may be dependent (engine.h, Access).
  bool Conflict(uint32_t o, uint8_t k, uint8_t fk) const {
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
  // Whether unit y (not in the set) must join because of unit x (in the set).
  bool Meets(size_t y, size_t x) {
    EnsureBalanced();
    if (const Unit& ux = units_[x]; ux.named_obj != kNoNamed &&
        FutureKind(y, ux.named_obj) != kNone &&
        std::binary_search(ux.named_join.begin(), ux.named_join.end(), y)) {
      return true;  // taken in by the named-barrier rule (reducer_named.h)
    }
    for (const auto& [o, k] : units_[x].now) {
      uint8_t fk = FutureKind(y, o);
      if (fk == kNone) continue;
      if (held_phase_ && (k == kTx || k == kArr) && o < balanced_.size() && balanced_[o]) {
        // x holds a necessary update of o's current phase: y counts only what it does to o
        // before its wait on that phase (verifier/held_phase.h).
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
  // Whether a unit of the set other than x holds an outstanding update of slot o.
  bool HeldInSet(uint32_t o, size_t x) const {
    for (uint32_t h : holders_[o]) {
      if (h != x && in_[h]) return true;
    }
    return SelfHeld(o, x);
  }
  // Whether x's own agent holds an outstanding update of balanced slot o besides x's step
  // (the TMA loads after a producer's arrive.expect_tx): on a path of steps outside the set
  // the agent does not move, so that update does not happen and the phase does not complete.
  bool SelfHeld(uint32_t o, size_t x) const {
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

  // --- The bit-parallel closure (at most 64 objects and 64 units) ---
  // The same persistent sets as Choose's general path (the tests compare the two searches):
  // the same units in the same order, the same starts in the same order, and Meets(y, x)
  // evaluated for the same candidates in ascending order against the same set. Meets is a
  // disjunction over x's accesses (o, k) of a predicate of y's future kind of o (and, for the
  // one-holder rule, of y itself); for each x the objects on which each future kind conflicts
  // are gathered into masks (MaskTargets), and y meets x when any of y's future kind masks
  // meets the mask of its kind.
  struct MaskUnit {
    bool enabled = false;
    bool now_all = false;
    uint32_t agent = kNoAgent;  // kNoAgent: an in-flight operation
    uint32_t cluster = 0xffffffffu;
    uint64_t now[7] = {};  // the step's objects by access kind; [6]: a blocked wait (kWaitNes)
    uint64_t upd = 0;      // objects it holds an outstanding update of (EnsureBalanced's holders)
    uint64_t self = 0;     // of those, the ones it holds besides its step's (SelfHeld)
    KindMasks own;         // an in-flight operation's future
    uint32_t named_obj = 0xffffffffu;  // Unit::named_obj
    uint64_t named_join = 0;           // Unit::named_join as unit bits
  };
  // The units' futures under one truncation (SetMaskFutures), transposed: per access kind and
  // object, the units (a bit each) whose future accesses the object so; and per unit the
  // objects of its future.
  struct FutureTable {
    uint64_t units[6][64];
    uint64_t any[64];
    const KindMasks* f[64];  // per unit: its future's masks
    // The same with each agent's accesses to a slot cut at its first wait on the slot's
    // current phase (verifier/held_phase.h, EnsureHeldTable), built on first use.
    bool held_ready;
    uint64_t held[6][64];
  };
  static constexpr int kNesIdx = 6;

  void ChooseMasks(Engine& e, const std::vector<Choice>& choices,
                   const std::vector<const Footprint*>& fps, const std::vector<uint32_t>& guard,
                   std::vector<uint8_t>* take);
  // Merges access k of object o into m (engine::MergeAccess).
  static void MergeMask(KindMasks& m, uint32_t o, uint8_t k);
  static void ResetUnit(MaskUnit& u);
  // The units' futures for closures from `start` (SetFutures: the agents of the start's cluster
  // get their futures up to their next barrier.cluster.wait when the start is an agent still
  // expected there; the start's own future is never read, as it is in the set). They depend
  // only on the truncating cluster: the tables of two clusters (or none) are kept per state.
  void SetMaskFutures(size_t start);
  // Per slot, computed on first use in a state: whether it is balanced (ComputeBalanced), the
  // phase completes with the last outstanding update (complete_with_last_), its preceding phase
  // was observed (observed_), and whether complete_tx-only accesses commute (TxCommutes).
  struct SlotFlags {
    bool bal = false, cwl = false, obs = false, txc = false;
  };
  SlotFlags Slot(uint32_t o);
  // The first unit (in unit order) holding an outstanding update of o, or kNoAgent.
  uint32_t FirstHolder(uint32_t o) const;

  // --- The named-barrier rule (reducer_named.h) ---
  static constexpr uint32_t kNoNamed = 0xffffffffu;
  static constexpr int64_t kNamedUnbounded = INT64_MAX;
  // The threads agent y can arrive with on instance `id` (count `count`) of named-barrier
  // object `obj` before it completes, or kNamedUnbounded.
  int64_t NamedCap(uint32_t y_agent, uint32_t obj, uint32_t id, uint32_t count);
  // Whether the rule applies to unit x (of n_units; unit_at(y, o) gives y's agent, whether it
  // is enabled and whether its whole future touches o; x_exit: x's step is its agent's exit):
  // *obj its object, *join the units it takes in there, ascending.
  template <typename UnitAt>
  bool NamedJoin(size_t x, size_t n_units, const UnitAt& unit_at, bool x_exit, uint32_t* obj,
                 std::vector<uint32_t>* join);
  void NamedJoinsGeneral();
  void NamedJoinsMasks();
  uint64_t NamedSpecial(const MaskUnit& ux) const;
  std::vector<std::pair<uint32_t, int64_t>> holders_named_;  // NamedJoin: (unit, cap)
  std::vector<uint32_t> named_scratch_join_;
  std::vector<engine::NamedAccess> named_scratch_;
  // For unit x of the set, with `held` the objects some other unit of the set holds an update
  // of: per future kind, the objects on which a unit whose future accesses them so meets x
  // (Meets); *special: units that meet x by the one-holder rule; *sens: the balanced objects of
  // x that no other unit of the set holds (the result changes when a holder of one joins).
  // tgtp: the objects on which a unit meets x only by its held-phase future (held_phase.h).
  void MaskTargets(const MaskUnit& ux, uint64_t held, uint64_t tgt[6], uint64_t tgtp[6],
                   uint64_t* special, uint64_t* sens);
  // Closure's twin on masks: the closure of {start} under Meets, stopping once it holds
  // `bound` enabled units; in_bits_ holds it. Returns the number of enabled units in it.
  size_t MaskClosure(size_t start, size_t bound);

  // Held-phase futures (verifier/held_phase.h).
  static uint8_t TallyKind(const engine::UpdateTally& t);
  // How unit y may access slot o before its first wait on o's current phase (kNone: not at
  // all); fk: its (maybe truncated) future's kind of o, not kNone.
  uint8_t HeldPhaseKind(size_t y, uint32_t o, uint8_t fk);
  // Per slot, the kinds of an entry's accesses ahead of its first gate of parity `parity`.
  const KindMasks& HeldPhaseMasks(const CacheEntry& c, int parity);
  // Fills ft_->held for this state.
  void EnsureHeldTable();

  // The agent's future from this state (Engine::AgentFuture, memoised by agent, pc, variables
  // and truncation: the look-ahead depends on nothing else), or its static over-approximation.
  const CacheEntry* Future(Engine& e, uint32_t a, bool truncate) {
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
  void GrowCacheTable() {
    ctab_.assign(std::max<size_t>(1024, ctab_.size() * 2), 0);
    for (size_t j = 0; j < entries_.size(); ++j) {
      size_t i = entries_[j].hash & (ctab_.size() - 1);
      while (ctab_[i] != 0) i = (i + 1) & (ctab_.size() - 1);
      ctab_[i] = static_cast<uint32_t>(j + 1);
    }
  }
  struct CacheEntry {
    uint64_t hash = 0;  // of the key, mixed (the table's index)
    uint32_t agent = 0;
    uint32_t pc = 0;
    uint8_t status = 0;
    bool truncate = false;
    std::vector<int64_t> vars;
    std::vector<uint8_t> kinds;
    bool exact = false;                       // the look-ahead (else the static future)
    std::vector<engine::NamedAccess> named;   // exact && !truncate: named-barrier accesses
    bool named_exact = false;                 // `named` was collected
    std::vector<engine::UpdateTally> tally;   // exact && !truncate: per slot, by slot
    std::vector<engine::UpdateTally> seq;     // exact && !truncate: updates, gates and other
                                              // waits in order, when there is a gate
    std::vector<uint32_t> gate_slots;         // the slots of seq's gates, distinct
    std::vector<uint32_t> multi;  // exact && !truncate: slots with two or more update records
    uint64_t multi_mask = 0;      // ObjBit of multi
    std::vector<uint32_t> updates;  // the objects whose kind is kCompleteTx or kArrive, ascending
    uint64_t mask = 0;              // ObjBit of every object in kinds
    KindMasks km;                   // kinds as masks (exact when there are at most 64 objects)
    // HeldPhaseMasks, per parity of the cut, computed on first use.
    mutable bool held_known[2] = {false, false};
    mutable KindMasks held_km[2];
  };

  uint32_t n_obj_;
  bool guarded_;  // ExploreOptions::guarded_waits
  bool phase_bounded_;  // ExploreOptions::phase_bounded_balance
  bool held_phase_;     // ExploreOptions::held_phase_futures (and guarded waits)
  uint64_t held_phase_cuts_ = 0;
  bool odd_known_ = false;  // EnsureHeldTable: odd_slots_ computed for this state
  uint64_t odd_slots_ = 0;  // the slots whose current phase is odd
  bool exact_peers_;    // ExploreOptions::exact_peer_futures
  bool arrival_costs_;  // ExploreOptions::arrival_costs
  bool named_rule_;     // ExploreOptions::named_barrier_commute
  bool any_gate_ = false;  // some live agent's future has a gate (this state)
  bool upd_patched_ = false;  // Slot narrowed a unit's `upd` (MaskClosure: held sets again)
  std::vector<uint8_t> stuck_;  // per agent, this state: Stuck (0 not asked, 1 no, 2 yes)
  std::vector<std::vector<uint8_t>> stuck_pre_;  // per stuck agent: pre_ of its fixpoint
  std::vector<uint8_t> stuck_may_known_;         // per agent: stuck_may_ computed
  std::vector<uint64_t> stuck_may_;              // per agent: StuckMayMask
  std::vector<uint32_t> gate_q_;  // GatedSums: the hypotheses q_w
  std::vector<uint8_t> gate_raised_;        // GatedSums: hypotheses raised in this round
  std::vector<uint32_t> walk_pos_;          // GatedSums: per agent, where its walk stopped
  std::vector<uint32_t> walk_lo_, walk_ep_;  // GatedSums: per agent and slot, lo_w and its call
  uint32_t call_ep_ = 0;
  std::vector<uint8_t> gate_breaks_;        // GatedSums: breaking accesses ahead of the cuts
  std::vector<int64_t> gate_a_, gate_e_, gate_c_;  // GatedSums: arrivals, expect_tx and
                                                   // complete_tx bytes ahead of the cuts
  std::vector<uint8_t> pre_;  // GatedSums: per agent, its updates of o ahead of its cut (0, 1, 2+)
  std::vector<uint8_t> gated_;      // ComputeBalanced: balanced by the gated sums
  std::vector<uint8_t> asked_;      // ComputeBalanced: slots of some unit's step
  std::vector<uint8_t> gated_pre_;  // and then per slot and agent: pre_
  std::vector<std::vector<uint8_t>> static_future_;  // AgentMayTouch, every access kOther
  // The memo: a deque (appending keeps references to earlier entries valid) indexed by a hash
  // of the key; entries compare the whole key.
  std::deque<CacheEntry> entries_;
  std::vector<uint32_t> ctab_;
  std::vector<const CacheEntry*> last_[2];  // per truncation and agent: the last entry used
  std::vector<uint64_t> last_gen_[2];  // and the AgentState::gen it was used for
  std::vector<const std::vector<uint8_t>*> trunc_;  // per agent: its truncated future (SetTrunc)
  Engine* e_ = nullptr;  // the state of the current Choose
  bool balanced_ready_ = false;  // EnsureBalanced ran for it
  bool futures_set_ = false;     // SetFutures ran for it: units' futures for futures_cluster_
  uint32_t futures_cluster_ = 0;
  size_t futures_full_ = 0;  // the unit of that cluster with its full future (n_units_: none)
  std::vector<uint64_t> static_mask_;  // per agent: ObjBit of its static future
  std::vector<KindMasks> static_km_;   // per agent: its static future as masks
  bool masks_ = false;  // ChooseMasks applies (at most 64 objects, every rule on)
  std::vector<const KindMasks*> trunc_km_;  // per agent, this state (ChooseMasks)
  std::vector<MaskUnit> mu_;  // ChooseMasks's units
  static constexpr uint32_t kNoTrunc = 0xffffffffu, kUnset = 0xfffffffeu;
  FutureTable tables_[2];  // SetMaskFutures: per truncating cluster (table_cluster_)
  uint32_t table_cluster_[2] = {kUnset, kUnset};
  FutureTable* ft_ = nullptr;  // the current start's
  uint64_t in_bits_ = 0;      // MaskClosure's set
  uint64_t slot_known_ = 0;   // Slot: the slots whose flags are computed for this state
  bool sums_ready_ = false;   // Slot: UpdateAgentSums ran for this state
  std::vector<SlotFlags> slot_flags_;
  struct PeekMemo {
    bool valid = false;
    uint32_t pc = 0;
    uint64_t gen = 0;  // the AgentState::gen it was last found for (same pc and variables)
    std::vector<int64_t> vars;
    Footprint fp;
    uint32_t blocks_on = Engine::kNoSlot;
    uint32_t wait_slot = Engine::kNoSlot;  // an mbarrier wait's slot, and its state when peeked
    model::MbarrierState wait_state;
  };
  std::vector<PeekMemo> peek_;  // per agent (Peek)
  std::vector<uint8_t> balanced_;
  std::vector<uint8_t> complete_with_last_;
  std::vector<uint8_t> observed_;
  uint32_t n_slots_ = 0;
  // Rule switches for experiments (bits: 1 wait-wait, 2 one-holder NES, 4 wait vs held update,
  // 8 balanced barriers, 16 complete_tx-only, 32 cluster-wait truncation, 64 cluster
  // arrive/exit kinds, 128 predicted footprints); a set bit switches a rule off. All on.
  uint32_t n_clusters_ = 0;
  std::vector<uint32_t> unit_cluster_;
  std::vector<std::vector<uint32_t>> holders_;
  std::vector<engine::UpdateTally> sum_;
  std::vector<AgentSum> agent_sum_;  // ComputeBalanced: the agents' part of sum_, per slot
  std::vector<Contrib> contrib_;     // per agent: what agent_sum_ holds of it
  uint32_t n_inexact_ = 0;           // agents in contrib_ without an exact future
  std::vector<const CacheEntry*> full_;  // per agent: its full future in this state
  std::vector<uint64_t> trunc_mask_;
  std::vector<uint64_t> fmask_;  // per unit: its future's mask for the current start
  std::vector<engine::UpdateTally> tally_scratch_;
  static constexpr uint32_t kUnusedSlot = 0xffffffffu;
  std::vector<engine::UpdateTally> tally_acc_;  // Future: per slot (slot kUnusedSlot: empty)
  std::vector<uint32_t> touched_;
  std::vector<uint8_t> count_acc_;  // Future: update records per slot (then reset)
  Footprint scratch_;
  std::vector<Unit> units_;
  size_t n_units_ = 0;
  std::vector<uint8_t> in_;
  std::vector<uint8_t> best_set_;
  std::vector<size_t> work_;
};

// The reducer of a search with these options.
inline std::unique_ptr<Reducer> MakeReducer(const Engine& root, const ExploreOptions& o) {
  return std::make_unique<Reducer>(root, o.guarded_waits, o.mask_closure,
                                   o.phase_bounded_balance, o.held_phase_futures,
                                   o.exact_peer_futures, o.arrival_costs,
                                   o.named_barrier_commute);
}

}  // namespace parity::verifier::reduction

#include "verifier/reducer_balance.h"  // IWYU pragma: export
#include "verifier/reducer_masks.h"  // IWYU pragma: export
#include "verifier/held_phase.h"  // IWYU pragma: export
#include "verifier/reducer_named.h"  // IWYU pragma: export

#endif  // PARITY_VERIFIER_REDUCER_H_
