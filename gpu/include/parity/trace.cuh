// Parity's device trace API: drop-in wrappers for the mbarrier, TMA, bulk-copy, cp.async,
// st.async, fence and barrier instructions of a Hopper kernel. Each wrapper issues exactly the
// PTX instruction it names; with PARITY_TRACE defined it also appends one record per warp to a
// bounded ring in global memory, and a host-side dump writes the ring as a Parity trace file.
// Without PARITY_TRACE the recording compiles out and the kernel is the plain kernel (the PTX
// `parity import` reads is compiled that way).
//
// Records are "kernel" records (header source "kernel"): TraceEvent (sim/trace/event.h) with
//   kind      the EventKind of the operation
//   cluster   %clusterid.x, cta = %cluster_ctarank, target_cta = the CTA whose object it acts on
//   agent     the warp (%tid linear / 32) of the recording lane
//   object    kKernelObject: the object is named by its shared address, not a schedule index
//   index     the barrier's (or the copy's shared side's) shared address / 8
//   value, value2, parity   as in sim/trace/event.h
//   pc        the CUDA source line of the wrapper's call site
//   time      %globaltimer (ns)
// `parity replay IMPORTED.pipe KERNEL.trace` maps them onto the schedule `parity import` made of
// the kernel (verifier/kernel_trace.h): warps to agents by the schedule's `# kernel:` lines,
// addresses to barriers and buffer slots by the operations each warp issued, and checks the
// kernel's own order against the schedule.
//
// Only the lowest active lane of a warp records (a warp-wide operation is one record, as the
// imported schedule models a warp as one agent). Under PARITY_TRACE, waits are bounded
// (PARITY_TRACE_TIMEOUT_NS, default 200 ms): a wait that gives up records kWaitTimeout, raises
// the ring's abort flag, and the thread exits, so a hanging kernel still returns its trace.
//
// Use (host):
//   parity::dev::HostRing ring = parity::dev::HostRing::Create(1 << 16);
//   ... launch ...
//   ring.Dump("kernel.trace", "schedule_name");
#ifndef PARITY_GPU_INCLUDE_PARITY_TRACE_CUH_
#define PARITY_GPU_INCLUDE_PARITY_TRACE_CUH_

#include <cuda_runtime.h>

#include <cstdint>

#include "sim/trace/event.h"

#ifndef __CUDACC_RTC__
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>
#endif

#ifndef PARITY_TRACE_TIMEOUT_NS
#define PARITY_TRACE_TIMEOUT_NS 200000000ull
#endif

