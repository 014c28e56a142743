// `parity explore`: every interleaving of a schedule's agent steps and asynchronous completions
// (verifier/explore.h), with the counterexample as numbered states: the depth-first search's
// first one as soon as it is found, then a shorter one if the shortening finds it.
#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <set>
#include <string>

#include "parity/parity.h"
#include "tools/cli/command.h"
#include "tools/cli/diagnostics.h"
#include "tools/cli/report_format.h"
#include "tools/cli/schedule_loader.h"

namespace parity::cli {
namespace {

// A numeric option that must be at least `lo` (CLI11's own range checks print DBL_MAX as the
// upper end). The conversion itself is CLI11's.
CLI::Validator AtLeast(double lo, const std::string& meaning) {
  return CLI::Validator(
      [lo, meaning](std::string& in) -> std::string {
        char* end = nullptr;
        const double v = std::strtod(in.c_str(), &end);
        if (end == in.c_str() || *end != '\0' || v >= lo) return "";
        return "must be at least " + meaning + " (got " + in + ")";
      },
      "", "at least " + meaning);
}

struct ExploreCliOptions {
  ScheduleOptions schedule;
  uint64_t max_states = 50'000'000;
  double time_limit = 0;
  // MiB of resident memory; the default stays well below a 24 GiB workstation's memory.
  uint64_t max_memory_mib = 8192;
  int threads = 1;
  bool no_reduction = false;
  bool measure_reduction = false;
  bool breadth_first = false;
  bool shortest = false;
  double shorten_budget = 2;
  bool strict = false;
  std::string format = "text";
  bool verbose = false;  // the symmetry reduction's account, the first counterexample
  bool full = false;     // every step of the counterexample, not only the finding's agents'
  DiagnosticOptions diagnostics;
};

std::string StepLabel(const api::Step& s) {
  if (!s.asynchronous) return s.agent + " takes a step";
  return "an asynchronous operation of " + s.agent + " completes";
}

// found: the search stopped at a finding (else only a bound stops it early).
void PrintStats(const api::SearchStats& s, const char* label, bool found) {
  // Enabled steps are taken, pruned by the reduction, or (the search stopped early) left.
  const uint64_t chosen = s.enabled - s.pruned;
  const uint64_t left = chosen > s.transitions ? chosen - s.transitions : 0;
  std::string not_taken = std::to_string(s.pruned) + " pruned by the reduction";
  if (left != 0) {
    not_taken += ", " + std::to_string(left) +
                 (found ? " left when the search stopped at its finding"
                        : " left when the bound stopped the search");
  }
  // Brute force: transitions whose successor's fingerprint was predicted and found stored.
  std::string predicted;
  if (s.predicted != 0) {
    predicted = ", " + std::to_string(s.predicted) +
                " of them to stored states predicted without stepping";
  }
  // The states held besides the table: the depth-first path's engines, the parallel search's
  // engines, or the one-thread breadth-first search's packed frontier.
  char held[128];
  if (s.frontier_bytes != 0) {
    std::snprintf(held, sizeof held, "frontier of %llu states at most (%.1f MB packed)",
                  static_cast<unsigned long long>(s.peak_frontier), double(s.frontier_bytes) / 1e6);
  } else {
    std::snprintf(held, sizeof held, "%llu engine copies held at most",
                  static_cast<unsigned long long>(s.peak_frontier));
  }
  std::printf(
      "%s: %llu states explored (%llu expanded), %llu transitions taken of %llu enabled "
      "(%s)%s, depth %u, %.3f s, %.0f states/s, "
      "%.1f bytes/state (fingerprint table + parent records), %s\n",
      label, static_cast<unsigned long long>(s.states),
      static_cast<unsigned long long>(s.expanded),
      static_cast<unsigned long long>(s.transitions), static_cast<unsigned long long>(s.enabled),
      not_taken.c_str(), predicted.c_str(), s.depth, s.seconds, s.states_per_second,
      s.bytes_per_state, held);
  std::printf("  terminal states: %llu completed, %llu deadlocked, %llu violating; protocol "
              "rules (P2002..P2011) run on %llu completed path%s (one per distinct completed "
              "end state), %llu with errors\n",
              static_cast<unsigned long long>(s.completed_ends),
              static_cast<unsigned long long>(s.deadlock_ends),
              static_cast<unsigned long long>(s.violation_ends),
              static_cast<unsigned long long>(s.rule_paths), s.rule_paths == 1 ? "" : "s",
              static_cast<unsigned long long>(s.rule_violation_ends));
  if (s.history_states > 0) {
    std::printf("  protocol rules and races on every path (verifier/every_path.h): %llu (state, "
                "history) pairs, rules run on %llu completed ones\n",
                static_cast<unsigned long long>(s.history_states),
                static_cast<unsigned long long>(s.history_completed));
  }
}

// Narrates a counterexample (the API's steps: the search's one replay of it) as numbered states
// from the start.
void NarrateSteps(const std::vector<api::Step>& steps) {
  std::printf("State 0: initial state\n");
  size_t state = 0;
  for (const api::Step& s : steps) {
    std::printf("State %zu: %s\n", ++state, StepLabel(s).c_str());
    for (const api::Event& e : s.events) std::printf("    %s\n", e.text.c_str());
  }
}

const char* FoundSentence(api::Verdict v) {
  switch (v) {
    case api::Verdict::kDeadlock:
      return "a reachable interleaving deadlocks (P2001).";
    case api::Verdict::kViolation:
      return "a reachable interleaving violates a rule of the model.";
    case api::Verdict::kRuleViolation:
      return "a reachable interleaving completes but breaks a protocol rule.";
    default:
      return "";
  }
}

// The finding at the end of the first counterexample: protocol rule errors, or the model
// violation of the run's end; a deadlock is diagnosed in full only for the reported one.
void PrintFindingLines(const api::ExploreReport& first) {
  switch (first.verdict) {
    case api::Verdict::kRuleViolation:
      std::printf("The run completes, but breaks protocol rules (verifier/rules.h):\n");
      for (const api::Finding& f : first.findings) {
        std::printf("%s %s: %s\n  at %s\n", f.code.c_str(), f.title.c_str(), f.message.c_str(),
                    f.location.ToString().c_str());
      }
      break;
    case api::Verdict::kViolation:
      for (const api::Finding& f : first.findings) {
        std::printf("%s %s: %s\n  by %s at %s\n", f.code.c_str(), f.title.c_str(),
                    f.message.c_str(), f.agent.c_str(), f.location.ToString().c_str());
      }
      break;
    case api::Verdict::kDeadlock:
      std::printf("P2001 deadlock: no agent can step and nothing is in flight (diagnosed with the "
                  "reported counterexample below)\n");
      break;
    default:
      break;
  }
}

// The depth-first search found something (its on_first_counterexample: the shortening runs
// after it). Only the news is printed here: the diagnosis and the counterexample come at the
// end, once, after the shortening (with --verbose the first counterexample too).
void PrintFirstFound(const api::ExploreOptions& eo, bool verbose, const api::ExploreReport& first) {
  std::printf("FOUND after %.3f s (depth-first search, a counterexample of %zu steps): %s\n",
              first.first_counterexample_seconds, first.counterexample.size(),
              FoundSentence(first.verdict));
  if (verbose) {
    std::printf("\nFirst counterexample (%zu steps, replayed), as numbered states from the "
                "start:\n",
                first.counterexample.size());
    NarrateSteps(first.counterexample);
    std::printf("\n");
    PrintFindingLines(first);
  }
  if (eo.shortest_counterexample) {
    std::printf("searching breadth-first for the shortest counterexample (--shortest)...\n");
  } else if (eo.shorten_budget_s > 0) {
    std::printf("shortening it (at most %g s; --shortest searches for the shortest without "
                "that budget)...\n",
                eo.shorten_budget_s);
  }
  std::fflush(stdout);
}

// Whether a step of the counterexample is one of the finding's: taken by (or completing an
// operation of) an agent the findings name, or acting on an object they name.
bool StepMatters(const api::Step& step, const std::set<std::string>& agents,
                 const std::set<std::string>& objects) {
  if (agents.count(step.agent) != 0) return true;
  for (const api::Event& e : step.events) {
    for (const std::string& o : objects) {
      const size_t at = e.text.find(o);
      if (at == std::string::npos) continue;
      const size_t after = at + o.size();
      const bool word_start = at == 0 || !(std::isalnum(static_cast<unsigned char>(e.text[at - 1])) ||
                                           e.text[at - 1] == '_');
      const bool word_end = after == e.text.size() || e.text[after] == '[' || e.text[after] == ' ';
      if (word_start && word_end) return true;
    }
  }
  return false;
}

// At most this many of the finding's steps are printed by default (the last ones: those before
// the finding), so that a report of a 900-step counterexample fits a screen; --full prints all.
constexpr size_t kCompactSteps = 12;

// The counterexample of the API's report, after the diagnosis: the steps of the agents and
// objects the findings name (--full: every step), as numbered states from the start.
void PrintCounterexample(const api::ExploreReport& report, bool full) {
  const std::vector<api::Step>& steps = report.counterexample;
  if (steps.empty() && report.verdict == api::Verdict::kRuleViolation) {
    // An `exists` property (P2034): every complete run refutes it, no single path does.
    std::printf("\nNo counterexample: the property is false in every end state of a complete "
                "run (%llu distinct, every one reached by the search).\n",
                static_cast<unsigned long long>(report.stats.completed_ends));
    return;
  }
  std::string how;
  // A shortened counterexample is strictly shorter than the first (a path of the same length is
  // the first itself).
  if (report.first_counterexample_steps != 0 &&
      report.first_counterexample_steps != steps.size()) {
    how = "the first had " + std::to_string(report.first_counterexample_steps) + "; ";
  }
  how += report.shortening;
  if (!report.counterexample_shortest) how += "; NOT known to be the shortest";
  std::set<std::string> agents, objects;
  for (const api::Finding& f : report.findings) {
    if (!f.agent.empty()) agents.insert(f.agent);
    for (const api::Related& x : f.related) {
      if (!x.agent.empty()) agents.insert(x.agent);
    }
    if (!f.object.empty()) objects.insert(f.object);
  }
  std::vector<size_t> shown;
  for (size_t i = 0; i < steps.size(); ++i) {
    if (full || StepMatters(steps[i], agents, objects)) shown.push_back(i);
  }
  size_t earlier = 0;
  if (!full && shown.size() > kCompactSteps) {
    earlier = shown.size() - kCompactSteps;
    shown.erase(shown.begin(), shown.begin() + static_cast<long>(earlier));
  }
  std::printf("\n%s counterexample: %zu steps (%s); %s:\n",
              report.counterexample_shortest ? "Shortest" : "The", steps.size(), how.c_str(),
              full ? "every step"
                   : "the steps of the agents and objects named above (--full: every step)");
  std::printf("State 0: initial state\n");
  if (earlier > 0) {
    std::printf("    ... %zu earlier steps of theirs and every other agent's\n", earlier);
  }
  size_t next = shown.empty() ? steps.size() : (earlier > 0 ? shown.front() : 0);
  for (size_t i : shown) {
    if (i > next) {
      std::printf("    ... %zu step%s of other agents\n", i - next, i - next == 1 ? "" : "s");
    }
    // The state after the step, named by its first event (the label says no more than that),
    // then the step's other events.
    const std::vector<api::Event>& events = steps[i].events;
    std::printf("State %zu: %s\n", i + 1,
                events.empty() ? steps[i].label.c_str() : events.front().text.c_str());
    for (size_t k = 1; k < events.size(); ++k) std::printf("    %s\n", events[k].text.c_str());
    next = i + 1;
  }
  if (next < steps.size() && !shown.empty()) {
    const size_t n = steps.size() - next;
    std::printf("    ... %zu step%s of other agents\n", n, n == 1 ? "" : "s");
  }
}

// The findings at the end of the counterexample, then the warnings of every path: what the
// diagnostics group (JSON and SARIF index them in this order).
std::vector<api::Finding> AllFindings(const api::ExploreReport& report) {
  std::vector<api::Finding> all = report.findings;
  all.insert(all.end(), report.warnings.begin(), report.warnings.end());
  return all;
}

int ExploreExit(api::Verdict v) {
  switch (v) {
    case api::Verdict::kVerified:
      return kExitClean;
    case api::Verdict::kIncomplete:
      return kExitIncomplete;
    default:
      return kExitViolations;
  }
}

nlohmann::json StatsJson(const api::SearchStats& s) {
  return {{"states", s.states},           {"expanded", s.expanded},
          {"transitions", s.transitions}, {"enabled", s.enabled},
          {"pruned", s.pruned},           {"depth", s.depth},
          {"seconds", s.seconds},         {"completed_ends", s.completed_ends},
          {"deadlock_ends", s.deadlock_ends}, {"violation_ends", s.violation_ends},
          {"history_states", s.history_states}, {"history_completed", s.history_completed}};
}

// --format json (schema parity.explore/1) or sarif.
void PrintExploreDocument(Context& ctx, const ExploreCliOptions& opt, const api::Schedule& schedule,
                          const api::ExploreOptions& eo, const api::ExploreReport& report,
                          const Diagnostics& diags) {
  ctx.exit_code = ExploreExit(report.verdict);
  // As the text report: a search stopped at an allowed finding verified nothing.
  if (ctx.exit_code == kExitViolations && !diags.HasErrors()) ctx.exit_code = kExitIncomplete;
  if (opt.format == "sarif") {
    // An incomplete search has no results and must not read as verified.
    const std::string warning =
        report.verdict == api::Verdict::kIncomplete
            ? "INCOMPLETE (not verified): " + report.bound + " stopped the search after " +
                  std::to_string(report.states) + " states; nothing was found in the part covered"
            : "";
    // Warnings (docs/levels.md) are results at level "warning", whatever the verdict: diags
    // holds the findings and the warnings.
    nlohmann::ordered_json log = SarifLog("explore", opt.schedule.file, diags,
                                          report.counterexample, ctx.exit_code, Status(), warning);
    if (!report.counterexample.empty()) {
      // The same account of the counterexample as the json document (a run's property bag).
      nlohmann::ordered_json c = {{"length", report.counterexample.size()},
                                  {"shortest", report.counterexample_shortest},
                                  {"shortening", report.shortening}};
      if (report.first_counterexample_steps != 0) {
        c["firstLength"] = report.first_counterexample_steps;
        c["firstSeconds"] = report.first_counterexample_seconds;
      }
      log["runs"][0]["properties"]["counterexample"] = c;
    }
    PrintDocument(log);
    return;
  }
  nlohmann::json j;
  j["schema"] = SchemaId("explore");
  j["file"] = opt.schedule.file;
  j["schedule"] = schedule.name();
  j["hash"] = schedule.hash();
  j["params"] = nlohmann::json::object();
  for (const api::Schedule::Param& p : schedule.params()) j["params"][p.name] = p.value;
  j["verdict"] = api::VerdictName(report.verdict);
  j["exit_code"] = ctx.exit_code;
  j["complete"] = report.verdict != api::Verdict::kIncomplete;
  j["bound"] = report.bound;
  j["reduction"] = eo.reduction;
  j["breadth_first"] = eo.breadth_first;
  j["threads"] = eo.threads;
  j["symmetry"] = report.symmetry;
  j["stats"] = StatsJson(report.stats);
  if (report.has_shortening_stats) j["shortest_search_stats"] = StatsJson(report.shortening_stats);
  j["findings"] = nlohmann::json::array();
  for (const api::Finding& f : report.findings) j["findings"].push_back(FindingJson(f));
  j["warnings"] = nlohmann::json::array();
  for (const api::Finding& f : report.warnings) j["warnings"].push_back(FindingJson(f));
  // The diagnostics group the findings and then the warnings (indices in that order).
  for (const Diagnostic& g : diags.suppressed) {
    for (size_t i : g.members) {
      if (i < report.findings.size()) {
        j["findings"][i]["suppressed"] = true;
      } else {
        j["warnings"][i - report.findings.size()]["suppressed"] = true;
      }
    }
  }
  j["diagnostics"] = diags.DiagnosticsJson();
  j["summary"] = diags.SummaryJson();
  if (!report.counterexample.empty()) {
    nlohmann::json steps = nlohmann::json::array();
    for (const api::Step& s : report.counterexample) steps.push_back(StepJson(s));
    j["counterexample"] = {{"shortest", report.counterexample_shortest},
                           {"length", report.counterexample.size()},
                           {"shortening", report.shortening},
                           {"steps", steps}};
  } else {
    j["counterexample"] = nullptr;
  }
  // The depth-first search's first counterexample (text prints it as soon as it is found; a
  // document is printed once, at the end): its length and when it was found.
  if (report.first_counterexample_steps != 0) {
    j["first_counterexample"] = {{"length", report.first_counterexample_steps},
                                 {"seconds", report.first_counterexample_seconds}};
  } else {
    j["first_counterexample"] = nullptr;
  }
  PrintDocument(j);
}

void RunExplore(Context& ctx, const ExploreCliOptions& opt) {
  ctx.format = opt.format;
  // A client of the C++ API (parity/parity.h), as a kernel project's test would be.
  Expected<api::Schedule> schedule = LoadApiSchedule(opt.schedule);
  if (!schedule.ok()) {
    ReportBadInput(ctx, schedule.status());
    return;
  }
  api::Result<std::vector<api::Schedule::Param>> bound = schedule->BoundParams();
  if (!bound.ok()) {
    ReportBadInput(ctx, ToStatus(bound.error()));
    return;
  }
  const bool text = opt.format == "text";
  if (text) {
    std::printf("%s: schedule %s (hash %s)", opt.schedule.file.c_str(), schedule->name().c_str(),
                schedule->hash().c_str());
    for (const api::Schedule::Param& p : *bound) {
      std::printf(" %s=%lld", p.name.c_str(), static_cast<long long>(p.value));
    }
    std::printf("\n");
  }
  api::ExploreOptions eo;
  eo.threads = std::max(1, opt.threads);
  eo.max_states = opt.max_states;
  eo.time_limit_s = opt.time_limit;
  eo.max_memory_bytes = opt.max_memory_mib << 20;
  eo.reduction = !opt.no_reduction;
  eo.breadth_first = opt.breadth_first;
  eo.shortest_counterexample = opt.shortest;
  eo.shorten_budget_s = opt.shorten_budget;
  eo.strict = opt.strict;
  if (text) {
    const bool verbose = opt.verbose;
    eo.on_first_counterexample = [&eo, verbose](const api::ExploreReport& first) {
      PrintFirstFound(eo, verbose, first);
    };
  }
  Expected<std::vector<Suppression>> allows =
      LoadSuppressions(opt.diagnostics, opt.schedule.file, schedule->source());
  if (!allows.ok()) {
    ReportBadInput(ctx, allows.status());
    return;
  }
  if (!text) {
    api::Result<api::ExploreReport> report = api::Explore(*schedule, eo);
    if (!report.ok()) {
      ReportBadInput(ctx, ToStatus(report.error()));
      return;
    }
    PrintExploreDocument(ctx, opt, *schedule, eo, *report,
                         Diagnose(AllFindings(*report), std::move(allows).value()));
    return;
  }
  std::printf("exploring every interleaving of agent steps and asynchronous completions (%s; "
              "%s)\n",
              eo.reduction ? "partial-order reduction"
                           : "no reduction: every interleaving",
              eo.breadth_first && eo.threads > 1
                  ? "breadth-first, level by level, expansions on parallel threads"
              : eo.breadth_first ? "breadth-first"
              : eo.threads > 1
                  ? "depth-first on parallel threads sharing one visited set; a counterexample "
                    "is shortened when found"
                  : "depth-first; a counterexample is shortened when found");
  api::Result<api::ExploreReport> report = api::Explore(*schedule, eo);
  if (!report.ok()) {
    ReportBadInput(ctx, ToStatus(report.error()));
    return;
  }
  const api::ExploreReport& r = *report;
  // Whether symmetry reduction applied, and why not: for those who tune the search.
  if (opt.verbose) std::printf("%s\n", r.symmetry.c_str());
  const bool found = r.verdict != api::Verdict::kVerified && r.verdict != api::Verdict::kIncomplete;
  PrintStats(r.stats, eo.breadth_first ? "search (breadth-first)" : "search (depth-first)", found);
  if (r.has_shortening_stats) {
    PrintStats(r.shortening_stats,
               eo.shortest_counterexample
                   ? "breadth-first search for the shortest counterexample"
                   : "breadth-first search for a shorter counterexample (to one step less than it)",
               found);
  }
  // The reduction factor needs the same search without reduction (the brute force): work
  // nobody asked for unless --measure-reduction asks, and then in full (bounded only by what
  // --time-limit leaves).
  const bool complete = r.verdict == api::Verdict::kVerified;
  if (opt.measure_reduction && eo.reduction && !complete) {
    std::printf("  reduction factor: not measured (the search %s)\n",
                r.verdict == api::Verdict::kIncomplete
                    ? "is incomplete"
                    : "stopped at a finding; the brute-force search would stop elsewhere");
  } else if (opt.measure_reduction && eo.reduction && eo.time_limit_s > 0 &&
             r.stats.seconds >= eo.time_limit_s) {
    std::printf("  reduction factor: not measured (no time left under --time-limit)\n");
  } else if (opt.measure_reduction && eo.reduction) {
    api::ExploreOptions full = eo;
    full.reduction = false;
    full.check_rules = false;
    full.stop_at_first = false;
    full.breadth_first = false;
    full.threads = 1;  // the brute force as before: depth-first, one engine per level
    full.on_first_counterexample = nullptr;
    full.shorten_budget_s = 0;
    // --time-limit bounds the whole run: the brute force gets what the search left.
    if (full.time_limit_s > 0) full.time_limit_s -= r.stats.seconds;
    api::Result<api::ExploreReport> u = api::Explore(*schedule, full);
    if (!u.ok()) {
      ReportBadInput(ctx, ToStatus(u.error()));
      return;
    }
    PrintStats(u->stats, "brute force (no reduction, no symmetry)", false);
    std::printf("  reduction factor: %s%.2fx fewer states than the brute-force search%s\n",
                u->verdict == api::Verdict::kIncomplete ? "at least " : "",
                r.stats.states ? double(u->stats.states) / double(r.stats.states) : 0.0,
                u->verdict == api::Verdict::kIncomplete
                    ? " (the brute-force search was stopped by --time-limit)"
                    : "");
  }
  // Warnings (docs/levels.md) go with the findings into the diagnostics: printed with every
  // verdict (before VERIFIED, which names them, so that a verified schedule with warnings never
  // reads as one without), counted in the summary.
  const Diagnostics diags = Diagnose(AllFindings(*report), std::move(allows).value());
  const size_t warned = report->warnings.size();
  const std::string warnings =
      warned == 0 ? ""
                  : ", " + std::to_string(warned) + (warned == 1 ? " warning" : " warnings") +
                        " (above; --strict makes them errors)";
  switch (r.verdict) {
    case api::Verdict::kVerified:
      PrintDiagnostics(diags, opt.diagnostics);
      std::printf("VERIFIED: the search was complete; every reachable run completes (%llu "
                  "distinct completed end state%s), no violation, no deadlock%s.\n",
                  static_cast<unsigned long long>(r.stats.completed_ends),
                  r.stats.completed_ends == 1 ? "" : "s", warnings.c_str());
      std::printf("%s\n", diags.SummaryLine().c_str());
      ctx.exit_code = kExitClean;
      return;
    case api::Verdict::kIncomplete:
      // Only a breadth-first search covers whole levels; a depth-first one has covered some
      // paths (its depth is the longest), nothing that can be stated as a bound.
      if (eo.breadth_first) {
        std::printf("INCOMPLETE (not verified): %s stopped the search after %llu states; "
                    "covered: every state reachable within %u steps (breadth-first, in the "
                    "explored graph) and part of the next level; no violation or deadlock "
                    "there.\n",
                    r.bound.c_str(), static_cast<unsigned long long>(r.stats.states),
                    r.stats.depth);
      } else {
        std::printf("INCOMPLETE (not verified): %s stopped the search after %llu states; "
                    "covered: only part of the state graph (depth-first: the states of some "
                    "paths, up to %u steps long), with no violation or deadlock there; --bfs "
                    "covers it level by level and says which levels are complete.\n",
                    r.bound.c_str(), static_cast<unsigned long long>(r.stats.states),
                    r.stats.depth);
      }
      PrintDiagnostics(diags, opt.diagnostics);
      std::printf("%s\n", diags.SummaryLine().c_str());
      ctx.exit_code = kExitIncomplete;
      return;
    case api::Verdict::kDeadlock:
    case api::Verdict::kViolation:
    case api::Verdict::kRuleViolation:
      std::printf("FOUND: %s\n", FoundSentence(r.verdict));
      break;
  }
  // The diagnosis first, then the counterexample that reaches it.
  size_t printed_in_full = static_cast<size_t>(-1);
  const std::string diagnosis = api::FormatDiagnosis(r, opt.full ? SIZE_MAX : kDetailedBlocked);
  if (!diagnosis.empty()) {
    std::printf("%s", diagnosis.c_str());
    printed_in_full = 0;  // the API's deadlock finding
  }
  PrintDiagnostics(diags, opt.diagnostics, printed_in_full);
  // A model violation's culprit that a re-run proved (the deadlock's is in its diagnosis).
  if (r.verdict == api::Verdict::kViolation && !r.findings.empty() &&
      !r.findings.front().culprit_cause.empty()) {
    const api::Finding& f = r.findings.front();
    std::printf("Most likely cause (%s) at %s: %s\n", f.culprit_cause.c_str(),
                f.culprit_location.ToString().c_str(), f.culprit_text.c_str());
  }
  PrintCounterexample(*report, opt.full);
  ctx.exit_code = kExitViolations;
  if (!diags.HasErrors()) {
    // The search stops at its first finding: with that one allowed, the rest of the state
    // graph was not searched, so this is no verification.
    std::printf("INCOMPLETE (not verified): the search stopped at a finding the schedule "
                "allows (suppressed); the states beyond it were not searched.\n");
    ctx.exit_code = kExitIncomplete;
  }
  std::printf("%s\n", diags.SummaryLine().c_str());
}

}  // namespace

void AddExploreCommand(CLI::App& app, Context& ctx) {
  auto opt = std::make_shared<ExploreCliOptions>();
  CLI::App* sub = app.add_subcommand(
      "explore",
      "explore every interleaving of agent steps and async completions (depth-first with "
      "partial-order reduction; at a finding its counterexample is shortened, then the "
      "diagnosis is printed, then the steps of the agents it names).\n"
      "Exit codes: 0 verified (complete search, nothing found); 1 a violation or deadlock was "
      "found (counterexample printed); 2 bad input or usage; 3 internal error; "
      "4 incomplete: a bound (--max-states, --time-limit) stopped the search and nothing was "
      "found in the part covered (NOT verified).");
  sub->add_option("file", opt->schedule.file, "the schedule (.pipe)")->required();
  sub->add_option("-D,--define", opt->schedule.defines,
                  "override a param: -D STAGES=4 (repeatable)")
      ->take_all();
  sub->add_option("--max-states", opt->max_states, "stop after storing this many states")
      ->check(AtLeast(1, "1"))
      ->capture_default_str();
  sub->add_option("--time-limit", opt->time_limit, "stop after this many seconds (0: none)")
      ->check(AtLeast(0, "0 (0: no time limit)"))
      ->capture_default_str();
  sub->add_option("--max-memory", opt->max_memory_mib,
                  "stop (incomplete, exit 4) once the process holds this many MiB of memory")
      ->check(CLI::Range(uint64_t{64}, uint64_t{1} << 30))
      ->capture_default_str();
  sub->add_option("--threads", opt->threads,
                  "worker threads; more than one: a depth-first search on that many threads "
                  "sharing one visited set (the same verdict and end states as one thread; "
                  "which counterexample comes first varies), or with --bfs a breadth-first one "
                  "with the same result as --bfs on one thread (only a --time-limit cut varies); "
                  "the search of the rules and races on every path runs on as many threads")
      ->check(CLI::Range(1, 1024))
      ->capture_default_str();
  // The switches, in the order --help lists them: the search's, then the report's.
  struct Flag {
    const char* name;
    bool ExploreCliOptions::*member;
    std::string help;
  };
  const Flag search_flags[] = {
      {"--no-reduction", &ExploreCliOptions::no_reduction,
       "explore every interleaving without partial-order reduction (brute force; the "
       "counterexample is then the shortest of the schedule)"},
      {"--bfs", &ExploreCliOptions::breadth_first,
       "breadth-first throughout (default: depth-first, which holds only the current path in "
       "memory; its counterexample is then shortened)"},
      {"--shortest", &ExploreCliOptions::shortest,
       "after the depth-first search found something, search breadth-first for the shortest "
       "counterexample, bounded only by --time-limit (default: the first counterexample is "
       "printed at once, then shortened within --shorten-budget)"},
  };
  for (const Flag& f : search_flags) sub->add_flag(f.name, (*opt).*f.member, f.help);
  sub->add_option("--shorten-budget", opt->shorten_budget,
                  "seconds spent shortening the first counterexample (dropping steps, replayed "
                  "on the engine, then a breadth-first search bounded by its length); 0: none; "
                  "--time-limit bounds the whole run")
      ->check(AtLeast(0, "0"))
      ->capture_default_str();
  const Flag report_flags[] = {
      {"--measure-reduction", &ExploreCliOptions::measure_reduction,
       "also run the search without reduction (the brute force, bounded only by --time-limit) "
       "and print the reduction factor; text only"},
      {"--verbose", &ExploreCliOptions::verbose,
       "also print whether symmetry reduction applied (and why not) and the depth-first "
       "search's first counterexample as soon as it is found"},
      {"--full", &ExploreCliOptions::full,
       "print every step of the counterexample (default: the steps of the agents and objects "
       "the finding names, the last " + std::to_string(kCompactSteps) + ")"},
  };
  for (const Flag& f : report_flags) sub->add_flag(f.name, (*opt).*f.member, f.help);
  AddDiagnosticOptions(sub, opt->diagnostics);
  sub->add_flag("--strict", opt->strict,
                "findings that are warnings (docs/levels.md: only the formal model leaves them "
                "unordered, on patterns production code relies on) count as errors: a path with "
                "one is a counterexample");
  sub->add_option("--format", opt->format,
                  "text, json (schema parity.explore/1) or sarif (SARIF 2.1.0)")
      ->check(CLI::IsMember({"text", "json", "sarif"}))
      ->capture_default_str();
  sub->callback([&ctx, opt] { RunExplore(ctx, *opt); });
}

}  // namespace parity::cli
