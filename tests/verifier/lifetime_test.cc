// verifier/lifetime.h: accesses to a CTA's shared memory and mbarriers that its exit may
// overtake (P2010 access-after-exit, P2011 exit-with-copy-in-flight).
//   - small schedules at their lines, under every policy (the check does not depend on the order
//     a run took), and their fixes clean;
//   - differential: over the generated schedules of tests/verifier/gen, a lifetime finding of one
//     completed run is reachable in the naive walk of every interleaving (naive_explore.h checks
//     the definition on every transition), and a lifetime bug the walk reaches is found on that
//     run (the happens-before argument of lifetime.h, tested instead of trusted).
#include "verifier/lifetime.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "sim/engine/engine.h"
#include "sim/ir/ir.h"
#include "sim/ir/parser.h"
#include "sim/model/codes.h"
#include "tests/verifier/gen/naive_explore.h"
#include "tests/verifier/gen/schedule_gen.h"
#include "verifier/rules.h"

namespace parity::verifier {
namespace {

using engine::Outcome;
using engine::Policy;
using model::Code;

constexpr Policy kPolicies[] = {Policy::kEager, Policy::kLazy, Policy::kRoundRobin,
                                Policy::kRandom};

struct Ran {
  std::unique_ptr<ir::Program> program;
  std::unique_ptr<engine::Engine> engine;
  engine::RunResult result;
  std::vector<Finding> findings;
};

std::unique_ptr<Ran> RunText(const std::string& text, Policy policy, uint64_t seed = 1) {
  auto parsed = ir::ParseProgram(text, "t.pipe");
  EXPECT_TRUE(parsed.ok()) << parsed.status().ToString();
  if (!parsed.ok()) return nullptr;
  auto run = std::make_unique<Ran>();
  run->program = std::make_unique<ir::Program>(std::move(*parsed));
  auto params = ir::BindParams(*run->program, {});
  EXPECT_TRUE(params.ok());
  if (!params.ok()) return nullptr;
  engine::EngineOptions o;
  o.policy = policy;
  o.seed = seed;
  auto e = engine::Engine::Create(*run->program, *params, o);
  EXPECT_TRUE(e.ok()) << e.status().ToString();
  if (!e.ok()) return nullptr;
  run->engine = std::make_unique<engine::Engine>(std::move(*e));
  run->result = run->engine->Run();
  run->findings = CheckLifetime(*run->program, *run->engine, run->engine->trace());
  return run;
}

std::string Dump(const Ran& r) {
  std::string s = std::string("outcome ") + engine::OutcomeName(r.result.outcome) + "\n";
  for (const Finding& f : r.findings) s += f.message + " @ " + f.where.ToString() + "\n";
  return s;
}

// Two CTAs; CTA 1's agent arrives on CTA 0's barrier, which nobody of CTA 0 waits on.
constexpr char kRemoteArrive[] = R"(schedule remote_arrive
cluster 2x1
barrier b[1] count 1
role r threads 32 {
  init b[0]
  fence.mbarrier_init
  cluster.sync
  if cta_rank == 1 {
    arrive b[0] @cta(0)
  }
  END
}
)";

std::string WithEnd(const std::string& end) {
  std::string t = kRemoteArrive;
  t.replace(t.find("END"), 3, end);
  return t;
}

TEST(LifetimeTest, RemoteArriveWithoutClosingClusterBarrierUnderEveryPolicy) {
  for (Policy p : kPolicies) {
    auto r = RunText(WithEnd("# no closing cluster barrier"), p);
    ASSERT_NE(r, nullptr);
    EXPECT_EQ(r->result.outcome, Outcome::kCompleted) << Dump(*r);
    ASSERT_EQ(r->findings.size(), 1u) << engine::PolicyName(p) << "\n" << Dump(*r);
    const Finding& f = r->findings[0];
    EXPECT_EQ(f.code(), Code::kAccessAfterExit);
    EXPECT_EQ(f.where.line, 9);
    EXPECT_EQ(f.cta, 0u);
    EXPECT_EQ(r->engine->agent_info(f.agent).cta, 1u);
    EXPECT_EQ(r->program->barriers[f.object].name, "b");
  }
}

TEST(LifetimeTest, ClosingClusterBarrierOrWaitOrdersTheArrive) {
  for (Policy p : kPolicies) {
    auto sync = RunText(WithEnd("cluster.sync"), p);
    ASSERT_NE(sync, nullptr);
    EXPECT_TRUE(sync->findings.empty()) << Dump(*sync);
    // CTA 0 observes the phase the remote arrive completes: ordered before its exit.
    auto wait = RunText(WithEnd("if cta_rank == 0 {\n    wait b[0] parity 0\n  }"), p);
    ASSERT_NE(wait, nullptr);
    EXPECT_TRUE(wait->findings.empty()) << Dump(*wait);
  }
}

// Memory semantics and scope decide whether the closing synchronisation orders a peer's
// earlier remote operation before the exit (verifier/lifetime.h (b)). CTA 1 arrives on CTA 0's
// b[0], which nobody waits on, then synchronises with CTA 0 in one of the ways below (SYNC_1
// in CTA 1, SYNC_0 in CTA 0) before both exit.
constexpr char kClosing[] = R"(schedule closing
cluster 2x1
barrier b[1] count 1
barrier c[1] count 1
role r threads 32 {
  init b[0]
  init c[0]
  fence.mbarrier_init
  cluster.sync
  if cta_rank == 1 {
    arrive b[0] @cta(0)
    SYNC_1
  } else {
    SYNC_0
  }
}
)";

