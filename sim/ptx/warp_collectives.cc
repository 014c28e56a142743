#include "sim/ptx/warp_collectives.h"

#include <bit>
#include <optional>
#include <utility>
#include <vector>

#include "sim/ptx/int_ops.h"

namespace parity::ptx {
namespace {

// A lane's predicate operand (`{!}a` of vote.sync), or nullopt when unknown.
std::optional<bool> Pred(const LaneOperand& operand, uint32_t lane, const Instruction& inst) {
  const Value v = operand(lane, 1);
  if (v.kind != Value::Kind::kInt) return std::nullopt;
  return (v.bits != 0) != (inst.operands.size() > 1 && inst.operands[1].negated);
}

}  // namespace

std::string Hex(uint64_t v) {
  static const char* const kDigits = "0123456789abcdef";
  std::string out;
  do {
    out.insert(out.begin(), kDigits[v & 15]);
    v >>= 4;
  } while (v != 0);
  return "0x" + out;
}

Value UnknownBecause(std::string why) {
  Value v = Value::Unknown();
  v.symbol = std::move(why);
  return v;
}

LaneResult ResolveCollective(const Instruction& inst, uint32_t group, uint32_t lane,
                             const LaneOperand& operand) {
  const std::string& op = inst.base;
  const std::vector<OpType> types = Types(inst);
  const int bits = types.empty() ? 32 : types.back().bits;
  LaneResult r;
  const Value unknown =
      UnknownBecause("`" + inst.opcode + "` at PTX line " + std::to_string(inst.line) +
                     " of lanes whose operands the importer does not know");
  if (op == "activemask") {
    r.d = Value::Int(group);
  } else if (op == "elect") {
    // The leader is the lowest non-exited lane of the member mask (PTX ISA 9.7.13.x elect.sync).
    const uint32_t leader = static_cast<uint32_t>(std::countr_zero(group));
    r.d = Value::Int(leader);
    r.p = Value::Int(lane == leader ? 1 : 0);
  } else if (op == "shfl") {
    // PTX ISA 9.7.8.6 shfl.sync: c packs the clamp value (bits 0-4) and the segment mask (bits
    // 8-12); a source lane outside [minLane, maxLane] reads the lane's own value.
    const Value b = operand(lane, 2), c = operand(lane, 3);
    if (b.kind != Value::Kind::kInt || c.kind != Value::Kind::kInt) {
      r.d = r.p = b.kind != Value::Kind::kInt ? b : c;
      return r;
    }
    const int l = static_cast<int>(lane);
    const int bval = static_cast<int>(b.bits & 31), cval = static_cast<int>(c.bits & 31);
    const int seg = static_cast<int>((c.bits >> 8) & 31);
    const int max_lane = (l & seg) | (cval & ~seg);
    const int min_lane = l & seg;
    int j = l;
    bool pval = false;
    if (inst.HasModifier("up")) {
      j = l - bval;
      pval = j >= max_lane;
    } else if (inst.HasModifier("down")) {
      j = l + bval;
      pval = j <= max_lane;
    } else if (inst.HasModifier("bfly")) {
      j = l ^ bval;
      pval = j <= max_lane;
    } else {
      j = min_lane | (bval & ~seg);
      pval = j <= max_lane;
    }
    if (!pval) j = l;
    r.p = Value::Int(pval ? 1 : 0);
    if (j < 0 || j >= 32 || (group >> j & 1) == 0) {
      r.d = UnknownBecause("`" + inst.opcode + "` at PTX line " + std::to_string(inst.line) +
                           " reading lane " + std::to_string(j) +
                           ", which is outside the member mask or has exited (PTX leaves the "
                           "value undefined)");
    } else {
      r.d = operand(j, 1);
    }
  } else if (op == "vote") {
    bool any_unknown = false, any_true = false, any_false = false;
    uint32_t ballot = 0;
    for (uint32_t j = 0; j < 32; ++j) {
      if ((group >> j & 1) == 0) continue;
      const std::optional<bool> v = Pred(operand, j, inst);
      any_unknown |= !v.has_value();
      any_true |= v.value_or(false);
      any_false |= v.has_value() && !*v;
      if (v.value_or(false)) ballot |= 1u << j;
    }
    r.d_bits = 1;
    if (inst.HasModifier("ballot")) {
      r.d_bits = 32;
      r.d = any_unknown ? unknown : Value::Int(ballot);
    } else if (inst.HasModifier("all")) {
      r.d = any_false ? Value::Int(0) : any_unknown ? unknown : Value::Int(1);
    } else if (inst.HasModifier("any")) {
      r.d = any_true ? Value::Int(1) : any_unknown ? unknown : Value::Int(0);
    } else {  // uni
      r.d = any_unknown ? unknown : Value::Int(any_true && any_false ? 0 : 1);
    }
  } else if (op == "match") {
    // match.sync.any: the lanes holding the lane's value; .all: the mask when every lane holds
    // the same value (and p says whether they do).
    std::vector<std::pair<uint32_t, Value>> vals;
    for (uint32_t j = 0; j < 32; ++j) {
      if ((group >> j & 1) == 0) continue;
      Value v = operand(j, 1);
      if (v.kind == Value::Kind::kInt) v.bits = Mask(v.bits, bits);
      if (v.kind != Value::Kind::kInt && v.kind != Value::Kind::kAddress) {
        r.d = r.p = unknown;
        return r;
      }
      vals.emplace_back(j, v);
    }
    const size_t at = static_cast<size_t>(std::popcount(group & ((1u << lane) - 1)));
    const Value mine = vals[at].second;
    uint32_t same = 0;
    bool all = true;
    for (const auto& [j, v] : vals) {
      if (v == mine) same |= 1u << j;
      all &= v == vals.front().second;
    }
    if (inst.HasModifier("all")) {
      r.d = Value::Int(all ? group : 0);
      r.p = Value::Int(all ? 1 : 0);
    } else {
      r.d = Value::Int(same);
    }
  } else if (op == "redux") {
    const bool is_signed = !types.empty() && types.back().is_signed;
    std::optional<uint64_t> acc;
    for (uint32_t j = 0; j < 32; ++j) {
      if ((group >> j & 1) == 0) continue;
      const Value v = operand(j, 1);
      if (v.kind != Value::Kind::kInt || types.empty() || types.back().is_float) {
        r.d = unknown;
        return r;
      }
      const uint64_t x = Mask(v.bits, 32);
      if (!acc) {
        acc = x;
      } else if (inst.HasModifier("add")) {
        acc = Mask(*acc + x, 32);
      } else if (inst.HasModifier("and")) {
        *acc &= x;
      } else if (inst.HasModifier("or")) {
        *acc |= x;
      } else if (inst.HasModifier("xor")) {
        *acc ^= x;
      } else if (inst.HasModifier("min") || inst.HasModifier("max")) {
        const bool lt = is_signed ? SignExtend(x, 32) < SignExtend(*acc, 32) : x < *acc;
        if (lt == inst.HasModifier("min") && x != *acc) acc = x;
      } else {
        r.d = unknown;
        return r;
      }
    }
    r.d = acc ? Value::Int(*acc) : unknown;
  }
  return r;
}

}  // namespace parity::ptx
