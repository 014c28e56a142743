// What the `parity` command line needs beyond the public API (parity/parity.h) to print its
// human-readable reports: the engine after a run (narration, deadlock diagnosis, DOT graph) and
// the explorer's statistics. Kernel projects use parity.h only; this header exposes Parity's
// internals and changes with them.
#ifndef PARITY_PARITY_DETAIL_H_
#define PARITY_PARITY_DETAIL_H_

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "parity/parity.h"
#include "sim/common/status.h"
#include "sim/engine/engine.h"
#include "sim/ir/ir.h"
#include "sim/trace/trace_file.h"
#include "verifier/deadlock.h"
#include "verifier/explore.h"
#include "verifier/rules.h"

namespace parity::api {

struct Schedule::Impl {
  std::string source;  // the file's text
  std::string file;
  std::shared_ptr<const ir::Program> program;  // shared by copies; engines point into it
  std::vector<std::pair<std::string, int64_t>> overrides;
};

struct Trace::Impl {
  std::string path;
  trace::TraceFile file;
};

struct CheckReport::Detail {
  std::shared_ptr<const ir::Program> program;
  std::string source;
  std::vector<int64_t> params;
  std::vector<std::pair<std::string, int64_t>> param_values;  // name = value, for reports
  engine::EngineOptions engine_options;
  std::shared_ptr<engine::Engine> engine;  // shared: the command line's report reads it too
  engine::RunResult result;
  std::vector<verifier::Finding> rule_findings;    // P2002..P2009 on the run's trace
  std::optional<verifier::DeadlockReport> deadlock;  // Outcome::kDeadlock
  // Outcome::kViolation: the one change a re-run proved fixes it (found = false: none).
  verifier::DeadlockCulprit violation_culprit;
};

struct ExploreReport::Detail {
  std::shared_ptr<const ir::Program> program;
  std::string source;
  std::vector<int64_t> params;
  std::vector<std::pair<std::string, int64_t>> param_values;
  verifier::ExploreOptions options;  // as run
  verifier::ExploreResult result;
  // The counterexample's one replay (nullptr when there is none): its trace and final state;
  // result.replayed.end itself.
  std::shared_ptr<const engine::Engine> end;
  std::optional<verifier::DeadlockReport> deadlock;
  verifier::DeadlockCulprit violation_culprit;  // as CheckReport::Detail's
};

// Check and Explore with the internal options in full (what the command line sets beyond the
// public options: event caps, memory bounds, ...). Check and Explore call these.
// (`check` gives everything but the policy, seed and event cap, which `options` gives.)
Result<CheckReport> CheckWith(const Schedule& schedule, const engine::EngineOptions& options,
                              const CheckOptions& check);
Result<ExploreReport> ExploreWith(const Schedule& schedule,
                                  const verifier::ExploreOptions& options);

// The program with the schedule's overrides bound; the Error names the file, line and rule.
Result<std::vector<int64_t>> BindScheduleParams(const Schedule& schedule);

Error ToError(const Status& status);
Location ToLocation(const SourceLocation& where);
Severity FromModel(model::Severity s);  // the rule table's severity as the API's

}  // namespace parity::api

#endif  // PARITY_PARITY_DETAIL_H_
