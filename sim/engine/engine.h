// The Parity engine: runs a bound schedule (ir::Program + param values) on a model of a Hopper
// cluster grid and reports how the run ends.
//
// Adding state (one edit): the mutable state is declared once, in the component table
// (sim/engine/components.h, Engine::Table). A field of an existing part goes into that part's
// field list (AgentState::StateFields, InFlight::Fields, model::MbarrierState::Fields; a
// static_assert fails when a field of AgentState or InFlight is in no list); a new part of an
// object goes into Table::AgentParts or ObjectParts (with a Words overload for its type when
// it is not a list of fields); a member that is not per object into ObjectMembers or
// RunMembers. Copy, undo (RestoreStep), Pack/Unpack, StateWords/StateHash and the fingerprint
// are made from the table. Handlers change state only through Exec's accessors (exec.h:
// Slot, Cluster, Named, Cp, Bulk, Agent, Vars, Issue, ...), which mark what they touch; Exec
// reads the state through a const Engine, so a write past them does not compile.
// Adding an op: its ir::Op alternative (sim/ir/ir.h), a Do overload in exec_sync.cc or
// exec_copies.cc (declared in exec.h; ExecOp visits it), and what the look-ahead counts for it
// (exec_future.cc, SoloFuture).
//
// What is instantiated (Engine::Create):
//   clusters x CTAs (cluster_m x cluster_n, %cluster_ctarank = x + y * cluster_m) x roles x agents.
//   An *agent* is one instance of a role in one CTA (an elected thread, a warp or a warpgroup
//   acting as one). Agents are numbered globally in (cluster, cta, role, agent-in-role) order;
//   TraceEvent::agent is the agent's number within its CTA.
//   Per CTA: every `barrier` array as model::MbarrierState values (sim/model/mbarrier.h), the
//   `buffer` slots at fixed shared-memory offsets (same in every CTA), 16 named barriers.
//   Per cluster: the cluster barrier (barrier.cluster). Per agent: a program counter over the
//   role's statements compiled to a flat instruction list (loops and ifs become jumps), variable
//   slots, cp.async and bulk async-group counters.
//
// How it runs: a *step* is either an agent executing its next operation (control flow before
// it is folded into the same step), or one in-flight asynchronous operation completing (a TMA or
// bulk-copy delivery = complete_tx of its bytes on one destination CTA's mbarrier; a cp.async
// completion; a cp.async.mbarrier.arrive landing; an st.async landing; a TMA/bulk store's source
// read or global write). A wait whose phase has not completed blocks the agent (it is not
// runnable until that phase completes; then it re-executes the wait, which asks the model
// again). Every transition of an mbarrier is a call into sim/model/mbarrier.h; TMA box bytes,
// shared-address and multicast rules come from sim/model/tma.h and tensor_map.h.
//
// Driving it: Run() applies the configured Policy until the run ends. An explorer instead calls
// Choices() and Step(choice) itself, and copies the Engine (value semantics: the immutable compiled
// program is shared; the mutable state whose size the program fixes is one block, and the rest a
// few vectors of PODs, so a copy is a few memcpys), undoes a step with RestoreStep, or hashes it
// with StateHash() / Fingerprint().
//
// How a run ends (Outcome):
//   kCompleted  every agent exited and nothing is in flight.
//   kDeadlock   nothing can progress but some agent has not exited. DeadlockInfo (below) holds
//               what a wait-for-graph diagnosis needs.
//   kViolation  the model reported a violation (sim/model/codes.h); ViolationInfo holds the code,
//               the numbers, the agent, the source location and the trace event that caused it.
//   kError      bad input discovered while running (an expression fault such as a division by
//               zero, an index outside its array, a CTA rank outside the cluster): a Status.
//   kStepLimit  EngineOptions::max_steps was reached (a runaway loop).
// Warnings (Severity::kWarning codes, e.g. A1002 empty commit) are collected in
// RunResult::warnings and do not end the run.
//
// Deadlock diagnosis API (what verifier/ builds its wait-for graph from), all in RunResult:
//   deadlock.blocked  one BlockedAgent per agent that has not exited (at a deadlock every one of
//                     them is blocked): its global id (agent_info() gives cluster, CTA rank, role,
//                     index), the wait statement's location, and what it waits on:
//                       mbarrier waits: barrier (index into Program::barriers), element, CTA rank
//                       (always the waiter's own CTA), parity or token phase, and a copy of that
//                       barrier's model state (phase = completed phases, pending_count = arrivals
//                       still missing, expected_count, tx_count = bytes still outstanding);
//                       barrier.cluster: arrived / expected participants (agents);
//                       bar.sync: the id in `barrier`, threads arrived / expected;
//                       cp.async / bulk wait_group: N in `pending`.
//   deadlock.exited   global ids of the agents that exited.
// barrier_state() reads any barrier of any CTA afterwards (e.g. the barriers the blocked agents'
// peers should have signalled). Nothing is in flight at a deadlock: async operations can always
// complete, so a deadlock is never "waiting for bytes that are still on their way".
//
// Threads: an Engine and its copies share the compiled program, which holds two lazily filled
// memo tables (multicast destinations, shared-address checks); step copies from one thread only
// (or give each thread an Engine of its own from Create or IsolatedCopy, and move states between
// them with AssignState). Fingerprint and SymmetricFingerprint refresh a cache kept with the
// state: do not call them on one engine from two threads at once (after one call, until the
// next step, calls with the same group only read it).
//
// Performance: the hot path does not allocate (trace records go to a vector whose capacity a
// reused engine keeps; in-flight operations to a reserved vector). Expressions that do not read
// a variable are evaluated once per agent at Create; constants, variables and simple binary
// operators on them are evaluated inline, the rest (and every fault) by ir::EvalFast.
#ifndef PARITY_SIM_ENGINE_ENGINE_H_
#define PARITY_SIM_ENGINE_ENGINE_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "sim/common/status.h"
#include "sim/ir/eval.h"
#include "sim/ir/ir.h"
#include "sim/model/async_groups.h"
#include "sim/model/codes.h"
#include "sim/model/mbarrier.h"
#include "sim/model/sync_barriers.h"
#include "sim/trace/event.h"

