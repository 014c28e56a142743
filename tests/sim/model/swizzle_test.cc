// The swizzle function against its bit definitions (swizzle.h diagram).
#include "sim/model/swizzle.h"

#include <gtest/gtest.h>

#include <set>

#include "tests/sim/model/tma_reference.h"

namespace parity::model {
namespace {

constexpr TmaSwizzle kModes[] = {TmaSwizzle::kNone, TmaSwizzle::k32B, TmaSwizzle::k64B,
                                 TmaSwizzle::k128B};

TEST(Swizzle, MatchesBitStatementOnEveryAddressBelow256KiB) {
  for (TmaSwizzle s : kModes) {
    for (uint32_t a = 0; a < 256 * 1024; ++a) {
      ASSERT_EQ(SwizzleSharedAddress(a, s), reference::SwizzleBitwise(a, s))
          << SwizzleName(s) << " addr " << a;
    }
  }
}

TEST(Swizzle, IsAnInvolutionThatMovesWholeChunksWithinTheRepeat) {
  for (TmaSwizzle s : kModes) {
    const uint32_t repeat = SwizzleRepeatBytes(s);
    for (uint32_t a = 0; a < 8192; ++a) {
      const uint32_t z = SwizzleSharedAddress(a, s);
      EXPECT_EQ(SwizzleSharedAddress(z, s), a);
      EXPECT_EQ(z & 15u, a & 15u);                      // byte within chunk kept
      EXPECT_EQ(z / 128, a / 128);                      // stays in its 128-byte row
      EXPECT_EQ(z / repeat, a / repeat);                // stays in its repeat block
    }
  }
}

TEST(Swizzle, PermutesTheChunksOfEachRow) {
  for (TmaSwizzle s : kModes) {
    for (uint32_t row = 0; row < 16; ++row) {
      std::set<uint32_t> seen;
      for (uint32_t c = 0; c < 8; ++c) seen.insert(SwizzleSharedAddress(row * 128 + c * 16, s));
      EXPECT_EQ(seen.size(), 8u);
    }
  }
}

TEST(Swizzle, ExplicitValues) {
  // 128B: row r of 128 bytes, chunk c -> chunk c ^ (r % 8).
  for (uint32_t r = 0; r < 16; ++r) {
    for (uint32_t c = 0; c < 8; ++c) {
      EXPECT_EQ(SwizzleSharedAddress(r * 128 + c * 16 + 5, TmaSwizzle::k128B),
                r * 128 + ((c ^ (r % 8)) * 16) + 5);
    }
  }
  // 64B: within each 128-byte row, chunk c -> c ^ ((row) % 4) for c's low 2 bits only.
  EXPECT_EQ(SwizzleSharedAddress(3 * 128 + 0x00, TmaSwizzle::k64B), 3u * 128 + 0x30);
  EXPECT_EQ(SwizzleSharedAddress(3 * 128 + 0x40, TmaSwizzle::k64B), 3u * 128 + 0x70);
  EXPECT_EQ(SwizzleSharedAddress(4 * 128 + 0x10, TmaSwizzle::k64B), 4u * 128 + 0x10);
  // 32B: odd 128-byte rows swap the two 16-byte halves of each 32-byte span.
  EXPECT_EQ(SwizzleSharedAddress(128 + 0x00, TmaSwizzle::k32B), 128u + 0x10);
  EXPECT_EQ(SwizzleSharedAddress(128 + 0x30, TmaSwizzle::k32B), 128u + 0x20);
  EXPECT_EQ(SwizzleSharedAddress(256 + 0x30, TmaSwizzle::k32B), 256u + 0x30);
}

TEST(Swizzle, Names) {
  for (TmaSwizzle s : kModes) EXPECT_EQ(ParseSwizzle(SwizzleName(s)), s);
  EXPECT_EQ(ParseSwizzle("256B"), std::nullopt);
  EXPECT_EQ(SwizzleSpanBytes(TmaSwizzle::kNone), 0u);
}

}  // namespace
}  // namespace parity::model
