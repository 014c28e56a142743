// A load whose bytes exceed what its barrier's phase still expects: Hopper credits the bytes
// either all at once (the phase stays open with a negative tx-count) or in pieces (tx-count
// passes through 0 mid-copy and the phase completes with the rest in flight), depending on
// timing (traces/import/bad_tx/). The model has both (engine::EngineOptions::tx_pieces): the
// litmus enumeration allows the union, replays accept either, and check/explore report the early
// completion (P2002) next to the hang the whole-box run shows.
#include <set>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "parity/parity.h"
#include "sim/engine/engine.h"
#include "sim/ir/parser.h"
#include "sim/trace/event.h"
#include "sim/trace/trace_file.h"
#include "sim/model/codes.h"
#include "verifier/explore.h"
#include "verifier/litmus.h"

namespace parity {
namespace {

using trace::EventKind;
using trace::TraceEvent;

// tests/import's ws_pipeline_bad_tx in small: half of an 8192-byte tile announced.
constexpr char kShort[] = R"(schedule short_expect
cluster 1x1
buffer tile[1] bytes 64 * 64 * 2
barrier full[1] count 1
tensormap tm dtype u16 dims [64, 1024] box [64, 64] swizzle 128B
role producer threads 32 {
  init full[0]
  fence.mbarrier_init
  bar.sync 1, 64
  arrive.expect_tx full[0] bytes EXPECT
  tma.load tm coords [0, 0] -> tile[0] bar full[0]
}
role consumer threads 32 {
  bar.sync 1, 64
  wait full[0] parity 0
  use tile[0]
}
)";

std::string Schedule(int expect) {
  std::string s = kShort;
  s.replace(s.find("EXPECT"), 6, std::to_string(expect));
  return s;
}

ir::Program Parse(const std::string& text) {
  auto p = ir::ParseProgram(text, "short_expect.pipe");
  EXPECT_TRUE(p.ok()) << p.status().ToString();
  return p.ok() ? *p : ir::Program{};
}

engine::Engine RunModel(const ir::Program& p, bool pieces) {
  engine::EngineOptions o;
  o.tx_pieces = pieces;
  auto e = engine::Engine::Create(p, {}, o);
  EXPECT_TRUE(e.ok());
  e->Run();
  return std::move(e).value();
}

std::vector<TraceEvent> Deliveries(const engine::Engine& e) {
  std::vector<TraceEvent> out;
  for (const TraceEvent& ev : e.trace()) {
    if (ev.kind == static_cast<uint8_t>(EventKind::kTmaDeliver)) out.push_back(ev);
  }
  return out;
}

TEST(TxPieces, AWholeBoxLeavesThePhaseOpenAndSaysPiecesWouldDiffer) {
  const ir::Program p = Parse(Schedule(4096));
  const engine::Engine e = RunModel(p, false);
  EXPECT_EQ(e.outcome(), engine::Outcome::kDeadlock);
  EXPECT_TRUE(e.result().tx_pieces_differ);
  const model::MbarrierState& full = e.barrier_state(0, 0, 0);
  EXPECT_EQ(full.phase, 0u);
  EXPECT_EQ(full.pending_count, 0);
  EXPECT_EQ(full.tx_count, -4096);
  ASSERT_EQ(Deliveries(e).size(), 1u);
  EXPECT_EQ(Deliveries(e)[0].value, 8192);
}

TEST(TxPieces, PiecesCompleteThePhaseAndCreditTheRestToTheNext) {
  const ir::Program p = Parse(Schedule(4096));
  const engine::Engine e = RunModel(p, true);
  EXPECT_EQ(e.outcome(), engine::Outcome::kCompleted);
  const std::vector<TraceEvent> d = Deliveries(e);
  ASSERT_EQ(d.size(), 2u);
  EXPECT_EQ(d[0].value, 4096);  // the piece that brings tx-count to 0
  EXPECT_NE(d[0].flags & trace::kFlagPiece, 0);
  EXPECT_EQ(d[0].phase, 1);     // and completes phase 0
  EXPECT_EQ(d[1].value, 4096);  // the rest, in phase 1
  EXPECT_EQ(d[1].flags & trace::kFlagPiece, 0);
  const model::MbarrierState& full = e.barrier_state(0, 0, 0);
  EXPECT_EQ(full.phase, 1u);
  EXPECT_EQ(full.pending_count, 1);
  EXPECT_EQ(full.tx_count, -4096);
}

// Bytes that fit the phase land the same way with either option, and the run says so.
TEST(TxPieces, ACopyThatFitsItsPhaseLandsTheSameEitherWay) {
  for (int expect : {8192, 12288}) {
    SCOPED_TRACE(expect);
    const ir::Program p = Parse(Schedule(expect));
    const engine::Engine whole = RunModel(p, false);
    const engine::Engine pieces = RunModel(p, true);
    EXPECT_FALSE(whole.result().tx_pieces_differ);
    ASSERT_EQ(whole.trace().size(), pieces.trace().size());
    for (size_t i = 0; i < whole.trace().size(); ++i) {
      EXPECT_EQ(trace::FormatEvent(whole.trace()[i]), trace::FormatEvent(pieces.trace()[i]));
    }
    EXPECT_EQ(whole.outcome(), expect == 8192 ? engine::Outcome::kCompleted
                                              : engine::Outcome::kDeadlock);
  }
}

// The litmus enumeration allows both: the hang (the box at once) and the completed phase.
TEST(TxPieces, LitmusAllowsTheHangAndTheEarlyCompletion) {
  const ir::Program p = Parse(R"(schedule tx_short
cluster 1x1
buffer tile[1] bytes 64 * 64 * 2
barrier full[1] count 1
tensormap tm dtype u16 dims [64, 1024] box [64, 64] swizzle 128B
role t threads 32 {
  init full[0]
  fence.mbarrier_init
  arrive.expect_tx full[0] bytes 4096
  tma.load tm coords [0, 0] -> tile[0] bar full[0]
  wait full[0] parity 0
}
)");
  auto h = verifier::SimulateLitmus(p, "tx_short", {});
  ASSERT_TRUE(h.ok()) << h.status().ToString();
  std::set<std::string> outcomes;
  for (const auto& [o, n] : h->counts) outcomes.insert(o);
  EXPECT_EQ(outcomes, (std::set<std::string>{"hang{c0a0@full[0]/p0}", "ok ph{full[0]@0=1}"}));
}

// A correct two-load stage gives the same outcomes as before (no second enumeration needed).
TEST(TxPieces, LitmusOfACorrectStageIsUnchanged) {
  const ir::Program p = Parse(R"(schedule two_loads
cluster 1x1
buffer a[1] bytes 64 * 64 * 2
buffer b[1] bytes 64 * 32 * 2
barrier full[1] count 1
tensormap ta dtype f16 dims [256, 256] box [64, 64]
tensormap tb dtype f16 dims [256, 256] box [64, 32]
role t threads 32 {
  init full[0]
  fence.mbarrier_init
  arrive.expect_tx full[0] bytes 64 * 64 * 2 + 64 * 32 * 2
  tma.load ta coords [0, 0] -> a[0] bar full[0]
  tma.load tb coords [0, 64] -> b[0] bar full[0]
  wait full[0] parity 0
}
)");
  auto h = verifier::SimulateLitmus(p, "two_loads", {});
  ASSERT_TRUE(h.ok()) << h.status().ToString();
  ASSERT_EQ(h->counts.size(), 1u);
  EXPECT_EQ(h->counts.begin()->first, "ok ph{full[0]@0=1}");
}

bool HasPieceFinding(const std::vector<api::Finding>& findings) {
  for (const api::Finding& f : findings) {
    if (f.code == "P2002" && f.message.find("credited in pieces") != std::string::npos &&
        f.message.find("full[0]") != std::string::npos) {
      return true;
    }
  }
  return false;
}

// check: the whole-box run deadlocks (P2001, P2003) and the early completion is reported at the
// tma.load whose bytes the phase did not expect (P2002).
TEST(TxPieces, CheckReportsTheHangAndTheEarlyCompletion) {
  auto s = api::Schedule::FromString(Schedule(4096), "short_expect.pipe");
  ASSERT_TRUE(s.ok());
  auto c = api::Check(*s);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->outcome, api::Outcome::kDeadlock);
  std::set<std::string> codes;
  for (const api::Finding& f : c->findings) codes.insert(f.code);
  EXPECT_TRUE(codes.count("P2001"));
  EXPECT_TRUE(codes.count("P2003"));
  EXPECT_TRUE(HasPieceFinding(c->findings));
  for (const api::Finding& f : c->findings) {
    if (f.code == "P2002") {
      EXPECT_EQ(f.location.line, 11) << f.message;  // the tma.load
    }
  }
  // A correct stage has no such finding.
  auto ok = api::Schedule::FromString(Schedule(8192), "short_expect.pipe");
  ASSERT_TRUE(ok.ok());
  auto c2 = api::Check(*ok);
  ASSERT_TRUE(c2.ok());
  EXPECT_EQ(c2->outcome, api::Outcome::kCompleted);
  EXPECT_TRUE(c2->findings.empty());
}

