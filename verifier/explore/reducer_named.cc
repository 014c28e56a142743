// Named barriers in the persistent-set computation (explore.h, "Named barriers"): which units a
// bar.sync / bar.arrive that cannot complete its barrier, or an agent blocked in bar.sync, must
// bring into the set (Reducer, reducer.h).
//
// The model (sim/model/sync_barriers.h, PTX ISA "bar, barrier"): an instance of barrier i of a
// CTA counts the threads that arrived; the arrival that brings the count to the instance's
// thread count b completes it (the generation advances and every bar.sync of the instance is
// released); an arrival with another b than the instance's is S1003, one past b S1004. The
// engine always passes b (no instance counts "all CTA threads"), so an exit changes no instance.
//
// Rule (x an enabled arrival of t threads on instance i of its CTA, n threads arrived, count b,
// n + t < b): every step another unit may take on the CTA's named-barrier object is an arrival
// on some id, a bar.sync that re-checks a generation it waits for, an exit, or a read of whether
// a CTA exited. All of them but an arrival on i that completes i commute with x (sums of
// arrivals; the generation does not move while i does not complete; the S1003 check reads b,
// which every counted arrival matches). Let cap(y) bound the threads unit y can arrive with on i
// before i completes: its look-ahead's arrivals on i (Engine::AgentFuture, NamedAccess) up to and
// including its first bar.sync on i (which blocks until i completes); 0 for an agent blocked in
// this instance; unbounded for a unit whose arrivals are not known (no exact look-ahead, an
// operand that does not evaluate or that the model refuses, a count other than b, an in-flight
// operation whose future is its issuer's static one). x's closure takes in every unbounded unit
// whose future touches the object and the holders (cap > 0) in unit order until
// n + t + (the caps of the holders left out) < b. Claim: on any path of steps outside the set,
// no step completes i and x still does not complete it afterwards. Proof: take the first step
// on such a path that completes i; before it, every unit outside the set arrived on i with at
// most its cap (a bar.sync on i blocks until i completes), so n + (arrivals) <= n + sum of the
// caps left out < b - t: no completion, a contradiction; and x after the path brings the count
// to at most that plus t < b. So x is independent of every such step (the usual persistent-set
// condition, explore.h).
// A blocked bar.sync of instance i is enabled only by i completing, which needs an arrival on i
// by a unit with cap > 0 (or an unbounded one): those units are a necessary enabling set; and
// when no unit is unbounded and the others' caps without holder h's cannot reach b - n, h alone
// is one (the first such h in unit order).
// A bar.sync that was released (its generation passed) re-checks a generation that never comes
// back: it commutes with every step on the object and brings in nobody. An exit commutes with
// every arrival and re-check (no instance counts the CTA's live threads) and with other exits:
// it brings in only the units that read exits there or whose accesses are not known.
// Truncated futures (SetFutures) only shrink what a unit can do on a path outside the set, so
// caps from the whole look-ahead stay bounds; a holder of the list whose current future does not
// touch the object is not taken in (neither path takes it; its arrivals there are none).
#include <algorithm>
#include <cstdint>
#include <tuple>
#include <vector>

#include "verifier/explore/reducer.h"

