#include "verifier/lifetime.h"

#include <algorithm>
#include <deque>
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

// An access to a CTA's shared memory or mbarrier by something other than that CTA's agents'
// own synchronous operations.
struct Access {
  bool copy = false;     // a delivery of a load / st.async / deferred arrive (no issuer witness)
  bool counted = false;  // counts in a phase of the target's barrier `slot`
  bool read = false;     // a DSMEM read: done when an ordinary release after it issues
  uint32_t agent = 0;    // the agent (the issuer of a copy)
  uint32_t pc = 0;       // its statement (the issue of a copy)
  uint32_t target = 0;   // global CTA touched
  uint32_t object = 0;   // barrier (or buffer, for a DSMEM access) declaration and element
  uint32_t index = 0;
  uint32_t slot = 0;     // HappensBefore slot of the barrier (counted accesses)
  uint32_t phase = 0;    // the phase of `slot` it counts in
  size_t event = 0;
  uint32_t epoch = 0;    // the issuer's own component at the access (agents' accesses)
  EventKind kind = EventKind::kArrive;
};

// A wait (or successful test_wait), of any semantics and scope, that observed `count` completed
// phases of `slot` when it returned.
struct Observation {
  uint32_t agent = 0;
  uint32_t epoch = 0;
  uint32_t count = 0;
};

struct Issue {  // a load or st.async in flight to one destination, until its delivery event
  uint32_t agent = 0;
  uint32_t issuer_cta = 0;
  uint32_t pc = 0;
  uint32_t target = 0;  // destination rank
  bool has_bar_index = false;
  uint32_t bar_index = 0;
};

struct CpArrive {  // a cp.async.mbarrier.arrive whose arrive-on has not landed yet
  uint32_t slot = 0;
  uint32_t agent = 0;
};

class Lifetime {
 public:
  Lifetime(const ir::Program& p, const engine::Engine& e, std::span<const TraceEvent> trace)
      : p_(p),
        e_(e),
        trace_(trace),
        pcs_(p),
        hb_(e, trace, &p),
        seen_(e, trace, &p, HappensBefore::Mode::kCausal) {}

  std::vector<Finding> Run() {
    const uint32_t n = hb_.num_agents();
    for (uint32_t a = 0; a < n; ++a) members_[e_.agent_info(a).cta_global].push_back(a);
    exit_strong_.resize(n);
    exit_weak_.resize(n);
    exited_.assign(n, false);
    for (size_t i = 0; i < trace_.size(); ++i) Step(i, trace_[i]);
    Check();
    return std::move(findings_);
  }

 private:
  static uint64_t Key(uint64_t a, uint64_t b) { return (a << 32) | b; }
  uint32_t CtaGlobal(const TraceEvent& ev, uint32_t rank) const { return hb_.CtaGlobal(ev, rank); }
  uint32_t Role(uint32_t a) const { return e_.agent_info(a).role; }
  // The agent that issued the asynchronous operation event i completes, as the engine recorded
  // it (Engine::TracePlace::agent); kNoPlaceAgent for a trace that is not the engine's own run.
  uint32_t IssuerOf(size_t i) const {
    const bool own = trace_.data() == e_.trace().data() && i < e_.trace_places().size();
    return own ? e_.trace_places()[i].agent : engine::Engine::kNoPlaceAgent;
  }

  Access Base(size_t i, const TraceEvent& ev, uint32_t a) const {
    Access x;
    x.agent = a;
    x.pc = ev.pc;
    x.target = CtaGlobal(ev, ev.target_cta);
    x.object = ev.object;
    x.index = ev.index;
    x.event = i;
    x.kind = static_cast<EventKind>(ev.kind);
    return x;
  }

  // An agent's arrive / expect_tx / complete_tx on a barrier of another CTA.
  void Update(size_t i, const TraceEvent& ev, uint32_t a) {
    if (CtaGlobal(ev, ev.target_cta) == e_.agent_info(a).cta_global) return;
    Access x = Base(i, ev, a);
    x.counted = true;
    x.slot = hb_.SlotOf(ev);
    x.phase = hb_.completed(x.slot);
    x.epoch = hb_.Own(a);
    accesses_.push_back(x);
  }

