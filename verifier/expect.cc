#include "verifier/expect.h"

#include <cstdlib>
#include <sstream>

#include "sim/common/read_file.h"
#include "sim/model/codes.h"

namespace parity::verifier {
namespace {

constexpr const char* kRule = "expect.syntax";
constexpr engine::Policy kPolicies[] = {engine::Policy::kEager, engine::Policy::kLazy,
                                        engine::Policy::kRoundRobin, engine::Policy::kRandom};

struct Token {
  std::string text;
  uint32_t column = 0;  // 1-based
};

// Splits at spaces; a double-quoted part (agent="CTA 0 producer[0]") keeps its spaces and loses
// its quotes. False on an unclosed quote.
bool Tokenize(const std::string& s, size_t from, std::vector<Token>* out) {
  size_t i = from;
  while (i < s.size()) {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
    if (i >= s.size()) break;
    Token t;
    t.column = static_cast<uint32_t>(i + 1);
    while (i < s.size() && s[i] != ' ' && s[i] != '\t') {
      if (s[i] == '"') {
        const size_t close = s.find('"', i + 1);
        if (close == std::string::npos) return false;
        t.text += s.substr(i + 1, close - i - 1);
        i = close + 1;
      } else {
        t.text += s[i++];
      }
    }
    out->push_back(t);
  }
  return true;
}

bool ParseInt(const std::string& s, int64_t* v) {
  if (s.empty()) return false;
  char* end = nullptr;
  *v = std::strtoll(s.c_str(), &end, 10);
  return end != nullptr && *end == 0;
}

std::string ObjectText(const Expectation& x) {
  return x.has_index ? x.object + "[" + std::to_string(x.index) + "]" : x.object;
}

// "NAME[INDEX]", or "NAME" where the expectation names no index.
std::string ObjectIs(const Expectation& x, const std::string& name, uint32_t index) {
  return x.has_index ? name + "[" + std::to_string(index) + "]" : name;
}

}  // namespace

engine::EngineOptions Expectation::Options() const {
  engine::EngineOptions o;
  o.policy = policy;
  o.seed = seed;
  return o;
}

std::string Expectation::Text() const {
  std::string s = code;
  if (auto c = model::CodeFromId(code)) s += " (" + std::string(model::CodeSlug(*c)) + ")";
  if (code == "P2001") s = "P2001 (deadlock)";
  if (!object.empty()) s += " on " + ObjectText(*this);
  if (cta >= 0) s += " of CTA " + std::to_string(cta);
  if (!agent.empty()) s += " by " + agent;
  if (!cause.empty()) s += ", cause " + cause;
  if (!change.empty()) s += ", fix \"" + change + "\"";
  if (culprit_line != 0) s += " (culprit at line " + std::to_string(culprit_line) + ")";
  if (warnings != 0) s += ", " + std::to_string(warnings) + " warnings";
  if (line != 0) s += " at line " + std::to_string(line);
  if (explore) {
    s += " (explore)";
  } else {
    s += std::string(", policy ") + engine::PolicyName(policy);
    if (every_policy) s += " (the code under every policy)";
  }
  for (const auto& [name, value] : defines) s += " -D " + name + "=" + std::to_string(value);
  return s;
}

Expected<std::vector<Expectation>> ReadExpectations(const std::string& file,
                                                    const std::string& text) {
  std::vector<Expectation> out;
  std::istringstream in(text);
  std::string line;
  uint32_t number = 0;
  while (std::getline(in, line)) {
    ++number;
    size_t i = 0;
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    if (line.compare(i, 1, "#") != 0) continue;
    size_t j = i + 1;
    while (j < line.size() && line[j] == ' ') ++j;
    if (line.compare(j, 7, "expect:") != 0) continue;
    auto bad = [&](uint32_t column, const std::string& msg) {
      return Status(kRule, msg, SourceLocation{file, static_cast<int>(number), static_cast<int>(column)});
    };
    std::vector<Token> tokens;
    if (!Tokenize(line, j + 7, &tokens)) return bad(static_cast<uint32_t>(j + 1), "unclosed quote");
    if (tokens.empty()) return bad(static_cast<uint32_t>(j + 1), "`# expect:` without a code");
    Expectation x;
    x.where = SourceLocation{file, static_cast<int>(number), static_cast<int>(i + 1)};
    x.code = tokens[0].text;
    if (!model::CodeFromId(x.code)) {
      return bad(tokens[0].column, "unknown rule code '" + x.code + "' (see `parity rules`)");
    }
    for (size_t k = 1; k < tokens.size(); ++k) {
      const Token& t = tokens[k];
      const size_t eq = t.text.find('=');
      const std::string key = t.text.substr(0, eq);
      const std::string value = eq == std::string::npos ? "" : t.text.substr(eq + 1);
      int64_t n = 0;
      if (t.text == "at") {
        if (k + 1 >= tokens.size() || !ParseInt(tokens[k + 1].text, &n) || n < 1) {
          return bad(t.column, "`at` wants a line number");
        }
        x.line = static_cast<uint32_t>(n);
        ++k;
      } else if (t.text == "explore") {
        x.explore = true;
      } else if (t.text == "every-policy") {
        x.every_policy = true;
      } else if (t.text == "-D") {
        const std::string kv = k + 1 < tokens.size() ? tokens[k + 1].text : "";
        const size_t e = kv.find('=');
        if (e == std::string::npos || e == 0 || !ParseInt(kv.substr(e + 1), &n)) {
          return bad(t.column, "-D wants NAME=VALUE");
        }
        x.defines.emplace_back(kv.substr(0, e), n);
        ++k;
      } else if (key == "policy" && eq != std::string::npos) {
        bool found = false;
        for (engine::Policy p : kPolicies) {
          if (value == engine::PolicyName(p)) {
            x.policy = p;
            found = true;
          }
        }
        if (!found) return bad(t.column, "policy is one of eager, lazy, round-robin, random");
      } else if (key == "seed" && ParseInt(value, &n) && n >= 0) {
        x.seed = static_cast<uint64_t>(n);
      } else if (key == "object" && !value.empty()) {
        const size_t open = value.find('[');
        x.object = value.substr(0, open);
        if (open != std::string::npos) {
          if (value.back() != ']' || !ParseInt(value.substr(open + 1, value.size() - open - 2), &n) ||
              n < 0) {
            return bad(t.column, "object is NAME or NAME[INDEX]");
          }
          x.index = static_cast<uint32_t>(n);
          x.has_index = true;
        }
      } else if (key == "cta" && ParseInt(value, &n) && n >= 0) {
        x.cta = n;
      } else if (key == "cause" && !value.empty()) {
        x.cause = value;
      } else if (key == "agent" && !value.empty()) {
        x.agent = value;
      } else if (key == "change" && !value.empty()) {
        x.change = value;
      } else if (key == "culprit-at" && ParseInt(value, &n) && n > 0) {
        x.culprit_line = static_cast<uint32_t>(n);
      } else if (key == "warnings" && ParseInt(value, &n) && n > 0) {
        x.warnings = static_cast<size_t>(n);
      } else {
        return bad(t.column, "unknown or malformed `" + t.text + "` (expect: CODE [at LINE] "
                             "[explore] [policy=P] [seed=N] [every-policy] [-D NAME=V] "
                             "[object=NAME[I]] [cta=N] [cause=C] [agent=\"LABEL\"] [change=\"FIX\"] "
                             "[culprit-at=LINE] [warnings=N])");
      }
    }
    out.push_back(std::move(x));
  }
  return out;
}

Expected<std::vector<Expectation>> ReadExpectationsFile(const std::string& path) {
  Expected<std::string> text = ReadInputFile(path, "schedule", "io", kMaxScheduleFileBytes);
  if (!text.ok()) return text.status();
  return ReadExpectations(path, *text);
}

std::string MatchCheck(const Expectation& x, const CheckRun& run) {
  const ir::Program& p = *run.program;
  const engine::Engine& e = *run.engine;
  const engine::RunResult& r = *run.result;
  std::string got = std::string("the run ended ") + engine::OutcomeName(r.outcome);
  if (r.violation) got += " with " + std::string(model::CodeId(r.violation->violation.code));
  std::vector<std::string> diffs;
  auto expect_eq = [&](const std::string& what, const std::string& want, const std::string& is) {
    if (want != is) diffs.push_back(what + " " + is + ", not " + want);
  };
  auto barrier_name = [&](uint32_t b) {
    return b < p.barriers.size() ? p.barriers[b].name : "#" + std::to_string(b);
  };
  auto check_line = [&](const SourceLocation& where) {
    if (x.line != 0) expect_eq("line", std::to_string(x.line), std::to_string(where.line));
  };
  // P2033 (a failed assert or forall) ends the run as the engine's violation, like an M code.
  const bool finding_code = x.code.size() == 5 && x.code.rfind("P2", 0) == 0 &&
                            x.code != "P2001" && x.code != "P2033";
  if (finding_code) {
    const Finding* f = nullptr;
    for (const Finding& y : *run.findings) {
      if (model::CodeId(y.code()) == x.code) {
        f = &y;
        break;
      }
    }
    if (f == nullptr) return "no " + x.code + " finding (" + got + ")";
    if (!x.agent.empty()) {
      expect_eq("agent", x.agent,
                f->agent == kNoFindingAgent ? "-" : AgentLabel(p, e, f->agent));
    }
    if (!x.object.empty()) {
      const std::string name =
          f->object_is_global ? (f->object < p.globals.size() ? p.globals[f->object].name : "?")
          : f->object_is_tensor_map
              ? (f->object < p.tensor_maps.size() ? p.tensor_maps[f->object].name : "?")
          : f->object_is_buffer ? (f->object < p.buffers.size() ? p.buffers[f->object].name : "?")
                                : barrier_name(f->object);
      expect_eq("object", ObjectText(x), ObjectIs(x, name, f->index));
    }
    if (x.cta >= 0) expect_eq("CTA", std::to_string(x.cta), std::to_string(f->cta));
    check_line(f->where);
  } else if (x.code == "P2001") {
    if (r.outcome != engine::Outcome::kDeadlock || run.deadlock == nullptr) return "no deadlock (" + got + ")";
    const DeadlockReport& report = *run.deadlock;
    if (report.primary >= report.blocked.size()) return "a deadlock without a diagnosis";
    if (report.culprit.found) {
      // An earlier wait is the most likely cause (DeadlockCulprit): it is what the report names.
      const DeadlockCulprit& c = report.culprit;
      if (!x.object.empty()) {
        expect_eq(c.change.empty() ? "culprit wait on" : "culprit on", ObjectText(x),
                  ObjectIs(x, barrier_name(c.barrier), c.index));
      }
      if (x.cta >= 0) expect_eq("CTA", std::to_string(x.cta), std::to_string(c.cta));
      if (!x.cause.empty()) expect_eq("cause", x.cause, DeadlockCauseName(c.cause));
      if (!x.agent.empty()) expect_eq("agent", x.agent, AgentLabel(p, e, c.agent));
      check_line(c.where);
      // The change a re-run proved (verifier/culprit.h): a culprit without one is the
      // heuristic's guess, which an expectation of a change does not accept.
      if (!x.change.empty()) expect_eq("suggested change", x.change, c.change);
      if (x.culprit_line != 0) {
        expect_eq("culprit line", std::to_string(x.culprit_line), std::to_string(c.where.line));
      }
      std::string out;
      for (const std::string& d : diffs) out += (out.empty() ? "" : "; ") + d;
      return out;
    }
    const BlockedExplanation& b = report.blocked[report.primary];
    const bool mbarrier = b.blocked.wait == engine::WaitKind::kMbarrierParity ||
                          b.blocked.wait == engine::WaitKind::kMbarrierToken;
    if (!x.object.empty()) {
      // A named barrier is bar.sync[ID], or its declared name (`object=q_empty`).
      const std::string named = ir::NamedBarrierName(p, b.blocked.barrier);
      const std::string is =
          b.blocked.wait == engine::WaitKind::kNamedBarrier
              ? (!x.has_index && x.object == named ? named
                                                   : ObjectIs(x, "bar.sync", b.blocked.barrier))
          : mbarrier ? ObjectIs(x, barrier_name(b.blocked.barrier), b.blocked.barrier_index)
                     : std::string(engine::WaitKindName(b.blocked.wait));
      expect_eq("primary wait on", ObjectText(x), is);
    }
    if (x.cta >= 0) {
      expect_eq("CTA", std::to_string(x.cta), std::to_string(e.agent_info(b.blocked.agent).cta));
    }
    if (!x.cause.empty()) expect_eq("cause", x.cause, DeadlockCauseName(b.cause));
    if (!x.agent.empty()) expect_eq("agent", x.agent, AgentLabel(p, e, b.blocked.agent));
    if (!x.change.empty()) expect_eq("suggested change", x.change, "(none: no change fixed it)");
    if (x.culprit_line != 0) expect_eq("culprit line", std::to_string(x.culprit_line), "(none)");
    check_line(b.blocked.where);
  } else if (r.violation && model::CodeId(r.violation->violation.code) == x.code) {
    const engine::ViolationInfo& v = *r.violation;
    if (!x.agent.empty()) expect_eq("agent", x.agent, AgentLabel(p, e, v.agent));
    if (!x.object.empty()) {  // mbarrier codes: the barrier the violating event acted on
      expect_eq("object", ObjectText(x),
                ObjectIs(x, barrier_name(v.event.object), v.event.index));
    }
    if (x.cta >= 0) expect_eq("CTA", std::to_string(x.cta), std::to_string(v.event.target_cta));
    check_line(v.where);
    // The change a re-run proved fixes the violation (verifier/culprit.h).
    const DeadlockCulprit* c = run.violation_culprit != nullptr && run.violation_culprit->found
                                   ? run.violation_culprit
                                   : nullptr;
    if (!x.cause.empty()) {
      expect_eq("culprit cause", x.cause, c ? DeadlockCauseName(c->cause) : "(none)");
    }
    if (!x.change.empty()) {
      expect_eq("suggested change", x.change, c ? c->change : "(none: no change fixed it)");
    }
    if (x.culprit_line != 0) {
      expect_eq("culprit line", std::to_string(x.culprit_line),
                c ? std::to_string(c->where.line) : "(none)");
    }
  } else {
    if (r.outcome != engine::Outcome::kCompleted) return "no " + x.code + " (" + got + ")";
    size_t n = 0;
    const engine::ViolationInfo* first = nullptr;
    for (const engine::ViolationInfo& w : r.warnings) {
      if (model::CodeId(w.violation.code) != x.code) continue;
      ++n;
      if (first == nullptr) first = &w;
    }
    if (first == nullptr) return "no " + x.code + " (" + got + ", no such warning)";
    if (x.warnings != 0) expect_eq("warnings", std::to_string(x.warnings), std::to_string(n));
    if (!x.agent.empty()) expect_eq("agent", x.agent, AgentLabel(p, e, first->agent));
    check_line(first->where);
  }
  std::string out;
  for (const std::string& d : diffs) out += (out.empty() ? "" : "; ") + d;
  return out;
}

}  // namespace parity::verifier
