#include "verifier/pdl.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <utility>

#include "verifier/check_work.h"
#include "verifier/deadlock.h"
#include "verifier/happens_before.h"
#include "verifier/pc_map.h"

namespace parity::verifier {
namespace {

using trace::EventKind;
using trace::TraceEvent;

struct GlobalAccessRec {
  uint32_t agent = 0;
  uint32_t pc = 0;
  bool write = false;
  uint32_t global = 0;
  uint32_t slot = 0;
  int64_t lo = 0, hi = 0;  // bytes [lo, hi) of the slot
  size_t event = 0;
  uint32_t own = 0;        // the agent's own clock component at the access
  VectorClock clock;       // happens-before the access (its cluster's components)
};

// An agent's first griddepcontrol.wait: its own clock component there. Later waits of the agent
// follow it in program order, so the first one decides which accesses are after a wait.
struct WaitMark {
  uint32_t agent = 0;
  uint32_t own = 0;
};

class GlobalRaces {
 public:
  GlobalRaces(const ir::Program& p, const engine::Engine& e, std::span<const TraceEvent> trace)
      : p_(p), e_(e), trace_(trace), pcs_(p), hb_(e, trace, &p) {}

  std::vector<Finding> Run() {
    for (size_t i = 0; i < trace_.size(); ++i) {
      const TraceEvent& ev = trace_[i];
      hb_.Step(ev);
      const auto k = static_cast<EventKind>(ev.kind);
      if (k != EventKind::kGlobalUse && k != EventKind::kGlobalWrite &&
          k != EventKind::kGridDepWait) {
        continue;
      }
      const uint32_t a = hb_.AgentOf(ev);
      if (a == HappensBefore::kNone) continue;
      if (k == EventKind::kGridDepWait) {
        const uint32_t cl = e_.agent_info(a).cluster;
        bool seen = false;
        for (const WaitMark& w : waits_[cl]) seen = seen || w.agent == a;
        if (!seen) waits_[cl].push_back(WaitMark{a, hb_.Own(a)});
        continue;
      }
      GlobalAccessRec x;
      x.agent = a;
      x.pc = ev.pc;
      x.write = k == EventKind::kGlobalWrite;
      x.global = ev.object;
      x.slot = ev.index;
      x.lo = ev.value2;
      x.hi = static_cast<int64_t>(ev.value2) + ev.value;
      x.event = i;
      x.own = hb_.Own(a);
      x.clock = hb_.clock(a);
      accesses_.push_back(std::move(x));
    }
    Pairs();
    return std::move(findings_);
  }

 private:
  bool Primary(uint32_t a) const { return e_.is_primary_agent(a); }
  uint32_t Cluster(uint32_t a) const { return e_.agent_info(a).cluster; }
  uint32_t Role(uint32_t a) const { return e_.agent_info(a).role; }

  // Whether access x of the dependent grid happens after a griddepcontrol.wait of its cluster.
  bool AfterWait(const GlobalAccessRec& x) const {
    auto it = waits_.find(Cluster(x.agent));
    if (it == waits_.end()) return false;
    for (const WaitMark& w : it->second) {
      const uint32_t c = hb_.AgentComponent(w.agent);
      if (c < x.clock.size() && x.clock[c] >= w.own) return true;
    }
    return false;
  }
  // Whether x (earlier in the trace) happens before y, within one cluster of one grid.
  bool OrderedInCluster(const GlobalAccessRec& x, const GlobalAccessRec& y) const {
    if (x.agent == y.agent) return true;
    if (Cluster(x.agent) != Cluster(y.agent)) return false;
    const uint32_t c = hb_.AgentComponent(x.agent);
    return c < y.clock.size() && y.clock[c] >= x.own;
  }

  std::string Line(const GlobalAccessRec& x) const {
    const SourceLocation w = pcs_.where(Role(x.agent), x.pc);
    return std::to_string(w.line);
  }
  std::string Describe(const GlobalAccessRec& x) const {
    return std::string(x.write ? "write" : "read") + " by " + AgentLabel(p_, e_, x.agent) +
           " (line " + Line(x) + ")";
  }