  // The asynchronous access of a copy's delivery (or a deferred arrive's landing) on `slot`: it
  // counts in the slot's current phase (and releases nothing of the issuer: happens_before.h).
  void Landed(size_t i, const TraceEvent& ev, uint32_t issuer, uint32_t pc, EventKind kind) {
    const uint32_t slot = hb_.SlotOf(ev);
    Access x = Base(i, ev, issuer);
    x.copy = true;
    x.counted = true;
    x.pc = pc;
    x.slot = slot;
    x.phase = hb_.completed(slot);
    x.kind = kind;
    accesses_.push_back(x);
  }

  void OnIssue(const TraceEvent& ev, uint32_t a, int64_t mask, bool has_bar_index) {
    Issue c;
    c.agent = a;
    c.issuer_cta = CtaGlobal(ev, ev.cta);
    c.pc = ev.pc;
    c.has_bar_index = has_bar_index;
    c.bar_index = ev.index;
    for (uint32_t r = 0; r < 16; ++r) {
      if (mask < 0 ? r != ev.target_cta : ((mask >> r) & 1) == 0) continue;
      c.target = r;
      pending_.push_back(c);
    }
  }

  // A load's or st.async's bytes land (complete_tx on the destination's barrier): the oldest
  // matching copy in flight of that statement to that CTA.
  void OnDelivery(size_t i, const TraceEvent& ev) {
    if (ev.flags & trace::kFlagPiece) return;  // the copy lands with its last piece
    const uint32_t issuer_cta = CtaGlobal(ev, ev.cta);
    const uint32_t by = IssuerOf(i);
    auto it = std::find_if(pending_.begin(), pending_.end(), [&](const Issue& c) {
      CountWork();
      return c.issuer_cta == issuer_cta && c.pc == ev.pc && c.target == ev.target_cta &&
             (!c.has_bar_index || c.bar_index == ev.index) &&
             (by == engine::Engine::kNoPlaceAgent || c.agent == by);
    });
    if (it == pending_.end()) return;
    const Issue c = std::move(*it);
    pending_.erase(it);
    Landed(i, ev, c.agent, c.pc, static_cast<EventKind>(ev.kind));
  }

  void Observe(const TraceEvent& ev, uint32_t a) {
    // As HappensBefore::Observe names the phase: the last completed one with the waited parity,
    // or (stale) the one before; a parity wait passing on a fresh barrier observes nothing.
    const uint32_t slot = hb_.SlotOf(ev);
    const uint32_t done = hb_.completed(slot);
    uint32_t count = 0;
    if (done >= 1 && ((done - 1) & 1) == ev.parity) {
      count = done;
    } else if (done >= 2) {
      count = done - 1;
    }
    if (count > 0) observed_[slot].push_back(Observation{a, hb_.Own(a), count});
  }

