// verifier/replay: simulator traces of every bundled schedule replay under every policy; tampered
// traces diverge at the event where the tampering becomes observable; H100-style traces (without
// phase completions and deliveries, with wait timeouts) replay; a different schedule is refused.
#include "verifier/replay.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/verifier/trace_test_util.h"

namespace parity::verifier {
namespace {

using parity::testing::AsH100;
using parity::testing::IndexOf;
using parity::testing::Load;
using parity::testing::Record;
using parity::testing::Schedule;
using trace::EventKind;

constexpr uint8_t K(EventKind k) { return static_cast<uint8_t>(k); }

ReplayResult MustReplay(const Schedule& s, const trace::TraceFile& t) {
  auto r = ReplayTrace(s.program, s.params, t);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? *r : ReplayResult{};
}

engine::EngineOptions Lazy() {
  engine::EngineOptions o;
  o.policy = engine::Policy::kLazy;
  return o;
}

TEST(ReplayTest, EveryBundledScheduleReplaysUnderEveryPolicy) {
  const std::vector<std::string> files = parity::testing::BundledSchedules();
  ASSERT_GE(files.size(), 40u);  // sim/examples and pipelines/ were found
  size_t traces = 0;
  for (const std::string& f : files) {
    const Schedule s = Load(f);
    for (const engine::EngineOptions& o : parity::testing::Policies()) {
      auto rec = Record(s, o);
      ASSERT_FALSE(rec.trace.events.empty()) << f;
      const ReplayResult r = MustReplay(s, rec.trace);
      EXPECT_FALSE(r.diverged) << f << " " << engine::PolicyName(o.policy) << " seed " << o.seed
                               << "\n"
                               << FormatReplayResult(r, rec.trace);
      EXPECT_EQ(r.replayed, rec.trace.events.size()) << f;
      // The model ends where the recorded run ended (completed, deadlock or violation); a wait
      // that was woken and blocks again records no event, so a deadlock may need that silent
      // step after the trace's last event (ReplayResult::model_run_on).
      if (r.model_outcome == engine::Outcome::kRunning &&
          rec.result.outcome == engine::Outcome::kDeadlock) {
        EXPECT_EQ(r.model_run_on, engine::Outcome::kDeadlock) << f;
      } else {
        EXPECT_EQ(r.model_outcome, rec.result.outcome) << f;
      }
      ++traces;
    }
  }
  EXPECT_EQ(traces, files.size() * parity::testing::Policies().size());
}

TEST(ReplayTest, RefusesATraceOfAnotherSchedule) {
  const Schedule a = Load("sim/examples/single_tma_load.pipe");
  const Schedule b = Load("sim/examples/gemm_tma_multicast_2x2.pipe");
  auto rec = Record(a, {});
  auto r = ReplayTrace(b.program, b.params, rec.trace);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().rule(), "replay.hash-mismatch");
  EXPECT_NE(r.status().message().find("single_tma_load"), std::string::npos);
}

TEST(ReplayTest, BindsTheHeaderParams) {
  const Schedule s = Load("sim/examples/single_tma_load.pipe");
  auto rec = Record(s, {});
  auto params = BindTraceParams(s.program, rec.trace.header);
  ASSERT_TRUE(params.ok()) << params.status().ToString();
  EXPECT_EQ(*params, s.params);
  trace::TraceHeader h = rec.trace.header;
  h.params.emplace_back("NOT_A_PARAM", 3);
  auto bad = BindTraceParams(s.program, h);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().rule(), "replay.params");
}

