// Engine::Create: binds the program's declarations, lays out the state block and compiles
// each role to its flat instruction list (the Code every copy of the engine shares).
#include "sim/engine/engine.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cassert>
#include <cstddef>
#include <cstring>
#include <deque>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <variant>

#include "sim/common/bytes.h"
#include "sim/common/check.h"
#include "sim/engine/code.h"
#include "sim/model/tensor_map.h"
#include "sim/model/tma.h"

namespace parity::engine {

// ---------------------------------------------------------------------------------------------
// Create.

namespace {

Expected<int64_t> EvalDecl(const ir::Program& p, const std::vector<int64_t>& params,
                           ir::ExprId id, const ir::BuiltinValues* builtins, int64_t dflt) {
  if (id == ir::kNoExpr) return dflt;
  ir::EvalEnv env;
  env.params = params.data();
  env.num_params = params.size();
  env.builtins = builtins;
  return ir::Eval(p, id, env);
}

Status DeclError(const ir::Program& p, const std::string& rule, const std::string& msg,
                 const SourceLocation& where) {
  SourceLocation w = where;
  if (w.file.empty()) w.file = p.file;
  return Status(rule, msg, w);
}

std::optional<model::TmaInterleave> ParseInterleave(const std::string& s) {
  if (s == "none") return model::TmaInterleave::kNone;
  if (s == "16B") return model::TmaInterleave::k16B;
  if (s == "32B") return model::TmaInterleave::k32B;
  return std::nullopt;
}

using Code = Engine::Code;

// The steps of Engine::Create that turn the program into the shared Code, in the order they
// must run (each reads what the earlier ones filled in); a Status step stops Create at its first
// declaration error.
class CodeBuilder {
 public:
  CodeBuilder(const ir::Program& program, Code& c)
      : program_(program), c_(c), top_{program.file, 0, 0} {}
  // The cluster shape and the grids (params only): the schedule's own and the primary grids
  // of a chain of programmatic dependent launches.
  Status Shape();
  // Shared buffers: each slot's CTA address.
  Status Buffers();
  // Mbarrier arrays: their slots in a CTA and every slot's declared count.
  Status Barriers();
  // `global` buffers: their sizes.
  Status Globals();
  // Tensor maps, validated as cuTensorMapEncodeTiled would.
  Status TensorMaps();
  // Each role's compiled code and the facts read from it.
  Status Roles();
  // The agents of every CTA, their builtins and variable slots.
  Status Agents();
  // Refuses `readback` programs whose data the model would not name.
  Status Readback();
  // What the assertions need checked: `landed` reads, `forall` properties.
  void Assertions();
  // Agent-invariant expressions and each expression's fast-path class.
  void StaticExpressions();
  // Variable slots of all agents (after Agents).
  uint32_t var_total() const { return var_total_; }

 private:
  // A declaration's own location (file:line:col), or the file's.
  SourceLocation DeclAt(ir::ExprId id) const {
    return id < program_.exprs.size() ? program_.exprs[id].where : top_;
  }
  // The grid of cluster `cluster` (Code::grid_cluster).
  uint32_t GridOfCluster(uint32_t cluster) const {
    uint32_t g = 0;
    while (cluster >= c_.grid_cluster[g + 1]) ++g;
    return g;
  }
  // Builtins of CTA (cluster, rank) with agent `agent`, for per-CTA declarations. A
  // primary-grid CTA's cluster_id and num_clusters are those of its own grid.
  ir::BuiltinValues CtaBuiltins(uint32_t cluster, uint32_t rank, uint32_t agent) const {
    const uint32_t g = GridOfCluster(cluster);
    return ir::MakeBuiltins(rank, rank % c_.cluster_m, rank / c_.cluster_m, c_.cluster_m,
                            c_.cluster_n, cluster - c_.grid_cluster[g], agent,
                            c_.grid_cluster[g + 1] - c_.grid_cluster[g]);
  }

