#include "verifier/tensormap.h"

#include <map>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <variant>

#include "verifier/deadlock.h"
#include "verifier/happens_before.h"
#include "verifier/pc_map.h"

namespace parity::verifier {
namespace {

using trace::EventKind;
using trace::TraceEvent;

struct Witness {  // done for an observer whose clock[component] >= value
  uint32_t component = 0;
  uint32_t value = 0;
};

struct Update {  // a tensormap.replace
  uint32_t agent = 0, pc = 0, map = 0, epoch = 0;
  size_t event = 0;
  VectorClock clock;
};

struct Use {  // a TMA's issue
  uint32_t agent = 0, pc = 0, map = 0, epoch = 0;
  uint32_t issuer_cta = 0;
  bool load = false;
  size_t event = 0;
  VectorClock clock;
  std::vector<Witness> done;
};

struct Acquire {  // a fence.proxy.tensormap acquire
  uint32_t map = 0, epoch = 0;
  VectorClock clock;
};

class TensorMaps {
 public:
  TensorMaps(const ir::Program& p, const engine::Engine& e, std::span<const TraceEvent> trace)
      : p_(p), e_(e), trace_(trace), pcs_(p), hb_(e, trace, &p) {}

  std::vector<Finding> Run() {
    releases_.resize(hb_.num_agents());
    acquires_.resize(hb_.num_agents());
    for (size_t i = 0; i < trace_.size(); ++i) Step(i, trace_[i]);
    if (!updates_.empty()) Pairs();
    return std::move(findings_);
  }

 private:
  uint32_t Role(uint32_t a) const { return e_.agent_info(a).role; }
  Witness Now(uint32_t a) const { return {hb_.AgentComponent(a), hb_.Own(a)}; }

  void Step(size_t i, const TraceEvent& ev) {
    const auto k = static_cast<EventKind>(ev.kind);
    const uint32_t a = hb_.AgentOf(ev);
    if (ev.agent != trace::kNoAgent && a == HappensBefore::kNone) return;
    hb_.Step(ev);
    switch (k) {
      case EventKind::kTensormapReplace:
        updates_.push_back(Update{a, ev.pc, ev.object, hb_.Own(a), i, hb_.clock(a)});
        break;
      case EventKind::kFence: {
        const auto kind = static_cast<ir::Fence::Kind>(ev.object);
        if (kind == ir::Fence::Kind::kProxyTensormapRelease) {
          releases_[a].push_back(hb_.Own(a));
        } else if (kind == ir::Fence::Kind::kProxyTensormapAcquire) {
          acquires_[a].push_back(Acquire{ev.index, hb_.Own(a), hb_.clock(a)});
        }
        break;
      }
      case EventKind::kTmaIssue:
      case EventKind::kTmaStoreIssue: {
        Use u;
        u.agent = a;
        u.pc = ev.pc;
        u.map = ev.object;
        u.epoch = hb_.Own(a);
        u.issuer_cta = hb_.CtaGlobal(ev, ev.cta);
        u.load = k == EventKind::kTmaIssue;
        u.event = i;
        u.clock = hb_.clock(a);
        const size_t id = uses_.size();
        uses_.push_back(std::move(u));
        in_flight_[a].push_back(id);
        if (uses_[id].load) {
          // Its deliveries, one per destination CTA (the issuer's own CTA without multicast).
          const uint32_t mask = (ev.flags & trace::kFlagMulticast)
                                    ? static_cast<uint16_t>(ev.value2)
                                    : 1u << ev.target_cta;
          for (uint32_t r = 0; r < 16; ++r) {
            if ((mask >> r) & 1) pending_[{uses_[id].issuer_cta, ev.pc, r}].push_back(id);
          }
        }
        break;
      }
      case EventKind::kTmaDeliver: {
        if (ev.flags & trace::kFlagPiece) break;
        auto it = pending_.find({hb_.CtaGlobal(ev, ev.cta), ev.pc, ev.target_cta});
        if (it == pending_.end() || it->second.empty()) break;
        const size_t id = it->second.front();
        it->second.erase(it->second.begin());
        // Its bytes landed: it read its descriptor. An observer of the phase they complete in
        // (the slot's current one) knows.
        const uint32_t slot = hb_.SlotOf(ev);
        uses_[id].done.push_back({hb_.SlotComponent(slot), hb_.completed(slot) + 1});
        break;
      }
      case EventKind::kBulkWaitEnd:
        // cp.async.bulk.wait_group[.read] of the issuer: its TMAs so far are done with their
        // descriptors (what DeepGEMM's fix relies on; see tensormap.h).
        if (a != HappensBefore::kNone) {
          for (size_t id : in_flight_[a]) uses_[id].done.push_back(Now(a));
          in_flight_[a].clear();
        }
        break;
      default:
        break;
    }
  }

