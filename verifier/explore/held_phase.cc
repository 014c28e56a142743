// Held-phase futures (ExploreOptions::held_phase_futures): a refinement of the persistent sets
// of `parity explore` (explore.h) for barriers that many agents update and wait on, such as
// the empty barriers of a pipeline whose every warp consumes (each warp of each CTA of a
// multicast releases the stage to every CTA that loaded it, and each CTA's producer waits
// for those releases). Members of Reducer, declared in reducer.h.
//
// The rule. Let x be a unit of the set whose step updates mbarrier slot o additively (an
// arrive-on, a complete_tx, a TMA delivery, or the issue of a TMA load whose delivery lands on
// o: Access kArrive or kCompleteTx) while o is *balanced* in the state s (Reducer::
// ComputeBalanced, with the phase-bounded sums of GatedSums). Then a unit y outside the set
// joins because of x's access to o only by what y may do to o *before its first blocking wait
// on o's current phase*: y's look-ahead (Engine::AgentFuture's records in program order:
// updates, gates, other waits) is cut at its first parity wait on o whose parity is that of
// o's current phase q (UpdateTally::gate == q & 1), and only y's accesses to o ahead of the
// cut count (HeldPhaseKind); with a cluster-truncated future (SetFutures), only where the
// truncated future still touches o. Units that are in-flight operations keep their futures.
//
// Why the set stays persistent. Take any path from s of steps outside the set (the guarded
// graph: a step that would only block is not a step while another is enabled, explore.h).
//  (a) Phase q of o does not complete on it. x's step is not taken (x is in the set; an agent
//      unit's agent does not move, an in-flight unit stays in flight), and it is a necessary
//      update of phase q: the balance says pending(o) >= A, the arrivals that can come before
//      q completes (whole futures, or those ahead of the cuts of GatedSums, whose claim is
//      exactly that nothing else can happen to o before q completes), and tx + E - C == 0 with
//      every expect_tx carried by an arrival (a bare expect_tx breaks the balance). An
//      arrival of x with count >= 1 leaves pending above 0 while it is outstanding. (An arrive
//      of count 0 violates, M1010, whenever it is taken; it stays enabled on every path outside
//      the set, so every path from s to an end takes it and ends in that violation, which the
//      set holds: nothing else is left to preserve.) A complete_tx of b > 0 bytes (a zero-
//      byte one breaks the balance) or a TMA issue whose deliveries carry b > 0 bytes to o:
//      pending reaches 0 only after all of A, hence all of E, and then tx equals the
//      complete_tx bytes still to come, at least b. So phase q needs x's update.
//  (b) So o stays live (a breaking access would have broken the balance) and in phase q, and
//      y's gate on o with parity q & 1 (a try_wait.parity on y's own CTA's barrier; waits on a
//      peer's barrier are run-time errors, no gates) tests the current, incomplete phase: it
//      would only block (model WaitOnPhase returns before setting anything), which is not a
//      step of the guarded graph while x's step, which never blocks, is enabled (the
//      all-blocking case of the guarded search cannot arise: x's step is enabled throughout).
//      A gate whose parity is not q's passes at once and counts as a wait ahead of the cut,
//      like a test_wait or a token wait (kReadsPhase), which never cut. y's pc and
//      variables do not get past that wait: the look-ahead runs y's code as if every wait
//      passed, and waits that pass return nothing that steers y's code (a role that reads a
//      test_wait result or a state token has no exact look-ahead, AgentMayTouch, and then no
//      barrier is balanced at all). Everything y does to o on the path is ahead of the cut.
//  (c) Hence the closure's condition of explore.h, "no sequence of steps outside the set can
//      touch what a step in the set touches" in a dependent way, holds for o when it holds
//      for y's accesses ahead of the cut: Conflict and Meets are applied to them unchanged
//      (with the balanced-barrier exceptions: an update of y still commutes with x's, a
//      passing wait or a test_wait of y ahead of the cut still needs the "preceding phase
//      observed" flag set and another holder in the set, as Meets says). Accesses of y to
//      other objects, and other accesses of x, are judged as before.
// Hence the sets are persistent in the guarded graph and the arguments of explore.h (end
// states, violations, symmetry, state caching, parallel searches) and of every_path.h (every
// completed run has an equivalent path through the sets; the dependency relation between
// steps, and so happens-before of swapped steps, is not changed: only which steps can occur
// outside the set is bounded more tightly) apply unchanged. Without guarded waits a blocking
// wait is a step that reads the phase, so the rule is off (Reducer::held_phase_).
//
// Where it matters: x = a consumer warp's release arrive on the empty barriers of three CTAs
// (the 2x2 multicast); y = a producer warp whose look-ahead on that empty barrier is its own
// release (an update: commutes on a balanced barrier) and then its wait for the phase (the
// cut): its whole future, an arrive and a wait, is kOther there and made it join every release.
// tests/verifier: differential_test and every_path_sets_test run generated non-warp-specialised
// rings (GenOptions::nonws) with the rule on and off.
#include "verifier/explore/reducer.h"

