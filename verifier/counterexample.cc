#include "verifier/counterexample.h"

#include <algorithm>
#include <utility>

#include "sim/common/check.h"
#include "sim/common/status.h"
#include "sim/model/codes.h"
#include "verifier/rules.h"

namespace parity::verifier {
namespace {

using engine::Choice;
using engine::Engine;
using engine::Outcome;
using Clock = std::chrono::steady_clock;

// A step named by what it is (counterexample.h): an agent, or an in-flight operation by its
// identity (the fields that do not depend on how many operations were issued before it).
struct NamedStep {
  bool async = false;
  uint32_t agent = 0;  // agent steps: the agent; completions: the issuer
  uint8_t kind = 0;
  uint8_t flags = 0;
  uint16_t object = 0;
  uint32_t target_cta = 0, slot = 0, index = 0, pc = 0;

  bool Names(const Engine::InFlight& f) const {
    return f.kind == kind && f.flags == flags && f.object == object && f.agent == agent &&
           f.target_cta == target_cta && f.slot == slot && f.index == index && f.pc == pc;
  }
};

NamedStep Name(const Engine& before, Choice c) {
  NamedStep s;
  if (c.kind == Choice::Kind::kAgent) {
    s.agent = c.index;
    return s;
  }
  const Engine::InFlight& f = before.in_flight_ops()[c.index];
  s.async = true;
  s.agent = f.agent;
  s.kind = f.kind;
  s.flags = f.flags;
  s.object = f.object;
  s.target_cta = f.target_cta;
  s.slot = f.slot;
  s.index = f.index;
  s.pc = f.pc;
  return s;
}

// The finding the run of `e` ended in, if any (ReplayFinding).
std::optional<FindingKey> KeyOf(const ir::Program& program, const Engine& e, bool check_rules) {
  FindingKey k;
  k.outcome = e.outcome();
  switch (k.outcome) {
    case Outcome::kDeadlock:
      return k;
    case Outcome::kViolation:
      if (e.result().violation) {
        k.violation_code = static_cast<uint32_t>(e.result().violation->violation.code);
      }
      return k;
    case Outcome::kCompleted: {
      if (!check_rules) return std::nullopt;
      const std::vector<Finding> findings = CheckRules(program, e, e.trace());
      // A warning (docs/levels.md) is a finding here: the search asked for this path only when
      // it counts (an error, or --strict), and the key keeps its code either way.
      if (!HasErrors(findings, /*strict=*/true)) return std::nullopt;
      for (const Finding& f : findings) {
        if (f.level(/*strict=*/true) != model::Severity::kError) continue;
        k.rule_codes.push_back(static_cast<uint32_t>(f.code()));
      }
      std::sort(k.rule_codes.begin(), k.rule_codes.end());
      k.rule_codes.erase(std::unique(k.rule_codes.begin(), k.rule_codes.end()), k.rule_codes.end());
      return k;
    }
    default:  // running, or bad input found while running (not shortened)
      return std::nullopt;
  }
}

bool Enabled(const std::vector<Choice>& now, Choice c) {
  return std::find(now.begin(), now.end(), c) != now.end();
}

// Replays the named steps that are not dropped on a copy of `init`, skipping a step that is not
// enabled (its agent blocked or gone, its operation not in flight: it depended on a dropped step).
// Returns true when the run reaches `key`, with the steps taken (a prefix when the run ends early)
// in *taken and *taken_named.
bool ReplayNamed(const ir::Program& program, const Engine& init,
                 const std::vector<NamedStep>& named, const std::vector<uint8_t>& drop,
                 const FindingKey& key, bool check_rules, std::vector<Choice>* taken,
                 std::vector<NamedStep>* taken_named) {
  Engine e = init;
  taken->clear();
  taken_named->clear();
  std::vector<Choice> now;
  for (size_t i = 0; i < named.size() && e.outcome() == Outcome::kRunning; ++i) {
    if (drop[i]) continue;
    const NamedStep& s = named[i];
    e.Choices(&now);
    Choice c{Choice::Kind::kAgent, s.agent};
    if (s.async) {
      const std::vector<Engine::InFlight>& ops = e.in_flight_ops();
      size_t j = 0;
      while (j < ops.size() && !s.Names(ops[j])) ++j;
      if (j == ops.size()) continue;
      c = {Choice::Kind::kAsync, static_cast<uint32_t>(j)};
    }
    if (!Enabled(now, c)) continue;
    e.Step(c);
    taken->push_back(c);
    taken_named->push_back(s);
  }
  const std::optional<FindingKey> got = KeyOf(program, e, check_rules);
  return got && *got == key;
}

}  // namespace

std::optional<FindingKey> FindingOf(const ir::Program& program, const Engine& end,
                                    bool check_rules) {
  return KeyOf(program, end, check_rules);
}

std::optional<FindingKey> ReplayFinding(const ir::Program& program,
                                        const std::vector<int64_t>& params,
                                        const std::vector<Choice>& path, bool check_rules) {
  engine::EngineOptions eo;
  eo.record_trace = check_rules;
  Expected<Engine> e = Engine::Create(program, params, eo);
  if (!e.ok()) return std::nullopt;
  std::vector<Choice> now;
  for (const Choice& c : path) {
    if (e->outcome() != Outcome::kRunning) return std::nullopt;
    e->Choices(&now);
    if (!Enabled(now, c)) return std::nullopt;
    e->Step(c);
  }
  return KeyOf(program, *e, check_rules);
}

Shortened ShortenByRemoval(const ir::Program& program, const std::vector<int64_t>& params,
                           const std::vector<Choice>& path, const FindingKey& key, bool check_rules,
                           Clock::time_point deadline) {
  engine::EngineOptions eo;
  eo.record_trace = !key.rule_codes.empty();  // the rules read the trace
  Expected<Engine> created = Engine::Create(program, params, eo);
  if (!created.ok()) {
    Shortened out;
    out.path = path;
    return out;
  }
  return ShortenByRemoval(program, *created, path, key, check_rules, deadline);
}

Shortened ShortenByRemoval(const ir::Program& program, const Engine& init,
                           const std::vector<Choice>& path, const FindingKey& key, bool check_rules,
                           Clock::time_point deadline) {
  PARITY_CHECK(init.options().record_trace || key.rule_codes.empty(),
               "ShortenByRemoval: the rules read the trace, and the initial state keeps none");
  Shortened out;
  out.path = path;
  // Name the steps of the path.
  std::vector<NamedStep> named;
  {
    Engine e = init;
    for (const Choice& c : path) {
      named.push_back(Name(e, c));
      e.Step(c);
    }
  }
  std::vector<Choice> taken;
  std::vector<NamedStep> taken_named;
  std::vector<uint8_t> drop;
  // Tries the path without the steps marked in `drop`; keeps the result when it is shorter.
  auto attempt = [&]() -> bool {
    ++out.replays;
    if (!ReplayNamed(program, init, named, drop, key, check_rules, &taken, &taken_named)) {
      return false;
    }
    if (taken.size() >= out.path.size()) return false;
    out.path = taken;
    named = taken_named;
    return true;
  };
  auto out_of_time = [&] {
    if (Clock::now() < deadline) return false;
    out.budget_spent = true;
    return true;
  };
  for (bool changed = true; changed;) {
    changed = false;
    // An agent's last k steps together (k halving): an agent that ran ahead of what the finding
    // needs stops earlier.
    uint32_t max_agent = 0;
    for (const NamedStep& s : named) max_agent = std::max(max_agent, s.agent + 1);
    for (uint32_t a = 0; a < max_agent; ++a) {
      std::vector<size_t> at;
      for (size_t i = 0; i < named.size(); ++i) {
        if (!named[i].async && named[i].agent == a) at.push_back(i);
      }
      for (size_t k = at.size(); k >= 1; k /= 2) {
        if (out_of_time()) return out;
        drop.assign(named.size(), 0);
        for (size_t j = at.size() - k; j < at.size(); ++j) drop[at[j]] = 1;
        if (attempt()) {
          changed = true;
          break;
        }
      }
    }
    // Single steps, from the end (a completion the finding does not need, an agent step whose agent
    // then does the next one instead).
    for (size_t i = named.size(); i-- > 0;) {
      if (i >= named.size()) continue;
      if (out_of_time()) return out;
      drop.assign(named.size(), 0);
      drop[i] = 1;
      if (attempt()) changed = true;
    }
  }
  return out;
}

}  // namespace parity::verifier