// Lazy single_tma_load: init, fence, arrive.expect_tx, tma.issue, wait.begin (blocks),
// tma.deliver, phase.complete, wait.end, use, exit.
TEST(ReplayTest, WaitEndBeforeTheDeliveryDiverges) {
  const Schedule s = Load("sim/examples/single_tma_load.pipe");
  auto rec = Record(s, Lazy());
  trace::TraceFile t = rec.trace;
  const size_t deliver = IndexOf(t, EventKind::kTmaDeliver);
  const size_t wait_end = IndexOf(t, EventKind::kWaitEnd);
  ASSERT_LT(deliver, wait_end);
  std::swap(t.events[deliver], t.events[wait_end]);
  const ReplayResult r = MustReplay(s, t);
  ASSERT_TRUE(r.diverged);
  EXPECT_EQ(r.divergence.event_number, deliver + 1);
  EXPECT_EQ(r.divergence.observed.kind, K(EventKind::kWaitEnd));
  EXPECT_NE(r.divergence.reason.find("blocked"), std::string::npos) << r.divergence.reason;
  // The barrier still waits for the 8192 TMA bytes: the arrival is in, the bytes are not.
  EXPECT_NE(r.divergence.barrier_state.find("pending 0 of 1"), std::string::npos)
      << r.divergence.barrier_state;
  EXPECT_NE(r.divergence.barrier_state.find("tx_count 8192"), std::string::npos)
      << r.divergence.barrier_state;
  // What the model could do instead: the delivery.
  bool delivery_enabled = false;
  for (const std::string& c : r.divergence.enabled) {
    delivery_enabled = delivery_enabled || c.find("tma.deliver") != std::string::npos;
  }
  EXPECT_TRUE(delivery_enabled);
  EXPECT_EQ(r.replayed, deliver);
}

TEST(ReplayTest, DroppedDeliveryDivergesAtThePhaseItWouldComplete) {
  const Schedule s = Load("sim/examples/single_tma_load.pipe");
  auto rec = Record(s, Lazy());
  trace::TraceFile t = rec.trace;
  const size_t deliver = IndexOf(t, EventKind::kTmaDeliver);
  t.events.erase(t.events.begin() + deliver);
  const ReplayResult r = MustReplay(s, t);
  ASSERT_TRUE(r.diverged);
  EXPECT_EQ(r.divergence.event_number, deliver + 1);
  EXPECT_EQ(r.divergence.observed.kind, K(EventKind::kPhaseComplete));
}

TEST(ReplayTest, DroppedMulticastDeliveryDivergesWhereItIsMissed) {
  // One destination of a multicast never receives its bytes: the consumer of that CTA cannot
  // pass its wait; every event before that point still replays.
  const Schedule s = Load("sim/examples/gemm_tma_multicast_2x2.pipe");
  auto rec = Record(s, {});
  trace::TraceFile t = rec.trace;
  const size_t deliver = IndexOf(t, EventKind::kTmaDeliver);
  const trace::TraceEvent dropped = t.events[deliver];
  t.events.erase(t.events.begin() + deliver);
  const ReplayResult r = MustReplay(s, t);
  ASSERT_TRUE(r.diverged);
  EXPECT_GE(r.divergence.event_number, deliver + 1);
  // The first divergent event acts on the barrier (and CTA) the dropped bytes were for.
  EXPECT_EQ(r.divergence.observed.target_cta, dropped.target_cta);
  EXPECT_EQ(r.divergence.observed.object, dropped.object);
  EXPECT_EQ(r.divergence.observed.index, dropped.index);
}

TEST(ReplayTest, ChangedArriveCountDivergesAtThatEvent) {
  const Schedule s = Load("sim/examples/gemm_tma_multicast_2x2.pipe");
  auto rec = Record(s, {});
  trace::TraceFile t = rec.trace;
  const size_t arrive = IndexOf(t, EventKind::kArrive);
  t.events[arrive].value += 1;
  const ReplayResult r = MustReplay(s, t);
  ASSERT_TRUE(r.diverged);
  EXPECT_EQ(r.divergence.event_number, arrive + 1);
  EXPECT_NE(r.divergence.reason.find("value differs"), std::string::npos) << r.divergence.reason;
  EXPECT_NE(r.divergence.expected.find("arrive"), std::string::npos);
}

TEST(ReplayTest, TraceEndingMidStepDiverges) {
  // A trace cut after the arrive that completes a phase (its phase.complete missing).
  const Schedule s = Load("sim/examples/single_tma_load.pipe");
  auto rec = Record(s, {});
  trace::TraceFile t = rec.trace;
  const size_t phase = IndexOf(t, EventKind::kPhaseComplete);
  t.events.resize(phase);
  const ReplayResult r = MustReplay(s, t);
  ASSERT_TRUE(r.diverged);
  EXPECT_EQ(r.divergence.event_number, phase + 1);
  EXPECT_NE(r.divergence.expected.find("phase.complete"), std::string::npos);
}