namespace parity::verifier::reduction {

int64_t Reducer::NamedCap(uint32_t y_agent, uint32_t obj, uint32_t id, uint32_t count) {
  const Engine& e = *e_;
  const Engine::AgentState& s = e.agent_state(y_agent);
  if (s.status == 2) return 0;
  const CacheEntry& c = *full_[y_agent];
  if (c.kinds[obj] == kNone) return 0;
  if (!c.exact || !c.named_exact) return kNamedUnbounded;
  const engine::AgentInfo& info = e.agent_info(y_agent);
  size_t r = 0;
  if (s.wait == engine::WaitKind::kNamedBarrier) {
    // Its pc is still at the bar.sync it arrived with (a re-check arrives no more).
    if (c.named.empty() || !c.named[0].first || c.named[0].id == engine::NamedAccess::kExitRead) {
      return kNamedUnbounded;
    }
    if (c.named[0].object == obj && s.wait_slot == id &&
        e.named_barriers(info.cta_global).generation(id) == s.wait_arg) {
      return 0;  // it waits for this instance to complete
    }
    r = 1;
  }
  int64_t threads = 0;
  for (; r < c.named.size(); ++r) {
    const engine::NamedAccess& a = c.named[r];
    if (a.object != obj || a.id == engine::NamedAccess::kExitRead) continue;
    if (!a.valid) return kNamedUnbounded;
    if (a.id != id) continue;
    if (a.count != count) return kNamedUnbounded;
    threads += info.threads;
    if (a.sync) break;
  }
  return threads;
}

template <typename UnitAt>
bool Reducer::NamedJoin(size_t x, size_t n_units, const UnitAt& unit_at, bool x_exit,
                        uint32_t* obj, std::vector<uint32_t>* join) {
  join->clear();
  const Engine& e = *e_;
  const auto [x_agent, x_enabled, x_touch] = unit_at(x, 0u);
  (void)x_touch;
  if (x_agent == kNoAgent) return false;
  const Engine::AgentState& s = e.agent_state(x_agent);
  const engine::AgentInfo& info = e.agent_info(x_agent);
  const uint32_t o = e.NamedObject(info.cta_global);
  const model::NamedBarriers& nb = e.named_barriers(info.cta_global);
  const CacheEntry& cx = *full_[x_agent];
  uint32_t id = 0, count = 0;
  int64_t need = 0;  // threads the instance still needs, x's own arrival aside
  bool blocked = false;
  if (x_exit) {
    // An exit: it changes the CTA's live thread count, which no instance reads (every
    // Do(NamedBarrier) passes its count b: NamedBarriers::Arrive never starts an all-threads
    // instance, so ThreadsExited releases none), and its agent's status, which only exit
    // reads (a DSMEM access of a peer, griddepcontrol.wait) and other exits read. So it meets
    // only the units whose accesses to the object are not known and those that read exits.
    if (e.is_primary_agent(x_agent)) return false;
    for (size_t y = 0; y < n_units; ++y) {
      if (y == x) continue;
      const auto [y_agent, y_enabled, y_touch] = unit_at(y, o);
      (void)y_enabled;
      if (!y_touch) continue;
      bool meets = y_agent == kNoAgent;
      if (!meets) {
        const CacheEntry& c = *full_[y_agent];
        meets = !c.exact || !c.named_exact;
        for (size_t r = 0; !meets && r < c.named.size(); ++r) {
          meets = c.named[r].object == o && c.named[r].id == engine::NamedAccess::kExitRead;
        }
      }
      if (meets) join->push_back(static_cast<uint32_t>(y));
    }
    *obj = o;
    return true;
  }
  if (x_enabled && s.wait == engine::WaitKind::kNamedBarrier) {
    // A released bar.sync re-checking its generation (see the header comment).
    if (!nb.Passed(s.wait_slot, s.wait_arg)) return false;
    *obj = o;
    return true;
  }
  if (x_enabled) {
    if (s.wait != engine::WaitKind::kNone || !cx.exact || !cx.named_exact || cx.named.empty()) {
      return false;
    }
    const engine::NamedAccess& a = cx.named[0];
    if (!a.first || !a.valid || a.id == engine::NamedAccess::kExitRead || a.object != o) {
      return false;
    }
    id = a.id;
    count = a.count;
    const uint32_t arrived = nb.arrived(id);
    if (arrived > 0 && (nb.count(id) != count || nb.all_threads(id))) return false;
    need = int64_t{count} - arrived - info.threads;
    if (need <= 0) return false;  // x may complete the instance
  } else {
    if (s.status != 1 || s.wait != engine::WaitKind::kNamedBarrier) return false;
    id = s.wait_slot;
    if (id >= model::kNamedBarrierCount || nb.generation(id) != s.wait_arg || nb.arrived(id) == 0 ||
        nb.all_threads(id)) {
      return false;
    }
    count = nb.count(id);
    need = int64_t{count} - nb.arrived(id);
    blocked = true;
  }
  holders_named_.clear();
  bool unbounded = false;
  int64_t sum = 0;
  for (size_t y = 0; y < n_units; ++y) {
    if (y == x) continue;
    const auto [y_agent, y_enabled, y_touch] = unit_at(y, o);
    (void)y_enabled;
    if (!y_touch) continue;
    const int64_t cap =
        y_agent == kNoAgent ? kNamedUnbounded : NamedCap(y_agent, o, id, count);
    if (cap == kNamedUnbounded) {
      join->push_back(static_cast<uint32_t>(y));
      unbounded = true;
    } else if (cap > 0) {
      holders_named_.push_back({static_cast<uint32_t>(y), cap});
      sum += cap;
    }
  }
  if (blocked) {
    if (!unbounded) {
      for (const auto& [y, cap] : holders_named_) {
        if (sum - cap < need) {  // every completing path holds y's arrival
          join->push_back(y);
          *obj = o;
          return true;
        }
      }
    }
    for (const auto& [y, cap] : holders_named_) join->push_back(y);
  } else {
    for (size_t h = 0; h < holders_named_.size() && sum >= need; ++h) {
      join->push_back(holders_named_[h].first);
      sum -= holders_named_[h].second;
    }
  }
  std::sort(join->begin(), join->end());
  *obj = o;
  return true;
}

void Reducer::NamedJoinsGeneral() {
  const Engine& e = *e_;
  auto unit_at = [&](size_t y, uint32_t o) {
    const Unit& u = units_[y];
    bool touch = false;
    if (u.agent != kNoAgent) {
      touch = e.agent_state(u.agent).status != 2 && full_[u.agent]->kinds[o] != kNone;
    } else {
      touch = OwnKind(u, o) != kNone;
    }
    return std::tuple<uint32_t, bool, bool>(u.agent, u.enabled, touch);
  };
  for (size_t x = 0; x < n_units_; ++x) {
    Unit& u = units_[x];
    uint32_t o = kNoNamed;
    bool exit = false;
    if (u.enabled && u.agent != kNoAgent) {
      const uint32_t own = e.NamedObject(e.agent_info(u.agent).cta_global);
      for (const auto& [no, k] : u.now) exit = exit || (no == own && k == kExitAcc);
    }
    if (!NamedJoin(x, n_units_, unit_at, exit, &o, &u.named_join)) continue;
    u.named_obj = o;
    // The object's entry of the step or wait is replaced by the joins (Meets); its bit stays
    // in now_mask, which only preselects the candidates.
    std::erase_if(u.now, [&](const std::pair<uint32_t, uint8_t>& p) { return p.first == o; });
  }
}

void Reducer::NamedJoinsMasks() {
  const Engine& e = *e_;
  auto unit_at = [&](size_t y, uint32_t o) {
    const MaskUnit& u = mu_[y];
    bool touch = false;
    if (u.agent != kNoAgent) {
      touch = e.agent_state(u.agent).status != 2 && (full_[u.agent]->km.any & ObjBit(o)) != 0;
    } else {
      touch = (u.own.any & ObjBit(o)) != 0;
    }
    return std::tuple<uint32_t, bool, bool>(u.agent, u.enabled, touch);
  };
  for (size_t x = 0; x < n_units_; ++x) {
    MaskUnit& u = mu_[x];
    u.named_obj = kNoNamed;
    u.named_join = 0;
    uint32_t o = kNoNamed;
    const bool exit =
        u.enabled && u.agent != kNoAgent &&
        (u.now[kExitAcc] & ObjBit(e.NamedObject(e.agent_info(u.agent).cta_global))) != 0;
    if (!NamedJoin(x, n_units_, unit_at, exit, &o, &named_scratch_join_)) continue;
    u.named_obj = o;
    for (uint32_t y : named_scratch_join_) u.named_join |= uint64_t{1} << y;
    u.now[kOther] &= ~ObjBit(o);
    u.now[kExitAcc] &= ~ObjBit(o);
  }
}

// The units x's named-barrier rule takes in under the current start's futures: those of its
// joins whose future touches the object (MaskTargets' `special`).
uint64_t Reducer::NamedSpecial(const MaskUnit& ux) const {
  if (ux.named_join == 0) return 0;
  uint64_t touch = 0;
  for (int k = 0; k < 6; ++k) touch |= ft_->units[k][ux.named_obj];
  return ux.named_join & touch;
}

}  // namespace parity::verifier::reduction
