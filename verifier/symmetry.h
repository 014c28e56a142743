// Symmetry reduction's classes of interchangeable agents (ExploreOptions::symmetry).
#ifndef PARITY_VERIFIER_SYMMETRY_H_
#define PARITY_VERIFIER_SYMMETRY_H_

#include <cstdint>
#include <string>
#include <vector>

#include "sim/engine/engine.h"
#include "sim/ir/ir.h"

namespace parity::verifier {

// Whether a block (recursively) holds a `readback` (the engine then tracks write data per agent:
// content tags that name agents, which the symmetric fingerprint does not permute).
bool HasReadback(const ir::Block& block);

// Classes of interchangeable agents, found by following where each role's reads of the `agent`
// builtin flow (symmetry.cc gives the argument). Agents of one role in one CTA are put in one
// class when they agree on every agent-determined part of the role's operands and every stripe
// offset fits (below). Each operand that reads `agent` is either
//   (b) a stripe offset: the byte offset of a `use`, `write` or `cp.async` of the form
//       X + agent * S (either operand order) with X, S and the access's `bytes` fixed (below),
//       0 <= X, X + bytes <= S, every agent's stripe inside the slot, one S per buffer, and
//       every other access of that buffer (any role) touching each stripe of the class in the
//       same relative bytes (e.g. the whole slot, or none of the stripes). The engine's state
//       holds no offset (only trace events do), so permuting the agents and their stripes
//       together maps runs to runs and overlapping accesses to overlapping ones; or
//   (a) anything else: its agent-determined parts are its largest subexpressions that read
//       `agent` and no variable other than fixed ones (a variable assigned once, at the role's
//       top level, from params, constants, builtins and earlier fixed variables, and read only
//       after that statement; at worst the part is `agent` itself). Each part has one value per
//       agent; agents that agree on all of them take the same branches and loop trips and name
//       the same barriers, counts, parities, masks, CTAs and coordinates.
// Returns one class id per agent (engine::Engine::kNoGroup: alone), or empty when symmetry
// does not apply; *why: a line for the report.
std::vector<uint32_t> SymmetryClasses(const ir::Program& p, const std::vector<int64_t>& params,
                                      const engine::Engine& e, std::string* why);

}  // namespace parity::verifier

#endif  // PARITY_VERIFIER_SYMMETRY_H_
