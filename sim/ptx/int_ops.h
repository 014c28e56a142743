// The integer bit instructions that tile schedulers and fast division compute their indices with
// (CUTLASS FastDivmod's mul.hi, DeepGEMM's swizzled block index's bfi), evaluated on known
// operands for the concrete execution of sim/ptx/thread_exec.
#ifndef PARITY_SIM_PTX_INT_OPS_H_
#define PARITY_SIM_PTX_INT_OPS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sim/ptx/ptx.h"
#include "sim/ptx/thread_exec.h"

namespace parity::ptx {

// The width in bits and signedness of an instruction's operation type (a type modifier).
struct OpType {
  int bits = 64;
  bool is_signed = false;
  bool is_pred = false;
  bool is_float = false;
};

// The type modifier `m` is (pred, b/u/s/f 8-64), or nullopt.
std::optional<OpType> ParseType(const std::string& m);

// The types among an instruction's modifiers, in order (cvt.u32.u16 -> u32, u16).
std::vector<OpType> Types(const Instruction& inst);

// The low `bits` bits of v, and those bits read as a two's-complement number.
uint64_t Mask(uint64_t v, int bits);
int64_t SignExtend(uint64_t v, int bits);

// bfi, bfe, shf, prmt (default mode), lop3, mul.hi / mad.hi, abs, cnot.
bool IsIntegerBitOp(const Instruction& inst);

struct IntegerResult {
  Value value;   // unknown when an operand is
  int bits = 32;  // the destination's width
};

// `in` holds the source operands' values (the operands after the destination); `bits` and
// `is_signed` describe the instruction's operation type.
IntegerResult EvalIntegerBitOp(const Instruction& inst, const std::vector<Value>& in, int bits,
                               bool is_signed);

// setp's comparison `cmp` (eq, ne, lt, le, gt, ge, their unordered ..u forms, num, nan) of two
// known 32- or 64-bit floating-point values given by their bits; false when `cmp` or the width
// is not one of those.
bool CompareFloat(const std::string& cmp, uint64_t xa, uint64_t xb, int bits, bool* out);

}  // namespace parity::ptx

#endif  // PARITY_SIM_PTX_INT_OPS_H_
