// The arithmetic of the expression language, defined once for every evaluator: the tree walker
// (sim/ir/eval.h, which also binds params), the engine's inline fast path (sim/engine/exec.h)
// and the encoded-expression interpreter of the GPU executor and the host resolution
// (sim/ir/exec.h). int64_t with C semantics for / and % (truncation toward zero); everything
// that would be undefined behaviour in C++ is an EvalError instead: division or modulo by zero,
// INT64_MIN / -1, shift counts outside 0..63, and signed overflow of + - * << and unary minus.
//
// Host-device (sim/common/host_device.h): only <cstdint>, no compiler builtins on the device.
// The host takes the compiler's overflow builtins (one flag test each, the engine's hot path);
// the device the portable forms below, which tests/sim/ir/exec_test checks against the builtins.
#ifndef PARITY_SIM_IR_ARITH_H_
#define PARITY_SIM_IR_ARITH_H_

#include <cstdint>

#include "sim/common/host_device.h"
#include "sim/ir/ops.h"

namespace parity::ir {

// ---------------------------------------------------------------------------------------------
// Portable overflow checks (true: the exact result does not fit; *r is the wrapped result).

PARITY_HD inline bool AddOverflows(int64_t a, int64_t b, int64_t* r) {
  const int64_t s = static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
  *r = s;
  return ((a ^ s) & (b ^ s)) < 0;  // both operands' signs differ from the result's
}

PARITY_HD inline bool SubOverflows(int64_t a, int64_t b, int64_t* r) {
  const int64_t d = static_cast<int64_t>(static_cast<uint64_t>(a) - static_cast<uint64_t>(b));
  *r = d;
  return ((a ^ b) & (a ^ d)) < 0;  // operands of different signs, result's sign not a's
}

// The high 64 bits of the 128-bit product of a and b.
PARITY_HD inline uint64_t MulHi64(uint64_t a, uint64_t b) {
  const uint64_t a0 = a & 0xffffffffu, a1 = a >> 32, b0 = b & 0xffffffffu, b1 = b >> 32;
  const uint64_t p00 = a0 * b0, p01 = a0 * b1, p10 = a1 * b0, p11 = a1 * b1;
  const uint64_t mid = (p00 >> 32) + (p01 & 0xffffffffu) + (p10 & 0xffffffffu);
  return p11 + (p01 >> 32) + (p10 >> 32) + (mid >> 32);
}

PARITY_HD inline bool MulOverflows(int64_t a, int64_t b, int64_t* r) {
  const bool negative = (a < 0) != (b < 0);
  const uint64_t ua = a < 0 ? 0 - static_cast<uint64_t>(a) : static_cast<uint64_t>(a);
  const uint64_t ub = b < 0 ? 0 - static_cast<uint64_t>(b) : static_cast<uint64_t>(b);
  const uint64_t lo = ua * ub;
  *r = static_cast<int64_t>(negative ? 0 - lo : lo);
  if (MulHi64(ua, ub) != 0) return true;
  const uint64_t limit = (uint64_t{1} << 63) - (negative ? 0 : 1);  // |INT64_MIN|, INT64_MAX
  return lo > limit;
}

// The checks every evaluator uses: the builtins on the host, the portable forms on the device.
#if defined(__CUDA_ARCH__)
PARITY_HD inline bool CheckedAdd(int64_t a, int64_t b, int64_t* r) { return AddOverflows(a, b, r); }
PARITY_HD inline bool CheckedSub(int64_t a, int64_t b, int64_t* r) { return SubOverflows(a, b, r); }
PARITY_HD inline bool CheckedMul(int64_t a, int64_t b, int64_t* r) { return MulOverflows(a, b, r); }
#else
inline bool CheckedAdd(int64_t a, int64_t b, int64_t* r) { return __builtin_add_overflow(a, b, r); }
inline bool CheckedSub(int64_t a, int64_t b, int64_t* r) { return __builtin_sub_overflow(a, b, r); }
inline bool CheckedMul(int64_t a, int64_t b, int64_t* r) { return __builtin_mul_overflow(a, b, r); }
#endif

// ---------------------------------------------------------------------------------------------
// The operators.

// op x into *r, or the error (*r then unspecified).
PARITY_HD inline EvalError ApplyUnary(UnaryOp op, int64_t x, int64_t* r) {
  switch (op) {
    case UnaryOp::kNeg:
      if (x == INT64_MIN) return EvalError::kOverflow;
      *r = -x;
      return EvalError::kNone;
    case UnaryOp::kNot: *r = x == 0 ? 1 : 0; return EvalError::kNone;
    case UnaryOp::kBitNot: *r = ~x; return EvalError::kNone;
  }
  return EvalError::kBadOp;
}

// x op y into *r, or the error (*r then unspecified). && and || are given their right operand's
// truth (the callers short-circuit: the left operand has decided nothing when y is evaluated).
PARITY_HD inline EvalError ApplyBinary(BinaryOp op, int64_t x, int64_t y, int64_t* r) {
  switch (op) {
    case BinaryOp::kAdd: return CheckedAdd(x, y, r) ? EvalError::kOverflow : EvalError::kNone;
    case BinaryOp::kSub: return CheckedSub(x, y, r) ? EvalError::kOverflow : EvalError::kNone;
    case BinaryOp::kMul: return CheckedMul(x, y, r) ? EvalError::kOverflow : EvalError::kNone;
    case BinaryOp::kDiv:
    case BinaryOp::kMod:
      if (y == 0) return EvalError::kDivByZero;
      if (x == INT64_MIN && y == -1) return EvalError::kOverflow;
      *r = op == BinaryOp::kDiv ? x / y : x % y;
      return EvalError::kNone;
    case BinaryOp::kShl:
      if (y < 0 || y > 63) return EvalError::kShiftRange;
      // Shift as unsigned: C++20 defines signed << as modulo 2^64, but an overflowing shift of
      // a schedule constant is almost surely a mistake: an error.
      if (y > 0 && (x > (INT64_MAX >> y) || x < (INT64_MIN >> y))) return EvalError::kOverflow;
      *r = static_cast<int64_t>(static_cast<uint64_t>(x) << y);
      return EvalError::kNone;
    case BinaryOp::kShr:
      if (y < 0 || y > 63) return EvalError::kShiftRange;
      *r = x >> y;  // arithmetic shift (defined in C++20)
      return EvalError::kNone;
    case BinaryOp::kBitAnd: *r = x & y; return EvalError::kNone;
    case BinaryOp::kBitOr: *r = x | y; return EvalError::kNone;
    case BinaryOp::kBitXor: *r = x ^ y; return EvalError::kNone;
    case BinaryOp::kEq: *r = x == y; return EvalError::kNone;
    case BinaryOp::kNe: *r = x != y; return EvalError::kNone;
    case BinaryOp::kLt: *r = x < y; return EvalError::kNone;
    case BinaryOp::kLe: *r = x <= y; return EvalError::kNone;
    case BinaryOp::kGt: *r = x > y; return EvalError::kNone;
    case BinaryOp::kGe: *r = x >= y; return EvalError::kNone;
    case BinaryOp::kAnd:
    case BinaryOp::kOr: *r = y != 0; return EvalError::kNone;
    case BinaryOp::kMin: *r = x < y ? x : y; return EvalError::kNone;
    case BinaryOp::kMax: *r = x > y ? x : y; return EvalError::kNone;
  }
  return EvalError::kBadOp;
}

}  // namespace parity::ir

#endif  // PARITY_SIM_IR_ARITH_H_
