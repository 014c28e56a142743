#include "sim/trace/perfetto.h"

#include <algorithm>
#include <cstdio>
#include <deque>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <tuple>
#include <vector>

#include "sim/common/json_text.h"

namespace parity::trace {
namespace {

using nlohmann::json;

constexpr uint8_t K(EventKind k) { return static_cast<uint8_t>(k); }

bool IsFlightIssue(uint8_t k) {
  return k == K(EventKind::kTmaIssue) || k == K(EventKind::kBulkIssue);
}
bool IsFlightEnd(const TraceEvent& e) {
  return e.agent == kNoAgent &&
         (e.kind == K(EventKind::kTmaDeliver) || e.kind == K(EventKind::kBulkComplete));
}
// Kinds whose (object, index) is an mbarrier of CTA target_cta.
bool OnBarrier(uint8_t k) { return NamesMbarrier(k); }
bool OnBuffer(uint8_t k) {
  switch (static_cast<EventKind>(k)) {
    case EventKind::kTmaStoreRead:
    case EventKind::kTmaStoreWrite:
    case EventKind::kBulkIssue:
    case EventKind::kCpAsyncIssue:
    case EventKind::kCpAsyncComplete:
    case EventKind::kUse:
    case EventKind::kWrite:
    case EventKind::kGlobalReadback:
      return true;
    default:
      return false;
  }
}
// An arrive or tx change an agent makes on another CTA's barrier.
bool IsRemoteArrive(const TraceEvent& e) {
  return e.agent != kNoAgent && e.target_cta != e.cta &&
         (e.kind == K(EventKind::kArrive) || e.kind == K(EventKind::kArriveExpectTx) ||
          e.kind == K(EventKind::kExpectTx) || e.kind == K(EventKind::kCompleteTx));
}

using BarKey = std::tuple<int, int, int, int>;  // cluster, CTA, object, index

struct Slice {
  int pid = 0;
  int tid = 0;
  double ts = 0;
  double dur = 0;
  std::string name;
  std::string cat;
  json args;
};

// A flow arrow: from (pid, tid, ts) to a slice that is placed later (flights get their lane at
// the end), so the destination tid may be filled in after the fact.
struct Flow {
  int id = 0;
  std::string name;
  int src_pid = 0, src_tid = 0;
  double src_ts = 0;
  int dst_pid = 0, dst_tid = -1;
  double dst_ts = 0;
};

class Exporter {
 public:
  Exporter(const TraceFile& trace, const PerfettoOptions& options)
      : trace_(trace), names_(options.names) {
    t0_ = trace.events.empty() ? 0 : trace.events.front().time;
    for (const TraceEvent& e : trace.events) t0_ = std::min(t0_, e.time);
    const bool cycles = trace.header.source != "sim";
    scale_ = cycles && options.clock_ghz > 0 ? 1.0 / (options.clock_ghz * 1000.0) : 1.0;
    if (trace.header.source == "sim") {
      time_unit_ = "1 us = one logical tick of the simulator (one event)";
    } else if (options.clock_ghz > 0) {
      char buf[128];
      std::snprintf(buf, sizeof buf, "us (clock64 cycles / %.3f GHz SM clock)", options.clock_ghz);
      time_unit_ = buf;
    } else {
      time_unit_ = "clock64 cycles, shown as us (the SM clock is unknown: not converted)";
    }
    clock_ghz_ = options.clock_ghz;
    // Half a unit: the length of the short slices flows bind to (events of one lane are at
    // least one unit apart, so these never overlap each other).
    eps_ = 0.5 * scale_;
  }

  std::string Run();

 private:
  double Ts(uint64_t time) const { return static_cast<double>(time - t0_) * scale_; }

