// Where the bytes of a TMA operation go: tile loads (cp.async.bulk.tensor global -> shared),
// multicast, tile stores (shared -> global) and 1-D bulk copies (cp.async.bulk).
//
// Model of a tile load (PTX ISA: cp.async.bulk.tensor, and section 5.5 "Tensors": bounding box,
// traversal stride, out-of-bound access, tensor swizzling modes; CUDA driver API
// cuTensorMapEncodeTiled for elementStrides and box sizes), interleave NONE:
//
//   1. The box holds n[i] = BoxElementsAlong(map, i) elements per dimension. Box element k (one
//      index per dimension) reads global coordinate g[i] = coords[i] + k[i] * stride[i], with
//      stride = EffectiveElementStride (1 in dimension 0). It is out of bounds (OOB) when some
//      g[i] < 0 or g[i] >= globalDim[i]; then it is filled (zeros, or a NaN for
//      TmaOobFill::kNanRequestZeroFma) instead of read. Coordinates may be negative or past the end.
//   2. The elements are laid out in shared memory dimension 0 fastest, each dimension-0 row
//      n[0] * element-size bytes long (a multiple of 16 by the box-inner-bytes rule). Without a
//      swizzle rows are packed; with a swizzle each row occupies row_pitch = max(row bytes, span)
//      bytes (span 32/64/128, SwizzleSpanBytes), the rest of the span is left untouched:
//        linear(k) = (((k4*n3 + k3)*n2 + k2)*n1 + k1) * row_pitch + k0 * element_size.
//      Measured on H100: traces/tma_sweep/README.md finding 1 (e.g. a 16-byte row under 128B
//      swizzle uses one 16-byte chunk of each 128-byte line; 463 of 702 swizzled cases differ
//      from a packed layout).
//   3. The swizzle acts on the absolute shared address:
//        smem_offset(k) = SwizzleSharedAddress(smem_address + linear(k)) - smem_address
//      (measured on H100 at every 128-byte base: traces/tma_sweep/README.md finding 2).
//      An element never straddles a 16-byte chunk (element size <= 8 divides 16), so its bytes
//      are smem_offset .. smem_offset + element_size - 1.
//   4. complete_tx credits the mbarrier with the full box bytes (n[0] * ... * n[4] * element
//      size, not the padded extent), OOB elements included (the fill is written too).
//      Measured on H100: traces/tma_sweep/README.md finding 4 (partly and wholly OOB boxes).
//   5. Dimension 0 must start on a 16-byte boundary: coords[0] * element size a multiple of 16
//      (negative multiples are fine), else the H100 faults (cudaErrorIllegalInstruction); rule
//      "tma.coord-alignment". Measured on H100: traces/tma_sweep/README.md finding 6.
//
// All functions are pure: no I/O, no global state.
#ifndef PARITY_SIM_MODEL_TMA_H_
#define PARITY_SIM_MODEL_TMA_H_

#include <array>
#include <cstdint>
#include <functional>
#include <vector>

#include "sim/common/status.h"
#include "sim/model/swizzle.h"
#include "sim/model/tensor_map.h"

namespace parity::model {

// tensorCoords of cp.async.bulk.tensor (.s32 operands), dimension 0 first. Entries at or beyond
// the map's rank are ignored.
using TmaCoords = std::array<int32_t, kTmaMaxRank>;

// Per-CTA shared memory limit used to reject a footprint that cannot fit: 227 KiB, the H100
// (sm_90) maximum dynamic shared memory per block (CUDA Programming Guide, compute capability
// table). Rule "tma.smem-range".
inline constexpr uint32_t kMaxSharedBytesPerCta = 227 * 1024;

// One box element of a tile load or store.
struct BoxElementPlacement {
  std::array<uint32_t, kTmaMaxRank> box_index{};   // k[i]; 0 for i >= rank
  std::array<int64_t, kTmaMaxRank> global_coord{};  // g[i] = coords[i] + k[i] * stride[i]
  bool out_of_bounds = false;
  // Byte offset of the element from global_address (sum of g[i] x byte stride); 0 when OOB.
  uint64_t global_byte_offset = 0;
  // Byte offset in shared memory of the element's first byte, relative to the shared address of
  // the operation (destination of a load, source of a store); swizzle applied.
  uint32_t smem_offset = 0;

