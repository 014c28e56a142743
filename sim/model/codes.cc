#include "sim/model/codes.h"

#include <array>
#include <cstddef>
#include <string>

namespace parity::model {
namespace {

struct CodeInfo {
  std::string_view id;
  std::string_view slug;
  Severity severity;
  std::string_view title;
  std::string_view explanation;
};

constexpr std::array kCodeInfo = {
#define PARITY_CODE_INFO(name, id, slug, severity, title, explanation) \
  CodeInfo{id, slug, Severity::severity, title, explanation},
    PARITY_VIOLATION_CODES(PARITY_CODE_INFO)
#undef PARITY_CODE_INFO
};

constexpr std::array kAllCodes = {
#define PARITY_CODE_VALUE(name, id, slug, severity, title, explanation) Code::name,
    PARITY_VIOLATION_CODES(PARITY_CODE_VALUE)
#undef PARITY_CODE_VALUE
};

// The enum is dense from 0 in table order, so the table index is the enum value.
static_assert(kCodeInfo.size() == kAllCodes.size());

constexpr bool IdsAndSlugsUnique() {
  for (size_t i = 0; i < kCodeInfo.size(); ++i) {
    for (size_t j = i + 1; j < kCodeInfo.size(); ++j) {
      if (kCodeInfo[i].id == kCodeInfo[j].id || kCodeInfo[i].slug == kCodeInfo[j].slug) {
        return false;
      }
    }
  }
  return true;
}
static_assert(IdsAndSlugsUnique(), "violation code ids and slugs must be unique");

// A value outside the enum (a corrupt or foreign trace's violation event) reads as "unknown"
// rather than past the table.
constexpr CodeInfo kUnknownCode{"?", "unknown-code", Severity::kError, "unknown violation code",
                                "This value is not a violation code of this version of Parity "
                                "(the trace may come from another version, or be damaged)."};

const CodeInfo& Info(Code code) {
  const size_t i = static_cast<size_t>(code);
  return i < kCodeInfo.size() ? kCodeInfo[i] : kUnknownCode;
}

std::string N(int64_t v) { return std::to_string(v); }

// "1 pending arrival" / "3 pending arrivals".
std::string Plural(int64_t n, std::string_view one, std::string_view many) {
  return N(n) + " " + std::string(n == 1 ? one : many);
}

constexpr int64_t kMax20 = (int64_t{1} << 20) - 1;

// The part of the message after "<id> <slug>: ".
std::string Detail(const Violation& v) {
  switch (v.code) {
    case Code::kMbarrierUninitialized:
      return "operation on an uninitialised mbarrier (only mbarrier.init is allowed there)";
    case Code::kMbarrierInvalidated:
      return "operation on an invalidated mbarrier (only mbarrier.init is allowed there)";
    case Code::kMbarrierInitLive:
      return "mbarrier.init on a live mbarrier (in phase " + N(v.value) +
             "); mbarrier.inval must come first";
    case Code::kMbarrierExpectedCountRange:
      return "mbarrier.init count " + N(v.value) + " is outside 1.." + N(kMax20);
    case Code::kMbarrierOverArrival:
      return "arrive of count " + N(v.value) + " on a barrier with " +
             Plural(v.limit, "pending arrival", "pending arrivals");
    case Code::kMbarrierTxRange:
      return "tx-count would become " + N(v.value) + ", outside -" + N(kMax20) + ".." + N(kMax20);
    case Code::kMbarrierNoCompleteCompletes:
      return "arrive.noComplete of count " + N(v.value) + " on a barrier with " +
             Plural(v.limit, "pending arrival", "pending arrivals") +
             " and tx-count 0 would complete the phase";
    case Code::kMbarrierWaitStalePhase:
      return "wait on phase " + N(v.value) + " while the barrier is in phase " + N(v.limit) +
             "; only the current phase or the one before it may be waited on";
    case Code::kMbarrierArriveBeforeObserved:
      return "this update completes phase " + N(v.value) + " while no wait has observed the "
             "completion of phase " + N(v.value - 1) + " (phase " + N(v.value - 1) +
             " is lost: a parity wait for it now names phase " + N(v.value + 1) + ")";
    case Code::kMbarrierArriveCountRange:
      return "arrive count " + N(v.value) + " is outside 1.." + N(kMax20);
    case Code::kMbarrierDropBelowOne:
      return "arrive_drop of count " + N(v.value) + " on a barrier expecting " +
             Plural(v.limit, "arrival", "arrivals") + " per phase leaves the expected count at " +
             N(v.limit - v.value) + " (must stay >= 1)";
    case Code::kMbarrierPendingOverflow:
      return "pending count would become " + N(v.value) + ", above " + N(kMax20);
    case Code::kMbarrierPendingCountToken:
      return "mbarrier.pending_count on a state that no arrive.noComplete or "
             "arrive_drop.noComplete returned";
    case Code::kCpAsyncWaitUncommitted:
      return "cp.async.wait_group " + N(v.value) + " does not cover " +
             Plural(v.limit, "uncommitted cp.async", "uncommitted cp.async copies");
    case Code::kCpAsyncEmptyCommit:
      return "cp.async.commit_group creates empty group " + N(v.value) +
             " (no cp.async since the last commit)";
    case Code::kAsyncExitInFlight:
      return "thread exits with " + Plural(v.value, "asynchronous copy", "asynchronous copies") +
             " in flight";
    case Code::kBulkExitReadsPending:
      return "thread exits before " +
             Plural(v.value, "bulk store has", "bulk stores have") +
             " read shared memory (no cp.async.bulk.wait_group.read 0; safe on H100, not "
             "promised by the ISA)";
    case Code::kBulkWaitUncommitted:
      return "cp.async.bulk.wait_group " + N(v.value) + " does not cover " +
             Plural(v.limit, "uncommitted bulk operation", "uncommitted bulk operations");
    case Code::kBulkDestinationReadEarly:
      return "readback of a store destination while " +
             Plural(v.value, "store write is", "store writes are") + " still in flight";
    case Code::kBulkEmptyCommit:
      return "cp.async.bulk.commit_group creates empty bulk group " + N(v.value) +
             " (no bulk operation since the last commit)";
    case Code::kNamedBarrierId:
      return "named barrier id " + N(v.value) + " is outside 0..15";
    case Code::kNamedBarrierCountAlign:
      return "named barrier thread count " + N(v.value) +
             " is not a positive multiple of the warp size 32";
    case Code::kNamedBarrierCountMismatch:
      return "named barrier used with thread count " + N(v.value) +
             " while the current instance counts " + N(v.limit) + " threads";
    case Code::kNamedBarrierOverArrival:
      return Plural(v.value, "thread", "threads") + " arrived at a named barrier counting " +
             N(v.limit) + " threads";
    case Code::kClusterArriveTwice:
      return "barrier.cluster.arrive by participant " + N(v.value) +
             " again before its barrier.cluster.wait";
    case Code::kClusterWaitWithoutArrive:
      return "barrier.cluster.wait by participant " + N(v.value) +
             " without a preceding barrier.cluster.arrive";
    case Code::kDeadlock:
      return Plural(v.value, "agent", "agents") + " blocked and no event can unblock them";
    case Code::kEarlyPhaseCompletion:
      return Plural(v.value, "byte", "bytes") + " landed " + N(v.limit) +
             " phase(s) after the phase that was current at their issue";
    case Code::kTxMismatch:
      return N(v.value) + " bytes expected, " + N(v.limit) + " delivered";
    case Code::kMulticastDisagreement:
      return N(v.value) + " bytes expected over the run, " + N(v.limit) + " delivered";
    case Code::kSharedMemoryRace:
      return "unordered accesses of a buffer slot";
    case Code::kProxyFenceMissing:
      return "generic-proxy access not fenced before the async-proxy access";
    case Code::kRemoteBeforeInit:
      return "remote use of a barrier not ordered after its fenced init";
    case Code::kDataRace:
      return "unordered accesses of overlapping bytes";
    case Code::kAccessAfterExit:
      return "an access to CTA " + N(v.value) + " is not ordered before its exit";
    case Code::kExitWithCopyInFlight:
      return "CTA " + N(v.value) + " may exit with a copy into its shared memory in flight";
    case Code::kExitWhileAwaited:
      return Plural(v.value, "agent", "agents") + " blocked on a signal of an exited agent";
    case Code::kDsmemExitedCta:
      return "access of the shared memory of exited CTA " + N(v.value);
    case Code::kReleaseScopeNarrow:
      return "release or acquire too narrow (.cta) for accesses across CTAs";
    case Code::kPdlWaitMissing:
      return "a dependent grid's access of the primary grid's global memory is not after "
             "griddepcontrol.wait";
    case Code::kDsmemBeforeStart:
      return "access of the shared memory of CTA " + N(v.value) + ", not known to have started";
    case Code::kTensormapNotFenced:
      return "a TMA reads an updated tensor map without the tensormap proxy fences";
    case Code::kTensormapModifiedInFlight:
      return "a tensor map is updated while a TMA that reads it may be in flight";
    // value: the assertion's index in ir::Program::assertions; limit: the global CTA it was
    // evaluated for (the reports add its text and message, which only the program holds).
    case Code::kAssertionFailed:
      return "assertion " + N(v.value) + " does not hold (CTA " + N(v.limit) + ")";
    case Code::kExistsUnsatisfied:
      return "exists property " + N(v.value) + " holds in no complete run explored";
  }
  return "unknown violation";
}

}  // namespace

std::string_view CodeId(Code code) { return Info(code).id; }
std::string_view CodeSlug(Code code) { return Info(code).slug; }
Severity CodeSeverity(Code code) { return Info(code).severity; }
std::string_view CodeTitle(Code code) { return Info(code).title; }
std::string_view CodeExplanation(Code code) { return Info(code).explanation; }

std::span<const Code> AllCodes() { return kAllCodes; }

std::optional<Code> CodeFromId(std::string_view id) {
  for (Code c : kAllCodes) {
    if (CodeId(c) == id) return c;
  }
  return std::nullopt;
}

std::optional<Code> CodeFromSlug(std::string_view slug) {
  for (Code c : kAllCodes) {
    if (CodeSlug(c) == slug) return c;
  }
  return std::nullopt;
}

std::string Describe(const Violation& v) {
  std::string out(CodeId(v.code));
  out += ' ';
  out += CodeSlug(v.code);
  out += ": ";
  out += Detail(v);
  return out;
}

}  // namespace parity::model
