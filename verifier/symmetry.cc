// Symmetry classes of agents for `parity explore` (symmetry.h).
//
// Why the classes are sound. The reduction needs, for every permutation pi of agents within
// classes, an automorphism of the transition system that moves each agent's private state (pc,
// status, variables, async-group state, cluster-barrier record, the in-flight operations it
// issued) to pi(agent) and keeps every shared object (explore.h). An agent's steps read its
// index only through the `agent` builtin (the engine's per-agent inputs otherwise are its CTA
// and role, equal within a class). Case (a) of symmetry.h: an agent-determined expression
// evaluates to the same value for every agent of a class at every point of a run (its fixed
// variables have one value from their statement on, and it is read only after), so a and
// pi(a) take the same step from the same private state; in particular no variable ever holds a
// value that differs between them, so the fingerprint's variables move with the agent. Case
// (b): a stripe offset decides only the bytes of a trace event (an access, a cp.async's
// destination; the engine's state and in-flight records hold slots and byte counts, not
// offsets) and the slot bound check, which passes for every agent of the class by the static
// check. Trace-based verdicts (P2009 races) compare byte ranges: with sigma the permutation of
// the class's stripes (byte aS + y to pi(a)S + y), agent pi(a)'s stripe access is sigma of
// a's, and every other access R of the buffer satisfies sigma(R) = R (the relative-bytes
// check), so two accesses overlap in a run iff their images overlap in the permuted run.
// An `agent` node that the role walk (symmetry_walk.h) does not reach (an operand it does not
// list) switches symmetry off instead of being ignored. The interchangeable CTAs of a cluster
// are cta_symmetry.cc.
#include "verifier/symmetry.h"

#include <algorithm>
#include <climits>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "sim/ir/eval.h"
#include "verifier/symmetry_walk.h"

namespace parity::verifier {

using engine::Engine;

// Whether a block (recursively) holds a `readback` (the engine then tracks write data per agent:
// content tags that name agents, which the symmetric fingerprint does not permute).
bool HasReadback(const ir::Block& block) {
  for (const ir::Stmt& st : block) {
    if (const auto* f = std::get_if<ir::For>(&st.node)) {
      if (HasReadback(f->body)) return true;
    } else if (const auto* i = std::get_if<ir::If>(&st.node)) {
      if (HasReadback(i->then_body) || HasReadback(i->else_body)) return true;
    } else if (const auto* op = std::get_if<ir::Op>(&st.node)) {
      if (std::holds_alternative<ir::GlobalReadback>(*op)) return true;
    }
  }
  return false;
}

namespace {

using symmetry_internal::Access;
using symmetry_internal::IsAgent;
using symmetry_internal::kNoVar;
using symmetry_internal::Line;
using symmetry_internal::Operand;
using symmetry_internal::RoleWalk;

// The analysis of one role: its fixed variables and their values per agent.
class RoleFacts {
 public:
  RoleFacts(const ir::Program& p, const std::vector<int64_t>& params, const RoleWalk& w,
            uint32_t num_vars)
      : p_(p), params_(params), w_(w), fixed_at_(num_vars, kNoVar) {
    for (const auto& [var, def] : w.top_let) {
      auto it = w.writes.find(var);
      if (it == w.writes.end() || it->second != 1 || var >= num_vars) continue;
      // Fixed only if its value reads neither `agent` nor a variable that is not fixed earlier.
      if (ReadsAgent(def.second) || !VarsFixedBefore(def.second, def.first)) continue;
      fixed_at_[var] = def.first;
      fixed_expr_[var] = def.second;
    }
  }

