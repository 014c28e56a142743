#include "verifier/deadlock.h"

#include <algorithm>
#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/strong_components.hpp>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <tuple>
#include <type_traits>
#include <utility>
#include <variant>

#include "sim/ir/eval.h"
#include "sim/trace/event.h"
#include "verifier/deadlock_internal.h"
#include "verifier/pc_map.h"

namespace parity::verifier {
namespace {

using deadlock_internal::AgentList;
using deadlock_internal::WaitTarget;

using engine::BlockedAgent;
using engine::Engine;
using engine::WaitKind;
using trace::EventKind;

// How a role can signal one barrier array: from its own CTA only, or to other CTAs too.
struct SignalReach {
  bool local = false;
  bool remote = false;
  bool arrives = false;  // arrive-on operations (count toward pending)
  bool bytes = false;    // complete_tx sources (TMA, bulk, st.async, complete_tx) or expect_tx
};

// signal[role][barrier decl]
using SignalTable = std::vector<std::vector<SignalReach>>;

void Note(SignalReach& r, bool remote, bool arrives) {
  (remote ? r.remote : r.local) = true;
  (arrives ? r.arrives : r.bytes) = true;
}

void ScanBlock(const ir::Block& block, std::vector<SignalReach>& out) {
  for (const ir::Stmt& stmt : block) {
    if (const auto* f = std::get_if<ir::For>(&stmt.node)) {
      ScanBlock(f->body, out);
    } else if (const auto* i = std::get_if<ir::If>(&stmt.node)) {
      ScanBlock(i->then_body, out);
      ScanBlock(i->else_body, out);
    } else if (const auto* op = std::get_if<ir::Op>(&stmt.node)) {
      std::visit(
          [&](const auto& o) {
            using T = std::decay_t<decltype(o)>;
            if constexpr (std::is_same_v<T, ir::MbarrierArrive>) {
              bool remote = o.bar.cta != ir::kNoExpr || o.mask != ir::kNoExpr;
              Note(out[o.bar.barrier], remote, /*arrives=*/true);
              if (o.expect_tx != ir::kNoExpr) Note(out[o.bar.barrier], remote, false);
            } else if constexpr (std::is_same_v<T, ir::MbarrierExpectTx> ||
                                 std::is_same_v<T, ir::MbarrierCompleteTx>) {
              Note(out[o.bar.barrier], o.bar.cta != ir::kNoExpr, false);
            } else if constexpr (std::is_same_v<T, ir::TmaLoad> || std::is_same_v<T, ir::BulkLoad>) {
              Note(out[o.bar.barrier], o.multicast_mask != ir::kNoExpr || o.bar.cta != ir::kNoExpr,
                   false);
            } else if constexpr (std::is_same_v<T, ir::StAsync>) {
              Note(out[o.bar.barrier], true, false);
            } else if constexpr (std::is_same_v<T, ir::CpAsyncMbarrierArrive>) {
              Note(out[o.bar.barrier], o.bar.cta != ir::kNoExpr, true);
            }
          },
          *op);
    }
  }
}

SignalTable BuildSignalTable(const ir::Program& program) {
  SignalTable table(program.roles.size(),
                    std::vector<SignalReach>(program.barriers.size()));
  for (size_t r = 0; r < program.roles.size(); ++r) ScanBlock(program.roles[r].body, table[r]);
  return table;
}

// Which CTAs of its cluster each agent's signalling operations can reach, per barrier array
// (bit r = CTA rank r): a static run of the agent's role program with its builtins and the
// params, every branch whose condition is unknown taken both ways, variables that operations
// set at run time (test_wait results, tokens, counts) unknown. An operation whose target
// (`@cta(E)`, `mask E`, `multicast E`) is unknown reaches every CTA, and so does everything of
// an agent whose run cannot be followed (unknown loop bounds, too many steps, no params), so
// the masks over-approximate what the agent can ever signal.
constexpr uint32_t kAllCtas = 0xffffffffu;
// [agent][barrier decl]: the CTAs (bit r) an agent's operations may signal on that barrier
// array (low 32 bits: any update, bytes included), and those it may arrive on (high 32 bits: an
// arrive-on, the only thing that helps a phase whose arrivals are missing).
using ReachTable = std::vector<std::vector<uint64_t>>;

class StaticRun {
 public:
  StaticRun(const ir::Program& program, const std::vector<int64_t>& params,
            const ir::BuiltinValues& builtins, uint32_t own_cta, uint32_t num_vars,
            std::vector<uint64_t>* reach)
      : program_(program), params_(params), builtins_(builtins), own_(1u << own_cta),
        vals_(num_vars, 0), known_(num_vars, true), reach_(reach) {}

  // False when the run could not be followed (the caller then assumes every CTA).
  bool Run(const ir::Block& body) {
    Exec(body);
    return !give_up_;
  }

 private:
  struct Value {
    int64_t v = 0;
    bool known = false;
  };

  bool ReadsUnknown(ir::ExprId id) const {
    if (id == ir::kNoExpr) return false;
    const ir::Expr& e = program_.exprs[id];
    if (e.kind == ir::Expr::Kind::kVar) return e.index >= known_.size() || !known_[e.index];
    return ReadsUnknown(e.a) || ReadsUnknown(e.b) || ReadsUnknown(e.c);
  }

  Value Eval(ir::ExprId id) const {
    if (ReadsUnknown(id)) return {};
    ir::EvalEnv env;
    env.params = params_.data();
    env.num_params = params_.size();
    env.vars = vals_.data();
    env.num_vars = vals_.size();
    env.builtins = &builtins_;
    ir::EvalFault fault;
    const int64_t v = ir::EvalFast(program_, id, env, &fault);
    return fault.ok() ? Value{v, true} : Value{};
  }

  void Forget(uint32_t var) {
    if (var < known_.size()) known_[var] = false;
  }

  void Reach(uint32_t barrier, uint32_t mask, bool arrive = false) {
    if (barrier < reach_->size()) {
      (*reach_)[barrier] |= mask | (arrive ? uint64_t{mask} << 32 : 0);
    }
  }
  uint32_t CtaMask(ir::ExprId cta) const {
    const Value v = Eval(cta);
    return v.known && v.v >= 0 && v.v < 32 ? 1u << v.v : kAllCtas;
  }
  uint32_t BitMask(ir::ExprId mask) const {
    const Value v = Eval(mask);
    return v.known ? static_cast<uint32_t>(v.v) : kAllCtas;
  }
  uint32_t Target(const ir::BarrierRef& bar, ir::ExprId mask) const {
    if (mask != ir::kNoExpr) return BitMask(mask);
    if (bar.cta != ir::kNoExpr) return CtaMask(bar.cta);
    return own_;
  }

