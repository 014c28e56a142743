// The CTA's named barriers (bar.sync / bar.arrive / barrier{.cta}.sync/arrive) and the cluster
// barrier (barrier.cluster.arrive / barrier.cluster.wait), as small state machines.
//
// Named barriers (PTX ISA "Parallel Synchronization and Communication Instructions: bar,
// barrier"): 16 per CTA, ids 0..15. Operand b, the number of participating threads, must be a
// multiple of the warp size; without b all threads of the CTA participate. Arrival is marked per
// warp ("causes executing thread to wait for all non-exited threads from its warp and marks warps'
// arrival at barrier"), so the engine calls Arrive once per warp with the warp's thread count
// (32). Different warps may use different forms (sync or arrive) on one id, with the same thread
// count. When the count is reached the barrier completes and resets for its next use.
//
// Cluster barrier (PTX ISA "barrier.cluster"): "barrier.cluster.wait instruction causes the
// executing thread to wait for all non-exited threads of the cluster to perform
// barrier.cluster.arrive"; "Each thread must arrive at the barrier only once before the barrier
// completes"; after a wait that saw completion a thread may arrive again. The engine picks the
// participant granularity (threads, or warps when every thread of a warp acts together).
// Exited participants leave the expected set (PTX "exit": "Barriers exclusively waiting on
// arrivals from exited threads are always released").
#ifndef PARITY_SIM_MODEL_SYNC_BARRIERS_H_
#define PARITY_SIM_MODEL_SYNC_BARRIERS_H_

#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>
#include <vector>

#include "sim/model/codes.h"

namespace parity::model {

inline constexpr uint32_t kNamedBarrierCount = 16;
inline constexpr uint32_t kWarpSize = 32;

struct NamedBarrierArrival {
  // Generation (use count) of the barrier instance this arrival joined; a bar.sync blocks until
  // NamedBarriers::Passed(id, generation).
  uint32_t generation = 0;
  bool completed = false;              // this arrival completed the instance
  std::optional<Violation> violation;  // the arrival is not applied when set

  bool ok() const { return !violation.has_value(); }
};

class NamedBarriers {
 public:
  // cta_threads: the count used by barriers without operand b (all threads of the CTA).
  explicit NamedBarriers(uint32_t cta_threads) : live_cta_threads_(cta_threads) {}

  // One warp's arrival at barrier `id` (bar.sync, bar.arrive, barrier.sync, barrier.arrive).
  // thread_count: operand b, or nullopt for "all threads of the CTA". arriving_threads: threads
  // the warp contributes (32; fewer only for a last partial warp of the CTA).
  // Violations: S1001 id > 15 (value id, limit 15); S1002 b not a positive multiple of 32
  // (value b, limit 32); S1003 b differs from the count of the instance in progress (value b,
  // limit the instance's count); S1004 more threads than the count (value arrived after this
  // warp, limit count) — a warp arriving twice before the reset, which PTX warns against.
  NamedBarrierArrival Arrive(uint32_t id, std::optional<uint32_t> thread_count,
                             uint32_t arriving_threads = kWarpSize);

  // Whether the instance of `id` with this generation has completed (bar.sync may proceed).
  bool Passed(uint32_t id, uint32_t generation) const;

  // `threads` threads of the CTA exited. Barriers counting all CTA threads (no operand b) now
  // expect fewer arrivals; returns the bit mask of ids whose instance that completed. Barriers
  // with an explicit count are not released (which threads they wait for is not known; a hang
  // there is the verifier's deadlock, P2001).
  uint32_t ThreadsExited(uint32_t threads);

  // Threads arrived in the instance in progress of `id` (0 when idle), and its count.
  uint32_t arrived(uint32_t id) const { return slots_[id].arrived; }
  uint32_t count(uint32_t id) const { return slots_[id].count; }
  uint32_t generation(uint32_t id) const { return slots_[id].generation; }
  // Whether the instance in progress of `id` counts all live CTA threads (an exit lowers its
  // count), and the live thread count such instances use.
  bool all_threads(uint32_t id) const { return slots_[id].all_threads; }
  uint32_t live_threads() const { return live_cta_threads_; }
  bool operator==(const NamedBarriers&) const = default;