  const ir::Program& program_;
  Code& c_;
  const SourceLocation top_;
  ir::BuiltinValues b0_{};  // CTA 0's, agent 0's (declarations equal in every CTA)
  uint32_t var_total_ = 0;
};

Status CodeBuilder::Shape() {
  auto m = EvalDecl(program_, c_.params, program_.cluster_m, nullptr, 1);
  auto n = EvalDecl(program_, c_.params, program_.cluster_n, nullptr, 1);
  auto k = EvalDecl(program_, c_.params, program_.clusters, nullptr, 1);
  if (!m.ok()) return m.status();
  if (!n.ok()) return n.status();
  if (!k.ok()) return k.status();
  int64_t ctas = 0;
  if (*m < 1 || *n < 1 || __builtin_mul_overflow(*m, *n, &ctas) ||
      ctas > static_cast<int64_t>(model::kMaxClusterCtas)) {
    return DeclError(program_, "engine.cluster-shape",
                     "cluster " + std::to_string(*m) + "x" + std::to_string(*n) +
                         " is not 1..16 CTAs (sm_90 portable cluster size limit is 8, "
                         "non-portable 16)",
                     DeclAt(program_.cluster_m));
  }
  if (*k < 1 || *k > 65535) {
    return DeclError(program_, "engine.clusters",
                     "clusters = " + std::to_string(*k) + " is outside 1..65535",
                     DeclAt(program_.clusters));
  }
  c_.cluster_m = static_cast<uint32_t>(*m);
  c_.cluster_n = static_cast<uint32_t>(*n);
  c_.cluster_size = c_.cluster_m * c_.cluster_n;
  c_.clusters = static_cast<uint32_t>(*k);
  // The primary grids of a chain of programmatic dependent launches: more clusters of the same
  // shape after the schedule's own, grid 1 first, each CTA with its own shared memory and
  // barriers (Code::grid_cluster).
  const uint32_t own_clusters = c_.clusters;
  c_.grid_cluster = {0, own_clusters};
  for (const ir::Program::PrimaryGrid& g : program_.primaries) {
    auto pk = EvalDecl(program_, c_.params, g.clusters, nullptr, 1);
    if (!pk.ok()) return pk.status();
    if (*pk < 1 || *pk > 65535 || *pk + c_.grid_cluster.back() > 65535) {
      return DeclError(program_, "engine.clusters",
                       "primary clusters = " + std::to_string(*pk) +
                           " is outside 1..65535 (with the other grids' clusters)",
                       DeclAt(g.clusters));
    }
    c_.grid_cluster.push_back(c_.grid_cluster.back() + static_cast<uint32_t>(*pk));
  }
  c_.primary_cluster = own_clusters;
  c_.clusters = c_.grid_cluster.back();
  c_.num_ctas = c_.cluster_size * c_.clusters;
  b0_ = CtaBuiltins(0, 0, 0);
  return Status();
}

Status CodeBuilder::Buffers() {
  // Buffers: laid out in declaration order, each aligned, slots contiguous. The layout is the
  // same in every CTA (declarations evaluate with CTA 0's builtins).
  uint64_t addr = 0;
  for (const ir::BufferDecl& d : program_.buffers) {
    auto stages = EvalDecl(program_, c_.params, d.stages, &b0_, 1);
    auto bytes = EvalDecl(program_, c_.params, d.bytes, &b0_, 0);
    auto align = EvalDecl(program_, c_.params, d.align, &b0_, 1024);
    if (!stages.ok()) return stages.status();
    if (!bytes.ok()) return bytes.status();
    if (!align.ok()) return align.status();
    if (*stages < 1 || *bytes < 1 || *align < 1 || (*align & (*align - 1)) != 0) {
      return DeclError(program_, "engine.buffer",
                       "buffer " + d.name + ": stages and bytes must be positive and align a "
                       "power of two",
                       d.where);
    }
    // Each factor is checked against the CTA's shared memory before the product is formed, so
    // neither the u32 fields below nor the running address can wrap.
    const int64_t smem = static_cast<int64_t>(model::kMaxSharedBytesPerCta);
    if (*stages > smem || *bytes > smem || *stages * *bytes > smem) {
      return DeclError(program_, "engine.smem-size",
                       "buffer " + d.name + ": " + std::to_string(*stages) + " stages of " +
                           std::to_string(*bytes) + " bytes do not fit in the " +
                           std::to_string(model::kMaxSharedBytesPerCta) +
                           " bytes of shared memory an sm_90 CTA can have",
                       d.where);
    }
    if (d.alias_of != ir::BufferDecl::kNoAlias) {
      // `aliases V + OFF` (ir.h BufferDecl): no memory of its own; the bytes of V it reuses.
      // The parser only lets a buffer alias an earlier one, so V is laid out already.
      auto off = EvalDecl(program_, c_.params, d.alias_offset, &b0_, 0);
      if (!off.ok()) return off.status();
      if (d.alias_of >= c_.buffers.size()) {
        return DeclError(program_, "engine.alias", "buffer " + d.name + " aliases a later buffer",
                         d.where);
      }
      const Code::Buffer& v = c_.buffers[d.alias_of];
      const int64_t span = int64_t{v.stages} * v.bytes;
      const int64_t base = int64_t{v.base} + *off;
      if (*off < 0 || *off + *stages * *bytes > span || base % *align != 0) {
        return DeclError(program_, "engine.alias",
                         "buffer " + d.name + ": " + std::to_string(*stages) + " slots of " +
                             std::to_string(*bytes) + " bytes at offset " +
                             std::to_string(*off) + " do not fit inside the " +
                             std::to_string(span) + " bytes of buffer " +
                             program_.buffers[d.alias_of].name + " (or the offset breaks its " +
                             "alignment " + std::to_string(*align) + ")",
                         d.where);
      }
      c_.buffers.push_back({static_cast<uint32_t>(base), static_cast<uint32_t>(*bytes),
                           static_cast<uint32_t>(*stages)});
      continue;
    }
    addr = (addr + static_cast<uint64_t>(*align) - 1) & ~(static_cast<uint64_t>(*align) - 1);
    c_.buffers.push_back({static_cast<uint32_t>(addr), static_cast<uint32_t>(*bytes),
                         static_cast<uint32_t>(*stages)});
    addr += static_cast<uint64_t>(*stages) * static_cast<uint64_t>(*bytes);
    if (addr > model::kMaxSharedBytesPerCta) {
      return DeclError(program_, "engine.smem-size",
                       "buffers need " + std::to_string(addr) + " bytes of shared memory per CTA, "
                       "more than the " + std::to_string(model::kMaxSharedBytesPerCta) +
                       " bytes an sm_90 CTA can have",
                       d.where);
    }
  }

  for (const Code::Buffer& b : c_.buffers) {
    c_.buffer_slot_base.push_back(c_.buffer_slots);
    c_.buffer_slots += b.stages;
  }
  return Status();
}

Status CodeBuilder::Barriers() {
  // Barrier arrays: sizes equal in every CTA; counts may depend on the CTA.
  for (const ir::BarrierDecl& d : program_.barriers) {
    auto size = EvalDecl(program_, c_.params, d.size, &b0_, 1);
    if (!size.ok()) return size.status();
    if (*size < 1 || *size > 65535) {
      return DeclError(program_, "engine.barrier",
                       "barrier " + d.name + ": size " + std::to_string(*size) +
                           " is outside 1..65535",
                       d.where);
    }
    c_.barrier_base.push_back(c_.barriers_per_cta);
    c_.barrier_size.push_back(static_cast<uint32_t>(*size));
    c_.barriers_per_cta += static_cast<uint32_t>(*size);
  }
  c_.barrier_count.resize(static_cast<size_t>(c_.num_ctas) * c_.barriers_per_cta);
  for (uint32_t cl = 0; cl < c_.clusters; ++cl) {
    for (uint32_t r = 0; r < c_.cluster_size; ++r) {
      const ir::BuiltinValues b = CtaBuiltins(cl, r, 0);
      const uint32_t cta = cl * c_.cluster_size + r;
      for (size_t i = 0; i < program_.barriers.size(); ++i) {
        auto count = EvalDecl(program_, c_.params, program_.barriers[i].count, &b, 1);
        if (!count.ok()) return count.status();
        for (uint32_t j = 0; j < c_.barrier_size[i]; ++j) {
          const size_t slot = static_cast<size_t>(cta) * c_.barriers_per_cta + c_.barrier_base[i];
          c_.barrier_count[slot + j] = *count;
        }
      }
    }
  }
  return Status();
}

Status CodeBuilder::Globals() {
  // Global buffers (params only, as the launch's allocations are).
  for (const ir::GlobalDecl& g : program_.globals) {
    auto slots = EvalDecl(program_, c_.params, g.slots, nullptr, 1);
    auto bytes = EvalDecl(program_, c_.params, g.bytes, nullptr, 1);
    if (!slots.ok()) return slots.status();
    if (!bytes.ok()) return bytes.status();
    if (*slots < 1 || *slots > 65535 || *bytes < 1 || *bytes > (int64_t{1} << 30)) {
      return DeclError(program_, "engine.global",
                       "global " + g.name + ": " + std::to_string(*slots) + " slots of " +
                           std::to_string(*bytes) +
                           " bytes (slots must be 1..65535, bytes 1..2^30)",
                       g.where);
    }
    c_.globals.push_back(Code::Global{*slots, *bytes});
  }
  return Status();
}

Status CodeBuilder::TensorMaps() {
  // Tensor maps: the model validates them (cuTensorMapEncodeTiled rules).
  for (const ir::TensorMapDecl& d : program_.tensor_maps) {
    Code::Map mp;
    auto dt = model::ParseDataType(d.dtype);
    auto sw = model::ParseSwizzle(d.swizzle);
    auto il = ParseInterleave(d.interleave);
    if (!dt || !sw || !il || (d.oob_fill != "zero" && d.oob_fill != "nan")) {
      return DeclError(program_, "engine.tensor-map",
                       "tensormap " + d.name + ": unknown dtype, swizzle, interleave or oob fill",
                       d.where);
    }
    if (d.global_dims.empty() || d.global_dims.size() > model::kTmaMaxRank ||
        d.box_dims.size() != d.global_dims.size()) {
      return DeclError(program_, "tensor-map.rank",
                       "tensormap " + d.name + ": rank must be 1..5 with one box dim per dim",
                       d.where);
    }
    mp.map.data_type = *dt;
    mp.map.swizzle = *sw;
    mp.map.interleave = *il;
    mp.map.oob_fill =
        d.oob_fill == "nan" ? model::TmaOobFill::kNanRequestZeroFma : model::TmaOobFill::kZero;
    mp.map.rank = static_cast<uint32_t>(d.global_dims.size());
    uint64_t packed = model::ElementBytes(*dt);
    for (uint32_t i = 0; i < mp.map.rank; ++i) {
      auto g = EvalDecl(program_, c_.params, d.global_dims[i], &b0_, 1);
      auto bx = EvalDecl(program_, c_.params, d.box_dims[i], &b0_, 1);
      if (!g.ok()) return g.status();
      if (!bx.ok()) return bx.status();
      mp.map.global_dim[i] = static_cast<uint64_t>(std::max<int64_t>(*g, 0));
      mp.map.box_dim[i] = static_cast<uint32_t>(std::clamp<int64_t>(*bx, 0, 1 << 20));
      if (i < d.element_strides.size()) {
        auto es = EvalDecl(program_, c_.params, d.element_strides[i], &b0_, 1);
        if (!es.ok()) return es.status();
        mp.map.element_strides[i] = static_cast<uint32_t>(std::clamp<int64_t>(*es, 0, 1 << 20));
      }
      if (i + 1 < mp.map.rank) {
        packed *= mp.map.global_dim[i];
        if (i < d.global_strides.size()) {
          auto st = EvalDecl(program_, c_.params, d.global_strides[i], &b0_, 0);
          if (!st.ok()) return st.status();
          mp.map.global_strides[i] = static_cast<uint64_t>(std::max<int64_t>(*st, 0));
        } else {
          mp.map.global_strides[i] = packed;  // packed layout
        }
      }
    }
    Status v = model::ValidateTensorMap(mp.map);
    if (!v.ok()) return v.At(d.where.file.empty() ? top_ : d.where);
    mp.box_bytes = static_cast<uint32_t>(model::BoxBytes(mp.map));
    mp.smem_ok.assign(model::kMaxSharedBytesPerCta / 128 + 1, 0);
    c_.maps.push_back(mp);
  }
  return Status();
}

Status CodeBuilder::Roles() {
  // Roles: compile each body once.
  for (const ir::Role& role : program_.roles) {
    std::vector<Instr> instrs = CompileRole(role);
    for (Instr& in : instrs) {
      if (in.kind == Instr::kAssert) in.e1 = program_.assertions[in.var].cond;
    }
    if (instrs.size() > 0xffff) {
      return DeclError(program_, "engine.program-size",
                       "role " + role.name + " compiles to more than 65535 instructions",
                       role.where);
    }
    // The explorer's solo look-ahead (Engine::AgentFuture) is exact only when the role's control
    // flow and operands cannot depend on what a barrier answered: no test_wait result, no
    // state token.
    bool solo_ok = true;
    for (const Instr& in : instrs) {
      if (in.kind != Instr::kOp) continue;
      if (const auto* w = std::get_if<ir::MbarrierWait>(in.op)) {
        if (w->result_var != 0xffffffffu || w->token_var != 0xffffffffu) solo_ok = false;
      } else if (const auto* ar = std::get_if<ir::MbarrierArrive>(in.op)) {
        if (ar->token_var != 0xffffffffu) solo_ok = false;
      } else if (std::holds_alternative<ir::MbarrierPendingCount>(*in.op) ||
                 std::holds_alternative<ir::GlobalReadback>(*in.op)) {
        // The result reads a token or what the stores left in global memory.
        solo_ok = false;
        if (std::holds_alternative<ir::GlobalReadback>(*in.op)) c_.tracks_data = true;
      }
    }
    c_.role_solo_ok.push_back(solo_ok);
    bool groups = false;
    for (const Instr& in : instrs) {
      if (in.kind != Instr::kOp) continue;
      groups = groups || std::holds_alternative<ir::TmaStore>(*in.op) ||
               std::holds_alternative<ir::BulkStore>(*in.op) ||
               std::holds_alternative<ir::BulkCommit>(*in.op) ||
               std::holds_alternative<ir::BulkWait>(*in.op) ||
               std::holds_alternative<ir::CpAsync>(*in.op) ||
               std::holds_alternative<ir::CpAsyncCommit>(*in.op) ||
               std::holds_alternative<ir::CpAsyncWait>(*in.op) ||
               std::holds_alternative<ir::CpAsyncMbarrierArrive>(*in.op);
    }
    c_.role_groups.push_back(groups ? 1 : 0);
    c_.roles.push_back(std::move(instrs));
  }
  return Status();
}

Status CodeBuilder::Agents() {
  for (uint32_t cl = 0; cl < c_.clusters; ++cl) {
    if (cl == c_.primary_cluster) c_.primary_agent = static_cast<uint32_t>(c_.agents.size());
    const uint32_t grid = GridOfCluster(cl);
    if (cl == c_.grid_cluster[grid]) {
      c_.grid_agent.push_back(static_cast<uint32_t>(c_.agents.size()));
    }
    c_.cluster_first_agent.push_back(static_cast<uint32_t>(c_.agents.size()));
    for (uint32_t r = 0; r < c_.cluster_size; ++r) {
      const uint32_t cta = cl * c_.cluster_size + r;
      c_.cta_first_agent.push_back(static_cast<uint32_t>(c_.agents.size()));
      const ir::BuiltinValues b = CtaBuiltins(cl, r, 0);
      uint32_t in_cta = 0;
      for (uint32_t ro = 0; ro < program_.roles.size(); ++ro) {
        const ir::Role& role = program_.roles[ro];
        if (role.grid != grid) continue;
        auto when = EvalDecl(program_, c_.params, role.when, &b, 1);
        auto count = EvalDecl(program_, c_.params, role.count, &b, 1);
        auto threads = EvalDecl(program_, c_.params, role.threads, &b, 1);
        if (!when.ok()) return when.status();
        if (!count.ok()) return count.status();
        if (!threads.ok()) return threads.status();
        if (*when == 0) continue;
        if (*count < 0 || *count > 1024 || *threads < 1 || *threads > 1024) {
          return DeclError(program_, "engine.role",
                           "role " + role.name + ": count must be 0..1024 and threads 1..1024",
                           role.where);
        }
        for (uint32_t i = 0; i < static_cast<uint32_t>(*count); ++i) {
          AgentInfo info;
          info.cluster = cl;
          info.cta = r;
          info.cta_global = cta;
          info.role = ro;
          info.index_in_role = i;
          info.index_in_cta = in_cta++;
          info.threads = static_cast<uint32_t>(*threads);
          info.grid = grid;
          c_.agents.push_back(info);
          c_.builtins.push_back(CtaBuiltins(cl, r, i));
          c_.var_offset.push_back(var_total_);
          var_total_ += role.num_vars;
        }
      }
      if (in_cta > 0xfffe) {
        return DeclError(program_, "engine.role", "more than 65534 agents in one CTA", top_);
      }
    }
  }
  if (!c_.has_primary()) c_.primary_agent = static_cast<uint32_t>(c_.agents.size());
  c_.grid_agent.push_back(static_cast<uint32_t>(c_.agents.size()));
  c_.cta_first_agent.push_back(static_cast<uint32_t>(c_.agents.size()));
  c_.cluster_first_agent.push_back(static_cast<uint32_t>(c_.agents.size()));
  // A cluster barrier needs at least one participant, and a cluster without agents runs nothing.
  for (uint32_t cl = 0; cl < c_.clusters; ++cl) {
    if (c_.cluster_first_agent[cl + 1] == c_.cluster_first_agent[cl]) {
      return DeclError(program_, "engine.no-agents",
                       (cl >= c_.primary_cluster
                            ? "cluster " +
                                  std::to_string(cl - c_.grid_cluster[GridOfCluster(cl)]) +
                                  " of the primary grid" +
                                  (c_.grids() > 2
                                       ? " of block " +
                                             std::to_string(c_.grids() - GridOfCluster(cl))
                                       : std::string())
                            : "cluster " + std::to_string(cl)) +
                           " has no agents (every role's count or `when` is 0 there)",
                       program_.roles.empty() ? top_ : program_.roles.front().where);
    }
  }
  return Status();
}

Status CodeBuilder::Readback() {
  // `readback` tracks only data that `write` put in a bulk.store's source: a buffer that is both
  // a bulk.store source and a copy destination (TMA, bulk, cp.async, st.async) would hold data
  // the model does not name, so such a program is refused rather than answered wrongly.
  if (c_.tracks_data) {
    std::vector<uint8_t> stored(program_.buffers.size(), 0), copied(program_.buffers.size(), 0);
    for (const auto& role_code : c_.roles) {
      for (const Instr& in : role_code) {
        if (in.kind != Instr::kOp) continue;
        if (const auto* o = std::get_if<ir::BulkStore>(in.op)) stored[o->src.buffer] = 1;
        if (const auto* o = std::get_if<ir::TmaLoad>(in.op)) copied[o->dst.buffer] = 1;
        if (const auto* o = std::get_if<ir::BulkLoad>(in.op)) copied[o->dst.buffer] = 1;
        if (const auto* o = std::get_if<ir::CpAsync>(in.op)) copied[o->dst.buffer] = 1;
        if (const auto* o = std::get_if<ir::StAsync>(in.op)) copied[o->dst.buffer] = 1;
      }
    }
    for (size_t b = 0; b < program_.buffers.size(); ++b) {
      if (stored[b] && copied[b]) {
        return DeclError(program_, "engine.readback-untracked",
                         "buffer " + program_.buffers[b].name +
                             " is both a bulk.store source and a copy destination: `readback` "
                             "models only data written into a store source by `write`",
                         program_.buffers[b].where);
      }
    }
  }
  return Status();
}

void CodeBuilder::Assertions() {
  c_.tracks_landed = ir::ReadsLanded(program_);
  for (const ir::Assertion& a : program_.assertions) {
    c_.has_forall = c_.has_forall || a.kind == ir::Assertion::Kind::kForall;
  }
}

void CodeBuilder::StaticExpressions() {
  const size_t ne = program_.exprs.size();
  std::vector<int8_t> dyn(ne, -1);  // -1 unknown, 0 static, 1 depends on a variable
  std::vector<ir::ExprId> stack;
  auto is_dynamic = [&](ir::ExprId root) {
    // Iterative post-order over the arena (expressions form a DAG).
    stack.assign(1, root);
    while (!stack.empty()) {
      const ir::ExprId id = stack.back();
      if (id >= ne) { stack.pop_back(); continue; }
      if (dyn[id] >= 0) { stack.pop_back(); continue; }
      const ir::Expr& x = program_.exprs[id];
      // A state read (an assertion's) is not agent-invariant either.
      if (x.kind == ir::Expr::Kind::kVar || x.kind == ir::Expr::Kind::kState) {
        dyn[id] = 1;
        stack.pop_back();
        continue;
      }
      bool pending = false;
      int8_t d = 0;
      for (ir::ExprId ch : {x.a, x.b, x.c}) {
        if (ch == ir::kNoExpr || ch >= ne) continue;
        if (dyn[ch] < 0) { stack.push_back(ch); pending = true; }
        else d |= dyn[ch];
      }
      if (!pending) { dyn[id] = d; stack.pop_back(); }
    }
    return dyn[root] == 1;
  };
  c_.static_slot.assign(ne, -1);
  for (ir::ExprId id = 0; id < ne; ++id) {
    if (program_.exprs[id].kind == ir::Expr::Kind::kConst || is_dynamic(id)) continue;
    c_.static_slot[id] = static_cast<int32_t>(c_.num_static++);
  }
  c_.fast.resize(ne);
  for (ir::ExprId id = 0; id < ne; ++id) {
    const ir::Expr& x = program_.exprs[id];
    Code::FastExpr& f = c_.fast[id];
    if (x.kind == ir::Expr::Kind::kConst) {
      f.cls = Code::FastExpr::kConst;
      f.value = x.value;
    } else if (x.kind == ir::Expr::Kind::kVar) {
      f.cls = Code::FastExpr::kVar;
      f.arg = x.index;
    } else if (c_.static_slot[id] >= 0) {
      f.cls = Code::FastExpr::kStatic;
      f.arg = static_cast<uint32_t>(c_.static_slot[id]);
    } else if (x.kind == ir::Expr::Kind::kBinary && x.a < ne && x.b < ne) {
      const auto op = static_cast<ir::BinaryOp>(x.op);
      // Not the short-circuit forms: their right operand may not be evaluated.
      if (op != ir::BinaryOp::kAnd && op != ir::BinaryOp::kOr) {
        f.cls = Code::FastExpr::kBinary;
        f.op = x.op;
        f.a = x.a;
        f.b = x.b;
      }
    }
  }
  c_.static_values.assign(static_cast<size_t>(c_.num_static) * c_.agents.size(), 0);
  c_.static_ok.assign(c_.static_values.size(), 0);
  for (size_t a = 0; a < c_.agents.size(); ++a) {
    ir::EvalEnv env;
    env.params = c_.params.data();
    env.num_params = c_.params.size();
    env.builtins = &c_.builtins[a];
    for (ir::ExprId id = 0; id < ne; ++id) {
      if (c_.static_slot[id] < 0) continue;
      ir::EvalFault fault;
      const int64_t v = ir::EvalFast(program_, id, env, &fault);
      const size_t at = a * c_.num_static + static_cast<size_t>(c_.static_slot[id]);
      c_.static_values[at] = v;
      c_.static_ok[at] = fault.ok() ? 1 : 0;
    }
  }
  // An agent-invariant expression with the same value for every agent and no fault (one of
  // params and constants only, typically) is a constant: one load less per use.
  for (ir::ExprId id = 0; id < ne; ++id) {
    if (c_.fast[id].cls != Code::FastExpr::kStatic || c_.agents.empty()) continue;
    const uint32_t col = c_.fast[id].arg;
    bool same = true;
    for (size_t a = 0; a < c_.agents.size() && same; ++a) {
      const size_t at = a * c_.num_static + col;
      same = c_.static_ok[at] && c_.static_values[at] == c_.static_values[col];
    }
    if (!same) continue;
    c_.fast[id].cls = Code::FastExpr::kConst;
    c_.fast[id].value = c_.static_values[col];
  }
}

}  // namespace

// From a thread's own range (2^40 per thread) of a process-wide sequence of ranges.
uint64_t NextAgentGen() {
  static std::atomic<uint64_t> ranges{1};
  thread_local uint64_t next = 0, end = 0;
  if (next == end) {
    next = ranges.fetch_add(1, std::memory_order_relaxed) << 40;
    end = next + (uint64_t{1} << 40);
  }
  return next++;
}

namespace {
std::atomic<uint64_t> created_count{0};
}  // namespace

uint64_t Engine::CreatedCount() { return created_count.load(std::memory_order_relaxed); }

Expected<Engine> Engine::Create(const ir::Program& program, std::vector<int64_t> params,
                                EngineOptions options) {
  created_count.fetch_add(1, std::memory_order_relaxed);
  if (params.size() != program.params.size()) {
    return DeclError(program, "engine.params",
                     "expected " + std::to_string(program.params.size()) +
                         " param values, got " + std::to_string(params.size()),
                     {});
  }
  auto code = std::make_shared<Code>();
  Code& c = *code;
  c.program = &program;
  c.params = std::move(params);
  CodeBuilder build(program, c);
  Status s = build.Shape();
  if (s.ok()) s = build.Buffers();
  if (s.ok()) s = build.Barriers();
  if (s.ok()) s = build.Globals();
  if (s.ok()) s = build.TensorMaps();
  if (s.ok()) s = build.Roles();
  if (s.ok()) s = build.Agents();
  if (s.ok()) s = build.Readback();
  if (!s.ok()) return s;
  build.Assertions();
  build.StaticExpressions();
  const uint32_t var_total = build.var_total();

  Engine e;
  e.code_ = code;
  e.options_ = options;
  // The state block: every part at an 8-byte aligned offset.
  Layout l;
  uint64_t bytes = 0;
  auto place = [&](uint32_t count, size_t size) {
    const uint64_t at = bytes;
    bytes += (count * size + 7) & ~size_t{7};
    return static_cast<uint32_t>(at);
  };
  const uint32_t n_agents = static_cast<uint32_t>(c.agents.size());
  l.n_agents = n_agents;
  l.agents = place(n_agents, sizeof(AgentState));
  l.n_vars = var_total;
  l.vars = place(var_total, sizeof(int64_t));
  l.n_barriers = static_cast<uint32_t>(c.barrier_count.size());
  l.barriers = place(l.n_barriers, sizeof(model::MbarrierState));
  l.n_named = c.num_ctas;
  l.named = place(l.n_named, sizeof(model::NamedBarriers));
  if (c.tracks_data) {
    l.n_smem = c.num_ctas * c.buffer_slots;
    l.n_global = c.buffer_slots;
  }
  l.smem = place(l.n_smem, sizeof(uint16_t));
  l.global = place(l.n_global, sizeof(uint16_t));
  l.ready = place(n_agents, sizeof(uint32_t));
  l.ready_len = place(1, sizeof(uint32_t));
  // The fingerprint cache's words (FpParts); the objects are num_objects()'s.
  l.first_agent_object = l.n_barriers + c.clusters + c.num_ctas;
  l.n_objects = l.first_agent_object + n_agents;
  const FpLayout parts = FpParts(l.n_objects, n_agents);
  l.fp_obj = parts.obj;
  l.fp_ops = parts.ops;
  l.fp_fin = parts.fin;
  l.n_fp = FpWords(l.n_objects, n_agents);
  l.fp = place(l.n_fp, sizeof(uint64_t));
  PARITY_CHECK(bytes < (uint64_t{1} << 31), "Engine: the state is too large");
  l.words = static_cast<uint32_t>(bytes / 8);
  static std::atomic<uint64_t> layouts{0};
  l.id = layouts.fetch_add(1, std::memory_order_relaxed) + 1;
  e.Allocate(l);
  for (AgentState& s : e.agents_) {
    new (&s) AgentState();
    s.gen = NextAgentGen();
  }
  uint32_t group_states = 0;
  for (const AgentInfo& info : c.agents) {
    c.group_state.push_back(c.role_groups[info.role] ? group_states++ : kNoGroups);
  }
  e.cp_.resize(group_states);
  e.bulk_.resize(group_states);
  for (model::MbarrierState& b : e.barriers_) new (&b) model::MbarrierState();
  std::fill(e.smem_data_.begin(), e.smem_data_.end(), kDataOther);
  std::fill(e.global_data_.begin(), e.global_data_.end(), kDataInitial);
  for (uint32_t cl = 0; cl < c.clusters; ++cl) {
    e.clusters_.emplace_back(c.cluster_first_agent[cl + 1] - c.cluster_first_agent[cl]);
  }
  for (uint32_t cta = 0; cta < c.num_ctas; ++cta) {
    uint32_t threads = 0;
    for (uint32_t a = c.cta_first_agent[cta]; a < c.cta_first_agent[cta + 1]; ++a) {
      threads += c.agents[a].threads;
    }
    new (&e.named_[cta]) model::NamedBarriers(threads);
  }
  for (uint32_t a = 0; a < c.agents.size(); ++a) {
    e.agents_[a].ready_pos = static_cast<uint32_t>(e.ready_.size());
    e.ready_.push_back(a);
  }
  e.rng_ = options.seed ^ 0x5eed5eed5eed5eedull;
  e.in_flight_.reserve(1024);
  if (e.ready_.empty()) e.outcome_ = Outcome::kCompleted;
  e.result_.outcome = e.outcome_;
  return e;
}

Engine Engine::IsolatedCopy() const {
  Engine e(*this);
  e.code_ = std::make_shared<const Code>(*code_);
  return e;
}

}  // namespace parity::engine
