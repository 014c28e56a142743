// The memory semantics of each operation kind in the shared happens-before
// (verifier/happens_before.h), against the PTX ISA's statements: a standalone expect_tx or
// complete_tx is .relaxed and publishes nothing; an asynchronous copy's complete-tx and a
// cp.async.mbarrier.arrive's arrive-on publish the operation's own writes, not the issuer's
// other accesses. Each known-bad schedule of pipelines/races that relies on one of those for
// ordering gets its race (P2009) from `check` under every policy and from `explore`; its clean
// twin (tests/verifier/testdata/hb), ordered the way PTX orders it, gets no finding from either.
#include <gtest/gtest.h>

#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "sim/engine/engine.h"
#include "sim/ir/parser.h"
#include "sim/model/codes.h"
#include "verifier/explore.h"
#include "verifier/rules.h"

namespace parity::verifier {
namespace {

using model::Code;

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

struct Loaded {
  ir::Program program;
  std::vector<int64_t> params;
};

std::unique_ptr<Loaded> Load(const std::string& path) {
  auto program = ir::ParseProgram(ReadFile(path), path);
  EXPECT_TRUE(program.ok()) << path << ": " << program.status().ToString();
  if (!program.ok()) return nullptr;
  auto l = std::make_unique<Loaded>();
  l->program = std::move(program).value();
  auto params = ir::BindParams(l->program, {});
  EXPECT_TRUE(params.ok()) << path;
  if (!params.ok()) return nullptr;
  l->params = *params;
  return l;
}

std::string Dump(const std::vector<Finding>& findings) {
  std::string s;
  for (const Finding& f : findings) {
    s += std::string(model::CodeId(f.code())) + " " + f.message + " @ " + f.where.ToString() +
         "\n";
  }
  return s;
}

bool HasError(const std::vector<Finding>& findings) { return HasErrors(findings); }

// The findings of `code` on buffer `object`.
size_t Count(const Loaded& l, const std::vector<Finding>& findings, Code code,
             const std::string& object) {
  size_t n = 0;
  for (const Finding& f : findings) {
    if (f.code() == code && f.object_is_buffer && l.program.buffers[f.object].name == object) ++n;
  }
  return n;
}

struct Policy {
  engine::Policy policy;
  uint64_t seed;
};
const Policy kPolicies[] = {
    {engine::Policy::kEager, 0},  {engine::Policy::kLazy, 0},   {engine::Policy::kRoundRobin, 0},
    {engine::Policy::kRandom, 1}, {engine::Policy::kRandom, 2}, {engine::Policy::kRandom, 3},
    {engine::Policy::kRandom, 4}, {engine::Policy::kRandom, 5}, {engine::Policy::kRandom, 6},
};

// CheckRules' findings on one run of `l`.
std::vector<Finding> Check(const Loaded& l, const Policy& p, engine::Outcome* outcome) {
  engine::EngineOptions o;
  o.policy = p.policy;
  o.seed = p.seed;
  auto e = engine::Engine::Create(l.program, l.params, o);
  EXPECT_TRUE(e.ok());
  if (!e.ok()) return {};
  e->Run();
  *outcome = e->outcome();
  return CheckRules(l.program, *e, e->trace());
}

struct Pair {
  const char* bad;      // pipelines/races/...
  const char* clean;    // tests/verifier/testdata/hb/... ("" when the fix is a count)
  const char* object;   // the raced buffer
  bool every_policy;    // the race shows under every policy (else: under some)
};

const Pair kPairs[] = {
    // A TMA load's complete-tx does not publish what its issuer did after its arrive.
    {"pipelines/races/bad_write_after_arrive_expect_tx.pipe",
     "tests/verifier/testdata/hb/ok_write_before_arrive_expect_tx.pipe", "meta", true},
    // A remote standalone expect_tx is .relaxed; st.async publishes only its bytes.
    {"pipelines/races/bad_remote_expect_tx_publishes_nothing.pipe",
     "tests/verifier/testdata/hb/ok_remote_expect_tx_after_fence.pipe", "msg", true},
    // cp.async.mbarrier.arrive publishes the thread's cp.async writes only.
    {"pipelines/races/bad_cp_async_arrive_publishes_only_copies.pipe",
     "tests/verifier/testdata/hb/ok_cp_async_arrive_then_arrive.pipe", "hdr", true},
    // Which of two warps' cp.async.mbarrier.arrive landed is the engine's choice: the checker
    // must follow it (Engine::TracePlace::agent), else it credits the other warp's copies.
    {"pipelines/races/bad_cp_async_arrive_count_low.pipe", "", "data", false},
};

TEST(MemorySemanticsTest, KnownBadRacesAreFoundByCheckAndExplore) {
  for (const Pair& c : kPairs) {
    SCOPED_TRACE(c.bad);
    auto l = Load(c.bad);
    ASSERT_NE(l, nullptr);
    size_t racy = 0;
    for (const Policy& p : kPolicies) {
      engine::Outcome outcome;
      const std::vector<Finding> f = Check(*l, p, &outcome);
      // P2005 (the slot rule) or P2009 (the access model; deferring to P2005 on its slot).
      const size_t n = Count(*l, f, Code::kDataRace, c.object) +
                       Count(*l, f, Code::kSharedMemoryRace, c.object);
      racy += n > 0 ? 1 : 0;
      if (c.every_policy) {
        EXPECT_EQ(outcome, engine::Outcome::kCompleted) << Dump(f);
        EXPECT_GT(n, 0u) << engine::PolicyName(p.policy) << " " << p.seed << "\n" << Dump(f);
      }
    }
    EXPECT_GT(racy, 0u) << "no policy shows the race";
    if (!c.every_policy) continue;  // explore's first finding may be another bug of the file
    const ExploreResult x = Explore(l->program, l->params, ExploreOptions{});
    EXPECT_EQ(x.verdict, ExploreVerdict::kRuleViolation) << Dump(x.findings);
    EXPECT_GT(Count(*l, x.findings, Code::kDataRace, c.object) +
                  Count(*l, x.findings, Code::kSharedMemoryRace, c.object),
              0u)
        << Dump(x.findings);
  }
}

TEST(MemorySemanticsTest, CleanTwinsHaveNoFinding) {
  for (const Pair& c : kPairs) {
    if (*c.clean == '\0') continue;
    SCOPED_TRACE(c.clean);
    auto l = Load(c.clean);
    ASSERT_NE(l, nullptr);
    for (const Policy& p : kPolicies) {
      engine::Outcome outcome;
      const std::vector<Finding> f = Check(*l, p, &outcome);
      EXPECT_EQ(outcome, engine::Outcome::kCompleted);
      EXPECT_FALSE(HasError(f)) << engine::PolicyName(p.policy) << " " << p.seed << "\n"
                                << Dump(f);
    }
    const ExploreResult x = Explore(l->program, l->params, ExploreOptions{});
    EXPECT_EQ(x.verdict, ExploreVerdict::kVerified) << Dump(x.findings);
  }
}

// The fix of bad_cp_async_arrive_count_low.pipe (count 2) is clean on every path.
TEST(MemorySemanticsTest, TwoWarpsCpAsyncArrivesWithTheRightCountAreClean) {
  std::string text = ReadFile("pipelines/races/bad_cp_async_arrive_count_low.pipe");
  const std::string from = "barrier full[1] count 1";
  ASSERT_NE(text.find(from), std::string::npos);
  text.replace(text.find(from), from.size(), "barrier full[1] count 2");
  // With both warps in phase 0, the consumer's second wait would wait for a phase nobody
  // completes: it goes.
  const std::string second = "  wait full[0] parity 1\n";
  ASSERT_NE(text.find(second), std::string::npos);
  text.erase(text.find(second), second.size());
  auto program = ir::ParseProgram(text, "count2.pipe");
  ASSERT_TRUE(program.ok()) << program.status().ToString();
  auto params = ir::BindParams(*program, {});
  ASSERT_TRUE(params.ok());
  const ExploreResult x = Explore(*program, *params, ExploreOptions{});
  EXPECT_EQ(x.verdict, ExploreVerdict::kVerified) << Dump(x.findings);
}

// A standalone expect_tx and a .relaxed arrive publish nothing by themselves; after a
// fence.acq_rel of the same thread they are a release pattern (PTX: a release fence followed by
// a strong operation on the barrier) and publish what precedes the fence.
TEST(MemorySemanticsTest, ExpectTxAndRelaxedArrivePublishOnlyAfterAFence) {
  const std::string base = R"(
cluster 1x1
buffer meta[1] bytes 16
buffer tile[1] bytes 8192
barrier full[1] count 1
tensormap tm dtype f16 dims [1024, 1024] box [64, 64] swizzle 128B
role producer threads 32 {
  init full[0]
  fence.mbarrier_init
  bar.sync 1, 64
  write meta[0]
  FENCE
  expect_tx full[0] bytes 8192
  arrive.relaxed full[0]
  tma.load tm coords [0, 0] -> tile[0] bar full[0]
}
role consumer threads 32 {
  bar.sync 1, 64
  wait full[0] parity 0
  use tile[0]
  use meta[0]
}
)";
  for (const char* fence : {"fence.acq_rel.cta", "fence.proxy.async"}) {
    std::string text = base;
    text.replace(text.find("FENCE"), 5, fence);
    auto program = ir::ParseProgram(text, "fence.pipe");
    ASSERT_TRUE(program.ok()) << program.status().ToString();
    auto params = ir::BindParams(*program, {});
    ASSERT_TRUE(params.ok());
    const ExploreResult x = Explore(*program, *params, ExploreOptions{});
    size_t races = 0;
    for (const Finding& f : x.findings) {
      races += f.code() == Code::kDataRace && program->buffers[f.object].name == "meta";
    }
    if (std::string(fence) == "fence.acq_rel.cta") {
      EXPECT_EQ(x.verdict, ExploreVerdict::kVerified) << fence << "\n" << Dump(x.findings);
    } else {
      EXPECT_EQ(x.verdict, ExploreVerdict::kRuleViolation) << fence << "\n" << Dump(x.findings);
      EXPECT_GT(races, 0u) << fence << "\n" << Dump(x.findings);
    }
  }
}

}  // namespace
}  // namespace parity::verifier