 private:
  struct Slot {
    uint32_t generation = 0;
    uint32_t arrived = 0;      // 0: idle
    uint32_t count = 0;        // count of the instance in progress
    bool all_threads = false;  // the instance uses "all CTA threads" (no operand b)
    bool operator==(const Slot&) const = default;
  };
  std::array<Slot, kNamedBarrierCount> slots_{};
  uint32_t live_cta_threads_;
};

struct ClusterArrival {
  bool completed = false;  // this arrival (or exit) completed the phase
  std::optional<Violation> violation;

  bool ok() const { return !violation.has_value(); }
};

struct ClusterWait {
  bool complete = false;  // the phase the participant arrived in has completed
  std::optional<Violation> violation;

  bool ok() const { return !violation.has_value(); }
};

class ClusterBarrier {
 public:
  explicit ClusterBarrier(uint32_t participants);

  // barrier.cluster.arrive by participant p. S1101 (value p) when p arrived before and has not
  // since completed a wait: before completion that is PTX's "only once" rule; after completion
  // but before a wait the ISA is silent and we report it (fail closed).
  ClusterArrival Arrive(uint32_t p);

  // barrier.cluster.wait by p: complete once the phase p arrived in has completed; a complete
  // wait consumes p's arrival so that p may arrive again. S1102 (value p) when p has no arrival
  // to wait for (a guaranteed self-deadlock: p itself is still expected).
  ClusterWait Wait(uint32_t p);

  // Participant p exits: it leaves the expected set, which may complete the phase (returns true
  // then). PARITY_CHECK: p did not exit before.
  bool Exit(uint32_t p);

  uint32_t phase() const { return phase_; }
  // Whether p arrived in a phase that has completed and has not waited yet (its next wait
  // passes whatever the others do).
  bool ArrivedInCompletedPhase(uint32_t p) const {
    return p < participants_.size() && participants_[p].arrived_phase != kNotArrived &&
           participants_[p].arrived_phase != phase_;
  }
  uint32_t expected() const { return expected_; }
  uint32_t arrived() const { return arrived_; }
  // Participant p's record as one word: the phase it arrived in (kNotArrived: none since its
  // last completed wait) and whether it exited. The wait reads it: two participants both
  // arrived and not yet waited pass or block by the phase each arrived in, which the counters
  // above do not tell.
  uint64_t ParticipantWord(uint32_t p) const {
    return participants_[p].arrived_phase |
           (static_cast<uint64_t>(participants_[p].exited) << 32);
  }
  uint32_t participants() const { return static_cast<uint32_t>(participants_.size()); }
  bool operator==(const ClusterBarrier&) const = default;
  // *this = o, without a reallocation or an element loop when the participant counts agree
  // (the explorer copies states of one program at every transition).
  void AssignFrom(const ClusterBarrier& o) {
    if (participants_.size() == o.participants_.size()) {
      std::copy(o.participants_.begin(), o.participants_.end(), participants_.begin());
    } else {
      participants_ = o.participants_;
    }
    expected_ = o.expected_;
    arrived_ = o.arrived_;
    phase_ = o.phase_;
  }
  // The state as bytes (Engine::Pack, the explorer's packed frontier) and back.
  void Pack(std::vector<uint8_t>* out) const;
  const uint8_t* Unpack(const uint8_t* p);

 private:
  static constexpr uint32_t kNotArrived = UINT32_MAX;
  bool CompleteIfDone();

  struct Participant {
    uint32_t arrived_phase = kNotArrived;  // the phase it arrived in
    bool exited = false;
    bool operator==(const Participant&) const = default;
  };
  // One vector of PODs, not two (one a std::vector<bool>): the explorer copies the state at
  // every transition, and this copies as one memmove.
  std::vector<Participant> participants_;
  uint32_t expected_;     // non-exited participants
  uint32_t arrived_ = 0;  // non-exited participants arrived in the current phase
  uint32_t phase_ = 0;
};

}  // namespace parity::model

#endif  // PARITY_SIM_MODEL_SYNC_BARRIERS_H_
