// The parallel depth-first search's shared tables (verifier/parallel_dfs.h): the visited set of
// state fingerprints and the per-state records (parent, step) behind its counterexamples, both
// safe to use from many threads at once.
#ifndef PARITY_VERIFIER_CONCURRENT_FINGERPRINT_SET_H_
#define PARITY_VERIFIER_CONCURRENT_FINGERPRINT_SET_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "sim/common/check.h"
#include "verifier/fingerprint_set.h"

namespace parity::verifier {

// A set of 64-bit fingerprints that several threads insert into and query at once: the
// fingerprints are split by their top bits over kShards FingerprintSets (which index by the low
// bits, so a shard's table is as well mixed as the whole), each behind a spin lock of its own on
// its own cache line. A thread holds a lock for one probe (or a shard's growth), so with S
// shards and T threads an operation waits with probability about T / S; 1024 shards keep that
// small up to 64 threads while their first tables (64 slots each) take 512 KiB. A shard grows on
// its own (FingerprintSet::Grow) and blocks only its own users meanwhile; the shards share the
// address space one FingerprintSet would reserve, so each still grows in place on huge pages.
// Whether an insert is new is decided under the shard's lock: of several threads inserting one
// fingerprint, exactly one is told it is new.
class ConcurrentFingerprintSet {
 public:
  static constexpr int kShardBits = 10;
  static constexpr size_t kShards = size_t{1} << kShardBits;
  // Each shard's reservation: FingerprintSet's, divided among the shards (64 MiB each: up to
  // 6M states a shard, 6G in all, before a shard falls back to a mapping of its own).
  static constexpr size_t kShardReserve = (size_t{1} << 36) / kShards;

  ConcurrentFingerprintSet() {
    shards_.reserve(kShards);
    for (size_t i = 0; i < kShards; ++i) shards_.push_back(std::make_unique<Shard>());
  }
  ConcurrentFingerprintSet(const ConcurrentFingerprintSet&) = delete;
  ConcurrentFingerprintSet& operator=(const ConcurrentFingerprintSet&) = delete;

  // True if newly inserted (by this call).
  bool Insert(uint64_t fp) {
    Shard& s = ShardOf(fp);
    Lock(s);
    const bool fresh = s.set.Insert(fp);
    s.lock.store(false, std::memory_order_release);
    return fresh;
  }
  bool Contains(uint64_t fp) {
    Shard& s = ShardOf(fp);
    Lock(s);
    const bool in = s.set.Contains(fp);
    s.lock.store(false, std::memory_order_release);
    return in;
  }
  // Totals: only while no thread inserts.
  size_t size() const {
    size_t n = 0;
    for (const auto& s : shards_) n += s->set.size();
    return n;
  }
  size_t bytes() const {
    size_t n = 0;
    for (const auto& s : shards_) n += s->set.bytes();
    return n;
  }

 private:
  struct alignas(64) Shard {
    std::atomic<bool> lock{false};
    FingerprintSet set{kShardReserve};
  };
  Shard& ShardOf(uint64_t fp) { return *shards_[fp >> (64 - kShardBits)]; }
  static void Lock(Shard& s) {
    for (;;) {
      if (!s.lock.exchange(true, std::memory_order_acquire)) return;
      while (s.lock.load(std::memory_order_relaxed)) {
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#endif
      }
    }
  }
  std::vector<std::unique_ptr<Shard>> shards_;
};

// Per stored state: the state it was reached from and the step (for the counterexample), by
// state number; numbers are handed out by Add from any thread, in chunks that never move (a
// reader of record i needs only that Add(i) happened before its read: the search reads the
// records on the path to a state it reached, which were added before that state was expanded).
class ConcurrentRecords {
 public:
  struct Record {
    uint32_t parent;
    uint32_t choice;  // bit 31: async; low bits: the index
  };
  static constexpr uint32_t kRoot = 0xffffffffu;
  ConcurrentRecords() : chunks_(new std::atomic<Record*>[kChunks]) {
    for (size_t i = 0; i < kChunks; ++i) chunks_[i].store(nullptr, std::memory_order_relaxed);
  }
  ~ConcurrentRecords() {
    for (size_t i = 0; i < kChunks; ++i) delete[] chunks_[i].load(std::memory_order_relaxed);
  }
  ConcurrentRecords(const ConcurrentRecords&) = delete;
  ConcurrentRecords& operator=(const ConcurrentRecords&) = delete;

  // Numbers n new states: the first of them (a thread takes its states' numbers in blocks;
  // numbers it does not use stay unset).
  uint64_t Reserve(uint64_t n) {
    const uint64_t id = next_.fetch_add(n, std::memory_order_relaxed);
    PARITY_CHECK(id + n <= kRoot, "explore: more than 2^32 - 1 states");
    return id;
  }
  void Set(uint32_t id, Record r) { Chunk(id >> kChunkBits)[id & (kChunkSize - 1)] = r; }
  Record Get(uint32_t id) const {
    return chunks_[id >> kChunkBits].load(std::memory_order_acquire)[id & (kChunkSize - 1)];
  }
  // Numbers handed out so far (some of them possibly unused or still being written).
  uint64_t size() const { return next_.load(std::memory_order_relaxed); }
  // Bytes allocated.
  size_t bytes() const {
    return ((size() + kChunkSize - 1) >> kChunkBits) * kChunkSize * sizeof(Record);
  }

 private:
  static constexpr int kChunkBits = 16;
  static constexpr size_t kChunkSize = size_t{1} << kChunkBits;
  static constexpr size_t kChunks = size_t{1} << (32 - kChunkBits);
  Record* Chunk(uint64_t c) {
    Record* p = chunks_[c].load(std::memory_order_acquire);
    if (p != nullptr) return p;
    std::lock_guard<std::mutex> g(grow_);
    p = chunks_[c].load(std::memory_order_relaxed);
    if (p == nullptr) {
      p = new Record[kChunkSize];
      chunks_[c].store(p, std::memory_order_release);
    }
    return p;
  }
  std::atomic<uint64_t> next_{0};
  std::unique_ptr<std::atomic<Record*>[]> chunks_;
  std::mutex grow_;
};

}  // namespace parity::verifier

#endif  // PARITY_VERIFIER_CONCURRENT_FINGERPRINT_SET_H_
