// Interchangeable CTAs of a cluster for `parity explore` (symmetry.h: CtaSymmetryGroup gives the
// argument): the permutations of CTA ranks under which the program maps to itself, and the
// canonical fingerprint over that group. The agent classes within a role are symmetry.cc; both
// read a role's text through symmetry_walk.h.
#include "verifier/symmetry.h"

#include <algorithm>
#include <climits>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "sim/engine/control.h"
#include "sim/ir/eval.h"
#include "verifier/symmetry_walk.h"

namespace parity::verifier {

using engine::Engine;

namespace {

using symmetry_internal::Access;
using symmetry_internal::IsAgent;
using symmetry_internal::kNoVar;
using symmetry_internal::Line;
using symmetry_internal::Operand;
using symmetry_internal::OperandKind;
using symmetry_internal::RoleWalk;

bool IsBuiltin(const ir::Expr& x) { return x.kind == ir::Expr::Kind::kBuiltin; }

void VarsIn(const ir::Program& p, ir::ExprId id, std::vector<uint32_t>* out) {
  if (id == ir::kNoExpr) return;
  const ir::Expr& x = p.expr(id);
  if (x.kind == ir::Expr::Kind::kVar) out->push_back(x.index);
  VarsIn(p, x.a, out);
  VarsIn(p, x.b, out);
  VarsIn(p, x.c, out);
}

// The variables a block writes and reads, and whether it holds an operation.
struct BlockUse {
  std::vector<uint32_t> writes, reads;
  bool has_op = false;
};
void UseOf(const ir::Program& p, const ir::Block& b, BlockUse* u) {
  for (const ir::Stmt& st : b) {
    if (const auto* l = std::get_if<ir::Let>(&st.node)) {
      u->writes.push_back(l->var);
      VarsIn(p, l->value, &u->reads);
    } else if (const auto* f = std::get_if<ir::For>(&st.node)) {
      u->writes.push_back(f->var);
      for (ir::ExprId id : {f->lo, f->hi, f->step, f->cond}) VarsIn(p, id, &u->reads);
      UseOf(p, f->body, u);
    } else if (const auto* i = std::get_if<ir::If>(&st.node)) {
      VarsIn(p, i->cond, &u->reads);
      UseOf(p, i->then_body, u);
      UseOf(p, i->else_body, u);
    } else if (const auto* op = std::get_if<ir::Op>(&st.node)) {
      u->has_op = true;
      std::visit(
          [&](const auto& o) {
            using T = std::decay_t<decltype(o)>;
            if constexpr (std::is_same_v<T, ir::MbarrierArrive>) {
              if (o.token_var != kNoVar) u->writes.push_back(o.token_var);
            } else if constexpr (std::is_same_v<T, ir::MbarrierWait> ||
                                 std::is_same_v<T, ir::MbarrierPendingCount> ||
                                 std::is_same_v<T, ir::GlobalReadback>) {
              if (o.result_var != kNoVar) u->writes.push_back(o.result_var);
            }
          },
          *op);
    }
  }
}

// Runs the role's code from `begin` to `end` (one operation-free top-level statement) with the
// engine's walker (sim/engine/control.h); false on a fault, an operation, the end, or more than
// `limit` instructions walked in all (*steps counts them across calls).
bool RunPure(const ir::Program& p, const std::vector<engine::Instr>& code, uint32_t begin,
             uint32_t end, const ir::EvalEnv& env, int64_t* vars, uint32_t limit,
             uint32_t* steps) {
  auto ev = [&](ir::ExprId id, int64_t* v) {
    ir::EvalFault f;
    *v = ir::EvalFast(p, id, env, &f);
    return f.ok();
  };
  uint32_t pc = begin;
  return engine::WalkToOp(code.data(), &pc, vars, ev, limit, steps, nullptr, end) ==
         engine::Control::kStop;
}

// The first instruction of each top-level statement of `role` in its compiled code, and the
// implicit exit's as the last entry.
std::vector<uint32_t> TopLevelStarts(const ir::Role& role, const std::vector<engine::Instr>& code) {
  std::vector<uint32_t> starts;
  uint32_t t = 0;
  for (uint32_t pc = 0; pc < code.size(); ++pc) {
    if (t < role.body.size() && code[pc].stmt == &role.body[t]) {
      starts.push_back(pc);
      ++t;
    }
  }
  starts.push_back(static_cast<uint32_t>(code.size() - 1));
  return starts;
}

// One role's facts for the CTA analysis: its rank-fixed variables (written only by top-level
// statements without operations that read nothing else: a function of the agent and its pc)
// and their values per agent before each top-level statement.
struct CtaRoleFacts {
  std::vector<uint8_t> fixed_var;   // per variable
  std::vector<uint8_t> fixed_stmt;  // per top-level statement: writes only fixed variables
  // snapshot[agent][t]: the variables before top-level statement t (fixed ones meaningful).
  std::map<uint32_t, std::vector<std::vector<int64_t>>> snapshot;
};

class CtaAnalysis {
 public:
  CtaAnalysis(const ir::Program& p, const std::vector<int64_t>& params, const Engine& e)
      : p_(p), params_(params), e_(e) {}

