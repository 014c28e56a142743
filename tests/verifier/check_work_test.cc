// The run checkers (CheckRules: protocol rules, races, lifetime, PDL races, and their
// happens-before) do work near-linear in the run's events: counted in operations
// (verifier/check_work.h), not seconds, at N and 2N events of a cp.async, a TMA and a cluster
// schedule. A checker that rescans what the run has accumulated so far (every earlier copy at
// each wait, every observation per access) doubles its work per event when the run doubles;
// the bound below allows the log factor of a binary search and nothing like that.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "sim/common/read_file.h"
#include "sim/engine/engine.h"
#include "sim/ir/parser.h"
#include "verifier/check_work.h"
#include "verifier/rules.h"

namespace parity::verifier {
namespace {

std::string ReadFile(const std::string& path) {
  auto text = ReadInputFile(path, "schedule", "io", kMaxScheduleFileBytes);
  EXPECT_TRUE(text.ok()) << text.status().ToString();
  return text.ok() ? text.value() : std::string();
}

struct Work {
  uint64_t events = 0;
  uint64_t ops = 0;
  size_t findings = 0;
};

// Runs the schedule (eager) and checks it; the operations the checkers counted.
Work Measure(const std::string& text, const std::string& file,
             const std::vector<std::pair<std::string, int64_t>>& params) {
  Work w;
  auto program = ir::ParseProgram(text, file);
  EXPECT_TRUE(program.ok()) << program.status().ToString();
  if (!program.ok()) return w;
  auto values = ir::BindParams(*program, params);
  EXPECT_TRUE(values.ok()) << values.status().ToString();
  if (!values.ok()) return w;
  auto engine = engine::Engine::Create(*program, *values, engine::EngineOptions{});
  EXPECT_TRUE(engine.ok()) << engine.status().ToString();
  if (!engine.ok()) return w;
  const engine::RunResult r = engine->Run();
  EXPECT_EQ(r.outcome, engine::Outcome::kCompleted) << file;
  w.events = engine->trace().size();
  const uint64_t before = check_work_ops;
  w.findings = CheckRules(*program, *engine, engine->trace()).size();
  w.ops = check_work_ops - before;
  return w;
}

// Work per event at 2N events is within 25 % of that at N (quadratic work: +100 %).
void ExpectNearLinear(const Work& n, const Work& n2, const std::string& what) {
  ASSERT_GT(n.events, 1000u) << what;
  ASSERT_GT(n.ops, 0u) << what;
  const double grow = static_cast<double>(n2.events) / static_cast<double>(n.events);
  EXPECT_GT(grow, 1.8) << what << ": the run did not double";
  const double per_n = static_cast<double>(n.ops) / static_cast<double>(n.events);
  const double per_n2 = static_cast<double>(n2.ops) / static_cast<double>(n2.events);
  EXPECT_LT(per_n2, 1.25 * per_n) << what << ": " << n.ops << " operations for " << n.events
                                  << " events, " << n2.ops << " for " << n2.events;
  // The same verdict at both sizes: the checkers' answers do not depend on the length.
  EXPECT_EQ(n.findings, n2.findings) << what;
}

TEST(CheckWorkTest, CpAsyncMultistageIsNearLinear) {
  // cp.async groups with wait_group: every wait covers all the issuer's earlier copies.
  const std::string f = "pipelines/ampere_multistage/bad_no_drain.pipe";
  const std::string text = ReadFile(f);
  ExpectNearLinear(Measure(text, f, {{"K_TILES", 1000}}), Measure(text, f, {{"K_TILES", 2000}}),
                   "bad_no_drain");
}

TEST(CheckWorkTest, CpAsyncMbarrierArriveIsNearLinear) {
  // cp.async.mbarrier.arrive: each landing covers the issuer's copies so far.
  const std::string f = "pipelines/cuda_pipeline/cp_async_arrive_on.pipe";
  const std::string text = ReadFile(f);
  ExpectNearLinear(Measure(text, f, {{"ITERS", 2000}}), Measure(text, f, {{"ITERS", 4000}}),
                   "cp_async_arrive_on");
}

TEST(CheckWorkTest, TmaMulticastGemmIsNearLinear) {
  // TMA loads multicast into a 2x2 cluster; remote consumer arrives on the producer's barrier.
  const std::string f = "pipelines/tma_async_gemm/gemm.pipe";
  const std::string text = ReadFile(f);
  ExpectNearLinear(Measure(text, f, {{"K_TILES", 500}}), Measure(text, f, {{"K_TILES", 1000}}),
                   "gemm");
}

TEST(CheckWorkTest, ManyClustersAreNearLinear) {
  // The run grows by clusters, not by iterations: clocks are per cluster (happens_before.h).
  const std::string f = "sim/examples/gemm_tma_multicast_2x2.pipe";
  const std::string text = ReadFile(f);
  const std::string from = "\nclusters 1\n";
  ASSERT_NE(text.find(from), std::string::npos);
  auto with = [&](int clusters) {
    std::string t = text;
    t.replace(t.find(from), from.size(), "\nclusters " + std::to_string(clusters) + "\n");
    return Measure(t, f, {{"K_TILES", 16}});
  };
  ExpectNearLinear(with(64), with(128), "clusters");
}

}  // namespace
}  // namespace parity::verifier
