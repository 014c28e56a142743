// TMA tile loads, multicast, stores and bulk copies: known layouts, OOB handling, and the fast
// placement against the naive reference on random maps.
#include "sim/model/tma.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <random>

#include "tests/sim/model/tma_reference.h"

namespace parity::model {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TensorMap Map2D(TmaDataType t, uint64_t w, uint64_t h, uint32_t box_w, uint32_t box_h,
                TmaSwizzle s) {
  TensorMap m;
  m.data_type = t;
  m.rank = 2;
  m.global_dim = {w, h, 1, 1, 1};
  m.global_strides = {((w * ElementBytes(t) + 15) / 16) * 16, 0, 0, 0};
  m.box_dim = {box_w, box_h, 1, 1, 1};
  m.swizzle = s;
  return m;
}

const BoxElementPlacement& At(const TileLoadPlan& p, uint32_t n0, uint32_t k0, uint32_t k1) {
  return p.elements.at(size_t{k1} * n0 + k0);
}

// The canonical CUTLASS SW128 K-major f16 tile: 64 elements (128 bytes) x 8 rows. Row r's
// 16-byte chunk c lands at chunk c ^ (r % 8).
TEST(TileLoad, F16_64x8_Swizzle128_RowChunkXor) {
  const TensorMap m = Map2D(TmaDataType::kF16, 64, 8, 64, 8, TmaSwizzle::k128B);
  for (uint32_t dst : {0u, 1024u, 4096u}) {
    auto p = PlanTileLoad(m, {0, 0, 0, 0, 0}, dst);
    ASSERT_TRUE(p.ok()) << p.status().ToString();
    ASSERT_EQ(p->elements.size(), 512u);
    for (uint32_t r = 0; r < 8; ++r) {
      for (uint32_t x = 0; x < 64; ++x) {
        const uint32_t c = x / 8;
        EXPECT_EQ(At(*p, 64, x, r).smem_offset, r * 128 + (c ^ r) * 16 + (x % 8) * 2)
            << "dst " << dst << " r " << r << " x " << x;
      }
    }
    EXPECT_EQ(p->footprint.box_bytes, 1024u);
    EXPECT_EQ(p->footprint.complete_tx_bytes, 1024u);
    EXPECT_THAT(p->footprint.smem_ranges, ElementsAre(SmemByteRange{0, 1024}));
  }
}

// A destination 128-byte aligned but one row past a 1024-byte boundary: the pattern is that of
// the absolute address, so row r uses the XOR of row r + 1.
TEST(TileLoad, BaseOffTheRepeatShiftsThePattern) {
  const TensorMap m = Map2D(TmaDataType::kF16, 64, 8, 64, 8, TmaSwizzle::k128B);
  auto p = PlanTileLoad(m, {0, 0, 0, 0, 0}, 1024 + 128);
  ASSERT_TRUE(p.ok());
  for (uint32_t r = 0; r < 8; ++r) {
    for (uint32_t x = 0; x < 64; x += 8) {
      EXPECT_EQ(At(*p, 64, x, r).smem_offset, r * 128 + ((x / 8) ^ ((r + 1) % 8)) * 16);
    }
  }
}

TEST(TileLoad, NoSwizzleIsRowMajorPacked) {
  const TensorMap m = Map2D(TmaDataType::kF32, 100, 50, 16, 4, TmaSwizzle::kNone);
  auto p = PlanTileLoad(m, {4, 5, 0, 0, 0}, 256);  // c0 * 4 bytes a multiple of 16
  ASSERT_TRUE(p.ok());
  for (uint32_t r = 0; r < 4; ++r) {
    for (uint32_t x = 0; x < 16; ++x) {
      const auto& e = At(*p, 16, x, r);
      EXPECT_EQ(e.smem_offset, (r * 16 + x) * 4);
      EXPECT_EQ(e.global_byte_offset, (5 + r) * 400 + (4 + x) * 4);
      EXPECT_FALSE(e.out_of_bounds);
    }
  }
}

// 64B swizzle, 32 x f16 rows (64 bytes = the span): the row pitch max(64, span) = 64, so rows
// sit two per 128-byte line (measured on H100: traces/tma_sweep/tma_sweep_h100.txt, finding 1
// in traces/tma_sweep/README.md).
TEST(TileLoad, Swizzle64RowsOf64Bytes) {
  const TensorMap m = Map2D(TmaDataType::kF16, 32, 8, 32, 8, TmaSwizzle::k64B);
  auto p = PlanTileLoad(m, {0, 0, 0, 0, 0}, 0);
  ASSERT_TRUE(p.ok());
  for (uint32_t r = 0; r < 8; ++r) {
    for (uint32_t x = 0; x < 32; x += 8) {
      const uint32_t lin = r * 64 + x * 2;
      const uint32_t chunk = (lin >> 4) & 7;
      const uint32_t flip = (lin >> 7) & 3;
      EXPECT_EQ(At(*p, 32, x, r).smem_offset, (lin & ~0x70u) | (((chunk & 4) | ((chunk ^ flip) & 3)) << 4));
    }
  }
}

// Rows narrower than the swizzle span are padded to it: 16 x u8 rows (16 bytes) under 128B
// swizzle take one 16-byte chunk of each 128-byte line, chunk 0 of row r moved to chunk r % 8.
// The model used to pack them (row r at r * 16); the H100 sweep showed the padding
// (traces/tma_sweep/tma_sweep_h100.txt, finding 1 in traces/tma_sweep/README.md).
TEST(TileLoad, SwizzledRowsArePaddedToTheSpan) {
  const TensorMap m = Map2D(TmaDataType::kU8, 64, 16, 16, 8, TmaSwizzle::k128B);
  auto p = PlanTileLoad(m, {0, 0, 0, 0, 0}, 2048);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  std::vector<SmemByteRange> want;
  for (uint32_t r = 0; r < 8; ++r) {
    EXPECT_EQ(At(*p, 16, 0, r).smem_offset, r * 128 + r * 16) << r;
    EXPECT_EQ(At(*p, 16, 15, r).smem_offset, r * 128 + r * 16 + 15) << r;
    want.push_back({r * 144, r * 144 + 16});
  }
  EXPECT_EQ(p->footprint.smem_ranges, want);
  // Bytes written and the tx credit stay the box's 128 bytes, not the padded 1024.
  EXPECT_EQ(p->footprint.box_bytes, 128u);
  EXPECT_EQ(p->footprint.complete_tx_bytes, 128u);
  // 32B swizzle, 16-byte f32 rows: pitch 32, bit 7 (every 4th row pair) flips chunk bit 4.
  const TensorMap s32 = Map2D(TmaDataType::kF32, 64, 16, 4, 8, TmaSwizzle::k32B);
  auto q = PlanTileLoad(s32, {0, 0, 0, 0, 0}, 0);
  ASSERT_TRUE(q.ok());
  for (uint32_t r = 0; r < 8; ++r) {
    EXPECT_EQ(At(*q, 4, 0, r).smem_offset, r * 32 + ((r / 4) % 2) * 16) << r;
  }
  // Without a swizzle the same rows are packed.
  const TensorMap none = Map2D(TmaDataType::kU8, 64, 16, 16, 8, TmaSwizzle::kNone);
  auto u = PlanTileLoad(none, {0, 0, 0, 0, 0}, 0);
  ASSERT_TRUE(u.ok());
  EXPECT_EQ(At(*u, 16, 0, 5).smem_offset, 80u);
  EXPECT_THAT(u->footprint.smem_ranges, ElementsAre(SmemByteRange{0, 128}));
  // The shared-range check uses the padded extent: 7 * 128 + 16 bytes.
  EXPECT_TRUE(PlanTileLoad(m, {0, 0, 0, 0, 0}, kMaxSharedBytesPerCta - 1024).ok());
  EXPECT_EQ(PlanTileLoad(m, {0, 0, 0, 0, 0}, kMaxSharedBytesPerCta - 896).status().rule(),
            "tma.smem-range");
}

// The dimension-0 start must be 16-byte aligned: the H100 raised cudaErrorIllegalInstruction for
// u8 c0 = 1, 8, -8, u16 4, u32 2, u64 1, -1 and ran u8 32, -16, u16 8, u32 4, u64 2
// (traces/tma_sweep/tma_sweep_h100.txt, finding 6 in traces/tma_sweep/README.md).
TEST(TileLoad, DimensionZeroStartMustBe16ByteAligned) {
  struct Probe {
    TmaDataType type;
    int32_t c0;
    bool ok;
  };
  const Probe probes[] = {
      {TmaDataType::kU8, 1, false},   {TmaDataType::kU8, 8, false},
      {TmaDataType::kU8, -8, false},  {TmaDataType::kU16, 4, false},
      {TmaDataType::kU32, 2, false},  {TmaDataType::kU64, 1, false},
      {TmaDataType::kU64, -1, false}, {TmaDataType::kU8, 32, true},
      {TmaDataType::kU8, -16, true},  {TmaDataType::kU16, 8, true},
      {TmaDataType::kU32, 4, true},   {TmaDataType::kU64, 2, true},
  };
  for (const Probe& pr : probes) {
    const uint32_t esize = ElementBytes(pr.type);
    const TensorMap m = Map2D(pr.type, 256, 4, 32 / esize, 2, TmaSwizzle::kNone);
    auto p = PlanTileLoad(m, {pr.c0, 0, 0, 0, 0}, 0);
    auto s = PlanTileStore(m, {pr.c0, 0, 0, 0, 0}, 0);
    EXPECT_EQ(p.ok(), pr.ok) << DataTypeName(pr.type) << " c0 " << pr.c0;
    EXPECT_EQ(s.ok(), pr.ok) << DataTypeName(pr.type) << " c0 " << pr.c0;
    if (!pr.ok) {
      EXPECT_EQ(p.status().rule(), "tma.coord-alignment");
      EXPECT_EQ(s.status().rule(), "tma.coord-alignment");
      const std::string msg = p.status().message();
      EXPECT_THAT(msg, HasSubstr("= " + std::to_string(pr.c0)));
      EXPECT_THAT(msg, HasSubstr("element size " + std::to_string(esize)));
      EXPECT_THAT(msg, HasSubstr("byte offset " + std::to_string(int64_t{pr.c0} * esize)));
    }
  }
  // Also under a swizzle (u32 c0 = 2 with 128B was refused too).
  const TensorMap sw = Map2D(TmaDataType::kU32, 256, 4, 32, 2, TmaSwizzle::k128B);
  EXPECT_EQ(PlanTileLoad(sw, {2, 0, 0, 0, 0}, 0).status().rule(), "tma.coord-alignment");
  EXPECT_TRUE(PlanTileLoad(sw, {-4, 0, 0, 0, 0}, 0).ok());
}

TEST(TileLoad, NegativeAndPastTheEndCoordinatesAreFilled) {
  // f32 tensor 100 x 128; box 16 x 4 at (-4, 126): columns -4..-1 and rows 128, 129 are OOB.
  const TensorMap m = Map2D(TmaDataType::kF32, 100, 128, 16, 4, TmaSwizzle::kNone);
  auto p = PlanTileLoad(m, {-4, 126, 0, 0, 0}, 0);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->footprint.oob_elements, 2u * 16 + 2u * 4);
  // Full box credited, OOB elements included: measured on H100 (traces/tma_sweep/
  // tma_sweep_h100.txt, finding 4 in traces/tma_sweep/README.md).
  EXPECT_EQ(p->footprint.complete_tx_bytes, 256u);
  EXPECT_TRUE(At(*p, 16, 3, 0).out_of_bounds);
  EXPECT_EQ(At(*p, 16, 3, 0).global_coord[0], -1);
  EXPECT_FALSE(At(*p, 16, 4, 0).out_of_bounds);
  EXPECT_EQ(At(*p, 16, 4, 0).global_byte_offset, 126u * 400);
  EXPECT_EQ(At(*p, 16, 15, 1).global_byte_offset, 127u * 400 + 11 * 4);
  EXPECT_TRUE(At(*p, 16, 8, 2).out_of_bounds);
  EXPECT_EQ(At(*p, 16, 8, 2).global_coord[1], 128);
  // Past the end of dimension 0: columns 100..111 of (96, 0).
  auto q = PlanTileLoad(m, {96, 0, 0, 0, 0}, 0);
  ASSERT_TRUE(q.ok());
  EXPECT_EQ(q->footprint.oob_elements, 4u * 12);
  EXPECT_FALSE(At(*q, 16, 3, 0).out_of_bounds);
  EXPECT_TRUE(At(*q, 16, 4, 0).out_of_bounds);
  // Wholly outside: every element filled, still the full box credited.
  auto w = PlanTileLoad(m, {1000, -50, 0, 0, 0}, 0);
  ASSERT_TRUE(w.ok());
  EXPECT_EQ(w->footprint.oob_elements, 64u);
  EXPECT_EQ(w->footprint.complete_tx_bytes, 256u);
}

