// Trivially copyable values as raw bytes in a byte vector (the explorer's packed states,
// Engine::Pack): Put* appends, Get* reads at p and returns the position after.
#ifndef PARITY_SIM_COMMON_BYTES_H_
#define PARITY_SIM_COMMON_BYTES_H_

#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

namespace parity {

template <typename T>
void PutPod(std::vector<uint8_t>* out, const T& v) {
  static_assert(std::is_trivially_copyable_v<T>);
  const auto* b = reinterpret_cast<const uint8_t*>(&v);
  out->insert(out->end(), b, b + sizeof(T));
}

template <typename T>
const uint8_t* GetPod(const uint8_t* p, T* v) {
  static_assert(std::is_trivially_copyable_v<T>);
  std::memcpy(v, p, sizeof(T));
  return p + sizeof(T);
}

template <typename T>
void PutPodVector(std::vector<uint8_t>* out, const std::vector<T>& v) {
  static_assert(std::is_trivially_copyable_v<T>);
  PutPod(out, static_cast<uint32_t>(v.size()));
  const auto* b = reinterpret_cast<const uint8_t*>(v.data());
  out->insert(out->end(), b, b + v.size() * sizeof(T));
}

template <typename T>
const uint8_t* GetPodVector(const uint8_t* p, std::vector<T>* v) {
  static_assert(std::is_trivially_copyable_v<T>);
  uint32_t n = 0;
  p = GetPod(p, &n);
  v->resize(n);
  if (n != 0) std::memcpy(v->data(), p, size_t{n} * sizeof(T));
  return p + size_t{n} * sizeof(T);
}

// An unsigned number in LEB128 (7 bits a byte, low first): small numbers take one byte.
inline void PutVarint(std::vector<uint8_t>* out, uint64_t v) {
  while (v >= 0x80) {
    out->push_back(static_cast<uint8_t>(v | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<uint8_t>(v));
}

inline const uint8_t* GetVarint(const uint8_t* p, uint64_t* v) {
  uint64_t r = 0;
  for (uint32_t shift = 0;; shift += 7) {
    const uint8_t b = *p++;
    r |= static_cast<uint64_t>(b & 0x7f) << shift;
    if ((b & 0x80) == 0) break;
  }
  *v = r;
  return p;
}

}  // namespace parity

#endif  // PARITY_SIM_COMMON_BYTES_H_
