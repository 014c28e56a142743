#include "tests/verifier/gen/race_oracle.h"

#include <algorithm>
#include <deque>
#include <memory>
#include <string>
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
  // A generic-proxy write (`write`, `cp.async`): ordered before another access only through
  // edges whose release and acquire scopes include each other (races.h, P2013).
  bool needs_strong = false;
  int64_t lo = 0, hi = 0;  // bytes of the slot, from the oracle's own run of the program
  // A `write` or `cp.async` without `bytes`: the agents of its role write their own shares of
  // the range, so two of them at that statement do not overlap (docs/language.md §10).
  bool share = false;
  // Proxies (races.cc, CrossProxy): a generic access whose proxy is stated (`write`,
  // `use.generic`); an async-proxy access a generic one before it needs a fence.proxy.async
  // for (a TMA / bulk / st.async write; a `use.async` read, after a write).
  bool generic_stated = false;
  bool async_target = false;
  bool atomic = false;  // red / atom: two atomics of the same bytes do not race
  int64_t agent = -1;
  uint32_t role = 0, pc = 0;
  uint64_t loc = 0;     // (CTA, buffer, slot)
  uint32_t buffer = 0, slot = 0;
  size_t start = 0;     // the event it starts at
  std::vector<size_t> done;  // it is complete for every event reachable from one of these
  // A load's or st.async's write, a cp.async's covered by a landed cp.async.mbarrier.arrive:
  // each (slot, phase) its bytes are known complete in (done: that phase's completion or a
  // later one's of the slot).
  std::vector<std::pair<uint64_t, size_t>> completes_on;
};

// The oracle's own run of one agent's program: its statements in order, with the values of its
// loop indices and lets (over params and the agent's builtins), giving every buffer operation it
// executes, in program order, with the buffer slot and byte range its operands name. Nothing of
// the engine's evaluation of operands is read: a range the checker gets wrong differs here.
// An operation's operands that read a value only a synchronising step returns (a test_wait
// result, a token) make the program not covered.
struct OpRange {
  const ir::Op* op = nullptr;
  int64_t cta = -1;  // the CTA rank the operand names (`@cta(r)`); -1: the agent's own
  int64_t slot = 0, lo = 0, hi = 0;
};

int64_t ElementBytes(const std::string& dtype) {
  if (dtype == "u8" || dtype == "s8" || dtype == "i8") return 1;
  if (dtype == "u16" || dtype == "s16" || dtype == "i16" || dtype == "f16" || dtype == "bf16") {
    return 2;
  }
  if (dtype == "u32" || dtype == "s32" || dtype == "i32" || dtype == "f32") return 4;
  if (dtype == "u64" || dtype == "s64" || dtype == "i64" || dtype == "f64") return 8;
  return -1;
}

class AgentRun {
 public:
  AgentRun(const ir::Program& p, const engine::Engine& e, uint32_t agent) : p_(p) {
    const ir::Role& role = p.roles[e.agent_info(agent).role];
    vars_.assign(role.num_vars, 0);
    known_.assign(role.num_vars, false);
    env_.params = e.param_values().data();
    env_.num_params = e.param_values().size();
    env_.vars = vars_.data();
    env_.num_vars = vars_.size();
    env_.builtins = &e.agent_builtins(agent);
    Block(role.body);
  }
  bool ok() const { return ok_; }
  const std::vector<OpRange>& ops() const { return ops_; }

 private:
  // Steps are bounded so that a program the oracle cannot follow ends its run.
  static constexpr size_t kMaxOps = 1 << 16;

