// The persistent-set computation of `parity explore` (explore.h): for a state's enabled choices
// and blocked agents, a subset of the choices whose exploration suffices (Reducer::Choose), from
// each agent's future accesses (Engine::AgentFuture, memoised here) and the barriers' balance.
// Used by the searches (verifier/expand.h, ExpandWorker). Its members are defined by concern:
// reducer.cc (the units, their futures, the general closure and its dependency relation),
// reducer_balance.cc (the barrier balance analysis), reducer_masks.cc (the bit-parallel closure)
// and held_phase.cc (held-phase futures, with the argument for them).
#ifndef PARITY_VERIFIER_EXPLORE_REDUCER_H_
#define PARITY_VERIFIER_EXPLORE_REDUCER_H_

#include <climits>
#include <cstdint>
#include <deque>
#include <utility>
#include <vector>

#include "sim/engine/engine.h"
#include "sim/model/mbarrier.h"

namespace parity::verifier::reduction {

using engine::Choice;
using engine::Engine;
using engine::Footprint;
using engine::Outcome;

// Persistent-set computation (explore.h): units are the enabled choices followed by the blocked
// agents. A unit's *future* is a dense array over Engine::num_objects() holding how it may access
// each object from now on (engine::Access, or kNone).
constexpr uint8_t kNone = 0xff;
constexpr uint8_t kOther = static_cast<uint8_t>(engine::Access::kOther);
constexpr uint8_t kTx = static_cast<uint8_t>(engine::Access::kCompleteTx);
constexpr uint8_t kCArrive = static_cast<uint8_t>(engine::Access::kClusterArrive);
constexpr uint8_t kExitAcc = static_cast<uint8_t>(engine::Access::kExit);
constexpr uint8_t kArr = static_cast<uint8_t>(engine::Access::kArrive);
constexpr uint8_t kWaitK = static_cast<uint8_t>(engine::Access::kWait);
// A blocked unit's wait: what can enable it (see Conflict).
constexpr uint8_t kWaitNes = 0xfe;

// Per access kind (engine::Access, kOther .. kWait) the objects (Reducer::ObjBit) accessed so,
// and their union.
struct KindMasks {
  uint64_t k[6] = {};
  uint64_t any = 0;
};

class Reducer {
  struct CacheEntry;

 public:
  // `masks`: use the bit-parallel closure (ChooseMasks) when the schedule has at most 64
  // objects; false: the per-object one (Choose's general path) everywhere (tests compare them).
  // `held_phase`: held-phase futures (explore/held_phase.cc; only with guarded waits).
  // `exact_peers`: ExploreOptions::exact_peer_futures.
  Reducer(const Engine& root, bool guarded_waits, bool masks = true, bool phase_bounded = true,
          bool held_phase = true, bool exact_peers = true, bool arrival_costs = true,
          bool named_rule = true);

  uint64_t cache_entries() const { return entries_.size(); }
  // How often the held-phase rule (explore/held_phase.cc) kept a unit out of a closure that
  // its whole future would have brought in (a statistic: ExploreStats::held_phase_cuts).
  uint64_t held_phase_cuts() const { return held_phase_cuts_; }

  // One mbarrier slot's balance in a state (explore.h, SlotBalance: the same fields).
  struct SlotReport {
    uint32_t slot = 0;
    bool whole = false;  // balanced by every unit's whole future (ComputeBalanced)
    bool phase = false;  // balanced by what can come before its current phase completes
    int64_t arrivals = 0, expect = 0, complete = 0;  // the sums `phase` was decided on
  };
  // AnalyseBalance (explore.h): Slot's sums, without the units.
  std::vector<SlotReport> Report(Engine& e);

  // Agent a's next step's footprint (Engine::PeekFootprint; *blocks_on as there, nullptr:
  // not asked), or nullptr when it cannot be predicted. Memoised per agent by pc and variables
  // (the prediction depends on nothing else), and for an mbarrier wait also by the state of
  // its barrier slot (whether it would block depends on nothing else: Engine WaitBlocksOn);
  // cluster waits are peeked again. The footprint stays valid until the next Peek of a.
  const Footprint* Peek(Engine& e, uint32_t a, uint32_t* blocks_on);

