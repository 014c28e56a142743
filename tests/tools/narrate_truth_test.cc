// verifier/report/narrate.h, `parity explain`: every state a narration states is the engine's state at
// that event. Walks EVERY bundled schedule (pipelines/**, sim/examples/**, litmus/*.pipe) step by
// step with the engine, narrating each step's events as they are produced, and holds each
// narration's claim (BarrierClaim, WaitVerdict, completes_phase) against:
//   - the engine's barrier state after the step (the last claim about each barrier in a step),
//   - the state the event itself records (pending / tx-count / phase bit after it),
//   - what the engine did next within the step (a wait that "returns at once" ends in the same
//     step; an arrive that "completes phase N" is followed by that phase's completion; a
//     test_wait's result),
// and checks that the text says what the data says and that each concept's rule is stated once.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "sim/engine/engine.h"
#include "sim/ir/parser.h"
#include "verifier/report/narrate.h"

namespace parity::report {
namespace {

using trace::EventKind;
using trace::TraceEvent;

constexpr uint8_t K(EventKind k) { return static_cast<uint8_t>(k); }

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<std::string> BundledSchedules() {
  std::vector<std::string> out;
  for (const char* dir : {"pipelines", "sim/examples"}) {
    for (const auto& f : std::filesystem::recursive_directory_iterator(dir)) {
      if (f.path().extension() == ".pipe") out.push_back(f.path().string());
    }
  }
  for (const auto& f : std::filesystem::directory_iterator("litmus")) {
    if (f.path().extension() == ".pipe") out.push_back(f.path().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

// "phase 3 (parity 1)" and the counts, as StateText writes them.
std::string StateWords(const model::MbarrierState& s) {
  return "phase " + std::to_string(s.phase) + " (parity " + std::to_string(s.parity()) + ")";
}

bool RecordsStateAfter(uint8_t kind) {
  return kind == K(EventKind::kArrive) || kind == K(EventKind::kArriveExpectTx) ||
         kind == K(EventKind::kExpectTx) || kind == K(EventKind::kCompleteTx) ||
         kind == K(EventKind::kTmaDeliver) || kind == K(EventKind::kBulkComplete) ||
         kind == K(EventKind::kPhaseComplete) || kind == K(EventKind::kWaitBegin) ||
         kind == K(EventKind::kWaitEnd) || kind == K(EventKind::kTestWait);
}

struct Tally {
  size_t schedules = 0, events = 0, claims = 0, at_once = 0, blocks = 0, released = 0,
         test_waits = 0, completions = 0;
};

// Runs `program` step by step (choice 0 each step, or a seeded random choice) and checks every
// narration against the engine. Returns false when the engine cannot be built.
bool CheckRun(const std::string& file, const ir::Program& program,
              const std::vector<int64_t>& params, uint64_t seed, Tally& tally) {
  auto created = engine::Engine::Create(program, params, engine::EngineOptions{});
  if (!created.ok()) return false;
  engine::Engine eng = std::move(created).value();
  std::map<std::pair<uint32_t, uint32_t>, uint32_t> cta_global;
  for (uint32_t a = 0; a < eng.num_agents(); ++a) {
    const engine::AgentInfo& info = eng.agent_info(a);
    cta_global[{info.cluster, info.cta}] = info.cta_global;
  }
  Narrator narrator(program, eng);
  std::mt19937_64 rng(seed);
  std::vector<engine::Choice> choices;
  std::set<std::string> concepts;
  for (size_t step = 0; step < 20000 && eng.outcome() == engine::Outcome::kRunning; ++step) {
    eng.Choices(&choices);
    if (choices.empty()) break;
    const size_t first = eng.trace().size();
    eng.Step(choices[seed == 0 ? 0 : rng() % choices.size()]);
    const std::vector<TraceEvent>& t = eng.trace();
    std::map<std::tuple<uint16_t, uint8_t, uint16_t, uint16_t>, BarrierClaim> last;
    for (size_t i = first; i < t.size(); ++i) {
      const TraceEvent& e = t[i];
      const Narration n = narrator.Next(e);
      const std::string where = file + " seed " + std::to_string(seed) + " event " +
                                std::to_string(i + 1) + ": " + n.Text();
      ++tally.events;
      for (const Narration::Rule& rule : n.rules) {
        EXPECT_TRUE(concepts.insert(rule.concept_name).second) << "rule stated twice: " << where;
        EXPECT_NE(n.Text().find("rule (" + rule.concept_name + "): " + rule.text),
                  std::string::npos)
            << where;
      }
      // A wait or test_wait is never narrated before the parity rule has been stated.
      if (e.kind == K(EventKind::kWaitBegin) || e.kind == K(EventKind::kTestWait)) {
        EXPECT_TRUE(concepts.count("parity waits")) << where;
      }
      const TraceEvent* next = i + 1 < t.size() ? &t[i + 1] : nullptr;
      // A wait begin's verdict: the engine ends the wait in the same step exactly when it
      // returned at once.
      if (e.kind == K(EventKind::kWaitBegin)) {
        const bool ends_now = next != nullptr && next->kind == K(EventKind::kWaitEnd) &&
                              next->agent == e.agent && next->cta == e.cta;
        EXPECT_EQ(n.wait, ends_now ? WaitVerdict::kReturnsAtOnce : WaitVerdict::kBlocks) << where;
        std::string text;  // the sentences, without the general rule (which names both cases)
        for (const std::string& x : n.sentences) text += x + "\n";
        EXPECT_NE(text.find(ends_now ? "returns at once" : "blocks:"), std::string::npos)
            << where;
        EXPECT_EQ(text.find(ends_now ? "blocks:" : "returns at once"), std::string::npos)
            << where;
        ends_now ? ++tally.at_once : ++tally.blocks;
      }
      if (e.kind == K(EventKind::kWaitEnd)) {
        EXPECT_TRUE(n.wait == WaitVerdict::kReturnsAtOnce || n.wait == WaitVerdict::kReleased)
            << where;
        // Released only when it began in an earlier step.
        const bool same_step = i > first && t[i - 1].kind == K(EventKind::kWaitBegin) &&
                               t[i - 1].agent == e.agent && t[i - 1].cta == e.cta;
        EXPECT_EQ(n.wait, same_step ? WaitVerdict::kReturnsAtOnce : WaitVerdict::kReleased)
            << where;
        if (!same_step) ++tally.released;
      }
      if (e.kind == K(EventKind::kTestWait)) {
        EXPECT_EQ(n.wait, e.value ? WaitVerdict::kTestTrue : WaitVerdict::kTestFalse) << where;
        EXPECT_NE(n.Text().find(e.value ? "= 1 because" : "= 0 because"), std::string::npos)
            << where;
        ++tally.test_waits;
      }
      // An event that completes a phase is followed by that phase's completion; no other is.
      const bool completion_next = next != nullptr &&
                                   next->kind == K(EventKind::kPhaseComplete) &&
                                   next->target_cta == e.target_cta &&
                                   next->object == e.object && next->index == e.index;
      if (e.kind != K(EventKind::kPhaseComplete) && e.kind != K(EventKind::kViolation)) {
        EXPECT_EQ(n.completes_phase, completion_next) << where;
        if (n.completes_phase) {
          EXPECT_EQ(static_cast<uint32_t>(next->value), n.completed_phase) << where;
          EXPECT_NE(n.Text().find("this completes phase " + std::to_string(n.completed_phase)),
                    std::string::npos)
              << where;
          EXPECT_EQ(n.Text().find("still needs"), std::string::npos) << where;
          ++tally.completions;
        }
      }
      if (!n.claim) continue;
      ++tally.claims;
      const model::MbarrierState& c = n.claim->state;
      EXPECT_EQ(n.claim->cta, e.target_cta) << where;
      // The text states the claimed numbers.
      if (c.life == model::MbarrierLife::kLive) {
        EXPECT_NE(n.Text().find("is now in " + StateWords(c)), std::string::npos) << where;
        EXPECT_NE(n.Text().find(", tx-count " + std::to_string(c.tx_count)), std::string::npos)
            << where;
        if (c.pending_count > 0) {
          EXPECT_NE(n.Text().find(std::to_string(c.pending_count) +
                                  (c.pending_count == 1 ? " arrival of " : " arrivals of ") +
                                  std::to_string(c.expected_count) + " still expected"),
                    std::string::npos)
              << where;
        } else {
          EXPECT_NE(n.Text().find("every arrival is in"), std::string::npos) << where;
        }
      }
      // The state the event records about itself (simulator traces record it).
      if (RecordsStateAfter(e.kind) && e.kind != K(EventKind::kViolation)) {
        EXPECT_EQ(e.phase, c.parity()) << where;
      }
      if (e.kind == K(EventKind::kArrive) || e.kind == K(EventKind::kCpAsyncArrive)) {
        EXPECT_EQ(e.value2, c.pending_count) << where;
      }
      if (e.kind == K(EventKind::kExpectTx) || e.kind == K(EventKind::kCompleteTx) ||
          e.kind == K(EventKind::kTmaDeliver) || e.kind == K(EventKind::kBulkComplete)) {
        EXPECT_EQ(e.value2, c.tx_count) << where;
      }
      if (e.kind == K(EventKind::kPhaseComplete)) {
        EXPECT_EQ(c.phase, static_cast<uint32_t>(e.value) + 1) << where;
      }
      last[{n.claim->cluster, n.claim->cta, n.claim->barrier, n.claim->index}] = *n.claim;
    }
    // The engine's state after the step: the last claim about each barrier is exactly it (phase
    // number, pending, expected, tx-count, life and whether the preceding phase was observed).
    // A step that ended in a violation stops there (the model leaves the state unchanged, the
    // narration too).
    if (eng.outcome() == engine::Outcome::kViolation) break;
    for (const auto& [key, claim] : last) {
      const auto [cluster, cta, barrier, index] = key;
      const model::MbarrierState& truth =
          eng.barrier_state(cta_global.at({cluster, cta}), barrier, index);
      EXPECT_EQ(claim.state, truth)
          << file << " seed " << seed << " step " << step << ": " << program.barriers[barrier].name
          << "[" << index << "] of CTA " << int{cta} << ": narration says phase "
          << claim.state.phase << " pending " << claim.state.pending_count << "/"
          << claim.state.expected_count << " tx " << claim.state.tx_count << ", engine phase "
          << truth.phase << " pending " << truth.pending_count << "/" << truth.expected_count
          << " tx " << truth.tx_count;
    }
  }
  return true;
}

TEST(NarrateTruthTest, EveryBundledScheduleNarrationMatchesTheEngine) {
  const std::vector<std::string> files = BundledSchedules();
  ASSERT_GT(files.size(), 100u);
  Tally tally;
  std::vector<std::string> not_built;
  for (const std::string& file : files) {
    auto program = ir::ParseProgram(ReadFile(file), file);
    ASSERT_TRUE(program.ok()) << program.status().ToString();
    auto params = ir::BindParams(*program, {});
    if (!params.ok()) {
      not_built.push_back(file);
      continue;
    }
    bool built = true;
    for (uint64_t seed : {0, 1, 2}) built = CheckRun(file, *program, *params, seed, tally) && built;
    if (!built) {
      not_built.push_back(file);
      continue;
    }
    ++tally.schedules;
  }
  // Every kind of verdict occurs, so none of the checks above is vacuous.
  EXPECT_GT(tally.schedules, 100u);
  EXPECT_GT(tally.claims, 10000u);
  EXPECT_GT(tally.at_once, 100u);
  EXPECT_GT(tally.blocks, 100u);
  EXPECT_GT(tally.released, 100u);
  EXPECT_GT(tally.test_waits, 10u);
  EXPECT_GT(tally.completions, 1000u);
  EXPECT_LT(not_built.size(), 10u) << not_built.size() << " schedules could not be built";
  std::printf("%zu schedules, %zu events, %zu state claims, waits: %zu at once, %zu blocked, %zu "
              "released; %zu test_waits, %zu completing events; %zu not buildable\n",
              tally.schedules, tally.events, tally.claims, tally.at_once, tally.blocks,
              tally.released, tally.test_waits, tally.completions, not_built.size());
}

// The example of issue 27: pipelines/single_tma_load/count1.pipe. The wait after the phase
// completed returns at once and says why; the completing delivery does not ask for arrivals.
TEST(NarrateTruthTest, Count1WaitOnACompletedPhaseReturnsAtOnce) {
  const std::string file = "pipelines/single_tma_load/count1.pipe";
  auto program = ir::ParseProgram(ReadFile(file), file);
  ASSERT_TRUE(program.ok());
  auto params = ir::BindParams(*program, {});
  ASSERT_TRUE(params.ok());
  auto eng = engine::Engine::Create(*program, *params, engine::EngineOptions{});
  ASSERT_TRUE(eng.ok());
  ASSERT_EQ(eng->Run().outcome, engine::Outcome::kCompleted);
  const std::vector<Narration> n = NarrateRun(*program, *eng, eng->trace());
  ASSERT_EQ(n.size(), 10u);
  EXPECT_EQ(n[4].Text(),
            "   5. async: TMA bytes land: complete_tx full[0] of CTA 0 -8192 bytes\n"
            "      this completes phase 0 of full[0] of CTA 0: no arrival left to come and "
            "tx-count 0 (the completion is the next event).\n"
            "      full[0] of CTA 0 is now in phase 1 (parity 1): 1 arrival of 1 still expected, "
            "tx-count 0.");
  EXPECT_EQ(n[6].wait, WaitVerdict::kReturnsAtOnce);
  EXPECT_NE(n[6].Text().find("returns at once: parity 0 names phase 0, the preceding phase, "
                             "complete since event 6."),
            std::string::npos)
      << n[6].Text();
  for (const std::string& s : n[6].sentences) EXPECT_EQ(s.find("not complete"), std::string::npos);
  ASSERT_EQ(n[6].rules.size(), 1u);
  EXPECT_EQ(n[6].rules[0].concept_name, "parity waits");
  EXPECT_NE(n[6].rules[0].text.find("the current one or the immediately preceding one"),
            std::string::npos);
  for (const Narration& x : n) EXPECT_EQ(x.Text().find("more arrivals needed"), std::string::npos);
}

// The op kind of an arrive comes from the program: an arrive_drop is named so and says what it
// does to the expected count.
TEST(NarrateTruthTest, ArriveDropIsNamed) {
  const std::string file = "litmus/arrive_drop_lowers_expected.pipe";
  auto program = ir::ParseProgram(ReadFile(file), file);
  ASSERT_TRUE(program.ok());
  auto params = ir::BindParams(*program, {});
  ASSERT_TRUE(params.ok());
  auto eng = engine::Engine::Create(*program, *params, engine::EngineOptions{});
  ASSERT_TRUE(eng.ok());
  eng->Run();
  const std::vector<Narration> n = NarrateRun(*program, *eng, eng->trace());
  ASSERT_GT(n.size(), 4u);
  EXPECT_EQ(n[2].line, "CTA 0 t[0]: arrive_drop b[0] of CTA 0 count 1");
  EXPECT_EQ(n[2].sentences.front(),
            "arrive_drop lowers the expected count by 1 (to 1) for the phases after this one, "
            "and arrives in this one.");
  EXPECT_EQ(n[2].claim->state.expected_count, 1);
  EXPECT_EQ(n[4].line, "CTA 0 t[0]: arrive b[0] of CTA 0 count 1");
}

// The arrive that completes a barrier.cluster phase says so; the count the event records is
// already the next phase's (0), which is not "0 arrived".
TEST(NarrateTruthTest, CompletingClusterArriveSaysTheClusterBarrierCompletes) {
  const std::string file = "litmus/mc4_tma_mask13.pipe";
  auto program = ir::ParseProgram(ReadFile(file), file);
  ASSERT_TRUE(program.ok());
  auto params = ir::BindParams(*program, {});
  ASSERT_TRUE(params.ok());
  auto eng = engine::Engine::Create(*program, *params, engine::EngineOptions{});
  ASSERT_TRUE(eng.ok());
  eng->Run();
  const std::vector<Narration> n = NarrateRun(*program, *eng, eng->trace());
  size_t arrives = 0, completing = 0;
  for (const Narration& x : n) {
    if (x.line.find("barrier.cluster.arrive") == std::string::npos) continue;
    ++arrives;
    EXPECT_EQ(x.line.find("(0 arrived"), std::string::npos) << x.line;
    if (x.line.find("the cluster barrier's phase completes") != std::string::npos) ++completing;
  }
  // Four CTAs sync the cluster twice: each time three partial arrivals, then the one that
  // completes the phase.
  EXPECT_EQ(arrives, 8u);
  EXPECT_EQ(completing, 2u);
}

}  // namespace
}  // namespace parity::report
