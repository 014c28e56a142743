// Host-side dump of a kernel's parameter bytes, as its own host code builds them, without a GPU:
// cuTensorMapEncodeTiled is replaced by a stub that records the call's arguments and marks the
// 128-byte map it fills, so that each map is found by offset in the bytes. The output is what
// `parity import` needs: one `word OFFSET VALUE` line per 4-byte word of the parameter space and
// one `tensormap OFFSET DTYPE:DIMS:BOX[:SWIZZLE]` line per map (params_to_args.py turns it into
// --param/--tensormap options for the fields the kernel's control path reads).
//
// The compile scripts build a translation unit with -DCUTLASS_ENABLE_DIRECT_CUDA_DRIVER_CALL (so
// CUTLASS calls the driver function directly, that is, this stub) and without -lcuda.
#ifndef PARITY_TESTS_IMPORT_PRODUCTION_PARAMS_PARAM_DUMP_H_
#define PARITY_TESTS_IMPORT_PRODUCTION_PARAMS_PARAM_DUMP_H_

#include <cuda.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace param_dump {

struct Encode {
  std::string dtype;
  std::vector<uint64_t> dims;
  std::vector<uint32_t> box;
  int swizzle_bytes = 0;
};

inline std::vector<Encode>& Encodes() {
  static std::vector<Encode> e;
  return e;
}

// The marker the stub writes into a map's first 16 bytes: a magic word and the encode's index.
constexpr uint64_t kMagic = 0x70617269747974ull;  // "parityt"

inline std::string DtypeName(CUtensorMapDataType t) {
  switch (t) {
    case CU_TENSOR_MAP_DATA_TYPE_UINT8: return "u8";
    case CU_TENSOR_MAP_DATA_TYPE_UINT16: return "u16";
    case CU_TENSOR_MAP_DATA_TYPE_UINT32: return "u32";
    case CU_TENSOR_MAP_DATA_TYPE_INT32: return "s32";
    case CU_TENSOR_MAP_DATA_TYPE_UINT64: return "u64";
    case CU_TENSOR_MAP_DATA_TYPE_INT64: return "s64";
    case CU_TENSOR_MAP_DATA_TYPE_FLOAT16: return "f16";
    case CU_TENSOR_MAP_DATA_TYPE_FLOAT32: return "f32";
    case CU_TENSOR_MAP_DATA_TYPE_FLOAT64: return "f64";
    case CU_TENSOR_MAP_DATA_TYPE_BFLOAT16: return "bf16";
    case CU_TENSOR_MAP_DATA_TYPE_FLOAT32_FTZ: return "f32";
    case CU_TENSOR_MAP_DATA_TYPE_TFLOAT32: return "tf32";
    case CU_TENSOR_MAP_DATA_TYPE_TFLOAT32_FTZ: return "tf32";
    default: return "u8";
  }
}

// Prints the parameter bytes [bytes, bytes + size) as `word` lines and the maps found in them.
inline void Print(FILE* out, const void* bytes, size_t size) {
  const auto* p = static_cast<const unsigned char*>(bytes);
  for (size_t off = 0; off + 4 <= size; off += 4) {
    uint32_t w;
    std::memcpy(&w, p + off, 4);
    std::fprintf(out, "word %zu %u\n", off, w);
  }
  for (size_t off = 0; off + 128 <= size; off += 64) {
    uint64_t magic, index;
    std::memcpy(&magic, p + off, 8);
    std::memcpy(&index, p + off + 8, 8);
    if (magic != kMagic || index >= Encodes().size()) continue;
    const Encode& e = Encodes()[index];
    std::string dims, box;
    for (size_t i = 0; i < e.dims.size(); ++i) dims += (i ? "x" : "") + std::to_string(e.dims[i]);
    for (size_t i = 0; i < e.box.size(); ++i) box += (i ? "x" : "") + std::to_string(e.box[i]);
    std::fprintf(out, "tensormap %zu %s:%s:%s", off, e.dtype.c_str(), dims.c_str(), box.c_str());
    if (e.swizzle_bytes) std::fprintf(out, ":%dB", e.swizzle_bytes);
    std::fprintf(out, "\n");
  }
}

}  // namespace param_dump

extern "C" CUresult cuTensorMapEncodeTiled(
    CUtensorMap* map, CUtensorMapDataType dtype, cuuint32_t rank, void* /*global_address*/,
    const cuuint64_t* global_dim, const cuuint64_t* /*global_strides*/, const cuuint32_t* box_dim,
    const cuuint32_t* /*element_strides*/, CUtensorMapInterleave /*interleave*/,
    CUtensorMapSwizzle swizzle, CUtensorMapL2promotion /*l2*/, CUtensorMapFloatOOBfill /*oob*/) {
  param_dump::Encode e;
  e.dtype = param_dump::DtypeName(dtype);
  for (cuuint32_t i = 0; i < rank; ++i) {
    e.dims.push_back(global_dim[i]);
    e.box.push_back(box_dim[i]);
  }
  switch (swizzle) {
    case CU_TENSOR_MAP_SWIZZLE_32B: e.swizzle_bytes = 32; break;
    case CU_TENSOR_MAP_SWIZZLE_64B: e.swizzle_bytes = 64; break;
    case CU_TENSOR_MAP_SWIZZLE_128B: e.swizzle_bytes = 128; break;
    default: break;
  }
  std::memset(map, 0, sizeof(*map));
  const uint64_t index = param_dump::Encodes().size();
  std::memcpy(reinterpret_cast<char*>(map), &param_dump::kMagic, 8);
  std::memcpy(reinterpret_cast<char*>(map) + 8, &index, 8);
  param_dump::Encodes().push_back(e);
  return CUDA_SUCCESS;
}

#endif  // PARITY_TESTS_IMPORT_PRODUCTION_PARAMS_PARAM_DUMP_H_
