#include "sim/ir/parser.h"

#include <random>
#include <string>
#include <variant>
#include <vector>

#include "gtest/gtest.h"
#include "sim/ir/ir.h"
#include "sim/ir/printer.h"
#include "tests/sim/ir/examples.h"

namespace parity::ir {
namespace {

using testing::ExampleNames;
using testing::ExamplePath;
using testing::ReadExample;

template <typename T>
const T* OpAs(const Stmt& s) {
  const Op* op = std::get_if<Op>(&s.node);
  return op == nullptr ? nullptr : std::get_if<T>(op);
}

TEST(ParserTest, EveryExampleParses) {
  for (const std::string& name : ExampleNames()) {
    SCOPED_TRACE(name);
    const std::string text = ReadExample(name);
    ASSERT_FALSE(text.empty()) << "example not found in runfiles: " << ExamplePath(name);
    auto p = ParseFile(ExamplePath(name));
    ASSERT_TRUE(p.ok()) << p.status().ToString();
    EXPECT_EQ(p->name, name);
    EXPECT_EQ(p->file, ExamplePath(name));
    EXPECT_FALSE(p->roles.empty());
  }
}

TEST(ParserTest, SingleTmaLoadStructure) {
  auto p = ParseFile(ExamplePath("single_tma_load"));
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  ASSERT_EQ(p->params.size(), 3u);
  EXPECT_EQ(p->params[2].name, "TILE_BYTES");
  EXPECT_EQ(p->params[2].default_value, 64 * 64 * 2);
  ASSERT_EQ(p->barriers.size(), 1u);
  EXPECT_EQ(PrintExpr(*p, p->barriers[0].count), "1");
  ASSERT_EQ(p->tensor_maps.size(), 1u);
  EXPECT_EQ(p->tensor_maps[0].dtype, "f16");
  EXPECT_EQ(p->tensor_maps[0].swizzle, "128B");
  ASSERT_EQ(p->tensor_maps[0].box_dims.size(), 2u);
  ASSERT_EQ(p->roles.size(), 1u);
  const Block& b = p->roles[0].body;
  ASSERT_EQ(b.size(), 6u);
  EXPECT_NE(OpAs<MbarrierInit>(b[0]), nullptr);
  ASSERT_NE(OpAs<Fence>(b[1]), nullptr);
  EXPECT_EQ(OpAs<Fence>(b[1])->kind, Fence::Kind::kMbarrierInit);
  const auto* arrive = OpAs<MbarrierArrive>(b[2]);
  ASSERT_NE(arrive, nullptr);
  EXPECT_EQ(PrintExpr(*p, arrive->expect_tx), "TILE_BYTES");
  EXPECT_EQ(arrive->count, kNoExpr);
  const auto* load = OpAs<TmaLoad>(b[3]);
  ASSERT_NE(load, nullptr);
  EXPECT_EQ(load->coords.size(), 2u);
  EXPECT_EQ(load->multicast_mask, kNoExpr);
  const auto* wait = OpAs<MbarrierWait>(b[4]);
  ASSERT_NE(wait, nullptr);
  EXPECT_EQ(PrintExpr(*p, wait->parity), "0");
  EXPECT_FALSE(wait->test_only);
  ASSERT_NE(OpAs<BufferAccess>(b[5]), nullptr);
  EXPECT_FALSE(OpAs<BufferAccess>(b[5])->write);
  // Statement locations point at the op's first token.
  EXPECT_EQ(b[3].where.line, 32);
  EXPECT_EQ(b[3].where.column, 3);
}

TEST(ParserTest, GemmCountsAndPhases) {
  auto p = ParseFile(ExamplePath("gemm_tma_multicast_2x2"));
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(PrintExpr(*p, p->cluster_m), "2");
  EXPECT_EQ(PrintExpr(*p, p->cluster_n), "2");
  ASSERT_EQ(p->barriers.size(), 2u);
  EXPECT_EQ(p->barriers[0].name, "full");
  EXPECT_EQ(PrintExpr(*p, p->barriers[0].count), "1");
  EXPECT_EQ(PrintExpr(*p, p->barriers[1].count), "(cluster_m + cluster_n - 1) * CONSUMERS");
  ASSERT_EQ(p->roles.size(), 2u);
  EXPECT_EQ(PrintExpr(*p, p->roles[1].count), "CONSUMERS");
  EXPECT_EQ(PrintExpr(*p, p->roles[1].threads), "128");
  // The producer's main loop: wait empty with the phase-1 start, then expect_tx of both tiles.
  const Role& producer = p->roles[0];
  const For* main_loop = nullptr;
  for (const Stmt& s : producer.body) {
    if (const auto* f = std::get_if<For>(&s.node)) {
      if (producer.var_names[f->var] == "k") main_loop = f;
    }
  }
  ASSERT_NE(main_loop, nullptr);
  ASSERT_GE(main_loop->body.size(), 6u);
  const auto* ph = std::get_if<Let>(&main_loop->body[1].node);
  ASSERT_NE(ph, nullptr);
  EXPECT_EQ(PrintExpr(*p, ph->value, &producer), "((k / STAGES) & 1) ^ 1");
  const auto* expect = OpAs<MbarrierArrive>(main_loop->body[3]);
  ASSERT_NE(expect, nullptr);
  EXPECT_EQ(PrintExpr(*p, expect->expect_tx, &producer), "A_BYTES + B_BYTES");
  const auto* load_a = OpAs<TmaLoad>(main_loop->body[4]);
  ASSERT_NE(load_a, nullptr);
  EXPECT_EQ(PrintExpr(*p, load_a->multicast_mask, &producer), "a_mask");
  EXPECT_EQ(PrintExpr(*p, load_a->dst.offset, &producer), "cta_y * a_slice");
  // `let a_mask = a_mask | ...` inside the loop reassigns the outer variable (same slot).
  const auto* outer = std::get_if<Let>(&producer.body[3].node);
  ASSERT_NE(outer, nullptr);
  const auto* mask_loop = std::get_if<For>(&producer.body[4].node);
  ASSERT_NE(mask_loop, nullptr);
  const auto* inner = std::get_if<Let>(&mask_loop->body[0].node);
  ASSERT_NE(inner, nullptr);
  EXPECT_EQ(inner->var, outer->var);
  EXPECT_EQ(producer.var_names[outer->var], "a_mask");
}

TEST(ParserTest, BrokenVariantsDifferWhereTheyClaim) {
  auto high = ParseFile(ExamplePath("gemm_empty_count_high"));
  ASSERT_TRUE(high.ok()) << high.status().ToString();
  EXPECT_EQ(PrintExpr(*high, high->barriers[1].count), "cluster_m * cluster_n * CONSUMERS");
  auto tx = ParseFile(ExamplePath("gemm_tx_overcount"));
  ASSERT_TRUE(tx.ok()) << tx.status().ToString();
  EXPECT_NE(Print(*tx).find("bytes (A_BYTES + B_BYTES) * cluster_size"), std::string::npos);
  auto phase = ParseFile(ExamplePath("gemm_wrong_producer_phase"));
  ASSERT_TRUE(phase.ok()) << phase.status().ToString();
  EXPECT_NE(Print(*phase).find("let ph = (k / STAGES) & 1\n"), std::string::npos);
}

TEST(ParserTest, LexicalScopesAndSlots) {
  auto p = ParseProgram(R"(
param N = 3
barrier b[1] count 1
role r {
  let x = 1
  for i in 0 .. N {
    let y = i + x      # new slot, local to the loop body
    let x = x + y      # reassigns the outer x
  }
  for i in 0 .. N step 2 {   # a new i (the first one's scope ended)
  }
  arrive b[0] -> t
  wait b[0] token t
  test_wait b[0] parity 0 -> done
}
)",
                        "scopes.pipe");
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  const Role& r = p->roles[0];
  EXPECT_EQ(r.var_names, (std::vector<std::string>{"x", "i", "y", "i", "t", "done"}));
  EXPECT_EQ(r.num_vars, 6u);
  const auto& loop = std::get<For>(r.body[1].node);
  EXPECT_EQ(std::get<Let>(loop.body[1].node).var, 0u);
  EXPECT_EQ(std::get<For>(r.body[2].node).var, 3u);
  EXPECT_EQ(PrintExpr(*p, std::get<For>(r.body[2].node).step), "2");
  const auto* wait = OpAs<MbarrierWait>(r.body[4]);
  ASSERT_NE(wait, nullptr);
  EXPECT_EQ(wait->token_var, 4u);
  EXPECT_EQ(wait->parity, kNoExpr);
  const auto* test = OpAs<MbarrierWait>(r.body[5]);
  ASSERT_NE(test, nullptr);
  EXPECT_TRUE(test->test_only);
  EXPECT_EQ(test->result_var, 5u);
  // Defaults are explicit in the IR.
  EXPECT_EQ(PrintExpr(*p, p->cluster_m), "1");
  EXPECT_EQ(PrintExpr(*p, p->clusters), "1");
  EXPECT_EQ(PrintExpr(*p, r.count), "1");
  EXPECT_EQ(p->name, "scopes");
}

// pending_count reads a token and binds its result; readback names a buffer slot and binds its
// result (ir.h MbarrierPendingCount, GlobalReadback), and both print back as written.
TEST(ParserTest, PendingCountAndReadback) {
  const std::string text =
      "schedule obs\n"
      "buffer src[2] bytes 1024\n"
      "barrier b[1] count 3\n"
      "role t threads 32 {\n"
      "  arrive.nocomplete b[0] -> tok\n"
      "  pending_count tok -> n\n"
      "  pending_count tok -> n\n"
      "  readback src[1] -> v\n"
      "}\n";
  auto p = ParseProgram(text, "obs.pipe");
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  const Role& r = p->roles[0];
  EXPECT_EQ(r.var_names, (std::vector<std::string>{"tok", "n", "v"}));
  const auto* pc = OpAs<MbarrierPendingCount>(r.body[1]);
  ASSERT_NE(pc, nullptr);
  EXPECT_EQ(pc->token_var, 0u);
  EXPECT_EQ(pc->result_var, 1u);
  EXPECT_EQ(OpAs<MbarrierPendingCount>(r.body[2])->result_var, 1u);  // reassigned, one slot
  const auto* rb = OpAs<GlobalReadback>(r.body[3]);
  ASSERT_NE(rb, nullptr);
  EXPECT_EQ(rb->buf.buffer, 0u);
  EXPECT_EQ(PrintExpr(*p, rb->buf.slot), "1");
  EXPECT_EQ(rb->buf.offset, kNoExpr);
  EXPECT_EQ(rb->result_var, 2u);
  const std::string printed = Print(*p);
  EXPECT_NE(printed.find("  pending_count tok -> n\n"), std::string::npos) << printed;
  EXPECT_NE(printed.find("  readback src[1] -> v\n"), std::string::npos) << printed;
  auto again = ParseProgram(printed, "obs.pipe");
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(Print(*again), printed);
}

// A variable first bound inside an `if` is visible after it when every path binds it
// (definite assignment): both branches then write one slot, which the later read uses.
TEST(ParserTest, VariableBoundOnEveryPathOfAnIfIsVisibleAfterIt) {
  auto p = ParseProgram(R"(
barrier b[2] count 1
role r count 2 {
  if agent == 0 {
    arrive b[0] -> tok
  } else {
    arrive b[1] -> tok
  }
  wait b[agent] token tok
  if agent == 0 { let x = 1 } else if agent == 1 { let x = 2 } else { let x = 3 }
  let y = x + 1
  if agent == 0 {
    if cta_rank == 0 { test_wait b[0] parity 0 -> done } else { let done = 1 }
  } else {
    let done = 0
  }
  let z = done
}
)",
                        "paths.pipe");
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  const Role& r = p->roles[0];
  EXPECT_EQ(r.var_names, (std::vector<std::string>{"tok", "x", "y", "done", "z"}));
  const auto& first = std::get<If>(r.body[0].node);
  const auto* a0 = OpAs<MbarrierArrive>(first.then_body[0]);
  const auto* a1 = OpAs<MbarrierArrive>(first.else_body[0]);
  const auto* wait = OpAs<MbarrierWait>(r.body[1]);
  ASSERT_NE(a0, nullptr);
  ASSERT_NE(a1, nullptr);
  ASSERT_NE(wait, nullptr);
  EXPECT_EQ(a0->token_var, 0u);
  EXPECT_EQ(a1->token_var, 0u);
  EXPECT_EQ(wait->token_var, 0u);
  // `else if` chain: all three branches write x's slot.
  const auto& chain = std::get<If>(r.body[2].node);
  EXPECT_EQ(std::get<Let>(chain.then_body[0].node).var, 1u);
  const auto& mid = std::get<If>(chain.else_body[0].node);
  EXPECT_EQ(std::get<Let>(mid.then_body[0].node).var, 1u);
  EXPECT_EQ(std::get<Let>(mid.else_body[0].node).var, 1u);
  const auto& y = std::get<Let>(r.body[3].node);
  EXPECT_EQ(PrintExpr(*p, y.value, &r), "x + 1");
  EXPECT_EQ(y.var, 2u);
  // Nested: the inner `if` binds `done` on both its paths, the outer `else` binds it too.
  const auto& outer = std::get<If>(r.body[4].node);
  const auto& inner = std::get<If>(outer.then_body[0].node);
  EXPECT_EQ(OpAs<MbarrierWait>(inner.then_body[0])->result_var, 3u);
  EXPECT_EQ(std::get<Let>(inner.else_body[0].node).var, 3u);
  EXPECT_EQ(std::get<Let>(outer.else_body[0].node).var, 3u);
  EXPECT_EQ(std::get<Let>(r.body[5].node).var, 4u);
  // The printer writes it back so that it parses to the same slots.
  auto again = ParseProgram(Print(*p), "paths2.pipe");
  ASSERT_TRUE(again.ok()) << again.status().ToString() << "\n" << Print(*p);
  EXPECT_EQ(again->roles[0].var_names, r.var_names);
}

