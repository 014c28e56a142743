// Machine-readable reports of the `parity` command: the --format json documents (each an object
// whose "schema" is "parity.<command>/1") and the SARIF 2.1.0 log of check and explore, built
// from the C++ API's structured findings (parity/parity.h).
#ifndef PARITY_TOOLS_CLI_REPORT_FORMAT_H_
#define PARITY_TOOLS_CLI_REPORT_FORMAT_H_

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "parity/parity.h"
#include "sim/common/status.h"
#include "tools/cli/diagnostics.h"

namespace parity::cli {

// "parity.check/1".
std::string SchemaId(const std::string& command);

// {"file", "line", "column"}; null when nothing is known.
nlohmann::json LocationJson(const api::Location& where);
nlohmann::json LocationJson(const SourceLocation& where);
nlohmann::json FindingJson(const api::Finding& f);
nlohmann::json EventJson(const api::Event& e);
nlohmann::json StepJson(const api::Step& s);
nlohmann::json RuleJson(const api::Rule& r);

// The document of a bad input: {"schema", "error": {"rule", "message", "location"}}.
nlohmann::json ErrorJson(const std::string& command, const Status& status);

// A SARIF 2.1.0 log of one run of `parity <command>`: every rule of the table (with its
// citation) in tool.driver.rules, one result per diagnostic (tools/cli/diagnostics.h: findings
// of one rule on the same statements and object family, their number as occurrenceCount; a
// suppressed one with its `suppressions`; an allow that matched nothing as a warning
// notification; the summary's counts in the run's properties) (ruleId, ruleIndex, level, message, the
// culprit's location, relatedLocations of every agent involved), `steps` (explore's
// counterexample, check's behaviour) as a code flow of each result, and the invocation (exit
// code; a bad input as a notification with executionSuccessful false; `warning`, when not empty,
// as a warning notification of a run that succeeded, e.g. an incomplete search). `file`, the
// schedule checked, names the run's automationDetails.id ("parity/<command>/<file>/"): code
// scanning keeps one analysis per id and refuses an upload of several runs sharing one, which a
// directory of one log per schedule would otherwise be.
nlohmann::ordered_json SarifLog(const std::string& command, const std::string& file,
                                const Diagnostics& diagnostics,
                                const std::vector<api::Step>& steps, int exit_code,
                                const Status& error = Status(),
                                const std::string& warning = "");

// Adds --format text|json (json: schema parity.<command>/1) to a subcommand.
void AddFormatOption(CLI::App* sub, std::string& format, const std::string& command);

// Prints a document through the shared writer (sim/common/json_text.h).
void PrintDocument(const nlohmann::json& j);
void PrintDocument(const nlohmann::ordered_json& j);

}  // namespace parity::cli

#endif  // PARITY_TOOLS_CLI_REPORT_FORMAT_H_
