// `# expect:` lines (verifier/expect.h): the syntax and its errors, MatchCheck's verdicts, and
// every check expectation of the bundled examples (sim/examples/**; the pipeline library's are
// tests/pipelines') against a run of its file under its policy (every policy where it says so).
#include "verifier/expect.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "sim/engine/engine.h"
#include "sim/ir/ir.h"
#include "sim/ir/parser.h"
#include "verifier/culprit.h"
#include "verifier/deadlock.h"
#include "verifier/rules.h"

namespace parity::verifier {
namespace {

TEST(ExpectTest, ReadsEveryField) {
  auto x = ReadExpectations("f.pipe",
                            "schedule s\n"
                            "  # expect: P2001 at 12 policy=random seed=3 every-policy -D A=4 "
                            "object=empty[2] cta=1 cause=count-too-high agent=\"CTA 1 p[0]\" "
                            "change=\"set the init count of empty to 4\"\n"
                            "# a comment\n"
                            "#expect: A1001 warnings=28 explore\n");
  ASSERT_TRUE(x.ok()) << x.status().ToString();
  ASSERT_EQ(x->size(), 2u);
  const Expectation& a = (*x)[0];
  EXPECT_EQ(a.code, "P2001");
  EXPECT_EQ(a.line, 12u);
  EXPECT_EQ(a.policy, engine::Policy::kRandom);
  EXPECT_EQ(a.seed, 3u);
  EXPECT_TRUE(a.every_policy);
  EXPECT_FALSE(a.explore);
  ASSERT_EQ(a.defines.size(), 1u);
  EXPECT_EQ(a.defines[0].first, "A");
  EXPECT_EQ(a.defines[0].second, 4);
  EXPECT_EQ(a.object, "empty");
  EXPECT_EQ(a.index, 2u);
  EXPECT_TRUE(a.has_index);
  EXPECT_EQ(a.cta, 1);
  EXPECT_EQ(a.cause, "count-too-high");
  EXPECT_EQ(a.agent, "CTA 1 p[0]");
  EXPECT_EQ(a.change, "set the init count of empty to 4");
  EXPECT_EQ(a.where.line, 2);
  const Expectation& b = (*x)[1];
  EXPECT_EQ(b.code, "A1001");
  EXPECT_EQ(b.warnings, 28u);
  EXPECT_TRUE(b.explore);
  EXPECT_EQ(b.policy, engine::Policy::kEager);
}

TEST(ExpectTest, MalformedLinesNameFileLineColumnAndRule) {
  const struct {
    const char* text;
    const char* message;
    int column;
  } cases[] = {
      {"# expect: X9999\n", "unknown rule code", 11},
      {"# expect:\n", "without a code", 3},
      {"# expect: P2001 policy=sometimes\n", "policy is one of", 17},
      {"# expect: P2001 at x\n", "`at` wants a line number", 17},
      {"# expect: P2001 -D A\n", "-D wants NAME=VALUE", 17},
      {"# expect: P2001 object=full[x]\n", "object is NAME or NAME[INDEX]", 17},
      {"# expect: P2001 agent=\"CTA 0\n", "unclosed quote", 3},
      {"# expect: P2001 colour=red\n", "unknown or malformed `colour=red`", 17},
  };
  for (const auto& c : cases) {
    auto x = ReadExpectations("bad.pipe", std::string("schedule s\n") + c.text);
    ASSERT_FALSE(x.ok()) << c.text;
    EXPECT_EQ(x.status().rule(), "expect.syntax") << c.text;
    EXPECT_NE(x.status().message().find(c.message), std::string::npos)
        << c.text << ": " << x.status().ToString();
    EXPECT_EQ(x.status().where().file, "bad.pipe");
    EXPECT_EQ(x.status().where().line, 2) << c.text;
    EXPECT_EQ(x.status().where().column, c.column) << c.text;
  }
}

struct Run {
  std::unique_ptr<ir::Program> program;
  std::unique_ptr<engine::Engine> engine;
  engine::RunResult result;
  std::vector<Finding> findings;
  DeadlockReport report;

