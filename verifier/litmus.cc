#include "verifier/litmus.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

#include "sim/engine/engine.h"
#include "sim/ir/hash.h"
#include "sim/trace/event.h"

namespace parity::verifier {
namespace {

uint64_t Mix(uint64_t h) {
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdULL;
  h ^= h >> 33;
  h *= 0xc4ceb9fe1a85ec53ULL;
  h ^= h >> 33;
  return h;
}

// What the outcome reads from the history that the engine state may not hold: every agent's
// sequence of test_wait results, pending counts and readback classes (the result variable may be
// overwritten or never read). Hashed per agent and combined in agent order, so that histories
// that interleave the same per-agent sequences differently merge.
uint64_t HistoryKey(const std::vector<trace::TraceEvent>& trace) {
  std::map<uint64_t, uint64_t> per_agent;
  for (const trace::TraceEvent& e : trace) {
    const auto kind = static_cast<trace::EventKind>(e.kind);
    uint64_t v = 0;
    if (kind == trace::EventKind::kTestWait) {
      v = e.value != 0 ? 2 : 1;
    } else if (kind == trace::EventKind::kPendingCount ||
               kind == trace::EventKind::kGlobalReadback) {
      v = (uint64_t{e.kind} << 32) | static_cast<uint32_t>(e.value);
    } else {
      continue;
    }
    const uint64_t agent = (uint64_t{e.cluster} << 32) | (uint64_t{e.cta} << 16) | e.agent;
    uint64_t& h = per_agent[agent];
    h = Mix(h * 3 + v);
  }
  uint64_t key = 0x9e3779b97f4a7c15ULL;
  for (const auto& [agent, h] : per_agent) key = Mix(key ^ Mix(agent + 1) ^ h);
  return key;
}

uint64_t StateKey(const engine::Engine& e) { return Mix(e.Fingerprint() ^ HistoryKey(e.trace())); }

}  // namespace

Expected<litmus::Histogram> SimulateLitmus(const ir::Program& program, std::string_view name,
                                           const LitmusSearchOptions& options) {
  Expected<std::vector<int64_t>> params = ir::BindParams(program, {});
  if (!params.ok()) return params.status();
  litmus::Histogram h;
  h.name = std::string(name);
  h.hash = ir::ContentHashHex(program);
  h.source = "sim";
  // Each landing of a load larger than its phase's outstanding bytes credits them whole or in
  // pieces on Hopper (engine::EngineOptions::tx_pieces), landing by landing: the allowed
  // outcomes are the union over the choices. The first enumeration credits every box whole and
  // lists the landings where the choice exists (RunResult::tx_piece_keys); then each subset of
  // them (found so far) credits in pieces, and finally all of them. A test without such landings
  // is enumerated once.
  std::vector<uint64_t> keys;
  std::set<uint64_t> known;
  auto enumerate = [&](const engine::EngineOptions& eo) -> Status {
    Expected<engine::Engine> created = engine::Engine::Create(program, *params, eo);
    if (!created.ok()) return created.status();
    std::unordered_set<uint64_t> seen;
    std::vector<engine::Engine> stack;
    stack.push_back(std::move(created).value());
    seen.insert(StateKey(stack.back()));
    std::vector<engine::Choice> choices;
    while (!stack.empty()) {
      engine::Engine e = std::move(stack.back());
      stack.pop_back();
      e.Choices(&choices);
      // Copy: Step on a child engine may not touch `choices` but the vector is reused below.
      const std::vector<engine::Choice> here = choices;
      for (const engine::Choice& c : here) {
        engine::Engine child = e;
        const engine::Outcome o = child.Step(c);
        // Before the merge of equal states: the landing may differ where the states do not.
        for (uint64_t k : child.result().tx_piece_keys) {
          if (known.insert(k).second) keys.push_back(k);
        }
        if (!seen.insert(StateKey(child)).second) continue;
        if (seen.size() > options.max_states) {
          return Status("litmus.too-big",
                        "more than " + std::to_string(options.max_states) +
                            " distinct states: a litmus test must be small enough to enumerate",
                        SourceLocation{program.file, 0, 0});
        }
        switch (o) {
          case engine::Outcome::kRunning:
            stack.push_back(std::move(child));
            break;
          case engine::Outcome::kCompleted:
          case engine::Outcome::kDeadlock:
          case engine::Outcome::kViolation:
            ++h.runs;
            ++h.counts[litmus::OutcomeOf(program, child.trace())];
            break;
          case engine::Outcome::kError:
            return child.result().error;
          case engine::Outcome::kStepLimit:
            return Status("litmus.step-limit", "a run reached the engine's step limit",
                          SourceLocation{program.file, 0, 0});
        }
      }
    }
    return Status();
  };
  engine::EngineOptions eo;
  eo.record_trace = true;
  PARITY_RETURN_IF_ERROR(enumerate(eo));
  constexpr size_t kMaxPieceKeys = 8;  // subsets enumerated one by one up to this many landings
  std::set<std::vector<uint64_t>> done;
  for (bool grew = !keys.empty(); grew && keys.size() <= kMaxPieceKeys;) {
    grew = false;
    for (uint64_t m = 1; m < (uint64_t{1} << keys.size()) && !grew; ++m) {
      std::vector<uint64_t> at;
      for (size_t i = 0; i < keys.size(); ++i) {
        if ((m >> i) & 1) at.push_back(keys[i]);
      }
      std::sort(at.begin(), at.end());
      if (!done.insert(at).second) continue;
      const size_t before = keys.size();
      eo.tx_pieces_at = at;
      PARITY_RETURN_IF_ERROR(enumerate(eo));
      grew = keys.size() > before;
    }
  }
  if (!keys.empty()) {
    eo.tx_pieces_at.clear();
    eo.tx_pieces = true;
    PARITY_RETURN_IF_ERROR(enumerate(eo));
  }
  return h;
}

const char* LitmusVerdictName(LitmusVerdict v) {
  switch (v) {
    case LitmusVerdict::kAgree:
      return "agree";
    case LitmusVerdict::kFail:
      return "FAIL";
    case LitmusVerdict::kUndefined:
      return "undefined";
    case LitmusVerdict::kNotRun:
      return "not run on H100";
  }
  return "?";
}

Expected<LitmusComparison> CompareLitmus(const litmus::Histogram& sim,
                                         const litmus::Histogram& h100) {
  if (sim.source != "sim" || h100.source != "h100") {
    return Status("litmus.hash", "compare a Source=sim histogram with a Source=h100 one (got " +
                                     sim.source + " and " + h100.source + ")");
  }
  if (sim.hash != h100.hash) {
    return Status("litmus.hash", "test " + h100.name + ": the H100 outcomes are of schedule hash " +
                                     h100.hash + ", the test's schedule hashes to " + sim.hash +
                                     " (the .pipe changed since the H100 run: rerun it)");
  }
  LitmusComparison r;
  r.h100_runs = h100.runs;
  bool allows_ub = false;
  for (const auto& [outcome, n] : sim.counts) {
    if (outcome.starts_with("ub{")) allows_ub = true;
  }
  for (const auto& [outcome, n] : h100.counts) {
    if (n > 0 && !sim.counts.contains(outcome)) r.unexpected.push_back(outcome);
  }
  for (const auto& [outcome, n] : sim.counts) {
    if (outcome.starts_with("ub{")) continue;  // never observable as such on silicon
    auto it = h100.counts.find(outcome);
    if (it == h100.counts.end() || it->second == 0) r.never_observed.push_back(outcome);
  }
  if (r.unexpected.empty()) {
    r.verdict = LitmusVerdict::kAgree;
  } else {
    r.verdict = allows_ub ? LitmusVerdict::kUndefined : LitmusVerdict::kFail;
  }
  return r;
}

}  // namespace parity::verifier
