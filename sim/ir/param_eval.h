// Evaluation of expressions over params only (param defaults, cluster shape after binding):
// the tree walker of sim/ir/eval.h with no variables and no builtins bound, its faults worded
// for a param context. Semantics are eval.h's (sim/ir/arith.h): int64 with C truncating / and
// %, and what would be undefined behaviour in C++ (division by zero, INT64_MIN / -1, signed
// overflow, shift counts outside 0..63) is an error; ?:, && and || evaluate only the operands
// they need.
#ifndef PARITY_SIM_IR_PARAM_EVAL_H_
#define PARITY_SIM_IR_PARAM_EVAL_H_

#include <cstdint>
#include <vector>

#include "sim/common/status.h"
#include "sim/ir/ir.h"

namespace parity::ir {

// `values[i]` is the value of params[i]; only params with index < values.size() may be referred
// to. A variable or builtin is an error with rule `rule`, as is any arithmetic fault.
Expected<int64_t> EvalParamExpr(const Program& program, ExprId id,
                                const std::vector<int64_t>& values,
                                const std::string& rule = "param.eval");

}  // namespace parity::ir

#endif  // PARITY_SIM_IR_PARAM_EVAL_H_
