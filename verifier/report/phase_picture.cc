#include "verifier/report/phase_picture.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <tuple>

#include "verifier/report/narrate.h"

namespace parity::report {
namespace {

using report::BarrierClaim;
using report::Narration;
using report::WaitVerdict;

using trace::EventKind;
using trace::TraceEvent;

constexpr uint8_t K(EventKind k) { return static_cast<uint8_t>(k); }

using BarKey = std::tuple<int, int, int, int>;  // cluster, CTA, barrier, index
using AgentKey = std::tuple<int, int, int>;     // cluster, CTA, agent index in the CTA

// Events drawn on a barrier's lane. An st.async is drawn as an arrow from its issuer's lane to
// the barrier, where its complete_tx lands, not as a mark of its own there.
bool OnBarrier(uint8_t k) { return trace::NamesMbarrier(k) && k != K(EventKind::kStAsync); }
bool IsCopyIssue(uint8_t k) {
  return k == K(EventKind::kTmaIssue) || k == K(EventKind::kBulkIssue) ||
         k == K(EventKind::kStAsync);
}
bool IsCopyLanding(const TraceEvent& e) {
  return e.agent == trace::kNoAgent &&
         (e.kind == K(EventKind::kTmaDeliver) || e.kind == K(EventKind::kBulkComplete) ||
          e.kind == K(EventKind::kCompleteTx));
}
bool IsArriveLike(uint8_t k) {
  return k == K(EventKind::kArrive) || k == K(EventKind::kArriveExpectTx) ||
         k == K(EventKind::kExpectTx) || k == K(EventKind::kCompleteTx);
}

std::string Esc(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string F(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

constexpr double kLabelWidth = 230;
// The drawing's natural width: the page scales it to its own width (CSS), so a run fills the
// page without a sideways scroll. Events get kMinDx at least; a run longer than the natural
// width holds is shrunk to fit down to kMinWidth pixels (the gemm pipelines' ~900 events: 45%),
// and only a very long one (more than kScrollEvents events) keeps a scroll, at a quarter of its
// natural size at least, so that its marks stay apart.
constexpr double kNaturalWidth = 1400;
constexpr double kMinDx = 3;
constexpr double kMinWidth = 1200;
constexpr size_t kScrollEvents = 2000;
constexpr double kTop = 28;
constexpr double kBarrierLane = 46;
constexpr double kAgentLane = 28;
constexpr double kCtaHeader = 22;

// A named barrier's lane: BarKey{cluster, CTA, -1 - id, 0} (mbarrier lanes have barrier >= 0).
BarKey NamedKey(int cluster, int cta, int id) { return {cluster, cta, -1 - id, 0}; }
bool IsNamedKey(const BarKey& k) { return std::get<2>(k) < 0; }
bool IsNamedArrival(uint8_t k) {
  return k == K(EventKind::kNamedBarrierArrive) || k == K(EventKind::kNamedBarrierSyncBegin);
}

struct Lane {
  bool barrier = false;
  std::string name;   // "full[0]" / "producer[0]" / "named barrier q_empty"
  std::string label;  // as reports name it: "full[0] of CTA 0" (barrier lanes)
  std::string id;     // DOM id
  double y = 0, h = 0;
  bool culprit = false;
};

// A wait of an agent: its rect on the agent's lane, and for an mbarrier wait or a bar.sync the
// phase (instance) of the barrier it observed or waits for.
struct WaitMark {
  enum Kind { kAtOnce, kReleased, kBlocked, kTimedOut };
  AgentKey agent;
  size_t begin = 0, end = 0;
  Kind kind = kAtOnce;
  std::optional<BarKey> bar;
  int epoch = 0;       // inits of the barrier so far (a re-init starts its phases again)
  int64_t phase = 0;   // -1: the phase before phase 0 (complete on a fresh barrier)
  bool unreturned = false;  // released, but the run ended before the wait returned
  std::string id;
};

// Where a phase (a named barrier's instance) is drawn, for the links of the waits on it.
struct PhaseBox {
  double x0 = 0, x1 = 0, xc = -1;  // xc: its completion line (-1: never completed)
  std::string id;
};

class Picture {
 public:
  explicit Picture(const PictureInput& in) : in_(in), p_(*in.program), eng_(*in.engine) {}
  std::string Html();

 private:
  double X(size_t i) const { return kLabelWidth + (static_cast<double>(i) + 0.5) * dx_; }
  double Mid(const Lane& l) const { return l.y + l.h / 2; }
  std::string Title(size_t i) const { return "<title>" + Esc(narr_[i].Text()) + "</title>"; }
  std::string AgentName(const AgentKey& k) const {
    auto it = agent_names_.find(k);
    return it != agent_names_.end() ? it->second
                                    : "agent " + std::to_string(std::get<2>(k));
  }
  std::string PhaseId(const BarKey& k, int epoch, int64_t phase) const {
    return bar_lanes_.at(k).id + (epoch > 1 ? "-e" + std::to_string(epoch) : std::string()) +
           (phase < 0 ? std::string("-fresh") : "-p" + std::to_string(phase));
  }
  void Layout();
  void CollectWaits();
  void DrawBarriers(std::ostringstream& os);
  void DrawAgents(std::ostringstream& os);
  void DrawLinks(std::ostringstream& os);
  void DrawArrows(std::ostringstream& os);

  const PictureInput& in_;
  const ir::Program& p_;
  const engine::Engine& eng_;
  std::vector<Narration> narr_;
  double dx_ = 10, width_ = 0, height_ = 0;
  std::map<std::pair<int, int>, double> cta_y_;  // section header of each CTA
  std::map<BarKey, Lane> bar_lanes_;
  std::map<AgentKey, Lane> agent_lanes_;
  std::map<AgentKey, std::string> agent_names_;
  std::optional<BarKey> culprit_;
  std::string culprit_text_;
  std::vector<WaitMark> waits_;
  std::map<std::string, PhaseBox> boxes_;                     // by phase id
  std::map<std::string, std::vector<size_t>> waits_on_;       // phase id -> waits_ indices
};

void Picture::Layout() {
  const size_t n = std::max<size_t>(in_.events.size(), 1);
  dx_ = std::max(kMinDx, (kNaturalWidth - kLabelWidth - 30) / static_cast<double>(n));
  width_ = kLabelWidth + static_cast<double>(n) * dx_ + 30;
  std::set<std::pair<int, int>> ctas;
  for (uint32_t a = 0; a < eng_.num_agents(); ++a) {
    const engine::AgentInfo& info = eng_.agent_info(a);
    const AgentKey k{static_cast<int>(info.cluster), static_cast<int>(info.cta),
                     static_cast<int>(info.index_in_cta)};
    agent_names_[k] = eng_.role_name(a) + "[" + std::to_string(info.index_in_role) + "]";
    agent_lanes_[k].name = agent_names_[k];
    agent_lanes_[k].id = "agent-" + std::to_string(info.cluster) + "-" +
                         std::to_string(info.cta) + "-" + std::to_string(info.index_in_cta);
    ctas.insert({static_cast<int>(info.cluster), static_cast<int>(info.cta)});
  }
  auto add_lane = [&](const BarKey& k, const std::string& name, const std::string& label) {
    if (bar_lanes_.count(k)) return;
    Lane l;
    l.barrier = true;
    l.name = name;
    l.label = label;
    l.id = "lane-" + std::to_string(std::get<0>(k)) + "-" + std::to_string(std::get<1>(k)) +
           (IsNamedKey(k) ? "-n" + std::to_string(-1 - std::get<2>(k))
                          : "-b" + std::to_string(std::get<2>(k)) + "-" +
                                std::to_string(std::get<3>(k)));
    bar_lanes_[k] = l;
    ctas.insert({std::get<0>(k), std::get<1>(k)});
  };
  for (const TraceEvent& e : in_.events) {
    if (IsNamedArrival(e.kind)) {
      const std::string name = "named barrier " + ir::NamedBarrierName(p_, e.object);
      add_lane(NamedKey(e.cluster, e.cta, e.object), name, name);
      continue;
    }
    if (!OnBarrier(e.kind)) continue;
    const std::string base = e.object < p_.barriers.size() ? p_.barriers[e.object].name
                                                           : "barrier" + std::to_string(e.object);
    add_lane({e.cluster, e.target_cta, e.object, e.index},
             base + "[" + std::to_string(e.index) + "]",
             verifier::BarrierLabel(p_, e.object, e.index, e.target_cta));
  }
  // The red lane is the object the headline (the report's summary) names: the culprit a
  // re-run or an earlier wait proved, else the primary blocked wait's barrier.
  if (in_.deadlock != nullptr && in_.deadlock->culprit.found) {
    const verifier::DeadlockCulprit& c = in_.deadlock->culprit;
    const BarKey k{static_cast<int>(eng_.agent_info(c.agent).cluster), static_cast<int>(c.cta),
                   static_cast<int>(c.barrier), static_cast<int>(c.index)};
    if (bar_lanes_.count(k)) {
      culprit_ = k;
      bar_lanes_[k].culprit = true;
    }
    culprit_text_ = std::string("most likely cause (") + verifier::DeadlockCauseName(c.cause) +
                    ") at " + verifier::BarrierLabel(p_, c.barrier, c.index, c.cta) + ": " +
                    c.text;
  } else if (in_.deadlock != nullptr && !in_.deadlock->blocked.empty()) {
    const verifier::BlockedExplanation& x = in_.deadlock->blocked[in_.deadlock->primary];
    const engine::AgentInfo& w = eng_.agent_info(x.blocked.agent);
    std::optional<BarKey> k;
    if (x.blocked.wait == engine::WaitKind::kMbarrierParity ||
        x.blocked.wait == engine::WaitKind::kMbarrierToken) {
      k = BarKey{static_cast<int>(w.cluster), static_cast<int>(x.blocked.cta),
                 static_cast<int>(x.blocked.barrier), static_cast<int>(x.blocked.barrier_index)};
    } else if (x.blocked.wait == engine::WaitKind::kNamedBarrier) {
      k = NamedKey(static_cast<int>(w.cluster), static_cast<int>(w.cta),
                   static_cast<int>(x.blocked.barrier));
    }
    if (k && bar_lanes_.count(*k)) {
      culprit_ = *k;
      bar_lanes_[*k].culprit = true;
    }
    culprit_text_ = std::string("most likely cause (") + verifier::DeadlockCauseName(x.cause) +
                    (k && bar_lanes_.count(*k) ? ") at " + bar_lanes_[*k].label : std::string(")")) +
                    ": " + x.cause_text;
  }
  double y = kTop;
  for (const auto& cta : ctas) {
    cta_y_[cta] = y;
    y += kCtaHeader;
    for (auto& [k, l] : bar_lanes_) {
      if (std::get<0>(k) != cta.first || std::get<1>(k) != cta.second) continue;
      l.y = y;
      l.h = kBarrierLane;
      y += l.h;
    }
    for (auto& [k, l] : agent_lanes_) {
      if (std::get<0>(k) != cta.first || std::get<1>(k) != cta.second) continue;
      l.y = y;
      l.h = kAgentLane;
      y += l.h;
    }
    y += 6;
  }
  height_ = y + 10;
}

// Every wait of the run, with the barrier phase it observed: a wait that returns at once
// observes the preceding phase (complete), a wait that blocks waits for the current one (the
// narration's verdict, tools/cli/narrate.h); a bar.sync observes the instance it joined.
void Picture::CollectWaits() {
  std::map<AgentKey, size_t> open;  // agent -> index in waits_
  std::map<BarKey, int> epoch;
  std::map<BarKey, int64_t> instance;  // named barriers: instances completed
  std::set<std::string> completed;     // phase ids
  for (size_t i = 0; i < in_.events.size(); ++i) {
    const TraceEvent& e = in_.events[i];
    const BarKey bk{e.cluster, e.target_cta, e.object, e.index};
    if (e.kind == K(EventKind::kInit)) ++epoch[bk];
    if (e.kind == K(EventKind::kPhaseComplete) && bar_lanes_.count(bk)) {
      completed.insert(PhaseId(bk, epoch[bk], static_cast<int64_t>(e.value)));
    }
    int64_t joined = 0;
    if (IsNamedArrival(e.kind)) {
      const BarKey nk = NamedKey(e.cluster, e.cta, e.object);
      joined = instance[nk];
      if (e.value2 == 0) {  // this arrival completed the instance
        completed.insert(PhaseId(nk, 0, instance[nk]));
        ++instance[nk];
      }
    }
    if (e.agent == trace::kNoAgent) continue;
    const AgentKey ak{e.cluster, e.cta, e.agent};
    if (!agent_lanes_.count(ak)) continue;
    if (trace::IsWaitBegin(e.kind)) {
      WaitMark w;
      w.agent = ak;
      w.begin = w.end = i;
      w.kind = narr_[i].wait == WaitVerdict::kReturnsAtOnce ? WaitMark::kAtOnce
                                                            : WaitMark::kReleased;
      if (e.kind == K(EventKind::kWaitBegin) && narr_[i].claim) {
        const BarrierClaim& c = *narr_[i].claim;
        w.bar = BarKey{c.cluster, c.cta, c.barrier, c.index};
        w.epoch = epoch[*w.bar];
        w.phase = static_cast<int64_t>(c.state.phase) - (w.kind == WaitMark::kAtOnce ? 1 : 0);
      } else if (e.kind == K(EventKind::kNamedBarrierSyncBegin)) {
        w.bar = NamedKey(e.cluster, e.cta, e.object);
        w.phase = joined;
      }
      w.id = "wait-" + std::to_string(i + 1);
      open[ak] = waits_.size();
      waits_.push_back(w);
      continue;
    }
    auto it = open.find(ak);
    if (it == open.end() && e.kind == K(EventKind::kWaitTimeout) && narr_[i].claim) {
      // A GPU trace's bounded wait that gave up, with no begin recorded.
      const BarrierClaim& c = *narr_[i].claim;
      WaitMark w;
      w.agent = ak;
      w.begin = w.end = i;
      w.kind = WaitMark::kTimedOut;
      w.bar = BarKey{c.cluster, c.cta, c.barrier, c.index};
      w.epoch = epoch[*w.bar];
      w.phase = c.state.phase;
      w.id = "wait-" + std::to_string(i + 1);
      waits_.push_back(w);
      continue;
    }
    if (it == open.end()) continue;
    WaitMark& w = waits_[it->second];
    if (trace::IsWaitEnd(e.kind)) {
      w.end = i;
      // A wait with no verdict (not an mbarrier wait) that ends on the next event did not block.
      if (narr_[w.begin].wait == WaitVerdict::kNone && i == w.begin + 1) w.kind = WaitMark::kAtOnce;
      open.erase(it);
    } else if (e.kind == K(EventKind::kWaitTimeout)) {
      w.end = i;
      w.kind = WaitMark::kTimedOut;
      open.erase(it);
    }
  }
  // A wait still open when the run ends is blocked unless its phase completed: then it was
  // released and the run (stopped by a violation, or a trace's end) ended before it returned.
  for (const auto& [k, idx] : open) {
    WaitMark& w = waits_[idx];
    const bool done = w.bar && bar_lanes_.count(*w.bar) &&
                      completed.count(PhaseId(*w.bar, w.epoch, w.phase)) > 0;
    w.kind = done ? WaitMark::kReleased : WaitMark::kBlocked;
    w.end = in_.events.empty() ? 0 : in_.events.size() - 1;
    w.unreturned = done;
  }
  for (size_t i = 0; i < waits_.size(); ++i) {
    const WaitMark& w = waits_[i];
    if (w.bar && bar_lanes_.count(*w.bar)) waits_on_[PhaseId(*w.bar, w.epoch, w.phase)].push_back(i);
  }
}

void Picture::DrawBarriers(std::ostringstream& os) {
  struct Open {
    size_t start = 0;
    int64_t phase = 0;
    std::vector<std::pair<double, double>> arrivals, tx;  // (x, fraction / bytes)
    // The counts at the segment's end: arrivals (threads, for a named barrier) received and
    // expected, tx bytes outstanding.
    int64_t got = 0, expected = 0, tx_now = 0;
    bool counted = false;
  };
  auto start = [](size_t i, int64_t phase) {
    Open o;
    o.start = i;
    o.phase = phase;
    return o;
  };
  std::map<BarKey, Open> open;
  std::map<BarKey, int> epoch;
  std::map<BarKey, std::ostringstream> marks;  // per lane: markers drawn over the phases
  std::map<BarKey, std::ostringstream> segs;
  auto close = [&](const BarKey& k, Open& o, size_t end, bool completed) {
    const Lane& l = bar_lanes_[k];
    const bool named = IsNamedKey(k);
    if (named && !o.counted) return;  // no arrival yet: no instance to draw
    const double x0 = X(o.start) - dx_ / 2, x1 = X(end) + (completed ? 0 : dx_ / 2);
    const bool culprit = !completed && culprit_ && *culprit_ == k;
    const std::string id = PhaseId(k, epoch[k], o.phase);
    boxes_[id] = PhaseBox{x0, x1, completed ? X(end) : -1.0, id};
    std::string waiters;  // the waits that observe this phase, for the hover links
    for (size_t w : waits_on_[id]) waiters += (waiters.empty() ? "" : " ") + waits_[w].id;
    const std::string what = named ? "instance " : "phase ";
    std::ostringstream& s = segs[k];
    s << "<g class=\"phase-seg\"><rect class=\"phase" << (named ? " named" : "")
      << " parity" << (o.phase & 1) << (completed ? " complete" : " open")
      << (culprit ? " culprit" : "") << "\" id=\"" << id << "\" data-phase=\"" << o.phase
      << "\"" << (named ? "" : " data-parity=\"" + std::to_string(o.phase & 1) + "\"")
      << (waiters.empty() ? "" : " data-links=\"" + waiters + "\"") << " x=\"" << F(x0)
      << "\" y=\"" << F(l.y + 4) << "\" width=\"" << F(std::max(2.0, x1 - x0)) << "\" height=\""
      << F(l.h - 8) << "\">";
    s << "<title>" << Esc(l.label + ": " + what + std::to_string(o.phase) +
                          (named ? std::string()
                                 : " (parity " + std::to_string(o.phase & 1) + ")") +
                          ", events " + std::to_string(o.start + 1) + " to " +
                          (completed ? std::to_string(end + 1) + " (completed)"
                                     : "the end (never completed)"))
      << "</title></rect>";
    // Labels start right of the event that opens the segment (an init's tick sits on it).
    const double tx0 = X(o.start) + 5, room = x1 - tx0 - 3;
    if (room > 60) {
      s << "<text class=\"phase-label\" x=\"" << F(tx0) << "\" y=\"" << F(l.y + 15) << "\">"
        << what << o.phase;
      if (!named) s << " · parity " << (o.phase & 1);
      s << (completed ? "" : culprit ? " · never completes" : " · open") << "</text>";
    }
    // The counts, always in view: "1/2 arrived, tx 4096" (compact where the segment is narrow).
    if (o.counted) {
      std::string text = std::to_string(o.got) + "/" + std::to_string(o.expected);
      if (o.expected == 0 && !named) {
        text += " (not initialised)";  // a use before its init (the narration says so)
      } else if (room > 90) {
        text += named ? " threads" : " arrived";
        if (!named) text += ", tx " + std::to_string(o.tx_now);
      } else if (room > 50 && !named && o.tx_now != 0) {
        text += " tx " + std::to_string(o.tx_now);
      }
      s << "<text class=\"phase-counts\" x=\"" << F(room > 24 ? tx0 : x0 + 1) << "\" y=\""
        << F(l.y + l.h - 9) << "\">" << text << "</text>";
    }
    // The blocked waits on this phase, named on the lane (the other end of their links).
    std::string blocked, blocked_ids;
    for (size_t w : waits_on_[id]) {
      const WaitMark& m = waits_[w];
      if (m.kind != WaitMark::kBlocked && m.kind != WaitMark::kTimedOut) continue;
      blocked += (blocked.empty() ? "" : ", ") +
                 (std::get<1>(m.agent) != std::get<1>(k)
                      ? "CTA " + std::to_string(std::get<1>(m.agent)) + " "
                      : std::string()) +
                 AgentName(m.agent);
      blocked_ids += (blocked_ids.empty() ? "" : " ") + m.id;
    }
    if (!blocked.empty()) {
      s << "<text class=\"waiter-mark\" data-waits=\"" << blocked_ids << "\" data-links=\""
        << blocked_ids << "\" x=\"" << F(x1 - 4) << "\" y=\"" << F(l.y + 15)
        << "\" text-anchor=\"end\">&#9664; " << Esc(blocked) << " waits here, blocked</text>";
    }
    auto steps = [&](const std::vector<std::pair<double, double>>& pts, double scale,
                     const char* cls) {
      if (pts.empty() || scale <= 0) return;
      const double base = l.y + l.h - 5, span = l.h - 18;
      s << "<polyline class=\"" << cls << "\" points=\"" << F(x0) << "," << F(base);
      double prev = 0;
      for (const auto& [x, v] : pts) {
        s << " " << F(x) << "," << F(base - prev / scale * span) << " " << F(x) << ","
          << F(base - v / scale * span);
        prev = v;
      }
      s << " " << F(x1) << "," << F(base - prev / scale * span) << "\"/>";
    };
    steps(o.arrivals, 1.0, "arrivals");
    double max_tx = 0;
    for (const auto& [x, v] : o.tx) max_tx = std::max(max_tx, std::abs(v));
    steps(o.tx, max_tx, "tx");
    s << "</g>";
  };
  for (size_t i = 0; i < in_.events.size(); ++i) {
    const TraceEvent& e = in_.events[i];
    if (IsNamedArrival(e.kind)) {
      // A named barrier: its instances as segments, each arrival a mark with the threads in.
      const BarKey k = NamedKey(e.cluster, e.cta, e.object);
      const Lane& l = bar_lanes_[k];
      Open& o = open[k];
      if (!o.counted) o.start = i;
      o.counted = true;
      o.expected = static_cast<int64_t>(e.value);
      o.got = e.value2 == 0 ? o.expected : static_cast<int64_t>(e.value2);
      o.arrivals.push_back({X(i), o.expected > 0 ? static_cast<double>(o.got) / o.expected : 1});
      marks[k] << "<circle class=\"mark arrive\" cx=\"" << F(X(i)) << "\" cy=\"" << F(Mid(l))
               << "\" r=\"3.5\">" << Title(i) << "</circle>";
      if (e.value2 == 0) {
        marks[k] << "<line class=\"completion\" data-phase=\"" << o.phase << "\" x1=\""
                 << F(X(i)) << "\" y1=\"" << F(l.y + 2) << "\" x2=\"" << F(X(i)) << "\" y2=\""
                 << F(l.y + l.h - 2) << "\">" << Title(i) << "</line>";
        close(k, o, i, true);
        o = start(i, o.phase + 1);
      }
      continue;
    }
    if (!OnBarrier(e.kind)) continue;
    const BarKey k{e.cluster, e.target_cta, e.object, e.index};
    const Lane& l = bar_lanes_[k];
    if (!open.count(k)) open[k] = start(i, 0);
    Open& o = open[k];
    const std::optional<BarrierClaim>& c = narr_[i].claim;
    if (e.kind == K(EventKind::kInit)) {
      ++epoch[k];
      o = start(i, 0);
    }
    if (c && e.kind != K(EventKind::kPhaseComplete)) {
      const model::MbarrierState& st = c->state;
      // The event that completes the phase shows the next phase's state: count it as full.
      o.counted = true;
      o.expected = st.expected_count;
      o.got = narr_[i].completes_phase ? st.expected_count : st.expected_count - st.pending_count;
      o.tx_now = narr_[i].completes_phase ? 0 : st.tx_count;
    }
    if (c && c->state.expected_count > 0 &&
        (IsArriveLike(e.kind) || e.kind == K(EventKind::kTmaDeliver) ||
         e.kind == K(EventKind::kBulkComplete) || e.kind == K(EventKind::kCpAsyncArrive))) {
      const double got = static_cast<double>(o.got) / static_cast<double>(o.expected);  // > 0
      o.arrivals.push_back({X(i), std::clamp(got, 0.0, 1.0)});
      o.tx.push_back({X(i), static_cast<double>(o.tx_now)});
    }
    std::ostringstream& m = marks[k];
    const double x = X(i), ym = Mid(l);
    switch (static_cast<EventKind>(e.kind)) {
      case EventKind::kPhaseComplete:
        m << "<line class=\"completion\" data-phase=\"" << static_cast<uint32_t>(e.value)
          << "\" x1=\"" << F(x) << "\" y1=\"" << F(l.y + 2) << "\" x2=\"" << F(x) << "\" y2=\""
          << F(l.y + l.h - 2) << "\">" << Title(i) << "</line>";
        close(k, o, i, true);
        o = start(i, static_cast<int64_t>(e.value) + 1);
        if (c) {
          o.counted = true;
          o.expected = c->state.expected_count;
          o.got = c->state.expected_count - c->state.pending_count;
          o.tx_now = c->state.tx_count;
        }
        break;
      case EventKind::kArrive:
      case EventKind::kArriveExpectTx:
      case EventKind::kCpAsyncArrive:
        m << "<circle class=\"mark arrive" << (e.target_cta != e.cta ? " remote" : "")
          << "\" cx=\"" << F(x) << "\" cy=\"" << F(ym) << "\" r=\"3.5\">" << Title(i)
          << "</circle>";
        break;
      case EventKind::kExpectTx:
      case EventKind::kCompleteTx:
      case EventKind::kTmaDeliver:
      case EventKind::kBulkComplete: {
        const bool up = e.kind == K(EventKind::kExpectTx);
        m << "<path class=\"mark tx\" d=\"M" << F(x - 4) << "," << F(up ? ym + 3 : ym - 3) << " L"
          << F(x + 4) << "," << F(up ? ym + 3 : ym - 3) << " L" << F(x) << ","
          << F(up ? ym - 4 : ym + 4) << " Z\">" << Title(i) << "</path>";
        break;
      }
      case EventKind::kInit:
      case EventKind::kInval: {
        // A fresh barrier's "phase before phase 0" (what a first wait for parity 1 observes)
        // is its init.
        const bool init = e.kind == K(EventKind::kInit);
        const std::string id = init ? PhaseId(k, epoch[k], -1) : std::string();
        if (init) boxes_[id] = PhaseBox{x - 2, x + 2, x, id};
        std::string waiters;
        if (init) {
          for (size_t w : waits_on_[id]) waiters += (waiters.empty() ? "" : " ") + waits_[w].id;
        }
        m << "<rect class=\"mark init\"" << (init ? " id=\"" + id + "\"" : std::string())
          << (waiters.empty() ? "" : " data-links=\"" + waiters + "\"") << " x=\"" << F(x - 2)
          << "\" y=\"" << F(l.y + 4) << "\" width=\"4\" height=\"" << F(l.h - 8) << "\">"
          << Title(i) << "</rect>";
        break;
      }
      default:
        break;
    }
  }
  for (auto& [k, o] : open) close(k, o, in_.events.empty() ? 0 : in_.events.size() - 1, false);
  for (auto& [k, l] : bar_lanes_) {
    os << "<g class=\"lane barrier" << (IsNamedKey(k) ? " named" : "")
       << (l.culprit ? " culprit-lane" : "") << "\" data-kind=\"barrier\" data-name=\""
       << Esc(l.name) << "\" data-cta=\"" << std::get<1>(k) << "\" data-label=\""
       << Esc(l.label) << "\" id=\"" << l.id << "\">";
    os << "<rect class=\"lane-frame barrier-frame" << (l.culprit ? " culprit" : "") << "\" x=\"0\" y=\""
       << F(l.y) << "\" width=\"" << F(width_) << "\" height=\"" << F(l.h) << "\"/>";
    os << "<text class=\"lane-label\" x=\"10\" y=\"" << F(l.y + l.h / 2 + 4) << "\">"
       << Esc(l.name) << "</text>";
    if (l.culprit) {
      os << "<text class=\"culprit-label\" x=\"10\" y=\"" << F(l.y + l.h - 4)
         << "\">most likely cause<title>" << Esc(culprit_text_) << "</title></text>";
    }
    os << segs[k].str() << marks[k].str() << "</g>\n";
  }
}

void Picture::DrawAgents(std::ostringstream& os) {
  std::map<AgentKey, std::ostringstream> body;
  static const char* const kClass[] = {"at-once", "released", "blocked", "blocked timed-out"};
  for (const WaitMark& w : waits_) {
    const Lane& l = agent_lanes_[w.agent];
    const bool forever = w.kind == WaitMark::kBlocked;
    const double x0 = X(w.begin) - 2, x1 = forever ? width_ - 12 : X(w.end) + 2;
    const bool linked = w.bar && bar_lanes_.count(*w.bar);
    const std::string phase_id = linked ? PhaseId(*w.bar, w.epoch, w.phase) : std::string();
    const bool has_box = linked && boxes_.count(phase_id);
    // What it waits on: an mbarrier or a named barrier (which have lanes), or another wait (a
    // cluster barrier, an async group, the primary grid).
    const uint8_t kind = in_.events[w.begin].kind;
    const bool on_barrier = kind == K(EventKind::kWaitBegin) ||
                            kind == K(EventKind::kWaitTimeout) ||
                            kind == K(EventKind::kNamedBarrierSyncBegin);
    body[w.agent] << "<rect class=\"wait " << kClass[w.kind] << "\" id=\"" << w.id
                  << "\" data-agent=\"" << Esc(AgentName(w.agent)) << "\""
                  << (on_barrier ? " data-on=\"barrier\"" : "");
    if (linked) {
      body[w.agent] << " data-lane=\"" << bar_lanes_[*w.bar].id << "\" data-observed=\""
                    << w.phase << "\"" << (has_box ? " data-phase=\"" + phase_id + "\"" : "")
                    << " data-links=\"" << bar_lanes_[*w.bar].id
                    << (has_box ? " " + phase_id : std::string()) << " link-" << w.id << "\"";
    }
    body[w.agent] << " x=\"" << F(x0) << "\" y=\"" << F(l.y + 5) << "\" width=\""
                  << F(std::max(4.0, x1 - x0)) << "\" height=\"" << F(l.h - 10) << "\"><title>"
                  << Esc(narr_[w.begin].Text())
                  << (w.end != w.begin ? "\n" + Esc(narr_[w.end].Text()) : std::string())
                  << (forever ? "\nblocked forever: the wait never returns" : "")
                  << (w.unreturned ? "\nreleased: its phase completed, and the run ended before "
                                     "the wait returned"
                                   : "")
                  << "</title></rect>";
    if (!linked) continue;
    // The phase it observed (or waits for), written on the wait.
    const bool named = IsNamedKey(*w.bar);
    std::string text = w.phase < 0 ? "fresh" : (named ? "#" : "ph ") + std::to_string(w.phase);
    if (forever) {
      text = "waits for " + std::string(named ? "instance " : "phase ") +
             std::to_string(w.phase) + " of " + bar_lanes_[*w.bar].label;
    }
    body[w.agent] << "<text class=\"wait-phase\" x=\"" << F(forever ? x0 + 4 : x0 + 1)
                  << "\" y=\"" << F(l.y + l.h / 2 + 3) << "\">" << Esc(text) << "</text>";
  }
  for (size_t i = 0; i < in_.events.size(); ++i) {
    const TraceEvent& e = in_.events[i];
    if (e.agent == trace::kNoAgent) continue;
    const AgentKey k{e.cluster, e.cta, e.agent};
    if (!agent_lanes_.count(k)) continue;
    if (trace::IsWaitBegin(e.kind) || trace::IsWaitEnd(e.kind) ||
        e.kind == K(EventKind::kWaitTimeout)) {
      continue;
    }
    const Lane& l = agent_lanes_[k];
    const double x = X(i), ym = Mid(l);
    const char* cls = e.kind == K(EventKind::kUse) || e.kind == K(EventKind::kWrite) ? "use"
                      : IsCopyIssue(e.kind)                                          ? "issue"
                      : IsArriveLike(e.kind) || e.kind == K(EventKind::kCpAsyncArrive) ||
                              e.kind == K(EventKind::kNamedBarrierArrive)
                          ? "arrive"
                      : e.kind == K(EventKind::kExit) ? "exit"
                                                      : "other";
    body[k] << "<rect class=\"op " << cls << "\" x=\"" << F(x - 2.5) << "\" y=\"" << F(ym - 6)
            << "\" width=\"5\" height=\"12\">" << Title(i) << "</rect>";
  }
  for (auto& [k, l] : agent_lanes_) {
    os << "<g class=\"lane agent\" data-kind=\"agent\" data-name=\"" << Esc(l.name)
       << "\" data-cta=\"" << std::get<1>(k) << "\" id=\"" << l.id << "\">";
    os << "<rect class=\"lane-frame agent-frame\" x=\"0\" y=\"" << F(l.y) << "\" width=\""
       << F(width_) << "\" height=\"" << F(l.h) << "\"/>";
    os << "<text class=\"lane-label\" x=\"10\" y=\"" << F(l.y + l.h / 2 + 4) << "\">"
       << Esc(l.name) << "</text>";
    os << body[k].str() << "</g>\n";
  }
}

// A line from each wait to the phase it observed: to the phase's completion for a wait that
// returned, into the open phase (red) for a wait blocked forever or timed out.
void Picture::DrawLinks(std::ostringstream& os) {
  for (const WaitMark& w : waits_) {
    if (!w.bar || !bar_lanes_.count(*w.bar)) continue;
    auto box = boxes_.find(PhaseId(*w.bar, w.epoch, w.phase));
    if (box == boxes_.end()) continue;
    const Lane& from = agent_lanes_[w.agent];
    const Lane& to = bar_lanes_[*w.bar];
    const bool blocked = w.kind == WaitMark::kBlocked || w.kind == WaitMark::kTimedOut;
    const double x1 = blocked ? X(w.begin) : X(w.end);
    const double x2 = box->second.xc >= 0 ? box->second.xc
                      : std::clamp(x1, box->second.x0 + 6, std::max(box->second.x0 + 6,
                                                                      box->second.x1 - 6));
    const bool down = from.y > to.y;  // the wait's lane below the barrier's
    const double y1 = down ? from.y + 5 : from.y + from.h - 5;
    const double y2 = down ? to.y + to.h - 4 : to.y + 4;
    const double ym = (y1 + y2) / 2;
    os << "<path class=\"link " << (blocked ? "blocked-link" : "observe") << "\" id=\"link-"
       << w.id << "\" data-wait=\"" << w.id << "\" data-phase=\"" << box->second.id
       << "\" data-links=\"" << w.id << " " << box->second.id << " " << to.id << "\" d=\"M"
       << F(x1) << "," << F(y1) << " C" << F(x1) << "," << F(ym) << " " << F(x2) << "," << F(ym)
       << " " << F(x2) << "," << F(y2) << "\"" << (blocked ? " marker-end=\"url(#head-blocked)\"" : "")
       << "><title>" << Esc(AgentName(w.agent) + (blocked ? " waits for " : " observed ") +
                             (IsNamedKey(*w.bar) ? "instance " : "phase ") +
                             (w.phase < 0 ? std::string("before 0 (fresh barrier)")
                                          : std::to_string(w.phase)) +
                             " of " + to.label)
       << "</title></path>\n";
  }
}

void Picture::DrawArrows(std::ostringstream& os) {
  // Copies: issue -> landing, matched first-in first-out per (cluster, issuing CTA, instruction,
  // destination CTA), as the landing records its issuer's CTA and instruction.
  std::map<std::tuple<int, int, int, int>, std::vector<size_t>> in_flight;
  auto arrow = [&](const char* cls, double x1, double y1, double x2, double y2,
                   const std::string& title) {
    const double bend = std::max(12.0, std::abs(x2 - x1) / 3);
    os << "<path class=\"arrow " << cls << "\" d=\"M" << F(x1) << "," << F(y1) << " C"
       << F(x1 + bend) << "," << F(y1) << " " << F(x2 - bend) << "," << F(y2) << " " << F(x2)
       << "," << F(y2) << "\" marker-end=\"url(#head-" << cls << ")\"><title>" << Esc(title)
       << "</title></path>\n";
  };
  for (size_t i = 0; i < in_.events.size(); ++i) {
    const TraceEvent& e = in_.events[i];
    if (e.agent != trace::kNoAgent && IsCopyIssue(e.kind)) {
      const bool multicast = (e.flags & trace::kFlagMulticast) != 0 && e.value2 >= 0 &&
                             e.kind != K(EventKind::kStAsync);
      for (int d = 0; d < 16; ++d) {
        const bool dest = multicast ? ((static_cast<uint32_t>(e.value2) >> d) & 1u) != 0
                                    : d == e.target_cta;
        if (dest) in_flight[{e.cluster, e.cta, e.pc, d}].push_back(i);
      }
    }
    if (IsCopyLanding(e)) {
      auto& q = in_flight[{e.cluster, e.cta, e.pc, e.target_cta}];
      if (q.empty()) continue;
      const size_t b = q.front();
      q.erase(q.begin());
      const TraceEvent& is = in_.events[b];
      auto from = agent_lanes_.find({is.cluster, is.cta, is.agent});
      auto to = bar_lanes_.find({e.cluster, e.target_cta, e.object, e.index});
      if (from == agent_lanes_.end() || to == bar_lanes_.end()) continue;
      const bool multicast = (is.flags & trace::kFlagMulticast) != 0;
      arrow(multicast ? "multicast" : is.kind == K(EventKind::kStAsync) ? "remote" : "copy",
            X(b), Mid(from->second), X(i), Mid(to->second),
            narr_[b].Text() + "\n" + narr_[i].Text());
    }
    // A remote arrive: from the arriving agent to the barrier of the other CTA.
    if (e.agent != trace::kNoAgent && e.target_cta != e.cta && IsArriveLike(e.kind)) {
      auto from = agent_lanes_.find({e.cluster, e.cta, e.agent});
      auto to = bar_lanes_.find({e.cluster, e.target_cta, e.object, e.index});
      if (from == agent_lanes_.end() || to == bar_lanes_.end()) continue;
      arrow("remote", X(i) - dx_ / 2, Mid(from->second), X(i), Mid(to->second), narr_[i].Text());
    }
  }
}

constexpr char kStyle[] = R"(
body{font:13px/1.4 system-ui,sans-serif;margin:16px;color:#1f2937;background:#fff}
h1{font-size:18px;margin:0 0 4px} .outcome{margin:0 0 6px;font-weight:600}
.outcome.bad{color:#b91c1c} .cause{color:#b91c1c;max-width:1100px;margin:0 0 8px}
.legend span{display:inline-block;margin-right:14px} .sw{display:inline-block;width:18px;
height:10px;margin-right:4px;vertical-align:middle;border:1px solid #64748b}
.scroll{overflow-x:auto;border:1px solid #cbd5e1}
svg{font:11px system-ui,sans-serif;display:block} svg.timeline{width:100%;height:auto}
.lane-frame{fill:#fff;stroke:#e2e8f0} .barrier-frame{fill:#f8fafc}
.lane-frame.culprit{stroke:#dc2626;stroke-width:3;fill:#fef2f2}
.lane-label{font-weight:600;fill:#0f172a} .cta-label{font-weight:700;fill:#334155;font-size:12px}
.culprit-label{fill:#dc2626;font-weight:700;font-size:10px}
.phase{stroke:#475569;stroke-width:1} .phase.parity0{fill:#bfdbfe} .phase.parity1{fill:#fde68a}
.phase.open{stroke-dasharray:4 3} .phase.culprit{stroke:#dc2626;stroke-width:2.5}
.phase-label{fill:#1e293b;font-size:10px} .phase-counts{fill:#0f172a;font-size:10px;font-weight:600}
.phase.named{fill:#e9d5ff} .waiter-mark{fill:#b91c1c;font-size:10px;font-weight:700}
.wait-phase{font-size:9px;fill:#0f172a;pointer-events:none}
.link{fill:none;pointer-events:stroke} .link.observe{stroke:#16a34a;stroke-width:1;stroke-dasharray:2 2;opacity:.7}
.link.blocked-link{stroke:#dc2626;stroke-width:2;opacity:.9}
.hl{stroke:#dc2626 !important;stroke-width:3 !important;opacity:1 !important}
text.hl{fill:#dc2626;stroke:none !important} g.lane.hl>.lane-frame{stroke:#dc2626;stroke-width:3}
polyline.arrivals{fill:none;stroke:#15803d;stroke-width:1.5}
polyline.tx{fill:none;stroke:#7c3aed;stroke-width:1.2;stroke-dasharray:3 2;opacity:.6}
polyline.arrivals{opacity:.6}
.completion{stroke:#0f172a;stroke-width:3}
.mark.arrive{fill:#15803d;stroke:#fff} .mark.arrive.remote{fill:#0891b2}
.mark.tx{fill:#7c3aed} .mark.init{fill:#475569}
.wait{stroke-width:1} .wait.at-once{fill:#bbf7d0;stroke:#16a34a}
.wait.released{fill:#fed7aa;stroke:#ea580c} .wait.blocked{fill:#fecaca;stroke:#dc2626;stroke-width:2.5}
.op{fill:#64748b} .op.use{fill:#0f766e} .op.issue{fill:#7c3aed} .op.arrive{fill:#15803d}
.op.exit{fill:#0f172a}
.arrow{fill:none;stroke-width:1.4;opacity:.75} .arrow.copy{stroke:#7c3aed}
.arrow.multicast{stroke:#c026d3} .arrow.remote{stroke:#0891b2;stroke-dasharray:5 3}
.axis{fill:#64748b;font-size:10px} .running-on{fill:#f1f5f9}
.narration{font:12px/1.45 ui-monospace,monospace;white-space:pre-wrap;max-width:1200px}
)";


// The page's script: hovering (or clicking, to pin) an element with data-links highlights the
// elements it names (a wait: its barrier lane, the phase it observed and the link; a phase or a
// lane's waiter mark: the waits on it). Then what the browser drew (sizes from its layout), for
// tests that load the page headless (tests/tools/phase_picture_check.py).
constexpr char kScript[] = R"JS(
(function(){const q=s=>Array.from(document.querySelectorAll(s));
const byId=id=>document.getElementById(id);
const mark=(el,on)=>(el.dataset.links||'').split(' ').forEach(id=>{const t=id&&byId(id);
  if(t)t.classList.toggle('hl',on);});
q('[data-links]').forEach(el=>{
  el.addEventListener('mouseenter',()=>{el.classList.add('hl');mark(el,true);});
  el.addEventListener('mouseleave',()=>{if(el.dataset.pinned)return;el.classList.remove('hl');mark(el,false);});
  el.addEventListener('click',()=>{const on=!el.dataset.pinned;if(on)el.dataset.pinned='1';
    else delete el.dataset.pinned;el.classList.toggle('hl',on);mark(el,on);});});
const drawn=e=>{const b=e.getBBox();return b.width>0&&b.height>0;};
const stroked=e=>{const b=e.getBBox();return b.width+b.height>0;};  // a link may be straight
const meets=(a,b)=>{const x=a.getBBox(),y=b.getBBox();return x.x<y.x+y.width&&y.x<x.x+x.width&&
  x.y<y.y+y.height&&y.y<x.y+x.height;};
const f=q('rect.lane-frame.culprit')[0], svg=document.querySelector('svg.timeline');
const vw=document.documentElement.clientWidth, box=document.querySelector('.scroll');
const hover=w=>{w.dispatchEvent(new MouseEvent('mouseenter'));const ph=byId(w.dataset.phase||''),
  lane=byId(w.dataset.lane||'');let ok=!!ph&&!!lane&&ph.classList.contains('hl')&&
  lane.classList.contains('hl');w.dispatchEvent(new MouseEvent('mouseleave'));
  if(ok){ph.dispatchEvent(new MouseEvent('mouseenter'));ok=w.classList.contains('hl');
    ph.dispatchEvent(new MouseEvent('mouseleave'));}
  return ok&&!w.classList.contains('hl');};  // both ways, and off again
const linked=w=>{const ph=byId(w.dataset.phase||''),l=byId('link-'+w.id),
  t=w.nextElementSibling;return {agent:w.dataset.agent,lane:(byId(w.dataset.lane||'')||{dataset:{}}).dataset.label||'',
  phase:ph?ph.dataset.phase||'fresh':'',observed:w.dataset.observed||'',
  phase_open:!!ph&&ph.classList.contains('open'),link:!!l&&stroked(l),
  text:t&&t.classList.contains('wait-phase')&&drawn(t)?t.textContent:'',hover:hover(w)};};
const bar=s=>q(s).filter(w=>w.dataset.on);
document.getElementById('render-check').textContent=JSON.stringify({
 barrier_lanes:q('g.lane.barrier').filter(drawn).map(g=>g.dataset.cta+' '+g.dataset.name),
 agent_lanes:q('g.lane.agent').filter(drawn).map(g=>g.dataset.cta+' '+g.dataset.name),
 phases:q('rect.phase').filter(drawn).length,
 parities:[...new Set(q('rect.phase:not(.named)').map(r=>r.dataset.parity))].sort(),
 completions:q('line.completion').length,
 copy_arrows:q('path.arrow.copy').filter(drawn).length,
 multicast_arrows:q('path.arrow.multicast').filter(drawn).length,
 remote_arrows:q('path.arrow.remote').filter(drawn).length,
 waits_at_once:q('rect.wait.at-once').length,waits_released:q('rect.wait.released').length,
 waits_blocked:q('rect.wait.blocked').filter(drawn).length,
 culprit_lanes:q('g.lane.culprit-lane').filter(drawn).map(g=>g.dataset.cta+' '+g.dataset.name),
 culprit_labels:q('g.lane.culprit-lane').map(g=>g.dataset.label),
 culprit_stroke:f?getComputedStyle(f).stroke:'',
 outcome:(byId('outcome')||{textContent:''}).textContent,
 blocked:bar('rect.wait.blocked').map(w=>Object.assign(linked(w),{waiter_mark:
   q('#'+w.dataset.lane+' .waiter-mark').filter(m=>m.dataset.waits.split(' ').includes(w.id)&&drawn(m))
   .map(m=>m.textContent).join(' | ')})),
 returned:bar('rect.wait.at-once,rect.wait.released').map(linked),
 counts:q('text.phase-counts').filter(drawn).map(t=>t.textContent),
 labels_cut_by_init:q('text.phase-label').filter(t=>q('rect.mark.init').some(m=>meets(t,m))).length,
 page_width:vw,svg_client_width:svg.getBoundingClientRect().width,
 side_scroll:document.documentElement.scrollWidth>vw||box.scrollWidth>box.clientWidth,
 titles:q('svg title').length,svg_width:svg.getBBox().width});
})();
)JS";

}  // namespace

std::string Picture::Html() {
  narr_ = report::NarrateRun(p_, eng_, in_.events);
  Layout();
  CollectWaits();
  std::ostringstream svg;
  // Scaled to the page's width (svg.timeline); a very long run scrolls instead (kScrollEvents).
  const double min_width = in_.events.size() > kScrollEvents
                               ? width_ / 4
                               : std::min(width_ / 2, kMinWidth);
  svg << "<svg class=\"timeline\" xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 "
      << F(width_) << " " << F(height_) << "\" preserveAspectRatio=\"xMinYMin meet\" style=\""
      << "min-width:" << F(min_width) << "px\">\n";
  svg << "<defs>";
  for (const auto& [cls, color] : {std::pair<const char*, const char*>{"copy", "#7c3aed"},
                                   {"multicast", "#c026d3"}, {"remote", "#0891b2"},
                                   {"blocked", "#dc2626"}}) {
    svg << "<marker id=\"head-" << cls << "\" viewBox=\"0 0 10 10\" refX=\"9\" refY=\"5\" "
        << "markerWidth=\"7\" markerHeight=\"7\" orient=\"auto-start-reverse\"><path d=\"M0,0 "
        << "L10,5 L0,10 z\" fill=\"" << color << "\"/></marker>";
  }
  svg << "</defs>\n";
  // Event axis, and the part after a trace's last event (the model running on) shaded.
  if (in_.recorded_events < in_.events.size()) {
    const double x0 = X(in_.recorded_events) - dx_ / 2;
    svg << "<rect class=\"running-on\" x=\"" << F(x0) << "\" y=\"0\" width=\""
        << F(width_ - x0) << "\" height=\"" << F(height_) << "\"><title>after the trace's last "
        << "event: the model running on alone</title></rect>";
  }
  const size_t step = dx_ >= 20 ? 1 : dx_ >= 8 ? 5 : dx_ >= 4 ? 10 : 50;
  svg << "<text class=\"axis\" x=\"10\" y=\"16\">event</text>";
  for (size_t i = 0; i < in_.events.size(); i += step) {
    svg << "<text class=\"axis\" x=\"" << F(X(i)) << "\" y=\"16\" text-anchor=\"middle\">"
        << (i + 1) << "</text>";
  }
  for (const auto& [cta, y] : cta_y_) {
    svg << "<text class=\"cta-label\" x=\"6\" y=\"" << F(y + 15) << "\">cluster " << cta.first
        << " CTA " << cta.second << "</text>";
  }
  DrawBarriers(svg);
  DrawAgents(svg);
  DrawLinks(svg);
  DrawArrows(svg);
  svg << "</svg>";

  std::ostringstream os;
  os << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>"
     << Esc(in_.title) << "</title><style>" << kStyle << "</style></head><body>\n";
  os << "<h1>" << Esc(in_.title) << "</h1>\n";
  os << "<p class=\"outcome" << (in_.deadlock ? " bad" : "") << "\" id=\"outcome\">"
     << Esc(in_.outcome) << "</p>\n";
  if (!culprit_text_.empty()) {
    os << "<p class=\"cause\" id=\"cause\">" << Esc(culprit_text_) << "</p>\n";
  }
  os << "<p class=\"legend\"><span><i class=\"sw\" style=\"background:#bfdbfe\"></i>phase, "
        "parity 0</span><span><i class=\"sw\" style=\"background:#fde68a\"></i>phase, parity "
        "1</span><span><i class=\"sw\" style=\"background:#0f172a\"></i>completion</span><span>"
        "<i class=\"sw\" style=\"background:#15803d\"></i>arrivals received (line)</span><span>"
        "<i class=\"sw\" style=\"background:#7c3aed\"></i>tx bytes outstanding (dashed)</span>"
        "<span><i class=\"sw\" style=\"background:#bbf7d0\"></i>wait returned at once</span>"
        "<span><i class=\"sw\" style=\"background:#fed7aa\"></i>wait blocked, then released"
        "</span><span><i class=\"sw\" style=\"background:#fecaca\"></i>blocked forever</span>"
        "<span><i class=\"sw\" style=\"background:#c026d3\"></i>multicast</span><span><i "
        "class=\"sw\" style=\"background:#0891b2\"></i>remote arrive</span><span><i "
        "class=\"sw\" style=\"background:#dc2626\"></i>a blocked wait's link to the phase it "
        "waits for</span><span><i class=\"sw\" style=\"background:#16a34a\"></i>the phase a "
        "wait observed (dotted)</span> Counts in each phase: arrivals received/expected, tx "
        "bytes outstanding. Hover any mark for its narration; hover or click a wait or a phase "
        "to highlight the other.</p>\n";
  os << "<div class=\"scroll\">" << svg.str() << "</div>\n";
  os << "<h2 style=\"font-size:15px\">Narration</h2>\n<div class=\"narration\">";
  for (const Narration& n : narr_) {
    os << "<div id=\"ev-" << n.number << "\">" << Esc(n.Text()) << "</div>";
  }
  os << "</div>\n";
  // What the browser drew (sizes from its layout), for tests that load the page headless.
  os << "<pre id=\"render-check\" hidden></pre>\n<script>" << kScript << "</script>\n</body></html>\n";
  return os.str();
}

std::string PhasePictureHtml(const PictureInput& input) { return Picture(input).Html(); }

}  // namespace parity::report
