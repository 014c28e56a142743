// The `.pipe` parser's blocks, statements and operations (parser_internal.h): `{ }` scopes,
// let / for / while / break / if with the definite-assignment rule of variables bound in
// branches (parser.h), and every operation word with its operands and clauses.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "sim/ir/parser_internal.h"
#include "sim/ir/qualifiers.h"

namespace parity::ir::parser_internal {

Status Parser::ParseBlock(Block* out, Bindings* bound, const std::string& what) {
  DepthGuard g(&depth_);
  if (depth_ > kMaxDepth) return Error(Peek(), "blocks nested too deeply");
  const Token open = Peek();
  PARITY_RETURN_IF_ERROR(ExpectPunct("{", "to start a block"));
  scopes_.emplace_back();
  hidden_.emplace_back();
  auto close = [&] {
    Bindings inner = std::move(scopes_.back());
    std::vector<std::pair<std::string, std::string>> inner_hidden = std::move(hidden_.back());
    scopes_.pop_back();
    hidden_.pop_back();
    if (bound != nullptr) *bound = inner;
    // Keep the reasons found in nested blocks for a read further down.
    for (auto& [n, why] : inner_hidden) {
      if (!hidden_.empty()) Hide(n, std::move(why));
    }
    if (what.empty() || hidden_.empty()) return;
    for (const auto& [name, slot] : inner) {
      Hide(name, "`" + name + "` is bound only inside " + what +
                     ", so it is not visible after it; set it before the loop to use it "
                     "after");
    }
  };
  while (true) {
    SkipNewlines();
    if (AcceptPunct("}")) break;
    if (Peek().kind == Token::Kind::kEof) {
      close();
      return Error(Peek(), "expected `}` to close the block opened at line " +
                               std::to_string(open.line) + ", found end of file");
    }
    Status s = ParseStmt(out);
    if (!s.ok()) {
      close();
      return s;
    }
  }
  close();
  return Status::Ok();
}

void Parser::PushOp(Block* out, Op op, const Token& at) {
  Stmt s;
  s.node = std::move(op);
  s.where = Loc(at);
  out->push_back(std::move(s));
}

Status Parser::ParseStmt(Block* out) {
  const Token t = Peek();
  if (t.kind != Token::Kind::kIdent) return Expected_("a statement");
  const std::string& w = t.text;
  if (w == "let") {
    Next();
    Let let;
    // The value is parsed before the name is bound, so `let x = x + 1` reads the outer x.
    const size_t name_pos = pos_;
    std::string name;
    PARITY_RETURN_IF_ERROR(ExpectName("variable name after `let`", &name));
    PARITY_RETURN_IF_ERROR(ExpectPunct("=", "after `let " + name + "`"));
    PARITY_RETURN_IF_ERROR(ParseExpr(&let.value));
    const size_t after = pos_;
    pos_ = name_pos;
    PARITY_RETURN_IF_ERROR(DefineOrAssign(&let.var, "variable name after `let`"));
    pos_ = after;
    Stmt s;
    s.node = let;
    s.where = Loc(t);
    out->push_back(std::move(s));
    return EndOfStatement("`let`");
  }
  if (w == "for") {
    Next();
    For f;
    std::string name;
    Token name_tok;
    PARITY_RETURN_IF_ERROR(ExpectName("loop variable after `for`", &name, &name_tok));
    PARITY_RETURN_IF_ERROR(CheckNotReserved(name_tok, "variable"));
    PARITY_RETURN_IF_ERROR(ExpectWord("in", "after the loop variable (`for i in 0 .. N`)"));
    PARITY_RETURN_IF_ERROR(ParseExpr(&f.lo));
    PARITY_RETURN_IF_ERROR(ExpectPunct("..", "between the loop bounds (`for i in 0 .. N`)"));
    PARITY_RETURN_IF_ERROR(ParseExpr(&f.hi));
    if (AcceptWord("step")) PARITY_RETURN_IF_ERROR(ParseExpr(&f.step));
    return ParseLoopBody(t, name, std::move(f), out);
  }
  if (w == "while") return ParseWhile(out);
  if (w == "break") {
    Next();
    if (loop_depth_ == 0) {
      return Error(t, "`break` outside a loop: it leaves the innermost `for` or `while`",
                   "parse.break-outside-loop");
    }
    Stmt st;
    st.node = Break{};
    st.where = Loc(t);
    out->push_back(std::move(st));
    return EndOfStatement("`break`");
  }
  if (w == "assert") {
    Stmt st;
    Assert a;
    PARITY_RETURN_IF_ERROR(ParseAssertion(Assertion::Kind::kAssert, &a.id));
    st.node = a;
    st.where = Loc(t);
    out->push_back(std::move(st));
    return Status::Ok();
  }
  if (w == "if") {
    Stmt st;
    Bindings every_path;
    PARITY_RETURN_IF_ERROR(ParseIf(&st, &every_path, nullptr));
    for (const auto& [name, slot] : every_path) scopes_.back().emplace_back(name, slot);
    out->push_back(std::move(st));
    return EndOfStatement("the `if`");
  }
  if (w == "else") return Error(t, "`else` without a preceding `if` block");
  Next();
  return ParseOp(t, out);
}

Status Parser::ParseWhile(Block* out) {
  const Token t = Next();  // `while`
  For f;
  PARITY_RETURN_IF_ERROR(ParseExpr(&f.cond));
  if (!IsWord("bound")) {
    return Error(Peek(),
                 "expected `bound N` after the `while` condition (the most passes the loop "
                 "may make: `while tile < TILES bound 64 { }`), found " + Describe(Peek()),
                 "parse.while-bound");
  }
  Next();
  PARITY_RETURN_IF_ERROR(ParseExpr(&f.hi));
  f.lo = Const(0, t);
  return ParseLoopBody(t, "while@" + std::to_string(t.line) + ":" + std::to_string(t.col),
                       std::move(f), out);
}

Status Parser::ParseLoopBody(const Token& t, const std::string& var, For f, Block* out) {
  // The loop variable lives in its own scope around the body.
  scopes_.emplace_back();
  hidden_.emplace_back();
  f.var = NewVar(var);
  ++loop_depth_;
  Status s = IsPunct("{") ? ParseBlock(&f.body, nullptr,
                                       "the `" + t.text + "` body at " + file_ + ":" +
                                           std::to_string(t.line) +
                                           " (the loop may run zero times)")
                          : Expected_("`{` to start the loop body");
  --loop_depth_;
  std::vector<std::pair<std::string, std::string>> body_hidden = std::move(hidden_.back());
  scopes_.pop_back();
  hidden_.pop_back();
  for (auto& [n, why] : body_hidden) Hide(n, std::move(why));
  PARITY_RETURN_IF_ERROR(s);
  Stmt st;
  st.node = std::move(f);
  st.where = Loc(t);
  out->push_back(std::move(st));
  return EndOfStatement("the loop");
}

Status Parser::ParseIf(Stmt* st, Bindings* every_path, const Bindings* earlier) {
  DepthGuard g(&depth_);
  if (depth_ > kMaxDepth) return Error(Peek(), "`else if` chain too long");
  const Token t = Next();  // `if`
  If node;
  PARITY_RETURN_IF_ERROR(ParseExpr(&node.cond));
  if (!IsPunct("{")) return Expected_("`{` after the `if` condition");
  Bindings candidates = earlier != nullptr ? *earlier : Bindings{};
  Bindings then_bound, else_bound;
  reuse_.push_back(Reuse{scopes_.size() + 1, &candidates});
  Status s = ParseBlock(&node.then_body, &then_bound);
  reuse_.pop_back();
  PARITY_RETURN_IF_ERROR(s);
  for (const auto& b : then_bound) {
    bool known = false;
    for (const auto& c : candidates) known |= c.first == b.first;
    if (!known) candidates.push_back(b);
  }
  // `else` may follow on the same line or the next.
  size_t save = pos_;
  while (Peek().kind == Token::Kind::kNewline) Next();
  bool has_else = false;
  if (AcceptWord("else")) {
    has_else = true;
    if (IsWord("if")) {
      Stmt inner;
      PARITY_RETURN_IF_ERROR(ParseIf(&inner, &else_bound, &candidates));
      node.else_body.push_back(std::move(inner));
    } else {
      if (!IsPunct("{")) return Expected_("`{` or `if` after `else`");
      reuse_.push_back(Reuse{scopes_.size() + 1, &candidates});
      s = ParseBlock(&node.else_body, &else_bound);
      reuse_.pop_back();
      PARITY_RETURN_IF_ERROR(s);
    }
  } else {
    pos_ = save;
  }
  // Bound on both sides: one variable (same slot, by the reuse above). On one side only: not
  // visible after the `if`; say why if it is read there.
  const std::string where = file_ + ":" + std::to_string(t.line);
  for (const auto& [name, slot] : then_bound) {
    bool both = false;
    for (const auto& e : else_bound) {
      // Same slot by the reuse in NewVar (a nested name never reaches `*_bound`).
      both |= e.first == name && e.second == slot;
    }
    if (both) {
      every_path->emplace_back(name, slot);
    } else {
      Hide(name, "`" + name + "` is set in the `then` block of the `if` at " + where +
                     " but not " +
                     (has_else ? "in its `else` branch" : "when it is not taken (no `else`)") +
                     ", so it may be unset here; a variable is visible after an `if` only "
                     "when every path through it sets it: set it in every branch, or set it "
                     "before the `if`");
    }
  }
  for (const auto& [name, slot] : else_bound) {
    bool both = false;
    for (const auto& e : then_bound) both |= e.first == name;
    if (!both) {
      Hide(name, "`" + name + "` is set in the `else` branch of the `if` at " + where +
                     " but not in its `then` block, so it may be unset here; a variable is "
                     "visible after an `if` only when every path through it sets it: set it "
                     "in every branch, or set it before the `if`");
    }
  }
  st->node = std::move(node);
  st->where = Loc(t);
  return Status::Ok();
}

Status Parser::SplitQualifiers(const Token& t, std::string* base, Qualifiers* q) const {
  const std::string why = ir::SplitQualifiers(t.text, base, q);
  return why.empty() ? Status::Ok() : Error(t, why, "parse.bad-qualifier");
}

Status Parser::CheckQualifiers(const Token& t, const std::string& base, const Qualifiers& q,
                               const char* sem_word, bool relaxed_ok, bool scoped) const {
  const std::string why = ir::CheckQualifiers(base, q, sem_word, relaxed_ok, scoped);
  return why.empty() ? Status::Ok() : Error(t, why, "parse.bad-qualifier");
}

Status Parser::ParseTokenVar(const std::string& after, const std::string& set_by,
                             uint32_t* slot) {
  const Token v = Peek();
  std::string name;
  PARITY_RETURN_IF_ERROR(ExpectName("token variable after " + after, &name));
  auto found = LookupVar(name);
  if (!found) {
    if (std::string why = WhyNotVisible(name); !why.empty()) {
      return Error(v, why, "parse.maybe-unset");
    }
    return Error(v, "unknown token variable `" + name + "` (set it with `" + set_by + " ... -> " +
                        name + "`)",
                 "parse.unknown-name");
  }
  *slot = *found;
  return Status::Ok();
}

Status Parser::ParseOp(const Token& t, Block* out) {
  std::string w;
  Qualifiers quals;
  PARITY_RETURN_IF_ERROR(SplitQualifiers(t, &w, &quals));
  if (w == "init") {
    MbarrierInit op;
    PARITY_RETURN_IF_ERROR(ParseBarrierRef(&op.bar));
    if (AcceptWord("count")) PARITY_RETURN_IF_ERROR(ParseExpr(&op.count));
    PushOp(out, op, t);
  } else if (w == "inval") {
    MbarrierInval op;
    PARITY_RETURN_IF_ERROR(ParseBarrierRef(&op.bar));
    PushOp(out, op, t);
  } else if (w == "arrive" || w == "arrive.expect_tx" || w == "arrive.nocomplete" ||
             w == "arrive_drop") {
    MbarrierArrive op;
    PARITY_RETURN_IF_ERROR(CheckQualifiers(t, w, quals, "release", true, true));
    op.sem = quals.sem.value_or(MemSem::kStrong);
    op.scope = quals.scope.value_or(MemScope::kCta);
    if (w == "arrive.nocomplete") op.kind = MbarrierArrive::Kind::kNoComplete;
    if (w == "arrive_drop") op.kind = MbarrierArrive::Kind::kDrop;
    PARITY_RETURN_IF_ERROR(ParseBarrierRef(&op.bar));
    if (w == "arrive.expect_tx") {
      PARITY_RETURN_IF_ERROR(ExpectWord("bytes", "after the barrier of `arrive.expect_tx`"));
      PARITY_RETURN_IF_ERROR(ParseExpr(&op.expect_tx));
    }
    while (true) {
      if (IsWord("count") && op.count == kNoExpr) {
        Next();
        PARITY_RETURN_IF_ERROR(ParseExpr(&op.count));
      } else if (IsWord("mask") && op.mask == kNoExpr) {
        Next();
        if (op.bar.cta != kNoExpr) {
          return Error(Peek(), "an arrive takes `@cta(r)` or `mask`, not both", "parse.bad-remote");
        }
        PARITY_RETURN_IF_ERROR(ParseExpr(&op.mask));
      } else if (IsPunct("->") && op.token_var == 0xffffffffu) {
        Next();
        PARITY_RETURN_IF_ERROR(DefineOrAssign(&op.token_var, "token variable after `->`"));
      } else {
        break;
      }
    }
    PushOp(out, op, t);
  } else if (w == "expect_tx" || w == "complete_tx") {
    BarrierRef bar;
    ExprId bytes;
    PARITY_RETURN_IF_ERROR(ParseBarrierRef(&bar));
    PARITY_RETURN_IF_ERROR(ExpectWord("bytes", "after the barrier of `" + w + "`"));
    PARITY_RETURN_IF_ERROR(ParseExpr(&bytes));
    if (w == "expect_tx") {
      PushOp(out, MbarrierExpectTx{bar, bytes}, t);
    } else {
      PushOp(out, MbarrierCompleteTx{bar, bytes}, t);
    }
  } else if (w == "wait") {
    MbarrierWait op;
    PARITY_RETURN_IF_ERROR(CheckQualifiers(t, w, quals, "acquire", true, true));
    op.sem = quals.sem.value_or(MemSem::kStrong);
    op.scope = quals.scope.value_or(MemScope::kCta);
    PARITY_RETURN_IF_ERROR(ParseBarrierRef(&op.bar));
    if (AcceptWord("parity")) {
      PARITY_RETURN_IF_ERROR(ParseExpr(&op.parity));
    } else if (AcceptWord("token")) {
      PARITY_RETURN_IF_ERROR(ParseTokenVar("`token`", "arrive", &op.token_var));
    } else {
      return Expected_("`parity` or `token` after the barrier of `wait`");
    }
    PushOp(out, op, t);
  } else if (w == "test_wait") {
    MbarrierWait op;
    op.test_only = true;
    PARITY_RETURN_IF_ERROR(CheckQualifiers(t, w, quals, "acquire", true, true));
    op.sem = quals.sem.value_or(MemSem::kStrong);
    op.scope = quals.scope.value_or(MemScope::kCta);
    PARITY_RETURN_IF_ERROR(ParseBarrierRef(&op.bar));
    PARITY_RETURN_IF_ERROR(ExpectWord("parity", "after the barrier of `test_wait`"));
    PARITY_RETURN_IF_ERROR(ParseExpr(&op.parity));
    PARITY_RETURN_IF_ERROR(ExpectPunct("->", "before the result variable of `test_wait`"));
    PARITY_RETURN_IF_ERROR(DefineOrAssign(&op.result_var, "result variable after `->`"));
    PushOp(out, op, t);
  } else if (w == "pending_count") {
    // mbarrier.pending_count.b64 count, state: the token is the only operand (PTX ISA).
    MbarrierPendingCount op;
    PARITY_RETURN_IF_ERROR(ParseTokenVar("`pending_count`", "arrive.nocomplete", &op.token_var));
    PARITY_RETURN_IF_ERROR(ExpectPunct("->", "before the result variable of `pending_count`"));
    PARITY_RETURN_IF_ERROR(DefineOrAssign(&op.result_var, "result variable after `->`"));
    PushOp(out, op, t);
  } else if (w == "readback") {
    GlobalReadback op;
    PARITY_RETURN_IF_ERROR(ParseBufferRef(&op.buf, false));
    PARITY_RETURN_IF_ERROR(ExpectPunct("->", "before the result variable of `readback`"));
    PARITY_RETURN_IF_ERROR(DefineOrAssign(&op.result_var, "result variable after `->`"));
    PushOp(out, std::move(op), t);
  } else if (w == "tma.load") {
    TmaLoad op;
    PARITY_RETURN_IF_ERROR(
        LookupObject(program_.tensor_maps, "tensor map", "parse.unknown-tensormap", &op.tensor_map));
    PARITY_RETURN_IF_ERROR(ExpectWord("coords", "after the tensor map of `tma.load`"));
    PARITY_RETURN_IF_ERROR(ParseExprList("the coordinates", &op.coords));
    PARITY_RETURN_IF_ERROR(ExpectPunct("->", "before the destination buffer of `tma.load`"));
    PARITY_RETURN_IF_ERROR(ParseBufferRef(&op.dst, false));
    PARITY_RETURN_IF_ERROR(ExpectWord("bar", "after the destination of `tma.load`"));
    PARITY_RETURN_IF_ERROR(ParseBarrierRef(&op.bar));
    if (AcceptWord("multicast")) PARITY_RETURN_IF_ERROR(ParseExpr(&op.multicast_mask));
    PushOp(out, std::move(op), t);
  } else if (w == "tma.store") {
    TmaStore op;
    PARITY_RETURN_IF_ERROR(
        LookupObject(program_.tensor_maps, "tensor map", "parse.unknown-tensormap", &op.tensor_map));
    PARITY_RETURN_IF_ERROR(ExpectWord("coords", "after the tensor map of `tma.store`"));
    PARITY_RETURN_IF_ERROR(ParseExprList("the coordinates", &op.coords));
    // `<-` lexes as `<` `-` (so that `a<-1` stays a comparison); require them adjacent.
    if (!(IsPunct("<") && IsPunct("-", 1) && Peek(1).offset == Peek().end)) {
      return Expected_("`<-` before the source buffer of `tma.store`");
    }
    Next();
    Next();
    PARITY_RETURN_IF_ERROR(ParseBufferRef(&op.src, false));
    PushOp(out, std::move(op), t);
  } else if (w == "bulk.load") {
    BulkLoad op;
    PARITY_RETURN_IF_ERROR(ParseBufferRef(&op.dst, false));
    PARITY_RETURN_IF_ERROR(ExpectWord("bar", "after the destination of `bulk.load`"));
    PARITY_RETURN_IF_ERROR(ParseBarrierRef(&op.bar));
    if (AcceptWord("multicast")) PARITY_RETURN_IF_ERROR(ParseExpr(&op.multicast_mask));
    PushOp(out, op, t);
  } else if (w == "bulk.store") {
    BulkStore op;
    PARITY_RETURN_IF_ERROR(ParseBufferRef(&op.src, false));
    PushOp(out, op, t);
  } else if (w == "bulk.commit") {
    PushOp(out, BulkCommit{}, t);
  } else if (w == "bulk.wait") {
    BulkWait op;
    PARITY_RETURN_IF_ERROR(ParseExpr(&op.pending));
    op.read = AcceptWord("read");
    PushOp(out, op, t);
  } else if (w == "cp.async") {
    CpAsync op;
    PARITY_RETURN_IF_ERROR(ParseBufferRef(&op.dst, false));
    PushOp(out, op, t);
  } else if (w == "cp.async.commit") {
    PushOp(out, CpAsyncCommit{}, t);
  } else if (w == "cp.async.wait") {
    CpAsyncWait op;
    PARITY_RETURN_IF_ERROR(ParseExpr(&op.pending));
    PushOp(out, op, t);
  } else if (w == "cp.async.wait_all") {
    PushOp(out, CpAsyncWait{}, t);
  } else if (w == "cp.async.arrive") {
    CpAsyncMbarrierArrive op;
    PARITY_RETURN_IF_ERROR(ParseBarrierRef(&op.bar));
    op.noinc = AcceptWord("noinc");
    PushOp(out, op, t);
  } else if (w == "st.async") {
    StAsync op;
    PARITY_RETURN_IF_ERROR(ParseBufferRef(&op.dst, true));
    PARITY_RETURN_IF_ERROR(ExpectWord("bar", "after the destination of `st.async`"));
    PARITY_RETURN_IF_ERROR(ParseBarrierRef(&op.bar));
    PushOp(out, op, t);
  } else if (w == "tensormap.replace") {
    TensormapReplace op;
    PARITY_RETURN_IF_ERROR(LookupObject(program_.tensor_maps, "tensor map",
                                        "parse.unknown-tensormap", &op.tensor_map));
    PushOp(out, op, t);
  } else if (w == "fence.proxy.tensormap.release") {
    PushOp(out, Fence{Fence::Kind::kProxyTensormapRelease}, t);
  } else if (w == "fence.proxy.tensormap.acquire") {
    Fence op{Fence::Kind::kProxyTensormapAcquire};
    PARITY_RETURN_IF_ERROR(LookupObject(program_.tensor_maps, "tensor map",
                                        "parse.unknown-tensormap", &op.tensor_map));
    PushOp(out, op, t);
  } else if (w == "fence.mbarrier_init") {
    PushOp(out, Fence{Fence::Kind::kMbarrierInit}, t);
  } else if (w == "fence.proxy.async") {
    PushOp(out, Fence{Fence::Kind::kProxyAsync}, t);
  } else if (w == "fence.proxy.async.global") {
    PushOp(out, Fence{Fence::Kind::kProxyAsyncGlobal}, t);
  } else if (w == "fence.acq_rel") {
    PARITY_RETURN_IF_ERROR(CheckQualifiers(t, w, quals, "", false, true));
    if (!quals.scope) {
      return Error(t, "`fence.acq_rel` needs a scope: `fence.acq_rel.cta` or "
                      "`fence.acq_rel.cluster`",
                   "parse.bad-qualifier");
    }
    PushOp(out,
           Fence{*quals.scope == MemScope::kCluster ? Fence::Kind::kAcqRelCluster
                                                     : Fence::Kind::kAcqRelCta},
           t);
  } else if (w == "cluster.arrive") {
    // barrier.cluster.arrive{.release, .relaxed}; the older `cluster.arrive relaxed` spelling
    // is the same op.
    PARITY_RETURN_IF_ERROR(CheckQualifiers(t, w, quals, "release", true, false));
    const bool relaxed_word = AcceptWord("relaxed");
    if (relaxed_word && quals.sem) {
      return Error(t, "`" + t.text + " relaxed` gives two semantics", "parse.bad-qualifier");
    }
    PushOp(out, ClusterArrive{relaxed_word || quals.sem == MemSem::kRelaxed}, t);
  } else if (w == "cluster.wait") {
    // barrier.cluster.wait{.acquire}: acquire is its only (and default) semantics.
    PARITY_RETURN_IF_ERROR(CheckQualifiers(t, w, quals, "acquire", false, false));
    PushOp(out, ClusterWait{}, t);
  } else if (w == "cluster.sync") {
    // barrier.cluster.arrive + barrier.cluster.wait (PTX ISA, barrier.cluster).
    PushOp(out, ClusterArrive{false}, t);
    PushOp(out, ClusterWait{}, t);
  } else if (w == "bar.sync" || w == "bar.arrive") {
    NamedBarrier op;
    op.sync = w == "bar.sync";
    PARITY_RETURN_IF_ERROR(ParseExpr(&op.id));
    PARITY_RETURN_IF_ERROR(ExpectPunct(",", "between the barrier id and the thread count of `" + w + "`"));
    PARITY_RETURN_IF_ERROR(ParseExpr(&op.threads));
    PushOp(out, op, t);
  } else if ((w == "use" || w == "write") && IsGlobalName()) {
    GlobalAccess op;
    op.write = w == "write";
    PARITY_RETURN_IF_ERROR(ParseGlobalAccess(&op));
    PushOp(out, op, t);
  } else if (w == "griddepcontrol.wait" || w == "griddepcontrol.launch_dependents") {
    GridDepControl op;
    op.kind = w == "griddepcontrol.wait" ? GridDepControl::Kind::kWait
                                         : GridDepControl::Kind::kLaunchDependents;
    PushOp(out, op, t);
  } else if (w == "use" || w == "write" || w == "red" || w == "atom" || w == "use.generic" ||
             w == "use.async") {
    BufferAccess op;
    op.write = w == "write" || w == "red" || w == "atom";
    op.atomic = w == "red" || w == "atom";
    op.returns = w == "atom";
    if (w == "use.generic") op.proxy = ReadProxy::kGeneric;
    if (w == "use.async") op.proxy = ReadProxy::kAsync;
    PARITY_RETURN_IF_ERROR(ParseBufferRef(&op.buf, true));
    PushOp(out, op, t);
  } else if (w == "exit") {
    PushOp(out, Exit{}, t);
  } else {
    return Error(t, "unknown operation `" + w +
                        "` (expected let, for, if, or an operation such as init, arrive, "
                        "arrive.expect_tx, wait, tma.load, use, cluster.sync)",
                 "parse.unknown-op");
  }
  return EndOfStatement("`" + w + "`");
}

}  // namespace parity::ir::parser_internal
