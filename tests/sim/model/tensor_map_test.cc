// Every cuTensorMapEncodeTiled rule of ValidateTensorMap with a passing and a failing case.
#include "sim/model/tensor_map.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>
#include <string>

namespace parity::model {
namespace {

using ::testing::HasSubstr;

// A valid 2-D f16 map: 64 x 8 box of a 256 x 128 tensor, 128B swizzle.
TensorMap Base() {
  TensorMap m;
  m.data_type = TmaDataType::kF16;
  m.rank = 2;
  m.global_address = 0x10000;
  m.global_dim = {256, 128, 1, 1, 1};
  m.global_strides = {512, 0, 0, 0};
  m.box_dim = {64, 8, 1, 1, 1};
  m.swizzle = TmaSwizzle::k128B;
  return m;
}

struct RuleCase {
  std::string name;
  std::function<void(TensorMap&)> edit;
  std::string rule;     // "" = valid
  std::string message;  // substring of the message
};

class ValidateTensorMapTest : public ::testing::TestWithParam<RuleCase> {};

TEST_P(ValidateTensorMapTest, ReportsTheRule) {
  TensorMap m = Base();
  GetParam().edit(m);
  Status s = ValidateTensorMap(m);
  if (GetParam().rule.empty()) {
    EXPECT_TRUE(s.ok()) << s.ToString();
  } else {
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.rule(), GetParam().rule) << s.ToString();
    EXPECT_THAT(s.message(), HasSubstr(GetParam().message));
  }
}

const RuleCase kCases[] = {
    {"BaseIsValid", [](TensorMap&) {}, "", ""},
    // rank
    {"Rank5Ok", [](TensorMap& m) { m.rank = 5; m.global_strides = {512, 65536, 65536, 65536}; },
     "", ""},
    {"Rank0", [](TensorMap& m) { m.rank = 0; }, "tensor-map.rank", "tensorRank = 0"},
    {"Rank6", [](TensorMap& m) { m.rank = 6; }, "tensor-map.rank", "tensorRank = 6"},
    {"InterleaveNeedsRank3",
     [](TensorMap& m) { m.interleave = TmaInterleave::k16B; m.swizzle = TmaSwizzle::kNone; },
     "tensor-map.rank", ">= 3"},
    {"InterleaveRank3Ok",
     [](TensorMap& m) {
       m.rank = 3;
       m.global_strides = {512, 65536, 0, 0};
       m.interleave = TmaInterleave::k16B;
       m.swizzle = TmaSwizzle::kNone;
     },
     "", ""},
    // global address
    {"Address16Ok", [](TensorMap& m) { m.global_address = 0x10010; }, "", ""},
    {"AddressNot16", [](TensorMap& m) { m.global_address = 0x10008; },
     "tensor-map.global-address", "16-byte"},
    {"Interleave32NeedsAddress32",
     [](TensorMap& m) {
       m.rank = 3;
       m.global_strides = {512, 65536, 0, 0};
       m.interleave = TmaInterleave::k32B;
       m.swizzle = TmaSwizzle::k32B;
       m.global_address = 0x10010;
     },
     "tensor-map.global-address", "32-byte"},
    // global dims
    {"GlobalDim2Pow32Ok", [](TensorMap& m) { m.global_dim[1] = uint64_t{1} << 32; }, "", ""},
    {"GlobalDimZero", [](TensorMap& m) { m.global_dim[1] = 0; }, "tensor-map.global-dim",
     "globalDim[1] = 0"},
    {"GlobalDimTooBig", [](TensorMap& m) { m.global_dim[0] = (uint64_t{1} << 32) + 1; },
     "tensor-map.global-dim", "globalDim[0] = 4294967297"},
    {"UnusedDimIgnored", [](TensorMap& m) { m.global_dim[3] = 0; }, "", ""},
    // global strides
    {"StrideNot16", [](TensorMap& m) { m.global_strides[0] = 520; }, "tensor-map.global-stride",
     "globalStrides[0] = 520 is not a multiple of 16"},
    {"Stride2Pow40", [](TensorMap& m) { m.global_strides[0] = uint64_t{1} << 40; },
     "tensor-map.global-stride", "not below 2^40"},
    {"StrideBelow2Pow40Ok", [](TensorMap& m) { m.global_strides[0] = (uint64_t{1} << 40) - 16; },
     "", ""},
    {"Interleave32StrideNot32",
     [](TensorMap& m) {
       m.rank = 3;
       m.global_strides = {528, 65536, 0, 0};
       m.interleave = TmaInterleave::k32B;
       m.swizzle = TmaSwizzle::k32B;
     },
     "tensor-map.global-stride", "globalStrides[0] = 528 is not a multiple of 32"},
    // box dims
    {"Box256Ok", [](TensorMap& m) { m.box_dim[1] = 256; }, "", ""},
    {"BoxZero", [](TensorMap& m) { m.box_dim[1] = 0; }, "tensor-map.box-dim", "boxDim[1] = 0"},
    {"Box257", [](TensorMap& m) { m.box_dim[1] = 257; }, "tensor-map.box-dim",
     "boxDim[1] = 257 is outside 1..256"},
    {"InnerBytesNot16", [](TensorMap& m) { m.box_dim[0] = 4; }, "tensor-map.box-inner-bytes",
     "8 bytes is not a multiple of 16"},
    {"InnerBytes16Ok", [](TensorMap& m) { m.box_dim[0] = 8; }, "", ""},
    // element strides
    {"ElementStride8Ok", [](TensorMap& m) { m.element_strides[1] = 8; }, "", ""},
    {"ElementStride0", [](TensorMap& m) { m.element_strides[1] = 0; },
     "tensor-map.element-stride", "elementStrides[1] = 0"},
    {"ElementStride9", [](TensorMap& m) { m.element_strides[0] = 9; },
     "tensor-map.element-stride", "elementStrides[0] = 9"},
    // interleave / swizzle
    {"Interleave32NeedsSwizzle32",
     [](TensorMap& m) {
       m.rank = 3;
       m.global_strides = {512, 65536, 0, 0};
       m.interleave = TmaInterleave::k32B;
       m.swizzle = TmaSwizzle::k64B;
     },
     "tensor-map.interleave-swizzle", "swizzle 64B"},
    {"SwizzleSpan128Exceeded", [](TensorMap& m) { m.box_dim[0] = 128; },
     "tensor-map.swizzle-span", "256 bytes exceeds the 128B swizzle span"},
    {"SwizzleSpan64Ok",
     [](TensorMap& m) { m.box_dim[0] = 32; m.swizzle = TmaSwizzle::k64B; }, "", ""},
    {"SwizzleSpan64Exceeded", [](TensorMap& m) { m.swizzle = TmaSwizzle::k64B; },
     "tensor-map.swizzle-span", "128 bytes exceeds the 64B"},
    {"SwizzleSpan32Exceeded",
     [](TensorMap& m) { m.box_dim[0] = 32; m.swizzle = TmaSwizzle::k32B; },
     "tensor-map.swizzle-span", "64 bytes exceeds the 32B"},
    {"NoSwizzleWideInnerOk",
     [](TensorMap& m) { m.box_dim[0] = 256; m.swizzle = TmaSwizzle::kNone; }, "", ""},
    // OOB fill
    {"NanFillFloatOk", [](TensorMap& m) { m.oob_fill = TmaOobFill::kNanRequestZeroFma; }, "", ""},
    {"NanFillInteger",
     [](TensorMap& m) {
       m.data_type = TmaDataType::kU16;
       m.oob_fill = TmaOobFill::kNanRequestZeroFma;
     },
     "tensor-map.oob-fill", "u16"},
};

INSTANTIATE_TEST_SUITE_P(Rules, ValidateTensorMapTest, ::testing::ValuesIn(kCases),
                         [](const auto& info) { return info.param.name; });

TEST(TensorMap, ElementBytesAndNames) {
  EXPECT_EQ(ElementBytes(TmaDataType::kU8), 1u);
  EXPECT_EQ(ElementBytes(TmaDataType::kBF16), 2u);
  EXPECT_EQ(ElementBytes(TmaDataType::kTF32), 4u);
  EXPECT_EQ(ElementBytes(TmaDataType::kS64), 8u);
  EXPECT_FALSE(IsFloatType(TmaDataType::kS32));
  EXPECT_TRUE(IsFloatType(TmaDataType::kBF16));
  EXPECT_EQ(ParseDataType("bf16"), TmaDataType::kBF16);
  EXPECT_EQ(ParseDataType("f128"), std::nullopt);
  for (int v = 0; v <= 12; ++v) {
    const auto t = static_cast<TmaDataType>(v);
    EXPECT_EQ(ParseDataType(DataTypeName(t)), t) << v;
  }
}

TEST(TensorMap, BoxElementsUseCeilOfElementStrideExceptDim0) {
  TensorMap m = Base();
  m.element_strides = {4, 3, 1, 1, 1};  // dim 0 stride is ignored without interleave
  m.box_dim = {64, 8, 1, 1, 1};
  EXPECT_EQ(BoxElementsAlong(m, 0), 64u);
  EXPECT_EQ(BoxElementsAlong(m, 1), 3u);  // ceil(8 / 3)
  EXPECT_EQ(BoxElementsAlong(m, 2), 1u);  // beyond the rank
  EXPECT_EQ(EffectiveElementStride(m, 0), 1u);
  EXPECT_EQ(EffectiveElementStride(m, 1), 3u);
  EXPECT_EQ(BoxElementCount(m), 192u);
  EXPECT_EQ(BoxBytes(m), 384u);
}

}  // namespace
}  // namespace parity::model
