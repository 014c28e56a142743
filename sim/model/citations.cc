#include "sim/model/citations.h"

namespace parity::model {
namespace {

// Sections of the PTX ISA the table quotes.
constexpr std::string_view kContents = "9.7.13.15.2 Contents of the mbarrier object";
constexpr std::string_view kPhaseCompletion = "9.7.13.15.6 Phase Completion of the mbarrier object";
constexpr std::string_view kArriveOn = "9.7.13.15.7 Arrive-on operation on mbarrier object";
constexpr std::string_view kInit = "mbarrier.init";
constexpr std::string_view kInval = "9.7.13.15.10 mbarrier.inval";
constexpr std::string_view kArrive = "mbarrier.arrive";
constexpr std::string_view kArriveDrop = "mbarrier.arrive_drop";
constexpr std::string_view kCpAsyncArrive = "9.7.13.15.15 cp.async.mbarrier.arrive";
constexpr std::string_view kTestWait = "9.7.13.15.16 mbarrier.test_wait / mbarrier.try_wait";
constexpr std::string_view kPendingCount = "9.7.13.15.17 mbarrier.pending_count";
constexpr std::string_view kCompletion =
    "9.7.9.25.1 Completion Mechanisms for Asynchronous Copy Operations";
constexpr std::string_view kMbarrierMechanism = "9.7.9.25.1.2 Mbarrier-based mechanism";
constexpr std::string_view kCpAsyncWait = "9.7.9.25.3.3 cp.async.wait_group / cp.async.wait_all";
constexpr std::string_view kBulkCommit = "cp.async.bulk.commit_group";
constexpr std::string_view kBulkWait = "9.7.9.27.2.2 cp.async.bulk.wait_group";
constexpr std::string_view kBulk = "cp.async.bulk";
constexpr std::string_view kBar = "bar, barrier";
constexpr std::string_view kBarrierCluster = "barrier.cluster";
constexpr std::string_view kFence =
    "Parallel Synchronization and Communication Instructions: membar / fence";
constexpr std::string_view kShared = "5.1.7 Shared State Space";
constexpr std::string_view kMorallyStrong = "8.7 Morally strong operations";
constexpr std::string_view kReleaseAcquire = "8.8 Release and Acquire Patterns";
constexpr std::string_view kTcgen05Smem = "9.7.16.6.5 Shared Memory Accesses";

constexpr std::string_view kQuoteCompletion =
    "An mbarrier object completes the current phase when all of the following conditions are "
    "met: The count of the pending arrivals has reached zero. The tx-count has reached zero.";
constexpr std::string_view kQuoteUninit =
    "Performing any mbarrier operation except mbarrier.init on a memory location that does not "
    "contain a valid mbarrier object, results in undefined behaviour.";
constexpr std::string_view kQuoteAsyncUb =
    "Once an asynchronous copy operation is initiated, modifying the source memory location or "
    "tensor descriptor or reading from the destination memory location before the asynchronous "
    "operation completes, exhibits undefined behavior.";
constexpr std::string_view kQuoteOwned =
    "The shared (.shared) state space is a memory that is owned by an executing CTA and is "
    "accessible to the threads of all the CTAs within a cluster.";
constexpr std::string_view kQuotePhaseTracked =
    "When the current phase of the mbarrier object is complete, it implies that all asynchronous "
    "operations tracked by this phase are complete, and all threads participating in that "
    "mbarrier object can access the result of the asynchronous operations.";

const Citation kM1001[] = {{kInval, kQuoteUninit, ""}};
const Citation kM1002[] = {
    {kInval, "An mbarrier object must be invalidated before using its memory location for any "
             "other purpose.", ""},
    {kInval, kQuoteUninit, ""}};
const Citation kM1003[] = {
    {kInit, "The behavior of performing an mbarrier.init operation on a memory location "
            "containing a valid mbarrier object is undefined; invalidate the mbarrier object "
            "using mbarrier.inval first, before repurposing the memory location for any other "
            "purpose, including another mbarrier object.", ""}};
const Citation kM1004[] = {
    {kInit, "The valid range of values for the operand count is [1, …, 2^20 - 1].", ""}};
const Citation kM1005[] = {
    {kContents, "Pending arrival count | 0 | 2^20 - 1", ""}, {"", "", "arrive_over_count"}};
const Citation kM1006[] = {
    {kContents, "tx-count | -(2^20 - 1) | 2^20 - 1", ""}, {"", "", "tx_range_overflow"}};
const Citation kM1007[] = {
    {kArrive, "A mbarrier.arrive operation with .noComplete qualifier must not cause the mbarrier "
              "to complete its current phase, otherwise the behavior is undefined.", ""},
    {"", "", "nocomplete_would_complete"}};
const Citation kM1008[] = {
    {kTestWait, "The test_wait and try_wait operations test for the completion of the current or "
                "the immediately preceding phase of an mbarrier object at the location specified "
                "by the operand addr.", ""},
    {"", "", "test_wait_two_phases_old"}};
const Citation kM1009[] = {{"", "", "arrive_next_phase_unobserved"}};
const Citation kM1010[] = {
    {kArrive, "The value of the operand count must be in the range as specified in Contents of "
              "the mbarrier object.", ""}};
const Citation kM1011[] = {
    {kArriveDrop, "If the decrement causes the expected arrivals count to be zero, the behavior "
                  "is undefined.", ""},
    {"", "", "arrive_drop_to_zero"}};
const Citation kM1012[] = {
    {kCpAsyncArrive, "When .noinc modifier is not specified, the pending count of the mbarrier "
                     "object is incremented by 1 prior to the asynchronous arrive-on operation.",
     ""},
    {"", "", "cpasync_noinc_overbudget"}};
const Citation kM1013[] = {
    {kPendingCount, "The state operand is a 64-bit register that must be the result of a prior "
                    "mbarrier.arrive.noComplete or mbarrier.arrive_drop.noComplete instruction. "
                    "Otherwise, the behavior is undefined.", ""},
    {"", "", "pending_count_plain_token"}};
const Citation kA1001[] = {
    {kCpAsyncWait, "cp.async.wait_group instruction will cause executing thread to wait till only "
                   "N or fewer of the most recent cp.async-groups are pending and all the prior "
                   "cp.async-groups committed by the executing threads are complete.", ""}};
const Citation kA1002[] = {
    {kCpAsyncWait, "An empty cp.async-group is considered to be trivially complete.", ""}};
const Citation kA1003[] = {
    {kCompletion, "A thread must explicitly wait for the completion of an asynchronous copy "
                  "operation in order to access the result of the operation.", ""},
    {kCompletion, kQuoteAsyncUb, ""}};
const Citation kA1004[] = {
    {kBulkWait, "The optional .read modifier indicates that the waiting has to be done until all "
                "the bulk async operations in the specified bulk async-group have completed: 1. "
                "reading from the tensormap 2. the reading from their source locations.",
     ""}};
const Citation kA1101[] = {
    {kBulkWait, "cp.async.bulk.wait_group instruction will cause the executing thread to wait "
                "until only N or fewer of the most recent bulk async-groups are pending and all "
                "the prior bulk async-groups committed by the executing threads are complete.",
     ""}};
const Citation kA1102[] = {
    {kBulkCommit, "cp.async.bulk.commit_group instruction creates a new per-thread bulk "
                  "async-group", ""}};
const Citation kA1103[] = {
    {kBulkWait, "The optional .read modifier indicates that the waiting has to be done until all "
                "the bulk async operations in the specified bulk async-group have completed: 1. "
                "reading from the tensormap 2. the reading from their source locations.", ""},
    {"", "", "bulk_store_readback_after_wait_read"}};
const Citation kS1001[] = {{kBar, "Each CTA instance has sixteen barriers numbered 0..15.", ""}};
const Citation kS1002[] = {
    {kBar, "When specifying a thread count, the value must be a multiple of the warp size.", ""}};
const Citation kS1003[] = {
    {kBar, "Different warps may execute different forms of the barrier{.cta} instruction using "
           "the same barrier name and thread count.", ""}};
const Citation kS1004[] = {
    {kBar, "Care must be taken to keep a warp from executing more barrier{.cta} instructions "
           "than intended (barrier{.cta}.arrive followed by any other barrier{.cta} instruction "
           "to the same barrier) prior to the reset of the barrier.", ""}};
const Citation kS1101[] = {
    {kBarrierCluster, "Each thread must arrive at the barrier only once before the barrier "
                      "completes.", ""}};
const Citation kS1102[] = {
    {kBarrierCluster, "barrier.cluster.wait instruction causes the executing thread to wait for "
                      "all non-exited threads of the cluster to perform barrier.cluster.arrive.",
     ""}};
const Citation kS1103[] = {{kShared, kQuoteOwned, ""}};
const Citation kP2001[] = {{kPhaseCompletion, kQuoteCompletion, ""}};
const Citation kP2002[] = {{kPhaseCompletion, kQuoteCompletion, ""}};
const Citation kP2003[] = {
    {kPhaseCompletion, kQuoteCompletion, ""}, {"", "", "nocomplete_with_tx_outstanding"}};
const Citation kP2004[] = {
    {kBulk, "The source data is multicast to the same CTA-relative offset as dstMem in the shared "
            "memory of each destination CTA. The mbarrier signal is also multicast to the same "
            "CTA-relative offset as mbar in the shared memory of the destination CTA.", ""},
    {"", "", "mc2_tma_mask3"}};
const Citation kP2005[] = {{kCompletion, kQuoteAsyncUb, ""},
                           {kMbarrierMechanism, kQuotePhaseTracked, ""}};
const Citation kP2006[] = {
    {kTcgen05Smem, "Accessing the same memory location across miltiple proxies needs a "
                   "cross-proxy fence. For the async proxy, fence.proxy.async should be used to "
                   "synchronize memory between generic proxy and the async proxy.", ""}};
const Citation kP2007[] = {
    {kFence, "When .op_restrict is .mbarrier_init, the synchronizing effect of the fence only "
             "applies to the prior mbarrier.init operations executed by the same thread on "
             "mbarrier objects in .shared::cta state space.", ""},
    {kReleaseAcquire, "The release pattern makes prior operations from the current thread "
                      "visible to some operations from other threads.", ""},
    {kBarrierCluster, "barrier.cluster.wait instruction causes the executing thread to wait for "
                      "all non-exited threads of the cluster to perform barrier.cluster.arrive.",
     ""}};
const Citation kP2008[] = {
    {kPhaseCompletion, kQuoteCompletion, ""},
    {kArriveOn, "As a result of this, the pending arrival count is decremented by count.", ""}};
const Citation kP2009[] = {
    {kCompletion, kQuoteAsyncUb, ""},
    {kMorallyStrong, "each operation is strong and specifies a scope that includes the thread "
                     "executing the other operation.", ""}};
const Citation kP2010[] = {
    {kShared, kQuoteOwned, ""},
    {kBarrierCluster, "The optional .relaxed qualifier on barrier.cluster.arrive specifies that "
                      "there are no memory ordering and visibility guarantees provided for the "
                      "memory accesses performed prior to barrier.cluster.arrive.", ""}};
const Citation kP2011[] = {{kMbarrierMechanism, kQuotePhaseTracked, ""},
                           {kShared, kQuoteOwned, ""}};
const Citation kP2013[] = {
    {kMorallyStrong, "The operations are related in program order (i.e, they are both executed by "
                     "the same thread), or each operation is strong and specifies a scope that "
                     "includes the thread executing the other operation.", ""}};

// The section's number differs between PTX ISA versions; its title is the stable name.
constexpr std::string_view kGriddep =
    "Parallel Synchronization and Communication Instructions: griddepcontrol";
const Citation kP2020[] = {
    {kGriddep, ".wait modifier causes the executing thread to wait until all prerequisite grids "
               "in flight have completed and all the memory operations from the prerequisite "
               "grids are performed and made visible to the current grid.", ""},
    {kGriddep, "The dependent may launch before the completion of the current grid. There is no "
               "guarantee that the dependent will launch before the completion of the current "
               "grid.", ""}};

const Citation kP2030[] = {
    {kShared, kQuoteOwned, ""},
    {kBarrierCluster, "barrier.cluster.wait instruction causes the executing thread to wait for "
                      "all non-exited threads of the cluster to perform barrier.cluster.arrive.",
     ""}};

const Citation kP2031[] = {
    {kTcgen05Smem, "Accessing the same memory location across miltiple proxies needs a "
                   "cross-proxy fence.", ""}};
const Citation kP2032[] = {{kCompletion, kQuoteAsyncUb, ""}};
const Citation kUser[] = {{"", "", "", true}};

}  // namespace

std::span<const Citation> CodeCitations(Code code) {
  switch (code) {
    case Code::kMbarrierUninitialized: return kM1001;
    case Code::kMbarrierInvalidated: return kM1002;
    case Code::kMbarrierInitLive: return kM1003;
    case Code::kMbarrierExpectedCountRange: return kM1004;
    case Code::kMbarrierOverArrival: return kM1005;
    case Code::kMbarrierTxRange: return kM1006;
    case Code::kMbarrierNoCompleteCompletes: return kM1007;
    case Code::kMbarrierWaitStalePhase: return kM1008;
    case Code::kMbarrierArriveBeforeObserved: return kM1009;
    case Code::kMbarrierArriveCountRange: return kM1010;
    case Code::kMbarrierDropBelowOne: return kM1011;
    case Code::kMbarrierPendingOverflow: return kM1012;
    case Code::kMbarrierPendingCountToken: return kM1013;
    case Code::kCpAsyncWaitUncommitted: return kA1001;
    case Code::kCpAsyncEmptyCommit: return kA1002;
    case Code::kAsyncExitInFlight: return kA1003;
    case Code::kBulkExitReadsPending: return kA1004;
    case Code::kBulkWaitUncommitted: return kA1101;
    case Code::kBulkEmptyCommit: return kA1102;
    case Code::kBulkDestinationReadEarly: return kA1103;
    case Code::kNamedBarrierId: return kS1001;
    case Code::kNamedBarrierCountAlign: return kS1002;
    case Code::kNamedBarrierCountMismatch: return kS1003;
    case Code::kNamedBarrierOverArrival: return kS1004;
    case Code::kClusterArriveTwice: return kS1101;
    case Code::kClusterWaitWithoutArrive: return kS1102;
    case Code::kDsmemExitedCta: return kS1103;
    case Code::kDeadlock: return kP2001;
    case Code::kEarlyPhaseCompletion: return kP2002;
    case Code::kTxMismatch: return kP2003;
    case Code::kMulticastDisagreement: return kP2004;
    case Code::kSharedMemoryRace: return kP2005;
    case Code::kProxyFenceMissing: return kP2006;
    case Code::kRemoteBeforeInit: return kP2007;
    case Code::kExitWhileAwaited: return kP2008;
    case Code::kDataRace: return kP2009;
    case Code::kAccessAfterExit: return kP2010;
    case Code::kExitWithCopyInFlight: return kP2011;
    case Code::kReleaseScopeNarrow: return kP2013;
    case Code::kPdlWaitMissing: return kP2020;
    case Code::kDsmemBeforeStart: return kP2030;
    case Code::kTensormapNotFenced: return kP2031;
    case Code::kTensormapModifiedInFlight: return kP2032;
    case Code::kAssertionFailed:
    case Code::kExistsUnsatisfied: return kUser;
  }
  return {};
}

std::string CitationText(Code code) {
  std::string out;
  for (const Citation& c : CodeCitations(code)) {
    if (!out.empty()) out += "; ";
    if (c.user) {
      out += "user assertion";
    } else if (!c.litmus.empty()) {
      out += "litmus ";
      out += c.litmus;
    } else {
      out += "PTX ISA (";
      out += c.section;
      out += "): \"";
      out += c.quote;
      out += "\"";
    }
  }
  return out;
}

}  // namespace parity::model
