#include "verifier/explore.h"

#include <algorithm>
#include <chrono>
#include <utility>

#include "sim/common/check.h"

namespace parity::verifier {

namespace {

using engine::Choice;
using engine::Engine;
using engine::Footprint;
using engine::Outcome;

// Open-addressing set of 64-bit fingerprints (0 marks an empty slot; a fingerprint of 0 is
// stored as 1, which merges two of 2^64 values).
class FingerprintSet {
 public:
  FingerprintSet() : slots_(1u << 10, 0), mask_((1u << 10) - 1) {}
  // True if newly inserted.
  bool Insert(uint64_t fp) {
    if (fp == 0) fp = 1;
    if ((size_ + 1) * 4 > slots_.size() * 3) Grow();
    return InsertNoGrow(fp);
  }
  size_t bytes() const { return slots_.size() * sizeof(uint64_t); }

 private:
  bool InsertNoGrow(uint64_t fp) {
    // The fingerprint is already well mixed: its low bits index the table.
    for (size_t i = fp & mask_;; i = (i + 1) & mask_) {
      if (slots_[i] == fp) return false;
      if (slots_[i] == 0) {
        slots_[i] = fp;
        ++size_;
        return true;
      }
    }
  }
  void Grow() {
    std::vector<uint64_t> old = std::move(slots_);
    slots_.assign(old.size() * 2, 0);
    mask_ = slots_.size() - 1;
    size_ = 0;
    for (uint64_t fp : old) {
      if (fp != 0) InsertNoGrow(fp);
    }
  }
  std::vector<uint64_t> slots_;
  size_t mask_;
  size_t size_ = 0;
};

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

struct Node {
  Engine engine;
  uint32_t id;
};

// Persistent-set computation (explore.h): units are the enabled choices followed by the blocked
// agents. Object sets are bitsets over Engine::num_objects().
class Reducer {
 public:
  explicit Reducer(const Engine& root) : words_((root.num_objects() + 63) / 64) {
    agent_future_.resize(root.num_agents());
    for (uint32_t a = 0; a < root.num_agents(); ++a) {
      agent_future_[a].assign(words_, 0);
      for (uint32_t o : root.AgentMayTouch(a)) Set(agent_future_[a], o);
    }
  }