TEST(TileLoad, ElementStridesSkipRowsAndShrinkTheBox) {
  TensorMap m = Map2D(TmaDataType::kU8, 64, 64, 16, 8, TmaSwizzle::kNone);
  m.element_strides = {2, 3, 1, 1, 1};  // dim 0 stride ignored (no interleave)
  auto p = PlanTileLoad(m, {0, 10, 0, 0, 0}, 0);
  ASSERT_TRUE(p.ok());
  ASSERT_EQ(p->elements.size(), 16u * 3);  // ceil(8 / 3) rows
  EXPECT_EQ(At(*p, 16, 5, 0).global_coord[0], 5);
  EXPECT_EQ(At(*p, 16, 0, 1).global_coord[1], 13);
  EXPECT_EQ(At(*p, 16, 0, 2).global_coord[1], 16);
  EXPECT_EQ(At(*p, 16, 0, 2).smem_offset, 32u);
  EXPECT_EQ(p->footprint.complete_tx_bytes, 48u);
}

TEST(TileLoad, FootprintOfASubRowBoxCanStartAboveZero) {
  // 16 x f16 = 32 bytes at 1024 + 256 (row 2 of the 1024-byte repeat): chunks 0,1 -> 2,3.
  const TensorMap m = Map2D(TmaDataType::kF16, 16, 1, 16, 1, TmaSwizzle::k128B);
  auto p = PlanTileLoad(m, {0, 0, 0, 0, 0}, 1024 + 256);
  ASSERT_TRUE(p.ok());
  EXPECT_THAT(p->footprint.smem_ranges, ElementsAre(SmemByteRange{32, 64}));
  EXPECT_EQ(p->elements[0].smem_offset, 32u);
}

