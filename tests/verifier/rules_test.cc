// verifier/rules.h: each broken schedule of sim/examples/rules is reported with the right code,
// object, CTA and agent; the fixed variants (one line changed) and the correct bundled pipelines
// are clean under every policy; PcMap agrees with the engine's instruction numbering.
#include "verifier/rules.h"

#include <gtest/gtest.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <variant>
#include <vector>

#include "sim/engine/engine.h"
#include "sim/ir/parser.h"
#include "verifier/deadlock.h"

namespace parity::verifier {
namespace {

using model::Code;

struct Run {
  ir::Program program;
  std::unique_ptr<engine::Engine> engine;
  engine::RunResult result;
  std::vector<Finding> findings;
};

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::unique_ptr<Run> RunText(const std::string& text, const std::string& file,
                             engine::Policy policy, uint64_t seed = 0) {
  auto program = ir::ParseProgram(text, file);
  EXPECT_TRUE(program.ok()) << program.status().ToString();
  if (!program.ok()) return nullptr;
  auto run = std::make_unique<Run>();
  run->program = std::move(program).value();
  auto params = ir::BindParams(run->program, {});
  EXPECT_TRUE(params.ok()) << params.status().ToString();
  if (!params.ok()) return nullptr;
  engine::EngineOptions options;
  options.policy = policy;
  options.seed = seed;
  auto engine = engine::Engine::Create(run->program, *params, options);
  EXPECT_TRUE(engine.ok()) << engine.status().ToString();
  if (!engine.ok()) return nullptr;
  run->engine = std::make_unique<engine::Engine>(std::move(engine).value());
  run->result = run->engine->Run();
  run->findings = CheckRules(run->program, *run->engine, run->engine->trace());
  return run;
}

std::string RulesPath(const std::string& name) { return "sim/examples/rules/" + name + ".pipe"; }

std::unique_ptr<Run> RunRules(const std::string& name, engine::Policy policy) {
  return RunText(ReadFile(RulesPath(name)), RulesPath(name), policy);
}

std::string Dump(const Run& run) {
  std::string s = std::string("outcome ") + engine::OutcomeName(run.result.outcome) + "\n";
  for (const Finding& f : run.findings) {
    s += std::string(model::CodeId(f.code())) + " " + f.message + " @ " + f.where.ToString() +
         "\n";
  }
  return s;
}

// The findings with `code` on object `name` (barrier or buffer) of global CTA `cta`.
std::vector<const Finding*> Find(const Run& run, Code code, const std::string& name,
                                 uint32_t cta) {
  std::vector<const Finding*> out;
  for (const Finding& f : run.findings) {
    if (f.code() != code || f.cta != cta) continue;
    const std::string& n = f.object_is_buffer ? run.program.buffers[f.object].name
                                              : run.program.barriers[f.object].name;
    if (n == name) out.push_back(&f);
  }
  return out;
}

std::string Label(const Run& run, uint32_t agent) {
  return agent == kNoFindingAgent ? "-" : AgentLabel(run.program, *run.engine, agent);
}

constexpr std::array kPolicies = {engine::Policy::kEager, engine::Policy::kLazy,
                                  engine::Policy::kRoundRobin, engine::Policy::kRandom};

TEST(RulesTest, EarlyCompletionArriveBeforeExpect) {
  for (engine::Policy policy : kPolicies) {
    auto run = RunRules("early_arrive_before_expect", policy);
    ASSERT_NE(run, nullptr);
    auto early = Find(*run, Code::kEarlyPhaseCompletion, "full", 0);
    ASSERT_EQ(early.size(), 1u) << engine::PolicyName(policy) << "\n" << Dump(*run);
    EXPECT_EQ(Label(*run, early[0]->agent), "CTA 0 producer[0]");
    EXPECT_EQ(early[0]->where.line, 23) << early[0]->where.ToString();  // the expect_tx line
    EXPECT_EQ(early[0]->violation.value, 8192);
    EXPECT_EQ(Find(*run, Code::kSharedMemoryRace, "tile", 0).size(), 1u) << Dump(*run);
  }
}

TEST(RulesTest, EarlyCompletionBytesSpillUnderLazyPolicy) {
  auto run = RunRules("early_bytes_spill", engine::Policy::kLazy);
  ASSERT_NE(run, nullptr);
  EXPECT_EQ(run->result.outcome, engine::Outcome::kCompleted) << Dump(*run);
  auto early = Find(*run, Code::kEarlyPhaseCompletion, "full", 0);
  ASSERT_EQ(early.size(), 1u) << Dump(*run);
  EXPECT_EQ(Label(*run, early[0]->agent), "CTA 0 producer[0]");
  EXPECT_EQ(early[0]->where.line, 21) << early[0]->where.ToString();  // the tma.load
  EXPECT_EQ(early[0]->violation.limit, 1);  // one phase late
  auto race = Find(*run, Code::kSharedMemoryRace, "tile", 0);
  ASSERT_EQ(race.size(), 1u) << Dump(*run);
  EXPECT_EQ(Label(*run, race[0]->other_agent), "CTA 0 consumer[0]");
  auto tx = Find(*run, Code::kTxMismatch, "full", 0);
  ASSERT_EQ(tx.size(), 1u) << Dump(*run);
  EXPECT_EQ(tx[0]->violation.value, 0);     // expected in the last phase
  EXPECT_EQ(tx[0]->violation.limit, 8192);  // delivered
  // Eager: the bytes land before the arrive, the phase never completes: deadlock + P2003.
  auto eager = RunRules("early_bytes_spill", engine::Policy::kEager);
  ASSERT_NE(eager, nullptr);
  EXPECT_EQ(eager->result.outcome, engine::Outcome::kDeadlock);
  EXPECT_TRUE(Find(*eager, Code::kEarlyPhaseCompletion, "full", 0).empty()) << Dump(*eager);
  EXPECT_EQ(Find(*eager, Code::kTxMismatch, "full", 0).size(), 1u) << Dump(*eager);
}

TEST(RulesTest, TxOvercount) {
  auto run = RunRules("tx_overcount", engine::Policy::kEager);
  ASSERT_NE(run, nullptr);
  EXPECT_EQ(run->result.outcome, engine::Outcome::kDeadlock);
  auto tx = Find(*run, Code::kTxMismatch, "full", 0);
  ASSERT_EQ(tx.size(), 1u) << Dump(*run);
  EXPECT_EQ(tx[0]->violation.value, 16384);
  EXPECT_EQ(tx[0]->violation.limit, 8192);
  EXPECT_EQ(run->findings.size(), 1u) << Dump(*run);
}

TEST(RulesTest, MulticastDisagreement) {
  for (engine::Policy policy : kPolicies) {
    auto run = RunRules("multicast_disagreement", policy);
    ASSERT_NE(run, nullptr);
    EXPECT_EQ(run->result.outcome, engine::Outcome::kDeadlock) << Dump(*run);
    auto mc = Find(*run, Code::kMulticastDisagreement, "full", 0);
    ASSERT_EQ(mc.size(), 1u) << Dump(*run);
    EXPECT_EQ(mc[0]->violation.value, 8192);
    EXPECT_EQ(mc[0]->violation.limit, 4096);
    // CTA 1 got both halves: nothing to report there.
    EXPECT_TRUE(Find(*run, Code::kMulticastDisagreement, "full", 1).empty()) << Dump(*run);
    EXPECT_TRUE(Find(*run, Code::kTxMismatch, "full", 1).empty()) << Dump(*run);
  }
}

// The bundled gemm_tx_overcount multiplies expect_tx by the cluster size in every CTA: the same
// imbalance everywhere is a tx mismatch, not a mask disagreement.
TEST(RulesTest, UniformOvercountIsTxMismatchNotDisagreement) {
  const std::string path = "sim/examples/gemm_tx_overcount.pipe";
  auto run = RunText(ReadFile(path), path, engine::Policy::kEager);
  ASSERT_NE(run, nullptr);
  EXPECT_EQ(run->result.outcome, engine::Outcome::kDeadlock);
  for (uint32_t cta = 0; cta < 4; ++cta) {
    EXPECT_FALSE(Find(*run, Code::kTxMismatch, "full", cta).empty()) << cta << "\n" << Dump(*run);
  }
  for (const Finding& f : run->findings) {
    EXPECT_NE(f.code(), Code::kMulticastDisagreement) << Dump(*run);
  }
}

TEST(RulesTest, MulticastReuseBeforeRemoteRelease) {
  for (engine::Policy policy : kPolicies) {
    auto run = RunRules("multicast_release_local_only", policy);
    ASSERT_NE(run, nullptr);
    EXPECT_EQ(run->result.outcome, engine::Outcome::kCompleted) << Dump(*run);
    auto a = Find(*run, Code::kSharedMemoryRace, "tile", 0);
    auto b = Find(*run, Code::kSharedMemoryRace, "tile", 1);
    ASSERT_FALSE(a.empty() && b.empty()) << engine::PolicyName(policy) << "\n" << Dump(*run);
    for (const Finding* f : b) {
      // In CTA 1, the cross-CTA pair: CTA 0's producer against CTA 1's consumer.
      EXPECT_EQ(run->engine->agent_info(f->agent).cta_global, 0u) << Dump(*run);
      EXPECT_EQ(Label(*run, f->other_agent), "CTA 1 consumer[0]");
    }
  }
  // Fixed: empty counts both CTAs' consumers and each consumer releases to both CTAs; a closing
  // cluster barrier keeps each CTA alive until its peer's last release has landed (P2010
  // otherwise, verifier/lifetime.h).
  std::string text = ReadFile(RulesPath("multicast_release_local_only"));
  text.replace(text.find("barrier empty[1] count 1"), 24, "barrier empty[1] count 2");
  text.replace(text.find("arrive empty[0]  "), 16, "arrive empty[0] mask 3");
  for (size_t at = text.find("  }\n}\n"); at != std::string::npos;
       at = text.find("  }\n}\n", at + 1)) {
    text.insert(at + 4, "  cluster.sync\n");
  }
  for (engine::Policy policy : kPolicies) {
    auto run = RunText(text, "fixed.pipe", policy);
    ASSERT_NE(run, nullptr);
    EXPECT_EQ(run->result.outcome, engine::Outcome::kCompleted) << Dump(*run);
    EXPECT_TRUE(run->findings.empty()) << Dump(*run);
  }
}

TEST(RulesTest, UseWithoutWait) {
  for (engine::Policy policy : kPolicies) {
    auto run = RunRules("use_without_wait", policy);
    ASSERT_NE(run, nullptr);
    auto race = Find(*run, Code::kSharedMemoryRace, "tile", 0);
    ASSERT_EQ(race.size(), 1u) << Dump(*run);
    // Reported against the reader (if read after the bytes landed) or the copy (if before).
    const bool reader_first = Label(*run, race[0]->agent) == "CTA 0 consumer[0]";
    EXPECT_EQ(Label(*run, reader_first ? race[0]->other_agent : race[0]->agent),
              "CTA 0 producer[0]");
    EXPECT_EQ(run->findings.size(), 1u) << Dump(*run);
  }
  std::string text = ReadFile(RulesPath("use_without_wait"));
  text.replace(text.find("  use tile[0]  "), 15, "  wait full[0] parity 0\n  use tile[0]");
  auto fixed = RunText(text, "fixed.pipe", engine::Policy::kLazy);
  ASSERT_NE(fixed, nullptr);
  EXPECT_TRUE(fixed->findings.empty()) << Dump(*fixed);
}

// Copies of one instruction in flight together land in any order; a delivery names the slot it
// filled, so the bytes of t[2] landing first (lazy policy) are not taken for those of t[0]. The
// slot index (2k) differs from the barrier element (k), which defeated the stage-ring heuristic.
TEST(RulesTest, OutOfOrderDeliveriesOfOneInstructionAreMatchedBySlot) {
  const std::string ok = R"(schedule slots_2k
buffer t[4] bytes 4096
barrier full[2] count 1
tensormap tm dtype u16 dims [64, 1024] box [64, 32]
role producer threads 32 {
  init full[0]
  init full[1]
  fence.mbarrier_init
  bar.sync 0, 64
  for k in 0 .. 2 {
    arrive.expect_tx full[k] bytes 4096
    tma.load tm coords [0, 64 * k] -> t[2 * k] bar full[k]
  }
}
role consumer threads 32 {
  bar.sync 0, 64
  for k in 0 .. 2 {
    wait full[k] parity 0
    use t[2 * k]
  }
}
)";
  for (engine::Policy policy : kPolicies) {
    auto run = RunText(ok, "slots_2k.pipe", policy);
    ASSERT_NE(run, nullptr);
    EXPECT_EQ(run->result.outcome, engine::Outcome::kCompleted) << Dump(*run);
    EXPECT_TRUE(run->findings.empty()) << engine::PolicyName(policy) << "\n" << Dump(*run);
  }
  // Reading the other copy's slot after waiting on one barrier is still a race.
  std::string bad = ok;
  bad.replace(bad.find("    use t[2 * k]"), 16, "    use t[2 - 2 * k]");
  auto run = RunText(bad, "slots_2k_bad.pipe", engine::Policy::kLazy);
  ASSERT_NE(run, nullptr);
  EXPECT_EQ(Find(*run, Code::kSharedMemoryRace, "t", 0).size(), 1u) << Dump(*run);
}

// cp.async (the per-thread copy of sm_80): its bytes are visible after a cp.async.wait_group /
// wait_all of the issuer that covers its group (to other threads through a later bar.sync), or
// through the phase that the issuer's cp.async.mbarrier.arrive lands in.
TEST(RulesTest, CpAsyncRaces) {
  const std::string head =
      "schedule cp\ncluster 1x1\nclusters 1\nbuffer buf[2] bytes 256\n"
      "barrier done[1] count 1\n";
  // The writer copies buf[0]; the reader (another warp) reads it after bar.sync 0 (the writer
  // drains its copies before it exits).
  auto two_warps = [&](const std::string& writer_sync) {
    return head + "role writer threads 32 {\n  cp.async buf[0]\n" + writer_sync +
           "  bar.sync 0, 64\n  cp.async.wait_all\n}\nrole reader threads 32 {\n"
           "  bar.sync 0, 64\n  use buf[0]\n}\n";
  };
  struct Case {
    std::string name, text;
    size_t races;  // P2005 on buf[0], under every policy
  };
  const std::vector<Case> cases = {
      {"own read, no wait",
       head + "role w threads 32 {\n  cp.async buf[0]\n  cp.async.commit\n  use buf[0]\n"
              "  cp.async.wait_all\n}\n",
       1},
      {"own read after wait_group 0",
       head + "role w threads 32 {\n  cp.async buf[0]\n  cp.async.commit\n"
              "  cp.async.wait 0\n  use buf[0]\n}\n",
       0},
      {"own read, the wait leaves the newest group pending",
       head + "role w threads 32 {\n  cp.async buf[0]\n  cp.async.commit\n"
              "  cp.async.wait 1\n  use buf[0]\n  cp.async.wait_all\n}\n",
       1},
      {"own read, wait_group 1 of two groups completes the older one only",
       head + "role w threads 32 {\n  cp.async buf[1]\n  cp.async.commit\n"
              "  cp.async buf[0]\n  cp.async.commit\n  cp.async.wait 1\n  use buf[1]\n"
              "  use buf[0]\n  cp.async.wait_all\n}\n",
       1},
      {"own read, copy never committed (wait_group 0 does not cover it)",
       head + "role w threads 32 {\n  cp.async buf[0]\n  cp.async.wait 0\n  use buf[0]\n"
              "  cp.async.wait_all\n}\n",
       1},
      {"own read after wait_all (commits the open copies)",
       head + "role w threads 32 {\n  cp.async buf[0]\n  cp.async.wait_all\n  use buf[0]\n}\n",
       0},
      {"other warp, writer waited before bar.sync",
       two_warps("  cp.async.commit\n  cp.async.wait 0\n"), 0},
      {"other warp, writer committed but did not wait",
       two_warps("  cp.async.commit\n"), 1},
      {"other warp through the barrier phase of cp.async.mbarrier.arrive",
       head + "role writer threads 32 {\n  init done[0]\n  bar.sync 0, 64\n  cp.async buf[0]\n"
              "  cp.async.arrive done[0] noinc\n}\nrole reader threads 32 {\n"
              "  bar.sync 0, 64\n  wait done[0] parity 0\n  use buf[0]\n}\n",
       0},
      {"write after read: the copy overwrites a slot another warp read, unsynchronised",
       head + "role writer threads 32 {\n  bar.sync 0, 64\n  cp.async buf[0]\n"
              "  cp.async.wait_all\n}\nrole reader threads 32 {\n  bar.sync 0, 64\n"
              "  use buf[0]\n}\n",
       1},
  };
  for (const Case& c : cases) {
    for (engine::Policy policy : kPolicies) {
      auto run = RunText(c.text, "cp.pipe", policy);
      ASSERT_NE(run, nullptr) << c.name;
      ASSERT_EQ(run->result.outcome, engine::Outcome::kCompleted) << c.name << "\n" << Dump(*run);
      const size_t races = Find(*run, Code::kSharedMemoryRace, "buf", 0).size();
      // The write-after-read case races only where the read comes before the issue.
      if (c.name.rfind("write after read", 0) == 0) {
        EXPECT_LE(races, 1u) << c.name << "\n" << Dump(*run);
        continue;
      }
      EXPECT_EQ(races, c.races) << c.name << " (" << engine::PolicyName(policy) << ")\n"
                                << Dump(*run);
    }
  }
}

// Clocks are per cluster: thousands of clusters are checked each on its own (set-up was quadratic
// in the clusters: 2048 of them ran out of memory), and a race is found in every cluster's CTA.
TEST(RulesTest, ManyClustersEachCheckedOnItsOwn) {
  const std::string text =
      "schedule many\ncluster 2x1\nclusters 2048\nbuffer buf[2] bytes 256\n"
      "role w threads 32 {\n  cp.async buf[0]\n  cp.async.commit\n  use buf[0]\n"
      "  cp.async.wait_all\n}\n";
  auto run = RunText(text, "many.pipe", engine::Policy::kEager);
  ASSERT_NE(run, nullptr);
  ASSERT_EQ(run->result.outcome, engine::Outcome::kCompleted);
  for (uint32_t cta : {0u, 1u, 2047u, 4095u}) {
    EXPECT_EQ(Find(*run, Code::kSharedMemoryRace, "buf", cta).size(), 1u) << cta;
  }
}

// Long runs: an issuer's many waits and cp.async.mbarrier.arrive covers are searched, not
// scanned (the check was quadratic in the run's length); the answers stay those of the rule.
TEST(RulesTest, CpAsyncVisibilityOverLongRuns) {
#if defined(__SANITIZE_ADDRESS__)
  const std::string n = "600";  // the sanitized checker is about 20x slower; still a long run
#else
  const std::string n = "3000";
#endif
  const std::string head =
      "schedule long\ncluster 1x1\nclusters 1\nbuffer buf[2] bytes 256\n"
      "barrier done[2] count 1\n";
  struct Case {
    std::string name, body;
    bool races;
  };
  const std::vector<Case> cases = {
      {"wait 0 before every read",
       "  for i in 0 .. " + n + " {\n    cp.async buf[i % 2]\n    cp.async.commit\n"
       "    cp.async.wait 0\n    use buf[i % 2]\n  }\n",
       false},
      {"wait 1 leaves the copy just issued pending",
       "  for i in 0 .. " + n + " {\n    cp.async buf[i % 2]\n    cp.async.commit\n"
       "    cp.async.wait 1\n    use buf[i % 2]\n  }\n  cp.async.wait_all\n",
       true},
      {"wait 1 covers the stage issued one iteration before",
       "  cp.async buf[0]\n  cp.async.commit\n"
       "  for i in 1 .. " + n + " {\n    cp.async buf[i % 2]\n    cp.async.commit\n"
       "    cp.async.wait 1\n    use buf[(i + 1) % 2]\n  }\n  cp.async.wait_all\n",
       false},
  };
  for (const Case& c : cases) {
    auto run = RunText(head + "role w threads 32 {\n" + c.body + "}\n", "long.pipe",
                       engine::Policy::kEager);
    ASSERT_NE(run, nullptr) << c.name;
    ASSERT_EQ(run->result.outcome, engine::Outcome::kCompleted) << c.name << "\n" << Dump(*run);
    const bool races = !Find(*run, Code::kSharedMemoryRace, "buf", 0).empty();
    EXPECT_EQ(races, c.races) << c.name << "\n" << Dump(*run);
  }
  // Covers: a cp.async.mbarrier.arrive on done[s] lands after the copy of buf[s] before it; a
  // read after waiting for that phase sees the bytes, a read before the wait does not.
  for (const bool wait_first : {true, false}) {
    const std::string wait = "    wait done[i % 2] parity (i / 2) & 1\n";
    const std::string use = "    use buf[i % 2]\n";
    const std::string text =
        head + "role w threads 32 {\n  init done[0]\n  init done[1]\n"
               "  for i in 0 .. " + n + " {\n    cp.async buf[i % 2]\n"
               "    cp.async.arrive done[i % 2] noinc\n" +
        (wait_first ? wait + use : use + wait) + "  }\n  cp.async.wait_all\n}\n";
    auto run = RunText(text, "covers.pipe", engine::Policy::kEager);
    ASSERT_NE(run, nullptr);
    ASSERT_EQ(run->result.outcome, engine::Outcome::kCompleted) << Dump(*run);
    EXPECT_EQ(Find(*run, Code::kSharedMemoryRace, "buf", 0).empty(), wait_first) << Dump(*run);
  }
}

TEST(RulesTest, StoreWithoutProxyFence) {
  auto run = RunRules("store_without_proxy_fence", engine::Policy::kEager);
  ASSERT_NE(run, nullptr);
  EXPECT_EQ(run->result.outcome, engine::Outcome::kCompleted);
  auto f = Find(*run, Code::kProxyFenceMissing, "C", 0);
  ASSERT_EQ(f.size(), 1u) << Dump(*run);
  EXPECT_EQ(Label(*run, f[0]->agent), "CTA 0 storer[0]");
  EXPECT_EQ(Label(*run, f[0]->other_agent), "CTA 0 epilogue[0]");
  EXPECT_EQ(f[0]->where.line, 21) << f[0]->where.ToString();  // the tma.store
  std::string text = ReadFile(RulesPath("store_without_proxy_fence"));
  // Fixed: the writers fence before the named barrier.
  text.replace(text.find("  bar.sync 1, 64   "), 19, "  fence.proxy.async\n  bar.sync 1, 64 ");
  auto fixed = RunText(text, "fixed.pipe", engine::Policy::kEager);
  ASSERT_NE(fixed, nullptr);
  EXPECT_TRUE(fixed->findings.empty()) << Dump(*fixed);
  // A fence AFTER the barrier does not order the writes before the store.
  std::string late = ReadFile(RulesPath("store_without_proxy_fence"));
  late.replace(late.find("  bar.sync 1, 64   "), 19, "  bar.sync 1, 64\n  fence.proxy.async ");
  auto late_run = RunText(late, "late.pipe", engine::Policy::kEager);
  ASSERT_NE(late_run, nullptr);
  EXPECT_EQ(Find(*late_run, Code::kProxyFenceMissing, "C", 0).size(), 1u) << Dump(*late_run);
}

// Per-location coherence (MoonshotAI/FlashKDA #24): an unfenced write whose every byte a later
// write rewrote, ordered after it by happens-before, cannot be what a store ordered after the
// rewrite reads, so only the rewrite needs the proxy fence. Two rewrites of a half each cover it
// too; a half left, or a rewrite not ordered after the fill, leaves a P2006 on the fill.
TEST(RulesTest, StoreDoesNotReadAWriteThatIsOverwrittenAfterIt) {
  const std::string head = R"(
buffer C[1] bytes 2048
tensormap tmC dtype f16 dims [64, 64] box [64, 16]
role fill threads 32 {
  write C[0]
)";
  const std::string store = R"(
role storer threads 32 {
  bar.sync 1, 96
  tma.store tmC coords [0, 0] <- C[0]
  bulk.commit
  bulk.wait 0
}
)";
  struct Case {
    const char* name;
    const char* fill_tail;  // after the fill's write
    const char* rewrite;    // the second writer's body before its fence
    bool finding;
  };
  const std::vector<Case> cases = {
      {"whole", "  bar.sync 2, 64\n  bar.sync 1, 96\n}\n", "  write C[0]\n", false},
      {"two_halves", "  bar.sync 2, 64\n  bar.sync 1, 96\n}\n",
       "  write C[0] + 1024 bytes 1024\n  write C[0] bytes 1024\n", false},
      {"half", "  bar.sync 2, 64\n  bar.sync 1, 96\n}\n", "  write C[0] bytes 1024\n", true},
      {"unordered", "  bar.sync 1, 96\n}\n", "  write C[0]\n", true},
  };
  for (const Case& c : cases) {
    const bool ordered = std::string(c.name) != "unordered";
    const std::string writer = std::string("role mma threads 32 {\n") +
                               (ordered ? "  bar.sync 2, 64\n" : "") + c.rewrite +
                               "  fence.proxy.async\n  bar.sync 1, 96\n}\n";
    auto run = RunText(head + c.fill_tail + writer + store, std::string(c.name) + ".pipe",
                       engine::Policy::kRoundRobin);
    ASSERT_NE(run, nullptr);
    ASSERT_EQ(run->result.outcome, engine::Outcome::kCompleted) << c.name << Dump(*run);
    auto f = Find(*run, Code::kProxyFenceMissing, "C", 0);
    EXPECT_EQ(!f.empty(), c.finding) << c.name << "\n" << Dump(*run);
    if (!f.empty()) {
      EXPECT_EQ(Label(*run, f[0]->other_agent), "CTA 0 fill[0]") << c.name;
    }
  }
}