  bool Prepare(std::string* why) {
    const size_t nr = p_.roles.size();
    if (e_.num_agents() == 0) return false;
    cs_ = static_cast<uint32_t>(
        e_.agent_builtins(0)[static_cast<size_t>(ir::Builtin::kClusterSize)]);
    if (cs_ == 0 || cs_ > 32) {
      *why = "the cluster size is out of range";
      return false;
    }
    facts_.resize(nr);
    for (size_t r = 0; r < nr; ++r) {
      walks_.emplace_back(p_, p_.roles[r]);
      walks_.back().Run();
      if (!Facts(static_cast<uint32_t>(r))) {
        *why = "role " + p_.roles[r].name + ": its rank-fixed variables do not evaluate";
        return false;
      }
    }
    RecordStripes();
    return true;
  }

  // Whether CTA rank permutation `g` (rank -> rank) maps the program to itself (symmetry.h).
  bool Passes(const std::vector<uint32_t>& g, std::string* why) {
    sigma_.clear();
    const uint32_t n = static_cast<uint32_t>(e_.num_agents());
    // The same agents (role, index, threads) in every CTA and its image.
    for (uint32_t cta = 0; cta < e_.num_ctas(); ++cta) {
      const uint32_t img = cta / cs_ * cs_ + g[cta % cs_];
      const uint32_t a0 = e_.cta_first_agent(cta), b0 = e_.cta_first_agent(img);
      const uint32_t a1 = e_.cta_first_agent(cta + 1), b1 = e_.cta_first_agent(img + 1);
      if (a1 - a0 != b1 - b0) return Fail(why, "CTAs hold different agents");
      for (uint32_t i = 0; i < a1 - a0; ++i) {
        const engine::AgentInfo& x = e_.agent_info(a0 + i);
        const engine::AgentInfo& y = e_.agent_info(b0 + i);
        if (x.role != y.role || x.index_in_role != y.index_in_role || x.threads != y.threads) {
          return Fail(why, "CTAs hold different agents");
        }
      }
    }
    for (uint32_t a = 0; a < n; ++a) {
      const engine::AgentInfo& info = e_.agent_info(a);
      const uint32_t img = info.cta_global / cs_ * cs_ + g[info.cta];
      const uint32_t b = e_.cta_first_agent(img) + info.index_in_cta;
      const uint32_t r = info.role;
      for (const Operand& o : walks_[r].operands) {
        if (facts_[r].fixed_stmt[o.top]) continue;  // it only sets rank-fixed variables
        if (!OperandPasses(o, r, a, b, g, why)) return false;
      }
    }
    return StripesPass(g, why);
  }

  // Declarations: the same values in every CTA.
  bool DeclsAgree(std::string* why) {
    std::vector<ir::ExprId> ids;
    for (const ir::BarrierDecl& b : p_.barriers) ids.insert(ids.end(), {b.size, b.count});
    for (const ir::BufferDecl& b : p_.buffers) {
      ids.insert(ids.end(), {b.stages, b.bytes, b.align, b.alias_offset});
    }
    for (const ir::TensorMapDecl& t : p_.tensor_maps) {
      for (const auto* v : {&t.global_dims, &t.global_strides, &t.box_dims, &t.element_strides}) {
        ids.insert(ids.end(), v->begin(), v->end());
      }
    }
    for (ir::ExprId id : ids) {
      if (id == ir::kNoExpr) continue;
      std::optional<int64_t> first;
      for (uint32_t cta = 0; cta < e_.num_ctas(); ++cta) {
        const ir::BuiltinValues bv = DeclBuiltins(cta);
        ir::EvalEnv env = Env(&bv, nullptr, 0);
        ir::EvalFault f;
        const int64_t v = ir::EvalFast(p_, id, env, &f);
        const int64_t code = f.ok() ? v : INT64_MIN;
        if (!first) first = code;
        if (*first != code) return Fail(why, "a declaration's value depends on the CTA rank");
      }
    }
    return true;
  }

