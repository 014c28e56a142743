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

// An access to a CTA's shared memory or mbarrier by something other than that CTA's agents'
// own synchronous operations.
struct Access {
  bool copy = false;       // a delivery of a load / st.async (else an agent's remote update)
  uint32_t agent = 0;      // the agent (the issuer of a copy)
  uint32_t pc = 0;         // its statement (the issue of a copy)
  uint32_t target = 0;     // global CTA touched
  uint32_t barrier = 0;    // barrier declaration and element
  uint32_t index = 0;
  size_t event = 0;
  uint32_t component = 0;  // witness: an exit clock with clock[component] >= value follows it
  uint32_t value = 0;
  EventKind kind = EventKind::kArrive;
};

struct BarSlot {
  uint32_t completed = 0;
  Clock acc, last, prev;
};

struct CpArrive {  // a cp.async.mbarrier.arrive whose arrive-on has not landed yet
  uint32_t bar = 0;
  uint32_t agent = 0;
  Clock clock;
};

struct Issue {  // a load or st.async in flight to one destination, until its delivery event
  uint32_t agent = 0;
  uint32_t issuer_cta = 0;
  uint32_t pc = 0;
  uint32_t target = 0;  // destination rank
  bool has_bar_index = false;
  uint32_t bar_index = 0;
  Clock clock;
};

class Lifetime {
 public:
  Lifetime(const ir::Program& p, const engine::Engine& e, std::span<const TraceEvent> trace)
      : p_(p), e_(e), trace_(trace), pcs_(p) {}

  std::vector<Finding> Run() {
    Setup();
    for (size_t i = 0; i < trace_.size(); ++i) Step(i, trace_[i]);
    Check();
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
  uint32_t Bar(const TraceEvent& ev) {
    auto [it, fresh] = bar_ids_.emplace(Key(CtaGlobal(ev, ev.target_cta), ev.object, ev.index),
                                        static_cast<uint32_t>(bars_.size()));
    if (fresh) bars_.emplace_back();
    return it->second;
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
      s.acc.assign(width_, 0);
      s.last.assign(width_, 0);
      s.prev.assign(width_, 0);
    }
    clocks_.assign(num_agents_, Clock(width_, 0));
    exit_clocks_.assign(num_agents_, Clock());
    cluster_arrives_.assign(num_agents_, 0);
  }

  // An agent's update of a barrier: into the phase; remote, an access to the owner CTA.
  void Update(size_t i, const TraceEvent& ev, uint32_t a) {
    const uint32_t bar = Bar(ev);
    Join(bars_[bar].acc, clocks_[a]);
    const uint32_t target = CtaGlobal(ev, ev.target_cta);
    if (target == e_.agent_info(a).cta_global) return;
    Access x;
    x.agent = a;
    x.pc = ev.pc;
    x.target = target;
    x.barrier = ev.object;
    x.index = ev.index;
    x.event = i;
    x.component = a;
    x.value = clocks_[a][a];
    x.kind = static_cast<EventKind>(ev.kind);
    accesses_.push_back(x);
  }

  void OnIssue(const TraceEvent& ev, uint32_t a, int64_t mask, bool has_bar_index) {
    Issue c;
    c.agent = a;
    c.issuer_cta = CtaGlobal(ev, ev.cta);
    c.pc = ev.pc;
    c.has_bar_index = has_bar_index;
    c.bar_index = ev.index;
    c.clock = clocks_[a];
    for (uint32_t r = 0; r < 16; ++r) {
      if (mask < 0 ? r != ev.target_cta : ((mask >> r) & 1) == 0) continue;
      c.target = r;
      pending_.push_back(c);
    }
  }

  // A load's or st.async's bytes land (complete_tx on the destination's barrier): the oldest
  // matching copy in flight of that statement to that CTA.
  void OnDelivery(size_t i, const TraceEvent& ev) {
    const uint32_t issuer_cta = CtaGlobal(ev, ev.cta);
    size_t best = pending_.size();
    for (size_t j = 0; j < pending_.size(); ++j) {
      const Issue& c = pending_[j];
      if (c.issuer_cta != issuer_cta || c.pc != ev.pc || c.target != ev.target_cta) continue;
      if (c.has_bar_index && c.bar_index != ev.index) continue;
      best = j;
      break;
    }
    if (best == pending_.size()) return;
    const Issue c = std::move(pending_[best]);
    pending_.erase(pending_.begin() + static_cast<std::ptrdiff_t>(best));
    const uint32_t bar = Bar(ev);
    Join(bars_[bar].acc, c.clock);
    Access x;
    x.copy = true;
    x.agent = c.agent;
    x.pc = c.pc;
    x.target = CtaGlobal(ev, ev.target_cta);
    x.barrier = ev.object;
    x.index = ev.index;
    x.event = i;
    x.component = Comp(bar);
    x.value = bars_[bar].completed + 1;  // observed once the phase it counts in completes
    x.kind = static_cast<EventKind>(ev.kind);
    accesses_.push_back(x);
  }