TEST(TileLoad, SharedAddressRules) {
  const TensorMap m = Map2D(TmaDataType::kF16, 64, 8, 64, 8, TmaSwizzle::k128B);
  auto a = PlanTileLoad(m, {0, 0, 0, 0, 0}, 64);
  ASSERT_FALSE(a.ok());
  EXPECT_EQ(a.status().rule(), "tma.smem-alignment");
  EXPECT_TRUE(PlanTileLoad(m, {0, 0, 0, 0, 0}, kMaxSharedBytesPerCta - 1024).ok());
  auto b = PlanTileLoad(m, {0, 0, 0, 0, 0}, kMaxSharedBytesPerCta - 896);
  ASSERT_FALSE(b.ok());
  EXPECT_EQ(b.status().rule(), "tma.smem-range");
  TensorMap bad = m;
  bad.box_dim[0] = 128;
  EXPECT_EQ(PlanTileLoad(bad, {0, 0, 0, 0, 0}, 0).status().rule(), "tensor-map.swizzle-span");
  TensorMap il = m;
  il.rank = 3;
  il.global_strides = {128, 1024, 0, 0};
  il.interleave = TmaInterleave::k16B;
  EXPECT_EQ(PlanTileLoad(il, {0, 0, 0, 0, 0}, 0).status().rule(), "tma.interleave-unsupported");
}

