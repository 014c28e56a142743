// verifier/report/phase_picture.h without a browser (//tests/tools:phase_picture_test loads the pages
// in headless Chromium): the page is self-contained and its SVG has the lanes, phases, arrows,
// waits and the culprit that the run contains, each mark with its narration as a tooltip.
#include "verifier/report/phase_picture.h"

#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <tuple>

#include "sim/engine/engine.h"
#include "sim/ir/parser.h"
#include "verifier/culprit.h"
#include "verifier/deadlock.h"

namespace parity::report {
namespace {

size_t Count(const std::string& text, const std::string& pattern) {
  const std::regex re(pattern);
  return static_cast<size_t>(
      std::distance(std::sregex_iterator(text.begin(), text.end(), re), std::sregex_iterator()));
}

std::string Picture(const std::string& file, engine::Outcome expected, bool repair = false) {
  std::ifstream in(file);
  std::stringstream text;
  text << in.rdbuf();
  auto program = ir::ParseProgram(text.str(), file);
  EXPECT_TRUE(program.ok());
  if (!program.ok()) return "";
  auto params = ir::BindParams(*program, {});
  auto eng = engine::Engine::Create(*program, *params, engine::EngineOptions{});
  EXPECT_TRUE(eng.ok());
  if (!eng.ok()) return "";
  const engine::RunResult r = eng->Run();
  EXPECT_EQ(r.outcome, expected) << file;
  verifier::DeadlockReport report;
  PictureInput pic;
  pic.program = &*program;
  pic.engine = &*eng;
  pic.events = eng->trace();
  pic.title = file;
  if (r.outcome == engine::Outcome::kDeadlock) {
    report = repair ? verifier::DiagnoseDeadlockWithRepair(*program, *eng, r, *params)
                    : verifier::DiagnoseDeadlock(*program, *eng, r);
    pic.deadlock = &report;
    pic.outcome = report.summary;  // the headline, as explain writes it
  }
  return PhasePictureHtml(pic);
}

TEST(PhasePictureTest, DeadlockWithMulticast) {
  const std::string html =
      Picture("sim/examples/rules/multicast_disagreement.pipe", engine::Outcome::kDeadlock);
  // Self-contained: nothing fetched.
  EXPECT_EQ(Count(html, R"((src|href)=")"), 0u);
  EXPECT_EQ(Count(html, "<svg "), 1u);
  // One lane per (CTA, barrier) and per agent, with the schedule's names.
  EXPECT_EQ(Count(html, R"(<g class="lane barrier[^"]*" data-kind="barrier" data-name="full\[0\]")"),
            2u);
  EXPECT_EQ(Count(html, R"(data-kind="agent" data-name="producer\[0\]")"), 2u);
  EXPECT_EQ(Count(html, R"(data-kind="agent" data-name="consumer\[0\]")"), 2u);
  // CTA 1 completes phase 0 (its own half lands) and starts phase 1; CTA 0's phase 0 never does.
  EXPECT_EQ(Count(html, R"(<rect class="phase parity0 complete")"), 1u);
  EXPECT_EQ(Count(html, R"(<rect class="phase parity0 open culprit")"), 1u);
  EXPECT_EQ(Count(html, R"(<rect class="phase parity1 open")"), 1u);
  EXPECT_EQ(Count(html, R"(<line class="completion")"), 1u);
  // CTA 0 multicasts to both CTAs, CTA 1 (the bug) only to itself: three arrows.
  EXPECT_EQ(Count(html, R"(<path class="arrow multicast")"), 3u);
  // The consumer of CTA 0 is blocked forever; only CTA 0's full[0] is the culprit.
  EXPECT_EQ(Count(html, R"(<rect class="wait blocked")"), 1u);
  EXPECT_EQ(Count(html, R"(class="lane barrier culprit-lane" data-kind="barrier" data-name="full\[0\]" data-cta="0")"),
            1u);
  EXPECT_EQ(Count(html, R"(class="lane-frame barrier-frame culprit")"), 1u);
  EXPECT_NE(html.find("most likely cause (tx-over-expected)"), std::string::npos);
  // The blocked wait names the phase it waits for and is linked to it (the open culprit phase
  // of CTA 0's full[0]) and to that lane, which names the waiting agent.
  std::smatch m;
  ASSERT_TRUE(std::regex_search(
      html, m,
      std::regex(R"re(<rect class="wait blocked" id="([^"]+)" data-agent="consumer\[0\]" )re"
                 R"re(data-on="barrier" data-lane="([^"]+)" data-observed="0" data-phase="([^"]+)")re")));
  const std::string wait = m[1], lane = m[2], phase = m[3];
  EXPECT_EQ(Count(html, "<rect class=\"phase parity0 open culprit\" id=\"" + phase + "\""), 1u);
  EXPECT_EQ(Count(html, "data-label=\"full\\[0\\] of CTA 0\" id=\"" + lane + "\""), 1u);
  EXPECT_EQ(Count(html, "<path class=\"link blocked-link\" id=\"link-" + wait + "\""), 1u);
  EXPECT_EQ(Count(html, "<text class=\"waiter-mark\" data-waits=\"" + wait + "\""), 1u);
  EXPECT_NE(html.find("consumer[0] waits here, blocked"), std::string::npos);
  EXPECT_NE(html.find("waits for phase 0 of full[0] of CTA 0"), std::string::npos);
  // Counts as text in every phase: CTA 0's phase 0 has its arrival and bytes still missing.
  EXPECT_EQ(Count(html, R"(<text class="phase-counts")"), 3u);
  EXPECT_NE(html.find(">1/1 arrived, tx "), std::string::npos);
  // The drawing scales to the page's width.
  EXPECT_EQ(Count(html, R"(<svg class="timeline"[^>]* viewBox=)"), 1u);
  EXPECT_EQ(Count(html, R"(<svg class="timeline"[^>]* width=)"), 0u);
  // Tooltips are the narration: the blocked wait says why it blocks.
  EXPECT_NE(html.find("blocks: parity 0 names the current phase 0, not complete yet"),
            std::string::npos);
}

TEST(PhasePictureTest, CompletedRunWithRemoteArrives) {
  const std::string html =
      Picture("sim/examples/explore/gemm_multicast_pair.pipe", engine::Outcome::kCompleted);
  EXPECT_EQ(Count(html, R"(class="[^"]*culprit)"), 0u);  // nothing highlighted
  EXPECT_EQ(Count(html, R"(<rect class="wait blocked")"), 0u);
  EXPECT_GT(Count(html, R"(<path class="arrow remote")"), 0u);
  EXPECT_GT(Count(html, R"(<rect class="wait released")"), 0u);
  EXPECT_GT(Count(html, R"(<rect class="wait at-once")"), 0u);
  EXPECT_GT(Count(html, R"(<rect class="phase parity1)"), 0u);
  EXPECT_GT(Count(html, R"(<polyline class="arrivals")"), 0u);
  EXPECT_GT(Count(html, R"(<polyline class="tx")"), 0u);
  // Every wait that returned names the phase it observed and is linked to that phase's box:
  // as many observe links as barrier waits, each to a phase drawn on the page.
  const size_t waits = Count(html, R"re(<rect class="wait (at-once|released)" id="[^"]+" )re"
                                   R"re(data-agent="[^"]+" data-on="barrier" data-lane=)re");
  EXPECT_GT(waits, 0u);
  EXPECT_EQ(Count(html, R"(<path class="link observe")"), waits);
  const std::regex link(R"re(<path class="link observe" id="[^"]+" data-wait="[^"]+" data-phase="([^"]+)")re");
  for (auto it = std::sregex_iterator(html.begin(), html.end(), link);
       it != std::sregex_iterator(); ++it) {
    const std::string id = (*it)[1];
    EXPECT_EQ(Count(html, "id=\"" + id + "\""), 1u) << id;
  }
}

// A named barrier with a name has its own lane, by name: its instance with the threads in, the
// blocked bar.sync linked to it, the lane naming the waiting agent.
TEST(PhasePictureTest, NamedBarrierLaneByName) {
  const std::string html = Picture("tests/verifier/testdata/culprit/named_barrier_by_name.pipe",
                                   engine::Outcome::kDeadlock);
  EXPECT_EQ(Count(html, R"re(<g class="lane barrier named" data-kind="barrier" )re"
                        R"re(data-name="named barrier q_empty" data-cta="0" )re"
                        R"re(data-label="named barrier q_empty" id="lane-0-0-n3">)re"),
            1u);
  EXPECT_EQ(Count(html, R"re(<rect class="phase named parity0 open" id="lane-0-0-n3-p0")re"), 1u);
  EXPECT_NE(html.find(">256/384 threads</text>"), std::string::npos);
  EXPECT_EQ(Count(html, R"re(<rect class="wait blocked" id="[^"]+" data-agent="consumer\[0\]" )re"
                        R"re(data-on="barrier" data-lane="lane-0-0-n3" data-observed="0" data-phase="lane-0-0-n3-p0")re"),
            1u);
  EXPECT_NE(html.find("consumer[0] waits here, blocked"), std::string::npos);
  EXPECT_NE(html.find("waits for instance 0 of named barrier q_empty"), std::string::npos);
  // No number where the schedule gave a name.
  EXPECT_EQ(html.find("bar.sync 3"), std::string::npos);
  EXPECT_NE(html.find("bar.sync q_empty, 384 threads"), std::string::npos);
}

// A run stopped by a violation while two bar.syncs were released but had not returned: their
// waits are drawn as released (linked to the completed instance), not as blocked forever.
TEST(PhasePictureTest, ReleasedWaitsOfAStoppedRunAreNotBlocked) {
  const std::string html = Picture("pipelines/single_tma_load/bad_countN_init_count_one.pipe",
                                   engine::Outcome::kViolation);
  EXPECT_EQ(Count(html, R"(<rect class="wait blocked")"), 0u);
  EXPECT_EQ(Count(html, "the run ended before the wait returned"), 2u);
  EXPECT_EQ(Count(html, R"re(<rect class="wait released" id="[^"]+" data-agent="block\[[12]\]" )re"
                        R"re(data-on="barrier" data-lane="lane-0-0-n0" data-observed="0" )re"
                        R"re(data-phase="lane-0-0-n0-p0")re"),
            2u);
}

// The headline (the report's summary), the red paragraph and the red lane name one barrier:
// the culprit's when the report has one, although the primary blocked wait is elsewhere
// (bad_consumer_phase: the consumers' early wait on full[0]; the waits block on empty[0];
// bad_empty_count_no_multicast: empty's count, found by a re-run).
TEST(PhasePictureTest, HeadlineParagraphAndLaneNameTheCulprit) {
  for (const auto& [file, repair, name] :
       {std::tuple<std::string, bool, std::string>{
            "pipelines/pipeline_async/bad_consumer_phase.pipe", false, "full[0]"},
        {"pipelines/pipeline_async/bad_consumer_phase.pipe", true, "full[0]"},
        {"pipelines/tma_async_gemm/bad_empty_count_no_multicast.pipe", true, "empty[0]"}}) {
    const std::string html = Picture(file, engine::Outcome::kDeadlock, repair);
    std::smatch m;
    ASSERT_TRUE(std::regex_search(html, m, std::regex(R"re(<p class="outcome bad" id="outcome">([^<]*)</p>)re")))
        << file;
    const std::string headline = m[1];
    ASSERT_TRUE(std::regex_search(html, m, std::regex(R"re(<p class="cause" id="cause">([^<]*)</p>)re")))
        << file;
    const std::string cause = m[1];
    ASSERT_TRUE(std::regex_search(
        html, m, std::regex(
            R"re(<g class="lane barrier culprit-lane" data-kind="barrier" data-name="([^"]*)")re")))
        << file;
    const std::string lane = m[1];
    EXPECT_EQ(lane, name) << file;
    const std::string of_cta0 = name + " of CTA 0";
    EXPECT_NE(headline.find(of_cta0), std::string::npos) << file << ": " << headline;
    EXPECT_NE(cause.find(of_cta0), std::string::npos) << file << ": " << cause;
    EXPECT_EQ(Count(html, R"re(class="lane barrier culprit-lane")re"), 1u) << file;
  }
}

}  // namespace
}  // namespace parity::report
