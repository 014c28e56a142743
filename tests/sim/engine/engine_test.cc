#include "sim/engine/engine.h"

#include <algorithm>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "sim/model/codes.h"
#include "sim/trace/event.h"
#include "sim/trace/trace_file.h"
#include "tests/sim/engine/pipelines.h"
#include "tests/sim/engine/program_builder.h"

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
