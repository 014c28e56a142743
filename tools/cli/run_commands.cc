// `parity check`, `parity run` and `parity explain`: run a schedule once. Each is a client of the
// C++ API (parity/parity.h), as a kernel project's test would be: api::Check runs and diagnoses,
// and words, narrates, draws and writes what it found.
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "parity/parity.h"
#include "tools/cli/command.h"
#include "tools/cli/diagnostics.h"
#include "tools/cli/report_format.h"
#include "tools/cli/schedule_loader.h"

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

// A schedule run once through the API: the schedule (with its -D overrides) and the report.
struct Ran {
  api::Schedule schedule;
  api::CheckReport report;
};

void AddMaxEventsOption(CLI::App* sub, uint64_t* max_events) {
  sub->add_option("--max-events", *max_events,
                  "stop the run after this many events (exit 2): the cap on its memory")
      ->check(CLI::Range(uint64_t{1}, uint64_t{1} << 40))
      ->capture_default_str();
}

// A run that reached the event cap (CheckOptions::max_events): bad input, exit 2.
Status EventCapStatus(const std::string& file, const api::CheckReport& r, uint64_t max_events) {
  return Status("limit.events",
                "the run stopped at the event cap after " + std::to_string(r.events_count) +
                    " events (" + std::to_string(r.steps) +
                    " steps) without ending: a loop that never ends, or a longer run than the "
                    "cap allows; --max-events N raises the cap (now " +
                    std::to_string(max_events) + ")",
                SourceLocation{file, 0, 0});
}

// Loads and runs the schedule through the API (api::Check); on bad input (the event cap
// included) reports it (exit 2) and returns nullopt.
std::optional<Ran> LoadAndRun(Context& ctx, const ScheduleOptions& options, uint64_t max_events,
                              bool collect_events, bool narrate, bool strict = false) {
  Expected<api::Schedule> schedule = LoadApiSchedule(options);
  if (!schedule.ok()) {
    ReportBadInput(ctx, schedule.status());
    return std::nullopt;
  }
  Expected<api::Policy> policy = ParseSchedulePolicy(options.policy);
  if (!policy.ok()) {
    ReportBadInput(ctx, policy.status());
    return std::nullopt;
  }
  api::CheckOptions co;
  co.policy = *policy;
  co.seed = options.seed;
  co.max_events = max_events;
  co.collect_events = collect_events;
  co.narrate = narrate;
  co.strict = strict;
  api::Result<api::CheckReport> report = api::Check(*schedule, co);
  if (!report.ok()) {
    ReportBadInput(ctx, ToStatus(report.error()));
    return std::nullopt;
  }
  if (report->outcome == api::Outcome::kStepLimit) {
    ReportBadInput(ctx, EventCapStatus(options.file, *report, max_events));
    return std::nullopt;
  }
  return Ran{std::move(schedule).value(), std::move(report).value()};
}

int ExitFor(api::Outcome o) {
  switch (o) {
    case api::Outcome::kCompleted:
      return kExitClean;
    case api::Outcome::kDeadlock:
    case api::Outcome::kViolation:
      return kExitViolations;
    case api::Outcome::kStepLimit:
      break;
  }
  return kExitBadInput;
}

nlohmann::json ViolationJson(const api::Violation& v) {
  return {{"code", v.code},
          {"title", v.title},
          {"message", v.message},
          {"agent", v.agent},
          {"location", LocationJson(v.location)},
          {"from_async", v.from_async}};
}

