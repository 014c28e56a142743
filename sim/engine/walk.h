// The one control-flow walker, compiled by g++ and by nvcc (sim/common/host_device.h). A role's
// let/for/while/if/break are compiled once to flat jump code (sim/engine/control.h, CompileRole);
// WalkToOp runs that code to the role's next operation. Its users:
//   - the engine steps agents with it (Engine::Exec::StepAgent) and the partial-order
//     reduction's look-ahead runs ahead with it (Engine::Exec::SoloFuture);
//   - CTA symmetry replays operation-free statements with it (verifier/cta_symmetry.cc);
//   - the GPU executor's kernel and the host's resolution of op streams walk the same code as
//     carried by the compact encoding (sim/ir/encoding.h, per-role control code; sim/ir/exec.h
//     NextOp), so the numbering it defines is TraceEvent::pc on both sides.
//
// Device-safe: the code is any array of records with the fields kind, var, e1, e2, target (the
// engine's Instr, the encoding's EncodedInstr); expressions are the caller's to evaluate.
#ifndef PARITY_SIM_ENGINE_WALK_H_
#define PARITY_SIM_ENGINE_WALK_H_

#include <cstdint>

#include "sim/common/host_device.h"
#include "sim/ir/arith.h"

namespace parity::engine {

// "No expression" in e1/e2 (ir::kNoExpr, and the encoding's kEncodingNone).
inline constexpr uint32_t kNoRef = 0xffffffffu;

// The instruction kinds. The values are part of the compact encoding (its control code), so
// a new kind goes at the end and bumps ir::kEncodingVersion.
enum InstrKind : uint8_t {
  kOp = 0,           // an operation: the caller executes it
  kLet = 1,          // vars[var] = e1
  kJump = 2,         // pc = target
  kJumpIfFalse = 3,  // if (!e1) pc = target
  kForInit = 4,      // vars[var] = e1 (lo)
  kForTest = 5,      // if (!(vars[var] < e1)) pc = target (hi, exclusive)
  kForStep = 6,      // vars[var] += e1 (step, default 1, must be > 0); pc = target (the test)
  kEnd = 7,          // end of the role body: implicit exit
  // `while` (ir::For with a cond): kForInit sets the pass counter `var` to 0; then
  kWhileTest = 8,    // if (!e1) pc = target; else if (vars[var] >= e2) engine.while-bound
  // then the body, and kForStep (step 1) back to the test. `break` is a kJump past the step.
  kAssert = 9,       // assert e1 (Program::assertions[var]): fails the run when e1 is 0
};
inline constexpr uint32_t kNumInstrKinds = 10;

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
// `bool(uint32_t expr, int64_t* value)`, false on a fault (the caller's evaluator, which
// reports it). *steps counts the control instructions walked, across calls if the caller keeps
// it; a walk with *steps > limit at an instruction stops there (kNoProgress): a loop without
// operations, or (on the GPU) the point to look whether another agent gave up.
template <typename In, typename Ev>
PARITY_HD __attribute__((always_inline)) inline Control WalkToOp(
    const In* code, uint32_t* pc, int64_t* vars, Ev&& ev, uint32_t limit, uint32_t* steps,
    int64_t* detail = nullptr, uint32_t stop = 0xffffffffu) {
  for (;; ++*steps) {
    if (*pc == stop) return Control::kStop;
    if (*steps > limit) return Control::kNoProgress;
    const In& in = code[*pc];
    int64_t v = 0;
    switch (static_cast<InstrKind>(in.kind)) {
      case kLet:
      case kForInit:
        if (!ev(in.e1, &v)) return Control::kEvalFault;
        vars[in.var] = v;
        ++*pc;
        continue;
      case kJump:
        *pc = in.target;
        continue;
      case kJumpIfFalse:
        if (!ev(in.e1, &v)) return Control::kEvalFault;
        *pc = v != 0 ? *pc + 1 : in.target;
        continue;
      case kForTest:
        if (!ev(in.e1, &v)) return Control::kEvalFault;
        *pc = vars[in.var] < v ? *pc + 1 : in.target;
        continue;
      case kWhileTest: {
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
      case kForStep:
        v = 1;
        if (in.e1 != kNoRef && !ev(in.e1, &v)) return Control::kEvalFault;
        if (v <= 0) {
          if (detail != nullptr) *detail = v;
          return Control::kBadStep;
        }
        if (ir::AddOverflows(vars[in.var], v, &vars[in.var])) return Control::kStepOverflow;
        *pc = in.target;
        continue;
      case kEnd:
        return Control::kEnd;
      case kOp:
        return Control::kAtOp;
      case kAssert:
        return Control::kAtAssert;
    }
    return Control::kEnd;  // not reached for well-formed code: every kind is handled above
  }
}

}  // namespace parity::engine

#endif  // PARITY_SIM_ENGINE_WALK_H_
