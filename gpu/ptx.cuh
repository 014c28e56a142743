// One inline wrapper per PTX instruction that Parity's GPU programs use: mbarrier, proxy fences
// and the bulk tensor copy engine (TMA). Each wrapper shows its PTX string and says what every
// operand is, so that a schedule op (sim/ir) maps to exactly one instruction here.
//
// Conventions:
// - Shared-memory operands are 32-bit shared-window addresses (`SmemAddr`, from SmemAddress()),
//   the form the `.shared::cta` / `.shared::cluster` state spaces take; no generic pointers.
// - Tensor maps are passed by their generic address; the CUtensorMap must live in a
//   `const __grid_constant__` kernel parameter (or global/const memory), as PTX ISA
//   "Tensor-map" (5.5.8) and the CUDA Programming Guide (TMA) require.
// - Coordinates are signed 32-bit (PTX `.s32` tensorCoords), dimension 0 (innermost) first.
// - Nothing here waits forever: WaitParityBounded() gives up after a clock64 budget so that a
//   wrong expect_tx or a missing arrive reports a timeout instead of hanging the GPU.
//
// PTX ISA references (PTX ISA 8.x): 9.7.13.15 mbarrier (init, inval, expect_tx, complete_tx,
// arrive, test_wait/try_wait), 9.7.13.4 membar/fence (fence.proxy.async, fence.mbarrier_init),
// 9.7.9.25 cp.async.bulk.tensor, 9.7.9.26/27 cp.async.bulk.commit_group / wait_group.
#ifndef PARITY_GPU_PTX_CUH_
#define PARITY_GPU_PTX_CUH_

#include <cstdint>

#if !defined(__CUDACC__)
#error "gpu/ptx.cuh is CUDA device code: compile it with nvcc"
#endif

namespace parity::gpu::ptx {

// A 32-bit address in the CTA's shared-memory window (.shared::cta).
using SmemAddr = uint32_t;

// The shared-window address of a generic pointer into shared memory.
__device__ __forceinline__ SmemAddr SmemAddress(const void* p) {
  return static_cast<SmemAddr>(__cvta_generic_to_shared(p));
}

// ---------------------------------------------------------------------------------------------
// mbarrier (PTX ISA 9.7.13.15). A 64-bit object in shared memory, 8-byte aligned.
// ---------------------------------------------------------------------------------------------

// mbarrier.init: phase 0, pending = expected = count (1 .. 2^20 - 1), tx-count 0.
__device__ __forceinline__ void MbarrierInit(SmemAddr bar, uint32_t count) {
  asm volatile(
      "mbarrier.init.shared::cta.b64 [%0], %1;"  //
      :
      : "r"(bar),    // %0: mbarrier address (.shared::cta, 8-byte aligned)
        "r"(count)   // %1: expected arrival count
      : "memory");
}

// mbarrier.inval: the object becomes plain memory again; required before re-init or reuse.
__device__ __forceinline__ void MbarrierInval(SmemAddr bar) {
  asm volatile(
      "mbarrier.inval.shared::cta.b64 [%0];"  //
      :
      : "r"(bar)  // %0: mbarrier address
      : "memory");
}

// mbarrier.arrive (count 1), release at CTA scope. Returns the opaque phase state token.
__device__ __forceinline__ uint64_t MbarrierArrive(SmemAddr bar) {
  uint64_t state;
  asm volatile(
      "mbarrier.arrive.release.cta.shared::cta.b64 %0, [%1];"  //
      : "=l"(state)  // %0: state token of the phase arrived on
      : "r"(bar)     // %1: mbarrier address
      : "memory");
  return state;
}

// mbarrier.arrive.expect_tx: tx-count += tx_bytes, then one arrival (PTX: expect-tx operation
// performed before the arrive-on operation).
__device__ __forceinline__ uint64_t MbarrierArriveExpectTx(SmemAddr bar, uint32_t tx_bytes) {
  uint64_t state;
  asm volatile(
      "mbarrier.arrive.expect_tx.release.cta.shared::cta.b64 %0, [%1], %2;"  //
      : "=l"(state)     // %0: state token
      : "r"(bar),       // %1: mbarrier address
        "r"(tx_bytes)   // %2: txCount added to the current phase's tx-count
      : "memory");
  return state;
}

// mbarrier.expect_tx: tx-count += tx_bytes, no arrival.
__device__ __forceinline__ void MbarrierExpectTx(SmemAddr bar, uint32_t tx_bytes) {
  asm volatile(
      "mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [%0], %1;"  //
      :
      : "r"(bar),       // %0: mbarrier address
        "r"(tx_bytes)   // %1: txCount
      : "memory");
}

// mbarrier.complete_tx: tx-count -= tx_bytes, as if that many async bytes had landed.
__device__ __forceinline__ void MbarrierCompleteTx(SmemAddr bar, uint32_t tx_bytes) {
  asm volatile(
      "mbarrier.complete_tx.relaxed.cta.shared::cta.b64 [%0], %1;"  //
      :
      : "r"(bar),       // %0: mbarrier address
        "r"(tx_bytes)   // %1: txCount
      : "memory");
}

// The body of every mbarrier try_wait / test_wait wrapper below: `INSN.shared::cta.b64 p, [bar],
// ARG` (INSN the instruction with its qualifiers, e.g. "mbarrier.try_wait.parity.acquire.cta";
// ARG the constrained third operand: "r"(parity) for phaseParity, "l"(state) for a state token),
// setting the caller's `uint32_t done` to 1 when the phase completed, 0 otherwise.
#define PARITY_MBARRIER_WAIT_ASM(INSN, ARG)                                             \
  asm volatile("{\n\t"                                                                  \
               ".reg .pred p;\n\t" INSN ".shared::cta.b64 p, [%1], %2;\n\t"             \
               "selp.u32 %0, 1, 0, p;\n\t"                                              \
               "}"                                                                      \
               : "=r"(done) /* %0: 1 when the phase waited on completed */              \
               : "r"(bar),  /* %1: mbarrier address */                                  \
                 ARG        /* %2: phaseParity (0 or 1), or the state token */          \
               : "memory")

// mbarrier.try_wait.parity (acquire, CTA scope): true once the phase with the given parity has
// completed. May return false after a hardware time limit even if it would complete later, so
// callers loop (see WaitParityBounded).
__device__ __forceinline__ bool MbarrierTryWaitParity(SmemAddr bar, uint32_t parity) {
  uint32_t done;
  PARITY_MBARRIER_WAIT_ASM("mbarrier.try_wait.parity.acquire.cta", "r"(parity));
  return done != 0;
}

// mbarrier.test_wait.parity: the non-blocking probe of the same condition.
__device__ __forceinline__ bool MbarrierTestWaitParity(SmemAddr bar, uint32_t parity) {
  uint32_t done;
  PARITY_MBARRIER_WAIT_ASM("mbarrier.test_wait.parity.acquire.cta", "r"(parity));
  return done != 0;
}

// Spins on try_wait.parity for at most `budget_cycles` of clock64. Returns true on completion,
// false on timeout (the caller records it and leaves the kernel instead of hanging).
// `*cycles_out`, when given, receives the cycles spent.
__device__ __forceinline__ bool WaitParityBounded(SmemAddr bar, uint32_t parity,
                                                  long long budget_cycles,
                                                  long long* cycles_out = nullptr) {
  const long long start = clock64();
  bool done = false;
  long long now = start;
  while (!(done = MbarrierTryWaitParity(bar, parity))) {
    now = clock64();
    if (now - start > budget_cycles) break;
  }
  if (cycles_out != nullptr) *cycles_out = clock64() - start;
  return done;
}

// ---------------------------------------------------------------------------------------------
// Fences (PTX ISA 9.7.13.4).
// ---------------------------------------------------------------------------------------------

// fence.mbarrier_init.release.cluster: orders this thread's prior mbarrier.init before later
// operations by other threads/CTAs of the cluster (and by the async proxy) on those barriers.
__device__ __forceinline__ void FenceMbarrierInit() {
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
}

// fence.proxy.async.shared::cta: orders this thread's generic-proxy accesses to the CTA's shared
// memory with later async-proxy accesses (TMA loads writing, TMA stores reading), and vice versa.
__device__ __forceinline__ void FenceProxyAsyncSharedCta() {
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}

// ---------------------------------------------------------------------------------------------
// cp.async.bulk.tensor loads, global -> shared::cluster, completing on an mbarrier with
// complete_tx::bytes (PTX ISA 9.7.9.25). Tile mode (the default .load_mode).
// Common operands: dst = destination shared address (128-byte aligned), tmap = generic address
// of the CUtensorMap, c0..c4 = tensorCoords (.s32, dimension 0 first), bar = the mbarrier in the
// destination CTA that receives complete_tx.
// ---------------------------------------------------------------------------------------------

__device__ __forceinline__ void TmaLoad1D(SmemAddr dst, const void* tmap, SmemAddr bar, int32_t c0) {
  asm volatile(
      "cp.async.bulk.tensor.1d.shared::cluster.global.mbarrier::complete_tx::bytes"
      " [%0], [%1, {%3}], [%2];"
      :
      : "r"(dst),                                  // %0: dstMem
        "l"(reinterpret_cast<uint64_t>(tmap)),     // %1: tensorMap
        "r"(bar),                                  // %2: mbar
        "r"(c0)                                    // %3: coordinate, dimension 0
      : "memory");
}

__device__ __forceinline__ void TmaLoad2D(SmemAddr dst, const void* tmap, SmemAddr bar, int32_t c0,
                                          int32_t c1) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
      " [%0], [%1, {%3, %4}], [%2];"
      :
      : "r"(dst),                               // %0: dstMem
        "l"(reinterpret_cast<uint64_t>(tmap)),  // %1: tensorMap
        "r"(bar),                               // %2: mbar
        "r"(c0), "r"(c1)                        // %3..%4: coordinates, dimension 0 first
      : "memory");
}

