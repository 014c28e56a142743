// The API's entry points beside Check and Explore (parity/parity.h only): ImportPtx,
// CountPipeline, Rules/FindRule and SetSelfChecks, which `parity import`, `counts` and `rules`
// are clients of.
#include <cstdlib>
#include <fstream>
#include <cstdint>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "parity/parity.h"

namespace parity::api {
namespace {

// Two warps store their 512 bytes of a 1 KiB tile (stmatrix.x4, one 16-byte row a lane), fence
// the async proxy, meet at bar.sync, and one thread TMA-stores the tile: the protocol of a TMA
// epilogue, clean.
constexpr char kRowsPtx[] = R"(.version 8.7
.target sm_90a
.address_size 64
.visible .entry rows(.param .align 64 .b8 out[128])
{
  .reg .pred %p<3>;
  .reg .b32 %r<20>;
  .reg .b64 %rd<4>;
  .shared .align 1024 .b8 tile[1024];
  mov.u32 %r1, %tid.x;
  shr.u32 %r2, %r1, 5;
  and.b32 %r3, %r1, 31;
  shl.b32 %r8, %r2, 9;
  shl.b32 %r9, %r3, 4;
  add.s32 %r10, %r8, %r9;
  mov.u32 %r11, tile;
  add.s32 %r12, %r11, %r10;
  mov.b32 %r13, 0;
  stmatrix.sync.aligned.m8n8.x4.shared.b16 [%r12], {%r13, %r13, %r13, %r13};
  fence.proxy.async.shared::cta;
  bar.sync 0;
  setp.ne.s32 %p1, %r1, 0;
  @%p1 bra DONE;
  mov.u64 %rd1, out;
  mov.u32 %r14, 0;
  cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%rd1, {%r14, %r14}], [%r11];
  cp.async.bulk.commit_group;
  cp.async.bulk.wait_group.read 0;
DONE:
  ret;
}
)";

std::string WritePtx() {
  const char* dir = std::getenv("TEST_TMPDIR");
  const std::string path = std::string(dir != nullptr ? dir : "/tmp") + "/rows.ptx";
  std::ofstream(path) << kRowsPtx;
  return path;
}

ImportOptions Rows() {
  ImportOptions o;
  o.ptx = WritePtx();
  o.entry = "rows";
  o.block = "64";
  o.tensor_maps = {"0=u16:64x8:64x8:128B"};
  return o;
}

TEST(ImportPtx, TheScheduleOfAKernelParsesAndChecksClean) {
  Result<std::string> text = ImportPtx(Rows());
  ASSERT_TRUE(text.ok()) << text.error().ToString();
  EXPECT_NE(text->find("schedule rows"), std::string::npos) << *text;
  EXPECT_NE(text->find("tma.store"), std::string::npos) << *text;
  EXPECT_NE(text->find("block 64"), std::string::npos) << *text;
  auto schedule = Schedule::FromString(*text, "rows.pipe");
  ASSERT_TRUE(schedule.ok()) << schedule.error().ToString() << "\n" << *text;
  auto report = Check(*schedule);
  ASSERT_TRUE(report.ok()) << report.error().ToString();
  EXPECT_EQ(report->outcome, Outcome::kCompleted);
  EXPECT_FALSE(report->has_errors()) << *text;
}

