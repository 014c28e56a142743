// The `.pipe` schedule language -> ir::Program (language: docs in sim/examples/*.pipe and
// /work/notes/language.md; the IR: sim/ir/ir.h).
//
// A hand-written lexer and recursive-descent parser. Names are resolved while parsing:
// role-local variables (let / for / `-> tok`, lexically scoped, one slot each), then params
// (declared earlier in the file), then builtins (cta_rank, cta_x, ...). `let x = e` where `x` is
// visible reassigns that variable's slot; otherwise it declares a new one in the current block.
//
// Errors are Statuses with rule "parse" (syntax) or "parse.<what>" (e.g. "parse.unknown-barrier",
// "parse.unknown-name", "parse.duplicate", "parse.bad-value"), the location file:line:col and a
// message that says what was expected and what was found, followed by the offending source line
// and a caret under the column. No input makes the parser crash or hang.
#ifndef PARITY_SIM_IR_PARSER_H_
#define PARITY_SIM_IR_PARSER_H_

#include <string>
#include <string_view>

#include "sim/common/status.h"
#include "sim/ir/ir.h"

namespace parity::ir {

// Parses `text`; `file` names it in locations and is stored in Program::file (the schedule name
// defaults to the file's stem).
Expected<Program> ParseProgram(std::string_view text, std::string file);

// Reads and parses a file. A file that cannot be read is rule "io".
Expected<Program> ParseFile(const std::string& path);

}  // namespace parity::ir

#endif  // PARITY_SIM_IR_PARSER_H_
