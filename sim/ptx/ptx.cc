#include "sim/ptx/ptx.h"

#include <cxxabi.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <tuple>
#include <unordered_map>
#include <utility>

#include "sim/common/read_file.h"
#include "sim/ptx/lexer.h"

namespace parity::ptx {
namespace {

// Bytes of a PTX fundamental type name without its dot (b8 -> 1, u64 -> 8, pred -> 1).
int64_t TypeBytes(const std::string& type) {
  if (type == "pred") return 1;
  if (type.size() < 2) return 0;
  int bits = 0;
  const char* first = type.data() + 1;
  const char* last = type.data() + type.size();
  if (type.rfind("bf16x2", 0) == 0) return 4;
  if (type.rfind("bf16", 0) == 0) return 2;
  if (type.rfind("f16x2", 0) == 0) return 4;
  if (std::from_chars(first, last, bits).ec != std::errc()) return 0;
  return bits / 8;
}

bool IsTypeName(const std::string& d) {
  static const char* const kTypes[] = {
      ".b8",  ".b16", ".b32", ".b64", ".b128",  ".u8",   ".u16",    ".u32", ".u64", ".s8",
      ".s16", ".s32", ".s64", ".f16", ".f16x2", ".bf16", ".bf16x2", ".f32", ".f64", ".pred"};
  for (const char* t : kTypes) {
    if (d == t) return true;
  }
  return false;
}

bool IsStateSpace(const std::string& d) {
  return d == ".shared" || d == ".global" || d == ".const" || d == ".local" || d == ".tex";
}

// The integer value of an integer token (decimal, hex, octal), or false on overflow.
bool ParseIntegerText(const std::string& text, int64_t* out) {
  std::string t = text;
  if (!t.empty() && (t.back() == 'U' || t.back() == 'u')) t.pop_back();
  uint64_t v = 0;
  std::from_chars_result r;
  if (t.size() > 2 && t[0] == '0' && (t[1] == 'x' || t[1] == 'X')) {
    r = std::from_chars(t.data() + 2, t.data() + t.size(), v, 16);
  } else if (t.size() > 1 && t[0] == '0') {
    r = std::from_chars(t.data() + 1, t.data() + t.size(), v, 8);
  } else {
    r = std::from_chars(t.data(), t.data() + t.size(), v, 10);
  }
  if (r.ec != std::errc() || r.ptr != t.data() + t.size()) return false;
  *out = static_cast<int64_t>(v);
  return true;
}

constexpr int kMaxOperandDepth = 8;

class Parser {
 public:
  Parser(std::vector<Token> tokens, std::string path) : t_(std::move(tokens)) {
    m_.path = std::move(path);
  }

  Expected<Module> Run() {
    if (Peek().kind == TokenKind::kEnd) {
      return Status("import.not-ptx", "the file is empty, not PTX", Where(Peek()));
    }
    if (!Peek().Is(TokenKind::kDirective, ".version")) {
      return Status("import.not-ptx",
                    "not PTX: a PTX module starts with `.version`, found `" + Peek().text + "`",
                    Where(Peek()));
    }
    while (Peek().kind != TokenKind::kEnd) PARITY_RETURN_IF_ERROR(ModuleStatement());
    if (m_.target.empty()) {
      return Status("import.not-ptx", "the module has no `.target` directive", {m_.path, 1, 1});
    }
    return std::move(m_);
  }

 private:
  const Token& Peek(size_t ahead = 0) const {
    const size_t j = std::min(i_ + ahead, t_.size() - 1);
    return t_[j];
  }
  const Token& Next() {
    const Token& t = t_[i_];
    if (i_ + 1 < t_.size()) ++i_;
    return t;
  }
  SourceLocation Where(const Token& t) const { return {m_.path, t.line, t.column}; }

  Status Error(const Token& t, const std::string& what) const {
    if (t.kind == TokenKind::kEnd) {
      return Status("import.ptx-truncated", "the PTX ends early: " + what, Where(t));
    }
    return Status("import.ptx-syntax", what + ", found `" + Describe(t) + "`", Where(t));
  }
  static std::string Describe(const Token& t) {
    if (t.kind == TokenKind::kString) return "\"" + t.text + "\"";
    return t.text;
  }

  Status ExpectPunct(char c, const std::string& context) {
    if (!Peek().IsPunct(c)) return Error(Peek(), std::string("expected `") + c + "` " + context);
    Next();
    return Status::Ok();
  }