namespace parity::engine {

// The fingerprint's mixing (fingerprint.cc): one word into a running hash, and the finalisation.
namespace fpmix {
// xor, multiply by an odd constant, xorshift: for a given word each step is a bijection of the
// running value, so two word sequences that differ first at word i reach different values
// there, and meet again only if a later pair of words differs by exactly the (well mixed)
// difference of the running values.
inline uint64_t Word(uint64_t h, uint64_t v) {
  h = (h ^ v) * 0xbf58476d1ce4e5b9ull;
  return h ^ (h >> 32);
}
// murmur3's fmix64: spreads every bit over the whole word (every component ends with it).
inline uint64_t Final(uint64_t h) {
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  h *= 0xc4ceb9fe1a85ec53ull;
  return h ^ (h >> 33);
}
}  // namespace fpmix

enum class Policy : uint8_t {
  kEager,       // in-flight operations complete as soon as possible (before any agent step)
  kLazy,        // agents run as long as any can; an async op completes only when none can
                // (the most recently issued first)
  kRoundRobin,  // agents take turns in a fixed cyclic order (global agent id); between two
                // turns one in-flight op (if any; the first of the in-flight list) completes
  kRandom,      // uniformly random among all choices (agent steps and completions), `seed`
};
const char* PolicyName(Policy p);

struct EngineOptions {
  Policy policy = Policy::kEager;
  uint64_t seed = 0;
  uint64_t max_steps = uint64_t{1} << 40;
  // A run that has emitted this many events also stops with Outcome::kStepLimit: the trace is
  // the memory a run holds, so the tools cap it (check/run/explain --max-events).
  uint64_t max_events = ~uint64_t{0};
  bool record_trace = true;  // false: count events only (benchmarks, exploration)
  // How a TMA or bulk load's complete_tx reaches its barrier when the copy carries more bytes
  // than the barrier's phase still expects (0 < tx-count < bytes at the landing). false: the
  // whole box at once (tx-count goes negative and the phase stays open). true: in pieces, so
  // tx-count passes through 0: the first `tx-count` bytes land (the phase completes when no
  // arrival is pending) and the rest stay in flight as a copy of their own, credited to the
  // next phase. Hopper does either, landing by landing, depending on timing
  // (traces/import/bad_tx/README.md): the litmus enumeration and replay try the combinations,
  // check and explore add the findings of a run with pieces. Copies whose bytes fit the phase
  // land the same either way. Not for the explorer's reductions (a landing that chooses reads
  // tx-count).
  bool tx_pieces = false;
  // Without tx_pieces: the landings that credit in pieces all the same, by barrier slot and the
  // phase they meet (TxPieceKey), sorted. RunResult::tx_piece_keys lists the candidates.
  std::vector<uint64_t> tx_pieces_at;
};

// The key of a landing in EngineOptions::tx_pieces_at: the global barrier slot and the number of
// phases it had completed when the bytes met it.
inline uint64_t TxPieceKey(uint32_t slot, uint32_t phase) {
  return (uint64_t{slot} << 32) | phase;
}

enum class Outcome : uint8_t { kRunning, kCompleted, kDeadlock, kViolation, kError, kStepLimit };
const char* OutcomeName(Outcome o);

// One enabled step: an agent step (index = global agent id) or the completion of in-flight
// operation `index` (an index into the current in-flight list; valid until the next Step).
struct Choice {
  enum class Kind : uint8_t { kAgent, kAsync };
  Kind kind = Kind::kAgent;
  uint32_t index = 0;
  bool operator==(const Choice&) const = default;
};

// Static facts about one agent.
struct AgentInfo {
  uint32_t cluster = 0;
  uint32_t cta = 0;            // %cluster_ctarank
  uint32_t cta_global = 0;     // cluster * cluster_size + cta
  uint32_t role = 0;           // index into Program::roles
  uint32_t index_in_role = 0;  // the `agent` builtin
  uint32_t index_in_cta = 0;   // TraceEvent::agent
  uint32_t threads = 1;        // threads the agent stands for (named barriers)
  uint32_t grid = 0;           // ir::Role::grid: 0 the schedule's own, g the g-th before it
};

// What a blocked agent waits for.
enum class WaitKind : uint8_t {
  kNone,
  kMbarrierParity,  // wait BAR parity P (try_wait.parity loop)
  kMbarrierToken,   // wait BAR token T (try_wait loop on a state token)
  kClusterBarrier,  // barrier.cluster.wait
  kNamedBarrier,    // bar.sync id
  kCpAsyncGroups,   // cp.async.wait_group N / wait_all
  kBulkGroups,      // cp.async.bulk.wait_group[.read] N
  kGridDependency,  // griddepcontrol.wait: until every agent of the primary grid exited
};
const char* WaitKindName(WaitKind k);

// A blocked agent and the state of the object it waits on (for the deadlock diagnosis).
struct BlockedAgent {
  uint32_t agent = 0;           // global agent id (Engine::agent_info(agent) for where it runs)
  WaitKind wait = WaitKind::kNone;
  SourceLocation where;         // the wait statement
  // kMbarrier*: the barrier (always the agent's own CTA: PTX allows waits only on local
  // mbarriers), the parity or the token's phase number, and the barrier's model state now
  // (pending_count = arrivals still missing in the current phase, expected_count, tx_count =
  // bytes still outstanding; phase = completed phases).
  uint32_t barrier = 0;         // index into Program::barriers
  uint32_t barrier_index = 0;   // element of the array
  uint32_t cta = 0;             // CTA rank of the barrier (= the agent's CTA)
  uint32_t parity = 0;          // kMbarrierParity
  uint32_t token_phase = 0;     // kMbarrierToken
  model::MbarrierState state;
  // kClusterBarrier: arrivals so far / agents expected in this cluster-barrier phase.
  // kNamedBarrier: named barrier id in `barrier`, threads arrived / expected.
  // k*Groups: `pending` = the N of the wait, `arrived` = groups still outstanding.
  // kGridDependency: `arrived` = agents of the primary grid that exited, `expected` = all of
  // its agents (Engine::primary_agents()).
  uint32_t arrived = 0;
  uint32_t expected = 0;
  uint32_t pending = 0;
};

struct DeadlockInfo {
  std::vector<BlockedAgent> blocked;  // every agent that has not exited (all are blocked)
  std::vector<uint32_t> exited;       // global ids of agents that exited
};

struct ViolationInfo {
  model::Violation violation{};
  uint32_t agent = 0;          // the agent whose operation (or whose async op) caused it
  bool from_async = false;     // caused by an in-flight operation completing
  SourceLocation where;        // the statement (for async: the issuing statement)
  trace::TraceEvent event{};   // the kViolation event (also the last event of the trace)
};

struct RunResult {
  Outcome outcome = Outcome::kRunning;
  uint64_t steps = 0;
  uint64_t events = 0;
  std::optional<ViolationInfo> violation;  // kViolation
  DeadlockInfo deadlock;                   // kDeadlock
  Status error;                            // kError
  // Warnings (Severity::kWarning codes such as A1002 empty commit): reported, run continues.
  std::vector<ViolationInfo> warnings;
  // A load landed whole on a barrier whose phase expected fewer bytes than it carries
  // (0 < tx-count < bytes), where a run with EngineOptions::tx_pieces takes another path (the
  // phase completes mid-copy). Not part of the state.
  bool tx_pieces_differ = false;
  // Every such landing, whole or in pieces: its TxPieceKey, in the order met.
  std::vector<uint64_t> tx_piece_keys;
};

// The shared objects one step touched (read or wrote), for partial-order reduction
// (verifier/explore.h). Object numbers (Engine::num_objects()):
//   [0, S)                    mbarrier slots (global slot = barrier_state's (CTA, name, index));
//   S + cluster               the cluster barrier of a cluster;
//   S + clusters + cta        the named barriers (bar.sync) of a CTA (global CTA number);
//   S + clusters + ctas + a   agent a's cp.async and bulk async-group state (its in-flight
//                             cp.async / store completions touch it too).
// Everything else a step changes is private to the stepping agent (pc, variables) or the
// multiset of in-flight operations (appending and removing distinct elements commute). A wake-up
// of blocked agents is a consequence of touching the object it waits on.
//
// Each object carries how it was accessed (Access), so that the explorer can let accesses that
// commute by their arithmetic (not just by touching different objects) be independent:
//   kCompleteTx     only complete_tx on an mbarrier (a TMA/bulk/st.async delivery or the
//                   complete_tx statement): tx_count -= bytes; the pending count is untouched,
//                   so while the pending count is above zero no such access can complete the
//                   phase (PTX ISA 9.7.13.15.x, mbarrier phase completion: pending arrivals 0 AND
//                   tx-count 0) and any two of them give the same state in either order;
//   kClusterArrive  barrier.cluster.arrive: two arrivals of distinct participants that both have
//                   not arrived yet can never complete the phase alone (each waits for the
//                   other), and give the same state in either order;
//   kExit           an agent's exit leaving the cluster barrier's and the named barriers'
//                   expected sets: two exits give the same state in either order;
//   kOther          anything else (reads the state, or may complete a phase): dependent with
//                   every access to the same object.
//   kArrive         an mbarrier arrive-on (count k, optionally with expect_tx; not .noComplete,
//                   not arrive_drop): pending -= k, tx += bytes. Additive like complete_tx, but
//                   it may complete the phase: the explorer lets it commute only when it can
//                   prove from the agents' futures (UpdateTally) that no such update completes
//                   the phase alone (verifier/explore.cc, Balanced).
//   kWait           an mbarrier test_wait/try_wait or barrier.cluster.wait: reads the phase, and
//                   at most sets the barrier's "preceding phase observed" flag (idempotent), so
//                   two waits commute; a wait does not commute with an arrive-on while that
//                   flag is false (rule M1009 reads it).
// An object touched twice with different kinds is kOther, except kArrive + kCompleteTx, which is
// kArrive (the explorer's rules for kArrive are the stricter ones).
enum class Access : uint8_t {
  kOther = 0,
  kCompleteTx = 1,
  kClusterArrive = 2,
  kExit = 3,
  kArrive = 4,
  kWait = 5,
};
inline Access MergeAccess(Access a, Access b) {
  if (a == b) return a;
  if ((a == Access::kArrive && b == Access::kCompleteTx) ||
      (a == Access::kCompleteTx && b == Access::kArrive)) {
    return Access::kArrive;
  }
  return Access::kOther;
}

// What an agent's remaining operations will do to one mbarrier slot (Engine::AgentFuture), one
// record per operation and destination: arrivals (the sum of the arrive counts), expect_tx bytes
// that come with those arrivals, complete_tx bytes (its TMA deliveries, st.async stores into the
// destination CTA's barrier, and complete_tx), and `breaks` for anything that is not such an
// additive update or whose bytes the look-ahead does not compute (init, inval, expect_tx without
// arrive, .noComplete, arrive_drop, cp.async.mbarrier.arrive, bulk copies).
//
// With a tally, a blocking parity wait (try_wait.parity on the agent's own CTA's barrier, not
// test_wait, not a token) is recorded in order among the updates as a *gate*: `gate` is its
// parity (0 or 1) and every count is 0. While that slot's current phase has the gate's parity
// and does not complete, the agent stops there: the explorer bounds what can happen before a
// phase completes by the updates ahead of the first such gate (verifier/explore.cc,
// GatedSums). Any other wait on a slot (test_wait, a token, a peer CTA's barrier, a parity the
// look-ahead cannot evaluate) is recorded in order too, with `gate` kReadsPhase: it reads the
// phase and never stops the look-ahead (explore/held_phase.cc).
struct UpdateTally {
  static constexpr int8_t kReadsPhase = 2;
  uint32_t slot = 0;
  int64_t arrivals = 0;
  int64_t expect = 0;
  int64_t complete = 0;
  bool breaks = false;
  int8_t gate = -1;  // a blocking wait on `slot` for this parity (0, 1), a wait that only
                     // reads the phase (kReadsPhase); -1: an update record
};

// What an agent's remaining operations do to named-barrier objects (Engine::AgentFuture with
// `named`), one record per operation in program order: a bar.sync / bar.arrive on its own CTA's
// named barriers (`id`, `count` the operand b, `sync`), or an access that only reads whether a
// CTA exited (a DSMEM access of a peer, a griddepcontrol.wait: id kExitRead). `valid` is false
// when the bar's operands do not evaluate or the model would refuse them (S1001, S1002): the
// explorer then knows nothing about that agent's arrivals. `first` marks the record of the
// agent's next operation.
struct NamedAccess {
  static constexpr uint32_t kExitRead = 0xffffffffu;
  uint32_t object = 0;  // Engine::NamedObject of the CTA
  uint32_t id = 0;
  uint32_t count = 0;
  bool sync = false;
  bool valid = false;
  bool first = false;
};

struct Footprint {
  static constexpr uint32_t kMax = 64;
  uint32_t n = 0;
  bool overflow = false;  // more than kMax objects: treat the step as touching everything
  uint32_t objects[kMax] = {};
  Access kinds[kMax] = {};
  // Empties it (the arrays past n are never read: no need to zero them).
  void Clear() {
    n = 0;
    overflow = false;
  }
  void Add(uint32_t o, Access k = Access::kOther) {
    for (uint32_t i = 0; i < n; ++i) {
      if (objects[i] == o) {
        kinds[i] = MergeAccess(kinds[i], k);
        return;
      }
    }
    if (n == kMax) {
      overflow = true;
      return;
    }
    kinds[n] = k;
    objects[n++] = o;
  }
};

class Engine {
 public:
  // Binds and instantiates `program` with the given param values (one per Program::params, e.g.
  // from ir::BindParams). Errors: declaration expressions that fail to evaluate, bad cluster
  // shape, tensor maps the model rejects (tensor-map.* rules), shared memory overflow, ...
  // `program` must outlive the engine and its copies.
  static Expected<Engine> Create(const ir::Program& program, std::vector<int64_t> params,
                                 EngineOptions options = {});
  // How many times Create has been called in this process (copies are not counted): what tests
  // pin to hold a command to the engines it needs (a counterexample is replayed once).
  static uint64_t CreatedCount();

