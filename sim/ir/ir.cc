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

bool SameExpr(const Program& p, ExprId a, ExprId b) {
  if (a == b) return true;
  if (a == kNoExpr || b == kNoExpr) return false;
  const Expr& x = p.expr(a);
  const Expr& y = p.expr(b);
  return x.kind == y.kind && x.op == y.op && x.index == y.index && x.value == y.value &&
         SameExpr(p, x.a, y.a) && SameExpr(p, x.b, y.b) && SameExpr(p, x.c, y.c);
}

}  // namespace parity::ir
