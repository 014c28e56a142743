#include "sim/ptx/data_branch.h"

#include <string>
#include <unordered_set>

namespace parity::ptx {
namespace {

// Instructions that read and write registers only (PTX ISA 9.7.1-9.7.5, 9.7.8-9.7.9: integer,
// floating-point, half, comparison and selection, logic and shift, data movement between
// registers and conversion).
bool ComputesOnly(const Instruction& inst) {
  static const std::unordered_set<std::string> kPure = {
      "add",   "sub",  "mul",   "mad",  "fma",  "div",   "rem",  "abs",      "neg",
      "min",   "max",  "and",   "or",   "xor",  "not",   "cnot", "lop3",     "shl",
      "shr",   "shf",  "cvt",   "mov",  "setp", "selp",  "set",  "slct",     "rcp",
      "sqrt",  "rsqrt", "ex2",  "lg2",  "sin",  "cos",   "tanh", "bfe",      "bfi", "cvta",
      "bfind", "brev", "popc",  "clz",  "prmt", "testp", "mul24", "mad24",   "sad",
      "dp4a",  "dp2a", "bmsk",  "szext", "fns", "copysign"};
  if (kPure.count(inst.base) > 0) return true;
  // Parameter and constant space are read-only for the kernel's lifetime: no ordering, no
  // shared bytes.
  if (inst.base == "ld") return inst.HasModifier("param") || inst.HasModifier("const");
  return false;
}

}  // namespace

int DataOnlyJoin(const Function& f, int branch) {
  const int n = static_cast<int>(f.instructions.size());
  if (branch < 0 || branch >= n || f.instructions[branch].base != "bra") return -1;
  int join = f.instructions[branch].BranchTarget();
  if (join <= branch) return -1;
  for (int i = branch + 1; i < join; ++i) {
    const Instruction& inst = f.instructions[i];
    if (inst.base == "bra") {
      const int target = inst.BranchTarget();
      if (target <= i) return -1;  // a loop: the region may not end
      if (target > join) join = target;
      if (join > n) return -1;
      continue;
    }
    if (!ComputesOnly(inst)) return -1;
  }
  return join;
}

}  // namespace parity::ptx