  // Every CTA-dependent builtin that the walks and declarations do not reach switches the
  // analysis off (an operand this file does not list).
  bool AllReached(std::string* why) {
    std::vector<uint8_t> seen(p_.exprs.size(), 0);
    for (const RoleWalk& w : walks_) {
      for (const Operand& o : w.operands) MarkAll(o.id, &seen);
    }
    for (const ir::Role& r : p_.roles) {
      MarkAll(r.count, &seen);
      MarkAll(r.threads, &seen);
      MarkAll(r.when, &seen);
      std::vector<ir::ExprId> lets;
      CollectLets(r.body, &lets);
      for (ir::ExprId id : lets) MarkAll(id, &seen);
    }
    for (const ir::BarrierDecl& b : p_.barriers) {
      MarkAll(b.size, &seen);
      MarkAll(b.count, &seen);
    }
    for (const ir::BufferDecl& b : p_.buffers) {
      for (ir::ExprId id : {b.stages, b.bytes, b.align, b.alias_offset}) MarkAll(id, &seen);
    }
    for (const ir::TensorMapDecl& t : p_.tensor_maps) {
      for (const auto* v : {&t.global_dims, &t.global_strides, &t.box_dims, &t.element_strides}) {
        for (ir::ExprId id : *v) MarkAll(id, &seen);
      }
    }
    MarkAll(p_.cluster_m, &seen);
    MarkAll(p_.cluster_n, &seen);
    for (size_t id = 0; id < p_.exprs.size(); ++id) {
      const ir::Expr& x = p_.exprs[id];
      if (!IsBuiltin(x) || seen[id]) continue;
      const auto k = static_cast<ir::Builtin>(x.op);
      if (k == ir::Builtin::kCtaRank || k == ir::Builtin::kCtaX || k == ir::Builtin::kCtaY ||
          k == ir::Builtin::kGridCta) {
        return Fail(why, "a CTA builtin read at " + Line(p_, static_cast<ir::ExprId>(id)) +
                             " outside the analysed operands");
      }
    }
    return true;
  }

  std::vector<std::vector<uint8_t>> Hidden() const {
    std::vector<std::vector<uint8_t>> h;
    for (const CtaRoleFacts& f : facts_) h.push_back(f.fixed_var);
    return h;
  }
  uint32_t cluster_size() const { return cs_; }

 private:
  static bool Fail(std::string* why, const std::string& s) {
    if (why->empty()) *why = s;
    return false;
  }
  void MarkAll(ir::ExprId id, std::vector<uint8_t>* seen) const {
    if (id == ir::kNoExpr) return;
    (*seen)[id] = 1;
    const ir::Expr& x = p_.expr(id);
    MarkAll(x.a, seen);
    MarkAll(x.b, seen);
    MarkAll(x.c, seen);
  }
  void CollectLets(const ir::Block& b, std::vector<ir::ExprId>* out) const {
    for (const ir::Stmt& st : b) {
      if (const auto* l = std::get_if<ir::Let>(&st.node)) out->push_back(l->value);
      if (const auto* f = std::get_if<ir::For>(&st.node)) CollectLets(f->body, out);
      if (const auto* i = std::get_if<ir::If>(&st.node)) {
        CollectLets(i->then_body, out);
        CollectLets(i->else_body, out);
      }
    }
  }
  ir::BuiltinValues DeclBuiltins(uint32_t cta_global) const {
    const uint32_t a = e_.cta_first_agent(cta_global);
    ir::BuiltinValues b = e_.agent_builtins(a);
    b[static_cast<size_t>(ir::Builtin::kAgent)] = 0;
    return b;
  }
  ir::EvalEnv Env(const ir::BuiltinValues* b, const int64_t* vars, size_t nv) const {
    ir::EvalEnv env;
    env.params = params_.data();
    env.num_params = params_.size();
    env.vars = vars;
    env.num_vars = nv;
    env.builtins = b;
    return env;
  }

