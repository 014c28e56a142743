#include "verifier/explore.h"

#include <algorithm>
#include <atomic>
#include <cassert>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <variant>
#include <utility>

#include "sim/common/check.h"
#include "sim/model/codes.h"
#include "sim/trace/event.h"
#include "verifier/counterexample.h"
#include "verifier/every_path.h"
#include "verifier/expand.h"
#include "verifier/explore/search.h"
#include "verifier/parallel_dfs.h"
#include "verifier/explore/reducer.h"
#include "verifier/rules.h"
#include "verifier/symmetry.h"

namespace parity::verifier {

using engine::Choice;
using engine::Engine;
using engine::Outcome;
using explore::InitialStates;
using reduction::Reducer;

const char* ExploreVerdictName(ExploreVerdict v) {
  switch (v) {
    case ExploreVerdict::kVerified: return "verified";
    case ExploreVerdict::kViolation: return "violation";
    case ExploreVerdict::kDeadlock: return "deadlock";
    case ExploreVerdict::kBadInput: return "bad-input";
    case ExploreVerdict::kIncomplete: return "incomplete";
    case ExploreVerdict::kRuleViolation: return "rule-violation";
  }
  return "?";
}

namespace {

// ReplayPath from the call's traced initial state (created when the program instantiates).
Expected<ReplayedPath> ReplayFrom(const ir::Program& program, const std::vector<int64_t>& params,
                                  InitialStates& initial, const std::vector<Choice>& path) {
  const Engine* init = initial.Traced();
  return init != nullptr ? ReplayPath(*init, path) : ReplayPath(program, params, path);
}

// The depth-first search's finding in *r: reports it (ExploreOptions::on_first_counterexample),
// then shortens it (verifier/counterexample.h) within the budget, or with
// shortest_counterexample by a breadth-first search bounded only by the time limit. Every path
// put into r is replayed first and must reproduce its finding.
void ImproveCounterexample(const ir::Program& program, const std::vector<int64_t>& params,
                           const ExploreOptions& options, InitialStates& initial,
                           std::chrono::steady_clock::time_point t0, ExploreResult* r) {
  using Clock = std::chrono::steady_clock;
  const bool rules = r->verdict == ExploreVerdict::kRuleViolation;
  // The one replay of the first counterexample: it validates the path, and the first report
  // (on_first_counterexample) and, unless the path is shortened, the final one read it.
  Expected<ReplayedPath> first = ReplayFrom(program, params, initial, r->counterexample);
  PARITY_CHECK(first.ok(), "explore: the counterexample replays");
  const std::optional<FindingKey> key = FindingOf(program, *first->end, rules);
  PARITY_CHECK(key.has_value(), "explore: the counterexample does not reproduce its finding");
  r->replayed = std::move(first).value();
  r->first_counterexample = r->counterexample;
  r->first_seconds = r->stats.seconds;
  r->counterexample_shortest = false;
  if (options.on_first_counterexample) options.on_first_counterexample(*r);
  const size_t first_len = r->counterexample.size();
  // The whole run's deadline (time_limit_s), and the shortening's.
  Clock::time_point limit = Clock::time_point::max();
  if (options.time_limit_s > 0) {
    limit = t0 + std::chrono::duration_cast<Clock::duration>(
                     std::chrono::duration<double>(options.time_limit_s));
  }
  Clock::time_point deadline = limit;
  if (!options.shortest_counterexample) {
    if (options.shorten_budget_s <= 0) {
      r->shortening = "the depth-first search's path, not shortened";
      return;
    }
    deadline = std::min(limit, Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                                  std::chrono::duration<double>(
                                                      options.shorten_budget_s)));
  }
  // Removal gets at most half of the budget: the breadth-first search bounded by its result
  // is what can show that the result is a shortest one.
  const Clock::time_point now = Clock::now();
  const Clock::time_point removal_deadline =
      deadline == Clock::time_point::max() ? now + std::chrono::seconds(10)
                                           : now + (deadline - now) / 2;
  // The search's initial state, or with rule codes the replays' (the rules read the trace).
  const Engine* init = key->rule_codes.empty() ? initial.Untraced() : initial.Traced();
  PARITY_CHECK(init != nullptr, "explore: a search that found something instantiated");
  const Shortened cut =
      ShortenByRemoval(program, *init, r->counterexample, *key, rules, removal_deadline);
  if (cut.path.size() < first_len) {
    r->counterexample = cut.path;
    Expected<ReplayedPath> e = ReplayFrom(program, params, initial, r->counterexample);
    PARITY_CHECK(e.ok(), "explore: the shortened counterexample replays");
    r->replayed = std::move(e).value();
    if (rules) {  // the findings name events of the trace: those of the new path's replay
      r->findings = CheckRules(program, *r->replayed.end, r->replayed.end->trace());
    }
  }
  // Which budget bounds the shortening: --shorten-budget, unless --time-limit ends the whole
  // run first (or --shortest: only --time-limit). The stop reason names it, never the other.
  const bool shorten_budget_bounds = deadline < limit;
  char budget_text[96];
  std::snprintf(budget_text, sizeof budget_text, "the shortening budget (--shorten-budget %g s)",
                options.shorten_budget_s);
  const std::string budget = shorten_budget_bounds ? std::string(budget_text)
                                                   : std::string("the run's --time-limit");
  const size_t dropped = first_len - cut.path.size();
  std::string how = std::to_string(dropped) + (dropped == 1 ? " step" : " steps") +
                    " dropped by replaying without them (" + std::to_string(cut.replays) +
                    " replays" +
                    (cut.budget_spent ? ", stopped by its half of " + budget : std::string()) +
                    ")";
  if (r->counterexample.size() <= 1) {
    r->counterexample_shortest = true;
    r->shortening = how + "; a single step is shortest";
    return;
  }
  // A breadth-first search (same reduction) for a finding at most one step shorter.
  const double left = std::chrono::duration<double>(deadline - Clock::now()).count();
  if (deadline != Clock::time_point::max() && left <= 0.001) {
    r->shortening = how + "; " + budget + " left no time for the breadth-first search";
    return;
  }
  ExploreOptions bo = options;
  bo.stop_at_first = true;
  bo.collect_terminals = false;
  bo.collect_barrier_states = false;
  bo.on_first_counterexample = nullptr;
  bo.max_depth = static_cast<uint32_t>(r->counterexample.size() - 1);
  bo.time_limit_s = deadline == Clock::time_point::max() ? 0 : left;
  ExploreResult b = explore::Search(program, params, bo, true).Run(&initial);
  r->has_bfs_stats = true;
  r->bfs_stats = b.stats;
  if (b.verdict == ExploreVerdict::kViolation || b.verdict == ExploreVerdict::kDeadlock ||
      b.verdict == ExploreVerdict::kRuleViolation) {
    const bool b_rules = b.verdict == ExploreVerdict::kRuleViolation;
    Expected<ReplayedPath> e = ReplayFrom(program, params, initial, b.counterexample);
    PARITY_CHECK(e.ok() && FindingOf(program, *e->end, b_rules).has_value(),
                 "explore: the breadth-first counterexample does not reproduce its finding");
    r->replayed = std::move(e).value();
    r->verdict = b.verdict;
    r->counterexample = std::move(b.counterexample);
    r->findings = std::move(b.findings);
    r->counterexample_shortest = true;
    r->shortening = how + "; a breadth-first search found a shorter one (shortest in the "
                          "explored graph)";
  } else if (b.verdict == ExploreVerdict::kIncomplete &&
             b.bound.rfind("--max-depth", 0) == 0) {
    r->counterexample_shortest = true;
    r->shortening = how + "; a breadth-first search found nothing shorter (shortest in the "
                          "explored graph)";
  } else {
    // Its time limit is what the shortening had left: a time bound is that budget's.
    const std::string stopper = b.bound == "--time-limit" ? budget
                                : b.bound.empty()         ? std::string("a bound")
                                                          : b.bound;
    r->shortening = how + "; " + stopper +
                    " stopped the breadth-first search for a shorter one (at depth " +
                    std::to_string(b.stats.depth) + " of " +
                    std::to_string(r->counterexample.size() - 1) + ")";
  }
}

}  // namespace