__device__ __forceinline__ void TmaLoad3D(SmemAddr dst, const void* tmap, SmemAddr bar, int32_t c0,
                                          int32_t c1, int32_t c2) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes"
      " [%0], [%1, {%3, %4, %5}], [%2];"
      :
      : "r"(dst),                               // %0: dstMem
        "l"(reinterpret_cast<uint64_t>(tmap)),  // %1: tensorMap
        "r"(bar),                               // %2: mbar
        "r"(c0), "r"(c1), "r"(c2)               // %3..%5: coordinates
      : "memory");
}

__device__ __forceinline__ void TmaLoad4D(SmemAddr dst, const void* tmap, SmemAddr bar, int32_t c0,
                                          int32_t c1, int32_t c2, int32_t c3) {
  asm volatile(
      "cp.async.bulk.tensor.4d.shared::cluster.global.mbarrier::complete_tx::bytes"
      " [%0], [%1, {%3, %4, %5, %6}], [%2];"
      :
      : "r"(dst),                               // %0: dstMem
        "l"(reinterpret_cast<uint64_t>(tmap)),  // %1: tensorMap
        "r"(bar),                               // %2: mbar
        "r"(c0), "r"(c1), "r"(c2), "r"(c3)      // %3..%6: coordinates
      : "memory");
}

__device__ __forceinline__ void TmaLoad5D(SmemAddr dst, const void* tmap, SmemAddr bar, int32_t c0,
                                          int32_t c1, int32_t c2, int32_t c3, int32_t c4) {
  asm volatile(
      "cp.async.bulk.tensor.5d.shared::cluster.global.mbarrier::complete_tx::bytes"
      " [%0], [%1, {%3, %4, %5, %6, %7}], [%2];"
      :
      : "r"(dst),                                     // %0: dstMem
        "l"(reinterpret_cast<uint64_t>(tmap)),        // %1: tensorMap
        "r"(bar),                                     // %2: mbar
        "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(c4)   // %3..%7: coordinates
      : "memory");
}

