// parity gpu run FILE.pipe [-D N=V]... [--trace OUT] [--timeout-ms N] [--no-trace] [--ring N] [--interpret]
//
// Runs a schedule on the GPU. The GPU work is done by //gpu:parity_gpu, a self-contained CUDA
// binary (static cudart, no spdlog/fmt) so that it can also be copied alone to a GPU machine;
// `parity` itself never links CUDA. This command
//   1. parses the schedule and binds the -D overrides here, so bad input is reported in the
//      same form as every other command (file:line:col, rule; exit 2) even without a GPU;
//   2. finds parity_gpu: $PARITY_GPU if set, else the Bazel runfiles of `parity` (a data
//      dependency: <parity>.runfiles/parity/gpu/parity_gpu, or $RUNFILES_DIR / $TEST_SRCDIR),
//      else next to `parity` (an installed copy) or in bazel-bin/gpu/;
//   3. refuses the no-CUDA stub that `cuda_binary` builds when nvcc is absent (it is recognised
//      because, given no arguments, it exits 0 saying "skipped"; the real runner exits 2 with
//      its usage);
//   4. runs `parity_gpu run ...` with the arguments passed through and stdio inherited, and
//      returns its exit code: 0 completed with correct data, 1 hang observed or wrong data,
//      2 bad input (interpreter faults included) / unsupported op / CUDA error. When it fails
//      with 2 and this machine has no NVIDIA device node, a last line says that no GPU was
//      found.
// What is missing gets exit 2 and a message naming it (no runner, a stub runner, no GPU).
// A runner killed by a signal is exit 3.
#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <array>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "parity/parity.h"
#include "tools/cli/command.h"
#include "tools/cli/report_format.h"
#include "tools/cli/schedule_loader.h"

extern char** environ;

namespace parity::cli {
namespace {

struct GpuRunOptions {
  std::string file;
  std::vector<std::string> defines;
  std::string trace;
  std::string timeout_ms;
  bool no_trace = false;
  bool interpret = false;
  std::string ring;
  std::string format = "text";
};

bool IsExecutableFile(const std::string& path) {
  struct stat st {};
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && access(path.c_str(), X_OK) == 0;
}

std::string SelfPath() {
  std::array<char, 4096> buf{};
  const ssize_t n = readlink("/proc/self/exe", buf.data(), buf.size() - 1);
  return n > 0 ? std::string(buf.data(), static_cast<size_t>(n)) : std::string();
}

std::string DirName(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? "." : path.substr(0, slash);
}

// Where parity_gpu may be, in the order they are tried.
std::vector<std::string> RunnerCandidates() {
  std::vector<std::string> out;
  for (const char* var : {"RUNFILES_DIR", "TEST_SRCDIR"}) {
    const char* dir = std::getenv(var);
    if (dir != nullptr && *dir != '\0') out.push_back(std::string(dir) + "/parity/gpu/parity_gpu");
  }
  const std::string self = SelfPath();
  if (!self.empty()) {
    out.push_back(self + ".runfiles/parity/gpu/parity_gpu");  // bazel build / bazel run
    out.push_back(DirName(self) + "/parity_gpu");               // installed side by side
    out.push_back(DirName(self) + "/../../gpu/parity_gpu");     // bazel-bin/tools/cli -> bazel-bin/gpu
  }
  return out;
}

struct Spawned {
  int exit_code = -1;  // -1: could not start; else the exit status
  int signal = 0;      // killed by this signal
  std::string output;  // stdout + stderr when captured
};

// Runs `argv` (argv[0] = the program). With `capture`, collects stdout and stderr into output
// (small: used for the stub probe only); otherwise the child inherits our stdio.
Spawned Spawn(const std::vector<std::string>& args, bool capture) {
  Spawned result;
  std::vector<char*> argv;
  std::vector<std::string> copy = args;
  for (std::string& a : copy) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  int pipe_fds[2] = {-1, -1};
  if (capture) {
    if (pipe(pipe_fds) != 0) {
      posix_spawn_file_actions_destroy(&actions);
      return result;
    }
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], 1);
    posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], 2);
    posix_spawn_file_actions_addclose(&actions, pipe_fds[0]);
    posix_spawn_file_actions_addclose(&actions, pipe_fds[1]);
  } else {
    std::fflush(stdout);
    std::fflush(stderr);
  }
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (capture) {
    close(pipe_fds[1]);
    if (rc == 0) {
      std::array<char, 4096> buf{};
      ssize_t n;
      while ((n = read(pipe_fds[0], buf.data(), buf.size())) > 0) {
        if (result.output.size() < (1u << 22)) {
          result.output.append(buf.data(), static_cast<size_t>(n));
        }
      }
    }
    close(pipe_fds[0]);
  }
  if (rc != 0) return result;
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return result;
  }
  if (WIFEXITED(status)) {
    result.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    result.exit_code = 128 + WTERMSIG(status);
    result.signal = WTERMSIG(status);
  }
  return result;
}

