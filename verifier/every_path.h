// The protocol rules and data races on every interleaving (issue 24, item 3): what makes
// explore's VERIFIED mean "no race and no rule violation on any path", not only on one path per
// distinct end state.
//
// Why one path per end state is not enough. Happens-before depends on the path, not only on the
// state it reaches: which phase of an mbarrier a wait observed (a parity wait passes on the last
// completed phase of its parity, whichever that is when it runs) and which phase an arrive or a
// copy's bytes joined. Two paths can reach the same end state with different happens-before:
// a writer that arrives three times on a count-1 barrier (writing between the first and the
// second arrive) and a reader that waits for parity 0 and reads; the reader's wait observes
// phase 0 (the read races with the write) or phase 2 (it does not), and both runs end in the same
// state (tests/verifier/every_path_test.cc; `check` flags it, and explore said VERIFIED).
//
// The search here. It is the explorer's search (the same persistent sets, guarded waits,
// verifier/expand.h) over the product of the engine's state and a *history digest*: per agent a
// hash of the sequence of its steps that synchronise, each with its pc and, for every mbarrier
// slot the step touched, the slot's phase before the step (the phase an arrive joined, the phase
// whose parity a wait tested); and per agent a commutative sum over the deliveries of the
// asynchronous operations it issued of (the operation, the phase of its slot before it landed).
// An arrival on a named barrier (bar.sync / bar.arrive) adds the instance it joined (the
// barrier's generation): when more agents than the count use one id (two warpgroups sharing an
// id: tile-ai/TileOPs b39c3189), which agents' arrivals complete which instance depends on the
// path, and so does happens-before. Steps that only block add nothing (they stutter), nor do
// steps that touch no mbarrier slot and join no named-barrier instance (cluster barriers: the
// k-th arrivals meet the k-th waits on every path; async groups: their edges are program
// order), nor a step that repeats the agent's last
// word (a test_wait that polls the same phase again observes nothing new). A stored pair (state, digest) is not expanded again; the rules
// (verifier/rules.h, races included) run on one path to each distinct completed pair.
//
// Sufficiency (the argument the tests check against the all-paths oracle,
// tests/verifier/race_oracle_test.cc):
//  (1) Every path of the explorer's reduced graph is explored here up to the digest: persistent
//      sets depend only on the engine state, so the stored graph below a state is the same
//      whatever path reached it, and a path is cut only at a pair (state, digest) stored before.
//  (2) Paths through persistent sets represent every run: take a run w from state s to a
//      completed state; some step t of the persistent set T(s) occurs in w (else t would still be
//      enabled at the end, whose state has no enabled step); the steps of w before t are outside
//      T, so independent of t; moving t first gives a run t.w' that is w with independent
//      adjacent steps swapped. By induction the reduced graph has a path equivalent to w up to
//      such swaps (Godefroid, LNCS 1032, ch. 4, with guarded waits as in explore.h: a deleted
//      blocking step observes nothing).
//  (3) Swapping adjacent independent steps does not change happens-before: two steps of one agent
//      are never independent; independent steps touch disjoint mbarrier slots, cluster and named
//      barriers, or commute on one slot without changing its phase (explore.h: balanced updates,
//      complete_tx while arrivals are pending), so each arrive joins, and each wait observes,
//      the same phase in either order. Buffer accesses create no edge. So the race pairs
//      (a function of happens-before and of the accesses, which each agent's program fixes given
//      the values its synchronising steps returned) are equal on equivalent runs.
//  (4) Two paths to one state with one digest (no collision) have the same happens-before: each
//      agent made the same synchronising steps with the same phases (hence the same values
//      returned to it, hence the same accesses), and the same copies landed in the same phases.
//      Their continuations are the same, so the findings of any completed run through them are
//      the same, and one of them is checked.
// Hence: a completed run with a race has an equivalent path in the reduced graph (2, 3), which is
// explored up to its digest (1, 4), and its race is found.
// (5) The accesses are fixed by the pair: every access an agent made or will make (a copy in
//     flight included, with the slot and offset its bytes land at) is a function of its program
//     and of the values its synchronising steps returned, which its digest holds (with its
//     variables, in the state), so two stored-equal pairs have the same byte ranges behind and
//     ahead (the engine hashes no offset: Engine::InFlight); the race checker
//     reads each dynamic access's exact range (verifier/races.h), so a conflict on one iteration
//     only is a conflict of that run, and (2)-(3) carry it to the reduced graph: buffer accesses
//     create no happens-before edge and the race pairs are a function of happens-before and of
//     those ranges, whatever the order of independent steps.
// Limits: copies of one instruction into
// the same bytes of one slot landing in swapped phases are not told apart (the race detector
// matches a landing with the oldest such copy); rules that depend on timing rather than on
// happens-before (P2002's "phase current at the issue") are checked on one run per pair, as
// before. With symmetry classes (explore.h) a pair is stored up to a permutation of
// interchangeable agents that maps each agent's state and digests to another's: the findings of
// the permuted runs are the same up to that permutation (reported by role and statement).
// Threads (ExploreOptions::threads > 1): the search runs as the explorer's parallel depth-first
// search does (verifier/parallel_dfs.h): each thread depth-first on a stack of its own, one
// shared set of pair keys (ConcurrentFingerprintSet: a pair is claimed by one thread, which
// expands it or hands it over), stack splitting through verifier/work_pool.h, and the rules of
// a completed pair run by the thread that reached it. Nothing in (1)-(5) depends on the order
// in which pairs are expanded or on which path first reached a pair, so a complete search finds
// the same rule findings (those that depend on happens-before) and race pairs on any number of
// threads; which finding is reported first, its path and the number of pairs stored may vary
// (the tests compare the sets: tests/verifier/every_path_sets_test.cc).
#ifndef PARITY_VERIFIER_EVERY_PATH_H_
#define PARITY_VERIFIER_EVERY_PATH_H_

#include <cstdint>
#include <string>
#include <vector>

#include "sim/engine/engine.h"
#include "sim/ir/ir.h"
#include "verifier/explore.h"
#include "verifier/rules.h"

namespace parity::verifier {

struct EveryPathResult {
  bool complete = true;  // false: a bound (max_states, time limit) stopped it
  std::string bound;
  uint64_t states = 0;           // (state, digest) pairs stored
  uint64_t completed_pairs = 0;  // completed (state, digest) pairs the rules ran on
  uint64_t handovers = 0;        // work handed from one thread to another (options.threads > 1)
  bool found = false;            // a rule (error severity) or race on some path
  std::vector<engine::Choice> path;
  std::vector<Finding> findings;
  // With collect_all: every race pair of verifier/races.h (CheckRaces, before CheckRules leaves
  // out those of slots that P2005/P2006 name on that run) of every completed pair, each once.
  std::vector<Finding> races;
  // Warnings (Finding::strict_only, not options.strict) of every completed pair, each once.
  std::vector<Finding> warnings;
};

// The search above, on options.threads threads; `seconds` bounds it (0: no bound). With `collect_all` it does not stop at
// the first finding: `findings` is every finding of every completed pair (each once: by rule,
// agents, statements, object and element), `path` the first run with an error, so that the
// reduced and the brute-force searches can be compared on the whole set
// (tests/verifier/every_path_test.cc).
EveryPathResult CheckRulesOnEveryPath(const ir::Program& program,
                                      const std::vector<int64_t>& params,
                                      const ExploreOptions& options, double seconds,
                                      bool collect_all = false);

}  // namespace parity::verifier

#endif  // PARITY_VERIFIER_EVERY_PATH_H_
