#include "verifier/culprit.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <utility>
#include <type_traits>
#include <variant>

#include "sim/ir/ops.h"
#include "sim/ir/printer.h"
#include "sim/trace/event.h"
#include "verifier/pc_map.h"
#include "verifier/rules.h"

namespace parity::verifier {
namespace {

using engine::Engine;
using trace::EventKind;
using Clock = std::chrono::steady_clock;

// (cluster, CTA the barrier lives in, barrier decl, index).
using SlotKey = std::tuple<uint32_t, uint32_t, uint32_t, uint32_t>;

bool SameLoc(const SourceLocation& a, const SourceLocation& b) {
  return a.line == b.line && a.column == b.column;
}

// The statement of `block` (nested bodies included) at `where` whose op satisfies `pred`, and
// the value expression of the last `let` of each variable seen before it on the way there
// (`lets`: what a ring index variable such as `s = k % STAGES` stands for at the statement).
template <typename Pred>
ir::Stmt* FindStmt(ir::Block& block, const SourceLocation& where, Pred pred,
                   std::map<uint32_t, ir::ExprId>* lets) {
  for (ir::Stmt& st : block) {
    if (auto* l = std::get_if<ir::Let>(&st.node)) {
      (*lets)[l->var] = l->value;
    } else if (auto* f = std::get_if<ir::For>(&st.node)) {
      if (ir::Stmt* s = FindStmt(f->body, where, pred, lets)) return s;
    } else if (auto* i = std::get_if<ir::If>(&st.node)) {
      if (ir::Stmt* s = FindStmt(i->then_body, where, pred, lets)) return s;
      if (ir::Stmt* s = FindStmt(i->else_body, where, pred, lets)) return s;
    } else if (auto* op = std::get_if<ir::Op>(&st.node)) {
      if (SameLoc(st.where, where) && pred(*op)) return &st;
    }
  }
  return nullptr;
}

ir::ExprId Add(ir::Program& p, ir::Expr e) {
  p.exprs.push_back(e);
  return static_cast<ir::ExprId>(p.exprs.size() - 1);
}
ir::ExprId Const(ir::Program& p, int64_t v) {
  ir::Expr e;
  e.kind = ir::Expr::Kind::kConst;
  e.value = v;
  return Add(p, e);
}
ir::ExprId Binary(ir::Program& p, ir::BinaryOp op, ir::ExprId a, ir::ExprId b) {
  ir::Expr e;
  e.kind = ir::Expr::Kind::kBinary;
  e.op = static_cast<uint8_t>(op);
  e.a = a;
  e.b = b;
  e.where = p.exprs[a].where;
  return Add(p, e);
}

// Which roles write buffers (loads, cp.async, st.async, stores: producers) and which barrier
// arrays carry bytes (a copy completes on them, or an expect_tx announces some: "full"
// barriers). A wait that passes at once on a fresh barrier (its parity names the phase before
// phase 0) is the start state of a producer on a buffer-free barrier, and a vacuous wait
// anywhere else.
struct Roles {
  std::vector<bool> writes;
  std::vector<bool> carries_bytes;
};

void ScanRole(const ir::Block& block, bool* writes, std::vector<bool>* bytes) {
  for (const ir::Stmt& st : block) {
    if (const auto* f = std::get_if<ir::For>(&st.node)) {
      ScanRole(f->body, writes, bytes);
    } else if (const auto* i = std::get_if<ir::If>(&st.node)) {
      ScanRole(i->then_body, writes, bytes);
      ScanRole(i->else_body, writes, bytes);
    } else if (const auto* op = std::get_if<ir::Op>(&st.node)) {
      std::visit(
          [&](const auto& o) {
            using T = std::decay_t<decltype(o)>;
            if constexpr (std::is_same_v<T, ir::TmaLoad> || std::is_same_v<T, ir::BulkLoad> ||
                          std::is_same_v<T, ir::StAsync>) {
              *writes = true;
              (*bytes)[o.bar.barrier] = true;
            } else if constexpr (std::is_same_v<T, ir::CpAsync>) {
              *writes = true;
            } else if constexpr (std::is_same_v<T, ir::BufferAccess>) {
              *writes = *writes || o.write;
            } else if constexpr (std::is_same_v<T, ir::MbarrierExpectTx> ||
                                 std::is_same_v<T, ir::MbarrierCompleteTx>) {
              (*bytes)[o.bar.barrier] = true;
            } else if constexpr (std::is_same_v<T, ir::MbarrierArrive>) {
              if (o.expect_tx != ir::kNoExpr) (*bytes)[o.bar.barrier] = true;
            }
          },
          *op);
    }
  }
}

Roles ScanRoles(const ir::Program& p) {
  Roles r;
  r.writes.assign(p.roles.size(), false);
  r.carries_bytes.assign(p.barriers.size(), false);
  for (size_t i = 0; i < p.roles.size(); ++i) {
    bool w = false;
    ScanRole(p.roles[i].body, &w, &r.carries_bytes);
    r.writes[i] = w;
  }
  return r;
}

bool IsParityWait(const ir::Op& op) {
  const auto* w = std::get_if<ir::MbarrierWait>(&op);
  return w != nullptr && !w->test_only && w->parity != ir::kNoExpr;
}

// The candidate programs share one copy of the program: each candidate's change is applied,
// the runs made, and the change undone.
class Repairer {
 public:
  Repairer(const ir::Program& program, const std::vector<int64_t>& params, const Engine& engine,
           const RepairOptions& options)
      : program_(program), params_(params), engine_(engine), options_(options),
        copy_(program), pcs_(program), roles_(ScanRoles(program)), start_(Clock::now()) {
    for (uint32_t a = 0; a < engine.num_agents(); ++a) {
      const engine::AgentInfo& i = engine.agent_info(a);
      agent_of_[{i.cluster, i.cta, i.index_in_cta}] = a;
    }
    for (const Finding& f : CheckRules(program, engine, engine.trace())) {
      baseline_.insert({static_cast<int>(f.code()), f.where.line});
    }
    for (const engine::ViolationInfo& w : engine.result().warnings) {
      baseline_.insert({static_cast<int>(w.violation.code), w.where.line});
    }
  }

