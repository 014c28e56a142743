#include "parity/parity.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <string_view>
#include <tuple>

#include "parity/detail.h"
#include "sim/common/check.h"
#include "sim/common/read_file.h"
#include "sim/ir/hash.h"
#include "sim/ir/parser.h"
#include "sim/model/citations.h"
#include "sim/model/codes.h"
#include "sim/trace/trace_file.h"
#include "verifier/culprit.h"
#include "verifier/expect.h"
#include "verifier/report/narrate.h"
#include "verifier/report/phase_picture.h"

namespace parity::api {

std::string Location::ToString() const {
  return SourceLocation{file, line, column}.ToString();
}

std::string Error::ToString() const {
  return Status(rule, message, SourceLocation{location.file, location.line, location.column})
      .ToString();
}

std::string Finding::ToString() const {
  std::string out = location.ToString();
  if (!out.empty()) out += ": ";
  out += std::string(SeverityName(severity)) + "[" + code + "]: " + message;
  if (!agent.empty()) out += " (by " + agent + ")";
  return out;
}

Error ToError(const Status& status) {
  return Error{status.rule(), status.message(), ToLocation(status.where())};
}

Location ToLocation(const SourceLocation& where) {
  return Location{where.file, where.line, where.column};
}

const char* SeverityName(Severity s) {
  return s == Severity::kError ? "error" : s == Severity::kNote ? "note" : "warning";
}

Severity FromModel(model::Severity s) {
  return s == model::Severity::kError  ? Severity::kError
         : s == model::Severity::kNote ? Severity::kNote
                                       : Severity::kWarning;
}

const char* OutcomeName(Outcome o) {
  switch (o) {
    case Outcome::kCompleted:
      return "completed";
    case Outcome::kDeadlock:
      return "deadlock";
    case Outcome::kViolation:
      return "violation";
    case Outcome::kStepLimit:
      return "step-limit";
  }
  return "?";
}

const char* VerdictName(Verdict v) {
  switch (v) {
    case Verdict::kVerified:
      return "verified";
    case Verdict::kIncomplete:
      return "incomplete";
    case Verdict::kDeadlock:
      return "deadlock";
    case Verdict::kViolation:
      return "violation";
    case Verdict::kRuleViolation:
      return "rule-violation";
  }
  return "?";
}

// ---------------------------------------------------------------- Schedule

Result<Schedule> Schedule::FromString(const std::string& text, const std::string& file) {
  Expected<ir::Program> program = ir::ParseProgram(text, file);
  if (!program.ok()) return ToError(program.status().At(SourceLocation{file, 0, 0}));
  auto impl = std::make_shared<Impl>();
  impl->source = text;
  impl->file = file;
  impl->program = std::make_shared<const ir::Program>(std::move(program).value());
  return Schedule(std::move(impl));
}

Result<Schedule> Schedule::FromFile(const std::string& path) {
  // The reader every input of Parity goes through: the same refusals and messages as the
  // command line's.
  Expected<std::string> text = ReadInputFile(path, "schedule", "io", kMaxScheduleFileBytes);
  if (!text.ok()) return ToError(text.status());
  return FromString(*text, path);
}

Result<bool> Schedule::SetParam(const std::string& name, int64_t value) {
  bool known = false;
  for (const ir::Param& p : impl_->program->params) known = known || p.name == name;
  if (!known) {
    std::string names;
    for (const ir::Param& p : impl_->program->params) names += (names.empty() ? "" : ", ") + p.name;
    return Error{"param.unknown",
                 "unknown parameter `" + name + "` (set to " + std::to_string(value) + "; " +
                     impl_->file + " declares " + (names.empty() ? "no params" : names) + ")",
                 Location{impl_->file, 0, 0}};
  }
  // Copies made before share the old overrides; this one gets its own.
  impl_ = std::make_shared<Impl>(*impl_);
  for (auto& [n, v] : impl_->overrides) {
    if (n == name) {
      v = value;
      return true;
    }
  }
  impl_->overrides.emplace_back(name, value);
  return true;
}

std::vector<Schedule::Param> Schedule::params() const {
  std::vector<Param> out;
  Expected<std::vector<int64_t>> bound = ir::BindParams(*impl_->program, impl_->overrides);
  for (size_t i = 0; i < impl_->program->params.size(); ++i) {
    const ir::Param& p = impl_->program->params[i];
    out.push_back(Param{p.name, bound.ok() ? (*bound)[i] : p.default_value});
  }
  return out;
}

const std::string& Schedule::name() const { return impl_->program->name; }
const std::string& Schedule::file() const { return impl_->file; }
const std::string& Schedule::source() const { return impl_->source; }

Result<std::vector<Schedule::Param>> Schedule::BoundParams() const {
  Result<std::vector<int64_t>> bound = BindScheduleParams(*this);
  if (!bound.ok()) return bound.error();
  std::vector<Param> out;
  for (size_t i = 0; i < impl_->program->params.size(); ++i) {
    out.push_back(Param{impl_->program->params[i].name, (*bound)[i]});
  }
  return out;
}
std::string Schedule::hash() const { return ir::ContentHashHex(*impl_->program); }

Result<std::vector<int64_t>> BindScheduleParams(const Schedule& schedule) {
  const Schedule::Impl& impl = schedule.impl();
  Expected<std::vector<int64_t>> params = ir::BindParams(*impl.program, impl.overrides);
  if (!params.ok()) return ToError(params.status().At(SourceLocation{impl.file, 0, 0}));
  return std::move(params).value();
}

namespace {

// ---------------------------------------------------------------- findings

// Maps trace events to their agents and statements.
// What a counterexample step did, in one line: its first event (the operation and its object,
// as the narration words it), and how many more events the step had. A step of no event (an
// agent that only moves past control flow) says whose step it was.
std::string StepLabel(const Step& step) {
  if (step.events.empty()) {
    return step.asynchronous ? "an asynchronous operation of " + step.agent + " completes"
                             : step.agent + " moves on (no event)";
  }
  std::string label = step.events.front().text;
  if (step.events.size() > 1) {
    label += " (+" + std::to_string(step.events.size() - 1) + " more event" +
             (step.events.size() > 2 ? "s)" : ")");
  }
  return label;
}

class Locator {
 public:
  Locator(const ir::Program& program, const engine::Engine& engine)
      : program_(program), engine_(engine), pcs_(program) {
    for (uint32_t a = 0; a < engine.num_agents(); ++a) {
      const engine::AgentInfo& info = engine.agent_info(a);
      agents_[{info.cluster, info.cta, info.index_in_cta}] = a;
    }
  }

