// Memory values the importer follows across threads (issue 35, FA3's dynamic tile scheduler).
//
// Two kinds of value a kernel's control path reads from memory are known without running the
// threads with real timing:
//
// 1. A global word that exactly one thread of the simulated grid updates with atom.global.add:
//    each atom returns the launch's initial value, zero (FA3's host zeroes its tile semaphore
//    before every launch, flash_api.cpp:645), plus that thread's own earlier additions. A second
//    updater of the word makes the values depend on the threads' timing: Finish() refuses it.
// 2. A shared word that exactly one thread stores, read by another thread after a named barrier
//    (bar.sync / bar.arrive, PTX ISA 9.7.13.1) orders the store before the load: the store is
//    the writer's last one to the word before its arrival in the barrier generation the reader's
//    bar.sync completes, and the writer's next store to the word (if any) follows a bar.sync of
//    the writer's that waits for an arrival the reader makes after its load. Barrier arrivals
//    are paired by their ordinal on each barrier id (a thread's k-th operation on barrier b is
//    in generation k), which Finish() checks holds: every operation on b names the same count,
//    and that count is the number of threads that use b. Anything else reads as unknown; a
//    second writer of a word whose value was taken is refused at Finish().
//
// The importer runs the warps of a CTA one after another: a reader finds a writer's value only
// when the writer's warp has finished (its whole history is known); otherwise the load is
// unknown, as before.
#ifndef PARITY_SIM_PTX_CTA_MEMORY_H_
#define PARITY_SIM_PTX_CTA_MEMORY_H_

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "sim/common/status.h"
#include "sim/ptx/thread_exec.h"

namespace parity::ptx {

class ImportMemory {
 public:
  // A named-barrier operation of thread `tid` of CTA `unit`: `id` and `count` are the
  // instruction's operands (count unknown or absent: every thread of the CTA, `threads`);
  // `blocking` for bar.sync / bar.red / barrier.sync (not bar.arrive).
  void OnBarrier(uint32_t unit, uint32_t tid, const Value& id, const Value& count,
                 bool has_count, uint32_t threads, bool blocking);
  // st.shared of `bytes` bytes at `addr` (a Value::kAddress, else the store's bytes are not
  // known) with `value` (unknown for a vector store).
  void OnSharedStore(uint32_t unit, uint32_t tid, const Value& addr, int bytes,
                     const Value& value);
  // ld.shared of `bytes` bytes at `addr`: the value the rule above gives, else unknown.
  Value OnSharedLoad(uint32_t unit, uint32_t tid, const Value& addr, int bytes,
                     const SourceLocation& where);
  // atom.global.add at `addr` adding `operand`: the value it returns.
  Value OnGlobalAtomAdd(uint32_t unit, uint32_t tid, const Value& addr, const Value& operand,
                        int bits, const SourceLocation& where);
  // The threads of warp `warp` of CTA `unit` have run to their end.
  void WarpDone(uint32_t unit, uint32_t warp);
  // The checks the values taken rest on; import.unsupported-control at the load or atom whose
  // value is not what the kernel may read.
  Status Finish() const;

 private:
  struct Word {
    std::string symbol;
    uint64_t offset = 0;
    int bytes = 0;
    auto operator<=>(const Word&) const = default;
  };
  struct Event {
    bool store = false;
    uint32_t barrier = 0;  // !store
    bool blocking = false;
    Word word;    // store
    Value value;  // store
  };
  struct Thread {
    std::vector<Event> history;
    std::map<uint32_t, std::vector<size_t>> ops;  // barrier id -> positions in history
    bool done = false;
    bool lost = false;  // a barrier with an unknown id: its ordinals are not known
  };
  struct BarrierUse {
    std::set<uint32_t> threads;
    std::set<uint64_t> counts;  // every count named; kUnknownCount when not known
  };
  // A value taken from a store: what Finish() checks it rests on.
  struct Taken {
    uint32_t unit = 0;
    Word word;
    uint32_t writer = 0;
    std::vector<uint32_t> barriers;
    // The reader must make its `ordinal`-th operation on `barrier` (the writer's next store
    // waits for it).
    uint32_t reader = 0;
    int64_t ordinal = -1;
    uint32_t later_barrier = 0;
    SourceLocation where;
  };
  struct Atom {
    std::set<uint32_t> updaters;  // (unit << 16 | tid)
    std::map<uint32_t, uint64_t> sums;
    std::set<uint32_t> unknown_sums;
    bool taken = false;
    SourceLocation where;
  };
  static constexpr uint64_t kUnknownCount = ~0ull;

  Thread& At(uint32_t unit, uint32_t tid) { return threads_[{unit, tid}]; }

  std::map<std::pair<uint32_t, uint32_t>, Thread> threads_;
  std::map<std::pair<uint32_t, uint32_t>, BarrierUse> barriers_;  // (unit, id)
  std::set<uint32_t> units_with_unknown_stores_;
  // Per CTA: every (word, thread) that stored; the writers of each word.
  std::map<uint32_t, std::set<std::pair<Word, uint32_t>>> stores_;
  std::map<std::pair<uint32_t, Word>, std::set<uint32_t>> writers_;
  std::vector<Taken> taken_;
  std::map<std::string, Atom> atoms_;
};

}  // namespace parity::ptx

#endif  // PARITY_SIM_PTX_CTA_MEMORY_H_
