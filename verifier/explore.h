// Exhaustive exploration (`parity explore`): every interleaving of agent steps and asynchronous
// completions of a bound schedule, up to bounds, breadth-first.
//
// What is explored. A state is an engine state (sim/engine/engine.h); its successors are the
// states after each enabled step (Engine::Choices: a runnable agent's next operation, or one
// in-flight operation completing: every TMA/bulk delivery to each destination CTA separately, so
// TMA halves and multicast copies land in every order). A state whose run has ended (completed,
// deadlock, model violation, run-time bad input) is terminal.
//
// Spurious try_wait failures. The schedule language's `wait BAR parity P` is the try_wait loop
// (PTX ISA 9.7.13.15.16: try_wait may return false before the phase completes, when its time
// limit expires, and the loop retries). A spurious false only repeats the loop: the agent takes a
// step that changes nothing, the same as not being scheduled, which exploration already covers.
// `test_wait ... -> var` is a single test_wait, which is non-blocking and reports the phase's
// state (no time limit, so no spurious result in the ISA's text); its two outcomes are explored
// through the interleavings (the test before or after the phase completes). So no extra choice
// is needed for either form.
//
// Visited states are stored as 64-bit fingerprints (Engine::Fingerprint) in an open-addressing
// table with linear probing (max load 3/4, doubling; verifier/fingerprint_set.h, on transparent
// huge pages once it is 2 MiB), plus per state its parent's number and the
// choice that reached it (8 bytes; their vector grows by a quarter) for the counterexample: at
// most 8 / 0.375 + 8 * 1.25 ≈ 31.3 and at least 8 / 0.75 + 8 ≈ 18.7 bytes per state (table and
// records as allocated; the first allocations, 64 slots and 65 records, hold a few hundred
// states within the same bounds, below a hundred or so they dominate). Two distinct states with the same fingerprint make
// the second look visited (the search could then miss what lies only behind it): with n states
// and a well-mixed 64-bit fingerprint the probability that any pair collides is about
// n^2 / 2^65 (1e6 states: 3e-8; 1e8 states: 3e-4). The fingerprint is a sum mod 2^64 of
// strongly mixed per-component hashes (each agent with its in-flight operations, each mbarrier
// slot, cluster barrier and CTA's named barriers), kept with the engine state and updated for
// the components a step changed (Engine::Fingerprint): a pair of distinct states collides with
// probability at most m * 2^-64, m the largest symmetry class (1 without symmetry), as the
// difference of the sums is a non-zero combination of component hashes with coefficients of at
// most m; so the bound above holds up to that factor (m = 2 in the 2x2 GEMM: 1e8 states 6e-4).
// Builds with assertions (the tests) check every incremental fingerprint against one computed
// from scratch. The frontier of the breadth-first search
// (the states of the current and the next depth) is kept as full engine copies.
//
// Partial-order reduction (persistent sets; P. Godefroid, "Partial-Order Methods for the
// Verification of Concurrent Systems", LNCS 1032, ch. 4). Units are the agents that have not
// exited and the in-flight operations. Each enabled step's footprint (the mbarrier slots,
// cluster barrier, named barriers and async-group state it read or wrote; Engine::Step with a
// Footprint) is measured exactly by taking it; each unit's *future* footprint is a static
// over-approximation (Engine::AgentMayTouch: every object any operation of the role, or an
// asynchronous operation it issues, may touch; an in-flight delivery touches exactly its
// barrier slot). Two steps with disjoint footprints commute and neither enables or disables the
// other: all shared state lives in those objects; a step changes only its own agent's pc and
// variables and the multiset of in-flight operations otherwise; waking a blocked agent is a
// consequence of touching the object it waits on. The persistent set at a state is the closure
// of one enabled unit under: (a) an enabled unit in the set pulls in every unit whose future
// footprint meets its step's footprint; (b) a blocked agent in the set pulls in every unit whose
// future footprint contains the object it waits on (its necessary enabling set). No sequence of
// steps outside the set can then touch what a step in the set touches, so the set is persistent;
// the explorer takes the smallest such closure over all enabled units.
// Soundness: (1) deadlocks and completed ends are states with no enabled step; selective search
// with persistent sets reaches every such reachable state of a finite state space (Godefroid
// Thm. 4.3; the proof permutes the first persistent step to the front of any path to the state;
// state caching does not break it because the persistent set depends only on the state). So the
// sets of reachable completed and deadlocked states are the same as without reduction (the tests
// check this against the unreduced search). (2) Violations: a step that violates ends the run. Take
// a path w to a violating step from s; if no step of w is in the persistent set T, every enabled
// step t of T commutes with all of w except possibly its last step; t then either violates
// itself or leaves the last step of w enabled with the same objects, so it still violates after
// t: a violation stays reachable through T by a path of the same length. Hence the verdict
// "some violation is reachable" is preserved, though the reduced search may report a different
// violation (another code or location) than an unreduced one would. Warnings (which do not end a
// run) are not preserved. (3) Fingerprint collisions, above.
// Counterexamples (verifier/counterexample.h): a breadth-first search's is a shortest path to a
// finding in the explored (reduced) graph; with reduction off (ExploreOptions::reduction =
// false), a shortest path of the schedule. The depth-first search reports its first path at
// once and then shortens it within a budget (ExploreOptions::shorten_budget_s), or with
// shortest_counterexample searches breadth-first for a shortest one. Every path reported is
// replayed on the engine and must reproduce its finding.
//
// Refinements (reducer.h): accesses carry kinds (engine::Access): complete_tx-only accesses to
// a barrier whose pending count is above zero commute once every arriving unit is in the set;
// arrive/complete_tx updates on a *balanced* barrier (the exact look-aheads' arrivals fit in the
// pending count and tx + expected - delivered bytes == 0) commute (reducer_balance.cc,
// ComputeBalanced gives the argument); where a barrier is reused (a ring's stages, k-tiles > stages) only what
// can happen before its current phase completes counts: each agent's future is cut at its first
// blocking wait on a phase that provably cannot complete first (reducer_balance.cc, GatedSums;
// ExploreOptions::phase_bounded_balance; a wait there also cannot pass while it needs, ahead of
// it in the agents' program order, as many arrivals on an arrival-only barrier as that barrier's
// current phase still waits for: reducer.h, ArrivalCost, ExploreOptions::arrival_costs), and by
// the same analysis an enabled wait commutes
// with the complete_tx and (once the preceding phase is observed) the arrivals of its barrier
// when that barrier's current phase cannot complete before the waiting agent moves, and with
// everything an agent does that cannot reach the barrier before then (StuckWhileStopped: a
// producer's passing wait on empty[s] against the consumers' releases of the next round,
// which need its own next load); cluster arrivals of distinct agents commute, and so do exits; an agent that
// is still expected at its cluster barrier and is in the set truncates its cluster peers'
// futures at their next barrier.cluster.wait; waits commute with waits, and on a balanced barrier
// with updates that cannot complete the phase while a unit of the set still holds an outstanding
// update (a blocked wait's necessary enabling set is then one holder); and a unit of the set
// whose step is an update of a balanced barrier holds back that barrier's current phase, so
// every other unit's future on that barrier ends at its wait on that phase (held-phase
// futures, explore/held_phase.cc, ExploreOptions::held_phase_futures: a producer's release and
// then its wait for everyone's releases do not pull it into every release's set). With at most 64 objects the closures are computed on 64-bit
// object masks (Reducer::ChooseMasks; ExploreOptions::mask_closure), giving the same sets.
// The tests compare the reduced search with the brute-force one (reduction = false): same
// verdicts, same terminal fingerprints, every barrier value of the reduced search reachable in
// the brute-force one.
//
// Exact peers (ExploreOptions::exact_peer_futures, on by default). Two refinements of the
// agents' futures that keep a ring of CTAs (CTA i stores into CTA i+1 and releases CTA i-1's
// slot) from chaining every CTA to its neighbours, the closure then holding every unit:
// (a) An st.async's complete_tx lands on one barrier slot, the barrier operand's in the
// destination CTA (Do(StAsync)). The look-ahead evaluates the destination and barrier operands
// on the agent's variables as it evaluates every other operand (Engine::AgentFuture: exact for
// roles whose operands do not depend on what a barrier answered), so the future names that slot
// with kCompleteTx and the store's bytes (an additive update, like a TMA delivery's, that the
// balance analysis counts), not the barrier in every CTA of the cluster as an update that
// breaks the balance. A producer storing into its right neighbour then shares no barrier with
// the consumers of the other CTAs.
// (b) With guarded waits an agent's future leaves out its barrier.cluster.wait operations. A
// future only has to cover the steps its unit may take on a path of steps outside the
// persistent set. In the guarded graph a cluster wait that is taken passes or violates (S1102),
// and such a step reads only its participant's arrival record and the cluster phase and writes
// only that record (see "Guarded waits" below): no other unit's step writes the record, and a
// passed phase stays passed, so it is independent of every other step (its step's footprint
// holds no shared object for that reason). A wait that would block is taken only when every
// enabled step would block, the set's own steps included, and a blocking step changes only its
// own agent. And a blocked member's necessary enabling set never counted waits (Conflict).
// What it changes: with an agent of the set still expected in the current cluster-barrier phase,
// a peer's future cut at its next barrier.cluster.wait (SetFutures) now holds its cluster
// arrival as kClusterArrive, not merged with the wait into kOther, and commutes with a member's
// arrival: a peer that has not arrived in the current phase arrives in it (it cannot complete
// without the member still expected), and so does the member's legal arrival, so neither
// completes the phase and they commute; a peer that has arrived in it arrives again legally only
// after a passing wait, which needs the phase to complete, which needs that member: not on a
// path outside the set (a second arrival before the wait is S1101, which reads only the
// participant's own record); a peer that arrived in a completed phase keeps its whole future
// (SetTrunc). So the CTAs' arrivals at a cluster barrier are no longer all interleaved.
// The every-path search (every_path.h) is unaffected in kind: two cluster arrivals of one phase
// commute without changing the phase, and cluster barriers add nothing to its digests.
//
// Named barriers (ExploreOptions::named_barrier_commute, verifier/explore/reducer_named.cc).
// Every bar.sync / bar.arrive touches its CTA's one named-barrier object, so an epilogue's bar.sync
// over 16 math warps pulled every warp whose future holds one into the set of any arrival, and
// each warp's last main-loop steps interleaved with every other's arrival. An arrival that
// cannot complete its instance now takes in only as many holders of further arrivals on that
// instance (in unit order) as keep the others from completing it on a path outside the set,
// and a blocked bar.sync only the units that can still arrive on its instance (one, where that
// one's arrival is necessary); reducer_named.cc gives the argument. The arrivals it lets commute
// join the same instance in either order, so the every-path search's digests (which record the
// instance an arrival joined) are unaffected in kind.
//
// Guarded waits (ExploreOptions::guarded_waits, on by default with reduction). The engine models
// a try_wait loop (`wait BAR parity P`, `wait BAR token T`) and barrier.cluster.wait as a step
// that either passes or *blocks* (marks the agent blocked; a completing phase makes it runnable
// again and it re-executes the wait). A blocking step is a stutter: it changes only the agent's
// own pc, variables (the control flow folded into it) and status; the model's test that fails
// changes no barrier (model WaitOnPhase returns before setting the observed flag;
// ClusterBarrier::Wait returns before consuming the arrival). Its outcome, though, depends on
// whether the phase has completed, so in the engine's graph it is dependent with every step that
// may complete the phase, and every agent that reaches a wait early doubles the interleavings
// (blocked, or not yet blocked, when the phase completes). This was the blow-up of the 2x2 GEMM
// with two consumers per CTA: the second consumer's wait on full[s] (and both consumers'
// barrier.cluster.wait) against the TMA deliveries and arrivals that complete those phases.
// The explorer therefore searches the *guarded* graph T': a step that would only block
// (Engine::PeekFootprint's blocks_on: the wait's test fails without a violation) is not taken
// while some other step is enabled; its agent counts as blocked on that object for the
// persistent set (its wait is enabled only by the phase completing, so rule (b) above pulls in
// the units that can complete it). When every enabled step would only block, they are all taken
// (they then lead to the engine's deadlock state, which is reported as usual).
// Soundness: take any path w of the engine's graph to a completed, deadlocked or violating state.
// Delete from w every blocking step b of an agent a that is followed by another step: b changed
// only a's private state and status, and the steps of other agents between b and a's next step
// do not read a's private state, so they stay enabled with the same effects (an agent blocked
// in w is merely not scheduled); a's next step in w re-executes the wait after a phase
// completion (a's variables and pc as after b, since re-running the folded control flow from
// the old pc gives the same values), so it is enabled and passes (or violates) identically
// without b. A woken agent's `wait` field differs (resumed: only the trace's kWaitBegin event
// depends on it), and the state after its passing wait clears it, so the end states are equal.
// The remaining blocking steps are those at the end of w, all of which block: in a deadlock all
// runnable agents' steps block and nothing is in flight, exactly the all-blocking case the guarded
// search takes. Hence every end state of the engine's graph is an end state of T', and
// persistent sets in T' preserve them as argued above. (With reduction off the search is the
// engine's graph, the tests' reference.)
// With guarded waits, an enabled barrier.cluster.wait step of agent p passes or violates (S1102:
// p has not arrived); either way it reads only p's arrival record and the cluster phase, writes
// only p's arrival record (ClusterBarrier::Wait), and no other agent's step changes p's record
// or makes a passed phase incomplete again (the phase only grows): it is independent of every
// other unit's step, so its footprint has no shared object.
//
// Symmetry reduction (ExploreOptions::symmetry, on by default with reduction; the result's
// `symmetry` line says whether it applied and why). Classes (verifier/symmetry.h): agents of one
// role in one CTA that agree on every agent-determined part of the role's operands (the values
// the `agent` builtin decides: branches, barrier indices, counts, parities, masks) and whose
// other reads of `agent` are stripe byte offsets that every access of the buffer treats alike;
// a `readback` anywhere, which tracks written data per agent, switches symmetry off. Such
// agents run the same code from the same initial variables, see the same builtins and values
// (same CTA, same agent-determined values) and touch the same objects: nothing in a step
// depends on an agent's global number except through per-agent state that moves with it (pc,
// status, variables, async-group state, its cluster barrier participant record, the in-flight
// operations it issued, which name it) and the byte offsets of trace events, which the stripe
// permutation maps consistently (symmetry.cc). So for any
// permutation pi of the agents within classes (applied to that per-agent state and to the
// issuer of every in-flight operation), s -> s' is a step iff pi(s) -> pi(s') is one, pi maps
// the initial state to itself, and pi maps completed / deadlocked / violating states to states
// of the same kind: pi is an automorphism of the transition system. The visited set stores
// Engine::SymmetricFingerprint, which is the same for s and pi(s) (the components of a class's
// agents are keyed by the class, not the agent, and summed: a multiset, like sorting them). A
// state whose fingerprint was seen is skipped; the stored state is a real state reached by a
// real path, so counterexamples replay as before.
// Soundness with persistent sets and state caching (cf. Emerson, Jha, Peled, "Combining partial
// order and symmetry reductions", TACAS 1997): the graph is acyclic (every run ends: a cycle
// through pi-equivalent states would, applying pi^k = id, give a cycle of the engine's graph).
// Claim: from every expanded state s, for every end state d reachable from s, the search stores
// a state pi(d) for some pi. By induction on the longest path from s: the persistent set at s
// holds a step t that begins a path to d of one step less (Godefroid, as in (1) above); if t(s)
// is new it is expanded (induction); if not, a stored state pi(t(s)) was expanded before (not an
// ancestor, by acyclicity) and pi(d) is reachable from it by a path as long, so by induction
// the search stores sigma(pi(d)). Violations likewise (the argument of (2), then this one).
// Verdicts are therefore preserved; counts of distinct end states are counted up to symmetry,
// and ExploreResult::terminals holds symmetric fingerprints in every search of such a schedule.
// Interchangeable CTAs (verifier/symmetry.h, CtaSymmetryGroup): a group G of permutations of
// the cluster's CTA ranks each of which is an automorphism of the transition system by the
// analysis there (rank r's agents, barrier slots, named barriers and in-flight operations move
// to rank g(r), with every rank, mask and slot they name). The visited set then stores
// CanonicalFingerprint: the least, over g in G, of a fingerprint of g(s) with the agent classes
// above (G maps classes to classes, so the pair generates one group, and the least value is
// the same for every image of s under it). The argument above holds with "pi" ranging over
// that group. The every-path search of the rules (every_path.h) uses the agent classes only:
// its pairs carry history digests that name CTAs, so it does not merge CTAs, which is correct
// and only slower.
// Search order: depth-first by default (memory: one engine per level); once the table is large
// (ExploreOptions::batch_table_bytes) a state's successors are generated together when it is
// expanded (stepped, fingerprinted and undone on the next level's engine, their table lines
// prefetched, then inserted; without reduction, those whose fingerprint is predicted are not
// stepped: predict_successors), and are marked visited then rather than when the search
// descends into them (the stored states are the same; which finding comes first may differ);
// on a finding the counterexample is shortened (above).
// Protocol rules (verifier/rules.h) run on one path to every distinct completed end state (the
// first path the search stored) during the search; when it finds nothing, they run on every path
// up to happens-before (verifier/every_path.h: a second search over the states paired with a
// digest of their history, with the argument why that covers every run), so that VERIFIED means
// no race and no rule violation on any path.
//
// Parallel searches (ExploreOptions::threads > 1). Depth-first (the default): T threads, each a
// depth-first search of its own, share one visited set and split each other's stacks
// (verifier/parallel_dfs.h, with the argument why no cycle proviso is needed and what varies
// from run to run: which finding comes first, the number of states); the every-path search of
// the rules that follows a search without findings runs on the same threads (every_path.h).
// Breadth-first
// (breadth_first): a level-synchronous search. Each
// level's frontier is cut into blocks that the threads expand (persistent set, stepping the
// successors, fingerprints) on engines of their own (Engine::IsolatedCopy) with reducers of
// their own; the fingerprint table is only read while they run. One thread then merges the
// level in frontier order exactly as the one-thread breadth-first search visits it (inserting
// fingerprints, numbering states, findings, rules). So the result does not depend on the number
// of threads: verdict, states, records and counterexample (the shortest, breadth-first),
// terminal sets and every counter of ExploreStats are those of breadth_first with one thread
// (the tests check this), except under --time-limit, where how far the search got varies
// (it stops at the first block the threads did not expand). Its merge runs on one thread, so it
// scales little (bench/RESULTS.md). Memory: the frontier of a level plus, per
// thread, the level's new successors, packed (Engine::Pack, as the one-thread breadth-first
// search holds its frontier), and per thread two engines.
//
#ifndef PARITY_VERIFIER_EXPLORE_H_
#define PARITY_VERIFIER_EXPLORE_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "sim/common/status.h"
#include "sim/engine/engine.h"
#include "sim/ir/ir.h"
#include "verifier/rules.h"