TEST(TxPieces, ExploreFindsTheHangAndReportsTheEarlyCompletion) {
  auto s = api::Schedule::FromString(Schedule(4096), "short_expect.pipe");
  ASSERT_TRUE(s.ok());
  auto e = api::Explore(*s);
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->verdict, api::Verdict::kDeadlock);
  ASSERT_FALSE(e->findings.empty());
  EXPECT_EQ(e->findings[0].code, "P2001");
  EXPECT_TRUE(HasPieceFinding(e->findings));
}

// The early completions come from the search (verifier::ExploreResult::in_pieces): the API reports
// exactly those, at their statements and in their words, and none of its own.
TEST(TxPieces, TheApiReportsTheSearchsEarlyCompletions) {
  const ir::Program p = Parse(Schedule(4096));
  const verifier::ExploreResult r = verifier::Explore(p, {});
  ASSERT_EQ(r.verdict, verifier::ExploreVerdict::kDeadlock);
  ASSERT_FALSE(r.in_pieces.early.empty());
  auto s = api::Schedule::FromString(Schedule(4096), "short_expect.pipe");
  ASSERT_TRUE(s.ok());
  auto e = api::Explore(*s);
  ASSERT_TRUE(e.ok());
  std::vector<std::pair<int, std::string>> api_early, search_early;
  for (const api::Finding& f : e->findings) {
    if (f.code == "P2002") api_early.emplace_back(f.location.line, f.message);
  }
  for (const verifier::Finding& f : r.in_pieces.early) {
    EXPECT_EQ(f.code(), model::Code::kEarlyPhaseCompletion);
    search_early.emplace_back(f.where.line, f.message);
  }
  EXPECT_EQ(api_early, search_early);
  // A correct stage: neither reports one.
  const verifier::ExploreResult ok = verifier::Explore(Parse(Schedule(8192)), {});
  EXPECT_EQ(ok.verdict, verifier::ExploreVerdict::kVerified);
  EXPECT_TRUE(ok.in_pieces.early.empty());
}

}  // namespace
}  // namespace parity
