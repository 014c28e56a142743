#include "verifier/report/narrate.h"

#include <sstream>
#include <string_view>

#include "sim/model/codes.h"
#include "sim/trace/trace_file.h"
#include "verifier/deadlock.h"

namespace parity::report {
namespace {

using trace::EventKind;

std::string Who(const ir::Program& program, const engine::Engine& engine,
                const trace::TraceEvent& e) {
  if (e.agent == trace::kNoAgent) return "async";
  for (uint32_t a = 0; a < engine.num_agents(); ++a) {
    const engine::AgentInfo& info = engine.agent_info(a);
    if (info.cluster == e.cluster && info.cta == e.cta && info.index_in_cta == e.agent) {
      return verifier::AgentLabel(program, engine, a);
    }
  }
  return "CTA " + std::to_string(e.cta) + " agent " + std::to_string(e.agent);
}

std::string Bar(const ir::Program& program, const trace::TraceEvent& e) {
  return verifier::BarrierLabel(program, e.object, e.index, e.target_cta);
}

std::string Buf(const ir::Program& program, const trace::TraceEvent& e) {
  std::string name = e.object < program.buffers.size() ? program.buffers[e.object].name
                                                        : "buffer#" + std::to_string(e.object);
  return name + "[" + std::to_string(e.index) + "]";
}

std::string Tm(const ir::Program& program, const trace::TraceEvent& e) {
  return e.object < program.tensor_maps.size() ? program.tensor_maps[e.object].name
                                               : "tensormap#" + std::to_string(e.object);
}

// " multicast mask 0x.." for a multicast copy's issue (value2 holds the mask), else "".
std::string Multicast(const trace::TraceEvent& e) {
  if ((e.flags & trace::kFlagMulticast) == 0) return "";
  std::ostringstream os;
  os << " multicast mask 0x" << std::hex << e.value2;
  return os.str();
}

}  // namespace

std::string EventLine(const ir::Program& program, const engine::Engine& engine,
                      const trace::TraceEvent& e) {
  std::ostringstream os;
  os << Who(program, engine, e) << ": ";
  auto kind = static_cast<EventKind>(e.kind);
  switch (kind) {
    case EventKind::kInit:
      os << "init " << Bar(program, e) << " count " << e.value;
      break;
    case EventKind::kInval:
      os << "inval " << Bar(program, e);
      break;
    case EventKind::kArrive:
      // No "-> pending": the recorded count after an arrive that completes its phase is already
      // the next phase's (reset to the expected count); explain states the state in full.
      os << "arrive " << Bar(program, e) << " count " << e.value;
      break;
    case EventKind::kArriveExpectTx:
      os << "arrive.expect_tx " << Bar(program, e) << " count " << e.value << ", +" << e.value2
         << " tx bytes";
      break;
    case EventKind::kExpectTx:
      os << "expect_tx " << Bar(program, e) << " +" << e.value << " bytes -> tx " << e.value2;
      break;
    case EventKind::kCompleteTx:
      os << "complete_tx " << Bar(program, e) << " -" << e.value << " bytes -> tx " << e.value2;
      break;
    case EventKind::kTmaDeliver:
      os << "TMA bytes land: complete_tx " << Bar(program, e) << " -" << e.value << " bytes";
      break;
    case EventKind::kWaitBegin:
      os << "wait " << Bar(program, e) << " parity " << int{e.parity};
      break;
    case EventKind::kWaitEnd:
      os << "wait " << Bar(program, e) << " parity " << int{e.parity} << " returns";
      break;
    case EventKind::kTestWait:
      os << "test_wait " << Bar(program, e) << " parity " << int{e.parity} << " = " << e.value;
      break;
    case EventKind::kPendingCount:
      os << "pending_count of a state token = " << e.value;
      break;
    case EventKind::kGlobalReadback:
      os << "readback of the bulk.store destination of " << Buf(program, e) << " = class "
         << e.value
         << (e.value == 0   ? " (initial contents)"
             : e.value == 1 ? " (this agent's write data)"
             : e.value == 2 ? " (a mix of old and new)"
                            : " (other data)");
      break;
    case EventKind::kGridDepLaunch:
      os << "griddepcontrol.launch_dependents";
      break;
    case EventKind::kGridDepWait:
      os << "griddepcontrol.wait returns (the primary grid completed: " << e.value
         << " agents exited)";
      break;
    case EventKind::kGlobalUse:
    case EventKind::kGlobalWrite:
      os << (e.kind == static_cast<uint8_t>(EventKind::kGlobalUse) ? "use" : "write")
         << " global "
         << (e.object < program.globals.size() ? program.globals[e.object].name
                                               : "#" + std::to_string(e.object))
         << "[" << e.index << "] (" << e.value << " bytes at +" << e.value2 << ")";
      break;
    case EventKind::kTensormapReplace:
      os << "tensormap.replace " << Tm(program, e) << " (an update of the descriptor TMAs read)";
      break;
    case EventKind::kPhaseComplete:
      os << "PHASE COMPLETE " << Bar(program, e) << ": phase " << e.value
         << " done, now parity " << int{e.phase};
      break;
    case EventKind::kTmaIssue:
      os << "tma.load " << Tm(program, e) << " (" << e.value << " bytes)";
      os << Multicast(e);
      break;
    case EventKind::kTmaStoreIssue:
      os << "tma.store " << Tm(program, e) << " (" << e.value << " bytes)";
      break;
    case EventKind::kUse:
      os << "use " << Buf(program, e) << " (" << e.value << " bytes)";
      break;
    case EventKind::kWrite:
      os << "write " << Buf(program, e) << " (" << e.value << " bytes)";
      break;
    case EventKind::kFence: {
      static const char* const kFences[] = {
          "fence.mbarrier_init.release.cluster", "fence.proxy.async.shared::cta",
          "fence.proxy.async.global",            "fence.acq_rel.cluster",
          "fence.acq_rel.cta",                   "fence.proxy.tensormap::generic.release.gpu",
          "fence.proxy.tensormap::generic.acquire.gpu"};
      os << (e.object < 7 ? kFences[e.object] : "fence");
      if (e.object == static_cast<uint32_t>(ir::Fence::Kind::kProxyTensormapAcquire)) {
        os << " [" << (e.index < program.tensor_maps.size() ? program.tensor_maps[e.index].name
                                                            : "tensormap#" + std::to_string(e.index))
           << "]";
      }
      break;
    }
    case EventKind::kExit:
      os << "exit";
      break;
    case EventKind::kClusterArrive:
      // The event records the arrivals of the current phase after this one: 0 means this
      // arrival was the last one expected and completed the phase (the count is reset).
      os << "barrier.cluster.arrive" << (e.value ? ".relaxed" : "");
      if (e.value2 == 0) {
        os << " (the last arrival expected: the cluster barrier's phase completes)";
      } else {
        os << " (" << e.value2 << " arrived in this phase)";
      }
      break;
    case EventKind::kClusterWaitBegin:
      os << "barrier.cluster.wait (blocks until every agent of the cluster arrived)";
      break;
    case EventKind::kClusterWaitEnd:
      os << "barrier.cluster.wait returns";
      break;
    case EventKind::kTmaStoreRead:
      os << "TMA store has read its source " << Buf(program, e) << " (" << e.value
         << " bytes): the buffer may be written again";
      break;
    case EventKind::kTmaStoreWrite:
      os << "TMA store's " << e.value << " bytes from " << Buf(program, e)
         << " are written to global memory";
      break;
    case EventKind::kBulkIssue:
      os << "cp.async.bulk issued on " << Buf(program, e) << " (" << e.value << " bytes)";
      os << Multicast(e);
      break;
    case EventKind::kBulkComplete:
      os << "bulk copy bytes land: complete_tx " << Bar(program, e) << " -" << e.value
         << " bytes -> tx " << e.value2;
      break;
    case EventKind::kBulkCommit:
      os << "cp.async.bulk.commit_group (this agent's bulk group " << e.value << ")";
      break;
    case EventKind::kBulkWaitBegin:
      os << "cp.async.bulk.wait_group" << (e.value2 ? ".read " : " ") << e.value
         << " (waits until at most " << e.value << " of its bulk groups are still "
         << (e.value2 ? "reading their source" : "pending") << ")";
      break;
    case EventKind::kBulkWaitEnd:
      os << "cp.async.bulk.wait_group" << (e.value2 ? ".read " : " ") << e.value << " returns";
      break;
    case EventKind::kCpAsyncIssue:
      os << "cp.async -> " << Buf(program, e) << " (" << e.value << " bytes)";
      break;
    case EventKind::kCpAsyncComplete:
      os << "cp.async bytes land in " << Buf(program, e) << " (" << e.value << " bytes)";
      break;
    case EventKind::kCpAsyncCommit:
      os << "cp.async.commit_group (this agent's cp.async group " << e.value << ")";
      break;
    case EventKind::kCpAsyncWaitBegin:
      os << "cp.async.wait_group " << e.value << " (waits until at most " << e.value
         << " of its cp.async groups are pending)";
      break;
    case EventKind::kCpAsyncWaitEnd:
      os << "cp.async.wait_group " << e.value << " returns";
      break;
    case EventKind::kCpAsyncArrive:
      os << "cp.async.mbarrier.arrive" << (e.value ? ".noinc " : " ") << Bar(program, e)
         << " (the arrive happens once this agent's earlier cp.async copies have landed)";
      break;
    case EventKind::kStAsync:
      os << "st.async " << e.value << " bytes, complete_tx on " << Bar(program, e)
         << " when they land";
      break;
    case EventKind::kNamedBarrierArrive:
    case EventKind::kNamedBarrierSyncBegin:
      os << (kind == EventKind::kNamedBarrierArrive ? "bar.arrive " : "bar.sync ")
         << ir::NamedBarrierName(program, e.object) << ", " << e.value << " threads";
      if (e.value2 == 0) {
        os << " (all arrived: the barrier completes)";
      } else {
        os << " (" << e.value2 << " of " << e.value << " arrived";
        if (kind == EventKind::kNamedBarrierSyncBegin) os << "; blocks until all have";
        os << ")";
      }
      break;
    case EventKind::kNamedBarrierSyncEnd:
      os << "bar.sync " << ir::NamedBarrierName(program, e.object) << " returns";
      break;
    case EventKind::kWaitTimeout:
      os << "wait " << Bar(program, e) << " parity " << int{e.parity}
         << " timed out (the GPU's bounded wait gave up: the phase never completed)";
      break;
    case EventKind::kViolation: {
      // The level of the rule (sim/model/codes.h), as check, JSON and SARIF give it: a note
      // (M1009) is no violation. The mbarrier rules name the barrier they are about.
      model::Violation v{static_cast<model::Code>(e.value), e.value2, 0};
      const model::Severity level = model::CodeSeverity(v.code);
      os << (level == model::Severity::kError     ? "VIOLATION "
             : level == model::Severity::kWarning ? "warning "
                                                  : "note ")
         << model::CodeId(v.code) << " " << model::CodeTitle(v.code);
      const std::string_view id = model::CodeId(v.code);
      if (!id.empty() && id[0] == 'M' && v.code != model::Code::kMbarrierPendingCountToken &&
          e.object < program.barriers.size()) {
        os << " (" << Bar(program, e) << ")";
      }
      break;
    }
    default:
      os << trace::FormatEvent(e);
      break;
  }
  return os.str();
}

std::string ViolationText(const ir::Program& program, const engine::ViolationInfo& v) {
  std::string text = model::Describe(v.violation);
  const std::string heading = std::string(model::CodeId(v.violation.code)) + " " +
                              std::string(model::CodeSlug(v.violation.code)) + ": ";
  if (text.rfind(heading, 0) == 0) text.erase(0, heading.size());
  // A user assertion: its text and message, which only the program holds (value = its index).
  if ((v.violation.code == model::Code::kAssertionFailed ||
       v.violation.code == model::Code::kExistsUnsatisfied) &&
      v.violation.value >= 0 &&
      static_cast<size_t>(v.violation.value) < program.assertions.size()) {
    const ir::Assertion& a = program.assertions[static_cast<size_t>(v.violation.value)];
    const char* word = a.kind == ir::Assertion::Kind::kAssert   ? "assert"
                       : a.kind == ir::Assertion::Kind::kForall ? "forall"
                                                                : "exists";
    text = std::string(word) + " " + a.text + (a.message.empty() ? "" : " -- " + a.message);
    if (v.violation.code == model::Code::kAssertionFailed) {
      text += a.kind == ir::Assertion::Kind::kAssert
                  ? " is false here (CTA " + std::to_string(v.violation.limit) + ")"
                  : " is false in the final state of this run (CTA " +
                        std::to_string(v.violation.limit) + ")";
    } else {
      text += " holds in no final state of a complete run";
    }
  }
  // The mbarrier rules report on the barrier element their operation targets (the violation
  // event's object, index and target CTA: sim/engine/exec_sync.cc); M1013's token names none.
  const std::string_view id = model::CodeId(v.violation.code);
  if (!id.empty() && id[0] == 'M' && v.violation.code != model::Code::kMbarrierPendingCountToken &&
      v.event.object < program.barriers.size()) {
    text = Bar(program, v.event) + ": " + text;
  }
  // The named-barrier rules (S1002..S1004) on a barrier the schedule named say its name (the
  // event's object is the id; an id outside 0..15, S1001, has no name).
  const bool named_rule = v.violation.code == model::Code::kNamedBarrierCountAlign ||
                          v.violation.code == model::Code::kNamedBarrierCountMismatch ||
                          v.violation.code == model::Code::kNamedBarrierOverArrival;
  const std::string name = ir::NamedBarrierName(program, v.event.object);
  if (named_rule && name != std::to_string(v.event.object)) {
    for (const std::string said : {"a named barrier", "named barrier"}) {
      if (const size_t at = text.find(said); at != std::string::npos) {
        text.replace(at, said.size(), "named barrier " + name);
        break;
      }
    }
  }
  return text;
}

namespace {

constexpr char kPhasesRule[] =
    "an mbarrier counts phases from 0. A phase completes when its pending count (the arrivals "
    "still expected) is 0 and its tx-count (bytes announced by expect_tx that have not landed) "
    "is 0; then the phase number goes up by one, so the parity (its low bit) flips, and the "
    "pending count is reset to the expected count.";
constexpr char kParityRule[] =
    "a parity wait asks about one of two phases: the current one or the immediately preceding "
    "one, whichever has that parity. The current phase is by definition not complete, so a wait "
    "for its parity blocks until it completes; the other parity names the preceding phase, which "
    "is complete, so that wait returns at once (on a fresh barrier in phase 0, parity 1 names "
    "'the phase before phase 0' and passes at once). A parity cannot name an older phase: a wait "
    "two phases behind aliases the current one.";
constexpr char kTestWaitRule[] =
    "test_wait asks the same question as a wait without blocking: 1 when the parity names the "
    "preceding phase (complete), 0 when it names the current phase (not complete yet).";
constexpr char kTxRule[] =
    "expect_tx raises the tx-count by the bytes the phase must still receive; each complete_tx "
    "(a TMA, bulk copy or st.async landing its bytes) lowers it. A phase cannot complete while "
    "the tx-count is not 0, even with every arrival in; it goes negative when bytes land before "
    "their expect_tx.";
constexpr char kRemoteRule[] =
    "an arrive or a copy may act on a barrier of another CTA of the cluster (shared::cluster "
    "address): the state that changes is that CTA's barrier, and only that CTA's agents can wait "
    "on it.";
constexpr char kMulticastRule[] =
    "a multicast copy writes the same bytes to every CTA of its mask, at the same offsets, and "
    "completes tx on each destination CTA's barrier at the same offset: one issue, one delivery "
    "per destination.";
constexpr char kGroupsRule[] =
    "every copy an agent issued since its last commit forms one group; a later wait_group N "
    "waits until at most the N newest groups are pending.";
constexpr char kCpWaitRule[] =
    "after cp.async.wait_group the copies of every older group have landed and are visible to "
    "this agent; other agents see them only after a barrier (e.g. bar.sync).";
constexpr char kNamedRule[] =
    "bar.sync waits until the barrier's thread count has arrived; bar.arrive arrives without "
    "waiting.";
constexpr char kStAsyncRule[] =
    "st.async bytes go to the target CTA's shared memory; its barrier must expect them "
    "(expect_tx) in the same phase; if they land first, its tx-count is negative until the "
    "expect_tx.";

std::string Plural(int64_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

}  // namespace

std::string Narration::Text() const {
  std::ostringstream os;
  std::string num = std::to_string(number);
  if (num.size() < 4) num.insert(0, 4 - num.size(), ' ');
  os << num << ". " << line;
  for (const std::string& s : sentences) os << "\n      " << s;
  for (const Rule& r : rules) os << "\n      rule (" << r.concept_name << "): " << r.text;
  return os.str();
}

Narrator::Narrator(const ir::Program& program, const engine::Engine& engine)
    : program_(program), engine_(engine), pcs_(program) {
  for (uint32_t a = 0; a < engine.num_agents(); ++a) {
    const engine::AgentInfo& info = engine.agent_info(a);
    role_[{static_cast<uint16_t>(info.cluster), static_cast<uint8_t>(info.cta),
           static_cast<uint16_t>(info.index_in_cta)}] = info.role;
  }
}

model::MbarrierState Narrator::State(uint16_t cluster, uint8_t cta, uint16_t barrier,
                                     uint16_t index) const {
  auto it = bars_.find({cluster, cta, barrier, index});
  return it == bars_.end() ? model::MbarrierState{} : it->second;
}

std::string Narrator::Label(const BarKey& k) const {
  return verifier::BarrierLabel(program_, std::get<2>(k), std::get<3>(k), std::get<1>(k));
}

std::string Narrator::Who(const AgentKey& k) const {
  for (uint32_t a = 0; a < engine_.num_agents(); ++a) {
    const engine::AgentInfo& info = engine_.agent_info(a);
    if (info.cluster == std::get<0>(k) && info.cta == std::get<1>(k) &&
        info.index_in_cta == std::get<2>(k)) {
      return verifier::AgentLabel(program_, engine_, a);
    }
  }
  return "CTA " + std::to_string(std::get<1>(k)) + " agent " + std::to_string(std::get<2>(k));
}

// "full[0] of CTA 0 is now in phase 1 (parity 1): 1 of 1 arrivals still expected, tx-count 0".
std::string Narrator::StateText(const BarKey& k) const {
  const model::MbarrierState s = State(std::get<0>(k), std::get<1>(k), std::get<2>(k),
                                       std::get<3>(k));
  std::ostringstream os;
  os << Label(k);
  if (s.life == model::MbarrierLife::kUninitialized) return os.str() + " is not initialised";
  if (s.life == model::MbarrierLife::kInvalidated) return os.str() + " is invalidated";
  os << " is now in phase " << s.phase << " (parity " << s.parity() << "): ";
  if (s.pending_count == 0) {
    os << "every arrival is in";
  } else {
    os << Plural(s.pending_count, "arrival", "arrivals") << " of " << s.expected_count
       << " still expected";
  }
  os << ", tx-count " << s.tx_count;
  if (s.tx_count > 0) os << " (bytes still to land)";
  if (s.tx_count < 0) os << " (bytes landed before their expect_tx)";
  return os.str();
}

void Narrator::Concept(Narration& n, const std::string& name, const std::string& rule) {
  if (!concepts_.insert(name).second) return;
  n.rules.push_back({name, rule});
}

model::MbarrierArriveResult Narrator::ApplyArrive(const trace::TraceEvent& e,
                                                  model::MbarrierState& s) {
  if (e.agent == trace::kNoAgent) return model::MbarrierAsyncArriveLand(s);  // cp.async's arrive
  auto r = role_.find({e.cluster, e.cta, e.agent});
  const ir::Op* op = r == role_.end() ? nullptr : pcs_.op(r->second, e.pc);
  const auto* arrive = op == nullptr ? nullptr : std::get_if<ir::MbarrierArrive>(op);
  if (arrive != nullptr && arrive->kind == ir::MbarrierArrive::Kind::kDrop) {
    arrive_form_ = "arrive_drop";
    return model::MbarrierArriveDrop(s, e.value);
  }
  if (arrive != nullptr && arrive->kind == ir::MbarrierArrive::Kind::kNoComplete) {
    arrive_form_ = "arrive.noComplete";
    return model::MbarrierArriveNoComplete(s, e.value);
  }
  return model::MbarrierArrive(s, e.value);
}

Narration Narrator::Next(const trace::TraceEvent& e) {
  Narration n;
  n.number = ++n_;
  n.line = EventLine(program_, engine_, e);
  const auto kind = static_cast<EventKind>(e.kind);
  const BarKey bk{e.cluster, e.target_cta, e.object, e.index};
  const AgentKey ak{e.cluster, e.cta, e.agent};
  model::MbarrierState& st = bars_[bk];
  const model::MbarrierState before = st;
  bool on_barrier = false;
  // The transition the event performed, and whether it completed the phase it was in.
  auto completed = [&](bool phase_completed) {
    on_barrier = true;
    if (!phase_completed) return;
    n.completes_phase = true;
    n.completed_phase = before.phase;
  };
  switch (kind) {
    case EventKind::kInit:
      model::MbarrierInit(st, e.value);
      on_barrier = true;
      Concept(n, "phases", kPhasesRule);
      break;
    case EventKind::kInval:
      model::MbarrierInval(st);
      on_barrier = true;
      break;
    case EventKind::kArrive: {
      arrive_form_ = nullptr;
      completed(ApplyArrive(e, st).phase_completed);
      const size_t at = n.line.find(": arrive ");
      if (arrive_form_ != nullptr && at != std::string::npos) {
        n.line.replace(at + 2, 6, arrive_form_);
        if (std::string(arrive_form_) == "arrive_drop") {
          n.sentences.push_back("arrive_drop lowers the expected count by " +
                                std::to_string(e.value) + " (to " +
                                std::to_string(st.expected_count) +
                                ") for the phases after this one, and arrives in this one.");
        }
      }
      break;
    }
    case EventKind::kArriveExpectTx:
      completed(model::MbarrierArriveExpectTx(st, e.value2, e.value).phase_completed);
      Concept(n, "tx-count", kTxRule);
      break;
    case EventKind::kExpectTx:
      completed(model::MbarrierExpectTx(st, e.value).phase_completed);
      Concept(n, "tx-count", kTxRule);
      break;
    case EventKind::kCompleteTx:
    case EventKind::kTmaDeliver:
    case EventKind::kBulkComplete:
      completed(model::MbarrierCompleteTx(st, e.value).phase_completed);
      Concept(n, "tx-count", kTxRule);
      break;
    case EventKind::kCpAsyncArrive:
      model::MbarrierAsyncArriveIssue(st, e.value != 0);
      on_barrier = true;
      break;
    case EventKind::kPhaseComplete:
      on_barrier = true;
      last_completion_[bk] = n.number;
      break;
    case EventKind::kWaitBegin:
    case EventKind::kWaitEnd:
    case EventKind::kTestWait:
    case EventKind::kWaitTimeout:
      on_barrier = true;
      break;
    default:
      break;
  }
  if ((e.flags & trace::kFlagRemote) != 0 || (on_barrier && e.target_cta != e.cta &&
                                               e.agent != trace::kNoAgent)) {
    Concept(n, "remote barriers", kRemoteRule);
  }
  if ((e.flags & trace::kFlagMulticast) != 0 &&
      (kind == EventKind::kTmaIssue || kind == EventKind::kBulkIssue)) {
    Concept(n, "multicast", kMulticastRule);
  }
  const std::string label = Label(bk);
  const size_t done_at = last_completion_.count(bk) ? last_completion_[bk] : 0;
  switch (kind) {
    case EventKind::kArrive:
    case EventKind::kArriveExpectTx:
    case EventKind::kExpectTx:
    case EventKind::kCompleteTx:
    case EventKind::kTmaDeliver:
    case EventKind::kBulkComplete:
    case EventKind::kCpAsyncArrive: {
      if (n.completes_phase) {
        n.sentences.push_back("this completes phase " + std::to_string(n.completed_phase) +
                              " of " + label + ": no arrival left to come and tx-count 0 (the "
                              "completion is the next event).");
      } else if (st.life == model::MbarrierLife::kLive && st.pending_count == 0 &&
                 st.tx_count != 0) {
        n.sentences.push_back(
            "every arrival of phase " + std::to_string(st.phase) + " is in, but the phase "
            "completes only when the tx-count is back to 0 (" + std::to_string(st.tx_count) +
            " now).");
      } else if (st.life == model::MbarrierLife::kLive) {
        n.sentences.push_back("phase " + std::to_string(st.phase) + " still needs " +
                              Plural(st.pending_count, "arrival", "arrivals") +
                              (st.tx_count != 0 ? " and the tx-count back to 0" : "") + ".");
      }
      if (kind == EventKind::kCpAsyncArrive) {
        Concept(n, e.value ? "cp.async.mbarrier.arrive.noinc" : "cp.async.mbarrier.arrive",
                e.value ? "with .noinc the later arrive counts toward the barrier's expected "
                          "count (the init count must include it)."
                        : "without .noinc the pending count is raised by one now and lowered by "
                          "the arrive later: it does not count toward the init count.");
      }
      n.sentences.push_back(StateText(bk) + ".");
      break;
    }
    case EventKind::kInit:
    case EventKind::kInval:
      n.sentences.push_back(StateText(bk) + ".");
      break;
    case EventKind::kPhaseComplete: {
      const uint32_t done = st.phase - 1;
      std::string released;
      size_t n_released = 0;
      for (const auto& [agent, w] : waits_) {
        if (w.bar == bk && w.verdict == WaitVerdict::kBlocks && w.parity == (done & 1u)) {
          released += (n_released++ ? ", " : "") + Who(agent);
        }
      }
      n.sentences.push_back(
          "phase " + std::to_string(done) + " is complete; " + StateText(bk) +
          " (the pending count is reset to the expected count).");
      n.sentences.push_back(
          "from now on a wait for parity " + std::to_string(done & 1u) + " returns at once (phase " +
          std::to_string(done) + " is the preceding phase), a wait for parity " +
          std::to_string(st.parity()) + " blocks until phase " + std::to_string(st.phase) +
          " completes" + (n_released ? "; this releases " + released : std::string()) + ".");
      break;
    }
    case EventKind::kWaitBegin: {
      Concept(n, "parity waits", kParityRule);
      OpenWait w{bk, e.parity, WaitVerdict::kNone, n.number};
      if (e.parity != st.parity()) {
        w.verdict = WaitVerdict::kReturnsAtOnce;
        n.sentences.push_back(
            "returns at once: parity " + std::to_string(e.parity) + " names " +
            (st.phase == 0 ? std::string("the phase before phase 0, which counts as complete on "
                                         "a fresh barrier")
                           : "phase " + std::to_string(st.phase - 1) +
                                 ", the preceding phase, complete" +
                                 (done_at ? " since event " + std::to_string(done_at)
                                          : std::string())) +
            ".");
      } else {
        w.verdict = WaitVerdict::kBlocks;
        n.sentences.push_back("blocks: parity " + std::to_string(e.parity) +
                              " names the current phase " + std::to_string(st.phase) +
                              ", not complete yet; the agent spins in try_wait until it "
                              "completes.");
      }
      n.wait = w.verdict;
      n.sentences.push_back(StateText(bk) + ".");
      waits_[ak] = w;
      break;
    }
    case EventKind::kWaitEnd: {
      auto it = waits_.find(ak);
      model::MbarrierTryWaitParity(st, e.parity, false);  // marks the phase observed
      if (it != waits_.end() && it->second.verdict == WaitVerdict::kBlocks) {
        n.wait = WaitVerdict::kReleased;
        n.sentences.push_back("released: the phase it waited for (phase " +
                              std::to_string(st.phase - 1) + ") completed" +
                              (done_at ? " at event " + std::to_string(done_at) : std::string()) +
                              ", after blocking since event " +
                              std::to_string(it->second.begun) + ".");
      } else {
        n.wait = WaitVerdict::kReturnsAtOnce;
        n.sentences.push_back("returns at once, as the wait found its phase complete.");
      }
      if (it != waits_.end()) waits_.erase(it);
      n.sentences.push_back(StateText(bk) + ".");
      break;
    }
    case EventKind::kTestWait: {
      Concept(n, "parity waits", kParityRule);  // test_wait asks the same question
      Concept(n, "test_wait", kTestWaitRule);
      const bool complete = model::MbarrierTestWaitParity(st, e.parity).complete;
      n.wait = complete ? WaitVerdict::kTestTrue : WaitVerdict::kTestFalse;
      n.sentences.push_back(
          complete ? "= 1 because parity " + std::to_string(e.parity) + " names " +
                         (st.phase == 0 ? std::string("the phase before phase 0 (complete on a "
                                                      "fresh barrier)")
                                        : "phase " + std::to_string(st.phase - 1) +
                                              ", the preceding phase, complete") +
                         "."
                   : "= 0 because parity " + std::to_string(e.parity) +
                         " names the current phase " + std::to_string(st.phase) +
                         ", not complete yet.");
      n.sentences.push_back(StateText(bk) + ".");
      break;
    }
    case EventKind::kWaitTimeout: {
      n.wait = WaitVerdict::kTimedOut;
      n.sentences.push_back("the phase the wait asked about never completed before the GPU gave "
                            "up; " + StateText(bk) + ".");
      waits_.erase(ak);
      break;
    }
    case EventKind::kCpAsyncCommit:
    case EventKind::kBulkCommit:
      Concept(n, "async groups", kGroupsRule);
      break;
    case EventKind::kCpAsyncWaitEnd:
      Concept(n, "cp.async.wait_group", kCpWaitRule);
      break;
    case EventKind::kBulkWaitEnd:
      n.sentences.push_back(e.value2 ? ".read: the older groups have finished reading their "
                                       "sources (which may now be overwritten); their writes may "
                                       "still be in flight."
                                     : "the older groups are complete: their writes are done.");
      break;
    case EventKind::kStAsync:
      Concept(n, "st.async", kStAsyncRule);
      break;
    case EventKind::kNamedBarrierSyncBegin:
    case EventKind::kNamedBarrierArrive:
      Concept(n, "named barriers", kNamedRule);
      break;
    default:
      break;
  }
  if (on_barrier) n.claim = BarrierClaim{e.cluster, e.target_cta, e.object, e.index, st};
  return n;
}

std::vector<Narration> NarrateRun(const ir::Program& program, const engine::Engine& engine,
                                  const std::vector<trace::TraceEvent>& events) {
  Narrator narrator(program, engine);
  std::vector<Narration> out;
  out.reserve(events.size());
  for (const trace::TraceEvent& e : events) out.push_back(narrator.Next(e));
  return out;
}

std::string BehaviourPrefix(const ir::Program& program, const engine::Engine& engine,
                            size_t max_events) {
  const auto& t = engine.trace();
  size_t first = (max_events == 0 || t.size() <= max_events) ? 0 : t.size() - max_events;
  std::ostringstream os;
  if (first > 0) {
    os << "  ... " << first << " earlier events (--full prints all)\n";
  }
  for (size_t i = first; i < t.size(); ++i) {
    os << "  " << (i + 1) << ". " << EventLine(program, engine, t[i]) << "\n";
  }
  return os.str();
}

}  // namespace parity::report