  bool ReadsAgent(ir::ExprId id) const {
    if (id == ir::kNoExpr) return false;
    const ir::Expr& x = p_.expr(id);
    if (IsAgent(x)) return true;
    return ReadsAgent(x.a) || ReadsAgent(x.b) || ReadsAgent(x.c);
  }
  // Every variable the expression reads is fixed by a top-level statement before `top`.
  bool VarsFixedBefore(ir::ExprId id, uint32_t top) const {
    if (id == ir::kNoExpr) return true;
    const ir::Expr& x = p_.expr(id);
    if (x.kind == ir::Expr::Kind::kVar) {
      return x.index < fixed_at_.size() && fixed_at_[x.index] != kNoVar &&
             fixed_at_[x.index] < top;
    }
    return VarsFixedBefore(x.a, top) && VarsFixedBefore(x.b, top) && VarsFixedBefore(x.c, top);
  }
  // The value of a fixed expression for an agent with builtins `b` (nullopt: a fault).
  std::optional<int64_t> Eval(ir::ExprId id, const ir::BuiltinValues& b) {
    std::vector<int64_t> vars(fixed_at_.size(), 0);
    // Fixed variables in order of their statements (each reads only earlier ones).
    std::vector<std::pair<uint32_t, uint32_t>> order;
    for (uint32_t v = 0; v < fixed_at_.size(); ++v) {
      if (fixed_at_[v] != kNoVar) order.emplace_back(fixed_at_[v], v);
    }
    std::sort(order.begin(), order.end());
    ir::EvalEnv env;
    env.params = params_.data();
    env.num_params = params_.size();
    env.vars = vars.data();
    env.num_vars = vars.size();
    env.builtins = &b;
    for (const auto& [top, v] : order) {
      ir::EvalFault f;
      vars[v] = ir::EvalFast(p_, fixed_expr_[v], env, &f);
      if (!f.ok()) vars[v] = 0;  // the program faults there; reads of it fault first
    }
    ir::EvalFault f;
    const int64_t r = ir::EvalFast(p_, id, env, &f);
    if (!f.ok()) return std::nullopt;
    return r;
  }

