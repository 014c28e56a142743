// The shared executor of the encoding (sim/ir/exec.h, the one the GPU kernel runs) against the
// CPU's definitions: ir::Eval on thousands of random expressions (faults included), and the
// engine on every bundled schedule (what each agent's walk of the encoded control code
// initialises, loads and uses, its variables at the end, and the pc of each op).
#include "sim/ir/exec.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "sim/engine/engine.h"
#include "sim/ir/encoding.h"
#include "sim/ir/eval.h"
#include "sim/ir/ir.h"
#include "sim/ir/parser.h"
#include "sim/trace/event.h"

namespace parity::exec {
namespace {

// ---------------------------------------------------------------------------------------------
// A layout read back from the encoding's header (the GPU runner computes the same fields;
// buffer offsets here are only consistent, not the runner's).
struct Prepared {
  ir::Program program;
  std::vector<int64_t> params;
  std::vector<uint32_t> words;
  Layout layout{};
};

// Evaluates a declaration expression (params substituted, no variables) at CTA 0.
int64_t EvalDecl(const Layout& l, uint32_t ref, int64_t none) {
  if (ref == kNone) return none;
  HostAgent a{};
  Layout decl = l;
  decl.role_num_vars[0] = 0;
  const int64_t v = EvalExpr(decl, a, ref);
  EXPECT_EQ(a.fault, kFaultNone);
  return v;
}

bool Prepare(const std::string& path, Prepared* out, std::string* why) {
  Expected<ir::Program> parsed = ir::ParseFile(path);
  if (!parsed.ok()) {
    *why = parsed.status().ToString();
    return false;
  }
  out->program = std::move(*parsed);
  Expected<std::vector<int64_t>> bound = ir::BindParams(out->program, {});
  if (!bound.ok()) {
    *why = bound.status().ToString();
    return false;
  }
  out->params = *bound;
  Expected<std::vector<uint32_t>> enc = ir::Encode(out->program, out->params);
  if (!enc.ok()) {
    *why = enc.status().ToString();
    return false;
  }
  out->words = std::move(*enc);
  const std::vector<uint32_t>& w = out->words;
  Layout& l = out->layout;
  l.words = w.data();
  l.pool = w[ir::kHdrPool];
  l.cluster_m = 1;
  l.cluster_n = 1;
  l.cluster_m = static_cast<uint32_t>(EvalDecl(l, w[ir::kHdrClusterM], 1));
  l.cluster_n = static_cast<uint32_t>(EvalDecl(l, w[ir::kHdrClusterN], 1));
  l.clusters = 1;
  l.clusters = static_cast<uint32_t>(EvalDecl(l, w[ir::kHdrClusters], 1));
  if (w[ir::kHdrNumBarriers] > kMaxBarrierDecls || w[ir::kHdrNumBuffers] > kMaxBufferDecls || w[ir::kHdrNumRoles] > kMaxRoles) {
    *why = "beyond the executor's limits";
    return false;
  }
  l.num_barriers = w[ir::kHdrNumBarriers];
  uint32_t first = 0;
  for (uint32_t b = 0; b < l.num_barriers; ++b) {
    l.barrier_first[b] = first;
    l.barrier_size[b] = static_cast<uint32_t>(EvalDecl(l, w[w[ir::kHdrBarriers] + 2 * b], 1));
    l.barrier_count_ref[b] = w[w[ir::kHdrBarriers] + 2 * b + 1];
    first += l.barrier_size[b];
  }
  l.num_buffers = w[ir::kHdrNumBuffers];
  uint32_t at = 8 * first;
  for (uint32_t b = 0; b < l.num_buffers; ++b) {
    // 5 words per buffer (encoding.h): stages, bytes, align, aliased buffer, alias offset.
    l.buffer_stages[b] = static_cast<uint32_t>(EvalDecl(l, w[w[ir::kHdrBuffers] + 5 * b], 1));
    l.buffer_slot_bytes[b] = static_cast<uint32_t>(EvalDecl(l, w[w[ir::kHdrBuffers] + 5 * b + 1], 0));
    const uint32_t alias = w[w[ir::kHdrBuffers] + 5 * b + 3];
    if (alias != ir::kEncodingNone) {
      l.buffer_offset[b] = l.buffer_offset[alias] +
                           static_cast<uint32_t>(EvalDecl(l, w[w[ir::kHdrBuffers] + 5 * b + 4], 0));
      continue;
    }
    l.buffer_offset[b] = at;
    at += l.buffer_stages[b] * l.buffer_slot_bytes[b];
  }
  l.num_maps = w[ir::kHdrNumMaps];
  // `global` buffers (header words 25, 26: per buffer its slots and bytes refs).
  if (w[ir::kHdrNumGlobals] > kMaxGlobalDecls) {
    *why = "more global buffers than the executor holds";
    return false;
  }
  l.num_globals = w[ir::kHdrNumGlobals];
  for (uint32_t g = 0; g < l.num_globals; ++g) {
    l.global_slots[g] = static_cast<uint32_t>(EvalDecl(l, w[w[ir::kHdrGlobals] + 2 * g], 1));
    l.global_slot_bytes[g] = static_cast<uint32_t>(EvalDecl(l, w[w[ir::kHdrGlobals] + 2 * g + 1], 0));
  }
  uint32_t o = w[ir::kHdrRoles];
  for (uint32_t r = 0; r < w[ir::kHdrNumRoles]; ++r) {
    l.role_threads[r] = static_cast<uint32_t>(EvalDecl(l, w[o + 1], 1));
    l.role_num_vars[r] = w[o + 3];
    l.role_body_begin[r] = o + 5;
    o += 5 + w[o + 4];
    if (l.role_num_vars[r] > kMaxVars) {
      *why = "more variables than the executor holds";
      return false;
    }
  }
  FindRoleCode(w.data(), w[ir::kHdrNumRoles], l.role_code);
  return true;
}

// ---------------------------------------------------------------------------------------------
// Checked arithmetic against the compiler's builtins.

TEST(ExecArithmeticTest, OverflowChecksMatchTheCompilersBuiltins) {
  std::mt19937_64 rng(7);
  const int64_t edges[] = {0, 1, -1, 2, -2, 3, INT64_MAX, INT64_MIN, INT64_MAX - 1,
                           INT64_MIN + 1, int64_t{1} << 31, -(int64_t{1} << 31),
                           int64_t{1} << 32, 3037000499, 3037000500, -3037000500};
  auto pick = [&]() -> int64_t {
    switch (rng() % 4) {
      case 0: return edges[rng() % std::size(edges)];
      case 1: return static_cast<int64_t>(rng());
      case 2: return static_cast<int64_t>(rng()) >> (rng() % 64);
      default: return static_cast<int64_t>(rng() % 2001) - 1000;
    }
  };
  int overflows[3] = {};
  for (int k = 0; k < 200000; ++k) {
    const int64_t a = pick(), b = pick();
    int64_t want = 0, got = 0;
    const bool add = __builtin_add_overflow(a, b, &want);
    EXPECT_EQ(ir::AddOverflows(a, b, &got), add) << a << " + " << b;
    if (!add) {
      EXPECT_EQ(got, want);
    }
    const bool sub = __builtin_sub_overflow(a, b, &want);
    EXPECT_EQ(ir::SubOverflows(a, b, &got), sub) << a << " - " << b;
    if (!sub) {
      EXPECT_EQ(got, want);
    }
    const bool mul = __builtin_mul_overflow(a, b, &want);
    EXPECT_EQ(ir::MulOverflows(a, b, &got), mul) << a << " * " << b;
    if (!mul) {
      EXPECT_EQ(got, want);
    }
    const unsigned __int128 p = static_cast<unsigned __int128>(static_cast<uint64_t>(a)) *
                                static_cast<uint64_t>(b);
    EXPECT_EQ(ir::MulHi64(static_cast<uint64_t>(a), static_cast<uint64_t>(b)),
              static_cast<uint64_t>(p >> 64));
    overflows[0] += add;
    overflows[1] += sub;
    overflows[2] += mul;
  }
  for (int n : overflows) EXPECT_GT(n, 1000);  // every check is exercised both ways
}

// ---------------------------------------------------------------------------------------------
// Random expressions: the encoded form under the shared evaluator vs ir::Eval on the IR.

constexpr uint32_t kRandomVars = 4;

class ExprGen {
 public:
  ExprGen(ir::Program* p, std::mt19937_64* rng) : p_(p), rng_(rng) {}

