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

#include "verifier/check_work.h"
#include "verifier/deadlock.h"
#include "verifier/happens_before.h"
#include "verifier/pc_map.h"

namespace parity::verifier {
namespace {

using trace::EventKind;
using trace::TraceEvent;
using Clock = VectorClock;

enum class AccessKind : uint8_t {
  kUse,        // generic read
  kWrite,      // generic write
  kCopyWrite,  // TMA / bulk load, st.async (async proxy)
  kCpAsync,    // cp.async write (generic proxy, asynchronous)
  kStoreRead,  // TMA / bulk store reading its source (async proxy)
  kUseAsync,   // `use.async`: an async-proxy read by the agent (wgmma operands)
};

bool IsWrite(AccessKind k) {
  return k != AccessKind::kUse && k != AccessKind::kStoreRead && k != AccessKind::kUseAsync;
}
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
  uint32_t slot = 0;
  // Bytes [lo, hi) of the slot, as the engine evaluated the operands of this dynamic access.
  // Not known (a trace without the engine's places, Engine::trace_places): the whole slot, or
  // with the slot not known either (an st.async) every slot of the buffer.
  int64_t lo = 0;
  int64_t hi = 0;
  bool range_known = true;
  bool slot_known = true;
  // A `write` or `cp.async` whose operand has no `bytes`: the statement stands for the threads
  // of every agent of its role writing their share of the range (docs/language.md §10), so the
  // accesses of one statement by different agents of the role do not overlap each other.
  bool share = false;
  // A `red` / `atom` (trace::kFlagAtomic): two atomics of the same bytes do not race.
  bool atomic = false;
  // A generic-proxy access whose proxy the schedule states: a `write`, or a `use.generic` read.
  // A plain `use` does not state its proxy (ir::ReadProxy): the cross-proxy rule skips it.
  bool generic_stated = false;
  // The same in CTA shared-memory bytes (Pairs), so that aliases compare.
  int64_t abs_lo = 0;
  int64_t abs_hi = 0;
  size_t event = 0;   // start: the access, or the copy's issue
  // Happens-before at the start (HappensBefore::clock and weak_clock of `agent`): snapshot
  // `snap` of Races::snaps_, whose component of the agent itself is `own` (`own_weak`). An
  // agent's accesses between two of its joins differ only there, so they share one snapshot:
  // the run's memory is a clock per join, not two per access.
  uint32_t snap = 0;
  uint32_t own = 0;
  uint32_t own_weak = 0;
  std::vector<Witness> done;
  // Copy writes: the barrier element the bytes completed on (after delivery).
  bool delivered = false;
  uint32_t bar_slot = 0;
  uint32_t bar_phase = 0;
};

struct Pending {  // a copy in flight to one destination, waiting for its delivery event
  uint32_t agent = 0;  // global issuer
  uint32_t issuer_cta = 0;
  uint32_t pc = 0;
  uint32_t target = 0;  // destination rank
  bool has_bar_index = false;
  uint32_t bar_index = 0;
  uint32_t slot = 0;
  bool place_known = false;  // slot and offset of the bytes (Engine::trace_places)
  uint32_t offset = 0;
  size_t access = 0;
};

struct CpArrive {
  uint32_t bar = 0;
  uint32_t agent = 0;
  uint32_t upto = 0;
};

// A fence.proxy.async by an agent: its witness (observers reaching it are after the fence) and
// the clocks at it (what happens before the fence).
struct ProxyFence {
  size_t event = 0;
  Witness at;
  VectorClock clock;
  VectorClock weak;
};

class Races {
 public:
  Races(const ir::Program& p, const engine::Engine& e, std::span<const TraceEvent> trace,
        RaceScan scan)
      : p_(p), e_(e), trace_(trace), scan_(scan), pcs_(p), hb_(e, trace, &p) {}

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
  uint32_t CtaGlobal(const TraceEvent& ev, uint32_t rank) const { return hb_.CtaGlobal(ev, rank); }
  uint32_t AgentOf(const TraceEvent& ev) const { return hb_.AgentOf(ev); }
  uint32_t Role(uint32_t a) const { return e_.agent_info(a).role; }
  uint32_t Bar(const TraceEvent& ev) { return hb_.SlotOf(ev); }
  // An agent's witness: an observer whose clock has reached the agent's present event.
  Witness Now(uint32_t a) const { return Witness{hb_.AgentComponent(a), hb_.Own(a)}; }
  // A copy's witness: an observer of the completion of the slot's current phase.
  Witness PhaseDone(uint32_t bar) const {
    return Witness{hb_.SlotComponent(bar), hb_.completed(bar) + 1};
  }
  // Where the bytes of event i are, as the engine evaluated its operands; null when this trace
  // is not the engine's own recorded run (then the range is taken whole: never missed).
  const engine::Engine::TracePlace* PlaceOf(size_t i) const {
    return places_ok_ ? &e_.trace_places()[i] : nullptr;
  }