namespace parity::dev {

// The object field of a kernel record: its object is named by address (index), not by number.
inline constexpr uint16_t kKernelObject = 0xfffe;

struct Ring {
  parity::trace::TraceEvent* events;
  uint32_t capacity;
  uint32_t* count;  // records appended (may exceed capacity: those are dropped)
  uint32_t* abort;  // a bounded wait gave up
};

// One ring per translation unit that includes this header (the host dump sets it).
static __device__ Ring g_ring;

__device__ __forceinline__ uint32_t SmemAddr(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

__device__ __forceinline__ uint32_t ClusterRank() {
  uint32_t r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
  return r;
}

#ifdef PARITY_TRACE
namespace internal {

__device__ __forceinline__ uint64_t Now() {
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__device__ __forceinline__ uint32_t ClusterId() {
  uint32_t c;
  asm volatile("mov.u32 %0, %%clusterid.x;" : "=r"(c));
  return c;
}

__device__ __forceinline__ bool Leader() {
  const uint32_t active = __activemask();
  return (threadIdx.x % 32) == static_cast<uint32_t>(__ffs(active) - 1);
}

__device__ __forceinline__ void Put(parity::trace::EventKind kind, uint32_t target_cta,
                                    uint32_t addr, int32_t value, int32_t value2,
                                    uint32_t parity, uint32_t line) {
  if (g_ring.events == nullptr) return;
  const uint32_t linear =
      threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
  const uint32_t rank = ClusterRank();
  const parity::trace::TraceEventWords w = parity::trace::PackTraceEvent(
      Now(), kind, target_cta != rank ? parity::trace::kFlagRemote : 0, ClusterId(), rank,
      target_cta, linear / 32, kKernelObject, (addr >> 3) & 0xffff, value, value2, 0, parity,
      line);
  const uint32_t i = atomicAdd(g_ring.count, 1u);
  if (i >= g_ring.capacity) return;
  uint4* dst = reinterpret_cast<uint4*>(g_ring.events + i);
  dst[0] = make_uint4(w.w[0], w.w[1], w.w[2], w.w[3]);
  dst[1] = make_uint4(w.w[4], w.w[5], w.w[6], w.w[7]);
  __threadfence();
}

// A record by the calling lane (single-thread operations).
__device__ __forceinline__ void Record(parity::trace::EventKind kind, uint32_t addr,
                                       int32_t value, int32_t value2, uint32_t parity,
                                       uint32_t line, uint32_t target_cta) {
  Put(kind, target_cta, addr, value, value2, parity, line);
}

// A record by the warp's lowest active lane (warp-wide operations) on CTA target_cta's object.
__device__ __forceinline__ void RecordWarp(parity::trace::EventKind kind, uint32_t addr,
                                           int32_t value, int32_t value2, uint32_t parity,
                                           uint32_t line, uint32_t target_cta) {
  if (Leader()) Put(kind, target_cta, addr, value, value2, parity, line);
}

}  // namespace internal
#define PARITY_REC(k_, a_, v_, v2_, p_) \
  ::parity::dev::internal::Record(k_, a_, v_, v2_, p_, line, ::parity::dev::ClusterRank())
#define PARITY_REC_AT(k_, a_, v_, v2_, p_, cta_) \
  ::parity::dev::internal::Record(k_, a_, v_, v2_, p_, line, cta_)
#define PARITY_REC_WARP(k_, a_, v_, v2_, p_) \
  ::parity::dev::internal::RecordWarp(k_, a_, v_, v2_, p_, line, ::parity::dev::ClusterRank())
#define PARITY_REC_WARP_AT(k_, a_, v_, v2_, p_, cta_) \
  ::parity::dev::internal::RecordWarp(k_, a_, v_, v2_, p_, line, cta_)
#else
#define PARITY_REC(k_, a_, v_, v2_, p_) (void)line
#define PARITY_REC_AT(k_, a_, v_, v2_, p_, cta_) (void)line
#define PARITY_REC_WARP(k_, a_, v_, v2_, p_) (void)line
#define PARITY_REC_WARP_AT(k_, a_, v_, v2_, p_, cta_) (void)line
#endif

using parity::trace::EventKind;

// Every wrapper takes the call site's line as a defaulted last argument.
#define PARITY_LINE uint32_t line = __builtin_LINE()

// --- mbarrier -------------------------------------------------------------------------------

__device__ __forceinline__ void MbarrierInit(uint32_t bar, uint32_t count, PARITY_LINE) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(bar), "r"(count) : "memory");
  PARITY_REC(EventKind::kInit, bar, static_cast<int32_t>(count), 0, 0);
}

// A single-thread arrive (count 1) on this CTA's barrier.
__device__ __forceinline__ void MbarrierArrive(uint32_t bar, PARITY_LINE) {
  asm volatile("mbarrier.arrive.release.cta.shared::cta.b64 _, [%0];" ::"r"(bar) : "memory");
  PARITY_REC(EventKind::kArrive, bar, 1, 0, 0);
}

// An arrive on the barrier at the same offset in CTA `cta` of the cluster (mapa + remote
// arrive): CUTLASS's consumer release to a peer.
__device__ __forceinline__ void MbarrierArriveCluster(uint32_t bar, uint32_t cta, PARITY_LINE) {
  uint32_t remote;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(remote) : "r"(bar), "r"(cta));
  asm volatile("mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%0];" ::"r"(remote)
               : "memory");
  PARITY_REC_AT(EventKind::kArrive, bar, 1, 0, 0, cta);
}

__device__ __forceinline__ void MbarrierArriveExpectTx(uint32_t bar, uint32_t bytes, PARITY_LINE) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(bytes)
               : "memory");
  PARITY_REC(EventKind::kArriveExpectTx, bar, 1, static_cast<int32_t>(bytes), 0);
}

__device__ __forceinline__ void MbarrierExpectTx(uint32_t bar, uint32_t bytes, PARITY_LINE) {
  asm volatile("mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [%0], %1;" ::"r"(bar), "r"(bytes)
               : "memory");
  PARITY_REC(EventKind::kExpectTx, bar, static_cast<int32_t>(bytes), 0, 0);
}