  Status ExpectInteger(int64_t* out, const std::string& context) {
    bool negative = false;
    if (Peek().IsPunct('-')) {
      negative = true;
      Next();
    }
    const Token& t = Peek();
    if (t.kind != TokenKind::kInteger) return Error(t, "expected an integer " + context);
    if (!ParseIntegerText(t.text, out)) {
      return Status("import.ptx-syntax", "integer out of range: " + t.text, Where(t));
    }
    // Negated in unsigned arithmetic: -(-2^63) wraps instead of overflowing.
    if (negative) *out = static_cast<int64_t>(uint64_t{0} - static_cast<uint64_t>(*out));
    Next();
    return Status::Ok();
  }

  Status ExpectWord(std::string* out, const std::string& context) {
    const Token& t = Peek();
    if (t.kind != TokenKind::kWord) return Error(t, "expected a name " + context);
    *out = t.text;
    Next();
    return Status::Ok();
  }

  // Skips tokens up to and including the `;` that ends the statement.
  Status SkipStatement(const std::string& context) {
    while (!Peek().IsPunct(';')) {
      if (Peek().kind == TokenKind::kEnd) return Error(Peek(), "missing `;` after " + context);
      Next();
    }
    Next();
    return Status::Ok();
  }

  // Skips a balanced `{ ... }` starting at the current `{`.
  Status SkipBraces() {
    int depth = 0;
    do {
      const Token& t = Peek();
      if (t.kind == TokenKind::kEnd) return Error(t, "missing `}`");
      if (t.IsPunct('{')) ++depth;
      if (t.IsPunct('}')) --depth;
      Next();
    } while (depth > 0);
    return Status::Ok();
  }

  Status ModuleStatement() {
    const Token& t = Peek();
    if (t.kind != TokenKind::kDirective) {
      return Error(t, "expected a directive (.version, .target, .entry, ...) at module scope");
    }
    const std::string d = t.text;
    if (d == ".version") {
      Next();
      const Token& v = Peek();
      if (v.kind != TokenKind::kFloat && v.kind != TokenKind::kInteger) {
        return Error(v, "expected a version number after .version");
      }
      m_.version = v.text;
      Next();
      return Status::Ok();
    }
    if (d == ".target") {
      Next();
      std::string first;
      PARITY_RETURN_IF_ERROR(ExpectWord(&first, "after .target"));
      m_.target = first;
      m_.target_line = t.line;
      while (Peek().IsPunct(',')) {
        Next();
        std::string opt;
        PARITY_RETURN_IF_ERROR(ExpectWord(&opt, "in the .target list"));
        m_.target_options.push_back(opt);
      }
      return Status::Ok();
    }
    if (d == ".address_size") {
      Next();
      int64_t v = 0;
      PARITY_RETURN_IF_ERROR(ExpectInteger(&v, "after .address_size"));
      m_.address_size = static_cast<int>(v);
      return Status::Ok();
    }
    if (d == ".file") {
      Next();
      int64_t n = 0;
      PARITY_RETURN_IF_ERROR(ExpectInteger(&n, "after .file"));
      if (Peek().kind != TokenKind::kString) return Error(Peek(), "expected a file name string");
      m_.files[static_cast<int>(n)] = Next().text;
      // Optional `, timestamp, size`.
      while (Peek().IsPunct(',')) {
        Next();
        int64_t ignored = 0;
        PARITY_RETURN_IF_ERROR(ExpectInteger(&ignored, "in .file"));
      }
      return Status::Ok();
    }
    if (d == ".section") {
      // DWARF sections (.debug_str, ...): the reader does not use them.
      Next();
      while (!Peek().IsPunct('{')) {
        if (Peek().kind == TokenKind::kEnd) return Error(Peek(), "missing `{` of .section");
        Next();
      }
      return SkipBraces();
    }
    if (d == ".pragma") return SkipStatement(".pragma");
    // Linkage, then an entry, a function or a variable.
    bool visible = false;
    bool is_extern = false;
    while (Peek().kind == TokenKind::kDirective &&
           (Peek().text == ".visible" || Peek().text == ".extern" || Peek().text == ".weak" ||
            Peek().text == ".common")) {
      if (Peek().text == ".visible") visible = true;
      if (Peek().text == ".extern") is_extern = true;
      Next();
    }
    const Token& what = Peek();
    if (what.Is(TokenKind::kDirective, ".entry") || what.Is(TokenKind::kDirective, ".func")) {
      return FunctionDecl(visible);
    }
    if (what.kind == TokenKind::kDirective && IsStateSpace(what.text)) {
      Variable v;
      PARITY_RETURN_IF_ERROR(VariableDecl(&v));
      v.is_extern = is_extern;
      m_.globals.push_back(std::move(v));
      return Status::Ok();
    }
    return Error(what, "unknown module-scope directive");
  }