TEST(ParserTest, ClusterSyncIsArrivePlusWait) {
  auto p = ParseProgram("cluster (1 + 1)x3\nrole r { cluster.sync; cluster.arrive relaxed }\n", "c.pipe");
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(PrintExpr(*p, p->cluster_m), "1 + 1");
  EXPECT_EQ(PrintExpr(*p, p->cluster_n), "3");
  const Block& b = p->roles[0].body;
  ASSERT_EQ(b.size(), 3u);
  ASSERT_NE(OpAs<ClusterArrive>(b[0]), nullptr);
  EXPECT_FALSE(OpAs<ClusterArrive>(b[0])->relaxed);
  EXPECT_NE(OpAs<ClusterWait>(b[1]), nullptr);
  EXPECT_TRUE(OpAs<ClusterArrive>(b[2])->relaxed);
}

// Memory-ordering qualifiers, DSMEM accesses and aliases: what the IR holds, and a canonical
// print that spells only what differs from PTX's defaults (so `arrive.release.cta` hashes as
// `arrive`).
TEST(ParserTest, QualifiersRemoteAccessesAndAliases) {
  auto p = ParseProgram(
      "cluster 2x1\n"
      "buffer V[2] bytes 256\n"
      "buffer O[1] bytes 128 aliases V + 256\n"
      "barrier b[1] count 1\n"
      "role r {\n"
      "  arrive.release.cta b[0]\n"
      "  arrive.relaxed.cluster b[0] @cta(1)\n"
      "  arrive.expect_tx.cluster b[0] bytes 16\n"
      "  wait.acquire.cluster b[0] parity 0\n"
      "  test_wait.relaxed b[0] parity 0 -> t\n"
      "  fence.acq_rel.cta\n"
      "  fence.acq_rel.cluster\n"
      "  cluster.arrive.relaxed\n"
      "  cluster.wait.acquire\n"
      "  use V[1] @cta(1 - cta_rank)\n"
      "  write O[0] bytes 16 @cta(1)\n"
      "}\n",
      "q.pipe");
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  ASSERT_EQ(p->buffers.size(), 2u);
  EXPECT_EQ(p->buffers[0].alias_of, BufferDecl::kNoAlias);
  EXPECT_EQ(p->buffers[1].alias_of, 0u);
  EXPECT_EQ(PrintExpr(*p, p->buffers[1].alias_offset), "256");
  EXPECT_EQ(PrintExpr(*p, p->buffers[1].align), "16");  // an alias's default alignment
  const Block& b = p->roles[0].body;
  ASSERT_EQ(b.size(), 11u);
  EXPECT_EQ(OpAs<MbarrierArrive>(b[0])->sem, MemSem::kStrong);
  EXPECT_EQ(OpAs<MbarrierArrive>(b[0])->scope, MemScope::kCta);
  EXPECT_EQ(OpAs<MbarrierArrive>(b[1])->sem, MemSem::kRelaxed);
  EXPECT_EQ(OpAs<MbarrierArrive>(b[1])->scope, MemScope::kCluster);
  EXPECT_EQ(OpAs<MbarrierArrive>(b[2])->scope, MemScope::kCluster);
  EXPECT_NE(OpAs<MbarrierArrive>(b[2])->expect_tx, kNoExpr);
  EXPECT_EQ(OpAs<MbarrierWait>(b[3])->scope, MemScope::kCluster);
  EXPECT_EQ(OpAs<MbarrierWait>(b[3])->sem, MemSem::kStrong);
  EXPECT_EQ(OpAs<MbarrierWait>(b[4])->sem, MemSem::kRelaxed);
  EXPECT_TRUE(OpAs<MbarrierWait>(b[4])->test_only);
  EXPECT_EQ(OpAs<Fence>(b[5])->kind, Fence::Kind::kAcqRelCta);
  EXPECT_EQ(OpAs<Fence>(b[6])->kind, Fence::Kind::kAcqRelCluster);
  EXPECT_TRUE(OpAs<ClusterArrive>(b[7])->relaxed);
  EXPECT_NE(OpAs<ClusterWait>(b[8]), nullptr);
  EXPECT_NE(OpAs<BufferAccess>(b[9])->buf.cta, kNoExpr);
  EXPECT_TRUE(OpAs<BufferAccess>(b[10])->write);
  EXPECT_NE(OpAs<BufferAccess>(b[10])->buf.cta, kNoExpr);

  const std::string text = Print(*p);
  EXPECT_NE(text.find("buffer O[1] bytes 128 align 16 aliases V + 256"), std::string::npos) << text;
  EXPECT_NE(text.find("  arrive b[0]\n"), std::string::npos) << text;
  EXPECT_NE(text.find("arrive.relaxed.cluster b[0] @cta(1)"), std::string::npos) << text;
  EXPECT_NE(text.find("arrive.expect_tx.cluster b[0] bytes 16"), std::string::npos) << text;
  EXPECT_NE(text.find("wait.cluster b[0] parity 0"), std::string::npos) << text;
  EXPECT_NE(text.find("test_wait.relaxed b[0] parity 0 -> t"), std::string::npos) << text;
  EXPECT_NE(text.find("fence.acq_rel.cta"), std::string::npos) << text;
  EXPECT_NE(text.find("use V[1] @cta(1 - cta_rank)"), std::string::npos) << text;
  EXPECT_NE(text.find("write O[0] bytes 16 @cta(1)"), std::string::npos) << text;
  auto again = ParseProgram(text, "q.pipe");
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(Print(*again), text);
}

