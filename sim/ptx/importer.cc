// `parity import`'s driver: every thread of the cluster runs (RunWarp), each warp's lanes merge
// into one agent, and warps alike form roles.
#include "sim/ptx/importer.h"

#include <algorithm>
#include <cctype>
#include <climits>
#include <cstdint>
#include <cstdlib>
#include <iterator>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <tuple>
#include <utility>

#include "sim/ptx/import_text.h"
#include "sim/ptx/importer_internal.h"
#include "sim/ptx/cta_memory.h"
#include "sim/ptx/thread_exec.h"
#include "sim/ptx/wait_results.h"

namespace parity::ptx::importer_internal {

Expected<std::string> Importer::Run() {
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
  ImportMemory memory;  // values the control path reads back from memory (cta_memory.h)
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
    ctx.lockstep = o_.lockstep;
    ctx.memory = &memory;
    ctx.unit = u;
    // A warp's lanes run together: shuffles and votes read each other's values.
    for (uint32_t w = 0; 32 * w < threads; ++w) {
      auto lanes = RunWarp(m_, f_, ctx, w);
      if (!lanes.ok()) return MissingArgOr(lanes.status());
      for (auto& ev : *lanes) events_[u].push_back(std::move(ev));
      memory.WarpDone(u, w);
    }
  }
  PARITY_RETURN_IF_ERROR(memory.Finish());
  PARITY_RETURN_IF_ERROR(CheckParamsRead(f_, o_, param_reads));
  PARITY_RETURN_IF_ERROR(RecoverDeclarations());
  NameBarriersByRole();
  FindSharedFrames();
  wait_results_read_ = WaitResultsRead(f_);
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
    std::vector<std::vector<OpRec>> warp_ops(warps);
    for (uint32_t w = 0; w < warps; ++w) {
      const uint32_t first = 32 * w;
      const uint32_t last = std::min(threads, first + 32);
      std::vector<std::vector<OpRec>> lanes;
      std::vector<ProtocolEvent> previous;  // the events of lane t - 1
      for (uint32_t t = first; t < last; ++t) {
        std::vector<ProtocolEvent>& events = events_[u][t];
        // Lanes that run in lockstep issue the same events, and ToOps is a function of the
        // events (the barriers it adds for an address no init covers are found again): such a
        // lane's operations are the previous lane's.
        if (t > first && events == previous) {
          lanes.push_back(lanes.back());
        } else {
          auto ops = ToOps(events);
          if (!ops.ok()) return ops.status();
          lanes.push_back(std::move(ops).value());
        }
        // The thread's operations replace its events (the largest part of the import's memory).
        previous = std::move(events);
        std::vector<ProtocolEvent>().swap(events);
      }
      auto merged = MergeLanes(u, w, lanes);
      if (!merged.ok()) return merged.status();
      warp_ops[w] = std::move(merged).value();
    }
    SplitAccesses(&warp_ops);
    std::vector<RoleRec> tensor_roles;
    PARITY_RETURN_IF_ERROR(LowerWgmma(u, &warp_ops, &tensor_roles));
    for (uint32_t w = 0; w < warps; ++w) {
      const uint32_t first = 32 * w;
      const uint32_t last = std::min(threads, first + 32);
      std::vector<OpRec>& merged = warp_ops[w];
      if (merged.empty()) continue;
      bool placed = false;
      for (RoleRec& role : unit_roles[u]) {
        if (role.threads == static_cast<int>(last - first) && JoinRole(&role, merged)) {
          ++role.count;
          role.warps.push_back(static_cast<int>(w));
          placed = true;
          break;
        }
      }
      if (!placed) {
        unit_roles[u].push_back(RoleRec{std::move(merged), 1,
                                        static_cast<int>(last - first),
                                        {static_cast<int>(w)}, ""});
      }
    }
    for (RoleRec& role : tensor_roles) unit_roles[u].push_back(std::move(role));
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
  out << decls_.str();
  if (!wgmma_barriers_.empty()) {
    // import_wgmma.cc: each warpgroup's wgmma as one operation of a tensor-core agent.
    out << "\n# wgmma: the warps of a warpgroup issue (wgmma_issued), its tensor core reads the "
           "operands and completes the group (wgmma_done)\n";
    for (const auto& [name, ring] : wgmma_barriers_) {
      out << "barrier " << name << "[" << ring.first << "] count " << ring.second << "\n";
    }
    out << "named_barrier wgmma_start = " << wgmma_start_id_ << "\n";
  }
  out << roles.str();
  return out.str();
}

