// A role's control flow, compiled once (CompileRole) to the flat code that the one walker
// (sim/engine/walk.h, WalkToOp) runs for the engine, its look-ahead, CTA symmetry, the GPU
// executor and the host resolution. The instruction numbering defined here is TraceEvent::pc,
// which verifier/pc_map.h maps back to statements from the same compilation; the compact
// encoding carries the same code per role (sim/ir/encoding.cc), so the GPU walks it too.
#ifndef PARITY_SIM_ENGINE_CONTROL_H_
#define PARITY_SIM_ENGINE_CONTROL_H_

#include <cstdint>
#include <vector>

#include "sim/engine/walk.h"
#include "sim/ir/ir.h"

namespace parity::engine {

static_assert(ir::kNoExpr == kNoRef, "the walker's 'no expression' is the IR's");

// One instruction of an agent's flat program (the kinds: walk.h InstrKind). Control flow
// (let/for/if) is compiled to jumps so that a step never walks the statement tree.
struct Instr {
  using Kind = InstrKind;
  using enum InstrKind;
  Kind kind = kOp;
  uint32_t var = 0;
  ir::ExprId e1 = ir::kNoExpr;
  uint32_t target = 0;
  const ir::Op* op = nullptr;
  const SourceLocation* where = nullptr;
  ir::ExprId e2 = ir::kNoExpr;  // kWhileTest: the bound
  const ir::Stmt* stmt = nullptr;  // the statement compiled; null: the implicit exit
};

// Appends `block`'s instructions to `out`. `breaks` collects the kJump of each `break` of the
// innermost enclosing loop, which patches them to its exit once compiled.
void CompileBlock(const ir::Block& block, std::vector<Instr>& out,
                  std::vector<uint32_t>* breaks = nullptr);

// A role's whole program: its body, then the implicit exit (kEnd), where stray breaks land.
std::vector<Instr> CompileRole(const ir::Role& role);

}  // namespace parity::engine

#endif  // PARITY_SIM_ENGINE_CONTROL_H_
