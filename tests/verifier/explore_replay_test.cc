// A counterexample is replayed once (verifier::ExploreResult::replayed) and every report reads that
// replay: the API's steps and findings, and through them text, JSON, SARIF and the narration. The
// engines one explore of a small known-bad schedule creates are counted and pinned, so that a
// second replay (or a locator rebuilt on a fresh engine) shows up here.
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "parity/parity.h"
#include "sim/engine/engine.h"
#include "sim/ir/parser.h"
#include "verifier/explore.h"

namespace parity {
namespace {

// A deadlock with a culprit the repair search proves (expect_tx armed with f32 bytes for an f16
// tile): small enough that the search, the shortening and the diagnosis are deterministic.
constexpr char kBad[] = "pipelines/single_tma_load/bad_count1_expect_f32_bytes.pipe";

api::ExploreOptions Deterministic() {
  api::ExploreOptions o;
  // The shortening bounded by the search, not by a clock (a budget can run out under load).
  o.shortest_counterexample = true;
  return o;
}

TEST(ExploreReplay, AKnownBadScheduleCreatesAPinnedNumberOfEngines) {
  auto s = api::Schedule::FromFile(kBad);
  ASSERT_TRUE(s.ok()) << s.error().ToString();
  const uint64_t before = engine::Engine::CreatedCount();
  auto r = api::Explore(*s, Deterministic());
  const uint64_t created = engine::Engine::CreatedCount() - before;
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  EXPECT_EQ(r->verdict, api::Verdict::kDeadlock);
  // Two initial states, made once and copied by every search and replay of the call
  // (verifier/explore/common.h, InitialStates): the searches' (the depth-first search, the
  // removal replays, the breadth-first search for a shorter path) and the replays' with a trace
  // (the counterexample's replay, the shortened path's, the breadth-first one's). Then the
  // deadlock diagnosis's runs of the schedule under three policies (their options differ) and
  // its re-runs of changed programs that prove the culprit (one per change tried). The API
  // creates none: its steps, findings and warnings read the search's replay.
  EXPECT_EQ(created, 8u) << "engines created by one explore";
}

TEST(ExploreReplay, TheApiStepsAreTheSearchsReplay) {
  auto s = api::Schedule::FromFile(kBad);
  ASSERT_TRUE(s.ok()) << s.error().ToString();
  auto r = api::Explore(*s, Deterministic());
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  auto p = ir::ParseFile(kBad);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  auto params = ir::BindParams(*p, {});
  ASSERT_TRUE(params.ok());
  verifier::ExploreOptions o;
  o.shortest_counterexample = true;
  const verifier::ExploreResult v = verifier::Explore(*p, *params, o);
  ASSERT_NE(v.replayed.end, nullptr);
  ASSERT_EQ(v.replayed.steps.size(), v.counterexample.size());
  ASSERT_EQ(r->counterexample.size(), v.replayed.steps.size());
  size_t events = 0;
  for (size_t i = 0; i < r->counterexample.size(); ++i) {
    const api::Step& step = r->counterexample[i];
    const verifier::ReplayedStep& replayed = v.replayed.steps[i];
    EXPECT_EQ(step.asynchronous, replayed.asynchronous) << "step " << i;
    EXPECT_EQ(step.events.size(), replayed.end_event - replayed.first_event) << "step " << i;
    EXPECT_EQ(replayed.first_event, events) << "step " << i;
    events = replayed.end_event;
  }
  // The steps' events are the whole run of the replay, which ends in the finding.
  EXPECT_EQ(events, v.replayed.end->trace().size());
  EXPECT_EQ(v.replayed.end->outcome(), engine::Outcome::kDeadlock);
}

}  // namespace
}  // namespace parity