  std::vector<RepairCandidate> Candidates(const DeadlockReport& report) {
    std::vector<RepairCandidate> out;
    TxCandidates(report, &out);
    CountCandidates(&out);
    std::vector<std::pair<uint32_t, SourceLocation>> waits;  // (role, where), in rank order
    // The agent, barrier slot and CTA a candidate names: the blocked wait's, the heuristic
    // culprit's, else the first agent of the role.
    auto add_wait = [&](uint32_t role, const SourceLocation& where, int tier, uint32_t agent,
                        uint32_t index, uint32_t cta) {
      for (const auto& [r, w] : waits) {
        if (r == role && SameLoc(w, where)) return;
      }
      waits.emplace_back(role, where);
      const size_t first = out.size();
      ParityCandidates(role, where, tier, &out);
      for (size_t i = first; i < out.size(); ++i) {
        out[i].agent = agent;
        out[i].index = index;
        out[i].cta = cta;
      }
    };
    for (const BlockedExplanation& x : report.blocked) {
      if (x.blocked.wait != engine::WaitKind::kMbarrierParity) continue;
      add_wait(engine_.agent_info(x.blocked.agent).role, x.blocked.where, 2, x.blocked.agent,
               x.blocked.barrier_index, x.blocked.cta);
    }
    const DeadlockCulprit& h = report.culprit;
    if (h.found && h.cause != DeadlockCause::kMissedSignal) {
      add_wait(engine_.agent_info(h.agent).role, h.where, 3, h.agent, h.index, h.cta);
    }
    for (uint32_t r = 0; r < program_.roles.size(); ++r) {
      uint32_t agent = 0;
      while (agent + 1 < engine_.num_agents() && engine_.agent_info(agent).role != r) ++agent;
      for (const SourceLocation& w : AllParityWaits(r)) {
        add_wait(r, w, 4, agent, 0, engine_.agent_info(agent).cta);
      }
    }
    std::stable_sort(out.begin(), out.end(),
                     [](const RepairCandidate& a, const RepairCandidate& b) {
                       return a.tier < b.tier;
                     });
    if (out.size() > options_.max_candidates) out.resize(options_.max_candidates);
    return out;
  }

  // Whether the program with `c` applied completes every re-run without a new finding.
  bool Fixes(const RepairCandidate& c) {
    Apply(c, true);
    bool ok = true;
    std::vector<engine::EngineOptions> runs;
    auto add = [&](engine::EngineOptions o) {
      o.record_trace = true;
      o.tx_pieces = false;
      o.tx_pieces_at.clear();
      o.max_events = ~uint64_t{0};
      o.max_steps = std::max<uint64_t>(engine_.result().steps * 20, 2'000'000);
      for (const auto& r : runs) {
        if (r.policy == o.policy && r.seed == o.seed) return;
      }
      runs.push_back(o);
    };
    add(options_.options);
    for (engine::Policy p :
         {engine::Policy::kEager, engine::Policy::kLazy, engine::Policy::kRoundRobin}) {
      engine::EngineOptions o;
      o.policy = p;
      add(o);
    }
    for (size_t i = 0; i < runs.size() && ok; ++i) {
      ok = RunsClean(runs[i], i == 0 ? options_.counterexample : nullptr, c);
    }
    Apply(c, false);
    return ok;
  }

