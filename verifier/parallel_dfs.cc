#include "verifier/parallel_dfs.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <unistd.h>

#include "sim/common/check.h"
#include "verifier/concurrent_fingerprint_set.h"
#include "verifier/expand.h"
#include "verifier/rules.h"
#include "verifier/symmetry.h"
#include "verifier/work_pool.h"

namespace parity::verifier {
namespace {

using engine::Choice;
using engine::Engine;
using engine::Outcome;
using Record = ConcurrentRecords::Record;
using Clock = std::chrono::steady_clock;
constexpr uint32_t kRoot = ConcurrentRecords::kRoot;

uint64_t ResidentBytes() {
  FILE* f = std::fopen("/proc/self/statm", "r");
  if (f == nullptr) return 0;
  unsigned long long size = 0, resident = 0;
  const int n = std::fscanf(f, "%llu %llu", &size, &resident);
  std::fclose(f);
  return n == 2 ? resident * static_cast<uint64_t>(sysconf(_SC_PAGESIZE)) : 0;
}

uint32_t EncodeChoice(Choice c) {
  return (c.kind == Choice::Kind::kAsync ? 0x80000000u : 0u) | c.index;
}
Choice DecodeChoice(uint32_t v) {
  return {(v & 0x80000000u) ? Choice::Kind::kAsync : Choice::Kind::kAgent, v & 0x7fffffffu};
}

// Work handed from one thread to another: a stored state (packed against the initial state) and
// the steps of its persistent set still to take from it. The steps are the donor's choices
// (Engine::Choices: agents by number, in-flight operations by position); Pack and Unpack keep
// the in-flight operations in their order, so they name the same steps on the receiver's engine.
struct Item {
  std::vector<uint8_t> bytes;
  uint32_t id = 0;
  uint32_t depth = 0;        // its frame's level on the path from the initial state (root: 0)
  bool expand = false;       // the initial state: not expanded yet (no steps given)
  std::vector<Choice> steps;
};

class ParallelSearch {
 public:
  ParallelSearch(const ir::Program& program, const std::vector<int64_t>& params,
                 const ExploreOptions& options)
      : program_(program),
        params_(params),
        options_(options),
        pool_(static_cast<size_t>(std::max(2, options.threads))) {}

  ExploreResult Run() {
    t0_ = Clock::now();
    engine::EngineOptions eo;
    eo.record_trace = false;
    Expected<Engine> created = Engine::Create(program_, params_, eo);
    if (!created.ok()) {
      res_.verdict = ExploreVerdict::kBadInput;
      res_.error = created.status();
      return res_;
    }
    sym_ = SymmetryForSearch(program_, params_, *created, options_.symmetry && options_.reduction);
    res_.symmetry_applied = sym_.visited;
    res_.symmetry = sym_.description;
    base_ = std::make_unique<Engine>(std::move(created).value());
    const uint32_t nt = static_cast<uint32_t>(std::max(2, options_.threads));
    for (uint32_t t = 0; t < nt; ++t) {
      workers_.push_back(std::make_unique<Worker>(*base_, options_));
    }
    seen_.Insert(VisitedFp(*workers_[0]->own));
    NewRecord(*workers_[0], {kRoot, 0});
    if (options_.collect_barrier_states) CollectBarriers(*base_, workers_[0]->barriers);
    {
      Item root;
      base_->Pack(*base_, &root.bytes);
      root.expand = true;
      pool_.Give(std::move(root));
    }
    {
      std::vector<std::thread> threads;
      for (uint32_t t = 1; t < nt; ++t) threads.emplace_back([this, t] { RunThread(t); });
      RunThread(0);
      for (std::thread& th : threads) th.join();
    }
    Finish();
    return res_;
  }

 private:
  // One thread's search state.
  struct Frame {
    explicit Frame(const Engine& e) : engine(e) {}
    Engine engine;  // holds the frame's state
    uint32_t id = 0;
    std::vector<Choice> choices;  // the steps to take from it
    size_t next = 0;
    // This frame's engine holds the state of the frame below it plus one step (RestoreStep
    // brings it back to that state for the next step, cheaper than a copy).
    bool above_ok = false;
  };
  struct Worker {
    Worker(const Engine& base, const ExploreOptions& o) {
      own = std::make_unique<Engine>(base.IsolatedCopy());
      w.reducer = reduction::MakeReducer(base, o);
    }
    std::unique_ptr<Engine> own;  // this thread's program copy (the frames are copies of it)
    reduction::ExpandWorker w;
    std::vector<std::unique_ptr<Frame>> frames;
    size_t depth = 0;       // frames in use
    // State numbers taken from the shared records in blocks (one shared counter update per
    // kIdBlock states, not per state): the next one and the end of the block.
    uint64_t next_id = 0, end_id = 0;
    // States this thread numbered (written by it only; read by the others' --max-states check).
    std::atomic<uint64_t> states{0};
    uint32_t base_depth = 0;  // the level of frames[0] on the path from the initial state
    ExploreStats stats;
    std::vector<uint64_t> terminals;
    std::vector<BarrierValue> barriers;
    // Padding: the workers' counters are written on every step by their own threads only.
    char pad[64];
  };