namespace {

// A search that found no violation, deadlock or rule violation checked the rules on one path
// per completed end state: the rules and races on every path (verifier/every_path.h) decide
// whether it is VERIFIED.
void CheckEveryPath(const ir::Program& program, const std::vector<int64_t>& params,
                    const ExploreOptions& options, ExploreResult& r) {
  if (!options.check_rules || r.verdict != ExploreVerdict::kVerified) return;
  double seconds = 0;
  if (options.time_limit_s > 0) {
    seconds = options.time_limit_s - r.stats.seconds;
    if (seconds <= 0) seconds = 1e-9;
  }
  const EveryPathResult e = CheckRulesOnEveryPath(program, params, options, seconds);
  r.warnings = e.warnings;
  r.stats.history_states = e.states;
  r.stats.history_completed = e.completed_pairs;
  if (e.found) {
    r.verdict = ExploreVerdict::kRuleViolation;
    r.counterexample = e.path;
    r.findings = e.findings;
    r.counterexample_shortest = false;
  } else if (!e.complete) {
    r.verdict = ExploreVerdict::kIncomplete;
    r.bound = e.bound;
  }
}

// `exists` properties (ir::Assertion): a complete search with no other finding has reached
// every completed end state (a persistent-set search keeps every terminal state reachable, and
// the search keeps every state that differs in what a property reads: symmetry reduction is
// off for programs with assertions), so a property that held in none of them holds in no
// complete run. An incomplete search says nothing about it.
void JudgeExists(const ir::Program& program, ExploreResult& r) {
  if (r.verdict != ExploreVerdict::kVerified) return;
  std::vector<Finding> missing = ExistsFindings(program, r.exists_held, false);
  if (missing.empty()) return;
  r.verdict = ExploreVerdict::kRuleViolation;
  r.findings = std::move(missing);
  r.counterexample.clear();
  r.counterexample_shortest = true;
}

}  // namespace

