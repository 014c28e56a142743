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
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sim/common/status.h"
#include "sim/ptx/ptx.h"

namespace parity::ptx {

// `--tensormap INDEX=DTYPE:DIMS:BOX[:SWIZZLE]`, e.g. `0=u16:64x384:64x64:128B` (a CUtensorMap
// parameter), or `--tensormap NAME+OFFSET=...` (a 128-byte CUtensorMap at byte OFFSET of a
// by-value struct parameter, `param_0+128=bf16:4096x4096:64x128:128B`).
struct TensorMapArg {
  int index = 0;       // -1 when given by name and offset
  std::string param;   // the parameter's PTX name (by name and offset)
  int64_t offset = 0;  // the byte offset in it
  std::string dtype;
  std::vector<int64_t> dims;  // elements, innermost first
  std::vector<int64_t> box;
  std::string swizzle = "none";
  // From a recorded launch (`--launch`): a fact of the launch, not an option, so one that no TMA
  // copy of the kernel uses is left out rather than refused.
  bool from_launch = false;
};

// `import.bad-option` when malformed.
Expected<TensorMapArg> ParseTensorMapArg(std::string_view spec);

// The schedule's name of the tensor map: tmap0, or tmap_param_0_128.
std::string TensorMapName(const TensorMapArg& t);

// `--param [NAME+]OFFSET=VALUE` (a field of a by-value struct parameter, or a byte OFFSET in the
// whole parameter space) and `--param NAME=VALUE` (NAME+0).
struct ParamArg {
  std::string spec;    // as given, for messages
  std::string param;   // "" when OFFSET is in the whole parameter space
  int64_t offset = 0;
  uint64_t value = 0;
};

// `import.bad-option` when malformed.
Expected<ParamArg> ParseParamArg(std::string_view spec);

// The bytes of one element of a --tensormap DTYPE (u16: 2); 0 for an unknown one.
int64_t TensorMapDtypeBytes(const std::string& dtype);

struct ImportOptions {
  std::string entry;
  std::array<uint32_t, 3> block = {1, 1, 1};
  uint32_t cluster_x = 1;
  uint32_t cluster_y = 1;
  int64_t clusters = 1;
  std::map<int, uint64_t> args;  // scalar kernel arguments by parameter index
  std::vector<ParamArg> params;
  std::vector<TensorMapArg> tensor_maps;
  // ld.shared / ldmatrix of a buffer become `use.generic` (a generic-proxy read, whose
  // write-after-read against the next TMA / bulk load of the bytes needs fence.proxy.async:
  // P2006, DeepEP #621, fixed upstream by a proxy fence) instead of `use` (no proxy stated, no
  // proxy rule). On by default, since without it such a kernel verifies although PTX leaves the
  // reuse unordered; `--no-generic-reads` is for replaying traces of kernels known to lack the
  // fence. wgmma operands are `use.async` always.
  bool generic_reads = true;
  // Each operation cites its whole inlined call chain, from the kernel's own frame inward
  // (`kernel.hpp:271 > mainloop.hpp:337 > sm90_pipeline.hpp:320 > barrier.h:138`), instead of
  // that frame alone: a protocol edit in a header every kernel inlines (CUTLASS's
  // PipelineTmaAsync) is then named by the finding, not only the kernel line that reaches it.
  bool source_chain = false;
  // Each warp runs an instruction once for all its lanes when the registers it reads hold the
  // same value in each (sim/ptx/warp_registers.h); off, every lane runs every instruction on its
  // own: the reference that tests/import:lockstep_test compares the schedules against.
  bool lockstep = true;
  // The launch's grid in CTAs (`--launch`): %nctaid and %nclusterid read it while the importer
  // runs only `clusters` clusters of it. {0, 0, 0}: the grid is the clusters that run.
  std::array<uint32_t, 3> grid = {0, 0, 0};
  // The launch's whole parameter space (`--launch`): what loads that no --arg / --param gives
  // read. Empty: none.
  std::vector<uint8_t> param_bytes;
  // The scalar parameters `args` holds because the launch passed them (not --arg): facts, so one
  // the kernel never reads is no error, and the header names the launch instead.
  std::set<int> launch_args;
  std::string launch;  // "launch N of FILE" for the schedule's header; "" without --launch
};

// nvcc names an entry's parameters `<mangled entry>_param_N`: a --param or --tensormap may name
// one by that suffix alone (`param_0+128`). Rewrites such names in `options` to the full name;
// a name that is neither a parameter nor such a suffix is left for ResolveParamOptions to refuse.
void ExpandParamNames(const Function& entry, ImportOptions* options);

// Checks --arg, --param and --tensormap against the entry's parameters and returns the fields
// they give, by (parameter name, byte offset in it). `import.bad-option` for an option that names
// no parameter or lies outside one.
Expected<std::map<std::pair<std::string, uint64_t>, uint64_t>> ResolveParamOptions(
    const Module& module, const Function& entry, const ImportOptions& options);

// `import.bad-option` for an --arg or --param that no load the kernel executed read (`reads`:
// ThreadContext::param_reads of every thread): an option is never silently ignored.
Status CheckParamsRead(const Function& entry, const ImportOptions& options,
                       const std::set<std::pair<std::string, uint64_t>>& reads);

// The `.pipe` text of `options.entry` in `module`.
Expected<std::string> ImportSchedule(const Module& module, const ImportOptions& options);

}  // namespace parity::ptx

#endif  // PARITY_SIM_PTX_IMPORTER_H_
