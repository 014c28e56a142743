// The lexer of the `.pipe` schedule language (parser.h): the source text as tokens (names,
// possibly dotted; integers; punctuation; newlines that end a statement), and the source lines
// that an error message shows under a caret. Internal to the parser (parser*.cc).
#ifndef PARITY_SIM_IR_PARSER_LEXER_H_
#define PARITY_SIM_IR_PARSER_LEXER_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace parity::ir::parser_internal {

struct Token {
  enum class Kind : uint8_t { kIdent, kInt, kPunct, kNewline, kEof };
  Kind kind = Kind::kEof;
  std::string text;  // identifier (possibly dotted, e.g. `arrive.expect_tx`) or punctuation
  int64_t value = 0;
  int line = 1;
  int col = 1;
  size_t offset = 0;  // byte offset in the text
  size_t end = 0;     // one past the last byte
  std::string rest;   // `--`: the rest of its line (an assertion's message), trimmed
};

// `what` for "expected ..., found WHAT": the token in backticks, or "end of line" / "end of file".
std::string Describe(const Token& t);

// Splits into lines for the caret display.
std::vector<std::string_view> SplitLines(std::string_view text);

// Splits `text` into tokens, ending with one kEof token. On error returns false with the
// offending position in *err_line/*err_col and a message in *msg.
bool Lex(std::string_view text, std::vector<Token>* out, std::string* msg, int* err_line,
         int* err_col);

}  // namespace parity::ir::parser_internal

#endif  // PARITY_SIM_IR_PARSER_LEXER_H_