  // The global agent of an event, or kNoFindingAgent.
  uint32_t AgentOf(const trace::TraceEvent& e) const {
    if (e.agent == trace::kNoAgent) return verifier::kNoFindingAgent;
    auto it = agents_.find({e.cluster, e.cta, e.agent});
    return it == agents_.end() ? verifier::kNoFindingAgent : it->second;
  }

  std::string Label(uint32_t agent) const {
    return agent == verifier::kNoFindingAgent ? std::string()
                                              : verifier::AgentLabel(program_, engine_, agent);
  }

  Location Where(const trace::TraceEvent& e) const {
    uint32_t agent = AgentOf(e);
    if (agent == verifier::kNoFindingAgent) return {};
    const ir::Stmt* s = pcs_.stmt(engine_.agent_info(agent).role, e.pc);
    if (s != nullptr) return ToLocation(s->where);
    return ToLocation(program_.roles[engine_.agent_info(agent).role].where);
  }

  const ir::Program& program() const { return program_; }
  const engine::Engine& engine() const { return engine_; }

  Event MakeEvent(const trace::TraceEvent& e) const {
    return Event{report::EventLine(program_, engine_, e), Label(AgentOf(e)), Where(e)};
  }

  // Where `agent` acted on the finding's object (a buffer slot or a barrier element): its last
  // such event at or before trace event `before`, else its first one after; without one, its
  // last event at or before `before`; without any, its role's declaration.
  Location PlaceOn(uint32_t agent, size_t before, bool is_buffer, uint32_t object,
                   uint32_t index) const {
    const auto& trace = engine_.trace();
    auto on_object = [&](const trace::TraceEvent& e) {
      using K = trace::EventKind;
      const auto k = static_cast<K>(e.kind);
      const bool buffer_event = k == K::kUse || k == K::kWrite;
      const bool barrier_event = (e.kind >= static_cast<uint8_t>(K::kInit) &&
                                  e.kind <= static_cast<uint8_t>(K::kTestWait)) ||
                                 k == K::kCpAsyncArrive;
      return (is_buffer ? buffer_event : barrier_event) && e.object == object &&
             e.index == index && AgentOf(e) == agent;
    };
    const size_t end = std::min(before + 1, trace.size());
    for (size_t i = end; i-- > 0;) {
      if (on_object(trace[i])) return Where(trace[i]);
    }
    for (size_t i = end; i < trace.size(); ++i) {
      if (on_object(trace[i])) return Where(trace[i]);
    }
    for (size_t i = end; i-- > 0;) {
      if (AgentOf(trace[i]) == agent) return Where(trace[i]);
    }
    return ToLocation(program_.roles[engine_.agent_info(agent).role].where);
  }

