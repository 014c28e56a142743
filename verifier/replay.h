// Trace replay: drive the engine with the observed order of events of a trace (simulator or
// H100) and check that every event is legal when it happened.
//
// How: at trace event i the replayer picks the engine choice that produces it (an agent step is
// identified by cluster, CTA rank and agent index; an asynchronous completion by its kind, the
// issuing CTA and instruction, the target CTA, the barrier or buffer and the bytes), takes that
// step, and compares the events the step produced with the next events of the trace. The model
// decides legality: a wait may only end once its phase completed (PTX ISA, "mbarrier.try_wait":
// the wait completes when the phase with the given parity has completed), an arrive on a
// completed-count barrier is a violation, and so on, so a trace whose order the model cannot
// reproduce diverges at the first event the model does not allow.
//
// Matching: the identity of an event (kind, cluster, CTA, target CTA, agent, object, index,
// value; pc within simulator traces, as the executor numbers instructions of the GPU encoding)
// must match always. The state read back after the event (value2, phase, parity: pending
// count, tx count, phase bit) is compared only when the trace recorded it (source "sim"): the GPU
// executor leaves those fields 0 where it cannot observe them (sim/trace/event.h).
// Simulator traces (source "sim") are replayed strictly: event by event, each model step's events
// contiguous; an async completion that names no issuing agent (kNoAgent) is matched by
// depth-first search over the in-flight operations it could be.
// Executor traces (any other source) are replayed per agent: each agent's records are in its
// program order, but the merge of several SMs' clock64 values is only approximately ordered, so
// among the agents' next records the earliest one the model can take now is taken; a step's
// further events may appear later in the trace. Events the trace never records at all (the H100
// executor records no kPhaseComplete, TMA delivery or kExit; nor the asynchronous kArrive of
// cp.async.mbarrier.arrive or the kCompleteTx of st.async: it records their issue, and agents'
// own arrives / complete_tx, so these two kinds are unobserved only in their agent-less, async
// form) are "unobserved kinds": the engine's own such events are skipped, and an in-flight
// operation whose completion is unobserved is completed only when no recorded event can be taken
// otherwise (or a test_wait saw the phase complete), one acting on the barrier of a blocked wait
// first. If that order cannot produce the trace, the replay is tried once more with every such
// operation completed as soon as it is enabled (ReplayResult::eager_completions). Executor pcs
// number the GPU encoding's instructions and are not compared; the
// executor's end-of-run probes (pc 0xffff) are skipped.
// kWaitTimeout (the GPU's bounded wait gave up) is legal when the agent waits on that barrier
// and the model agrees that the phase has not completed; after the first timeout the GPU aborts
// every agent, so later events that the model cannot take are counted, not reported.
#ifndef PARITY_VERIFIER_REPLAY_H_
#define PARITY_VERIFIER_REPLAY_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "sim/common/status.h"
#include "sim/engine/engine.h"
#include "sim/ir/ir.h"
#include "sim/trace/trace_file.h"

namespace parity::verifier {

// The first event the model does not reproduce.
struct ReplayDivergence {
  size_t event_number = 0;             // 1-based, as DumpTrace numbers events
  trace::TraceEvent observed{};        // what the trace did
  std::string reason;                  // one sentence: why it is not legal / not produced
  std::vector<std::string> enabled;    // the model's enabled choices at that point
  std::string expected;                // what the model produced instead (may be empty)
  std::string barrier_state;           // the state of the barrier the event acts on, if any
};

struct ReplayResult {
  bool diverged = false;
  ReplayDivergence divergence;         // when diverged
  size_t replayed = 0;                 // trace events matched
  size_t skipped_model_events = 0;     // engine events of unobserved kinds
  size_t inferred_completions = 0;     // unobserved async completions taken to enable an event
  size_t timeouts = 0;                 // kWaitTimeout events checked
  size_t after_abort = 0;              // events after a timeout that the model could not take
  size_t probes = 0;                   // executor end-of-run barrier probes (pc 0xffff)
  bool search_exhausted = false;       // the search over ambiguous completions hit its budget
  // The replay succeeded only with every unrecorded completion taken as soon as it was enabled
  // (the lazy order, taking one only when nothing else could go on, could not produce it).
  bool eager_completions = false;
  // The trace replays only with loads' bytes credited in pieces (engine::EngineOptions::
  // tx_pieces): some phase completed while a copy's tx-count passed through 0 with the rest of
  // its bytes still in flight (an early completion, P2002).
  bool tx_pieces = false;
  // The landings of this replay's model run that met a phase expecting fewer bytes than they
  // carry (engine::RunResult::tx_piece_keys).
  std::vector<uint64_t> tx_piece_keys;
  engine::Outcome model_outcome = engine::Outcome::kRunning;  // the engine after the last event
  // The model after the last event, when it is still kRunning: agents that have not exited, of
  // those the ones blocked in a wait, and the steps it could still take (agent steps and
  // in-flight completions). No step left with agents not exited = the model is stuck too.
  size_t model_agents_left = 0;
  size_t model_agents_blocked = 0;
  size_t model_enabled_steps = 0;
  // Where the model goes from there when it runs on alone (eager policy: in-flight copies land
  // first): kCompleted, kDeadlock, ... (kRunning when it was not run on).
  engine::Outcome model_run_on = engine::Outcome::kRunning;
  // With keep_model_trace: the model's own events in the order the replay took them, unrecorded
  // completions included, each stamped with the time of the trace event being replayed when it
  // happened (what `parity replay --html` and an H100 trace's Perfetto export draw).
  std::vector<trace::TraceEvent> model_trace;
  // With keep_model_trace: the model after the last event (its own trace holds only the last
  // step; model_trace has the run).
  std::shared_ptr<const engine::Engine> model_engine;
  std::vector<uint8_t> unobserved_kinds;
};

// Whether a kernel's own trace (header source "kernel", gpu/include/parity/trace.cuh) records
// events of this kind. The others are unobserved kinds when such a trace is replayed.
bool KernelTraceRecords(uint8_t kind);

// Refuses a trace recorded from another schedule (rule "replay.hash-mismatch": the header's
// schedule hash differs from ir::ContentHash(program)), as herdtools never compares outcomes of
// different tests.
Status CheckTraceSchedule(const ir::Program& program, const trace::TraceHeader& header);

// The params to bind for a trace: the header's values by name. Errors: the schedule check above,
// a header param the program does not declare, a program param the header lacks
// ("replay.params").
Expected<std::vector<int64_t>> BindTraceParams(const ir::Program& program,
                                               const trace::TraceHeader& header);

// Replays `trace` on `program` bound with `params`. Bad input (exit 2 in the CLI): a schedule
// hash that differs from ir::ContentHash(program) ("replay.hash-mismatch"), an engine that cannot
// be built. Divergence is a result, not an error.
Expected<ReplayResult> ReplayTrace(const ir::Program& program, const std::vector<int64_t>& params,
                                   const trace::TraceFile& trace, bool keep_model_trace = false);

// What the model's state after the last replayed event means (one sentence): completed, stuck
// like the GPU (a hang the schedule explains), or not finished with steps still enabled.
std::string ModelStateSentence(const ReplayResult& result);

// A report: "replayed N events ..." or the divergence with its context.
std::string FormatReplayResult(const ReplayResult& result, const trace::TraceFile& trace);

}  // namespace parity::verifier

#endif  // PARITY_VERIFIER_REPLAY_H_