// Two warpgroups each write their own half of one slot and TMA-store it (CUTLASS's and
// pipelines/persistent_gemm's epilogue): a store reads only its half, so the other warpgroup's
// unordered write of the other half is no race and needs no fence for it (the round-robin
// policy interleaves the two so that each store issues after the partner's write). A store of
// the partner's half, or of the whole slot, still races; a half written without a fence is
// still P2006 at the store that reads it.
TEST(RulesTest, StoreReadsOnlyItsBytesOfTheSlot) {
  const std::string halves = R"(
buffer C[1] bytes 2048
tensormap tmC dtype f16 dims [64, 64] box [64, 8]
role w count 2 threads 128 {
  write C[0] + agent * 1024 bytes 1024
  fence.proxy.async
  tma.store tmC coords [0, agent * 8] <- C[0] + agent * 1024 bytes 1024
  bulk.commit
  bulk.wait 0
}
)";
  for (engine::Policy policy : {engine::Policy::kEager, engine::Policy::kLazy,
                                engine::Policy::kRoundRobin}) {
    auto run = RunText(halves, "halves.pipe", policy);
    ASSERT_NE(run, nullptr);
    EXPECT_EQ(run->result.outcome, engine::Outcome::kCompleted);
    EXPECT_TRUE(run->findings.empty()) << Dump(*run);
  }
  // Each warpgroup stores the partner's half: unordered with the partner's write.
  std::string crossed = halves;
  crossed.replace(crossed.find("<- C[0] + agent * 1024"), 22, "<- C[0] + (1 - agent) * 1024");
  auto x = RunText(crossed, "crossed.pipe", engine::Policy::kRoundRobin);
  ASSERT_NE(x, nullptr);
  EXPECT_FALSE(Find(*x, Code::kSharedMemoryRace, "C", 0).empty()) << Dump(*x);
  // Each stores the whole slot (a box of both halves).
  std::string whole = halves;
  whole.replace(whole.find("box [64, 8]"), 11, "box [64, 16]");
  whole.replace(whole.find("<- C[0] + agent * 1024 bytes 1024"), 33, "<- C[0]");
  auto w = RunText(whole, "whole.pipe", engine::Policy::kRoundRobin);
  ASSERT_NE(w, nullptr);
  EXPECT_FALSE(Find(*w, Code::kSharedMemoryRace, "C", 0).empty()) << Dump(*w);
  // Without the fences each store still misses the fence of its own half's writer.
  std::string unfenced = halves;
  unfenced.replace(unfenced.find("  fence.proxy.async\n"), 20, "");
  auto u = RunText(unfenced, "unfenced.pipe", engine::Policy::kEager);
  ASSERT_NE(u, nullptr);
  const auto missing = Find(*u, Code::kProxyFenceMissing, "C", 0);
  ASSERT_EQ(missing.size(), 2u) << Dump(*u);
  for (const Finding* f : missing) EXPECT_EQ(f->agent, f->other_agent) << Dump(*u);
}

