#include "tests/tools/cli_runner.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

extern char** environ;

namespace parity::testing {
namespace {

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

std::string Runfile(const std::string& workspace_relative_path) {
  const char* srcdir = std::getenv("TEST_SRCDIR");
  const char* workspace = std::getenv("TEST_WORKSPACE");
  std::string base = srcdir ? srcdir : ".";
  base += "/";
  base += workspace ? workspace : "parity";
  return base + "/" + workspace_relative_path;
}

CliResult RunParity(const std::vector<std::string>& args) {
  return RunBinary(Runfile("tools/cli/parity"), args);
}

CliResult RunBinary(const std::string& binary, const std::vector<std::string>& args,
                    const std::vector<std::string>* env) {
  CliResult result;
  const char* tmp = std::getenv("TEST_TMPDIR");
  std::string dir = tmp ? tmp : "/tmp";
  static int counter = 0;
  std::string stem = dir + "/cli_" + std::to_string(getpid()) + "_" + std::to_string(counter++);
  std::string out_path = stem + ".out", err_path = stem + ".err";

  std::string program = binary;
  std::vector<char*> argv;
  argv.push_back(program.data());
  std::vector<std::string> copy = args;
  for (std::string& a : copy) argv.push_back(a.data());
  argv.push_back(nullptr);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                   0644);
  posix_spawn_file_actions_addopen(&actions, 2, err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                   0644);
  pid_t pid = 0;
  std::vector<std::string> env_copy;
  std::vector<char*> envp;
  if (env != nullptr) {
    env_copy = *env;
    for (std::string& e : env_copy) envp.push_back(e.data());
    envp.push_back(nullptr);
  }
  int rc = posix_spawn(&pid, program.c_str(), &actions, nullptr, argv.data(),
                       env != nullptr ? envp.data() : environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    result.err = "posix_spawn failed for " + binary;
    return result;
  }
  int status = 0;
  waitpid(pid, &status, 0);
  if (WIFEXITED(status)) {
    result.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    result.exit_code = 128 + WTERMSIG(status);
  }
  result.out = ReadAll(out_path);
  result.err = ReadAll(err_path);
  std::remove(out_path.c_str());
  std::remove(err_path.c_str());
  return result;
}

}  // namespace parity::testing
