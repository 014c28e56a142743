// The skeleton of the depth-first searches that run on several threads (the explorer's,
// parallel_dfs.cc, and the every-path rule search's, every_path.cc): per thread a stack of
// frames, each frame an engine holding a state and the steps still to take from it; a thread
// with an empty stack takes an item from the work pool (verifier/work_pool.h), and a thread
// that sees another one hungry splits its stack. The strategies say what a frame carries beside
// its state, what an item holds, and what a step does; the skeleton owns the threads, the
// frames and the stack splitting.
#ifndef PARITY_VERIFIER_EXPLORE_STACKS_H_
#define PARITY_VERIFIER_EXPLORE_STACKS_H_

#include <cstddef>
#include <memory>
#include <thread>
#include <utility>
#include <vector>

#include "sim/engine/engine.h"
#include "verifier/work_pool.h"

namespace parity::verifier::explore {

// One thread's stack. Frame: constructible from an engine (the thread's program copy), with
// members `choices` (the steps to take from its state) and `next` (the first not taken).
template <typename Frame>
struct Stack {
  // own: this thread's engine (Engine::IsolatedCopy when other threads step states too).
  explicit Stack(engine::Engine own_engine)
      : own(std::make_unique<engine::Engine>(std::move(own_engine))) {}
  std::unique_ptr<engine::Engine> own;  // the frames are copies of it
  // Frames at fixed addresses: pushing keeps references to lower frames valid.
  std::vector<std::unique_ptr<Frame>> frames;
  size_t depth = 0;  // frames in use

  Frame& At(size_t i) {
    while (frames.size() <= i) frames.push_back(std::make_unique<Frame>(*own));
    return *frames[i];
  }
  Frame& Top() { return *frames[depth - 1]; }
};

// Stack splitting: when some thread is hungry and fewer items wait than hungry threads, the
// lowest frame with steps left gives away the later half of them (rounded up when it is not
// the top, which keeps the thread busy: it has the frames above); the lowest frames hold the
// largest subtrees. make(i, frame, &item) fills the item's state part for frame i; the steps
// go into item.steps. Returns whether something was given.
template <typename Frame, typename Item, typename MakeItem>
bool MaybeDonate(WorkPool<Item>& pool, Stack<Frame>& k, MakeItem&& make) {
  if (!pool.Wanted()) return false;
  for (size_t i = 0; i < k.depth; ++i) {
    Frame& f = *k.frames[i];
    const size_t left = f.choices.size() - f.next;
    if (left == 0 || (left == 1 && i + 1 == k.depth)) continue;
    const size_t give = i + 1 == k.depth ? left / 2 : (left + 1) / 2;
    Item item;
    make(i, f, &item);
    item.steps.assign(f.choices.end() - static_cast<std::ptrdiff_t>(give), f.choices.end());
    f.choices.resize(f.choices.size() - give);
    pool.Give(std::move(item));
    return true;
  }
  return false;
}

// Runs body(t) for t = 0 .. n-1, each on a thread of its own (t = 0 on the caller's).
template <typename Body>
void OnThreads(size_t n, Body&& body) {
  std::vector<std::thread> threads;
  for (size_t t = 1; t < n; ++t) threads.emplace_back([&body, t] { body(t); });
  body(size_t{0});
  for (std::thread& th : threads) th.join();
}

// The thread loop of a stack search: take an item (set_up makes the stack from it), search
// until the stack is empty or the search halts, again until the pool says the search is over.
template <typename Item, typename SetUp, typename Search>
void RunStackThread(WorkPool<Item>& pool, SetUp&& set_up, Search&& search) {
  for (;;) {
    Item item;
    if (!pool.Take(&item)) return;
    set_up(std::move(item));
    search();
  }
}

}  // namespace parity::verifier::explore

#endif  // PARITY_VERIFIER_EXPLORE_STACKS_H_
