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

// The agents of one role in one CTA are interchangeable when the role never reads the `agent`
// builtin (the only per-agent input that differs between them). Returns one class id per agent
// (engine::Engine::kNoGroup: alone), or empty when symmetry does not apply; *why: a line for
// the report.
std::vector<uint32_t> SymmetryClasses(const ir::Program& p, const engine::Engine& e,
                                      std::string* why);

}  // namespace parity::verifier

#endif  // PARITY_VERIFIER_SYMMETRY_H_