  // Runs with the configured policy until the run ends.
  RunResult Run();

  // --- State-space interface (what verifier/ searches through) ---
  // The states of a run as a graph: Choices and Step (a transition, with its Footprint),
  // RestoreStep (the undo of the steps since a copy), Fingerprint / SymmetricFingerprint
  // (state identity), Pack / Unpack (a stored state), the reduction's queries (AgentFuture,
  // PeekFootprint, AgentMayTouch, object numbers) and read-only views of the state
  // (agent_state, slot_state, in_flight_ops, ...). The successor prediction's internals
  // (fingerprint sums, step marks, delivery peeks) are not here: Predictor (below) reaches them.
  // The enabled steps now: runnable agents (ascending id), then every in-flight op that may
  // complete, in in_flight_ops() order. Empty once the run has ended. The explorer's successor
  // prediction relies on how that list changes with a step: delivering op i moves the last op
  // into slot i; a step appends ops and removes none other.
  void Choices(std::vector<Choice>* out) const;
  // Takes one step. The choice must be one of Choices(). Returns the outcome after the step
  // (kRunning while the run goes on).
  Outcome Step(Choice choice);
  // The same, and records in *touched the objects the step touched (see Footprint).
  Outcome Step(Choice choice, Footprint* touched);
  Outcome outcome() const { return outcome_; }
  const RunResult& result() const { return result_; }
  // The state as words in a canonical order, every field of it, so that two states are equal
  // exactly when their words are: the outcome; per agent its pc, status, wait (and what it
  // waits on while it waits), cluster-arrival flag, async-group states and variables; every
  // mbarrier slot, cluster barrier (with its participants' records) and CTA's named barriers;
  // the `readback` content tags; the in-flight and deferred operations as multisets (sorted).
  // Not the trace, the counters, the ready list's order or the policy's cursor. The reference
  // that StateHash, and the tests of Fingerprint and Pack, are held to.
  void StateWords(std::vector<uint64_t>* out) const;
  // A hash of StateWords: equal states of different histories hash equal.
  uint64_t StateHash() const;
  // A 64-bit fingerprint of the same state as StateHash (equal states, equal fingerprints): the
  // explorer stores only this. It is a sum (mod 2^64) of strongly mixed components (per-word
  // multiply-xorshift, murmur3's fmix64 at the end of each), one per agent (keyed by its id:
  // pc, status, wait, cluster flag, variables, async-group state and the in-flight operations it
  // issued, the latter as a sum of per-operation hashes) and one per shared object (keyed by its
  // number: each mbarrier slot, each cluster barrier, each CTA's named barriers), finalised with
  // the outcome. The components are kept with the state and updated incrementally: a Step marks
  // what it changed (every object it touches, the stepping agent, the agents it wakes, the
  // issuer of a completing operation) and the next fingerprint recomputes only those
  // components. Collisions: for two distinct states the difference of the sums is a non-zero
  // combination of component hashes with integer coefficients bounded by the number of equal
  // components (at most the largest symmetry class, else 1); modelling the components as
  // independent uniform values it is zero with probability at most m * 2^-64 (m that bound),
  // and the finalisation is a bijection of the sum for a given outcome.
  uint64_t Fingerprint() const;
  // The fingerprint modulo a permutation of interchangeable agents (symmetry reduction,
  // verifier/explore.h): group[a] is agent a's class (kNoGroup: none). The component of an agent
  // of a class is keyed by the class instead of the agent's id (its content, in-flight
  // operations included, is hashed without the id), so the sum of a class's components is the
  // same for two states that differ by a permutation of agents within classes (with their
  // in-flight operations): a multiset of components, as sorting them would give. Only
  // meaningful when the permutation is an automorphism of the transition system (the caller's
  // check). Equal to Fingerprint() when no agent has a class.
  static constexpr uint32_t kNoGroup = 0xffffffffu;
  uint64_t SymmetricFingerprint(const std::vector<uint32_t>& group) const;
  // The least, over `perms` (permutations of CTA ranks, applied in every cluster alike:
  // interchangeable CTAs, verifier/symmetry.h), of a fingerprint of the state mapped by the
  // permutation: rank r's agents, mbarrier slots and named barriers become rank perm[r]'s, and
  // every CTA rank and mbarrier slot that a waiting agent or an in-flight operation names is
  // mapped the same way. An agent is keyed by its image's class in `group` (nullptr or
  // kNoGroup: by its image's id), as SymmetricFingerprint keys it. hidden[role][v] != 0 leaves
  // variable v of the role's agents out: the caller's argument is that its value is a function
  // of the agent and its pc. Computed from scratch; not the values of Fingerprint(). With
  // `perms` a group (the identity included) it is the same for a state and all its images.
  uint64_t MinPermutedFingerprint(const std::vector<std::vector<uint32_t>>& perms,
                                  const std::vector<uint32_t>* group,
                                  const std::vector<std::vector<uint8_t>>& hidden) const;
  // Self-checks of the incremental state (builds with assertions only: the tests): every 8th
  // Fingerprint / SymmetricFingerprint and every 8th RestoreStep of a thread is compared with
  // the same computed from scratch, which catches a step that changes state without marking it
  // (Exec's accessors). Process-wide, on by default; the `parity` command turns them off (they took
  // half of a brute-force explore's time) unless PARITY_SELF_CHECKS=1 is set.
  static void SetSelfChecks(bool on);
  static bool SelfChecks();