  void Step(size_t i, const TraceEvent& ev) {
    const auto k = static_cast<EventKind>(ev.kind);
    const bool by_agent = ev.agent != trace::kNoAgent;
    const uint32_t a = by_agent ? hb_.AgentOf(ev) : HappensBefore::kNone;
    if (by_agent && a == HappensBefore::kNone) return;
    hb_.Step(ev);  // program order and the synchronisation edges, as the race checker has them
    seen_.Step(ev);
    switch (k) {
      case EventKind::kArrive:
        if (by_agent) {
          Update(i, ev, a);
        } else {  // the deferred arrive of cp.async.mbarrier.arrive lands
          auto& q = cp_arrives_[Key(CtaGlobal(ev, ev.cta), ev.pc)];
          const uint32_t slot = hb_.SlotOf(ev);
          const uint32_t by = IssuerOf(i);
          auto it = std::find_if(q.begin(), q.end(), [slot, by](const CpArrive& c) {
            CountWork();
            return c.slot == slot && (by == engine::Engine::kNoPlaceAgent || c.agent == by);
          });
          if (it != q.end()) {
            const CpArrive c = std::move(*it);
            q.erase(it);
            Landed(i, ev, c.agent, ev.pc, EventKind::kCpAsyncArrive);
          }
        }
        break;
      case EventKind::kArriveExpectTx:
      case EventKind::kExpectTx:
        if (by_agent) Update(i, ev, a);
        break;
      case EventKind::kCompleteTx:
        if (by_agent) {
          Update(i, ev, a);
        } else {
          OnDelivery(i, ev);  // st.async landing
        }
        break;
      case EventKind::kTmaDeliver:
      case EventKind::kBulkComplete:
        OnDelivery(i, ev);
        break;
      case EventKind::kCpAsyncArrive:
        cp_arrives_[Key(CtaGlobal(ev, ev.cta), ev.pc)].push_back(
            CpArrive{hb_.SlotOf(ev), a});
        break;
      case EventKind::kWaitEnd:
        if (by_agent) Observe(ev, a);
        break;
      case EventKind::kTestWait:
        if (by_agent && ev.value == 1) Observe(ev, a);
        break;
      case EventKind::kTmaIssue: {
        const ir::Op* op = pcs_.op(Role(a), ev.pc);
        if (op == nullptr || !std::holds_alternative<ir::TmaLoad>(*op)) break;
        OnIssue(ev, a, (ev.flags & trace::kFlagMulticast) ? static_cast<uint16_t>(ev.value2) : -1,
                false);
        break;
      }
      case EventKind::kBulkIssue: {
        const ir::Op* op = pcs_.op(Role(a), ev.pc);
        if (op == nullptr || !std::holds_alternative<ir::BulkLoad>(*op)) break;
        OnIssue(ev, a, (ev.flags & trace::kFlagMulticast) ? static_cast<uint16_t>(ev.value2) : -1,
                false);
        break;
      }
      case EventKind::kStAsync:
        OnIssue(ev, a, -1, true);
        break;
      case EventKind::kUse:
      case EventKind::kWrite:
        // A DSMEM access (mapa + ld/st.shared::cluster) of a peer's shared memory.
        if (by_agent && CtaGlobal(ev, ev.target_cta) != e_.agent_info(a).cta_global) {
          Access x = Base(i, ev, a);
          x.read = k == EventKind::kUse;
          x.epoch = hb_.Own(a);
          accesses_.push_back(x);
          if (!Started(x.target, a)) ReportBeforeStart(x);
        }
        break;
      case EventKind::kExit:
        exited_[a] = true;
        exit_strong_[a] = hb_.clock(a);
        exit_weak_[a] = hb_.weak_clock(a);
        break;
      default:
        break;
    }
  }

  // Whether agent a has observed, through any synchronisation, an operation of an agent of
  // global CTA `cta`: only then is that CTA known to have started (P2030). The check reads one
  // run and does not depend on its order, for the reason P2010's does (lifetime.h): the events
  // the access does not observe can all run after it.
  bool Started(uint32_t cta, uint32_t a) const {
    auto m = members_.find(cta);
    if (m == members_.end()) return false;
    const VectorClock& c = seen_.clock(a);
    for (uint32_t y : m->second) {
      if (c[seen_.AgentComponent(y)] > 0) return true;
    }
    return false;
  }

  void ReportBeforeStart(const Access& x) {
    if (!started_seen_.emplace(x.target, Role(x.agent), x.pc).second) return;
    const std::string cta = "CTA " + std::to_string(x.target);
    Finding f;
    f.violation = model::Violation{model::Code::kDsmemBeforeStart,
                                   static_cast<int64_t>(x.target), 0};
    f.message = "the " + std::string(What(x)) + " " + p_.buffers[x.object].name + "[" +
                std::to_string(x.index) + "] of " + cta + " by " + AgentLabel(p_, e_, x.agent) +
                " at " + pcs_.where(Role(x.agent), x.pc).ToString() +
                " may run before " + cta + " started: nothing it observed (a cluster barrier, "
                "a barrier phase, a named barrier) comes after an operation of " + cta +
                " (a cluster.sync before the first DSMEM access proves every CTA started)";
    f.object_is_buffer = true;
    f.agent = x.agent;
    f.cta = x.target;
    f.object = x.object;
    f.index = x.index;
    f.pc = x.pc;
    f.where = pcs_.where(Role(x.agent), x.pc);
    f.event = x.event;
    findings_.push_back(std::move(f));
  }

