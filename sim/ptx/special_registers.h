// The special registers of PTX ISA 10 (%tid, %ntid, %ctaid, %cluster_ctarank, ...) that the
// importer's thread execution (thread_exec.cc) reads from a thread's context. A function's
// register names are classified once (Function::registers), so that a read by slot needs no
// name parsing.
#ifndef PARITY_SIM_PTX_SPECIAL_REGISTERS_H_
#define PARITY_SIM_PTX_SPECIAL_REGISTERS_H_

#include <cstdint>
#include <string>

namespace parity::ptx {

// What a register slot reads: a special register (PTX ISA 10: %tid, %ctaid, %cluster_ctarank,
// ...) is the thread's context; any other is the thread's own register file.
struct SpecialRegister {
  enum class Kind : uint8_t {
    kNone,
    kTid,
    kNtid,
    kCtaid,
    kNctaid,
    kClusterCtaid,
    kClusterNctaid,
    kClusterid,
    kNclusterid,
    kLaneid,
    kWarpid,
    kClusterCtarank,
    kClusterNctarank,
  };
  Kind kind = Kind::kNone;
  uint8_t dim = 0;  // x, y, z
};

// The special register `name` is, or kNone for an ordinary register.
SpecialRegister ClassifyRegister(const std::string& name);

}  // namespace parity::ptx

#endif  // PARITY_SIM_PTX_SPECIAL_REGISTERS_H_