// P2005 / P2006 compare the exact bytes of each dynamic access (Engine::trace_places), also
// where only the run knows the offset (a loop index or a `let`): a store of one half of a slot
// is not raced by, and needs no fence of, a write of the other half, and a read of bytes that a
// waited cp.async wrote is not raced by the same thread's later cp.async into other bytes of the
// slot. Overlapping bytes are still found.
TEST(RulesTest, SlotChecksCompareTheBytesOfEachDynamicAccess) {
  const std::string halves = R"(
buffer C[1] bytes 256
role w count 2 threads 32 {
  for h in agent .. agent + 1 {
    write C[0] + h * 128 bytes 128
    fence.proxy.async
    bulk.store C[0] + h * 128 bytes 128
    bulk.commit
    bulk.wait 0 read
  }
}
)";
  for (engine::Policy policy : kPolicies) {
    auto run = RunText(halves, "halves.pipe", policy, 1);
    ASSERT_NE(run, nullptr);
    EXPECT_EQ(run->result.outcome, engine::Outcome::kCompleted);
    EXPECT_TRUE(run->findings.empty()) << Dump(*run);
  }
  // Each writes 128 bytes from h * 64: agent 1's write meets agent 0's store, unordered.
  std::string overlap = halves;
  overlap.replace(overlap.find("write C[0] + h * 128"), 20, "write C[0] + h * 64");
  bool found = false;
  for (engine::Policy policy : kPolicies) {
    auto run = RunText(overlap, "overlap.pipe", policy, 1);
    ASSERT_NE(run, nullptr);
    found |= !Find(*run, Code::kSharedMemoryRace, "C", 0).empty();
  }
  EXPECT_TRUE(found) << "the overlapping write and store were never reported";

  const std::string cp = R"(
