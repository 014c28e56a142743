// The recursive-descent parser of the `.pipe` language behind ParseProgram (parser.h, which
// describes the language decisions). One class over the token list, its member functions in
// three files along the grammar's seams:
//   parser.cc        entry points, token and error helpers, expressions, variables and scopes,
//                    barrier/buffer/CTA references;
//   parser_decls.cc  top-level declarations (schedule, param, cluster, buffer, barrier,
//                    tensormap, global, primary, role);
//   parser_stmts.cc  blocks and statements (let, for, while, break, if) and operations.
// The lexer is parser_lexer.h. Internal to the parser.
#ifndef PARITY_SIM_IR_PARSER_INTERNAL_H_
#define PARITY_SIM_IR_PARSER_INTERNAL_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sim/common/status.h"
#include "sim/ir/ir.h"
#include "sim/ir/parser_lexer.h"
#include "sim/ir/qualifiers.h"

namespace parity::ir::parser_internal {

// Deepest nesting of expressions and blocks; beyond it the input is rejected rather than risking
// the native stack on adversarial input.
constexpr int kMaxDepth = 200;
// Tallest expression tree (operators on the longest path from the root to a leaf). The parser
// reads a left-associative chain `1+1+...+1` in a loop, but every evaluator and printer walks the
// tree recursively, so the tree's height is bounded, not only the parser's nesting.
constexpr int kMaxExprHeight = 1000;
// A trace header (sim/trace/trace_file.cc) holds up to 4096 params: a schedule that `check`
// accepts must be one that `run --trace` can record.
constexpr size_t kMaxParams = 4096;

class Parser {
 public:
  Parser(std::string_view text, std::string file)
      : text_(text), file_(std::move(file)), lines_(SplitLines(text)) {}

  // Lexes and parses the whole text.
  Expected<Program> Run();

 private:
  // ------------------------------------------------------------------------------------------
  // Tokens and errors.
  const Token& Peek(size_t ahead = 0) const {
    const size_t i = pos_ + ahead;
    return i < toks_.size() ? toks_[i] : toks_.back();
  }
  const Token& Next() {
    const Token& t = Peek();
    if (pos_ < toks_.size() - 1) ++pos_;
    return t;
  }
  bool IsPunct(const char* p, size_t ahead = 0) const {
    const Token& t = Peek(ahead);
    return t.kind == Token::Kind::kPunct && t.text == p;
  }
  bool IsWord(const char* w, size_t ahead = 0) const {
    const Token& t = Peek(ahead);
    return t.kind == Token::Kind::kIdent && t.text == w;
  }
  bool AcceptPunct(const char* p) {
    if (!IsPunct(p)) return false;
    Next();
    return true;
  }
  bool AcceptWord(const char* w) {
    if (!IsWord(w)) return false;
    Next();
    return true;
  }
  void SkipNewlines();
  SourceLocation Loc(const Token& t) const { return SourceLocation{file_, t.line, t.col}; }
  std::string Snippet(int line, int col) const;
  Status Error(const Token& at, const std::string& msg, const std::string& rule = "parse") const;

  // "expected WHAT, found TOKEN".
  Status Expected_(const std::string& what) const;
  Status ExpectPunct(const char* p, const std::string& context);
  Status ExpectWord(const char* w, const std::string& context);
  Status ExpectName(const std::string& what, std::string* name, Token* tok = nullptr);

  // End of a statement: a newline, `;`, a closing `}` (not consumed) or the end of the file.
  Status EndOfStatement(const std::string& what);

  // ------------------------------------------------------------------------------------------
  // Expressions.
  ExprId Add(Expr e, const Token& at);
  int Height(ExprId id) const { return id < heights_.size() ? heights_[id] : 0; }
  Status CheckHeight(ExprId id, const Token& at);
  ExprId Const(int64_t v, const Token& at);
  ExprId MakeBinary(BinaryOp op, ExprId a, ExprId b, const Token& at);
  struct DepthGuard {
    explicit DepthGuard(int* d) : d_(d) { ++*d_; }
    ~DepthGuard() { --*d_; }
    int* d_;
  };
  Status ParseExpr(ExprId* out);

