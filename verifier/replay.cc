#include "verifier/replay.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <tuple>
#include <utility>

#include "sim/ir/eval.h"
#include "sim/ir/hash.h"
#include "sim/model/codes.h"
#include "sim/model/mbarrier.h"
#include "verifier/deadlock.h"

namespace parity::verifier {
namespace {

using trace::EventKind;
using trace::TraceEvent;

constexpr uint8_t K(EventKind k) { return static_cast<uint8_t>(k); }

// Kinds an executor may leave out of its trace altogether (it cannot observe them on the device:
// a phase completion or a TMA delivery happens in the memory system, not in a thread).
constexpr EventKind kMaybeUnobserved[] = {
    EventKind::kPhaseComplete,  EventKind::kTmaDeliver,    EventKind::kBulkComplete,
    EventKind::kCpAsyncComplete, EventKind::kTmaStoreRead, EventKind::kTmaStoreWrite,
};

// Kinds whose object/index name an mbarrier (sim/trace/event.h).
bool ActsOnBarrier(uint8_t kind) { return trace::NamesMbarrier(kind); }

bool WaitKindEvent(uint8_t kind) {
  return kind == K(EventKind::kWaitBegin) || kind == K(EventKind::kWaitEnd) ||
         kind == K(EventKind::kTestWait) || kind == K(EventKind::kWaitTimeout);
}

// The trace event kind an in-flight operation produces when it lands (Engine::InFlight's
// table, which the engine's delivery emits); 0 for no such kind.
uint8_t CompletionKind(uint8_t in_flight_kind) {
  using F = engine::Engine::InFlight;
  return in_flight_kind < F::kNumKinds ? K(F::kLandsAs[in_flight_kind]) : 0;
}

class Replayer {
 public:
  Replayer(const ir::Program& program, const std::vector<int64_t>& params,
           const trace::TraceFile& trace, engine::Engine engine, bool keep_model)
      : program_(program),
        params_(params),
        trace_(trace),
        initial_(std::move(engine)),
        keep_model_(keep_model) {
    check_state_ = trace.header.source == "sim";
    trace_violations_ = std::any_of(trace.events.begin(), trace.events.end(), [](const TraceEvent& e) {
      return e.kind == K(EventKind::kViolation);
    });
    if (!check_state_) {
      for (EventKind k : kMaybeUnobserved) {
        bool seen = std::any_of(trace.events.begin(), trace.events.end(),
                                [&](const TraceEvent& e) { return e.kind == K(k); });
        if (!seen) unobserved_[K(k)] = true;
      }
      // Kinds that an agent records when it executes the instruction but that the model also
      // emits for an asynchronous completion (agent kNoAgent): the deferred arrive of
      // cp.async.mbarrier.arrive (PTX ISA, "cp.async.mbarrier.arrive": the arrive-on is
      // triggered when the thread's prior cp.async operations complete) is a kArrive, and the
      // delivery of st.async (PTX ISA, "st.async": complete-tx on the mbarrier of the
      // destination CTA) is a kCompleteTx. Both happen in the memory system, not in a thread,
      // so an executor records only the issue (kCpAsyncArrive, kStAsync). When the trace has
      // no agent-less record of the kind, its async form is unobserved: the agents' own
      // arrives and complete_tx stay observed and matched.
      if (trace.header.source == "kernel") {
        // A kernel records only what the trace API's wrappers record (verifier/kernel_trace.h).
        for (int k = trace::kFirstEventKind; k <= trace::kLastEventKind; ++k) {
          if (!KernelTraceRecords(static_cast<uint8_t>(k))) unobserved_[k] = true;
        }
      }
      for (EventKind k : {EventKind::kArrive, EventKind::kCompleteTx}) {
        bool seen = std::any_of(trace.events.begin(), trace.events.end(), [&](const TraceEvent& e) {
          return e.kind == K(k) && e.agent == trace::kNoAgent;
        });
        if (!seen) unobserved_async_[K(k)] = true;
      }
    }
    for (uint32_t a = 0; a < initial_.num_agents(); ++a) {
      const engine::AgentInfo& info = initial_.agent_info(a);
      agent_of_[{info.cluster, info.cta, info.index_in_cta}] = a;
      cta_global_[{info.cluster, info.cta}] = info.cta_global;
    }
  }

