// `parity tma-layout`: exit codes, the csv header and exact rows, json footprint and complete_tx.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <sstream>
#include <string>
#include <vector>

#include "tests/tools/cli_runner.h"

namespace parity::testing {
namespace {

using ::testing::HasSubstr;

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

TEST(TmaLayoutCommand, Csv128BSwizzleRowsXorTheChunk) {
  CliResult r = RunParity({"tma-layout", "--dtype", "f16", "--box", "64,8", "--swizzle", "128B"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto lines = Lines(r.out);
  ASSERT_EQ(lines.size(), 1u + 512);
  EXPECT_EQ(lines[0], "k0,k1,smem_offset,oob");
  EXPECT_EQ(lines[1], "0,0,0,0");
  EXPECT_EQ(lines[1 + 9], "9,0,18,0");
  // Row 1, element 0 (chunk 0) -> chunk 1; element 8 (chunk 1) -> chunk 0.
  EXPECT_EQ(lines[1 + 64], "0,1,144,0");
  EXPECT_EQ(lines[1 + 64 + 8], "8,1,128,0");
  // Row 7, element 63 (chunk 7, byte 14) -> chunk 0: 7 * 128 + 14.
  EXPECT_EQ(lines[512], "63,7,910,0");
}

TEST(TmaLayoutCommand, SmemBaseShiftsThePattern) {
  CliResult r = RunParity(
      {"tma-layout", "--dtype", "f16", "--box", "64,8", "--swizzle", "128B", "--smem-base", "1152"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto lines = Lines(r.out);
  ASSERT_EQ(lines.size(), 513u);
  EXPECT_EQ(lines[1], "0,0,16,0");  // base row 1 of the 1024-byte repeat: chunk 0 ^ 1
}

TEST(TmaLayoutCommand, CsvOobColumnWithNegativeCoords) {
  // c0 = -4 (byte offset -16): dimension 0 must start 16-byte aligned (measured on H100:
  // traces/tma_sweep/tma_sweep_h100.txt, finding 6 in traces/tma_sweep/README.md).
  CliResult r = RunParity({"tma-layout", "--dtype", "u32", "--box", "8,2", "--global-dims",
                           "100,1", "--coords", "-4,0"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto lines = Lines(r.out);
  ASSERT_EQ(lines.size(), 17u);
  EXPECT_EQ(lines[1], "0,0,0,1");   // x = -4
  EXPECT_EQ(lines[4], "3,0,12,1");  // x = -1
  EXPECT_EQ(lines[5], "4,0,16,0");  // x = 0
  EXPECT_EQ(lines[9], "0,1,32,1");  // row 1 is outside the 1-row tensor
  EXPECT_EQ(lines[16], "7,1,60,1");
}

// Swizzled rows narrower than the span are padded to it: 16-byte u8 rows under 128B take one
// chunk of each 128-byte line (measured on H100: traces/tma_sweep/tma_sweep_h100.txt, finding 1
// in traces/tma_sweep/README.md); complete_tx stays the 128 box bytes.
TEST(TmaLayoutCommand, SwizzledNarrowRowsArePaddedToTheSpan) {
  CliResult r = RunParity(
      {"tma-layout", "--dtype", "u8", "--box", "16,8", "--swizzle", "128B", "--format", "json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["complete_tx_bytes"], 128);
  EXPECT_EQ(j["footprint"]["box_bytes"], 128);
  EXPECT_EQ(j["footprint"]["smem_ranges"],
            nlohmann::json::parse("[[0,16],[144,160],[288,304],[432,448],[576,592],[720,736],"
                                  "[864,880],[1008,1024]]"));
  ASSERT_EQ(j["elements"].size(), 128u);
  EXPECT_EQ(j["elements"][16]["smem_offset"], 144);  // row 1, x = 0: line 1, chunk 0 ^ 1
  EXPECT_EQ(j["elements"][127]["smem_offset"], 1023);
}

TEST(TmaLayoutCommand, JsonHasFootprintAndCompleteTx) {
  CliResult r = RunParity({"tma-layout", "--dtype", "bf16", "--box", "16,4", "--swizzle", "32B",
                           "--global-dims", "20,3", "--coords", "8,1", "--format", "json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["complete_tx_bytes"], 128);
  EXPECT_EQ(j["footprint"]["box_bytes"], 128);
  // Columns 20..23 of rows 1, 2 and all of rows 3, 4 are outside.
  EXPECT_EQ(j["footprint"]["oob_elements"], 4 + 4 + 16 + 16);
  EXPECT_EQ(j["footprint"]["smem_ranges"], nlohmann::json::parse("[[0,128]]"));
  ASSERT_EQ(j["elements"].size(), 64u);
  // Row 2 (linear 64.., 128-byte line 0) unswizzled; 32B swizzle flips only on odd lines.
  EXPECT_EQ(j["elements"][32]["smem_offset"], 64);
  EXPECT_EQ(j["elements"][32]["global_coord"], nlohmann::json::parse("[8,3]"));
  EXPECT_EQ(j["elements"][32]["oob"], true);
}

TEST(TmaLayoutCommand, InvalidCombinationsExit2NamingTheRule) {
  struct Case {
    std::vector<std::string> args;
    std::string expect;
  };
  const Case cases[] = {
      {{"--dtype", "f16", "--box", "128,8", "--swizzle", "128B"}, "tensor-map.swizzle-span"},
      {{"--dtype", "f16", "--box", "4"}, "tensor-map.box-inner-bytes"},
      {{"--dtype", "u8", "--box", "16,300"}, "tensor-map.box-dim"},
      {{"--dtype", "f16", "--box", "64", "--smem-base", "64"}, "tma.smem-alignment"},
      {{"--dtype", "f17", "--box", "64"}, "cli.dtype"},
      {{"--dtype", "f16", "--box", "64", "--swizzle", "16B"}, "cli.swizzle"},
      {{"--dtype", "f16", "--box", "64,x"}, "cli.list"},
      {{"--dtype", "f16", "--box", "64", "--coords", "1,2"}, "cli.rank"},
      {{"--dtype", "u16", "--box", "64", "--oob-fill", "nan"}, "tensor-map.oob-fill"},
      {{"--dtype", "u32", "--box", "8", "--coords", "-1"}, "tma.coord-alignment"},
      {{"--dtype", "f16", "--box", "64", "--format", "xml"}, "--format"},
      {{"--box", "64"}, "--dtype"},
  };
  for (const Case& c : cases) {
    std::vector<std::string> args = {"tma-layout"};
    args.insert(args.end(), c.args.begin(), c.args.end());
    CliResult r = RunParity(args);
    EXPECT_EQ(r.exit_code, 2) << c.expect;
    EXPECT_THAT(r.err, HasSubstr(c.expect));
    EXPECT_EQ(r.out, "") << c.expect;
  }
}

}  // namespace
}  // namespace parity::testing
