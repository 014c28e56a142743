#include "sim/model/sync_barriers.h"

#include "sim/common/bytes.h"
#include "sim/common/check.h"

namespace parity::model {

// ---- NamedBarriers ---------------------------------------------------------------------------

NamedBarrierArrival NamedBarriers::Arrive(uint32_t id, std::optional<uint32_t> thread_count,
                                          uint32_t arriving_threads) {
  NamedBarrierArrival r;
  if (id >= kNamedBarrierCount) {
    r.violation = Violation{Code::kNamedBarrierId, id, kNamedBarrierCount - 1};
    return r;
  }
  if (thread_count && (*thread_count == 0 || *thread_count % kWarpSize != 0)) {
    r.violation = Violation{Code::kNamedBarrierCountAlign, *thread_count, kWarpSize};
    return r;
  }
  PARITY_CHECK(arriving_threads >= 1 && arriving_threads <= kWarpSize,
               "a warp contributes 1..32 threads");
  Slot& s = slots_[id];
  const uint32_t count = thread_count ? *thread_count : live_cta_threads_;
  if (s.arrived > 0 && count != s.count) {
    r.violation = Violation{Code::kNamedBarrierCountMismatch, count, s.count};
    return r;
  }
  if (s.arrived + arriving_threads > count) {
    r.violation = Violation{Code::kNamedBarrierOverArrival, s.arrived + arriving_threads, count};
    return r;
  }
  if (s.arrived == 0) {
    s.count = count;
    s.all_threads = !thread_count.has_value();
  }
  r.generation = s.generation;
  s.arrived += arriving_threads;
  if (s.arrived == s.count) {
    s.arrived = 0;
    s.count = 0;
    s.generation += 1;
    r.completed = true;
  }
  return r;
}

bool NamedBarriers::Passed(uint32_t id, uint32_t generation) const {
  PARITY_CHECK(id < kNamedBarrierCount, "named barrier id checked at arrive");
  return slots_[id].generation != generation;
}

uint32_t NamedBarriers::ThreadsExited(uint32_t threads) {
  PARITY_CHECK(threads <= live_cta_threads_, "more threads exited than are live");
  live_cta_threads_ -= threads;
  uint32_t released = 0;
  for (uint32_t id = 0; id < kNamedBarrierCount; ++id) {
    Slot& s = slots_[id];
    if (s.arrived == 0 || !s.all_threads) continue;
    s.count = live_cta_threads_;
    if (s.arrived >= s.count) {
      s.arrived = 0;
      s.count = 0;
      s.generation += 1;
      released |= 1u << id;
    }
  }
  return released;
}

// ---- ClusterBarrier --------------------------------------------------------------------------

ClusterBarrier::ClusterBarrier(uint32_t participants)
    : participants_(participants), expected_(participants) {
  PARITY_CHECK(participants >= 1, "a cluster barrier has participants");
}

bool ClusterBarrier::CompleteIfDone() {
  if (arrived_ == 0 || arrived_ < expected_) return false;
  phase_ += 1;
  arrived_ = 0;
  return true;
}

ClusterArrival ClusterBarrier::Arrive(uint32_t p) {
  PARITY_CHECK(p < participants_.size() && !participants_[p].exited,
               "arrive by an unknown or exited participant");
  ClusterArrival r;
  uint32_t& arrived_phase = participants_[p].arrived_phase;
  if (arrived_phase != kNotArrived) {
    r.violation = Violation{Code::kClusterArriveTwice, p, 0};
    return r;
  }
  arrived_phase = phase_;
  arrived_ += 1;
  r.completed = CompleteIfDone();
  return r;
}

ClusterWait ClusterBarrier::Wait(uint32_t p) {
  PARITY_CHECK(p < participants_.size() && !participants_[p].exited,
               "wait by an unknown or exited participant");
  ClusterWait r;
  uint32_t& arrived_phase = participants_[p].arrived_phase;
  if (arrived_phase == kNotArrived) {
    r.violation = Violation{Code::kClusterWaitWithoutArrive, p, 0};
    return r;
  }
  if (arrived_phase == phase_) return r;  // its phase is still in progress
  arrived_phase = kNotArrived;
  r.complete = true;
  return r;
}

bool ClusterBarrier::Exit(uint32_t p) {
  PARITY_CHECK(p < participants_.size() && !participants_[p].exited, "participant exited twice");
  Participant& q = participants_[p];
  q.exited = true;
  expected_ -= 1;
  if (q.arrived_phase == phase_) arrived_ -= 1;
  q.arrived_phase = kNotArrived;
  return CompleteIfDone();
}

void ClusterBarrier::Pack(std::vector<uint8_t>* out) const {
  PutPodVector(out, participants_);
  PutPod(out, expected_);
  PutPod(out, arrived_);
  PutPod(out, phase_);
}

const uint8_t* ClusterBarrier::Unpack(const uint8_t* p) {
  p = GetPodVector(p, &participants_);
  p = GetPod(p, &expected_);
  p = GetPod(p, &arrived_);
  return GetPod(p, &phase_);
}

}  // namespace parity::model