buffer d[1] bytes 256
role r threads 32 {
  for k in 0 .. 2 {
    cp.async d[0] + k * 128 bytes 128
    if k == 0 {
      cp.async.wait_all
    }
  }
  use d[0] bytes 128
  cp.async.wait_all
}
)";
  for (engine::Policy policy : kPolicies) {
    auto run = RunText(cp, "cp.pipe", policy, 1);
    ASSERT_NE(run, nullptr);
    EXPECT_EQ(run->result.outcome, engine::Outcome::kCompleted);
    EXPECT_TRUE(run->findings.empty()) << Dump(*run);
  }
  // The read reaches into the bytes of the copy in flight.
  std::string into = cp;
  into.replace(into.find("use d[0] bytes 128"), 18, "use d[0] + 64 bytes 128");
  for (engine::Policy policy : kPolicies) {
    auto run = RunText(into, "into.pipe", policy, 1);
    ASSERT_NE(run, nullptr);
    EXPECT_FALSE(Find(*run, Code::kSharedMemoryRace, "d", 0).empty()) << Dump(*run);
  }
}

TEST(RulesTest, RemoteArriveBeforeFencedInit) {
  auto run = RunRules("remote_arrive_unfenced_init", engine::Policy::kEager);
  ASSERT_NE(run, nullptr);
  EXPECT_EQ(run->result.outcome, engine::Outcome::kCompleted) << Dump(*run);
  auto in1 = Find(*run, Code::kRemoteBeforeInit, "ready", 1);
  ASSERT_EQ(in1.size(), 1u) << Dump(*run);
  EXPECT_EQ(Label(*run, in1[0]->agent), "CTA 0 worker[0]");
  EXPECT_EQ(Label(*run, in1[0]->other_agent), "CTA 1 worker[0]");
  EXPECT_EQ(Find(*run, Code::kRemoteBeforeInit, "ready", 0).size(), 1u) << Dump(*run);
  const std::string text = ReadFile(RulesPath("remote_arrive_unfenced_init"));
  std::string fixed_text = text;
  fixed_text.replace(fixed_text.find("  # BUG"), 7, "  fence.mbarrier_init\n  #");
  auto fixed = RunText(fixed_text, "fixed.pipe", engine::Policy::kEager);
  ASSERT_NE(fixed, nullptr);
  EXPECT_TRUE(fixed->findings.empty()) << Dump(*fixed);
  // Fenced but without the cluster barrier: not ordered (the policy here inits both first).
  std::string no_sync = fixed_text;
  no_sync.replace(no_sync.find("  cluster.arrive\n  cluster.wait\n"), 31, "");
  auto ns = RunText(no_sync, "nosync.pipe", engine::Policy::kRoundRobin);
  ASSERT_NE(ns, nullptr);
  EXPECT_FALSE(Find(*ns, Code::kRemoteBeforeInit, "ready", 1).empty() &&
               Find(*ns, Code::kRemoteBeforeInit, "ready", 0).empty())
      << Dump(*ns);
}

