// Deadlock diagnosis (code P2001): when the engine stops with nothing able to progress, explain
// it the way a kernel engineer needs at 2 a.m.: for every blocked agent, what it waits on (barrier,
// CTA, phase and parity) and that barrier's state in the current phase (arrivals received of
// expected, tx bytes expected and delivered), who could still arrive there and why they will not
// (blocked — with the wait-for cycle —, exited, or nothing in the program ever signals that barrier),
// and the most likely cause.
//
// The wait-for graph (Boost.Graph) has one vertex per agent that has not exited and an edge
// A -> B when A is blocked on a barrier that B could still signal: B's role contains an arrive,
// expect/complete_tx, TMA or bulk load, st.async or cp.async.mbarrier.arrive on that barrier array
// that can reach A's CTA: a local op from B's own CTA, or a remote arrive or multicast whose
// target CTA or mask, evaluated by a static run of B's program (both ways at branches it cannot
// decide), can name A's CTA. This is an over-approximation of "could": it never misses a
// signaller, so "nothing ever arrives there again" is only said when it is certain.
#ifndef PARITY_VERIFIER_DEADLOCK_H_
#define PARITY_VERIFIER_DEADLOCK_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "sim/engine/engine.h"
#include "sim/ir/ir.h"

namespace parity::verifier {

// What happened to one mbarrier in its current (incomplete) phase, from the trace.
struct PhaseStats {
  int64_t arrivals = 0;         // arrival count received in this phase
  int64_t tx_expected = 0;      // bytes announced by expect_tx / arrive.expect_tx in this phase
  int64_t tx_delivered = 0;     // bytes credited by complete_tx (TMA, bulk, st.async, explicit)
  std::vector<uint32_t> arrived_agents;  // global agent ids, in order of arrival (distinct)
  uint32_t completed_phases = 0;  // phases this barrier completed since init
};

// The guessed root cause of a blocked mbarrier wait.
enum class DeadlockCause : uint8_t {
  kUnknown,
  kTxOverExpected,    // all arrivals in, but more bytes expected than will ever be delivered
  kTxOverDelivered,   // all arrivals in, but more bytes delivered than expected (tx negative)
  kCountTooHigh,      // arrivals came in, every agent that arrived is blocked: count too high
  kWrongInitialPhase, // a producer waits for the first phase of a buffer-free barrier (parity 0)
  kSignallerExited,   // an agent that would signal the barrier has exited
  kNoSignaller,       // nothing in the program ever signals this barrier in this CTA
  kDownstream,        // waits on something that is itself stuck (explained by another entry)
  kNotMbarrier,       // a cluster/named barrier or async-group wait (explained in the text)
  // An operation earlier in the run, not a blocked wait (DeadlockReport::culprit): a parity wait
  // that passed at once because its parity names the phase before the barrier's first.
  kParityPassedAtOnce,
  // The only agent that signals the barrier is the waiter itself, which waits for a phase its
  // own later signals would complete: the wait's parity or token is a phase ahead of its history.
  kWaitsOnOwnSignal,
  // A parity wait blocked on the current phase while the phase before it completed and no wait
  // observed it: the waiter skipped a phase (its parity comes from the wrong loop index or start
  // phase), so it waits for a phase that needs its own release of the skipped one.
  kWaitSkipsPhase,
  // An operation earlier in the run (DeadlockReport::culprit): a blocked agent observed a phase
  // of the barrier it now waits on and went on to wait for the next one without signalling a
  // barrier whose current phase still needs it (and whose waiters would complete that next
  // phase): its signal is skipped on some path of that round (a condition, a missing release).
  kMissedSignal,
  // Found by re-running with one change (verifier/culprit.h): the barrier's init count is lower
  // than the arrivals one phase receives (e.g. a multicast release whose count forgot the
  // number of CTAs that arrive), so its phases complete early and the ring's phases drift.
  kCountTooLow,
};
const char* DeadlockCauseName(DeadlockCause c);

struct BlockedExplanation {
  engine::BlockedAgent blocked;
  PhaseStats stats;                          // mbarrier waits only
  std::vector<uint32_t> could_signal_blocked;  // agents that could still signal, all blocked
  std::vector<uint32_t> could_signal_exited;   // agents that could have signalled, exited
  bool in_cycle = false;                     // the agent is on a cycle of the wait-for graph
  bool self_signals = false;                 // the waiter's own program signals the barrier
  // Mbarrier waits: every agent that could still signal the barrier has already arrived in its
  // current phase. Such a phase is short for good (a count or an arrival budget is wrong); a
  // barrier whose missing signallers have not arrived yet is usually waiting downstream of one.
  bool all_signallers_arrived = false;
  // Set when a count-too-high wait was re-classified as kDownstream: a not-yet-arrived
  // signaller (global agent id) blocked on the root barrier this wait is stuck behind.
  uint32_t upstream_agent = UINT32_MAX;
  DeadlockCause cause = DeadlockCause::kUnknown;
  std::string cause_text;                    // one or two sentences
};

// Ranking: a barrier nothing in the program signals in that CTA (a static fact, so a root
// whatever else went wrong: a release sent to the wrong CTA also skews the phases of the CTA it
// went to), a wait that skipped a phase (the first operation inconsistent with its barrier's
// history: everything else stalls behind it), tx mismatches, then exited signallers (or
// the waiter itself as the only one), then count-too-high (a barrier whose possible signallers
// all arrived in its phase before one whose signallers have not), wrong
// initial phase, non-mbarrier waits, downstream waits. A count-too-high barrier whose missing
// signallers are themselves blocked on such a root barrier is reported as downstream of it: in a
// wait-for cycle every barrier is short of arrivals, and the one to fix is the one whose whole
// population of signallers has already arrived (bad_count_budgets_arrive_on: filled[0], 32
// short after every agent arrived, not ready[0], which waits for consumers stuck on filled[0]).
// The first operation of the run inconsistent with its barrier's history, when it explains the
// deadlock better than any blocked wait: a parity wait (or a test_wait that returned true) on a
// barrier that had completed no phase yet, whose parity named the phase "before phase 0", which
// counts as complete, so it passed without waiting for anything. That is the producer's start
// state on a buffer-free ("empty") barrier, and a bug on a barrier that copies fill ("full": it
// carries tx bytes) or that the waiter does not refill itself (a role that writes no buffer):
// the waiter runs a round ahead, consumes data that never arrived, and releases a stage early,
// so the barriers' phases no longer line up and someone blocks later, far from the cause.
struct DeadlockCulprit {
  bool found = false;
  DeadlockCause cause = DeadlockCause::kUnknown;
  uint32_t agent = 0;  // global agent id
  uint32_t barrier = 0, index = 0, cta = 0;
  uint32_t parity = 0;
  SourceLocation where;  // the wait statement (kMissedSignal: the signal that was skipped)
  std::string text;
  // Set when the culprit was proved by a re-run (verifier/culprit.h): the one change to the
  // program at `where` after which the run completes without a new finding, in words ("set
  // its count to 6"), and what it changes ("parity", "count" or "expect_tx").
  std::string change;
  std::string change_kind;
};

struct DeadlockReport {
  // Set when an earlier operation is the most likely cause (then the summary names it).
  DeadlockCulprit culprit;
  std::vector<BlockedExplanation> blocked;   // root causes first, then downstream waits
  std::vector<std::vector<uint32_t>> cycles; // strongly connected components of size > 1
  size_t primary = 0;                        // index of the most likely root cause in `blocked`
  std::string summary;                       // one line: the headline of the diagnosis
};

// Diagnoses a run that ended in Outcome::kDeadlock. `engine` must have recorded its trace, or
// `events` gives the run's events from the start (an engine whose trace was cleared on the way,
// as a replay's). `params` (the bound param values the engine was created with) lets the
// diagnosis evaluate the targets of remote arrives and multicasts, so that "could still signal"
// lists only agents that can reach the waiter's CTA; without them every remote operation counts
// as reaching every CTA.
DeadlockReport DiagnoseDeadlock(const ir::Program& program, const engine::Engine& engine,
                                const engine::RunResult& result,
                                const std::vector<trace::TraceEvent>* events = nullptr,
                                const std::vector<int64_t>* params = nullptr);

// "CTA 1 (1,0) producer[0]" (with "cluster N " in front when the grid has several clusters).
std::string AgentLabel(const ir::Program& program, const engine::Engine& engine, uint32_t agent);
// "empty[2] of CTA 1".
std::string BarrierLabel(const ir::Program& program, uint32_t barrier, uint32_t index,
                         uint32_t cta);

// The report as text. `source` is the schedule's text (may be empty) to quote wait lines. The
// first `detailed` blocked agents (root causes first) are described in full, the others one line
// per wait statement and cause, so that a cluster-wide deadlock fits a screen.
std::string FormatDeadlockReport(const DeadlockReport& report, const ir::Program& program,
                                 const engine::Engine& engine, std::string_view source,
                                 size_t detailed = SIZE_MAX);

// The wait-for graph in Graphviz DOT: agents as nodes (blocked ones labelled with their wait),
// edges "waits for", cycle edges in red.
std::string WaitForGraphDot(const DeadlockReport& report, const ir::Program& program,
                            const engine::Engine& engine);

}  // namespace parity::verifier

#endif  // PARITY_VERIFIER_DEADLOCK_H_