  // `.shared .align 8 .u64 name[N][M] (= initializer);`, at the state space token.
  Status VariableDecl(Variable* v) {
    const Token& space = Next();
    v->space = space.text.substr(1);
    v->line = space.line;
    while (Peek().kind == TokenKind::kDirective) {
      const std::string d = Next().text;
      if (d == ".align") {
        int64_t a = 0;
        PARITY_RETURN_IF_ERROR(ExpectInteger(&a, "after .align"));
        v->align = static_cast<int>(a);
      } else if (d == ".v2" || d == ".v4" || d == ".v8") {
        v->vector = d[2] - '0';
      } else if (IsTypeName(d)) {
        v->type = d.substr(1);
      } else if (d == ".ptr" || d == ".attribute") {
        // Pointer attributes carry no layout.
      } else {
        return Error(t_[i_ - 1], "unexpected directive in a " + v->space + " declaration");
      }
    }
    if (v->type.empty())
      return Error(Peek(), "expected a type in the " + v->space + " declaration");
    PARITY_RETURN_IF_ERROR(ExpectWord(&v->name, "of the variable"));
    while (Peek().IsPunct('[')) {
      Next();
      if (Peek().IsPunct(']')) {
        v->dims.push_back(-1);
      } else {
        int64_t n = 0;
        PARITY_RETURN_IF_ERROR(ExpectInteger(&n, "as the array size"));
        if (n < 0) return Status("import.ptx-syntax", "negative array size", Where(t_[i_ - 1]));
        v->dims.push_back(n);
      }
      PARITY_RETURN_IF_ERROR(ExpectPunct(']', "after the array size"));
    }
    return SkipStatement("the declaration of " + v->name);
  }

  Status ParamDecl(Param* p) {
    if (!Peek().Is(TokenKind::kDirective, ".param") && !Peek().Is(TokenKind::kDirective, ".reg")) {
      return Error(Peek(), "expected `.param`");
    }
    p->line = Next().line;
    bool after_ptr = false;
    while (Peek().kind == TokenKind::kDirective) {
      const std::string d = Next().text;
      if (d == ".align") {
        int64_t a = 0;
        PARITY_RETURN_IF_ERROR(ExpectInteger(&a, "after .align"));
        (after_ptr ? p->ptr_align : p->align) = static_cast<int>(a);
      } else if (d == ".ptr") {
        after_ptr = true;
      } else if (after_ptr && IsStateSpace(d)) {
        p->ptr_space = d.substr(1);
      } else if (IsTypeName(d)) {
        p->type = d.substr(1);
      } else {
        return Error(t_[i_ - 1], "unexpected directive in a parameter");
      }
    }
    if (p->type.empty()) return Error(Peek(), "expected the parameter's type");
    PARITY_RETURN_IF_ERROR(ExpectWord(&p->name, "of the parameter"));
    if (Peek().IsPunct('[')) {
      Next();
      PARITY_RETURN_IF_ERROR(ExpectInteger(&p->array_size, "as the parameter's array size"));
      PARITY_RETURN_IF_ERROR(ExpectPunct(']', "after the parameter's array size"));
    }
    return Status::Ok();
  }

  Status ParamList(std::vector<Param>* out) {
    PARITY_RETURN_IF_ERROR(ExpectPunct('(', "to open the parameter list"));
    if (Peek().IsPunct(')')) {
      Next();
      return Status::Ok();
    }
    while (true) {
      Param p;
      PARITY_RETURN_IF_ERROR(ParamDecl(&p));
      out->push_back(std::move(p));
      if (Peek().IsPunct(',')) {
        Next();
        continue;
      }
      return ExpectPunct(')', "to close the parameter list");
    }
  }

  Status FunctionDecl(bool visible) {
    Function f;
    const Token& kw = Next();
    f.is_entry = kw.text == ".entry";
    f.visible = visible;
    f.line = kw.line;
    if (!f.is_entry && Peek().IsPunct('(')) PARITY_RETURN_IF_ERROR(ParamList(&f.returns));
    PARITY_RETURN_IF_ERROR(ExpectWord(&f.name, std::string("of the ") + kw.text));
    if (Peek().IsPunct('(')) PARITY_RETURN_IF_ERROR(ParamList(&f.params));
    // Performance directives: .maxntid 96, 1, 1  .reqnctapercluster 2, 1, 1  .explicitcluster
    while (Peek().kind == TokenKind::kDirective) {
      const std::string d = Next().text;
      std::vector<int64_t>& values = f.directives[d.substr(1)];
      if (d == ".noreturn" || d == ".explicitcluster") continue;
      while (true) {
        int64_t v = 0;
        PARITY_RETURN_IF_ERROR(ExpectInteger(&v, "in " + d));
        values.push_back(v);
        if (!Peek().IsPunct(',')) break;
        Next();
      }
    }
    if (Peek().IsPunct(';')) {
      Next();
      m_.functions.push_back(std::move(f));
      return Status::Ok();
    }
    if (!Peek().IsPunct('{')) return Error(Peek(), "expected `{` to open the body of " + f.name);
    f.has_body = true;
    PARITY_RETURN_IF_ERROR(Body(&f));
    m_.functions.push_back(std::move(f));
    return Status::Ok();
  }

