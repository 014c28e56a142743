// The PTX lexer: turns text into tokens with their line and column. Comments (`//`, `/* */`)
// are dropped. A dotted word (`mbarrier.try_wait.parity.shared::cta.b64`, `%tid.x`) is one token;
// so is a directive (`.reg`, `.shared::cluster`).
#ifndef PARITY_SIM_PTX_LEXER_H_
#define PARITY_SIM_PTX_LEXER_H_

#include <string>
#include <string_view>
#include <vector>

#include "sim/common/status.h"

namespace parity::ptx {

enum class TokenKind {
  kWord,       // identifier, opcode, register (%r1), label ($L__BB0_2)
  kDirective,  // .reg, .entry, .b32, .shared::cta
  kInteger,    // 42, 0x1F, 017 (no sign)
  kFloat,      // 0f3F000000, 0d3FF0000000000000, 1.5, 9.0
  kString,     // "text" (without the quotes in `text`)
  kPunct,      // one of , ; : [ ] { } ( ) < > + - @ ! = |
  kEnd,
};

struct Token {
  TokenKind kind = TokenKind::kEnd;
  std::string text;
  int line = 0;
  int column = 0;

  bool Is(TokenKind k, std::string_view t) const { return kind == k && text == t; }
  bool IsPunct(char c) const {
    return kind == TokenKind::kPunct && text.size() == 1 && text[0] == c;
  }
};

// Tokenises `text`; the last token is kEnd. Errors: import.ptx-syntax (a character PTX has no use
// for, an unterminated comment or string).
Expected<std::vector<Token>> Lex(std::string_view text, const std::string& path);

}  // namespace parity::ptx

#endif  // PARITY_SIM_PTX_LEXER_H_