namespace {

// A search that found something: its counterexample replayed (once: the shortening's replay
// when there was one), and re-run in pieces where the copies' bytes may be credited so.
void FinishCounterexample(const ir::Program& program, const std::vector<int64_t>& params,
                          InitialStates& initial, ExploreResult& r) {
  if (r.verdict != ExploreVerdict::kViolation && r.verdict != ExploreVerdict::kDeadlock &&
      r.verdict != ExploreVerdict::kRuleViolation) {
    return;
  }
  if (r.replayed.end == nullptr) {
    Expected<ReplayedPath> e = ReplayFrom(program, params, initial, r.counterexample);
    PARITY_CHECK(e.ok(), "explore: the counterexample replays");
    r.replayed = std::move(e).value();
  }
  if (r.replayed.end->result().tx_pieces_differ) {
    r.in_pieces = RunInPieces(program, params, {}, r.counterexample);
  }
}

}  // namespace

ExploreResult Explore(const ir::Program& program, const std::vector<int64_t>& params,
                      const ExploreOptions& options) {
  // Made once for the searches, the replays and the shortening of this call.
  InitialStates initial(program, params);
  // Breadth-first (on one or several threads): it finds the shortest counterexample itself.
  if (options.breadth_first) {
    ExploreResult r = explore::Search(program, params, options, true).Run(&initial);
    CheckEveryPath(program, params, options, r);
    JudgeExists(program, r);
    FinishCounterexample(program, params, initial, r);
    return r;
  }
  const auto t0 = std::chrono::steady_clock::now();
  ExploreResult r =
      options.threads > 1
          ? ParallelDepthFirst(program, params, options, initial.Untraced())
          : explore::Search(program, params, options, false).Run(&initial);
  CheckEveryPath(program, params, options, r);
  if (r.verdict != ExploreVerdict::kViolation && r.verdict != ExploreVerdict::kDeadlock &&
      r.verdict != ExploreVerdict::kRuleViolation) {
    JudgeExists(program, r);
    // An exists that held nowhere: the empty path.
    FinishCounterexample(program, params, initial, r);
    return r;
  }
  ImproveCounterexample(program, params, options, initial, t0, &r);
  FinishCounterexample(program, params, initial, r);
  return r;
}

