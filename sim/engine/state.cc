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
#include "sim/engine/components.h"
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
// dst = src for a member of the table (components.h). A vector of trivially copyable elements:
// one memcpy when the sizes agree (the explorer's copies are between states of one program,
// whose vectors mostly have equal sizes); of cluster barriers: each without reallocating.
template <typename T>
inline void CopyMember(T& dst, const T& src) {
  dst = src;
}
template <typename T>
inline void CopyMember(std::vector<T>& dst, const std::vector<T>& src) {
  if constexpr (std::is_trivially_copyable_v<T>) {
    if (dst.size() == src.size()) {
      if (!src.empty()) std::memcpy(dst.data(), src.data(), src.size() * sizeof(T));
      return;
    }
  } else if constexpr (std::is_same_v<T, model::ClusterBarrier>) {
    if (dst.size() == src.size()) {
      for (size_t i = 0; i < dst.size(); ++i) dst[i].AssignFrom(src[i]);
      return;
    }
  }
  if (!dst.empty() || !src.empty()) dst = src;
}

// A member of the table as bytes (Pack) and back (Unpack): scalars as they are, operations
// field by field as varints (mostly small numbers), model objects by their own Pack.
template <typename T>
void PackMember(const T& v, std::vector<uint8_t>* out) {
  PutPod(out, v);
}
template <typename T>
const uint8_t* UnpackMember(T& v, const uint8_t* p, const uint8_t*) {
  return GetPod(p, &v);
}
void PackMember(const std::vector<Engine::InFlight>& ops, std::vector<uint8_t>* out) {
  PutVarint(out, ops.size());
  for (const Engine::InFlight& f : ops) {
    std::apply([out](const auto&... v) { (PutVarint(out, static_cast<uint64_t>(v)), ...); },
               f.Fields());
  }
}
const uint8_t* UnpackMember(std::vector<Engine::InFlight>& ops, const uint8_t* p,
                            const uint8_t* end) {
  uint64_t count = 0;
  p = GetVarint(p, &count);
  PARITY_CHECK(count <= static_cast<uint64_t>(end - p), "Unpack: damaged packed state");
  ops.resize(count);
  for (Engine::InFlight& f : ops) {
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
  return p;
}
// Model objects: as many as the program has (Unpack sizes them from the base's), no count.
template <typename T>
  requires requires(const T& t, std::vector<uint8_t>* o) { t.Pack(o); }
void PackMember(const std::vector<T>& v, std::vector<uint8_t>* out) {
  for (const T& x : v) x.Pack(out);
}
template <typename T>
  requires requires(const T& t, std::vector<uint8_t>* o) { t.Pack(o); }
const uint8_t* UnpackMember(std::vector<T>& v, const uint8_t* p, const uint8_t* end) {
  for (T& x : v) {
    PARITY_CHECK(p < end, "Unpack: damaged packed state");
    p = x.Unpack(p);
  }
  return p;
}
}  // namespace