  ReplayResult Run() {
    ReplayResult result;
    for (int k = 0; k < 64; ++k) {
      if (unobserved_[k] || unobserved_async_[k]) {
        result.unobserved_kinds.push_back(static_cast<uint8_t>(k));
      }
    }
    // Depth-first over ambiguous completions: an async event names the issuing CTA and
    // instruction but not the issuing agent (the engine records kNoAgent), so when several
    // agents of a CTA have the same operation in flight each candidate is tried in turn; a
    // (position, state fingerprint) already explored is not explored again. The divergence
    // reported is the one furthest into the trace.
    // Executor traces do not record when an asynchronous operation completed (a TMA delivery,
    // say). The first pass completes such an operation only when the trace cannot go on
    // otherwise (lazily); where that order cannot produce the trace, a second pass completes
    // every one as soon as it is enabled (eagerly): e.g. a TMA whose bytes landed before an
    // arrive that then could not complete the phase (tx-count negative), so a wait timed out.
    std::vector<Path> stack;
    Path best(initial_);
    bool have_best = false;
    bool exhausted = false;
    for (const bool eager : {false, true}) {
      if (eager && (check_state_ || !AnyUnobserved())) break;
      stack.clear();
      visited_.clear();
      stack.push_back(Path(initial_));
      stack.back().eager = eager;
      while (!stack.empty()) {
        Path path = std::move(stack.back());
        stack.pop_back();
        Advance(path, stack);
        if (!path.diverged) {
          CopyCounters(path, result);
          result.model_outcome = path.engine.outcome();
          DescribeModel(path.engine, result);
          result.model_trace = std::move(path.model);
          if (keep_model_) result.model_engine = std::make_shared<engine::Engine>(path.engine);
          result.eager_completions = eager;
          return result;
        }
        if (!have_best || path.divergence.event_number > best.divergence.event_number) {
          best = std::move(path);
          have_best = true;
        }
        if (steps_ > kStepBudget) {
          exhausted = true;
          break;
        }
      }
      if (exhausted) break;
    }
    CopyCounters(best, result);
    result.diverged = true;
    result.divergence = best.divergence;
    result.model_outcome = best.engine.outcome();
    DescribeModel(best.engine, result);
    result.model_trace = std::move(best.model);
    if (keep_model_) result.model_engine = std::make_shared<engine::Engine>(best.engine);
    result.search_exhausted = exhausted;
    return result;
  }

 private:
  static constexpr uint64_t kStepBudget = uint64_t{1} << 22;
  static constexpr uint16_t kProbePc = 0xffff;

  struct Path {
    explicit Path(engine::Engine e) : engine(std::move(e)) {}
    engine::Engine engine;
    size_t i = 0;
    std::optional<engine::Choice> forced;  // the candidate to take at event i (backtracking)
    bool eager = false;  // complete every unrecorded async operation as soon as it is enabled
    size_t replayed = 0, skipped = 0, inferred = 0, timeouts = 0, after_abort = 0, probes = 0;
    bool diverged = false;
    ReplayDivergence divergence;
    std::vector<TraceEvent> pending;  // produced by the model, not yet seen (executor traces)
    std::vector<TraceEvent> model;    // every event of the model's steps (keep_model_)
  };

  static void DescribeModel(const engine::Engine& e, ReplayResult& r) {
    r.tx_piece_keys = e.result().tx_piece_keys;
    for (uint32_t a = 0; a < e.num_agents(); ++a) {
      const uint8_t status = e.agent_state(a).status;
      if (status != 2) ++r.model_agents_left;
      if (status == 1) ++r.model_agents_blocked;
    }
    std::vector<engine::Choice> choices;
    if (e.outcome() == engine::Outcome::kRunning) e.Choices(&choices);
    r.model_enabled_steps = choices.size();
    if (e.outcome() == engine::Outcome::kRunning) {
      engine::Engine on(e);
      r.model_run_on = on.Run().outcome;
    }
  }

  static void CopyCounters(const Path& p, ReplayResult& r) {
    r.replayed = p.replayed;
    r.skipped_model_events = p.skipped;
    r.inferred_completions = p.inferred;
    r.timeouts = p.timeouts;
    r.after_abort = p.after_abort;
    r.probes = p.probes;
  }

