// The explorer's visited set (verifier/explore.h): 64-bit state fingerprints in an
// open-addressing table with linear probing.
#ifndef PARITY_VERIFIER_FINGERPRINT_SET_H_
#define PARITY_VERIFIER_FINGERPRINT_SET_H_

#include <sys/mman.h>

#include <cstddef>
#include <cstdint>

#include "sim/common/check.h"

namespace parity::verifier {

// Open-addressing set of 64-bit fingerprints (0 marks an empty slot; a fingerprint of 0 is
// stored as 1, which merges two of 2^64 values).
// A large table is an anonymous mapping (zero-filled by the kernel) advised to use transparent
// huge pages: a lookup is a random access, and with 4 KiB pages most of them also miss the TLB
// (the page walk made even prefetches stall: 11 % of a brute-force search's time went to them).
class FingerprintSet {
 public:
  // Starts small (64 slots): a small search's bytes per state are then those of its table at
  // load 3/8 to 3/4 too, not of a fixed first allocation.
  FingerprintSet() { Allocate(size_t{1} << 6); }
  ~FingerprintSet() { Free(); }
  FingerprintSet(const FingerprintSet&) = delete;
  FingerprintSet& operator=(const FingerprintSet&) = delete;
  // True if newly inserted.
  bool Insert(uint64_t fp) {
    if (fp == 0) fp = 1;
    if ((size_ + 1) * 4 > (mask_ + 1) * 3) Grow();
    return InsertNoGrow(fp);
  }
  // Read-only lookup (safe from several threads while nobody inserts).
  bool Contains(uint64_t fp) const { return slots_[Find(fp == 0 ? 1 : fp)] != 0; }
  // Starts loading the table line where fp's probe begins (an Insert soon after finds it in
  // cache: the depth-first search fingerprints all successors of a state first, so that their
  // cache misses overlap).
  void Prefetch(uint64_t fp) const { __builtin_prefetch(&slots_[(fp == 0 ? 1 : fp) & mask_]); }
  size_t bytes() const { return (mask_ + 1) * sizeof(uint64_t); }
  size_t size() const { return size_; }

 private:
  static constexpr size_t kHuge = size_t{2} << 20;  // 2 MiB: an x86-64 huge page
  // A zeroed table of n slots (a power of two).
  void Allocate(size_t n) {
    const size_t b = n * sizeof(uint64_t);
    if (b >= kHuge) {
      // Huge pages need 2 MiB alignment: map 2 MiB more and start at the aligned address.
      void* m = mmap(nullptr, b + kHuge, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                     -1, 0);
      PARITY_CHECK(m != MAP_FAILED, "explore: out of memory for the fingerprint table");
      map_ = m;
      map_bytes_ = b + kHuge;
      const uintptr_t at = (reinterpret_cast<uintptr_t>(m) + kHuge - 1) & ~(kHuge - 1);
      slots_ = reinterpret_cast<uint64_t*>(at);
      madvise(slots_, b, MADV_HUGEPAGE);  // advice only: no error if the kernel declines
      mapped_ = true;
    } else {
      slots_ = new uint64_t[n]();
      mapped_ = false;
    }
    mask_ = n - 1;
  }
  void Free() {
    if (slots_ == nullptr) return;
    if (mapped_) {
      munmap(map_, map_bytes_);
    } else {
      delete[] slots_;
    }
    slots_ = nullptr;
  }
  // The slot holding fp (non-zero), or the empty slot where it would go. The fingerprint is
  // already well mixed: its low bits index the table.
  size_t Find(uint64_t fp) const {
    size_t i = fp & mask_;
    while (slots_[i] != fp && slots_[i] != 0) i = (i + 1) & mask_;
    return i;
  }
  bool InsertNoGrow(uint64_t fp) {
    const size_t i = Find(fp);
    if (slots_[i] != 0) return false;
    slots_[i] = fp;
    ++size_;
    return true;
  }
  void Grow() {
    uint64_t* const old = slots_;
    const bool old_mapped = mapped_;
    void* const old_map = map_;
    const size_t old_map_bytes = map_bytes_;
    const size_t old_n = mask_ + 1;
    Allocate(old_n * 2);
    size_ = 0;
    for (size_t i = 0; i < old_n; ++i) {
      if (old[i] != 0) InsertNoGrow(old[i]);
    }
    if (old_mapped) {
      munmap(old_map, old_map_bytes);
    } else {
      delete[] old;
    }
  }
  uint64_t* slots_ = nullptr;
  bool mapped_ = false;  // slots_ lies in the mapping map_ (map_bytes_ long)
  void* map_ = nullptr;
  size_t map_bytes_ = 0;
  size_t mask_ = 0;
  size_t size_ = 0;
};

}  // namespace parity::verifier

#endif  // PARITY_VERIFIER_FINGERPRINT_SET_H_
