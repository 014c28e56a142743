// One thread's control skeleton executed over the PTX nvcc emits for the kernels of
// tests/import/: which protocol instructions each thread issues, on which barrier and buffer
// (symbol + offset), with which byte counts, coordinates and parities.
#include "sim/ptx/thread_exec.h"

#include <map>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "sim/ptx/ptx.h"

namespace parity::ptx {
namespace {

class ThreadExecTest : public ::testing::Test {
 protected:
  void SetUp() override {
#ifdef PARITY_NO_NVCC
    GTEST_SKIP() << "CUDA (nvcc) was not found when this was built; the kernels' PTX is missing";
#endif
  }
};

// "mbarrier.init", "cp.async.bulk.tensor", ... of each event, shortened to base + 2 modifiers.
std::vector<std::string> Names(const Function& f, const std::vector<ProtocolEvent>& events) {
  std::vector<std::string> out;
  for (const ProtocolEvent& e : events) {
    const Instruction& i = f.instructions[e.instruction];
    std::string n = i.base;
    for (size_t k = 0; k < i.modifiers.size() && k < 2; ++k) n += "." + i.modifiers[k];
    out.push_back(n);
  }
  return out;
}

TEST_F(ThreadExecTest, SingleTmaThreadZeroIssuesTheWholeProtocol) {
  auto m = ReadModule("tests/import/single_tma.ptx");
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  const Function& f = *FindEntry(*m, "single_tma_load").value();
  ThreadContext ctx;
  ctx.ntid = {128, 1, 1};
  ctx.args = {{1, 5}, {2, 7}};  // x, y
  auto ev = RunThread(*m, f, ctx);
  ASSERT_TRUE(ev.ok()) << ev.status().ToString();
  EXPECT_EQ(Names(f, *ev),
            (std::vector<std::string>{"mbarrier.init.shared::cta", "fence.mbarrier_init.release",
                                      "bar.sync", "mbarrier.arrive.expect_tx", "cp.async.bulk",
                                      "mbarrier.try_wait.parity"}));
  const std::string bar = "_ZZ15single_tma_load14CUtensorMap_stiiPtE3bar";
  const std::string tile = "_ZZ15single_tma_load14CUtensorMap_stiiPtE4tile";
  const std::vector<ProtocolEvent>& e = *ev;
  EXPECT_EQ(e[0].operands[0], Value::Address(bar, 0));
  EXPECT_EQ(e[0].operands[1], Value::Int(1));
  EXPECT_EQ(e[3].operands[1], Value::Address(bar, 0));
  EXPECT_EQ(e[3].operands[2], Value::Int(8192));
  // The copy: into the tile, through the tensor map parameter, at (x, y), completing on bar.
  EXPECT_EQ(e[4].operands[0], Value::Address(tile, 0));
  EXPECT_EQ(e[4].operands[1], Value::Address(f.params[0].name, 0));
  EXPECT_EQ(e[4].elements[1], (std::vector<Value>{Value::Int(5), Value::Int(7)}));
  EXPECT_EQ(e[4].operands[2], Value::Address(bar, 0));
  EXPECT_EQ(e[5].operands[1], Value::Address(bar, 0));
  EXPECT_EQ(e[5].operands[2], Value::Int(0));  // parity 0
}

TEST_F(ThreadExecTest, SingleTmaOtherThreadsOnlySyncAndWait) {
  auto m = ReadModule("tests/import/single_tma.ptx");
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  const Function& f = *FindEntry(*m, "single_tma_load").value();
  ThreadContext ctx;
  ctx.ntid = {128, 1, 1};
  ctx.tid = {37, 0, 0};
  auto ev = RunThread(*m, f, ctx);
  ASSERT_TRUE(ev.ok()) << ev.status().ToString();
  EXPECT_EQ(Names(f, *ev), (std::vector<std::string>{"bar.sync", "mbarrier.try_wait.parity"}));
}

TEST_F(ThreadExecTest, WarpSpecialisedProducerAndConsumers) {
  auto m = ReadModule("tests/import/ws_pipeline.ptx");
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  const Function& f = *FindEntry(*m, "ws_pipeline").value();
  constexpr int kTiles = 7;
  constexpr uint64_t kFull = 4 * 8192;  // barriers follow the 4 tiles in dynamic smem
  constexpr uint64_t kEmpty = kFull + 4 * 8;
  ThreadContext ctx;
  ctx.ntid = {96, 1, 1};
  ctx.args = {{1, kTiles}};

  // The producer (thread 0): 8 inits, then per k: [wait empty[s] once the ring wrapped],
  // expect_tx full[s] 8192, the copy into stage s at row k*64 completing on full[s].
  auto prod = RunThread(*m, f, ctx);
  ASSERT_TRUE(prod.ok()) << prod.status().ToString();
  const std::vector<ProtocolEvent>& p = *prod;
  size_t i = 0;
  int inits = 0;
  while (i < p.size() && f.instructions[p[i].instruction].HasModifier("init")) {
    ++inits;
    ++i;
  }
  EXPECT_EQ(inits, 8);
  ASSERT_LT(i + 1, p.size());
  EXPECT_EQ(f.instructions[p[i++].instruction].base, "fence");
  EXPECT_EQ(f.instructions[p[i++].instruction].base, "bar");
  for (int k = 0; k < kTiles; ++k) {
    const uint64_t s = k % 4;
    if (k >= 4) {
      ASSERT_LT(i, p.size());
      EXPECT_TRUE(f.instructions[p[i].instruction].HasModifier("try_wait")) << k;
      EXPECT_EQ(p[i].operands[1], Value::Address("smem", kEmpty + 8 * s)) << k;
      EXPECT_EQ(p[i].operands[2], Value::Int((k / 4 - 1) & 1)) << k;
      ++i;
    }
    ASSERT_LT(i + 1, p.size());
    EXPECT_TRUE(f.instructions[p[i].instruction].HasModifier("expect_tx")) << k;
    EXPECT_EQ(p[i].operands[1], Value::Address("smem", kFull + 8 * s)) << k;
    EXPECT_EQ(p[i].operands[2], Value::Int(8192)) << k;
    ++i;
    EXPECT_EQ(f.instructions[p[i].instruction].base, "cp") << k;
    EXPECT_EQ(p[i].operands[0], Value::Address("smem", 8192 * s)) << k;
    EXPECT_EQ(p[i].elements[1], (std::vector<Value>{Value::Int(0), Value::Int(64 * k)})) << k;
    EXPECT_EQ(p[i].operands[2], Value::Address("smem", kFull + 8 * s)) << k;
    ++i;
  }
  EXPECT_EQ(i, p.size());

  // A consumer warp's lane 0: per k, wait full[s] with parity (k/4)&1, then arrive on empty[s].
  ctx.tid = {64, 0, 0};
  auto cons = RunThread(*m, f, ctx);
  ASSERT_TRUE(cons.ok()) << cons.status().ToString();
  const std::vector<ProtocolEvent>& c = *cons;
  ASSERT_EQ(c.size(), 1u + 2 * kTiles);
  for (int k = 0; k < kTiles; ++k) {
    const uint64_t s = k % 4;
    const ProtocolEvent& w = c[1 + 2 * k];
    const ProtocolEvent& a = c[2 + 2 * k];
    EXPECT_TRUE(f.instructions[w.instruction].HasModifier("try_wait")) << k;
    EXPECT_EQ(w.operands[1], Value::Address("smem", kFull + 8 * s)) << k;
    EXPECT_EQ(w.operands[2], Value::Int((k / 4) & 1)) << k;
    EXPECT_TRUE(f.instructions[a.instruction].HasModifier("arrive")) << k;
    EXPECT_EQ(a.operands[1], Value::Address("smem", kEmpty + 8 * s)) << k;
  }
  // Its other lanes wait but never arrive; the producer warp's other lanes only sync.
  ctx.tid = {65, 0, 0};
  auto lane1 = RunThread(*m, f, ctx);
  ASSERT_TRUE(lane1.ok());
  EXPECT_EQ(lane1->size(), 1u + kTiles);
  ctx.tid = {5, 0, 0};
  auto idle = RunThread(*m, f, ctx);
  ASSERT_TRUE(idle.ok());
  EXPECT_EQ(Names(f, *idle), (std::vector<std::string>{"bar.sync"}));
}

std::vector<uint32_t> Range(uint32_t first, uint32_t last) {
  std::vector<uint32_t> out;
  for (uint32_t t = first; t <= last; ++t) out.push_back(t);
  return out;
}

TEST_F(ThreadExecTest, ClassifyThreadsFindsEachBehaviour) {
  auto single = ReadModule("tests/import/single_tma.ptx");
  ASSERT_TRUE(single.ok()) << single.status().ToString();
  ThreadContext cta;
  cta.ntid = {128, 1, 1};
  auto sc = ClassifyThreads(*single, *FindEntry(*single, "single_tma_load").value(), cta);
  ASSERT_TRUE(sc.ok()) << sc.status().ToString();
  ASSERT_EQ(sc->size(), 2u);
  EXPECT_EQ((*sc)[0].threads, (std::vector<uint32_t>{0}));
  EXPECT_EQ((*sc)[0].events.size(), 6u);
  EXPECT_EQ((*sc)[1].threads, Range(1, 127));
  EXPECT_EQ((*sc)[1].events.size(), 2u);

  // The warp-specialised kernel: the producer thread, its idle warp-mates, the consumer warps'
  // lane 0 (waits and arrives) and their other lanes (waits only).
  auto ws = ReadModule("tests/import/ws_pipeline.ptx");
  ASSERT_TRUE(ws.ok()) << ws.status().ToString();
  cta.ntid = {96, 1, 1};
  cta.args = {{1, 5}};
  auto wc = ClassifyThreads(*ws, *FindEntry(*ws, "ws_pipeline").value(), cta);
  ASSERT_TRUE(wc.ok()) << wc.status().ToString();
  ASSERT_EQ(wc->size(), 4u);
  EXPECT_EQ((*wc)[0].threads, (std::vector<uint32_t>{0}));
  EXPECT_EQ((*wc)[1].threads, Range(1, 31));
  EXPECT_EQ((*wc)[1].events.size(), 1u);  // bar.sync
  EXPECT_EQ((*wc)[2].threads, (std::vector<uint32_t>{32, 64}));
  EXPECT_EQ((*wc)[2].events.size(), 1u + 2 * 5);
  std::vector<uint32_t> waiters = Range(33, 63);
  for (uint32_t t : Range(65, 95)) waiters.push_back(t);
  EXPECT_EQ((*wc)[3].threads, waiters);
  EXPECT_EQ((*wc)[3].events.size(), 1u + 5);
  // k_tiles changes the producer's stream: 8 inits, fence, bar.sync, 5 x (expect_tx, copy)
  // and one wait on `empty` for k = 4.
  EXPECT_EQ((*wc)[0].events.size(), 8u + 2 + 2 * 5 + 1);
}

TEST_F(ThreadExecTest, RecoverBarriersFindsRingsAndNames) {
  ThreadContext cta;
  auto single = ReadModule("tests/import/single_tma.ptx");
  ASSERT_TRUE(single.ok()) << single.status().ToString();
  const Function& sf = *FindEntry(*single, "single_tma_load").value();
  cta.ntid = {128, 1, 1};
  auto sc = ClassifyThreads(*single, sf, cta);
  ASSERT_TRUE(sc.ok()) << sc.status().ToString();
  auto sb = RecoverBarriers(*single, sf, *sc);
  ASSERT_TRUE(sb.ok()) << sb.status().ToString();
  ASSERT_EQ(sb->size(), 1u);
  EXPECT_EQ((*sb)[0].name, "bar");
  EXPECT_EQ((*sb)[0].size, 1);
  EXPECT_EQ((*sb)[0].count, 1u);

  // full[4] (count 1) and empty[4] (count kConsumers = 2) after the tiles in dynamic smem.
  auto ws = ReadModule("tests/import/ws_pipeline.ptx");
  ASSERT_TRUE(ws.ok()) << ws.status().ToString();
  const Function& wf = *FindEntry(*ws, "ws_pipeline").value();
  cta.ntid = {96, 1, 1};
  cta.args = {{1, 3}};
  auto wc = ClassifyThreads(*ws, wf, cta);
  ASSERT_TRUE(wc.ok()) << wc.status().ToString();
  auto wb = RecoverBarriers(*ws, wf, *wc);
  ASSERT_TRUE(wb.ok()) << wb.status().ToString();
  ASSERT_EQ(wb->size(), 2u);
  EXPECT_EQ((*wb)[0].symbol, "smem");
  EXPECT_EQ((*wb)[0].offset, 32768u);
  EXPECT_EQ((*wb)[0].size, 4);
  EXPECT_EQ((*wb)[0].count, 1u);
  EXPECT_EQ((*wb)[0].init_lines.size(), 4u);
  EXPECT_EQ((*wb)[1].offset, 32800u);
  EXPECT_EQ((*wb)[1].size, 4);
  EXPECT_EQ((*wb)[1].count, 2u);
  EXPECT_EQ((*wb)[1].name, "smem_32800");
}

TEST_F(ThreadExecTest, MissingArgumentIsNamedAtTheBranchOnIt) {
  auto m = ReadModule("tests/import/ws_pipeline.ptx");
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  const Function& f = *FindEntry(*m, "ws_pipeline").value();
  ThreadContext ctx;
  ctx.ntid = {96, 1, 1};  // k_tiles (argument 1) not given
  auto ev = RunThread(*m, f, ctx);
  ASSERT_FALSE(ev.ok());
  EXPECT_EQ(ev.status().rule(), "import.missing-arg");
  // The parameter, its width, where it is read and how to give it.
  const std::string param = f.params[1].name;
  const std::string message = ev.status().message();
  EXPECT_NE(message.find("kernel parameter " + param + " (4 bytes at parameter-space byte 128)"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("ws_pipeline.cu:"), std::string::npos) << message;
  EXPECT_NE(message.find("pass --arg 1=VALUE"), std::string::npos) << message;
  EXPECT_EQ(ev.status().where().file, "tests/import/ws_pipeline.ptx");
  ASSERT_GT(ev.status().where().line, 0);
  // The culprit is a guarded branch of the PTX.
  bool is_guarded_branch = false;
  for (const Instruction& i : f.instructions) {
    if (i.line == ev.status().where().line) is_guarded_branch = i.base == "bra" && !i.guard.empty();
  }
  EXPECT_TRUE(is_guarded_branch) << ev.status().ToString();
}

TEST_F(ThreadExecTest, ClusterKernelElectsLaneZeroAndMapsPeers) {
  auto m = ReadModule("tests/import/cluster_multicast.ptx");
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  const Function& f = *FindEntry(*m, "cluster_multicast").value();
  ThreadContext ctx;
  ctx.ntid = {128, 1, 1};
  ctx.cluster_ctarank = 1;
  ctx.cluster_nctarank = 2;
  auto ev = RunThread(*m, f, ctx);
  ASSERT_TRUE(ev.ok()) << ev.status().ToString();
  const std::string released = "_ZZ17cluster_multicast14CUtensorMap_stPKjPjE8released";
  std::vector<Value> remote_arrives;
  bool multicast = false;
  for (const ProtocolEvent& e : *ev) {
    const Instruction& i = f.instructions[e.instruction];
    if (i.base == "mbarrier" && i.HasModifier("shared::cluster"))
      remote_arrives.push_back(e.operands[1]);
    if (i.base == "cp" && i.HasModifier("multicast::cluster")) {
      multicast = true;
      EXPECT_EQ(e.operands[3], Value::Int(3));      // the CTA mask
      EXPECT_EQ(e.operands[0].bits, 4096u);         // rank 1's half of the tile
      EXPECT_EQ(e.elements[1][1], Value::Int(32));  // row rank * 32
    }
  }
  EXPECT_TRUE(multicast);
  EXPECT_EQ(remote_arrives, (std::vector<Value>{Value::Address(released + "@cta0", 0),
                                                Value::Address(released + "@cta1", 0)}));
  // Lane 1 of warp 0 is not elected: no copy.
  ctx.tid = {1, 0, 0};
  auto other = RunThread(*m, f, ctx);
  ASSERT_TRUE(other.ok()) << other.status().ToString();
  for (const ProtocolEvent& e : *other) {
    EXPECT_NE(f.instructions[e.instruction].opcode.rfind("cp.async.bulk", 0), 0u);
  }
}

// Arithmetic semantics on hand-written PTX (no nvcc needed): each computed value is handed to an
// mbarrier.init so that the event shows it.
TEST(ThreadExecSemanticsTest, IntegerOperations) {
  const std::string text =
      ".version 9.0\n.target sm_90a\n.address_size 64\n"
      ".visible .entry k(.param .u32 k_param_0)\n{\n"
      "\t.reg .pred %p<4>;\n\t.reg .b32 %r<20>;\n\t.reg .b64 %rd<4>;\n"
      "\t.shared .align 8 .b8 bars[64];\n"
      "\tld.param.u32 %r1, [k_param_0];\n"           // 10
      "\tshr.s32 %r2, -16, 2;\n"                     // -4
      "\tshr.u32 %r3, -16, 28;\n"                    // 15
      "\tsetp.lt.s32 %p1, -1, 1;\n"                  // true
      "\tsetp.lt.u32 %p2, -1, 1;\n"                  // false
      "\tselp.b32 %r4, 7, 9, %p2;\n"                 // 9
      "\tmul.wide.s32 %rd1, -3, 5;\n"                // -15 (64-bit)
      "\tmul.lo.s64 %rd2, 0x7fffffffffffffff, 4;\n"  // wraps, no UB
      "\tmad.lo.s32 %r5, %r1, 3, 2;\n"               // 32
      "\tmov.u32 %r6, bars;\n"
      "\tadd.s32 %r7, %r6, 16;\n"    // bars+16
      "\trem.u32 %r8, %r1, 4;\n"     // 2
      "\tcvt.u32.u16 %r9, 65537;\n"  // 1
      "\tsetp.ne.s32 %p3, %r1, 10;\n"
      "\t@%p3 bra SKIP;\n"
      "\tmbarrier.init.shared::cta.b64 [%r7], %r2;\n"
      "\tmbarrier.init.shared::cta.b64 [%r7+8], %r3;\n"
      "\tmbarrier.init.shared::cta.b64 [bars], %r4;\n"
      "\tmbarrier.init.shared::cta.b64 [bars], %rd1;\n"
      "\tmbarrier.init.shared::cta.b64 [bars], %r5;\n"
      "\tmbarrier.init.shared::cta.b64 [bars], %r8;\n"
      "\tmbarrier.init.shared::cta.b64 [bars], %r9;\n"
      "\tselp.b32 %r10, 1, 0, %p1;\n"
      "\tmbarrier.init.shared::cta.b64 [bars], %r10;\n"
      "SKIP:\n\tret;\n}\n";
  auto m = ParseModule(text, "alu.ptx");
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  ThreadContext ctx;
  ctx.args = {{0, 10}};
  auto ev = RunThread(*m, m->functions[0], ctx);
  ASSERT_TRUE(ev.ok()) << ev.status().ToString();
  ASSERT_EQ(ev->size(), 8u);
  const std::vector<ProtocolEvent>& e = *ev;
  EXPECT_EQ(e[0].operands[0], Value::Address("bars", 16));
  EXPECT_EQ(e[0].operands[1], Value::Int(0xFFFFFFFCu));  // -4 as 32 bits
  EXPECT_EQ(e[1].operands[0], Value::Address("bars", 24));
  EXPECT_EQ(e[1].operands[1], Value::Int(15));
  EXPECT_EQ(e[2].operands[1], Value::Int(9));
  EXPECT_EQ(e[3].operands[1], Value::Int(static_cast<uint64_t>(int64_t{-15})));
  EXPECT_EQ(e[4].operands[1], Value::Int(32));
  EXPECT_EQ(e[5].operands[1], Value::Int(2));
  EXPECT_EQ(e[6].operands[1], Value::Int(1));
  EXPECT_EQ(e[7].operands[1], Value::Int(1));
  // Another argument takes the other branch: no events.
  ctx.args = {{0, 11}};
  auto skipped = RunThread(*m, m->functions[0], ctx);
  ASSERT_TRUE(skipped.ok());
  EXPECT_TRUE(skipped->empty());
}

TEST(ThreadExecSemanticsTest, BarrierCountFromLoadedDataIsUnsupported) {
  auto m = ParseModule(
      ".version 9.0\n.target sm_90a\n.address_size 64\n"
      ".visible .entry k(.param .u64 k_param_0)\n{\n"
      "\t.reg .b32 %r<3>;\n\t.reg .b64 %rd<3>;\n\t.shared .align 8 .u64 bar;\n"
      "\tld.param.u64 %rd1, [k_param_0];\n"
      "\tld.global.u32 %r1, [%rd1];\n"
      "\tmbarrier.init.shared::cta.b64 [bar], %r1;\n\tret;\n}\n",
      "load.ptx");
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  ThreadContext cta;
  cta.ntid = {32, 1, 1};
  cta.args = {{0, 0x1000}};
  auto classes = ClassifyThreads(*m, m->functions[0], cta);
  ASSERT_TRUE(classes.ok()) << classes.status().ToString();
  ASSERT_EQ(classes->size(), 1u);
  EXPECT_EQ((*classes)[0].threads.size(), 32u);
  auto b = RecoverBarriers(*m, m->functions[0], *classes);
  ASSERT_FALSE(b.ok());
  EXPECT_EQ(b.status().rule(), "import.unsupported-barrier");
  EXPECT_EQ(b.status().where().line, 11);  // the mbarrier.init
}

TEST(ThreadExecSemanticsTest, EndlessLoopIsRefused) {
  auto m = ParseModule(
      ".version 9.0\n.target sm_90a\n.address_size 64\n"
      ".visible .entry k()\n{\nL:\n\tbar.sync 0;\n\tbra.uni L;\n}\n",
      "loop.ptx");
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  ThreadContext ctx;
  ctx.max_steps = 1000;
  auto ev = RunThread(*m, m->functions[0], ctx);
  ASSERT_FALSE(ev.ok());
  EXPECT_EQ(ev.status().rule(), "import.unsupported-control");
  EXPECT_EQ(ev.status().where().file, "loop.ptx");
  EXPECT_GE(ev.status().where().line, 7);
}

// A hand-written kernel whose lanes store the results of warp-collective instructions: each
// `st.shared.u32 [out+K], %r` is recorded (record_shared_accesses) with the value it stores.
constexpr const char* kCollectives = R"(.version 8.7
.target sm_90a
.address_size 64
.shared .align 8 .b8 out[1024];
.visible .entry collectives(.param .align 8 .b8 params[32])
{
  .reg .pred %p<12>;
  .reg .b32 %r<64>;
  .reg .b64 %rd<4>;
  griddepcontrol.wait;
  setmaxnreg.inc.sync.aligned.u32 240;
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, out;
  griddepcontrol.launch_dependents;
  shfl.sync.idx.b32 %r3, %r1, 0, 31, -1;
  st.shared.u32 [%r2+0], %r3;
  shfl.sync.idx.b32 %r4, %r1, 3, 6175, -1;
  st.shared.u32 [%r2+4], %r4;
  shfl.sync.up.b32 %r5|%p1, %r1, 1, 0, -1;
  selp.u32 %r6, 1, 0, %p1;
  st.shared.u32 [%r2+8], %r5;
  st.shared.u32 [%r2+12], %r6;
  shfl.sync.down.b32 %r7|%p2, %r1, 2, 31, -1;
  selp.u32 %r8, 1, 0, %p2;
  st.shared.u32 [%r2+16], %r7;
  st.shared.u32 [%r2+20], %r8;
  shfl.sync.bfly.b32 %r9, %r1, 1, 31, -1;
  st.shared.u32 [%r2+24], %r9;
  shfl.sync.up.b32 %r10, %r1, 1, 4096, -1;
  st.shared.u32 [%r2+28], %r10;
  setp.lt.u32 %p3, %r1, 5;
  vote.sync.ballot.b32 %r11, %p3, -1;
  st.shared.u32 [%r2+32], %r11;
  vote.sync.all.pred %p4, %p3, -1;
  selp.u32 %r12, 1, 0, %p4;
  st.shared.u32 [%r2+36], %r12;
  vote.sync.any.pred %p5, %p3, -1;
  selp.u32 %r13, 1, 0, %p5;
  st.shared.u32 [%r2+40], %r13;
  vote.sync.uni.pred %p6, !%p3, -1;
  selp.u32 %r14, 1, 0, %p6;
  st.shared.u32 [%r2+44], %r14;
  and.b32 %r15, %r1, 3;
  match.sync.any.b32 %r16, %r15, -1;
  st.shared.u32 [%r2+48], %r16;
  match.sync.all.b32 %r17|%p7, 5, -1;
  selp.u32 %r18, 1, 0, %p7;
  st.shared.u32 [%r2+52], %r17;
  st.shared.u32 [%r2+56], %r18;
  redux.sync.add.u32 %r19, %r1, -1;
  st.shared.u32 [%r2+60], %r19;
  sub.s32 %r20, 3, %r1;
  redux.sync.min.s32 %r21, %r20, -1;
  st.shared.u32 [%r2+64], %r21;
  redux.sync.max.u32 %r22, %r1, -1;
  st.shared.u32 [%r2+68], %r22;
  ld.param::entry.u32 %r23, [params+4];
  ld.param.v2.u32 {%r24, %r25}, [params+8];
  mov.u64 %rd1, params;
  cvta.param.u64 %rd2, %rd1;
  ld.u32 %r26, [%rd2+16];
  add.s32 %r27, %r24, %r25;
  add.s32 %r28, %r27, %r26;
  add.s32 %r29, %r28, %r23;
  st.shared.u32 [%r2+72], %r29;
  setp.lt.u32 %p8, %r1, 8;
  @%p8 bra LOW;
  activemask.b32 %r30;
  st.shared.u32 [%r2+76], %r30;
  bra.uni JOIN;
LOW:
  activemask.b32 %r31;
  st.shared.u32 [%r2+76], %r31;
JOIN:
  setp.lt.u32 %p9, %r1, 4;
  @%p9 bra DONE;
  elect.sync %r32|%p10, -1;
  st.shared.u32 [%r2+80], %r32;
  shfl.sync.idx.b32 %r33, %r1, 2, 31, -4;
  st.shared.u32 [%r2+84], %r33;
DONE:
  ret;
}
)";

// Per lane: the values stored at each `out` offset.
std::vector<std::map<uint64_t, Value>> Stores(
    const Function& f, const std::vector<std::vector<ProtocolEvent>>& lanes) {
  std::vector<std::map<uint64_t, Value>> out;
  for (const auto& events : lanes) {
    std::map<uint64_t, Value> m;
    for (const ProtocolEvent& e : events) {
      if (f.instructions[e.instruction].base == "st") m[e.operands[0].bits] = e.operands[1];
    }
    out.push_back(std::move(m));
  }
  return out;
}

ThreadContext CollectivesContext() {
  ThreadContext ctx;
  ctx.ntid = {32, 1, 1};
  ctx.record_shared_accesses = true;
  ctx.params = {{{"params", 4}, 1}, {{"params", 8}, 10}, {{"params", 12}, 100},
                {{"params", 16}, 1000}};
  return ctx;
}

// PTX ISA 9.7.8.6 (shfl.sync) and 9.7.13 (vote.sync, match.sync, redux.sync, activemask,
// elect.sync), computed from the lanes' own values (setmaxnreg and griddepcontrol, which
// production kernels issue around them, change nothing the importer follows).
TEST(WarpCollectives, EveryLaneGetsTheValueThePtxIsaDefines) {
  auto m = ParseModule(kCollectives, "collectives.ptx");
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  const Function& f = *FindEntry(*m, "collectives").value();
  auto lanes = RunWarp(*m, f, CollectivesContext(), 0);
  ASSERT_TRUE(lanes.ok()) << lanes.status().ToString();
  const auto stores = Stores(f, *lanes);
  ASSERT_EQ(stores.size(), 32u);
  for (uint64_t l = 0; l < 32; ++l) {
    const auto& s = stores[l];
    SCOPED_TRACE("lane " + std::to_string(l));
    EXPECT_EQ(s.at(0), Value::Int(0));                            // idx from lane 0
    EXPECT_EQ(s.at(4), Value::Int((l & ~uint64_t{7}) + 3));       // idx 3 in 8-lane segments
    EXPECT_EQ(s.at(8), Value::Int(l == 0 ? 0 : l - 1));           // up 1
    EXPECT_EQ(s.at(12), Value::Int(l >= 1 ? 1 : 0));
    EXPECT_EQ(s.at(16), Value::Int(l <= 29 ? l + 2 : l));         // down 2, clamp 31
    EXPECT_EQ(s.at(20), Value::Int(l <= 29 ? 1 : 0));
    EXPECT_EQ(s.at(24), Value::Int(l ^ 1));                       // butterfly
    EXPECT_EQ(s.at(28), Value::Int(l % 16 == 0 ? l : l - 1));     // up 1 in 16-lane segments
    EXPECT_EQ(s.at(32), Value::Int(0x1f));                        // ballot(l < 5)
    EXPECT_EQ(s.at(36), Value::Int(0));                           // all
    EXPECT_EQ(s.at(40), Value::Int(1));                           // any
    EXPECT_EQ(s.at(44), Value::Int(0));                           // uni(!p)
    EXPECT_EQ(s.at(48), Value::Int(uint64_t{0x11111111} << (l & 3)));  // match.any(l & 3)
    EXPECT_EQ(s.at(52), Value::Int(0xffffffff));                  // match.all(5)
    EXPECT_EQ(s.at(56), Value::Int(1));
    EXPECT_EQ(s.at(60), Value::Int(496));                         // redux.add
    EXPECT_EQ(s.at(64), Value::Int(static_cast<uint32_t>(3 - 31)));  // redux.min.s32
    EXPECT_EQ(s.at(68), Value::Int(31));                          // redux.max
    // ld.param::entry [params+4] + ld.param.v2 [params+8] + a generic load through cvta.param.
    EXPECT_EQ(s.at(72), Value::Int(1111));
    // activemask: the lanes converged at each side of the branch.
    EXPECT_EQ(s.at(76), Value::Int(l < 8 ? 0xff : 0xffffff00));
    if (l < 4) {
      EXPECT_EQ(s.count(80), 0u);
      continue;
    }
    // Lanes 0-3 have exited: elect.sync picks lane 4; a shuffle from exited lane 2 (in the mask
    // 0xfffffffc) reads an undefined value, which the importer does not know.
    EXPECT_EQ(s.at(80), Value::Int(4));
    EXPECT_EQ(s.at(84), Value::Unknown());
  }
}

// The integer bit instructions of tile schedulers and fast division (PTX ISA 9.7.1.3 mul.hi,
// 9.7.7 bfi/bfe/shf, 9.7.8.6 lop3, 9.7.9.7 prmt), setp on a float parameter's bits (CUTLASS's
// `beta == 0`), and a wgmma-style descriptor `(addr >> 4) & 0x3fff` in a 16-bit register, which
// keeps the address it came from (DeepGEMM's B stages lie at byte 131072).
// Bit operations on a shared address below its segment's alignment are computed on the offset:
// the dynamic segment's base is taken as 1024-byte aligned (CuTe asserts a swizzled tile is), a
// static variable's as its .align. CuTe's alignment check and Swizzle<3,4,3> of an address.
TEST(SharedAddressBits, LowBitsOfAnAlignedBaseAreTheOffsets) {
  auto kernel = [](const std::string& decl) {
    return ".version 8.7\n.target sm_90a\n.address_size 64\n" + decl +
           R"(
.visible .entry bits()
{
  .reg .pred %p<3>;
  .reg .b32 %r<9>;
  mov.u32 %r1, smem;
  add.s32 %r2, %r1, 1024;
  and.b32 %r3, %r2, 1023;
  setp.ne.s32 %p1, %r3, 0;
  @%p1 bra DONE;
  add.s32 %r4, %r1, 160;
  and.b32 %r5, %r4, 896;
  shr.u32 %r6, %r5, 3;
  xor.b32 %r7, %r6, %r4;
  mbarrier.arrive.shared::cta.b64 _, [%r7];
DONE:
  ret;
}
)";
  };
  ThreadContext ctx;
  ctx.ntid = {32, 1, 1};
  auto m = ParseModule(kernel(".extern .shared .align 16 .b8 smem[];"), "bits.ptx");
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  const Function& f = *FindEntry(*m, "bits").value();
  auto ev = RunThread(*m, f, ctx);
  ASSERT_TRUE(ev.ok()) << ev.status().ToString();
  ASSERT_EQ(ev->size(), 1u);
  // 160 = 0b1010'0000: bits 7-9 (128) shifted to bit 4 (16) and xor-ed in: 176.
  EXPECT_EQ((*ev)[0].operands[1], Value::Address("smem", 176));
  // A static variable aligned to 16 only: its address bits above 16 are not known.
  auto s = ParseModule(kernel(".shared .align 16 .b8 smem[2048];"), "bits16.ptx");
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  auto refused = RunThread(*s, *FindEntry(*s, "bits").value(), ctx);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().rule(), "import.unsupported-control");
  EXPECT_EQ(refused.status().where().line, 13);
}

