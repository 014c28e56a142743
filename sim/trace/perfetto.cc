#include "sim/trace/perfetto.h"

#include <deque>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <tuple>
#include <vector>

namespace parity::trace {
namespace {

using nlohmann::json;

constexpr uint8_t K(EventKind k) { return static_cast<uint8_t>(k); }

bool IsWaitBegin(uint8_t k) {
  return k == K(EventKind::kWaitBegin) || k == K(EventKind::kBulkWaitBegin) ||
         k == K(EventKind::kCpAsyncWaitBegin) || k == K(EventKind::kClusterWaitBegin) ||
         k == K(EventKind::kNamedBarrierSyncBegin);
}
bool IsWaitEnd(uint8_t k) {
  return k == K(EventKind::kWaitEnd) || k == K(EventKind::kBulkWaitEnd) ||
         k == K(EventKind::kCpAsyncWaitEnd) || k == K(EventKind::kClusterWaitEnd) ||
         k == K(EventKind::kNamedBarrierSyncEnd);
}
bool IsFlightIssue(uint8_t k) {
  return k == K(EventKind::kTmaIssue) || k == K(EventKind::kBulkIssue);
}
bool IsFlightEnd(const TraceEvent& e) {
  return e.agent == kNoAgent &&
         (e.kind == K(EventKind::kTmaDeliver) || e.kind == K(EventKind::kBulkComplete));
}

std::string BarrierName(const TraceEvent& e) {
  return "bar" + std::to_string(e.object) + "[" + std::to_string(e.index) + "]";
}

json Args(const TraceEvent& e) {
  return {{"event", FormatEvent(e)}, {"pc", e.pc},         {"object", e.object},
          {"index", e.index},        {"target_cta", e.target_cta}, {"value", e.value},
          {"value2", e.value2},      {"phase", e.phase},   {"parity", e.parity}};
}

}  // namespace

std::string ExportPerfettoJson(const TraceFile& trace) {
  json events = json::array();
  const uint64_t t0 = trace.events.empty() ? 0 : trace.events.front().time;
  auto ts = [&](const TraceEvent& e) { return static_cast<double>(e.time - t0); };

  // Lanes: metadata for every (cluster, CTA) and agent seen.
  std::set<std::pair<int, int>> ctas;
  std::set<std::tuple<int, int, int>> agents;
  for (const TraceEvent& e : trace.events) {
    ctas.insert({e.cluster, e.cta});
    ctas.insert({e.cluster, e.target_cta});
    if (e.agent != kNoAgent) agents.insert({e.cluster, e.cta, e.agent});
  }
  for (const auto& [cluster, cta] : ctas) {
    const int pid = CtaPid(cluster, cta);
    events.push_back({{"ph", "M"}, {"name", "process_name"}, {"pid", pid}, {"tid", 0},
                      {"args", {{"name", "cluster " + std::to_string(cluster) + " CTA " +
                                             std::to_string(cta)}}}});
    events.push_back({{"ph", "M"}, {"name", "process_sort_index"}, {"pid", pid}, {"tid", 0},
                      {"args", {{"sort_index", pid}}}});
    events.push_back({{"ph", "M"}, {"name", "thread_name"}, {"pid", pid}, {"tid", kAsyncLaneTid},
                      {"args", {{"name", "async copies"}}}});
  }
  for (const auto& [cluster, cta, agent] : agents) {
    events.push_back({{"ph", "M"}, {"name", "thread_name"}, {"pid", CtaPid(cluster, cta)},
                      {"tid", AgentLaneTid(agent)},
                      {"args", {{"name", "agent " + std::to_string(agent)}}}});
  }

  // Open waits per agent lane; flights in progress per (cluster, issuing CTA, pc, target CTA).
  std::map<std::tuple<int, int, int>, TraceEvent> open_wait;
  std::map<std::tuple<int, int, int, int>, std::deque<TraceEvent>> flights;
  for (const TraceEvent& e : trace.events) {
    const int pid_src = CtaPid(e.cluster, e.cta);
    const int pid_dst = CtaPid(e.cluster, e.target_cta);
    const std::string name = EventKindName(e.kind);
    if (e.agent != kNoAgent && IsWaitBegin(e.kind)) {
      open_wait[{e.cluster, e.cta, e.agent}] = e;
      continue;
    }
    if (e.agent != kNoAgent && IsWaitEnd(e.kind)) {
      auto it = open_wait.find({e.cluster, e.cta, e.agent});
      if (it != open_wait.end()) {
        const TraceEvent& b = it->second;
        events.push_back({{"ph", "X"},
                          {"name", EventKindName(b.kind) + " " + BarrierName(b)},
                          {"cat", "wait"},
                          {"pid", pid_src},
                          {"tid", AgentLaneTid(e.agent)},
                          {"ts", ts(b)},
                          {"dur", ts(e) - ts(b)},
                          {"args", Args(e)}});
        open_wait.erase(it);
        continue;
      }
    }
    if (e.agent != kNoAgent && IsFlightIssue(e.kind)) {
      // One flight per destination: a multicast issue (kFlagMulticast) names them in its mask
      // (value2); otherwise the bytes land in the CTA of the barrier (target_cta). Deliveries
      // carry the issuing CTA and instruction, so they are matched first-in first-out.
      const bool multicast = (e.flags & kFlagMulticast) != 0 && e.value2 >= 0;
      const uint32_t mask = static_cast<uint32_t>(e.value2);
      for (int d = 0; d < 16; ++d) {
        const bool dest = multicast ? ((mask >> d) & 1u) != 0 : d == e.target_cta;
        if (dest) flights[{e.cluster, e.cta, e.pc, d}].push_back(e);
      }
    }
    if (IsFlightEnd(e)) {
      auto& q = flights[{e.cluster, e.cta, e.pc, e.target_cta}];
      if (!q.empty()) {
        const TraceEvent b = q.front();
        q.pop_front();
        events.push_back({{"ph", "X"},
                          {"name", EventKindName(b.kind) + " -> CTA " +
                                       std::to_string(e.target_cta) + " " + BarrierName(e)},
                          {"cat", "flight"},
                          {"pid", pid_dst},
                          {"tid", kAsyncLaneTid},
                          {"ts", ts(b)},
                          {"dur", ts(e) - ts(b)},
                          {"args", Args(e)}});
      }
    }
    // Everything that is not the end of a slice is also an instant on its lane.
    const bool on_agent = e.agent != kNoAgent;
    events.push_back({{"ph", "i"},
                      {"s", "t"},
                      {"name", name + (e.kind == K(EventKind::kPhaseComplete) ||
                                               e.kind == K(EventKind::kArrive) ||
                                               e.kind == K(EventKind::kArriveExpectTx)
                                           ? " " + BarrierName(e) + "@cta" +
                                                 std::to_string(e.target_cta)
                                           : "")},
                      {"cat", "event"},
                      {"pid", on_agent ? pid_src : pid_dst},
                      {"tid", on_agent ? AgentLaneTid(e.agent) : kAsyncLaneTid},
                      {"ts", ts(e)},
                      {"args", Args(e)}});
    if (e.kind == K(EventKind::kPhaseComplete)) {
      events.push_back({{"ph", "C"},
                        {"name", "phases " + BarrierName(e)},
                        {"pid", pid_dst},
                        {"tid", 0},
                        {"ts", ts(e)},
                        {"args", {{"completed", static_cast<int64_t>(
                                                    static_cast<uint32_t>(e.value)) + 1}}}});
    }
  }
  // Waits still open at the end of the trace (a deadlock or a hang): slices to the last event.
  const double t_end = trace.events.empty() ? 0.0 : ts(trace.events.back());
  for (const auto& [key, b] : open_wait) {
    events.push_back({{"ph", "X"},
                      {"name", EventKindName(b.kind) + " " + BarrierName(b) + " (never ended)"},
                      {"cat", "wait"},
                      {"pid", CtaPid(b.cluster, b.cta)},
                      {"tid", AgentLaneTid(b.agent)},
                      {"ts", ts(b)},
                      {"dur", t_end - ts(b)},
                      {"args", Args(b)}});
  }
  json out;
  out["traceEvents"] = std::move(events);
  out["displayTimeUnit"] = "ns";
  json params = json::object();
  for (const auto& [n, v] : trace.header.params) params[n] = v;
  out["otherData"] = {{"schedule", trace.header.schedule},
                      {"source", trace.header.source},
                      {"device", trace.header.device},
                      {"policy", trace.header.policy},
                      {"params", params},
                      {"time_unit", trace.header.source == "sim" ? "logical tick (one per event)"
                                                                 : "clock64 cycle"}};
  return out.dump(1);
}

}  // namespace parity::trace
