// The `.pipe` parser's top-level declarations (parser_internal.h): schedule, param, cluster,
// clusters, buffer, barrier, tensormap, global, primary and role, and the defaults that
// ParseTop makes explicit in the IR.
#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "sim/ir/param_eval.h"
#include "sim/ir/parser_internal.h"

namespace parity::ir::parser_internal {

Status Parser::ParseTop() {
  while (true) {
    SkipNewlines();
    const Token t = Peek();
    if (t.kind == Token::Kind::kEof) break;
    if (t.kind != Token::Kind::kIdent) {
      return Expected_(
          "a declaration (schedule, param, cluster, clusters, buffer, barrier, named_barrier, "
          "tensormap, global, role, primary, forall, exists)");
    }
    Status s;
    if (t.text == "schedule") {
      Next();
      PARITY_RETURN_IF_ERROR(ExpectName("schedule name after `schedule`", &program_.name));
      s = EndOfStatement("the schedule name");
    } else if (t.text == "param") {
      s = ParseParam();
    } else if (t.text == "cluster") {
      s = ParseCluster();
    } else if (t.text == "clusters") {
      Next();
      if (program_.clusters != kNoExpr) return Error(t, "`clusters` given twice", "parse.duplicate");
      PARITY_RETURN_IF_ERROR(ParseExpr(&program_.clusters));
      s = EndOfStatement("`clusters N`");
    } else if (t.text == "buffer") {
      s = ParseBuffer();
    } else if (t.text == "barrier") {
      s = ParseBarrierDecl();
    } else if (t.text == "named_barrier") {
      s = ParseNamedBarrierDecl();
    } else if (t.text == "tensormap") {
      s = ParseTensorMap();
    } else if (t.text == "role") {
      s = ParseRole();
    } else if (t.text == "global") {
      s = ParseGlobal();
    } else if (t.text == "primary") {
      s = ParsePrimary();
    } else if (t.text == "forall" || t.text == "exists") {
      uint32_t id = 0;
      s = ParseAssertion(t.text == "forall" ? Assertion::Kind::kForall : Assertion::Kind::kExists,
                         &id);
    } else if (t.text == "assert") {
      return Error(t,
                   "`assert` is a statement of a role's body; at the top level state an "
                   "end-of-run property with `forall E` or `exists E`",
                   "parse.assert-outside-role");
    } else {
      return Expected_(
          "a declaration (schedule, param, cluster, clusters, buffer, barrier, named_barrier, "
          "tensormap, global, role, primary, forall, exists)");
    }
    PARITY_RETURN_IF_ERROR(s);
  }
  // Defaults, made explicit so that every consumer of the IR sees a value.
  const Token end = Peek();
  if (program_.cluster_m == kNoExpr) program_.cluster_m = Const(1, end);
  if (program_.cluster_n == kNoExpr) program_.cluster_n = Const(1, end);
  if (program_.clusters == kNoExpr) program_.clusters = Const(1, end);
  if (program_.roles.empty()) return Error(end, "the schedule has no `role`", "parse.no-roles");
  FinishPrimaries();
  bool own = false;
  for (const Role& r : program_.roles) own = own || r.grid == 0;
  if (!own) {
    return Error(end,
                 "the schedule has no `role` of its own grid (every role is inside `primary`: "
                 "declare the dependent grid's roles outside the `primary` block)",
                 "parse.no-roles");
  }
  return Status::Ok();
}

Status Parser::ParseGlobal() {
  Next();
  GlobalDecl g;
  Token name;
  PARITY_RETURN_IF_ERROR(ExpectName("global buffer name after `global`", &g.name, &name));
  PARITY_RETURN_IF_ERROR(CheckNewObjectName(name, "global buffer"));
  g.where = Loc(name);
  PARITY_RETURN_IF_ERROR(
      ExpectPunct("[", "after global buffer name (`global OUT[SLOTS] bytes N`)"));
  PARITY_RETURN_IF_ERROR(ParseExpr(&g.slots));
  PARITY_RETURN_IF_ERROR(ExpectPunct("]", "after the number of global buffer slots"));
  PARITY_RETURN_IF_ERROR(ExpectWord("bytes", "after `global " + g.name + "[...]`"));
  PARITY_RETURN_IF_ERROR(ParseExpr(&g.bytes));
  program_.globals.push_back(std::move(g));
  return EndOfStatement("the global buffer declaration");
}

Status Parser::ParsePrimary() {
  const Token kw = Next();
  if (program_.primaries.size() >= kMaxPrimaryGrids) {
    return Error(kw,
                 "more than " + std::to_string(kMaxPrimaryGrids) +
                     " `primary` grids (a chain of at most " +
                     std::to_string(kMaxPrimaryGrids + 1) + " grids with the schedule's own)",
                 "parse.primary");
  }
  Program::PrimaryGrid g;
  g.where = Loc(kw);
  PARITY_RETURN_IF_ERROR(
      ExpectWord("clusters", "after `primary` (`primary clusters N { role ... }`)"));
  PARITY_RETURN_IF_ERROR(ParseExpr(&g.clusters));
  if (!IsPunct("{")) return Expected_("`{` to start the primary grid's roles");
  const Token open = Next();
  program_.primaries.push_back(g);
  // Launch order for now (1 = the first `primary` block); FinishPrimaries numbers the grids
  // backwards from the schedule's own once every block is read.
  const auto launch = static_cast<uint8_t>(program_.primaries.size());
  size_t roles = 0;
  while (true) {
    SkipNewlines();
    if (AcceptPunct("}")) break;
    const Token t = Peek();
    if (t.kind == Token::Kind::kEof) {
      return Error(t, "expected `}` to close the primary grid opened at line " +
                          std::to_string(open.line) + ", found end of file");
    }
    if (!(t.kind == Token::Kind::kIdent && t.text == "role")) {
      return Error(t, "expected `role` or `}` inside `primary` (the preceding grid declares "
                      "only its roles; buffers, barriers and globals are declared at the top "
                      "level), found `" + t.text + "`",
                   "parse.primary");
    }
    PARITY_RETURN_IF_ERROR(ParseRole());
    program_.roles.back().grid = launch;
    ++roles;
  }
  if (roles == 0) return Error(kw, "the primary grid has no `role`", "parse.primary");
  return EndOfStatement("the primary grid");
}

void Parser::FinishPrimaries() {
  // Grid g is the one launched g launches before the schedule's own: the last block is grid 1,
  // the prerequisite of the own grid (ir.h Program::primaries).
  const size_t n = program_.primaries.size();
  std::reverse(program_.primaries.begin(), program_.primaries.end());
  for (Role& r : program_.roles) {
    if (r.grid != 0) r.grid = static_cast<uint8_t>(n + 1 - r.grid);
  }
}

Status Parser::CheckNewObjectName(const Token& t, const std::string& kind) const {
  // `bar` is a clause word only right after a copy's destination, where a barrier reference
  // follows (`-> A[s] bar bar[s]` reads unambiguously), so a barrier array may take the name
  // CUDA code often gives it.
  if (!(kind == "barrier" && t.text == "bar")) PARITY_RETURN_IF_ERROR(CheckNotReserved(t, kind));
  auto taken = [&](const auto& decls) {
    for (const auto& d : decls) {
      if (d.name == t.text) return true;
    }
    return false;
  };
  if (taken(program_.buffers) || taken(program_.barriers) || taken(program_.tensor_maps) ||
      taken(program_.roles) || taken(program_.globals) || taken(program_.named_barriers)) {
    return Error(t, "`" + t.text + "` is already declared", "parse.duplicate");
  }
  return Status::Ok();
}

Status Parser::ParseParam() {
  Next();
  Param p;
  Token name;
  PARITY_RETURN_IF_ERROR(ExpectName("param name after `param`", &p.name, &name));
  p.where = Loc(name);
  PARITY_RETURN_IF_ERROR(CheckNotReserved(name, "param"));
  for (const Param& q : program_.params) {
    if (q.name == p.name) return Error(name, "param `" + p.name + "` declared twice", "parse.duplicate");
  }
  PARITY_RETURN_IF_ERROR(ExpectPunct("=", "after param name"));
  PARITY_RETURN_IF_ERROR(ParseExpr(&p.default_expr));
  std::vector<int64_t> defaults;
  for (const Param& q : program_.params) defaults.push_back(q.default_value);
  auto v = EvalParamExpr(program_, p.default_expr, defaults, "parse.bad-value");
  if (!v.ok()) {
    const SourceLocation& w = v.status().where();
    return Status("parse.bad-value",
                  "default of param `" + p.name + "`: " + v.status().message() +
                      Snippet(w.line, w.column),
                  w);
  }
  p.default_value = *v;
  if (program_.params.size() >= kMaxParams) {
    return Error(name, "more than " + std::to_string(kMaxParams) + " params (what a trace "
                 "header can hold)", "parse.too-many-params");
  }
  program_.params.push_back(std::move(p));
  return EndOfStatement("the param default");
}

Status Parser::ParseCluster() {
  const Token kw = Next();
  if (program_.cluster_m != kNoExpr) return Error(kw, "`cluster` given twice", "parse.duplicate");
  PARITY_RETURN_IF_ERROR(ParseClusterDim(&program_.cluster_m));
  const Token x = Peek();
  if (x.kind == Token::Kind::kIdent && x.text.size() > 1 && x.text[0] == 'x' &&
      x.text.find_first_not_of("0123456789", 1) == std::string::npos && x.end == x.offset + x.text.size()) {
    // `2x2` lexes as `2` `x2`.
    Next();
    int64_t v = 0;
    for (size_t i = 1; i < x.text.size(); ++i) {
      if (v > 1000000) return Error(x, "cluster dimension too large", "parse.bad-value");
      v = v * 10 + (x.text[i] - '0');
    }
    Token at = x;
    at.col += 1;
    program_.cluster_n = Const(v, at);
  } else {
    if (!(x.kind == Token::Kind::kIdent && x.text == "x")) {
      return Expected_("`x` between the cluster dimensions (e.g. `cluster 2x2`)");
    }
    Next();
    PARITY_RETURN_IF_ERROR(ParseClusterDim(&program_.cluster_n));
  }
  return EndOfStatement("the cluster shape");
}

Status Parser::ParseClusterDim(ExprId* out) {
  const Token& t = Peek();
  if (t.kind == Token::Kind::kInt || (t.kind == Token::Kind::kPunct && t.text == "(")) {
    return ParsePrimary(out);
  }
  return Expected_("a cluster dimension (a number or a parenthesised expression)");
}

Status Parser::ParseBuffer() {
  Next();
  BufferDecl b;
  Token name;
  PARITY_RETURN_IF_ERROR(ExpectName("buffer name after `buffer`", &b.name, &name));
  PARITY_RETURN_IF_ERROR(CheckNewObjectName(name, "buffer"));
  b.where = Loc(name);
  PARITY_RETURN_IF_ERROR(ExpectPunct("[", "after buffer name (`buffer A[STAGES] bytes N`)"));
  PARITY_RETURN_IF_ERROR(ParseExpr(&b.stages));
  PARITY_RETURN_IF_ERROR(ExpectPunct("]", "after the number of buffer slots"));
  PARITY_RETURN_IF_ERROR(ExpectWord("bytes", "after `buffer " + b.name + "[...]`"));
  PARITY_RETURN_IF_ERROR(ParseExpr(&b.bytes));
  bool has_align = false;
  while (true) {
    if (!has_align && AcceptWord("align")) {
      has_align = true;
      PARITY_RETURN_IF_ERROR(ParseExpr(&b.align));
    } else if (b.alias_of == BufferDecl::kNoAlias && IsWord("aliases")) {
      // `aliases V [+ OFF]`: a union with an earlier buffer (ir.h BufferDecl).
      Next();
      const Token target = Peek();
      if (target.kind == Token::Kind::kIdent && target.text == b.name) {
        return Error(target, "buffer " + b.name + " cannot alias itself", "parse.bad-alias");
      }
      PARITY_RETURN_IF_ERROR(
          LookupObject(program_.buffers, "buffer", "parse.unknown-buffer", &b.alias_of));
      if (AcceptPunct("+")) PARITY_RETURN_IF_ERROR(ParseExpr(&b.alias_offset));
    } else {
      break;
    }
  }
  // An alias's default alignment is the 16 bytes every executor access needs, so that an
  // offset into the aliased buffer need not be a multiple of 1024.
  if (!has_align) b.align = Const(b.alias_of == BufferDecl::kNoAlias ? 1024 : 16, name);
  program_.buffers.push_back(std::move(b));
  return EndOfStatement("the buffer declaration");
}

Status Parser::ParseBarrierDecl() {
  Next();
  BarrierDecl b;
  Token name;
  PARITY_RETURN_IF_ERROR(ExpectName("barrier name after `barrier`", &b.name, &name));
  PARITY_RETURN_IF_ERROR(CheckNewObjectName(name, "barrier"));
  b.where = Loc(name);
  PARITY_RETURN_IF_ERROR(ExpectPunct("[", "after barrier name (`barrier full[STAGES] count 1`)"));
  PARITY_RETURN_IF_ERROR(ParseExpr(&b.size));
  PARITY_RETURN_IF_ERROR(ExpectPunct("]", "after the barrier array length"));
  PARITY_RETURN_IF_ERROR(ExpectWord("count", "after `barrier " + b.name + "[...]`"));
  PARITY_RETURN_IF_ERROR(ParseExpr(&b.count));
  program_.barriers.push_back(std::move(b));
  return EndOfStatement("the barrier declaration");
}

// `named_barrier q_empty = 3`. The id is a literal: it names a hardware resource (one of the
// CTA's 16 named barriers, PTX ISA bar / barrier), as an enum constant does in CUTLASS and FA3,
// so that no -D override can make two names share an id.
Status Parser::ParseNamedBarrierDecl() {
  Next();
  NamedBarrierDecl d;
  Token name;
  PARITY_RETURN_IF_ERROR(
      ExpectName("named barrier name after `named_barrier`", &d.name, &name));
  PARITY_RETURN_IF_ERROR(CheckNewObjectName(name, "named barrier"));
  d.where = Loc(name);
  PARITY_RETURN_IF_ERROR(
      ExpectPunct("=", "after the named barrier's name (`named_barrier q_empty = 3`)"));
  const Token id = Peek();
  if (id.kind != Token::Kind::kInt) {
    return Expected_("the named barrier's id, an integer 0..15");
  }
  Next();
  d.id = id.value;
  if (d.id < 0 || d.id > 15) {
    return Error(id, "named barrier id " + id.text + " is outside 0..15 (a CTA has 16 named "
                 "barriers, PTX ISA bar)", "parse.bad-value");
  }
  for (const NamedBarrierDecl& o : program_.named_barriers) {
    if (o.id == d.id) {
      return Error(id, "named barrier id " + id.text + " is already named `" + o.name +
                   "` (line " + std::to_string(o.where.line) + ")", "parse.duplicate");
    }
  }
  program_.named_barriers.push_back(std::move(d));
  return EndOfStatement("the named barrier declaration");
}

Status Parser::ParseSizeWord(const std::string& what, const std::vector<std::string>& allowed,
                             std::string* out) {
  const Token t = Peek();
  std::string word;
  if (t.kind == Token::Kind::kInt) {
    Next();
    const Token& b = Peek();
    if (!(b.kind == Token::Kind::kIdent && b.text == "B" && b.offset == t.end)) {
      return Expected_("`B` directly after the " + what + " size (e.g. `128B`)");
    }
    Next();
    word = t.text + "B";
  } else if (t.kind == Token::Kind::kIdent) {
    Next();
    word = t.text;
  } else {
    return Expected_(what + " mode");
  }
  for (const std::string& a : allowed) {
    if (a == word) {
      *out = word;
      return Status::Ok();
    }
  }
  std::string list;
  for (const std::string& a : allowed) list += (list.empty() ? "" : ", ") + a;
  return Error(t, "unknown " + what + " `" + word + "` (expected one of: " + list + ")",
               "parse.bad-value");
}

Status Parser::ParseTensorMap() {
  Next();
  TensorMapDecl m;
  Token name;
  PARITY_RETURN_IF_ERROR(ExpectName("tensor map name after `tensormap`", &m.name, &name));
  PARITY_RETURN_IF_ERROR(CheckNewObjectName(name, "tensor map"));
  m.where = Loc(name);
  bool seen_dtype = false, seen_swizzle = false, seen_interleave = false, seen_oob = false;
  while (Peek().kind == Token::Kind::kIdent) {
    const Token kw = Next();
    auto twice = [&](bool* seen) {
      if (*seen) return Error(kw, "`" + kw.text + "` given twice", "parse.duplicate");
      *seen = true;
      return Status::Ok();
    };
    if (kw.text == "dtype") {
      PARITY_RETURN_IF_ERROR(twice(&seen_dtype));
      static const std::vector<std::string> kTypes = {
          "u8", "u16", "u32", "s32", "u64", "s64", "f16", "f32", "f64", "bf16",
          "f32ftz", "tf32", "tf32ftz"};
      const Token d = Peek();
      PARITY_RETURN_IF_ERROR(ExpectName("an element type after `dtype`", &m.dtype));
      bool ok = false;
      for (const auto& k : kTypes) ok = ok || k == m.dtype;
      if (!ok) {
        return Error(d, "unknown dtype `" + m.dtype +
                            "` (expected u8, u16, u32, s32, u64, s64, f16, f32, f64, bf16, "
                            "f32ftz, tf32, tf32ftz)",
                     "parse.bad-value");
      }
    } else if (kw.text == "dims") {
      if (!m.global_dims.empty()) return Error(kw, "`dims` given twice", "parse.duplicate");
      PARITY_RETURN_IF_ERROR(ParseExprList("the global dims", &m.global_dims));
    } else if (kw.text == "box") {
      if (!m.box_dims.empty()) return Error(kw, "`box` given twice", "parse.duplicate");
      PARITY_RETURN_IF_ERROR(ParseExprList("the box dims", &m.box_dims));
    } else if (kw.text == "strides") {
      if (!m.global_strides.empty()) return Error(kw, "`strides` given twice", "parse.duplicate");
      PARITY_RETURN_IF_ERROR(ParseExprList("the global strides", &m.global_strides));
    } else if (kw.text == "element_strides") {
      if (!m.element_strides.empty()) {
        return Error(kw, "`element_strides` given twice", "parse.duplicate");
      }
      PARITY_RETURN_IF_ERROR(ParseExprList("the element strides", &m.element_strides));
    } else if (kw.text == "swizzle") {
      PARITY_RETURN_IF_ERROR(twice(&seen_swizzle));
      PARITY_RETURN_IF_ERROR(ParseSizeWord("swizzle", {"none", "32B", "64B", "128B"}, &m.swizzle));
    } else if (kw.text == "interleave") {
      PARITY_RETURN_IF_ERROR(twice(&seen_interleave));
      PARITY_RETURN_IF_ERROR(ParseSizeWord("interleave", {"none", "16B", "32B"}, &m.interleave));
    } else if (kw.text == "oob") {
      PARITY_RETURN_IF_ERROR(twice(&seen_oob));
      PARITY_RETURN_IF_ERROR(ParseSizeWord("oob fill", {"zero", "nan"}, &m.oob_fill));
    } else {
      return Error(kw, "expected a tensor map field (dtype, dims, box, strides, element_strides, "
                       "swizzle, interleave, oob), found `" + kw.text + "`");
    }
  }
  if (!seen_dtype) return Error(name, "tensor map `" + m.name + "` needs `dtype`", "parse.missing");
  if (m.global_dims.empty()) return Error(name, "tensor map `" + m.name + "` needs `dims [...]`", "parse.missing");
  if (m.box_dims.empty()) return Error(name, "tensor map `" + m.name + "` needs `box [...]`", "parse.missing");
  if (m.box_dims.size() != m.global_dims.size()) {
    return Error(name, "tensor map `" + m.name + "`: box has " + std::to_string(m.box_dims.size()) +
                           " dims but dims has " + std::to_string(m.global_dims.size()),
                 "parse.bad-value");
  }
  program_.tensor_maps.push_back(std::move(m));
  return EndOfStatement("the tensor map declaration");
}

Status Parser::ParseRole() {
  Next();
  program_.roles.emplace_back();
  role_ = &program_.roles.back();
  Token name;
  std::string role_name;
  PARITY_RETURN_IF_ERROR(ExpectName("role name after `role`", &role_name, &name));
  PARITY_RETURN_IF_ERROR(CheckNewObjectName(name, "role"));
  role_ = &program_.roles.back();
  role_->name = role_name;
  role_->where = Loc(name);
  while (true) {
    if (IsWord("count") && role_->count == kNoExpr) {
      Next();
      PARITY_RETURN_IF_ERROR(ParseExpr(&role_->count));
    } else if (IsWord("threads") && role_->threads == kNoExpr) {
      Next();
      PARITY_RETURN_IF_ERROR(ParseExpr(&role_->threads));
    } else if (IsWord("when") && role_->when == kNoExpr) {
      Next();
      PARITY_RETURN_IF_ERROR(ParseExpr(&role_->when));
    } else {
      break;
    }
  }
  if (role_->count == kNoExpr) role_->count = Const(1, name);
  if (role_->threads == kNoExpr) role_->threads = Const(1, name);
  if (!IsPunct("{")) {
    return Expected_("`{` to start the body of role `" + role_name +
                     "` (or one of count, threads, when)");
  }
  Block body;
  PARITY_RETURN_IF_ERROR(ParseBlock(&body));
  role_ = &program_.roles.back();
  role_->body = std::move(body);
  role_ = nullptr;
  return EndOfStatement("the role body");
}

}  // namespace parity::ir::parser_internal