  Status Body(Function* f) {
    f->scopes.push_back(Scope{});
    std::vector<int> open = {0};   // scope stack
    Next();                        // `{`
    std::vector<SourcePos> chain;  // the .loc inlining chain, outermost first
    InlineParents parents;
    while (true) {
      const Token& t = Peek();
      if (t.kind == TokenKind::kEnd) return Error(t, "missing `}` closing " + f->name);
      if (t.IsPunct('}')) {
        Next();
        open.pop_back();
        if (open.empty()) break;
        continue;
      }
      if (t.IsPunct('{')) {
        Next();
        Scope s;
        s.parent = open.back();
        f->scopes.push_back(std::move(s));
        open.push_back(static_cast<int>(f->scopes.size()) - 1);
        continue;
      }
      if (t.kind == TokenKind::kDirective) {
        PARITY_RETURN_IF_ERROR(BodyDirective(f, open.back(), &chain, &parents));
        continue;
      }
      // A label: `name:`.
      if (t.kind == TokenKind::kWord && Peek(1).IsPunct(':')) {
        Scope& s = f->scopes[open.back()];
        if (s.labels.count(t.text) != 0) {
          return Status("import.ptx-label", "label `" + t.text + "` is defined twice in one scope",
                        Where(t));
        }
        s.labels[t.text] = static_cast<int>(f->instructions.size());
        Next();
        Next();
        continue;
      }
      Instruction inst;
      PARITY_RETURN_IF_ERROR(InstructionStatement(&inst));
      inst.scope = open.back();
      if (!chain.empty()) {
        inst.source = chain.back();
        inst.call_site = chain.front();
        inst.inline_chain = chain;
      }
      f->instructions.push_back(std::move(inst));
    }
    return ResolveLabels(f);
  }

  // Where each inlined position was inlined (its .loc's `inlined_at`), by file, line, column.
  using InlineParents = std::map<std::tuple<int, int, int>, SourcePos>;

  Status BodyDirective(Function* f, int scope, std::vector<SourcePos>* chain,
                       InlineParents* parents) {
    const Token& t = Peek();
    const std::string& d = t.text;
    if (d == ".reg") {
      Next();
      std::string type;
      while (Peek().kind == TokenKind::kDirective) {
        const std::string part = Next().text;
        if (IsTypeName(part)) type = part.substr(1);
      }
      if (type.empty()) return Error(Peek(), "expected the register type after .reg");
      while (true) {
        RegDecl r;
        r.type = type;
        r.scope = scope;
        r.line = Peek().line;
        PARITY_RETURN_IF_ERROR(ExpectWord(&r.name, "of the register"));
        if (Peek().IsPunct('<')) {
          Next();
          int64_t n = 0;
          PARITY_RETURN_IF_ERROR(ExpectInteger(&n, "as the register count"));
          PARITY_RETURN_IF_ERROR(ExpectPunct('>', "after the register count"));
          r.count = static_cast<int>(n);
        }
        f->regs.push_back(std::move(r));
        if (!Peek().IsPunct(',')) break;
        Next();
      }
      return ExpectPunct(';', "after the .reg declaration");
    }
    if (IsStateSpace(d) || d == ".param") {
      // Also a call sequence's `.param .b32 retval0;` inside its `{ }`.
      Variable v;
      PARITY_RETURN_IF_ERROR(VariableDecl(&v));
      f->variables.push_back(std::move(v));
      return Status::Ok();
    }
    if (d == ".loc") {
      Next();
      int64_t file = 0, line = 0, col = 0;
      PARITY_RETURN_IF_ERROR(ExpectInteger(&file, "(file) after .loc"));
      PARITY_RETURN_IF_ERROR(ExpectInteger(&line, "(line) after .loc"));
      PARITY_RETURN_IF_ERROR(ExpectInteger(&col, "(column) after .loc"));
      SourcePos here{static_cast<int>(file), static_cast<int>(line), static_cast<int>(col)};
      std::optional<SourcePos> inlined_at;
      // `, function_name LABEL, inlined_at FILE LINE COL`
      while (Peek().IsPunct(',')) {
        Next();
        std::string key;
        PARITY_RETURN_IF_ERROR(ExpectWord(&key, "in .loc"));
        if (key == "function_name") {
          std::string ignored;
          PARITY_RETURN_IF_ERROR(ExpectWord(&ignored, "after function_name"));
        } else if (key == "inlined_at") {
          int64_t f2 = 0, l2 = 0, c2 = 0;
          PARITY_RETURN_IF_ERROR(ExpectInteger(&f2, "after inlined_at"));
          PARITY_RETURN_IF_ERROR(ExpectInteger(&l2, "after inlined_at"));
          PARITY_RETURN_IF_ERROR(ExpectInteger(&c2, "after inlined_at"));
          inlined_at = SourcePos{static_cast<int>(f2), static_cast<int>(l2), static_cast<int>(c2)};
        } else {
          return Error(t_[i_ - 1], "unknown .loc attribute");
        }
      }
      if (line == 0) {
        // Line 0: code with no source line (nvcc's hoisted constants); keeps the chain.
        return Status::Ok();
      }
      if (!inlined_at) {
        chain->assign(1, here);
      } else {
        // The call site is a position already in the chain (the enclosing .loc); keep the chain
        // up to it. Otherwise start a two-level chain from it.
        (*parents)[{here.file, here.line, here.column}] = *inlined_at;
        size_t keep = chain->size();
        while (keep > 0 && !((*chain)[keep - 1] == *inlined_at)) --keep;
        if (keep == 0) {
          // nvcc writes a deeper frame's .loc after a shallower one of another call (`.loc 1 169`
          // between `.loc 6 371, inlined_at 1 169` and `.loc 6 424, inlined_at 6 371`): the
          // call site's own chain is the one recorded where its .loc was seen.
          std::vector<SourcePos> up = {*inlined_at};
          while (up.size() < 64) {
            auto it = parents->find({up.back().file, up.back().line, up.back().column});
            if (it == parents->end() ||
                std::find(up.begin(), up.end(), it->second) != up.end()) {
              break;
            }
            up.push_back(it->second);
          }
          chain->assign(up.rbegin(), up.rend());
        } else {
          chain->resize(keep);
        }
        chain->push_back(here);
      }
      return Status::Ok();
    }
    if (d == ".pragma") return SkipStatement(".pragma");
    return Error(t, "unexpected directive in the body of " + f->name);
  }

