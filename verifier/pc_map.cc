#include "verifier/pc_map.h"

#include <variant>

#include "sim/engine/control.h"

namespace parity::verifier {

PcMap::PcMap(const ir::Program& program) : program_(&program) {
  roles_.resize(program.roles.size());
  for (size_t r = 0; r < program.roles.size(); ++r) {
    for (const engine::Instr& in : engine::CompileRole(program.roles[r])) {
      roles_[r].push_back(in.stmt);  // null: the implicit exit
    }
  }
}

const ir::Stmt* PcMap::stmt(uint32_t role, uint32_t pc) const {
  if (role >= roles_.size() || pc >= roles_[role].size()) return nullptr;
  return roles_[role][pc];
}

const ir::Op* PcMap::op(uint32_t role, uint32_t pc) const {
  const ir::Stmt* s = stmt(role, pc);
  return s ? std::get_if<ir::Op>(&s->node) : nullptr;
}

SourceLocation PcMap::where(uint32_t role, uint32_t pc) const {
  SourceLocation w;
  if (const ir::Stmt* s = stmt(role, pc)) {
    w = s->where;
  } else if (role < program_->roles.size() && pc + 1 == roles_[role].size()) {
    w = program_->roles[role].where;
  }
  if (w.file.empty()) w.file = program_->file;
  return w;
}

}  // namespace parity::verifier
