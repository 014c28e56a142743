// `parity replay`, `parity compare` and `parity trace export`: work on recorded traces (from
// `parity run --trace` or the H100 executor).
#include <cstdio>
#include <algorithm>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "sim/common/read_file.h"
#include "sim/trace/perfetto.h"
#include "sim/trace/trace_file.h"
#include "parity/parity.h"
#include "tools/cli/command.h"
#include "tools/cli/report_format.h"
#include "tools/cli/schedule_loader.h"
#include "verifier/compare.h"
#include "verifier/kernel_trace.h"
#include "verifier/replay.h"
#include "verifier/rules.h"

namespace parity::cli {
namespace {

nlohmann::json TraceJson(const std::string& path, const trace::TraceFile& t) {
  return {{"file", path},
          {"source", t.header.source},
          {"device", t.header.device},
          {"schedule", t.header.schedule},
          {"policy", t.header.policy},
          {"events", t.events.size()}};
}

nlohmann::json ReplayJson(const api::Schedule& schedule, const api::Trace& trace,
                          const api::ReplayReport& r, const std::string& file, int exit_code) {
  nlohmann::json j = {{"schema", SchemaId("replay")},
                      {"file", file},
                      {"schedule", schedule.name()},
                      {"trace", {{"file", trace.path()},
                                 {"source", trace.source()},
                                 {"device", trace.device()},
                                 {"schedule", trace.schedule()},
                                 {"policy", trace.policy()},
                                 {"events", trace.events()}}},
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

nlohmann::json KernelReplayJson(const verifier::KernelReplayResult& r,
                                const trace::TraceFile& trace, const std::string& file,
                                const std::string& trace_path, int exit_code) {
  nlohmann::json j = {{"schema", SchemaId("replay")},
                      {"file", file},
                      {"trace", TraceJson(trace_path, trace)},
                      {"diverged", r.diverged},
                      {"exit_code", exit_code},
                      {"records", r.records},
                      {"matched", r.matched},
                      {"barriers_bound", r.barriers_bound},
                      {"addresses_bound", r.addresses_bound},
                      {"replayed", r.replay.replayed},
                      {"timeouts", r.replay.timeouts},
                      {"model_outcome", engine::OutcomeName(r.replay.model_outcome)}};
  if (r.diverged) {
    const verifier::KernelDivergence& d = r.divergence;
    j["divergence"] = {{"record", d.record},
                       {"kind", trace::EventKindName(d.observed.kind)},
                       {"kernel_did", d.kernel_did},
                       {"source_line", d.observed.pc},
                       {"reason", d.reason},
                       {"agent", d.agent},
                       {"schedule_op", d.schedule_op},
                       {"location", d.schedule_op.empty() ? nlohmann::json(nullptr)
                                                          : LocationJson(d.schedule_at)},
                       {"imported_from", d.ptx},
                       {"found_by", d.from_replay ? "order" : "match"}};
  } else {
    j["divergence"] = nullptr;
  }
  return j;
}

// A kernel's own trace (source "kernel"): matched with the imported schedule's operations and
// replayed (verifier/kernel_trace.h). The params are the schedule's (a kernel trace records
// none): the kernel must have run with the arguments it was imported with.
void ReplayKernel(Context& ctx, const ReplayOptions& opt, const LoadedSchedule& loaded,
                  const trace::TraceFile& trace) {
  if (!opt.html.empty()) {
    ReportBadInput(ctx, Status("replay.kernel-trace",
                               "--html is not available for a kernel's own trace",
                               SourceLocation{opt.trace, 0, 0}));
    return;
  }
  Expected<verifier::KernelMap> map =
      verifier::ParseKernelMap(loaded.source, opt.schedule.file);
  if (!map.ok()) {
    ReportBadInput(ctx, map.status());
    return;
  }
  Expected<verifier::KernelReplayResult> r =
      verifier::ReplayKernelTrace(*loaded.program, loaded.params, *map, trace);
  if (!r.ok()) {
    ReportBadInput(ctx, r.status().At(SourceLocation{opt.trace, 0, 0}));
    return;
  }
  ctx.exit_code = r->diverged ? kExitViolations : kExitClean;
  if (opt.format == "json") {
    PrintDocument(KernelReplayJson(*r, trace, opt.schedule.file, opt.trace, ctx.exit_code));
    return;
  }
  std::printf("%s: replaying %s (kernel trace of %s on %s, %zu records)\n",
              opt.schedule.file.c_str(), opt.trace.c_str(), trace.header.schedule.c_str(),
              trace.header.device.c_str(), trace.events.size());
  std::printf("%s", verifier::FormatKernelReplayResult(*r, trace).c_str());
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
    // A client of the C++ API (parity/parity.h) but for a kernel's own trace.
    api::Result<api::Trace> trace = api::Trace::FromFile(opt->trace);
    if (!trace.ok()) return ReportBadInput(ctx, ToStatus(trace.error()));
    if (trace->source() == "kernel") {
      Expected<LoadedSchedule> loaded = LoadSchedule(opt->schedule);
      if (!loaded.ok()) return ReportBadInput(ctx, loaded.status());
      Expected<trace::TraceFile> file = trace::ReadTraceFile(opt->trace);
      if (!file.ok()) return ReportBadInput(ctx, file.status());
      ReplayKernel(ctx, *opt, *loaded, *file);
      return;
    }
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
    Expected<trace::TraceFile> a = trace::ReadTraceFile(opt->a);
    if (!a.ok()) return ReportBadInput(ctx, a.status());
    Expected<trace::TraceFile> b = trace::ReadTraceFile(opt->b);
    if (!b.ok()) return ReportBadInput(ctx, b.status());
    Expected<verifier::CompareResult> r = verifier::CompareTraces(*a, *b);
    if (!r.ok()) return ReportBadInput(ctx, r.status().At(SourceLocation{opt->b, 0, 0}));
    ctx.exit_code = r->same() ? kExitClean : kExitViolations;
    if (opt->format == "json") {
      nlohmann::json j = {{"schema", SchemaId("compare")},
                          {"trace_a", TraceJson(opt->a, *a)},
                          {"trace_b", TraceJson(opt->b, *b)},
                          {"same", r->same()},
                          {"exit_code", ctx.exit_code},
                          {"differences", r->differences},
                          {"notes", r->notes}};
      PrintDocument(j);
      return;
    }
    std::printf("%s", verifier::FormatCompareResult(*r, *a, *b).c_str());
  });
}

namespace {

// Lane names from the schedule: barriers, buffers, tensor maps and agents ("producer[0]").
trace::TraceNames NamesOf(const ir::Program& program, const engine::Engine& engine) {
  trace::TraceNames n;
  for (const auto& b : program.barriers) n.barriers.push_back(b.name);
  for (const auto& b : program.buffers) n.buffers.push_back(b.name);
  for (const auto& t : program.tensor_maps) n.tensor_maps.push_back(t.name);
  for (uint32_t a = 0; a < engine.num_agents(); ++a) {
    const engine::AgentInfo& info = engine.agent_info(a);
    n.agents[{static_cast<int>(info.cluster), static_cast<int>(info.cta),
              static_cast<int>(info.index_in_cta)}] =
        engine.role_name(a) + "[" + std::to_string(info.index_in_role) + "]";
  }
  return n;
}

// An executor trace with the events it cannot record (phase completions, deliveries, ...)
// filled in by replaying it on the model: the model's events in replay order at the times of
// the trace events that drove them, those of unrecorded kinds marked inferred, plus the trace's
// wait timeouts. Empty when the replay diverges.
std::vector<trace::TraceEvent> WithInferredEvents(const trace::TraceFile& t,
                                                  const verifier::ReplayResult& r) {
  if (r.diverged) return {};
  std::vector<trace::TraceEvent> out;
  auto unobserved = [&](const trace::TraceEvent& e) {
    for (uint8_t k : r.unobserved_kinds) {
      if (k != e.kind) continue;
      const bool agent_form_recorded = k == static_cast<uint8_t>(trace::EventKind::kArrive) ||
                                       k == static_cast<uint8_t>(trace::EventKind::kCompleteTx);
      if (!agent_form_recorded || e.agent == trace::kNoAgent) return true;
    }
    return false;
  };
  for (trace::TraceEvent e : r.model_trace) {
    if (unobserved(e)) e.flags |= trace::kFlagInferred;
    out.push_back(e);
  }
  for (const trace::TraceEvent& e : t.events) {
    if (e.kind == static_cast<uint8_t>(trace::EventKind::kWaitTimeout)) out.push_back(e);
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const trace::TraceEvent& a, const trace::TraceEvent& b) {
                     return a.time < b.time;
                   });
  return out;
}

}  // namespace

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
    Expected<trace::TraceFile> t = trace::ReadTraceFile(opt->trace);
    if (!t.ok()) return ReportBadInput(ctx, t.status());
    trace::PerfettoOptions po;
    trace::TraceNames names;
    trace::TraceFile shown = *t;
    std::vector<std::string> notes;
    if (!opt->schedule.empty()) {
      ScheduleOptions so;
      so.file = opt->schedule;
      Expected<LoadedSchedule> loaded = LoadSchedule(so);
      if (!loaded.ok()) return ReportBadInput(ctx, loaded.status());
      const ir::Program& program = *loaded->program;
      Expected<std::vector<int64_t>> params = verifier::BindTraceParams(program, t->header);
      if (!params.ok()) {
        return ReportBadInput(ctx, params.status().At(SourceLocation{opt->trace, 0, 0}));
      }
      Expected<engine::Engine> eng = engine::Engine::Create(program, *params, {});
      if (!eng.ok()) return ReportBadInput(ctx, eng.status().At(SourceLocation{so.file, 0, 0}));
      names = NamesOf(program, *eng);
      po.names = &names;
      if (t->header.source != "sim") {
        Expected<verifier::ReplayResult> r = verifier::ReplayTrace(program, *params, *t, true);
        if (!r.ok()) return ReportBadInput(ctx, r.status().At(SourceLocation{opt->trace, 0, 0}));
        std::vector<trace::TraceEvent> filled = WithInferredEvents(*t, *r);
        if (filled.empty()) {
          notes.push_back("the trace does not replay on the model (see `parity replay`): its "
                          "phase completions and deliveries are not inferred");
        } else {
          shown.events = std::move(filled);
          notes.push_back("phase completions and copy deliveries the GPU cannot record are "
                          "inferred by replaying the trace on the model (args.inferred)");
        }
      }
    } else {
      notes.push_back("lanes are numbered (bar0[0], agent 0): pass --schedule FILE.pipe for "
                      "the schedule's names");
    }
    if (t->header.source != "sim") {
      po.clock_ghz = opt->clock_ghz;
      if (po.clock_ghz <= 0) {
        // The sidecar is optional: without one the clock stays unknown.
        Expected<std::string> side =
            ReadInputFile(opt->trace + ".agents", "trace sidecar", "trace.io", kMaxSideFileBytes);
        if (side.ok()) po.clock_ghz = trace::SidecarClockGhz(*side);
      }
      notes.push_back(po.clock_ghz > 0
                          ? "clock64 cycles converted to microseconds at " +
                                std::to_string(po.clock_ghz) + " GHz"
                          : "the SM clock is not known (no " + opt->trace +
                                ".agents, no --sm-clock-ghz): times stay in cycles");
    }
    std::ofstream out(opt->perfetto, std::ios::binary);
    out << trace::ExportPerfettoJson(shown, po);
    out.close();
    if (!out) {
      return ReportBadInput(ctx, Status("io", "cannot write the JSON file",
                                        SourceLocation{opt->perfetto, 0, 0}));
    }
    std::printf("%s: %zu events exported to %s\n", opt->trace.c_str(), t->events.size(),
                opt->perfetto.c_str());
    for (const std::string& n : notes) std::printf("note: %s\n", n.c_str());
    ctx.exit_code = kExitClean;
  });
}

}  // namespace parity::cli
