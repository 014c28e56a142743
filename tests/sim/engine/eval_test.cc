#include "sim/ir/eval.h"

#include <cstdint>
#include <limits>
#include <vector>

#include "gtest/gtest.h"
#include "sim/testing/program_builder.h"

namespace parity::ir {
namespace {

using testing::ProgramBuilder;

class EvalTest : public ::testing::Test {
 protected:
  EvalTest() : b_("eval") {
    params_ = {4, 8};
    vars_ = {5, -7};
    builtins_ = MakeBuiltins(/*cta_rank=*/3, /*cta_x=*/1, /*cta_y=*/1, /*cluster_m=*/2,
                             /*cluster_n=*/2, /*cluster_id=*/9, /*agent=*/1, /*clusters=*/12);
    env_.params = params_.data();
    env_.num_params = params_.size();
    env_.vars = vars_.data();
    env_.num_vars = vars_.size();
    env_.builtins = &builtins_;
  }
  Expected<int64_t> E(ExprId id) { return Eval(b_.program(), id, env_); }

  ProgramBuilder b_;
  std::vector<int64_t> params_, vars_;
  BuiltinValues builtins_;
  EvalEnv env_;
};

TEST_F(EvalTest, LeavesAndArithmetic) {
  EXPECT_EQ(*E(b_.C(42)), 42);
  EXPECT_EQ(*E(b_.P(1)), 8);
  EXPECT_EQ(*E(b_.V(1)), -7);
  EXPECT_EQ(*E(b_.B(Builtin::kCtaRank)), 3);
  EXPECT_EQ(*E(b_.B(Builtin::kClusterSize)), 4);
  EXPECT_EQ(*E(b_.B(Builtin::kClusterId)), 9);
  EXPECT_EQ(*E(b_.B(Builtin::kAgent)), 1);
  EXPECT_EQ(*E(b_.B(Builtin::kNumClusters)), 12);
  EXPECT_EQ(*E(b_.B(Builtin::kGridCta)), 9 * 4 + 3);
  EXPECT_EQ(*E(b_.B(Builtin::kGridSize)), 12 * 4);
  // (cluster_m + cluster_n - 1) * P0 = 3 * 4
  auto m = b_.B(Builtin::kClusterM), n = b_.B(Builtin::kClusterN);
  EXPECT_EQ(*E(b_.Bin(BinaryOp::kMul,
                      b_.Bin(BinaryOp::kSub, b_.Bin(BinaryOp::kAdd, m, n), b_.C(1)), b_.P(0))),
            12);
  // C semantics: truncation toward zero.
  EXPECT_EQ(*E(b_.Bin(BinaryOp::kDiv, b_.V(1), b_.C(2))), -3);
  EXPECT_EQ(*E(b_.Bin(BinaryOp::kMod, b_.V(1), b_.C(2))), -1);
  EXPECT_EQ(*E(b_.Bin(BinaryOp::kShl, b_.C(1), b_.C(20))), 1 << 20);
  EXPECT_EQ(*E(b_.Bin(BinaryOp::kShr, b_.C(-8), b_.C(1))), -4);
  EXPECT_EQ(*E(b_.Bin(BinaryOp::kBitXor, b_.Bin(BinaryOp::kBitAnd, b_.C(6), b_.C(3)), b_.C(1))), 3);
  EXPECT_EQ(*E(b_.Bin(BinaryOp::kMin, b_.C(6), b_.C(3))), 3);
  EXPECT_EQ(*E(b_.Bin(BinaryOp::kMax, b_.C(6), b_.C(3))), 6);
  EXPECT_EQ(*E(b_.Bin(BinaryOp::kLe, b_.C(3), b_.C(3))), 1);
  EXPECT_EQ(*E(b_.Bin(BinaryOp::kGt, b_.C(3), b_.C(3))), 0);
  EXPECT_EQ(*E(b_.Un(UnaryOp::kNot, b_.C(0))), 1);
  EXPECT_EQ(*E(b_.Un(UnaryOp::kBitNot, b_.C(0))), -1);
  EXPECT_EQ(*E(b_.Un(UnaryOp::kNeg, b_.V(0))), -5);
  EXPECT_EQ(*E(b_.Sel(b_.C(0), b_.C(10), b_.C(20))), 20);
}

TEST_F(EvalTest, ErrorsCarryRuleAndLocation) {
  ExprId div = b_.Bin(BinaryOp::kDiv, b_.C(1), b_.Bin(BinaryOp::kSub, b_.C(4), b_.P(0)));
  auto r = E(div);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().rule(), "eval.div-by-zero");
  EXPECT_EQ(r.status().where().line, static_cast<int>(div) + 1);  // the builder's fake line
  EXPECT_EQ(r.status().where().file, "eval.pipe");
  EXPECT_NE(r.status().message().find("1 / 0"), std::string::npos) << r.status().message();

