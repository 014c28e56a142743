// Branches on data the importer does not know, around code that only computes (issue 35 item 3:
// "per-thread arithmetic between protocol operations creates no states"). FA3's softmax
// finalisation (`inv_sum = sum == 0 || sum != sum ? 1 : 1 / sum`, hopper/softmax.h) compiles to
// `@%p bra` on a float compare around an `rcp`: the branch depends on loaded data, but both of
// its paths reach the same instruction having issued nothing the schedule sees.
#ifndef PARITY_SIM_PTX_DATA_BRANCH_H_
#define PARITY_SIM_PTX_DATA_BRANCH_H_

#include "sim/ptx/ptx.h"

namespace parity::ptx {

// For the conditional branch at `branch` (an instruction index of `f`; -1 for any other
// instruction): the index of the
// instruction where its two paths join, when the code between them is a forward region that
// only computes registers, else -1. The region is [branch + 1, join): every branch in it
// (and the branch itself) goes forward to at most `join`, and every instruction in it is
// register arithmetic, a move, a compare or select, or a read of the parameter or constant
// space: no memory access the schedule records or orders, no protocol or warp-collective
// instruction, no call, return or exit. Taking either path then differs only in the registers
// the region writes, which the caller makes unknown.
int DataOnlyJoin(const Function& f, int branch);

}  // namespace parity::ptx

#endif  // PARITY_SIM_PTX_DATA_BRANCH_H_