  // Binary operators by C precedence level (0 = ||, lowest).
  struct BinOpInfo {
    const char* text;
    BinaryOp op;
    int level;
  };
  static const BinOpInfo* FindBinOp(const Token& t);
  Status ParseBinary(int level, ExprId* out);
  Status ParseUnary(ExprId* out);
  Status ParsePrimary(ExprId* out);
  Status ResolveName(const Token& t, ExprId* out);

  // A bracketed list `[E, E, ...]` (at least one element).
  Status ParseExprList(const std::string& what, std::vector<ExprId>* out);

  // ------------------------------------------------------------------------------------------
  // Variables (role-local, lexically scoped). A variable is visible from where it is bound to
  // the end of its block; a variable first bound inside an `if` is also visible after the `if`
  // when every path through it (the `then` block and an `else` block or every branch of an
  // `else if` chain) binds it: definite assignment, as a kernel engineer writes
  // `uint64_t tok; if (c) tok = arrive(..); else tok = arrive(..);`. Bound on some paths only,
  // or only inside a `for` body (which may run zero times), it is an error to read it after,
  // and the message says so (rule parse.maybe-unset).
  using Bindings = std::vector<std::pair<std::string, uint32_t>>;
  std::optional<uint32_t> LookupVar(const std::string& name) const;
  uint32_t NewVar(const std::string& name);

  // Why `name` is not visible although the role binds it somewhere above: bound only on some
  // paths through an `if`, or only inside a loop body or a branch that has closed. "" if not.
  std::string WhyNotVisible(const std::string& name) const;

  // Records that `name`, bound in a block that just closed, is not visible after it.
  void Hide(const std::string& name, std::string why);

  // `let x`, `-> tok`, `-> var`: the visible variable of that name, or a new one.
  Status DefineOrAssign(uint32_t* slot, const std::string& what);
  Status CheckNotReserved(const Token& t, const std::string& what) const;

  // ------------------------------------------------------------------------------------------
  // Object references.
  template <typename Decl>
  Status LookupObject(const std::vector<Decl>& decls, const std::string& kind,
                      const std::string& rule, uint32_t* index) {
    const Token& t = Peek();
    if (t.kind != Token::Kind::kIdent) return Expected_(kind + " name");
    for (size_t i = 0; i < decls.size(); ++i) {
      if (decls[i].name == t.text) {
        *index = static_cast<uint32_t>(i);
        Next();
        return Status::Ok();
      }
    }
    std::string names;
    for (const Decl& d : decls) names += (names.empty() ? "`" : ", `") + d.name + "`";
    return Error(t, "unknown " + kind + " `" + t.text + "` (declared: " +
                        (names.empty() ? "none" : names) + ")",
                 rule);
  }
  Status ParseCta(ExprId* cta);
  Status ParseBarrierRef(BarrierRef* ref);

  // A global buffer where shared memory is needed.
  Status RejectGlobal(const std::string& what);
  bool IsGlobalName() const;

  // `use G[s] [+ off] [bytes n]` / `write ...` of a global buffer.
  Status ParseGlobalAccess(GlobalAccess* op);
  Status ParseBufferRef(BufferRef* ref, bool allow_cta);

  // ------------------------------------------------------------------------------------------
  // Top-level declarations (parser_decls.cc).
  Status ParseTop();

  // `global OUT[SLOTS] bytes N`: global memory seen by both grids (ir.h GlobalDecl).
  Status ParseGlobal();

  // `primary clusters N { role ... }`: an earlier grid of a chain of programmatic dependent
  // launches (ir.h Program::primaries), in launch order; only roles inside.
  Status ParsePrimary();
  void FinishPrimaries();
  static constexpr size_t kMaxPrimaryGrids = 7;
  Status CheckNewObjectName(const Token& t, const std::string& kind) const;
  Status ParseParam();

  // `cluster 2x2`, `cluster (CM)x(CN)`, `cluster 2 x 1`.
  Status ParseCluster();
  Status ParseClusterDim(ExprId* out);
  Status ParseBuffer();
  Status ParseBarrierDecl();
  Status ParseNamedBarrierDecl();