TEST(IntegerOps, ValuesAreThePtxIsas) {
  const std::string text = R"(.version 8.7
.target sm_90a
.address_size 64
.shared .align 8 .b8 out[1024];
.shared .align 1024 .b8 big[262144];
.visible .entry ops(.param .align 8 .b8 params[16])
{
  .reg .pred %p<4>;
  .reg .b16 %rs<4>;
  .reg .b32 %r<40>;
  .reg .f32 %f<4>;
  .reg .b64 %rd<4>;
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, out;
  bfi.b32 %r3, %r1, 0xf0, 4, 3;
  st.shared.u32 [%r2+0], %r3;
  bfe.u32 %r4, 0xabcd, 4, 8;
  st.shared.u32 [%r2+4], %r4;
  bfe.s32 %r5, 0xf0, 4, 4;
  st.shared.u32 [%r2+8], %r5;
  shf.l.wrap.b32 %r6, 0x80000001, 0x1, 4;
  st.shared.u32 [%r2+12], %r6;
  shf.r.clamp.b32 %r7, 0x10, 0x3, 40;
  st.shared.u32 [%r2+16], %r7;
  prmt.b32 %r8, 0x33221100, 0x77665544, 0x4321;
  st.shared.u32 [%r2+20], %r8;
  lop3.b32 %r9, 0xf0, 0xcc, 0xaa, 0x96;
  st.shared.u32 [%r2+24], %r9;
  mul.hi.u32 %r10, 0x80000000, 6;
  st.shared.u32 [%r2+28], %r10;
  mul.hi.s32 %r11, -2, 0x40000000;
  st.shared.u32 [%r2+32], %r11;
  mad.hi.u32 %r12, 0x80000000, 6, 10;
  st.shared.u32 [%r2+36], %r12;
  ld.param.f32 %f1, [params+0];
  setp.eq.f32 %p1, %f1, 0f00000000;
  selp.u32 %r13, 1, 0, %p1;
  st.shared.u32 [%r2+40], %r13;
  ld.param.f32 %f2, [params+4];
  setp.gtu.f32 %p2, %f2, 0f3F800000;
  selp.u32 %r14, 1, 0, %p2;
  st.shared.u32 [%r2+44], %r14;
  mov.u32 %r15, big;
  add.s32 %r16, %r15, 131072;
  shr.u32 %r17, %r16, 4;
  cvt.u16.u32 %rs1, %r17;
  and.b16 %rs2, %rs1, 16383;
  mov.u16 %rs3, 0;
  mov.b32 %r18, {%rs2, %rs3};
  st.shared.u32 [%r2+48], %r18;
  ret;
}
)";
  auto m = ParseModule(text, "ops.ptx");
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  const Function& f = *FindEntry(*m, "ops").value();
  ThreadContext ctx;
  ctx.ntid = {32, 1, 1};
  ctx.record_shared_accesses = true;
  ctx.params = {{{"params", 0}, 0x80000000u},  // -0.0f == 0
                {{"params", 4}, 0x7fc00000u}};  // NaN: unordered compares are true
  auto lanes = RunWarp(*m, f, ctx, 0);
  ASSERT_TRUE(lanes.ok()) << lanes.status().ToString();
  const auto s = Stores(f, *lanes)[5];
  EXPECT_EQ(s.at(0), Value::Int((0xf0 & ~0x70u) | (5u << 4)));  // bits 4..6 := lane 5
  EXPECT_EQ(s.at(4), Value::Int(0xbc));
  EXPECT_EQ(s.at(8), Value::Int(0xffffffff));                // the field 0xf sign-extends
  EXPECT_EQ(s.at(12), Value::Int(0x18));                     // (0x1:0x80000001) << 4, high word
  EXPECT_EQ(s.at(16), Value::Int(3));                        // clamp: by 32, the high word
  EXPECT_EQ(s.at(20), Value::Int(0x44332211));
  EXPECT_EQ(s.at(24), Value::Int(0xf0 ^ 0xcc ^ 0xaa));      // 0x96: a ^ b ^ c
  EXPECT_EQ(s.at(28), Value::Int(3));
  EXPECT_EQ(s.at(32), Value::Int(0xffffffff));               // -2 * 2^30 = -2^31: high word -1
  EXPECT_EQ(s.at(36), Value::Int(13));
  EXPECT_EQ(s.at(40), Value::Int(1));
  EXPECT_EQ(s.at(44), Value::Int(1));
  const Value d = s.at(48);
  EXPECT_EQ(d.kind, Value::Kind::kDerived);
  EXPECT_EQ(d.symbol, "big");
  EXPECT_EQ(d.bits, 131072u);
  EXPECT_EQ(d.shift, 4);
}

