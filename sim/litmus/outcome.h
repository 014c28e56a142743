// The outcome of one litmus run, and the histogram text format that the simulator side
// (verifier/litmus.h) and the H100 side (gpu/ litmus runner) both write, in the manner of
// herdtools' herd/litmus pair: one format, one content hash, so that outcomes of different
// schedules are never compared.
//
// Plain C++20, depends only on sim/ir (the program, for barrier names), sim/trace (the event) and
// sim/model:codes (code ids and severities, no dependencies of its own): the GPU runner links it
// statically, so no logging or formatting libraries here.
//
// ---------------------------------------------------------------------------------------------
// What a litmus test observes (the convention; both sides record exactly these in their traces)
//
//   1. test_wait results. Every `test_wait BAR parity P -> v` an agent executes records a
//      kTestWait event with value 0/1. The outcome lists, per agent (CTA rank, agent index within
//      the CTA, as TraceEvent::agent), the results in that agent's program order as a digit
//      string: `tw{c0a1=10}` = agent 1 of CTA 0 saw 1 then 0. Agents that ran no test_wait are not
//      listed. Program order per agent is the same on both sides; the interleaving of different
//      agents is not recorded (it is what the outcome *depends on*, not what it is).
//      The GPU executor's end-of-run probe (kTestWait with pc == kProbePc) is not a test_wait of
//      the schedule: it feeds item 3.
//   2. Hang. An agent whose last mbarrier wait has a kWaitBegin but no kWaitEnd (the simulator at
//      a deadlock: the trace just ends there), or that recorded kWaitTimeout (the GPU executor's
//      bounded wait expired, or was aborted by another agent's expiry), hangs at that wait. The
//      outcome starts with `hang{c0a1@full[0]/p0 ...}`: agent, barrier name[element], the CTA of
//      the barrier when it is not the agent's own (never, for PTX waits are local), parity.
//      A run in which no agent hangs starts with `ok`. A simulator deadlock at another blocking
//      wait (kClusterWaitBegin, kNamedBarrierSyncBegin, kBulkWaitBegin, kCpAsyncWaitBegin without
//      its end) lists `c0a1@cluster.wait` (bar.sync, bulk.wait, cp.async.wait); the GPU executor
//      bounds only mbarrier waits, so litmus tests hang only there. The list is sorted by text.
//   3. Final phase parities (completed runs only). For every barrier element that was
//      initialised (kInit), the parity of the number of phases completed since its last init:
//      `ph{full[0]@0=1 empty[0]@0=0}` (name[element]@CTA=parity). The simulator records a
//      kPhaseComplete per completion; the GPU cannot observe completions as events, so its
//      executor probes each initialised barrier with test_wait.parity 0 after every agent exited
//      (kTestWait, pc == kProbePc, value 1 = odd number of phases). When a trace holds probe
//      events they are used, else kPhaseComplete events are counted. After a hang the GPU skips
//      the probe (TMA may still be in flight), so a hang outcome has no `ph{}` on either side.
//   4. Undefined behaviour (simulator only). A simulator run that ends at a kViolation of error
//      severity (the model found PTX-undefined behaviour, sim/model/codes.h; warnings such as
//      A1002 do not end a run and are ignored here) starts with `ub{M1005@b[0]@0}` (code id,
//      barrier name[element]@CTA as recorded in the event). The comparator treats such an
//      allowed outcome as "anything may happen": silicon outcomes are then reported, not failed.
//   5. mbarrier.pending_count results. Every `pending_count tok -> v` records a kPendingCount
//      event with the count as value (object/index 0: the instruction names no barrier). The
//      outcome lists them per agent in program order, comma-separated: `cnt{c0a0=3,2}`.
//   6. Global read-backs. Every `readback BUF -> v` (sim/ir/ir.h GlobalReadback) records a
//      kGlobalReadback event, value = the class 0..3 of what the agent read from the global
//      destination of BUF's bulk.store (0 initial contents, 1 its own `write` data, 2 a mix of
//      the two, 3 anything else), one digit per read in program order: `rb{c0a0=1}`.
//
// Outcome string grammar (single line, tokens separated by one space, deterministic order):
//   outcome := head [" tw{" agent_results "}"] [" cnt{" agent_counts "}"]
//              [" rb{" agent_classes "}"] [" ph{" parities "}"]
//   head    := "ok" | "hang{" hung_agents "}" | "ub{" code ["@" bar] "}"   (M1013: no bar)
//   agent   := ["k" cluster] "c" cta "a" agent       (cluster only when not 0)
// Lists inside braces are separated by one space and sorted: tw{}, cnt{} and rb{} by (cluster,
// CTA, agent), ph{} by (cluster, CTA, barrier declaration, element), hang{} by its text. A trap of the GPU
// kernel is reported by the GPU runner as `trap{...}` (not by OutcomeOf).
//
// ---------------------------------------------------------------------------------------------
// Histogram text format (a file per test and side: traces/litmus/<test>.h100.txt, and the
// simulator side computed on the fly or written with `parity litmus --write-sim DIR`):
//
//   Test NAME  Hash=0123456789abcdef  Source=h100  Runs=1000
//   612  ok tw{c0a1=0} ph{b[0]@0=1}
//   388  ok tw{c0a1=1} ph{b[0]@0=1}
//
// Line 1: the header, fields separated by two spaces (Hash = sim/ir/hash.h ContentHashHex,
// Source = sim | h100). Then one line per outcome: the count, two spaces, the outcome. Lines are
// sorted by outcome (byte order). Lines starting with `#` and empty lines are comments. For the
// simulator, Runs is the number of distinct end states explored and a count is how many of those
// end states show the outcome (the set matters, not the numbers).
#ifndef PARITY_SIM_LITMUS_OUTCOME_H_
#define PARITY_SIM_LITMUS_OUTCOME_H_

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <string_view>

#include "sim/common/status.h"
#include "sim/ir/ir.h"
#include "sim/trace/event.h"

namespace parity::litmus {

// The GPU executor's end-of-run probe marks its kTestWait events with this pc (must equal
// gpu/executor.h kProbePc; the runner static_asserts it).
inline constexpr uint16_t kProbePc = 0xffff;

// The canonical outcome string of ONE run, from that run's trace events (any order of agents;
// each agent's events must be in its program order, as both recorders guarantee).
std::string OutcomeOf(const ir::Program& program, std::span<const trace::TraceEvent> events);

// One side's histogram of one test.
struct Histogram {
  std::string name;    // the test (file stem)
  std::string hash;    // 16 hex digits, ir::ContentHashHex
  std::string source;  // "sim" or "h100"
  uint64_t runs = 0;
  std::map<std::string, uint64_t> counts;  // outcome -> runs showing it
};

// The text above. Runs and counts are written as given (no check that they add up).
std::string FormatHistogram(std::string_view name, std::string_view hash, std::string_view source,
                            uint64_t runs, const std::map<std::string, uint64_t>& counts);
std::string FormatHistogram(const Histogram& h);

// Parses the text. `file` names the input in errors (rule "litmus.format", with the 1-based line):
// missing or malformed header, a hash that is not 16 hex digits, a source other than sim/h100,
// a count that is not a number, an empty outcome, an outcome listed twice, counts that add up to
// more than Runs.
Expected<Histogram> ParseHistogram(std::string_view text, std::string_view file);

}  // namespace parity::litmus

#endif  // PARITY_SIM_LITMUS_OUTCOME_H_