  std::string Bar(int object, int index) const {
    const std::string n = names_ != nullptr && object < static_cast<int>(names_->barriers.size())
                              ? names_->barriers[object]
                              : "bar" + std::to_string(object);
    return n + "[" + std::to_string(index) + "]";
  }
  std::string Object(const TraceEvent& e) const {
    if (OnBarrier(e.kind)) return Bar(e.object, e.index);
    const std::vector<std::string>* list = nullptr;
    std::string fallback;
    if (OnBuffer(e.kind)) {
      list = names_ ? &names_->buffers : nullptr;
      fallback = "buffer" + std::to_string(e.object);
    } else if (e.kind == K(EventKind::kTmaIssue) || e.kind == K(EventKind::kTmaStoreIssue)) {
      list = names_ ? &names_->tensor_maps : nullptr;
      fallback = "tensormap" + std::to_string(e.object);
    } else {
      return "";
    }
    const std::string n =
        list != nullptr && e.object < list->size() ? (*list)[e.object] : fallback;
    return n + "[" + std::to_string(e.index) + "]";
  }
  std::string Agent(int cluster, int cta, int agent) const {
    if (names_ != nullptr) {
      auto it = names_->agents.find({cluster, cta, agent});
      if (it != names_->agents.end()) return it->second;
    }
    return "agent " + std::to_string(agent);
  }
  std::string AgentOf(const TraceEvent& e) const {
    return e.agent == kNoAgent ? "async" : Agent(e.cluster, e.cta, e.agent);
  }
  // "arrive full[0]@CTA1", "tma.issue tmA[0]".
  std::string EventName(const TraceEvent& e) const {
    std::string n = EventKindName(e.kind);
    const std::string obj = Object(e);
    if (!obj.empty()) n += " " + obj;
    if (OnBarrier(e.kind) && e.target_cta != e.cta) n += "@CTA" + std::to_string(e.target_cta);
    return n;
  }
  json Args(const TraceEvent& e) const {
    json a = {{"event", FormatEvent(e)}, {"by", AgentOf(e)}, {"pc", e.pc},
              {"target_cta", e.target_cta}, {"value", e.value}, {"value2", e.value2},
              {"phase", e.phase}, {"parity", e.parity}};
    if (const std::string obj = Object(e); !obj.empty()) a["object"] = obj;
    if (e.flags & kFlagInferred) a["inferred"] = true;
    return a;
  }

  void Add(Slice s) { slices_.push_back(std::move(s)); }
  void Instant(int pid, int tid, const TraceEvent& e, const std::string& name) {
    json j = {{"ph", "i"}, {"s", "t"}, {"name", name}, {"cat", "event"}, {"pid", pid},
              {"tid", tid}, {"ts", Ts(e.time)}, {"args", Args(e)}};
    other_.push_back(std::move(j));
  }
  void BarrierLane(const BarKey& k) {
    auto [cluster, cta, object, index] = k;
    barrier_lanes_[{CtaPid(cluster, cta), BarrierLaneTid(object, index)}] = Bar(object, index);
  }
  void EndPhase(const BarKey& k, double end, bool completed);