  // Marks in `take` (one flag per choice) the steps of the smallest persistent set found.
  // `guard` (per agent, empty for none): the mbarrier slot a runnable agent's next step would
  // only block on (Search::Expand left that step out of `choices`); such an agent is a unit like
  // a blocked one.
  // The starts are tried in unit order, first for a closure with one enabled step (no set is
  // smaller; a start's closure is abandoned as soon as a second enabled unit joins), then, when
  // there is none, for the smallest closure. The per-slot balance of the barriers (and its
  // holders) is computed only when a closure first asks about a barrier.
  void Choose(Engine& e, const std::vector<Choice>& choices,
              const std::vector<const Footprint*>& fps, const std::vector<uint32_t>& guard,
              std::vector<uint8_t>* take);

 private:
  static constexpr uint32_t kNoAgent = 0xffffffffu;
  struct Unit {
    bool enabled = false;
    bool now_all = false;
    uint32_t agent = kNoAgent;  // agent units (enabled or blocked); kNoAgent: in-flight op
    std::vector<std::pair<uint32_t, uint8_t>> now;  // the step's footprint, or the wait
    // Per object: access kind or kNone (agents: their full or truncated future; in-flight
    // operations: own_dense, or nullptr for the sparse `own`).
    const std::vector<uint8_t>* future = nullptr;
    std::vector<std::pair<uint32_t, uint8_t>> own;  // in-flight operations' future (sparse)
    const std::vector<uint8_t>* own_dense = nullptr;  // or a dense one (cp.async completions)
    uint32_t own_slot = 0xffffffffu;  // a delivery's slot (besides `now`'s objects)
    // ObjBit of every object of `now`, of `own`, of `future`: two units whose masks do not
    // meet share no object.
    uint64_t now_mask = 0, own_mask = 0, future_mask = 0;
    // The named-barrier rule (reducer_named.cc): the CTA's named-barrier object of its step or
    // wait (kNoNamed: the rule does not apply) and the units it takes in there, ascending.
    uint32_t named_obj = 0xffffffffu;
    std::vector<uint32_t> named_join;
  };
  // The next unit of this state, reusing an earlier state's (keeps the vectors' capacity).
  Unit& NewUnit();
  static uint64_t ObjBit(uint32_t o) { return uint64_t{1} << (o & 63); }
  // Whether access k of choice c's step (footprint fi) is to a shared object: with guarded
  // waits a barrier.cluster.wait step touches only its own participant's arrival record
  // (explore.h), no shared object.
  bool Shared(const Choice& c, const Footprint& fi, uint32_t k) const {
    return !(guarded_ && c.kind == Choice::Kind::kAgent && fi.kinds[k] == engine::Access::kWait &&
             fi.objects[k] >= n_slots_ && fi.objects[k] < n_slots_ + n_clusters_);
  }
  static void MergeOwn(Unit& u, uint32_t o, uint8_t k);
  static uint8_t OwnKind(const Unit& u, uint32_t o) {
    if (u.own_dense != nullptr) return (*u.own_dense)[o];
    for (const auto& [oo, k] : u.own) {
      if (oo == o) return k;
    }
    return kNone;
  }
  // How unit y may access object o from now on, under the current start's futures.
  uint8_t FutureKind(size_t y, uint32_t o) const {
    const Unit& u = units_[y];
    return u.future != nullptr ? (*u.future)[o] : OwnKind(u, o);
  }
  // Every unit's future (and its mask in fmask_) for closures from `start`: an agent that is
  // still expected in its cluster barrier's current phase and takes no step outside the set
  // keeps every peer of its cluster from passing its next barrier.cluster.wait: the peers'
  // futures end there (Engine::AgentFuture), except a peer that arrived in a phase that has
  // completed since (its next wait passes: Engine::ClusterWaitPasses).
  void SetFutures(size_t start);
  void SetTrunc(size_t y);