  bool Known(ir::ExprId x) const {
    if (x == ir::kNoExpr) return true;
    const ir::Expr& n = p_.expr(x);
    if (n.kind == ir::Expr::Kind::kVar && (n.index >= known_.size() || !known_[n.index])) {
      return false;
    }
    return Known(n.a) && Known(n.b) && Known(n.c);
  }
  int64_t Val(ir::ExprId x, int64_t fallback = 0) {
    if (x == ir::kNoExpr) return fallback;
    if (!Known(x)) {
      ok_ = false;
      return fallback;
    }
    auto v = ir::Eval(p_, x, env_);
    if (!v.ok()) {
      ok_ = false;
      return fallback;
    }
    return *v;
  }
  // Returns false after a `break`.
  bool Block(const std::vector<ir::Stmt>& body) {
    for (const ir::Stmt& st : body) {
      if (!ok_ || ops_.size() > kMaxOps) return true;
      if (const auto* l = std::get_if<ir::Let>(&st.node)) {
        vars_[l->var] = Val(l->value);
        known_[l->var] = true;
      } else if (const auto* f = std::get_if<ir::For>(&st.node)) {
        if (f->cond != ir::kNoExpr) {  // a while loop: its condition reads run values
          ok_ = false;
          return true;
        }
        const int64_t lo = Val(f->lo), hi = Val(f->hi), step = Val(f->step, 1);
        if (step <= 0) {
          ok_ = false;
          return true;
        }
        for (int64_t v = lo; v < hi && ok_; v += step) {
          vars_[f->var] = v;
          known_[f->var] = true;
          if (!Block(f->body)) break;
        }
      } else if (const auto* i = std::get_if<ir::If>(&st.node)) {
        if (!Block(Val(i->cond) != 0 ? i->then_body : i->else_body)) return false;
      } else if (std::holds_alternative<ir::Break>(st.node)) {
        return false;
      } else if (const auto* op = std::get_if<ir::Op>(&st.node)) {
        Op(*op);
      }
    }
    return true;
  }
  void Ref(const ir::Op& op, const ir::BufferRef& ref, int64_t bytes) {
    const ir::BufferDecl& b = p_.buffers[ref.buffer];
    OpRange r;
    r.op = &op;
    r.cta = ref.cta == ir::kNoExpr ? -1 : Val(ref.cta);
    r.slot = Val(ref.slot);
    r.lo = Val(ref.offset);
    const int64_t slot_bytes = Val(b.bytes);
    r.hi = r.lo + (bytes >= 0 ? bytes : Val(ref.bytes, slot_bytes - r.lo));
    ops_.push_back(r);
  }
  int64_t BoxBytes(uint32_t map) {
    const ir::TensorMapDecl& t = p_.tensor_maps[map];
    int64_t n = ElementBytes(t.dtype);
    if (n < 0 || !t.element_strides.empty() || t.interleave != "none") ok_ = false;
    for (ir::ExprId d : t.box_dims) n *= Val(d);
    return n;
  }
  void Op(const ir::Op& op) {
    // Operations that set a variable from what the run returns: the variable is not known.
    if (const auto* w = std::get_if<ir::MbarrierWait>(&op)) {
      if (w->result_var < known_.size()) known_[w->result_var] = false;
    } else if (const auto* a = std::get_if<ir::MbarrierArrive>(&op)) {
      if (a->token_var < known_.size()) known_[a->token_var] = false;
    } else if (const auto* c = std::get_if<ir::MbarrierPendingCount>(&op)) {
      if (c->result_var < known_.size()) known_[c->result_var] = false;
    } else if (const auto* g = std::get_if<ir::GlobalReadback>(&op)) {
      if (g->result_var < known_.size()) known_[g->result_var] = false;
    } else if (const auto* t = std::get_if<ir::TmaLoad>(&op)) {
      Ref(op, t->dst, BoxBytes(t->tensor_map));
    } else if (const auto* t = std::get_if<ir::TmaStore>(&op)) {
      Ref(op, t->src, BoxBytes(t->tensor_map));
    } else if (const auto* b = std::get_if<ir::BulkLoad>(&op)) {
      Ref(op, b->dst, -1);
    } else if (const auto* b = std::get_if<ir::BulkStore>(&op)) {
      Ref(op, b->src, -1);
    } else if (const auto* x = std::get_if<ir::BufferAccess>(&op)) {
      Ref(op, x->buf, -1);
    } else if (const auto* c = std::get_if<ir::CpAsync>(&op)) {
      Ref(op, c->dst, -1);
    } else if (const auto* s = std::get_if<ir::StAsync>(&op)) {
      Ref(op, s->dst, -1);
    }
  }

  const ir::Program& p_;
  std::vector<int64_t> vars_;
  std::vector<bool> known_;
  ir::EvalEnv env_;
  std::vector<OpRange> ops_;
  bool ok_ = true;
};

bool Overlap(const Acc& a, const Acc& b) { return a.lo < b.hi && b.lo < a.hi; }

}  // namespace

