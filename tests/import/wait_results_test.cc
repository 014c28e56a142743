// A try_wait whose result decides nothing is a probe, not a wait (sim/ptx/wait_results.h): the
// importer drops it, so that a kernel that reads a stage after a probe (CUTLASS's consumer_wait
// without its `if (token == WaitAgain) wait(phase)`) races in the model as it may on the GPU.
#include "sim/ptx/wait_results.h"

#include <string>

#include "gtest/gtest.h"
#include "sim/ptx/importer.h"
#include "sim/ptx/ptx.h"

namespace parity::ptx {
namespace {

// Thread 0 initialises the barrier; every thread then waits on it three ways: a spin loop on
// the predicate (read by a guard), a token (selp, then a compare and a guarded branch around a
// second wait: CUTLASS's consumer_try_wait / consumer_wait) and, if `probe` is set in the
// kernel text, a bare probe whose token nothing reads.
std::string Kernel(bool probe) {
  return std::string(R"(.version 8.7
.target sm_90a
.address_size 64
.visible .entry waits()
{
  .reg .pred %p<4>;
  .reg .b32 %r<8>;
  .shared .align 8 .b64 bar;
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, bar;
  setp.ne.s32 %p1, %r1, 0;
  @%p1 bra INITED;
  mbarrier.init.shared::cta.b64 [%r2], 1;
  mbarrier.arrive.shared::cta.b64 _, [%r2];
INITED:
  bar.sync 0;
SPIN:
  mbarrier.try_wait.parity.shared::cta.b64 %p2, [%r2], 0;
  @!%p2 bra SPIN;
  mbarrier.try_wait.parity.shared::cta.b64 %p3, [%r2], 0;
  selp.b32 %r3, 1, 0, %p3;
  setp.ne.s32 %p1, %r3, 0;
  @%p1 bra TOKEN_DONE;
AGAIN:
  mbarrier.try_wait.parity.shared::cta.b64 %p2, [%r2], 0;
  @!%p2 bra AGAIN;
TOKEN_DONE:
)") +
         (probe ? "  mbarrier.try_wait.parity.shared::cta.b64 %p3, [%r2], 0;\n"
                  "  selp.b32 %r4, 1, 0, %p3;\n"
                : "") +
         R"(  ret;
}
)";
}

TEST(WaitResultsTest, OnlyAProbeWhoseResultNothingReadsIsNoWait) {
  auto m = ParseModule(Kernel(true), "waits.ptx");
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  const Function& f = *FindEntry(*m, "waits").value();
  const std::vector<bool> read = WaitResultsRead(f);
  std::vector<int> waits, probes;
  for (size_t i = 0; i < f.instructions.size(); ++i) {
    if (!f.instructions[i].HasModifier("try_wait")) continue;
    (read[i] ? waits : probes).push_back(f.instructions[i].line);
  }
  // The spin loop (line 18), the token's try_wait (20) and its fallback loop (25) decide a
  // branch; the probe (28) decides nothing.
  EXPECT_EQ(waits, (std::vector<int>{18, 20, 25}));
  EXPECT_EQ(probes, (std::vector<int>{28}));
}

TEST(WaitResultsTest, TheImportedScheduleHasNoWaitForAProbe) {
  auto count_waits = [](bool probe) {
    auto m = ParseModule(Kernel(probe), "waits.ptx");
    EXPECT_TRUE(m.ok()) << m.status().ToString();
    ImportOptions o;
    o.entry = "waits";
    o.block = {32, 1, 1};
    auto pipe = ImportSchedule(*m, o);
    EXPECT_TRUE(pipe.ok()) << pipe.status().ToString();
    int n = 0;
    for (size_t at = pipe->find("wait bar"); at != std::string::npos;
         at = pipe->find("wait bar", at + 1)) {
      ++n;
    }
    return n;
  };
  const int without = count_waits(false);
  EXPECT_GT(without, 0);
  EXPECT_EQ(count_waits(true), without);
}

}  // namespace
}  // namespace parity::ptx
