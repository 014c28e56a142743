// Shared by the commands that run a schedule (check, run, explain): read and parse a .pipe
// file, bind -D overrides, build the engine.
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
#include "sim/engine/engine.h"
#include "sim/ir/ir.h"

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

struct LoadedSchedule {
  std::string source;                       // the file's text
  std::shared_ptr<const ir::Program> program;  // stable address: the engine points into it
  std::vector<int64_t> params;
  std::vector<std::pair<std::string, int64_t>> param_values;  // name = value, for reports
  engine::EngineOptions engine_options;
};

// Reads, parses and binds; errors name the file, line and rule.
Expected<LoadedSchedule> LoadSchedule(const ScheduleOptions& options);

// The same through the C++ API (parity/parity.h): the file parsed, the -D overrides set.
Expected<api::Schedule> LoadApiSchedule(const ScheduleOptions& options);
// --policy: eager, lazy, round-robin (rr) or random.
Expected<api::Policy> ParseSchedulePolicy(const std::string& name);
Status ToStatus(const api::Error& error);

}  // namespace parity::cli

#endif  // PARITY_TOOLS_CLI_SCHEDULE_LOADER_H_
