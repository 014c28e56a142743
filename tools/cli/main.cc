// `parity`: the simulator and verifier of Hopper mbarriers and asynchronous copies.
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <new>
#include <string>
#include <string_view>

#include "sim/common/check.h"
#include "parity/parity.h"
#include "tools/cli/command.h"
#include "tools/cli/report_format.h"

namespace parity::cli {

void ReportBadInput(Context& ctx, const Status& status) {
  std::fprintf(stderr, "parity: %s\n", status.ToString().c_str());
  if (ctx.format == "json") {
    PrintDocument(ErrorJson(ctx.command, status));
  } else if (ctx.format == "sarif") {
    PrintDocument(SarifLog(ctx.command, status.where().file, Diagnostics{}, {}, kExitBadInput, status));
  }
  ctx.exit_code = kExitBadInput;
}

void ReportOutOfMemory(Context& ctx) {
  // Memory is a bound like explore's: the command stopped before its verdict, which is neither
  // clean nor a finding (exit 4, incomplete). The run's size is the user's to lower.
  const Status status(
      "limit.memory",
      "out of memory: the " + (ctx.command.empty() ? std::string("command") : ctx.command) +
          " stopped before its verdict (incomplete: nothing found in the part covered, NOT "
          "verified); give the process more memory (ulimit -v) or a smaller run (-D values, "
          "--max-events; explore: --max-memory stops cleanly)");
  std::fprintf(stderr, "parity: %s\n", status.ToString().c_str());
  if (ctx.format == "json") {
    PrintDocument(ErrorJson(ctx.command, status));
  } else if (ctx.format == "sarif") {
    PrintDocument(SarifLog(ctx.command, "", {}, {}, kExitIncomplete, status));
  }
  ctx.exit_code = kExitIncomplete;
}

namespace {

// The subcommand and --format of a command line, before CLI11 parses it: a usage error (an
// unknown option, a missing FILE) is then reported in the format that was asked for.
void PeekFormat(int argc, char** argv, Context& ctx) {
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    if (arg == "--format" && i + 1 < argc) {
      // The value is not the subcommand, even where --format comes before it.
      ctx.format = argv[++i];
      continue;
    }
    if (!arg.empty() && arg[0] != '-') {
      if (ctx.command.empty()) {
        ctx.command = std::string(arg);
      } else if (ctx.command == "gpu" && arg == "run") {
        ctx.command = "gpu-run";  // schema parity.gpu-run/1
      }
    }
    if (arg.substr(0, 9) == "--format=") {
      ctx.format = std::string(arg.substr(9));
    }
  }
  if (ctx.format != "json" && ctx.format != "sarif") ctx.format = "text";
}

[[noreturn]] void ExitInternal() { std::_Exit(kExitInternal); }

int Main(int argc, char** argv) {
  SetCheckFailureHandler(&ExitInternal);
  // The engine's self-checks of its incremental state are the tests' (api::SetSelfChecks);
  // PARITY_SELF_CHECKS=1 keeps them on (a build with assertions, as tools/parity builds).
  const char* self_checks = std::getenv("PARITY_SELF_CHECKS");
  api::SetSelfChecks(self_checks != nullptr && std::string_view(self_checks) == "1");
  Context ctx;
  PeekFormat(argc, argv, ctx);
  CLI::App app{
      "Parity: simulate and verify NVIDIA Hopper mbarriers, TMA and asynchronous copies.\n"
      "Exit codes: 0 clean, 1 protocol violations found, 2 bad input or usage, 3 internal error,\n"
      "4 incomplete (explore: a bound stopped the search; any command: out of memory)."};
  app.require_subcommand(1);
  int verbosity = 0;
  bool quiet = false;
  app.add_flag("-v,--verbose", verbosity, "more log output (repeat for more)");
  app.add_flag("-q,--quiet", quiet, "only errors in the log output");
  app.parse_complete_callback([&] {
    spdlog::set_pattern("parity: %l: %v");
    if (quiet) {
      spdlog::set_level(spdlog::level::err);
    } else if (verbosity >= 2) {
      spdlog::set_level(spdlog::level::trace);
    } else if (verbosity == 1) {
      spdlog::set_level(spdlog::level::debug);
    } else {
      spdlog::set_level(spdlog::level::warn);
    }
  });

  AddVersionCommand(app, ctx);
  AddCheckCommand(app, ctx);
  AddRunCommand(app, ctx);
  AddExplainCommand(app, ctx);
  AddRulesCommand(app, ctx);
  AddTmaLayoutCommand(app, ctx);
  AddExploreCommand(app, ctx);
  AddCountsCommand(app, ctx);
  AddReplayCommand(app, ctx);
  AddCompareCommand(app, ctx);
  AddTraceCommand(app, ctx);
  AddLitmusCommand(app, ctx);
  AddGpuCommand(app, ctx);
  AddImportCommand(app, ctx);
  AddCaptureCommand(app, ctx);

  // CLI11 reports an unknown subcommand only as "a subcommand is required"; name it instead.
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    if (arg.empty() || arg[0] == '-') continue;
    bool known = !app.get_subcommands([&](const CLI::App* s) { return s->check_name(argv[i]); })
                      .empty();
    if (!known) {
      ReportBadInput(ctx, Status("cli.usage", "unknown subcommand '" + std::string(argv[i]) +
                                                  "'; run 'parity --help' for the list"));
      return kExitBadInput;
    }
    break;
  }

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    if (ctx.format == "text") {
      app.exit(e);  // prints the message
      return kExitBadInput;
    }
    ReportBadInput(ctx, Status("cli.usage", e.what()));
    return kExitBadInput;
  } catch (const std::bad_alloc&) {
    ReportOutOfMemory(ctx);
    return kExitIncomplete;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "parity: internal error: %s\n", e.what());
    return kExitInternal;
  }
  return ctx.exit_code;
}

}  // namespace
}  // namespace parity::cli

int main(int argc, char** argv) { return parity::cli::Main(argc, argv); }
