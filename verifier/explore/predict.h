// Successor prediction of the depth-first search (explore/dfs.cc; ExploreOptions::
// predict_successors): what a step did to the fingerprint, carried to the states where it
// does the same, and a memo of agents' steps keyed by what they read.
#ifndef PARITY_VERIFIER_EXPLORE_PREDICT_H_
#define PARITY_VERIFIER_EXPLORE_PREDICT_H_

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <memory>

#include "sim/common/check.h"
#include "sim/engine/engine.h"

namespace parity::verifier::explore {

using engine::Engine;
using engine::Outcome;
using engine::Predictor;

// Successor prediction (ExploreOptions::predict_successors; brute force only). What a step
// taken at a state did, as far as the fingerprint goes: the difference it made to
// Predictor::FingerprintSum, and the objects it marked as changed (StepMarks) and touched
// (its Footprint). At a successor reached by another step t, the same step (the same agent,
// or the same in-flight operation, found by position: carry) makes the same difference when
// t marked none of those objects: the components it changes and everything it reads are then
// as they were. The
// step's successor there has the fingerprint FinishFingerprint(sum + delta, kRunning) (a step
// that ended the run is not recorded; one that would end it there only from other agents'
// states, a completion or a deadlock, leads to a state whose running twin was never stored,
// so the lookup misses; such a successor is then stepped, unless another step is enabled,
// which rules both out: see defer_new in Dfs).
// The objects as bits: object o is bit o % 64 (exact up to 64 objects; beyond, two objects
// can share a bit, which only makes a step look dependent where it is not: no prediction).
inline uint64_t ObjectBit(uint32_t o) { return uint64_t{1} << (o & 63); }
struct Known {
  uint64_t delta = 0;
  uint64_t marked = 0;  // the objects the step marked
  uint64_t objects = 0;  // the objects it marked or touched
  bool valid = false;
  bool Meets(const Known& t) const { return (t.marked & objects) != 0; }  // t marked one
};
// e's fingerprint (Engine::Fingerprint) and, in *sum, the sum it finishes. In builds with
// assertions it is also taken through Fingerprint(), which checks every 8th fingerprint
// against one made from scratch (Engine::FpChecked: a step that changed state it did not
// mark), the check that predictions (carry, PeekDeliveryDelta, the memo) rely on.
inline uint64_t FingerprintAndSum(const Engine& e, uint64_t* sum) {
  *sum = Predictor(e).FingerprintSum();
  const uint64_t fp = Predictor::FinishFingerprint(*sum, e.outcome());
#ifndef NDEBUG
  PARITY_CHECK(e.Fingerprint() == fp, "explore: FingerprintSum disagrees with Fingerprint");
#endif
  return fp;
}
// Records what step `k` (just taken on `e`, a copy of a state with sum `sum`) did; returns
// the successor's fingerprint (e.Fingerprint()) and, in *after_sum, its sum.
inline uint64_t Learn(Known& k, const Engine& e, const engine::Footprint& touched,
                      uint64_t sum, uint64_t* after_sum) {
  const uint64_t fp = FingerprintAndSum(e, after_sum);
  const uint64_t after = *after_sum;
  k.valid = false;
  const uint32_t* marked = nullptr;
  uint32_t n = 0;
  if (e.outcome() == Outcome::kRunning && Predictor(e).StepMarks(&marked, &n) &&
      !touched.overflow) {
    k.marked = 0;
    for (uint32_t i = 0; i < n; ++i) k.marked |= ObjectBit(marked[i]);
    k.objects = k.marked;
    for (uint32_t i = 0; i < touched.n; ++i) k.objects |= ObjectBit(touched.objects[i]);
    k.delta = after - sum;
    k.valid = true;
  }
  return fp;
}

// Successor prediction for agent steps: a memo of what an agent's step did, keyed by what
// it read. A step that did not look at other agents (Predictor::StepScanned: no phase, cluster
// or named barrier woke anyone), changed only its own agent and objects it touched, and left
// the run going is a function of its agent's state and the touched objects' states: in any
// state where the agent's content hash and those objects' components are the same, the same
// step changes those objects' components by the same amounts, sets the agent's content hash
// to the same value and adds the same operations to its in-flight multiset. (An agent whose
// steps read its own in-flight operations, through async groups, is keyed by them too.) Its
// successor's sum follows from the state's cached components (the agent's component is
// remade with the state's own in-flight operations). Direct-mapped by (agent, content hash).
// All zero: no entry (the table is calloc'd: a small search does not pay for initialising
// it, which took 14 % of a 40K-state brute force).
class AgentMemoTable {
 public:
  AgentMemoTable() {
    memo_.reset(static_cast<AgentMemo*>(std::calloc(kAgentMemo, sizeof(AgentMemo))));
    PARITY_CHECK(memo_ != nullptr, "explore: out of memory for the agent-step memo");
  }
  // Records agent a's step from `before` (a clean fingerprint cache) to `after` (stepped with
  // `touched`, FingerprintSum() taken), whose Known k is valid, when it is a function of what
  // it touched (AgentMemo).
  void Store(const Engine& before, const Engine& after, uint32_t a,
             const engine::Footprint& touched, const Known& k);
  // What agent a's step from g (a clean fingerprint cache) does, when the memo knows.
  bool Find(const Engine& g, uint32_t a, Known* k) const;