// ---------------------------------------------------------------------------------------------
// Malformed inputs: rule, file:line:col, and what was expected.

constexpr char kHeader[] =
    "schedule t\n"               // 1
    "param S = 4\n"              // 2
    "buffer A[S] bytes 1024\n"   // 3
    "barrier full[S] count 1\n"  // 4
    "role p {\n";                // 5 (the statement under test is line 6)

struct BadCase {
  std::string body;  // inserted at line 6 (indented by two spaces) unless `whole` is set
  bool whole;
  std::string rule;
  int line;
  int col;
  std::string expected_text;
};

TEST(ParserTest, ErrorsNameLocationAndExpectation) {
  const std::vector<BadCase> cases = {
      {"wait full[0) parity 0", false, "parse", 6, 14,
       "expected `]` after barrier index, found `)`"},
      {"wait fulll[0] parity 0", false, "parse.unknown-barrier", 6, 8,
       "unknown barrier `fulll` (declared: `full`)"},
      {"wait full[0] parity", false, "parse", 6, 22, "expected an expression, found end of line"},
      {"frobnicate full[0]", false, "parse.unknown-op", 6, 3, "unknown operation `frobnicate`"},
      {"let x = y + 1", false, "parse.unknown-name", 6, 11, "unknown name `y`"},
      {"arrive full[0] count 1 count 2", false, "parse", 6, 26,
       "expected end of line or `;` after `arrive`, found `count`"},
      {"tma.load tm coords [0] -> A[0] bar full[0]", false, "parse.unknown-tensormap", 6, 12,
       "unknown tensor map `tm` (declared: none)"},
      {"for i in 0 .. S\n  }", false, "parse", 6, 18,
       "expected `{` to start the loop body, found end of line"},
      {"if 1 { exit } else exit", false, "parse", 6, 22,
       "expected `{` or `if` after `else`, found `exit`"},
      {"wait full[0] parity $", false, "parse", 6, 23, "unexpected character `$`"},
      {"wait full[0] token t", false, "parse.unknown-name", 6, 22, "unknown token variable `t`"},
      {"for i in 0 .. 2 { }\n  let y = i", false, "parse.unknown-name", 7, 11, "unknown name `i`"},
      {"tma.store tm coords [0] A[0]", false, "parse.unknown-tensormap", 6, 13,
       "unknown tensor map `tm`"},
      {"use A[0] bytes", false, "parse", 6, 17, "expected an expression, found end of line"},
      // Newlines inside ( ) and [ ] do not end a statement, so the `}` on the next line is found.
      {"arrive full[0] @cta(1", false, "parse", 7, 1,
       "expected `)` after the CTA rank, found `}`"},
      {"let S = 1", false, "parse.duplicate", 6, 7, "`S` is already a param"},
      {"st.async A[0] bar full[0] @cta(2 +", false, "parse", 7, 1, "expected an expression, found `}`"},
      {"cp.async A[0] @cta(1)", false, "parse.bad-remote", 6, 17, "only allowed for st.async"},
      {"arrive.acquire full[0]", false, "parse.bad-qualifier", 6, 3,
       "`arrive` does not take `.acquire`"},
      {"wait.release full[0] parity 0", false, "parse.bad-qualifier", 6, 3,
       "`wait` does not take `.release`"},
      {"arrive.relaxed.release full[0]", false, "parse.bad-qualifier", 6, 3, "two semantics"},
      {"wait.cta.cluster full[0] parity 0", false, "parse.bad-qualifier", 6, 3, "two scopes"},
      {"fence.acq_rel", false, "parse.bad-qualifier", 6, 3, "needs a scope"},
      {"cluster.wait.relaxed", false, "parse.bad-qualifier", 6, 3,
       "`cluster.wait` does not take `.relaxed`"},
      {"cluster.arrive.cluster", false, "parse.bad-qualifier", 6, 3, "does not take a scope"},
      {"cluster.arrive.relaxed relaxed", false, "parse.bad-qualifier", 6, 3, "two semantics"},
      {"cluster 2x1\nbuffer A[1] bytes 64\nrole p {\n  use A[0] @cta(2)\n}\n", true,
       "parse.cta-range", 4, 17, "CTA rank 2 is outside the cluster (ranks 0..1"},
      {"buffer V[1] bytes 64\nbuffer O[1] bytes 64 aliases O\nrole p {\n  exit\n}\n", true,
       "parse.bad-alias", 2, 30, "cannot alias itself"},
      {"buffer O[1] bytes 64 aliases V\nbuffer V[1] bytes 64\nrole p {\n  exit\n}\n", true,
       "parse.unknown-buffer", 1, 30, "unknown buffer `V`"},
      {"schedule t\ncluster 2y2\nrole r { exit }\n", true, "parse", 2, 10,
       "expected `x` between the cluster dimensions"},
      {"param S = 1 / 0\n", true, "parse.bad-value", 1, 13, "division by zero"},
      {"tensormap t dtype f17 dims [8] box [8]\n", true, "parse.bad-value", 1, 19,
       "unknown dtype `f17`"},
      {"tensormap t dtype f16 dims [8] box [8] swizzle 96B\n", true, "parse.bad-value", 1, 48,
       "unknown swizzle `96B`"},
      {"role p {\n  exit\n", true, "parse", 3, 1,
       "expected `}` to close the block opened at line 1, found end of file"},
      {"param X = 0x1ffffffffffffffff\n", true, "parse", 1, 11, "does not fit in 64 bits"},
      {"barrier b[1] count 1\nbarrier b[2] count 1\n", true, "parse.duplicate", 2, 9,
       "`b` is already declared"},
      {"", true, "parse.no-roles", 1, 1, "the schedule has no `role`"},
      {"pending_count t -> n", false, "parse.unknown-name", 6, 17, "unknown token variable `t`"},
      {"arrive.nocomplete full[0] -> t\n  pending_count t n", false, "parse", 7, 19,
       "expected `->` before the result variable of `pending_count`, found `n`"},
      {"readback A[0]", false, "parse", 6, 16,
       "expected `->` before the result variable of `readback`"},
      {"readback A[0] @cta(1) -> v", false, "parse.bad-remote", 6, 17, "only allowed for st.async"},
      {"while 1 { exit }", false, "parse.while-bound", 6, 11, "expected `bound N`"},
      {"break", false, "parse.break-outside-loop", 6, 3, "`break` outside a loop"},
      {"if 1 { break }", false, "parse.break-outside-loop", 6, 10, "`break` outside a loop"},
      {"while 1 bound 2 { let t = 1 }\n  let u = t", false, "parse.maybe-unset", 7, 11,
       "the `while` body"},
      {"let bound = 1", false, "parse.reserved", 6, 7, "reserved word"},
      {"let grid_size = 1", false, "parse.reserved", 6, 7, "reserved word"},
      {"buffer bar[1] bytes 64\nrole r { exit }\n", true, "parse.reserved", 1, 8,
       "reserved word"},
      // Named barriers: a literal id 0..15, one name per id, names in the object namespace.
      {"named_barrier q = 16\nrole r { exit }\n", true, "parse.bad-value", 1, 19,
       "named barrier id 16 is outside 0..15"},
      {"named_barrier q = 1 + 1\nrole r { exit }\n", true, "parse", 1, 21,
       "expected end of line"},
      {"param I = 2\nnamed_barrier q = I\nrole r { exit }\n", true, "parse", 2, 19,
       "the named barrier's id, an integer 0..15"},
      {"named_barrier q = 1\nnamed_barrier r = 1\nrole r { exit }\n", true, "parse.duplicate",
       2, 19, "named barrier id 1 is already named `q` (line 1)"},
      {"named_barrier q = 1\nbarrier q[1] count 1\nrole r { exit }\n", true, "parse.duplicate",
       2, 9, "`q` is already a named barrier"},
      {"named_barrier q = 1\nrole r {\n  let q = 2\n}\n", true, "parse.duplicate", 3, 7,
       "`q` is already a named barrier"},
  };
  for (const BadCase& c : cases) {
    const std::string text = c.whole ? c.body : std::string(kHeader) + "  " + c.body + "\n}\n";
    SCOPED_TRACE(text);
    auto p = ParseProgram(text, "bad.pipe");
    ASSERT_FALSE(p.ok());
    const Status& s = p.status();
    EXPECT_EQ(s.rule(), c.rule) << s.ToString();
    EXPECT_EQ(s.where().file, "bad.pipe");
    EXPECT_EQ(s.where().line, c.line) << s.ToString();
    EXPECT_EQ(s.where().column, c.col) << s.ToString();
    EXPECT_NE(s.message().find(c.expected_text), std::string::npos) << s.ToString();
  }
}

