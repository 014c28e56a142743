// Bit operations on a shared-memory address below the alignment of its segment's base: CuTe's
// swizzled smem tensors (`((a & 896) >> 3) ^ a` for Swizzle<3,4,3>, FA3's epilogue `stmatrix`
// addresses) and its alignment check `(address & mask) == 0` (cute/pointer_flagged.hpp,
// as_position_independent_swizzle_tensor) compute on the address's low bits, which are the
// offset's when the base is aligned.
#ifndef PARITY_SIM_PTX_SHARED_BITS_H_
#define PARITY_SIM_PTX_SHARED_BITS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sim/ptx/ptx.h"
#include "sim/ptx/thread_exec.h"

namespace parity::ptx {

// The alignment the base of shared variable `symbol` has: its declared `.align`; at least 1024
// for the extern dynamic segment, which the swizzled kernels assert (CuTe asserts the address
// of a Swizzle<3,4,3> tensor is 1024-aligned, and every 128B-swizzled TMA tile of CUTLASS,
// DeepGEMM and FA3 is placed at a 1024-byte multiple of it). 0 when `symbol` is not one.
uint64_t SharedBaseAlignment(const Module& m, const Function& f, const std::string& symbol);

// `op` (and, or, xor; `bits` wide) of a shared address (a kAddress of a variable of `m` / `f`
// whose base is aligned to `align`, SharedBaseAlignment) and an integer, in either order, when
// only bits below `align` are involved: and with a mask below it (the offset's low bits, an
// integer), and with a mask that clears only bits below it, or or/xor with such a constant (the
// address moved within its aligned block). nullopt otherwise.
std::optional<Value> AddressLowBits(const Module& m, const Function& f, const std::string& op,
                                    const Value& a, const Value& b, int bits);

// The halves of `v` (`bits` wide) that `mov.b64 {%lo, %hi}, %rd` writes, `parts` of them: an
// integer's bits; a shared address's or descriptor's low half keeps its origin and shift (a wgmma
// descriptor's start-address field is bits 0-13 of the low half, and CuTe's DescriptorIterator
// moves a descriptor to the next k-block or stage by adding to that half alone,
// cute/atom/mma_traits_sm90_gmma.hpp:327 `reg32_[0] + offset`), so that the descriptor packed
// again names the bytes it reads; every other half is unknown.
std::vector<Value> SplitHalves(const Value& v, size_t parts, int bits);

}  // namespace parity::ptx

#endif  // PARITY_SIM_PTX_SHARED_BITS_H_