// The same role up to integer operands (which may differ from CTA to CTA).
bool Importer::SameShapeRole(const RoleRec& a, const RoleRec& b) {
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
void Importer::EmitRoles(std::ostream& roles, std::vector<std::vector<RoleRec>>& unit_roles) {
  const uint32_t units = static_cast<uint32_t>(unit_roles.size());
  std::vector<std::vector<bool>> emitted(units);
  for (uint32_t u = 0; u < units; ++u) emitted[u].assign(unit_roles[u].size(), false);
  auto emit = [&](const RoleRec& role, int cluster, int cta) {
    std::string name = role.name;
    if (name.empty()) {
      name = "warp" + std::to_string(role.warps[0]);
      if (role.warps.size() > 1) name += "_" + std::to_string(role.warps.back());
    }
    if (cluster >= 0) name += "_cl" + std::to_string(cluster);
    if (cta >= 0) name += "_cta" + std::to_string(cta);
    if (role.warps.empty()) {
      // A warpgroup's tensor core (import_wgmma.cc): no warp of a kernel trace is it.
      roles << "\n# the tensor core of warpgroup " << role.name.substr(role.name.find("_wg") + 3)
            << ": reads the operands of the warps' wgmma.mma_async";
    } else {
      roles << (role.warps.size() > 1 ? "\n# warps" : "\n# warp");
      for (int w : role.warps) roles << " " << w;
    }
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
    // A tensor core is no warp: its line says whose wgmma it is (warpgroup G is warps 4G to
    // 4G + 3), so that a replay can name it instead of finding no line.
    if (!role.warps.empty()) {
      roles << "# kernel: role " << name << " = warps";
      for (int w : role.warps) roles << " " << w;
      roles << "\n";
    } else {
      const int wg = std::stoi(role.name.substr(role.name.find("_wg") + 3));
      roles << "# kernel: role " << name << " = wgmma of warps " << 4 * wg << "-" << 4 * wg + 3
            << "\n";
    }
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

Status Importer::CheckOptions() {
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
Status Importer::MissingArgOr(const Status& s) const {
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

// One agent per warp: every lane's operations must be a subsequence of the leading lane's.
Expected<std::vector<OpRec>> Importer::MergeLanes(uint32_t cta, uint32_t warp,
                                                  std::vector<std::vector<OpRec>>& lanes) const {
  size_t lead = 0;
  for (size_t l = 1; l < lanes.size(); ++l) {
    if (lanes[l].size() > lanes[lead].size()) lead = l;
  }
  std::vector<OpRec> merged = lanes[lead];
  std::vector<uint32_t> table;  // the LCS table below, its memory kept from lane to lane
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
    // A lane in lockstep with the merged sequence (the usual case) is its diagonal: every
    // operation is common, in order, with nothing of either side's own between (what the
    // longest common subsequence below finds, without its n * m table).
    if (n == m && std::equal(merged.begin(), merged.end(), lane.begin(),
                             [](const OpRec& a, const OpRec& b) { return a.SameOp(b); })) {
      for (size_t i = 0; i < n; ++i) {
        OpRec& op = merged[i];
        ++op.lanes;
        if (op.merge == OpRec::Merge::kUnion) {
          op.Unite(lane[i]);
        } else {
          op.ptx_lines.insert(lane[i].ptx_lines.begin(), lane[i].ptx_lines.end());
        }
      }
      continue;
    }
    // Each operation as a class of SameOp (equal ids exactly when SameOp holds), so that the
    // n x m table compares integers.
    std::map<const OpRec*, uint32_t, SameOpLess> classes;
    std::vector<uint32_t> mid(n), lid(m);
    for (size_t i = 0; i < n; ++i) {
      mid[i] = classes.emplace(&merged[i], static_cast<uint32_t>(classes.size())).first->second;
    }
    for (size_t j = 0; j < m; ++j) {
      lid[j] = classes.emplace(&lane[j], static_cast<uint32_t>(classes.size())).first->second;
    }
    // lcs(i, j): the longest common subsequence of merged[i..] and lane[j..].
    table.assign((n + 1) * (m + 1), 0);
    auto lcs = [&](size_t i, size_t j) -> uint32_t& { return table[i * (m + 1) + j]; };
    for (size_t i = n; i-- > 0;) {
      for (size_t j = m; j-- > 0;) {
        lcs(i, j) =
            mid[i] == lid[j] ? lcs(i + 1, j + 1) + 1 : std::max(lcs(i + 1, j), lcs(i, j + 1));
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
        next.insert(next.end(), std::make_move_iterator(blocking.begin()),
                    std::make_move_iterator(first_block));
        next.insert(next.end(), std::make_move_iterator(other.begin()),
                    std::make_move_iterator(other.end()));
        next.insert(next.end(), std::make_move_iterator(first_block),
                    std::make_move_iterator(blocking.end()));
        mine.clear();
        theirs.clear();
        return Status::Ok();
      }
      next.insert(next.end(), std::make_move_iterator(mine.begin()),
                  std::make_move_iterator(mine.end()));
      next.insert(next.end(), std::make_move_iterator(theirs.begin()),
                  std::make_move_iterator(theirs.end()));
      mine.clear();
      theirs.clear();
      return Status::Ok();
    };
    // merged[i] is read only through mid from here on: it is moved into `next`.
    size_t i = 0, j = 0;
    while (i < n || j < m) {
      if (i < n && j < m && mid[i] == lid[j] && lcs(i, j) == lcs(i + 1, j + 1) + 1) {
        PARITY_RETURN_IF_ERROR(flush());
        OpRec op = std::move(merged[i]);
        ++op.lanes;
        if (op.merge == OpRec::Merge::kUnion) {
          op.Unite(lane[j]);
        } else {
          op.ptx_lines.insert(lane[j].ptx_lines.begin(), lane[j].ptx_lines.end());
        }
        next.push_back(std::move(op));
        ++i;
        ++j;
      } else if (i < n && (j == m || lcs(i + 1, j) >= lcs(i, j + 1))) {
        mine.push_back(std::move(merged[i++]));
      } else {
        theirs.push_back(lane[j++]);
      }
    }
    PARITY_RETURN_IF_ERROR(flush());
    merged = std::move(next);
  }
  for (OpRec& op : merged) {
    // Lanes issuing the same tensor or bulk store write the same bytes from the same source
    // (CUTLASS 7107b055's TMA epilogue stores from a whole warp: `issue_tma_store =
    // (thread_idx / NumThreadsPerWarp) == 0`, sm90_epilogue_tma_warpspecialized.hpp:714): one
    // store stands for them. A load's complete_tx would count once per lane: refused.
    const bool store = op.fmt.rfind("tma.store", 0) == 0 || op.fmt.rfind("bulk.store", 0) == 0;
    if (op.merge == OpRec::Merge::kOneLane && op.lanes > 1 && !store) {
      return Status("import.divergent-warp",
                    std::to_string(op.lanes) + " lanes of warp " + std::to_string(warp) +
                        " of CTA " + std::to_string(cta) + " each issue `" + Render(op, {}) +
                        "` (PTX line " + std::to_string(*op.ptx_lines.begin()) +
                        "); the importer models it issued by one lane");
    }
    if (op.merge == OpRec::Merge::kUnion) {
      if (op.contiguous && (op.pieces.size() != 1 || op.sum != op.hi - op.lo)) {
        return Status("import.divergent-warp",
                      "the lanes of warp " + std::to_string(warp) + " of CTA " +
                          std::to_string(cta) + " issue `" + Render(op, {}) + "` (PTX line " +
                          std::to_string(*op.ptx_lines.begin()) + ") on " +
                          std::to_string(op.sum) + " bytes that do not tile one range of " +
                          std::to_string(op.hi - op.lo) +
                          "; the importer models the warp's copies as one");
      }
      // Rendered once every warp of the CTA is merged (SplitAccesses): its pieces, or their
      // hull, depend on the other warps' accesses.
      continue;
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
bool Importer::JoinRole(RoleRec* role, const std::vector<OpRec>& ops) {
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
bool Importer::Blocks(const OpRec& op) {
  for (const char* w :
       {"wait ", "bar.sync", "cluster.wait", "cp.async.wait", "bulk.wait", "wgmma.wait"}) {
    if (op.fmt.rfind(w, 0) == 0) return true;
  }
  return false;
}

}  // namespace parity::ptx::importer_internal

namespace parity::ptx {

Expected<std::string> ImportSchedule(const Module& module, const ImportOptions& options) {
  PARITY_RETURN_IF_ERROR(RequireHopperTarget(module));
  auto entry = FindEntry(module, options.entry);
  if (!entry.ok()) return entry.status();
  ImportOptions expanded = options;
  ExpandParamNames(**entry, &expanded);
  return importer_internal::Importer(module, **entry, expanded).Run();
}

}  // namespace parity::ptx
