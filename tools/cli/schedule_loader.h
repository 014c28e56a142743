// Shared by the commands that run a schedule (check, run, explain, explore, trace, gpu): the
// schedule file and its -D overrides as the C++ API takes them.
#ifndef PARITY_TOOLS_CLI_SCHEDULE_LOADER_H_
#define PARITY_TOOLS_CLI_SCHEDULE_LOADER_H_

#include <CLI/CLI.hpp>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "parity/parity.h"
#include "sim/common/status.h"

namespace parity::cli {

// Options common to every command that runs a schedule.
struct ScheduleOptions {
  std::string file;
  std::vector<std::string> defines;  // -D NAME=VALUE
  std::string policy = "eager";
  uint64_t seed = 0;
};

// Adds FILE, -D, --policy and --seed to a subcommand.
void AddScheduleOptions(CLI::App* sub, ScheduleOptions& options);

// The schedule through the C++ API (parity/parity.h): the file parsed, the -D overrides set;
// errors name the file, line and rule.
Expected<api::Schedule> LoadApiSchedule(const ScheduleOptions& options);
// --policy: eager, lazy, round-robin (rr) or random.
Expected<api::Policy> ParseSchedulePolicy(const std::string& name);
Status ToStatus(const api::Error& error);

}  // namespace parity::cli

#endif  // PARITY_TOOLS_CLI_SCHEDULE_LOADER_H_
