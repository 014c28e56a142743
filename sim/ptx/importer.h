// `parity import`: a kernel's PTX to a `.pipe` schedule (issue 28).
//
// Every thread of every CTA of one cluster runs the entry's control skeleton concretely
// (sim/ptx/thread_exec.h). A warp's lanes are merged into one agent: every lane's protocol
// operations must be a subsequence of the warp's leading lane's (the lane issuing the most), and
// an arrive issued by several lanes becomes one arrive with the lanes' count. Warps with the same
// merged operations form a role (`count` = how many). Barriers come from the mbarrier.init
// addresses, buffers from the TMA destinations, shared reads of a buffer slot become `use` and
// shared writes `write`; tensor maps are described by the caller (their contents are not in the
// PTX). Repeated per-iteration operation sequences are re-rolled into `for` loops whose every
// operand is reproduced exactly for the given arguments; the emitted schedule therefore issues
// exactly the operations the kernel issues for those arguments.
//
// Errors are Statuses under `import.`: PTX the importer cannot follow or model names the PTX
// file:line and the instruction.
#ifndef PARITY_SIM_PTX_IMPORTER_H_
#define PARITY_SIM_PTX_IMPORTER_H_

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "sim/common/status.h"
#include "sim/ptx/ptx.h"

namespace parity::ptx {

// `--tensormap INDEX=DTYPE:DIMS:BOX[:SWIZZLE]`, e.g. `0=u16:64x384:64x64:128B`.
struct TensorMapArg {
  int index = 0;
  std::string dtype;
  std::vector<int64_t> dims;  // elements, innermost first
  std::vector<int64_t> box;
  std::string swizzle = "none";
};

// `import.bad-option` when malformed.
Expected<TensorMapArg> ParseTensorMapArg(std::string_view spec);

// The bytes of one element of a --tensormap DTYPE (u16: 2); 0 for an unknown one.
int64_t TensorMapDtypeBytes(const std::string& dtype);

struct ImportOptions {
  std::string entry;
  std::array<uint32_t, 3> block = {1, 1, 1};
  uint32_t cluster_x = 1;
  uint32_t cluster_y = 1;
  int64_t clusters = 1;
  std::map<int, uint64_t> args;  // scalar kernel arguments by parameter index
  std::vector<TensorMapArg> tensor_maps;
};

// The `.pipe` text of `options.entry` in `module`.
Expected<std::string> ImportSchedule(const Module& module, const ImportOptions& options);

}  // namespace parity::ptx

#endif  // PARITY_SIM_PTX_IMPORTER_H_
