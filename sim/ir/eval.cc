#include "sim/ir/eval.h"

#include <string>
#include <vector>

#include "sim/ir/arith.h"
#include "sim/ir/param_eval.h"

namespace parity::ir {
namespace {

const char* BinaryOpName(BinaryOp op) {
  switch (op) {
    case BinaryOp::kAdd: return "+";
    case BinaryOp::kSub: return "-";
    case BinaryOp::kMul: return "*";
    case BinaryOp::kDiv: return "/";
    case BinaryOp::kMod: return "%";
    case BinaryOp::kShl: return "<<";
    case BinaryOp::kShr: return ">>";
    case BinaryOp::kBitAnd: return "&";
    case BinaryOp::kBitOr: return "|";
    case BinaryOp::kBitXor: return "^";
    case BinaryOp::kEq: return "==";
    case BinaryOp::kNe: return "!=";
    case BinaryOp::kLt: return "<";
    case BinaryOp::kLe: return "<=";
    case BinaryOp::kGt: return ">";
    case BinaryOp::kGe: return ">=";
    case BinaryOp::kAnd: return "&&";
    case BinaryOp::kOr: return "||";
    case BinaryOp::kMin: return "min";
    case BinaryOp::kMax: return "max";
  }
  return "?";
}

// Records the first fault only.
int64_t Fail(EvalFault* fault, EvalError error, ExprId at, int64_t lhs = 0, int64_t rhs = 0) {
  if (fault->ok()) *fault = EvalFault{error, at, lhs, rhs};
  return 0;
}

// Deeper trees than this are refused rather than recursed into (the parser stops at a far
// smaller depth; this guards programs built in code).
constexpr int kMaxDepth = 10000;

// The tree walker: the one evaluator of ir::Expr on the host, for agents (EvalFast) and for
// params alone (EvalParamExpr). The operators are sim/ir/arith.h's.
class Evaluator {
 public:
  Evaluator(const Program& program, const EvalEnv& env, EvalFault* fault)
      : program_(program), env_(env), fault_(fault) {}

  int64_t Run(ExprId id, int depth = 0) {
    if (id >= program_.exprs.size()) return Fail(fault_, EvalError::kBadReference, id);
    if (depth > kMaxDepth) return Fail(fault_, EvalError::kTooDeep, id);
    const Expr& e = program_.exprs[id];
    int64_t v = 0;
    switch (e.kind) {
      case Expr::Kind::kConst:
      case Expr::Kind::kParam:
      case Expr::Kind::kVar:
      case Expr::Kind::kBuiltin:
        if (!Leaf(e, &v)) return Fail(fault_, EvalError::kBadReference, id, LeafIndex(e));
        return v;
      case Expr::Kind::kState: {
        const int64_t index = e.a == kNoExpr ? 0 : Run(e.a, depth + 1);
        if (!fault_->ok()) return 0;
        if (env_.state == nullptr ||
            !env_.state->Read(static_cast<StateFn>(e.op), e.index, index, &v)) {
          return Fail(fault_, EvalError::kBadReference, id, index);
        }
        return v;
      }
      case Expr::Kind::kUnary: {
        const int64_t a = Run(e.a, depth + 1);
        if (!fault_->ok()) return 0;
        const EvalError error = ApplyUnary(static_cast<UnaryOp>(e.op), a, &v);
        if (error != EvalError::kNone) return Fail(fault_, error, id, a);
        return v;
      }
      case Expr::Kind::kSelect: {
        const int64_t c = Run(e.a, depth + 1);
        if (!fault_->ok()) return 0;
        return Run(c != 0 ? e.b : e.c, depth + 1);
      }
      case Expr::Kind::kBinary:
        return Binary(id, e, depth);
    }
    return Fail(fault_, EvalError::kBadOp, id);
  }

