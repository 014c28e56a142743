// Evaluation of ir::Expr values for one agent: bound params, the agent's variable slots and its
// builtins (PTX special registers such as %cluster_ctarank and schedule facts).
//
// Arithmetic is on int64_t with C semantics for / and % (truncation toward zero). Everything that
// would be undefined behaviour in C++ is an error instead: division or modulo by zero,
// INT64_MIN / -1, shift counts outside 0..63, and signed overflow of + - * and unary minus.
// && and || short-circuit and ?: evaluates only the chosen arm, so `x != 0 && 10 / x` is safe.
//
// Two entry points: Eval() returns an Expected with a Status that names the expression's source
// location (for tools and binding), and EvalFast() is the allocation-free hot-path form used by
// the engine, which reports the failing expression as an ExprId that EvalErrorStatus() turns into
// the same Status later.
#ifndef PARITY_SIM_IR_EVAL_H_
#define PARITY_SIM_IR_EVAL_H_

#include <array>
#include <cstddef>
#include <cstdint>

#include "sim/common/status.h"
#include "sim/ir/ir.h"

namespace parity::ir {

inline constexpr size_t kNumBuiltins = kNumBuiltinCodes;  // one per ir::Builtin

// Values of the builtins, indexed by static_cast<size_t>(Builtin).
using BuiltinValues = std::array<int64_t, kNumBuiltins>;

// Builtins of one agent of a grid of `clusters` clusters (grid_cta and grid_size follow).
BuiltinValues MakeBuiltins(int64_t cta_rank, int64_t cta_x, int64_t cta_y, int64_t cluster_m,
                           int64_t cluster_n, int64_t cluster_id, int64_t agent,
                           int64_t clusters = 1);

// The model state that assertions read (Expr::Kind::kState), supplied by the engine. Read
// returns false for an element or slot outside its array (the evaluation faults there).
class StateReader {
 public:
  virtual ~StateReader() = default;
  virtual bool Read(StateFn fn, uint32_t decl, int64_t index, int64_t* out) const = 0;
};

// What an expression may refer to. `vars` may be null when num_vars is 0 (declarations, which
// see params and builtins only). The pointers must outlive the call.
struct EvalEnv {
  const int64_t* params = nullptr;
  size_t num_params = 0;
  const int64_t* vars = nullptr;
  size_t num_vars = 0;
  const BuiltinValues* builtins = nullptr;  // null: any builtin is an error ("eval.builtin")
  const StateReader* state = nullptr;        // null: a state read is an error (not an assertion)
};

// EvalError: sim/ir/ops.h (the GPU executor reports the same errors, sim/ir/exec.h).

// The first failure of an evaluation: what, where, and the operand values involved.
struct EvalFault {
  EvalError error = EvalError::kNone;
  ExprId at = kNoExpr;  // the innermost failing node
  int64_t lhs = 0;
  int64_t rhs = 0;
  bool ok() const { return error == EvalError::kNone; }
};

// Hot path: evaluates `id`. On error returns 0 and fills *fault (if it is still ok: the first
// fault wins); leaves it untouched otherwise. No allocation.
int64_t EvalFast(const Program& program, ExprId id, const EvalEnv& env, EvalFault* fault);

// The Status for a fault reported by EvalFast: rule as above, a message naming the operator and
// the operand values, and the failing expression's location (file from program.file if missing).
Status EvalFaultStatus(const Program& program, const EvalFault& fault);

// Convenience form: the value or the Status of the first error.
Expected<int64_t> Eval(const Program& program, ExprId id, const EvalEnv& env);

}  // namespace parity::ir

#endif  // PARITY_SIM_IR_EVAL_H_
