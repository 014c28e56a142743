#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "sim/ir/ir.h"
#include "sim/ir/param_eval.h"

namespace parity::ir {
namespace {

constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

class ParamEvaluator {
 public:
  ParamEvaluator(const Program& p, const std::vector<int64_t>& values, const std::string& rule)
      : p_(p), values_(values), rule_(rule) {}

  Expected<int64_t> Run(ExprId id, int depth = 0) {
    if (id >= p_.exprs.size()) return Fail(id, "malformed expression (bad operand id)");
    if (depth > 10000) return Fail(id, "expression nested too deeply");
    const Expr& e = p_.exprs[id];
    switch (e.kind) {
      case Expr::Kind::kConst:
        return e.value;
      case Expr::Kind::kParam:
        if (e.index >= values_.size()) {
          return Fail(id, "refers to a parameter that is not bound yet");
        }
        return values_[e.index];
      case Expr::Kind::kVar:
        return Fail(id, "a variable cannot be used here (only params and constants)");
      case Expr::Kind::kBuiltin:
        return Fail(id, "a builtin such as cta_rank cannot be used here (only params and constants)");
      case Expr::Kind::kState:
        return Fail(id, "a state read such as phase(b) is allowed only in an assertion");
      case Expr::Kind::kUnary: {
        auto a = Run(e.a, depth + 1);
        if (!a.ok()) return a;
        switch (static_cast<UnaryOp>(e.op)) {
          case UnaryOp::kNeg:
            if (*a == kMin) return Fail(id, "overflow in unary -");
            return -*a;
          case UnaryOp::kNot: return int64_t{*a == 0};
          case UnaryOp::kBitNot: return ~*a;
        }
        return Fail(id, "malformed unary operator");
      }
      case Expr::Kind::kSelect: {
        auto c = Run(e.a, depth + 1);
        if (!c.ok()) return c;
        return Run(*c != 0 ? e.b : e.c, depth + 1);
      }
      case Expr::Kind::kBinary:
        return Binary(id, e, depth);
    }
    return Fail(id, "malformed expression kind");
  }

 private:
  Expected<int64_t> Binary(ExprId id, const Expr& e, int depth) {
    const auto op = static_cast<BinaryOp>(e.op);
    auto a = Run(e.a, depth + 1);
    if (!a.ok()) return a;
    if (op == BinaryOp::kAnd && *a == 0) return int64_t{0};
    if (op == BinaryOp::kOr && *a != 0) return int64_t{1};
    auto b = Run(e.b, depth + 1);
    if (!b.ok()) return b;
    const int64_t x = *a, y = *b;
    int64_t r = 0;
    switch (op) {
      case BinaryOp::kAdd:
        if (__builtin_add_overflow(x, y, &r)) return Fail(id, "overflow in +");
        return r;
      case BinaryOp::kSub:
        if (__builtin_sub_overflow(x, y, &r)) return Fail(id, "overflow in -");
        return r;
      case BinaryOp::kMul:
        if (__builtin_mul_overflow(x, y, &r)) return Fail(id, "overflow in *");
        return r;
      case BinaryOp::kDiv:
      case BinaryOp::kMod:
        if (y == 0) return Fail(id, "division by zero");
        if (x == kMin && y == -1) return Fail(id, "overflow in / or %");
        return op == BinaryOp::kDiv ? x / y : x % y;
      case BinaryOp::kShl:
      case BinaryOp::kShr:
        if (y < 0 || y > 63) return Fail(id, "shift count " + std::to_string(y) + " outside 0..63");
        if (op == BinaryOp::kShr) return x >> y;
        // Left shift as on the unsigned bit pattern; overflow of the signed value is an error.
        r = static_cast<int64_t>(static_cast<uint64_t>(x) << y);
        if ((r >> y) != x) return Fail(id, "overflow in <<");
        return r;
      case BinaryOp::kBitAnd: return x & y;
      case BinaryOp::kBitOr: return x | y;
      case BinaryOp::kBitXor: return x ^ y;
      case BinaryOp::kEq: return int64_t{x == y};
      case BinaryOp::kNe: return int64_t{x != y};
      case BinaryOp::kLt: return int64_t{x < y};
      case BinaryOp::kLe: return int64_t{x <= y};
      case BinaryOp::kGt: return int64_t{x > y};
      case BinaryOp::kGe: return int64_t{x >= y};
      case BinaryOp::kAnd:
      case BinaryOp::kOr: return int64_t{y != 0};
      case BinaryOp::kMin: return x < y ? x : y;
      case BinaryOp::kMax: return x > y ? x : y;
    }
    return Fail(id, "malformed binary operator");
  }

