// verifier/compare: two policies of one schedule agree on phase counts, program order and
// copies; tampering with one trace is listed; different schedules are refused.
#include "verifier/compare.h"

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

bool Mentions(const CompareResult& r, const std::string& text) {
  for (const std::string& d : r.differences) {
    if (d.find(text) != std::string::npos) return true;
  }
  return false;
}

size_t PhaseEvents(const trace::TraceFile& t) {
  size_t n = 0;
  for (const auto& e : t.events) n += e.kind == K(EventKind::kPhaseComplete);
  return n;
}

TEST(CompareTest, PoliciesOfCompletingSchedulesAgree) {
  // Completing schedules: every policy runs the same program to the end, so phase counts,
  // program order and copies must agree (the interleaving is all that differs).
  size_t phases_total = 0;
  for (const char* f :
       {"sim/examples/single_tma_load.pipe", "sim/examples/gemm_tma_multicast_2x2.pipe",
        "pipelines/tma_async_gemm/gemm.pipe", "pipelines/ws_gemm/cooperative.pipe",
        "pipelines/ws_gemm/pingpong.pipe", "pipelines/tma_store/tma_store.pipe",
        "pipelines/st_async_ring/ring.pipe", "pipelines/cuda_pipeline/producer_consumer.pipe"}) {
    const Schedule s = Load(f);
    const auto policies = parity::testing::Policies();
    const auto base = Record(s, policies[0]);
    ASSERT_EQ(base.result.outcome, engine::Outcome::kCompleted) << f;
    phases_total += PhaseEvents(base.trace);
    for (size_t i = 1; i < policies.size(); ++i) {
      const auto other = Record(s, policies[i]);
      auto r = CompareTraces(base.trace, other.trace);
      ASSERT_TRUE(r.ok()) << r.status().ToString();
      EXPECT_TRUE(r->same()) << f << " policy " << i << "\n"
                             << FormatCompareResult(*r, base.trace, other.trace);
      EXPECT_TRUE(r->notes.empty());
      EXPECT_TRUE(r->not_compared.empty());
      EXPECT_NE(FormatCompareResult(*r, base.trace, other.trace)
                    .find("SAME: phase completions, program order, copies and wait timeouts "
                          "agree\n"),
                std::string::npos);
    }
  }
  EXPECT_GT(phases_total, 100u);  // the phase counts compared were not all zero
}

TEST(CompareTest, RefusesDifferentSchedules) {
  const auto a = Record(Load("sim/examples/single_tma_load.pipe"), {});
  const auto b = Record(Load("sim/examples/gemm_tma_multicast_2x2.pipe"), {});
  auto r = CompareTraces(a.trace, b.trace);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().rule(), "compare.hash-mismatch");
}

TEST(CompareTest, ListsAMissingPhaseCompletion) {
  const Schedule s = Load("sim/examples/gemm_tma_multicast_2x2.pipe");
  const auto a = Record(s, {});
  trace::TraceFile b = a.trace;
  const size_t phase = IndexOf(b, EventKind::kPhaseComplete);
  const trace::TraceEvent dropped = b.events[phase];
  b.events.erase(b.events.begin() + phase);
  auto r = CompareTraces(a.trace, b);
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->differences.size(), 1u) << FormatCompareResult(*r, a.trace, b);
  const std::string& d = r->differences[0];
  EXPECT_NE(d.find("phase completions of barrier #" + std::to_string(dropped.object) + "[" +
                   std::to_string(dropped.index) + "]"),
            std::string::npos)
      << d;
  EXPECT_NE(d.find("CTA " + std::to_string(dropped.target_cta)), std::string::npos) << d;
}

TEST(CompareTest, ListsCopyBytesAndDestinations) {
  const Schedule s = Load("sim/examples/gemm_tma_multicast_2x2.pipe");
  const auto a = Record(s, {});
  trace::TraceFile b = a.trace;
  const size_t d = IndexOf(b, EventKind::kTmaDeliver);
  b.events[d].target_cta = static_cast<uint8_t>((b.events[d].target_cta + 1) % 4);
  auto r = CompareTraces(a.trace, b);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(Mentions(*r, "copies issued by cluster 0 CTA " + std::to_string(b.events[d].cta) +
                               " pc " + std::to_string(b.events[d].pc)))
      << FormatCompareResult(*r, a.trace, b);

  trace::TraceFile c = a.trace;
  const size_t issue = IndexOf(c, EventKind::kTmaIssue);
  c.events[issue].value /= 2;  // box bytes
  auto r2 = CompareTraces(a.trace, c);
  ASSERT_TRUE(r2.ok());
  EXPECT_TRUE(Mentions(*r2, "program order of cluster 0 CTA " +
                                std::to_string(c.events[issue].cta) + " agent " +
                                std::to_string(c.events[issue].agent)))
      << FormatCompareResult(*r2, a.trace, c);
}

