// Compiling a role's control flow to flat code (control.h).
#include "sim/engine/control.h"

#include <cstdint>
#include <variant>
#include <vector>

namespace parity::engine {

void CompileBlock(const ir::Block& block, std::vector<Instr>& out, std::vector<uint32_t>* breaks) {
  auto emit = [&out](const ir::Stmt& st, Instr::Kind kind, uint32_t var, ir::ExprId e1,
                     ir::ExprId e2 = ir::kNoExpr) {
    out.push_back({kind, var, e1, 0, nullptr, &st.where, e2, &st});
    return static_cast<uint32_t>(out.size() - 1);
  };
  for (const ir::Stmt& st : block) {
    if (const auto* let = std::get_if<ir::Let>(&st.node)) {
      emit(st, Instr::kLet, let->var, let->value);
    } else if (const auto* f = std::get_if<ir::For>(&st.node)) {
      const bool is_while = f->cond != ir::kNoExpr;
      emit(st, Instr::kForInit, f->var, f->lo);
      const uint32_t test = is_while ? emit(st, Instr::kWhileTest, f->var, f->cond, f->hi)
                                     : emit(st, Instr::kForTest, f->var, f->hi);
      std::vector<uint32_t> inner;
      CompileBlock(f->body, out, &inner);
      const uint32_t step = emit(st, Instr::kForStep, f->var, is_while ? ir::kNoExpr : f->step);
      out[step].target = test;
      out[test].target = static_cast<uint32_t>(out.size());
      for (uint32_t b : inner) out[b].target = static_cast<uint32_t>(out.size());
    } else if (const auto* i = std::get_if<ir::If>(&st.node)) {
      const uint32_t branch = emit(st, Instr::kJumpIfFalse, 0, i->cond);
      CompileBlock(i->then_body, out, breaks);
      if (i->else_body.empty()) {
        out[branch].target = static_cast<uint32_t>(out.size());
      } else {
        const uint32_t jump = emit(st, Instr::kJump, 0, ir::kNoExpr);
        out[branch].target = static_cast<uint32_t>(out.size());
        CompileBlock(i->else_body, out, breaks);
        out[jump].target = static_cast<uint32_t>(out.size());
      }
    } else if (std::holds_alternative<ir::Break>(st.node)) {
      // The parser admits `break` only inside a loop (parse.break-outside-loop); a program built
      // in code with a stray one gets a jump to the end of the role body (the implicit exit).
      const uint32_t jump = emit(st, Instr::kJump, 0, ir::kNoExpr);
      if (breaks != nullptr) breaks->push_back(jump);
    } else if (const auto* as = std::get_if<ir::Assert>(&st.node)) {
      // e1 (the condition, Program::assertions[var].cond) is the caller's to fill in: the
      // engine's Create, which has the program.
      emit(st, Instr::kAssert, as->id, ir::kNoExpr);
    } else {
      const uint32_t op = emit(st, Instr::kOp, 0, ir::kNoExpr);
      out[op].op = &std::get<ir::Op>(st.node);
    }
  }
}

std::vector<Instr> CompileRole(const ir::Role& role) {
  std::vector<Instr> code;
  std::vector<uint32_t> stray_breaks;
  CompileBlock(role.body, code, &stray_breaks);
  for (uint32_t b : stray_breaks) code[b].target = static_cast<uint32_t>(code.size());
  code.push_back({Instr::kEnd, 0, ir::kNoExpr, 0, nullptr, &role.where});
  return code;
}

}  // namespace parity::engine