  bool OutOfTime() const {
    return steps_ >= options_.max_total_steps ||
           std::chrono::duration<double>(Clock::now() - start_).count() > options_.budget_s;
  }

  const ir::Program& copy() const { return copy_; }

 private:
  uint32_t AgentOf(const trace::TraceEvent& e) const {
    auto it = agent_of_.find({e.cluster, e.cta, e.agent});
    return it == agent_of_.end() ? UINT32_MAX : it->second;
  }

  // An expect_tx of a blocked phase whose arrivals are all in: the bytes that announced it
  // (by statement) against the bytes that landed; the statement's bytes changed so that the
  // phase's total matches what landed.
  void TxCandidates(const DeadlockReport& report, std::vector<RepairCandidate>* out) {
    const std::vector<trace::TraceEvent>& events = engine_.trace();
    std::set<SlotKey> done;
    for (const BlockedExplanation& x : report.blocked) {
      const engine::BlockedAgent& b = x.blocked;
      if (b.wait != engine::WaitKind::kMbarrierParity && b.wait != engine::WaitKind::kMbarrierToken) {
        continue;
      }
      if (b.state.pending_count != 0 || b.state.tx_count == 0) continue;
      const SlotKey key{engine_.agent_info(b.agent).cluster, b.cta, b.barrier, b.barrier_index};
      if (!done.insert(key).second) continue;
      size_t begin = 0;
      for (size_t i = 0; i < events.size(); ++i) {
        const auto k = static_cast<EventKind>(events[i].kind);
        if ((k == EventKind::kInit || k == EventKind::kPhaseComplete) && Key(events[i]) == key) {
          begin = i + 1;
        }
      }
      // (role, pc) -> (events, bytes each); bytes expected and delivered in the phase; the
      // agent whose expect_tx it was (the first).
      std::map<std::pair<uint32_t, uint32_t>, std::pair<int64_t, int64_t>> by_stmt;
      std::map<std::pair<uint32_t, uint32_t>, uint32_t> issuer;
      int64_t expected = 0, delivered = 0;
      bool uneven = false;
      for (size_t i = begin; i < events.size(); ++i) {
        const trace::TraceEvent& e = events[i];
        if (Key(e) != key) continue;
        const auto k = static_cast<EventKind>(e.kind);
        int64_t bytes = -1;
        if (k == EventKind::kExpectTx) bytes = e.value;
        if (k == EventKind::kArriveExpectTx) bytes = e.value2;
        if (k == EventKind::kCompleteTx || k == EventKind::kTmaDeliver) delivered += e.value;
        if (bytes < 0) continue;
        expected += bytes;
        const uint32_t a = AgentOf(e);
        if (a == UINT32_MAX) continue;
        issuer.emplace(std::make_pair(engine_.agent_info(a).role, uint32_t{e.pc}), a);
        auto& s = by_stmt[{engine_.agent_info(a).role, e.pc}];
        if (s.first > 0 && s.second != bytes) uneven = true;
        s.first += 1;
        s.second = bytes;
      }
      if (uneven || expected == delivered) continue;
      for (const auto& [stmt, n_bytes] : by_stmt) {
        const auto [n, bytes] = n_bytes;
        const int64_t delta = delivered - expected;
        if (delta % n != 0 || bytes + delta / n < 0) continue;
        RepairCandidate c;
        c.kind = RepairCandidate::Kind::kExpectTx;
        c.role = stmt.first;
        c.where = pcs_.where(stmt.first, stmt.second);
        c.barrier = b.barrier;
        c.index = b.barrier_index;
        c.cta = b.cta;
        c.agent = issuer.at(stmt);
        c.old_value = bytes;
        c.new_value = bytes + delta / n;
        c.tier = 0;
        out->push_back(c);
      }
    }
  }

