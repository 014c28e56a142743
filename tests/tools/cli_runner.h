// Runs the built `parity` binary in a test and captures what it printed and its exit code.
#ifndef PARITY_TESTS_TOOLS_CLI_RUNNER_H_
#define PARITY_TESTS_TOOLS_CLI_RUNNER_H_

#include <string>
#include <vector>

namespace parity::testing {

struct CliResult {
  int exit_code = -1;  // the process's exit status; 128+N if killed by signal N
  std::string out;     // stdout
  std::string err;     // stderr
};

// Path of a data file or binary of this workspace in the test's runfiles
// (e.g. "tools/cli/parity", "sim/examples/single_tma_load.pipe").
std::string Runfile(const std::string& workspace_relative_path);

// Runs `parity args...` with stdin closed; never throws.
CliResult RunParity(const std::vector<std::string>& args);

// Runs `binary args...` with stdin closed, in this process's environment, or in exactly `env`
// ("NAME=VALUE" entries) when given.
CliResult RunBinary(const std::string& binary, const std::vector<std::string>& args,
                    const std::vector<std::string>* env = nullptr);

}  // namespace parity::testing

#endif  // PARITY_TESTS_TOOLS_CLI_RUNNER_H_
