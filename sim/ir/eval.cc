#include "sim/ir/eval.h"

#include <limits>
#include <string>

namespace parity::ir {
namespace {

constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

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

class Evaluator {
 public:
  Evaluator(const Program& program, const EvalEnv& env, EvalFault* fault)
      : program_(program), env_(env), fault_(fault) {}

  int64_t Run(ExprId id) {
    if (id >= program_.exprs.size()) return Fail(fault_, EvalError::kBadReference, id);
    const Expr& e = program_.exprs[id];
    switch (e.kind) {
      case Expr::Kind::kConst:
        return e.value;
      case Expr::Kind::kParam:
        if (e.index >= env_.num_params) return Fail(fault_, EvalError::kBadReference, id, e.index);
        return env_.params[e.index];
      case Expr::Kind::kVar:
        if (e.index >= env_.num_vars) return Fail(fault_, EvalError::kBadReference, id, e.index);
        return env_.vars[e.index];
      case Expr::Kind::kBuiltin:
        if (env_.builtins == nullptr || e.op >= kNumBuiltins) {
          return Fail(fault_, EvalError::kBadReference, id, e.op);
        }
        return (*env_.builtins)[e.op];
      case Expr::Kind::kState: {
        const int64_t index = e.a == kNoExpr ? 0 : Run(e.a);
        if (!fault_->ok()) return 0;
        int64_t v = 0;
        if (env_.state == nullptr ||
            !env_.state->Read(static_cast<StateFn>(e.op), e.index, index, &v)) {
          return Fail(fault_, EvalError::kBadReference, id, index);
        }
        return v;
      }
      case Expr::Kind::kUnary: {
        const int64_t a = Run(e.a);
        if (!fault_->ok()) return 0;
        switch (static_cast<UnaryOp>(e.op)) {
          case UnaryOp::kNeg:
            if (a == kMin) return Fail(fault_, EvalError::kOverflow, id, a);
            return -a;
          case UnaryOp::kNot: return a == 0 ? 1 : 0;
          case UnaryOp::kBitNot: return ~a;
        }
        return Fail(fault_, EvalError::kBadOp, id);
      }
      case Expr::Kind::kSelect: {
        const int64_t c = Run(e.a);
        if (!fault_->ok()) return 0;
        return c != 0 ? Run(e.b) : Run(e.c);
      }
      case Expr::Kind::kBinary:
        return Binary(id, e);
    }
    return Fail(fault_, EvalError::kBadOp, id);
  }

 private:
  // Leaves without recursion (the common operands); false: not a leaf or not bound.
  bool Leaf(ExprId id, int64_t* v) const {
    if (id >= program_.exprs.size()) return false;
    const Expr& e = program_.exprs[id];
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
  int64_t Operand(ExprId id) {
    int64_t v;
    return Leaf(id, &v) ? v : Run(id);
  }

  int64_t Binary(ExprId id, const Expr& e) {
    const auto op = static_cast<BinaryOp>(e.op);
    const int64_t a = Operand(e.a);
    if (!fault_->ok()) return 0;
    // Short-circuit forms: the right operand is not evaluated (so it cannot fail).
    if (op == BinaryOp::kAnd && a == 0) return 0;
    if (op == BinaryOp::kOr && a != 0) return 1;
    const int64_t b = Operand(e.b);
    if (!fault_->ok()) return 0;
    int64_t r = 0;
    switch (op) {
      case BinaryOp::kAdd:
        if (__builtin_add_overflow(a, b, &r)) return Fail(fault_, EvalError::kOverflow, id, a, b);
        return r;
      case BinaryOp::kSub:
        if (__builtin_sub_overflow(a, b, &r)) return Fail(fault_, EvalError::kOverflow, id, a, b);
        return r;
      case BinaryOp::kMul:
        if (__builtin_mul_overflow(a, b, &r)) return Fail(fault_, EvalError::kOverflow, id, a, b);
        return r;
      case BinaryOp::kDiv:
      case BinaryOp::kMod:
        if (b == 0) return Fail(fault_, EvalError::kDivByZero, id, a, b);
        if (a == kMin && b == -1) return Fail(fault_, EvalError::kOverflow, id, a, b);
        return op == BinaryOp::kDiv ? a / b : a % b;
      case BinaryOp::kShl:
        if (b < 0 || b > 63) return Fail(fault_, EvalError::kShiftRange, id, a, b);
        // Shift as unsigned: C++20 defines signed << as modulo 2^64, which we keep, but an
        // overflowing shift of a schedule constant is almost surely a mistake: flag it.
        if (b > 0 && (a > (std::numeric_limits<int64_t>::max() >> b) ||
                      a < (kMin >> b))) {
          return Fail(fault_, EvalError::kOverflow, id, a, b);
        }
        return static_cast<int64_t>(static_cast<uint64_t>(a) << b);
      case BinaryOp::kShr:
        if (b < 0 || b > 63) return Fail(fault_, EvalError::kShiftRange, id, a, b);
        return a >> b;  // arithmetic shift (defined in C++20)
      case BinaryOp::kBitAnd: return a & b;
      case BinaryOp::kBitOr: return a | b;
      case BinaryOp::kBitXor: return a ^ b;
      case BinaryOp::kEq: return a == b;
      case BinaryOp::kNe: return a != b;
      case BinaryOp::kLt: return a < b;
      case BinaryOp::kLe: return a <= b;
      case BinaryOp::kGt: return a > b;
      case BinaryOp::kGe: return a >= b;
      case BinaryOp::kAnd: return b != 0;  // a != 0 here
      case BinaryOp::kOr: return b != 0;   // a == 0 here
      case BinaryOp::kMin: return a < b ? a : b;
      case BinaryOp::kMax: return a > b ? a : b;
    }
    return Fail(fault_, EvalError::kBadOp, id);
  }

  const Program& program_;
  const EvalEnv& env_;
  EvalFault* fault_;
};

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
    case EvalError::kBadOp:
    case EvalError::kNone:
      break;
  }
  return Status("eval.bad-op", "malformed expression node", where);
}

Expected<int64_t> Eval(const Program& program, ExprId id, const EvalEnv& env) {
  EvalFault fault;
  const int64_t v = EvalFast(program, id, env, &fault);
  if (!fault.ok()) return EvalFaultStatus(program, fault);
  return v;
}

}  // namespace parity::ir
