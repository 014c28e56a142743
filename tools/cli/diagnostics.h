// How `parity check` and `parity explore` hand findings to a person or a CI job, like a compiler:
// findings of one rule on one statement (pair) and one object family are one diagnostic ("and
// 159 more like it: CTAs 0–3, full[0–3]"), at most --max-findings diagnostics are printed (--all:
// every one), a last line counts them by level ("2 errors, 0 warnings, 1 note"), and findings a
// user marked as intended are suppressed:
//
//   expect_tx full[s], BYTES   # parity: allow P2003, P2002 -- the epilogue pads the tile
//
// on the line of either statement a finding names (its operation or the other party's access),
// or in a --suppressions FILE of lines `CODE FILE:LINE [-- reason]`. Text, JSON and SARIF read the
// same Diagnostics, so that their counts agree.
#ifndef PARITY_TOOLS_CLI_DIAGNOSTICS_H_
#define PARITY_TOOLS_CLI_DIAGNOSTICS_H_

#include <CLI/CLI.hpp>
#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "parity/parity.h"
#include "sim/common/status.h"

namespace parity::cli {

// Blocked agents of a deadlock that check and explore describe in full by default (root causes
// first; --full: all of them), the others one line per wait statement and cause.
constexpr size_t kDetailedBlocked = 3;

// --max-findings, --all, --show-suppressed, --suppressions.
struct DiagnosticOptions {
  size_t max_findings = 10;
  bool all = false;
  bool show_suppressed = false;
  std::string suppressions_file;
};
void AddDiagnosticOptions(CLI::App* sub, DiagnosticOptions& options);

// One `allow`: from a comment of the schedule or a line of a --suppressions file.
struct Suppression {
  std::vector<std::string> codes;
  std::string file;     // the schedule the finding's statement is in
  int line = 0;         // that statement's line
  std::string reason;   // after "--"; "" when none was given
  api::Location origin; // where the allow itself is written
  bool used = false;
};

// The `# parity: allow CODE[, CODE] [-- reason]` comments of a schedule's text. A malformed one
// (no code, a code that is no rule) is bad input naming its line and column.
Expected<std::vector<Suppression>> ReadAllowComments(const std::string& file,
                                                     const std::string& source);
// The lines of a --suppressions file: `CODE[,CODE] FILE:LINE [-- reason]`; `#` starts a comment.
Expected<std::vector<Suppression>> ReadSuppressionsFile(const std::string& path);

// Findings of one rule, culprit line, other party's line and object family.
struct Diagnostic {
  std::vector<size_t> members;  // indices into the findings; the first is the one shown
  std::string more;             // "and 3 more like it: CTAs 1–3, full[0]" ("" when alone)
  bool suppressed = false;
  std::string reason;           // of the suppression
  api::Location allowed_at;     // where the allow is written
};

struct Diagnostics {
  std::vector<api::Finding> findings;  // as reported, in order
  std::vector<Diagnostic> shown;       // not suppressed, in the order of their first finding
  std::vector<Diagnostic> suppressed;
  std::vector<Suppression> unused;     // allows that matched no finding: warnings
  size_t errors = 0, warnings = 0, notes = 0;  // diagnostics (not findings) by level
  size_t suppressed_findings = 0;

  // "2 errors, 1 warning, 0 notes (3 suppressed)", or "0 errors" when there is nothing.
  std::string SummaryLine() const;
  // Whether an error remains after suppression.
  bool HasErrors() const { return errors > 0; }
  // {"errors", "warnings", "notes", "suppressed", "findings", "diagnostics"}.
  nlohmann::json SummaryJson() const;
  // Every diagnostic, suppressed ones marked (JSON "diagnostics").
  nlohmann::json DiagnosticsJson() const;
};

// Groups `findings` and applies the suppressions (marking those used).
Diagnostics Diagnose(std::vector<api::Finding> findings, std::vector<Suppression> suppressions);

// Loads the schedule's allow comments and the --suppressions file; false (and the error
// reported as bad input by the caller) when one is malformed.
Expected<std::vector<Suppression>> LoadSuppressions(const DiagnosticOptions& options,
                                                    const std::string& file,
                                                    const std::string& source);

// The text of one diagnostic: "P2007 title: message\n  by AGENT at LOC\n  and N more...\n",
// with "warning " or "note " in front of a finding that is not an error.
std::string DiagnosticText(const Diagnostics& d, const Diagnostic& g);

// Prints the diagnostics that are not suppressed (at most options.max_findings unless --all), a
// line for those left out, the suppressed ones with --show-suppressed and the unused allows;
// the caller prints d.SummaryLine() as its last line. `skip` is a finding already printed in full (check's violation or deadlock,
// explore's) whose diagnostic is counted but not printed again (SIZE_MAX: none).
void PrintDiagnostics(const Diagnostics& d, const DiagnosticOptions& options,
                      size_t skip = static_cast<size_t>(-1));

}  // namespace parity::cli

#endif  // PARITY_TOOLS_CLI_DIAGNOSTICS_H_
