#include "sim/engine/engine.h"

#include <algorithm>
#include <deque>
#include <set>
#include <string>
#include <unordered_set>
#include <vector>

#include "gtest/gtest.h"
#include "sim/ir/parser.h"
#include "sim/model/codes.h"
#include "sim/trace/event.h"
#include "sim/trace/trace_file.h"
#include "sim/testing/pipelines.h"
#include "sim/testing/program_builder.h"

namespace parity::engine {
namespace {

using testing::GemmPipeline;
using testing::GemmPipelineShape;
using testing::ProgramBuilder;
using trace::EventKind;

std::vector<int64_t> Defaults(const ir::Program& p) {
  std::vector<int64_t> v;
  for (const auto& param : p.params) v.push_back(param.default_value);
  return v;
}

std::vector<EngineOptions> AllPolicies() {
  std::vector<EngineOptions> out;
  for (Policy p : {Policy::kEager, Policy::kLazy, Policy::kRoundRobin}) {
    EngineOptions o;
    o.policy = p;
    out.push_back(o);
  }
  for (uint64_t seed = 1; seed <= 12; ++seed) {
    EngineOptions o;
    o.policy = Policy::kRandom;
    o.seed = seed;
    out.push_back(o);
  }
  return out;
}

std::string Name(const EngineOptions& o) {
  return std::string(PolicyName(o.policy)) + " seed=" + std::to_string(o.seed);
}

size_t Count(const Engine& e, EventKind k) {
  return std::count_if(e.trace().begin(), e.trace().end(),
                       [&](const trace::TraceEvent& ev) { return ev.kind == static_cast<uint8_t>(k); });
}

// One CTA: the producer initialises full[0] (count 1), expects the 8 KiB box and issues one TMA
// load; the consumer waits on parity 0 and reads the buffer.
struct SingleLoad {
  ProgramBuilder b{"single_tma"};
  uint32_t full = 0;
  int line_wait = 40;
  explicit SingleLoad(int64_t barrier_count = 1, int64_t expect_bytes = 64 * 64 * 2) {
    b.Cluster(1, 1);
    const uint32_t buf = b.Buffer("A", 1, 64 * 64 * 2);
    full = b.Barrier("full", b.C(1), b.C(barrier_count));
    const uint32_t tm = b.TensorMap2D("tm", 1024, 1024, 64, 64);
    ir::Role& prod = b.Role("producer");
    ir::MbarrierArrive expect;
    expect.bar = b.Bar(full, b.C(0));
    expect.expect_tx = b.C(expect_bytes);
    ir::TmaLoad load;
    load.tensor_map = tm;
    load.coords = {b.C(0), b.C(64)};
    load.dst = b.Buf(buf, b.C(0));
    load.bar = b.Bar(full, b.C(0));
    prod.body = {ProgramBuilder::Op(ir::MbarrierInit{b.Bar(full, b.C(0)), ir::kNoExpr}),
                 ProgramBuilder::Op(ir::Fence{ir::Fence::Kind::kMbarrierInit}),
                 ProgramBuilder::Op(ir::ClusterArrive{}), ProgramBuilder::Op(ir::ClusterWait{}),
                 ProgramBuilder::Op(expect), ProgramBuilder::Op(load)};
    ir::Role& cons = b.Role("consumer", 1, 128);
    ir::MbarrierWait wait;
    wait.bar = b.Bar(full, b.C(0));
    wait.parity = b.C(0);
    cons.body = {ProgramBuilder::Op(ir::ClusterArrive{}), ProgramBuilder::Op(ir::ClusterWait{}),
                 ProgramBuilder::Op(wait, line_wait),
                 ProgramBuilder::Op(ir::BufferAccess{b.Buf(buf, b.C(0)), false})};
  }
};

TEST(EngineTest, SingleTmaLoadCompletesUnderEveryPolicy) {
  SingleLoad s;
  for (const EngineOptions& o : AllPolicies()) {
    auto e = Engine::Create(s.b.program(), {}, o);
    ASSERT_TRUE(e.ok()) << e.status().ToString();
    RunResult r = e->Run();
    ASSERT_EQ(r.outcome, Outcome::kCompleted) << Name(o);
    const model::MbarrierState& st = e->barrier_state(0, s.full, 0);
    EXPECT_EQ(st.phase, 1u) << Name(o);
    EXPECT_EQ(st.pending_count, 1);  // reset to the expected count for phase 1
    EXPECT_EQ(st.tx_count, 0);
    EXPECT_EQ(Count(*e, EventKind::kTmaIssue), 1u);
    EXPECT_EQ(Count(*e, EventKind::kTmaDeliver), 1u);
    EXPECT_EQ(Count(*e, EventKind::kPhaseComplete), 1u);
    EXPECT_EQ(Count(*e, EventKind::kExit), 2u);
    // The delivery credits exactly the box bytes (64 x 64 f16 = 8192) on full[0].
    for (const auto& ev : e->trace()) {
      if (ev.kind == static_cast<uint8_t>(EventKind::kTmaDeliver)) {
        EXPECT_EQ(ev.value, 8192);
        EXPECT_EQ(ev.object, s.full);
        EXPECT_EQ(ev.agent, trace::kNoAgent);
      }
    }
    // Logical time is strictly increasing, one tick per event.
    for (size_t i = 0; i < e->trace().size(); ++i) EXPECT_EQ(e->trace()[i].time, i);
    EXPECT_EQ(r.events, e->trace().size());
  }
}

TEST(EngineTest, CountTooHighDeadlocksWithBarrierState) {
  SingleLoad s(/*barrier_count=*/2);
  for (const EngineOptions& o : AllPolicies()) {
    auto e = Engine::Create(s.b.program(), {}, o);
    ASSERT_TRUE(e.ok());
    RunResult r = e->Run();
    ASSERT_EQ(r.outcome, Outcome::kDeadlock) << Name(o);
    ASSERT_EQ(r.deadlock.blocked.size(), 1u);
    const BlockedAgent& bl = r.deadlock.blocked[0];
    EXPECT_EQ(e->role_name(bl.agent), "consumer");
    EXPECT_EQ(bl.wait, WaitKind::kMbarrierParity);
    EXPECT_EQ(bl.barrier, s.full);
    EXPECT_EQ(bl.barrier_index, 0u);
    EXPECT_EQ(bl.cta, 0u);
    EXPECT_EQ(bl.parity, 0u);
    EXPECT_EQ(bl.state.phase, 0u);
    EXPECT_EQ(bl.state.pending_count, 1);  // one of the two arrivals never came
    EXPECT_EQ(bl.state.expected_count, 2);
    EXPECT_EQ(bl.state.tx_count, 0);       // the bytes did land
    EXPECT_EQ(bl.where.line, s.line_wait);
    ASSERT_EQ(r.deadlock.exited.size(), 1u);
    EXPECT_EQ(e->role_name(r.deadlock.exited[0]), "producer");
  }
}

TEST(EngineTest, OverArrivalIsAViolationWithItsEvent) {
  SingleLoad s;
  // The consumer arrives on full[0] with count 2 after its wait: phase 1 has 1 pending.
  ir::MbarrierArrive extra;
  extra.bar = s.b.Bar(s.full, s.b.C(0));
  extra.count = s.b.C(2);
  s.b.program().roles[1].body.push_back(ProgramBuilder::Op(extra, 77));
  auto e = Engine::Create(s.b.program(), {});
  ASSERT_TRUE(e.ok());
  RunResult r = e->Run();
  ASSERT_EQ(r.outcome, Outcome::kViolation);
  ASSERT_TRUE(r.violation.has_value());
  EXPECT_EQ(r.violation->violation.code, model::Code::kMbarrierOverArrival);
  EXPECT_EQ(r.violation->violation.value, 2);
  EXPECT_EQ(r.violation->where.line, 77);
  EXPECT_EQ(e->role_name(r.violation->agent), "consumer");
  EXPECT_EQ(r.violation->event.kind, static_cast<uint8_t>(EventKind::kViolation));
  EXPECT_EQ(e->trace().back().kind, static_cast<uint8_t>(EventKind::kViolation));
}

TEST(EngineTest, MulticastTwoCtasCompleteAndCountDeliveries) {
  GemmPipelineShape g;
  g.cluster_m = 2;
  g.cluster_n = 1;
  g.stages = 2;
  g.k_tiles = 6;
  const ir::Program p = GemmPipeline(g);
  uint64_t events = 0;
  for (const EngineOptions& o : AllPolicies()) {
    auto e = Engine::Create(p, Defaults(p), o);
    ASSERT_TRUE(e.ok()) << e.status().ToString();
    RunResult r = e->Run();
    ASSERT_EQ(r.outcome, Outcome::kCompleted)
        << Name(o) << " " << (r.outcome == Outcome::kError ? r.error.ToString() : "");
    // Per k-tile and CTA: one A slice (multicast to itself only, N = 1) and one B slice to both
    // CTAs: 3 deliveries issued per CTA per k-tile, 2 TMA issues.
    EXPECT_EQ(Count(*e, EventKind::kTmaIssue), 2u * 2 * 6) << Name(o);
    EXPECT_EQ(Count(*e, EventKind::kTmaDeliver), 3u * 2 * 6) << Name(o);
    // full and empty phases: 6 per CTA each; empty starts "free" (producer waits parity 1).
    EXPECT_EQ(Count(*e, EventKind::kPhaseComplete), 2u * 2 * 6 + 0) << Name(o);
    for (uint32_t cta = 0; cta < 2; ++cta) {
      for (uint32_t s = 0; s < 2; ++s) {
        EXPECT_EQ(e->barrier_state(cta, 0, s).phase, 3u);  // full: 6 tiles over 2 stages
        EXPECT_EQ(e->barrier_state(cta, 1, s).phase, 3u);  // empty: every tile released
        EXPECT_EQ(e->barrier_state(cta, 1, s).expected_count, 2);  // (2 + 1 - 1) * 1
      }
    }
    // The same events happen under every interleaving (only their order differs).
    if (events == 0) events = r.events;
    EXPECT_EQ(r.events, events) << Name(o);
  }
}

TEST(EngineTest, TxOverCountDeadlocksOnTheRightBarrierAndCta) {
  GemmPipelineShape g;
  g.cluster_m = 2;
  g.stages = 2;
  g.k_tiles = 4;
  g.extra_tx_cta = 1;  // CTA 1 expects 16 KiB more than lands
  const ir::Program p = GemmPipeline(g);
  for (const EngineOptions& o : AllPolicies()) {
    auto e = Engine::Create(p, Defaults(p), o);
    ASSERT_TRUE(e.ok());
    RunResult r = e->Run();
    ASSERT_EQ(r.outcome, Outcome::kDeadlock) << Name(o);
    // The consumer of CTA 1 waits on full[0] of CTA 1 (parity 0): all arrivals came, the extra
    // 16384 bytes never will.
    bool found = false;
    for (const BlockedAgent& bl : r.deadlock.blocked) {
      const AgentInfo& info = e->agent_info(bl.agent);
      if (e->role_name(bl.agent) == "consumer" && info.cta == 1) {
        found = true;
        EXPECT_EQ(bl.wait, WaitKind::kMbarrierParity);
        EXPECT_EQ(bl.barrier, 0u);  // full
        EXPECT_EQ(bl.barrier_index, 0u);
        EXPECT_EQ(bl.cta, 1u);
        EXPECT_EQ(bl.parity, 0u);
        EXPECT_EQ(bl.state.phase, 0u);
        EXPECT_EQ(bl.state.pending_count, 0);
        EXPECT_EQ(bl.state.tx_count, 128 * 64 * 2);
      }
      // Nobody in CTA 0 waits on a full barrier that has bytes outstanding.
      if (info.cta == 0 && bl.wait == WaitKind::kMbarrierParity && bl.barrier == 0) {
        EXPECT_EQ(bl.state.tx_count, 0);
      }
    }
    EXPECT_TRUE(found) << Name(o);
  }
}

TEST(EngineTest, WrongProducerStartingParityDeadlocks) {
  GemmPipelineShape g;
  g.cluster_m = 2;
  g.stages = 2;
  g.k_tiles = 4;
  g.producer_parity_starts_at_0 = true;  // waits for a phase 0 completion that needs consumers
  const ir::Program p = GemmPipeline(g);
  auto e = Engine::Create(p, Defaults(p));
  ASSERT_TRUE(e.ok());
  RunResult r = e->Run();
  ASSERT_EQ(r.outcome, Outcome::kDeadlock);
  EXPECT_EQ(r.deadlock.exited.size(), 0u);
  EXPECT_EQ(r.deadlock.blocked.size(), 4u);  // 2 producers on empty, 2 consumers on full
  for (const BlockedAgent& bl : r.deadlock.blocked) {
    EXPECT_EQ(bl.wait, WaitKind::kMbarrierParity);
    EXPECT_EQ(bl.barrier, e->role_name(bl.agent) == "producer" ? 1u : 0u);
    EXPECT_EQ(bl.state.phase, 0u);
  }
}

// Engine assignment copies the run result, also between an engine whose run has ended (with a
// deadlock report) and one still running (whose result the copy shortcuts: Engine::CopyState).
TEST(EngineTest, AssignmentCopiesTheRunResultBothWays) {
  GemmPipelineShape g;
  g.cluster_m = 2;
  g.stages = 2;
  g.k_tiles = 4;
  g.producer_parity_starts_at_0 = true;
  const ir::Program p = GemmPipeline(g);
  auto e = Engine::Create(p, Defaults(p));
  ASSERT_TRUE(e.ok());
  const Engine start = *e;
  std::vector<Choice> choices;
  e->Choices(&choices);
  ASSERT_FALSE(choices.empty());
  e->Step(choices.front());
  const Engine one_step = *e;
  ASSERT_EQ(e->Run().outcome, Outcome::kDeadlock);

  Engine x = start;
  x = *e;  // running <- ended
  EXPECT_EQ(x.outcome(), Outcome::kDeadlock);
  EXPECT_EQ(x.result().outcome, Outcome::kDeadlock);
  EXPECT_EQ(x.result().deadlock.blocked.size(), 4u);
  EXPECT_EQ(x.result().steps, e->result().steps);
  x = one_step;  // ended <- running
  EXPECT_EQ(x.outcome(), Outcome::kRunning);
  EXPECT_EQ(x.result().outcome, one_step.result().outcome);
  EXPECT_EQ(x.result().steps, one_step.result().steps);
  EXPECT_TRUE(x.result().deadlock.blocked.empty());
  EXPECT_EQ(x.StateHash(), one_step.StateHash());
  x = start;  // running <- running
  EXPECT_EQ(x.StateHash(), start.StateHash());
  EXPECT_EQ(x.result().steps, start.result().steps);
  const RunResult r = x.Run();
  EXPECT_EQ(r.outcome, Outcome::kDeadlock);
  EXPECT_EQ(r.deadlock.blocked.size(), 4u);
}

// The state block (one memcpy per copy) between engines whose blocks were laid out by different
// Create calls, an isolated copy, and an engine of another program: the copy is whole, and the
// source stays unchanged.
TEST(EngineTest, StateCopiesBetweenEnginesOfSeparateCreates) {
  GemmPipelineShape g;
  g.cluster_m = 2;
  g.stages = 2;
  g.k_tiles = 4;
  const ir::Program p = GemmPipeline(g);
  auto a = Engine::Create(p, Defaults(p));
  auto b = Engine::Create(p, Defaults(p));
  ASSERT_TRUE(a.ok() && b.ok());
  std::vector<Choice> choices;
  for (int i = 0; i < 7; ++i) {
    a->Choices(&choices);
    ASSERT_FALSE(choices.empty());
    a->Step(choices.back());
  }
  const uint64_t a_hash = a->StateHash(), a_fp = a->Fingerprint();
  ASSERT_NE(a_hash, b->StateHash());
  b->AssignState(*a);  // another Create: same shape, another layout id
  EXPECT_EQ(b->StateHash(), a_hash);
  EXPECT_EQ(b->Fingerprint(), a_fp);
  EXPECT_EQ(b->in_flight(), a->in_flight());
  Engine iso = a->IsolatedCopy();
  EXPECT_EQ(iso.StateHash(), a_hash);
  // Both go on independently, to the same end.
  const RunResult ra = a->Run(), rb = b->Run();
  EXPECT_EQ(ra.outcome, rb.outcome);
  EXPECT_EQ(ra.steps, rb.steps);
  EXPECT_EQ(iso.StateHash(), a_hash);  // the copy's block is its own

  GemmPipelineShape g2 = g;
  g2.cluster_m = 1;
  g2.stages = 3;
  const ir::Program p2 = GemmPipeline(g2);
  auto other = Engine::Create(p2, Defaults(p2));
  ASSERT_TRUE(other.ok());
  Engine x = *other;
  x = iso;  // another program: another block shape
  EXPECT_EQ(x.StateHash(), a_hash);
  EXPECT_EQ(x.num_agents(), iso.num_agents());
  EXPECT_EQ(x.Run().steps, ra.steps);
}

TEST(EngineTest, EmptyCountTooHighDeadlocks) {
  GemmPipelineShape g;
  g.cluster_m = 2;
  g.stages = 2;
  g.k_tiles = 6;
  g.empty_count_delta = 1;  // forgets the "- 1": expects 3 releases, gets 2
  const ir::Program p = GemmPipeline(g);
  for (const EngineOptions& o : AllPolicies()) {
    auto e = Engine::Create(p, Defaults(p), o);
    ASSERT_TRUE(e.ok());
    RunResult r = e->Run();
    ASSERT_EQ(r.outcome, Outcome::kDeadlock) << Name(o);
    bool producer_on_empty = false;
    for (const BlockedAgent& bl : r.deadlock.blocked) {
      if (e->role_name(bl.agent) == "producer" && bl.barrier == 1) {
        producer_on_empty = true;
        EXPECT_EQ(bl.state.expected_count, 3);
        EXPECT_EQ(bl.state.pending_count, 1);  // one release missing forever
      }
    }
    EXPECT_TRUE(producer_on_empty) << Name(o);
  }
}

TEST(EngineTest, ExplorerApiStepCopyAndHash) {
  GemmPipelineShape g;
  g.stages = 2;
  g.k_tiles = 3;
  const ir::Program p = GemmPipeline(g);
  auto e = Engine::Create(p, Defaults(p));
  ASSERT_TRUE(e.ok());
  std::vector<Choice> choices;
  e->Choices(&choices);
  ASSERT_EQ(choices.size(), 4u);  // 2 producers + 2 consumers, nothing in flight
  EXPECT_EQ(choices[0], (Choice{Choice::Kind::kAgent, 0}));
  // Drive by always taking the last choice; a copy stepped the same way stays identical.
  Engine copy = *e;
  EXPECT_EQ(copy.StateHash(), e->StateHash());
  size_t steps = 0;
  while (e->outcome() == Outcome::kRunning) {
    e->Choices(&choices);
    ASSERT_FALSE(choices.empty());
    const Choice c = choices.back();
    e->Step(c);
    copy.Step(c);
    EXPECT_EQ(copy.StateHash(), e->StateHash());
    ASSERT_LT(++steps, 10000u);
  }
  EXPECT_EQ(e->outcome(), Outcome::kCompleted);
  EXPECT_EQ(copy.outcome(), Outcome::kCompleted);
  e->Choices(&choices);
  EXPECT_TRUE(choices.empty());

  // Two different first steps give different states.
  auto a = Engine::Create(p, Defaults(p));
  Engine b2 = *a;
  a->Step({Choice::Kind::kAgent, 0});
  b2.Step({Choice::Kind::kAgent, 1});
  EXPECT_NE(a->StateHash(), b2.StateHash());
}

TEST(EngineTest, TraceRoundTripsThroughFile) {
  SingleLoad s;
  auto e = Engine::Create(s.b.program(), {});
  ASSERT_TRUE(e.ok());
  ASSERT_EQ(e->Run().outcome, Outcome::kCompleted);
  trace::TraceFile f;
  f.header.source = "sim";
  f.header.device = "parity-engine";
  f.header.schedule = "single_tma";
  f.header.policy = "eager";
  f.events = e->trace();
  auto back = trace::DecodeTraceFile(trace::EncodeTraceFile(f), "mem");
  ASSERT_TRUE(back.ok());
  ASSERT_EQ(back->events.size(), e->trace().size());
  const std::string dump = trace::DumpTrace(*back);
  EXPECT_NE(dump.find("tma.deliver"), std::string::npos);
  EXPECT_NE(dump.find("phase.complete"), std::string::npos);
}

TEST(EngineTest, RuntimeErrorsAreStatuses) {
  SingleLoad s;
  // Index 1 of a 1-element barrier array.
  ir::MbarrierArrive bad;
  bad.bar = s.b.Bar(s.full, s.b.C(1));
  s.b.program().roles[0].body.insert(s.b.program().roles[0].body.begin(),
                                     ProgramBuilder::Op(bad, 3));
  auto e = Engine::Create(s.b.program(), {});
  ASSERT_TRUE(e.ok());
  RunResult r = e->Run();
  ASSERT_EQ(r.outcome, Outcome::kError);
  EXPECT_EQ(r.error.rule(), "engine.index-range");
}

TEST(EngineTest, BadTensorMapRejectedAtCreate) {
  ProgramBuilder b("bad_map");
  b.Cluster(1, 1);
  b.TensorMap2D("tm", 1024, 1024, 300, 64);  // boxDim[0] > 256
  auto e = Engine::Create(b.program(), {});
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.status().rule(), "tensor-map.box-dim");
}

}  // namespace
}  // namespace parity::engine