nlohmann::json DeadlockJson(const api::Deadlock& deadlock) {
  nlohmann::json d;
  d["code"] = "P2001";
  d["summary"] = deadlock.summary;
  if (deadlock.culprit.found) {  // an earlier operation is the most likely cause
    const api::Culprit& c = deadlock.culprit;
    d["culprit"] = {{"agent", c.agent},
                    {"cause", c.cause},
                    {"barrier", c.barrier},
                    {"index", c.index},
                    {"cta", c.cta},
                    {"parity", c.parity},
                    {"location", c.location.ToString()},
                    {"explanation", c.explanation}};
    if (!c.suggested_change.empty()) {
      d["culprit"]["suggested_change"] = c.suggested_change;
      d["culprit"]["changes"] = c.changes;
      d["culprit"]["line"] = c.location.line;
    }
  }
  d["blocked"] = nlohmann::json::array();
  for (const api::BlockedAgent& x : deadlock.blocked) {
    nlohmann::json b;
    b["agent"] = x.agent;
    b["waits_on"] = x.waits_on;
    b["location"] = LocationJson(x.location);
    if (x.on_mbarrier) {
      b["barrier"] = x.barrier;
      b["index"] = x.index;
      b["cta"] = x.cta;
      b["parity"] = x.parity;
      b["phase"] = x.phase;
      b["pending"] = x.pending;
      b["expected"] = x.expected;
      b["tx"] = x.tx;
    }
    b["cause"] = x.cause;
    b["explanation"] = x.explanation;
    b["in_cycle"] = x.in_cycle;
    d["blocked"].push_back(b);
  }
  return d;
}

// --format json (schema parity.check/1).
void PrintCheckJson(const CheckOptions& opt, const Ran& ran, const Diagnostics& diags,
                    int exit_code) {
  const api::CheckReport& r = ran.report;
  nlohmann::json j;
  j["schema"] = SchemaId("check");
  j["file"] = opt.schedule.file;
  j["expected_by_file"] = nlohmann::json::array();
  for (const api::FileExpectation& x : r.expected_by_file) {
    j["expected_by_file"].push_back({{"expect", x.expect},
                                     {"line", x.line},
                                     {"matched", x.difference.empty()},
                                     {"difference", x.difference}});
  }
  j["schedule"] = ran.schedule.name();
  j["hash"] = ran.schedule.hash();
  j["policy"] = r.policy;
  j["outcome"] = api::OutcomeName(r.outcome);
  j["exit_code"] = exit_code;
  j["events"] = r.events_count;
  j["params"] = nlohmann::json::object();
  for (const api::Schedule::Param& p : ran.schedule.params()) j["params"][p.name] = p.value;
  if (r.violation) {
    j["violation"] = ViolationJson(*r.violation);
    const api::Culprit& c = r.violation_culprit;
    if (c.found) {  // the one change a re-run proved fixes it (verifier/culprit.h)
      j["violation"]["culprit"] = {{"cause", c.cause},
                                   {"location", c.location.ToString()},
                                   {"line", c.location.line},
                                   {"changes", c.changes},
                                   {"suggested_change", c.suggested_change},
                                   {"explanation", c.explanation}};
    }
  }
  j["warnings"] = nlohmann::json::array();
  for (const api::Violation& w : r.model_warnings) j["warnings"].push_back(ViolationJson(w));
  // Every finding: the violation or deadlock, warnings, and the protocol rules' findings.
  j["findings"] = nlohmann::json::array();
  for (const api::Finding& f : r.findings) j["findings"].push_back(FindingJson(f));
  for (const Diagnostic& g : diags.suppressed) {
    for (size_t i : g.members) j["findings"][i]["suppressed"] = true;
  }
  // The findings grouped as the text prints them, and the counts of its last line.
  j["diagnostics"] = diags.DiagnosticsJson();
  j["summary"] = diags.SummaryJson();
  if (r.deadlock) j["deadlock"] = DeadlockJson(*r.deadlock);
  PrintDocument(j);
}