TEST(ReplayTest, H100StyleTracesReplayWithInferredDeliveries) {
  for (const char* f : {"sim/examples/gemm_tma_multicast_2x2.pipe",
                        "sim/examples/single_tma_load.pipe", "pipelines/tma_async_gemm/gemm.pipe"}) {
    const Schedule s = Load(f);
    for (const engine::EngineOptions& o : parity::testing::Policies()) {
      auto rec = Record(s, o);
      const trace::TraceFile h = AsH100(rec.trace);
      ASSERT_LT(h.events.size(), rec.trace.events.size());
      const ReplayResult r = MustReplay(s, h);
      EXPECT_FALSE(r.diverged) << f << "\n" << FormatReplayResult(r, h);
      EXPECT_EQ(r.replayed, h.events.size());
      EXPECT_GT(r.inferred_completions, 0u);
      EXPECT_EQ(r.model_outcome, engine::Outcome::kCompleted);
    }
  }
}

// A producer issues a TMA; a consumer polls with test_wait until it sees the phase complete.
constexpr char kPolling[] = R"(schedule polling
param TILE_BYTES = 64 * 64 * 2
cluster 1x1
clusters 1
buffer tile[1] bytes TILE_BYTES
barrier full[1] count 1
tensormap tm dtype f16 dims [1024, 1024] box [64, 64] swizzle 128B
role producer threads 32 {
  init full[0]
  fence.mbarrier_init
  bar.sync 1, 64
  arrive.expect_tx full[0] bytes TILE_BYTES
  tma.load tm coords [0, 0] -> tile[0] bar full[0]
}
role consumer threads 32 {
  bar.sync 1, 64
  test_wait full[0] parity 0 -> done
  wait full[0] parity 0
  use tile[0]
}
)";

TEST(ReplayTest, H100StyleTestWaitWaitsForItsBytes) {
  auto program = ir::ParseProgram(kPolling, "polling.pipe");
  ASSERT_TRUE(program.ok()) << program.status().ToString();
  Schedule s;
  s.program = std::move(program).value();
  s.params = *ir::BindParams(s.program, {});
  // A run in which the poll saw the phase complete (the delivery landed before it).
  parity::testing::Recorded rec;
  for (uint64_t seed = 1; seed <= 64; ++seed) {
    engine::EngineOptions o;
    o.policy = engine::Policy::kRandom;
    o.seed = seed;
    rec = Record(s, o);
    ASSERT_EQ(rec.result.outcome, engine::Outcome::kCompleted) << rec.result.error.ToString();
    if (rec.trace.events[IndexOf(rec.trace, EventKind::kTestWait)].value == 1) break;
  }
  ASSERT_EQ(rec.trace.events[IndexOf(rec.trace, EventKind::kTestWait)].value, 1);
  trace::TraceFile h = AsH100(rec.trace);
  // Clock skew: the consumer's wait and test_wait recorded before the producer's issue.
  const size_t issue = IndexOf(h, EventKind::kTmaIssue);
  std::vector<trace::TraceEvent> consumer;
  for (size_t i = issue; i < h.events.size();) {
    if (h.events[i].agent == 1) {
      consumer.push_back(h.events[i]);
      h.events.erase(h.events.begin() + i);
    } else {
      ++i;
    }
  }
  h.events.insert(h.events.begin() + issue, consumer.begin(), consumer.end());
  const ReplayResult r = MustReplay(s, h);
  EXPECT_FALSE(r.diverged) << FormatReplayResult(r, h);
  EXPECT_EQ(r.inferred_completions, 1u);

  // A test_wait that saw a phase complete that never completes (the TMA issue removed, and
  // the producer's exit) diverges at that test_wait.
  trace::TraceFile bad = h;
  bad.events.erase(bad.events.begin() + IndexOf(bad, EventKind::kTmaIssue));
  for (size_t i = 0; i < bad.events.size(); ++i) {
    if (bad.events[i].agent == 0 && bad.events[i].kind == K(EventKind::kExit)) {
      bad.events.erase(bad.events.begin() + static_cast<std::ptrdiff_t>(i));
      break;
    }
  }
  const ReplayResult rb = MustReplay(s, bad);
  ASSERT_TRUE(rb.diverged);
  EXPECT_EQ(rb.divergence.observed.agent, 1) << FormatReplayResult(rb, bad);
  EXPECT_EQ(rb.divergence.observed.kind, K(EventKind::kTestWait)) << FormatReplayResult(rb, bad);
  EXPECT_NE(rb.divergence.reason.find("test_wait returned 1"), std::string::npos)
      << rb.divergence.reason;
  EXPECT_NE(rb.divergence.barrier_state.find("tx_count 8192"), std::string::npos);
}

