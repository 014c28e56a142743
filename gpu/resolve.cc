#include "gpu/resolve.h"

#include <algorithm>
#include <iterator>

namespace parity::gpu {

void FillLayout(const LaunchSpec& s, exec::Layout* layout) {
  exec::Layout& c = *layout;
  c = exec::Layout{};
  auto copy = [](const auto& from, auto& to) {
    std::copy(std::begin(from), std::end(from), std::begin(to));
  };
  c.words = s.words.data();
  c.pool = s.words.size() > ir::kHdrPool ? s.words[ir::kHdrPool] : 0;
  c.cluster_m = s.cluster_m;
  c.cluster_n = s.cluster_n;
  c.clusters = s.clusters;
  copy(s.role_body_begin, c.role_body_begin);
  if (s.words.size() > ir::kHdrRoleCode) {
    exec::FindRoleCode(s.words.data(), s.num_roles, c.role_code);
  }
  copy(s.role_threads, c.role_threads);
  copy(s.role_num_vars, c.role_num_vars);
  for (uint32_t id = 0; id < exec::kMaxNamedBarriers; ++id) {
    copy(s.named_threads[id], c.named_threads[id]);
    copy(s.named_hw_threads[id], c.named_hw_threads[id]);
  }
  c.num_barriers = s.num_barriers;
  copy(s.barrier_first, c.barrier_first);
  copy(s.barrier_size, c.barrier_size);
  copy(s.barrier_count_ref, c.barrier_count_ref);
  c.num_buffers = s.num_buffers;
  copy(s.buffer_offset, c.buffer_offset);
  copy(s.buffer_slot_bytes, c.buffer_slot_bytes);
  copy(s.buffer_stages, c.buffer_stages);
  c.num_maps = static_cast<uint32_t>(s.maps.size());
  c.num_globals = s.num_globals;
  copy(s.global_slots, c.global_slots);
  copy(s.global_slot_bytes, c.global_slot_bytes);
}

bool ResolveAgent(const exec::Layout& layout, const LaunchSpec& s, uint32_t g,
                  std::vector<exec::ResolvedOp>* out, std::string* why) {
  exec::HostAgent a =
      exec::MakeHostAgent(g, s.agents[g], s.cluster_m, s.cluster_n, s.warps_per_cta);
  exec::Walk k = exec::StartWalk(layout, a);
  const size_t start = out->size();
  auto refuse = [&](const char* reason) {
    out->resize(start);
    *why = reason;
    return false;
  };
  while (true) {
    const int adv = exec::NextOp(layout, a, k);
    if (adv == exec::kFaulted) return refuse("its program faults (the interpreter reports where)");
    if (adv != exec::kAtOp) return true;
    const exec::OpKind op = exec::OpAt(layout, k);
    const uint32_t* f = layout.words + k.rec + 1;
    const uint32_t spc = k.rec - k.body;
    ++k.pc;
    using Arrive = ir::layout::MbarrierArrive;
    using Wait = ir::layout::MbarrierWait;
    if (op == exec::OpKind::kMbarrierArrive && f[Arrive::kTokenVar] < exec::kMaxVars) {
      return refuse("an arrive keeps a state token");
    }
    // The wait's kTestOnly word: bit 0 test_wait (its result is a run-time value), the others
    // the wait's semantics and scope, which a resolved wait carries (ResolvedWait::order).
    if (op == exec::OpKind::kMbarrierWait &&
        (f[Wait::kTokenVar] < exec::kMaxVars || (f[Wait::kTestOnly] & 1u) != 0)) {
      return refuse("a token wait or a test_wait result");
    }
    exec::ResolvedOp r{};  // the unused words 0: the same streams byte for byte
    const uint32_t res = exec::Resolve(layout, a, op, f, spc, &r);
    if (res == exec::kNotResolvable) {
      return refuse("an op the interpreter runs directly (cp.async, bulk copies, st.async, "
                    "pending_count, readback)");
    }
    if (res != exec::kResolved || a.fault != 0) {
      return refuse("its program faults (the interpreter reports where)");
    }
    if (out->size() >= kMaxResolvedOps) return refuse("the resolved streams would exceed 1M records");
    out->push_back(r);
    if (op == exec::OpKind::kExit) return true;
  }
}

bool ResolveAll(const LaunchSpec& s, std::vector<exec::ResolvedOp>* ops,
                std::vector<uint32_t>* index, uint32_t* failed_agent, std::string* why) {
  exec::Layout layout;
  FillLayout(s, &layout);
  const uint32_t num_agents = static_cast<uint32_t>(s.agents.size());
  index->assign(2 * num_agents, exec::kNone);
  for (uint32_t g = 0; g < num_agents; ++g) {
    if (!s.agents[g].valid) continue;
    const size_t first = ops->size();
    if (!ResolveAgent(layout, s, g, ops, why)) {
      *failed_agent = g;
      ops->clear();
      return false;
    }
    (*index)[2 * g] = static_cast<uint32_t>(first);
    (*index)[2 * g + 1] = static_cast<uint32_t>(ops->size() - first);
  }
  return true;
}

const char* FaultName(uint32_t code) {
  switch (code) {
    case kFaultEval: return "expression fault (division by zero, overflow, shift range or a loop step that is not positive)";
    case kFaultIndex: return "barrier index or buffer slot out of range";
    case kFaultNesting: return "a loop without operations past the walk's cap";
    case kFaultBadWord: return "bad statement or expression word";
    case kFaultStack: return "expression stack overflow";
    case kFaultRange: return "buffer region outside its slot, or CTA rank outside the cluster";
    case kFaultCount: return "bulk.wait N above 7, or a bar.sync count that is not whole agents";
    case kFaultBound: return "a `while` condition still holds after its bound (engine.while-bound)";
    case kFaultAlign: return "a global buffer access whose offset or byte count is not a multiple of 16 (the executor reads and writes 16-byte chunks)";
    default: return "none";
  }
}

LaunchSpec PrimaryView(const LaunchSpec& s) {
  LaunchSpec v = s;
  v.clusters = s.primary_clusters;
  v.warps_per_cta = s.primary_warps_per_cta;
  v.agents = s.primary_agents;
  v.primary_clusters = 0;
  v.primary_warps_per_cta = 0;
  v.primary_agents.clear();
  return v;
}

std::vector<size_t> StaleGlobalReads(const std::vector<trace::TraceEvent>& events,
                                     uint32_t own_clusters) {
  using trace::EventKind;
  std::vector<const trace::TraceEvent*> writes;
  for (const trace::TraceEvent& e : events) {
    if (e.kind == static_cast<uint8_t>(EventKind::kGlobalWrite) && e.cluster >= own_clusters) {
      writes.push_back(&e);
    }
  }
  std::vector<size_t> out;
  for (size_t i = 0; i < events.size(); ++i) {
    const trace::TraceEvent& u = events[i];
    if (u.kind != static_cast<uint8_t>(EventKind::kGlobalUse) || u.cluster >= own_clusters ||
        (u.flags & kFlagInitialData) == 0) {
      continue;
    }
    // value: bytes, value2: offset into the slot (object: the global, index: the slot).
    const int64_t lo = u.value2, hi = int64_t{u.value2} + u.value;
    for (const trace::TraceEvent* w : writes) {
      if (w->object == u.object && w->index == u.index && w->value2 < hi &&
          lo < int64_t{w->value2} + w->value) {
        out.push_back(i);
        break;
      }
    }
  }
  return out;
}

ResolveReport ResolveOnHost(const LaunchSpec& s) {
  ResolveReport r;
  std::vector<exec::ResolvedOp> ops;
  std::vector<uint32_t> index;
  r.resolved = ResolveAll(s, &ops, &index, &r.failed_agent, &r.reason);
  if (r.resolved) {
    r.ops_per_agent.assign(s.agents.size(), 0);
    for (size_t g = 0; g < s.agents.size(); ++g) {
      if (index[2 * g + 1] != exec::kNone) r.ops_per_agent[g] = index[2 * g + 1];
    }
    r.bytes = ops.size() * sizeof(exec::ResolvedOp);
  }
  return r;
}

}  // namespace parity::gpu
