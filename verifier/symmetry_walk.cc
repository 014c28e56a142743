// The role walk of the symmetry analyses (symmetry_walk.h).
#include "verifier/symmetry_walk.h"

#include <cstdint>
#include <string>
#include <type_traits>
#include <variant>

namespace parity::verifier::symmetry_internal {

void RoleWalk::Run() {
  for (uint32_t i = 0; i < role_.body.size(); ++i) Stmt(role_.body[i], i, /*top_level=*/true);
}

void RoleWalk::Buf(const ir::BufferRef& b, uint32_t top, bool stripe_ok, bool box_bytes) {
  accesses_.push_back({&b, stripe_ok, box_bytes, top});
  const Access* acc = &accesses_.back();
  Expr(b.slot, top);
  Expr(b.offset, top, acc, OperandKind::kOffset);
  Expr(b.bytes, top);
  Rank(b.cta, top);
}

void RoleWalk::Op(const ir::Op& op, uint32_t t) {
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
void RoleWalk::Stmt(const ir::Stmt& st, uint32_t top, bool top_level) {
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

std::string Line(const ir::Program& p, ir::ExprId id) {
  const SourceLocation& w = p.expr(id).where;
  return w.line > 0 ? "line " + std::to_string(w.line) : "an operand without a line";
}

}  // namespace parity::verifier::symmetry_internal