// The text report: the headline of the outcome, the diagnosis and the narrated behaviour, the
// other diagnostics, the file's expectations and the summary line.
void PrintCheckText(const CheckOptions& opt, const Ran& ran, const Diagnostics& diags) {
  const api::CheckReport& r = ran.report;
  const size_t max_events = opt.full ? 0 : opt.last;
  std::printf("%s: schedule %s (hash %s), policy %s\n", opt.schedule.file.c_str(),
              ran.schedule.name().c_str(), ran.schedule.hash().c_str(), r.policy.c_str());
  // Notes (M1009) are no problems; suppressed findings were intended.
  bool problems = false;
  for (const Diagnostic& g : diags.shown) {
    problems = problems || diags.findings[g.members.front()].severity != api::Severity::kNote;
  }
  switch (r.outcome) {
    case api::Outcome::kCompleted:
      std::printf(!problems
                      ? "OK: the run completed: all %zu agent(s) of %u CTA(s) exited, %llu "
                        "events, no violations.\n"
                  : !r.rule_errors
                      ? "OK with warnings: the run completed (all %zu agent(s) of %u CTA(s) "
                        "exited, %llu events); the protocol rules found only warnings "
                        "(docs/levels.md; --strict makes them errors):\n"
                      : "The run completed (all %zu agent(s) of %u CTA(s) exited, %llu "
                        "events), but the protocol rules found problems:\n",
                  r.agents, r.ctas, static_cast<unsigned long long>(r.events_count));
      break;
    case api::Outcome::kViolation: {
      // The API's first finding: the message names the barrier.
      const api::Finding& v = r.findings.front();
      std::printf("%s %s: %s\n  by %s at %s\n", v.code.c_str(), v.title.c_str(),
                  v.message.c_str(), v.agent.c_str(), v.location.ToString().c_str());
      if (const api::Culprit& c = r.violation_culprit; c.found) {
        std::printf("\nMost likely cause (%s) at %s: %s\n", c.cause.c_str(),
                    c.location.ToString().c_str(), c.explanation.c_str());
      }
      std::printf("\nBehaviour (events from the start):\n%s",
                  api::FormatBehaviour(r, max_events).c_str());
      break;
    }
    case api::Outcome::kDeadlock:
      // --full: every blocked agent in full; else the root causes, the rest one line each.
      std::printf("%s", api::FormatDiagnosis(r, opt.full ? SIZE_MAX : kDetailedBlocked).c_str());
      std::printf("\nBehaviour (events from the start):\n%s",
                  api::FormatBehaviour(r, max_events).c_str());
      break;
    case api::Outcome::kStepLimit:
      std::printf("step limit reached after %llu steps (a runaway loop?)\n",
                  static_cast<unsigned long long>(r.steps));
      break;
  }
  // The violation or deadlock was printed in full above (the API's first finding).
  const bool ended = r.outcome == api::Outcome::kViolation || r.outcome == api::Outcome::kDeadlock;
  PrintDiagnostics(diags, opt.diagnostics, ended ? 0 : static_cast<size_t>(-1));
  for (const api::FileExpectation& x : r.expected_by_file) {
    std::printf("expected by the file (line %d): %s — %s\n", x.line, x.expect.c_str(),
                x.difference.empty() ? "matched" : ("NOT matched: " + x.difference).c_str());
  }
  std::printf("%s\n", diags.SummaryLine().c_str());
}