  // Per barrier slot: the init count against the arrivals that come per phase, measured as the
  // agents that arrived on the slot during the run, each with its largest arrive count (the
  // protocol's release: every releasing agent arrives once per phase). Agents whose cp.async
  // arrives raise the pending count first (no .noinc) add nothing.
  void CountCandidates(std::vector<RepairCandidate>* out) {
    struct Slot {
      int64_t count = -1;
      uint32_t init_agent = UINT32_MAX;
      uint32_t init_pc = 0;
      std::map<uint32_t, int64_t> arrivals;  // agent -> largest arrive count
      std::set<uint32_t> net_zero;           // agents with cp.async arrives without .noinc
    };
    std::map<SlotKey, Slot> slots;
    // The run itself and, since it may have stopped before every releasing agent arrived (a
    // violation ends a run early), the unchanged schedule under the eager, lazy and
    // round-robin policies: the arrivers of a slot are those of any of these runs.
    std::vector<trace::TraceEvent> events = engine_.trace();
    for (engine::Policy p :
         {engine::Policy::kEager, engine::Policy::kLazy, engine::Policy::kRoundRobin}) {
      engine::EngineOptions o;
      o.policy = p;
      o.max_steps = std::max<uint64_t>(engine_.result().steps * 20, 2'000'000);
      o.max_steps = std::min(o.max_steps, options_.max_total_steps / 8);
      Expected<Engine> e = Engine::Create(program_, params_, o);
      if (!e.ok()) continue;
      steps_ += e->Run().steps;
      for (const trace::TraceEvent& ev : e->trace()) {
        const auto k = static_cast<EventKind>(ev.kind);
        if (k == EventKind::kArrive || k == EventKind::kArriveExpectTx ||
            k == EventKind::kCpAsyncArrive) {
          events.push_back(ev);
        }
      }
    }
    for (const trace::TraceEvent& e : events) {
      const auto k = static_cast<EventKind>(e.kind);
      if (k == EventKind::kInit) {
        Slot& s = slots[Key(e)];
        s.count = e.value;
        s.init_agent = AgentOf(e);
        s.init_pc = e.pc;
      } else if (k == EventKind::kArrive || k == EventKind::kArriveExpectTx) {
        const uint32_t a = AgentOf(e);
        if (a == UINT32_MAX) continue;
        int64_t& m = slots[Key(e)].arrivals[a];
        m = std::max<int64_t>(m, e.value);
      } else if (k == EventKind::kCpAsyncArrive && e.value == 0) {
        const uint32_t a = AgentOf(e);
        if (a != UINT32_MAX) slots[Key(e)].net_zero.insert(a);
      }
    }
    std::set<std::tuple<uint32_t, uint32_t, int, int64_t>> seen;  // (barrier, line, col, count)
    for (const auto& [key, s] : slots) {
      if (s.count < 0 || s.init_agent == UINT32_MAX || s.arrivals.empty()) continue;
      int64_t measured = 0;
      for (const auto& [a, n] : s.arrivals) {
        if (!s.net_zero.count(a)) measured += n;
      }
      if (measured <= 0 || measured == s.count) continue;
      RepairCandidate c;
      c.kind = RepairCandidate::Kind::kCount;
      c.role = engine_.agent_info(s.init_agent).role;
      c.barrier = std::get<2>(key);
      c.index = std::get<3>(key);
      c.cta = std::get<1>(key);
      c.agent = s.init_agent;
      c.old_value = s.count;
      c.new_value = measured;
      c.tier = 1;
      const ir::Stmt* st = pcs_.stmt(c.role, s.init_pc);
      const ir::Op* op = st ? std::get_if<ir::Op>(&st->node) : nullptr;
      const auto* init = op ? std::get_if<ir::MbarrierInit>(op) : nullptr;
      if (init == nullptr) continue;
      if (init->count == ir::kNoExpr) {
        c.on_declaration = true;
        c.where = program_.barriers[c.barrier].where;
      } else {
        c.where = st->where;
      }
      if (!seen.insert({c.barrier, c.where.line, c.where.column, measured}).second) continue;
      out->push_back(c);
    }
  }

  std::vector<SourceLocation> AllParityWaits(uint32_t role) const {
    std::vector<SourceLocation> out;
    struct Walk {
      static void Block(const ir::Block& b, std::vector<SourceLocation>* out) {
        for (const ir::Stmt& st : b) {
          if (const auto* f = std::get_if<ir::For>(&st.node)) {
            Block(f->body, out);
          } else if (const auto* i = std::get_if<ir::If>(&st.node)) {
            Block(i->then_body, out);
            Block(i->else_body, out);
          } else if (const auto* op = std::get_if<ir::Op>(&st.node)) {
            if (IsParityWait(*op)) out->push_back(st.where);
          }
        }
      }
    };
    Walk::Block(program_.roles[role].body, &out);
    return out;
  }