std::string Closing(const std::string& sync1, const std::string& sync0) {
  std::string t = kClosing;
  t.replace(t.find("SYNC_1"), 6, sync1);
  t.replace(t.find("SYNC_0"), 6, sync0);
  return t;
}

// The findings of `text` under every policy, which must agree; the first policy's returned.
std::vector<Finding> EveryPolicy(const std::string& text) {
  std::vector<Finding> first;
  for (Policy p : kPolicies) {
    auto r = RunText(text, p);
    if (r == nullptr) return {};
    EXPECT_EQ(r->result.outcome, Outcome::kCompleted) << Dump(*r);
    if (p == kPolicies[0]) {
      first = r->findings;
    } else {
      EXPECT_EQ(r->findings.size(), first.size()) << engine::PolicyName(p) << "\n" << Dump(*r);
    }
  }
  return first;
}

TEST(LifetimeTest, RelaxedClosingClusterArriveOrdersNothing) {
  // barrier.cluster.arrive.relaxed releases nothing: CTA 0 can pass the cluster barrier and exit
  // while CTA 1's remote arrive is still on its way.
  auto relaxed = EveryPolicy(Closing("cluster.arrive.relaxed\n    cluster.wait",
                                     "cluster.arrive.relaxed\n    cluster.wait"));
  ASSERT_EQ(relaxed.size(), 1u);
  EXPECT_EQ(relaxed[0].code(), Code::kAccessAfterExit);
  EXPECT_EQ(relaxed[0].where.line, 11);
  EXPECT_EQ(relaxed[0].cta, 0u);
  // The default .release arrive, or a fence.acq_rel.cluster before the relaxed one (a release
  // pattern), orders it.
  EXPECT_TRUE(EveryPolicy(Closing("cluster.sync", "cluster.sync")).empty());
  EXPECT_TRUE(EveryPolicy(Closing("fence.acq_rel.cluster\n    cluster.arrive.relaxed\n"
                                  "    cluster.wait",
                                  "cluster.arrive.relaxed\n    cluster.wait"))
                  .empty());
}

TEST(LifetimeTest, CtaScopedReleaseAcrossCtasOrdersNothing) {
  // CTA 1 signals CTA 0's c[0] after its arrive on b[0]; CTA 0 waits for c[0] and exits. The
  // default .release.cta arrive observed by another CTA orders nothing across CTAs: b[0]'s
  // arrive can still land after CTA 0 exited. c[0]'s own arrive is observed, so it is fine.
  auto narrow = EveryPolicy(Closing("arrive c[0] @cta(0)", "wait c[0] parity 0"));
  ASSERT_EQ(narrow.size(), 1u);
  EXPECT_EQ(narrow[0].code(), Code::kAccessAfterExit);
  EXPECT_EQ(narrow[0].where.line, 11);
  EXPECT_EQ(narrow[0].object, 0u);  // b, not c
  EXPECT_NE(narrow[0].message.find(".cta-scoped"), std::string::npos) << narrow[0].message;
  // Both sides .cluster: the release orders the earlier arrive before CTA 0's exit.
  EXPECT_TRUE(EveryPolicy(Closing("arrive.release.cluster c[0] @cta(0)",
                                  "wait.acquire.cluster c[0] parity 0"))
                  .empty());
  // A .cluster release met by a .cta acquire: not morally strong, still nothing.
  EXPECT_EQ(EveryPolicy(Closing("arrive.release.cluster c[0] @cta(0)", "wait c[0] parity 0"))
                .size(),
            1u);
  // A .relaxed arrive releases nothing, whatever the waiter's scope.
  EXPECT_EQ(EveryPolicy(Closing("arrive.relaxed.cluster c[0] @cta(0)",
                                "wait.acquire.cluster c[0] parity 0"))
                .size(),
            1u);
}

