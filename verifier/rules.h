// Protocol rules and shared-memory races of one run (codes P2002..P2009, sim/model/codes.h).
//
// CheckRules is a pure function of (program, engine after a run, its trace) -> findings, one
// pass over the trace plus a look at the final barrier states, so that an explorer can call it on
// every terminal path. It needs the trace that the engine recorded (EngineOptions::record_trace).
//
// Happens-before is verifier/happens_before.h's (shared with verifier/races.h): program order,
// mbarrier release -> acquire, barrier.cluster (a .relaxed arrive releases what a fence before
// it covers: fence.acq_rel's accesses, fence.mbarrier_init's inits), bar.sync / bar.arrive, and
// a copy's issue -> its delivery.
//
// Buffers are tracked per (CTA, buffer, slot): a `use`/`write` covers the slot it names, a TMA or
// bulk load the slot of its destination (offsets within a slot are not distinguished, so two
// multicast slices of one slot count as the same location; only copy-vs-access pairs are checked,
// never copy-vs-copy). An st.async's slot is known only when its slot and barrier-element
// expressions are the same tree (the trace event names the barrier, not the slot).
//
// Copies are matched to their issue by (issuing CTA, instruction, destination CTA) and, where the
// issue names it, the barrier element; a TMA issue event does not carry its barrier, so among
// several in-flight copies of one instruction to one CTA the oldest whose slot equals the
// barrier element wins (stage-indexed rings), else the oldest.
//
// Doubtful / not covered:
//   - an arrival count lower than the arrivals of one iteration is not reported as P2002 itself
//     (pingpong pipelines legitimately alternate single arrivers); its effect is reported as P2005
//     (reads before the late arrivals' bytes) or by the engine (M1005);
//   - cp.async writes, TMA-store source reuse before cp.async.bulk.wait_group.read, and generic
//     writes against in-flight copies are not checked.
#ifndef PARITY_VERIFIER_RULES_H_
#define PARITY_VERIFIER_RULES_H_

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "sim/common/status.h"
#include "sim/engine/engine.h"
#include "sim/ir/ir.h"
#include "sim/model/codes.h"
#include "sim/trace/event.h"
#include "verifier/pc_map.h"

namespace parity::verifier {

inline constexpr uint32_t kNoFindingAgent = 0xffffffffu;

// One protocol finding.
struct Finding {
  model::Violation violation{};  // code + the two numbers of Describe()
  std::string message;           // one or two sentences naming barrier/buffer, CTA, agents
  uint32_t agent = kNoFindingAgent;  // global agent id responsible (the issuer for a copy)
  uint32_t other_agent = kNoFindingAgent;  // the other party (reader of a race, waiter, ...)
  uint32_t cta = 0;              // global CTA number owning the object
  bool object_is_buffer = false;  // object indexes Program::buffers (else Program::barriers)
  bool object_is_global = false;  // object indexes Program::globals (verifier/pdl.h)
  bool object_is_tensor_map = false;  // object indexes Program::tensor_maps (tensormap.h)
  uint32_t object = 0;
  uint32_t index = 0;            // barrier element or buffer slot
  SourceLocation where;          // the statement of `agent` (or the issuing statement)
  uint32_t pc = 0;               // that statement's instruction index in the agent's role
  uint32_t other_pc = 0;         // the other party's instruction (races: the earlier access)
  size_t event = 0;              // index into the trace of the event where it was found
  // Two verdict levels (docs/levels.md): a finding of an error code is an error when PTX leaves
  // the pair unordered and a compiler or the hardware can plausibly exhibit it; it is a warning
  // (`strict`: an error only under --strict) when only the formal model leaves it unordered, on
  // a pattern production code relies on and no silicon test shows. Decided per finding, by the
  // rule that reports it.
  bool strict_only = false;

  model::Code code() const { return violation.code; }
  // The level this finding is reported at: its code's severity, a warning when strict_only
  // (unless `strict`).
  model::Severity level(bool strict = false) const;
};

// Runs every rule on a finished (or stopped) run. Findings come in trace order, the end-of-run
// rules (P2003, P2004, P2008) last. A run that ended in kViolation/kError/kStepLimit gets only
// the trace rules (things may still be in flight). Deduplicated: one finding per rule, object and
// agent pair.
std::vector<Finding> CheckRules(const ir::Program& program, const engine::Engine& engine,
                                std::span<const trace::TraceEvent> trace);

// Whether the program has an `exists` property (ir::Assertion::Kind::kExists).
bool HasExists(const ir::Program& program);

// A P2034 finding at the line of each `exists` property whose bit is not in `held` (bits as
// engine::Engine::ExistsHeld numbers them): `one_run` says the judgement is of one run (check)
// rather than of every complete run of a complete search (explore).
std::vector<Finding> ExistsFindings(const ir::Program& program, uint64_t held, bool one_run);

// Whether any finding is at error level (Finding::level(strict)).
bool HasErrors(const std::vector<Finding>& findings, bool strict = false);

}  // namespace parity::verifier

#endif  // PARITY_VERIFIER_RULES_H_