  ir::ExprId Gen(int depth) {
    ir::Expr e;
    const uint32_t pick = depth <= 0 ? Next() % 3 : Next() % 10;
    switch (pick) {
      case 0: e.kind = ir::Expr::Kind::kConst; e.value = Value(); break;
      case 1: e.kind = ir::Expr::Kind::kVar; e.index = Next() % kRandomVars; break;
      case 2: e.kind = ir::Expr::Kind::kBuiltin; e.op = Next() % ir::kNumBuiltinCodes; break;
      case 3:
        e.kind = ir::Expr::Kind::kUnary;
        e.op = Next() % 3;
        e.a = Gen(depth - 1);
        break;
      case 4:
        e.kind = ir::Expr::Kind::kSelect;
        e.a = Gen(depth - 1);
        e.b = Gen(depth - 1);
        e.c = Gen(depth - 1);
        break;
      default:
        e.kind = ir::Expr::Kind::kBinary;
        e.op = Next() % 20;
        e.a = Gen(depth - 1);
        e.b = Gen(depth - 1);
        break;
    }
    e.where.line = 1;
    p_->exprs.push_back(e);
    return static_cast<ir::ExprId>(p_->exprs.size() - 1);
  }

  int64_t Value() {
    static const int64_t kEdges[] = {0, 1, -1, 2, 63, 64, -64, 62, INT64_MAX, INT64_MIN,
                                     INT64_MAX / 2 + 1, INT64_MIN / 2, 3037000500, -3037000500,
                                     int64_t{1} << 32};
    switch (Next() % 4) {
      case 0: return kEdges[Next() % std::size(kEdges)];
      case 1: return static_cast<int64_t>(Next());
      default: return static_cast<int64_t>(Next() % 129) - 64;
    }
  }