  Status InstructionStatement(Instruction* inst) {
    if (Peek().IsPunct('@')) {
      Next();
      if (Peek().IsPunct('!')) {
        Next();
        inst->guard_negated = true;
      }
      PARITY_RETURN_IF_ERROR(ExpectWord(&inst->guard, "as the guard predicate after `@`"));
    }
    const Token& op = Peek();
    if (op.kind != TokenKind::kWord || op.text[0] == '%') {
      return Error(op, "expected an instruction");
    }
    inst->opcode = op.text;
    inst->line = op.line;
    inst->column = op.column;
    Next();
    // Split at dots that are not part of `::`.
    size_t start = 0;
    bool first = true;
    for (size_t k = 0; k <= inst->opcode.size(); ++k) {
      if (k == inst->opcode.size() || inst->opcode[k] == '.') {
        std::string part = inst->opcode.substr(start, k - start);
        if (first) {
          inst->base = part;
          first = false;
        } else {
          inst->modifiers.push_back(part);
        }
        start = k + 1;
      }
    }
    if (Peek().IsPunct(';')) {
      Next();
      return Status::Ok();
    }
    while (true) {
      Operand o;
      PARITY_RETURN_IF_ERROR(ParseOperand(&o));
      inst->operands.push_back(std::move(o));
      if (Peek().IsPunct(',')) {
        Next();
        continue;
      }
      if (Peek().IsPunct(';')) {
        Next();
        return Status::Ok();
      }
      return Error(Peek(), "expected `,` or `;` after an operand of " + inst->opcode);
    }
  }

  Status ParseElements(char close, std::vector<Operand>* out, int depth) {
    if (Peek().IsPunct(close)) {
      Next();
      return Status::Ok();
    }
    while (true) {
      Operand o;
      PARITY_RETURN_IF_ERROR(ParseOperand(&o, depth));
      out->push_back(std::move(o));
      if (Peek().IsPunct(',')) {
        Next();
        continue;
      }
      return ExpectPunct(close, "to close the operand list");
    }
  }