namespace parity::verifier {

struct ExploreResult;

struct ExploreOptions {
  uint64_t max_states = 50'000'000;  // stop (incomplete) after storing this many states
  double time_limit_s = 0;           // stop (incomplete) after this many seconds; 0 = none
  // Stop (incomplete) once the process's resident memory exceeds this many bytes; 0 = none.
  uint64_t max_memory_bytes = 0;
  bool reduction = true;             // persistent-set partial-order reduction
  // With reduction: guarded waits (see the header comment): a step that would only block on a
  // try_wait loop or a barrier.cluster.wait is not taken while another step is enabled.
  bool guarded_waits = true;
  // With reduction: symmetry reduction over interchangeable agents (see the header comment).
  bool symmetry = true;
  // Collect the fingerprints of every reachable completed and deadlocked terminal state (tests:
  // the reduced and the unreduced search must reach the same set). Costs memory.
  bool collect_terminals = false;
  // Stop at the first violation or deadlock (false: keep going to count all terminal states;
  // the first finding is still the one reported).
  bool stop_at_first = true;
  // Run the protocol rules (verifier/rules.h) on a path to every distinct completed end state
  // and on the counterexample.
  bool check_rules = true;
  // --strict: findings that are warnings by docs/levels.md (Finding::strict_only) count as
  // errors (a counterexample); otherwise they are collected (ExploreResult::warnings) and the
  // search goes on, so that no warning hides an error on another path.
  bool strict = false;
  // Breadth-first search throughout (memory: two levels of the frontier, packed by
  // Engine::Pack: a few hundred bytes a state). Default:
  // depth-first (memory: the fingerprint table and one engine per level of the current path),
  // and on a finding its counterexample is shortened (shorten_budget_s).
  bool breadth_first = false;
  // After a depth-first search found something (verifier/counterexample.h): the first path is
  // reported at once (on_first_counterexample), then shortened by dropping steps (replayed on
  // the engine) and by a breadth-first search bounded in depth by the shortened length, for at
  // most shorten_budget_s seconds (0: the first path is the one reported). time_limit_s bounds
  // the whole run, the shortening included.
  double shorten_budget_s = 2;
  // After a depth-first search found something: search breadth-first, without a budget (only
  // time_limit_s), for the shortest counterexample in the explored graph (`--shortest`).
  bool shortest_counterexample = false;
  // Called once, before any shortening, with the depth-first search's finding and its
  // counterexample (replay-validated): verdict, counterexample, findings, first_seconds, stats
  // so far. Not called by breadth-first searches (their first counterexample is the shortest).
  std::function<void(const ExploreResult&)> on_first_counterexample;
  // Breadth-first: states deeper than this are not expanded (0: no bound). Used by the
  // shortening; a search cut by it is incomplete (bound "--max-depth").
  uint32_t max_depth = 0;
  // Collect every distinct (slot, life, phase, pending, tx) of an mbarrier seen in a stored
  // state (tests compare the reduced search with the brute-force one).
  bool collect_barrier_states = false;
  // With reduction: compute persistent sets on 64-bit object masks when the schedule has at
  // most 64 objects (mbarrier slots, cluster and named barriers, agents' group states) and a
  // state at most 64 units (Reducer::ChooseMasks in reducer_masks.cc), else object by object. Both
  // give the same persistent sets (the tests compare them); false is for those tests.
  bool mask_closure = true;
  // Depth-first search: once the visited table is this large (bytes), a state's successors are
  // generated together (stepped, fingerprinted and undone on one engine, their table lines
  // prefetched, then inserted): the lookups of a table that does not fit in cache overlap.
  // Below it each successor is made (the state restored on the next level's engine), stepped
  // and looked up at once (fewer instructions while the table is in cache). Both store the
  // same states; 0 (tests) batches from the start.
  uint64_t batch_table_bytes = uint64_t{4} << 20;
  // With reduction: a barrier's updates count as balanced (they commute) when what can happen
  // before its current phase completes balances, cutting each agent's future at its first
  // blocking wait on a phase that cannot complete first (reducer_balance.cc, GatedSums). This is
  // what reduces pipelines that reuse a stage (k-tiles > stages). False: only whole futures count.
  bool phase_bounded_balance = true;
  // With reduction and guarded waits: a unit of a persistent set that holds a necessary update
  // of a balanced barrier's current phase keeps every other unit's future on that barrier
  // from reaching past its wait on that phase (explore/held_phase.cc). False: whole futures
  // (tests and benchmarks compare).
  bool held_phase_futures = true;
  // With reduction: exact peers (see the header comment): an agent's future counts the one
  // barrier slot each of its st.async stores completes (with its bytes, an update the balance
  // analysis counts) instead of that barrier in every CTA of the cluster, and with guarded
  // waits leaves its barrier.cluster.wait operations out. This is what keeps the CTAs of a ring
  // from chaining each to its neighbours. False is for the tests that compare the two.
  bool exact_peer_futures = true;
  // With reduction and phase_bounded_balance: arrival costs (reducer.h, ArrivalCost): a gate
  // whose completion needs, ahead of it in the agents' program order, as many arrivals on an
  // arrival-only barrier as that barrier's current phase still waits for cannot complete
  // before that phase does. False is for the tests that compare the two.
  bool arrival_costs = true;
  // With reduction: a named-barrier arrival (bar.sync / bar.arrive) that cannot complete its
  // barrier's instance takes into its persistent set only enough of the other arrivals' holders
  // that it cannot complete on a path outside the set, and a blocked bar.sync only the units
  // that can arrive on its instance (verifier/explore/reducer_named.cc). False is for the tests
  // that compare the two.
  bool named_barrier_commute = true;
  // Without reduction, depth-first: a successor's fingerprint is predicted without stepping
  // where the step commutes with the one that led to the state (explore/predict.h, Known): the
  // sum of fingerprint components changes by what the step changed at the parent; where the step is
  // a byte delivery (Predictor::PeekDeliveryDelta computes the change from the state); and where
  // it is an agent step that the memo of agent steps knows (explore/predict.h, AgentMemo: the same
  // agent state and the same states of the objects the step touched, no wake-up). A successor
  // predicted to be a state already stored is not stepped; in a batched expansion
  // (batch_table_bytes) without collect_barrier_states, a new one is stepped only when the
  // search descends into it (where its state is known to be running: another step is
  // enabled), and its fingerprint is checked there. The stored states, transitions and results
  // are those of the search without it (the tests compare them); false is for those tests.
  bool predict_successors = true;
  // Threads of the search. More than one: the depth-first search on that many threads sharing
  // one visited set (verifier/parallel_dfs.h), or with breadth_first a level-synchronous
  // breadth-first search whose expansions run in parallel (see the header comment), whose
  // result does not depend on the number of threads; either way the every-path search of the
  // rules (every_path.h) then runs on that many threads too.
  int threads = 1;
};

enum class ExploreVerdict : uint8_t {
  kVerified,    // complete search: every reachable run completes, no violation, no deadlock
  kViolation,   // a reachable run ends in a model violation (counterexample)
  kDeadlock,    // a reachable run ends in a deadlock (counterexample)
  kBadInput,    // the schedule cannot be instantiated, or a run hits a run-time input error
  kIncomplete,  // a bound stopped the search before it was complete and nothing was found
  kRuleViolation,  // a reachable run completes but breaks a protocol rule (verifier/rules.h)
};

// One mbarrier's value in some reachable state (collect_barrier_states): its slot and the
// fields of model::MbarrierState::ValueFields (the others keep their defaults).
struct BarrierValue {
  uint32_t slot = 0;
  model::MbarrierState state;
  static BarrierValue Of(uint32_t slot, const model::MbarrierState& s) {
    BarrierValue v;
    v.slot = slot;
    v.state.ValueFields() = s.ValueFields();
    return v;
  }
  auto Key() const { return std::tuple_cat(std::tie(slot), state.ValueFields()); }
  bool operator==(const BarrierValue& o) const { return Key() == o.Key(); }
  bool operator<(const BarrierValue& o) const { return Key() < o.Key(); }
};
const char* ExploreVerdictName(ExploreVerdict v);

struct ExploreStats {
  uint64_t states = 0;            // distinct states stored (terminal states included)
  uint64_t expanded = 0;          // states whose successors were generated
  uint64_t transitions = 0;       // steps taken in the explored (reduced) graph
  uint64_t enabled = 0;           // steps enabled at the expanded states (sum)
  uint64_t pruned = 0;            // steps the reduction left out at the expanded states (0
                                  // without reduction); enabled - pruned - transitions: steps
                                  // it chose that a bound (--max-states, --time-limit) left
                                  // untaken
  uint64_t predicted = 0;         // transitions to stored states known without stepping
                                  // (predict_successors)
  uint64_t predicted_new = 0;     // new states stored by their predicted fingerprint (stepped
                                  // when the search descended into them)
  uint64_t memo_hits = 0;         // agent steps predicted from the memo of agent steps
  uint64_t held_phase_cuts = 0;   // closures the held-phase rule kept a unit out of
                                  // (explore/held_phase.cc; the search's own reducers)
  uint64_t completed_ends = 0;    // distinct completed terminal states
  uint64_t deadlock_ends = 0;     // distinct deadlocked terminal states
  uint64_t violation_ends = 0;    // distinct violating terminal states
  uint64_t rule_paths = 0;        // completed paths the protocol rules were run on
  uint64_t rule_violation_ends = 0;  // of those, paths with an error finding
  uint64_t history_states = 0;    // the rules on every path (verifier/every_path.h): (state,
                                  // history digest) pairs stored
  uint64_t history_completed = 0;  // ... completed ones, whose rules ran
  uint32_t depth = 0;             // deepest level (breadth-first) or path length (depth-first)
  uint64_t peak_frontier = 0;     // most states held at once besides the table: the
                                  // breadth-first frontier (packed), or the depth-first path
                                  // (an engine per level)
  uint64_t table_bytes = 0;       // fingerprint table + per-state parent records
  uint64_t frontier_bytes = 0;    // breadth-first: the most bytes the packed frontier (two
                                  // levels, Engine::Pack) held
  double seconds = 0;
  double bytes_per_state() const { return states ? double(table_bytes) / double(states) : 0; }
  double states_per_second() const { return seconds > 0 ? double(states) / seconds : 0; }
};

// One step of a replayed counterexample: who took it, and the events it added to the trace.
struct ReplayedStep {
  uint32_t agent = 0;         // the stepping agent, or the issuer of the completing operation
  bool asynchronous = false;  // an in-flight operation completes
  size_t first_event = 0;     // the step's events: [first_event, end_event) of end->trace()
  size_t end_event = 0;
};

// A counterexample replayed on the engine with its trace recorded, once: every report of it (the
// API's steps and findings, text, JSON, SARIF, HTML, the narration) reads this one replay.
struct ReplayedPath {
  std::shared_ptr<const engine::Engine> end;  // after the last step (end->result(): the finding)
  std::vector<ReplayedStep> steps;
};

// A counterexample re-run with the copies' bytes credited in pieces, as Hopper may credit them
// (engine::EngineOptions::tx_pieces, traces/import/bad_tx/): the early phase completions
// (P2002) that run shows and the whole-box run cannot (there the phase stays open instead).
struct PieceRun {
  std::shared_ptr<const engine::Engine> end;  // the re-run (its trace names the findings' events)
  std::vector<Finding> early;                 // P2002 findings, their message saying "in pieces"
};

// Re-runs `prefix` (the whole-box run's steps, while they are enabled and until the first piece
// lands), then the rest by the policy of `options`, with tx_pieces on. An empty result when the
// schedule cannot run or the run ends in a model error.
PieceRun RunInPieces(const ir::Program& program, const std::vector<int64_t>& params,
                     engine::EngineOptions options, const std::vector<engine::Choice>& prefix);

struct ExploreResult {
  ExploreVerdict verdict = ExploreVerdict::kVerified;
  ExploreStats stats;
  std::string bound;  // kIncomplete: which bound stopped the search ("--max-states", ...)
  // kViolation / kDeadlock: the steps from the initial state to the finding (replay them with
  // Replay to get the trace and the final RunResult).
  std::vector<engine::Choice> counterexample;
  // Whether the counterexample is known to be a shortest one in the explored graph (a
  // breadth-first search found it, or one bounded by its length found nothing shorter).
  bool counterexample_shortest = true;
  // The depth-first search's first counterexample (as on_first_counterexample saw it) and when
  // it was found (seconds from the start); empty when the search was breadth-first.
  std::vector<engine::Choice> first_counterexample;
  double first_seconds = 0;
  // How the reported counterexample was obtained from the first one (one line for the report).
  std::string shortening;
  // The breadth-first search that looked for a shorter counterexample (after a depth-first
  // search found something), its statistics; stats are the depth-first search's.
  bool has_bfs_stats = false;
  ExploreStats bfs_stats;
  // kRuleViolation: the protocol findings on the counterexample path.
  std::vector<Finding> findings;
  // The counterexample's one replay (empty when there is none). on_first_counterexample sees
  // the first counterexample's; a shortened counterexample is replayed once more, as its own.
  ReplayedPath replayed;
  // The counterexample's end credits a copy's bytes at once where Hopper may credit them in
  // pieces (RunResult::tx_pieces_differ): the run in pieces and its early completions.
  PieceRun in_pieces;
  // Warnings (Finding::strict_only, not options.strict) on the paths the rules ran on, each
  // once (by rule, agents, statements and object); reported with any verdict, VERIFIED too.
  std::vector<Finding> warnings;
  std::vector<BarrierValue> barrier_states;  // collect_barrier_states: sorted, distinct
  Status error;  // kBadInput
  // collect_terminals: sorted fingerprints; when the schedule has symmetry classes they are
  // Engine::SymmetricFingerprint values (the same for states equal up to the symmetry), in
  // every search, so that a brute-force search and a symmetry-reduced one compare.
  std::vector<uint64_t> terminals;
  // The program's `exists` properties that hold in some completed end state the search
  // reached (bits as Engine::ExistsHeld numbers them). A complete search that reached none for
  // some property is kRuleViolation with a P2034 finding per such property and no
  // counterexample (verifier/rules.h, ExistsFindings).
  uint64_t exists_held = 0;
  // The ids of the assertions (asserts and forall properties) that failed at a violating end
  // state the search reached, sorted (every search: one thread or several, depth- or
  // breadth-first; the differential tests compare them with the brute force and the oracle).
  std::vector<int64_t> failed_assertions;
  // Whether symmetry reduction was applied, and why not (one line for the report).
  bool symmetry_applied = false;
  std::string symmetry = "symmetry reduction: not applied";
};

ExploreResult Explore(const ir::Program& program, const std::vector<int64_t>& params,
                      const ExploreOptions& options = {});

// The balance analysis of the partial-order reduction (reducer_balance.cc) in one state, per
// mbarrier slot: whether its arrive/complete_tx updates commute when every unit's whole future counts
// (ComputeBalanced), and when only what can happen before the slot's current phase completes
// counts (ExploreOptions::phase_bounded_balance; GatedSums), with the sums used for the latter
// (arrivals, expect_tx and complete_tx bytes still to come in the phase; the whole futures'
// when no agent's future has a blocking wait). For tests and for explaining a reduction.
struct SlotBalance {
  uint32_t slot = 0;
  bool whole = false;
  bool phase = false;
  int64_t arrivals = 0, expect = 0, complete = 0;
};
std::vector<SlotBalance> AnalyseBalance(const engine::Engine& state);

// Re-runs `choices` from the initial state with trace recording on; returns the engine after the
// last step (its result() is the finding's RunResult). Fails on bad input.
Expected<engine::Engine> Replay(const ir::Program& program, const std::vector<int64_t>& params,
                                const std::vector<engine::Choice>& choices);
// The same replay, with each step's agent and events (ReplayedPath).
Expected<ReplayedPath> ReplayPath(const ir::Program& program, const std::vector<int64_t>& params,
                                  const std::vector<engine::Choice>& choices);
// The same two from a copy of `initial`, an initial state made with record_trace (a caller
// that replays several paths of one program creates the engine once: Engine::CreatedCount).
Expected<engine::Engine> Replay(const engine::Engine& initial,
                                const std::vector<engine::Choice>& choices);
Expected<ReplayedPath> ReplayPath(const engine::Engine& initial,
                                  const std::vector<engine::Choice>& choices);

}  // namespace parity::verifier

#endif  // PARITY_VERIFIER_EXPLORE_H_