// Is there an NVIDIA GPU (device node of the driver) on this machine? /dev/dxg: WSL2.
bool HaveNvidiaDevice() {
  for (const char* p : {"/dev/nvidiactl", "/dev/nvidia0", "/dev/dxg"}) {
    struct stat st {};
    if (stat(p, &st) == 0) return true;
  }
  return false;
}

// A runner that is missing or cannot run: the message on stderr (and as a JSON error document
// when JSON was asked for), exit 2.
void RunnerError(Context& ctx, const std::string& message) {
  std::fprintf(stderr, "parity gpu run: %s\n", message.c_str());
  if (ctx.format == "json") PrintDocument(ErrorJson(ctx.command, Status("gpu.runner", message)));
  ctx.exit_code = kExitBadInput;
}

// --format json: what the runner said, its exit code, and the trace it wrote (if any) in brief.
void PrintGpuRunJson(Context& ctx, const GpuRunOptions& opt, const api::Schedule& schedule,
                     const std::string& runner, const Spawned& run) {
  nlohmann::json j;
  j["schema"] = SchemaId("gpu-run");
  j["file"] = opt.file;
  j["schedule"] = schedule.name();
  j["params"] = nlohmann::json::object();
  for (const api::Schedule::Param& p : schedule.params()) j["params"][p.name] = p.value;
  j["runner"] = runner;
  j["exit_code"] = run.exit_code;
  j["outcome"] = run.exit_code == kExitClean        ? "completed"
                 : run.exit_code == kExitViolations ? "hang-or-wrong-data"
                                                    : "error";
  nlohmann::json lines = nlohmann::json::array();
  size_t from = 0;
  while (from < run.output.size()) {
    size_t nl = run.output.find('\n', from);
    if (nl == std::string::npos) nl = run.output.size();
    lines.push_back(run.output.substr(from, nl - from));
    from = nl + 1;
  }
  j["output"] = lines;
  j["trace"] = nullptr;
  if (!opt.trace.empty() && !opt.no_trace && run.exit_code != kExitBadInput) {
    api::Result<api::Trace> t = api::Trace::FromFile(opt.trace);
    if (t.ok()) {
      // The waits the GPU gave up on (a hang), by barrier and agent.
      nlohmann::json timeouts = nlohmann::json::array();
      for (const api::WaitTimeout& x : api::WaitTimeouts(schedule, *t)) {
        nlohmann::json w = {{"cluster", x.cluster}, {"cta", x.cta}, {"parity", x.parity}};
        w["barrier"] = x.barrier;
        if (!x.agent.empty()) w["agent"] = x.agent;
        timeouts.push_back(w);
      }
      j["trace"] = {{"file", opt.trace},
                    {"source", t->source()},
                    {"device", t->device()},
                    {"events", t->events()},
                    {"wait_timeouts", timeouts}};
    }
  }
  PrintDocument(j);
  ctx.exit_code = run.exit_code;
}

