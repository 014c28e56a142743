#include "verifier/happens_before.h"

#include <algorithm>
#include <utility>
#include <variant>

#include "verifier/check_work.h"

namespace parity::verifier {

using trace::EventKind;
using trace::TraceEvent;

void JoinClock(VectorClock& into, const VectorClock& from) {
  const size_t n = std::min(into.size(), from.size());
  CountWork(n);
  for (size_t i = 0; i < n; ++i) into[i] = std::max(into[i], from[i]);
}

namespace {

// Events that name an mbarrier slot (their target CTA, object and index).
bool NamesSlot(EventKind k) {
  switch (k) {
    case EventKind::kInit:
    case EventKind::kArrive:
    case EventKind::kArriveExpectTx:
    case EventKind::kExpectTx:
    case EventKind::kCompleteTx:
    case EventKind::kWaitEnd:
    case EventKind::kTestWait:
    case EventKind::kPhaseComplete:
    case EventKind::kTmaDeliver:
    case EventKind::kBulkComplete:
    case EventKind::kStAsync:
    case EventKind::kCpAsyncArrive:
      return true;
    default:
      return false;
  }
}

}  // namespace

HappensBefore::HappensBefore(const engine::Engine& e, std::span<const TraceEvent> trace,
                             const ir::Program* program, Mode mode) {
  if (program != nullptr) pcs_.emplace(*program);
  mode_ = mode;
  engine_ = &e;
  const auto num_agents = static_cast<uint32_t>(e.num_agents());
  uint32_t clusters = 1;
  for (uint32_t a = 0; a < num_agents; ++a) {
    clusters = std::max(clusters, e.agent_info(a).cluster + 1);
  }
  cluster_size_ = std::max<uint32_t>(1, e.num_ctas() / clusters);
  std::vector<uint32_t> cluster_agents(clusters, 0);
  local_.resize(num_agents);
  for (uint32_t a = 0; a < num_agents; ++a) {
    const engine::AgentInfo& info = e.agent_info(a);
    agent_ids_[Key(info.cta_global, info.index_in_cta)] = a;
    local_[a] = cluster_agents[info.cluster]++;
    max_cluster_agents_ = std::max(max_cluster_agents_, cluster_agents[info.cluster]);
  }
  // Every slot the trace names, so that the clock width is known before the first join.
  cluster_slots_.assign(clusters, 0);
  for (const TraceEvent& ev : trace) {
    if (NamesSlot(static_cast<EventKind>(ev.kind))) SlotOf(ev);
  }
  uint32_t max_cluster_slots = 0;
  for (uint32_t n : cluster_slots_) max_cluster_slots = std::max(max_cluster_slots, n);
  // An init component for every agent that runs fence.mbarrier_init (one per CTA, typically),
  // after the agents' and the slots' components.
  init_component_.assign(num_agents, kNone);
  std::vector<uint32_t> cluster_inits(clusters, 0);
  std::vector<std::pair<uint32_t, uint32_t>> init_agents;  // (agent, index in its cluster)
  uint32_t max_cluster_inits = 0;
  for (const TraceEvent& ev : trace) {
    if (static_cast<EventKind>(ev.kind) != EventKind::kFence ||
        ev.object != static_cast<uint16_t>(ir::Fence::Kind::kMbarrierInit)) {
      continue;
    }
    const uint32_t a = AgentOf(ev);
    if (a == kNone || init_component_[a] != kNone) continue;
    const uint32_t cluster = e.agent_info(a).cluster;
    init_component_[a] = 0;  // placed below, once the width of the slots is known
    init_agents.emplace_back(a, cluster_inits[cluster]++);
    max_cluster_inits = std::max(max_cluster_inits, cluster_inits[cluster]);
  }
  for (const auto& [a, index] : init_agents) {
    init_component_[a] = max_cluster_agents_ + max_cluster_slots + index;
  }
  width_ = max_cluster_agents_ + max_cluster_slots + max_cluster_inits;
  for (SlotClocks& s : slots_) {
    s.acc.Assign(width_);
    s.last.Assign(width_);
    s.prev.Assign(width_);
  }
  clocks_.resize(num_agents);
  for (Clocks& c : clocks_) c.Assign(width_);
  fence_.resize(num_agents);
  init_fence_.resize(num_agents);
  acquire_pending_.resize(num_agents);
  cluster_arrives_.assign(num_agents, 0);
}

uint32_t HappensBefore::AgentOf(const TraceEvent& ev) const {
  if (ev.agent == trace::kNoAgent) return kNone;
  auto it = agent_ids_.find(Key(CtaGlobal(ev, ev.cta), ev.agent));
  return it == agent_ids_.end() ? kNone : it->second;
}

uint32_t HappensBefore::Slot(uint32_t cta_global, uint32_t object, uint32_t index) {
  auto [it, fresh] =
      slot_ids_.emplace(Key(cta_global, object, index), static_cast<uint32_t>(slots_.size()));
  if (fresh) {
    SlotClocks s;
    s.cta_global = cta_global;
    s.object = object;
    s.index = index;
    const uint32_t cluster = cta_global / cluster_size_;
    if (cluster >= cluster_slots_.size()) cluster_slots_.resize(cluster + 1, 0);
    s.local = cluster_slots_[cluster]++;
    // A slot first named after the constructor (none: it reads every event that names one)
    // would have no component within the width; its clocks stay as wide as the others'.
    s.acc.Assign(width_);
    s.last.Assign(width_);
    s.prev.Assign(width_);
    slots_.push_back(std::move(s));
  }
  return it->second;
}

uint32_t HappensBefore::FindSlot(uint32_t cta_global, uint32_t object, uint32_t index) const {
  auto it = slot_ids_.find(Key(cta_global, object, index));
  return it == slot_ids_.end() ? kNone : it->second;
}

HappensBefore::Order HappensBefore::OrderOf(const TraceEvent& ev, uint32_t a) const {
  if (mode_ == Mode::kCausal) return {false, true};
  const ir::Op* op = pcs_ ? pcs_->op(engine_->agent_info(a).role, ev.pc) : nullptr;
  if (const auto* x = op ? std::get_if<ir::MbarrierArrive>(op) : nullptr) {
    return {x->sem == ir::MemSem::kRelaxed, x->scope == ir::MemScope::kCluster};
  }
  if (const auto* x = op ? std::get_if<ir::MbarrierWait>(op) : nullptr) {
    return {x->sem == ir::MemSem::kRelaxed, x->scope == ir::MemScope::kCluster};
  }
  return {(ev.flags & trace::kFlagRelaxed) != 0, (ev.flags & trace::kFlagScopeCluster) != 0};
}

HappensBefore::Clocks& HappensBefore::By(PhaseAcc& acc, uint32_t cta, bool cluster) {
  auto [it, fresh] = acc.by.try_emplace({cta, cluster});
  if (fresh) it->second.Assign(width_);
  return it->second;
}

void HappensBefore::ReleaseArrive(const TraceEvent& ev, uint32_t a, Order o, PhaseAcc& acc) {
  // .release joins what the agent did, at the arrive's scope; a .relaxed update releases only
  // what a fence.acq_rel before it covers (a release pattern, at the narrower scope), or nothing.
  const uint32_t cta = CtaGlobal(ev, ev.cta);
  if (!o.relaxed) {
    By(acc, cta, o.cluster).Join(clocks_[a]);
    return;
  }
  if (fence_[a].seen) By(acc, cta, o.cluster && fence_[a].cluster).Join(fence_[a].at);
  // fence.mbarrier_init is .release.cluster: the pattern has the arrive's scope.
  if (init_fence_[a].seen) ReleaseInits(a, By(acc, cta, o.cluster));
}

void HappensBefore::ReleaseInits(uint32_t a, Clocks& into) const {
  const uint32_t c = init_component_[a];
  if (!init_fence_[a].seen || c == kNone || c >= into.strong.size()) return;
  into.strong[c] = std::max(into.strong[c], init_fence_[a].epoch);
  into.weak[c] = std::max(into.weak[c], init_fence_[a].epoch);
}

void HappensBefore::Acquire(uint32_t a, uint32_t cta, bool cluster, const PhaseAcc& seen) {
  // Release and acquire synchronise (PTX: morally strong) when they are in one CTA or both are
  // .cluster-scoped; otherwise only the weak clock follows the edge.
  clocks_[a].Join(seen.always);
  for (const auto& [key, c] : seen.by) {
    if (key.first == cta || (key.second && cluster)) {
      clocks_[a].Join(c);
    } else {
      JoinClock(clocks_[a].weak, c.weak);
    }
  }
}

void HappensBefore::Observe(const TraceEvent& ev, uint32_t a) {
  const SlotClocks& s = slots_[SlotOf(ev)];
  // The completed phase with the waited parity: the last one, or (stale) the one before; a
  // parity wait that passes on a slot without such a phase observes nothing.
  const PhaseAcc* seen = nullptr;
  if (s.completed >= 1 && ((s.completed - 1) & 1) == ev.parity) {
    seen = &s.last;
  } else if (s.completed >= 2) {
    seen = &s.prev;
  }
  if (seen == nullptr) return;
  // .acquire acquires now; .relaxed only at the agent's next fence.acq_rel (acquire pattern).
  const Order o = OrderOf(ev, a);
  const uint32_t cta = CtaGlobal(ev, ev.cta);
  if (o.relaxed) {
    acquire_pending_[a].push_back(PendingAcquire{cta, o.cluster, *seen});
  } else {
    Acquire(a, cta, o.cluster, *seen);
  }
}

void HappensBefore::Step(const TraceEvent& ev) {
  const auto k = static_cast<EventKind>(ev.kind);
  const uint32_t a = AgentOf(ev);
  if (a != kNone) {
    ++clocks_[a].strong[local_[a]];
    ++clocks_[a].weak[local_[a]];
  }
  switch (k) {
    case EventKind::kArrive:
    case EventKind::kArriveExpectTx:
      // By an agent; the landing of a deferred arrive is the caller's.
      // By an agent; the landing of a deferred arrive releases nothing.
      if (a != kNone) ReleaseArrive(ev, a, OrderOf(ev, a), slots_[SlotOf(ev)].acc);
      break;
    case EventKind::kExpectTx:
    case EventKind::kCompleteTx:
      // By an agent: .relaxed (mbarrier.expect_tx / complete_tx have no other semantics), at
      // .cta scope on the own CTA's barrier and .cluster on a peer's (as the executor issues
      // them). The landing of an st.async releases nothing.
      if (a != kNone) {
        const Order o = mode_ == Mode::kCausal ? Order{false, true}
                                               : Order{true, ev.target_cta != ev.cta};
        ReleaseArrive(ev, a, o, slots_[SlotOf(ev)].acc);
      }
      break;
    case EventKind::kPhaseComplete: {
      const uint32_t id = SlotOf(ev);
      SlotClocks& s = slots_[id];
      s.prev = std::move(s.last);
      s.last = std::move(s.acc);
      s.completed = static_cast<uint32_t>(ev.value) + 1;
      const uint32_t c = SlotComponent(id);
      if (c < s.last.always.strong.size()) {
        s.last.always.strong[c] = s.completed;
        s.last.always.weak[c] = s.completed;
      }
      s.acc.Assign(width_);
      break;
    }
    case EventKind::kWaitEnd:
      if (a != kNone) Observe(ev, a);
      break;
    case EventKind::kTestWait:
      if (a != kNone && ev.value == 1) Observe(ev, a);
      break;
    case EventKind::kClusterArrive: {
      if (a == kNone) break;
      // barrier.cluster.arrive is .release unless .relaxed (value 1); a relaxed one releases
      // what a fence.acq_rel.cluster before it covers (a release pattern), or nothing.
      auto [it, fresh] = cluster_acc_.try_emplace({ev.cluster, cluster_arrives_[a]});
      if (fresh) it->second.Assign(width_);
      if (ev.value == 0 || mode_ == Mode::kCausal) {
        it->second.Join(clocks_[a]);
      } else {
        if (fence_[a].seen && fence_[a].cluster) it->second.Join(fence_[a].at);
        // The release pattern of fence.mbarrier_init.release.cluster: the inits only.
        ReleaseInits(a, it->second);
      }
      ++cluster_arrives_[a];
      break;
    }
    case EventKind::kClusterWaitEnd:
      if (a != kNone && cluster_arrives_[a] > 0) {
        auto it = cluster_acc_.find({ev.cluster, cluster_arrives_[a] - 1});
        if (it != cluster_acc_.end()) clocks_[a].Join(it->second);
      }
      break;
    case EventKind::kFence: {
      const auto kind = static_cast<ir::Fence::Kind>(ev.object);
      if (a != kNone && kind == ir::Fence::Kind::kMbarrierInit) {
        // The agent's own view of its init component: what a later .release carries.
        const uint32_t own = clocks_[a].strong[local_[a]];
        init_fence_[a] = InitFenceAt{true, own};
        const uint32_t c = init_component_[a];
        if (c != kNone && c < clocks_[a].strong.size()) {
          clocks_[a].strong[c] = own;
          clocks_[a].weak[c] = own;
        }
        break;
      }
      if (a == kNone ||
          (kind != ir::Fence::Kind::kAcqRelCluster && kind != ir::Fence::Kind::kAcqRelCta)) {
        break;
      }
      const bool cluster = kind == ir::Fence::Kind::kAcqRelCluster;
      // Acquire pattern: relaxed waits before the fence acquire at the fence.
      for (const PendingAcquire& q : acquire_pending_[a]) {
        Acquire(a, q.cta, q.cluster && cluster, q.seen);
      }
      acquire_pending_[a].clear();
      fence_[a] = FenceAt{true, cluster, clocks_[a]};
      break;
    }
    case EventKind::kNamedBarrierArrive:
    case EventKind::kNamedBarrierSyncBegin: {
      if (a == kNone) break;
      const uint64_t key = Key(CtaGlobal(ev, ev.cta), ev.object);
      uint32_t& gen = named_gen_[key];
      auto [na, fresh] = named_acc_.try_emplace(Key(CtaGlobal(ev, ev.cta), ev.object, gen));
      if (fresh) na->second.Assign(width_);
      na->second.Join(clocks_[a]);
      named_agent_gen_[Key(a, ev.object)] = gen;
      if (ev.value2 == 0) ++gen;  // the model resets `arrived` to 0 when the instance completes
      break;
    }
    case EventKind::kNamedBarrierSyncEnd: {
      if (a == kNone) break;
      auto g = named_agent_gen_.find(Key(a, ev.object));
      if (g == named_agent_gen_.end()) break;
      auto it = named_acc_.find(Key(CtaGlobal(ev, ev.cta), ev.object, g->second));
      if (it != named_acc_.end()) clocks_[a].Join(it->second);
      break;
    }
    default:
      break;
  }
}

}  // namespace parity::verifier
