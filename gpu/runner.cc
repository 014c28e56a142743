// parity_gpu: runs `.pipe` schedules on the GPU with the interpreter kernel (gpu/executor.cu).
//
//   parity_gpu run FILE.pipe [-D NAME=VALUE]... [--trace OUT] [--timeout-ms N] [--no-trace]
//                  [--ring N]
//       One run; writes the trace file (sim/trace/trace_file.h, source "h100") with --trace.
//       Exit 0 completed (every used chunk was pattern data, every stored chunk pattern data),
//       1 hang observed, wrong data, or the kernel trapped; 2 bad input / unsupported op / CUDA
//       error.
//   parity_gpu litmus FILE.pipe... --runs N --out DIR [--seed S] [--start-delay C]
//                  [--op-jitter C] [--timeout-ms T] [--trap-runs K] [-D NAME=VALUE]...
//       Runs each schedule N times with seeded delays between agents and writes the histogram of
//       outcomes (sim/litmus/outcome.h) to DIR/<stem>.h100.txt. Exit 1 if a run saw wrong data.
//   parity_gpu bench FILE.pipe [-D NAME=VALUE]... [--pairs N] [--out FILE]
//       Tracing on/off ABBA pairs and cudaMemcpy D2D bandwidth, medians (traces/h100/bench.txt).
//   parity_gpu resolve FILE.pipe [-D NAME=VALUE]...
//       Without CUDA: whether every agent's run can be resolved on the host before the launch
//       (ops per agent of the first CTA), or which agent cannot and why.
// Every command takes --interpret: the kernel interprets every agent, none is run from an op
// stream resolved on the host (gpu/executor.cu, ResolvedOp; the default resolves each agent
// whose run is fixed before the launch and prints how many were).
//
// Self-contained on purpose (no spdlog/fmt): the binary is copied alone to the GPU machine.
#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <random>
#include <set>

#include <sys/wait.h>
#include <unistd.h>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <map>
#include <string>
#include <tuple>
#include <variant>
#include <vector>

#include "gpu/executor.h"
#include "gpu/resolve.h"
#include "sim/ir/encoding.h"
#include "sim/ir/eval.h"
#include "sim/ir/hash.h"
#include "sim/ir/ir.h"
#include "sim/ir/parser.h"
#include "sim/litmus/outcome.h"
#include "sim/trace/trace_file.h"

