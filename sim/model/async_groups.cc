#include "sim/model/async_groups.h"

#include <algorithm>

#include "sim/common/bytes.h"
#include "sim/common/check.h"

namespace parity::model {
namespace {

// The group index below which wait_group N requires completion, or 0 when nothing is required.
uint64_t Threshold(uint64_t committed_groups, uint32_t n) {
  return committed_groups > n ? committed_groups - n : 0;
}

}  // namespace

// ---- CpAsyncState ----------------------------------------------------------------------------

uint64_t CpAsyncState::Issue() {
  in_flight_.push_back(InFlight{next_id_, committed_groups_});
  ++uncommitted_;
  return next_id_++;
}

std::optional<Violation> CpAsyncState::Commit() {
  const bool empty = uncommitted_ == 0;
  const uint64_t group = committed_groups_++;
  uncommitted_ = 0;
  if (empty) return Violation{Code::kCpAsyncEmptyCommit, static_cast<int64_t>(group), 0};
  return std::nullopt;
}

void CpAsyncState::BeginWaitAll() {
  ++committed_groups_;
  uncommitted_ = 0;
}

void CpAsyncState::Complete(uint64_t id) {
  auto it = std::lower_bound(in_flight_.begin(), in_flight_.end(), id,
                             [](const InFlight& f, uint64_t v) { return f.id < v; });
  PARITY_CHECK(it != in_flight_.end() && it->id == id, "cp.async completed twice or never issued");
  // A completed copy that is still uncommitted stays counted in uncommitted_: the next commit
  // batches every copy issued since the last one, complete or not.
  in_flight_.erase(it);
}

bool CpAsyncState::WaitGroupSatisfied(uint32_t n) const {
  const uint64_t threshold = Threshold(committed_groups_, n);
  return in_flight_.empty() || in_flight_.front().group >= threshold;
}

std::optional<Violation> CpAsyncState::CheckWaitGroup(uint32_t n) const {
  if (uncommitted_ == 0) return std::nullopt;
  return Violation{Code::kCpAsyncWaitUncommitted, n, static_cast<int64_t>(uncommitted_)};
}

std::vector<uint64_t> CpAsyncState::BlockingCopies(uint32_t n) const {
  const uint64_t threshold = Threshold(committed_groups_, n);
  std::vector<uint64_t> out;
  for (const InFlight& f : in_flight_) {
    if (f.group >= threshold) break;
    out.push_back(f.id);
  }
  return out;
}

bool CpAsyncState::AllCompleteBefore(uint64_t fence) const {
  return in_flight_.empty() || in_flight_.front().id >= fence;
}

uint64_t CpAsyncState::untracked_in_flight() const {
  // in_flight_ is in ascending id: the untracked copies are a suffix.
  auto it = std::lower_bound(in_flight_.begin(), in_flight_.end(), tracked_before_,
                             [](const InFlight& f, uint64_t v) { return f.id < v; });
  return static_cast<uint64_t>(in_flight_.end() - it);
}

std::optional<Violation> CpAsyncState::CheckExit() const {
  const uint64_t untracked = untracked_in_flight();
  if (untracked == 0) return std::nullopt;
  return Violation{Code::kAsyncExitInFlight, static_cast<int64_t>(untracked), 0};
}

// ---- BulkAsyncState --------------------------------------------------------------------------

uint64_t BulkAsyncState::Issue() {
  in_flight_.push_back(InFlight{next_id_, committed_groups_, false});
  ++uncommitted_;
  return next_id_++;
}

std::optional<Violation> BulkAsyncState::Commit() {
  const bool empty = uncommitted_ == 0;
  const uint64_t group = committed_groups_++;
  uncommitted_ = 0;
  if (empty) return Violation{Code::kBulkEmptyCommit, static_cast<int64_t>(group), 0};
  return std::nullopt;
}

BulkAsyncState::InFlight* BulkAsyncState::Find(uint64_t id) {
  auto it = std::lower_bound(in_flight_.begin(), in_flight_.end(), id,
                             [](const InFlight& f, uint64_t v) { return f.id < v; });
  if (it == in_flight_.end() || it->id != id) return nullptr;
  return &*it;
}

void BulkAsyncState::ReadDone(uint64_t id) {
  InFlight* f = Find(id);
  PARITY_CHECK(f != nullptr && !f->read_done, "bulk op read twice, or never issued");
  f->read_done = true;
}

void BulkAsyncState::WriteDone(uint64_t id) {
  InFlight* f = Find(id);
  PARITY_CHECK(f != nullptr && f->read_done, "bulk op writes done before its source was read");
  in_flight_.erase(in_flight_.begin() + (f - in_flight_.data()));
}

bool BulkAsyncState::WaitGroupSatisfied(uint32_t n, bool read_only) const {
  const uint64_t threshold = Threshold(committed_groups_, n);
  for (const InFlight& f : in_flight_) {
    if (f.group >= threshold) return true;
    if (!read_only || !f.read_done) return false;
  }
  return true;
}

std::optional<Violation> BulkAsyncState::CheckWaitGroup(uint32_t n) const {
  if (uncommitted_ == 0) return std::nullopt;
  return Violation{Code::kBulkWaitUncommitted, n, static_cast<int64_t>(uncommitted_)};
}

std::optional<Violation> BulkAsyncState::CheckExit() const {
  const auto unread = std::count_if(in_flight_.begin(), in_flight_.end(),
                                    [](const InFlight& f) { return !f.read_done; });
  if (unread == 0) return std::nullopt;
  return Violation{Code::kBulkExitReadsPending, static_cast<int64_t>(unread), 0};
}

void CpAsyncState::Pack(std::vector<uint8_t>* out) const {
  PutPod(out, next_id_);
  PutPod(out, committed_groups_);
  PutPod(out, uncommitted_);
  PutPod(out, tracked_before_);
  PutPodVector(out, in_flight_);
}

const uint8_t* CpAsyncState::Unpack(const uint8_t* p) {
  p = GetPod(p, &next_id_);
  p = GetPod(p, &committed_groups_);
  p = GetPod(p, &uncommitted_);
  p = GetPod(p, &tracked_before_);
  return GetPodVector(p, &in_flight_);
}

void BulkAsyncState::Pack(std::vector<uint8_t>* out) const {
  PutPod(out, next_id_);
  PutPod(out, committed_groups_);
  PutPod(out, uncommitted_);
  PutPodVector(out, in_flight_);
}

const uint8_t* BulkAsyncState::Unpack(const uint8_t* p) {
  p = GetPod(p, &next_id_);
  p = GetPod(p, &committed_groups_);
  p = GetPod(p, &uncommitted_);
  return GetPodVector(p, &in_flight_);
}

}  // namespace parity::model