  void Pairs() {
    std::set<std::tuple<uint32_t, uint32_t, uint32_t, uint32_t, uint32_t, uint32_t>> seen;
    for (size_t ib = 0; ib < accesses_.size(); ++ib) {
      const GlobalAccessRec& b = accesses_[ib];
      for (size_t ia = 0; ia < ib; ++ia) {
        const GlobalAccessRec& a = accesses_[ia];
        CountWork();
        if (!a.write && !b.write) continue;
        if (a.agent == b.agent || a.global != b.global || a.slot != b.slot) continue;
        if (a.hi <= b.lo || b.hi <= a.lo) continue;
        const bool cross = Primary(a.agent) != Primary(b.agent);
        if (cross) {
          // The primary's access is ordered first exactly when the dependent's is after a wait.
          const GlobalAccessRec& dep = Primary(a.agent) ? b : a;
          if (AfterWait(dep)) continue;
        } else if (OrderedInCluster(a, b)) {
          continue;
        }
        // The dependent's access is the one a P2020 report points at.
        const GlobalAccessRec& at = cross && Primary(b.agent) ? a : b;
        const GlobalAccessRec& other = &at == &a ? b : a;
        if (!seen.emplace(Role(at.agent), at.pc, Role(other.agent), other.pc, at.global, at.slot)
                 .second) {
          continue;
        }
        Report(at, other, cross);
      }
    }
  }

  void Report(const GlobalAccessRec& at, const GlobalAccessRec& other, bool cross) {
    const std::string name =
        (at.global < p_.globals.size() ? p_.globals[at.global].name : std::string("global")) +
        "[" + std::to_string(at.slot) + "]";
    Finding f;
    f.violation = model::Violation{cross ? model::Code::kPdlWaitMissing : model::Code::kDataRace,
                                   0, 0};
    if (cross) {
      f.message = "global " + name + ": the " + Describe(at) + " in the dependent grid and the " +
                  Describe(other) +
                  " in the primary grid are unordered: the dependent's access does not happen "
                  "after a griddepcontrol.wait of its cluster (cudaGridDependencySynchronize), "
                  "the only thing that orders the primary grid's memory operations before the "
                  "dependent's; launch_dependents orders nothing. Execute griddepcontrol.wait "
                  "before the first access of the primary's output (and of memory the primary "
                  "still reads).";
    } else {
      f.message = "data race on global " + name + ": the " + Describe(at) + " and the " +
                  Describe(other) +
                  (Cluster(at.agent) != Cluster(other.agent)
                       ? " are in different clusters of one grid, which nothing orders"
                       : " are unordered: no barrier between them");
    }
    f.agent = at.agent;
    f.other_agent = other.agent;
    f.other_pc = other.pc;
    f.cta = e_.agent_info(at.agent).cta_global;
    f.object_is_global = true;
    f.object = at.global;
    f.index = at.slot;
    f.pc = at.pc;
    f.where = pcs_.where(Role(at.agent), at.pc);
    f.event = std::max(at.event, other.event);
    findings_.push_back(std::move(f));
  }

  const ir::Program& p_;
  const engine::Engine& e_;
  std::span<const TraceEvent> trace_;
  PcMap pcs_;
  HappensBefore hb_;
  std::vector<GlobalAccessRec> accesses_;
  std::map<uint32_t, std::vector<WaitMark>> waits_;  // per cluster: agents' first waits
  std::vector<Finding> findings_;
};

}  // namespace

std::vector<Finding> CheckGlobalRaces(const ir::Program& program, const engine::Engine& engine,
                                      std::span<const trace::TraceEvent> trace) {
  if (program.globals.empty()) return {};
  std::vector<Finding> out = GlobalRaces(program, engine, trace).Run();
  std::stable_sort(out.begin(), out.end(),
                   [](const Finding& x, const Finding& y) { return x.event < y.event; });
  return out;
}

}  // namespace parity::verifier