TEST(LifetimeTest, AnObservedArriveIsDoneWhateverItsSemantics) {
  // The arrive's own effect: CTA 0 observes the phase it completes. Reading the barrier's state
  // is not an acquire, so a relaxed arrive and a relaxed wait are enough for the arrive itself.
  std::string t = Closing("", "wait b[0] parity 0");
  EXPECT_TRUE(EveryPolicy(t).empty());
  t.replace(t.find("arrive b[0] @cta(0)"), 19, "arrive.relaxed.cluster b[0] @cta(0)");
  EXPECT_TRUE(EveryPolicy(t).empty());
  t.replace(t.find("wait b[0]"), 9, "wait.relaxed.cta b[0]");
  EXPECT_TRUE(EveryPolicy(t).empty());
}

// DSMEM: CTA 1 reads or writes CTA 0's t[0], then signals c[0] of CTA 0 with the default
// .release.cta arrive; CTA 0 waits for c[0] and exits.
constexpr char kDsmem[] = R"(schedule dsmem
cluster 2x1
buffer t[1] bytes 256
barrier c[1] count 1
role r threads 32 {
  init c[0]
  fence.mbarrier_init
  cluster.sync
  if cta_rank == 1 {
    ACCESS t[0] @cta(0)
    ARRIVE c[0] @cta(0)
  } else {
    WAIT c[0] parity 0
  }
}
)";

std::string Dsmem(const std::string& access, const std::string& arrive, const std::string& wait) {
  std::string t = kDsmem;
  t.replace(t.find("ACCESS"), 6, access);
  t.replace(t.find("ARRIVE"), 6, arrive);
  t.replace(t.find("WAIT"), 4, wait);
  return t;
}

TEST(LifetimeTest, DsmemAccessesBeforeAPeersExit) {
  // A write needs a release whose scope includes CTA 0.
  auto w = EveryPolicy(Dsmem("write", "arrive", "wait"));
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(w[0].code(), Code::kAccessAfterExit);
  EXPECT_EQ(w[0].where.line, 10);
  EXPECT_TRUE(w[0].object_is_buffer);
  EXPECT_TRUE(EveryPolicy(Dsmem("write", "arrive.release.cluster", "wait.acquire.cluster")).empty());
  // A read has returned its value when the release after it issues: any scope orders it ...
  EXPECT_TRUE(EveryPolicy(Dsmem("use", "arrive", "wait")).empty());
  // ... but a relaxed arrive releases nothing.
  auto r = EveryPolicy(Dsmem("use", "arrive.relaxed.cluster", "wait.acquire.cluster"));
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].where.line, 10);
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << path;
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string Replace(std::string t, const std::string& from, const std::string& to) {
  for (size_t at = t.find(from); at != std::string::npos; at = t.find(from, at + to.size())) {
    t.replace(at, from.size(), to);
  }
  return t;
}

// The known-bad teardowns of pipelines/lifetime whose qualifiers decide: their fixes, the same
// text with the qualifiers corrected, are clean under every policy.
TEST(LifetimeTest, QualifierTeardownVariantsAreCleanOnceFixed) {
  const std::string relaxed = ReadFile("pipelines/lifetime/bad_relaxed_closing_cluster_sync.pipe");
  ASSERT_FALSE(EveryPolicy(relaxed).empty());
  EXPECT_TRUE(EveryPolicy(Replace(relaxed, "cluster.arrive.relaxed", "cluster.arrive")).empty());
  const std::string narrow = ReadFile("pipelines/lifetime/bad_cta_scope_teardown.pipe");
  ASSERT_FALSE(EveryPolicy(narrow).empty());
  EXPECT_TRUE(EveryPolicy(Replace(Replace(narrow, "  arrive done[0]", "  arrive.release.cluster done[0]"),
                                  "  wait done[0]", "  wait.acquire.cluster done[0]"))
                  .empty());
}

