#include "verifier/races.h"

#include <algorithm>
#include <deque>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <variant>

#include "verifier/deadlock.h"
#include "verifier/pc_map.h"

namespace parity::verifier {
namespace {

using trace::EventKind;
using trace::TraceEvent;
using Clock = std::vector<uint32_t>;

void Join(Clock& into, const Clock& from) {
  for (size_t i = 0; i < into.size(); ++i) into[i] = std::max(into[i], from[i]);
}

// Two vector clocks per agent and per release: `strong` is happens-before as PTX defines it;
// `weak` also follows release/acquire pairs whose scopes do not include each other (a .cta
// arrive observed by another CTA, a .cta wait observing another CTA's arrive). weak >= strong.
// A read or a completed async-proxy copy write ordered by `weak` is ordered (done before the
// arrive issued: see races.h); a generic write ordered only by `weak` is P2013
// (release-scope-narrow), one ordered by neither is P2009.
struct Hb {
  Clock strong, weak;
  void Assign(uint32_t width) {
    strong.assign(width, 0);
    weak.assign(width, 0);
  }
  void Join(const Hb& o) {
    verifier::Join(strong, o.strong);
    verifier::Join(weak, o.weak);
  }
  void JoinWeakOnly(const Hb& o) { verifier::Join(weak, o.weak); }
  void Clear() {
    std::fill(strong.begin(), strong.end(), 0);
    std::fill(weak.begin(), weak.end(), 0);
  }
};

// What the releases of one barrier phase carry, by who released and at which scope: `always`
// holds what every acquiring observer gets (copy deliveries, complete_tx, expect_tx, the phase's
// own component); `by[(cta, cluster scope)]` the arrive-on releases of agents of that CTA.
struct PhaseAcc {
  Hb always;
  std::map<std::pair<uint32_t, bool>, Hb> by;
  void Assign(uint32_t width) {
    always.Assign(width);
    by.clear();
  }
};

constexpr int64_t kWholeSlot = std::numeric_limits<int64_t>::max();

enum class AccessKind : uint8_t {
  kUse,        // generic read
  kWrite,      // generic write
  kCopyWrite,  // TMA / bulk load, st.async (async proxy)
  kCpAsync,    // cp.async write (generic proxy, asynchronous)
  kStoreRead,  // TMA / bulk store reading its source (async proxy)
};

bool IsWrite(AccessKind k) { return k != AccessKind::kUse && k != AccessKind::kStoreRead; }
bool IsCopy(AccessKind k) {
  return k == AccessKind::kCopyWrite || k == AccessKind::kCpAsync || k == AccessKind::kStoreRead;
}

// A witness that an access is complete for an observer: observer clock[component] >= value.
struct Witness {
  uint32_t component = 0;
  uint32_t value = 0;
};

struct Access {
  AccessKind kind = AccessKind::kUse;
  uint32_t agent = 0;  // global agent (the issuer of a copy)
  uint32_t pc = 0;
  uint32_t cta = 0;    // global CTA whose shared memory it touches
  uint32_t buffer = 0;
  int64_t base = 0;    // CTA shared-memory offset of byte 0 of the slot (aliases share bytes)
  int64_t end = 0;     // CTA shared-memory offset past the last byte it may touch
  uint32_t slot = 0;
  int64_t lo = 0;
  int64_t hi = kWholeSlot;  // exclusive; kWholeSlot: the rest of the slot
  bool range_known = true;
  size_t event = 0;   // start: the access, or the copy's issue
  Clock clock;        // happens-before the start
  Clock weak;         // Hb::weak at the start
  std::vector<Witness> done;
  // Copy writes: the barrier element the bytes completed on (after delivery).
  bool delivered = false;
  uint32_t bar_slot = 0;
  uint32_t bar_phase = 0;
};

struct BarSlot {
  uint32_t cta = 0, object = 0, index = 0;
  uint32_t completed = 0;
  PhaseAcc acc, last, prev;
};

struct Pending {  // a copy in flight to one destination, waiting for its delivery event
  uint32_t issuer_cta = 0;
  uint32_t pc = 0;
  uint32_t target = 0;  // destination rank
  bool has_bar_index = false;
  uint32_t bar_index = 0;
  uint32_t slot = 0;
  size_t access = 0;
  size_t clock = 0;
};

struct CpArrive {
  uint32_t bar = 0;
  Hb clock;
  uint32_t agent = 0;
  uint32_t upto = 0;
};

bool SameExpr(const ir::Program& p, ir::ExprId a, ir::ExprId b) {
  if (a == b) return true;
  if (a == ir::kNoExpr || b == ir::kNoExpr) return false;
  const ir::Expr& x = p.expr(a);
  const ir::Expr& y = p.expr(b);
  return x.kind == y.kind && x.op == y.op && x.index == y.index && x.value == y.value &&
         SameExpr(p, x.a, y.a) && SameExpr(p, x.b, y.b) && SameExpr(p, x.c, y.c);
}

class Races {
 public:
  Races(const ir::Program& p, const engine::Engine& e, std::span<const TraceEvent> trace)
      : p_(p), e_(e), trace_(trace), pcs_(p) {}

