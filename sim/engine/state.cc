// The engine's state as a value: copies, the undo of a step (RestoreStep), the packed form of
// the explorer's frontier, and the canonical words (StateWords) that StateHash and the tests
// hold the fingerprint to.
#include "sim/engine/engine.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cassert>
#include <cstddef>
#include <cstring>
#include <deque>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <variant>

#include "sim/common/bytes.h"
#include "sim/common/check.h"
#include "sim/engine/code.h"
#include "sim/model/tensor_map.h"
#include "sim/model/tma.h"

namespace parity::engine {

namespace {

// Whether a run result holds nothing but its scalars (no finding, warning, error or deadlock
// report): that of every state a run or a search passes through before its end.
[[maybe_unused]] bool OnlyScalars(const RunResult& r) {
  return !r.violation && r.deadlock.blocked.empty() && r.deadlock.exited.empty() &&
         r.warnings.empty() && r.error.ok() && r.error.rule().empty() &&
         r.error.message().empty() && r.error.where().file.empty() &&
         r.error.where().line == 0 && r.error.where().column == 0;
}

}  // namespace

// Whether e's result holds only its scalars and warnings that nobody added (what OnlyScalars
// checks, cheaply): while a run goes on, no violation, deadlock or error is recorded (each ends
// it; the look-ahead that evaluates ahead clears the error it may cause), so only warnings can
// be there.
bool Engine::Running(const Engine& e) {
  const bool running = e.outcome_ == Outcome::kRunning && e.result_.warnings.empty();
#ifndef NDEBUG
  PARITY_CHECK(!running || OnlyScalars(e.result_), "Engine: a running engine holds a result");
#endif
  return running;
}

void Engine::AssignState(const Engine& o) {
  PARITY_CHECK(code_->program == o.code_->program && agents_.size() == o.agents_.size(),
               "AssignState: engines of different programs");
  CopyState(o);
}

Engine& Engine::operator=(const Engine& o) {
  if (this != &o) {
    code_ = o.code_;
    CopyState(o);
  }
  return *this;
}

namespace {
// dst = src for a vector of trivially copyable elements: one memcpy when the sizes agree (the
// explorer's copies are between states of one program, whose vectors mostly have equal sizes).
template <typename T>
inline void AssignPod(std::vector<T>& dst, const std::vector<T>& src) {
  static_assert(std::is_trivially_copyable_v<T>);
  if (dst.size() == src.size()) {
    if (!src.empty()) std::memcpy(dst.data(), src.data(), src.size() * sizeof(T));
  } else {
    dst = src;
  }
}
}  // namespace

// The run's counters, outcome, result and trace (CopyState and RestoreStep; undo: o is the state
// this one was copied from, so this one's result lists hold o's).
__attribute__((always_inline)) inline void Engine::CopyRun(const Engine& o, bool undo) {
  const bool scalars = (undo || Running(o)) && Running(*this);  // before outcome_ changes
  exited_count_ = o.exited_count_;
  rng_ = o.rng_;
  rr_cursor_ = o.rr_cursor_;
  rr_async_turn_ = o.rr_async_turn_;
  outcome_ = o.outcome_;
  // The explorer copies a state per transition, almost always a running one into a running
  // one: their results differ only in the scalars, and assigning the rest (three strings of
  // the error status, vectors, an optional) would cost as much as the rest of the copy.
  if (scalars) {
    result_.outcome = o.result_.outcome;
    result_.steps = o.result_.steps;
    result_.events = o.result_.events;
  } else {
    result_ = o.result_;
  }
  steps_ = o.steps_;
  events_ = o.events_;
  if (!trace_.empty() || !o.trace_.empty()) trace_ = o.trace_;
}

void Engine::Allocate(const Layout& l) {
  layout_ = l;
  block_ = std::make_unique<uint64_t[]>(l.words);  // zeroed
  uint8_t* const b = reinterpret_cast<uint8_t*>(block_.get());
  agents_ = {reinterpret_cast<AgentState*>(b + l.agents), l.n_agents};
  vars_ = {reinterpret_cast<int64_t*>(b + l.vars), l.n_vars};
  barriers_ = {reinterpret_cast<model::MbarrierState*>(b + l.barriers), l.n_barriers};
  named_ = {reinterpret_cast<model::NamedBarriers*>(b + l.named), l.n_named};
  smem_data_ = {reinterpret_cast<uint16_t*>(b + l.smem), l.n_smem};
  global_data_ = {reinterpret_cast<uint16_t*>(b + l.global), l.n_global};
  ready_.p = reinterpret_cast<uint32_t*>(b + l.ready);
  ready_.len = reinterpret_cast<uint32_t*>(b + l.ready_len);
  fpc_.w = {reinterpret_cast<uint64_t*>(b + l.fp), l.n_fp};
}

void Engine::CopyState(const Engine& o) {
  // Every member but code_ (keep this list in step with the members: the size check below).
  options_ = o.options_;
  // The state block: agents, variables, mbarriers, named barriers, readback data, the ready
  // list and the fingerprint cache's words.
  static_assert(std::is_trivially_copyable_v<AgentState> &&
                std::is_trivially_copyable_v<model::MbarrierState> &&
                std::is_trivially_copyable_v<model::NamedBarriers>);
  // Same id: same layout (the common case, one compare). Else compare the shapes (engines of
  // one program made by two Create calls); reallocate only when they differ.
  if (block_ == nullptr ||
      (layout_.id != o.layout_.id &&
       std::memcmp(&layout_, &o.layout_, offsetof(Layout, id)) != 0)) {
    Allocate(o.layout_);
  }
  if (layout_.words != 0) std::memcpy(block_.get(), o.block_.get(), layout_.words * 8);
  if (!cp_.empty() || !o.cp_.empty()) {
    cp_ = o.cp_;
    bulk_ = o.bulk_;
  }
  AssignPod(in_flight_, o.in_flight_);
  if (clusters_.size() == o.clusters_.size()) {
    for (size_t i = 0; i < clusters_.size(); ++i) clusters_[i].AssignFrom(o.clusters_[i]);
  } else {
    clusters_ = o.clusters_;
  }
  AssignPod(deferred_, o.deferred_);
  CopyRun(o, false);
  fpc_.valid = o.fpc_.valid;
  fpc_.shared_sum = o.fpc_.shared_sum;
  fpc_.agents_sum = o.fpc_.agents_sum;
  fpc_.plain = o.fpc_.plain;
  // RestoreStep can undo steps from here on when every change they make is marked: the
  // source's marks are all clear (its fingerprint is up to date), so a step's changes are
  // exactly the objects whose mark it sets.
  step_log_n_ = 0;
  step_log_ok_ = fpc_.valid;
  if (step_log_ok_) {
    const uint32_t words = FpParts().obj;
    for (uint32_t w = 0; w < words; ++w) step_log_ok_ = step_log_ok_ && fpc_.w[w] == 0;
  }
}

void Engine::RestoreStep(const Engine& p) {
  if (!step_log_ok_ || code_ != p.code_) {
    CopyState(p);
    return;
  }
  const Code& c = *code_;
  const uint32_t nslots = static_cast<uint32_t>(barriers_.size());
  const uint32_t first_named = nslots + c.clusters;
  const uint32_t first_agent = first_named + c.num_ctas;
  const uint32_t n_agents = static_cast<uint32_t>(agents_.size());
  // The fingerprint cache: the marks, and the entries of what changed.
  const FpLayout at = FpParts();
  uint64_t* const w = fpc_.w.data();
  const uint64_t* const pw = p.fpc_.w.data();
  std::copy(pw, pw + at.obj, w);
  fpc_.shared_sum = p.fpc_.shared_sum;
  fpc_.agents_sum = p.fpc_.agents_sum;
  fpc_.plain = p.fpc_.plain;
  for (uint32_t i = 0; i < step_log_n_; ++i) {
    const uint32_t o = step_log_[i];
    w[at.obj + o] = pw[at.obj + o];
    if (o < nslots) {
      barriers_[o] = p.barriers_[o];
    } else if (o < first_named) {
      clusters_[o - nslots] = p.clusters_[o - nslots];
    } else if (o < first_agent) {
      named_[o - first_named] = p.named_[o - first_named];
    } else {
      const uint32_t a = o - first_agent;
      agents_[a] = p.agents_[a];
      w[at.ops + a] = pw[at.ops + a];
      w[at.fin + a] = pw[at.fin + a];
      w[at.fin + n_agents + a] = pw[at.fin + n_agents + a];
      const uint32_t begin = c.var_offset[a];
      std::copy_n(p.vars_.data() + begin, agent_num_vars(a), vars_.data() + begin);
      const uint32_t g = c.group_state[a];
      if (g != kNoGroups) {
        cp_[g] = p.cp_[g];
        bulk_[g] = p.bulk_[g];
      }
    }
  }
  step_log_n_ = 0;
  // An agent's state changes only in the steps that mark it, except its position in the ready
  // list (another agent leaving the list moves the last one).
  // (Unchanged by most steps: then nothing to do.)
  if (*ready_.len != *p.ready_.len || !std::equal(p.ready_.begin(), p.ready_.end(), ready_.p)) {
    *ready_.len = *p.ready_.len;
    std::copy(p.ready_.begin(), p.ready_.end(), ready_.p);
    for (uint32_t i = 0; i < ready_.size(); ++i) agents_[ready_[i]].ready_pos = i;
  }
  std::copy(p.smem_data_.begin(), p.smem_data_.end(), smem_data_.begin());
  std::copy(p.global_data_.begin(), p.global_data_.end(), global_data_.begin());
  AssignPod(in_flight_, p.in_flight_);
  AssignPod(deferred_, p.deferred_);
  CopyRun(p, true);
#ifndef NDEBUG
  thread_local uint32_t calls = 0;
  if ((calls++ & 7) == 0 && SelfChecks()) {
    auto equal = [](const auto& x, const auto& y) {
      return std::equal(x.begin(), x.end(), y.begin(), y.end());
    };
    bool same = StateHash() == p.StateHash() && equal(vars_, p.vars_) &&
                equal(barriers_, p.barriers_) && equal(fpc_.w, p.fpc_.w) &&
                Fingerprint() == p.Fingerprint() && clusters_ == p.clusters_ &&
                equal(named_, p.named_);
    for (size_t i = 0; same && i < agents_.size(); ++i) {
      same = std::memcmp(&agents_[i], &p.agents_[i], sizeof(AgentState)) == 0;
    }
    PARITY_CHECK(same, "RestoreStep: a step changed state that it did not mark (Exec::Dirty)");
  }
#endif
}

// Engine::Pack's block encoding: runs of (words equal to base's, words that differ, the
// differing words xor base's), each number a varint (a variable or counter xor its initial
// value is mostly small).
void Engine::Pack(const Engine& base, std::vector<uint8_t>* out) const {
  // A running state's result holds only its counters and warnings (Running); the warnings
  // (which the explorer does not read) are not kept.
  PARITY_CHECK(outcome_ == Outcome::kRunning && trace_.empty() &&
                   code_->program == base.code_->program && layout_.words == base.layout_.words,
               "Pack: a running state without a trace, of base's program");
  // The block without the fingerprint cache's words [fp_begin, fp_end) (recomputed by the next
  // Fingerprint after Unpack).
  const uint64_t* const w = block_.get();
  const uint64_t* const b = base.block_.get();
  const uint32_t fp_begin = layout_.fp / 8, fp_end = fp_begin + layout_.n_fp;
  const uint32_t words = layout_.words;
  for (uint32_t i = 0; i < words;) {
    uint32_t same = i;
    while (same < words && (w[same] == b[same] || (same >= fp_begin && same < fp_end))) ++same;
    uint32_t diff = same;
    while (diff < words && w[diff] != b[diff] && !(diff >= fp_begin && diff < fp_end)) ++diff;
    PutVarint(out, same - i);
    PutVarint(out, diff - same);
    for (uint32_t k = same; k < diff; ++k) PutVarint(out, w[k] ^ b[k]);
    i = diff;
  }
  for (const std::vector<InFlight>* ops : {&in_flight_, &deferred_}) {
    PutVarint(out, ops->size());
    for (const InFlight& f : *ops) {
      std::apply([out](const auto&... v) { (PutVarint(out, static_cast<uint64_t>(v)), ...); },
                 f.Fields());
    }
  }
  PutPod(out, static_cast<uint32_t>(cp_.size()));
  for (size_t i = 0; i < cp_.size(); ++i) {
    cp_[i].Pack(out);
    bulk_[i].Pack(out);
  }
  PutPod(out, static_cast<uint32_t>(clusters_.size()));
  for (const model::ClusterBarrier& cb : clusters_) cb.Pack(out);
  PutPod(out, exited_count_);
  PutPod(out, rng_);
  PutPod(out, rr_cursor_);
  PutPod(out, rr_async_turn_);
  PutPod(out, steps_);
  PutPod(out, events_);
  PutPod(out, result_.steps);
  PutPod(out, result_.events);
}

void Engine::Unpack(const Engine& base, const uint8_t* p, size_t n) {
  PARITY_CHECK(code_->program == base.code_->program, "Unpack: engines of different programs");
  const uint8_t* const end = p + n;
  if (block_ == nullptr || layout_.words != base.layout_.words ||
      std::memcmp(&layout_, &base.layout_, offsetof(Layout, id)) != 0) {
    Allocate(base.layout_);
  }
  uint64_t* const w = block_.get();
  const uint64_t* const b = base.block_.get();
  const uint32_t fp_begin = layout_.fp / 8, fp_end = fp_begin + layout_.n_fp;
  for (uint32_t i = 0; i < layout_.words;) {
    uint64_t same = 0, diff = 0;
    p = GetVarint(p, &same);
    p = GetVarint(p, &diff);
    PARITY_CHECK(i + same + diff <= layout_.words, "Unpack: damaged packed state");
    std::copy(b + i, b + i + same, w + i);
    i += static_cast<uint32_t>(same);
    for (uint64_t k = 0; k < diff; ++k, ++i) {
      uint64_t x = 0;
      p = GetVarint(p, &x);
      w[i] = x ^ b[i];
    }
  }
  std::fill(w + fp_begin, w + fp_end, 0);
  for (std::vector<InFlight>* ops : {&in_flight_, &deferred_}) {
    uint64_t count = 0;
    p = GetVarint(p, &count);
    PARITY_CHECK(count <= n, "Unpack: damaged packed state");
    ops->resize(count);
    for (InFlight& f : *ops) {
      std::apply(
          [&p](auto&... v) {
            auto get = [&p](auto& field) {
              uint64_t x = 0;
              p = GetVarint(p, &x);
              field = static_cast<std::remove_reference_t<decltype(field)>>(x);
            };
            (get(v), ...);
          },
          f.Fields());
    }
  }
  uint32_t groups = 0;
  p = GetPod(p, &groups);
  cp_.resize(groups);
  bulk_.resize(groups);
  for (uint32_t i = 0; i < groups; ++i) {
    p = cp_[i].Unpack(p);
    p = bulk_[i].Unpack(p);
  }
  uint32_t clusters = 0;
  p = GetPod(p, &clusters);
  if (clusters_.size() != clusters) clusters_ = base.clusters_;
  PARITY_CHECK(clusters_.size() == clusters, "Unpack: damaged packed state");
  for (model::ClusterBarrier& cb : clusters_) p = cb.Unpack(p);
  p = GetPod(p, &exited_count_);
  p = GetPod(p, &rng_);
  p = GetPod(p, &rr_cursor_);
  p = GetPod(p, &rr_async_turn_);
  p = GetPod(p, &steps_);
  p = GetPod(p, &events_);
  outcome_ = Outcome::kRunning;
  result_ = RunResult{};
  result_.outcome = Outcome::kRunning;
  p = GetPod(p, &result_.steps);
  p = GetPod(p, &result_.events);
  PARITY_CHECK(p == end, "Unpack: damaged packed state");
  trace_.clear();
  fpc_.valid = false;
  fpc_.plain = false;
  fpc_.shared_sum = fpc_.agents_sum = 0;
  step_log_n_ = 0;
  step_log_ok_ = false;
}

// Through CopyState, so that a copy's RestoreStep log starts at the copy (a defaulted copy
// would inherit its source's log, which is relative to the source's own copy).
Engine::Engine(const Engine& o) : code_(o.code_) { CopyState(o); }
Engine::Engine(Engine&&) noexcept = default;
Engine& Engine::operator=(Engine&&) noexcept = default;
Engine::~Engine() = default;

size_t Engine::num_agents() const { return code_->agents.size(); }


const AgentInfo& Engine::agent_info(uint32_t a) const { return code_->agents[a]; }
const std::string& Engine::role_name(uint32_t a) const {
  return code_->program->roles[code_->agents[a].role].name;
}
uint32_t Engine::num_ctas() const { return code_->num_ctas; }
size_t Engine::in_flight() const { return in_flight_.size() + deferred_.size(); }
const model::MbarrierState& Engine::barrier_state(uint32_t cta_global, uint32_t barrier,
                                                  uint32_t index) const {
  PARITY_CHECK(cta_global < code_->num_ctas && barrier < code_->barrier_base.size() &&
                   index < code_->barrier_size[barrier],
               "barrier_state: out of range");
  return barriers_[static_cast<size_t>(cta_global) * code_->barriers_per_cta +
                   code_->barrier_base[barrier] + index];
}

namespace {
// One in-flight operation's words (StateWords): every field (InFlight::Fields), one word each.
constexpr size_t kOpWords = std::tuple_size_v<decltype(std::declval<Engine::InFlight>().Fields())>;
void OpWords(const Engine::InFlight& f, uint64_t* w) {
  std::apply([w](const auto&... v) {
    size_t i = 0;
    ((w[i++] = static_cast<uint64_t>(v)), ...);
  }, f.Fields());
}

// Appends a multiset of operations in a canonical order (their count, then their words sorted):
// the list order depends on the history, not on the state.
void AppendOps(const std::vector<Engine::InFlight>& ops, std::vector<uint64_t>* out) {
  thread_local std::vector<std::array<uint64_t, kOpWords>> sorted;
  sorted.resize(ops.size());
  for (size_t i = 0; i < ops.size(); ++i) OpWords(ops[i], sorted[i].data());
  std::sort(sorted.begin(), sorted.end());
  out->push_back(ops.size());
  for (const auto& w : sorted) out->insert(out->end(), w.begin(), w.end());
}
}  // namespace

void Engine::StateWords(std::vector<uint64_t>* out) const {
  out->clear();
  out->push_back(static_cast<uint64_t>(outcome_));
  std::vector<uint64_t>& o = *out;
  auto word = [&o](uint64_t v) { o.push_back(v); };
  for (uint32_t a = 0; a < agents_.size(); ++a) {
    const AgentState& s = agents_[a];
    o.push_back(s.pc | (static_cast<uint64_t>(s.status) << 32) |
                (static_cast<uint64_t>(s.wait) << 40) |
                (static_cast<uint64_t>(s.cluster_arrived) << 48));
    // wait_slot / wait_arg are dead once the wait is over: not state.
    o.push_back(s.wait == WaitKind::kNone
                    ? 0
                    : s.wait_slot | (static_cast<uint64_t>(s.wait_arg) << 32));
    // The async-group states have no fixed length: their length first.
    const size_t len_at = o.size();
    o.push_back(0);
    CpState(a).ForEachWord(word);
    BulkState(a).ForEachWord(word);
    o[len_at] = o.size() - len_at - 1;
    const int64_t* v = agent_vars(a);
    for (uint32_t i = 0; i < agent_num_vars(a); ++i) o.push_back(static_cast<uint64_t>(v[i]));
  }
  for (const model::MbarrierState& b : barriers_) {
    o.push_back(static_cast<uint64_t>(b.life) |
                (static_cast<uint64_t>(b.preceding_phase_observed) << 8) |
                (static_cast<uint64_t>(b.phase) << 32));
    o.push_back(static_cast<uint32_t>(b.pending_count) |
                (static_cast<uint64_t>(static_cast<uint32_t>(b.expected_count)) << 32));
    o.push_back(static_cast<uint32_t>(b.tx_count));
  }
  for (const model::ClusterBarrier& cb : clusters_) cb.ForEachWord(word);
  for (const model::NamedBarriers& nb : named_) nb.ForEachWord(word);
  for (uint16_t d : smem_data_) o.push_back(d);  // empty unless the program has a `readback`
  for (uint16_t d : global_data_) o.push_back(d);
  AppendOps(in_flight_, out);
  AppendOps(deferred_, out);
}

uint64_t Engine::StateHash() const {
  thread_local std::vector<uint64_t> words;
  StateWords(&words);
  uint64_t h = 0x243f6a8885a308d3ull;
  for (uint64_t w : words) h = fpmix::Word(h, w);
  return fpmix::Final(h);
}

}  // namespace parity::engine
