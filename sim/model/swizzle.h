// The TMA shared-memory swizzle as a pure function on shared-memory byte addresses.
//
// CUtensorMapSwizzle (CUDA driver API, cuTensorMapEncodeTiled) names three patterns that
// "swizzle 16B chunks within a 32B/64B/128B span". In CuTe terms they are Swizzle<B,4,3> with
// B = 1, 2, 3 (cute/swizzle.hpp; SW32/SW64/SW128 atoms in cute/atom/mma_traits_sm90_gmma.hpp):
// keep the 16-byte chunk granule (4 low bits), and XOR the B bits just above it with the B bits
// three positions higher (CuTe maps Swizzle<B,4,3> to TMA B128/B64/B32 in
// cute/atom/copy_traits_sm90_tma_swizzle.hpp, get_tma_swizzle_bits). In bytes:
//
//   address bit:   9   8   7   6   5   4   3 2 1 0
//                 [ row % 8   ][ chunk     ][byte ]
//   128B:          y2  y1  y0  x2  x1  x0           x2..x0 ^= y2..y0   (bits [6:4] ^= [9:7])
//    64B:              y1  y0      x1  x0           x1..x0 ^= y1..y0   (bits [5:4] ^= [8:7])
//    32B:                  y0          x0           x0     ^= y0       (bit  4     ^= bit 7)
//
// Bits 7.. of a byte address count 128-byte "rows" of shared memory, bits [6:4] the 16-byte chunk
// within the row. The pattern therefore repeats every 1024 / 512 / 256 bytes.
//
// The function is applied to the ABSOLUTE shared-memory address (the CTA's shared window
// offset, as used by cp.async.bulk.tensor's dstMem), not to the offset within the box: a TMA
// destination that is 128-byte aligned (the PTX requirement for tensor copies, checked by
// ValidateTmaSharedAddress) but not aligned to the repeat (1024/512/256) sees the pattern shifted
// by (address / 128) % 8 rows. CUTLASS therefore aligns swizzled stages to the repeat.
// Measured on H100: traces/tma_sweep/README.md finding 2 (absolute-address swizzle at every
// 128-byte base_off 128..896).
#ifndef PARITY_SIM_MODEL_SWIZZLE_H_
#define PARITY_SIM_MODEL_SWIZZLE_H_

#include <cstdint>
#include <optional>
#include <string_view>

namespace parity::model {

// Values equal CUtensorMapSwizzle's (CU_TENSOR_MAP_SWIZZLE_NONE = 0, _32B, _64B, _128B). The
// 128B_ATOM_* modes of newer drivers are not modelled (not on sm_90).
enum class TmaSwizzle : uint8_t { kNone = 0, k32B = 1, k64B = 2, k128B = 3 };

// Shared-memory destination/source of a tensor copy must be 128-byte aligned (CUDA C++
// Programming Guide, TMA alignment requirements table; semantics.md). Not re-read in the primary
// text for this change: OPEN(litmus) whether a 16-aligned base faults or is silently rounded.
inline constexpr uint32_t kTmaSharedAlignment = 128;

// B of Swizzle<B,4,3>: number of XORed bits (0 for none).
constexpr uint32_t SwizzleBits(TmaSwizzle s) { return static_cast<uint32_t>(s); }

// The span named by the mode: 32/64/128 bytes; 0 for kNone.
constexpr uint32_t SwizzleSpanBytes(TmaSwizzle s) {
  return s == TmaSwizzle::kNone ? 0u : (16u << SwizzleBits(s));
}

// Period of the pattern in shared memory: 256/512/1024 bytes (8 x the span); 1 for kNone.
constexpr uint32_t SwizzleRepeatBytes(TmaSwizzle s) {
  return s == TmaSwizzle::kNone ? 1u : (128u << SwizzleBits(s));
}

// The swizzled shared-memory byte address of logical address `addr`. An involution (applying
// it twice gives `addr`) that moves whole 16-byte chunks and never leaves the aligned
// SwizzleRepeatBytes block that contains `addr`.
constexpr uint32_t SwizzleSharedAddress(uint32_t addr, TmaSwizzle s) {
  const uint32_t b = SwizzleBits(s);
  const uint32_t mask = ((1u << b) - 1u) << 4;  // the chunk bits that get flipped
  return addr ^ ((addr >> 3) & mask);           // bits [6+b..7] moved down to [3+b..4]
}

std::string_view SwizzleName(TmaSwizzle s);                     // "none", "32B", "64B", "128B"
std::optional<TmaSwizzle> ParseSwizzle(std::string_view name);  // inverse of SwizzleName

// Static checks of the definitions against the bit diagram above.
static_assert(SwizzleSpanBytes(TmaSwizzle::k32B) == 32 && SwizzleSpanBytes(TmaSwizzle::k64B) == 64 &&
              SwizzleSpanBytes(TmaSwizzle::k128B) == 128);
static_assert(SwizzleRepeatBytes(TmaSwizzle::k32B) == 256 &&
              SwizzleRepeatBytes(TmaSwizzle::k64B) == 512 &&
              SwizzleRepeatBytes(TmaSwizzle::k128B) == 1024);
static_assert(SwizzleSharedAddress(0x3FF, TmaSwizzle::kNone) == 0x3FF);
// 128B: row 1 (bit 7) flips chunk bit 4; row 7 flips chunks bits 6..4; bytes 0..3 untouched.
static_assert(SwizzleSharedAddress(0x080, TmaSwizzle::k128B) == 0x090);
static_assert(SwizzleSharedAddress(0x385, TmaSwizzle::k128B) == 0x3F5);
static_assert(SwizzleSharedAddress(0x400, TmaSwizzle::k128B) == 0x400);  // repeats at 1024
// 64B: only bits 8:7 -> 5:4; bit 9 is not a source.
static_assert(SwizzleSharedAddress(0x180, TmaSwizzle::k64B) == 0x1B0);
static_assert(SwizzleSharedAddress(0x200, TmaSwizzle::k64B) == 0x200);
// 32B: bit 7 -> bit 4 only.
static_assert(SwizzleSharedAddress(0x080, TmaSwizzle::k32B) == 0x090);
static_assert(SwizzleSharedAddress(0x100, TmaSwizzle::k32B) == 0x100);
static_assert(SwizzleSharedAddress(SwizzleSharedAddress(0x2D7, TmaSwizzle::k128B), TmaSwizzle::k128B) ==
              0x2D7);

}  // namespace parity::model

#endif  // PARITY_SIM_MODEL_SWIZZLE_H_