  static bool Reaches(const std::vector<Witness>& done, const VectorClock& c) {
    for (const Witness& w : done) {
      if (c[w.component] >= w.value) return true;
    }
    return false;
  }

  // The update's release fence and the use's acquire of the map: a release of the updater after
  // the update that happens before an acquire of the issuer before the TMA.
  bool Fenced(const Update& w, const Use& u) const {
    const uint32_t wc = hb_.AgentComponent(w.agent);
    for (const Acquire& q : acquires_[u.agent]) {
      if (q.map != w.map || q.epoch >= u.epoch) continue;
      for (uint32_t r : releases_[w.agent]) {
        if (r > w.epoch && q.clock[wc] >= r) return true;
      }
    }
    return false;
  }

  void Pairs() {
    std::set<std::tuple<int, uint32_t, uint32_t, uint32_t, uint32_t, uint32_t>> seen;
    for (const Update& w : updates_) {
      const uint32_t wc = hb_.AgentComponent(w.agent);
      for (const Use& u : uses_) {
        if (u.map != w.map || e_.agent_info(u.agent).cluster != e_.agent_info(w.agent).cluster) {
          continue;
        }
        if (Reaches(u.done, w.clock)) continue;  // the TMA was done before the update
        const bool after = u.clock[wc] >= w.epoch;
        if (after && Fenced(w, u)) continue;
        const model::Code code =
            after ? model::Code::kTensormapNotFenced : model::Code::kTensormapModifiedInFlight;
        if (!seen.emplace(static_cast<int>(code), w.map, Role(w.agent), w.pc, Role(u.agent), u.pc)
                 .second) {
          continue;
        }
        Report(code, w, u);
      }
    }
  }

  void Report(model::Code code, const Update& w, const Use& u) {
    const std::string map = p_.tensor_maps[w.map].name;
    const std::string tma = std::string(u.load ? "tma.load" : "tma.store") + " of " +
                            AgentLabel(p_, e_, u.agent) + " at " +
                            pcs_.where(Role(u.agent), u.pc).ToString();
    const std::string upd = "tensormap.replace " + map + " of " + AgentLabel(p_, e_, w.agent) +
                            " at " + pcs_.where(Role(w.agent), w.pc).ToString();
    Finding f;
    f.violation = model::Violation{code, 0, 0};
    const bool in_flight = code == model::Code::kTensormapModifiedInFlight;
    if (in_flight) {
      f.message = "the " + upd + " may overlap the " + tma + ", which reads " + map +
                  ": neither is ordered after the other (no wait on the phase the TMA's bytes "
                  "complete in, and no cp.async.bulk.wait_group of its issuer, happens before "
                  "the update)";
    } else {
      f.message = "the " + tma + " follows the " + upd + " without the tensormap proxy fences: " +
                  "fence.proxy.tensormap.release after the update and fence.proxy.tensormap."
                  "acquire " + map + " before the TMA, the release happening before the "
                  "acquire; it may read a stale or torn descriptor";
    }
    const Update& at_w = w;
    f.agent = in_flight ? at_w.agent : u.agent;
    f.other_agent = in_flight ? u.agent : at_w.agent;
    f.pc = in_flight ? at_w.pc : u.pc;
    f.other_pc = in_flight ? u.pc : at_w.pc;
    f.where = pcs_.where(Role(f.agent), f.pc);
    f.cta = e_.agent_info(f.agent).cta_global;
    f.object_is_tensor_map = true;
    f.object = w.map;
    f.event = in_flight ? at_w.event : u.event;
    findings_.push_back(std::move(f));
  }

  const ir::Program& p_;
  const engine::Engine& e_;
  std::span<const TraceEvent> trace_;
  PcMap pcs_;
  HappensBefore hb_;
  std::vector<Update> updates_;
  std::vector<Use> uses_;
  std::vector<std::vector<uint32_t>> releases_;   // per agent: epochs of its release fences
  std::vector<std::vector<Acquire>> acquires_;    // per agent
  std::map<uint32_t, std::vector<size_t>> in_flight_;  // per agent: its uses since a bulk wait
  std::map<std::tuple<uint32_t, uint32_t, uint32_t>, std::vector<size_t>> pending_;
  std::vector<Finding> findings_;
};

}  // namespace

std::vector<Finding> CheckTensorMaps(const ir::Program& program, const engine::Engine& engine,
                                     std::span<const TraceEvent> trace) {
  return TensorMaps(program, engine, trace).Run();
}

}  // namespace parity::verifier
