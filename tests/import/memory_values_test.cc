// Values the control path reads back from memory (sim/ptx/cta_memory.h), on hand-written twins
// of FlashAttention-3's dynamic persistent tile scheduler (flash-attention 0251105a
// hopper/tile_scheduler.hpp:337-358): one producer thread takes each next tile from
// atomicAdd(semaphore, 1) + gridDim.x, broadcasts it to its warp with __shfl_sync and to the
// consumer warp through a shared word between named barriers 4 (empty) and 5 (full); both warps
// stop at tile 3. The host zeroes the semaphore (flash_api.cpp:645), so the tiles are 1, 2, 3:
// the consumer waits on the producer's barrier twice. Twins that make a value depend on timing
// stay refused.
#include <string>

#include "gtest/gtest.h"
#include "sim/ptx/importer.h"
#include "sim/ptx/ptx.h"

namespace parity::ptx {
namespace {

// `producer_store` is the producer's store of the tile (lane 0 only, at PLOOP's end),
// `consumer_extra` runs in the consumer's loop after its load, `consumer_sync` is how the
// consumer waits for the full barrier.
std::string Kernel(const std::string& producer_atom, const std::string& consumer_sync,
                   const std::string& consumer_extra) {
  return std::string(R"(.version 8.7
.target sm_90a
.address_size 64
.visible .entry sched(.param .align 8 .b8 params[16])
{
  .reg .pred %p<8>;
  .reg .b32 %r<40>;
  .reg .b64 %rd<8>;
  .shared .align 8 .b8 full[8];
  .shared .align 4 .b32 tile_idx;
  mov.u32 %r1, %tid.x;
  shr.u32 %r2, %r1, 5;
  and.b32 %r3, %r1, 31;
  ld.param.u64 %rd1, [params+8];
  cvta.to.global.u64 %rd2, %rd1;
  setp.ne.u32 %p1, %r1, 0;
  @%p1 bra INITED;
  mbarrier.init.shared::cta.b64 [full], 1;
INITED:
  bar.sync 0;
  setp.ne.u32 %p3, %r3, 0;
  setp.ne.u32 %p2, %r2, 0;
  @%p2 bra CONSUMER;
  mov.u32 %r4, %nctaid.x;
PLOOP:
  mov.u32 %r20, 0;
  @%p3 bra PSHFL;
)") + producer_atom +
         R"(  add.s32 %r20, %r21, %r4;
PSHFL:
  shfl.sync.idx.b32 %r22, %r20, 0, 31, -1;
  bar.sync 4, 64;
  @%p3 bra PARRIVE;
  st.shared.u32 [tile_idx], %r22;
PARRIVE:
  bar.arrive 5, 64;
  setp.ge.u32 %p4, %r22, 3;
  @%p4 bra DONE;
  @%p3 bra PLOOP;
  mbarrier.arrive.shared::cta.b64 _, [full];
  bra PLOOP;
CONSUMER:
  bar.arrive 4, 64;
CLOOP:
)" + consumer_sync +
         R"(  ld.shared.u32 %r30, [tile_idx];
)" + consumer_extra +
         R"(  bar.arrive 4, 64;
  setp.ge.u32 %p5, %r30, 3;
  @%p5 bra DONE;
CWAIT:
  mbarrier.try_wait.parity.shared::cta.b64 %p6, [full], 0;
  @!%p6 bra CWAIT;
  bra CLOOP;
DONE:
  ret;
}
)";
}

constexpr char kOneUpdater[] = "  atom.global.add.u32 %r21, [%rd2], 1;\n";
constexpr char kFullSync[] = "  bar.sync 5, 64;\n";

Expected<std::string> Import(const std::string& text, const std::string& name) {
  auto m = ParseModule(text, name);
  if (!m.ok()) return m.status();
  ImportOptions o;
  o.entry = "sched";
  o.block = {64, 1, 1};
  return ImportSchedule(*m, o);
}

int Count(const std::string& text, const std::string& what) {
  int n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(MemoryValuesTest, OneUpdaterAndABarrierOrderedTileIndexGiveTheTiles) {
  auto t = Import(Kernel(kOneUpdater, kFullSync, ""), "sched.ptx");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  // Tiles 1 and 2 are worked on, 3 ends both loops: the producer's lane 0 arrives twice and the
  // consumer's lanes wait twice (the semaphore's values 0, 1, 2 plus gridDim.x = 1).
  EXPECT_EQ(Count(*t, "arrive full"), 2) << *t;
  EXPECT_EQ(Count(*t, "wait full"), 2) << *t;
}

TEST(MemoryValuesTest, TwoUpdatersOfTheSemaphoreAreRefused) {
  // Every lane of the producer warp takes a tile: 32 updaters, the values depend on timing.
  const std::string every_lane = "  atom.global.add.u32 %r21, [%rd2], 1;\n";
  std::string text = Kernel(every_lane, kFullSync, "");
  // Move the atom before the lane-0 branch so that every lane executes it.
  const std::string guard = "  @%p3 bra PSHFL;\n" + every_lane;
  text.replace(text.find(guard), guard.size(), every_lane + "  @%p3 bra PSHFL;\n");
  auto t = Import(text, "two_updaters.ptx");
  ASSERT_FALSE(t.ok()) << *t;
  EXPECT_EQ(t.status().rule(), "import.unsupported-control");
  EXPECT_NE(t.status().message().find("depend on their timing"), std::string::npos)
      << t.status().ToString();
}

TEST(MemoryValuesTest, ALoadNoBarrierOrdersIsUnknown) {
  // The consumer reads the word without waiting on the full barrier: which store it sees is
  // timing, so the loop's exit branch is refused at the consumer's compare.
  auto t = Import(Kernel(kOneUpdater, "", ""), "unordered.ptx");
  ASSERT_FALSE(t.ok()) << *t;
  EXPECT_EQ(t.status().rule(), "import.unsupported-control");
  EXPECT_NE(t.status().ToString().find("ld.shared"), std::string::npos) << t.status().ToString();
}

TEST(MemoryValuesTest, ASecondWriterOfTheWordIsRefused) {
  // A consumer lane also stores the word after its load: the producer's next value is no
  // longer the only one the consumer may read.
  auto t = Import(Kernel(kOneUpdater, kFullSync,
                         "  @%p3 bra NOSTORE;\n  st.shared.u32 [tile_idx], %r30;\nNOSTORE:\n"),
                  "second_writer.ptx");
  ASSERT_FALSE(t.ok()) << *t;
  EXPECT_EQ(t.status().rule(), "import.unsupported-control");
}

TEST(MemoryValuesTest, ABarrierCountOtherThanItsThreadsIsRefused) {
  // The full barrier counted for 32 threads: a generation may complete on the producer's warp
  // alone, so its arrivals cannot be paired by ordinal.
  auto t = Import(Kernel(kOneUpdater, "  bar.sync 5, 32;\n", ""), "count.ptx");
  ASSERT_FALSE(t.ok()) << *t;
  EXPECT_EQ(t.status().rule(), "import.unsupported-control");
  EXPECT_NE(t.status().message().find("named barrier 5"), std::string::npos)
      << t.status().ToString();
}

}  // namespace
}  // namespace parity::ptx
