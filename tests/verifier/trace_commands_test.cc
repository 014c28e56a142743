// The trace commands end to end through the built binary: parity run --trace, then parity
// replay / compare / trace export --perfetto, their exit codes and what they print.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>

#include "gtest/gtest.h"
#include "sim/trace/perfetto.h"
#include "sim/trace/trace_file.h"
#include "tests/tools/cli_runner.h"

namespace parity {
namespace {

using testing::CliResult;
using testing::RunParity;
using trace::EventKind;

constexpr uint8_t K(EventKind k) { return static_cast<uint8_t>(k); }

std::string Tmp(const std::string& name) {
  const char* t = std::getenv("TEST_TMPDIR");
  return std::string(t ? t : "/tmp") + "/" + name;
}

std::string Example(const std::string& name) { return "sim/examples/" + name; }

// Records a trace with `parity run`; returns its path.
std::string RunTrace(const std::string& pipe, const std::string& policy, const std::string& out) {
  const std::string path = Tmp(out);
  CliResult r = RunParity({"run", pipe, "--policy", policy, "--trace", path});
  EXPECT_TRUE(r.exit_code == 0 || r.exit_code == 1) << r.err;
  return path;
}

TEST(TraceCommandsTest, ReplaysEveryExampleUnderEveryPolicy) {
  for (const auto& entry : std::filesystem::directory_iterator("sim/examples")) {
    if (entry.path().extension() != ".pipe") continue;
    for (const char* policy : {"eager", "lazy", "round-robin", "random"}) {
      const std::string pipe = entry.path().string();
      const std::string t = RunTrace(pipe, policy, "ex.trc");
      CliResult r = RunParity({"replay", pipe, t});
      EXPECT_EQ(r.exit_code, 0) << pipe << " " << policy << "\n" << r.out << r.err;
      EXPECT_NE(r.out.find("OK: all"), std::string::npos) << r.out;
    }
  }
}

TEST(TraceCommandsTest, ReplayDivergenceExitsOne) {
  const std::string pipe = Example("single_tma_load.pipe");
  const std::string path = RunTrace(pipe, "lazy", "lazy.trc");
  auto t = trace::ReadTraceFile(path);
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  // lazy: init, fence, arrive.expect_tx, tma.issue, wait.begin, tma.deliver, phase.complete,
  // wait.end, use, exit. Swap the delivery and the wait.end.
  ASSERT_EQ(t->events[5].kind, K(EventKind::kTmaDeliver));
  ASSERT_EQ(t->events[7].kind, K(EventKind::kWaitEnd));
  std::swap(t->events[5], t->events[7]);
  const std::string bad = Tmp("swapped.trc");
  ASSERT_TRUE(trace::WriteTraceFile(bad, *t).ok());
  CliResult r = RunParity({"replay", pipe, bad});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("DIVERGENCE at event 6 of 10"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("wait.end"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("full[0] of CTA 0"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("complete tma.deliver"), std::string::npos) << r.out;
}

TEST(TraceCommandsTest, ReplayBadInputExitsTwo) {
  const std::string pipe = Example("single_tma_load.pipe");
  const std::string path = RunTrace(pipe, "eager", "good.trc");
  // A trace of another schedule.
  CliResult wrong = RunParity({"replay", Example("gemm_tma_multicast_2x2.pipe"), path});
  EXPECT_EQ(wrong.exit_code, 2);
  EXPECT_NE(wrong.err.find("replay.hash-mismatch"), std::string::npos) << wrong.err;
  // A truncated trace.
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string bytes = ss.str();
  const std::string cut = Tmp("cut.trc");
  std::ofstream(cut, std::ios::binary) << bytes.substr(0, bytes.size() - 50);
  CliResult truncated = RunParity({"replay", pipe, cut});
  EXPECT_EQ(truncated.exit_code, 2);
  EXPECT_NE(truncated.err.find("trace."), std::string::npos) << truncated.err;
  // -D that disagrees with the header's params.
  CliResult params = RunParity({"replay", pipe, "-D", "ROWS=128", path});
  EXPECT_EQ(params.exit_code, 2);
  EXPECT_NE(params.err.find("replay.params"), std::string::npos) << params.err;
  // -D that agrees is accepted.
  CliResult same = RunParity({"replay", pipe, "-D", "ROWS=64", path});
  EXPECT_EQ(same.exit_code, 0) << same.out << same.err;
}

TEST(TraceCommandsTest, CompareExitCodes) {
  const std::string pipe = Example("gemm_tma_multicast_2x2.pipe");
  const std::string a = RunTrace(pipe, "eager", "a.trc");
  const std::string b = RunTrace(pipe, "lazy", "b.trc");
  CliResult same = RunParity({"compare", a, b});
  EXPECT_EQ(same.exit_code, 0) << same.out << same.err;
  EXPECT_NE(same.out.find("SAME"), std::string::npos) << same.out;

  const std::string other = RunTrace(Example("single_tma_load.pipe"), "eager", "o.trc");
  CliResult refused = RunParity({"compare", a, other});
  EXPECT_EQ(refused.exit_code, 2);
  EXPECT_NE(refused.err.find("compare.hash-mismatch"), std::string::npos) << refused.err;

  auto t = trace::ReadTraceFile(b);
  ASSERT_TRUE(t.ok());
  for (auto& e : t->events) {
    if (e.kind == K(EventKind::kTmaDeliver)) {
      e.value = 4096;  // half a box landed
      break;
    }
  }
  const std::string c = Tmp("c.trc");
  ASSERT_TRUE(trace::WriteTraceFile(c, *t).ok());
  CliResult diff = RunParity({"compare", a, c});
  EXPECT_EQ(diff.exit_code, 1) << diff.out << diff.err;
  EXPECT_NE(diff.out.find("DIFFERENT"), std::string::npos) << diff.out;
  EXPECT_NE(diff.out.find("4096 bytes"), std::string::npos) << diff.out;
}

// The Chrome trace-event format's rules that ui.perfetto.dev and chrome://tracing rely on,
// checked on a whole document: required fields per phase type, ts non-decreasing per lane,
// slices of a lane nested (never partly overlapping), flows paired (one "s" and one "f" per id,
// same name and category, the end not before the start) and each flow end bound to a slice of
// its lane that encloses it. Sets the number of flows.
void ValidateChromeTraceInto(const nlohmann::json& j, size_t* flows) {
  EXPECT_TRUE(j.is_object());
  EXPECT_TRUE(j["traceEvents"].is_array());
  EXPECT_TRUE(j["displayTimeUnit"] == "ns" || j["displayTimeUnit"] == "ms");
  std::map<std::pair<int, int>, double> last_ts;
  std::map<std::pair<int, int>, std::vector<std::pair<double, double>>> slices;  // lane -> spans
  struct FlowEnd {
    int n = 0;
    nlohmann::json e;
  };
  std::map<int, FlowEnd> starts, ends;
  for (const auto& e : j["traceEvents"]) {
    ASSERT_TRUE(e.contains("ph") && e["ph"].is_string()) << e.dump();
    const std::string ph = e["ph"];
    ASSERT_TRUE(e.contains("pid") && e["pid"].is_number_integer()) << e.dump();
    ASSERT_TRUE(e.contains("tid") && e["tid"].is_number_integer()) << e.dump();
    ASSERT_TRUE(e.contains("name") && e["name"].is_string()) << e.dump();
    const std::pair<int, int> lane{e["pid"].get<int>(), e["tid"].get<int>()};
    if (ph == "M") {
      const std::string n = e["name"];
      EXPECT_TRUE(n == "process_name" || n == "thread_name" || n == "process_sort_index" ||
                  n == "thread_sort_index")
          << e.dump();
      EXPECT_TRUE(e["args"].is_object()) << e.dump();
      continue;
    }
    ASSERT_TRUE(e.contains("ts") && e["ts"].is_number()) << e.dump();
    const double ts = e["ts"].get<double>();
    EXPECT_GE(ts, 0.0) << e.dump();
    auto [it, fresh] = last_ts.insert({lane, ts});
    EXPECT_LE(it->second, ts) << "ts goes back on lane " << lane.first << "/" << lane.second
                              << ": " << e.dump();
    it->second = ts;
    if (ph == "X") {
      ASSERT_TRUE(e.contains("dur") && e["dur"].is_number()) << e.dump();
      EXPECT_GE(e["dur"].get<double>(), 0.0) << e.dump();
      EXPECT_TRUE(e["cat"].is_string()) << e.dump();
      slices[lane].push_back({ts, ts + e["dur"].get<double>()});
    } else if (ph == "i") {
      EXPECT_TRUE(e["s"] == "t" || e["s"] == "p" || e["s"] == "g") << e.dump();
    } else if (ph == "C") {
      ASSERT_TRUE(e["args"].is_object()) << e.dump();
      for (const auto& [k, v] : e["args"].items()) EXPECT_TRUE(v.is_number()) << e.dump();
    } else if (ph == "s" || ph == "f") {
      ASSERT_TRUE(e.contains("id") && e["id"].is_number_integer()) << e.dump();
      EXPECT_TRUE(e["cat"].is_string()) << e.dump();
      if (ph == "f") {
        EXPECT_EQ(e["bp"], "e") << e.dump();
      }
      FlowEnd& f = (ph == "s" ? starts : ends)[e["id"].get<int>()];
      ++f.n;
      f.e = e;
    } else {
      ADD_FAILURE() << "unexpected phase type " << e.dump();
    }
  }
  // Slices of one lane nest: sorted by start (longest first on ties), each either inside the
  // innermost open one or after it.
  for (auto& [lane, spans] : slices) {
    std::sort(spans.begin(), spans.end(), [](const auto& a, const auto& b) {
      return a.first != b.first ? a.first < b.first : a.second > b.second;
    });
    std::vector<std::pair<double, double>> open;
    for (const auto& s : spans) {
      while (!open.empty() && open.back().second <= s.first && open.back().first < s.first) {
        open.pop_back();
      }
      if (!open.empty()) {
        EXPECT_LE(s.second, open.back().second + 1e-9)
            << "slices overlap on lane " << lane.first << "/" << lane.second << ": [" << s.first
            << ", " << s.second << "] in [" << open.back().first << ", " << open.back().second
            << "]";
      }
      open.push_back(s);
    }
  }
  EXPECT_EQ(starts.size(), ends.size());
  for (const auto& [id, s] : starts) {
    EXPECT_EQ(s.n, 1) << "flow " << id;
    auto it = ends.find(id);
    ASSERT_NE(it, ends.end()) << "flow " << id << " has no end: " << s.e.dump();
    EXPECT_EQ(it->second.n, 1) << "flow " << id;
    EXPECT_EQ(it->second.e["name"], s.e["name"]);
    EXPECT_EQ(it->second.e["cat"], s.e["cat"]);
    EXPECT_GE(it->second.e["ts"].get<double>(), s.e["ts"].get<double>());
    for (const FlowEnd* f : {&s, static_cast<const FlowEnd*>(&it->second)}) {
      const std::pair<int, int> lane{f->e["pid"].get<int>(), f->e["tid"].get<int>()};
      const double ts = f->e["ts"].get<double>();
      bool bound = false;
      for (const auto& span : slices[lane]) bound |= span.first <= ts && ts <= span.second;
      EXPECT_TRUE(bound) << "flow event outside any slice of its lane: " << f->e.dump();
    }
  }
  *flows = starts.size();
}

size_t ValidateChromeTrace(const nlohmann::json& j) {
  size_t flows = 0;
  ValidateChromeTraceInto(j, &flows);
  return flows;
}

nlohmann::json ReadJson(const std::string& path) {
  std::ifstream in(path);
  nlohmann::json j = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  EXPECT_FALSE(j.is_discarded()) << path << " is not JSON";
  return j;
}

// Thread names per (pid, tid).
std::map<std::pair<int, int>, std::string> Lanes(const nlohmann::json& j) {
  std::map<std::pair<int, int>, std::string> out;
  for (const auto& e : j["traceEvents"]) {
    if (e["ph"] == "M" && e["name"] == "thread_name") {
      out[{e["pid"].get<int>(), e["tid"].get<int>()}] = e["args"]["name"].get<std::string>();
    }
  }
  return out;
}

TEST(TraceCommandsTest, PerfettoExportHasTheLanes) {
  const std::string pipe = Example("gemm_tma_multicast_2x2.pipe");
  const std::string path = RunTrace(pipe, "round-robin", "p.trc");
  const std::string json_path = Tmp("p.json");
  CliResult r = RunParity({"trace", "export", "--perfetto", json_path, path, "--schedule", pipe});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const nlohmann::json j = ReadJson(json_path);
  const size_t flows = ValidateChromeTrace(j);

  auto t = trace::ReadTraceFile(path);
  ASSERT_TRUE(t.ok());
  std::set<std::pair<int, int>> agents;  // (CTA, agent)
  size_t deliveries = 0, wait_ends = 0, phases = 0, remote = 0, multicast_dests = 0;
  for (const auto& e : t->events) {
    if (e.agent != trace::kNoAgent) agents.insert({e.cta, e.agent});
    deliveries += e.kind == K(EventKind::kTmaDeliver);
    for (EventKind k : {EventKind::kWaitEnd, EventKind::kClusterWaitEnd,
                        EventKind::kNamedBarrierSyncEnd, EventKind::kBulkWaitEnd,
                        EventKind::kCpAsyncWaitEnd}) {
      wait_ends += e.kind == K(k);
    }
    phases += e.kind == K(EventKind::kPhaseComplete);
    remote += e.agent != trace::kNoAgent && e.target_cta != e.cta &&
              (e.kind == K(EventKind::kArrive) || e.kind == K(EventKind::kArriveExpectTx));
    if (e.kind == K(EventKind::kTmaIssue) && (e.flags & trace::kFlagMulticast)) {
      multicast_dests += __builtin_popcount(static_cast<uint32_t>(e.value2));
    }
  }
  std::set<std::string> processes;
  std::map<std::string, size_t> slices, flow_names;  // cat -> count; flow name prefix -> count
  size_t counters = 0;
  for (const auto& e : j["traceEvents"]) {
    const std::string ph = e["ph"].get<std::string>();
    if (ph == "M" && e["name"] == "process_name") {
      processes.insert(e["args"]["name"].get<std::string>());
    }
    if (ph == "X") ++slices[e["cat"].get<std::string>()];
    if (ph == "C") ++counters;
    if (ph == "s") ++flow_names[e["name"].get<std::string>().substr(0, 9)];
  }
  EXPECT_EQ(processes, (std::set<std::string>{"cluster 0 CTA 0", "cluster 0 CTA 1",
                                               "cluster 0 CTA 2", "cluster 0 CTA 3"}));
  // Real names: every agent lane is named after its role, every barrier lane after its barrier.
  const auto lanes = Lanes(j);
  for (const auto& [cta, agent] : agents) {
    auto it = lanes.find({trace::CtaPid(0, cta), trace::AgentLaneTid(agent)});
    ASSERT_NE(it, lanes.end());
    EXPECT_TRUE(it->second.rfind("producer[", 0) == 0 || it->second.rfind("consumer[", 0) == 0)
        << it->second;
  }
  EXPECT_EQ(lanes.at({trace::CtaPid(0, 0), trace::BarrierLaneTid(0, 0)}), "full[0]");
  for (const auto& [lane, name] : lanes) {
    EXPECT_EQ(name.find("agent "), std::string::npos) << name;
    EXPECT_EQ(name.find("bar"), std::string::npos) << name;
  }
  EXPECT_GT(deliveries, 0u);
  EXPECT_EQ(slices["flight"], deliveries);  // one TMA flight per destination CTA
  EXPECT_EQ(slices["wait"], wait_ends);     // the run completed: every wait ended
  EXPECT_EQ(counters, phases);
  EXPECT_EQ(slices["phase"], phases + 32);  // and the last phase of each of 32 barriers, open
  // Arrows: every multicast destination, every remote arrive.
  EXPECT_GT(remote, 0u);
  EXPECT_EQ(flow_names["multicast"], multicast_dests);
  EXPECT_EQ(flow_names["remote ar"], remote);
  EXPECT_EQ(flows, multicast_dests + remote);
  EXPECT_EQ(j["otherData"]["time_unit"], "1 us = one logical tick of the simulator (one event)");
}

// An H100 trace: cycles become microseconds with the SM clock the runner recorded beside the
// trace, and the phase completions and TMA flights the GPU cannot record come from replaying it.
TEST(TraceCommandsTest, PerfettoExportOfAnH100Trace) {
  const std::string pipe = Example("gemm_tma_multicast_2x2.pipe");
  const std::string h100 = "traces/h100/gemm_tma_multicast_2x2.trace";
  auto t = trace::ReadTraceFile(h100);
  ASSERT_TRUE(t.ok());
  uint64_t lo = UINT64_MAX, hi = 0;
  for (const auto& e : t->events) {
    lo = std::min(lo, e.time);
    if (e.pc != 0xffff) hi = std::max(hi, e.time);  // the end-of-run probes are not replayed
  }
  std::ifstream side(h100 + ".agents");
  std::stringstream text;
  text << side.rdbuf();
  const double ghz = trace::SidecarClockGhz(text.str());
  ASSERT_NEAR(ghz, 1.98, 1e-9);
  EXPECT_EQ(trace::SidecarClockGhz("# no clock here"), 0.0);

  const std::string json_path = Tmp("h.json");
  CliResult r = RunParity({"trace", "export", "--perfetto", json_path, h100, "--schedule", pipe});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("converted to microseconds at 1.98"), std::string::npos) << r.out;
  const nlohmann::json j = ReadJson(json_path);
  const size_t flows = ValidateChromeTrace(j);
  double max_ts = 0;
  size_t flights = 0, counters = 0, inferred = 0;
  for (const auto& e : j["traceEvents"]) {
    if (e.contains("ts")) max_ts = std::max(max_ts, e["ts"].get<double>() + e.value("dur", 0.0));
    if (e["ph"] == "X" && e["cat"] == "flight") ++flights;
    if (e["ph"] == "C") ++counters;
    if (e.contains("args") && e["args"].value("inferred", false)) ++inferred;
  }
  EXPECT_NEAR(max_ts, static_cast<double>(hi - lo) / (ghz * 1000.0), 1e-6);
  EXPECT_LT(max_ts, 1000.0);  // tens of microseconds, not cycles
  EXPECT_EQ(flights, 128u);   // 32 multicast loads to 2 CTAs each, per 2 operands
  EXPECT_EQ(counters, 64u);   // every phase completion of the 8 k-tiles x 4 CTAs x 2 barriers
  EXPECT_GT(inferred, 0u);
  EXPECT_GE(flows, flights);
  EXPECT_EQ(Lanes(j).at({trace::CtaPid(0, 0), trace::BarrierLaneTid(0, 0)}), "full[0]");

  // Without the schedule or the sidecar: numbered lanes and cycles, each said in a note.
  const std::string copy = Tmp("nosidecar.trace");
  std::filesystem::copy_file(h100, copy, std::filesystem::copy_options::overwrite_existing);
  CliResult bare = RunParity({"trace", "export", "--perfetto", json_path, copy});
  ASSERT_EQ(bare.exit_code, 0) << bare.err;
  EXPECT_NE(bare.out.find("note: lanes are numbered"), std::string::npos) << bare.out;
  EXPECT_NE(bare.out.find("times stay in cycles"), std::string::npos) << bare.out;
  ValidateChromeTrace(ReadJson(json_path));
}

TEST(TraceCommandsTest, PerfettoShowsWaitsThatNeverEnded) {
  const std::string pipe = Example("gemm_wrong_producer_phase.pipe");
  const std::string path = RunTrace(pipe, "eager", "dl.trc");
  auto t = trace::ReadTraceFile(path);
  ASSERT_TRUE(t.ok());
  const std::string text = trace::ExportPerfettoJson(*t);
  nlohmann::json j = nlohmann::json::parse(text);
  ValidateChromeTrace(j);
  size_t never = 0;
  for (const auto& e : j["traceEvents"]) {
    if (e["ph"] == "X" && e["name"].get<std::string>().find("never ended") != std::string::npos) {
      ++never;
    }
  }
  EXPECT_GT(never, 0u);  // the deadlocked waits are drawn to the end of the trace
}

TEST(TraceCommandsTest, CommittedH100TracesReplayAndMatchTheSimulator) {
  for (const char* name : {"single_tma_load", "gemm_tma_multicast_2x2", "gemm_empty_count_high",
                           "gemm_tx_overcount", "gemm_wrong_producer_phase"}) {
    const std::string pipe = Example(std::string(name) + ".pipe");
    const std::string h100 = std::string("traces/h100/") + name + ".trace";
    CliResult replay = RunParity({"replay", pipe, h100});
    EXPECT_EQ(replay.exit_code, 0) << name << "\n" << replay.out << replay.err;
    const std::string sim = RunTrace(pipe, "eager", std::string(name) + ".sim.trc");
    CliResult compare = RunParity({"compare", sim, h100});
    EXPECT_EQ(compare.exit_code, 0) << name << "\n" << compare.out << compare.err;
    const std::string json = Tmp(std::string(name) + ".json");
    CliResult exported = RunParity({"trace", "export", "--perfetto", json, h100});
    EXPECT_EQ(exported.exit_code, 0) << exported.err;
    ValidateChromeTrace(ReadJson(json));
  }
}

}  // namespace
}  // namespace parity