namespace parity::engine {
namespace {

// One CTA, one role: a small program of `ops`, plus whatever declarations the test adds.
struct Tiny {
  ProgramBuilder b{"tiny"};
  uint32_t buf = 0, bar = 0, tm = 0;
  Tiny() {
    b.Cluster(1, 1);
    buf = b.Buffer("A", 2, 8192);
    bar = b.Barrier("full", b.C(1), b.C(1));
    tm = b.TensorMap2D("tm", 1024, 1024, 64, 64);
  }
  RunResult Run(Policy policy, uint64_t seed = 0) {
    EngineOptions o;
    o.policy = policy;
    o.seed = seed;
    auto e = Engine::Create(b.program(), {}, o);
    EXPECT_TRUE(e.ok()) << e.status().ToString();
    return e.ok() ? e->Run() : RunResult{};
  }
};

TEST(EngineAsyncTest, CpAsyncGroupsAndMbarrierArrive) {
  Tiny t;
  ir::Role& r = t.b.Role("loader", 1, 32);
  ir::CpAsyncMbarrierArrive arrive;
  arrive.bar = t.b.Bar(t.bar, t.b.C(0));
  arrive.noinc = false;  // pending +1 now, the deferred arrive nets it out, then the init count 1
  ir::MbarrierWait wait;
  wait.bar = t.b.Bar(t.bar, t.b.C(0));
  wait.parity = t.b.C(0);
  ir::CpAsyncWait wait_group;
  wait_group.pending = t.b.C(0);
  r.body = {ProgramBuilder::Op(ir::MbarrierInit{t.b.Bar(t.bar, t.b.C(0)), ir::kNoExpr}),
            ProgramBuilder::Op(ir::CpAsync{t.b.Buf(t.buf, t.b.C(0))}),
            ProgramBuilder::Op(ir::CpAsync{t.b.Buf(t.buf, t.b.C(1))}),
            ProgramBuilder::Op(ir::CpAsyncCommit{}),
            ProgramBuilder::Op(arrive),
            ProgramBuilder::Op(ir::MbarrierArrive{}),  // placeholder, replaced below
            ProgramBuilder::Op(wait),
            ProgramBuilder::Op(wait_group)};
  // The thread's own arrive completes the phase together with the deferred cp.async arrive.
  ir::MbarrierArrive own;
  own.bar = t.b.Bar(t.bar, t.b.C(0));
  r.body[5] = ProgramBuilder::Op(own);
  for (Policy p : {Policy::kEager, Policy::kLazy, Policy::kRoundRobin, Policy::kRandom}) {
    for (uint64_t seed = 0; seed < (p == Policy::kRandom ? 10u : 1u); ++seed) {
      RunResult res = t.Run(p, seed);
      EXPECT_EQ(res.outcome, Outcome::kCompleted) << PolicyName(p) << " " << res.error.ToString();
      EXPECT_TRUE(res.warnings.empty());
    }
  }
}

TEST(EngineAsyncTest, ExitWithCpAsyncInFlightIsAViolationUnderLazy) {
  Tiny t;
  ir::Role& r = t.b.Role("loader", 1, 32);
  r.body = {ProgramBuilder::Op(ir::CpAsync{t.b.Buf(t.buf, t.b.C(0))}),
            ProgramBuilder::Op(ir::CpAsyncCommit{})};
  // Lazy completes copies only when no agent can run: the agent exits first.
  RunResult lazy = t.Run(Policy::kLazy);
  ASSERT_EQ(lazy.outcome, Outcome::kViolation);
  EXPECT_EQ(lazy.violation->violation.code, model::Code::kAsyncExitInFlight);
  // Eager completes the copy before the agent's next step: no violation on that path.
  EXPECT_EQ(t.Run(Policy::kEager).outcome, Outcome::kCompleted);
}

TEST(EngineAsyncTest, TmaStoreWithBulkGroupWaitCompletes) {
  Tiny t;
  ir::Role& r = t.b.Role("epilogue", 1, 128);
  ir::TmaStore store;
  store.tensor_map = t.tm;
  store.coords = {t.b.C(0), t.b.C(0)};
  store.src = t.b.Buf(t.buf, t.b.C(1));
  ir::BulkWait wait;
  wait.pending = t.b.C(0);
  wait.read = true;
  r.body = {ProgramBuilder::Op(ir::BufferAccess{t.b.Buf(t.buf, t.b.C(1)), true}),
            ProgramBuilder::Op(ir::Fence{ir::Fence::Kind::kProxyAsync}),
            ProgramBuilder::Op(store), ProgramBuilder::Op(ir::BulkCommit{}),
            ProgramBuilder::Op(wait)};
  for (Policy p : {Policy::kEager, Policy::kLazy, Policy::kRoundRobin, Policy::kRandom}) {
    RunResult res = t.Run(p, 3);
    EXPECT_EQ(res.outcome, Outcome::kCompleted) << PolicyName(p) << " " << res.error.ToString();
  }
  // An empty commit is a warning (A1102) and the run goes on.
  r.body.insert(r.body.begin(), ProgramBuilder::Op(ir::BulkCommit{}));
  RunResult res = t.Run(Policy::kEager);
  EXPECT_EQ(res.outcome, Outcome::kCompleted);
  ASSERT_EQ(res.warnings.size(), 1u);
  EXPECT_EQ(res.warnings[0].violation.code, model::Code::kBulkEmptyCommit);
}

TEST(EngineSyncTest, NamedBarrierBetweenTwoWarpgroups) {
  Tiny t;
  ir::NamedBarrier sync;
  sync.id = t.b.C(1);
  sync.threads = t.b.C(256);
  t.b.Role("a", 1, 128).body = {ProgramBuilder::Op(sync)};
  t.b.Role("b", 1, 128).body = {ProgramBuilder::Op(sync)};
  EXPECT_EQ(t.Run(Policy::kRoundRobin).outcome, Outcome::kCompleted);
  EXPECT_EQ(t.Run(Policy::kRandom, 5).outcome, Outcome::kCompleted);
  // One side counts 384 threads: only 256 ever arrive -> the model reports the mismatch (S1003)
  // when the second side joins with a different count.
  ir::NamedBarrier wrong = sync;
  wrong.threads = t.b.C(384);
  t.b.program().roles[1].body = {ProgramBuilder::Op(wrong)};
  RunResult r = t.Run(Policy::kEager);
  ASSERT_EQ(r.outcome, Outcome::kViolation);
  EXPECT_EQ(r.violation->violation.code, model::Code::kNamedBarrierCountMismatch);
}

TEST(EngineSyncTest, NamedBarrierCountTooHighDeadlocks) {
  Tiny t;
  ir::NamedBarrier sync;
  sync.id = t.b.C(2);
  sync.threads = t.b.C(384);
  t.b.Role("a", 1, 128).body = {ProgramBuilder::Op(sync)};
  t.b.Role("b", 1, 128).body = {ProgramBuilder::Op(sync)};
  RunResult r = t.Run(Policy::kEager);
  ASSERT_EQ(r.outcome, Outcome::kDeadlock);
  ASSERT_EQ(r.deadlock.blocked.size(), 2u);
  EXPECT_EQ(r.deadlock.blocked[0].wait, WaitKind::kNamedBarrier);
  EXPECT_EQ(r.deadlock.blocked[0].barrier, 2u);
  EXPECT_EQ(r.deadlock.blocked[0].arrived, 256u);
  EXPECT_EQ(r.deadlock.blocked[0].expected, 384u);
}

TEST(EngineSyncTest, ClusterWaitWithoutArriveIsAViolation) {
  Tiny t;
  t.b.Role("a").body = {ProgramBuilder::Op(ir::ClusterWait{})};
  RunResult r = t.Run(Policy::kEager);
  ASSERT_EQ(r.outcome, Outcome::kViolation);
  EXPECT_EQ(r.violation->violation.code, model::Code::kClusterWaitWithoutArrive);
}

TEST(EngineSyncTest, ClusterBarrierReleasedByExitedPeer) {
  // Role b exits without arriving: the barrier no longer expects it (PTX ISA exit).
  Tiny t;
  t.b.Role("a").body = {ProgramBuilder::Op(ir::ClusterArrive{}),
                        ProgramBuilder::Op(ir::ClusterWait{})};
  t.b.Role("b").body = {ProgramBuilder::Op(ir::Exit{})};
  for (Policy p : {Policy::kEager, Policy::kLazy, Policy::kRoundRobin}) {
    EXPECT_EQ(t.Run(p).outcome, Outcome::kCompleted) << PolicyName(p);
  }
}

}  // namespace
}  // namespace parity::engine


