#include "verifier/explore.h"

#include <algorithm>
#include <atomic>
#include <cassert>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <variant>
#include <utility>

#include <unistd.h>

#include "sim/common/check.h"
#include "sim/model/codes.h"
#include "sim/trace/event.h"
#include "verifier/counterexample.h"
#include "verifier/every_path.h"
#include "verifier/expand.h"
#include "verifier/fingerprint_set.h"
#include "verifier/parallel_dfs.h"
#include "verifier/reducer.h"
#include "verifier/rules.h"
#include "verifier/symmetry.h"

namespace parity::verifier {

namespace {
// The process's resident set in bytes (Linux /proc/self/statm); 0 if unknown.
uint64_t ResidentBytes() {
  FILE* f = std::fopen("/proc/self/statm", "r");
  if (f == nullptr) return 0;
  unsigned long long size = 0, resident = 0;
  const int n = std::fscanf(f, "%llu %llu", &size, &resident);
  std::fclose(f);
  return n == 2 ? resident * static_cast<uint64_t>(sysconf(_SC_PAGESIZE)) : 0;
}
}  // namespace

namespace {

using reduction::Reducer;
using engine::Choice;
using engine::Engine;
using engine::Footprint;
using engine::Outcome;
using engine::Predictor;

// Per stored state: the state it was reached from and the step (for the counterexample).
struct Record {
  uint32_t parent;
  uint32_t choice;  // bit 31: async; low bits: the index
};
constexpr uint32_t kRoot = 0xffffffffu;

uint32_t EncodeChoice(Choice c) {
  return (c.kind == Choice::Kind::kAsync ? 0x80000000u : 0u) | c.index;
}
Choice DecodeChoice(uint32_t v) {
  return {(v & 0x80000000u) ? Choice::Kind::kAsync : Choice::Kind::kAgent, v & 0x7fffffffu};
}

std::vector<Choice> PathTo(const std::vector<Record>& records, uint32_t id) {
  std::vector<Choice> path;
  for (uint32_t at = id; records[at].parent != kRoot; at = records[at].parent) {
    path.push_back(DecodeChoice(records[at].choice));
  }
  std::reverse(path.begin(), path.end());
  return path;
}

}  // namespace

const char* ExploreVerdictName(ExploreVerdict v) {
  switch (v) {
    case ExploreVerdict::kVerified: return "verified";
    case ExploreVerdict::kViolation: return "violation";
    case ExploreVerdict::kDeadlock: return "deadlock";
    case ExploreVerdict::kBadInput: return "bad-input";
    case ExploreVerdict::kIncomplete: return "incomplete";
    case ExploreVerdict::kRuleViolation: return "rule-violation";
  }
  return "?";
}

namespace {

// One search (breadth-first or depth-first) over the reduced or the full state graph.
class Search {
  using Worker = reduction::ExpandWorker;


 public:
  Search(const ir::Program& program, const std::vector<int64_t>& params,
         const ExploreOptions& options, bool breadth_first)
      : program_(program), params_(params), options_(options), bfs_(breadth_first) {}

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
    seen_.Insert(VisitedFp(*created));
    records_.push_back({kRoot, 0});
    w0_.reducer = reduction::MakeReducer(*created, options_);
    if (options_.collect_barrier_states) CollectBarriers(*created);
    if (bfs_ && options_.threads > 1) {
      ParallelBfs(std::move(created).value());
    } else if (bfs_) {
      Bfs(std::move(created).value());
    } else {
      Dfs(std::move(created).value());
    }
    if (stopped_ && !found_ && !done_) res_.verdict = ExploreVerdict::kIncomplete;
    res_.stats.states = records_.size();
    res_.stats.held_phase_cuts += w0_.reducer->held_phase_cuts();
    res_.stats.table_bytes = seen_.bytes() + records_.capacity() * sizeof(Record);
    res_.stats.seconds = std::chrono::duration<double>(Clock::now() - t0_).count();
    std::sort(res_.terminals.begin(), res_.terminals.end());
    // Distinct end states can share a symmetric fingerprint (searches without symmetry).
    res_.terminals.erase(std::unique(res_.terminals.begin(), res_.terminals.end()),
                         res_.terminals.end());
    std::sort(res_.barrier_states.begin(), res_.barrier_states.end());
    res_.barrier_states.erase(std::unique(res_.barrier_states.begin(), res_.barrier_states.end()),
                              res_.barrier_states.end());
    return res_;
  }

 private:
  using Clock = std::chrono::steady_clock;

  uint64_t VisitedFp(const Engine& e) const { return sym_.VisitedFp(e); }
  uint64_t TerminalFp(const Engine& e, uint64_t visited) const {
    return sym_.TerminalFp(e, visited);
  }

  // The --max-memory bound: the process's resident memory (the fingerprint table's address-space
  // reservation is not resident until it is used). Sets the bound's message.
  bool MemoryExceeded() {
    if (options_.max_memory_bytes == 0) return false;
    const uint64_t rss = ResidentBytes();
    if (rss <= options_.max_memory_bytes) return false;
    res_.bound = "--max-memory " + std::to_string(options_.max_memory_bytes >> 20) +
                 " MiB (resident memory reached " + std::to_string(rss >> 20) + " MiB)";
    return true;
  }

  // Inlined where it runs per transition: the common case is two compares.
  __attribute__((always_inline)) bool OutOfBounds() {
    if (records_.size() < options_.max_states &&
        ((options_.time_limit_s <= 0 && options_.max_memory_bytes == 0) ||
         (res_.stats.expanded & 255) != 0)) {
      return false;
    }
    return OutOfBoundsSlow();
  }
  bool OutOfBoundsSlow() {
    if (records_.size() >= options_.max_states) {
      res_.bound = "--max-states " + std::to_string(options_.max_states);
      stopped_ = true;
      return true;
    }
    if (MemoryExceeded()) {
      stopped_ = true;
      return true;
    }
    if (options_.time_limit_s > 0 && (res_.stats.expanded & 255) == 0 &&
        std::chrono::duration<double>(Clock::now() - t0_).count() > options_.time_limit_s) {
      res_.bound = "--time-limit";
      stopped_ = true;
      return true;
    }
    return false;
  }

  // Breadth-first: whether the frontier (at depth res_.stats.depth) is at the depth bound
  // (ExploreOptions::max_depth): its states are stored and checked, not expanded.
  bool DepthBoundReached() {
    if (options_.max_depth == 0 || res_.stats.depth < options_.max_depth) return false;
    res_.bound = "--max-depth " + std::to_string(options_.max_depth);
    stopped_ = true;
    return true;
  }

  // The enabled steps of `e` (w.choices) and the ones the search takes (w.take: all, or the
  // persistent set). Returns their number.
  size_t Expand(Worker& w, Engine& e) {
    return reduction::ExpandState(w, e, options_.reduction, options_.guarded_waits);
  }