  // Executor traces: each agent's records are in its program order (per-agent buffers), but the
  // merge by clock64 across SMs is only as good as the clock calibration, so events of different
  // agents a few cycles apart may appear in either order. The replay takes, among the agents'
  // next events, the earliest in the trace that the model can take now; it diverges only when
  // none can be taken (or an agent's own next step differs from its record).
  void AdvanceRelaxed(Path& p) {
    const std::vector<TraceEvent>& ev = trace_.events;
    std::map<std::tuple<uint32_t, uint32_t, uint32_t, uint32_t>, std::vector<size_t>> by_actor;
    for (size_t i = 0; i < ev.size(); ++i) {
      const TraceEvent& e = ev[i];
      by_actor[{e.cluster, e.cta, e.agent, e.agent == trace::kNoAgent ? e.pc : 0u}].push_back(i);
    }
    std::vector<std::pair<const std::vector<size_t>*, size_t>> actors;  // (events, cursor)
    for (const auto& [key, list] : by_actor) actors.push_back({&list, 0});
    size_t done = 0;
    while (done < ev.size() && !p.diverged) {
      if (p.eager) {
        while (InferCompletion(p)) {
          if (p.diverged) return;
        }
      }
      std::vector<size_t> heads;
      for (const auto& [list, cursor] : actors) {
        if (cursor < list->size()) heads.push_back((*list)[cursor]);
      }
      std::sort(heads.begin(), heads.end());
      auto consume = [&](size_t idx) {
        for (auto& [list, cursor] : actors) {
          if (cursor < list->size() && (*list)[cursor] == idx) ++cursor;
        }
        ++done;
      };
      bool progress = false;
      std::optional<size_t> rejected;  // a test_wait the model cannot satisfy yet
      std::string rejected_expected;
      for (size_t idx : heads) {
        const TraceEvent& e = ev[idx];
        p.i = idx;
        if (e.pc == kProbePc && e.agent != trace::kNoAgent) {
          ++p.probes;
          consume(idx);
          progress = true;
          break;
        }
        if (e.kind == K(EventKind::kWaitTimeout)) {
          CheckTimeout(p);
          if (p.diverged) return;
          consume(idx);
          progress = true;
          break;
        }
        auto it = std::find_if(p.pending.begin(), p.pending.end(),
                               [&](const TraceEvent& x) { return SameActor(x, e); });
        if (it != p.pending.end()) {
          if (!Same(*it, e)) {
            Diverge(p, idx, MismatchReason(*it, e), trace::FormatEvent(*it));
            return;
          }
          p.pending.erase(it);
          ++p.replayed;
          consume(idx);
          progress = true;
          break;
        }
        std::vector<engine::Choice> cands = FindChoices(p.engine, e);
        if (cands.empty()) continue;
        // A test_wait's result depends on completions the executor did not record: if the
        // model says "not yet" where the hardware saw the phase complete, complete an
        // unrecorded operation first and ask again.
        std::optional<engine::Engine> before;
        if (e.kind == K(EventKind::kTestWait)) before = p.engine;
        p.engine.ClearTrace();
        p.engine.Step(cands.front());
        Took(p);
        ++steps_;
        std::vector<TraceEvent> produced = Observed(p, p.engine.trace());
        if (produced.empty()) {
          progress = true;  // a woken wait that is not satisfied blocked again
          break;
        }
        if (before && produced[0].kind == e.kind && produced[0].value == 0 && e.value == 1) {
          p.engine = std::move(*before);
          if (InferCompletion(p, {idx})) {
            progress = true;
            break;
          }
          if (p.diverged) return;
          // Another agent's later record may issue what completes it: try the other heads.
          if (!rejected) {
            rejected = idx;
            rejected_expected = trace::FormatEvent(produced[0]);
          }
          continue;
        }
        if (!Same(produced[0], e)) {
          Diverge(p, idx, MismatchReason(produced[0], e), trace::FormatEvent(produced[0]));
          return;
        }
        p.pending.insert(p.pending.end(), produced.begin() + 1, produced.end());
        ++p.replayed;
        consume(idx);
        progress = true;
        break;
      }
      if (progress) continue;
      p.i = heads.front();
      if (InferCompletion(p, heads)) continue;
      if (p.diverged) return;
      if (p.timeouts > 0) {  // after the hang abort: agents left their programs
        ++p.after_abort;
        consume(heads.front());
        continue;
      }
      if (rejected) {
        Diverge(p, *rejected,
                "test_wait returned 1 (phase complete) where the model's phase is not complete, "
                "and nothing the model can still do completes it first",
                rejected_expected);
        return;
      }
      Diverge(p, heads.front(),
              NotEnabledReason(p.engine, ev[heads.front()]) +
                  " (no agent's next recorded event can be taken by the model)",
              "");
      return;
    }
    if (!p.diverged && !p.pending.empty() && p.timeouts == 0) {
      Diverge(p, ev.size(),
              "the trace ends, but a step of the model also produced events the trace lacks",
              trace::FormatEvent(p.pending.front()));
    }
  }

  void Advance(Path& p, std::vector<Path>& stack) {
    if (!check_state_) {
      AdvanceRelaxed(p);
      return;
    }
    const std::vector<TraceEvent>& ev = trace_.events;
    while (p.i < ev.size() && !p.diverged) {
      const TraceEvent& e = ev[p.i];
      if (!check_state_ && e.pc == kProbePc && e.agent != trace::kNoAgent) {
        // The executor's end-of-run probe of a barrier (test_wait outside the program, pc
        // 0xffff): not a program step.
        ++p.probes;
        ++p.i;
        continue;
      }
      if (e.kind == K(EventKind::kWaitTimeout)) {
        CheckTimeout(p);
        ++p.i;
        continue;
      }
      if (!check_state_ && !p.pending.empty()) {
        // An executor's trace merges per-agent records by time, so the later events of one
        // model step (e.g. the wait.end of a wait that was already satisfied at wait.begin) may
        // come after other agents' events: they are expected from the same actor, in order.
        auto it = std::find_if(p.pending.begin(), p.pending.end(),
                               [&](const TraceEvent& x) { return SameActor(x, e); });
        if (it != p.pending.end()) {
          if (!Same(*it, e)) {
            Diverge(p, p.i, MismatchReason(*it, e), trace::FormatEvent(*it));
            return;
          }
          p.pending.erase(it);
          ++p.i;
          ++p.replayed;
          continue;
        }
      }
      std::vector<engine::Choice> cands;
      if (p.forced) {
        cands.push_back(*p.forced);
        p.forced.reset();
      } else {
        cands = FindChoices(p.engine, e);
        if (cands.size() > 1) {
          if (!visited_.insert({p.i, p.engine.Fingerprint()}).second) {
            Diverge(p, p.i, "(a state already explored)", "");
            return;
          }
          for (size_t k = cands.size(); k-- > 1;) {
            Path alt = p;
            alt.forced = cands[k];
            stack.push_back(std::move(alt));
          }
          cands.resize(1);
        }
      }
      if (cands.empty()) {
        if (InferCompletion(p)) continue;  // an unrecorded delivery may enable it
        if (p.diverged) return;
        if (p.timeouts > 0) {
          ++p.after_abort;
          ++p.i;
          continue;
        }
        Diverge(p, p.i, NotEnabledReason(p.engine, e), "");
        return;
      }
      p.engine.ClearTrace();
      p.engine.Step(cands.front());
      Took(p);
      ++steps_;
      std::vector<TraceEvent> produced = Observed(p, p.engine.trace());
      if (produced.empty()) {
        if (p.timeouts > 0) {
          ++p.after_abort;
          ++p.i;
          continue;
        }
        Diverge(p, p.i,
                "the model took this agent's step but it produced no event: its wait is not "
                "complete in the model (it stays blocked)",
                "");
        return;
      }
      if (!check_state_) {
        if (!Same(produced[0], e)) {
          Diverge(p, p.i, MismatchReason(produced[0], e), trace::FormatEvent(produced[0]));
          return;
        }
        p.pending.insert(p.pending.end(), produced.begin() + 1, produced.end());
        ++p.i;
        ++p.replayed;
        continue;
      }
      for (size_t k = 0; k < produced.size(); ++k) {
        if (p.i + k >= ev.size()) {
          Diverge(p, ev.size(),
                  "the trace ends, but the same step of the model also produced more events",
                  trace::FormatEvent(produced[k]));
          return;
        }
        if (!Same(produced[k], ev[p.i + k])) {
          Diverge(p, p.i + k, MismatchReason(produced[k], ev[p.i + k]),
                  trace::FormatEvent(produced[k]));
          return;
        }
      }
      p.i += produced.size();
      p.replayed += produced.size();
    }
    if (!p.diverged && !p.pending.empty() && p.timeouts == 0) {
      Diverge(p, ev.size(),
              "the trace ends, but a step of the model also produced events the trace lacks",
              trace::FormatEvent(p.pending.front()));
    }
  }

