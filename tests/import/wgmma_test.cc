// wgmma as one operation of the warpgroup (sim/ptx/import_wgmma.cc). PTX ISA, Asynchronous
// Warpgroup Level Matrix Multiply-Accumulate: the warpgroup executes wgmma.mma_async
// collectively; a group's shared-operand reads happen after every warp of the warpgroup issued
// it and before any warp's wgmma.wait_group that retires it returns.
//
// The kernel: warps 0-3 are one consumer warpgroup, warp 4's lane 0 the producer; two stages of
// one 4 KiB tile, `kblocks` k-blocks (4: each stage is refilled), full and empty barriers of
// count 1. Each k-block the consumers wait the stage's full barrier, issue one wgmma reading it,
// commit, wgmma.wait_group DEPTH and then release the stage of k-block k - DEPTH from thread 0
// only (CUTLASS's PipelineTmaAsync::consumer_release: one thread per consumer warpgroup).
#include <algorithm>
#include <string>

#include "gtest/gtest.h"
#include "parity/parity.h"
#include "sim/ir/parser.h"
#include "sim/ptx/importer.h"
#include "sim/ptx/ptx.h"
#include "sim/trace/event.h"
#include "sim/trace/trace_file.h"
#include "verifier/kernel_trace.h"

namespace parity::ptx {
namespace {

struct Variant {
  int depth = 0;              // wgmma.wait_group DEPTH in the loop
  int release_lag = -1;       // the k-block released is k - release_lag (-1: DEPTH)
  bool wait_after = false;    // the full-barrier wait between mma_async and commit_group
  bool extra_commit = false;  // warp 2 commits one more (empty) group at the end
  // Lane 0 of every consumer warp releases (empty counts 4) instead of thread 0 alone: each
  // warp then releases only stages it waited for itself, so a bug variant's race is not hidden
  // behind a warp that misses a full-barrier phase.
  bool all_release = false;
};

std::string Kernel(const Variant& v) {
  const std::string depth = std::to_string(v.depth);
  const std::string releasers = v.all_release ? "4" : "1";
  const std::string lag = std::to_string(v.release_lag < 0 ? v.depth : v.release_lag);
  const std::string wait_full = R"(CW:
  mbarrier.try_wait.parity.shared::cta.b64 %p5, [%r14], %r12;
  @!%p5 bra CW;
)";
  std::string k = R"(.version 8.7
.target sm_90a
.address_size 64
.visible .entry pipe(.param .u64 src, .param .u32 kblocks)
{
  .reg .pred %p<10>;
  .reg .b32 %r<40>;
  .reg .b64 %rd<10>;
  .reg .f32 %f<5>;
  .shared .align 1024 .b8 tile[8192];
  .shared .align 8 .b64 full[2];
  .shared .align 8 .b64 empty[2];
  ld.param.u64 %rd1, [src];
  ld.param.u32 %r30, [kblocks];
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, full;
  mov.u32 %r3, empty;
  mov.u32 %r4, tile;
  setp.ne.s32 %p1, %r1, 0;
  @%p1 bra SYNC;
  mbarrier.init.shared::cta.b64 [%r2], 1;
  add.s32 %r5, %r2, 8;
  mbarrier.init.shared::cta.b64 [%r5], 1;
  mbarrier.init.shared::cta.b64 [%r3], )" + releasers + R"(;
  add.s32 %r5, %r3, 8;
  mbarrier.init.shared::cta.b64 [%r5], )" + releasers + R"(;
  fence.mbarrier_init.release.cluster;
SYNC:
  bar.sync 0;
  setp.lt.u32 %p2, %r1, 128;
  @%p2 bra CONSUMER;
  setp.ne.s32 %p3, %r1, 128;
  @%p3 bra DONE;
  mov.u32 %r10, 0;
PLOOP:
  setp.ge.u32 %p4, %r10, %r30;
  @%p4 bra DONE;
  and.b32 %r11, %r10, 1;
  shr.u32 %r12, %r10, 1;
  and.b32 %r12, %r12, 1;
  xor.b32 %r12, %r12, 1;
  mad.lo.s32 %r13, %r11, 8, %r3;
PW:
  mbarrier.try_wait.parity.shared::cta.b64 %p5, [%r13], %r12;
  @!%p5 bra PW;
  mad.lo.s32 %r14, %r11, 8, %r2;
  mbarrier.arrive.expect_tx.shared::cta.b64 _, [%r14], 4096;
  mad.lo.s32 %r15, %r11, 4096, %r4;
  cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%r15], [%rd1], 4096, [%r14];
  add.s32 %r10, %r10, 1;
  bra PLOOP;
CONSUMER:
  mov.u32 %r10, 0;
CLOOP:
  setp.ge.u32 %p4, %r10, %r30;
  @%p4 bra CTAIL;
  and.b32 %r11, %r10, 1;
  shr.u32 %r12, %r10, 1;
  and.b32 %r12, %r12, 1;
  mad.lo.s32 %r14, %r11, 8, %r2;
)" + (v.wait_after ? "" : wait_full) +
                  R"(  mad.lo.s32 %r15, %r11, 4096, %r4;
  shr.u32 %r16, %r15, 4;
  and.b32 %r16, %r16, 16383;
  cvt.u64.u32 %rd2, %r16;
  or.b64 %rd3, %rd2, 4611686018427387904;
  add.s64 %rd4, %rd3, 128;
  wgmma.fence.sync.aligned;
  wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%f1, %f2, %f3, %f4}, %rd3, %rd4, 1, 1, 1, 1, 1;
)" + (v.wait_after ? wait_full : "") +
                  R"(  wgmma.commit_group.sync.aligned;
  wgmma.wait_group.sync.aligned )" +
                  depth + R"(;
  setp.lt.u32 %p6, %r10, )" +
                  lag + R"(;
  @%p6 bra CNEXT;
  and.b32 %r21, %r1, )" + std::string(v.all_release ? "31" : "-1") + R"(;
  setp.ne.s32 %p8, %r21, 0;
  @%p8 bra CNEXT;
  sub.s32 %r17, %r10, )" +
                  lag + R"(;
  and.b32 %r18, %r17, 1;
  mad.lo.s32 %r19, %r18, 8, %r3;
  mbarrier.arrive.shared::cta.b64 _, [%r19];
