#include "tools/cli/report_format.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>

#include "sim/common/json_text.h"
#include "tools/cli/version.h"

namespace parity::cli {
namespace {

using nlohmann::json;
// SARIF logs keep their keys in the order the format shows them ("version" first, so that
// readers can tell the version from the first bytes).
using ojson = nlohmann::ordered_json;

// The base the relative URIs resolve against: the working directory, which is the repository
// root when CI runs `parity` there (code-scanning uploads resolve relative URIs against the
// repository).
constexpr char kSrcRoot[] = "%SRCROOT%";

// RFC 3986 unreserved characters and '/' stay, every other byte is percent-encoded.
std::string PercentEncode(const std::string& path) {
  static const char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : path) {
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
        c == '.' || c == '_' || c == '~' || c == '/') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

// The working directory, empty when it cannot be read.
std::filesystem::path WorkingDirectory() {
  std::error_code ec;
  std::filesystem::path cwd = std::filesystem::current_path(ec);
  return ec ? std::filesystem::path() : cwd;
}

// SARIF's artifactLocation for a path (its uri is a URI, not a file name). A file under the
// working directory, however it was named (absolute, `./x`, `../dir/x`), is a relative reference
// from there without `.` or `..` segments, with uriBaseId %SRCROOT%: a relative reference that
// climbs out of the base, or an absolute one, would point code-review systems outside the
// repository. A file elsewhere is an absolute file: URI.
ojson ArtifactLocation(const std::string& file) {
  namespace fs = std::filesystem;
  const fs::path cwd = WorkingDirectory();
  fs::path path(file);
  if (!cwd.empty()) {
    const fs::path absolute = (path.is_absolute() ? path : cwd / path).lexically_normal();
    const fs::path relative = absolute.lexically_relative(cwd);
    if (!relative.empty() && *relative.begin() != ".." && relative != ".") {
      return {{"uri", PercentEncode(relative.generic_string())}, {"uriBaseId", kSrcRoot}};
    }
    path = absolute;
  }
  if (path.is_absolute()) return {{"uri", "file://" + PercentEncode(path.generic_string())}};
  return {{"uri", PercentEncode(path.generic_string())}};
}

// A SARIF physicalLocation; the region only where a line is known (startLine is at least 1).
ojson PhysicalLocation(const api::Location& where) {
  ojson p = {{"artifactLocation", ArtifactLocation(where.file)}};
  if (where.line > 0) {
    ojson region = {{"startLine", where.line}};
    if (where.column > 0) region["startColumn"] = where.column;
    p["region"] = region;
  }
  return p;
}

const char* Level(api::Severity s) {
  return s == api::Severity::kError ? "error" : s == api::Severity::kNote ? "note" : "warning";
}

}  // namespace

std::string SchemaId(const std::string& command) { return "parity." + command + "/1"; }

json LocationJson(const api::Location& where) {
  if (!where.known()) return nullptr;
  return {{"file", where.file}, {"line", where.line}, {"column", where.column}};
}

json LocationJson(const SourceLocation& where) {
  return LocationJson(api::Location{where.file, where.line, where.column});
}

json FindingJson(const api::Finding& f) {
  json related = json::array();
  for (const api::Related& r : f.related) {
    related.push_back(
        {{"agent", r.agent}, {"message", r.message}, {"location", LocationJson(r.location)}});
  }
  json out = {{"code", f.code},       {"slug", f.slug},
              {"title", f.title},     {"severity", api::SeverityName(f.severity)},
              {"message", f.message}, {"agent", f.agent},
              {"location", LocationJson(f.location)}, {"related", related}};
  if (!f.suggested_change.empty()) {
    out["culprit"] = {{"cause", f.culprit_cause},
                      {"location", LocationJson(f.culprit_location)},
                      {"suggested_change", f.suggested_change}};
  }
  return out;
}

json EventJson(const api::Event& e) {
  return {{"text", e.text}, {"agent", e.agent}, {"location", LocationJson(e.location)}};
}

json StepJson(const api::Step& s) {
  json events = json::array();
  for (const api::Event& e : s.events) events.push_back(EventJson(e));
  return {{"label", s.label},
          {"agent", s.agent},
          {"asynchronous", s.asynchronous},
          {"events", events}};
}

json RuleJson(const api::Rule& r) {
  return {{"code", r.code},
          {"slug", r.slug},
          {"severity", api::SeverityName(r.severity)},
          {"title", r.title},
          {"explanation", r.explanation},
          {"citation", r.citation}};
}

json ErrorJson(const std::string& command, const Status& status) {
  return {{"schema", SchemaId(command)},
          {"error",
           {{"rule", status.rule()},
            {"message", status.message()},
            {"location", LocationJson(status.where())},
            {"text", status.ToString()}}}};
}

ojson SarifLog(const std::string& command, const std::string& file,
               const Diagnostics& diagnostics,
               const std::vector<api::Step>& steps, int exit_code, const Status& error,
               const std::string& warning) {
  ojson rules = ojson::array();
  std::map<std::string, int> rule_index;
  for (const api::Rule& r : api::Rules()) {
    rule_index[r.code] = static_cast<int>(rules.size());
    std::string help = r.explanation;
    if (!r.citation.empty()) help += "\n\nSource: " + r.citation + ".";
    help += "\nRun `parity rules " + r.code + "` for this text.";
    rules.push_back({{"id", r.code},
                     {"name", r.slug},
                     {"shortDescription", {{"text", r.title}}},
                     {"fullDescription", {{"text", r.explanation}}},
                     {"help", {{"text", help}}},
                     {"defaultConfiguration", {{"level", Level(r.severity)}}},
                     {"properties", {{"tags", {"parity", r.slug}}}}});
    // The specification the rule comes from, where it names one (the deadlock and the
    // whole-program rules are Parity's own).
    if (!r.citation.empty()) rules.back()["properties"]["citation"] = r.citation;
  }

  // The steps as one thread flow: every event with a statement, in order.
  ojson flow_locations = ojson::array();
  for (const api::Step& s : steps) {
    for (const api::Event& e : s.events) {
      if (!e.location.known()) continue;
      flow_locations.push_back(
          {{"location",
            {{"physicalLocation", PhysicalLocation(e.location)},
             {"message", {{"text", s.label + ": " + e.text}}}}}});
    }
  }

  ojson results = ojson::array();
  std::vector<const Diagnostic*> groups;
  for (const Diagnostic& g : diagnostics.shown) groups.push_back(&g);
  for (const Diagnostic& g : diagnostics.suppressed) groups.push_back(&g);
  for (const Diagnostic* g : groups) {
    const api::Finding& f = diagnostics.findings[g->members.front()];
    std::string text = f.title + ": " + f.message;
    if (!g->more.empty()) text += " (" + g->more + ")";
    ojson result = {{"ruleId", f.code},
                   {"level", Level(f.severity)},
                   {"message", {{"text", text}}}};
    if (g->members.size() > 1) result["occurrenceCount"] = g->members.size();
    if (g->suppressed) {
      // SARIF 2.1.0 §3.35: inSource for an allow comment of the schedule, external for a line
      // of a --suppressions file.
      const bool in_source = g->allowed_at.file == f.location.file ||
                             std::any_of(f.related.begin(), f.related.end(),
                                         [g](const api::Related& r) {
                                           return r.location.file == g->allowed_at.file;
                                         });
      ojson sup = {{"kind", in_source ? "inSource" : "external"}, {"status", "accepted"}};
      if (!g->reason.empty()) sup["justification"] = g->reason;
      if (g->allowed_at.known()) {
        sup["location"] = {{"physicalLocation", PhysicalLocation(g->allowed_at)}};
      }
      result["suppressions"] = ojson::array({sup});
    }
    auto it = rule_index.find(f.code);
    if (it != rule_index.end()) result["ruleIndex"] = it->second;
    if (f.location.known()) {
      ojson loc = {{"physicalLocation", PhysicalLocation(f.location)}};
      if (!f.agent.empty()) loc["message"] = {{"text", f.agent}};
      result["locations"] = ojson::array({loc});
    }
    ojson related = ojson::array();
    int id = 0;
    for (const api::Related& r : f.related) {
      if (!r.location.known()) continue;
      related.push_back({{"id", id++},
                         {"physicalLocation", PhysicalLocation(r.location)},
                         {"message", {{"text", r.agent + ": " + r.message}}}});
    }
    if (!related.empty()) result["relatedLocations"] = related;
    if (!f.suggested_change.empty()) {  // a deadlock culprit proved by a re-run
      result["properties"] = {{"culpritCause", f.culprit_cause},
                              {"culpritLine", f.culprit_location.line},
                              {"suggestedChange", f.suggested_change}};
    }
    if (!flow_locations.empty()) {
      result["codeFlows"] = ojson::array(
          {{{"message", {{"text", command == "explore"
                                      ? "the counterexample, from the initial state"
                                      : "the run's last events before the finding"}}},
            {"threadFlows", ojson::array({{{"locations", flow_locations}}})}}});
    }
    results.push_back(result);
  }

  ojson invocation = {{"executionSuccessful", error.ok()}, {"exitCode", exit_code},
                     {"arguments", ojson::array({command})}};
  if (!error.ok()) {
    ojson notification = {{"level", "error"},
                         {"message", {{"text", error.ToString()}}},
                         {"descriptor", {{"id", error.rule()}}}};
    if (!error.where().file.empty()) {
      const SourceLocation& w = error.where();
      ojson location = {
          {"physicalLocation", PhysicalLocation(api::Location{w.file, w.line, w.column})}};
      notification["locations"] = ojson::array({location});
    }
    invocation["toolExecutionNotifications"] = ojson::array({notification});
  } else {
    ojson notifications = ojson::array();
    if (!warning.empty()) {
      notifications.push_back({{"level", "warning"}, {"message", {{"text", warning}}}});
    }
    for (const Suppression& u : diagnostics.unused) {
      std::string codes;
      for (const std::string& c : u.codes) codes += (codes.empty() ? "" : ", ") + c;
      notifications.push_back(
          {{"level", "warning"},
           {"message", {{"text", "`allow " + codes + "` matches no finding of this run"}}},
           {"locations", ojson::array({{{"physicalLocation", PhysicalLocation(u.origin)}}})}});
    }
    if (!notifications.empty()) invocation["toolExecutionNotifications"] = notifications;
  }

  ojson driver = {{"name", "parity"},
                 {"version", kParityVersion},
                 {"semanticVersion", kParityVersion},
                 {"rules", rules}};
  ojson run = {{"tool", {{"driver", driver}}}};
  // The category of the analysis (up to the last '/'): the command and the schedule as its
  // artifact URI names it, so that reruns of one schedule update one analysis. SARIF's id is a
  // plain string; the URI form keeps it free of spaces and control bytes.
  std::string category = "parity/" + command + "/";
  if (!file.empty()) category += ArtifactLocation(file)["uri"].get<std::string>() + "/";
  run["automationDetails"] = {{"id", category}};
  const std::filesystem::path cwd = WorkingDirectory();
  if (!cwd.empty()) {
    std::string base = cwd.generic_string();
    if (base.back() != '/') base += '/';
    run["originalUriBaseIds"] = {{kSrcRoot, {{"uri", "file://" + PercentEncode(base)}}}};
  }
  run["invocations"] = ojson::array({invocation});
  run["results"] = results;
  // The counts of the text report's last line (and of the json document's "summary").
  if (error.ok()) {
    const json summary = diagnostics.SummaryJson();
    run["properties"]["summary"] = ojson::parse(summary.dump());
  }
  return {{"version", "2.1.0"},
          {"$schema", "https://json.schemastore.org/sarif-2.1.0.json"},
          {"runs", ojson::array({run})}};
}

void AddFormatOption(CLI::App* sub, std::string& format, const std::string& command) {
  sub->add_option("--format", format, "text or json (schema " + SchemaId(command) + ")")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
}

void PrintDocument(const json& j) { std::printf("%s\n", JsonText(j, 2).c_str()); }
// JsonText's rule (sim/common/json_text.h: invalid UTF-8 replaced, never thrown) for a document
// whose keys keep their order.
void PrintDocument(const ojson& j) {
  std::printf("%s\n",
              j.dump(2, ' ', /*ensure_ascii=*/false, ojson::error_handler_t::replace).c_str());
}

}  // namespace parity::cli
