#include "verifier/pc_map.h"

#include <variant>

namespace parity::verifier {

namespace {

void Flatten(const ir::Block& block, std::vector<const ir::Stmt*>& out) {
  for (const ir::Stmt& st : block) {
    if (std::holds_alternative<ir::Let>(st.node)) {
      out.push_back(&st);
    } else if (const auto* f = std::get_if<ir::For>(&st.node)) {
      // The engine's numbering (sim/engine/code.h, CompileBlock); a while is a For too.
      out.push_back(&st);  // init
      out.push_back(&st);  // test
      Flatten(f->body, out);
      out.push_back(&st);  // step
    } else if (const auto* i = std::get_if<ir::If>(&st.node)) {
      out.push_back(&st);  // branch
      Flatten(i->then_body, out);
      if (!i->else_body.empty()) {
        out.push_back(&st);  // jump over the else
        Flatten(i->else_body, out);
      }
    } else {
      out.push_back(&st);  // an op, or the jump of a `break`
    }
  }
}

}  // namespace

PcMap::PcMap(const ir::Program& program) : program_(&program) {
  roles_.resize(program.roles.size());
  for (size_t r = 0; r < program.roles.size(); ++r) {
    Flatten(program.roles[r].body, roles_[r]);
    roles_[r].push_back(nullptr);  // the implicit exit
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
