#include "sim/trace/trace_file.h"

#include <cstring>
#include <fstream>
#include <iterator>
#include <sstream>

#include "sim/common/read_file.h"

namespace parity::trace {
namespace {

constexpr char kMagic[8] = {'P', 'A', 'R', 'I', 'T', 'Y', 'T', 'R'};
constexpr char kTrailerMagic[8] = {'P', 'A', 'R', 'I', 'T', 'Y', 'E', 'N'};
constexpr size_t kMaxString = 4096;
constexpr uint32_t kMaxParams = 4096;

template <typename T>
void Put(std::string& out, T v) {
  char buf[sizeof(T)];
  std::memcpy(buf, &v, sizeof(T));
  out.append(buf, sizeof(T));
}

void PutString(std::string& out, const std::string& s) {
  PARITY_CHECK(s.size() <= kMaxString, "trace header string longer than 4096 bytes");
  Put<uint16_t>(out, static_cast<uint16_t>(s.size()));
  out.append(s);
}

class Reader {
 public:
  Reader(std::string_view bytes, std::string_view file) : bytes_(bytes), file_(file) {}

  template <typename T>
  Status Get(T* v, const char* what) {
    if (bytes_.size() - pos_ < sizeof(T)) return Truncated(what);
    std::memcpy(v, bytes_.data() + pos_, sizeof(T));
    pos_ += sizeof(T);
    return Status::Ok();
  }

  Status GetString(std::string* s, const char* what) {
    uint16_t n = 0;
    PARITY_RETURN_IF_ERROR(Get(&n, what));
    if (n > kMaxString) {
      return Error("trace.header", std::string(what) + " length " + std::to_string(n) +
                                       " exceeds " + std::to_string(kMaxString));
    }
    if (bytes_.size() - pos_ < n) return Truncated(what);
    s->assign(bytes_.data() + pos_, n);
    pos_ += n;
    return Status::Ok();
  }

  Status Truncated(const std::string& what) const {
    return Error("trace.truncated", "file ends inside the header (" + what + ") at byte " +
                                        std::to_string(bytes_.size()));
  }
  Status Error(const std::string& rule, const std::string& message) const {
    return Status(rule, message, SourceLocation{std::string(file_), 0, 0});
  }

  size_t pos() const { return pos_; }
  size_t remaining() const { return bytes_.size() - pos_; }
  const char* here() const { return bytes_.data() + pos_; }
  void Skip(size_t n) { pos_ += n; }