  Status Fail(ExprId id, const std::string& msg) {
    SourceLocation where;
    if (id < p_.exprs.size()) where = p_.exprs[id].where;
    if (where.file.empty()) where.file = p_.file;
    return Status(rule_, msg, where);
  }

  const Program& p_;
  const std::vector<int64_t>& values_;
  const std::string& rule_;
};

}  // namespace

Expected<int64_t> EvalParamExpr(const Program& program, ExprId id,
                                const std::vector<int64_t>& values, const std::string& rule) {
  return ParamEvaluator(program, values, rule).Run(id);
}

Expected<std::vector<int64_t>> BindParams(
    const Program& program, const std::vector<std::pair<std::string, int64_t>>& overrides) {
  for (const auto& [name, value] : overrides) {
    bool known = false;
    for (const Param& p : program.params) known = known || p.name == name;
    if (!known) {
      std::string names;
      for (const Param& p : program.params) names += (names.empty() ? "" : ", ") + p.name;
      return Status("param.unknown",
                    "unknown parameter `" + name + "` in -D " + name + "=" +
                        std::to_string(value) + " (" + program.file + " declares " +
                        (names.empty() ? "no params" : names) + ")",
                    SourceLocation{program.file, 0, 0});
    }
  }
  std::vector<int64_t> values;
  values.reserve(program.params.size());
  for (const Param& p : program.params) {
    // The last -D for a name wins, as with a compiler's -D.
    const std::pair<std::string, int64_t>* given = nullptr;
    for (const auto& o : overrides) {
      if (o.first == p.name) given = &o;
    }
    if (given != nullptr) {
      values.push_back(given->second);
    } else if (p.default_expr == kNoExpr) {
      values.push_back(p.default_value);
    } else {
      auto v = EvalParamExpr(program, p.default_expr, values);
      if (!v.ok()) {
        return Status("param.eval", "default of param `" + p.name + "`: " + v.status().message(),
                      v.status().where());
      }
      values.push_back(*v);
    }
  }
  return values;
}

bool HasAssertions(const Program& p) { return !p.assertions.empty(); }

bool ReadsLanded(const Program& p) {
  for (const Expr& e : p.exprs) {
    if (e.kind == Expr::Kind::kState && e.op == static_cast<uint8_t>(StateFn::kLanded)) return true;
  }
  return false;
}

std::string NamedBarrierName(const Program& p, int64_t id) {
  for (const NamedBarrierDecl& d : p.named_barriers) {
    if (d.id == id) return d.name;
  }
  return std::to_string(id);
}

bool SameExpr(const Program& p, ExprId a, ExprId b) {
  if (a == b) return true;
  if (a == kNoExpr || b == kNoExpr) return false;
  const Expr& x = p.expr(a);
  const Expr& y = p.expr(b);
  // A constant's index only says how it was written (a named barrier's name or a literal).
  const bool same_index = x.kind == Expr::Kind::kConst || x.index == y.index;
  return x.kind == y.kind && x.op == y.op && same_index && x.value == y.value &&
         SameExpr(p, x.a, y.a) && SameExpr(p, x.b, y.b) && SameExpr(p, x.c, y.c);
}

}  // namespace parity::ir
