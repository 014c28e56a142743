// `parity replay`, `parity compare` and `parity trace export`: work on recorded traces (from
// `parity run --trace` or the H100 executor).
#include <cstdio>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "parity/parity.h"
#include "tools/cli/command.h"
#include "tools/cli/report_format.h"
#include "tools/cli/schedule_loader.h"

namespace parity::cli {
namespace {

nlohmann::json TraceJson(const api::Trace& t) {
  return {{"file", t.path()},          {"source", t.source()}, {"device", t.device()},
          {"schedule", t.schedule()},  {"policy", t.policy()}, {"events", t.events()}};
}
nlohmann::json ReplayJson(const api::Schedule& schedule, const api::Trace& trace,
                          const api::ReplayReport& r, const std::string& file, int exit_code) {
  nlohmann::json j = {{"schema", SchemaId("replay")},
                      {"file", file},
                      {"schedule", schedule.name()},
                      {"trace", TraceJson(trace)},
                      {"diverged", r.diverged},
                      {"exit_code", exit_code},
                      {"replayed", r.replayed},
                      {"skipped_model_events", r.skipped_model_events},
                      {"inferred_completions", r.inferred_completions},
                      {"timeouts", r.timeouts},
                      {"after_abort", r.after_abort},
                      {"probes", r.probes},
                      {"search_exhausted", r.search_exhausted},
                      {"eager_completions", r.eager_completions},
                      {"model_outcome", r.model_outcome}};
  j["unobserved_kinds"] = r.unobserved_kinds;
  if (r.diverged) {
    const api::ReplayReport::Divergence& d = r.divergence;
    j["divergence"] = {{"event_number", d.event_number},
                       {"kind", d.kind},
                       {"location", LocationJson(d.location)},
                       {"reason", d.reason},
                       {"expected", d.expected},
                       {"barrier_state", d.barrier_state},
                       {"enabled", d.enabled}};
  } else {
    j["divergence"] = nullptr;
  }
  return j;
}

struct ReplayOptions {
  ScheduleOptions schedule;
  std::string trace;
  std::string html;
  std::string format = "text";
};

nlohmann::json KernelReplayJson(const api::KernelReplayReport& r, const api::Trace& trace,
                                const std::string& file, int exit_code) {
  nlohmann::json j = {{"schema", SchemaId("replay")},
                      {"file", file},
                      {"trace", TraceJson(trace)},
                      {"diverged", r.diverged},
                      {"exit_code", exit_code},
                      {"records", r.records},
                      {"matched", r.matched},
                      {"barriers_bound", r.barriers_bound},
                      {"addresses_bound", r.addresses_bound},
                      {"replayed", r.replayed},
                      {"timeouts", r.timeouts},
                      {"model_outcome", r.model_outcome}};
  if (r.diverged) {
    const api::KernelReplayReport::Divergence& d = r.divergence;
    j["divergence"] = {{"record", d.record},
                       {"kind", d.kind},
                       {"kernel_did", d.kernel_did},
                       {"source_line", d.source_line},
                       {"reason", d.reason},
                       {"agent", d.agent},
                       {"schedule_op", d.schedule_op},
                       {"location", d.schedule_op.empty() ? nlohmann::json(nullptr)
                                                          : LocationJson(d.location)},
                       {"imported_from", d.imported_from},
                       {"found_by", d.found_by_order ? "order" : "match"}};
  } else {
    j["divergence"] = nullptr;
  }
  return j;
}

// A kernel's own trace (source "kernel"): matched with the imported schedule's operations and
// replayed (api::ReplayKernel).
void ReplayKernel(Context& ctx, const ReplayOptions& opt, const api::Trace& trace) {
  if (!opt.html.empty()) {
    ReportBadInput(ctx, Status("replay.kernel-trace",
                               "--html is not available for a kernel's own trace",
                               SourceLocation{opt.trace, 0, 0}));
    return;
  }
  Expected<api::Schedule> schedule = LoadApiSchedule(opt.schedule);
  if (!schedule.ok()) return ReportBadInput(ctx, schedule.status());
  api::Result<api::KernelReplayReport> r = api::ReplayKernel(*schedule, trace);
  if (!r.ok()) return ReportBadInput(ctx, ToStatus(r.error()));
  ctx.exit_code = r->diverged ? kExitViolations : kExitClean;
  if (opt.format == "json") {
    PrintDocument(KernelReplayJson(*r, trace, opt.schedule.file, ctx.exit_code));
    return;
  }
  std::printf("%s: replaying %s (kernel trace of %s on %s, %llu records)\n",
              opt.schedule.file.c_str(), opt.trace.c_str(), trace.schedule().c_str(),
              trace.device().c_str(), static_cast<unsigned long long>(trace.events()));
  std::printf("%s", api::FormatKernelReplay(*r).c_str());
}

}  // namespace

void AddReplayCommand(CLI::App& app, Context& ctx) {
  using Options = ReplayOptions;
  auto opt = std::make_shared<Options>();
  CLI::App* sub = app.add_subcommand(
      "replay",
      "drive the model with a trace's order of events; exit 0 if every event is legal when it "
      "happened, 1 at the first divergence (reported), 2 on bad input or a schedule hash mismatch");
  sub->add_option("file", opt->schedule.file,
                  "the schedule (.pipe) the trace was recorded from; for a kernel's own trace "
                  "(gpu/include/parity/trace.cuh), the schedule `parity import` made of the kernel")
      ->required();
  sub->add_option("trace", opt->trace, "the trace file")->required();
  sub->add_option("-D,--define", opt->schedule.defines,
                  "a param value (must agree with the value the trace header records)");
  sub->add_option("--html", opt->html,
                  "also write the phase picture of the replayed run (the model's events in the "
                  "trace's order, unrecorded completions included, then the model running on)");
  AddFormatOption(sub, opt->format, "replay");
  sub->callback([&ctx, opt] {
    ctx.format = opt->format;
    // A client of the C++ API (parity/parity.h).
    api::Result<api::Trace> trace = api::Trace::FromFile(opt->trace);
    if (!trace.ok()) return ReportBadInput(ctx, ToStatus(trace.error()));
    if (trace->source() == "kernel") return ReplayKernel(ctx, *opt, *trace);
    Expected<api::Schedule> schedule = LoadApiSchedule(opt->schedule);
    if (!schedule.ok()) return ReportBadInput(ctx, schedule.status());
    api::ReplayOptions ro;
    ro.keep_model = !opt->html.empty();
    api::Result<api::ReplayReport> result = api::Replay(*schedule, *trace, ro);
    if (!result.ok()) return ReportBadInput(ctx, ToStatus(result.error()));
    ctx.exit_code = result->diverged ? kExitViolations : kExitClean;
    const bool json = opt->format == "json";
    if (!json) {
      std::printf("%s: replaying %s (%s, %s, %llu events)\n", opt->schedule.file.c_str(),
                  opt->trace.c_str(), trace->source().c_str(), trace->policy().c_str(),
                  static_cast<unsigned long long>(trace->events()));
      std::printf("%s", api::FormatReplay(*result).c_str());
    }
    if (!opt->html.empty()) {
      const std::string page = api::PhasePictureHtml(
          *result, "parity replay " + opt->schedule.file + " " + opt->trace + " (" +
                       trace->source() + ", " + trace->policy() + ")");
      if (!page.empty()) {
        std::ofstream out(opt->html, std::ios::binary);
        out << page;
        out.close();
        if (!out) {
          return ReportBadInput(ctx, Status("io", "cannot write the HTML file",
                                            SourceLocation{opt->html, 0, 0}));
        }
        if (!json) std::printf("wrote the phase picture to %s\n", opt->html.c_str());
      }
    }
    if (json) PrintDocument(ReplayJson(*schedule, *trace, *result, opt->schedule.file,
                                       ctx.exit_code));
  });
}

void AddCompareCommand(CLI::App& app, Context& ctx) {
  struct Options {
    std::string a, b;
    std::string format = "text";
  };
  auto opt = std::make_shared<Options>();
  CLI::App* sub = app.add_subcommand(
      "compare",
      "compare two traces of one schedule (e.g. simulator vs H100): phase completions, program "
      "order, copies, wait timeouts; exit 0 same, 1 different, 2 different schedules");
  sub->add_option("trace_a", opt->a, "the first trace")->required();
  sub->add_option("trace_b", opt->b, "the second trace")->required();
  AddFormatOption(sub, opt->format, "compare");
  sub->callback([&ctx, opt] {
    ctx.format = opt->format;
    // A client of the C++ API (parity/parity.h).
    api::Result<api::Trace> a = api::Trace::FromFile(opt->a);
    if (!a.ok()) return ReportBadInput(ctx, ToStatus(a.error()));
    api::Result<api::Trace> b = api::Trace::FromFile(opt->b);
    if (!b.ok()) return ReportBadInput(ctx, ToStatus(b.error()));
    api::Result<api::CompareReport> r = api::Compare(*a, *b);
    if (!r.ok()) return ReportBadInput(ctx, ToStatus(r.error()));
    ctx.exit_code = r->same() ? kExitClean : kExitViolations;
    if (opt->format == "json") {
      nlohmann::json j = {{"schema", SchemaId("compare")},
                          {"trace_a", TraceJson(*a)},
                          {"trace_b", TraceJson(*b)},
                          {"same", r->same()},
                          {"exit_code", ctx.exit_code},
                          {"differences", r->differences},
                          {"notes", r->notes}};
      PrintDocument(j);
      return;
    }
    std::printf("%s", api::FormatCompare(*r).c_str());
  });
}

void AddTraceCommand(CLI::App& app, Context& ctx) {
  struct Options {
    std::string perfetto;
    std::string trace;
    std::string schedule;
    double clock_ghz = 0;
  };
  auto opt = std::make_shared<Options>();
  CLI::App* sub = app.add_subcommand("trace", "work with trace files");
  sub->require_subcommand(1);
  CLI::App* exp = sub->add_subcommand(
      "export", "export a trace as Chrome/Perfetto trace-event JSON (ui.perfetto.dev)");
  exp->add_option("--perfetto", opt->perfetto, "the JSON file to write")->required();
  exp->add_option("trace", opt->trace, "the trace file")->required();
  exp->add_option("--schedule", opt->schedule,
                  "the schedule (.pipe) the trace was recorded from: lanes get its names "
                  "(full[0], producer[0]), and an H100 trace's phase completions and copy "
                  "deliveries, which the GPU cannot record, are inferred by replaying it");
  exp->add_option("--sm-clock-ghz", opt->clock_ghz,
                  "H100 traces: the SM clock that converts clock64 cycles to microseconds "
                  "(default: the one the runner recorded in TRACE.agents)");
  exp->callback([&ctx, opt] {
    // A client of the C++ API (parity/parity.h).
    api::Result<api::Trace> t = api::Trace::FromFile(opt->trace);
    if (!t.ok()) return ReportBadInput(ctx, ToStatus(t.error()));
    std::optional<api::Schedule> schedule;
    if (!opt->schedule.empty()) {
      ScheduleOptions so;
      so.file = opt->schedule;
      Expected<api::Schedule> loaded = LoadApiSchedule(so);
      if (!loaded.ok()) return ReportBadInput(ctx, loaded.status());
      schedule = std::move(loaded).value();
    }
    api::PerfettoOptions po;
    po.sm_clock_ghz = opt->clock_ghz;
    api::Result<api::PerfettoExport> exported =
        api::ExportPerfetto(*t, schedule ? &*schedule : nullptr, po);
    if (!exported.ok()) return ReportBadInput(ctx, ToStatus(exported.error()));
    std::ofstream out(opt->perfetto, std::ios::binary);
    out << exported->json;
    out.close();
    if (!out) {
      return ReportBadInput(ctx, Status("io", "cannot write the JSON file",
                                        SourceLocation{opt->perfetto, 0, 0}));
    }
    std::printf("%s: %llu events exported to %s\n", opt->trace.c_str(),
                static_cast<unsigned long long>(t->events()), opt->perfetto.c_str());
    for (const std::string& n : exported->notes) std::printf("note: %s\n", n.c_str());
    ctx.exit_code = kExitClean;
  });
}

}  // namespace parity::cli
