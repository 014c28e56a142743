#include "sim/ptx/lexer.h"

#include <cctype>

namespace parity::ptx {
namespace {

bool IsWordStart(char c) {
  return std::isalpha(static_cast<unsigned char>(c)) || c == '_' || c == '$' || c == '%';
}
bool IsWordChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '$';
}
bool IsHex(char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; }
bool IsDigit(char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }

class Lexer {
 public:
  Lexer(std::string_view text, const std::string& path) : s_(text), path_(path) {}

  Expected<std::vector<Token>> Run() {
    std::vector<Token> out;
    while (true) {
      PARITY_RETURN_IF_ERROR(SkipSpaceAndComments());
      if (i_ >= s_.size()) break;
      const int line = line_;
      const int col = Column();
      const char c = s_[i_];
      Token t;
      t.line = line;
      t.column = col;
      if (c == '.' && i_ + 1 < s_.size() && IsWordStart(s_[i_ + 1]) && s_[i_ + 1] != '%') {
        ++i_;
        t.kind = TokenKind::kDirective;
        t.text = "." + ReadWordTail(/*dots=*/false);
      } else if (IsWordStart(c)) {
        t.kind = TokenKind::kWord;
        t.text = ReadWordTail(/*dots=*/true);
      } else if (IsDigit(c)) {
        PARITY_RETURN_IF_ERROR(ReadNumber(t));
      } else if (c == '"') {
        ++i_;
        size_t start = i_;
        while (i_ < s_.size() && s_[i_] != '"' && s_[i_] != '\n') {
          if (s_[i_] == '\\' && i_ + 1 < s_.size()) ++i_;
          ++i_;
        }
        if (i_ >= s_.size() || s_[i_] != '"') {
          return Status("import.ptx-syntax", "unterminated string", {path_, line, col});
        }
        t.kind = TokenKind::kString;
        t.text = std::string(s_.substr(start, i_ - start));
        ++i_;
      } else if (std::string_view(",;:[]{}()<>+-@!=|").find(c) != std::string_view::npos) {
        t.kind = TokenKind::kPunct;
        t.text = std::string(1, c);
        ++i_;
      } else {
        std::string shown = std::isprint(static_cast<unsigned char>(c))
                                ? std::string("'") + c + "'"
                                : "byte " + std::to_string(static_cast<unsigned char>(c));
        return Status("import.ptx-syntax", "unexpected character " + shown + " in PTX",
                      {path_, line, col});
      }
      out.push_back(std::move(t));
    }
    Token end;
    end.kind = TokenKind::kEnd;
    end.line = line_;
    end.column = Column();
    out.push_back(end);
    return out;
  }

 private:
  int Column() const { return static_cast<int>(i_ - line_start_) + 1; }

  Status SkipSpaceAndComments() {
    while (i_ < s_.size()) {
      const char c = s_[i_];
      if (c == '\n') {
        ++i_;
        ++line_;
        line_start_ = i_;
      } else if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v') {
        ++i_;
      } else if (c == '/' && i_ + 1 < s_.size() && s_[i_ + 1] == '/') {
        while (i_ < s_.size() && s_[i_] != '\n') ++i_;
      } else if (c == '/' && i_ + 1 < s_.size() && s_[i_ + 1] == '*') {
        const int line = line_;
        const int col = Column();
        i_ += 2;
        while (i_ + 1 < s_.size() && !(s_[i_] == '*' && s_[i_ + 1] == '/')) {
          if (s_[i_] == '\n') {
            ++line_;
            line_start_ = i_ + 1;
          }
          ++i_;
        }
        if (i_ + 1 >= s_.size()) {
          return Status("import.ptx-syntax", "unterminated /* comment", {path_, line, col});
        }
        i_ += 2;
      } else {
        break;
      }
    }
    return Status::Ok();
  }

  // A word's characters from i_: word characters, and with `dots` further `.part`s; `::part`
  // continues a word either way (`shared::cta`, `mbarrier::complete_tx::bytes`).
  std::string ReadWordTail(bool dots) {
    size_t start = i_;
    if (s_[i_] == '%' || s_[i_] == '$' || s_[i_] == '_' ||
        std::isalpha(static_cast<unsigned char>(s_[i_]))) {
      ++i_;
    }
    while (i_ < s_.size()) {
      if (IsWordChar(s_[i_])) {
        ++i_;
      } else if (s_[i_] == ':' && i_ + 2 < s_.size() && s_[i_ + 1] == ':' &&
                 IsWordChar(s_[i_ + 2])) {
        i_ += 2;
      } else if (dots && s_[i_] == '.' && i_ + 1 < s_.size() && IsWordChar(s_[i_ + 1])) {
        ++i_;
      } else {
        break;
      }
    }
    return std::string(s_.substr(start, i_ - start));
  }

  Status ReadNumber(Token& t) {
    const size_t start = i_;
    t.kind = TokenKind::kInteger;
    if (s_[i_] == '0' && i_ + 1 < s_.size() &&
        (s_[i_ + 1] == 'f' || s_[i_ + 1] == 'F' || s_[i_ + 1] == 'd' || s_[i_ + 1] == 'D')) {
      const size_t want = (s_[i_ + 1] == 'f' || s_[i_ + 1] == 'F') ? 8 : 16;
      size_t j = i_ + 2;
      while (j < s_.size() && IsHex(s_[j])) ++j;
      if (j - (i_ + 2) != want) {
        return Status("import.ptx-syntax",
                      "a hexadecimal float literal takes " + std::to_string(want) + " digits",
                      {path_, t.line, t.column});
      }
      t.kind = TokenKind::kFloat;
      i_ = j;
    } else if (s_[i_] == '0' && i_ + 1 < s_.size() && (s_[i_ + 1] == 'x' || s_[i_ + 1] == 'X')) {
      i_ += 2;
      const size_t digits = i_;
      while (i_ < s_.size() && IsHex(s_[i_])) ++i_;
      if (i_ == digits) {
        return Status("import.ptx-syntax", "0x without hexadecimal digits",
                      {path_, t.line, t.column});
      }
    } else {
      while (i_ < s_.size() && IsDigit(s_[i_])) ++i_;
      if (i_ + 1 < s_.size() && s_[i_] == '.' && IsDigit(s_[i_ + 1])) {
        t.kind = TokenKind::kFloat;
        ++i_;
        while (i_ < s_.size() && IsDigit(s_[i_])) ++i_;
      }
      if (i_ < s_.size() && (s_[i_] == 'e' || s_[i_] == 'E')) {
        size_t j = i_ + 1;
        if (j < s_.size() && (s_[j] == '+' || s_[j] == '-')) ++j;
        if (j < s_.size() && IsDigit(s_[j])) {
          t.kind = TokenKind::kFloat;
          i_ = j;
          while (i_ < s_.size() && IsDigit(s_[i_])) ++i_;
        }
      }
    }
    if (t.kind == TokenKind::kInteger && i_ < s_.size() && (s_[i_] == 'U' || s_[i_] == 'u')) ++i_;
    if (i_ < s_.size() && IsWordChar(s_[i_])) {
      return Status("import.ptx-syntax", "malformed number", {path_, t.line, t.column});
    }
    t.text = std::string(s_.substr(start, i_ - start));
    return Status::Ok();
  }

  std::string_view s_;
  const std::string& path_;
  size_t i_ = 0;
  int line_ = 1;
  size_t line_start_ = 0;
};

}  // namespace

Expected<std::vector<Token>> Lex(std::string_view text, const std::string& path) {
  return Lexer(text, path).Run();
}

}  // namespace parity::ptx