TEST(TileLoadImage, GlobalBytesAndZeroFill) {
  TensorMap m;
  m.data_type = TmaDataType::kU8;
  m.rank = 1;
  m.global_dim = {100, 1, 1, 1, 1};
  m.box_dim = {32, 1, 1, 1, 1};
  // c0 = -16: a 16-byte aligned negative start (c0 = -8 faults on the H100, finding 6).
  auto img = PredictTileLoadImage(m, {-16, 0, 0, 0, 0}, 0,
                                  [](uint64_t off) { return static_cast<uint8_t>(off + 1); }, 0xEE);
  ASSERT_TRUE(img.ok());
  ASSERT_EQ(img->size(), 32u);
  for (int i = 0; i < 16; ++i) EXPECT_EQ((*img)[i], 0) << i;
  for (int i = 16; i < 32; ++i) EXPECT_EQ((*img)[i], i - 15) << i;
}

TEST(TileLoadImage, NanFillAndUntouchedCanary) {
  const TensorMap base = Map2D(TmaDataType::kF32, 8, 1, 8, 1, TmaSwizzle::k128B);
  TensorMap m = base;
  m.oob_fill = TmaOobFill::kNanRequestZeroFma;
  // 32 bytes at row 2 of the repeat: bytes [0, 32) untouched, [32, 64) written.
  auto img = PredictTileLoadImage(m, {-4, 0, 0, 0, 0}, 256,
                                  [](uint64_t) { return uint8_t{0x11}; }, 0xEE);
  ASSERT_TRUE(img.ok());
  ASSERT_EQ(img->size(), 64u);
  for (int i = 0; i < 32; ++i) EXPECT_EQ((*img)[i], 0xEE) << i;
  // Elements 0..3 (x = -4..-1) are chunk 0 -> chunk 2 (offset 32): NaN 0x7FF77FF7 each,
  // little-endian f7 7f f7 7f. The model used to write the all-ones-mantissa 0x7FFFFFFF; the
  // H100 sweep showed 0x7FF7 repeated (traces/tma_sweep/tma_sweep_h100.txt, finding 3 in
  // traces/tma_sweep/README.md).
  for (int i = 32; i < 48; ++i) EXPECT_EQ((*img)[i], i % 2 == 0 ? 0xF7 : 0x7F) << i;
  for (int i = 48; i < 64; ++i) EXPECT_EQ((*img)[i], 0x11) << i;
  EXPECT_THAT(OobFillBytes(TmaDataType::kF16, TmaOobFill::kNanRequestZeroFma),
              ElementsAre(0xF7, 0x7F));
  EXPECT_THAT(OobFillBytes(TmaDataType::kBF16, TmaOobFill::kNanRequestZeroFma),
              ElementsAre(0xF7, 0x7F));
  EXPECT_THAT(OobFillBytes(TmaDataType::kF32, TmaOobFill::kNanRequestZeroFma),
              ElementsAre(0xF7, 0x7F, 0xF7, 0x7F));
  EXPECT_THAT(OobFillBytes(TmaDataType::kF64, TmaOobFill::kNanRequestZeroFma),
              ElementsAre(0xF7, 0x7F, 0xF7, 0x7F, 0xF7, 0x7F, 0xF7, 0x7F));
  EXPECT_THAT(OobFillBytes(TmaDataType::kU32, TmaOobFill::kNanRequestZeroFma),
              ElementsAre(0, 0, 0, 0));
  EXPECT_THAT(OobFillBytes(TmaDataType::kF64, TmaOobFill::kZero),
              ElementsAre(0, 0, 0, 0, 0, 0, 0, 0));
}