// A load into the CTA's own tile that no agent waits for.
constexpr char kOwnLoad[] = R"(schedule own_load
cluster 1x1
buffer tile[1] bytes 128
barrier full[1] count 1
role r threads 32 {
  init full[0]
  fence.mbarrier_init
  arrive.expect_tx full[0] bytes 128
  bulk.load tile[0] bar full[0]
  WAIT
}
)";

TEST(LifetimeTest, ExitWithOwnLoadInFlightUnderEveryPolicy) {
  for (Policy p : kPolicies) {
    std::string t = kOwnLoad;
    t.replace(t.find("WAIT"), 4, "# no wait");
    auto r = RunText(t, p);
    ASSERT_NE(r, nullptr);
    ASSERT_EQ(r->findings.size(), 1u) << Dump(*r);
    EXPECT_EQ(r->findings[0].code(), Code::kExitWithCopyInFlight);
    EXPECT_EQ(r->findings[0].where.line, 9);
    t = kOwnLoad;
    t.replace(t.find("WAIT"), 4, "wait full[0] parity 0");
    auto ok = RunText(t, p);
    ASSERT_NE(ok, nullptr);
    EXPECT_TRUE(ok->findings.empty()) << Dump(*ok);
  }
}

// A deadlocked CTA never exits: nothing to check against.
TEST(LifetimeTest, ACtaThatNeverExitsHasNoLifetimeFinding) {
  std::string t = kOwnLoad;
  t.replace(t.find("WAIT"), 4, "wait full[0] parity 1\n  wait full[0] parity 0");
  auto r = RunText(t, Policy::kEager);
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->result.outcome, Outcome::kDeadlock) << Dump(*r);
  EXPECT_TRUE(r->findings.empty()) << Dump(*r);
}

