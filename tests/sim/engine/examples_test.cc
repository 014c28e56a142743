// The bundled sim/examples/*.pipe schedules, parsed and run under every policy: the outcome each
// file's header comment says a correct tool must report.
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "sim/engine/engine.h"
#include "sim/ir/ir.h"
#include "sim/ir/parser.h"

namespace parity::engine {
namespace {

ir::Program Parse(const std::string& name) {
  auto p = ir::ParseFile("sim/examples/" + name);
  EXPECT_TRUE(p.ok()) << p.status().ToString();
  return p.ok() ? std::move(p).value() : ir::Program{};
}

std::vector<int64_t> Defaults(const ir::Program& p) {
  auto v = ir::BindParams(p, {});
  EXPECT_TRUE(v.ok()) << v.status().ToString();
  return v.ok() ? *v : std::vector<int64_t>{};
}

uint32_t BarrierIndex(const ir::Program& p, const std::string& name) {
  for (uint32_t i = 0; i < p.barriers.size(); ++i) {
    if (p.barriers[i].name == name) return i;
  }
  ADD_FAILURE() << "no barrier " << name;
  return 0;
}

std::vector<EngineOptions> AllPolicies() {
  std::vector<EngineOptions> out;
  for (Policy p : {Policy::kEager, Policy::kLazy, Policy::kRoundRobin}) {
    EngineOptions o;
    o.policy = p;
    out.push_back(o);
  }
  for (uint64_t seed = 1; seed <= 8; ++seed) {
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

TEST(ExamplesTest, SingleTmaLoadCompletes) {
  const ir::Program p = Parse("single_tma_load.pipe");
  for (const EngineOptions& o : AllPolicies()) {
    auto e = Engine::Create(p, Defaults(p), o);
    ASSERT_TRUE(e.ok()) << e.status().ToString();
    RunResult r = e->Run();
    ASSERT_EQ(r.outcome, Outcome::kCompleted) << Name(o) << " " << r.error.ToString();
    EXPECT_EQ(e->barrier_state(0, BarrierIndex(p, "full"), 0).phase, 1u);
  }
}

TEST(ExamplesTest, Gemm2x2MulticastCompletes) {
  const ir::Program p = Parse("gemm_tma_multicast_2x2.pipe");
  const uint32_t full = BarrierIndex(p, "full"), empty = BarrierIndex(p, "empty");
  uint64_t events = 0;
  for (const EngineOptions& o : AllPolicies()) {
    auto e = Engine::Create(p, Defaults(p), o);
    ASSERT_TRUE(e.ok()) << e.status().ToString();
    RunResult r = e->Run();
    ASSERT_EQ(r.outcome, Outcome::kCompleted)
        << Name(o) << " " << r.error.ToString()
        << (r.violation ? model::Describe(r.violation->violation) : "");
    for (uint32_t cta = 0; cta < 4; ++cta) {
      for (uint32_t s = 0; s < 4; ++s) {
        // K_TILES = 8 over 4 stages: two phases of every full barrier; empty barriers also see
        // the producer tail's last round of releases.
        EXPECT_EQ(e->barrier_state(cta, full, s).phase, 2u) << Name(o);
        EXPECT_EQ(e->barrier_state(cta, empty, s).phase, 2u) << Name(o);
        EXPECT_EQ(e->barrier_state(cta, empty, s).expected_count, 6);
      }
    }
    if (events == 0) events = r.events;
    EXPECT_EQ(r.events, events) << Name(o);
  }
}

TEST(ExamplesTest, EmptyCountHighDeadlocksOnEmptyInEveryCta) {
  const ir::Program p = Parse("gemm_empty_count_high.pipe");
  const uint32_t full = BarrierIndex(p, "full"), empty = BarrierIndex(p, "empty");
  for (const EngineOptions& o : AllPolicies()) {
    Engine e = *Engine::Create(p, Defaults(p), o);
    RunResult r = e.Run();
    ASSERT_EQ(r.outcome, Outcome::kDeadlock) << Name(o);
    std::vector<int> producers(4, 0);
    for (const BlockedAgent& bl : r.deadlock.blocked) {
      ASSERT_EQ(bl.wait, WaitKind::kMbarrierParity);
      if (e.role_name(bl.agent) == "producer") {
        producers[bl.cta]++;
        EXPECT_EQ(bl.barrier, empty);
        EXPECT_EQ(bl.barrier_index, 0u);
        EXPECT_EQ(bl.parity, 0u);
        EXPECT_EQ(bl.state.expected_count, 8);
        EXPECT_EQ(bl.state.pending_count, 2);  // 6 of 8 arrivals
      } else {
        EXPECT_EQ(bl.barrier, full);
        EXPECT_EQ(bl.barrier_index, 0u);
        EXPECT_EQ(bl.parity, 1u);
      }
    }
    EXPECT_EQ(producers, std::vector<int>(4, 1)) << Name(o);
  }
}

TEST(ExamplesTest, TxOvercountDeadlocksOnFullInEveryCta) {
  const ir::Program p = Parse("gemm_tx_overcount.pipe");
  const uint32_t full = BarrierIndex(p, "full"), empty = BarrierIndex(p, "empty");
  for (const EngineOptions& o : AllPolicies()) {
    Engine e = *Engine::Create(p, Defaults(p), o);
    RunResult r = e.Run();
    ASSERT_EQ(r.outcome, Outcome::kDeadlock) << Name(o);
    std::vector<int> consumers(4, 0);
    for (const BlockedAgent& bl : r.deadlock.blocked) {
      if (e.role_name(bl.agent) == "consumer") {
        consumers[bl.cta]++;
        EXPECT_EQ(bl.barrier, full);
        EXPECT_EQ(bl.barrier_index, 0u);
        EXPECT_EQ(bl.parity, 0u);
        EXPECT_EQ(bl.state.pending_count, 0);
        EXPECT_EQ(bl.state.tx_count, 98304);  // 131072 expected, 32768 landed
      } else {
        EXPECT_EQ(bl.barrier, empty);
        EXPECT_EQ(bl.barrier_index, 0u);
        EXPECT_EQ(bl.parity, 0u);
      }
    }
    EXPECT_EQ(consumers, std::vector<int>(4, 2)) << Name(o);
  }
}

TEST(ExamplesTest, WrongProducerPhaseDeadlocksAtFirstWait) {
  const ir::Program p = Parse("gemm_wrong_producer_phase.pipe");
  const uint32_t full = BarrierIndex(p, "full"), empty = BarrierIndex(p, "empty");
  for (const EngineOptions& o : AllPolicies()) {
    Engine e = *Engine::Create(p, Defaults(p), o);
    RunResult r = e.Run();
    ASSERT_EQ(r.outcome, Outcome::kDeadlock) << Name(o);
    EXPECT_EQ(r.deadlock.blocked.size(), 12u);  // 4 CTAs x (1 producer + 2 consumers)
    EXPECT_TRUE(r.deadlock.exited.empty());
    for (const BlockedAgent& bl : r.deadlock.blocked) {
      const bool producer = e.role_name(bl.agent) == "producer";
      EXPECT_EQ(bl.barrier, producer ? empty : full);
      EXPECT_EQ(bl.barrier_index, 0u);
      EXPECT_EQ(bl.parity, 0u);
      EXPECT_EQ(bl.state.phase, 0u);
      EXPECT_EQ(bl.state.pending_count, producer ? 6 : 1);
      EXPECT_EQ(bl.state.tx_count, 0);
    }
  }
}

}  // namespace
}  // namespace parity::engine