// The fast row walker against the per-element, per-byte reference on random valid maps.
TEST(TileLoad, FastMatchesNaiveOnRandomMaps) {
  std::mt19937_64 rng(20261122);
  auto uni = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  const TmaDataType types[] = {TmaDataType::kU8,  TmaDataType::kU16, TmaDataType::kF16,
                               TmaDataType::kBF16, TmaDataType::kF32, TmaDataType::kS32,
                               TmaDataType::kF64, TmaDataType::kU64, TmaDataType::kTF32};
  const TmaSwizzle swizzles[] = {TmaSwizzle::kNone, TmaSwizzle::k32B, TmaSwizzle::k64B,
                                 TmaSwizzle::k128B};
  int checked = 0, with_oob = 0, off_repeat = 0, padded = 0;
  for (int iter = 0; iter < 600; ++iter) {
    TensorMap m;
    m.data_type = types[uni(0, 8)];
    m.swizzle = swizzles[uni(0, 3)];
    m.rank = static_cast<uint32_t>(uni(1, 5));
    m.oob_fill = IsFloatType(m.data_type) && uni(0, 1) ? TmaOobFill::kNanRequestZeroFma
                                                       : TmaOobFill::kZero;
    const uint32_t esize = ElementBytes(m.data_type);
    const uint32_t max_inner =
        m.swizzle == TmaSwizzle::kNone ? 256 * esize : SwizzleSpanBytes(m.swizzle);
    const uint32_t inner_chunks = static_cast<uint32_t>(uni(1, std::min<uint32_t>(max_inner, 512) / 16));
    m.box_dim[0] = inner_chunks * 16 / esize;
    m.global_dim[0] = static_cast<uint64_t>(uni(1, 300));
    uint64_t stride = ((m.global_dim[0] * esize + 15) / 16) * 16 + 16 * uni(0, 2);
    for (uint32_t d = 1; d < m.rank; ++d) {
      m.box_dim[d] = static_cast<uint32_t>(uni(1, d == 1 ? 12 : 3));
      m.element_strides[d] = static_cast<uint32_t>(uni(1, 3));
      m.global_dim[d] = static_cast<uint64_t>(uni(1, 20));
      m.global_strides[d - 1] = stride;
      stride *= m.global_dim[d];
    }
    m.element_strides[0] = static_cast<uint32_t>(uni(1, 8));  // ignored; must not matter
    ASSERT_TRUE(ValidateTensorMap(m).ok()) << ValidateTensorMap(m).ToString();
    if (BoxBytes(m) > 32 * 1024) continue;
    TmaCoords c{};
    for (uint32_t d = 0; d < m.rank; ++d) {
      c[d] = static_cast<int32_t>(uni(-static_cast<int64_t>(m.box_dim[d]) - 2,
                                      static_cast<int64_t>(m.global_dim[d]) + 2));
    }
    // Dimension 0 starts on a 16-byte boundary (tma.coord-alignment); round toward -infinity.
    const int32_t align = static_cast<int32_t>(16 / esize);
    c[0] = static_cast<int32_t>((c[0] - ((c[0] % align) + align) % align));
    const uint32_t dst = static_cast<uint32_t>(uni(0, 64)) * 128;
    auto fast = PlanTileLoad(m, c, dst);
    ASSERT_TRUE(fast.ok()) << fast.status().ToString();
    const reference::NaiveLoad naive = reference::NaiveTileLoad(m, c, dst);
    ASSERT_EQ(fast->elements.size(), naive.elements.size()) << iter;
    for (size_t i = 0; i < naive.elements.size(); ++i) {
      ASSERT_EQ(fast->elements[i], naive.elements[i]) << "iter " << iter << " element " << i;
      for (uint32_t b = 1; b < esize; ++b) {  // an element's bytes stay consecutive
        ASSERT_EQ(naive.byte_offsets[i * esize + b], naive.elements[i].smem_offset + b);
      }
    }
    ASSERT_EQ(fast->footprint, naive.footprint) << iter;
    auto global = [](uint64_t off) { return static_cast<uint8_t>((off * 131) >> 3); };
    auto img = PredictTileLoadImage(m, c, dst, global, 0xA5);
    ASSERT_TRUE(img.ok());
    ASSERT_EQ(*img, reference::NaiveImage(m, c, dst, global, 0xA5)) << iter;
    ++checked;
    if (naive.footprint.oob_elements > 0) ++with_oob;
    if (m.swizzle != TmaSwizzle::kNone && dst % SwizzleRepeatBytes(m.swizzle) != 0) ++off_repeat;
    if (TmaRowPitchBytes(m) > m.box_dim[0] * esize && BoxElementCount(m) > m.box_dim[0]) ++padded;
  }
  // The random inputs must actually exercise the interesting cases.
  EXPECT_GT(checked, 400);
  EXPECT_GT(with_oob, 100);
  EXPECT_GT(off_repeat, 100);
  EXPECT_GT(padded, 50);  // several padded rows per box
}