  // --- Partial-order reduction support (verifier/explore.h) ---
  uint32_t num_objects() const { return layout_.n_objects; }
  uint32_t ClusterObject(uint32_t cluster) const;
  uint32_t NamedObject(uint32_t cta_global) const;
  uint32_t GroupsObject(uint32_t agent) const { return layout_.first_agent_object + agent; }
  // Every object that agent `agent` or an asynchronous operation it issues may touch from now
  // until the end of the run, a static over-approximation from the role's code (every op of the
  // role; a barrier reference with a CTA operand, a mask or a multicast counts for every CTA of
  // the cluster; every element of a barrier array). Sorted, distinct.
  std::vector<uint32_t> AgentMayTouch(uint32_t agent) const;
  // The same, but exact for this state: agent `agent`'s code is run ahead from its current pc on
  // a scratch copy of its variables as if every wait passed, collecting the objects of its
  // remaining operations (multicast masks and barrier indices evaluated). False (use
  // AgentMayTouch) when that is not sound or not possible: its role reads a test_wait result or
  // a state token (control flow or operands could depend on a barrier's answer), an expression
  // faults, more than 2^16 instructions, or more than Footprint::kMax objects. The engine's
  // state is unchanged (non-const only because evaluation shares the step machinery).
  // With stop_at_cluster_wait the look-ahead ends after the agent's next barrier.cluster.wait
  // (included; *truncated is then true and the exit's objects are not added): the explorer uses
  // it when an agent that is still expected in the current cluster-barrier phase will take no
  // step, so that the wait cannot pass. Accesses carry their kinds (Access).
  bool AgentFuture(uint32_t agent, Footprint* out);
  // With cluster_waits false its barrier.cluster.wait operations are left out of the objects
  // (the explorer's guarded waits make such a wait independent of every other unit's step:
  // verifier/explore.h). An st.async counts the one barrier slot its complete_tx lands on, with
  // its bytes; exact_st_async false: that barrier in every CTA of the cluster, as an update
  // that breaks (the explorer's tests compare the two).
  // With `named`, its accesses to named-barrier objects in program order (NamedAccess).
  bool AgentFuture(uint32_t agent, Footprint* out, bool stop_at_cluster_wait, bool* truncated,
                   std::vector<UpdateTally>* tally = nullptr, bool cluster_waits = true,
                   bool exact_st_async = true, std::vector<NamedAccess>* named = nullptr);
  // An over-approximation of what agent `agent`'s next step touches, without taking it: the
  // objects of its next operation as AgentFuture counts them (a TMA issue counts its deliveries'
  // complete_tx), its async-group object, and the exit's objects when the next step is the
  // exit. False (take the step to measure it) on an expression fault.
  // With blocks_on: the object the step would only block on, changing nothing but the agent's
  // pc, variables and status: its next operation is a try_wait loop (`wait BAR ...`) whose phase
  // has not completed (the mbarrier slot), or a barrier.cluster.wait whose phase has not
  // completed (ClusterObject), and reports no violation; else kNoSlot.
  bool PeekFootprint(uint32_t agent, Footprint* out, uint32_t* blocks_on = nullptr);
  static constexpr uint32_t kNoSlot = 0xffffffffu;
  // True when agent `agent` has arrived on its cluster barrier and not yet completed the
  // matching barrier.cluster.wait (so its arrival may already count for the current phase).
  bool ClusterArrivalOutstanding(uint32_t agent) const { return agents_[agent].cluster_arrived; }
  // Whether the agent's next barrier.cluster.wait passes whatever the others do: it arrived in
  // a cluster phase that has completed since.
  bool ClusterWaitPasses(uint32_t agent) const;
  // The variable slots of an agent (its private state besides pc and status).
  const int64_t* agent_vars(uint32_t agent) const;
  uint32_t agent_num_vars(uint32_t agent) const;
  // Objects [0, num_barrier_slots()) are mbarrier slots; slot_state reads one.
  uint32_t num_barrier_slots() const { return static_cast<uint32_t>(barriers_.size()); }
  const model::MbarrierState& slot_state(uint32_t slot) const { return barriers_[slot]; }
  // The named barriers (bar.sync ids 0..15) of CTA `cta_global` (global CTA number).
  const model::NamedBarriers& named_barriers(uint32_t cta_global) const {
    return named_[cta_global];
  }
  // The global agent id of agent_info(a).index_in_cta in CTA `cta_global`.
  uint32_t cta_first_agent(uint32_t cta_global) const;
  // Programmatic dependent launch (ir::Program::primaries): the primary grids' agents are
  // [primary_first_agent(), num_agents()), their clusters [primary_first_cluster(), ...); the
  // first equals num_agents() (num clusters) when there is no primary grid.
  uint32_t primary_first_agent() const;
  uint32_t primary_first_cluster() const;
  uint32_t primary_first_cta() const;  // its first global CTA number (num_ctas(): none)
  bool is_primary_agent(uint32_t agent) const { return agent >= primary_first_agent(); }
  // Grids of a chain: 0 the schedule's own, g the one launched g launches before it
  // (AgentInfo::grid). Grid g's clusters are [grid_first_cluster(g), grid_first_cluster(g + 1)),
  // its CTAs and agents likewise; num_grids() is 1 + the number of `primary` blocks.
  uint32_t num_grids() const;
  uint32_t grid_first_cluster(uint32_t grid) const;
  uint32_t grid_first_cta(uint32_t grid) const;
  uint32_t grid_first_agent(uint32_t grid) const;
  // The grid whose completion a griddepcontrol.wait of `grid` waits for (grid + 1), or
  // num_grids() when it has none (the first grid launched: its wait returns at once).
  uint32_t prerequisite_grid(uint32_t grid) const {
    return grid + 1 < num_grids() ? grid + 1 : num_grids();
  }

