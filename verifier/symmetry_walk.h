// The walk of a role's text that both symmetry analyses of `parity explore` read (symmetry.cc:
// agents of a role; cta_symmetry.cc: CTAs of a cluster): every expression operand with how a
// permutation must act on it, every buffer access, and each variable's writes. Internal to
// verifier/symmetry.cc and verifier/cta_symmetry.cc.
#ifndef PARITY_VERIFIER_SYMMETRY_WALK_H_
#define PARITY_VERIFIER_SYMMETRY_WALK_H_

#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "sim/ir/ir.h"

namespace parity::verifier::symmetry_internal {

inline constexpr uint32_t kNoVar = 0xffffffffu;

inline bool IsAgent(const ir::Expr& x) {
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

inline std::string Line(const ir::Program& p, ir::ExprId id) {
  const SourceLocation& w = p.expr(id).where;
  return w.line > 0 ? "line " + std::to_string(w.line) : "an operand without a line";
}

}  // namespace parity::verifier::symmetry_internal

#endif  // PARITY_VERIFIER_SYMMETRY_WALK_H_