// Lanes whose masks never agree cannot all complete: refused at the PTX line, naming each lane's
// instruction and mask. A branch on a shuffled value the importer does not know says where it
// comes from, and one on a parameter field nobody gave names the field.
TEST(WarpCollectives, MismatchedMasksAndUnknownValuesAreNamed) {
  const std::string text = R"(.version 8.7
.target sm_90a
.address_size 64
.visible .entry mismatch(.param .align 8 .b8 params[32], .param .u64 ptr)
{
  .reg .pred %p<4>;
  .reg .b32 %r<8>;
  .reg .b64 %rd<4>;
  mov.u32 %r1, %tid.x;
  ld.param.u32 %r2, [params+12];
  setp.eq.u32 %p1, %r2, 0;
  @%p1 bra UNKNOWN;
  setp.lt.u32 %p2, %r1, 16;
  @%p2 bra HIGH;
  shfl.sync.idx.b32 %r4, %r1, 0, 31, -1;
  ret;
HIGH:
  vote.sync.ballot.b32 %r3, %p2, -1;
  ret;
UNKNOWN:
  ld.param.u64 %rd1, [ptr];
  ld.global.u32 %r5, [%rd1];
  shfl.sync.idx.b32 %r6, %r5, 0, 31, -1;
  setp.eq.u32 %p3, %r6, 0;
  @%p3 bra END;
  membar.cta;
END:
  ret;
}
)";
  auto m = ParseModule(text, "mismatch.ptx");
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  const Function& f = *FindEntry(*m, "mismatch").value();
  ThreadContext ctx;
  ctx.ntid = {32, 1, 1};
  // params+12 not given: the branch on it names the field, its width and the load.
  auto missing = RunWarp(*m, f, ctx, 0);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().rule(), "import.missing-param");
  EXPECT_EQ(missing.status().where().line, 12);
  EXPECT_NE(missing.status().message().find(
                "kernel parameter params+12 (4 bytes at parameter-space byte 12), read by "
                "`ld.param.u32` at PTX line 10, which no --param or --arg gives; pass --param "
                "params+12=VALUE"),
            std::string::npos)
      << missing.status().ToString();
  // Lanes 16-31 shuffle with the full mask while lanes 0-15 vote with it: neither completes.
  ctx.params = {{{"params", 12}, 1}};
  auto mismatch = RunWarp(*m, f, ctx, 0);
  ASSERT_FALSE(mismatch.ok());
  EXPECT_EQ(mismatch.status().rule(), "import.unsupported-control");
  EXPECT_EQ(mismatch.status().where().line, 18);
  EXPECT_NE(mismatch.status().message().find(
                ": lanes 0-15 at PTX line 18 (`vote.sync.ballot.b32`, mask 0xffffffff); lanes "
                "16-31 at PTX line 15 (`shfl.sync.idx.b32`, mask 0xffffffff)"),
            std::string::npos)
      << mismatch.status().ToString();
  // A loaded value shuffled and branched on around more than arithmetic (a branch around
  // arithmetic only joins, data_branch.h): the load is named.
  ctx.params = {{{"params", 12}, 0}};
  auto unknown = RunWarp(*m, f, ctx, 0);
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.status().rule(), "import.unsupported-control");
  EXPECT_EQ(unknown.status().where().line, 25);
  EXPECT_NE(unknown.status().message().find("`ld.global.u32` at PTX line 22"), std::string::npos)
      << unknown.status().ToString();
}

