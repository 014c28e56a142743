// The parallel depth-first search (ExploreOptions::threads > 1 without breadth_first): the
// explorer's search (verifier/explore.h: the same persistent sets, guarded waits, symmetry,
// findings and rules) on T threads that share one visited set and split each other's stacks.
//
// How it works. Every thread runs a depth-first search of its own (one engine per level of its
// path; a successor is made by undoing the previous one, Engine::RestoreStep, stepped,
// fingerprinted and inserted) over one shared visited set (ConcurrentFingerprintSet: a
// fingerprint is claimed by exactly one thread, which numbers the state, ConcurrentRecords, and
// is the only one to expand it) and one shared result (findings, under a lock). Work moves by
// stack splitting (verifier/work_pool.h, shared with the every-path rule search): a thread with
// nothing to do says so (a count of hungry threads), and a
// thread that sees it hands over the untaken half of the successors of the lowest frame of its
// stack that has some (the largest subtrees), as that frame's state (Engine::Pack) with the
// steps to take from it; the receiver unpacks it on its own engine (Engine::Unpack; every thread
// steps states on engines of its own program copy, Engine::IsolatedCopy) and goes on depth-first
// from there. The search ends when every thread is hungry and nothing is handed over, or at a
// bound or (stop_at_first) the first finding.
//
// Soundness: why no cycle proviso, here or in the one-thread search. Partial-order reductions
// that search graphs with cycles need a proviso against "ignoring" (a step left out of every
// persistent set around a cycle), and the usual one, no persistent step may close a cycle
// on the depth-first stack, depends on the order of one depth-first search: it does not carry
// over to threads that split stacks (a cycle can run through two threads' stacks, seen by
// neither). The explorer needs none because its state graph is acyclic (the argument of
// explore.h's symmetry section rests on it too: every loop of a schedule has a static trip
// count or a `bound`, so no state repeats on a run), and what
// is checked is the set of end states (completed, deadlocked) and whether a violating step is
// reachable. For that, persistent sets alone suffice on an acyclic graph, and the argument does
// not depend on the order in which states are expanded. Claim: for every stored running state s
// and every end state d reachable from s, a state pi(d) (pi a symmetry of the classes, the
// identity without symmetry) is stored. By induction on the length of the longest path from s
// (finite: the graph is acyclic and finite): the persistent set of s, a function of s alone,
// holds a step t that starts a path from s to d, one step shorter (Godefroid, LNCS 1032, Thm.
// 4.3). The thread that expands s inserts t(s)'s fingerprint. If that insert is new, the thread
// numbers t(s) and expands it itself or hands it over (an end state is stored as such). If not,
// a state sigma(t(s)) was stored, by whichever thread and whenever, and every stored running
// state is expanded before a complete search ends (a thread expands every state it claims, or
// hands it over to one that does); sigma(d) is reachable from it by a path as long, so by
// induction some pi(sigma(d)) is stored. Violations: as explore.h's (2), the same induction.
// Nothing in this uses a stack, an order of expansion or which thread claimed a state, nor that
// one state always gets the same persistent set: so the verdict "a violation / deadlock is
// reachable" and the set of end states (up to symmetry) are the one-thread search's, for any
// number of threads and any schedule of them (the tests compare them).
// The number of stored states, though, may vary from run to run, even without symmetry: a
// stored state is represented by the engine of the first path that reached it, and two paths to
// one state (one fingerprint) can leave its in-flight operations in different orders (a
// delivery moves the last operation into its place; the fingerprint treats them as a multiset,
// and so do the steps: the orders are the same state up to the numbering of the choices). The
// persistent set the reducer picks, the smallest closure with ties broken in the order of the
// choices, can then differ between representatives: both are persistent sets, so the argument
// above holds, but the reduced graph below them differs. One thread always reaches a state
// first by the same path; several threads need not. With symmetry the representative of a class
// varies for the same reason.
// What depends on timing: which finding is reported first when several are reachable (a
// violation or a deadlock; with stop_at_first the search stops at the first any thread finds,
// so a schedule with both may report either), its counterexample (a real path: the records of
// the states on it, replayed and shortened as the one-thread search's, verifier/counterexample.h),
// the path on which the rules run for a completed end state (the every-path check,
// verifier/every_path.h, then covers every path), and how far a search cut by a bound got.
#ifndef PARITY_VERIFIER_PARALLEL_DFS_H_
#define PARITY_VERIFIER_PARALLEL_DFS_H_

#include <cstdint>
#include <vector>

#include "sim/ir/ir.h"
#include "verifier/explore.h"

namespace parity::verifier {

// The search above on options.threads threads (at least 2); its result as the one-thread
// depth-first search's before counterexample shortening (Explore shortens it). `initial` (may
// be null): the initial state without a trace, made earlier by the same Explore (copied, not
// created again).
ExploreResult ParallelDepthFirst(const ir::Program& program, const std::vector<int64_t>& params,
                                 const ExploreOptions& options,
                                 const engine::Engine* initial = nullptr);

}  // namespace parity::verifier

#endif  // PARITY_VERIFIER_PARALLEL_DFS_H_