  // The closure of {start} under Meets (explore.h); stops as soon as it holds `bound` enabled
  // units. Returns the number of enabled units in it (>= bound: stopped).
  size_t Closure(size_t start, size_t bound);
  // Whether two complete_tx-only accesses of mbarrier slot o commute from this state on, given
  // that every unit that may access the slot otherwise (arrivals, waits, init, ...) is in the
  // set (Conflict pulls those in): the barrier is live and its pending count is above zero,
  // and only arrivals lower it, so no complete_tx can complete the phase on any path of steps
  // outside the set (engine.h, Access::kCompleteTx).
  bool TxCommutes(uint32_t o) const {
    if (o >= n_slots_) return false;
    const model::MbarrierState& st = e_->slot_state(o);
    return st.life == model::MbarrierLife::kLive && st.pending_count > 0;
  }
  // The balanced barriers (ComputeBalanced) and the holders of their outstanding updates, on
  // first use in this state.
  void EnsureBalanced();
  static void Merge(std::vector<uint8_t>& f, uint32_t o, uint8_t k);

  // Per mbarrier slot: whether every additive update (arrive-on with count and expect_tx,
  // complete_tx, TMA delivery) of every unit commutes with every other from this state on. With
  // the sums over every unit's future (exact look-aheads, in-flight deliveries included):
  //   A = arrivals still to come, E = their expect_tx bytes, C = complete_tx bytes to come,
  // the barrier is *balanced* when it is live, pending >= A, tx + E - C == 0, no future access
  // is anything but such an update or a wait (UpdateTally::breaks), and tx stays within the
  // tx-count range whatever the order. Then along any path, pending - A(remaining) >= 0 and
  // tx + E(remaining) - C(remaining) == 0 stay invariant until the phase completes, so when two
  // updates are both still to come neither can complete the phase alone: an arrival completing
  // alone needs pending == its count, i.e. no other arrival to come (pending >= A), and then
  // tx + its bytes == C(remaining) > 0 while a delivery is still to come; a complete_tx needs
  // pending == 0, i.e. no arrival to come, and then tx == C(remaining) exceeds its own bytes.
  // Two updates that do not complete the phase give the same state in either order (pending
  // and tx are sums; the checks they make read only the count range, which pending >= A keeps,
  // and the phase and its observed flag, which they do not change).
  void ComputeBalanced(const Engine& e);
  // Adds an in-flight operation's part to the sums of its slot: a delivery's bytes
  // (complete_tx), a deferred cp.async arrive breaks; other operations (cp.async and store
  // completions, whose `slot` is no barrier) add nothing.
  static void AddInFlight(const Engine::InFlight& f, engine::UpdateTally* t);
  // One slot's sums over every unit's whole future (ComputeBalanced's sum_[o], for one slot):
  // the agents' part (UpdateAgentSums), the deliveries in flight, deferred arrives breaking.
  engine::UpdateTally WholeSums(const Engine& e, uint32_t o) const;
  // The balance condition of one slot (ComputeBalanced) given the sums over every unit's future.
  static bool BalancedSlot(const model::MbarrierState& st, const engine::UpdateTally& t);
  // Phase-bounded balance. BalancedSlot over every unit's whole future fails on a barrier that
  // is reused (a ring stage: the producer's arrival for the next phase counts in A, so pending
  // < A). What matters is what can happen *before the current phase of o completes*.
  // Hypotheses: for some slots w, a phase q_w >= cur(w) (the current phase) that does not
  // complete first; q_o = cur(o). Under them each agent's future (an exact straight-line
  // look-ahead: engine UpdateTally, with its blocking parity waits as gates) is cut at the first
  // wait that surely blocks: with lo_w the lowest phase w can be in when the agent gets there
  // (cur(w), raised by one for each earlier wait of the agent that needed phase lo_w to
  // complete), a wait whose parity is that of lo_w needs phase lo_w to complete, and surely
  // blocks when lo_w == q_w (w is then in phase q_w exactly, which does not complete); any
  // other wait is taken to pass (more updates: safe). A(w), E(w), C(w): the arrivals,
  // expect_tx and complete_tx bytes on w ahead of the cuts, with the deliveries in flight.
  // (w, q_w) is *starved* when no breaking access to w is ahead of the cuts and, with
  // need = pending(w) + (q_w - cur(w)) * count(w) arrivals to complete phase q_w, A(w) < need,
  // or A(w) == need (every one of them then comes first, expect_tx bytes included) and
  // C(w) < tx(w) + E(w) (too few bytes to bring tx back to 0).
  // Claim: if every hypothesis but o's is starved, no phase q_w completes before o's current
  // phase does. Proof: on a path where one does, take the first completion of any hypothesised
  // phase; it is not o's. Until then every slot w is at most in phase q_w, so no agent got past
  // its cut, and w saw at most A(w) arrivals (and the bytes above): phase q_w cannot complete,
  // a contradiction. Hence until o's phase completes every agent is ahead of its cut, and the
  // updates to o before then are among those ahead of the cuts (`pre_`: the agents holding
  // one). The hypotheses are found as a greatest fixpoint: start with q_w = cur(w) for every
  // live slot some agent waits on and raise q_w of each one not starved (up to kGateAhead
  // phases ahead, then none) until all are; raising one only moves cuts later.
  // With these sums in place of the whole futures', BalancedSlot's argument is unchanged: only
  // these updates can occur before the phase completes, and an update after a cut cannot occur
  // on a path whose steps avoid a unit of the set holding one of these (the phase needs them
  // all, or never completes). Cuts on other waits (tokens, cluster and named barriers) are not
  // taken: fewer cuts only add updates, which is safe.
  bool MayGate(const Engine& e, uint32_t o) const;
  static constexpr uint32_t kNoHyp = 0xffffffffu, kGateAhead = 3;
  engine::UpdateTally GatedSums(const Engine& e, uint32_t o);
  // Whether the current phase of slot o cannot complete while agent `stopped` takes no step
  // (the same argument with o's hypothesis starved too and the agent's whole future cut). Then
  // an enabled wait of that agent on o commutes with every arrive/complete_tx of o outside a
  // persistent set holding it: o's phase and parity stay as they are on such paths, and the
  // wait reads nothing else (its observed flag aside, see Meets).
  bool StuckWhileStopped(const Engine& e, uint32_t o, uint32_t stopped);
  // StuckWhileStopped for agent a's enabled wait on slot o, once per state (an agent's step
  // waits on one slot).
  bool Stuck(uint32_t o, uint32_t a);
  // With Stuck(o, a): whether unit y may access o other than by waiting before a moves.
  bool StuckMay(uint32_t a, uint32_t y_agent) const;
  // The same as a mask of ChooseMasks's units.
  uint64_t StuckMayMask(uint32_t a);
  // GatedSums, and with o_starved != nullptr StuckWhileStopped: o's hypothesis is then checked
  // like the others (*o_starved: whether it held) and `stopped`'s future counts nothing.
  engine::UpdateTally Fixpoint(const Engine& e, uint32_t o, uint32_t stopped, bool* o_starved);
  // Arrival costs (GatedSums only). When every update o will see is an arrival and its
  // tx-count is 0, its current phase completes at the arrival that brings its pending count to
  // 0 (PTX ISA 9.7.13.15: a phase completes when the pending arrival count and the tx-count are
  // both 0). An agent's arrival on another slot w ahead of its cut comes after every arrival on
  // o that precedes it in the agent's program order. So (w, q_w) is also starved when every
  // choice of need(w) arrivals among those ahead of the cuts needs at least pending(o) arrivals
  // on o before them: in the proof above, at the first completion of a hypothesised phase
  // (not o's) o would already have seen pending(o) arrivals in its current phase and completed
  // first, a contradiction. (DeepGEMM's consumers release CTA 1's empty barrier and then CTA
  // 0's: CTA 0's producer cannot pass its wait on CTA 0's empty stage while CTA 1's stays
  // incomplete.) ArrivalCost(w, need) is that least count: a knapsack over the agents'
  // recorded arrivals on w (arrivals without a record cost nothing); INT64_MAX when the
  // recorded arrivals cannot give need.
  int64_t ArrivalCost(uint32_t w, int64_t need);
  struct WRec {
    uint32_t agent;
    uint32_t slot;
    int64_t arrivals;
    int64_t o_before;  // the agent's arrivals on o ahead of this record
  };
  std::vector<WRec> wrec_;        // Fixpoint: arrival records on slots other than o, walk order
  std::vector<int64_t> o_arr_;    // Fixpoint: per agent, its arrivals on o walked so far
  std::vector<int64_t> cost_, next_cost_;  // ArrivalCost's table
  // The agents' part of the sums (exited agents count nothing; one with a static
  // over-approximation means no counts: nothing is balanced, n_inexact_ > 0), kept across
  // states: only the agents whose memo entry changed since the last state are subtracted and
  // added again.
  void UpdateAgentSums(const Engine& e);
  struct AgentSum {
    int64_t arrivals = 0, expect = 0, complete = 0;
    int64_t breaks = 0;  // how many tallies break
  };
  struct Contrib {
    const std::vector<engine::UpdateTally>* tally = nullptr;  // kind 2: the memo entry's
    uint8_t kind = 0;  // 0 exited (or none yet), 1 no exact future, 2 exact
  };
  void ApplyContrib(const Contrib& c, int64_t sign);
  void Add(const engine::UpdateTally& t);

