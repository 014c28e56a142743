#include "verifier/every_path.h"

#include <algorithm>
#include <atomic>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <tuple>
#include <utility>

#include "verifier/concurrent_fingerprint_set.h"
#include "verifier/expand.h"
#include "verifier/explore/common.h"
#include "verifier/explore/stacks.h"
#include "verifier/fingerprint_set.h"
#include "verifier/races.h"
#include "verifier/symmetry.h"
#include "verifier/work_pool.h"

namespace parity::verifier {
namespace {

using engine::Choice;
using engine::Engine;
using engine::Footprint;
using engine::Outcome;
namespace fpmix = engine::fpmix;

constexpr uint8_t kBlocked = 1;  // Engine::AgentState::status

// A pair's history digest (the engine holds its state).
struct History {
  std::vector<uint64_t> digest;      // per agent: its synchronising steps, in order
  std::vector<uint64_t> last_word;   // per agent: the last word its digest took
  std::vector<uint64_t> deliveries;  // per agent: a commutative sum over its landed operations
};

// A level of a thread's depth-first path.
struct Frame {
  explicit Frame(const Engine& e) : engine(e) {}
  Engine engine;
  History h;
  std::vector<Choice> choices;  // the persistent set's steps to take from it
  size_t next = 0;
  Choice via{};  // the step from the frame below
};

uint64_t PhaseOf(const Engine& e, uint32_t o) {
  return o < e.num_barrier_slots() ? e.slot_state(o).phase : 0;
}

// The digest word of agent a's step from `before` that touched `fp` (measured): its pc and the
// phase before the step of every mbarrier slot it touched; 0 when it touched none (its
// synchronisation, if any, is on a cluster barrier, a named barrier (NamedJoinWord) or its own
// async groups, whose edges the digest does not need: see every_path.h).
uint64_t AgentWord(const Engine& before, uint32_t a, const Footprint& fp) {
  uint64_t h = fpmix::Word(0x6a09e667f3bcc908ull, before.agent_state(a).pc);
  bool any = false;
  if (fp.overflow) {
    for (uint32_t o = 0; o < before.num_barrier_slots(); ++o) h = fpmix::Word(h, PhaseOf(before, o));
    return fpmix::Final(h);
  }
  for (uint32_t i = 0; i < fp.n; ++i) {
    const uint32_t o = fp.objects[i];
    if (o >= before.num_barrier_slots()) continue;
    any = true;
    h = fpmix::Word(fpmix::Word(h, o), PhaseOf(before, o));
  }
  return any ? fpmix::Final(h) : 0;
}

// The word of agent a's step from `before` to `after` when it joined an instance of a named
// barrier of its CTA (bar.sync / bar.arrive, whether it blocked, completed the instance or went
// on): its pc, the barrier id and the generation it joined, which names the instance. When more
// agents than the count use one id, which instance an arrival joins depends on the path, and so
// does happens-before (every arrival of an instance happens before the bar.syncs it releases).
// 0 when the step joined none (a bar.sync resuming after its instance completed adds nothing:
// it joined at its arrival).
uint64_t NamedJoinWord(const Engine& before, const Engine& after, uint32_t a) {
  if (before.agent_state(a).wait != engine::WaitKind::kNone) return 0;
  const uint32_t cta = before.agent_info(a).cta_global;
  const model::NamedBarriers& x = before.named_barriers(cta);
  const model::NamedBarriers& y = after.named_barriers(cta);
  for (uint32_t id = 0; id < model::kNamedBarrierCount; ++id) {
    if (x.arrived(id) == y.arrived(id) && x.generation(id) == y.generation(id)) continue;
    const uint64_t h = fpmix::Word(0x510e527fade682d1ull, before.agent_state(a).pc);
    return fpmix::Final(fpmix::Word(h, (uint64_t{id} << 32) | x.generation(id)));
  }
  return 0;
}

// The digest term of the delivery of in-flight operation i of `before` (added to its issuer's
// sum, so the issuer is not part of it).
uint64_t DeliveryTerm(const Engine& before, uint32_t i) {
  const Engine::InFlight& f = before.in_flight_ops()[i];
  uint64_t h = 0xbb67ae8584caa73bull;
  h = fpmix::Word(h, (uint64_t{f.kind} << 56) | (uint64_t{f.flags} << 48) |
                         (uint64_t{f.object} << 32));
  h = fpmix::Word(h, (uint64_t{f.target_cta} << 32) | f.slot);
  h = fpmix::Word(h, (uint64_t{f.index} << 32) | f.bytes);
  h = fpmix::Word(h, (uint64_t{f.pc} << 32));
  h = fpmix::Word(h, f.id);
  switch (f.kind) {
    case Engine::InFlight::kTmaDeliver:
    case Engine::InFlight::kBulkDeliver:
    case Engine::InFlight::kStAsync:
    case Engine::InFlight::kCpAsyncArrive:
      h = fpmix::Word(h, PhaseOf(before, f.slot));
      break;
    default:
      break;
  }
  return fpmix::Final(h);
}

// The key of (state, digest). With symmetry classes (the explorer's, verifier/symmetry.h) it is
// the same for a state and digest and their image under a permutation of interchangeable
// agents: the symmetric fingerprint, and the multiset of each agent's (class, content, in-flight
// operations, digests), so that each agent's digest stays bound to its own state.
uint64_t PairKey(const Engine& e, const History& h, const std::vector<uint32_t>& classes) {
  const uint64_t state = classes.empty() ? e.Fingerprint() : e.SymmetricFingerprint(classes);
  uint64_t agents = 0;
  for (uint32_t a = 0; a < h.digest.size(); ++a) {
    const bool grouped = !classes.empty() && classes[a] != Engine::kNoGroup;
    uint64_t x = fpmix::Word(0x3c6ef372fe94f82bull,
                             grouped ? classes[a] : (uint64_t{1} << 40) | a);
    if (grouped) {
      const engine::Predictor p(e);
      x = fpmix::Word(fpmix::Word(x, p.FpCachedObject(e.GroupsObject(a))), p.FpCachedOps(a));
    }
    x = fpmix::Word(fpmix::Word(x, h.digest[a]), h.deliveries[a]);
    agents += fpmix::Final(x);
  }
  const uint64_t k = fpmix::Final(fpmix::Word(state, agents));
  return k == 0 ? 1 : k;
}

// Step c from frame f into g (whose engine is a copy of f's): the state and the digest.
void StepPair(const Frame& f, Choice c, Frame& g, Footprint& fp) {
  g.h = f.h;
  g.via = c;
  g.engine.Step(c, &fp);
  if (c.kind == Choice::Kind::kAgent) {
    const uint32_t a = c.index;
    // A step that only blocks observes nothing and changes nothing but the agent's status;
    // a step that repeats the agent's last word (a test_wait polling one phase again)
    // observes nothing new.
    // A named-barrier arrival (whether it blocks or not) adds the instance it joined.
    const uint64_t named = NamedJoinWord(f.engine, g.engine, a);
    const uint64_t word = named != 0 ? named
                          : g.engine.agent_state(a).status == kBlocked ? 0
                                                                       : AgentWord(f.engine, a, fp);
    if (word != 0 && word != g.h.last_word[a]) {
      g.h.digest[a] = fpmix::Word(g.h.digest[a], word);
      g.h.last_word[a] = word;
    }
  } else {
    g.h.deliveries[f.engine.in_flight_ops()[c.index].agent] += DeliveryTerm(f.engine, c.index);
  }
}

// Work handed from one thread to another (verifier/work_pool.h): a stored running pair (its
// state packed against the initial state; the path to it, for the rules' replay) and the
// steps of its persistent set still to take. Pack and Unpack keep the in-flight operations in
// their order, so the steps name the same choices on the receiver's engine.
struct Item {
  bool initial = false;  // the initial state, not expanded yet (no bytes, no steps)
  std::vector<uint8_t> bytes;
  History h;
  std::vector<Choice> path;
  std::vector<Choice> steps;
};

// The search of every_path.h on options.threads threads (one: the calling thread alone). Each
// thread searches depth-first on a stack of its own, as the explorer's parallel search does
// (verifier/parallel_dfs.h): one shared set of pair keys (a key is claimed by exactly one
// thread, which expands the pair or hands it over), stack splitting through a WorkPool. The
// argument of every_path.h uses no order of expansion: (1) needs only that every stored
// running pair is expanded with the persistent set of its state and (4) that one path to each
// stored completed pair is checked, whichever thread reached it first; so the findings and
// race pairs of a complete search are the same sets on any number of threads (the tests
// compare them). What depends on timing: which finding is reported first (stopping at it), its
// path, the number of pairs (as parallel_dfs.h says of states: the engine that represents a
// pair, hence its persistent set, is the first path's) and how far a bound let it get.
class EveryPathSearch {
 public:
  EveryPathSearch(const ir::Program& program, const std::vector<int64_t>& params,
                  const ExploreOptions& options, double seconds, bool collect_all)
      : program_(program),
        params_(params),
        options_(options),
        budget_(options, explore::Clock::now(), seconds),
        collect_all_(collect_all),
        threads_(static_cast<size_t>(std::max(1, options.threads))),
        pool_(threads_) {}