  bool Facts(uint32_t r) {
    const ir::Role& role = p_.roles[r];
    CtaRoleFacts& f = facts_[r];
    const uint32_t nt = static_cast<uint32_t>(role.body.size());
    std::vector<BlockUse> use(nt);
    std::vector<uint8_t> writes_outside_pure(role.num_vars, 0);
    for (uint32_t t = 0; t < nt; ++t) {
      UseOf(p_, {role.body[t]}, &use[t]);
      if (use[t].has_op) {
        for (uint32_t v : use[t].writes) writes_outside_pure[v] = 1;
      }
    }
    // Variables written by operations (tokens, results) are never fixed.
    for (const auto& [var, count] : walks_[r].writes) {
      (void)count;
      if (var < role.num_vars) {
        bool by_let_or_for = false;
        for (uint32_t t = 0; t < nt; ++t) {
          by_let_or_for = by_let_or_for || std::find(use[t].writes.begin(), use[t].writes.end(),
                                                     var) != use[t].writes.end();
        }
        if (!by_let_or_for) writes_outside_pure[var] = 1;
      }
    }
    f.fixed_var.assign(role.num_vars, 0);
    for (uint32_t v = 0; v < role.num_vars; ++v) f.fixed_var[v] = writes_outside_pure[v] ? 0 : 1;
    // Greatest set: a pure statement that writes a fixed variable writes and reads only fixed ones.
    for (bool changed = true; changed;) {
      changed = false;
      for (uint32_t t = 0; t < nt; ++t) {
        if (use[t].has_op) {
          // Operations may write (ops' results) only non-fixed ones; handled above. Reads of
          // fixed variables by operations are operands (checked).
          continue;
        }
        bool any_fixed = false, all_ok = true;
        for (uint32_t v : use[t].writes) any_fixed = any_fixed || f.fixed_var[v];
        if (!any_fixed) continue;
        for (uint32_t v : use[t].writes) all_ok = all_ok && f.fixed_var[v];
        for (uint32_t v : use[t].reads) all_ok = all_ok && v < role.num_vars && f.fixed_var[v];
        if (all_ok) continue;
        for (uint32_t v : use[t].writes) {
          if (f.fixed_var[v]) changed = true;
          f.fixed_var[v] = 0;
        }
      }
    }
    f.fixed_stmt.assign(nt + 1, 0);
    for (uint32_t t = 0; t < nt; ++t) {
      if (use[t].has_op || use[t].writes.empty()) continue;
      bool all = true;
      for (uint32_t v : use[t].writes) all = all && f.fixed_var[v];
      f.fixed_stmt[t] = all ? 1 : 0;
    }
    // Snapshots per agent of this role.
    const std::vector<engine::Instr> code = engine::CompileRole(role);
    const std::vector<uint32_t> starts = TopLevelStarts(role, code);
    for (uint32_t a = 0; a < e_.num_agents(); ++a) {
      if (e_.agent_info(a).role != r) continue;
      std::vector<std::vector<int64_t>>& snap = f.snapshot[a];
      std::vector<int64_t> vars(role.num_vars, 0);
      const ir::BuiltinValues& bv = e_.agent_builtins(a);
      ir::EvalEnv env = Env(&bv, vars.data(), vars.size());
      uint32_t steps = 0;
      for (uint32_t t = 0; t < nt; ++t) {
        snap.push_back(vars);
        if (!f.fixed_stmt[t]) continue;
        if (!RunPure(p_, code, starts[t], starts[t + 1], env, vars.data(), 1u << 20, &steps)) {
          return false;
        }
      }
      snap.push_back(vars);
    }
    return true;
  }

  bool Dependent(uint32_t r, ir::ExprId id) const {
    if (id == ir::kNoExpr) return false;
    const ir::Expr& x = p_.expr(id);
    if (IsBuiltin(x)) return true;
    if (x.kind == ir::Expr::Kind::kVar) {
      return x.index < facts_[r].fixed_var.size() && facts_[r].fixed_var[x.index];
    }
    return Dependent(r, x.a) || Dependent(r, x.b) || Dependent(r, x.c);
  }
  bool OnlyFixed(uint32_t r, ir::ExprId id) const {
    if (id == ir::kNoExpr) return true;
    const ir::Expr& x = p_.expr(id);
    if (x.kind == ir::Expr::Kind::kVar) {
      return x.index < facts_[r].fixed_var.size() && facts_[r].fixed_var[x.index];
    }
    return OnlyFixed(r, x.a) && OnlyFixed(r, x.b) && OnlyFixed(r, x.c);
  }
  // The largest subexpressions that read a builtin or a fixed variable and no other variable.
  void Parts(uint32_t r, ir::ExprId id, std::vector<ir::ExprId>* out) const {
    if (id == ir::kNoExpr || !Dependent(r, id)) return;
    if (OnlyFixed(r, id)) {
      out->push_back(id);
      return;
    }
    const ir::Expr& x = p_.expr(id);
    Parts(r, x.a, out);
    Parts(r, x.b, out);
    Parts(r, x.c, out);
  }
  // A part's value for agent a at top-level statement t (nullopt: a fault).
  std::optional<int64_t> Val(ir::ExprId id, uint32_t r, uint32_t a, uint32_t t) {
    const std::vector<int64_t>& vars = facts_[r].snapshot[a][t];
    const ir::BuiltinValues& bv = e_.agent_builtins(a);
    const ir::EvalEnv env = Env(&bv, vars.data(), vars.size());
    ir::EvalFault f;
    const int64_t v = ir::EvalFast(p_, id, env, &f);
    if (!f.ok()) return std::nullopt;
    return v;
  }
  bool PartsKept(const Operand& o, uint32_t r, uint32_t a, uint32_t b) {
    std::vector<ir::ExprId> parts;
    Parts(r, o.id, &parts);
    for (ir::ExprId x : parts) {
      if (Val(x, r, a, o.top) != Val(x, r, b, o.top)) return false;
    }
    return true;
  }
  uint64_t MapMask(uint64_t m, const std::vector<uint32_t>& g) const {
    uint64_t out = 0;
    for (uint32_t i = 0; i < cs_; ++i) {
      if ((m >> i) & 1) out |= uint64_t{1} << g[i];
    }
    return out;
  }

