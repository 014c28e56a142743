#include "verifier/compare.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <set>
#include <tuple>

namespace parity::verifier {
namespace {

using trace::EventKind;
using trace::TraceEvent;

constexpr uint8_t K(EventKind k) { return static_cast<uint8_t>(k); }

std::string Hex(uint64_t h) {
  static const char* kDigits = "0123456789abcdef";
  std::string s(16, '0');
  for (int i = 15; i >= 0; --i, h >>= 4) s[i] = kDigits[h & 15];
  return s;
}

// Kinds whose value is a count or byte number fixed by the program (not by timing).
bool ValueIsProgramFixed(uint8_t kind) {
  switch (static_cast<EventKind>(kind)) {
    case EventKind::kInit:
    case EventKind::kArrive:
    case EventKind::kArriveExpectTx:
    case EventKind::kExpectTx:
    case EventKind::kCompleteTx:
    case EventKind::kTmaIssue:
    case EventKind::kTmaStoreIssue:
    case EventKind::kBulkIssue:
    case EventKind::kCpAsyncIssue:
    case EventKind::kCpAsyncArrive:
    case EventKind::kStAsync:
    case EventKind::kFence:
    case EventKind::kUse:
    case EventKind::kWrite:
    case EventKind::kViolation:
      return true;
    default:
      return false;
  }
}

// Events that are a consequence, not an operation the agent issued.
bool InProgramOrder(const TraceEvent& e) {
  if (e.agent == trace::kNoAgent) return false;
  return e.kind != K(EventKind::kPhaseComplete) && e.kind != K(EventKind::kWaitTimeout);
}

// `with_pc`: both traces number instructions the same way (the simulator's compiled list; the
// executor numbers those of the GPU encoding).
std::string OpText(const TraceEvent& e, bool with_pc) {
  std::string s = trace::EventKindName(e.kind) + " #" + std::to_string(e.object) + "[" +
                  std::to_string(e.index) + "]@cta" + std::to_string(e.target_cta);
  if (with_pc) s += " pc" + std::to_string(e.pc);
  if (ValueIsProgramFixed(e.kind)) s += " value=" + std::to_string(e.value);
  // The multicast mask of a load (a non-multicast issue records -1 in the simulator, 0 on the GPU).
  if ((e.kind == K(EventKind::kTmaIssue) || e.kind == K(EventKind::kBulkIssue)) &&
      (e.flags & trace::kFlagMulticast) != 0) {
    s += " mask=" + std::to_string(e.value2);
  }
  return s;
}

// The executor's end-of-run barrier probes (pc 0xffff) are not program operations.
constexpr uint16_t kProbePc = 0xffff;

using AgentKey = std::tuple<uint32_t, uint32_t, uint32_t>;  // cluster, CTA, agent
using BarrierKey = std::tuple<uint32_t, uint32_t, uint32_t, uint32_t>;  // cluster, CTA, bar, idx
using IssueKey = std::tuple<uint32_t, uint32_t, uint32_t>;  // cluster, issuing CTA, pc

std::string AgentName(const AgentKey& k) {
  return "cluster " + std::to_string(std::get<0>(k)) + " CTA " + std::to_string(std::get<1>(k)) +
         " agent " + std::to_string(std::get<2>(k));
}

bool IsDelivery(const TraceEvent& e) {
  if (e.agent != trace::kNoAgent) return false;
  switch (static_cast<EventKind>(e.kind)) {
    case EventKind::kTmaDeliver:
    case EventKind::kBulkComplete:
    case EventKind::kCompleteTx:
    case EventKind::kCpAsyncComplete:
    case EventKind::kTmaStoreWrite:
      return true;
    default:
      return false;
  }
}

struct Summary {
  std::map<BarrierKey, uint64_t> phases;
  size_t phase_events = 0;
  std::map<AgentKey, std::vector<std::string>> order;
  std::map<IssueKey, std::vector<std::string>> deliveries;
  std::map<uint8_t, size_t> delivery_kinds;
  std::set<std::string> timeouts;  // waits that never completed
};

// A wait that never completed: a wait-timeout record, or (in a trace that stopped at a deadlock)
// a wait.begin with no wait.end.
std::string HungWait(const TraceEvent& e) {
  return "cluster " + std::to_string(e.cluster) + " CTA " + std::to_string(e.cta) + " agent " +
         std::to_string(e.agent) + " never completed its wait on barrier #" +
         std::to_string(e.object) + "[" + std::to_string(e.index) + "]@cta" +
         std::to_string(e.target_cta) + " parity " + std::to_string(e.parity);
}

Summary Summarize(const trace::TraceFile& t, const std::set<uint8_t>& skip_delivery_kinds,
                  bool with_pc, bool skip_exit) {
  Summary s;
  std::map<AgentKey, TraceEvent> open_wait;
  for (const TraceEvent& e : t.events) {
    if (t.header.source != "sim" && e.pc == kProbePc && e.agent != trace::kNoAgent) continue;
    if (e.kind == K(EventKind::kPhaseComplete)) {
      ++s.phases[{e.cluster, e.target_cta, e.object, e.index}];
      ++s.phase_events;
    }
    const AgentKey who{e.cluster, e.cta, e.agent};
    if (e.kind == K(EventKind::kWaitTimeout)) {
      s.timeouts.insert(HungWait(e));
    }
    if (e.agent != trace::kNoAgent && e.kind == K(EventKind::kWaitBegin)) open_wait[who] = e;
    if (e.agent != trace::kNoAgent && e.kind == K(EventKind::kWaitEnd)) open_wait.erase(who);
    if (skip_exit && e.kind == K(EventKind::kExit)) continue;
    if (InProgramOrder(e)) s.order[who].push_back(OpText(e, with_pc));
    if (IsDelivery(e)) {
      ++s.delivery_kinds[e.kind];
      if (skip_delivery_kinds.count(e.kind)) continue;
      s.deliveries[{e.cluster, e.cta, with_pc ? e.pc : 0u}].push_back(
          trace::EventKindName(e.kind) + " to CTA " + std::to_string(e.target_cta) + " #" +
          std::to_string(e.object) + "[" + std::to_string(e.index) + "] " +
          std::to_string(e.value) + " bytes");
    }
  }
  for (auto& [key, v] : s.deliveries) std::sort(v.begin(), v.end());
  for (const auto& [key, e] : open_wait) s.timeouts.insert(HungWait(e));
  return s;
}

}  // namespace

Expected<CompareResult> CompareTraces(const trace::TraceFile& a, const trace::TraceFile& b) {
  if (a.header.schedule_hash != b.header.schedule_hash) {
    return Status("compare.hash-mismatch",
                  "the traces come from different schedules (hash " + Hex(a.header.schedule_hash) +
                      " '" + a.header.schedule + "' vs " + Hex(b.header.schedule_hash) + " '" +
                      b.header.schedule + "'): their outcomes are not comparable");
  }
  CompareResult r;
  const bool with_pc = a.header.source == b.header.source;
  if (!with_pc) {
    r.notes.push_back("the traces come from different executors (" + a.header.source + ", " +
                      b.header.source + "): instruction numbers (pc) are not compared, and "
                      "deliveries are grouped per issuing CTA");
  }
  if (a.header.params != b.header.params) {
    r.differences.push_back("the traces bind different param values");
  }
  // Delivery kinds one trace does not record at all are not compared (an executor that cannot
  // observe a delivery leaves the kind out of its trace).
  std::set<uint8_t> skip;
  {
    Summary sa = Summarize(a, {}, with_pc, false), sb = Summarize(b, {}, with_pc, false);
    for (uint8_t k : {K(EventKind::kTmaDeliver), K(EventKind::kBulkComplete),
                      K(EventKind::kCompleteTx), K(EventKind::kCpAsyncComplete),
                      K(EventKind::kTmaStoreWrite)}) {
      bool in_a = sa.delivery_kinds.count(k) != 0, in_b = sb.delivery_kinds.count(k) != 0;
      if (in_a != in_b) {
        skip.insert(k);
        r.not_compared.push_back(trace::EventKindName(k) + " deliveries");
        r.notes.push_back("trace " + std::string(in_a ? "B" : "A") + " records no " +
                          trace::EventKindName(k) + " events: those deliveries are not compared");
      }
    }
  }
  // The GPU executor records no exit events: then exits are not part of the program order.
  auto has_exit = [](const trace::TraceFile& t) {
    return std::any_of(t.events.begin(), t.events.end(),
                       [](const TraceEvent& e) { return e.kind == K(EventKind::kExit); });
  };
  const bool skip_exit = has_exit(a) != has_exit(b);
  if (skip_exit) {
    r.not_compared.push_back("exits");
    r.notes.push_back("trace " + std::string(has_exit(a) ? "B" : "A") +
                      " records no exit events: exits are not compared");
  }
  Summary sa = Summarize(a, skip, with_pc, skip_exit), sb = Summarize(b, skip, with_pc, skip_exit);

  // Phase completions.
  if ((sa.phase_events == 0) != (sb.phase_events == 0)) {
    r.notes.push_back("trace " + std::string(sa.phase_events == 0 ? "A" : "B") +
                      " records no phase completions: phase counts are not compared");
    r.not_compared.push_back("phase completions");
  } else {
    r.compared.push_back("phase completions");
    std::set<BarrierKey> keys;
    for (const auto& [k, v] : sa.phases) keys.insert(k);
    for (const auto& [k, v] : sb.phases) keys.insert(k);
    for (const BarrierKey& k : keys) {
      uint64_t na = sa.phases.count(k) ? sa.phases.at(k) : 0;
      uint64_t nb = sb.phases.count(k) ? sb.phases.at(k) : 0;
      if (na != nb) {
        r.differences.push_back(
            "phase completions of barrier #" + std::to_string(std::get<2>(k)) + "[" +
            std::to_string(std::get<3>(k)) + "] of cluster " + std::to_string(std::get<0>(k)) +
            " CTA " + std::to_string(std::get<1>(k)) + ": A " + std::to_string(na) + ", B " +
            std::to_string(nb));
      }
    }
  }

  r.compared.push_back("program order");
  r.compared.push_back("copies");
  r.compared.push_back("wait timeouts");
  // Program order, first difference per agent.
  std::set<AgentKey> agents;
  for (const auto& [k, v] : sa.order) agents.insert(k);
  for (const auto& [k, v] : sb.order) agents.insert(k);
  static const std::vector<std::string> kNone;
  for (const AgentKey& k : agents) {
    const auto& oa = sa.order.count(k) ? sa.order.at(k) : kNone;
    const auto& ob = sb.order.count(k) ? sb.order.at(k) : kNone;
    size_t n = std::min(oa.size(), ob.size());
    size_t i = 0;
    while (i < n && oa[i] == ob[i]) ++i;
    if (i < n) {
      r.differences.push_back("program order of " + AgentName(k) + ", operation " +
                              std::to_string(i + 1) + ": A " + oa[i] + ", B " + ob[i]);
    } else if (oa.size() != ob.size()) {
      const bool a_longer = oa.size() > ob.size();
      r.differences.push_back("program order of " + AgentName(k) + ": A issued " +
                              std::to_string(oa.size()) + " operations, B " +
                              std::to_string(ob.size()) + "; first extra in " +
                              (a_longer ? "A: " + oa[n] : "B: " + ob[n]));
    }
  }

  // Copies: deliveries per issuing instruction.
  std::set<IssueKey> issues;
  for (const auto& [k, v] : sa.deliveries) issues.insert(k);
  for (const auto& [k, v] : sb.deliveries) issues.insert(k);
  for (const IssueKey& k : issues) {
    const auto& da = sa.deliveries.count(k) ? sa.deliveries.at(k) : kNone;
    const auto& db = sb.deliveries.count(k) ? sb.deliveries.at(k) : kNone;
    if (da == db) continue;
    std::vector<std::string> only_a, only_b;
    std::set_difference(da.begin(), da.end(), db.begin(), db.end(), std::back_inserter(only_a));
    std::set_difference(db.begin(), db.end(), da.begin(), da.end(), std::back_inserter(only_b));
    std::string line = "copies issued by cluster " + std::to_string(std::get<0>(k)) + " CTA " +
                       std::to_string(std::get<1>(k)) +
                       (with_pc ? " pc " + std::to_string(std::get<2>(k)) : std::string()) + ":";
    if (!only_a.empty()) line += " only in A: " + only_a.front() +
                                 (only_a.size() > 1 ? " (+" + std::to_string(only_a.size() - 1) +
                                                          " more)" : "");
    if (!only_b.empty()) line += " only in B: " + only_b.front() +
                                 (only_b.size() > 1 ? " (+" + std::to_string(only_b.size() - 1) +
                                                          " more)" : "");
    r.differences.push_back(line);
  }

  // Wait timeouts.
  for (const std::string& t : sa.timeouts) {
    if (!sb.timeouts.count(t)) r.differences.push_back("only A: " + t);
  }
  for (const std::string& t : sb.timeouts) {
    if (!sa.timeouts.count(t)) r.differences.push_back("only B: " + t);
  }
  return r;
}

std::string FormatCompareResult(const CompareResult& r, const trace::TraceFile& a,
                                const trace::TraceFile& b) {
  std::string out = "A: " + a.header.source + " (" + a.header.policy + ", " +
                    std::to_string(a.events.size()) + " events)\nB: " + b.header.source + " (" +
                    b.header.policy + ", " + std::to_string(b.events.size()) +
                    " events)\nschedule " + a.header.schedule + " (hash " +
                    Hex(a.header.schedule_hash) + ")\n";
  for (const std::string& n : r.notes) out += "note: " + n + "\n";
  auto list = [](const std::vector<std::string>& v) {
    std::string s;
    for (size_t i = 0; i < v.size(); ++i) {
      s += (i == 0 ? "" : i + 1 == v.size() ? " and " : ", ") + v[i];
    }
    return s;
  };
  if (r.same()) {
    out += "SAME: " + list(r.compared) + " agree";
    if (!r.not_compared.empty()) {
      out += "; " + list(r.not_compared) + " could not be compared (see the notes above)";
    }
    out += "\n";
    return out;
  }
  out += "DIFFERENT: " + std::to_string(r.differences.size()) + " difference(s)\n";
  for (const std::string& d : r.differences) out += "  - " + d + "\n";
  return out;
}

}  // namespace parity::verifier