// .multicast::cluster variants: the same box is written at `dst` and complete_tx lands on the
// mbarrier at `bar` (same CTA-relative offsets) in every CTA whose %cluster_ctarank bit is set
// in `cta_mask` (16-bit ctaMask operand).

__device__ __forceinline__ void TmaLoadMulticast1D(SmemAddr dst, const void* tmap, SmemAddr bar,
                                                   uint16_t cta_mask, int32_t c0) {
  asm volatile(
      "cp.async.bulk.tensor.1d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster"
      " [%0], [%1, {%4}], [%2], %3;"
      :
      : "r"(dst),                               // %0: dstMem (in each destination CTA)
        "l"(reinterpret_cast<uint64_t>(tmap)),  // %1: tensorMap
        "r"(bar),                               // %2: mbar (in each destination CTA)
        "h"(cta_mask),                          // %3: ctaMask, bit r = %cluster_ctarank r
        "r"(c0)                                 // %4: coordinate
      : "memory");
}

__device__ __forceinline__ void TmaLoadMulticast2D(SmemAddr dst, const void* tmap, SmemAddr bar,
                                                   uint16_t cta_mask, int32_t c0, int32_t c1) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster"
      " [%0], [%1, {%4, %5}], [%2], %3;"
      :
      : "r"(dst),                               // %0: dstMem
        "l"(reinterpret_cast<uint64_t>(tmap)),  // %1: tensorMap
        "r"(bar),                               // %2: mbar
        "h"(cta_mask),                          // %3: ctaMask
        "r"(c0), "r"(c1)                        // %4..%5: coordinates
      : "memory");
}

__device__ __forceinline__ void TmaLoadMulticast3D(SmemAddr dst, const void* tmap, SmemAddr bar,
                                                   uint16_t cta_mask, int32_t c0, int32_t c1,
                                                   int32_t c2) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster"
      " [%0], [%1, {%4, %5, %6}], [%2], %3;"
      :
      : "r"(dst),                               // %0: dstMem
        "l"(reinterpret_cast<uint64_t>(tmap)),  // %1: tensorMap
        "r"(bar),                               // %2: mbar
        "h"(cta_mask),                          // %3: ctaMask
        "r"(c0), "r"(c1), "r"(c2)               // %4..%6: coordinates
      : "memory");
}

__device__ __forceinline__ void TmaLoadMulticast4D(SmemAddr dst, const void* tmap, SmemAddr bar,
                                                   uint16_t cta_mask, int32_t c0, int32_t c1,
                                                   int32_t c2, int32_t c3) {
  asm volatile(
      "cp.async.bulk.tensor.4d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster"
      " [%0], [%1, {%4, %5, %6, %7}], [%2], %3;"
      :
      : "r"(dst),                               // %0: dstMem
        "l"(reinterpret_cast<uint64_t>(tmap)),  // %1: tensorMap
        "r"(bar),                               // %2: mbar
        "h"(cta_mask),                          // %3: ctaMask
        "r"(c0), "r"(c1), "r"(c2), "r"(c3)      // %4..%7: coordinates
      : "memory");
}

__device__ __forceinline__ void TmaLoadMulticast5D(SmemAddr dst, const void* tmap, SmemAddr bar,
                                                   uint16_t cta_mask, int32_t c0, int32_t c1,
                                                   int32_t c2, int32_t c3, int32_t c4) {
  asm volatile(
      "cp.async.bulk.tensor.5d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster"
      " [%0], [%1, {%4, %5, %6, %7, %8}], [%2], %3;"
      :
      : "r"(dst),                                     // %0: dstMem
        "l"(reinterpret_cast<uint64_t>(tmap)),        // %1: tensorMap
        "r"(bar),                                     // %2: mbar
        "h"(cta_mask),                                // %3: ctaMask
        "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(c4)   // %4..%8: coordinates
      : "memory");
}

// ---------------------------------------------------------------------------------------------
// cp.async.bulk.tensor stores, shared::cta -> global, completing through the thread's bulk
// async-group (PTX ISA 9.7.9.25). OOB elements of the box are not written. The source must be
// ordered after the generic writes that produced it by FenceProxyAsyncSharedCta().
// ---------------------------------------------------------------------------------------------

__device__ __forceinline__ void TmaStore1D(const void* tmap, SmemAddr src, int32_t c0) {
  asm volatile(
      "cp.async.bulk.tensor.1d.global.shared::cta.bulk_group [%0, {%2}], [%1];"
      :
      : "l"(reinterpret_cast<uint64_t>(tmap)),  // %0: tensorMap
        "r"(src),                               // %1: srcMem (.shared::cta)
        "r"(c0)                                 // %2: coordinate
      : "memory");
}

__device__ __forceinline__ void TmaStore2D(const void* tmap, SmemAddr src, int32_t c0, int32_t c1) {
  asm volatile(
      "cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%2, %3}], [%1];"
      :
      : "l"(reinterpret_cast<uint64_t>(tmap)),  // %0: tensorMap
        "r"(src),                               // %1: srcMem
        "r"(c0), "r"(c1)                        // %2..%3: coordinates
      : "memory");
}

__device__ __forceinline__ void TmaStore3D(const void* tmap, SmemAddr src, int32_t c0, int32_t c1,
                                           int32_t c2) {
  asm volatile(
      "cp.async.bulk.tensor.3d.global.shared::cta.bulk_group [%0, {%2, %3, %4}], [%1];"
      :
      : "l"(reinterpret_cast<uint64_t>(tmap)),  // %0: tensorMap
        "r"(src),                               // %1: srcMem
        "r"(c0), "r"(c1), "r"(c2)               // %2..%4: coordinates
      : "memory");
}