  bool OperandPasses(const Operand& o, uint32_t r, uint32_t a, uint32_t b,
                     const std::vector<uint32_t>& g, std::string* why) {
    switch (o.kind) {
      case OperandKind::kValue:
        if (PartsKept(o, r, a, b)) return true;
        return Fail(why, "role " + p_.roles[r].name + ": the CTA rank decides an operand at " +
                             Line(p_, o.id));
      case OperandKind::kRank:
      case OperandKind::kMask: {
        if (!OnlyFixed(r, o.id)) {
          return Fail(why, "role " + p_.roles[r].name + ": a CTA target or mask at " +
                               Line(p_, o.id) + " reads a variable the rank does not fix");
        }
        const auto va = Val(o.id, r, a, o.top), vb = Val(o.id, r, b, o.top);
        if (!va || !vb) {
          if (!va && !vb) return true;
          return Fail(why, "an operand at " + Line(p_, o.id) + " faults in some CTAs only");
        }
        bool ok = false;
        if (o.kind == OperandKind::kRank) {
          ok = *va >= 0 && *va < cs_ && *vb == g[*va];
        } else {
          ok = *va >= 0 && cs_ < 63 && *va < (int64_t{1} << cs_) &&
               static_cast<uint64_t>(*vb) == MapMask(static_cast<uint64_t>(*va), g);
        }
        if (ok) return true;
        return Fail(why, "role " + p_.roles[r].name + ": the CTA target or mask at " +
                             Line(p_, o.id) + " does not follow the permutation");
      }
      case OperandKind::kCoord: {
        // Read by no state: only its evaluation may fault. Parts that differ between a CTA and
        // its image are small values that cannot take the coordinate near the 64-bit limits.
        if (PartsKept(o, r, a, b)) return true;
        std::vector<ir::ExprId> parts;
        Parts(r, o.id, &parts);
        for (ir::ExprId x : parts) {
          for (uint32_t y : {a, b}) {
            const auto v = Val(x, r, y, o.top);
            if (!v || *v < -(int64_t{1} << 31) || *v > (int64_t{1} << 31)) {
              return Fail(why, "a TMA coordinate at " + Line(p_, o.id) + " is not small");
            }
          }
        }
        if (!OnlyAdditive(o.id, r)) {
          return Fail(why, "a TMA coordinate at " + Line(p_, o.id) +
                               " uses the CTA rank other than in sums and products");
        }
        return true;
      }
      case OperandKind::kOffset: {
        if (o.offset_of != nullptr && stripe_access_.count(o.offset_of)) {
          return StripeOperand(o, r, a, b, why);
        }
        if (PartsKept(o, r, a, b)) return true;
        return Fail(why, "role " + p_.roles[r].name + ": the CTA rank decides the byte offset at " +
                             Line(p_, o.id) + " other than as a stripe");
      }
    }
    return false;
  }
  // The rank-dependent parts of the expression are reached only through +, - and *.
  bool OnlyAdditive(ir::ExprId id, uint32_t r) const {
    if (id == ir::kNoExpr || !Dependent(r, id) || OnlyFixed(r, id)) return true;
    const ir::Expr& x = p_.expr(id);
    if (x.kind == ir::Expr::Kind::kBinary) {
      const auto op = static_cast<ir::BinaryOp>(x.op);
      if (op != ir::BinaryOp::kAdd && op != ir::BinaryOp::kSub && op != ir::BinaryOp::kMul) {
        return false;
      }
      return OnlyAdditive(x.a, r) && OnlyAdditive(x.b, r);
    }
    if (x.kind == ir::Expr::Kind::kUnary && static_cast<ir::UnaryOp>(x.op) == ir::UnaryOp::kNeg) {
      return OnlyAdditive(x.a, r);
    }
    return false;
  }

