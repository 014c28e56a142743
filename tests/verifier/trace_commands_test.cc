// The trace commands end to end through the built binary: parity run --trace, then parity
// replay / compare / trace export --perfetto, their exit codes and what they print.
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

TEST(TraceCommandsTest, PerfettoExportHasTheLanes) {
  const std::string pipe = Example("gemm_tma_multicast_2x2.pipe");
  const std::string path = RunTrace(pipe, "round-robin", "p.trc");
  const std::string json_path = Tmp("p.json");
  CliResult r = RunParity({"trace", "export", "--perfetto", json_path, path});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  std::ifstream in(json_path);
  nlohmann::json j = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  ASSERT_FALSE(j.is_discarded()) << "not JSON";
  ASSERT_TRUE(j["traceEvents"].is_array());

  auto t = trace::ReadTraceFile(path);
  ASSERT_TRUE(t.ok());
  std::set<std::pair<int, int>> agents;  // (CTA, agent)
  size_t deliveries = 0, wait_ends = 0, phases = 0;
  for (const auto& e : t->events) {
    if (e.agent != trace::kNoAgent) agents.insert({e.cta, e.agent});
    deliveries += e.kind == K(EventKind::kTmaDeliver);
    for (EventKind k : {EventKind::kWaitEnd, EventKind::kClusterWaitEnd,
                        EventKind::kNamedBarrierSyncEnd, EventKind::kBulkWaitEnd,
                        EventKind::kCpAsyncWaitEnd}) {
      wait_ends += e.kind == K(k);
    }
    phases += e.kind == K(EventKind::kPhaseComplete);
  }
  std::set<std::string> processes;
  std::set<std::pair<int, int>> agent_lanes;  // (pid, tid)
  std::map<std::string, size_t> slices;       // cat -> count
  size_t counters = 0, async_lanes = 0;
  for (const auto& e : j["traceEvents"]) {
    const std::string ph = e["ph"].get<std::string>();
    if (ph == "M" && e["name"] == "process_name") processes.insert(e["args"]["name"].get<std::string>());
    if (ph == "M" && e["name"] == "thread_name") {
      if (e["tid"].get<int>() == trace::kAsyncLaneTid) {
        ++async_lanes;
      } else {
        agent_lanes.insert({e["pid"].get<int>(), e["tid"].get<int>()});
      }
    }
    if (ph == "X") {
      ++slices[e["cat"].get<std::string>()];
      EXPECT_GE(e["dur"].get<double>(), 0.0);
    }
    if (ph == "C") ++counters;
  }
  EXPECT_EQ(processes, (std::set<std::string>{"cluster 0 CTA 0", "cluster 0 CTA 1",
                                               "cluster 0 CTA 2", "cluster 0 CTA 3"}));
  EXPECT_EQ(async_lanes, 4u);
  std::set<std::pair<int, int>> expected_lanes;
  for (const auto& [cta, agent] : agents) {
    expected_lanes.insert({trace::CtaPid(0, cta), trace::AgentLaneTid(agent)});
  }
  EXPECT_EQ(agent_lanes, expected_lanes);
  EXPECT_GT(deliveries, 0u);
  EXPECT_EQ(slices["flight"], deliveries);  // one TMA flight per destination CTA
  EXPECT_EQ(slices["wait"], wait_ends);     // the run completed: every wait ended
  EXPECT_EQ(counters, phases);
}

TEST(TraceCommandsTest, PerfettoShowsWaitsThatNeverEnded) {
  const std::string pipe = Example("gemm_wrong_producer_phase.pipe");
  const std::string path = RunTrace(pipe, "eager", "dl.trc");
  auto t = trace::ReadTraceFile(path);
  ASSERT_TRUE(t.ok());
  const std::string text = trace::ExportPerfettoJson(*t);
  nlohmann::json j = nlohmann::json::parse(text);
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
    std::ifstream in(json);
    EXPECT_FALSE(nlohmann::json::parse(in, nullptr, false).is_discarded()) << name;
  }
}

}  // namespace
}  // namespace parity
