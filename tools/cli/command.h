// The `parity` command line: shared pieces of its subcommands.
#ifndef PARITY_TOOLS_CLI_COMMAND_H_
#define PARITY_TOOLS_CLI_COMMAND_H_

#include <CLI/CLI.hpp>
#include <string>

#include "sim/common/status.h"

namespace parity::cli {

// The exit-code contract of every subcommand (README, "Exit codes").
enum ExitCode : int {
  kExitClean = 0,      // ran, nothing wrong found
  kExitViolations = 1, // ran, protocol violations or a deadlock found in the user's schedule
  kExitBadInput = 2,   // bad input or usage: malformed file, illegal parameters, unknown option
  kExitInternal = 3,   // a bug in Parity
  // Stopped before a verdict, nothing found in the part covered, NOT clean or verified: a bound
  // of explore (--max-states, --time-limit, --max-memory) or, for any command, the memory the
  // process may allocate ran out (std::bad_alloc).
  kExitIncomplete = 4,
};

// Set by a subcommand's callback; returned by main.
struct Context {
  int exit_code = kExitClean;
  // The subcommand ("check") and the --format it was asked for ("text", "json", "sarif"): a bad
  // input is reported in that format too.
  std::string command;
  std::string format = "text";
};

// Prints an input error (file:line:col: error[rule]: message) on stderr, and as a document on
// stdout when ctx.format is json or sarif, and records exit code 2.
void ReportBadInput(Context& ctx, const Status& status);

// The process ran out of memory (std::bad_alloc): prints what stopped and what to do on stderr
// (and as a document on stdout when ctx.format is json or sarif), and records exit code 4.
void ReportOutOfMemory(Context& ctx);

// Each subcommand adds itself to the app; its callback sets ctx.exit_code.
void AddVersionCommand(CLI::App& app, Context& ctx);
void AddCheckCommand(CLI::App& app, Context& ctx);
void AddRunCommand(CLI::App& app, Context& ctx);
void AddExplainCommand(CLI::App& app, Context& ctx);
void AddRulesCommand(CLI::App& app, Context& ctx);
void AddTmaLayoutCommand(CLI::App& app, Context& ctx);
// parity explore (explore_command.cc): exit 4 = a bound stopped the search, nothing found.
void AddExploreCommand(CLI::App& app, Context& ctx);
void AddCountsCommand(CLI::App& app, Context& ctx);
// trace_commands.cc: parity replay, parity compare, parity trace export.
void AddReplayCommand(CLI::App& app, Context& ctx);
void AddCompareCommand(CLI::App& app, Context& ctx);
void AddTraceCommand(CLI::App& app, Context& ctx);
// parity litmus (litmus_command.cc): the litmus suite, model vs H100 histograms.
void AddLitmusCommand(CLI::App& app, Context& ctx);
// parity gpu run (gpu_command.cc): forwards to the //gpu:parity_gpu runner.
void AddGpuCommand(CLI::App& app, Context& ctx);
// parity import (import_command.cc): a kernel's PTX to a .pipe schedule.
void AddImportCommand(CLI::App& app, Context& ctx);
// `parity capture -- PROGRAM ARGS...` (capture_command.cc).
void AddCaptureCommand(CLI::App& app, Context& ctx);

}  // namespace parity::cli

#endif  // PARITY_TOOLS_CLI_COMMAND_H_