  // --- Assertions (ir::Program::assertions; docs/language.md, Assertions) ---
  // A state read of an assertion for CTA `cta_global` (global CTA number): phase, pending
  // count or tx-count of element `index` of barrier decl `decl`, or whether slot `index` of
  // buffer decl `decl` has landed (1: no copy writing its bytes into that CTA is in flight).
  // False when the element or slot is outside its array.
  bool ReadStateAt(ir::StateFn fn, uint32_t decl, int64_t index, uint32_t cta_global,
                   int64_t* out) const;
  // Whether top-level property `id` (a forall or exists) holds in the current state: for every
  // CTA of the grid, with that CTA's builtins (`agent` 0). *failing_cta: the first CTA it does
  // not hold for. An evaluation fault (an index outside its array) is the Status.
  Status EvalProperty(uint32_t id, bool* holds, uint32_t* failing_cta = nullptr) const;
  // The `exists` properties that hold in the current state, as bits by their order among the
  // program's exists properties (the first 64); meaningful in a completed state.
  uint64_t ExistsHeld() const;

  // --- Inspection ---
  size_t num_agents() const;
  const AgentInfo& agent_info(uint32_t agent) const;
  const std::string& role_name(uint32_t agent) const;
  uint32_t num_ctas() const;  // in the whole grid
  // The bound param values (one per Program::params) and agent a's builtin values: what an
  // agent-invariant operand expression evaluates with (verifier/races.cc folds copy offsets).
  const std::vector<int64_t>& param_values() const;
  const ir::BuiltinValues& agent_builtins(uint32_t a) const;
  // Shared-memory byte offset of slot 0 of buffer `b` and its slot size (same in every CTA; an
  // `aliases` buffer starts inside the buffer it aliases).
  uint32_t buffer_base(uint32_t b) const;
  uint32_t buffer_slot_bytes(uint32_t b) const;
  uint32_t buffer_stages(uint32_t b) const;  // its slots
  // The model state of barrier `name[index]` of CTA `cta_global`.
  const model::MbarrierState& barrier_state(uint32_t cta_global, uint32_t barrier,
                                            uint32_t index) const;
  size_t in_flight() const;
  const std::vector<trace::TraceEvent>& trace() const { return trace_; }
  // Where the bytes of a recorded event's shared-memory access are, parallel to trace() (same
  // length): for kUse, kWrite, the issue of a copy (kTmaIssue, kBulkIssue, kTmaStoreIssue,
  // kCpAsyncIssue, kStAsync) and its landing or completion (kTmaDeliver, kBulkComplete, an
  // st.async's kCompleteTx, kTmaStoreRead, kTmaStoreWrite, kCpAsyncComplete) the buffer slot
  // and the byte offset into it of the first byte, as the engine evaluated the operands when the
  // operation was issued (a loop index, `k % STAGES`, `cta_rank * SLICE`); {0, 0} for other
  // events. Not part of the trace file format: the race and lifetime checkers read them from
  // the model's own runs, whose exact byte ranges they need per dynamic access. `agent` is the
  // global agent that issued the operation, also for the events of no agent (a copy's landing,
  // and the landing kArrive of a cp.async.mbarrier.arrive, whose slot and offset are 0): which
  // of several agents' copies of one statement in flight a step completed is the engine's
  // choice, and the checkers must know it (kNoPlaceAgent for other events).
  static constexpr uint32_t kNoPlaceAgent = 0xffffffffu;
  struct TracePlace {
    uint32_t slot = 0;
    uint32_t offset = 0;
    uint32_t agent = kNoPlaceAgent;
  };
  const std::vector<TracePlace>& trace_places() const { return trace_places_; }
  // Clears the recorded trace (keeps the capacity, so a reused engine does not allocate).
  void ClearTrace() {
    trace_.clear();
    trace_places_.clear();
  }
  uint64_t events() const { return events_; }
  const EngineOptions& options() const { return options_; }

  struct Code;  // the compiled, immutable program (shared by copies)

