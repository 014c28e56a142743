// Content hash of a schedule: 64-bit FNV-1a over the canonical text (sim/ir/printer.h) with the
// schedule's name left out. Whitespace, comments, redundant parentheses, the file name and the
// `schedule` name do not change it; any op, count, param default, declaration or expression
// does. Used, as herdtools does, so that outcomes of different schedules are never compared and
// as the check word in the GPU encoding's header.
#ifndef PARITY_SIM_IR_HASH_H_
#define PARITY_SIM_IR_HASH_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "sim/ir/ir.h"

namespace parity::ir {

uint64_t ContentHash(const Program& program);

// 16 lower-case hex digits.
std::string ContentHashHex(const Program& program);

// The hash function itself (FNV-1a 64), exposed for tests and other canonical forms.
uint64_t Fnv1a64(std::string_view bytes);

}  // namespace parity::ir

#endif  // PARITY_SIM_IR_HASH_H_
