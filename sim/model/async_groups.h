// Per-thread completion tracking of asynchronous copies by groups.
//
// Two independent mechanisms, both per thread (PTX ISA "Data Movement and Conversion
// Instructions: Asynchronous copy", async-group mechanism: "A commit operation creates a
// per-thread async-group containing all prior asynchronous operations ... initiated by the
// executing thread but none of the asynchronous operations following the commit operation"):
//
//   * CpAsyncState — cp.async (LDGSTS, global -> shared, non-bulk) with cp.async.commit_group,
//     cp.async.wait_group N and cp.async.wait_all, and the link to cp.async.mbarrier.arrive.
//   * BulkAsyncState — bulk async-groups: cp.async.bulk / cp.async.bulk.tensor operations whose
//     completion is tracked by groups (shared -> global stores, TMA stores, bulk reductions), with
//     cp.async.bulk.commit_group and cp.async.bulk.wait_group{.read} N. Each such operation has
//     two completion events: its source has been read (after which the source shared memory may
//     be reused), then its writes are performed and visible. wait_group.read N waits only for the
//     first; wait_group N for both (PTX: cp.async.bulk.wait_group).
//
// Copies get ids in issue order, from 0. The engine decides when a copy completes (any order) and
// reports it here; these classes answer which waits are satisfied. Waits are predicates (const):
// a blocked wait is simply re-evaluated after the next completion. Nothing here allocates on the
// hot path except the in-flight list growing past its previous size.
#ifndef PARITY_SIM_MODEL_ASYNC_GROUPS_H_
#define PARITY_SIM_MODEL_ASYNC_GROUPS_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "sim/model/codes.h"

namespace parity::model {

class CpAsyncState {
 public:
  // cp.async: a new in-flight copy that joins the group being formed. Returns its id.
  uint64_t Issue();

  // cp.async.commit_group: batches every cp.async issued since the last commit into a new group
  // (PTX: cp.async.commit_group). The group is created even when empty; then the result is the
  // warning A1002 (value = the new group's index).
  std::optional<Violation> Commit();

  // The copy `id` has completed (its bytes are in shared memory). PARITY_CHECK: issued and not
  // completed before.
  void Complete(uint64_t id);

  // cp.async.wait_group N passes when "only N or fewer of the most recent cp.async-groups are
  // pending and all the prior cp.async-groups committed by the executing thread are complete":
  // every copy of every committed group except the newest N has completed. Uncommitted copies are
  // not waited for.
  bool WaitGroupSatisfied(uint32_t n) const;
  // A1001 (warning) when cp.async.wait_group N leaves uncommitted copies uncovered (value = N,
  // limit = how many). Call once when the wait is issued.
  std::optional<Violation> CheckWaitGroup(uint32_t n) const;
  // Ids of the copies that wait_group N still waits for, oldest first.
  std::vector<uint64_t> BlockingCopies(uint32_t n) const;

  // cp.async.wait_all is cp.async.commit_group followed by cp.async.wait_group 0 (PTX:
  // cp.async.wait_group). BeginWaitAll performs that commit (never a warning: the commit is
  // implicit); then wait with WaitGroupSatisfied(0).
  void BeginWaitAll();

  // cp.async.mbarrier.arrive tracks "all prior cp.async operations initiated by the executing
  // thread", committed or not. At the instruction take fence = IssuedCount(); the arrive-on
  // (MbarrierAsyncArriveLand) may fire once AllCompleteBefore(fence) holds.
  uint64_t IssuedCount() const { return next_id_; }
  bool AllCompleteBefore(uint64_t fence) const;

  // cp.async.mbarrier.arrive was issued: every copy issued so far is tracked by an mbarrier,
  // whose arrive-on fires when they complete (PTX ISA, cp.async.mbarrier.arrive), so the thread
  // may exit before they land (the CUDA guide's __pipeline_arrive_on producer never waits).
  void MarkTrackedByMbarrier() { tracked_before_ = next_id_; }

