// Reading an input file (a schedule, a trace, a PTX module, a suppressions file), from the
// command line or the C++ API (parity/parity.h): one place that refuses
// what is not a file (a directory, a device such as /dev/zero) and bounds how much is read, so that
// a wrong path is a clear error instead of an empty read, a stream exception or unbounded memory.
#ifndef PARITY_SIM_COMMON_READ_FILE_H_
#define PARITY_SIM_COMMON_READ_FILE_H_

#include <cstdint>
#include <string>

#include "sim/common/status.h"

namespace parity {

// Largest schedule (.pipe) and trace file Parity reads.
inline constexpr uint64_t kMaxScheduleFileBytes = uint64_t{16} << 20;
inline constexpr uint64_t kMaxTraceFileBytes = uint64_t{1} << 30;
// A PTX module (`parity import`): a heavily templated kernel's module runs to tens of MiB.
inline constexpr uint64_t kMaxPtxFileBytes = uint64_t{256} << 20;
// A suppressions file (`--allow-file`) or a trace's sidecar (`TRACE.agents`): a few lines.
inline constexpr uint64_t kMaxSideFileBytes = uint64_t{16} << 20;

// The whole content of `path`, at most `max_bytes`. Regular files and pipes (FIFOs, process
// substitution) are read; directories and devices are refused. Errors carry `rule` and name the
// file and `what` it should have been ("schedule", "trace").
Expected<std::string> ReadInputFile(const std::string& path, const std::string& what,
                                    const std::string& rule, uint64_t max_bytes);

}  // namespace parity

#endif  // PARITY_SIM_COMMON_READ_FILE_H_