  const TraceFile& trace_;
  const TraceNames* names_;
  uint64_t t0_ = 0;
  double scale_ = 1, eps_ = 0.5, clock_ghz_ = 0;
  std::string time_unit_;
  std::vector<Slice> slices_;
  std::vector<json> other_;  // instants, counters, flow events
  std::vector<Flow> flows_;
  std::map<std::pair<int, int>, std::string> barrier_lanes_;  // (pid, tid) -> name
  struct Phase {
    uint32_t number = 0;
    double start = 0;
  };
  std::map<BarKey, Phase> phases_;
};

void Exporter::EndPhase(const BarKey& k, double end, bool completed) {
  auto it = phases_.find(k);
  if (it == phases_.end()) return;
  auto [cluster, cta, object, index] = k;
  const Phase& p = it->second;
  Slice s;
  s.pid = CtaPid(cluster, cta);
  s.tid = BarrierLaneTid(object, index);
  s.ts = p.start;
  s.dur = std::max(0.0, end - p.start);
  s.name = "phase " + std::to_string(p.number) + " (parity " + std::to_string(p.number & 1u) +
           ")" + (completed ? "" : ", not complete at the end of the trace");
  s.cat = "phase";
  s.args = {{"barrier", Bar(object, index)}, {"phase", p.number}, {"completed", completed}};
  Add(std::move(s));
  if (completed) {
    phases_[k] = Phase{p.number + 1, end};
  } else {
    phases_.erase(it);
  }
}

std::string Exporter::Run() {
  std::set<std::pair<int, int>> ctas;
  std::set<std::tuple<int, int, int>> agents;
  for (const TraceEvent& e : trace_.events) {
    ctas.insert({e.cluster, e.cta});
    ctas.insert({e.cluster, e.target_cta});
    if (e.agent != kNoAgent) agents.insert({e.cluster, e.cta, e.agent});
  }

  std::map<std::tuple<int, int, int>, TraceEvent> open_wait;
  // Flights in progress per (cluster, issuing CTA, pc, destination CTA): the issue's time and
  // the flow from it. Deliveries carry the issuing CTA and instruction: first-in first-out.
  struct Issue {
    TraceEvent e;
    int flow = -1;
  };
  std::map<std::tuple<int, int, int, int>, std::deque<Issue>> flights;
  struct Flight {
    Slice slice;
    int flow = -1;
  };
  std::vector<Flight> landed;
  std::set<int> remote_lanes;  // pids with a remote-arrivals lane

  for (const TraceEvent& e : trace_.events) {
    const int pid_src = CtaPid(e.cluster, e.cta);
    const int pid_dst = CtaPid(e.cluster, e.target_cta);
    const double ts = Ts(e.time);
    const BarKey bk{e.cluster, e.target_cta, e.object, e.index};
    if (OnBarrier(e.kind)) {
      BarrierLane(bk);
      if (e.kind == K(EventKind::kInit)) {
        phases_[bk] = Phase{0, ts};
      } else if (!phases_.count(bk)) {
        phases_[bk] = Phase{0, ts};  // the trace does not show the init
      }
    }
    if (e.agent != kNoAgent && IsWaitBegin(e.kind)) {
      open_wait[{e.cluster, e.cta, e.agent}] = e;
      continue;
    }
    if (e.agent != kNoAgent && IsWaitEnd(e.kind)) {
      auto it = open_wait.find({e.cluster, e.cta, e.agent});
      if (it != open_wait.end()) {
        const TraceEvent& b = it->second;
        Add(Slice{pid_src, AgentLaneTid(e.agent), Ts(b.time), ts - Ts(b.time),
                  EventName(b), "wait", Args(e)});
        open_wait.erase(it);
        continue;
      }
    }
    bool anchored = false;  // the event is a short slice on its agent's lane (a flow starts)
    if (e.agent != kNoAgent && IsFlightIssue(e.kind)) {
      // One flight per destination: a multicast issue (kFlagMulticast) names them in its mask
      // (value2); otherwise the bytes land in the CTA of the barrier (target_cta).
      const bool multicast = (e.flags & kFlagMulticast) != 0 && e.value2 >= 0;
      const uint32_t mask = static_cast<uint32_t>(e.value2);
      Add(Slice{pid_src, AgentLaneTid(e.agent), ts, eps_, EventName(e), "flow", Args(e)});
      anchored = true;
      for (int d = 0; d < 16; ++d) {
        const bool dest = multicast ? ((mask >> d) & 1u) != 0 : d == e.target_cta;
        if (!dest) continue;
        Flow f;
        f.id = static_cast<int>(flows_.size()) + 1;
        f.name = std::string(multicast ? "multicast" : "copy") + " to CTA " + std::to_string(d);
        f.src_pid = pid_src;
        f.src_tid = AgentLaneTid(e.agent);
        f.src_ts = ts;
        f.dst_pid = CtaPid(e.cluster, d);
        flows_.push_back(f);
        flights[{e.cluster, e.cta, e.pc, d}].push_back(Issue{e, f.id});
      }
    }
    if (IsFlightEnd(e)) {
      auto& q = flights[{e.cluster, e.cta, e.pc, e.target_cta}];
      if (!q.empty()) {
        const Issue is = q.front();
        q.pop_front();
        Slice s{pid_dst, 0, Ts(is.e.time), ts - Ts(is.e.time),
                EventKindName(is.e.kind) + " -> CTA " + std::to_string(e.target_cta) + " " +
                    Bar(e.object, e.index),
                "flight", Args(e)};
        s.args["issued_by"] = AgentOf(is.e);
        landed.push_back(Flight{std::move(s), is.flow});
      }
    }
    if (IsRemoteArrive(e)) {
      Flow f;
      f.id = static_cast<int>(flows_.size()) + 1;
      f.name = "remote " + EventKindName(e.kind);
      f.src_pid = pid_src;
      f.src_tid = AgentLaneTid(e.agent);
      f.src_ts = ts;
      f.dst_pid = pid_dst;
      f.dst_tid = kRemoteLaneTid;
      f.dst_ts = ts;
      flows_.push_back(f);
      Add(Slice{pid_src, AgentLaneTid(e.agent), ts, eps_, EventName(e), "flow", Args(e)});
      Slice in{pid_dst, kRemoteLaneTid, ts, eps_,
               EventName(e) + " from CTA " + std::to_string(e.cta) + " " + AgentOf(e), "flow",
               Args(e)};
      Add(std::move(in));
      remote_lanes.insert(pid_dst);
      anchored = true;
    }
    // The barrier's lane: what the event did to it; its phases as slices.
    if (OnBarrier(e.kind) && e.kind != K(EventKind::kInit) && e.kind != K(EventKind::kWaitBegin) &&
        e.kind != K(EventKind::kWaitEnd)) {
      Instant(pid_dst, BarrierLaneTid(e.object, e.index), e,
              EventKindName(e.kind) + " by " + AgentOf(e));
    }
    if (e.kind == K(EventKind::kPhaseComplete)) {
      EndPhase(bk, ts, true);
      other_.push_back({{"ph", "C"},
                        {"name", "completed phases " + Bar(e.object, e.index)},
                        {"pid", pid_dst},
                        {"tid", 0},
                        {"ts", ts},
                        {"args", {{"completed", static_cast<int64_t>(
                                                    static_cast<uint32_t>(e.value)) + 1}}}});
    }
    if (anchored) continue;
    const bool on_agent = e.agent != kNoAgent;
    Instant(on_agent ? pid_src : pid_dst, on_agent ? AgentLaneTid(e.agent) : kAsyncLaneTid, e,
            EventName(e));
  }
  // Waits still open at the end of the trace (a deadlock or a hang): slices to the last event;
  // phases still open likewise.
  double t_end = 0;
  for (const TraceEvent& e : trace_.events) t_end = std::max(t_end, Ts(e.time));
  for (const auto& [key, b] : open_wait) {
    Add(Slice{CtaPid(b.cluster, b.cta), AgentLaneTid(b.agent), Ts(b.time), t_end - Ts(b.time),
              EventName(b) + " (never ended)", "wait", Args(b)});
  }
  std::vector<BarKey> open_phases;
  for (const auto& [k, p] : phases_) open_phases.push_back(k);
  for (const BarKey& k : open_phases) EndPhase(k, t_end, false);

  // Flights onto lanes: the first lane of the destination CTA free at the flight's start.
  std::stable_sort(landed.begin(), landed.end(),
                   [](const Flight& a, const Flight& b) { return a.slice.ts < b.slice.ts; });
  std::map<int, std::vector<double>> lane_end;  // pid -> end of the last flight per lane
  for (Flight& f : landed) {
    std::vector<double>& ends = lane_end[f.slice.pid];
    size_t k = 0;
    while (k < ends.size() && ends[k] > f.slice.ts) ++k;
    if (k == ends.size()) ends.push_back(0);
    ends[k] = f.slice.ts + f.slice.dur;
    f.slice.tid = kAsyncLaneTid + static_cast<int>(k);
    if (f.flow > 0) {
      Flow& flow = flows_[f.flow - 1];
      flow.dst_tid = f.slice.tid;
      flow.dst_ts = f.slice.ts;
    }
    Add(std::move(f.slice));
  }

  json events = json::array();
  for (const auto& [cluster, cta] : ctas) {
    const int pid = CtaPid(cluster, cta);
    events.push_back({{"ph", "M"}, {"name", "process_name"}, {"pid", pid}, {"tid", 0},
                      {"args", {{"name", "cluster " + std::to_string(cluster) + " CTA " +
                                             std::to_string(cta)}}}});
    events.push_back({{"ph", "M"}, {"name", "process_sort_index"}, {"pid", pid}, {"tid", 0},
                      {"args", {{"sort_index", pid}}}});
    const size_t lanes = std::max<size_t>(1, lane_end[pid].size());
    for (size_t k = 0; k < lanes; ++k) {
      events.push_back({{"ph", "M"}, {"name", "thread_name"}, {"pid", pid},
                        {"tid", kAsyncLaneTid + static_cast<int>(k)},
                        {"args", {{"name", "async copies #" + std::to_string(k)}}}});
    }
    if (remote_lanes.count(pid)) {
      events.push_back({{"ph", "M"}, {"name", "thread_name"}, {"pid", pid},
                        {"tid", kRemoteLaneTid}, {"args", {{"name", "remote arrivals"}}}});
    }
  }
  for (const auto& [cluster, cta, agent] : agents) {
    events.push_back({{"ph", "M"}, {"name", "thread_name"}, {"pid", CtaPid(cluster, cta)},
                      {"tid", AgentLaneTid(agent)},
                      {"args", {{"name", Agent(cluster, cta, agent)}}}});
    events.push_back({{"ph", "M"}, {"name", "thread_sort_index"}, {"pid", CtaPid(cluster, cta)},
                      {"tid", AgentLaneTid(agent)}, {"args", {{"sort_index", agent}}}});
  }
  for (const auto& [lane, name] : barrier_lanes_) {
    events.push_back({{"ph", "M"}, {"name", "thread_name"}, {"pid", lane.first},
                      {"tid", lane.second}, {"args", {{"name", name}}}});
  }

  // Slices, instants, counters and flows, in time order (every lane's ts non-decreasing).
  std::vector<std::pair<double, json>> timed;
  for (Slice& s : slices_) {
    timed.push_back({s.ts, {{"ph", "X"}, {"name", s.name}, {"cat", s.cat}, {"pid", s.pid},
                            {"tid", s.tid}, {"ts", s.ts}, {"dur", s.dur},
                            {"args", std::move(s.args)}}});
  }
  for (json& j : other_) {
    const double t = j["ts"].get<double>();
    timed.push_back({t, std::move(j)});
  }
  for (const Flow& f : flows_) {
    if (f.dst_tid < 0) continue;  // never landed in the trace: no arrow
    timed.push_back({f.src_ts, {{"ph", "s"}, {"name", f.name}, {"cat", "flow"}, {"id", f.id},
                                {"pid", f.src_pid}, {"tid", f.src_tid}, {"ts", f.src_ts}}});
    timed.push_back({f.dst_ts, {{"ph", "f"}, {"bp", "e"}, {"name", f.name}, {"cat", "flow"},
                                {"id", f.id}, {"pid", f.dst_pid}, {"tid", f.dst_tid},
                                {"ts", f.dst_ts}}});
  }
  std::stable_sort(timed.begin(), timed.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  for (auto& [t, j] : timed) events.push_back(std::move(j));

  json out;
  out["traceEvents"] = std::move(events);
  out["displayTimeUnit"] = "ns";
  json params = json::object();
  for (const auto& [n, v] : trace_.header.params) params[n] = v;
  out["otherData"] = {{"schedule", trace_.header.schedule},
                      {"source", trace_.header.source},
                      {"device", trace_.header.device},
                      {"policy", trace_.header.policy},
                      {"params", params},
                      {"time_unit", time_unit_},
                      {"sm_clock_ghz", clock_ghz_},
                      {"names", names_ != nullptr ? "from the schedule" : "numbered"}};
  return JsonText(out, 1);
}

}  // namespace

std::string ExportPerfettoJson(const TraceFile& trace, const PerfettoOptions& options) {
  return Exporter(trace, options).Run();
}

double SidecarClockGhz(std::string_view text) {
  const std::string_view key = "(clock ";
  const size_t at = text.find(key);
  if (at == std::string_view::npos) return 0;
  const std::string rest(text.substr(at + key.size(), 32));
  double ghz = 0;
  char unit[8] = {};
  if (std::sscanf(rest.c_str(), "%lf %3s", &ghz, unit) != 2 || std::string(unit) != "GHz") {
    return 0;
  }
  return ghz > 0 && ghz < 10 ? ghz : 0;
}

}  // namespace parity::trace