  void Setup() {
    places_ok_ = trace_.data() == e_.trace().data() && trace_.size() <= e_.trace_places().size();
    const uint32_t n = hb_.num_agents();
    bulk_open_.resize(n);
    bulk_groups_.resize(n);
    cp_issued_.assign(n, 0);
    cp_seq_.resize(n);
    cp_groups_.resize(n);
    cp_covered_.resize(n);
    last_snap_.assign(n, kNoSnap);
  }

  void Stamp(Access* x, uint32_t a) {
    const Clock& strong = hb_.clock(a);
    const Clock& weak = hb_.weak_clock(a);
    const uint32_t own = hb_.AgentComponent(a);
    const size_t width = hb_.width();
    x->own = strong[own];
    x->own_weak = weak[own];
    uint32_t& last = last_snap_[a];
    if (last != kNoSnap) {
      const uint32_t* old = &snaps_[size_t{last} * 2 * width];
      bool same = true;
      for (size_t c = 0; c < width && same; ++c) {
        same = c == own || (old[c] == strong[c] && old[width + c] == weak[c]);
      }
      CountWork(width);
      if (same) {
        x->snap = last;
        return;
      }
    }
    last = static_cast<uint32_t>(snaps_.size() / (2 * width));
    snaps_.insert(snaps_.end(), strong.begin(), strong.begin() + static_cast<std::ptrdiff_t>(width));
    snaps_.insert(snaps_.end(), weak.begin(), weak.begin() + static_cast<std::ptrdiff_t>(width));
    x->snap = last;
  }
  // Component `c` of the strong (or weak) clock at access x's start.
  uint32_t ClockAt(const Access& x, uint32_t c, bool weak) const {
    if (c == hb_.AgentComponent(x.agent)) return weak ? x.own_weak : x.own;
    return snaps_[size_t{x.snap} * 2 * hb_.width() + (weak ? hb_.width() : 0) + c];
  }

  size_t Add(Access a) {
    CountWork();
    accesses_.push_back(std::move(a));
    return accesses_.size() - 1;
  }
  Access Generic(size_t i, const TraceEvent& ev, uint32_t a, AccessKind kind) {
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
    x.done.push_back(Now(a));
    return x;
  }

  void OnLoadIssue(size_t i, const TraceEvent& ev, uint32_t a) {
    const ir::Op* op = pcs_.op(Role(a), ev.pc);
    const ir::BufferRef* dst = nullptr;
    bool same = false;
    int64_t mask = -1;
    if (const auto* t = op ? std::get_if<ir::TmaLoad>(op) : nullptr) {
      dst = &t->dst;
      same = ir::SameExpr(p_, t->dst.slot, t->bar.index);
    } else if (const auto* b = op ? std::get_if<ir::BulkLoad>(op) : nullptr) {
      dst = &b->dst;
      same = ir::SameExpr(p_, b->dst.slot, b->bar.index);
    } else {
      return;
    }
    if (ev.flags & trace::kFlagMulticast) mask = static_cast<uint16_t>(ev.value2);
    const engine::Engine::TracePlace* place = PlaceOf(i);
    Access x;
    x.kind = AccessKind::kCopyWrite;
    x.agent = a;
    x.pc = ev.pc;
    x.buffer = dst->buffer;
    x.slot = place ? place->slot : ev.index;
    SetRange(&x, place, ev.value);
    x.event = i;
    Stamp(&x, a);
    Pending c;
    c.agent = a;
    c.issuer_cta = CtaGlobal(ev, ev.cta);
    c.pc = ev.pc;
    c.has_bar_index = same;
    c.bar_index = ev.index;
    c.slot = x.slot;
    c.place_known = place != nullptr;
    c.offset = place ? place->offset : 0;
    for (uint32_t r = 0; r < 16; ++r) {
      if (mask < 0 ? r != ev.target_cta : ((mask >> r) & 1) == 0) continue;
      x.cta = CtaGlobal(ev, r);
      c.target = r;
      c.access = Add(x);
      pending_.push_back(c);
    }
  }