  uint64_t VisitedFp(const Engine& e) const { return sym_.VisitedFp(e); }
  uint64_t TerminalFp(const Engine& e, uint64_t visited) const {
    return sym_.TerminalFp(e, visited);
  }

  std::vector<Choice> PathTo(uint32_t id) const {
    std::vector<Choice> path;
    for (uint32_t at = id;;) {
      const Record r = records_.Get(at);
      if (r.parent == kRoot) break;
      path.push_back(DecodeChoice(r.choice));
      at = r.parent;
    }
    std::reverse(path.begin(), path.end());
    return path;
  }

  static void CollectBarriers(const Engine& e, std::vector<BarrierValue>& out) {
    for (uint32_t o = 0; o < e.num_barrier_slots(); ++o) {
      out.push_back(BarrierValue::Of(o, e.slot_state(o)));
    }
    if (out.size() > (size_t{1} << 20)) {
      std::sort(out.begin(), out.end());
      out.erase(std::unique(out.begin(), out.end()), out.end());
    }
  }

  // Ends the search (a finding with stop_at_first, a bound).
  void StopAll() { pool_.Halt(); }
  bool Halted() const { return pool_.Halted(); }

  void Bound(std::string why) {
    {
      std::lock_guard<std::mutex> g(res_mu_);
      if (!stopped_ && !done_) {
        stopped_ = true;
        res_.bound = std::move(why);
      }
    }
    StopAll();
  }

  // The bounds, checked by each thread every 256 expansions (time, memory) and before each
  // step (states).
  void CheckBounds(Worker& k) {
    if ((k.stats.expanded & 255) != 0) return;
    if (options_.time_limit_s > 0 &&
        std::chrono::duration<double>(Clock::now() - t0_).count() > options_.time_limit_s) {
      Bound("--time-limit");
    }
    if (options_.max_memory_bytes > 0) {
      const uint64_t rss = ResidentBytes();
      if (rss > options_.max_memory_bytes) {
        Bound("--max-memory " + std::to_string(options_.max_memory_bytes >> 20) +
              " MiB (resident memory reached " + std::to_string(rss >> 20) + " MiB)");
      }
    }
  }

  // A finding at state id (res_mu_ held by the caller).
  void Found(ExploreVerdict v, uint32_t id) {
    if (!found_) {
      found_ = true;
      res_.verdict = v;
      res_.counterexample = PathTo(id);
    }
    if (options_.stop_at_first) done_ = true;
  }

  // A new state s (number id, fingerprint fp) reached by worker k: whether it is running (to
  // be expanded). As the one-thread search's Search::Reached.
  bool Reached(Worker& k, const Engine& s, uint64_t fp, uint32_t id) {
    if (options_.collect_barrier_states) CollectBarriers(s, k.barriers);
    const Outcome o = s.outcome();
    if (o == Outcome::kRunning) return true;
    if (o == Outcome::kCompleted) {
      ++k.stats.completed_ends;
      if (has_exists_) exists_held_.fetch_or(s.ExistsHeld(), std::memory_order_relaxed);
      if (options_.collect_terminals) k.terminals.push_back(TerminalFp(s, fp));
      if (options_.check_rules) CheckRulesOn(k, id);
      return false;
    }
    bool stop = false;
    {
      std::lock_guard<std::mutex> g(res_mu_);
      if (o == Outcome::kDeadlock) {
        ++k.stats.deadlock_ends;
        if (options_.collect_terminals) k.terminals.push_back(TerminalFp(s, fp));
        Found(ExploreVerdict::kDeadlock, id);
      } else if (o == Outcome::kViolation) {
        ++k.stats.violation_ends;
        Found(ExploreVerdict::kViolation, id);
      } else if (!bad_input_) {  // kError, kStepLimit: bad input found while running
        bad_input_ = true;
        found_ = done_ = true;
        res_.verdict = ExploreVerdict::kBadInput;
        res_.error = s.result().error;
        res_.counterexample = PathTo(id);
      } else {
        done_ = true;
      }
      stop = done_;
    }
    if (stop) StopAll();
    return false;
  }