// `while COND bound N` is a For whose cond is set (the pass counter a hidden slot of its own);
// `break` a statement; a barrier array may be named `bar`; the grid builtins parse.
TEST(ParserTest, WhileBreakAndGridBuiltins) {
  const char* text =
      "cluster 2x1\n"
      "clusters 3\n"
      "barrier bar[2] count 1\n"
      "buffer t[1] bytes 64\n"
      "role r {\n"
      "  let tile = grid_cta\n"
      "  while tile < 7 bound num_clusters * 2 {\n"
      "    for k in 0 .. 4 {\n"
      "      if k == 2 { break }\n"
      "    }\n"
      "    let tile = tile + grid_size\n"
      "  }\n"
      "  bulk.load t[0] bar bar[1]\n"
      "}\n";
  auto p = ParseProgram(text, "w.pipe");
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  const Role& r = p->roles[0];
  ASSERT_EQ(r.body.size(), 3u);
  const auto* loop = std::get_if<For>(&r.body[1].node);
  ASSERT_NE(loop, nullptr);
  EXPECT_NE(loop->cond, kNoExpr);
  EXPECT_EQ(r.var_names[loop->var], "while@7:3");
  EXPECT_EQ(PrintExpr(*p, loop->hi), "num_clusters * 2");
  const auto* inner = std::get_if<For>(&loop->body[0].node);
  ASSERT_NE(inner, nullptr);
  EXPECT_EQ(inner->cond, kNoExpr);
  const auto* branch = std::get_if<If>(&inner->body[0].node);
  ASSERT_NE(branch, nullptr);
  EXPECT_TRUE(std::holds_alternative<Break>(branch->then_body[0].node));
  const auto* load = OpAs<BulkLoad>(r.body[2]);
  ASSERT_NE(load, nullptr);
  EXPECT_EQ(p->barriers[load->bar.barrier].name, "bar");
  // The canonical text reads back to the same text (the content hash's input).
  const std::string printed = Print(*p);
  EXPECT_NE(printed.find("while tile < 7 bound num_clusters * 2 {"), std::string::npos) << printed;
  EXPECT_NE(printed.find("      break\n"), std::string::npos) << printed;
  auto again = ParseProgram(printed, "w2.pipe");
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(Print(*again), printed);
}

