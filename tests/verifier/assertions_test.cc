// User assertions (docs/language.md §7.6) below the command line: the parser's form and errors,
// the engine's semantics of the state reads and of a failure, what a step that asserts touches
// (the partial-order reduction's footprint), and explore's forall / exists verdicts.
#include <gtest/gtest.h>

#include <string>
#include <variant>
#include <vector>

#include "sim/engine/engine.h"
#include "sim/ir/encoding.h"
#include "sim/ir/ir.h"
#include "sim/ir/parser.h"
#include "sim/ir/printer.h"
#include "sim/model/codes.h"
#include "verifier/explore.h"

namespace parity::verifier {
namespace {

using engine::Choice;
using engine::Engine;
using engine::Outcome;

ir::Program Parse(const std::string& text) {
  auto p = ir::ParseProgram(text, "a.pipe");
  EXPECT_TRUE(p.ok()) << p.status().ToString();
  return p.ok() ? std::move(p).value() : ir::Program{};
}

Status ParseError(const std::string& text) {
  auto p = ir::ParseProgram(text, "a.pipe");
  EXPECT_FALSE(p.ok());
  return p.ok() ? Status::Ok() : p.status();
}

constexpr char kLoad[] = R"(buffer tile[2] bytes 128
barrier full[1] count 1
role r {
  init full[0]
  fence.mbarrier_init
  assert phase(full[0]) == 0 && pending(full[0]) == 1 && tx(full[0]) == 0 -- fresh, 'quoted'
  arrive.expect_tx full[0] bytes 128
  bulk.load tile[1] bar full[0]
  assert landed(tile[0]) && (tx(full[0]) == 128 || phase(full[0]) == 1)
  wait full[0] parity 0
  assert phase(full[0]) == 1 && landed(tile[1])
}
forall phase(full[0]) == 1
exists tx(full[0]) == 0 -- done
)";

TEST(AssertionsTest, ParsesPrintsAndRoundTrips) {
  const ir::Program p = Parse(kLoad);
  ASSERT_EQ(p.assertions.size(), 5u);
  EXPECT_EQ(p.assertions[0].kind, ir::Assertion::Kind::kAssert);
  EXPECT_EQ(p.assertions[0].text,
            "phase(full[0]) == 0 && pending(full[0]) == 1 && tx(full[0]) == 0");
  EXPECT_EQ(p.assertions[0].message, "fresh, 'quoted'");  // any character after `--`
  EXPECT_EQ(p.assertions[0].where.line, 6);
  EXPECT_EQ(p.assertions[0].where.column, 3);
  EXPECT_EQ(p.assertions[3].kind, ir::Assertion::Kind::kForall);
  EXPECT_EQ(p.assertions[4].kind, ir::Assertion::Kind::kExists);
  EXPECT_EQ(p.assertions[4].message, "done");
  const std::string printed = ir::Print(p);
  EXPECT_NE(printed.find("assert landed(tile[0]) && (tx(full[0]) == 128 || phase(full[0]) == 1)\n"),
            std::string::npos)
      << printed;
  EXPECT_NE(printed.find("exists tx(full[0]) == 0 -- done\n"), std::string::npos) << printed;
  const ir::Program again = Parse(printed);
  EXPECT_EQ(ir::Print(again), printed);
  // A variable named like a state read is still a variable without `(`.
  Parse("role r {\n  let tx = 1\n  let phase = tx + 1\n}\n");
}

TEST(AssertionsTest, BadAssertionsAreParseErrorsAtTheirColumn) {
  struct Case {
    const char* text;
    const char* rule;
    int line, col;
  };
  const Case cases[] = {
      {"barrier b[1] count 1\nrole r { let x = tx(b[0]) }\n", "parse.state-outside-assertion", 2,
       18},
      {"barrier b[1] count 1\nrole r { assert tx(b[0] @cta(1)) == 0 }\n", "parse.bad-state-read",
       2, 20},
      {"buffer t[1] bytes 64\nrole r { assert landed(t[0] + 8) }\n", "parse.bad-state-read", 2,
       17},
      {"barrier b[1] count 1\nrole r { assert phase(b[0]) == 0 oops }\n", "parse.bad-assertion",
       2, 34},
      {"barrier b[1] count 1\nrole r { init b[0] }\nassert phase(b[0]) == 0\n",
       "parse.assert-outside-role", 3, 1},
      {"role r { assert phase(nope[0]) == 0 }\n", "parse.unknown-barrier", 1, 23},
      {"barrier b[1] count 1\nrole r { assert }\n", "parse", 2, 17},
      {"barrier b[1] count 1\nrole r { exit }\nforall x == 1\n", "parse.unknown-name", 3, 8},
  };
  for (const Case& c : cases) {
    const Status s = ParseError(c.text);
    EXPECT_EQ(s.rule(), c.rule) << c.text << s.ToString();
    EXPECT_EQ(s.where().line, c.line) << c.text << s.ToString();
    EXPECT_EQ(s.where().column, c.col) << c.text << s.ToString();
    EXPECT_EQ(s.where().file, "a.pipe");
  }
}

TEST(AssertionsTest, StateReadsFollowTheModel) {
  const ir::Program p = Parse(kLoad);
  // Eager and lazy: every assertion holds, the run completes, the forall holds and so does
  // the exists (bit 0).
  for (engine::Policy policy : {engine::Policy::kEager, engine::Policy::kLazy}) {
    engine::EngineOptions o;
    o.policy = policy;
    auto e = Engine::Create(p, {}, o);
    ASSERT_TRUE(e.ok()) << e.status().ToString();
    EXPECT_EQ(e->Run().outcome, Outcome::kCompleted) << engine::PolicyName(policy);
    EXPECT_EQ(e->ExistsHeld(), 1u);
    int64_t v = -1;
    ASSERT_TRUE(e->ReadStateAt(ir::StateFn::kPhase, 0, 0, 0, &v));
    EXPECT_EQ(v, 1);
    EXPECT_FALSE(e->ReadStateAt(ir::StateFn::kPhase, 0, 1, 0, &v));  // outside full[1]
    EXPECT_FALSE(e->ReadStateAt(ir::StateFn::kLanded, 0, 2, 0, &v));  // outside tile[2]
  }
  // Stepped by hand: between the issue and the landing, tile[1] has not landed and tile[0]
  // (no copy into it) has.
  auto e = Engine::Create(p, {});
  ASSERT_TRUE(e.ok());
  std::vector<Choice> choices;
  for (int i = 0; i < 4; ++i) e->Step(Choice{Choice::Kind::kAgent, 0});  // through the issue
  ASSERT_EQ(e->in_flight(), 1u);
  int64_t v = -1;
  ASSERT_TRUE(e->ReadStateAt(ir::StateFn::kLanded, 0, 1, 0, &v));
  EXPECT_EQ(v, 0);
  ASSERT_TRUE(e->ReadStateAt(ir::StateFn::kLanded, 0, 0, 0, &v));
  EXPECT_EQ(v, 1);
  ASSERT_TRUE(e->ReadStateAt(ir::StateFn::kTx, 0, 0, 0, &v));
  EXPECT_EQ(v, 128);
  ASSERT_TRUE(e->ReadStateAt(ir::StateFn::kPending, 0, 0, 0, &v));
  EXPECT_EQ(v, 0);
}

// A failed assert ends the run at its line, naming the assertion and the CTA; the step that
// checks it touches the barrier it reads (the reduction's footprint), as an access that
// commutes with nothing.
TEST(AssertionsTest, FailureEndsTheRunAndTheStepReadsItsBarrier) {
  const ir::Program p = Parse(R"(barrier b[2] count 1
cluster 2x1
role r {
  init b[1]
  assert phase(b[1]) == cta_rank -- only CTA 0
}
)");
  auto e = Engine::Create(p, {});
  ASSERT_TRUE(e.ok());
  e->Step(Choice{Choice::Kind::kAgent, 1});  // CTA 1's init
  engine::Footprint fp;
  EXPECT_EQ(e->Step(Choice{Choice::Kind::kAgent, 1}, &fp), Outcome::kViolation);
  const engine::ViolationInfo& v = *e->result().violation;
  EXPECT_EQ(v.violation.code, model::Code::kAssertionFailed);
  EXPECT_EQ(v.violation.value, 0);  // the assertion's index
  EXPECT_EQ(v.violation.limit, 1);  // the CTA
  EXPECT_EQ(v.where.line, 5);
  EXPECT_EQ(v.agent, 1u);
  const uint32_t slot = 1 * 2 + 1;  // CTA 1's b[1]
  bool read = false;
  for (uint32_t k = 0; k < fp.n; ++k) {
    if (fp.objects[k] == slot) read = fp.kinds[k] == engine::Access::kOther;
  }
  EXPECT_TRUE(read) << "the assert's step touches the barrier slot it reads";
  // The look-ahead of the reduction names it too.
  auto fresh = Engine::Create(p, {});
  ASSERT_TRUE(fresh.ok());
  engine::Footprint future;
  ASSERT_TRUE(fresh->AgentFuture(1, &future));
  bool ahead = false;
  for (uint32_t k = 0; k < future.n; ++k) ahead |= future.objects[k] == slot;
  EXPECT_TRUE(ahead);
}

// A forall that fails in the final state is the run's violation at the property's line.
TEST(AssertionsTest, ForallFailsInTheFinalState) {
  const ir::Program p = Parse(R"(barrier b[1] count 1
role r {
  init b[0]
  arrive b[0]
}
forall phase(b[0]) == 0 -- nobody arrives
)");
  auto e = Engine::Create(p, {});
  ASSERT_TRUE(e.ok());
  const engine::RunResult r = e->Run();
  ASSERT_EQ(r.outcome, Outcome::kViolation);
  EXPECT_EQ(r.violation->violation.code, model::Code::kAssertionFailed);
  EXPECT_EQ(r.violation->where.line, 6);
  EXPECT_EQ(r.violation->where.column, 1);
}

// explore: an assertion that only one interleaving fails is found with and without reduction;
// an exists is judged on every complete end state, and only by a complete search.
TEST(AssertionsTest, ExploreFindsFailuresAndJudgesExists) {
  const ir::Program racy = Parse(R"(buffer tile[1] bytes 128
barrier full[1] count 1
role producer {
  init full[0]
  fence.mbarrier_init
  cluster.sync
  arrive.expect_tx full[0] bytes 128
  bulk.load tile[0] bar full[0]
}
role consumer threads 128 {
  cluster.sync
  assert landed(tile[0])
  wait full[0] parity 0
}
)");
  for (bool reduction : {true, false}) {
    ExploreOptions o;
    o.reduction = reduction;
    o.check_rules = false;
    const ExploreResult r = Explore(racy, {}, o);
    ASSERT_EQ(r.verdict, ExploreVerdict::kViolation) << reduction;
    auto end = Replay(racy, {}, r.counterexample);
    ASSERT_TRUE(end.ok());
    EXPECT_EQ(end->result().violation->violation.code, model::Code::kAssertionFailed);
    EXPECT_EQ(r.failed_assertions, std::vector<int64_t>{0});
  }
  // Agent 1 arrives on `second` only when it sees agent 0's arrival on `first`: some complete
  // runs end with second's phase completed, some without; none with first's open.
  const std::string race = R"(barrier first[1] count 1
barrier second[1] count 1
role r count 2 {
  if agent == 0 {
    init first[0]
    init second[0]
  }
  cluster.sync
  if agent == 0 {
    arrive first[0]
  } else {
    test_wait first[0] parity 0 -> seen
    if seen == 1 {
      arrive second[0]
    }
  }
}
)";
  for (bool reduction : {true, false}) {
    ExploreOptions o;
    o.reduction = reduction;
    o.check_rules = false;
    EXPECT_EQ(Explore(Parse(race + "exists phase(second[0]) == 1\nexists phase(second[0]) == 0\n"),
                      {}, o)
                  .verdict,
              ExploreVerdict::kVerified);
    const ExploreResult none = Explore(Parse(race + "exists phase(first[0]) == 0\n"), {}, o);
    EXPECT_EQ(none.verdict, ExploreVerdict::kRuleViolation);
    ASSERT_EQ(none.findings.size(), 1u);
    EXPECT_EQ(none.findings[0].code(), model::Code::kExistsUnsatisfied);
    EXPECT_TRUE(none.counterexample.empty());
    // A search that a bound stopped decides nothing about an exists.
    o.max_states = 3;
    EXPECT_EQ(Explore(Parse(race + "exists phase(first[0]) == 0\n"), {}, o).verdict,
              ExploreVerdict::kIncomplete);
  }
}

