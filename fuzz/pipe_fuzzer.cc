// libFuzzer target: a .pipe schedule through everything `parity check` does with it: parse, bind
// the params, build the engine, run it (bounded), check the protocol rules, and diagnose a
// deadlock; plus the printer, whose output must parse again. Bad input must come back as a
// Status; a crash, a sanitizer report or a failed PARITY_CHECK (abort) is a finding.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "sim/engine/engine.h"
#include "sim/ir/parser.h"
#include "sim/ir/printer.h"
#include "verifier/deadlock.h"
#include "verifier/rules.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace parity;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  Expected<ir::Program> program = ir::ParseProgram(text, "fuzz.pipe");
  if (!program.ok()) return 0;
  const std::string printed = ir::Print(*program);
  (void)ir::ParseProgram(printed, "printed.pipe");
  Expected<std::vector<int64_t>> params = ir::BindParams(*program, {});
  if (!params.ok()) return 0;
  engine::EngineOptions options;
  // Bounds like the command's --max-events, small enough for many executions a second.
  options.max_events = 20000;
  options.max_steps = 40000;
  Expected<engine::Engine> engine = engine::Engine::Create(*program, *params, options);
  if (!engine.ok()) return 0;
  const engine::RunResult result = engine->Run();
  if (result.outcome == engine::Outcome::kError ||
      result.outcome == engine::Outcome::kStepLimit) {
    return 0;
  }
  (void)verifier::CheckRules(*program, *engine, engine->trace());
  if (result.outcome == engine::Outcome::kDeadlock) {
    const verifier::DeadlockReport report = verifier::DiagnoseDeadlock(*program, *engine, result);
    (void)verifier::FormatDeadlockReport(report, *program, *engine, text);
    (void)verifier::WaitForGraphDot(report, *program, *engine);
  }
  return 0;
}