  // The wait's parity flipped (its phases named one off from the start), and, when the wait's
  // barrier index is a ring position `X % N` (directly or through a `let`), the parity that
  // ring implies, (X / N) & 1, and its flip (a parity from the wrong loop index).
  void ParityCandidates(uint32_t role, const SourceLocation& where, int tier,
                        std::vector<RepairCandidate>* out) {
    std::map<uint32_t, ir::ExprId> lets;
    ir::Stmt* st = FindStmt(copy_.roles[role].body, where, IsParityWait, &lets);
    if (st == nullptr) return;
    const auto& w = std::get<ir::MbarrierWait>(std::get<ir::Op>(st->node));
    const ir::Role* r = &program_.roles[role];
    RepairCandidate base;
    base.kind = RepairCandidate::Kind::kParity;
    base.role = role;
    base.where = where;
    base.barrier = w.bar.barrier;
    base.tier = tier;
    base.old_text = ir::PrintExpr(program_, w.parity, r);
    auto push = [&](ir::ExprId e, bool flip) {
      for (const RepairCandidate& c : *out) {
        if (c.kind == RepairCandidate::Kind::kParity && c.role == role &&
            SameLoc(c.where, where) && ir::SameExpr(copy_, c.new_expr, e)) {
          return;
        }
      }
      if (ir::SameExpr(copy_, e, w.parity)) return;
      RepairCandidate c = base;
      c.new_expr = e;
      c.flip = flip;
      c.new_text = ir::PrintExpr(copy_, e, r);
      out->push_back(c);
    };
    // The flip as one would write it: `X ^ 1` becomes X, a constant the other one.
    const ir::Expr& p = copy_.exprs[w.parity];
    if (p.kind == ir::Expr::Kind::kBinary && p.op == static_cast<uint8_t>(ir::BinaryOp::kBitXor) &&
        copy_.exprs[p.b].kind == ir::Expr::Kind::kConst && copy_.exprs[p.b].value == 1) {
      push(p.a, true);
    } else if (p.kind == ir::Expr::Kind::kConst && (p.value == 0 || p.value == 1)) {
      push(Const(copy_, 1 - p.value), true);
    } else {
      push(Binary(copy_, ir::BinaryOp::kBitXor, w.parity, Const(copy_, 1)), true);
    }
    ir::ExprId index = w.bar.index;
    if (index != ir::kNoExpr && copy_.exprs[index].kind == ir::Expr::Kind::kVar) {
      auto it = lets.find(copy_.exprs[index].index);
      if (it != lets.end()) index = it->second;
    }
    if (index != ir::kNoExpr && copy_.exprs[index].kind == ir::Expr::Kind::kBinary &&
        copy_.exprs[index].op == static_cast<uint8_t>(ir::BinaryOp::kMod)) {
      const ir::ExprId x = copy_.exprs[index].a, n = copy_.exprs[index].b;
      const ir::ExprId ring =
          Binary(copy_, ir::BinaryOp::kBitAnd, Binary(copy_, ir::BinaryOp::kDiv, x, n),
                 Const(copy_, 1));
      push(ring, false);
      push(Binary(copy_, ir::BinaryOp::kBitXor, ring, Const(copy_, 1)), false);
    }
  }

  // Applies (on) or undoes (off) `c` on the copy.
  void Apply(const RepairCandidate& c, bool on) {
    std::map<uint32_t, ir::ExprId> lets;
    switch (c.kind) {
      case RepairCandidate::Kind::kParity: {
        ir::Stmt* st = FindStmt(copy_.roles[c.role].body, c.where, IsParityWait, &lets);
        auto& w = std::get<ir::MbarrierWait>(std::get<ir::Op>(st->node));
        const ir::Stmt* orig = FindConst(c.role, c.where, IsParityWait);
        w.parity = on ? c.new_expr
                      : std::get<ir::MbarrierWait>(std::get<ir::Op>(orig->node)).parity;
        break;
      }
      case RepairCandidate::Kind::kCount: {
        if (c.on_declaration) {
          copy_.barriers[c.barrier].count =
              on ? Const(copy_, c.new_value) : program_.barriers[c.barrier].count;
          break;
        }
        auto is_init = [&](const ir::Op& op) {
          const auto* i = std::get_if<ir::MbarrierInit>(&op);
          return i != nullptr && i->bar.barrier == c.barrier;
        };
        ir::Stmt* st = FindStmt(copy_.roles[c.role].body, c.where, is_init, &lets);
        const ir::Stmt* orig = FindConst(c.role, c.where, is_init);
        std::get<ir::MbarrierInit>(std::get<ir::Op>(st->node)).count =
            on ? Const(copy_, c.new_value)
               : std::get<ir::MbarrierInit>(std::get<ir::Op>(orig->node)).count;
        break;
      }
      case RepairCandidate::Kind::kExpectTx: {
        auto is_expect = [&](const ir::Op& op) {
          if (const auto* x = std::get_if<ir::MbarrierExpectTx>(&op)) {
            return x->bar.barrier == c.barrier;
          }
          const auto* a = std::get_if<ir::MbarrierArrive>(&op);
          return a != nullptr && a->bar.barrier == c.barrier && a->expect_tx != ir::kNoExpr;
        };
        ir::Stmt* st = FindStmt(copy_.roles[c.role].body, c.where, is_expect, &lets);
        const ir::Stmt* orig = FindConst(c.role, c.where, is_expect);
        if (st == nullptr || orig == nullptr) break;
        ir::Op& op = std::get<ir::Op>(st->node);
        const ir::Op& oop = std::get<ir::Op>(orig->node);
        const ir::ExprId value = Const(copy_, c.new_value);
        if (auto* x = std::get_if<ir::MbarrierExpectTx>(&op)) {
          x->bytes = on ? value : std::get<ir::MbarrierExpectTx>(oop).bytes;
        } else {
          std::get<ir::MbarrierArrive>(op).expect_tx =
              on ? value : std::get<ir::MbarrierArrive>(oop).expect_tx;
        }
        break;
      }
    }
  }

