// `parity check`, `parity run` and `parity explain`: run a schedule on the engine.
#include <spdlog/spdlog.h>

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "parity/detail.h"
#include "parity/parity.h"
#include "sim/engine/engine.h"
#include "sim/ir/hash.h"
#include "sim/model/codes.h"
#include "sim/trace/trace_file.h"
#include "tools/cli/command.h"
#include "tools/cli/diagnostics.h"
#include "tools/cli/phase_picture.h"
#include "tools/cli/report_format.h"
#include "tools/cli/schedule_loader.h"
#include "verifier/culprit.h"
#include "verifier/deadlock.h"
#include "verifier/expect.h"
#include "verifier/report/narrate.h"
#include "verifier/rules.h"

namespace parity::cli {
namespace {

// The event cap of check, run and explain: a run's trace is the memory it holds (32 bytes an
// event), so a schedule that never ends stops here with a message instead of exhausting memory.
constexpr uint64_t kDefaultMaxEvents = 20'000'000;

struct CheckOptions {
  ScheduleOptions schedule;
  std::string format = "text";
  bool full = false;
  // The behaviour's last events: enough to see the run up to a violation or deadlock, few enough
  // that the report with its diagnosis and up to --max-findings diagnostics fits a screen.
  size_t last = 12;
  std::string dot;
  uint64_t max_events = kDefaultMaxEvents;
  DiagnosticOptions diagnostics;
  bool strict = false;  // warnings of docs/levels.md are errors
};

struct Ran {
  LoadedSchedule loaded;
  std::shared_ptr<engine::Engine> engine;  // shared with the API's report (check)
  engine::RunResult result;
};

void AddMaxEventsOption(CLI::App* sub, uint64_t* max_events) {
  sub->add_option("--max-events", *max_events,
                  "stop the run after this many events (exit 2): the cap on its memory")
      ->check(CLI::Range(uint64_t{1}, uint64_t{1} << 40))
      ->capture_default_str();
}

// A run that reached the event cap (EngineOptions::max_events): bad input, exit 2.
Status EventCapStatus(const std::string& file, const engine::RunResult& r, uint64_t max_events) {
  return Status("limit.events",
                "the run stopped at the event cap after " + std::to_string(r.events) +
                    " events (" + std::to_string(r.steps) +
                    " steps) without ending: a loop that never ends, or a longer run than the "
                    "cap allows; --max-events N raises the cap (now " +
                    std::to_string(max_events) + ")",
                SourceLocation{file, 0, 0});
}

// Loads, builds and runs; on bad input reports it (exit 2) and returns false.
bool LoadAndRun(Context& ctx, const ScheduleOptions& options, Ran& out,
                uint64_t max_events = kDefaultMaxEvents) {
  Expected<LoadedSchedule> loaded = LoadSchedule(options);
  if (!loaded.ok()) {
    ReportBadInput(ctx, loaded.status());
    return false;
  }
  out.loaded = std::move(loaded).value();
  out.loaded.engine_options.max_events = max_events;
  Expected<engine::Engine> engine =
      engine::Engine::Create(*out.loaded.program, out.loaded.params, out.loaded.engine_options);
  if (!engine.ok()) {
    ReportBadInput(ctx, engine.status().At(SourceLocation{options.file, 0, 0}));
    return false;
  }
  out.engine = std::make_unique<engine::Engine>(std::move(engine).value());
  spdlog::debug("running {} with policy {}", options.file,
                engine::PolicyName(out.loaded.engine_options.policy));
  out.result = out.engine->Run();
  if (out.result.outcome == engine::Outcome::kStepLimit) {
    ReportBadInput(ctx, EventCapStatus(options.file, out.result, max_events));
    return false;
  }
  if (out.result.outcome == engine::Outcome::kError) {
    ReportBadInput(ctx, out.result.error.At(SourceLocation{options.file, 0, 0}));
    return false;
  }
  return true;
}

std::string PolicyText(const engine::EngineOptions& o) {
  std::string p = engine::PolicyName(o.policy);
  if (o.policy == engine::Policy::kRandom) p += " seed=" + std::to_string(o.seed);
  return p;
}

int ExitFor(const engine::RunResult& r) {
  switch (r.outcome) {
    case engine::Outcome::kCompleted:
      return kExitClean;
    case engine::Outcome::kDeadlock:
    case engine::Outcome::kViolation:
      return kExitViolations;
    case engine::Outcome::kStepLimit:
    case engine::Outcome::kError:
    case engine::Outcome::kRunning:
      break;
  }
  return kExitBadInput;
}

nlohmann::json ViolationJson(const Ran& ran, const engine::ViolationInfo& v) {
  return {{"code", std::string(model::CodeId(v.violation.code))},
          {"title", std::string(model::CodeTitle(v.violation.code))},
          {"message", report::ViolationText(*ran.loaded.program, v)},
          {"agent", verifier::AgentLabel(*ran.loaded.program, *ran.engine, v.agent)},
          {"location", LocationJson(v.where)},
          {"from_async", v.from_async}};
}

// The file's own `# expect:` lines (verifier/expect.h) that apply to this run: check lines whose
// -D values bind the params as this run's did and whose policy is this run's (or that hold under
// every policy: then their code). Each with "" if the run matches it, else what differs.
struct ExpectedByFile {
  verifier::Expectation expect;
  std::string difference;
};
std::vector<ExpectedByFile> ExpectationsOfFile(const CheckOptions& opt, Ran& ran,
                                               const std::vector<verifier::Finding>& findings,
                                               const verifier::DeadlockReport& report,
                                               const verifier::DeadlockCulprit* violation_culprit) {
  std::vector<ExpectedByFile> out;
  Expected<std::vector<verifier::Expectation>> expects =
      verifier::ReadExpectations(opt.schedule.file, ran.loaded.source);
  if (!expects.ok()) {  // a comment: reported, never a reason to refuse the schedule
    std::fprintf(stderr, "parity check: ignoring the file's expect lines: %s\n",
                 expects.status().ToString().c_str());
    return out;
  }
  const ir::Program& program = *ran.loaded.program;
  const engine::EngineOptions& o = ran.loaded.engine_options;
  for (const verifier::Expectation& x : *expects) {
    if (x.explore) continue;
    Expected<std::vector<int64_t>> params = ir::BindParams(program, x.defines);
    if (!params.ok() || *params != ran.loaded.params) continue;
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
    run.engine = ran.engine.get();
    run.result = &ran.result;
    run.findings = &findings;
    run.deadlock = ran.result.outcome == engine::Outcome::kDeadlock ? &report : nullptr;
    run.violation_culprit = violation_culprit;
    out.push_back({applied, verifier::MatchCheck(applied, run)});
  }
  return out;
}

// The report of `parity check`: text (with the narrated behaviour), JSON (schema
// parity.check/1) or SARIF; `checked` is the API's report (parity/parity.h) of the run in `ran`.
void PrintCheck(Context& ctx, const CheckOptions& opt, Ran& ran, const api::CheckReport& checked) {
  const ir::Program& program = *ran.loaded.program;
  const engine::RunResult& r = ran.result;
  size_t max_events = opt.full ? 0 : opt.last;
  // The protocol rules and races of verifier/rules.h (P2002..P2011) on the run's trace, and the
  // diagnosis of a deadlock: the API ran them.
  const std::vector<verifier::Finding>& findings = checked.detail->rule_findings;
  verifier::DeadlockReport report;
  if (r.outcome == engine::Outcome::kDeadlock) {
    report = *checked.detail->deadlock;
    if (!opt.dot.empty()) {
      std::ofstream dot(opt.dot);
      dot << verifier::WaitForGraphDot(report, program, *ran.engine);
      if (!dot) {
        ReportBadInput(ctx, Status("io", "cannot write the DOT file", SourceLocation{opt.dot}));
        return;
      }
    }
  }
  const std::vector<ExpectedByFile> expected =
      ExpectationsOfFile(opt, ran, findings, report, &checked.detail->violation_culprit);
  Expected<std::vector<Suppression>> allows =
      LoadSuppressions(opt.diagnostics, opt.schedule.file, ran.loaded.source);
  if (!allows.ok()) {
    ReportBadInput(ctx, allows.status());
    return;
  }
  // Every finding (the violation or deadlock, warnings, notes, the protocol rules' findings)
  // grouped and suppressed once, for the text, JSON and SARIF reports alike.
  const Diagnostics diags = Diagnose(checked.findings, std::move(allows).value());
  // A violation or deadlock ends the run; the exit code follows the errors left after
  // suppression (an intended finding, allowed with its reason, does not fail a CI job).
  int exit_code = ExitFor(r);
  if (exit_code == kExitClean && verifier::HasErrors(findings, opt.strict)) {
    exit_code = kExitViolations;
  }
  if (exit_code == kExitViolations && !diags.HasErrors()) exit_code = kExitClean;
  if (opt.format == "sarif") {
    // The behaviour that led to the findings, as each result's code flow: the last --last events
    // (--full: all), one step each.
    std::vector<api::Step> behaviour;
    if (!checked.findings.empty()) {
      const size_t n = checked.events.size();
      const size_t from = max_events == 0 || n <= max_events ? 0 : n - max_events;
      for (size_t i = from; i < n; ++i) {
        behaviour.push_back(
            api::Step{"event " + std::to_string(i + 1), checked.events[i].agent, false,
                      {checked.events[i]}});
      }
    }
    PrintDocument(SarifLog("check", opt.schedule.file, diags, behaviour, exit_code));
  } else if (opt.format == "json") {
    nlohmann::json j;
    j["schema"] = SchemaId("check");
    j["file"] = opt.schedule.file;
    j["expected_by_file"] = nlohmann::json::array();
    for (const ExpectedByFile& x : expected) {
      j["expected_by_file"].push_back({{"expect", x.expect.Text()},
                                       {"line", x.expect.where.line},
                                       {"matched", x.difference.empty()},
                                       {"difference", x.difference}});
    }
    j["schedule"] = program.name;
    j["hash"] = ir::ContentHashHex(program);
    j["policy"] = PolicyText(ran.loaded.engine_options);
    j["outcome"] = engine::OutcomeName(r.outcome);
    j["exit_code"] = exit_code;
    j["events"] = r.events;
    j["params"] = nlohmann::json::object();
    for (const auto& [name, value] : ran.loaded.param_values) j["params"][name] = value;
    if (r.violation) {
      j["violation"] = ViolationJson(ran, *r.violation);
      const verifier::DeadlockCulprit& c = checked.detail->violation_culprit;
      if (c.found) {  // the one change a re-run proved fixes it (verifier/culprit.h)
        j["violation"]["culprit"] = {{"cause", verifier::DeadlockCauseName(c.cause)},
                                     {"location", c.where.ToString()},
                                     {"line", c.where.line},
                                     {"changes", c.change_kind},
                                     {"suggested_change", c.change},
                                     {"explanation", c.text}};
      }
    }
    j["warnings"] = nlohmann::json::array();
    for (const auto& w : r.warnings) j["warnings"].push_back(ViolationJson(ran, w));
    // Every finding: the violation or deadlock, warnings, and the protocol rules' findings.
    j["findings"] = nlohmann::json::array();
    for (const api::Finding& f : checked.findings) j["findings"].push_back(FindingJson(f));
    for (const Diagnostic& g : diags.suppressed) {
      for (size_t i : g.members) j["findings"][i]["suppressed"] = true;
    }
    // The findings grouped as the text prints them, and the counts of its last line.
    j["diagnostics"] = diags.DiagnosticsJson();
    j["summary"] = diags.SummaryJson();
    if (r.outcome == engine::Outcome::kDeadlock) {
      nlohmann::json d;
      d["code"] = "P2001";
      d["summary"] = report.summary;
      if (report.culprit.found) {  // an earlier operation is the most likely cause
        const verifier::DeadlockCulprit& c = report.culprit;
        d["culprit"] = {{"agent", verifier::AgentLabel(program, *ran.engine, c.agent)},
                        {"cause", verifier::DeadlockCauseName(c.cause)},
                        {"barrier", program.barriers[c.barrier].name},
                        {"index", c.index},
                        {"cta", c.cta},
                        {"parity", c.parity},
                        {"location", c.where.ToString()},
                        {"explanation", c.text}};
        if (!c.change.empty()) {
          d["culprit"]["suggested_change"] = c.change;
          d["culprit"]["changes"] = c.change_kind;
          d["culprit"]["line"] = c.where.line;
        }
      }
      d["blocked"] = nlohmann::json::array();
      for (const auto& x : report.blocked) {
        nlohmann::json b;
        b["agent"] = verifier::AgentLabel(program, *ran.engine, x.blocked.agent);
        b["waits_on"] = engine::WaitKindName(x.blocked.wait);
        b["location"] = LocationJson(x.blocked.where);
        if (x.blocked.wait == engine::WaitKind::kMbarrierParity ||
            x.blocked.wait == engine::WaitKind::kMbarrierToken) {
          b["barrier"] = program.barriers[x.blocked.barrier].name;
          b["index"] = x.blocked.barrier_index;
          b["cta"] = x.blocked.cta;
          b["parity"] = x.blocked.parity;
          b["phase"] = x.blocked.state.phase;
          b["pending"] = x.blocked.state.pending_count;
          b["expected"] = x.blocked.state.expected_count;
          b["tx"] = x.blocked.state.tx_count;
        }
        b["cause"] = verifier::DeadlockCauseName(x.cause);
        b["explanation"] = x.cause_text;
        b["in_cycle"] = x.in_cycle;
        d["blocked"].push_back(b);
      }
      j["deadlock"] = d;
    }
    PrintDocument(j);
  } else {
    std::printf("%s: schedule %s (hash %s), policy %s\n", opt.schedule.file.c_str(),
                program.name.c_str(), ir::ContentHashHex(program).c_str(),
                PolicyText(ran.loaded.engine_options).c_str());
    // Notes (M1009) are no problems; suppressed findings were intended.
    bool problems = false;
    for (const Diagnostic& g : diags.shown) {
      problems = problems || diags.findings[g.members.front()].severity != api::Severity::kNote;
    }
    switch (r.outcome) {
      case engine::Outcome::kCompleted:
        std::printf(!problems
                        ? "OK: the run completed: all %zu agent(s) of %u CTA(s) exited, %llu "
                          "events, no violations.\n"
                    : !verifier::HasErrors(findings, opt.strict)
                        ? "OK with warnings: the run completed (all %zu agent(s) of %u CTA(s) "
                          "exited, %llu events); the protocol rules found only warnings "
                          "(docs/levels.md; --strict makes them errors):\n"
                        : "The run completed (all %zu agent(s) of %u CTA(s) exited, %llu "
                          "events), but the protocol rules found problems:\n",
                    ran.engine->num_agents(), ran.engine->num_ctas(),
                    static_cast<unsigned long long>(r.events));
        break;
      case engine::Outcome::kViolation: {
        // The API's first finding: the message names the barrier.
        const api::Finding& v = checked.findings.front();
        std::printf("%s %s: %s\n  by %s at %s\n", v.code.c_str(), v.title.c_str(),
                    v.message.c_str(), v.agent.c_str(), v.location.ToString().c_str());
        if (const verifier::DeadlockCulprit& c = checked.detail->violation_culprit; c.found) {
          std::printf("\nMost likely cause (%s) at %s: %s\n", verifier::DeadlockCauseName(c.cause),
                      c.where.ToString().c_str(), c.text.c_str());
        }
        std::printf("\nBehaviour (events from the start):\n%s",
                    report::BehaviourPrefix(program, *ran.engine, max_events).c_str());
        break;
      }
      case engine::Outcome::kDeadlock:
        // --full: every blocked agent in full; else the root causes, the rest one line each.
        std::printf("%s", verifier::FormatDeadlockReport(report, program, *ran.engine,
                                                         ran.loaded.source,
                                                         opt.full ? SIZE_MAX : kDetailedBlocked)
                              .c_str());
        std::printf("\nBehaviour (events from the start):\n%s",
                    report::BehaviourPrefix(program, *ran.engine, max_events).c_str());
        break;
      case engine::Outcome::kStepLimit:
        std::printf("step limit reached after %llu steps (a runaway loop?)\n",
                    static_cast<unsigned long long>(r.steps));
        break;
      default:
        break;
    }
    // The violation or deadlock was printed in full above (the API's first finding).
    const bool ended = r.outcome == engine::Outcome::kViolation ||
                       r.outcome == engine::Outcome::kDeadlock;
    PrintDiagnostics(diags, opt.diagnostics, ended ? 0 : static_cast<size_t>(-1));
    for (const ExpectedByFile& x : expected) {
      std::printf("expected by the file (line %d): %s — %s\n", x.expect.where.line,
                  x.expect.Text().c_str(),
                  x.difference.empty() ? "matched" : ("NOT matched: " + x.difference).c_str());
    }
    std::printf("%s\n", diags.SummaryLine().c_str());
  }
  ctx.exit_code = exit_code;
}

}  // namespace

void AddCheckCommand(CLI::App& app, Context& ctx) {
  auto opt = std::make_shared<CheckOptions>();
  CLI::App* sub = app.add_subcommand(
      "check", "run a schedule once and report whether it completes (exit 0), or the violation "
               "or deadlock it reaches (exit 1) with a diagnosis");
  AddScheduleOptions(sub, opt->schedule);
  sub->add_option("--format", opt->format,
                  "text, json (schema parity.check/1) or sarif (SARIF 2.1.0)")
      ->check(CLI::IsMember({"text", "json", "sarif"}))
      ->capture_default_str();
  sub->add_flag("--full", opt->full,
                "print every event of the behaviour, not only the last ones, and describe every "
                "blocked agent of a deadlock in full");
  sub->add_option("--last", opt->last, "events of the behaviour to print")->capture_default_str();
  sub->add_option("--dot", opt->dot, "write the wait-for graph of a deadlock (Graphviz DOT)");
  sub->add_flag("--strict", opt->strict,
                "findings that are warnings (docs/levels.md: only the formal model leaves them "
                "unordered, on patterns production code relies on) are errors (exit 1)");
  AddMaxEventsOption(sub, &opt->max_events);
  AddDiagnosticOptions(sub, opt->diagnostics);
  sub->callback([&ctx, opt] {
    ctx.format = opt->format;
    // A client of the C++ API (parity/parity.h), as a kernel project's test would be.
    Expected<api::Schedule> schedule = LoadApiSchedule(opt->schedule);
    if (!schedule.ok()) {
      ReportBadInput(ctx, schedule.status());
      return;
    }
    Expected<engine::Policy> policy = ParseSchedulePolicy(opt->schedule.policy);
    if (!policy.ok()) {
      ReportBadInput(ctx, policy.status());
      return;
    }
    engine::EngineOptions options;
    options.policy = *policy;
    options.seed = opt->schedule.seed;
    options.max_events = opt->max_events;
    // SARIF's code flow shows the events; the text report narrates from the engine itself.
    api::Result<api::CheckReport> report =
        api::CheckWith(*schedule, options, /*collect_events=*/opt->format == "sarif",
                       opt->strict);
    if (!report.ok()) {
      ReportBadInput(ctx, ToStatus(report.error()));
      return;
    }
    // The run, as the text report reads it.
    const api::CheckReport::Detail& d = *report->detail;
    if (d.result.outcome == engine::Outcome::kStepLimit) {
      ReportBadInput(ctx, EventCapStatus(opt->schedule.file, d.result, opt->max_events));
      return;
    }
    Ran ran;
    ran.loaded.source = d.source;
    ran.loaded.program = d.program;
    ran.loaded.params = d.params;
    ran.loaded.param_values = d.param_values;
    ran.loaded.engine_options = d.engine_options;
    ran.engine = d.engine;
    ran.result = d.result;
    PrintCheck(ctx, *opt, ran, *report);
  });
}

void AddRunCommand(CLI::App& app, Context& ctx) {
  struct RunOptions {
    ScheduleOptions schedule;
    std::string trace;
    bool dump = false;
    uint64_t max_events = kDefaultMaxEvents;
  };
  auto opt = std::make_shared<RunOptions>();
  CLI::App* sub = app.add_subcommand("run", "run a schedule and write its event trace");
  AddScheduleOptions(sub, opt->schedule);
  sub->add_option("--trace", opt->trace, "the trace file to write")->required();
  sub->add_flag("--dump", opt->dump, "also print the trace as text");
  AddMaxEventsOption(sub, &opt->max_events);
  sub->callback([&ctx, opt] {
    Ran ran;
    if (!LoadAndRun(ctx, opt->schedule, ran, opt->max_events)) return;
    trace::TraceFile file;
    file.header.schedule_hash = ir::ContentHash(*ran.loaded.program);
    file.header.source = "sim";
    file.header.device = "parity-engine";
    file.header.schedule = ran.loaded.program->name;
    file.header.policy = PolicyText(ran.loaded.engine_options);
    file.header.params = ran.loaded.param_values;
    file.events = ran.engine->trace();
    Status s = trace::WriteTraceFile(opt->trace, file);
    if (!s.ok()) {
      ReportBadInput(ctx, s);
      return;
    }
    if (opt->dump) std::printf("%s", trace::DumpTrace(file).c_str());
    std::printf("%s: %s, %zu events written to %s\n", opt->schedule.file.c_str(),
                engine::OutcomeName(ran.result.outcome), file.events.size(), opt->trace.c_str());
    ctx.exit_code = ExitFor(ran.result);
  });
}

void AddExplainCommand(CLI::App& app, Context& ctx) {
  struct ExplainOptions {
    ScheduleOptions schedule;
    std::string html;
    uint64_t max_events = kDefaultMaxEvents;
  };
  auto opt = std::make_shared<ExplainOptions>();
  CLI::App* sub = app.add_subcommand(
      "explain", "teaching mode: narrate every event and what it does to its barrier");
  AddScheduleOptions(sub, opt->schedule);
  sub->add_option("--html", opt->html,
                  "also write the phase picture: one self-contained HTML page (lanes per barrier "
                  "and agent, phases, waits, copies and remote arrives as arrows)");
  AddMaxEventsOption(sub, &opt->max_events);
  sub->callback([&ctx, opt] {
    Ran ran;
    if (!LoadAndRun(ctx, opt->schedule, ran, opt->max_events)) return;
    const ir::Program& program = *ran.loaded.program;
    std::printf("Schedule %s (%s), policy %s.\n\n", program.name.c_str(),
                opt->schedule.file.c_str(), PolicyText(ran.loaded.engine_options).c_str());
    for (const report::Narration& n : report::NarrateRun(program, *ran.engine, ran.engine->trace())) {
      std::printf("%s\n", n.Text().c_str());
    }
    std::printf("\nOutcome: %s\n", engine::OutcomeName(ran.result.outcome));
    std::optional<verifier::DeadlockReport> report;
    std::string outcome = std::string("outcome: ") + engine::OutcomeName(ran.result.outcome);
    if (ran.result.outcome == engine::Outcome::kDeadlock) {
      report = verifier::DiagnoseDeadlockWithRepair(program, *ran.engine, ran.result,
                                                    ran.loaded.params);
      std::printf("%s", verifier::FormatDeadlockReport(*report, program, *ran.engine,
                                                       ran.loaded.source)
                            .c_str());
      outcome = report->summary;
    } else if (ran.result.outcome == engine::Outcome::kViolation) {
      const auto& v = *ran.result.violation;
      outcome = std::string(model::CodeId(v.violation.code)) + " " +
                std::string(model::CodeTitle(v.violation.code)) + ": " +
                report::ViolationText(program, v);
      std::printf("%s\n", outcome.c_str());
    }
    ctx.exit_code = ExitFor(ran.result);
    if (!opt->html.empty()) {
      PictureInput in;
      in.program = &program;
      in.engine = ran.engine.get();
      in.events = ran.engine->trace();
      in.title = "parity explain " + opt->schedule.file + " (schedule " + program.name +
                 ", policy " + PolicyText(ran.loaded.engine_options) + ")";
      in.outcome = outcome;
      in.deadlock = report ? &*report : nullptr;
      std::ofstream out(opt->html, std::ios::binary);
      out << PhasePictureHtml(in);
      out.close();
      if (!out) {
        return ReportBadInput(ctx, Status("io", "cannot write the HTML file",
                                          SourceLocation{opt->html, 0, 0}));
      }
      std::printf("wrote the phase picture to %s\n", opt->html.c_str());
    }
  });
}

}  // namespace parity::cli