std::vector<SlotBalance> AnalyseBalance(const engine::Engine& state) {
  Engine e = state;
  Reducer r(e, /*guarded_waits=*/true);
  std::vector<SlotBalance> out;
  for (const Reducer::SlotReport& s : r.Report(e)) {
    out.push_back({s.slot, s.whole, s.phase, s.arrivals, s.expect, s.complete});
  }
  return out;
}

Expected<ReplayedPath> ReplayPath(const ir::Program& program, const std::vector<int64_t>& params,
                                  const std::vector<engine::Choice>& choices) {
  engine::EngineOptions eo;
  eo.record_trace = true;
  Expected<Engine> created = Engine::Create(program, params, eo);
  if (!created.ok()) return created.status();
  return ReplayPath(*created, choices);
}

Expected<ReplayedPath> ReplayPath(const engine::Engine& initial,
                                  const std::vector<engine::Choice>& choices) {
  PARITY_CHECK(initial.options().record_trace, "ReplayPath: the initial state keeps no trace");
  auto e = std::make_shared<Engine>(initial);
  ReplayedPath out;
  out.steps.reserve(choices.size());
  std::vector<Choice> now;
  for (const Choice& c : choices) {
    e->Choices(&now);
    PARITY_CHECK(std::find(now.begin(), now.end(), c) != now.end(),
                 "ReplayPath: the step is not enabled (the engine is not deterministic?)");
    ReplayedStep step;
    step.asynchronous = c.kind == Choice::Kind::kAsync;
    step.agent = step.asynchronous ? e->in_flight_ops()[c.index].agent : c.index;
    step.first_event = e->trace().size();
    e->Step(c);
    step.end_event = e->trace().size();
    out.steps.push_back(step);
  }
  out.end = std::move(e);
  return out;
}

PieceRun RunInPieces(const ir::Program& program, const std::vector<int64_t>& params,
                     engine::EngineOptions options, const std::vector<engine::Choice>& prefix) {
  options.tx_pieces = true;
  options.record_trace = true;
  PieceRun out;
  Expected<Engine> created = Engine::Create(program, params, options);
  if (!created.ok()) return out;
  auto e = std::make_shared<Engine>(std::move(created).value());
  auto landed_piece = [&e] {
    const std::vector<trace::TraceEvent>& t = e->trace();
    return std::any_of(t.begin(), t.end(), [](const trace::TraceEvent& ev) {
      return (ev.flags & trace::kFlagPiece) != 0;
    });
  };
  std::vector<Choice> enabled;
  for (const Choice& c : prefix) {
    if (e->outcome() != Outcome::kRunning || landed_piece()) break;
    e->Choices(&enabled);
    if (std::find(enabled.begin(), enabled.end(), c) == enabled.end()) break;
    e->Step(c);
  }
  if (e->outcome() == Outcome::kRunning) e->Run();
  if (e->result().outcome == Outcome::kError) return out;
  for (Finding& f : CheckRules(program, *e, e->trace())) {
    if (f.code() != model::Code::kEarlyPhaseCompletion) continue;
    f.message = "when the copy's bytes are credited in pieces, as Hopper may credit them: " +
                f.message;
    out.early.push_back(std::move(f));
  }
  out.end = std::move(e);
  return out;
}

Expected<engine::Engine> Replay(const ir::Program& program, const std::vector<int64_t>& params,
                                const std::vector<engine::Choice>& choices) {
  engine::EngineOptions eo;
  eo.record_trace = true;
  Expected<Engine> e = Engine::Create(program, params, eo);
  if (!e.ok()) return e.status();
  return Replay(*e, choices);
}

Expected<engine::Engine> Replay(const engine::Engine& initial,
                                const std::vector<engine::Choice>& choices) {
  PARITY_CHECK(initial.options().record_trace, "Replay: the initial state keeps no trace");
  Engine e = initial;
  std::vector<Choice> now;
  for (const Choice& c : choices) {
    e.Choices(&now);
    PARITY_CHECK(std::find(now.begin(), now.end(), c) != now.end(),
                 "Replay: the step is not enabled (the engine is not deterministic?)");
    e.Step(c);
  }
  return e;
}

}  // namespace parity::verifier