 private:
  uint64_t Next() { return (*rng_)(); }
  ir::Program* p_;
  std::mt19937_64* rng_;
};

TEST(ExecEvalTest, RandomExpressionsEvaluateAsIrEvalIncludingFaults) {
  std::mt19937_64 rng(2026);
  std::map<ir::EvalError, int> seen;
  int checked = 0;
  for (int round = 0; round < 300; ++round) {
    ir::Program p;
    p.file = "random.pipe";
    p.name = "random";
    ExprGen gen(&p, &rng);
    ir::Role role;
    role.name = "r";
    role.num_vars = kRandomVars + 1;
    for (uint32_t v = 0; v <= kRandomVars; ++v) role.var_names.push_back("v" + std::to_string(v));
    std::vector<ir::ExprId> roots;
    for (int k = 0; k < 20; ++k) {
      roots.push_back(gen.Gen(1 + static_cast<int>(rng() % 5)));
      ir::Stmt s;
      s.node = ir::Let{kRandomVars, roots.back()};  // into a slot no expression reads
      role.body.push_back(s);
    }
    p.roles.push_back(role);
    Expected<std::vector<uint32_t>> enc = ir::Encode(p, {});
    ASSERT_TRUE(enc.ok()) << enc.status().ToString();
    const std::vector<uint32_t>& w = *enc;
    Layout l{};
    l.words = w.data();
    l.pool = w[ir::kHdrPool];
    l.cluster_m = 1 + static_cast<uint32_t>(rng() % 4);
    l.cluster_n = 1 + static_cast<uint32_t>(rng() % 4);
    l.clusters = 3 + static_cast<uint32_t>(rng() % 5);
    l.role_num_vars[0] = kRandomVars + 1;
    const uint32_t body = w[ir::kHdrRoles] + 5, body_end = body + w[w[ir::kHdrRoles] + 4];

    HostAgent a{};
    a.cta = static_cast<uint32_t>(rng() % (l.cluster_m * l.cluster_n));
    a.cta_x = a.cta % l.cluster_m;
    a.cta_y = a.cta / l.cluster_m;
    a.cluster = static_cast<uint32_t>(rng() % 3);
    a.slot.index_in_role = static_cast<uint16_t>(rng() % 4);
    for (uint32_t v = 0; v < kRandomVars; ++v) a.vars[v] = gen.Value();
    const ir::BuiltinValues builtins = ir::MakeBuiltins(a.cta, a.cta_x, a.cta_y, l.cluster_m,
                                                        l.cluster_n, a.cluster,
                                                        a.slot.index_in_role, l.clusters);
    ir::EvalEnv env;
    env.vars = a.vars;
    env.num_vars = kRandomVars + 1;
    env.builtins = &builtins;

    size_t k = 0;
    for (uint32_t pc = body; pc < body_end; pc += w[pc] >> 8, ++k) {
      ASSERT_EQ(w[pc] & 0xffu, static_cast<uint32_t>(ir::EncodedStmtKind::kLet));
      ASSERT_LT(k, roots.size());
      ir::EvalFault want;
      const int64_t want_value = ir::EvalFast(p, roots[k], env, &want);
      HostAgent b = a;
      const int64_t got = EvalExpr(l, b, w[pc + 2]);
      ++checked;
      ++seen[want.error];
      if (want.ok()) {
        EXPECT_EQ(b.fault, kFaultNone) << "expression " << k << " of round " << round;
        EXPECT_EQ(got, want_value) << "expression " << k << " of round " << round;
      } else {
        EXPECT_EQ(b.fault, kFaultEval) << "expression " << k << " of round " << round;
        EXPECT_EQ(b.eval_error, static_cast<uint32_t>(want.error))
            << "expression " << k << " of round " << round;
        EXPECT_EQ(got, 0);
      }
    }
    EXPECT_EQ(k, roots.size());
  }
  EXPECT_EQ(checked, 300 * 20);
  // Every outcome occurs often enough that dropping any one check fails the comparison.
  EXPECT_GT(seen[ir::EvalError::kNone], 500);
  EXPECT_GT(seen[ir::EvalError::kOverflow], 100);
  EXPECT_GT(seen[ir::EvalError::kDivByZero], 20);
  EXPECT_GT(seen[ir::EvalError::kShiftRange], 100);
}

// ---------------------------------------------------------------------------------------------
// Every bundled schedule: the shared walk of each agent against the engine's run.

std::vector<std::string> BundledSchedules() {
  std::vector<std::string> out;
  for (const char* dir : {"pipelines", "sim/examples", "litmus", "tests/gpu/schedules"}) {
    if (!std::filesystem::exists(dir)) continue;
    for (const auto& e : std::filesystem::recursive_directory_iterator(
             dir, std::filesystem::directory_options::follow_directory_symlink)) {
      if (e.path().extension() == ".pipe") out.push_back(e.path().string());
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

// What an agent's op did that both sides report alike: (event kind, object, index, value,
// value2, pc) of its init, tma.load issue, use/write and use/write of a `global` buffer. The pc
// is the instruction number of the engine's compilation, which the encoding's control code
// carries: the same on both sides by construction, and checked here.
using OpRecord = std::tuple<uint32_t, uint32_t, uint32_t, int64_t, int64_t, uint32_t>;

struct AgentWalk {
  std::vector<OpRecord> ops;
  bool ended = false;      // reached its end (or exit) without a fault
  bool truncated = false;  // stopped at an op whose result only a run decides
  std::vector<int64_t> vars;
  std::vector<uint32_t> token_vars;  // slots that receive state tokens (only a run writes them)
};

// An agent of a primary grid (programmatic dependent launch) walks with its own grid's cluster
// id and count, as the GPU launches it: `primary_first` is the engine's first primary cluster.
AgentWalk WalkAgent(const Layout& layout, const engine::AgentInfo& info, uint32_t primary_first,
                    uint32_t num_clusters) {
  AgentWalk out;
  const bool primary = info.cluster >= primary_first;
  Layout l = layout;
  l.clusters = primary ? num_clusters - primary_first : primary_first;
  HostAgent a{};
  a.cta = info.cta;
  a.cta_x = info.cta % l.cluster_m;
  a.cta_y = info.cta / l.cluster_m;
  a.cluster = primary ? info.cluster - primary_first : info.cluster;
  a.slot.role = static_cast<uint16_t>(info.role);
  a.slot.index_in_role = static_cast<uint16_t>(info.index_in_role);
  a.slot.index_in_cta = static_cast<uint16_t>(info.index_in_cta);
  Walk k = StartWalk(l, a);
  while (true) {
    const int adv = NextOp(l, a, k);
    if (adv != kAtOp) {
      out.ended = adv == kEnded;
      break;
    }
    const OpKind op = OpAt(l, k);
    const uint32_t* f = l.words + k.rec + 1;
    const uint32_t spc = k.rec - k.body;
    const uint32_t pc = k.pc++;
    if (op == OpKind::kExit) {
      out.ended = true;
      break;
    }
    const bool hardware_value =
        (op == OpKind::kMbarrierWait && f[5] != 0) || op == OpKind::kMbarrierPendingCount ||
        op == OpKind::kGlobalReadback;
    if (op == OpKind::kMbarrierArrive && f[7] < kMaxVars) out.token_vars.push_back(f[7]);
    if (hardware_value) {
      out.truncated = true;
      break;
    }
    if (op != OpKind::kMbarrierInit && op != OpKind::kTmaLoad && op != OpKind::kBufferAccess &&
        op != OpKind::kGlobalAccess) {
      continue;
    }
    ResolvedOp r{};
    if (Resolve(l, a, op, f, spc, &r) != kResolved) break;
    switch (op) {
      case OpKind::kMbarrierInit:
        out.ops.emplace_back(static_cast<uint32_t>(trace::EventKind::kInit), r.barrier.b.bar,
                             r.barrier.b.index, static_cast<int32_t>(r.barrier.value), 0, pc);
        break;
      case OpKind::kTmaLoad:
        out.ops.emplace_back(static_cast<uint32_t>(trace::EventKind::kTmaIssue), r.tma_load.map,
                             r.tma_load.slot, 0, 0, pc);
        break;
      case OpKind::kGlobalAccess:
        out.ops.emplace_back(static_cast<uint32_t>(r.global_access.write != 0
                                                       ? trace::EventKind::kGlobalWrite
                                                       : trace::EventKind::kGlobalUse),
                             r.global_access.global, r.global_access.slot,
                             static_cast<int32_t>(r.global_access.bytes),
                             static_cast<int32_t>(r.global_access.offset), pc);
        break;
      default:
        out.ops.emplace_back(static_cast<uint32_t>(r.access.write != 0 ? trace::EventKind::kWrite
                                                                       : trace::EventKind::kUse),
                             r.access.buf, r.access.slot, static_cast<int32_t>(r.access.bytes),
                             static_cast<int32_t>(r.access.offset), pc);
        break;
    }
  }
  out.vars.assign(a.vars, a.vars + l.role_num_vars[a.slot.role]);
  return out;
}

// The OpRecords of agent `info`'s events in the engine's trace.
std::vector<OpRecord> EngineOps(const engine::Engine& e, const engine::AgentInfo& info) {
  std::vector<OpRecord> ran;
  for (const trace::TraceEvent& ev : e.trace()) {
    if (ev.cluster != info.cluster || ev.cta != info.cta || ev.agent != info.index_in_cta) {
      continue;
    }
    const auto kind = static_cast<trace::EventKind>(ev.kind);
    if (kind == trace::EventKind::kInit) {
      ran.emplace_back(ev.kind, ev.object, ev.index, ev.value, 0, ev.pc);
    } else if (kind == trace::EventKind::kTmaIssue) {
      ran.emplace_back(ev.kind, ev.object, ev.index, 0, 0, ev.pc);
    } else if (kind == trace::EventKind::kUse || kind == trace::EventKind::kWrite ||
               kind == trace::EventKind::kGlobalUse || kind == trace::EventKind::kGlobalWrite) {
      ran.emplace_back(ev.kind, ev.object, ev.index, ev.value, ev.value2, ev.pc);
    }
  }
  return ran;
}

TEST(ExecScheduleTest, EveryBundledScheduleWalksAsTheEngineRunsIt) {
  const std::vector<std::string> files = BundledSchedules();
  ASSERT_GT(files.size(), 40u);
  int compared = 0, agents_compared = 0, full_agents = 0, ops_compared = 0;
  for (const std::string& file : files) {
    SCOPED_TRACE(file);
    Prepared prep;
    std::string why;
    if (!Prepare(file, &prep, &why)) continue;  // bad-input examples; their tests cover them
    Expected<engine::Engine> created = engine::Engine::Create(prep.program, prep.params);
    if (!created.ok()) continue;
    engine::Engine& e = *created;
    const engine::RunResult r = e.Run();
    if (r.outcome == engine::Outcome::kError) continue;
    ++compared;
    std::vector<bool> exited(e.num_agents(), r.outcome == engine::Outcome::kCompleted);
    for (uint32_t x : r.deadlock.exited) exited[x] = true;
    for (uint32_t g = 0; g < e.num_agents(); ++g) {
      const engine::AgentInfo& info = e.agent_info(g);
      // Every cluster: trip counts may depend on cluster_id, num_clusters and grid_cta.
      SCOPED_TRACE("agent " + std::to_string(g));
      const AgentWalk walk =
          WalkAgent(prep.layout, info, e.primary_first_cluster(),
                    e.num_ctas() / (prep.layout.cluster_m * prep.layout.cluster_n));
      const std::vector<OpRecord> ran = EngineOps(e, info);
      ++agents_compared;
      ops_compared += static_cast<int>(std::min(ran.size(), walk.ops.size()));
      if (exited[g] && walk.ended && !walk.truncated) {
        // The whole run: the same ops and the same variables at the end.
        ++full_agents;
        EXPECT_EQ(walk.ops, ran);
        const int64_t* vars = e.agent_vars(g);
        std::vector<int64_t> engine_vars(vars, vars + e.agent_num_vars(g));
        std::vector<int64_t> walk_vars = walk.vars;
        for (uint32_t t : walk.token_vars) {
          if (t < engine_vars.size() && t < walk_vars.size()) engine_vars[t] = walk_vars[t] = 0;
        }
        EXPECT_EQ(walk_vars, engine_vars);
      } else {
        // A run cut short (a violation, a deadlock, a value only hardware decides): the
        // shorter of the two is where the other one went.
        const size_t n = std::min(ran.size(), walk.ops.size());
        EXPECT_TRUE(std::equal(ran.begin(), ran.begin() + n, walk.ops.begin()));
      }
    }
  }
  EXPECT_GT(compared, 40);
  EXPECT_GT(full_agents, 100);
  EXPECT_GT(ops_compared, 1000);
  std::printf("compared %d schedules, %d agents (%d whole runs), %d ops\n", compared,
              agents_compared, full_agents, ops_compared);
}

// A `while` that still holds at its bound: the shared walk faults with kFaultBound at the same
// pass as the engine's engine.while-bound, after the same ops; a `break` leaves only its loop.
TEST(ExecScheduleTest, WhileBoundFaultsWhereTheEngineStops) {
  Prepared prep;
  std::string why;
  ASSERT_TRUE(Prepare("tests/gpu/schedules/while_bound.pipe", &prep, &why)) << why;
  Expected<engine::Engine> created = engine::Engine::Create(prep.program, prep.params);
  ASSERT_TRUE(created.ok());
  const engine::RunResult r = created->Run();
  ASSERT_EQ(r.outcome, engine::Outcome::kError);
  EXPECT_EQ(r.error.rule(), "engine.while-bound");
  size_t engine_arrives = 0;
  for (const trace::TraceEvent& ev : created->trace()) {
    engine_arrives += ev.kind == static_cast<uint8_t>(trace::EventKind::kArrive);
  }
  HostAgent a{};
  Walk k = StartWalk(prep.layout, a);
  size_t arrives = 0;
  int adv = kAtOp;
  while ((adv = NextOp(prep.layout, a, k)) == kAtOp) {
    arrives += OpAt(prep.layout, k) == OpKind::kMbarrierArrive;
    ++k.pc;
  }
  EXPECT_EQ(adv, kFaulted);
  EXPECT_EQ(a.fault, kFaultBound);
  EXPECT_EQ(arrives, 16u);  // the bound: 16 passes, one arrive each
  EXPECT_EQ(engine_arrives, 16u);
}

// Loops and ifs nested 20 deep (the encoding's own walk once stopped at 12): the walk of the
// control code reaches the same uses, with the same pcs and variables, as the engine.
TEST(ExecScheduleTest, DeepNestingWalksAsTheEngineRunsIt) {
  std::string text = "schedule deep\nbuffer a[4] bytes 64\nrole r {\n  let s = 0\n";
  for (int d = 0; d < 20; ++d) {
    text += d % 2 == 0 ? "for i" + std::to_string(d) + " in 0 .. 2 {\n"
                       : "if i" + std::to_string(d - 1) + " == 1 || s < 200 {\n";
  }
  text += "let s = s + 1\nuse a[s % 4] bytes 16\n";
  for (int d = 0; d < 20; ++d) text += d == 10 ? "} else { write a[0] }\n" : "}\n";
  text += "}\n";
  const std::string path = std::string(std::getenv("TEST_TMPDIR")) + "/deep.pipe";
  std::FILE* f = std::fopen(path.c_str(), "w");
  ASSERT_NE(f, nullptr);
  std::fputs(text.c_str(), f);
  std::fclose(f);
  Prepared prep;
  std::string why;
  ASSERT_TRUE(Prepare(path, &prep, &why)) << why;
  Expected<engine::Engine> created = engine::Engine::Create(prep.program, prep.params);
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  engine::Engine& e = *created;
  ASSERT_EQ(e.Run().outcome, engine::Outcome::kCompleted);
  const AgentWalk walk = WalkAgent(prep.layout, e.agent_info(0), e.primary_first_cluster(), 1);
  EXPECT_TRUE(walk.ended);
  EXPECT_GT(walk.ops.size(), 100u);
  EXPECT_EQ(walk.ops, EngineOps(e, e.agent_info(0)));
  const int64_t* vars = e.agent_vars(0);
  EXPECT_EQ(walk.vars, std::vector<int64_t>(vars, vars + e.agent_num_vars(0)));
}

// ---------------------------------------------------------------------------------------------
// The GPU's trace packing: the words of PackTraceEvent are the bytes of the same TraceEvent.

TEST(TraceEventPackTest, WordsAreTheStructsBytes) {
  std::mt19937_64 rng(11);
  for (int k = 0; k < 10000; ++k) {
    trace::TraceEvent e{};
    e.time = rng();
    e.kind = static_cast<uint8_t>(rng());
    e.flags = static_cast<uint8_t>(rng());
    e.cluster = static_cast<uint16_t>(rng());
    e.cta = static_cast<uint8_t>(rng());
    e.target_cta = static_cast<uint8_t>(rng());
    e.agent = static_cast<uint16_t>(rng());
    e.object = static_cast<uint16_t>(rng());
    e.index = static_cast<uint16_t>(rng());
    e.value = static_cast<int32_t>(rng());
    e.value2 = static_cast<int32_t>(rng());
    e.phase = static_cast<uint8_t>(rng());
    e.parity = static_cast<uint8_t>(rng());
    e.pc = static_cast<uint16_t>(rng());
    // Wider arguments than the fields: the packing keeps each field's low bits only.
    const uint32_t junk = static_cast<uint32_t>(rng()) << 16;
    const trace::TraceEventWords w = trace::PackTraceEvent(
        e.time, static_cast<trace::EventKind>(e.kind), e.flags | junk,
        e.cluster | junk, e.cta | junk, e.target_cta | junk,
        e.agent | junk, e.object | junk, e.index | junk, e.value, e.value2,
        e.phase | junk, e.parity | junk, e.pc | junk);
    trace::TraceEvent back;
    static_assert(sizeof(w) == sizeof(back));
    std::memcpy(&back, &w, sizeof(back));
    ASSERT_EQ(std::memcmp(&back, &e, sizeof(e)), 0) << "event " << k;
  }
}

}  // namespace
}  // namespace parity::exec