// CUTLASS's, DeepGEMM's and the CuTe DSL's cluster prologue: init, fence.mbarrier_init
// (.release.cluster), a RELAXED cluster arrive, the cluster wait. PTX ISA (membar/fence): the
// fence's synchronizing effect applies to the thread's prior inits, and its example pairs it
// with barrier.cluster.arrive.relaxed: the inits are ordered before every peer's remote use. The
// known-bad neighbours stay P2007, each with the reason it gives; the relaxed arrive releases
// the inits only, so a write before it still races with a peer's read.
TEST(RulesTest, InitFenceWithRelaxedClusterArrive) {
  const std::string head = "cluster 2x1\nbarrier b[1] count 2\nbuffer t[1] bytes 64\nrole r {\n";
  const std::string tail = "  wait b[0] parity 0\n  cluster.sync\n}\n";
  const std::string remote = "  arrive b[0] mask 3\n";
  struct Case {
    const char* name;
    std::string prologue;
    const char* reason;  // "" clean, else a phrase of the P2007 message
  };
  const std::vector<Case> cases = {
      {"relaxed", "  init b[0]\n  fence.mbarrier_init\n  cluster.arrive.relaxed\n  cluster.wait\n",
       ""},
      {"release", "  init b[0]\n  fence.mbarrier_init\n  cluster.arrive\n  cluster.wait\n", ""},
      {"no_fence", "  init b[0]\n  cluster.arrive.relaxed\n  cluster.wait\n",
       "is not followed by a fence.mbarrier_init"},
      {"acq_rel_fence_only",
       "  init b[0]\n  fence.acq_rel.cluster\n  cluster.arrive.relaxed\n  cluster.wait\n",
       "is not followed by a fence.mbarrier_init"},
      {"fence_after_arrive",
       "  init b[0]\n  cluster.arrive.relaxed\n  fence.mbarrier_init\n  cluster.wait\n",
       "no cluster.arrive of"},
      {"no_cluster_barrier", "  init b[0]\n  fence.mbarrier_init\n", "no cluster.arrive of"},
  };
  for (const Case& c : cases) {
    auto run = RunText(head + c.prologue + remote + tail, std::string(c.name) + ".pipe",
                       engine::Policy::kRoundRobin);
    ASSERT_NE(run, nullptr);
    ASSERT_EQ(run->result.outcome, engine::Outcome::kCompleted) << c.name << Dump(*run);
    auto f = Find(*run, Code::kRemoteBeforeInit, "b", 0);
    if (*c.reason == '\0') {
      EXPECT_TRUE(run->findings.empty()) << c.name << "\n" << Dump(*run);
      continue;
    }
    ASSERT_FALSE(f.empty()) << c.name << "\n" << Dump(*run);
    EXPECT_NE(f[0]->message.find(c.reason), std::string::npos) << c.name << ": " << f[0]->message;
    EXPECT_EQ(f[0]->message.find("no cluster barrier in between"), std::string::npos);
  }
  // The remote arrive between the relaxed arrive and the wait: the init is not yet acquired.
  auto early = RunText(head +
                           "  init b[0]\n  fence.mbarrier_init\n  cluster.arrive.relaxed\n" +
                           remote + "  cluster.wait\n" + tail,
                       "early.pipe", engine::Policy::kRoundRobin);
  ASSERT_NE(early, nullptr);
  auto e = Find(*early, Code::kRemoteBeforeInit, "b", 0);
  ASSERT_FALSE(e.empty()) << Dump(*early);
  EXPECT_NE(e[0]->message.find("has not passed the matching cluster.wait"), std::string::npos)
      << e[0]->message;
  // The fence orders the inits only: a write before the relaxed arrive races with the peer.
  auto data = RunText(head +
                          "  init b[0]\n  write t[0]\n  fence.mbarrier_init\n"
                          "  cluster.arrive.relaxed\n  cluster.wait\n"
                          "  use t[0] @cta(1 - cta_rank)\n" +
                          remote + tail,
                      "data.pipe", engine::Policy::kRoundRobin);
  ASSERT_NE(data, nullptr);
  EXPECT_TRUE(Find(*data, Code::kRemoteBeforeInit, "b", 0).empty()) << Dump(*data);
  EXPECT_FALSE(Find(*data, Code::kDataRace, "t", 0).empty()) << Dump(*data);
}

