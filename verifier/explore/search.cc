#include "verifier/explore/search.h"

#include <chrono>
#include <string>
#include <utility>

#include "verifier/counterexample.h"
#include "verifier/expand.h"

namespace parity::verifier::explore {

ExploreResult Search::Run(InitialStates* initial) {
  t0_ = Clock::now();
  initial_ = initial;
  Expected<Start> start = StartSearch(program_, params_, options_,
                                      initial != nullptr ? initial->Untraced() : nullptr);
  if (!start.ok()) {
    res_.verdict = ExploreVerdict::kBadInput;
    res_.error = start.status();
    return res_;
  }
  sym_ = std::move(start->sym);
  Engine& created = *start->engine;
  res_.symmetry_applied = sym_.visited;
  res_.symmetry = sym_.description;
  seen_.Insert(VisitedFp(created));
  records_.push_back({kRoot, 0});
  w0_.reducer = reduction::MakeReducer(created, options_);
  if (options_.collect_barrier_states) CollectBarriers(created, &res_.barrier_states);
  if (bfs_ && options_.threads > 1) {
    ParallelBfs(std::move(created));
  } else if (bfs_) {
    Bfs(std::move(created));
  } else {
    Dfs(std::move(created));
  }
  if (stopped_ && !found_ && !done_) res_.verdict = ExploreVerdict::kIncomplete;
  res_.stats.states = records_.size();
  res_.stats.held_phase_cuts += w0_.reducer->held_phase_cuts();
  res_.stats.table_bytes = seen_.bytes() + records_.capacity() * sizeof(Record);
  res_.stats.seconds = std::chrono::duration<double>(Clock::now() - t0_).count();
  FinishCollections(&res_);
  return res_;
}

bool Search::MemoryExceeded() {
  std::optional<std::string> why = Budget(options_, t0_).MemoryExceeded();
  if (!why) return false;
  res_.bound = std::move(*why);
  return true;
}

bool Search::OutOfBoundsSlow() {
  if (records_.size() >= options_.max_states) {
    res_.bound = Budget::States(options_.max_states);
    stopped_ = true;
    return true;
  }
  if (MemoryExceeded()) {
    stopped_ = true;
    return true;
  }
  if ((res_.stats.expanded & 255) == 0 && Budget(options_, t0_).TimeUp()) {
    res_.bound = Budget::kTimeLimit;
    stopped_ = true;
    return true;
  }
  return false;
}

bool Search::DepthBoundReached() {
  if (options_.max_depth == 0 || res_.stats.depth < options_.max_depth) return false;
  res_.bound = "--max-depth " + std::to_string(options_.max_depth);
  stopped_ = true;
  return true;
}

void Search::Ended(const Engine& s, uint64_t fp, uint32_t id, Outcome o) {
  if (o == Outcome::kCompleted) {
    ++res_.stats.completed_ends;
    if (has_exists_) res_.exists_held |= s.ExistsHeld();
    if (options_.collect_terminals) res_.terminals.push_back(TerminalFp(s, fp));
    if (options_.check_rules) CheckRulesOn(id);
    return;
  }
  if (o == Outcome::kDeadlock) {
    ++res_.stats.deadlock_ends;
    if (options_.collect_terminals) res_.terminals.push_back(TerminalFp(s, fp));
  } else if (o == Outcome::kViolation) {
    ++res_.stats.violation_ends;
  } else {  // kError, kStepLimit: bad input found while running
    res_.verdict = ExploreVerdict::kBadInput;
    res_.error = s.result().error;
    res_.counterexample = PathTo(records_, id);
    found_ = done_ = true;
    return;
  }
  if (!found_) {
    found_ = true;
    res_.verdict =
        o == Outcome::kDeadlock ? ExploreVerdict::kDeadlock : ExploreVerdict::kViolation;
    res_.counterexample = PathTo(records_, id);
  }
  if (options_.stop_at_first) done_ = true;
}

void Search::CheckRulesOn(uint32_t id) {
  ++res_.stats.rule_paths;
  const std::vector<Choice> path = PathTo(records_, id);
  const Engine* traced = initial_ != nullptr ? initial_->Traced() : nullptr;
  Expected<Engine> e = traced != nullptr ? Replay(*traced, path) : Replay(program_, params_, path);
  if (!e.ok()) return;
  std::vector<Finding> findings = CheckRules(program_, *e, e->trace());
  if (!HasErrors(findings, options_.strict)) return;
  ++res_.stats.rule_violation_ends;
  if (!found_) {
    found_ = true;
    res_.verdict = ExploreVerdict::kRuleViolation;
    res_.counterexample = path;
    res_.findings = std::move(findings);
  }
  if (options_.stop_at_first) done_ = true;
}

}  // namespace parity::verifier::explore
