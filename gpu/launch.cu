// The executor's host launcher (RunOnGpu, gpu/executor.h): tensor maps and global memory with
// their patterns, each grid's agents, rings and resolved op streams, the launch or the two
// launches of a programmatic dependent launch (the primary grid, then the schedule's own with
// cudaLaunchAttributeProgrammaticStreamSerialization), the watchdog for waits with no bounded
// form, and the merge of every agent's trace records onto one time axis.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "gpu/executor.h"
#include "gpu/host.cuh"
#include "gpu/kernel_config.cuh"
#include "gpu/resolve.h"

namespace parity::gpu {
namespace {

using exec::ResolvedOp;
using trace::TraceEvent;

// The fields of the kernel's configuration besides the shared layout (gpu/resolve.h, FillLayout)
// and the run-time pointers.
void FillScheduleConfig(const LaunchSpec& s, DeviceConfig* c) {
  FillLayout(s, c);
  c->clusters = s.clusters;
  c->warps_per_cta = s.warps_per_cta;
  c->barrier_elements = s.barrier_elements;
  c->init_bitmap_offset = s.init_bitmap_offset;
  c->buffers_begin = s.buffers_begin;
  c->smem_bytes = s.smem_bytes;
  for (size_t m = 0; m < s.maps.size(); ++m) {
    c->map_rank[m] = s.maps[m].rank;
    c->map_box_bytes[m] = s.maps[m].box_bytes;
  }
}

// One grid's launch: its agents, rings, records, exit counters and resolved op streams.
struct Grid {
  LaunchSpec view;  // the grid's clusters, warps and agents
  uint32_t num_agents = 0, valid_agents = 0;
  std::vector<uint32_t> per_cluster;
  DeviceConfig c{};
  AgentSlot* d_agents = nullptr;
  uint32_t* d_counts = nullptr;  // [0] agents that ran to their end, [1..] exit count per cluster
  uint32_t* d_per_cluster = nullptr;
  uint32_t* d_delay = nullptr;
  ResolvedOp* d_resolved = nullptr;
  uint32_t* d_resolved_index = nullptr;
  bool resolved = false;
  std::string why;
  std::vector<AgentRecord> recs;
  std::vector<TraceEvent> ring;
};

// Allocates grid `g`'s own resources and fills its configuration from `common` (the layout and
// the pointers both grids share). `delays`: the litmus start delays of its agents, or empty.
void SetUpGrid(Grid& g, const DeviceConfig& common, const std::vector<uint32_t>& delays) {
  const LaunchSpec& s = g.view;
  const uint32_t csize = s.cluster_m * s.cluster_n;
  g.num_agents = csize * s.clusters * s.warps_per_cta;
  g.c = common;
  g.c.clusters = s.clusters;
  g.c.warps_per_cta = s.warps_per_cta;
  PARITY_CUDA_CHECK(cudaMalloc(&g.d_agents, std::max<size_t>(1, s.agents.size()) * sizeof(AgentSlot)));
  PARITY_CUDA_CHECK(cudaMemcpy(g.d_agents, s.agents.data(), s.agents.size() * sizeof(AgentSlot),
                               cudaMemcpyHostToDevice));
  g.c.agents = g.d_agents;
  PARITY_CUDA_CHECK(cudaMalloc(&g.c.ring, sizeof(TraceEvent) * g.num_agents * g.c.ring_capacity));
  PARITY_CUDA_CHECK(cudaMalloc(&g.c.records, sizeof(AgentRecord) * g.num_agents));
  PARITY_CUDA_CHECK(cudaMemset(g.c.records, 0, sizeof(AgentRecord) * g.num_agents));
  PARITY_CUDA_CHECK(cudaMalloc(&g.d_counts, 4 * (1 + s.clusters)));
  PARITY_CUDA_CHECK(cudaMemset(g.d_counts, 0, 4 * (1 + s.clusters)));
  g.c.grid_done = g.d_counts;
  g.c.exit_count = g.d_counts + 1;
  g.per_cluster.assign(s.clusters, 0);
  for (uint32_t a = 0; a < g.num_agents; ++a) {
    if (s.agents[a].valid) {
      ++g.per_cluster[a / (csize * s.warps_per_cta)];
      ++g.valid_agents;
    }
  }
  PARITY_CUDA_CHECK(cudaMalloc(&g.d_per_cluster, 4 * s.clusters));
  PARITY_CUDA_CHECK(cudaMemcpy(g.d_per_cluster, g.per_cluster.data(), 4 * s.clusters, cudaMemcpyHostToDevice));
  g.c.agents_per_cluster = g.d_per_cluster;
  g.c.start_delay = nullptr;
  if (!delays.empty()) {
    PARITY_CUDA_CHECK(cudaMalloc(&g.d_delay, 4 * g.num_agents));
    PARITY_CUDA_CHECK(cudaMemcpy(g.d_delay, delays.data(), 4 * g.num_agents, cudaMemcpyHostToDevice));
    g.c.start_delay = g.d_delay;
  }
  // Resolve on the host every agent's run (ResolveAgent) when each one's is fixed before the
  // launch; otherwise the kernel interprets them all (all or none: agents of one launch run at
  // the same kind of speed, and a schedule that faults faults as the interpreter reports it).
  g.c.resolved = nullptr;
  g.c.resolved_index = nullptr;
  std::vector<ResolvedOp> ops;
  std::vector<uint32_t> index;
  uint32_t failed = 0;
  g.why = "resolution switched off (--interpret)";
  g.resolved = s.resolve && ResolveAll(s, &ops, &index, &failed, &g.why);
  if (g.resolved) {
    PARITY_CUDA_CHECK(cudaMalloc(&g.d_resolved, std::max<size_t>(1, ops.size()) * sizeof(ResolvedOp)));
    if (!ops.empty()) {
      PARITY_CUDA_CHECK(cudaMemcpy(g.d_resolved, ops.data(), ops.size() * sizeof(ResolvedOp), cudaMemcpyHostToDevice));
    }
    PARITY_CUDA_CHECK(cudaMalloc(&g.d_resolved_index, 4 * index.size()));
    PARITY_CUDA_CHECK(cudaMemcpy(g.d_resolved_index, index.data(), 4 * index.size(), cudaMemcpyHostToDevice));
    g.c.resolved = g.d_resolved;
    g.c.resolved_index = g.d_resolved_index;
  }
}

void FreeGrid(Grid& g) {
  PARITY_CUDA_CHECK(cudaFree(g.d_agents));
  PARITY_CUDA_CHECK(cudaFree(g.c.ring));
  PARITY_CUDA_CHECK(cudaFree(g.c.records));
  PARITY_CUDA_CHECK(cudaFree(g.d_counts));
  PARITY_CUDA_CHECK(cudaFree(g.d_per_cluster));
  if (g.d_delay != nullptr) PARITY_CUDA_CHECK(cudaFree(g.d_delay));
  if (g.d_resolved != nullptr) PARITY_CUDA_CHECK(cudaFree(g.d_resolved));
  if (g.d_resolved_index != nullptr) PARITY_CUDA_CHECK(cudaFree(g.d_resolved_index));
}

// Fills `data` (16-byte chunks) with pattern chunks of `tag` whose first word is the chunk index.
void FillPattern(std::vector<uint32_t>* data, uint32_t tag) {
  for (uint64_t k = 0; k < data->size() / 4; ++k) {
    const uint32_t h = PatternHash(static_cast<uint32_t>(k), tag);
    (*data)[4 * k] = static_cast<uint32_t>(k);
    (*data)[4 * k + 1] = tag;
    (*data)[4 * k + 2] = h;
    (*data)[4 * k + 3] = ~h;
  }
}

// Counters the kernel adds to (DeviceConfig::stats): uses, used chunks, bad chunks, zero chunks,
// finished agents; global uses, used chunks, initial chunks, bad chunks.
constexpr size_t kStats = 16;
// The bulk/cp.async global's pattern chunks.
constexpr uint32_t kBulkTag = kPatternTagBase | 0xfeu;

// What both grids share: the layout, the words, the bulk and `global` memory, the tensor maps
// with their tensors, the abort flag, the hang report and the statistics.
struct Shared {
  TensorMaps maps{};
  std::vector<void*> tensors;  // the tensor maps' global tensors
  void* d_bulk = nullptr;
  uint64_t bulk_bytes = 0;
  void* d_globals = nullptr;
  uint64_t global_bytes = 0;
  uint32_t* d_words = nullptr;
  uint32_t* d_flags = nullptr;  // abort, claim
  HangReport* d_hang = nullptr;
  unsigned long long* d_stats = nullptr;
  DeviceConfig c{};
};

// The launches of the run: one per grid on one stream, and the kernels of the bench.
struct Launch {
  ExecutorKernelFn kernel = nullptr;
  cudaLaunchConfig_t cfg{};
  cudaLaunchAttribute attr[2];
};
struct Launches {
  std::vector<Launch> grids;  // indexed like the grids
  ExecutorKernelFn traced = nullptr, untraced = nullptr;  // the own grid's two variants
  uint32_t smem = 0;
  cudaStream_t stream = nullptr;
  cudaEvent_t e0 = nullptr, e1 = nullptr;
};

// The device's name, SM count and clock into `out`; "" or why it cannot run the executor.
std::string QueryDevice(RunOutput* out, int* clock_khz) {
  int device = 0;
  PARITY_CUDA_CHECK(cudaGetDevice(&device));
  cudaDeviceProp prop{};
  PARITY_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  out->device_name = prop.name;
  out->sm_count = prop.multiProcessorCount;
  if (prop.major != 9) return std::string("needs a Hopper GPU (sm_90), found ") + prop.name;
  PARITY_CUDA_CHECK(cudaDeviceGetAttribute(clock_khz, cudaDevAttrClockRate, device));
  out->clock_ghz = *clock_khz / 1e6;
  return "";
}

// "" or what in the spec the launcher cannot take.
std::string CheckSpec(const LaunchSpec& s) {
  const uint32_t csize = s.cluster_m * s.cluster_n;
  const bool pdl = s.primary_clusters > 0;
  if (s.agents.size() != csize * s.clusters * s.warps_per_cta) return "agent table size mismatch";
  if (pdl && s.primary_agents.size() != csize * s.primary_clusters * s.primary_warps_per_cta) {
    return "primary agent table size mismatch";
  }
  if (pdl && s.bench_pairs > 0) return "bench does not run a programmatic dependent launch";
  if (s.maps.size() > kMaxTensorMaps) return "too many tensor maps";
  if (s.num_globals > kMaxGlobalDecls) return "too many global buffers";
  if (!s.start_delay.empty() &&
      s.start_delay.size() != s.agents.size() + (pdl ? s.primary_agents.size() : 0)) {
    return "start_delay size mismatch";
  }
  return "";
}

// Device memory filled with pattern chunks of `tag` (16-byte multiples of `bytes`).
void* PatternOnDevice(uint64_t bytes, uint32_t tag) {
  std::vector<uint32_t> host(bytes / 4);
  FillPattern(&host, tag);
  void* d = nullptr;
  PARITY_CUDA_CHECK(cudaMalloc(&d, bytes));
  PARITY_CUDA_CHECK(cudaMemcpy(d, host.data(), bytes, cudaMemcpyHostToDevice));
  return d;
}

// Global tensors with the pattern, and their tensor maps; "" or the encoder's failure.
std::string SetUpTensorMaps(const LaunchSpec& s, Shared* sh) {
  for (size_t m = 0; m < s.maps.size(); ++m) {
    const TensorMapSpec& t = s.maps[m];
    const uint64_t bytes = (t.global_bytes + 15) / 16 * 16;
    void* g = PatternOnDevice(bytes, kPatternTagBase | static_cast<uint32_t>(m));
    sh->tensors.push_back(g);
    cuuint64_t dims[5], strides[4];
    cuuint32_t box[5], es[5];
    for (uint32_t d = 0; d < t.rank; ++d) {
      dims[d] = t.dims[d];
      box[d] = t.box[d];
      es[d] = t.elem_strides[d];
      if (d > 0) strides[d - 1] = t.strides[d - 1];
    }
    const CUresult r = GetTensorMapEncodeTiled()(
        &sh->maps.map[m], static_cast<CUtensorMapDataType>(t.dtype), t.rank, g, dims, strides, box, es,
        static_cast<CUtensorMapInterleave>(t.interleave), static_cast<CUtensorMapSwizzle>(t.swizzle),
        CU_TENSOR_MAP_L2_PROMOTION_NONE, static_cast<CUtensorMapFloatOOBfill>(t.oob_fill));
    if (r != CUDA_SUCCESS) {
      return "cuTensorMapEncodeTiled failed for tensor map " + std::to_string(m) + ": CUresult " +
             std::to_string(static_cast<int>(r));
    }
  }
  return "";
}

// The memory both grids share and the configuration common to them (sh->c).
void SetUpShared(const LaunchSpec& s, int clock_khz, Shared* sh) {
  DeviceConfig& c = sh->c;
  // The bulk/cp.async global: pattern chunks, one per 16 bytes of the buffer area.
  sh->bulk_bytes = std::max<uint64_t>(16, s.smem_bytes - s.buffers_begin);
  sh->d_bulk = PatternOnDevice(sh->bulk_bytes, kBulkTag);
  c.bulk_global = static_cast<uint8_t*>(sh->d_bulk);
  // `global` buffers: their initial contents (kGlobalInitialTag chunks, numbered across the area).
  sh->global_bytes = std::max<uint64_t>(16, (s.global_bytes + 15) / 16 * 16);
  sh->d_globals = PatternOnDevice(sh->global_bytes, kGlobalInitialTag);
  c.globals = static_cast<uint8_t*>(sh->d_globals);
  for (uint32_t k = 0; k < s.num_globals; ++k) c.global_offset[k] = s.global_offset[k];
  c.op_jitter = s.op_jitter;
  c.seed = s.seed;
  PARITY_CUDA_CHECK(cudaMalloc(&sh->d_words, s.words.size() * 4));
  PARITY_CUDA_CHECK(cudaMemcpy(sh->d_words, s.words.data(), s.words.size() * 4, cudaMemcpyHostToDevice));
  FillScheduleConfig(s, &c);
  c.words = sh->d_words;  // FillLayout's are the host's
  c.budget_cycles = static_cast<long long>(s.timeout_ms * clock_khz);
  c.ring_capacity = s.trace ? s.ring_capacity : 1;
  PARITY_CUDA_CHECK(cudaMalloc(&sh->d_flags, 4 * 2));
  PARITY_CUDA_CHECK(cudaMemset(sh->d_flags, 0, 4 * 2));
  c.abort_flag = sh->d_flags;
  c.hang_claim = sh->d_flags + 1;
  PARITY_CUDA_CHECK(cudaMalloc(&sh->d_hang, sizeof(HangReport)));
  PARITY_CUDA_CHECK(cudaMemset(sh->d_hang, 0, sizeof(HangReport)));
  c.hang = sh->d_hang;
  PARITY_CUDA_CHECK(cudaMalloc(&sh->d_stats, 8 * kStats));
  PARITY_CUDA_CHECK(cudaMemset(sh->d_stats, 0, 8 * kStats));
  c.stats = sh->d_stats;
  c.grid = 0;
  c.trace_cluster_base = 0;
  c.emit_exit = s.primary_clusters > 0 ? 1 : 0;
  c.primary_done = nullptr;
  c.primary_agents = 0;
}

// grids[0]: the schedule's own grid (the dependent one with a primary); grids[1]: the primary.
// Counts the agents resolved on the host and interpreted into `out`.
std::vector<Grid> SetUpGrids(const LaunchSpec& s, const DeviceConfig& common, RunOutput* out) {
  const bool pdl = s.primary_clusters > 0;
  std::vector<Grid> grids(pdl ? 2 : 1);
  grids[0].view = s;
  if (pdl) grids[1].view = PrimaryView(s);
  const size_t own_agents = s.agents.size();
  for (size_t k = 0; k < grids.size(); ++k) {
    std::vector<uint32_t> delays;
    if (!s.start_delay.empty()) {
      const size_t from = k == 0 ? 0 : own_agents;
      const size_t n = k == 0 ? own_agents : s.primary_agents.size();
      delays.assign(s.start_delay.begin() + from, s.start_delay.begin() + from + n);
    }
    SetUpGrid(grids[k], common, delays);
  }
  if (pdl) {
    Grid& p = grids[1];
    p.c.grid = 1;
    p.c.trace_cluster_base = s.clusters;
    grids[0].c.primary_done = p.c.grid_done;
    grids[0].c.primary_agents = p.valid_agents;
  }
  out->resolved_agents = 0;
  out->interpreted_agents = 0;
  for (const Grid& g : grids) {
    (g.resolved ? out->resolved_agents : out->interpreted_agents) += g.valid_agents;
    if (!g.resolved && out->interpret_reason.empty()) out->interpret_reason = g.why;
  }
  return grids;
}

// Each grid's launch configuration (cluster shape, shared memory, the programmatic dependent
// launch's attribute), a stream and the timing events.
Launches ConfigureLaunches(const LaunchSpec& s, std::vector<Grid>& grids) {
  const uint32_t csize = s.cluster_m * s.cluster_n;
  Launches ls;
  const uint64_t words_bytes = (s.words.size() * 4 + 15) / 16 * 16;
  const uint32_t words_in_smem = s.smem_bytes + 1024 + words_bytes <= kMaxDynamicSmem ? 1 : 0;
  // + slack to align the base to 1024, + the schedule's words when they fit.
  ls.smem = s.smem_bytes + 1024 + (words_in_smem ? static_cast<uint32_t>(words_bytes) : 0);
  PARITY_CUDA_CHECK(cudaStreamCreateWithFlags(&ls.stream, cudaStreamNonBlocking));
  ls.grids.resize(grids.size());
  for (size_t k = 0; k < grids.size(); ++k) {
    Grid& g = grids[k];
    Launch& l = ls.grids[k];
    g.c.num_words = static_cast<uint32_t>(s.words.size());
    g.c.words_in_smem = words_in_smem;
    const bool narrow = g.view.warps_per_cta <= 8;
    const ExecutorKernelFn t = ExecutorKernelFor(true, narrow), u = ExecutorKernelFor(false, narrow);
    if (k == 0) {
      ls.traced = t;
      ls.untraced = u;
    }
    l.kernel = s.trace ? t : u;
    PARITY_CUDA_CHECK(cudaFuncSetAttribute(l.kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, ls.smem));
    if (csize > 8) PARITY_CUDA_CHECK(cudaFuncSetAttribute(l.kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
    l.cfg.gridDim = dim3(s.cluster_m * g.view.clusters, s.cluster_n, 1);
    l.cfg.blockDim = dim3(32 * g.view.warps_per_cta, 1, 1);
    l.cfg.dynamicSmemBytes = ls.smem;
    l.cfg.stream = ls.stream;
    l.attr[0].id = cudaLaunchAttributeClusterDimension;
    l.attr[0].val.clusterDim.x = s.cluster_m;
    l.attr[0].val.clusterDim.y = s.cluster_n;
    l.attr[0].val.clusterDim.z = 1;
    l.cfg.attrs = l.attr;
    l.cfg.numAttrs = 1;
  }
  if (s.primary_clusters > 0) {
    // The dependent (the schedule's own grid) may start once every primary CTA executed
    // griddepcontrol.launch_dependents or exited; its griddepcontrol.wait waits for the primary.
    Launch& d = ls.grids[0];
    d.attr[1].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    d.attr[1].val.programmaticStreamSerializationAllowed = 1;
    d.cfg.numAttrs = 2;
  }
  PARITY_CUDA_CHECK(cudaEventCreate(&ls.e0));
  PARITY_CUDA_CHECK(cudaEventCreate(&ls.e1));
  return ls;
}

// Launches the grids (the primary first) and waits for them under the watchdog. False when a
// kernel raised an exception (out->trap): the context is lost, nothing more may be done.
bool LaunchAndWatch(const LaunchSpec& s, const Shared& sh, const std::vector<Grid>& grids,
                    Launches& ls, RunOutput* out) {
  const bool pdl = s.primary_clusters > 0;
  PARITY_CUDA_CHECK(cudaEventRecord(ls.e0, ls.stream));
  if (pdl) {
    PARITY_CUDA_CHECK(cudaLaunchKernelEx(&ls.grids[1].cfg, ls.grids[1].kernel, sh.maps, grids[1].c));
  }
  PARITY_CUDA_CHECK(cudaLaunchKernelEx(&ls.grids[0].cfg, ls.grids[0].kernel, sh.maps, grids[0].c));
  PARITY_CUDA_CHECK(cudaEventRecord(ls.e1, ls.stream));
  PARITY_CUDA_CHECK(cudaGetLastError());
  // Watchdog for the waits that have no bounded form (barrier.cluster.wait, bar.sync; a
  // dependent's griddepcontrol.wait behind such a primary): if the launch outlives every mbarrier
  // budget by far, report the hang and leave the process, which makes the driver tear the
  // context (and the kernels) down. The trace cannot be read back then.
  const auto start = std::chrono::steady_clock::now();
  const double limit_ms = (pdl ? 8 : 4) * s.timeout_ms + 5000;
  cudaError_t q;
  while ((q = cudaEventQuery(ls.e1)) == cudaErrorNotReady) {
    const double waited = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    if (waited > limit_ms) {
      std::printf("parity_gpu: hang observed: the kernel%s did not finish within %.0f ms although every "
                  "mbarrier wait is bounded by %.0f ms: an agent is stuck in barrier.cluster.wait or "
                  "bar.sync (no bounded form exists)%s; no trace could be read back\n",
                  pdl ? "s" : "", limit_ms, s.timeout_ms,
                  pdl ? ", or a dependent in griddepcontrol.wait behind such a primary" : "");
      std::fflush(stdout);
      std::_Exit(1);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  if (q != cudaSuccess) {
    // A kernel exception (the H100 raises one, for example, for an mbarrier arrive beyond the
    // pending count: litmus/arrive_over_count): a result of the schedule, not a runner error.
    if (q == cudaErrorLaunchFailure || q == cudaErrorIllegalInstruction ||
        q == cudaErrorIllegalAddress || q == cudaErrorMisalignedAddress ||
        q == cudaErrorHardwareStackError || q == cudaErrorInvalidPc || q == cudaErrorAssert) {
      out->trap = cudaGetErrorName(q);
      return false;
    }
    PARITY_CUDA_CHECK(q);
  }
  PARITY_CUDA_CHECK_LAUNCH();
  float ms = 0;
  PARITY_CUDA_CHECK(cudaEventElapsedTime(&ms, ls.e0, ls.e1));
  out->kernel_ms = ms;
  return true;
}

// The recorded run's hang report, statistics, agent records and rings, read before the bench
// launches overwrite them.
void ReadBack(const Shared& sh, std::vector<Grid>& grids, HangReport* hang,
              unsigned long long (&stats)[kStats]) {
  PARITY_CUDA_CHECK(cudaMemcpy(hang, sh.d_hang, sizeof(*hang), cudaMemcpyDeviceToHost));
  PARITY_CUDA_CHECK(cudaMemcpy(stats, sh.d_stats, sizeof(stats), cudaMemcpyDeviceToHost));
  for (Grid& g : grids) {
    g.recs.resize(g.num_agents);
    PARITY_CUDA_CHECK(cudaMemcpy(g.recs.data(), g.c.records, sizeof(AgentRecord) * g.num_agents,
                                 cudaMemcpyDeviceToHost));
    g.ring.resize(static_cast<size_t>(g.num_agents) * g.c.ring_capacity);
    PARITY_CUDA_CHECK(cudaMemcpy(g.ring.data(), g.c.ring, sizeof(TraceEvent) * g.ring.size(),
                                 cudaMemcpyDeviceToHost));
  }
}

// s.bench_pairs timed launches of the traced and the untraced kernel in ABBA order (and of a
// device memcpy of s.memcpy_bytes), on the one grid (a programmatic dependent launch is refused).
void RunBench(const LaunchSpec& s, const Shared& sh, const Grid& g, Launches& ls, RunOutput* out) {
  cudaLaunchConfig_t& cfg = ls.grids[0].cfg;
  void* m_src = nullptr;
  void* m_dst = nullptr;
  if (s.memcpy_bytes > 0) {
    PARITY_CUDA_CHECK(cudaMalloc(&m_src, s.memcpy_bytes));
    PARITY_CUDA_CHECK(cudaMalloc(&m_dst, s.memcpy_bytes));
    PARITY_CUDA_CHECK(cudaMemset(m_src, 0x5a, s.memcpy_bytes));
  }
  PARITY_CUDA_CHECK(cudaFuncSetAttribute(ls.traced, cudaFuncAttributeMaxDynamicSharedMemorySize, ls.smem));
  PARITY_CUDA_CHECK(cudaFuncSetAttribute(ls.untraced, cudaFuncAttributeMaxDynamicSharedMemorySize, ls.smem));
  // The traced launches write the full ring (the recorded run may have been untraced).
  TraceEvent* bench_ring = nullptr;
  PARITY_CUDA_CHECK(cudaMalloc(&bench_ring, sizeof(TraceEvent) * g.num_agents * s.ring_capacity));
  auto timed = [&](bool with_trace) -> float {
    PARITY_CUDA_CHECK(cudaMemset(sh.d_flags, 0, 4 * 2));
    PARITY_CUDA_CHECK(cudaMemset(g.d_counts, 0, 4 * (1 + s.clusters)));
    PARITY_CUDA_CHECK(cudaMemset(sh.d_hang, 0, sizeof(HangReport)));
    PARITY_CUDA_CHECK(cudaMemset(sh.d_stats, 0, 8 * kStats));
    DeviceConfig cb = g.c;
    cb.ring = with_trace ? bench_ring : g.c.ring;
    cb.ring_capacity = with_trace ? s.ring_capacity : g.c.ring_capacity;
    PARITY_CUDA_CHECK(cudaEventRecord(ls.e0, ls.stream));
    PARITY_CUDA_CHECK(cudaLaunchKernelEx(&cfg, with_trace ? ls.traced : ls.untraced, sh.maps, cb));
    PARITY_CUDA_CHECK(cudaEventRecord(ls.e1, ls.stream));
    PARITY_CUDA_CHECK_LAUNCH();
    float t = 0;
    PARITY_CUDA_CHECK(cudaEventElapsedTime(&t, ls.e0, ls.e1));
    HangReport h{};
    PARITY_CUDA_CHECK(cudaMemcpy(&h, sh.d_hang, sizeof(h), cudaMemcpyDeviceToHost));
    if (h.kind != 0) out->bench_ok = false;
    return t;
  };
  auto copy = [&]() -> float {
    PARITY_CUDA_CHECK(cudaEventRecord(ls.e0, ls.stream));
    PARITY_CUDA_CHECK(cudaMemcpyAsync(m_dst, m_src, s.memcpy_bytes, cudaMemcpyDeviceToDevice, ls.stream));
    PARITY_CUDA_CHECK(cudaEventRecord(ls.e1, ls.stream));
    PARITY_CUDA_CHECK(cudaEventSynchronize(ls.e1));
    float t = 0;
    PARITY_CUDA_CHECK(cudaEventElapsedTime(&t, ls.e0, ls.e1));
    return t;
  };
  timed(true);  // warm-up of both kernels and the copy
  timed(false);
  if (m_src != nullptr) copy();
  for (uint32_t k = 0; k < s.bench_pairs; ++k) {
    // ABBA: alternate which variant goes first, so that drift (clocks, temperature) cancels.
    if (k % 2 == 0) {
      out->traced_ms.push_back(timed(true));
      out->untraced_ms.push_back(timed(false));
    } else {
      out->untraced_ms.push_back(timed(false));
      out->traced_ms.push_back(timed(true));
    }
    if (m_src != nullptr) out->memcpy_ms.push_back(copy());
  }
  PARITY_CUDA_CHECK(cudaFree(bench_ring));
  if (m_src != nullptr) {
    PARITY_CUDA_CHECK(cudaFree(m_src));
    PARITY_CUDA_CHECK(cudaFree(m_dst));
  }
}

// The recorded run's counters, and whether it completed: every agent ran to its end, no wait
// timed out, and no griddepcontrol.wait was released by an abort.
void Summarise(const HangReport& hang, const unsigned long long (&stats)[kStats],
               const std::vector<Grid>& grids, RunOutput* out) {
  out->hang = hang;
  out->uses = stats[0];
  out->used_chunks = stats[1];
  out->bad_chunks = stats[2];
  out->zero_chunks = stats[3];
  out->global_uses = stats[5];
  out->global_used_chunks = stats[6];
  out->global_initial_chunks = stats[7];
  out->global_bad_chunks = stats[8];
  uint64_t total_agents = 0;
  for (const Grid& g : grids) total_agents += g.valid_agents;
  out->completed = hang.kind == 0 && stats[4] == total_agents;
  for (const Grid& g : grids) {
    for (uint32_t a = 0; a < g.num_agents; ++a) {
      if (g.view.agents[a].valid && g.recs[a].griddep_released_by_abort != 0) out->completed = false;
    }
  }
}

// The agents' records into out->agents and (traced) their events into out->events on one time
// axis: each agent's clock64 is per-SM; it is mapped onto the common %globaltimer axis with the
// (clock64, globaltimer) pair the agent read at its start, then sorted (stable: program order
// within an agent is kept). Times are cycles from the earliest event. Both grids share the axis.
void MergeTraces(const LaunchSpec& s, const std::vector<Grid>& grids, RunOutput* out) {
  struct Keyed { double t; uint32_t agent; uint32_t seq; TraceEvent e; };
  std::vector<Keyed> all;
  // Subtract the earliest %globaltimer first: ns since 1970 times the clock rate is ~3e18, where
  // a double resolves only 512 cycles.
  uint64_t gt0 = ~uint64_t{0};
  for (const Grid& g : grids) {
    for (uint32_t a = 0; a < g.num_agents; ++a) {
      if (g.view.agents[a].valid && g.recs[a].globaltimer_start != 0) gt0 = std::min(gt0, g.recs[a].globaltimer_start);
    }
  }
  if (gt0 == ~uint64_t{0}) gt0 = 0;
  uint32_t agent_key = 0;
  for (const Grid& g : grids) {
    for (uint32_t a = 0; a < g.num_agents; ++a, ++agent_key) {
      if (!g.view.agents[a].valid) continue;
      const AgentRecord& r = g.recs[a];
      out->agents.push_back(r);
      if (!s.trace) continue;
      for (uint32_t k = 0; k < r.events; ++k) {
        const TraceEvent& e = g.ring[static_cast<size_t>(a) * g.c.ring_capacity + k];
        const double t = static_cast<double>(r.globaltimer_start - std::min(gt0, r.globaltimer_start)) * out->clock_ghz +
                         static_cast<double>(static_cast<int64_t>(e.time - r.clock_start));
        all.push_back(Keyed{t, agent_key, k, e});
      }
    }
  }
  std::stable_sort(all.begin(), all.end(), [](const Keyed& x, const Keyed& y) {
    if (x.t != y.t) return x.t < y.t;
    if (x.agent != y.agent) return x.agent < y.agent;
    return x.seq < y.seq;
  });
  const double t0 = all.empty() ? 0 : all.front().t;
  for (const Keyed& k : all) {
    TraceEvent e = k.e;
    e.time = static_cast<uint64_t>(k.t - t0);
    out->events.push_back(e);
  }
}

// Counts the 16-byte chunks of global memory the run stored (out->stored_chunks) and those that
// hold neither their initial pattern nor data a store may have written (out->bad_global_chunks).
void CheckGlobals(const LaunchSpec& s, const Shared& sh, RunOutput* out) {
  // The global tensors: TMA stores may only have written `write` pattern chunks.
  for (size_t m = 0; m < s.maps.size(); ++m) {
    const uint64_t bytes = (s.maps[m].global_bytes + 15) / 16 * 16;
    std::vector<uint32_t> host(bytes / 4);
    PARITY_CUDA_CHECK(cudaMemcpy(host.data(), sh.tensors[m], bytes, cudaMemcpyDeviceToHost));
    const uint32_t tag = kPatternTagBase | static_cast<uint32_t>(m);
    for (uint64_t k = 0; k < bytes / 16; ++k) {
      const uint32_t* q = &host[4 * k];
      const bool valid = q[2] == PatternHash(q[0], q[1]) && q[3] == ~q[2];
      if (valid && q[1] == tag && q[0] == static_cast<uint32_t>(k)) continue;  // untouched
      // `write` data, or pattern data a TMA store copied from a loaded tile (a copy kernel).
      if (valid && (q[1] & 0xff000000u) == kPatternTagBase) {
        ++out->stored_chunks;
      } else {
        ++out->bad_global_chunks;
      }
    }
  }
  // The bulk global: untouched chunks, or pattern data stored there by bulk.store; the `global`
  // buffers: their initial contents, or `write` chunks.
  auto check = [&](void* d, uint64_t bytes, uint32_t initial_tag, bool writes_only) {
    std::vector<uint32_t> host(bytes / 4);
    PARITY_CUDA_CHECK(cudaMemcpy(host.data(), d, bytes, cudaMemcpyDeviceToHost));
    for (uint64_t k = 0; k < bytes / 16; ++k) {
      const uint32_t* q = &host[4 * k];
      const bool valid = (q[1] & 0xff000000u) == kPatternTagBase &&
                         q[2] == PatternHash(q[0], q[1]) && q[3] == ~q[2];
      if (valid && q[1] == initial_tag && q[0] == static_cast<uint32_t>(k)) continue;
      if (valid && (!writes_only || q[1] == kWriteTag)) {
        ++out->stored_chunks;
      } else {
        ++out->bad_global_chunks;
      }
    }
  };
  check(sh.d_bulk, sh.bulk_bytes, kBulkTag, false);
  check(sh.d_globals, sh.global_bytes, kGlobalInitialTag, true);
}

void FreeAll(Shared& sh, Launches& ls, std::vector<Grid>& grids) {
  PARITY_CUDA_CHECK(cudaEventDestroy(ls.e0));
  PARITY_CUDA_CHECK(cudaEventDestroy(ls.e1));
  PARITY_CUDA_CHECK(cudaStreamDestroy(ls.stream));
  PARITY_CUDA_CHECK(cudaFree(sh.d_bulk));
  PARITY_CUDA_CHECK(cudaFree(sh.d_globals));
  for (void* g : sh.tensors) PARITY_CUDA_CHECK(cudaFree(g));
  PARITY_CUDA_CHECK(cudaFree(sh.d_words));
  PARITY_CUDA_CHECK(cudaFree(sh.d_flags));
  PARITY_CUDA_CHECK(cudaFree(sh.d_hang));
  PARITY_CUDA_CHECK(cudaFree(sh.d_stats));
  for (Grid& g : grids) FreeGrid(g);
}

}  // namespace

std::string RunOnGpu(const LaunchSpec& s, RunOutput* out) {
  int clock_khz = 0;
  if (std::string why = QueryDevice(out, &clock_khz); !why.empty()) return why;
  if (std::string why = CheckSpec(s); !why.empty()) return why;
  Shared sh;
  if (std::string why = SetUpTensorMaps(s, &sh); !why.empty()) return why;
  SetUpShared(s, clock_khz, &sh);
  std::vector<Grid> grids = SetUpGrids(s, sh.c, out);
  Launches ls = ConfigureLaunches(s, grids);
  // A kernel exception leaves the context lost: return at once; the caller must not use CUDA
  // again.
  if (!LaunchAndWatch(s, sh, grids, ls, out)) return "";
  HangReport hang{};
  unsigned long long stats[kStats] = {};
  ReadBack(sh, grids, &hang, stats);
  if (s.bench_pairs > 0) RunBench(s, sh, grids[0], ls, out);
  Summarise(hang, stats, grids, out);
  MergeTraces(s, grids, out);
  CheckGlobals(s, sh, out);
  FreeAll(sh, ls, grids);
  return "";
}

}  // namespace parity::gpu