TEST(ImportPtx, BadOptionsAreErrorsNamingTheOption) {
  ImportOptions o = Rows();
  o.block = "64,0";
  Result<std::string> zero = ImportPtx(o);
  ASSERT_FALSE(zero.ok());
  EXPECT_EQ(zero.error().rule, "import.bad-option");
  EXPECT_NE(zero.error().message.find("--block: '0'"), std::string::npos)
      << zero.error().ToString();

  o = Rows();
  o.block.clear();
  Result<std::string> no_block = ImportPtx(o);
  ASSERT_FALSE(no_block.ok());
  EXPECT_NE(no_block.error().message.find("--block is required"), std::string::npos);

  o = Rows();
  o.launch_index = 1;
  Result<std::string> index = ImportPtx(o);
  ASSERT_FALSE(index.ok());
  EXPECT_NE(index.error().message.find("--launch-index needs --launch"), std::string::npos);

  o = Rows();
  o.entry = "no_such_kernel";
  Result<std::string> entry = ImportPtx(o);
  ASSERT_FALSE(entry.ok());
  EXPECT_NE(entry.error().ToString().find("no_such_kernel"), std::string::npos)
      << entry.error().ToString();

  o = Rows();
  o.ptx += ".missing";
  Result<std::string> missing = ImportPtx(o);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().ToString().find("rows.ptx.missing"), std::string::npos)
      << missing.error().ToString();
}

CountsOptions Gemm2x2() {
  CountsOptions o;
  o.kind = "tma-async";
  o.cluster = "2x2";
  o.consumers = 2;
  o.tile_a = "128x64";
  o.tile_b = "128x64";
  o.stages = 4;
  return o;
}

const CountsReport::Item* FindItem(const CountsReport& r, const std::string& key) {
  for (const CountsReport::Item& i : r.items) {
    if (i.key == key) return &i;
  }
  return nullptr;
}

TEST(CountPipeline, ComputesEachCountWithItsDerivation) {
  Result<CountsReport> r = CountPipeline(Gemm2x2());
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  EXPECT_EQ(r->kind, "tma-async");
  const CountsReport::Item* empty = FindItem(*r, "init.empty");
  ASSERT_NE(empty, nullptr);
  EXPECT_EQ(empty->value, 6);
  EXPECT_EQ(empty->formula, "(cluster_m + cluster_n - 1) x 2 warpgroups");
  const CountsReport::Item* tx = FindItem(*r, "tx.full");
  ASSERT_NE(tx, nullptr);
  EXPECT_EQ(tx->value, 32768);
  EXPECT_TRUE(r->checks.empty());
  EXPECT_TRUE(r->all_match());
}

TEST(CountPipeline, ChecksCompareTheUsersNumbers) {
  CountsOptions o = Gemm2x2();
  o.checks = {"init.full=1", "init.empty=8"};
  Result<CountsReport> r = CountPipeline(o);
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  ASSERT_EQ(r->checks.size(), 2u);
  EXPECT_TRUE(r->checks[0].match);
  EXPECT_FALSE(r->checks[1].match);
  EXPECT_EQ(r->checks[1].yours, 8);
  EXPECT_EQ(r->checks[1].correct, 6);
  EXPECT_NE(r->checks[1].explanation.find("you have 8"), std::string::npos)
      << r->checks[1].explanation;
  EXPECT_FALSE(r->all_match());
}

TEST(CountPipeline, BadInputIsAnError) {
  CountsOptions kind = Gemm2x2();
  kind.kind = "tma-sync";
  EXPECT_FALSE(CountPipeline(kind).ok());
  CountsOptions tiles = Gemm2x2();
  tiles.tile_b.clear();
  Result<CountsReport> no_tiles = CountPipeline(tiles);
  ASSERT_FALSE(no_tiles.ok());
  EXPECT_EQ(no_tiles.error().rule, "counts.param");
  CountsOptions key = Gemm2x2();
  key.checks = {"prefetch=2"};  // a cp-async key
  Result<CountsReport> bad_key = CountPipeline(key);
  ASSERT_FALSE(bad_key.ok());
  EXPECT_EQ(bad_key.error().rule, "counts.key");
}

