// The lexer of the `.pipe` language (parser_lexer.h): hand-written, one pass over the bytes.
#include "sim/ir/parser_lexer.h"

#include <cctype>
#include <cstdint>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

namespace parity::ir::parser_internal {
namespace {

// A trace header (sim/trace/trace_file.cc) holds strings of up to 4096 bytes: a schedule that
// `check` accepts must be one that `run --trace` can record.
constexpr size_t kMaxNameBytes = 1024;

class Lexer {
 public:
  explicit Lexer(std::string_view text) : text_(text) {}

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
        // `-- message` (a space or the end of the line after the dashes): the rest of the line
        // is the message of an assertion, taken as written (any character, no comment).
        const bool message =
            two == "--" && (pos_ + 2 == text_.size() || text_[pos_ + 2] == ' ' ||
                            text_[pos_ + 2] == '\t' || text_[pos_ + 2] == '\n' ||
                            text_[pos_ + 2] == '\r');
        if (message) {
          Advance();
          Advance();
          t.text = two;
          const size_t from = pos_;
          while (pos_ < text_.size() && text_[pos_] != '\n') Advance();
          std::string_view rest = text_.substr(from, pos_ - from);
          while (!rest.empty() && (rest.front() == ' ' || rest.front() == '\t')) rest.remove_prefix(1);
          while (!rest.empty() && (rest.back() == ' ' || rest.back() == '\t' || rest.back() == '\r')) {
            rest.remove_suffix(1);
          }
          t.rest = std::string(rest);
        } else if (matched) {
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
  size_t pos_ = 0;
  int line_ = 1;
  int col_ = 1;
};

}  // namespace

std::string Describe(const Token& t) {
  switch (t.kind) {
    case Token::Kind::kNewline: return "end of line";
    case Token::Kind::kEof: return "end of file";
    default: return "`" + t.text + "`";
  }
}

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

bool Lex(std::string_view text, std::vector<Token>* out, std::string* msg, int* err_line,
         int* err_col) {
  return Lexer(text).Run(out, msg, err_line, err_col);
}

}  // namespace parity::ir::parser_internal