TEST(Multicast, DestinationsFromTheMask) {
  auto d = MulticastDestinations(4, 0b1010);
  ASSERT_TRUE(d.ok());
  EXPECT_THAT(*d, ElementsAre(1u, 3u));
  auto all = MulticastDestinations(16, 0xFFFF);
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->size(), 16u);
  EXPECT_EQ(all->back(), 15u);
  auto one = MulticastDestinations(1, 0x1);
  ASSERT_TRUE(one.ok());
  EXPECT_THAT(*one, ElementsAre(0u));
}

TEST(Multicast, MaskErrors) {
  auto beyond = MulticastDestinations(4, 0b10011);
  ASSERT_FALSE(beyond.ok());
  EXPECT_EQ(beyond.status().rule(), "tma.multicast-mask");
  EXPECT_THAT(beyond.status().message(), HasSubstr("bit 4"));
  EXPECT_EQ(MulticastDestinations(15, 0x8000).status().rule(), "tma.multicast-mask");
  EXPECT_EQ(MulticastDestinations(2, 0).status().rule(), "tma.multicast-mask-empty");
  EXPECT_EQ(MulticastDestinations(0, 1).status().rule(), "tma.cluster-size");
  EXPECT_EQ(MulticastDestinations(17, 1).status().rule(), "tma.cluster-size");
}

