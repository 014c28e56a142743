// What every search of the explorer shares (verifier/explore.h): the sequential breadth- and
// depth-first searches (explore/search.h), the parallel depth-first one (parallel_dfs.h) and the
// every-path rule search (every_path.h). Their set-up (the initial state and the symmetry
// reduction), their budgets (states, time, memory, and the words each bound is reported in),
// the step encoding of the state records and what is collected at a reached state (barrier
// values, failed assertions) are written once here, so that the strategies differ only in how
// they order and hand out the states.
#ifndef PARITY_VERIFIER_EXPLORE_COMMON_H_
#define PARITY_VERIFIER_EXPLORE_COMMON_H_

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include <unistd.h>

#include "sim/common/status.h"
#include "sim/engine/engine.h"
#include "sim/ir/ir.h"
#include "sim/model/codes.h"
#include "verifier/explore.h"
#include "verifier/symmetry.h"

namespace parity::verifier::explore {

using Clock = std::chrono::steady_clock;

// The process's resident set in bytes (Linux /proc/self/statm); 0 if unknown.
inline uint64_t ResidentBytes() {
  FILE* f = std::fopen("/proc/self/statm", "r");
  if (f == nullptr) return 0;
  unsigned long long size = 0, resident = 0;
  const int n = std::fscanf(f, "%llu %llu", &size, &resident);
  std::fclose(f);
  return n == 2 ? resident * static_cast<uint64_t>(sysconf(_SC_PAGESIZE)) : 0;
}

// A stored state's step from its parent, in 32 bits (bit 31: an in-flight operation's
// completion; low bits: the agent or the operation's index).
inline uint32_t EncodeChoice(engine::Choice c) {
  return (c.kind == engine::Choice::Kind::kAsync ? 0x80000000u : 0u) | c.index;
}
inline engine::Choice DecodeChoice(uint32_t v) {
  return {(v & 0x80000000u) ? engine::Choice::Kind::kAsync : engine::Choice::Kind::kAgent,
          v & 0x7fffffffu};
}

// The budgets of ExploreOptions that every search checks (max_states is checked where the
// search counts its states), and the text ExploreResult::bound gives each. A search checks
// the clock and the resident memory only every so many steps (they cost a system call).
class Budget {
 public:
  Budget(const ExploreOptions& o, Clock::time_point t0, double time_limit_s)
      : t0_(t0), time_limit_s_(time_limit_s), max_memory_bytes_(o.max_memory_bytes) {}
  // With the run's own --time-limit.
  Budget(const ExploreOptions& o, Clock::time_point t0) : Budget(o, t0, o.time_limit_s) {}

  bool timed() const { return time_limit_s_ > 0; }
  bool memory_bounded() const { return max_memory_bytes_ != 0; }
  double Elapsed() const { return std::chrono::duration<double>(Clock::now() - t0_).count(); }
  bool TimeUp() const { return timed() && Elapsed() > time_limit_s_; }
  // The --max-memory bound's text when the resident memory is above it (the fingerprint
  // table's address-space reservation is not resident until it is used).
  std::optional<std::string> MemoryExceeded() const {
    if (max_memory_bytes_ == 0) return std::nullopt;
    const uint64_t rss = ResidentBytes();
    if (rss <= max_memory_bytes_) return std::nullopt;
    return "--max-memory " + std::to_string(max_memory_bytes_ >> 20) +
           " MiB (resident memory reached " + std::to_string(rss >> 20) + " MiB)";
  }
  // The time or the memory bound's text when either is reached (time first).
  std::optional<std::string> Reached() const {
    if (TimeUp()) return std::string(kTimeLimit);
    return MemoryExceeded();
  }
  static std::string States(uint64_t max_states) {
    return "--max-states " + std::to_string(max_states);
  }
  static constexpr const char* kTimeLimit = "--time-limit";

