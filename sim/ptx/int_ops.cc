#include "sim/ptx/int_ops.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace parity::ptx {

std::optional<OpType> ParseType(const std::string& m) {
  if (m == "pred") return OpType{1, false, true, false};
  if (m.size() < 2) return std::nullopt;
  const char k = m[0];
  if (k != 'b' && k != 'u' && k != 's' && k != 'f') return std::nullopt;
  int bits = 0;
  for (size_t i = 1; i < m.size(); ++i) {
    if (m[i] < '0' || m[i] > '9') return std::nullopt;
    bits = bits * 10 + (m[i] - '0');
  }
  if (bits != 8 && bits != 16 && bits != 32 && bits != 64) return std::nullopt;
  return OpType{bits, k == 's', false, k == 'f'};
}

std::vector<OpType> Types(const Instruction& inst) {
  std::vector<OpType> out;
  for (const std::string& m : inst.modifiers) {
    if (auto t = ParseType(m)) out.push_back(*t);
  }
  return out;
}

uint64_t Mask(uint64_t v, int bits) { return bits >= 64 ? v : (v & ((uint64_t{1} << bits) - 1)); }

int64_t SignExtend(uint64_t v, int bits) {
  if (bits >= 64) return static_cast<int64_t>(v);
  const uint64_t sign = uint64_t{1} << (bits - 1);
  v = Mask(v, bits);
  return static_cast<int64_t>((v ^ sign) - sign);
}

namespace {

bool Known(const std::vector<Value>& v, size_t n) {
  if (v.size() < n) return false;
  for (size_t i = 0; i < n; ++i) {
    if (v[i].kind != Value::Kind::kInt) return false;
  }
  return true;
}

bool DefaultPrmt(const Instruction& inst) {
  return std::none_of(inst.modifiers.begin(), inst.modifiers.end(), [](const std::string& m) {
    return m == "f4e" || m == "b4e" || m == "rc8" || m == "ecl" || m == "ecr" || m == "rc16";
  });
}

}  // namespace

bool IsIntegerBitOp(const Instruction& inst) {
  const std::string& op = inst.base;
  if (op == "prmt") return DefaultPrmt(inst);
  if (op == "mul" || op == "mad") return inst.HasModifier("hi");
  return op == "bfi" || op == "bfe" || op == "shf" || op == "lop3" || op == "abs" ||
         op == "cnot";
}