  // A CTA stripe: offset [X +] P * S with P read only from the rank (fixed variables and
  // builtins other than `agent`), S and X the same in every CTA, 0 <= X, X + bytes <= S, S a
  // multiple of 1024 (every alignment rule holds in every stripe alike), P * S + S within the
  // slot. Recorded once for every agent (the stripe index per buffer and rank); Passes checks
  // that a CTA and its image agree on S, X and the bytes, StripesPass the rest.
  struct StripeForm {
    ir::ExprId p = ir::kNoExpr, s = ir::kNoExpr, x = ir::kNoExpr;
  };
  std::optional<StripeForm> MatchCtaStripe(const Operand& o, uint32_t r) const {
    const Access* acc = o.offset_of;
    if (acc == nullptr || acc->ref->bytes == ir::kNoExpr || !OnlyFixed(r, acc->ref->bytes)) {
      return std::nullopt;
    }
    ir::ExprId x = ir::kNoExpr, m = o.id;
    const ir::Expr& top = p_.expr(o.id);
    if (top.kind == ir::Expr::Kind::kBinary &&
        static_cast<ir::BinaryOp>(top.op) == ir::BinaryOp::kAdd) {
      const ir::Expr& l = p_.expr(top.a);
      const bool left_mul = l.kind == ir::Expr::Kind::kBinary &&
                            static_cast<ir::BinaryOp>(l.op) == ir::BinaryOp::kMul;
      m = left_mul ? top.a : top.b;
      x = left_mul ? top.b : top.a;
    }
    const ir::Expr& mul = p_.expr(m);
    if (mul.kind != ir::Expr::Kind::kBinary ||
        static_cast<ir::BinaryOp>(mul.op) != ir::BinaryOp::kMul || !OnlyFixed(r, x)) {
      return std::nullopt;
    }
    for (int pick = 0; pick < 2; ++pick) {
      const ir::ExprId pe = pick == 0 ? mul.a : mul.b, se = pick == 0 ? mul.b : mul.a;
      if (OnlyFixed(r, pe) && OnlyFixed(r, se) && !ReadsAgentBuiltin(pe)) {
        return StripeForm{pe, se, x};
      }
    }
    return std::nullopt;
  }
  bool ReadsAgentBuiltin(ir::ExprId id) const {
    if (id == ir::kNoExpr) return false;
    const ir::Expr& x = p_.expr(id);
    if (IsAgent(x)) return true;
    return ReadsAgentBuiltin(x.a) || ReadsAgentBuiltin(x.b) || ReadsAgentBuiltin(x.c);
  }
  // Records every CTA stripe (called once, before any Passes).
  void RecordStripes() {
    std::set<const Access*> bad;
    for (uint32_t y = 0; y < e_.num_agents(); ++y) {
      const uint32_t r = e_.agent_info(y).role;
      for (const Operand& o : walks_[r].operands) {
        if (o.kind != OperandKind::kOffset || facts_[r].fixed_stmt[o.top]) continue;
        const std::optional<StripeForm> f = MatchCtaStripe(o, r);
        if (!f) continue;
        const Access* acc = o.offset_of;
        const auto sv = Val(f->s, r, y, o.top), pv = Val(f->p, r, y, o.top);
        const auto xv = f->x == ir::kNoExpr ? std::optional<int64_t>(0) : Val(f->x, r, y, o.top);
        const auto by = Val(acc->ref->bytes, r, y, o.top);
        const auto sb = SlotBytes(acc->ref->buffer, y);
        if (!sv || !pv || !xv || !by || !sb || *sv <= 0 || *sv % 1024 != 0 || *xv < 0 ||
            *by < 0 || *xv + *by > *sv || *pv < 0 || *pv > (int64_t{1} << 20) ||
            *pv * *sv + *sv > *sb || !RecordStripe(acc->ref->buffer, *sv, *pv)) {
          bad.insert(acc);
          bad_buffers_.insert(acc->ref->buffer);
          continue;
        }
        stripe_access_.insert(acc);
      }
    }
    for (const Access* acc : bad) stripe_access_.erase(acc);
  }
  bool StripeOperand(const Operand& o, uint32_t r, uint32_t a, uint32_t b, std::string* why) {
    const Access* acc = o.offset_of;
    const std::optional<StripeForm> f = MatchCtaStripe(o, r);
    if (acc != nullptr && f && stripe_access_.count(acc) && !bad_buffers_.count(acc->ref->buffer) &&
        Val(f->s, r, a, o.top) == Val(f->s, r, b, o.top) &&
        (f->x == ir::kNoExpr || Val(f->x, r, a, o.top) == Val(f->x, r, b, o.top)) &&
        Val(acc->ref->bytes, r, a, o.top) == Val(acc->ref->bytes, r, b, o.top)) {
      // The permutation's map of this buffer's stripe indices: one function for all accesses.
      const auto pa = Val(f->p, r, a, o.top), pb = Val(f->p, r, b, o.top);
      if (pa && pb) {
        auto [it, fresh] = sigma_[acc->ref->buffer].emplace(*pa, *pb);
        if (fresh || it->second == *pb) return true;
      }
    }
    return Fail(why, "role " + p_.roles[r].name + ": the CTA rank decides the byte offset at " +
                         Line(p_, o.id) + " other than as a stripe");
  }
  bool RecordStripe(uint32_t buffer, int64_t s, int64_t p) {
    auto [it, fresh] = stripes_.try_emplace(buffer);
    StripeInfo& st = it->second;
    if (fresh) st.s = s;
    st.p.insert(p);
    return st.s == s;
  }
  std::optional<int64_t> SlotBytes(uint32_t buffer, uint32_t a) const {
    const ir::BuiltinValues& bv = e_.agent_builtins(a);
    const ir::EvalEnv env = Env(&bv, nullptr, 0);
    ir::EvalFault f;
    const int64_t v = ir::EvalFast(p_, p_.buffers[buffer].bytes, env, &f);
    if (!f.ok()) return std::nullopt;
    return v;
  }