  // The same agent (agent events) or the same issuing instruction (async events).
  static bool SameActor(const TraceEvent& a, const TraceEvent& b) {
    if (a.cluster != b.cluster || a.cta != b.cta || a.agent != b.agent) return false;
    return a.agent != trace::kNoAgent || a.pc == b.pc;
  }

  std::vector<TraceEvent> Observed(Path& p, const std::vector<TraceEvent>& produced) {
    std::vector<TraceEvent> out;
    for (const TraceEvent& ev : produced) {
      // A warning (legal PTX, e.g. an empty cp.async group) does not end the model's run, and a
      // trace without violation records has no place for it.
      const bool warning =
          ev.kind == K(EventKind::kViolation) &&
          model::CodeSeverity(static_cast<model::Code>(ev.value)) == model::Severity::kWarning;
      if (Unobserved(ev.kind, ev.agent == trace::kNoAgent) || (warning && !trace_violations_)) {
        ++p.skipped;
        continue;
      }
      out.push_back(ev);
    }
    return out;
  }

  // Whether the trace leaves out events of `kind` (async: as an asynchronous completion).
  bool Unobserved(uint8_t kind, bool async) const {
    if (kind >= 64) return false;
    return unobserved_[kind] || (async && unobserved_async_[kind]);
  }

  bool Same(const TraceEvent& m, const TraceEvent& t) const {
    if (m.kind != t.kind || m.cluster != t.cluster || m.cta != t.cta ||
        m.target_cta != t.target_cta || m.agent != t.agent || m.object != t.object ||
        m.index != t.index || m.value != t.value) {
      return false;
    }
    // An executor numbers instructions in the GPU encoding (sim/ir/encoding.h), not in the
    // engine's compiled list, so pc is compared only within simulator traces.
    if (check_state_ && m.pc != t.pc) {
      return false;
    }
    if (WaitKindEvent(m.kind) && m.parity != t.parity) return false;
    if (check_state_) {
      return SameFlags(m, t) && m.value2 == t.value2 && m.phase == t.phase &&
             (m.parity == t.parity || !NamesSlot(t));
    }
    return true;
  }
  // A delivery's slot (trace::kFlagSlot) is compared when the trace records it; a trace recorded
  // before deliveries named their slot is still the same run.
  static bool NamesSlot(const TraceEvent& e) { return (e.flags & trace::kFlagSlot) != 0; }
  static bool SameFlags(const TraceEvent& m, const TraceEvent& t) {
    const uint8_t ignore = NamesSlot(t) ? 0 : trace::kFlagSlot;
    return (m.flags & ~ignore) == (t.flags & ~ignore);
  }

  std::string MismatchReason(const TraceEvent& m, const TraceEvent& t) const {
    if (m.kind == K(EventKind::kViolation) && t.kind != m.kind) {
      // The model ends the run at a protocol violation; the hardware has no such check and
      // went on (e.g. a wait on a phase two completions old: the parity aliases).
      const auto code = static_cast<model::Code>(m.value);
      return "the model reports " + std::string(model::CodeId(code)) + " " +
             std::string(model::CodeSlug(code)) + " at this step and ends the run (a protocol "
             "violation of the schedule); the trace went on with a " +
             trace::EventKindName(t.kind);
    }
    if (m.kind != t.kind) {
      return "the model's step produced a " + trace::EventKindName(m.kind) +
             " event, the trace a " + trace::EventKindName(t.kind);
    }
    if (m.value != t.value) {
      return "the value differs: the model has " + std::to_string(m.value) + ", the trace " +
             std::to_string(t.value);
    }
    if (m.value2 != t.value2 || m.phase != t.phase || m.parity != t.parity) {
      return "the state after the event differs (value2/phase/parity): model value2=" +
             std::to_string(m.value2) + " phase=" + std::to_string(m.phase) +
             " parity=" + std::to_string(m.parity) + ", trace value2=" + std::to_string(t.value2) +
             " phase=" + std::to_string(t.phase) + " parity=" + std::to_string(t.parity);
    }
    return "the event's identity (CTA, agent, object, index, pc or flags) differs from the "
           "model's";
  }

