// The executor's `use` check (gpu/executor.cu, CheckOrWrite), shared with the hand-written
// benchmark kernel (gpu/bench/ref_copy.cu, CHECK 2) so that both run the same code.
#ifndef PARITY_GPU_USE_CHECK_CUH_
#define PARITY_GPU_USE_CHECK_CUH_

#include <cstdint>

#include "gpu/executor.h"
#include "gpu/ptx.cuh"

namespace parity::gpu {

// This lane's share of the 16-byte chunks of the region at shared-window address `sbase`
// (chunks lane, lane + 32, ...): returns (chunks that are not pattern data, all-zero chunks).
// Four shared-window loads (ld.shared.v4) in flight per lane before the checks.
__device__ __forceinline__ uint2 CheckPatternChunks(uint32_t sbase, uint32_t chunks, uint32_t lane) {
  uint32_t bad = 0, zero = 0;
  auto check = [&](const uint4& v) {
    if ((v.x | v.y | v.z | v.w) == 0) {
      ++zero;
    } else if ((v.y & 0xff000000u) != kPatternTagBase || v.z != PatternHash(v.x, v.y) ||
               v.w != ~v.z) {
      ++bad;
    }
  };
  uint32_t k = lane;
  for (; k + 96 < chunks; k += 128) {
    const uint4 v0 = ptx::LdShared16(sbase + 16 * k);
    const uint4 v1 = ptx::LdShared16(sbase + 16 * (k + 32));
    const uint4 v2 = ptx::LdShared16(sbase + 16 * (k + 64));
    const uint4 v3 = ptx::LdShared16(sbase + 16 * (k + 96));
    check(v0);
    check(v1);
    check(v2);
    check(v3);
  }
  for (; k < chunks; k += 32) check(ptx::LdShared16(sbase + 16 * k));
  return make_uint2(bad, zero);
}

}  // namespace parity::gpu

#endif  // PARITY_GPU_USE_CHECK_CUH_
