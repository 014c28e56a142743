#include "sim/ptx/wait_results.h"

#include <algorithm>
#include <cstddef>
#include <map>
#include <set>
#include <string>
#include <utility>

namespace parity::ptx {
namespace {

// Registers an operand reads (an address's base, a vector's elements).
void ReadRegisters(const Operand& o, std::set<std::string>* out) {
  if (o.kind == OperandKind::kRegister) out->insert(o.text);
  for (const Operand& p : o.parts) ReadRegisters(p, out);
}

bool Writes(const Instruction& inst) {
  return !inst.operands.empty() && inst.base != "st" && inst.base != "bra" && inst.base != "call" &&
         inst.base != "ret" && inst.base != "exit" && inst.base != "bar" &&
         inst.base != "barrier" && inst.base != "red" && inst.base != "cp";
}

// Whether the predicate `pred` written by the wait at `start` decides anything (the header).
bool ResultRead(const Function& f, size_t start, const std::string& pred) {
  const size_t n = f.instructions.size();
  // The search visits (instruction, tainted registers) states; a state whose taint a visit of
  // the same instruction already covered adds nothing.
  std::map<size_t, std::set<std::string>> seen;
  std::vector<std::pair<size_t, std::set<std::string>>> work = {{start + 1, {pred}}};
  size_t steps = 0;
  constexpr size_t kMaxSteps = 200000;
  while (!work.empty()) {
    // Named variables, not a structured binding: a lambda below captures `taint`, which clang
    // 14 (the sanitized build) refuses for a binding.
    size_t pc = work.back().first;
    std::set<std::string> taint = std::move(work.back().second);
    work.pop_back();
    while (pc < n && !taint.empty()) {
      if (++steps > kMaxSteps) return true;
      std::set<std::string>& covered = seen[pc];
      if (std::includes(covered.begin(), covered.end(), taint.begin(), taint.end())) break;
      covered.insert(taint.begin(), taint.end());
      const Instruction& inst = f.instructions[pc];
      if (!inst.guard.empty() && taint.count(inst.guard) != 0) return true;
      std::set<std::string> reads;
      const bool writes = Writes(inst);
      for (size_t k = writes ? 1 : 0; k < inst.operands.size(); ++k) {
        ReadRegisters(inst.operands[k], &reads);
      }
      // A destination that is an address (st-like forms) is read, not written.
      if (writes && inst.operands[0].kind == OperandKind::kAddress) {
        ReadRegisters(inst.operands[0], &reads);
      }
      const bool tainted_read = std::any_of(reads.begin(), reads.end(),
                                            [&](const std::string& r) { return taint.count(r); });
      if (tainted_read && !writes) return true;  // a store, call or branch operand
      if (writes) {
        std::set<std::string> dests;
        if (inst.operands[0].kind != OperandKind::kAddress) {
          ReadRegisters(inst.operands[0], &dests);
        }
        for (const std::string& d : dests) {
          if (tainted_read) {
            taint.insert(d);
          } else if (inst.guard.empty()) {  // a guarded write may not happen
            taint.erase(d);
          }
        }
      }
      if (inst.base == "ret" || inst.base == "exit") break;
      if (inst.base == "bra") {
        const int target = inst.BranchTarget();
        if (target < 0) return true;  // an indirect branch: give up, counted as read
        if (inst.guard.empty()) {
          pc = static_cast<size_t>(target);
          continue;
        }
        work.push_back({static_cast<size_t>(target), taint});
      }
      ++pc;
    }
  }
  return false;
}

}  // namespace

std::vector<bool> WaitResultsRead(const Function& f) {
  std::vector<bool> read(f.instructions.size(), true);
  for (size_t i = 0; i < f.instructions.size(); ++i) {
    const Instruction& inst = f.instructions[i];
    if (inst.base != "mbarrier" ||
        !(inst.HasModifier("try_wait") || inst.HasModifier("test_wait"))) {
      continue;
    }
    if (inst.operands.empty() || inst.operands[0].kind != OperandKind::kRegister) continue;
    read[i] = ResultRead(f, i, inst.operands[0].text);
  }
  return read;
}

}  // namespace parity::ptx