  void Exec(const ir::Block& block) {
    for (const ir::Stmt& st : block) {
      if (give_up_) return;
      if (++steps_ > kMaxSteps) {
        give_up_ = true;
        return;
      }
      if (const auto* l = std::get_if<ir::Let>(&st.node)) {
        const Value v = Eval(l->value);
        if (l->var < vals_.size()) {
          vals_[l->var] = v.v;
          known_[l->var] = v.known;
        }
      } else if (std::holds_alternative<ir::Break>(st.node)) {
        // Leaving a loop early is not modelled by this walk: fall back to the coarse table.
        give_up_ = true;
        return;
      } else if (const auto* f = std::get_if<ir::For>(&st.node)) {
        if (f->cond != ir::kNoExpr) {  // a `while`: its passes depend on the run
          give_up_ = true;
          return;
        }
        const Value lo = Eval(f->lo), hi = Eval(f->hi);
        const Value step = f->step == ir::kNoExpr ? Value{1, true} : Eval(f->step);
        if (!lo.known || !hi.known || !step.known || step.v <= 0 || f->var >= vals_.size()) {
          give_up_ = true;
          return;
        }
        for (int64_t i = lo.v; i < hi.v && !give_up_; i += step.v) {
          vals_[f->var] = i;
          known_[f->var] = true;
          Exec(f->body);
        }
        Forget(f->var);
      } else if (const auto* i = std::get_if<ir::If>(&st.node)) {
        const Value c = Eval(i->cond);
        if (c.known) {
          Exec(c.v != 0 ? i->then_body : i->else_body);
        } else {
          const std::vector<int64_t> vals = vals_;
          const std::vector<bool> known = known_;
          Exec(i->then_body);
          const std::vector<int64_t> then_vals = vals_;
          const std::vector<bool> then_known = known_;
          vals_ = vals;
          known_ = known;
          Exec(i->else_body);
          for (size_t v = 0; v < vals_.size(); ++v) {
            known_[v] = known_[v] && then_known[v] && vals_[v] == then_vals[v];
          }
        }
      } else if (const auto* op = std::get_if<ir::Op>(&st.node)) {
        std::visit([&](const auto& o) { Op(o); }, *op);
      }
    }
  }

  void Op(const ir::MbarrierArrive& o) {
    Reach(o.bar.barrier, Target(o.bar, o.mask), /*arrive=*/true);
    Forget(o.token_var);
  }
  void Op(const ir::MbarrierExpectTx& o) { Reach(o.bar.barrier, Target(o.bar, ir::kNoExpr)); }
  void Op(const ir::MbarrierCompleteTx& o) { Reach(o.bar.barrier, Target(o.bar, ir::kNoExpr)); }
  void Op(const ir::TmaLoad& o) { Reach(o.bar.barrier, Target(o.bar, o.multicast_mask)); }
  void Op(const ir::BulkLoad& o) { Reach(o.bar.barrier, Target(o.bar, o.multicast_mask)); }
  void Op(const ir::StAsync& o) {
    Reach(o.bar.barrier, o.bar.cta != ir::kNoExpr ? CtaMask(o.bar.cta) : kAllCtas);
  }
  void Op(const ir::CpAsyncMbarrierArrive& o) {
    Reach(o.bar.barrier, Target(o.bar, ir::kNoExpr), /*arrive=*/true);
  }
  void Op(const ir::MbarrierWait& o) {
    if (o.test_only) Forget(o.result_var);
  }
  void Op(const ir::MbarrierPendingCount& o) { Forget(o.result_var); }
  void Op(const ir::GlobalReadback& o) { Forget(o.result_var); }
  template <typename T>
  void Op(const T&) {}

