#include "verifier/rules.h"

#include <algorithm>
#include <deque>
#include <functional>
#include <map>
#include <set>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <variant>

#include "verifier/check_work.h"
#include "verifier/deadlock.h"
#include "verifier/happens_before.h"
#include "verifier/lifetime.h"
#include "verifier/pdl.h"
#include "verifier/races.h"
#include "verifier/tensormap.h"

namespace parity::verifier {

using trace::EventKind;
using trace::TraceEvent;

model::Severity Finding::level(bool strict) const {
  const model::Severity s = model::CodeSeverity(code());
  return s == model::Severity::kError && strict_only && !strict ? model::Severity::kWarning : s;
}

bool HasErrors(const std::vector<Finding>& findings, bool strict) {
  for (const Finding& f : findings) {
    if (f.level(strict) == model::Severity::kError) return true;
  }
  return false;
}

// ---------------------------------------------------------------------------------------------
// The analysis.

namespace {

using Clock = VectorClock;

// A copy issued and not yet delivered to one destination CTA.
struct PendingCopy {
  uint32_t agent = 0;        // global issuer
  uint32_t cta_global = 0;   // issuer's CTA
  uint32_t pc = 0;
  uint32_t target = 0;       // destination CTA rank (within the cluster)
  bool has_bar_index = false;  // the barrier element is known at issue (st.async; or the slot
  uint32_t bar_index = 0;      // and barrier index are the same expression)
  bool has_buffer = false;   // the destination slot is known (not for st.async)
  uint32_t buffer = 0;
  uint32_t slot = 0;
  size_t issue_event = 0;
  uint32_t clock_id = 0;     // index into Analysis::issue_clocks_
  // The bytes of the slot it writes (Engine::trace_places); not known: the whole slot.
  bool range_known = false;
  int64_t lo = 0, hi = 0;
};

struct SlotState {
  uint32_t cta_global = 0, object = 0, index = 0;
  std::vector<size_t> completions;   // trace index of every completion
  uint32_t last_completer = kNoFindingAgent;  // agent whose arrive completed the last phase
  int64_t last_phase_expected = 0;   // bytes announced in the last completed phase
  bool initialised = false;
  uint32_t init_agent = 0;
  uint32_t init_epoch = 0;
  uint32_t init_pc = 0;
  // Current (incomplete) phase and whole-run byte accounting.
  int64_t phase_expected = 0, phase_delivered = 0;
  int64_t total_expected = 0, total_delivered = 0;
  bool multicast_from_peer = false;  // a multicast delivery from another CTA landed here
  std::map<uint32_t, uint32_t> signallers;  // agent -> last phase it arrived / expected / sent in
  std::set<uint32_t> peer_senders;   // global agents of other CTAs whose bytes landed here
};

struct Read {
  uint32_t epoch = 0;
  size_t event = 0;
  uint32_t pc = 0;
  int64_t lo = 0, hi = 0;  // the bytes of the slot it read
};
struct CopyWrite {
  uint32_t slot_id = 0;   // the barrier slot the bytes completed on
  uint32_t phase = 0;     // phase number current when they landed
  uint32_t agent = 0;     // issuer
  uint32_t pc = 0;
  size_t event = 0;
  bool range_known = false;  // else the whole slot
  int64_t lo = 0, hi = 0;
};
// Whether a read of [lo, hi) and a copy's bytes share a byte: stages that are parts of one
// slot (`tile[0] + s * TILE_BYTES`) are different bytes.
bool Meets(bool copy_known, int64_t copy_lo, int64_t copy_hi, int64_t lo, int64_t hi) {
  return !copy_known || (copy_lo < hi && lo < copy_hi);
}
struct GenericWrite {
  uint32_t agent = 0;
  uint32_t epoch = 0;
  uint32_t pc = 0;
  int64_t lo = 0, hi = 0;  // the bytes of the slot written, [lo, hi)
};
// A cp.async copy (the non-bulk one: per thread, completed through async groups). Its bytes may
// land any time until the issuer observes its completion: a cp.async.wait_group / wait_all of
// the issuer that covers its group (PTX ISA: the writes become visible to the executing thread,
// and to others through that thread's later synchronisation), or the barrier phase on which the
// issuer's cp.async.mbarrier.arrive, which lands after every earlier cp.async of the thread
// completes, arrives.
struct CpCopy {
  uint32_t agent = 0;
  uint32_t pc = 0;
  uint32_t seq = 0;  // the issuer's how-manieth cp.async (from 0)
  bool range_known = false;  // else the whole slot
  int64_t lo = 0, hi = 0;    // the bytes of the slot it writes
};
// A cp.async.wait_group / wait_all that completed groups: every copy of its issuer with a
// sequence number below `upto` has landed, as seen by a thread whose clock of the issuer has
// reached `epoch`. (A thread's copies are numbered in issue order and a group is a contiguous
// run of them, so a group is its end number.)
struct CpWait {
  uint32_t upto = 0;
  uint32_t epoch = 0;
};
// A cp.async.mbarrier.arrive that landed: it covers its issuer's first `upto` copies, and a
// thread that observed `phase` of the barrier slot sees their bytes.
struct CpCover {
  uint32_t upto = 0;
  uint32_t slot_id = 0;
  uint32_t phase = 0;
};
// What each rule needs of a slot's past, per byte range: an access is dropped only when a later
// one of the same kind and agent covers all its bytes (the later one is then the one a check
// must look at: its epoch, sequence number or phase is the newer), so that a check of bytes
// another access left alone still sees the access that wrote or read them.
struct Location {
  std::map<uint32_t, std::vector<Read>> reads;  // by global agent: its last reads, by range
  std::vector<CopyWrite> copies;     // async-proxy copies landed here, the newest per range
  std::vector<GenericWrite> writes;  // generic writes not yet read by an async-proxy store
  // By issuing agent: its cp.async copies here (CpCopy ids), the newest per range.
  std::map<uint32_t, std::vector<uint32_t>> cp_writes;
};
// Whether [lo, hi) contains [in_lo, in_hi).
bool Covers(int64_t lo, int64_t hi, int64_t in_lo, int64_t in_hi) {
  return lo <= in_lo && in_hi <= hi;
}
// A cp.async.mbarrier.arrive in flight: the issuer's clock and the copies it waits for.
struct CpArrive {
  uint32_t slot_id = 0;  // the barrier element it arrives on
  Clock clock;
  uint32_t agent = 0;
  uint32_t upto = 0;  // the cp.async copies its issuer had issued before it
};

class Analysis {
 public:
  Analysis(const ir::Program& program, const engine::Engine& engine,
           std::span<const TraceEvent> trace)
      : p_(program), e_(engine), trace_(trace), pcs_(program), hb_(engine, trace, &program) {}

  std::vector<Finding> Run();