 private:
  std::string_view bytes_;
  std::string_view file_;
  size_t pos_ = 0;
};

const char* const kKindNames[] = {
    nullptr,           "init",          "inval",          "arrive",
    "arrive.expect_tx", "expect_tx",    "complete_tx",    "wait.begin",
    "wait.end",        "test_wait",     "phase.complete", "tma.issue",
    "tma.deliver",     "tma.store.issue", "tma.store.read", "tma.store.write",
    "bulk.issue",      "bulk.commit",   "bulk.wait.begin", "bulk.wait.end",
    "cp.async.issue",  "cp.async.complete", "cp.async.commit", "cp.async.wait.begin",
    "cp.async.wait.end", "cp.async.arrive", "st.async",     "fence",
    "cluster.arrive",  "cluster.wait.begin", "cluster.wait.end", "bar.arrive",
    "bar.sync.begin",  "bar.sync.end",  "use",            "write",
    "exit",            "wait.timeout",  "violation",      "bulk.complete",
    "pending_count",   "readback",      "griddepcontrol.launch_dependents",
    "griddepcontrol.wait", "global.use", "global.write", "tensormap.replace",
};
static_assert(sizeof(kKindNames) / sizeof(kKindNames[0]) == kLastEventKind + 1);

}  // namespace

uint64_t Fnv1a64(const void* data, size_t size, uint64_t seed) {
  const auto* p = static_cast<const unsigned char*>(data);
  uint64_t h = seed;
  for (size_t i = 0; i < size; ++i) {
    h ^= p[i];
    h *= 0x100000001b3ull;
  }
  return h;
}

bool IsKnownEventKind(uint8_t kind) { return kind >= kFirstEventKind && kind <= kLastEventKind; }

std::string EventKindName(uint8_t kind) {
  if (!IsKnownEventKind(kind)) return "kind(" + std::to_string(kind) + ")";
  return kKindNames[kind];
}

std::string EncodeTraceFile(const TraceFile& trace) {
  std::string out;
  out.reserve(128 + trace.events.size() * sizeof(TraceEvent));
  out.append(kMagic, sizeof(kMagic));
  Put<uint32_t>(out, kTraceFileVersion);
  Put<uint32_t>(out, sizeof(TraceEvent));
  Put<uint64_t>(out, trace.header.schedule_hash);
  Put<uint64_t>(out, trace.events.size());
  PutString(out, trace.header.source);
  PutString(out, trace.header.device);
  PutString(out, trace.header.schedule);
  PutString(out, trace.header.policy);
  PARITY_CHECK(trace.header.params.size() <= kMaxParams, "too many params for a trace header");
  Put<uint32_t>(out, static_cast<uint32_t>(trace.header.params.size()));
  for (const auto& [name, value] : trace.header.params) {
    PutString(out, name);
    Put<int64_t>(out, value);
  }
  const size_t records_at = out.size();
  out.append(reinterpret_cast<const char*>(trace.events.data()),
             trace.events.size() * sizeof(TraceEvent));
  const uint64_t sum = Fnv1a64(out.data() + records_at, out.size() - records_at);
  out.append(kTrailerMagic, sizeof(kTrailerMagic));
  Put<uint64_t>(out, sum);
  return out;
}

Expected<TraceFile> DecodeTraceFile(std::string_view bytes, std::string_view file_name) {
  Reader r(bytes, file_name);
  TraceFile trace;
  if (bytes.size() < sizeof(kMagic) || std::memcmp(bytes.data(), kMagic, sizeof(kMagic)) != 0) {
    return r.Error("trace.magic", "not a Parity trace file (magic \"PARITYTR\" missing)");
  }
  r.Skip(sizeof(kMagic));
  uint32_t version = 0, record_size = 0;
  uint64_t count = 0;
  PARITY_RETURN_IF_ERROR(r.Get(&version, "version"));
  if (version != kTraceFileVersion) {
    return r.Error("trace.version", "trace file version " + std::to_string(version) +
                                        " is not the supported version " +
                                        std::to_string(kTraceFileVersion));
  }
  PARITY_RETURN_IF_ERROR(r.Get(&record_size, "record size"));
  if (record_size != sizeof(TraceEvent)) {
    return r.Error("trace.header", "record size " + std::to_string(record_size) + " is not " +
                                       std::to_string(sizeof(TraceEvent)));
  }
  PARITY_RETURN_IF_ERROR(r.Get(&trace.header.schedule_hash, "schedule hash"));
  PARITY_RETURN_IF_ERROR(r.Get(&count, "record count"));
  PARITY_RETURN_IF_ERROR(r.GetString(&trace.header.source, "source"));
  PARITY_RETURN_IF_ERROR(r.GetString(&trace.header.device, "device"));
  PARITY_RETURN_IF_ERROR(r.GetString(&trace.header.schedule, "schedule"));
  PARITY_RETURN_IF_ERROR(r.GetString(&trace.header.policy, "policy"));
  uint32_t nparams = 0;
  PARITY_RETURN_IF_ERROR(r.Get(&nparams, "param count"));
  if (nparams > kMaxParams) {
    return r.Error("trace.header", "param count " + std::to_string(nparams) + " exceeds " +
                                       std::to_string(kMaxParams));
  }
  for (uint32_t i = 0; i < nparams; ++i) {
    std::string name;
    int64_t value = 0;
    PARITY_RETURN_IF_ERROR(r.GetString(&name, "param name"));
    PARITY_RETURN_IF_ERROR(r.Get(&value, "param value"));
    trace.header.params.emplace_back(std::move(name), value);
  }
  // Records: the file must hold all of them plus the 16-byte trailer.
  const size_t available = r.remaining() / sizeof(TraceEvent);
  if (available < count || r.remaining() - count * sizeof(TraceEvent) < 16) {
    const uint64_t first_missing = available < count ? available : count;
    if (available < count) {
      return r.Error("trace.truncated",
                     "record " + std::to_string(first_missing) + " of " + std::to_string(count) +
                         " is incomplete: the file ends after " + std::to_string(available) +
                         " whole records");
    }
    return r.Error("trace.truncated", "the trailer after record " + std::to_string(count) +
                                          " is missing or incomplete");
  }
  const char* records = r.here();
  trace.events.resize(count);
  // No copy of zero records: an empty vector's data() may be null, which memcpy must not get.
  if (count > 0) std::memcpy(trace.events.data(), records, count * sizeof(TraceEvent));
  for (uint64_t i = 0; i < count; ++i) {
    if (!IsKnownEventKind(trace.events[i].kind)) {
      return r.Error("trace.bad-kind", "record " + std::to_string(i) + " has unknown event kind " +
                                           std::to_string(trace.events[i].kind));
    }
  }
  r.Skip(count * sizeof(TraceEvent));
  if (std::memcmp(r.here(), kTrailerMagic, sizeof(kTrailerMagic)) != 0) {
    return r.Error("trace.checksum", "trailer magic \"PARITYEN\" missing after record " +
                                         std::to_string(count));
  }
  r.Skip(sizeof(kTrailerMagic));
  uint64_t sum = 0;
  PARITY_RETURN_IF_ERROR(r.Get(&sum, "checksum"));
  const uint64_t actual = Fnv1a64(records, count * sizeof(TraceEvent));
  if (sum != actual) {
    return r.Error("trace.checksum", "record checksum mismatch: the records are corrupt");
  }
  if (r.remaining() != 0) {
    return r.Error("trace.trailing", std::to_string(r.remaining()) +
                                         " unexpected bytes after the trailer");
  }
  return trace;
}

Status WriteTraceFile(const std::string& path, const TraceFile& trace) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) return Status("trace.io", "cannot open for writing", SourceLocation{path, 0, 0});
  const std::string bytes = EncodeTraceFile(trace);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.close();
  if (!out) return Status("trace.io", "write failed", SourceLocation{path, 0, 0});
  return Status::Ok();
}

