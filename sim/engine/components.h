// The component table: every part of an engine's mutable state, declared once. Copy
// (CopyState), undo (RestoreStep), the packed frontier (Pack/Unpack), the canonical words
// (StateWords, StateHash) and the fingerprint's components (FpObject, FpAgentContent, FpAgentOps)
// are all made from it, so a part added here is copied, restored, packed, compared and hashed
// without another edit, and StateHash and the fingerprint fold the same words.
//
// The state is:
//   - the objects, in num_objects() order (a fingerprint component each; a step marks the ones
//     it changes: Exec's accessors, exec.h): every mbarrier slot, every cluster's barrier, every
//     CTA's named barriers, every agent (AgentState, its variables, its async-group states and
//     its cluster-barrier participant record). ObjectParts lists an object's parts; Words (one
//     overload per part type) says which of a part's bits are state;
//   - each agent's in-flight and deferred operations (OpWords), hashed with their issuer;
//   - the `readback` content tags (DataWords), hashed whole;
//   - the run's counters and the policy's cursor (RunMembers): copied and packed, not state
//     (equal states of different histories differ there).
// Storage: the parts whose sizes the program fixes are ranges of one flat block (Engine::Layout,
// one memcpy per copy); the rest are the members ObjectMembers and RunMembers list.
#ifndef PARITY_SIM_ENGINE_COMPONENTS_H_
#define PARITY_SIM_ENGINE_COMPONENTS_H_

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <tuple>
#include <type_traits>
#include <vector>

#include "sim/common/bytes.h"
#include "sim/engine/code.h"
#include "sim/engine/engine.h"