namespace parity::gpu {
namespace {

static_assert(litmus::kProbePc == kProbePc, "the litmus outcome reads the executor's probe");

constexpr int kExitBad = 2;

[[noreturn]] void Die(const std::string& msg) {
  std::fprintf(stderr, "parity_gpu: %s\n", msg.c_str());
  std::exit(kExitBad);
}

std::string Where(const SourceLocation& w) {
  return w.file + ":" + std::to_string(w.line);
}

// The op names of the schedule language, for messages.
const char* OpName(const ir::Op& op) {
  static const char* const kNames[] = {
      "init", "inval", "arrive", "expect_tx", "complete_tx", "wait", "tma.load", "tma.store",
      "bulk.load", "bulk.store", "bulk.commit", "bulk.wait", "cp.async", "cp.async.commit",
      "cp.async.wait", "cp.async.arrive", "st.async", "fence", "cluster.arrive", "cluster.wait",
      "bar.sync", "use/write", "exit", "pending_count", "readback", "griddepcontrol",
      "use/write of a global", "tensormap.replace"};
  static_assert(sizeof(kNames) / sizeof(kNames[0]) == std::variant_size_v<ir::Op>,
                "a new op needs its name here");
  if (const auto* b = std::get_if<ir::BufferAccess>(&op); b != nullptr && b->atomic) {
    return b->returns ? "atom" : "red";
  }
  return kNames[op.index()];
}

bool TmaStoreSourceIn(const ir::Block& block, uint32_t buffer) {
  for (const ir::Stmt& s : block) {
    if (const auto* f = std::get_if<ir::For>(&s.node)) {
      if (TmaStoreSourceIn(f->body, buffer)) return true;
    } else if (const auto* i = std::get_if<ir::If>(&s.node)) {
      if (TmaStoreSourceIn(i->then_body, buffer) || TmaStoreSourceIn(i->else_body, buffer)) return true;
    } else if (const auto* op = std::get_if<ir::Op>(&s.node)) {
      const auto* t = std::get_if<ir::TmaStore>(op);
      if (t != nullptr && t->src.buffer == buffer) return true;
    }
  }
  return false;
}

// Whether some role stores `buffer` with tma.store.
bool TmaStoreSource(const ir::Program& p, uint32_t buffer) {
  for (const ir::Role& r : p.roles) {
    if (TmaStoreSourceIn(r.body, buffer)) return true;
  }
  return false;
}

// Returns "" when the executor issues `op` faithfully, else why not.
std::string Unsupported(const ir::Program& p, const ir::Op& op) {
  if (const auto* i = std::get_if<ir::MbarrierInit>(&op)) {
    return i->bar.cta == ir::kNoExpr ? "" : "init of a remote barrier";
  }
  if (const auto* a = std::get_if<ir::MbarrierArrive>(&op)) {
    using Kind = ir::MbarrierArrive::Kind;
    const bool remote = a->mask != ir::kNoExpr || a->bar.cta != ir::kNoExpr;
    if (a->mask != ir::kNoExpr && a->bar.cta != ir::kNoExpr) return "masked arrive with @cta";
    // PTX ISA mbarrier.arrive: .noComplete has only the .shared::cta form; a .shared::cluster
    // arrive returns no state (the sink `_`).
    if (a->kind == Kind::kNoComplete && remote) return "arrive.noComplete on a remote barrier";
    if (a->kind != Kind::kArrive && a->expect_tx != ir::kNoExpr) {
      return "arrive.noComplete / arrive_drop with expect_tx";
    }
    if (a->token_var != 0xffffffffu && remote) return "a state token from a remote arrive";
    const bool ordered = a->sem != ir::MemSem::kStrong || a->scope != ir::MemScope::kCta;
    if (ordered && a->kind != Kind::kArrive) {
      return "a .relaxed or .cluster qualifier on arrive.noComplete or arrive_drop";
    }
    return "";
  }
  if (const auto* i = std::get_if<ir::MbarrierInval>(&op)) {
    return i->bar.cta == ir::kNoExpr ? "" : "inval of a remote barrier";
  }
  if (const auto* t = std::get_if<ir::TmaStore>(&op)) {
    if (t->coords.size() != p.tensor_maps[t->tensor_map].global_dims.size()) {
      return "tma.store whose coordinate count differs from the tensor map's rank";
    }
    return t->src.cta == ir::kNoExpr ? "" : "tma.store from @cta";
  }
  if (std::holds_alternative<ir::BulkCommit>(op) || std::holds_alternative<ir::BulkWait>(op) ||
      std::holds_alternative<ir::NamedBarrier>(op)) {
    return "";
  }
  if (std::holds_alternative<ir::MbarrierExpectTx>(op) ||
      std::holds_alternative<ir::MbarrierCompleteTx>(op)) {
    return "";
  }
  if (const auto* w = std::get_if<ir::MbarrierWait>(&op)) {
    if (w->bar.cta != ir::kNoExpr) return "wait on a remote barrier";
    if (w->token_var != 0xffffffffu &&
        (w->sem != ir::MemSem::kStrong || w->scope != ir::MemScope::kCta)) {
      return "a .relaxed or .cluster qualifier on a token wait";
    }
    return "";
  }
  if (const auto* b = std::get_if<ir::BulkLoad>(&op)) {
    return b->dst.cta == ir::kNoExpr && b->bar.cta == ir::kNoExpr ? "" : "bulk.load with @cta";
  }
  if (const auto* b = std::get_if<ir::BulkStore>(&op)) {
    return b->src.cta == ir::kNoExpr ? "" : "bulk.store from @cta";
  }
  if (const auto* c = std::get_if<ir::CpAsync>(&op)) {
    return c->dst.cta == ir::kNoExpr ? "" : "cp.async into @cta";
  }
  if (const auto* c = std::get_if<ir::CpAsyncMbarrierArrive>(&op)) {
    // cp.async.mbarrier.arrive has only the .shared{::cta} form.
    return c->bar.cta == ir::kNoExpr ? "" : "cp.async.arrive on a remote barrier";
  }
  if (std::holds_alternative<ir::CpAsyncCommit>(op) || std::holds_alternative<ir::CpAsyncWait>(op) ||
      std::holds_alternative<ir::StAsync>(op)) {
    return "";
  }
  if (const auto* t = std::get_if<ir::TmaLoad>(&op)) {
    // A peer CTA's barrier (`bar B[i] @cta(r)`, unicast) makes CTA r the destination: dstMem
    // and mbar are the mapa.shared::cluster addresses of A[s] and B[i] in CTA r. With multicast
    // the operands name the same offsets in every destination CTA (PTX ISA
    // cp.async.bulk.tensor), so a barrier of one other CTA has no multicast form.
    if (t->dst.cta != ir::kNoExpr) return "tma.load into @cta";
    if (t->bar.cta != ir::kNoExpr && t->multicast_mask != ir::kNoExpr) {
      return "tma.load with multicast and a barrier @cta";
    }
    if (t->coords.size() != p.tensor_maps[t->tensor_map].global_dims.size()) {
      return "tma.load whose coordinate count differs from the tensor map's rank";
    }
    return "";
  }
  if (const auto* f = std::get_if<ir::Fence>(&op);
      f != nullptr && (f->kind == ir::Fence::Kind::kProxyTensormapRelease ||
                       f->kind == ir::Fence::Kind::kProxyTensormapAcquire)) {
    return "fence.proxy.tensormap: the executor's tensor maps are kernel parameters it never "
           "updates";
  }
  if (std::holds_alternative<ir::TensormapReplace>(op)) {
    return "tensor map updates are not executed on the GPU yet";
  }
  if (std::holds_alternative<ir::Fence>(op) || std::holds_alternative<ir::ClusterArrive>(op) ||
      std::holds_alternative<ir::ClusterWait>(op) || std::holds_alternative<ir::Exit>(op)) {
    return "";
  }
  if (const auto* b = std::get_if<ir::BufferAccess>(&op)) {
    // @cta: mapa + ld/st.shared::cluster. The executor checks and writes a data pattern per
    // agent, which a read-modify-write of many agents would not keep.
    return b->atomic ? "shared-memory atomics are not executed on the GPU yet" : "";
  }
  if (std::holds_alternative<ir::MbarrierPendingCount>(op)) return "";
  // griddepcontrol, and ld/st.global of `global` buffers shared by both launches.
  if (std::holds_alternative<ir::GridDepControl>(op) || std::holds_alternative<ir::GlobalAccess>(op)) {
    return "";
  }
  if (const auto* r = std::get_if<ir::GlobalReadback>(&op)) {
    // The executor reads back the runner's bulk global (the destination of bulk.store), not a
    // tensor map's global: a buffer that is also a tma.store source would be read in the
    // wrong place.
    if (r->buf.cta != ir::kNoExpr) return "readback of a remote buffer";
    if (TmaStoreSource(p, r->buf.buffer)) return "readback of a buffer that is a tma.store source";
    return "";
  }
  return "not implemented by the GPU executor yet";
}

// Calls fn(stmt, op) for every op statement of `block`, nested for/if bodies included.
template <typename Fn>
void ForEachOp(const ir::Block& block, const Fn& fn) {
  for (const ir::Stmt& s : block) {
    if (const auto* f = std::get_if<ir::For>(&s.node)) {
      ForEachOp(f->body, fn);
    } else if (const auto* i = std::get_if<ir::If>(&s.node)) {
      ForEachOp(i->then_body, fn);
      ForEachOp(i->else_body, fn);
    } else if (const auto* op = std::get_if<ir::Op>(&s.node)) {
      fn(s, *op);
    }
  }
}

void CheckBlock(const ir::Program& p, const ir::Block& block) {
  ForEachOp(block, [&](const ir::Stmt& s, const ir::Op& op) {
    const std::string why = Unsupported(p, op);
    if (!why.empty()) {
      Die(Where(s.where) + ": unsupported op '" + OpName(op) + "' (" + why +
          "); the GPU executor refuses the schedule rather than skip it");
    }
  });
}

// The named barriers (bar.sync / bar.arrive) of one agent whose id and thread count evaluate
// without run-time values (params and the agent's builtins, so that FA3's `bar.sync SCHED + agent`
// names one barrier per warpgroup): id -> thread counts used. `dynamic` collects the ids of the
// others (or every id, kAnyId, when an id depends on a variable).
constexpr int64_t kAnyId = -1;
void CollectNamedBarriers(const ir::Program& p, const std::vector<int64_t>& params,
                          const ir::BuiltinValues& builtins, const ir::Block& block,
                          std::map<int64_t, std::map<int64_t, int64_t>>* uses,
                          std::set<int64_t>* dynamic) {
  ir::EvalEnv env;
  env.params = params.data();
  env.num_params = params.size();
  env.builtins = &builtins;
  ForEachOp(block, [&](const ir::Stmt&, const ir::Op& op) {
    const auto* nb = std::get_if<ir::NamedBarrier>(&op);
    if (nb == nullptr) return;
    Expected<int64_t> id = ir::Eval(p, nb->id, env);
    Expected<int64_t> threads = ir::Eval(p, nb->threads, env);
    if (!id.ok()) {
      dynamic->insert(kAnyId);
    } else if (!threads.ok()) {
      dynamic->insert(*id);
    } else {
      ++(*uses)[*id][*threads];
    }
  });
}

struct Evaluator {
  const ir::Program& p;
  const std::vector<int64_t>& params;
  int64_t operator()(ir::ExprId id, const ir::BuiltinValues& b, const char* what) const {
    ir::EvalEnv env;
    env.params = params.data();
    env.num_params = params.size();
    env.builtins = &b;
    Expected<int64_t> v = ir::Eval(p, id, env);
    if (!v.ok()) Die(std::string(what) + ": " + v.status().ToString());
    return *v;
  }
};

uint32_t ElemBytes(uint32_t dtype) {
  // CUtensorMapDataType: UINT8 0, UINT16 1, UINT32 2, INT32 3, UINT64 4, INT64 5, FLOAT16 6,
  // FLOAT32 7, FLOAT64 8, BFLOAT16 9, FLOAT32_FTZ 10, TFLOAT32 11, TFLOAT32_FTZ 12.
  static const uint32_t kBytes[] = {1, 2, 4, 4, 8, 8, 2, 4, 8, 2, 4, 4, 4};
  return dtype < 13 ? kBytes[dtype] : 0;
}

struct Options {
  std::vector<std::string> files;
  std::string trace_out, out_dir, bench_out;
  std::vector<std::pair<std::string, int64_t>> overrides;
  LaunchSpec spec;  // trace, timeout_ms, ring_capacity
  uint32_t runs = 1000, seed = 1, start_delay_max = 4000, op_jitter = 400, pairs = 31;
  uint32_t trap_runs = 20;  // litmus: runs of a test once one of its runs trapped
  bool timeout_given = false;
};

Options ParseOptions(int argc, char** argv, bool many_files) {
  Options o;
  for (int i = 2; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) Die("missing value after " + a);
      return argv[++i];
    };
    auto number = [&]() -> uint32_t {
      const std::string v = next();
      char* end = nullptr;
      const unsigned long n = std::strtoul(v.c_str(), &end, 0);
      if (end == v.c_str() || *end != 0) Die(a + " wants a number, got " + v);
      return static_cast<uint32_t>(n);
    };
    if (a == "-D" || (a.rfind("-D", 0) == 0 && a.size() > 2)) {
      const std::string kv = a == "-D" ? next() : a.substr(2);
      const size_t eq = kv.find('=');
      if (eq == std::string::npos) Die("-D wants NAME=VALUE, got " + kv);
      o.overrides.emplace_back(kv.substr(0, eq), std::strtoll(kv.c_str() + eq + 1, nullptr, 0));
    } else if (a == "--trace") {
      o.trace_out = next();
    } else if (a == "--timeout-ms") {
      o.spec.timeout_ms = std::strtod(next().c_str(), nullptr);
      o.timeout_given = true;
    } else if (a == "--no-trace") {
      o.spec.trace = false;
    } else if (a == "--interpret") {
      o.spec.resolve = false;
    } else if (a == "--ring") {
      o.spec.ring_capacity = number();
    } else if (a == "--runs") {
      o.runs = number();
    } else if (a == "--seed") {
      o.seed = number();
    } else if (a == "--start-delay") {
      o.start_delay_max = number();
    } else if (a == "--op-jitter") {
      o.op_jitter = number();
    } else if (a == "--trap-runs") {
      o.trap_runs = number();
    } else if (a == "--pairs") {
      o.pairs = number();
    } else if (a == "--out") {
      o.out_dir = next();
    } else if (!a.empty() && a[0] == '-') {
      Die("unknown option " + a);
    } else {
      if (!many_files && !o.files.empty()) Die("more than one schedule file");
      o.files.push_back(a);
    }
  }
  return o;
}

