#include "tests/verifier/gen/naive_explore.h"

#include <algorithm>
#include <deque>
#include <unordered_set>

namespace parity::gen {

using engine::Choice;
using engine::Engine;
using engine::Outcome;

namespace {

// A running state's key: StateHash and Fingerprint together, so that the walk tells two states
// apart when either does (StateHash hashes the async groups' counters only, Fingerprint every
// copy's group and read state).
uint64_t Key(const Engine& e) {
  uint64_t z = e.StateHash() ^ (e.Fingerprint() * 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 31)) * 0xbf58476d1ce4e5b9ull;
  return z ^ (z >> 29);
}

void Record(const Engine& e, NaiveEnds* out) {
  switch (e.outcome()) {
    case Outcome::kCompleted:
      out->completed.insert(e.Fingerprint());
      out->exists_held |= e.ExistsHeld();
      break;
    case Outcome::kDeadlock:
      out->deadlocked.insert(e.Fingerprint());
      break;
    case Outcome::kViolation:
      out->violating.insert(e.Fingerprint());
      if (e.result().violation) {
        const model::Violation& v = e.result().violation->violation;
        out->codes.insert(v.code);
        if (v.code == model::Code::kAssertionFailed) out->failed_assertions.insert(v.value);
      }
      break;
    case Outcome::kError:
      out->error = true;
      break;
    case Outcome::kStepLimit:
      out->step_limit = true;
      break;
    case Outcome::kRunning:
      break;
  }
}

// The global CTAs of `e` whose agents have all exited (a CTA without agents never runs).
std::vector<bool> ExitedCtas(const Engine& e) {
  std::vector<int> live(e.num_ctas(), 0), members(e.num_ctas(), 0);
  for (uint32_t a = 0; a < e.num_agents(); ++a) {
    const uint32_t cta = e.agent_info(a).cta_global;
    ++members[cta];
    if (e.agent_state(a).status != 2) ++live[cta];  // 2: exited (Engine::AgentState)
  }
  std::vector<bool> out(e.num_ctas());
  for (uint32_t c = 0; c < e.num_ctas(); ++c) out[c] = members[c] > 0 && live[c] == 0;
  return out;
}

// The lifetime codes transition e --c--> next exhibits (see the header).
void CheckLifetime(const Engine& e, const Choice& c, const Engine& next, NaiveEnds* out) {
  const std::vector<bool> exited = ExitedCtas(e);
  if (std::find(exited.begin(), exited.end(), true) == exited.end()) return;
  const uint32_t per_cta = e.num_barrier_slots() / std::max<uint32_t>(1, e.num_ctas());
  for (uint32_t s = 0; s < e.num_barrier_slots(); ++s) {
    const uint32_t cta = s / per_cta;
    if (!exited[cta] || e.slot_state(s) == next.slot_state(s)) continue;
    bool own_copy = false;
    if (c.kind == Choice::Kind::kAsync) {
      own_copy = e.agent_info(e.in_flight_ops()[c.index].agent).cta_global == cta;
    }
    out->lifetime.insert(own_copy ? model::Code::kExitWithCopyInFlight
                                  : model::Code::kAccessAfterExit);
  }
}

}  // namespace

NaiveEnds NaiveExplore(const ir::Program& program, const std::vector<int64_t>& params,
                       uint64_t max_states) {
  NaiveEnds out;
  engine::EngineOptions o;
  o.record_trace = false;
  auto root = Engine::Create(program, params, o);
  if (!root.ok()) {
    out.error = true;
    return out;
  }
  std::unordered_set<uint64_t> seen;
  std::deque<Engine> frontier;
  if (root->outcome() != Outcome::kRunning) {
    Record(*root, &out);
    return out;
  }
  seen.insert(Key(*root));
  frontier.push_back(*root);
  std::vector<Choice> choices;
  while (!frontier.empty()) {
    if (seen.size() > max_states) {
      out.complete = false;
      break;
    }
    Engine e = std::move(frontier.front());
    frontier.pop_front();
    e.Choices(&choices);
    const std::vector<Choice> here = choices;
    if (here.empty()) out.stuck = true;  // a running state must have an enabled step
    for (const Choice& c : here) {
      Engine next = e;
      const Outcome after = next.Step(c);
      CheckLifetime(e, c, next, &out);
      if (after != Outcome::kRunning) {
        Record(next, &out);
      } else if (seen.insert(Key(next)).second) {
        frontier.push_back(std::move(next));
      }
    }
  }
  out.states = seen.size();
  return out;
}

}  // namespace parity::gen
