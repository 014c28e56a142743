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
        waited_grids_.insert(Grid(a));
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
  uint32_t Grid(uint32_t a) const { return e_.agent_info(a).grid; }
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

  // The first grid strictly between `later` and `earlier` (grid numbers count launches back
  // from the schedule's own, so later < earlier) that executed no griddepcontrol.wait, or
  // `earlier` when each of them did. Grid m's wait returns only after grid m + 1 completed, and
  // grid m completes only after its wait returned, so a chain of waits carries the completion of
  // an earlier grid forward; a grid without a wait may complete before its prerequisite does
  // (it was launched with the attribute and never waited), and the chain breaks there.
  uint32_t ChainBreak(uint32_t later, uint32_t earlier) const {
    for (uint32_t m = later + 1; m < earlier; ++m) {
      if (!waited_grids_.count(m)) return m;
    }
    return earlier;
  }

  // Accesses are compared only within one (global buffer, slot): bucketed first, so the scan is
  // quadratic in the accesses of one slot, not of the whole run.
  void Pairs() {
    std::map<std::pair<uint32_t, uint32_t>, std::vector<size_t>> by_slot;
    for (size_t i = 0; i < accesses_.size(); ++i) {
      by_slot[{accesses_[i].global, accesses_[i].slot}].push_back(i);
    }
    std::set<std::tuple<uint32_t, uint32_t, uint32_t, uint32_t, uint32_t, uint32_t>> seen;
    for (const auto& [key, list] : by_slot) {
      for (size_t jb = 0; jb < list.size(); ++jb) {
        const GlobalAccessRec& b = accesses_[list[jb]];
        for (size_t ja = 0; ja < jb; ++ja) {
          const GlobalAccessRec& a = accesses_[list[ja]];
          CountWork();
          if (!a.write && !b.write) continue;
          if (a.agent == b.agent) continue;
          if (a.hi <= b.lo || b.hi <= a.lo) continue;
          const bool cross = Grid(a.agent) != Grid(b.agent);
          uint32_t broken = 0;  // the grid that breaks the chain of waits (0: none)
          if (cross) {
            // The earlier grid's access is ordered first exactly when the later grid's access
            // is after a wait of its cluster and every grid between them waited too.
            const GlobalAccessRec& dep = Grid(a.agent) < Grid(b.agent) ? a : b;
            const GlobalAccessRec& pre = &dep == &a ? b : a;
            const uint32_t brk = ChainBreak(Grid(dep.agent), Grid(pre.agent));
            if (AfterWait(dep) && brk == Grid(pre.agent)) continue;
            if (AfterWait(dep)) broken = brk;
          } else if (OrderedInCluster(a, b)) {
            continue;
          }
          // The later grid's access is the one a P2020 report points at.
          const GlobalAccessRec& at = cross && Grid(b.agent) > Grid(a.agent) ? a : b;
          const GlobalAccessRec& other = &at == &a ? b : a;
          if (!seen.emplace(Role(at.agent), at.pc, Role(other.agent), other.pc, at.global,
                            at.slot)
                   .second) {
            continue;
          }
          Report(at, other, cross, broken);
        }
      }
    }
  }

  // How a grid is named in a message: the schedule's own grid, the primary grid (a single
  // `primary` block), or the K-th `primary` block of the file in a chain.
  std::string GridName(uint32_t g) const {
    const uint32_t n = e_.num_grids();
    if (g == 0) return n > 2 ? "the schedule's own grid" : "the dependent grid";
    if (n == 2) return "the primary grid";
    return "the grid of `primary` block " + std::to_string(n - g) + " (launch " +
           std::to_string(n - g) + " of " + std::to_string(n) + ")";
  }

  void Report(const GlobalAccessRec& at, const GlobalAccessRec& other, bool cross,
              uint32_t broken) {
    const std::string name =
        (at.global < p_.globals.size() ? p_.globals[at.global].name : std::string("global")) +
        "[" + std::to_string(at.slot) + "]";
    Finding f;
    f.violation = model::Violation{cross ? model::Code::kPdlWaitMissing : model::Code::kDataRace,
                                   0, 0};
    if (cross && broken != 0) {
      f.message = "global " + name + ": the " + Describe(at) + " in " + GridName(Grid(at.agent)) +
                  " and the " + Describe(other) + " in " + GridName(Grid(other.agent)) +
                  " are unordered: the access is after a griddepcontrol.wait, but that wait "
                  "only waits for the grid launched just before its own, and " +
                  GridName(broken) +
                  " between them executes no griddepcontrol.wait, so it may complete before "
                  "its own prerequisite does (a dependent launch that never waits overlaps the "
                  "grid before it). Execute griddepcontrol.wait in every grid of the chain "
                  "between the two (or launch that grid without the programmatic attribute).";
    } else if (cross) {
      const bool two = e_.num_grids() == 2;
      f.message = "global " + name + ": the " + Describe(at) + " in " + GridName(Grid(at.agent)) +
                  " and the " + Describe(other) + " in " + GridName(Grid(other.agent)) +
                  " are unordered: the " + (two ? "dependent's" : "later grid's") +
                  " access does not happen "
                  "after a griddepcontrol.wait of its cluster (cudaGridDependencySynchronize), "
                  "the only thing that orders the " + (two ? "primary grid's" : "earlier grids'") +
                  " memory operations before the " + (two ? "dependent's" : "later grid's") +
                  "; launch_dependents orders nothing. Execute griddepcontrol.wait "
                  "before the first access of the " + (two ? "primary's" : "earlier grid's") +
                  " output (and of memory the " + (two ? "primary" : "earlier grid") +
                  " still reads).";
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
  std::set<uint32_t> waited_grids_;  // grids where some agent's griddepcontrol.wait returned
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