  // `depth` bounds the nesting of vectors, lists, addresses and `!` so that hostile input cannot
  // exhaust the stack; PTX nests at most an address holding a vector.
  Status ParseOperand(Operand* o, int depth = 0) {
    const Token& t = Peek();
    if (depth > kMaxOperandDepth) {
      return Status("import.ptx-syntax", "operands nested too deeply", Where(t));
    }
    o->line = t.line;
    o->column = t.column;
    if (t.IsPunct('{')) {
      Next();
      o->kind = OperandKind::kVector;
      return ParseElements('}', &o->parts, depth + 1);
    }
    if (t.IsPunct('(')) {
      Next();
      o->kind = OperandKind::kList;
      return ParseElements(')', &o->parts, depth + 1);
    }
    if (t.IsPunct('[')) {
      Next();
      o->kind = OperandKind::kAddress;
      if (Peek().kind == TokenKind::kInteger || Peek().IsPunct('-')) {
        o->address_is_absolute = true;
        PARITY_RETURN_IF_ERROR(ExpectInteger(&o->integer, "as the address"));
        o->parts.push_back(Operand{});
        o->parts.back().kind = OperandKind::kInteger;
        o->parts.back().integer = o->integer;
      } else {
        Operand base;
        base.line = Peek().line;
        base.column = Peek().column;
        PARITY_RETURN_IF_ERROR(ExpectWord(&base.text, "as the address base"));
        base.kind = base.text[0] == '%' ? OperandKind::kRegister : OperandKind::kSymbol;
        o->parts.push_back(std::move(base));
        PARITY_RETURN_IF_ERROR(Offset(&o->integer));
      }
      while (Peek().IsPunct(',')) {
        Next();
        Operand extra;
        PARITY_RETURN_IF_ERROR(ParseOperand(&extra, depth + 1));
        o->parts.push_back(std::move(extra));
      }
      return ExpectPunct(']', "to close the address");
    }
    if (t.IsPunct('-') || t.kind == TokenKind::kInteger || t.kind == TokenKind::kFloat) {
      bool negative = false;
      if (t.IsPunct('-')) {
        negative = true;
        Next();
      }
      const Token& n = Peek();
      o->text = (negative ? "-" : "") + n.text;
      if (n.kind == TokenKind::kInteger) {
        o->kind = OperandKind::kInteger;
        if (!ParseIntegerText(n.text, &o->integer)) {
          return Status("import.ptx-syntax", "integer out of range: " + n.text, Where(n));
        }
        if (negative)
          o->integer = static_cast<int64_t>(uint64_t{0} - static_cast<uint64_t>(o->integer));
      } else if (n.kind == TokenKind::kFloat) {
        o->kind = OperandKind::kFloat;
        PARITY_RETURN_IF_ERROR(FloatValue(n, o));
        if (negative) o->real = -o->real;
      } else {
        return Error(n, "expected a number after `-`");
      }
      Next();
      return Status::Ok();
    }
    if (t.IsPunct('!')) {
      Next();
      PARITY_RETURN_IF_ERROR(ParseOperand(o, depth + 1));
      o->negated = true;
      return Status::Ok();
    }
    if (t.kind == TokenKind::kWord) {
      o->text = t.text;
      Next();
      if (o->text == "_") {
        o->kind = OperandKind::kSink;
        return Status::Ok();
      }
      o->kind = o->text[0] == '%' ? OperandKind::kRegister : OperandKind::kSymbol;
      if (o->kind == OperandKind::kSymbol) PARITY_RETURN_IF_ERROR(Offset(&o->integer));
      if (Peek().IsPunct('|')) {
        // setp's second destination: %p|%q.
        Next();
        Operand second;
        PARITY_RETURN_IF_ERROR(ParseOperand(&second, depth + 1));
        o->parts.push_back(std::move(second));
      }
      return Status::Ok();
    }
    return Error(t, "expected an operand");
  }

  // An optional `+imm` / `+-imm` / `-imm` after an address base or a symbol.
  Status Offset(int64_t* out) {
    if (Peek().IsPunct('+')) {
      Next();
      return ExpectInteger(out, "as the offset");
    }
    if (Peek().IsPunct('-') && Peek(1).kind == TokenKind::kInteger) {
      return ExpectInteger(out, "as the offset");
    }
    return Status::Ok();
  }

  Status FloatValue(const Token& n, Operand* o) {
    const std::string& s = n.text;
    if (s.size() > 2 && s[0] == '0' && (s[1] == 'f' || s[1] == 'F')) {
      uint32_t b = 0;
      std::from_chars(s.data() + 2, s.data() + s.size(), b, 16);
      float f;
      std::memcpy(&f, &b, sizeof f);
      o->bits = b;
      o->real = f;
    } else if (s.size() > 2 && s[0] == '0' && (s[1] == 'd' || s[1] == 'D')) {
      uint64_t b = 0;
      std::from_chars(s.data() + 2, s.data() + s.size(), b, 16);
      double d;
      std::memcpy(&d, &b, sizeof d);
      o->bits = b;
      o->real = d;
    } else {
      o->real = std::strtod(s.c_str(), nullptr);
    }
    return Status::Ok();
  }