  std::vector<Finding> Run() {
    Setup();
    for (size_t i = 0; i < trace_.size(); ++i) Step(i, trace_[i]);
    Pairs();
    return std::move(findings_);
  }

 private:
  static uint64_t Key(uint64_t a, uint64_t b, uint64_t c = 0) {
    return (a << 40) | (b << 20) | c;
  }
  uint32_t CtaGlobal(const TraceEvent& ev, uint32_t rank) const {
    return ev.cluster * cluster_size_ + rank;
  }
  uint32_t AgentOf(const TraceEvent& ev) const {
    auto it = agent_ids_.find(Key(CtaGlobal(ev, ev.cta), ev.agent));
    return it == agent_ids_.end() ? kNoFindingAgent : it->second;
  }
  uint32_t Role(uint32_t a) const { return e_.agent_info(a).role; }
  uint32_t Comp(uint32_t bar) const { return num_agents_ + bar; }
  uint32_t Bar(const TraceEvent& ev) {
    auto [it, fresh] = bar_ids_.emplace(Key(CtaGlobal(ev, ev.target_cta), ev.object, ev.index),
                                        static_cast<uint32_t>(bars_.size()));
    if (fresh) {
      BarSlot s;
      s.cta = CtaGlobal(ev, ev.target_cta);
      s.object = ev.object;
      s.index = ev.index;
      bars_.push_back(std::move(s));
    }
    return it->second;
  }
  static bool IsBarrierEvent(EventKind k) {
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
  // A constant offset expression's value (absent = 0); -1 when only a run of the agent knows it.
  int64_t ConstOffset(ir::ExprId e) const {
    if (e == ir::kNoExpr) return 0;
    const ir::Expr& x = p_.expr(e);
    return x.kind == ir::Expr::Kind::kConst ? x.value : -1;
  }

  void Setup() {
    num_agents_ = static_cast<uint32_t>(e_.num_agents());
    uint32_t clusters = 1;
    for (uint32_t a = 0; a < num_agents_; ++a) {
      const engine::AgentInfo& info = e_.agent_info(a);
      clusters = std::max(clusters, info.cluster + 1);
      agent_ids_[Key(info.cta_global, info.index_in_cta)] = a;
    }
    cluster_size_ = std::max<uint32_t>(1, e_.num_ctas() / clusters);
    for (const TraceEvent& ev : trace_) {
      if (IsBarrierEvent(static_cast<EventKind>(ev.kind))) Bar(ev);
    }
    width_ = num_agents_ + static_cast<uint32_t>(bars_.size());
    for (BarSlot& s : bars_) {
      s.acc.Assign(width_);
      s.last.Assign(width_);
      s.prev.Assign(width_);
    }
    clocks_.resize(num_agents_);
    for (Hb& h : clocks_) h.Assign(width_);
    fence_.resize(num_agents_);
    acquire_pending_.resize(num_agents_);
    bulk_open_.resize(num_agents_);
    bulk_groups_.resize(num_agents_);
    cp_issued_.assign(num_agents_, 0);
    cp_seq_.resize(num_agents_);
    cp_groups_.resize(num_agents_);
    cluster_arrives_.assign(num_agents_, 0);
  }

  size_t Add(Access a) {
    accesses_.push_back(std::move(a));
    return accesses_.size() - 1;
  }
  void Stamp(Access* x, uint32_t a) const {
    x->clock = clocks_[a].strong;
    x->weak = clocks_[a].weak;
  }
  Access Generic(size_t i, const TraceEvent& ev, uint32_t a, AccessKind kind) const {
    Access x;
    x.kind = kind;
    x.agent = a;
    x.pc = ev.pc;
    // A DSMEM access (`use`/`write ... @cta(r)`) touches the target CTA's memory.
    x.cta = CtaGlobal(ev, ev.target_cta);
    x.buffer = ev.object;
    x.slot = ev.index;
    x.lo = ev.value2;
    x.hi = static_cast<int64_t>(ev.value2) + ev.value;
    x.event = i;
    Stamp(&x, a);
    x.done.push_back(Witness{a, clocks_[a].strong[a]});
    return x;
  }

  void OnLoadIssue(size_t i, const TraceEvent& ev, uint32_t a) {
    const ir::Op* op = pcs_.op(Role(a), ev.pc);
    const ir::BufferRef* dst = nullptr;
    bool same = false;
    int64_t mask = -1;
    if (const auto* t = op ? std::get_if<ir::TmaLoad>(op) : nullptr) {
      dst = &t->dst;
      same = SameExpr(p_, t->dst.slot, t->bar.index);
    } else if (const auto* b = op ? std::get_if<ir::BulkLoad>(op) : nullptr) {
      dst = &b->dst;
      same = SameExpr(p_, b->dst.slot, b->bar.index);
    } else {
      return;
    }
    if (ev.flags & trace::kFlagMulticast) mask = static_cast<uint16_t>(ev.value2);
    const int64_t off = ConstOffset(dst->offset);
    Access x;
    x.kind = AccessKind::kCopyWrite;
    x.agent = a;
    x.pc = ev.pc;
    x.buffer = dst->buffer;
    x.slot = ev.index;
    x.range_known = off >= 0;
    x.lo = std::max<int64_t>(off, 0);
    x.hi = off >= 0 ? off + ev.value : kWholeSlot;
    x.event = i;
    Stamp(&x, a);
    Pending c;
    c.issuer_cta = CtaGlobal(ev, ev.cta);
    c.pc = ev.pc;
    c.has_bar_index = same;
    c.bar_index = ev.index;
    c.slot = ev.index;
    c.clock = issue_clocks_.size();
    issue_clocks_.push_back(clocks_[a]);
    for (uint32_t r = 0; r < 16; ++r) {
      if (mask < 0 ? r != ev.target_cta : ((mask >> r) & 1) == 0) continue;
      x.cta = ev.cluster * cluster_size_ + r;
      c.target = r;
      c.access = Add(x);
      pending_.push_back(c);
    }
  }

  void OnStAsyncIssue(size_t i, const TraceEvent& ev, uint32_t a) {
    const ir::Op* op = pcs_.op(Role(a), ev.pc);
    const auto* st = op ? std::get_if<ir::StAsync>(op) : nullptr;
    Pending c;
    c.issuer_cta = CtaGlobal(ev, ev.cta);
    c.pc = ev.pc;
    c.target = ev.target_cta;
    c.has_bar_index = true;
    c.bar_index = ev.index;
    c.slot = ev.index;
    c.clock = issue_clocks_.size();
    issue_clocks_.push_back(clocks_[a]);
    c.access = kNone;
    // The event names the barrier element; the slot is known when it is the same expression.
    if (st != nullptr && SameExpr(p_, st->dst.slot, st->bar.index)) {
      const int64_t off = ConstOffset(st->dst.offset);
      Access x;
      x.kind = AccessKind::kCopyWrite;
      x.agent = a;
      x.pc = ev.pc;
      x.cta = CtaGlobal(ev, ev.target_cta);
      x.buffer = st->dst.buffer;
      x.slot = ev.index;
      x.range_known = off >= 0;
      x.lo = std::max<int64_t>(off, 0);
      x.hi = off >= 0 ? off + ev.value : kWholeSlot;
      x.event = i;
      Stamp(&x, a);
      c.access = Add(std::move(x));
    }
    pending_.push_back(c);
  }

  void OnDelivery(const TraceEvent& ev) {
    const uint32_t issuer_cta = CtaGlobal(ev, ev.cta);
    size_t first = pending_.size(), exact = pending_.size();
    // A delivery that names its slot (trace::kFlagSlot) matches only a copy into that slot.
    const bool named_slot = (ev.flags & trace::kFlagSlot) != 0;
    for (size_t j = 0; j < pending_.size(); ++j) {
      const Pending& c = pending_[j];
      if (c.issuer_cta != issuer_cta || c.pc != ev.pc || c.target != ev.target_cta) continue;
      if (c.has_bar_index && c.bar_index != ev.index) continue;
      if (named_slot && c.access != kNone && c.slot != ev.parity) continue;
      if (first == pending_.size()) first = j;
      if (c.slot == ev.index) {
        exact = j;
        break;
      }
    }
    const size_t best = exact != pending_.size() ? exact : first;
    if (best == pending_.size()) return;
    const Pending c = pending_[best];
    pending_.erase(pending_.begin() + static_cast<std::ptrdiff_t>(best));
    const uint32_t bar = Bar(ev);
    BarSlot& s = bars_[bar];
    s.acc.always.Join(issue_clocks_[c.clock]);
    if (c.access == kNone) return;
    Access& x = accesses_[c.access];
    x.delivered = true;
    x.bar_slot = bar;
    x.bar_phase = s.completed;
    x.done.push_back(Witness{Comp(bar), s.completed + 1});
    if (x.range_known) x.hi = x.lo + ev.value;
  }

  void OnStoreIssue(size_t i, const TraceEvent& ev, uint32_t a, const ir::BufferRef& src) {
    const int64_t off = ConstOffset(src.offset);
    Access x;
    x.kind = AccessKind::kStoreRead;
    x.agent = a;
    x.pc = ev.pc;
    x.cta = CtaGlobal(ev, ev.cta);
    x.buffer = src.buffer;
    x.slot = ev.index;
    x.range_known = off >= 0;
    x.lo = std::max<int64_t>(off, 0);
    x.hi = off >= 0 ? off + ev.value : kWholeSlot;
    x.event = i;
    Stamp(&x, a);
    bulk_open_[a].push_back(Add(std::move(x)));
  }

  void CpCommit(uint32_t a) { cp_groups_[a].push_back(cp_issued_[a]); }

  // The semantics and scope of an arrive or wait event: from its statement when the program
  // has it (simulator and GPU traces alike), else from the event's flags.
  struct Order {
    bool relaxed = false;
    bool cluster = false;
  };
  Order OrderOf(const TraceEvent& ev, uint32_t a) const {
    const ir::Op* op = pcs_.op(Role(a), ev.pc);
    if (const auto* x = op ? std::get_if<ir::MbarrierArrive>(op) : nullptr) {
      return {x->sem == ir::MemSem::kRelaxed, x->scope == ir::MemScope::kCluster};
    }
    if (const auto* x = op ? std::get_if<ir::MbarrierWait>(op) : nullptr) {
      return {x->sem == ir::MemSem::kRelaxed, x->scope == ir::MemScope::kCluster};
    }
    return {(ev.flags & trace::kFlagRelaxed) != 0, (ev.flags & trace::kFlagScopeCluster) != 0};
  }
  Hb& By(PhaseAcc& acc, uint32_t cta, bool cluster) {
    auto [it, fresh] = acc.by.try_emplace({cta, cluster});
    if (fresh) it->second.Assign(width_);
    return it->second;
  }
  // An arrive-on of agent `a`: .release joins what the agent did, at the arrive's scope; a
  // .relaxed arrive releases only what a fence.acq_rel before it covers (a release pattern, at
  // the narrower of the two scopes), else nothing.
  void Release(const TraceEvent& ev, uint32_t a, PhaseAcc& acc) {
    const Order o = OrderOf(ev, a);
    const uint32_t cta = CtaGlobal(ev, ev.cta);
    if (!o.relaxed) {
      By(acc, cta, o.cluster).Join(clocks_[a]);
    } else if (fence_[a].seen) {
      By(acc, cta, o.cluster && fence_[a].cluster).Join(fence_[a].at);
    }
  }
  // A wait of agent `a` that observes a completed phase: .acquire joins it now; .relaxed only
  // at the agent's next fence.acq_rel (an acquire pattern).
  void Acquire(const TraceEvent& ev, uint32_t a, const PhaseAcc& seen) {
    const Order o = OrderOf(ev, a);
    const uint32_t cta = CtaGlobal(ev, ev.cta);
    if (o.relaxed) {
      acquire_pending_[a].push_back(PendingAcquire{cta, o.cluster, seen});
      return;
    }
    Observe(a, cta, o.cluster, seen);
  }
  // Release and acquire synchronise (PTX: morally strong) when they are in one CTA or both are
  // .cluster-scoped; otherwise only the weak clock follows the edge.
  void Observe(uint32_t a, uint32_t cta, bool cluster, const PhaseAcc& seen) {
    clocks_[a].Join(seen.always);
    for (const auto& [key, hb] : seen.by) {
      if (key.first == cta || (key.second && cluster)) {
        clocks_[a].Join(hb);
      } else {
        clocks_[a].JoinWeakOnly(hb);
      }
    }
  }

  // Copies of agent `a` numbered below `upto` are complete for observers reaching `w`.
  void CpDone(uint32_t a, uint32_t upto, Witness w) {
    for (uint32_t s = 0; s < upto && s < cp_seq_[a].size(); ++s) {
      accesses_[cp_seq_[a][s]].done.push_back(w);
    }
  }

  void Step(size_t i, const TraceEvent& ev) {
    const auto k = static_cast<EventKind>(ev.kind);
    const bool by_agent = ev.agent != trace::kNoAgent;
    const uint32_t a = by_agent ? AgentOf(ev) : kNoFindingAgent;
    if (by_agent && a == kNoFindingAgent) return;
    if (by_agent) {
      ++clocks_[a].strong[a];
      ++clocks_[a].weak[a];
    }
    switch (k) {
      case EventKind::kArrive:
        if (by_agent) {
          Release(ev, a, bars_[Bar(ev)].acc);
        } else {  // the deferred arrive of cp.async.mbarrier.arrive lands
          auto& q = cp_arrives_[Key(CtaGlobal(ev, ev.cta), ev.pc)];
          const uint32_t bar = Bar(ev);
          auto it = std::find_if(q.begin(), q.end(),
                                 [bar](const CpArrive& c) { return c.bar == bar; });
          if (it != q.end()) {
            CpDone(it->agent, it->upto, Witness{Comp(bar), bars_[bar].completed + 1});
            bars_[bar].acc.always.Join(it->clock);
            q.erase(it);
          }
        }
        break;
      case EventKind::kArriveExpectTx:
        Release(ev, a, bars_[Bar(ev)].acc);
        break;
      case EventKind::kExpectTx:
        bars_[Bar(ev)].acc.always.Join(clocks_[a]);
        break;
      case EventKind::kCompleteTx:
        if (by_agent) {
          bars_[Bar(ev)].acc.always.Join(clocks_[a]);
        } else {
          OnDelivery(ev);  // st.async landing
        }
        break;
      case EventKind::kTmaDeliver:
      case EventKind::kBulkComplete:
        OnDelivery(ev);
        break;
      case EventKind::kPhaseComplete: {
        BarSlot& s = bars_[Bar(ev)];
        s.prev = std::move(s.last);
        s.last = std::move(s.acc);
        s.completed = static_cast<uint32_t>(ev.value) + 1;
        s.last.always.strong[Comp(Bar(ev))] = s.completed;
        s.last.always.weak[Comp(Bar(ev))] = s.completed;
        s.acc.Assign(width_);
        break;
      }
      case EventKind::kWaitEnd:
      case EventKind::kTestWait: {
        if (k == EventKind::kTestWait && ev.value != 1) break;
        const BarSlot& s = bars_[Bar(ev)];
        // The completed phase with the waited parity: the last or (stale) the one before; a
        // parity wait that passes on a barrier without such a phase observes nothing.
        const PhaseAcc* seen = nullptr;
        if (s.completed >= 1 && ((s.completed - 1) & 1) == ev.parity) {
          seen = &s.last;
        } else if (s.completed >= 2) {
          seen = &s.prev;
        }
        if (seen != nullptr) Acquire(ev, a, *seen);
        break;
      }
      case EventKind::kTmaIssue:
        OnLoadIssue(i, ev, a);
        break;
      case EventKind::kStAsync:
        OnStAsyncIssue(i, ev, a);
        break;
      case EventKind::kBulkIssue: {
        const ir::Op* op = pcs_.op(Role(a), ev.pc);
        if (const auto* st = op ? std::get_if<ir::BulkStore>(op) : nullptr) {
          OnStoreIssue(i, ev, a, st->src);
        } else {
          OnLoadIssue(i, ev, a);
        }
        break;
      }
      case EventKind::kTmaStoreIssue: {
        const ir::Op* op = pcs_.op(Role(a), ev.pc);
        if (const auto* st = op ? std::get_if<ir::TmaStore>(op) : nullptr) {
          OnStoreIssue(i, ev, a, st->src);
        }
        break;
      }
      case EventKind::kBulkCommit:
        bulk_groups_[a].push_back(std::move(bulk_open_[a]));
        bulk_open_[a].clear();
        break;
      case EventKind::kBulkWaitEnd: {
        // wait_group[.read] N: every committed group but the newest N has read its source.
        auto& groups = bulk_groups_[a];
        const size_t keep = static_cast<size_t>(std::max<int64_t>(ev.value, 0));
        while (groups.size() > keep) {
          for (size_t x : groups.front()) {
            accesses_[x].done.push_back(Witness{a, clocks_[a].strong[a]});
          }
          groups.pop_front();
        }
        break;
      }
      case EventKind::kCpAsyncIssue: {
        const ir::Op* op = pcs_.op(Role(a), ev.pc);
        const auto* cp = op ? std::get_if<ir::CpAsync>(op) : nullptr;
        const int64_t off = cp ? ConstOffset(cp->dst.offset) : -1;
        Access x;
        x.kind = AccessKind::kCpAsync;
        x.agent = a;
        x.pc = ev.pc;
        x.cta = CtaGlobal(ev, ev.target_cta);
        x.buffer = ev.object;
        x.slot = ev.index;
        x.range_known = off >= 0;
        x.lo = std::max<int64_t>(off, 0);
        x.hi = off >= 0 ? off + ev.value : kWholeSlot;
        x.event = i;
        Stamp(&x, a);
        cp_seq_[a].push_back(Add(std::move(x)));
        ++cp_issued_[a];
        break;
      }
      case EventKind::kCpAsyncCommit:
        CpCommit(a);
        break;
      case EventKind::kCpAsyncWaitBegin: {
        const ir::Op* op = pcs_.op(Role(a), ev.pc);
        const auto* w = op ? std::get_if<ir::CpAsyncWait>(op) : nullptr;
        if (w != nullptr && w->pending == ir::kNoExpr) CpCommit(a);  // wait_all commits first
        break;
      }
      case EventKind::kCpAsyncWaitEnd: {
        std::deque<uint32_t>& groups = cp_groups_[a];
        const size_t keep = static_cast<size_t>(std::max<int64_t>(ev.value, 0));
        if (groups.size() <= keep) break;
        const uint32_t upto = groups[groups.size() - keep - 1];
        groups.erase(groups.begin(), groups.end() - static_cast<std::ptrdiff_t>(keep));
        CpDone(a, upto, Witness{a, clocks_[a].strong[a]});
        break;
      }
      case EventKind::kCpAsyncArrive: {
        const uint32_t bar = Bar(ev);
        cp_arrives_[Key(CtaGlobal(ev, ev.cta), ev.pc)].push_back(
            CpArrive{bar, clocks_[a], a, cp_issued_[a]});
        break;
      }
      case EventKind::kUse:
        Add(Generic(i, ev, a, AccessKind::kUse));
        break;
      case EventKind::kWrite: {
        // `write B[s]` without `bytes` stands for the agent's threads writing their part of the
        // slot: where in the slot only a run of the threads knows.
        Access x = Generic(i, ev, a, AccessKind::kWrite);
        const ir::Op* op = pcs_.op(Role(a), ev.pc);
        const auto* w = op ? std::get_if<ir::BufferAccess>(op) : nullptr;
        x.range_known = w != nullptr && w->buf.bytes != ir::kNoExpr;
        Add(std::move(x));
        break;
      }
      case EventKind::kClusterArrive: {
        // barrier.cluster.arrive is .release unless .relaxed; a relaxed one releases what a
        // fence.acq_rel.cluster before it covers (a release pattern), or nothing.
        auto [it, fresh] = cluster_acc_.try_emplace({ev.cluster, cluster_arrives_[a]});
        if (fresh) it->second.Assign(width_);
        if (ev.value == 0) {
          it->second.Join(clocks_[a]);
        } else if (fence_[a].seen && fence_[a].cluster) {
          it->second.Join(fence_[a].at);
        }
        ++cluster_arrives_[a];
        break;
      }
      case EventKind::kClusterWaitEnd:
        if (cluster_arrives_[a] > 0) {
          auto it = cluster_acc_.find({ev.cluster, cluster_arrives_[a] - 1});
          if (it != cluster_acc_.end()) clocks_[a].Join(it->second);
        }
        break;
      case EventKind::kFence: {
        const auto kind = static_cast<ir::Fence::Kind>(ev.object);
        if (!by_agent || (kind != ir::Fence::Kind::kAcqRelCluster &&
                          kind != ir::Fence::Kind::kAcqRelCta)) {
          break;
        }
        const bool cluster = kind == ir::Fence::Kind::kAcqRelCluster;
        // Acquire pattern: relaxed waits before the fence acquire at the fence.
        for (const PendingAcquire& q : acquire_pending_[a]) {
          Observe(a, q.cta, q.cluster && cluster, q.seen);
        }
        acquire_pending_[a].clear();
        fence_[a] = FenceAt{true, cluster, clocks_[a]};
        break;
      }
      case EventKind::kNamedBarrierArrive:
      case EventKind::kNamedBarrierSyncBegin: {
        const uint64_t key = Key(CtaGlobal(ev, ev.cta), ev.object);
        uint32_t& gen = named_gen_[key];
        auto [na, fresh] = named_acc_.try_emplace(Key(CtaGlobal(ev, ev.cta), ev.object, gen));
        if (fresh) na->second.Assign(width_);
        na->second.Join(clocks_[a]);
        named_agent_gen_[Key(a, ev.object)] = gen;
        if (ev.value2 == 0) ++gen;  // the instance completed
        break;
      }
      case EventKind::kNamedBarrierSyncEnd: {
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

  // Exact ranges overlap when they intersect. An access whose range is only a span (somewhere
  // in it) overlaps an exact one only when that one covers the whole span; two spans are not
  // compared (the threads of several agents, or the slices of a multicast, write disjoint parts).
  // Ranges in CTA shared-memory bytes (Access::base), so that aliases compare.
  static int64_t Lo(const Access& x) { return x.base + x.lo; }
  static int64_t Hi(const Access& x) { return x.hi == kWholeSlot ? kWholeSlot : x.base + x.hi; }
  static bool Overlap(const Access& a, const Access& b) {
    if (a.range_known && b.range_known) return Lo(a) < Hi(b) && Lo(b) < Hi(a);
    if (!a.range_known && !b.range_known) return false;
    const Access& exact = a.range_known ? a : b;
    const Access& span = a.range_known ? b : a;
    return Lo(exact) <= Lo(span) && Hi(exact) >= Hi(span);
  }

  static bool Reaches(const Access& a, const Clock& clock) {
    for (const Witness& w : a.done) {
      if (clock[w.component] >= w.value) return true;
    }
    return false;
  }
  // Generic-proxy writes (st.shared, DSMEM st.shared::cluster, cp.async) need PTX's
  // happens-before to be ordered before another CTA's access: their visibility beyond the CTA is
  // what a .cluster release provides. A read, and an async-proxy copy write whose completion the
  // chain observed on its barrier phase, is done when the releasing arrive issues: ordered
  // through narrow-scope edges too (Hb).
  static bool NeedsStrong(AccessKind k) { return k == AccessKind::kWrite || k == AccessKind::kCpAsync; }
  static bool HappensBefore(const Access& a, const Access& b) {
    return Reaches(a, b.clock) || (!NeedsStrong(a.kind) && Reaches(a, b.weak));
  }

  std::string Describe(const Access& x) const {
    static constexpr const char* kWhat[] = {"read (use)", "write", "async-proxy copy write",
                                            "cp.async write", "async-proxy read of a store"};
    std::string s = std::string(kWhat[static_cast<int>(x.kind)]) + " by " +
                    AgentLabel(p_, e_, x.agent) + " at " +
                    pcs_.where(Role(x.agent), x.pc).ToString() + " (bytes ";
    s += x.hi == kWholeSlot ? std::to_string(x.lo) + "..end"
                            : std::to_string(x.lo) + ".." + std::to_string(x.hi - 1);
    return s + ")";
  }

  std::string Missing(const Access& a, const Access& b) const {
    const std::string later = AgentLabel(p_, e_, b.agent);
    switch (a.kind) {
      case AccessKind::kCopyWrite:
        if (!a.delivered) {
          return "the copy's bytes had not landed and no wait on a barrier phase they complete "
                 "happens before the " + std::string(IsCopy(b.kind) ? "issue" : "access");
        }
        return "no wait of " + later + " that observes phase " + std::to_string(a.bar_phase) +
               " of " + BarrierLabel(p_, bars_[a.bar_slot].object, bars_[a.bar_slot].index,
                                     bars_[a.bar_slot].cta) +
               " (on which the copy's bytes complete) happens before the " +
               (IsCopy(b.kind) ? "issue" : "access");
      case AccessKind::kStoreRead:
        return "no cp.async.bulk.wait_group.read of " + AgentLabel(p_, e_, a.agent) +
               " covering the store happens before the " + (IsCopy(b.kind) ? "issue" : "access");
      case AccessKind::kCpAsync:
        return "no cp.async.wait_group / wait_all of " + AgentLabel(p_, e_, a.agent) +
               " covering the copy (or barrier phase its cp.async.mbarrier.arrive lands in) "
               "happens before the " + (IsCopy(b.kind) ? "issue" : "access");
      default:
        return "no release by " + AgentLabel(p_, e_, a.agent) + " after it (arrive, bar.sync, "
               "cluster barrier) reaches " + later + " before the " +
               (IsCopy(b.kind) ? "issue" : "access");
    }
  }

  // The buffer a buffer's bytes belong to (itself unless it `aliases` another).
  uint32_t Root(uint32_t buffer) const {
    for (uint32_t guard = 0; buffer < p_.buffers.size() && guard < p_.buffers.size(); ++guard) {
      const uint32_t up = p_.buffers[buffer].alias_of;
      if (up == ir::BufferDecl::kNoAlias) break;
      buffer = up;
    }
    return buffer;
  }

  void Pairs() {
    // Accesses are compared by CTA shared-memory bytes, so that an access of an `aliases`
    // buffer meets the accesses of the buffer whose bytes it reuses. Per (CTA, root buffer), a
    // sweep over the byte intervals visits only pairs that intersect.
    const bool have_engine_layout = e_.num_ctas() > 0;
    std::map<std::pair<uint32_t, uint32_t>, std::vector<size_t>> by_root;
    for (size_t i = 0; i < accesses_.size(); ++i) {
      Access& x = accesses_[i];
      const uint32_t slot_bytes = x.buffer < p_.buffers.size() && have_engine_layout
                                      ? e_.buffer_slot_bytes(x.buffer)
                                      : 0;
      x.base = x.buffer < p_.buffers.size() && have_engine_layout
                   ? int64_t{e_.buffer_base(x.buffer)} + int64_t{x.slot} * slot_bytes
                   : 0;
      x.end = x.hi == kWholeSlot ? x.base + slot_bytes : x.base + x.hi;
      by_root[{x.cta, x.buffer < p_.buffers.size() ? Root(x.buffer) : x.buffer}].push_back(i);
    }
    std::set<std::tuple<uint32_t, uint32_t, uint32_t, uint32_t, uint32_t, uint32_t>> seen;
    std::vector<std::tuple<size_t, size_t, bool>> races;
    for (auto& [loc, ids] : by_root) {
      std::sort(ids.begin(), ids.end(), [this](size_t x, size_t y) {
        return std::tie(accesses_[x].base, accesses_[x].lo, x) <
               std::tie(accesses_[y].base, accesses_[y].lo, y);
      });
      std::vector<size_t> open;  // intervals that may still intersect later ones
      std::vector<std::pair<size_t, size_t>> pairs;
      for (size_t id : ids) {
        const Access& n = accesses_[id];
        const int64_t lo = n.base + n.lo;
        std::erase_if(open, [&](size_t o) {
          return accesses_[o].end <= lo;
        });
        for (size_t o : open) pairs.emplace_back(std::min(o, id), std::max(o, id));
        open.push_back(id);
      }
      std::sort(pairs.begin(), pairs.end());
      for (const auto& [ia, ib] : pairs) {
        const Access& a = accesses_[ia];
        const Access& b = accesses_[ib];
        if (!IsWrite(a.kind) && !IsWrite(b.kind)) continue;
        if (!IsCopy(a.kind) && !IsCopy(b.kind) && a.agent == b.agent) continue;
        if (!Overlap(a, b)) continue;
        if (HappensBefore(a, b)) continue;
        if (!seen.emplace(Role(a.agent), a.pc, Role(b.agent), b.pc, a.buffer, a.slot).second) {
          continue;
        }
        // Ordered had every narrow release/acquire been .cluster: the scope is the bug.
        races.emplace_back(ia, ib, Reaches(a, b.weak));
      }
    }
    std::sort(races.begin(), races.end(), [this](const auto& x, const auto& y) {
      return std::tie(accesses_[std::get<1>(x)].event, std::get<0>(x)) <
             std::tie(accesses_[std::get<1>(y)].event, std::get<0>(y));
    });
    for (const auto& [ia, ib, narrow] : races) {
      const Access& a = accesses_[ia];
      const Access& b = accesses_[ib];
      auto name = [this](const Access& x) {
        return (x.buffer < p_.buffers.size() ? p_.buffers[x.buffer].name
                                             : std::string("buffer")) +
               "[" + std::to_string(x.slot) + "]";
      };
      // Accesses of two buffers that share bytes (`aliases`) name both; the finding's object is
      // the buffer that owns the bytes (the one not declared as an alias), whatever the order.
      const bool b_owns = b.buffer != a.buffer && b.buffer < p_.buffers.size() &&
                          p_.buffers[b.buffer].alias_of == ir::BufferDecl::kNoAlias;
      const Access& owner = b_owns ? b : a;
      const Access& other = b_owns ? a : b;
      const std::string where =
          name(owner) + (b.buffer != a.buffer ? " (aliased by " + name(other) + ")" : "");
      Finding f;
      f.violation = model::Violation{
          narrow ? model::Code::kReleaseScopeNarrow : model::Code::kDataRace, 0, 0};
      f.message = (narrow ? "" : "data race on ") +
                  where + " of CTA " + std::to_string(a.cta) + ": the " + Describe(b) +
                  " and the " + Describe(a) + " are unordered: " +
                  (narrow ? "the arrive and the wait that link them are in different CTAs, and "
                            "a .cta-scoped release (the default of mbarrier.arrive) or acquire "
                            "(the default of try_wait/test_wait) synchronises only within its "
                            "CTA: write the arrive as `arrive.release.cluster` (and the wait "
                            "as `wait.acquire.cluster`)"
                          : Missing(a, b));
      f.agent = b.agent;
      f.other_agent = a.agent;
      f.cta = a.cta;
      f.object_is_buffer = true;
      f.object = owner.buffer;
      f.index = owner.slot;
      f.pc = b.pc;
      f.where = pcs_.where(Role(b.agent), b.pc);
      f.event = b.event;
      findings_.push_back(std::move(f));
    }
  }

  static constexpr size_t kNone = std::numeric_limits<size_t>::max();

  const ir::Program& p_;
  const engine::Engine& e_;
  std::span<const TraceEvent> trace_;
  PcMap pcs_;
  uint32_t num_agents_ = 0;
  uint32_t cluster_size_ = 1;
  uint32_t width_ = 0;
  std::unordered_map<uint64_t, uint32_t> agent_ids_;
  std::unordered_map<uint64_t, uint32_t> bar_ids_;
  std::vector<BarSlot> bars_;
  std::vector<Hb> clocks_;
  std::vector<Hb> issue_clocks_;
  // The last fence.acq_rel of each agent (a later relaxed arrive releases what it covers).
  struct FenceAt {
    bool seen = false;
    bool cluster = false;
    Hb at;
  };
  std::vector<FenceAt> fence_;
  // Relaxed waits of each agent that a later fence.acq_rel turns into acquires.
  struct PendingAcquire {
    uint32_t cta = 0;
    bool cluster = false;
    PhaseAcc seen;
  };
  std::vector<std::vector<PendingAcquire>> acquire_pending_;
  std::vector<Pending> pending_;
  std::vector<Access> accesses_;
  std::vector<std::vector<size_t>> bulk_open_;              // per agent: uncommitted stores
  std::vector<std::deque<std::vector<size_t>>> bulk_groups_;  // per agent: committed groups
  std::vector<uint32_t> cp_issued_;
  std::vector<std::vector<size_t>> cp_seq_;  // per agent: its cp.async accesses in issue order
  std::vector<std::deque<uint32_t>> cp_groups_;
  std::map<uint64_t, std::deque<CpArrive>> cp_arrives_;
  std::vector<uint32_t> cluster_arrives_;
  std::map<std::pair<uint32_t, uint32_t>, Hb> cluster_acc_;
  std::map<uint64_t, uint32_t> named_gen_;
  std::map<uint64_t, Hb> named_acc_;
  std::map<uint64_t, uint32_t> named_agent_gen_;
  std::vector<Finding> findings_;
};

}  // namespace

std::vector<Finding> CheckRaces(const ir::Program& program, const engine::Engine& engine,
                                std::span<const trace::TraceEvent> trace) {
  return Races(program, engine, trace).Run();
}

}  // namespace parity::verifier
