#include "sim/ptx/importer.h"

#include <algorithm>
#include <cctype>
#include <climits>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <set>
#include <sstream>
#include <tuple>
#include <utility>

#include "sim/ptx/import_text.h"
#include "sim/ptx/thread_exec.h"

namespace parity::ptx {
namespace {

Status BadOption(const std::string& message) { return Status("import.bad-option", message); }

// `kernel(...)::name` of a demoted __shared__ variable -> `name`.
std::string ShortName(const std::string& symbol) {
  const std::string demangled = Demangle(symbol);
  const size_t colon = demangled.rfind("::");
  if (colon != std::string::npos && demangled.find(')', colon) == std::string::npos) {
    return demangled.substr(colon + 2);
  }
  return symbol;
}

std::string Basename(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// A shared address, possibly mapped to another CTA by mapa (`symbol@ctaN`).
struct SharedAddr {
  std::string symbol;
  uint64_t offset = 0;
  int cta = -1;  // -1: own CTA
};

std::optional<SharedAddr> AsShared(const Value& v) {
  if (v.kind != Value::Kind::kAddress) return std::nullopt;
  SharedAddr a{v.symbol, v.bits, -1};
  const size_t at = v.symbol.rfind("@cta");
  if (at != std::string::npos) {
    a.symbol = v.symbol.substr(0, at);
    a.cta = std::atoi(v.symbol.c_str() + at + 4);
  }
  return a;
}

// One operation of the schedule: a format with `{}` for each integer operand, so that repeated
// operations differing only in those integers can be re-rolled into a loop.
struct OpRec {
  std::string fmt;
  std::vector<int64_t> ints;
  // kCollapse: the lanes' copies are one operation of the warp. kCountLanes: one arrive whose
  // count is the lanes'. kOneLane: exactly one lane may issue it. kLaneLoop: each lane's
  // operation is one of the warp's (a `for` over the lanes: cp.async.mbarrier.arrive, whose
  // arrive-on is per thread). kUnion: the lanes' byte ranges [lo, hi) of one slot are one
  // operation over their union (cp.async, st.async); `tail` follows the range.
  enum class Merge { kCollapse, kCountLanes, kOneLane, kLaneLoop, kUnion };
  Merge merge = Merge::kCollapse;
  int64_t arrive_count = 1;  // kCountLanes: per lane
  int lanes = 1;
  int64_t lo = 0, hi = 0, sum = 0;  // kUnion: the range and the bytes the lanes issue
  int64_t slot_bytes = -1;          // kUnion: the slot's size (a whole-slot range is implicit)
  bool contiguous = false;          // kUnion: the lanes' ranges must tile [lo, hi) (st.async)
  // Per integer: how much it grows per agent of the role (empty: every agent's is the same).
  std::vector<int64_t> agent_delta;
  // Per integer: how much it grows per cluster (`cluster_id`) and per CTA rank (`cta_rank`) in a
  // role emitted once for several CTAs (empty: every CTA's is the same).
  std::vector<int64_t> cluster_delta;
  std::vector<int64_t> rank_delta;
  std::string tail;
  std::vector<int64_t> tail_ints;
  std::set<int> ptx_lines;
  std::string source;  // "file.cu:LINE" or ""

  bool SameOp(const OpRec& o) const {
    return fmt == o.fmt && ints == o.ints && arrive_count == o.arrive_count && tail == o.tail &&
           tail_ints == o.tail_ints && agent_delta == o.agent_delta &&
           cluster_delta == o.cluster_delta && rank_delta == o.rank_delta;
  }
  // The same operation up to its integers (which may differ from CTA to CTA).
  bool SameShape(const OpRec& o) const {
    return fmt == o.fmt && arrive_count == o.arrive_count && ints.size() == o.ints.size() &&
           tail == o.tail && tail_ints == o.tail_ints && agent_delta == o.agent_delta;
  }
  // Folds another lane's (or the same lane's next) range of the same operation into this one.
  void Unite(const OpRec& o) {
    lo = std::min(lo, o.lo);
    hi = std::max(hi, o.hi);
    sum += o.sum;
    ptx_lines.insert(o.ptx_lines.begin(), o.ptx_lines.end());
  }
};

struct BufferInfo {
  std::string name;
  std::string symbol;
  uint64_t base = 0;
  uint64_t stride = 0;
  int slots = 1;
  int64_t bytes = 0;
};

struct RoleRec {
  std::vector<OpRec> ops;
  int count = 0;
  int threads = 32;
  std::vector<int> warps;
};

class Importer {
 public:
  Importer(const Module& m, const Function& f, const ImportOptions& o) : m_(m), f_(f), o_(o) {}

  Expected<std::string> Run() {
    PARITY_RETURN_IF_ERROR(CheckOptions());
    ctas_ = o_.cluster_x * o_.cluster_y;
    const uint32_t threads = o_.block[0] * o_.block[1] * o_.block[2];
    const uint32_t units = ctas_ * static_cast<uint32_t>(o_.clusters);
    // events_[unit][thread], unit = cluster * ctas + cta rank: every CTA of the grid of clusters
    // runs, a 1-D grid of clusters along x (blockIdx.x runs over the clusters' CTAs).
    events_.assign(units, {});
    auto fields = ResolveParamOptions(m_, f_, o_);
    if (!fields.ok()) return fields.status();
    std::set<std::pair<std::string, uint64_t>> param_reads;
    for (uint32_t u = 0; u < units; ++u) {
      const uint32_t c = u / ctas_;
      const uint32_t r = u % ctas_;
      ThreadContext ctx;
      ctx.ntid = o_.block;
      ctx.cluster_ctaid = {r % o_.cluster_x, r / o_.cluster_x, 0};
      ctx.cluster_nctaid = {o_.cluster_x, o_.cluster_y, 1};
      ctx.clusterid = {c, 0, 0};
      ctx.nclusterid = {static_cast<uint32_t>(o_.clusters), 1, 1};
      ctx.ctaid = {c * o_.cluster_x + r % o_.cluster_x, r / o_.cluster_x, 0};
      ctx.nctaid = {static_cast<uint32_t>(o_.clusters) * o_.cluster_x, o_.cluster_y, 1};
      if (o_.grid[0] != 0) {
        // A recorded launch's grid: the clusters that run are its first ones along x.
        ctx.nctaid = o_.grid;
        ctx.nclusterid = {o_.grid[0] / o_.cluster_x, o_.grid[1] / o_.cluster_y, o_.grid[2]};
      }
      if (!o_.param_bytes.empty()) ctx.param_image = &o_.param_bytes;
      ctx.cluster_ctarank = r;
      ctx.cluster_nctarank = ctas_;
      ctx.args = o_.args;
      ctx.params = *fields;
      ctx.param_reads = &param_reads;
      ctx.record_shared_accesses = true;
      // A warp's lanes run together: shuffles and votes read each other's values.
      for (uint32_t w = 0; 32 * w < threads; ++w) {
        auto lanes = RunWarp(m_, f_, ctx, w);
        if (!lanes.ok()) return MissingArgOr(lanes.status());
        for (auto& ev : *lanes) events_[u].push_back(std::move(ev));
      }
    }
    PARITY_RETURN_IF_ERROR(CheckParamsRead(f_, o_, param_reads));
    PARITY_RETURN_IF_ERROR(RecoverDeclarations());
    for (const TensorMapArg& t : o_.tensor_maps) {
      if (used_maps_.count(TensorMapName(t)) == 0 && !t.from_launch) {
        return BadOption("--tensormap " +
                         (t.index >= 0 ? std::to_string(t.index)
                                       : t.param + "+" + std::to_string(t.offset)) +
                         ": no TMA copy of the kernel uses that tensor map");
      }
    }
    // Per CTA of the grid: each warp's merged operations; then roles.
    std::vector<std::vector<RoleRec>> unit_roles(units);
    const uint32_t warps = (threads + 31) / 32;
    for (uint32_t u = 0; u < units; ++u) {
      for (uint32_t w = 0; w < warps; ++w) {
        const uint32_t first = 32 * w;
        const uint32_t last = std::min(threads, first + 32);
        std::vector<std::vector<OpRec>> lanes;
        for (uint32_t t = first; t < last; ++t) {
          auto ops = ToOps(events_[u][t]);
          if (!ops.ok()) return ops.status();
          lanes.push_back(std::move(ops).value());
        }
        auto merged = MergeLanes(u, w, lanes);
        if (!merged.ok()) return merged.status();
        if (merged->empty()) continue;
        bool placed = false;
        for (RoleRec& role : unit_roles[u]) {
          if (role.threads == static_cast<int>(last - first) && JoinRole(&role, *merged)) {
            ++role.count;
            role.warps.push_back(static_cast<int>(w));
            placed = true;
            break;
          }
        }
        if (!placed) {
          unit_roles[u].push_back(RoleRec{std::move(merged).value(), 1,
                                          static_cast<int>(last - first),
                                          {static_cast<int>(w)}});
        }
      }
    }
    std::ostringstream out;
    EmitHeader(out);
    std::ostringstream roles;
    EmitRoles(roles, unit_roles);
    // Loop bounds may name kernel arguments: declare those params first.
    for (int index : used_args_) {
      out << "param ARG" << index << " = " << static_cast<int64_t>(o_.args.at(index))
          << "   # kernel argument " << index << " (" << f_.params[index].name << ")\n";
    }
    if (!used_args_.empty()) out << "\n";
    out << decls_.str() << roles.str();
    return out.str();
  }

 private:
  // The same role up to integer operands (which may differ from CTA to CTA).
  static bool SameShapeRole(const RoleRec& a, const RoleRec& b) {
    if (a.count != b.count || a.threads != b.threads || a.warps != b.warps ||
        a.ops.size() != b.ops.size()) {
      return false;
    }
    for (size_t i = 0; i < a.ops.size(); ++i) {
      if (!a.ops[i].SameShape(b.ops[i])) return false;
    }
    return true;
  }

  // A role every CTA of the grid has alike is emitted once; one every cluster has alike in a
  // given rank once per rank (`when cta_rank == r`); the others once per CTA of the grid
  // (`when cluster_id == c && cta_rank == r`).
  void EmitRoles(std::ostream& roles, std::vector<std::vector<RoleRec>>& unit_roles) {
    const uint32_t units = static_cast<uint32_t>(unit_roles.size());
    std::vector<std::vector<bool>> emitted(units);
    for (uint32_t u = 0; u < units; ++u) emitted[u].assign(unit_roles[u].size(), false);
    auto emit = [&](const RoleRec& role, int cluster, int cta) {
      std::string name = "warp" + std::to_string(role.warps[0]);
      if (role.warps.size() > 1) name += "_" + std::to_string(role.warps.back());
      if (cluster >= 0) name += "_cl" + std::to_string(cluster);
      if (cta >= 0) name += "_cta" + std::to_string(cta);
      roles << (role.warps.size() > 1 ? "\n# warps" : "\n# warp");
      for (int w : role.warps) roles << " " << w;
      if (cta < 0 && cluster >= 0) {
        roles << " of every CTA of cluster " << cluster << "\n";
      } else if (cta < 0) {
        roles << " of every CTA\n";
      } else if (cluster < 0) {
        roles << " of CTA " << cta << (o_.clusters > 1 ? " of every cluster" : "") << "\n";
      } else {
        roles << " of CTA " << cta << " of cluster " << cluster << "\n";
      }
      // The machine-readable form: `parity replay` maps a kernel trace's warps to agents by it
      // (instance k of the role is the k-th warp listed).
      roles << "# kernel: role " << name << " = warps";
      for (int w : role.warps) roles << " " << w;
      roles << "\n";
      roles << "role " << name;
      if (role.count > 1) roles << " count " << role.count;
      roles << " threads " << role.threads;
      if (cluster >= 0 && cta < 0) {
        roles << " when cluster_id == " << cluster;
      } else if (cluster >= 0) {
        roles << " when cluster_id == " << cluster << " && cta_rank == " << cta;
      } else if (cta >= 0) {
        roles << " when cta_rank == " << cta;
      }
      roles << " {\n";
      EmitBody(roles, role.ops);
      roles << "}\n";
    };
    // Marks, in each unit of `among`, an unemitted role like `role` up to integers that grow
    // linearly with the unit's cluster and CTA rank; returns the role for all of them (integers
    // at cluster 0, rank 0 with their steps), or nullopt if a unit lacks one or they do not fit.
    auto take = [&](const RoleRec& role, const std::vector<uint32_t>& among)
        -> std::optional<RoleRec> {
      std::vector<size_t> match;
      for (uint32_t u : among) {
        size_t j = 0;
        while (j < unit_roles[u].size() &&
               (emitted[u][j] || !SameShapeRole(unit_roles[u][j], role))) {
          ++j;
        }
        if (j == unit_roles[u].size()) return std::nullopt;
        match.push_back(j);
      }
      // The steps from the units one cluster and one rank past the first (among's units are
      // in increasing order, the first at the lowest cluster and rank of them).
      const uint32_t u0 = among[0];
      const int64_t c0 = u0 / ctas_, r0 = u0 % ctas_;
      const RoleRec* next_cluster = nullptr;
      const RoleRec* next_rank = nullptr;
      for (size_t i = 0; i < among.size(); ++i) {
        const int64_t c = among[i] / ctas_, r = among[i] % ctas_;
        const RoleRec* x = &unit_roles[among[i]][match[i]];
        if (c == c0 + 1 && r == r0) next_cluster = x;
        if (c == c0 && r == r0 + 1) next_rank = x;
      }
      RoleRec out = unit_roles[u0][match[0]];
      for (size_t o = 0; o < out.ops.size(); ++o) {
        OpRec& op = out.ops[o];
        op.cluster_delta.assign(op.ints.size(), 0);
        op.rank_delta.assign(op.ints.size(), 0);
        for (size_t k = 0; k < op.ints.size(); ++k) {
          const int64_t base = op.ints[k];
          const int64_t dc = next_cluster ? next_cluster->ops[o].ints[k] - base : 0;
          const int64_t dr = next_rank ? next_rank->ops[o].ints[k] - base : 0;
          for (size_t i = 0; i < among.size(); ++i) {
            const int64_t c = among[i] / ctas_, r = among[i] % ctas_;
            const int64_t v = unit_roles[among[i]][match[i]].ops[o].ints[k];
            if (v != base + dc * (c - c0) + dr * (r - r0)) return std::nullopt;
          }
          op.ints[k] = base - dc * c0 - dr * r0;
          op.cluster_delta[k] = dc;
          op.rank_delta[k] = dr;
        }
        auto zero = [](const std::vector<int64_t>& v) {
          return std::all_of(v.begin(), v.end(), [](int64_t x) { return x == 0; });
        };
        if (zero(op.cluster_delta)) op.cluster_delta.clear();
        if (zero(op.rank_delta)) op.rank_delta.clear();
      }
      for (size_t i = 0; i < among.size(); ++i) emitted[among[i]][match[i]] = true;
      return out;
    };
    std::vector<uint32_t> all(units);
    for (uint32_t u = 0; u < units; ++u) all[u] = u;
    for (size_t i = 0; i < unit_roles[0].size(); ++i) {
      if (emitted[0][i]) continue;
      if (auto role = take(unit_roles[0][i], all)) emit(*role, -1, -1);
    }
    for (uint32_t r = 0; r < ctas_; ++r) {
      std::vector<uint32_t> rank;
      for (uint32_t u = r; u < units; u += ctas_) rank.push_back(u);
      for (size_t i = 0; i < unit_roles[r].size(); ++i) {
        if (emitted[r][i]) continue;
        if (auto role = take(unit_roles[r][i], rank)) emit(*role, -1, static_cast<int>(r));
      }
    }
    if (ctas_ > 1) {
      for (uint32_t c = 0; c < static_cast<uint32_t>(o_.clusters); ++c) {
        std::vector<uint32_t> cluster;
        for (uint32_t r = 0; r < ctas_; ++r) cluster.push_back(c * ctas_ + r);
        const uint32_t u0 = c * ctas_;
        for (size_t i = 0; i < unit_roles[u0].size(); ++i) {
          if (emitted[u0][i]) continue;
          if (auto role = take(unit_roles[u0][i], cluster)) {
            emit(*role, static_cast<int>(c), -1);
          }
        }
      }
    }
    for (uint32_t u = 0; u < units; ++u) {
      for (size_t j = 0; j < unit_roles[u].size(); ++j) {
        if (!emitted[u][j]) {
          emitted[u][j] = true;
          emit(unit_roles[u][j], static_cast<int>(u / ctas_), static_cast<int>(u % ctas_));
        }
      }
    }
  }

  Status CheckOptions() {
    for (const auto& [index, value] : o_.args) {
      if (index < 0 || index >= static_cast<int>(f_.params.size())) {
        return BadOption("--arg " + std::to_string(index) + ": the entry has " +
                         std::to_string(f_.params.size()) + " parameters");
      }
    }
    for (const TensorMapArg& t : o_.tensor_maps) {
      if (t.index < -1 || t.index >= static_cast<int>(f_.params.size())) {
        return BadOption("--tensormap " + std::to_string(t.index) + ": the entry has " +
                         std::to_string(f_.params.size()) + " parameters");
      }
      if (t.index >= 0 && f_.params[t.index].SizeBytes() != 128) {
        return BadOption("--tensormap " + std::to_string(t.index) + ": parameter " +
                         f_.params[t.index].name + " is not a 128-byte CUtensorMap" +
                         (f_.params[t.index].SizeBytes() > 128
                              ? "; a CUtensorMap inside a by-value struct is --tensormap " +
                                    f_.params[t.index].name + "+OFFSET=..."
                              : ""));
      }
      if (t.dims.size() != t.box.size()) {
        return BadOption("--tensormap " + std::to_string(t.index) +
                         ": dims and box have different ranks");
      }
    }
    if (o_.block[0] * o_.block[1] * o_.block[2] == 0 || o_.cluster_x == 0 || o_.cluster_y == 0 ||
        o_.clusters <= 0) {
      return BadOption("--block, --cluster and --clusters need positive sizes");
    }
    if (o_.block[0] * o_.block[1] * o_.block[2] > 1024) {
      return BadOption("--block has more than 1024 threads");
    }
    if (o_.cluster_x * o_.cluster_y > 16) return BadOption("--cluster has more than 16 CTAs");
    if (o_.grid[0] != 0 &&
        (o_.grid[0] % o_.cluster_x != 0 || o_.grid[1] % o_.cluster_y != 0 ||
         o_.grid[0] < o_.clusters * o_.cluster_x)) {
      return BadOption("the launch's grid " + std::to_string(o_.grid[0]) + "x" +
                       std::to_string(o_.grid[1]) + "x" + std::to_string(o_.grid[2]) +
                       " does not hold " + std::to_string(o_.clusters) + " clusters of " +
                       std::to_string(o_.cluster_x) + "x" + std::to_string(o_.cluster_y) +
                       " CTAs side by side (the importer runs the first clusters along x)");
    }
    // Every CTA of the grid runs thread by thread: a bound on the work, not on the language.
    if (o_.clusters * o_.cluster_x * o_.cluster_y > 1024) {
      return BadOption("--clusters " + std::to_string(o_.clusters) +
                       ": the importer runs at most 1024 CTAs (clusters x cluster size)");
    }
    return Status::Ok();
  }

  // A run that cannot follow a branch while a scalar argument is missing: name the argument.
  Status MissingArgOr(const Status& s) const {
    if (s.rule() != "import.unsupported-control") return s;
    std::string missing;
    for (size_t i = 0; i < f_.params.size(); ++i) {
      const Param& p = f_.params[i];
      if (p.array_size != 0 || o_.args.count(static_cast<int>(i)) > 0) continue;
      if (!missing.empty()) missing += ", ";
      missing += std::to_string(i) + " (" + p.name + ", ." + p.type + ")";
    }
    if (missing.empty()) return s;
    return Status("import.missing-arg",
                  "the control flow depends on kernel arguments that were not given: " + missing +
                      "; pass --arg INDEX=VALUE (" + s.message() + ")",
                  s.where());
  }

  Status Unsupported(const Instruction& inst, const std::string& why) const {
    return Status("import.unsupported-op", "`" + inst.opcode + "`: " + why,
                  {m_.path, inst.line, inst.column});
  }

  const TensorMapArg* TensorMapOf(const Value& v) const {
    if (v.kind != Value::Kind::kAddress) return nullptr;
    for (const TensorMapArg& t : o_.tensor_maps) {
      const std::string& name = t.index >= 0 ? f_.params[t.index].name : t.param;
      const uint64_t offset = t.index >= 0 ? 0 : static_cast<uint64_t>(t.offset);
      if (name == v.symbol && offset == v.bits) return &t;
    }
    return nullptr;
  }

  static bool IsTensorCopy(const Instruction& inst) {
    return inst.base == "cp" && inst.HasModifier("bulk") && inst.HasModifier("tensor") &&
           !inst.HasModifier("prefetch");
  }
  // cp.async.bulk.tensor.Nd.shared::cluster.global...: a load into shared memory.
  static bool IsTmaLoad(const Instruction& inst) {
    return IsTensorCopy(inst) && FirstSpace(inst).rfind("shared", 0) == 0;
  }
  // cp.async.bulk.tensor.Nd.global.shared::cta.bulk_group: a store from shared memory.
  static bool IsTmaStore(const Instruction& inst) {
    return IsTensorCopy(inst) && FirstSpace(inst) == "global";
  }

  // Barriers from the inits, buffers from the TMA destinations, and the tensor maps used.
  Status RecoverDeclarations() {
    std::vector<ThreadClass> all;
    for (const auto& cta : events_) {
      for (const auto& t : cta) all.push_back(ThreadClass{{}, t});
    }
    auto bars = RecoverBarriers(m_, f_, all);
    if (!bars.ok()) return bars.status();
    barriers_ = std::move(bars).value();
    std::set<std::string> names;
    for (BarrierArray& b : barriers_) {
      b.name = Identifier(b.name);
      while (!names.insert(b.name).second) b.name += "_";
    }
    // The regions the asynchronous copies fill or read: symbol -> offset -> bytes.
    std::map<std::string, std::map<uint64_t, int64_t>> regions;
    auto add = [&](const Instruction& inst, const std::string& symbol, uint64_t offset,
                   int64_t bytes) -> Status {
      // Copies of different sizes from one address alias (a tile stored whole, loaded in
      // parts): the largest is the region, the buffers below merge what overlaps it.
      (void)inst;
      int64_t& region = regions[symbol][offset];
      region = std::max(region, bytes);
      return Status::Ok();
    };
    for (const auto& unit : events_) {
      // cp.async copies between group boundaries and runs of st.async on one barrier fill one
      // region: the hull of the destinations of the n-th such run of every thread of the CTA
      // (per copy kind, per symbol).
      struct Hull {
        const Instruction* inst = nullptr;
        uint64_t lo = UINT64_MAX, hi = 0;
      };
      std::map<std::tuple<std::string, int, std::string>, Hull> hulls;
      for (const auto& t : unit) {
        std::map<std::string, Hull> run;
        std::string run_kind;
        Value run_bar;
        std::map<std::string, int> ordinal;
        auto close = [&]() -> Status {
          if (!run_kind.empty()) {
            const int n = ordinal[run_kind]++;
            for (const auto& [symbol, h] : run) {
              Hull& all = hulls[{run_kind, n, symbol}];
              all.inst = h.inst;
              all.lo = std::min(all.lo, h.lo);
              all.hi = std::max(all.hi, h.hi);
            }
          }
          run.clear();
          run_kind.clear();
          return Status::Ok();
        };
        for (const ProtocolEvent& e : t) {
          const Instruction& inst = f_.instructions[e.instruction];
          const auto& v = e.operands;
          const bool cp_async = inst.base == "cp" && !inst.HasModifier("bulk") &&
                                !inst.HasModifier("commit_group") &&
                                !inst.HasModifier("wait_group") &&
                                !inst.HasModifier("wait_all") && !inst.HasModifier("mbarrier");
          const bool st_async = inst.base == "st" && inst.HasModifier("async");
          if (cp_async || st_async) {
            const std::string kind = cp_async ? "cp" : "st";
            const Value bar = st_async && v.size() >= 3 ? v[2] : Value::Unknown();
            if (run_kind != kind || (st_async && !(bar == run_bar))) {
              PARITY_RETURN_IF_ERROR(close());
            }
            run_kind = kind;
            run_bar = bar;
            int64_t n = 0;
            if (cp_async) {
              n = v.size() >= 3 && v[2].kind == Value::Kind::kInt
                      ? static_cast<int64_t>(v[2].bits) : 0;
            } else {
              const StoreWidth w = ParseTypeBits(inst);
              n = w.bytes * w.vector;
            }
            auto d = v.empty() ? std::nullopt : AsShared(v[0]);
            if (!d || n <= 0) {
              return Unsupported(inst, "the destination " +
                                           (v.empty() ? std::string("?") : v[0].ToString()) +
                                           " or the size is not known");
            }
            Hull& h = run[d->symbol];
            h.inst = &inst;
            h.lo = std::min(h.lo, d->offset);
            h.hi = std::max(h.hi, d->offset + static_cast<uint64_t>(n));
            continue;
          }
          if (!run.empty() && !(inst.base == "elect")) PARITY_RETURN_IF_ERROR(close());
          if (inst.base == "cp" && inst.HasModifier("bulk") && !IsTensorCopy(inst) &&
              !inst.HasModifier("commit_group") && !inst.HasModifier("wait_group") &&
              !inst.HasModifier("prefetch") && !inst.HasModifier("reduce")) {
            // cp.async.bulk: the shared side (the destination of a load, the source of a
            // store) holds `size` bytes.
            const int side = FirstSpace(inst) == "global" ? 1 : 0;
            auto a = static_cast<size_t>(side) < v.size() ? AsShared(v[side]) : std::nullopt;
            if (!a || v.size() < 3 || v[2].kind != Value::Kind::kInt) {
              return Unsupported(inst, "the shared address or the size is not known");
            }
            PARITY_RETURN_IF_ERROR(add(inst, a->symbol, a->offset, static_cast<int64_t>(v[2].bits)));
            continue;
          }
          if (!IsTensorCopy(inst) || inst.HasModifier("reduce")) continue;
          const bool store = IsTmaStore(inst);
          const size_t map_operand = store ? 0 : 1;
          if (e.operands.size() < 2 + (store ? 0 : 1)) {
            return Unsupported(inst, "too few operands");
          }
          const TensorMapArg* tm = TensorMapOf(e.operands[map_operand]);
          if (tm == nullptr) {
            const Value& mv = e.operands[map_operand];
            for (size_t i = 0; i < f_.params.size(); ++i) {
              if (mv.kind == Value::Kind::kAddress && f_.params[i].name == mv.symbol) {
                const bool field = mv.bits != 0 || f_.params[i].array_size > 0;
                const std::string ref =
                    field ? mv.symbol + "+" + std::to_string(mv.bits) : std::to_string(i);
                return Status("import.missing-tensormap",
                              "the TMA copy uses the CUtensorMap at " + mv.symbol + "+" +
                                  std::to_string(mv.bits) + " (kernel argument " +
                                  std::to_string(i) + "); describe it with --tensormap " + ref +
                                  "=DTYPE:DIMS:BOX[:SWIZZLE]",
                              {m_.path, inst.line, inst.column});
              }
            }
            return Unsupported(inst,
                               "the tensor map is not a kernel argument (" + mv.ToString() + ")");
          }
          auto sh = AsShared(e.operands[store ? 1 : 0]);
          if (!sh || sh->cta >= 0) {
            return Unsupported(inst, "the shared address " +
                                         e.operands[store ? 1 : 0].ToString() +
                                         " is not a known address of this CTA's shared memory");
          }
          int64_t bytes = TensorMapDtypeBytes(tm->dtype);
          for (int64_t b : tm->box) bytes *= b;
          used_maps_.insert(TensorMapName(*tm));
          PARITY_RETURN_IF_ERROR(add(inst, sh->symbol, sh->offset, bytes));
        }
        PARITY_RETURN_IF_ERROR(close());
      }
      for (const auto& [key, h] : hulls) {
        PARITY_RETURN_IF_ERROR(
            add(*h.inst, std::get<2>(key), h.lo, static_cast<int64_t>(h.hi - h.lo)));
      }
    }
    // Per symbol, regions of one size evenly spaced are one buffer of slots; others are
    // buffers of one slot.
    for (const auto& [symbol, offsets] : regions) {
      std::map<int64_t, std::vector<uint64_t>> by_size;
      for (const auto& [off, b] : offsets) by_size[b].push_back(off);
      const std::string stem = ShortName(symbol);
      for (const auto& [bytes, offs] : by_size) {
        const uint64_t base = offs[0];
        const uint64_t stride = offs.size() > 1 ? offs[1] - base : 0;
        bool even = offs.size() > 1 && stride >= static_cast<uint64_t>(bytes);
        for (size_t k = 0; k < offs.size() && even; ++k) even = offs[k] == base + k * stride;
        if (even) {
          BufferInfo bi{stem, symbol, base, stride, static_cast<int>(offs.size()), bytes};
          if (base != 0) bi.name += "_" + std::to_string(base);
          buffers_.push_back(bi);
        } else {
          for (uint64_t off : offs) {
            BufferInfo bi{stem, symbol, off, static_cast<uint64_t>(bytes), 1, bytes};
            if (off != 0) bi.name += "_" + std::to_string(off);
            buffers_.push_back(bi);
          }
        }
      }
    }
    // Copies of different layouts over the same bytes (a union: FA3's output tile `smem_o`
    // aliases the V stages, flash_fwd_kernel_sm90.h) become one buffer of one slot spanning
    // both, every access at its byte offset in it, so that the aliasing stays visible to the
    // race rules rather than splitting one address into two slots.
    for (bool merged = true; merged;) {
      merged = false;
      for (size_t i = 0; i < buffers_.size() && !merged; ++i) {
        for (size_t j = i + 1; j < buffers_.size() && !merged; ++j) {
          BufferInfo& x = buffers_[i];
          const BufferInfo& y = buffers_[j];
          const uint64_t xe = x.base + x.stride * (x.slots - 1) + x.bytes;
          const uint64_t ye = y.base + y.stride * (y.slots - 1) + y.bytes;
          if (x.symbol != y.symbol || x.base >= ye || y.base >= xe) continue;
          const uint64_t lo = std::min(x.base, y.base), hi = std::max(xe, ye);
          x.name = ShortName(x.symbol) + (lo != 0 ? "_" + std::to_string(lo) : "");
          x.base = lo;
          x.stride = hi - lo;
          x.slots = 1;
          x.bytes = static_cast<int64_t>(hi - lo);
          buffers_.erase(buffers_.begin() + static_cast<std::ptrdiff_t>(j));
          merged = true;
        }
      }
    }
    std::sort(buffers_.begin(), buffers_.end(), [](const BufferInfo& x, const BufferInfo& y) {
      return std::tie(x.symbol, x.base) < std::tie(y.symbol, y.base);
    });
    std::set<std::string> bnames;
    for (const BarrierArray& b : barriers_) bnames.insert(b.name);
    for (BufferInfo& b : buffers_) {
      b.name = Identifier(b.name);
      while (bnames.count(b.name) > 0 || !names.insert(b.name).second) b.name += "_";
    }
    return Status::Ok();
  }

  // "full[{}]" (+ " @cta({})") with its integers, or an error. An address no mbarrier.init
  // covers is a kernel bug, not bad input: it becomes an element the schedule never `init`s (the
  // next element of the ring it follows, or a barrier of its own), so that `check` and `explore`
  // report M1001 at the operation (PTX ISA 9.7.13.15: an mbarrier must be initialised before any
  // other mbarrier operation on it).
  Status BarrierRef(const Instruction& inst, const Value& v, std::string* fmt,
                    std::vector<int64_t>* ints) {
    auto a = AsShared(v);
    if (!a) {
      return Unsupported(inst, "the mbarrier address " + v.ToString() +
                                   " is not a shared-memory address the importer knows");
    }
    for (int pass = 0; pass < 2; ++pass) {
      for (BarrierArray& b : barriers_) {
        if (b.symbol != a->symbol || a->offset < b.offset) continue;
        const uint64_t d = a->offset - b.offset;
        if (d % 8 != 0) continue;
        if (pass == 1 && d / 8 == static_cast<uint64_t>(b.size)) {
          ++b.size;  // the ring's next element, never initialised
        }
        if (d / 8 >= static_cast<uint64_t>(b.size)) continue;
        *fmt += b.name + "[{}]";
        ints->push_back(static_cast<int64_t>(d / 8));
        if (a->cta >= 0) {
          *fmt += " @cta({})";
          ints->push_back(a->cta);
        }
        return Status::Ok();
      }
    }
    BarrierArray b;
    b.symbol = a->symbol;
    b.offset = a->offset;
    b.count = 1;
    b.name = Identifier(ShortName(a->symbol) + "_" + std::to_string(a->offset));
    std::set<std::string> taken;
    for (const BarrierArray& x : barriers_) taken.insert(x.name);
    for (const BufferInfo& x : buffers_) taken.insert(x.name);
    while (taken.count(b.name) > 0) b.name += "_";
    barriers_.push_back(b);
    return BarrierRef(inst, v, fmt, ints);
  }

  // The buffer slot holding a shared address, or nullopt.
  std::optional<std::pair<const BufferInfo*, int>> BufferSlot(const SharedAddr& a) const {
    for (const BufferInfo& b : buffers_) {
      if (b.symbol != a.symbol || a.offset < b.base) continue;
      const uint64_t d = a.offset - b.base;
      const uint64_t slot = b.stride == 0 ? 0 : d / b.stride;
      if (slot < static_cast<uint64_t>(b.slots) &&
          d - slot * b.stride < static_cast<uint64_t>(b.bytes)) {
        return std::make_pair(&b, static_cast<int>(slot));
      }
    }
    return std::nullopt;
  }

  Expected<std::vector<OpRec>> ToOps(const std::vector<ProtocolEvent>& events) {
    std::vector<OpRec> out;
    // wgmma reads its shared operands asynchronously: a committed group's reads are `use`s where
    // a wgmma.wait_group retires the group (the kernel may reuse the slot only after that).
    std::vector<OpRec> wgmma_open;
    std::vector<std::vector<OpRec>> wgmma_groups;
    auto retire = [&](size_t keep) {
      while (wgmma_groups.size() > keep) {
        for (OpRec& u : wgmma_groups.front()) {
          if (out.empty() || !out.back().SameOp(u)) out.push_back(u);
          else out.back().ptx_lines.insert(u.ptx_lines.begin(), u.ptx_lines.end());
        }
        wgmma_groups.erase(wgmma_groups.begin());
      }
    };
    for (const ProtocolEvent& e : events) {
      const Instruction& inst = f_.instructions[e.instruction];
      const auto& v = e.operands;
      OpRec op;
      op.ptx_lines.insert(inst.line);
      const SourcePos& src = inst.call_site.known() ? inst.call_site : inst.source;
      if (src.known()) {
        auto it = m_.files.find(src.file);
        op.source = (it == m_.files.end() ? std::string("?") : Basename(it->second)) + ":" +
                    std::to_string(src.line);
      }
      const std::string& b = inst.base;
      auto int_operand = [&](size_t i, int64_t* out_v) -> Status {
        if (i < v.size()) {
          // A byte count or arrival count read from a parameter nobody gave (CUTLASS's
          // tma_transaction_bytes) is a missing option, not an unsupported kernel.
          Status missing =
              MissingParameter(m_.path, inst, "operand " + std::to_string(i + 1), v[i]);
          if (!missing.ok()) return missing;
        }
        if (i >= v.size() || v[i].kind != Value::Kind::kInt) {
          return Unsupported(
              inst, "operand " + std::to_string(i + 1) + " is not a value the importer knows (" +
                        (i < v.size() ? v[i].ToString() : std::string("absent")) + ")");
        }
        *out_v = static_cast<int64_t>(v[i].bits);
        return Status::Ok();
      };
      if (b == "elect") continue;
      if (b == "cp" && inst.HasModifier("reduce")) {
        return Unsupported(inst, "reductions into global memory are not modelled");
      }
      if (b == "mbarrier") {
        if (inst.HasModifier("init")) {
          op.fmt = "init ";
          if (v.empty()) return Unsupported(inst, "no address");
          PARITY_RETURN_IF_ERROR(BarrierRef(inst, v[0], &op.fmt, &op.ints));
          op.merge = OpRec::Merge::kOneLane;
        } else if (inst.HasModifier("inval")) {
          op.fmt = "inval ";
          if (v.empty()) return Unsupported(inst, "no address");
          PARITY_RETURN_IF_ERROR(BarrierRef(inst, v[0], &op.fmt, &op.ints));
          op.merge = OpRec::Merge::kOneLane;
        } else if (inst.HasModifier("try_wait") || inst.HasModifier("test_wait")) {
          if (!inst.HasModifier("parity")) {
            return Unsupported(inst, "a wait on a state token (only .parity waits are modelled)");
          }
          op.fmt = "wait ";
          if (v.size() < 3) return Unsupported(inst, "too few operands");
          PARITY_RETURN_IF_ERROR(BarrierRef(inst, v[1], &op.fmt, &op.ints));
          int64_t parity = 0;
          PARITY_RETURN_IF_ERROR(int_operand(2, &parity));
          op.fmt += " parity {}";
          op.ints.push_back(parity & 1);
        } else if (inst.HasModifier("arrive")) {
          if (inst.HasModifier("noComplete")) return Unsupported(inst, "not modelled");
          if (v.size() < 2) return Unsupported(inst, "too few operands");
          const bool tx = inst.HasModifier("expect_tx");
          op.fmt = tx ? "arrive.expect_tx " : "arrive ";
          PARITY_RETURN_IF_ERROR(BarrierRef(inst, v[1], &op.fmt, &op.ints));
          if (tx) {
            int64_t bytes = 0;
            PARITY_RETURN_IF_ERROR(int_operand(2, &bytes));
            op.fmt += " bytes {}";
            op.ints.push_back(bytes);
          } else if (v.size() >= 3) {
            PARITY_RETURN_IF_ERROR(int_operand(2, &op.arrive_count));
          }
          op.merge = tx ? OpRec::Merge::kOneLane : OpRec::Merge::kCountLanes;
        } else if (inst.HasModifier("expect_tx")) {
          if (v.size() < 2) return Unsupported(inst, "too few operands");
          op.fmt = "expect_tx ";
          PARITY_RETURN_IF_ERROR(BarrierRef(inst, v[0], &op.fmt, &op.ints));
          int64_t bytes = 0;
          PARITY_RETURN_IF_ERROR(int_operand(1, &bytes));
          op.fmt += " bytes {}";
          op.ints.push_back(bytes);
          op.merge = OpRec::Merge::kOneLane;
        } else {
          return Unsupported(inst, "this mbarrier operation is not modelled by the importer");
        }
      } else if (b == "fence") {
        if (inst.HasModifier("mbarrier_init")) {
          op.fmt = "fence.mbarrier_init";
        } else if (inst.HasModifier("proxy") && inst.HasModifier("async") &&
                   inst.HasModifier("global")) {
          op.fmt = "fence.proxy.async.global";
        } else if (inst.HasModifier("proxy") && inst.HasModifier("async")) {
          op.fmt = "fence.proxy.async";
        } else if (inst.HasModifier("acq_rel") && inst.HasModifier("cluster")) {
          op.fmt = "fence.acq_rel.cluster";
        } else {
          return Unsupported(inst, "this fence is not modelled by the importer");
        }
      } else if (b == "barrier" && inst.HasModifier("cluster")) {
        if (inst.HasModifier("arrive")) {
          op.fmt = inst.HasModifier("relaxed") ? "cluster.arrive relaxed" : "cluster.arrive";
        } else if (inst.HasModifier("wait")) {
          op.fmt = "cluster.wait";
        } else {
          return Unsupported(inst, "not modelled");
        }
      } else if (b == "bar" || b == "barrier") {
        const bool arrive = inst.HasModifier("arrive");
        if (!arrive && !inst.HasModifier("sync") && inst.modifiers.size() > 0 &&
            !inst.HasModifier("aligned")) {
          return Unsupported(inst, "this named-barrier form is not modelled");
        }
        int64_t id = 0;
        PARITY_RETURN_IF_ERROR(int_operand(0, &id));
        int64_t n = o_.block[0] * o_.block[1] * o_.block[2];
        if (v.size() >= 2) PARITY_RETURN_IF_ERROR(int_operand(1, &n));
        op.fmt = arrive ? "bar.arrive {}, {}" : "bar.sync {}, {}";
        op.ints = {id, n};
      } else if (IsTmaLoad(inst)) {
        if (inst.HasModifier("im2col")) {
          return Unsupported(inst, "only tiled TMA copies are modelled");
        }
        const TensorMapArg* tm = TensorMapOf(v[1]);
        op.fmt = "tma.load " + TensorMapName(*tm) + " coords [";
        PARITY_RETURN_IF_ERROR(Coords(inst, e.elements[1], &op));
        auto slot = BufferSlot(*AsShared(v[0]));
        op.fmt += "] -> " + slot->first->name + "[{}]";
        op.ints.push_back(slot->second);
        SlotOffset(*slot, *AsShared(v[0]), &op);
        op.fmt += " bar ";
        PARITY_RETURN_IF_ERROR(BarrierRef(inst, v[2], &op.fmt, &op.ints));
        if (inst.HasModifier("multicast::cluster")) {
          int64_t mask = 0;
          PARITY_RETURN_IF_ERROR(int_operand(3, &mask));
          op.fmt += " multicast {}";
          op.ints.push_back(mask & 0xffff);
        }
        op.merge = OpRec::Merge::kOneLane;
      } else if (IsTmaStore(inst)) {
        const TensorMapArg* tm = TensorMapOf(v[0]);
        op.fmt = "tma.store " + TensorMapName(*tm) + " coords [";
        PARITY_RETURN_IF_ERROR(Coords(inst, e.elements[0], &op));
        auto src = v.size() >= 2 ? AsShared(v[1]) : std::nullopt;
        auto slot = src ? BufferSlot(*src) : std::nullopt;
        if (!slot) return Unsupported(inst, "the source is not a known shared-memory address");
        op.fmt += "] <- " + slot->first->name + "[{}]";
        op.ints.push_back(slot->second);
        SlotOffset(*slot, *src, &op);
        op.merge = OpRec::Merge::kOneLane;
      } else if (b == "cp" && inst.HasModifier("bulk") &&
                 (inst.HasModifier("commit_group") || inst.HasModifier("wait_group"))) {
        if (inst.HasModifier("commit_group")) {
          op.fmt = "bulk.commit";
        } else {
          int64_t n = 0;
          PARITY_RETURN_IF_ERROR(int_operand(0, &n));
          op.fmt = inst.HasModifier("read") ? "bulk.wait {} read" : "bulk.wait {}";
          op.ints = {n};
        }
      } else if (b == "cp" && inst.HasModifier("bulk") && inst.HasModifier("prefetch")) {
        continue;  // a hint to the L2: no effect on the protocol
      } else if (b == "cp" && inst.HasModifier("bulk")) {
        const std::string dst = FirstSpace(inst);
        if (dst == "global") {
          // cp.async.bulk.global.shared::cta.bulk_group [dst], [src], size
          int64_t n = 0;
          PARITY_RETURN_IF_ERROR(int_operand(2, &n));
          auto src = AsShared(v[1]);
          auto slot = src ? BufferSlot(*src) : std::nullopt;
          if (!slot) return Unsupported(inst, "the source is not a known shared-memory address");
          op.fmt = "bulk.store " + slot->first->name + "[{}]";
          op.ints = {slot->second};
          SlotRange(*slot, *src, n, &op);
        } else if (dst.rfind("shared", 0) == 0 && FirstSpace(inst, 1) == "global") {
          // cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [dst], [src],
          // size, [mbar]{, ctaMask}
          int64_t n = 0;
          PARITY_RETURN_IF_ERROR(int_operand(2, &n));
          auto d = AsShared(v[0]);
          auto slot = d && d->cta < 0 ? BufferSlot(*d) : std::nullopt;
          if (!slot) {
            return Unsupported(inst, "the destination is not a known address of this CTA's "
                                     "shared memory");
          }
          op.fmt = "bulk.load " + slot->first->name + "[{}]";
          op.ints = {slot->second};
          SlotRange(*slot, *d, n, &op);
          op.fmt += " bar ";
          PARITY_RETURN_IF_ERROR(BarrierRef(inst, v[3], &op.fmt, &op.ints));
          if (inst.HasModifier("multicast::cluster")) {
            int64_t mask = 0;
            PARITY_RETURN_IF_ERROR(int_operand(4, &mask));
            op.fmt += " multicast {}";
            op.ints.push_back(mask & 0xffff);
          }
        } else {
          return Unsupported(inst, "only bulk copies global -> shared and shared -> global "
                                   "are modelled");
        }
        op.merge = OpRec::Merge::kOneLane;
      } else if (b == "cp" && inst.HasModifier("commit_group")) {
        op.fmt = "cp.async.commit";
      } else if (b == "cp" && inst.HasModifier("wait_group")) {
        int64_t n = 0;
        PARITY_RETURN_IF_ERROR(int_operand(0, &n));
        op.fmt = "cp.async.wait {}";
        op.ints = {n};
      } else if (b == "cp" && inst.HasModifier("wait_all")) {
        op.fmt = "cp.async.wait_all";
      } else if (b == "cp" && inst.HasModifier("mbarrier") && inst.HasModifier("arrive")) {
        op.fmt = "cp.async.arrive ";
        if (v.empty()) return Unsupported(inst, "no address");
        PARITY_RETURN_IF_ERROR(BarrierRef(inst, v[0], &op.fmt, &op.ints));
        if (inst.HasModifier("noinc")) op.fmt += " noinc";
        op.merge = OpRec::Merge::kLaneLoop;
      } else if (b == "cp") {
        // cp.async.ca/cg.shared.global [dst], [src], cp-size{, src-size}{, cache-policy}
        int64_t n = 0;
        PARITY_RETURN_IF_ERROR(int_operand(2, &n));
        auto d = AsShared(v[0]);
        auto slot = d && d->cta < 0 ? BufferSlot(*d) : std::nullopt;
        if (!slot) {
          return Unsupported(inst, "the destination " + v[0].ToString() +
                                       " is not a known address of this CTA's shared memory");
        }
        op.fmt = "cp.async " + slot->first->name + "[{}]";
        op.ints = {slot->second};
        op.slot_bytes = slot->first->bytes;
        op.lo = static_cast<int64_t>(d->offset - slot->first->base -
                                     slot->second * slot->first->stride);
        op.hi = op.lo + n;
        op.sum = n;
        op.merge = OpRec::Merge::kUnion;
      } else if (b == "st" && inst.HasModifier("async")) {
        // st.async.shared::cluster.mbarrier::complete_tx::bytes{.vN}.type [addr], v, [bar]
        auto d = AsShared(v[0]);
        auto bar = v.size() >= 3 ? AsShared(v[2]) : std::nullopt;
        auto slot = d ? BufferSlot(*d) : std::nullopt;
        if (!slot || !bar) {
          return Unsupported(inst, "the destination or the barrier is not a known "
                                   "shared-memory address");
        }
        if (bar->cta != d->cta) {
          return Unsupported(inst, "the data and the barrier are in different CTAs");
        }
        int64_t n = 0;
        const StoreWidth w = ParseTypeBits(inst);
        n = w.bytes * w.vector;
        if (n == 0) return Unsupported(inst, "the store's width is not known");
        op.fmt = "st.async " + slot->first->name + "[{}]";
        op.ints = {slot->second};
        op.slot_bytes = slot->first->bytes;
        op.lo = static_cast<int64_t>(d->offset - slot->first->base -
                                     slot->second * slot->first->stride);
        op.hi = op.lo + n;
        op.sum = n;
        op.contiguous = true;
        op.merge = OpRec::Merge::kUnion;
        op.tail = d->cta >= 0 ? " @cta({}) bar " : " bar ";
        if (d->cta >= 0) op.tail_ints.push_back(d->cta);
        SharedAddr local = *bar;
        local.cta = -1;
        PARITY_RETURN_IF_ERROR(BarrierRef(inst, Value::Address(local.symbol, local.offset),
                                          &op.tail, &op.tail_ints));
      } else if (b == "wgmma") {
        if (inst.HasModifier("fence")) continue;
        if (inst.HasModifier("commit_group")) {
          wgmma_groups.push_back(std::move(wgmma_open));
          wgmma_open.clear();
          continue;
        }
        if (inst.HasModifier("wait_group")) {
          int64_t n = 0;
          PARITY_RETURN_IF_ERROR(int_operand(0, &n));
          retire(static_cast<size_t>(n));
          continue;
        }
        // wgmma.mma_async: the operands that are (descriptors of) shared addresses.
        for (const Value& x : v) {
          if (x.kind != Value::Kind::kDerived && x.kind != Value::Kind::kAddress) continue;
          auto slot = BufferSlot(SharedAddr{x.symbol, x.bits, -1});
          if (!slot) continue;
          OpRec u = op;
          // wgmma reads its shared operands through the async proxy (docs/language.md §8.8):
          // a `write` of those bytes before it needs fence.proxy.async (P2006).
          u.fmt = "use.async " + slot->first->name + "[{}]";
          u.ints = {slot->second};
          if (std::none_of(wgmma_open.begin(), wgmma_open.end(),
                           [&](const OpRec& w) { return w.SameOp(u); })) {
            wgmma_open.push_back(u);
          }
        }
        continue;
      } else if (b == "ld" || b == "st" || b == "ldmatrix" || b == "stmatrix") {
        const bool write = b == "st" || b == "stmatrix";
        const size_t ai = write ? 0 : 1;
        auto a = ai < v.size() ? AsShared(v[ai]) : std::nullopt;
        if (!a) {
          return Unsupported(inst,
                             "a shared-memory access at an address the importer does not "
                             "know");
        }
        auto slot = BufferSlot(*a);
        if (!slot) continue;  // outside every buffer the asynchronous copies fill
        // ldmatrix / stmatrix: each lane gives one 16-byte row of a matrix.
        const StoreWidth w = ParseTypeBits(inst);
        const int64_t n = b == "ldmatrix" || b == "stmatrix" ? 16 : w.bytes * w.vector;
        // ld.shared / ldmatrix read through the generic proxy: a TMA or bulk write of the bytes
        // after them needs fence.proxy.async on the path (P2006, DeepEP #621's write-after-read),
        // checked when the reads say so (ImportOptions::generic_reads).
        op.fmt = std::string(write ? "write " : o_.generic_reads ? "use.generic " : "use ") +
                 slot->first->name + "[{}]";
        op.ints.push_back(slot->second);
        op.lo = static_cast<int64_t>(a->offset - slot->first->base -
                                     slot->second * slot->first->stride);
        op.hi = op.lo + std::max<int64_t>(n, 1);
        op.sum = op.hi - op.lo;
        op.slot_bytes = slot->first->bytes;
        op.merge = OpRec::Merge::kUnion;
      } else {
        return Unsupported(inst, "the importer does not model this instruction yet");
      }
      // A lane's consecutive accesses of adjacent or overlapping bytes of one slot are one
      // operation over their union.
      if (op.merge == OpRec::Merge::kUnion && !out.empty() && out.back().SameOp(op) &&
          op.lo <= out.back().hi && op.hi >= out.back().lo) {
        out.back().Unite(op);
        continue;
      }
      out.push_back(std::move(op));
    }
    // Groups never waited for are read before the kernel ends.
    wgmma_groups.push_back(std::move(wgmma_open));
    retire(0);
    return out;
  }

  // The first (k = 0) or second (k = 1) state space among an instruction's modifiers: a copy's
  // destination then its source.
  static std::string FirstSpace(const Instruction& inst, int k = 0) {
    for (const std::string& m : inst.modifiers) {
      if (m == "global" || m.rfind("shared", 0) == 0) {
        if (k-- == 0) return m;
      }
    }
    return "";
  }

  struct StoreWidth {
    int64_t bytes = 0;
    int64_t vector = 1;
  };
  // The bytes of st.async's element type and its vector width.
  static StoreWidth ParseTypeBits(const Instruction& inst) {
    StoreWidth w;
    for (const std::string& m : inst.modifiers) {
      if (m == "v2") w.vector = 2;
      if (m == "v4") w.vector = 4;
      if (m.size() >= 3 && (m[0] == 'b' || m[0] == 'u' || m[0] == 's' || m[0] == 'f') &&
          std::isdigit(static_cast<unsigned char>(m[1]))) {
        w.bytes = std::atoi(m.c_str() + 1) / 8;
      }
    }
    return w;
  }

  Status Coords(const Instruction& inst, const std::vector<Value>& coords, OpRec* op) const {
    for (size_t i = 0; i < coords.size(); ++i) {
      if (coords[i].kind != Value::Kind::kInt) {
        // A coordinate computed from a parameter nobody gave (FA3's head index from the
        // scheduler's fields) is a missing option, not an unsupported kernel.
        Status missing =
            MissingParameter(m_.path, inst, "coordinate " + std::to_string(i), coords[i]);
        if (!missing.ok()) return missing;
        return Unsupported(inst, "coordinate " + std::to_string(i) +
                                     " is a value the importer does not know (" +
                                     coords[i].ToString() + ")");
      }
      op->fmt += i ? ", {}" : "{}";
      op->ints.push_back(SignExtend32(coords[i].bits));
    }
    return Status::Ok();
  }

  // A tensor copy's box at its offset in the slot (a buffer merged from aliased layouts).
  static void SlotOffset(const std::pair<const BufferInfo*, int>& slot, const SharedAddr& a,
                         OpRec* op) {
    const uint64_t off = a.offset - slot.first->base - slot.second * slot.first->stride;
    if (off != 0) {
      op->fmt += " + {}";
      op->ints.push_back(static_cast<int64_t>(off));
    }
  }

  // ` + OFF bytes N` of a bulk copy (OFF omitted when 0, bytes when the copy fills the slot).
  static void SlotRange(const std::pair<const BufferInfo*, int>& slot, const SharedAddr& a,
                        int64_t n, OpRec* op) {
    const int64_t off = static_cast<int64_t>(a.offset - slot.first->base -
                                             slot.second * slot.first->stride);
    if (off != 0) {
      op->fmt += " + {}";
      op->ints.push_back(off);
    }
    if (off != 0 || n != slot.first->bytes) {
      op->fmt += " bytes {}";
      op->ints.push_back(n);
    }
  }

  static int64_t SignExtend32(uint64_t v) {
    return static_cast<int64_t>(static_cast<int32_t>(static_cast<uint32_t>(v)));
  }

  // One agent per warp: every lane's operations must be a subsequence of the leading lane's.
  Expected<std::vector<OpRec>> MergeLanes(uint32_t cta, uint32_t warp,
                                          std::vector<std::vector<OpRec>>& lanes) const {
    size_t lead = 0;
    for (size_t l = 1; l < lanes.size(); ++l) {
      if (lanes[l].size() > lanes[lead].size()) lead = l;
    }
    std::vector<OpRec> merged = lanes[lead];
    for (OpRec& op : merged) op.lanes = 1;
    // Lanes that diverge (`if (lane == 0) A else B`, then together again) merge into the
    // shortest sequence holding every lane's operations in its order: common operations are one
    // (issued by several lanes), the others keep their place, a lane's before another's.
    for (size_t l = 0; l < lanes.size(); ++l) {
      if (l == lead) continue;
      const std::vector<OpRec>& lane = lanes[l];
      const size_t n = merged.size(), m = lane.size();
      if (m > 0 && n * m > 64'000'000) {
        return Status("import.divergent-warp",
                      "warp " + std::to_string(warp) + " of CTA " + std::to_string(cta) +
                          " issues too many operations per lane to merge its lanes");
      }
      // lcs[i][j]: the longest common subsequence of merged[i..] and lane[j..].
      std::vector<std::vector<uint32_t>> lcs(n + 1, std::vector<uint32_t>(m + 1, 0));
      for (size_t i = n; i-- > 0;) {
        for (size_t j = m; j-- > 0;) {
          lcs[i][j] = merged[i].SameOp(lane[j]) ? lcs[i + 1][j + 1] + 1
                                                : std::max(lcs[i + 1][j], lcs[i][j + 1]);
        }
      }
      // Between common operations, each side's own operations. The side that does not block
      // runs after the other side's operations before its first blocking one, and before that
      // one: its reads and releases then see the other side's copies and releases issued, and
      // none of its operations waits for the other side's wait. Two sides that both block
      // cannot be one agent.
      std::vector<OpRec> next;
      next.reserve(n + m);
      std::vector<OpRec> mine, theirs;
      auto flush = [&]() -> Status {
        const bool mine_blocks = std::any_of(mine.begin(), mine.end(), Blocks);
        const bool theirs_blocks = std::any_of(theirs.begin(), theirs.end(), Blocks);
        if (mine_blocks && theirs_blocks) {
          const OpRec& op = theirs.front();
          return Status("import.divergent-warp",
                        "lanes " + std::to_string(lead) + " and " + std::to_string(l) +
                            " of warp " + std::to_string(warp) + " of CTA " +
                            std::to_string(cta) + " block on different operations (lane " +
                            std::to_string(l) + ": `" + Render(op, {}) + "`, PTX line " +
                            std::to_string(*op.ptx_lines.begin()) +
                            "); the importer models a warp as one agent");
        }
        if (mine_blocks || theirs_blocks) {
          std::vector<OpRec>& blocking = mine_blocks ? mine : theirs;
          std::vector<OpRec>& other = mine_blocks ? theirs : mine;
          const auto first_block = std::find_if(blocking.begin(), blocking.end(), Blocks);
          next.insert(next.end(), blocking.begin(), first_block);
          next.insert(next.end(), other.begin(), other.end());
          next.insert(next.end(), first_block, blocking.end());
          mine.clear();
          theirs.clear();
          return Status::Ok();
        }
        next.insert(next.end(), mine.begin(), mine.end());
        next.insert(next.end(), theirs.begin(), theirs.end());
        mine.clear();
        theirs.clear();
        return Status::Ok();
      };
      size_t i = 0, j = 0;
      while (i < n || j < m) {
        if (i < n && j < m && merged[i].SameOp(lane[j]) && lcs[i][j] == lcs[i + 1][j + 1] + 1) {
          PARITY_RETURN_IF_ERROR(flush());
          OpRec op = merged[i];
          ++op.lanes;
          if (op.merge == OpRec::Merge::kUnion) {
            op.Unite(lane[j]);
          } else {
            op.ptx_lines.insert(lane[j].ptx_lines.begin(), lane[j].ptx_lines.end());
          }
          next.push_back(std::move(op));
          ++i;
          ++j;
        } else if (i < n && (j == m || lcs[i + 1][j] >= lcs[i][j + 1])) {
          mine.push_back(merged[i++]);
        } else {
          theirs.push_back(lane[j++]);
        }
      }
      PARITY_RETURN_IF_ERROR(flush());
      merged = std::move(next);
    }
    for (OpRec& op : merged) {
      if (op.merge == OpRec::Merge::kOneLane && op.lanes > 1) {
        return Status("import.divergent-warp",
                      std::to_string(op.lanes) + " lanes of warp " + std::to_string(warp) +
                          " of CTA " + std::to_string(cta) + " each issue `" + Render(op, {}) +
                          "` (PTX line " + std::to_string(*op.ptx_lines.begin()) +
                          "); the importer models it issued by one lane");
      }
      if (op.merge == OpRec::Merge::kUnion) {
        if (op.contiguous && op.sum != op.hi - op.lo) {
          return Status("import.divergent-warp",
                        "the lanes of warp " + std::to_string(warp) + " of CTA " +
                            std::to_string(cta) + " issue `" + Render(op, {}) + "` (PTX line " +
                            std::to_string(*op.ptx_lines.begin()) + ") on " +
                            std::to_string(op.sum) + " bytes that do not tile one range of " +
                            std::to_string(op.hi - op.lo) +
                            "; the importer models the warp's copies as one");
        }
        // Part of a slot: ` + OFF bytes N` (also for OFF 0, so that the operations of a loop
        // over a slot's parts share one form).
        if (op.lo != 0 || op.hi != op.slot_bytes) {
          op.fmt += " + {} bytes {}";
          op.ints.push_back(op.lo);
          op.ints.push_back(op.hi - op.lo);
        }
        op.fmt += op.tail;
        op.ints.insert(op.ints.end(), op.tail_ints.begin(), op.tail_ints.end());
        op.tail.clear();
        op.tail_ints.clear();
        op.merge = OpRec::Merge::kCollapse;
      }
      if (op.merge == OpRec::Merge::kLaneLoop) {
        // One deferred arrive-on per lane: the barrier counts threads.
        if (op.lanes > 1) {
          op.fmt = "for l in 0 .. {} { " + op.fmt + " }";
          op.ints.insert(op.ints.begin(), op.lanes);
        }
        op.merge = OpRec::Merge::kCollapse;
      }
      if (op.merge == OpRec::Merge::kCountLanes) {
        const int64_t total = op.arrive_count * op.lanes;
        if (total != 1) {
          op.fmt += " count {}";
          op.ints.push_back(total);
        }
        op.merge = OpRec::Merge::kCollapse;
      }
    }
    return merged;
  }

  // Whether a warp issuing `ops` can be the next agent of `role`: the same operations, with
  // every integer operand either the same or the first agent's plus the agent's index times a
  // step (a warp's own part of a tile: `use t[0] + 64 * agent bytes 64`). Sets the steps.
  static bool JoinRole(RoleRec* role, const std::vector<OpRec>& ops) {
    std::vector<OpRec>& first = role->ops;
    if (first.size() != ops.size()) return false;
    const int64_t j = role->count;  // the joining agent's index
    for (size_t i = 0; i < ops.size(); ++i) {
      const OpRec& a = first[i];
      const OpRec& b = ops[i];
      if (a.fmt != b.fmt || a.arrive_count != b.arrive_count || a.ints.size() != b.ints.size()) {
        return false;
      }
      for (size_t s = 0; s < a.ints.size(); ++s) {
        const int64_t d = a.agent_delta.empty() ? 0 : a.agent_delta[s];
        if (j == 1 ? false : b.ints[s] != a.ints[s] + j * d) return false;
      }
    }
    if (j == 1) {
      for (size_t i = 0; i < ops.size(); ++i) {
        OpRec& a = first[i];
        a.agent_delta.assign(a.ints.size(), 0);
        bool any = false;
        for (size_t s = 0; s < a.ints.size(); ++s) {
          a.agent_delta[s] = ops[i].ints[s] - a.ints[s];
          any = any || a.agent_delta[s] != 0;
        }
        if (!any) a.agent_delta.clear();
      }
    }
    return true;
  }

  // Whether an operation may block its agent (a wait of any kind, a barrier).
  static bool Blocks(const OpRec& op) {
    for (const char* w : {"wait ", "bar.sync", "cluster.wait", "cp.async.wait", "bulk.wait"}) {
      if (op.fmt.rfind(w, 0) == 0) return true;
    }
    return false;
  }

  // The op's text with its integers replaced by `exprs` (or the values themselves).
  static std::string Render(const OpRec& op, const std::vector<std::string>& exprs) {
    std::string out;
    size_t k = 0;
    for (size_t i = 0; i < op.fmt.size(); ++i) {
      if (op.fmt.compare(i, 2, "{}") == 0) {
        std::string e = k < exprs.size() ? exprs[k] : std::to_string(op.ints[k]);
        const std::pair<const std::vector<int64_t>*, const char*> terms[] = {
            {&op.agent_delta, "agent"},
            {&op.cluster_delta, "cluster_id"},
            {&op.rank_delta, "cta_rank"},
        };
        bool first_term = true;
        for (const auto& [deltas, name] : terms) {
          const int64_t d = deltas->empty() ? 0 : (*deltas)[k];
          if (d == 0) continue;
          if (first_term) {
            const bool plain = std::all_of(e.begin(), e.end(), [](char c) {
              return std::isdigit(static_cast<unsigned char>(c)) || c == 'k';
            });
            if (e == "0") {
              e.clear();
            } else if (!plain) {
              e = "(" + e + ")";
            }
            first_term = false;
          }
          const std::string term =
              (d == 1 || d == -1 ? "" : std::to_string(d < 0 ? -d : d) + " * ") + name;
          e = e.empty() ? (d < 0 ? "0 - " + term : term) : e + (d < 0 ? " - " : " + ") + term;
        }
        out += e;
        ++k;
        ++i;
      } else {
        out += op.fmt[i];
      }
    }
    return out;
  }

  std::string Comment(const std::set<int>& lines, const std::string& source) const {
    std::string c = "# " + Basename(m_.path) + ":";
    int shown = 0;
    for (int l : lines) {
      if (shown == 8) {
        c += ",...";
        break;
      }
      c += (shown++ ? "," : "") + std::to_string(l);
    }
    if (!source.empty()) c += " (" + source + ")";
    return c;
  }

  static std::pair<std::string, size_t> Fit(const std::vector<int64_t>& v, int64_t off = 0) {
    return FitLoopExpression(v, off);
  }

  struct Loop {
    size_t period = 0;
    size_t reps = 0;
    std::vector<std::vector<std::string>> exprs;  // per op of the body, per integer
  };

  static size_t Length(const std::vector<std::vector<std::string>>& exprs) {
    size_t n = 0;
    for (const auto& v : exprs) {
      for (const std::string& e : v) n += e.size();
    }
    return n;
  }

  // The loop's expressions with k running from `off`; nullopt unless every value fits.
  static std::optional<std::vector<std::vector<std::string>>> Refit(const std::vector<OpRec>& ops,
                                                                    size_t i, const Loop& loop,
                                                                    int64_t off) {
    std::vector<std::vector<std::string>> out;
    for (size_t q = 0; q < loop.period; ++q) {
      std::vector<std::string> exprs;
      for (size_t s = 0; s < ops[i + q].ints.size(); ++s) {
        std::vector<int64_t> vals;
        for (size_t r = 0; r < loop.reps; ++r) vals.push_back(ops[i + r * loop.period + q].ints[s]);
        auto [e, n] = Fit(vals, off);
        if (n < vals.size()) return std::nullopt;
        exprs.push_back(e);
      }
      out.push_back(exprs);
    }
    return out;
  }

  std::optional<Loop> FindLoop(const std::vector<OpRec>& ops, size_t i) const {
    std::optional<Loop> best;
    for (size_t p = 1; p <= 16 && i + 2 * p <= ops.size(); ++p) {
      size_t reps = 1;
      while (i + (reps + 1) * p <= ops.size()) {
        bool same = true;
        for (size_t q = 0; q < p && same; ++q) {
          const OpRec& a = ops[i + q];
          const OpRec& b = ops[i + reps * p + q];
          same = a.fmt == b.fmt && a.arrive_count == b.arrive_count &&
                 a.ints.size() == b.ints.size() && a.agent_delta == b.agent_delta &&
                 a.cluster_delta == b.cluster_delta && a.rank_delta == b.rank_delta;
        }
        if (!same) break;
        ++reps;
      }
      if (reps < 2) continue;
      Loop loop{p, reps, {}};
      bool varies = false;
      for (size_t q = 0; q < p; ++q) {
        std::vector<std::string> exprs;
        for (size_t s = 0; s < ops[i + q].ints.size(); ++s) {
          std::vector<int64_t> vals;
          for (size_t r = 0; r < reps; ++r) vals.push_back(ops[i + r * p + q].ints[s]);
          auto [e, n] = Fit(vals);
          if (n < vals.size()) loop.reps = std::min(loop.reps, n);
          if (vals[0] != vals[1]) varies = true;
          exprs.push_back(e);
        }
        loop.exprs.push_back(exprs);
      }
      if (loop.reps < 2 || (loop.reps < 3 && !varies)) continue;
      if (loop.reps < reps) {
        // Refit over the shorter range (a shorter prefix can only fit the same expressions).
        loop.exprs.clear();
        for (size_t q = 0; q < p; ++q) {
          std::vector<std::string> exprs;
          for (size_t s = 0; s < ops[i + q].ints.size(); ++s) {
            std::vector<int64_t> vals;
            for (size_t r = 0; r < loop.reps; ++r) vals.push_back(ops[i + r * p + q].ints[s]);
            exprs.push_back(Fit(vals).first);
          }
          loop.exprs.push_back(exprs);
        }
      }
      if (!best || loop.period * loop.reps > best->period * best->reps) best = loop;
    }
    return best;
  }

  void EmitBody(std::ostream& out, const std::vector<OpRec>& ops) {
    auto line = [&](const std::string& indent, const std::string& text, const std::string& c) {
      std::string l = indent + text;
      if (l.size() < 48) l.resize(48, ' ');
      out << l << "  " << c << "\n";
    };
    size_t straight = 0;
    bool looped = false;
    for (size_t i = 0; i < ops.size();) {
      auto loop = FindLoop(ops, i);
      if (!loop) {
        line("  ", Render(ops[i], {}), Comment(ops[i].ptx_lines, ops[i].source));
        ++straight;
        ++i;
        continue;
      }
      looped = true;
      // A trip count that is a kernel argument, possibly after `lo` peeled iterations (a
      // producer's first STAGES iterations skip the empty wait): k runs lo .. ARG.
      std::string hi = std::to_string(loop->reps);
      int64_t lo = 0;
      for (const auto& [index, value] : o_.args) {
        const int64_t peeled = static_cast<int64_t>(value) - static_cast<int64_t>(loop->reps);
        if (peeled < 0 || peeled > 64) continue;
        if (peeled > 0) {
          // Only where k from `peeled` reads more simply than k from 0 (the kernel's own
          // index); otherwise the peeled loop is a different one that happens to fit.
          auto shifted = Refit(ops, i, *loop, peeled);
          if (!shifted || Length(*shifted) > Length(loop->exprs)) continue;
          loop->exprs = std::move(*shifted);
        }
        lo = peeled;
        hi = "ARG" + std::to_string(index);
        used_args_.insert(index);
        break;
      }
      out << "  for k in " << lo << " .. " << hi << " {"
          << (hi[0] == 'A' ? "" : "   # the trip count for the given arguments") << "\n";
      for (size_t q = 0; q < loop->period; ++q) {
        std::set<int> lines;
        for (size_t r = 0; r < loop->reps; ++r) {
          const auto& l = ops[i + r * loop->period + q].ptx_lines;
          lines.insert(l.begin(), l.end());
        }
        line("    ", Render(ops[i + q], loop->exprs[q]), Comment(lines, ops[i + q].source));
      }
      out << "  }\n";
      i += loop->period * loop->reps;
    }
    if (!looped && straight > 8) {
      out << "  # straight-line: no repeated operation sequence was found to re-roll\n";
    }
  }

  void EmitHeader(std::ostream& out) {
    out << "# Imported by `parity import` from " << Basename(m_.path) << ", entry "
        << Demangle(f_.name) << "\n";
    out << "# block " << o_.block[0] << "," << o_.block[1] << "," << o_.block[2] << ", cluster "
        << o_.cluster_x << "x" << o_.cluster_y;
    for (const auto& [index, value] : o_.args) {
      if (o_.launch_args.count(index) == 0) out << ", arg " << index << " = " << value;
    }
    for (const ParamArg& p : o_.params) out << ", param " << p.spec;
    if (!o_.launch.empty()) out << ", " << o_.launch;
    out << "\n# Each operation names the PTX lines (and the CUDA source line) it came from. The "
           "schedule\n# issues exactly the kernel's operations for these arguments; a -D ARGn "
           "override changes\n# only the loops whose bound names ARGn.\n";
    out << "schedule " << Identifier(BareName(Demangle(f_.name))) << "\n\n";
    std::ostringstream& d = decls_;
    d << "cluster " << o_.cluster_x << "x" << o_.cluster_y << "\n";
    d << "clusters " << o_.clusters << "\n\n";
    for (const BufferInfo& b : buffers_) {
      d << "buffer " << b.name << "[" << b.slots << "] bytes " << b.bytes << "   # "
        << ShortName(b.symbol) << " + " << b.base;
      if (b.slots > 1) d << " + " << b.stride << " * slot";
      d << " (asynchronous copies)\n";
    }
    for (const BarrierArray& b : barriers_) {
      d << "barrier " << b.name << "[" << b.size << "] count " << b.count << "   # "
        << ShortName(b.symbol) << " + " << b.offset;
      if (!b.init_lines.empty()) d << ", init at " << Basename(m_.path) << ":";
      for (size_t i = 0; i < b.init_lines.size(); ++i) {
        d << (i ? "," : "") << b.init_lines[i];
      }
      if (b.init_lines.empty()) {
        d << ", never initialised: no mbarrier.init covers it (a use is M1001)";
      } else if (static_cast<int>(b.init_lines.size()) < b.size) {
        const size_t first = b.init_lines.size();
        const int last = b.size - 1;
        d << (static_cast<int>(first) == last ? "; element " + std::to_string(first)
                                              : "; elements " + std::to_string(first) + ".." +
                                                    std::to_string(last))
          << " never initialised: no mbarrier.init covers it (a use is M1001)";
      }
      d << "\n";
    }
    for (const TensorMapArg& t : o_.tensor_maps) {
      if (used_maps_.count(TensorMapName(t)) == 0) continue;
      d << "tensormap " << TensorMapName(t) << " dtype " << t.dtype << " dims [";
      for (size_t i = 0; i < t.dims.size(); ++i) d << (i ? ", " : "") << t.dims[i];
      d << "] box [";
      for (size_t i = 0; i < t.box.size(); ++i) d << (i ? ", " : "") << t.box[i];
      d << "]";
      if (t.swizzle != "none") d << " swizzle " << t.swizzle;
      if (t.index >= 0) {
        d << "   # kernel argument " << t.index << "\n";
      } else {
        d << "   # the CUtensorMap at " << t.param << "+" << t.offset << "\n";
      }
    }
  }

  const Module& m_;
  const Function& f_;
  const ImportOptions& o_;
  uint32_t ctas_ = 1;  // CTAs per cluster
  std::vector<std::vector<std::vector<ProtocolEvent>>> events_;
  std::vector<BarrierArray> barriers_;
  std::vector<BufferInfo> buffers_;
  std::set<std::string> used_maps_;
  std::set<int> used_args_;
  std::ostringstream decls_;
};

}  // namespace

Expected<std::string> ImportSchedule(const Module& module, const ImportOptions& options) {
  PARITY_RETURN_IF_ERROR(RequireHopperTarget(module));
  auto entry = FindEntry(module, options.entry);
  if (!entry.ok()) return entry.status();
  ImportOptions expanded = options;
  ExpandParamNames(**entry, &expanded);
  return Importer(module, **entry, expanded).Run();
}

}  // namespace parity::ptx
