// Known-bad schedules say what a correct tool reports on them in `# expect:` lines, read here by
// the tests (tests/pipelines, tests/verifier) and shown by `parity check`: the expectation lives
// in one place, next to the bug it describes.
//
//   # expect: CODE [at LINE] [explore] [policy=P] [seed=N] [every-policy] [-D NAME=VALUE]...
//   #         [object=NAME[INDEX]] [cta=N] [cause=CAUSE] [agent="LABEL"] [change="FIX"]
//   #         [culprit-at=LINE] [warnings=N]
//
// CODE is a rule code (`parity rules`): P2001 for a deadlock (its primary blocked wait:
// object=BARRIER[I], object=bar.sync[ID] or a named barrier's declared name, cta, cause as DeadlockCauseName; object=NAME
// without an index checks the name only; change: the suggested change of a culprit that a
// re-run proved, verifier/culprit.h, word for word, with `at LINE` or culprit-at=LINE its
// line; for a violation code, cause, change and culprit-at are those of the change a re-run
// proved fixes it, `at` stays the violating statement's line), P2002..P2009 for a
// protocol finding (object = its barrier or buffer), any other code for the run's violation or,
// if the run completes, its warnings (warnings=N: how many of that code). `at LINE`: the source
// line the report points to. `explore`: what `parity explore` finds (the first counterexample
// of the default search), otherwise what `parity check` finds under `policy` (default eager;
// every-policy: the same code under every policy, the details under `policy`). -D values bind
// params as on the command line. One file may have several expect lines (per policy, per mode).
#ifndef PARITY_VERIFIER_EXPECT_H_
#define PARITY_VERIFIER_EXPECT_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "sim/common/status.h"
#include "sim/engine/engine.h"
#include "sim/ir/ir.h"
#include "verifier/deadlock.h"
#include "verifier/rules.h"

namespace parity::verifier {

struct Expectation {
  std::string code;
  uint32_t line = 0;  // 0: not checked
  bool explore = false;
  engine::Policy policy = engine::Policy::kEager;
  uint64_t seed = 0;
  bool every_policy = false;
  std::vector<std::pair<std::string, int64_t>> defines;
  std::string object;  // "" not checked; "bar.sync" for a named barrier
  uint32_t index = 0;
  bool has_index = false;  // object=NAME[INDEX]; object=NAME checks the name only
  int64_t cta = -1;    // -1: not checked
  std::string cause;
  std::string agent;
  std::string change;  // "" not checked: DeadlockCulprit::change
  uint32_t culprit_line = 0;  // 0: not checked
  size_t warnings = 0;  // 0: not checked
  SourceLocation where;  // the expect line

  engine::EngineOptions Options() const;
  // "P2001 (deadlock) on empty[0] of CTA 0, cause count-too-high, policy eager".
  std::string Text() const;
};

// The `# expect:` lines of a schedule's text (`file` names it in errors). A malformed line is an
// error naming file:line:col with rule "expect.syntax".
Expected<std::vector<Expectation>> ReadExpectations(const std::string& file,
                                                    const std::string& text);
Expected<std::vector<Expectation>> ReadExpectationsFile(const std::string& path);

// What one `parity check` run found (the engine ran with x.Options()).
struct CheckRun {
  const ir::Program* program = nullptr;
  const engine::Engine* engine = nullptr;
  const engine::RunResult* result = nullptr;
  const std::vector<Finding>* findings = nullptr;
  const DeadlockReport* deadlock = nullptr;  // null unless the run deadlocked
  // A violation's culprit that a re-run proved (verifier/culprit.h FindCulpritOfViolation);
  // null or found = false: none.
  const DeadlockCulprit* violation_culprit = nullptr;
};

// "" when the run matches `x` (a check expectation), else what differs.
std::string MatchCheck(const Expectation& x, const CheckRun& run);

}  // namespace parity::verifier

#endif  // PARITY_VERIFIER_EXPECT_H_