__device__ __forceinline__ void TmaStore4D(const void* tmap, SmemAddr src, int32_t c0, int32_t c1,
                                           int32_t c2, int32_t c3) {
  asm volatile(
      "cp.async.bulk.tensor.4d.global.shared::cta.bulk_group [%0, {%2, %3, %4, %5}], [%1];"
      :
      : "l"(reinterpret_cast<uint64_t>(tmap)),  // %0: tensorMap
        "r"(src),                               // %1: srcMem
        "r"(c0), "r"(c1), "r"(c2), "r"(c3)      // %2..%5: coordinates
      : "memory");
}

__device__ __forceinline__ void TmaStore5D(const void* tmap, SmemAddr src, int32_t c0, int32_t c1,
                                           int32_t c2, int32_t c3, int32_t c4) {
  asm volatile(
      "cp.async.bulk.tensor.5d.global.shared::cta.bulk_group [%0, {%2, %3, %4, %5, %6}], [%1];"
      :
      : "l"(reinterpret_cast<uint64_t>(tmap)),        // %0: tensorMap
        "r"(src),                                     // %1: srcMem
        "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(c4)   // %2..%6: coordinates
      : "memory");
}

// cp.async.bulk.commit_group: closes this thread's current bulk async-group.
__device__ __forceinline__ void BulkCommitGroup() {
  asm volatile("cp.async.bulk.commit_group;" ::: "memory");
}

// cp.async.bulk.wait_group N: waits until at most N of this thread's most recent bulk
// async-groups are pending (complete: the writes are done).
template <int kN>
__device__ __forceinline__ void BulkWaitGroup() {
  asm volatile("cp.async.bulk.wait_group %0;" : : "n"(kN) : "memory");  // %0: N (immediate)
}

// cp.async.bulk.wait_group.read N: waits only until those groups' sources have been read (the
// shared buffer may be reused), not until their global writes are visible.
template <int kN>
__device__ __forceinline__ void BulkWaitGroupRead() {
  asm volatile("cp.async.bulk.wait_group.read %0;" : : "n"(kN) : "memory");  // %0: N (immediate)
}

// ---------------------------------------------------------------------------------------------
// Cluster addressing, special registers and the remote (shared::cluster) mbarrier forms used by
// the schedule interpreter (gpu/executor.cu). PTX ISA 9.7.8.x mapa, 10 special registers,
// 9.7.13.15 mbarrier (.shared::cluster forms: arrive, expect_tx, complete_tx only).
// ---------------------------------------------------------------------------------------------

// mapa.shared::cluster.u32: the shared::cluster address of the same CTA-relative location in
// CTA `cta_rank` of the cluster.
__device__ __forceinline__ uint32_t MapaSharedCluster(SmemAddr addr, uint32_t cta_rank) {
  uint32_t remote;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;"
               : "=r"(remote)  // %0: address in the target CTA's window (.shared::cluster)
               : "r"(addr),    // %1: local .shared::cta address
                 "r"(cta_rank) // %2: %cluster_ctarank of the target CTA
  );
  return remote;
}

__device__ __forceinline__ uint32_t ClusterCtaRank() {
  uint32_t r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));  // %0: rank in the cluster
  return r;
}
__device__ __forceinline__ uint32_t ClusterIdX() {
  uint32_t r;
  asm volatile("mov.u32 %0, %%clusterid.x;" : "=r"(r));  // %0: cluster index along x
  return r;
}
__device__ __forceinline__ uint32_t SmId() {
  uint32_t r;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(r));  // %0: SM the thread runs on
  return r;
}
__device__ __forceinline__ uint64_t GlobalTimer() {
  uint64_t r;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(r));  // %0: ns, coarse update period
  return r;
}

// mbarrier.arrive with a count, release at CTA scope (local barrier).
__device__ __forceinline__ uint64_t MbarrierArriveCount(SmemAddr bar, uint32_t count) {
  uint64_t state;
  asm volatile("mbarrier.arrive.release.cta.shared::cta.b64 %0, [%1], %2;"
               : "=l"(state)   // %0: state token
               : "r"(bar),     // %1: mbarrier address
                 "r"(count)    // %2: arrival count (1 .. 2^20 - 1)
               : "memory");
  return state;
}

// mbarrier.arrive.expect_tx with a count is not a PTX form; expect_tx then arrive(count) is
// what the schedule means when count != 1, so the interpreter issues the two instructions.

// Remote arrive: mbarrier.arrive.release.cluster.shared::cluster.b64 _, [remote], count. The
// state token is not available for a shared::cluster barrier (PTX: the sink `_`).
__device__ __forceinline__ void MbarrierArriveRemote(uint32_t remote_bar, uint32_t count) {
  asm volatile("mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%0], %1;"
               :
               : "r"(remote_bar),  // %0: mbarrier in another CTA (from MapaSharedCluster)
                 "r"(count)        // %1: arrival count
               : "memory");
}

// Remote arrive.expect_tx: tx-count += tx_bytes, then one arrival, on another CTA's barrier.
__device__ __forceinline__ void MbarrierArriveExpectTxRemote(uint32_t remote_bar, uint32_t tx) {
  asm volatile("mbarrier.arrive.expect_tx.release.cluster.shared::cluster.b64 _, [%0], %1;"
               :
               : "r"(remote_bar),  // %0: mbarrier (.shared::cluster)
                 "r"(tx)           // %1: txCount
               : "memory");
}

__device__ __forceinline__ void MbarrierExpectTxRemote(uint32_t remote_bar, uint32_t tx) {
  asm volatile("mbarrier.expect_tx.relaxed.cluster.shared::cluster.b64 [%0], %1;"
               :
               : "r"(remote_bar),  // %0: mbarrier (.shared::cluster)
                 "r"(tx)           // %1: txCount
               : "memory");
}

__device__ __forceinline__ void MbarrierCompleteTxRemote(uint32_t remote_bar, uint32_t tx) {
  asm volatile("mbarrier.complete_tx.relaxed.cluster.shared::cluster.b64 [%0], %1;"
               :
               : "r"(remote_bar),  // %0: mbarrier (.shared::cluster)
                 "r"(tx)           // %1: txCount
               : "memory");
}