  // A1003 when the thread exits with copies in flight that no mbarrier tracks (value = how many).
  std::optional<Violation> CheckExit() const;

  // Copies in flight that no cp.async.mbarrier.arrive tracks (those CheckExit reports).
  uint64_t untracked_in_flight() const;

  uint64_t committed_groups() const { return committed_groups_; }
  uint64_t uncommitted_count() const { return uncommitted_; }
  uint64_t in_flight_count() const { return in_flight_.size(); }

  // Calls f(word) for every word of the state, so that a hash of them tells states apart
  // exactly where the answers to the waits may differ (Engine's fingerprint): the counters and
  // each in-flight copy's id and group.
  template <typename F>
  void ForEachWord(F&& f) const {
    f(next_id_);
    f(committed_groups_);
    f(uncommitted_);
    f(tracked_before_);
    for (const InFlight& c : in_flight_) {
      f(c.id);
      f(c.group);
    }
  }

  // The state as bytes (Engine::Pack, the explorer's packed frontier) and back.
  void Pack(std::vector<uint8_t>* out) const;
  const uint8_t* Unpack(const uint8_t* p);

 private:
  struct InFlight {
    uint64_t id;
    uint64_t group;  // == committed_groups_ at issue: the index of the group it will join
  };
  uint64_t next_id_ = 0;
  uint64_t committed_groups_ = 0;
  uint64_t uncommitted_ = 0;
  uint64_t tracked_before_ = 0;  // copies with id < this are tracked by an mbarrier arrive-on
  std::vector<InFlight> in_flight_;  // ascending id (and so ascending group)
};

class BulkAsyncState {
 public:
  // A bulk operation tracked by bulk async-group completion; joins the group being formed.
  uint64_t Issue();

  // cp.async.bulk.commit_group. Empty groups are created; result A1102 (warning) then.
  std::optional<Violation> Commit();

  // Completion events of operation `id`, in this order: the source has been read (shared memory
  // source reusable), then the writes are performed and visible. PARITY_CHECK: in order, once.
  void ReadDone(uint64_t id);
  void WriteDone(uint64_t id);

  // cp.async.bulk.wait_group{.read} N: every operation of every committed bulk group except the
  // newest N has read its source (read_only) or also completed its writes (!read_only).
  bool WaitGroupSatisfied(uint32_t n, bool read_only) const;
  // A1101 (warning) when the wait leaves uncommitted bulk operations uncovered.
  std::optional<Violation> CheckWaitGroup(uint32_t n) const;

  // A1004, a note, when the thread exits while some operation has not yet read its source: the
  // ISA is silent, and on H100 the exiting CTA's shared memory is kept until the reads are done
  // (traces/a1003/), so the run goes on and the reads still land; portable code waits first.
  // Writes still in flight to global memory are not reported.
  std::optional<Violation> CheckExit() const;

  uint64_t committed_groups() const { return committed_groups_; }
  uint64_t uncommitted_count() const { return uncommitted_; }
  uint64_t in_flight_count() const { return in_flight_.size(); }
  // Calls f(word) for every word of the state (see CpAsyncState::ForEachWord).
  template <typename F>
  void ForEachWord(F&& f) const {
    f(next_id_);
    f(committed_groups_);
    f(uncommitted_);
    for (const InFlight& o : in_flight_) {
      f(o.id);
      f(o.group | (static_cast<uint64_t>(o.read_done) << 63));
    }
  }
  // The state as bytes (Engine::Pack, the explorer's packed frontier) and back.
  void Pack(std::vector<uint8_t>* out) const;
  const uint8_t* Unpack(const uint8_t* p);

 private:
  struct InFlight {
    uint64_t id;
    uint64_t group;
    bool read_done;
  };
  InFlight* Find(uint64_t id);
  uint64_t next_id_ = 0;
  uint64_t committed_groups_ = 0;
  uint64_t uncommitted_ = 0;
  std::vector<InFlight> in_flight_;  // until WriteDone; ascending id
};

}  // namespace parity::model

#endif  // PARITY_SIM_MODEL_ASYNC_GROUPS_H_
