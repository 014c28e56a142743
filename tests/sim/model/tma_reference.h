// Naive reference of the TMA tile placement, for tests only: every quantity is computed per
// element (and the swizzle per byte, bit by bit) straight from the definitions in
// sim/model/tma.h and sim/model/swizzle.h, with no incremental state, so that the fast
// PlanTileLoad can be checked against it on random maps.
#ifndef PARITY_TESTS_SIM_MODEL_TMA_REFERENCE_H_
#define PARITY_TESTS_SIM_MODEL_TMA_REFERENCE_H_

#include <cstdint>
#include <vector>

#include "sim/model/tma.h"

namespace parity::model::reference {

// Swizzle by the bit statement: for t < B, bit (4 + t) ^= bit (7 + t).
uint32_t SwizzleBitwise(uint32_t addr, TmaSwizzle s);

struct NaiveLoad {
  std::vector<BoxElementPlacement> elements;  // coordinate order
  // Per byte of every element: its swizzled offset (element i, byte b at [i * esize + b]).
  std::vector<uint32_t> byte_offsets;
  TmaFootprint footprint;
};

// Assumes a valid, non-interleaved map and a valid shared address (the caller checks).
NaiveLoad NaiveTileLoad(const TensorMap& map, const TmaCoords& coords, uint32_t smem_address);

// Per-byte image: byte j of the result is what lands at smem_address + j.
std::vector<uint8_t> NaiveImage(const TensorMap& map, const TmaCoords& coords,
                                uint32_t smem_address, const GlobalByteFn& global,
                                uint8_t untouched);

}  // namespace parity::model::reference

#endif  // PARITY_TESTS_SIM_MODEL_TMA_REFERENCE_H_