  void CollectBarriers(const Engine& e) {
    for (uint32_t o = 0; o < e.num_barrier_slots(); ++o) {
      res_.barrier_states.push_back(BarrierValue::Of(o, e.slot_state(o)));
    }
    if (res_.barrier_states.size() > (size_t{1} << 20)) {
      std::sort(res_.barrier_states.begin(), res_.barrier_states.end());
      res_.barrier_states.erase(
          std::unique(res_.barrier_states.begin(), res_.barrier_states.end()),
          res_.barrier_states.end());
    }
  }

  // A successor state: stores it when new. Returns its record id, or kRoot when it was seen
  // before or ended the run (then *keep is false); sets found_ / done_ for findings.
  uint32_t Visit(const Engine& s, uint32_t parent, Choice c, bool* keep) {
    return Visit(s, VisitedFp(s), parent, c, keep);
  }
  // The same with the state's VisitedFp computed by the caller.
  uint32_t Visit(const Engine& s, uint64_t fp, uint32_t parent, Choice c, bool* keep) {
    *keep = false;
    // Before the state is looked up: two failures of different assertions can end in equal
    // states (the fingerprint holds the outcome, not which assertion failed).
    if (const auto& v = s.result().violation;
        v && s.outcome() == Outcome::kViolation &&
        v->violation.code == model::Code::kAssertionFailed) {
      auto& f = res_.failed_assertions;
      const auto at = std::lower_bound(f.begin(), f.end(), v->violation.value);
      if (at == f.end() || *at != v->violation.value) f.insert(at, v->violation.value);
    }
    const uint32_t id = Insert(fp, parent, c);
    if (id == kRoot) return kRoot;
    return Reached(s, fp, id, keep);
  }
  // A transition to a state with fingerprint fp: its record id when the state is new, else
  // kRoot.
  uint32_t Insert(uint64_t fp, uint32_t parent, Choice c) {
    ++res_.stats.transitions;
    if (!seen_.Insert(fp)) return kRoot;
    const uint32_t id = static_cast<uint32_t>(records_.size());
    // Grown by a quarter, not doubled: the records' unused capacity counts in the bytes per
    // state (explore.h), at most 2 of the 8 bytes this way.
    if (records_.size() == records_.capacity()) {
      records_.reserve(records_.capacity() + std::max<size_t>(records_.capacity() / 4, 64));
    }
    records_.push_back({parent, EncodeChoice(c)});
    return id;
  }
  // The rest of Visit for a new state s (record id): returns id; *keep when it is running.
  uint32_t Reached(const Engine& s, uint64_t fp, uint32_t id, bool* keep) {
    *keep = false;
    if (options_.collect_barrier_states) CollectBarriers(s);
    const Outcome o = s.outcome();
    if (o == Outcome::kRunning) {
      *keep = true;
      return id;
    }
    if (o == Outcome::kCompleted) {
      ++res_.stats.completed_ends;
      if (has_exists_) res_.exists_held |= s.ExistsHeld();
      if (options_.collect_terminals) res_.terminals.push_back(TerminalFp(s, fp));
      if (options_.check_rules) CheckRulesOn(id);
      return id;
    }
    if (o == Outcome::kDeadlock) {
      ++res_.stats.deadlock_ends;
      if (options_.collect_terminals) res_.terminals.push_back(TerminalFp(s, fp));
    } else if (o == Outcome::kViolation) {
      ++res_.stats.violation_ends;
    } else {  // kError, kStepLimit: bad input found while running
      res_.verdict = ExploreVerdict::kBadInput;
      res_.error = s.result().error;
      res_.counterexample = PathTo(records_, id);
      found_ = done_ = true;
      return id;
    }
    if (!found_) {
      found_ = true;
      res_.verdict =
          o == Outcome::kDeadlock ? ExploreVerdict::kDeadlock : ExploreVerdict::kViolation;
      res_.counterexample = PathTo(records_, id);
    }
    if (options_.stop_at_first) done_ = true;
    return id;
  }

  // The protocol rules on the path to a completed end state (one path per distinct end state:
  // the first one the search reached).
  void CheckRulesOn(uint32_t id) {
    ++res_.stats.rule_paths;
    const std::vector<Choice> path = PathTo(records_, id);
    Expected<Engine> e = Replay(program_, params_, path);
    if (!e.ok()) return;
    std::vector<Finding> findings = CheckRules(program_, *e, e->trace());
    if (!HasErrors(findings, options_.strict)) return;
    ++res_.stats.rule_violation_ends;
    if (!found_) {
      found_ = true;
      res_.verdict = ExploreVerdict::kRuleViolation;
      res_.counterexample = path;
      res_.findings = std::move(findings);
    }
    if (options_.stop_at_first) done_ = true;
  }

