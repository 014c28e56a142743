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
// An `agent` node that the walk below does not reach (an operand this file does not list)
// switches symmetry off instead of being ignored.
#include "verifier/symmetry.h"

#include <algorithm>
#include <climits>
#include <deque>
#include <map>
#include <optional>
#include <set>
#include <type_traits>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "sim/ir/eval.h"

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

constexpr uint32_t kNoVar = 0xffffffffu;

bool IsAgent(const ir::Expr& x) {
  return x.kind == ir::Expr::Kind::kBuiltin && x.op == static_cast<uint8_t>(ir::Builtin::kAgent);
}

// One buffer access of a role's text: the reference, whether its offset may be a stripe (a
// generic-proxy access or a cp.async: no CTA operand, bytes given by the reference), and
// whether its byte count comes from somewhere other than the reference (TMA: the box).
struct Access {
  const ir::BufferRef* ref = nullptr;
  bool stripe_ok = false;
  bool box_bytes = false;
  uint32_t top = 0;  // index of the role's top-level statement that holds it
};

// How a permutation of CTA ranks must act on an operand's value (CtaSymmetryGroup): kept
// (kValue), mapped as a rank (kRank: a `@cta(r)` target) or as a rank mask (kMask: multicast and
// arrive masks); a byte offset (kOffset: kept, or a CTA stripe) or a TMA coordinate (kCoord: read
// by no state, only checked to evaluate).
enum class OperandKind : uint8_t { kValue, kRank, kMask, kOffset, kCoord };

// An expression operand of a role's text and the top-level statement that holds it.
struct Operand {
  ir::ExprId id = ir::kNoExpr;
  uint32_t top = 0;
  const Access* offset_of = nullptr;  // the operand is this access's offset
  OperandKind kind = OperandKind::kValue;
};

class RoleWalk {
 public:
  RoleWalk(const ir::Program& p, const ir::Role& role) : p_(p), role_(role) {}

  void Run() {
    for (uint32_t i = 0; i < role_.body.size(); ++i) Stmt(role_.body[i], i, /*top_level=*/true);
  }

  std::vector<Operand> operands;
  std::deque<Access> accesses_;  // stable addresses: operands point into it
  // Per variable: the top-level index of its one top-level `let` (kNoVar: none), how many
  // times it is written anywhere.
  std::map<uint32_t, std::pair<uint32_t, ir::ExprId>> top_let;
  std::map<uint32_t, int> writes;

 private:
  void Expr(ir::ExprId id, uint32_t top, const Access* offset_of = nullptr,
            OperandKind kind = OperandKind::kValue) {
    if (id != ir::kNoExpr) operands.push_back({id, top, offset_of, kind});
  }
  void Rank(ir::ExprId id, uint32_t top) { Expr(id, top, nullptr, OperandKind::kRank); }
  void Mask(ir::ExprId id, uint32_t top) { Expr(id, top, nullptr, OperandKind::kMask); }
  void Bar(const ir::BarrierRef& b, uint32_t top) {
    Expr(b.index, top);
    Rank(b.cta, top);
  }
  void Buf(const ir::BufferRef& b, uint32_t top, bool stripe_ok, bool box_bytes) {
    accesses_.push_back({&b, stripe_ok, box_bytes, top});
    const Access* acc = &accesses_.back();
    Expr(b.slot, top);
    Expr(b.offset, top, acc, OperandKind::kOffset);
    Expr(b.bytes, top);
    Rank(b.cta, top);
  }
  void Write(uint32_t var) {
    if (var != kNoVar) writes[var] += 1;
  }
  void Op(const ir::Op& op, uint32_t t) {
    std::visit(
        [&](const auto& o) {
          using T = std::decay_t<decltype(o)>;
          if constexpr (std::is_same_v<T, ir::MbarrierInit>) {
            Bar(o.bar, t);
            Expr(o.count, t);
          } else if constexpr (std::is_same_v<T, ir::MbarrierInval>) {
            Bar(o.bar, t);
          } else if constexpr (std::is_same_v<T, ir::MbarrierArrive>) {
            Bar(o.bar, t);
            Expr(o.count, t);
            Expr(o.expect_tx, t);
            Mask(o.mask, t);
            Write(o.token_var);
          } else if constexpr (std::is_same_v<T, ir::MbarrierExpectTx> ||
                               std::is_same_v<T, ir::MbarrierCompleteTx>) {
            Bar(o.bar, t);
            Expr(o.bytes, t);
          } else if constexpr (std::is_same_v<T, ir::MbarrierWait>) {
            Bar(o.bar, t);
            Expr(o.parity, t);
            Write(o.result_var);
          } else if constexpr (std::is_same_v<T, ir::TmaLoad>) {
            for (ir::ExprId c : o.coords) Expr(c, t, nullptr, OperandKind::kCoord);
            Buf(o.dst, t, false, true);
            Bar(o.bar, t);
            Mask(o.multicast_mask, t);
          } else if constexpr (std::is_same_v<T, ir::TmaStore>) {
            for (ir::ExprId c : o.coords) Expr(c, t);
            Buf(o.src, t, false, true);
          } else if constexpr (std::is_same_v<T, ir::BulkLoad>) {
            Buf(o.dst, t, false, false);
            Bar(o.bar, t);
            Mask(o.multicast_mask, t);
          } else if constexpr (std::is_same_v<T, ir::BulkStore>) {
            Buf(o.src, t, false, false);
          } else if constexpr (std::is_same_v<T, ir::BulkWait> ||
                               std::is_same_v<T, ir::CpAsyncWait>) {
            Expr(o.pending, t);
          } else if constexpr (std::is_same_v<T, ir::CpAsync>) {
            Buf(o.dst, t, true, false);
          } else if constexpr (std::is_same_v<T, ir::CpAsyncMbarrierArrive>) {
            Bar(o.bar, t);
          } else if constexpr (std::is_same_v<T, ir::StAsync>) {
            Buf(o.dst, t, false, false);
            Bar(o.bar, t);
          } else if constexpr (std::is_same_v<T, ir::NamedBarrier>) {
            Expr(o.id, t);
            Expr(o.threads, t);
          } else if constexpr (std::is_same_v<T, ir::BufferAccess>) {
            Buf(o.buf, t, true, false);
          } else if constexpr (std::is_same_v<T, ir::MbarrierPendingCount>) {
            Write(o.result_var);
          } else if constexpr (std::is_same_v<T, ir::GlobalReadback>) {
            Buf(o.buf, t, false, false);
            Write(o.result_var);
          } else if constexpr (std::is_same_v<T, ir::GlobalAccess>) {
            Expr(o.slot, t);
            Expr(o.offset, t);
            Expr(o.bytes, t);
          }
          // BulkCommit, CpAsyncCommit, Fence, ClusterArrive, ClusterWait, Exit, GridDepControl:
          // no operand.
        },
        op);
  }
  void Stmt(const ir::Stmt& st, uint32_t top, bool top_level) {
    if (const auto* l = std::get_if<ir::Let>(&st.node)) {
      Expr(l->value, top);
      Write(l->var);
      if (top_level && !top_let.count(l->var)) top_let[l->var] = {top, l->value};
    } else if (const auto* f = std::get_if<ir::For>(&st.node)) {
      Expr(f->lo, top);
      Expr(f->hi, top);
      Expr(f->step, top);
      Expr(f->cond, top);  // a while's condition
      Write(f->var);
      Write(f->var);  // a loop variable is never fixed
      for (const ir::Stmt& s : f->body) Stmt(s, top, false);
    } else if (const auto* i = std::get_if<ir::If>(&st.node)) {
      Expr(i->cond, top);
      for (const ir::Stmt& s : i->then_body) Stmt(s, top, false);
      for (const ir::Stmt& s : i->else_body) Stmt(s, top, false);
    } else if (const auto* op = std::get_if<ir::Op>(&st.node)) {
      Op(*op, top);
    }
  }