// Blocks until the phase of parity `parity` of the barrier has completed (a try_wait loop).
// Every lane that calls it waits; the warp records once.
__device__ __forceinline__ void MbarrierWait(uint32_t bar, uint32_t parity, PARITY_LINE) {
  PARITY_REC_WARP(EventKind::kWaitBegin, bar, 0, 0, parity & 1);
#ifdef PARITY_TRACE
  const uint64_t start = internal::Now();
  while (true) {
    uint32_t done;
    asm volatile(
        "{\n"
        ".reg .pred p;\n"
        "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
        "selp.u32 %0, 1, 0, p;\n"
        "}\n"
        : "=r"(done)
        : "r"(bar), "r"(parity)
        : "memory");
    if (done) break;
    const bool aborted = g_ring.abort != nullptr && *(volatile uint32_t*)g_ring.abort != 0;
    if (aborted || internal::Now() - start > PARITY_TRACE_TIMEOUT_NS) {
      // The first to give up raises the flag; every later wait gives up at once.
      if (g_ring.abort != nullptr) atomicExch(g_ring.abort, 1u);
      PARITY_REC_WARP(EventKind::kWaitTimeout, bar, 0, 0, parity & 1);
      asm volatile("exit;");
    }
  }
#else
  asm volatile(
      "{\n"
      ".reg .pred p;\n"
      "PARITY_WAIT_%=:\n"
      "mbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\n"
      "@!p bra PARITY_WAIT_%=;\n"
      "}\n" ::"r"(bar),
      "r"(parity)
      : "memory");
#endif
  PARITY_REC_WARP(EventKind::kWaitEnd, bar, 1, 0, parity & 1);
}

// --- fences and CTA / cluster barriers --------------------------------------------------------

__device__ __forceinline__ void FenceMbarrierInit(PARITY_LINE) {
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  PARITY_REC(EventKind::kFence, 0, 0, 0, 0);
}

__device__ __forceinline__ void FenceProxyAsync(PARITY_LINE) {
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  PARITY_REC_WARP(EventKind::kFence, 0, 1, 0, 0);
}

// Under PARITY_TRACE, the warp-wide (.aligned) barriers below first reconverge the warp: lanes
// that left a branch early (a producer loop of one lane) would otherwise record the barrier
// before that lane's operations, with another leader, and the warp would record it twice. Every
// lane of the warp executes these barriers anyway (.aligned), so the __syncwarp waits for no one
// the barrier does not wait for.
#ifdef PARITY_TRACE
#define PARITY_RECONVERGE() __syncwarp()
#else
#define PARITY_RECONVERGE() (void)0
#endif

// __syncthreads (bar.sync 0).
__device__ __forceinline__ void SyncThreads(PARITY_LINE) {
  PARITY_RECONVERGE();
  PARITY_REC_WARP(EventKind::kNamedBarrierSyncBegin, 0, 0, 0, 0);
  asm volatile("bar.sync 0;" ::: "memory");
  PARITY_REC_WARP(EventKind::kNamedBarrierSyncEnd, 0, 0, 0, 0);
}

__device__ __forceinline__ void ClusterSync(PARITY_LINE) {
  PARITY_RECONVERGE();
  PARITY_REC_WARP(EventKind::kClusterArrive, 0, 0, 0, 0);
  asm volatile("barrier.cluster.arrive.release.aligned;" ::: "memory");
  PARITY_REC_WARP(EventKind::kClusterWaitBegin, 0, 0, 0, 0);
  asm volatile("barrier.cluster.wait.acquire.aligned;" ::: "memory");
  PARITY_REC_WARP(EventKind::kClusterWaitEnd, 0, 0, 0, 0);
}

// --- TMA and bulk copies ----------------------------------------------------------------------

// A 2-D tiled TMA load of the box at (c0, c1) into `dst`, completing `bytes` on `bar`.
__device__ __forceinline__ void TmaLoad2d(uint32_t dst, const void* tmap, int c0, int c1,
                                          uint32_t bar, uint32_t bytes, PARITY_LINE) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
      " [%0], [%1, {%2, %3}], [%4];" ::"r"(dst),
      "l"(tmap), "r"(c0), "r"(c1), "r"(bar)
      : "memory");
  PARITY_REC(EventKind::kTmaIssue, dst, static_cast<int32_t>(bytes), 0, 0);
}

// The same load multicast to the CTAs of `mask` (the same offsets in each).
__device__ __forceinline__ void TmaLoad2dMulticast(uint32_t dst, const void* tmap, int c0, int c1,
                                                   uint32_t bar, uint16_t mask, uint32_t bytes,
                                                   PARITY_LINE) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
      ".multicast::cluster [%0], [%1, {%2, %3}], [%4], %5;" ::"r"(dst),
      "l"(tmap), "r"(c0), "r"(c1), "r"(bar), "h"(mask)
      : "memory");
  PARITY_REC(EventKind::kTmaIssue, dst, static_cast<int32_t>(bytes), mask, 0);
}