  template <typename Pred>
  const ir::Stmt* FindConst(uint32_t role, const SourceLocation& where, Pred pred) {
    // FindStmt only reads through its non-const reference here.
    std::map<uint32_t, ir::ExprId> lets;
    return FindStmt(const_cast<ir::Block&>(program_.roles[role].body), where, pred, &lets);
  }

  // One re-run of the changed program: it completes, with no violation, and every finding and
  // warning (by code and line) is one the deadlocked run had too.
  bool RunsClean(const engine::EngineOptions& o, const std::vector<engine::Choice>* choices,
                 const RepairCandidate& c) {
    if (OutOfTime()) return false;
    engine::EngineOptions bounded = o;
    bounded.max_steps = std::min(o.max_steps, options_.max_total_steps - steps_);
    Expected<Engine> e = Engine::Create(copy_, params_, bounded);
    if (!e.ok()) return false;
    Engine& run = *e;
    if (choices != nullptr) {
      std::vector<engine::Choice> enabled;
      for (const engine::Choice& c : *choices) {
        run.Choices(&enabled);
        if (std::find(enabled.begin(), enabled.end(), c) == enabled.end()) break;
        if (run.Step(c) != engine::Outcome::kRunning) break;
      }
    }
    const engine::RunResult r =
        run.result().outcome == engine::Outcome::kRunning ? run.Run() : run.result();
    steps_ += r.steps;
    if (r.outcome != engine::Outcome::kCompleted || r.violation) return false;
    for (const engine::ViolationInfo& w : r.warnings) {
      if (!baseline_.count({static_cast<int>(w.violation.code), w.where.line})) return false;
    }
    for (const Finding& f : CheckRules(copy_, run, run.trace())) {
      if (!baseline_.count({static_cast<int>(f.code()), f.where.line})) return false;
    }
    if (c.kind == RepairCandidate::Kind::kParity && ObservesAPhaseAgain(run, c)) return false;
    return !ReadsUnwritten(run);
  }

  // Whether the changed wait returns for a phase its agent had already observed, or at once on
  // a fresh barrier where that is not a producer's start state (Roles): a parity that makes a
  // wait vacuous (nothing then waits for the phase that was missing) is no fix, although the
  // run then completes.
  bool ObservesAPhaseAgain(const Engine& run, const RepairCandidate& c) const {
    std::map<SlotKey, int64_t> completed;                   // phases completed per slot
    std::map<std::pair<uint32_t, SlotKey>, int64_t> seen;  // (agent, slot) -> last observed
    for (const trace::TraceEvent& e : run.trace()) {
      const auto k = static_cast<EventKind>(e.kind);
      if (k == EventKind::kInit) {
        completed[Key(e)] = 0;
      } else if (k == EventKind::kPhaseComplete) {
        ++completed[Key(e)];
      } else if ((k == EventKind::kWaitEnd || (k == EventKind::kTestWait && e.value == 1)) &&
                 e.agent != trace::kNoAgent) {
        const uint32_t a = AgentOf(e);
        if (a == UINT32_MAX) continue;
        // A passing parity wait observes the last completed phase of its parity: phase
        // completed - 1, or completed - 2 when that one has the other parity.
        const int64_t done = completed[Key(e)];
        const int64_t observed = ((done - 1) & 1) == (e.parity & 1) ? done - 1 : done - 2;
        auto [it, fresh] = seen.try_emplace({a, Key(e)}, observed);
        const uint32_t role = engine_.agent_info(a).role;
        const bool start_state = observed < 0 && roles_.writes[role] &&
                                 e.object < roles_.carries_bytes.size() &&
                                 !roles_.carries_bytes[e.object];
        const bool again = (!fresh && observed <= it->second) || (observed < 0 && !start_state);
        it->second = std::max(it->second, observed);
        if (again && role == c.role &&
            SameLoc(pcs_.where(c.role, e.pc), c.where)) {
          return true;
        }
      }
    }
    return false;
  }