  const ir::Program& p_;
  const ir::Role& role_;
};

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

std::string Line(const ir::Program& p, ir::ExprId id) {
  const SourceLocation& w = p.expr(id).where;
  return w.line > 0 ? "line " + std::to_string(w.line) : "an operand without a line";
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

}  // namespace parity::verifier

// ---------------------------------------------------------------------------------------------
// Interchangeable CTAs (symmetry.h: CtaSymmetryGroup gives the argument).

namespace parity::verifier {

namespace {

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

// Runs a block without operations as the engine's control steps do (exec.h StepAgent); false on
// a fault, an over-long run or anything the engine would stop at.
bool RunPure(const ir::Program& p, const ir::Block& b, ir::EvalEnv& env, int64_t* vars,
             uint64_t* budget, bool* broke) {
  auto ev = [&](ir::ExprId id, int64_t* v) {
    ir::EvalFault f;
    *v = ir::EvalFast(p, id, env, &f);
    return f.ok();
  };
  for (const ir::Stmt& st : b) {
    if (*budget == 0) return false;
    --*budget;
    if (const auto* l = std::get_if<ir::Let>(&st.node)) {
      if (!ev(l->value, &vars[l->var])) return false;
    } else if (const auto* i = std::get_if<ir::If>(&st.node)) {
      int64_t c = 0;
      if (!ev(i->cond, &c)) return false;
      if (!RunPure(p, c != 0 ? i->then_body : i->else_body, env, vars, budget, broke)) {
        return false;
      }
      if (*broke) return true;
    } else if (const auto* f = std::get_if<ir::For>(&st.node)) {
      const bool is_while = f->cond != ir::kNoExpr;
      if (is_while) {
        vars[f->var] = 0;
      } else if (!ev(f->lo, &vars[f->var])) {
        return false;
      }
      for (;;) {
        if (*budget == 0) return false;
        --*budget;
        int64_t hi = 0;
        if (is_while) {
          int64_t c = 0;
          if (!ev(f->cond, &c)) return false;
          if (c == 0) break;
          if (!ev(f->hi, &hi) || vars[f->var] >= hi) return false;
        } else {
          if (!ev(f->hi, &hi)) return false;
          if (vars[f->var] >= hi) break;
        }
        if (!RunPure(p, f->body, env, vars, budget, broke)) return false;
        if (*broke) {
          *broke = false;
          break;
        }
        int64_t step = 1;
        if (!is_while && f->step != ir::kNoExpr && !ev(f->step, &step)) return false;
        if (step <= 0 || __builtin_add_overflow(vars[f->var], step, &vars[f->var])) return false;
      }
    } else if (std::holds_alternative<ir::Break>(st.node)) {
      *broke = true;
      return true;
    } else {
      return false;  // an operation
    }
  }
  return true;
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
    for (uint32_t a = 0; a < e_.num_agents(); ++a) {
      if (e_.agent_info(a).role != r) continue;
      std::vector<std::vector<int64_t>>& snap = f.snapshot[a];
      std::vector<int64_t> vars(role.num_vars, 0);
      const ir::BuiltinValues& bv = e_.agent_builtins(a);
      ir::EvalEnv env = Env(&bv, vars.data(), vars.size());
      uint64_t budget = uint64_t{1} << 20;
      for (uint32_t t = 0; t < nt; ++t) {
        snap.push_back(vars);
        if (!f.fixed_stmt[t]) continue;
        bool broke = false;
        if (!RunPure(p_, {role.body[t]}, env, vars.data(), &budget, &broke) || broke) {
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