// A parsed, bound and laid-out schedule, ready for RunOnGpu.
struct Prepared {
  ir::Program program;
  std::vector<int64_t> params;
  LaunchSpec spec;
  uint32_t warps = 1;
};

// Parses `file`, binds -D overrides, refuses unsupported ops (exit 2, before any CUDA call) and
// lays out shared memory, tensor maps and agents. `out->spec` keeps the options already set.
void Prepare(const std::string& file, const std::vector<std::pair<std::string, int64_t>>& overrides,
             Prepared* out) {
  Expected<ir::Program> parsed = ir::ParseFile(file);
  if (!parsed.ok()) Die(parsed.status().ToString());
  out->program = std::move(*parsed);
  const ir::Program& p = out->program;
  Expected<std::vector<int64_t>> bound = ir::BindParams(p, overrides);
  if (!bound.ok()) Die(bound.status().ToString());
  out->params = std::move(*bound);
  const std::vector<int64_t>& params = out->params;
  LaunchSpec& spec = out->spec;
  for (const ir::Role& r : p.roles) CheckBlock(p, r.body);
  Expected<std::vector<uint32_t>> enc = ir::Encode(p, params);
  if (!enc.ok()) Die(enc.status().ToString());
  spec.words = *enc;
  const std::vector<uint32_t>& w = spec.words;

  const Evaluator ev{p, params};
  const ir::BuiltinValues none = ir::MakeBuiltins(0, 0, 0, 1, 1, 0, 0);
  spec.cluster_m = static_cast<uint32_t>(p.cluster_m == ir::kNoExpr ? 1 : ev(p.cluster_m, none, "cluster"));
  spec.cluster_n = static_cast<uint32_t>(p.cluster_n == ir::kNoExpr ? 1 : ev(p.cluster_n, none, "cluster"));
  spec.clusters = static_cast<uint32_t>(p.clusters == ir::kNoExpr ? 1 : ev(p.clusters, none, "clusters"));
  const uint32_t csize = spec.cluster_m * spec.cluster_n;
  if (csize == 0 || csize > 16 || spec.clusters == 0 || spec.clusters > 1024) Die("bad cluster shape");
  // Programmatic dependent launch: the primary grid, launched first (same cluster shape).
  if (p.primaries.size() > 1) {
    Die(Where(p.primaries[0].where) + ": unsupported on the GPU: a chain of " +
        std::to_string(p.primaries.size() + 1) +
        " grids; the executor runs a primary grid and its dependent only (check it with `parity "
        "check` / `explore`)");
  }
  if (p.has_primary()) {
    const int64_t n = ev(p.primaries[0].clusters, none, "primary clusters");
    if (n < 1 || n > 1024) Die(Where(p.primaries[0].where) + ": the executor runs 1..1024 primary clusters");
    spec.primary_clusters = static_cast<uint32_t>(n);
  }
  const ir::BuiltinValues cta0 =
      ir::MakeBuiltins(0, 0, 0, spec.cluster_m, spec.cluster_n, 0, 0, spec.clusters);

  if (p.roles.size() > kMaxRoles) Die("more than 8 roles");
  if (p.barriers.size() > kMaxBarrierDecls) Die("more than 16 barrier arrays");
  if (p.buffers.size() > kMaxBufferDecls) Die("more than 16 buffers");
  if (p.tensor_maps.size() > kMaxTensorMaps) Die("more than 4 tensor maps");
  if (p.globals.size() > kMaxGlobalDecls) Die("more than 16 global buffers");

  // `global` buffers: one allocation, each buffer 256-byte aligned (the engine's limits, and
  // whole 16-byte chunks per slot: the executor reads and writes pattern chunks).
  spec.num_globals = static_cast<uint32_t>(p.globals.size());
  for (uint32_t g = 0; g < spec.num_globals; ++g) {
    const ir::GlobalDecl& d = p.globals[g];
    const int64_t slots = ev(d.slots, none, "global slots");
    const int64_t bytes = ev(d.bytes, none, "global bytes");
    if (slots < 1 || slots > 65535 || bytes < 16 || bytes > (int64_t{1} << 30) || bytes % 16 != 0) {
      Die(Where(d.where) + ": global " + d.name +
          ": the executor needs 1..65535 slots of a multiple of 16 bytes up to 1 GiB");
    }
    spec.global_offset[g] = spec.global_bytes;
    spec.global_slots[g] = static_cast<uint32_t>(slots);
    spec.global_slot_bytes[g] = static_cast<uint32_t>(bytes);
    spec.global_bytes += (static_cast<uint64_t>(slots * bytes) + 255) / 256 * 256;
    if (spec.global_bytes > (uint64_t{1} << 32)) Die(Where(d.where) + ": global buffers over 4 GiB");
  }

  // Shared memory: barriers (8 bytes each) from 0, the init bitmap, then the buffers.
  spec.num_barriers = static_cast<uint32_t>(p.barriers.size());
  uint32_t elements = 0;
  for (uint32_t b = 0; b < spec.num_barriers; ++b) {
    const int64_t n = ev(p.barriers[b].size, cta0, "barrier size");
    if (n < 1 || n > 4096) Die("barrier " + p.barriers[b].name + ": size out of range");
    spec.barrier_first[b] = elements;
    spec.barrier_size[b] = static_cast<uint32_t>(n);
    using Rec = ir::layout::BarrierRecord;
    spec.barrier_count_ref[b] = w[w[ir::kHdrBarriers] + Rec::kWords * b + Rec::kCount];
    elements += static_cast<uint32_t>(n);
  }
  spec.barrier_elements = elements;
  spec.init_bitmap_offset = 8 * elements;
  uint32_t at = spec.init_bitmap_offset + 4 * ((elements + 31) / 32);
  at = (at + 127) / 128 * 128;
  spec.buffers_begin = at;
  spec.num_buffers = static_cast<uint32_t>(p.buffers.size());
  for (uint32_t b = 0; b < spec.num_buffers; ++b) {
    const ir::BufferDecl& d = p.buffers[b];
    const int64_t stages = ev(d.stages, cta0, "buffer stages");
    const int64_t bytes = ev(d.bytes, cta0, "buffer bytes");
    const int64_t align = d.align == ir::kNoExpr ? 1024 : ev(d.align, cta0, "buffer align");
    if (stages < 1 || bytes < 16 || bytes % 16 != 0 || align < 16 || align > 1024 || (align & (align - 1)) != 0) {
      Die("buffer " + d.name + ": the executor needs stages >= 1, bytes a multiple of 16, align a power of two in 16..1024");
    }
    spec.buffer_slot_bytes[b] = static_cast<uint32_t>(bytes);
    spec.buffer_stages[b] = static_cast<uint32_t>(stages);
    if (d.alias_of != ir::BufferDecl::kNoAlias) {
      // `aliases V + OFF`: no memory of its own, inside V's slots (the engine's layout).
      const int64_t off = d.alias_offset == ir::kNoExpr ? 0 : ev(d.alias_offset, cta0, "alias offset");
      const uint32_t v = d.alias_of;
      const int64_t span = int64_t{spec.buffer_stages[v]} * spec.buffer_slot_bytes[v];
      const int64_t base = int64_t{spec.buffer_offset[v]} + off;
      if (off < 0 || off + stages * bytes > span || base % align != 0) {
        Die("buffer " + d.name + ": its alias does not fit inside " + p.buffers[v].name + " at an aligned offset");
      }
      spec.buffer_offset[b] = static_cast<uint32_t>(base);
      continue;
    }
    at = static_cast<uint32_t>((at + align - 1) / align * align);
    spec.buffer_offset[b] = at;
    at += static_cast<uint32_t>(stages * bytes);
  }
  spec.smem_bytes = (at + 15) / 16 * 16;
  if (spec.smem_bytes + 1024 > 226 * 1024) Die("shared memory " + std::to_string(spec.smem_bytes) + " bytes exceeds 227 KB");

  // Tensor maps: enum values from the encoding header, sizes evaluated here.
  {
    using Head = ir::layout::TensorMapHead;
    uint32_t o = w[ir::kHdrMaps];
    for (size_t m = 0; m < p.tensor_maps.size(); ++m) {
      const ir::TensorMapDecl& d = p.tensor_maps[m];
      TensorMapSpec t;
      t.dtype = w[o + Head::kDtype];
      t.swizzle = w[o + Head::kSwizzle];
      t.interleave = w[o + Head::kInterleave];
      t.oob_fill = w[o + Head::kOobFill];
      t.rank = w[o + Head::kRank];
      const uint32_t nstr = w[o + Head::kNumStrides], nes = w[o + Head::kNumElementStrides];
      o += Head::kWords + 2 * t.rank + nstr + nes;
      t.elem_bytes = ElemBytes(t.dtype);
      if (t.rank < 1 || t.rank > 5 || t.elem_bytes == 0) Die("tensor map " + d.name + ": bad rank or dtype");
      uint64_t packed = t.elem_bytes;
      t.box_bytes = t.elem_bytes;
      for (uint32_t k = 0; k < t.rank; ++k) {
        t.dims[k] = static_cast<uint64_t>(ev(d.global_dims[k], cta0, "tensor map dims"));
        t.box[k] = static_cast<uint32_t>(ev(d.box_dims[k], cta0, "tensor map box"));
        t.elem_strides[k] = d.element_strides.empty() ? 1 : static_cast<uint32_t>(ev(d.element_strides[k], cta0, "element strides"));
        t.box_bytes *= t.box[k];
        if (k > 0) {
          t.strides[k - 1] = d.global_strides.empty() ? packed : static_cast<uint64_t>(ev(d.global_strides[k - 1], cta0, "strides"));
        }
        packed = (k > 0 ? t.strides[k - 1] : t.elem_bytes) * t.dims[k];
      }
      t.global_bytes = packed;
      if (t.global_bytes > (uint64_t{1} << 32)) Die("tensor map " + d.name + ": global tensor over 4 GiB");
      spec.maps.push_back(t);
    }
  }

  // Roles: body word ranges from the encoding header; agents per CTA as the engine numbers them
  // (roles in order, `when` per CTA, index_in_cta counting the instantiated agents).
  {
    using Head = ir::layout::RoleHead;
    uint32_t o = w[ir::kHdrRoles];
    spec.num_roles = static_cast<uint32_t>(p.roles.size());
    for (uint32_t r = 0; r < spec.num_roles; ++r) {
      const uint32_t num_vars = w[o + Head::kNumVars], body_words = w[o + Head::kBodyWords];
      if (num_vars > kMaxVars) Die("role " + p.roles[r].name + ": more than 48 variables");
      spec.role_num_vars[r] = num_vars;
      spec.role_threads[r] = static_cast<uint32_t>(
          p.roles[r].threads == ir::kNoExpr ? 1 : ev(p.roles[r].threads, cta0, "role threads"));
      spec.role_body_begin[r] = o + Head::kWords;
      o += Head::kWords + body_words;
    }
  }
  // Agents of each grid: the schedule's own (role.grid 0) in its clusters, then the primary's
  // (role.grid 1) in the primary clusters, whose builtins count the primary grid's clusters.
  // per_cta holds both grids' CTAs in that order (the engine's numbering); grid_of_cta which.
  std::vector<std::vector<AgentSlot>> per_cta;
  std::vector<uint8_t> grid_of_cta;
  uint32_t warps = 1, primary_warps = 1;
  const uint32_t grids = spec.primary_clusters > 0 ? 2 : 1;
  auto grid_builtins = [&](uint32_t grid, uint32_t cl, uint32_t rank, uint32_t agent) {
    return ir::MakeBuiltins(rank, rank % spec.cluster_m, rank / spec.cluster_m, spec.cluster_m,
                            spec.cluster_n, cl, agent, grid == 0 ? spec.clusters : spec.primary_clusters);
  };
  for (uint32_t grid = 0; grid < grids; ++grid) {
    const uint32_t clusters = grid == 0 ? spec.clusters : spec.primary_clusters;
    for (uint32_t c = 0; c < clusters * csize; ++c) {
      const uint32_t cl = c / csize, rank = c % csize;
      const ir::BuiltinValues b = grid_builtins(grid, cl, rank, 0);
      std::vector<AgentSlot> slots;
      for (uint32_t r = 0; r < spec.num_roles; ++r) {
        const ir::Role& role = p.roles[r];
        if (role.grid != grid) continue;
        if (role.when != ir::kNoExpr && ev(role.when, b, "role when") == 0) continue;
        const int64_t count = role.count == ir::kNoExpr ? 1 : ev(role.count, b, "role count");
        for (int64_t k = 0; k < count; ++k) {
          AgentSlot s;
          s.role = static_cast<uint16_t>(r);
          s.index_in_role = static_cast<uint16_t>(k);
          s.index_in_cta = static_cast<uint16_t>(slots.size());
          s.valid = 1;
          slots.push_back(s);
        }
      }
      if (slots.size() > kMaxWarpsPerCta) Die("more than 32 agents in a CTA");
      uint32_t& most = grid == 0 ? warps : primary_warps;
      most = std::max<uint32_t>(most, static_cast<uint32_t>(slots.size()));
      per_cta.push_back(std::move(slots));
      grid_of_cta.push_back(static_cast<uint8_t>(grid));
    }
  }
  spec.warps_per_cta = warps;
  spec.primary_warps_per_cta = spec.primary_clusters > 0 ? primary_warps : 0;
  for (size_t c = 0; c < per_cta.size(); ++c) {
    const uint32_t width = grid_of_cta[c] == 0 ? warps : primary_warps;
    std::vector<AgentSlot>& to = grid_of_cta[c] == 0 ? spec.agents : spec.primary_agents;
    for (uint32_t k = 0; k < width; ++k) to.push_back(k < per_cta[c].size() ? per_cta[c][k] : AgentSlot{});
  }

  out->warps = warps;

  // Named barriers: the schedule counts a participant as its role's `threads`, the GPU as one
  // warp. Where the agents that use barrier `id` with a count are known statically (the id
  // evaluates from params and each agent's builtins), the hardware count is 32 x their
  // participations in a phase, the same in every CTA: each agent once where their roles'
  // threads add up to the count, else each as often as its body names (id, count) where that
  // adds up (FA3's last epilogue warp arrives on EpilogueBarrier and then syncs on it, 256 + 32
  // threads). Otherwise the executor scales the count by the executing role's threads (and
  // faults when that is not a whole number of agents).
  {
    std::vector<std::vector<std::map<int64_t, std::map<int64_t, int64_t>>>> uses(per_cta.size());
    std::set<int64_t> dynamic;
    const size_t own_ctas = static_cast<size_t>(spec.clusters) * csize;
    for (size_t c = 0; c < per_cta.size(); ++c) {
      const uint32_t grid = grid_of_cta[c];
      const size_t in_grid = grid == 0 ? c : c - own_ctas;
      const uint32_t cl = static_cast<uint32_t>(in_grid / csize), rank = static_cast<uint32_t>(in_grid % csize);
      uses[c].resize(per_cta[c].size());
      for (size_t k = 0; k < per_cta[c].size(); ++k) {
        const AgentSlot& slot = per_cta[c][k];
        const ir::BuiltinValues b = grid_builtins(grid, cl, rank, slot.index_in_role);
        CollectNamedBarriers(p, params, b, p.roles[slot.role].body, &uses[c][k], &dynamic);
      }
    }
    // The hardware count of (id, want) under one participation rule, or -1 where the CTAs
    // disagree or the rule does not add up to `want`.
    auto hardware_count = [&](int64_t id, int64_t want, bool by_occurrences) -> int64_t {
      int64_t hw = -1;
      for (size_t c = 0; c < per_cta.size(); ++c) {
        int64_t threads = 0, warps = 0;
        for (size_t k = 0; k < per_cta[c].size(); ++k) {
          auto by_id = uses[c][k].find(id);
          if (by_id == uses[c][k].end()) continue;
          auto by_count = by_id->second.find(want);
          if (by_count == by_id->second.end()) continue;
          const int64_t times = by_occurrences ? by_count->second : 1;
          threads += times * spec.role_threads[per_cta[c][k].role];
          warps += times;
        }
        if (warps == 0) continue;
        if (threads != want || (hw >= 0 && hw != 32 * warps)) return -1;
        hw = 32 * warps;
      }
      return hw > 0 && hw <= 1024 ? hw : -1;
    };
    for (int64_t id = 0; id < 16; ++id) {
      if (dynamic.count(kAnyId) || dynamic.count(id)) continue;
      std::set<int64_t> counts;
      for (const auto& cta : uses) {
        for (const auto& agent : cta) {
          auto it = agent.find(id);
          if (it == agent.end()) continue;
          for (const auto& [count, times] : it->second) counts.insert(count);
        }
      }
      uint32_t j = 0;
      for (int64_t want : counts) {
        if (j == exec::kNamedCounts) break;
        int64_t hw = hardware_count(id, want, false);
        if (hw < 0) hw = hardware_count(id, want, true);
        if (hw < 0) continue;
        spec.named_threads[id][j] = static_cast<uint32_t>(want);
        spec.named_hw_threads[id][j] = static_cast<uint32_t>(hw);
        ++j;
      }
    }
  }
}

