// The lockstep execution of a warp (sim/ptx/warp_registers.h: an instruction whose registers read
// alike in every lane runs once for all of them, lanes that branch apart meet again where their
// paths join) against the reference that runs every lane on its own: the same events lane by
// lane, and on production kernels of the corpus the same schedule byte for byte.
#include <cstdio>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "sim/ptx/importer.h"
#include "sim/ptx/ptx.h"
#include "sim/ptx/thread_exec.h"

namespace parity::ptx {
namespace {

// Lanes that diverge and meet again: a loop whose trip count is the lane's own (laneid % 4), a
// cp.async to the lane's own word after the loop (its destination is read, not written), an
// if/else with a protocol operation on each side, a shuffle after they meet of a value each lane
// computed on its own path, the upper half exiting early and the lower half electing a leader.
constexpr char kDivergentWarp[] = R"(.version 8.7
.target sm_90a
.address_size 64
.visible .entry divergent(.param .u32 base)
{
  .reg .pred %p<8>;
  .reg .b32 %r<24>;
  .reg .b64 %rd<4>;
  .shared .align 8 .b64 bar[8];
  .shared .align 16 .b8 buf[128];
  ld.param.u32 %r1, [base];
  mov.u32 %r2, %laneid;
  mov.u32 %r3, bar;
  and.b32 %r4, %r2, 3;
  mov.u32 %r5, 0;
  setp.eq.s32 %p1, %r4, 0;
  @%p1 bra AFTER_LOOP;
LOOP:
  mbarrier.arrive.shared::cta.b64 _, [%r3];
  add.s32 %r5, %r5, 1;
  setp.lt.u32 %p2, %r5, %r4;
  @%p2 bra LOOP;
AFTER_LOOP:
  shl.b32 %r15, %r2, 2;
  mov.u32 %r16, buf;
  add.s32 %r17, %r16, %r15;
  mov.u64 %rd1, 0;
  cp.async.ca.shared.global [%r17], [%rd1], 4;
  add.s32 %r6, %r1, 8;
  setp.lt.u32 %p3, %r2, 5;
  @%p3 bra LOW;
  add.s32 %r7, %r3, 16;
  mbarrier.arrive.shared::cta.b64 _, [%r7];
  mov.u32 %r8, 2;
  bra.uni JOIN;
LOW:
  add.s32 %r7, %r3, 24;
  mbarrier.arrive.shared::cta.b64 _, [%r7];
  mov.u32 %r8, 3;
JOIN:
  mul.lo.s32 %r9, %r8, %r6;
  shfl.sync.idx.b32 %r10, %r9, 7, 31, -1;
  and.b32 %r11, %r10, 56;
  add.s32 %r12, %r3, %r11;
  mbarrier.arrive.shared::cta.b64 _, [%r12];
  setp.ge.u32 %p4, %r2, 16;
  @%p4 ret;
  elect.sync %r13|%p5, 65535;
  @!%p5 bra DONE;
  add.s32 %r14, %r3, %r13;
  mbarrier.arrive.shared::cta.b64 _, [%r14+32];
DONE:
  mbarrier.arrive.shared::cta.b64 _, [%r3+40];
  ret;
}
)";

Expected<std::vector<std::vector<ProtocolEvent>>> RunDivergent(const Module& m, bool lockstep) {
  auto f = FindEntry(m, "divergent");
  if (!f.ok()) return f.status();
  ThreadContext ctx;
  ctx.ntid = {32, 1, 1};
  ctx.args = {{0, 100}};
  ctx.lockstep = lockstep;
  return RunWarp(m, **f, ctx, 0);
}

TEST(LockstepTest, DivergentLanesIssueWhatEachLaneAloneIssues) {
  auto m = ParseModule(kDivergentWarp, "divergent.ptx");
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  auto f = FindEntry(*m, "divergent");
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  auto shared = RunDivergent(*m, true);
  auto alone = RunDivergent(*m, false);
  ASSERT_TRUE(shared.ok()) << shared.status().ToString();
  ASSERT_TRUE(alone.ok()) << alone.status().ToString();
  ASSERT_EQ(shared->size(), 32u);
  for (size_t lane = 0; lane < 32; ++lane) {
    EXPECT_EQ((*shared)[lane], (*alone)[lane]) << "lane " << lane;
  }
  // What each lane issues (the arrive's offset in `bar`): laneid % 4 arrives on bar + 0 in the
  // loop; one on its side of the if (bar + 24 below lane 5, bar + 16 from it); one on
  // bar + (lane 7's 2 * 108 & 56) = bar + 24 after the shuffle; the upper half exits, lane 0 is
  // elected (bar + 32), and the lower half arrives on bar + 40.
  auto offsets = [&](size_t lane) {
    std::vector<uint64_t> out;
    for (const ProtocolEvent& e : (*shared)[lane]) {
      if ((**f).instructions[e.instruction].base != "mbarrier") continue;
      out.push_back(e.operands[1].bits);
    }
    return out;
  };
  EXPECT_EQ(offsets(0), (std::vector<uint64_t>{24, 24, 32, 40}));
  EXPECT_EQ(offsets(3), (std::vector<uint64_t>{0, 0, 0, 24, 24, 40}));
  EXPECT_EQ(offsets(6), (std::vector<uint64_t>{0, 0, 16, 24, 40}));
  EXPECT_EQ(offsets(17), (std::vector<uint64_t>{0, 16, 24}));
  // Each lane's cp.async writes its own word of buf.
  for (size_t lane : {0u, 5u, 31u}) {
    bool found = false;
    for (const ProtocolEvent& e : (*shared)[lane]) {
      if ((**f).instructions[e.instruction].base != "cp") continue;
      EXPECT_EQ(e.operands[0], Value::Address("buf", 4 * lane)) << "lane " << lane;
      found = true;
    }
    EXPECT_TRUE(found) << "lane " << lane;
  }
}

// The manifest line of `name` (tests/import/production/kernels.tsv) as ImportOptions, and the
// path of its compressed PTX.
struct CorpusKernel {
  std::string ptx_xz;
  ImportOptions options;
};

CorpusKernel ReadManifest(const std::string& name) {
  std::ifstream in("tests/import/production/kernels.tsv");
  std::string line;
  CorpusKernel k;
  while (std::getline(in, line)) {
    std::vector<std::string> fields;
    std::stringstream ss(line);
    std::string field;
    while (std::getline(ss, field, '\t')) fields.push_back(field);
    if (fields.size() < 4 || fields[0] != name) continue;
    k.ptx_xz = fields[2];
    std::stringstream words(fields[3]);
    std::string opt, value;
    while (words >> opt >> value) {
      ImportOptions& o = k.options;
      if (opt == "--entry") {
        o.entry = value;
      } else if (opt == "--block") {
        o.block = {static_cast<uint32_t>(std::stoul(value)), 1, 1};
      } else if (opt == "--cluster") {
        o.cluster_x = static_cast<uint32_t>(std::stoul(value));
        o.cluster_y = static_cast<uint32_t>(std::stoul(value.substr(value.find(',') + 1)));
      } else if (opt == "--clusters") {
        o.clusters = std::stoll(value);
      } else if (opt == "--arg") {
        o.args[std::stoi(value)] = std::stoull(value.substr(value.find('=') + 1));
      } else if (opt == "--param") {
        o.params.push_back(ParseParamArg(value).value());
      } else if (opt == "--tensormap") {
        o.tensor_maps.push_back(ParseTensorMapArg(value).value());
      } else {
        ADD_FAILURE() << name << ": option " << opt << " is not one this test reads";
      }
    }
  }
  return k;
}

std::string Decompress(const std::string& path) {
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(("xz -dc " + path).c_str(), "r"), pclose);
  std::string out;
  if (pipe == nullptr) return out;
  char buf[1 << 16];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), pipe.get())) > 0) out.append(buf, n);
  return out;
}