// The run's counters, outcome, result and trace (CopyState and RestoreStep; undo: o is the state
// this one was copied from, so this one's result lists hold o's).
__attribute__((always_inline)) inline void Engine::CopyRun(const Engine& o, bool undo) {
  const bool scalars = (undo || Running(o)) && Running(*this);  // before outcome_ changes
  Table::RunMembers([](auto& d, const auto& s) { CopyMember(d, s); }, *this, o);
  outcome_ = o.outcome_;
  // The explorer copies a state per transition, almost always a running one into a running
  // one: their results differ only in the scalars, and assigning the rest (three strings of
  // the error status, vectors, an optional) would cost as much as the rest of the copy.
  if (scalars) {
    result_.outcome = o.result_.outcome;  // the counters are RunMembers
    result_.tx_pieces_differ = o.result_.tx_pieces_differ;
    if (!o.result_.tx_piece_keys.empty() || !result_.tx_piece_keys.empty()) {
      result_.tx_piece_keys = o.result_.tx_piece_keys;
    }
  } else {
    result_ = o.result_;
  }
  if (!trace_.empty() || !o.trace_.empty()) {
    trace_ = o.trace_;
    trace_places_ = o.trace_places_;
  }
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
  // Every member but code_: the options, the block, the table's members (components.h), the
  // run's result and trace, and the fingerprint cache's scalars.
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
  Table::ObjectMembers([](auto& d, const auto& s) { CopyMember(d, s); }, *this, o);
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
  const uint32_t first_agent = layout_.first_agent_object;
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
    Table::ObjectParts(o, [](auto&& d, const auto& s) { Table::Assign(d, s); }, *this, p);
    if (o >= first_agent) {
      const uint32_t a = o - first_agent;
      w[at.ops + a] = pw[at.ops + a];
      w[at.fin + a] = pw[at.fin + a];
      w[at.fin + n_agents + a] = pw[at.fin + n_agents + a];
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
  CopyRun(p, true);  // the in-flight operations and the counters (Table::RunMembers)
#ifndef NDEBUG
  thread_local uint32_t calls = 0;
  if ((calls++ & 7) == 0 && SelfChecks()) {
    auto equal = [](const auto& x, const auto& y) {
      return std::equal(x.begin(), x.end(), y.begin(), y.end());
    };
    // Every part of the table, and the fingerprint cache's words and result.
    thread_local std::vector<uint64_t> mine, theirs;
    StateWords(&mine);
    p.StateWords(&theirs);
    bool same = mine == theirs && equal(fpc_.w, p.fpc_.w) && Fingerprint() == p.Fingerprint();
    auto same_member = [&same](const auto& x, const auto& y) {
      std::vector<uint8_t> bx, by;
      PackMember(x, &bx);
      PackMember(y, &by);
      same = same && bx == by;
    };
    Table::ObjectMembers(same_member, *this, p);
    Table::RunMembers(same_member, *this, p);
    for (size_t i = 0; same && i < agents_.size(); ++i) {
      same = std::memcmp(&agents_[i], &p.agents_[i], sizeof(AgentState)) == 0;
    }
    PARITY_CHECK(same, "RestoreStep: a step changed state that it did not mark (Exec's accessors)");
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
  Table::ObjectMembers([out](const auto& m) { PackMember(m, out); }, *this);
  Table::RunMembers([out](const auto& m) { PackMember(m, out); }, *this);
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
  if (clusters_.size() != base.clusters_.size() || cp_.size() != base.cp_.size()) {
    Table::ObjectMembers([](auto& d, const auto& s) { CopyMember(d, s); }, *this, base);
  }
  Table::ObjectMembers([&p, end](auto& m) { p = UnpackMember(m, p, end); }, *this);
  Table::RunMembers([&p, end](auto& m) { p = UnpackMember(m, p, end); }, *this);
  outcome_ = Outcome::kRunning;
  const uint64_t steps = result_.steps, events = result_.events;
  result_ = RunResult{};
  result_.outcome = Outcome::kRunning;
  result_.steps = steps;
  result_.events = events;
  PARITY_CHECK(p == end, "Unpack: damaged packed state");
  trace_.clear();
  trace_places_.clear();
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
const std::vector<int64_t>& Engine::param_values() const { return code_->params; }
const ir::BuiltinValues& Engine::agent_builtins(uint32_t a) const { return code_->builtins[a]; }
uint32_t Engine::buffer_base(uint32_t b) const { return code_->buffers[b].base; }
uint32_t Engine::buffer_slot_bytes(uint32_t b) const { return code_->buffers[b].bytes; }
uint32_t Engine::buffer_stages(uint32_t b) const { return code_->buffers[b].stages; }
size_t Engine::in_flight() const { return in_flight_.size() + deferred_.size(); }
const model::MbarrierState& Engine::barrier_state(uint32_t cta_global, uint32_t barrier,
                                                  uint32_t index) const {
  PARITY_CHECK(cta_global < code_->num_ctas && barrier < code_->barrier_base.size() &&
                   index < code_->barrier_size[barrier],
               "barrier_state: out of range");
  return barriers_[static_cast<size_t>(cta_global) * code_->barriers_per_cta +
                   code_->barrier_base[barrier] + index];
}

void Engine::StateWords(std::vector<uint64_t>* out) const {
  // Made from the component table (components.h), as the fingerprint is: per object its
  // number of words and its words; per agent, after its object, its operations as a multiset
  // (their count, then each one's words, sorted: the list order depends on the history, not
  // on the state); then the readback data.
  std::vector<uint64_t>& o = *out;
  o.clear();
  o.push_back(static_cast<uint64_t>(outcome_));
  auto word = [&o](uint64_t v) { o.push_back(v); };
  thread_local std::vector<std::vector<uint64_t>> ops;
  const uint32_t first_agent = layout_.first_agent_object;
  for (uint32_t obj = 0; obj < num_objects(); ++obj) {
    const size_t len_at = o.size();
    o.push_back(0);
    Table::ObjectWords(*this, obj, word);
    o[len_at] = o.size() - len_at - 1;
    if (obj < first_agent) continue;
    const uint32_t a = obj - first_agent;
    ops.clear();
    uint64_t list = 1;
    for (const std::vector<InFlight>* l : {&in_flight_, &deferred_}) {
      for (const InFlight& f : *l) {
        if (f.agent != a) continue;
        std::vector<uint64_t>& w = ops.emplace_back();
        Table::OpWords(f, list, [&w](uint64_t v) { w.push_back(v); });
      }
      ++list;
    }
    std::sort(ops.begin(), ops.end());
    o.push_back(ops.size());
    for (const std::vector<uint64_t>& w : ops) {
      o.push_back(w.size());
      o.insert(o.end(), w.begin(), w.end());
    }
  }
  Table::DataWords(*this, word);
}

uint64_t Engine::StateHash() const {
  thread_local std::vector<uint64_t> words;
  StateWords(&words);
  uint64_t h = 0x243f6a8885a308d3ull;
  for (uint64_t w : words) h = fpmix::Word(h, w);
  return fpmix::Final(h);
}

}  // namespace parity::engine
