// verifier/races.h (P2009): the known-bad schedules of pipelines/races are caught at the right
// lines under every policy where the race happens, each finding naming both accesses; no
// schedule of pipelines/ and sim/examples/ whose protocol rules are clean gets a P2009 finding,
// under the eager, lazy, round-robin and random policies.
#include "verifier/races.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "sim/engine/engine.h"
#include "sim/ir/parser.h"
#include "verifier/explore.h"
#include "verifier/rules.h"

namespace parity::verifier {
namespace {

using model::Code;

struct Run {
  ir::Program program;
  std::unique_ptr<engine::Engine> engine;
  std::vector<Finding> races;
  std::vector<Finding> rules;  // CheckRules without the P2009 it merges in
};

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Runs `path` with its default params; null when it does not parse or bind (needs -D values).
std::unique_ptr<Run> RunFile(const std::string& path, engine::Policy policy, uint64_t seed) {
  auto program = ir::ParseProgram(ReadFile(path), path);
  if (!program.ok()) return nullptr;
  auto run = std::make_unique<Run>();
  run->program = std::move(program).value();
  auto params = ir::BindParams(run->program, {});
  if (!params.ok()) return nullptr;
  engine::EngineOptions options;
  options.policy = policy;
  options.seed = seed;
  auto engine = engine::Engine::Create(run->program, *params, options);
  if (!engine.ok()) return nullptr;
  run->engine = std::make_unique<engine::Engine>(std::move(engine).value());
  run->engine->Run();
  run->races = CheckRaces(run->program, *run->engine, run->engine->trace());
  for (Finding& f : CheckRules(run->program, *run->engine, run->engine->trace())) {
    if (f.code() != Code::kDataRace) run->rules.push_back(std::move(f));
  }
  return run;
}

std::string Dump(const std::vector<Finding>& findings) {
  std::string s;
  for (const Finding& f : findings) {
    s += std::string(model::CodeId(f.code())) + " " + f.message + " @ " + f.where.ToString() +
         "\n";
  }
  return s;
}

// The line of `file` that starts (after indentation) with `statement`; 0 if none.
int LineOf(const std::string& file, const std::string& statement) {
  std::istringstream in(ReadFile(file));
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    const size_t first = line.find_first_not_of(' ');
    if (first != std::string::npos && line.compare(first, statement.size(), statement) == 0) {
      return n;
    }
  }
  return 0;
}

struct Policy {
  engine::Policy policy;
  uint64_t seed;
  const char* name;
};
const Policy kPolicies[] = {
    {engine::Policy::kEager, 0, "eager"},        {engine::Policy::kLazy, 0, "lazy"},
    {engine::Policy::kRoundRobin, 0, "round-robin"}, {engine::Policy::kRandom, 1, "random 1"},
    {engine::Policy::kRandom, 2, "random 2"},    {engine::Policy::kRandom, 3, "random 3"},
    {engine::Policy::kRandom, 4, "random 4"},    {engine::Policy::kRandom, 5, "random 5"},
};

// The P2009 findings on `buffer` whose later access is at `line` and whose message names the
// other access at `other_line`.
size_t Count(const Run& run, const std::string& file, const std::string& buffer, int line,
             int other_line) {
  size_t n = 0;
  for (const Finding& f : run.races) {
    if (f.code() != Code::kDataRace || !f.object_is_buffer) continue;
    if (run.program.buffers[f.object].name != buffer || f.where.line != line) continue;
    if (f.message.find(file + ":" + std::to_string(other_line) + ":") == std::string::npos) {
      continue;
    }
    ++n;
  }
  return n;
}

struct Case {
  const char* file;
  const char* later;    // the statement of the later access (where the finding points)
  const char* earlier;  // the statement of the earlier access, named in the message
};

// Runs `source` (a schedule's text) with its defaults under `policy`; null when it does not
// parse, bind or create.
std::unique_ptr<Run> RunSource(const std::string& source, engine::Policy policy) {
  auto program = ir::ParseProgram(source, "scoped.pipe");
  if (!program.ok()) return nullptr;
  auto run = std::make_unique<Run>();
  run->program = std::move(program).value();
  auto params = ir::BindParams(run->program, {});
  if (!params.ok()) return nullptr;
  engine::EngineOptions options;
  options.policy = policy;
  auto engine = engine::Engine::Create(run->program, *params, options);
  if (!engine.ok()) return nullptr;
  run->engine = std::make_unique<engine::Engine>(std::move(engine).value());
  run->engine->Run();
  run->races = CheckRaces(run->program, *run->engine, run->engine->trace());
  for (Finding& f : CheckRules(run->program, *run->engine, run->engine->trace())) {
    run->rules.push_back(std::move(f));  // P2009 / P2013 included: what CheckRules reports
  }
  return run;
}

std::string Replace(std::string s, const std::string& from, const std::string& to) {
  const size_t at = s.find(from);
  if (at != std::string::npos) s.replace(at, from.size(), to);
  return s;
}

size_t CountCode(const std::vector<Finding>& findings, Code code) {
  size_t n = 0;
  for (const Finding& f : findings) n += f.code() == code ? 1 : 0;
  return n;
}

// The scope and semantics edges of verifier/happens_before.h, seen through both CheckRaces and
// CheckRules (which merges the races in): the DSMEM reduction with its .release.cluster arrive is
// clean; the default .cta release is P2013; a .relaxed arrive orders nothing (P2009) unless a
// fence.acq_rel.cluster before it makes a release pattern of it.
TEST(RacesTest, ScopeAndSemanticsEdgesOfTheSharedHappensBefore) {
  const std::string good = ReadFile("pipelines/dsmem_reduction/reduce.pipe");
  const std::string arrive = "  arrive.release.cluster ready[0]";
  ASSERT_NE(good.find(arrive), std::string::npos);
  struct Variant {
    const char* name;
    std::string source;
    Code expected;  // kDataRace or kReleaseScopeNarrow; the good schedule: none
    bool clean;
  };
  const Variant variants[] = {
      {"release.cluster", good, Code::kDataRace, true},
      {"default .cta", Replace(good, arrive, "  arrive ready[0]"), Code::kReleaseScopeNarrow,
       false},
      {"relaxed.cluster", Replace(good, arrive, "  arrive.relaxed.cluster ready[0]"),
       Code::kDataRace, false},
      {"fence + relaxed.cluster",
       Replace(good, arrive, "  fence.acq_rel.cluster\n  arrive.relaxed.cluster ready[0]"),
       Code::kDataRace, true},
  };
  for (const Variant& v : variants) {
    for (engine::Policy policy : {engine::Policy::kEager, engine::Policy::kLazy,
                                  engine::Policy::kRoundRobin}) {
      auto run = RunSource(v.source, policy);
      ASSERT_NE(run, nullptr) << v.name;
      ASSERT_EQ(run->engine->outcome(), engine::Outcome::kCompleted) << v.name;
      if (v.clean) {
        EXPECT_TRUE(run->races.empty()) << v.name << "\n" << Dump(run->races);
        EXPECT_TRUE(run->rules.empty()) << v.name << "\n" << Dump(run->rules);
        continue;
      }
      const Code other =
          v.expected == Code::kDataRace ? Code::kReleaseScopeNarrow : Code::kDataRace;
      EXPECT_GT(CountCode(run->races, v.expected), 0u) << v.name << "\n" << Dump(run->races);
      EXPECT_EQ(CountCode(run->races, other), 0u) << v.name << "\n" << Dump(run->races);
      EXPECT_GT(CountCode(run->rules, v.expected), 0u) << v.name << "\n" << Dump(run->rules);
    }
  }
}

TEST(RacesTest, KnownBadSchedulesAreCaughtAtTheirLines) {
  const Case cases[] = {
      // the issuer reads its own TMA load's tile before waiting
      {"pipelines/races/bad_use_before_wait.pipe", "use tile[0]", "tma.load"},
      // a TMA load overwrites the source of the same agent's TMA store (no bulk.wait read):
      // async write against async read
      {"pipelines/races/bad_load_over_store.pipe", "tma.load", "tma.store"},
  };
  for (const Case& c : cases) {
    const int later = LineOf(c.file, c.later), earlier = LineOf(c.file, c.earlier);
    ASSERT_GT(later, 0) << c.file;
    ASSERT_GT(earlier, 0) << c.file;
    for (const Policy& p : kPolicies) {
      auto run = RunFile(c.file, p.policy, p.seed);
      ASSERT_NE(run, nullptr) << c.file;
      EXPECT_EQ(Count(*run, c.file, "tile", later, earlier), 1u)
          << c.file << " " << p.name << "\n" << Dump(run->races);
    }
  }
}

TEST(RacesTest, GenericWriteAndTmaWriteUnorderedEitherOrder) {
  const std::string file = "pipelines/races/bad_write_vs_tma.pipe";
  const int load = LineOf(file, "tma.load"), write = LineOf(file, "write tile[0]");
  const int use = LineOf(file, "use tile[0]");
  for (const Policy& p : kPolicies) {
    auto run = RunFile(file, p.policy, p.seed);
    ASSERT_NE(run, nullptr);
    // The TMA load and the clearing write, in whichever order they started.
    EXPECT_EQ(Count(*run, file, "tile", load, write) + Count(*run, file, "tile", write, load), 1u)
        << p.name << "\n" << Dump(run->races);
    // ... and the producer's read against the clearing write.
    EXPECT_EQ(Count(*run, file, "tile", use, write) + Count(*run, file, "tile", write, use), 1u)
        << p.name << "\n" << Dump(run->races);
  }
}

TEST(RacesTest, ParityWaitPassingOnAFreshBarrierOrdersNothing) {
  const std::string file = "pipelines/races/bad_fresh_barrier_parity.pipe";
  const int load = LineOf(file, "tma.load"), use = LineOf(file, "use tile[0]");
  size_t completed = 0;
  for (const Policy& p : kPolicies) {
    auto run = RunFile(file, p.policy, p.seed);
    ASSERT_NE(run, nullptr);
    if (run->engine->outcome() != engine::Outcome::kCompleted) continue;  // the wait hung
    ++completed;
    // The consumer's read and the TMA load, in either start order.
    EXPECT_EQ(Count(*run, file, "tile", use, load) + Count(*run, file, "tile", load, use), 1u)
        << p.name << "\n" << Dump(run->races);
  }
  EXPECT_GT(completed, 0u) << "no policy lets the consumer pass its wait";
}

TEST(RacesTest, TheWaitThatObservesThePhaseOrdersTheRead) {
  // The same as bad_use_before_wait with the read after the wait: no race.
  const std::string file = "pipelines/single_tma_load/count1.pipe";
  for (const Policy& p : kPolicies) {
    auto run = RunFile(file, p.policy, p.seed);
    ASSERT_NE(run, nullptr);
    EXPECT_TRUE(run->races.empty()) << p.name << "\n" << Dump(run->races);
  }
}

// Bundled schedules that are racy on purpose although no other rule names them.
bool KnownRacy(const std::string& path) {
  // A producer that rewrites a one-slot mailbox with no empty barrier (a documented bug).
  return path == "sim/examples/explore/phase_overrun.pipe";
}

TEST(RacesTest, NoFindingOnCleanBundledSchedules) {
  size_t checked = 0, racy = 0;
  for (const char* root : {"pipelines", "sim/examples"}) {
    for (const auto& e : std::filesystem::recursive_directory_iterator(root)) {
      if (e.path().extension() != ".pipe") continue;
      const std::string path = e.path().generic_string();
      if (e.path().filename().string().rfind("bad_", 0) == 0) continue;
      for (const Policy& p : kPolicies) {
        auto run = RunFile(path, p.policy, p.seed);
        if (run == nullptr) break;
        const engine::Outcome outcome = run->engine->outcome();
        // Clean today: the run completes and no protocol rule finds anything.
        if (outcome != engine::Outcome::kCompleted || !run->rules.empty()) continue;
        if (KnownRacy(path)) {
          racy += run->races.empty() ? 0 : 1;
          continue;
        }
        ++checked;
        EXPECT_TRUE(run->races.empty()) << path << " " << p.name << "\n" << Dump(run->races);
      }
    }
  }
  EXPECT_GT(checked, 100u);
  EXPECT_GT(racy, 0u) << "phase_overrun is no longer racy: drop it from KnownRacy";
}

// A copy's destination offset written as an expression of params and builtins (no variable) is
// evaluated per issuing agent, so its bytes are exact and meet the read they overlap: written as
// `tile[0] + 0 * TILE_BYTES` or `+ cta_rank * 0`, the issuer's early read is still P2009.
TEST(RacesTest, CopyOffsetsOfParamsAndBuiltinsAreExactRanges) {
  const std::string bad = ReadFile("pipelines/races/bad_use_before_wait.pipe");
  const std::string load = "-> tile[0] bar full[0]";
  ASSERT_NE(bad.find(load), std::string::npos);
  for (const char* offset : {"-> tile[0] + 0 * TILE_BYTES bar full[0]",
                             "-> tile[0] + cta_rank * TILE_BYTES bar full[0]"}) {
    for (engine::Policy policy : {engine::Policy::kEager, engine::Policy::kLazy}) {
      auto run = RunSource(Replace(bad, load, offset), policy);
      ASSERT_NE(run, nullptr) << offset;
      EXPECT_GT(CountCode(run->races, Code::kDataRace), 0u) << offset << "\n"
                                                             << Dump(run->races);
    }
  }
}

// A ring whose stages are consecutive tiles of one slot, at `tile[0] + (k % STAGES) * TILE`:
// each dynamic access has the bytes of its iteration. The consumer that reads stage `k & 1`
// of a three-stage ring races with the load of tile 3 into stage 0 on iteration 2 only (found
// under every policy, naming both statements and the bytes of stage 0); the same file at two
// stages is a correct ring: no race and no rule finding under any policy, and explore (reduced
// and brute force) says VERIFIED. Without the engine's places (a trace that is not its own
// run) the ranges are whole slots: a finding too many, none missed.
TEST(RacesTest, LoopIndexedStageOffsets) {
  const std::string file = "pipelines/races/bad_ring_stage_offset.pipe";
  const std::string text = ReadFile(file);
  const int use_line = LineOf(file, "use tile[0]");
  const int load_line = LineOf(file, "tma.load");
  ASSERT_GT(use_line, 0);
  ASSERT_GT(load_line, 0);
  const std::string two = Replace(text, "param STAGES = 3", "param STAGES = 2");
  ASSERT_NE(two, text);
  for (engine::Policy policy : {engine::Policy::kEager, engine::Policy::kLazy,
                                engine::Policy::kRoundRobin, engine::Policy::kRandom}) {
    auto bad = RunSource(text, policy);
    ASSERT_NE(bad, nullptr);
    ASSERT_EQ(bad->engine->outcome(), engine::Outcome::kCompleted);
    bool pair = false;
    for (const Finding& f : bad->races) {
      const std::string a = ":" + std::to_string(use_line) + ":";
      const std::string b = ":" + std::to_string(load_line) + ":";
      if (f.code() == Code::kDataRace && f.message.find(a) != std::string::npos &&
          f.message.find(b) != std::string::npos &&
          f.message.find("(bytes 0..4095)") != std::string::npos) {
        pair = true;
      }
    }
    EXPECT_TRUE(pair) << Dump(bad->races);
    auto good = RunSource(two, policy);
    ASSERT_NE(good, nullptr);
    ASSERT_EQ(good->engine->outcome(), engine::Outcome::kCompleted);
    EXPECT_TRUE(good->races.empty()) << Dump(good->races);
    EXPECT_TRUE(good->rules.empty()) << Dump(good->rules);
  }
  // A trace that is not the engine's own run carries no places: each copy is taken to write its
  // whole slot, so the correct ring is over-reported, never under-reported.
  auto good = RunSource(two, engine::Policy::kEager);
  ASSERT_NE(good, nullptr);
  const std::vector<trace::TraceEvent> copy = good->engine->trace();
  EXPECT_GT(CountCode(CheckRaces(good->program, *good->engine, copy), Code::kDataRace), 0u);
  auto program = ir::ParseProgram(two, "two_stages.pipe");
  ASSERT_TRUE(program.ok());
  auto params = ir::BindParams(*program, {});
  ASSERT_TRUE(params.ok());
  for (bool reduction : {true, false}) {
    ExploreOptions o;
    o.reduction = reduction;
    EXPECT_EQ(Explore(*program, *params, o).verdict, ExploreVerdict::kVerified);
  }
}

// RaceScan::kChains (binary searches along each agent's accesses) reports exactly what the
// quadratic reference RaceScan::kAllPairs does, finding for finding and message for message, on
// every bundled schedule (known-bad ones included) under several policies.
TEST(RacesTest, ChainScanEqualsAllPairsScan) {
  size_t runs = 0, findings = 0;
  for (const char* root : {"pipelines", "sim/examples"}) {
    for (const auto& e : std::filesystem::recursive_directory_iterator(root)) {
      if (e.path().extension() != ".pipe") continue;
      const std::string path = e.path().generic_string();
      for (const Policy& p : kPolicies) {
        auto run = RunFile(path, p.policy, p.seed);
        if (run == nullptr) break;
        const auto& trace = run->engine->trace();
        const std::vector<Finding> chains =
            CheckRaces(run->program, *run->engine, trace, RaceScan::kChains);
        const std::vector<Finding> all =
            CheckRaces(run->program, *run->engine, trace, RaceScan::kAllPairs);
        ++runs;
        findings += all.size();
        ASSERT_EQ(chains.size(), all.size()) << path << " " << p.name << "\nchains:\n"
                                             << Dump(chains) << "all pairs:\n" << Dump(all);
        for (size_t i = 0; i < all.size(); ++i) {
          EXPECT_EQ(chains[i].code(), all[i].code()) << path << " " << p.name;
          EXPECT_EQ(chains[i].message, all[i].message) << path << " " << p.name;
          EXPECT_EQ(chains[i].pc, all[i].pc) << path << " " << p.name;
          EXPECT_EQ(chains[i].other_pc, all[i].other_pc) << path << " " << p.name;
          EXPECT_EQ(chains[i].event, all[i].event) << path << " " << p.name;
        }
      }
    }
  }
  EXPECT_GT(runs, 200u);
  EXPECT_GT(findings, 20u) << "the comparison must see races";
}

// docs/levels.md, rule L1: a .cta-scoped handoff across CTAs after a write that a TMA store
// read out (bulk.wait 0 read before the release: FA3's barrier_O, humming PR #56) is a WARNING;
// the same handoff without that completed read, or with a read of part of the write, stays an
// error; a .cluster handoff is clean.
TEST(RacesTest, ScopeNarrowWriteReadOutBeforeTheReleaseIsAWarning) {
  const std::string file = "pipelines/tma_store/epilogue_reuse_cta_scope.pipe";
  const std::string text = ReadFile(file);
  auto run_text = [](const std::string& t, engine::Policy policy) {
    auto program = ir::ParseProgram(t, "variant.pipe");
    EXPECT_TRUE(program.ok()) << program.status().ToString();
    auto run = std::make_unique<verifier::Run>();
    run->program = std::move(program).value();
    auto params = ir::BindParams(run->program, {});
    engine::EngineOptions options;
    options.policy = policy;
    auto engine = engine::Engine::Create(run->program, *params, options);
    EXPECT_TRUE(engine.ok());
    run->engine = std::make_unique<engine::Engine>(std::move(engine).value());
    run->engine->Run();
    run->races = CheckRaces(run->program, *run->engine, run->engine->trace());
    return run;
  };
  for (engine::Policy policy : {engine::Policy::kEager, engine::Policy::kLazy,
                                engine::Policy::kRoundRobin}) {
    auto run = run_text(text, policy);
    ASSERT_FALSE(run->races.empty()) << engine::PolicyName(policy);
    for (const Finding& f : run->races) {
      EXPECT_EQ(f.code(), Code::kReleaseScopeNarrow) << Dump(run->races);
      EXPECT_TRUE(f.strict_only) << Dump(run->races);
      EXPECT_EQ(f.level(), model::Severity::kWarning);
      EXPECT_EQ(f.level(/*strict=*/true), model::Severity::kError);
    }
    EXPECT_FALSE(HasErrors(run->races));
    EXPECT_TRUE(HasErrors(run->races, /*strict=*/true));
  }
  auto replace = [&text](const std::string& from, const std::string& to) {
    std::string t = text;
    const size_t at = t.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    if (at != std::string::npos) t.replace(at, from.size(), to);
    return t;
  };
  // .release.cluster / .acquire.cluster: ordered by PTX, nothing to report.
  std::string cluster =
      replace("  arrive epi_free[0] mask 3 ", "  arrive.release.cluster epi_free[0] mask 3 ");
  cluster.replace(cluster.find("  wait epi_free[0] parity 0"), 27,
                  "  wait.acquire.cluster epi_free[0] parity 0");
  EXPECT_TRUE(run_text(cluster, engine::Policy::kEager)->races.empty());
  // The release before tma_store_wait<0>: the read-out is not complete, the pair is an error.
  const auto early = run_text(
      replace("  bulk.wait 0 read                # tma_store_wait<0>: the source has been read\n"
              "  arrive epi_free[0] mask 3 ",
              "  arrive epi_free[0] mask 3\n  bulk.wait 0 read\n  #"),
      engine::Policy::kEager);
  bool narrow_error = false;
  for (const Finding& f : early->races) {
    narrow_error |= f.code() == Code::kReleaseScopeNarrow && !f.strict_only;
  }
  EXPECT_TRUE(narrow_error) << Dump(early->races);
  // The store reads half of the written bytes: the other half is not read out, an error.
  const auto half = run_text(replace("box [64, 32]", "box [64, 16]"), engine::Policy::kEager);
  ASSERT_FALSE(half->races.empty());
  for (const Finding& f : half->races) EXPECT_FALSE(f.strict_only) << Dump(half->races);
}

// A warning never hides an error: explore goes on past a path whose only findings are
// warnings, reports them with VERIFIED, and finds an error that only other paths have.
TEST(RacesTest, ExploreReportsWarningsAndAWarningNeverHidesAnError) {
  const std::string file = "pipelines/tma_store/epilogue_reuse_cta_scope.pipe";
  auto parse = [](const std::string& t) {
    auto p = ir::ParseProgram(t, "explore.pipe");
    EXPECT_TRUE(p.ok()) << p.status().ToString();
    return std::move(p).value();
  };
  const ir::Program clean = parse(ReadFile(file));
  auto params = ir::BindParams(clean, {});
  ASSERT_TRUE(params.ok());
  ExploreOptions o;
  o.shorten_budget_s = 0;
  ExploreResult r = Explore(clean, *params, o);
  EXPECT_EQ(r.verdict, ExploreVerdict::kVerified) << ExploreVerdictName(r.verdict);
  ASSERT_EQ(r.warnings.size(), 1u);
  EXPECT_EQ(r.warnings[0].code(), Code::kReleaseScopeNarrow);
  o.strict = true;
  r = Explore(clean, *params, o);
  EXPECT_EQ(r.verdict, ExploreVerdict::kRuleViolation) << ExploreVerdictName(r.verdict);
  // The warning on every path, and tests/verifier/testdata/hb_path_dependent.pipe's race on
  // some paths only (its reader's parity wait may observe phase 0 or phase 2).
  std::string both = ReadFile(file);
  std::string dependent = ReadFile("tests/verifier/testdata/hb_path_dependent.pipe");
  dependent = dependent.substr(dependent.find("buffer data"));
  dependent.replace(dependent.find("fence.mbarrier_init\n"), 20, "");
  both += "\n" + dependent;
  const ir::Program mixed = parse(both);
  auto mixed_params = ir::BindParams(mixed, {});
  ASSERT_TRUE(mixed_params.ok());
  o.strict = false;
  r = Explore(mixed, *mixed_params, o);
  EXPECT_EQ(r.verdict, ExploreVerdict::kRuleViolation) << ExploreVerdictName(r.verdict);
  bool race = false;
  for (const Finding& f : r.findings) race |= f.code() == Code::kDataRace;
  EXPECT_TRUE(race) << Dump(r.findings);
}

}  // namespace
}  // namespace parity::verifier