#include <cstdint>

namespace parity::verifier::reduction {

// The access kind of one look-ahead record on its slot (as AgentFuture's footprint counts it,
// or a coarser one): a wait reads the phase; an update that breaks is kOther; an additive
// update carrying an arrival or expect_tx is kArrive, one carrying only bytes kCompleteTx.
uint8_t Reducer::TallyKind(const engine::UpdateTally& t) {
  if (t.gate >= 0) return kWaitK;
  if (t.breaks) return kOther;
  if (t.arrivals != 0 || t.expect != 0 || t.complete == 0) return kArr;
  return kTx;
}

uint8_t Reducer::HeldPhaseKind(size_t y, uint32_t o, uint8_t fk) {
  const Unit& u = units_[y];
  if (u.agent == kNoAgent) return fk;
  const CacheEntry& c = *full_[u.agent];
  if (!c.exact || c.seq.empty()) return fk;  // no gate: the whole future
  const int8_t cut = static_cast<int8_t>(e_->slot_state(o).phase & 1u);
  uint8_t k = kNone;
  for (const engine::UpdateTally& t : c.seq) {
    if (t.slot != o) continue;
    if (t.gate == cut) break;
    const uint8_t tk = TallyKind(t);
    k = k == kNone ? tk
                   : static_cast<uint8_t>(engine::MergeAccess(static_cast<engine::Access>(k),
                                                              static_cast<engine::Access>(tk)));
  }
  // Never more than the (maybe truncated) future says (fk: an access to o remains there).
  return k;
}

const KindMasks& Reducer::HeldPhaseMasks(const CacheEntry& c, int parity) {
  if (!c.held_known[parity]) {
    c.held_known[parity] = true;
    KindMasks m;
    uint64_t cut = 0;  // slots whose cut has been met
    for (const engine::UpdateTally& t : c.seq) {
      if (t.slot >= n_slots_) continue;
      const uint64_t b = ObjBit(t.slot);
      if ((cut & b) != 0) continue;
      if (t.gate == parity) {
        cut |= b;
        continue;
      }
      MergeMask(m, t.slot, TallyKind(t));
    }
    c.held_km[parity] = m;
  }
  return c.held_km[parity];
}

void Reducer::EnsureHeldTable() {
  FutureTable& ft = *ft_;
  if (ft.held_ready) return;
  ft.held_ready = true;
  if (!odd_known_) {
    odd_known_ = true;
    odd_slots_ = 0;
    for (uint32_t o = 0; o < n_slots_; ++o) {
      if (e_->slot_state(o).phase & 1u) odd_slots_ |= ObjBit(o);
    }
  }
  for (int k = 0; k < 6; ++k) std::fill_n(ft.held[k], n_obj_, 0);
  for (size_t y = 0; y < n_units_; ++y) {
    const KindMasks* f = ft.f[y];
    KindMasks pk;
    const MaskUnit& u = mu_[y];
    const CacheEntry* c = u.agent == kNoAgent ? nullptr : full_[u.agent];
    if (c == nullptr || !c->exact || c->seq.empty()) {
      pk = *f;
    } else {
      const KindMasks& m0 = HeldPhaseMasks(*c, 0);
      const KindMasks& m1 = HeldPhaseMasks(*c, 1);
      for (int k = 0; k < 6; ++k) {
        pk.k[k] = ((m0.k[k] & ~odd_slots_) | (m1.k[k] & odd_slots_)) & f->any;
      }
    }
    const uint64_t yb = uint64_t{1} << y;
    for (int k = 0; k < 6; ++k) {
      for (uint64_t m = pk.k[k]; m != 0; m &= m - 1) ft.held[k][__builtin_ctzll(m)] |= yb;
    }
  }
}

}  // namespace parity::verifier::reduction

