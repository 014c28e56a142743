// The named-barrier part of a deadlock's explanation (verifier/deadlock_internal.h): who is in
// the blocked instance of a bar.sync and who is not, by agent, role and threads.
//
// The engine counts threads per instance (PTX ISA, bar / barrier: the barrier completes when
// the expected number of threads arrived; bar.arrive contributes without waiting, and exited
// threads leave it), so an agent that arrived with bar.arrive and is now blocked elsewhere is
// among the threads counted: the run's arrival events since the instance began say which
// agents those threads are.
#include <map>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "verifier/deadlock.h"
#include "verifier/deadlock_internal.h"
#include "verifier/pc_map.h"

namespace parity::verifier::deadlock_internal {
namespace {

using engine::BlockedAgent;
using engine::WaitKind;
using trace::EventKind;

std::string Threads(uint32_t n) { return std::to_string(n) + (n == 1 ? " thread" : " threads"); }

// Where an agent of a deadlocked run is now: "blocked on full[0] of CTA 0 parity 1 at line 12"
// or "exited".
std::string WhereNow(const ir::Program& program, const engine::DeadlockInfo& deadlock,
                     uint32_t agent) {
  for (const BlockedAgent& o : deadlock.blocked) {
    if (o.agent != agent) continue;
    return "blocked on " + WaitTarget(program, o) + " at line " + std::to_string(o.where.line);
  }
  for (uint32_t a : deadlock.exited) {
    if (a == agent) return "exited";
  }
  return "not blocked";
}

}  // namespace

std::string NamedBarrierParticipants(const ir::Program& program, const engine::Engine& engine,
                                     const engine::DeadlockInfo& deadlock, const BlockedAgent& b,
                                     const std::vector<trace::TraceEvent>& events) {
  const engine::AgentInfo& at = engine.agent_info(b.agent);
  const std::string name = ir::NamedBarrierName(program, b.barrier);
  const PcMap pcs(program);
  // Trace events name an agent by (cluster, CTA rank, index in the CTA).
  std::map<std::tuple<uint32_t, uint32_t, uint32_t>, uint32_t> by_place;
  std::vector<uint32_t> cta_agents;
  for (uint32_t a = 0; a < engine.num_agents(); ++a) {
    const engine::AgentInfo& i = engine.agent_info(a);
    if (i.cta_global != at.cta_global) continue;
    by_place[{i.cluster, i.cta, i.index_in_cta}] = a;
    cta_agents.push_back(a);
  }
  // The arrivals of the instance now blocked: those after the last arrival that completed one
  // (an arrival event's value2 is the threads arrived after it, 0 when it completed the
  // instance). An agent may arrive more than once (bar.arrive twice): each arrival counts.
  std::vector<std::pair<uint32_t, size_t>> arrivals;  // agent, event index
  for (size_t i = 0; i < events.size(); ++i) {
    const trace::TraceEvent& e = events[i];
    if (e.kind != static_cast<uint8_t>(EventKind::kNamedBarrierArrive) &&
        e.kind != static_cast<uint8_t>(EventKind::kNamedBarrierSyncBegin)) {
      continue;
    }
    if (e.object != b.barrier || e.agent == trace::kNoAgent) continue;
    auto it = by_place.find({e.cluster, e.cta, e.agent});
    if (it == by_place.end()) continue;
    if (e.value2 == 0) {
      arrivals.clear();
    } else {
      arrivals.push_back({it->second, i});
    }
  }
  std::vector<uint32_t> waiting;
  std::vector<std::string> went_on;
  std::map<uint32_t, bool> arrived;
  uint32_t waiting_threads = 0;
  for (const BlockedAgent& o : deadlock.blocked) {
    if (o.wait == WaitKind::kNamedBarrier && o.barrier == b.barrier &&
        engine.agent_info(o.agent).cta_global == at.cta_global) {
      waiting.push_back(o.agent);
      waiting_threads += engine.agent_info(o.agent).threads;
      arrived[o.agent] = true;
    }
  }
  for (const auto& [a, i] : arrivals) {
    if (events[i].kind != static_cast<uint8_t>(EventKind::kNamedBarrierArrive)) continue;
    arrived[a] = true;
    went_on.push_back(AgentLabel(program, engine, a) + " (" +
                      Threads(engine.agent_info(a).threads) + ", bar.arrive at line " +
                      std::to_string(pcs.where(engine.agent_info(a).role, events[i].pc).line) + ", now " +
                      WhereNow(program, deadlock, a) + ")");
  }
  std::vector<std::string> missing;
  uint32_t missing_threads = 0;
  for (uint32_t a : cta_agents) {
    if (arrived.count(a)) continue;
    missing_threads += engine.agent_info(a).threads;
    missing.push_back(AgentLabel(program, engine, a) + " (" +
                      Threads(engine.agent_info(a).threads) + ", " +
                      WhereNow(program, deadlock, a) + ")");
  }
  auto list = [](std::ostringstream& os, const std::vector<std::string>& items) {
    for (size_t i = 0; i < items.size() && i < 6; ++i) os << (i ? "; " : " ") << items[i];
    if (items.size() > 6) os << "; and " << items.size() - 6 << " more";
  };
  std::ostringstream os;
  os << " Waiting at named barrier " << name << " of CTA " << at.cta_global << ": "
     << AgentList(program, engine, waiting) << " (" << Threads(waiting_threads) << ").";
  if (!went_on.empty()) {
    os << " Arrived with bar.arrive and went on:";
    list(os, went_on);
    os << ".";
  }
  if (!missing.empty()) {
    os << " Not arrived (" << Threads(missing_threads) << " of the CTA):";
    list(os, missing);
    os << ".";
  } else {
    os << " No other agent of the CTA is left to arrive: the thread count is larger than the "
          "participants.";
  }
  return os.str();
}

}  // namespace parity::verifier::deadlock_internal