namespace parity::engine {
namespace {

// Drives the engine through every interleaving of a small 2-CTA multicast pipeline with the
// explorer API (Choices, Step, copy, StateHash): every maximal path must complete, and the
// bugged variant must deadlock on every path.
size_t ExploreAll(const ir::Program& p, Outcome expected, size_t* terminals) {
  std::vector<int64_t> params;
  for (const auto& q : p.params) params.push_back(q.default_value);
  EngineOptions o;
  o.record_trace = false;
  auto root = Engine::Create(p, params, o);
  EXPECT_TRUE(root.ok());
  std::unordered_set<uint64_t> seen;
  std::deque<Engine> frontier;
  frontier.push_back(*root);
  seen.insert(root->StateHash());
  std::vector<Choice> choices;
  *terminals = 0;
  while (!frontier.empty()) {
    Engine e = std::move(frontier.front());
    frontier.pop_front();
    e.Choices(&choices);
    if (choices.empty()) {
      EXPECT_EQ(e.outcome(), expected);
      ++*terminals;
      continue;
    }
    for (const Choice& c : choices) {
      Engine next = e;
      next.Step(c);
      if (next.outcome() != Outcome::kRunning) {
        EXPECT_EQ(next.outcome(), expected) << OutcomeName(next.outcome());
        ++*terminals;
        continue;
      }
      if (seen.insert(next.StateHash()).second) frontier.push_back(std::move(next));
    }
    if (seen.size() > 200000) {
      ADD_FAILURE() << "state space larger than expected";
      break;
    }
  }
  return seen.size();
}

TEST(EngineExploreTest, EveryInterleavingOfSmallMulticastCompletes) {
  testing::GemmPipelineShape g;
  g.cluster_m = 2;
  g.stages = 1;
  g.k_tiles = 2;
  size_t terminals = 0;
  const size_t states = ExploreAll(testing::GemmPipeline(g), Outcome::kCompleted, &terminals);
  EXPECT_GT(states, 100u);  // a real interleaving space, not one path
  EXPECT_GT(terminals, 0u);
}

TEST(EngineExploreTest, EveryInterleavingOfTxOvercountDeadlocks) {
  testing::GemmPipelineShape g;
  g.cluster_m = 2;
  g.stages = 1;
  g.k_tiles = 2;
  g.extra_tx_cta = 0;
  size_t terminals = 0;
  ExploreAll(testing::GemmPipeline(g), Outcome::kDeadlock, &terminals);
  EXPECT_GT(terminals, 0u);
}

}  // namespace
}  // namespace parity::engine

