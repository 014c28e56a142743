// Launch files (docs/launch-file.md): the kernel launches `parity capture` recorded from a
// program on the GPU, and `parity import --launch FILE [--launch-index N]`, which takes one of
// them as the import's block, cluster, grid, parameter bytes and tensor maps.
//
// A launch that does not fit the kernel (no launch of the entry, another parameter size or
// layout, a tensor map the importer cannot describe) is bad input, `import.bad-launch`, naming
// what is missing: the importer never guesses a value the program passed.
#ifndef PARITY_SIM_PTX_LAUNCH_FILE_H_
#define PARITY_SIM_PTX_LAUNCH_FILE_H_

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "sim/common/status.h"
#include "sim/ptx/importer.h"
#include "sim/ptx/ptx.h"

namespace parity::ptx {

inline constexpr int kLaunchFileVersion = 1;

// The arguments of the cuTensorMapEncodeTiled / Im2col call that produced a CUtensorMap found in
// a launch's parameter bytes.
struct LaunchTensorMap {
  uint64_t offset = 0;     // in the launch's parameter space
  std::string api;         // cuTensorMapEncodeTiled or cuTensorMapEncodeIm2col
  std::string data_type;   // u8, u16, bf16, ... (the file's names, docs/launch-file.md)
  int rank = 0;
  std::vector<int64_t> global_dim;       // elements, innermost first
  std::vector<int64_t> box_dim;          // Tiled only
  std::vector<int64_t> element_strides;
  int interleave = 0;
  std::string swizzle;  // none, 32B, 64B, 128B, or a Blackwell-only atom mode
};

struct Launch {
  int index = 0;  // among all launches of the file
  std::string kernel;  // mangled
  std::string api;
  std::array<uint32_t, 3> grid = {1, 1, 1};
  std::array<uint32_t, 3> block = {1, 1, 1};
  std::array<uint32_t, 3> cluster = {1, 1, 1};
  uint64_t dynamic_smem = 0;
  bool has_bytes = false;
  std::vector<uint8_t> bytes;
  std::vector<std::pair<uint64_t, uint64_t>> layout;  // (offset, size) per parameter; may be empty
  std::vector<LaunchTensorMap> tensor_maps;
};

// Parses a launch file's text; `path` names it in messages. `import.bad-launch` when it is not a
// launch file of a version this build reads.
Expected<std::vector<Launch>> ParseLaunchFile(std::string_view text, const std::string& path);
Expected<std::vector<Launch>> ReadLaunchFile(const std::string& path);

// The `index`-th launch of `entry` (by its mangled name) in `launches`.
Expected<Launch> SelectLaunch(const std::vector<Launch>& launches, const Function& entry,
                              int index, const std::string& path);

// Fills `options` (block, cluster, grid, parameter bytes, tensor maps) from `launch`, after
// checking it against `entry`'s parameters. Options the user gave stay; one that contradicts the
// launch (another --block or --cluster) is `import.bad-launch`.
Status ApplyLaunch(const Function& entry, const Launch& launch, const std::string& path,
                   bool block_given, bool cluster_given, ImportOptions* options);

}  // namespace parity::ptx

#endif  // PARITY_SIM_PTX_LAUNCH_FILE_H_
