// parity capture [-o FILE] [--max-launches N] -- PROGRAM ARGS...
//
// Runs a CUDA program unchanged, with libparity_capture.so (tools/capture/capture_shim.cc) in
// LD_PRELOAD, and leaves the launch file it writes (docs/launch-file.md) at FILE (default
// parity-launches.json): every kernel launch with its name, dimensions, parameter bytes and the
// tensor maps in them. The program's exit status is this command's (128 + N when signal N ended
// it); a program that cannot be started, or no capture library, is exit 2.
//
// The library is found at $PARITY_CAPTURE_SHIM, else in `parity`'s Bazel runfiles
// (tools/capture/libparity_capture.so), else next to `parity` (an installed copy) or in
// bazel-bin/tools/capture/. `parity` does not depend on it (it needs CUDA's headers, and every
// other command builds without them): tools/parity builds it for `parity capture`.
#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <array>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "sim/common/read_file.h"
#include "tools/cli/command.h"

extern char** environ;

namespace parity::cli {
namespace {

constexpr const char kShimName[] = "libparity_capture.so";

struct CaptureOptions {
  std::string out = "parity-launches.json";
  std::string max_launches;
  std::vector<std::string> command;
};

std::string CaptureSelfPath() {
  std::array<char, 4096> buf{};
  const ssize_t n = readlink("/proc/self/exe", buf.data(), buf.size() - 1);
  return n > 0 ? std::string(buf.data(), static_cast<size_t>(n)) : std::string();
}

std::string CaptureDir(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? "." : path.substr(0, slash);
}

bool IsRegularFile(const std::string& path) {
  struct stat st {};
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

std::vector<std::string> ShimCandidates() {
  std::vector<std::string> out;
  if (const char* p = std::getenv("PARITY_CAPTURE_SHIM"); p != nullptr && *p != '\0') {
    out.push_back(p);
    return out;  // an explicit choice is the only one
  }
  for (const char* var : {"RUNFILES_DIR", "TEST_SRCDIR"}) {
    const char* dir = std::getenv(var);
    if (dir != nullptr && *dir != '\0') {
      out.push_back(std::string(dir) + "/parity/tools/capture/" + kShimName);
    }
  }
  const std::string self = CaptureSelfPath();
  if (!self.empty()) {
    out.push_back(self + ".runfiles/parity/tools/capture/" + kShimName);  // bazel build / run
    out.push_back(CaptureDir(self) + "/" + kShimName);                    // installed side by side
    out.push_back(CaptureDir(self) + "/../capture/" + kShimName);         // bazel-bin/tools/cli
  }
  return out;
}

// An absolute path (LD_PRELOAD and PARITY_CAPTURE_OUT are read in the program's own directory).
std::string Absolute(const std::string& path) {
  if (!path.empty() && path[0] == '/') return path;
  std::array<char, 4096> buf{};
  if (getcwd(buf.data(), buf.size()) == nullptr) return path;
  return std::string(buf.data()) + "/" + path;
}

// Whether `path` is the real library, not the stand-in built without CUDA's headers
// (tools/capture/no_cuda_shim.cc): the real one defines the launch wrappers.
bool IsRealShim(const std::string& path) {
  Expected<std::string> bytes =
      ReadInputFile(path, "capture library", "capture.io", kMaxTraceFileBytes);
  return bytes.ok() && bytes->find("cuLaunchKernelEx_ptsz") != std::string::npos;
}

}  // namespace

void AddCaptureCommand(CLI::App& app, Context& ctx) {
  auto opts = std::make_shared<CaptureOptions>();
  CLI::App* sub = app.add_subcommand(
      "capture",
      "run a CUDA program unchanged and record its kernel launches (grid, block, cluster, "
      "parameter bytes, tensor maps) into a launch file for `parity import --launch`");
  sub->add_option("-o", opts->out, "the launch file to write (default parity-launches.json)");
  sub->add_option("--max-launches", opts->max_launches,
                  "launches recorded in full (default 256); later ones are only counted");
  sub->add_option("command", opts->command, "-- PROGRAM ARGS...: the program to run")
      ->required();
  sub->callback([opts, &ctx] {
    std::string shim;
    for (const std::string& c : ShimCandidates()) {
      if (IsRegularFile(c)) {
        shim = c;
        break;
      }
    }
    if (shim.empty()) {
      return ReportBadInput(ctx, Status("capture.no-shim",
                                        std::string("cannot find ") + kShimName +
                                            " (set PARITY_CAPTURE_SHIM to its path)"));
    }
    if (!IsRealShim(shim)) {
      return ReportBadInput(
          ctx, Status("capture.no-shim", shim +
                                             " was built without CUDA's headers (cuda.h) and "
                                             "records nothing; rebuild where CUDA is installed"));
    }
    if (!opts->max_launches.empty() &&
        opts->max_launches.find_first_not_of("0123456789") != std::string::npos) {
      return ReportBadInput(ctx, Status("capture.bad-option",
                                        "--max-launches '" + opts->max_launches +
                                            "' is not a count"));
    }
    const std::string out = Absolute(opts->out);
    std::remove(out.c_str());  // what is there afterwards is this run's

    std::vector<std::string> env;
    std::string preload = Absolute(shim);
    for (char** e = environ; *e != nullptr; ++e) {
      const std::string var = *e;
      if (var.rfind("LD_PRELOAD=", 0) == 0) {
        if (var.size() > 11) preload += ":" + var.substr(11);
      } else if (var.rfind("PARITY_CAPTURE_OUT=", 0) != 0 &&
                 var.rfind("PARITY_CAPTURE_MAX=", 0) != 0) {
        env.push_back(var);
      }
    }
    env.push_back("LD_PRELOAD=" + preload);
    env.push_back("PARITY_CAPTURE_OUT=" + out);
    if (!opts->max_launches.empty()) env.push_back("PARITY_CAPTURE_MAX=" + opts->max_launches);
    std::vector<char*> envp;
    for (std::string& e : env) envp.push_back(e.data());
    envp.push_back(nullptr);
    std::vector<std::string> args = opts->command;
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);

    std::fflush(stdout);
    std::fflush(stderr);
    pid_t pid = 0;
    const int rc = posix_spawnp(&pid, argv[0], nullptr, nullptr, argv.data(), envp.data());
    if (rc != 0) {
      return ReportBadInput(ctx, Status("capture.no-program", "cannot run '" + args[0] +
                                                                  "': " + std::strerror(rc)));
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    const int code = WIFEXITED(status) ? WEXITSTATUS(status)
                     : WIFSIGNALED(status) ? 128 + WTERMSIG(status)
                                           : 1;

    // A program that launched nothing leaves no file: write the empty record, so that a launch
    // file always says what ran.
    if (!IsRegularFile(out)) {
      nlohmann::json doc = {{"schema", "parity-launches"}, {"version", 1},
                            {"program", opts->command}, {"launches_seen", 0},
                            {"launches", nlohmann::json::array()}};
      std::ofstream f(out);
      f << doc.dump(2) << "\n";
    }
    // Unreadable reads as no launches (the document below says so).
    Expected<std::string> text = ReadInputFile(out, "launch", "capture.io", kMaxTraceFileBytes);
    const nlohmann::json doc =
        nlohmann::json::parse(text.ok() ? *text : std::string(), nullptr, false);
    size_t recorded = 0, maps = 0;
    std::set<std::string> kernels;
    uint64_t seen = 0;
    if (doc.is_object() && doc.contains("launches") && doc["launches"].is_array()) {
      recorded = doc["launches"].size();
      seen = doc.value("launches_seen", uint64_t{0});
      for (const auto& l : doc["launches"]) {
        kernels.insert(l.value("kernel", ""));
        if (l.contains("tensor_maps") && l["tensor_maps"].is_array()) {
          maps += l["tensor_maps"].size();
        }
      }
    }
    std::fprintf(stderr,
                 "parity capture: %zu launches of %zu kernels recorded (%llu seen), %zu tensor "
                 "maps identified, into %s; the program exited %d\n",
                 recorded, kernels.size(), static_cast<unsigned long long>(seen), maps,
                 out.c_str(), code);
    ctx.exit_code = code;
  });
}

}  // namespace parity::cli