  std::optional<uint32_t> GlobalAgent(const TraceEvent& e) const {
    auto it = agent_of_.find({e.cluster, e.cta, e.agent});
    if (it == agent_of_.end()) return std::nullopt;
    return it->second;
  }

  // The enabled choices that can produce `e` (at most one agent step; possibly several async
  // completions that differ only in the issuing agent).
  std::vector<engine::Choice> FindChoices(const engine::Engine& eng, const TraceEvent& e) {
    std::vector<engine::Choice> out;
    eng.Choices(&choices_);
    if (e.agent != trace::kNoAgent) {
      std::optional<uint32_t> a = GlobalAgent(e);
      if (!a) return out;
      for (const engine::Choice& c : choices_) {
        if (c.kind == engine::Choice::Kind::kAgent && c.index == *a) out.push_back(c);
      }
      return out;
    }
    const auto& ops = eng.in_flight_ops();
    for (const engine::Choice& c : choices_) {
      if (c.kind != engine::Choice::Kind::kAsync) continue;
      const engine::Engine::InFlight& f = ops[c.index];
      const engine::AgentInfo& info = eng.agent_info(f.agent);
      const bool bytes_ok = f.kind == engine::Engine::InFlight::kCpAsyncArrive ||
                            static_cast<int64_t>(f.bytes) == e.value;
      if (CompletionKind(f.kind) == e.kind && info.cluster == e.cluster && info.cta == e.cta &&
          f.target_cta == e.target_cta && f.object == e.object && f.index == e.index &&
          (f.pc == e.pc || !check_state_) && bytes_ok) {
        out.push_back(c);
      }
    }
    return out;
  }

  // The next observed event is not enabled: if the trace leaves some async completions out,
  // complete the first such in-flight operation (its events are unobserved) and try again.
  // `blocked` lists trace events the model cannot take yet: an unobserved completion that acts
  // on the barrier one of their waits names is taken first (completing an unrelated one early
  // could complete another phase before the trace's test_waits saw it complete).
  // Keeps the events of the step just taken (keep_model_), each at the time of the trace event
  // being replayed: an unrecorded completion gets the time of the event that needed it.
  void Took(Path& p) const {
    if (!keep_model_ || trace_.events.empty()) return;
    const uint64_t t = trace_.events[std::min(p.i, trace_.events.size() - 1)].time;
    for (TraceEvent e : p.engine.trace()) {
      e.time = t;
      p.model.push_back(e);
    }
  }

  bool AnyUnobserved() const {
    for (int k = 0; k < 64; ++k) {
      if (unobserved_[k] || unobserved_async_[k]) return true;
    }
    return false;
  }

  bool InferCompletion(Path& p, const std::vector<size_t>& blocked = {}) {
    if (!AnyUnobserved()) return false;
    p.engine.Choices(&choices_);
    const auto& ops = p.engine.in_flight_ops();
    std::vector<engine::Choice> cands;
    for (const engine::Choice& c : choices_) {
      if (c.kind != engine::Choice::Kind::kAsync) continue;
      if (Unobserved(CompletionKind(ops[c.index].kind), true)) cands.push_back(c);
    }
    if (cands.empty()) return false;
    std::optional<engine::Choice> pick;
    for (size_t idx : blocked) {
      const TraceEvent& e = trace_.events[idx];
      if (!WaitKindEvent(e.kind)) continue;
      for (const engine::Choice& c : cands) {
        const engine::Engine::InFlight& f = ops[c.index];
        if (ActsOnBarrier(CompletionKind(f.kind)) && f.object == e.object &&
            f.index == e.index && f.target_cta == e.target_cta &&
            p.engine.agent_info(f.agent).cluster == e.cluster) {
          pick = c;
          break;
        }
      }
      if (pick) break;
    }
    for (const engine::Choice& c : pick ? std::vector<engine::Choice>{*pick} : cands) {
      p.engine.ClearTrace();
      p.engine.Step(c);
      Took(p);
      ++steps_;
      ++p.inferred;
      std::vector<TraceEvent> produced = Observed(p, p.engine.trace());
      if (!produced.empty()) {
        // e.g. a violation the completion caused (a complete_tx completing a phase whose
        // predecessor nobody observed, M1009): the trace does not show it.
        const TraceEvent& m = produced.front();
        Diverge(p, p.i,
                m.kind == K(EventKind::kViolation)
                    ? "the model reports " +
                          std::string(model::CodeId(static_cast<model::Code>(m.value))) + " " +
                          std::string(model::CodeSlug(static_cast<model::Code>(m.value))) +
                          " when an unrecorded asynchronous operation completes (needed before "
                          "this event) and ends the run (a protocol violation of the schedule)"
                    : "completing an unrecorded asynchronous operation (needed before this "
                      "event) made the model report an event the trace does not have",
                trace::FormatEvent(m));
      }
      return true;
    }
    return false;
  }