  // Whether `name` is a register declared without `%` (`.reg .pred p;` of inline asm) in `scope`
  // or a scope around it.
  static bool IsScopedRegister(const Function& f, const std::string& name, int scope) {
    for (; scope >= 0; scope = f.scopes[scope].parent) {
      for (const RegDecl& r : f.regs) {
        if (r.scope == scope && r.count == 0 && r.name == name) return true;
      }
    }
    return false;
  }

  static void MarkScopedRegisters(const Function& f, int scope, Operand* o) {
    if (o->kind == OperandKind::kSymbol && IsScopedRegister(f, o->text, scope)) {
      o->kind = OperandKind::kRegister;
    }
    for (Operand& p : o->parts) MarkScopedRegisters(f, scope, &p);
  }

  // Gives a register operand (and its parts: `%r|%p`) its slot in f->registers.
  static void NumberRegisters(std::unordered_map<std::string, int>* slots, Function* f,
                              Operand* o) {
    if (o->kind == OperandKind::kRegister) o->reg = RegisterSlot(slots, f, o->text);
    for (Operand& p : o->parts) NumberRegisters(slots, f, &p);
  }

  static int RegisterSlot(std::unordered_map<std::string, int>* slots, Function* f,
                          const std::string& name) {
    auto [it, added] = slots->try_emplace(name, static_cast<int>(f->registers.size()));
    if (added) f->registers.push_back(name);
    return it->second;
  }

  // Turns names of scoped registers into register operands, numbers the registers, then
  // resolves every remaining symbol operand that names a label visible from its instruction's
  // scope.
  Status ResolveLabels(Function* f) {
    std::unordered_map<std::string, int> slots;
    for (Instruction& inst : f->instructions) {
      for (Operand& o : inst.operands) MarkScopedRegisters(*f, inst.scope, &o);
      for (Operand& o : inst.operands) NumberRegisters(&slots, f, &o);
      if (!inst.guard.empty()) inst.guard_reg = RegisterSlot(&slots, f, inst.guard);
      for (size_t k = 0; k < inst.operands.size(); ++k) {
        Operand& o = inst.operands[k];
        if (o.kind != OperandKind::kSymbol) continue;
        o.label_target = f->FindLabel(o.text, inst.scope);
        if (o.label_target < 0 && inst.base == "bra" && k == 0) {
          return Status("import.ptx-label",
                        "`" + o.text + "` is not a label in scope of this branch",
                        {m_.path, o.line, o.column});
        }
      }
    }
    return Status::Ok();
  }

