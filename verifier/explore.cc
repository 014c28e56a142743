#include "verifier/explore.h"

#include <algorithm>
#include <atomic>
#include <cassert>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <variant>
#include <utility>

#include <unistd.h>

#include "sim/common/check.h"
#include "verifier/fingerprint_set.h"
#include "verifier/rules.h"

namespace parity::verifier {

namespace {
// The process's resident set in bytes (Linux /proc/self/statm); 0 if unknown.
uint64_t ResidentBytes() {
  FILE* f = std::fopen("/proc/self/statm", "r");
  if (f == nullptr) return 0;
  unsigned long long size = 0, resident = 0;
  const int n = std::fscanf(f, "%llu %llu", &size, &resident);
  std::fclose(f);
  return n == 2 ? resident * static_cast<uint64_t>(sysconf(_SC_PAGESIZE)) : 0;
}
}  // namespace

namespace {

using engine::Choice;
using engine::Engine;
using engine::Footprint;
using engine::Outcome;

// Per stored state: the state it was reached from and the step (for the counterexample).
struct Record {
  uint32_t parent;
  uint32_t choice;  // bit 31: async; low bits: the index
};
constexpr uint32_t kRoot = 0xffffffffu;

uint32_t EncodeChoice(Choice c) {
  return (c.kind == Choice::Kind::kAsync ? 0x80000000u : 0u) | c.index;
}
Choice DecodeChoice(uint32_t v) {
  return {(v & 0x80000000u) ? Choice::Kind::kAsync : Choice::Kind::kAgent, v & 0x7fffffffu};
}

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
  Reducer(const Engine& root, bool guarded_waits, bool masks = true, bool phase_bounded = true)
      : n_obj_(root.num_objects()), guarded_(guarded_waits), phase_bounded_(phase_bounded) {
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
        case engine::WaitKind::kNone:
          u.now_all = true;
          break;
      }
      for (const auto& [o, k] : u.now) u.now_mask |= ObjBit(o);
    }
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
  void EnsureBalanced() {
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
  static void Merge(std::vector<uint8_t>& f, uint32_t o, uint8_t k) {
    f[o] = f[o] == kNone ? k
                         : static_cast<uint8_t>(engine::MergeAccess(
                               static_cast<engine::Access>(f[o]), static_cast<engine::Access>(k)));
  }

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
  void ComputeBalanced(const Engine& e) {
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
  // Adds an in-flight operation's part to the sums of its slot: a delivery's bytes
  // (complete_tx), a deferred cp.async arrive breaks; other operations (cp.async and store
  // completions, whose `slot` is no barrier) add nothing.
  static void AddInFlight(const Engine::InFlight& f, engine::UpdateTally* t) {
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
  // One slot's sums over every unit's whole future (ComputeBalanced's sum_[o], for one slot):
  // the agents' part (UpdateAgentSums), the deliveries in flight, deferred arrives breaking.
  engine::UpdateTally WholeSums(const Engine& e, uint32_t o) const {
    const AgentSum& g = agent_sum_[o];
    engine::UpdateTally t{o, g.arrivals, g.expect, g.complete, g.breaks != 0};
    for (const Engine::InFlight& op : e.in_flight_ops()) {
      if (op.slot == o) AddInFlight(op, &t);
    }
    for (const Engine::InFlight& op : e.deferred_ops()) t.breaks = t.breaks || op.slot == o;
    return t;
  }
  // The balance condition of one slot (ComputeBalanced) given the sums over every unit's future.
  static bool BalancedSlot(const model::MbarrierState& st, const engine::UpdateTally& t) {
    constexpr int64_t kTxMax = (int64_t{1} << 20) - 1;  // PTX ISA: tx-count range
    return st.life == model::MbarrierLife::kLive && !t.breaks && st.pending_count >= t.arrivals &&
           int64_t{st.tx_count} + t.expect - t.complete == 0 &&
           int64_t{st.tx_count} - t.complete >= -kTxMax &&
           int64_t{st.tx_count} + t.expect <= kTxMax;
  }
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
  bool MayGate(const Engine& e, uint32_t o) const {
    if (!phase_bounded_ || n_inexact_ != 0) return false;
    const model::MbarrierState& st = e.slot_state(o);
    return st.life == model::MbarrierLife::kLive && any_gate_;
  }
  static constexpr uint32_t kNoHyp = 0xffffffffu, kGateAhead = 3;
  engine::UpdateTally GatedSums(const Engine& e, uint32_t o) {
    return Fixpoint(e, o, kNoAgent, nullptr);
  }
  // Whether the current phase of slot o cannot complete while agent `stopped` takes no step
  // (the same argument with o's hypothesis starved too and the agent's whole future cut). Then
  // an enabled wait of that agent on o commutes with every arrive/complete_tx of o outside a
  // persistent set holding it: o's phase and parity stay as they are on such paths, and the
  // wait reads nothing else (its observed flag aside, see Meets).
  bool StuckWhileStopped(const Engine& e, uint32_t o, uint32_t stopped) {
    if (!phase_bounded_ || n_inexact_ != 0 || !any_gate_) return false;
    const model::MbarrierState& st = e.slot_state(o);
    if (st.life != model::MbarrierLife::kLive) return false;
    bool starved = false;
    Fixpoint(e, o, stopped, &starved);
    return starved;
  }
  // StuckWhileStopped for agent a's enabled wait on slot o, once per state (an agent's step
  // waits on one slot).
  bool Stuck(uint32_t o, uint32_t a) {
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
  // With Stuck(o, a): whether unit y may access o other than by waiting before a moves.
  bool StuckMay(uint32_t a, uint32_t y_agent) const {
    return y_agent == kNoAgent || stuck_pre_[a][y_agent] != 0;
  }
  // The same as a mask of ChooseMasks's units.
  uint64_t StuckMayMask(uint32_t a) {
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
  // GatedSums, and with o_starved != nullptr StuckWhileStopped: o's hypothesis is then checked
  // like the others (*o_starved: whether it held) and `stopped`'s future counts nothing.
  engine::UpdateTally Fixpoint(const Engine& e, uint32_t o, uint32_t stopped, bool* o_starved) {
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
    engine::UpdateTally t{o};
    auto add = [&](uint32_t a, const engine::UpdateTally& r) {
      if (r.slot >= n_slots) return;
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
        if (r.slot >= n_slots) continue;
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
      if (c.seq.empty()) {  // no gate ahead: the whole future
        for (const engine::UpdateTally& r : c.tally) add(a, r);
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
                             (a < need || (a == need && gate_c_[w] < st.tx_count + gate_e_[w]));
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
  // The agents' part of the sums (exited agents count nothing; one with a static
  // over-approximation means no counts: nothing is balanced, n_inexact_ > 0), kept across
  // states: only the agents whose memo entry changed since the last state are subtracted and
  // added again.
  void UpdateAgentSums(const Engine& e) {
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
  struct AgentSum {
    int64_t arrivals = 0, expect = 0, complete = 0;
    int64_t breaks = 0;  // how many tallies break
  };
  struct Contrib {
    const std::vector<engine::UpdateTally>* tally = nullptr;  // kind 2: the memo entry's
    uint8_t kind = 0;  // 0 exited (or none yet), 1 no exact future, 2 exact
  };
  void ApplyContrib(const Contrib& c, int64_t sign) {
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
  void Add(const engine::UpdateTally& t) {
    if (t.slot >= sum_.size()) return;
    engine::UpdateTally& s = sum_[t.slot];
    s.arrivals += t.arrivals;
    s.expect += t.expect;
    s.complete += t.complete;
    s.breaks = s.breaks || t.breaks;
  }

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
    for (const auto& [o, k] : units_[x].now) {
      const uint8_t fk = FutureKind(y, o);
      if (fk == kNone) continue;
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
  };
  // The units' futures under one truncation (SetMaskFutures), transposed: per access kind and
  // object, the units (a bit each) whose future accesses the object so; and per unit the
  // objects of its future.
  struct FutureTable {
    uint64_t units[6][64];
    uint64_t any[64];
  };
  static constexpr int kNesIdx = 6;

  void ChooseMasks(Engine& e, const std::vector<Choice>& choices,
                   const std::vector<const Footprint*>& fps, const std::vector<uint32_t>& guard,
                   std::vector<uint8_t>* take) {
    const size_t n_enabled = choices.size();
    const uint32_t n_agents = static_cast<uint32_t>(e.num_agents());
    slot_known_ = 0;
    upd_patched_ = false;
    sums_ready_ = false;
    n_units_ = 0;
    if (mu_.size() < 64) mu_.resize(64);
    for (size_t i = 0; i < n_enabled; ++i) {
      MaskUnit& u = mu_[n_units_++];
      ResetUnit(u);
      u.enabled = true;
      const Footprint& fi = *fps[i];
      u.now_all = fi.overflow;
      for (uint32_t k = 0; k < fi.n; ++k) {
        if (!Shared(choices[i], fi, k)) continue;
        u.now[static_cast<uint8_t>(fi.kinds[k])] |= ObjBit(fi.objects[k]);
      }
      if (choices[i].kind == Choice::Kind::kAgent) {
        u.agent = choices[i].index;
        u.cluster = e.agent_info(u.agent).cluster;
        u.upd = full_[u.agent]->km.k[kTx] | full_[u.agent]->km.k[kArr];
        u.self = u.upd & (full_[u.agent]->multi_mask | ~(u.now[kTx] | u.now[kArr]));
        continue;
      }
      const Engine::InFlight& f = e.in_flight_ops()[choices[i].index];
      if (f.kind == Engine::InFlight::kCpAsync) {
        u.own = static_km_[f.agent];
        continue;
      }
      u.own = KindMasks{};
      for (uint32_t k = 0; k < fi.n; ++k) {
        MergeMask(u.own, fi.objects[k], static_cast<uint8_t>(fi.kinds[k]));
      }
      switch (f.kind) {
        case Engine::InFlight::kTmaDeliver:
        case Engine::InFlight::kBulkDeliver:
        case Engine::InFlight::kStAsync:
          MergeMask(u.own, f.slot, kTx);
          break;
        case Engine::InFlight::kCpAsyncArrive:
          MergeMask(u.own, f.slot, kOther);
          break;
        default:  // stores: the agent's group state
          MergeMask(u.own, e.GroupsObject(f.agent), kOther);
          break;
      }
      u.upd = u.own.k[kTx] | u.own.k[kArr];
    }
    for (uint32_t a = 0; a < n_agents; ++a) {
      const Engine::AgentState& s = e.agent_state(a);
      const bool guarded = !guard.empty() && guard[a] != Engine::kNoSlot;
      if (!guarded && s.status != 1) continue;
      MaskUnit& u = mu_[n_units_++];
      ResetUnit(u);
      u.agent = a;
      const engine::AgentInfo& info = e.agent_info(a);
      u.cluster = info.cluster;
      u.upd = full_[a]->km.k[kTx] | full_[a]->km.k[kArr];
      u.self = u.upd;  // set below only for its wait (no update)
      if (guarded) {
        u.now[kNesIdx] = ObjBit(guard[a]);
        continue;
      }
      switch (s.wait) {
        case engine::WaitKind::kMbarrierParity:
        case engine::WaitKind::kMbarrierToken:
          u.now[kNesIdx] = ObjBit(s.wait_slot);
          break;
        case engine::WaitKind::kClusterBarrier:
          u.now[kNesIdx] = ObjBit(e.ClusterObject(info.cluster));
          break;
        case engine::WaitKind::kNamedBarrier:
          u.now[kOther] = ObjBit(e.NamedObject(info.cta_global));
          break;
        case engine::WaitKind::kCpAsyncGroups:
        case engine::WaitKind::kBulkGroups:
          u.now[kOther] = ObjBit(e.GroupsObject(a));
          break;
        case engine::WaitKind::kNone:
          u.now_all = true;
          break;
      }
    }
    table_cluster_[0] = table_cluster_[1] = kUnset;
    // Pass 1: the first start whose closure holds one enabled step; pass 2 (none): the
    // smallest closure over every start.
    size_t best = n_units_ + 1;
    uint64_t best_bits = 0;
    for (size_t start = 0; start < n_enabled; ++start) {
      SetMaskFutures(start);
      if (MaskClosure(start, 2) == 1) {
        best = 1;
        best_bits = in_bits_;
        break;
      }
    }
    for (size_t start = 0; start < n_enabled && best > 1; ++start) {
      SetMaskFutures(start);
      const size_t enabled_in = MaskClosure(start, best);
      if (enabled_in < best) {
        best = enabled_in;
        best_bits = in_bits_;
      }
    }
    take->assign(n_enabled, 0);
    for (size_t i = 0; i < n_enabled; ++i) (*take)[i] = (best_bits >> i) & 1;
  }
  // Merges access k of object o into m (engine::MergeAccess).
  static void MergeMask(KindMasks& m, uint32_t o, uint8_t k) {
    const uint64_t b = ObjBit(o);
    if ((m.any & b) != 0) {
      for (uint8_t kk = 0; kk < 6; ++kk) {
        if ((m.k[kk] & b) == 0) continue;
        m.k[kk] &= ~b;
        k = static_cast<uint8_t>(engine::MergeAccess(static_cast<engine::Access>(kk),
                                                     static_cast<engine::Access>(k)));
        break;
      }
    }
    m.k[k] |= b;
    m.any |= b;
  }
  static void ResetUnit(MaskUnit& u) {
    u.enabled = u.now_all = false;
    u.agent = kNoAgent;
    u.cluster = 0xffffffffu;
    for (uint64_t& m : u.now) m = 0;
    u.upd = 0;
    u.self = 0;
  }
  // The units' futures for closures from `start` (SetFutures: the agents of the start's cluster
  // get their futures up to their next barrier.cluster.wait when the start is an agent still
  // expected there; the start's own future is never read, as it is in the set). They depend
  // only on the truncating cluster: the tables of two clusters (or none) are kept per state.
  void SetMaskFutures(size_t start) {
    const MaskUnit& us = mu_[start];
    uint32_t trunc_cluster = kNoTrunc;
    if (us.agent != kNoAgent && us.enabled && !e_->ClusterArrivalOutstanding(us.agent)) {
      trunc_cluster = us.cluster;
    }
    for (int t = 0; t < 2; ++t) {
      if (table_cluster_[t] == trunc_cluster) {
        ft_ = &tables_[t];
        return;
      }
    }
    // Fill the table not used last (the other one stays valid).
    const int t = ft_ == &tables_[0] && table_cluster_[0] != kUnset ? 1 : 0;
    table_cluster_[t] = trunc_cluster;
    FutureTable& ft = tables_[t];
    ft_ = &ft;
    for (int k = 0; k < 6; ++k) std::fill_n(ft.units[k], n_obj_, 0);
    for (size_t y = 0; y < n_units_; ++y) {
      const MaskUnit& u = mu_[y];
      const KindMasks* f;
      if (u.agent == kNoAgent) {
        f = &u.own;
      } else if (u.cluster == trunc_cluster && !e_->ClusterWaitPasses(u.agent)) {
        if (trunc_km_[u.agent] == nullptr) trunc_km_[u.agent] = &Future(*e_, u.agent, true)->km;
        f = trunc_km_[u.agent];
      } else {
        f = &full_[u.agent]->km;
      }
      const uint64_t yb = uint64_t{1} << y;
      for (int k = 0; k < 6; ++k) {
        for (uint64_t m = f->k[k]; m != 0; m &= m - 1) ft.units[k][__builtin_ctzll(m)] |= yb;
      }
      ft.any[y] = f->any;
    }
  }
  // Per slot, computed on first use in a state: whether it is balanced (ComputeBalanced), the
  // phase completes with the last outstanding update (complete_with_last_), its preceding phase
  // was observed (observed_), and whether complete_tx-only accesses commute (TxCommutes).
  struct SlotFlags {
    bool bal = false, cwl = false, obs = false, txc = false;
  };
  SlotFlags Slot(uint32_t o) {
    if ((slot_known_ >> o) & 1) return slot_flags_[o];
    slot_known_ |= ObjBit(o);
    if (slot_flags_.size() < 64) slot_flags_.resize(64);
    SlotFlags& f = slot_flags_[o];
    const Engine& e = *e_;
    const model::MbarrierState& st = e.slot_state(o);
    f.txc = st.life == model::MbarrierLife::kLive && st.pending_count > 0;
    f.bal = f.cwl = f.obs = false;
    if (!sums_ready_) {
      sums_ready_ = true;
      UpdateAgentSums(e);
    }
    if (n_inexact_ != 0) return f;
    engine::UpdateTally t = WholeSums(e, o);
    f.bal = BalancedSlot(st, t);
    if (!f.bal && MayGate(e, o)) {
      t = GatedSums(e, o);
      f.bal = BalancedSlot(st, t);
      if (f.bal) {
        // Only the agents whose updates come before their cuts hold one (EnsureBalanced's
        // holders). The units' `upd` bits of o were read only where o's flags were asked for
        // (held, sens, FirstHolder), which is now: MaskClosure recomputes its held sets.
        for (size_t y = 0; y < n_units_; ++y) {
          MaskUnit& u = mu_[y];
          if (u.agent == kNoAgent) continue;
          const uint64_t b = ObjBit(o);
          if (pre_[u.agent] == 0 && (u.upd & b) != 0) {
            u.upd &= ~b;
            upd_patched_ = true;
          }
          // SelfHeld with the updates ahead of the cut.
          const bool now_upd = ((u.now[kTx] | u.now[kArr]) & b) != 0;
          const uint64_t self =
              (u.upd & b) != 0 && pre_[u.agent] >= (now_upd ? 2 : 1) ? b : 0;
          if ((u.self & b) != self) {
            u.self = (u.self & ~b) | self;
            upd_patched_ = true;
          }
        }
      }
    }
    f.cwl = f.bal && st.pending_count == t.arrivals;
    f.obs = f.bal && st.preceding_phase_observed;
    return f;
  }
  // The first unit (in unit order) holding an outstanding update of o, or kNoAgent.
  uint32_t FirstHolder(uint32_t o) const {
    const uint64_t b = ObjBit(o);
    for (size_t y = 0; y < n_units_; ++y) {
      if (mu_[y].upd & b) return static_cast<uint32_t>(y);
    }
    return kNoAgent;
  }
  // For unit x of the set, with `held` the objects some other unit of the set holds an update
  // of: per future kind, the objects on which a unit whose future accesses them so meets x
  // (Meets); *special: units that meet x by the one-holder rule; *sens: the balanced objects of
  // x that no other unit of the set holds (the result changes when a holder of one joins).
  void MaskTargets(const MaskUnit& ux, uint64_t held, uint64_t tgt[6], uint64_t* special,
                   uint64_t* sens) {
    const uint64_t other = ux.now[kOther];
    const uint64_t carr = ux.now[kCArrive], exit = ux.now[kExitAcc];
    tgt[kOther] = other | carr | exit;
    tgt[kTx] = other | carr | exit;
    tgt[kCArrive] = other | exit;
    tgt[kExitAcc] = other | carr;
    tgt[kArr] = other | carr | exit;
    tgt[kWaitK] = other | carr | exit;
    *special = 0;
    *sens = 0;
    const uint64_t wait = ux.now[kWaitK], tx = ux.now[kTx], arr = ux.now[kArr],
                   nes = ux.now[kNesIdx];
    for (uint64_t rest = wait | tx | arr | nes; rest != 0; rest &= rest - 1) {
      const uint32_t o = static_cast<uint32_t>(__builtin_ctzll(rest));
      const uint64_t b = ObjBit(o);
      SlotFlags f;
      if (o < n_slots_) f = Slot(o);
      const bool h = f.bal && (held & b) != 0;
      if (f.bal && !h) *sens |= b;
      const bool quiet = f.bal && f.obs && h;  // an update and a wait or other access commute
      if (wait & b) {
        tgt[kCArrive] |= b;
        tgt[kExitAcc] |= b;
        const bool tx_meets = !(f.bal && h), arr_meets = !quiet;
        if (o < n_slots_ && ux.agent != kNoAgent && Stuck(o, ux.agent)) {
          // Meets: a wait on a phase that cannot complete before its agent moves; only the
          // units that may update o before then, with other accesses or unobserved arrivals.
          uint64_t m = ft_->units[kOther][o];
          if (arr_meets && !e_->slot_state(o).preceding_phase_observed) m |= ft_->units[kArr][o];
          *special |= m & StuckMayMask(ux.agent);
        } else {
          tgt[kOther] |= b;
          if (tx_meets) tgt[kTx] |= b;
          if (arr_meets) tgt[kArr] |= b;
        }
      }
      if (tx & b) {
        if (!quiet) tgt[kOther] |= b;
        if (!(f.bal || f.txc)) tgt[kTx] |= b;
        if (!f.bal) tgt[kArr] |= b;
        if (!(f.bal && h)) tgt[kWaitK] |= b;
        tgt[kCArrive] |= b;
        tgt[kExitAcc] |= b;
      }
      if (arr & b) {
        if (!quiet) {
          tgt[kOther] |= b;
          tgt[kWaitK] |= b;
        }
        if (!f.bal) {
          tgt[kTx] |= b;
          tgt[kArr] |= b;
        }
        tgt[kCArrive] |= b;
        tgt[kExitAcc] |= b;
      }
      if (nes & b) {
        const uint32_t first = f.bal && f.cwl ? FirstHolder(o) : kNoAgent;
        if (first != kNoAgent) {
          // One holder of an outstanding update is a necessary enabling set (Meets).
          if (!h && (ft_->any[first] & b) != 0) *special |= ObjBit(first);
        } else if (f.txc) {
          tgt[kOther] |= b;
          tgt[kArr] |= b;
        } else {
          tgt[kOther] |= b;
          tgt[kTx] |= b;
          tgt[kCArrive] |= b;
          tgt[kExitAcc] |= b;
          tgt[kArr] |= b;
        }
      }
    }
  }
  // Closure's twin on masks: the closure of {start} under Meets, stopping once it holds
  // `bound` enabled units; in_bits_ holds it. Returns the number of enabled units in it.
  size_t MaskClosure(size_t start, size_t bound) {
    const size_t n = n_units_;
    in_bits_ = ObjBit(static_cast<uint32_t>(start));
    work_.clear();
    work_.push_back(start);
    size_t enabled_in = 1;
    // The objects one member of the set holds an outstanding update of, and those two or more
    // hold (so that "held by a member other than x" needs no pass over the set).
    uint64_t held_once = mu_[start].upd, held_twice = 0;
    auto add = [&](size_t y) {
      in_bits_ |= uint64_t{1} << y;
      work_.push_back(y);
      if (mu_[y].enabled) ++enabled_in;
      held_twice |= held_once & mu_[y].upd;
      held_once |= mu_[y].upd;
    };
    while (!work_.empty() && enabled_in < bound) {
      const size_t x = work_.back();
      work_.pop_back();
      const MaskUnit& ux = mu_[x];
      if (ux.now_all) {
        for (size_t y = 0; y < n && enabled_in < bound; ++y) {
          if (((in_bits_ >> y) & 1) == 0) add(y);
        }
        continue;
      }
      uint64_t settled = 0;  // candidates at or below the last unit that joined
      for (bool again = true; again;) {
        again = false;
        const uint64_t held = (held_once & ~ux.upd) | (held_twice & ux.upd) | ux.self;
        uint64_t tgt[6], special, sens;
        MaskTargets(ux, held, tgt, &special, &sens);
        if (upd_patched_) {  // Slot narrowed some units' `upd`: the held sets again
          upd_patched_ = false;
          held_once = held_twice = 0;
          for (uint64_t m = in_bits_; m != 0; m &= m - 1) {
            const uint64_t u = mu_[__builtin_ctzll(m)].upd;
            held_twice |= held_once & u;
            held_once |= u;
          }
          again = true;
          continue;
        }
        uint64_t cand = special;
        const FutureTable& ft = *ft_;
        for (int k = 0; k < 6; ++k) {
          for (uint64_t m = tgt[k]; m != 0; m &= m - 1) cand |= ft.units[k][__builtin_ctzll(m)];
        }
        for (cand &= ~in_bits_ & ~settled; cand != 0 && enabled_in < bound; cand &= cand - 1) {
          const size_t y = static_cast<size_t>(__builtin_ctzll(cand));
          add(y);
          if ((mu_[y].upd & sens) != 0) {
            // Another holder joined: the rest of the candidates are judged against the new set.
            settled = y == 63 ? ~uint64_t{0} : (uint64_t{2} << y) - 1;
            again = true;
            break;
          }
        }
      }
    }
    return enabled_in;
  }

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
    if (e.AgentFuture(a, &scratch_, truncate, &truncated, &tally_scratch_)) {
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
        if (t.gate >= 0) {
          any_gate = true;
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
          if (t.gate >= 0) c.gate_slots.push_back(t.slot);
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
    std::vector<engine::UpdateTally> tally;   // exact && !truncate: per slot, by slot
    std::vector<engine::UpdateTally> seq;     // exact && !truncate: updates and gates, in order
    std::vector<uint32_t> gate_slots;         // the slots of seq's gates, distinct
    std::vector<uint32_t> multi;  // exact && !truncate: slots with two or more update records
    uint64_t multi_mask = 0;      // ObjBit of multi
    std::vector<uint32_t> updates;  // the objects whose kind is kCompleteTx or kArrive, ascending
    uint64_t mask = 0;              // ObjBit of every object in kinds
    KindMasks km;                   // kinds as masks (exact when there are at most 64 objects)
  };

  uint32_t n_obj_;
  bool guarded_;  // ExploreOptions::guarded_waits
  bool phase_bounded_;  // ExploreOptions::phase_bounded_balance
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
  const FutureTable* ft_ = nullptr;  // the current start's
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

// Whether a block (recursively) holds a `readback` (the engine then tracks write data per agent:
// content tags that name agents, which the symmetric fingerprint does not permute).
bool HasReadback(const ir::Block& block) {
  for (const ir::Stmt& st : block) {
    if (const auto* f = std::get_if<ir::For>(&st.node)) {
      if (HasReadback(f->body)) return true;
    } else if (const auto* i = std::get_if<ir::If>(&st.node)) {
      if (HasReadback(i->then_body) || HasReadback(i->else_body)) return true;
    } else if (const auto* op = std::get_if<ir::Op>(&st.node)) {
      if (std::holds_alternative<ir::GlobalReadback>(*op)) return true;
    }
  }
  return false;
}

// Symmetry classes (explore.h): the agents of one role in one CTA are interchangeable when the
// role never reads the `agent` builtin (the only per-agent input that differs between them).
// An expression reading `agent` is attributed to the role whose text contains it: the roles'
// source lines split the file (a role runs from its `role` line to the next role's); one that
// cannot be attributed (another file, no line, before the first role) disables symmetry.
// Returns one class id per agent (Engine::kNoGroup: alone) and a line for the report.
std::vector<uint32_t> SymmetryClasses(const ir::Program& p, const Engine& e, std::string* why) {
  const uint32_t n = static_cast<uint32_t>(e.num_agents());
  std::vector<uint32_t> cls(n, Engine::kNoGroup);
  const size_t nr = p.roles.size();
  std::vector<uint8_t> reads_agent(nr, 0);
  for (const ir::Role& r : p.roles) {
    if (HasReadback(r.body)) {
      *why = "symmetry reduction: not applied (the schedule has a readback: write data is "
             "tracked per agent)";
      return {};
    }
  }
  for (const ir::Expr& x : p.exprs) {
    if (x.kind != ir::Expr::Kind::kBuiltin || x.op != static_cast<uint8_t>(ir::Builtin::kAgent)) {
      continue;
    }
    size_t owner = nr;
    int owner_line = 0;
    for (size_t r = 0; r < nr; ++r) {
      const SourceLocation& w = p.roles[r].where;
      if (w.file == x.where.file && w.line > 0 && w.line <= x.where.line && w.line >= owner_line) {
        owner = r;
        owner_line = w.line;
      }
    }
    if (owner == nr || x.where.line <= 0) {
      *why = "symmetry reduction: not applied (an `agent` read outside any role's text)";
      return {};
    }
    reads_agent[owner] = 1;
  }
  // Class = (CTA, role) for roles that do not read `agent`, with at least two agents.
  std::vector<std::pair<uint64_t, uint32_t>> keys;
  for (uint32_t a = 0; a < n; ++a) {
    const engine::AgentInfo& info = e.agent_info(a);
    if (reads_agent[info.role]) continue;
    keys.emplace_back((uint64_t{info.cta_global} << 32) | info.role, a);
  }
  std::sort(keys.begin(), keys.end());
  uint32_t classes = 0, members = 0;
  std::string roles;
  for (size_t i = 0; i < keys.size();) {
    size_t j = i;
    while (j < keys.size() && keys[j].first == keys[i].first) ++j;
    if (j - i >= 2) {
      for (size_t k = i; k < j; ++k) cls[keys[k].second] = classes;
      ++classes;
      members += static_cast<uint32_t>(j - i);
      const std::string& name = p.roles[keys[i].first & 0xffffffffu].name;
      if (roles.find(name) == std::string::npos) roles += (roles.empty() ? "" : ", ") + name;
    }
    i = j;
  }
  if (classes == 0) {
    *why = "symmetry reduction: not applied (no two agents of one role in one CTA that do not "
           "read `agent`; interchangeable CTAs are not detected)";
    return {};
  }
  *why = "symmetry reduction: applied: " + std::to_string(classes) +
         " classes of interchangeable agents (same role, same CTA, the role does not read "
         "`agent`: " + roles + "; " + std::to_string(members) +
         " agents); interchangeable CTAs are not detected";
  return cls;
}

std::vector<Choice> PathTo(const std::vector<Record>& records, uint32_t id) {
  std::vector<Choice> path;
  for (uint32_t at = id; records[at].parent != kRoot; at = records[at].parent) {
    path.push_back(DecodeChoice(records[at].choice));
  }
  std::reverse(path.begin(), path.end());
  return path;
}

}  // namespace

const char* ExploreVerdictName(ExploreVerdict v) {
  switch (v) {
    case ExploreVerdict::kVerified: return "verified";
    case ExploreVerdict::kViolation: return "violation";
    case ExploreVerdict::kDeadlock: return "deadlock";
    case ExploreVerdict::kBadInput: return "bad-input";
    case ExploreVerdict::kIncomplete: return "incomplete";
    case ExploreVerdict::kRuleViolation: return "rule-violation";
  }
  return "?";
}

namespace {

// One search (breadth-first or depth-first) over the reduced or the full state graph.
class Search {
  // What one thread needs to expand states: its reducer (with its memo of agents' futures) and
  // scratch vectors.
  struct Worker {
    std::unique_ptr<Reducer> reducer;
    std::vector<Choice> choices;
    std::vector<Footprint> fps;
    std::vector<const Footprint*> fpp;  // per choice: its footprint (memo, or in fps)
    std::optional<Engine> scratch;  // measuring a step whose footprint cannot be predicted
    std::vector<uint8_t> take;
    std::vector<uint32_t> guard;  // per agent: the slot its next step would only block on
    std::vector<Choice> gchoices;
    std::vector<const Footprint*> gfps;
    std::vector<size_t> gmap;
    std::vector<uint8_t> gtake;
    size_t selected = 0;  // Expand: how many of `take` are set
  };

 public:
  Search(const ir::Program& program, const std::vector<int64_t>& params,
         const ExploreOptions& options, bool breadth_first)
      : program_(program), params_(params), options_(options), bfs_(breadth_first) {}

  ExploreResult Run() {
    t0_ = Clock::now();
    engine::EngineOptions eo;
    eo.record_trace = false;
    Expected<Engine> created = Engine::Create(program_, params_, eo);
    if (!created.ok()) {
      res_.verdict = ExploreVerdict::kBadInput;
      res_.error = created.status();
      return res_;
    }
    {
      std::string why;
      classes_ = SymmetryClasses(program_, *created, &why);
      // The visited set is kept modulo symmetry in the reduced search (options: symmetry);
      // terminal fingerprints are canonical whenever classes exist, so that a brute-force search
      // and a symmetry-reduced one can be compared.
      sym_visited_ = !classes_.empty() && options_.symmetry && options_.reduction;
      res_.symmetry_applied = sym_visited_;
      res_.symmetry = sym_visited_ ? why
                      : classes_.empty() ? why
                                         : "symmetry reduction: not applied (switched off)";
    }
    seen_.Insert(VisitedFp(*created));
    records_.push_back({kRoot, 0});
    w0_.reducer = std::make_unique<Reducer>(*created, options_.guarded_waits,
                                            options_.mask_closure,
                                            options_.phase_bounded_balance);
    if (options_.collect_barrier_states) CollectBarriers(*created);
    if (bfs_ && options_.threads > 1) {
      ParallelBfs(std::move(created).value());
    } else if (bfs_) {
      Bfs(std::move(created).value());
    } else {
      Dfs(std::move(created).value());
    }
    if (stopped_ && !found_ && !done_) res_.verdict = ExploreVerdict::kIncomplete;
    res_.stats.states = records_.size();
    res_.stats.table_bytes = seen_.bytes() + records_.capacity() * sizeof(Record);
    res_.stats.seconds = std::chrono::duration<double>(Clock::now() - t0_).count();
    std::sort(res_.terminals.begin(), res_.terminals.end());
    // Distinct end states can share a symmetric fingerprint (searches without symmetry).
    res_.terminals.erase(std::unique(res_.terminals.begin(), res_.terminals.end()),
                         res_.terminals.end());
    std::sort(res_.barrier_states.begin(), res_.barrier_states.end());
    res_.barrier_states.erase(std::unique(res_.barrier_states.begin(), res_.barrier_states.end()),
                              res_.barrier_states.end());
    return res_;
  }

 private:
  using Clock = std::chrono::steady_clock;

  uint64_t VisitedFp(const Engine& e) const {
    return sym_visited_ ? e.SymmetricFingerprint(classes_) : e.Fingerprint();
  }
  uint64_t TerminalFp(const Engine& e, uint64_t visited) const {
    if (classes_.empty() || sym_visited_) return visited;
    return e.SymmetricFingerprint(classes_);
  }

  // The --max-memory bound: the process's resident memory (the fingerprint table's address-space
  // reservation is not resident until it is used). Sets the bound's message.
  bool MemoryExceeded() {
    if (options_.max_memory_bytes == 0) return false;
    const uint64_t rss = ResidentBytes();
    if (rss <= options_.max_memory_bytes) return false;
    res_.bound = "--max-memory " + std::to_string(options_.max_memory_bytes >> 20) +
                 " MiB (resident memory reached " + std::to_string(rss >> 20) + " MiB)";
    return true;
  }

  // Inlined where it runs per transition: the common case is two compares.
  __attribute__((always_inline)) bool OutOfBounds() {
    if (records_.size() < options_.max_states &&
        ((options_.time_limit_s <= 0 && options_.max_memory_bytes == 0) ||
         (res_.stats.expanded & 255) != 0)) {
      return false;
    }
    return OutOfBoundsSlow();
  }
  bool OutOfBoundsSlow() {
    if (records_.size() >= options_.max_states) {
      res_.bound = "--max-states " + std::to_string(options_.max_states);
      stopped_ = true;
      return true;
    }
    if (MemoryExceeded()) {
      stopped_ = true;
      return true;
    }
    if (options_.time_limit_s > 0 && (res_.stats.expanded & 255) == 0 &&
        std::chrono::duration<double>(Clock::now() - t0_).count() > options_.time_limit_s) {
      res_.bound = "--time-limit";
      stopped_ = true;
      return true;
    }
    return false;
  }

  // The enabled steps of `e` (w.choices) and the ones the search takes (w.take: all, or the
  // persistent set). Returns their number.
  size_t Expand(Worker& w, Engine& e) {
    e.Choices(&w.choices);
    const size_t n = w.choices.size();
    if (options_.reduction && n > 1) {
      // What each enabled step touches, predicted without taking it (an over-approximation of
      // the measured footprint, which is as good for the persistent set); measured by taking
      // the step only where the prediction fails.
      w.fps.resize(n);
      w.fpp.resize(n);
      w.guard.assign(e.num_agents(), Engine::kNoSlot);
      size_t n_guarded = 0;
      for (size_t i = 0; i < n; ++i) {
        const Choice c = w.choices[i];
        if (c.kind == Choice::Kind::kAgent) {
          uint32_t blocks_on = Engine::kNoSlot;
          const Footprint* peeked =
              w.reducer->Peek(e, c.index, options_.guarded_waits ? &blocks_on : nullptr);
          if (blocks_on != Engine::kNoSlot) {
            w.guard[c.index] = blocks_on;
            ++n_guarded;
          }
          if (peeked == nullptr) {
            Footprint& fp = w.fps[i];
            if (w.scratch) {
              *w.scratch = e;
            } else {
              w.scratch.emplace(e);
            }
            w.scratch->Step(c, &fp);
            peeked = &fp;
          }
          w.fpp[i] = peeked;
          continue;
        }
        Footprint& fp = w.fps[i];
        w.fpp[i] = &fp;
        fp.Clear();
        const Engine::InFlight& f = e.in_flight_ops()[c.index];
        switch (f.kind) {
          case Engine::InFlight::kTmaDeliver:
          case Engine::InFlight::kBulkDeliver:
          case Engine::InFlight::kStAsync:
            fp.Add(f.slot, engine::Access::kCompleteTx);
            break;
          case Engine::InFlight::kCpAsyncArrive:
            fp.Add(f.slot);
            break;
          default:  // cp.async and store completions: the issuing agent's group state
            fp.Add(e.GroupsObject(f.agent));
            break;
        }
      }
      if (n_guarded == 0 || n_guarded == n) {
        // n_guarded == n: every enabled step only blocks (a deadlock follows); they are taken
        // as steps so that the engine reaches and reports its deadlock state.
        w.guard.clear();
        w.reducer->Choose(e, w.choices, w.fpp, w.guard, &w.take);
      } else {
        // Guarded waits (explore.h): a step that would only block is left out; its agent is a
        // blocked unit for the persistent set.
        w.gchoices.clear();
        w.gfps.clear();
        w.gmap.clear();
        for (size_t i = 0; i < n; ++i) {
          if (w.choices[i].kind == Choice::Kind::kAgent &&
              w.guard[w.choices[i].index] != Engine::kNoSlot) {
            continue;
          }
          w.gchoices.push_back(w.choices[i]);
          w.gfps.push_back(w.fpp[i]);
          w.gmap.push_back(i);
        }
        w.reducer->Choose(e, w.gchoices, w.gfps, w.guard, &w.gtake);
        w.take.assign(n, 0);
        for (size_t j = 0; j < w.gmap.size(); ++j) w.take[w.gmap[j]] = w.gtake[j];
      }
      w.selected = static_cast<size_t>(
          std::count_if(w.take.begin(), w.take.end(), [](uint8_t t) { return t != 0; }));
    } else {
      w.take.assign(n, 1);
      w.selected = n;
    }
    return n;
  }

  void CollectBarriers(const Engine& e) {
    for (uint32_t o = 0; o < e.num_barrier_slots(); ++o) {
      const model::MbarrierState& st = e.slot_state(o);
      BarrierValue v;
      v.slot = o;
      v.life = static_cast<uint8_t>(st.life);
      v.phase = st.phase;
      v.pending = st.pending_count;
      v.tx = st.tx_count;
      res_.barrier_states.push_back(v);
    }
    if (res_.barrier_states.size() > (size_t{1} << 20)) {
      std::sort(res_.barrier_states.begin(), res_.barrier_states.end());
      res_.barrier_states.erase(
          std::unique(res_.barrier_states.begin(), res_.barrier_states.end()),
          res_.barrier_states.end());
    }
  }

  // A successor state: stores it when new. Returns its record id, or kRoot when it was seen
  // before or ended the run (then *keep is false); sets found_ / done_ for findings.
  uint32_t Visit(const Engine& s, uint32_t parent, Choice c, bool* keep) {
    return Visit(s, VisitedFp(s), parent, c, keep);
  }
  // The same with the state's VisitedFp computed by the caller.
  uint32_t Visit(const Engine& s, uint64_t fp, uint32_t parent, Choice c, bool* keep) {
    *keep = false;
    const uint32_t id = Insert(fp, parent, c);
    if (id == kRoot) return kRoot;
    return Reached(s, fp, id, keep);
  }
  // A transition to a state with fingerprint fp: its record id when the state is new, else
  // kRoot.
  uint32_t Insert(uint64_t fp, uint32_t parent, Choice c) {
    ++res_.stats.transitions;
    if (!seen_.Insert(fp)) return kRoot;
    const uint32_t id = static_cast<uint32_t>(records_.size());
    // Grown by a quarter, not doubled: the records' unused capacity counts in the bytes per
    // state (explore.h), at most 2 of the 8 bytes this way.
    if (records_.size() == records_.capacity()) {
      records_.reserve(records_.capacity() + std::max<size_t>(records_.capacity() / 4, 64));
    }
    records_.push_back({parent, EncodeChoice(c)});
    return id;
  }
  // The rest of Visit for a new state s (record id): returns id; *keep when it is running.
  uint32_t Reached(const Engine& s, uint64_t fp, uint32_t id, bool* keep) {
    *keep = false;
    if (options_.collect_barrier_states) CollectBarriers(s);
    const Outcome o = s.outcome();
    if (o == Outcome::kRunning) {
      *keep = true;
      return id;
    }
    if (o == Outcome::kCompleted) {
      ++res_.stats.completed_ends;
      if (options_.collect_terminals) res_.terminals.push_back(TerminalFp(s, fp));
      if (options_.check_rules) CheckRulesOn(id);
      return id;
    }
    if (o == Outcome::kDeadlock) {
      ++res_.stats.deadlock_ends;
      if (options_.collect_terminals) res_.terminals.push_back(TerminalFp(s, fp));
    } else if (o == Outcome::kViolation) {
      ++res_.stats.violation_ends;
    } else {  // kError, kStepLimit: bad input found while running
      res_.verdict = ExploreVerdict::kBadInput;
      res_.error = s.result().error;
      res_.counterexample = PathTo(records_, id);
      found_ = done_ = true;
      return id;
    }
    if (!found_) {
      found_ = true;
      res_.verdict =
          o == Outcome::kDeadlock ? ExploreVerdict::kDeadlock : ExploreVerdict::kViolation;
      res_.counterexample = PathTo(records_, id);
    }
    if (options_.stop_at_first) done_ = true;
    return id;
  }

  // The protocol rules on the path to a completed end state (one path per distinct end state:
  // the first one the search reached).
  void CheckRulesOn(uint32_t id) {
    ++res_.stats.rule_paths;
    const std::vector<Choice> path = PathTo(records_, id);
    Expected<Engine> e = Replay(program_, params_, path);
    if (!e.ok()) return;
    std::vector<Finding> findings = CheckRules(program_, *e, e->trace());
    if (!HasErrors(findings)) return;
    ++res_.stats.rule_violation_ends;
    if (!found_) {
      found_ = true;
      res_.verdict = ExploreVerdict::kRuleViolation;
      res_.counterexample = path;
      res_.findings = std::move(findings);
    }
    if (options_.stop_at_first) done_ = true;
  }

  // Breadth-first, level by level. The frontier holds its states packed (Engine::Pack against
  // the initial state: the words of the state block that differ from it, the in-flight
  // operations and a few counters; a few hundred bytes) rather than as engines (about 2 KB
  // each on the 2x2 GEMM: a brute-force breadth-first search of it filled 4.7 GB in 20 s).
  // Each state is unpacked once, to be expanded; its successors are stepped on one engine,
  // undone with RestoreStep.
  void Bfs(Engine root) {
    struct Packed {
      uint64_t at;   // its bytes in the level's arena
      uint32_t len;
      uint32_t id;   // its record
    };
    const Engine base = root;
    Engine cur = root, succ = root;
    std::vector<uint8_t> bytes, next_bytes;
    std::vector<Packed> frontier, next;
    root.Pack(base, &bytes);
    frontier.push_back({0, static_cast<uint32_t>(bytes.size()), 0});
    while (!frontier.empty() && !stopped_ && !done_) {
      res_.stats.peak_frontier = std::max<uint64_t>(res_.stats.peak_frontier, frontier.size());
      for (size_t fi = 0; fi < frontier.size() && !done_; ++fi) {
        if (OutOfBounds()) break;
        const Packed node = frontier[fi];
        cur.Unpack(base, bytes.data() + node.at, node.len);
        // A clean cache, keyed as the successors' will be (VisitedFp: with symmetry classes
        // a plain fingerprint here would make every successor re-key every agent).
        VisitedFp(cur);
        const size_t n = Expand(w0_, cur);
        ++res_.stats.expanded;
        res_.stats.enabled += n;
        res_.stats.pruned += n - w0_.selected;
        bool succ_from_cur = false;  // succ is cur plus a step (RestoreStep undoes it)
        for (size_t i = 0; i < n && !done_; ++i) {
          if (!w0_.take[i]) continue;
          if (succ_from_cur) {
            succ.RestoreStep(cur);
          } else {
            succ = cur;
            succ_from_cur = true;
          }
          succ.Step(w0_.choices[i]);
          bool keep = false;
          const uint32_t id = Visit(succ, node.id, w0_.choices[i], &keep);
          if (!keep) continue;
          const uint64_t at = next_bytes.size();
          succ.Pack(base, &next_bytes);
          next.push_back({at, static_cast<uint32_t>(next_bytes.size() - at), id});
        }
      }
      res_.stats.frontier_bytes = std::max<uint64_t>(
          res_.stats.frontier_bytes, bytes.capacity() + next_bytes.capacity() +
                                         (frontier.capacity() + next.capacity()) * sizeof(Packed));
      frontier.swap(next);
      bytes.swap(next_bytes);
      next.clear();
      next_bytes.clear();
      if (!stopped_ && !done_ && !frontier.empty()) ++res_.stats.depth;
    }
  }

  // Breadth-first on options_.threads threads, level by level, with the same result as Bfs (the
  // same states in the same order, the same records, statistics and counterexample).
  // Expansion (the persistent set, stepping, fingerprinting) runs in parallel: the level's
  // frontier is cut into blocks of kBlock states that the threads take in order; each thread
  // has an engine of its own program copy (Engine::IsolatedCopy; a frontier state is copied
  // into it with AssignState), its own Reducer, and keeps every taken successor (fingerprint,
  // choice, and the engine unless the fingerprint was stored in an earlier level: the table is
  // only read while the threads run). The merge then runs on one thread in frontier order,
  // exactly as Bfs visits: it inserts the fingerprints, numbers the new states, records
  // findings and runs the rules, and builds the next frontier from the threads' engines.
  void ParallelBfs(Engine root) {
    constexpr size_t kBlock = 16;
    constexpr uint32_t kSeen = 0xffffffffu;
    struct Succ {
      uint64_t fp;
      Choice choice;
      uint32_t where;  // kSeen; else with len == 0 an end state (index into Par::ends)
      uint32_t len;    // > 0: a running state packed at `at` in the thread's arena
      uint64_t at;
    };
    struct NodeOut {
      uint32_t enabled;
      uint32_t begin, end;  // the node's taken successors in Par::succ
    };
    // The running successors a thread packed in this level, by fingerprint (open addressing;
    // 0 is free: a fingerprint is never 0, FingerprintSet): a state reached again from another
    // state of the level is packed once (the merge visits the first occurrence, in frontier
    // order, which is this thread's first).
    struct PackedOnce {
      std::vector<uint64_t> fps;
      std::vector<std::pair<uint64_t, uint32_t>> where;  // (at, len) in the thread's arena
      size_t n = 0;
      void Clear() {
        std::fill(fps.begin(), fps.end(), 0);
        n = 0;
      }
      // fp's slot: its entry, or the free slot for it (the table grows first when half full).
      size_t Slot(uint64_t fp) {
        if (2 * (n + 1) > fps.size()) {
          PackedOnce g;
          g.fps.assign(std::max<size_t>(1024, 2 * fps.size()), 0);
          g.where.resize(g.fps.size());
          for (size_t k = 0; k < fps.size(); ++k) {
            if (fps[k] == 0) continue;
            const size_t h = g.Slot(fps[k]);
            g.fps[h] = fps[k];
            g.where[h] = where[k];
          }
          fps.swap(g.fps);
          where.swap(g.where);
        }
        const size_t mask = fps.size() - 1;
        size_t h = fp & mask;
        while (fps[h] != 0 && fps[h] != fp) h = (h + 1) & mask;
        return h;
      }
    };
    struct Par {
      Worker w;
      Engine cur;   // the state being expanded (this thread's program copy)
      Engine step;  // its successors, stepped one at a time (RestoreStep undoes each)
      std::vector<uint8_t> bytes[2];  // packed successors of the level, by level parity
      std::vector<Engine> ends;       // successors that end the run (not packed), this level
      size_t n_ends = 0;
      PackedOnce once;
      std::vector<Succ> succ;
      std::vector<NodeOut> nodes;
    };
    struct BlockOut {
      uint32_t thread = 0;
      uint32_t node_begin = 0, node_end = 0;  // in the thread's nodes
      bool done = false;
    };
    // A frontier state: packed (Bfs) in a thread's arena, or in root_bytes (thread == nt).
    struct Entry {
      uint32_t thread;
      uint32_t len;
      uint64_t at;
      uint32_t id;
    };
    const uint32_t nt = static_cast<uint32_t>(options_.threads);
    std::vector<std::unique_ptr<Par>> par;
    for (uint32_t t = 0; t < nt; ++t) {
      Engine own = root.IsolatedCopy();
      par.push_back(std::make_unique<Par>(Par{Worker{}, own, own, {}, {}, 0, {}, {}, {}}));
      par.back()->w.reducer =
          std::make_unique<Reducer>(root, options_.guarded_waits, options_.mask_closure,
                                    options_.phase_bounded_balance);
    }
    // root: the base of every packed state (only read while the threads run).
    const Engine& base = root;
    Engine merge = root;  // the merge's view of a new packed state (Visit)
    std::vector<uint8_t> root_bytes;
    root.Pack(base, &root_bytes);
    std::vector<Entry> frontier{{nt, static_cast<uint32_t>(root_bytes.size()), 0, 0}}, next;
    std::vector<BlockOut> blocks;
    std::atomic<size_t> next_block{0};
    std::atomic<bool> timed_out{false};
    uint32_t level = 0;
    // The arena of a frontier state of `level`: written while level - 1 was expanded.
    auto bytes_of = [&](const Entry& x) -> const uint8_t* {
      if (x.thread == nt) return root_bytes.data() + x.at;
      return par[x.thread]->bytes[level & 1].data() + x.at;
    };
    auto work = [&](uint32_t t) {
      Par& p = *par[t];
      const int parity = (level + 1) & 1;
      std::vector<uint8_t>& out = p.bytes[parity];
      out.clear();
      p.n_ends = 0;
      p.once.Clear();
      p.succ.clear();
      p.nodes.clear();
      const size_t nb = blocks.size();
      for (;;) {
        const size_t b = next_block.fetch_add(1);
        if (b >= nb) break;
        if (options_.time_limit_s > 0 &&
            std::chrono::duration<double>(Clock::now() - t0_).count() > options_.time_limit_s) {
          timed_out = true;
        }
        if (options_.max_memory_bytes > 0 && ResidentBytes() > options_.max_memory_bytes) {
          timed_out = true;
        }
        if (timed_out) break;
        BlockOut& bo = blocks[b];
        bo.thread = t;
        bo.node_begin = static_cast<uint32_t>(p.nodes.size());
        const size_t end = std::min(frontier.size(), (b + 1) * kBlock);
        for (size_t fi = b * kBlock; fi < end; ++fi) {
          p.cur.Unpack(base, bytes_of(frontier[fi]), frontier[fi].len);
          VisitedFp(p.cur);  // a clean cache, keyed as the successors' will be (Bfs)
          const size_t n = Expand(p.w, p.cur);
          NodeOut no{static_cast<uint32_t>(n), static_cast<uint32_t>(p.succ.size()), 0};
          bool step_from_cur = false;  // p.step is p.cur plus a step
          for (size_t i = 0; i < n; ++i) {
            if (!p.w.take[i]) continue;
            if (step_from_cur) {
              p.step.RestoreStep(p.cur);
            } else {
              p.step.AssignState(p.cur);
              step_from_cur = true;
            }
            p.step.Step(p.w.choices[i]);
            const uint64_t fp = VisitedFp(p.step);
            Succ sc{fp, p.w.choices[i], kSeen, 0, 0};
            if (!seen_.Contains(fp)) {  // else stored in an earlier level
              if (p.step.outcome() == Outcome::kRunning) {  // kept by Visit: packed
                const size_t h = p.once.Slot(fp);
                sc.where = 0;
                if (p.once.fps[h] != fp) {
                  p.once.fps[h] = fp;
                  p.once.where[h].first = out.size();
                  p.step.Pack(base, &out);
                  p.once.where[h].second =
                      static_cast<uint32_t>(out.size() - p.once.where[h].first);
                  ++p.once.n;
                }
                sc.at = p.once.where[h].first;
                sc.len = p.once.where[h].second;
              } else {
                if (p.n_ends == p.ends.size()) p.ends.push_back(p.step);
                p.ends[p.n_ends].AssignState(p.step);
                sc.where = static_cast<uint32_t>(p.n_ends++);
              }
            }
            p.succ.push_back(sc);
          }
          no.end = static_cast<uint32_t>(p.succ.size());
          p.nodes.push_back(no);
        }
        bo.node_end = static_cast<uint32_t>(p.nodes.size());
        bo.done = true;
      }
    };
    while (!frontier.empty() && !stopped_ && !done_) {
      res_.stats.peak_frontier = std::max<uint64_t>(res_.stats.peak_frontier, frontier.size());
      const size_t nb = (frontier.size() + kBlock - 1) / kBlock;
      blocks.assign(nb, BlockOut{});
      next_block = 0;
      {
        std::vector<std::thread> threads;
        const uint32_t use = static_cast<uint32_t>(std::min<size_t>(nt, nb));
        for (uint32_t t = 1; t < use; ++t) threads.emplace_back(work, t);
        work(0);
        for (std::thread& th : threads) th.join();
      }
      // The merge, in frontier order (Bfs's visiting order).
      next.clear();
      const int parity = (level + 1) & 1;
      bool partial = false;
      for (size_t b = 0; b < nb && !done_ && !stopped_; ++b) {
        const BlockOut& bo = blocks[b];
        if (!bo.done) {  // not expanded: the time limit stopped the threads
          partial = true;
          break;
        }
        Par& p = *par[bo.thread];
        for (uint32_t k = bo.node_begin; k < bo.node_end && !done_; ++k) {
          const size_t fi = b * kBlock + (k - bo.node_begin);
          if (OutOfBounds()) break;
          ++res_.stats.expanded;
          const NodeOut& no = p.nodes[k];
          res_.stats.enabled += no.enabled;
          res_.stats.pruned += no.enabled - (no.end - no.begin);
          for (uint32_t j = no.begin; j < no.end && !done_; ++j) {
            const Succ& sc = p.succ[j];
            // Stored in an earlier level, or earlier in this one: Visit would skip it.
            if (sc.where == kSeen || (sc.len != 0 && seen_.Contains(sc.fp))) {
              ++res_.stats.transitions;
              continue;
            }
            const Engine* se = &merge;
            if (sc.len != 0) {
              merge.Unpack(base, p.bytes[parity].data() + sc.at, sc.len);
            } else {
              se = &p.ends[sc.where];
            }
            bool keep = false;
            const uint32_t id = Visit(*se, sc.fp, frontier[fi].id, sc.choice, &keep);
            if (keep) next.push_back({bo.thread, sc.len, sc.at, id});
          }
        }
      }
      uint64_t held = (frontier.capacity() + next.capacity()) * sizeof(Entry);
      for (const auto& p : par) held += p->bytes[0].capacity() + p->bytes[1].capacity();
      res_.stats.frontier_bytes = std::max(res_.stats.frontier_bytes, held);
      if (partial && !done_ && !stopped_) {
        if (!MemoryExceeded()) res_.bound = "--time-limit";
        stopped_ = true;
      }
      frontier.swap(next);
      ++level;
      if (!stopped_ && !done_ && !frontier.empty()) ++res_.stats.depth;
    }
  }

  // Successor prediction (ExploreOptions::predict_successors; brute force only). What a step
  // taken at a state did, as far as the fingerprint goes: the difference it made to
  // Engine::FingerprintSum, and the objects it marked as changed (StepMarks) and touched
  // (its Footprint). At a successor reached by another step t, the same step (the same agent,
  // or the same in-flight operation, found by position: carry) makes the same difference when
  // t marked none of those objects: the components it changes and everything it reads are then
  // as they were. The
  // step's successor there has the fingerprint FinishFingerprint(sum + delta, kRunning) (a step
  // that ended the run is not recorded; one that would end it there only from other agents'
  // states, a completion or a deadlock, leads to a state whose running twin was never stored,
  // so the lookup misses; such a successor is then stepped, unless another step is enabled,
  // which rules both out: see defer_new in Dfs).
  // The objects as bits: object o is bit o % 64 (exact up to 64 objects; beyond, two objects
  // can share a bit, which only makes a step look dependent where it is not: no prediction).
  static uint64_t ObjectBit(uint32_t o) { return uint64_t{1} << (o & 63); }
  struct Known {
    uint64_t delta = 0;
    uint64_t marked = 0;  // the objects the step marked
    uint64_t objects = 0;  // the objects it marked or touched
    bool valid = false;
    bool Meets(const Known& t) const { return (t.marked & objects) != 0; }  // t marked one
  };
  // e's fingerprint (Engine::Fingerprint) and, in *sum, the sum it finishes. In builds with
  // assertions it is also taken through Fingerprint(), which checks every 8th fingerprint
  // against one made from scratch (Engine::FpChecked: a step that changed state it did not
  // mark), the check that predictions (carry, PeekDeliveryDelta, the memo) rely on.
  static uint64_t FingerprintAndSum(const Engine& e, uint64_t* sum) {
    *sum = e.FingerprintSum();
    const uint64_t fp = Engine::FinishFingerprint(*sum, e.outcome());
#ifndef NDEBUG
    PARITY_CHECK(e.Fingerprint() == fp, "explore: FingerprintSum disagrees with Fingerprint");
#endif
    return fp;
  }
  // Records what step `k` (just taken on `e`, a copy of a state with sum `sum`) did; returns
  // the successor's fingerprint (e.Fingerprint()) and, in *after_sum, its sum.
  static uint64_t Learn(Known& k, const Engine& e, const engine::Footprint& touched,
                        uint64_t sum, uint64_t* after_sum) {
    const uint64_t fp = FingerprintAndSum(e, after_sum);
    const uint64_t after = *after_sum;
    k.valid = false;
    const uint32_t* marked = nullptr;
    uint32_t n = 0;
    if (e.outcome() == Outcome::kRunning && e.StepMarks(&marked, &n) && !touched.overflow) {
      k.marked = 0;
      for (uint32_t i = 0; i < n; ++i) k.marked |= ObjectBit(marked[i]);
      k.objects = k.marked;
      for (uint32_t i = 0; i < touched.n; ++i) k.objects |= ObjectBit(touched.objects[i]);
      k.delta = after - sum;
      k.valid = true;
    }
    return fp;
  }

  // Successor prediction for agent steps: a memo of what an agent's step did, keyed by what
  // it read. A step that did not look at other agents (Engine::StepScanned: no phase, cluster
  // or named barrier woke anyone), changed only its own agent and objects it touched, and left
  // the run going is a function of its agent's state and the touched objects' states: in any
  // state where the agent's content hash and those objects' components are the same, the same
  // step changes those objects' components by the same amounts, sets the agent's content hash
  // to the same value and adds the same operations to its in-flight multiset. (An agent whose
  // steps read its own in-flight operations, through async groups, is keyed by them too.) Its
  // successor's sum follows from the state's cached components (the agent's component is
  // remade with the state's own in-flight operations). Direct-mapped by (agent, content hash).
  // All zero: no entry (the table is calloc'd: a small search does not pay for initialising
  // it, which took 14 % of a 40K-state brute force).
  struct AgentMemo {
    uint32_t agent1 = 0;            // the agent + 1; 0: none
    uint32_t n = 0;                 // touched shared objects
    uint64_t content = 0;           // the agent's content hash before the step
    uint32_t obj[4] = {};
    uint64_t val[4] = {};           // their components before the step
    uint64_t shared_delta = 0;      // what the step added to their components' sum
    uint64_t content_after = 0;
    uint64_t ops_added = 0;         // what it added to the agent's in-flight operations' hash
    // The agent's in-flight operations' hash before the step, when its steps may read them
    // (Engine::AgentStepsReadOwnOps: a key too); else 0 and not compared.
    bool ops_keyed = false;
    uint64_t ops_before = 0;
    uint64_t marked = 0, objects = 0;  // Known's masks
  };
  static constexpr size_t kAgentMemo = size_t{1} << 14;
  struct FreeMemo {
    void operator()(AgentMemo* m) const { std::free(m); }
  };
  std::unique_ptr<AgentMemo[], FreeMemo> agent_memo_;
  static size_t MemoIndex(uint32_t a, uint64_t content) {
    return static_cast<size_t>(((content ^ (uint64_t{a} << 48)) * 0x9e3779b97f4a7c15ull) >> 50);
  }
  // Records agent a's step from `before` (a clean fingerprint cache) to `after` (stepped with
  // `touched`, FingerprintSum() taken), whose Known k is valid, when it is a function of what
  // it touched (AgentMemo).
  void MemoStore(const Engine& before, const Engine& after, uint32_t a,
                 const engine::Footprint& touched, const Known& k) {
    if (after.StepScanned()) return;
    const uint32_t first = before.GroupsObject(0);
    const uint32_t self = before.GroupsObject(a);
    AgentMemo m;
    for (uint32_t i = 0; i < touched.n; ++i) {
      const uint32_t o = touched.objects[i];
      if (o >= first) {
        if (o != self) return;  // another agent's state read
        continue;
      }
      if (std::find(m.obj, m.obj + m.n, o) != m.obj + m.n) continue;
      if (m.n == 4) return;
      m.obj[m.n] = o;
      m.val[m.n++] = before.FpCachedObject(o);
    }
    const uint32_t* marked = nullptr;
    uint32_t nm = 0;
    if (!after.StepMarks(&marked, &nm)) return;
    for (uint32_t i = 0; i < nm; ++i) {
      const uint32_t o = marked[i];
      if (o == self) continue;
      if (o >= first || std::find(m.obj, m.obj + m.n, o) == m.obj + m.n) return;
      m.shared_delta += after.FpCachedObject(o) - before.FpCachedObject(o);
    }
    m.agent1 = a + 1;
    m.content = before.FpCachedObject(self);
    m.content_after = after.FpCachedObject(self);
    m.ops_added = after.FpCachedOps(a) - before.FpCachedOps(a);
    m.ops_keyed = before.AgentStepsReadOwnOps(a);
    if (m.ops_keyed) m.ops_before = before.FpCachedOps(a);
    m.marked = k.marked;
    m.objects = k.objects;
    agent_memo_[MemoIndex(a, m.content)] = m;
  }
  // What agent a's step from g (a clean fingerprint cache) does, when the memo knows.
  bool MemoFind(const Engine& g, uint32_t a, Known* k) const {
    const uint64_t content = g.FpCachedObject(g.GroupsObject(a));
    const AgentMemo& m = agent_memo_[MemoIndex(a, content)];
    if (m.agent1 != a + 1 || m.content != content) return false;
    if (m.ops_keyed && g.FpCachedOps(a) != m.ops_before) return false;
    for (uint32_t i = 0; i < m.n; ++i) {
      if (g.FpCachedObject(m.obj[i]) != m.val[i]) return false;
    }
    k->delta = m.shared_delta +
               Engine::FpAgentComponent(a, m.content_after, g.FpCachedOps(a) + m.ops_added) -
               g.FpCachedAgent(a);
    k->marked = m.marked;
    k->objects = m.objects;
    k->valid = true;
    return true;
  }

  // Depth-first: memory is the fingerprint table plus one engine per level of the current path.
  // While the visited table is small (below options_.batch_table_bytes) a state's
  // successors are made one at a time when the search comes to them: the next level's engine is
  // made the state (a copy for the first successor, then Engine::RestoreStep undoing the
  // previous successor's step), stepped, looked up, and descended into when new (a "lazy"
  // frame). Once it is large, a state's successors are generated together when it is expanded
  // (a "batched" frame): each taken step is applied to the next level's engine (a copy of the
  // state, made once, when a step is first needed), fingerprinted and undone
  // (Engine::RestoreStep copies back only what the step changed), prefetching the fingerprint's
  // table line; then the fingerprints are inserted (their cache misses overlap) and only the new
  // running successors are kept, as (record, step) pairs. The engine is left holding the last
  // successor stepped (Frame::held); descending into a successor takes it as it is when it is
  // that one, else undoes the held step and steps it. The last successor of a frame that the
  // engine below does not hold takes the frame's own engine instead, stepped (the frame's state
  // is not needed again): no copy. With successor prediction, a new successor whose fingerprint
  // was predicted is not stepped at all until the search descends into it. A batched frame
  // marks its successors visited when it is expanded, a lazy one when it comes to them; the
  // stored states are the same (the persistent sets depend only on the state).
  void Dfs(Engine root) {
    static constexpr size_t kNoStep = ~size_t{0};
    static constexpr size_t kNothing = ~size_t{0} - 1;
    struct Frame {
      explicit Frame(std::unique_ptr<Engine> e) : eng(std::move(e)) {}
      // The frame's engine, by pointer: the last successor takes it over by a swap.
      std::unique_ptr<Engine> eng;
      Engine& engine() { return *eng; }
      const Engine& engine() const { return *eng; }
      uint32_t id = 0;
      bool batched = false;
      // Lazy: the engine of the level below holds a successor of this frame's state, one step
      // from it (RestoreStep brings it back instead of a copy).
      bool below_ok = false;
      // The engine holds this frame's state (false once its last successor took it over).
      bool holds_state = true;
      size_t next = 0;
      // Batched: the engine of the level below holds this state and then this step (kNothing:
      // no state of this frame, it is made a copy when first needed; kNoStep, only inside the
      // expansion between an undo and the next step: this state). Set by the expansion (the
      // last successor it stepped) and by each descent.
      size_t held = kNoStep;
      // Lazy: the enabled steps and the ones to take.
      std::vector<Choice> choices;
      std::vector<uint8_t> take;
      // Batched: the new running successors.
      struct Kid {
        uint32_t id;  // its record
        uint64_t fp;
        uint32_t at;  // its step: choices[at]
      };
      std::vector<Kid> kids;
      // Successor prediction: the state's FingerprintSum, and per enabled step what it does
      // (known) and its successor's fingerprint when that is known without stepping (pred; 0:
      // not known).
      uint64_t sum = 0;
      std::vector<Known> known;
      std::vector<uint64_t> pred;
    };
    struct Succ {  // of the step choices[i] of the frame being expanded, at succ[i]
      uint64_t fp = 0;
      bool ended = false;
      bool seen = false;  // predicted to be a stored state (not stepped)
      bool used = false;  // a step taken (else not in the persistent set)
    };
    const bool predict = options_.predict_successors && !options_.reduction && !sym_visited_ &&
                         std::none_of(program_.roles.begin(), program_.roles.end(),
                                      [](const ir::Role& r) { return HasReadback(r.body); });
    engine::Footprint touched;
    if (predict) {
      agent_memo_.reset(static_cast<AgentMemo*>(std::calloc(kAgentMemo, sizeof(AgentMemo))));
      PARITY_CHECK(agent_memo_ != nullptr, "explore: out of memory for the agent-step memo");
    }
    // Frames at fixed addresses (pushing keeps references to lower frames valid), indexed
    // without a deque's arithmetic.
    std::vector<std::unique_ptr<Frame>> frames;
    auto stack = [&](size_t i) -> Frame& { return *frames[i]; };
    std::vector<Succ> succ;
    size_t depth = 0;
    // The engine of the level below f (at `depth`), made a copy of f's state.
    auto copy_below = [&](const Frame& f) -> Engine& {
      if (depth == frames.size()) {
        frames.push_back(std::make_unique<Frame>(std::make_unique<Engine>(f.engine())));
      } else {
        stack(depth).engine() = f.engine();
      }
      return stack(depth).engine();
    };
    // The part of carry that frame g takes over from its parent p (g is p's state after p's step
    // `at`).
    auto carry_from = [&](Frame& g, const Frame& p, size_t at) {
      const size_t n = g.choices.size();
      const Known& t = p.known[at];
      if (!t.valid) return;
      // The same step at the parent, found by position (Engine::Choices: the ready agents by
      // index, then the in-flight operations in their order). A delivery moves the last
      // operation into its place (Deliver); steps append operations, never remove others.
      const size_t np = p.choices.size();
      size_t pa = 0;  // the parent's agent choices
      while (pa < np && p.choices[pa].kind == Choice::Kind::kAgent) ++pa;
      const size_t ops = np - pa;
      const Choice tc = p.choices[at];
      size_t q = 0;
      for (size_t j = 0; j < n; ++j) {
        const Choice c = g.choices[j];
        size_t k = np;
        if (c.kind == Choice::Kind::kAgent) {
          while (q < pa && p.choices[q].index < c.index) ++q;
          if (q < pa && p.choices[q].index == c.index) k = q;
        } else {
          size_t y = c.index;  // its index at the parent, when it was in flight there
          if (tc.kind == Choice::Kind::kAsync && y == tc.index) {
            y = tc.index + 1 < ops ? ops - 1 : ops;
          } else if (tc.kind == Choice::Kind::kAsync && y + 1 >= ops) {
            y = ops;
          }
          if (y < ops) {
            k = pa + y;
            assert(!p.holds_state ||
                   p.engine().in_flight_ops()[y] == g.engine().in_flight_ops()[c.index]);
          }
        }
        if (k == np || k == at || !p.known[k].valid || p.known[k].Meets(t)) continue;
        g.known[j] = p.known[k];
        g.pred[j] = Engine::FinishFingerprint(g.sum + g.known[j].delta, Outcome::kRunning);
        // Its table line is on its way while the other successors are stepped.
        seen_.Prefetch(g.pred[j]);
      }
    };
    // Before descending into p's successor by step `at`: starts loading the table lines of the
    // successors carry_from will predict there (p's steps that commute with it, from p's sum
    // and their differences), so that they arrive while the successor is stepped.
    auto prefetch_carried = [&](const Frame& p, size_t at) {
      const Known& t = p.known[at];
      if (!t.valid) return;
      const uint64_t base = p.sum + t.delta;
      for (size_t k = 0; k < p.known.size(); ++k) {
        const Known& u = p.known[k];
        if (k == at || !u.valid || u.Meets(t)) continue;
        seen_.Prefetch(Engine::FinishFingerprint(base + u.delta, Outcome::kRunning));
      }
    };
    // Successor prediction: what frame g (reached from the frame below it by its step `at`)
    // knows of its steps from that frame.
    auto carry = [&](Frame& g, size_t at, uint64_t sum) {
      const size_t n = g.choices.size();
      g.sum = sum;
      g.known.assign(n, Known{});
      g.pred.assign(n, 0);
      if (depth >= 2) carry_from(g, stack(depth - 2), at);
      // Deliveries that the engine fingerprints without stepping (Engine::PeekDeliveryDelta:
      // byte deliveries): they change an mbarrier slot, their issuer's in-flight operations
      // and the status of the agents a completed phase wakes, which is what the step would
      // mark.
      const std::vector<engine::Engine::InFlight>& ops = g.engine().in_flight_ops();
      uint32_t woken[Engine::kPeekWokenMax];
      uint32_t n_woken = 0;
      for (size_t j = n; j-- > 0 && g.choices[j].kind == Choice::Kind::kAsync;) {
        if (g.pred[j] != 0) continue;
        Known& k = g.known[j];
        if (!g.engine().PeekDeliveryDelta(g.choices[j].index, &k.delta, woken, &n_woken)) {
          continue;
        }
        const engine::Engine::InFlight& op = ops[g.choices[j].index];
        k.marked = ObjectBit(op.slot) | ObjectBit(g.engine().GroupsObject(op.agent));
        for (uint32_t x = 0; x < n_woken; ++x) {
          k.marked |= ObjectBit(g.engine().GroupsObject(woken[x]));
        }
        k.objects = k.marked;
        k.valid = true;
        g.pred[j] = Engine::FinishFingerprint(g.sum + k.delta, Outcome::kRunning);
        seen_.Prefetch(g.pred[j]);
      }
      // Agent steps the memo knows (AgentMemo). Their successors are running where another
      // step is enabled and the step limit is not reached (see defer_new in push).
      if (n < 2 || g.engine().result().steps + 1 >= g.engine().options().max_steps) return;
      for (size_t j = 0; j < n && g.choices[j].kind == Choice::Kind::kAgent; ++j) {
        if (g.pred[j] != 0 || !MemoFind(g.engine(), g.choices[j].index, &g.known[j])) continue;
        g.pred[j] = Engine::FinishFingerprint(g.sum + g.known[j].delta, Outcome::kRunning);
        seen_.Prefetch(g.pred[j]);
        ++res_.stats.memo_hits;
      }
    };
    // The VisitedFp of a state the search descends into, and when predicting its FingerprintSum
    // (the same hash, before FinishFingerprint) in *sum.
    auto descent_fp = [&](const Engine& e, uint64_t* sum) -> uint64_t {
      if (!predict) {
        *sum = 0;
        return VisitedFp(e);
      }
      return FingerprintAndSum(e, sum);
    };
    // Takes frame f's step i on e (a copy of f's state), learning what it does when predicting;
    // returns the successor's VisitedFp (with a clean fingerprint cache), and when predicting
    // its FingerprintSum in *sum.
    auto step_learn = [&](Frame& f, size_t i, Engine& e, uint64_t* sum) -> uint64_t {
      if (!predict) {
        e.Step(f.choices[i]);
        return VisitedFp(e);
      }
      touched.Clear();
      e.Step(f.choices[i], &touched);
      const uint64_t fp = Learn(f.known[i], e, touched, f.sum, sum);  // (VisitedFp: Fingerprint)
      if (f.known[i].valid && f.choices[i].kind == Choice::Kind::kAgent) {
        MemoStore(f.engine(), e, f.choices[i].index, touched, f.known[i]);
      }
      return fp;
    };
    // Counts frame f's step i, predicted to go to a stored state, as a transition. Builds with
    // assertions check every 8th such prediction by taking the step.
    auto count_predicted = [&](Frame& f, size_t i) {
#ifndef NDEBUG
      thread_local uint32_t calls = 0;
      if ((calls++ & 7) == 0 && Engine::SelfChecks()) {
        Engine e = f.engine();
        e.Step(f.choices[i]);
        // The step must not end the run either: the prediction hit a stored running state.
        PARITY_CHECK(e.outcome() == Outcome::kRunning && VisitedFp(e) == f.pred[i],
                     "explore: a successor's predicted fingerprint is wrong");
      }
#endif
      ++res_.stats.transitions;
      ++res_.stats.predicted;
    };
    // Whether frame f's step i goes to a stored state, known without stepping it (then counted).
    auto predicted_seen = [&](Frame& f, size_t i) {
      if (!predict || f.pred[i] == 0 || !seen_.Contains(f.pred[i])) return false;
      count_predicted(f, i);
      return true;
    };
    // Expands the frame at `depth` (its engine holds the state, fingerprinted) and makes it the
    // top; `at`: the index of the step that led to it in the frame below, and `sum` the state's
    // FingerprintSum when predicting (for carry: not computed again).
    auto push = [&](uint32_t id, size_t at, uint64_t sum) {
      Frame& f = stack(depth++);
      f.id = id;
      f.next = 0;
      f.below_ok = false;
      f.holds_state = true;
      f.held = kNothing;
      const size_t n = Expand(w0_, f.engine());
      res_.stats.enabled += n;
      res_.stats.pruned += n - w0_.selected;
      ++res_.stats.expanded;
      res_.stats.depth = std::max<uint32_t>(res_.stats.depth, static_cast<uint32_t>(depth));
      f.batched = seen_.bytes() >= options_.batch_table_bytes;
      f.choices.swap(w0_.choices);
      f.take.swap(w0_.take);
      if (predict) carry(f, at, sum);
      if (!f.batched) return;
      f.kids.clear();
      // The engine below, made a copy of f's state only when a step is taken (often every
      // successor is predicted and none is new: no copy).
      Engine* e = nullptr;
      // The successors in the order of the steps (as without prediction); the predicted ones
      // are looked up after the others are stepped, so that their table lines arrive meanwhile.
      succ.assign(f.choices.size(), Succ{});
      // e holds f's state, or f's state and then step f.held (undone only when e is needed
      // again: the search descends into the successor e holds without stepping it again), or
      // is null while f.held is kNothing (no step taken yet: no copy made).
      auto restore = [&] {
        if (f.held == kNothing) {
          e = &copy_below(f);
        } else if (f.held != kNoStep) {
          e->RestoreStep(f.engine());
        }
        f.held = kNoStep;
      };
      auto step = [&](size_t i) {
        restore();
        uint64_t sum;
        const uint64_t fp = step_learn(f, i, *e, &sum);
        seen_.Prefetch(fp);
        succ[i] = {fp, e->outcome() != Outcome::kRunning, false, true};
        f.held = i;
      };
      bool deferred = false;
      // Whether a predicted successor that is not stored yet is stored without stepping it
      // (its state is needed when the search descends into it, and only then is it stepped,
      // its fingerprint checked): it is known to be running. The run ends only where no agent
      // is ready and nothing is in flight (Exec::CheckEnd), or at the step limit; a step
      // leaves every other agent that is ready ready and every other operation in flight, so
      // with another step enabled it cannot end the run; and a step that commutes with the
      // one that led here cannot violate or fault where it did not (Learn records only
      // running successors). Collected barrier values need the state when it is stored.
      const bool defer_new = !options_.collect_barrier_states && f.choices.size() >= 2 &&
                             f.engine().result().steps + 1 < f.engine().options().max_steps;
      const size_t n_choices = f.choices.size();
      // Last to be stepped: the first successor that is not predicted (the first new
      // successor is often that one).
      for (size_t i = n_choices; i-- > 0;) {
        if (!f.take[i]) continue;
        if (predict && f.pred[i] != 0) {  // prefetched by carry
          deferred = true;
          continue;
        }
        step(i);
      }
      for (size_t i = 0; deferred && i < n_choices; ++i) {
        if (!f.take[i] || f.pred[i] == 0) continue;
        if (seen_.Contains(f.pred[i])) {
          succ[i] = {f.pred[i], false, true, true};
        } else if (defer_new) {
          // A new running state: stepped only when the search descends into it.
          succ[i] = {f.pred[i], false, false, true};
          ++res_.stats.predicted_new;
        } else {
          step(i);
        }
      }
      for (uint32_t at = 0; at < n_choices; ++at) {
        const Succ& s = succ[at];
        if (!s.used) continue;
        if (done_ || OutOfBounds()) return;
        if (s.seen) {
          count_predicted(f, at);
          continue;
        }
        const uint32_t kid = Insert(s.fp, id, f.choices[at]);
        if (kid == kRoot) continue;
        if (!s.ended && !options_.collect_barrier_states) {
          f.kids.push_back({kid, s.fp, at});
          continue;
        }
        if (f.held != at) {  // else e holds it
          restore();
          e->Step(f.choices[at]);
          f.held = at;
        }
        bool keep = false;
        Reached(*e, s.fp, kid, &keep);
        if (keep) f.kids.push_back({kid, s.fp, at});
      }
    };
    frames.push_back(std::make_unique<Frame>(std::make_unique<Engine>(std::move(root))));
    push(0, 0, predict ? stack(0).engine().FingerprintSum() : 0);
    while (depth != 0 && !done_ && !stopped_) {
      Frame& f = stack(depth - 1);
      if (!f.batched) {
        if (f.next == f.choices.size()) {
          --depth;
          continue;
        }
        const size_t i = f.next++;
        if (!f.take[i]) continue;
        if (OutOfBounds()) break;
        if (predicted_seen(f, i)) continue;
        // The previous successor's engine (or the state of its subtree's root: the subtree
        // used the engines below it) is brought back to f's state: cheaper than a copy.
        Engine& child = f.below_ok ? stack(depth).engine() : copy_below(f);
        if (f.below_ok) child.RestoreStep(f.engine());
        f.below_ok = true;
        uint64_t sum = 0;
        const uint64_t fp = step_learn(f, i, child, &sum);
        bool keep = false;
        const uint32_t id = Visit(child, fp, f.id, f.choices[i], &keep);
        if (keep) push(id, i, sum);
        continue;
      }
      if (f.next == f.kids.size()) {
        --depth;
        continue;
      }
      const Frame::Kid kid = f.kids[f.next++];
      if (predict) prefetch_carried(f, kid.at);
      if (f.next == f.kids.size() && f.held != kid.at) {
        // f's last successor, not held below: f's state is needed no more, so f's own engine
        // is stepped and handed to the successor's frame (no copy of the state), and the
        // engine below f takes its place. The frame below f (f's parent) no longer has f's
        // state in the engine above it.
        f.engine().Step(f.choices[kid.at]);
        if (depth == frames.size()) {
          frames.push_back(std::make_unique<Frame>(std::move(f.eng)));
          // (A placeholder: any engine of the program will do.)
          f.eng = std::make_unique<Engine>(stack(depth).engine());
        } else {
          std::swap(f.eng, stack(depth).eng);
        }
        f.holds_state = false;
        f.held = kNothing;
        if (depth >= 2) {
          stack(depth - 2).held = kNothing;
          stack(depth - 2).below_ok = false;
        }
      } else {
        // The engine below holds f's state, or f's state and then step f.held (the subtrees
        // below used the engines below it), or none of f's states yet.
        Engine& below = f.held == kNothing ? copy_below(f) : stack(depth).engine();
        if (f.held != kid.at) {
          if (f.held != kNoStep && f.held != kNothing) below.RestoreStep(f.engine());
          below.Step(f.choices[kid.at]);
          f.held = kid.at;
        }
      }
      // Also leaves the child's fingerprint cache clean, which RestoreStep needs. A successor
      // stored by its predicted fingerprint is checked here, at its first step.
      const Engine& child = stack(depth).engine();
      uint64_t sum;
      const uint64_t fp = descent_fp(child, &sum);
      PARITY_CHECK(fp == kid.fp && child.outcome() == Outcome::kRunning,
                   "explore: a stored successor is not the state its step leads to");
      push(kid.id, kid.at, sum);
    }
    res_.stats.peak_frontier = res_.stats.depth;  // engines on the deepest path
  }

  const ir::Program& program_;
  const std::vector<int64_t>& params_;
  const ExploreOptions& options_;
  const bool bfs_;
  Clock::time_point t0_;
  ExploreResult res_;
  FingerprintSet seen_;
  std::vector<Record> records_;
  Worker w0_;  // the sequential searches' expansion state
  std::vector<uint32_t> classes_;  // symmetry classes (SymmetryClasses); empty: none
  bool sym_visited_ = false;       // the visited set holds SymmetricFingerprint values
  bool found_ = false, stopped_ = false, done_ = false;
};

}  // namespace

ExploreResult Explore(const ir::Program& program, const std::vector<int64_t>& params,
                      const ExploreOptions& options) {
  // Several threads: the parallel breadth-first search (it finds the shortest counterexample
  // itself).
  if (options.breadth_first || options.threads > 1) {
    return Search(program, params, options, true).Run();
  }
  ExploreResult r = Search(program, params, options, false).Run();
  const bool finding = r.verdict == ExploreVerdict::kViolation ||
                       r.verdict == ExploreVerdict::kDeadlock ||
                       r.verdict == ExploreVerdict::kRuleViolation;
  if (!finding) return r;
  if (!options.shortest_counterexample) {
    r.counterexample_shortest = false;
    return r;
  }
  // A finding: the depth-first path is some path; a breadth-first search (same reduction, same
  // bounds, stopping at its first finding) gives the shortest one in the explored graph.
  ExploreOptions bo = options;
  // A protocol rule breaks on a completed run, at the full depth of the graph, which a
  // breadth-first search reaches last: without a time limit of the user's, it gets 10 s and
  // otherwise the depth-first counterexample stands (said so: counterexample_shortest).
  if (r.verdict == ExploreVerdict::kRuleViolation && bo.time_limit_s == 0) bo.time_limit_s = 10;
  bo.stop_at_first = true;
  bo.collect_terminals = false;
  bo.collect_barrier_states = false;
  ExploreResult b = Search(program, params, bo, true).Run();
  if (b.verdict == ExploreVerdict::kViolation || b.verdict == ExploreVerdict::kDeadlock ||
      b.verdict == ExploreVerdict::kRuleViolation) {
    r.verdict = b.verdict;
    r.counterexample = std::move(b.counterexample);
    r.findings = std::move(b.findings);
    r.counterexample_shortest = true;
  } else {
    r.counterexample_shortest = false;
  }
  r.has_bfs_stats = true;
  r.bfs_stats = b.stats;
  return r;
}

std::vector<SlotBalance> AnalyseBalance(const engine::Engine& state) {
  Engine e = state;
  Reducer r(e, /*guarded_waits=*/true);
  return r.Report(e);
}

Expected<engine::Engine> Replay(const ir::Program& program, const std::vector<int64_t>& params,
                                const std::vector<engine::Choice>& choices) {
  engine::EngineOptions eo;
  eo.record_trace = true;
  Expected<Engine> e = Engine::Create(program, params, eo);
  if (!e.ok()) return e.status();
  std::vector<Choice> now;
  for (const Choice& c : choices) {
    e->Choices(&now);
    PARITY_CHECK(std::find(now.begin(), now.end(), c) != now.end(),
                 "Replay: the step is not enabled (the engine is not deterministic?)");
    e->Step(c);
  }
  return e;
}

}  // namespace parity::verifier