 private:
  Clock::time_point t0_;
  double time_limit_s_;
  uint64_t max_memory_bytes_;
};

// The initial state of one Explore call, made once and copied by every search and replay of the
// call (a copy does not run Engine::Create again: bindings, the compiled program and the
// initial state are shared work). Two kinds, since the trace mode is fixed at Create: the
// searches' (no trace kept) and the replays' (the trace kept: the rules and the reports read
// it). Each is made when first asked for; null when the program does not instantiate.
class InitialStates {
 public:
  InitialStates(const ir::Program& program, const std::vector<int64_t>& params)
      : program_(program), params_(params) {}
  const engine::Engine* Untraced() { return Get(false); }
  const engine::Engine* Traced() { return Get(true); }

 private:
  const engine::Engine* Get(bool traced) {
    Slot& s = slots_[traced ? 1 : 0];
    if (!s.tried) {
      s.tried = true;
      engine::EngineOptions eo;
      eo.record_trace = traced;
      Expected<engine::Engine> e = engine::Engine::Create(program_, params_, eo);
      if (e.ok()) s.engine.emplace(std::move(e).value());
    }
    return s.engine ? &*s.engine : nullptr;
  }
  struct Slot {
    bool tried = false;
    std::optional<engine::Engine> engine;
  };
  const ir::Program& program_;
  const std::vector<int64_t>& params_;
  Slot slots_[2];
};

// The initial state of a search (no trace kept: a search only fingerprints and steps) and
// its symmetry reduction. `initial` (may be null): an engine of this program and params made
// earlier in the same call, copied instead of creating one (Engine::CreatedCount).
struct Start {
  std::optional<engine::Engine> engine;
  SearchSymmetry sym;
};
inline Expected<Start> StartSearch(const ir::Program& program,
                                   const std::vector<int64_t>& params,
                                   const ExploreOptions& options,
                                   const engine::Engine* initial) {
  Start s;
  if (initial != nullptr && !initial->options().record_trace) {
    s.engine.emplace(*initial);
  } else {
    engine::EngineOptions eo;
    eo.record_trace = false;
    Expected<engine::Engine> created = engine::Engine::Create(program, params, eo);
    if (!created.ok()) return created.status();
    s.engine.emplace(std::move(created).value());
  }
  s.sym = SymmetryForSearch(program, params, *s.engine, options.symmetry && options.reduction);
  return s;
}

template <typename T>
void SortUnique(std::vector<T>* v) {
  std::sort(v->begin(), v->end());
  v->erase(std::unique(v->begin(), v->end()), v->end());
}

// A reached state whose run ended in a failed assertion (P2033) adds its id to the sorted set
// `ids` (ExploreResult::failed_assertions). Checked at every transition, before the state is
// looked up: two failures of different assertions can end in equal states (the fingerprint
// holds the outcome, not which assertion failed).
inline bool IsFailedAssertion(const engine::Engine& s) {
  const auto& v = s.result().violation;
  return v && s.outcome() == engine::Outcome::kViolation &&
         v->violation.code == model::Code::kAssertionFailed;
}
inline void NoteFailedAssertion(const engine::Engine& s, std::vector<int64_t>* ids) {
  if (!IsFailedAssertion(s)) return;
  const int64_t id = s.result().violation->violation.value;
  const auto at = std::lower_bound(ids->begin(), ids->end(), id);
  if (at == ids->end() || *at != id) ids->insert(at, id);
}

// Appends every barrier slot's value in s (ExploreOptions::collect_barrier_states), keeping the
// list's duplicates bounded.
inline void CollectBarriers(const engine::Engine& s, std::vector<BarrierValue>* out) {
  for (uint32_t o = 0; o < s.num_barrier_slots(); ++o) {
    out->push_back(BarrierValue::Of(o, s.slot_state(o)));
  }
  if (out->size() > (size_t{1} << 20)) SortUnique(out);
}

// The result's collections in their reported form: sorted, without repeats (distinct end states
// can share a symmetric fingerprint; threads collect what they saw separately).
inline void FinishCollections(ExploreResult* r) {
  SortUnique(&r->terminals);
  SortUnique(&r->barrier_states);
  SortUnique(&r->failed_assertions);
}

}  // namespace parity::verifier::explore

#endif  // PARITY_VERIFIER_EXPLORE_COMMON_H_