 private:
  // The value of a leaf node; false: not a leaf, or a reference that is not bound here. The
  // one place that reads params, variables and builtins: a new kind of leaf goes here.
  bool Leaf(const Expr& e, int64_t* v) const {
    switch (e.kind) {
      case Expr::Kind::kConst: *v = e.value; return true;
      case Expr::Kind::kVar:
        if (e.index >= env_.num_vars) return false;
        *v = env_.vars[e.index];
        return true;
      case Expr::Kind::kParam:
        if (e.index >= env_.num_params) return false;
        *v = env_.params[e.index];
        return true;
      case Expr::Kind::kBuiltin:
        if (env_.builtins == nullptr || e.op >= kNumBuiltins) return false;
        *v = (*env_.builtins)[e.op];
        return true;
      default: return false;
    }
  }
  static int64_t LeafIndex(const Expr& e) {
    return e.kind == Expr::Kind::kBuiltin ? e.op : e.index;
  }
  // An operand: leaves without recursion (the common case), anything else by Run.
  int64_t Operand(ExprId id, int depth) {
    int64_t v;
    if (id < program_.exprs.size() && Leaf(program_.exprs[id], &v)) return v;
    return Run(id, depth + 1);
  }

  int64_t Binary(ExprId id, const Expr& e, int depth) {
    const auto op = static_cast<BinaryOp>(e.op);
    const int64_t a = Operand(e.a, depth);
    if (!fault_->ok()) return 0;
    // Short-circuit forms: the right operand is not evaluated (so it cannot fail).
    if (op == BinaryOp::kAnd && a == 0) return 0;
    if (op == BinaryOp::kOr && a != 0) return 1;
    const int64_t b = Operand(e.b, depth);
    if (!fault_->ok()) return 0;
    int64_t r = 0;
    const EvalError error = ApplyBinary(op, a, b, &r);
    if (error != EvalError::kNone) return Fail(fault_, error, id, a, b);
    return r;
  }

