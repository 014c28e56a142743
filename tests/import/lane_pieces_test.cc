// A warp's shared-memory access is the set of bytes its lanes touch, not the hull of their
// addresses: two warps of an epilogue write their 16-byte stmatrix rows of one output tile at
// CuTe's Swizzle<3,4,3> addresses (CUTLASS 7107b055 sm90_epilogue_tma_warpspecialized.hpp, the
// TMA epilogue of example 49's ping-pong and stream-K kernels), so the rows of the two warps
// interleave and the hulls overlap although no byte is written twice. The import keeps each
// warp's rows as pieces: clean when the rows are apart, P2009 when two warps truly write the
// same bytes.
#include <cstdint>
#include <map>
#include <string>

#include "gtest/gtest.h"
#include "parity/parity.h"
#include "sim/ptx/importer.h"
#include "sim/ptx/ptx.h"

namespace parity::ptx {
namespace {

// Two warps, each lane giving one 16-byte row address to stmatrix.x4 (PTX ISA 9.7.14.5.16: the
// four 8x8 matrices' rows come from lanes 0-7, 8-15, 16-23, 24-31). `offset` computes %r10,
// the byte offset of the lane's row in the 1024-byte tile, from %r2 (the warp), %r4 (lane % 8)
// and %r5 (lane / 8). Then a proxy fence, a CTA barrier and one thread's TMA store of the tile.
std::string Kernel(const std::string& offset) {
  return std::string(R"(.version 8.7
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
  and.b32 %r4, %r3, 7;
  shr.u32 %r5, %r3, 3;
)") + offset + R"(  mov.u32 %r11, tile;
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
}

// Warp w writes the 16-byte chunks 4w .. 4w+3 of each 128-byte row r (r = lane % 8, chunk
// 4w + lane / 8), placed by Swizzle<3,4,3>: chunk ^ r. Rows 0-3 of warp 0 are bytes 0-63 of
// the row, rows 4-7 bytes 64-127, warp 1 the other halves: every byte once, hulls both the
// whole tile.
constexpr char kSwizzled[] = R"(  shl.b32 %r6, %r2, 2;
  add.s32 %r6, %r6, %r5;
  xor.b32 %r7, %r6, %r4;
  shl.b32 %r8, %r4, 7;
  shl.b32 %r9, %r7, 4;
  add.s32 %r10, %r8, %r9;
)";

// The same, but both warps write chunks 0 .. 3 (the warp index left out): the same bytes twice.
constexpr char kOverlapping[] = R"(  mov.u32 %r6, %r5;
  xor.b32 %r7, %r6, %r4;
  shl.b32 %r8, %r4, 7;
  shl.b32 %r9, %r7, 4;
  add.s32 %r10, %r8, %r9;
)";

// As kSwizzled, but warp 1's last matrix is chunk 3, warp 0's: the warps' rows still
// interleave (so each warp's rows are pieces) and one 16-byte row of each 128 is written twice.
constexpr char kOneRowTwice[] = R"(  shl.b32 %r6, %r2, 2;
  add.s32 %r6, %r6, %r5;
  setp.eq.u32 %p2, %r6, 7;
  selp.b32 %r6, 3, %r6, %p2;
  xor.b32 %r7, %r6, %r4;
  shl.b32 %r8, %r4, 7;
  shl.b32 %r9, %r7, 4;
  add.s32 %r10, %r8, %r9;
)";

// Warp w's 32 rows are bytes 512w .. 512w+511, lane after lane: one piece per warp.
constexpr char kContiguous[] = R"(  shl.b32 %r8, %r2, 9;
  shl.b32 %r9, %r3, 4;
  add.s32 %r10, %r8, %r9;
)";

Expected<std::string> Import(const std::string& offset, const std::string& name) {
  auto m = ParseModule(Kernel(offset), name);
  if (!m.ok()) return m.status();
  ImportOptions o;
  o.entry = "rows";
  o.block = {64, 1, 1};
  o.tensor_maps = {*ParseTensorMapArg("0=u16:64x8:64x8:128B")};
  return ImportSchedule(*m, o);
}

