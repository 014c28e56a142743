#include <string>
#include <utility>
#include <vector>

#include "sim/ir/ir.h"
#include "sim/ir/param_eval.h"  // EvalParamExpr: sim/ir/eval.cc

namespace parity::ir {

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
