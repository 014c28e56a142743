// A tiled TMA tensor map (the parameters of cuTensorMapEncodeTiled) and its validation.
//
// Field names and enum values follow the CUDA driver API (cuTensorMapEncodeTiled,
// CUtensorMapDataType, CUtensorMapInterleave, CUtensorMapFloatOOBfill) so that a host runner can
// pass a TensorMap straight to the driver and compare. Dimension 0 is the innermost (contiguous)
// dimension, as in the driver API.
#ifndef PARITY_SIM_MODEL_TENSOR_MAP_H_
#define PARITY_SIM_MODEL_TENSOR_MAP_H_

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>

#include "sim/common/status.h"
#include "sim/model/swizzle.h"

namespace parity::model {

inline constexpr uint32_t kTmaMaxRank = 5;

// Values equal CUtensorMapDataType's. The packed 4/6-bit types of newer drivers are not modelled.
enum class TmaDataType : uint8_t {
  kU8 = 0,
  kU16 = 1,
  kU32 = 2,
  kS32 = 3,
  kU64 = 4,
  kS64 = 5,
  kF16 = 6,
  kF32 = 7,
  kF64 = 8,
  kBF16 = 9,
  kF32Ftz = 10,
  kTF32 = 11,
  kTF32Ftz = 12,
};

// Values equal CUtensorMapInterleave's.
enum class TmaInterleave : uint8_t { kNone = 0, k16B = 1, k32B = 2 };

// Values equal CUtensorMapFloatOOBfill's: NONE fills out-of-bound elements with zeros,
// NAN_REQUEST_ZERO_FMA with a NaN constant (floating-point types only).
enum class TmaOobFill : uint8_t { kZero = 0, kNanRequestZeroFma = 1 };

// Bytes per element: 1, 2, 4 or 8 (tf32 occupies 4 bytes).
uint32_t ElementBytes(TmaDataType t);
// f16, bf16, f32(_ftz), tf32(_ftz), f64.
bool IsFloatType(TmaDataType t);
// "u8", "u16", "u32", "s32", "u64", "s64", "f16", "f32", "f64", "bf16", "f32ftz", "tf32",
// "tf32ftz".
std::string_view DataTypeName(TmaDataType t);
std::optional<TmaDataType> ParseDataType(std::string_view name);

struct TensorMap {
  TmaDataType data_type = TmaDataType::kU8;
  uint32_t rank = 1;  // tensorRank, 1..5
  // globalAddress: only its alignment matters to the model; element addresses are reported
  // relative to it.
  uint64_t global_address = 0;
  // globalDim[i], in elements, i < rank.
  std::array<uint64_t, kTmaMaxRank> global_dim{1, 1, 1, 1, 1};
  // globalStrides[i] = byte stride of dimension i + 1, i < rank - 1 (dimension 0 is contiguous:
  // its stride is the element size). Exactly the driver's rank - 1 entries.
  std::array<uint64_t, kTmaMaxRank - 1> global_strides{};
  // boxDim[i], in elements (before element strides), i < rank.
  std::array<uint32_t, kTmaMaxRank> box_dim{1, 1, 1, 1, 1};
  // elementStrides[i]: traversal step, i < rank. Ignored for dimension 0 without interleave
  // ("TMA doesn't support the stride for dimension zero").
  std::array<uint32_t, kTmaMaxRank> element_strides{1, 1, 1, 1, 1};
  TmaInterleave interleave = TmaInterleave::kNone;
  TmaSwizzle swizzle = TmaSwizzle::kNone;
  TmaOobFill oob_fill = TmaOobFill::kZero;
};

// Checks every cuTensorMapEncodeTiled requirement that the model covers, in this order, and
// returns the first one broken. Rule names (Status::rule()):
//   tensor-map.rank             rank in 1..5
//   tensor-map.global-address   16-byte aligned; 32-byte with INTERLEAVE_32B
//   tensor-map.global-dim       each in 1..2^32
//   tensor-map.global-stride    each a multiple of 16 (32 with INTERLEAVE_32B) and < 2^40
//   tensor-map.box-dim          each in 1..256
//   tensor-map.box-inner-bytes  boxDim[0] * element size a multiple of 16 (no interleave)
//   tensor-map.element-stride   each in 1..8
//   tensor-map.interleave-swizzle  INTERLEAVE_32B requires SWIZZLE_32B
//   tensor-map.swizzle-span     no interleave and a swizzle: boxDim[0] * element size <= span
//   tensor-map.oob-fill         NaN fill only for floating-point types
// The message names the offending value and dimension, e.g.
// "boxDim[1] = 300 is outside 1..256".
Status ValidateTensorMap(const TensorMap& map);

// Number of elements the box holds along `dim`: ceil(boxDim / elementStrides), except dimension
// 0 without interleave, where the stride is ignored (= boxDim[0]). 1 for dim >= rank.
uint32_t BoxElementsAlong(const TensorMap& map, uint32_t dim);
// Traversal step along `dim` in global elements (1 for dimension 0 without interleave).
uint32_t EffectiveElementStride(const TensorMap& map, uint32_t dim);
// Product of BoxElementsAlong over the rank.
uint64_t BoxElementCount(const TensorMap& map);
// BoxElementCount x element size: the bytes a tile load writes to shared memory.
uint64_t BoxBytes(const TensorMap& map);

}  // namespace parity::model

#endif  // PARITY_SIM_MODEL_TENSOR_MAP_H_
