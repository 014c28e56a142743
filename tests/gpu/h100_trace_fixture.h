// What the tests of recorded H100 traces (tests/gpu/*_traces_test.cc, h100_new_ops_test.cc)
// share: a trace loaded with its schedule and the simulator's own run of it, and the checks that
// a recording holds against the model (a clean run, a complete replay, nothing `parity compare`
// finds against the simulator).
#ifndef PARITY_TESTS_GPU_H100_TRACE_FIXTURE_H_
#define PARITY_TESTS_GPU_H100_TRACE_FIXTURE_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "sim/engine/engine.h"
#include "sim/ir/ir.h"
#include "sim/trace/event.h"
#include "sim/trace/trace_file.h"

namespace parity::testing {

struct LoadedTrace {
  ir::Program program;
  std::vector<int64_t> params;  // bound from the trace's header
  trace::TraceFile h100;
  std::vector<trace::TraceEvent> sim_events;  // the simulator's run at those params
  engine::Outcome sim_outcome = engine::Outcome::kRunning;
  bool ok = false;  // everything above loaded
};

// Parses `pipe` and reads `dir`/`trace_name`.trace, expecting a source="h100" trace of the
// current schedule (same content hash) from a device whose name holds one of `devices` (none
// given: any device); binds the trace's params and runs the simulator at them. Failures are
// test failures; `ok` says whether everything loaded.
LoadedTrace LoadTrace(const std::string& pipe, const std::string& dir,
                      const std::string& trace_name, const std::vector<std::string>& devices);

// The events of `kind` with every bit of `flag` set.
size_t Count(const std::vector<trace::TraceEvent>& events, trace::EventKind kind,
             uint8_t flag = 0);

// No wait timed out, every `use` read pattern data (no kFlagDataBad), as many uses as the
// simulator, and the simulator completed.
void ExpectCleanRun(const LoadedTrace& l);

// The trace replays on the model without diverging, timing out or running past an abort, every
// record but the executor's end-of-run probes matched to a model event. Returns the number of
// unrecorded completions replay inferred.
size_t ExpectReplays(const LoadedTrace& l);

// The simulator's trace of the same schedule and the H100's agree on everything `parity compare`
// holds against each other (verifier/compare.h).
void ExpectSameAsSimulator(const LoadedTrace& l);

// All of the above, and as many writes and TMA issues as the simulator; `uses` says whether the
// schedule reads any buffer with `use`.
void ExpectMatchesTheModel(const LoadedTrace& l, bool uses = true);

}  // namespace parity::testing

#endif  // PARITY_TESTS_GPU_H100_TRACE_FIXTURE_H_
