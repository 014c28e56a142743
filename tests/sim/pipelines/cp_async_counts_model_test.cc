// The cp-async counts (sim/pipelines/counts.h) agree with the model: the bundled Ampere
// multistage loop (pipelines/ampere_multistage/sgemm_sm80.pipe) checks clean with the
// wait_group N that `parity counts cp-async` derives for its stages, and one more than N is
// reported as the race the derivation names (P2005). Run through the C++ API (parity/parity.h).
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "parity/parity.h"
#include "sim/pipelines/counts.h"

namespace parity::pipelines {
namespace {

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The schedule with every `cp.async.wait K_PIPE_MAX - 2` made `cp.async.wait WAIT`, WAIT a new
// param.
std::string WithWaitParam(std::string text) {
  const std::string from = "cp.async.wait K_PIPE_MAX - 2";
  size_t n = 0;
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at)) {
    text.replace(at, from.size(), "cp.async.wait WAIT");
    ++n;
  }
  EXPECT_EQ(n, 2u) << "the bundled loop waits in its prologue and in its main loop";
  const std::string anchor = "param K_TILES";
  text.insert(text.find(anchor), "param WAIT = 0\n");
  return text;
}

int64_t Derived(int stages, const std::string& key) {
  CountsRequest req;
  req.kind = PipelineKind::kCpAsync;
  req.stages = stages;
  Expected<CountsResult> r = ComputeCounts(req);
  EXPECT_TRUE(r.ok());
  for (const CountItem& i : r->items) {
    if (i.key == key) return i.value;
  }
  ADD_FAILURE() << key;
  return -1;
}

bool HasCode(const api::CheckReport& r, const std::string& code) {
  for (const api::Finding& f : r.findings) {
    if (f.code == code) return true;
  }
  return false;
}

TEST(CpAsyncCountsModel, DerivedWaitGroupIsCleanAndOneMoreRaces) {
  const std::string text =
      WithWaitParam(ReadFile("pipelines/ampere_multistage/sgemm_sm80.pipe"));
  auto schedule = api::Schedule::FromString(text, "sgemm_sm80_wait.pipe");
  ASSERT_TRUE(schedule.ok()) << schedule.error().ToString();
  for (int stages : {2, 3, 4, 5}) {
    const int64_t n = Derived(stages, "wait_group");
    ASSERT_TRUE(schedule->SetParam("K_PIPE_MAX", stages).ok());
    for (api::Policy policy : {api::Policy::kEager, api::Policy::kLazy,
                               api::Policy::kRoundRobin}) {
      api::CheckOptions options;
      options.policy = policy;
      options.collect_events = false;
      ASSERT_TRUE(schedule->SetParam("WAIT", n).ok());
      auto ok = api::Check(*schedule, options);
      ASSERT_TRUE(ok.ok()) << ok.error().ToString();
      EXPECT_EQ(ok->outcome, api::Outcome::kCompleted) << "stages " << stages;
      EXPECT_FALSE(ok->has_errors()) << "stages " << stages << ": "
                                     << (ok->findings.empty() ? ""
                                                              : ok->findings[0].ToString());
      // Under the lazy policy (copies land as late as possible) one more pending group reads
      // a stage still being written.
      if (policy != api::Policy::kLazy) continue;
      ASSERT_TRUE(schedule->SetParam("WAIT", n + 1).ok());
      auto racy = api::Check(*schedule, options);
      ASSERT_TRUE(racy.ok()) << racy.error().ToString();
      EXPECT_TRUE(HasCode(*racy, "P2005")) << "stages " << stages << " wait_group " << n + 1;
    }
  }
}

// The prologue of the bundled loop fills `prefetch` stages.
TEST(CpAsyncCountsModel, BundledLoopPrefetchesStagesMinusOne) {
  const std::string text = ReadFile("pipelines/ampere_multistage/sgemm_sm80.pipe");
  EXPECT_NE(text.find("for p in 0 .. K_PIPE_MAX - 1 {"), std::string::npos);
  EXPECT_EQ(Derived(3, "prefetch"), 2);  // 0 .. K_PIPE_MAX - 1 is K_PIPE_MAX - 1 k-tiles
}

}  // namespace
}  // namespace parity::pipelines