// The report of `parity check`: text (with the narrated behaviour), JSON (schema
// parity.check/1) or SARIF.
void PrintCheck(Context& ctx, const CheckOptions& opt, const Ran& ran) {
  const api::CheckReport& r = ran.report;
  if (r.deadlock && !opt.dot.empty()) {
    std::ofstream dot(opt.dot);
    dot << api::WaitForGraphDot(r);
    if (!dot) {
      ReportBadInput(ctx, Status("io", "cannot write the DOT file", SourceLocation{opt.dot}));
      return;
    }
  }
  if (!r.expectations_error.empty()) {
    // A comment: reported, never a reason to refuse the schedule.
    std::fprintf(stderr, "parity check: ignoring the file's expect lines: %s\n",
                 r.expectations_error.c_str());
  }
  Expected<std::vector<Suppression>> allows =
      LoadSuppressions(opt.diagnostics, opt.schedule.file, ran.schedule.source());
  if (!allows.ok()) {
    ReportBadInput(ctx, allows.status());
    return;
  }
  // Every finding (the violation or deadlock, warnings, notes, the protocol rules' findings)
  // grouped and suppressed once, for the text, JSON and SARIF reports alike.
  const Diagnostics diags = Diagnose(r.findings, std::move(allows).value());
  // A violation or deadlock ends the run; the exit code follows the errors left after
  // suppression (an intended finding, allowed with its reason, does not fail a CI job).
  int exit_code = ExitFor(r.outcome);
  if (exit_code == kExitClean && r.rule_errors) exit_code = kExitViolations;
  if (exit_code == kExitViolations && !diags.HasErrors()) exit_code = kExitClean;
  if (opt.format == "sarif") {
    // The behaviour that led to the findings, as each result's code flow: the last --last events
    // (--full: all), one step each.
    std::vector<api::Step> behaviour;
    if (!r.findings.empty()) {
      const size_t max_events = opt.full ? 0 : opt.last;
      const size_t n = r.events.size();
      const size_t from = max_events == 0 || n <= max_events ? 0 : n - max_events;
      for (size_t i = from; i < n; ++i) {
        behaviour.push_back(
            api::Step{"event " + std::to_string(i + 1), r.events[i].agent, false, {r.events[i]}});
      }
    }
    PrintDocument(SarifLog("check", opt.schedule.file, diags, behaviour, exit_code));
  } else if (opt.format == "json") {
    PrintCheckJson(opt, ran, diags, exit_code);
  } else {
    PrintCheckText(opt, ran, diags);
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
    // SARIF's code flow shows the events; the text report narrates through the API.
    std::optional<Ran> ran =
        LoadAndRun(ctx, opt->schedule, opt->max_events,
                   /*collect_events=*/opt->format == "sarif", /*narrate=*/false, opt->strict);
    if (ran) PrintCheck(ctx, *opt, *ran);
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
    std::optional<Ran> ran = LoadAndRun(ctx, opt->schedule, opt->max_events,
                                        /*collect_events=*/false, /*narrate=*/false);
    if (!ran) return;
    api::Result<uint64_t> written = api::WriteTrace(ran->report, opt->trace);
    if (!written.ok()) {
      ReportBadInput(ctx, ToStatus(written.error()));
      return;
    }
    if (opt->dump) std::printf("%s", api::DumpTrace(ran->report).c_str());
    std::printf("%s: %s, %llu events written to %s\n", opt->schedule.file.c_str(),
                api::OutcomeName(ran->report.outcome), static_cast<unsigned long long>(*written),
                opt->trace.c_str());
    ctx.exit_code = ExitFor(ran->report.outcome);
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
    std::optional<Ran> ran = LoadAndRun(ctx, opt->schedule, opt->max_events,
                                        /*collect_events=*/false, /*narrate=*/true);
    if (!ran) return;
    const api::CheckReport& r = ran->report;
    std::printf("Schedule %s (%s), policy %s.\n\n", ran->schedule.name().c_str(),
                opt->schedule.file.c_str(), r.policy.c_str());
    for (const std::string& n : r.narration) std::printf("%s\n", n.c_str());
    std::printf("\nOutcome: %s\n", api::OutcomeName(r.outcome));
    std::string outcome = std::string("outcome: ") + api::OutcomeName(r.outcome);
    if (r.deadlock) {
      std::printf("%s", api::FormatDiagnosis(r, SIZE_MAX).c_str());
      outcome = r.deadlock->summary;
    } else if (r.violation) {
      outcome = r.violation->code + " " + r.violation->title + ": " + r.violation->message;
      std::printf("%s\n", outcome.c_str());
    }
    ctx.exit_code = ExitFor(r.outcome);
    if (!opt->html.empty()) {
      const std::string title = "parity explain " + opt->schedule.file + " (schedule " +
                                ran->schedule.name() + ", policy " + r.policy + ")";
      std::ofstream out(opt->html, std::ios::binary);
      out << api::PhasePictureHtml(r, title, outcome);
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