CNEXT:
  add.s32 %r10, %r10, 1;
  bra CLOOP;
CTAIL:
  wgmma.wait_group.sync.aligned 0;
)" + (v.extra_commit ? R"(  shr.u32 %r20, %r1, 5;
  setp.ne.s32 %p7, %r20, 2;
  @%p7 bra DONE;
  wgmma.commit_group.sync.aligned;
)"
                       : "") +
                  R"(DONE:
  ret;
}
)";
  return k;
}

// `single_use_limit`: ImportOptions::wgmma_single_use_limit (0: rings).
Expected<std::string> Import(const Variant& v, const std::string& name,
                             int64_t single_use_limit = 256) {
  auto m = ParseModule(Kernel(v), name);
  if (!m.ok()) return m.status();
  ImportOptions o;
  o.entry = "pipe";
  o.block = {160, 1, 1};
  o.args = {{1, 4}};
  o.wgmma_single_use_limit = single_use_limit;
  return ImportSchedule(*m, o);
}

struct Verdicts {
  std::string check;    // the first error's code, "" when clean
  std::string explore;  // VERIFIED, or the first finding's code
};

Verdicts Decide(const std::string& text, const std::string& name) {
  Verdicts out;
  auto sch = api::Schedule::FromString(text, name);
  EXPECT_TRUE(sch.ok()) << sch.error().ToString() << "\n" << text;
  if (!sch.ok()) return out;
  auto c = api::Check(*sch);
  EXPECT_TRUE(c.ok());
  if (c.ok() && c->has_errors()) {
    for (const api::Finding& f : c->findings) {
      if (out.check.empty() && f.code[0] != 'A') out.check = f.code;
    }
  }
  auto e = api::Explore(*sch);
  EXPECT_TRUE(e.ok());
  if (e.ok()) {
    out.explore = e->verdict == api::Verdict::kVerified ? "VERIFIED"
                  : e->findings.empty()                 ? "UNDECIDED"
                                                        : e->findings[0].code;
  }
  return out;
}