  // Marks in `take` (one flag per choice) the steps of the smallest persistent set found.
  void Choose(Engine& e, const std::vector<Choice>& choices, const std::vector<Footprint>& fps,
              std::vector<uint8_t>* take) {
    const size_t n_enabled = choices.size();
    units_.clear();
    // This state's future footprints of the agents: the exact look-ahead where it is sound,
    // else the static over-approximation.
    dyn_future_.resize(e.num_agents());
    for (uint32_t a = 0; a < e.num_agents(); ++a) {
      std::vector<uint64_t>& bits = dyn_future_[a];
      if (e.AgentFuture(a, &scratch_)) {
        bits.assign(words_, 0);
        for (uint32_t i = 0; i < scratch_.n; ++i) Set(bits, scratch_.objects[i]);
      } else {
        bits = agent_future_[a];
      }
    }
    for (size_t i = 0; i < n_enabled; ++i) {
      Unit u;
      u.enabled = true;
      u.now_all = fps[i].overflow;
      u.now.assign(fps[i].objects, fps[i].objects + fps[i].n);
      if (choices[i].kind == Choice::Kind::kAgent) {
        u.future = &dyn_future_[choices[i].index];
      } else {
        u.own_future.assign(words_, 0);
        const Engine::InFlight& f = e.in_flight_ops()[choices[i].index];
        for (uint32_t o : u.now) Set(u.own_future, o);
        switch (f.kind) {
          case Engine::InFlight::kTmaDeliver:
          case Engine::InFlight::kBulkDeliver:
          case Engine::InFlight::kStAsync:
          case Engine::InFlight::kCpAsyncArrive:
            Set(u.own_future, f.slot);
            break;
          case Engine::InFlight::kCpAsync:
            // Its completion may release the agent's deferred cp.async.mbarrier.arrive: take the
            // issuing agent's whole future.
            for (size_t w = 0; w < words_; ++w) u.own_future[w] |= agent_future_[f.agent][w];
            break;
          default:  // stores: the agent's group state
            Set(u.own_future, e.GroupsObject(f.agent));
            break;
        }
        u.future = nullptr;
      }
      units_.push_back(std::move(u));
    }
    for (uint32_t a = 0; a < e.num_agents(); ++a) {
      const Engine::AgentState& s = e.agent_state(a);
      if (s.status != 1) continue;  // only blocked agents (runnable ones are choices)
      Unit u;
      u.enabled = false;
      u.future = &dyn_future_[a];
      const engine::AgentInfo& info = e.agent_info(a);
      switch (s.wait) {
        case engine::WaitKind::kMbarrierParity:
        case engine::WaitKind::kMbarrierToken:
          u.now.push_back(s.wait_slot);
          break;
        case engine::WaitKind::kClusterBarrier:
          u.now.push_back(e.ClusterObject(info.cluster));
          break;
        case engine::WaitKind::kNamedBarrier:
          u.now.push_back(e.NamedObject(info.cta_global));
          break;
        case engine::WaitKind::kCpAsyncGroups:
        case engine::WaitKind::kBulkGroups:
          u.now.push_back(e.GroupsObject(a));
          break;
        case engine::WaitKind::kNone:
          u.now_all = true;
          break;
      }
      units_.push_back(std::move(u));
    }
    const size_t n = units_.size();
    size_t best = n + 1;
    std::vector<uint8_t> best_set;
    in_.assign(n, 0);
    for (size_t start = 0; start < n_enabled && best > 1; ++start) {
      std::fill(in_.begin(), in_.end(), 0);
      work_.clear();
      in_[start] = 1;
      work_.push_back(start);
      size_t enabled_in = 1;
      while (!work_.empty() && enabled_in < best) {
        const size_t x = work_.back();
        work_.pop_back();
        const Unit& ux = units_[x];
        for (size_t y = 0; y < n; ++y) {
          if (in_[y]) continue;
          if (ux.now_all || Meets(units_[y], ux.now)) {
            in_[y] = 1;
            work_.push_back(y);
            if (units_[y].enabled) ++enabled_in;
          }
        }
      }
      if (enabled_in < best) {
        best = enabled_in;
        best_set = in_;
      }
    }
    take->assign(n_enabled, 0);
    for (size_t i = 0; i < n_enabled; ++i) (*take)[i] = best_set[i];
  }

 private:
  struct Unit {
    bool enabled = false;
    bool now_all = false;
    std::vector<uint32_t> now;           // the step's footprint, or the object waited on
    const std::vector<uint64_t>* future = nullptr;  // agents: AgentMayTouch
    std::vector<uint64_t> own_future;    // in-flight operations
  };
  static void Set(std::vector<uint64_t>& bits, uint32_t o) { bits[o >> 6] |= uint64_t{1} << (o & 63); }
  static bool Test(const std::vector<uint64_t>& bits, uint32_t o) {
    return (bits[o >> 6] >> (o & 63)) & 1;
  }
  bool Meets(const Unit& y, const std::vector<uint32_t>& objects) const {
    const std::vector<uint64_t>& f = y.future ? *y.future : y.own_future;
    for (uint32_t o : objects) {
      if (Test(f, o)) return true;
    }
    return false;
  }

  size_t words_;
  std::vector<std::vector<uint64_t>> agent_future_;  // static (AgentMayTouch)
  std::vector<std::vector<uint64_t>> dyn_future_;    // this state's (AgentFuture)
  Footprint scratch_;
  std::vector<Unit> units_;
  std::vector<uint8_t> in_;
  std::vector<size_t> work_;
};

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
  }
  return "?";
}

