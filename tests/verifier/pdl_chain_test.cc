// Chains of more than two grids of programmatic dependent launches (docs/language.md §8.9):
// several `primary` blocks in launch order; each grid's griddepcontrol.wait waits for the grid
// launched just before it; an earlier grid's access is ordered before a later grid's only
// through an unbroken chain of waits (verifier/pdl.h). The language (grid numbering, printer
// round trip, the GPU encoding's refusal), the engine (which wait blocks on which grid), P2020
// with the grid that breaks the chain, explore's verdicts, and the global-memory race checker
// against an oracle of its own over generated chains (tests/verifier/gen, GenOptions::pdl_chains).
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "sim/engine/engine.h"
#include "sim/ir/encoding.h"
#include "sim/ir/hash.h"
#include "sim/ir/parser.h"
#include "sim/ir/printer.h"
#include "sim/model/codes.h"
#include "sim/trace/event.h"
#include "tests/verifier/gen/schedule_gen.h"
#include "verifier/deadlock.h"
#include "verifier/explore.h"
#include "verifier/pdl.h"

namespace parity::verifier {
namespace {

using engine::Outcome;
using engine::Policy;
using model::Code;
using trace::EventKind;

// first -> middle -> last, one cluster each; `middle` is the middle grid's role body.
std::string Chain(const std::string& middle, const std::string& last = "  griddepcontrol.wait\n"
                                                                       "  use T[0]\n") {
  return "schedule c\n"
         "global T[1] bytes 256\n"
         "global U[1] bytes 256\n"
         "primary clusters 1 {\n"
         "  role first threads 32 {\n"
         "    write T[0]\n"
         "  }\n"
         "}\n"
         "primary clusters 2 {\n"
         "  role middle threads 32 {\n" +
         middle +
         "  }\n"
         "}\n"
         "role last threads 32 {\n" +
         last + "}\n";
}

std::vector<engine::EngineOptions> Policies() {
  std::vector<engine::EngineOptions> out;
  for (Policy p : {Policy::kEager, Policy::kLazy, Policy::kRoundRobin}) {
    engine::EngineOptions o;
    o.policy = p;
    out.push_back(o);
  }
  for (uint64_t s = 1; s <= 8; ++s) {
    engine::EngineOptions o;
    o.policy = Policy::kRandom;
    o.seed = s;
    out.push_back(o);
  }
  return out;
}

struct Ran {
  ir::Program program;
  std::unique_ptr<engine::Engine> engine;
  engine::RunResult result;
  std::vector<Finding> findings;
};

std::unique_ptr<Ran> RunText(const std::string& text, const engine::EngineOptions& o = {}) {
  auto p = ir::ParseProgram(text, "chain.pipe");
  EXPECT_TRUE(p.ok()) << p.status().ToString();
  if (!p.ok()) return nullptr;
  auto r = std::make_unique<Ran>();
  r->program = std::move(p).value();
  auto params = ir::BindParams(r->program, {});
  EXPECT_TRUE(params.ok());
  auto e = engine::Engine::Create(r->program, *params, o);
  EXPECT_TRUE(e.ok()) << e.status().ToString();
  if (!e.ok()) return nullptr;
  r->engine = std::make_unique<engine::Engine>(std::move(e).value());
  r->result = r->engine->Run();
  r->findings = CheckGlobalRaces(r->program, *r->engine, r->engine->trace());
  return r;
}

// The chains here are of 1x1 clusters: the global CTA number is the cluster's.
uint32_t AgentOf(const engine::Engine& e, const trace::TraceEvent& ev) {
  return e.cta_first_agent(ev.cluster) + ev.agent;
}

TEST(PdlChainTest, BlocksAreGridsInLaunchOrderAndPrintBack) {
  const std::string text = Chain("    griddepcontrol.wait\n    use T[0]\n");
  auto p = ir::ParseProgram(text, "chain.pipe");
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  ASSERT_EQ(p->primaries.size(), 2u);
  ASSERT_EQ(p->roles.size(), 3u);
  EXPECT_EQ(p->roles[0].grid, 2);  // first: launched two launches before the own grid
  EXPECT_EQ(p->roles[1].grid, 1);  // middle: the own grid's prerequisite
  EXPECT_EQ(p->roles[2].grid, 0);
  EXPECT_EQ(p->primaries[0].where.line, 9);  // grid 1 is the second block
  EXPECT_EQ(p->primaries[1].where.line, 4);
  const std::string printed = ir::Print(*p);
  auto q = ir::ParseProgram(printed, "printed.pipe");
  ASSERT_TRUE(q.ok()) << q.status().ToString() << "\n" << printed;
  EXPECT_EQ(ir::Print(*q), printed);
  EXPECT_EQ(ir::ContentHash(*q), ir::ContentHash(*p));
  EXPECT_LT(printed.find("primary clusters 1 {"), printed.find("primary clusters 2 {"));
  // The GPU executor runs two grids: a chain is refused with its reason.
  auto params = ir::BindParams(*p, {});
  ASSERT_TRUE(params.ok());
  auto enc = ir::Encode(*p, *params);
  ASSERT_FALSE(enc.ok());
  EXPECT_EQ(enc.status().rule(), "encoding.unsupported");
  EXPECT_NE(enc.status().message().find("unsupported on the GPU"), std::string::npos);
  // Eight `primary` blocks are one too many.
  std::string many;
  for (int i = 0; i < 8; ++i) {
    many += "primary clusters 1 {\n  role p" + std::to_string(i) + " { exit }\n}\n";
  }
  auto m = ir::ParseProgram(many + "role r { exit }\n", "many.pipe");
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().rule(), "parse.primary");
  EXPECT_EQ(m.status().where().line, 22);
}

// Grid k's wait returns only after every agent of grid k + 1 exited (whatever the policy), and
// the first grid's wait at once; builtins count each grid's own clusters.
TEST(PdlChainTest, EachWaitWaitsForTheGridLaunchedJustBefore) {
  const std::string text =
      Chain("    griddepcontrol.wait\n    write U[0] + cluster_id * 128 bytes 128\n",
            "  griddepcontrol.wait\n  use T[0]\n  use U[0]\n");
  for (const engine::EngineOptions& o : Policies()) {
    auto r = RunText(text, o);
    ASSERT_TRUE(r);
    ASSERT_EQ(r->result.outcome, Outcome::kCompleted);
    EXPECT_TRUE(r->findings.empty()) << r->findings.front().message;
    const engine::Engine& e = *r->engine;
    ASSERT_EQ(e.num_grids(), 3u);
    std::vector<size_t> last_exit(3, 0), first_wait(3, SIZE_MAX);
    for (size_t i = 0; i < e.trace().size(); ++i) {
      const auto& ev = e.trace()[i];
      const uint32_t g = e.agent_info(AgentOf(e, ev)).grid;
      if (ev.kind == static_cast<uint8_t>(EventKind::kExit)) last_exit[g] = i;
      if (ev.kind == static_cast<uint8_t>(EventKind::kGridDepWait)) {
        first_wait[g] = std::min(first_wait[g], i);
      }
      if (ev.kind == static_cast<uint8_t>(EventKind::kGlobalWrite) && ev.object == 1) {
        EXPECT_EQ(g, 1u);
        EXPECT_EQ(ev.value2, 128 * static_cast<int>(ev.cluster - e.grid_first_cluster(1)));
      }
    }
    EXPECT_GT(first_wait[0], last_exit[1]);  // the own grid waited for `middle`
    EXPECT_GT(first_wait[1], last_exit[2]);  // `middle` waited for `first`
  }
}

TEST(PdlChainTest, AnUnbrokenChainOfWaitsOrdersTheFirstGridsWrite) {
  for (const engine::EngineOptions& o : Policies()) {
    auto r = RunText(Chain("    griddepcontrol.wait\n"), o);
    ASSERT_TRUE(r);
    ASSERT_EQ(r->result.outcome, Outcome::kCompleted);
    EXPECT_TRUE(r->findings.empty()) << r->findings.front().message;
  }
}

// The middle grid never waits: it may complete before `first` does, so the last grid's wait
// no longer orders `first`'s write. P2020 at the read, naming the middle grid; a wait placed
// after the middle grid's last access still mends the chain (its completion follows it).
TEST(PdlChainTest, AMiddleGridWithoutAWaitBreaksTheChain) {
  for (const engine::EngineOptions& o : Policies()) {
    auto r = RunText(Chain("    use U[0]\n"), o);
    ASSERT_TRUE(r);
    ASSERT_EQ(r->result.outcome, Outcome::kCompleted);
    ASSERT_EQ(r->findings.size(), 1u);
    const Finding& f = r->findings[0];
    EXPECT_EQ(f.code(), Code::kPdlWaitMissing);
    EXPECT_EQ(f.where.line, 16);  // use T[0]
    EXPECT_EQ(r->engine->agent_info(f.agent).grid, 0u);
    EXPECT_EQ(r->engine->agent_info(f.other_agent).grid, 2u);
    EXPECT_NE(f.message.find("`primary` block 2"), std::string::npos) << f.message;
    EXPECT_NE(f.message.find("executes no griddepcontrol.wait"), std::string::npos) << f.message;
    auto mended = RunText(Chain("    use U[0]\n    griddepcontrol.wait\n"), o);
    ASSERT_TRUE(mended);
    EXPECT_TRUE(mended->findings.empty()) << mended->findings.front().message;
  }
  // Without a wait of its own the last grid's read is the plain P2020.
  auto r = RunText(Chain("    griddepcontrol.wait\n", "  use T[0]\n"));
  ASSERT_TRUE(r);
  ASSERT_EQ(r->findings.size(), 1u);
  EXPECT_EQ(r->findings[0].code(), Code::kPdlWaitMissing);
  EXPECT_EQ(r->findings[0].message.find("executes no griddepcontrol.wait"), std::string::npos);
}

TEST(PdlChainTest, ExploreVerifiesTheChainAndFindsTheBreak) {
  ExploreOptions o;
  o.max_states = 200'000;
  o.shorten_budget_s = 0;
  auto good = ir::ParseProgram(Chain("    griddepcontrol.wait\n"), "good.pipe");
  ASSERT_TRUE(good.ok());
  const ExploreResult g = Explore(*good, {}, o);
  EXPECT_EQ(g.verdict, ExploreVerdict::kVerified) << ExploreVerdictName(g.verdict);
  auto bad = ir::ParseProgram(Chain("    use U[0]\n"), "bad.pipe");
  ASSERT_TRUE(bad.ok());
  const ExploreResult b = Explore(*bad, {}, o);
  ASSERT_EQ(b.verdict, ExploreVerdict::kRuleViolation) << ExploreVerdictName(b.verdict);
  ASSERT_FALSE(b.findings.empty());
  EXPECT_EQ(b.findings.front().code(), Code::kPdlWaitMissing);
}

// The first grid hangs: the middle grid's wait hangs with it, and the last grid's wait behind
// that; the report names the agents by their block.
TEST(PdlChainTest, AHangingFirstGridHangsEveryWaitBehindIt) {
  const std::string text =
      "barrier b[1] count 1\n"
      "global T[1] bytes 64\n"
      "primary clusters 1 {\n  role first {\n    init b[0]\n    wait b[0] parity 0\n  }\n}\n"
      "primary clusters 1 {\n  role middle {\n    griddepcontrol.wait\n  }\n}\n"
      "role last {\n  griddepcontrol.wait\n  use T[0]\n}\n";
  auto r = RunText(text);
  ASSERT_TRUE(r);
  ASSERT_EQ(r->result.outcome, Outcome::kDeadlock);
  const auto& blocked = r->result.deadlock.blocked;
  ASSERT_EQ(blocked.size(), 3u);
  int grid_waits = 0;
  for (const auto& b : blocked) grid_waits += b.wait == engine::WaitKind::kGridDependency;
  EXPECT_EQ(grid_waits, 2);
  for (const auto& b : blocked) {
    const std::string label = AgentLabel(r->program, *r->engine, b.agent);
    const uint32_t g = r->engine->agent_info(b.agent).grid;
    if (g == 2) {
      EXPECT_EQ(label, "primary 1 cluster 0 CTA 0 first[0]");
    } else if (g == 1) {
      EXPECT_EQ(label, "primary 2 cluster 0 CTA 0 middle[0]");
    }
  }
}

// --- the checker against an oracle over generated chains --------------------------------------

// A race pair as (role, pc) of both accesses, smaller first, and the code.
using Pair = std::tuple<uint32_t, uint32_t, uint32_t, uint32_t, bool>;

// The generated chains have no barrier inside a grid, so happens-before between two global
// accesses of different agents is exactly: a later grid's access y (grid gy) after an earlier
// grid's x (grid gx > gy) when y's own agent executed griddepcontrol.wait before y (program
// order) and every grid strictly between the two has a wait event in the run; nothing else.
// Written from that definition alone: a scan of the trace, no vector clocks.
std::set<Pair> OraclePairs(const engine::Engine& e, const std::vector<trace::TraceEvent>& t) {
  struct Acc {
    uint32_t agent, role, pc, global, slot;
    int64_t lo, hi;
    bool write, after_wait;
  };
  std::vector<Acc> acc;
  std::set<uint32_t> waited_agents, waited_grids;
  for (const auto& ev : t) {
    const uint32_t a = AgentOf(e, ev);
    const auto k = static_cast<EventKind>(ev.kind);
    if (k == EventKind::kGridDepWait) {
      waited_agents.insert(a);
      waited_grids.insert(e.agent_info(a).grid);
    }
    if (k != EventKind::kGlobalUse && k != EventKind::kGlobalWrite) continue;
    acc.push_back({a, e.agent_info(a).role, ev.pc, ev.object, ev.index, ev.value2,
                   static_cast<int64_t>(ev.value2) + ev.value, k == EventKind::kGlobalWrite,
                   waited_agents.count(a) > 0});
  }
  std::set<Pair> out;
  for (const Acc& x : acc) {
    for (const Acc& y : acc) {
      if (x.agent >= y.agent || !(x.write || y.write)) continue;
      if (x.global != y.global || x.slot != y.slot || x.hi <= y.lo || y.hi <= x.lo) continue;
      const uint32_t gx = e.agent_info(x.agent).grid, gy = e.agent_info(y.agent).grid;
      bool ordered = false;
      if (gx != gy) {
        const Acc& later = gx < gy ? x : y;
        const uint32_t lo = std::min(gx, gy), hi = std::max(gx, gy);
        ordered = later.after_wait;
        for (uint32_t m = lo + 1; m < hi; ++m) ordered = ordered && waited_grids.count(m) > 0;
      }
      if (ordered) continue;
      auto a = std::make_pair(x.role, x.pc), b = std::make_pair(y.role, y.pc);
      if (b < a) std::swap(a, b);
      out.emplace(a.first, a.second, b.first, b.second, gx != gy);
    }
  }
  return out;
}

TEST(PdlChainTest, GlobalRacesAgreeWithTheOracleOnGeneratedChains) {
  gen::GenOptions g;
  g.pdl_chains = true;
  uint64_t racy = 0, clean = 0, broken = 0, runs = 0;
  for (uint64_t seed = 1; seed <= 150; ++seed) {
    const std::string text = gen::GenerateSchedule(seed, g);
    SCOPED_TRACE("seed " + std::to_string(seed) + ":\n" + text);
    bool all_complete = true;
    std::set<Pair> any;
    for (const engine::EngineOptions& o : Policies()) {
      auto r = RunText(text, o);
      ASSERT_TRUE(r);
      ++runs;
      all_complete = all_complete && r->result.outcome == Outcome::kCompleted;
      std::set<Pair> checker;
      for (const Finding& f : r->findings) {
        const uint32_t ra = r->engine->agent_info(f.agent).role;
        const uint32_t rb = r->engine->agent_info(f.other_agent).role;
        auto a = std::make_pair(ra, f.pc), b = std::make_pair(rb, f.other_pc);
        if (b < a) std::swap(a, b);
        checker.emplace(a.first, a.second, b.first, b.second, f.code() == Code::kPdlWaitMissing);
        broken += f.message.find("executes no griddepcontrol.wait") != std::string::npos;
      }
      const std::set<Pair> oracle = OraclePairs(*r->engine, r->engine->trace());
      // The checker reports each (role, pc) pair once; the oracle's pairs, projected the same
      // way, are the same set.
      EXPECT_EQ(checker, oracle) << "policy " << engine::PolicyName(o.policy) << " seed "
                                 << o.seed;
      any.insert(oracle.begin(), oracle.end());
    }
    (any.empty() ? clean : racy) += 1;
    if (!all_complete) continue;
    // Every run completes: explore finds a race exactly when the oracle saw one.
    auto p = ir::ParseProgram(text, "gen.pipe");
    ASSERT_TRUE(p.ok());
    ExploreOptions o;
    o.max_states = 200'000;
    o.shorten_budget_s = 0;
    const ExploreResult x = Explore(*p, {}, o);
    EXPECT_EQ(x.verdict == ExploreVerdict::kVerified, any.empty())
        << ExploreVerdictName(x.verdict);
  }
  EXPECT_GT(racy, 20u);
  EXPECT_GT(clean, 20u);
  EXPECT_GT(broken, 0u);  // some race is a broken chain of waits
  EXPECT_GT(runs, 1000u);
}

}  // namespace
}  // namespace parity::verifier