// ---------------------------------------------------------------------------------------------
// mbarrier arrive / wait with the schedule's semantics and scope (ir::MemSem, ir::MemScope;
// `order` = the encoded bits kSemRelaxedBit | kScopeClusterBit of sim/ir/ops.h). One asm string
// per combination: a qualifier cannot be an operand. PTX ISA 9.7.13.15 (mbarrier.arrive,
// mbarrier.test_wait / try_wait: .sem = .release / .acquire (default) or .relaxed, .scope = .cta
// (default) or .cluster).
// ---------------------------------------------------------------------------------------------
inline constexpr uint32_t kOrderRelaxed = 1u << 8;   // ir::kSemRelaxedBit
inline constexpr uint32_t kOrderCluster = 1u << 9;   // ir::kScopeClusterBit

// MACRO(SEM, SCOPE) for the semantics and scope that `order` encodes; STRONG is the instruction's
// non-relaxed semantics ("release" for an arrive, "acquire" for a wait).
#define PARITY_PTX_BY_ORDER(order, STRONG, MACRO)                    \
  switch ((order) & (kOrderRelaxed | kOrderCluster)) {               \
    case 0: MACRO(STRONG, "cta"); break;                             \
    case kOrderRelaxed: MACRO("relaxed", "cta"); break;              \
    case kOrderCluster: MACRO(STRONG, "cluster"); break;             \
    default: MACRO("relaxed", "cluster"); break;                     \
  }

// mbarrier.arrive.SEM.SCOPE.shared::cta.b64 state, [bar], count.
__device__ __forceinline__ uint64_t MbarrierArriveOrdered(SmemAddr bar, uint32_t count,
                                                          uint32_t order) {
  uint64_t state = 0;
#define PARITY_ARRIVE(SEM, SCOPE)                                                        \
  asm volatile("mbarrier.arrive." SEM "." SCOPE ".shared::cta.b64 %0, [%1], %2;"          \
               : "=l"(state) /* %0: state token */                                      \
               : "r"(bar),   /* %1: mbarrier address */                                 \
                 "r"(count)  /* %2: arrival count */                                    \
               : "memory")
  PARITY_PTX_BY_ORDER(order, "release", PARITY_ARRIVE)
#undef PARITY_ARRIVE
  return state;
}

// mbarrier.arrive.expect_tx.SEM.SCOPE.shared::cta.b64 state, [bar], tx.
__device__ __forceinline__ uint64_t MbarrierArriveExpectTxOrdered(SmemAddr bar, uint32_t tx,
                                                                  uint32_t order) {
  uint64_t state = 0;
#define PARITY_ARRIVE_TX(SEM, SCOPE)                                                     \
  asm volatile("mbarrier.arrive.expect_tx." SEM "." SCOPE ".shared::cta.b64 %0, [%1], %2;" \
               : "=l"(state) /* %0: state token */                                      \
               : "r"(bar),   /* %1: mbarrier address */                                 \
                 "r"(tx)     /* %2: txCount */                                          \
               : "memory")
  PARITY_PTX_BY_ORDER(order, "release", PARITY_ARRIVE_TX)
#undef PARITY_ARRIVE_TX
  return state;
}

// mbarrier.arrive.SEM.SCOPE.shared::cluster.b64 _, [remote], count (no token remotely).
__device__ __forceinline__ void MbarrierArriveRemoteOrdered(uint32_t remote_bar, uint32_t count,
                                                            uint32_t order) {
#define PARITY_ARRIVE_R(SEM, SCOPE)                                                      \
  asm volatile("mbarrier.arrive." SEM "." SCOPE ".shared::cluster.b64 _, [%0], %1;"       \
               :                                                                        \
               : "r"(remote_bar), /* %0: mbarrier (.shared::cluster, from mapa) */       \
                 "r"(count)       /* %1: arrival count */                                \
               : "memory")
  PARITY_PTX_BY_ORDER(order, "release", PARITY_ARRIVE_R)
#undef PARITY_ARRIVE_R
}

// mbarrier.arrive.expect_tx.SEM.SCOPE.shared::cluster.b64 _, [remote], tx.
__device__ __forceinline__ void MbarrierArriveExpectTxRemoteOrdered(uint32_t remote_bar,
                                                                    uint32_t tx, uint32_t order) {
#define PARITY_ARRIVE_TX_R(SEM, SCOPE)                                                        \
  asm volatile("mbarrier.arrive.expect_tx." SEM "." SCOPE ".shared::cluster.b64 _, [%0], %1;" \
               :                                                                             \
               : "r"(remote_bar), /* %0: mbarrier (.shared::cluster, from mapa) */            \
                 "r"(tx)          /* %1: txCount */                                           \
               : "memory")
  PARITY_PTX_BY_ORDER(order, "release", PARITY_ARRIVE_TX_R)
#undef PARITY_ARRIVE_TX_R
}

// mbarrier.try_wait.parity.SEM.SCOPE / test_wait.parity.SEM.SCOPE (SEM .acquire or .relaxed).
#define PARITY_TRY_WAIT(SEM, SCOPE) \
  PARITY_MBARRIER_WAIT_ASM("mbarrier.try_wait.parity." SEM "." SCOPE, "r"(parity))
#define PARITY_TEST_WAIT(SEM, SCOPE) \
  PARITY_MBARRIER_WAIT_ASM("mbarrier.test_wait.parity." SEM "." SCOPE, "r"(parity))
__device__ __forceinline__ bool MbarrierTryWaitParityOrdered(SmemAddr bar, uint32_t parity,
                                                             uint32_t order) {
  uint32_t done = 0;
  PARITY_PTX_BY_ORDER(order, "acquire", PARITY_TRY_WAIT)
  return done != 0;
}
__device__ __forceinline__ bool MbarrierTestWaitParityOrdered(SmemAddr bar, uint32_t parity,
                                                              uint32_t order) {
  uint32_t done = 0;
  PARITY_PTX_BY_ORDER(order, "acquire", PARITY_TEST_WAIT)
  return done != 0;
}
#undef PARITY_TRY_WAIT
#undef PARITY_TEST_WAIT
#undef PARITY_PTX_BY_ORDER