// Kernels whose warps diverge (FA3's elected producer, data-dependent softmax branches and its tile
// scheduler's shuffle and shared word; CUTLASS's KernelTma without warp specialisation): the
// schedule lockstep execution imports is the one the lane-by-lane reference imports.
TEST(LockstepTest, CorpusSchedulesEqualTheLaneByLaneReference) {
  for (const std::string name : {"fa3_fwd_hdim128_bf16_causal", "cutlass49_kernel_tma"}) {
    SCOPED_TRACE(name);
    CorpusKernel k = ReadManifest(name);
    ASSERT_FALSE(k.ptx_xz.empty()) << "not in kernels.tsv";
    auto m = ParseModule(Decompress(k.ptx_xz), name + ".ptx");
    ASSERT_TRUE(m.ok()) << m.status().ToString();
    auto shared = ImportSchedule(*m, k.options);
    ASSERT_TRUE(shared.ok()) << shared.status().ToString();
    k.options.lockstep = false;
    auto alone = ImportSchedule(*m, k.options);
    ASSERT_TRUE(alone.ok()) << alone.status().ToString();
    EXPECT_EQ(*shared, *alone);
    EXPECT_NE(shared->find("role "), std::string::npos);
  }
}

// DeepGEMM's fp8 GEMM, whose consumer lanes read scales at addresses of their own: every warp of
// the cluster's first CTA issues, lane by lane, the events the reference issues (events, not the
// whole import: the reference import takes seconds).
TEST(LockstepTest, DeepGemmFp8WarpsIssueTheReferenceEvents) {
  CorpusKernel k = ReadManifest("deepgemm_sm90_fp8_gemm_1d2d");
  ASSERT_FALSE(k.ptx_xz.empty()) << "not in kernels.tsv";
  auto m = ParseModule(Decompress(k.ptx_xz), "fp8.ptx");
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  auto f = FindEntry(*m, k.options.entry);
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  ThreadContext ctx;
  ctx.ntid = k.options.block;
  ctx.cluster_nctaid = {k.options.cluster_x, k.options.cluster_y, 1};
  ctx.nctaid = {k.options.cluster_x, k.options.cluster_y, 1};
  ctx.cluster_nctarank = k.options.cluster_x * k.options.cluster_y;
  ctx.args = k.options.args;
  ctx.record_shared_accesses = true;
  size_t events = 0;
  for (uint32_t w = 0; 32 * w < ctx.ntid[0]; ++w) {
    ctx.lockstep = true;
    auto shared = RunWarp(*m, **f, ctx, w);
    ctx.lockstep = false;
    auto alone = RunWarp(*m, **f, ctx, w);
    ASSERT_TRUE(shared.ok()) << shared.status().ToString();
    ASSERT_TRUE(alone.ok()) << alone.status().ToString();
    for (size_t lane = 0; lane < 32; ++lane) {
      EXPECT_EQ((*shared)[lane], (*alone)[lane]) << "warp " << w << " lane " << lane;
      events += (*shared)[lane].size();
    }
  }
  EXPECT_GT(events, 10000u);
}

}  // namespace
}  // namespace parity::ptx
