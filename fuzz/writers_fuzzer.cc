// libFuzzer target: the JSON writers. The input is a binary trace whose header strings (schedule,
// device, policy, param names) and events are arbitrary bytes: its Perfetto export must be
// written, whatever the bytes, and parse back as JSON; and JsonText must serialise any string
// (the input itself as a name) without throwing.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "sim/common/json_text.h"
#include "sim/trace/perfetto.h"
#include "sim/trace/trace_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace parity;
  const std::string raw(reinterpret_cast<const char*>(data), size);
  nlohmann::json j;
  j["file"] = raw;
  j["params"][raw] = 1;
  const std::string text = JsonText(j, 2);
  if (!nlohmann::json::accept(text)) std::abort();
  Expected<trace::TraceFile> trace = trace::DecodeTraceFile(raw, "fuzz.trace");
  if (!trace.ok()) return 0;
  const std::string perfetto = trace::ExportPerfettoJson(*trace);
  if (!nlohmann::json::accept(perfetto)) std::abort();
  return 0;
}
