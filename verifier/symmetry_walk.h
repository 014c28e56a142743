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
#include <utility>
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

  // Walks the role's text once, filling the members below.
  void Run();

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
  void Buf(const ir::BufferRef& b, uint32_t top, bool stripe_ok, bool box_bytes);
  void Write(uint32_t var) {
    if (var != kNoVar) writes[var] += 1;
  }
  // The operands, accesses and writes of one operation, of a statement (and its nested ones).
  void Op(const ir::Op& op, uint32_t t);
  void Stmt(const ir::Stmt& st, uint32_t top, bool top_level);

  const ir::Program& p_;
  const ir::Role& role_;
};

// "line N" of an operand, for the reasons a symmetry does not apply.
std::string Line(const ir::Program& p, ir::ExprId id);

}  // namespace parity::verifier::symmetry_internal

#endif  // PARITY_VERIFIER_SYMMETRY_WALK_H_