TEST(ReplayTest, H100StyleProgramOrderSwapDiverges) {
  // The producer's tma.issue moved after its wait: each agent's program order is fixed, so the
  // model's next step of that agent is the issue, not the wait.
  const Schedule s = Load("sim/examples/single_tma_load.pipe");
  auto rec = Record(s, Lazy());
  trace::TraceFile h = AsH100(rec.trace);
  const size_t issue = IndexOf(h, EventKind::kTmaIssue);
  const size_t wait_end = IndexOf(h, EventKind::kWaitEnd);
  ASSERT_EQ(issue + 2, wait_end);  // tma.issue, wait.begin, wait.end
  const trace::TraceEvent issue_ev = h.events[issue];
  h.events.erase(h.events.begin() + issue);
  h.events.insert(h.events.begin() + wait_end, issue_ev);
  const ReplayResult r = MustReplay(s, h);
  ASSERT_TRUE(r.diverged);
  EXPECT_EQ(r.divergence.event_number, issue + 1) << FormatReplayResult(r, h);
  EXPECT_EQ(r.divergence.observed.kind, K(EventKind::kWaitBegin));
  EXPECT_NE(r.divergence.expected.find("tma.issue"), std::string::npos);
}

TEST(ReplayTest, H100StyleCrossAgentOrderIsNotTrusted) {
  // An executor trace merges per-agent buffers by calibrated clock64, so the order of two
  // agents' records is only approximate: a consumer's wait.begin/wait.end recorded before the
  // producer's TMA issue that feeds it is replayed in the order the model allows (the wait ends
  // after the issue and an inferred delivery), not reported as a divergence.
  const Schedule s = Load("sim/examples/gemm_tma_multicast_2x2.pipe");
  auto rec = Record(s, {});
  trace::TraceFile h = AsH100(rec.trace);
  const size_t issue = IndexOf(h, EventKind::kTmaIssue);
  // The first wait.end on a barrier of a CTA this first TMA feeds, after the issue.
  size_t wait_end = h.events.size();
  for (size_t i = issue + 1; i < h.events.size(); ++i) {
    const trace::TraceEvent& e = h.events[i];
    if (e.kind == K(EventKind::kWaitEnd) && e.cta == h.events[issue].target_cta &&
        e.object == 0 /* full */) {
      wait_end = i;
      break;
    }
  }
  ASSERT_LT(wait_end, h.events.size());
  size_t wait_begin = wait_end;
  while (wait_begin-- > 0) {
    const trace::TraceEvent& e = h.events[wait_begin];
    if (e.kind == K(EventKind::kWaitBegin) && e.cta == h.events[wait_end].cta &&
        e.agent == h.events[wait_end].agent) {
      break;
    }
  }
  ASSERT_LT(wait_begin, wait_end);
  // Move the consumer's wait.begin/wait.end pair before the producer's issue.
  const trace::TraceEvent wb = h.events[wait_begin], we = h.events[wait_end];
  h.events.erase(h.events.begin() + wait_end);
  h.events.erase(h.events.begin() + wait_begin);
  const size_t at = std::min(wait_begin, issue);
  h.events.insert(h.events.begin() + at, {wb, we});
  const ReplayResult r = MustReplay(s, h);
  EXPECT_FALSE(r.diverged) << FormatReplayResult(r, h);
  EXPECT_EQ(r.replayed, h.events.size());
  EXPECT_GT(r.inferred_completions, 0u);
}