  static constexpr uint64_t kMaxSteps = 1'000'000;
  const ir::Program& program_;
  const std::vector<int64_t>& params_;
  const ir::BuiltinValues& builtins_;
  const uint32_t own_;
  std::vector<int64_t> vals_;
  std::vector<bool> known_;
  std::vector<uint64_t>* reach_;
  uint64_t steps_ = 0;
  bool give_up_ = false;
};

ReachTable BuildReach(const ir::Program& program, const Engine& engine,
                      const SignalTable& table, const std::vector<int64_t>* params) {
  ReachTable out(engine.num_agents());
  std::optional<int64_t> cluster_m, cluster_n;
  if (params != nullptr) {
    ir::EvalEnv env;
    env.params = params->data();
    env.num_params = params->size();
    auto eval = [&](ir::ExprId id, int64_t fallback) -> std::optional<int64_t> {
      if (id == ir::kNoExpr) return fallback;
      ir::EvalFault fault;
      const int64_t v = ir::EvalFast(program, id, env, &fault);
      return fault.ok() ? std::optional<int64_t>(v) : std::nullopt;
    };
    cluster_m = eval(program.cluster_m, 1);
    cluster_n = eval(program.cluster_n, 1);
  }
  for (uint32_t a = 0; a < engine.num_agents(); ++a) {
    const engine::AgentInfo& info = engine.agent_info(a);
    // The fallback: the signal table's "local" and "remote" per barrier array (as arrivals
    // too: not told apart there).
    std::vector<uint64_t> coarse(program.barriers.size(), 0);
    for (size_t b = 0; b < program.barriers.size(); ++b) {
      const SignalReach& r = table[info.role][b];
      const uint32_t m = r.remote ? kAllCtas : r.local ? 1u << info.cta : 0;
      coarse[b] = m | (uint64_t{m} << 32);
    }
    out[a] = coarse;
    if (!cluster_m || !cluster_n || *cluster_m < 1 || info.cta >= 32) continue;
    // The engine's own builtins of the agent (a primary grid's agent counts its clusters).
    const ir::BuiltinValues& builtins = engine.agent_builtins(a);
    const ir::Role& role = program.roles[info.role];
    std::vector<uint64_t> exact(program.barriers.size(), 0);
    StaticRun run(program, *params, builtins, info.cta, role.num_vars, &exact);
    if (run.Run(role.body)) out[a] = exact;
  }
  return out;
}

bool IsMbarrierWait(WaitKind k) {
  return k == WaitKind::kMbarrierParity || k == WaitKind::kMbarrierToken;
}

// Can `signaller` signal barrier `barrier` of the waiter's CTA? Only agents whose operations on
// that barrier array can name the waiter's CTA (its own CTA's local operations, remote arrives
// and multicasts whose targets include it: BuildReach); while the barrier's current phase
// misses arrivals, only those that can arrive on it (bytes, an expect_tx, do not complete it).
bool CanSignal(const ReachTable& reach, const Engine& engine, uint32_t signaller,
               const BlockedAgent& b, const engine::AgentInfo& waiter) {
  const engine::AgentInfo& s = engine.agent_info(signaller);
  if (s.cluster != waiter.cluster || b.cta >= 32) return s.cluster == waiter.cluster;
  const uint32_t bit = b.cta + (b.state.pending_count > 0 ? 32 : 0);
  return (reach[signaller][b.barrier] >> bit) & 1u;
}

// Roles whose programs issue writes into buffers (loads, cp.async, st.async, plain writes):
// their waits on barriers they do not fill guard the reuse of a buffer ("empty" barriers).
std::vector<bool> ProducerRoles(const ir::Program& program) {
  std::vector<bool> out(program.roles.size(), false);
  struct Scan {
    static bool Block(const ir::Block& block) {
      for (const ir::Stmt& stmt : block) {
        if (const auto* f = std::get_if<ir::For>(&stmt.node)) {
          if (Block(f->body)) return true;
        } else if (const auto* i = std::get_if<ir::If>(&stmt.node)) {
          if (Block(i->then_body) || Block(i->else_body)) return true;
        } else if (const auto* op = std::get_if<ir::Op>(&stmt.node)) {
          if (std::holds_alternative<ir::TmaLoad>(*op) || std::holds_alternative<ir::BulkLoad>(*op) ||
              std::holds_alternative<ir::CpAsync>(*op) || std::holds_alternative<ir::StAsync>(*op)) {
            return true;
          }
          if (const auto* a = std::get_if<ir::BufferAccess>(op); a != nullptr && a->write) {
            return true;
          }
        }
      }
      return false;
    }
  };
  for (size_t r = 0; r < program.roles.size(); ++r) out[r] = Scan::Block(program.roles[r].body);
  return out;
}

// Per (cluster, cta, barrier, index): what happened in the current phase.
using BarrierKey = std::tuple<uint32_t, uint32_t, uint32_t, uint32_t>;

// Also fills `signalled`: agents that have signalled any barrier (arrive, expect_tx, issued a
// copy that completes on a barrier) at least once.
std::map<BarrierKey, PhaseStats> CollectPhaseStats(const Engine& engine,
                                                   const std::vector<trace::TraceEvent>& events,
                                                   std::vector<bool>& signalled) {
  std::map<BarrierKey, PhaseStats> stats;
  signalled.assign(engine.num_agents(), false);
  const auto& agents_per_cta = [&](uint32_t cluster, uint32_t cta, uint16_t agent) -> uint32_t {
    // Global agent id from (cluster, cta, index in CTA): agents are numbered in that order.
    for (uint32_t a = 0; a < engine.num_agents(); ++a) {
      const engine::AgentInfo& info = engine.agent_info(a);
      if (info.cluster == cluster && info.cta == cta && info.index_in_cta == agent) return a;
    }
    return UINT32_MAX;
  };
  for (const trace::TraceEvent& e : events) {
    auto kind = static_cast<EventKind>(e.kind);
    BarrierKey key{e.cluster, e.target_cta, e.object, e.index};
    if (e.agent != trace::kNoAgent &&
        (kind == EventKind::kArrive || kind == EventKind::kArriveExpectTx ||
         kind == EventKind::kExpectTx || kind == EventKind::kTmaIssue ||
         kind == EventKind::kBulkIssue || kind == EventKind::kStAsync ||
         kind == EventKind::kCpAsyncArrive)) {
      uint32_t a = agents_per_cta(e.cluster, e.cta, e.agent);
      if (a != UINT32_MAX) signalled[a] = true;
    }
    switch (kind) {
      case EventKind::kInit:
        stats[key] = PhaseStats{};
        break;
      case EventKind::kPhaseComplete: {
        PhaseStats& s = stats[key];
        uint32_t done = s.completed_phases + 1;
        s = PhaseStats{};
        s.completed_phases = done;
        break;
      }
      case EventKind::kArrive:
      case EventKind::kArriveExpectTx: {
        PhaseStats& s = stats[key];
        s.arrivals += e.value;
        if (kind == EventKind::kArriveExpectTx) s.tx_expected += e.value2;
        if (e.agent != trace::kNoAgent) {
          uint32_t a = agents_per_cta(e.cluster, e.cta, e.agent);
          if (a != UINT32_MAX &&
              std::find(s.arrived_agents.begin(), s.arrived_agents.end(), a) ==
                  s.arrived_agents.end()) {
            s.arrived_agents.push_back(a);
          }
        }
        break;
      }
      case EventKind::kCpAsyncArrive:
        // Without .noinc the issue raises the pending count by one and the deferred arrive
        // lowers it again (PTX ISA, cp.async.mbarrier.arrive): net zero. Undo the +1 that the
        // arrive event will add, so arrivals + pending stays the expected count.
        if (e.value == 0) stats[key].arrivals -= 1;
        break;
      case EventKind::kExpectTx:
        stats[key].tx_expected += e.value;
        break;
      case EventKind::kCompleteTx:
      case EventKind::kTmaDeliver:
        stats[key].tx_delivered += e.value;
        break;
      default:
        break;
    }
  }
  return stats;
}

std::string Plural(int64_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

// Which phase number a blocked mbarrier wait needs to complete.
uint32_t WantedPhase(const BlockedAgent& b) {
  if (b.wait == WaitKind::kMbarrierToken) return b.token_phase;
  // A parity wait blocks only when the parity names the current phase.
  return b.state.phase;
}

void Classify(const ir::Program& program, const Engine& engine,
              const std::vector<bool>& producer_roles, const std::vector<bool>& signalled,
              BlockedExplanation& x) {
  const BlockedAgent& b = x.blocked;
  if (!IsMbarrierWait(b.wait)) {
    x.cause = DeadlockCause::kNotMbarrier;
    std::ostringstream os;
    switch (b.wait) {
      case WaitKind::kClusterBarrier:
        os << b.arrived << " of " << b.expected
           << " agents of the cluster arrived on the cluster barrier; the others are blocked "
              "elsewhere and never reach barrier.cluster.arrive.";
        break;
      case WaitKind::kNamedBarrier:
        os << b.arrived << " of " << b.expected << " threads arrived on named barrier "
           << ir::NamedBarrierName(program, b.barrier)
           << "; the missing threads' agents are blocked or exited, or the thread count does not "
              "match the participants.";
        break;
      case WaitKind::kGridDependency:
        os << "griddepcontrol.wait returns only when the whole primary grid has completed, and "
           << b.expected - b.arrived << " of its " << b.expected
           << " agents never exit: they are blocked (see their own waits). A dependent grid "
              "cannot help the primary grid finish: nothing it does after griddepcontrol.wait "
              "can happen first, and launch_dependents does not promise the dependent runs "
              "before the primary grid completes.";
        break;
      default:
        os << "the async-group wait needs " << b.arrived
           << " outstanding copies to complete, and none can.";
        break;
    }
    x.cause_text = os.str();
    return;
  }
  const model::MbarrierState& st = b.state;
  const std::string bar = BarrierLabel(program, b.barrier, b.barrier_index, b.cta);
  const PhaseStats& ps = x.stats;
  std::ostringstream os;
  if (b.wait == WaitKind::kMbarrierParity && st.phase >= 1 && !st.preceding_phase_observed) {
    x.cause = DeadlockCause::kWaitSkipsPhase;
    os << AgentLabel(program, engine, b.agent) << " waits with parity " << b.parity << " on "
       << bar << ", which names phase " << st.phase << " (not complete), but phase "
       << st.phase - 1 << " completed and no wait has observed it: this wait skipped a phase. "
       << "Its parity is one phase ahead of the barrier's history (a parity from the wrong loop "
          "index, e.g. k & 1 where the ring of stages needs (k / STAGES) & 1, or the wrong start "
          "phase), so it waits for a phase that needs its own release of the skipped one.";
  } else if (st.pending_count == 0 && st.tx_count > 0) {
    x.cause = DeadlockCause::kTxOverExpected;
    os << "all arrivals of phase " << st.phase << " of " << bar << " are in, but "
       << st.tx_count << " tx bytes are still outstanding and no copy in flight will deliver "
       << "them: " << ps.tx_expected << " bytes were expected (expect_tx) in this phase and "
       << ps.tx_delivered << " delivered. The expect_tx byte count is larger than the bytes the "
       << "copies that complete on this barrier actually bring (e.g. multiplied by the cluster "
          "size, or counting a multicast slice as the whole tile).";
  } else if (st.pending_count == 0 && st.tx_count < 0) {
    x.cause = DeadlockCause::kTxOverDelivered;
    os << "all arrivals of phase " << st.phase << " of " << bar << " are in, but "
       << -st.tx_count << " more bytes were delivered than expected (tx-count " << st.tx_count
       << "): " << ps.tx_expected << " expected, " << ps.tx_delivered
       << " delivered. The expect_tx count is too small for the copies that complete here.";
  } else if (!x.could_signal_exited.empty() && x.could_signal_blocked.empty()) {
    x.cause = DeadlockCause::kSignallerExited;
    os << bar << " still needs " << Plural(st.pending_count, "arrival", "arrivals")
       << ", but every agent that signals it has exited: "
       << AgentList(program, engine, x.could_signal_exited) << ".";
  } else if (x.could_signal_blocked.empty() && x.could_signal_exited.empty() && x.self_signals) {
    x.cause = DeadlockCause::kWaitsOnOwnSignal;
    os << AgentLabel(program, engine, b.agent) << " is the only agent that signals " << bar
       << ", and it waits for phase " << WantedPhase(b) << ", which only its own later signals "
       << "could complete: " << bar << " completed "
       << Plural(ps.completed_phases, "phase", "phases")
       << " and has received " << ps.arrivals << " of " << st.expected_count
       << " arrivals since. The wait's "
       << (b.wait == WaitKind::kMbarrierToken ? "token" : "parity")
       << " names a phase ahead of what this agent has signalled (a parity off by one, e.g. "
          "parity 1 for the first phase of a barrier that starts empty).";
  } else if (x.could_signal_blocked.empty() && x.could_signal_exited.empty()) {
    x.cause = DeadlockCause::kNoSignaller;
    if (st.pending_count > 0) {
      // Bytes may land (a peer's multicast), but only an arrive-on completes missing arrivals.
      os << "no agent of the program ever arrives on " << bar
         << " (no arrive or cp.async.arrive on it reaches this CTA; copies' bytes and expect_tx "
            "do not count as arrivals), so the "
         << st.pending_count << " missing arrival(s) of its phase " << st.phase
         << " never come and the phase can never complete.";
    } else {
      os << "no agent of the program ever signals " << bar
         << " (no TMA/bulk load, st.async, complete_tx or expect_tx on it reaches this CTA), so "
            "its phase "
         << st.phase << " can never complete.";
    }
  } else if (st.phase == 0 && ps.arrivals == 0 && b.wait == WaitKind::kMbarrierParity &&
             b.parity == 0 && producer_roles[engine.agent_info(b.agent).role] && x.in_cycle &&
             !signalled[b.agent]) {
    // A producer blocked before it produced anything, on a barrier that never completed.
    x.cause = DeadlockCause::kWrongInitialPhase;
    os << AgentLabel(program, engine, b.agent) << " waits for phase 0 of " << bar
       << " (parity 0), which nobody has arrived on yet: the agents that release it ("
       << AgentList(program, engine, x.could_signal_blocked)
       << ") are themselves waiting for data that only this producer provides. Buffers start "
          "empty: a producer's first wait on a buffer-free barrier must use parity 1 (the phase "
          "before phase 0 counts as complete; CUTLASS starts the producer's PipelineState at "
          "phase 1).";
  } else if (ps.arrivals > 0 && st.pending_count > 0) {
    x.cause = DeadlockCause::kCountTooHigh;
    os << bar << " received " << ps.arrivals << " of " << st.expected_count
       << " arrivals in phase " << st.phase << " (" << st.pending_count
       << " pending), from " << Plural(static_cast<int64_t>(ps.arrived_agents.size()), "agent",
                                       "agents")
       << "; every agent that could still arrive is blocked ("
       << AgentList(program, engine, x.could_signal_blocked) << ")"
       << (x.all_signallers_arrived && !x.could_signal_blocked.empty()
               ? " and has already arrived in this phase, so no arrival of it is left to come"
               : "")
       << ". The init count " << st.expected_count
       << " is higher than the arrivals one phase receives, or an expected arrival is never made "
          "(check which CTAs actually signal this CTA, e.g. only its row and column of a "
          "multicast cluster).";
  } else {
    x.cause = DeadlockCause::kDownstream;
    os << bar << " has received " << ps.arrivals << " of " << st.expected_count
       << " arrivals in phase " << st.phase
       << "; the agents that would signal it are blocked themselves ("
       << AgentList(program, engine, x.could_signal_blocked) << ").";
  }
  x.cause_text = os.str();
}

int CauseRank(DeadlockCause c) {
  switch (c) {
    case DeadlockCause::kNoSignaller:
      // A static fact of the program, not of this run: a root whatever else went wrong (a wait
      // that skipped a phase elsewhere can be its consequence: extra arrivals sent to the wrong
      // CTA).
      return -2;
    case DeadlockCause::kWaitSkipsPhase:
      return -1;
    case DeadlockCause::kTxOverExpected:
    case DeadlockCause::kTxOverDelivered:
      return 0;
    case DeadlockCause::kSignallerExited:
    case DeadlockCause::kWaitsOnOwnSignal:
      return 1;
    case DeadlockCause::kCountTooHigh:
      return 2;
    case DeadlockCause::kWrongInitialPhase:
      return 3;
    case DeadlockCause::kNotMbarrier:
      return 4;
    case DeadlockCause::kDownstream:
      return 5;
    case DeadlockCause::kParityPassedAtOnce:
    case DeadlockCause::kMissedSignal:
    case DeadlockCause::kCountTooLow:
    case DeadlockCause::kUnknown:
      break;
  }
  return 6;
}

// Is `x` a root cause by itself: its barrier's phase cannot complete whatever the other blocked
// agents do next (their next arrivals, if any, belong to a later round of the protocol)?
bool IsRoot(const BlockedExplanation& x) {
  switch (x.cause) {
    case DeadlockCause::kWaitSkipsPhase:
    case DeadlockCause::kTxOverExpected:
    case DeadlockCause::kTxOverDelivered:
    case DeadlockCause::kNoSignaller:
    case DeadlockCause::kSignallerExited:
    case DeadlockCause::kWaitsOnOwnSignal:
      return true;
    case DeadlockCause::kCountTooHigh:
      return x.all_signallers_arrived;
    default:
      return false;
  }
}

// A count-too-high wait is only a symptom when some of the agents that have not arrived on its
// barrier in this phase are blocked on a root barrier: they would arrive once that one completed.
// Classify() sees one wait at a time; this pass sees them all. Only first-pass roots are used as
// upstream, so the result does not depend on the order of `blocked`.
void ReclassifyDownstream(const ir::Program& program, const Engine& engine,
                          std::vector<BlockedExplanation>& blocked) {
  std::map<uint32_t, const BlockedExplanation*> root_of_agent;
  for (const BlockedExplanation& x : blocked) {
    if (IsRoot(x)) root_of_agent[x.blocked.agent] = &x;
  }
  std::vector<std::pair<size_t, uint32_t>> changes;  // (index in blocked, upstream agent)
  for (size_t i = 0; i < blocked.size(); ++i) {
    const BlockedExplanation& x = blocked[i];
    if (x.cause != DeadlockCause::kCountTooHigh || x.all_signallers_arrived) continue;
    for (uint32_t a : x.could_signal_blocked) {
      const auto& arrived = x.stats.arrived_agents;
      if (std::find(arrived.begin(), arrived.end(), a) != arrived.end()) continue;
      if (root_of_agent.count(a)) {
        changes.emplace_back(i, a);
        break;
      }
    }
  }
  for (const auto& [i, upstream] : changes) {
    BlockedExplanation& x = blocked[i];
    const BlockedExplanation& root = *root_of_agent.at(upstream);
    const BlockedAgent& b = x.blocked;
    const model::MbarrierState& st = b.state;
    std::vector<uint32_t> missing;
    for (uint32_t a : x.could_signal_blocked) {
      const auto& arrived = x.stats.arrived_agents;
      if (std::find(arrived.begin(), arrived.end(), a) == arrived.end()) missing.push_back(a);
    }
    std::ostringstream os;
    os << BarrierLabel(program, b.barrier, b.barrier_index, b.cta) << " has received "
       << x.stats.arrivals << " of " << st.expected_count << " arrivals in phase " << st.phase
       << "; the agents that would still arrive in this phase ("
       << AgentList(program, engine, missing) << ") have not, because "
       << AgentLabel(program, engine, upstream) << " is blocked on "
       << BarrierLabel(program, root.blocked.barrier, root.blocked.barrier_index, root.blocked.cta)
       << ", whose phase " << root.blocked.state.phase << " can never complete ("
       << DeadlockCauseName(root.cause) << "). Fix that one first.";
    x.cause = DeadlockCause::kDownstream;
    x.upstream_agent = upstream;
    x.cause_text = os.str();
  }
}

std::string SourceLine(std::string_view source, int line) {
  if (line <= 0) return {};
  size_t pos = 0;
  for (int l = 1; l < line; ++l) {
    pos = source.find('\n', pos);
    if (pos == std::string_view::npos) return {};
    ++pos;
  }
  size_t end = source.find('\n', pos);
  std::string_view text = source.substr(pos, end == std::string_view::npos ? source.size() - pos
                                                                           : end - pos);
  size_t first = text.find_first_not_of(" \t");
  if (first == std::string_view::npos) return {};
  return std::string(text.substr(first));
}

}  // namespace

const char* DeadlockCauseName(DeadlockCause c) {
  switch (c) {
    case DeadlockCause::kUnknown: return "unknown";
    case DeadlockCause::kTxOverExpected: return "tx-over-expected";
    case DeadlockCause::kTxOverDelivered: return "tx-over-delivered";
    case DeadlockCause::kCountTooHigh: return "count-too-high";
    case DeadlockCause::kWrongInitialPhase: return "wrong-initial-phase";
    case DeadlockCause::kSignallerExited: return "signaller-exited";
    case DeadlockCause::kNoSignaller: return "no-signaller";
    case DeadlockCause::kDownstream: return "downstream";
    case DeadlockCause::kNotMbarrier: return "not-mbarrier";
    case DeadlockCause::kParityPassedAtOnce: return "parity-passed-at-once";
    case DeadlockCause::kWaitsOnOwnSignal: return "waits-on-own-signal";
    case DeadlockCause::kWaitSkipsPhase: return "wait-skips-a-phase";
    case DeadlockCause::kMissedSignal: return "missed-signal";
    case DeadlockCause::kCountTooLow: return "count-too-low";
  }
  return "unknown";
}

namespace deadlock_internal {

std::string AgentList(const ir::Program& program, const Engine& engine,
                      const std::vector<uint32_t>& agents, size_t max) {
  std::string out;
  for (size_t i = 0; i < agents.size() && i < max; ++i) {
    if (i) out += ", ";
    out += AgentLabel(program, engine, agents[i]);
  }
  if (agents.size() > max) out += ", and " + std::to_string(agents.size() - max) + " more";
  return out;
}

std::string WaitTarget(const ir::Program& program, const BlockedAgent& b) {
  switch (b.wait) {
    case WaitKind::kMbarrierParity:
      return BarrierLabel(program, b.barrier, b.barrier_index, b.cta) + " parity " +
             std::to_string(b.parity);
    case WaitKind::kMbarrierToken:
      return BarrierLabel(program, b.barrier, b.barrier_index, b.cta) + " token of phase " +
             std::to_string(b.token_phase);
    case WaitKind::kClusterBarrier:
      return "the cluster barrier (barrier.cluster.wait)";
    case WaitKind::kNamedBarrier:
      return "named barrier " + ir::NamedBarrierName(program, b.barrier) + " (bar.sync)";
    case WaitKind::kCpAsyncGroups:
      return "cp.async.wait_group " + std::to_string(b.pending);
    case WaitKind::kBulkGroups:
      return "cp.async.bulk.wait_group " + std::to_string(b.pending);
    case WaitKind::kGridDependency:
      return "the completion of the primary grid (griddepcontrol.wait)";
    case WaitKind::kNone:
      break;
  }
  return "nothing";
}

}  // namespace deadlock_internal

std::string AgentLabel(const ir::Program& program, const Engine& engine, uint32_t agent) {
  const engine::AgentInfo& a = engine.agent_info(agent);
  std::string out;
  if (engine.is_primary_agent(agent)) {
    // A primary grid of a programmatic dependent launch numbers its clusters from 0; in a chain
    // of more than two grids, `primary K` is the K-th `primary` block of the file (launch
    // order).
    const uint32_t grids = engine.num_grids();
    out = (grids > 2 ? "primary " + std::to_string(grids - a.grid) + " "
                     : std::string("primary ")) +
          "cluster " + std::to_string(a.cluster - engine.grid_first_cluster(a.grid)) + " ";
  } else if (engine.num_ctas() > engine.num_agents() || a.cluster > 0 ||
      engine.agent_info(static_cast<uint32_t>(engine.num_agents() - 1)).cluster > 0) {
    out = "cluster " + std::to_string(a.cluster) + " ";
  }
  out += "CTA " + std::to_string(a.cta) + " " + program.roles[a.role].name + "[" +
         std::to_string(a.index_in_role) + "]";
  return out;
}

std::string BarrierLabel(const ir::Program& program, uint32_t barrier, uint32_t index,
                         uint32_t cta) {
  std::string name = barrier < program.barriers.size() ? program.barriers[barrier].name
                                                        : "barrier#" + std::to_string(barrier);
  return name + "[" + std::to_string(index) + "] of CTA " + std::to_string(cta);
}

namespace {

// Fills the culprit of a wait `e` of `agent` that passed at once (both cases of FindEarlyPass).
void PassedAtOnce(const trace::TraceEvent& e, uint32_t agent, const SourceLocation& where,
                  DeadlockCulprit* c) {
  c->found = true;
  c->cause = DeadlockCause::kParityPassedAtOnce;
  c->agent = agent;
  c->barrier = e.object;
  c->index = e.index;
  c->cta = e.target_cta;
  c->parity = e.parity;
  c->where = where;
}

// The first parity wait (or true test_wait) of the run that passed because of its parity
// (DeadlockCulprit): on a barrier with no completed phase, where that is not the producer's start
// state; or, on a barrier whose last completed phase the same agent had already observed and
// signalled something since (it consumed one phase twice: its parity repeats the phase it has
// just released instead of naming the next one, e.g. a parity from an inner loop index).
DeadlockCulprit FindEarlyPass(const ir::Program& program, const Engine& engine,
                              const SignalTable& table, const std::vector<bool>& producers) {
  DeadlockCulprit c;
  std::vector<bool> carries_bytes(program.barriers.size(), false);
  for (const auto& role : table) {
    for (size_t b = 0; b < role.size(); ++b) carries_bytes[b] = carries_bytes[b] || role[b].bytes;
  }
  std::map<BarrierKey, uint32_t> completed;
  // Per (agent, barrier): the completed-phase count its last passing parity wait observed, and
  // the agent's signal count then.
  std::map<std::pair<uint32_t, BarrierKey>, std::pair<uint32_t, uint64_t>> last_seen;
  std::vector<uint64_t> signals(engine.num_agents(), 0);
  const PcMap pcs(program);
  const auto agent_of = [&](const trace::TraceEvent& e) {
    for (uint32_t a = 0; a < engine.num_agents(); ++a) {
      const engine::AgentInfo& info = engine.agent_info(a);
      if (info.cluster == e.cluster && info.cta == e.cta && info.index_in_cta == e.agent) return a;
    }
    return UINT32_MAX;
  };
  for (const trace::TraceEvent& e : engine.trace()) {
    const auto kind = static_cast<EventKind>(e.kind);
    const BarrierKey key{e.cluster, e.target_cta, e.object, e.index};
    if (e.agent != trace::kNoAgent &&
        (kind == EventKind::kArrive || kind == EventKind::kArriveExpectTx ||
         kind == EventKind::kExpectTx || kind == EventKind::kCompleteTx ||
         kind == EventKind::kTmaIssue || kind == EventKind::kBulkIssue ||
         kind == EventKind::kStAsync || kind == EventKind::kCpAsyncArrive)) {
      const uint32_t a = agent_of(e);
      if (a != UINT32_MAX) ++signals[a];
    }
    if (kind == EventKind::kInit) {
      completed[key] = 0;
    } else if (kind == EventKind::kPhaseComplete) {
      ++completed[key];
    } else if ((kind == EventKind::kWaitEnd || (kind == EventKind::kTestWait && e.value == 1)) &&
               e.agent != trace::kNoAgent && completed[key] > 0 &&
               e.object < program.barriers.size()) {
      const uint32_t agent = agent_of(e);
      if (agent == UINT32_MAX) continue;
      const auto* w = std::get_if<ir::MbarrierWait>(pcs.op(engine.agent_info(agent).role, e.pc));
      if (w == nullptr || w->parity == ir::kNoExpr) continue;  // token waits name their phase
      auto [it, fresh] = last_seen.try_emplace({agent, key}, completed[key], signals[agent]);
      if (fresh || it->second.first != completed[key] || it->second.second == signals[agent]) {
        it->second = {completed[key], signals[agent]};
        continue;
      }
      // The same completed phase again, after a signal of this agent: a stale pass.
      const uint32_t role = engine.agent_info(agent).role;
      PassedAtOnce(e, agent, pcs.where(role, e.pc), &c);
      const std::string bar = BarrierLabel(program, e.object, e.index, e.target_cta);
      std::ostringstream os;
      os << AgentLabel(program, engine, agent) << "'s "
         << (kind == EventKind::kTestWait ? "test_wait" : "wait") << " on " << bar
         << " with parity " << unsigned{e.parity} << " at " << c.where.ToString()
         << " passed at once: its parity names phase " << completed[key] - 1
         << ", the last completed one, which this agent had already observed (and acted on: it "
            "has signalled since). It consumed one phase twice instead of waiting for phase "
         << completed[key]
         << " (the PTX ISA parity test passes for the immediately preceding phase): its parity "
            "comes from the wrong counter (e.g. an inner loop index instead of the running count "
            "of phases), so the waiter runs ahead of the barrier's history and the run blocks "
            "later, far from here.";
      c.text = os.str();
      return c;
    } else if ((kind == EventKind::kWaitEnd || (kind == EventKind::kTestWait && e.value == 1)) &&
               e.agent != trace::kNoAgent && completed[key] == 0 &&
               e.object < program.barriers.size()) {
      const uint32_t agent = agent_of(e);
      if (agent == UINT32_MAX) continue;
      const uint32_t role = engine.agent_info(agent).role;
      if (!carries_bytes[e.object] && producers[role]) continue;  // a producer's start state
      PassedAtOnce(e, agent, pcs.where(role, e.pc), &c);
      const std::string bar = BarrierLabel(program, e.object, e.index, e.target_cta);
      std::ostringstream os;
      os << AgentLabel(program, engine, agent) << "'s "
         << (kind == EventKind::kTestWait ? "test_wait" : "wait") << " on " << bar
         << " with parity " << unsigned{e.parity} << " at " << c.where.ToString()
         << " passed at once: " << bar
         << " had completed no phase yet, and parity 1 names the phase before phase 0, which "
            "counts as complete (PTX ISA mbarrier.test_wait/try_wait: the immediately preceding "
            "phase). "
         << (carries_bytes[e.object]
                 ? "Nothing had landed in the buffers this barrier guards: "
                 : "Nobody had arrived on it: ")
         << "the waiter ran a round ahead of the barrier's history, and the phases of the "
            "barriers it signals no longer line up, so the run blocks later. A consumer's first "
            "wait on a barrier that starts empty must use parity 0 (parity (k / STAGES) & 1).";
      c.text = os.str();
      return c;
    }
  }
  return c;
}

// When no blocked wait is a root (every one waits downstream of another): the first blocked
// mbarrier wait W on X whose missing signaller B, itself blocked on Y, observed an earlier phase of
// Y after X's current phase began. B went once around its loop without signalling X, and now
// waits for Y's next phase, which the waiters on X would complete: B skipped its signal
// (DeadlockCause::kMissedSignal). The culprit's location is B's first signalling statement on
// X's barrier array (the one skipped), else the wait that observed Y.
DeadlockCulprit FindMissedSignal(const ir::Program& program, const Engine& engine,
                                 const std::vector<BlockedExplanation>& blocked,
                                 const std::vector<trace::TraceEvent>& events) {
  DeadlockCulprit c;
  const PcMap pcs(program);
  std::map<uint32_t, const BlockedExplanation*> by_agent;
  for (const BlockedExplanation& x : blocked) by_agent[x.blocked.agent] = &x;
  const auto agent_of = [&](const trace::TraceEvent& e) {
    for (uint32_t a = 0; a < engine.num_agents(); ++a) {
      const engine::AgentInfo& info = engine.agent_info(a);
      if (info.cluster == e.cluster && info.cta == e.cta && info.index_in_cta == e.agent) return a;
    }
    return UINT32_MAX;
  };
  for (const BlockedExplanation& x : blocked) {
    if (x.cause != DeadlockCause::kDownstream || !IsMbarrierWait(x.blocked.wait)) continue;
    const engine::AgentInfo& waiter = engine.agent_info(x.blocked.agent);
    const BarrierKey xkey{waiter.cluster, x.blocked.cta, x.blocked.barrier,
                          x.blocked.barrier_index};
    // Where X's current phase began: its init or its last completion.
    size_t begin = 0;
    for (size_t i = 0; i < events.size(); ++i) {
      const trace::TraceEvent& e = events[i];
      const auto k = static_cast<EventKind>(e.kind);
      if ((k == EventKind::kInit || k == EventKind::kPhaseComplete) &&
          BarrierKey{e.cluster, e.target_cta, e.object, e.index} == xkey) {
        begin = i;
      }
    }
    for (uint32_t b : x.could_signal_blocked) {
      const auto& arrived = x.stats.arrived_agents;
      if (std::find(arrived.begin(), arrived.end(), b) != arrived.end()) continue;
      auto y = by_agent.find(b);
      if (y == by_agent.end() || !IsMbarrierWait(y->second->blocked.wait)) continue;
      const engine::AgentInfo& bi = engine.agent_info(b);
      const BarrierKey ykey{bi.cluster, y->second->blocked.cta, y->second->blocked.barrier,
                            y->second->blocked.barrier_index};
      for (size_t i = begin; i < events.size(); ++i) {
        const trace::TraceEvent& e = events[i];
        const auto k = static_cast<EventKind>(e.kind);
        if (!(k == EventKind::kWaitEnd || (k == EventKind::kTestWait && e.value == 1)) ||
            e.agent == trace::kNoAgent ||
            BarrierKey{e.cluster, e.target_cta, e.object, e.index} != ykey || agent_of(e) != b) {
          continue;
        }
        // B's statement that signals X's array (the skipped one), else the observing wait.
        SourceLocation skipped = pcs.where(bi.role, e.pc);
        for (uint32_t pc = 0; pcs.stmt(bi.role, pc) != nullptr; ++pc) {
          const ir::Op* op = pcs.op(bi.role, pc);
          const auto* arrive = op ? std::get_if<ir::MbarrierArrive>(op) : nullptr;
          if (arrive != nullptr && arrive->bar.barrier == x.blocked.barrier) {
            skipped = pcs.where(bi.role, pc);
            break;
          }
        }
        const std::string xbar = BarrierLabel(program, x.blocked.barrier,
                                              x.blocked.barrier_index, x.blocked.cta);
        const std::string ybar =
            BarrierLabel(program, y->second->blocked.barrier, y->second->blocked.barrier_index,
                         y->second->blocked.cta);
        c.found = true;
        c.cause = DeadlockCause::kMissedSignal;
        c.agent = b;
        c.barrier = x.blocked.barrier;
        c.index = x.blocked.barrier_index;
        c.cta = x.blocked.cta;
        c.where = skipped;
        std::ostringstream os;
        os << AgentLabel(program, engine, b) << " observed phase "
           << y->second->blocked.state.phase - 1 << " of " << ybar << " at "
           << pcs.where(bi.role, e.pc).ToString()
           << " and went on to wait for its next phase, but never signalled " << xbar
           << " in between: phase " << x.blocked.state.phase << " of " << xbar
           << " still needs its arrival, and " << AgentLabel(program, engine, x.blocked.agent)
           << ", which waits there, is the one that would complete the next phase of " << ybar
           << ". Its signal on " << program.barriers[x.blocked.barrier].name << " ("
           << skipped.ToString()
           << ") is skipped on some path of that round (a condition, an early exit from the loop "
              "body) or missing.";
        c.text = os.str();
        return c;
      }
    }
  }
  return c;
}

}  // namespace

DeadlockReport DiagnoseDeadlock(const ir::Program& program, const Engine& engine,
                                const engine::RunResult& result,
                                const std::vector<trace::TraceEvent>* events,
                                const std::vector<int64_t>* params) {
  DeadlockReport report;
  const SignalTable table = BuildSignalTable(program);
  const ReachTable reach = BuildReach(program, engine, table, params);
  const std::vector<bool> producers = ProducerRoles(program);
  std::vector<bool> signalled;
  const auto stats = CollectPhaseStats(engine, events ? *events : engine.trace(), signalled);
  std::set<uint32_t> exited(result.deadlock.exited.begin(), result.deadlock.exited.end());

  // Wait-for graph over all agents.
  using Graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::directedS>;
  Graph g(engine.num_agents());

  for (const BlockedAgent& b : result.deadlock.blocked) {
    BlockedExplanation x;
    x.blocked = b;
    const engine::AgentInfo& waiter = engine.agent_info(b.agent);
    if (IsMbarrierWait(b.wait)) {
      auto it = stats.find(BarrierKey{waiter.cluster, b.cta, b.barrier, b.barrier_index});
      if (it != stats.end()) x.stats = it->second;
      x.self_signals = CanSignal(reach, engine, b.agent, b, waiter);
      for (uint32_t a = 0; a < engine.num_agents(); ++a) {
        if (a == b.agent || !CanSignal(reach, engine, a, b, waiter)) continue;
        if (exited.count(a)) {
          x.could_signal_exited.push_back(a);
        } else {
          x.could_signal_blocked.push_back(a);
          boost::add_edge(b.agent, a, g);
        }
      }
    } else {
      // Cluster and named barriers: every live agent of the same cluster (or CTA) that has not
      // arrived could release it; async-group waits depend on nobody (copies complete alone).
      if (b.wait == WaitKind::kGridDependency) {
        // The prerequisite grid's agents that have not exited: each must exit first.
        for (const BlockedAgent& other : result.deadlock.blocked) {
          if (engine.agent_info(other.agent).grid != waiter.grid + 1) continue;
          x.could_signal_blocked.push_back(other.agent);
          boost::add_edge(b.agent, other.agent, g);
        }
      }
      if (b.wait == WaitKind::kClusterBarrier || b.wait == WaitKind::kNamedBarrier) {
        for (const BlockedAgent& other : result.deadlock.blocked) {
          const engine::AgentInfo& o = engine.agent_info(other.agent);
          if (other.agent == b.agent || o.cluster != waiter.cluster) continue;
          if (b.wait == WaitKind::kNamedBarrier && o.cta != waiter.cta) continue;
          if (other.wait == b.wait) continue;  // already there
          x.could_signal_blocked.push_back(other.agent);
          boost::add_edge(b.agent, other.agent, g);
        }
      }
    }
    report.blocked.push_back(std::move(x));
  }

  std::vector<int> component(boost::num_vertices(g));
  int num = boost::strong_components(g, component.data());
  std::vector<std::vector<uint32_t>> members(num);
  for (uint32_t v = 0; v < component.size(); ++v) members[component[v]].push_back(v);
  for (auto& m : members) {
    if (m.size() > 1) report.cycles.push_back(m);
  }
  for (BlockedExplanation& x : report.blocked) {
    x.in_cycle = members[component[x.blocked.agent]].size() > 1;
    if (IsMbarrierWait(x.blocked.wait)) {
      const std::vector<uint32_t>& arrived = x.stats.arrived_agents;
      x.all_signallers_arrived = std::all_of(
          x.could_signal_blocked.begin(), x.could_signal_blocked.end(), [&](uint32_t a) {
            return std::find(arrived.begin(), arrived.end(), a) != arrived.end();
          });
    }
    Classify(program, engine, producers, signalled, x);
  }
  for (BlockedExplanation& x : report.blocked) {
    if (x.blocked.wait == WaitKind::kNamedBarrier) {
      x.cause_text += deadlock_internal::NamedBarrierParticipants(
          program, engine, result.deadlock, x.blocked, events ? *events : engine.trace());
    }
  }
  ReclassifyDownstream(program, engine, report.blocked);
  std::stable_sort(report.blocked.begin(), report.blocked.end(),
                   [](const BlockedExplanation& a, const BlockedExplanation& b) {
                     const int ra = CauseRank(a.cause);
                     const int rb = CauseRank(b.cause);
                     if (ra != rb) return ra < rb;
                     // Among count-too-high barriers, the one whose signallers all arrived first.
                     return a.all_signallers_arrived && !b.all_signallers_arrived;
                   });
  report.primary = 0;
  report.culprit = FindEarlyPass(program, engine, table, producers);
  if (!report.culprit.found && !report.blocked.empty() &&
      report.blocked.front().cause == DeadlockCause::kDownstream) {
    report.culprit =
        FindMissedSignal(program, engine, report.blocked, events ? *events : engine.trace());
  }
  if (report.culprit.found) {
    report.summary = std::string("P2001 deadlock: ") +
                     Plural(static_cast<int64_t>(report.blocked.size()), "agent is", "agents are") +
                     " blocked forever; most likely cause (" +
                     DeadlockCauseName(report.culprit.cause) + ") at " +
                     BarrierLabel(program, report.culprit.barrier, report.culprit.index,
                                  report.culprit.cta) +
                     (report.culprit.cause == DeadlockCause::kMissedSignal ? ", the signal at "
                                                                          : ", the wait at ") +
                     report.culprit.where.ToString();
  } else if (!report.blocked.empty()) {
    const BlockedExplanation& p = report.blocked.front();
    std::string where = IsMbarrierWait(p.blocked.wait)
                            ? BarrierLabel(program, p.blocked.barrier, p.blocked.barrier_index,
                                           p.blocked.cta)
                            : WaitTarget(program, p.blocked);
    report.summary = std::string("P2001 deadlock: ") +
                     Plural(static_cast<int64_t>(report.blocked.size()), "agent is", "agents are") +
                     " blocked forever; most likely cause (" + DeadlockCauseName(p.cause) +
                     ") at " + where;
  } else {
    report.summary = "P2001 deadlock: no agent can progress";
  }
  return report;
}

std::string FormatDeadlockReport(const DeadlockReport& report, const ir::Program& program,
                                 const Engine& engine, std::string_view source, size_t detailed) {
  std::ostringstream os;
  os << report.summary << "\n";
  if (report.culprit.found) {
    os << "\nMost likely cause: " << report.culprit.text << "\n";
    std::string line = SourceLine(source, report.culprit.where.line);
    if (!line.empty()) os << "       | " << line << "\n";
  } else if (!report.blocked.empty()) {
    os << "\nMost likely cause: " << report.blocked[report.primary].cause_text << "\n";
  }
  os << "\nBlocked agents (" << report.blocked.size() << "):\n";
  int n = 0;
  std::map<DeadlockCause, int> first_with_cause;
  std::vector<std::pair<std::string, DeadlockCause>> rest_keys;  // the others, by wait and cause
  std::map<std::pair<std::string, DeadlockCause>, std::vector<uint32_t>> rest;
  for (const BlockedExplanation& x : report.blocked) {
    const BlockedAgent& b = x.blocked;
    if (static_cast<size_t>(n) >= detailed) {
      const auto key = std::make_pair(b.where.ToString(), x.cause);
      if (rest.count(key) == 0) rest_keys.push_back(key);
      rest[key].push_back(b.agent);
      continue;
    }
    os << "  " << ++n << ". " << AgentLabel(program, engine, b.agent) << " waits on "
       << WaitTarget(program, b);
    if (!b.where.file.empty()) os << "  at " << b.where.ToString();
    os << "\n";
    std::string line = SourceLine(source, b.where.line);
    if (!line.empty()) os << "       | " << line << "\n";
    if (IsMbarrierWait(b.wait)) {
      const model::MbarrierState& st = b.state;
      os << "       " << BarrierLabel(program, b.barrier, b.barrier_index, b.cta) << ": phase "
         << st.phase << " (parity " << st.parity() << "), waiting for phase " << WantedPhase(b)
         << " to complete; " << (st.expected_count - st.pending_count) << " of "
         << st.expected_count << " arrivals received, " << st.pending_count << " pending; tx "
         << st.tx_count << " bytes outstanding (" << x.stats.tx_expected << " expected, "
         << x.stats.tx_delivered << " delivered this phase)\n";
      if (!x.stats.arrived_agents.empty()) {
        os << "       arrived this phase: " << AgentList(program, engine, x.stats.arrived_agents)
           << "\n";
      }
      if (!x.could_signal_blocked.empty()) {
        os << "       could still signal it, but blocked: "
           << AgentList(program, engine, x.could_signal_blocked) << "\n";
      }
      if (!x.could_signal_exited.empty()) {
        os << "       could have signalled it, but exited: "
           << AgentList(program, engine, x.could_signal_exited) << "\n";
      }
      if (x.could_signal_blocked.empty() && x.could_signal_exited.empty()) {
        os << (x.self_signals ? "       only this agent signals it\n"
                              : "       nothing in the program ever signals it in this CTA\n");
      }
    }
    os << "       cause: " << DeadlockCauseName(x.cause)
       << (x.in_cycle ? " (in a wait-for cycle)" : "");
    // Say each kind of cause in full once; later agents with the same cause point back to it.
    auto first = first_with_cause.find(x.cause);
    if (first == first_with_cause.end()) {
      first_with_cause[x.cause] = n;
      os << ": " << x.cause_text << "\n";
    } else {
      os << ", as explained at " << first->second << ".\n";
    }
  }
  if (!rest.empty()) {
    os << "  and " << report.blocked.size() - static_cast<size_t>(n)
       << " more (--full describes each):\n";
    for (const auto& key : rest_keys) {
      os << "    " << rest[key].size() << " at " << key.first << " ("
         << DeadlockCauseName(key.second) << "): " << AgentList(program, engine, rest[key]) << "\n";
    }
  }
  for (const auto& cycle : report.cycles) {
    os << "\nWait-for cycle (" << cycle.size() << " agents): "
       << AgentList(program, engine, cycle, 8) << "\n";
  }
  return os.str();
}

std::string WaitForGraphDot(const DeadlockReport& report, const ir::Program& program,
                            const Engine& engine) {
  std::set<uint32_t> nodes;
  std::set<uint32_t> in_cycle;
  for (const auto& c : report.cycles) in_cycle.insert(c.begin(), c.end());
  std::ostringstream os;
  os << "digraph wait_for {\n  rankdir=LR;\n  node [shape=box, fontname=\"monospace\"];\n";
  for (const BlockedExplanation& x : report.blocked) {
    nodes.insert(x.blocked.agent);
    for (uint32_t a : x.could_signal_blocked) nodes.insert(a);
  }
  std::map<uint32_t, const BlockedExplanation*> by_agent;
  for (const BlockedExplanation& x : report.blocked) by_agent[x.blocked.agent] = &x;
  for (uint32_t a : nodes) {
    os << "  a" << a << " [label=\"" << AgentLabel(program, engine, a);
    auto it = by_agent.find(a);
    if (it != by_agent.end()) os << "\\nwaits on " << WaitTarget(program, it->second->blocked);
    os << "\"" << (in_cycle.count(a) ? ", color=red" : "") << "];\n";
  }
  for (const BlockedExplanation& x : report.blocked) {
    for (uint32_t a : x.could_signal_blocked) {
      bool red = in_cycle.count(x.blocked.agent) && in_cycle.count(a);
      os << "  a" << x.blocked.agent << " -> a" << a << (red ? " [color=red]" : "") << ";\n";
    }
  }
  os << "}\n";
  return os.str();
}

}  // namespace parity::verifier