  // How an access stands with respect to the exit of agent y of its target CTA.
  enum class Order { kNone, kScopeOnly, kOrdered };

  Order OrderedBefore(const Access& x, uint32_t y) const {
    // The access's own effect on the barrier, observed: a wait of y's CTA saw the phase it
    // counts in complete (any semantics: reading the barrier's state is coherence on the
    // barrier, not an acquire), and that wait happens before y's exit.
    if (x.counted && SeenByExit(x.slot, y) > x.phase) return Order::kOrdered;
    if (x.copy) return Order::kNone;  // nothing of the issuer orders where its bytes land
    // The agent's own operation, through happens-before: a release after it whose scope
    // includes the target CTA (a .release.cluster arrive, a non-relaxed barrier.cluster.arrive,
    // a fence.acq_rel.cluster before a relaxed one) reaching the exit. A DSMEM read is done
    // when a release of any scope after it issues (HappensBefore::weak_clock).
    const uint32_t c = hb_.AgentComponent(x.agent);
    if (exit_strong_[y][c] >= x.epoch) return Order::kOrdered;
    if (exit_weak_[y][c] >= x.epoch) return x.read ? Order::kOrdered : Order::kScopeOnly;
    return Order::kNone;
  }

  // The most completed phases of `slot` that a wait happening before y's exit observed (0:
  // none). Computed once per (slot, exiting agent): an access is then one lookup, not a pass
  // over the slot's observations (which grow with the run).
  uint32_t SeenByExit(uint32_t slot, uint32_t y) const {
    auto [cached, fresh] = seen_by_exit_.try_emplace(Key(slot, y), 0);
    if (!fresh) return cached->second;
    auto it = observed_.find(slot);
    if (it == observed_.end()) return 0;
    uint32_t most = 0;
    for (const Observation& o : it->second) {
      CountWork();
      if (exit_strong_[y][hb_.AgentComponent(o.agent)] >= o.epoch) most = std::max(most, o.count);
    }
    cached->second = most;
    return most;
  }

  static const char* What(const Access& x) {
    switch (x.kind) {
      case EventKind::kArrive: return "arrive on";
      case EventKind::kArriveExpectTx: return "arrive.expect_tx on";
      case EventKind::kExpectTx: return "expect_tx on";
      case EventKind::kCompleteTx: return x.copy ? "st.async into" : "complete_tx on";
      case EventKind::kBulkComplete: return "bulk load into";
      case EventKind::kCpAsyncArrive: return "cp.async.mbarrier.arrive landing in";
      case EventKind::kUse: return "DSMEM read of";
      case EventKind::kWrite: return "DSMEM write to";
      default: return "TMA load into";
    }
  }

  void Check() {
    // The agents of each global CTA, and whether all of them exited in this run.
    std::map<uint32_t, std::vector<uint32_t>> members;
    for (uint32_t a = 0; a < hb_.num_agents(); ++a) {
      members[e_.agent_info(a).cta_global].push_back(a);
    }
    std::set<std::tuple<int, uint32_t, uint32_t, uint32_t, uint32_t>> seen;
    for (const Access& x : accesses_) {
      auto m = members.find(x.target);
      if (m == members.end()) continue;
      bool all_exited = true, scope_only = false;
      Order best = Order::kNone;
      uint32_t last_exit = kNoFindingAgent;
      for (uint32_t y : m->second) {
        CountWork();
        if (!exited_[y]) {
          all_exited = false;
          break;
        }
        const Order o = OrderedBefore(x, y);
        best = std::max(best, o);
        scope_only |= o == Order::kScopeOnly;
        last_exit = y;
      }
      if (!all_exited || best == Order::kOrdered) continue;
      const bool own = e_.agent_info(x.agent).cta_global == x.target;
      const model::Code code =
          own && x.copy ? model::Code::kExitWithCopyInFlight : model::Code::kAccessAfterExit;
      const bool dsmem = x.kind == EventKind::kUse || x.kind == EventKind::kWrite;
      if (!seen.emplace(static_cast<int>(code), x.target, Role(x.agent), x.pc,
                        x.object | (dsmem ? 0x80000000u : 0u))
               .second) {
        continue;
      }
      findings_.push_back(Describe(x, code, scope_only, last_exit));
    }
  }