// A deadlocking schedule as the GPU reports it: every agent still waiting times out.
trace::TraceFile WithTimeouts(const parity::testing::Recorded& rec, const engine::Engine& eng,
                              bool flip_parity) {
  trace::TraceFile h = AsH100(rec.trace);
  for (const engine::BlockedAgent& b : rec.result.deadlock.blocked) {
    const engine::AgentInfo& info = eng.agent_info(b.agent);
    trace::TraceEvent e{};
    e.time = h.events.back().time + 1000;
    e.kind = K(EventKind::kWaitTimeout);
    e.cluster = static_cast<uint16_t>(info.cluster);
    e.cta = static_cast<uint8_t>(info.cta);
    e.target_cta = static_cast<uint8_t>(b.cta);
    e.agent = static_cast<uint16_t>(info.index_in_cta);
    e.object = static_cast<uint16_t>(b.barrier);
    e.index = static_cast<uint16_t>(b.barrier_index);
    e.parity = static_cast<uint8_t>(flip_parity ? 1 - b.parity : b.parity);
    h.events.push_back(e);
  }
  return h;
}

TEST(ReplayTest, WaitTimeoutsOfADeadlockAreConfirmed) {
  const Schedule s = Load("sim/examples/gemm_wrong_producer_phase.pipe");
  auto rec = Record(s, {});
  ASSERT_EQ(rec.result.outcome, engine::Outcome::kDeadlock);
  auto eng = engine::Engine::Create(s.program, s.params, {});
  ASSERT_TRUE(eng.ok());
  const size_t blocked = rec.result.deadlock.blocked.size();
  ASSERT_GT(blocked, 0u);
  const trace::TraceFile h = WithTimeouts(rec, *eng, false);
  const ReplayResult r = MustReplay(s, h);
  EXPECT_FALSE(r.diverged) << FormatReplayResult(r, h);
  EXPECT_EQ(r.timeouts, blocked);

  // A timeout on a wait the model says is satisfied (the other parity) diverges there.
  const trace::TraceFile bad = WithTimeouts(rec, *eng, true);
  const ReplayResult rb = MustReplay(s, bad);
  ASSERT_TRUE(rb.diverged);
  EXPECT_EQ(rb.divergence.observed.kind, K(EventKind::kWaitTimeout));
  EXPECT_EQ(rb.divergence.event_number, h.events.size() - blocked + 1);
  EXPECT_NE(rb.divergence.reason.find("already satisfied"), std::string::npos);
}

}  // namespace
}  // namespace parity::verifier