 private:
  const ir::Program& program_;
  const engine::Engine& engine_;
  verifier::PcMap pcs_;
  std::map<std::tuple<uint32_t, uint32_t, uint32_t>, uint32_t> agents_;
};

Finding BaseFinding(model::Code code) {
  Finding f;
  f.code = std::string(model::CodeId(code));
  f.slug = std::string(model::CodeSlug(code));
  f.title = std::string(model::CodeTitle(code));
  f.severity = FromModel(model::CodeSeverity(code));
  return f;
}

Finding FromViolation(const Locator& loc, const engine::ViolationInfo& v) {
  Finding f = BaseFinding(v.violation.code);
  // The code and slug are fields of their own; the message names the barrier.
  f.message = report::ViolationText(loc.program(), v);
  const std::string_view id = model::CodeId(v.violation.code);
  if (!id.empty() && id[0] == 'M' && v.violation.code != model::Code::kMbarrierPendingCountToken &&
      v.event.object < loc.program().barriers.size()) {
    f.object = loc.program().barriers[v.event.object].name;
    f.object_index = v.event.index;
    f.object_cta = v.event.target_cta;
  }
  // A failed assertion: the object its first state read names (the counterexample's compact
  // view then keeps the steps on it: the copy whose landing, the arrive whose phase it reads).
  if (v.violation.code == model::Code::kAssertionFailed && v.violation.value >= 0 &&
      static_cast<size_t>(v.violation.value) < loc.program().assertions.size()) {
    const ir::Program& p = loc.program();
    std::vector<ir::ExprId> stack{p.assertions[static_cast<size_t>(v.violation.value)].cond};
    while (!stack.empty() && f.object.empty()) {
      const ir::ExprId id = stack.back();
      stack.pop_back();
      if (id == ir::kNoExpr || id >= p.exprs.size()) continue;
      const ir::Expr& x = p.exprs[id];
      if (x.kind == ir::Expr::Kind::kState) {
        const bool landed = x.op == static_cast<uint8_t>(ir::StateFn::kLanded);
        if (landed && x.index < p.buffers.size()) f.object = p.buffers[x.index].name;
        if (!landed && x.index < p.barriers.size()) f.object = p.barriers[x.index].name;
        f.object_cta = -1;
        continue;
      }
      for (ir::ExprId c : {x.c, x.b, x.a}) stack.push_back(c);
    }
  }
  f.agent = loc.Label(v.agent);
  f.location = ToLocation(v.where);
  f.related.push_back(Related{f.agent,
                              v.from_async ? "issued the asynchronous operation whose completion "
                                             "violates the rule"
                                           : "the operation that violates the rule",
                              f.location});
  return f;
}

Finding FromRule(const Locator& loc, const verifier::Finding& r, bool strict = false) {
  Finding f = BaseFinding(r.code());
  f.severity = FromModel(r.level(strict));
  f.message = r.message;
  f.agent = loc.Label(r.agent);
  f.location = ToLocation(r.where);
  const ir::Program& program = loc.program();
  if (r.object_is_global) {
    if (r.object < program.globals.size()) f.object = program.globals[r.object].name;
  } else if (r.object_is_buffer) {
    if (r.object < program.buffers.size()) f.object = program.buffers[r.object].name;
  } else if (r.object < program.barriers.size()) {
    f.object = program.barriers[r.object].name;
  }
  if (!f.object.empty()) {
    f.object_index = static_cast<int>(r.index);
    f.object_cta = static_cast<int>(r.cta);
  }
  if (r.agent != verifier::kNoFindingAgent) {
    f.related.push_back(Related{f.agent, "the culprit operation", f.location});
  }
  if (r.other_agent != verifier::kNoFindingAgent && r.other_agent != r.agent) {
    f.related.push_back(Related{loc.Label(r.other_agent),
                                r.object_is_buffer ? "the other party: its access to the buffer"
                                                   : "the other party: its use of the barrier",
                                loc.PlaceOn(r.other_agent, r.event, r.object_is_buffer, r.object,
                                            r.index)});
  }
  return f;
}

std::string BlockedText(const ir::Program& program, const verifier::BlockedExplanation& x) {
  std::string what = std::string("blocked in ") + engine::WaitKindName(x.blocked.wait);
  if (x.blocked.wait == engine::WaitKind::kMbarrierParity ||
      x.blocked.wait == engine::WaitKind::kMbarrierToken) {
    what = "waits on " + verifier::BarrierLabel(program, x.blocked.barrier,
                                                x.blocked.barrier_index, x.blocked.cta);
    if (x.blocked.wait == engine::WaitKind::kMbarrierParity) {
      what += " parity " + std::to_string(x.blocked.parity);
    }
  }
  return what + " (" + verifier::DeadlockCauseName(x.cause) + "): " + x.cause_text;
}

Finding FromDeadlock(const ir::Program& program, const Locator& loc,
                     const verifier::DeadlockReport& report) {
  Finding f = BaseFinding(model::Code::kDeadlock);
  // The finding carries its code and title apart (ToString, SARIF and JSON print them): the
  // message is the summary without its "P2001 deadlock: " heading.
  f.message = report.summary;
  const std::string heading = f.code + " " + f.title + ": ";
  if (f.message.rfind(heading, 0) == 0) f.message.erase(0, heading.size());
  if (!report.blocked.empty()) {
    const verifier::BlockedExplanation& primary =
        report.blocked[std::min(report.primary, report.blocked.size() - 1)];
    f.agent = loc.Label(primary.blocked.agent);
    f.location = ToLocation(primary.blocked.where);
    if ((primary.blocked.wait == engine::WaitKind::kMbarrierParity ||
         primary.blocked.wait == engine::WaitKind::kMbarrierToken) &&
        primary.blocked.barrier < program.barriers.size()) {
      f.object = program.barriers[primary.blocked.barrier].name;
      f.object_index = static_cast<int>(primary.blocked.barrier_index);
      f.object_cta = static_cast<int>(primary.blocked.cta);
    }
  }
  if (report.culprit.found) {
    // An earlier operation is the most likely cause (a wait that passed because of its parity,
    // a skipped signal): it is the culprit the finding points to.
    f.agent = loc.Label(report.culprit.agent);
    f.location = ToLocation(report.culprit.where);
    f.related.push_back(Related{f.agent, report.culprit.text, f.location});
    f.suggested_change = report.culprit.change;
    f.culprit_cause = verifier::DeadlockCauseName(report.culprit.cause);
    f.culprit_location = f.location;
    f.culprit_text = report.culprit.text;
  }
  for (const verifier::BlockedExplanation& x : report.blocked) {
    f.related.push_back(Related{loc.Label(x.blocked.agent), BlockedText(program, x),
                                ToLocation(x.blocked.where)});
  }
  return f;
}

// A model violation whose cause a re-run with one change proved (verifier/culprit.h): the
// finding says where and what to change.
void AddViolationCulprit(const Locator& loc,
                         const verifier::DeadlockCulprit& c, Finding* f) {
  if (!c.found) return;
  f->suggested_change = c.change;
  f->culprit_cause = verifier::DeadlockCauseName(c.cause);
  f->culprit_location = ToLocation(c.where);
  f->culprit_text = c.text;
  f->message += "; most likely cause (" + f->culprit_cause + ") at " + c.where.ToString() +
                ": " + c.change;
  f->related.push_back(Related{loc.Label(c.agent), c.text, ToLocation(c.where)});
}

engine::Policy ToEnginePolicy(Policy p) {
  switch (p) {
    case Policy::kEager:
      return engine::Policy::kEager;
    case Policy::kLazy:
      return engine::Policy::kLazy;
    case Policy::kRoundRobin:
      return engine::Policy::kRoundRobin;
    case Policy::kRandom:
      return engine::Policy::kRandom;
  }
  return engine::Policy::kEager;
}

// The early completions of a run in pieces (verifier::RunInPieces) that `out` does not already
// report at their statement: the whole-box run cannot show them (there the phase stays open).
void AddPieceFindings(const ir::Program& program, const verifier::PieceRun& pieces,
                      std::vector<Finding>* out) {
  if (pieces.end == nullptr) return;
  Locator loc(program, *pieces.end);
  for (const verifier::Finding& f : pieces.early) {
    Finding g = FromRule(loc, f);
    const bool known = std::any_of(out->begin(), out->end(), [&g](const Finding& x) {
      return x.code == g.code && x.location.line == g.location.line &&
             x.location.file == g.location.file;
    });
    if (!known) out->push_back(std::move(g));
  }
}

SearchStats ToStats(const verifier::ExploreStats& s) {
  SearchStats out;
  out.states = s.states;
  out.expanded = s.expanded;
  out.transitions = s.transitions;
  out.enabled = s.enabled;
  out.pruned = s.pruned;
  out.predicted = s.predicted;
  out.completed_ends = s.completed_ends;
  out.deadlock_ends = s.deadlock_ends;
  out.violation_ends = s.violation_ends;
  out.rule_paths = s.rule_paths;
  out.rule_violation_ends = s.rule_violation_ends;
  out.history_states = s.history_states;
  out.history_completed = s.history_completed;
  out.depth = s.depth;
  out.peak_frontier = s.peak_frontier;
  out.frontier_bytes = s.frontier_bytes;
  out.seconds = s.seconds;
  out.states_per_second = s.states_per_second();
  out.bytes_per_state = s.bytes_per_state();
  return out;
}

Verdict ToVerdict(verifier::ExploreVerdict v) {
  switch (v) {
    case verifier::ExploreVerdict::kVerified:
      return Verdict::kVerified;
    case verifier::ExploreVerdict::kIncomplete:
      return Verdict::kIncomplete;
    case verifier::ExploreVerdict::kDeadlock:
      return Verdict::kDeadlock;
    case verifier::ExploreVerdict::kViolation:
      return Verdict::kViolation;
    case verifier::ExploreVerdict::kRuleViolation:
    case verifier::ExploreVerdict::kBadInput:
      break;
  }
  return Verdict::kRuleViolation;
}

// The steps of the search's one replay of its counterexample.
std::vector<Step> StepsOf(const Locator& loc, const verifier::ReplayedPath& path) {
  std::vector<Step> out;
  out.reserve(path.steps.size());
  const engine::Engine& end = loc.engine();
  for (const verifier::ReplayedStep& s : path.steps) {
    Step step;
    step.agent = verifier::AgentLabel(loc.program(), end, s.agent);
    step.asynchronous = s.asynchronous;
    for (size_t i = s.first_event; i < s.end_event; ++i) {
      step.events.push_back(loc.MakeEvent(end.trace()[i]));
    }
    step.label = StepLabel(step);
    out.push_back(std::move(step));
  }
  return out;
}

// The depth-first search's first counterexample as found (ExploreOptions::on_first_counterexample):
// its steps and the findings at its end, without the diagnosis the reported one gets.
ExploreReport FirstReport(const ir::Program& program, const verifier::ExploreResult& r,
                          bool strict) {
  ExploreReport report;
  report.verdict = ToVerdict(r.verdict);
  report.stats = ToStats(r.stats);
  report.states = r.stats.states;
  report.transitions = r.stats.transitions;
  report.depth = r.stats.depth;
  report.seconds = r.stats.seconds;
  report.counterexample_shortest = false;
  report.first_counterexample_steps = r.counterexample.size();
  report.first_counterexample_seconds = r.first_seconds;
  if (r.replayed.end == nullptr) return report;
  const engine::Engine& end = *r.replayed.end;
  Locator loc(program, end);
  report.counterexample = StepsOf(loc, r.replayed);
  const engine::RunResult& rr = end.result();
  if (!r.findings.empty()) {
    for (const verifier::Finding& f : r.findings) report.findings.push_back(FromRule(loc, f, strict));
  } else if (rr.outcome == engine::Outcome::kViolation && rr.violation) {
    report.findings.push_back(FromViolation(loc, *rr.violation));
  } else if (rr.outcome == engine::Outcome::kDeadlock) {
    Finding f = BaseFinding(model::Code::kDeadlock);
    f.message = "no agent can step and nothing is in flight";
    report.findings.push_back(std::move(f));
  }
  return report;
}

std::vector<std::pair<std::string, int64_t>> ParamValues(const ir::Program& program,
                                                         const std::vector<int64_t>& params) {
  std::vector<std::pair<std::string, int64_t>> out;
  for (size_t i = 0; i < program.params.size() && i < params.size(); ++i) {
    out.emplace_back(program.params[i].name, params[i]);
  }
  return out;
}

}  // namespace

// ---------------------------------------------------------------- Check's run, for reports

namespace {

Violation ToViolation(const ir::Program& program, const engine::Engine& engine,
                      const engine::ViolationInfo& v) {
  return Violation{std::string(model::CodeId(v.violation.code)),
                   std::string(model::CodeTitle(v.violation.code)),
                   report::ViolationText(program, v),
                   verifier::AgentLabel(program, engine, v.agent),
                   ToLocation(v.where),
                   v.from_async};
}

Culprit ToCulprit(const ir::Program& program, const engine::Engine& engine,
                  const verifier::DeadlockCulprit& c, bool names_barrier) {
  Culprit out;
  out.found = c.found;
  if (!c.found) return out;
  out.cause = verifier::DeadlockCauseName(c.cause);
  out.agent = verifier::AgentLabel(program, engine, c.agent);
  if (names_barrier && c.barrier < program.barriers.size()) {
    out.barrier = program.barriers[c.barrier].name;
  }
  out.index = c.index;
  out.cta = c.cta;
  out.parity = c.parity;
  out.location = ToLocation(c.where);
  out.explanation = c.text;
  out.suggested_change = c.change;
  out.changes = c.change_kind;
  return out;
}

Deadlock ToDeadlock(const ir::Program& program, const engine::Engine& engine,
                    const verifier::DeadlockReport& d) {
  Deadlock out;
  out.summary = d.summary;
  out.culprit = ToCulprit(program, engine, d.culprit, /*names_barrier=*/true);
  for (const verifier::BlockedExplanation& x : d.blocked) {
    BlockedAgent b;
    b.agent = verifier::AgentLabel(program, engine, x.blocked.agent);
    b.waits_on = engine::WaitKindName(x.blocked.wait);
    b.location = ToLocation(x.blocked.where);
    b.on_mbarrier = x.blocked.wait == engine::WaitKind::kMbarrierParity ||
                    x.blocked.wait == engine::WaitKind::kMbarrierToken;
    if (b.on_mbarrier) {
      b.barrier = program.barriers[x.blocked.barrier].name;
      b.index = x.blocked.barrier_index;
      b.cta = x.blocked.cta;
      b.parity = x.blocked.parity;
      b.phase = x.blocked.state.phase;
      b.pending = x.blocked.state.pending_count;
      b.expected = x.blocked.state.expected_count;
      b.tx = x.blocked.state.tx_count;
    }
    b.cause = verifier::DeadlockCauseName(x.cause);
    b.explanation = x.cause_text;
    b.in_cycle = x.in_cycle;
    out.blocked.push_back(std::move(b));
  }
  return out;
}

std::string PolicyText(const engine::EngineOptions& o) {
  std::string p = engine::PolicyName(o.policy);
  if (o.policy == engine::Policy::kRandom) p += " seed=" + std::to_string(o.seed);
  return p;
}

// The file's own `# expect:` lines (verifier/expect.h) that apply to the run in `d`.
void AddFileExpectations(const CheckReport::Detail& d, const std::string& file,
                         CheckReport* report) {
  Expected<std::vector<verifier::Expectation>> expects =
      verifier::ReadExpectations(file, d.source);
  if (!expects.ok()) {  // a comment: reported, never a reason to refuse the schedule
    report->expectations_error = expects.status().ToString();
    return;
  }
  const ir::Program& program = *d.program;
  const engine::EngineOptions& o = d.engine_options;
  for (const verifier::Expectation& x : *expects) {
    if (x.explore) continue;
    Expected<std::vector<int64_t>> params = ir::BindParams(program, x.defines);
    if (!params.ok() || *params != d.params) continue;
    const bool same_policy =
        x.policy == o.policy && (o.policy != engine::Policy::kRandom || x.seed == o.seed);
    if (!same_policy && !x.every_policy) continue;
    verifier::Expectation applied = x;
    if (!same_policy) {  // every policy: the code
      applied = verifier::Expectation{};
      applied.code = x.code;
      applied.where = x.where;
      applied.policy = o.policy;
      applied.seed = o.seed;
      applied.every_policy = true;
    }
    verifier::CheckRun run;
    run.program = &program;
    run.engine = d.engine.get();
    run.result = &d.result;
    run.findings = &d.rule_findings;
    run.deadlock = d.deadlock ? &*d.deadlock : nullptr;
    run.violation_culprit = &d.violation_culprit;
    report->expected_by_file.push_back(
        FileExpectation{applied.Text(), applied.where.line, verifier::MatchCheck(applied, run)});
  }
}

trace::TraceFile TraceOf(const CheckReport::Detail& d) {
  trace::TraceFile file;
  file.header.schedule_hash = ir::ContentHash(*d.program);
  file.header.source = "sim";
  file.header.device = "parity-engine";
  file.header.schedule = d.program->name;
  file.header.policy = PolicyText(d.engine_options);
  file.header.params = d.param_values;
  file.events = d.engine->trace();
  return file;
}

}  // namespace

bool CheckReport::has_errors() const {
  if (outcome != Outcome::kCompleted) return true;
  for (const Finding& f : findings) {
    if (f.severity == Severity::kError) return true;
  }
  return false;
}

// ---------------------------------------------------------------- Check

Result<CheckReport> Check(const Schedule& schedule, const CheckOptions& options) {
  engine::EngineOptions eo;
  eo.policy = ToEnginePolicy(options.policy);
  eo.seed = options.seed;
  if (options.max_events != 0) eo.max_events = options.max_events;
  return CheckWith(schedule, eo, options);
}

Result<CheckReport> CheckWith(const Schedule& schedule, const engine::EngineOptions& options,
                              const CheckOptions& check) {
  const Schedule::Impl& impl = schedule.impl();
  const SourceLocation file{impl.file, 0, 0};
  Result<std::vector<int64_t>> params = BindScheduleParams(schedule);
  if (!params.ok()) return params.error();
  auto d = std::make_shared<CheckReport::Detail>();
  d->program = impl.program;
  d->source = impl.source;
  d->params = *params;
  d->param_values = ParamValues(*impl.program, d->params);
  d->engine_options = options;
  Expected<engine::Engine> engine =
      engine::Engine::Create(*d->program, d->params, d->engine_options);
  if (!engine.ok()) return ToError(engine.status().At(file));
  d->engine = std::make_unique<engine::Engine>(std::move(engine).value());
  d->result = d->engine->Run();
  if (d->result.outcome == engine::Outcome::kError) return ToError(d->result.error.At(file));

  const ir::Program& program = *d->program;
  const engine::Engine& e = *d->engine;
  const engine::RunResult& r = d->result;
  CheckReport report;
  switch (r.outcome) {
    case engine::Outcome::kDeadlock:
      report.outcome = Outcome::kDeadlock;
      break;
    case engine::Outcome::kViolation:
      report.outcome = Outcome::kViolation;
      break;
    case engine::Outcome::kStepLimit:
      report.outcome = Outcome::kStepLimit;
      break;
    default:
      report.outcome = Outcome::kCompleted;
      break;
  }
  report.events_count = r.events;
  report.steps = r.steps;
  report.agents = e.num_agents();
  report.ctas = e.num_ctas();
  report.policy = PolicyText(options);
  d->rule_findings = verifier::CheckRules(program, e, e.trace());
  // `exists` properties: in `check`, of this one run (when it completed).
  if (r.outcome == engine::Outcome::kCompleted && verifier::HasExists(program)) {
    for (verifier::Finding& f : verifier::ExistsFindings(program, e.ExistsHeld(), true)) {
      d->rule_findings.push_back(std::move(f));
    }
  }
  Locator loc(program, e);
  if (r.violation) {
    verifier::RepairOptions ro;
    ro.options = d->engine_options;
    d->violation_culprit = verifier::FindCulpritOfViolation(program, d->params, e, ro);
    report.findings.push_back(FromViolation(loc, *r.violation));
    AddViolationCulprit(loc, d->violation_culprit, &report.findings.back());
    report.violation = ToViolation(program, e, *r.violation);
    report.violation_culprit =
        ToCulprit(program, e, d->violation_culprit, /*names_barrier=*/false);
  }
  if (r.outcome == engine::Outcome::kDeadlock) {
    d->deadlock = verifier::DiagnoseDeadlockWithRepair(program, e, r, d->params);
    report.findings.push_back(FromDeadlock(program, loc, *d->deadlock));
    report.deadlock = ToDeadlock(program, e, *d->deadlock);
  }
  for (const engine::ViolationInfo& w : r.warnings) {
    report.findings.push_back(FromViolation(loc, w));
    report.model_warnings.push_back(ToViolation(program, e, w));
  }
  report.rule_errors = verifier::HasErrors(d->rule_findings, check.strict);
  for (const verifier::Finding& f : d->rule_findings) {
    report.findings.push_back(FromRule(loc, f, check.strict));
  }
  if (r.tx_pieces_differ && !options.tx_pieces) {
    AddPieceFindings(program, verifier::RunInPieces(program, d->params, options, {}),
                     &report.findings);
  }
  if (check.collect_events) {
    report.events.reserve(e.trace().size());
    for (const trace::TraceEvent& ev : e.trace()) report.events.push_back(loc.MakeEvent(ev));
  }
  if (check.narrate) {
    report.narration.reserve(e.trace().size());
    for (const parity::report::Narration& n :
         parity::report::NarrateRun(program, e, e.trace())) {
      report.narration.push_back(n.Text());
    }
  }
  AddFileExpectations(*d, impl.file, &report);
  report.detail = std::move(d);
  return report;
}

std::string FormatDiagnosis(const CheckReport& report, size_t detailed_blocked) {
  if (report.detail == nullptr || !report.detail->deadlock) return "";
  const CheckReport::Detail& d = *report.detail;
  return verifier::FormatDeadlockReport(*d.deadlock, *d.program, *d.engine, d.source,
                                        detailed_blocked);
}

std::string FormatBehaviour(const CheckReport& report, size_t last) {
  if (report.detail == nullptr) return "";
  return parity::report::BehaviourPrefix(*report.detail->program, *report.detail->engine, last);
}

std::string WaitForGraphDot(const CheckReport& report) {
  if (report.detail == nullptr || !report.detail->deadlock) return "";
  const CheckReport::Detail& d = *report.detail;
  return verifier::WaitForGraphDot(*d.deadlock, *d.program, *d.engine);
}

std::string PhasePictureHtml(const CheckReport& report, const std::string& title,
                             const std::string& outcome) {
  if (report.detail == nullptr) return "";
  const CheckReport::Detail& d = *report.detail;
  parity::report::PictureInput in;
  in.program = d.program.get();
  in.engine = d.engine.get();
  in.events = d.engine->trace();
  in.title = title;
  in.outcome = outcome;
  in.deadlock = d.deadlock ? &*d.deadlock : nullptr;
  return parity::report::PhasePictureHtml(in);
}

Result<uint64_t> WriteTrace(const CheckReport& report, const std::string& path) {
  if (report.detail == nullptr) {
    return Error{"io", "the report holds no run (not made by Check)", Location{path, 0, 0}};
  }
  const trace::TraceFile file = TraceOf(*report.detail);
  Status s = trace::WriteTraceFile(path, file);
  if (!s.ok()) return ToError(s);
  return static_cast<uint64_t>(file.events.size());
}

std::string DumpTrace(const CheckReport& report) {
  if (report.detail == nullptr) return "";
  return trace::DumpTrace(TraceOf(*report.detail));
}

// ---------------------------------------------------------------- Explore

Result<ExploreReport> Explore(const Schedule& schedule, const ExploreOptions& options) {
  verifier::ExploreOptions eo;
  eo.threads = std::max(1, options.threads);
  eo.max_states = options.max_states;
  eo.time_limit_s = options.time_limit_s;
  eo.reduction = options.reduction;
  eo.breadth_first = options.breadth_first;
  eo.shorten_budget_s = options.shorten_budget_s;
  eo.shortest_counterexample = options.shortest_counterexample;
  eo.strict = options.strict;
  eo.max_memory_bytes = options.max_memory_bytes;
  eo.check_rules = options.check_rules;
  eo.stop_at_first = options.stop_at_first;
  if (options.on_first_counterexample) {
    const ir::Program& program = *schedule.impl().program;
    eo.on_first_counterexample = [&program, &options](const verifier::ExploreResult& first) {
      options.on_first_counterexample(FirstReport(program, first, options.strict));
    };
  }
  return ExploreWith(schedule, eo);
}

std::string FormatDiagnosis(const ExploreReport& report, size_t detailed_blocked) {
  if (report.detail == nullptr || !report.detail->deadlock || report.detail->end == nullptr) {
    return "";
  }
  const ExploreReport::Detail& d = *report.detail;
  return verifier::FormatDeadlockReport(*d.deadlock, *d.program, *d.end, d.source,
                                        detailed_blocked);
}

Result<ExploreReport> ExploreWith(const Schedule& schedule,
                                  const verifier::ExploreOptions& options) {
  const Schedule::Impl& impl = schedule.impl();
  const SourceLocation file{impl.file, 0, 0};
  Result<std::vector<int64_t>> params = BindScheduleParams(schedule);
  if (!params.ok()) return params.error();
  auto d = std::make_shared<ExploreReport::Detail>();
  d->program = impl.program;
  d->source = impl.source;
  d->params = *params;
  d->param_values = ParamValues(*impl.program, d->params);
  d->options = options;
  d->result = verifier::Explore(*d->program, d->params, d->options);
  const verifier::ExploreResult& r = d->result;
  if (r.verdict == verifier::ExploreVerdict::kBadInput) return ToError(r.error.At(file));

  ExploreReport report;
  report.verdict = ToVerdict(r.verdict);
  report.stats = ToStats(r.stats);
  report.has_shortening_stats = r.has_bfs_stats;
  if (r.has_bfs_stats) report.shortening_stats = ToStats(r.bfs_stats);
  report.states = r.stats.states;
  report.transitions = r.stats.transitions;
  report.depth = r.stats.depth;
  report.seconds = r.stats.seconds;
  report.bound = r.bound;
  report.symmetry = r.symmetry;
  report.counterexample_shortest = r.counterexample_shortest;
  report.first_counterexample_steps = r.first_counterexample.size();
  report.first_counterexample_seconds = r.first_seconds;
  report.shortening = r.shortening;

  if (report.verdict != Verdict::kVerified && report.verdict != Verdict::kIncomplete) {
    const ir::Program& program = *d->program;
    // The search's one replay of its counterexample: the steps and the findings read it.
    d->end = r.replayed.end;
    PARITY_CHECK(d->end != nullptr, "explore: a counterexample comes replayed");
    const engine::Engine& end = *d->end;
    // The agents are fixed at creation: one locator serves every step.
    Locator loc(program, end);
    report.counterexample = StepsOf(loc, r.replayed);
    const engine::RunResult& rr = end.result();
    if (rr.outcome == engine::Outcome::kDeadlock) {
      d->deadlock =
          verifier::DiagnoseDeadlockWithRepair(program, end, rr, d->params, &r.counterexample);
      report.findings.push_back(FromDeadlock(program, loc, *d->deadlock));
    } else if (!r.findings.empty()) {
      for (const verifier::Finding& f : r.findings) {
        report.findings.push_back(FromRule(loc, f, options.strict));
      }
    } else if (rr.outcome == engine::Outcome::kViolation && rr.violation) {
      verifier::RepairOptions ro;
      ro.options = end.options();
      ro.counterexample = &r.counterexample;
      d->violation_culprit = verifier::FindCulpritOfViolation(program, d->params, end, ro);
      report.findings.push_back(FromViolation(loc, *rr.violation));
      AddViolationCulprit(loc, d->violation_culprit, &report.findings.back());
    }
    AddPieceFindings(program, r.in_pieces, &report.findings);
  }
  if (!r.warnings.empty()) {
    // Each warning comes from its own path: named by agent and statement only (agents are
    // fixed at creation: the counterexample's engine names them as a fresh one would).
    std::shared_ptr<const engine::Engine> names = d->end;
    if (names == nullptr) {
      Expected<engine::Engine> fresh = engine::Engine::Create(*d->program, d->params, {});
      if (!fresh.ok()) return ToError(fresh.status().At(file));
      names = std::make_shared<const engine::Engine>(std::move(fresh).value());
    }
    Locator loc(*d->program, *names);
    for (const verifier::Finding& w : r.warnings) {
      Finding f = BaseFinding(w.code());
      f.severity = FromModel(w.level(options.strict));
      f.message = w.message;
      f.agent = loc.Label(w.agent);
      f.location = ToLocation(w.where);
      if (w.agent != verifier::kNoFindingAgent) {
        f.related.push_back(Related{f.agent, "the culprit operation", f.location});
      }
      report.warnings.push_back(std::move(f));
    }
  }
  report.detail = std::move(d);
  return report;
}

}  // namespace parity::api