  std::vector<Token> t_;
  size_t i_ = 0;
  Module m_;
};

}  // namespace

bool Instruction::HasModifier(std::string_view m) const {
  for (const std::string& x : modifiers) {
    if (x == m) return true;
  }
  return false;
}

int Instruction::BranchTarget() const {
  if (operands.empty()) return -1;
  return operands[0].label_target;
}

int64_t Param::SizeBytes() const {
  const int64_t elem = TypeBytes(type);
  return array_size > 0 ? elem * array_size : elem;
}

int64_t Variable::SizeBytes() const {
  int64_t n = TypeBytes(type) * vector;
  for (int64_t d : dims) {
    if (d < 0) return -1;
    n *= d;
  }
  return n;
}

int Function::FindLabel(std::string_view label, int scope) const {
  while (scope >= 0 && scope < static_cast<int>(scopes.size())) {
    auto it = scopes[scope].labels.find(label);
    if (it != scopes[scope].labels.end()) return it->second;
    scope = scopes[scope].parent;
  }
  return -1;
}

const Param* Function::FindParam(std::string_view name) const {
  for (const Param& p : params) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

std::string Module::SourceString(const SourcePos& pos) const {
  if (!pos.known()) return "";
  auto it = files.find(pos.file);
  const std::string file = it == files.end() ? "file" + std::to_string(pos.file) : it->second;
  return file + ":" + std::to_string(pos.line);
}

std::string Module::PtxString(const Instruction& inst) const {
  return path + ":" + std::to_string(inst.line);
}

Expected<Module> ParseModule(std::string_view text, std::string path) {
  // A module starts with `.version` after blanks and comments; anything else (a binary, C++, a
  // schedule) is reported as not PTX before the lexer trips over its first odd character.
  size_t k = 0;
  int line = 1;
  while (k < text.size()) {
    if (text[k] == '\n') {
      ++line;
      ++k;
    } else if (text[k] == ' ' || text[k] == '\t' || text[k] == '\r') {
      ++k;
    } else if (text.substr(k, 2) == "//") {
      while (k < text.size() && text[k] != '\n') ++k;
    } else {
      break;
    }
  }
  if (text.substr(k, 8) != ".version") {
    return Status("import.not-ptx",
                  k == text.size() ? "the file is empty, not PTX"
                                   : "not PTX: a PTX module starts with `.version`",
                  {path, line, 1});
  }
  auto tokens = Lex(text, path);
  if (!tokens.ok()) return tokens.status();
  return Parser(std::move(tokens).value(), std::move(path)).Run();
}

Expected<Module> ReadModule(const std::string& path) {
  Expected<std::string> text = ReadInputFile(path, "PTX", "import.file", kMaxPtxFileBytes);
  if (!text.ok()) return text.status();
  return ParseModule(*text, path);
}

std::string Demangle(const std::string& name) {
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> out(
      abi::__cxa_demangle(name.c_str(), nullptr, nullptr, &status), std::free);
  if (status != 0 || out == nullptr) return name;
  return out.get();
}

std::string BareName(const std::string& demangled) {
  // A name __cxa_demangle gives up on (CUTLASS 7107b055's ping-pong and stream-K kernels): the
  // last identifier of its nested name before the template arguments, `device_kernel` of
  // `_ZN7cutlass13device_kernelI...` (Itanium C++ ABI, 5.1.5: <source-name> ::= <length> <id>).
  if (demangled.rfind("_Z", 0) == 0) {
    size_t k = demangled.rfind("_ZN", 0) == 0 ? 3 : 2;
    std::string last;
    while (k < demangled.size() && std::isdigit(static_cast<unsigned char>(demangled[k]))) {
      size_t len = 0;
      while (k < demangled.size() && std::isdigit(static_cast<unsigned char>(demangled[k]))) {
        len = len * 10 + static_cast<size_t>(demangled[k++] - '0');
      }
      if (len == 0 || k + len > demangled.size()) break;
      last = demangled.substr(k, len);
      k += len;
    }
    if (!last.empty()) return last;
  }
  // The parameter list is the last top-level `( )` group (a name may contain
  // `(anonymous namespace)::` before it); then drop a trailing template argument list, keep the
  // last `::` component and, for templates' `void f<int>(...)`, the last word.
  std::string head = demangled;
  size_t close = head.rfind(')');
  if (close != std::string::npos) {
    int depth = 0;
    for (size_t k = close + 1; k-- > 0;) {
      if (head[k] == ')') ++depth;
      if (head[k] == '(' && --depth == 0) {
        head = head.substr(0, k);
        break;
      }
    }
  }
  if (!head.empty() && head.back() == '>') {
    int depth = 0;
    for (size_t k = head.size(); k-- > 0;) {
      if (head[k] == '>') ++depth;
      if (head[k] == '<' && --depth == 0) {
        head = head.substr(0, k);
        break;
      }
    }
  }
  const size_t colon = head.rfind("::");
  if (colon != std::string::npos) head = head.substr(colon + 2);
  const size_t space = head.rfind(' ');
  if (space != std::string::npos) head = head.substr(space + 1);
  return head;
}

Expected<const Function*> FindEntry(const Module& module, std::string_view name) {
  std::vector<const Function*> bare_matches;
  std::string listing;
  for (const Function& f : module.functions) {
    if (!f.is_entry || !f.has_body) continue;
    const std::string demangled = Demangle(f.name);
    if (f.name == name || demangled == name) return &f;
    if (BareName(demangled) == name) bare_matches.push_back(&f);
    listing += (listing.empty() ? "" : ", ") + f.name;
    if (demangled != f.name) listing += " (" + demangled + ")";
  }
  if (bare_matches.size() == 1) return bare_matches[0];
  if (bare_matches.size() > 1) {
    std::string which;
    for (const Function* f : bare_matches) {
      which += (which.empty() ? "" : ", ") + f->name + " (" + Demangle(f->name) + ")";
    }
    return Status("import.entry-ambiguous",
                  "entry `" + std::string(name) + "` names several kernels: " + which +
                      "; give the mangled or the full demangled name",
                  {module.path, 0, 0});
  }
  return Status("import.entry-not-found",
                "no kernel entry `" + std::string(name) +
                    "` in the module; its entries: " + (listing.empty() ? "none" : listing),
                {module.path, 0, 0});
}

Status RequireHopperTarget(const Module& module) {
  if (module.target != "sm_90a" && module.target != "sm_90") {
    return Status("import.ptx-target",
                  "the PTX targets " + module.target +
                      "; Parity imports PTX for Hopper (compile with "
                      "-gencode=arch=compute_90a,code=sm_90a)",
                  {module.path, module.target_line, 1});
  }
  if (module.address_size != 64) {
    return Status("import.ptx-target",
                  "the PTX uses " + std::to_string(module.address_size) +
                      "-bit addresses; Parity imports 64-bit PTX",
                  {module.path, 0, 0});
  }
  return Status::Ok();
}

}  // namespace parity::ptx
