#include "sim/ptx/shared_bits.h"

#include <algorithm>

namespace parity::ptx {

uint64_t SharedBaseAlignment(const Module& m, const Function& f, const std::string& symbol) {
  auto of = [&](const Variable& v) -> uint64_t {
    const uint64_t declared = v.align > 0 ? static_cast<uint64_t>(v.align) : 1;
    return v.is_extern ? std::max<uint64_t>(declared, 1024) : declared;
  };
  for (const Variable& v : f.variables) {
    if (v.name == symbol && v.space == "shared") return of(v);
  }
  for (const Variable& v : m.globals) {
    if (v.name == symbol && v.space == "shared") return of(v);
  }
  return 0;
}

std::optional<Value> AddressLowBits(const Module& m, const Function& f, const std::string& op,
                                    const Value& x, const Value& y, int bits) {
  const bool x_addr = x.kind == Value::Kind::kAddress;
  const Value& a = x_addr ? x : y;
  const Value& b = x_addr ? y : x;
  if (a.kind != Value::Kind::kAddress || b.kind != Value::Kind::kInt) return std::nullopt;
  const uint64_t align = SharedBaseAlignment(m, f, a.symbol);
  if (align < 2) return std::nullopt;
  const uint64_t width = bits >= 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1;
  const uint64_t k = b.bits & width;
  if (op == "and" && k < align) return Value::Int(a.bits & k);
  if (op == "and" && (~k & width) < align) return Value::Address(a.symbol, a.bits & k);
  if ((op == "or" || op == "xor") && k < align) {
    return Value::Address(a.symbol, op == "or" ? (a.bits | k) : (a.bits ^ k));
  }
  return std::nullopt;
}

std::vector<Value> SplitHalves(const Value& v, size_t parts, int bits) {
  std::vector<Value> out(parts, Value::Unknown());
  const int w = parts == 0 ? 0 : bits / static_cast<int>(parts);
  if (w <= 0 || w >= 64) return out;
  for (size_t k = 0; k < parts; ++k) {
    if (v.kind == Value::Kind::kInt) {
      out[k] = Value::Int((v.bits >> (k * static_cast<size_t>(w))) & ((uint64_t{1} << w) - 1));
    } else if (k == 0 && (v.kind == Value::Kind::kAddress || v.kind == Value::Kind::kDerived)) {
      const int shift = v.kind == Value::Kind::kAddress ? 0 : v.shift;
      if (shift >= 0) out[k] = Value::Derived(v.symbol, v.bits, shift);
    }
  }
  return out;
}

}  // namespace parity::ptx