  void OnStAsyncIssue(size_t i, const TraceEvent& ev, uint32_t a) {
    const ir::Op* op = pcs_.op(Role(a), ev.pc);
    const auto* st = op ? std::get_if<ir::StAsync>(op) : nullptr;
    Pending c;
    c.agent = a;
    c.issuer_cta = CtaGlobal(ev, ev.cta);
    c.pc = ev.pc;
    c.target = ev.target_cta;
    c.has_bar_index = true;
    c.bar_index = ev.index;
    c.slot = ev.index;
    c.access = kNone;
    // The event names the barrier element; the engine's place names the buffer slot and offset
    // (without it the slot is known when it is the barrier's index expression, else the access
    // covers every slot of the buffer).
    if (st != nullptr) {
      const engine::Engine::TracePlace* place = PlaceOf(i);
      Access x;
      x.kind = AccessKind::kCopyWrite;
      x.agent = a;
      x.pc = ev.pc;
      x.cta = CtaGlobal(ev, ev.target_cta);
      x.buffer = st->dst.buffer;
      x.slot = place ? place->slot : ev.index;
      x.slot_known = place != nullptr || ir::SameExpr(p_, st->dst.slot, st->bar.index);
      SetRange(&x, place, ev.value);
      x.event = i;
      Stamp(&x, a);
      c.slot = x.slot;
      c.place_known = place != nullptr;
      c.offset = place ? place->offset : 0;
      c.access = Add(std::move(x));
    }
    pending_.push_back(c);
  }