  // Whether the run reads (`use`) a buffer slot before anything wrote it, where something
  // writes it later: a change that lets a consumer through before its data arrived (a parity
  // that passes at once, the producer's start phase moved to match) is no fix, although
  // nothing races in it.
  static bool ReadsUnwritten(const Engine& run) {
    const auto& events = run.trace();
    const auto& places = run.trace_places();
    std::set<uint32_t> written, read_first;
    for (size_t i = 0; i < events.size() && i < places.size(); ++i) {
      switch (static_cast<EventKind>(events[i].kind)) {
        case EventKind::kWrite:
        case EventKind::kTmaDeliver:
        case EventKind::kBulkComplete:
        case EventKind::kCompleteTx:
        case EventKind::kCpAsyncComplete:
          written.insert(places[i].slot);
          break;
        case EventKind::kUse:
          if (!written.count(places[i].slot)) read_first.insert(places[i].slot);
          break;
        default:
          break;
      }
    }
    for (uint32_t slot : read_first) {
      if (written.count(slot)) return true;
    }
    return false;
  }

  static SlotKey Key(const trace::TraceEvent& e) {
    return {e.cluster, e.target_cta, e.object, e.index};
  }

  const ir::Program& program_;
  const std::vector<int64_t>& params_;
  const Engine& engine_;
  const RepairOptions& options_;
  ir::Program copy_;
  PcMap pcs_;
  Roles roles_;
  Clock::time_point start_;
  std::map<std::tuple<uint32_t, uint32_t, uint32_t>, uint32_t> agent_of_;
  std::set<std::pair<int, int>> baseline_;  // (code, line) of the deadlocked run's findings
  uint64_t steps_ = 0;                       // engine steps of the re-runs so far
};

bool IsParityWaitKind(const BlockedExplanation& x) {
  return x.blocked.wait == engine::WaitKind::kMbarrierParity;
}

std::string BarrierName(const ir::Program& p, uint32_t b) {
  return b < p.barriers.size() ? p.barriers[b].name : "barrier#" + std::to_string(b);
}

void Describe(const ir::Program& program, const Engine& engine, const RepairCandidate& c,
              DeadlockCulprit* out) {
  DeadlockCulprit k;
  k.found = true;
  k.agent = c.agent;
  k.barrier = c.barrier;
  k.index = c.index;
  k.cta = c.cta;
  k.where = c.where;
  std::ostringstream text, change;
  const std::string bar = BarrierName(program, c.barrier);
  switch (c.kind) {
    case RepairCandidate::Kind::kCount:
      k.change_kind = "count";
      k.cause = c.new_value > c.old_value ? DeadlockCause::kCountTooLow
                                          : DeadlockCause::kCountTooHigh;
      change << "set the init count of " << bar << " to " << c.new_value;
      text << "the init count of " << bar << " at " << c.where.ToString() << " is "
           << c.old_value << " but " << c.new_value << " arrivals come per phase on "
           << BarrierLabel(program, c.barrier, c.index, c.cta)
           << " (every agent that releases it, each with its arrive count): " << change.str()
           << ". "
           << (c.new_value > c.old_value
                   ? "With the lower count a phase completes before all releases are in, the "
                     "early ones count toward the next phase, and the ring's phases drift "
                     "apart (a multicast release counts every CTA that arrives: CUTLASS "
                     "PipelineTmaAsync multiplies by cluster_m + cluster_n - 1)."
                   : "With the higher count the phase waits for arrivals that never come.");
      break;
    case RepairCandidate::Kind::kExpectTx:
      k.change_kind = "expect_tx";
      k.cause = c.new_value < c.old_value ? DeadlockCause::kTxOverExpected
                                          : DeadlockCause::kTxOverDelivered;
      change << "set the expect_tx bytes to " << c.new_value;
      text << "the expect_tx on " << bar << "[" << c.index << "] at " << c.where.ToString()
           << " announces " << c.old_value << " bytes but " << c.new_value
           << " land per phase from the copies that complete on it: " << change.str() << ".";
      break;
    case RepairCandidate::Kind::kParity: {
      k.change_kind = "parity";
      const bool flip = c.flip;
      k.cause = flip ? DeadlockCause::kWrongInitialPhase : DeadlockCause::kWaitSkipsPhase;
      change << "wait with parity " << c.new_text << " instead of " << c.old_text;
      text << "the parity " << c.old_text << " of the wait on " << bar << " at "
           << c.where.ToString()
           << (flip ? " names the other phase than the one the barrier's history is in (its "
                      "start phase is one off)"
                    : " does not follow the ring of stages its index walks (a parity from the "
                      "wrong loop index)")
           << ": " << change.str() << ".";
      break;
    }
  }
  (void)engine;
  k.text = text.str() + " With this change alone every re-run of the schedule completes "
                        "without a new finding.";
  k.change = change.str();
  *out = k;
}

// A parity change at the very wait the heuristic diagnosis already named confirms it: the
// agent and slot it named stay, and so does its slug where it says more than the change does
// (an earlier wait that passed at once) or the same (a flip is a start phase one off:
// wrong-initial-phase; a parity derived from the ring index replaces one from the wrong loop
// index: wait-skips-a-phase). Otherwise the change's own slug stands: a blocked wait that
// "skipped a phase" but is fixed by a flip had its start phase wrong.
void KeepHeuristicNames(const DeadlockReport& report, const DeadlockCulprit& heuristic,
                        DeadlockCulprit* k) {
  const auto keeps = [&](DeadlockCause c) {
    return c == DeadlockCause::kParityPassedAtOnce || c == k->cause;
  };
  if (heuristic.found && SameLoc(heuristic.where, k->where) &&
      (heuristic.cause == DeadlockCause::kParityPassedAtOnce ||
       heuristic.cause == DeadlockCause::kWaitSkipsPhase ||
       heuristic.cause == DeadlockCause::kWrongInitialPhase)) {
    if (keeps(heuristic.cause)) k->cause = heuristic.cause;
    k->agent = heuristic.agent;
    k->barrier = heuristic.barrier;
    k->index = heuristic.index;
    k->cta = heuristic.cta;
    k->parity = heuristic.parity;
    k->text = heuristic.text + " Fix: " + k->change + " (with this change alone every re-run "
              "completes without a new finding).";
    return;
  }
  for (const BlockedExplanation& x : report.blocked) {
    if (!SameLoc(x.blocked.where, k->where) || !IsParityWaitKind(x)) continue;
    k->agent = x.blocked.agent;
    k->index = x.blocked.barrier_index;
    k->cta = x.blocked.cta;
    k->parity = x.blocked.parity;
    return;
  }
}

}  // namespace

bool FindCulpritByRepair(const ir::Program& program, const std::vector<int64_t>& params,
                         const engine::Engine& engine, const RepairOptions& options,
                         DeadlockReport* report) {
  if (engine.trace().empty()) return false;
  Repairer repairer(program, params, engine, options);
  for (const RepairCandidate& c : repairer.Candidates(*report)) {
    if (repairer.OutOfTime()) break;
    if (!repairer.Fixes(c)) continue;
    const DeadlockCulprit heuristic = report->culprit;
    Describe(program, engine, c, &report->culprit);
    DeadlockCulprit& k = report->culprit;
    if (c.kind == RepairCandidate::Kind::kParity) KeepHeuristicNames(*report, heuristic, &k);
    report->summary =
        "P2001 deadlock: " + std::to_string(report->blocked.size()) +
        (report->blocked.size() == 1 ? " agent is" : " agents are") +
        " blocked forever; most likely cause (" + DeadlockCauseName(k.cause) + ") at " +
        BarrierLabel(program, k.barrier, k.index, k.cta) + ", the " +
        (k.change_kind == "parity" ? "wait" : k.change_kind == "count" ? "init count" : "expect_tx") +
        " at " + k.where.ToString() + ": " + k.change;
    return true;
  }
  return false;
}

DeadlockCulprit FindCulpritOfViolation(const ir::Program& program,
                                       const std::vector<int64_t>& params,
                                       const engine::Engine& engine,
                                       const RepairOptions& options) {
  DeadlockCulprit out;
  if (engine.trace().empty()) return out;
  Repairer repairer(program, params, engine, options);
  for (const RepairCandidate& c : repairer.Candidates(DeadlockReport{})) {
    if (repairer.OutOfTime()) break;
    if (!repairer.Fixes(c)) continue;
    Describe(program, engine, c, &out);
    return out;
  }
  return out;
}

DeadlockReport DiagnoseDeadlockWithRepair(const ir::Program& program,
                                          const engine::Engine& engine,
                                          const engine::RunResult& result,
                                          const std::vector<int64_t>& params,
                                          const std::vector<engine::Choice>* counterexample) {
  DeadlockReport report = DiagnoseDeadlock(program, engine, result, nullptr, &params);
  RepairOptions o;
  o.options = engine.options();
  o.counterexample = counterexample;
  FindCulpritByRepair(program, params, engine, o, &report);
  return report;
}

}  // namespace parity::verifier