// A 2-D tiled TMA store of `src` to the box at (c0, c1); joins the thread's bulk group.
__device__ __forceinline__ void TmaStore2d(const void* tmap, int c0, int c1, uint32_t src,
                                           uint32_t bytes, PARITY_LINE) {
  asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%1, %2}], [%3];" ::"l"(
                   tmap),
               "r"(c0), "r"(c1), "r"(src)
               : "memory");
  PARITY_REC(EventKind::kTmaStoreIssue, src, static_cast<int32_t>(bytes), 0, 0);
}

// A 1-D bulk copy of `bytes` from global memory into `dst`, completing them on `bar`.
__device__ __forceinline__ void BulkLoad(uint32_t dst, const void* src, uint32_t bytes,
                                         uint32_t bar, PARITY_LINE) {
  asm volatile(
      "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::
          "r"(dst),
      "l"(src), "r"(bytes), "r"(bar)
      : "memory");
  PARITY_REC(EventKind::kBulkIssue, dst, static_cast<int32_t>(bytes), 0, 0);
}

// A 1-D bulk copy of `bytes` from `src` to global memory; joins the thread's bulk group.
__device__ __forceinline__ void BulkStore(void* dst, uint32_t src, uint32_t bytes, PARITY_LINE) {
  asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;" ::"l"(dst), "r"(src),
               "r"(bytes)
               : "memory");
  PARITY_REC(EventKind::kBulkIssue, src, static_cast<int32_t>(bytes), 0, 0);
}

__device__ __forceinline__ void BulkCommit(PARITY_LINE) {
  asm volatile("cp.async.bulk.commit_group;" ::: "memory");
  PARITY_REC(EventKind::kBulkCommit, 0, 0, 0, 0);
}

// cp.async.bulk.wait_group.read N: the sources of all but N groups have been read.
__device__ __forceinline__ void BulkWaitRead0(PARITY_LINE) {
  PARITY_REC(EventKind::kBulkWaitBegin, 0, 0, 1, 0);
  asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory");
  PARITY_REC(EventKind::kBulkWaitEnd, 0, 0, 1, 0);
}

// cp.async.bulk.wait_group 0: every group has completed (global memory written).
__device__ __forceinline__ void BulkWait0(PARITY_LINE) {
  PARITY_REC(EventKind::kBulkWaitBegin, 0, 0, 0, 0);
  asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
  PARITY_REC(EventKind::kBulkWaitEnd, 0, 0, 0, 0);
}

// --- cp.async (LDGSTS) and st.async -----------------------------------------------------------

// A 16-byte cp.async by each calling lane. The warp records once, with the bytes of all its
// calling lanes and the lowest lane's address: the imported schedule models the warp's copies
// as one operation of that many bytes.
__device__ __forceinline__ void CpAsync16(uint32_t dst, const void* src, PARITY_LINE) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(dst), "l"(src) : "memory");
#ifdef PARITY_TRACE
  const int32_t bytes = 16 * __popc(__activemask());
#endif
  PARITY_REC_WARP(EventKind::kCpAsyncIssue, dst, bytes, 0, 0);
}

__device__ __forceinline__ void CpAsyncCommit(PARITY_LINE) {
  asm volatile("cp.async.commit_group;" ::: "memory");
  PARITY_REC_WARP(EventKind::kCpAsyncCommit, 0, 0, 0, 0);
}

// cp.async.wait_group N (N a compile-time constant of the instruction).
template <int N>
__device__ __forceinline__ void CpAsyncWait(PARITY_LINE) {
  PARITY_REC_WARP(EventKind::kCpAsyncWaitBegin, 0, N, 0, 0);
  asm volatile("cp.async.wait_group %0;" ::"n"(N) : "memory");
  PARITY_REC_WARP(EventKind::kCpAsyncWaitEnd, 0, N, 0, 0);
}

// cp.async.mbarrier.arrive.noinc by each calling lane: one deferred arrive-on per lane.
__device__ __forceinline__ void CpAsyncArriveNoinc(uint32_t bar, PARITY_LINE) {
  asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];" ::"r"(bar) : "memory");
  PARITY_REC_WARP(EventKind::kCpAsyncArrive, bar, 1, 0, 0);
}

// 16 bytes into CTA `cta`'s shared memory at `dst`'s offset, completing them on that CTA's
// barrier at `bar`'s offset (st.async; addresses mapped with mapa). The warp records once, with
// the bytes of all its calling lanes and the target CTA.
__device__ __forceinline__ void StAsync16(uint32_t dst, uint32_t bar, uint32_t cta, uint4 v,
                                          PARITY_LINE) {
  uint32_t rdst, rbar;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(rdst) : "r"(dst), "r"(cta));
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(rbar) : "r"(bar), "r"(cta));
  asm volatile(
      "st.async.shared::cluster.mbarrier::complete_tx::bytes.v4.b32 [%0], {%1, %2, %3, %4}, "
      "[%5];" ::"r"(rdst),
      "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w), "r"(rbar)
      : "memory");
