// Human-readable event lines for the command line: barrier, buffer and tensor-map names from the
// schedule instead of numbers, and (for `explain`) what each event did to its barrier.
#ifndef PARITY_TOOLS_CLI_NARRATE_H_
#define PARITY_TOOLS_CLI_NARRATE_H_

#include <string>

#include "sim/engine/engine.h"
#include "sim/ir/ir.h"
#include "sim/trace/event.h"

namespace parity::cli {

// "CTA 0 producer[0]: arrive.expect_tx full[1] of CTA 0 (count 1, +32768 tx bytes)".
std::string EventLine(const ir::Program& program, const engine::Engine& engine,
                      const trace::TraceEvent& e);

// The teaching form: EventLine plus the barrier's state after the event and why a phase
// flipped, in a sentence.
std::string NarrateEvent(const ir::Program& program, const engine::Engine& engine,
                         const trace::TraceEvent& e);

// The last `max_events` events (all when max_events == 0), numbered from 1 at the start of the
// run, as the behaviour prefix of a report.
std::string BehaviourPrefix(const ir::Program& program, const engine::Engine& engine,
                            size_t max_events);

}  // namespace parity::cli

#endif  // PARITY_TOOLS_CLI_NARRATE_H_