// How many times `what` occurs in `text`.
int Count(const std::string& text, const std::string& what) {
  int n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

struct Written {
  int accesses = 0;
  int64_t bytes = 0;
};

// The codes `check` reports (eager policy), the first code `explore` reports (or "verified"),
// and the writes of each agent on the run of `check`.
struct Outcome {
  std::string check;
  std::string explore;
  std::map<std::string, Written> writes;  // by agent ("CTA 0 warp0[0]")
};

Outcome CheckAndExplore(const std::string& text, const std::string& name) {
  Outcome out;
  auto sch = api::Schedule::FromString(text, name);
  EXPECT_TRUE(sch.ok()) << sch.error().ToString() << "\n" << text;
  if (!sch.ok()) return out;
  auto c = api::Check(*sch, api::CheckOptions{});
  EXPECT_TRUE(c.ok()) << c.error().ToString();
  if (c.ok()) {
    for (const api::Event& ev : c->events) {
      // "CTA 0 warp0[0]: write tile[0] (64 bytes)"
      const size_t colon = ev.text.find(": write ");
      const size_t open = ev.text.rfind('(');
      if (colon == std::string::npos || open == std::string::npos) continue;
      Written& w = out.writes[ev.text.substr(0, colon)];
      ++w.accesses;
      w.bytes += std::stoll(ev.text.substr(open + 1));
    }
    for (const api::Finding& f : c->findings) {
      if (out.check.find(f.code) == std::string::npos) out.check += f.code + " ";
    }
  }
  auto e = api::Explore(*sch);
  EXPECT_TRUE(e.ok()) << e.error().ToString();
  if (e.ok()) {
    out.explore = e->verdict == api::Verdict::kVerified ? "verified"
                  : e->findings.empty()                 ? "undecided"
                                                        : e->findings[0].code;
  }
  return out;
}

TEST(LanePiecesTest, InterleavedSwizzledRowsOfTwoWarpsAreClean) {
  auto t = Import(kSwizzled, "rows.ptx");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  const Outcome o = CheckAndExplore(*t, "rows.pipe");
  EXPECT_EQ(o.check, "") << *t;
  EXPECT_EQ(o.explore, "verified") << *t;
  // Each warp writes its 512 bytes, no more (not the 1024 of its hull) and no fewer: warp 0 as
  // 8 pieces of 64 bytes (one per row of the tile), warp 1 as 7 (its rows 3 and 4 are adjacent).
  ASSERT_EQ(o.writes.size(), 2u) << *t;
  EXPECT_EQ(o.writes.at("CTA 0 warp0[0]").accesses, 8) << *t;
  EXPECT_EQ(o.writes.at("CTA 0 warp0[0]").bytes, 512) << *t;
  EXPECT_EQ(o.writes.at("CTA 0 warp1[0]").accesses, 7) << *t;
  EXPECT_EQ(o.writes.at("CTA 0 warp1[0]").bytes, 512) << *t;
}

TEST(LanePiecesTest, RowsTwoWarpsBothWriteAreARace) {
  auto t = Import(kOverlapping, "rows_overlap.ptx");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  const Outcome o = CheckAndExplore(*t, "rows_overlap.pipe");
  EXPECT_EQ(o.check, "P2009 ") << *t;
  EXPECT_EQ(o.explore, "P2009") << *t;
  // Both warps write bytes 0..63 of rows 0-3 and 64..127 of rows 4-7: no byte of the other
  // warp lies in the gaps of a warp's rows, so each is its hull (the whole tile), and the race
  // is reported on bytes both warps truly write.
  for (const auto& [agent, w] : o.writes) {
    EXPECT_EQ(w.accesses, 1) << agent << "\n" << *t;
    EXPECT_EQ(w.bytes, 1024) << agent << "\n" << *t;
  }
}

TEST(LanePiecesTest, ARowBothWarpsWriteAmongInterleavedRowsIsARace) {
  auto t = Import(kOneRowTwice, "rows_twice.ptx");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  const Outcome o = CheckAndExplore(*t, "rows_twice.pipe");
  EXPECT_EQ(o.check, "P2009 ") << *t;
  EXPECT_EQ(o.explore, "P2009") << *t;
  // Warp 1 writes 384 bytes of its own and the 128 of chunk 3 that warp 0 writes too: its pieces
  // hold all 512.
  ASSERT_EQ(o.writes.size(), 2u) << *t;
  EXPECT_EQ(o.writes.at("CTA 0 warp0[0]").bytes, 512) << *t;
  EXPECT_EQ(o.writes.at("CTA 0 warp1[0]").bytes, 512) << *t;
  EXPECT_GT(o.writes.at("CTA 0 warp1[0]").accesses, 1) << *t;
}

TEST(LanePiecesTest, ContiguousRowsOfAWarpAreOneWrite) {
  auto t = Import(kContiguous, "rows_contiguous.ptx");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  // Warp 0's rows are bytes 0..511, warp 1's 512..1023 (`+ 512 * agent`, or a role each).
  EXPECT_EQ(Count(*t, "write tile[0] + 0 bytes 512"), 1) << *t;
  const Outcome o = CheckAndExplore(*t, "rows_contiguous.pipe");
  EXPECT_EQ(o.check, "") << *t;
  EXPECT_EQ(o.explore, "verified") << *t;
  ASSERT_EQ(o.writes.size(), 2u) << *t;
  for (const auto& [agent, w] : o.writes) {
    EXPECT_EQ(w.accesses, 1) << agent << "\n" << *t;
    EXPECT_EQ(w.bytes, 512) << agent << "\n" << *t;
  }
}

}  // namespace
}  // namespace parity::ptx
