// The `.pipe` parser (parser.h): the entry points, and the parts of the parser class
// (parser_internal.h) that every construct uses: tokens and errors, expressions, variables and
// their scopes, and references to barriers, buffers and CTAs. Declarations are parser_decls.cc,
// statements and operations parser_stmts.cc, the lexer parser_lexer.cc.
#include "sim/ir/parser.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "sim/common/read_file.h"
#include "sim/ir/parser_internal.h"

namespace parity::ir {
namespace parser_internal {
namespace {

struct BuiltinName {
  const char* name;
  Builtin builtin;
};
constexpr BuiltinName kBuiltins[] = {
    {"cta_rank", Builtin::kCtaRank},         {"cta_x", Builtin::kCtaX},
    {"cta_y", Builtin::kCtaY},               {"cluster_m", Builtin::kClusterM},
    {"cluster_n", Builtin::kClusterN},       {"cluster_size", Builtin::kClusterSize},
    {"cluster_id", Builtin::kClusterId},     {"agent", Builtin::kAgent},
    {"num_clusters", Builtin::kNumClusters}, {"grid_cta", Builtin::kGridCta},
    {"grid_size", Builtin::kGridSize},
};

// Words that start a statement or clause; they cannot name params, objects or variables.
bool IsReserved(const std::string& s) {
  static const char* const kWords[] = {
      "schedule", "param", "cluster", "clusters", "buffer", "barrier", "named_barrier",
      "tensormap", "role",
      "global", "primary",
      "let", "for", "while", "break", "bound", "in", "if", "else", "step", "count", "threads",
      "when", "bytes", "align", "aliases",
      "mask", "parity", "token", "coords", "bar", "multicast", "read", "noinc", "relaxed",
      "min", "max", "init", "inval", "arrive", "arrive_drop", "expect_tx", "complete_tx",
      "wait", "test_wait", "pending_count", "readback", "use", "write", "exit", "dtype", "dims", "box", "strides",
      "element_strides", "swizzle", "interleave", "oob"};
  for (const char* w : kWords) {
    if (s == w) return true;
  }
  for (const BuiltinName& b : kBuiltins) {
    if (s == b.name) return true;
  }
  return s.find('.') != std::string::npos;
}

}  // namespace

Expected<Program> Parser::Run() {
  std::string msg;
  int line = 0, col = 0;
  if (!Lex(text_, &toks_, &msg, &line, &col)) {
    return Status("parse", msg + Snippet(line, col), SourceLocation{file_, line, col});
  }
  program_.file = file_;
  // Default name: the file's stem.
  std::string stem = file_;
  if (auto slash = stem.find_last_of('/'); slash != std::string::npos) stem = stem.substr(slash + 1);
  if (auto dot = stem.find('.'); dot != std::string::npos && dot > 0) stem = stem.substr(0, dot);
  program_.name = stem;
  Status s = ParseTop();
  if (!s.ok()) return s;
  return std::move(program_);
}

// ------------------------------------------------------------------------------------------
// Tokens and errors.

void Parser::SkipNewlines() {
  while (Peek().kind == Token::Kind::kNewline ||
         (Peek().kind == Token::Kind::kPunct && Peek().text == ";")) {
    Next();
  }
}

std::string Parser::Snippet(int line, int col) const {
  if (line < 1 || static_cast<size_t>(line) > lines_.size()) return "";
  std::string l(lines_[line - 1]);
  std::string caret;
  for (int i = 1; i < col && static_cast<size_t>(i - 1) < l.size(); ++i) {
    caret += l[i - 1] == '\t' ? '\t' : ' ';
  }
  return "\n  " + l + "\n  " + caret + "^";
}

Status Parser::Error(const Token& at, const std::string& msg, const std::string& rule) const {
  return Status(rule, msg + Snippet(at.line, at.col), Loc(at));
}

Status Parser::Expected_(const std::string& what) const {
  return Error(Peek(), "expected " + what + ", found " + Describe(Peek()));
}

Status Parser::ExpectPunct(const char* p, const std::string& context) {
  if (AcceptPunct(p)) return Status::Ok();
  return Expected_(std::string("`") + p + "` " + context);
}

Status Parser::ExpectWord(const char* w, const std::string& context) {
  if (AcceptWord(w)) return Status::Ok();
  return Expected_(std::string("`") + w + "` " + context);
}

Status Parser::ExpectName(const std::string& what, std::string* name, Token* tok) {
  const Token& t = Peek();
  if (t.kind != Token::Kind::kIdent || t.text.find('.') != std::string::npos) {
    return Expected_(what);
  }
  if (tok != nullptr) *tok = t;
  *name = t.text;
  Next();
  return Status::Ok();
}

Status Parser::EndOfStatement(const std::string& what) {
  const Token& t = Peek();
  if (t.kind == Token::Kind::kNewline || (t.kind == Token::Kind::kPunct && t.text == ";")) {
    Next();
    return Status::Ok();
  }
  if (t.kind == Token::Kind::kEof || (t.kind == Token::Kind::kPunct && t.text == "}")) {
    return Status::Ok();
  }
  return Expected_("end of line or `;` after " + what);
}

// ------------------------------------------------------------------------------------------
// Expressions.

ExprId Parser::Add(Expr e, const Token& at) {
  e.where = Loc(at);
  int height = 0;
  if (e.kind == Expr::Kind::kUnary || e.kind == Expr::Kind::kBinary ||
      e.kind == Expr::Kind::kSelect) {
    height = 1 + std::max({Height(e.a), Height(e.b), Height(e.c)});
  }
  program_.exprs.push_back(e);
  heights_.resize(program_.exprs.size(), 0);
  heights_.back() = height;
  return static_cast<ExprId>(program_.exprs.size() - 1);
}

Status Parser::CheckHeight(ExprId id, const Token& at) {
  if (Height(id) <= kMaxExprHeight) return Status::Ok();
  return Error(at, "expression has more than " + std::to_string(kMaxExprHeight) +
                       " levels of operators; split it with params or `let`",
               "parse.expr-too-deep");
}

ExprId Parser::Const(int64_t v, const Token& at) {
  Expr e;
  e.kind = Expr::Kind::kConst;
  e.value = v;
  return Add(e, at);
}

ExprId Parser::MakeBinary(BinaryOp op, ExprId a, ExprId b, const Token& at) {
  Expr e;
  e.kind = Expr::Kind::kBinary;
  e.op = static_cast<uint8_t>(op);
  e.a = a;
  e.b = b;
  return Add(e, at);
}

Status Parser::ParseExpr(ExprId* out) {
  DepthGuard g(&depth_);
  if (depth_ > kMaxDepth) return Error(Peek(), "expression nested too deeply");
  ExprId cond;
  PARITY_RETURN_IF_ERROR(ParseBinary(0, &cond));
  if (!IsPunct("?")) {
    *out = cond;
    return Status::Ok();
  }
  const Token q = Next();
  ExprId a, b;
  PARITY_RETURN_IF_ERROR(ParseExpr(&a));
  PARITY_RETURN_IF_ERROR(ExpectPunct(":", "in `?:` expression"));
  PARITY_RETURN_IF_ERROR(ParseExpr(&b));
  Expr e;
  e.kind = Expr::Kind::kSelect;
  e.a = cond;
  e.b = a;
  e.c = b;
  *out = Add(e, q);
  return Status::Ok();
}

const Parser::BinOpInfo* Parser::FindBinOp(const Token& t) {
  static const BinOpInfo kOps[] = {
      {"||", BinaryOp::kOr, 0},     {"&&", BinaryOp::kAnd, 1},   {"|", BinaryOp::kBitOr, 2},
      {"^", BinaryOp::kBitXor, 3},  {"&", BinaryOp::kBitAnd, 4}, {"==", BinaryOp::kEq, 5},
      {"!=", BinaryOp::kNe, 5},     {"<", BinaryOp::kLt, 6},     {"<=", BinaryOp::kLe, 6},
      {">", BinaryOp::kGt, 6},      {">=", BinaryOp::kGe, 6},    {"<<", BinaryOp::kShl, 7},
      {">>", BinaryOp::kShr, 7},    {"+", BinaryOp::kAdd, 8},    {"-", BinaryOp::kSub, 8},
      {"*", BinaryOp::kMul, 9},     {"/", BinaryOp::kDiv, 9},    {"%", BinaryOp::kMod, 9},
  };
  if (t.kind != Token::Kind::kPunct) return nullptr;
  for (const BinOpInfo& o : kOps) {
    if (t.text == o.text) return &o;
  }
  return nullptr;
}

Status Parser::ParseBinary(int level, ExprId* out) {
  if (level > 9) return ParseUnary(out);
  ExprId lhs;
  PARITY_RETURN_IF_ERROR(ParseBinary(level + 1, &lhs));
  while (true) {
    const BinOpInfo* info = FindBinOp(Peek());
    if (info == nullptr || info->level != level) break;
    // `<` directly followed by `-` after a tensor-store coordinate list is `<-`; inside an
    // expression `a <-1` still means a < -1, so nothing special is needed here.
    const Token op = Next();
    ExprId rhs;
    PARITY_RETURN_IF_ERROR(ParseBinary(level + 1, &rhs));
    lhs = MakeBinary(info->op, lhs, rhs, op);
    PARITY_RETURN_IF_ERROR(CheckHeight(lhs, op));
  }
  *out = lhs;
  return Status::Ok();
}

Status Parser::ParseUnary(ExprId* out) {
  DepthGuard g(&depth_);
  if (depth_ > kMaxDepth) return Error(Peek(), "expression nested too deeply");
  UnaryOp op;
  if (IsPunct("-")) {
    op = UnaryOp::kNeg;
  } else if (IsPunct("!")) {
    op = UnaryOp::kNot;
  } else if (IsPunct("~")) {
    op = UnaryOp::kBitNot;
  } else if (IsPunct("+")) {
    Next();
    return ParseUnary(out);
  } else {
    return ParsePrimary(out);
  }
  const Token t = Next();
  ExprId a;
  PARITY_RETURN_IF_ERROR(ParseUnary(&a));
  Expr e;
  e.kind = Expr::Kind::kUnary;
  e.op = static_cast<uint8_t>(op);
  e.a = a;
  *out = Add(e, t);
  return Status::Ok();
}

Status Parser::ParsePrimary(ExprId* out) {
  const Token t = Peek();
  if (t.kind == Token::Kind::kInt) {
    Next();
    *out = Const(t.value, t);
    return Status::Ok();
  }
  if (t.kind == Token::Kind::kPunct && t.text == "(") {
    Next();
    PARITY_RETURN_IF_ERROR(ParseExpr(out));
    return ExpectPunct(")", "to close `(`");
  }
  if (t.kind == Token::Kind::kIdent) {
    if (t.text == "min" || t.text == "max") {
      Next();
      PARITY_RETURN_IF_ERROR(ExpectPunct("(", "after `" + t.text + "`"));
      ExprId a, b;
      PARITY_RETURN_IF_ERROR(ParseExpr(&a));
      PARITY_RETURN_IF_ERROR(ExpectPunct(",", "between the arguments of `" + t.text + "`"));
      PARITY_RETURN_IF_ERROR(ParseExpr(&b));
      PARITY_RETURN_IF_ERROR(ExpectPunct(")", "after the arguments of `" + t.text + "`"));
      *out = MakeBinary(t.text == "min" ? BinaryOp::kMin : BinaryOp::kMax, a, b, t);
      return Status::Ok();
    }
    static const std::pair<const char*, StateFn> kStateFns[] = {
        {"phase", StateFn::kPhase}, {"pending", StateFn::kPending},
        {"tx", StateFn::kTx}, {"landed", StateFn::kLanded}};
    for (const auto& [name, fn] : kStateFns) {
      if (t.text == name && IsPunct("(", 1) && !LookupVar(t.text)) {
        Next();
        return ParseStateRead(t, fn, out);
      }
    }
    Next();
    return ResolveName(t, out);
  }
  return Expected_("an expression");
}

Status Parser::ParseStateRead(const Token& t, StateFn fn, ExprId* out) {
  if (!in_assertion_) {
    return Error(t,
                 "`" + t.text + "(...)` reads the model's state: it may appear only in an "
                 "`assert`, `forall` or `exists` expression",
                 "parse.state-outside-assertion");
  }
  PARITY_RETURN_IF_ERROR(ExpectPunct("(", "after `" + t.text + "`"));
  Expr e;
  e.kind = Expr::Kind::kState;
  e.op = static_cast<uint8_t>(fn);
  if (fn == StateFn::kLanded) {
    BufferRef ref;
    PARITY_RETURN_IF_ERROR(ParseBufferRef(&ref, /*allow_cta=*/false));
    if (ref.offset != kNoExpr || ref.bytes != kNoExpr) {
      return Error(t, "`landed` takes a whole buffer slot `B[s]` (no `+ offset`, no `bytes`)",
                   "parse.bad-state-read");
    }
    e.index = ref.buffer;
    e.a = ref.slot;
  } else {
    const Token at = Peek();
    BarrierRef ref;
    PARITY_RETURN_IF_ERROR(ParseBarrierRef(&ref));
    if (ref.cta != kNoExpr) {
      return Error(at,
                   "`" + t.text + "` reads a barrier of the executing CTA; `@cta` is not "
                   "allowed here (a CTA waits only on its own barriers, and a property is "
                   "evaluated for every CTA)",
                   "parse.bad-state-read");
    }
    e.index = ref.barrier;
    e.a = ref.index;
  }
  PARITY_RETURN_IF_ERROR(ExpectPunct(")", "to close `" + t.text + "(`"));
  *out = Add(e, t);
  return Status::Ok();
}

Status Parser::ParseAssertion(Assertion::Kind kind, uint32_t* id) {
  const Token word = Next();
  const Token first = Peek();
  Assertion a;
  a.kind = kind;
  a.where = Loc(word);
  in_assertion_ = true;
  Status s = ParseExpr(&a.cond);
  in_assertion_ = false;
  PARITY_RETURN_IF_ERROR(s);
  const Token& last = toks_[pos_ - 1];
  a.text = std::string(text_.substr(first.offset, last.end - first.offset));
  if (IsPunct("--")) {
    a.message = Next().rest;
  } else if (Peek().kind != Token::Kind::kNewline && Peek().kind != Token::Kind::kEof &&
             !IsPunct("}") && !IsPunct(";")) {
    return Error(Peek(),
                 "expected the end of the `" + word.text + "` (a newline) or `-- message`, found " +
                     Describe(Peek()),
                 "parse.bad-assertion");
  }
  *id = static_cast<uint32_t>(program_.assertions.size());
  program_.assertions.push_back(std::move(a));
  return EndOfStatement("`" + word.text + "`");
}

Status Parser::ResolveName(const Token& t, ExprId* out) {
  Expr e;
  if (auto slot = LookupVar(t.text)) {
    e.kind = Expr::Kind::kVar;
    e.index = *slot;
    *out = Add(e, t);
    return Status::Ok();
  }
  for (size_t i = 0; i < program_.params.size(); ++i) {
    if (program_.params[i].name == t.text) {
      e.kind = Expr::Kind::kParam;
      e.index = static_cast<uint32_t>(i);
      *out = Add(e, t);
      return Status::Ok();
    }
  }
  for (size_t i = 0; i < program_.named_barriers.size(); ++i) {
    if (program_.named_barriers[i].name == t.text) {
      e.kind = Expr::Kind::kConst;
      e.value = program_.named_barriers[i].id;
      e.index = static_cast<uint32_t>(i + 1);  // printed back as the name
      *out = Add(e, t);
      return Status::Ok();
    }
  }
  for (const BuiltinName& b : kBuiltins) {
    if (t.text == b.name) {
      e.kind = Expr::Kind::kBuiltin;
      e.op = static_cast<uint8_t>(b.builtin);
      *out = Add(e, t);
      return Status::Ok();
    }
  }
  if (std::string why = WhyNotVisible(t.text); !why.empty()) {
    return Error(t, why, "parse.maybe-unset");
  }
  return Error(t,
               "unknown name `" + t.text +
                   "` (expected a variable in scope, a param or named barrier declared above, or a "
                   "builtin: "
                   "cta_rank, cta_x, cta_y, cluster_m, cluster_n, cluster_size, cluster_id, "
                   "num_clusters, grid_cta, grid_size, agent)",
               "parse.unknown-name");
}

Status Parser::ParseExprList(const std::string& what, std::vector<ExprId>* out) {
  PARITY_RETURN_IF_ERROR(ExpectPunct("[", "to start " + what));
  while (true) {
    ExprId e;
    PARITY_RETURN_IF_ERROR(ParseExpr(&e));
    out->push_back(e);
    if (out->size() > 16) return Error(Peek(), what + " has more than 16 elements");
    if (AcceptPunct(",")) continue;
    return ExpectPunct("]", "or `,` in " + what);
  }
}

// ------------------------------------------------------------------------------------------
// Variables (role-local, lexically scoped: parser_internal.h).

std::optional<uint32_t> Parser::LookupVar(const std::string& name) const {
  for (auto s = scopes_.rbegin(); s != scopes_.rend(); ++s) {
    for (auto v = s->rbegin(); v != s->rend(); ++v) {
      if (v->first == name) return v->second;
    }
  }
  return std::nullopt;
}

uint32_t Parser::NewVar(const std::string& name) {
  // In a branch of an `if`, a name that an earlier branch of the same chain bound gets that
  // branch's slot: if every branch binds it, it is one variable after the `if` (ParseIf).
  if (!reuse_.empty() && reuse_.back().depth == scopes_.size()) {
    for (const auto& [n, slot] : *reuse_.back().bindings) {
      if (n == name) {
        scopes_.back().emplace_back(name, slot);
        return slot;
      }
    }
  }
  const uint32_t slot = role_->num_vars++;
  role_->var_names.push_back(name);
  scopes_.back().emplace_back(name, slot);
  return slot;
}

std::string Parser::WhyNotVisible(const std::string& name) const {
  for (auto s = hidden_.rbegin(); s != hidden_.rend(); ++s) {
    for (auto h = s->rbegin(); h != s->rend(); ++h) {
      if (h->first == name) return h->second;
    }
  }
  return {};
}

void Parser::Hide(const std::string& name, std::string why) {
  if (LookupVar(name)) return;  // an outer variable of that name is visible: no confusion
  hidden_.back().emplace_back(name, std::move(why));
}

Status Parser::DefineOrAssign(uint32_t* slot, const std::string& what) {
  std::string name;
  Token t;
  PARITY_RETURN_IF_ERROR(ExpectName(what, &name, &t));
  PARITY_RETURN_IF_ERROR(CheckNotReserved(t, "variable"));
  if (auto s = LookupVar(name)) {
    *slot = *s;
  } else {
    *slot = NewVar(name);
  }
  return Status::Ok();
}

Status Parser::CheckNotReserved(const Token& t, const std::string& what) const {
  if (IsReserved(t.text)) {
    return Error(t, "`" + t.text + "` is a reserved word and cannot name a " + what,
                 "parse.reserved");
  }
  for (const NamedBarrierDecl& n : program_.named_barriers) {
    if (n.name == t.text && what != "named barrier") {
      return Error(t, "`" + t.text + "` is already a named barrier; a " + what +
                          " of the same name would hide it",
                   "parse.duplicate");
    }
  }
  for (const Param& p : program_.params) {
    if (p.name == t.text && what != "param") {
      return Error(t, "`" + t.text + "` is already a param; a " + what +
                          " of the same name would hide it",
                   "parse.duplicate");
    }
  }
  return Status::Ok();
}

// ------------------------------------------------------------------------------------------
// Object references.

Status Parser::ParseCta(ExprId* cta) {
  // `@cta(E)`
  PARITY_RETURN_IF_ERROR(ExpectPunct("@", ""));
  PARITY_RETURN_IF_ERROR(ExpectWord("cta", "after `@`"));
  PARITY_RETURN_IF_ERROR(ExpectPunct("(", "after `@cta`"));
  const Token at = Peek();
  PARITY_RETURN_IF_ERROR(ParseExpr(cta));
  // A constant rank outside a constant cluster shape (declared above) is known bad now; other
  // ranks are checked by the engine when they are evaluated (engine.cta-range).
  auto constant = [&](ExprId e, int64_t* v) {
    if (e == kNoExpr || program_.exprs[e].kind != Expr::Kind::kConst) return false;
    *v = program_.exprs[e].value;
    return true;
  };
  int64_t r = 0, m = 0, n = 0;
  if (constant(*cta, &r) && constant(program_.cluster_m, &m) &&
      constant(program_.cluster_n, &n) && (r < 0 || r >= m * n)) {
    return Error(at, "CTA rank " + std::to_string(r) + " is outside the cluster (ranks 0.." +
                         std::to_string(m * n - 1) + " of `cluster " + std::to_string(m) +
                         "x" + std::to_string(n) + "`)",
                 "parse.cta-range");
  }
  return ExpectPunct(")", "after the CTA rank");
}

Status Parser::ParseBarrierRef(BarrierRef* ref) {
  PARITY_RETURN_IF_ERROR(
      LookupObject(program_.barriers, "barrier", "parse.unknown-barrier", &ref->barrier));
  PARITY_RETURN_IF_ERROR(ExpectPunct("[", "after barrier name"));
  PARITY_RETURN_IF_ERROR(ParseExpr(&ref->index));
  PARITY_RETURN_IF_ERROR(ExpectPunct("]", "after barrier index"));
  if (IsPunct("@")) PARITY_RETURN_IF_ERROR(ParseCta(&ref->cta));
  return Status::Ok();
}

Status Parser::RejectGlobal(const std::string& what) {
  const Token& t = Peek();
  if (t.kind != Token::Kind::kIdent) return Status::Ok();
  for (const GlobalDecl& g : program_.globals) {
    if (g.name == t.text) {
      return Error(t, "`" + t.text + "` is a global buffer; " + what +
                          " needs a shared-memory `buffer` (global memory is read and written "
                          "only by `use` and `write`)",
                   "parse.global-buffer");
    }
  }
  return Status::Ok();
}

bool Parser::IsGlobalName() const {
  const Token& t = Peek();
  if (t.kind != Token::Kind::kIdent) return false;
  for (const GlobalDecl& g : program_.globals) {
    if (g.name == t.text) return true;
  }
  return false;
}

Status Parser::ParseGlobalAccess(GlobalAccess* op) {
  PARITY_RETURN_IF_ERROR(
      LookupObject(program_.globals, "global buffer", "parse.unknown-buffer", &op->global));
  PARITY_RETURN_IF_ERROR(ExpectPunct("[", "after global buffer name"));
  PARITY_RETURN_IF_ERROR(ParseExpr(&op->slot));
  PARITY_RETURN_IF_ERROR(ExpectPunct("]", "after global buffer slot"));
  while (true) {
    if (IsPunct("+") && op->offset == kNoExpr) {
      Next();
      PARITY_RETURN_IF_ERROR(ParseExpr(&op->offset));
    } else if (IsWord("bytes") && op->bytes == kNoExpr) {
      Next();
      PARITY_RETURN_IF_ERROR(ParseExpr(&op->bytes));
    } else if (IsPunct("@")) {
      return Error(Peek(), "`@cta` names a CTA's shared memory; global memory is one for the "
                           "whole launch",
                   "parse.global-buffer");
    } else {
      return Status::Ok();
    }
  }
}

Status Parser::ParseBufferRef(BufferRef* ref, bool allow_cta) {
  PARITY_RETURN_IF_ERROR(RejectGlobal("this operation"));
  PARITY_RETURN_IF_ERROR(
      LookupObject(program_.buffers, "buffer", "parse.unknown-buffer", &ref->buffer));
  PARITY_RETURN_IF_ERROR(ExpectPunct("[", "after buffer name"));
  PARITY_RETURN_IF_ERROR(ParseExpr(&ref->slot));
  PARITY_RETURN_IF_ERROR(ExpectPunct("]", "after buffer slot"));
  while (true) {
    if (IsPunct("+") && ref->offset == kNoExpr) {
      Next();
      PARITY_RETURN_IF_ERROR(ParseExpr(&ref->offset));
    } else if (IsWord("bytes") && ref->bytes == kNoExpr) {
      Next();
      PARITY_RETURN_IF_ERROR(ParseExpr(&ref->bytes));
    } else if (IsPunct("@") && ref->cta == kNoExpr) {
      if (!allow_cta) {
        return Error(Peek(),
                     "`@cta` on a buffer is only allowed for st.async, use and write (accesses "
                     "of a peer CTA's shared memory)",
                     "parse.bad-remote");
      }
      PARITY_RETURN_IF_ERROR(ParseCta(&ref->cta));
    } else {
      return Status::Ok();
    }
  }
}

}  // namespace parser_internal

Expected<Program> ParseProgram(std::string_view text, std::string file) {
  // Old Mac line endings (a CR alone) end lines too; CRLF is already read as a newline.
  bool lone_cr = false;
  for (size_t i = 0; i < text.size() && !lone_cr; ++i) {
    lone_cr = text[i] == '\r' && (i + 1 == text.size() || text[i + 1] != '\n');
  }
  if (lone_cr) {
    std::string lf(text);
    for (size_t i = 0; i < lf.size(); ++i) {
      if (lf[i] == '\r' && (i + 1 == lf.size() || lf[i + 1] != '\n')) lf[i] = '\n';
    }
    return parser_internal::Parser(lf, std::move(file)).Run();
  }
  return parser_internal::Parser(text, std::move(file)).Run();
}

Expected<Program> ParseFile(const std::string& path) {
  Expected<std::string> text = ReadInputFile(path, "schedule", "io", kMaxScheduleFileBytes);
  if (!text.ok()) return text.status();
  return ParseProgram(*text, path);
}

}  // namespace parity::ir