// The same prologue in front of a CTA's own TMA load (DeepGEMM's sm90 GEMMs: one warp inits and
// fences, the producer warp issues after the cluster barrier): the fence.mbarrier_init reaches
// the issue through the relaxed arrive and the producer's cluster.wait, so the copy's
// complete_tx is no P2006; without the fence, or with the issue before the wait, it stays one.
TEST(RulesTest, InitFenceWithRelaxedClusterArriveBeforeOwnCopy) {
  const std::string head =
      "cluster 2x1\nbarrier full[1] count 1\nbuffer t[1] bytes 128\n"
      "tensormap m dtype u8 dims [128] box [128]\n";
  auto text = [&](const std::string& fence, bool issue_before_wait) {
    const std::string issue =
        "  tma.load m coords [0] -> t[0] bar full[0]\n  arrive.expect_tx full[0] bytes 128\n";
    return head + "role setup {\n  init full[0]\n" + fence +
           "  cluster.arrive.relaxed\n  cluster.wait\n}\nrole producer {\n" +
           "  cluster.arrive.relaxed\n" + (issue_before_wait ? issue : "") + "  cluster.wait\n" +
           (issue_before_wait ? "" : issue) + "  wait full[0] parity 0\n}\n";
  };
  auto clean = RunText(text("  fence.mbarrier_init\n", false), "own.pipe",
                       engine::Policy::kRoundRobin);
  ASSERT_NE(clean, nullptr);
  ASSERT_EQ(clean->result.outcome, engine::Outcome::kCompleted) << Dump(*clean);
  EXPECT_TRUE(Find(*clean, Code::kProxyFenceMissing, "full", 0).empty()) << Dump(*clean);
  for (const auto& [fence, before] : {std::pair<std::string, bool>{"", false},
                                      std::pair<std::string, bool>{"  fence.mbarrier_init\n", true}}) {
    auto bad = RunText(text(fence, before), "own_bad.pipe", engine::Policy::kRoundRobin);
    ASSERT_NE(bad, nullptr);
    EXPECT_FALSE(Find(*bad, Code::kProxyFenceMissing, "full", 0).empty())
        << "fence '" << fence << "', issue before the wait " << before << "\n" << Dump(*bad);
  }
}

