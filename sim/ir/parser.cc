#include "sim/ir/parser.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "sim/common/read_file.h"
#include "sim/ir/param_eval.h"
#include "sim/ir/qualifiers.h"

namespace parity::ir {
namespace {

// Deepest nesting of expressions and blocks; beyond it the input is rejected rather than risking
// the native stack on adversarial input.
constexpr int kMaxDepth = 200;
// Tallest expression tree (operators on the longest path from the root to a leaf). The parser
// reads a left-associative chain `1+1+...+1` in a loop, but every evaluator and printer walks the
// tree recursively, so the tree's height is bounded, not only the parser's nesting.
constexpr int kMaxExprHeight = 1000;
// A trace header (sim/trace/trace_file.cc) holds strings of up to 4096 bytes and up to 4096
// params: a schedule that `check` accepts must be one that `run --trace` can record.
constexpr size_t kMaxNameBytes = 1024;
constexpr size_t kMaxParams = 4096;

struct Token {
  enum class Kind : uint8_t { kIdent, kInt, kPunct, kNewline, kEof };
  Kind kind = Kind::kEof;
  std::string text;  // identifier (possibly dotted, e.g. `arrive.expect_tx`) or punctuation
  int64_t value = 0;
  int line = 1;
  int col = 1;
  size_t offset = 0;  // byte offset in the text
  size_t end = 0;     // one past the last byte
};

std::string Describe(const Token& t) {
  switch (t.kind) {
    case Token::Kind::kNewline: return "end of line";
    case Token::Kind::kEof: return "end of file";
    default: return "`" + t.text + "`";
  }
}

// Splits into lines for the caret display.
std::vector<std::string_view> SplitLines(std::string_view text) {
  std::vector<std::string_view> lines;
  size_t start = 0;
  for (size_t i = 0; i <= text.size(); ++i) {
    if (i == text.size() || text[i] == '\n') {
      std::string_view line = text.substr(start, i - start);
      if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
      lines.push_back(line);
      start = i + 1;
    }
  }
  return lines;
}

class Lexer {
 public:
  Lexer(std::string_view text, const std::string& file) : text_(text), file_(file) {}

  // On error returns the offending position in *err_line/*err_col and a message.
  bool Run(std::vector<Token>* out, std::string* msg, int* err_line, int* err_col) {
    int depth = 0;  // ( and [ nesting: newlines inside them do not end a statement
    while (true) {
      SkipSpaceAndComments();
      Token t;
      t.line = line_;
      t.col = col_;
      t.offset = pos_;
      if (pos_ >= text_.size()) {
        t.kind = Token::Kind::kEof;
        t.end = pos_;
        out->push_back(t);
        return true;
      }
      const char c = text_[pos_];
      if (c == '\n') {
        Advance();
        t.kind = Token::Kind::kNewline;
        t.text = "\\n";
        t.end = pos_;
        if (depth == 0) out->push_back(t);
        continue;
      }
      if (IsIdentStart(c)) {
        t.kind = Token::Kind::kIdent;
        while (true) {
          while (pos_ < text_.size() && IsIdentChar(text_[pos_])) Advance();
          // A dotted name (`tma.load`, `fence.proxy.async`): a dot directly followed by a letter.
          // `..` (ranges) never matches because the second character is a dot.
          if (pos_ + 1 < text_.size() && text_[pos_] == '.' && IsIdentStart(text_[pos_ + 1])) {
            Advance();
            continue;
          }
          break;
        }
        if (pos_ - t.offset > kMaxNameBytes) {
          *msg = "a name of " + std::to_string(pos_ - t.offset) + " bytes; names are at most " +
                 std::to_string(kMaxNameBytes) + " (what a trace header can hold)";
          *err_line = t.line;
          *err_col = t.col;
          return false;
        }
        t.text = std::string(text_.substr(t.offset, pos_ - t.offset));
      } else if (std::isdigit(static_cast<unsigned char>(c))) {
        t.kind = Token::Kind::kInt;
        if (!LexNumber(&t, msg)) {
          *err_line = t.line;
          *err_col = t.col;
          return false;
        }
      } else {
        t.kind = Token::Kind::kPunct;
        static const char* const kTwo[] = {"..", "->", "<<", ">>", "<=", ">=",
                                           "==", "!=", "&&", "||"};
        std::string two(text_.substr(pos_, 2));
        bool matched = false;
        for (const char* p : kTwo) {
          if (two == p) {
            matched = true;
            break;
          }
        }
        if (matched) {
          Advance();
          Advance();
          t.text = two;
        } else if (std::string_view("+-*/%&|^~!<>?:()[]{},=@;").find(c) != std::string_view::npos) {
          Advance();
          t.text = std::string(1, c);
        } else {
          std::ostringstream m;
          if (std::isprint(static_cast<unsigned char>(c))) {
            m << "unexpected character `" << c << "`";
          } else {
            m << "unexpected byte 0x" << std::hex << (static_cast<unsigned>(c) & 0xff);
          }
          *msg = m.str();
          *err_line = t.line;
          *err_col = t.col;
          return false;
        }
        if (t.text == "(" || t.text == "[") ++depth;
        if ((t.text == ")" || t.text == "]") && depth > 0) --depth;
        // A block brace resets the nesting: an unbalanced `(` must not swallow the rest of the
        // file's newlines (the parser reports the missing `)` at the brace).
        if (t.text == "{" || t.text == "}") depth = 0;
      }
      t.end = pos_;
      out->push_back(t);
    }
  }

