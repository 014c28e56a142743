#include "tests/gpu/h100_trace_fixture.h"

#include <utility>

#include "gpu/executor.h"
#include "gtest/gtest.h"
#include "sim/ir/hash.h"
#include "sim/ir/parser.h"
#include "verifier/compare.h"
#include "verifier/replay.h"

namespace parity::testing {

using trace::EventKind;
using trace::TraceEvent;

LoadedTrace LoadTrace(const std::string& pipe, const std::string& dir,
                      const std::string& trace_name, const std::vector<std::string>& devices) {
  LoadedTrace l;
  Expected<ir::Program> p = ir::ParseFile(pipe);
  EXPECT_TRUE(p.ok()) << p.status().ToString();
  if (!p.ok()) return l;
  l.program = *p;
  Expected<trace::TraceFile> t = trace::ReadTraceFile(dir + "/" + trace_name + ".trace");
  EXPECT_TRUE(t.ok()) << t.status().ToString();
  if (!t.ok()) return l;
  l.h100 = *t;
  EXPECT_EQ(l.h100.header.source, "h100");
  bool device_ok = devices.empty();
  for (const std::string& d : devices) {
    device_ok = device_ok || l.h100.header.device.find(d) != std::string::npos;
  }
  EXPECT_TRUE(device_ok) << l.h100.header.device;
  EXPECT_EQ(l.h100.header.schedule_hash, ir::ContentHash(l.program))
      << trace_name << ": recorded from another version of " << pipe << ": re-record it";
  Expected<std::vector<int64_t>> params = verifier::BindTraceParams(l.program, l.h100.header);
  EXPECT_TRUE(params.ok()) << params.status().ToString();
  if (!params.ok()) return l;
  l.params = *params;
  Expected<engine::Engine> e = engine::Engine::Create(l.program, l.params, {});
  EXPECT_TRUE(e.ok()) << e.status().ToString();
  if (!e.ok()) return l;
  engine::Engine engine = std::move(e).value();
  l.sim_outcome = engine.Run().outcome;
  l.sim_events = engine.trace();
  l.ok = true;
  return l;
}

size_t Count(const std::vector<TraceEvent>& events, EventKind kind, uint8_t flag) {
  size_t n = 0;
  for (const TraceEvent& e : events) {
    if (e.kind == static_cast<uint8_t>(kind) && (e.flags & flag) == flag) ++n;
  }
  return n;
}

void ExpectCleanRun(const LoadedTrace& l) {
  EXPECT_EQ(Count(l.h100.events, EventKind::kWaitTimeout), 0u);
  EXPECT_EQ(Count(l.h100.events, EventKind::kUse, gpu::kFlagDataBad), 0u)
      << "a use read bytes that were not pattern data";
  EXPECT_EQ(Count(l.h100.events, EventKind::kUse), Count(l.sim_events, EventKind::kUse));
  EXPECT_EQ(l.sim_outcome, engine::Outcome::kCompleted);
}

size_t ExpectReplays(const LoadedTrace& l) {
  Expected<verifier::ReplayResult> r = verifier::ReplayTrace(l.program, l.params, l.h100);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  if (!r.ok()) return 0;
  EXPECT_FALSE(r->diverged) << verifier::FormatReplayResult(*r, l.h100);
  EXPECT_EQ(r->timeouts, 0u);
  EXPECT_EQ(r->after_abort, 0u);
  // Every record but the executor's end-of-run probes was matched to a model event.
  EXPECT_EQ(r->replayed + r->probes, l.h100.events.size())
      << verifier::FormatReplayResult(*r, l.h100);
  return r->inferred_completions;
}

void ExpectSameAsSimulator(const LoadedTrace& l) {
  trace::TraceFile sim;
  sim.header.schedule_hash = ir::ContentHash(l.program);
  sim.header.source = "sim";
  sim.header.device = "parity-engine";
  sim.header.schedule = l.program.name;
  sim.header.policy = "eager";
  sim.header.params = l.h100.header.params;
  sim.events = l.sim_events;
  Expected<verifier::CompareResult> c = verifier::CompareTraces(sim, l.h100);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_TRUE(c->same()) << verifier::FormatCompareResult(*c, sim, l.h100);
}

void ExpectMatchesTheModel(const LoadedTrace& l, bool uses) {
  ASSERT_TRUE(l.ok);
  ExpectCleanRun(l);
  EXPECT_EQ(Count(l.h100.events, EventKind::kUse) > 0, uses);
  EXPECT_EQ(Count(l.h100.events, EventKind::kWrite), Count(l.sim_events, EventKind::kWrite));
  EXPECT_EQ(Count(l.h100.events, EventKind::kTmaIssue), Count(l.sim_events, EventKind::kTmaIssue));
  ExpectReplays(l);
  ExpectSameAsSimulator(l);
}

}  // namespace parity::testing
