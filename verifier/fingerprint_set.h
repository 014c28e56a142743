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
  // A set that reserves `reserve_bytes` of address space (a power of two, at least 2 MiB) once
  // it is large, instead of kReserve: the shards of ConcurrentFingerprintSet share kReserve.
  explicit FingerprintSet(size_t reserve_bytes) : reserve_(reserve_bytes) {
    PARITY_CHECK(reserve_bytes >= kHuge && (reserve_bytes & (reserve_bytes - 1)) == 0,
                 "FingerprintSet: the reservation is a power of two of at least 2 MiB");
    Allocate(size_t{1} << 6);
  }
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
  // Whether the table lies in the reservation (its growths from 2 MiB on are in place).
  bool in_place() const { return InReservation(); }

 private:
  static constexpr size_t kHuge = size_t{2} << 20;  // 2 MiB: an x86-64 huge page
  // The address space reserved for a large table (64 GiB: 2^33 slots, more than the 2^32
  // states the 32-bit records can name at load 3/4). Reserving it costs no memory (no access,
  // no commit); the table uses a growing prefix of it, so that it grows in place: only the new
  // half is made accessible (and zero-filled by the kernel when first touched), and the
  // fingerprints are rehashed where they are (RehashDoubled) instead of into a new mapping.
  // Zero-filling the new mappings took 8-9 % of a 20 s brute-force search.
  static constexpr size_t kReserve = size_t{1} << 36;
  size_t reserve_ = kReserve;
  // A zeroed table of n slots (a power of two).
  void Allocate(size_t n) {
    const size_t b = n * sizeof(uint64_t);
    if (b >= kHuge) {
      if (reserved_ == nullptr && b <= reserve_) {
        void* m = mmap(nullptr, reserve_ + kHuge, PROT_NONE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (m != MAP_FAILED) {
          reserved_ = m;
          // Huge pages need 2 MiB alignment: start at the first aligned address.
          base_ = reinterpret_cast<uint64_t*>(
              (reinterpret_cast<uintptr_t>(m) + kHuge - 1) & ~(kHuge - 1));
        }
      }
      if (reserved_ != nullptr && b <= reserve_) {
        Open(0, b);
        slots_ = base_;
        mapped_ = false;
      } else {  // no reservation (a limited address space): one mapping of its own
        void* m = mmap(nullptr, b + kHuge, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                       -1, 0);
        PARITY_CHECK(m != MAP_FAILED, "explore: out of memory for the fingerprint table");
        map_ = m;
        map_bytes_ = b + kHuge;
        const uintptr_t at = (reinterpret_cast<uintptr_t>(m) + kHuge - 1) & ~(kHuge - 1);
        slots_ = reinterpret_cast<uint64_t*>(at);
        madvise(slots_, b, MADV_HUGEPAGE);  // advice only: no error if the kernel declines
        mapped_ = true;
      }
    } else {
      slots_ = new uint64_t[n]();
      mapped_ = false;
    }
    mask_ = n - 1;
  }
  // Makes bytes [from, from + bytes) of the reservation readable and writable (zero until
  // written), advised to use huge pages.
  void Open(size_t from, size_t bytes) {
    char* const at = reinterpret_cast<char*>(base_) + from;
    PARITY_CHECK(mprotect(at, bytes, PROT_READ | PROT_WRITE) == 0,
                 "explore: out of memory for the fingerprint table");
    madvise(at, bytes, MADV_HUGEPAGE);  // advice only: no error if the kernel declines
  }
  bool InReservation() const { return reserved_ != nullptr && slots_ == base_; }
  void Free() {
    if (slots_ == nullptr) return;
    if (mapped_) {
      munmap(map_, map_bytes_);
    } else if (!InReservation()) {
      delete[] slots_;
    }
    slots_ = nullptr;
    if (reserved_ != nullptr) munmap(reserved_, reserve_ + kHuge);
    reserved_ = nullptr;
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
    const size_t old_n = mask_ + 1;
    if (InReservation() && 2 * old_n * sizeof(uint64_t) <= reserve_) {
      Open(old_n * sizeof(uint64_t), old_n * sizeof(uint64_t));
      RehashDoubled(old_n);
      return;
    }
    uint64_t* const old = slots_;
    const bool old_mapped = mapped_;
    const bool old_reserved = InReservation();
    void* const old_map = map_;
    const size_t old_map_bytes = map_bytes_;
    Allocate(old_n * 2);
    size_ = 0;
    for (size_t i = 0; i < old_n; ++i) {
      if (old[i] != 0) InsertNoGrow(old[i]);
    }
    if (old_mapped) {
      munmap(old_map, old_map_bytes);
    } else if (old_reserved) {  // outgrew the reservation: its pages go with it
      munmap(reserved_, reserve_ + kHuge);
      reserved_ = nullptr;
    } else {
      delete[] old;
    }
  }
  // The table of old_n slots, followed by old_n zero slots, becomes a table of 2 * old_n:
  // every fingerprint is taken out and put back (linear probing from its slot in the larger
  // table), visiting the old slots in cyclic order from just after an empty one. Then every
  // slot between a fingerprint's first slot and its old place has been redone when it is put
  // back (its old probe run does not cross the empty slot), so it lands at or before its old
  // place or in the new half, never over a fingerprint not yet redone. None wraps from the end
  // of the larger table before the visit has passed slot 0 (the fingerprints whose homes lie
  // in a tail of the new half came from the same tail of the old table: no more than its
  // slots); after that, one that wraps lands at or before its old place, in slots redone.
  void RehashDoubled(size_t old_n) {
    mask_ = 2 * old_n - 1;
    size_t e = 0;
    while (slots_[e] != 0) ++e;  // load < 1: there is one
    for (size_t k = 1; k <= old_n; ++k) {
      const size_t q = (e + k) & (old_n - 1);
      const uint64_t fp = slots_[q];
      if (fp == 0) continue;
      slots_[q] = 0;
      size_t i = fp & mask_;
      while (slots_[i] != 0) i = (i + 1) & mask_;
      slots_[i] = fp;
    }
  }
  uint64_t* slots_ = nullptr;
  bool mapped_ = false;  // slots_ lies in the mapping map_ (map_bytes_ long)
  void* map_ = nullptr;
  size_t map_bytes_ = 0;
  void* reserved_ = nullptr;  // the reservation (reserve_ + 2 MiB), or none
  uint64_t* base_ = nullptr;  // its first 2 MiB-aligned address
  size_t mask_ = 0;
  size_t size_ = 0;
};

}  // namespace parity::verifier

#endif  // PARITY_VERIFIER_FINGERPRINT_SET_H_
