// One thread's control skeleton executed over the PTX nvcc emits for the kernels of
// tests/import/: which protocol instructions each thread issues, on which barrier and buffer
// (symbol + offset), with which byte counts, coordinates and parities.
#include "sim/ptx/thread_exec.h"

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
  EXPECT_NE(ev.status().message().find("kernel parameter " + param + " (4 bytes at parameter-space byte 128)"),
            std::string::npos)
      << ev.status().ToString();
  EXPECT_NE(ev.status().message().find("ws_pipeline.cu:"), std::string::npos) << ev.status().ToString();
  EXPECT_NE(ev.status().message().find("pass --arg 1=VALUE"), std::string::npos) << ev.status().ToString();
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

}  // namespace
}  // namespace parity::ptx