 private:
  const ir::Program& p_;
  const std::vector<int64_t>& params_;
  const RoleWalk& w_;
  std::vector<uint32_t> fixed_at_;
  std::map<uint32_t, ir::ExprId> fixed_expr_;
};

// A stripe offset X + agent * S: its S and X (kNoExpr: 0), or false.
bool MatchStripe(const ir::Program& p, const RoleFacts& facts, ir::ExprId id, ir::ExprId* s,
                 ir::ExprId* x) {
  auto mul = [&](ir::ExprId m, ir::ExprId* out) {
    const ir::Expr& e = p.expr(m);
    if (e.kind != ir::Expr::Kind::kBinary || e.op != static_cast<uint8_t>(ir::BinaryOp::kMul)) {
      return false;
    }
    if (IsAgent(p.expr(e.a)) && !facts.ReadsAgent(e.b)) {
      *out = e.b;
      return true;
    }
    if (IsAgent(p.expr(e.b)) && !facts.ReadsAgent(e.a)) {
      *out = e.a;
      return true;
    }
    return false;
  };
  if (mul(id, s)) {
    *x = ir::kNoExpr;
    return true;
  }
  const ir::Expr& e = p.expr(id);
  if (e.kind != ir::Expr::Kind::kBinary || e.op != static_cast<uint8_t>(ir::BinaryOp::kAdd)) {
    return false;
  }
  if (!facts.ReadsAgent(e.b) && mul(e.a, s)) {
    *x = e.b;
    return true;
  }
  if (!facts.ReadsAgent(e.a) && mul(e.b, s)) {
    *x = e.a;
    return true;
  }
  return false;
}


void MarkAgents(const ir::Program& p, ir::ExprId id, std::vector<uint8_t>* seen) {
  if (id == ir::kNoExpr) return;
  if (IsAgent(p.expr(id))) (*seen)[id] = 1;
  MarkAgents(p, p.expr(id).a, seen);
  MarkAgents(p, p.expr(id).b, seen);
  MarkAgents(p, p.expr(id).c, seen);
}

// The largest subexpressions of `id` that read `agent` and only variables fixed before `top`.
void Decompose(const ir::Program& p, const RoleFacts& f, ir::ExprId id, uint32_t top,
               std::vector<ir::ExprId>* out) {
  if (id == ir::kNoExpr || !f.ReadsAgent(id)) return;
  if (f.VarsFixedBefore(id, top)) {
    out->push_back(id);
    return;
  }
  const ir::Expr& x = p.expr(id);
  Decompose(p, f, x.a, top, out);
  Decompose(p, f, x.b, top, out);
  Decompose(p, f, x.c, top, out);
}

// One stripe statement: its S, X, bytes expressions.
struct Stripe {
  const Access* acc;
  ir::ExprId s, x;
};

}  // namespace

std::vector<uint32_t> SymmetryClasses(const ir::Program& p, const std::vector<int64_t>& params,
                                      const Engine& e, std::string* why) {
  const uint32_t n = static_cast<uint32_t>(e.num_agents());
  std::vector<uint32_t> cls(n, Engine::kNoGroup);
  const size_t nr = p.roles.size();
  for (const ir::Role& r : p.roles) {
    if (HasReadback(r.body)) {
      *why = "symmetry reduction: not applied (the schedule has a readback: write data is "
             "tracked per agent)";
      return {};
    }
  }
  if (ir::HasAssertions(p)) {
    // An assertion may name `agent`, `cta_rank` or one CTA's state: keeping one state per
    // symmetry class could drop the one it fails in (or an end state an `exists` needs).
    *why = "symmetry reduction: not applied (the schedule states assertions)";
    return {};
  }
  int64_t cluster_m = 1, cluster_n = 1;
  {
    ir::EvalEnv env;
    env.params = params.data();
    env.num_params = params.size();
    auto m = p.cluster_m == ir::kNoExpr ? Expected<int64_t>(1) : ir::Eval(p, p.cluster_m, env);
    auto nn = p.cluster_n == ir::kNoExpr ? Expected<int64_t>(1) : ir::Eval(p, p.cluster_n, env);
    if (!m.ok() || !nn.ok() || *m <= 0 || *nn <= 0) {
      *why = "symmetry reduction: not applied (the cluster shape does not evaluate)";
      return {};
    }
    cluster_m = *m;
    cluster_n = *nn;
  }
  auto builtins = [&](uint32_t a) {
    const engine::AgentInfo& i = e.agent_info(a);
    return ir::MakeBuiltins(i.cta, i.cta % cluster_m, i.cta / cluster_m, cluster_m, cluster_n,
                            i.cluster, i.index_in_role);
  };

  std::vector<RoleWalk> walks;
  walks.reserve(nr);
  std::vector<RoleFacts> facts;
  facts.reserve(nr);
  std::vector<uint8_t> agent_seen(p.exprs.size(), 0);
  // Per role: the agent-determined expressions and the stripe statements.
  std::vector<std::vector<ir::ExprId>> determined(nr);
  std::vector<std::vector<Stripe>> stripes(nr);
  std::string first_blocker;
  uint32_t stripe_count = 0, determined_count = 0;
  for (size_t r = 0; r < nr; ++r) {
    walks.emplace_back(p, p.roles[r]);
    walks.back().Run();
    facts.emplace_back(p, params, walks.back(), p.roles[r].num_vars);
    RoleFacts& f = facts.back();
    for (const Operand& o : walks.back().operands) {
      MarkAgents(p, o.id, &agent_seen);
      if (!f.ReadsAgent(o.id)) continue;
      ir::ExprId s = ir::kNoExpr, x = ir::kNoExpr;
      const Access* acc = o.offset_of;
      if (acc != nullptr && acc->stripe_ok && acc->ref->bytes != ir::kNoExpr &&
          MatchStripe(p, f, o.id, &s, &x) && f.VarsFixedBefore(s, o.top) &&
          f.VarsFixedBefore(x, o.top) && f.VarsFixedBefore(acc->ref->bytes, o.top)) {
        stripes[r].push_back({acc, s, x});
        ++stripe_count;
      } else {
        // The operand is a function of its agent-determined parts (the largest subexpressions
        // that read `agent` and only fixed variables; at worst `agent` itself) and of variables
        // that are equal for equal private states: its value agrees within a class.
        Decompose(p, f, o.id, o.top, &determined[r]);
        determined_count += 1;
      }
    }
  }
  for (size_t id = 0; id < p.exprs.size(); ++id) {
    if (IsAgent(p.exprs[id]) && !agent_seen[id]) {
      // Declarations see agent 0's builtins in every CTA; anything else is not placed.
      bool in_decl = false;
      for (const ir::BarrierDecl& b : p.barriers) {
        std::vector<uint8_t> s(p.exprs.size(), 0);
        MarkAgents(p, b.count, &s);
        MarkAgents(p, b.size, &s);
        in_decl = in_decl || s[id];
      }
      if (!in_decl) {
        *why = "symmetry reduction: not applied (an `agent` read at " +
               Line(p, static_cast<ir::ExprId>(id)) + " outside the analysed operands)";
        return {};
      }
    }
  }

  // Class keys: (CTA, role, values of the role's agent-determined expressions).
  std::map<std::pair<uint64_t, std::vector<int64_t>>, std::vector<uint32_t>> groups;
  std::map<uint64_t, std::vector<int64_t>> first_sig;
  for (uint32_t a = 0; a < n; ++a) {
    const engine::AgentInfo& info = e.agent_info(a);
    const ir::BuiltinValues b = builtins(a);
    std::vector<int64_t> sig;
    for (ir::ExprId id : determined[info.role]) {
      const std::optional<int64_t> v = facts[info.role].Eval(id, b);
      sig.push_back(v.has_value() ? 0 : 1);  // a fault is a value of its own
      sig.push_back(v.value_or(0));
    }
    // The report names the first operand that tells two agents of a role and CTA apart.
    const uint64_t where = (uint64_t{info.cta_global} << 32) | info.role;
    auto [first, fresh] = first_sig.emplace(where, sig);
    if (!fresh && first_blocker.empty() && first->second != sig) {
      size_t i = 0;
      while (i < sig.size() && sig[i] == first->second[i]) ++i;
      if (i < sig.size()) {
        first_blocker = "role " + p.roles[info.role].name + ": `agent` decides an operand at " +
                        Line(p, determined[info.role][i / 2]);
      }
    }
    groups[{where, std::move(sig)}].push_back(a);
  }

  // The byte range [lo, hi) of an access within its slot for agent x, or false (not static).
  auto range = [&](const Access& acc, uint32_t x, uint32_t role, int64_t* lo, int64_t* hi) {
    if (acc.box_bytes) return false;
    const ir::BuiltinValues b = builtins(x);
    RoleFacts& f = facts[role];
    int64_t off = 0;
    if (acc.ref->offset != ir::kNoExpr) {
      if (!f.VarsFixedBefore(acc.ref->offset, acc.top)) return false;
      auto v = f.Eval(acc.ref->offset, b);
      if (!v) return false;
      off = *v;
    }
    int64_t bytes = -1;
    if (acc.ref->bytes != ir::kNoExpr) {
      if (!f.VarsFixedBefore(acc.ref->bytes, acc.top)) return false;
      auto v = f.Eval(acc.ref->bytes, b);
      if (!v) return false;
      bytes = *v;
    }
    *lo = off;
    *hi = bytes < 0 ? INT64_MAX : off + bytes;  // bytes absent: to the slot's end
    return true;
  };
  auto slot_bytes = [&](uint32_t buffer, uint32_t a) -> std::optional<int64_t> {
    ir::EvalEnv env;
    env.params = params.data();
    env.num_params = params.size();
    const ir::BuiltinValues b = builtins(a);
    env.builtins = &b;
    auto v = ir::Eval(p, p.buffers[buffer].bytes, env);
    if (!v.ok()) return std::nullopt;
    return *v;
  };

  uint32_t classes = 0, members = 0;
  std::string roles;
  for (auto& [key, agents] : groups) {
    if (agents.size() < 2) continue;
    const uint32_t role = static_cast<uint32_t>(key.first & 0xffffffffu);
    // Stripes of this class, per buffer: one S, each statement inside its stripe and slot.
    bool ok = true;
    std::map<uint32_t, int64_t> stride;  // buffer -> S
    for (const Stripe& st : stripes[role]) {
      for (uint32_t a : agents) {
        const ir::BuiltinValues b = builtins(a);
        auto s = facts[role].Eval(st.s, b);
        auto x = st.x == ir::kNoExpr ? std::optional<int64_t>(0) : facts[role].Eval(st.x, b);
        auto by = facts[role].Eval(st.acc->ref->bytes, b);
        auto sb = slot_bytes(st.acc->ref->buffer, a);
        const int64_t idx = e.agent_info(a).index_in_role;
        if (!s || !x || !by || !sb || *s <= 0 || *x < 0 || *by < 0 || *x + *by > *s ||
            idx * *s + *s > *sb) {
          ok = false;
          break;
        }
        auto [it, fresh] = stride.emplace(st.acc->ref->buffer, *s);
        if (!fresh && it->second != *s) ok = false;
      }
      if (!ok) break;
    }
    // Every other access of a striped buffer touches each stripe of the class alike.
    for (auto it = stride.begin(); ok && it != stride.end(); ++it) {
      const uint32_t buffer = it->first;
      const int64_t s = it->second;
      std::vector<uint8_t> in_class(n, 0);
      for (uint32_t a : agents) in_class[a] = 1;
      for (uint32_t x = 0; ok && x < n; ++x) {
        const uint32_t xr = e.agent_info(x).role;
        for (const Access& acc : walks[xr].accesses_) {
          if (acc.ref->buffer != buffer) continue;
          bool own_stripe = false;
          if (in_class[x] && xr == role) {
            for (const Stripe& st : stripes[role]) own_stripe = own_stripe || st.acc == &acc;
          }
          if (own_stripe) continue;
          int64_t lo = 0, hi = 0;
          if (!range(acc, x, xr, &lo, &hi)) {
            ok = false;
            break;
          }
          std::optional<std::pair<int64_t, int64_t>> rel;
          bool first = true;
          for (uint32_t a : agents) {
            const int64_t base = int64_t{e.agent_info(a).index_in_role} * s;
            const int64_t l = std::max(lo, base), h = std::min(hi, base + s);
            const std::pair<int64_t, int64_t> here =
                l < h ? std::pair<int64_t, int64_t>{l - base, h - base}
                      : std::pair<int64_t, int64_t>{0, 0};
            if (first) {
              rel = here;
              first = false;
            } else if (*rel != here) {
              ok = false;
              break;
            }
          }
          if (!ok) break;
        }
      }
    }
    if (!ok) {
      if (first_blocker.empty()) {
        first_blocker = "role " + p.roles[role].name +
                        "'s `agent` byte offsets do not form stripes that every access of "
                        "the buffer treats alike";
      }
      continue;
    }
    for (uint32_t a : agents) cls[a] = classes;
    ++classes;
    members += static_cast<uint32_t>(agents.size());
    const std::string& name = p.roles[role].name;
    if (roles.find(name) == std::string::npos) roles += (roles.empty() ? "" : ", ") + name;
  }
  if (classes == 0) {
    *why = "symmetry reduction: not applied (no two agents of one role in one CTA that read "
           "`agent` alike" +
           (first_blocker.empty() ? std::string() : ": " + first_blocker) +
           ")";
    return {};
  }
  *why = "symmetry reduction: applied: " + std::to_string(classes) +
         " classes of interchangeable agents (same role, same CTA, `agent` read alike or as "
         "stripe offsets: " + roles + "; " + std::to_string(members) + " agents; " +
         std::to_string(determined_count) + " agent-determined operands, " +
         std::to_string(stripe_count) + " stripe offsets)" +
         (first_blocker.empty() ? std::string() : "; some agents stay apart (" + first_blocker + ")") +
         "";
  return cls;
}

uint64_t SearchSymmetry::VisitedFp(const engine::Engine& e) const {
  if (!visited) return e.Fingerprint();
  if (!cta.empty()) return CanonicalFingerprint(e, cta, classes);
  return e.SymmetricFingerprint(classes);
}

uint64_t SearchSymmetry::TerminalFp(const engine::Engine& e, uint64_t visited_fp) const {
  if (visited) return visited_fp;
  if (!cta.empty()) return CanonicalFingerprint(e, cta, classes);
  if (classes.empty()) return visited_fp;
  return e.SymmetricFingerprint(classes);
}

SearchSymmetry SymmetryForSearch(const ir::Program& p, const std::vector<int64_t>& params,
                                 const engine::Engine& e, bool reduce) {
  SearchSymmetry s;
  std::string why, cta_why;
  s.classes = SymmetryClasses(p, params, e, &why);
  s.cta = CtaSymmetryGroup(p, params, e, s.classes, &cta_why);
  const bool any = !s.classes.empty() || !s.cta.empty();
  s.visited = any && reduce;
  if (!s.visited && any) {
    s.description = "symmetry reduction: not applied (switched off)";
  } else if (s.cta.empty()) {
    s.description = why + "; " + cta_why;
  } else {
    s.description = "symmetry reduction: applied: " + cta_why + "; agents: " + why;
  }
  return s;
}

}  // namespace parity::verifier