  void Step(size_t i, const TraceEvent& ev) {
    const auto k = static_cast<EventKind>(ev.kind);
    const bool by_agent = ev.agent != trace::kNoAgent;
    const uint32_t a = by_agent ? AgentOf(ev) : kNoFindingAgent;
    if (by_agent && a == kNoFindingAgent) return;
    if (by_agent) ++clocks_[a][a];
    switch (k) {
      case EventKind::kArrive:
        if (by_agent) {
          Update(i, ev, a);
        } else {  // the deferred arrive of cp.async.mbarrier.arrive lands
          auto& q = cp_arrives_[Key(CtaGlobal(ev, ev.cta), ev.pc)];
          const uint32_t bar = Bar(ev);
          auto it = std::find_if(q.begin(), q.end(),
                                 [bar](const CpArrive& c) { return c.bar == bar; });
          if (it != q.end()) {
            Join(bars_[bar].acc, it->clock);
            // An asynchronous access of the barrier, as a copy's delivery: observed once the
            // phase it counts in completes.
            Access x;
            x.copy = true;
            x.agent = it->agent;
            x.pc = ev.pc;
            x.target = CtaGlobal(ev, ev.target_cta);
            x.barrier = ev.object;
            x.index = ev.index;
            x.event = i;
            x.component = Comp(bar);
            x.value = bars_[bar].completed + 1;
            x.kind = EventKind::kCpAsyncArrive;
            accesses_.push_back(x);
            q.erase(it);
          }
        }
        break;
      case EventKind::kArriveExpectTx:
      case EventKind::kExpectTx:
        Update(i, ev, a);
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
        cp_arrives_[Key(CtaGlobal(ev, ev.cta), ev.pc)].push_back(CpArrive{Bar(ev), a, clocks_[a]});
        break;
      case EventKind::kPhaseComplete: {
        const uint32_t bar = Bar(ev);
        BarSlot& s = bars_[bar];
        s.prev.swap(s.last);
        s.last = s.acc;
        s.completed = static_cast<uint32_t>(ev.value) + 1;
        s.last[Comp(bar)] = s.completed;
        std::fill(s.acc.begin(), s.acc.end(), 0);
        break;
      }
      case EventKind::kWaitEnd:
      case EventKind::kTestWait: {
        if (k == EventKind::kTestWait && ev.value != 1) break;
        const BarSlot& s = bars_[Bar(ev)];
        if (s.completed >= 1 && ((s.completed - 1) & 1) == ev.parity) {
          Join(clocks_[a], s.last);
        } else if (s.completed >= 2) {
          Join(clocks_[a], s.prev);
        }
        break;
      }
      case EventKind::kTmaIssue: {
        const ir::Op* op = pcs_.op(Role(a), ev.pc);
        const auto* t = op ? std::get_if<ir::TmaLoad>(op) : nullptr;
        if (t == nullptr) break;
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
      case EventKind::kClusterArrive:
        Join(cluster_acc_.try_emplace({ev.cluster, cluster_arrives_[a]}, width_, 0).first->second,
             clocks_[a]);
        ++cluster_arrives_[a];
        break;
      case EventKind::kClusterWaitEnd:
        if (cluster_arrives_[a] > 0) {
          auto it = cluster_acc_.find({ev.cluster, cluster_arrives_[a] - 1});
          if (it != cluster_acc_.end()) Join(clocks_[a], it->second);
        }
        break;
      case EventKind::kNamedBarrierArrive:
      case EventKind::kNamedBarrierSyncBegin: {
        const uint64_t key = Key(CtaGlobal(ev, ev.cta), ev.object);
        uint32_t& gen = named_gen_[key];
        Join(named_acc_.try_emplace(Key(CtaGlobal(ev, ev.cta), ev.object, gen), width_, 0)
                 .first->second,
             clocks_[a]);
        named_agent_gen_[Key(a, ev.object)] = gen;
        if (ev.value2 == 0) ++gen;  // the instance completed
        break;
      }
      case EventKind::kNamedBarrierSyncEnd: {
        auto g = named_agent_gen_.find(Key(a, ev.object));
        if (g == named_agent_gen_.end()) break;
        auto it = named_acc_.find(Key(CtaGlobal(ev, ev.cta), ev.object, g->second));
        if (it != named_acc_.end()) Join(clocks_[a], it->second);
        break;
      }
      case EventKind::kExit:
        exit_clocks_[a] = clocks_[a];
        break;
      default:
        break;
    }
  }

  static const char* What(const Access& x) {
    switch (x.kind) {
      case EventKind::kArrive: return "arrive on";
      case EventKind::kArriveExpectTx: return "arrive.expect_tx on";
      case EventKind::kExpectTx: return "expect_tx on";
      case EventKind::kCompleteTx: return x.copy ? "st.async into" : "complete_tx on";
      case EventKind::kBulkComplete: return "bulk load into";
      case EventKind::kCpAsyncArrive: return "cp.async.mbarrier.arrive landing in";
      default: return "TMA load into";
    }
  }

  void Check() {
    // The agents of each global CTA, and whether all of them exited in this run.
    std::map<uint32_t, std::vector<uint32_t>> members;
    for (uint32_t a = 0; a < num_agents_; ++a) members[e_.agent_info(a).cta_global].push_back(a);
    std::set<std::tuple<int, uint32_t, uint32_t, uint32_t, uint32_t>> seen;
    for (const Access& x : accesses_) {
      auto m = members.find(x.target);
      if (m == members.end()) continue;
      bool all_exited = true, ordered = false;
      uint32_t last_exit = kNoFindingAgent;
      for (uint32_t y : m->second) {
        if (exit_clocks_[y].empty()) {
          all_exited = false;
          break;
        }
        if (exit_clocks_[y][x.component] >= x.value) ordered = true;
        last_exit = y;
      }
      if (!all_exited || ordered) continue;
      const bool own = e_.agent_info(x.agent).cta_global == x.target;
      const model::Code code =
          own && x.copy ? model::Code::kExitWithCopyInFlight : model::Code::kAccessAfterExit;
      if (!seen.emplace(static_cast<int>(code), x.target, Role(x.agent), x.pc, x.barrier).second) {
        continue;
      }
      const std::string cta = "CTA " + std::to_string(x.target);
      const std::string bar = BarrierLabel(p_, x.barrier, x.index, x.target);
      const std::string who = AgentLabel(p_, e_, x.agent);
      const std::string at = pcs_.where(Role(x.agent), x.pc).ToString();
      Finding f;
      f.violation = model::Violation{code, static_cast<int64_t>(x.target), 0};
      if (code == model::Code::kExitWithCopyInFlight) {
        f.message = "the " + std::string(What(x)) + " " + cta + " issued by " + who + " at " + at +
                    " (completing on " + bar + ") is not waited for by any agent of " + cta +
                    " before it exits: no wait observes the phase its bytes complete in, so " +
                    cta + " can exit while the bytes are still landing in its shared memory";
      } else if (x.copy) {
        f.message = "the " + std::string(What(x)) + " " + cta + " issued by " + who + " at " + at +
                    " (completing on " + bar + ") may land after " + cta +
                    " exited: no agent of " + cta + " waits on the phase its bytes complete in, "
                    "and no cluster barrier orders it, before exiting (add a closing "
                    "cluster.sync in every CTA, or wait for the bytes)";
      } else {
        f.message = "the " + std::string(What(x)) + " " + bar + " by " + who + " at " + at +
                    " may happen after " + cta + " exited: no agent of " + cta +
                    " observes it (a wait on a phase it counts in, or a cluster barrier after "
                    "it) before exiting (add a closing cluster.sync in every CTA)";
      }
      f.agent = x.agent;
      f.other_agent = last_exit;
      f.cta = x.target;
      f.object = x.barrier;
      f.index = x.index;
      f.pc = x.pc;
      f.where = pcs_.where(Role(x.agent), x.pc);
      f.event = x.event;
      findings_.push_back(std::move(f));
    }
  }

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
  std::vector<Clock> clocks_;
  std::vector<Clock> exit_clocks_;  // empty: the agent has not exited
  std::vector<Issue> pending_;
  std::vector<Access> accesses_;
  std::map<uint64_t, std::deque<CpArrive>> cp_arrives_;
  std::vector<uint32_t> cluster_arrives_;
  std::map<std::pair<uint32_t, uint32_t>, Clock> cluster_acc_;
  std::map<uint64_t, uint32_t> named_gen_;
  std::map<uint64_t, Clock> named_acc_;
  std::map<uint64_t, uint32_t> named_agent_gen_;
  std::vector<Finding> findings_;
};

}  // namespace

std::vector<Finding> CheckLifetime(const ir::Program& program, const engine::Engine& engine,
                                   std::span<const trace::TraceEvent> trace) {
  return Lifetime(program, engine, trace).Run();
}

}  // namespace parity::verifier
