// Maps an agent's instruction index (TraceEvent::pc) to the statement of its role's program:
// the statement behind a trace event, for reports that name a source line (the protocol rules,
// the deadlock diagnosis).
#ifndef PARITY_VERIFIER_PC_MAP_H_
#define PARITY_VERIFIER_PC_MAP_H_

#include <cstdint>
#include <vector>

#include "sim/common/status.h"
#include "sim/ir/ir.h"

namespace parity::verifier {

// Maps an instruction index of a role (TraceEvent::pc) to its statement: the engine's own
// compilation of the role (sim/engine/control.h CompileRole), each instruction's statement.
// nullptr = the implicit exit.
class PcMap {
 public:
  explicit PcMap(const ir::Program& program);
  const ir::Stmt* stmt(uint32_t role, uint32_t pc) const;
  const ir::Op* op(uint32_t role, uint32_t pc) const;
  // The statement's location (the role's for the implicit exit; file only when out of range).
  SourceLocation where(uint32_t role, uint32_t pc) const;

 private:
  const ir::Program* program_;
  std::vector<std::vector<const ir::Stmt*>> roles_;
};

}  // namespace parity::verifier

#endif  // PARITY_VERIFIER_PC_MAP_H_
