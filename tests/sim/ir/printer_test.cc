#include "sim/ir/printer.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "sim/ir/parser.h"
#include "tests/sim/ir/examples.h"

namespace parity::ir {
namespace {

TEST(PrinterTest, ExamplesRoundTrip) {
  for (const std::string& name : testing::ExampleNames()) {
    SCOPED_TRACE(name);
    auto p = ParseFile(testing::ExamplePath(name));
    ASSERT_TRUE(p.ok()) << p.status().ToString();
    const std::string text = Print(*p);
    auto again = ParseProgram(text, "printed.pipe");
    ASSERT_TRUE(again.ok()) << again.status().ToString() << "\n" << text;
    EXPECT_EQ(Print(*again), text);
    // The same shape, not just the same text.
    EXPECT_EQ(again->params.size(), p->params.size());
    EXPECT_EQ(again->exprs.size(), p->exprs.size());
    ASSERT_EQ(again->roles.size(), p->roles.size());
    for (size_t i = 0; i < p->roles.size(); ++i) {
      EXPECT_EQ(again->roles[i].var_names, p->roles[i].var_names);
      EXPECT_EQ(again->roles[i].body.size(), p->roles[i].body.size());
    }
    for (size_t i = 0; i < p->params.size(); ++i) {
      EXPECT_EQ(again->params[i].default_value, p->params[i].default_value);
    }
  }
}

TEST(PrinterTest, CanonicalTextOfSingleTmaLoad) {
  auto p = ParseFile(testing::ExamplePath("single_tma_load"));
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(Print(*p),
            "schedule single_tma_load\n"
            "param ROWS = 64\n"
            "param COLS = 64\n"
            "param TILE_BYTES = ROWS * COLS * 2\n"
            "cluster 1x1\n"
            "clusters 1\n"
            "buffer tile[1] bytes TILE_BYTES align 1024\n"
            "barrier full[1] count 1\n"
            "tensormap tm dtype f16 dims [1024, 1024] box [COLS, ROWS] swizzle 128B interleave "
            "none oob zero\n"
            "\n"
            "role producer count 1 threads 1 {\n"
            "  init full[0]\n"
            "  fence.mbarrier_init\n"
            "  arrive.expect_tx full[0] bytes TILE_BYTES\n"
            "  tma.load tm coords [0, 0] -> tile[0] bar full[0]\n"
            "  wait full[0] parity 0\n"
            "  use tile[0]\n"
            "}\n");
}

// Each expression prints with the fewest parentheses and keeps its value.
TEST(PrinterTest, ExpressionPrecedence) {
  struct Case {
    std::string in, out;
    int64_t value;
  };
  const std::vector<Case> cases = {
      {"1 - (2 - 3)", "1 - (2 - 3)", 2},
      {"(1 - 2) - 3", "1 - 2 - 3", -4},
      {"(2 * 3) + 4", "2 * 3 + 4", 10},
      {"2 * (3 + 4)", "2 * (3 + 4)", 14},
      {"1 << 2 + 1", "1 << (2 + 1)", 8},
      {"(1 << 2) + 1", "(1 << 2) + 1", 5},
      {"((7 / 2) & 1) ^ 1", "((7 / 2) & 1) ^ 1", 0},
      {"7 / 2 & 1 ^ 1", "((7 / 2) & 1) ^ 1", 0},
      {"0 ? 1 : 0 ? 2 : 3", "0 ? 1 : 0 ? 2 : 3", 3},
      {"(0 ? 1 : 1) ? 2 : 3", "(0 ? 1 : 1) ? 2 : 3", 2},
      {"-(-5)", "- -5", 5},
      {"~(1 + 2)", "~(1 + 2)", -4},
      {"!(3 == 3) || 1 < 2 && 2 <= 2", "!(3 == 3) || (1 < 2 && 2 <= 2)", 1},
      {"min(4, max(2, 3)) * -1", "min(4, max(2, 3)) * -1", -3},
      {"(1 | 2) ^ 3 & 1", "(1 | 2) ^ (3 & 1)", 2},
      {"1 & 2 & 3", "1 & 2 & 3", 0},
      {"0x10 % 3", "16 % 3", 1},
      {"-7 / 2", "-7 / 2", -3},
      {"0xffffffffffffffff", "-1", -1},
      {"0x8000000000000000", "0x8000000000000000", std::numeric_limits<int64_t>::min()},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.in);
    auto p = ParseProgram("param P = " + c.in + "\nrole r { exit }\n", "e.pipe");
    ASSERT_TRUE(p.ok()) << p.status().ToString();
    EXPECT_EQ(PrintExpr(*p, p->params[0].default_expr), c.out);
    EXPECT_EQ(p->params[0].default_value, c.value);
    auto again = ParseProgram("param P = " + c.out + "\nrole r { exit }\n", "e.pipe");
    ASSERT_TRUE(again.ok()) << again.status().ToString();
    EXPECT_EQ(again->params[0].default_value, c.value);
    EXPECT_EQ(PrintExpr(*again, again->params[0].default_expr), c.out);
  }
}

TEST(PrinterTest, EveryOperationRoundTrips) {
  const std::string text =
      "schedule all_ops\n"
      "param N = 2\n"
      "cluster (N)x1\n"
      "clusters 3\n"
      "buffer A[2] bytes 4096 align 128\n"
      "barrier b[2] count N\n"
      "tensormap t dtype bf16 dims [64, 64] box [64, 8] strides [128] element_strides [1, 1] "
      "swizzle 64B interleave none oob nan\n"
      "\n"
      "role r count 2 threads 32 when cta_rank == 0 {\n"
      "  init b[0] count 3\n"
      "  inval b[1]\n"
      "  arrive b[0] count 2 mask 3 -> tok\n"
      "  arrive b[0] @cta(1)\n"
      "  arrive.expect_tx b[1] bytes 64 count 1 -> tok\n"
      "  arrive.nocomplete b[0] count 1\n"
      "  arrive_drop b[0]\n"
      "  expect_tx b[0] @cta(cta_rank ^ 1) bytes 16\n"
      "  complete_tx b[0] bytes 16\n"
      "  wait b[0] parity 1\n"
      "  wait b[0] token tok\n"
      "  test_wait b[1] parity 0 -> ready\n"
      "  tma.load t coords [0, -8] -> A[0] bar b[0] multicast 3\n"
      "  tma.store t coords [0, 8] <- A[1] + 512 bytes 1024\n"
      "  bulk.load A[0] bytes 256 bar b[1] multicast 1\n"
      "  bulk.store A[1]\n"
      "  use.generic A[0] + 64 bytes 64\n"
      "  use.async A[1]\n"
      "  bulk.commit\n"
      "  bulk.wait 0 read\n"
      "  bulk.wait 1\n"
      "  cp.async A[0] + 16 bytes 16\n"
      "  cp.async.commit\n"
      "  cp.async.wait 0\n"
      "  cp.async.wait_all\n"
      "  cp.async.arrive b[0] noinc\n"
      "  cp.async.arrive b[1]\n"
      "  st.async A[0] bytes 8 @cta(1) bar b[0] @cta(1)\n"
      "  fence.mbarrier_init\n"
      "  fence.proxy.async\n"
      "  fence.proxy.async.global\n"
      "  fence.acq_rel.cluster\n"
      "  cluster.arrive relaxed\n"
      "  cluster.arrive\n"
      "  cluster.wait\n"
      "  bar.sync 1, 64\n"
      "  bar.arrive 1, 64\n"
      "  use A[0]\n"
      "  write A[1]\n"
      "  let i = 0\n"
      "  for j in 0 .. 4 step 2 {\n"
      "    let i = i + j\n"
      "  }\n"
      "  if i == 0 {\n"
      "    exit\n"
      "  } else if i == 1 {\n"
      "    exit\n"
      "  } else {\n"
      "    let k = ready ? 1 : 0\n"
      "  }\n"
      "  while i < grid_size bound num_clusters * 8 {\n"
      "    let i = i + grid_cta\n"
      "    if i == 3 {\n"
      "      break\n"
      "    }\n"
      "  }\n"
      "  exit\n"
      "}\n";
  auto p = ParseProgram(text, "ops.pipe");
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(Print(*p), text);
}

// A named barrier prints as its declaration and its name where the schedule wrote the name,
// and as the number where it wrote the number; both evaluate to the id.
TEST(PrinterTest, NamedBarriersRoundTripByName) {
  const std::string text =
      "schedule named\n"
      "named_barrier q_empty = 3\n"
      "named_barrier epi = 0\n"
      "param BASE = q_empty + 1\n"
      "cluster 1x1\n"
      "clusters 1\n"
      "\n"
      "role r count 2 threads 128 {\n"
      "  bar.sync q_empty, 256\n"
      "  bar.arrive q_empty, 256\n"
      "  bar.sync BASE + agent, 128\n"
      "  bar.sync epi + 1, 256\n"
      "  bar.sync 3, 256\n"
      "}\n";
  auto p = ParseProgram(text, "named.pipe");
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(Print(*p), text);
  ASSERT_EQ(p->named_barriers.size(), 2u);
  EXPECT_EQ(p->named_barriers[0].id, 3);
  EXPECT_EQ(p->params[0].default_value, 4);
  EXPECT_EQ(NamedBarrierName(*p, 3), "q_empty");
  EXPECT_EQ(NamedBarrierName(*p, 0), "epi");
  EXPECT_EQ(NamedBarrierName(*p, 5), "5");
  // `bar.sync q_empty` and `bar.sync 3` are the same operation.
  const auto& first = std::get<NamedBarrier>(std::get<Op>(p->roles[0].body[0].node));
  const auto& last = std::get<NamedBarrier>(std::get<Op>(p->roles[0].body[4].node));
  EXPECT_TRUE(SameExpr(*p, first.id, last.id));
  EXPECT_EQ(p->expr(first.id).value, 3);
}

}  // namespace
}  // namespace parity::ir