  EveryPathResult Run() {
    engine::EngineOptions eo;
    eo.record_trace = false;
    Expected<Engine> created = Engine::Create(program_, params_, eo);
    if (!created.ok()) return res_;  // the explorer reports bad input
    if (created->outcome() != Outcome::kRunning) return res_;
    base_ = std::make_unique<Engine>(std::move(created).value());
    if (options_.symmetry && options_.reduction) {
      std::string why;
      classes_ = SymmetryClasses(program_, params_, *base_, &why);
    }
    if (threads_ > 1) many_ = std::make_unique<ConcurrentFingerprintSet>();
    Item root;
    root.initial = true;
    const uint32_t n = base_->num_agents();
    root.h.digest.assign(n, 0);
    root.h.last_word.assign(n, 0);
    root.h.deliveries.assign(n, 0);
    // (Before the workers copy it: their copies keep its fingerprint cache.)
    Insert(PairKey(*base_, root.h, classes_));
    for (size_t t = 0; t < threads_; ++t) {
      workers_.push_back(std::make_unique<Worker>(*base_, options_, threads_ > 1));
    }
    Count(*workers_[0]);
    pool_.Give(std::move(root));
    explore::OnThreads(threads_, [this](size_t t) { RunThread(t); });
    res_.states = States();
    for (const auto& k : workers_) res_.completed_pairs += k->completed;
    res_.handovers = pool_.given() - 1;  // (the initial state's item is no hand-over)
    return std::move(res_);
  }

