// libFuzzer target: a binary trace through `parity replay` and `parity compare`: decode it, find
// the schedule it was recorded from (by its hash, among the bundled schedules named by
// $PARITY_FUZZ_SCHEDULES, a list of .pipe files or directories separated by ':'), bind the
// header's params, replay it on the model and format the report; compare it with itself.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "sim/ir/hash.h"
#include "sim/ir/parser.h"
#include "sim/trace/trace_file.h"
#include "verifier/compare.h"
#include "verifier/replay.h"

namespace {

std::map<uint64_t, std::unique_ptr<parity::ir::Program>>& Schedules() {
  static auto* schedules = new std::map<uint64_t, std::unique_ptr<parity::ir::Program>>();
  return *schedules;
}

void Load(const std::filesystem::path& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    for (const auto& entry : std::filesystem::recursive_directory_iterator(path, ec)) {
      if (entry.path().extension() == ".pipe") Load(entry.path());
    }
    return;
  }
  auto program = parity::ir::ParseFile(path.string());
  if (!program.ok()) return;
  const uint64_t hash = parity::ir::ContentHash(*program);
  Schedules()[hash] = std::make_unique<parity::ir::Program>(std::move(program).value());
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  const char* list = std::getenv("PARITY_FUZZ_SCHEDULES");
  std::string_view rest = list ? list : "";
  while (!rest.empty()) {
    const size_t colon = rest.find(':');
    Load(std::string(rest.substr(0, colon)));
    rest = colon == std::string_view::npos ? std::string_view() : rest.substr(colon + 1);
  }
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace parity;
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  Expected<trace::TraceFile> trace = trace::DecodeTraceFile(bytes, "fuzz.trace");
  if (!trace.ok()) return 0;
  (void)trace::DumpTrace(*trace);
  if (auto same = verifier::CompareTraces(*trace, *trace); same.ok()) {
    (void)verifier::FormatCompareResult(*same, *trace, *trace);
  }
  auto it = Schedules().find(trace->header.schedule_hash);
  if (it == Schedules().end()) return 0;
  const ir::Program& program = *it->second;
  Expected<std::vector<int64_t>> params = verifier::BindTraceParams(program, trace->header);
  if (!params.ok()) return 0;
  Expected<verifier::ReplayResult> result = verifier::ReplayTrace(program, *params, *trace);
  if (!result.ok()) return 0;
  (void)verifier::FormatReplayResult(*result, *trace);
  return 0;
}
