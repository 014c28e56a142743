#include "sim/litmus/outcome.h"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "sim/model/codes.h"

namespace parity::litmus {
namespace {

using trace::EventKind;
using trace::TraceEvent;

// (cluster, cta, agent) in sort order.
using AgentKey = std::tuple<uint32_t, uint32_t, uint32_t>;
// (cluster, target cta, barrier decl, element) in sort order.
using BarrierKey = std::tuple<uint32_t, uint32_t, uint32_t, uint32_t>;

EventKind KindOf(const TraceEvent& e) { return static_cast<EventKind>(e.kind); }

std::string AgentName(const AgentKey& k) {
  std::string s;
  if (std::get<0>(k) != 0) s += "k" + std::to_string(std::get<0>(k));
  s += "c" + std::to_string(std::get<1>(k)) + "a" + std::to_string(std::get<2>(k));
  return s;
}

std::string BarrierName(const ir::Program& program, uint32_t object, uint32_t index) {
  std::string s = object < program.barriers.size() ? program.barriers[object].name
                                                   : "bar" + std::to_string(object);
  return s + "[" + std::to_string(index) + "]";
}

// name[i]@cta, with the cluster when not 0.
std::string BarrierAt(const ir::Program& program, const BarrierKey& k) {
  std::string s = BarrierName(program, std::get<2>(k), std::get<3>(k)) + "@";
  if (std::get<0>(k) != 0) s += "k" + std::to_string(std::get<0>(k));
  return s + std::to_string(std::get<1>(k));
}

// Per agent: the last mbarrier wait it began and whether it ended.
struct WaitState {
  bool open = false;
  TraceEvent begin{};
};

}  // namespace

std::string OutcomeOf(const ir::Program& program, std::span<const TraceEvent> events) {
  std::map<AgentKey, std::string> tw;
  std::map<AgentKey, std::string> cnt;  // pending counts, comma-separated
  std::map<AgentKey, std::string> rb;   // readback classes, one digit each
  std::map<AgentKey, WaitState> waits;
  std::map<AgentKey, EventKind> other_waits;  // open cluster/named/group waits
  std::map<BarrierKey, uint64_t> completions;  // since the last init
  std::map<BarrierKey, uint32_t> probes;       // GPU end-of-run probe: phase parity
  std::set<BarrierKey> initialised;
  const TraceEvent* ub = nullptr;
  bool any_probe = false;

  for (const TraceEvent& e : events) {
    const AgentKey agent{e.cluster, e.cta, e.agent};
    const BarrierKey bar{e.cluster, e.target_cta, e.object, e.index};
    switch (KindOf(e)) {
      case EventKind::kTestWait:
        if (e.pc == kProbePc) {
          any_probe = true;
          probes[bar] = e.value != 0 ? 1u : 0u;
        } else {
          tw[agent] += e.value != 0 ? '1' : '0';
        }
        break;
      case EventKind::kPendingCount: {
        std::string& s = cnt[agent];
        if (!s.empty()) s += ',';
        s += std::to_string(e.value);
        break;
      }
      case EventKind::kGlobalReadback:
        rb[agent] += static_cast<char>('0' + (e.value >= 0 && e.value <= 3 ? e.value : 9));
        break;
      case EventKind::kWaitBegin:
        waits[agent] = WaitState{true, e};
        break;
      case EventKind::kWaitEnd:
        waits[agent].open = false;
        break;
      case EventKind::kWaitTimeout: {
        // The GPU's bounded wait gave up (or was aborted): the agent hangs at this wait even if
        // the executor recorded no kWaitBegin for it.
        WaitState& w = waits[agent];
        w.open = true;
        w.begin = e;
        break;
      }
      // Other blocking waits (simulator deadlocks; the GPU bounds only mbarrier waits).
      case EventKind::kClusterWaitBegin:
      case EventKind::kNamedBarrierSyncBegin:
      case EventKind::kBulkWaitBegin:
      case EventKind::kCpAsyncWaitBegin:
        other_waits[agent] = KindOf(e);
        break;
      case EventKind::kClusterWaitEnd:
      case EventKind::kNamedBarrierSyncEnd:
      case EventKind::kBulkWaitEnd:
      case EventKind::kCpAsyncWaitEnd:
        other_waits.erase(agent);
        break;
      case EventKind::kInit:
        initialised.insert(bar);
        completions[bar] = 0;
        break;
      case EventKind::kPhaseComplete:
        ++completions[bar];
        break;
      case EventKind::kViolation:
        if (ub == nullptr &&
            model::CodeSeverity(static_cast<model::Code>(e.value)) == model::Severity::kError) {
          ub = &e;
        }
        break;
      default:
        break;
    }
  }

  std::string out;
  std::vector<std::string> hung;
  for (const auto& [agent, w] : waits) {
    if (!w.open) continue;
    const TraceEvent& b = w.begin;
    std::string s = AgentName(agent) + "@" + BarrierName(program, b.object, b.index);
    if (b.target_cta != b.cta) s += "@" + std::to_string(b.target_cta);
    s += "/p" + std::to_string(b.parity);
    hung.push_back(std::move(s));
  }
  for (const auto& [agent, kind] : other_waits) {
    const char* what = kind == EventKind::kClusterWaitBegin        ? "cluster.wait"
                       : kind == EventKind::kNamedBarrierSyncBegin ? "bar.sync"
                       : kind == EventKind::kBulkWaitBegin         ? "bulk.wait"
                                                                   : "cp.async.wait";
    hung.push_back(AgentName(agent) + "@" + what);
  }
  std::sort(hung.begin(), hung.end());
  if (ub != nullptr) {
    const auto code = static_cast<model::Code>(ub->value);
    out = "ub{" + std::string(model::CodeId(code));
    // mbarrier.pending_count reads a token only: its M1013 names no barrier.
    if (model::CodeId(code).starts_with("M") && code != model::Code::kMbarrierPendingCountToken) {
      out += "@" + BarrierAt(program, {ub->cluster, ub->target_cta, ub->object, ub->index});
    }
    out += "}";
  } else if (!hung.empty()) {
    out = "hang{";
    for (size_t i = 0; i < hung.size(); ++i) out += (i ? " " : "") + hung[i];
    out += "}";
  } else {
    out = "ok";
  }

  if (!tw.empty()) {
    out += " tw{";
    bool first = true;
    for (const auto& [agent, results] : tw) {
      out += (first ? "" : " ") + AgentName(agent) + "=" + results;
      first = false;
    }
    out += "}";
  }

  // Per-agent observation lists in (cluster, CTA, agent) order.
  auto list = [&out](const char* name, const std::map<AgentKey, std::string>& m) {
    if (m.empty()) return;
    out += std::string(" ") + name + "{";
    bool first = true;
    for (const auto& [agent, values] : m) {
      out += (first ? "" : " ") + AgentName(agent) + "=" + values;
      first = false;
    }
    out += "}";
  };
  list("cnt", cnt);
  list("rb", rb);

  // Final parities only for runs that completed (the GPU probes only then).
  if (ub == nullptr && hung.empty() && !initialised.empty()) {
    out += " ph{";
    bool first = true;
    for (const BarrierKey& k : initialised) {
      uint32_t parity = 0;
      if (any_probe) {
        auto it = probes.find(k);
        if (it == probes.end()) continue;  // not probed (should not happen): say nothing
        parity = it->second;
      } else {
        parity = static_cast<uint32_t>(completions[k] & 1u);
      }
      out += (first ? "" : " ") + BarrierAt(program, k) + "=" + std::to_string(parity);
      first = false;
    }
    out += "}";
  }
  return out;
}

std::string FormatHistogram(std::string_view name, std::string_view hash, std::string_view source,
                            uint64_t runs, const std::map<std::string, uint64_t>& counts) {
  std::string out = "Test " + std::string(name) + "  Hash=" + std::string(hash) +
                    "  Source=" + std::string(source) + "  Runs=" + std::to_string(runs) + "\n";
  for (const auto& [outcome, n] : counts) {
    out += std::to_string(n) + "  " + outcome + "\n";
  }
  return out;
}

std::string FormatHistogram(const Histogram& h) {
  return FormatHistogram(h.name, h.hash, h.source, h.runs, h.counts);
}

namespace {

bool ParseU64(std::string_view s, uint64_t* out) {
  if (s.empty()) return false;
  const char* end = s.data() + s.size();
  auto [p, ec] = std::from_chars(s.data(), end, *out);
  return ec == std::errc() && p == end;
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r')) {
    s.remove_prefix(1);
  }
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) {
    s.remove_suffix(1);
  }
  return s;
}

