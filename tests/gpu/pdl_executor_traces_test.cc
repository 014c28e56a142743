// Holds the GPU traces of programmatic dependent launches through the executor
// (gpu/pdl_executor_batch.sh, traces/pdl_executor/) against the model on the CPU:
// - each trace is a GPU trace of the current schedule (same content hash) with the params it ran
//   with, and holds both grids' events: the primary grid's clusters numbered after the
//   schedule's own, as the engine numbers them;
// - the correct pipeline (pipelines/pdl/gemm_then_consumer.pipe) and the early-trigger schedule
//   with its wait before the read: a clean run (no wait timed out, every `use` read pattern data,
//   no stale read of the primary's output), the same operations as the simulator, a complete
//   replay on the model (the primary's exits release the dependent's griddepcontrol.wait) and
//   nothing `parity compare` finds against the simulator;
// - every stale read the GPU showed (a dependent `use` that saw the initial contents of bytes a
//   primary `write` covers) is in a run the model reports as a race (P2020), and no use after a
//   griddepcontrol.wait of its agent ever read stale data;
// - the primary that hangs: the GPU's wait timeouts are in the primary grid, no dependent ever
//   passed griddepcontrol.wait or read C, and the model, replaying the trace, deadlocks.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "gpu/executor.h"
#include "gpu/resolve.h"
#include "gtest/gtest.h"
#include "sim/engine/engine.h"
#include "sim/ir/hash.h"
#include "sim/ir/ir.h"
#include "sim/ir/parser.h"
#include "sim/model/codes.h"
#include "sim/trace/event.h"
#include "sim/trace/trace_file.h"
#include "verifier/compare.h"
#include "verifier/replay.h"
#include "verifier/rules.h"