namespace parity::engine {

// The bytes a tuple of fields takes (the coverage checks below).
template <typename Tuple>
constexpr size_t FieldBytes() {
  return []<size_t... I>(std::index_sequence<I...>) {
    return (size_t{0} + ... + sizeof(std::remove_reference_t<std::tuple_element_t<I, Tuple>>));
  }(std::make_index_sequence<std::tuple_size_v<Tuple>>{});
}
// Every field of AgentState is in exactly one of its lists; every field of InFlight in one of
// StateFields and OtherFields (4: the padding before `id`).
static_assert(FieldBytes<decltype(std::declval<Engine::AgentState>().StateFields())>() +
                      FieldBytes<decltype(std::declval<Engine::AgentState>().WaitFields())>() +
                      FieldBytes<decltype(std::declval<Engine::AgentState>().OtherFields())>() ==
                  sizeof(Engine::AgentState),
              "AgentState: a field in none of StateFields, WaitFields, OtherFields");
static_assert(FieldBytes<decltype(std::declval<Engine::InFlight>().Fields())>() + 4 ==
                  sizeof(Engine::InFlight),
              "InFlight: a field missing from Fields()");

// A field as an unsigned number of its width (enums by their underlying type, signed values
// by their two's complement bits).
template <typename T>
constexpr uint64_t FieldBits(T v) {
  if constexpr (std::is_same_v<T, bool>) {
    return v ? 1 : 0;
  } else if constexpr (std::is_enum_v<T>) {
    return static_cast<uint64_t>(static_cast<std::make_unsigned_t<std::underlying_type_t<T>>>(v));
  } else {
    return static_cast<uint64_t>(static_cast<std::make_unsigned_t<T>>(v));
  }
}

// Folds a tuple of integral fields into 64-bit words, f(word) for each: every field at the next
// offset aligned to its size (as a struct lays them out), a new word when it does not fit. The
// offsets are constants after inlining.
template <typename F, typename Tuple>
__attribute__((always_inline)) inline void FoldFields(F&& f, const Tuple& t) {
  uint64_t w = 0;
  uint32_t bit = 0;
  std::apply(
      [&](const auto&... v) {
        auto put = [&](const auto& x) {
          constexpr uint32_t size = sizeof(x) * 8;
          bit = (bit + size - 1) / size * size;
          if (bit + size > 64) {
            f(w);
            w = 0;
            bit = 0;
          }
          w |= FieldBits(x) << bit;
          bit += size;
        };
        (put(v), ...);
      },
      t);
  if (bit != 0) f(w);
}

// A range of an agent's variables (a part of its object).
template <typename T>
struct VarRange {
  T* p;
  uint32_t n;
};
// Spelled out because clang before 17 does not deduce template arguments of aggregates.
template <typename T>
VarRange(T*, uint32_t) -> VarRange<T>;

// The cluster-barrier participant record of an agent (a part of its object for the words: its
// wait passes or blocks by the phase it arrived in; hashed with the agent so that a permutation
// of interchangeable agents permutes it with them). Stored in the cluster's barrier, whose
// object every step that changes the record touches: restored with that object.
struct ParticipantRecord {
  const model::ClusterBarrier* cb;
  uint32_t p;
  bool arrived;  // AgentState::cluster_arrived: without an arrival the record is "none"
};

struct Engine::Table {
  // --- which bits of each part are state (one overload per part type) ---
  template <typename F>
  static void Words(const model::MbarrierState& b, F&& f) {
    FoldFields(f, b.Fields());
  }
  // The counters and the phase; the participants' records are the agents' parts.
  template <typename F>
  static void Words(const model::ClusterBarrier& cb, F&& f) {
    f(cb.arrived() | (static_cast<uint64_t>(cb.expected()) << 32));
    f(cb.phase());
  }
  // The ids in use (the others are all zero), each with its numbers. Not the count of the
  // CTA's threads that have not exited: the agents' statuses (their words) determine it.
  template <typename F>
  static void Words(const model::NamedBarriers& nb, F&& f) {
    for (uint32_t id = 0; id < model::kNamedBarrierCount; ++id) {
      if (nb.arrived(id) == 0 && nb.count(id) == 0 && nb.generation(id) == 0) continue;
      f(id | (static_cast<uint64_t>(nb.arrived(id)) << 8) |
        (static_cast<uint64_t>(nb.all_threads(id)) << 31) |
        (static_cast<uint64_t>(nb.count(id)) << 32));
      f(nb.generation(id));
    }
  }
  template <typename F>
  static void Words(const AgentState& s, F&& f) {
    FoldFields(f, s.StateFields());
    if (s.wait != WaitKind::kNone) FoldFields(f, s.WaitFields());
  }
  template <typename T, typename F>
  static void Words(VarRange<T> v, F&& f) {
    for (uint32_t i = 0; i < v.n; ++i) f(static_cast<uint64_t>(v.p[i]));
  }
  template <typename F>
  static void Words(const ParticipantRecord& r, F&& f) {
    if (r.arrived) f(r.cb->ParticipantWord(r.p));
  }
  template <typename F>
  static void Words(const model::CpAsyncState& g, F&& f) {
    g.ForEachWord(f);
  }
  template <typename F>
  static void Words(const model::BulkAsyncState& g, F&& f) {
    g.ForEachWord(f);
  }

  // --- restoring a part (RestoreStep) ---
  template <typename T>
  static void Assign(T& dst, const T& src) {
    dst = src;
  }
  static void Assign(model::ClusterBarrier& dst, const model::ClusterBarrier& src) {
    dst.AssignFrom(src);
  }
  static void Assign(VarRange<int64_t> dst, VarRange<const int64_t> src) {
    std::copy_n(src.p, src.n, dst.p);
  }
  static void Assign(ParticipantRecord&, const ParticipantRecord&) {}

  // --- the objects ---
  enum Kind : uint8_t { kSlot, kCluster, kNamed, kAgent };
  static Kind KindOf(const Engine& e, uint32_t o, uint32_t* index) {
    const uint32_t slots = e.layout_.n_barriers;
    const uint32_t named = slots + e.code_->clusters;
    const uint32_t agents = e.layout_.first_agent_object;
    if (o < slots) {
      *index = o;
      return kSlot;
    }
    if (o < named) {
      *index = o - slots;
      return kCluster;
    }
    if (o < agents) {
      *index = o - named;
      return kNamed;
    }
    *index = o - agents;
    return kAgent;
  }
  // The fingerprint's seed of a kind (distinct seeds keep the kinds apart).
  static constexpr uint64_t kSeed[4] = {0x452821e638d01377ull, 0xbe5466cf34e90c6cull,
                                        0xc0ac29b7c97c50ddull, 0x13198a2e03707344ull};

