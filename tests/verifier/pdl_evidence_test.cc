// traces/pdl: what griddepcontrol.wait orders on Hopper (gpu/litmus/pdl_litmus.cu, run by
// gpu/pdl_batch.sh; recorded on an H200), held against the model. Each variant of the litmus
// has a schedule here with the same shape (a primary grid writes its slice of a global buffer,
// possibly executing launch_dependents before or after the write; the dependent grid reads the
// slice, with or without griddepcontrol.wait). The model's verdict on it must cover the silicon: a variant whose
// read the model orders (the wait) never read stale data on the GPU, and every variant where the
// GPU read stale data is one the model reports (P2020). The stale reads of the early-read
// variants show that the race P2020 names is real.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <map>
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

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// `summary variant=V runs=R stale_runs=S early_runs=E stale_words=W` -> {key: value}.
std::map<std::string, long> Summary(const std::string& text) {
  std::map<std::string, long> out;
  const size_t at = text.find("\nsummary ");
  if (at == std::string::npos) return out;
  std::istringstream line(text.substr(at + 9, text.find('\n', at + 1) - at - 9));
  std::string kv;
  while (line >> kv) {
    const size_t eq = kv.find('=');
    if (eq == std::string::npos || kv.substr(0, eq) == "variant") continue;
    out[kv.substr(0, eq)] = std::strtol(kv.c_str() + eq + 1, nullptr, 10);
  }
  return out;
}

// The litmus in the language: two primary CTAs write their slices; the dependent's two CTAs
// read them. `trigger`: where the primary executes launch_dependents ("start", "late", "none").
std::string Schedule(const std::string& trigger, bool wait) {
  std::string primary = "    write D[cluster_id]\n";
  if (trigger == "start") primary = "    griddepcontrol.launch_dependents\n" + primary;
  if (trigger == "late") primary += "    griddepcontrol.launch_dependents\n";
  return "schedule pdl_litmus\nclusters 2\nglobal D[2] bytes 16384\n"
         "primary clusters 2 {\n  role writer threads 128 {\n" +
         primary + "  }\n}\nrole reader threads 128 {\n" +
         (wait ? "  griddepcontrol.wait\n" : "") + "  use D[cluster_id]\n}\n";
}

// Whether `parity explore` reports P2020 on the schedule (and verifies it otherwise).
bool ModelReportsRace(const std::string& text) {
  auto p = ir::ParseProgram(text, "pdl_litmus.pipe");
  EXPECT_TRUE(p.ok()) << p.status().ToString();
  if (!p.ok()) return false;
  ExploreOptions o;
  o.max_states = 100'000;
  o.shorten_budget_s = 0;
  const ExploreResult r = Explore(*p, {}, o);
  if (r.verdict == ExploreVerdict::kVerified) return false;
  EXPECT_EQ(r.verdict, ExploreVerdict::kRuleViolation) << ExploreVerdictName(r.verdict);
  EXPECT_FALSE(r.findings.empty());
  return !r.findings.empty() && r.findings.front().code() == model::Code::kPdlWaitMissing;
}

struct Variant {
  std::string name;
  std::string trigger;
  bool wait;
  bool pdl;  // launched with the programmatic attribute
};

TEST(PdlEvidenceTest, HopperNeverReadsStaleDataWhereTheModelOrdersTheRead) {
  const std::vector<Variant> variants = {
      {"wait", "start", true, true},
      {"nowait", "start", false, true},
      {"nowait_late", "late", false, true},
      {"nowait_none", "none", false, true},
      {"serial", "none", false, false},
  };
  size_t files = 0, stale_variants = 0;
  for (const Variant& v : variants) {
    const bool race = ModelReportsRace(Schedule(v.trigger, v.wait));
    // The model: only the wait orders the read.
    EXPECT_EQ(race, !v.wait) << v.name;
    for (const char* delay : {"0", "200000", "2000000"}) {
      const std::string path = std::string("traces/pdl/") + v.name + ".d" + delay + ".txt";
      SCOPED_TRACE(path);
      const std::string text = ReadAll(path);
      ASSERT_FALSE(text.empty()) << "missing " << path;
      ++files;
      std::map<std::string, long> s = Summary(text);
      ASSERT_EQ(s.count("runs"), 1u) << "no summary line";
      EXPECT_GE(s["runs"], 100);
      if (!v.pdl) {
        // Plain stream order: the reference, never stale (the model has no such launch).
        EXPECT_EQ(s["stale_runs"], 0);
        EXPECT_EQ(s["early_runs"], 0);
        continue;
      }
      if (s["stale_runs"] > 0) {
        ++stale_variants;
        EXPECT_TRUE(race) << v.name << " read stale data on the GPU where the model orders it";
      }
      if (v.wait) {
        EXPECT_EQ(s["stale_runs"], 0);
        // With a slow primary the dependent started early and still read fresh data: the wait,
        // not the launch order, kept it from reading early.
        if (std::string(delay) != "0") {
          EXPECT_GT(s["early_runs"], 0);
        }
      }
    }
  }
  EXPECT_EQ(files, 15u);
  // The race is real: some early-read variant saw stale data.
  EXPECT_GE(stale_variants, 1u);
}

}  // namespace
}  // namespace parity::verifier