// Distributed shared memory (PTX ISA ld / st with .shared::cluster): 16 bytes at a
// shared::cluster address from MapaSharedCluster.
__device__ __forceinline__ uint4 LdSharedCluster16(uint32_t addr) {
  uint4 v;
  asm volatile("ld.shared::cluster.v4.u32 {%0, %1, %2, %3}, [%4];"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)  // %0..%3: the 16 bytes
               : "r"(addr)                                   // %4: shared::cluster address
               : "memory");
  return v;
}
__device__ __forceinline__ void StSharedCluster16(uint32_t addr, uint4 v) {
  asm volatile("st.shared::cluster.v4.u32 [%0], {%1, %2, %3, %4};"
               :
               : "r"(addr),                                  // %0: shared::cluster address
                 "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w)      // %1..%4: the 16 bytes
               : "memory");
}

// fence.acq_rel.cta.
__device__ __forceinline__ void FenceAcqRelCta() {
  asm volatile("fence.acq_rel.cta;" ::: "memory");
}

// fence.proxy.async.global: generic-proxy global accesses vs later async-proxy ones.
__device__ __forceinline__ void FenceProxyAsyncGlobal() {
  asm volatile("fence.proxy.async.global;" ::: "memory");
}
// fence.acq_rel.cluster.
__device__ __forceinline__ void FenceAcqRelCluster() {
  asm volatile("fence.acq_rel.cluster;" ::: "memory");
}

// barrier.cluster.arrive[.relaxed] / barrier.cluster.wait (PTX ISA 9.7.13.3): executed by every
// thread of every CTA of the cluster. The wait cannot be bounded (no try form exists).
__device__ __forceinline__ void ClusterArrive() {
  asm volatile("barrier.cluster.arrive.release;" ::: "memory");
}
__device__ __forceinline__ void ClusterArriveRelaxed() {
  asm volatile("barrier.cluster.arrive.relaxed;" ::: "memory");
}
__device__ __forceinline__ void ClusterWait() {
  asm volatile("barrier.cluster.wait.acquire;" ::: "memory");
}

// cp.async.bulk.wait_group[.read] with a run-time N (the instruction takes an immediate, so
// N = 0..7 are dispatched to BulkWaitGroup<N>). Returns false for N > 7.
__device__ __forceinline__ bool BulkWaitGroupDynamic(uint32_t n, bool read) {
  switch (n) {
#define PARITY_BULK_WAIT_CASE(k) \
  case k: read ? BulkWaitGroupRead<k>() : BulkWaitGroup<k>(); return true;
    PARITY_BULK_WAIT_CASE(0) PARITY_BULK_WAIT_CASE(1) PARITY_BULK_WAIT_CASE(2)
    PARITY_BULK_WAIT_CASE(3) PARITY_BULK_WAIT_CASE(4) PARITY_BULK_WAIT_CASE(5)
    PARITY_BULK_WAIT_CASE(6) PARITY_BULK_WAIT_CASE(7)
#undef PARITY_BULK_WAIT_CASE
    default: return false;
  }
}

// bar.sync id, threads / bar.arrive id, threads (PTX ISA 9.7.13.1 bar/barrier): named CTA
// barrier `id` (0..15) completing once `threads` threads (a multiple of 32) arrived. Unbounded:
// there is no try form.
__device__ __forceinline__ void NamedBarrierSync(uint32_t id, uint32_t threads) {
  asm volatile("bar.sync %0, %1;" : : "r"(id), "r"(threads) : "memory");  // %0: id, %1: count
}
__device__ __forceinline__ void NamedBarrierArrive(uint32_t id, uint32_t threads) {
  asm volatile("bar.arrive %0, %1;" : : "r"(id), "r"(threads) : "memory");  // %0: id, %1: count
}


// ---------------------------------------------------------------------------------------------
// Arrive variants and state tokens (PTX ISA 9.7.13.15.13 mbarrier.arrive, 9.7.13.15.14
// mbarrier.arrive_drop, 9.7.13.15.16 mbarrier.test_wait/try_wait). Syntax checked against the
// PTX ISA 8.x text:
//   mbarrier.arrive.noComplete{.release}{.cta}{.shared{::cta}}.b64  state, [addr], count;
//   mbarrier.arrive_drop{.sem}{.scope}{.shared{::cta}}.b64           state, [addr]{, count};
//   mbarrier.arrive_drop{.sem}{.scope}{.shared::cluster}.b64         _, [addr]{, count};
//   mbarrier.test_wait{.sem}{.scope}{.shared{::cta}}.b64 waitComplete, [addr], state;
//   mbarrier.try_wait{.sem}{.scope}{.shared{::cta}}.b64  waitComplete, [addr], state;
// .noComplete exists only for a local barrier, only with .release.cta, and needs the count.
// ---------------------------------------------------------------------------------------------

// mbarrier.arrive.noComplete: an arrive that must not complete the current phase (PTX: "must not
// cause the mbarrier to complete its current phase, otherwise the behavior is undefined").
__device__ __forceinline__ uint64_t MbarrierArriveNoComplete(SmemAddr bar, uint32_t count) {
  uint64_t state;
  asm volatile("mbarrier.arrive.noComplete.release.cta.shared::cta.b64 %0, [%1], %2;"
               : "=l"(state)  // %0: state token
               : "r"(bar),    // %1: mbarrier address (.shared::cta only)
                 "r"(count)   // %2: arrival count (mandatory for .noComplete)
               : "memory");
  return state;
}