Expected<TraceFile> ReadTraceFile(const std::string& path) {
  Expected<std::string> bytes = ReadInputFile(path, "trace", "trace.io", kMaxTraceFileBytes);
  if (!bytes.ok()) return bytes.status();
  return DecodeTraceFile(*bytes, path);
}

std::string FormatEvent(const TraceEvent& e) {
  std::ostringstream s;
  s << "t=" << e.time << " c" << e.cluster << " cta" << unsigned{e.cta};
  if (e.agent == kNoAgent) {
    s << " async";
  } else {
    s << " a" << e.agent;
  }
  s << " pc" << e.pc << " " << EventKindName(e.kind);
  s << " obj=" << e.object << "[" << e.index << "]";
  if (e.target_cta != e.cta) s << "@cta" << unsigned{e.target_cta};
  s << " v=" << e.value << " v2=" << e.value2 << " phase=" << unsigned{e.phase}
    << " parity=" << unsigned{e.parity};
  if (e.flags & kFlagRemote) s << " remote";
  if (e.flags & kFlagMulticast) s << " multicast";
  return s.str();
}

std::string DumpTrace(const TraceFile& trace) {
  std::ostringstream s;
  s << "# source=" << trace.header.source << " device=\"" << trace.header.device
    << "\" schedule=" << trace.header.schedule << " policy=\"" << trace.header.policy
    << "\" hash=0x" << std::hex << trace.header.schedule_hash << std::dec << "\n";
  for (const auto& [name, value] : trace.header.params) s << "# param " << name << " = " << value << "\n";
  for (size_t i = 0; i < trace.events.size(); ++i) {
    s << i << ": " << FormatEvent(trace.events[i]) << "\n";
  }
  return s.str();
}

}  // namespace parity::trace