TEST(RulesTest, ProducerExitsEarly) {
  auto run = RunRules("producer_exits_early", engine::Policy::kEager);
  ASSERT_NE(run, nullptr);
  EXPECT_EQ(run->result.outcome, engine::Outcome::kDeadlock);
  auto f = Find(*run, Code::kExitWhileAwaited, "full", 0);
  ASSERT_EQ(f.size(), 1u) << Dump(*run);
  EXPECT_EQ(Label(*run, f[0]->agent), "CTA 0 producer[0]");
  EXPECT_EQ(Label(*run, f[0]->other_agent), "CTA 0 consumer[0]");
  EXPECT_EQ(run->findings.size(), 1u) << Dump(*run);
}

// The correct bundled pipelines are clean under every policy and several seeds.
TEST(RulesTest, CorrectPipelinesAreClean) {
  for (const char* name : {"single_tma_load", "gemm_tma_multicast_2x2"}) {
    const std::string path = std::string("sim/examples/") + name + ".pipe";
    const std::string text = ReadFile(path);
    for (engine::Policy policy : kPolicies) {
      for (uint64_t seed = 0; seed < (policy == engine::Policy::kRandom ? 8 : 1); ++seed) {
        auto run = RunText(text, path, policy, seed);
        ASSERT_NE(run, nullptr);
        EXPECT_EQ(run->result.outcome, engine::Outcome::kCompleted) << name;
        EXPECT_TRUE(run->findings.empty())
            << name << " " << engine::PolicyName(policy) << " seed " << seed << "\n"
            << Dump(*run);
      }
    }
  }
}