// mbarrier.arrive_drop: an arrive that also lowers the expected count of every later phase by
// `count` (the dropping thread leaves the barrier's participants).
__device__ __forceinline__ uint64_t MbarrierArriveDrop(SmemAddr bar, uint32_t count) {
  uint64_t state;
  asm volatile("mbarrier.arrive_drop.release.cta.shared::cta.b64 %0, [%1], %2;"
               : "=l"(state)  // %0: state token
               : "r"(bar),    // %1: mbarrier address
                 "r"(count)   // %2: count dropped (and arrived)
               : "memory");
  return state;
}

// Remote arrive_drop on another CTA's barrier (no state token: the sink `_`).
__device__ __forceinline__ void MbarrierArriveDropRemote(uint32_t remote_bar, uint32_t count) {
  asm volatile("mbarrier.arrive_drop.release.cluster.shared::cluster.b64 _, [%0], %1;"
               :
               : "r"(remote_bar),  // %0: mbarrier (.shared::cluster, from MapaSharedCluster)
                 "r"(count)        // %1: count dropped (and arrived)
               : "memory");
}

// mbarrier.try_wait with a state token (from an arrive on this barrier): true once the phase the
// token was taken in has completed. May fail spuriously: callers loop.
__device__ __forceinline__ bool MbarrierTryWaitToken(SmemAddr bar, uint64_t state) {
  uint32_t done;
  PARITY_MBARRIER_WAIT_ASM("mbarrier.try_wait.acquire.cta", "l"(state));
  return done != 0;
}

// mbarrier.test_wait with a state token: the non-blocking probe.
__device__ __forceinline__ bool MbarrierTestWaitToken(SmemAddr bar, uint64_t state) {
  uint32_t done;
  PARITY_MBARRIER_WAIT_ASM("mbarrier.test_wait.acquire.cta", "l"(state));
  return done != 0;
}
#undef PARITY_MBARRIER_WAIT_ASM

// ---------------------------------------------------------------------------------------------
// cp.async (LDGSTS), PTX ISA 9.7.9.25.3 (cp.async, cp.async.commit_group, cp.async.wait_group /
// wait_all) and 9.7.13.16 cp.async.mbarrier.arrive. Groups are per thread.
// ---------------------------------------------------------------------------------------------

// cp.async.cg.shared.global [dst], [src], 16: 16 bytes, cached in L2 only (.cg allows only 16).
__device__ __forceinline__ void CpAsync16(SmemAddr dst, const void* src) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;"
               :
               : "r"(dst),  // %0: destination (.shared, 16-byte aligned)
                 "l"(src)   // %1: source (.global, 16-byte aligned)
               : "memory");
}

// cp.async.ca.shared.global [dst], [src], 4: 4 bytes (cp-size 4, 8 or 16 with .ca).
__device__ __forceinline__ void CpAsync4(SmemAddr dst, const void* src) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4;"
               :
               : "r"(dst),  // %0: destination (.shared, 4-byte aligned)
                 "l"(src)   // %1: source (.global)
               : "memory");
}

// cp.async.commit_group: closes this thread's current cp.async-group (an empty one is allowed).
__device__ __forceinline__ void CpAsyncCommitGroup() {
  asm volatile("cp.async.commit_group;" ::: "memory");
}

// cp.async.wait_group N: waits until at most N of this thread's most recent cp.async-groups are
// pending; the writes of the others are then visible to this thread.
template <int kN>
__device__ __forceinline__ void CpAsyncWaitGroup() {
  asm volatile("cp.async.wait_group %0;" : : "n"(kN) : "memory");  // %0: N (immediate)
}

// cp.async.wait_all = cp.async.commit_group then cp.async.wait_group 0.
__device__ __forceinline__ void CpAsyncWaitAll() {
  asm volatile("cp.async.wait_all;" ::: "memory");
}

// Run-time N for cp.async.wait_group (an immediate): N = 0..7. Returns false for N > 7.
__device__ __forceinline__ bool CpAsyncWaitGroupDynamic(uint32_t n) {
  switch (n) {
#define PARITY_CP_WAIT_CASE(k) \
  case k: CpAsyncWaitGroup<k>(); return true;
    PARITY_CP_WAIT_CASE(0) PARITY_CP_WAIT_CASE(1) PARITY_CP_WAIT_CASE(2)
    PARITY_CP_WAIT_CASE(3) PARITY_CP_WAIT_CASE(4) PARITY_CP_WAIT_CASE(5)
    PARITY_CP_WAIT_CASE(6) PARITY_CP_WAIT_CASE(7)
#undef PARITY_CP_WAIT_CASE
    default: return false;
  }
}

// cp.async.mbarrier.arrive.shared::cta.b64 [bar]: an arrive-on triggered once every prior
// cp.async of this thread completed; the pending count is incremented first (net effect zero
// on the count, so the init count need not budget for it).
__device__ __forceinline__ void CpAsyncMbarrierArrive(SmemAddr bar) {
  asm volatile("cp.async.mbarrier.arrive.shared::cta.b64 [%0];"
               :
               : "r"(bar)  // %0: mbarrier address
               : "memory");
}

// cp.async.mbarrier.arrive.noinc.shared::cta.b64 [bar]: the same without the increment: the
// deferred arrive counts against the phase's pending count (the init count must budget it).
__device__ __forceinline__ void CpAsyncMbarrierArriveNoinc(SmemAddr bar) {
  asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];"
               :
               : "r"(bar)  // %0: mbarrier address
               : "memory");
}

// ---------------------------------------------------------------------------------------------
// 1-D bulk copies, PTX ISA 9.7.9.25.4.1 cp.async.bulk: size a multiple of 16, addresses
// 16-byte aligned. Loads complete_tx on the destination CTA's mbarrier; stores join the bulk
// async-group (commit/wait above).
// ---------------------------------------------------------------------------------------------

// cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [dst], [src], size, [bar].
__device__ __forceinline__ void BulkLoad(SmemAddr dst, const void* src, uint32_t size,
                                         SmemAddr bar) {
  asm volatile(
      "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
      :
      : "r"(dst),   // %0: dstMem (.shared::cluster; a .shared::cta address names this CTA)
        "l"(src),   // %1: srcMem (.global)
        "r"(size),  // %2: bytes, a multiple of 16
        "r"(bar)    // %3: mbarrier that receives complete_tx(size)
      : "memory");
}