// ldmatrix / stmatrix: only the lanes that give a row address (.x1: 0-7, .x2: 0-15, .x4: all)
// access shared memory; the others' address operands are ignored (here they are unknown).
TEST(WarpCollectives, MatrixLoadsAndStoresTakeAddressesFromTheirRowLanesOnly) {
  const std::string text = R"(.version 8.7
.target sm_90a
.address_size 64
.shared .align 16 .b8 tile[4096];
.visible .entry rows(.param .u64 g)
{
  .reg .b32 %r<16>;
  .reg .b64 %rd<4>;
  .reg .pred %p<2>;
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, tile;
  shl.b32 %r3, %r1, 4;
  add.s32 %r4, %r2, %r3;
  setp.lt.u32 %p1, %r1, 16;
  ld.param.u64 %rd1, [g];
  ld.global.u32 %r5, [%rd1];
  selp.b32 %r6, %r4, %r5, %p1;
  stmatrix.sync.aligned.x2.m8n8.shared.b16 [%r6], {%r1, %r1};
  ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%r7}, [%r4];
  ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%r8, %r9, %r10, %r11}, [%r4];
  ret;
}
)";
  auto m = ParseModule(text, "rows.ptx");
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  const Function& f = *FindEntry(*m, "rows").value();
  ThreadContext ctx;
  ctx.ntid = {32, 1, 1};
  ctx.args = {{0, 0}};
  ctx.record_shared_accesses = true;
  auto lanes = RunWarp(*m, f, ctx, 0);
  ASSERT_TRUE(lanes.ok()) << lanes.status().ToString();
  for (uint32_t l = 0; l < 32; ++l) {
    std::vector<std::string> ops;
    for (const ProtocolEvent& e : (*lanes)[l]) {
      ops.push_back(f.instructions[e.instruction].opcode);
      EXPECT_EQ(e.operands[ops.back()[0] == 's' ? 0 : 1], Value::Address("tile", 16 * l))
          << "lane " << l;
    }
    std::vector<std::string> want;
    if (l < 16) want.push_back("stmatrix.sync.aligned.x2.m8n8.shared.b16");
    if (l < 8) want.push_back("ldmatrix.sync.aligned.m8n8.x1.shared.b16");
    want.push_back("ldmatrix.sync.aligned.m8n8.x4.shared.b16");
    EXPECT_EQ(ops, want) << "lane " << l;
  }
}

