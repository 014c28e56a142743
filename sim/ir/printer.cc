#include "sim/ir/printer.h"

#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <variant>

namespace parity::ir {
namespace {

const char* BuiltinName(uint8_t b) {
  switch (static_cast<Builtin>(b)) {
    case Builtin::kCtaRank: return "cta_rank";
    case Builtin::kCtaX: return "cta_x";
    case Builtin::kCtaY: return "cta_y";
    case Builtin::kClusterM: return "cluster_m";
    case Builtin::kClusterN: return "cluster_n";
    case Builtin::kClusterSize: return "cluster_size";
    case Builtin::kClusterId: return "cluster_id";
    case Builtin::kAgent: return "agent";
    case Builtin::kNumClusters: return "num_clusters";
    case Builtin::kGridCta: return "grid_cta";
    case Builtin::kGridSize: return "grid_size";
  }
  return "<bad-builtin>";
}

// C precedence levels as in the parser: 0 = ||, ..., 9 = * / %; 10 = unary; 11 = primary.
struct BinInfo {
  const char* text;
  int level;
};
BinInfo BinaryInfo(uint8_t op) {
  switch (static_cast<BinaryOp>(op)) {
    case BinaryOp::kOr: return {"||", 0};
    case BinaryOp::kAnd: return {"&&", 1};
    case BinaryOp::kBitOr: return {"|", 2};
    case BinaryOp::kBitXor: return {"^", 3};
    case BinaryOp::kBitAnd: return {"&", 4};
    case BinaryOp::kEq: return {"==", 5};
    case BinaryOp::kNe: return {"!=", 5};
    case BinaryOp::kLt: return {"<", 6};
    case BinaryOp::kLe: return {"<=", 6};
    case BinaryOp::kGt: return {">", 6};
    case BinaryOp::kGe: return {">=", 6};
    case BinaryOp::kShl: return {"<<", 7};
    case BinaryOp::kShr: return {">>", 7};
    case BinaryOp::kAdd: return {"+", 8};
    case BinaryOp::kSub: return {"-", 8};
    case BinaryOp::kMul: return {"*", 9};
    case BinaryOp::kDiv: return {"/", 9};
    case BinaryOp::kMod: return {"%", 9};
    case BinaryOp::kMin: return {"min", 11};
    case BinaryOp::kMax: return {"max", 11};
  }
  return {"<bad-op>", 11};
}

constexpr int kSelectLevel = -1;
constexpr int kUnaryLevel = 10;
constexpr int kPrimaryLevel = 11;

class Printer {
 public:
  Printer(const Program& p, const Role* role) : p_(p), role_(role) {}

  int Level(ExprId id) const {
    if (id >= p_.exprs.size()) return kPrimaryLevel;
    const Expr& e = p_.exprs[id];
    switch (e.kind) {
      case Expr::Kind::kSelect: return kSelectLevel;
      case Expr::Kind::kBinary: return BinaryInfo(e.op).level;
      case Expr::Kind::kUnary: return kUnaryLevel;
      case Expr::Kind::kConst: return e.value < 0 ? kUnaryLevel : kPrimaryLevel;
      default: return kPrimaryLevel;
    }
  }

  // `min_level`: the lowest level that may appear here without parentheses.
  std::string Expr_(ExprId id, int min_level = kSelectLevel) const {
    std::string s = Raw(id);
    return Level(id) < min_level ? "(" + s + ")" : s;
  }

  std::string Operand(ExprId id, int min_level, uint8_t parent_op) const {
    std::string s = Raw(id);
    bool parens = Level(id) < min_level;
    if (!parens && id < p_.exprs.size() && p_.exprs[id].kind == Expr::Kind::kBinary) {
      const int parent = BinaryInfo(parent_op).level;
      const int child = BinaryInfo(p_.exprs[id].op).level;
      const bool bitwise_parent = parent == 2 || parent == 3 || parent == 4 || parent == 7;
      if (child != kPrimaryLevel && child != parent && (bitwise_parent || (parent == 0 && child == 1))) {
        parens = true;
      }
    }
    return parens ? "(" + s + ")" : s;
  }