  Finding Describe(const Access& x, model::Code code, bool scope_only, uint32_t last_exit) const {
    const std::string cta = "CTA " + std::to_string(x.target);
    const bool dsmem = x.kind == EventKind::kUse || x.kind == EventKind::kWrite;
    const std::string obj = dsmem ? p_.buffers[x.object].name + "[" + std::to_string(x.index) +
                                        "] of " + cta
                                  : BarrierLabel(p_, x.object, x.index, x.target);
    const std::string who = AgentLabel(p_, e_, x.agent);
    const std::string at = pcs_.where(Role(x.agent), x.pc).ToString();
    Finding f;
    f.violation = model::Violation{code, static_cast<int64_t>(x.target), 0};
    if (code == model::Code::kExitWithCopyInFlight) {
      f.message = "the " + std::string(What(x)) + " " + cta + " issued by " + who + " at " + at +
                  " (completing on " + obj + ") is not waited for by any agent of " + cta +
                  " before it exits: no wait observes the phase its bytes complete in, so " + cta +
                  " can exit while the bytes are still landing in its shared memory";
    } else if (x.copy) {
      f.message = "the " + std::string(What(x)) + " " + cta + " issued by " + who + " at " + at +
                  " (completing on " + obj + ") may land after " + cta + " exited: no agent of " +
                  cta + " observes the phase its bytes complete in before exiting (a cluster "
                  "barrier does not wait for copies in flight: wait for the bytes in " + cta + ")";
    } else {
      f.message = "the " + std::string(What(x)) + " " + obj + " by " + who + " at " + at +
                  " may happen after " + cta + " exited: no agent of " + cta + " observes it (" +
                  (x.counted ? "a wait on a phase it counts in, or " : "") + "a release after it" +
                  (x.read ? "" : " with .cluster scope") +
                  ", such as a closing cluster barrier, acquired in " + cta + ") before exiting";
      f.message += scope_only
                       ? "; it is ordered only through a .cta-scoped release or acquire between "
                         "CTAs, which orders nothing across CTAs (write .release.cluster / "
                         ".acquire.cluster)"
                       : " (add a closing cluster.sync in every CTA; a .relaxed arrive, of an "
                         "mbarrier or of barrier.cluster, releases nothing)";
    }
    f.object_is_buffer = dsmem;
    f.agent = x.agent;
    f.other_agent = last_exit;
    f.cta = x.target;
    f.object = x.object;
    f.index = x.index;
    f.pc = x.pc;
    f.where = pcs_.where(Role(x.agent), x.pc);
    f.event = x.event;
    return f;
  }

  const ir::Program& p_;
  const engine::Engine& e_;
  std::span<const TraceEvent> trace_;
  PcMap pcs_;
  HappensBefore hb_;
  HappensBefore seen_;  // Mode::kCausal: what each agent observed of the others (P2030)
  std::map<uint32_t, std::vector<uint32_t>> members_;  // global CTA -> its agents
  std::set<std::tuple<uint32_t, uint32_t, uint32_t>> started_seen_;  // (CTA, role, pc) reported
  std::vector<VectorClock> exit_strong_, exit_weak_;  // per agent, at its exit
  std::vector<bool> exited_;
  std::vector<Issue> pending_;
  std::vector<Access> accesses_;
  std::map<uint32_t, std::vector<Observation>> observed_;  // by slot
  std::map<uint64_t, std::deque<CpArrive>> cp_arrives_;
  mutable std::unordered_map<uint64_t, uint32_t> seen_by_exit_;  // SeenByExit's cache
  std::vector<Finding> findings_;
};

}  // namespace

std::vector<Finding> CheckLifetime(const ir::Program& program, const engine::Engine& engine,
                                   std::span<const trace::TraceEvent> trace) {
  return Lifetime(program, engine, trace).Run();
}

}  // namespace parity::verifier