// Bound on some paths only (or only in a loop body): reading it after is an error that names
// the read's file:line:col, the `if` (or loop) and the rule.
TEST(ParserTest, VariableBoundOnSomePathsIsRejectedAfterTheIf) {
  struct Case {
    std::string body;  // lines 6.. of the role
    int line, col;
    std::string text;
  };
  const std::vector<Case> cases = {
      {"if agent == 0 {\n    arrive full[0] -> tok\n  }\n  wait full[0] token tok", 9, 22,
       "`tok` is set in the `then` block of the `if` at bad.pipe:6 but not when it is not taken "
       "(no `else`)"},
      {"if agent == 0 { arrive full[0] -> tok } else { arrive full[1] }\n  wait full[0] token tok",
       7, 22, "but not in its `else` branch, so it may be unset here"},
      {"if agent == 0 { arrive full[0] } else { let v = 2 }\n  let w = v", 7, 11,
       "`v` is set in the `else` branch of the `if` at bad.pipe:6 but not in its `then` block"},
      {"if agent == 0 { let v = 1 } else if agent == 1 { let v = 2 }\n  let w = v", 7, 11,
       "every path through it sets it"},
      {"for i in 0 .. S {\n    arrive full[i] -> tok\n  }\n  wait full[0] token tok", 9, 22,
       "`tok` is bound only inside the `for` body at bad.pipe:6 (the loop may run zero times)"},
      {"if agent == 0 {\n    if cta_rank == 0 { let v = 1 }\n  } else { let v = 2 }\n  let w = v",
       9, 11, "may be unset here"},
  };
  for (const Case& c : cases) {
    const std::string text = std::string(kHeader) + "  " + c.body + "\n}\n";
    SCOPED_TRACE(text);
    auto p = ParseProgram(text, "bad.pipe");
    ASSERT_FALSE(p.ok());
    const Status& s = p.status();
    EXPECT_EQ(s.rule(), "parse.maybe-unset") << s.ToString();
    EXPECT_EQ(s.where().line, c.line) << s.ToString();
    EXPECT_EQ(s.where().column, c.col) << s.ToString();
    EXPECT_NE(s.message().find(c.text), std::string::npos) << s.ToString();
    EXPECT_NE(s.message().find("set it before the"), std::string::npos) << s.ToString();
  }
  // Set before the `if` and reassigned in one branch: one variable, visible after.
  auto ok = ParseProgram(std::string(kHeader) +
                             "  let v = 0\n  if agent == 0 { let v = 1 }\n  let w = v\n}\n",
                         "ok.pipe");
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  EXPECT_EQ(ok->roles[0].var_names, (std::vector<std::string>{"v", "w"}));
}