  std::string Raw(ExprId id) const {
    if (id == kNoExpr) return "<none>";
    if (id >= p_.exprs.size()) return "<bad-expr>";
    const Expr& e = p_.exprs[id];
    switch (e.kind) {
      case Expr::Kind::kConst:
        // A named barrier's name where the schedule wrote it (ir.h, Expr::index).
        if (e.index > 0 && e.index <= p_.named_barriers.size() &&
            p_.named_barriers[e.index - 1].id == e.value) {
          return p_.named_barriers[e.index - 1].name;
        }
        // INT64_MIN has no decimal literal (its magnitude overflows); hex keeps the bit pattern.
        if (e.value == std::numeric_limits<int64_t>::min()) return "0x8000000000000000";
        return std::to_string(e.value);
      case Expr::Kind::kParam:
        return e.index < p_.params.size() ? p_.params[e.index].name : "<bad-param>";
      case Expr::Kind::kVar:
        if (role_ != nullptr && e.index < role_->var_names.size()) return role_->var_names[e.index];
        return "<var" + std::to_string(e.index) + ">";
      case Expr::Kind::kBuiltin:
        return BuiltinName(e.op);
      case Expr::Kind::kUnary: {
        const char* op = "-";
        if (static_cast<UnaryOp>(e.op) == UnaryOp::kNot) op = "!";
        if (static_cast<UnaryOp>(e.op) == UnaryOp::kBitNot) op = "~";
        // A unary operand that itself starts with `-` keeps a space (`- -x`) for readability.
        std::string a = Expr_(e.a, kUnaryLevel);
        return std::string(op) + (a[0] == '-' ? " " : "") + a;
      }
      case Expr::Kind::kBinary: {
        const BinInfo info = BinaryInfo(e.op);
        if (info.level == kPrimaryLevel) {
          return std::string(info.text) + "(" + Expr_(e.a) + ", " + Expr_(e.b) + ")";
        }
        // Left-associative: the left operand may share the level, the right one may not.
        // Beyond that, operands of a bitwise or shift operator that are other binary operators,
        // and `&&` under `||`, keep parentheses (as -Wparentheses asks of C): `(k / S & 1) ^ 1`
        // is correct C but reads wrong.
        return Operand(e.a, info.level, e.op) + " " + info.text + " " +
               Operand(e.b, info.level + 1, e.op);
      }
      case Expr::Kind::kSelect:
        // Right-associative: `a ? b : c ? d : e`.
        return Expr_(e.a, 0) + " ? " + Expr_(e.b) + " : " + Expr_(e.c);
      case Expr::Kind::kState: {
        static const char* const kFn[] = {"phase", "pending", "tx", "landed"};
        const bool landed = e.op == static_cast<uint8_t>(StateFn::kLanded);
        std::string obj;
        if (landed) {
          obj = e.index < p_.buffers.size() ? p_.buffers[e.index].name : "<bad-buffer>";
        } else {
          obj = e.index < p_.barriers.size() ? p_.barriers[e.index].name : "<bad-barrier>";
        }
        return std::string(e.op < 4 ? kFn[e.op] : "<bad-state>") + "(" + obj + "[" +
               Expr_(e.a) + "])";
      }
    }
    return "<bad-expr>";
  }

  std::string Var(uint32_t slot) const {
    if (role_ != nullptr && slot < role_->var_names.size()) return role_->var_names[slot];
    return "<var" + std::to_string(slot) + ">";
  }

  std::string Bar(const BarrierRef& r) const {
    std::string s = (r.barrier < p_.barriers.size() ? p_.barriers[r.barrier].name : "<bad-barrier>") +
                    "[" + Expr_(r.index) + "]";
    if (r.cta != kNoExpr) s += " @cta(" + Expr_(r.cta) + ")";
    return s;
  }

