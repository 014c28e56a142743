// Happens-before of one run, from its trace: the one definition that the protocol rules
// (verifier/rules.h) and the data-race detector (verifier/races.h) both read.
//
// Vector clocks. Components are per cluster (no event orders two clusters): one per agent of the
// cluster (its event count) and one per mbarrier slot of the cluster (the phases of that slot an
// observer has seen), so a clock is as wide as the largest cluster's agents and slots.
//
// Edges (PTX ISA, Memory Consistency Model; mbarrier 9.7.13.15):
//   - program order: every event of an agent ticks its own component;
//   - memory semantics and scope (trace::kFlagRelaxed, kFlagScopeCluster, or the statement when
//     the program is given): a .relaxed arrive releases nothing and a .relaxed wait acquires
//     nothing, unless a fence.acq_rel makes a release pattern (fence, then the relaxed arrive:
//     it releases what the fence covers, at the narrower scope) or an acquire pattern (the
//     relaxed wait, then the fence: it acquires at the fence) of it; a relaxed barrier.cluster
//     arrive releases only what a fence.acq_rel.cluster before it covers. A release and an
//     acquire synchronise when they are in one CTA or both are .cluster-scoped;
//   - mbarrier release -> acquire: every arrive, remote arrive and arrive.expect_tx of an agent
//     (.release unless .relaxed) joins its clock into the slot's current phase; the phase
//     completion publishes the join and the phase number; a wait or successful test_wait
//     observing that completion joins it into the waiter (arrive has .release, try_wait and
//     test_wait .acquire semantics by default, both at .cta scope). A parity wait observes the
//     completed phase with its parity: the last one, or the one before (a stale wait); a parity
//     wait that passes on a slot where no phase of that parity completed (a fresh barrier waited
//     with parity 1) observes nothing;
//   - a standalone mbarrier.expect_tx or mbarrier.complete_tx (local or remote) is .relaxed (PTX
//     ISA 9.7.13.15.11/12: "does not provide any memory ordering semantics"): it releases only
//     what a fence.acq_rel before it covers (a release pattern), like a .relaxed arrive, at
//     .cta scope on the own CTA's barrier and .cluster on a peer's (the language gives it no
//     qualifier; the GPU executor issues those);
//   - an asynchronous operation's completion on a barrier (a TMA / bulk load's or st.async's
//     complete-tx, the arrive-on of a cp.async.mbarrier.arrive once the thread's cp.async
//     copies landed) publishes only that operation's own writes (PTX ISA 8.9.1.1: the implicit
//     complete-tx "does not transitively establish ordering with respect to prior instructions
//     from the issuing thread"; the try_wait guarantees name the cp.async / cp.async.bulk
//     operations, not the issuer's other accesses). Those writes are the checkers' witnesses on
//     the slot's component (its completed phases), which every observer of the phase gets,
//     whatever its scope; nothing of the issuer's clock is released;
//   - barrier.cluster: the k-th arrive of every agent of a cluster -> its k-th wait;
//   - fence.mbarrier_init.release.cluster is a release fence restricted to the executing
//     thread's prior mbarrier.init operations (PTX ISA, membar/fence: "When .op_restrict is
//     .mbarrier_init, the synchronizing effect of the fence only applies to the prior
//     mbarrier.init operations executed by the same thread"). With a later .relaxed arrive
//     (barrier.cluster.arrive.relaxed, as in the ISA's own example "mbarrier.init [bar];
//     fence.mbarrier_init.release.cluster; barrier.cluster.arrive.relaxed;", or a relaxed
//     mbarrier arrive) it forms a release pattern for those inits only. Each agent that executes
//     it has one more component, its *init component*: the agent's own count at its last such
//     fence. It travels with every edge like the others; a relaxed arrive after the fence
//     releases that component alone (not the agent's writes), and a .release arrive releases it
//     with the rest. The rules read it for P2007 (an init is visible to a remote user whose
//     clock's init component of the initialising agent reaches a fence after the init);
//   - bar.sync / bar.arrive: every arrival of one instance of a named barrier -> every bar.sync
//     that completes or waits for that instance.
// Two clocks per agent: `clock` is happens-before as PTX defines it; `weak_clock` also follows
// the release/acquire pairs whose scopes do not include each other (a .cta arrive observed by
// another CTA, a .cta wait observing another CTA's arrive), so weak >= strong. The race checker
// reads the weak clock for P2013 (release-scope-narrow): a pair ordered only by it.
// The edges of asynchronous units that complete through their issuer (cp.async.wait_group,
// cp.async.bulk.wait_group[.read], fence.proxy.async) are witnesses on the issuer's own
// component, which the checkers record at the issuer's event (races.cc, rules.cc): a later
// observer has seen the issuer's component reach that value exactly when the completion
// happens before it.
//
// Mode::kCausal follows every synchronisation edge whatever its semantics and scope (a .relaxed
// arrive or wait, a relaxed barrier.cluster.arrive, a .cta-scoped pair across CTAs, a standalone
// expect_tx / complete_tx): what an agent has *observed* of another, not what is visible to it.
// An observation proves that the observed agent has run, which is all that the start of a CTA
// needs (verifier/lifetime.h, P2030); it orders no data.
#ifndef PARITY_VERIFIER_HAPPENS_BEFORE_H_
#define PARITY_VERIFIER_HAPPENS_BEFORE_H_

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <unordered_map>
#include <utility>
#include <vector>