// ---------------------------------------------------------------------------------------------
// mbarrier.pending_count and readback (the litmus observations of issue 7).

namespace parity::engine {
namespace {

using trace::EventKind;

ir::Program Parse(const std::string& text) {
  auto p = ir::ParseProgram(text, "obs.pipe");
  EXPECT_TRUE(p.ok()) << p.status().ToString();
  return p.ok() ? std::move(p).value() : ir::Program{};
}

std::vector<int32_t> Values(const Engine& e, EventKind k) {
  std::vector<int32_t> out;
  for (const trace::TraceEvent& ev : e.trace()) {
    if (ev.kind == static_cast<uint8_t>(k)) out.push_back(ev.value);
  }
  return out;
}

int64_t Var(const ir::Program& p, const Engine& e, uint32_t agent, const std::string& name) {
  const ir::Role& role = p.roles[e.agent_info(agent).role];
  for (uint32_t i = 0; i < role.num_vars; ++i) {
    if (role.var_names[i] == name) return e.agent_vars(agent)[i];
  }
  ADD_FAILURE() << "no variable " << name;
  return -1;
}

// Every end state of every interleaving (breadth first over Choices/Step).
std::vector<Engine> AllEnds(const ir::Program& p) {
  std::vector<Engine> ends;
  auto created = Engine::Create(p, {});
  EXPECT_TRUE(created.ok()) << created.status().ToString();
  if (!created.ok()) return ends;
  std::deque<Engine> frontier{*created};
  std::unordered_set<uint64_t> seen;
  std::vector<Choice> choices;
  while (!frontier.empty()) {
    Engine cur = std::move(frontier.front());
    frontier.pop_front();
    cur.Choices(&choices);
    const std::vector<Choice> here = choices;
    for (const Choice& c : here) {
      Engine next = cur;
      if (next.Step(c) == Outcome::kRunning) {
        frontier.push_back(std::move(next));
      } else {
        ends.push_back(std::move(next));
      }
    }
    if (ends.size() > 10000) {
      ADD_FAILURE() << "more end states than expected";
      break;
    }
  }
  return ends;
}

// PTX ISA (mbarrier.pending_count): the count prior to the arrive-on that returned the token.
// init 4: a noComplete arrival reads 4; after a drop (expected 3, and its own arrival) the next
// reads 2; in phase 1 the count starts from the lowered expected count, 3.
TEST(EnginePendingCountTest, ReadsTheCountBeforeTheNoCompleteArrive) {
  const ir::Program p = Parse(R"(
barrier b[1] count 4
role t threads 32 {
  init b[0]
  arrive.nocomplete b[0] -> t0
  pending_count t0 -> n0
  arrive_drop b[0]
  arrive.nocomplete b[0] -> t1
  pending_count t1 -> n1
  arrive b[0]
  wait b[0] token t1
  arrive.nocomplete b[0] -> t2
  pending_count t2 -> n2
  arrive b[0] count 2
  wait b[0] parity 1
}
)");
  auto e = Engine::Create(p, {});
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  RunResult r = e->Run();
  ASSERT_EQ(r.outcome, Outcome::kCompleted) << OutcomeName(r.outcome);
  EXPECT_EQ(Values(*e, EventKind::kPendingCount), (std::vector<int32_t>{4, 2, 3}));
  EXPECT_EQ(Var(p, *e, 0, "n0"), 4);
  EXPECT_EQ(Var(p, *e, 0, "n1"), 2);
  EXPECT_EQ(Var(p, *e, 0, "n2"), 3);
  EXPECT_EQ(e->barrier_state(0, 0, 0).phase, 2u);
}

// A token of a plain arrive (also of the arrive that completed the phase) is undefined for
// mbarrier.pending_count: M1013, the run ends there, no kPendingCount event.
TEST(EnginePendingCountTest, PlainTokenIsM1013) {
  for (const char* arrive : {"arrive b[0] -> t0", "arrive b[0] count 2 -> t0"}) {
    SCOPED_TRACE(arrive);
    const ir::Program p = Parse(std::string("barrier b[1] count 2\nrole t {\n  init b[0]\n  ") +
                                arrive + "\n  pending_count t0 -> n\n}\n");
    auto e = Engine::Create(p, {});
    ASSERT_TRUE(e.ok()) << e.status().ToString();
    RunResult r = e->Run();
    ASSERT_EQ(r.outcome, Outcome::kViolation);
    EXPECT_EQ(r.violation->violation.code, model::Code::kMbarrierPendingCountToken);
    EXPECT_EQ(r.violation->where.line, 5);
    EXPECT_TRUE(Values(*e, EventKind::kPendingCount).empty());
    EXPECT_EQ(e->trace().back().kind, static_cast<uint8_t>(EventKind::kViolation));
  }
}

// Tokens of plain arrives keep only the phase: two agents whose arrivals land in either order
// reach one end state (the counts their tokens would hold, which nobody may read, do not split
// it); tokens of noComplete arrivals carry the count, so the two orders stay two states.
TEST(EnginePendingCountTest, OnlyNoCompleteTokensCarryTheCount) {
  for (const std::string kind : {"arrive", "arrive.nocomplete"}) {
    SCOPED_TRACE(kind);
    const ir::Program p = Parse("barrier b[1] count 3\nrole s threads 32 {\n  init b[0]\n"
                                "  bar.sync 1, 96\n}\nrole a count 2 threads 32 {\n"
                                "  bar.sync 1, 96\n  " +
                                kind + " b[0] -> t\n}\n");
    std::unordered_set<uint64_t> ends;
    for (const Engine& e : AllEnds(p)) {
      EXPECT_EQ(e.outcome(), Outcome::kCompleted);  // pending 1 left: nobody waits
      ends.insert(e.Fingerprint());
    }
    EXPECT_EQ(ends.size(), kind == "arrive" ? 1u : 2u);
  }
}

std::string StoreThenRead(const std::string& wait) {
  return "buffer src[1] bytes 1024\n"
         "role t threads 32 {\n"
         "  write src[0]\n"
         "  fence.proxy.async\n"
         "  bulk.store src[0]\n"
         "  bulk.commit\n"
         "  " + wait + "\n"
         "  readback src[0] -> v\n"
         "  bulk.wait 0\n"
         "}\n";
}

// After cp.async.bulk.wait_group (no .read) the store's write is complete: class 1 under every
// policy. After only .read: A1103 while the write is still in flight (lazy runs agents first),
// class 1 once it has landed (eager completes async operations first).
TEST(EngineReadbackTest, SeesTheStoreOnlyAfterItsWrite) {
  const ir::Program waited = Parse(StoreThenRead("bulk.wait 0"));
  for (const EngineOptions& o : AllPolicies()) {
    SCOPED_TRACE(Name(o));
    auto e = Engine::Create(waited, {}, o);
    ASSERT_TRUE(e.ok()) << e.status().ToString();
    ASSERT_EQ(e->Run().outcome, Outcome::kCompleted);
    EXPECT_EQ(Values(*e, EventKind::kGlobalReadback), (std::vector<int32_t>{1}));
    EXPECT_EQ(Var(waited, *e, 0, "v"), 1);
  }
  const ir::Program read_only = Parse(StoreThenRead("bulk.wait 0 read"));
  EngineOptions lazy;
  lazy.policy = Policy::kLazy;
  auto e = Engine::Create(read_only, {}, lazy);
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  RunResult r = e->Run();
  ASSERT_EQ(r.outcome, Outcome::kViolation);
  EXPECT_EQ(r.violation->violation.code, model::Code::kBulkDestinationReadEarly);
  EXPECT_EQ(r.violation->violation.value, 1);
  EXPECT_EQ(r.violation->where.line, 8);
  e = Engine::Create(read_only, {}, EngineOptions{});
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  ASSERT_EQ(e->Run().outcome, Outcome::kCompleted);
  EXPECT_EQ(Values(*e, EventKind::kGlobalReadback), (std::vector<int32_t>{1}));
}

// The store carries the data it read. The storer's own readback after wait_group:
//   overwrite ordered after wait_group.read  -> only 1 (its data);
//   overwrite that may precede the read      -> 1 or 3 (the overwriter's data).
TEST(EngineReadbackTest, StoreCarriesTheDataItRead) {
  for (const bool ordered : {true, false}) {
    SCOPED_TRACE(ordered ? "overwrite after wait_group.read" : "no read wait");
    const ir::Program p = Parse(std::string("buffer src[1] bytes 1024\n"
                                            "role s threads 32 {\n  write src[0]\n"
                                            "  fence.proxy.async\n"
                                            "  bulk.store src[0]\n  bulk.commit\n") +
                                (ordered ? "  bulk.wait 0 read\n" : "") +
                                "  bar.sync 1, 64\n  bulk.wait 0\n  readback src[0] -> v\n}\n"
                                "role o threads 32 {\n  bar.sync 1, 64\n  write src[0]\n}\n");
    std::set<int64_t> seen;
    for (const Engine& e : AllEnds(p)) {
      ASSERT_EQ(e.outcome(), Outcome::kCompleted) << OutcomeName(e.outcome());
      seen.insert(Var(p, e, 0, "v"));
    }
    EXPECT_EQ(seen, ordered ? (std::set<int64_t>{1}) : (std::set<int64_t>{1, 3}));
  }
}

TEST(EngineReadbackTest, InitialContentsAndRefusals) {
  const ir::Program initial =
      Parse("buffer src[2] bytes 64\nrole t {\n  readback src[1] -> v\n}\n");
  auto e = Engine::Create(initial, {});
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  ASSERT_EQ(e->Run().outcome, Outcome::kCompleted);
  ASSERT_EQ(Values(*e, EventKind::kGlobalReadback), (std::vector<int32_t>{0}));
  EXPECT_EQ(e->trace().front().index, 1u);   // the slot
  EXPECT_EQ(e->trace().front().value2, 64);  // bytes read

  // Part of a slot: refused (the model tracks whole slots).
  const ir::Program part =
      Parse("buffer src[1] bytes 64\nrole t {\n  readback src[0] bytes 32 -> v\n}\n");
  e = Engine::Create(part, {});
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  RunResult r = e->Run();
  ASSERT_EQ(r.outcome, Outcome::kError);
  EXPECT_EQ(r.error.rule(), "engine.readback-region");

  // A stored source never written by `write`: the data has no name.
  const ir::Program unnamed = Parse(
      "buffer src[1] bytes 64\nrole t {\n  bulk.store src[0]\n  bulk.commit\n  bulk.wait 0\n"
      "  readback src[0] -> v\n}\n");
  e = Engine::Create(unnamed, {});
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  r = e->Run();
  ASSERT_EQ(r.outcome, Outcome::kError);
  EXPECT_EQ(r.error.rule(), "engine.readback-untracked");

  // A store source that a copy also fills: refused at Create.
  const ir::Program copied = Parse(
      "buffer src[1] bytes 64\nbarrier b[1] count 1\nrole t {\n  bulk.load src[0] bar b[0]\n"
      "  bulk.store src[0]\n  readback src[0] -> v\n}\n");
  auto refused = Engine::Create(copied, {});
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().rule(), "engine.readback-untracked");
}

// The byte operand of expect_tx / arrive.expect_tx / complete_tx is a u32: a schedule that
// computes one outside 0..2^32-1 is bad input at that statement, not an internal error.
TEST(EngineTest, TxOperandOutsideU32IsABadScheduleAtItsStatement) {
  for (const std::string stmt :
       {"arrive.expect_tx b[0] bytes N", "expect_tx b[0] bytes N", "complete_tx b[0] bytes N"}) {
    for (const int64_t n : {int64_t{-1}, int64_t{1} << 32}) {
      const ir::Program program = Parse("param N = " + std::to_string(n) +
                                        "\nbarrier b[1] count 1\nrole t {\n  init b[0]\n  " +
                                        stmt + "\n}\n");
      auto params = ir::BindParams(program, {});
      ASSERT_TRUE(params.ok()) << params.status().ToString();
      auto e = Engine::Create(program, *params);
      ASSERT_TRUE(e.ok()) << e.status().ToString();
      RunResult r = e->Run();
      ASSERT_EQ(r.outcome, Outcome::kError) << stmt << " " << n;
      EXPECT_EQ(r.error.rule(), "engine.tx-range") << stmt << " " << n;
      EXPECT_EQ(r.error.where().line, 5) << stmt << " " << n;
      EXPECT_NE(r.error.message().find(std::to_string(n)), std::string::npos) << r.error.message();
    }
  }
}

}  // namespace
}  // namespace parity::engine
