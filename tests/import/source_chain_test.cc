// `parity import --source-chain`: an operation's comment names its whole inlined call chain from
// the kernel's own frame inward, so that a finding in a header every kernel inlines (CUTLASS's
// PipelineTmaAsync) names the header's line; without it, the kernel's frame alone.
#include <string>

#include "gtest/gtest.h"
#include "sim/ptx/importer.h"
#include "sim/ptx/ptx.h"

namespace parity::ptx {
namespace {

// A kernel whose barrier init is inlined twice (kernel.cu:10 calls pipeline.hpp:20, which calls
// barrier.h:30, the mbarrier.init) and whose arrive is inlined once, on the same line as its
// caller's frame in a second helper (pipeline.hpp:21 twice: named once).
constexpr char kChain[] = R"(.version 8.7
.target sm_90a
.address_size 64
.file 1 "src/kernel.cu"
.file 2 "include/pipeline.hpp"
.file 3 "include/barrier.h"
.visible .entry chain()
{
  .reg .pred %p<2>;
  .reg .b32 %r<4>;
  .shared .align 8 .b64 bar;
  mov.u32 %r1, %tid.x;
  setp.ne.s32 %p1, %r1, 0;
  @%p1 bra SKIP;
  .loc 1 10 3
  mov.u32 %r2, bar;
  .loc 2 20 5, function_name $L__info_string0, inlined_at 1 10 3
  .loc 3 30 7, function_name $L__info_string1, inlined_at 2 20 5
  mbarrier.init.shared::cta.b64 [%r2], 1;
SKIP:
  .loc 1 11 3
  bar.sync 0;
  .loc 1 12 3
  mov.u32 %r3, bar;
  .loc 2 21 5, function_name $L__info_string2, inlined_at 1 12 3
  .loc 2 21 9, function_name $L__info_string3, inlined_at 2 21 5
  @%p1 bra DONE;
  mbarrier.arrive.shared::cta.b64 _, [%r3];
DONE:
  ret;
}
)";

Expected<std::string> ImportChain(bool source_chain) {
  auto m = ParseModule(kChain, "chain.ptx");
  if (!m.ok()) return m.status();
  ImportOptions o;
  o.entry = "chain";
  o.block = {32, 1, 1};
  o.source_chain = source_chain;
  return ImportSchedule(*m, o);
}

// The comment of the first schedule line that starts with `op` (after indentation), or "".
std::string CommentOf(const std::string& pipe, const std::string& op) {
  size_t at = 0;
  while (at < pipe.size()) {
    const size_t end = pipe.find('\n', at);
    const std::string line =
        pipe.substr(at, end == std::string::npos ? std::string::npos : end - at);
    const size_t text = line.find_first_not_of(' ');
    if (text != std::string::npos && line.compare(text, op.size(), op) == 0) {
      const size_t hash = line.find('#');
      return hash == std::string::npos ? "" : line.substr(hash);
    }
    if (end == std::string::npos) break;
    at = end + 1;
  }
  return "";
}

TEST(SourceChainTest, WithoutTheFlagAnOperationCitesTheKernelFrameOnly) {
  auto pipe = ImportChain(false);
  ASSERT_TRUE(pipe.ok()) << pipe.status().ToString();
  EXPECT_NE(CommentOf(*pipe, "init ").find("(kernel.cu:10)"), std::string::npos) << *pipe;
  EXPECT_NE(CommentOf(*pipe, "arrive ").find("(kernel.cu:12)"), std::string::npos) << *pipe;
}

TEST(SourceChainTest, WithTheFlagAnOperationCitesEveryInlinedFrameInward) {
  auto pipe = ImportChain(true);
  ASSERT_TRUE(pipe.ok()) << pipe.status().ToString();
  EXPECT_NE(CommentOf(*pipe, "init ").find("(kernel.cu:10 > pipeline.hpp:20 > barrier.h:30)"),
            std::string::npos)
      << *pipe;
  EXPECT_NE(CommentOf(*pipe, "arrive ").find("(kernel.cu:12 > pipeline.hpp:21)"), std::string::npos)
      << *pipe;
}

}  // namespace
}  // namespace parity::ptx