  void CheckTimeout(Path& p) {
    const TraceEvent& e = trace_.events[p.i];
    ++p.timeouts;
    std::optional<uint32_t> a = GlobalAgent(e);
    if (!a) {
      Diverge(p, p.i, "the timed-out agent does not exist in this schedule", "");
      return;
    }
    if (p.engine.agent_state(*a).status == 2) {
      Diverge(p, p.i, "the agent had already exited in the model; it cannot time out in a wait",
              "");
      return;
    }
    const model::MbarrierState* st = BarrierState(p.engine, e);
    if (st == nullptr) {
      Diverge(p, p.i, "the wait-timeout names a barrier the schedule does not have", "");
      return;
    }
    model::MbarrierState copy = *st;
    // PTX ISA, mbarrier.test_wait/try_wait .parity: the wait is satisfied once the phase whose
    // parity is `parity` has completed; a bounded wait that trapped must not have been satisfied.
    if (model::MbarrierTestWaitParity(copy, e.parity).complete) {
      Diverge(p, p.i,
              "the model says this wait is already satisfied (the phase of parity " +
                  std::to_string(e.parity) + " completed), yet the trace timed out",
              "");
    }
  }

  const model::MbarrierState* BarrierState(const engine::Engine& eng, const TraceEvent& e) const {
    if (!ActsOnBarrier(e.kind) || e.object >= program_.barriers.size()) return nullptr;
    auto it = cta_global_.find({e.cluster, e.target_cta});
    if (it == cta_global_.end()) return nullptr;
    ir::EvalEnv env;
    env.params = params_.data();
    env.num_params = params_.size();
    Expected<int64_t> size = ir::Eval(program_, program_.barriers[e.object].size, env);
    if (!size.ok() || e.index >= *size) return nullptr;
    return &eng.barrier_state(it->second, e.object, e.index);
  }

  std::string NotEnabledReason(const engine::Engine& eng, const TraceEvent& e) const {
    if (eng.outcome() != engine::Outcome::kRunning) {
      return std::string("the model's run has already ended (") +
             engine::OutcomeName(eng.outcome()) + ")";
    }
    if (e.agent == trace::kNoAgent) {
      return "no in-flight asynchronous operation of the model matches this completion (kind, "
             "issuing CTA and instruction, target CTA, barrier/buffer, bytes)";
    }
    std::optional<uint32_t> a = GlobalAgent(e);
    if (!a) return "no such agent in this schedule (cluster, CTA, agent index)";
    const engine::Engine::AgentState& s = eng.agent_state(*a);
    if (s.status == 2) return "the agent has already exited in the model";
    if (s.status == 1) {
      return std::string("the agent is blocked in the model (") + engine::WaitKindName(s.wait) +
             "): what it waits for has not happened yet";
    }
    return "the agent is not enabled in the model";
  }

  std::string Describe(const engine::Engine& eng, const engine::Choice& c) const {
    if (c.kind == engine::Choice::Kind::kAgent) {
      const engine::Engine::AgentState& s = eng.agent_state(c.index);
      return "step " + AgentLabel(program_, eng, c.index) + " (pc " + std::to_string(s.pc) + ")";
    }
    const engine::Engine::InFlight& f = eng.in_flight_ops()[c.index];
    const uint8_t kind = CompletionKind(f.kind);
    std::string obj = ActsOnBarrier(kind) && f.object < program_.barriers.size()
                          ? program_.barriers[f.object].name
                          : "#" + std::to_string(f.object);
    return "complete " + trace::EventKindName(kind) + " " + obj + "[" + std::to_string(f.index) +
           "]@cta" + std::to_string(f.target_cta) + " (" + std::to_string(f.bytes) +
           " bytes, issued by " + AgentLabel(program_, eng, f.agent) + " pc " +
           std::to_string(f.pc) + ")";
  }

  void Diverge(Path& p, size_t i, std::string reason, std::string expected) {
    p.diverged = true;
    ReplayDivergence& d = p.divergence;
    d.event_number = i + 1;
    if (i < trace_.events.size()) d.observed = trace_.events[i];
    d.reason = std::move(reason);
    d.expected = std::move(expected);
    p.engine.Choices(&choices_);
    std::vector<engine::Choice> choices = choices_;
    for (const engine::Choice& c : choices) d.enabled.push_back(Describe(p.engine, c));
    if (i < trace_.events.size()) {
      const TraceEvent& e = trace_.events[i];
      if (const model::MbarrierState* st = BarrierState(p.engine, e)) {
        d.barrier_state = BarrierLabel(program_, e.object, e.index, e.target_cta) + ": " +
                          std::to_string(st->phase) + " phase(s) completed (current parity " +
                          std::to_string(st->parity()) + "), pending " +
                          std::to_string(st->pending_count) + " of " +
                          std::to_string(st->expected_count) + " arrival(s), tx_count " +
                          std::to_string(st->tx_count);
      }
    }
  }

