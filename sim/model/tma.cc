#include "sim/model/tma.h"

#include <algorithm>
#include <string>

#include "sim/common/check.h"

namespace parity::model {
namespace {

// Byte stride of dimension `dim` in global memory: the element size for dimension 0, then
// globalStrides[dim - 1].
uint64_t GlobalByteStride(const TensorMap& map, uint32_t dim) {
  return dim == 0 ? ElementBytes(map.data_type) : map.global_strides[dim - 1];
}

// Merges the 16-byte chunks a box touches into ranges. Elements never straddle a chunk and each
// dimension-0 row is a whole number of chunks (box-inner-bytes rule), so the touched bytes are
// exactly the swizzled images of the chunks [r * row_pitch, r * row_pitch + row_bytes) of every
// row r; the padding after a row (swizzled maps, row_pitch > row_bytes) is not written.
std::vector<SmemByteRange> TouchedRanges(uint32_t smem_address, uint64_t rows, uint32_t row_bytes,
                                         uint32_t row_pitch, TmaSwizzle swizzle) {
  std::vector<uint32_t> chunks;
  chunks.reserve(rows * (row_bytes / 16));
  for (uint64_t r = 0; r < rows; ++r) {
    for (uint32_t lin = 0; lin < row_bytes; lin += 16) {
      const uint32_t addr = smem_address + static_cast<uint32_t>(r * row_pitch) + lin;
      chunks.push_back(SwizzleSharedAddress(addr, swizzle) - smem_address);
    }
  }
  std::sort(chunks.begin(), chunks.end());
  std::vector<SmemByteRange> ranges;
  for (uint32_t c : chunks) {
    if (!ranges.empty() && ranges.back().end == c) {
      ranges.back().end = c + 16;
    } else {
      ranges.push_back({c, c + 16});
    }
  }
  return ranges;
}

// The shared placement and global addressing common to loads and stores (PTX ISA 5.5 "Tensors":
// bounding box, traversal stride, out-of-bound access; model in tma.h). Walks dimension-0 rows:
// the outer coordinates, their bounds test and global offset are computed once per row, the
// shared offset advances by the row length.
Expected<TileLoadPlan> PlanBox(const TensorMap& map, const TmaCoords& coords,
                               uint32_t smem_address) {
  PARITY_RETURN_IF_ERROR(ValidateTensorMap(map));
  if (map.interleave != TmaInterleave::kNone) {
    return Status("tma.interleave-unsupported",
                  "the placement of interleaved (16B/32B) tensor maps is not modelled");
  }
  const uint32_t esize = ElementBytes(map.data_type);
  PARITY_RETURN_IF_ERROR(ValidateTmaStartAlignment(coords[0], esize));

  std::array<uint32_t, kTmaMaxRank> n{};
  std::array<uint32_t, kTmaMaxRank> step{};
  for (uint32_t d = 0; d < kTmaMaxRank; ++d) {
    n[d] = BoxElementsAlong(map, d);
    step[d] = EffectiveElementStride(map, d);
  }
  const uint32_t row_bytes = n[0] * esize;
  const uint32_t row_pitch = TmaRowPitchBytes(map);
  const uint64_t rows = BoxElementCount(map) / n[0];
  const uint64_t box_bytes = BoxBytes(map);
  // The shared extent is the padded one: the last row ends at (rows - 1) * pitch + row_bytes.
  // The swizzle keeps every chunk inside its 1024-aligned repeat block and the per-CTA limit is
  // a multiple of 1024, so checking the unswizzled extent is exact.
  PARITY_RETURN_IF_ERROR(
      ValidateTmaSharedAddress(smem_address, (rows - 1) * row_pitch + row_bytes));

  TileLoadPlan plan;
  plan.elements.reserve(BoxElementCount(map));
  std::array<uint32_t, kTmaMaxRank> k{};  // outer box index (k[0] unused here)
  uint32_t row_linear = 0;
  for (uint64_t row = 0; row < rows; ++row, row_linear += row_pitch) {
    BoxElementPlacement e;
    bool outer_oob = false;
    uint64_t outer_offset = 0;
    for (uint32_t d = 1; d < map.rank; ++d) {
      const int64_t g = int64_t{coords[d]} + int64_t{k[d]} * step[d];
      e.box_index[d] = k[d];
      e.global_coord[d] = g;
      if (g < 0 || static_cast<uint64_t>(g) >= map.global_dim[d]) {
        outer_oob = true;
      } else {
        outer_offset += static_cast<uint64_t>(g) * GlobalByteStride(map, d);
      }
    }
    uint32_t addr = smem_address + row_linear;
    for (uint32_t k0 = 0; k0 < n[0]; ++k0, addr += esize) {
      const int64_t g0 = int64_t{coords[0]} + k0;
      e.box_index[0] = k0;
      e.global_coord[0] = g0;
      e.out_of_bounds = outer_oob || g0 < 0 || static_cast<uint64_t>(g0) >= map.global_dim[0];
      e.global_byte_offset =
          e.out_of_bounds ? 0 : outer_offset + static_cast<uint64_t>(g0) * esize;
      e.smem_offset = SwizzleSharedAddress(addr, map.swizzle) - smem_address;
      if (e.out_of_bounds) ++plan.footprint.oob_elements;
      plan.elements.push_back(e);
    }
    // Odometer over dimensions 1..rank-1.
    for (uint32_t d = 1; d < map.rank; ++d) {
      if (++k[d] < n[d]) break;
      k[d] = 0;
    }
  }
  plan.footprint.box_bytes = box_bytes;
  plan.footprint.smem_ranges =
      TouchedRanges(smem_address, rows, row_bytes, row_pitch, map.swizzle);
  return plan;
}

}  // namespace

uint32_t TmaRowPitchBytes(const TensorMap& map) {
  const uint32_t row_bytes = BoxElementsAlong(map, 0) * ElementBytes(map.data_type);
  return std::max(row_bytes, SwizzleSpanBytes(map.swizzle));  // span 0 without a swizzle
}

Status ValidateTmaStartAlignment(int32_t coord0, uint32_t element_bytes) {
  // Measured on H100: traces/tma_sweep/README.md finding 6 (cudaErrorIllegalInstruction at the
  // UTMALDG for u8 c0 = 1, 8, -8; u16 4; u32 2; u64 1, -1; fine for u8 32, -16; u16 8; u32 4;
  // u64 2).
  const int64_t byte_offset = int64_t{coord0} * element_bytes;
  if (byte_offset % 16 != 0) {
    return Status("tma.coord-alignment",
                  "tensorCoords[0] = " + std::to_string(coord0) + " x element size " +
                      std::to_string(element_bytes) + " = byte offset " +
                      std::to_string(byte_offset) +
                      " is not a multiple of 16 (the H100 faults with an illegal instruction)");
  }
  return Status::Ok();
}

Status ValidateTmaSharedAddress(uint32_t smem_address, uint64_t box_bytes) {
  // The shared memory address of a tensor copy must be 128-byte aligned (see
  // kTmaSharedAlignment for the source).
  if (smem_address % kTmaSharedAlignment != 0) {
    return Status("tma.smem-alignment", "shared address " + std::to_string(smem_address) +
                                            " is not 128-byte aligned");
  }
  if (uint64_t{smem_address} + box_bytes > kMaxSharedBytesPerCta) {
    return Status("tma.smem-range", "shared bytes [" + std::to_string(smem_address) + ", " +
                                        std::to_string(uint64_t{smem_address} + box_bytes) +
                                        ") exceed the 227 KiB per-CTA shared memory");
  }
  return Status::Ok();
}

Expected<TileLoadPlan> PlanTileLoad(const TensorMap& map, const TmaCoords& coords,
                                    uint32_t smem_address) {
  Expected<TileLoadPlan> plan = PlanBox(map, coords, smem_address);
  if (!plan.ok()) return plan;
  // complete_tx credits the full box bytes (boxDim product x element size, not the padded
  // shared extent), OOB-filled elements included. Measured on H100: traces/tma_sweep/README.md
  // finding 4 (all 1038 completed loads, partly and wholly OOB boxes among them).
  plan->footprint.complete_tx_bytes = plan->footprint.box_bytes;
  return plan;
}

std::vector<uint8_t> OobFillBytes(TmaDataType type, TmaOobFill fill) {
  const uint32_t esize = ElementBytes(type);
  std::vector<uint8_t> bytes(esize, 0);
  if (fill == TmaOobFill::kNanRequestZeroFma && IsFloatType(type)) {
    // The 16-bit pattern 0x7FF7 repeated over the element, little-endian bytes f7 7f f7 7f ..,
    // for every float type (f32 0x7FF77FF7, f64 0x7FF77FF77FF77FF7). Measured on H100:
    // traces/tma_sweep/README.md finding 3.
    for (uint32_t b = 0; b < esize; ++b) bytes[b] = (b % 2 == 0) ? 0xF7 : 0x7F;
  }
  return bytes;
}

Expected<std::vector<uint8_t>> PredictTileLoadImage(const TensorMap& map, const TmaCoords& coords,
                                                    uint32_t smem_address,
                                                    const GlobalByteFn& global,
                                                    uint8_t untouched) {
  Expected<TileLoadPlan> plan = PlanTileLoad(map, coords, smem_address);
  if (!plan.ok()) return plan.status();
  const uint32_t esize = ElementBytes(map.data_type);
  const std::vector<uint8_t> fill = OobFillBytes(map.data_type, map.oob_fill);
  const uint32_t size = plan->footprint.smem_ranges.empty()
                            ? 0
                            : plan->footprint.smem_ranges.back().end;
  std::vector<uint8_t> image(size, untouched);
  for (const BoxElementPlacement& e : plan->elements) {
    for (uint32_t b = 0; b < esize; ++b) {
      image[e.smem_offset + b] = e.out_of_bounds ? fill[b] : global(e.global_byte_offset + b);
    }
  }
  return image;
}

Expected<std::vector<uint32_t>> MulticastDestinations(uint32_t cluster_ctas, uint16_t cta_mask) {
  // A cluster has at most 16 CTAs (8 portable, 16 with the non-portable attribute), which is why
  // ctaMask is 16 bits (PTX ISA cp.async.bulk.tensor, .multicast::cluster).
  if (cluster_ctas < 1 || cluster_ctas > kMaxClusterCtas) {
    return Status("tma.cluster-size",
                  "cluster of " + std::to_string(cluster_ctas) + " CTAs is outside 1..16");
  }
  const uint32_t beyond = uint32_t{cta_mask} >> cluster_ctas;
  if (beyond != 0) {
    uint32_t bit = cluster_ctas;
    while (((cta_mask >> bit) & 1u) == 0) ++bit;
    return Status("tma.multicast-mask",
                  "ctaMask bit " + std::to_string(bit) + " names a CTA beyond the cluster of " +
                      std::to_string(cluster_ctas));
  }
  if (cta_mask == 0) {
    return Status("tma.multicast-mask-empty", "ctaMask = 0 names no destination CTA");
  }
  std::vector<uint32_t> out;
  for (uint32_t r = 0; r < cluster_ctas; ++r) {
    if ((cta_mask >> r) & 1u) out.push_back(r);
  }
  return out;
}

Expected<MulticastLoadPlan> PlanMulticastTileLoad(const TensorMap& map, const TmaCoords& coords,
                                                  uint32_t smem_address, uint32_t cluster_ctas,
                                                  uint16_t cta_mask) {
  Expected<std::vector<uint32_t>> dest = MulticastDestinations(cluster_ctas, cta_mask);
  if (!dest.ok()) return dest.status();
  Expected<TileLoadPlan> tile = PlanTileLoad(map, coords, smem_address);
  if (!tile.ok()) return tile.status();
  return MulticastLoadPlan{std::move(tile).value(), std::move(dest).value()};
}

Expected<TileStorePlan> PlanTileStore(const TensorMap& map, const TmaCoords& coords,
                                      uint32_t smem_address) {
  Expected<TileLoadPlan> box = PlanBox(map, coords, smem_address);
  if (!box.ok()) return box.status();
  TileStorePlan plan;
  plan.elements = std::move(box->elements);
  plan.footprint = std::move(box->footprint);
  plan.footprint.complete_tx_bytes = 0;  // stores complete through bulk async-groups
  plan.elements_written = plan.elements.size() - plan.footprint.oob_elements;
  plan.global_bytes_written = plan.elements_written * ElementBytes(map.data_type);
  return plan;
}

Expected<BulkCopyPlan> PlanBulkCopy(BulkCopyKind kind, uint64_t dst_address, uint64_t src_address,
                                    uint32_t size) {
  // PTX ISA cp.async.bulk (as restated in CCCL's cuda::ptx cp.async.bulk notes): size must be
  // a multiple of 16 and srcMem and dstMem 16-byte aligned.
  if (size % 16 != 0) {
    return Status("tma.bulk-size",
                  "size = " + std::to_string(size) + " bytes is not a multiple of 16");
  }
  if (dst_address % 16 != 0) {
    return Status("tma.bulk-alignment", "destination address " + std::to_string(dst_address) +
                                            " is not 16-byte aligned");
  }
  if (src_address % 16 != 0) {
    return Status("tma.bulk-alignment", "source address " + std::to_string(src_address) +
                                            " is not 16-byte aligned");
  }
  BulkCopyPlan plan;
  plan.bytes = size;
  plan.complete_tx_bytes = kind == BulkCopyKind::kSharedToGlobal ? 0 : size;
  return plan;
}

}  // namespace parity::model