TEST(ParserTest, ErrorShowsTheLineWithACaret) {
  auto p = ParseProgram(std::string(kHeader) + "  wait full[0) parity 0\n}\n", "bad.pipe");
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().ToString(),
            "bad.pipe:6:14: error[parse]: expected `]` after barrier index, found `)`\n"
            "    wait full[0) parity 0\n"
            "               ^");
}

// ---------------------------------------------------------------------------------------------
// Fuzz: random mutations of the examples never crash; every failure carries a location, and
// every success round-trips through the printer.

std::string Mutate(const std::string& in, std::mt19937_64& rng) {
  static const std::vector<std::string> kPieces = {
      "[", "]", "(", ")", "{", "}", "\n", ";", "..", "->", "<-", "@cta(", "0", "0x", "-", "~",
      "?", ":", "x", "bar", "full[0]", "let", "for", "if", "else", "count", "bytes", "#", "//",
      "9223372036854775807", "99999999999999999999", "\t", "\xff", "min(", ",", "cluster", "A[0]",
  };
  std::string s = in;
  const int edits = 1 + static_cast<int>(rng() % 4);
  for (int e = 0; e < edits && !s.empty(); ++e) {
    const size_t pos = rng() % s.size();
    switch (rng() % 5) {
      case 0:  // delete a span
        s.erase(pos, 1 + rng() % 8);
        break;
      case 1:  // insert a piece
        s.insert(pos, kPieces[rng() % kPieces.size()]);
        break;
      case 2:  // replace a byte
        s[pos] = static_cast<char>(rng() % 128);
        break;
      case 3: {  // duplicate a span elsewhere
        const size_t len = 1 + rng() % 40;
        const std::string span = s.substr(pos, len);
        s.insert(rng() % s.size(), span);
        break;
      }
      default:  // truncate
        s.resize(pos);
        break;
    }
  }
  return s;
}