  const ir::Program& program_;
  const std::vector<int64_t>& params_;
  const trace::TraceFile& trace_;
  engine::Engine initial_;
  bool keep_model_ = false;
  bool check_state_ = true;
  bool trace_violations_ = false;   // the trace records violations (kViolation)
  bool unobserved_[64] = {};        // kinds the trace never records
  bool unobserved_async_[64] = {};  // kinds the trace records from agents only (never kNoAgent)
  std::map<std::tuple<uint32_t, uint32_t, uint32_t>, uint32_t> agent_of_;
  std::map<std::pair<uint32_t, uint32_t>, uint32_t> cta_global_;
  std::vector<engine::Choice> choices_;
  std::set<std::pair<size_t, uint64_t>> visited_;
  uint64_t steps_ = 0;
};

std::string Hex(uint64_t h) {
  static const char* kDigits = "0123456789abcdef";
  std::string s(16, '0');
  for (int i = 15; i >= 0; --i, h >>= 4) s[i] = kDigits[h & 15];
  return s;
}

}  // namespace

bool KernelTraceRecords(uint8_t kind) {
  switch (static_cast<EventKind>(kind)) {
    case EventKind::kInit:
    case EventKind::kArrive:
    case EventKind::kArriveExpectTx:
    case EventKind::kExpectTx:
    case EventKind::kWaitBegin:
    case EventKind::kWaitEnd:
    case EventKind::kWaitTimeout:
    case EventKind::kFence:
    case EventKind::kNamedBarrierSyncBegin:
    case EventKind::kNamedBarrierSyncEnd:
    case EventKind::kClusterArrive:
    case EventKind::kClusterWaitBegin:
    case EventKind::kClusterWaitEnd:
    case EventKind::kTmaIssue:
    case EventKind::kTmaStoreIssue:
    case EventKind::kBulkIssue:
    case EventKind::kBulkCommit:
    case EventKind::kBulkWaitBegin:
    case EventKind::kBulkWaitEnd:
    case EventKind::kCpAsyncIssue:
    case EventKind::kCpAsyncCommit:
    case EventKind::kCpAsyncWaitBegin:
    case EventKind::kCpAsyncWaitEnd:
    case EventKind::kCpAsyncArrive:
    case EventKind::kStAsync:
      return true;
    default:
      return false;
  }
}

Status CheckTraceSchedule(const ir::Program& program, const trace::TraceHeader& header) {
  const uint64_t hash = ir::ContentHash(program);
  if (hash == header.schedule_hash) return Status();
  return Status("replay.hash-mismatch",
                "the trace was recorded from a different schedule: trace hash " +
                    Hex(header.schedule_hash) + " (schedule '" + header.schedule +
                    "'), this file's hash " + Hex(hash));
}

Expected<std::vector<int64_t>> BindTraceParams(const ir::Program& program,
                                               const trace::TraceHeader& header) {
  PARITY_RETURN_IF_ERROR(CheckTraceSchedule(program, header));
  for (const ir::Param& p : program.params) {
    bool found = std::any_of(header.params.begin(), header.params.end(),
                             [&](const auto& kv) { return kv.first == p.name; });
    if (!found) {
      return Status("replay.params", "the trace header does not record param " + p.name);
    }
  }
  for (const auto& kv : header.params) {
    const std::string& name = kv.first;  // a named variable: clang 14 cannot capture a binding
    bool declared = std::any_of(program.params.begin(), program.params.end(),
                                [&](const ir::Param& p) { return p.name == name; });
    if (!declared) {
      return Status("replay.params", "the trace binds param " + name +
                                         ", which the schedule does not declare");
    }
  }
  return ir::BindParams(program, header.params);
}

Expected<ReplayResult> ReplayTrace(const ir::Program& program, const std::vector<int64_t>& params,
                                   const trace::TraceFile& trace, bool keep_model_trace) {
  PARITY_RETURN_IF_ERROR(CheckTraceSchedule(program, trace.header));
  engine::EngineOptions options;
  options.record_trace = true;
  // The model runs on from the trace's last event (DescribeModel) and records what it does: a
  // schedule that never ends (a header param can make a loop endless) must stop. The cap leaves
  // room for the replay itself and a long run-on; past it the run-on says "stops: step-limit".
  options.max_events = 2 * static_cast<uint64_t>(trace.events.size()) + 1'000'000;
  // Every box credited whole first; where the trace departs from that, the landings that can
  // credit in pieces (Hopper chooses landing by landing, engine::EngineOptions::tx_pieces): all
  // of them, then each subset of those met (up to 8 landings), the smallest first.
  Expected<ReplayResult> first = ReplayResult{};
  std::vector<uint64_t> keys;
  auto attempt = [&](bool all, std::vector<uint64_t> at) -> Expected<ReplayResult> {
    options.tx_pieces = all;
    options.tx_pieces_at = std::move(at);
    Expected<engine::Engine> engine = engine::Engine::Create(program, params, options);
    if (!engine.ok()) return engine.status();
    Replayer replayer(program, params, trace, std::move(engine).value(), keep_model_trace);
    Expected<ReplayResult> r = replayer.Run();
    if (!r.ok()) return r;
    r->tx_pieces = all || !options.tx_pieces_at.empty();
    for (uint64_t k : r->tx_piece_keys) {
      if (std::find(keys.begin(), keys.end(), k) == keys.end()) keys.push_back(k);
    }
    return r;
  };
  first = attempt(false, {});
  if (!first.ok() || !first->diverged || keys.empty()) return first;
  Expected<ReplayResult> all = attempt(true, {});
  if (!all.ok() || !all->diverged) return all;
  constexpr size_t kMaxPieceKeys = 8;
  std::set<std::vector<uint64_t>> done;
  for (bool grew = true; grew && keys.size() <= kMaxPieceKeys;) {
    grew = false;
    const size_t n = keys.size();
    for (uint32_t size = 1; size <= n && !grew; ++size) {
      for (uint64_t m = 1; m < (uint64_t{1} << n) && !grew; ++m) {
        if (static_cast<uint32_t>(__builtin_popcountll(m)) != size) continue;
        std::vector<uint64_t> at;
        for (size_t i = 0; i < n; ++i) {
          if ((m >> i) & 1) at.push_back(keys[i]);
        }
        std::sort(at.begin(), at.end());
        if (!done.insert(at).second) continue;
        Expected<ReplayResult> r = attempt(false, at);
        if (!r.ok() || !r->diverged) return r;
        grew = keys.size() > n;
      }
    }
  }
  return first;
}

std::string ModelStateSentence(const ReplayResult& r) {
  const std::string prefix = "the model after the last event: ";
  const std::string left = std::to_string(r.model_agents_left) + " agent(s) not exited, " +
                           std::to_string(r.model_agents_blocked) + " of them blocked in a wait";
  const bool hang = r.timeouts > 0;
  switch (r.model_outcome) {
    case engine::Outcome::kCompleted:
      return prefix + "completed (every agent exited)";
    case engine::Outcome::kDeadlock:
      return prefix + "deadlocked (" + left + ", no step left)" +
             (hang ? ": the GPU's hang is a deadlock of the schedule itself"
                   : ": the trace ends where the schedule deadlocks");
    case engine::Outcome::kViolation:
      return prefix + "stopped at a protocol violation";
    case engine::Outcome::kError:
    case engine::Outcome::kStepLimit:
      return prefix + engine::OutcomeName(r.model_outcome);
    case engine::Outcome::kRunning:
      break;
  }
  std::string out = prefix + "not finished (" + left + ", " +
                    std::to_string(r.model_enabled_steps) + " step(s) still enabled); run on from "
                    "there (copies still in flight landing first) it ";
  switch (r.model_run_on) {
    case engine::Outcome::kDeadlock:
      return out + "deadlocks" +
             (hang ? ": the GPU's hang is a deadlock of the schedule itself, not a wait timeout "
                     "that was too short"
                   : ": the schedule deadlocks after the trace's last event");
    case engine::Outcome::kCompleted:
      return out + "completes" +
             (hang ? ": the model could still finish the run, so the GPU's wait timeout may have "
                     "been too short for this schedule (try a longer --timeout-ms)"
                   : " (an H100 trace leaves out the exits and the asynchronous completions it "
                     "cannot observe)");
    case engine::Outcome::kViolation:
      return out + "reaches a protocol violation (`parity check` reports it)";
    default:
      return out + "stops: " + engine::OutcomeName(r.model_run_on);
  }
}

std::string FormatReplayResult(const ReplayResult& r, const trace::TraceFile& trace) {
  std::string out;
  if (!r.diverged) {
    out += "OK: all " + std::to_string(trace.events.size()) + " events of the " +
           trace.header.source + " trace replay on the model (" + std::to_string(r.replayed) +
           " matched";
    if (r.inferred_completions) {
      out += ", " + std::to_string(r.inferred_completions) + " unrecorded completions inferred";
      if (r.eager_completions) out += " (each as soon as it was enabled)";
    }
    if (r.timeouts) out += ", " + std::to_string(r.timeouts) + " wait timeout(s) confirmed";
    if (r.probes) out += ", " + std::to_string(r.probes) + " end-of-run probe(s) not replayed";
    if (r.after_abort) {
      out += ", " + std::to_string(r.after_abort) + " event(s) after the hang abort not replayed";
    }
    out += ")\n";
    if (r.tx_pieces) {
      out += "only with a copy's bytes credited in pieces: a phase completed when its tx-count "
             "passed through 0 while the rest of a copy was still in flight (an early "
             "completion, P2002: the copy carries more bytes than the phase expected)\n";
    }
    out += ModelStateSentence(r) + "\n";
    return out;
  }
  const ReplayDivergence& d = r.divergence;
  out += "DIVERGENCE at event " + std::to_string(d.event_number) + " of " +
         std::to_string(trace.events.size()) + " (" + std::to_string(r.replayed) +
         " events replayed before it)\n";
  if (d.event_number <= trace.events.size()) {
    out += "  the trace did:   " + trace::FormatEvent(d.observed) + "\n";
  } else {
    out += "  the trace did:   (ended)\n";
  }
  out += "  why:             " + d.reason + "\n";
  if (!d.expected.empty()) out += "  the model did:   " + d.expected + "\n";
  if (!d.barrier_state.empty()) out += "  barrier state:   " + d.barrier_state + "\n";
  out += "  enabled in the model:";
  if (d.enabled.empty()) out += " nothing";
  out += "\n";
  for (const std::string& s : d.enabled) out += "    - " + s + "\n";
  return out;
}

}  // namespace parity::verifier