  // Mutable per-agent state (a POD: copied and hashed field by field). The agent's cp.async and
  // bulk async-group state are model objects kept beside it (Engine::cp_, Engine::bulk_).
  struct AgentState {
    uint32_t pc = 0;
    uint8_t status = 0;  // 0 ready, 1 blocked, 2 exited
    WaitKind wait = WaitKind::kNone;
    uint8_t cluster_arrived = 0;  // arrived on the cluster barrier, matching wait not done
    uint8_t unused1 = 0;
    uint32_t wait_slot = 0;  // mbarrier slot (global), named barrier id, or group count N
    uint32_t wait_arg = 0;   // parity, token phase, named-barrier generation, read flag
    uint32_t ready_pos = 0;  // index in ready_ while runnable
    uint32_t unused2 = 0;    // explicit padding before gen
    // A number that changes (to one never used before, by any engine on any thread) whenever a
    // step may change the agent's pc, status or variables (its own steps, being woken; Run()
    // renews every agent's once at its end): two states whose agent has the same `gen` have
    // the same pc, status and variables there. Not
    // part of the state (not hashed); lets the explorer's memos skip comparing variables.
    uint64_t gen = 0;
    // Every field, once, in three lists (components.h makes the state words from them): the
    // state; the wait's operands, state only while the agent waits (dead once the wait is over:
    // a stale value must not split equal states); and what is not state (bookkeeping). A field
    // missing from all three fails the static_assert below.
    auto StateFields() const { return std::tie(status, wait, cluster_arrived, pc); }
    auto WaitFields() const { return std::tie(wait_arg, wait_slot); }
    auto OtherFields() const { return std::tie(unused1, ready_pos, unused2, gen); }
  };

  // One in-flight asynchronous operation (or one destination of a multicast).
  struct InFlight {
    enum Kind : uint8_t {
      kTmaDeliver,    // tile load bytes land in target CTA + complete_tx on its mbarrier
      kBulkDeliver,   // 1-D bulk load: same
      kStAsync,       // st.async: bytes land remotely + complete_tx
      kCpAsync,       // LDGSTS completes (group bookkeeping)
      kCpAsyncArrive,  // the deferred arrive of cp.async.mbarrier.arrive
      kStoreRead,     // TMA/bulk store: source read (then becomes kStoreWrite)
      kStoreWrite,    // TMA/bulk store: global write done
      kNumKinds,
    };
    // The trace event each kind emits when it lands (Exec::Deliver; each piece of a load under
    // EngineOptions::tx_pieces too). The replay (verifier/replay.cc) matches a trace's events to
    // the operations in flight by it.
    static constexpr trace::EventKind kLandsAs[kNumKinds] = {
        trace::EventKind::kTmaDeliver,      trace::EventKind::kBulkComplete,
        trace::EventKind::kCompleteTx,      trace::EventKind::kCpAsyncComplete,
        trace::EventKind::kArrive,          trace::EventKind::kTmaStoreRead,
        trace::EventKind::kTmaStoreWrite,
    };
    uint8_t kind = 0;
    uint8_t flags = 0;  // trace flags (multicast)
    uint16_t object = 0;  // barrier decl (deliveries) or buffer decl (stores, cp.async)
    uint32_t agent = 0;   // the issuing agent
    uint32_t target_cta = 0;  // CTA rank receiving the bytes / owning the barrier
    uint32_t slot = 0;    // global mbarrier slot (deliveries, arrive); a bulk.store's
                          // kStoreWrite in a program with `readback`: the content tag written
    uint32_t index = 0;   // barrier element or buffer slot
    uint32_t bytes = 0;
    uint32_t pc = 0;      // issuing instruction
    // Where the bytes are, for the trace (Engine::trace_places): copies that move bytes
    // (loads, st.async, cp.async, stores) the byte offset into the buffer slot of the first
    // byte they write or read; st.async its destination buffer slot (loads: `id`). Packed and
    // copied, but not hashed (OtherFields): the issuing agent's history fixes them (its
    // program and the values its synchronising steps returned), which the explorer's state and
    // every_path's digest hold, and hashing them would tell apart the symmetric shares of
    // interchangeable agents (`+ agent * 512`).
    uint32_t offset = 0;
    uint32_t place_slot = 0;
    // cp.async / stores: the model's operation id (model::CpAsyncState / BulkAsyncState);
    // TMA / bulk loads: the destination buffer slot;
    // kCpAsyncArrive: the fence (CpAsyncState::IssuedCount() at the instruction).
    uint64_t id = 0;
    bool operator==(const InFlight&) const = default;  // member by member (not the padding)
    // Every field, once, in one of two lists: what is state (hashed and fingerprinted,
    // Table::OpWords), and what is packed and copied but not hashed (the issuer, which keys
    // the component that holds the operation, and where the bytes are, see above). Pack/
    // Unpack go through both (Fields), so a field added to either is packed and compared
    // without another edit; one in neither fails the static_assert in components.h.
    template <typename Self>
    static auto StateFieldsOf(Self& f) {
      return std::tie(f.kind, f.flags, f.object, f.target_cta, f.slot, f.index, f.bytes, f.pc,
                      f.id);
    }
    auto StateFields() { return StateFieldsOf(*this); }
    auto StateFields() const { return StateFieldsOf(*this); }
    auto OtherFields() { return std::tie(agent, offset, place_slot); }
    auto OtherFields() const { return std::tie(agent, offset, place_slot); }
    auto Fields() { return std::tuple_cat(StateFields(), OtherFields()); }
    auto Fields() const { return std::tuple_cat(StateFields(), OtherFields()); }
  };

  // Explorer access to the mutable state (verifier/explore.h).
  const AgentState& agent_state(uint32_t agent) const { return agents_[agent]; }
  const std::vector<InFlight>& in_flight_ops() const { return in_flight_; }
  const std::vector<InFlight>& deferred_ops() const { return deferred_; }

  // Threads (the parallel explorer): a copy whose compiled program, with its memo tables, is
  // its own, so that it and its copies can step on another thread than this engine's copies.
  Engine IsolatedCopy() const;
  // Copies the mutable state of `other` (an engine of the same program and options, possibly
  // isolated on another thread) and keeps this engine's compiled program: a thread steps a
  // state made by another thread on an engine of its own. `other` is only read.
  void AssignState(const Engine& other);
  // Undoes the steps taken since this engine was made a copy of `parent` (operator= or
  // AssignState; `parent` unchanged since): afterwards this engine's state equals parent's. It
  // copies back only what those steps changed (the explorer's successor loop: copy once, then
  // step, fingerprint and restore per successor), and falls back to a whole copy when it cannot
  // tell: parent's fingerprint cache was not clean (valid, no stale component) at the copy, so
  // the steps' changes were not all recorded. Every change of a step marks an object
  // (Exec's accessors, the incremental fingerprint's marks); the objects marked since the copy are
  // listed (step_log_) and restored with their fingerprint entries, and the small whole
  // vectors (in-flight operations, ready list) are copied. Builds with assertions check the
  // result against `parent` every 8th time.
  void RestoreStep(const Engine& parent);
  // A running state (no trace kept) as bytes, compactly: the state block as its 8-byte words
  // that differ from `base`'s (an engine of the same program, e.g. the initial state) in runs,
  // without the fingerprint cache, then the variable parts (in-flight operations, async-group
  // and cluster-barrier states) and the counters; not the warnings the run reported so far
  // (the explorer does not read them). Unpack makes this engine (of the same
  // program and options as base) that state again, with an invalid fingerprint cache (the
  // next Fingerprint computes every component). The explorer's breadth-first frontier holds
  // its states so: a few hundred bytes instead of an engine each.
  void Pack(const Engine& base, std::vector<uint8_t>* out) const;
  void Unpack(const Engine& base, const uint8_t* p, size_t n);

  Engine(const Engine&);
  Engine& operator=(const Engine&);
  Engine(Engine&&) noexcept;
  Engine& operator=(Engine&&) noexcept;
  ~Engine();