 private:
  // --- identities and clocks (HappensBefore) ---
  uint32_t CtaGlobal(const TraceEvent& ev, uint32_t rank) const { return hb_.CtaGlobal(ev, rank); }
  uint32_t AgentOf(const TraceEvent& ev) const { return hb_.AgentOf(ev); }
  static uint64_t Key(uint64_t a, uint64_t b, uint64_t c = 0) {
    return (a << 40) | (b << 20) | c;
  }
  // The rule state of a barrier slot, numbered as HappensBefore numbers it.
  uint32_t SlotId(uint32_t cta_global, uint32_t object, uint32_t index) {
    const uint32_t id = hb_.Slot(cta_global, object, index);
    while (slots_.size() <= id) {
      const auto n = static_cast<uint32_t>(slots_.size());
      SlotState s;
      s.cta_global = hb_.slot_cta(n);
      s.object = hb_.slot_object(n);
      s.index = hb_.slot_index(n);
      slots_.push_back(std::move(s));
    }
    return id;
  }
  uint32_t L(uint32_t agent) const { return hb_.AgentComponent(agent); }
  uint32_t Comp(uint32_t slot_id) const { return hb_.SlotComponent(slot_id); }
  uint32_t Own(uint32_t agent) const { return hb_.Own(agent); }
  const Clock& ClockOf(uint32_t agent) const { return hb_.clock(agent); }
  uint32_t Completed(uint32_t slot_id) const { return hb_.completed(slot_id); }
  uint32_t Rank(uint32_t cta_global) const { return cta_global % cluster_size_; }
  uint32_t Role(uint32_t agent) const { return e_.agent_info(agent).role; }

  void Setup();
  void Step(size_t i, const TraceEvent& ev);
  void EndOfRun();

  // Event handlers.
  void OnBarrierSignal(size_t i, const TraceEvent& ev, uint32_t agent, const Clock& clock);
  void OnIssue(size_t i, const TraceEvent& ev, uint32_t a);
  void OnDelivery(size_t i, const TraceEvent& ev);
  void OnPhaseComplete(size_t i, const TraceEvent& ev);
  void OnUse(size_t i, const TraceEvent& ev, uint32_t a);
  // A store of `src` (one of its slots; `bytes` read from its offset) issued by agent a.
  void OnStoreIssue(size_t i, const TraceEvent& ev, uint32_t a, const ir::BufferRef& src,
                    int64_t bytes);
  // `src`'s offset for agent a when it reads no variable (params and builtins, as
  // `C[0] + agent * HALF`); -1 when only the agent's variables know it.
  int64_t ConstOffset(ir::ExprId e, uint32_t a) const;
  void OnCpAsyncIssue(size_t i, const TraceEvent& ev, uint32_t a);
  void OnCpAsyncWaitEnd(const TraceEvent& ev, uint32_t a);
  // cp.async.commit_group: agent a's open copies become its newest group.
  void CpCommit(uint32_t a) { cp_groups_[a].push_back(cp_issued_[a]); }
  // Whether copy c is complete for a thread whose clock is `k`.
  bool CpCopyVisible(const CpCopy& c, const Clock& k) const;
  void CheckInitOrder(size_t i, uint32_t slot_id, uint32_t user, const Clock& clock,
                      uint32_t pc, const char* what);
  // P2006 for an init not made visible to the async proxy before a copy's complete_tx on it.
  void CheckInitProxy(size_t i, uint32_t slot_id, uint32_t issuer, const Clock& issue,
                      const Clock& weak_issue, uint32_t pc);

  void Report(model::Code code, int64_t value, int64_t limit, std::string message,
              uint32_t agent, uint32_t pc, size_t event, uint32_t cta_global, bool is_buffer,
              uint32_t object, uint32_t index, uint32_t other = kNoFindingAgent);
  std::string Agent(uint32_t a) const { return AgentLabel(p_, e_, a); }
  std::string Bar(uint32_t slot_id) const {
    const SlotState& s = slots_[slot_id];
    return BarrierLabel(p_, s.object, s.index, s.cta_global);
  }
  std::string Buf(uint32_t cta_global, uint32_t buffer, uint32_t slot) const {
    std::string name = buffer < p_.buffers.size() ? p_.buffers[buffer].name : "buffer";
    return name + "[" + std::to_string(slot) + "] of CTA " + std::to_string(cta_global);
  }
  std::string At(uint32_t agent, uint32_t pc) const {
    return pcs_.where(Role(agent), pc).ToString();
  }

