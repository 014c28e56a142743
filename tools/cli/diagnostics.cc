#include "tools/cli/diagnostics.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>
#include <tuple>

#include "sim/common/read_file.h"

namespace parity::cli {
namespace {

std::string Trim(const std::string& s) {
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return s.substr(b, e - b);
}

bool KnownCode(const std::string& code) {
  static const std::set<std::string> codes = [] {
    std::set<std::string> out;
    for (const api::Rule& r : api::Rules()) out.insert(r.code);
    return out;
  }();
  return codes.count(code) != 0;
}

// "P2007, P2002" -> the codes; an error message when one is missing or unknown.
std::string ParseCodes(const std::string& text, std::vector<std::string>* out) {
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    const std::string code = Trim(item);
    if (code.empty()) return "an empty rule code in the list";
    if (!KnownCode(code)) return "`" + code + "` is not a rule code (`parity rules` lists them)";
    out->push_back(code);
  }
  if (out->empty()) return "no rule code after `allow`";
  return "";
}

// Two names of one file: the same text, or the same file on disk.
bool SameFile(const std::string& a, const std::string& b) {
  if (a == b) return true;
  namespace fs = std::filesystem;
  std::error_code ea, eb;
  const fs::path pa = fs::weakly_canonical(fs::path(a), ea);
  const fs::path pb = fs::weakly_canonical(fs::path(b), eb);
  return !ea && !eb && pa == pb;
}

// "0–3, 5, 7–9" (en dashes) of a set of numbers.
std::string Ranges(const std::set<int>& values) {
  std::string out;
  auto it = values.begin();
  while (it != values.end()) {
    const int lo = *it;
    int hi = lo;
    auto next = std::next(it);
    while (next != values.end() && *next == hi + 1) {
      hi = *next;
      ++next;
    }
    if (!out.empty()) out += ", ";
    out += std::to_string(lo);
    if (hi != lo) out += (hi == lo + 1 ? ", " : "\u2013") + std::to_string(hi);
    it = next;
  }
  return out;
}

std::string Plural(size_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

// The line of a finding's other party (its second related place), 0 when none.
int OtherLine(const api::Finding& f) {
  for (size_t i = 1; i < f.related.size(); ++i) {
    if (f.related[i].location.line != 0) return f.related[i].location.line;
  }
  return 0;
}

// "and 159 more like it: CTAs 0–3, full[0–3]".
std::string MoreText(const std::vector<api::Finding>& findings, const std::vector<size_t>& members) {
  if (members.size() < 2) return "";
  std::set<int> ctas, indices;
  std::set<std::string> agents;
  for (size_t i : members) {
    const api::Finding& f = findings[i];
    if (f.object_cta >= 0) ctas.insert(f.object_cta);
    if (f.object_index >= 0) indices.insert(f.object_index);
    if (!f.agent.empty()) agents.insert(f.agent);
  }
  const api::Finding& first = findings[members.front()];
  std::string out = "and " + std::to_string(members.size() - 1) + " more like it:";
  std::vector<std::string> parts;
  if (!ctas.empty()) parts.push_back((ctas.size() == 1 ? "CTA " : "CTAs ") + Ranges(ctas));
  if (!first.object.empty() && !indices.empty()) {
    parts.push_back(first.object + "[" + Ranges(indices) + "]");
  }
  if (agents.size() > 1) parts.push_back("by " + Plural(agents.size(), "agent", "agents"));
  for (size_t i = 0; i < parts.size(); ++i) out += (i == 0 ? " " : ", ") + parts[i];
  if (parts.empty()) out += " the same rule on the same statements";
  return out;
}

bool Matches(const Suppression& s, const api::Finding& f) {
  if (std::find(s.codes.begin(), s.codes.end(), f.code) == s.codes.end()) return false;
  auto at = [&s](const api::Location& l) {
    return l.line == s.line && SameFile(l.file, s.file);
  };
  if (at(f.location)) return true;
  return std::any_of(f.related.begin(), f.related.end(),
                     [&at](const api::Related& r) { return at(r.location); });
}

}  // namespace

void AddDiagnosticOptions(CLI::App* sub, DiagnosticOptions& options) {
  sub->add_option("--max-findings", options.max_findings,
                  "print at most this many diagnostics (findings of one rule on the same "
                  "statements and object family are one); the summary counts them all")
      ->check(CLI::Range(size_t{1}, size_t{1} << 30))
      ->capture_default_str();
  sub->add_flag("--all", options.all, "print every diagnostic (no --max-findings limit)");
  sub->add_flag("--show-suppressed", options.show_suppressed,
                "also print the findings suppressed by `# parity: allow CODE -- reason` "
                "comments or --suppressions");
  sub->add_option("--suppressions", options.suppressions_file,
                  "a file of intended findings, one per line: `CODE[,CODE] FILE:LINE [-- "
                  "reason]` (the line of the finding's operation or of the other party's access)");
}

Expected<std::vector<Suppression>> ReadAllowComments(const std::string& file,
                                                     const std::string& source) {
  std::vector<Suppression> out;
  std::stringstream in(source);
  std::string line;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    // The allow may follow another comment on the line: any `#` followed by `parity: allow`.
    size_t hash = std::string::npos, allow = std::string::npos;
    for (size_t h = line.find('#'); h != std::string::npos; h = line.find('#', h + 1)) {
      size_t at = line.find_first_not_of(" \t", h + 1);
      if (at == std::string::npos || line.compare(at, 7, "parity:") != 0) continue;
      at = line.find_first_not_of(" \t", at + 7);
      if (at == std::string::npos || line.compare(at, 5, "allow") != 0) continue;
      hash = h;
      allow = at;
      break;
    }
    if (hash == std::string::npos) continue;
    const SourceLocation where{file, number, static_cast<int>(hash) + 1};
    std::string body = line.substr(allow + 5);
    Suppression s;
    const size_t dashes = body.find("--");
    if (dashes != std::string::npos) {
      s.reason = Trim(body.substr(dashes + 2));
      body = body.substr(0, dashes);
    }
    const std::string error = ParseCodes(body, &s.codes);
    if (!error.empty()) {
      return Status("suppression", "malformed `# parity: allow CODE[, CODE] -- reason`: " + error,
                    where);
    }
    s.file = file;
    s.line = number;
    s.origin = api::Location{file, number, static_cast<int>(hash) + 1};
    out.push_back(std::move(s));
  }
  return out;
}