namespace parity {
namespace {

using trace::EventKind;
using trace::TraceEvent;

constexpr uint8_t K(EventKind k) { return static_cast<uint8_t>(k); }
const char kDir[] = "traces/pdl_executor/";

struct Loaded {
  ir::Program program;
  std::vector<int64_t> params;
  trace::TraceFile gpu;
  uint32_t own_clusters = 0;     // the schedule's own grid; the primary's clusters follow
  uint32_t primary_agents = 0;
  std::vector<TraceEvent> sim_events;
  engine::Outcome sim_outcome = engine::Outcome::kRunning;
  bool model_p2020 = false;      // the model's eager run reports P2020
  bool ok = false;
};

Loaded Load(const std::string& pipe, const std::string& trace_name) {
  Loaded l;
  Expected<ir::Program> p = ir::ParseFile(pipe);
  EXPECT_TRUE(p.ok()) << p.status().ToString();
  if (!p.ok()) return l;
  l.program = *p;
  Expected<trace::TraceFile> t = trace::ReadTraceFile(kDir + trace_name + ".trace");
  EXPECT_TRUE(t.ok()) << t.status().ToString();
  if (!t.ok()) return l;
  l.gpu = *t;
  EXPECT_EQ(l.gpu.header.source, "h100");  // the runner's source name for any Hopper part
  EXPECT_NE(l.gpu.header.device.find("H"), std::string::npos) << l.gpu.header.device;
  EXPECT_EQ(l.gpu.header.schedule_hash, ir::ContentHash(l.program))
      << trace_name << ": recorded from another version of " << pipe << ": re-record it";
  Expected<std::vector<int64_t>> params = verifier::BindTraceParams(l.program, l.gpu.header);
  EXPECT_TRUE(params.ok()) << params.status().ToString();
  if (!params.ok()) return l;
  l.params = *params;
  // The model's run of one schedule and params, shared by its traces (the rules' pass over the
  // early-trigger schedule's 8000 shared-memory writes takes seconds).
  static std::map<std::pair<std::string, std::vector<int64_t>>, Loaded> models;
  auto [it, fresh] = models.try_emplace({pipe, l.params});
  Loaded& m = it->second;
  if (fresh) {
    Expected<engine::Engine> e = engine::Engine::Create(l.program, l.params, {});
    EXPECT_TRUE(e.ok()) << e.status().ToString();
    if (!e.ok()) return l;
    engine::Engine engine = std::move(e).value();
    m.own_clusters = engine.primary_first_cluster();
    m.primary_agents = engine.num_agents() - engine.primary_first_agent();
    m.sim_outcome = engine.Run().outcome;
    m.sim_events = engine.trace();
    for (const verifier::Finding& f : verifier::CheckRules(l.program, engine, engine.trace())) {
      m.model_p2020 = m.model_p2020 || f.code() == model::Code::kPdlWaitMissing;
    }
    m.ok = true;
  }
  l.own_clusters = m.own_clusters;
  l.primary_agents = m.primary_agents;
  l.sim_outcome = m.sim_outcome;
  l.sim_events = m.sim_events;
  l.model_p2020 = m.model_p2020;
  l.ok = m.ok;
  return l;
}

size_t Count(const std::vector<TraceEvent>& events, EventKind kind, uint8_t flag = 0) {
  size_t n = 0;
  for (const TraceEvent& e : events) {
    if (e.kind == K(kind) && (e.flags & flag) == flag) ++n;
  }
  return n;
}

// The traces of one schedule in traces/pdl_executor/: every "<stem>.<mode>.trace".
std::vector<std::string> TracesOf(const std::string& stem) {
  std::vector<std::string> out;
  for (const auto& f : std::filesystem::directory_iterator(kDir)) {
    const std::string name = f.path().filename().string();
    if (f.path().extension() == ".trace" && name.rfind(stem + ".", 0) == 0) {
      out.push_back(name.substr(0, name.size() - 6));
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

// Both grids are in the trace, each with its own cluster numbers.
void ExpectBothGrids(const Loaded& l) {
  std::set<uint32_t> own, primary;
  for (const TraceEvent& e : l.gpu.events) (e.cluster < l.own_clusters ? own : primary).insert(e.cluster);
  EXPECT_FALSE(own.empty());
  EXPECT_FALSE(primary.empty());
}

// No use after a griddepcontrol.wait of its own agent read the initial contents of a global
// buffer (the wait orders the primary's writes before it), and every stale read is a race the
// model reports.
void ExpectStaleReadsOnlyWhereTheModelAllows(const Loaded& l, const std::string& name) {
  std::set<std::tuple<uint32_t, uint32_t, uint32_t>> waited;
  for (const TraceEvent& e : l.gpu.events) {
    const auto who = std::make_tuple(e.cluster, e.cta, e.agent);
    if (e.kind == K(EventKind::kGridDepWait) && e.cluster < l.own_clusters) waited.insert(who);
    if (e.kind == K(EventKind::kGlobalUse) && waited.count(who) != 0) {
      EXPECT_EQ(e.flags & gpu::kFlagInitialData, 0)
          << name << ": a use after griddepcontrol.wait read the initial contents (a stale read "
          << "the model excludes): cluster " << e.cluster << " CTA " << int{e.cta};
    }
    EXPECT_FALSE(e.kind == K(EventKind::kGlobalUse) && (e.flags & gpu::kFlagDataBad) != 0)
        << name << ": a global use read bytes that are neither initial nor written data";
  }
  const std::vector<size_t> stale = gpu::StaleGlobalReads(l.gpu.events, l.own_clusters);
  if (!stale.empty()) {
    EXPECT_TRUE(l.model_p2020) << name << ": the GPU read stale data where the model reports no race";
  }
  std::printf("%s: %zu stale read(s) of %zu global use(s); the model %s P2020\n", name.c_str(),
              stale.size(), Count(l.gpu.events, EventKind::kGlobalUse),
              l.model_p2020 ? "reports" : "does not report");
}

// A clean run that the model reproduces from start to end and compares equal to the simulator.
void ExpectCleanAndReplayed(const Loaded& l, const std::string& name) {
  ASSERT_TRUE(l.ok);
  EXPECT_EQ(l.sim_outcome, engine::Outcome::kCompleted);
  EXPECT_FALSE(l.model_p2020);
  EXPECT_EQ(Count(l.gpu.events, EventKind::kWaitTimeout), 0u);
  EXPECT_EQ(Count(l.gpu.events, EventKind::kUse, gpu::kFlagDataBad), 0u);
  EXPECT_EQ(Count(l.gpu.events, EventKind::kGlobalUse, gpu::kFlagInitialData), 0u)
      << name << ": a use read C before the primary's write reached it";
  EXPECT_TRUE(gpu::StaleGlobalReads(l.gpu.events, l.own_clusters).empty());
  for (EventKind k : {EventKind::kUse, EventKind::kWrite, EventKind::kTmaIssue,
                      EventKind::kGlobalUse, EventKind::kGlobalWrite, EventKind::kGridDepLaunch,
                      EventKind::kGridDepWait, EventKind::kExit}) {
    EXPECT_EQ(Count(l.gpu.events, k), Count(l.sim_events, k)) << trace::EventKindName(K(k));
  }
  EXPECT_GT(Count(l.gpu.events, EventKind::kGridDepWait), 0u);
  for (const TraceEvent& e : l.gpu.events) {
    // The dependent's wait returned with the whole primary grid done.
    if (e.kind == K(EventKind::kGridDepWait) && e.cluster < l.own_clusters) {
      EXPECT_EQ(e.value, static_cast<int32_t>(l.primary_agents));
    }
  }
  ExpectBothGrids(l);
  Expected<verifier::ReplayResult> r = verifier::ReplayTrace(l.program, l.params, l.gpu);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_FALSE(r->diverged) << verifier::FormatReplayResult(*r, l.gpu);
  EXPECT_EQ(r->timeouts, 0u);
  EXPECT_EQ(r->replayed + r->probes, l.gpu.events.size()) << verifier::FormatReplayResult(*r, l.gpu);
  // Every agent's exit is recorded: the model's run ends with the trace.
  EXPECT_EQ(r->model_outcome, engine::Outcome::kCompleted) << verifier::FormatReplayResult(*r, l.gpu);
  trace::TraceFile sim;
  sim.header.schedule_hash = ir::ContentHash(l.program);
  sim.header.source = "sim";
  sim.header.device = "parity-engine";
  sim.header.schedule = l.program.name;
  sim.header.policy = "eager";
  sim.header.params = l.gpu.header.params;
  sim.events = l.sim_events;
  Expected<verifier::CompareResult> c = verifier::CompareTraces(sim, l.gpu);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_TRUE(c->same()) << verifier::FormatCompareResult(*c, sim, l.gpu);
}

TEST(PdlExecutorTraces, GemmThenConsumerCompletesAsTheModelDoes) {
  const std::vector<std::string> names = TracesOf("gemm_then_consumer");
  ASSERT_EQ(names.size(), 2u);  // resolved, interpret
  for (const std::string& name : names) {
    SCOPED_TRACE(name);
    const Loaded l = Load("pipelines/pdl/gemm_then_consumer.pipe", name);
    ExpectCleanAndReplayed(l, name);
    ExpectStaleReadsOnlyWhereTheModelAllows(l, name);
  }
}

// When the dependent grid's first record and the primary's last `write C` happened, on the
// trace's common time axis (every agent's clock64 calibrated against %globaltimer).
std::pair<uint64_t, uint64_t> DependentStartAndLastPrimaryWrite(const Loaded& l) {
  uint64_t start = ~uint64_t{0}, last_write = 0;
  for (const TraceEvent& e : l.gpu.events) {
    if (e.cluster < l.own_clusters) start = std::min(start, e.time);
    if (e.cluster >= l.own_clusters && e.kind == K(EventKind::kGlobalWrite)) {
      last_write = std::max(last_write, e.time);
    }
  }
  return {start, last_write};
}

// The primary triggers at its start, so the dependent grid may start while the primary still
// works (the runs without the wait below show that it does); its griddepcontrol.wait orders
// every read after the primary's writes. (Its first record is the wait's return, so these
// traces do not show when it started.)
TEST(PdlExecutorTraces, EarlyTriggerWithTheWaitReadsNoStaleData) {
  const std::vector<std::string> names = TracesOf("early_wait");
  ASSERT_GE(names.size(), 2u);
  for (const std::string& name : names) {
    SCOPED_TRACE(name);
    const Loaded l = Load("tests/gpu/schedules/pdl_early_trigger.pipe", name);
    ExpectCleanAndReplayed(l, name);
    ExpectStaleReadsOnlyWhereTheModelAllows(l, name);
  }
}

// Without the wait the same early start reads C before the primary wrote it (the dependent's
// read is on the time axis before the primary's last write): the race P2020 names, observed in
// every recorded run (the executor's stale-read check is what sees it).
TEST(PdlExecutorTraces, EarlyTriggerWithoutTheWaitReadsStaleData) {
  const std::vector<std::string> names = TracesOf("early_nowait");
  ASSERT_GE(names.size(), 2u);
  for (const std::string& name : names) {
    SCOPED_TRACE(name);
    const Loaded l = Load("tests/gpu/schedules/pdl_early_trigger.pipe", name);
    ASSERT_TRUE(l.ok);
    EXPECT_TRUE(l.model_p2020);
    EXPECT_GT(gpu::StaleGlobalReads(l.gpu.events, l.own_clusters).size(), 0u);
    const auto [start, last_write] = DependentStartAndLastPrimaryWrite(l);
    std::printf("%s: the dependent grid's first record is %lld cycles before the primary's last "
                "write\n", name.c_str(),
                static_cast<long long>(last_write) - static_cast<long long>(start));
    EXPECT_LT(start, last_write) << "the dependent did not start before the primary's writes";
  }
}

// The known-bad reads: the replay follows the GPU's order (the model lets the dependent run from
// the start), and a stale read, where the GPU showed one, is a race the model reports.
TEST(PdlExecutorTraces, ReadsWithoutTheWaitAreRacesTheModelReports) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"pipelines/pdl/bad_read_before_wait.pipe", "bad_read_before_wait"},
      {"pipelines/pdl/bad_no_wait.pipe", "bad_no_wait"},
      {"tests/gpu/schedules/pdl_early_trigger.pipe", "early_nowait"},
  };
  for (const auto& [pipe, stem] : cases) {
    const std::vector<std::string> names = TracesOf(stem);
    ASSERT_GE(names.size(), 2u) << stem;
    for (const std::string& name : names) {
      SCOPED_TRACE(name);
      const Loaded l = Load(pipe, name);
      ASSERT_TRUE(l.ok);
      EXPECT_TRUE(l.model_p2020);
      EXPECT_EQ(Count(l.gpu.events, EventKind::kWaitTimeout), 0u);
      ExpectBothGrids(l);
      ExpectStaleReadsOnlyWhereTheModelAllows(l, name);
      Expected<verifier::ReplayResult> r = verifier::ReplayTrace(l.program, l.params, l.gpu);
      ASSERT_TRUE(r.ok()) << r.status().ToString();
      EXPECT_FALSE(r->diverged) << verifier::FormatReplayResult(*r, l.gpu);
      EXPECT_EQ(r->model_outcome, engine::Outcome::kCompleted) << verifier::FormatReplayResult(*r, l.gpu);
    }
  }
}

// A primary grid that never completes: the GPU's timed-out waits are the primary's, no dependent
// got past griddepcontrol.wait (it never read C), and the model, replaying the trace, deadlocks
// on the barrier it names (empty[0], count too high).
TEST(PdlExecutorTraces, APrimaryThatHangsTakesTheDependentWithIt) {
  const std::vector<std::string> names = TracesOf("bad_primary_hangs");
  ASSERT_EQ(names.size(), 2u);
  for (const std::string& name : names) {
    SCOPED_TRACE(name);
    const Loaded l = Load("pipelines/pdl/bad_primary_hangs.pipe", name);
    ASSERT_TRUE(l.ok);
    EXPECT_EQ(l.sim_outcome, engine::Outcome::kDeadlock);
    size_t expired = 0, on_empty = 0;
    for (const TraceEvent& e : l.gpu.events) {
      if (e.kind != K(EventKind::kWaitTimeout) || (e.flags & gpu::kFlagAborted) != 0) continue;
      ++expired;
      EXPECT_GE(e.cluster, l.own_clusters) << "a wait of the dependent grid expired";
      on_empty += l.program.barriers[e.object].name == "empty" && e.index == 0;
    }
    EXPECT_GE(expired, 1u);
    size_t blocked_on_empty = on_empty;
    for (const TraceEvent& e : l.gpu.events) {
      blocked_on_empty += e.kind == K(EventKind::kWaitTimeout) &&
                          (e.flags & gpu::kFlagAborted) != 0 &&
                          l.program.barriers[e.object].name == "empty" && e.index == 0;
    }
    EXPECT_GE(blocked_on_empty, 1u) << "no producer was stuck on empty[0]";
    EXPECT_EQ(Count(l.gpu.events, EventKind::kGridDepWait), 0u);
    EXPECT_EQ(Count(l.gpu.events, EventKind::kGlobalUse), 0u);
    Expected<verifier::ReplayResult> r = verifier::ReplayTrace(l.program, l.params, l.gpu);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_FALSE(r->diverged) << verifier::FormatReplayResult(*r, l.gpu);
    EXPECT_GE(r->timeouts, 1u);
    EXPECT_EQ(r->model_run_on, engine::Outcome::kDeadlock) << verifier::FormatReplayResult(*r, l.gpu);
  }
}

}  // namespace
}  // namespace parity