 private:
  struct AgentMemo {
    uint32_t agent1 = 0;            // the agent + 1; 0: none
    uint32_t n = 0;                 // touched shared objects
    uint64_t content = 0;           // the agent's content hash before the step
    uint32_t obj[4] = {};
    uint64_t val[4] = {};           // their components before the step
    uint64_t shared_delta = 0;      // what the step added to their components' sum
    uint64_t content_after = 0;
    uint64_t ops_added = 0;         // what it added to the agent's in-flight operations' hash
    // The agent's in-flight operations' hash before the step, when its steps may read them
    // (Predictor::AgentStepsReadOwnOps: a key too); else 0 and not compared.
    bool ops_keyed = false;
    uint64_t ops_before = 0;
    uint64_t marked = 0, objects = 0;  // Known's masks
  };
  static constexpr size_t kAgentMemo = size_t{1} << 14;
  struct FreeMemo {
    void operator()(AgentMemo* m) const { std::free(m); }
  };
  std::unique_ptr<AgentMemo[], FreeMemo> memo_;
  static size_t MemoIndex(uint32_t a, uint64_t content) {
    return static_cast<size_t>(((content ^ (uint64_t{a} << 48)) * 0x9e3779b97f4a7c15ull) >> 50);
  }
};

inline void AgentMemoTable::Store(const Engine& before, const Engine& after, uint32_t a,
                                  const engine::Footprint& touched, const Known& k) {
  const Predictor pb(before), pa(after);
  if (pa.StepScanned()) return;
  const uint32_t first = before.GroupsObject(0);
  const uint32_t self = before.GroupsObject(a);
  AgentMemo m;
  for (uint32_t i = 0; i < touched.n; ++i) {
    const uint32_t o = touched.objects[i];
    if (o >= first) {
      if (o != self) return;  // another agent's state read
      continue;
    }
    if (std::find(m.obj, m.obj + m.n, o) != m.obj + m.n) continue;
    if (m.n == 4) return;
    m.obj[m.n] = o;
    m.val[m.n++] = pb.FpCachedObject(o);
  }
  const uint32_t* marked = nullptr;
  uint32_t nm = 0;
  if (!pa.StepMarks(&marked, &nm)) return;
  for (uint32_t i = 0; i < nm; ++i) {
    const uint32_t o = marked[i];
    if (o == self) continue;
    if (o >= first || std::find(m.obj, m.obj + m.n, o) == m.obj + m.n) return;
    m.shared_delta += pa.FpCachedObject(o) - pb.FpCachedObject(o);
  }
  m.agent1 = a + 1;
  m.content = pb.FpCachedObject(self);
  m.content_after = pa.FpCachedObject(self);
  m.ops_added = pa.FpCachedOps(a) - pb.FpCachedOps(a);
  m.ops_keyed = pb.AgentStepsReadOwnOps(a);
  if (m.ops_keyed) m.ops_before = pb.FpCachedOps(a);
  m.marked = k.marked;
  m.objects = k.objects;
  memo_[MemoIndex(a, m.content)] = m;
}

inline bool AgentMemoTable::Find(const Engine& g, uint32_t a, Known* k) const {
  const Predictor pg(g);
  const uint64_t content = pg.FpCachedObject(g.GroupsObject(a));
  const AgentMemo& m = memo_[MemoIndex(a, content)];
  if (m.agent1 != a + 1 || m.content != content) return false;
  if (m.ops_keyed && pg.FpCachedOps(a) != m.ops_before) return false;
  for (uint32_t i = 0; i < m.n; ++i) {
    if (pg.FpCachedObject(m.obj[i]) != m.val[i]) return false;
  }
  k->delta = m.shared_delta +
             Predictor::FpAgentComponent(a, m.content_after, pg.FpCachedOps(a) + m.ops_added) -
             pg.FpCachedAgent(a);
  k->marked = m.marked;
  k->objects = m.objects;
  k->valid = true;
  return true;
}

}  // namespace parity::verifier::explore

#endif  // PARITY_VERIFIER_EXPLORE_PREDICT_H_