// "agents: N run from host-resolved op streams, M interpreted (the first because of ...)".
std::string AgentsLine(const RunOutput& out) {
  std::string line = "agents: " + std::to_string(out.resolved_agents) +
                     " run from host-resolved op streams, " + std::to_string(out.interpreted_agents) +
                     " interpreted";
  if (out.interpreted_agents > 0) line += " (the first because of " + out.interpret_reason + ")";
  return line;
}

int Run(int argc, char** argv) {
  Options opt = ParseOptions(argc, argv, false);
  if (opt.files.empty()) Die("usage: parity_gpu run FILE.pipe [-D N=V] [--trace OUT] [--timeout-ms N]");
  const std::string& trace_out = opt.trace_out;
  Prepared prep;
  prep.spec = opt.spec;
  Prepare(opt.files[0], opt.overrides, &prep);
  const ir::Program& p = prep.program;
  const std::vector<int64_t>& params = prep.params;
  const LaunchSpec& spec = prep.spec;
  const uint32_t warps = prep.warps;
  RunOutput out;
  const std::string err = RunOnGpu(spec, &out);
  if (!err.empty()) Die(err);

  if (!out.trap.empty()) {
    std::printf("parity_gpu: %s on %s: the GPU trapped (%s): the kernel raised an exception, as "
                "the H100 does for an mbarrier arrive beyond the pending count or a tx-count out of "
                "range; no trace could be read back\n",
                p.name.c_str(), out.device_name.c_str(), out.trap.c_str());
    return 1;
  }
  auto barrier_name = [&](uint32_t b, uint32_t i) {
    return (b < p.barriers.size() ? p.barriers[b].name : "?") + "[" + std::to_string(i) + "]";
  };
  std::printf("parity_gpu: %s on %s: cluster %ux%u x %u, %u warps/CTA, %u bytes shared, %.3f ms\n",
              p.name.c_str(), out.device_name.c_str(), spec.cluster_m, spec.cluster_n,
              spec.clusters, warps, spec.smem_bytes, out.kernel_ms);
  if (spec.primary_clusters > 0) {
    std::printf("parity_gpu: programmatic dependent launch: the primary grid (%u cluster(s), %u "
                "warps/CTA; clusters %u.. in the trace) first, then the schedule's grid on the same "
                "stream with cudaLaunchAttributeProgrammaticStreamSerialization\n",
                spec.primary_clusters, spec.primary_warps_per_cta, spec.clusters);
  }
  std::printf("parity_gpu: %s\n", AgentsLine(out).c_str());
  // "cluster C" in the trace's numbering, with the primary grid's own cluster id for its CTAs.
  auto cluster_name = [&](uint32_t cl) {
    std::string name = "cluster " + std::to_string(cl);
    if (spec.primary_clusters > 0 && cl >= spec.clusters) {
      name += " (primary grid cluster " + std::to_string(cl - spec.clusters) + ")";
    }
    return name;
  };
  uint64_t dropped = 0;
  for (const AgentRecord& r : out.agents) dropped += r.dropped;
  if (out.hang.kind == 1) {
    std::printf("parity_gpu: hang observed: wait %s parity %u in %s CTA %u (agent %u, pc %u) "
                "timed out after %.0f ms\n",
                barrier_name(out.hang.barrier, out.hang.index).c_str(), out.hang.parity,
                cluster_name(out.hang.cluster).c_str(), out.hang.cta, out.hang.agent, out.hang.pc,
                spec.timeout_ms);
    // The line above names the agent whose budget expired first: a race when several CTAs hang
    // at the same wait (the CTA varies run to run). The list below is every blocked wait, sorted
    // by (cluster, CTA, agent), so that it reads the same in every run of a deterministic hang.
    std::vector<trace::TraceEvent> blocked;
    for (const trace::TraceEvent& e : out.events) {
      if (e.kind == static_cast<uint8_t>(trace::EventKind::kWaitTimeout)) blocked.push_back(e);
    }
    std::sort(blocked.begin(), blocked.end(), [](const trace::TraceEvent& x, const trace::TraceEvent& y) {
      return std::tie(x.cluster, x.cta, x.agent) < std::tie(y.cluster, y.cta, y.agent);
    });
    for (const trace::TraceEvent& e : blocked) {
      std::printf("parity_gpu:   %s wait %s parity %u in %s CTA %u (agent %u)\n",
                  (e.flags & kFlagAborted) ? "blocked " : "timed out", barrier_name(e.object, e.index).c_str(),
                  e.parity, cluster_name(e.cluster).c_str(), e.cta, e.agent);
    }
  } else if (out.hang.kind == 2) {
    // The expression faults are ir::EvalError's (sim/ir/exec.h evaluates as sim/ir/eval.h).
    static const char* const kEvalErrors[] = {"a for loop step that is not positive",
                                              "division by zero", "overflow",
                                              "shift count outside 0..63", "bad reference",
                                              "malformed expression"};
    const std::string detail =
        out.hang.fault == kFaultEval && out.hang.eval_error < std::size(kEvalErrors)
            ? std::string(": ") + kEvalErrors[out.hang.eval_error]
            : std::string();
    std::printf("parity_gpu: interpreter fault: %s%s in %s CTA %u agent %u (pc %u)\n",
                FaultName(out.hang.fault), detail.c_str(), cluster_name(out.hang.cluster).c_str(),
                out.hang.cta, out.hang.agent, out.hang.pc);
  } else {
    std::printf("parity_gpu: %s\n", out.completed ? "completed" : "did not complete (some agent never finished)");
  }
  std::printf("parity_gpu: data: %" PRIu64 " uses, %" PRIu64 " chunks checked, %" PRIu64
              " not pattern data, %" PRIu64 " zero\n",
              out.uses, out.used_chunks, out.bad_chunks, out.zero_chunks);
  std::printf("parity_gpu: global: %" PRIu64 " chunks stored from `write` data, %" PRIu64
              " chunks neither pattern nor written data\n",
              out.stored_chunks, out.bad_global_chunks);
  // Dependents whose griddepcontrol.wait returned only because the primary grid was aborted:
  // in the model that wait never returns (the primary grid never completes).
  const uint32_t csize = spec.cluster_m * spec.cluster_n;
  for (const AgentRecord& r : out.agents) {
    if (r.griddep_released_by_abort == 0) continue;
    std::printf("parity_gpu:   blocked  griddepcontrol.wait in %s CTA %u (agent %u): the primary "
                "grid never completed (it was aborted)\n",
                cluster_name(r.cta_global / csize).c_str(), r.cta_global % csize, r.warp);
  }
  size_t stale = 0;
  if (!p.globals.empty()) {
    std::printf("parity_gpu: global buffers: %" PRIu64 " uses, %" PRIu64 " chunks checked, %" PRIu64
                " still held the initial contents, %" PRIu64 " neither initial nor written data\n",
                out.global_uses, out.global_used_chunks, out.global_initial_chunks,
                out.global_bad_chunks);
    if (spec.trace) {
      const std::vector<size_t> reads = StaleGlobalReads(out.events, spec.clusters);
      stale = reads.size();
      std::printf("parity_gpu: stale reads: %zu (a use of the schedule's grid saw the initial "
                  "contents of bytes that a write of the primary grid covers)\n", stale);
      for (size_t i : reads) {
        const trace::TraceEvent& e = out.events[i];
        std::printf("parity_gpu:   stale use %s[%u] + %d bytes %d in %s CTA %u (agent %u)\n",
                    p.globals[e.object].name.c_str(), e.index, e.value2, e.value,
                    cluster_name(e.cluster).c_str(), e.cta, e.agent);
      }
    }
  }
  std::printf("parity_gpu: trace: %zu events%s\n", out.events.size(),
              dropped ? (" (" + std::to_string(dropped) + " dropped: ring full)").c_str() : "");

  if (!trace_out.empty()) {
    trace::TraceFile tf;
    tf.header.schedule_hash = ir::ContentHash(p);
    tf.header.source = "h100";
    tf.header.device = out.device_name;
    tf.header.schedule = p.name;
    tf.header.policy = "hardware";
    for (size_t k = 0; k < p.params.size(); ++k) tf.header.params.emplace_back(p.params[k].name, params[k]);
    tf.events = out.events;
    const Status st = trace::WriteTraceFile(trace_out, tf);
    if (!st.ok()) Die(st.ToString());
    // Sidecar: where each agent ran (the trace record has no SM field).
    FILE* f = std::fopen((trace_out + ".agents").c_str(), "w");
    if (f != nullptr) {
      std::fprintf(f, "# cta_global warp sm events dropped (clock %.3f GHz)\n", out.clock_ghz);
      for (const AgentRecord& r : out.agents) {
        std::fprintf(f, "%u %u %u %u %u\n", r.cta_global, r.warp, r.smid, r.events, r.dropped);
      }
      std::fclose(f);
    }
    std::printf("parity_gpu: wrote %s\n", trace_out.c_str());
  }
  // An interpreter fault is the schedule's bad input (an index or region out of range, a
  // `while` past its bound): the simulator's engine.* errors for the same statements, exit 2.
  if (out.hang.kind == 2) return 2;
  if (out.hang.kind != 0 || !out.completed || out.bad_chunks != 0 || out.bad_global_chunks != 0 ||
      out.global_bad_chunks != 0 || stale != 0) {
    return 1;
  }
  return 0;
}