 private:
  static bool IsIdentStart(char c) {
    return std::isalpha(static_cast<unsigned char>(c)) || c == '_';
  }
  static bool IsIdentChar(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  }

  void Advance() {
    if (text_[pos_] == '\n') {
      ++line_;
      col_ = 1;
    } else {
      ++col_;
    }
    ++pos_;
  }

  void SkipSpaceAndComments() {
    while (pos_ < text_.size()) {
      const char c = text_[pos_];
      if (c == ' ' || c == '\t' || c == '\r') {
        Advance();
      } else if (c == '#' || (c == '/' && pos_ + 1 < text_.size() && text_[pos_ + 1] == '/')) {
        while (pos_ < text_.size() && text_[pos_] != '\n') Advance();
      } else {
        break;
      }
    }
  }

  // Decimal up to INT64_MAX, or 0x hex up to 64 bits (the bit pattern, so 0xffffffffffffffff is
  // -1). A number directly followed by letters stops there (`2x2`, `128B`): the parser decides.
  bool LexNumber(Token* t, std::string* msg) {
    uint64_t v = 0;
    if (text_[pos_] == '0' && pos_ + 2 < text_.size() + 0 &&
        (text_[pos_ + 1] == 'x' || text_[pos_ + 1] == 'X') &&
        std::isxdigit(static_cast<unsigned char>(text_[pos_ + 2]))) {
      Advance();
      Advance();
      int digits = 0;
      while (pos_ < text_.size() && std::isxdigit(static_cast<unsigned char>(text_[pos_]))) {
        const char c = text_[pos_];
        const int d = std::isdigit(static_cast<unsigned char>(c)) ? c - '0'
                                                                  : (std::tolower(c) - 'a' + 10);
        if (v != 0 || d != 0) ++digits;
        if (digits > 16) {
          *msg = "hex literal does not fit in 64 bits";
          return false;
        }
        v = v * 16 + static_cast<uint64_t>(d);
        Advance();
      }
      t->value = static_cast<int64_t>(v);
    } else {
      while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) {
        const uint64_t d = static_cast<uint64_t>(text_[pos_] - '0');
        if (v > (static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) - d) / 10) {
          *msg = "integer literal does not fit in int64";
          return false;
        }
        v = v * 10 + d;
        Advance();
      }
      t->value = static_cast<int64_t>(v);
    }
    t->text = std::string(text_.substr(t->offset, pos_ - t->offset));
    return true;
  }

