// Test and benchmark helper (testonly): builds ir::Program values by hand (until/besides the parser) with terse calls.
#ifndef PARITY_SIM_TESTING_PROGRAM_BUILDER_H_
#define PARITY_SIM_TESTING_PROGRAM_BUILDER_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "sim/ir/ir.h"

namespace parity::testing {

class ProgramBuilder {
 public:
  explicit ProgramBuilder(std::string name) {
    p_.name = std::move(name);
    p_.file = p_.name + ".pipe";
  }

  ir::Program& program() { return p_; }

  // Expressions.
  ir::ExprId C(int64_t v) { return Add(ir::Expr::Kind::kConst, 0, 0, v); }
  ir::ExprId P(uint32_t index) { return Add(ir::Expr::Kind::kParam, 0, index); }
  ir::ExprId V(uint32_t slot) { return Add(ir::Expr::Kind::kVar, 0, slot); }
  ir::ExprId B(ir::Builtin b) { return Add(ir::Expr::Kind::kBuiltin, static_cast<uint8_t>(b)); }
  ir::ExprId Un(ir::UnaryOp op, ir::ExprId a) {
    return Add(ir::Expr::Kind::kUnary, static_cast<uint8_t>(op), 0, 0, a);
  }
  ir::ExprId Bin(ir::BinaryOp op, ir::ExprId a, ir::ExprId b) {
    return Add(ir::Expr::Kind::kBinary, static_cast<uint8_t>(op), 0, 0, a, b);
  }
  ir::ExprId Sel(ir::ExprId c, ir::ExprId a, ir::ExprId b) {
    return Add(ir::Expr::Kind::kSelect, 0, 0, 0, c, a, b);
  }

  uint32_t Param(std::string name, int64_t value) {
    ir::Param q;
    q.name = std::move(name);
    q.default_value = value;
    p_.params.push_back(std::move(q));
    return static_cast<uint32_t>(p_.params.size() - 1);
  }
  void Cluster(int64_t m, int64_t n, int64_t clusters = 1) {
    p_.cluster_m = C(m);
    p_.cluster_n = C(n);
    p_.clusters = C(clusters);
  }
  uint32_t Buffer(std::string name, int64_t stages, int64_t bytes) {
    ir::BufferDecl d;
    d.name = std::move(name);
    d.stages = C(stages);
    d.bytes = C(bytes);
    d.align = C(1024);
    p_.buffers.push_back(std::move(d));
    return static_cast<uint32_t>(p_.buffers.size() - 1);
  }
  uint32_t Barrier(std::string name, ir::ExprId size, ir::ExprId count) {
    ir::BarrierDecl d;
    d.name = std::move(name);
    d.size = size;
    d.count = count;
    p_.barriers.push_back(std::move(d));
    return static_cast<uint32_t>(p_.barriers.size() - 1);
  }
  // A 2-D f16 map with the given box (inner first), no swizzle.
  uint32_t TensorMap2D(std::string name, int64_t dim0, int64_t dim1, int64_t box0, int64_t box1,
                       std::string swizzle = "none") {
    ir::TensorMapDecl t;
    t.name = std::move(name);
    t.dtype = "f16";
    t.global_dims = {C(dim0), C(dim1)};
    t.box_dims = {C(box0), C(box1)};
    t.swizzle = std::move(swizzle);
    p_.tensor_maps.push_back(std::move(t));
    return static_cast<uint32_t>(p_.tensor_maps.size() - 1);
  }
  ir::Role& Role(std::string name, int64_t count = 1, int64_t threads = 1, uint32_t num_vars = 4) {
    ir::Role r;
    r.name = std::move(name);
    r.count = C(count);
    r.threads = C(threads);
    r.num_vars = num_vars;
    for (uint32_t i = 0; i < num_vars; ++i) r.var_names.push_back("v" + std::to_string(i));
    p_.roles.push_back(std::move(r));
    return p_.roles.back();
  }

  // Statements.
  static ir::Stmt Op(ir::Op op, int line = 0) {
    ir::Stmt s{op, {}};
    s.where.line = line;
    return s;
  }
  static ir::Stmt Let(uint32_t var, ir::ExprId e) { return ir::Stmt{ir::Let{var, e}, {}}; }
  static ir::Stmt For(uint32_t var, ir::ExprId lo, ir::ExprId hi, ir::Block body) {
    ir::For f;
    f.var = var;
    f.lo = lo;
    f.hi = hi;
    f.body = std::move(body);
    return ir::Stmt{std::move(f), {}};
  }
  static ir::Stmt If(ir::ExprId cond, ir::Block then_body, ir::Block else_body = {}) {
    ir::If i;
    i.cond = cond;
    i.then_body = std::move(then_body);
    i.else_body = std::move(else_body);
    return ir::Stmt{std::move(i), {}};
  }
  ir::BarrierRef Bar(uint32_t barrier, ir::ExprId index, ir::ExprId cta = ir::kNoExpr) {
    return ir::BarrierRef{barrier, index, cta};
  }
  ir::BufferRef Buf(uint32_t buffer, ir::ExprId slot) {
    ir::BufferRef r;
    r.buffer = buffer;
    r.slot = slot;
    return r;
  }

 private:
  ir::ExprId Add(ir::Expr::Kind kind, uint8_t op = 0, uint32_t index = 0, int64_t value = 0,
                 ir::ExprId a = ir::kNoExpr, ir::ExprId b = ir::kNoExpr,
                 ir::ExprId c = ir::kNoExpr) {
    ir::Expr e;
    e.kind = kind;
    e.op = op;
    e.index = index;
    e.value = value;
    e.a = a;
    e.b = b;
    e.c = c;
    e.where = SourceLocation{p_.file, static_cast<int>(p_.exprs.size()) + 1, 1};
    p_.exprs.push_back(e);
    return static_cast<ir::ExprId>(p_.exprs.size() - 1);
  }

  ir::Program p_;
};

}  // namespace parity::testing

#endif  // PARITY_SIM_TESTING_PROGRAM_BUILDER_H_
