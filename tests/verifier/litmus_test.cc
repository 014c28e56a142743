// The simulator side of the litmus suite: exact outcome sets of chosen tests (races allow every
// answer they should and no other), the comparator (agreement, a tampered H100 file fails and
// names the outcome, allowed-never-observed, undefined behaviour, hash refusal). The whole suite
// against the committed H100 histograms: litmus_suite_test.cc.
#include "verifier/litmus.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "sim/ir/hash.h"
#include "sim/ir/parser.h"
#include "sim/litmus/outcome.h"

namespace parity::verifier {
namespace {

ir::Program Load(const std::string& name) {
  auto p = ir::ParseFile("litmus/" + name + ".pipe");
  EXPECT_TRUE(p.ok()) << p.status().ToString();
  return p.ok() ? std::move(p).value() : ir::Program{};
}

std::set<std::string> Outcomes(const std::string& name) {
  const ir::Program p = Load(name);
  auto h = SimulateLitmus(p, name);
  EXPECT_TRUE(h.ok()) << h.status().ToString();
  std::set<std::string> out;
  if (!h.ok()) return out;
  EXPECT_EQ(h->source, "sim");
  EXPECT_EQ(h->hash, ir::ContentHashHex(p));
  uint64_t total = 0;
  for (const auto& [o, n] : h->counts) {
    out.insert(o);
    total += n;
  }
  EXPECT_EQ(total, h->runs);
  return out;
}

TEST(SimulateLitmus, RacingTestWaitAllowsBothAnswers) {
  EXPECT_EQ(Outcomes("race_test_wait_vs_arrive"),
            (std::set<std::string>{"ok tw{c0a1=0} ph{b[0]@0=1}", "ok tw{c0a1=1} ph{b[0]@0=1}"}));
}

TEST(SimulateLitmus, CompletedPhaseStaysCompletedUntilTheNext) {
  // Two tests while two warps arrive on a count-2 barrier: never 1 then 0.
  EXPECT_EQ(Outcomes("race_test_wait_two_arrivers"),
            (std::set<std::string>{"ok tw{c0a2=00} ph{b[0]@0=1}", "ok tw{c0a2=01} ph{b[0]@0=1}",
                                   "ok tw{c0a2=11} ph{b[0]@0=1}"}));
}

TEST(SimulateLitmus, ParityAliasingRacesAllowEveryMonotoneHistory) {
  // Tests parity 0, 1, 0 while phases 0 -> 1 -> 2 go by: 111 would need phase 1, then 0 or 2,
  // then 1 again.
  std::set<std::string> want;
  for (const char* t : {"000", "001", "010", "011", "100", "101", "110"}) {
    want.insert(std::string("ok tw{c0a1=") + t + "} ph{b[0]@0=0}");
  }
  EXPECT_EQ(Outcomes("race_parity_aliasing"), want);
}

TEST(SimulateLitmus, DeterministicTxCountAnswers) {
  // Issue 7's question, settled on the H100: an expect_tx that brings tx back to 0 with nothing
  // pending completes the phase (r2 = 1; the model said 0 before the H100 run).
  EXPECT_EQ(Outcomes("tx_expect_brings_zero"),
            (std::set<std::string>{"ok tw{c0a0=0011} ph{b[0]@0=1}"}));
  EXPECT_EQ(Outcomes("tx_pending_zero_tx_negative"),
            (std::set<std::string>{"ok tw{c0a0=001} ph{b[0]@0=1}"}));
  EXPECT_EQ(Outcomes("test_wait_current_previous"),
            (std::set<std::string>{"ok tw{c0a0=0110} ph{b[0]@0=1}"}));
  EXPECT_EQ(Outcomes("test_wait_two_phases_old"),
            (std::set<std::string>{"ok tw{c0a0=110} ph{b[0]@0=0}"}));
  EXPECT_EQ(Outcomes("cpasync_arrive_inc_only"),
            (std::set<std::string>{"ok tw{c0a0=00} ph{b[0]@0=1}"}));
}

TEST(SimulateLitmus, UndefinedBehaviourIsAnOutcome) {
  EXPECT_EQ(Outcomes("arrive_over_count"), (std::set<std::string>{"ub{M1005@b[0]@0}"}));
  EXPECT_EQ(Outcomes("nocomplete_would_complete"), (std::set<std::string>{"ub{M1007@b[0]@0}"}));
  // Where the deferred arrive lands before the wait observed phase 0, both phases complete (the
  // note M1009) and the parity-0 wait names phase 2: a hang, what the H100 shows (1000 of 1000).
  EXPECT_EQ(Outcomes("cpasync_noinc_overbudget"),
            (std::set<std::string>{"hang{c0a0@b[0]/p0}", "ok tw{c0a0=0} ph{b[0]@0=0}",
                                   "ok tw{c0a0=1} ph{b[0]@0=0}"}));
}

TEST(SimulateLitmus, MulticastExcludingTheIssuer) {
  EXPECT_EQ(Outcomes("mc4_tma_mask6"),
            (std::set<std::string>{
                "ok tw{c0a0=1 c3a0=1} ph{full[0]@0=0 full[0]@1=1 full[0]@2=1 full[0]@3=0}"}));
}

TEST(SimulateLitmus, DeadlockYieldsAHang) {
  auto p = ir::ParseProgram(
      "schedule lost_arrive\ncluster 1x1\nbarrier b[1] count 2\n"
      "role t threads 32 {\n  init b[0]\n  fence.mbarrier_init\n  arrive b[0]\n"
      "  test_wait b[0] parity 0 -> r\n  wait b[0] parity 0\n}\n",
      "lost_arrive.pipe");
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  auto h = SimulateLitmus(*p, "lost_arrive");
  ASSERT_TRUE(h.ok()) << h.status().ToString();
  ASSERT_EQ(h->counts.size(), 1u);
  EXPECT_EQ(h->counts.begin()->first, "hang{c0a0@b[0]/p0} tw{c0a0=0}");
}

std::set<std::string> InlineOutcomes(const std::string& text) {
  auto p = ir::ParseProgram(text, "inline.pipe");
  EXPECT_TRUE(p.ok()) << p.status().ToString();
  std::set<std::string> out;
  if (!p.ok()) return out;
  auto h = SimulateLitmus(*p, "inline");
  EXPECT_TRUE(h.ok()) << h.status().ToString();
  if (!h.ok()) return out;
  for (const auto& [o, n] : h->counts) out.insert(o);
  return out;
}

// Two warps arrive.noComplete on a count-3 barrier in either order: each reads the count its own
// token recorded (PTX ISA mbarrier.pending_count), so {3, 2} in both assignments and never equal
// counts. The same schedule as litmus/pending_count_race_two_arrivers.pipe (its H100 histogram
// is recorded separately).
TEST(SimulateLitmus, PendingCountsOfRacingNoCompleteArrivals) {
  EXPECT_EQ(InlineOutcomes("schedule p\ncluster 1x1\nbarrier b[1] count 3\n"
                           "role setup threads 32 {\n  init b[0]\n  fence.mbarrier_init\n"
                           "  bar.sync 1, 96\n  bar.sync 2, 96\n  arrive b[0]\n"
                           "  wait b[0] parity 0\n}\n"
                           "role arriver count 2 threads 32 {\n  bar.sync 1, 96\n"
                           "  arrive.nocomplete b[0] -> t\n  pending_count t -> n\n"
                           "  bar.arrive 2, 96\n}\n"),
            (std::set<std::string>{"ok cnt{c0a1=2 c0a2=3} ph{b[0]@0=1}",
                                   "ok cnt{c0a1=3 c0a2=2} ph{b[0]@0=1}"}));
  // The token of a plain arrive: undefined (M1013), the only outcome.
  EXPECT_EQ(InlineOutcomes("schedule q\nbarrier b[1] count 2\nrole t threads 32 {\n"
                           "  init b[0]\n  arrive b[0] -> t0\n  pending_count t0 -> n\n"
                           "  arrive b[0]\n}\n"),
            (std::set<std::string>{"ub{M1013}"}));
}

// The bulk async-group question's data half: after wait_group the readback sees the stored data
// (1); after only wait_group.read it may run while the write is in flight (undefined: A1103) or
// after it landed; an overwrite by another agent after wait_group.read never reaches global
// memory.
TEST(SimulateLitmus, BulkStoreReadbacks) {
  const std::string head = "schedule s\ncluster 1x1\nbuffer src[1] bytes 1024\n";
  const std::string store =
      "  write src[0]\n  fence.proxy.async\n  bulk.store src[0]\n  bulk.commit\n";
  EXPECT_EQ(InlineOutcomes(head + "role t threads 32 {\n" + store +
                           "  bulk.wait 0\n  readback src[0] -> v\n}\n"),
            (std::set<std::string>{"ok rb{c0a0=1}"}));
  EXPECT_EQ(InlineOutcomes(head + "role t threads 32 {\n" + store +
                           "  bulk.wait 0 read\n  readback src[0] -> v\n  bulk.wait 0\n}\n"),
            (std::set<std::string>{"ok rb{c0a0=1}", "ub{A1103}"}));
  EXPECT_EQ(InlineOutcomes(head + "role s threads 32 {\n" + store +
                           "  bulk.wait 0 read\n  bar.sync 1, 64\n  bulk.wait 0\n"
                           "  readback src[0] -> v\n}\n"
                           "role o threads 32 {\n  bar.sync 1, 64\n  write src[0]\n}\n"),
            (std::set<std::string>{"ok rb{c0a0=1}"}));
  // Without the read wait the overwrite may be what the store reads: agent 1's data, class 3.
  EXPECT_EQ(InlineOutcomes(head + "role s threads 32 {\n" + store +
                           "  bar.sync 1, 64\n  bulk.wait 0\n  readback src[0] -> v\n}\n"
                           "role o threads 32 {\n  bar.sync 1, 64\n  write src[0]\n}\n"),
            (std::set<std::string>{"ok rb{c0a0=1}", "ok rb{c0a0=3}"}));
}

TEST(SimulateLitmus, TooManyStatesIsRefused) {
  const ir::Program p = Load("race_parity_aliasing");
  LitmusSearchOptions o;
  o.max_states = 5;
  auto h = SimulateLitmus(p, "race_parity_aliasing", o);
  ASSERT_FALSE(h.ok());
  EXPECT_EQ(h.status().rule(), "litmus.too-big");
}

litmus::Histogram H100(const litmus::Histogram& sim, std::map<std::string, uint64_t> counts) {
  litmus::Histogram h;
  h.name = sim.name;
  h.hash = sim.hash;
  h.source = "h100";
  for (const auto& [o, n] : counts) h.runs += n;
  h.counts = std::move(counts);
  return h;
}

TEST(CompareLitmus, AgreementAndNeverObserved) {
  auto sim = SimulateLitmus(Load("race_test_wait_vs_arrive"), "race_test_wait_vs_arrive");
  ASSERT_TRUE(sim.ok());
  auto cmp = CompareLitmus(*sim, H100(*sim, {{"ok tw{c0a1=1} ph{b[0]@0=1}", 1000}}));
  ASSERT_TRUE(cmp.ok()) << cmp.status().ToString();
  EXPECT_EQ(cmp->verdict, LitmusVerdict::kAgree);
  EXPECT_TRUE(cmp->unexpected.empty());
  EXPECT_EQ(cmp->never_observed, std::vector<std::string>{"ok tw{c0a1=0} ph{b[0]@0=1}"});
  EXPECT_EQ(cmp->h100_runs, 1000u);
}

TEST(CompareLitmus, TamperedH100FileFailsNamingTheOutcome) {
  auto sim = SimulateLitmus(Load("tx_expect_brings_zero"), "tx_expect_brings_zero");
  ASSERT_TRUE(sim.ok());
  // Written and parsed back as a file would be; the tampered run says the expect_tx did not
  // complete the phase (the model's answer before the H100 corrected it).
  const std::string text = litmus::FormatHistogram(
      H100(*sim, {{"ok tw{c0a0=0011} ph{b[0]@0=1}", 90}, {"ok tw{c0a0=0001} ph{b[0]@0=1}", 10}}));
  auto h100 = litmus::ParseHistogram(text, "tx_expect_brings_zero.h100.txt");
  ASSERT_TRUE(h100.ok()) << h100.status().ToString();
  auto cmp = CompareLitmus(*sim, *h100);
  ASSERT_TRUE(cmp.ok());
  EXPECT_EQ(cmp->verdict, LitmusVerdict::kFail);
  EXPECT_EQ(cmp->unexpected, std::vector<std::string>{"ok tw{c0a0=0001} ph{b[0]@0=1}"});
  EXPECT_TRUE(cmp->never_observed.empty());
}

TEST(CompareLitmus, UndefinedInTheModelIsReportedNotFailed) {
  auto sim = SimulateLitmus(Load("arrive_over_count"), "arrive_over_count");
  ASSERT_TRUE(sim.ok());
  auto cmp = CompareLitmus(*sim, H100(*sim, {{"ok tw{c0a0=11} ph{b[0]@0=1}", 5}}));
  ASSERT_TRUE(cmp.ok());
  EXPECT_EQ(cmp->verdict, LitmusVerdict::kUndefined);
  EXPECT_EQ(cmp->unexpected, std::vector<std::string>{"ok tw{c0a0=11} ph{b[0]@0=1}"});
  EXPECT_TRUE(cmp->never_observed.empty());  // ub{} is never observable as such
}

TEST(CompareLitmus, RefusesDifferentHashesAndSources) {
  auto sim = SimulateLitmus(Load("race_test_wait_vs_arrive"), "race_test_wait_vs_arrive");
  ASSERT_TRUE(sim.ok());
  litmus::Histogram other = H100(*sim, {{"ok tw{c0a1=0} ph{b[0]@0=1}", 1}});
  other.hash = "0000000000000000";
  auto cmp = CompareLitmus(*sim, other);
  ASSERT_FALSE(cmp.ok());
  EXPECT_EQ(cmp.status().rule(), "litmus.hash");
  EXPECT_NE(cmp.status().message().find("0000000000000000"), std::string::npos);
  auto swapped = CompareLitmus(H100(*sim, {}), *sim);
  ASSERT_FALSE(swapped.ok());
  EXPECT_EQ(swapped.status().rule(), "litmus.hash");
}

}  // namespace
}  // namespace parity::verifier
