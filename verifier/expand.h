// One expansion of a state for the searches of verifier/explore.h (the explorer and the
// every-path rule check, verifier/every_path.h): its enabled steps and the persistent set the
// reduction takes (explore.h gives the argument), with guarded waits.
#ifndef PARITY_VERIFIER_EXPAND_H_
#define PARITY_VERIFIER_EXPAND_H_

#include <algorithm>
#include <cassert>
#include <memory>
#include <optional>
#include <vector>

#include "sim/engine/engine.h"
#include "verifier/explore.h"
#include "verifier/explore/reducer.h"

namespace parity::verifier::reduction {

// What one thread needs to expand states: its reducer (with its memo of agents' futures) and
// scratch vectors.
struct ExpandWorker {
  std::unique_ptr<Reducer> reducer;
  std::vector<Choice> choices;
  std::vector<Footprint> fps;
  std::vector<const Footprint*> fpp;  // per choice: its footprint (memo, or in fps)
  std::optional<Engine> scratch;  // measuring a step whose footprint cannot be predicted
  std::vector<uint8_t> take;
  std::vector<uint32_t> guard;  // per agent: the slot its next step would only block on
  std::vector<Choice> gchoices;
  std::vector<const Footprint*> gfps;
  std::vector<size_t> gmap;
  std::vector<uint8_t> gtake;
  size_t selected = 0;  // Expand: how many of `take` are set
};

// The reducer of a search with these options.
inline std::unique_ptr<Reducer> MakeReducer(const Engine& root, const ExploreOptions& o) {
  return std::make_unique<Reducer>(root, o.guarded_waits, o.mask_closure,
                                   o.phase_bounded_balance, o.held_phase_futures,
                                   o.exact_peer_futures, o.arrival_costs,
                                   o.named_barrier_commute);
}

// The enabled steps of `e` (w.choices) and the ones the search takes (w.take: all, or the
// persistent set). Returns their number.
inline size_t ExpandState(ExpandWorker& w, Engine& e, bool reduction, bool guarded_waits) {
  e.Choices(&w.choices);
  const size_t n = w.choices.size();
  if (reduction && n > 1) {
    // What each enabled step touches, predicted without taking it (an over-approximation of
    // the measured footprint, which is as good for the persistent set); measured by taking
    // the step only where the prediction fails.
    w.fps.resize(n);
    w.fpp.resize(n);
    w.guard.assign(e.num_agents(), Engine::kNoSlot);
    size_t n_guarded = 0;
    for (size_t i = 0; i < n; ++i) {
      const Choice c = w.choices[i];
      if (c.kind == Choice::Kind::kAgent) {
        uint32_t blocks_on = Engine::kNoSlot;
        const Footprint* peeked =
            w.reducer->Peek(e, c.index, guarded_waits ? &blocks_on : nullptr);
        if (blocks_on != Engine::kNoSlot) {
          w.guard[c.index] = blocks_on;
          ++n_guarded;
        }
        if (peeked == nullptr) {
          Footprint& fp = w.fps[i];
          if (w.scratch) {
            *w.scratch = e;
          } else {
            w.scratch.emplace(e);
          }
          w.scratch->Step(c, &fp);
          peeked = &fp;
        }
        w.fpp[i] = peeked;
        continue;
      }
      Footprint& fp = w.fps[i];
      w.fpp[i] = &fp;
      fp.Clear();
      const Engine::InFlight& f = e.in_flight_ops()[c.index];
      switch (f.kind) {
        case Engine::InFlight::kTmaDeliver:
        case Engine::InFlight::kBulkDeliver:
        case Engine::InFlight::kStAsync:
          fp.Add(f.slot, engine::Access::kCompleteTx);
          break;
        case Engine::InFlight::kCpAsyncArrive:
          fp.Add(f.slot);
          break;
        default:  // cp.async and store completions: the issuing agent's group state
          fp.Add(e.GroupsObject(f.agent));
          break;
      }
    }
    if (n_guarded == 0 || n_guarded == n) {
      // n_guarded == n: every enabled step only blocks (a deadlock follows); they are taken
      // as steps so that the engine reaches and reports its deadlock state.
      w.guard.clear();
      w.reducer->Choose(e, w.choices, w.fpp, w.guard, &w.take);
    } else {
      // Guarded waits (explore.h): a step that would only block is left out; its agent is a
      // blocked unit for the persistent set.
      w.gchoices.clear();
      w.gfps.clear();
      w.gmap.clear();
      for (size_t i = 0; i < n; ++i) {
        if (w.choices[i].kind == Choice::Kind::kAgent &&
            w.guard[w.choices[i].index] != Engine::kNoSlot) {
          continue;
        }
        w.gchoices.push_back(w.choices[i]);
        w.gfps.push_back(w.fpp[i]);
        w.gmap.push_back(i);
      }
      w.reducer->Choose(e, w.gchoices, w.gfps, w.guard, &w.gtake);
      w.take.assign(n, 0);
      for (size_t j = 0; j < w.gmap.size(); ++j) w.take[w.gmap[j]] = w.gtake[j];
    }
    w.selected = static_cast<size_t>(
        std::count_if(w.take.begin(), w.take.end(), [](uint8_t t) { return t != 0; }));
  } else {
    w.take.assign(n, 1);
    w.selected = n;
  }
  return n;
}

}  // namespace parity::verifier::reduction

#endif  // PARITY_VERIFIER_EXPAND_H_