  bool operator==(const BoxElementPlacement&) const = default;
};

// A half-open range [begin, end) of shared-memory byte offsets relative to the operation's
// shared address.
struct SmemByteRange {
  uint32_t begin = 0;
  uint32_t end = 0;
  bool operator==(const SmemByteRange&) const = default;
};

struct TmaFootprint {
  // Shared-memory bytes written (load) or read (store): the box elements' bytes, not counting
  // the untouched padding of swizzled rows (see smem_ranges for where they lie).
  uint64_t box_bytes = 0;
  uint64_t oob_elements = 0;      // box elements outside the tensor
  uint64_t complete_tx_bytes = 0;  // credited to the mbarrier (loads); 0 for stores
  // Exactly the shared bytes touched, as sorted, disjoint, non-adjacent ranges (merged). With no
  // swizzle this is one range [0, box_bytes); a swizzled box with rows narrower than the span
  // (padded rows), whose size is not a multiple of the repeat, or at a base off the repeat may
  // give several.
  std::vector<SmemByteRange> smem_ranges;
  bool operator==(const TmaFootprint&) const = default;
};

struct TileLoadPlan {
  // One entry per box element in coordinate order (dimension 0 fastest).
  std::vector<BoxElementPlacement> elements;
  TmaFootprint footprint;
};

// Checks the shared address of a tensor copy: 128-byte aligned (rule "tma.smem-alignment") and
// [smem_address, smem_address + extent_bytes) within kMaxSharedBytesPerCta (rule
// "tma.smem-range"). The tile plans pass the padded extent (rows x TmaRowPitchBytes).
Status ValidateTmaSharedAddress(uint32_t smem_address, uint64_t extent_bytes);

// Shared-memory distance between consecutive dimension-0 rows of the box: the row bytes without
// a swizzle, max(row bytes, span) with one (model step 2).
uint32_t TmaRowPitchBytes(const TensorMap& map);

// Rule "tma.coord-alignment" (model step 5): coord0 * element_bytes must be a multiple of 16.
Status ValidateTmaStartAlignment(int32_t coord0, uint32_t element_bytes);

// The placement of every element of a tile load of `map` at `coords` into shared memory at
// `smem_address` (CTA-relative shared window address). Validates the map (ValidateTensorMap)
// and the shared address; interleaved maps are not modelled yet (rule
// "tma.interleave-unsupported"). Fast: walks dimension-0 rows, offsets computed incrementally.
Expected<TileLoadPlan> PlanTileLoad(const TensorMap& map, const TmaCoords& coords,
                                    uint32_t smem_address);

// The element_size bytes written for an OOB element (little-endian). kZero: zeros. NaN fill
// (float types; integer types get zeros): the 16-bit pattern 0x7FF7 repeated, f16/bf16 0x7FF7,
// f32 0x7FF77FF7, f64 0x7FF77FF77FF77FF7. Measured on H100: traces/tma_sweep/README.md finding 3
// (f16, bf16, f32, f64; the tf32/ftz variants are assumed to behave as f32).
std::vector<uint8_t> OobFillBytes(TmaDataType type, TmaOobFill fill);

// Global memory contents as a function of the byte offset from global_address.
using GlobalByteFn = std::function<uint8_t(uint64_t global_byte_offset)>;

// The predicted shared-memory image of a tile load: byte j is the value at offset j from
// smem_address, for j in [0, end of the last footprint range). Bytes not written keep
// `untouched` (a canary the litmus pre-fills shared memory with).
Expected<std::vector<uint8_t>> PredictTileLoadImage(const TensorMap& map, const TmaCoords& coords,
                                                    uint32_t smem_address,
                                                    const GlobalByteFn& global,
                                                    uint8_t untouched = 0);

// ---- Multicast (.multicast::cluster) ----

inline constexpr uint32_t kMaxClusterCtas = 16;

// Destination CTAs (%cluster_ctarank values, ascending) of a multicast with the 16-bit ctaMask:
// bit r set = CTA r receives the data and the complete_tx on its mbarrier at the same
// CTA-relative offsets. Rules: "tma.cluster-size" (1..16 CTAs), "tma.multicast-mask" (a bit at
// or beyond the cluster size), "tma.multicast-mask-empty" (no destination: no CTA would ever
// be credited; Parity flags it rather than model a no-op).
Expected<std::vector<uint32_t>> MulticastDestinations(uint32_t cluster_ctas, uint16_t cta_mask);

struct MulticastLoadPlan {
  TileLoadPlan tile;                  // identical in every destination CTA
  std::vector<uint32_t> destinations;  // from MulticastDestinations
};
Expected<MulticastLoadPlan> PlanMulticastTileLoad(const TensorMap& map, const TmaCoords& coords,
                                                  uint32_t smem_address, uint32_t cluster_ctas,
                                                  uint16_t cta_mask);

// ---- Tile store (cp.async.bulk.tensor global <- shared::cta) ----

struct TileStorePlan {
  // Every box element with the shared offset it is read from; out_of_bounds elements are not
  // written to global memory (PTX ISA 5.5: OOB writes are dropped).
  std::vector<BoxElementPlacement> elements;
  uint64_t elements_written = 0;
  uint64_t global_bytes_written = 0;
  TmaFootprint footprint;  // shared bytes read; complete_tx_bytes = 0 (stores use bulk groups)
};
Expected<TileStorePlan> PlanTileStore(const TensorMap& map, const TmaCoords& coords,
                                      uint32_t smem_address);

// ---- 1-D bulk copy (cp.async.bulk) ----

enum class BulkCopyKind : uint8_t {
  kGlobalToShared,         // completes via mbarrier complete_tx
  kSharedToSharedCluster,  // completes via the destination CTA's mbarrier complete_tx
  kSharedToGlobal,         // completes via bulk async-group
};

struct BulkCopyPlan {
  uint32_t bytes = 0;
  uint32_t complete_tx_bytes = 0;  // = bytes for the mbarrier kinds, 0 for kSharedToGlobal
};

// PTX ISA cp.async.bulk: size a multiple of 16 (rule "tma.bulk-size"); source and destination
// 16-byte aligned (rule "tma.bulk-alignment").
Expected<BulkCopyPlan> PlanBulkCopy(BulkCopyKind kind, uint64_t dst_address, uint64_t src_address,
                                    uint32_t size);

}  // namespace parity::model

#endif  // PARITY_SIM_MODEL_TMA_H_