double Median(std::vector<float> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

std::string Stem(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
  const size_t dot = base.rfind(".pipe");
  if (dot != std::string::npos && dot + 5 == base.size()) base.resize(dot);
  return base;
}

// parity_gpu litmus FILE.pipe... --runs N --out DIR [--seed S] [--start-delay C] [--op-jitter C]
//                   [--timeout-ms T] [-D N=V]...
// Runs each schedule N times with varied delays between its agents and writes the histogram of
// outcomes (sim/litmus/outcome.h) to DIR/<stem>.h100.txt. Delays are drawn from a generator
// seeded with S and the test's name, so a run is reproducible: run r uses mode r % 4 (0 none,
// 1 a start delay per agent, 2 a jitter before every op, 3 both); start delays are uniform in
// 0..C cycles, op jitter uniform in 0..C cycles (hashed per agent and op from a per-run seed).
// Hangs are outcomes (every mbarrier wait is bounded by T ms, default 5).
int Litmus(int argc, char** argv) {
  Options opt = ParseOptions(argc, argv, true);
  if (opt.files.empty() || opt.out_dir.empty() || opt.runs == 0) {
    Die("usage: parity_gpu litmus FILE.pipe... --runs N --out DIR [--seed S] [--start-delay C] "
        "[--op-jitter C] [--timeout-ms T] [-D N=V]...");
  }
  if (!opt.timeout_given) opt.spec.timeout_ms = 5;
  opt.spec.trace = true;
  int status = 0;
  for (const std::string& file : opt.files) {
    Prepared prep;
    prep.spec = opt.spec;
    Prepare(file, opt.overrides, &prep);
    const std::string name = Stem(file);
    uint64_t h = 1469598103934665603ull;  // FNV-1a of the name: each test its own stream
    for (char ch : name) h = (h ^ static_cast<uint8_t>(ch)) * 1099511628211ull;
    std::map<std::string, uint64_t> counts;
    uint64_t data_errors = 0, dropped = 0, traps = 0, runs_done = 0;
    uint64_t data_errors_by_mode[4] = {0, 0, 0, 0};  // run r ran in delay mode r % 4
    std::string device = "?";
    const auto t0 = std::chrono::steady_clock::now();
    LaunchSpec spec = prep.spec;
    uint32_t target = opt.runs;
    // Runs happen in child processes: a kernel exception (trap) loses the CUDA context, so the
    // child reports it and exits, and a fresh child goes on with the next run. The parent never
    // initialises CUDA (fork after CUDA is not allowed).
    while (runs_done < target) {
      int fds[2];
      if (pipe(fds) != 0) Die("pipe failed");
      std::fflush(stdout);
      const pid_t pid = fork();
      if (pid < 0) Die("fork failed");
      if (pid == 0) {
        close(fds[0]);
        FILE* w = fdopen(fds[1], "w");
        for (uint32_t r = static_cast<uint32_t>(runs_done); r < target; ++r) {
          // Per-run generator: run r draws the same delays whatever child runs it.
          std::mt19937_64 rng(h ^ opt.seed ^ (0x9E3779B97F4A7C15ull * (r + 1)));
          const uint32_t mode = r % 4;
          // Indexed like the agents, then the primary grid's agents.
          spec.start_delay.assign(spec.agents.size() + spec.primary_agents.size(), 0);
          if (mode & 1) {
            for (uint32_t& d : spec.start_delay) d = static_cast<uint32_t>(rng() % (opt.start_delay_max + 1ull));
          }
          spec.op_jitter = (mode & 2) ? opt.op_jitter : 0;
          spec.seed = static_cast<uint32_t>(rng());
          RunOutput out;
          const std::string err = RunOnGpu(spec, &out);
          if (!err.empty()) Die(file + ": " + err);
          if (!out.trap.empty()) {
            std::fprintf(w, "%s\t0\t0\ttrap{%s}\n", out.device_name.c_str(), out.trap.c_str());
            std::fflush(w);
            _exit(0);
          }
          uint64_t drop = 0;
          for (const AgentRecord& a : out.agents) drop += a.dropped;
          std::fprintf(w, "%s\t%d\t%" PRIu64 "\t%s\n", out.device_name.c_str(),
                       out.bad_chunks != 0 || out.bad_global_chunks != 0 || out.global_bad_chunks != 0 ? 1 : 0, drop,
                       litmus::OutcomeOf(prep.program, out.events).c_str());
          std::fflush(w);
        }
        _exit(0);
      }
      close(fds[1]);
      FILE* rd = fdopen(fds[0], "r");
      char line[4096];
      uint64_t got = 0;
      while (std::fgets(line, sizeof(line), rd) != nullptr) {
        std::string l(line);
        if (!l.empty() && l.back() == '\n') l.pop_back();
        const size_t a1 = l.find('\t'), a2 = l.find('\t', a1 + 1), a3 = l.find('\t', a2 + 1);
        if (a3 == std::string::npos) continue;
        device = l.substr(0, a1);
        if (l[a1 + 1] == '1') {
          ++data_errors;
          ++data_errors_by_mode[(runs_done + got) % 4];
        }
        dropped += std::strtoull(l.c_str() + a2 + 1, nullptr, 10);
        const std::string outcome = l.substr(a3 + 1);
        ++counts[outcome];
        ++got;
        if (outcome.rfind("trap{", 0) == 0) {
          ++traps;
          // Each trap costs a new process and context: keep such tests short.
          target = std::min<uint32_t>(target, std::max<uint32_t>(static_cast<uint32_t>(runs_done + got), opt.trap_runs));
        }
      }
      std::fclose(rd);
      int child_status = 0;
      waitpid(pid, &child_status, 0);
      runs_done += got;
      if (got == 0) {
        Die(file + ": the run child failed (status " + std::to_string(child_status) + ") without a result");
      }
    }
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::string text = litmus::FormatHistogram(name, ir::ContentHashHex(prep.program), "h100",
                                               runs_done, counts);
    char note[512];
    std::snprintf(note, sizeof(note),
                  "# device %s; parity_gpu litmus --runs %u --seed %u --start-delay %u "
                  "--op-jitter %u --timeout-ms %g; run r: delay mode r %% 4 (0 none, 1 start, "
                  "2 op jitter, 3 both); %.2f s\n"
                  "# runs with wrong data (a use saw non-pattern bytes): %" PRIu64
                  "; trace events dropped: %" PRIu64 "; kernel exceptions (trap{...}: the CUDA "
                  "error of a run whose kernel trapped; such tests stop after %u runs): %" PRIu64 "\n",
                  device.c_str(), opt.runs, opt.seed, opt.start_delay_max, opt.op_jitter,
                  spec.timeout_ms, secs, data_errors, dropped, opt.trap_runs, traps);
    text += note;
    if (data_errors != 0) {
      std::snprintf(note, sizeof(note),
                    "# runs with wrong data by delay mode (0 none, 1 start, 2 op jitter, 3 both): "
                    "%" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 "\n",
                    data_errors_by_mode[0], data_errors_by_mode[1], data_errors_by_mode[2],
                    data_errors_by_mode[3]);
      text += note;
    }
    const std::string path = opt.out_dir + "/" + name + ".h100.txt";
    FILE* f = std::fopen(path.c_str(), "w");
    if (f == nullptr) Die("cannot write " + path);
    std::fputs(text.c_str(), f);
    std::fclose(f);
    std::printf("parity_gpu litmus: %s: %zu outcome(s) in %" PRIu64 " runs (%.2f s)%s\n", name.c_str(),
                counts.size(), runs_done, secs, data_errors ? " WRONG DATA" : "");
    for (const auto& [o, n] : counts) std::printf("  %8" PRIu64 "  %s\n", n, o.c_str());
    if (data_errors != 0 || dropped != 0) status = 1;
  }
  return status;
}

// parity_gpu resolve FILE.pipe [-D N=V]...
// Without CUDA: whether the kernel will run every agent from an op stream resolved on the host
// (and how many ops each agent of the first CTA runs), or interpret them all and why.
int Resolve(int argc, char** argv) {
  Options opt = ParseOptions(argc, argv, false);
  if (opt.files.empty()) Die("usage: parity_gpu resolve FILE.pipe [-D N=V]...");
  Prepared prep;
  prep.spec = opt.spec;
  Prepare(opt.files[0], opt.overrides, &prep);
  const ir::Program& p = prep.program;
  // Each grid is resolved on its own (a programmatic dependent launch: the primary grid too).
  auto report = [&](const LaunchSpec& spec, const std::string& grid) {
    const ResolveReport r = ResolveOnHost(spec);
    auto where = [&](uint32_t g) {
      const AgentSlot& slot = spec.agents[g];
      const uint32_t cta_global = g / spec.warps_per_cta, csize = spec.cluster_m * spec.cluster_n;
      return "cluster " + std::to_string(cta_global / csize) + " CTA " + std::to_string(cta_global % csize) +
             " " + p.roles[slot.role].name + "[" + std::to_string(slot.index_in_role) + "]";
    };
    uint32_t agents = 0;
    for (const AgentSlot& slot : spec.agents) agents += slot.valid ? 1 : 0;
    if (!r.resolved) {
      std::printf("parity_gpu resolve: %s%s: the kernel interprets all %u agents: %s cannot be resolved "
                  "before the launch: %s\n", p.name.c_str(), grid.c_str(), agents,
                  where(r.failed_agent).c_str(), r.reason.c_str());
      return;
    }
    uint64_t total = 0;
    for (uint32_t n : r.ops_per_agent) total += n;
    std::printf("parity_gpu resolve: %s%s: all %u agents run from op streams resolved on the host: %" PRIu64
                " ops, %" PRIu64 " bytes on the device\n", p.name.c_str(), grid.c_str(), agents, total, r.bytes);
    for (uint32_t g = 0; g < spec.agents.size() && g < spec.warps_per_cta; ++g) {
      if (spec.agents[g].valid) std::printf("  %s: %u ops\n", where(g).c_str(), r.ops_per_agent[g]);
    }
  };
  const LaunchSpec& spec = prep.spec;
  if (spec.primary_clusters > 0) {
    report(PrimaryView(spec), " (the primary grid)");
    report(spec, " (the dependent grid)");
  } else {
    report(spec, "");
  }
  for (uint32_t id = 0; id < exec::kMaxNamedBarriers; ++id) {
    for (uint32_t j = 0; j < exec::kNamedCounts; ++j) {
      if (spec.named_threads[id][j] == 0) continue;
      std::printf("  named barrier %u: the schedule's %u threads are %u warp arrivals "
                  "(%u hardware threads)\n",
                  id, spec.named_threads[id][j], spec.named_hw_threads[id][j] / 32,
                  spec.named_hw_threads[id][j]);
    }
  }
  return 0;
}

// parity_gpu bench FILE.pipe [-D N=V]... [--pairs N] [--out FILE]
// Times the schedule with tracing compiled in and compiled out (N ABBA pairs, CUDA events,
// medians), and cudaMemcpy device-to-device of tensor map 0's bytes in the same process. For a
// streaming schedule that reads tensor map 0 once and writes a tensor of the same size once
// (gpu/bench/stream_copy.pipe), the executor's bandwidth is 2 x bytes / untraced time and the
// copy's 2 x bytes / copy time (read + write each).
int Bench(int argc, char** argv) {
  Options opt = ParseOptions(argc, argv, false);
  if (opt.files.empty() || opt.pairs == 0) Die("usage: parity_gpu bench FILE.pipe [-D N=V]... [--pairs N] [--out FILE]");
  Prepared prep;
  prep.spec = opt.spec;
  prep.spec.trace = true;
  Prepare(opt.files[0], opt.overrides, &prep);
  if (prep.spec.primary_clusters > 0) Die("bench times one grid: a programmatic dependent launch is not benchmarked");
  prep.spec.bench_pairs = opt.pairs;
  const uint64_t bytes = prep.spec.maps.empty() ? 0 : prep.spec.maps[0].global_bytes;
  prep.spec.memcpy_bytes = bytes;
  RunOutput out;
  const std::string err = RunOnGpu(prep.spec, &out);
  if (!err.empty()) Die(err);
  const double on = Median(out.traced_ms), off = Median(out.untraced_ms);
  const double cp = Median(out.memcpy_ms);
  const double gbps_exec = off > 0 ? 2.0 * bytes / (off * 1e-3) / 1e9 : 0;
  const double gbps_copy = cp > 0 ? 2.0 * bytes / (cp * 1e-3) / 1e9 : 0;
  uint64_t dropped = 0;
  for (const AgentRecord& a : out.agents) dropped += a.dropped;
  char buf[2048];
  std::snprintf(buf, sizeof(buf),
                "schedule %s on %s (%d SMs): %u ABBA pairs, recorded run %s (uses %" PRIu64 ", bad chunks %" PRIu64
                ", global chunks stored %" PRIu64 ", bad %" PRIu64 ", trace events %zu, dropped %" PRIu64
                "), bench launches %s\n"
                "tracing overhead: median traced %.4f ms, untraced %.4f ms: %+.2f%%\n"
                "traced min/max %.4f/%.4f ms, untraced min/max %.4f/%.4f ms\n"
                "bandwidth: executor %.1f GB/s (2 x %" PRIu64 " bytes / untraced median), cudaMemcpy D2D %.1f GB/s "
                "(median %.4f ms): %.1f%%\n"
                "%s\n",
                prep.program.name.c_str(), out.device_name.c_str(), out.sm_count, opt.pairs,
                out.completed ? "completed" : "DID NOT COMPLETE", out.uses, out.bad_chunks,
                out.stored_chunks, out.bad_global_chunks, out.events.size(), dropped,
                out.bench_ok ? "all completed" : "SOME HUNG",
                on, off, off > 0 ? 100.0 * (on / off - 1) : 0.0,
                out.traced_ms.empty() ? 0.0 : *std::min_element(out.traced_ms.begin(), out.traced_ms.end()),
                out.traced_ms.empty() ? 0.0 : *std::max_element(out.traced_ms.begin(), out.traced_ms.end()),
                out.untraced_ms.empty() ? 0.0 : *std::min_element(out.untraced_ms.begin(), out.untraced_ms.end()),
                out.untraced_ms.empty() ? 0.0 : *std::max_element(out.untraced_ms.begin(), out.untraced_ms.end()),
                gbps_exec, bytes, gbps_copy, cp, gbps_copy > 0 ? 100.0 * gbps_exec / gbps_copy : 0.0,
                AgentsLine(out).c_str());
  std::fputs(buf, stdout);
  if (!opt.out_dir.empty()) {
    FILE* f = std::fopen(opt.out_dir.c_str(), "a");
    if (f == nullptr) Die("cannot write " + opt.out_dir);
    std::fputs(buf, f);
    std::fclose(f);
  }
  return out.completed && out.bench_ok && out.bad_chunks == 0 && out.bad_global_chunks == 0 ? 0 : 1;
}

}  // namespace
}  // namespace parity::gpu

int main(int argc, char** argv) {
  const std::string cmd = argc >= 2 ? argv[1] : "";
  if (cmd == "run") return parity::gpu::Run(argc, argv);
  if (cmd == "litmus") return parity::gpu::Litmus(argc, argv);
  if (cmd == "bench") return parity::gpu::Bench(argc, argv);
  if (cmd == "resolve") return parity::gpu::Resolve(argc, argv);
  std::fprintf(stderr,
               "usage: parity_gpu run FILE.pipe [-D N=V]... [--trace OUT] [--timeout-ms N] [--no-trace]\n"
               "       parity_gpu litmus FILE.pipe... --runs N --out DIR [--seed S]\n"
               "       parity_gpu bench FILE.pipe [-D N=V]... [--pairs N] [--out FILE]\n"
               "       parity_gpu resolve FILE.pipe [-D N=V]...\n");
  return 2;
}