Expected<std::vector<Suppression>> ReadSuppressionsFile(const std::string& path) {
  Expected<std::string> text = ReadInputFile(path, "suppressions", "io", kMaxSideFileBytes);
  if (!text.ok()) return text.status();
  std::istringstream in(*text);
  std::vector<Suppression> out;
  std::string line;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    std::string body = line;
    Suppression s;
    const size_t dashes = body.find("--");
    if (dashes != std::string::npos) {
      s.reason = Trim(body.substr(dashes + 2));
      body = body.substr(0, dashes);
    }
    const size_t hash = body.find('#');
    if (hash != std::string::npos) body = body.substr(0, hash);
    body = Trim(body);
    if (body.empty()) continue;
    const SourceLocation where{path, number, 1};
    const size_t space = body.find_first_of(" \t");
    const std::string usage = "expected `CODE[,CODE] FILE:LINE [-- reason]`";
    if (space == std::string::npos) return Status("suppression", usage, where);
    const std::string error = ParseCodes(body.substr(0, space), &s.codes);
    if (!error.empty()) return Status("suppression", error + "; " + usage, where);
    const std::string place = Trim(body.substr(space));
    const size_t colon = place.rfind(':');
    if (colon == std::string::npos || colon + 1 == place.size() ||
        !std::all_of(place.begin() + static_cast<long>(colon) + 1, place.end(),
                     [](char c) { return std::isdigit(static_cast<unsigned char>(c)); })) {
      return Status("suppression", "`" + place + "` is not FILE:LINE; " + usage, where);
    }
    s.file = place.substr(0, colon);
    s.line = std::stoi(place.substr(colon + 1));
    s.origin = api::Location{path, number, 1};
    out.push_back(std::move(s));
  }
  return out;
}

Expected<std::vector<Suppression>> LoadSuppressions(const DiagnosticOptions& options,
                                                    const std::string& file,
                                                    const std::string& source) {
  Expected<std::vector<Suppression>> inline_allows = ReadAllowComments(file, source);
  if (!inline_allows.ok()) return inline_allows.status();
  std::vector<Suppression> out = std::move(inline_allows).value();
  if (!options.suppressions_file.empty()) {
    Expected<std::vector<Suppression>> listed = ReadSuppressionsFile(options.suppressions_file);
    if (!listed.ok()) return listed.status();
    for (Suppression& s : *listed) out.push_back(std::move(s));
  }
  return out;
}

Diagnostics Diagnose(std::vector<api::Finding> findings, std::vector<Suppression> suppressions) {
  Diagnostics d;
  d.findings = std::move(findings);
  // A finding is suppressed by the first allow that matches it.
  std::vector<int> allowed_by(d.findings.size(), -1);
  for (size_t i = 0; i < d.findings.size(); ++i) {
    for (size_t s = 0; s < suppressions.size(); ++s) {
      if (Matches(suppressions[s], d.findings[i])) {
        allowed_by[i] = static_cast<int>(s);
        suppressions[s].used = true;
        break;
      }
    }
  }
  using Key = std::tuple<std::string, int, std::string, int, int, std::string, int>;
  std::map<Key, size_t> group_of;
  std::vector<Diagnostic> groups;
  for (size_t i = 0; i < d.findings.size(); ++i) {
    const api::Finding& f = d.findings[i];
    const Key key{f.code, static_cast<int>(f.severity), f.location.file, f.location.line,
                  OtherLine(f), f.object, allowed_by[i]};
    auto [it, fresh] = group_of.emplace(key, groups.size());
    if (fresh) groups.emplace_back();
    groups[it->second].members.push_back(i);
  }
  for (Diagnostic& g : groups) {
    g.more = MoreText(d.findings, g.members);
    const int s = allowed_by[g.members.front()];
    if (s >= 0) {
      g.suppressed = true;
      g.reason = suppressions[static_cast<size_t>(s)].reason;
      g.allowed_at = suppressions[static_cast<size_t>(s)].origin;
      d.suppressed_findings += g.members.size();
      d.suppressed.push_back(std::move(g));
      continue;
    }
    switch (d.findings[g.members.front()].severity) {
      case api::Severity::kError:
        ++d.errors;
        break;
      case api::Severity::kWarning:
        ++d.warnings;
        break;
      case api::Severity::kNote:
        ++d.notes;
        break;
    }
    d.shown.push_back(std::move(g));
  }
  for (Suppression& s : suppressions) {
    if (!s.used) {
      d.unused.push_back(std::move(s));
      ++d.warnings;
    }
  }
  return d;
}