// One thread of the warpgroup releases the stage after its own wait_group: the other warps'
// reads of it are done too (the group is the warpgroup's), so reusing the stage is clean. The
// reads are the tensor core's, not the warps'.
TEST(WgmmaTest, OneSignallingWarpReleasesTheWholeWarpgroupsReads) {
  auto t = Import(Variant{}, "one_signal.ptx");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  const size_t tensor = t->find("role tensor_core_wg0 threads 32");
  ASSERT_NE(tensor, std::string::npos) << *t;
  const size_t first_use = t->find("use.async tile[");
  ASSERT_NE(first_use, std::string::npos) << *t;
  EXPECT_GT(first_use, tensor) << "only the tensor core reads the operands\n" << *t;
  // One element per k-block's issue and group (4 k-blocks); as a ring, one element each
  // (wait_group 0 keeps no group in flight).
  EXPECT_NE(t->find("barrier wgmma_issued_wg0[4] count 4"), std::string::npos) << *t;
  EXPECT_NE(t->find("barrier wgmma_done_wg0[4] count 1"), std::string::npos) << *t;
  const Verdicts v = Decide(*t, "one_signal.pipe");
  EXPECT_EQ(v.check, "") << *t;
  EXPECT_EQ(v.explore, "VERIFIED") << *t;
  auto ring = Import(Variant{}, "one_signal_ring.ptx", 0);
  ASSERT_TRUE(ring.ok()) << ring.status().ToString();
  EXPECT_NE(ring->find("barrier wgmma_issued_wg0[1] count 4"), std::string::npos) << *ring;
  EXPECT_NE(ring->find("barrier wgmma_done_wg0[1] count 1"), std::string::npos) << *ring;
  const Verdicts r = Decide(*ring, "one_signal_ring.pipe");
  EXPECT_EQ(r.check, "") << *ring;
  EXPECT_EQ(r.explore, "VERIFIED") << *ring;
}

// wgmma.wait_group 1: a group stays in flight while the next is issued, so each ring holds two
// elements (no parity ABA), and releasing k-block k - 1 after it is clean; releasing k-block k
// (whose group wait_group 1 leaves in flight) lets the producer refill a stage the tensor core
// may still read: P2005.
TEST(WgmmaTest, WaitGroupOneRetiresAllButTheNewestGroup) {
  for (int64_t limit : {256, 0}) {
    SCOPED_TRACE(limit == 0 ? "rings" : "single-use elements");
    auto t = Import(Variant{1}, "depth1.ptx", limit);
    ASSERT_TRUE(t.ok()) << t.status().ToString();
    if (limit == 0) {
      EXPECT_NE(t->find("barrier wgmma_issued_wg0[2] count 4"), std::string::npos) << *t;
      EXPECT_NE(t->find("barrier wgmma_done_wg0[2] count 1"), std::string::npos) << *t;
    }
    Verdicts ok = Decide(*t, "depth1.pipe");
    EXPECT_EQ(ok.check, "") << *t;
    EXPECT_EQ(ok.explore, "VERIFIED") << *t;

    Variant early{1, 0};
    early.all_release = true;
    auto bad = Import(early, "depth1_early.ptx", limit);
    ASSERT_TRUE(bad.ok()) << bad.status().ToString();
    Verdicts found = Decide(*bad, "depth1_early.pipe");
    EXPECT_EQ(found.explore, "P2005") << *bad;
  }
}

// The warps wait the stage's full barrier after issuing the wgmma that reads it (between
// mma_async and commit_group): the tensor core may read the stage before its bytes land.
TEST(WgmmaTest, AWaitAfterTheIssueDoesNotOrderTheReads) {
  Variant after{0, -1, true};
  after.all_release = true;
  auto t = Import(after, "wait_after.ptx");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  // Each warp's issue arrive comes before its wait on the full barrier.
  const size_t arrive = t->find("arrive wgmma_issued_wg0[");
  const size_t wait = t->find("wait full[");
  ASSERT_NE(arrive, std::string::npos) << *t;
  ASSERT_NE(wait, std::string::npos) << *t;
  EXPECT_LT(arrive, wait) << *t;
  const Verdicts v = Decide(*t, "wait_after.pipe");
  EXPECT_EQ(v.check, "P2005") << *t;
  EXPECT_EQ(v.explore, "P2005") << *t;
}