// The .multicast::cluster form: the same bytes land at `dst` and complete_tx at `bar` (same
// CTA-relative offsets) in every CTA whose bit is set in cta_mask (sm_90a-optimised form).
__device__ __forceinline__ void BulkLoadMulticast(SmemAddr dst, const void* src, uint32_t size,
                                                  SmemAddr bar, uint16_t cta_mask) {
  asm volatile(
      "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster"
      " [%0], [%1], %2, [%3], %4;"
      :
      : "r"(dst),      // %0: dstMem (in each destination CTA)
        "l"(src),      // %1: srcMem (.global)
        "r"(size),     // %2: bytes, a multiple of 16
        "r"(bar),      // %3: mbarrier (in each destination CTA)
        "h"(cta_mask)  // %4: ctaMask, bit r = %cluster_ctarank r
      : "memory");
}

// cp.async.bulk.global.shared::cta.bulk_group [dst], [src], size.
__device__ __forceinline__ void BulkStore(void* dst, SmemAddr src, uint32_t size) {
  asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;"
               :
               : "l"(dst),   // %0: dstMem (.global, 16-byte aligned)
                 "r"(src),   // %1: srcMem (.shared::cta, 16-byte aligned)
                 "r"(size)   // %2: bytes, a multiple of 16
               : "memory");
}

// ---------------------------------------------------------------------------------------------
// st.async (PTX ISA 9.7.9.12, PTX 8.1, sm_90): a remote shared-memory store that performs
// complete_tx(bytes of the store) on an mbarrier in the same destination CTA.
//   st.async{.weak}{.shared::cluster}{.mbarrier::complete_tx::bytes}{.vec}.type [a], b, [mbar];
// ---------------------------------------------------------------------------------------------

// 16 bytes (.v4.b32) at `remote_addr`, complete_tx(16) on `remote_bar` (both .shared::cluster
// addresses of the same CTA, from MapaSharedCluster).
__device__ __forceinline__ void StAsyncV4(uint32_t remote_addr, uint4 v, uint32_t remote_bar) {
  asm volatile(
      "st.async.shared::cluster.mbarrier::complete_tx::bytes.v4.b32 [%0], {%1, %2, %3, %4}, [%5];"
      :
      : "r"(remote_addr),                        // %0: destination (16-byte aligned)
        "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w),  // %1..%4: the four words
        "r"(remote_bar)                          // %5: mbarrier receiving complete_tx(16)
      : "memory");
}

// ld.shared.v4.u32: 16 bytes from the CTA's shared window (the executor's `use` check).
__device__ __forceinline__ uint4 LdShared16(SmemAddr addr) {
  uint4 v;
  asm volatile("ld.shared.v4.u32 {%0, %1, %2, %3}, [%4];"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)  // %0..%3: the four words
               : "r"(addr)                                     // %4: 16-byte aligned address
               : "memory");
  return v;
}

// mbarrier.pending_count.b64 count, state (PTX ISA 9.7.13.15.17): the pending arrival count
// recorded in a state token, i.e. the barrier's pending count before the arrive-on that
// returned it. Defined only for tokens of mbarrier.arrive.noComplete / arrive_drop.noComplete.
__device__ __forceinline__ uint32_t MbarrierPendingCount(uint64_t state) {
  uint32_t count;
  asm volatile("mbarrier.pending_count.b64 %0, %1;"
               : "=r"(count)  // %0: the pending count
               : "l"(state));  // %1: the state token
  return count;
}

// ld.relaxed.gpu.global.v4.b32: 16 bytes of global memory read at GPU scope (no stale L1 line),
// for `readback` of what a bulk store wrote.
__device__ __forceinline__ uint4 LdGlobalRelaxedGpu16(const void* p) {
  uint4 v;
  asm volatile("ld.relaxed.gpu.global.v4.b32 {%0, %1, %2, %3}, [%4];"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "l"(p)
               : "memory");
  return v;
}

// ld.global.v4.b32 / st.global.v4.b32: a generic (weak) 16-byte read / write of global memory,
// as a kernel's epilogue stores and its consumer's loads are: `use` / `write` of a `global`
// buffer. Weak on purpose: what orders them across grids is griddepcontrol.wait, not the access.
__device__ __forceinline__ uint4 LdGlobal16(const void* p) {
  uint4 v;
  asm volatile("ld.global.v4.b32 {%0, %1, %2, %3}, [%4];"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "l"(p)
               : "memory");
  return v;
}
__device__ __forceinline__ void StGlobal16(void* p, uint4 v) {
  asm volatile("st.global.v4.b32 [%0], {%1, %2, %3, %4};"
               :
               : "l"(p), "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w)
               : "memory");
}

// ---------------------------------------------------------------------------------------------
// Programmatic dependent launch (PTX ISA "griddepcontrol", parallel synchronization and
// communication instructions; sm_90; CUDA Programming Guide "Programmatic Dependent Launch").
// ---------------------------------------------------------------------------------------------

// griddepcontrol.launch_dependents: this CTA allows the grid's programmatic dependents to be
// scheduled once every CTA of the grid has done so or exited. A hint about scheduling only: it
// says nothing of this grid's completion or of the visibility of its memory operations, and the
// dependent may still start only after this grid completes. Repeats in a CTA have no effect.
__device__ __forceinline__ void GriddepcontrolLaunchDependents() {
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
}

// griddepcontrol.wait: blocks the thread until every prerequisite grid has completed and its
// memory operations are performed and visible to this grid. Without a prerequisite grid (no
// programmatic launch attribute) it returns at once.
__device__ __forceinline__ void GriddepcontrolWait() {
  asm volatile("griddepcontrol.wait;" ::: "memory");
}

}  // namespace parity::gpu::ptx

#endif  // PARITY_GPU_PTX_CUH_
