// The `parity` command in one translation unit. Each subcommand keeps its own file, but they are
// compiled together: every one of them includes CLI11 (header-only, about 6 s to parse) and most
// of them JSON or spdlog, so that compiling them one by one took 12 x 15-23 s of CI's build
// (2 cores; 2026-11-26, bazel --profile) and together it takes about 30 s. The files share one
// namespace (parity::cli); their file-local helpers are in anonymous namespaces, so two files'
// helpers must not have the same name (the compiler says so if they do).
#include "tools/cli/capture_command.cc"
#include "tools/cli/counts_command.cc"
#include "tools/cli/diagnostics.cc"
#include "tools/cli/explore_command.cc"
#include "tools/cli/gpu_command.cc"
#include "tools/cli/import_command.cc"
#include "tools/cli/litmus_command.cc"
#include "tools/cli/main.cc"
#include "tools/cli/report_format.cc"
#include "tools/cli/rules_command.cc"
#include "tools/cli/run_commands.cc"
#include "tools/cli/schedule_loader.cc"
#include "tools/cli/tma_layout_command.cc"
#include "tools/cli/trace_commands.cc"
#include "tools/cli/version_command.cc"