  // `128B`, `32B`, `none`: a number directly followed by `B`, or a word.
  Status ParseSizeWord(const std::string& what, const std::vector<std::string>& allowed,
                       std::string* out);
  Status ParseTensorMap();
  Status ParseRole();

  // ------------------------------------------------------------------------------------------
  // Blocks and statements (parser_stmts.cc).

  // `{ stmt* }` with its own variable scope. `bound` (optional) receives the variables first
  // bound in this block (not in blocks nested in it), for ParseIf. `what` names the block in
  // the message when one of its variables is read after it ("the `for` body at line 7").
  Status ParseBlock(Block* out, Bindings* bound = nullptr, const std::string& what = "");
  void PushOp(Block* out, Op op, const Token& at);
  Status ParseStmt(Block* out);

  // `while COND bound N { }`: a loop that runs while COND holds, at most N times. The bound is
  // the author's claim about the kernel (a persistent loop's tiles per CTA, a spin loop's
  // retries); it keeps every run and the exploration finite, and a run in which COND still
  // holds after N passes stops with the error engine.while-bound instead of looping on. The
  // iteration count lives in a variable slot of its own (named `while@LINE:COL`, which no
  // expression can name), so that it is part of the agent's state like any variable.
  Status ParseWhile(Block* out);
  // The body `{ }` of a `for` or `while` (keyword token `t`, header parsed into `f`) in a scope of
  // its own that holds the loop variable `var`; appends the loop to `out`.
  Status ParseLoopBody(const Token& t, const std::string& var, For f, Block* out);

  // `if E { } [else if E { }]... [else { }]`. `every_path` receives the variables first bound
  // on every path through the chain (visible after it); `earlier` holds those bound by the
  // earlier branches of an enclosing chain, whose slots a branch reuses for the same name.
  Status ParseIf(Stmt* st, Bindings* every_path, const Bindings* earlier);

  // PTX memory-ordering suffixes of an op word (sim/ir/qualifiers.h), as parse.bad-qualifier.
  Status SplitQualifiers(const Token& t, std::string* base, Qualifiers* q) const;
  Status CheckQualifiers(const Token& t, const std::string& base, const Qualifiers& q,
                         const char* sem_word, bool relaxed_ok, bool scoped) const;
  // A state-token variable read after the word `after` (`wait ... token V`, `pending_count V`);
  // `set_by` is the arrive that sets one, for the message when V is unknown.
  Status ParseTokenVar(const std::string& after, const std::string& set_by, uint32_t* slot);
  Status ParseOp(const Token& t, Block* out);

  // `assert E [-- message]` (in a role) and `forall` / `exists` (top level): appends to
  // Program::assertions and sets *id. The expression may read the model's state
  // (ParseStateRead); `what` names the keyword in messages.
  Status ParseAssertion(Assertion::Kind kind, uint32_t* id);
  // `phase(b[i])`, `pending(b[i])`, `tx(b[i])`, `landed(B[s])` at name token `t` (the `(` next).
  Status ParseStateRead(const Token& t, StateFn fn, ExprId* out);
  bool in_assertion_ = false;  // parsing an assertion's expression: state reads are allowed
  std::string_view text_;
  std::string file_;
  std::vector<std::string_view> lines_;
  std::vector<Token> toks_;
  size_t pos_ = 0;
  int depth_ = 0;
  int loop_depth_ = 0;  // enclosing for/while loops of the statement being parsed (`break`)
  Program program_;
  std::vector<int> heights_;  // per expression: its tree height (Add)
  Role* role_ = nullptr;
  std::vector<std::vector<std::pair<std::string, uint32_t>>> scopes_;
  // Parallel to scopes_: names bound in a closed inner block, with why they are not visible.
  std::vector<std::vector<std::pair<std::string, std::string>>> hidden_;
  // Slots to reuse for names first bound at scope depth `depth` (a branch of an `if` chain).
  struct Reuse {
    size_t depth;
    const Bindings* bindings;
  };
  std::vector<Reuse> reuse_;
};

}  // namespace parity::ir::parser_internal

#endif  // PARITY_SIM_IR_PARSER_INTERNAL_H_