  // Only the qualifiers that differ from PTX's defaults (.release/.acquire, .cta), so that a
  // schedule spelling the defaults out prints (and hashes) as one that omits them.
  static std::string Quals(MemSem sem, MemScope scope) {
    return std::string(sem == MemSem::kRelaxed ? ".relaxed" : "") +
           (scope == MemScope::kCluster ? ".cluster" : "");
  }

  std::string Buf(const BufferRef& r) const {
    std::string s = (r.buffer < p_.buffers.size() ? p_.buffers[r.buffer].name : "<bad-buffer>") +
                    "[" + Expr_(r.slot) + "]";
    if (r.offset != kNoExpr) s += " + " + Expr_(r.offset);
    if (r.bytes != kNoExpr) s += " bytes " + Expr_(r.bytes);
    if (r.cta != kNoExpr) s += " @cta(" + Expr_(r.cta) + ")";
    return s;
  }

  std::string List(const std::vector<ExprId>& v) const {
    std::string s = "[";
    for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + Expr_(v[i]);
    return s + "]";
  }

  std::string TensorMapName(uint32_t i) const {
    return i < p_.tensor_maps.size() ? p_.tensor_maps[i].name : "<bad-tensormap>";
  }

  std::string OpText(const Op& op) const {
    return std::visit(
        [&](const auto& o) -> std::string {
          using T = std::decay_t<decltype(o)>;
          if constexpr (std::is_same_v<T, MbarrierInit>) {
            return "init " + Bar(o.bar) + (o.count != kNoExpr ? " count " + Expr_(o.count) : "");
          } else if constexpr (std::is_same_v<T, MbarrierInval>) {
            return "inval " + Bar(o.bar);
          } else if constexpr (std::is_same_v<T, MbarrierArrive>) {
            std::string s;
            if (o.kind == MbarrierArrive::Kind::kNoComplete) {
              s = "arrive.nocomplete";
            } else if (o.kind == MbarrierArrive::Kind::kDrop) {
              s = "arrive_drop";
            } else if (o.expect_tx != kNoExpr) {
              s = "arrive.expect_tx";
            } else {
              s = "arrive";
            }
            s += Quals(o.sem, o.scope) + " " + Bar(o.bar);
            if (o.expect_tx != kNoExpr) s += " bytes " + Expr_(o.expect_tx);
            if (o.count != kNoExpr) s += " count " + Expr_(o.count);
            if (o.mask != kNoExpr) s += " mask " + Expr_(o.mask);
            if (o.token_var != 0xffffffffu) s += " -> " + Var(o.token_var);
            return s;
          } else if constexpr (std::is_same_v<T, MbarrierExpectTx>) {
            return "expect_tx " + Bar(o.bar) + " bytes " + Expr_(o.bytes);
          } else if constexpr (std::is_same_v<T, MbarrierCompleteTx>) {
            return "complete_tx " + Bar(o.bar) + " bytes " + Expr_(o.bytes);
          } else if constexpr (std::is_same_v<T, MbarrierWait>) {
            const std::string q = Quals(o.sem, o.scope) + " ";
            if (o.test_only) {
              return "test_wait" + q + Bar(o.bar) + " parity " + Expr_(o.parity) + " -> " +
                     Var(o.result_var);
            }
            if (o.parity != kNoExpr) return "wait" + q + Bar(o.bar) + " parity " + Expr_(o.parity);
            return "wait" + q + Bar(o.bar) + " token " + Var(o.token_var);
          } else if constexpr (std::is_same_v<T, TmaLoad>) {
            return "tma.load " + TensorMapName(o.tensor_map) + " coords " + List(o.coords) +
                   " -> " + Buf(o.dst) + " bar " + Bar(o.bar) +
                   (o.multicast_mask != kNoExpr ? " multicast " + Expr_(o.multicast_mask) : "");
          } else if constexpr (std::is_same_v<T, TmaStore>) {
            return "tma.store " + TensorMapName(o.tensor_map) + " coords " + List(o.coords) +
                   " <- " + Buf(o.src);
          } else if constexpr (std::is_same_v<T, BulkLoad>) {
            return "bulk.load " + Buf(o.dst) + " bar " + Bar(o.bar) +
                   (o.multicast_mask != kNoExpr ? " multicast " + Expr_(o.multicast_mask) : "");
          } else if constexpr (std::is_same_v<T, BulkStore>) {
            return "bulk.store " + Buf(o.src);
          } else if constexpr (std::is_same_v<T, BulkCommit>) {
            return "bulk.commit";
          } else if constexpr (std::is_same_v<T, BulkWait>) {
            return "bulk.wait " + Expr_(o.pending) + (o.read ? " read" : "");
          } else if constexpr (std::is_same_v<T, CpAsync>) {
            return "cp.async " + Buf(o.dst);
          } else if constexpr (std::is_same_v<T, CpAsyncCommit>) {
            return "cp.async.commit";
          } else if constexpr (std::is_same_v<T, CpAsyncWait>) {
            return o.pending == kNoExpr ? "cp.async.wait_all" : "cp.async.wait " + Expr_(o.pending);
          } else if constexpr (std::is_same_v<T, CpAsyncMbarrierArrive>) {
            return "cp.async.arrive " + Bar(o.bar) + (o.noinc ? " noinc" : "");
          } else if constexpr (std::is_same_v<T, StAsync>) {
            return "st.async " + Buf(o.dst) + " bar " + Bar(o.bar);
          } else if constexpr (std::is_same_v<T, Fence>) {
            switch (o.kind) {
              case Fence::Kind::kMbarrierInit: return "fence.mbarrier_init";
              case Fence::Kind::kProxyAsync: return "fence.proxy.async";
              case Fence::Kind::kProxyAsyncGlobal: return "fence.proxy.async.global";
              case Fence::Kind::kAcqRelCluster: return "fence.acq_rel.cluster";
              case Fence::Kind::kAcqRelCta: return "fence.acq_rel.cta";
              case Fence::Kind::kProxyTensormapRelease: return "fence.proxy.tensormap.release";
              case Fence::Kind::kProxyTensormapAcquire:
                return "fence.proxy.tensormap.acquire " + TensorMapName(o.tensor_map);
            }
            return "<bad-fence>";
          } else if constexpr (std::is_same_v<T, ClusterArrive>) {
            return o.relaxed ? "cluster.arrive relaxed" : "cluster.arrive";
          } else if constexpr (std::is_same_v<T, ClusterWait>) {
            return "cluster.wait";
          } else if constexpr (std::is_same_v<T, NamedBarrier>) {
            return std::string(o.sync ? "bar.sync " : "bar.arrive ") + Expr_(o.id) + ", " +
                   Expr_(o.threads);
          } else if constexpr (std::is_same_v<T, BufferAccess>) {
            const char* word = o.atomic ? (o.returns ? "atom " : "red ")
                               : o.write  ? "write "
                               : o.proxy == ReadProxy::kGeneric ? "use.generic "
                               : o.proxy == ReadProxy::kAsync   ? "use.async "
                                                                : "use ";
            return word + Buf(o.buf);
          } else if constexpr (std::is_same_v<T, MbarrierPendingCount>) {
            return "pending_count " + Var(o.token_var) + " -> " + Var(o.result_var);
          } else if constexpr (std::is_same_v<T, GlobalReadback>) {
            return "readback " + Buf(o.buf) + " -> " + Var(o.result_var);
          } else if constexpr (std::is_same_v<T, GridDepControl>) {
            return o.kind == GridDepControl::Kind::kWait ? "griddepcontrol.wait"
                                                         : "griddepcontrol.launch_dependents";
          } else if constexpr (std::is_same_v<T, GlobalAccess>) {
            std::string s = std::string(o.write ? "write " : "use ") +
                            (o.global < p_.globals.size() ? p_.globals[o.global].name
                                                          : std::string("<bad-global>")) +
                            "[" + Expr_(o.slot) + "]";
            if (o.offset != kNoExpr) s += " + " + Expr_(o.offset);
            if (o.bytes != kNoExpr) s += " bytes " + Expr_(o.bytes);
            return s;
          } else if constexpr (std::is_same_v<T, TensormapReplace>) {
            return "tensormap.replace " + TensorMapName(o.tensor_map);
          } else {
            static_assert(std::is_same_v<T, Exit>);
            return "exit";
          }
        },
        op);
  }