#include "sim/engine/engine.h"
#include "sim/ir/ir.h"
#include "sim/trace/event.h"
#include "verifier/pc_map.h"

namespace parity::verifier {

using VectorClock = std::vector<uint32_t>;

// into := max(into, from), component-wise.
void JoinClock(VectorClock& into, const VectorClock& from);

class HappensBefore {
 public:
  static constexpr uint32_t kNone = 0xffffffffu;
  enum class Mode : uint8_t { kPtx, kCausal };

  // Registers the engine's agents and every mbarrier slot the trace names. With the program,
  // an arrive's or wait's semantics and scope come from its statement, else from the event's
  // flags (the simulator and the GPU executor write both).
  HappensBefore(const engine::Engine& engine, std::span<const trace::TraceEvent> trace,
                const ir::Program* program = nullptr, Mode mode = Mode::kPtx);

  // --- identities ---
  uint32_t num_agents() const { return static_cast<uint32_t>(clocks_.size()); }
  uint32_t cluster_size() const { return cluster_size_; }
  uint32_t width() const { return width_; }
  uint32_t CtaGlobal(const trace::TraceEvent& ev, uint32_t rank) const {
    return ev.cluster * cluster_size_ + rank;
  }
  // The global agent of an agent's event; kNone for an event of no agent of this engine.
  uint32_t AgentOf(const trace::TraceEvent& ev) const;
  // The slot an event names (its target CTA, object and index); created when new.
  uint32_t SlotOf(const trace::TraceEvent& ev) {
    return Slot(CtaGlobal(ev, ev.target_cta), ev.object, ev.index);
  }
  uint32_t Slot(uint32_t cta_global, uint32_t object, uint32_t index);
  // The slot's id, or kNone when the trace never names it.
  uint32_t FindSlot(uint32_t cta_global, uint32_t object, uint32_t index) const;
  size_t num_slots() const { return slots_.size(); }
  uint32_t slot_cta(uint32_t slot) const { return slots_[slot].cta_global; }
  uint32_t slot_object(uint32_t slot) const { return slots_[slot].object; }
  uint32_t slot_index(uint32_t slot) const { return slots_[slot].index; }

  // --- clocks ---
  // An agent's own component, and a slot's.
  uint32_t AgentComponent(uint32_t agent) const { return local_[agent]; }
  uint32_t SlotComponent(uint32_t slot) const { return max_cluster_agents_ + slots_[slot].local; }
  // The agent's init component (see above), or kNone when it never runs fence.mbarrier_init.
  uint32_t InitComponent(uint32_t agent) const { return init_component_[agent]; }
  // How many barrier.cluster arrives the agent has made so far.
  uint32_t cluster_arrives(uint32_t agent) const { return cluster_arrives_[agent]; }
  const VectorClock& clock(uint32_t agent) const { return clocks_[agent].strong; }
  // Also through release/acquire pairs too narrow in scope for each other (see above).
  const VectorClock& weak_clock(uint32_t agent) const { return clocks_[agent].weak; }
  // The agent's own event count (its component in its own clock).
  uint32_t Own(uint32_t agent) const { return clocks_[agent].strong[local_[agent]]; }
  // Phases of the slot completed so far.
  uint32_t completed(uint32_t slot) const { return slots_[slot].completed; }

