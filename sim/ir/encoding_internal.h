// What the encoder (encoding.cc) and the decoder (decoding.cc) of the compact encoding
// (sim/ir/encoding.h) share: the names of the tensor-map codes, int64 halves and the checksum.
#ifndef PARITY_SIM_IR_ENCODING_INTERNAL_H_
#define PARITY_SIM_IR_ENCODING_INTERNAL_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "sim/ir/encoding.h"

namespace parity::ir::encoding_internal {

inline const char* const kDtypes[] = {"u8",  "u16", "u32",  "s32",    "u64",  "s64",    "f16",
                               "f32", "f64", "bf16", "f32ftz", "tf32", "tf32ftz"};
inline const char* const kSwizzles[] = {"none", "32B", "64B", "128B"};
inline const char* const kInterleaves[] = {"none", "16B", "32B"};
inline const char* const kOobFills[] = {"zero", "nan"};

template <size_t N>
uint32_t CodeOf(const char* const (&names)[N], const std::string& s) {
  for (size_t i = 0; i < N; ++i) {
    if (s == names[i]) return static_cast<uint32_t>(i);
  }
  return kEncodingNone;
}

inline uint32_t Lo(int64_t v) { return static_cast<uint32_t>(static_cast<uint64_t>(v)); }
inline uint32_t Hi(int64_t v) { return static_cast<uint32_t>(static_cast<uint64_t>(v) >> 32); }

inline uint32_t Checksum(const std::vector<uint32_t>& w, size_t from) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (size_t i = from; i < w.size(); ++i) {
    for (int b = 0; b < 4; ++b) {
      h ^= (w[i] >> (8 * b)) & 0xff;
      h *= 0x100000001b3ull;
    }
  }
  return static_cast<uint32_t>(h);
}

}  // namespace parity::ir::encoding_internal

#endif  // PARITY_SIM_IR_ENCODING_INTERNAL_H_
