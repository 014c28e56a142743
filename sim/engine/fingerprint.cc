// The incremental fingerprint: per-object and per-agent components kept with the state, the
// marks a step leaves, successor prediction from the cached components (PeekDeliveryDelta),
// and the self-checks against a fingerprint computed from scratch.
#include "sim/engine/engine.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cassert>
#include <cstddef>
#include <cstring>
#include <deque>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <variant>

#include "sim/common/bytes.h"
#include "sim/common/check.h"
#include "sim/engine/code.h"
#include "sim/engine/components.h"
#include "sim/model/tensor_map.h"
#include "sim/model/tma.h"

namespace parity::engine {

// An agent's variables (every fingerprint refresh of an agent reads them).
const int64_t* Engine::agent_vars(uint32_t agent) const {
  return vars_.data() + code_->var_offset[agent];
}

uint32_t Engine::agent_num_vars(uint32_t agent) const {
  const uint32_t end = agent + 1 < code_->var_offset.size()
                           ? code_->var_offset[agent + 1]
                           : static_cast<uint32_t>(vars_.size());
  return end - code_->var_offset[agent];
}

namespace {

// One word into a running fingerprint, and a component's finalisation (engine.h).
inline uint64_t FpWord(uint64_t h, uint64_t v) { return fpmix::Word(h, v); }
inline uint64_t FpFinal(uint64_t h) { return fpmix::Final(h); }

// A running hash of words (the fold every component makes of its table words).
struct Fold {
  uint64_t h;
  void operator()(uint64_t v) { h = FpWord(h, v); }
};


}  // namespace

// One in-flight operation, strongly mixed (a term of its issuer's in-flight multiset's sum): its
// words (Table::OpWords) without the issuer, which keys the component that holds it.
uint64_t Engine::FpOp(const InFlight& f, uint64_t list) {
  Fold fold{0x9216d5d98979fb1bull};
  Table::OpWords(f, list, fold);
  return FpFinal(fold.h);
}

// A shared object's component (objects below num_objects(): mbarrier slots, cluster barriers,
// each CTA's named barriers): its table words (which begin with its number), finalised.
uint64_t Engine::FpObject(uint32_t o) const {
  uint32_t i = 0;
  Fold fold{Table::kSeed[Table::KindOf(*this, o, &i)]};
  Table::ObjectWords(*this, o, fold);
  return FpFinal(fold.h);
}

// An agent's private state without its id (the key is added in FpCombine): its table words.
uint64_t Engine::FpAgentContent(uint32_t a) const {
  Fold fold{Table::kSeed[Table::kAgent]};
  Table::ObjectWords(*this, layout_.first_agent_object + a, fold);
  return fold.h;
}

// The same as if its status were `status`.
uint64_t Engine::FpAgentContent(uint32_t a, uint8_t status) const {
  Fold fold{Table::kSeed[Table::kAgent]};
  Table::ObjectWords(*this, layout_.first_agent_object + a, fold, status);
  return fold.h;
}

// The in-flight operations agent a issued, as a multiset: a sum of strongly mixed per-operation
// hashes (commutative, so the list order, which depends on the history, does not matter).
uint64_t Engine::FpAgentOps(uint32_t a) const {
  uint64_t sum = 0;
  for (const InFlight& f : in_flight_) {
    if (f.agent == a) sum += FpOp(f, 1);
  }
  for (const InFlight& f : deferred_) {
    if (f.agent == a) sum += FpOp(f, 2);
  }
  return sum;
}

namespace {
// An agent's keyed component: its content hash, the key, and its in-flight operations.
inline uint64_t FpKeyed(uint64_t content, uint64_t key, uint64_t ops) {
  return FpFinal(FpWord(FpWord(content, key), ops));
}
inline uint64_t FpPlainKey(uint32_t a) { return (uint64_t{1} << 40) | a; }
}  // namespace

void Engine::FpRefresh(FpCache& k, const std::vector<uint32_t>* group) const {
  const uint32_t n = num_objects();
  const uint32_t first_agent = n - static_cast<uint32_t>(agents_.size());
  const FpLayout at = FpParts();
  const uint32_t words = at.obj;
  if (!k.valid) {
    PARITY_CHECK(k.w.size() == FpWords(n, static_cast<uint32_t>(agents_.size())),
                 "FpRefresh: cache of another size");
    std::fill(k.w.begin(), k.w.end(), 0);
    for (uint32_t o = 0; o < n; ++o) k.w[o >> 6] |= uint64_t{1} << (o & 63);
    k.shared_sum = 0;
    k.agents_sum = 0;
    k.plain = true;  // every component is stale
    k.valid = true;
  }
  uint64_t* const obj = k.w.data() + at.obj;
  uint64_t* const ops = k.w.data() + at.ops;
  uint64_t* const fin = k.w.data() + at.fin;
  for (uint32_t w = 0; w < words; ++w) {
    uint64_t bits = k.w[w];
    k.w[w] = 0;
    while (bits != 0) {
      const uint32_t o = static_cast<uint32_t>(w * 64) + static_cast<uint32_t>(__builtin_ctzll(bits));
      bits &= bits - 1;
      if (o < first_agent) {
        const uint64_t h = FpObject(o);
        k.shared_sum += h - obj[o];
        obj[o] = h;
      } else {
        const uint32_t a = o - first_agent;
        obj[o] = FpAgentContent(a);
        ops[a] = FpAgentOps(a);
        if (group == nullptr && k.plain) {
          const uint64_t c = FpKeyed(obj[o], FpPlainKey(a), ops[a]);
          k.agents_sum += c - fin[a];
          fin[a] = c;
          fin[agents_.size() + a] = FpPlainKey(a);
        } else {
          fin[agents_.size() + a] = kStaleKey;
        }
      }
    }
  }
}

uint64_t Engine::FpCombine(FpCache& k, const std::vector<uint32_t>* group) const {
  return FinishFingerprint(FpTotal(k, group), outcome_);
}

uint64_t Engine::FpTotal(FpCache& k, const std::vector<uint32_t>* group) const {
  // Plain after plain: FpRefresh keyed the agents it recomputed, every other key is plain.
  if (!(group == nullptr && k.plain)) FpRekey(k, group);
  k.plain = group == nullptr;
  uint64_t total = k.shared_sum + k.agents_sum;
  // `readback` data (empty unless the program has one): hashed whole.
  if (!smem_data_.empty() || !global_data_.empty()) {
    Fold fold{0x3f84d5b5b5470917ull};
    Table::DataWords(*this, fold);
    total += FpFinal(fold.h);
  }
  return total;
}

uint64_t Engine::FingerprintSum() const {
  FpRefresh(fpc_, nullptr);
  return FpTotal(fpc_, nullptr);
}

bool Engine::PeekDeliveryDelta(uint32_t i, uint64_t* delta, uint32_t* woken,
                               uint32_t* n_woken) const {
  *n_woken = 0;
  if (outcome_ != Outcome::kRunning || !fpc_.valid || !fpc_.plain || code_->tracks_data ||
      i >= in_flight_.size() || steps_ + 1 >= options_.max_steps ||
      (ready_.empty() && in_flight_.size() < 2)) {
    return false;
  }
  const InFlight& f = in_flight_[i];
  if (f.kind != InFlight::kTmaDeliver && f.kind != InFlight::kBulkDeliver &&
      f.kind != InFlight::kStAsync) {
    return false;
  }
  const uint32_t n = static_cast<uint32_t>(agents_.size());
  const uint32_t agent_obj = num_objects() - n + f.agent;
  const FpLayout at = FpParts();
  const uint64_t* const w = fpc_.w.data();
  // Both components must be current (no mark pending) and the agent's keyed plainly.
  if (((w[f.slot >> 6] >> (f.slot & 63)) & 1) != 0 ||
      ((w[agent_obj >> 6] >> (agent_obj & 63)) & 1) != 0 ||
      w[at.fin + n + f.agent] != FpPlainKey(f.agent)) {
    return false;
  }
  // Exec::Deliver and CompleteTx without a violation: the slot's state changes (its tx-count
  // goes down; when that completes the phase, Exec::PhaseCompleted wakes the agents of the
  // slot's CTA that wait on it: their status becomes ready), the operation leaves its issuer's
  // in-flight multiset, nothing else changes but the trace, the ready list and the counters
  // (the run goes on: another agent is ready or another operation in flight, and the step
  // limit is not reached).
  model::MbarrierState st = barriers_[f.slot];
  // A load that delivers in pieces (EngineOptions::tx_pieces) also appends its rest.
  if ((options_.tx_pieces || !options_.tx_pieces_at.empty()) && f.kind != InFlight::kStAsync &&
      st.life == model::MbarrierLife::kLive && st.tx_count > 0 &&
      static_cast<uint32_t>(st.tx_count) < f.bytes) {
    return false;
  }
  const model::MbarrierResult r = model::MbarrierCompleteTx(st, f.bytes);
  if (r.violation) return false;
  const uint64_t ops = w[at.ops + f.agent] - FpOp(f, 1);
  Fold slot{Table::kSeed[Table::kSlot]};
  slot(f.slot);
  Table::Words(st, slot);
  uint64_t d = (FpFinal(slot.h) - w[at.obj + f.slot]) +
               (FpKeyed(w[at.obj + agent_obj], FpPlainKey(f.agent), ops) - w[at.fin + f.agent]);
  if (r.phase_completed) {  // Exec::WakeBarrier
    const uint32_t cta = f.slot / code_->barriers_per_cta;
    for (uint32_t a = code_->cta_first_agent[cta]; a < code_->cta_first_agent[cta + 1]; ++a) {
      const AgentState& s = agents_[a];
      if (s.status != kBlocked || s.wait_slot != f.slot ||
          (s.wait != WaitKind::kMbarrierParity && s.wait != WaitKind::kMbarrierToken)) {
        continue;
      }
      const uint32_t o = num_objects() - n + a;
      if (((w[o >> 6] >> (o & 63)) & 1) != 0 || w[at.fin + n + a] != FpPlainKey(a) ||
          *n_woken == kPeekWokenMax) {
        return false;
      }
      woken[(*n_woken)++] = a;
      const uint64_t x = a == f.agent ? ops : w[at.ops + a];
      d += FpKeyed(FpAgentContent(a, kReady), FpPlainKey(a), x) -
           FpKeyed(w[at.obj + o], FpPlainKey(a), x);
    }
  }
  *delta = d;
  return true;
}

bool Engine::AgentStepsReadOwnOps(uint32_t a) const { return code_->group_state[a] != kNoGroups; }

uint64_t Engine::FpAgentComponent(uint32_t a, uint64_t content, uint64_t ops) {
  return FpKeyed(content, FpPlainKey(a), ops);
}

bool Engine::StepMarks(const uint32_t** objects, uint32_t* n) const {
  *objects = step_log_;
  *n = step_log_n_;
  return step_log_ok_;
}

// FpCombine's agents keyed for `group` (each recomputed when stale or keyed otherwise).
void Engine::FpRekey(FpCache& k, const std::vector<uint32_t>* group) const {
  const uint32_t n = static_cast<uint32_t>(agents_.size());
  const uint32_t objects = num_objects();
  const uint32_t first_agent = objects - n;
  const FpLayout at = FpParts();
  const uint64_t* const obj = k.w.data() + at.obj;
  const uint64_t* const ops = k.w.data() + at.ops;
  uint64_t* const fin = k.w.data() + at.fin;
  for (uint32_t a = 0; a < n; ++a) {
    // The key: the agent's id, or its symmetry class (distinct seeds keep the two apart).
    // An agent's keyed component is recomputed when its content changed (FpRefresh made its
    // key stale) or it is asked for with another key.
    const uint32_t g = group != nullptr ? (*group)[a] : kNoGroup;
    const uint64_t key = g == kNoGroup ? FpPlainKey(a) : (uint64_t{2} << 40) | g;
    if (fin[n + a] == key) continue;
    // Asked for with another key (not stale: FpRefresh did not see it change): RestoreStep
    // must copy its entries back too.
    if (fin[n + a] != kStaleKey && &k == &fpc_ && step_log_ok_) LogStep(first_agent + a);
    const uint64_t c = FpKeyed(obj[first_agent + a], key, ops[a]);
    k.agents_sum += c - fin[a];
    fin[a] = c;
    fin[n + a] = key;
  }
}

// The incremental fingerprint; in builds with assertions (tests) every 8th one of a thread is
// checked against one computed from scratch, so that a change of the state that a step does not
// mark is caught (a missing mark recurs along a search; checking all of them made the explorer's
// ASan tests 40 % slower).
uint64_t Engine::FpChecked(const std::vector<uint32_t>* group) const {
  FpRefresh(fpc_, group);
  const uint64_t h = FpCombine(fpc_, group);
#ifndef NDEBUG
  thread_local uint32_t calls = 0;
  if ((calls++ & 7) != 0 || !SelfChecks()) return h;
  // Scratch (the explorer's hot path does not allocate).
  thread_local std::vector<uint64_t> words;
  words.resize(fpc_.w.size());
  FpCache fresh;
  fresh.w = {words.data(), static_cast<uint32_t>(words.size())};
  FpRefresh(fresh, group);
  PARITY_CHECK(FpCombine(fresh, group) == h,
               "Fingerprint: a step changed state that it did not mark (Exec's accessors)");
#endif
  return h;
}

namespace {
std::atomic<bool> self_checks{true};
}  // namespace

void Engine::SetSelfChecks(bool on) { self_checks.store(on, std::memory_order_relaxed); }
bool Engine::SelfChecks() { return self_checks.load(std::memory_order_relaxed); }

uint64_t Engine::Fingerprint() const { return FpChecked(nullptr); }

uint64_t Engine::SymmetricFingerprint(const std::vector<uint32_t>& group) const {
  return FpChecked(&group);
}

}  // namespace parity::engine