std::string Diagnostics::SummaryLine() const {
  std::string out;
  if (errors == 0 && warnings == 0 && notes == 0) {
    out = "0 errors";
  } else {
    out = Plural(errors, "error", "errors") + ", " + Plural(warnings, "warning", "warnings") +
          ", " + Plural(notes, "note", "notes");
  }
  const size_t shown_findings = findings.size() - suppressed_findings;
  const size_t diagnostics = shown.size();
  if (shown_findings > diagnostics) {
    out += " (" + Plural(shown_findings, "finding", "findings") + " in " +
           Plural(diagnostics, "diagnostic", "diagnostics") + ")";
  }
  if (suppressed_findings > 0) out += ", " + std::to_string(suppressed_findings) + " suppressed";
  return out;
}

nlohmann::json Diagnostics::SummaryJson() const {
  return {{"errors", errors},
          {"warnings", warnings},
          {"notes", notes},
          {"suppressed", suppressed_findings},
          {"findings", findings.size()},
          {"diagnostics", shown.size()},
          {"unused_suppressions", unused.size()},
          {"text", SummaryLine()}};
}

nlohmann::json Diagnostics::DiagnosticsJson() const {
  nlohmann::json out = nlohmann::json::array();
  auto add = [&](const Diagnostic& g) {
    const api::Finding& f = findings[g.members.front()];
    nlohmann::json j = {{"code", f.code},
                        {"severity", api::SeverityName(f.severity)},
                        {"finding", g.members.front()},
                        {"count", g.members.size()},
                        {"members", g.members},
                        {"more", g.more},
                        {"suppressed", g.suppressed}};
    if (g.suppressed) {
      j["reason"] = g.reason;
      j["allowed_at"] = g.allowed_at.ToString();
    }
    out.push_back(j);
  };
  for (const Diagnostic& g : shown) add(g);
  for (const Diagnostic& g : suppressed) add(g);
  return out;
}

std::string DiagnosticText(const Diagnostics& d, const Diagnostic& g) {
  const api::Finding& f = d.findings[g.members.front()];
  std::string out;
  if (f.severity != api::Severity::kError) out += std::string(api::SeverityName(f.severity)) + " ";
  out += f.code + " " + f.title + ": " + f.message + "\n";
  // A finding of no agent (an `exists` property no end state satisfies, P2034) names only its
  // statement.
  out += f.agent.empty() ? "  at " : "  by " + f.agent + " at ";
  out += f.location.ToString() + "\n";
  if (!g.more.empty()) out += "  " + g.more + "\n";
  return out;
}

void PrintDiagnostics(const Diagnostics& d, const DiagnosticOptions& options, size_t skip) {
  size_t printed = 0, left = 0;
  for (const Diagnostic& g : d.shown) {
    if (std::find(g.members.begin(), g.members.end(), skip) != g.members.end() &&
        g.members.size() == 1) {
      continue;  // printed in full above
    }
    if (!options.all && printed >= options.max_findings) {
      ++left;
      continue;
    }
    std::printf("%s", DiagnosticText(d, g).c_str());
    ++printed;
  }
  if (left > 0) {
    std::printf("... %s more not shown (--max-findings N or --all prints them; --format json "
                "lists every finding)\n",
                Plural(left, "diagnostic", "diagnostics").c_str());
  }
  if (options.show_suppressed) {
    for (const Diagnostic& g : d.suppressed) {
      std::printf("suppressed (allowed at %s%s%s): %s", g.allowed_at.ToString().c_str(),
                  g.reason.empty() ? "" : ": ", g.reason.c_str(), DiagnosticText(d, g).c_str());
    }
  }
  for (const Suppression& s : d.unused) {
    std::string codes;
    for (const std::string& c : s.codes) codes += (codes.empty() ? "" : ", ") + c;
    std::printf("%s: warning: `allow %s` matches no finding of this run at %s:%d\n",
                s.origin.ToString().c_str(), codes.c_str(), s.file.c_str(), s.line);
  }
}

}  // namespace parity::cli