// The 2x2 GEMM with the empty barrier counting only local consumers, each releasing locally:
// buffers are refilled by peers' multicasts before the peers' consumers released them.
TEST(RulesTest, GemmLocalReleaseRaces) {
  std::string text = ReadFile("sim/examples/gemm_tma_multicast_2x2.pipe");
  const std::string decl = "barrier empty[STAGES] count (cluster_m + cluster_n - 1) * CONSUMERS";
  ASSERT_NE(text.find(decl), std::string::npos);
  text.replace(text.find(decl), decl.size(), "barrier empty[STAGES] count CONSUMERS");
  text.replace(text.find("arrive empty[s] mask release_mask"), 33, "arrive empty[s]");
  auto run = RunText(text, "gemm_local.pipe", engine::Policy::kRandom, 3);
  ASSERT_NE(run, nullptr);
  bool race = false;
  for (const Finding& f : run->findings) race |= f.code() == Code::kSharedMemoryRace;
  EXPECT_TRUE(race) << Dump(*run);
}

// PcMap numbers instructions as the engine does: every event of an agent names an op of the
// kind that emits it.
TEST(RulesTest, PcMapMatchesEngine) {
  const std::string path = "sim/examples/gemm_tma_multicast_2x2.pipe";
  auto run = RunText(ReadFile(path), path, engine::Policy::kRandom, 1);
  ASSERT_NE(run, nullptr);
  PcMap pcs(run->program);
  std::map<std::pair<uint32_t, uint32_t>, uint32_t> agents;  // (cta_global, index) -> global
  for (uint32_t a = 0; a < run->engine->num_agents(); ++a) {
    const auto& info = run->engine->agent_info(a);
    agents[{info.cta_global, info.index_in_cta}] = a;
  }
  size_t checked = 0;
  for (const trace::TraceEvent& ev : run->engine->trace()) {
    if (ev.agent == trace::kNoAgent) continue;
    const uint32_t a = agents.at({ev.cta, ev.agent});
    const ir::Op* op = pcs.op(run->engine->agent_info(a).role, ev.pc);
    const auto k = static_cast<trace::EventKind>(ev.kind);
    switch (k) {
      case trace::EventKind::kUse:
        ASSERT_NE(op, nullptr);
        EXPECT_TRUE(std::holds_alternative<ir::BufferAccess>(*op));
        ++checked;
        break;
      case trace::EventKind::kWaitEnd:
        ASSERT_NE(op, nullptr);
        EXPECT_TRUE(std::holds_alternative<ir::MbarrierWait>(*op));
        ++checked;
        break;
      case trace::EventKind::kTmaIssue:
        ASSERT_NE(op, nullptr);
        EXPECT_TRUE(std::holds_alternative<ir::TmaLoad>(*op));
        ++checked;
        break;
      case trace::EventKind::kExit:
        EXPECT_EQ(op, nullptr);  // the implicit exit at the end of the role
        ++checked;
        break;
      default:
        break;
    }
  }
  EXPECT_GT(checked, 100u);
}

}  // namespace
}  // namespace parity::verifier

namespace parity::verifier {
namespace {

// Cost per call on the 2x2 multicast GEMM (printed, not asserted: the explorer calls CheckRules
// on every terminal path). The result must stay the same on every call.
TEST(RulesTest, RepeatedCallsOnOneRunAgree) {
  const std::string path = "sim/examples/gemm_tma_multicast_2x2.pipe";
  auto run = RunText(ReadFile(path), path, engine::Policy::kRandom, 5);
  ASSERT_NE(run, nullptr);
  const auto start = std::chrono::steady_clock::now();
  constexpr int kCalls = 200;
  size_t findings = 0;
  for (int i = 0; i < kCalls; ++i) {
    findings += CheckRules(run->program, *run->engine, run->engine->trace()).size();
  }
  const double us = std::chrono::duration<double, std::micro>(
                        std::chrono::steady_clock::now() - start)
                        .count() /
                    kCalls;
  EXPECT_EQ(findings, 0u);
  std::printf("CheckRules: %.1f us per call on %zu events\n", us, run->engine->trace().size());
}

}  // namespace
}  // namespace parity::verifier

namespace parity::verifier {
namespace {

// Every schedule of sim/examples/rules keeps its header honest: the code after "BROKEN (" is
// found (P2001: the run deadlocks), and every code found is one the header names. The header's
// "--policy lazy" selects the lazy policy, else eager.
TEST(RulesTest, ExampleHeadersMatchFindings) {
  const std::vector<std::string> names = {
      "early_arrive_before_expect", "early_bytes_spill",     "tx_overcount",
      "multicast_disagreement",     "multicast_release_local_only", "use_without_wait",
      "store_without_proxy_fence",  "remote_arrive_unfenced_init",  "producer_exits_early"};
  std::set<std::string> primaries;
  for (const std::string& name : names) {
    const std::string text = ReadFile(RulesPath(name));
    std::string header;
    std::istringstream lines(text);
    for (std::string line; std::getline(lines, line) && !line.empty() && line[0] == '#';) {
      header += line + "\n";
    }
    const size_t b = header.find("BROKEN (");
    ASSERT_NE(b, std::string::npos) << name;
    const std::string primary = header.substr(b + 8, 5);
    primaries.insert(primary);
    std::set<std::string> named;
    for (size_t p = header.find("P20"); p != std::string::npos; p = header.find("P20", p + 1)) {
      named.insert(header.substr(p, 5));
    }
    const engine::Policy policy = header.find("--policy lazy") != std::string::npos
                                      ? engine::Policy::kLazy
                                      : engine::Policy::kEager;
    auto run = RunText(text, RulesPath(name), policy);
    ASSERT_NE(run, nullptr);
    std::set<std::string> found;
    for (const Finding& f : run->findings) found.insert(std::string(model::CodeId(f.code())));
    if (run->result.outcome == engine::Outcome::kDeadlock) found.insert("P2001");
    EXPECT_TRUE(found.count(primary)) << name << "\n" << Dump(*run);
    for (const std::string& code : found) {
      EXPECT_TRUE(named.count(code)) << name << " reports " << code << " its header does not name";
    }
  }
  // One schedule per rule.
  for (const char* code : {"P2002", "P2003", "P2004", "P2005", "P2006", "P2007", "P2008"}) {
    EXPECT_TRUE(primaries.count(code)) << code;
  }
}

}  // namespace
}  // namespace parity::verifier