#ifdef PARITY_TRACE
  const int32_t bytes = 16 * __popc(__activemask());
#endif
  PARITY_REC_WARP_AT(EventKind::kStAsync, bar, bytes, 0, 0, cta);
}

#undef PARITY_LINE

#ifndef __CUDACC_RTC__
// The host side: a ring in device memory, bound to this translation unit's g_ring, and its dump
// as a Parity trace file (sim/trace/trace_file.h's layout, written here so that the header
// needs nothing but the CUDA runtime).
class HostRing {
 public:
  static HostRing Create(uint32_t capacity) {
    HostRing h;
    h.capacity_ = capacity;
    cudaMalloc(&h.events_, sizeof(parity::trace::TraceEvent) * capacity);
    cudaMalloc(&h.counters_, 2 * sizeof(uint32_t));
    h.Reset();
    return h;
  }
  // Empties the ring and binds it (call before each launch).
  void Reset() {
    cudaMemset(counters_, 0, 2 * sizeof(uint32_t));
    Ring r{events_, capacity_, counters_, counters_ + 1};
    cudaMemcpyToSymbol(g_ring, &r, sizeof(r));
  }
  // Whether a bounded wait gave up (read after the kernel finished).
  bool Aborted() const {
    uint32_t c[2] = {0, 0};
    cudaMemcpy(c, counters_, sizeof(c), cudaMemcpyDeviceToHost);
    return c[1] != 0;
  }
  // The records in time order (the ring keeps them in append order across SMs).
  std::vector<parity::trace::TraceEvent> Read(uint32_t* dropped = nullptr) const {
    uint32_t c[2] = {0, 0};
    cudaMemcpy(c, counters_, sizeof(c), cudaMemcpyDeviceToHost);
    const uint32_t n = std::min(c[0], capacity_);
    if (dropped != nullptr) *dropped = c[0] - n;
    std::vector<parity::trace::TraceEvent> out(n);
    cudaMemcpy(out.data(), events_, n * sizeof(parity::trace::TraceEvent), cudaMemcpyDeviceToHost);
    std::stable_sort(out.begin(), out.end(),
                     [](const auto& a, const auto& b) { return a.time < b.time; });
    return out;
  }
  // Writes the records as a trace file (source "kernel"); false on an I/O error.
  bool Dump(const std::string& path, const std::string& schedule, const std::string& device) const {
    const std::vector<parity::trace::TraceEvent> ev = Read();
    std::string b;
    auto u16 = [&](uint16_t v) { b.append(reinterpret_cast<const char*>(&v), 2); };
    auto u32 = [&](uint32_t v) { b.append(reinterpret_cast<const char*>(&v), 4); };
    auto u64 = [&](uint64_t v) { b.append(reinterpret_cast<const char*>(&v), 8); };
    auto str = [&](const std::string& s) {
      const std::string t = s.substr(0, 4096);
      u16(static_cast<uint16_t>(t.size()));
      b += t;
    };
    b += "PARITYTR";
    u32(1);   // kTraceFileVersion
    u32(32);  // sizeof(TraceEvent)
    u64(0);   // schedule hash: unknown to the kernel
    u64(ev.size());
    str("kernel");
    str(device);
    str(schedule);
    str("hardware");
    u32(0);  // params
    const size_t records = b.size();
    b.append(reinterpret_cast<const char*>(ev.data()), ev.size() * sizeof(ev[0]));
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = records; i < b.size(); ++i) {
      h ^= static_cast<unsigned char>(b[i]);
      h *= 0x100000001b3ull;
    }
    b += "PARITYEN";
    u64(h);
    FILE* f = std::fopen(path.c_str(), "wb");
    if (f == nullptr) return false;
    const bool ok = std::fwrite(b.data(), 1, b.size(), f) == b.size();
    return std::fclose(f) == 0 && ok;
  }
  void Free() {
    cudaFree(events_);
    cudaFree(counters_);
  }

 private:
  parity::trace::TraceEvent* events_ = nullptr;
  uint32_t* counters_ = nullptr;
  uint32_t capacity_ = 0;
};
#endif

}  // namespace parity::dev

#endif  // PARITY_GPU_INCLUDE_PARITY_TRACE_CUH_