  // The protocol rules on the path to a completed end state (the first path any thread stored).
  void CheckRulesOn(Worker& k, uint32_t id) {
    ++k.stats.rule_paths;
    const std::vector<Choice> path = PathTo(id);
    Expected<Engine> e = Replay(program_, params_, path);
    if (!e.ok()) return;
    std::vector<Finding> findings = CheckRules(program_, *e, e->trace());
    if (!HasErrors(findings, options_.strict)) return;
    ++k.stats.rule_violation_ends;
    bool stop = false;
    {
      std::lock_guard<std::mutex> g(res_mu_);
      if (!found_) {
        found_ = true;
        res_.verdict = ExploreVerdict::kRuleViolation;
        res_.counterexample = path;
        res_.findings = std::move(findings);
      }
      if (options_.stop_at_first) done_ = true;
      stop = done_;
    }
    if (stop) StopAll();
  }

  static constexpr uint64_t kIdBlock = 256;
  uint32_t NewRecord(Worker& k, Record r) {
    if (k.next_id == k.end_id) {
      k.next_id = records_.Reserve(kIdBlock);
      k.end_id = k.next_id + kIdBlock;
    }
    const uint32_t id = static_cast<uint32_t>(k.next_id++);
    records_.Set(id, r);
    k.states.store(k.states.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    return id;
  }

  Frame& FrameAt(Worker& k, size_t i) {
    while (k.frames.size() <= i) k.frames.push_back(std::make_unique<Frame>(*k.own));
    return *k.frames[i];
  }

  // Makes the frame at k.depth (its engine holds a stored running state, fingerprinted) the
  // top, with the persistent set's steps.
  void Push(Worker& k, uint32_t id) {
    Frame& f = FrameAt(k, k.depth++);
    f.id = id;
    f.next = 0;
    const size_t n =
        reduction::ExpandState(k.w, f.engine, options_.reduction, options_.guarded_waits);
    ++k.stats.expanded;
    k.stats.enabled += n;
    k.stats.pruned += n - k.w.selected;
    k.stats.depth =
        std::max<uint32_t>(k.stats.depth, k.base_depth + static_cast<uint32_t>(k.depth));
    f.choices.clear();
    for (size_t i = 0; i < n; ++i) {
      if (k.w.take[i]) f.choices.push_back(k.w.choices[i]);
    }
    // The frame above the new top holds no successor of it yet.
    if (k.depth < k.frames.size()) k.frames[k.depth]->above_ok = false;
    CheckBounds(k);
  }

  // Stack splitting: when some thread is hungry and fewer items wait than hungry threads, the
  // lowest frame with steps left gives away the later half of them (rounded up when it is not
  // the top, which keeps the thread busy: it has the frames above).
  void MaybeDonate(Worker& k) {
    if (!pool_.Wanted()) return;
    for (size_t i = 0; i < k.depth; ++i) {
      Frame& f = *k.frames[i];
      const size_t left = f.choices.size() - f.next;
      if (left == 0 || (left == 1 && i + 1 == k.depth)) continue;
      const size_t give = i + 1 == k.depth ? left / 2 : (left + 1) / 2;
      Item item;
      f.engine.Pack(*base_, &item.bytes);
      item.id = f.id;
      item.depth = k.base_depth + static_cast<uint32_t>(i);
      item.steps.assign(f.choices.end() - static_cast<std::ptrdiff_t>(give), f.choices.end());
      f.choices.resize(f.choices.size() - give);
      pool_.Give(std::move(item));
      return;
    }
  }

  // Waits for an item (false: the search is over) and sets up the thread's stack with it.
  bool TakeWork(Worker& k) {
    Item item;
    if (!pool_.Take(&item)) return false;
    k.depth = 0;
    k.base_depth = item.depth;
    Frame& f = FrameAt(k, 0);
    f.engine.Unpack(*base_, item.bytes.data(), item.bytes.size());
    VisitedFp(f.engine);  // a clean fingerprint cache, keyed as the successors' will be
    if (item.expand) {
      k.base_depth = 0;
      Push(k, item.id);
    } else {
      f.id = item.id;
      f.next = 0;
      f.choices = std::move(item.steps);
      f.above_ok = false;
      k.depth = 1;
    }
    if (k.frames.size() > 1) k.frames[1]->above_ok = false;
    return true;
  }

  void RunThread(uint32_t t) {
    Worker& k = *workers_[t];
    while (TakeWork(k)) Search(k);
  }

  // Depth-first from the thread's stack until it is empty or the search halts.
  void Search(Worker& k) {
    while (k.depth != 0) {
      if (Halted()) return;
      MaybeDonate(k);
      Frame& f = *k.frames[k.depth - 1];
      if (f.next == f.choices.size()) {
        --k.depth;
        continue;
      }
      // (Numbers handed out bound the states numbered from above: the sum only near the end.)
      if (records_.size() >= options_.max_states && States() >= options_.max_states) {
        Bound("--max-states " + std::to_string(options_.max_states));
        return;
      }
      const Choice c = f.choices[f.next++];
      Frame& child = FrameAt(k, k.depth);  // (frames do not move when the vector grows)
      if (child.above_ok) {
        child.engine.RestoreStep(f.engine);
      } else {
        child.engine = f.engine;
      }
      child.above_ok = true;
      child.engine.Step(c);
      const uint64_t fp = VisitedFp(child.engine);
      ++k.stats.transitions;
      if (!seen_.Insert(fp)) continue;
      const uint32_t id = NewRecord(k, {f.id, EncodeChoice(c)});
      if (Reached(k, child.engine, fp, id)) Push(k, id);
    }
  }

  // States numbered by all threads (exact once they stopped; a bound's check otherwise).
  uint64_t States() const {
    uint64_t n = 0;
    for (const auto& wp : workers_) n += wp->states.load(std::memory_order_relaxed);
    return n;
  }

  void Finish() {
    ExploreStats& s = res_.stats;
    for (const auto& wp : workers_) {
      const Worker& k = *wp;
      s.expanded += k.stats.expanded;
      s.transitions += k.stats.transitions;
      s.enabled += k.stats.enabled;
      s.pruned += k.stats.pruned;
      s.held_phase_cuts += k.w.reducer->held_phase_cuts();
      s.completed_ends += k.stats.completed_ends;
      s.deadlock_ends += k.stats.deadlock_ends;
      s.violation_ends += k.stats.violation_ends;
      s.rule_paths += k.stats.rule_paths;
      s.rule_violation_ends += k.stats.rule_violation_ends;
      s.depth = std::max(s.depth, k.stats.depth);
      res_.terminals.insert(res_.terminals.end(), k.terminals.begin(), k.terminals.end());
      res_.barrier_states.insert(res_.barrier_states.end(), k.barriers.begin(),
                                 k.barriers.end());
    }
    res_.exists_held = exists_held_.load(std::memory_order_relaxed);
    s.peak_frontier = s.depth;  // engines on the deepest path
    if (stopped_ && !found_ && !done_) res_.verdict = ExploreVerdict::kIncomplete;
    s.states = States();
    s.table_bytes = seen_.bytes() + records_.bytes();
    s.seconds = std::chrono::duration<double>(Clock::now() - t0_).count();
    std::sort(res_.terminals.begin(), res_.terminals.end());
    res_.terminals.erase(std::unique(res_.terminals.begin(), res_.terminals.end()),
                         res_.terminals.end());
    std::sort(res_.barrier_states.begin(), res_.barrier_states.end());
    res_.barrier_states.erase(std::unique(res_.barrier_states.begin(), res_.barrier_states.end()),
                              res_.barrier_states.end());
  }

  const ir::Program& program_;
  const std::vector<int64_t>& params_;
  const ExploreOptions& options_;
  Clock::time_point t0_;
  const bool has_exists_ = HasExists(program_);
  std::atomic<uint64_t> exists_held_{0};  // ExploreResult::exists_held
  std::unique_ptr<Engine> base_;  // the initial state: the base of packed states (only read)
  SearchSymmetry sym_;  // SymmetryForSearch
  ConcurrentFingerprintSet seen_;
  ConcurrentRecords records_;
  std::vector<std::unique_ptr<Worker>> workers_;
  // The work handed over, and the threads waiting for some (verifier/work_pool.h).
  WorkPool<Item> pool_;
  // The result's findings (res_mu_).
  std::mutex res_mu_;
  ExploreResult res_;
  bool found_ = false, stopped_ = false, done_ = false, bad_input_ = false;
};

}  // namespace

ExploreResult ParallelDepthFirst(const ir::Program& program, const std::vector<int64_t>& params,
                                 const ExploreOptions& options) {
  return ParallelSearch(program, params, options).Run();
}

}  // namespace parity::verifier