  const ir::Program& p_;
  const engine::Engine& e_;
  std::span<const TraceEvent> trace_;
  // Whether Engine::trace_places describe trace_ (the engine's own recorded run).
  bool places_ok_ =
      trace_.data() == e_.trace().data() && trace_.size() <= e_.trace_places().size();
  PcMap pcs_;
  uint32_t num_agents_ = 0;
  uint32_t cluster_size_ = 1;
  HappensBefore hb_;
  std::vector<SlotState> slots_;                   // by HappensBefore's slot number
  std::vector<Clock> issue_clocks_;                // snapshots at copy issue
  // ... of HappensBefore::weak_clock: a read that reaches the issue through a release/acquire
  // pair too narrow in scope is still done before the copy writes (races.cc, NeedsStrong).
  std::vector<Clock> weak_issue_clocks_;
  std::vector<uint8_t> issue_refs_;                // per issue: destinations not yet delivered
  // Copies in flight by (issuing CTA, instruction, destination rank), in issue order.
  std::unordered_map<uint64_t, std::deque<PendingCopy>> pending_;
  std::map<uint64_t, std::deque<CpArrive>> cp_arrives_;  // cp.async.mbarrier.arrive by (cta, pc)
  std::vector<CpCopy> cp_copies_;
  // Per agent: the ends (CpWait::upto) of its committed groups that it has not waited for,
  // oldest first, and its group waits.
  std::vector<std::deque<uint32_t>> cp_groups_;
  std::vector<std::vector<CpWait>> cp_waits_;
  std::vector<uint32_t> cp_issued_;               // per agent: cp.async copies issued
  // Per agent, per barrier slot: its landed cp.async arrives in landing order, `upto` the most
  // copies any of them covers so far (CpCopyVisible).
  std::vector<std::map<uint32_t, std::vector<CpCover>>> cp_covers_;
  std::vector<std::vector<uint32_t>> fence_init_;  // per agent: epochs of fence.mbarrier_init
  // ... and, per such fence, the agent's barrier.cluster arrives made before it and its pc.
  std::vector<std::vector<uint32_t>> fence_init_arrives_;
  std::vector<std::vector<uint32_t>> fence_init_pc_;
  std::vector<std::vector<uint32_t>> fence_proxy_;  // per agent: epochs of fence.proxy.async
  std::map<uint64_t, Location> locations_;         // (cta, buffer, slot)
  std::unordered_map<uint64_t, size_t> last_touch_;  // (agent, slot) -> its last signal there
  std::vector<bool> exited_;
  std::vector<size_t> exit_event_;
  std::set<std::tuple<int, uint64_t, uint64_t>> reported_;
  std::vector<Finding> findings_;
};

void Analysis::Setup() {
  num_agents_ = hb_.num_agents();
  cluster_size_ = hb_.cluster_size();
  // HappensBefore numbered every slot the trace names: the rule state of each.
  for (uint32_t id = 0; id < hb_.num_slots(); ++id) {
    SlotId(hb_.slot_cta(id), hb_.slot_object(id), hb_.slot_index(id));
  }
  fence_init_.resize(num_agents_);
  fence_init_arrives_.resize(num_agents_);
  fence_init_pc_.resize(num_agents_);
  cp_groups_.resize(num_agents_);
  cp_waits_.resize(num_agents_);
  cp_issued_.assign(num_agents_, 0);
  cp_covers_.resize(num_agents_);
  fence_proxy_.resize(num_agents_);
  exited_.assign(num_agents_, false);
  exit_event_.assign(num_agents_, 0);
}

void Analysis::Report(model::Code code, int64_t value, int64_t limit, std::string message,
                      uint32_t agent, uint32_t pc, size_t event, uint32_t cta_global,
                      bool is_buffer, uint32_t object, uint32_t index, uint32_t other) {
  const uint64_t obj = Key(cta_global, (is_buffer ? 0x80000 : 0) | object, index);
  const uint64_t who = (static_cast<uint64_t>(agent) << 32) | other;
  if (!reported_.emplace(static_cast<int>(code), obj, who).second) return;
  Finding f;
  f.violation = model::Violation{code, value, limit};
  f.message = std::move(message);
  f.agent = agent;
  f.other_agent = other;
  f.cta = cta_global;
  f.object_is_buffer = is_buffer;
  f.object = object;
  f.index = index;
  f.pc = pc;
  f.event = event;
  if (agent != kNoFindingAgent) {
    f.where = pcs_.where(Role(agent), pc);
  } else {
    f.where.file = p_.file;
  }
  findings_.push_back(std::move(f));
}

// Remote use of a barrier (remote arrive, copy bytes landing in another CTA): PTX ISA
// fence.mbarrier_init: the init must be followed by fence.mbarrier_init.release.cluster in the
// initialising thread, and that fence must happen before the remote use. The fence releases the
// inits by itself, so with a later barrier.cluster.arrive, .relaxed or not, and the peer's
// barrier.cluster.wait (.acquire by default) it orders them (happens_before.h: the init
// component); a .release arrive, or any other release/acquire chain, carries it too.
void Analysis::CheckInitOrder(size_t i, uint32_t slot_id, uint32_t user, const Clock& clock,
                              uint32_t pc, const char* what) {
  const SlotState& s = slots_[slot_id];
  if (!s.initialised) return;  // M1001 is the engine's (the model rejects it)
  const uint32_t init = s.init_agent;
  const std::vector<uint32_t>& fences = fence_init_[init];
  auto it = std::upper_bound(fences.begin(), fences.end(), s.init_epoch);
  const bool fenced = it != fences.end();
  const uint32_t ic = hb_.InitComponent(init);
  const bool ordered =
      fenced && (*it <= clock[L(init)] || (ic != HappensBefore::kNone && *it <= clock[ic]));
  if (ordered) return;
  std::string why;
  if (!fenced) {
    why = ", whose init by " + Agent(init) + " (at " + At(init, s.init_pc) +
          ") is not followed by a fence.mbarrier_init of that thread before this";
  } else {
    const size_t f = static_cast<size_t>(it - fences.begin());
    const bool arrived_after = hb_.cluster_arrives(init) > fence_init_arrives_[init][f];
    why = ", but the init's fence.mbarrier_init by " + Agent(init) + " (at " +
          At(init, fence_init_pc_[init][f]) + ") does not happen before it: " +
          (arrived_after
               ? Agent(init) + " arrives at the cluster barrier after the fence, but " +
                     Agent(user) + " has not passed the matching cluster.wait before this"
               : "no cluster.arrive of " + Agent(init) +
                     " follows the fence before this (nor another release it synchronises "
                     "with)");
  }
  Report(model::Code::kRemoteBeforeInit, 0, 0,
         std::string(what) + " by " + Agent(user) + " acts on " + Bar(slot_id) + why, user, pc,
         i, s.cta_global, false, s.object, s.index, init);
}

// PTX ISA (Memory Consistency Model, the async proxy): "Accessing the same memory location
// across multiple proxies needs a cross-proxy fence." mbarrier.init is a generic-proxy write of
// the barrier; the complete_tx of a TMA / bulk / st.async copy is the async proxy's access of
// it. The CUDA C++ Programming Guide's TMA example puts fence.proxy.async.shared::cta right
// after the init ("make initialized barrier visible in async proxy"); CUTLASS
// (PipelineTmaAsync: fence_barrier_init), the CuTe DSL (mbarrier_init_fence) and DeepGEMM use
// fence.mbarrier_init.release.cluster there, which production relies on on every Hopper
// kernel, so either fence by the initialising thread, after the init and happening before the
// copy's issue, is accepted. Neither is P2006 (FlashKDA #24 item 3).
void Analysis::CheckInitProxy(size_t i, uint32_t slot_id, uint32_t issuer, const Clock& issue,
                              const Clock& weak_issue, uint32_t pc) {
  const SlotState& s = slots_[slot_id];
  if (!s.initialised || s.init_agent >= num_agents_) return;
  const uint32_t seen = std::max(issue[L(s.init_agent)], weak_issue[L(s.init_agent)]);
  for (const std::vector<uint32_t>* fences : {&fence_init_[s.init_agent],
                                              &fence_proxy_[s.init_agent]}) {
    auto it = std::upper_bound(fences->begin(), fences->end(), s.init_epoch);
    if (it != fences->end() && *it <= seen) return;
  }
  // The fence.mbarrier_init releases the inits by itself, so a later relaxed cluster arrive and
  // the issuer's cluster.wait order it before the issue as they do for CheckInitOrder (the init
  // component): CUTLASS's and DeepGEMM's fence_barrier_init(); cluster_arrive_relaxed();
  // cluster_wait() before the producer's first TMA.
  const uint32_t ic = hb_.InitComponent(s.init_agent);
  if (ic != HappensBefore::kNone) {
    const std::vector<uint32_t>& fences = fence_init_[s.init_agent];
    auto it = std::upper_bound(fences.begin(), fences.end(), s.init_epoch);
    if (it != fences.end() && *it <= std::max(issue[ic], weak_issue[ic])) return;
  }
  Report(model::Code::kProxyFenceMissing, 0, 0,
         "the complete_tx of the copy issued by " + Agent(issuer) + " acts on " + Bar(slot_id) +
             " through the async proxy, but its init by " + Agent(s.init_agent) +
             " (a generic-proxy write) is not followed by fence.proxy.async or "
             "fence.mbarrier_init of that thread that happens before the copy's issue",
         issuer, pc, i, s.cta_global, false, s.object, s.index, s.init_agent);
}

void Analysis::OnBarrierSignal(size_t i, const TraceEvent& ev, uint32_t agent,
                               const Clock& clock) {
  const uint32_t id = SlotId(CtaGlobal(ev, ev.target_cta), ev.object, ev.index);
  SlotState& s = slots_[id];
  // An agent's own signal is HappensBefore::Step's; a landing deferred arrive releases nothing
  // of its issuer (happens_before.h).
  const uint32_t completed = Completed(id);
  if (agent != kNoFindingAgent) s.signallers[agent] = completed;
  const auto k = static_cast<EventKind>(ev.kind);
  // P2002, arrive before expect_tx: the agent's own arrive completed the last phase with no bytes
  // announced, and its very next signal on the barrier announces bytes (now for the next phase).
  if (k == EventKind::kExpectTx && agent != kNoFindingAgent && !s.completions.empty() &&
      s.last_completer == agent && s.last_phase_expected == 0) {
    auto t = last_touch_.find(Key(agent, id));
    if (t != last_touch_.end() && t->second + 1 == s.completions.back()) {
      Report(model::Code::kEarlyPhaseCompletion, ev.value, 1,
             Agent(agent) + " announces " + std::to_string(ev.value) + " bytes on " + Bar(id) +
                 " right after its own arrive completed phase " +
                 std::to_string(completed - 1) +
                 " with no bytes expected: the bytes are credited to phase " +
                 std::to_string(completed) +
                 " and the waiters of the completed phase may read before they land (use "
                 "arrive.expect_tx, or expect_tx before the arrive)",
             agent, ev.pc, i, s.cta_global, false, s.object, s.index);
    }
  }
  if (agent != kNoFindingAgent) last_touch_[Key(agent, id)] = i;
  int64_t expected = 0;
  if (k == EventKind::kArriveExpectTx) expected = ev.value2;
  if (k == EventKind::kExpectTx) expected = ev.value;
  s.phase_expected += expected;
  s.total_expected += expected;
  if (k == EventKind::kCompleteTx) {
    s.phase_delivered += ev.value;
    s.total_delivered += ev.value;
  }
  if (agent != kNoFindingAgent && (ev.flags & trace::kFlagRemote) != 0) {
    CheckInitOrder(i, id, agent, clock, ev.pc, "a remote mbarrier operation");
  }
}

void Analysis::OnIssue(size_t i, const TraceEvent& ev, uint32_t a) {
  const auto k = static_cast<EventKind>(ev.kind);
  const ir::Op* op = pcs_.op(Role(a), ev.pc);
  PendingCopy c;
  c.agent = a;
  c.cta_global = CtaGlobal(ev, ev.cta);
  c.pc = ev.pc;
  c.issue_event = i;
  c.clock_id = static_cast<uint32_t>(issue_clocks_.size());
  if (places_ok_) {
    const engine::Engine::TracePlace& at = e_.trace_places()[i];
    c.range_known = true;
    c.lo = at.offset;
    c.hi = c.lo + ev.value;
  }
  int64_t mask = -1;
  if (k == EventKind::kTmaIssue) {
    const auto* load = op ? std::get_if<ir::TmaLoad>(op) : nullptr;
    if (load == nullptr) return;
    c.has_buffer = true;
    c.buffer = load->dst.buffer;
    c.slot = ev.index;
    c.has_bar_index = ir::SameExpr(p_, load->dst.slot, load->bar.index);
    c.bar_index = ev.index;
    if (ev.flags & trace::kFlagMulticast) mask = static_cast<uint16_t>(ev.value2);
  } else if (k == EventKind::kBulkIssue) {
    const auto* load = op ? std::get_if<ir::BulkLoad>(op) : nullptr;
    if (load == nullptr) return;  // a bulk store: OnStoreIssue
    c.has_buffer = true;
    c.buffer = ev.object;
    c.slot = ev.index;
    c.has_bar_index = ir::SameExpr(p_, load->dst.slot, load->bar.index);
    c.bar_index = ev.index;
    if (ev.flags & trace::kFlagMulticast) mask = static_cast<uint16_t>(ev.value2);
  } else {  // kStAsync names the barrier element; the slot only when it is the same expression
    const auto* st = op ? std::get_if<ir::StAsync>(op) : nullptr;
    c.has_bar_index = true;
    c.bar_index = ev.index;
    c.has_buffer = st != nullptr && ir::SameExpr(p_, st->dst.slot, st->bar.index);
    if (c.has_buffer) {
      c.buffer = st->dst.buffer;
      c.slot = ev.index;
    }
  }
  issue_clocks_.push_back(ClockOf(a));
  weak_issue_clocks_.push_back(hb_.weak_clock(a));
  issue_refs_.push_back(0);
  if (mask < 0) {
    c.target = ev.target_cta;
    pending_[Key(c.cta_global, c.pc, c.target)].push_back(c);
    ++issue_refs_.back();
    return;
  }
  for (uint32_t r = 0; r < 16; ++r) {
    if ((mask >> r) & 1) {
      c.target = r;
      pending_[Key(c.cta_global, c.pc, c.target)].push_back(c);
      ++issue_refs_.back();
    }
  }
  if (issue_refs_.back() == 0) {
    Clock().swap(issue_clocks_.back());
    Clock().swap(weak_issue_clocks_.back());
  }
}

void Analysis::OnDelivery(size_t i, const TraceEvent& ev) {
  const uint32_t issuer_cta = CtaGlobal(ev, ev.cta);
  // Match the issue: same issuing CTA, instruction and destination, the same barrier element
  // where the issue names it, and the same slot where the delivery names it (the simulator's
  // do); else prefer the oldest whose slot equals the barrier element (stage-indexed rings), else
  // the oldest. (A TMA issue event does not carry its barrier.)
  // Copies in flight are kept per (issuing CTA, instruction, destination), in issue order, so
  // only those of this instruction are searched.
  auto q = pending_.find(Key(issuer_cta, ev.pc, ev.target_cta));
  static std::deque<PendingCopy> kNone;
  std::deque<PendingCopy>& queue = q == pending_.end() ? kNone : q->second;
  const size_t none = queue.size();
  size_t first = none, exact = none;
  // A delivery that names its slot (trace::kFlagSlot) matches only a copy into that slot.
  const bool named_slot = (ev.flags & trace::kFlagSlot) != 0;
  const engine::Engine::TracePlace* place = places_ok_ ? &e_.trace_places()[i] : nullptr;
  for (size_t j = 0; j < queue.size(); ++j) {
    const PendingCopy& c = queue[j];
    CountWork();
    if (c.has_bar_index && c.bar_index != ev.index) continue;
    // The engine names the issuer: agents of one role run the same statement.
    if (place != nullptr && place->agent != engine::Engine::kNoPlaceAgent &&
        c.agent != place->agent) {
      continue;
    }
    if (place != nullptr && c.range_known && c.has_buffer) {
      // The engine's place names the copy that landed: its slot and offset.
      if (c.slot != place->slot || c.lo != place->offset) continue;
      first = j;
      break;
    }
    if (named_slot && c.has_buffer && c.slot != ev.parity) continue;
    if (first == none) first = j;
    if (c.slot == ev.index) {
      exact = j;
      break;
    }
  }
  const size_t best = exact != none ? exact : first;
  const uint32_t id = SlotId(CtaGlobal(ev, ev.target_cta), ev.object, ev.index);
  SlotState& s = slots_[id];
  s.phase_delivered += ev.value;
  s.total_delivered += ev.value;
  if (ev.cta != ev.target_cta && (ev.flags & trace::kFlagMulticast)) s.multicast_from_peer = true;
  // A piece of a copy (trace::kFlagPiece): its bytes count, the copy stays in flight until the
  // rest lands (which P2002 below then finds landing after the phase completed).
  if (ev.flags & trace::kFlagPiece) return;
  if (best == none) return;  // not matched (a trace from elsewhere): bytes only
  const PendingCopy c = queue[best];
  queue.erase(queue.begin() + static_cast<std::ptrdiff_t>(best));
  // The issue's clock is released with its last destination's delivery.
  const bool last = --issue_refs_[c.clock_id] == 0;
  const Clock issue = last ? std::move(issue_clocks_[c.clock_id]) : issue_clocks_[c.clock_id];
  const Clock weak_issue =
      last ? std::move(weak_issue_clocks_[c.clock_id]) : weak_issue_clocks_[c.clock_id];
  if (last) {
    Clock().swap(issue_clocks_[c.clock_id]);
    Clock().swap(weak_issue_clocks_[c.clock_id]);
  }
  // The complete-tx publishes the copy's own bytes only (happens_before.h): no release here.
  const uint32_t completed = Completed(id);
  s.signallers[c.agent] = completed;
  if (ev.cta != ev.target_cta) s.peer_senders.insert(c.agent);

  // P2002: the phase that was current at the issue completed before these bytes landed.
  const auto later = std::upper_bound(s.completions.begin(), s.completions.end(), c.issue_event);
  const int64_t spilled = s.completions.end() - later;
  if (spilled > 0) {
    Report(model::Code::kEarlyPhaseCompletion, ev.value, spilled,
           std::to_string(ev.value) + " bytes of the copy issued by " + Agent(c.agent) +
               " landed on " + Bar(id) + " in phase " + std::to_string(completed) +
               ", but the phase that was current at the issue (phase " +
               std::to_string(completed - spilled) +
               ") completed without them: its waiters may read the buffer before the bytes "
               "are there, and the bytes are credited to the next phase",
           c.agent, c.pc, i, s.cta_global, false, s.object, s.index);
  }
  if (ev.cta != ev.target_cta) {
    CheckInitOrder(i, id, c.agent, issue, c.pc, "a copy's complete_tx into another CTA");
  }
  // Into another CTA: the init's fence.mbarrier_init and its order before the copy are P2007's.
  if (ev.cta == ev.target_cta) CheckInitProxy(i, id, c.agent, issue, weak_issue, c.pc);
  if (!c.has_buffer) return;
  const uint32_t data_cta = CtaGlobal(ev, ev.target_cta);
  Location& loc = locations_[Key(data_cta, c.buffer, c.slot)];
  // Every read of the copy's bytes must happen before the copy's issue (write-after-read).
  for (const auto& [reader, rs] : loc.reads) {
    for (const Read& r : rs) {
      CountWork();
      if (reader == c.agent || r.epoch <= weak_issue[L(reader)]) continue;
      if (!Meets(c.range_known, c.lo, c.hi, r.lo, r.hi)) continue;
      const bool after_issue = r.event > c.issue_event;
      Report(model::Code::kSharedMemoryRace, 0, 0,
             after_issue
                 ? Agent(reader) + " read " + Buf(data_cta, c.buffer, c.slot) + " (at " +
                       At(reader, r.pc) + ") while the copy issued by " + Agent(c.agent) +
                       " was still writing it: the read is not ordered after the wait on the "
                       "barrier phase on which the bytes complete"
                 : "the copy issued by " + Agent(c.agent) + " overwrites " +
                       Buf(data_cta, c.buffer, c.slot) + " that " + Agent(reader) +
                       " read (at " + At(reader, r.pc) +
                       ") although that read does not happen before the issue: no release of the "
                       "slot by this reader reaches the issuer (or the reader read a stage it "
                       "never waited for)",
             c.agent, c.pc, i, data_cta, true, c.buffer, c.slot, reader);
    }
  }
  // The newest copy of these bytes: older ones whose every byte it rewrites are dropped.
  std::erase_if(loc.copies, [&](const CopyWrite& w) {
    return !c.range_known || (w.range_known && Covers(c.lo, c.hi, w.lo, w.hi));
  });
  loc.copies.push_back(CopyWrite{id, completed, c.agent, c.pc, i, c.range_known, c.lo, c.hi});
}

void Analysis::OnPhaseComplete(size_t i, const TraceEvent& ev) {
  const uint32_t id = SlotId(CtaGlobal(ev, ev.target_cta), ev.object, ev.index);
  SlotState& s = slots_[id];
  s.last_completer = ev.agent != trace::kNoAgent ? AgentOf(ev) : kNoFindingAgent;
  s.last_phase_expected = s.phase_expected;
  s.completions.push_back(i);
  s.phase_expected = 0;
  s.phase_delivered = 0;
}

void Analysis::OnUse(size_t i, const TraceEvent& ev, uint32_t a) {
  // A DSMEM read (`use ... @cta(r)`) reads the target CTA's bytes.
  const uint32_t cta = CtaGlobal(ev, ev.target_cta);
  Location& loc = locations_[Key(cta, ev.object, ev.index)];
  const int64_t lo = ev.value2, hi = int64_t{ev.value2} + ev.value;
  for (const CopyWrite& copy : loc.copies) {
    CountWork();
    // An async-proxy write observed on its phase is done for whoever the observer's releases
    // reach, whatever their scopes (races.h: HappensBefore::weak_clock).
    if (copy.agent == a || !Meets(copy.range_known, copy.lo, copy.hi, lo, hi) ||
        hb_.weak_clock(a)[Comp(copy.slot_id)] >= copy.phase + 1) {
      continue;
    }
    Report(model::Code::kSharedMemoryRace, 0, 0,
           Agent(a) + " reads " + Buf(cta, ev.object, ev.index) + " whose bytes (copy issued by " +
               Agent(copy.agent) + " at " + At(copy.agent, copy.pc) + ") complete on phase " +
               std::to_string(copy.phase) + " of " + Bar(copy.slot_id) +
               ", but it never waited for that phase",
           a, ev.pc, i, cta, true, ev.object, ev.index, copy.agent);
  }
  for (const auto& [issuer, ids] : loc.cp_writes) {
    for (uint32_t c : ids) {
      const CpCopy& copy = cp_copies_[c];
      CountWork();
      // A cp.async write (generic proxy) reached only through a release/acquire pair too narrow
      // in scope is P2013, the race checker's (races.h), not this rule's.
      if (!Meets(copy.range_known, copy.lo, copy.hi, lo, hi) ||
          CpCopyVisible(copy, hb_.weak_clock(a))) {
        continue;
      }
      Report(model::Code::kSharedMemoryRace, 0, 0,
             Agent(a) + " reads " + Buf(cta, ev.object, ev.index) +
                 " while the cp.async issued by " + Agent(issuer) + " (at " +
                 At(issuer, copy.pc) + ") may still be writing it: " +
                 (issuer == a ? std::string("no cp.async.wait_group / wait_all of this thread "
                                            "covers that copy before the read")
                              : "no cp.async.wait_group / wait_all of the issuer that covers the "
                                "copy happens before the read (a wait, then bar.sync)") +
                 (cp_covers_[issuer].empty()
                      ? ""
                      : ", nor a barrier phase that a later cp.async.mbarrier.arrive of the "
                        "issuer landed in") +
                 ". A copy only joins a group at cp.async.commit_group",
             a, ev.pc, i, cta, true, ev.object, ev.index, issuer);
    }
  }
  std::vector<Read>& mine = loc.reads[a];
  std::erase_if(mine, [&](const Read& r) { return Covers(lo, hi, r.lo, r.hi); });
  mine.push_back(Read{Own(a), i, ev.pc, lo, hi});
}

// An issuer's waits come in program order, so both their `upto` and their `epoch` never
// decrease: the first wait that covers the copy has the smallest epoch of those that do, and one
// binary search answers. Its covers are grouped by barrier slot, in landing order (so in order
// of phase), with the most copies covered so far: the last cover of the slot whose phase the
// reader observed answers, again by binary search.
bool Analysis::CpCopyVisible(const CpCopy& c, const Clock& k) const {
  const std::vector<CpWait>& waits = cp_waits_[c.agent];
  auto w = std::upper_bound(waits.begin(), waits.end(), c.seq,
                            [](uint32_t seq, const CpWait& x) { return seq < x.upto; });
  if (w != waits.end() && k[L(c.agent)] >= w->epoch) return true;
  for (const auto& [slot_id, covers] : cp_covers_[c.agent]) {
    CountWork();
    const uint32_t seen = k[Comp(slot_id)];  // phases of the slot the reader observed
    auto v = std::upper_bound(covers.begin(), covers.end(), seen,
                              [](uint32_t s, const CpCover& x) { return s < x.phase + 1; });
    if (v != covers.begin() && std::prev(v)->upto > c.seq) return true;
  }
  return false;
}

void Analysis::OnCpAsyncIssue(size_t i, const TraceEvent& ev, uint32_t a) {
  const uint32_t cta = CtaGlobal(ev, ev.target_cta);
  Location& loc = locations_[Key(cta, ev.object, ev.index)];
  CpCopy c;
  c.agent = a;
  c.pc = ev.pc;
  c.seq = cp_issued_[a]++;
  c.range_known = places_ok_;
  c.lo = places_ok_ ? e_.trace_places()[i].offset : 0;
  c.hi = c.lo + ev.value;
  // Write after read: every other thread's read of the copy's bytes must happen before the
  // issue.
  for (const auto& [reader, rs] : loc.reads) {
    for (const Read& r : rs) {
      CountWork();
      if (reader == a || r.epoch <= hb_.weak_clock(a)[L(reader)]) continue;
      if (!Meets(c.range_known, c.lo, c.hi, r.lo, r.hi)) continue;
      Report(model::Code::kSharedMemoryRace, 0, 0,
             "the cp.async issued by " + Agent(a) + " overwrites " +
                 Buf(cta, ev.object, ev.index) + " that " + Agent(reader) + " read (at " +
                 At(reader, r.pc) +
                 ") although that read does not happen before the issue (no barrier between "
                 "the reader and the copy's issuer)",
             a, ev.pc, i, cta, true, ev.object, ev.index, reader);
    }
  }
  // This issuer's newest copy of these bytes: its older ones that it rewrites whole are dropped
  // (a later wait or covering arrive that makes this one visible makes them visible too).
  std::vector<uint32_t>& mine = loc.cp_writes[a];
  std::erase_if(mine, [&](uint32_t id) {
    const CpCopy& o = cp_copies_[id];
    return !c.range_known || (o.range_known && Covers(c.lo, c.hi, o.lo, o.hi));
  });
  mine.push_back(static_cast<uint32_t>(cp_copies_.size()));
  cp_copies_.push_back(c);
}

void Analysis::OnCpAsyncWaitEnd(const TraceEvent& ev, uint32_t a) {
  // wait_group N: every committed group but the newest N has completed.
  std::deque<uint32_t>& groups = cp_groups_[a];
  const size_t keep = static_cast<size_t>(std::max<int64_t>(ev.value, 0));
  if (groups.size() <= keep) return;
  const uint32_t upto = groups[groups.size() - keep - 1];
  groups.erase(groups.begin(), groups.end() - static_cast<std::ptrdiff_t>(keep));
  cp_waits_[a].push_back(CpWait{upto, Own(a)});
}

// PTX ISA, memory consistency model (proxies): a TMA/bulk store reads shared memory through the
// async proxy; generic writes must be fenced with fence.proxy.async by their writers first.
void Analysis::OnStoreIssue(size_t i, const TraceEvent& ev, uint32_t a, const ir::BufferRef& src,
                            int64_t bytes) {
  const uint32_t cta = CtaGlobal(ev, ev.cta);
  const uint32_t buffer = src.buffer;
  Location& loc = locations_[Key(cta, buffer, ev.index)];
  // The bytes the store reads: exact as the engine evaluated its operands at this issue
  // (Engine::trace_places: a loop-indexed stage offset alike), else when its offset reads no
  // variable, else the whole slot. A write of other bytes of the slot (two warpgroups writing
  // and storing their own halves) is neither raced nor in need of a fence for this store, and
  // stays for the store that reads it; one whose bytes it reads only in part stays too, for the
  // store of its other bytes.
  const int64_t off = places_ok_ ? e_.trace_places()[i].offset : ConstOffset(src.offset, a);
  const bool exact = off >= 0 && bytes > 0;
  auto reads = [&](const GenericWrite& w) { return !exact || (w.lo < off + bytes && off < w.hi); };
  auto read_whole = [&](const GenericWrite& w) {
    return !exact || Covers(off, off + bytes, w.lo, w.hi);
  };
  for (const GenericWrite& w : loc.writes) {
    CountWork();
    if (!reads(w)) continue;
    const uint32_t seen = ClockOf(a)[L(w.agent)];
    if (seen < w.epoch) {
      Report(model::Code::kSharedMemoryRace, 0, 0,
             "the TMA store issued by " + Agent(a) + " reads " + Buf(cta, buffer, ev.index) +
                 " while the write by " + Agent(w.agent) + " (at " + At(w.agent, w.pc) +
                 ") is not ordered before it (no barrier between writer and storer)",
             a, ev.pc, i, cta, true, buffer, ev.index, w.agent);
      continue;
    }
    const std::vector<uint32_t>& fences = fence_proxy_[w.agent];
    auto it = std::upper_bound(fences.begin(), fences.end(), w.epoch);
    if (it == fences.end() || *it > seen) {
      Report(model::Code::kProxyFenceMissing, 0, 0,
             "the TMA store issued by " + Agent(a) + " reads " + Buf(cta, buffer, ev.index) +
                 " written by " + Agent(w.agent) + " (at " + At(w.agent, w.pc) +
                 ") with ordinary stores, and no fence.proxy.async of that writer after the "
                 "write happens before the store",
             a, ev.pc, i, cta, true, buffer, ev.index, w.agent);
    }
  }
  std::erase_if(loc.writes, read_whole);
}

int64_t Analysis::ConstOffset(ir::ExprId e, uint32_t a) const {
  if (e == ir::kNoExpr) return 0;
  if (a >= hb_.num_agents()) return -1;
  const std::function<bool(ir::ExprId)> reads_var = [&](ir::ExprId x) {
    if (x == ir::kNoExpr) return false;
    const ir::Expr& ex = p_.expr(x);
    return ex.kind == ir::Expr::Kind::kVar || reads_var(ex.a) || reads_var(ex.b) || reads_var(ex.c);
  };
  if (reads_var(e)) return -1;
  ir::EvalEnv env;
  env.params = e_.param_values().data();
  env.num_params = e_.param_values().size();
  env.builtins = &e_.agent_builtins(a);
  ir::EvalFault fault;
  const int64_t v = ir::EvalFast(p_, e, env, &fault);
  return fault.error == ir::EvalError::kNone && v >= 0 ? v : -1;
}

void Analysis::Step(size_t i, const TraceEvent& ev) {
  const auto k = static_cast<EventKind>(ev.kind);
  const bool by_agent = ev.agent != trace::kNoAgent;
  const uint32_t a = by_agent ? AgentOf(ev) : kNoFindingAgent;
  if (by_agent && a == kNoFindingAgent) return;  // not an agent of this engine
  hb_.Step(ev);  // program order and the synchronisation edges
  switch (k) {
    case EventKind::kInit: {
      SlotState& s = slots_[SlotId(CtaGlobal(ev, ev.target_cta), ev.object, ev.index)];
      s.initialised = true;
      s.init_agent = a;
      s.init_epoch = Own(a);
      s.init_pc = ev.pc;
      break;
    }
    case EventKind::kFence:
      if (ev.object == static_cast<uint16_t>(ir::Fence::Kind::kMbarrierInit)) {
        fence_init_[a].push_back(Own(a));
        fence_init_arrives_[a].push_back(hb_.cluster_arrives(a));
        fence_init_pc_[a].push_back(ev.pc);
      } else if (ev.object == static_cast<uint16_t>(ir::Fence::Kind::kProxyAsync)) {
        fence_proxy_[a].push_back(Own(a));
      }
      break;
    case EventKind::kArrive:
      if (by_agent) {
        OnBarrierSignal(i, ev, a, ClockOf(a));
      } else {  // the deferred arrive of cp.async.mbarrier.arrive lands
        // The oldest arrive of this instruction on this barrier element (arrives on different
        // elements land in any order), of the agent whose arrive the engine landed.
        auto& q = cp_arrives_[Key(CtaGlobal(ev, ev.cta), ev.pc)];
        const uint32_t id = SlotId(CtaGlobal(ev, ev.target_cta), ev.object, ev.index);
        const uint32_t by =
            places_ok_ ? e_.trace_places()[i].agent : engine::Engine::kNoPlaceAgent;
        auto it = std::find_if(q.begin(), q.end(), [id, by](const CpArrive& c) {
          CountWork();
          return c.slot_id == id && (by == engine::Engine::kNoPlaceAgent || c.agent == by);
        });
        if (it != q.end()) {
          // Every cp.async the issuer started before the arrive has landed: a thread that
          // observes this phase sees their bytes.
          std::vector<CpCover>& covers = cp_covers_[it->agent][id];
          const uint32_t upto =
              covers.empty() ? it->upto : std::max(it->upto, covers.back().upto);
          covers.push_back(CpCover{upto, id, Completed(id)});
          OnBarrierSignal(i, ev, kNoFindingAgent, it->clock);
          q.erase(it);
        }
      }
      break;
    case EventKind::kArriveExpectTx:
    case EventKind::kExpectTx:
      OnBarrierSignal(i, ev, a, ClockOf(a));
      break;
    case EventKind::kCompleteTx:
      if (by_agent) {
        OnBarrierSignal(i, ev, a, ClockOf(a));
      } else {
        OnDelivery(i, ev);  // st.async landing
      }
      break;
    case EventKind::kTmaDeliver:
      OnDelivery(i, ev);
      break;
    case EventKind::kBulkComplete:  // a bulk load's delivery (stores have their own kinds)
      OnDelivery(i, ev);
      break;
    case EventKind::kCpAsyncArrive:
      cp_arrives_[Key(CtaGlobal(ev, ev.cta), ev.pc)].push_back(
          CpArrive{SlotId(CtaGlobal(ev, ev.target_cta), ev.object, ev.index), ClockOf(a), a,
                   cp_issued_[a]});
      break;
    case EventKind::kCpAsyncIssue:
      OnCpAsyncIssue(i, ev, a);
      break;
    case EventKind::kCpAsyncCommit:
      CpCommit(a);
      break;
    case EventKind::kCpAsyncWaitBegin: {
      // cp.async.wait_all commits the open copies first (PTX ISA); wait_group N does not.
      const ir::Op* op = pcs_.op(Role(a), ev.pc);
      const auto* w = op ? std::get_if<ir::CpAsyncWait>(op) : nullptr;
      if (w != nullptr && w->pending == ir::kNoExpr) CpCommit(a);
      break;
    }
    case EventKind::kCpAsyncWaitEnd:
      OnCpAsyncWaitEnd(ev, a);
      break;
    case EventKind::kPhaseComplete:
      OnPhaseComplete(i, ev);
      break;
    case EventKind::kTmaIssue:
    case EventKind::kStAsync:
      OnIssue(i, ev, a);
      break;
    case EventKind::kBulkIssue: {
      const ir::Op* op = pcs_.op(Role(a), ev.pc);
      if (op && std::holds_alternative<ir::BulkStore>(*op)) {
        OnStoreIssue(i, ev, a, std::get<ir::BulkStore>(*op).src, ev.value);
      } else {
        OnIssue(i, ev, a);
      }
      break;
    }
    case EventKind::kTmaStoreIssue: {
      const ir::Op* op = pcs_.op(Role(a), ev.pc);
      const auto* store = op ? std::get_if<ir::TmaStore>(op) : nullptr;
      if (store) OnStoreIssue(i, ev, a, store->src, ev.value);
      break;
    }
    case EventKind::kUse:
      OnUse(i, ev, a);
      break;
    case EventKind::kWrite: {
      // A DSMEM write (`write ... @cta(r)`) writes the target CTA's bytes. The bytes of older
      // writes that this one rewrites and that happen before it (the agent's own, or another
      // agent's ordered before it) are dropped: per-location coherence (PTX ISA, Memory
      // Consistency Model: coherence order follows causality order) makes this write's value
      // the one a later reader ordered after it sees, so whatever orders and fences this one
      // before a store does so for them. The bytes it leaves are kept (a partial overwrite),
      // as is an older write not ordered before it (its value may still be the last).
      const GenericWrite w{a, Own(a), ev.pc, ev.value2,
                           static_cast<int64_t>(ev.value2) + ev.value};
      std::vector<GenericWrite>& writes =
          locations_[Key(CtaGlobal(ev, ev.target_cta), ev.object, ev.index)].writes;
      std::vector<GenericWrite> kept;
      kept.reserve(writes.size() + 1);
      for (const GenericWrite& o : writes) {
        if (o.epoch > ClockOf(a)[L(o.agent)] || o.hi <= w.lo || w.hi <= o.lo) {
          kept.push_back(o);
          continue;
        }
        if (o.lo < w.lo) kept.push_back(GenericWrite{o.agent, o.epoch, o.pc, o.lo, w.lo});
        if (w.hi < o.hi) kept.push_back(GenericWrite{o.agent, o.epoch, o.pc, w.hi, o.hi});
      }
      kept.push_back(w);
      writes.swap(kept);
      break;
    }
    case EventKind::kExit:
      exited_[a] = true;
      exit_event_[a] = i;
      break;
    default:
      break;
  }
}

void Analysis::EndOfRun() {
  const engine::Outcome outcome = e_.outcome();
  if (outcome != engine::Outcome::kCompleted && outcome != engine::Outcome::kDeadlock) return;
  // P2003 / P2004: the last (incomplete) phase of a barrier ends the run with a byte imbalance.
  // It is a multicast disagreement when the barrier array receives multicast bytes from peer
  // CTAs somewhere in the cluster (this CTA may be the one that nobody sends to) and the CTAs'
  // copies of this barrier element end with different imbalances; the same imbalance in every
  // CTA is a plain tx mismatch (e.g. expect_tx multiplied by the cluster size).
  std::set<std::pair<uint32_t, uint32_t>> multicast_arrays;  // (cluster, barrier decl)
  std::map<std::tuple<uint32_t, uint32_t, uint32_t>, std::set<int64_t>> imbalances;
  for (const SlotState& s : slots_) {
    const uint32_t cluster = s.cta_global / cluster_size_;
    if (s.multicast_from_peer) multicast_arrays.insert({cluster, s.object});
    imbalances[{cluster, s.object, s.index}].insert(s.phase_expected - s.phase_delivered);
  }
  for (uint32_t id = 0; id < slots_.size(); ++id) {
    const SlotState& s = slots_[id];
    if (s.phase_expected == s.phase_delivered) continue;
    const uint32_t cluster = s.cta_global / cluster_size_;
    // CTAs whose copy of the element never appears in the trace count as balanced (0).
    std::set<int64_t> seen = imbalances[{cluster, s.object, s.index}];
    uint32_t present = 0;
    for (uint32_t r = 0; r < cluster_size_; ++r) {
      present += hb_.FindSlot(cluster * cluster_size_ + r, s.object, s.index) != HappensBefore::kNone;
    }
    if (present < cluster_size_) seen.insert(0);
    const bool multicast = multicast_arrays.count({cluster, s.object}) != 0 && seen.size() > 1;
    std::string senders;
    for (uint32_t g : s.peer_senders) senders += (senders.empty() ? "" : ", ") + Agent(g);
    const std::string what =
        Bar(id) + " ends the run in phase " + std::to_string(Completed(id)) + " with " +
        std::to_string(s.phase_expected) + " bytes expected and " +
        std::to_string(s.phase_delivered) + " delivered (" +
        (s.phase_expected > s.phase_delivered ? "its waiters hang"
                                              : "tx-count is negative: bytes nobody announced") +
        ")";
    const uint32_t agent = s.signallers.empty() ? kNoFindingAgent : s.signallers.begin()->first;
    if (multicast) {
      Report(model::Code::kMulticastDisagreement, s.total_expected, s.total_delivered,
             what + "; the cluster's CTAs multicast into this barrier array" +
                 (senders.empty() ? std::string(" but no peer's bytes landed here")
                                  : " (here from " + senders + ")") +
                 ", so they disagree on the masks: over the run " +
                 std::to_string(s.total_expected) + " bytes were expected and " +
                 std::to_string(s.total_delivered) + " delivered",
             agent, 0, trace_.size(), s.cta_global, false, s.object, s.index);
    } else {
      Report(model::Code::kTxMismatch, s.phase_expected, s.phase_delivered, what, agent, 0,
             trace_.size(), s.cta_global, false, s.object, s.index);
    }
    // The location of the barrier's signaller is not meaningful at pc 0: point to the barrier.
    if (!findings_.empty() && findings_.back().cta == s.cta_global &&
        findings_.back().object == s.object && !findings_.back().object_is_buffer) {
      findings_.back().where = p_.barriers[s.object].where;
      if (findings_.back().where.file.empty()) findings_.back().where.file = p_.file;
    }
  }
  if (outcome != engine::Outcome::kDeadlock) return;
  // P2008: a blocked mbarrier waiter whose barrier an exited agent signalled before.
  for (const engine::BlockedAgent& b : e_.result().deadlock.blocked) {
    if (b.wait != engine::WaitKind::kMbarrierParity && b.wait != engine::WaitKind::kMbarrierToken) {
      continue;
    }
    const uint32_t cta_global = e_.agent_info(b.agent).cluster * cluster_size_ + b.cta;
    const uint32_t id = hb_.FindSlot(cta_global, b.barrier, b.barrier_index);
    if (id == HappensBefore::kNone) continue;
    const SlotState& s = slots_[id];
    for (const auto& [g, last_phase] : s.signallers) {
      // An agent that already signalled the current phase did its part for it.
      if (g >= num_agents_ || !exited_[g] || g == b.agent || last_phase >= Completed(id)) continue;
      const TraceEvent& ex = trace_[exit_event_[g]];
      Report(model::Code::kExitWhileAwaited, 1, 0,
             Agent(g) + " exited (at " + At(g, ex.pc) + ") although " + Agent(b.agent) +
                 " waits on " + Bar(id) + " (phase " + std::to_string(Completed(id)) +
                 "), which " + Agent(g) + " signalled in earlier phases",
             g, ex.pc, exit_event_[g], cta_global, false, b.barrier, b.barrier_index, b.agent);
    }
  }
}

std::vector<Finding> Analysis::Run() {
  Setup();
  for (size_t i = 0; i < trace_.size(); ++i) Step(i, trace_[i]);
  EndOfRun();
  return std::move(findings_);
}

}  // namespace

std::vector<Finding> CheckRules(const ir::Program& program, const engine::Engine& engine,
                                std::span<const trace::TraceEvent> trace) {
  Analysis analysis(program, engine, trace);
  std::vector<Finding> findings = analysis.Run();
  // P2009 (verifier/races.h) adds the races that P2005 / P2006 do not already name on a slot.
  std::set<std::tuple<uint32_t, uint32_t, uint32_t>> named;
  for (const Finding& f : findings) {
    if (f.object_is_buffer && (f.code() == model::Code::kSharedMemoryRace ||
                               f.code() == model::Code::kProxyFenceMissing)) {
      named.emplace(f.cta, f.object, f.index);
    }
  }
  for (Finding& f : CheckRaces(program, engine, trace)) {
    if (!named.count({f.cta, f.object, f.index})) findings.push_back(std::move(f));
  }
  // P2010 / P2011 (verifier/lifetime.h): accesses a CTA's exit may overtake.
  for (Finding& f : CheckLifetime(program, engine, trace)) findings.push_back(std::move(f));
  // P2020 / P2009 on global buffers (verifier/pdl.h): programmatic dependent launch.
  for (Finding& f : CheckGlobalRaces(program, engine, trace)) findings.push_back(std::move(f));
  // P2031 / P2032 (verifier/tensormap.h): tensor maps updated while TMAs use them.
  for (Finding& f : CheckTensorMaps(program, engine, trace)) findings.push_back(std::move(f));
  return findings;
}

bool HasExists(const ir::Program& program) {
  for (const ir::Assertion& a : program.assertions) {
    if (a.kind == ir::Assertion::Kind::kExists) return true;
  }
  return false;
}

std::vector<Finding> ExistsFindings(const ir::Program& program, uint64_t held, bool one_run) {
  std::vector<Finding> out;
  uint32_t k = 0;
  for (uint32_t id = 0; id < program.assertions.size(); ++id) {
    const ir::Assertion& a = program.assertions[id];
    if (a.kind != ir::Assertion::Kind::kExists) continue;
    const bool holds = k < 64 && ((held >> k) & 1) != 0;
    ++k;
    if (holds) continue;
    Finding f;
    f.violation = model::Violation{model::Code::kExistsUnsatisfied, id, 0};
    f.message = "exists " + a.text + (a.message.empty() ? "" : " -- " + a.message) +
                (one_run ? " does not hold in the final state of this run"
                         : " holds in the final state of no complete run");
    f.where = a.where;
    if (f.where.file.empty()) f.where.file = program.file;
    out.push_back(std::move(f));
  }
  return out;
}

}  // namespace parity::verifier
