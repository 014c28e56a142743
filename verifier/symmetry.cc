// Symmetry classes of agents for `parity explore` (symmetry.h).
#include "verifier/symmetry.h"

#include <algorithm>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace parity::verifier {

using engine::Engine;


// Whether a block (recursively) holds a `readback` (the engine then tracks write data per agent:
// content tags that name agents, which the symmetric fingerprint does not permute).
bool HasReadback(const ir::Block& block) {
  for (const ir::Stmt& st : block) {
    if (const auto* f = std::get_if<ir::For>(&st.node)) {
      if (HasReadback(f->body)) return true;
    } else if (const auto* i = std::get_if<ir::If>(&st.node)) {
      if (HasReadback(i->then_body) || HasReadback(i->else_body)) return true;
    } else if (const auto* op = std::get_if<ir::Op>(&st.node)) {
      if (std::holds_alternative<ir::GlobalReadback>(*op)) return true;
    }
  }
  return false;
}

// Symmetry classes (explore.h): the agents of one role in one CTA are interchangeable when the
// role never reads the `agent` builtin (the only per-agent input that differs between them).
// An expression reading `agent` is attributed to the role whose text contains it: the roles'
// source lines split the file (a role runs from its `role` line to the next role's); one that
// cannot be attributed (another file, no line, before the first role) disables symmetry.
// Returns one class id per agent (Engine::kNoGroup: alone) and a line for the report.
std::vector<uint32_t> SymmetryClasses(const ir::Program& p, const Engine& e, std::string* why) {
  const uint32_t n = static_cast<uint32_t>(e.num_agents());
  std::vector<uint32_t> cls(n, Engine::kNoGroup);
  const size_t nr = p.roles.size();
  std::vector<uint8_t> reads_agent(nr, 0);
  for (const ir::Role& r : p.roles) {
    if (HasReadback(r.body)) {
      *why = "symmetry reduction: not applied (the schedule has a readback: write data is "
             "tracked per agent)";
      return {};
    }
  }
  for (const ir::Expr& x : p.exprs) {
    if (x.kind != ir::Expr::Kind::kBuiltin || x.op != static_cast<uint8_t>(ir::Builtin::kAgent)) {
      continue;
    }
    size_t owner = nr;
    int owner_line = 0;
    for (size_t r = 0; r < nr; ++r) {
      const SourceLocation& w = p.roles[r].where;
      if (w.file == x.where.file && w.line > 0 && w.line <= x.where.line && w.line >= owner_line) {
        owner = r;
        owner_line = w.line;
      }
    }
    if (owner == nr || x.where.line <= 0) {
      *why = "symmetry reduction: not applied (an `agent` read outside any role's text)";
      return {};
    }
    reads_agent[owner] = 1;
  }
  // Class = (CTA, role) for roles that do not read `agent`, with at least two agents.
  std::vector<std::pair<uint64_t, uint32_t>> keys;
  for (uint32_t a = 0; a < n; ++a) {
    const engine::AgentInfo& info = e.agent_info(a);
    if (reads_agent[info.role]) continue;
    keys.emplace_back((uint64_t{info.cta_global} << 32) | info.role, a);
  }
  std::sort(keys.begin(), keys.end());
  uint32_t classes = 0, members = 0;
  std::string roles;
  for (size_t i = 0; i < keys.size();) {
    size_t j = i;
    while (j < keys.size() && keys[j].first == keys[i].first) ++j;
    if (j - i >= 2) {
      for (size_t k = i; k < j; ++k) cls[keys[k].second] = classes;
      ++classes;
      members += static_cast<uint32_t>(j - i);
      const std::string& name = p.roles[keys[i].first & 0xffffffffu].name;
      if (roles.find(name) == std::string::npos) roles += (roles.empty() ? "" : ", ") + name;
    }
    i = j;
  }
  if (classes == 0) {
    *why = "symmetry reduction: not applied (no two agents of one role in one CTA that do not "
           "read `agent`; interchangeable CTAs are not detected)";
    return {};
  }
  *why = "symmetry reduction: applied: " + std::to_string(classes) +
         " classes of interchangeable agents (same role, same CTA, the role does not read "
         "`agent`: " + roles + "; " + std::to_string(members) +
         " agents); interchangeable CTAs are not detected";
  return cls;
}

}  // namespace parity::verifier
