#include "tests/sim/model/tma_reference.h"

#include <algorithm>
#include <set>

namespace parity::model::reference {

uint32_t SwizzleBitwise(uint32_t addr, TmaSwizzle s) {
  uint32_t b = 0;
  if (s == TmaSwizzle::k32B) b = 1;
  if (s == TmaSwizzle::k64B) b = 2;
  if (s == TmaSwizzle::k128B) b = 3;
  uint32_t out = addr;
  for (uint32_t t = 0; t < b; ++t) {
    const uint32_t src = (addr >> (7 + t)) & 1u;
    out ^= src << (4 + t);
  }
  return out;
}

namespace {

uint32_t ElementsAlong(const TensorMap& m, uint32_t d) {
  if (d >= m.rank) return 1;
  uint32_t es = (d == 0) ? 1 : m.element_strides[d];  // dim-0 stride ignored, no interleave
  uint32_t count = 0;
  for (uint32_t x = 0; x < m.box_dim[d]; x += es) ++count;  // ceil(box / es), by counting
  return count;
}

// Shared bytes one dimension-0 row occupies: the row's bytes, padded up to the swizzle span
// (32/64/128) when there is a swizzle. Measured on H100: traces/tma_sweep/README.md finding 1.
uint64_t RowPitch(const TensorMap& m, uint64_t row_bytes) {
  uint64_t span = 0;
  if (m.swizzle == TmaSwizzle::k32B) span = 32;
  if (m.swizzle == TmaSwizzle::k64B) span = 64;
  if (m.swizzle == TmaSwizzle::k128B) span = 128;
  return row_bytes > span ? row_bytes : span;
}

}  // namespace

NaiveLoad NaiveTileLoad(const TensorMap& map, const TmaCoords& coords, uint32_t smem_address) {
  const uint32_t esize = ElementBytes(map.data_type);
  std::array<uint64_t, kTmaMaxRank> n{};
  uint64_t total = 1;
  for (uint32_t d = 0; d < kTmaMaxRank; ++d) {
    n[d] = ElementsAlong(map, d);
    total *= n[d];
  }
  const uint64_t pitch = RowPitch(map, n[0] * esize);
  NaiveLoad out;
  std::set<uint32_t> bytes;
  for (uint64_t i = 0; i < total; ++i) {
    BoxElementPlacement e;
    uint64_t rest = i;
    bool oob = false;
    uint64_t goff = 0;
    for (uint32_t d = 0; d < kTmaMaxRank; ++d) {
      const uint64_t k = rest % n[d];
      rest /= n[d];
      if (d >= map.rank) continue;
      const int64_t es = (d == 0) ? 1 : map.element_strides[d];
      const int64_t g = int64_t{coords[d]} + static_cast<int64_t>(k) * es;
      e.box_index[d] = static_cast<uint32_t>(k);
      e.global_coord[d] = g;
      if (g < 0 || g >= static_cast<int64_t>(map.global_dim[d])) oob = true;
      const uint64_t byte_stride = d == 0 ? esize : map.global_strides[d - 1];
      if (g >= 0) goff += static_cast<uint64_t>(g) * byte_stride;
    }
    e.out_of_bounds = oob;
    e.global_byte_offset = oob ? 0 : goff;
    for (uint32_t b = 0; b < esize; ++b) {
      // Element i sits in row i / n0 at column i % n0.
      const uint64_t linear = (i / n[0]) * pitch + (i % n[0]) * esize + b;
      const uint32_t logical = smem_address + static_cast<uint32_t>(linear);
      const uint32_t off = SwizzleBitwise(logical, map.swizzle) - smem_address;
      out.byte_offsets.push_back(off);
      bytes.insert(off);
    }
    e.smem_offset = out.byte_offsets[i * esize];
    if (oob) ++out.footprint.oob_elements;
    out.elements.push_back(e);
  }
  out.footprint.box_bytes = total * esize;
  out.footprint.complete_tx_bytes = total * esize;
  for (uint32_t b : bytes) {
    if (!out.footprint.smem_ranges.empty() && out.footprint.smem_ranges.back().end == b) {
      ++out.footprint.smem_ranges.back().end;
    } else {
      out.footprint.smem_ranges.push_back({b, b + 1});
    }
  }
  return out;
}

std::vector<uint8_t> NaiveImage(const TensorMap& map, const TmaCoords& coords,
                                uint32_t smem_address, const GlobalByteFn& global,
                                uint8_t untouched) {
  const NaiveLoad load = NaiveTileLoad(map, coords, smem_address);
  const uint32_t esize = ElementBytes(map.data_type);
  uint32_t size = 0;
  for (uint32_t off : load.byte_offsets) size = std::max(size, off + 1);
  std::vector<uint8_t> image(size, untouched);
  for (size_t i = 0; i < load.elements.size(); ++i) {
    const BoxElementPlacement& e = load.elements[i];
    for (uint32_t b = 0; b < esize; ++b) {
      uint8_t v = 0;
      if (!e.out_of_bounds) {
        v = global(e.global_byte_offset + b);
      } else if (map.oob_fill == TmaOobFill::kNanRequestZeroFma) {
        // 0x7FF7 repeated, little-endian: f7 7f f7 7f ... Measured on H100:
        // traces/tma_sweep/README.md finding 3.
        v = (b % 2 == 0) ? 0xF7 : 0x7F;
      }
      image[load.byte_offsets[i * esize + b]] = v;
    }
  }
  return image;
}

}  // namespace parity::model::reference