  CheckRun View() const {
    CheckRun r;
    r.program = program.get();
    r.engine = engine.get();
    r.result = &result;
    r.findings = &findings;
    r.deadlock = result.outcome == engine::Outcome::kDeadlock ? &report : nullptr;
    return r;
  }
};

std::unique_ptr<Run> RunFile(const std::string& path, const Expectation& x,
                             const engine::EngineOptions& options) {
  auto run = std::make_unique<Run>();
  auto parsed = ir::ParseFile(path);
  EXPECT_TRUE(parsed.ok()) << parsed.status().ToString();
  if (!parsed.ok()) return nullptr;
  run->program = std::make_unique<ir::Program>(std::move(*parsed));
  auto params = ir::BindParams(*run->program, x.defines);
  EXPECT_TRUE(params.ok()) << params.status().ToString();
  if (!params.ok()) return nullptr;
  auto e = engine::Engine::Create(*run->program, *params, options);
  EXPECT_TRUE(e.ok()) << e.status().ToString();
  if (!e.ok()) return nullptr;
  run->engine = std::make_unique<engine::Engine>(std::move(*e));
  run->result = run->engine->Run();
  run->findings = CheckRules(*run->program, *run->engine, run->engine->trace());
  if (run->result.outcome == engine::Outcome::kDeadlock) {
    run->report = DiagnoseDeadlockWithRepair(*run->program, *run->engine, run->result, *params);
  }
  return run;
}

Expectation One(const std::string& line) {
  auto x = ReadExpectations("t", "# expect: " + line + "\n");
  EXPECT_TRUE(x.ok()) << x.status().ToString();
  return x.ok() && !x->empty() ? x->front() : Expectation{};
}

// A deadlock, a violation, a finding and warnings: the right expectation matches, and each
// wrong detail is named.
TEST(ExpectTest, MatchCheckNamesWhatDiffers) {
  const std::string path = "sim/examples/gemm_empty_count_high.pipe";
  Expectation right = One("P2001 object=empty[0] cta=0 cause=count-too-high");
  auto run = RunFile(path, right, right.Options());
  ASSERT_NE(run, nullptr);
  EXPECT_EQ(MatchCheck(right, run->View()), "");
  EXPECT_NE(MatchCheck(One("P2001 object=full[0]"), run->View()).find("empty[0], not full[0]"),
            std::string::npos);
  EXPECT_EQ(MatchCheck(One("P2001 object=empty"), run->View()), "");  // the name only
  EXPECT_NE(MatchCheck(One("P2001 object=full"), run->View()).find("empty, not full"),
            std::string::npos);
  EXPECT_NE(MatchCheck(One("P2001 cta=1"), run->View()).find("CTA 0, not 1"), std::string::npos);
  EXPECT_NE(MatchCheck(One("P2001 cause=tx-over-expected"), run->View()).find("count-too-high"),
            std::string::npos);
  EXPECT_NE(MatchCheck(One("M1005"), run->View()).find("no M1005"), std::string::npos);
  EXPECT_NE(MatchCheck(One("P2002"), run->View()).find("no P2002 finding"), std::string::npos);
  EXPECT_NE(MatchCheck(One("P2001 at 1"), run->View()).find("line"), std::string::npos);
  // The change a re-run proved, word for word (the count declared at line 34 is 8; 6 arrive).
  EXPECT_EQ(MatchCheck(One("P2001 at 34 change=\"set the init count of empty to 6\""),
                       run->View()),
            "");
  EXPECT_NE(MatchCheck(One("P2001 change=\"set the init count of empty to 7\""), run->View())
                .find("suggested change set the init count of empty to 6, not set the init "
                      "count of empty to 7"),
            std::string::npos);

  const std::string warn = "pipelines/ampere_multistage/bad_mainloop_no_commit.pipe";
  Expectation w = One("A1001 warnings=32 agent=\"CTA 0 mma[3]\"");
  auto wrun = RunFile(warn, w, w.Options());
  ASSERT_NE(wrun, nullptr);
  EXPECT_EQ(MatchCheck(w, wrun->View()), "");
  EXPECT_NE(MatchCheck(One("A1001 warnings=31"), wrun->View()).find("warnings 32, not 31"),
            std::string::npos);
  EXPECT_NE(MatchCheck(One("A1001 agent=\"CTA 0 mma[2]\""), wrun->View()).find("agent"),
            std::string::npos);
}

// Every check expectation of the bundled examples holds.
TEST(ExpectTest, EveryExampleMeetsItsExpectations) {
  std::vector<std::string> files;
  for (const auto& e : std::filesystem::recursive_directory_iterator("sim/examples")) {
    if (e.path().extension() == ".pipe") files.push_back(e.path().string());
  }
  std::sort(files.begin(), files.end());
  size_t checked = 0, with = 0;
  for (const std::string& f : files) {
    auto expects = ReadExpectationsFile(f);
    ASSERT_TRUE(expects.ok()) << expects.status().ToString();
    with += expects->empty() ? 0 : 1;
    for (const Expectation& x : *expects) {
      if (x.explore) continue;
      SCOPED_TRACE(f + ": " + x.Text());
      auto run = RunFile(f, x, x.Options());
      ASSERT_NE(run, nullptr);
      EXPECT_EQ(MatchCheck(x, run->View()), "");
      ++checked;
      if (!x.every_policy) continue;
      Expectation code_only;
      code_only.code = x.code;
      for (engine::Policy p : {engine::Policy::kEager, engine::Policy::kLazy,
                               engine::Policy::kRoundRobin, engine::Policy::kRandom}) {
        engine::EngineOptions o;
        o.policy = p;
        o.seed = 5;
        auto other = RunFile(f, x, o);
        ASSERT_NE(other, nullptr);
        EXPECT_EQ(MatchCheck(code_only, other->View()), "") << engine::PolicyName(p);
      }
    }
  }
  EXPECT_GE(with, 12u);
  EXPECT_GE(checked, 15u);
}

}  // namespace
}  // namespace parity::verifier