#if defined(__SANITIZE_ADDRESS__)
constexpr int kMutations = 300;  // the sanitized parser is about 5x slower; tools/fuzz goes on
#else
constexpr int kMutations = 1500;
#endif
TEST(ParserFuzzTest, MutationsNeverCrash) {
  std::mt19937_64 rng(20261122);
  int ok = 0, failed = 0;
  for (const std::string& name : ExampleNames()) {
    const std::string text = ReadExample(name);
    ASSERT_FALSE(text.empty());
    for (int i = 0; i < kMutations; ++i) {
      const std::string mutated = Mutate(text, rng);
      auto p = ParseProgram(mutated, "fuzz.pipe");
      if (p.ok()) {
        ++ok;
        const std::string printed = Print(*p);
        auto again = ParseProgram(printed, "fuzz.pipe");
        ASSERT_TRUE(again.ok()) << again.status().ToString() << "\n--- input:\n" << mutated;
        ASSERT_EQ(Print(*again), printed) << "--- input:\n" << mutated;
      } else {
        ++failed;
        const Status& s = p.status();
        ASSERT_EQ(s.where().file, "fuzz.pipe") << s.ToString();
        ASSERT_GE(s.where().line, 1) << s.ToString();
        ASSERT_GE(s.where().column, 1) << s.ToString();
        ASSERT_EQ(s.rule().rfind("parse", 0), 0u) << s.ToString();
        ASSERT_NE(s.message().find('^'), std::string::npos) << s.ToString();
      }
    }
  }
  // Both outcomes occur (otherwise the mutations test nothing).
  EXPECT_GT(ok, 50);
  EXPECT_GT(failed, 1000);
}

TEST(ParserFuzzTest, DeepNestingIsAnErrorNotACrash) {
  std::string deep = "param P = " + std::string(100000, '(') + "1" + std::string(100000, ')') +
                     "\nrole r { exit }\n";
  auto p = ParseProgram(deep, "deep.pipe");
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().message().find("nested too deeply"), std::string::npos);
  std::string unary = "param P = " + std::string(100000, '-') + "1\nrole r { exit }\n";
  EXPECT_FALSE(ParseProgram(unary, "deep.pipe").ok());
  std::string blocks = "role r {" + std::string(100000, '{');
  EXPECT_FALSE(ParseProgram(blocks, "deep.pipe").ok());
}

}  // namespace
}  // namespace parity::ir