  // Per striped buffer: the permutation's map of stripe indices is well defined, and every
  // other access of the buffer touches every stripe alike.
  bool StripesPass(const std::vector<uint32_t>& g, std::string* why) {
    for (const auto& [buffer, st] : stripes_) {
      if (bad_buffers_.count(buffer)) continue;  // no stripe access passed: none recorded
      // sigma is one to one (a function by construction).
      std::set<int64_t> image;
      for (const auto& [from, to] : sigma_[buffer]) image.insert(to);
      if (image.size() != sigma_[buffer].size()) {
        return Fail(why, "buffer " + p_.buffers[buffer].name +
                             ": the permutation does not map its stripes one to one");
      }
      const std::vector<int64_t> indices(st.p.begin(), st.p.end());
      for (uint32_t y = 0; y < e_.num_agents(); ++y) {
        const uint32_t r = e_.agent_info(y).role;
        for (const Access& acc : walks_[r].accesses_) {
          if (acc.ref->buffer != buffer && !Aliases(acc.ref->buffer, buffer)) continue;
          if (stripe_access_.count(&acc)) continue;
          if (acc.ref->buffer != buffer || acc.box_bytes || !OnlyFixed(r, acc.ref->offset) ||
              !OnlyFixed(r, acc.ref->bytes)) {
            return Fail(why, "buffer " + p_.buffers[buffer].name +
                                 ": an access that may not treat its CTA stripes alike");
          }
          int64_t lo = 0, hi = INT64_MAX;
          if (acc.ref->offset != ir::kNoExpr) {
            const auto v = Val(acc.ref->offset, r, y, acc.top);
            if (!v) return Fail(why, "an offset faults");
            lo = *v;
          }
          if (acc.ref->bytes != ir::kNoExpr) {
            const auto v = Val(acc.ref->bytes, r, y, acc.top);
            if (!v) return Fail(why, "a byte count faults");
            hi = lo + *v;
          }
          std::optional<std::pair<int64_t, int64_t>> rel;
          for (int64_t q : indices) {
            const int64_t base = q * st.s;
            const int64_t l = std::max(lo, base), h = std::min(hi, base + st.s);
            const std::pair<int64_t, int64_t> here =
                l < h ? std::pair<int64_t, int64_t>{l - base, h - base}
                      : std::pair<int64_t, int64_t>{0, 0};
            if (!rel) rel = here;
            if (*rel != here) {
              return Fail(why, "buffer " + p_.buffers[buffer].name +
                                   ": an access touches its CTA stripes differently");
            }
          }
        }
      }
    }
    return true;
  }
  bool Aliases(uint32_t x, uint32_t y) const {
    auto root = [&](uint32_t b) {
      while (p_.buffers[b].alias_of != ir::BufferDecl::kNoAlias) b = p_.buffers[b].alias_of;
      return b;
    };
    return root(x) == root(y);
  }

  struct StripeInfo {
    int64_t s = 0;
    std::set<int64_t> p;  // the stripe indices of its accesses
  };