ExploreResult Explore(const ir::Program& program, const std::vector<int64_t>& params,
                      const ExploreOptions& options) {
  using Clock = std::chrono::steady_clock;
  const Clock::time_point t0 = Clock::now();
  ExploreResult res;
  engine::EngineOptions eo;
  eo.record_trace = false;
  Expected<Engine> created = Engine::Create(program, params, eo);
  if (!created.ok()) {
    res.verdict = ExploreVerdict::kBadInput;
    res.error = created.status();
    return res;
  }
  FingerprintSet seen;
  std::vector<Record> records;
  // Levels reuse their Node objects (copy-assignment keeps the engines' vector capacity, so the
  // steady state does not allocate).
  std::vector<Node> frontier, next;
  size_t frontier_size = 0, next_size = 0;
  seen.Insert(created->Fingerprint());
  records.push_back({kRoot, 0});
  Reducer reducer(*created);
  frontier.push_back({std::move(created).value(), 0});
  frontier_size = 1;

  std::vector<Choice> choices;
  std::vector<Footprint> fps;
  std::vector<Engine> succ;
  std::vector<uint8_t> take;
  bool found = false, stopped = false;
  auto finish_stats = [&] {
    res.stats.states = records.size();
    res.stats.table_bytes = seen.bytes() + records.capacity() * sizeof(Record);
    res.stats.pruned = res.stats.enabled - res.stats.transitions;
    res.stats.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    std::sort(res.terminals.begin(), res.terminals.end());
  };

  while (frontier_size != 0 && !stopped) {
    res.stats.peak_frontier = std::max<uint64_t>(res.stats.peak_frontier, frontier_size);
    for (size_t fi = 0; fi < frontier_size; ++fi) {
      Node& node = frontier[fi];
      if (records.size() >= options.max_states) {
        res.bound = "--max-states " + std::to_string(options.max_states);
        stopped = true;
        break;
      }
      if (options.time_limit_s > 0 && (res.stats.expanded & 255) == 0 &&
          std::chrono::duration<double>(Clock::now() - t0).count() > options.time_limit_s) {
        res.bound = "--time-limit";
        stopped = true;
        break;
      }
      ++res.stats.expanded;
      node.engine.Choices(&choices);
      const size_t n = choices.size();
      fps.resize(n);
      while (succ.size() < n) succ.push_back(node.engine);
      for (size_t i = 0; i < n; ++i) {
        succ[i] = node.engine;
        succ[i].Step(choices[i], &fps[i]);
      }
      res.stats.enabled += n;
      if (options.reduction && n > 1) {
        reducer.Choose(node.engine, choices, fps, &take);
      } else {
        take.assign(n, 1);
      }
      for (size_t i = 0; i < n; ++i) {
        if (!take[i]) continue;
        ++res.stats.transitions;
        Engine& s = succ[i];
        const uint64_t fp = s.Fingerprint();
        if (!seen.Insert(fp)) continue;
        const uint32_t id = static_cast<uint32_t>(records.size());
        records.push_back({node.id, EncodeChoice(choices[i])});
        const Outcome o = s.outcome();
        if (o == Outcome::kRunning) {
          if (next_size < next.size()) {
            next[next_size].engine = s;
            next[next_size].id = id;
          } else {
            next.push_back({s, id});
          }
          ++next_size;
          continue;
        }
        if (o == Outcome::kCompleted) {
          ++res.stats.completed_ends;
          if (options.collect_terminals) res.terminals.push_back(fp);
          continue;
        }
        if (o == Outcome::kDeadlock) {
          ++res.stats.deadlock_ends;
          if (options.collect_terminals) res.terminals.push_back(fp);
        } else if (o == Outcome::kViolation) {
          ++res.stats.violation_ends;
        } else if (o == Outcome::kError) {
          res.verdict = ExploreVerdict::kBadInput;
          res.error = s.result().error;
          res.counterexample = PathTo(records, id);
          finish_stats();
          return res;
        }
        if (!found) {
          found = true;
          res.verdict =
              o == Outcome::kDeadlock ? ExploreVerdict::kDeadlock : ExploreVerdict::kViolation;
          res.counterexample = PathTo(records, id);
        }
        if (options.stop_at_first) {
          finish_stats();
          return res;
        }
      }
    }
    frontier.swap(next);
    frontier_size = next_size;
    next_size = 0;
    if (!stopped && frontier_size != 0) ++res.stats.depth;
  }
  if (stopped && !found) res.verdict = ExploreVerdict::kIncomplete;
  finish_stats();
  return res;
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