bool OracleCovers(const ir::Program& program) {
  // Accesses are compared by (CTA, buffer, slot), not by CTA shared-memory bytes: buffers that
  // alias others are not covered.
  for (const ir::BufferDecl& b : program.buffers) {
    if (b.alias_of != ir::BufferDecl::kNoAlias) return false;
  }
  return true;
}

std::set<RacePair> OracleRaces(const ir::Program& p, const engine::Engine& e,
                               std::span<const TraceEvent> trace, std::string* problem) {
  const verifier::PcMap pcs(p);
  std::string local_problem;
  if (problem == nullptr) problem = &local_problem;
  auto disagree = [&](const std::string& what) {
    if (problem->empty()) *problem = what;
  };
  // Each agent's buffer operations from the oracle's own run of its program, consumed in order
  // by its access events.
  std::vector<std::unique_ptr<AgentRun>> runs(e.num_agents());
  std::vector<size_t> next_op(e.num_agents(), 0);
  auto own = [&](int64_t a, const TraceEvent& ev, size_t i) -> const OpRange* {
    if (a < 0) return nullptr;
    auto& run = runs[static_cast<size_t>(a)];
    if (!run) run = std::make_unique<AgentRun>(p, e, static_cast<uint32_t>(a));
    size_t& k = next_op[static_cast<size_t>(a)];
    const ir::Op* op = pcs.op(e.agent_info(static_cast<uint32_t>(a)).role, ev.pc);
    if (!run->ok() || k >= run->ops().size() || run->ops()[k].op != op) {
      disagree("event " + std::to_string(i) + " (pc " + std::to_string(ev.pc) + " of agent " +
               std::to_string(a) + ") is not the next buffer operation of the oracle's own "
               "run of the agent's program");
      return nullptr;
    }
    return &run->ops()[k++];
  };
  const bool places = trace.data() == e.trace().data() && trace.size() <= e.trace_places().size();
  // The agent that issued the asynchronous operation event i completes (the engine's choice
  // among agents of one role running one statement); -1 when not recorded.
  auto issuer = [&](size_t i) -> int64_t {
    if (!places || e.trace_places()[i].agent == engine::Engine::kNoPlaceAgent) return -1;
    return e.trace_places()[i].agent;
  };
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
  auto loc_key = [&](const TraceEvent& ev, uint32_t rank, uint32_t buffer, uint32_t slot) {
    return (cta(ev, rank) << 40) | (uint64_t{buffer} << 20) | slot;
  };

  // The happens-before graph over the trace's events. An edge is `weak` when it links a release
  // and an acquire whose scopes do not include each other (different CTAs, not both .cluster):
  // it orders reads and asynchronous copy writes, not generic writes (P2013).
  struct Edge {
    size_t to;
    bool weak;
  };
  const size_t n = trace.size();
  std::vector<std::vector<Edge>> out(n);
  std::vector<Acc> accs;
  std::map<int64_t, size_t> last_of_agent;
  // A release into a barrier phase: the event whose past it publishes (the arrive, or for a
  // .relaxed update the fence.acq_rel before it), its agent's CTA and whether it is .cluster.
  struct Rel {
    size_t event;
    uint64_t cta;
    bool cluster;
  };
  std::map<uint64_t, std::vector<Rel>> releases;                  // slot -> current phase's
  std::map<uint64_t, std::vector<std::vector<Rel>>> phase_rels;   // slot -> per completed phase
  std::map<uint64_t, std::vector<size_t>> completions;            // slot -> completion events
  struct Fence {
    size_t event;
    bool cluster;
  };
  std::map<int64_t, Fence> last_fence;  // per agent: its last fence.acq_rel
  std::vector<size_t> proxy_fences;     // every fence.proxy.async by an agent
  // A .relaxed wait's observation, acquired at the agent's next fence.acq_rel.
  struct Seen {
    uint64_t slot;
    size_t phase;
    uint64_t cta;
    bool cluster;
  };
  std::map<int64_t, std::vector<Seen>> pending_acquires;
  // Copies in flight: (cluster, issuer CTA, pc, destination) -> access ids (loads, st.async).
  std::map<std::tuple<uint32_t, uint32_t, uint32_t, uint32_t>, std::deque<size_t>> in_flight;
  std::map<int64_t, std::vector<size_t>> open_stores;
  std::map<int64_t, std::deque<std::vector<size_t>>> store_groups;
  // cp.async: per agent its copies in issue order and the ends of its committed groups.
  std::map<int64_t, std::vector<size_t>> cp_copies;
  std::map<int64_t, std::deque<size_t>> cp_groups;
  struct CpArrive {
    int64_t agent;
    uint64_t slot;
    size_t upto;
  };
  std::map<std::tuple<uint32_t, uint32_t, uint32_t>, std::deque<CpArrive>> cp_arrives;
  std::map<int64_t, uint32_t> cluster_arrives;
  std::map<std::pair<uint32_t, uint32_t>, std::vector<size_t>> cluster_members;
  std::map<std::tuple<uint64_t, uint32_t>, uint32_t> named_gen;  // (cta, id) -> instance
  std::map<std::tuple<uint64_t, uint32_t, uint32_t>, std::vector<size_t>> named_members;
  std::map<std::pair<int64_t, uint32_t>, uint32_t> named_joined;  // (agent, id) -> instance

  auto role = [&](int64_t a) { return e.agent_info(static_cast<uint32_t>(a)).role; };
  auto op_at = [&](int64_t a, uint32_t pc) { return pcs.op(role(a), pc); };
  // Edges from what phase `phase` of `slot` publishes into `to`, an acquire by an agent of CTA
  // `at` (scope .cluster or not): the completion itself (the asynchronous writes that completed
  // on it), and each release of the phase, weak when the scopes do not include each other.
  auto acquire = [&](uint64_t slot, size_t phase, size_t to, uint64_t at, bool cluster) {
    out[completions[slot][phase]].push_back({to, false});
    for (const Rel& r : phase_rels[slot][phase]) {
      out[r.event].push_back({to, !(r.cta == at || (r.cluster && cluster))});
    }
  };
  auto new_acc = [&](int64_t a, uint32_t pc, uint64_t loc, uint32_t buffer, const OpRange& r,
                     size_t start) {
    Acc x;
    x.lo = r.lo;
    x.hi = r.hi;
    x.agent = a;
    x.role = role(a);
    x.pc = pc;
    x.loc = loc;
    x.buffer = buffer;
    x.slot = static_cast<uint32_t>(r.slot);
    x.start = start;
    return x;
  };
  // The rank an operand names (`@cta(r)` in the oracle's run), else the event's.
  auto rank_of = [](const OpRange& r, uint32_t fallback) {
    return r.cta >= 0 ? static_cast<uint32_t>(r.cta) : fallback;
  };

  for (size_t i = 0; i < n; ++i) {
    const TraceEvent& ev = trace[i];
    const auto k = static_cast<EventKind>(ev.kind);
    const int64_t a = agent(ev);
    if (ev.agent != trace::kNoAgent && a < 0) continue;
    // A phase completion names the agent whose update completed it, but that agent observes
    // nothing by it (it acquires only by a later wait): not in its program order.
    if (a >= 0 && k != EventKind::kPhaseComplete) {
      auto it = last_of_agent.find(a);
      if (it != last_of_agent.end()) out[it->second].push_back({i, false});
      last_of_agent[a] = i;
    }
    switch (k) {
      case EventKind::kArrive:
      case EventKind::kArriveExpectTx:
      case EventKind::kExpectTx:
      case EventKind::kCompleteTx: {
        if (a < 0) {
          if (k == EventKind::kCompleteTx) {  // an st.async's bytes land
            auto q = in_flight.find({ev.cluster, ev.cta, ev.pc, ev.target_cta});
            auto it = q == in_flight.end() ? std::deque<size_t>::iterator{} : q->second.begin();
            if (q != in_flight.end()) {
              for (; it != q->second.end(); ++it) {
                const Acc& x = accs[*it];
                if (!places) break;
                const engine::Engine::TracePlace& at = e.trace_places()[i];
                if (x.agent == issuer(i) && x.slot == at.slot && x.lo == at.offset) break;
              }
            }
            if (q == in_flight.end() || it == q->second.end()) {
              disagree("the st.async landing at event " + std::to_string(i) +
                       " matches no store in flight of the oracle's run");
              break;
            }
            Acc& x = accs[*it];
            q->second.erase(it);
            x.completes_on.push_back({slot_key(ev), completions[slot_key(ev)].size()});
          } else if (k == EventKind::kArrive) {  // a cp.async.mbarrier.arrive lands
            auto& q = cp_arrives[{ev.cluster, ev.cta, ev.pc}];
            const uint64_t s = slot_key(ev);
            auto it = std::find_if(q.begin(), q.end(), [&](const CpArrive& c) {
              return c.slot == s && (issuer(i) < 0 || c.agent == issuer(i));
            });
            if (it == q.end()) {
              disagree("the landing arrive at event " + std::to_string(i) +
                       " matches no cp.async.mbarrier.arrive of the oracle's run");
              break;
            }
            // Every cp.async its thread issued before it has landed: their bytes are seen by
            // whoever observes this phase (nothing else of the thread is released).
            const std::vector<size_t>& copies = cp_copies[it->agent];
            for (size_t c = 0; c < it->upto && c < copies.size(); ++c) {
              accs[copies[c]].completes_on.push_back({s, completions[s].size()});
            }
            q.erase(it);
          }
          break;
        }
        // An agent's update: .release (arrive, arrive.expect_tx unless .relaxed) publishes its
        // past; a .relaxed one (and expect_tx, complete_tx: always .relaxed, scope .cta on the
        // own CTA's barrier, .cluster on a peer's)
        // publishes what its last fence.acq_rel covers, at the narrower scope.
        bool relaxed = true, cluster = ev.target_cta != ev.cta;
        if (k == EventKind::kArrive || k == EventKind::kArriveExpectTx) {
          const ir::Op* op = op_at(a, ev.pc);
          const auto* arr = op ? std::get_if<ir::MbarrierArrive>(op) : nullptr;
          if (arr == nullptr) {
            disagree("the arrive at event " + std::to_string(i) + " is no arrive statement");
            break;
          }
          relaxed = arr->sem == ir::MemSem::kRelaxed;
          cluster = arr->scope == ir::MemScope::kCluster;
        }
        const uint64_t own_cta = cta(ev, ev.cta);
        if (!relaxed) {
          releases[slot_key(ev)].push_back({i, own_cta, cluster});
        } else if (auto f = last_fence.find(a); f != last_fence.end()) {
          releases[slot_key(ev)].push_back({f->second.event, own_cta,
                                            cluster && f->second.cluster});
        }
        break;
      }
      case EventKind::kPhaseComplete: {
        const uint64_t s = slot_key(ev);
        phase_rels[s].push_back(std::move(releases[s]));
        releases[s].clear();
        completions[s].push_back(i);
        break;
      }
      case EventKind::kWaitEnd:
      case EventKind::kTestWait: {
        if (a < 0 || (k == EventKind::kTestWait && ev.value != 1)) break;
        const uint64_t s = slot_key(ev);
        const std::vector<size_t>& c = completions[s];
        size_t phase = 0;
        if (!c.empty() && ((c.size() - 1) & 1) == ev.parity) {
          phase = c.size() - 1;
        } else if (c.size() >= 2) {
          phase = c.size() - 2;
        } else {
          break;  // a parity that passes on a phase that never completed observes nothing
        }
        const ir::Op* op = op_at(a, ev.pc);
        const auto* w = op ? std::get_if<ir::MbarrierWait>(op) : nullptr;
        if (w == nullptr) {
          disagree("the wait at event " + std::to_string(i) + " is no wait statement");
          break;
        }
        const bool cluster = w->scope == ir::MemScope::kCluster;
        if (w->sem == ir::MemSem::kRelaxed) {
          pending_acquires[a].push_back({s, phase, cta(ev, ev.cta), cluster});
        } else {
          acquire(s, phase, i, cta(ev, ev.cta), cluster);
        }
        break;
      }
      case EventKind::kFence: {
        const auto kind = static_cast<ir::Fence::Kind>(ev.object);
        if (a >= 0 && kind == ir::Fence::Kind::kProxyAsync) proxy_fences.push_back(i);
        if (a < 0 ||
            (kind != ir::Fence::Kind::kAcqRelCluster && kind != ir::Fence::Kind::kAcqRelCta)) {
          break;
        }
        const bool cluster = kind == ir::Fence::Kind::kAcqRelCluster;
        for (const Seen& q : pending_acquires[a]) {
          acquire(q.slot, q.phase, i, q.cta, q.cluster && cluster);
        }
        pending_acquires[a].clear();
        last_fence[a] = Fence{i, cluster};
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
        const OpRange* range = own(a, ev, i);
        if (range == nullptr) break;
        if (src != nullptr) {
          Acc x = new_acc(a, ev.pc, loc_key(ev, ev.cta, src->buffer, range->slot), src->buffer,
                          *range, i);
          x.copy = true;
          accs.push_back(x);
          open_stores[a].push_back(accs.size() - 1);
          break;
        }
        if (dst == nullptr) break;
        for (uint32_t r = 0; r < 16; ++r) {
          const bool to = (ev.flags & trace::kFlagMulticast) ? ((ev.value2 >> r) & 1) != 0
                                                             : r == ev.target_cta;
          if (!to) continue;
          Acc x = new_acc(a, ev.pc, loc_key(ev, r, dst->buffer, range->slot), dst->buffer,
                          *range, i);
          x.write = true;
          x.copy = true;
          x.async_target = true;
          accs.push_back(x);
          in_flight[{ev.cluster, ev.cta, ev.pc, r}].push_back(accs.size() - 1);
        }
        break;
      }
      case EventKind::kStAsync: {
        const ir::Op* op = op_at(a, ev.pc);
        const auto* st = op ? std::get_if<ir::StAsync>(op) : nullptr;
        const OpRange* range = own(a, ev, i);
        if (st == nullptr || range == nullptr) break;
        const uint32_t r = rank_of(*range, ev.target_cta);
        Acc x = new_acc(a, ev.pc, loc_key(ev, r, st->dst.buffer, range->slot), st->dst.buffer,
                        *range, i);
        x.write = true;
        x.copy = true;
        x.async_target = true;
        accs.push_back(x);
        in_flight[{ev.cluster, ev.cta, ev.pc, ev.target_cta}].push_back(accs.size() - 1);
        break;
      }
      case EventKind::kTmaStoreIssue: {
        const ir::Op* op = op_at(a, ev.pc);
        const auto* st = op ? std::get_if<ir::TmaStore>(op) : nullptr;
        const OpRange* range = own(a, ev, i);
        if (st == nullptr || range == nullptr) break;
        Acc x = new_acc(a, ev.pc, loc_key(ev, ev.cta, st->src.buffer, range->slot),
                        st->src.buffer, *range, i);
        x.copy = true;
        accs.push_back(x);
        open_stores[a].push_back(accs.size() - 1);
        break;
      }
      case EventKind::kTmaDeliver:
      case EventKind::kBulkComplete: {
        auto q = in_flight.find({ev.cluster, ev.cta, ev.pc, ev.target_cta});
        // The copy of this instruction to this CTA whose bytes the engine says landed (its
        // issuer, slot and offset, Engine::trace_places), the oldest of equal ones: which
        // in-flight copy a delivery step took is the engine's choice, the bytes are the
        // oracle's own.
        auto it = q == in_flight.end() ? std::deque<size_t>::iterator{} : q->second.begin();
        if (q != in_flight.end()) {
          for (; it != q->second.end(); ++it) {
            const Acc& x = accs[*it];
            if (!places) break;
            const engine::Engine::TracePlace& at = e.trace_places()[i];
            if ((issuer(i) < 0 || x.agent == issuer(i)) && x.slot == at.slot &&
                x.lo == at.offset) {
              break;
            }
          }
        }
        if (q == in_flight.end() || it == q->second.end()) {
          disagree("the delivery at event " + std::to_string(i) +
                   " matches no copy in flight of the oracle's run");
          break;
        }
        Acc& x = accs[*it];
        q->second.erase(it);
        // The complete-tx publishes the copy's own bytes only: no edge from its issue.
        x.completes_on.push_back({slot_key(ev), completions[slot_key(ev)].size()});
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
      case EventKind::kCpAsyncIssue: {
        const OpRange* range = own(a, ev, i);
        const auto* cp = range ? std::get_if<ir::CpAsync>(range->op) : nullptr;
        if (cp == nullptr) break;
        Acc x = new_acc(a, ev.pc, loc_key(ev, rank_of(*range, ev.cta), cp->dst.buffer,
                                          range->slot),
                        cp->dst.buffer, *range, i);
        x.write = true;
        x.copy = true;
        x.needs_strong = true;
        x.share = cp->dst.bytes == ir::kNoExpr;
        accs.push_back(x);
        cp_copies[a].push_back(accs.size() - 1);
        break;
      }
      case EventKind::kCpAsyncCommit:
        cp_groups[a].push_back(cp_copies[a].size());
        break;
      case EventKind::kCpAsyncWaitBegin: {
        // cp.async.wait_all commits the open copies first; wait_group N does not.
        const ir::Op* op = op_at(a, ev.pc);
        const auto* w = op ? std::get_if<ir::CpAsyncWait>(op) : nullptr;
        if (w != nullptr && w->pending == ir::kNoExpr) cp_groups[a].push_back(cp_copies[a].size());
        break;
      }
      case EventKind::kCpAsyncWaitEnd: {
        // Every committed group but the newest N has landed, for this thread (and whoever it
        // later synchronises with).
        auto& groups = cp_groups[a];
        const size_t keep = ev.value > 0 ? static_cast<size_t>(ev.value) : 0;
        if (groups.size() <= keep) break;
        const size_t upto = groups[groups.size() - keep - 1];
        groups.erase(groups.begin(), groups.end() - static_cast<std::ptrdiff_t>(keep));
        const std::vector<size_t>& copies = cp_copies[a];
        for (size_t c = 0; c < upto && c < copies.size(); ++c) accs[copies[c]].done.push_back(i);
        break;
      }
      case EventKind::kCpAsyncArrive:
        if (a >= 0) {
          cp_arrives[{ev.cluster, ev.cta, ev.pc}].push_back(
              {a, slot_key(ev), cp_copies[a].size()});
        }
        break;
      case EventKind::kUse:
      case EventKind::kWrite: {
        const OpRange* range = own(a, ev, i);
        if (range == nullptr) break;
        Acc x = new_acc(a, ev.pc, loc_key(ev, rank_of(*range, ev.cta), ev.object, range->slot),
                        ev.object, *range, i);
        x.write = k == EventKind::kWrite;
        x.needs_strong = x.write;
        const auto* w = std::get_if<ir::BufferAccess>(range->op);
        x.share = x.write && w != nullptr && w->buf.bytes == ir::kNoExpr;
        const ir::ReadProxy proxy = w != nullptr ? w->proxy : ir::ReadProxy::kUnstated;
        x.generic_stated = x.write || proxy == ir::ReadProxy::kGeneric;
        x.async_target = !x.write && proxy == ir::ReadProxy::kAsync;
        x.atomic = w != nullptr && w->atomic;
        x.done.push_back(i);
        accs.push_back(x);
        break;
      }
      case EventKind::kClusterArrive: {
        if (a < 0) break;
        // barrier.cluster.arrive is .release unless .relaxed (value 1); a relaxed one
        // publishes what a fence.acq_rel.cluster before it covers, or nothing.
        std::vector<size_t>& members = cluster_members[{ev.cluster, cluster_arrives[a]++}];
        if (ev.value == 0) {
          members.push_back(i);
        } else if (auto f = last_fence.find(a); f != last_fence.end() && f->second.cluster) {
          members.push_back(f->second.event);
        }
        break;
      }
      case EventKind::kClusterWaitEnd:
        if (a >= 0 && cluster_arrives[a] > 0) {
          for (size_t r : cluster_members[{ev.cluster, cluster_arrives[a] - 1}]) {
            out[r].push_back({i, false});
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
          out[r].push_back({i, false});
        }
        break;
      }
      default:
        break;
    }
  }
  // A write whose bytes completed on a barrier phase is complete for observers of that phase's
  // completion or a later one's of that slot.
  for (Acc& x : accs) {
    for (const auto& [slot, phase] : x.completes_on) {
      const std::vector<size_t>& c = completions[slot];
      for (size_t j = phase; j < c.size(); ++j) x.done.push_back(c[j]);
    }
  }
  std::set<RacePair> races;
  std::vector<uint8_t> strong(n), weak(n);
  auto reach = [&](const Acc& x, bool follow_weak, std::vector<uint8_t>& seen) {
    std::fill(seen.begin(), seen.end(), 0);
    std::vector<size_t> stack(x.done.begin(), x.done.end());
    for (size_t d : x.done) seen[d] = 1;
    while (!stack.empty()) {
      const size_t v = stack.back();
      stack.pop_back();
      for (const Edge& w : out[v]) {
        if ((w.weak && !follow_weak) || seen[w.to]) continue;
        seen[w.to] = 1;
        stack.push_back(w.to);
      }
    }
  };
  for (size_t ia = 0; ia < accs.size(); ++ia) {
    const Acc& x = accs[ia];
    reach(x, false, strong);
    reach(x, true, weak);
    for (size_t ib = ia + 1; ib < accs.size(); ++ib) {
      const Acc& y = accs[ib];
      if (y.loc != x.loc || (!x.write && !y.write) || !Overlap(x, y)) continue;
      if (x.share && y.share && x.role == y.role && x.pc == y.pc && x.agent != y.agent) continue;
      if (x.atomic && y.atomic) continue;
      // The later one starts after the earlier one is done.
      if (strong[y.start] || (!x.needs_strong && weak[y.start])) continue;
      races.insert({x.role, x.pc, y.role, y.pc, x.buffer, x.slot});
    }
  }
  // Cross-proxy pairs: a stated generic access ordered before an overlapping async-proxy one
  // (a copy's write; a `use.async` after a write) with no fence.proxy.async that the first
  // happens before and that happens before the second's start (on any edge).
  std::vector<uint8_t> from_fence(n);
  auto reach_from = [&](size_t f) {
    std::fill(from_fence.begin(), from_fence.end(), 0);
    std::vector<size_t> stack{f};
    from_fence[f] = 1;
    while (!stack.empty()) {
      const size_t v = stack.back();
      stack.pop_back();
      for (const Edge& w : out[v]) {
        if (from_fence[w.to]) continue;
        from_fence[w.to] = 1;
        stack.push_back(w.to);
      }
    }
  };
  std::vector<std::vector<uint8_t>> fence_reach;
  for (size_t f : proxy_fences) {
    reach_from(f);
    fence_reach.push_back(from_fence);
  }
  for (size_t ia = 0; ia < accs.size(); ++ia) {
    const Acc& x = accs[ia];
    if (!x.generic_stated) continue;
    reach(x, false, strong);
    reach(x, true, weak);
    for (size_t ib = 0; ib < accs.size(); ++ib) {
      const Acc& y = accs[ib];
      if (!y.async_target || y.start <= x.start || y.loc != x.loc || !Overlap(x, y)) continue;
      if (!y.write && !x.write) continue;
      if (!(strong[y.start] || (!x.needs_strong && weak[y.start]))) continue;  // a race
      bool fenced = false;
      for (size_t k = 0; k < proxy_fences.size() && !fenced; ++k) {
        const size_t f = proxy_fences[k];
        fenced = (strong[f] || (!x.needs_strong && weak[f])) && fence_reach[k][y.start];
      }
      if (!fenced) races.insert({x.role, x.pc, y.role, y.pc, x.buffer, x.slot});
    }
  }
  return races;
}

namespace {

// Compares the oracle with the checker on one ended run, into *out.
void CheckPath(const ir::Program& p, const engine::Engine& e, PathRaces* out) {
  ++out->paths;
  if (e.outcome() != engine::Outcome::kCompleted) out->bad_end = true;
  std::string problem;
  const std::set<RacePair> oracle = OracleRaces(p, e, e.trace(), &problem);
  if (!problem.empty() && out->problem.empty()) out->problem = problem;
  auto pairs = [&](verifier::RaceScan scan) {
    std::set<RacePair> out;
    for (const verifier::Finding& f : verifier::CheckRaces(p, e, e.trace(), scan)) {
      out.insert({e.agent_info(f.other_agent).role, f.other_pc, e.agent_info(f.agent).role,
                  f.pc, f.object, f.index});
    }
    return out;
  };
  const std::set<RacePair> checker = pairs(verifier::RaceScan::kChains);
  // The checker's near-linear scan against its quadratic reference.
  if (pairs(verifier::RaceScan::kAllPairs) != checker && problem.empty()) {
    problem = "RaceScan::kChains and kAllPairs find different pairs";
  }
  if (!oracle.empty()) {
    ++out->racy_paths;
    if (e.outcome() == engine::Outcome::kCompleted) out->completed_racy = true;
  }
  out->all.insert(oracle.begin(), oracle.end());
  if (oracle != checker || !problem.empty()) {
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
