// The fingerprint of a state's image under a permutation of CTA ranks (Engine::
// PermutedFingerprint), made from the component table so that every part of the state is in it.
#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "sim/engine/code.h"
#include "sim/engine/components.h"
#include "sim/engine/engine.h"

namespace parity::engine {

namespace {

struct Fold {
  uint64_t h;
  void operator()(uint64_t v) { h = fpmix::Word(h, v); }
};

}  // namespace

// Each object's content is folded once (its words, without the ranks and slots that a
// permutation maps); per permutation only the mapped numbers and the key are mixed in, and the
// in-flight operations (which name ranks and slots) are hashed again.
uint64_t Engine::MinPermutedFingerprint(const std::vector<std::vector<uint32_t>>& perms,
                                        const std::vector<uint32_t>* group,
                                        const std::vector<std::vector<uint8_t>>& hidden) const {
  const Code& c = *code_;
  const uint32_t cs = c.cluster_size;
  const uint32_t bpc = c.barriers_per_cta;
  const uint32_t n = static_cast<uint32_t>(agents_.size());
  const uint32_t n_slots = static_cast<uint32_t>(barriers_.size());
  const uint32_t n_named = static_cast<uint32_t>(named_.size());
  thread_local std::vector<uint64_t> slot_h, named_h, agent_h, ops;
  thread_local std::vector<uint32_t> wait_slot;
  slot_h.resize(n_slots);
  named_h.resize(n_named);
  agent_h.resize(n);
  wait_slot.resize(n);
  ops.resize(n);
  uint64_t fixed = 0;  // the cluster barriers and `readback` data: no rank in them
  for (uint32_t o = 0; o < n_slots; ++o) {
    Fold f{Table::kSeed[Table::kSlot]};
    Table::Words(barriers_[o], f);
    slot_h[o] = f.h;
  }
  for (uint32_t i = 0; i < clusters_.size(); ++i) {
    Fold f{Table::kSeed[Table::kCluster]};
    f(i);
    Table::Words(clusters_[i], f);
    fixed += fpmix::Final(f.h);
  }
  for (uint32_t i = 0; i < n_named; ++i) {
    Fold f{Table::kSeed[Table::kNamed]};
    Table::Words(named_[i], f);
    named_h[i] = f.h;
  }
  for (uint32_t a = 0; a < n; ++a) {
    Fold f{Table::kSeed[Table::kAgent]};
    const std::vector<uint8_t>& hide = hidden[c.agents[a].role];
    wait_slot[a] = kNoSlot;
    // Every part of the agent's object (the table's list), the slot it waits on kept apart
    // (mapped per permutation) and the hidden variables left out.
    Table::AgentParts(
        a,
        [&](const auto& part) {
          using T = std::decay_t<decltype(part)>;
          if constexpr (std::is_same_v<T, AgentState>) {
            AgentState s = part;
            if (s.wait == WaitKind::kMbarrierParity || s.wait == WaitKind::kMbarrierToken) {
              wait_slot[a] = s.wait_slot;
              s.wait_slot = 0;
            }
            Table::Words(s, f);
          } else if constexpr (std::is_same_v<T, VarRange<const int64_t>> ||
                               std::is_same_v<T, VarRange<int64_t>>) {
            for (uint32_t i = 0; i < part.n; ++i) {
              f(i < hide.size() && hide[i] != 0 ? 0 : static_cast<uint64_t>(part.p[i]));
            }
          } else {
            Table::Words(part, f);
          }
        },
        *this);
    agent_h[a] = f.h;
  }
  if (!smem_data_.empty() || !global_data_.empty()) {
    Fold f{0x3f84d5b5b5470917ull};
    Table::DataWords(*this, f);
    fixed += fpmix::Final(f.h);
  }
  uint64_t best = ~uint64_t{0};
  for (const std::vector<uint32_t>& pv : perms) {
    const uint32_t* perm = pv.data();
    auto cta_map = [&](uint32_t g) { return g / cs * cs + perm[g % cs]; };
    auto slot_map = [&](uint32_t s) { return cta_map(s / bpc) * bpc + s % bpc; };
    uint64_t total = fixed;
    for (uint32_t o = 0; o < n_slots; ++o) {
      total += fpmix::Final(fpmix::Word(slot_h[o], slot_map(o)));
    }
    for (uint32_t i = 0; i < n_named; ++i) {
      total += fpmix::Final(fpmix::Word(named_h[i], cta_map(i)));
    }
    // The in-flight and deferred operations, mapped, as a sum per issuer.
    std::fill(ops.begin(), ops.end(), 0);
    auto add_op = [&](InFlight f, uint64_t list) {
      const uint32_t issuer = f.agent;
      f.target_cta = perm[f.target_cta];
      switch (f.kind) {
        case InFlight::kTmaDeliver:
        case InFlight::kBulkDeliver:
        case InFlight::kStAsync:
        case InFlight::kCpAsyncArrive:
          f.slot = slot_map(f.slot);
          break;
        default:
          break;
      }
      ops[issuer] += FpOp(f, list);
    };
    for (const InFlight& f : in_flight_) add_op(f, 1);
    for (const InFlight& f : deferred_) add_op(f, 2);
    for (uint32_t a = 0; a < n; ++a) {
      const AgentInfo& i = c.agents[a];
      const uint32_t b = c.cta_first_agent[cta_map(i.cta_global)] + i.index_in_cta;
      const uint32_t g = group != nullptr ? (*group)[b] : kNoGroup;
      const uint64_t key = g == kNoGroup ? (uint64_t{1} << 40) | b : (uint64_t{2} << 40) | g;
      uint64_t h = agent_h[a];
      if (wait_slot[a] != kNoSlot) h = fpmix::Word(h, slot_map(wait_slot[a]));
      total += fpmix::Final(fpmix::Word(fpmix::Word(h, key), ops[a]));
    }
    best = std::min(best, FinishFingerprint(total, outcome_));
  }
  return best;
}

}  // namespace parity::engine