void RunGpu(Context& ctx, const GpuRunOptions& opt) {
  ctx.format = opt.format;
  ctx.command = "gpu-run";
  // 1. The schedule and the overrides, checked here first.
  ScheduleOptions sched;
  sched.file = opt.file;
  sched.defines = opt.defines;
  Expected<api::Schedule> schedule = LoadApiSchedule(sched);
  if (!schedule.ok()) {
    ReportBadInput(ctx, schedule.status());
    return;
  }
  if (api::Result<std::vector<api::Schedule::Param>> bound = schedule->BoundParams();
      !bound.ok()) {
    ReportBadInput(ctx, ToStatus(bound.error()));
    return;
  }

  // 2. The runner.
  std::string runner;
  const char* env = std::getenv("PARITY_GPU");
  if (env != nullptr && *env != '\0') {
    runner = env;
    if (!IsExecutableFile(runner)) {
      return RunnerError(ctx, "PARITY_GPU=" + runner +
                                  " is not an executable file; point it at a parity_gpu built "
                                  "with CUDA (bazel build //gpu:parity_gpu), or unset it");
    }
  } else {
    std::string looked;
    for (const std::string& c : RunnerCandidates()) {
      if (IsExecutableFile(c)) {
        runner = c;
        break;
      }
      looked += "\n  " + c;
    }
    if (runner.empty()) {
      return RunnerError(ctx, "the GPU runner parity_gpu was not found; looked in:" + looked +
                                  "\nBuild it with `bazel build //tools/cli:parity "
                                  "//gpu:parity_gpu` (tools/parity does this) on a machine with "
                                  "CUDA, or set PARITY_GPU=/path/to/parity_gpu");
    }
  }

  // 3. The no-CUDA stub says "skipped" and exits 0 whatever it is given.
  const Spawned probe = Spawn({runner}, /*capture=*/true);
  if (probe.exit_code < 0) return RunnerError(ctx, "cannot start the GPU runner " + runner);
  if (probe.exit_code == 0 || probe.output.find("skipped") != std::string::npos) {
    std::string said = probe.output;
    while (!said.empty() && (said.back() == '\n' || said.back() == '\r')) said.pop_back();
    return RunnerError(
        ctx, runner + " was built without CUDA (nvcc was not found when it was built), so it "
                      "cannot run schedules; it says: \"" + said + "\"\n"
                      "Install the CUDA toolkit (nvcc in $CUDA_PATH/bin or /usr/local/cuda/bin) "
                      "and rebuild, or set PARITY_GPU to a parity_gpu built with CUDA. The "
                      "simulator commands (check, explore, ...) need neither CUDA nor a GPU.");
  }

  // 4. Run it.
  std::vector<std::string> args = {runner, "run", opt.file};
  for (const std::string& d : opt.defines) {
    args.push_back("-D");
    args.push_back(d);
  }
  if (!opt.trace.empty()) {
    args.push_back("--trace");
    args.push_back(opt.trace);
  }
  if (!opt.timeout_ms.empty()) {
    args.push_back("--timeout-ms");
    args.push_back(opt.timeout_ms);
  }
  if (opt.no_trace) args.push_back("--no-trace");
  if (opt.interpret) args.push_back("--interpret");
  if (!opt.ring.empty()) {
    args.push_back("--ring");
    args.push_back(opt.ring);
  }
  // JSON: the runner's lines go into the document instead of through.
  const bool json = opt.format == "json";
  const Spawned run = Spawn(args, /*capture=*/json);
  if (run.exit_code < 0) return RunnerError(ctx, "cannot start the GPU runner " + runner);
  if (run.signal != 0) {
    std::fprintf(stderr, "parity gpu run: the GPU runner %s was killed by signal %d\n",
                 runner.c_str(), run.signal);
    ctx.exit_code = kExitInternal;
    return;
  }
  if (json) return PrintGpuRunJson(ctx, opt, *schedule, runner, run);
  if (run.exit_code == kExitBadInput && !HaveNvidiaDevice()) {
    std::fprintf(stderr,
                 "parity gpu run: no NVIDIA GPU was found on this machine (no /dev/nvidiactl or "
                 "/dev/nvidia0): parity gpu run needs a Hopper GPU (sm_90a, e.g. H100) and its "
                 "driver\n");
  }
  ctx.exit_code = run.exit_code;
}

// CLI11's PositiveNumber prints its range as 0 to DBL_MAX; this one says what is wanted.
CLI::Validator PositiveInteger() {
  return CLI::Validator(
      [](std::string& v) -> std::string {
        uint64_t n = 0;
        auto [ptr, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
        if (v.empty() || ec != std::errc() || ptr != v.data() + v.size() || n == 0) {
          return "'" + v + "' is not a positive integer (1 or more)";
        }
        return std::string();
      },
      "POSITIVE");
}

}  // namespace

void AddGpuCommand(CLI::App& app, Context& ctx) {
  CLI::App* gpu = app.add_subcommand(
      "gpu", "run schedules on an NVIDIA Hopper GPU (through the parity_gpu runner)");
  gpu->require_subcommand(1);
  auto opt = std::make_shared<GpuRunOptions>();
  CLI::App* run = gpu->add_subcommand(
      "run",
      "run a schedule on the GPU with the interpreter kernel and optionally write its trace.\n"
      "Exit codes: 0 completed with correct data, 1 hang observed or wrong data, 2 bad input, "
      "unsupported op, CUDA error, or no GPU runner / CUDA / GPU (named in the message).\n"
      "The runner is $PARITY_GPU, else //gpu:parity_gpu from the runfiles of parity, next to "
      "parity, or in bazel-bin/gpu/.");
  run->add_option("file", opt->file, "the schedule (.pipe)")->required()->check(CLI::ExistingFile);
  run->add_option("-D,--define", opt->defines, "override a param: -D STAGES=4 (repeatable)")
      ->take_all();
  AddFormatOption(run, opt->format, "gpu-run");
  run->add_option("--trace", opt->trace,
                  "write the GPU trace here (header: schedule hash, device, params)");
  run->add_option("--timeout-ms", opt->timeout_ms,
                  "budget of every bounded wait before the run is reported as a hang")
      ->check(PositiveInteger());
  run->add_flag("--no-trace", opt->no_trace, "run without recording trace events (for timing)");
  run->add_flag("--interpret", opt->interpret,
                "interpret every agent on the GPU (default: agents whose run is fixed before the "
                "launch execute op streams resolved on the host)");
  run->add_option("--ring", opt->ring, "trace records per agent (ring capacity)")
      ->check(PositiveInteger());
  run->callback([&ctx, opt] { RunGpu(ctx, *opt); });
}

}  // namespace parity::cli
