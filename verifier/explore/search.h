// The one-thread searches of `parity explore` (verifier/explore.h): breadth-first (explore/
// bfs.cc, also on several threads level by level) and depth-first (explore/dfs.cc), over the
// reduced or the full state graph. They share what this class holds: the visited set and the
// state records (for the counterexample), the budgets, and what happens at a reached state
// (Visit: the failed assertions, the end states' kinds and the rules on completed paths). The
// strategies only order the states; the parallel depth-first search (parallel_dfs.h) and the
// every-path search (every_path.h) share the rest of the skeleton (explore/common.h,
// explore/stacks.h).
#ifndef PARITY_VERIFIER_EXPLORE_SEARCH_H_
#define PARITY_VERIFIER_EXPLORE_SEARCH_H_

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "sim/engine/engine.h"
#include "sim/ir/ir.h"
#include "verifier/expand.h"
#include "verifier/explore.h"
#include "verifier/explore/common.h"
#include "verifier/fingerprint_set.h"
#include "verifier/rules.h"
#include "verifier/symmetry.h"

namespace parity::verifier::explore {

// Per stored state: the state it was reached from and the step (for the counterexample).
struct Record {
  uint32_t parent;
  uint32_t choice;  // EncodeChoice
};
constexpr uint32_t kRoot = 0xffffffffu;

inline std::vector<engine::Choice> PathTo(const std::vector<Record>& records, uint32_t id) {
  std::vector<engine::Choice> path;
  for (uint32_t at = id; records[at].parent != kRoot; at = records[at].parent) {
    path.push_back(DecodeChoice(records[at].choice));
  }
  std::reverse(path.begin(), path.end());
  return path;
}

// One search (breadth-first or depth-first) over the reduced or the full state graph.
class Search {
 public:
  Search(const ir::Program& program, const std::vector<int64_t>& params,
         const ExploreOptions& options, bool breadth_first)
      : program_(program), params_(params), options_(options), bfs_(breadth_first) {}

  // `initial` (may be null): the call's initial states (the search's and, for the rules on a
  // completed path, the replays'), copied rather than created again (Engine::CreatedCount).
  ExploreResult Run(InitialStates* initial);

 private:
  friend class DepthFirst;
  using Engine = engine::Engine;
  using Choice = engine::Choice;
  using Outcome = engine::Outcome;
  using Worker = reduction::ExpandWorker;

  uint64_t VisitedFp(const Engine& e) const { return sym_.VisitedFp(e); }
  uint64_t TerminalFp(const Engine& e, uint64_t visited) const {
    return sym_.TerminalFp(e, visited);
  }

  // Inlined where it runs per transition: the common case is two compares.
  __attribute__((always_inline)) bool OutOfBounds() {
    if (records_.size() < options_.max_states &&
        ((options_.time_limit_s <= 0 && options_.max_memory_bytes == 0) ||
         (res_.stats.expanded & 255) != 0)) {
      return false;
    }
    return OutOfBoundsSlow();
  }
  bool OutOfBoundsSlow();
  // The --max-memory bound (Budget::MemoryExceeded): sets the bound's message.
  bool MemoryExceeded();

  // Breadth-first: whether the frontier (at depth res_.stats.depth) is at the depth bound
  // (ExploreOptions::max_depth): its states are stored and checked, not expanded.
  bool DepthBoundReached();

  // The enabled steps of `e` (w.choices) and the ones the search takes (w.take: all, or the
  // persistent set). Returns their number.
  size_t Expand(Worker& w, Engine& e) {
    return reduction::ExpandState(w, e, options_.reduction, options_.guarded_waits);
  }

  // A successor state: stores it when new. Returns its record id, or kRoot when it was seen
  // before or ended the run (then *keep is false); sets found_ / done_ for findings.
  uint32_t Visit(const Engine& s, uint32_t parent, Choice c, bool* keep) {
    return Visit(s, VisitedFp(s), parent, c, keep);
  }
  // The same with the state's VisitedFp computed by the caller.
  uint32_t Visit(const Engine& s, uint64_t fp, uint32_t parent, Choice c, bool* keep) {
    *keep = false;
    NoteFailedAssertion(s, &res_.failed_assertions);
    const uint32_t id = Insert(fp, parent, c);
    if (id == kRoot) return kRoot;
    return Reached(s, fp, id, keep);
  }
  // A transition to a state with fingerprint fp: its record id when the state is new, else
  // kRoot.
  uint32_t Insert(uint64_t fp, uint32_t parent, Choice c) {
    ++res_.stats.transitions;
    if (!seen_.Insert(fp)) return kRoot;
    const uint32_t id = static_cast<uint32_t>(records_.size());
    // Grown by a quarter, not doubled: the records' unused capacity counts in the bytes per
    // state (explore.h), at most 2 of the 8 bytes this way.
    if (records_.size() == records_.capacity()) {
      records_.reserve(records_.capacity() + std::max<size_t>(records_.capacity() / 4, 64));
    }
    records_.push_back({parent, EncodeChoice(c)});
    return id;
  }
  // The rest of Visit for a new state s (record id): returns id; *keep when it is running.
  uint32_t Reached(const Engine& s, uint64_t fp, uint32_t id, bool* keep) {
    *keep = false;
    if (options_.collect_barrier_states) CollectBarriers(s, &res_.barrier_states);
    const Outcome o = s.outcome();
    if (o == Outcome::kRunning) {
      *keep = true;
      return id;
    }
    Ended(s, fp, id, o);
    return id;
  }
  // A new state s (record id) whose run ended with outcome o.
  void Ended(const Engine& s, uint64_t fp, uint32_t id, Outcome o);

  // The protocol rules on the path to a completed end state (one path per distinct end state:
  // the first one the search reached).
  void CheckRulesOn(uint32_t id);

  // The strategies (explore/bfs.cc, explore/dfs.cc), from the initial state.
  void Bfs(Engine root);
  void ParallelBfs(Engine root);
  void Dfs(Engine root);

  const ir::Program& program_;
  const std::vector<int64_t>& params_;
  const ExploreOptions& options_;
  const bool has_exists_ = HasExists(program_);
  const bool bfs_;
  InitialStates* initial_ = nullptr;
  Clock::time_point t0_;
  ExploreResult res_;
  FingerprintSet seen_;
  std::vector<Record> records_;
  Worker w0_;  // the sequential searches' expansion state
  SearchSymmetry sym_;  // SymmetryForSearch
  bool found_ = false, stopped_ = false, done_ = false;
};

}  // namespace parity::verifier::explore

#endif  // PARITY_VERIFIER_EXPLORE_SEARCH_H_