  // --- edges ---
  // Applies the edges of one event (program order included) in trace order. Events of no agent
  // (copy deliveries, a landing cp.async.mbarrier.arrive) release nothing (see above).
  void Step(const trace::TraceEvent& ev);

 private:
  struct Clocks {
    VectorClock strong, weak;
    void Assign(uint32_t width) {
      strong.assign(width, 0);
      weak.assign(width, 0);
    }
    void Join(const Clocks& o) {
      JoinClock(strong, o.strong);
      JoinClock(weak, o.weak);
    }
  };
  // What the releases of one barrier phase carry: `always` what every acquiring observer gets
  // (the phase's own component: the asynchronous writes that completed on it);
  // `by[(cta, cluster scope)]` the releases of agents of that CTA at that scope.
  struct PhaseAcc {
    Clocks always;
    std::map<std::pair<uint32_t, bool>, Clocks> by;
    void Assign(uint32_t width) {
      always.Assign(width);
      by.clear();
    }
  };
  struct SlotClocks {
    uint32_t cta_global = 0, object = 0, index = 0;
    uint32_t local = 0;      // index among its cluster's slots
    uint32_t completed = 0;  // phases completed
    PhaseAcc acc;            // joins of the current phase
    PhaseAcc last;           // published by the last completed phase
    PhaseAcc prev;           // ... and by the one before it
  };
  struct Order {
    bool relaxed = false;
    bool cluster = false;
  };
  struct FenceAt {  // an agent's last fence.acq_rel
    bool seen = false;
    bool cluster = false;
    Clocks at;
  };
  struct InitFenceAt {  // an agent's last fence.mbarrier_init
    bool seen = false;
    uint32_t epoch = 0;  // the agent's own count at the fence
  };
  struct PendingAcquire {  // a relaxed wait that a later fence.acq_rel makes an acquire
    uint32_t cta = 0;
    bool cluster = false;
    PhaseAcc seen;
  };
  static uint64_t Key(uint64_t a, uint64_t b, uint64_t c = 0) {
    return (a << 40) | (b << 20) | c;
  }
  void Observe(const trace::TraceEvent& ev, uint32_t agent);
  Order OrderOf(const trace::TraceEvent& ev, uint32_t agent) const;
  Clocks& By(PhaseAcc& acc, uint32_t cta, bool cluster);
  void ReleaseArrive(const trace::TraceEvent& ev, uint32_t agent, Order o, PhaseAcc& acc);
  // The release pattern of the agent's last fence.mbarrier_init with a relaxed arrive: its
  // init component, joined into `into`.
  void ReleaseInits(uint32_t agent, Clocks& into) const;
  void Acquire(uint32_t agent, uint32_t cta, bool cluster, const PhaseAcc& seen);

  std::optional<PcMap> pcs_;
  const engine::Engine* engine_ = nullptr;
  Mode mode_ = Mode::kPtx;

  uint32_t cluster_size_ = 1;
  uint32_t width_ = 0;
  uint32_t max_cluster_agents_ = 0;
  std::vector<uint32_t> local_;  // per agent: its index within its cluster
  std::vector<uint32_t> cluster_slots_;
  std::unordered_map<uint64_t, uint32_t> agent_ids_;
  std::unordered_map<uint64_t, uint32_t> slot_ids_;
  std::vector<SlotClocks> slots_;
  std::vector<Clocks> clocks_;  // per agent
  std::vector<FenceAt> fence_;  // per agent
  std::vector<InitFenceAt> init_fence_;       // per agent
  std::vector<uint32_t> init_component_;      // per agent: its init component, or kNone
  std::vector<std::vector<PendingAcquire>> acquire_pending_;  // per agent
  std::vector<uint32_t> cluster_arrives_;  // per agent: its barrier.cluster arrives so far
  std::map<std::pair<uint32_t, uint32_t>, Clocks> cluster_acc_;  // (cluster, phase)
  std::map<uint64_t, uint32_t> named_gen_;        // (CTA, barrier) -> current instance
  std::map<uint64_t, Clocks> named_acc_;          // (CTA, barrier, instance) -> its arrivals
  std::map<uint64_t, uint32_t> named_agent_gen_;  // (agent, barrier) -> instance it joined
};

}  // namespace parity::verifier

#endif  // PARITY_VERIFIER_HAPPENS_BEFORE_H_
