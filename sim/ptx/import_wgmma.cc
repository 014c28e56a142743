// `parity import`: wgmma as one operation of the warpgroup.
//
// PTX ISA, Asynchronous Warpgroup Level Matrix Multiply-Accumulate: the four warps of a
// warpgroup execute wgmma.mma_async collectively (`.sync.aligned`), the tensor core reads the
// shared operands asynchronously, and wgmma.wait_group N returns once all but the N newest
// wgmma-groups of the executing warp are complete. So a group's reads happen at some time after
// every warp of the warpgroup issued it and before any warp's wait_group that retires it
// returns. CUTLASS's PipelineTmaAsync::consumer_release relies on this: one thread per consumer
// warpgroup releases the stage after its own wait_group.
//
// The schedule says it with existing constructs (no new explorer reduction): one agent per
// warpgroup, `tensor_core_wgG`, and two rings of barriers of that warpgroup.
// - Each warp arrives on `wgmma_issued_wgG[j % R]` right after the last mma_async of its j-th
//   issue (the mma_asyncs of a group between which no warp of the warpgroup has another
//   protocol operation); the barrier counts the warpgroup's warps.
// - The tensor-core agent waits each issue's phase, `use.async`es the union of the warps'
//   operands of that issue, and after a group's last issue arrives on `wgmma_done_wgG[g % Rd]`.
// - A warp's wgmma.wait_group waits the done phase of every group it retires.
// An element per issue and per group (ImportOptions::wgmma_single_use_limit), or rings: R and Rd
// are then the most issues and groups a warp has outstanding (issued, not yet retired by its own
// wait_group) when it issues, so a warp cannot arrive on an element again before the tensor
// core observed its previous phase, and the parity waits are exact (no ABA).
// The barriers are initialised by the warp that initialises the kernel's first barrier, right
// after its run of inits (the kernel orders those before the warps' first wgmma); the
// tensor-core agents start after them on a named barrier (`bar.arrive` / `bar.sync
// wgmma_start`). A tensor-core agent takes part in the cluster barrier where its warpgroup's
// first warp does, relative to its issues, with a `.relaxed` arrive: the cluster barrier orders
// nothing between it and the others beyond what the warps' own issues and retires order.

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "sim/ptx/import_text.h"
#include "sim/ptx/importer_internal.h"

