// The one registry of stable violation codes (error channel 2 of docs/architecture.md).
//
// A violation is a protocol error found in a schedule or a trace: it is returned as data, never
// thrown or logged. Each code has a stable id ("M1001") that tests, golden files, reports and
// users' suppressions refer to, so an id is never reused or renumbered; retire a code by leaving
// its row.
//
// Families:
//   M1xxx  mbarrier object (PTX ISA 9.7.13.15 "Parallel Synchronization and Communication
//          Instructions: mbarrier"), see sim/model/mbarrier.h.
//   A1xxx  cp.async groups (PTX ISA 9.7.9.25.3 cp.async, cp.async.commit_group,
//          cp.async.wait_group), A11xx bulk async-groups (cp.async.bulk.commit_group,
//          cp.async.bulk.wait_group{.read}), see sim/model/async_groups.h.
//   S1xxx  named barriers (bar.sync / bar.arrive), S11xx cluster barrier (barrier.cluster), see
//          sim/model/sync_barriers.h.
//   P2xxx  whole-program properties found by the verifier (P2001 deadlock).
//
// Violation is a 24-byte POD: the engine creates them on its hot path (tens of millions of events
// per second), so nothing here allocates until Describe() formats a message for a human.
#ifndef PARITY_SIM_MODEL_CODES_H_
#define PARITY_SIM_MODEL_CODES_H_

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace parity::model {

// How bad a code is. kError: undefined behaviour per PTX or a certain hang/corruption. kWarning:
// legal PTX that is almost always a kernel bug (the CLI may be told to ignore warnings). kNote:
// behaviour the H100 shows to be defined, reported because a later operation can turn it into a
// bug (that operation's own code is the error); never affects an exit code or a verdict.
enum class Severity : uint8_t { kError, kWarning, kNote };

// X(Name, "Id", "slug", severity, "title", "explanation")
//
// The title is one line. The explanation names the PTX rule, why it matters, and the kernel bug
// that usually produces it. Describe() adds the numbers of a particular occurrence.
#define PARITY_VIOLATION_CODES(X)                                                                  \
  X(kMbarrierUninitialized, "M1001", "mbarrier-uninitialized", kError,                             \
    "operation on an uninitialised mbarrier",                                                      \
    "PTX ISA (mbarrier): every mbarrier operation other than mbarrier.init on a location that "    \
    "does not hold a valid (initialised) mbarrier object is undefined behaviour. Typical bug: "    \
    "a thread arrives, waits or issues a TMA on a barrier before the thread that initialises it "  \
    "has run, because the init is not followed by a fence/__syncthreads (or cluster sync for "    \
    "remote users), or the barrier address is computed wrongly.")                                  \
  X(kMbarrierInvalidated, "M1002", "mbarrier-invalidated", kError,                                 \
    "operation on an invalidated mbarrier",                                                        \
    "PTX ISA (mbarrier.inval): after mbarrier.inval the memory is no longer an mbarrier object; "  \
    "any mbarrier operation other than mbarrier.init on it is undefined behaviour. Typical bug: "  \
    "a barrier is invalidated (e.g. to reuse its shared memory) while a late arrival, a pending "  \
    "TMA complete_tx or a waiter still refers to it.")                                             \
  X(kMbarrierInitLive, "M1003", "mbarrier-init-live", kError,                                      \
    "mbarrier.init on a live mbarrier",                                                            \
    "PTX ISA (mbarrier.init): initialising a location that already holds a valid mbarrier "        \
    "object is undefined behaviour; mbarrier.inval must come first. Typical bug: a barrier is "    \
    "re-initialised per tile or per loop iteration while arrivals of the previous use may still " \
    "be in flight.")                                                                               \
  X(kMbarrierExpectedCountRange, "M1004", "mbarrier-expected-count-range", kError,                 \
    "mbarrier.init count out of range 1..2^20-1",                                                  \
    "PTX ISA (contents of the mbarrier object): the expected arrival count is in 1..2^20-1. "      \
    "Typical bug: an arrival count computed as 0 (e.g. consumers = 0 when a role is compiled "     \
    "out, or (cluster_m + cluster_n - 1) with a zero dimension) or an unsigned underflow.")        \
  X(kMbarrierOverArrival, "M1005", "mbarrier-over-arrival", kError,                                \
    "arrive count exceeds the pending arrival count",                                              \
    "PTX ISA (contents of the mbarrier object): the pending count is in 0..2^20-1; an arrive-on "  \
    "whose count exceeds the pending count of the current phase is undefined; on an H100 the "     \
    "kernel traps (cudaErrorLaunchFailure, litmus/arrive_over_count). Typical bug: more "          \
    "arrivals than the init count (counting threads instead of warps, forgetting that the "        \
    "producer's own CTA is counted once, or a thread arriving twice in one phase).")               \
  X(kMbarrierTxRange, "M1006", "mbarrier-tx-range", kError,                                        \
    "tx-count out of range -(2^20-1)..2^20-1",                                                     \
    "PTX ISA (contents of the mbarrier object, expect-tx and complete-tx operations): tx-count "   \
    "(a per-phase state) is in -(2^20-1)..2^20-1; beyond it an H100 kernel traps "                \
    "(cudaErrorLaunchFailure, litmus/tx_range_overflow and tx_range_underflow). Typical bug: "     \
    "expect_tx of the bytes of a whole pipeline (or multiplied by the cluster size) instead of "   \
    "one stage, or bytes landing on a barrier whose expect never happens.")                        \
  X(kMbarrierNoCompleteCompletes, "M1007", "mbarrier-nocomplete-completes", kError,                \
    "arrive.noComplete would complete the phase",                                                  \
    "PTX ISA (mbarrier.arrive): an arrive-on with .noComplete must not cause the current phase "   \
    "to complete; otherwise the behaviour is undefined. Typical bug: the .noComplete arrival is "  \
    "the last one of the phase because the init count was one too small.")                        \
  X(kMbarrierWaitStalePhase, "M1008", "mbarrier-wait-stale-phase", kError,                         \
    "wait on a phase neither current nor immediately preceding",                                   \
    "PTX ISA (mbarrier.test_wait/try_wait): the state or parity operand must name the current "    \
    "incomplete phase or the immediately preceding phase; anything else is undefined, and with "   \
    "a parity wait it silently aliases (a phase two behind has the parity of the current one). "   \
    "Typical bug: a consumer falls two phases behind, or its parity comes from a loop index "      \
    "that does not follow the barrier's own phase history.")                                       \
  X(kMbarrierArriveBeforeObserved, "M1009", "mbarrier-arrive-before-observed", kNote,              \
    "a phase completes before any wait observed the previous phase",                               \
    "A note, not an error (it never changes an exit code or a verdict). PTX ISA (mbarrier, "       \
    "Phase of the mbarrier object; test_wait/try_wait): a wait names only the current incomplete " \
    "phase or the immediately preceding one, so once two phases complete with no wait observing " \
    "the first, a wait meant for that phase names another one. The completion itself is defined: " \
    "the H100 completes both phases (litmus arrive_next_phase_unobserved, 1000 of 1000 runs), "    \
    "and multicast pipelines do it on purpose (a peer CTA's consumer releases a stage early). The " \
    "hazard is a later wait for the unobserved phase: with a token it is M1008, with a parity it " \
    "aliases (blocks on a phase nobody completes, P2001, or passes before the bytes, P2005/P2009)" \
    ". Typical bug when it matters: a producer runs ahead with no back-pressure and fills a stage " \
    "twice before the consumer saw the first fill.")                                               \
  X(kMbarrierArriveCountRange, "M1010", "mbarrier-arrive-count-range", kError,                     \
    "arrive count operand out of range 1..2^20-1",                                                 \
    "PTX ISA (mbarrier.arrive, mbarrier.arrive_drop): the count operand is in 1..2^20-1. "         \
    "Typical bug: a computed count of 0 (an empty role) or a negative value converted to "         \
    "unsigned.")                                                                                   \
  X(kMbarrierDropBelowOne, "M1011", "mbarrier-drop-below-one", kError,                            \
    "arrive_drop would leave the expected arrival count below 1",                                  \
    "PTX ISA (mbarrier.arrive_drop): arrive_drop lowers the expected count of the following "      \
    "phases by count; if that makes the expected count zero the behaviour is undefined. Typical "  \
    "bug: every participant of a barrier drops (e.g. all threads of an exiting role, or a thread " \
    "that drops twice), instead of the last ones arriving normally.")                              \
  X(kMbarrierPendingOverflow, "M1012", "mbarrier-pending-overflow", kError,                        \
    "pending count would exceed 2^20-1",                                                           \
    "PTX ISA (cp.async.mbarrier.arrive): without .noinc the pending count is incremented before "  \
    "the asynchronous arrive; the pending count must stay in 0..2^20-1. Typical bug: a "           \
    "cp.async.mbarrier.arrive per copy in a loop with no matching phase completion.")              \
  X(kMbarrierPendingCountToken, "M1013", "mbarrier-pending-count-token", kError,                  \
    "mbarrier.pending_count on a state not returned by a .noComplete arrive",                      \
    "PTX ISA (mbarrier.pending_count): the state operand must be the result of a prior "           \
    "mbarrier.arrive.noComplete or mbarrier.arrive_drop.noComplete; otherwise the behaviour is "   \
    "undefined. Typical bug: reading the pending count from the token of an ordinary arrive to "   \
    "decide which thread was last.")                                                               \
  X(kCpAsyncWaitUncommitted, "A1001", "cp-async-wait-uncommitted", kWarning,                       \
    "cp.async.wait_group with copies never committed",                                             \
    "PTX ISA (cp.async.wait_group): wait_group waits only for committed cp.async-groups; copies "  \
    "issued after the last cp.async.commit_group are not covered. Typical bug: a missing "         \
    "commit_group (cp_async_fence) so that the data read after the wait is not there yet.")        \
  X(kCpAsyncEmptyCommit, "A1002", "cp-async-empty-commit", kWarning,                               \
    "cp.async.commit_group with no cp.async since the last commit",                                \
    "PTX ISA (cp.async.commit_group): with no prior uncommitted cp.async the group is empty. "     \
    "This is legal and used on purpose to keep wait_group N arithmetic uniform in pipeline tails " \
    "(hence a warning). Typical bug when unintended: the copies were predicated off or issued "    \
    "after the commit, so a later wait_group N names a different group than the author meant.")   \
  X(kAsyncExitInFlight, "A1003", "async-exit-in-flight", kError,                                   \
    "thread exits with asynchronous copies still in flight",                                       \
    "PTX ISA (Completion mechanisms for asynchronous copy operations): a cp.async or bulk "        \
    "copy reads or writes shared memory until its completion is observed (wait_group, an "         \
    "mbarrier phase). A thread (or CTA) that exits with copies whose completion it never waited "           \
    "for can free or reuse shared memory that is still being read or written. Typical bug: a "     \
    "missing final cp.async.wait_all or cp.async.bulk.wait_group 0 after the last TMA store.")     \
  X(kBulkExitReadsPending, "A1004", "bulk-exit-reads-pending", kNote,                              \
    "thread exits before its bulk stores have read their shared-memory source",                    \
    "PTX ISA (cp.async.bulk.wait_group): .read says when a bulk store's shared-memory source "     \
    "may be reused; the ISA does not say what happens when the CTA exits first. On H100 the "      \
    "CTA's shared memory outlives such reads: CTAs exiting with 200 KB of cp.async.bulk or "       \
    "TMA tensor stores unread left 0 wrong words, while overwriting the same bytes in the CTA "    \
    "right after the issue corrupted them (traces/a1003/). Typical case: an epilogue that "       \
    "commits its TMA stores and exits without tma_store_wait<0> (DeepGEMM's sm90 GEMM); a note, "  \
    "since portable code waits, as CUTLASS's TMA epilogue does.")                                  \
  X(kBulkWaitUncommitted, "A1101", "bulk-wait-uncommitted", kWarning,                              \
    "cp.async.bulk.wait_group with bulk copies never committed",                                   \
    "PTX ISA (cp.async.bulk.wait_group): only committed bulk async-groups are waited for; bulk "   \
    "operations issued after the last cp.async.bulk.commit_group are not covered. Typical bug: "   \
    "tma_store_arrive (commit) missing before tma_store_wait.")                                    \
  X(kBulkEmptyCommit, "A1102", "bulk-empty-commit", kWarning,                                      \
    "cp.async.bulk.commit_group with no bulk operation since the last commit",                     \
    "PTX ISA (cp.async.bulk.commit_group): an empty bulk async-group is legal (hence a warning). " \
    "Typical bug: the TMA store was issued by a different (elected) thread than the one that "     \
    "commits and waits, since bulk async-groups are per thread, so the wait covers nothing.")      \
  X(kNamedBarrierId, "S1001", "named-barrier-id", kError,                                          \
    "named barrier id out of range 0..15",                                                         \
    "PTX ISA (bar.sync / bar.arrive): a CTA has 16 named barriers, ids 0..15. Typical bug: a "     \
    "barrier id computed from a warp-group index plus an offset that runs past 15.")               \
  X(kNamedBarrierCountAlign, "S1002", "named-barrier-count-align", kError,                         \
    "named barrier thread count not a positive multiple of 32",                                    \
    "PTX ISA (bar.sync / bar.arrive): the thread-count operand b must be a multiple of the warp "  \
    "size (and non-zero). Typical bug: counting warps or warp groups instead of threads.")         \
  X(kNamedBarrierCountMismatch, "S1003", "named-barrier-count-mismatch", kError,                   \
    "named barrier used with different thread counts in one phase",                                \
    "PTX ISA (bar.sync / bar.arrive): warps using one barrier id in one barrier instance must "    \
    "use the same thread count (\"using the same barrier name and thread count\"). Typical bug: "  \
    "producer and consumer warp groups disagree on how many threads sync on a shared id.")        \
  X(kNamedBarrierOverArrival, "S1004", "named-barrier-over-arrival", kError,                       \
    "more threads arrived at a named barrier than its thread count",                               \
    "PTX ISA (bar.sync / bar.arrive): the barrier completes when the expected number of threads "  \
    "has arrived; PTX warns to keep a warp from executing more barrier instructions than "         \
    "intended before the reset. Typical bug: a thread count smaller than the number of warps "     \
    "that actually use the id, or a warp that arrives twice.")                                     \
  X(kClusterArriveTwice, "S1101", "cluster-arrive-twice", kError,                                  \
    "barrier.cluster.arrive twice without an intervening wait",                                    \
    "PTX ISA (barrier.cluster): each thread must execute barrier.cluster.wait after its "          \
    "barrier.cluster.arrive before arriving again; a second arrive is undefined. Typical bug: a "  \
    "cluster_arrive_relaxed at the start and a full cluster_sync later with no wait between.")     \
  X(kClusterWaitWithoutArrive, "S1102", "cluster-wait-without-arrive", kError,                     \
    "barrier.cluster.wait without a preceding arrive",                                             \
    "PTX ISA (barrier.cluster): barrier.cluster.wait waits for the phase the thread arrived in; "  \
    "a wait with no preceding barrier.cluster.arrive is undefined. Typical bug: the arrive is "    \
    "under a condition (elected thread, role) that the wait is not.")                              \
  X(kDeadlock, "P2001", "deadlock", kError, "deadlock",                                            \
    "A property of the schedule, not a PTX rule (on the GPU: a hang, e.g. `parity gpu run`'s "     \
    "bounded waits time out). No agent can make progress and some agent has not finished: "        \
    "every remaining agent waits on a barrier phase, a group or a copy that no remaining event "   \
    "can complete. Typical bugs: an arrival count larger than the arrivals that happen, "          \
    "expect_tx bytes that never land, a role that exits early while another waits for it.")        \
  X(kEarlyPhaseCompletion, "P2002", "early-phase-completion", kError,                              \
    "an mbarrier phase completed before the bytes meant for it landed",                            \
    "PTX ISA (mbarrier, phase completion; expect-tx/complete-tx): a phase completes as soon as "   \
    "its pending arrival count is 0 and its tx-count is 0. If the last arrival comes before the "  \
    "expect_tx that announces a copy's bytes (arrive before expect_tx, or an arrival count lower " \
    "than the arrivals of one iteration), the phase completes without those bytes and their "      \
    "complete_tx is credited to the NEXT phase: waiters read a stage whose data is still on its "  \
    "way and every later phase is shifted. Reported when a TMA, bulk or st.async delivery lands "  \
    "on a barrier that completed a phase between the copy's issue and its delivery (the phase "    \
    "that was current when the copy was issued), or when an agent's expect_tx follows its own "   \
    "arrive that just completed a phase with no bytes announced. Typical bug: mbarrier.arrive "    \
    "followed by expect_tx instead of arrive.expect_tx, or a copy issued before an arrive that "   \
    "announces none of its bytes. (A count lower than the arrivals of one iteration shows up as "  \
    "P2005, consumers reading before the late arrivals' bytes, or as M1005.)")                     \
  X(kTxMismatch, "P2003", "tx-mismatch", kError,                                                   \
    "expect_tx bytes and delivered bytes of a barrier phase differ",                               \
    "PTX ISA (mbarrier tx-count): a phase completes only when the bytes announced by expect_tx "   \
    "have all been credited by complete_tx. More bytes expected than delivered leaves tx-count "   \
    "positive and the waiters hang; more delivered than expected drives it negative, so the "      \
    "phase waits for an expect that never comes (or swallows the next phase's bytes). Reported "   \
    "for a barrier whose last phase ends the run with expected != delivered bytes. Typical bug: "  \
    "expect_tx of the whole tile while each CTA loads only a slice (or multiplied by the cluster " \
    "size), or a box size different from the bytes announced.")                                    \
  X(kMulticastDisagreement, "P2004", "multicast-disagreement", kError,                             \
    "CTAs of a cluster disagree on multicast masks",                                               \
    "PTX ISA (cp.async.bulk.tensor .multicast::cluster): the data and the complete_tx of a "       \
    "multicast land on the same-offset mbarrier of every CTA in ctaMask, whatever that CTA "       \
    "expects. If the CTAs of a cluster disagree on who sends what to whom, some barrier expects "  \
    "bytes nobody sends (hang) or receives bytes nobody announced (tx-count negative, phases "     \
    "shift). Reported for a barrier whose expected and delivered byte totals over the run differ " \
    "while multicast bytes from other CTAs landed on it. Typical bug: a mask computed from the "   \
    "wrong cluster coordinate, or a CTA that skips its slice of the multicast.")                   \
  X(kSharedMemoryRace, "P2005", "smem-race", kError,                                               \
    "shared-memory race between an asynchronous copy and a buffer access",                         \
    "PTX ISA (Memory Consistency Model; mbarrier: arrive-on has .release and test_wait/try_wait "  \
    ".acquire semantics by default; Completion mechanisms for asynchronous copy operations). "     \
    "Two accesses of one buffer slot, at least one a write, are not ordered by happens-before "    \
    "(vector clocks through mbarrier phases: arrive -> phase completion -> successful wait; "      \
    "barrier.cluster arrive -> wait; bar.sync; and a copy's issue): a TMA, bulk or st.async write " \
    "lands on a slot that a consumer may still be reading (its use is not ordered before the "     \
    "copy was issued, also across CTAs for multicast), or a consumer reads a slot before it "      \
    "waited on the barrier phase on which the slot's bytes completed. The same for cp.async: "     \
    "its bytes are visible after a cp.async.wait_group / wait_all of the issuer that covers its "  \
    "group (to other threads through a later bar.sync), or through the barrier phase its "         \
    "issuer's cp.async.mbarrier.arrive lands in; a copy joins a group only at commit_group. "       \
    "Typical bug: an empty "                                                                       \
    "barrier count that leaves out the consumers of other CTAs of the multicast, a consumer "      \
    "that releases the stage before its last read, or a missing wait on the full barrier.")       \
  X(kProxyFenceMissing, "P2006", "proxy-fence-missing", kError,                                    \
    "generic-proxy access, then an async-proxy access, without fence.proxy.async",                 \
    "PTX ISA (memory consistency model, the async proxy: accessing the same memory location "     \
    "across multiple proxies needs a cross-proxy fence; fence.proxy.async synchronizes the "       \
    "generic and the async proxy). Reported when (1) a TMA or bulk store reads a slot that a "     \
    "`write` wrote and no fence.proxy.async of the writer after the write happens before the "     \
    "store, unless every byte of it the store reads was rewritten by a later write ordered after " \
    "it (per-location coherence: the store cannot read it); (2) a generic access whose proxy the " \
    "schedule states (`write`, `use.generic`: ld.shared, ldmatrix) happens before a TMA / bulk / " \
    "st.async write of the same bytes, or a `write` before a `use.async` (wgmma operand) read, "  \
    "and no fence.proxy.async lies on the happens-before path between them (by the generic "      \
    "accessor after the access, or by the copy's issuer before the issue: DeepEP #621, fixed "    \
    "by PR #642); (3) a copy's complete_tx acts on a barrier whose mbarrier.init (a generic "     \
    "write) is followed by neither fence.proxy.async nor fence.mbarrier_init of the initialising " \
    "thread happening before the copy's issue (the CUDA guide's TMA example). Typical bugs: "     \
    "tma_store_fence() missing in an epilogue; ld.shared consumers releasing a stage to the next " \
    "TMA load with no fence (DeepEP #621); no fence after the barrier inits (FlashKDA #24).")      \
  X(kRemoteBeforeInit, "P2007", "remote-before-init", kError,                                      \
    "remote mbarrier use before its init was fenced and cluster-synchronised",                     \
    "PTX ISA (fence.mbarrier_init, barrier.cluster): an mbarrier.init is made visible to other "   \
    "CTAs of the cluster only by fence.mbarrier_init.release.cluster in the initialising thread "  \
    "followed by a cluster barrier (arrive, .release or .relaxed: the fence releases the inits "   \
    "itself; then wait.acquire) before the remote use. A "                                         \
    "remote arrive, or a multicast copy whose complete_tx lands on another CTA's barrier, that is " \
    "not ordered after that fence acts on a barrier the peer may not have initialised. Typical "   \
    "bug: cluster_sync() missing after init_barriers, or fence_barrier_init() missing.")           \
  X(kExitWhileAwaited, "P2008", "exit-while-awaited", kError,                                      \
    "an agent exited while another waits for a signal it used to give",                            \
    "A property of the schedule, not a PTX rule (the culprit of a P2001 hang): an agent exited "   \
    "although another agent is blocked on a barrier that the exited agent "                        \
    "signalled in earlier phases (arrive, expect_tx or a copy completing there): the phase it "    \
    "would have completed never completes. This names the culprit of a P2001 deadlock. Typical "   \
    "bug: a producer loop that runs fewer iterations than the consumer loop, or a role that "      \
    "returns early on a predicate (e.g. the last tile) that its peers do not share.")             \
  /* Appended, not placed with its family: the enum value is recorded in trace files. */         \
  X(kBulkDestinationReadEarly, "A1103", "bulk-destination-read-early", kError,                     \
    "global destination of a bulk or TMA store read before the store completed",                   \
    "PTX ISA (Completion mechanisms for asynchronous copy operations): reading the destination "   \
    "of an asynchronous copy before the operation completes is undefined behaviour. For a bulk "   \
    "or TMA store, cp.async.bulk.wait_group.read only says the source was read; the global "       \
    "write may still be in flight until cp.async.bulk.wait_group (without .read) returns. "        \
    "Reported when a `readback` of a store's global destination runs while that store's write "    \
    "has not completed. Typical bug: a kernel that reads back (or lets a dependent kernel read) "  \
    "a tile after tma_store_wait<0> with .read semantics only.")                               \
  X(kDataRace, "P2009", "data-race", kError,                                                       \
    "two shared-memory accesses of overlapping bytes unordered by happens-before",                 \
    "PTX ISA (Memory Consistency Model: data races, causality order, proxies; mbarrier: "          \
    "arrive-on .release, test_wait/try_wait .acquire; cp.async.bulk.wait_group[.read]; "           \
    "cp.async.wait_group; barrier.cluster; bar.sync). Every shared-memory access of every agent "   \
    "and asynchronous unit is one access with its bytes and proxy: use (generic read), write "     \
    "(generic write), a TMA/bulk/cp.async/st.async write into each destination CTA, a TMA/bulk "   \
    "store's read of its source. Happens-before: program order; a copy's access after its issue; " \
    "every signal and complete_tx of an mbarrier phase before a wait that observes that phase; "   \
    "bar.sync and barrier.cluster; a store's source read before the issuer's bulk wait_group "     \
    "(.read or not) that covers it; a cp.async write before the issuer's wait_group that covers "  \
    "it. Two accesses of overlapping bytes, at least one a write, unordered by it are a data "     \
    "race, the issuer's own copy and async against async included. Typical bugs: a TMA load into " \
    "a stage that the issuer reads without waiting, a TMA load overwriting a stage that a TMA "    \
    "store still reads (no bulk wait_group.read), a parity wait that passes at once on a fresh "   \
    "barrier.")                                                                                   \
  X(kAccessAfterExit, "P2010", "access-after-exit", kError,                                        \
    "a peer may access a CTA's shared memory or mbarrier after that CTA exited",                   \
    "PTX ISA (State Spaces: .shared::cluster; Parallel Synchronization and Communication: "        \
    "barrier.cluster): a CTA's shared memory, and the mbarriers in it, exist only while the CTA "  \
    "runs; another CTA of the cluster reaches them through the shared::cluster window only while " \
    "the owner has not exited, which kernels guarantee with a cluster barrier "                    \
    "(barrier.cluster.arrive / wait) that every CTA passes before it exits. Reported when a "      \
    "remote arrive, expect_tx or complete_tx, a DSMEM read or write, a multicast copy's "          \
    "delivery or an st.async into CTA N is not ordered before the exit of any agent of CTA N "     \
    "(observed on a barrier phase it counts in, or happens-before with PTX's semantics and "       \
    "scopes: a .relaxed cluster.arrive releases nothing, a .cta-scoped release orders nothing "    \
    "across CTAs), so that on some execution every agent of CTA N has exited when it lands: "     \
    "on the GPU a fault "                                                                          \
    "(CUDA_EXCEPTION_17, cluster target block not present) or silent corruption of a CTA that "   \
    "reuses the SM. Typical bug: consumers release the last stage in every CTA of the cluster "    \
    "(or a producer multicasts into peers) and the kernel ends without cluster_sync() (the class " \
    "of sglang #32907 and triton TLX #1105).")                                                    \
  X(kExitWithCopyInFlight, "P2011", "exit-with-copy-in-flight", kError,                            \
    "a CTA may exit while a copy into its own shared memory is still in flight",                   \
    "PTX ISA (Completion mechanisms for asynchronous copy operations; cp.async.bulk.tensor, "      \
    "cp.async.bulk: mbarrier-based completion): a TMA or bulk load writes the destination CTA's "   \
    "shared memory and performs complete_tx on its mbarrier until its bytes have landed; only a "  \
    "wait that observes the phase those bytes complete says they have. Reported when a load "      \
    "issued by an agent of CTA N into CTA N (or the deferred arrive-on of its "                     \
    "cp.async.mbarrier.arrive) is not ordered before the exit of any agent of CTA N "              \
    "(no agent of the CTA waits on a phase the bytes count in before exiting), so that the CTA "   \
    "can exit, and its shared memory be given to the next CTA, while the bytes are still on "      \
    "their way. Typical bug: a prefetch into a stage that no consumer waits for (a loop that "     \
    "issues one load more than it consumes), or a producer that exits right after its last "      \
    "issue in a kernel whose consumers skip the last wait.") \
  X(kDsmemExitedCta, "S1103", "dsmem-exited-cta", kError,                                          \
    "distributed shared memory access of a CTA that has exited",                                   \
    "PTX ISA (state spaces, shared::cluster; CUDA Programming Guide, Distributed Shared Memory): "  \
    "a CTA's shared memory may be accessed "                                                       \
    "by the other CTAs of its cluster (mapa + ld/st.shared::cluster) only while that CTA is "      \
    "running; every CTA must stay until its peers' accesses are done, which kernels ensure with "  \
    "a cluster barrier before exiting. Reported when a `use` or `write ... @cta(r)` runs after "   \
    "every agent of CTA r exited. Typical bug: the cluster.sync at the end of a DSMEM reduction "  \
    "left out, so the CTA that finishes first frees the memory its peers still read.")            \
  X(kReleaseScopeNarrow, "P2013", "release-scope-narrow", kError,                                  \
    "accesses across CTAs ordered only by a .cta-scoped release or acquire",                       \
    "PTX ISA (Memory Consistency Model: scope, morally strong operations): a release and an "      \
    "acquire synchronise only when each one's scope includes the other's thread; .cta (the "       \
    "default of mbarrier.arrive and try_wait/test_wait) covers the own CTA only. A write before "  \
    "a .cta-scoped arrive that an agent of another CTA observes (or a .cta-scoped wait that "      \
    "observes an arrive of another CTA) is not ordered before what follows the wait: the pair "    \
    "races. Reported, instead of P2009, when the pair would be ordered had those arrives and "     \
    "waits been .cluster-scoped. Reads before such an arrive stay ordered (a read has taken its "  \
    "value when the arrive issues; what silicon shows, see docs/language.md). Typical bug: "       \
    "mbarrier.arrive.shared::cluster on a peer's barrier without .release.cluster after writing "  \
    "data the peer reads (CUTLASS #3643). A pair whose write a TMA/bulk store read out, the "      \
    "read's completion (bulk wait_group .read) before the release, is a warning (an error under "  \
    "--strict): only the scope rule leaves it unordered (docs/levels.md, L1).")                   \
  X(kPdlWaitMissing, "P2020", "pdl-wait-missing", kError,                                          \
    "global memory shared by a primary and a dependent grid accessed without griddepcontrol.wait", \
    "PTX ISA (griddepcontrol) and CUDA Programming Guide (Programmatic Dependent Launch): with "    \
    "cudaLaunchAttributeProgrammaticStreamSerialization the dependent grid may start before the "  \
    "primary grid completes. griddepcontrol.wait (cudaGridDependencySynchronize) returns only "    \
    "when every prerequisite grid has completed and its memory operations are performed and "      \
    "visible to the waiting grid; griddepcontrol.launch_dependents "                               \
    "(cudaTriggerProgrammaticLaunchCompletion) only lets the dependent be scheduled early and "     \
    "orders no memory access. Reported when an access of a `global` buffer by the dependent grid " \
    "and an overlapping access by the primary grid, at least one a write, are not ordered: the "   \
    "dependent's access does not happen after a griddepcontrol.wait of its own cluster (program "  \
    "order or a barrier after an agent's wait). Typical bug: the consumer kernel reads the "       \
    "producer kernel's output right after launch_dependents was seen, or the wait is left out "    \
    "because the kernels ran in order without the launch attribute (marin #8870's class).")      \
  X(kDsmemBeforeStart, "P2030", "dsmem-before-peer-start", kError,                                 \
    "distributed shared memory access of a CTA that may not have started",                         \
    "PTX ISA (state spaces, shared::cluster; barrier.cluster) and CUDA Programming Guide "         \
    "(Distributed Shared Memory): a CTA's shared memory is owned by the CTA while it executes; "   \
    "the CTAs of a cluster are co-scheduled but not started together, so a peer's shared memory " \
    "may be accessed (mapa + ld/st/atom/red.shared::cluster) only once the peer is known to have " \
    "started, which kernels ensure with a cluster barrier (cluster.sync(), of any semantics: "     \
    "barrier.cluster.wait returns only after every thread of the cluster arrived) before the "     \
    "first access, as the guide's DSMEM histogram does. Reported when a `use`, `write`, `atom` "   \
    "or `red` @cta(r) is not preceded, through any synchronisation (happens-before at any "        \
    "semantics and scope), by an operation of an agent of CTA r. (Remote arrives and copies "      \
    "completing on CTA r's barriers are P2007's: that rule orders them after the peer's own "      \
    "init.) Typical bug: the first cluster.sync of a DSMEM reduction or histogram left out "        \
    "because the peers' memory needed no zero-fill.")                                                \
  X(kTensormapNotFenced, "P2031", "tensormap-not-fenced", kError,                                  \
    "a TMA follows an update of its tensor map without the tensormap proxy fences",                \
    "PTX ISA (membar/fence: fence.proxy.tensormap::generic; tensormap.replace): a TMA reads its "    \
    "tensor map through the tensormap proxy, an update (tensormap.replace, or generic stores of "  \
    "a descriptor) writes it through the generic proxy; the TMA sees the update only after "       \
    "fence.proxy.tensormap::generic.release by the updater, happens-before, and "                  \
    "fence.proxy.tensormap::generic.acquire of the map by the TMA's issuer. Reported when a "       \
    "`tma.load`/`tma.store` of map TM is ordered after a `tensormap.replace TM` but not through "  \
    "such a release and acquire. Typical bug: the descriptor copied to global memory and used "    \
    "right away (DeepGEMM's grouped GEMM uses tensor_map_release_gpu / tensor_map_acquire_gpu).")  \
  X(kTensormapModifiedInFlight, "P2032", "tensormap-modified-in-flight", kError,                   \
    "a tensor map updated while a TMA that uses it may be in flight",                              \
    "PTX ISA (Completion mechanisms for asynchronous copy operations): modifying the tensor "     \
    "descriptor of an asynchronous copy before the operation completes is undefined. Reported "    \
    "when a `tensormap.replace TM` is not ordered after a TMA of TM is done with it (a wait on a " \
    "phase its bytes complete in, or its issuer's cp.async.bulk.wait_group), nor the TMA after "  \
    "the update. Typical bug: a persistent kernel that edits the descriptor for the next group "   \
    "while the last loads of the previous group are still in flight (DeepGEMM PR #343, fixed by "  \
    "tma_desc_commit_group + tma_desc_wait_group before the global descriptor is overwritten).")  \
  X(kAssertionFailed, "P2033", "assertion-failed", kError, "a user assertion does not hold",      \
    "A property of the schedule, not a PTX rule: one its author states. An `assert E` statement "    \
    "whose expression is 0 when the agent reaches it, or a `forall E` property that is 0 in the "  \
    "final state of a complete run (for some CTA). The expressions read the model's state "        \
    "(phase, pending, tx of a barrier; landed of a buffer slot; docs/language.md, Assertions). "    \
    "The counterexample is the run that reaches it. Typical bug: the synchronisation meant to "    \
    "establish the property (a named-barrier turn, a wait, a release) is missing or misplaced.")   \
  X(kExistsUnsatisfied, "P2034", "exists-unsatisfied", kError,                                     \
    "no complete run ends in a state where an `exists` property holds",                            \
    "A property of the schedule, not a PTX rule: one its author states. An `exists E` property "   \
    "(herd7's meaning) holds when some complete run ends in a state where E holds for every CTA. " \
    "`check` reports it when its run does not end so; `explore` when no complete run of the "      \
    "whole search does (a search stopped by a budget says so instead). There is no single "        \
    "counterexample: every explored end state is one. Typical bug: the outcome the author "       \
    "expects needs an interleaving the synchronisation rules out, or the property is misstated.")

enum class Code : uint16_t {
#define PARITY_CODE_ENUM(name, id, slug, severity, title, explanation) name,
  PARITY_VIOLATION_CODES(PARITY_CODE_ENUM)
#undef PARITY_CODE_ENUM
};

std::string_view CodeId(Code code);           // "M1001"
std::string_view CodeSlug(Code code);         // "mbarrier-uninitialized"
Severity CodeSeverity(Code code);
std::string_view CodeTitle(Code code);        // one line
std::string_view CodeExplanation(Code code);  // one paragraph
// Every code, in table order.
std::span<const Code> AllCodes();
// Lookup by stable id ("M1001") or slug; nullopt when unknown.
std::optional<Code> CodeFromId(std::string_view id);
std::optional<Code> CodeFromSlug(std::string_view slug);

// One occurrence. `value` and `limit` are the two numbers that make the message concrete; what
// they mean is fixed per code (see Describe() in codes.cc), e.g. for M1005 value = arrive count,
// limit = pending count. Trivially copyable, no allocation.
struct Violation {
  Code code;
  int64_t value = 0;
  int64_t limit = 0;

  bool operator==(const Violation&) const = default;
};

// A clear one-line message: "M1005 mbarrier-over-arrival: arrive of count 3 on a barrier with 1
// pending arrival".
std::string Describe(const Violation& v);

}  // namespace parity::model

#endif  // PARITY_SIM_MODEL_CODES_H_