IntegerResult EvalIntegerBitOp(const Instruction& inst, const std::vector<Value>& in, int bits,
                               bool is_signed) {
  const std::string& op = inst.base;
  IntegerResult r{Value::Unknown(), bits};
  if (op == "bfi") {
    // PTX ISA 9.7.7.9 bfi f, a, b, pos, len: b with bits [pos, pos + len) replaced by a's low bits.
    if (!Known(in, 4)) return r;
    const uint64_t pos = in[2].bits & 0xff, len = in[3].bits & 0xff;
    uint64_t out = Mask(in[1].bits, bits);
    for (uint64_t i = 0; i < len && pos + i < static_cast<uint64_t>(bits); ++i) {
      const uint64_t bit = uint64_t{1} << (pos + i);
      out = (out & ~bit) | (((in[0].bits >> i) & 1) << (pos + i));
    }
    r.value = Value::Int(out);
  } else if (op == "bfe") {
    // PTX ISA 9.7.7.8 bfe d, a, pos, len: bits [pos, pos + len) of a; .s types extend the sign of
    // the field's top bit (a's msb when the field runs past it).
    if (!Known(in, 3)) return r;
    const uint64_t pos = in[1].bits & 0xff, len = in[2].bits & 0xff;
    const uint64_t a = Mask(in[0].bits, bits);
    bool sbit = false;
    if (is_signed && len > 0) {
      const uint64_t top = std::min<uint64_t>(pos + len - 1, bits - 1);
      sbit = ((a >> top) & 1) != 0;
    }
    uint64_t out = 0;
    for (uint64_t i = 0; i < static_cast<uint64_t>(bits); ++i) {
      const bool b = (i < len && pos + i < static_cast<uint64_t>(bits)) ? ((a >> (pos + i)) & 1) != 0
                                                                        : sbit;
      if (b) out |= uint64_t{1} << i;
    }
    r.value = Value::Int(out);
  } else if (op == "shf") {
    // PTX ISA 9.7.7.7 shf.{l,r}.{wrap,clamp}.b32 d, a, b, c: the funnel shift of b:a by c.
    r.bits = 32;
    if (!Known(in, 3)) return r;
    uint64_t n = in[2].bits & 0xffffffffu;
    n = inst.HasModifier("clamp") ? std::min<uint64_t>(n, 32) : (n & 31);
    const uint64_t x = (Mask(in[1].bits, 32) << 32) | Mask(in[0].bits, 32);
    r.value = Value::Int(inst.HasModifier("l") ? Mask((x << n) >> 32, 32) : Mask(x >> n, 32));
  } else if (op == "prmt") {
    // PTX ISA 9.7.9.7 prmt.b32 d, a, b, c (default mode): byte i of d is the byte of b:a that
    // selector nibble i of c names, or its sign replicated when the nibble's bit 3 is set.
    r.bits = 32;
    if (!Known(in, 3)) return r;
    const uint64_t x = (Mask(in[1].bits, 32) << 32) | Mask(in[0].bits, 32);
    uint64_t out = 0;
    for (int i = 0; i < 4; ++i) {
      const uint64_t sel = (in[2].bits >> (4 * i)) & 0xf;
      uint64_t byte = (x >> (8 * (sel & 7))) & 0xff;
      if (sel & 8) byte = (byte & 0x80) ? 0xff : 0;
      out |= byte << (8 * i);
    }
    r.value = Value::Int(out);
  } else if (op == "lop3") {
    // PTX ISA 9.7.8.6 lop3.b32 d, a, b, c, immLut: bit i of d is bit (a_i b_i c_i) of immLut.
    if (!Known(in, 4)) return r;
    uint64_t out = 0;
    for (int i = 0; i < bits; ++i) {
      const uint64_t idx = (((in[0].bits >> i) & 1) << 2) | (((in[1].bits >> i) & 1) << 1) |
                           ((in[2].bits >> i) & 1);
      out |= ((in[3].bits >> idx) & 1) << i;
    }
    r.value = Value::Int(out);
  } else if (op == "mul" || op == "mad") {
    // PTX ISA 9.7.1.3 mul.hi: the high half of the 2n-bit product (CUTLASS FastDivmodU64 uses
    // the 64-bit one); mad.hi adds c to it.
    if (!Known(in, op == "mad" ? 3 : 2)) return r;
    uint64_t p;
    if (is_signed) {
      const __int128 x = static_cast<__int128>(SignExtend(in[0].bits, bits)) *
                         static_cast<__int128>(SignExtend(in[1].bits, bits));
      p = static_cast<uint64_t>(x >> bits);
    } else {
      const unsigned __int128 x = static_cast<unsigned __int128>(Mask(in[0].bits, bits)) *
                                  static_cast<unsigned __int128>(Mask(in[1].bits, bits));
      p = static_cast<uint64_t>(x >> bits);
    }
    if (op == "mad") p += in[2].bits;
    r.value = Value::Int(Mask(p, bits));
  } else if (op == "abs" || op == "cnot") {
    if (!Known(in, 1)) return r;
    if (op == "cnot") {
      r.value = Value::Int(Mask(in[0].bits, bits) == 0 ? 1 : 0);
    } else {
      const int64_t x = SignExtend(in[0].bits, bits);
      r.value = Value::Int(static_cast<uint64_t>(x < 0 ? -x : x));
    }
  }
  return r;
}

// setp on known floating-point bits (a kernel parameter such as CUTLASS's epilogue beta, whose
// `beta == 0` decides whether the source tensor is read): PTX ISA 9.7.4.1, the ordered
// comparisons are false when either operand is NaN, the unordered ones (..u) true.
bool CompareFloat(const std::string& cmp, uint64_t xa, uint64_t xb, int bits, bool* out) {
  double x, y;
  if (bits == 32) {
    float fx, fy;
    const uint32_t ux = static_cast<uint32_t>(xa), uy = static_cast<uint32_t>(xb);
    std::memcpy(&fx, &ux, 4);
    std::memcpy(&fy, &uy, 4);
    x = fx;
    y = fy;
  } else if (bits == 64) {
    std::memcpy(&x, &xa, 8);
    std::memcpy(&y, &xb, 8);
  } else {
    return false;
  }
  const bool nan = std::isnan(x) || std::isnan(y);
  std::string base = cmp;
  const bool unordered = base.size() == 3 && base.back() == 'u';
  if (unordered) base.pop_back();
  if (base == "num" || base == "nan") {
    *out = base == "nan" ? nan : !nan;
    return true;
  }
  bool r;
  if (base == "eq")
    r = x == y;
  else if (base == "ne")
    r = x != y;
  else if (base == "lt")
    r = x < y;
  else if (base == "le")
    r = x <= y;
  else if (base == "gt")
    r = x > y;
  else if (base == "ge")
    r = x >= y;
  else
    return false;
  *out = nan ? unordered : r;
  return true;
}

}  // namespace parity::ptx