  std::string_view text_;
  const std::string& file_;
  size_t pos_ = 0;
  int line_ = 1;
  int col_ = 1;
};

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
      "schedule", "param", "cluster", "clusters", "buffer", "barrier", "tensormap", "role",
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

class Parser {
 public:
  Parser(std::string_view text, std::string file)
      : text_(text), file_(std::move(file)), lines_(SplitLines(text)) {}

  Expected<Program> Run() {
    std::string msg;
    int line = 0, col = 0;
    if (!Lexer(text_, file_).Run(&toks_, &msg, &line, &col)) {
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
  void SkipNewlines() {
    while (Peek().kind == Token::Kind::kNewline ||
           (Peek().kind == Token::Kind::kPunct && Peek().text == ";")) {
      Next();
    }
  }

  SourceLocation Loc(const Token& t) const { return SourceLocation{file_, t.line, t.col}; }

  std::string Snippet(int line, int col) const {
    if (line < 1 || static_cast<size_t>(line) > lines_.size()) return "";
    std::string l(lines_[line - 1]);
    std::string caret;
    for (int i = 1; i < col && static_cast<size_t>(i - 1) < l.size(); ++i) {
      caret += l[i - 1] == '\t' ? '\t' : ' ';
    }
    return "\n  " + l + "\n  " + caret + "^";
  }

  Status Error(const Token& at, const std::string& msg, const std::string& rule = "parse") const {
    return Status(rule, msg + Snippet(at.line, at.col), Loc(at));
  }
  // "expected WHAT, found TOKEN".
  Status Expected_(const std::string& what) const {
    return Error(Peek(), "expected " + what + ", found " + Describe(Peek()));
  }
  Status ExpectPunct(const char* p, const std::string& context) {
    if (AcceptPunct(p)) return Status::Ok();
    return Expected_(std::string("`") + p + "` " + context);
  }
  Status ExpectWord(const char* w, const std::string& context) {
    if (AcceptWord(w)) return Status::Ok();
    return Expected_(std::string("`") + w + "` " + context);
  }
  Status ExpectName(const std::string& what, std::string* name, Token* tok = nullptr) {
    const Token& t = Peek();
    if (t.kind != Token::Kind::kIdent || t.text.find('.') != std::string::npos) {
      return Expected_(what);
    }
    if (tok != nullptr) *tok = t;
    *name = t.text;
    Next();
    return Status::Ok();
  }
  // End of a statement: a newline, `;`, a closing `}` (not consumed) or the end of the file.
  Status EndOfStatement(const std::string& what) {
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
  ExprId Add(Expr e, const Token& at) {
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
  int Height(ExprId id) const { return id < heights_.size() ? heights_[id] : 0; }
  Status CheckHeight(ExprId id, const Token& at) {
    if (Height(id) <= kMaxExprHeight) return Status::Ok();
    return Error(at, "expression has more than " + std::to_string(kMaxExprHeight) +
                         " levels of operators; split it with params or `let`",
                 "parse.expr-too-deep");
  }
  ExprId Const(int64_t v, const Token& at) {
    Expr e;
    e.kind = Expr::Kind::kConst;
    e.value = v;
    return Add(e, at);
  }
  ExprId MakeBinary(BinaryOp op, ExprId a, ExprId b, const Token& at) {
    Expr e;
    e.kind = Expr::Kind::kBinary;
    e.op = static_cast<uint8_t>(op);
    e.a = a;
    e.b = b;
    return Add(e, at);
  }

  struct DepthGuard {
    explicit DepthGuard(int* d) : d_(d) { ++*d_; }
    ~DepthGuard() { --*d_; }
    int* d_;
  };

  Status ParseExpr(ExprId* out) {
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

  // Binary operators by C precedence level (0 = ||, lowest).
  struct BinOpInfo {
    const char* text;
    BinaryOp op;
    int level;
  };
  static const BinOpInfo* FindBinOp(const Token& t) {
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

  Status ParseBinary(int level, ExprId* out) {
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

  Status ParseUnary(ExprId* out) {
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

  Status ParsePrimary(ExprId* out) {
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
      Next();
      return ResolveName(t, out);
    }
    return Expected_("an expression");
  }

  Status ResolveName(const Token& t, ExprId* out) {
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
                     "` (expected a variable in scope, a param declared above, or a builtin: "
                     "cta_rank, cta_x, cta_y, cluster_m, cluster_n, cluster_size, cluster_id, "
                     "num_clusters, grid_cta, grid_size, agent)",
                 "parse.unknown-name");
  }

  // A bracketed list `[E, E, ...]` (at least one element).
  Status ParseExprList(const std::string& what, std::vector<ExprId>* out) {
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
  // Variables (role-local, lexically scoped). A variable is visible from where it is bound to
  // the end of its block; a variable first bound inside an `if` is also visible after the `if`
  // when every path through it (the `then` block and an `else` block or every branch of an
  // `else if` chain) binds it: definite assignment, as a kernel engineer writes
  // `uint64_t tok; if (c) tok = arrive(..); else tok = arrive(..);`. Bound on some paths only,
  // or only inside a `for` body (which may run zero times), it is an error to read it after,
  // and the message says so (rule parse.maybe-unset).
  using Bindings = std::vector<std::pair<std::string, uint32_t>>;
  std::optional<uint32_t> LookupVar(const std::string& name) const {
    for (auto s = scopes_.rbegin(); s != scopes_.rend(); ++s) {
      for (auto v = s->rbegin(); v != s->rend(); ++v) {
        if (v->first == name) return v->second;
      }
    }
    return std::nullopt;
  }
  uint32_t NewVar(const std::string& name) {
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
  // Why `name` is not visible although the role binds it somewhere above: bound only on some
  // paths through an `if`, or only inside a loop body or a branch that has closed. "" if not.
  std::string WhyNotVisible(const std::string& name) const {
    for (auto s = hidden_.rbegin(); s != hidden_.rend(); ++s) {
      for (auto h = s->rbegin(); h != s->rend(); ++h) {
        if (h->first == name) return h->second;
      }
    }
    return {};
  }
  // Records that `name`, bound in a block that just closed, is not visible after it.
  void Hide(const std::string& name, std::string why) {
    if (LookupVar(name)) return;  // an outer variable of that name is visible: no confusion
    hidden_.back().emplace_back(name, std::move(why));
  }
  // `let x`, `-> tok`, `-> var`: the visible variable of that name, or a new one.
  Status DefineOrAssign(uint32_t* slot, const std::string& what) {
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
  Status CheckNotReserved(const Token& t, const std::string& what) const {
    if (IsReserved(t.text)) {
      return Error(t, "`" + t.text + "` is a reserved word and cannot name a " + what,
                   "parse.reserved");
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

  Status ParseCta(ExprId* cta) {
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

  Status ParseBarrierRef(BarrierRef* ref) {
    PARITY_RETURN_IF_ERROR(
        LookupObject(program_.barriers, "barrier", "parse.unknown-barrier", &ref->barrier));
    PARITY_RETURN_IF_ERROR(ExpectPunct("[", "after barrier name"));
    PARITY_RETURN_IF_ERROR(ParseExpr(&ref->index));
    PARITY_RETURN_IF_ERROR(ExpectPunct("]", "after barrier index"));
    if (IsPunct("@")) PARITY_RETURN_IF_ERROR(ParseCta(&ref->cta));
    return Status::Ok();
  }

  // A global buffer where shared memory is needed.
  Status RejectGlobal(const std::string& what) {
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
  bool IsGlobalName() const {
    const Token& t = Peek();
    if (t.kind != Token::Kind::kIdent) return false;
    for (const GlobalDecl& g : program_.globals) {
      if (g.name == t.text) return true;
    }
    return false;
  }

  // `use G[s] [+ off] [bytes n]` / `write ...` of a global buffer.
  Status ParseGlobalAccess(GlobalAccess* op) {
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

  Status ParseBufferRef(BufferRef* ref, bool allow_cta) {
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

  // ------------------------------------------------------------------------------------------
  // Top level.
  Status ParseTop() {
    while (true) {
      SkipNewlines();
      const Token t = Peek();
      if (t.kind == Token::Kind::kEof) break;
      if (t.kind != Token::Kind::kIdent) {
        return Expected_(
            "a declaration (schedule, param, cluster, clusters, buffer, barrier, tensormap, "
            "global, role, primary)");
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
      } else if (t.text == "tensormap") {
        s = ParseTensorMap();
      } else if (t.text == "role") {
        s = ParseRole();
      } else if (t.text == "global") {
        s = ParseGlobal();
      } else if (t.text == "primary") {
        s = ParsePrimary();
      } else {
        return Expected_(
            "a declaration (schedule, param, cluster, clusters, buffer, barrier, tensormap, "
            "global, role, primary)");
      }
      PARITY_RETURN_IF_ERROR(s);
    }
    // Defaults, made explicit so that every consumer of the IR sees a value.
    const Token end = Peek();
    if (program_.cluster_m == kNoExpr) program_.cluster_m = Const(1, end);
    if (program_.cluster_n == kNoExpr) program_.cluster_n = Const(1, end);
    if (program_.clusters == kNoExpr) program_.clusters = Const(1, end);
    if (program_.roles.empty()) return Error(end, "the schedule has no `role`", "parse.no-roles");
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

  // `global OUT[SLOTS] bytes N`: global memory seen by both grids (ir.h GlobalDecl).
  Status ParseGlobal() {
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

  // `primary clusters N { role ... }`: the preceding grid of a programmatic dependent launch
  // (ir.h Program::primary_clusters). Once per file; only roles inside.
  Status ParsePrimary() {
    const Token kw = Next();
    if (program_.primary_clusters != kNoExpr) {
      return Error(kw, "`primary` given twice (a schedule has at most one preceding grid)",
                   "parse.duplicate");
    }
    program_.primary_where = Loc(kw);
    PARITY_RETURN_IF_ERROR(
        ExpectWord("clusters", "after `primary` (`primary clusters N { role ... }`)"));
    PARITY_RETURN_IF_ERROR(ParseExpr(&program_.primary_clusters));
    if (!IsPunct("{")) return Expected_("`{` to start the primary grid's roles");
    const Token open = Next();
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
      program_.roles.back().grid = 1;
      ++roles;
    }
    if (roles == 0) return Error(kw, "the primary grid has no `role`", "parse.primary");
    return EndOfStatement("the primary grid");
  }

  Status CheckNewObjectName(const Token& t, const std::string& kind) const {
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
        taken(program_.roles) || taken(program_.globals)) {
      return Error(t, "`" + t.text + "` is already declared", "parse.duplicate");
    }
    return Status::Ok();
  }

  Status ParseParam() {
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

  // `cluster 2x2`, `cluster (CM)x(CN)`, `cluster 2 x 1`.
  Status ParseCluster() {
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
  Status ParseClusterDim(ExprId* out) {
    const Token& t = Peek();
    if (t.kind == Token::Kind::kInt || (t.kind == Token::Kind::kPunct && t.text == "(")) {
      return ParsePrimary(out);
    }
    return Expected_("a cluster dimension (a number or a parenthesised expression)");
  }

  Status ParseBuffer() {
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

  Status ParseBarrierDecl() {
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

  // `128B`, `32B`, `none`: a number directly followed by `B`, or a word.
  Status ParseSizeWord(const std::string& what, const std::vector<std::string>& allowed,
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

  Status ParseTensorMap() {
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

  Status ParseRole() {
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

  // `{ stmt* }` with its own variable scope. `bound` (optional) receives the variables first
  // bound in this block (not in blocks nested in it), for ParseIf. `what` names the block in
  // the message when one of its variables is read after it ("the `for` body at line 7").
  Status ParseBlock(Block* out, Bindings* bound = nullptr, const std::string& what = "") {
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

  // ------------------------------------------------------------------------------------------
  // Statements.
  void PushOp(Block* out, Op op, const Token& at) {
    Stmt s;
    s.node = std::move(op);
    s.where = Loc(at);
    out->push_back(std::move(s));
  }

  Status ParseStmt(Block* out) {
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
      // The loop variable lives in its own scope around the body.
      scopes_.emplace_back();
      hidden_.emplace_back();
      f.var = NewVar(name);
      ++loop_depth_;
      Status s = IsPunct("{") ? ParseBlock(&f.body, nullptr,
                                           "the `for` body at " + file_ + ":" +
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

  // `while COND bound N { }`: a loop that runs while COND holds, at most N times. The bound is
  // the author's claim about the kernel (a persistent loop's tiles per CTA, a spin loop's
  // retries); it keeps every run and the exploration finite, and a run in which COND still
  // holds after N passes stops with the error engine.while-bound instead of looping on. The
  // iteration count lives in a variable slot of its own (named `while@LINE:COL`, which no
  // expression can name), so that it is part of the agent's state like any variable.
  Status ParseWhile(Block* out) {
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
    scopes_.emplace_back();
    hidden_.emplace_back();
    f.var = NewVar("while@" + std::to_string(t.line) + ":" + std::to_string(t.col));
    ++loop_depth_;
    Status s = IsPunct("{") ? ParseBlock(&f.body, nullptr,
                                         "the `while` body at " + file_ + ":" +
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

  // `if E { } [else if E { }]... [else { }]`. `every_path` receives the variables first bound
  // on every path through the chain (visible after it); `earlier` holds those bound by the
  // earlier branches of an enclosing chain, whose slots a branch reuses for the same name.
  Status ParseIf(Stmt* st, Bindings* every_path, const Bindings* earlier) {
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

  // PTX memory-ordering suffixes of an op word (sim/ir/qualifiers.h), as parse.bad-qualifier.
  Status SplitQualifiers(const Token& t, std::string* base, Qualifiers* q) const {
    const std::string why = ir::SplitQualifiers(t.text, base, q);
    return why.empty() ? Status::Ok() : Error(t, why, "parse.bad-qualifier");
  }
  Status CheckQualifiers(const Token& t, const std::string& base, const Qualifiers& q,
                         const char* sem_word, bool relaxed_ok, bool scoped) const {
    const std::string why = ir::CheckQualifiers(base, q, sem_word, relaxed_ok, scoped);
    return why.empty() ? Status::Ok() : Error(t, why, "parse.bad-qualifier");
  }

  Status ParseOp(const Token& t, Block* out) {
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
        const Token v = Peek();
        std::string name;
        PARITY_RETURN_IF_ERROR(ExpectName("token variable after `token`", &name));
        auto slot = LookupVar(name);
        if (!slot) {
          if (std::string why = WhyNotVisible(name); !why.empty()) {
            return Error(v, why, "parse.maybe-unset");
          }
          return Error(v, "unknown token variable `" + name + "` (set it with `arrive ... -> " +
                              name + "`)",
                       "parse.unknown-name");
        }
        op.token_var = *slot;
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
      const Token v = Peek();
      std::string name;
      PARITY_RETURN_IF_ERROR(ExpectName("token variable after `pending_count`", &name));
      auto slot = LookupVar(name);
      if (!slot) {
        if (std::string why = WhyNotVisible(name); !why.empty()) {
          return Error(v, why, "parse.maybe-unset");
        }
        return Error(v, "unknown token variable `" + name + "` (set it with `arrive.nocomplete ... -> " +
                            name + "`)",
                     "parse.unknown-name");
      }
      op.token_var = *slot;
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
    } else if (w == "use" || w == "write") {
      BufferAccess op;
      op.write = w == "write";
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

}  // namespace

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
    return Parser(lf, std::move(file)).Run();
  }
  return Parser(text, std::move(file)).Run();
}

Expected<Program> ParseFile(const std::string& path) {
  Expected<std::string> text = ReadInputFile(path, "schedule", "io", kMaxScheduleFileBytes);
  if (!text.ok()) return text.status();
  return ParseProgram(*text, path);
}

}  // namespace parity::ir
