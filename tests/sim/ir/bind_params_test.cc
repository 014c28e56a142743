#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "sim/ir/ir.h"
#include "sim/ir/parser.h"

namespace parity::ir {
namespace {

constexpr char kText[] =
    "param BLOCK_M = 128\n"
    "param BLOCK_K = 64\n"
    "param A_BYTES = BLOCK_M * BLOCK_K * 2\n"
    "param DIV = 1\n"
    "param Q = 64 / DIV\n"
    "role r { exit }\n";

Program Parse() {
  auto p = ParseProgram(kText, "bind.pipe");
  EXPECT_TRUE(p.ok()) << p.status().ToString();
  return p.ok() ? std::move(p).value() : Program{};
}

TEST(BindParamsTest, Defaults) {
  auto v = BindParams(Parse(), {});
  ASSERT_TRUE(v.ok()) << v.status().ToString();
  EXPECT_EQ(*v, (std::vector<int64_t>{128, 64, 16384, 1, 64}));
}

TEST(BindParamsTest, OverridesAndDerivedDefaultsFollow) {
  auto v = BindParams(Parse(), {{"BLOCK_M", 64}, {"DIV", 4}});
  ASSERT_TRUE(v.ok()) << v.status().ToString();
  EXPECT_EQ(*v, (std::vector<int64_t>{64, 64, 8192, 4, 16}));
  // An explicit value for a derived param wins over its expression; the last -D wins.
  v = BindParams(Parse(), {{"A_BYTES", 100}, {"BLOCK_K", 1}, {"BLOCK_K", 2}});
  ASSERT_TRUE(v.ok()) << v.status().ToString();
  EXPECT_EQ(*v, (std::vector<int64_t>{128, 2, 100, 1, 64}));
}

TEST(BindParamsTest, UnknownNameIsAnError) {
  auto v = BindParams(Parse(), {{"BLOCK_N", 1}});
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(v.status().rule(), "param.unknown");
  EXPECT_EQ(v.status().where().file, "bind.pipe");
  EXPECT_NE(v.status().message().find("`BLOCK_N`"), std::string::npos) << v.status().ToString();
  EXPECT_NE(v.status().message().find("BLOCK_M, BLOCK_K, A_BYTES, DIV, Q"), std::string::npos);
}

TEST(BindParamsTest, EvaluationErrorsNameTheParam) {
  auto v = BindParams(Parse(), {{"DIV", 0}});
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(v.status().rule(), "param.eval");
  EXPECT_NE(v.status().message().find("param `Q`"), std::string::npos) << v.status().ToString();
  EXPECT_NE(v.status().message().find("division by zero"), std::string::npos);
  EXPECT_EQ(v.status().where().line, 5);
  v = BindParams(Parse(), {{"BLOCK_M", int64_t{1} << 62}});
  ASSERT_FALSE(v.ok());
  EXPECT_NE(v.status().message().find("overflow"), std::string::npos) << v.status().ToString();
}

TEST(BindParamsTest, ProgramsBuiltInCodeUseDefaultValue) {
  Program p;
  p.file = "code";
  p.params.push_back(Param{"X", 7, kNoExpr, {}});
  auto v = BindParams(p, {});
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(*v, std::vector<int64_t>{7});
}

}  // namespace
}  // namespace parity::ir
