// verifier/report/narrate.h: every event kind has its own readable line (names from the schedule, no
// raw record dump), checked on one synthetic event per kind and on the bundled pipelines that
// use cp.async groups, named barriers, bulk and TMA stores and st.async.
#include "verifier/report/narrate.h"

#include <gtest/gtest.h>

#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "sim/engine/engine.h"
#include "sim/ir/parser.h"
#include "sim/trace/trace_file.h"

namespace parity::report {
namespace {

using trace::EventKind;
using trace::TraceEvent;

struct Loaded {
  ir::Program program;
  std::unique_ptr<engine::Engine> engine;
};

std::unique_ptr<Loaded> Load(const std::string& text, const std::string& file, bool run) {
  auto program = ir::ParseProgram(text, file);
  EXPECT_TRUE(program.ok()) << program.status().ToString();
  if (!program.ok()) return nullptr;
  auto out = std::make_unique<Loaded>();
  out->program = std::move(program).value();
  auto params = ir::BindParams(out->program, {});
  EXPECT_TRUE(params.ok()) << params.status().ToString();
  if (!params.ok()) return nullptr;
  auto engine = engine::Engine::Create(out->program, *params, engine::EngineOptions{});
  EXPECT_TRUE(engine.ok()) << engine.status().ToString();
  if (!engine.ok()) return nullptr;
  out->engine = std::make_unique<engine::Engine>(std::move(engine).value());
  if (run) {
    const engine::RunResult r = out->engine->Run();
    EXPECT_EQ(r.outcome, engine::Outcome::kCompleted) << file;
  }
  return out;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// A line that fell back to the raw record (trace::FormatEvent) contains the record's dump.
bool Raw(const std::string& line, const TraceEvent& e) {
  return line.find(trace::FormatEvent(e)) != std::string::npos ||
         line.find(" obj=") != std::string::npos;
}

constexpr char kSmall[] = R"(schedule small
buffer A[2] bytes 1024
barrier full[2] count 1
tensormap tm dtype f16 dims [64, 64] box [64, 8] swizzle none
role producer threads 32 {
  init full[0]
}
)";

TEST(NarrateTest, EveryEventKindHasItsOwnLine) {
  auto s = Load(kSmall, "small.pipe", false);
  ASSERT_NE(s, nullptr);
  for (uint32_t k = trace::kFirstEventKind; k <= trace::kLastEventKind; ++k) {
    TraceEvent e{};
    e.kind = static_cast<uint8_t>(k);
    e.time = 7;
    e.object = 0;
    e.index = 1;
    e.value = 1024;
    e.value2 = 3;
    const std::string line = EventLine(s->program, *s->engine, e);
    EXPECT_FALSE(Raw(line, e)) << "kind " << trace::EventKindName(e.kind) << ": " << line;
    EXPECT_EQ(line.rfind("CTA 0 producer[0]: ", 0), 0u) << line;
  }
}

// The events of a real run, as `check`, `explain` and explore's counterexamples print them.
std::vector<std::string> Lines(const Loaded& s) {
  std::vector<std::string> out;
  for (const TraceEvent& e : s.engine->trace()) {
    out.push_back(EventLine(s.program, *s.engine, e));
    EXPECT_FALSE(Raw(out.back(), e)) << out.back();
  }
  return out;
}

bool Has(const std::vector<std::string>& lines, const std::string& text) {
  for (const std::string& l : lines) {
    if (l == text) return true;
  }
  return false;
}

TEST(NarrateTest, CpAsyncGroupsAndNamedBarriers) {
  const std::string file = "pipelines/ampere_multistage/sgemm_sm80.pipe";
  auto s = Load(ReadFile(file), file, true);
  ASSERT_NE(s, nullptr);
  const std::vector<std::string> lines = Lines(*s);
  EXPECT_TRUE(Has(lines, "CTA 0 mma[3]: cp.async -> sA[0] (1024 bytes)"));
  EXPECT_TRUE(Has(lines, "async: cp.async bytes land in sA[0] (1024 bytes)"));
  EXPECT_TRUE(Has(lines, "CTA 0 mma[3]: cp.async.commit_group (this agent's cp.async group 1)"));
  EXPECT_TRUE(Has(lines, "CTA 0 mma[3]: cp.async.wait_group 1 (waits until at most 1 of its "
                         "cp.async groups are pending)"));
  EXPECT_TRUE(Has(lines, "CTA 0 mma[3]: cp.async.wait_group 1 returns"));
  EXPECT_TRUE(Has(lines, "CTA 0 mma[3]: bar.sync 0, 128 threads (32 of 128 arrived; blocks until "
                         "all have)"));
  EXPECT_TRUE(Has(lines, "CTA 0 mma[0]: bar.sync 0, 128 threads (all arrived: the barrier "
                         "completes)"));
  EXPECT_TRUE(Has(lines, "CTA 0 mma[0]: bar.sync 0 returns"));
}

// A named barrier with a name: events and the named-barrier rules say the name, not the id.
TEST(NarrateTest, NamedBarriersByName) {
  constexpr char kNamed[] = R"(schedule named
named_barrier epi = 2
role a threads 64 {
  bar.arrive epi, 128
}
role b threads 64 {
  bar.sync epi, 256
}
)";
  auto s = Load(kNamed, "named.pipe", false);
  ASSERT_NE(s, nullptr);
  const engine::RunResult r = s->engine->Run();
  ASSERT_TRUE(r.violation.has_value());
  EXPECT_EQ(r.violation->violation.code, model::Code::kNamedBarrierCountMismatch);
  // Whichever arrives first sets the instance's count; the other one is the violation.
  const std::string text = ViolationText(s->program, *r.violation);
  EXPECT_EQ(text.rfind("named barrier epi used with thread count ", 0), 0u) << text;
  const std::vector<std::string> lines = Lines(*s);
  EXPECT_TRUE(Has(lines, "CTA 0 a[0]: bar.arrive epi, 128 threads (64 of 128 arrived)") ||
              Has(lines, "CTA 0 b[0]: bar.sync epi, 256 threads (64 of 256 arrived; blocks "
                         "until all have)"));
}

TEST(NarrateTest, BulkGroupsAndTmaStores) {
  const std::string file = "pipelines/tma_store/no_tail_wait.pipe";
  auto s = Load(ReadFile(file), file, true);
  ASSERT_NE(s, nullptr);
  const std::vector<std::string> lines = Lines(*s);
  EXPECT_TRUE(Has(lines, "CTA 0 epilogue[0]: cp.async.bulk.wait_group.read 1 (waits until at "
                         "most 1 of its bulk groups are still reading their source)"));
  EXPECT_TRUE(Has(lines, "async: TMA store has read its source out[0] (4096 bytes): the buffer "
                         "may be written again"));
  EXPECT_TRUE(Has(lines, "async: TMA store's 4096 bytes from out[0] are written to global memory"));
  EXPECT_TRUE(Has(lines, "CTA 0 epilogue[0]: cp.async.bulk.commit_group (this agent's bulk "
                         "group 0)"));
}

TEST(NarrateTest, StAsyncAndCpAsyncArrive) {
  const std::string ring = "pipelines/st_async_ring/ring.pipe";
  auto r = Load(ReadFile(ring), ring, true);
  ASSERT_NE(r, nullptr);
  EXPECT_TRUE(Has(Lines(*r), "CTA 7 producer[0]: st.async 16 bytes, complete_tx on filled[0] of "
                             "CTA 0 when they land"));
  const std::string arrive = "pipelines/cuda_pipeline/cp_async_arrive_on.pipe";
  auto a = Load(ReadFile(arrive), arrive, true);
  ASSERT_NE(a, nullptr);
  EXPECT_TRUE(Has(Lines(*a), "CTA 0 producer[0]: cp.async.mbarrier.arrive filled[0] of CTA 0 (the "
                             "arrive happens once this agent's earlier cp.async copies have "
                             "landed)"));
  // explain's teaching note says what .noinc changes.
  bool noted = false;
  for (const TraceEvent& e : a->engine->trace()) {
    if (e.kind != static_cast<uint8_t>(EventKind::kCpAsyncArrive)) continue;
    const std::string text = Narrator(a->program, *a->engine).Next(e).Text();
    EXPECT_NE(text.find(e.value ? ".noinc: the arrive counts" : "without .noinc"),
              std::string::npos)
        << text;
    noted = true;
  }
  EXPECT_TRUE(noted);
}

}  // namespace
}  // namespace parity::report