 private:
  // One thread's stack (explore::Stack; its engine: its own program copy when several threads
  // step states) and what it counts.
  struct Worker : explore::Stack<Frame> {
    Worker(const Engine& base, const ExploreOptions& o, bool isolate)
        : explore::Stack<Frame>(isolate ? base.IsolatedCopy() : base) {
      w.reducer = reduction::MakeReducer(base, o);
    }
    reduction::ExpandWorker w;
    std::vector<Choice> prefix;  // the path to frames[0]'s pair
    Footprint fp;
    // Pairs this thread stored (written by it only; read by the others' --max-states check),
    // and what is left of its block of the shared count (claimed_).
    std::atomic<uint64_t> states{0};
    uint64_t unclaimed = 0;
    uint64_t steps = 0;
    uint64_t completed = 0;
    char pad[64];  // the counters are written on every step by their own thread only
  };

  bool Insert(uint64_t key) { return many_ ? many_->Insert(key) : one_.Insert(key); }

  // Counts a stored pair. The shared count (claimed_) moves in blocks, so that the threads do
  // not write one counter per pair; it bounds the pairs stored from above.
  static constexpr uint64_t kBlock = 256;
  void Count(Worker& k) {
    if (k.unclaimed == 0) {
      claimed_.fetch_add(kBlock, std::memory_order_relaxed);
      k.unclaimed = kBlock;
    }
    --k.unclaimed;
    k.states.store(k.states.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  }
  uint64_t States() const {
    uint64_t n = 0;
    for (const auto& k : workers_) n += k->states.load(std::memory_order_relaxed);
    return n;
  }

  // Makes the frame at k.depth (its engine and history set) the top, expanding it.
  void Push(Worker& k) {
    Frame& f = k.At(k.depth++);
    const size_t n = reduction::ExpandState(k.w, f.engine, options_.reduction,
                                            options_.guarded_waits);
    f.choices.clear();
    for (size_t i = 0; i < n; ++i) {
      if (k.w.take[i]) f.choices.push_back(k.w.choices[i]);
    }
    f.next = 0;
  }

  std::vector<Choice> PathTo(const Worker& k, size_t level) const {
    std::vector<Choice> p = k.prefix;
    for (size_t i = 1; i <= level; ++i) p.push_back(k.frames[i]->via);
    return p;
  }

  void Bound(std::string why) {
    {
      std::lock_guard<std::mutex> g(res_mu_);
      if (res_.complete && (collect_all_ || !res_.found)) {
        res_.complete = false;
        res_.bound = std::move(why);
      }
    }
    pool_.Halt();
  }

  // Stack splitting (explore::MaybeDonate): the frame's state, its history and its path.
  void MaybeDonate(Worker& k) {
    explore::MaybeDonate(pool_, k, [&](size_t i, const Frame& f, Item* item) {
      f.engine.Pack(*base_, &item->bytes);
      item->h = f.h;
      item->path = PathTo(k, i);
    });
  }

  // Sets up the thread's stack with an item taken from the pool.
  void TakeWork(Worker& k, Item item) {
    Frame& f = k.At(0);
    k.prefix = std::move(item.path);
    f.h = std::move(item.h);
    k.depth = 0;
    if (item.initial) {
      f.engine = *k.own;
      Push(k);
      return;
    }
    f.engine.Unpack(*base_, item.bytes.data(), item.bytes.size());
    PairKey(f.engine, f.h, classes_);  // a clean fingerprint cache for the copies above it
    f.choices = std::move(item.steps);
    f.next = 0;
    k.depth = 1;
  }

  void RunThread(size_t t) {
    Worker& k = *workers_[t];
    explore::RunStackThread(
        pool_, [&](Item item) { TakeWork(k, std::move(item)); }, [&] { Search(k); });
  }

  // The rules (and with collect_all the races) on the path to a completed pair.
  void CheckCompleted(Worker& k, std::vector<Choice> path) {
    ++k.completed;
    Expected<Engine> e = Replay(program_, params_, path);
    if (!e.ok()) return;
    std::vector<Finding> findings = CheckRules(program_, *e, e->trace());
    if (collect_all_) {
      std::vector<Finding> races = CheckRaces(program_, *e, e->trace());
      std::lock_guard<std::mutex> g(res_mu_);
      if (HasErrors(findings, options_.strict) && !res_.found) {
        res_.found = true;
        res_.path = std::move(path);
      }
      for (Finding& f : races) {
        if (races_seen_.emplace(f.agent, f.pc, f.other_agent, f.other_pc, f.object, f.index,
                                f.cta)
                .second) {
          res_.races.push_back(std::move(f));
        }
      }
      for (Finding& f : findings) {
        if (collected_
                .emplace(static_cast<int>(f.code()), f.agent, f.pc, f.other_agent, f.other_pc,
                         f.object_is_buffer, f.object, f.index, f.cta)
                .second) {
          res_.findings.push_back(std::move(f));
        }
      }
      return;
    }
    if (!HasErrors(findings, options_.strict)) {
      // No error here; its warnings are kept (once each) for the verdict, and the search goes
      // on: a warning never stops it, so it never hides an error on another path.
      std::lock_guard<std::mutex> g(res_mu_);
      for (Finding& f : findings) {
        if (f.level(options_.strict) != model::Severity::kWarning || !f.strict_only) continue;
        if (warned_
                .emplace(static_cast<int>(f.code()), f.agent, f.pc, f.other_agent, f.other_pc,
                         f.object_is_buffer, f.object, f.index, f.cta)
                .second) {
          res_.warnings.push_back(std::move(f));
        }
      }
      return;
    }
    {
      std::lock_guard<std::mutex> g(res_mu_);
      if (!res_.found) {
        res_.found = true;
        res_.path = std::move(path);
        res_.findings = std::move(findings);
      }
    }
    pool_.Halt();
  }

  // Depth-first from the thread's stack until it is empty or the search halts.
  void Search(Worker& k) {
    while (k.depth != 0) {
      if (pool_.Halted()) return;
      MaybeDonate(k);
      Frame& f = *k.frames[k.depth - 1];
      if (f.next == f.choices.size()) {
        --k.depth;
        continue;
      }
      if (claimed_.load(std::memory_order_relaxed) >= options_.max_states &&
          States() >= options_.max_states) {
        Bound(explore::Budget::States(options_.max_states) + " (protocol rules on every path)");
        return;
      }
      // The search's time and memory bounds, as the explorer's (explore::Budget).
      if ((++k.steps & 255) == 0) {
        if (std::optional<std::string> why = budget_.Reached()) {
          Bound(*why + " (protocol rules on every path)");
          return;
        }
      }
      const Choice c = f.choices[f.next++];
      Frame& g = k.At(k.depth);  // (frames do not move when the vector grows)
      g.engine = f.engine;
      StepPair(f, c, g, k.fp);
      if (!Insert(PairKey(g.engine, g.h, classes_))) continue;
      Count(k);
      const Outcome o = g.engine.outcome();
      if (o == Outcome::kRunning) {
        Push(k);
        continue;
      }
      if (o != Outcome::kCompleted) continue;  // deadlocks and violations are the explorer's
      CheckCompleted(k, PathTo(k, k.depth));
    }
  }

  const ir::Program& program_;
  const std::vector<int64_t>& params_;
  const ExploreOptions& options_;
  const explore::Budget budget_;  // from the search's start, with its own `seconds`
  const bool collect_all_;
  const size_t threads_;
  std::unique_ptr<Engine> base_;  // the initial state: the base of packed states (only read)
  std::vector<uint32_t> classes_;
  FingerprintSet one_;                           // one thread: the set of pair keys
  std::unique_ptr<ConcurrentFingerprintSet> many_;  // several threads: the shared one
  std::atomic<uint64_t> claimed_{0};
  std::vector<std::unique_ptr<Worker>> workers_;
  WorkPool<Item> pool_;
  // The result (res_mu_ while the threads run).
  std::mutex res_mu_;
  EveryPathResult res_;
  std::set<std::tuple<int, uint32_t, uint32_t, uint32_t, uint32_t, bool, uint32_t, uint32_t,
                      uint32_t>>
      collected_;
  std::set<std::tuple<int, uint32_t, uint32_t, uint32_t, uint32_t, bool, uint32_t, uint32_t,
                      uint32_t>>
      warned_;
  std::set<std::tuple<uint32_t, uint32_t, uint32_t, uint32_t, uint32_t, uint32_t, uint32_t>>
      races_seen_;
};

}  // namespace

EveryPathResult CheckRulesOnEveryPath(const ir::Program& program,
                                      const std::vector<int64_t>& params,
                                      const ExploreOptions& options, double seconds,
                                      bool collect_all) {
  return EveryPathSearch(program, params, options, seconds, collect_all).Run();
}

}  // namespace parity::verifier
