// ReplayKernel and ExportPerfetto of parity/parity.h: a kernel's own trace matched with its
// imported schedule and replayed (verifier/kernel_trace.h), and a trace exported for Perfetto
// (sim/trace/perfetto.h) with the schedule's names and the events the GPU cannot record.
#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "parity/detail.h"
#include "parity/parity.h"
#include "sim/common/read_file.h"
#include "sim/engine/engine.h"
#include "sim/trace/perfetto.h"
#include "sim/trace/trace_file.h"
#include "verifier/kernel_trace.h"
#include "verifier/replay.h"

namespace parity::api {

struct KernelReplayReport::Detail {
  std::shared_ptr<const Trace::Impl> trace;
  verifier::KernelReplayResult result;
};

Result<KernelReplayReport> ReplayKernel(const Schedule& schedule, const Trace& trace) {
  const Schedule::Impl& impl = schedule.impl();
  Expected<verifier::KernelMap> map = verifier::ParseKernelMap(impl.source, impl.file);
  if (!map.ok()) return ToError(map.status());
  Result<std::vector<int64_t>> params = BindScheduleParams(schedule);
  if (!params.ok()) return params.error();
  Expected<verifier::KernelReplayResult> r =
      verifier::ReplayKernelTrace(*impl.program, *params, *map, trace.impl_->file);
  if (!r.ok()) return ToError(r.status().At(SourceLocation{trace.path(), 0, 0}));
  KernelReplayReport report;
  report.diverged = r->diverged;
  report.records = r->records;
  report.matched = r->matched;
  report.barriers_bound = r->barriers_bound;
  report.addresses_bound = r->addresses_bound;
  report.replayed = r->replay.replayed;
  report.timeouts = r->replay.timeouts;
  report.model_outcome = engine::OutcomeName(r->replay.model_outcome);
  if (r->diverged) {
    const verifier::KernelDivergence& d = r->divergence;
    KernelReplayReport::Divergence& out = report.divergence;
    out.record = d.record;
    out.kind = trace::EventKindName(d.observed.kind);
    out.kernel_did = d.kernel_did;
    out.source_line = d.observed.pc;
    out.reason = d.reason;
    out.agent = d.agent;
    out.schedule_op = d.schedule_op;
    if (!d.schedule_op.empty()) out.location = ToLocation(d.schedule_at);
    out.imported_from = d.ptx;
    out.found_by_order = d.from_replay;
  }
  auto detail = std::make_shared<KernelReplayReport::Detail>();
  detail->trace = trace.impl_;
  detail->result = std::move(r).value();
  report.detail = std::move(detail);
  return report;
}

std::string FormatKernelReplay(const KernelReplayReport& report) {
  if (report.detail == nullptr) return "";
  return verifier::FormatKernelReplayResult(report.detail->result, report.detail->trace->file);
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

Result<PerfettoExport> ExportPerfetto(const Trace& trace, const Schedule* schedule,
                                      const PerfettoOptions& options) {
  const trace::TraceFile& t = trace.impl().file;
  const SourceLocation at_trace{trace.path(), 0, 0};
  PerfettoExport out;
  trace::PerfettoOptions po;
  trace::TraceNames names;
  trace::TraceFile shown = t;
  if (schedule != nullptr) {
    const Schedule::Impl& impl = schedule->impl();
    const ir::Program& program = *impl.program;
    Expected<std::vector<int64_t>> params = verifier::BindTraceParams(program, t.header);
    if (!params.ok()) return ToError(params.status().At(at_trace));
    Expected<engine::Engine> eng = engine::Engine::Create(program, *params, {});
    if (!eng.ok()) return ToError(eng.status().At(SourceLocation{impl.file, 0, 0}));
    names = NamesOf(program, *eng);
    po.names = &names;
    if (t.header.source != "sim") {
      Expected<verifier::ReplayResult> r = verifier::ReplayTrace(program, *params, t, true);
      if (!r.ok()) return ToError(r.status().At(at_trace));
      std::vector<trace::TraceEvent> filled = WithInferredEvents(t, *r);
      if (filled.empty()) {
        out.notes.push_back("the trace does not replay on the model (see `parity replay`): its "
                            "phase completions and deliveries are not inferred");
      } else {
        shown.events = std::move(filled);
        out.notes.push_back("phase completions and copy deliveries the GPU cannot record are "
                            "inferred by replaying the trace on the model (args.inferred)");
      }
    }
  } else {
    out.notes.push_back("lanes are numbered (bar0[0], agent 0): pass --schedule FILE.pipe for "
                        "the schedule's names");
  }
  if (t.header.source != "sim") {
    po.clock_ghz = options.sm_clock_ghz;
    if (po.clock_ghz <= 0) {
      // The sidecar is optional: without one the clock stays unknown.
      Expected<std::string> side = ReadInputFile(trace.path() + ".agents", "trace sidecar",
                                                 "trace.io", kMaxSideFileBytes);
      if (side.ok()) po.clock_ghz = trace::SidecarClockGhz(*side);
    }
    out.notes.push_back(po.clock_ghz > 0
                            ? "clock64 cycles converted to microseconds at " +
                                  std::to_string(po.clock_ghz) + " GHz"
                            : "the SM clock is not known (no " + trace.path() +
                                  ".agents, no --sm-clock-ghz): times stay in cycles");
  }
  out.json = trace::ExportPerfettoJson(shown, po);
  return out;
}

}  // namespace parity::api
