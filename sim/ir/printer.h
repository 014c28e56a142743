// Canonical text of an ir::Program: one declaration or operation per line, two-space indents,
// expressions with the fewest parentheses that keep their structure, every default spelled out
// (cluster shape, role count/threads, buffer align). ParseProgram(Print(p)) gives a program that
// prints the same text again, so the text is a stable form for diffs, hashing and reports.
// Comments and the file name are not part of it.
#ifndef PARITY_SIM_IR_PRINTER_H_
#define PARITY_SIM_IR_PRINTER_H_

#include <string>

#include "sim/ir/ir.h"

namespace parity::ir {

std::string Print(const Program& program);

// One expression as it would appear in Print (variables named from `role`, if given).
std::string PrintExpr(const Program& program, ExprId id, const Role* role = nullptr);

}  // namespace parity::ir

#endif  // PARITY_SIM_IR_PRINTER_H_
