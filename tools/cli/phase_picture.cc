#include "tools/cli/phase_picture.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <tuple>

#include "verifier/report/narrate.h"

namespace parity::cli {
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
constexpr double kTop = 28;
constexpr double kBarrierLane = 40;
constexpr double kAgentLane = 28;
constexpr double kCtaHeader = 22;

struct Lane {
  bool barrier = false;
  std::string name;  // "full[0]" / "producer[0]"
  double y = 0, h = 0;
  bool culprit = false;
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
  void Layout();
  void DrawBarriers(std::ostringstream& os);
  void DrawAgents(std::ostringstream& os);
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
};

void Picture::Layout() {
  const size_t n = std::max<size_t>(in_.events.size(), 1);
  dx_ = std::clamp(1500.0 / static_cast<double>(n), 4.0, 26.0);
  width_ = kLabelWidth + static_cast<double>(n) * dx_ + 30;
  std::set<std::pair<int, int>> ctas;
  for (uint32_t a = 0; a < eng_.num_agents(); ++a) {
    const engine::AgentInfo& info = eng_.agent_info(a);
    const AgentKey k{static_cast<int>(info.cluster), static_cast<int>(info.cta),
                     static_cast<int>(info.index_in_cta)};
    agent_names_[k] = eng_.role_name(a) + "[" + std::to_string(info.index_in_role) + "]";
    agent_lanes_[k] = Lane{false, agent_names_[k]};
    ctas.insert({static_cast<int>(info.cluster), static_cast<int>(info.cta)});
  }
  for (const TraceEvent& e : in_.events) {
    if (!OnBarrier(e.kind)) continue;
    const BarKey k{e.cluster, e.target_cta, e.object, e.index};
    if (bar_lanes_.count(k)) continue;
    const std::string base = e.object < p_.barriers.size() ? p_.barriers[e.object].name
                                                           : "barrier" + std::to_string(e.object);
    bar_lanes_[k] = Lane{true, base + "[" + std::to_string(e.index) + "]"};
    ctas.insert({e.cluster, e.target_cta});
  }
  if (in_.deadlock != nullptr && in_.deadlock->culprit.found) {
    // The report's summary (the headline under the title) names the culprit when there is
    // one (an earlier wait, a skipped signal, a count or expect_tx a re-run proved): the red
    // lane and paragraph name the same barrier, not the primary blocked wait's.
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
    if (x.blocked.wait == engine::WaitKind::kMbarrierParity ||
        x.blocked.wait == engine::WaitKind::kMbarrierToken) {
      const BarKey k{static_cast<int>(eng_.agent_info(x.blocked.agent).cluster),
                     static_cast<int>(x.blocked.cta), static_cast<int>(x.blocked.barrier),
                     static_cast<int>(x.blocked.barrier_index)};
      if (bar_lanes_.count(k)) {
        culprit_ = k;
        bar_lanes_[k].culprit = true;
      }
    }
    culprit_text_ = std::string("most likely cause (") + verifier::DeadlockCauseName(x.cause) +
                    "): " + x.cause_text;
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

void Picture::DrawBarriers(std::ostringstream& os) {
  struct Open {
    size_t start = 0;
    uint32_t phase = 0;
    std::vector<std::pair<double, double>> arrivals, tx;  // (x, fraction / bytes)
  };
  std::map<BarKey, Open> open;
  std::map<BarKey, std::ostringstream> marks;  // per lane: markers drawn over the phases
  std::map<BarKey, std::ostringstream> segs;
  auto close = [&](const BarKey& k, Open& o, size_t end, bool completed) {
    const Lane& l = bar_lanes_[k];
    const double x0 = X(o.start) - dx_ / 2, x1 = X(end) + (completed ? 0 : dx_ / 2);
    const bool culprit = !completed && culprit_ && *culprit_ == k;
    std::ostringstream& s = segs[k];
    s << "<g class=\"phase-seg\"><rect class=\"phase parity" << (o.phase & 1u)
      << (completed ? " complete" : " open") << (culprit ? " culprit" : "")
      << "\" data-phase=\"" << o.phase << "\" data-parity=\"" << (o.phase & 1u) << "\" x=\""
      << F(x0) << "\" y=\"" << F(l.y + 4) << "\" width=\"" << F(std::max(2.0, x1 - x0))
      << "\" height=\"" << F(l.h - 8) << "\">";
    s << "<title>" << Esc(l.name + " of CTA " + std::to_string(std::get<1>(k)) + ": phase " +
                          std::to_string(o.phase) + " (parity " +
                          std::to_string(o.phase & 1u) + "), events " +
                          std::to_string(o.start + 1) + " to " +
                          (completed ? std::to_string(end + 1) + " (completed)"
                                     : "the end (never completed)"))
      << "</title></rect>";
    if (x1 - x0 > 70) {
      s << "<text class=\"phase-label\" x=\"" << F(x0 + 4) << "\" y=\"" << F(l.y + 15)
        << "\">phase " << o.phase << " · parity " << (o.phase & 1u)
        << (completed ? "" : culprit ? " · never completes" : " · open") << "</text>";
    }
    // Arrivals received (fraction of the expected count) and tx bytes outstanding, as step lines
    // from the bottom of the segment.
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
    if (!OnBarrier(e.kind)) continue;
    const BarKey k{e.cluster, e.target_cta, e.object, e.index};
    const Lane& l = bar_lanes_[k];
    if (!open.count(k)) open[k] = Open{i, 0, {}, {}};
    Open& o = open[k];
    const std::optional<BarrierClaim>& c = narr_[i].claim;
    if (e.kind == K(EventKind::kInit)) o = Open{i, 0, {}, {}};
    if (c && c->state.expected_count > 0 &&
        (IsArriveLike(e.kind) || e.kind == K(EventKind::kTmaDeliver) ||
         e.kind == K(EventKind::kBulkComplete) || e.kind == K(EventKind::kCpAsyncArrive))) {
      const model::MbarrierState& s = c->state;
      // The event that completes the phase shows the next phase's state: draw it as full.
      const double got = narr_[i].completes_phase
                             ? 1.0
                             : static_cast<double>(s.expected_count - s.pending_count) /
                                   s.expected_count;
      o.arrivals.push_back({X(i), std::clamp(got, 0.0, 1.0)});
      o.tx.push_back({X(i), narr_[i].completes_phase ? 0.0 : static_cast<double>(s.tx_count)});
    }
    std::ostringstream& m = marks[k];
    const double x = X(i), ym = Mid(l);
    switch (static_cast<EventKind>(e.kind)) {
      case EventKind::kPhaseComplete:
        m << "<line class=\"completion\" data-phase=\"" << static_cast<uint32_t>(e.value)
          << "\" x1=\"" << F(x) << "\" y1=\"" << F(l.y + 2) << "\" x2=\"" << F(x) << "\" y2=\""
          << F(l.y + l.h - 2) << "\">" << Title(i) << "</line>";
        close(k, o, i, true);
        o = Open{i, static_cast<uint32_t>(e.value) + 1, {}, {}};
        break;
      case EventKind::kArrive:
      case EventKind::kArriveExpectTx:
      case EventKind::kCpAsyncArrive:
        m << "<circle class=\"mark arrive" << (e.target_cta != e.cta ? " remote" : "")
          << "\" cx=\"" << F(x) << "\" cy=\"" << F(ym) << "\" r=\"3.5\">" << Title(i)
          << "</circle>";
        if (c && dx_ >= 14 && c->state.expected_count > 0) {
          const int got = narr_[i].completes_phase
                              ? c->state.expected_count
                              : c->state.expected_count - c->state.pending_count;
          m << "<text class=\"count\" x=\"" << F(x) << "\" y=\"" << F(l.y + l.h - 1) << "\">"
            << got << "/" << c->state.expected_count << "</text>";
        }
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
      case EventKind::kInval:
        m << "<rect class=\"mark init\" x=\"" << F(x - 2) << "\" y=\"" << F(l.y + 4)
          << "\" width=\"4\" height=\"" << F(l.h - 8) << "\">" << Title(i) << "</rect>";
        break;
      default:
        break;
    }
  }
  for (auto& [k, o] : open) close(k, o, in_.events.empty() ? 0 : in_.events.size() - 1, false);
  for (auto& [k, l] : bar_lanes_) {
    os << "<g class=\"lane barrier" << (l.culprit ? " culprit-lane" : "")
       << "\" data-kind=\"barrier\" data-name=\"" << Esc(l.name) << "\" data-cta=\""
       << std::get<1>(k) << "\">";
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
  std::map<AgentKey, size_t> open_wait;
  std::map<AgentKey, WaitVerdict> open_verdict;
  auto wait_rect = [&](const AgentKey& k, size_t b, size_t end, const char* cls, size_t title_at,
                       bool open_end) {
    const Lane& l = agent_lanes_[k];
    const double x0 = X(b) - 2, x1 = open_end ? width_ - 12 : X(end) + 2;
    body[k] << "<rect class=\"wait " << cls << "\" x=\"" << F(x0) << "\" y=\"" << F(l.y + 5)
            << "\" width=\"" << F(std::max(4.0, x1 - x0)) << "\" height=\"" << F(l.h - 10)
            << "\">" << "<title>" << Esc(narr_[b].Text())
            << (title_at != b ? "\n" + Esc(narr_[title_at].Text()) : std::string())
            << (open_end ? "\nblocked forever: the wait never returns" : "") << "</title></rect>";
  };
  for (size_t i = 0; i < in_.events.size(); ++i) {
    const TraceEvent& e = in_.events[i];
    if (e.agent == trace::kNoAgent) continue;
    const AgentKey k{e.cluster, e.cta, e.agent};
    if (!agent_lanes_.count(k)) continue;
    const Lane& l = agent_lanes_[k];
    if (trace::IsWaitBegin(e.kind)) {
      open_wait[k] = i;
      open_verdict[k] = narr_[i].wait;
      continue;
    }
    if (trace::IsWaitEnd(e.kind) && open_wait.count(k)) {
      const size_t b = open_wait[k];
      const bool at_once = open_verdict[k] == WaitVerdict::kReturnsAtOnce ||
                           (open_verdict[k] == WaitVerdict::kNone && i == b + 1);
      wait_rect(k, b, i, at_once ? "at-once" : "released", i, false);
      open_wait.erase(k);
      continue;
    }
    if (e.kind == K(EventKind::kWaitTimeout)) {
      const size_t b = open_wait.count(k) ? open_wait[k] : i;
      wait_rect(k, b, i, "blocked timed-out", i, false);
      open_wait.erase(k);
      continue;
    }
    const double x = X(i), ym = Mid(l);
    const char* cls = e.kind == K(EventKind::kUse) || e.kind == K(EventKind::kWrite) ? "use"
                      : IsCopyIssue(e.kind)                                          ? "issue"
                      : IsArriveLike(e.kind) || e.kind == K(EventKind::kCpAsyncArrive)
                          ? "arrive"
                      : e.kind == K(EventKind::kExit) ? "exit"
                                                      : "other";
    body[k] << "<rect class=\"op " << cls << "\" x=\"" << F(x - 2.5) << "\" y=\"" << F(ym - 6)
            << "\" width=\"5\" height=\"12\">" << Title(i) << "</rect>";
  }
  for (const auto& [k, b] : open_wait) {
    wait_rect(k, b, in_.events.size() - 1, "blocked", b, true);
  }
  for (auto& [k, l] : agent_lanes_) {
    os << "<g class=\"lane agent\" data-kind=\"agent\" data-name=\"" << Esc(l.name)
       << "\" data-cta=\"" << std::get<1>(k) << "\">";
    os << "<rect class=\"lane-frame agent-frame\" x=\"0\" y=\"" << F(l.y) << "\" width=\""
       << F(width_) << "\" height=\"" << F(l.h) << "\"/>";
    os << "<text class=\"lane-label\" x=\"10\" y=\"" << F(l.y + l.h / 2 + 4) << "\">"
       << Esc(l.name) << "</text>";
    os << body[k].str() << "</g>\n";
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
svg{font:11px system-ui,sans-serif;display:block}
.lane-frame{fill:#fff;stroke:#e2e8f0} .barrier-frame{fill:#f8fafc}
.lane-frame.culprit{stroke:#dc2626;stroke-width:3;fill:#fef2f2}
.lane-label{font-weight:600;fill:#0f172a} .cta-label{font-weight:700;fill:#334155;font-size:12px}
.culprit-label{fill:#dc2626;font-weight:700;font-size:10px}
.phase{stroke:#475569;stroke-width:1} .phase.parity0{fill:#bfdbfe} .phase.parity1{fill:#fde68a}
.phase.open{stroke-dasharray:4 3} .phase.culprit{stroke:#dc2626;stroke-width:2.5}
.phase-label{fill:#1e293b;font-size:10px} .count{font-size:9px;fill:#334155;text-anchor:middle}
polyline.arrivals{fill:none;stroke:#15803d;stroke-width:1.5}
polyline.tx{fill:none;stroke:#7c3aed;stroke-width:1.2;stroke-dasharray:3 2}
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

}  // namespace

std::string Picture::Html() {
  narr_ = report::NarrateRun(p_, eng_, in_.events);
  Layout();
  std::ostringstream svg;
  svg << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << F(width_) << "\" height=\""
      << F(height_) << "\" viewBox=\"0 0 " << F(width_) << " " << F(height_) << "\">\n";
  svg << "<defs>";
  for (const auto& [cls, color] : {std::pair<const char*, const char*>{"copy", "#7c3aed"},
                                   {"multicast", "#c026d3"}, {"remote", "#0891b2"}}) {
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
        "class=\"sw\" style=\"background:#0891b2\"></i>remote arrive</span> Hover any mark for "
        "its narration.</p>\n";
  os << "<div class=\"scroll\">" << svg.str() << "</div>\n";
  os << "<h2 style=\"font-size:15px\">Narration</h2>\n<div class=\"narration\">";
  for (const Narration& n : narr_) {
    os << "<div id=\"ev-" << n.number << "\">" << Esc(n.Text()) << "</div>";
  }
  os << "</div>\n";
  // What the browser drew (sizes from its layout), for tests that load the page headless.
  os << "<pre id=\"render-check\" hidden></pre>\n<script>\n"
        "(function(){const q=s=>Array.from(document.querySelectorAll(s));\n"
        "const drawn=e=>{const b=e.getBBox();return b.width>0&&b.height>0;};\n"
        "const f=q('rect.lane-frame.culprit')[0];\n"
        "document.getElementById('render-check').textContent=JSON.stringify({\n"
        " barrier_lanes:q('g.lane.barrier').filter(drawn).map(g=>g.dataset.cta+' '+g.dataset.name),\n"
        " agent_lanes:q('g.lane.agent').filter(drawn).map(g=>g.dataset.cta+' '+g.dataset.name),\n"
        " phases:q('rect.phase').filter(drawn).length,\n"
        " parities:[...new Set(q('rect.phase').map(r=>r.dataset.parity))].sort(),\n"
        " completions:q('line.completion').length,\n"
        " copy_arrows:q('path.arrow.copy').filter(drawn).length,\n"
        " multicast_arrows:q('path.arrow.multicast').filter(drawn).length,\n"
        " remote_arrows:q('path.arrow.remote').filter(drawn).length,\n"
        " waits_at_once:q('rect.wait.at-once').length,waits_released:q('rect.wait.released').length,\n"
        " waits_blocked:q('rect.wait.blocked').filter(drawn).length,\n"
        " culprit_lanes:q('g.lane.culprit-lane').filter(drawn).map(g=>g.dataset.cta+' '+g.dataset.name),\n"
        " culprit_stroke:f?getComputedStyle(f).stroke:'',\n"
        " titles:q('svg title').length,svg_width:document.querySelector('svg').getBBox().width});\n"
        "})();\n</script>\n</body></html>\n";
  return os.str();
}

std::string PhasePictureHtml(const PictureInput& input) { return Picture(input).Html(); }

}  // namespace parity::cli
