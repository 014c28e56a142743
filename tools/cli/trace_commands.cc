// `parity replay`, `parity compare` and `parity trace export`: work on recorded traces (from
// `parity run --trace` or the H100 executor).
#include <cstdio>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "sim/trace/perfetto.h"
#include "sim/trace/trace_file.h"
#include "tools/cli/command.h"
#include "tools/cli/schedule_loader.h"
#include "verifier/compare.h"
#include "verifier/replay.h"

namespace parity::cli {

void AddReplayCommand(CLI::App& app, Context& ctx) {
  struct Options {
    ScheduleOptions schedule;
    std::string trace;
  };
  auto opt = std::make_shared<Options>();
  CLI::App* sub = app.add_subcommand(
      "replay",
      "drive the model with a trace's order of events; exit 0 if every event is legal when it "
      "happened, 1 at the first divergence (reported), 2 on bad input or a schedule hash mismatch");
  sub->add_option("file", opt->schedule.file, "the schedule (.pipe) the trace was recorded from")
      ->required();
  sub->add_option("trace", opt->trace, "the trace file")->required();
  sub->add_option("-D,--define", opt->schedule.defines,
                  "a param value (must agree with the value the trace header records)");
  sub->callback([&ctx, opt] {
    Expected<trace::TraceFile> trace = trace::ReadTraceFile(opt->trace);
    if (!trace.ok()) return ReportBadInput(ctx, trace.status());
    Expected<LoadedSchedule> loaded = LoadSchedule(opt->schedule);
    if (!loaded.ok()) return ReportBadInput(ctx, loaded.status());
    const ir::Program& program = *loaded->program;
    Expected<std::vector<int64_t>> params = verifier::BindTraceParams(program, trace->header);
    if (!params.ok()) {
      return ReportBadInput(ctx, params.status().At(SourceLocation{opt->trace, 0, 0}));
    }
    if (!opt->schedule.defines.empty() && *params != loaded->params) {
      return ReportBadInput(
          ctx, Status("replay.params",
                      "the -D values differ from the params the trace was recorded with",
                      SourceLocation{opt->trace, 0, 0}));
    }
    Expected<verifier::ReplayResult> result =
        verifier::ReplayTrace(program, *params, *trace);
    if (!result.ok()) {
      return ReportBadInput(ctx, result.status().At(SourceLocation{opt->trace, 0, 0}));
    }
    std::printf("%s: replaying %s (%s, %s, %zu events)\n", opt->schedule.file.c_str(),
                opt->trace.c_str(), trace->header.source.c_str(), trace->header.policy.c_str(),
                trace->events.size());
    std::printf("%s", verifier::FormatReplayResult(*result, *trace).c_str());
    ctx.exit_code = result->diverged ? kExitViolations : kExitClean;
  });
}

void AddCompareCommand(CLI::App& app, Context& ctx) {
  struct Options {
    std::string a, b;
  };
  auto opt = std::make_shared<Options>();
  CLI::App* sub = app.add_subcommand(
      "compare",
      "compare two traces of one schedule (e.g. simulator vs H100): phase completions, program "
      "order, copies, wait timeouts; exit 0 same, 1 different, 2 different schedules");
  sub->add_option("trace_a", opt->a, "the first trace")->required();
  sub->add_option("trace_b", opt->b, "the second trace")->required();
  sub->callback([&ctx, opt] {
    Expected<trace::TraceFile> a = trace::ReadTraceFile(opt->a);
    if (!a.ok()) return ReportBadInput(ctx, a.status());
    Expected<trace::TraceFile> b = trace::ReadTraceFile(opt->b);
    if (!b.ok()) return ReportBadInput(ctx, b.status());
    Expected<verifier::CompareResult> r = verifier::CompareTraces(*a, *b);
    if (!r.ok()) return ReportBadInput(ctx, r.status().At(SourceLocation{opt->b, 0, 0}));
    std::printf("%s", verifier::FormatCompareResult(*r, *a, *b).c_str());
    ctx.exit_code = r->same() ? kExitClean : kExitViolations;
  });
}

void AddTraceCommand(CLI::App& app, Context& ctx) {
  struct Options {
    std::string perfetto;
    std::string trace;
  };
  auto opt = std::make_shared<Options>();
  CLI::App* sub = app.add_subcommand("trace", "work with trace files");
  sub->require_subcommand(1);
  CLI::App* exp = sub->add_subcommand(
      "export", "export a trace as Chrome/Perfetto trace-event JSON (ui.perfetto.dev)");
  exp->add_option("--perfetto", opt->perfetto, "the JSON file to write")->required();
  exp->add_option("trace", opt->trace, "the trace file")->required();
  exp->callback([&ctx, opt] {
    Expected<trace::TraceFile> t = trace::ReadTraceFile(opt->trace);
    if (!t.ok()) return ReportBadInput(ctx, t.status());
    std::ofstream out(opt->perfetto, std::ios::binary);
    out << trace::ExportPerfettoJson(*t);
    out.close();
    if (!out) {
      return ReportBadInput(ctx, Status("io", "cannot write the JSON file",
                                        SourceLocation{opt->perfetto, 0, 0}));
    }
    std::printf("%s: %zu events exported to %s\n", opt->trace.c_str(), t->events.size(),
                opt->perfetto.c_str());
    ctx.exit_code = kExitClean;
  });
}

}  // namespace parity::cli