// Every search collects the assertions that failed at the violating end states it reached
// (ExploreResult::failed_assertions, P2033): the parallel depth-first search on 2 and 4 threads
// and the breadth-first one on 2 threads report the same ones as the one-thread searches. Each
// role's assert fails only when the other role arrived first, so both fail, on different
// interleavings, and a search that stops at the first finding sees one of them.
TEST(AssertionsTest, EverySearchCollectsTheFailedAssertions) {
  const ir::Program p = Parse(R"(barrier bar[1] count 2
role a {
  init bar[0]
  fence.mbarrier_init
  cluster.sync
  assert pending(bar[0]) == 2 -- b arrived first
  arrive bar[0]
  wait bar[0] parity 0
}
role b {
  cluster.sync
  assert pending(bar[0]) == 2 -- a arrived first
  arrive bar[0]
  wait bar[0] parity 0
}
)");
  for (bool reduction : {false, true}) {
    ExploreOptions o;
    o.reduction = reduction;
    o.check_rules = false;
    o.stop_at_first = false;
    const ExploreResult one = Explore(p, {}, o);
    ASSERT_EQ(one.verdict, ExploreVerdict::kViolation) << reduction;
    if (!reduction) {
      EXPECT_EQ(one.failed_assertions, (std::vector<int64_t>{0, 1}));
    } else {
      EXPECT_FALSE(one.failed_assertions.empty());
    }
    o.breadth_first = true;
    EXPECT_EQ(Explore(p, {}, o).failed_assertions, one.failed_assertions) << reduction;
    for (int threads : {2, 4}) {
      o.threads = threads;
      o.breadth_first = false;
      const ExploreResult par = Explore(p, {}, o);
      EXPECT_EQ(par.verdict, ExploreVerdict::kViolation) << threads;
      if (!reduction) {
        EXPECT_EQ(par.failed_assertions, one.failed_assertions) << threads;
      } else {
        EXPECT_FALSE(par.failed_assertions.empty()) << threads;
      }
      o.breadth_first = true;
      EXPECT_EQ(Explore(p, {}, o).failed_assertions,
                [&] {
                  ExploreOptions b = o;
                  b.threads = 1;
                  return Explore(p, {}, b).failed_assertions;
                }())
          << "breadth-first on " << threads << " threads";
    }
  }
}

// The GPU runs no assertion: an assert is `if 0 { }` there, one instruction as in the engine's
// numbering, so the pcs of later statements agree.
TEST(AssertionsTest, GpuEncodingKeepsThePcs) {
  const ir::Program p = Parse(kLoad);
  auto enc = ir::Encode(p, {});
  ASSERT_TRUE(enc.ok()) << enc.status().ToString();
  auto dec = ir::Decode(*enc);
  ASSERT_TRUE(dec.ok()) << dec.status().ToString();
  const ir::Block& body = dec->roles[0].body;
  ASSERT_EQ(body.size(), p.roles[0].body.size());
  for (size_t i = 0; i < body.size(); ++i) {
    const bool was_assert = std::holds_alternative<ir::Assert>(p.roles[0].body[i].node);
    EXPECT_EQ(std::holds_alternative<ir::If>(body[i].node), was_assert) << i;
  }
}

}  // namespace
}  // namespace parity::verifier