  void Block_(const Block& b, int indent, std::string* out) const {
    const std::string pad(indent * 2, ' ');
    for (const Stmt& s : b) {
      if (const auto* let = std::get_if<Let>(&s.node)) {
        *out += pad + "let " + Var(let->var) + " = " + Expr_(let->value) + "\n";
      } else if (const auto* f = std::get_if<For>(&s.node)) {
        if (f->cond != kNoExpr) {
          *out += pad + "while " + Expr_(f->cond) + " bound " + Expr_(f->hi);
        } else {
          *out += pad + "for " + Var(f->var) + " in " + Expr_(f->lo) + " .. " + Expr_(f->hi);
          if (f->step != kNoExpr) *out += " step " + Expr_(f->step);
        }
        *out += " {\n";
        Block_(f->body, indent + 1, out);
        *out += pad + "}\n";
      } else if (const auto* i = std::get_if<If>(&s.node)) {
        *out += pad;
        If_(*i, indent, out);
        *out += "\n";
      } else if (std::holds_alternative<Break>(s.node)) {
        *out += pad + "break\n";
      } else if (const auto* a = std::get_if<Assert>(&s.node)) {
        *out += pad + AssertionText("assert", a->id) + "\n";
      } else {
        *out += pad + OpText(std::get<Op>(s.node)) + "\n";
      }
    }
  }