 private:
  // tests/sim/engine/state_test.cc: changes one field of a state to check that StateWords,
  // StateHash and the fingerprint all see it.
  friend class StateTestPeer;
  friend class Predictor;  // the explorer's successor prediction (below)
  Engine() = default;

  // Successor prediction's internals, reached through Predictor (documented there).
  uint64_t FingerprintSum() const;
  static uint64_t FinishFingerprint(uint64_t sum, Outcome outcome) {
    return fpmix::Final(
        fpmix::Word(fpmix::Word(0x243f6a8885a308d3ull, static_cast<uint64_t>(outcome)), sum));
  }
  bool StepMarks(const uint32_t** objects, uint32_t* n) const;
  bool StepScanned() const { return step_scanned_; }
  bool AgentStepsReadOwnOps(uint32_t a) const;
  uint64_t FpCachedObject(uint32_t o) const { return fpc_.w[FpParts().obj + o]; }
  uint64_t FpCachedOps(uint32_t a) const { return fpc_.w[FpParts().ops + a]; }
  uint64_t FpCachedAgent(uint32_t a) const { return fpc_.w[FpParts().fin + a]; }
  static uint64_t FpAgentComponent(uint32_t a, uint64_t content, uint64_t ops);
  static constexpr uint32_t kPeekWokenMax = 8;
  bool PeekDeliveryDelta(uint32_t i, uint64_t* delta, uint32_t* woken, uint32_t* n_woken) const;

  struct Exec;   // the step implementation (exec.h); a nested type, so it sees the state
  struct Table;  // the component table (components.h): every part of the state, once
  // A fixed-size array of the mutable state, inside the engine's state block (block_): the
  // sizes are the program's, so a copy of the whole block copies them all at once.
  template <typename T>
  struct Slice {
    T* p = nullptr;
    uint32_t n = 0;
    T& operator[](size_t i) { return p[i]; }
    const T& operator[](size_t i) const { return p[i]; }
    size_t size() const { return n; }
    bool empty() const { return n == 0; }
    T* data() { return p; }
    const T* data() const { return p; }
    T* begin() { return p; }
    T* end() { return p + n; }
    const T* begin() const { return p; }
    const T* end() const { return p + n; }
  };
  // The runnable agents (unordered), at most one entry per agent: its entries and its length
  // are in the state block.
  struct ReadyList {
    uint32_t* p = nullptr;
    uint32_t* len = nullptr;
    uint32_t& operator[](size_t i) { return p[i]; }
    uint32_t operator[](size_t i) const { return p[i]; }
    size_t size() const { return *len; }
    bool empty() const { return *len == 0; }
    uint32_t back() const { return p[*len - 1]; }
    void push_back(uint32_t a) { p[(*len)++] = a; }
    void pop_back() { --*len; }
    const uint32_t* begin() const { return p; }
    const uint32_t* end() const { return p + *len; }
  };
  // Incremental fingerprint (Fingerprint): the components' hashes kept with the state, in the
  // words `w` (in the state block: copied with every state), for n objects and A agents:
  // dirty = w[0, D), D = ceil(n / 64): a bit per object (agent a at GroupsObject(a))
  // whose entry is stale; obj = w[D, D + n): obj[o] a shared object's keyed hash, or for
  // o = GroupsObject(a) agent a's unkeyed content hash; ops = the next A words: ops[a] the sum of
  // agent a's in-flight operations' hashes; fin = the last 2A words: fin[a] agent a's keyed
  // component and fin[A + a] the key it was made with (kStaleKey: recompute), agents_sum their
  // sum. Invalid until the first fingerprint (then every component is computed), and after
  // Run().
  struct FpCache {
    bool valid = false;
    // Every agent's keyed component that is not stale is keyed by the agent's id (the plain
    // fingerprint's key): FpRefresh then makes the components of the agents it recomputes
    // with that key at once, and a plain FpCombine has nothing left to check.
    bool plain = false;
    uint64_t shared_sum = 0;
    uint64_t agents_sum = 0;
    Slice<uint64_t> w;  // the engine's: in its state block; a scratch cache: its own vector
  };
  static constexpr uint64_t kStaleKey = ~uint64_t{0};
  // Where FpCache::w's parts start (words): the marks at 0, then obj, ops and fin.
  struct FpLayout {
    uint32_t obj, ops, fin;
  };
  static FpLayout FpParts(uint32_t objects, uint32_t agents) {
    const uint32_t words = (objects + 63) / 64;
    return {words, words + objects, words + objects + agents};
  }
  FpLayout FpParts() const { return {layout_.fp_obj, layout_.fp_ops, layout_.fp_fin}; }
  // The cache's size in words (fin holds two words per agent).
  static uint32_t FpWords(uint32_t objects, uint32_t agents) {
    return FpParts(objects, agents).fin + 2 * agents;
  }
  // Recomputes k's dirty components (all if !k.valid); group: the FpCombine to follow.
  void FpRefresh(FpCache& k, const std::vector<uint32_t>* group) const;
  uint64_t FpCombine(FpCache& k, const std::vector<uint32_t>* group) const;
  uint64_t FpTotal(FpCache& k, const std::vector<uint32_t>* group) const;  // before finishing
  void FpRekey(FpCache& k, const std::vector<uint32_t>* group) const;
  uint64_t FpObject(uint32_t o) const;        // a shared object's keyed hash
  uint64_t FpAgentContent(uint32_t a) const;  // an agent's private state, without its id
  uint64_t FpAgentContent(uint32_t a, uint8_t status) const;  // the same with another status
  uint64_t FpAgentOps(uint32_t a) const;      // the sum of its in-flight operations' hashes
  static uint64_t FpOp(const InFlight& f, uint64_t list);  // one of them (list: 1 or deferred 2)
  uint64_t FpChecked(const std::vector<uint32_t>* group) const;
  // Copies every member but code_ (operator= and AssignState).
  void CopyState(const Engine& o);
  void CopyRun(const Engine& o, bool undo);  // the counters, outcome, result and trace
  // Agent a's cp.async and bulk async-group states (the initial ones when its role issues no
  // such operation: cp_ and bulk_ hold only the other agents').
  const model::CpAsyncState& CpState(uint32_t a) const;
  const model::BulkAsyncState& BulkState(uint32_t a) const;

