// Correct schedules written from public bug reports (tests/verifier/testdata/redteam: the fixed
// form of a reported bug, or correct code that another checker flagged), each citing its report:
// `check` finds nothing under every policy and `explore` says VERIFIED. Their broken forms are
// pipelines/redteam/bad_*.pipe, checked by tests/pipelines through their `# expect:` lines.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
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

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string Dump(const std::vector<Finding>& findings) {
  std::string s;
  for (const Finding& f : findings) {
    s += std::string(model::CodeId(f.code())) + " " + f.message + " @ " + f.where.ToString() +
         "\n";
  }
  return s;
}

std::vector<std::string> CleanFiles() {
  std::vector<std::string> out;
  for (const char* dir : {"tests/verifier/testdata/redteam", "tests/verifier/testdata/hb"}) {
    for (const auto& e : std::filesystem::directory_iterator(dir)) {
      if (e.path().extension() == ".pipe") out.push_back(e.path().generic_string());
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

TEST(RedTeamTest, CorrectSchedulesFromBugReportsAreClean) {
  const std::vector<std::string> files = CleanFiles();
  EXPECT_GE(files.size(), 6u);
  for (const std::string& path : files) {
    SCOPED_TRACE(path);
    const std::string text = ReadFile(path);
    if (path.find("/redteam/") != std::string::npos) {
      EXPECT_NE(text.find("https://github.com/"), std::string::npos) << "cite the report";
    }
    auto program = ir::ParseProgram(text, path);
    ASSERT_TRUE(program.ok()) << program.status().ToString();
    auto params = ir::BindParams(*program, {});
    ASSERT_TRUE(params.ok()) << params.status().ToString();
    for (engine::Policy policy : {engine::Policy::kEager, engine::Policy::kLazy,
                                  engine::Policy::kRoundRobin, engine::Policy::kRandom}) {
      for (uint64_t seed : {1u, 2u, 3u}) {
        engine::EngineOptions o;
        o.policy = policy;
        o.seed = seed;
        auto e = engine::Engine::Create(*program, *params, o);
        ASSERT_TRUE(e.ok()) << e.status().ToString();
        e->Run();
        EXPECT_EQ(e->outcome(), engine::Outcome::kCompleted) << engine::PolicyName(policy);
        const std::vector<Finding> f = CheckRules(*program, *e, e->trace());
        EXPECT_FALSE(HasErrors(f)) << engine::PolicyName(policy) << " " << seed << "\n"
                                   << Dump(f);
        if (policy != engine::Policy::kRandom) break;
      }
    }
    ExploreOptions x;
    x.time_limit_s = 60;
    const ExploreResult r = Explore(*program, *params, x);
    EXPECT_EQ(r.verdict, ExploreVerdict::kVerified) << Dump(r.findings);
  }
}

}  // namespace
}  // namespace parity::verifier