  // Breadth-first, level by level. The frontier holds its states packed (Engine::Pack against
  // the initial state: the words of the state block that differ from it, the in-flight
  // operations and a few counters; a few hundred bytes) rather than as engines (about 2 KB
  // each on the 2x2 GEMM: a brute-force breadth-first search of it filled 4.7 GB in 20 s).
  // Each state is unpacked once, to be expanded; its successors are stepped on one engine,
  // undone with RestoreStep.
  void Bfs(Engine root) {
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
  void ParallelBfs(Engine root) {
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
        if (options_.time_limit_s > 0 &&
            std::chrono::duration<double>(Clock::now() - t0_).count() > options_.time_limit_s) {
          timed_out = true;
        }
        if (options_.max_memory_bytes > 0 && ResidentBytes() > options_.max_memory_bytes) {
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
            if (!seen_.Contains(fp)) {  // else stored in an earlier level
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

  // Successor prediction (ExploreOptions::predict_successors; brute force only). What a step
  // taken at a state did, as far as the fingerprint goes: the difference it made to
  // Predictor::FingerprintSum, and the objects it marked as changed (StepMarks) and touched
  // (its Footprint). At a successor reached by another step t, the same step (the same agent,
  // or the same in-flight operation, found by position: carry) makes the same difference when
  // t marked none of those objects: the components it changes and everything it reads are then
  // as they were. The
  // step's successor there has the fingerprint FinishFingerprint(sum + delta, kRunning) (a step
  // that ended the run is not recorded; one that would end it there only from other agents'
  // states, a completion or a deadlock, leads to a state whose running twin was never stored,
  // so the lookup misses; such a successor is then stepped, unless another step is enabled,
  // which rules both out: see defer_new in Dfs).
  // The objects as bits: object o is bit o % 64 (exact up to 64 objects; beyond, two objects
  // can share a bit, which only makes a step look dependent where it is not: no prediction).
  static uint64_t ObjectBit(uint32_t o) { return uint64_t{1} << (o & 63); }
  struct Known {
    uint64_t delta = 0;
    uint64_t marked = 0;  // the objects the step marked
    uint64_t objects = 0;  // the objects it marked or touched
    bool valid = false;
    bool Meets(const Known& t) const { return (t.marked & objects) != 0; }  // t marked one
  };
  // e's fingerprint (Engine::Fingerprint) and, in *sum, the sum it finishes. In builds with
  // assertions it is also taken through Fingerprint(), which checks every 8th fingerprint
  // against one made from scratch (Engine::FpChecked: a step that changed state it did not
  // mark), the check that predictions (carry, PeekDeliveryDelta, the memo) rely on.
  static uint64_t FingerprintAndSum(const Engine& e, uint64_t* sum) {
    *sum = Predictor(e).FingerprintSum();
    const uint64_t fp = Predictor::FinishFingerprint(*sum, e.outcome());
#ifndef NDEBUG
    PARITY_CHECK(e.Fingerprint() == fp, "explore: FingerprintSum disagrees with Fingerprint");
#endif
    return fp;
  }
  // Records what step `k` (just taken on `e`, a copy of a state with sum `sum`) did; returns
  // the successor's fingerprint (e.Fingerprint()) and, in *after_sum, its sum.
  static uint64_t Learn(Known& k, const Engine& e, const engine::Footprint& touched,
                        uint64_t sum, uint64_t* after_sum) {
    const uint64_t fp = FingerprintAndSum(e, after_sum);
    const uint64_t after = *after_sum;
    k.valid = false;
    const uint32_t* marked = nullptr;
    uint32_t n = 0;
    if (e.outcome() == Outcome::kRunning && Predictor(e).StepMarks(&marked, &n) &&
        !touched.overflow) {
      k.marked = 0;
      for (uint32_t i = 0; i < n; ++i) k.marked |= ObjectBit(marked[i]);
      k.objects = k.marked;
      for (uint32_t i = 0; i < touched.n; ++i) k.objects |= ObjectBit(touched.objects[i]);
      k.delta = after - sum;
      k.valid = true;
    }
    return fp;
  }

  // Successor prediction for agent steps: a memo of what an agent's step did, keyed by what
  // it read. A step that did not look at other agents (Predictor::StepScanned: no phase, cluster
  // or named barrier woke anyone), changed only its own agent and objects it touched, and left
  // the run going is a function of its agent's state and the touched objects' states: in any
  // state where the agent's content hash and those objects' components are the same, the same
  // step changes those objects' components by the same amounts, sets the agent's content hash
  // to the same value and adds the same operations to its in-flight multiset. (An agent whose
  // steps read its own in-flight operations, through async groups, is keyed by them too.) Its
  // successor's sum follows from the state's cached components (the agent's component is
  // remade with the state's own in-flight operations). Direct-mapped by (agent, content hash).
  // All zero: no entry (the table is calloc'd: a small search does not pay for initialising
  // it, which took 14 % of a 40K-state brute force).
  struct AgentMemo {
    uint32_t agent1 = 0;            // the agent + 1; 0: none
    uint32_t n = 0;                 // touched shared objects
    uint64_t content = 0;           // the agent's content hash before the step
    uint32_t obj[4] = {};
    uint64_t val[4] = {};           // their components before the step
    uint64_t shared_delta = 0;      // what the step added to their components' sum
    uint64_t content_after = 0;
    uint64_t ops_added = 0;         // what it added to the agent's in-flight operations' hash
    // The agent's in-flight operations' hash before the step, when its steps may read them
    // (Predictor::AgentStepsReadOwnOps: a key too); else 0 and not compared.
    bool ops_keyed = false;
    uint64_t ops_before = 0;
    uint64_t marked = 0, objects = 0;  // Known's masks
  };
  static constexpr size_t kAgentMemo = size_t{1} << 14;
  struct FreeMemo {
    void operator()(AgentMemo* m) const { std::free(m); }
  };
  std::unique_ptr<AgentMemo[], FreeMemo> agent_memo_;
  static size_t MemoIndex(uint32_t a, uint64_t content) {
    return static_cast<size_t>(((content ^ (uint64_t{a} << 48)) * 0x9e3779b97f4a7c15ull) >> 50);
  }
  // Records agent a's step from `before` (a clean fingerprint cache) to `after` (stepped with
  // `touched`, FingerprintSum() taken), whose Known k is valid, when it is a function of what
  // it touched (AgentMemo).
  void MemoStore(const Engine& before, const Engine& after, uint32_t a,
                 const engine::Footprint& touched, const Known& k) {
    const Predictor pb(before), pa(after);
    if (pa.StepScanned()) return;
    const uint32_t first = before.GroupsObject(0);
    const uint32_t self = before.GroupsObject(a);
    AgentMemo m;
    for (uint32_t i = 0; i < touched.n; ++i) {
      const uint32_t o = touched.objects[i];
      if (o >= first) {
        if (o != self) return;  // another agent's state read
        continue;
      }
      if (std::find(m.obj, m.obj + m.n, o) != m.obj + m.n) continue;
      if (m.n == 4) return;
      m.obj[m.n] = o;
      m.val[m.n++] = pb.FpCachedObject(o);
    }
    const uint32_t* marked = nullptr;
    uint32_t nm = 0;
    if (!pa.StepMarks(&marked, &nm)) return;
    for (uint32_t i = 0; i < nm; ++i) {
      const uint32_t o = marked[i];
      if (o == self) continue;
      if (o >= first || std::find(m.obj, m.obj + m.n, o) == m.obj + m.n) return;
      m.shared_delta += pa.FpCachedObject(o) - pb.FpCachedObject(o);
    }
    m.agent1 = a + 1;
    m.content = pb.FpCachedObject(self);
    m.content_after = pa.FpCachedObject(self);
    m.ops_added = pa.FpCachedOps(a) - pb.FpCachedOps(a);
    m.ops_keyed = pb.AgentStepsReadOwnOps(a);
    if (m.ops_keyed) m.ops_before = pb.FpCachedOps(a);
    m.marked = k.marked;
    m.objects = k.objects;
    agent_memo_[MemoIndex(a, m.content)] = m;
  }
  // What agent a's step from g (a clean fingerprint cache) does, when the memo knows.
  bool MemoFind(const Engine& g, uint32_t a, Known* k) const {
    const Predictor pg(g);
    const uint64_t content = pg.FpCachedObject(g.GroupsObject(a));
    const AgentMemo& m = agent_memo_[MemoIndex(a, content)];
    if (m.agent1 != a + 1 || m.content != content) return false;
    if (m.ops_keyed && pg.FpCachedOps(a) != m.ops_before) return false;
    for (uint32_t i = 0; i < m.n; ++i) {
      if (pg.FpCachedObject(m.obj[i]) != m.val[i]) return false;
    }
    k->delta = m.shared_delta +
               Predictor::FpAgentComponent(a, m.content_after, pg.FpCachedOps(a) + m.ops_added) -
               pg.FpCachedAgent(a);
    k->marked = m.marked;
    k->objects = m.objects;
    k->valid = true;
    return true;
  }

  // Depth-first: memory is the fingerprint table plus one engine per level of the current path.
  // While the visited table is small (below options_.batch_table_bytes) a state's
  // successors are made one at a time when the search comes to them: the next level's engine is
  // made the state (a copy for the first successor, then Engine::RestoreStep undoing the
  // previous successor's step), stepped, looked up, and descended into when new (a "lazy"
  // frame). Once it is large, a state's successors are generated together when it is expanded
  // (a "batched" frame): each taken step is applied to the next level's engine (a copy of the
  // state, made once, when a step is first needed), fingerprinted and undone
  // (Engine::RestoreStep copies back only what the step changed), prefetching the fingerprint's
  // table line; then the fingerprints are inserted (their cache misses overlap) and only the new
  // running successors are kept, as (record, step) pairs. The engine is left holding the last
  // successor stepped (Frame::held); descending into a successor takes it as it is when it is
  // that one, else undoes the held step and steps it. The last successor of a frame that the
  // engine below does not hold takes the frame's own engine instead, stepped (the frame's state
  // is not needed again): no copy. With successor prediction, a new successor whose fingerprint
  // was predicted is not stepped at all until the search descends into it. A batched frame
  // marks its successors visited when it is expanded, a lazy one when it comes to them; the
  // stored states are the same (the persistent sets depend only on the state).
  void Dfs(Engine root) {
    static constexpr size_t kNoStep = ~size_t{0};
    static constexpr size_t kNothing = ~size_t{0} - 1;
    struct Frame {
      explicit Frame(std::unique_ptr<Engine> e) : eng(std::move(e)) {}
      // The frame's engine, by pointer: the last successor takes it over by a swap.
      std::unique_ptr<Engine> eng;
      Engine& engine() { return *eng; }
      const Engine& engine() const { return *eng; }
      uint32_t id = 0;
      bool batched = false;
      // Lazy: the engine of the level below holds a successor of this frame's state, one step
      // from it (RestoreStep brings it back instead of a copy).
      bool below_ok = false;
      // The engine holds this frame's state (false once its last successor took it over).
      bool holds_state = true;
      size_t next = 0;
      // Batched: the engine of the level below holds this state and then this step (kNothing:
      // no state of this frame, it is made a copy when first needed; kNoStep, only inside the
      // expansion between an undo and the next step: this state). Set by the expansion (the
      // last successor it stepped) and by each descent.
      size_t held = kNoStep;
      // Lazy: the enabled steps and the ones to take.
      std::vector<Choice> choices;
      std::vector<uint8_t> take;
      // Batched: the new running successors.
      struct Kid {
        uint32_t id;  // its record
        uint64_t fp;
        uint32_t at;  // its step: choices[at]
      };
      std::vector<Kid> kids;
      // Successor prediction: the state's FingerprintSum, and per enabled step what it does
      // (known) and its successor's fingerprint when that is known without stepping (pred; 0:
      // not known).
      uint64_t sum = 0;
      std::vector<Known> known;
      std::vector<uint64_t> pred;
    };
    struct Succ {  // of the step choices[i] of the frame being expanded, at succ[i]
      uint64_t fp = 0;
      bool ended = false;
      bool seen = false;  // predicted to be a stored state (not stepped)
      bool used = false;  // a step taken (else not in the persistent set)
    };
    // Not with assertions: a successor's state is predicted from the step's marks, and an
    // assert's reads mark objects without changing them (the prediction is not checked there).
    const bool predict = options_.predict_successors && !options_.reduction && !sym_.visited &&
                         !ir::HasAssertions(program_) &&
                         std::none_of(program_.roles.begin(), program_.roles.end(),
                                      [](const ir::Role& r) { return HasReadback(r.body); });
    engine::Footprint touched;
    if (predict) {
      agent_memo_.reset(static_cast<AgentMemo*>(std::calloc(kAgentMemo, sizeof(AgentMemo))));
      PARITY_CHECK(agent_memo_ != nullptr, "explore: out of memory for the agent-step memo");
    }
    // Frames at fixed addresses (pushing keeps references to lower frames valid), indexed
    // without a deque's arithmetic.
    std::vector<std::unique_ptr<Frame>> frames;
    auto stack = [&](size_t i) -> Frame& { return *frames[i]; };
    std::vector<Succ> succ;
    size_t depth = 0;
    // The engine of the level below f (at `depth`), made a copy of f's state.
    auto copy_below = [&](const Frame& f) -> Engine& {
      if (depth == frames.size()) {
        frames.push_back(std::make_unique<Frame>(std::make_unique<Engine>(f.engine())));
      } else {
        stack(depth).engine() = f.engine();
      }
      return stack(depth).engine();
    };
    // The part of carry that frame g takes over from its parent p (g is p's state after p's step
    // `at`).
    auto carry_from = [&](Frame& g, const Frame& p, size_t at) {
      const size_t n = g.choices.size();
      const Known& t = p.known[at];
      if (!t.valid) return;
      // The same step at the parent, found by position (Engine::Choices: the ready agents by
      // index, then the in-flight operations in their order). A delivery moves the last
      // operation into its place (Deliver); steps append operations, never remove others.
      const size_t np = p.choices.size();
      size_t pa = 0;  // the parent's agent choices
      while (pa < np && p.choices[pa].kind == Choice::Kind::kAgent) ++pa;
      const size_t ops = np - pa;
      const Choice tc = p.choices[at];
      size_t q = 0;
      for (size_t j = 0; j < n; ++j) {
        const Choice c = g.choices[j];
        size_t k = np;
        if (c.kind == Choice::Kind::kAgent) {
          while (q < pa && p.choices[q].index < c.index) ++q;
          if (q < pa && p.choices[q].index == c.index) k = q;
        } else {
          size_t y = c.index;  // its index at the parent, when it was in flight there
          if (tc.kind == Choice::Kind::kAsync && y == tc.index) {
            y = tc.index + 1 < ops ? ops - 1 : ops;
          } else if (tc.kind == Choice::Kind::kAsync && y + 1 >= ops) {
            y = ops;
          }
          if (y < ops) {
            k = pa + y;
            assert(!p.holds_state ||
                   p.engine().in_flight_ops()[y] == g.engine().in_flight_ops()[c.index]);
          }
        }
        if (k == np || k == at || !p.known[k].valid || p.known[k].Meets(t)) continue;
        g.known[j] = p.known[k];
        g.pred[j] = Predictor::FinishFingerprint(g.sum + g.known[j].delta, Outcome::kRunning);
        // Its table line is on its way while the other successors are stepped.
        seen_.Prefetch(g.pred[j]);
      }
    };
    // Before descending into p's successor by step `at`: starts loading the table lines of the
    // successors carry_from will predict there (p's steps that commute with it, from p's sum
    // and their differences), so that they arrive while the successor is stepped.
    auto prefetch_carried = [&](const Frame& p, size_t at) {
      const Known& t = p.known[at];
      if (!t.valid) return;
      const uint64_t base = p.sum + t.delta;
      for (size_t k = 0; k < p.known.size(); ++k) {
        const Known& u = p.known[k];
        if (k == at || !u.valid || u.Meets(t)) continue;
        seen_.Prefetch(Predictor::FinishFingerprint(base + u.delta, Outcome::kRunning));
      }
    };
    // Successor prediction: what frame g (reached from the frame below it by its step `at`)
    // knows of its steps from that frame.
    auto carry = [&](Frame& g, size_t at, uint64_t sum) {
      const size_t n = g.choices.size();
      g.sum = sum;
      g.known.assign(n, Known{});
      g.pred.assign(n, 0);
      if (depth >= 2) carry_from(g, stack(depth - 2), at);
      // Deliveries that the engine fingerprints without stepping (Predictor::PeekDeliveryDelta:
      // byte deliveries): they change an mbarrier slot, their issuer's in-flight operations
      // and the status of the agents a completed phase wakes, which is what the step would
      // mark.
      const std::vector<engine::Engine::InFlight>& ops = g.engine().in_flight_ops();
      uint32_t woken[Predictor::kPeekWokenMax];
      uint32_t n_woken = 0;
      for (size_t j = n; j-- > 0 && g.choices[j].kind == Choice::Kind::kAsync;) {
        if (g.pred[j] != 0) continue;
        Known& k = g.known[j];
        if (!Predictor(g.engine())
                 .PeekDeliveryDelta(g.choices[j].index, &k.delta, woken, &n_woken)) {
          continue;
        }
        const engine::Engine::InFlight& op = ops[g.choices[j].index];
        k.marked = ObjectBit(op.slot) | ObjectBit(g.engine().GroupsObject(op.agent));
        for (uint32_t x = 0; x < n_woken; ++x) {
          k.marked |= ObjectBit(g.engine().GroupsObject(woken[x]));
        }
        k.objects = k.marked;
        k.valid = true;
        g.pred[j] = Predictor::FinishFingerprint(g.sum + k.delta, Outcome::kRunning);
        seen_.Prefetch(g.pred[j]);
      }
      // Agent steps the memo knows (AgentMemo). Their successors are running where another
      // step is enabled and the step limit is not reached (see defer_new in push).
      if (n < 2 || g.engine().result().steps + 1 >= g.engine().options().max_steps) return;
      for (size_t j = 0; j < n && g.choices[j].kind == Choice::Kind::kAgent; ++j) {
        if (g.pred[j] != 0 || !MemoFind(g.engine(), g.choices[j].index, &g.known[j])) continue;
        g.pred[j] = Predictor::FinishFingerprint(g.sum + g.known[j].delta, Outcome::kRunning);
        seen_.Prefetch(g.pred[j]);
        ++res_.stats.memo_hits;
      }
    };
    // The VisitedFp of a state the search descends into, and when predicting its FingerprintSum
    // (the same hash, before FinishFingerprint) in *sum.
    auto descent_fp = [&](const Engine& e, uint64_t* sum) -> uint64_t {
      if (!predict) {
        *sum = 0;
        return VisitedFp(e);
      }
      return FingerprintAndSum(e, sum);
    };
    // Takes frame f's step i on e (a copy of f's state), learning what it does when predicting;
    // returns the successor's VisitedFp (with a clean fingerprint cache), and when predicting
    // its FingerprintSum in *sum.
    auto step_learn = [&](Frame& f, size_t i, Engine& e, uint64_t* sum) -> uint64_t {
      if (!predict) {
        e.Step(f.choices[i]);
        return VisitedFp(e);
      }
      touched.Clear();
      e.Step(f.choices[i], &touched);
      const uint64_t fp = Learn(f.known[i], e, touched, f.sum, sum);  // (VisitedFp: Fingerprint)
      if (f.known[i].valid && f.choices[i].kind == Choice::Kind::kAgent) {
        MemoStore(f.engine(), e, f.choices[i].index, touched, f.known[i]);
      }
      return fp;
    };
    // Counts frame f's step i, predicted to go to a stored state, as a transition. Builds with
    // assertions check every 8th such prediction by taking the step.
    auto count_predicted = [&](Frame& f, size_t i) {
#ifndef NDEBUG
      thread_local uint32_t calls = 0;
      if ((calls++ & 7) == 0 && Engine::SelfChecks()) {
        Engine e = f.engine();
        e.Step(f.choices[i]);
        // The step must not end the run either: the prediction hit a stored running state.
        PARITY_CHECK(e.outcome() == Outcome::kRunning && VisitedFp(e) == f.pred[i],
                     "explore: a successor's predicted fingerprint is wrong");
      }
#endif
      ++res_.stats.transitions;
      ++res_.stats.predicted;
    };
    // Whether frame f's step i goes to a stored state, known without stepping it (then counted).
    auto predicted_seen = [&](Frame& f, size_t i) {
      if (!predict || f.pred[i] == 0 || !seen_.Contains(f.pred[i])) return false;
      count_predicted(f, i);
      return true;
    };
    // Expands the frame at `depth` (its engine holds the state, fingerprinted) and makes it the
    // top; `at`: the index of the step that led to it in the frame below, and `sum` the state's
    // FingerprintSum when predicting (for carry: not computed again).
    auto push = [&](uint32_t id, size_t at, uint64_t sum) {
      Frame& f = stack(depth++);
      f.id = id;
      f.next = 0;
      f.below_ok = false;
      f.holds_state = true;
      f.held = kNothing;
      const size_t n = Expand(w0_, f.engine());
      res_.stats.enabled += n;
      res_.stats.pruned += n - w0_.selected;
      ++res_.stats.expanded;
      res_.stats.depth = std::max<uint32_t>(res_.stats.depth, static_cast<uint32_t>(depth));
      f.batched = seen_.bytes() >= options_.batch_table_bytes;
      f.choices.swap(w0_.choices);
      f.take.swap(w0_.take);
      if (predict) carry(f, at, sum);
      if (!f.batched) return;
      f.kids.clear();
      // The engine below, made a copy of f's state only when a step is taken (often every
      // successor is predicted and none is new: no copy).
      Engine* e = nullptr;
      // The successors in the order of the steps (as without prediction); the predicted ones
      // are looked up after the others are stepped, so that their table lines arrive meanwhile.
      succ.assign(f.choices.size(), Succ{});
      // e holds f's state, or f's state and then step f.held (undone only when e is needed
      // again: the search descends into the successor e holds without stepping it again), or
      // is null while f.held is kNothing (no step taken yet: no copy made).
      auto restore = [&] {
        if (f.held == kNothing) {
          e = &copy_below(f);
        } else if (f.held != kNoStep) {
          e->RestoreStep(f.engine());
        }
        f.held = kNoStep;
      };
      auto step = [&](size_t i) {
        restore();
        uint64_t sum;
        const uint64_t fp = step_learn(f, i, *e, &sum);
        seen_.Prefetch(fp);
        succ[i] = {fp, e->outcome() != Outcome::kRunning, false, true};
        f.held = i;
      };
      bool deferred = false;
      // Whether a predicted successor that is not stored yet is stored without stepping it
      // (its state is needed when the search descends into it, and only then is it stepped,
      // its fingerprint checked): it is known to be running. The run ends only where no agent
      // is ready and nothing is in flight (Exec::CheckEnd), or at the step limit; a step
      // leaves every other agent that is ready ready and every other operation in flight, so
      // with another step enabled it cannot end the run; and a step that commutes with the
      // one that led here cannot violate or fault where it did not (Learn records only
      // running successors). Collected barrier values need the state when it is stored.
      const bool defer_new = !options_.collect_barrier_states && f.choices.size() >= 2 &&
                             f.engine().result().steps + 1 < f.engine().options().max_steps;
      const size_t n_choices = f.choices.size();
      // Last to be stepped: the first successor that is not predicted (the first new
      // successor is often that one).
      for (size_t i = n_choices; i-- > 0;) {
        if (!f.take[i]) continue;
        if (predict && f.pred[i] != 0) {  // prefetched by carry
          deferred = true;
          continue;
        }
        step(i);
      }
      for (size_t i = 0; deferred && i < n_choices; ++i) {
        if (!f.take[i] || f.pred[i] == 0) continue;
        if (seen_.Contains(f.pred[i])) {
          succ[i] = {f.pred[i], false, true, true};
        } else if (defer_new) {
          // A new running state: stepped only when the search descends into it.
          succ[i] = {f.pred[i], false, false, true};
          ++res_.stats.predicted_new;
        } else {
          step(i);
        }
      }
      for (uint32_t at = 0; at < n_choices; ++at) {
        const Succ& s = succ[at];
        if (!s.used) continue;
        if (done_ || OutOfBounds()) return;
        if (s.seen) {
          count_predicted(f, at);
          continue;
        }
        const uint32_t kid = Insert(s.fp, id, f.choices[at]);
        if (kid == kRoot) continue;
        if (!s.ended && !options_.collect_barrier_states) {
          f.kids.push_back({kid, s.fp, at});
          continue;
        }
        if (f.held != at) {  // else e holds it
          restore();
          e->Step(f.choices[at]);
          f.held = at;
        }
        bool keep = false;
        Reached(*e, s.fp, kid, &keep);
        if (keep) f.kids.push_back({kid, s.fp, at});
      }
    };
    frames.push_back(std::make_unique<Frame>(std::make_unique<Engine>(std::move(root))));
    push(0, 0, predict ? Predictor(stack(0).engine()).FingerprintSum() : 0);
    while (depth != 0 && !done_ && !stopped_) {
      Frame& f = stack(depth - 1);
      if (!f.batched) {
        if (f.next == f.choices.size()) {
          --depth;
          continue;
        }
        const size_t i = f.next++;
        if (!f.take[i]) continue;
        if (OutOfBounds()) break;
        if (predicted_seen(f, i)) continue;
        // The previous successor's engine (or the state of its subtree's root: the subtree
        // used the engines below it) is brought back to f's state: cheaper than a copy.
        Engine& child = f.below_ok ? stack(depth).engine() : copy_below(f);
        if (f.below_ok) child.RestoreStep(f.engine());
        f.below_ok = true;
        uint64_t sum = 0;
        const uint64_t fp = step_learn(f, i, child, &sum);
        bool keep = false;
        const uint32_t id = Visit(child, fp, f.id, f.choices[i], &keep);
        if (keep) push(id, i, sum);
        continue;
      }
      if (f.next == f.kids.size()) {
        --depth;
        continue;
      }
      const Frame::Kid kid = f.kids[f.next++];
      if (predict) prefetch_carried(f, kid.at);
      if (f.next == f.kids.size() && f.held != kid.at) {
        // f's last successor, not held below: f's state is needed no more, so f's own engine
        // is stepped and handed to the successor's frame (no copy of the state), and the
        // engine below f takes its place. The frame below f (f's parent) no longer has f's
        // state in the engine above it.
        f.engine().Step(f.choices[kid.at]);
        if (depth == frames.size()) {
          frames.push_back(std::make_unique<Frame>(std::move(f.eng)));
          // (A placeholder: any engine of the program will do.)
          f.eng = std::make_unique<Engine>(stack(depth).engine());
        } else {
          std::swap(f.eng, stack(depth).eng);
        }
        f.holds_state = false;
        f.held = kNothing;
        if (depth >= 2) {
          stack(depth - 2).held = kNothing;
          stack(depth - 2).below_ok = false;
        }
      } else {
        // The engine below holds f's state, or f's state and then step f.held (the subtrees
        // below used the engines below it), or none of f's states yet.
        Engine& below = f.held == kNothing ? copy_below(f) : stack(depth).engine();
        if (f.held != kid.at) {
          if (f.held != kNoStep && f.held != kNothing) below.RestoreStep(f.engine());
          below.Step(f.choices[kid.at]);
          f.held = kid.at;
        }
      }
      // Also leaves the child's fingerprint cache clean, which RestoreStep needs. A successor
      // stored by its predicted fingerprint is checked here, at its first step.
      const Engine& child = stack(depth).engine();
      uint64_t sum;
      const uint64_t fp = descent_fp(child, &sum);
      PARITY_CHECK(fp == kid.fp && child.outcome() == Outcome::kRunning,
                   "explore: a stored successor is not the state its step leads to");
      push(kid.id, kid.at, sum);
    }
    res_.stats.peak_frontier = res_.stats.depth;  // engines on the deepest path
  }

  const ir::Program& program_;
  const std::vector<int64_t>& params_;
  const ExploreOptions& options_;
  const bool has_exists_ = HasExists(program_);
  const bool bfs_;
  Clock::time_point t0_;
  ExploreResult res_;
  FingerprintSet seen_;
  std::vector<Record> records_;
  Worker w0_;  // the sequential searches' expansion state
  SearchSymmetry sym_;  // SymmetryForSearch
  bool found_ = false, stopped_ = false, done_ = false;
};

// The depth-first search's finding in *r: reports it (ExploreOptions::on_first_counterexample),
// then shortens it (verifier/counterexample.h) within the budget, or with
// shortest_counterexample by a breadth-first search bounded only by the time limit. Every path
// put into r is replayed first and must reproduce its finding.
void ImproveCounterexample(const ir::Program& program, const std::vector<int64_t>& params,
                           const ExploreOptions& options,
                           std::chrono::steady_clock::time_point t0, ExploreResult* r) {
  using Clock = std::chrono::steady_clock;
  const bool rules = r->verdict == ExploreVerdict::kRuleViolation;
  // The one replay of the first counterexample: it validates the path, and the first report
  // (on_first_counterexample) and, unless the path is shortened, the final one read it.
  Expected<ReplayedPath> first = ReplayPath(program, params, r->counterexample);
  PARITY_CHECK(first.ok(), "explore: the counterexample replays");
  const std::optional<FindingKey> key = FindingOf(program, *first->end, rules);
  PARITY_CHECK(key.has_value(), "explore: the counterexample does not reproduce its finding");
  r->replayed = std::move(first).value();
  r->first_counterexample = r->counterexample;
  r->first_seconds = r->stats.seconds;
  r->counterexample_shortest = false;
  if (options.on_first_counterexample) options.on_first_counterexample(*r);
  const size_t first_len = r->counterexample.size();
  // The whole run's deadline (time_limit_s), and the shortening's.
  Clock::time_point limit = Clock::time_point::max();
  if (options.time_limit_s > 0) {
    limit = t0 + std::chrono::duration_cast<Clock::duration>(
                     std::chrono::duration<double>(options.time_limit_s));
  }
  Clock::time_point deadline = limit;
  if (!options.shortest_counterexample) {
    if (options.shorten_budget_s <= 0) {
      r->shortening = "the depth-first search's path, not shortened";
      return;
    }
    deadline = std::min(limit, Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                                  std::chrono::duration<double>(
                                                      options.shorten_budget_s)));
  }
  // Removal gets at most half of the budget: the breadth-first search bounded by its result
  // is what can show that the result is a shortest one.
  const Clock::time_point now = Clock::now();
  const Clock::time_point removal_deadline =
      deadline == Clock::time_point::max() ? now + std::chrono::seconds(10)
                                           : now + (deadline - now) / 2;
  const Shortened cut =
      ShortenByRemoval(program, params, r->counterexample, *key, rules, removal_deadline);
  if (cut.path.size() < first_len) {
    r->counterexample = cut.path;
    Expected<ReplayedPath> e = ReplayPath(program, params, r->counterexample);
    PARITY_CHECK(e.ok(), "explore: the shortened counterexample replays");
    r->replayed = std::move(e).value();
    if (rules) {  // the findings name events of the trace: those of the new path's replay
      r->findings = CheckRules(program, *r->replayed.end, r->replayed.end->trace());
    }
  }
  // Which budget bounds the shortening: --shorten-budget, unless --time-limit ends the whole
  // run first (or --shortest: only --time-limit). The stop reason names it, never the other.
  const bool shorten_budget_bounds = deadline < limit;
  char budget_text[96];
  std::snprintf(budget_text, sizeof budget_text, "the shortening budget (--shorten-budget %g s)",
                options.shorten_budget_s);
  const std::string budget = shorten_budget_bounds ? std::string(budget_text)
                                                   : std::string("the run's --time-limit");
  const size_t dropped = first_len - cut.path.size();
  std::string how = std::to_string(dropped) + (dropped == 1 ? " step" : " steps") +
                    " dropped by replaying without them (" + std::to_string(cut.replays) +
                    " replays" +
                    (cut.budget_spent ? ", stopped by its half of " + budget : std::string()) +
                    ")";
  if (r->counterexample.size() <= 1) {
    r->counterexample_shortest = true;
    r->shortening = how + "; a single step is shortest";
    return;
  }
  // A breadth-first search (same reduction) for a finding at most one step shorter.
  const double left = std::chrono::duration<double>(deadline - Clock::now()).count();
  if (deadline != Clock::time_point::max() && left <= 0.001) {
    r->shortening = how + "; " + budget + " left no time for the breadth-first search";
    return;
  }
  ExploreOptions bo = options;
  bo.stop_at_first = true;
  bo.collect_terminals = false;
  bo.collect_barrier_states = false;
  bo.on_first_counterexample = nullptr;
  bo.max_depth = static_cast<uint32_t>(r->counterexample.size() - 1);
  bo.time_limit_s = deadline == Clock::time_point::max() ? 0 : left;
  ExploreResult b = Search(program, params, bo, true).Run();
  r->has_bfs_stats = true;
  r->bfs_stats = b.stats;
  if (b.verdict == ExploreVerdict::kViolation || b.verdict == ExploreVerdict::kDeadlock ||
      b.verdict == ExploreVerdict::kRuleViolation) {
    const bool b_rules = b.verdict == ExploreVerdict::kRuleViolation;
    Expected<ReplayedPath> e = ReplayPath(program, params, b.counterexample);
    PARITY_CHECK(e.ok() && FindingOf(program, *e->end, b_rules).has_value(),
                 "explore: the breadth-first counterexample does not reproduce its finding");
    r->replayed = std::move(e).value();
    r->verdict = b.verdict;
    r->counterexample = std::move(b.counterexample);
    r->findings = std::move(b.findings);
    r->counterexample_shortest = true;
    r->shortening = how + "; a breadth-first search found a shorter one (shortest in the "
                          "explored graph)";
  } else if (b.verdict == ExploreVerdict::kIncomplete &&
             b.bound.rfind("--max-depth", 0) == 0) {
    r->counterexample_shortest = true;
    r->shortening = how + "; a breadth-first search found nothing shorter (shortest in the "
                          "explored graph)";
  } else {
    // Its time limit is what the shortening had left: a time bound is that budget's.
    const std::string stopper = b.bound == "--time-limit" ? budget
                                : b.bound.empty()         ? std::string("a bound")
                                                          : b.bound;
    r->shortening = how + "; " + stopper +
                    " stopped the breadth-first search for a shorter one (at depth " +
                    std::to_string(b.stats.depth) + " of " +
                    std::to_string(r->counterexample.size() - 1) + ")";
  }
}

}  // namespace

namespace {

// A search that found no violation, deadlock or rule violation checked the rules on one path
// per completed end state: the rules and races on every path (verifier/every_path.h) decide
// whether it is VERIFIED.
void CheckEveryPath(const ir::Program& program, const std::vector<int64_t>& params,
                    const ExploreOptions& options, ExploreResult& r) {
  if (!options.check_rules || r.verdict != ExploreVerdict::kVerified) return;
  double seconds = 0;
  if (options.time_limit_s > 0) {
    seconds = options.time_limit_s - r.stats.seconds;
    if (seconds <= 0) seconds = 1e-9;
  }
  const EveryPathResult e = CheckRulesOnEveryPath(program, params, options, seconds);
  r.warnings = e.warnings;
  r.stats.history_states = e.states;
  r.stats.history_completed = e.completed_pairs;
  if (e.found) {
    r.verdict = ExploreVerdict::kRuleViolation;
    r.counterexample = e.path;
    r.findings = e.findings;
    r.counterexample_shortest = false;
  } else if (!e.complete) {
    r.verdict = ExploreVerdict::kIncomplete;
    r.bound = e.bound;
  }
}

// `exists` properties (ir::Assertion): a complete search with no other finding has reached
// every completed end state (a persistent-set search keeps every terminal state reachable, and
// the search keeps every state that differs in what a property reads: symmetry reduction is
// off for programs with assertions), so a property that held in none of them holds in no
// complete run. An incomplete search says nothing about it.
void JudgeExists(const ir::Program& program, ExploreResult& r) {
  if (r.verdict != ExploreVerdict::kVerified) return;
  std::vector<Finding> missing = ExistsFindings(program, r.exists_held, false);
  if (missing.empty()) return;
  r.verdict = ExploreVerdict::kRuleViolation;
  r.findings = std::move(missing);
  r.counterexample.clear();
  r.counterexample_shortest = true;
}

}  // namespace

namespace {

// A search that found something: its counterexample replayed (once: the shortening's replay
// when there was one), and re-run in pieces where the copies' bytes may be credited so.
void FinishCounterexample(const ir::Program& program, const std::vector<int64_t>& params,
                          ExploreResult& r) {
  if (r.verdict != ExploreVerdict::kViolation && r.verdict != ExploreVerdict::kDeadlock &&
      r.verdict != ExploreVerdict::kRuleViolation) {
    return;
  }
  if (r.replayed.end == nullptr) {
    Expected<ReplayedPath> e = ReplayPath(program, params, r.counterexample);
    PARITY_CHECK(e.ok(), "explore: the counterexample replays");
    r.replayed = std::move(e).value();
  }
  if (r.replayed.end->result().tx_pieces_differ) {
    r.in_pieces = RunInPieces(program, params, {}, r.counterexample);
  }
}

}  // namespace

ExploreResult Explore(const ir::Program& program, const std::vector<int64_t>& params,
                      const ExploreOptions& options) {
  // Breadth-first (on one or several threads): it finds the shortest counterexample itself.
  if (options.breadth_first) {
    ExploreResult r = Search(program, params, options, true).Run();
    CheckEveryPath(program, params, options, r);
    JudgeExists(program, r);
    FinishCounterexample(program, params, r);
    return r;
  }
  const auto t0 = std::chrono::steady_clock::now();
  ExploreResult r = options.threads > 1 ? ParallelDepthFirst(program, params, options)
                                        : Search(program, params, options, false).Run();
  CheckEveryPath(program, params, options, r);
  if (r.verdict != ExploreVerdict::kViolation && r.verdict != ExploreVerdict::kDeadlock &&
      r.verdict != ExploreVerdict::kRuleViolation) {
    JudgeExists(program, r);
    FinishCounterexample(program, params, r);  // an exists that held nowhere: the empty path
    return r;
  }
  ImproveCounterexample(program, params, options, t0, &r);
  FinishCounterexample(program, params, r);
  return r;
}

std::vector<SlotBalance> AnalyseBalance(const engine::Engine& state) {
  Engine e = state;
  Reducer r(e, /*guarded_waits=*/true);
  return r.Report(e);
}

Expected<ReplayedPath> ReplayPath(const ir::Program& program, const std::vector<int64_t>& params,
                                  const std::vector<engine::Choice>& choices) {
  engine::EngineOptions eo;
  eo.record_trace = true;
  Expected<Engine> created = Engine::Create(program, params, eo);
  if (!created.ok()) return created.status();
  auto e = std::make_shared<Engine>(std::move(created).value());
  ReplayedPath out;
  out.steps.reserve(choices.size());
  std::vector<Choice> now;
  for (const Choice& c : choices) {
    e->Choices(&now);
    PARITY_CHECK(std::find(now.begin(), now.end(), c) != now.end(),
                 "ReplayPath: the step is not enabled (the engine is not deterministic?)");
    ReplayedStep step;
    step.asynchronous = c.kind == Choice::Kind::kAsync;
    step.agent = step.asynchronous ? e->in_flight_ops()[c.index].agent : c.index;
    step.first_event = e->trace().size();
    e->Step(c);
    step.end_event = e->trace().size();
    out.steps.push_back(step);
  }
  out.end = std::move(e);
  return out;
}

PieceRun RunInPieces(const ir::Program& program, const std::vector<int64_t>& params,
                     engine::EngineOptions options, const std::vector<engine::Choice>& prefix) {
  options.tx_pieces = true;
  options.record_trace = true;
  PieceRun out;
  Expected<Engine> created = Engine::Create(program, params, options);
  if (!created.ok()) return out;
  auto e = std::make_shared<Engine>(std::move(created).value());
  auto landed_piece = [&e] {
    const std::vector<trace::TraceEvent>& t = e->trace();
    return std::any_of(t.begin(), t.end(), [](const trace::TraceEvent& ev) {
      return (ev.flags & trace::kFlagPiece) != 0;
    });
  };
  std::vector<Choice> enabled;
  for (const Choice& c : prefix) {
    if (e->outcome() != Outcome::kRunning || landed_piece()) break;
    e->Choices(&enabled);
    if (std::find(enabled.begin(), enabled.end(), c) == enabled.end()) break;
    e->Step(c);
  }
  if (e->outcome() == Outcome::kRunning) e->Run();
  if (e->result().outcome == Outcome::kError) return out;
  for (Finding& f : CheckRules(program, *e, e->trace())) {
    if (f.code() != model::Code::kEarlyPhaseCompletion) continue;
    f.message = "when the copy's bytes are credited in pieces, as Hopper may credit them: " +
                f.message;
    out.early.push_back(std::move(f));
  }
  out.end = std::move(e);
  return out;
}

Expected<engine::Engine> Replay(const ir::Program& program, const std::vector<int64_t>& params,
                                const std::vector<engine::Choice>& choices) {
  engine::EngineOptions eo;
  eo.record_trace = true;
  Expected<Engine> e = Engine::Create(program, params, eo);
  if (!e.ok()) return e.status();
  std::vector<Choice> now;
  for (const Choice& c : choices) {
    e->Choices(&now);
    PARITY_CHECK(std::find(now.begin(), now.end(), c) != now.end(),
                 "Replay: the step is not enabled (the engine is not deterministic?)");
    e->Step(c);
  }
  return e;
}

}  // namespace parity::verifier