namespace parity::verifier {
namespace {

// The committed H100 traces (traces/h100/, recorded by gpu:parity_gpu) replay on the model.
struct H100Case {
  const char* name;
  size_t timeouts;  // the broken examples hang: every agent's bounded wait gave up
};

TEST(ReplayH100Test, CommittedTracesReplay) {
  for (const H100Case& c : {H100Case{"single_tma_load", 0}, H100Case{"gemm_tma_multicast_2x2", 0},
                            H100Case{"gemm_empty_count_high", 12},
                            H100Case{"gemm_tx_overcount", 12},
                            H100Case{"gemm_wrong_producer_phase", 12}}) {
    const std::string name = c.name;
    const parity::testing::Schedule s = parity::testing::Load("sim/examples/" + name + ".pipe");
    auto t = trace::ReadTraceFile("traces/h100/" + name + ".trace");
    ASSERT_TRUE(t.ok()) << t.status().ToString();
    ASSERT_EQ(t->header.source, "h100");
    auto params = BindTraceParams(s.program, t->header);
    ASSERT_TRUE(params.ok()) << params.status().ToString();
    auto r = ReplayTrace(s.program, *params, *t);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_FALSE(r->diverged) << name << "\n" << FormatReplayResult(*r, *t);
    EXPECT_EQ(r->timeouts, c.timeouts) << name;
    EXPECT_EQ(r->after_abort, 0u) << name;
    EXPECT_GT(r->replayed, t->events.size() / 2) << name;
    // The last line says what the model's state means for the run the GPU made: a hang whose
    // waits the model cannot get past is the schedule's deadlock; a completed GPU run whose
    // trace leaves out the exits is a model that could still go on.
    const std::string text = FormatReplayResult(*r, *t);
    EXPECT_EQ(text.find("the model is now: running"), std::string::npos) << text;
    if (c.timeouts > 0) {
      // Replayed or run on, the model ends in the hang: the schedule's own deadlock.
      EXPECT_EQ(r->model_agents_blocked, c.timeouts) << name;
      EXPECT_TRUE(r->model_outcome == engine::Outcome::kDeadlock ||
                  r->model_run_on == engine::Outcome::kDeadlock)
          << name;
      EXPECT_NE(text.find("the GPU's hang is a deadlock of the schedule itself"),
                std::string::npos)
          << text;
    } else {
      EXPECT_EQ(r->model_outcome, engine::Outcome::kRunning) << name;
      EXPECT_EQ(r->model_run_on, engine::Outcome::kCompleted) << name;
      EXPECT_NE(text.find("not finished ("), std::string::npos) << text;
      EXPECT_NE(text.find("it completes (an H100 trace leaves out the exits"), std::string::npos)
          << text;
    }
  }
}

// The replays of the H100 traces in `dir` (traces/h100/<sub>__<name>.trace, recorded by
// traces/h100/record_pipelines.sh), each of `schedules`/<sub>/<name>.pipe, by file stem.
struct RecordedReplay {
  std::string stem, name;
  trace::TraceFile trace;
  ReplayResult result;
};
std::vector<RecordedReplay> ReplayRecorded(const std::string& dir, const std::string& schedules) {
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() == ".trace") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  std::vector<RecordedReplay> out;
  for (const auto& f : files) {
    RecordedReplay r;
    r.stem = f.stem().string();
    SCOPED_TRACE(r.stem);
    const size_t sep = r.stem.find("__");
    EXPECT_NE(sep, std::string::npos);
    if (sep == std::string::npos) continue;
    r.name = r.stem.substr(sep + 2);
    const parity::testing::Schedule s =
        parity::testing::Load(schedules + "/" + r.stem.substr(0, sep) + "/" + r.name + ".pipe");
    auto t = trace::ReadTraceFile(f.string());
    EXPECT_TRUE(t.ok()) << t.status().ToString();
    if (!t.ok()) continue;
    EXPECT_EQ(t->header.source, "h100");
    auto params = BindTraceParams(s.program, t->header);
    EXPECT_TRUE(params.ok()) << params.status().ToString();
    if (!params.ok()) continue;
    auto res = ReplayTrace(s.program, *params, *t);
    EXPECT_TRUE(res.ok()) << res.status().ToString();
    if (!res.ok()) continue;
    r.trace = std::move(*t);
    r.result = std::move(*res);
    out.push_back(std::move(r));
  }
  return out;
}

// Every pipeline of pipelines/ as the H100 ran it (traces/h100/pipelines/; the three whose kernel
// trapped and the one stuck in bar.sync left no trace). A correct pipeline replays completely; a
// broken one either replays completely (its race did not show) or the model stops at a protocol
// violation the hardware does not check (the replay names the rule): never at an event the
// model cannot explain otherwise.
TEST(ReplayH100Test, EveryRecordedPipelineReplays) {
  const std::vector<RecordedReplay> all = ReplayRecorded("traces/h100/pipelines", "pipelines");
  ASSERT_EQ(all.size(), 37u);
  size_t correct = 0, broken_complete = 0, broken_violation = 0;
  for (const RecordedReplay& r : all) {
    SCOPED_TRACE(r.stem);
    if (r.name.rfind("bad_", 0) != 0) {
      EXPECT_FALSE(r.result.diverged) << FormatReplayResult(r.result, r.trace);
      EXPECT_EQ(r.result.timeouts, 0u);
      ++correct;
    } else if (!r.result.diverged) {
      ++broken_complete;
    } else {
      EXPECT_EQ(r.result.divergence.reason.rfind("the model reports ", 0), 0u)
          << FormatReplayResult(r.result, r.trace);
      ++broken_violation;
    }
  }
  std::printf("%zu correct pipelines replayed; broken: %zu replayed completely, %zu stopped at a "
              "protocol violation\n", correct, broken_complete, broken_violation);
  // 14: tma_store/no_tail_wait.pipe (an exit before the stores read their source, A1004) is
  // correct on the H100 (traces/a1003/) and replays as it ran; so does FA3's O-over-V epilogue,
  // whose EpilogueBarrier serves two thread counts (recorded once the executor mapped both).
  EXPECT_EQ(correct, 14u);
  EXPECT_GE(broken_violation, 1u);
}

// Every schedule of sim/examples/explore and sim/examples/rules as the H100 ran it
// (traces/h100/examples/): all replay completely, the broken ones included (their hangs'
// timeouts are confirmed by the model; rules that judge a whole run, such as a use before the
// bytes landed, are not replay's to flag).
TEST(ReplayH100Test, EveryRecordedExampleReplays) {
  const std::vector<RecordedReplay> all = ReplayRecorded("traces/h100/examples", "sim/examples");
  ASSERT_EQ(all.size(), 14u);
  size_t timeouts = 0, eager = 0;
  for (const RecordedReplay& r : all) {
    SCOPED_TRACE(r.stem);
    EXPECT_FALSE(r.result.diverged) << FormatReplayResult(r.result, r.trace);
    timeouts += r.result.timeouts;
    eager += r.result.eager_completions ? 1 : 0;
  }
  EXPECT_EQ(timeouts, 4u);  // early_bytes_spill, multicast_disagreement, producer_exits_early, tx_overcount
  EXPECT_EQ(eager, 1u);     // early_bytes_spill: its bytes landed before the arrive, as below
}

// single_tma_load/bad_count1_arrive_without_expect on the H100: the TMA's bytes landed before
// the plain arrive (tx-count -8192), so the arrive could not complete the phase and the wait
// timed out. Completing the unrecorded delivery lazily (only when needed) would complete the
// phase at the arrive; the replay finds the eager order instead.
TEST(ReplayH100Test, DeliveryBeforeTheArriveIsFoundEagerly) {
  const parity::testing::Schedule s =
      parity::testing::Load("pipelines/single_tma_load/bad_count1_arrive_without_expect.pipe");
  auto t = trace::ReadTraceFile(
      "traces/h100/pipelines/single_tma_load__bad_count1_arrive_without_expect.trace");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  auto params = BindTraceParams(s.program, t->header);
  ASSERT_TRUE(params.ok()) << params.status().ToString();
  auto r = ReplayTrace(s.program, *params, *t);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_FALSE(r->diverged) << FormatReplayResult(*r, *t);
  EXPECT_TRUE(r->eager_completions);
  EXPECT_EQ(r->timeouts, 1u);
  EXPECT_EQ(r->inferred_completions, 1u);
  EXPECT_EQ(r->model_outcome, engine::Outcome::kDeadlock);
}

TEST(ReplayH100Test, TamperedH100TraceDiverges) {
  // Drop the first arrive.expect_tx of the multicast GEMM: its producer's next recorded
  // operation is then not what the model's next step of that agent is.
  const parity::testing::Schedule s =
      parity::testing::Load("sim/examples/gemm_tma_multicast_2x2.pipe");
  auto t = trace::ReadTraceFile("traces/h100/gemm_tma_multicast_2x2.trace");
  ASSERT_TRUE(t.ok());
  const size_t aet = parity::testing::IndexOf(*t, trace::EventKind::kArriveExpectTx);
  const trace::TraceEvent dropped = t->events[aet];
  t->events.erase(t->events.begin() + aet);
  auto params = BindTraceParams(s.program, t->header);
  ASSERT_TRUE(params.ok());
  auto r = ReplayTrace(s.program, *params, *t);
  ASSERT_TRUE(r.ok());
  ASSERT_TRUE(r->diverged);
  // Reported at that producer's next record (each agent's records are in program order).
  size_t next = aet;
  while (t->events[next].cta != dropped.cta || t->events[next].agent != dropped.agent) {
    ++next;
  }
  EXPECT_EQ(r->divergence.event_number, next + 1) << FormatReplayResult(*r, *t);
  EXPECT_EQ(r->divergence.observed.kind, static_cast<uint8_t>(trace::EventKind::kTmaIssue));
  EXPECT_NE(r->divergence.expected.find("arrive.expect_tx"), std::string::npos)
      << FormatReplayResult(*r, *t);
}

// The executor records the issue of cp.async.mbarrier.arrive and st.async but not their
// asynchronous completions (the deferred arrive, the remote complete_tx); replay infers them only
// where the model has them in flight. These tamperings check that the inference does not stand in
// for a record that is missing.
parity::testing::Schedule LoadNewOp(const std::string& pipe) {
  return parity::testing::Load("pipelines/" + pipe + ".pipe");
}

// Removes every record of (cta, agent) from trace index `from` on.
void TruncateAgent(trace::TraceFile& t, size_t from, uint8_t cta, uint16_t agent) {
  std::vector<trace::TraceEvent> kept(t.events.begin(), t.events.begin() + from);
  for (size_t i = from; i < t.events.size(); ++i) {
    const trace::TraceEvent& e = t.events[i];
    if (e.cta != cta || e.agent != agent) kept.push_back(e);
  }
  t.events = std::move(kept);
}

TEST(ReplayH100Test, DeferredArriveDoesNotReplaceTheProducersOwnArrive) {
  // cp_async_arrive_on: the producer's cp.async.mbarrier.arrive (no .noinc) raises filled[0]'s
  // pending count by one and its deferred arrive lowers it again (PTX ISA,
  // "cp.async.mbarrier.arrive"): net zero in the model's per-warp form. Cut the producer's records right after that cp.async.arrive, so its plain
  // `arrive filled[0] count 32` never happens: the consumers' wait on filled[0] cannot end, even
  // with the deferred arrive inferred.
  const parity::testing::Schedule s = LoadNewOp("cuda_pipeline/cp_async_arrive_on");
  auto t = trace::ReadTraceFile("traces/h100/cuda_pipeline__cp_async_arrive_on.trace");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  const size_t cpa = parity::testing::IndexOf(*t, trace::EventKind::kCpAsyncArrive);
  const trace::TraceEvent issue = t->events[cpa];
  TruncateAgent(*t, cpa + 1, issue.cta, issue.agent);
  auto params = BindTraceParams(s.program, t->header);
  ASSERT_TRUE(params.ok());
  auto r = ReplayTrace(s.program, *params, *t);
  ASSERT_TRUE(r.ok());
  ASSERT_TRUE(r->diverged);
  const trace::TraceEvent& d = r->divergence.observed;
  EXPECT_EQ(d.kind, static_cast<uint8_t>(trace::EventKind::kWaitEnd)) << FormatReplayResult(*r, *t);
  EXPECT_EQ(d.object, issue.object);
  EXPECT_EQ(d.index, issue.index);
  EXPECT_NE(d.agent, issue.agent);
  // 128 - 3 consumer warps x 32, +1 and -1 for the cp.async arrive-on: the producer's 32 left.
  EXPECT_NE(r->divergence.barrier_state.find("pending 32 of 128"), std::string::npos)
      << FormatReplayResult(*r, *t);
  EXPECT_GE(r->inferred_completions, 2u) << "the cp.async copy and its deferred arrive";
}

TEST(ReplayH100Test, StAsyncDeliveryIsNotInferredWithoutItsIssue) {
  // st_async_ring: cut CTA 2's producer before its first st.async. The complete_tx it would have
  // delivered into CTA 3's filled[0] is then never in flight, so CTA 3's wait cannot end.
  const parity::testing::Schedule s = LoadNewOp("st_async_ring/ring");
  auto t = trace::ReadTraceFile("traces/h100/st_async_ring__ring.trace");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  size_t st = t->events.size();
  for (size_t i = 0; i < t->events.size(); ++i) {
    const trace::TraceEvent& e = t->events[i];
    if (e.kind == static_cast<uint8_t>(trace::EventKind::kStAsync) && e.cta == 2) {
      st = i;
      break;
    }
  }
  ASSERT_LT(st, t->events.size());
  const trace::TraceEvent issue = t->events[st];
  ASSERT_EQ(issue.target_cta, 3);
  TruncateAgent(*t, st, issue.cta, issue.agent);
  auto params = BindTraceParams(s.program, t->header);
  ASSERT_TRUE(params.ok());
  auto r = ReplayTrace(s.program, *params, *t);
  ASSERT_TRUE(r.ok());
  ASSERT_TRUE(r->diverged);
  const trace::TraceEvent& d = r->divergence.observed;
  EXPECT_EQ(d.kind, static_cast<uint8_t>(trace::EventKind::kWaitEnd)) << FormatReplayResult(*r, *t);
  EXPECT_EQ(d.cta, 3);
  EXPECT_EQ(d.object, issue.object);
  EXPECT_EQ(d.index, issue.index);
}

}  // namespace
}  // namespace parity::verifier