  // Whether an access (o, k) of a unit in the set and a unit whose future accesses o as `fk`
  // may be dependent (engine.h, Access).
  bool Conflict(uint32_t o, uint8_t k, uint8_t fk) const;
  // Whether unit y (not in the set) must join because of unit x (in the set).
  bool Meets(size_t y, size_t x);
  // Whether a unit of the set other than x holds an outstanding update of slot o.
  bool HeldInSet(uint32_t o, size_t x) const;
  // Whether x's own agent holds an outstanding update of balanced slot o besides x's step
  // (the TMA loads after a producer's arrive.expect_tx): on a path of steps outside the set
  // the agent does not move, so that update does not happen and the phase does not complete.
  bool SelfHeld(uint32_t o, size_t x) const;

  // --- The bit-parallel closure (at most 64 objects and 64 units) ---
  // The same persistent sets as Choose's general path (the tests compare the two searches):
  // the same units in the same order, the same starts in the same order, and Meets(y, x)
  // evaluated for the same candidates in ascending order against the same set. Meets is a
  // disjunction over x's accesses (o, k) of a predicate of y's future kind of o (and, for the
  // one-holder rule, of y itself); for each x the objects on which each future kind conflicts
  // are gathered into masks (MaskTargets), and y meets x when any of y's future kind masks
  // meets the mask of its kind.
  struct MaskUnit {
    bool enabled = false;
    bool now_all = false;
    uint32_t agent = kNoAgent;  // kNoAgent: an in-flight operation
    uint32_t cluster = 0xffffffffu;
    uint64_t now[7] = {};  // the step's objects by access kind; [6]: a blocked wait (kWaitNes)
    uint64_t upd = 0;      // objects it holds an outstanding update of (EnsureBalanced's holders)
    uint64_t self = 0;     // of those, the ones it holds besides its step's (SelfHeld)
    KindMasks own;         // an in-flight operation's future
    uint32_t named_obj = 0xffffffffu;  // Unit::named_obj
    uint64_t named_join = 0;           // Unit::named_join as unit bits
  };
  // The units' futures under one truncation (SetMaskFutures), transposed: per access kind and
  // object, the units (a bit each) whose future accesses the object so; and per unit the
  // objects of its future.
  struct FutureTable {
    uint64_t units[6][64];
    uint64_t any[64];
    const KindMasks* f[64];  // per unit: its future's masks
    // The same with each agent's accesses to a slot cut at its first wait on the slot's
    // current phase (explore/held_phase.cc, EnsureHeldTable), built on first use.
    bool held_ready;
    uint64_t held[6][64];
  };
  static constexpr int kNesIdx = 6;

