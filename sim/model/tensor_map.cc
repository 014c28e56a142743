#include "sim/model/tensor_map.h"

#include <string>

namespace parity::model {
namespace {

constexpr TmaDataType kAllTypes[] = {
    TmaDataType::kU8,  TmaDataType::kU16,  TmaDataType::kU32,    TmaDataType::kS32,
    TmaDataType::kU64, TmaDataType::kS64,  TmaDataType::kF16,    TmaDataType::kF32,
    TmaDataType::kF64, TmaDataType::kBF16, TmaDataType::kF32Ftz, TmaDataType::kTF32,
    TmaDataType::kTF32Ftz,
};

std::string Dim(const char* array, uint32_t i) {
  return std::string(array) + "[" + std::to_string(i) + "]";
}

}  // namespace

uint32_t ElementBytes(TmaDataType t) {
  switch (t) {
    case TmaDataType::kU8:
      return 1;
    case TmaDataType::kU16:
    case TmaDataType::kF16:
    case TmaDataType::kBF16:
      return 2;
    case TmaDataType::kU32:
    case TmaDataType::kS32:
    case TmaDataType::kF32:
    case TmaDataType::kF32Ftz:
    case TmaDataType::kTF32:
    case TmaDataType::kTF32Ftz:
      return 4;
    case TmaDataType::kU64:
    case TmaDataType::kS64:
    case TmaDataType::kF64:
      return 8;
  }
  PARITY_CHECK(false, "unknown TmaDataType");
  return 0;
}

bool IsFloatType(TmaDataType t) {
  switch (t) {
    case TmaDataType::kF16:
    case TmaDataType::kBF16:
    case TmaDataType::kF32:
    case TmaDataType::kF32Ftz:
    case TmaDataType::kTF32:
    case TmaDataType::kTF32Ftz:
    case TmaDataType::kF64:
      return true;
    default:
      return false;
  }
}

std::string_view DataTypeName(TmaDataType t) {
  switch (t) {
    case TmaDataType::kU8:
      return "u8";
    case TmaDataType::kU16:
      return "u16";
    case TmaDataType::kU32:
      return "u32";
    case TmaDataType::kS32:
      return "s32";
    case TmaDataType::kU64:
      return "u64";
    case TmaDataType::kS64:
      return "s64";
    case TmaDataType::kF16:
      return "f16";
    case TmaDataType::kF32:
      return "f32";
    case TmaDataType::kF64:
      return "f64";
    case TmaDataType::kBF16:
      return "bf16";
    case TmaDataType::kF32Ftz:
      return "f32ftz";
    case TmaDataType::kTF32:
      return "tf32";
    case TmaDataType::kTF32Ftz:
      return "tf32ftz";
  }
  return "?";
}

std::optional<TmaDataType> ParseDataType(std::string_view name) {
  for (TmaDataType t : kAllTypes) {
    if (name == DataTypeName(t)) return t;
  }
  return std::nullopt;
}

// Each check below is one requirement of cuTensorMapEncodeTiled (CUDA driver API, "Tensor Map
// Object Management"); the driver answers CUDA_ERROR_INVALID_VALUE when any is broken.
Status ValidateTensorMap(const TensorMap& map) {
  const uint32_t esize = ElementBytes(map.data_type);
  const bool interleaved = map.interleave != TmaInterleave::kNone;

  // "tensorRank ... must be non-zero and less than or equal to the maximum supported
  // dimensionality of 5. If interleave is not NONE, tensorRank must additionally be >= 3."
  if (map.rank < 1 || map.rank > kTmaMaxRank) {
    return Status("tensor-map.rank", "tensorRank = " + std::to_string(map.rank) +
                                         " is outside 1..5");
  }
  if (interleaved && map.rank < 3) {
    return Status("tensor-map.rank", "tensorRank = " + std::to_string(map.rank) +
                                         " must be >= 3 with an interleaved layout");
  }

  // "globalAddress ... must be 16 byte aligned ... 32 byte aligned when interleave is 32B."
  const uint64_t addr_align = map.interleave == TmaInterleave::k32B ? 32 : 16;
  if (map.global_address % addr_align != 0) {
    return Status("tensor-map.global-address",
                  "globalAddress = " + std::to_string(map.global_address) + " is not " +
                      std::to_string(addr_align) + "-byte aligned");
  }

  // "globalDim ... must be non-zero and less than or equal to 2^32."
  for (uint32_t i = 0; i < map.rank; ++i) {
    if (map.global_dim[i] == 0 || map.global_dim[i] > (uint64_t{1} << 32)) {
      return Status("tensor-map.global-dim", Dim("globalDim", i) + " = " +
                                                 std::to_string(map.global_dim[i]) +
                                                 " is outside 1..2^32");
    }
  }

  // "globalStrides ... must be a multiple of 16 and less than 2^40 ... a multiple of 32 when
  // interleave is 32B."
  const uint64_t stride_align = map.interleave == TmaInterleave::k32B ? 32 : 16;
  for (uint32_t i = 0; i + 1 < map.rank; ++i) {
    const uint64_t s = map.global_strides[i];
    if (s % stride_align != 0) {
      return Status("tensor-map.global-stride",
                    Dim("globalStrides", i) + " = " + std::to_string(s) +
                        " is not a multiple of " + std::to_string(stride_align));
    }
    if (s >= (uint64_t{1} << 40)) {
      return Status("tensor-map.global-stride",
                    Dim("globalStrides", i) + " = " + std::to_string(s) + " is not below 2^40");
    }
  }

  // "boxDim ... must be non-zero and less than or equal to 256."
  for (uint32_t i = 0; i < map.rank; ++i) {
    if (map.box_dim[i] == 0 || map.box_dim[i] > 256) {
      return Status("tensor-map.box-dim", Dim("boxDim", i) + " = " +
                                              std::to_string(map.box_dim[i]) +
                                              " is outside 1..256");
    }
  }
  // "When interleave is NONE, boxDim[0] * elementSizeInBytes must be a multiple of 16 bytes."
  const uint64_t inner_bytes = uint64_t{map.box_dim[0]} * esize;
  if (!interleaved && inner_bytes % 16 != 0) {
    return Status("tensor-map.box-inner-bytes",
                  "boxDim[0] = " + std::to_string(map.box_dim[0]) + " x " +
                      std::to_string(esize) + " bytes = " + std::to_string(inner_bytes) +
                      " bytes is not a multiple of 16");
  }

  // "elementStrides ... must be non-zero and less than or equal to 8."
  for (uint32_t i = 0; i < map.rank; ++i) {
    if (map.element_strides[i] == 0 || map.element_strides[i] > 8) {
      return Status("tensor-map.element-stride",
                    Dim("elementStrides", i) + " = " + std::to_string(map.element_strides[i]) +
                        " is outside 1..8");
    }
  }

  // "When interleave is CU_TENSOR_MAP_INTERLEAVE_32B, swizzle must be CU_TENSOR_MAP_SWIZZLE_32B."
  if (map.interleave == TmaInterleave::k32B && map.swizzle != TmaSwizzle::k32B) {
    return Status("tensor-map.interleave-swizzle",
                  "interleave 32B requires swizzle 32B, got swizzle " +
                      std::string(SwizzleName(map.swizzle)));
  }
  // "When interleave is NONE and swizzle is not NONE, the bounding box inner dimension must be
  // less than or equal to the swizzle size."
  if (!interleaved && map.swizzle != TmaSwizzle::kNone &&
      inner_bytes > SwizzleSpanBytes(map.swizzle)) {
    return Status("tensor-map.swizzle-span",
                  "boxDim[0] = " + std::to_string(map.box_dim[0]) + " x " +
                      std::to_string(esize) + " bytes = " + std::to_string(inner_bytes) +
                      " bytes exceeds the " + std::string(SwizzleName(map.swizzle)) +
                      " swizzle span");
  }

  // "CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA can only be used when tensorDataType
  // represents a floating-point data type."
  if (map.oob_fill == TmaOobFill::kNanRequestZeroFma && !IsFloatType(map.data_type)) {
    return Status("tensor-map.oob-fill", "NaN OOB fill needs a floating-point type, got " +
                                             std::string(DataTypeName(map.data_type)));
  }
  return Status::Ok();
}

uint32_t EffectiveElementStride(const TensorMap& map, uint32_t dim) {
  if (dim >= map.rank) return 1;
  // "when interleave is NONE, the first element of this array is ignored since TMA doesn't
  // support the stride for dimension zero."
  if (dim == 0 && map.interleave == TmaInterleave::kNone) return 1;
  return map.element_strides[dim];
}

uint32_t BoxElementsAlong(const TensorMap& map, uint32_t dim) {
  if (dim >= map.rank) return 1;
  // "TMA loads ceil(boxDim[i] / elementStrides[i]) number of elements along i-th dimension."
  const uint32_t stride = EffectiveElementStride(map, dim);
  return (map.box_dim[dim] + stride - 1) / stride;
}

uint64_t BoxElementCount(const TensorMap& map) {
  uint64_t n = 1;
  for (uint32_t i = 0; i < map.rank; ++i) n *= BoxElementsAlong(map, i);
  return n;
}

uint64_t BoxBytes(const TensorMap& map) { return BoxElementCount(map) * ElementBytes(map.data_type); }

}  // namespace parity::model