  // `assert E -- message` (a kind word and Program::assertions[id]).
  std::string AssertionText(const char* word, uint32_t id) const {
    if (id >= p_.assertions.size()) return std::string(word) + " <bad-assertion>";
    const Assertion& a = p_.assertions[id];
    std::string s = std::string(word) + " " + Expr_(a.cond);
    if (!a.message.empty()) s += " -- " + a.message;
    return s;
  }

  void If_(const If& i, int indent, std::string* out) const {
    const std::string pad(indent * 2, ' ');
    *out += "if " + Expr_(i.cond) + " {\n";
    Block_(i.then_body, indent + 1, out);
    *out += pad + "}";
    if (i.else_body.empty()) return;
    if (i.else_body.size() == 1) {
      if (const auto* inner = std::get_if<If>(&i.else_body[0].node)) {
        *out += " else ";
        If_(*inner, indent, out);
        return;
      }
    }
    *out += " else {\n";
    Block_(i.else_body, indent + 1, out);
    *out += pad + "}";
  }

  void SetRole(const Role* r) { role_ = r; }

 private:
  const Program& p_;
  const Role* role_;
};

bool IsPlainConst(const Program& p, ExprId id) {
  return id < p.exprs.size() && p.exprs[id].kind == Expr::Kind::kConst && p.exprs[id].value >= 0;
}

}  // namespace

std::string PrintExpr(const Program& program, ExprId id, const Role* role) {
  return Printer(program, role).Expr_(id);
}

std::string Print(const Program& p) {
  Printer pr(p, nullptr);
  std::string out = "schedule " + p.name + "\n";
  // Before the params: a param's default may use a named barrier's name.
  for (const NamedBarrierDecl& n : p.named_barriers) {
    out += "named_barrier " + n.name + " = " + std::to_string(n.id) + "\n";
  }
  for (const Param& param : p.params) {
    out += "param " + param.name + " = " +
           (param.default_expr != kNoExpr ? pr.Expr_(param.default_expr)
                                          : std::to_string(param.default_value)) +
           "\n";
  }
  if (p.cluster_m != kNoExpr || p.cluster_n != kNoExpr) {
    // `2x2` for plain numbers, `(E)x(E)` otherwise (the parser reads either).
    auto dim = [&](ExprId id) {
      if (id == kNoExpr) return std::string("1");
      return IsPlainConst(p, id) ? pr.Raw(id) : "(" + pr.Raw(id) + ")";
    };
    out += "cluster " + dim(p.cluster_m) + "x" + dim(p.cluster_n) + "\n";
  }
  if (p.clusters != kNoExpr) out += "clusters " + pr.Expr_(p.clusters) + "\n";
  for (const BufferDecl& b : p.buffers) {
    out += "buffer " + b.name + "[" + pr.Expr_(b.stages) + "] bytes " + pr.Expr_(b.bytes);
    if (b.align != kNoExpr) out += " align " + pr.Expr_(b.align);
    if (b.alias_of != BufferDecl::kNoAlias) {
      out += " aliases " + (b.alias_of < p.buffers.size() ? p.buffers[b.alias_of].name
                                                          : std::string("<bad-buffer>"));
      if (b.alias_offset != kNoExpr) out += " + " + pr.Expr_(b.alias_offset);
    }
    out += "\n";
  }
  for (const BarrierDecl& b : p.barriers) {
    out += "barrier " + b.name + "[" + pr.Expr_(b.size) + "] count " + pr.Expr_(b.count) + "\n";
  }
  for (const TensorMapDecl& m : p.tensor_maps) {
    out += "tensormap " + m.name + " dtype " + m.dtype + " dims " + pr.List(m.global_dims) +
           " box " + pr.List(m.box_dims);
    if (!m.global_strides.empty()) out += " strides " + pr.List(m.global_strides);
    if (!m.element_strides.empty()) out += " element_strides " + pr.List(m.element_strides);
    out += " swizzle " + m.swizzle + " interleave " + m.interleave + " oob " + m.oob_fill + "\n";
  }
  for (const GlobalDecl& g : p.globals) {
    out += "global " + g.name + "[" + pr.Expr_(g.slots) + "] bytes " + pr.Expr_(g.bytes) + "\n";
  }
  // Each primary grid's roles are one block in the file (the parser's rule), so they print as
  // one `primary` block at their place among the roles; blocks keep their launch order.
  for (size_t i = 0; i < p.roles.size(); ++i) {
    const Role& r = p.roles[i];
    const bool primary = r.grid != 0;
    const std::string pad = primary ? "  " : "";
    if (primary && (i == 0 || p.roles[i - 1].grid != r.grid)) {
      out += "\nprimary clusters " + pr.Expr_(p.primaries[r.grid - 1].clusters) + " {";
    }
    pr.SetRole(&r);
    out += "\n" + pad + "role " + r.name;
    if (r.count != kNoExpr) out += " count " + pr.Expr_(r.count);
    if (r.threads != kNoExpr) out += " threads " + pr.Expr_(r.threads);
    if (r.when != kNoExpr) out += " when " + pr.Expr_(r.when);
    out += " {\n";
    pr.Block_(r.body, primary ? 2 : 1, &out);
    out += pad + "}\n";
    if (primary && (i + 1 == p.roles.size() || p.roles[i + 1].grid != r.grid)) out += "}\n";
  }
  pr.SetRole(nullptr);
  bool first_property = true;
  for (uint32_t i = 0; i < p.assertions.size(); ++i) {
    const Assertion::Kind k = p.assertions[i].kind;
    if (k == Assertion::Kind::kAssert) continue;
    if (first_property) out += "\n";
    first_property = false;
    out += pr.AssertionText(k == Assertion::Kind::kForall ? "forall" : "exists", i) + "\n";
  }
  return out;
}

}  // namespace parity::ir
