// The work sharing of the parallel depth-first searches (the explorer's, verifier/parallel_dfs.h,
// and the every-path rule search's, verifier/every_path.h): threads that each search
// depth-first on a stack of their own hand work to threads that ran dry, and learn together
// when the search is over.
//
// Protocol. A thread with nothing to do calls Take, which counts it hungry and waits for an
// item. A thread with work checks Wanted (two relaxed loads) between its steps; when some
// thread is hungry and fewer items wait than hungry threads, it cuts part of its stack into an
// item (the searches give the untaken half of the lowest frame that has steps left: the largest
// subtrees) and calls Give. The search is over when every thread is hungry and the pool is
// empty: no thread holds work, and none can make more, since work is only made by a thread
// that holds some. Halt ends it early (a finding, a bound): Take then returns false at once,
// and the searching threads stop at their next Halted check.
#ifndef PARITY_VERIFIER_WORK_POOL_H_
#define PARITY_VERIFIER_WORK_POOL_H_

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <mutex>
#include <utility>

namespace parity::verifier {

template <typename Item>
class WorkPool {
 public:
  explicit WorkPool(size_t threads) : threads_(threads) {}
  WorkPool(const WorkPool&) = delete;
  WorkPool& operator=(const WorkPool&) = delete;

  // Whether a thread with work should give some now.
  bool Wanted() const {
    return hungry_.load(std::memory_order_relaxed) > size_.load(std::memory_order_relaxed);
  }
  void Give(Item item) {
    {
      std::lock_guard<std::mutex> g(mu_);
      items_.push_back(std::move(item));
      ++given_;
      size_.store(items_.size(), std::memory_order_relaxed);
    }
    cv_.notify_one();
  }
  // Waits for an item; false: the search is over (or halted).
  bool Take(Item* item) {
    std::unique_lock<std::mutex> g(mu_);
    ++idle_;
    for (;;) {
      if (Halted() || finished_) {
        hungry_.store(0, std::memory_order_relaxed);
        return false;
      }
      if (!items_.empty()) break;
      if (idle_ == threads_) {  // every thread hungry, nothing handed over: done
        finished_ = true;
        cv_.notify_all();
        continue;
      }
      hungry_.store(idle_, std::memory_order_relaxed);
      cv_.wait(g);
    }
    *item = std::move(items_.front());
    items_.pop_front();
    size_.store(items_.size(), std::memory_order_relaxed);
    --idle_;
    hungry_.store(idle_, std::memory_order_relaxed);
    return true;
  }
  // Ends the search: every thread stops at its next Halted check, and the hungry ones are woken.
  void Halt() {
    halt_.store(true, std::memory_order_relaxed);
    std::lock_guard<std::mutex> g(mu_);
    cv_.notify_all();
  }
  bool Halted() const { return halt_.load(std::memory_order_relaxed); }
  // Items given so far (the first work included).
  uint64_t given() {
    std::lock_guard<std::mutex> g(mu_);
    return given_;
  }

 private:
  const size_t threads_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Item> items_;
  size_t idle_ = 0;
  bool finished_ = false;
  uint64_t given_ = 0;
  std::atomic<size_t> hungry_{0};
  std::atomic<size_t> size_{0};
  std::atomic<bool> halt_{false};
};

}  // namespace parity::verifier

#endif  // PARITY_VERIFIER_WORK_POOL_H_
