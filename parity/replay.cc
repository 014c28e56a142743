// Trace, Replay and Compare of parity/parity.h: a recorded trace driven through a schedule's
// model (verifier/replay.h), as `parity replay` reports it, and two traces held against each
// other (verifier/compare.h), as `parity compare` does.
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "parity/detail.h"
#include "parity/parity.h"
#include "sim/trace/trace_file.h"
#include "verifier/compare.h"
#include "verifier/replay.h"
#include "verifier/report/phase_picture.h"

namespace parity::api {

struct CompareReport::Detail {
  std::shared_ptr<const Trace::Impl> a, b;
};

struct ReplayReport::Detail {
  std::shared_ptr<const ir::Program> program;
  std::shared_ptr<const Trace::Impl> trace;
  verifier::ReplayResult result;
};

Result<Trace> Trace::FromFile(const std::string& path) {
  Expected<trace::TraceFile> file = trace::ReadTraceFile(path);
  if (!file.ok()) return ToError(file.status());
  auto impl = std::make_shared<Impl>();
  impl->path = path;
  impl->file = std::move(file).value();
  return Trace(std::move(impl));
}

const std::string& Trace::path() const { return impl_->path; }
const std::string& Trace::source() const { return impl_->file.header.source; }
const std::string& Trace::device() const { return impl_->file.header.device; }
const std::string& Trace::schedule() const { return impl_->file.header.schedule; }
const std::string& Trace::policy() const { return impl_->file.header.policy; }
uint64_t Trace::events() const { return impl_->file.events.size(); }

namespace {

// The statement of a simulator trace's event (executor pcs number the GPU encoding's
// instructions, not the schedule's): unknown where none is known.
Location EventLocation(const ir::Program& program, const std::vector<int64_t>& params,
                       const trace::TraceFile& trace, const trace::TraceEvent& e) {
  if (trace.header.source != "sim" || e.agent == trace::kNoAgent) return {};
  Expected<engine::Engine> engine = engine::Engine::Create(program, params, {});
  if (!engine.ok()) return {};
  for (uint32_t a = 0; a < engine->num_agents(); ++a) {
    const engine::AgentInfo& info = engine->agent_info(a);
    if (info.cluster != e.cluster || info.cta != e.cta || info.index_in_cta != e.agent) continue;
    const ir::Stmt* stmt = verifier::PcMap(program).stmt(info.role, e.pc);
    return stmt == nullptr ? Location{} : ToLocation(stmt->where);
  }
  return {};
}

}  // namespace

Result<ReplayReport> Replay(const Schedule& schedule, const Trace& trace,
                            const ReplayOptions& options) {
  const Schedule::Impl& impl = schedule.impl();
  const ir::Program& program = *impl.program;
  const trace::TraceFile& file = trace.impl().file;
  const SourceLocation at_trace{trace.path(), 0, 0};
  Expected<std::vector<int64_t>> params = verifier::BindTraceParams(program, file.header);
  if (!params.ok()) return ToError(params.status().At(at_trace));
  if (!impl.overrides.empty()) {
    // The -D values (the schedule's overrides) must be those the trace was recorded with.
    Result<std::vector<int64_t>> bound = BindScheduleParams(schedule);
    if (!bound.ok()) return bound.error();
    if (*params != *bound) {
      return ToError(Status("replay.params",
                            "the -D values differ from the params the trace was recorded with",
                            at_trace));
    }
  }
  Expected<verifier::ReplayResult> result =
      verifier::ReplayTrace(program, *params, file, options.keep_model);
  if (!result.ok()) return ToError(result.status().At(at_trace));
  const verifier::ReplayResult& r = *result;
  ReplayReport report;
  report.diverged = r.diverged;
  if (r.diverged) {
    const verifier::ReplayDivergence& d = r.divergence;
    ReplayReport::Divergence& out = report.divergence;
    out.event_number = d.event_number;
    out.kind = trace::EventKindName(d.observed.kind);
    out.location = EventLocation(program, *params, file, d.observed);
    out.reason = d.reason;
    out.expected = d.expected;
    out.barrier_state = d.barrier_state;
    out.enabled = d.enabled;
  }
  report.replayed = r.replayed;
  report.skipped_model_events = r.skipped_model_events;
  report.inferred_completions = r.inferred_completions;
  report.timeouts = r.timeouts;
  report.after_abort = r.after_abort;
  report.probes = r.probes;
  report.search_exhausted = r.search_exhausted;
  report.eager_completions = r.eager_completions;
  report.model_outcome = engine::OutcomeName(r.model_outcome);
  for (uint8_t k : r.unobserved_kinds) report.unobserved_kinds.push_back(trace::EventKindName(k));
  auto detail = std::make_shared<ReplayReport::Detail>();
  detail->program = impl.program;
  detail->trace = trace.impl_;
  detail->result = std::move(result).value();
  report.detail = std::move(detail);
  return report;
}

std::string FormatReplay(const ReplayReport& report) {
  if (report.detail == nullptr) return "";
  return verifier::FormatReplayResult(report.detail->result, report.detail->trace->file);
}

std::string PhasePictureHtml(const ReplayReport& report, const std::string& title) {
  if (report.detail == nullptr || report.detail->result.model_engine == nullptr) return "";
  const ir::Program& program = *report.detail->program;
  const verifier::ReplayResult& r = report.detail->result;
  // The replayed run, then the model running on alone from where the trace ends, so that a hang
  // shows where the model gets stuck and why.
  engine::Engine on(*r.model_engine);
  const size_t before = on.trace().size();
  const engine::RunResult run = on.Run();
  parity::report::PictureInput in;
  in.program = &program;
  in.engine = &on;
  in.events = r.model_trace;
  in.recorded_events = in.events.size();
  in.events.insert(in.events.end(), on.trace().begin() + static_cast<long>(before),
                   on.trace().end());
  std::optional<verifier::DeadlockReport> deadlock;
  if (run.outcome == engine::Outcome::kDeadlock) {
    deadlock = verifier::DiagnoseDeadlock(program, on, run, &in.events);
    in.deadlock = &*deadlock;
  }
  in.title = title;
  in.outcome = r.diverged ? "DIVERGENCE at event " + std::to_string(r.divergence.event_number) +
                                ": " + r.divergence.reason
                          : verifier::ModelStateSentence(r);
  if (deadlock) in.outcome += ". " + deadlock->summary;
  return parity::report::PhasePictureHtml(in);
}

Result<CompareReport> Compare(const Trace& a, const Trace& b) {
  Expected<verifier::CompareResult> r = verifier::CompareTraces(a.impl_->file, b.impl_->file);
  if (!r.ok()) return ToError(r.status().At(SourceLocation{b.path(), 0, 0}));
  CompareReport report;
  report.differences = r->differences;
  report.notes = r->notes;
  report.compared = r->compared;
  report.not_compared = r->not_compared;
  auto detail = std::make_shared<CompareReport::Detail>();
  detail->a = a.impl_;
  detail->b = b.impl_;
  report.detail = std::move(detail);
  return report;
}

std::string FormatCompare(const CompareReport& report) {
  if (report.detail == nullptr) return "";
  verifier::CompareResult r;
  r.differences = report.differences;
  r.notes = report.notes;
  r.compared = report.compared;
  r.not_compared = report.not_compared;
  return verifier::FormatCompareResult(r, report.detail->a->file, report.detail->b->file);
}

std::vector<WaitTimeout> WaitTimeouts(const Schedule& schedule, const Trace& trace) {
  const ir::Program& program = *schedule.impl().program;
  std::vector<WaitTimeout> out;
  Result<std::vector<int64_t>> params = BindScheduleParams(schedule);
  std::optional<engine::Engine> names;  // the agents, fixed at creation
  if (params.ok()) {
    Expected<engine::Engine> e = engine::Engine::Create(program, *params, {});
    if (e.ok()) names.emplace(std::move(e).value());
  }
  for (const trace::TraceEvent& ev : trace.impl().file.events) {
    if (ev.kind != static_cast<uint8_t>(trace::EventKind::kWaitTimeout)) continue;
    WaitTimeout w;
    w.cluster = ev.cluster;
    w.cta = ev.cta;
    w.parity = ev.parity;
    w.barrier = verifier::BarrierLabel(program, ev.object, ev.index, ev.target_cta);
    for (uint32_t a = 0; names && a < names->num_agents(); ++a) {
      const engine::AgentInfo& info = names->agent_info(a);
      if (info.cluster == ev.cluster && info.cta == ev.cta && info.index_in_cta == ev.agent) {
        w.agent = verifier::AgentLabel(program, *names, a);
      }
    }
    out.push_back(std::move(w));
  }
  return out;
}

}  // namespace parity::api
