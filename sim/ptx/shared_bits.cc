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

}  // namespace parity::ptx
