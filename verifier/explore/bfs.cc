// The breadth-first searches of Search (explore/search.h): on one thread, and on several
// threads level by level with the same result.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>
#include <thread>
#include <utility>
#include <vector>

#include "verifier/explore/search.h"

namespace parity::verifier::explore {

// Breadth-first, level by level. The frontier holds its states packed (Engine::Pack against
// the initial state: the words of the state block that differ from it, the in-flight
// operations and a few counters; a few hundred bytes) rather than as engines (about 2 KB
// each on the 2x2 GEMM: a brute-force breadth-first search of it filled 4.7 GB in 20 s).
// Each state is unpacked once, to be expanded; its successors are stepped on one engine,
// undone with RestoreStep.
void Search::Bfs(Engine root) {
  struct Packed {
    uint64_t at;   // its bytes in the level's arena
    uint32_t len;
    uint32_t id;   // its record
  };
  const Engine base = root;
  Engine cur = root, succ = root;
  std::vector<uint8_t> bytes, next_bytes;
  std::vector<Packed> frontier, next;
  root.Pack(base, &bytes);
  frontier.push_back({0, static_cast<uint32_t>(bytes.size()), 0});
  while (!frontier.empty() && !stopped_ && !done_ && !DepthBoundReached()) {
    res_.stats.peak_frontier = std::max<uint64_t>(res_.stats.peak_frontier, frontier.size());
    for (size_t fi = 0; fi < frontier.size() && !done_; ++fi) {
      if (OutOfBounds()) break;
      const Packed node = frontier[fi];
      cur.Unpack(base, bytes.data() + node.at, node.len);
      // A clean cache, keyed as the successors' will be (VisitedFp: with symmetry classes
      // a plain fingerprint here would make every successor re-key every agent).
      VisitedFp(cur);
      const size_t n = Expand(w0_, cur);
      ++res_.stats.expanded;
      res_.stats.enabled += n;
      res_.stats.pruned += n - w0_.selected;
      bool succ_from_cur = false;  // succ is cur plus a step (RestoreStep undoes it)
      for (size_t i = 0; i < n && !done_; ++i) {
        if (!w0_.take[i]) continue;
        if (succ_from_cur) {
          succ.RestoreStep(cur);
        } else {
          succ = cur;
          succ_from_cur = true;
        }
        succ.Step(w0_.choices[i]);
        bool keep = false;
        const uint32_t id = Visit(succ, node.id, w0_.choices[i], &keep);
        if (!keep) continue;
        const uint64_t at = next_bytes.size();
        succ.Pack(base, &next_bytes);
        next.push_back({at, static_cast<uint32_t>(next_bytes.size() - at), id});
      }
    }
    res_.stats.frontier_bytes = std::max<uint64_t>(
        res_.stats.frontier_bytes, bytes.capacity() + next_bytes.capacity() +
                                       (frontier.capacity() + next.capacity()) * sizeof(Packed));
    frontier.swap(next);
    bytes.swap(next_bytes);
    next.clear();
    next_bytes.clear();
    if (!stopped_ && !done_ && !frontier.empty()) ++res_.stats.depth;
  }
}

// Breadth-first on options_.threads threads, level by level, with the same result as Bfs (the
// same states in the same order, the same records, statistics and counterexample).
// Expansion (the persistent set, stepping, fingerprinting) runs in parallel: the level's
// frontier is cut into blocks of kBlock states that the threads take in order; each thread
// has an engine of its own program copy (Engine::IsolatedCopy; a frontier state is copied
// into it with AssignState), its own Reducer, and keeps every taken successor (fingerprint,
// choice, and the engine unless the fingerprint was stored in an earlier level: the table is
// only read while the threads run). The merge then runs on one thread in frontier order,
// exactly as Bfs visits: it inserts the fingerprints, numbers the new states, records
// findings and runs the rules, and builds the next frontier from the threads' engines.
void Search::ParallelBfs(Engine root) {
  constexpr size_t kBlock = 16;
  constexpr uint32_t kSeen = 0xffffffffu;
  struct Succ {
    uint64_t fp;
    Choice choice;
    uint32_t where;  // kSeen; else with len == 0 an end state (index into Par::ends)
    uint32_t len;    // > 0: a running state packed at `at` in the thread's arena
    uint64_t at;
  };
  struct NodeOut {
    uint32_t enabled;
    uint32_t begin, end;  // the node's taken successors in Par::succ
  };
  // The running successors a thread packed in this level, by fingerprint (open addressing;
  // 0 is free: a fingerprint is never 0, FingerprintSet): a state reached again from another
  // state of the level is packed once (the merge visits the first occurrence, in frontier
  // order, which is this thread's first).
  struct PackedOnce {
    std::vector<uint64_t> fps;
    std::vector<std::pair<uint64_t, uint32_t>> where;  // (at, len) in the thread's arena
    size_t n = 0;
    void Clear() {
      std::fill(fps.begin(), fps.end(), 0);
      n = 0;
    }
    // fp's slot: its entry, or the free slot for it (the table grows first when half full).
    size_t Slot(uint64_t fp) {
      if (2 * (n + 1) > fps.size()) {
        PackedOnce g;
        g.fps.assign(std::max<size_t>(1024, 2 * fps.size()), 0);
        g.where.resize(g.fps.size());
        for (size_t k = 0; k < fps.size(); ++k) {
          if (fps[k] == 0) continue;
          const size_t h = g.Slot(fps[k]);
          g.fps[h] = fps[k];
          g.where[h] = where[k];
        }
        fps.swap(g.fps);
        where.swap(g.where);
      }
      const size_t mask = fps.size() - 1;
      size_t h = fp & mask;
      while (fps[h] != 0 && fps[h] != fp) h = (h + 1) & mask;
      return h;
    }
  };
  struct Par {
    Worker w;
    Engine cur;   // the state being expanded (this thread's program copy)
    Engine step;  // its successors, stepped one at a time (RestoreStep undoes each)
    std::vector<uint8_t> bytes[2];  // packed successors of the level, by level parity
    std::vector<Engine> ends;       // successors that end the run (not packed), this level
    size_t n_ends = 0;
    PackedOnce once;
    std::vector<Succ> succ;
    std::vector<NodeOut> nodes;
  };
  struct BlockOut {
    uint32_t thread = 0;
    uint32_t node_begin = 0, node_end = 0;  // in the thread's nodes
    bool done = false;
  };
  // A frontier state: packed (Bfs) in a thread's arena, or in root_bytes (thread == nt).
  struct Entry {
    uint32_t thread;
    uint32_t len;
    uint64_t at;
    uint32_t id;
  };
  const uint32_t nt = static_cast<uint32_t>(options_.threads);
  std::vector<std::unique_ptr<Par>> par;
  for (uint32_t t = 0; t < nt; ++t) {
    Engine own = root.IsolatedCopy();
    par.push_back(std::make_unique<Par>(Par{Worker{}, own, own, {}, {}, 0, {}, {}, {}}));
    par.back()->w.reducer = reduction::MakeReducer(root, options_);
  }
  // root: the base of every packed state (only read while the threads run).
  const Engine& base = root;
  Engine merge = root;  // the merge's view of a new packed state (Visit)
  std::vector<uint8_t> root_bytes;
  root.Pack(base, &root_bytes);
  std::vector<Entry> frontier{{nt, static_cast<uint32_t>(root_bytes.size()), 0, 0}}, next;
  std::vector<BlockOut> blocks;
  std::atomic<size_t> next_block{0};
  std::atomic<bool> timed_out{false};
  const Budget budget(options_, t0_);
  uint32_t level = 0;
  // The arena of a frontier state of `level`: written while level - 1 was expanded.
  auto bytes_of = [&](const Entry& x) -> const uint8_t* {
    if (x.thread == nt) return root_bytes.data() + x.at;
    return par[x.thread]->bytes[level & 1].data() + x.at;
  };
  auto work = [&](uint32_t t) {
    Par& p = *par[t];
    const int parity = (level + 1) & 1;
    std::vector<uint8_t>& out = p.bytes[parity];
    out.clear();
    p.n_ends = 0;
    p.once.Clear();
    p.succ.clear();
    p.nodes.clear();
    const size_t nb = blocks.size();
    for (;;) {
      const size_t b = next_block.fetch_add(1);
      if (b >= nb) break;
      if (budget.TimeUp() || (budget.memory_bounded() && budget.MemoryExceeded())) {
        timed_out = true;
      }
      if (timed_out) break;
      BlockOut& bo = blocks[b];
      bo.thread = t;
      bo.node_begin = static_cast<uint32_t>(p.nodes.size());
      const size_t end = std::min(frontier.size(), (b + 1) * kBlock);
      for (size_t fi = b * kBlock; fi < end; ++fi) {
        p.cur.Unpack(base, bytes_of(frontier[fi]), frontier[fi].len);
        VisitedFp(p.cur);  // a clean cache, keyed as the successors' will be (Bfs)
        const size_t n = Expand(p.w, p.cur);
        NodeOut no{static_cast<uint32_t>(n), static_cast<uint32_t>(p.succ.size()), 0};
        bool step_from_cur = false;  // p.step is p.cur plus a step
        for (size_t i = 0; i < n; ++i) {
          if (!p.w.take[i]) continue;
          if (step_from_cur) {
            p.step.RestoreStep(p.cur);
          } else {
            p.step.AssignState(p.cur);
            step_from_cur = true;
          }
          p.step.Step(p.w.choices[i]);
          const uint64_t fp = VisitedFp(p.step);
          Succ sc{fp, p.w.choices[i], kSeen, 0, 0};
          // Stored in an earlier level: skipped, unless it is a failed assertion, which the
          // merge notes (Visit) as Bfs does: two failures of different assertions can end in
          // equal states.
          if (!seen_.Contains(fp) || IsFailedAssertion(p.step)) {
            if (p.step.outcome() == Outcome::kRunning) {  // kept by Visit: packed
              const size_t h = p.once.Slot(fp);
              sc.where = 0;
              if (p.once.fps[h] != fp) {
                p.once.fps[h] = fp;
                p.once.where[h].first = out.size();
                p.step.Pack(base, &out);
                p.once.where[h].second =
                    static_cast<uint32_t>(out.size() - p.once.where[h].first);
                ++p.once.n;
              }
              sc.at = p.once.where[h].first;
              sc.len = p.once.where[h].second;
            } else {
              if (p.n_ends == p.ends.size()) p.ends.push_back(p.step);
              p.ends[p.n_ends].AssignState(p.step);
              sc.where = static_cast<uint32_t>(p.n_ends++);
            }
          }
          p.succ.push_back(sc);
        }
        no.end = static_cast<uint32_t>(p.succ.size());
        p.nodes.push_back(no);
      }
      bo.node_end = static_cast<uint32_t>(p.nodes.size());
      bo.done = true;
    }
  };
  while (!frontier.empty() && !stopped_ && !done_ && !DepthBoundReached()) {
    res_.stats.peak_frontier = std::max<uint64_t>(res_.stats.peak_frontier, frontier.size());
    const size_t nb = (frontier.size() + kBlock - 1) / kBlock;
    blocks.assign(nb, BlockOut{});
    next_block = 0;
    {
      std::vector<std::thread> threads;
      const uint32_t use = static_cast<uint32_t>(std::min<size_t>(nt, nb));
      for (uint32_t t = 1; t < use; ++t) threads.emplace_back(work, t);
      work(0);
      for (std::thread& th : threads) th.join();
    }
    // The merge, in frontier order (Bfs's visiting order).
    next.clear();
    const int parity = (level + 1) & 1;
    bool partial = false;
    for (size_t b = 0; b < nb && !done_ && !stopped_; ++b) {
      const BlockOut& bo = blocks[b];
      if (!bo.done) {  // not expanded: the time limit stopped the threads
        partial = true;
        break;
      }
      Par& p = *par[bo.thread];
      for (uint32_t k = bo.node_begin; k < bo.node_end && !done_; ++k) {
        const size_t fi = b * kBlock + (k - bo.node_begin);
        if (OutOfBounds()) break;
        ++res_.stats.expanded;
        const NodeOut& no = p.nodes[k];
        res_.stats.enabled += no.enabled;
        res_.stats.pruned += no.enabled - (no.end - no.begin);
        for (uint32_t j = no.begin; j < no.end && !done_; ++j) {
          const Succ& sc = p.succ[j];
          // Stored in an earlier level, or earlier in this one: Visit would skip it.
          if (sc.where == kSeen || (sc.len != 0 && seen_.Contains(sc.fp))) {
            ++res_.stats.transitions;
            continue;
          }
          const Engine* se = &merge;
          if (sc.len != 0) {
            merge.Unpack(base, p.bytes[parity].data() + sc.at, sc.len);
          } else {
            se = &p.ends[sc.where];
          }
          bool keep = false;
          const uint32_t id = Visit(*se, sc.fp, frontier[fi].id, sc.choice, &keep);
          if (keep) next.push_back({bo.thread, sc.len, sc.at, id});
        }
      }
    }
    uint64_t held = (frontier.capacity() + next.capacity()) * sizeof(Entry);
    for (const auto& p : par) held += p->bytes[0].capacity() + p->bytes[1].capacity();
    res_.stats.frontier_bytes = std::max(res_.stats.frontier_bytes, held);
    if (partial && !done_ && !stopped_) {
      if (!MemoryExceeded()) res_.bound = "--time-limit";
      stopped_ = true;
    }
    frontier.swap(next);
    ++level;
    if (!stopped_ && !done_ && !frontier.empty()) ++res_.stats.depth;
  }
  for (const auto& p : par) res_.stats.held_phase_cuts += p->w.reducer->held_phase_cuts();
}

}  // namespace parity::verifier::explore
