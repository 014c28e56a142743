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

// Interchangeable CTAs: a group of permutations of the CTA ranks of a cluster (applied in every
// cluster alike) under which the program maps to itself, found by analysis of the program, not
// by names. Candidate generators are the rotations and reflections of the rank and of each
// cluster axis (and the transpose of a square cluster); a candidate g is kept when, for every
// agent a of CTA c and the agent b with a's role and index in CTA g(c):
//   - both CTAs hold the same agents (role, index, threads) and every declaration has the same
//     value in every CTA;
//   - rank-fixed variables (written only by top-level statements without operations that read
//     only params, builtins and rank-fixed variables: the engine runs those statements inside
//     one step, so their values are a function of the agent and its pc) are left out of the
//     fingerprint, and every operand reads them and the builtins only through parts (the
//     largest subexpressions that read a builtin or a rank-fixed variable and no other
//     variable), evaluated for a and b at the operand's place;
//   - an operand that names a CTA (`@cta(r)`, a barrier's CTA) reads no other variable and
//     b's value is g of a's; a multicast or arrive mask likewise, its bits permuted by g;
//   - a byte offset keeps its parts, or is a CTA stripe X + P * S (P from the rank, X, S and the
//     bytes kept, S a multiple of 1024, the stripe inside the slot), g maps stripe indices one
//     to one, and every other access of the buffer touches every stripe in the same relative
//     bytes;
//   - a TMA load coordinate (read by no state, only evaluated) keeps its parts, or its
//     differing parts are below 2^31 in magnitude and reached only through +, - and *;
//   - every other operand (indices, counts, parities, bytes, conditions, loop bounds, values of
//     variables that are not rank-fixed) keeps its parts; agent classes map to agent classes;
//   - a CTA builtin read anywhere else switches the analysis off.
// Then g maps every state to a state (agents, slots, named barriers and in-flight operations of
// rank r to rank g(r), every CTA rank and slot they name mapped, variables equal but the
// hidden ones), every step to a step of the image agent or operation, the initial state to
// itself and each kind of end state to the same kind: the engine reads a CTA's rank only
// through those operands. Trace-based verdicts (rules, races) see accesses whose CTAs are
// mapped by g and whose byte ranges are mapped by the stripe bijection, which keeps every other
// access's range: overlaps and happens-before are preserved. The group is the closure of the
// kept candidates (at most 64 elements; each element is checked again).
struct CtaSymmetry {
  std::vector<std::vector<uint32_t>> perms;  // the group's elements, rank -> rank (empty: none)
  std::vector<std::vector<uint8_t>> hidden;  // per role: its rank-fixed variables
  bool empty() const { return perms.empty(); }
};
CtaSymmetry CtaSymmetryGroup(const ir::Program& p, const std::vector<int64_t>& params,
                             const engine::Engine& e, const std::vector<uint32_t>& classes,
                             std::string* why);

// The least Engine::PermutedFingerprint over the group (with the agent classes `classes`,
// empty: none): the same for a state and every image of it under the group and the classes.
uint64_t CanonicalFingerprint(const engine::Engine& e, const CtaSymmetry& cta,
                              const std::vector<uint32_t>& classes);

// The symmetry one search uses (the one-thread and the parallel depth-first searches share it,
// so that their visited and terminal fingerprints are the same functions of a state).
struct SearchSymmetry {
  std::vector<uint32_t> classes;  // agent symmetry classes (SymmetryClasses); empty: none
  CtaSymmetry cta;                // interchangeable CTAs (CtaSymmetryGroup); empty: none
  bool visited = false;           // the visited set holds canonical fingerprints
  std::string description;        // the `symmetry` line of the result
  // The fingerprint the visited set stores.
  uint64_t VisitedFp(const engine::Engine& e) const;
  // The fingerprint of an end state: canonical whenever classes or a CTA group exist, so that
  // a brute-force search and a symmetry-reduced one can be compared.
  uint64_t TerminalFp(const engine::Engine& e, uint64_t visited_fp) const;
};
// `reduce`: symmetry may merge visited states (options: symmetry and reduction both on).
SearchSymmetry SymmetryForSearch(const ir::Program& p, const std::vector<int64_t>& params,
                                 const engine::Engine& e, bool reduce);

}  // namespace parity::verifier

#endif  // PARITY_VERIFIER_SYMMETRY_H_