  void OnDelivery(size_t i, const TraceEvent& ev) {
    // A piece of a copy (trace::kFlagPiece) credits bytes only: the copy's write is done when
    // the rest lands, so a read between the two still races with it.
    if (ev.flags & trace::kFlagPiece) return;
    const uint32_t issuer_cta = CtaGlobal(ev, ev.cta);
    size_t first = pending_.size(), exact = pending_.size();
    // A delivery that names its slot (trace::kFlagSlot, or the engine's place with the offset)
    // matches only a copy into those bytes; among equal ones, the oldest.
    const bool named_slot = (ev.flags & trace::kFlagSlot) != 0;
    const engine::Engine::TracePlace* place = PlaceOf(i);
    for (size_t j = 0; j < pending_.size(); ++j) {
      const Pending& c = pending_[j];
      CountWork();
      if (c.issuer_cta != issuer_cta || c.pc != ev.pc || c.target != ev.target_cta) continue;
      if (c.has_bar_index && c.bar_index != ev.index) continue;
      // The engine names the issuer: agents of one role run the same statement.
      if (place != nullptr && place->agent != engine::Engine::kNoPlaceAgent &&
          c.agent != place->agent) {
        continue;
      }
      if (place != nullptr && c.place_known) {
        if (c.slot != place->slot || c.offset != place->offset) continue;
        first = j;
        break;
      }
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
    // The bytes' complete-tx releases nothing of the issuer (HappensBefore): the write is done
    // for the observers of the phase it completes on.
    const uint32_t bar = Bar(ev);
    if (c.access == kNone) return;
    Access& x = accesses_[c.access];
    x.delivered = true;
    x.bar_slot = bar;
    x.bar_phase = hb_.completed(bar);
    x.done.push_back(PhaseDone(bar));
    if (x.range_known) x.hi = x.lo + ev.value;
  }

  // The bytes [offset, offset + bytes) of the place; the whole slot without one.
  static void SetRange(Access* x, const engine::Engine::TracePlace* place, int64_t bytes) {
    x->range_known = place != nullptr;
    x->lo = place ? place->offset : 0;
    x->hi = place ? x->lo + bytes : 0;
  }

  void OnStoreIssue(size_t i, const TraceEvent& ev, uint32_t a, const ir::BufferRef& src) {
    const engine::Engine::TracePlace* place = PlaceOf(i);
    Access x;
    x.kind = AccessKind::kStoreRead;
    x.agent = a;
    x.pc = ev.pc;
    x.cta = CtaGlobal(ev, ev.cta);
    x.buffer = src.buffer;
    x.slot = place ? place->slot : ev.index;
    SetRange(&x, place, ev.value);
    x.event = i;
    Stamp(&x, a);
    bulk_open_[a].push_back(Add(std::move(x)));
  }

  void CpCommit(uint32_t a) { cp_groups_[a].push_back(cp_issued_[a]); }

  // Copies of agent `a` numbered below `upto` are complete for observers reaching `w`. `key`
  // names the witness's source: the agent's own waits (kOwnWaits) or a barrier slot. Along one
  // source the values only grow (the agent's event count, the slot's completed phases) and the
  // covered prefix only extends, so a copy that already has a witness of that source keeps the
  // older, weaker one: any clock reaching the new value reaches the old. Each copy gets at most
  // one witness per source, and the run's work is linear in its copies.
  void CpDone(uint32_t a, uint64_t key, uint32_t upto, Witness w) {
    uint32_t& covered = cp_covered_[a][key];
    const uint32_t end = std::min<uint32_t>(upto, static_cast<uint32_t>(cp_seq_[a].size()));
    for (uint32_t s = covered; s < end; ++s) {
      accesses_[cp_seq_[a][s]].done.push_back(w);
      CountWork();
    }
    covered = std::max(covered, end);
  }

  void Step(size_t i, const TraceEvent& ev) {
    const auto k = static_cast<EventKind>(ev.kind);
    const bool by_agent = ev.agent != trace::kNoAgent;
    const uint32_t a = by_agent ? AgentOf(ev) : kNoFindingAgent;
    if (by_agent && a == kNoFindingAgent) return;
    hb_.Step(ev);  // program order and the synchronisation edges
    switch (k) {
      case EventKind::kArrive:
        if (!by_agent) {  // the deferred arrive of cp.async.mbarrier.arrive lands
          // The oldest of this instruction on this barrier element, of the agent whose arrive
          // the engine landed (agents of one role run the same statement).
          auto& q = cp_arrives_[Key(CtaGlobal(ev, ev.cta), ev.pc)];
          const uint32_t bar = Bar(ev);
          const engine::Engine::TracePlace* place = PlaceOf(i);
          const uint32_t by = place ? place->agent : engine::Engine::kNoPlaceAgent;
          auto it = std::find_if(q.begin(), q.end(), [bar, by](const CpArrive& c) {
            CountWork();
            return c.bar == bar && (by == engine::Engine::kNoPlaceAgent || c.agent == by);
          });
          if (it != q.end()) {
            CpDone(it->agent, bar, it->upto, PhaseDone(bar));
            q.erase(it);
          }
        }
        break;
      case EventKind::kCompleteTx:
        if (!by_agent) OnDelivery(i, ev);  // st.async landing
        break;
      case EventKind::kTmaDeliver:
      case EventKind::kBulkComplete:
        OnDelivery(i, ev);
        break;
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
            CountWork();
            accesses_[x].done.push_back(Now(a));
          }
          groups.pop_front();
        }
        break;
      }
      case EventKind::kCpAsyncIssue: {
        const engine::Engine::TracePlace* place = PlaceOf(i);
        Access x;
        x.kind = AccessKind::kCpAsync;
        x.agent = a;
        x.pc = ev.pc;
        x.cta = CtaGlobal(ev, ev.target_cta);
        x.buffer = ev.object;
        x.slot = ev.index;
        SetRange(&x, place, ev.value);
        const ir::Op* op = pcs_.op(Role(a), ev.pc);
        const auto* cp = op ? std::get_if<ir::CpAsync>(op) : nullptr;
        x.share = cp != nullptr && cp->dst.bytes == ir::kNoExpr;
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
        CpDone(a, kOwnWaits, upto, Now(a));
        break;
      }
      case EventKind::kCpAsyncArrive: {
        const uint32_t bar = Bar(ev);
        cp_arrives_[Key(CtaGlobal(ev, ev.cta), ev.pc)].push_back(
            CpArrive{bar, a, cp_issued_[a]});
        break;
      }
      case EventKind::kUse: {
        const ir::Op* op = pcs_.op(Role(a), ev.pc);
        const auto* u = op ? std::get_if<ir::BufferAccess>(op) : nullptr;
        const ir::ReadProxy proxy = u != nullptr ? u->proxy : ir::ReadProxy::kUnstated;
        Access x = Generic(
            i, ev, a, proxy == ir::ReadProxy::kAsync ? AccessKind::kUseAsync : AccessKind::kUse);
        x.generic_stated = proxy == ir::ReadProxy::kGeneric;
        Add(std::move(x));
        break;
      }
      case EventKind::kWrite: {
        Access x = Generic(i, ev, a, AccessKind::kWrite);
        const ir::Op* op = pcs_.op(Role(a), ev.pc);
        const auto* w = op ? std::get_if<ir::BufferAccess>(op) : nullptr;
        x.share = w != nullptr && w->buf.bytes == ir::kNoExpr;
        x.atomic = w != nullptr ? w->atomic : (ev.flags & trace::kFlagAtomic) != 0;
        x.generic_stated = true;
        Add(std::move(x));
        break;
      }
      case EventKind::kFence:
        if (by_agent && ev.object == static_cast<uint16_t>(ir::Fence::Kind::kProxyAsync)) {
          fences_.push_back(ProxyFence{i, Now(a), hb_.clock(a), hb_.weak_clock(a)});
        }
        break;
      default:
        break;
    }
  }

  // Ranges in CTA shared-memory bytes (Access::abs_lo/abs_hi), so that aliases compare; an
  // unknown range is the whole slot (or buffer) and so overlaps every access of it.
  static bool Overlap(const Access& a, const Access& b) {
    return a.abs_lo < b.abs_hi && b.abs_lo < a.abs_hi;
  }

  // Whether b's start (its strong clock, or its weak one) reaches a witness of a.
  bool Reaches(const Access& a, const Access& b, bool weak) const {
    for (const Witness& w : a.done) {
      CountWork();
      if (ClockAt(b, w.component, weak) >= w.value) return true;
    }
    return false;
  }
  // Generic-proxy writes (st.shared, DSMEM st.shared::cluster, cp.async) need PTX's
  // happens-before to be ordered before another CTA's access: their visibility beyond the CTA is
  // what a .cluster release provides. A read, and an async-proxy copy write whose completion the
  // chain observed on its barrier phase, is done when the releasing arrive issues: ordered
  // through narrow-scope edges too (HappensBefore::weak_clock).
  static bool NeedsStrong(AccessKind k) {
    return k == AccessKind::kWrite || k == AccessKind::kCpAsync;
  }
  bool Ordered(const Access& a, const Access& b) const {
    return Reaches(a, b, false) || (!NeedsStrong(a.kind) && Reaches(a, b, true));
  }

  // PTX ISA (Memory Consistency Model, proxies; the async proxy): "Accessing the same memory
  // location across multiple proxies needs a cross-proxy fence. For the async proxy,
  // fence.proxy.async should be used to synchronize memory between generic proxy and the async
  // proxy." Whether a fence.proxy.async lies on the happens-before path from generic access `a`
  // to async-proxy access `b`: a fence that `a` happens before and that happens before `b`'s
  // start, by any agent the path runs through — the generic accessor after its access (CUTLASS
  // fence_view_async_shared before a consumer_release) or the copy's issuer after the wait that
  // acquires the release (DeepEP PR #642).
  bool Fenced(const Access& a, const Access& b) const {
    auto first = std::upper_bound(fences_.begin(), fences_.end(), a.event,
                                  [](size_t e, const ProxyFence& f) { return e < f.event; });
    auto reaches = [&a](const Clock& clock) {
      for (const Witness& w : a.done) {
        if (clock[w.component] >= w.value) return true;
      }
      return false;
    };
    for (auto f = first; f != fences_.end() && f->event < b.event; ++f) {
      const bool after_a = reaches(f->clock) || (!NeedsStrong(a.kind) && reaches(f->weak));
      if (!after_a) continue;
      if (ClockAt(b, f->at.component, false) >= f->at.value ||
          ClockAt(b, f->at.component, true) >= f->at.value) {
        return true;
      }
    }
    return false;
  }

  // The cross-proxy pairs of one (CTA, root buffer), `ids` in start order: a generic access
  // whose proxy is stated (a `write`, a `use.generic` read) ordered before an overlapping
  // async-proxy access that is a TMA / bulk / st.async write (write-after-read and
  // write-after-write: DeepEP #621) or a `use.async` read of written bytes, with no
  // fence.proxy.async on the path between them. A TMA / bulk store's source read is P2006 of
  // rules.cc; an unordered pair is a race (P2009); a plain `use` states no proxy.
  void CrossProxy(const std::vector<size_t>& ids,
                  std::vector<std::pair<size_t, size_t>>* out,
                  std::set<std::tuple<uint32_t, uint32_t, uint32_t, uint32_t, uint32_t,
                                      uint32_t>>* seen) const {
    std::map<uint32_t, std::vector<size_t>> generic;  // by agent, in start order
    for (size_t id : ids) {
      if (accesses_[id].generic_stated) generic[accesses_[id].agent].push_back(id);
    }
    if (generic.empty()) return;
    for (size_t ib : ids) {
      const Access& b = accesses_[ib];
      if (b.kind != AccessKind::kCopyWrite && b.kind != AccessKind::kUseAsync) continue;
      for (const auto& [agent, list] : generic) {
        for (auto it = list.begin(); it != list.end() && *it < ib; ++it) {
          const size_t ia = *it;
          const Access& a = accesses_[ia];
          if (a.event >= b.event) continue;
          if (b.kind == AccessKind::kUseAsync && !IsWrite(a.kind)) continue;
          if (!Overlap(a, b) || !Ordered(a, b) || Fenced(a, b)) continue;
          if (seen->emplace(Role(a.agent), a.pc, Role(b.agent), b.pc, a.buffer, a.slot).second) {
            out->emplace_back(ia, ib);
          }
        }
      }
    }
  }

  std::string Describe(const Access& x) const {
    static constexpr const char* kWhat[] = {"read (use)", "write", "async-proxy copy write",
                                            "cp.async write", "async-proxy read of a store",
                                            "async-proxy read (use.async)"};
    const char* what = x.atomic ? "atomic read-modify-write (red/atom)"
                       : x.kind == AccessKind::kUse && x.generic_stated
                           ? "generic-proxy read (use.generic)"
                           : kWhat[static_cast<int>(x.kind)];
    std::string s = std::string(what) + " by " +
                    AgentLabel(p_, e_, x.agent) + " at " +
                    pcs_.where(Role(x.agent), x.pc).ToString() + " (bytes ";
    if (!x.slot_known) return s + "of some slot of the buffer: not recorded)";
    if (!x.range_known) return s + "of the slot: not recorded)";
    s += std::to_string(x.lo) + ".." + std::to_string(x.hi - 1);
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
               " of " + BarrierLabel(p_, hb_.slot_object(a.bar_slot), hb_.slot_index(a.bar_slot),
                                     hb_.slot_cta(a.bar_slot)) +
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
      const bool declared = x.buffer < p_.buffers.size() && have_engine_layout;
      const int64_t slot_bytes = declared ? e_.buffer_slot_bytes(x.buffer) : 0;
      const int64_t buffer_base = declared ? e_.buffer_base(x.buffer) : 0;
      if (!declared) {  // no layout: each slot its own 2^32 bytes
        const int64_t base = x.slot_known ? int64_t{x.slot} << 32 : 0;
        x.abs_lo = base + (x.range_known ? x.lo : 0);
        x.abs_hi = x.slot_known ? base + (x.range_known ? x.hi : int64_t{1} << 32)
                                : std::numeric_limits<int64_t>::max();
      } else if (!x.slot_known) {
        x.abs_lo = buffer_base;
        x.abs_hi = buffer_base + slot_bytes * e_.buffer_stages(x.buffer);
      } else {
        const int64_t base = buffer_base + int64_t{x.slot} * slot_bytes;
        x.abs_lo = base + (x.range_known ? x.lo : 0);
        x.abs_hi = base + (x.range_known ? x.hi : slot_bytes);
      }
      by_root[{x.cta, declared ? Root(x.buffer) : x.buffer}].push_back(i);
    }
    std::set<std::tuple<uint32_t, uint32_t, uint32_t, uint32_t, uint32_t, uint32_t>> seen;
    std::set<std::tuple<uint32_t, uint32_t, uint32_t, uint32_t, uint32_t, uint32_t>> seen_proxy;
    // (earlier, later, what): 0 a race, 1 a race through a release/acquire pair too narrow in
    // scope (P2013), 2 a cross-proxy pair without fence.proxy.async (P2006).
    std::vector<std::tuple<size_t, size_t, uint8_t>> races;
    std::vector<std::pair<size_t, size_t>> proxies;
    // The pairs of one (CTA, root buffer), in (earlier, later) order: the first racing pair of
    // each pair of statements is the one reported.
    auto consider = [&](size_t ia, size_t ib) {
      const Access& a = accesses_[ia];
      const Access& b = accesses_[ib];
      CountWork();
      if (!IsWrite(a.kind) && !IsWrite(b.kind)) return;
      if (!IsCopy(a.kind) && !IsCopy(b.kind) && a.agent == b.agent) return;
      if (!Overlap(a, b)) return;
      // Atomic read-modify-writes (red/atom, .gpu scope by default) are morally strong with
      // each other: PTX ISA, Memory Consistency Model, "Data races" needs a pair that is not
      // morally strong. An atomic against a plain access or a copy is an ordinary conflict.
      if (a.atomic && b.atomic) return;
      if (a.share && b.share && a.pc == b.pc && a.agent != b.agent &&
          Role(a.agent) == Role(b.agent)) {
        return;  // two agents' shares of one statement's range
      }
      if (Ordered(a, b)) return;
      if (!seen.emplace(Role(a.agent), a.pc, Role(b.agent), b.pc, a.buffer, a.slot).second) {
        return;
      }
      // Ordered had every narrow release/acquire been .cluster: the scope is the bug.
      races.emplace_back(ia, ib, Reaches(a, b, true) ? 1 : 0);
    };
    for (auto& [loc, ids] : by_root) {
      std::sort(ids.begin(), ids.end());
      CrossProxy(ids, &proxies, &seen_proxy);
      if (scan_ == RaceScan::kAllPairs) {
        // The reference: a sweep over the byte intervals lists every pair that intersects.
        std::sort(ids.begin(), ids.end(), [this](size_t x, size_t y) {
          return std::tie(accesses_[x].abs_lo, x) < std::tie(accesses_[y].abs_lo, y);
        });
        std::vector<size_t> open;  // intervals that may still intersect later ones
        std::vector<std::pair<size_t, size_t>> pairs;
        for (size_t id : ids) {
          const int64_t lo = accesses_[id].abs_lo;
          CountWork(open.size());
          std::erase_if(open, [&](size_t o) { return accesses_[o].abs_hi <= lo; });
          for (size_t o : open) pairs.emplace_back(std::min(o, id), std::max(o, id));
          open.push_back(id);
        }
        std::sort(pairs.begin(), pairs.end());
        for (const auto& [ia, ib] : pairs) consider(ia, ib);
        continue;
      }
      // Per issuing agent, its accesses here in start order. Along them the clocks of the
      // starts only grow (an agent's clock at its events, a copy's is its issuer's at the
      // issue), so an access `a` is ordered before all of one agent's later accesses from some
      // point on, and unordered with those before it: a binary search finds that point, and
      // only the unordered ones are looked at. A run whose accesses are all ordered costs
      // O(n * agents * log n) instead of one test per overlapping pair.
      std::sort(ids.begin(), ids.end());
      std::map<uint32_t, std::vector<size_t>> by_agent;
      for (size_t id : ids) by_agent[accesses_[id].agent].push_back(id);
      std::vector<size_t> unordered;
      for (size_t ia : ids) {
        const Access& a = accesses_[ia];
        unordered.clear();
        for (const auto& [g, list] : by_agent) {
          CountWork();
          const auto first = std::upper_bound(list.begin(), list.end(), ia);
          const auto end = std::partition_point(
              first, list.end(), [&](size_t ib) { return !Ordered(a, accesses_[ib]); });
          unordered.insert(unordered.end(), first, end);
        }
        std::sort(unordered.begin(), unordered.end());
        for (size_t ib : unordered) consider(ia, ib);
      }
    }
    for (const auto& [ia, ib] : proxies) races.emplace_back(ia, ib, 2);
    std::sort(races.begin(), races.end(), [this](const auto& x, const auto& y) {
      return std::tie(accesses_[std::get<1>(x)].event, std::get<0>(x)) <
             std::tie(accesses_[std::get<1>(y)].event, std::get<0>(y));
    });
    for (const auto& [ia, ib, what] : races) {
      const bool narrow = what == 1;
      const Access& a = accesses_[ia];
      const Access& b = accesses_[ib];
      const size_t read_out = narrow ? ReadOutBefore(a, b) : kNone;
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
          what == 2 ? model::Code::kProxyFenceMissing
                    : narrow ? model::Code::kReleaseScopeNarrow : model::Code::kDataRace,
          0, 0};
      if (what == 2) {
        f.message = where + " of CTA " + std::to_string(a.cta) + ": the " + Describe(b) +
                    " follows the " + Describe(a) +
                    " through another proxy, and no fence.proxy.async lies on the "
                    "happens-before path between them (in the generic accessor after the "
                    "access, or in the issuer before the copy): the async proxy may see the "
                    "bytes before the generic access is done";
      } else {
        f.message = (narrow ? "" : "data race on ") + where + " of CTA " + std::to_string(a.cta) +
                  ": the " + Describe(b) + " and the " + Describe(a) + " are unordered: " +
                  (narrow ? "the arrive and the wait that link them are in different CTAs, and "
                            "a .cta-scoped release (the default of mbarrier.arrive) or acquire "
                            "(the default of try_wait/test_wait) synchronises only within its "
                            "CTA: write the arrive as `arrive.release.cluster` (and the wait "
                            "as `wait.acquire.cluster`)"
                          : Missing(a, b)) +
                  (read_out == kNone
                       ? ""
                       : std::string(" (a warning, an error under --strict: the write's "
                                     "bytes were read out by the ") +
                             Describe(accesses_[read_out]) +
                             ", whose completion is ordered before the release: the write is "
                             "performed before it; only PTX's scope rule leaves the pair "
                             "unordered, docs/levels.md L1)");
      f.strict_only = read_out != kNone;
      }
      f.agent = b.agent;
      f.other_agent = a.agent;
      f.other_pc = a.pc;
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
  static constexpr uint32_t kNoSnap = std::numeric_limits<uint32_t>::max();
  // CpDone's source key of an agent's own cp.async.wait_group / wait_all (slots are below it).
  static constexpr uint64_t kOwnWaits = std::numeric_limits<uint64_t>::max();

  // docs/levels.md, rule L1: a P2013 pair whose earlier access is a generic write of the CTA's
  // shared memory every byte of which an asynchronous read (a TMA / bulk store's source read)
  // read after it (happens-before: the write was fenced for that read, P2006 says so if not)
  // and whose completion (cp.async.bulk.wait_group[.read]) reaches the later access through the
  // narrow-scope chain. The write is then performed in shared memory before the release (another
  // unit has read it out), so only the scope rule of the formal model leaves the pair unordered:
  // the epilogue-reuse handoff of inclusionAI/humming PR #56 (TMA store, bulk.wait 0 read, then
  // ClusterBarrier::arrive(cta_id) at its default .cta scope), validated on H100 and H200.
  // Returns that read's access, or kNone.
  size_t ReadOutBefore(const Access& a, const Access& b) const {
    if (a.kind != AccessKind::kWrite || !a.range_known) return kNone;
    for (size_t i = 0; i < accesses_.size(); ++i) {
      const Access& r = accesses_[i];
      if (r.kind != AccessKind::kStoreRead || r.cta != a.cta || !r.range_known) continue;
      if (r.abs_lo > a.abs_lo || a.abs_hi > r.abs_hi) continue;
      if (Reaches(a, r, false) && Reaches(r, b, true)) return i;
    }
    return kNone;
  }

  const ir::Program& p_;
  const engine::Engine& e_;
  std::span<const TraceEvent> trace_;
  RaceScan scan_;
  PcMap pcs_;
  verifier::HappensBefore hb_;
  std::vector<Pending> pending_;
  // A deque: the run's largest store grows without a reallocation's copy beside it.
  std::deque<Access> accesses_;
  std::vector<std::vector<size_t>> bulk_open_;              // per agent: uncommitted stores
  std::vector<std::deque<std::vector<size_t>>> bulk_groups_;  // per agent: committed groups
  std::vector<uint32_t> cp_issued_;
  std::vector<std::vector<size_t>> cp_seq_;  // per agent: its cp.async accesses in issue order
  std::vector<std::deque<uint32_t>> cp_groups_;
  std::map<uint64_t, std::deque<CpArrive>> cp_arrives_;
  std::vector<ProxyFence> fences_;  // every fence.proxy.async, in trace order
  // Per agent, per witness source (a barrier slot, or kOwnWaits): its cp.async copies below
  // this number already have a witness of that source (CpDone).
  std::vector<std::unordered_map<uint64_t, uint32_t>> cp_covered_;
  // Clock snapshots (Access::snap): per snapshot the strong, then the weak clock, width() each.
  std::vector<uint32_t> snaps_;
  std::vector<uint32_t> last_snap_;  // per agent: its newest snapshot, or kNoSnap
  std::vector<Finding> findings_;
  bool places_ok_ = false;
};

}  // namespace

std::vector<Finding> CheckRaces(const ir::Program& program, const engine::Engine& engine,
                                std::span<const trace::TraceEvent> trace, RaceScan scan) {
  return Races(program, engine, trace, scan).Run();
}

}  // namespace parity::verifier
