// Programmatic dependent launch end to end: the language (`primary clusters N { ... }`,
// `global` buffers, griddepcontrol.launch_dependents / wait; parse.* rules for their misuse),
// the printer, content hash and encoding, the engine (griddepcontrol.wait blocks until every
// agent of the primary grid exited; a primary that hangs takes the dependent's wait with it),
// the access model on global memory (verifier/pdl.h: P2020 across the grids, P2009 within one)
// and the explorer's verdicts.
#include "verifier/pdl.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "sim/engine/engine.h"
#include "sim/ir/encoding.h"
#include "sim/ir/hash.h"
#include "sim/ir/parser.h"
#include "sim/ir/printer.h"
#include "sim/model/codes.h"
#include "sim/trace/event.h"
#include "verifier/deadlock.h"
#include "verifier/explore.h"
#include "verifier/rules.h"

namespace parity::verifier {
namespace {

using engine::Outcome;
using engine::Policy;
using model::Code;
using trace::EventKind;

// A primary grid of P clusters writes G[cluster_id] (then launch_dependents); the dependent
// grid's cluster c reads G[c]. `dep` is the dependent role's body.
std::string Schedule(const std::string& dep, int primary_clusters = 2,
                     const std::string& primary_body = "  write G[cluster_id]\n"
                                                       "  griddepcontrol.launch_dependents\n") {
  return "schedule s\n"
         "clusters 2\n"
         "global G[2] bytes 256\n"
         "barrier b[1] count 1\n"
         "primary clusters " +
         std::to_string(primary_clusters) +
         " {\n"
         "  role epi threads 128 {\n" +
         primary_body +
         "  }\n"
         "}\n"
         "role dep threads 128 {\n" +
         dep + "}\n";
}

struct Ran {
  ir::Program program;
  std::unique_ptr<engine::Engine> engine;
  engine::RunResult result;
  std::vector<Finding> findings;
};

std::unique_ptr<Ran> RunText(const std::string& text, Policy policy = Policy::kEager,
                             uint64_t seed = 0) {
  auto p = ir::ParseProgram(text, "pdl.pipe");
  EXPECT_TRUE(p.ok()) << p.status().ToString();
  if (!p.ok()) return nullptr;
  auto r = std::make_unique<Ran>();
  r->program = std::move(p).value();
  auto params = ir::BindParams(r->program, {});
  EXPECT_TRUE(params.ok());
  engine::EngineOptions o;
  o.policy = policy;
  o.seed = seed;
  auto e = engine::Engine::Create(r->program, *params, o);
  EXPECT_TRUE(e.ok()) << e.status().ToString();
  if (!e.ok()) return nullptr;
  r->engine = std::make_unique<engine::Engine>(std::move(e).value());
  r->result = r->engine->Run();
  r->findings = CheckRules(r->program, *r->engine, r->engine->trace());
  return r;
}

std::vector<engine::EngineOptions> Policies() {
  std::vector<engine::EngineOptions> out;
  for (Policy p : {Policy::kEager, Policy::kLazy, Policy::kRoundRobin}) {
    engine::EngineOptions o;
    o.policy = p;
    out.push_back(o);
  }
  for (uint64_t s = 1; s <= 6; ++s) {
    engine::EngineOptions o;
    o.policy = Policy::kRandom;
    o.seed = s;
    out.push_back(o);
  }
  return out;
}

const char* kWaitThenRead = "  griddepcontrol.wait\n  use G[cluster_id]\n";

TEST(PdlTest, ParsesPrintsHashesAndEncodes) {
  const std::string text = Schedule(kWaitThenRead);
  auto p = ir::ParseProgram(text, "pdl.pipe");
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  ASSERT_EQ(p->primaries.size(), 1u);
  ASSERT_EQ(p->roles.size(), 2u);
  EXPECT_EQ(p->roles[0].grid, 1);  // epi, inside `primary`
  EXPECT_EQ(p->roles[1].grid, 0);
  ASSERT_EQ(p->globals.size(), 1u);
  EXPECT_EQ(p->globals[0].name, "G");
  const auto& dep = p->roles[1].body;
  ASSERT_EQ(dep.size(), 2u);
  const auto* wait = std::get_if<ir::GridDepControl>(&std::get<ir::Op>(dep[0].node));
  ASSERT_NE(wait, nullptr);
  EXPECT_EQ(wait->kind, ir::GridDepControl::Kind::kWait);
  EXPECT_EQ(dep[0].where.line, 12);
  const auto* use = std::get_if<ir::GlobalAccess>(&std::get<ir::Op>(dep[1].node));
  ASSERT_NE(use, nullptr);
  EXPECT_FALSE(use->write);

  // The printer writes the primary block back; its text parses to the same program.
  const std::string printed = ir::Print(*p);
  EXPECT_NE(printed.find("primary clusters 2 {"), std::string::npos) << printed;
  EXPECT_NE(printed.find("griddepcontrol.launch_dependents"), std::string::npos);
  EXPECT_NE(printed.find("global G[2] bytes 256"), std::string::npos);
  auto again = ir::ParseProgram(printed, "printed.pipe");
  ASSERT_TRUE(again.ok()) << again.status().ToString() << "\n" << printed;
  EXPECT_EQ(ir::Print(*again), printed);
  EXPECT_EQ(ir::ContentHash(*again), ir::ContentHash(*p));

  // The wait is content: leaving it out changes the hash.
  auto no_wait = ir::ParseProgram(Schedule("  use G[cluster_id]\n"), "pdl.pipe");
  ASSERT_TRUE(no_wait.ok());
  EXPECT_NE(ir::ContentHash(*no_wait), ir::ContentHash(*p));

  // Encoding version 5's header words 24..27 and the two op records; the round trip.
  auto w = ir::Encode(*p, {});
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  const std::vector<uint32_t>& words = *w;
  EXPECT_EQ(words[ir::kHdrVersion], ir::kEncodingVersion);
  EXPECT_NE(words[ir::kHdrPrimary], ir::kEncodingNone);  // the primary grid's cluster count
  EXPECT_EQ(words[ir::kHdrNumGlobals], 1u);              // one global buffer
  EXPECT_EQ(words[words[ir::kHdrRoleGrids]], 1u);        // role 0 runs in the primary grid
  EXPECT_EQ(words[words[ir::kHdrRoleGrids] + 1], 0u);
  auto decoded = ir::Decode(words);
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  EXPECT_EQ(ir::Print(*decoded), ir::Print(ir::SubstituteParams(*p, {})));
  auto re = ir::Encode(*decoded, {});
  ASSERT_TRUE(re.ok());
  EXPECT_EQ(*re, words);
  // The dependent role's body: the wait record (kind 16 + 25, 2 words), then the read (16 + 26).
  uint32_t at = words[20];
  at += 5 + (words[at + 4]);  // skip role 0 (5 fields + body)
  const uint32_t body = at + 5;
  EXPECT_EQ(words[body], (16u + 25u) | (2u << 8));
  EXPECT_EQ(words[body + 1], 1u);  // kWait
  EXPECT_EQ(words[body + 2], (16u + 26u) | (6u << 8));
  EXPECT_EQ(words[body + 3], 0u);  // global G
  EXPECT_EQ(words[body + 7], 0u);  // a read
}

struct BadInput {
  std::string text;
  std::string rule;
  int line;
  int column;
};

TEST(PdlTest, MisuseIsAParseErrorWithItsRuleAndPlace) {
  const std::string head = "global G[1] bytes 64\nbuffer S[1] bytes 1024\nbarrier b[1] count 1\n"
                           "tensormap tm dtype u8 dims [64] box [64]\n";
  const std::vector<BadInput> cases = {
      {head + "primary clusters 1 {\n  buffer X[1] bytes 4\n}\nrole r { exit }\n",
       "parse.primary", 6, 3},
      {head + "primary clusters 1 {\n}\nrole r { exit }\n", "parse.primary", 5, 1},
      {head + "primary clusters 1 {\n  role p { exit }\n}\n", "parse.no-roles", 8, 1},
      {head + "role r {\n  tma.load tm coords [0] -> G[0] bar b[0]\n}\n", "parse.global-buffer",
       6, 29},
      {head + "role r {\n  use G[0] @cta(0)\n}\n", "parse.global-buffer", 6, 12},
      {head + "role r {\n  bulk.store G[0]\n}\n", "parse.global-buffer", 6, 14},
      {head + "buffer G[1] bytes 16\nrole r { exit }\n", "parse.duplicate", 5, 8},
      {head + "role r {\n  griddepcontrol.sync\n}\n", "parse.unknown-op", 6, 3},
      {head + "role primary { exit }\n", "parse.reserved", 5, 6},
  };
  for (const BadInput& c : cases) {
    auto p = ir::ParseProgram(c.text, "bad.pipe");
    ASSERT_FALSE(p.ok()) << c.text;
    EXPECT_EQ(p.status().rule(), c.rule) << c.text << "\n" << p.status().ToString();
    EXPECT_EQ(p.status().where().file, "bad.pipe");
    EXPECT_EQ(p.status().where().line, c.line) << p.status().ToString();
    EXPECT_EQ(p.status().where().column, c.column) << p.status().ToString();
  }
}

// griddepcontrol.wait returns only after every agent of the primary grid exited, whatever the
// interleaving; the primary's CTAs number their own clusters (cluster_id 0..P-1).
TEST(PdlTest, WaitReturnsAfterThePrimaryGridCompleted) {
  const std::string text = Schedule("  griddepcontrol.launch_dependents\n" +
                                    std::string(kWaitThenRead));
  for (const engine::EngineOptions& o : Policies()) {
    auto r = RunText(text, o.policy, o.seed);
    ASSERT_TRUE(r);
    ASSERT_EQ(r->result.outcome, Outcome::kCompleted) << engine::PolicyName(o.policy);
    EXPECT_TRUE(r->findings.empty()) << r->findings.front().message;
    const auto& trace = r->engine->trace();
    size_t last_primary_exit = 0, first_wait = trace.size(), primary_exits = 0, waits = 0;
    for (size_t i = 0; i < trace.size(); ++i) {
      const auto& ev = trace[i];
      const bool primary = ev.cluster >= r->engine->primary_first_cluster();
      if (ev.kind == static_cast<uint8_t>(EventKind::kExit) && primary) {
        last_primary_exit = i;
        ++primary_exits;
      }
      if (ev.kind == static_cast<uint8_t>(EventKind::kGridDepWait)) {
        EXPECT_FALSE(primary);
        EXPECT_EQ(ev.value, 2);  // both primary agents had exited
        first_wait = std::min(first_wait, i);
        ++waits;
      }
      if (ev.kind == static_cast<uint8_t>(EventKind::kGlobalWrite)) {
        EXPECT_TRUE(primary);
        EXPECT_EQ(ev.index, ev.cluster - r->engine->primary_first_cluster());
      }
    }
    EXPECT_EQ(primary_exits, 2u);
    EXPECT_EQ(waits, 2u);
    EXPECT_GT(first_wait, last_primary_exit) << engine::PolicyName(o.policy);
  }
  // Some policy lets a dependent agent run (launch_dependents) before the primary finished:
  // the model does not hold the dependent back until the primary completes.
  auto lazy = RunText(text, Policy::kRoundRobin);
  ASSERT_TRUE(lazy);
  const auto& t = lazy->engine->trace();
  size_t dep_launch = t.size(), primary_exit = 0;
  for (size_t i = 0; i < t.size(); ++i) {
    const bool primary = t[i].cluster >= lazy->engine->primary_first_cluster();
    if (!primary && t[i].kind == static_cast<uint8_t>(EventKind::kGridDepLaunch)) {
      dep_launch = std::min(dep_launch, i);
    }
    if (primary && t[i].kind == static_cast<uint8_t>(EventKind::kExit)) primary_exit = i;
  }
  EXPECT_LT(dep_launch, primary_exit);
}

TEST(PdlTest, WaitWithoutAPrimaryGridReturnsAtOnce) {
  auto r = RunText("global G[1] bytes 64\nrole r {\n  griddepcontrol.wait\n  use G[0]\n}\n");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->result.outcome, Outcome::kCompleted);
  EXPECT_TRUE(r->findings.empty());
}

// The primary hangs on its own barrier: the dependent's wait blocks with it, and the diagnosis
// names the primary's wait as the cause and the griddepcontrol.wait as waiting on the grid.
TEST(PdlTest, APrimaryThatHangsTakesTheWaitWithIt) {
  const std::string text = Schedule(kWaitThenRead, 1, "  init b[0]\n  wait b[0] parity 0\n");
  for (const engine::EngineOptions& o : Policies()) {
    auto r = RunText(text, o.policy, o.seed);
    ASSERT_TRUE(r);
    ASSERT_EQ(r->result.outcome, Outcome::kDeadlock);
    size_t grid_waits = 0;
    for (const engine::BlockedAgent& b : r->result.deadlock.blocked) {
      if (b.wait != engine::WaitKind::kGridDependency) continue;
      ++grid_waits;
      EXPECT_EQ(b.arrived, 0u);
      EXPECT_EQ(b.expected, 1u);
      EXPECT_EQ(b.where.line, 12);
    }
    EXPECT_EQ(grid_waits, 2u);
    const DeadlockReport report = DiagnoseDeadlock(r->program, *r->engine, r->result);
    const std::string text_report = FormatDeadlockReport(report, r->program, *r->engine, "");
    EXPECT_NE(text_report.find("griddepcontrol.wait"), std::string::npos) << text_report;
    EXPECT_NE(text_report.find("primary cluster 0 CTA 0 epi[0]"), std::string::npos)
        << text_report;
  }
}

Finding Only(const Ran& r, Code code) {
  Finding out;
  size_t n = 0;
  for (const Finding& f : r.findings) {
    if (f.code() == code) {
      out = f;
      ++n;
    }
  }
  EXPECT_GE(n, 1u);
  return out;
}

TEST(PdlTest, ReadBeforeTheWaitIsP2020AtTheReadNamingTheWrite) {
  // launch_dependents after the write (the primary's program order) orders nothing.
  const std::string text = Schedule("  use G[cluster_id]\n  griddepcontrol.wait\n");
  for (const engine::EngineOptions& o : Policies()) {
    auto r = RunText(text, o.policy, o.seed);
    ASSERT_TRUE(r);
    ASSERT_EQ(r->result.outcome, Outcome::kCompleted);
    const Finding f = Only(*r, Code::kPdlWaitMissing);
    EXPECT_EQ(f.where.line, 12);
    EXPECT_TRUE(f.object_is_global);
    EXPECT_EQ(r->program.globals[f.object].name, "G");
    EXPECT_NE(f.message.find("line 12"), std::string::npos) << f.message;
    EXPECT_NE(f.message.find("line 7"), std::string::npos) << f.message;  // the write
    EXPECT_FALSE(r->engine->is_primary_agent(f.agent));
    EXPECT_TRUE(r->engine->is_primary_agent(f.other_agent));
  }
}

TEST(PdlTest, AnotherAgentsWaitOrdersTheReadThroughABarrier) {
  // Agent 0 waits, then both pass bar.sync; agent 1 reads without a wait of its own: ordered.
  const std::string ordered =
      "  if agent == 0 {\n    griddepcontrol.wait\n  }\n  bar.sync 1, 256\n"
      "  use G[cluster_id]\n";
  auto p = RunText(Schedule(ordered).replace(Schedule(ordered).find("role dep threads 128"),
                                             20, "role dep count 2 threads 128"));
  ASSERT_TRUE(p);
  EXPECT_EQ(p->result.outcome, Outcome::kCompleted);
  EXPECT_TRUE(p->findings.empty()) << p->findings.front().message;
  // Without the barrier, agent 1's read is not after any wait.
  const std::string unordered = "  if agent == 0 {\n    griddepcontrol.wait\n  }\n"
                                "  use G[cluster_id]\n";
  auto q = RunText(Schedule(unordered).replace(Schedule(unordered).find("role dep threads 128"),
                                               20, "role dep count 2 threads 128"));
  ASSERT_TRUE(q);
  const Finding f = Only(*q, Code::kPdlWaitMissing);
  EXPECT_EQ(f.where.line, 15);
  EXPECT_EQ(q->engine->agent_info(f.agent).index_in_role, 1u);
}

TEST(PdlTest, TheDependentMayNotWriteWhatThePrimaryStillReads) {
  const std::string primary_reads = "  use G[cluster_id]\n";
  auto bad = RunText(Schedule("  write G[cluster_id]\n  griddepcontrol.wait\n", 2, primary_reads));
  ASSERT_TRUE(bad);
  EXPECT_EQ(Only(*bad, Code::kPdlWaitMissing).where.line, 11);
  auto good = RunText(Schedule("  griddepcontrol.wait\n  write G[cluster_id]\n", 2, primary_reads));
  ASSERT_TRUE(good);
  EXPECT_TRUE(good->findings.empty());
  // Disjoint bytes of one slot do not race.
  auto disjoint = RunText(Schedule("  write G[cluster_id] + 128 bytes 128\n",
                                   2, "  use G[cluster_id] bytes 128\n"));
  ASSERT_TRUE(disjoint);
  EXPECT_TRUE(disjoint->findings.empty());
}

TEST(PdlTest, TwoClustersOfOneGridWritingOneSlotRace) {
  auto r = RunText(Schedule(kWaitThenRead, 2, "  write G[0]\n"));
  ASSERT_TRUE(r);
  const Finding f = Only(*r, Code::kDataRace);
  EXPECT_TRUE(f.object_is_global);
  EXPECT_NE(f.message.find("different clusters"), std::string::npos) << f.message;
  // The dependent reads G[0] after its wait: ordered after both writes.
  for (const Finding& g : r->findings) EXPECT_NE(g.code(), Code::kPdlWaitMissing) << g.message;
}

TEST(PdlTest, ExploreVerifiesTheWaitAndFindsTheEarlyRead) {
  auto good = ir::ParseProgram(Schedule(kWaitThenRead), "good.pipe");
  ASSERT_TRUE(good.ok());
  ExploreOptions o;
  o.max_states = 200'000;
  o.shorten_budget_s = 0;
  const ExploreResult g = Explore(*good, {}, o);
  EXPECT_EQ(g.verdict, ExploreVerdict::kVerified) << ExploreVerdictName(g.verdict);
  auto bad = ir::ParseProgram(Schedule("  use G[cluster_id]\n  griddepcontrol.wait\n"),
                              "bad.pipe");
  ASSERT_TRUE(bad.ok());
  const ExploreResult b = Explore(*bad, {}, o);
  ASSERT_EQ(b.verdict, ExploreVerdict::kRuleViolation) << ExploreVerdictName(b.verdict);
  ASSERT_FALSE(b.findings.empty());
  EXPECT_EQ(b.findings.front().code(), Code::kPdlWaitMissing);
  // A primary that hangs: explore finds the deadlock.
  auto hang = ir::ParseProgram(
      Schedule(kWaitThenRead, 1, "  init b[0]\n  wait b[0] parity 0\n"), "h.pipe");
  ASSERT_TRUE(hang.ok());
  EXPECT_EQ(Explore(*hang, {}, o).verdict, ExploreVerdict::kDeadlock);
}

}  // namespace
}  // namespace parity::verifier