  void ChooseMasks(Engine& e, const std::vector<Choice>& choices,
                   const std::vector<const Footprint*>& fps, const std::vector<uint32_t>& guard,
                   std::vector<uint8_t>* take);
  // Merges access k of object o into m (engine::MergeAccess).
  static void MergeMask(KindMasks& m, uint32_t o, uint8_t k);
  // ResetUnit and SetMaskFutures are declared inline and defined in reducer_masks.cc, where
  // ChooseMasks, their one caller, compiles them with itself: called once per unit and per
  // start, out of line they cost 1.6 % more instructions of a reduced search (callgrind,
  // sgemm_sm80, bench/RESULTS.md).
  static inline void ResetUnit(MaskUnit& u);
  // The units' futures for closures from `start` (SetFutures: the agents of the start's cluster
  // get their futures up to their next barrier.cluster.wait when the start is an agent still
  // expected there; the start's own future is never read, as it is in the set). They depend
  // only on the truncating cluster: the tables of two clusters (or none) are kept per state.
  inline void SetMaskFutures(size_t start);
  // Per slot, computed on first use in a state: whether it is balanced (ComputeBalanced), the
  // phase completes with the last outstanding update (complete_with_last_), its preceding phase
  // was observed (observed_), and whether complete_tx-only accesses commute (TxCommutes).
  struct SlotFlags {
    bool bal = false, cwl = false, obs = false, txc = false;
  };
  SlotFlags Slot(uint32_t o);
  // The first unit (in unit order) holding an outstanding update of o, or kNoAgent.
  uint32_t FirstHolder(uint32_t o) const;