  // Agent a's parts: f(part of e...) for each, the engines' parts side by side. `status`: the
  // agent's status is hashed as that (successor prediction), kKeepStatus: as it is.
  static constexpr uint32_t kKeepStatus = 0xffffffffu;
  template <typename F, typename... E>
  __attribute__((always_inline)) static void AgentParts(uint32_t a, F&& f, E&... e) {
    const Engine& e0 = std::get<0>(std::tie(e...));
    const Code& c = *e0.code_;
    f(e.agents_[a]...);
    const uint32_t cluster = c.agents[a].cluster;
    f(ParticipantRecord{&e.clusters_[cluster], a - c.cluster_first_agent[cluster],
                        e.agents_[a].cluster_arrived != 0}...);
    // The async-group states, unless the agent's role issues no async-group operation (then
    // they are the initial ones in every state: Code::role_groups).
    const uint32_t g = c.group_state[a];
    if (g != kNoGroups) {
      f(e.cp_[g]...);
      f(e.bulk_[g]...);
    }
    const uint32_t begin = c.var_offset[a];
    const uint32_t n = e0.agent_num_vars(a);
    f(VarRange{e.vars_.data() + begin, n}...);
  }
  // Object o's parts (see AgentParts).
  template <typename F, typename... E>
  __attribute__((always_inline)) static void ObjectParts(uint32_t o, F&& f, E&... e) {
    uint32_t i = 0;
    switch (KindOf(std::get<0>(std::tie(e...)), o, &i)) {
      case kSlot: return f(e.barriers_[i]...);
      case kCluster: return f(e.clusters_[i]...);
      case kNamed: return f(e.named_[i]...);
      case kAgent: return AgentParts(i, f, e...);
    }
  }
  // Object o's words (shared objects begin with their number; an agent's do not, so that its
  // content hashes alike under any id: symmetry). `status` replaces an agent's status.
  template <typename F>
  __attribute__((always_inline)) static void ObjectWords(const Engine& e, uint32_t o, F&& f,
                                                         uint32_t status = kKeepStatus) {
    uint32_t i = 0;
    const Kind k = KindOf(e, o, &i);
    if (k != kAgent) f(o);
    if (k == kAgent && status != kKeepStatus) {
      AgentState s = e.agents_[i];
      s.status = static_cast<uint8_t>(status);
      Words(s, f);
      bool first = true;
      AgentParts(i, [&](const auto& part) {
        if (!first) Words(part, f);
        first = false;
      }, e);
      return;
    }
    ObjectParts(o, [&](const auto& part) { Words(part, f); }, e);
  }
  // An in-flight or deferred operation's words: its state fields (InFlight::StateFields; not
  // its issuer, the agent whose component holds it), with `list` (1 in flight, 2 deferred)
  // first.
  template <typename F>
  __attribute__((always_inline)) static void OpWords(const InFlight& op, uint64_t list, F&& f) {
    f(list);
    FoldFields(f, op.StateFields());
  }
  // The `readback` content tags (empty unless the program has a readback).
  template <typename F>
  static void DataWords(const Engine& e, F&& f) {
    for (uint16_t d : e.smem_data_) f(d);
    for (uint16_t d : e.global_data_) f(d);
  }

  // --- the members besides the block ---
  // Restored object by object (the objects' parts that are not in the block).
  template <typename F, typename... E>
  static void ObjectMembers(F&& f, E&... e) {
    f(e.cp_...);
    f(e.bulk_...);
    f(e.clusters_...);
  }
  // Copied whole by every copy and undo: the operations in flight, the counters.
  template <typename F, typename... E>
  static void RunMembers(F&& f, E&... e) {
    f(e.in_flight_...);
    f(e.deferred_...);
    f(e.exited_count_...);
    f(e.rng_...);
    f(e.rr_cursor_...);
    f(e.rr_async_turn_...);
    f(e.steps_...);
    f(e.events_...);
    f(e.result_.steps...);
    f(e.result_.events...);
  }
};

}  // namespace parity::engine

#endif  // PARITY_SIM_ENGINE_COMPONENTS_H_