namespace parity::ptx::importer_internal {
namespace {

bool IsMma(const OpRec& op) { return op.fmt == "wgmma.mma"; }
bool IsRead(const OpRec& op) { return op.fmt.rfind("wgmma.read ", 0) == 0; }
bool IsCommit(const OpRec& op) { return op.fmt == "wgmma.commit"; }
bool IsWaitGroup(const OpRec& op) { return op.fmt == "wgmma.wait {}"; }
bool IsMarker(const OpRec& op) { return op.fmt.rfind("wgmma.", 0) == 0; }
bool IsCluster(const OpRec& op) { return op.fmt.rfind("cluster.", 0) == 0; }

struct Mma {
  const OpRec* marker = nullptr;
  std::vector<const OpRec*> reads;
  bool op_after = false;  // another protocol operation follows before the next mma_async
};

// One warp's wgmma-groups in issue order (a trailing group issued but never committed last).
std::vector<std::vector<Mma>> Groups(const std::vector<OpRec>& ops) {
  std::vector<std::vector<Mma>> groups;
  std::vector<Mma> open;
  for (const OpRec& op : ops) {
    if (IsMma(op)) {
      open.push_back(Mma{&op, {}, false});
    } else if (IsRead(op)) {
      open.back().reads.push_back(&op);
    } else if (IsCommit(op)) {
      groups.push_back(std::move(open));
      open.clear();
    } else if (!open.empty()) {
      open.back().op_after = true;
    }
  }
  if (!open.empty()) groups.push_back(std::move(open));
  return groups;
}

Status Refuse(const std::string& path, const OpRec& at, const std::string& why) {
  return Status("import.unsupported-op", why,
                {path, at.ptx_lines.empty() ? 0 : *at.ptx_lines.begin(), 0});
}

OpRec Op(const std::string& fmt, std::vector<int64_t> ints, const OpRec* like) {
  OpRec op;
  op.fmt = fmt;
  op.ints = std::move(ints);
  if (like != nullptr) {
    op.ptx_lines = like->ptx_lines;
    op.source = like->source;
  }
  return op;
}

}  // namespace

Status Importer::LowerWgmma(uint32_t unit, std::vector<std::vector<OpRec>>* warp_ops,
                            std::vector<RoleRec>* tensor_roles) {
  const uint32_t warps = static_cast<uint32_t>(warp_ops->size());
  struct Lowered {
    int wg = 0;
    int64_t issue_ring = 1, done_ring = 1, warps = 0;
  };
  std::vector<Lowered> lowered;
  for (uint32_t first = 0; first < warps; first += 4) {
    const uint32_t end = std::min(warps, first + 4);
    std::vector<uint32_t> with;
    for (uint32_t w = first; w < end; ++w) {
      const auto& ops = (*warp_ops)[w];
      if (std::any_of(ops.begin(), ops.end(), IsMarker)) with.push_back(w);
    }
    if (with.empty()) continue;
    const int wg = static_cast<int>(first / 4);
    const std::vector<OpRec>& lead_ops = (*warp_ops)[with[0]];
    const OpRec& some = *std::find_if(lead_ops.begin(), lead_ops.end(), IsMarker);
    const std::string where =
        " of warpgroup " + std::to_string(wg) + " of CTA " + std::to_string(unit);
    if (with.size() != 4) {
      // .aligned: every thread of the warpgroup executes the same wgmma instruction.
      return Refuse(m_.path, some,
                    "wgmma is executed by " + std::to_string(with.size()) + " of the 4 warps" +
                        where + "; the PTX ISA requires the whole warpgroup (.aligned)");
    }
    std::vector<std::vector<std::vector<Mma>>> groups;
    for (uint32_t w : with) groups.push_back(Groups((*warp_ops)[w]));
    for (size_t k = 1; k < groups.size(); ++k) {
      const bool same_groups = groups[k].size() == groups[0].size();
      size_t g = 0;  // the first group that differs (or the first one only one of them has)
      while (g < std::min(groups[k].size(), groups[0].size()) &&
             groups[k][g].size() == groups[0][g].size()) {
        ++g;
      }
      if (!same_groups || g < groups[0].size()) {
        const auto& gs = groups[k].size() > g ? groups[k] : groups[0];
        const OpRec& at = gs.empty() || gs[std::min(g, gs.size() - 1)].empty()
                              ? some
                              : *gs[std::min(g, gs.size() - 1)].front().marker;
        return Refuse(m_.path, at,
                      "warps " + std::to_string(with[0]) + " and " + std::to_string(with[k]) +
                          where + " issue different wgmma-groups (" +
                          std::to_string(groups[0].size()) + " and " +
                          std::to_string(groups[k].size()) + " groups, differing at group " +
                          std::to_string(g) +
                          "); the warpgroup executes wgmma.mma_async collectively");
      }
    }
    // The warpgroup's issues: per group, the mma_asyncs up to one after which some warp has
    // another protocol operation (or the group's last); kept when they read a buffer.
    struct Issue {
      std::vector<OpRec> reads;  // use.async, the union of the warps' operands
      OpRec marker;              // the issue's last mma_async (its PTX and source lines)
    };
    const size_t ngroups = groups[0].size();
    std::vector<std::vector<std::optional<int64_t>>> issue_at(ngroups);  // per mma: its phase
    std::vector<std::vector<Issue>> issues(ngroups);
    std::vector<int64_t> first_phase(ngroups + 1, 0), kept_before(ngroups + 1, 0);
    int64_t phases = 0, kept = 0;
    for (size_t g = 0; g < ngroups; ++g) {
      first_phase[g] = phases;
      kept_before[g] = kept;
      const size_t n = groups[0][g].size();
      issue_at[g].assign(n, std::nullopt);
      Issue cur;
      for (size_t m = 0; m < n; ++m) {
        bool end_here = m + 1 == n;
        for (const auto& warp : groups) {
          end_here = end_here || warp[g][m].op_after;
          for (const OpRec* r : warp[g][m].reads) {
            OpRec u = *r;
            u.fmt = "use.async " + r->fmt.substr(std::string("wgmma.read ").size());
            auto same = std::find_if(cur.reads.begin(), cur.reads.end(),
                                     [&](const OpRec& x) { return x.SameOp(u); });
            if (same == cur.reads.end()) {
              cur.reads.push_back(std::move(u));
            } else {
              same->ptx_lines.insert(u.ptx_lines.begin(), u.ptx_lines.end());
            }
          }
        }
        if (!end_here) continue;
        if (!cur.reads.empty()) {
          cur.marker = *groups[0][g][m].marker;
          issue_at[g][m] = phases++;
          issues[g].push_back(std::move(cur));
        }
        cur = Issue{};
      }
      if (!issues[g].empty()) ++kept;
    }
    first_phase[ngroups] = phases;
    kept_before[ngroups] = kept;
    if (phases == 0) continue;  // no wgmma of the warpgroup reads a buffer
    const std::string issued = "wgmma_issued_wg" + std::to_string(wg);
    const std::string done = "wgmma_done_wg" + std::to_string(wg);
    // Each warp's operations with the markers lowered; the ring indices are patched below.
    std::vector<bool> retired_by_some(ngroups, false);
    int64_t issue_ring = 1, done_ring = 1;
    std::vector<std::vector<std::pair<size_t, bool>>> patch(with.size());  // (op, is_issue)
    std::vector<int64_t> lead_cluster_at;  // per lead-warp cluster op: the phases issued before
    std::vector<OpRec> lead_cluster_ops;
    for (size_t k = 0; k < with.size(); ++k) {
      std::vector<OpRec>& ops = (*warp_ops)[with[k]];
      std::vector<OpRec> out;
      out.reserve(ops.size());
      size_t g = 0, retired = 0;
      int64_t m = -1, issued_so_far = 0;
      std::optional<OpRec> pending;
      for (const OpRec& op : ops) {
        if (!IsRead(op) && pending) {
          patch[k].emplace_back(out.size(), true);
          out.push_back(std::move(*pending));
          pending.reset();
          ++issued_so_far;
        }
        if (IsMma(op)) {
          ++m;
          if (auto j = issue_at[g][static_cast<size_t>(m)]) {
            pending = Op("arrive " + issued + "[{}]", {*j}, &op);
            issue_ring = std::max(issue_ring, *j - first_phase[retired] + 1);
            done_ring = std::max(done_ring, kept_before[g] - kept_before[retired] + 1);
          }
        } else if (IsRead(op)) {
          continue;
        } else if (IsCommit(op)) {
          ++g;
          m = -1;
        } else if (IsWaitGroup(op)) {
          const size_t n = static_cast<size_t>(std::max<int64_t>(op.ints.at(0), 0));
          const size_t target = g > n ? g - n : 0;
          for (; retired < target; ++retired) {
            if (issues[retired].empty()) continue;
            retired_by_some[retired] = true;
            patch[k].emplace_back(out.size(), false);
            out.push_back(Op("wait " + done + "[{}] parity {}", {kept_before[retired], 0}, &op));
          }
        } else {
          if (k == 0 && IsCluster(op)) {
            lead_cluster_at.push_back(issued_so_far);
            lead_cluster_ops.push_back(op);
          }
          out.push_back(op);
        }
      }
      if (pending) {
        patch[k].emplace_back(out.size(), true);
        out.push_back(std::move(*pending));
      }
      ops = std::move(out);
    }
    // One element per issue and per group where there are few enough (each element's one
    // phase completes once: no reuse for the explorer to reason about, which keeps its
    // partial-order reduction cheap, bench/RESULTS.md); rings of the bounds above beyond.
    if (phases <= o_.wgmma_single_use_limit) {
      issue_ring = std::max<int64_t>(phases, 1);
      done_ring = std::max<int64_t>(kept, 1);
    }
    for (size_t k = 0; k < with.size(); ++k) {
      for (const auto& [at, is_issue] : patch[k]) {
        OpRec& op = (*warp_ops)[with[k]][at];
        if (is_issue) {
          op.ints[0] %= issue_ring;
        } else {
          const int64_t g = op.ints[0];
          op.ints = {g % done_ring, (g / done_ring) & 1};
        }
      }
    }
    // The tensor-core agent.
    RoleRec role;
    role.name = "tensor_core_wg" + std::to_string(wg);
    role.count = 1;
    role.threads = 32;
    std::vector<OpRec>& t = role.ops;
    size_t next_cluster = 0;
    auto cluster_ops_upto = [&](int64_t phase) {
      for (; next_cluster < lead_cluster_at.size() && lead_cluster_at[next_cluster] <= phase;
           ++next_cluster) {
        const OpRec& c = lead_cluster_ops[next_cluster];
        if (c.fmt.rfind("cluster.arrive", 0) == 0) {
          t.push_back(Op("cluster.arrive relaxed", {}, &c));
        } else {
          t.push_back(c);
        }
      }
    };
    for (size_t g = 0; g < ngroups; ++g) {
      for (size_t i = 0; i < issues[g].size(); ++i) {
        const int64_t j = first_phase[g] + static_cast<int64_t>(i);
        cluster_ops_upto(j);
        t.push_back(Op("wait " + issued + "[{}] parity {}",
                       {j % issue_ring, (j / issue_ring) & 1}, &issues[g][i].marker));
        for (OpRec& r : issues[g][i].reads) t.push_back(std::move(r));
      }
      if (!issues[g].empty() && retired_by_some[g]) {
        t.push_back(Op("arrive " + done + "[{}]", {kept_before[g] % done_ring},
                       &issues[g].back().marker));
      }
    }
    cluster_ops_upto(phases);
    tensor_roles->push_back(std::move(role));
    lowered.push_back(Lowered{wg, issue_ring, done_ring, static_cast<int64_t>(with.size())});
  }
  if (lowered.empty()) return Status::Ok();
  // The rings' declarations (the largest ring any CTA needs).
  for (const Lowered& l : lowered) {
    for (const auto& [name, size, count] :
         {std::tuple<std::string, int64_t, int64_t>{"wgmma_issued_wg" + std::to_string(l.wg),
                                                    l.issue_ring, l.warps},
          std::tuple<std::string, int64_t, int64_t>{"wgmma_done_wg" + std::to_string(l.wg),
                                                    l.done_ring, 1}}) {
      auto [it, fresh] = wgmma_barriers_.try_emplace(name, size, count);
      if (!fresh) it->second.first = std::max(it->second.first, size);
    }
  }
  // The named barrier the tensor-core agents start on: an id the CTA does not use.
  std::set<int64_t> used;
  for (const auto& ops : *warp_ops) {
    for (const OpRec& op : ops) {
      if (op.fmt.rfind("bar.", 0) == 0 && !op.ints.empty()) used.insert(op.ints[0]);
    }
  }
  if (wgmma_start_id_ < 0) {
    for (int64_t id = 15; id >= 1 && wgmma_start_id_ < 0; --id) {
      if (used.count(id) == 0) wgmma_start_id_ = id;
    }
  }
  const OpRec& any = tensor_roles->front().ops.front();
  if (wgmma_start_id_ < 0 || used.count(wgmma_start_id_) > 0) {
    return Refuse(m_.path, any,
                  "the kernel uses every named barrier id: none is left for the schedule's "
                  "model of the warpgroups' wgmma (wgmma_start)");
  }
  const int64_t threads = 32 * (1 + static_cast<int64_t>(lowered.size()));
  // The inits, in the warp that initialises the kernel's first barrier.
  for (auto& ops : *warp_ops) {
    auto init = std::find_if(ops.begin(), ops.end(),
                             [](const OpRec& op) { return op.fmt.rfind("init ", 0) == 0; });
    if (init == ops.end()) continue;
    std::vector<OpRec> pre;
    for (const Lowered& l : lowered) {
      for (int64_t k = 0; k < l.issue_ring; ++k) {
        pre.push_back(Op("init wgmma_issued_wg" + std::to_string(l.wg) + "[{}]", {k}, &*init));
      }
      for (int64_t k = 0; k < l.done_ring; ++k) {
        pre.push_back(Op("init wgmma_done_wg" + std::to_string(l.wg) + "[{}]", {k}, &*init));
      }
    }
    pre.push_back(Op("bar.arrive wgmma_start, {}", {threads}, &*init));
    const OpRec start = Op("bar.sync wgmma_start, {}", {threads}, &*init);
    // After the kernel's run of inits (before its fence and the barrier that publishes them),
    // so that the kernel's own barriers are initialised at the step they always were.
    auto after = std::find_if(init, ops.end(),
                              [](const OpRec& op) { return op.fmt.rfind("init ", 0) != 0; });
    ops.insert(after, pre.begin(), pre.end());
    for (RoleRec& role : *tensor_roles) role.ops.insert(role.ops.begin(), start);
    return Status::Ok();
  }
  return Refuse(m_.path, any,
                "the CTA initialises no mbarrier: the schedule's model of the warpgroup's "
                "wgmma needs barriers initialised where the kernel initialises its own");
}

}  // namespace parity::ptx::importer_internal
