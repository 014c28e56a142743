// Pieces of the deadlock explanation shared by verifier/deadlock.cc and
// verifier/deadlock_named.cc (the named-barrier part); not part of the library's interface.
#ifndef PARITY_VERIFIER_DEADLOCK_INTERNAL_H_
#define PARITY_VERIFIER_DEADLOCK_INTERNAL_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "sim/engine/engine.h"
#include "sim/ir/ir.h"
#include "sim/trace/event.h"

namespace parity::verifier::deadlock_internal {

// "CTA 0 producer[0], CTA 0 consumer[0], and 3 more".
std::string AgentList(const ir::Program& program, const engine::Engine& engine,
                      const std::vector<uint32_t>& agents, size_t max = 6);

// What a blocked agent waits on: "full[0] of CTA 0 parity 1", "named barrier q_empty
// (bar.sync)", ...
std::string WaitTarget(const ir::Program& program, const engine::BlockedAgent& b);

// Who arrived at a blocked named barrier's current instance and who did not, for its
// explanation (appended to the cause text): the agents waiting there, those that arrived with
// bar.arrive and went on (and where they are now), and every other agent of the CTA with its
// threads and where it is (blocked at which wait and line, or exited). `events` is the run.
std::string NamedBarrierParticipants(const ir::Program& program, const engine::Engine& engine,
                                     const engine::DeadlockInfo& deadlock,
                                     const engine::BlockedAgent& b,
                                     const std::vector<trace::TraceEvent>& events);

}  // namespace parity::verifier::deadlock_internal

#endif  // PARITY_VERIFIER_DEADLOCK_INTERNAL_H_