TEST(Rules, FindRuleByCodeOrSlugWithItsSources) {
  Result<Rule> by_code = FindRule("M1005");
  ASSERT_TRUE(by_code.ok()) << by_code.error().ToString();
  Result<Rule> by_slug = FindRule(by_code->slug);
  ASSERT_TRUE(by_slug.ok());
  EXPECT_EQ(by_slug->code, "M1005");
  EXPECT_EQ(by_code->title, by_slug->title);
  Result<Rule> unknown = FindRule("M9999");
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.error().rule, "cli.rule");
  EXPECT_NE(unknown.error().message.find("'M9999'"), std::string::npos);

  // Every source the one-line citation names is a structured source: an ISA quote with its
  // section, or a litmus test; the table has both kinds.
  bool quote = false;
  bool litmus = false;
  for (const Rule& r : Rules()) {
    for (const Rule::Source& s : r.sources) {
      if (!s.litmus.empty()) {
        litmus = true;
        EXPECT_NE(r.citation.find("litmus " + s.litmus), std::string::npos) << r.code;
      } else if (!s.quote.empty()) {
        quote = true;
        EXPECT_FALSE(s.section.empty()) << r.code;
        EXPECT_NE(r.citation.find(s.section), std::string::npos) << r.code;
      }
    }
    Result<Rule> found = FindRule(r.code);
    ASSERT_TRUE(found.ok()) << r.code;
    EXPECT_EQ(found->sources.size(), r.sources.size()) << r.code;
  }
  EXPECT_TRUE(quote);
  EXPECT_TRUE(litmus);
}

TEST(TmaLayout, A128ByteSwizzleXorsTheChunkWithTheRow) {
  TmaLayoutOptions o;
  o.dtype = "f16";
  o.box = "64,8";
  o.swizzle = "128B";
  Result<TmaLayoutReport> r = TmaLayout(o);
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  ASSERT_EQ(r->elements.size(), 512u);
  EXPECT_EQ(r->swizzle, "128B");
  EXPECT_EQ(r->box, (std::vector<uint32_t>{64, 8}));
  // Row 1: element 0 (chunk 0) lands in chunk 1, element 8 (chunk 1) in chunk 0.
  EXPECT_EQ(r->elements[64].k, (std::vector<uint32_t>{0, 1}));
  EXPECT_EQ(r->elements[64].smem_offset, 144u);
  EXPECT_EQ(r->elements[72].smem_offset, 128u);
  EXPECT_EQ(r->box_bytes, 1024u);
  EXPECT_EQ(r->complete_tx_bytes, 1024u);
  EXPECT_EQ(r->oob_elements, 0u);
}

TEST(TmaLayout, ElementsOutsideTheTensorAreFilled) {
  TmaLayoutOptions o;
  o.dtype = "u32";
  o.box = "8,2";
  o.global_dims = "100,1";
  o.coords = "-4,0";
  Result<TmaLayoutReport> r = TmaLayout(o);
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  ASSERT_EQ(r->elements.size(), 16u);
  EXPECT_TRUE(r->elements[3].oob);    // x = -1
  EXPECT_FALSE(r->elements[4].oob);   // x = 0
  EXPECT_EQ(r->elements[4].global_coord, (std::vector<int64_t>{0, 0}));
  EXPECT_TRUE(r->elements[8].oob);    // row 1 of a 1-row tensor
  EXPECT_EQ(r->oob_elements, 12u);
}

TEST(TmaLayout, BadMapsAreErrorsNamingTheRule) {
  TmaLayoutOptions o;
  o.dtype = "f12";
  o.box = "8";
  Result<TmaLayoutReport> dtype = TmaLayout(o);
  ASSERT_FALSE(dtype.ok());
  EXPECT_EQ(dtype.error().rule, "cli.dtype");
  o.dtype = "f16";
  o.coords = "0,0";
  Result<TmaLayoutReport> rank = TmaLayout(o);
  ASSERT_FALSE(rank.ok());
  EXPECT_EQ(rank.error().rule, "cli.rank");
}

TEST(SelfChecks, AreAnExplicitProcessWideSetting) {
  const bool before = SelfChecks();
  SetSelfChecks(false);
  EXPECT_FALSE(SelfChecks());
  SetSelfChecks(true);
  EXPECT_TRUE(SelfChecks());
  SetSelfChecks(before);
}

}  // namespace
}  // namespace parity::api