  const Program& program_;
  const EvalEnv& env_;
  EvalFault* fault_;
};

// EvalParamExpr's message for a fault of the tree walker: the params-only wording (no
// variables, no builtins), naming the operator.
std::string ParamFaultMessage(const Program& program, const EvalFault& fault) {
  if (fault.at >= program.exprs.size()) return "malformed expression (bad operand id)";
  const Expr& e = program.exprs[fault.at];
  switch (fault.error) {
    case EvalError::kTooDeep:
      return "expression nested too deeply";
    case EvalError::kBadReference:
      if (e.kind == Expr::Kind::kParam) return "refers to a parameter that is not bound yet";
      if (e.kind == Expr::Kind::kState) {
        return "a state read such as phase(b) is allowed only in an assertion";
      }
      if (e.kind == Expr::Kind::kVar) {
        return "a variable cannot be used here (only params and constants)";
      }
      return "a builtin such as cta_rank cannot be used here (only params and constants)";
    case EvalError::kDivByZero:
      return "division by zero";
    case EvalError::kShiftRange:
      return "shift count " + std::to_string(fault.rhs) + " outside 0..63";
    case EvalError::kOverflow:
      if (e.kind == Expr::Kind::kUnary) return "overflow in unary -";
      switch (static_cast<BinaryOp>(e.op)) {
        case BinaryOp::kDiv:
        case BinaryOp::kMod: return "overflow in / or %";
        default: return std::string("overflow in ") + BinaryOpName(static_cast<BinaryOp>(e.op));
      }
    case EvalError::kBadOp:
    case EvalError::kNone:
      break;
  }
  if (e.kind == Expr::Kind::kUnary) return "malformed unary operator";
  if (e.kind == Expr::Kind::kBinary) return "malformed binary operator";
  return "malformed expression kind";
}

}  // namespace

BuiltinValues MakeBuiltins(int64_t cta_rank, int64_t cta_x, int64_t cta_y, int64_t cluster_m,
                           int64_t cluster_n, int64_t cluster_id, int64_t agent,
                           int64_t clusters) {
  BuiltinValues v{};
  v[static_cast<size_t>(Builtin::kCtaRank)] = cta_rank;
  v[static_cast<size_t>(Builtin::kCtaX)] = cta_x;
  v[static_cast<size_t>(Builtin::kCtaY)] = cta_y;
  v[static_cast<size_t>(Builtin::kClusterM)] = cluster_m;
  v[static_cast<size_t>(Builtin::kClusterN)] = cluster_n;
  v[static_cast<size_t>(Builtin::kClusterSize)] = cluster_m * cluster_n;
  v[static_cast<size_t>(Builtin::kClusterId)] = cluster_id;
  v[static_cast<size_t>(Builtin::kAgent)] = agent;
  v[static_cast<size_t>(Builtin::kNumClusters)] = clusters;
  v[static_cast<size_t>(Builtin::kGridCta)] = cluster_id * cluster_m * cluster_n + cta_rank;
  v[static_cast<size_t>(Builtin::kGridSize)] = clusters * cluster_m * cluster_n;
  return v;
}

int64_t EvalFast(const Program& program, ExprId id, const EvalEnv& env, EvalFault* fault) {
  // Constants and variables are by far the most frequent leaves: answer them without the
  // recursive walker.
  if (id < program.exprs.size()) {
    const Expr& e = program.exprs[id];
    if (e.kind == Expr::Kind::kConst) return e.value;
    if (e.kind == Expr::Kind::kVar && e.index < env.num_vars) return env.vars[e.index];
  }
  return Evaluator(program, env, fault).Run(id);
}

Status EvalFaultStatus(const Program& program, const EvalFault& fault) {
  PARITY_CHECK(!fault.ok(), "EvalFaultStatus of a successful evaluation");
  SourceLocation where;
  std::string op = "?";
  if (fault.at < program.exprs.size()) {
    const Expr& e = program.exprs[fault.at];
    where = e.where;
    if (e.kind == Expr::Kind::kBinary) op = BinaryOpName(static_cast<BinaryOp>(e.op));
    if (e.kind == Expr::Kind::kUnary) op = "unary -";
  }
  if (where.file.empty()) where.file = program.file;
  const std::string operands =
      std::to_string(fault.lhs) + " " + op + " " + std::to_string(fault.rhs);
  switch (fault.error) {
    case EvalError::kDivByZero:
      return Status("eval.div-by-zero", "division by zero: " + operands, where);
    case EvalError::kOverflow:
      return Status("eval.overflow", "result does not fit in 64 bits: " + operands, where);
    case EvalError::kShiftRange:
      return Status("eval.shift-range",
                    "shift count " + std::to_string(fault.rhs) + " is outside 0..63: " + operands,
                    where);
    case EvalError::kBadReference:
      if (fault.at < program.exprs.size() &&
          program.exprs[fault.at].kind == Expr::Kind::kState) {
        return Status("eval.state-index",
                      "the element or slot " + std::to_string(fault.lhs) +
                          " of a state read is outside its array",
                      where);
      }
      return Status("eval.bad-reference",
                    "expression refers to a value that is not bound here (index " +
                        std::to_string(fault.lhs) + ")",
                    where);
    case EvalError::kTooDeep:
      return Status("eval.too-deep", "expression nested too deeply", where);
    case EvalError::kBadOp:
    case EvalError::kNone:
      break;
  }
  return Status("eval.bad-op", "malformed expression node", where);
}

Expected<int64_t> EvalParamExpr(const Program& program, ExprId id,
                                const std::vector<int64_t>& values, const std::string& rule) {
  EvalEnv env;
  env.params = values.data();
  env.num_params = values.size();
  EvalFault fault;
  const int64_t v = Evaluator(program, env, &fault).Run(id);
  if (fault.ok()) return v;
  SourceLocation where;
  if (fault.at < program.exprs.size()) where = program.exprs[fault.at].where;
  if (where.file.empty()) where.file = program.file;
  return Status(rule, ParamFaultMessage(program, fault), where);
}

Expected<int64_t> Eval(const Program& program, ExprId id, const EvalEnv& env) {
  EvalFault fault;
  const int64_t v = EvalFast(program, id, env, &fault);
  if (!fault.ok()) return EvalFaultStatus(program, fault);
  return v;
}

}  // namespace parity::ir
