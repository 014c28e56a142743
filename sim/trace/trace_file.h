// Binary trace files: what the simulator and the H100 executor record, in one format (as
// herdtools7 uses one output format for simulation and hardware), so that the verifier can replay
// and compare them. Layout (little-endian, as on every host we run on):
//
//   magic        8 bytes  "PARITYTR"
//   version      u32      kTraceFileVersion
//   record_size  u32      sizeof(TraceEvent) = 32
//   schedule_hash u64     content hash of the schedule (sim/ir), so that traces of different
//                         schedules are never compared
//   record_count u64
//   source       str      "sim" or "h100"          (str = u16 length + bytes, at most 4096)
//   device       str      e.g. "NVIDIA H100 80GB HBM3", or "parity-engine"
//   schedule     str      schedule name
//   policy       str      how the run was scheduled ("eager", "random seed=3", "hardware")
//   params       u32 n, then n x (str name, i64 value): the bound parameter values
//   records      record_count x 32 bytes (TraceEvent)
//   trailer      8 bytes  "PARITYEN", u64 FNV-1a 64 of the record bytes
//
// The reader rejects a file that is truncated (naming the first incomplete record), has a bad
// magic/version/record size/string, an unknown event kind (naming the record), a checksum
// mismatch, or bytes after the trailer. Rules: trace.io, trace.magic, trace.version,
// trace.header, trace.truncated, trace.bad-kind, trace.checksum, trace.trailing.
#ifndef PARITY_SIM_TRACE_TRACE_FILE_H_
#define PARITY_SIM_TRACE_TRACE_FILE_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sim/common/status.h"
#include "sim/trace/event.h"

namespace parity::trace {

inline constexpr uint32_t kTraceFileVersion = 1;

struct TraceHeader {
  uint64_t schedule_hash = 0;
  std::string source = "sim";
  std::string device;
  std::string schedule;
  std::string policy;
  std::vector<std::pair<std::string, int64_t>> params;

  bool operator==(const TraceHeader&) const = default;
};

struct TraceFile {
  TraceHeader header;
  std::vector<TraceEvent> events;
};

// In-memory encoding/decoding (pure). `file_name` is only used in error locations.
std::string EncodeTraceFile(const TraceFile& trace);
Expected<TraceFile> DecodeTraceFile(std::string_view bytes, std::string_view file_name);

// The file forms (the only I/O of the library: a trace file is its product).
Status WriteTraceFile(const std::string& path, const TraceFile& trace);
Expected<TraceFile> ReadTraceFile(const std::string& path);

// "arrive", "tma.deliver", ...; "kind(N)" for an unknown number.
std::string EventKindName(uint8_t kind);
bool IsKnownEventKind(uint8_t kind);

// One line, e.g.
// "t=12 c0 cta1 a0 pc7 arrive full[2]@cta0 count=1 pending=0 phase=1 remote".
std::string FormatEvent(const TraceEvent& e);
// The header then one numbered line per event.
std::string DumpTrace(const TraceFile& trace);

// FNV-1a 64 of a byte range (the trailer checksum).
uint64_t Fnv1a64(const void* data, size_t size, uint64_t seed = 0xcbf29ce484222325ull);

}  // namespace parity::trace

#endif  // PARITY_SIM_TRACE_TRACE_FILE_H_