  // --- The named-barrier rule (reducer_named.cc) ---
  static constexpr uint32_t kNoNamed = 0xffffffffu;
  static constexpr int64_t kNamedUnbounded = INT64_MAX;
  // The threads agent y can arrive with on instance `id` (count `count`) of named-barrier
  // object `obj` before it completes, or kNamedUnbounded.
  int64_t NamedCap(uint32_t y_agent, uint32_t obj, uint32_t id, uint32_t count);
  // Whether the rule applies to unit x (of n_units; unit_at(y, o) gives y's agent, whether it
  // is enabled and whether its whole future touches o; x_exit: x's step is its agent's exit):
  // *obj its object, *join the units it takes in there, ascending.
  template <typename UnitAt>
  bool NamedJoin(size_t x, size_t n_units, const UnitAt& unit_at, bool x_exit, uint32_t* obj,
                 std::vector<uint32_t>* join);
  void NamedJoinsGeneral();
  void NamedJoinsMasks();
  uint64_t NamedSpecial(const MaskUnit& ux) const;
  std::vector<std::pair<uint32_t, int64_t>> holders_named_;  // NamedJoin: (unit, cap)
  std::vector<uint32_t> named_scratch_join_;
  std::vector<engine::NamedAccess> named_scratch_;
  // For unit x of the set, with `held` the objects some other unit of the set holds an update
  // of: per future kind, the objects on which a unit whose future accesses them so meets x
  // (Meets); *special: units that meet x by the one-holder rule; *sens: the balanced objects of
  // x that no other unit of the set holds (the result changes when a holder of one joins).
  // tgtp: the objects on which a unit meets x only by its held-phase future (held_phase.cc).
  void MaskTargets(const MaskUnit& ux, uint64_t held, uint64_t tgt[6], uint64_t tgtp[6],
                   uint64_t* special, uint64_t* sens);
  // Closure's twin on masks: the closure of {start} under Meets, stopping once it holds
  // `bound` enabled units; in_bits_ holds it. Returns the number of enabled units in it.
  size_t MaskClosure(size_t start, size_t bound);

  // Held-phase futures (explore/held_phase.cc).
  static uint8_t TallyKind(const engine::UpdateTally& t);
  // How unit y may access slot o before its first wait on o's current phase (kNone: not at
  // all); fk: its (maybe truncated) future's kind of o, not kNone.
  uint8_t HeldPhaseKind(size_t y, uint32_t o, uint8_t fk);
  // Per slot, the kinds of an entry's accesses ahead of its first gate of parity `parity`.
  const KindMasks& HeldPhaseMasks(const CacheEntry& c, int parity);
  // Fills ft_->held for this state.
  void EnsureHeldTable();