TEST(Multicast, SamePlacementAndTxInEveryDestination) {
  const TensorMap m = Map2D(TmaDataType::kBF16, 64, 64, 64, 8, TmaSwizzle::k128B);
  auto mc = PlanMulticastTileLoad(m, {0, 8, 0, 0, 0}, 2048, 2, 0b11);
  auto single = PlanTileLoad(m, {0, 8, 0, 0, 0}, 2048);
  ASSERT_TRUE(mc.ok());
  ASSERT_TRUE(single.ok());
  EXPECT_THAT(mc->destinations, ElementsAre(0u, 1u));
  EXPECT_EQ(mc->tile.elements, single->elements);
  EXPECT_EQ(mc->tile.footprint, single->footprint);
  EXPECT_EQ(mc->tile.footprint.complete_tx_bytes, 1024u);
  EXPECT_EQ(PlanMulticastTileLoad(m, {0, 0, 0, 0, 0}, 0, 2, 0b100).status().rule(),
            "tma.multicast-mask");
}

TEST(TileStore, OutOfBoundsElementsAreNotWritten) {
  const TensorMap m = Map2D(TmaDataType::kF16, 40, 10, 64, 4, TmaSwizzle::k128B);
  auto s = PlanTileStore(m, {0, 8, 0, 0, 0}, 0);
  ASSERT_TRUE(s.ok());
  // Rows 8, 9 in bounds (40 of 64 columns each); rows 10, 11 not.
  EXPECT_EQ(s->elements_written, 80u);
  EXPECT_EQ(s->global_bytes_written, 160u);
  EXPECT_EQ(s->footprint.oob_elements, 256u - 80);
  EXPECT_EQ(s->footprint.box_bytes, 512u);  // every shared byte of the box is read
  EXPECT_EQ(s->footprint.complete_tx_bytes, 0u);
  const auto load = PlanTileLoad(m, {0, 8, 0, 0, 0}, 0);
  ASSERT_TRUE(load.ok());
  EXPECT_EQ(s->elements, load->elements);  // same shared layout as a load
}

TEST(BulkCopy, SizeAndAlignment) {
  auto ok = PlanBulkCopy(BulkCopyKind::kGlobalToShared, 0x400, 0x7f0010, 4096);
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(ok->bytes, 4096u);
  EXPECT_EQ(ok->complete_tx_bytes, 4096u);
  auto st = PlanBulkCopy(BulkCopyKind::kSharedToGlobal, 0x7f0010, 0x400, 16);
  ASSERT_TRUE(st.ok());
  EXPECT_EQ(st->complete_tx_bytes, 0u);
  EXPECT_EQ(PlanBulkCopy(BulkCopyKind::kSharedToSharedCluster, 0x400, 0x800, 48)->complete_tx_bytes,
            48u);
  auto size = PlanBulkCopy(BulkCopyKind::kGlobalToShared, 0x400, 0x800, 20);
  ASSERT_FALSE(size.ok());
  EXPECT_EQ(size.status().rule(), "tma.bulk-size");
  EXPECT_THAT(size.status().message(), HasSubstr("20"));
  EXPECT_EQ(PlanBulkCopy(BulkCopyKind::kGlobalToShared, 0x408, 0x800, 16).status().rule(),
            "tma.bulk-alignment");
  EXPECT_EQ(PlanBulkCopy(BulkCopyKind::kGlobalToShared, 0x400, 0x804, 16).status().rule(),
            "tma.bulk-alignment");
}

}  // namespace
}  // namespace parity::model