// wgmma.commit_group is .aligned: every warp of the warpgroup commits the same groups. A warp
// that commits one more is refused at the PTX line, exit 2, not modelled.
TEST(WgmmaTest, WarpsOfAWarpgroupWithDifferentGroupsAreRefused) {
  Variant v;
  v.extra_commit = true;
  auto t = Import(v, "extra_commit.ptx");
  ASSERT_FALSE(t.ok()) << *t;
  EXPECT_EQ(t.status().rule(), "import.unsupported-op") << t.status().ToString();
  EXPECT_EQ(t.status().where().file, "extra_commit.ptx");
  EXPECT_GT(t.status().where().line, 0) << t.status().ToString();
  EXPECT_NE(t.status().message().find("different wgmma-groups (4 and 5 groups, differing at "
                                      "group 4)"),
            std::string::npos)
      << t.status().ToString();
}

// The tensor core is no warp of the kernel: its `# kernel:` line says whose wgmma it executes,
// and a kernel trace (trace.cuh records no wgmma) is refused as bad input naming that role and
// line, not matched until it diverges at the warps' unrecorded wgmma steps.
TEST(WgmmaTest, KernelTraceReplayRefusesTheTensorCoreRole) {
  const std::string name = "one_signal.pipe";
  auto t = Import(Variant{}, "one_signal.ptx");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  const std::string line = "# kernel: role tensor_core_wg0 = wgmma of warps 0-3\n";
  const size_t at = t->find(line);
  ASSERT_NE(at, std::string::npos) << *t;
  EXPECT_NE(t->find("# kernel: role warp1_3 = warps 1 2 3\n"), std::string::npos) << *t;
  const int line_number = 1 + static_cast<int>(std::count(t->begin(), t->begin() + at, '\n'));
  auto map = verifier::ParseKernelMap(*t, name);
  ASSERT_TRUE(map.ok()) << map.status().ToString();
  ASSERT_EQ(map->tensor_cores.count("tensor_core_wg0"), 1u);
  EXPECT_EQ(map->tensor_cores.at("tensor_core_wg0").first_warp, 0);
  EXPECT_EQ(map->tensor_cores.at("tensor_core_wg0").last_warp, 3);
  EXPECT_EQ(map->role_warps.count("tensor_core_wg0"), 0u);
  auto program = ir::ParseProgram(*t, name);
  ASSERT_TRUE(program.ok()) << program.status().ToString();
  auto params = ir::BindParams(*program, {});
  ASSERT_TRUE(params.ok()) << params.status().ToString();
  // What trace.cuh writes first: thread 0 (warp 0) initialises full[0] (count 1).
  trace::TraceFile kernel;
  kernel.header.source = "kernel";
  kernel.header.schedule = "pipe";
  trace::TraceEvent init{};
  init.kind = static_cast<uint8_t>(trace::EventKind::kInit);
  init.object = 0xfffe;  // parity::dev::kKernelObject
  init.index = 0x400 / 8;
  init.value = 1;
  kernel.events.push_back(init);
  auto r = verifier::ReplayKernelTrace(*program, *params, *map, kernel);
  ASSERT_FALSE(r.ok()) << verifier::FormatKernelReplayResult(*r, kernel);
  EXPECT_EQ(r.status().rule(), "replay.kernel-wgmma") << r.status().ToString();
  EXPECT_EQ(r.status().where().file, name);
  EXPECT_EQ(r.status().where().line, line_number) << r.status().ToString();
  EXPECT_NE(r.status().message().find("role tensor_core_wg0 is the tensor core of warps 0-3"),
            std::string::npos)
      << r.status().message();
  EXPECT_NE(r.status().message().find("unsupported"), std::string::npos) << r.status().message();
  // A malformed tensor-core line is bad input at its line.
  auto bad = verifier::ParseKernelMap("# kernel: role p = warps 0\n"
                                      "# kernel: role tc = wgmma of warps 4\n",
                                      name);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().rule(), "replay.kernel-map");
  EXPECT_EQ(bad.status().where().line, 2) << bad.status().ToString();
}

}  // namespace
}  // namespace parity::ptx