// mov.b64 {%lo, %hi}, %rd splits a value: an integer into its halves, a wgmma descriptor into a
// low half that keeps the shared address (CuTe's DescriptorIterator adds a stage's offset to the
// low half and packs the descriptor again, cute/atom/mma_traits_sm90_gmma.hpp:327), so that the
// wgmma names the stage it reads rather than nothing.
TEST(ThreadExec, SplittingADescriptorKeepsTheAddressInItsLowHalf) {
  const std::string text = R"(.version 8.7
.target sm_90a
.address_size 64
.shared .align 1024 .b8 tile[65536];
.visible .entry desc()
{
  .reg .b32 %r<12>;
  .reg .b64 %rd<12>;
  .reg .f32 %f<5>;
  mov.u32 %r1, tile;
  shr.u32 %r2, %r1, 4;
  and.b32 %r3, %r2, 16383;
  mov.u32 %r7, 1073741824;
  mov.b64 %rd2, {%r3, %r7};
  mov.b64 {%r4, %r5}, %rd2;
  add.s32 %r6, %r4, 1024;
  mov.b64 %rd3, {%r6, %r5};
  wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%f1, %f2, %f3, %f4}, %rd2, %rd3, 1, 1, 1, 0, 0;
  mov.b64 %rd9, 21474836487;
  mov.b64 {%r8, %r9}, %rd9;
  mbarrier.init.shared::cta.b64 [%r1], %r8;
  mbarrier.init.shared::cta.b64 [%r1], %r9;
  ret;
}
)";
  auto m = ParseModule(text, "desc.ptx");
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  const Function& f = *FindEntry(*m, "desc").value();
  ThreadContext ctx;
  ctx.record_shared_accesses = true;  // wgmma's shared operands
  auto events = RunThread(*m, f, ctx);
  ASSERT_TRUE(events.ok()) << events.status().ToString();
  std::vector<const ProtocolEvent*> wgmma, init;
  for (const ProtocolEvent& e : *events) {
    const std::string& op = f.instructions[e.instruction].opcode;
    if (op.rfind("wgmma.mma_async", 0) == 0) wgmma.push_back(&e);
    if (op.rfind("mbarrier.init", 0) == 0) init.push_back(&e);
  }
  ASSERT_EQ(wgmma.size(), 1u);
  ASSERT_GE(wgmma[0]->operands.size(), 3u);
  // The descriptors' address fields are the address >> 4: stage 0 and 16384 bytes on.
  EXPECT_EQ(wgmma[0]->operands[1], Value::Derived("tile", 0, 4))
      << wgmma[0]->operands[1].ToString();
  EXPECT_EQ(wgmma[0]->operands[2], Value::Derived("tile", 16384, 4))
      << wgmma[0]->operands[2].ToString();
  // 0x0000000500000007 splits into 7 (low) and 5 (high).
  ASSERT_EQ(init.size(), 2u);
  EXPECT_EQ(init[0]->operands[1], Value::Int(7)) << init[0]->operands[1].ToString();
  EXPECT_EQ(init[1]->operands[1], Value::Int(5)) << init[1]->operands[1].ToString();
}

}  // namespace
}  // namespace parity::ptx