  std::shared_ptr<const Code> code_;
  EngineOptions options_;
  // Mutable state. The parts whose sizes the program fixes (the Slices, the ready list and the
  // fingerprint cache's words) are laid out in one block (Layout, made at Create), so that a
  // copy of a state between engines of one program is one memcpy for all of them.
  struct Layout {
    uint32_t agents = 0, vars = 0, barriers = 0, named = 0, smem = 0, global = 0, fp = 0,
             ready = 0, ready_len = 0;  // byte offsets
    uint32_t n_agents = 0, n_vars = 0, n_barriers = 0, n_named = 0, n_smem = 0, n_global = 0,
             n_fp = 0;
    uint32_t words = 0;  // the block's size in 8-byte words
    // num_objects() and GroupsObject(0) (the first agent's object), and the fingerprint
    // cache's parts (FpParts): constant for a program, kept here so the hot paths do not
    // recompute them.
    uint32_t n_objects = 0, first_agent_object = 0;
    uint32_t fp_obj = 0, fp_ops = 0, fp_fin = 0;  // (22 words in all: no padding before id)
    // Made at Create, never reused (isolated copies of a program share it): engines with
    // blocks of one id have equal layouts. Last: the fields before it have no padding and are
    // compared bytewise.
    uint64_t id = 0;
  };
  static_assert(offsetof(Layout, id) == 22 * sizeof(uint32_t), "Layout: padding before id");
  static bool Running(const Engine& e);  // kRunning and no warnings: the result is scalars only
  Layout layout_;
  std::unique_ptr<uint64_t[]> block_;
  void Allocate(const Layout& l);  // a new block of layout l (zeroed), the slices bound to it
  Slice<AgentState> agents_;
  Slice<int64_t> vars_;
  std::vector<model::CpAsyncState> cp_;      // per agent of a role with async groups (CpState)
  std::vector<model::BulkAsyncState> bulk_;  // the same
  Slice<model::MbarrierState> barriers_;
  // `readback` data tracking (empty unless the program has a readback; code.h Code):
  // content tag per (CTA, buffer slot) of shared memory and per buffer slot of the global image.
  Slice<uint16_t> smem_data_;
  Slice<uint16_t> global_data_;
  std::vector<InFlight> in_flight_;
  std::vector<model::ClusterBarrier> clusters_;  // per cluster; participant = agent in cluster
  std::vector<InFlight> deferred_;  // cp.async.mbarrier.arrive waiting for prior cp.async
  Slice<model::NamedBarriers> named_;  // per CTA
  ReadyList ready_;                    // runnable agents (unordered)
  uint32_t exited_count_ = 0;
  uint64_t rng_ = 0;
  uint32_t rr_cursor_ = 0;
  bool rr_async_turn_ = false;
  // Results and trace.
  Outcome outcome_ = Outcome::kRunning;
  RunResult result_;
  uint64_t steps_ = 0;
  uint64_t events_ = 0;
  std::vector<trace::TraceEvent> trace_;
  std::vector<TracePlace> trace_places_;  // parallel to trace_
  mutable FpCache fpc_;  // Fingerprint's components (a cache: const methods refresh it)
  // RestoreStep: the objects whose fingerprint mark a step set since the last copy (their mark
  // went from clear to set; not part of the state, not copied), and whether that lists every
  // change since the copy (the copy's source had a clean fingerprint cache).
  static constexpr uint32_t kStepLogMax = 64;
  mutable uint32_t step_log_[kStepLogMax];  // FpCombine adds to it
  mutable uint32_t step_log_n_ = 0;
  mutable bool step_log_ok_ = false;
  // The last Step looked at other agents' states to wake them (a completed phase, cluster or
  // named barrier: Exec::WakeBarrier, WakeCluster, WakeNamed). Not part of the state.
  bool step_scanned_ = false;
  // Adds to step_log_; more objects than it holds (an engine that steps on without a copy)
  // stop the logging (RestoreStep then copies everything).
  void LogStep(uint32_t object) const {
    if (step_log_n_ < kStepLogMax) {
      step_log_[step_log_n_++] = object;
    } else {
      step_log_n_ = 0;
      step_log_ok_ = false;
    }
  }
};

// The explorer's successor prediction (verifier/explore.cc): the incremental fingerprint's
// internals, behind this view of one engine rather than in Engine's public face. Predictions
// made from it are held to the steps they stand for by the tests (PeekDeliveryTest, the
// explorer's memo tests) and, in builds with assertions, by the explorer's own checks.
class Predictor {
 public:
  explicit Predictor(const Engine& e) : e_(e) {}

  // The fingerprint in two parts: the sum of the plain (unsymmetric) fingerprint's
  // components, and the function that makes the fingerprint of a sum and an outcome.
  // e.Fingerprint() == FinishFingerprint(FingerprintSum(), e.outcome()). The sum is linear: a
  // step that changes only the components of the objects it marks (StepMarks) adds the same
  // difference to it in every state where those components and the objects it reads are the
  // same.
  uint64_t FingerprintSum() const { return e_.FingerprintSum(); }
  // The outcome is part of the state: a violating step leaves the state as it was before the
  // operation (the model rejects it), and must not look like that already-visited state.
  static uint64_t FinishFingerprint(uint64_t sum, Outcome outcome) {
    return Engine::FinishFingerprint(sum, outcome);
  }
  // The objects (fingerprint components: num_objects() numbering, an agent at GroupsObject)
  // that the steps since the engine was made a copy of a state with a clean fingerprint cache
  // marked as changed. False when that is not known (the copy's source was not fingerprinted,
  // or too many steps): then *objects is not the whole list.
  bool StepMarks(const uint32_t** objects, uint32_t* n) const { return e_.StepMarks(objects, n); }
  // Whether the last Step read other agents' states besides the objects it touched (to find
  // the agents a completed phase, cluster barrier or named barrier wakes). A step that did
  // not, and that changed (StepMarks) only objects it touched and its own agent, did what it
  // did as a function of its agent's state and the touched objects' states alone (the
  // explorer's memo of agent steps relies on it).
  bool StepScanned() const { return e_.StepScanned(); }
  // Whether agent a's steps may depend on its in-flight operations (besides its content): its
  // role issues async-group operations (cp.async, bulk groups), whose waits and arrive-on
  // fences read which of its operations have completed.
  bool AgentStepsReadOwnOps(uint32_t a) const { return e_.AgentStepsReadOwnOps(a); }
  // The fingerprint cache's current entries (valid after FingerprintSum() with no step since):
  // object o's component (an agent's object, GroupsObject(a): its content hash, without its
  // in-flight operations), agent a's in-flight operations' hash, and agent a's component.
  uint64_t FpCachedObject(uint32_t o) const { return e_.FpCachedObject(o); }
  uint64_t FpCachedOps(uint32_t a) const { return e_.FpCachedOps(a); }
  uint64_t FpCachedAgent(uint32_t a) const { return e_.FpCachedAgent(a); }
  // Agent a's (plain) component from its content hash and its operations' hash.
  static uint64_t FpAgentComponent(uint32_t a, uint64_t content, uint64_t ops) {
    return Engine::FpAgentComponent(a, content, ops);
  }
  // What delivering in-flight operation i would add to FingerprintSum(), computed from the
  // cached components without taking the step, when the delivery is a byte delivery (TMA,
  // bulk copy, st.async) that reports no violation and the run goes on after it (another agent
  // is ready or another operation in flight, the step limit is not reached): it then changes
  // only the slot's state, its issuer's in-flight operations and, when it completes the slot's
  // phase, the status of the agents that wait on the slot (it marks these; it touches the
  // slot). The successor is running. Needs those components current (a FingerprintSum() since
  // the last step) and the program without `readback`; false otherwise, or for any other
  // delivery: take the step. woken[0, *n_woken): the agents it wakes (at most kPeekWokenMax:
  // else false).
  static constexpr uint32_t kPeekWokenMax = Engine::kPeekWokenMax;
  bool PeekDeliveryDelta(uint32_t i, uint64_t* delta, uint32_t* woken, uint32_t* n_woken) const {
    return e_.PeekDeliveryDelta(i, delta, woken, n_woken);
  }

 private:
  const Engine& e_;
};

}  // namespace parity::engine

#endif  // PARITY_SIM_ENGINE_ENGINE_H_
