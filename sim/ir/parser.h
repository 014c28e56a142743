// The `.pipe` schedule language -> ir::Program. The language reference is docs/language.md (every
// construct, its PTX counterpart and every parse.* rule; a rule added here must be listed there,
// //tests/docs:language_test checks it); by example: sim/examples/*.pipe and pipelines/README.md;
// the IR: sim/ir/ir.h.
//
// A hand-written lexer and recursive-descent parser. Names are resolved while parsing:
// role-local variables (let / for / `-> tok`, lexically scoped, one slot each), then params
// (declared earlier in the file), then builtins (cta_rank, cta_x, ...). `let x = e` where `x` is
// visible reassigns that variable's slot; otherwise it declares a new one in the current block.
// A variable first bound inside an `if` (let, `-> tok`, `test_wait ... -> v`) is visible after
// the `if` when every path through it binds it (the `then` block and the `else` block, or every
// branch of an `else if` chain ending in `else`): all branches then write one slot. Bound on some
// paths only, or only inside a `for` body (which may run zero times), reading it after the block
// is an error with rule "parse.maybe-unset" that names the `if` (or loop) by file:line and says
// to set the variable on every path or before the block, as a kernel declares `uint64_t tok;`
// before the branch.
//
// Language decisions this parser implements:
//  - Newlines inside ( ) and [ ] do not end a statement (long coordinate lists may wrap); a
//    `{` or `}` resets that, so an unclosed `(` is reported at the next brace, not at EOF.
//  - `else` may start the line after a `}`. `cluster.sync` becomes ClusterArrive + ClusterWait.
//  - `<-` (tma.store) must be written without a space; `a <-1` in an expression is a < -1.
//  - Statement keywords, clause words (count, bytes, bar, mask, ...), builtins and dotted names
//    are reserved: they cannot name params, objects or variables; a variable may not shadow a
//    param. Object names are unique across buffers, barriers, tensor maps and roles.
//  - Barrier and buffer references always need `[index]`. Optional clauses of an op may come in
//    any order, each at most once; the printer writes them in one canonical order.
//  - Defaults are explicit in the IR: cluster 1x1, clusters 1, buffer align 1024, role count 1
//    and threads 1. Op-level optional fields stay kNoExpr (see ir.h for their meaning).
//  - `param P = E` may use earlier params only; default_value is E over the defaults, and
//    BindParams re-evaluates E after -D overrides.
//
// Errors are Statuses with rule "parse" (syntax) or "parse.<what>" (e.g. "parse.unknown-barrier",
// "parse.unknown-name", "parse.maybe-unset", "parse.duplicate", "parse.bad-value"), the location
// file:line:col and a message that says what was expected and what was found, followed by the
// offending source line and a caret under the column. No input makes the parser crash or hang.
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
