#include "verifier/every_path.h"

#include <chrono>
#include <memory>
#include <set>
#include <tuple>

#include "verifier/expand.h"
#include "verifier/fingerprint_set.h"
#include "verifier/races.h"
#include "verifier/symmetry.h"

namespace parity::verifier {
namespace {

using engine::Choice;
using engine::Engine;
using engine::Footprint;
using engine::Outcome;
namespace fpmix = engine::fpmix;

constexpr uint8_t kBlocked = 1;  // Engine::AgentState::status

struct Frame {
  explicit Frame(Engine e) : engine(std::move(e)) {}
  Engine engine;
  std::vector<uint64_t> digest;      // per agent: its synchronising steps, in order
  std::vector<uint64_t> last_word;   // per agent: the last word its digest took
  std::vector<uint64_t> deliveries;  // per agent: a commutative sum over its landed operations
  std::vector<Choice> choices;
  std::vector<uint8_t> take;
  size_t next = 0;
  Choice via{};  // the step from the frame below
};

uint64_t PhaseOf(const Engine& e, uint32_t o) {
  return o < e.num_barrier_slots() ? e.slot_state(o).phase : 0;
}

// The digest word of agent a's step from `before` that touched `fp` (measured): its pc and the
// phase before the step of every mbarrier slot it touched; 0 when it touched none (its
// synchronisation, if any, is on a cluster or named barrier or its own async groups, whose
// edges the digest does not need: see every_path.h).
uint64_t AgentWord(const Engine& before, uint32_t a, const Footprint& fp) {
  uint64_t h = fpmix::Word(0x6a09e667f3bcc908ull, before.agent_state(a).pc);
  bool any = false;
  if (fp.overflow) {
    for (uint32_t o = 0; o < before.num_barrier_slots(); ++o) h = fpmix::Word(h, PhaseOf(before, o));
    return fpmix::Final(h);
  }
  for (uint32_t i = 0; i < fp.n; ++i) {
    const uint32_t o = fp.objects[i];
    if (o >= before.num_barrier_slots()) continue;
    any = true;
    h = fpmix::Word(fpmix::Word(h, o), PhaseOf(before, o));
  }
  return any ? fpmix::Final(h) : 0;
}

// The digest term of the delivery of in-flight operation i of `before` (added to its issuer's
// sum, so the issuer is not part of it).
uint64_t DeliveryTerm(const Engine& before, uint32_t i) {
  const Engine::InFlight& f = before.in_flight_ops()[i];
  uint64_t h = 0xbb67ae8584caa73bull;
  h = fpmix::Word(h, (uint64_t{f.kind} << 56) | (uint64_t{f.flags} << 48) |
                         (uint64_t{f.object} << 32));
  h = fpmix::Word(h, (uint64_t{f.target_cta} << 32) | f.slot);
  h = fpmix::Word(h, (uint64_t{f.index} << 32) | f.bytes);
  h = fpmix::Word(h, (uint64_t{f.pc} << 32));
  h = fpmix::Word(h, f.id);
  switch (f.kind) {
    case Engine::InFlight::kTmaDeliver:
    case Engine::InFlight::kBulkDeliver:
    case Engine::InFlight::kStAsync:
    case Engine::InFlight::kCpAsyncArrive:
      h = fpmix::Word(h, PhaseOf(before, f.slot));
      break;
    default:
      break;
  }
  return fpmix::Final(h);
}

// The key of (state, digest). With symmetry classes (the explorer's, verifier/symmetry.h) it is
// the same for a state and digest and their image under a permutation of interchangeable
// agents: the symmetric fingerprint, and the multiset of each agent's (class, content, in-flight
// operations, digests), so that each agent's digest stays bound to its own state.
uint64_t PairKey(const Engine& e, const Frame& f, const std::vector<uint32_t>& classes) {
  const uint64_t state = classes.empty() ? e.Fingerprint() : e.SymmetricFingerprint(classes);
  uint64_t agents = 0;
  for (uint32_t a = 0; a < f.digest.size(); ++a) {
    const bool grouped = !classes.empty() && classes[a] != Engine::kNoGroup;
    uint64_t h = fpmix::Word(0x3c6ef372fe94f82bull,
                             grouped ? classes[a] : (uint64_t{1} << 40) | a);
    if (grouped) {
      const engine::Predictor p(e);
      h = fpmix::Word(fpmix::Word(h, p.FpCachedObject(e.GroupsObject(a))), p.FpCachedOps(a));
    }
    h = fpmix::Word(fpmix::Word(h, f.digest[a]), f.deliveries[a]);
    agents += fpmix::Final(h);
  }
  const uint64_t k = fpmix::Final(fpmix::Word(state, agents));
  return k == 0 ? 1 : k;
}

}  // namespace

EveryPathResult CheckRulesOnEveryPath(const ir::Program& program,
                                      const std::vector<int64_t>& params,
                                      const ExploreOptions& options, double seconds,
                                      bool collect_all) {
  EveryPathResult res;
  std::set<std::tuple<int, uint32_t, uint32_t, uint32_t, uint32_t, bool, uint32_t, uint32_t,
                      uint32_t>>
      collected;
  std::set<std::tuple<uint32_t, uint32_t, uint32_t, uint32_t, uint32_t, uint32_t, uint32_t>>
      races_seen;
  const auto t0 = std::chrono::steady_clock::now();
  engine::EngineOptions eo;
  eo.record_trace = false;
  Expected<Engine> created = Engine::Create(program, params, eo);
  if (!created.ok()) return res;  // the explorer reports bad input
  reduction::ExpandWorker w;
  w.reducer = std::make_unique<reduction::Reducer>(*created, options.guarded_waits,
                                                   options.mask_closure,
                                                   options.phase_bounded_balance);
  FingerprintSet seen;
  std::vector<std::unique_ptr<Frame>> frames;
  size_t depth = 0;
  auto path_to = [&](Choice last) {
    std::vector<Choice> p;
    for (size_t i = 1; i < depth; ++i) p.push_back(frames[i]->via);
    p.push_back(last);
    return p;
  };
  // Makes the frame at `depth` (its engine, digests and via set) the top, expanding it.
  auto push = [&] {
    Frame& f = *frames[depth++];
    ExpandState(w, f.engine, options.reduction, options.guarded_waits);
    f.choices = w.choices;
    f.take = w.take;
    f.next = 0;
  };
  {
    auto root = std::make_unique<Frame>(std::move(created).value());
    root->digest.assign(root->engine.num_agents(), 0);
    root->last_word.assign(root->engine.num_agents(), 0);
    root->deliveries.assign(root->engine.num_agents(), 0);
    frames.push_back(std::move(root));
  }
  if (frames[0]->engine.outcome() != Outcome::kRunning) return res;
  std::vector<uint32_t> classes;
  if (options.symmetry && options.reduction) {
    std::string why;
    classes = SymmetryClasses(program, params, frames[0]->engine, &why);
  }
  seen.Insert(PairKey(frames[0]->engine, *frames[0], classes));
  ++res.states;
  push();
  Footprint fp;
  while (depth != 0) {
    Frame& f = *frames[depth - 1];
    if (f.next == f.choices.size()) {
      --depth;
      continue;
    }
    const size_t i = f.next++;
    if (!f.take[i]) continue;
    if (res.states >= options.max_states) {
      res.complete = false;
      res.bound = "--max-states " + std::to_string(options.max_states) +
                  " (protocol rules on every path)";
      return res;
    }
    if (seconds > 0 && (res.states & 255) == 0 &&
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() > seconds) {
      res.complete = false;
      res.bound = "--time-limit (protocol rules on every path)";
      return res;
    }
    const Choice c = f.choices[i];
    if (depth == frames.size()) frames.push_back(std::make_unique<Frame>(f.engine));
    Frame& g = *frames[depth];
    g.engine = f.engine;
    g.digest = f.digest;
    g.last_word = f.last_word;
    g.deliveries = f.deliveries;
    g.via = c;
    g.engine.Step(c, &fp);
    if (c.kind == Choice::Kind::kAgent) {
      const uint32_t a = c.index;
      // A step that only blocks observes nothing and changes nothing but the agent's status;
      // a step that repeats the agent's last word (a test_wait polling one phase again)
      // observes nothing new.
      const uint64_t word =
          g.engine.agent_state(a).status == kBlocked ? 0 : AgentWord(f.engine, a, fp);
      if (word != 0 && word != g.last_word[a]) {
        g.digest[a] = fpmix::Word(g.digest[a], word);
        g.last_word[a] = word;
      }
    } else {
      g.deliveries[f.engine.in_flight_ops()[c.index].agent] += DeliveryTerm(f.engine, c.index);
    }
    if (!seen.Insert(PairKey(g.engine, g, classes))) continue;
    ++res.states;
    const Outcome o = g.engine.outcome();
    if (o == Outcome::kRunning) {
      push();
      continue;
    }
    if (o != Outcome::kCompleted) continue;  // deadlocks and violations are the explorer's
    ++res.completed_pairs;
    const std::vector<Choice> path = path_to(c);
    Expected<Engine> e = Replay(program, params, path);
    if (!e.ok()) continue;
    std::vector<Finding> findings = CheckRules(program, *e, e->trace());
    if (collect_all) {
      if (HasErrors(findings) && !res.found) {
        res.found = true;
        res.path = path;
      }
      for (Finding& f : CheckRaces(program, *e, e->trace())) {
        if (races_seen.emplace(f.agent, f.pc, f.other_agent, f.other_pc, f.object, f.index, f.cta)
                .second) {
          res.races.push_back(std::move(f));
        }
      }
      for (Finding& f : findings) {
        if (collected
                .emplace(static_cast<int>(f.code()), f.agent, f.pc, f.other_agent, f.other_pc,
                         f.object_is_buffer, f.object, f.index, f.cta)
                .second) {
          res.findings.push_back(std::move(f));
        }
      }
      continue;
    }
    if (!HasErrors(findings)) continue;
    res.found = true;
    res.path = path;
    res.findings = std::move(findings);
    return res;
  }
  return res;
}

}  // namespace parity::verifier