  EXPECT_EQ(E(b_.Bin(BinaryOp::kMod, b_.C(1), b_.C(0))).status().rule(), "eval.div-by-zero");
  EXPECT_EQ(E(b_.Bin(BinaryOp::kShl, b_.C(1), b_.C(64))).status().rule(), "eval.shift-range");
  EXPECT_EQ(E(b_.Bin(BinaryOp::kShr, b_.C(1), b_.C(-1))).status().rule(), "eval.shift-range");
  EXPECT_EQ(E(b_.Bin(BinaryOp::kShl, b_.C(1), b_.C(63))).status().rule(), "eval.overflow");
  const int64_t kMin = std::numeric_limits<int64_t>::min();
  EXPECT_EQ(E(b_.Bin(BinaryOp::kDiv, b_.C(kMin), b_.C(-1))).status().rule(), "eval.overflow");
  EXPECT_EQ(E(b_.Un(UnaryOp::kNeg, b_.C(kMin))).status().rule(), "eval.overflow");
  EXPECT_EQ(E(b_.Bin(BinaryOp::kMul, b_.C(int64_t{1} << 40), b_.C(int64_t{1} << 40))).status().rule(),
            "eval.overflow");
  EXPECT_EQ(E(b_.V(7)).status().rule(), "eval.bad-reference");
  EvalEnv no_builtins = env_;
  no_builtins.builtins = nullptr;
  EXPECT_EQ(Eval(b_.program(), b_.B(Builtin::kCtaX), no_builtins).status().rule(),
            "eval.bad-reference");
}

TEST_F(EvalTest, ShortCircuitAvoidsErrors) {
  ExprId bad = b_.Bin(BinaryOp::kDiv, b_.C(1), b_.C(0));
  EXPECT_EQ(*E(b_.Bin(BinaryOp::kAnd, b_.C(0), bad)), 0);
  EXPECT_EQ(*E(b_.Bin(BinaryOp::kOr, b_.C(2), bad)), 1);
  EXPECT_EQ(*E(b_.Bin(BinaryOp::kAnd, b_.C(2), b_.C(3))), 1);
  EXPECT_EQ(*E(b_.Sel(b_.C(1), b_.C(7), bad)), 7);
  EXPECT_FALSE(E(b_.Bin(BinaryOp::kAnd, b_.C(1), bad)).ok());
}

TEST_F(EvalTest, FastPathReportsFirstFault) {
  EvalFault fault;
  ExprId bad1 = b_.Bin(BinaryOp::kDiv, b_.C(1), b_.C(0));
  ExprId bad2 = b_.Bin(BinaryOp::kShl, b_.C(1), b_.C(99));
  EXPECT_EQ(EvalFast(b_.program(), b_.Bin(BinaryOp::kAdd, bad1, bad2), env_, &fault), 0);
  EXPECT_EQ(fault.error, EvalError::kDivByZero);
  EXPECT_EQ(fault.at, bad1);
  EXPECT_EQ(EvalFast(b_.program(), bad2, env_, &fault), 0);
  EXPECT_EQ(fault.at, bad1);  // first fault wins
}

}  // namespace
}  // namespace parity::ir