// Splits on runs of spaces.
std::vector<std::string_view> Fields(std::string_view s) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && s[i] == ' ') ++i;
    size_t j = i;
    while (j < s.size() && s[j] != ' ') ++j;
    if (j > i) out.push_back(s.substr(i, j - i));
    i = j;
  }
  return out;
}

}  // namespace

Expected<Histogram> ParseHistogram(std::string_view text, std::string_view file) {
  Histogram h;
  bool have_header = false;
  uint64_t total = 0;
  int line_no = 0;
  size_t pos = 0;
  auto error = [&](const std::string& msg) {
    return Status("litmus.format", msg, SourceLocation{std::string(file), line_no, 0});
  };
  while (pos <= text.size()) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) nl = text.size();
    std::string_view line = Trim(text.substr(pos, nl - pos));
    pos = nl + 1;
    ++line_no;
    if (line.empty() || line.front() == '#') {
      if (nl == text.size()) break;
      continue;
    }
    if (!have_header) {
      const std::vector<std::string_view> f = Fields(line);
      if (f.size() != 5 || f[0] != "Test" || !f[2].starts_with("Hash=") ||
          !f[3].starts_with("Source=") || !f[4].starts_with("Runs=")) {
        return error("expected the header `Test NAME  Hash=H  Source=sim|h100  Runs=N`, got `" +
                     std::string(line) + "`");
      }
      h.name = std::string(f[1]);
      h.hash = std::string(f[2].substr(5));
      h.source = std::string(f[3].substr(7));
      if (h.hash.size() != 16 ||
          !std::all_of(h.hash.begin(), h.hash.end(),
                       [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); })) {
        return error("Hash must be 16 lower-case hex digits, got `" + h.hash + "`");
      }
      if (h.source != "sim" && h.source != "h100") {
        return error("Source must be sim or h100, got `" + h.source + "`");
      }
      if (!ParseU64(f[4].substr(5), &h.runs)) {
        return error("Runs must be a number, got `" + std::string(f[4].substr(5)) + "`");
      }
      have_header = true;
    } else {
      size_t sp = line.find(' ');
      if (sp == std::string_view::npos) {
        return error("expected `COUNT  OUTCOME`, got `" + std::string(line) + "`");
      }
      uint64_t n = 0;
      if (!ParseU64(line.substr(0, sp), &n)) {
        return error("count must be a number, got `" + std::string(line.substr(0, sp)) + "`");
      }
      const std::string outcome(Trim(line.substr(sp)));
      if (outcome.empty()) return error("empty outcome");
      if (!h.counts.emplace(outcome, n).second) {
        return error("outcome `" + outcome + "` listed twice");
      }
      total += n;
      if (total > h.runs) {
        return error("counts add up to " + std::to_string(total) + ", more than Runs=" +
                     std::to_string(h.runs));
      }
    }
    if (nl == text.size()) break;
  }
  if (!have_header) {
    line_no = 0;
    return error("no header line `Test NAME  Hash=H  Source=sim|h100  Runs=N`");
  }
  return h;
}

}  // namespace parity::litmus