  // The agent's future from this state (Engine::AgentFuture, memoised by agent, pc, variables
  // and truncation: the look-ahead depends on nothing else), or its static over-approximation.
  const CacheEntry* Future(Engine& e, uint32_t a, bool truncate);
  void GrowCacheTable();
  struct CacheEntry {
    uint64_t hash = 0;  // of the key, mixed (the table's index)
    uint32_t agent = 0;
    uint32_t pc = 0;
    uint8_t status = 0;
    bool truncate = false;
    std::vector<int64_t> vars;
    std::vector<uint8_t> kinds;
    bool exact = false;                       // the look-ahead (else the static future)
    std::vector<engine::NamedAccess> named;   // exact && !truncate: named-barrier accesses
    bool named_exact = false;                 // `named` was collected
    std::vector<engine::UpdateTally> tally;   // exact && !truncate: per slot, by slot
    std::vector<engine::UpdateTally> seq;     // exact && !truncate: updates, gates and other
                                              // waits in order, when there is a gate
    std::vector<uint32_t> gate_slots;         // the slots of seq's gates, distinct
    std::vector<uint32_t> multi;  // exact && !truncate: slots with two or more update records
    uint64_t multi_mask = 0;      // ObjBit of multi
    std::vector<uint32_t> updates;  // the objects whose kind is kCompleteTx or kArrive, ascending
    uint64_t mask = 0;              // ObjBit of every object in kinds
    KindMasks km;                   // kinds as masks (exact when there are at most 64 objects)
    // HeldPhaseMasks, per parity of the cut, computed on first use.
    mutable bool held_known[2] = {false, false};
    mutable KindMasks held_km[2];
  };

