// The warp-collective instructions the importer's thread execution (thread_exec.cc) computes
// from the lanes' own operand values (issue 35 item 1): shfl.sync, vote.sync, match.sync,
// redux.sync, activemask and elect.sync.
#ifndef PARITY_SIM_PTX_WARP_COLLECTIVES_H_
#define PARITY_SIM_PTX_WARP_COLLECTIVES_H_

#include <cstdint>
#include <functional>
#include <string>

#include "sim/ptx/ptx.h"
#include "sim/ptx/thread_exec.h"

namespace parity::ptx {

// "0x1f".
std::string Hex(uint64_t v);

// An unknown value whose origin (for messages) is `why`.
Value UnknownBecause(std::string why);

// One lane's result of a warp-collective instruction.
struct LaneResult {
  Value d;
  int d_bits = 32;
  Value p;  // the `d|p` predicate
};

// The value of operand `operand` of the pending collective in lane `lane`.
using LaneOperand = std::function<Value(uint32_t lane, size_t operand)>;

// Lane `lane`'s result of `inst` completed by the lanes of `group` (a bit per lane), as the PTX
// ISA defines it from their operands (unknown where an operand is).
LaneResult ResolveCollective(const Instruction& inst, uint32_t group, uint32_t lane,
                             const LaneOperand& operand);

}  // namespace parity::ptx

#endif  // PARITY_SIM_PTX_WARP_COLLECTIVES_H_
