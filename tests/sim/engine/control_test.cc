// The compiled control flow (sim/engine/control.h): the walker runs lets, loops, ifs and breaks
// to the next operation as the language defines them, reports loop faults with their values,
// and each instruction names the statement it was compiled from (TraceEvent::pc's meaning).
#include "sim/engine/control.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "sim/ir/eval.h"
#include "sim/ir/parser.h"

namespace parity::engine {
namespace {

ir::Program Parse(const std::string& body) {
  auto p = ir::ParseProgram("cluster 1x1\nclusters 1\nbarrier b[1] count 1\n"
                            "role r threads 1 {\n" + body + "}\n",
                            "control.pipe");
  EXPECT_TRUE(p.ok()) << p.status().ToString();
  return std::move(*p);
}

// Walks role 0 from pc 0 to its end, counting the operations passed.
struct Walked {
  Control last = Control::kEnd;
  int ops = 0;
  int64_t detail = 0;
  uint32_t pc = 0;
  std::vector<int64_t> vars;
};
Walked Walk(const ir::Program& p, uint32_t limit = 1u << 20) {
  const std::vector<Instr> code = CompileRole(p.roles[0]);
  Walked r;
  r.vars.assign(p.roles[0].num_vars, 0);
  ir::EvalEnv env;
  env.vars = r.vars.data();
  env.num_vars = r.vars.size();
  auto ev = [&](ir::ExprId id, int64_t* v) {
    ir::EvalFault f;
    *v = ir::EvalFast(p, id, env, &f);
    return f.ok();
  };
  uint32_t steps = 0;
  while ((r.last = WalkToOp(code.data(), &r.pc, r.vars.data(), ev, limit, &steps, &r.detail)) ==
         Control::kAtOp) {
    ++r.ops;
    ++r.pc;
  }
  return r;
}

TEST(ControlTest, LoopsIfsAndBreaksReachEveryOperation) {
  const ir::Program p = Parse(
      "  let n = 0\n"
      "  for i in 0 .. 5 {\n"
      "    if i == 3 { break }\n"
      "    let n = n + i\n"
      "    fence.proxy.async\n"
      "  }\n"
      "  let k = 0\n"
      "  while k < 4 bound 10 {\n"
      "    let k = k + 2\n"
      "    fence.proxy.async\n"
      "  }\n");
  const Walked r = Walk(p);
  EXPECT_EQ(r.last, Control::kEnd);
  EXPECT_EQ(r.ops, 3 + 2);  // i = 0, 1, 2; k = 0, 2
  EXPECT_EQ(r.vars[0], 0 + 1 + 2);
}

TEST(ControlTest, LoopFaultsCarryTheirValues) {
  const Walked bound = Walk(Parse("  let k = 0\n  while k < 100 bound 3 {\n    let k = k + 1\n  }\n"));
  EXPECT_EQ(bound.last, Control::kWhileBound);
  EXPECT_EQ(bound.detail, 3);
  const Walked step = Walk(Parse("  for i in 0 .. 4 step 0 {\n    fence.proxy.async\n  }\n"));
  EXPECT_EQ(step.last, Control::kBadStep);
  EXPECT_EQ(step.ops, 1);
  EXPECT_EQ(step.detail, 0);
  const Walked spin = Walk(Parse("  for i in 0 .. 1000 {\n    let j = i\n  }\n"), 100);
  EXPECT_EQ(spin.last, Control::kNoProgress);
}

TEST(ControlTest, InstructionsNameTheirStatements) {
  const ir::Program p = Parse(
      "  for i in 0 .. 2 {\n"
      "    fence.proxy.async\n"
      "  }\n"
      "  if 1 { fence.proxy.async } else { fence.proxy.async }\n");
  const std::vector<Instr> code = CompileRole(p.roles[0]);
  const ir::Block& body = p.roles[0].body;
  const auto& loop = std::get<ir::For>(body[0].node);
  const auto& branch = std::get<ir::If>(body[1].node);
  // for: init, test, body, step; if: branch, then, jump, else; the implicit exit.
  const std::vector<const ir::Stmt*> want = {
      &body[0], &body[0], &loop.body[0], &body[0], &body[1], &branch.then_body[0], &body[1],
      &branch.else_body[0], nullptr};
  ASSERT_EQ(code.size(), want.size());
  for (size_t pc = 0; pc < code.size(); ++pc) EXPECT_EQ(code[pc].stmt, want[pc]) << "pc " << pc;
  EXPECT_EQ(code.back().kind, Instr::kEnd);
}

}  // namespace
}  // namespace parity::engine