// The differential check described at the top, on the runs where no other protocol rule fires.
// A run with another finding is only counted: there the phase a copy's bytes count in, or whether
// a wait passes at once, can depend on the interleaving (an arrive racing its expect_tx, P2002; a
// read before the bytes, P2005 / P2009), and one run's happens-before does not speak for the
// other interleavings (verifier/lifetime.h says so). Schedules whose walk is too large are skipped.
// Returns how many clean completed runs had a lifetime finding.
uint64_t CompareGenerated(const gen::GenOptions& options, uint64_t seeds) {
  uint64_t compared = 0, found = 0, reachable = 0, mixed = 0, mixed_differ = 0;
  for (uint64_t seed = 0; seed < seeds; ++seed) {
    const std::string text = gen::GenerateSchedule(seed, options);
    auto parsed = ir::ParseProgram(text, "gen.pipe");
    EXPECT_TRUE(parsed.ok()) << parsed.status().ToString() << "\n" << text;
    if (!parsed.ok()) continue;
    auto params = ir::BindParams(*parsed, {});
    EXPECT_TRUE(params.ok());
    if (!params.ok()) continue;
    const gen::NaiveEnds naive = gen::NaiveExplore(*parsed, *params, 20'000);
    if (!naive.complete) continue;
    if (!naive.lifetime.empty()) ++reachable;
    for (Policy p : {Policy::kEager, Policy::kLazy}) {
      auto r = RunText(text, p);
      if (r == nullptr) continue;  // RunText reported why
      if (r->result.outcome != Outcome::kCompleted) continue;
      std::set<Code> hb;
      for (const Finding& f : r->findings) hb.insert(f.code());
      bool others = false;
      for (const Finding& f : CheckRules(*r->program, *r->engine, r->engine->trace())) {
        others |= f.code() != Code::kAccessAfterExit && f.code() != Code::kExitWithCopyInFlight;
      }
      const bool agree = hb == naive.lifetime || (!hb.empty() && !naive.lifetime.empty() &&
                                                  std::includes(naive.lifetime.begin(),
                                                                naive.lifetime.end(),
                                                                hb.begin(), hb.end()));
      if (others) {
        ++mixed;
        mixed_differ += agree ? 0 : 1;
        continue;
      }
      ++compared;
      if (!hb.empty()) ++found;
      SCOPED_TRACE("seed " + std::to_string(seed) + " policy " + engine::PolicyName(p) + "\n" +
                   text + Dump(*r));
      // No false alarm: what the run reports, some interleaving does.
      for (Code c : hb) {
        EXPECT_TRUE(naive.lifetime.count(c)) << model::CodeId(c);
      }
      // Nothing missed: an access some interleaving makes after the exit is unordered on this
      // completed run too.
      if (!naive.lifetime.empty()) {
        EXPECT_FALSE(hb.empty());
      }
    }
  }
  std::printf("lifetime differential: %llu clean completed runs compared, %llu with a lifetime "
              "finding; %llu schedules with a reachable lifetime bug; %llu runs with other "
              "findings, %llu of them differing from the walk\n",
              static_cast<unsigned long long>(compared), static_cast<unsigned long long>(found),
              static_cast<unsigned long long>(reachable), static_cast<unsigned long long>(mixed),
              static_cast<unsigned long long>(mixed_differ));
  return found;
}

TEST(LifetimeTest, GeneratedSchedulesAgreeWithEveryInterleaving) {
#if defined(__SANITIZE_ADDRESS__)
  constexpr uint64_t kSeeds = 100;
#else
  constexpr uint64_t kSeeds = 700;
#endif
  const uint64_t found = CompareGenerated(gen::GenOptions{}, kSeeds);
  // 13 at 700 seeds: the generator must keep producing them (too few seeds under ASan to ask).
  if (kSeeds >= 700) {
    EXPECT_GT(found, 8u);
  }
  (void)found;
}

// The same with cp.async, st.async into the peer and named barriers in the free shape.
TEST(LifetimeTest, ExtendedGeneratedSchedulesAgreeWithEveryInterleaving) {
  gen::GenOptions o;
  o.extended_ops = true;
#if defined(__SANITIZE_ADDRESS__)
  constexpr uint64_t kSeeds = 60;
#else
  constexpr uint64_t kSeeds = 500;
#endif
  const uint64_t found = CompareGenerated(o, kSeeds);
  if (kSeeds >= 500) {  // too few seeds under ASan to require one
    EXPECT_GT(found, 0u);
  }
  (void)found;
}

// P2030: a DSMEM access must come after the accessing agent observed an operation of the peer
// CTA, through any synchronisation (verifier/lifetime.h). `sync` is what CTA 0 runs before its
// write into CTA 1, `peer` what CTA 1 runs before its closing cluster barrier.
std::vector<Finding> BeforeStart(const std::string& sync, const std::string& peer) {
  const std::string text =
      "cluster 2x1\n"
      "buffer t[1] bytes 256\n"
      "role r0 when cta_rank == 0 {\n"
      "  " + sync + "\n"
      "  write t[0] @cta(1)\n"
      "  cluster.sync\n"
      "}\n"
      "role r1 when cta_rank == 1 {\n"
      "  " + peer + "\n"
      "  cluster.sync\n"
      "}\n";
  std::vector<Finding> out;
  for (Policy p : {Policy::kEager, Policy::kLazy, Policy::kRoundRobin}) {
    auto r = RunText(text, p);
    if (r == nullptr) return {};
    EXPECT_EQ(r->result.outcome, Outcome::kCompleted) << Dump(*r);
    for (const Finding& f : r->findings) {
      if (f.code() == Code::kDsmemBeforeStart) out.push_back(f);
    }
  }
  return out;
}

TEST(LifetimeTest, DsmemAccessNeedsAnObservationOfThePeer) {
  // Nothing before the write: CTA 1 may not have started, under every policy (3 runs).
  const auto none = BeforeStart("let z = 1", "let z = 1");
  ASSERT_EQ(none.size(), 3u);
  EXPECT_EQ(none[0].where.line, 5);
  EXPECT_EQ(none[0].cta, 1u);
  // A relaxed cluster barrier releases nothing, but its wait returns only once CTA 1 arrived:
  // CTA 1 runs (the init sequence of CUTLASS and DeepGEMM proves the start of every CTA).
  EXPECT_TRUE(BeforeStart("cluster.arrive.relaxed\n  cluster.wait",
                          "cluster.arrive.relaxed\n  cluster.wait")
                  .empty());
}

}  // namespace
}  // namespace parity::verifier