  uint32_t n_obj_;
  bool guarded_;  // ExploreOptions::guarded_waits
  bool phase_bounded_;  // ExploreOptions::phase_bounded_balance
  bool held_phase_;     // ExploreOptions::held_phase_futures (and guarded waits)
  uint64_t held_phase_cuts_ = 0;
  bool odd_known_ = false;  // EnsureHeldTable: odd_slots_ computed for this state
  uint64_t odd_slots_ = 0;  // the slots whose current phase is odd
  bool exact_peers_;    // ExploreOptions::exact_peer_futures
  bool arrival_costs_;  // ExploreOptions::arrival_costs
  bool named_rule_;     // ExploreOptions::named_barrier_commute
  bool any_gate_ = false;  // some live agent's future has a gate (this state)
  bool upd_patched_ = false;  // Slot narrowed a unit's `upd` (MaskClosure: held sets again)
  std::vector<uint8_t> stuck_;  // per agent, this state: Stuck (0 not asked, 1 no, 2 yes)
  std::vector<std::vector<uint8_t>> stuck_pre_;  // per stuck agent: pre_ of its fixpoint
  std::vector<uint8_t> stuck_may_known_;         // per agent: stuck_may_ computed
  std::vector<uint64_t> stuck_may_;              // per agent: StuckMayMask
  std::vector<uint32_t> gate_q_;  // GatedSums: the hypotheses q_w
  std::vector<uint8_t> gate_raised_;        // GatedSums: hypotheses raised in this round
  std::vector<uint32_t> walk_pos_;          // GatedSums: per agent, where its walk stopped
  std::vector<uint32_t> walk_lo_, walk_ep_;  // GatedSums: per agent and slot, lo_w and its call
  uint32_t call_ep_ = 0;
  std::vector<uint8_t> gate_breaks_;        // GatedSums: breaking accesses ahead of the cuts
  std::vector<int64_t> gate_a_, gate_e_, gate_c_;  // GatedSums: arrivals, expect_tx and
                                                   // complete_tx bytes ahead of the cuts
  std::vector<uint8_t> pre_;  // GatedSums: per agent, its updates of o ahead of its cut (0, 1, 2+)
  std::vector<uint8_t> gated_;      // ComputeBalanced: balanced by the gated sums
  std::vector<uint8_t> asked_;      // ComputeBalanced: slots of some unit's step
  std::vector<uint8_t> gated_pre_;  // and then per slot and agent: pre_
  std::vector<std::vector<uint8_t>> static_future_;  // AgentMayTouch, every access kOther
  // The memo: a deque (appending keeps references to earlier entries valid) indexed by a hash
  // of the key; entries compare the whole key.
  std::deque<CacheEntry> entries_;
  std::vector<uint32_t> ctab_;
  std::vector<const CacheEntry*> last_[2];  // per truncation and agent: the last entry used
  std::vector<uint64_t> last_gen_[2];  // and the AgentState::gen it was used for
  std::vector<const std::vector<uint8_t>*> trunc_;  // per agent: its truncated future (SetTrunc)
  Engine* e_ = nullptr;  // the state of the current Choose
  bool balanced_ready_ = false;  // EnsureBalanced ran for it
  bool futures_set_ = false;     // SetFutures ran for it: units' futures for futures_cluster_
  uint32_t futures_cluster_ = 0;
  size_t futures_full_ = 0;  // the unit of that cluster with its full future (n_units_: none)
  std::vector<uint64_t> static_mask_;  // per agent: ObjBit of its static future
  std::vector<KindMasks> static_km_;   // per agent: its static future as masks
  bool masks_ = false;  // ChooseMasks applies (at most 64 objects, every rule on)
  std::vector<const KindMasks*> trunc_km_;  // per agent, this state (ChooseMasks)
  std::vector<MaskUnit> mu_;  // ChooseMasks's units
  static constexpr uint32_t kNoTrunc = 0xffffffffu, kUnset = 0xfffffffeu;
  FutureTable tables_[2];  // SetMaskFutures: per truncating cluster (table_cluster_)
  uint32_t table_cluster_[2] = {kUnset, kUnset};
  FutureTable* ft_ = nullptr;  // the current start's
  uint64_t in_bits_ = 0;      // MaskClosure's set
  uint64_t slot_known_ = 0;   // Slot: the slots whose flags are computed for this state
  bool sums_ready_ = false;   // Slot: UpdateAgentSums ran for this state
  std::vector<SlotFlags> slot_flags_;
  struct PeekMemo {
    bool valid = false;
    uint32_t pc = 0;
    uint64_t gen = 0;  // the AgentState::gen it was last found for (same pc and variables)
    std::vector<int64_t> vars;
    Footprint fp;
    uint32_t blocks_on = Engine::kNoSlot;
    uint32_t wait_slot = Engine::kNoSlot;  // an mbarrier wait's slot, and its state when peeked
    model::MbarrierState wait_state;
  };
  std::vector<PeekMemo> peek_;  // per agent (Peek)
  std::vector<uint8_t> balanced_;
  std::vector<uint8_t> complete_with_last_;
  std::vector<uint8_t> observed_;
  uint32_t n_slots_ = 0;
  // Rule switches for experiments (bits: 1 wait-wait, 2 one-holder NES, 4 wait vs held update,
  // 8 balanced barriers, 16 complete_tx-only, 32 cluster-wait truncation, 64 cluster
  // arrive/exit kinds, 128 predicted footprints); a set bit switches a rule off. All on.
  uint32_t n_clusters_ = 0;
  std::vector<uint32_t> unit_cluster_;
  std::vector<std::vector<uint32_t>> holders_;
  std::vector<engine::UpdateTally> sum_;
  std::vector<AgentSum> agent_sum_;  // ComputeBalanced: the agents' part of sum_, per slot
  std::vector<Contrib> contrib_;     // per agent: what agent_sum_ holds of it
  uint32_t n_inexact_ = 0;           // agents in contrib_ without an exact future
  std::vector<const CacheEntry*> full_;  // per agent: its full future in this state
  std::vector<uint64_t> trunc_mask_;
  std::vector<uint64_t> fmask_;  // per unit: its future's mask for the current start
  std::vector<engine::UpdateTally> tally_scratch_;
  static constexpr uint32_t kUnusedSlot = 0xffffffffu;
  std::vector<engine::UpdateTally> tally_acc_;  // Future: per slot (slot kUnusedSlot: empty)
  std::vector<uint32_t> touched_;
  std::vector<uint8_t> count_acc_;  // Future: update records per slot (then reset)
  Footprint scratch_;
  std::vector<Unit> units_;
  size_t n_units_ = 0;
  std::vector<uint8_t> in_;
  std::vector<uint8_t> best_set_;
  std::vector<size_t> work_;
};

}  // namespace parity::verifier::reduction

#endif  // PARITY_VERIFIER_EXPLORE_REDUCER_H_
