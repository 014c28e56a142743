#include "tests/verifier/gen/race_oracle.h"

#include <deque>
#include <limits>
#include <map>
#include <variant>

#include "sim/ir/eval.h"
#include "verifier/pc_map.h"
#include "verifier/races.h"

namespace parity::gen {
namespace {

using trace::EventKind;
using trace::TraceEvent;

constexpr int64_t kWhole = std::numeric_limits<int64_t>::max();

struct Acc {
  bool write = false;
  bool copy = false;  // an asynchronous copy's access
  bool exact = true;
  int64_t lo = 0, hi = 0;
  uint32_t role = 0, pc = 0;
  uint64_t loc = 0;     // (CTA, buffer, slot)
  uint32_t buffer = 0, slot = 0;
  size_t start = 0;     // the event it starts at
  std::vector<size_t> done;  // it is complete for every event reachable from one of these
  // A load's write: the slot and phase its bytes landed in (done: that phase's completion
  // or a later one's), once delivered.
  bool delivered = false;
  uint64_t bar = 0;
  size_t phase = 0;
};

bool AnyOp(const std::vector<ir::Stmt>& body, bool (*pred)(const ir::Op&)) {
  for (const ir::Stmt& s : body) {
    if (const auto* op = std::get_if<ir::Op>(&s.node)) {
      if (pred(*op)) return true;
    } else if (const auto* f = std::get_if<ir::For>(&s.node)) {
      if (AnyOp(f->body, pred)) return true;
    } else if (const auto* i = std::get_if<ir::If>(&s.node)) {
      if (AnyOp(i->then_body, pred) || AnyOp(i->else_body, pred)) return true;
    }
  }
  return false;
}

bool ReadsVar(const ir::Program& p, ir::ExprId e) {
  if (e == ir::kNoExpr) return false;
  const ir::Expr& x = p.expr(e);
  return x.kind == ir::Expr::Kind::kVar || ReadsVar(p, x.a) || ReadsVar(p, x.b) ||
         ReadsVar(p, x.c);
}

// The offset's bytes when no variable is read (constants, params, the issuing agent's
// builtins: a multicast slice `tile[0] + cta_rank * N` is exact); -1: a span of the slot.
int64_t ConstOffset(const ir::Program& p, const engine::Engine& e, int64_t a, ir::ExprId x) {
  if (x == ir::kNoExpr) return 0;
  if (a < 0 || ReadsVar(p, x)) return -1;
  ir::EvalEnv env;
  env.params = e.param_values().data();
  env.num_params = e.param_values().size();
  env.builtins = &e.agent_builtins(static_cast<uint32_t>(a));
  auto v = ir::Eval(p, x, env);
  return v.ok() && *v >= 0 ? *v : -1;
}

bool Overlap(const Acc& a, const Acc& b) {
  if (a.exact && b.exact) return a.lo < b.hi && b.lo < a.hi;
  if (!a.exact && !b.exact) return false;
  const Acc& e = a.exact ? a : b;
  const Acc& s = a.exact ? b : a;
  return e.lo <= s.lo && e.hi >= s.hi;
}

}  // namespace

bool OracleCovers(const ir::Program& program) {
  for (const ir::Role& r : program.roles) {
    if (AnyOp(r.body, [](const ir::Op& op) {
          return std::holds_alternative<ir::CpAsync>(op) ||
                 std::holds_alternative<ir::CpAsyncMbarrierArrive>(op) ||
                 std::holds_alternative<ir::StAsync>(op);
        })) {
      return false;
    }
  }
  return true;
}

std::set<RacePair> OracleRaces(const ir::Program& p, const engine::Engine& e,
                               std::span<const TraceEvent> trace) {
  const verifier::PcMap pcs(p);
  uint32_t clusters = 1;
  for (uint32_t a = 0; a < e.num_agents(); ++a) {
    clusters = std::max(clusters, e.agent_info(a).cluster + 1);
  }
  const uint32_t csize = std::max<uint32_t>(1, e.num_ctas() / clusters);
  std::map<std::tuple<uint32_t, uint32_t, uint32_t>, uint32_t> agent_of;  // cluster, cta, idx
  for (uint32_t a = 0; a < e.num_agents(); ++a) {
    const engine::AgentInfo& i = e.agent_info(a);
    agent_of[{i.cluster, i.cta, i.index_in_cta}] = a;
  }
  auto agent = [&](const TraceEvent& ev) -> int64_t {
    if (ev.agent == trace::kNoAgent) return -1;
    auto it = agent_of.find({ev.cluster, ev.cta, ev.agent});
    return it == agent_of.end() ? -1 : it->second;
  };
  auto cta = [&](const TraceEvent& ev, uint32_t rank) -> uint64_t {
    return uint64_t{ev.cluster} * csize + rank;
  };
  auto slot_key = [&](const TraceEvent& ev) -> uint64_t {
    return (cta(ev, ev.target_cta) << 40) | (uint64_t{ev.object} << 20) | ev.index;
  };

  const size_t n = trace.size();
  std::vector<std::vector<size_t>> out(n);
  std::vector<Acc> accs;
  std::map<int64_t, size_t> last_of_agent;
  std::map<uint64_t, std::vector<size_t>> releases;     // slot -> releases of its current phase
  std::map<uint64_t, std::vector<size_t>> completions;  // slot -> its completion events
  // Loads in flight: (cluster, issuer CTA, pc, destination) -> accesses (kNone: none modelled).
  std::map<std::tuple<uint32_t, uint32_t, uint32_t, uint32_t>, std::deque<std::pair<size_t, size_t>>>
      loads;  // (issue event, access index or SIZE_MAX)
  std::map<int64_t, std::vector<size_t>> open_stores;
  std::map<int64_t, std::deque<std::vector<size_t>>> store_groups;
  std::map<int64_t, uint32_t> cluster_arrives;
  std::map<std::pair<uint32_t, uint32_t>, std::vector<size_t>> cluster_members;
  std::map<std::tuple<uint64_t, uint32_t>, uint32_t> named_gen;  // (cta, id) -> instance
  std::map<std::tuple<uint64_t, uint32_t, uint32_t>, std::vector<size_t>> named_members;
  std::map<std::pair<int64_t, uint32_t>, uint32_t> named_joined;  // (agent, id) -> instance
  constexpr size_t kNoAcc = ~size_t{0};

  auto role = [&](int64_t a) { return e.agent_info(static_cast<uint32_t>(a)).role; };
  auto op_at = [&](int64_t a, uint32_t pc) { return pcs.op(role(a), pc); };

  for (size_t i = 0; i < n; ++i) {
    const TraceEvent& ev = trace[i];
    const auto k = static_cast<EventKind>(ev.kind);
    const int64_t a = agent(ev);
    if (ev.agent != trace::kNoAgent && a < 0) continue;
    // A phase completion names the agent whose update completed it, but that agent observes
    // nothing by it (it acquires only by a later wait): not in its program order.
    if (a >= 0 && k != EventKind::kPhaseComplete) {
      auto it = last_of_agent.find(a);
      if (it != last_of_agent.end()) out[it->second].push_back(i);
      last_of_agent[a] = i;
    }
    switch (k) {
      case EventKind::kArrive:
      case EventKind::kArriveExpectTx:
      case EventKind::kExpectTx:
      case EventKind::kCompleteTx:
        if (a >= 0) releases[slot_key(ev)].push_back(i);
        break;
      case EventKind::kPhaseComplete: {
        const uint64_t s = slot_key(ev);
        for (size_t r : releases[s]) out[r].push_back(i);
        releases[s].clear();
        completions[s].push_back(i);
        break;
      }
      case EventKind::kWaitEnd:
      case EventKind::kTestWait: {
        if (a < 0 || (k == EventKind::kTestWait && ev.value != 1)) break;
        const std::vector<size_t>& c = completions[slot_key(ev)];
        if (!c.empty() && ((c.size() - 1) & 1) == ev.parity) {
          out[c.back()].push_back(i);
        } else if (c.size() >= 2) {
          out[c[c.size() - 2]].push_back(i);
        }
        break;
      }
      case EventKind::kTmaIssue:
      case EventKind::kBulkIssue: {
        const ir::Op* op = op_at(a, ev.pc);
        const ir::BufferRef* dst = nullptr;
        const ir::BufferRef* src = nullptr;
        if (const auto* t = op ? std::get_if<ir::TmaLoad>(op) : nullptr) dst = &t->dst;
        if (const auto* b = op ? std::get_if<ir::BulkLoad>(op) : nullptr) dst = &b->dst;
        if (const auto* b = op ? std::get_if<ir::BulkStore>(op) : nullptr) src = &b->src;
        if (src != nullptr) {
          const int64_t off = ConstOffset(p, e, a, src->offset);
          if (off < 0) break;  // a span of the whole slot: compared with nothing
          Acc x;
          x.copy = true;
          x.lo = off;
          x.hi = off + ev.value;
          x.role = role(a);
          x.pc = ev.pc;
          x.buffer = src->buffer;
          x.slot = ev.index;
          x.loc = (cta(ev, ev.cta) << 40) | (uint64_t{x.buffer} << 20) | x.slot;
          x.start = i;
          accs.push_back(x);
          open_stores[a].push_back(accs.size() - 1);
          break;
        }
        if (dst == nullptr) break;
        const int64_t off = ConstOffset(p, e, a, dst->offset);
        for (uint32_t r = 0; r < 16; ++r) {
          const bool to = (ev.flags & trace::kFlagMulticast) ? ((ev.value2 >> r) & 1) != 0
                                                             : r == ev.target_cta;
          if (!to) continue;
          size_t id = kNoAcc;
          if (off >= 0) {
            Acc x;
            x.write = true;
            x.copy = true;
            x.lo = off;
            x.hi = off + ev.value;
            x.role = role(a);
            x.pc = ev.pc;
            x.buffer = dst->buffer;
            x.slot = ev.index;
            x.loc = (cta(ev, r) << 40) | (uint64_t{x.buffer} << 20) | x.slot;
            x.start = i;
            accs.push_back(x);
            id = accs.size() - 1;
          }
          loads[{ev.cluster, ev.cta, ev.pc, r}].push_back({i, id});
        }
        break;
      }
      case EventKind::kTmaStoreIssue: {
        const ir::Op* op = op_at(a, ev.pc);
        const auto* st = op ? std::get_if<ir::TmaStore>(op) : nullptr;
        if (st == nullptr) break;
        const int64_t off = ConstOffset(p, e, a, st->src.offset);
        if (off < 0) break;
        Acc x;
        x.copy = true;
        x.lo = off;
        x.hi = off + ev.value;
        x.role = role(a);
        x.pc = ev.pc;
        x.buffer = st->src.buffer;
        x.slot = ev.index;
        x.loc = (cta(ev, ev.cta) << 40) | (uint64_t{x.buffer} << 20) | x.slot;
        x.start = i;
        accs.push_back(x);
        open_stores[a].push_back(accs.size() - 1);
        break;
      }
      case EventKind::kTmaDeliver:
      case EventKind::kBulkComplete: {
        auto q = loads.find({ev.cluster, ev.cta, ev.pc, ev.target_cta});
        if (q == loads.end()) break;
        // The oldest copy of this instruction to this CTA into the slot the delivery names.
        auto it = q->second.begin();
        for (; it != q->second.end(); ++it) {
          if (!(ev.flags & trace::kFlagSlot) || it->second == kNoAcc ||
              accs[it->second].slot == ev.parity) {
            break;
          }
        }
        if (it == q->second.end()) break;
        const auto [issue, id] = *it;
        q->second.erase(it);
        out[issue].push_back(i);
        const uint64_t s = slot_key(ev);
        releases[s].push_back(i);
        if (id != kNoAcc) {
          Acc& x = accs[id];
          x.delivered = true;
          x.bar = s;
          x.phase = completions[s].size();
          x.hi = x.lo + ev.value;
        }
        break;
      }
      case EventKind::kBulkCommit:
        store_groups[a].push_back(std::move(open_stores[a]));
        open_stores[a].clear();
        break;
      case EventKind::kBulkWaitEnd: {
        auto& groups = store_groups[a];
        const size_t keep = ev.value > 0 ? static_cast<size_t>(ev.value) : 0;
        while (groups.size() > keep) {
          for (size_t x : groups.front()) accs[x].done.push_back(i);
          groups.pop_front();
        }
        break;
      }
      case EventKind::kUse:
      case EventKind::kWrite: {
        Acc x;
        x.write = k == EventKind::kWrite;
        x.lo = ev.value2;
        x.hi = static_cast<int64_t>(ev.value2) + ev.value;
        if (x.write) {
          const ir::Op* op = op_at(a, ev.pc);
          const auto* w = op ? std::get_if<ir::BufferAccess>(op) : nullptr;
          x.exact = w != nullptr && w->buf.bytes != ir::kNoExpr;
        }
        x.role = role(a);
        x.pc = ev.pc;
        x.buffer = ev.object;
        x.slot = ev.index;
        x.loc = (cta(ev, ev.cta) << 40) | (uint64_t{x.buffer} << 20) | x.slot;
        x.start = i;
        x.done.push_back(i);
        accs.push_back(x);
        break;
      }
      case EventKind::kClusterArrive: {
        if (a < 0) break;
        cluster_members[{ev.cluster, cluster_arrives[a]++}].push_back(i);
        break;
      }
      case EventKind::kClusterWaitEnd:
        if (a >= 0 && cluster_arrives[a] > 0) {
          for (size_t r : cluster_members[{ev.cluster, cluster_arrives[a] - 1}]) {
            out[r].push_back(i);
          }
        }
        break;
      case EventKind::kNamedBarrierArrive:
      case EventKind::kNamedBarrierSyncBegin: {
        if (a < 0) break;
        uint32_t& gen = named_gen[{cta(ev, ev.cta), ev.object}];
        named_members[{cta(ev, ev.cta), ev.object, gen}].push_back(i);
        named_joined[{a, ev.object}] = gen;
        if (ev.value2 == 0) ++gen;
        break;
      }
      case EventKind::kNamedBarrierSyncEnd: {
        auto g = named_joined.find({a, ev.object});
        if (a < 0 || g == named_joined.end()) break;
        for (size_t r : named_members[{cta(ev, ev.cta), ev.object, g->second}]) {
          out[r].push_back(i);
        }
        break;
      }
      default:
        break;
    }
  }
  // A delivered load's write is complete for observers of its phase's completion or a later
  // one's of that slot.
  for (Acc& x : accs) {
    if (!x.delivered) continue;
    const std::vector<size_t>& c = completions[x.bar];
    for (size_t j = x.phase; j < c.size(); ++j) x.done.push_back(c[j]);
  }
  std::set<RacePair> races;
  std::vector<uint8_t> seen(n);
  std::vector<size_t> stack;
  for (size_t ia = 0; ia < accs.size(); ++ia) {
    const Acc& x = accs[ia];
    std::fill(seen.begin(), seen.end(), 0);
    stack.assign(x.done.begin(), x.done.end());
    for (size_t d : x.done) seen[d] = 1;
    while (!stack.empty()) {
      const size_t v = stack.back();
      stack.pop_back();
      for (size_t w : out[v]) {
        if (!seen[w]) {
          seen[w] = 1;
          stack.push_back(w);
        }
      }
    }
    for (size_t ib = ia + 1; ib < accs.size(); ++ib) {
      const Acc& y = accs[ib];
      if (y.loc != x.loc || (!x.write && !y.write) || !Overlap(x, y)) continue;
      if (seen[y.start]) continue;  // the later one starts after the earlier one is done
      races.insert({x.role, x.pc, y.role, y.pc, x.buffer, x.slot});
    }
  }
  return races;
}

namespace {

// Compares the oracle with the checker on one ended run, into *out.
void CheckPath(const ir::Program& p, const engine::Engine& e, PathRaces* out) {
  ++out->paths;
  if (e.outcome() != engine::Outcome::kCompleted) out->bad_end = true;
  const std::set<RacePair> oracle = OracleRaces(p, e, e.trace());
  std::set<RacePair> checker;
  for (const verifier::Finding& f : verifier::CheckRaces(p, e, e.trace())) {
    checker.insert({e.agent_info(f.other_agent).role, f.other_pc, e.agent_info(f.agent).role,
                    f.pc, f.object, f.index});
  }
  if (!oracle.empty()) {
    ++out->racy_paths;
    if (e.outcome() == engine::Outcome::kCompleted) out->completed_racy = true;
  }
  out->all.insert(oracle.begin(), oracle.end());
  if (oracle != checker) {
    if (out->mismatches == 0) {
      out->first_oracle = oracle;
      out->first_checker = checker;
    }
    ++out->mismatches;
  }
}

}  // namespace

PathRaces RandomRunRaces(const ir::Program& p, const std::vector<int64_t>& params,
                         uint64_t runs, uint64_t seed) {
  PathRaces out;
  for (uint64_t r = 0; r < runs; ++r) {
    engine::EngineOptions o;
    o.record_trace = true;
    o.policy = engine::Policy::kRandom;
    o.seed = seed + r;
    auto e = engine::Engine::Create(p, params, o);
    if (!e.ok()) {
      out.bad_end = true;
      return out;
    }
    e->Run();
    CheckPath(p, *e, &out);
  }
  return out;
}

PathRaces AllPathRaces(const ir::Program& p, const std::vector<int64_t>& params,
                       uint64_t max_paths) {
  PathRaces out;
  engine::EngineOptions o;
  o.record_trace = true;
  auto root = engine::Engine::Create(p, params, o);
  if (!root.ok()) {
    out.bad_end = true;
    return out;
  }
  auto check = [&](const engine::Engine& e) { CheckPath(p, e, &out); };
  std::vector<engine::Engine> stack;
  std::vector<engine::Choice> choices;
  stack.push_back(std::move(root).value());
  if (stack.back().outcome() != engine::Outcome::kRunning) {
    check(stack.back());
    return out;
  }
  // Depth first over paths: each stacked engine is a running state whose successors are all
  // to be walked.
  while (!stack.empty()) {
    if (out.paths > max_paths) {
      out.complete = false;
      break;
    }
    engine::Engine e = std::move(stack.back());
    stack.pop_back();
    e.Choices(&choices);
    const std::vector<engine::Choice> here = choices;
    for (const engine::Choice& c : here) {
      engine::Engine next = e;
      if (next.Step(c) != engine::Outcome::kRunning) {
        check(next);
      } else {
        stack.push_back(std::move(next));
      }
    }
  }
  return out;
}

}  // namespace parity::gen
