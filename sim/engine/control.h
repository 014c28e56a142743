// A role's control flow, compiled once and walked by one function. The engine steps agents
// with it (Engine::Exec::StepAgent), the partial-order reduction's look-ahead runs ahead with it
// (Engine::Exec::SoloFuture), CTA symmetry replays operation-free statements with it
// (verifier/cta_symmetry.cc), and the instruction numbering it defines is TraceEvent::pc, which
// verifier/pc_map.h maps back to statements from the same compilation.
//
// (The GPU executor walks the compact encoding's records instead, sim/ir/exec.h Advance, to the
// same semantics; tests/sim/ir/exec_test compares the two on every bundled schedule.)
#ifndef PARITY_SIM_ENGINE_CONTROL_H_
#define PARITY_SIM_ENGINE_CONTROL_H_

#include <cstdint>
#include <variant>
#include <vector>

#include "sim/ir/ir.h"

namespace parity::engine {

// One instruction of an agent's flat program. Control flow (let/for/if) is compiled to jumps so
// that a step never walks the statement tree.
struct Instr {
  enum Kind : uint8_t {
    kOp,           // op: execute *op
    kLet,          // vars[var] = e1
    kJump,         // pc = target
    kJumpIfFalse,  // if (!e1) pc = target
    kForInit,      // vars[var] = e1 (lo)
    kForTest,      // if (!(vars[var] < e1)) pc = target (hi, exclusive)
    kForStep,      // vars[var] += e1 (step, default 1, must be > 0); pc = target (the test)
    kEnd,          // end of the role body: implicit exit
    // `while` (ir::For with a cond): kForInit sets the pass counter `var` to 0; then
    kWhileTest,    // if (!e1) pc = target; else if (vars[var] >= e2) engine.while-bound
    // then the body, and kForStep (step 1) back to the test. `break` is a kJump past the step.
    kAssert,       // assert e1 (Program::assertions[var]): fails the run when e1 is 0
  };
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
inline void CompileBlock(const ir::Block& block, std::vector<Instr>& out,
                         std::vector<uint32_t>* breaks = nullptr) {
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

// A role's whole program: its body, then the implicit exit (kEnd), where stray breaks land.
inline std::vector<Instr> CompileRole(const ir::Role& role) {
  std::vector<Instr> code;
  std::vector<uint32_t> stray_breaks;
  CompileBlock(role.body, code, &stray_breaks);
  for (uint32_t b : stray_breaks) code[b].target = static_cast<uint32_t>(code.size());
  code.push_back({Instr::kEnd, 0, ir::kNoExpr, 0, nullptr, &role.where});
  return code;
}

// Where a walk stopped. At every stop but kStop, *pc is the instruction that stopped it.
enum class Control : uint8_t {
  kAtOp,          // an operation (kOp): the caller executes it
  kAtAssert,      // an assertion (kAssert): the caller checks it, then walks on from *pc + 1
  kEnd,           // the implicit exit
  kStop,          // reached the caller's stop pc
  kEvalFault,     // an expression faulted (the evaluator reported it)
  kWhileBound,    // a `while` condition still holds at its bound (*detail: the bound)
  kBadStep,       // a `for` step that is not positive (*detail: the step)
  kStepOverflow,  // a `for` variable overflowed
  kNoProgress,    // more than `limit` instructions walked (*steps counts them)
};

// Runs the control instructions from *pc to the next operation, the end, or `stop`. `ev` is
// `bool(ir::ExprId, int64_t*)`, false on a fault (the caller's evaluator, which reports it).
// *steps counts the control instructions walked, across calls if the caller keeps it; a walk
// with *steps > limit at an instruction stops there (kNoProgress): a loop without operations.
template <typename Ev>
__attribute__((always_inline)) inline Control WalkToOp(const std::vector<Instr>& code,
                                                       uint32_t* pc, int64_t* vars, Ev&& ev,
                                                       uint32_t limit, uint32_t* steps,
                                                       int64_t* detail = nullptr,
                                                       uint32_t stop = 0xffffffffu) {
  for (;; ++*steps) {
    if (*pc == stop) return Control::kStop;
    if (*steps > limit) return Control::kNoProgress;
    const Instr& in = code[*pc];
    int64_t v = 0;
    switch (in.kind) {
      case Instr::kLet:
      case Instr::kForInit:
        if (!ev(in.e1, &v)) return Control::kEvalFault;
        vars[in.var] = v;
        ++*pc;
        continue;
      case Instr::kJump:
        *pc = in.target;
        continue;
      case Instr::kJumpIfFalse:
        if (!ev(in.e1, &v)) return Control::kEvalFault;
        *pc = v != 0 ? *pc + 1 : in.target;
        continue;
      case Instr::kForTest:
        if (!ev(in.e1, &v)) return Control::kEvalFault;
        *pc = vars[in.var] < v ? *pc + 1 : in.target;
        continue;
      case Instr::kWhileTest: {
        if (!ev(in.e1, &v)) return Control::kEvalFault;
        if (v == 0) {
          *pc = in.target;
          continue;
        }
        int64_t bound = 0;
        if (!ev(in.e2, &bound)) return Control::kEvalFault;
        if (vars[in.var] >= bound) {
          if (detail != nullptr) *detail = bound;
          return Control::kWhileBound;
        }
        ++*pc;
        continue;
      }
      case Instr::kForStep:
        v = 1;
        if (in.e1 != ir::kNoExpr && !ev(in.e1, &v)) return Control::kEvalFault;
        if (v <= 0) {
          if (detail != nullptr) *detail = v;
          return Control::kBadStep;
        }
        if (__builtin_add_overflow(vars[in.var], v, &vars[in.var])) return Control::kStepOverflow;
        *pc = in.target;
        continue;
      case Instr::kEnd:
        return Control::kEnd;
      case Instr::kOp:
        return Control::kAtOp;
      case Instr::kAssert:
        return Control::kAtAssert;
    }
    return Control::kEnd;  // not reached: every kind is handled above
  }
}

}  // namespace parity::engine

#endif  // PARITY_SIM_ENGINE_CONTROL_H_