  const ir::Program& p_;
  const std::vector<int64_t>& params_;
  const Engine& e_;
  uint32_t cs_ = 1;
  std::deque<RoleWalk> walks_;
  std::vector<CtaRoleFacts> facts_;
  std::map<uint32_t, StripeInfo> stripes_;
  std::set<const Access*> stripe_access_;
  std::set<uint32_t> bad_buffers_;
  std::map<uint32_t, std::map<int64_t, int64_t>> sigma_;  // per buffer, for the current Passes
};

std::vector<uint32_t> Compose(const std::vector<uint32_t>& g, const std::vector<uint32_t>& h) {
  std::vector<uint32_t> out(g.size());
  for (size_t i = 0; i < g.size(); ++i) out[i] = g[h[i]];
  return out;
}

}  // namespace

CtaSymmetry CtaSymmetryGroup(const ir::Program& p, const std::vector<int64_t>& params,
                             const Engine& e, const std::vector<uint32_t>& classes,
                             std::string* why) {
  CtaSymmetry out;
  for (const ir::Role& r : p.roles) {
    if (HasReadback(r.body)) {
      *why = "interchangeable CTAs: none (the schedule has a readback)";
      return out;
    }
  }
  if (ir::HasAssertions(p)) {  // as SymmetryClasses: an assertion may name one CTA
    *why = "interchangeable CTAs: none (the schedule states assertions)";
    return out;
  }
  CtaAnalysis an(p, params, e);
  std::string blocker;
  if (!an.Prepare(&blocker) || !an.AllReached(&blocker) || !an.DeclsAgree(&blocker)) {
    *why = "interchangeable CTAs: none (" + blocker + ")";
    return out;
  }
  const uint32_t cs = an.cluster_size();
  if (cs < 2) {
    *why = "interchangeable CTAs: none (one CTA per cluster)";
    return out;
  }
  // Candidate generators: rotations and reflections of the rank, and of each cluster axis.
  const uint32_t m = static_cast<uint32_t>(e.agent_builtins(0)[static_cast<size_t>(
      ir::Builtin::kClusterM)]);
  const uint32_t n = cs / std::max<uint32_t>(m, 1);
  std::vector<std::vector<uint32_t>> cand;
  auto add = [&](auto f) {
    std::vector<uint32_t> g(cs);
    for (uint32_t r = 0; r < cs; ++r) g[r] = f(r % m, r / m, r);
    cand.push_back(std::move(g));
  };
  add([&](uint32_t, uint32_t, uint32_t r) { return (r + 1) % cs; });
  add([&](uint32_t, uint32_t, uint32_t r) { return cs - 1 - r; });
  if (m > 1 && n > 1) {
    add([&](uint32_t x, uint32_t y, uint32_t) { return (x + 1) % m + y * m; });
    add([&](uint32_t x, uint32_t y, uint32_t) { return x + (y + 1) % n * m; });
    add([&](uint32_t x, uint32_t y, uint32_t) { return (m - 1 - x) + y * m; });
    add([&](uint32_t x, uint32_t y, uint32_t) { return x + (n - 1 - y) * m; });
    if (m == n) add([&](uint32_t x, uint32_t y, uint32_t) { return y + x * m; });
  }
  std::vector<uint32_t> id(cs);
  for (uint32_t r = 0; r < cs; ++r) id[r] = r;
  // Classes of interchangeable agents must map to classes.
  auto classes_follow = [&](const std::vector<uint32_t>& g) {
    if (classes.empty()) return true;
    std::map<uint32_t, uint32_t> f;
    for (uint32_t a = 0; a < e.num_agents(); ++a) {
      const engine::AgentInfo& i = e.agent_info(a);
      const uint32_t img = i.cta_global / cs * cs + g[i.cta];
      const uint32_t b = e.cta_first_agent(img) + i.index_in_cta;
      if ((classes[a] == Engine::kNoGroup) != (classes[b] == Engine::kNoGroup)) return false;
      if (classes[a] == Engine::kNoGroup) continue;
      auto [it, fresh] = f.emplace(classes[a], classes[b]);
      if (!fresh && it->second != classes[b]) return false;
    }
    return true;
  };
  constexpr size_t kMaxGroup = 64;
  std::set<std::vector<uint32_t>> group{id};
  std::string first_fail;
  for (const std::vector<uint32_t>& g : cand) {
    if (group.count(g)) continue;
    std::string w;
    if (!an.Passes(g, &w) || !classes_follow(g)) {
      if (first_fail.empty()) first_fail = w.empty() ? "agent classes do not follow" : w;
      continue;
    }
    // The closure with g; every element must pass too (it does when the checks are exact).
    std::set<std::vector<uint32_t>> next = group;
    std::deque<std::vector<uint32_t>> todo(next.begin(), next.end());
    bool ok = true;
    while (!todo.empty() && ok) {
      const std::vector<uint32_t> x = todo.front();
      todo.pop_front();
      for (const std::vector<uint32_t>& y : {g, x}) {
        for (const std::vector<uint32_t>& z : {Compose(x, y), Compose(y, x), Compose(x, g)}) {
          if (next.insert(z).second) {
            std::string w2;
            if (next.size() > kMaxGroup || !an.Passes(z, &w2) || !classes_follow(z)) ok = false;
            todo.push_back(z);
          }
        }
      }
    }
    if (ok) group = std::move(next);
  }
  if (group.size() > 1) out.perms.assign(group.begin(), group.end());
  if (out.perms.empty()) {
    *why = "interchangeable CTAs: none (" + (first_fail.empty() ? std::string("no candidate") : first_fail) + ")";
    return out;
  }
  out.hidden = an.Hidden();
  *why = "interchangeable CTAs: a group of " + std::to_string(group.size()) +
         " permutations of the cluster's CTA ranks (ranks, masks, `@cta` targets, peer "
         "barriers and buffers permuted together)";
  return out;
}

uint64_t CanonicalFingerprint(const Engine& e, const CtaSymmetry& cta,
                              const std::vector<uint32_t>& classes) {
  return e.MinPermutedFingerprint(cta.perms, classes.empty() ? nullptr : &classes, cta.hidden);
}

}  // namespace parity::verifier