TEST(CompareTest, ListsProgramOrderDifferences) {
  const Schedule s = Load("sim/examples/single_tma_load.pipe");
  const auto a = Record(s, {});
  trace::TraceFile b = a.trace;
  b.events.erase(b.events.begin() + IndexOf(b, EventKind::kFence));
  auto r = CompareTraces(a.trace, b);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(Mentions(*r, "program order of cluster 0 CTA 0 agent 0, operation 2"))
      << FormatCompareResult(*r, a.trace, b);
}

TEST(CompareTest, ListsWaitTimeouts) {
  const Schedule s = Load("sim/examples/gemm_wrong_producer_phase.pipe");
  const auto a = Record(s, {});
  trace::TraceFile b = a.trace;
  trace::TraceEvent t{};
  t.kind = K(EventKind::kWaitTimeout);
  t.agent = 0;
  t.object = 0;
  t.index = 3;
  t.parity = 1;
  b.events.push_back(t);
  auto r = CompareTraces(a.trace, b);
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->differences.size(), 1u) << FormatCompareResult(*r, a.trace, b);
  EXPECT_TRUE(Mentions(
      *r, "only B: cluster 0 CTA 0 agent 0 never completed its wait on barrier #0[3]@cta0 parity 1"))
      << FormatCompareResult(*r, a.trace, b);
}

TEST(CompareTest, SimulatorAgainstAnH100StyleTrace) {
  // The GPU records no phase completions or TMA deliveries: those are noted, not differences;
  // program order still agrees.
  const Schedule s = Load("sim/examples/gemm_tma_multicast_2x2.pipe");
  const auto a = Record(s, {});
  engine::EngineOptions o;
  o.policy = engine::Policy::kRandom;
  o.seed = 5;
  const trace::TraceFile h = AsH100(Record(s, o).trace);
  auto r = CompareTraces(a.trace, h);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->same()) << FormatCompareResult(*r, a.trace, h);
  EXPECT_EQ(r->notes.size(), 3u);  // pc numbering, phase completions, tma.deliver
  // SAME names only what was held against each other: the phase completions the H100 trace
  // does not record are said to be not compared, never to agree.
  const std::string text = FormatCompareResult(*r, a.trace, h);
  const size_t same = text.find("SAME: ");
  ASSERT_NE(same, std::string::npos) << text;
  const std::string line = text.substr(same, text.find('\n', same) - same);
  EXPECT_EQ(line,
            "SAME: program order, copies and wait timeouts agree; tma.deliver deliveries and "
            "phase completions could not be compared (see the notes above)");
  EXPECT_EQ(r->not_compared, (std::vector<std::string>{"tma.deliver deliveries",
                                                        "phase completions"}));
  // A missing operation on the GPU side is still found.
  trace::TraceFile h2 = h;
  h2.events.erase(h2.events.begin() + IndexOf(h2, EventKind::kArriveExpectTx));
  auto r2 = CompareTraces(a.trace, h2);
  ASSERT_TRUE(r2.ok());
  EXPECT_FALSE(r2->same());
}

TEST(CompareTest, SimulatorAgreesWithTheCommittedH100Traces) {
  // traces/h100 (gpu:parity_gpu on an H100): program order, copies and the waits that never
  // completed agree with the simulator's eager run, for the correct examples and for the three
  // that hang (the simulator's deadlocked waits are the H100's wait timeouts: same agent,
  // barrier, CTA and parity for all twelve agents).
  for (const char* name : {"single_tma_load", "gemm_tma_multicast_2x2", "gemm_empty_count_high",
                           "gemm_tx_overcount", "gemm_wrong_producer_phase"}) {
    const Schedule s = Load(std::string("sim/examples/") + name + ".pipe");
    const auto sim = Record(s, {});
    auto h = trace::ReadTraceFile(std::string("traces/h100/") + name + ".trace");
    ASSERT_TRUE(h.ok()) << h.status().ToString();
    auto r = CompareTraces(sim.trace, *h);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_TRUE(r->same()) << name << "\n" << FormatCompareResult(*r, sim.trace, *h);
    if (sim.result.outcome == engine::Outcome::kDeadlock) {
      size_t timeouts = 0;
      for (const auto& e : h->events) timeouts += e.kind == K(EventKind::kWaitTimeout);
      EXPECT_EQ(timeouts, sim.result.deadlock.blocked.size()) << name;
    }
  }
}

}  // namespace
}  // namespace parity::verifier
