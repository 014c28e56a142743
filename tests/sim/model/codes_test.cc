#include "sim/model/codes.h"

#include <cctype>
#include <fstream>
#include <set>
#include <string>

#include "gtest/gtest.h"
#include "sim/model/citations.h"

namespace parity::model {
namespace {

TEST(CodesTest, IdsAreStableFormatAndUnique) {
  std::set<std::string> ids, slugs;
  for (Code c : AllCodes()) {
    const std::string id(CodeId(c));
    ASSERT_EQ(id.size(), 5u) << id;
    EXPECT_NE(std::string("MAPS").find(id[0]), std::string::npos) << id;
    for (int i = 1; i < 5; ++i) EXPECT_TRUE(std::isdigit(static_cast<unsigned char>(id[i]))) << id;
    EXPECT_TRUE(ids.insert(id).second) << "duplicate id " << id;
    EXPECT_TRUE(slugs.insert(std::string(CodeSlug(c))).second) << "duplicate slug";
    EXPECT_FALSE(CodeTitle(c).empty()) << id;
    // An explanation is a paragraph: it names the rule and the typical bug.
    EXPECT_GT(CodeExplanation(c).size(), 120u) << id;
    EXPECT_NE(CodeExplanation(c).find("Typical"), std::string_view::npos) << id;
  }
  EXPECT_EQ(ids.size(), AllCodes().size());
}

TEST(CodesTest, KnownIdsKeepTheirMeaning) {
  // These ids are a public contract (reports, golden files); renumbering breaks users.
  EXPECT_EQ(CodeId(Code::kMbarrierUninitialized), "M1001");
  EXPECT_EQ(CodeId(Code::kMbarrierInvalidated), "M1002");
  EXPECT_EQ(CodeId(Code::kMbarrierInitLive), "M1003");
  EXPECT_EQ(CodeId(Code::kMbarrierExpectedCountRange), "M1004");
  EXPECT_EQ(CodeId(Code::kMbarrierOverArrival), "M1005");
  EXPECT_EQ(CodeId(Code::kMbarrierTxRange), "M1006");
  EXPECT_EQ(CodeId(Code::kMbarrierNoCompleteCompletes), "M1007");
  EXPECT_EQ(CodeId(Code::kMbarrierWaitStalePhase), "M1008");
  EXPECT_EQ(CodeId(Code::kMbarrierArriveBeforeObserved), "M1009");
  EXPECT_EQ(CodeId(Code::kDeadlock), "P2001");
  EXPECT_EQ(CodeSlug(Code::kDeadlock), "deadlock");
  EXPECT_EQ(CodeSeverity(Code::kMbarrierOverArrival), Severity::kError);
  EXPECT_EQ(CodeSeverity(Code::kCpAsyncEmptyCommit), Severity::kWarning);
}

TEST(CodesTest, LookupRoundTrips) {
  for (Code c : AllCodes()) {
    EXPECT_EQ(CodeFromId(CodeId(c)), c);
    EXPECT_EQ(CodeFromSlug(CodeSlug(c)), c);
  }
  EXPECT_EQ(CodeFromId("M9999"), std::nullopt);
  EXPECT_EQ(CodeFromId("m1001"), std::nullopt);  // ids are case-sensitive
  EXPECT_EQ(CodeFromId(""), std::nullopt);
  EXPECT_EQ(CodeFromSlug("no-such-rule"), std::nullopt);
}

// Every code's message, with its numbers. Mbarrier and group codes are also produced by real
// transitions in their own tests; this table pins the exact wording of each.
struct DescribeCase {
  Violation v;
  const char* text;
};

TEST(CodesTest, DescribeEveryCode) {
  const DescribeCase cases[] = {
      {{Code::kMbarrierUninitialized, 0, 0},
       "M1001 mbarrier-uninitialized: operation on an uninitialised mbarrier (only mbarrier.init "
       "is allowed there)"},
      {{Code::kMbarrierInvalidated, 0, 0},
       "M1002 mbarrier-invalidated: operation on an invalidated mbarrier (only mbarrier.init is "
       "allowed there)"},
      {{Code::kMbarrierInitLive, 3, 0},
       "M1003 mbarrier-init-live: mbarrier.init on a live mbarrier (in phase 3); mbarrier.inval "
       "must come first"},
      {{Code::kMbarrierExpectedCountRange, 0, 1048575},
       "M1004 mbarrier-expected-count-range: mbarrier.init count 0 is outside 1..1048575"},
      {{Code::kMbarrierOverArrival, 3, 1},
       "M1005 mbarrier-over-arrival: arrive of count 3 on a barrier with 1 pending arrival"},
      {{Code::kMbarrierOverArrival, 1, 0},
       "M1005 mbarrier-over-arrival: arrive of count 1 on a barrier with 0 pending arrivals"},
      {{Code::kMbarrierTxRange, 1048576, 1048575},
       "M1006 mbarrier-tx-range: tx-count would become 1048576, outside -1048575..1048575"},
      {{Code::kMbarrierNoCompleteCompletes, 2, 2},
       "M1007 mbarrier-nocomplete-completes: arrive.noComplete of count 2 on a barrier with 2 "
       "pending arrivals and tx-count 0 would complete the phase"},
      {{Code::kMbarrierWaitStalePhase, 1, 3},
       "M1008 mbarrier-wait-stale-phase: wait on phase 1 while the barrier is in phase 3; only the "
       "current phase or the one before it may be waited on"},
      {{Code::kMbarrierArriveBeforeObserved, 2, 0},
       "M1009 mbarrier-arrive-before-observed: this update completes phase 2 while no wait has "
       "observed the completion of phase 1 (phase 1 is lost: a parity wait for it now names "
       "phase 3)"},
      {{Code::kMbarrierArriveCountRange, 0, 1048575},
       "M1010 mbarrier-arrive-count-range: arrive count 0 is outside 1..1048575"},
      {{Code::kMbarrierDropBelowOne, 2, 2},
       "M1011 mbarrier-drop-below-one: arrive_drop of count 2 on a barrier expecting 2 arrivals "
       "per phase leaves the expected count at 0 (must stay >= 1)"},
      {{Code::kMbarrierPendingOverflow, 1048576, 1048575},
       "M1012 mbarrier-pending-overflow: pending count would become 1048576, above 1048575"},
      {{Code::kMbarrierPendingCountToken, 0, 0},
       "M1013 mbarrier-pending-count-token: mbarrier.pending_count on a state that no "
       "arrive.noComplete or arrive_drop.noComplete returned"},
      {{Code::kCpAsyncWaitUncommitted, 1, 2},
       "A1001 cp-async-wait-uncommitted: cp.async.wait_group 1 does not cover 2 uncommitted "
       "cp.async copies"},
      {{Code::kCpAsyncEmptyCommit, 4, 0},
       "A1002 cp-async-empty-commit: cp.async.commit_group creates empty group 4 (no cp.async "
       "since the last commit)"},
      {{Code::kAsyncExitInFlight, 1, 0},
       "A1003 async-exit-in-flight: thread exits with 1 asynchronous copy in flight"},
      {{Code::kBulkExitReadsPending, 2, 0},
       "A1004 bulk-exit-reads-pending: thread exits before 2 bulk stores have read shared memory "
       "(no cp.async.bulk.wait_group.read 0; safe on H100, not promised by the ISA)"},
      {{Code::kBulkWaitUncommitted, 0, 1},
       "A1101 bulk-wait-uncommitted: cp.async.bulk.wait_group 0 does not cover 1 uncommitted bulk "
       "operation"},
      {{Code::kBulkEmptyCommit, 0, 0},
       "A1102 bulk-empty-commit: cp.async.bulk.commit_group creates empty bulk group 0 (no bulk "
       "operation since the last commit)"},
      {{Code::kNamedBarrierId, 16, 15},
       "S1001 named-barrier-id: named barrier id 16 is outside 0..15"},
      {{Code::kNamedBarrierCountAlign, 48, 32},
       "S1002 named-barrier-count-align: named barrier thread count 48 is not a positive multiple "
       "of the warp size 32"},
      {{Code::kNamedBarrierCountMismatch, 64, 128},
       "S1003 named-barrier-count-mismatch: named barrier used with thread count 64 while the "
       "current instance counts 128 threads"},
      {{Code::kNamedBarrierOverArrival, 96, 64},
       "S1004 named-barrier-over-arrival: 96 threads arrived at a named barrier counting 64 "
       "threads"},
      {{Code::kClusterArriveTwice, 5, 0},
       "S1101 cluster-arrive-twice: barrier.cluster.arrive by participant 5 again before its "
       "barrier.cluster.wait"},
      {{Code::kClusterWaitWithoutArrive, 2, 0},
       "S1102 cluster-wait-without-arrive: barrier.cluster.wait by participant 2 without a "
       "preceding barrier.cluster.arrive"},
      {{Code::kDeadlock, 2, 0}, "P2001 deadlock: 2 agents blocked and no event can unblock them"},
      {{Code::kEarlyPhaseCompletion, 4096, 1},
       "P2002 early-phase-completion: 4096 bytes landed 1 phase(s) after the phase that was "
       "current at their issue"},
      {{Code::kTxMismatch, 8, 4}, "P2003 tx-mismatch: 8 bytes expected, 4 delivered"},
      {{Code::kMulticastDisagreement, 8, 4},
       "P2004 multicast-disagreement: 8 bytes expected over the run, 4 delivered"},
      {{Code::kSharedMemoryRace, 0, 0},
       "P2005 smem-race: unordered accesses of a buffer slot"},
      {{Code::kProxyFenceMissing, 0, 0},
       "P2006 proxy-fence-missing: generic-proxy access not fenced before the async-proxy access"},
      {{Code::kRemoteBeforeInit, 0, 0},
       "P2007 remote-before-init: remote use of a barrier not ordered after its fenced init"},
      {{Code::kExitWhileAwaited, 1, 0},
       "P2008 exit-while-awaited: 1 agent blocked on a signal of an exited agent"},
      {{Code::kDataRace, 0, 0}, "P2009 data-race: unordered accesses of overlapping bytes"},
      {{Code::kAccessAfterExit, 1, 0},
       "P2010 access-after-exit: an access to CTA 1 is not ordered before its exit"},
      {{Code::kExitWithCopyInFlight, 0, 0},
       "P2011 exit-with-copy-in-flight: CTA 0 may exit with a copy into its shared memory in "
       "flight"},
      {{Code::kDsmemExitedCta, 1, 0},
       "S1103 dsmem-exited-cta: access of the shared memory of exited CTA 1"},
      {{Code::kReleaseScopeNarrow, 0, 0},
       "P2013 release-scope-narrow: release or acquire too narrow (.cta) for accesses across "
       "CTAs"},
      {{Code::kPdlWaitMissing, 0, 0},
       "P2020 pdl-wait-missing: a dependent grid's access of the primary grid's global memory is "
       "not after griddepcontrol.wait"},
      {{Code::kDsmemBeforeStart, 1, 0},
       "P2030 dsmem-before-peer-start: access of the shared memory of CTA 1, not known to have "
       "started"},
      {{Code::kTensormapNotFenced, 0, 0},
       "P2031 tensormap-not-fenced: a TMA reads an updated tensor map without the tensormap proxy "
       "fences"},
      {{Code::kTensormapModifiedInFlight, 0, 0},
       "P2032 tensormap-modified-in-flight: a tensor map is updated while a TMA that reads it may "
       "be in flight"},
      {{Code::kAssertionFailed, 2, 1},
       "P2033 assertion-failed: assertion 2 does not hold (CTA 1)"},
      {{Code::kExistsUnsatisfied, 0, 0},
       "P2034 exists-unsatisfied: exists property 0 holds in no complete run explored"},
      {{Code::kBulkDestinationReadEarly, 1, 0},
       "A1103 bulk-destination-read-early: readback of a store destination while 1 store write "
       "is still in flight"},
  };
  std::set<Code> covered;
  for (const DescribeCase& c : cases) {
    EXPECT_EQ(Describe(c.v), c.text);
    covered.insert(c.v.code);
  }
  EXPECT_EQ(covered.size(), AllCodes().size()) << "a code has no Describe() case";
}

// A violation event's code comes from a trace (possibly of another version, or damaged): a value
// outside the enum reads as unknown instead of past the table.
TEST(CodesTest, ValuesOutsideTheEnumReadAsUnknown) {
  for (uint32_t raw : {static_cast<uint32_t>(AllCodes().size()), 1024u, 65535u}) {
    const Code c = static_cast<Code>(raw);
    EXPECT_EQ(CodeId(c), "?");
    EXPECT_EQ(CodeSlug(c), "unknown-code");
    EXPECT_EQ(CodeTitle(c), "unknown violation code");
    EXPECT_EQ(CodeSeverity(c), Severity::kError);
    EXPECT_FALSE(CodeExplanation(c).empty());
    EXPECT_EQ(Describe({c, 1, 2}), "? unknown-code: unknown violation");
  }
}

// Every rule's citation is checkable (issue 24): its explanation names the PTX ISA section or
// instruction it rests on ("PTX ISA (...)"), or a litmus test of litmus/, or says that it is a
// property of the schedule rather than a PTX rule (deadlocks and their culprits).
TEST(CodesTest, EveryExplanationCitesPtxALitmusTestOrSaysItIsAScheduleProperty) {
  for (Code c : AllCodes()) {
    const std::string_view e = CodeExplanation(c);
    const bool ptx = e.find("PTX ISA (") != std::string_view::npos;
    const bool litmus = e.find("litmus ") != std::string_view::npos;
    const bool schedule = e.find("A property of the schedule, not a PTX rule") == 0;
    EXPECT_TRUE(ptx || litmus || schedule) << CodeId(c) << ": " << e;
  }
  // M1009 names the litmus test that shows what the H100 does.
  EXPECT_NE(CodeExplanation(Code::kMbarrierArriveBeforeObserved).find(
                "litmus arrive_next_phase_unobserved"),
            std::string_view::npos);
}

// Every rule's citation is checkable (issue 24, sim/model/citations.h): each code has at least
// one; a quote is non-empty with its section, long enough to be the ISA's words rather than a
// gloss, and free of the markup dropped from the document; a litmus citation names a test that
// exists in litmus/.
TEST(CodesTest, EveryRuleHasACheckableCitation) {
  for (Code c : AllCodes()) {
    const auto cites = CodeCitations(c);
    ASSERT_FALSE(cites.empty()) << CodeId(c);
    for (const Citation& x : cites) {
      if (x.user) {
        // Only the rules users state themselves cite nothing but the assertion.
        EXPECT_TRUE(c == Code::kAssertionFailed || c == Code::kExistsUnsatisfied) << CodeId(c);
        EXPECT_EQ(CitationText(c), "user assertion");
        continue;
      }
      if (!x.litmus.empty()) {
        EXPECT_TRUE(x.section.empty() && x.quote.empty()) << CodeId(c);
        const std::string path = "litmus/" + std::string(x.litmus) + ".pipe";
        EXPECT_TRUE(std::ifstream(path).good()) << CodeId(c) << ": no " << path;
        continue;
      }
      EXPECT_FALSE(x.section.empty()) << CodeId(c);
      EXPECT_GE(x.quote.size(), 30u) << CodeId(c) << ": " << x.quote;
      EXPECT_EQ(x.quote.find('`'), std::string_view::npos) << CodeId(c);
      EXPECT_EQ(x.quote.find('*'), std::string_view::npos) << CodeId(c);
    }
    const std::string text = CitationText(c);
    EXPECT_TRUE(text.find("PTX ISA (") != std::string::npos ||
                text.find("litmus ") != std::string::npos || text == "user assertion")
        << CodeId(c) << ": " << text;
  }
  // The lifetime rules quote the ISA (they had only a section name before).
  EXPECT_NE(CitationText(Code::kAccessAfterExit).find("owned by an executing CTA"),
            std::string::npos);
  EXPECT_NE(CitationText(Code::kExitWithCopyInFlight).find("tracked by this phase are complete"),
            std::string::npos);
  EXPECT_TRUE(CodeCitations(static_cast<Code>(AllCodes().size())).empty());
}

}  // namespace
}  // namespace parity::model
