#include "sim/ir/hash.h"

#include <set>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "sim/ir/parser.h"
#include "tests/sim/ir/examples.h"

namespace parity::ir {
namespace {

uint64_t HashOf(const std::string& text, const std::string& file = "h.pipe") {
  auto p = ParseProgram(text, file);
  EXPECT_TRUE(p.ok()) << p.status().ToString();
  return p.ok() ? ContentHash(*p) : 0;
}

std::string Replace(std::string s, const std::string& from, const std::string& to) {
  const size_t at = s.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) s.replace(at, from.size(), to);
  return s;
}

TEST(HashTest, KnownFnv1aVectors) {
  EXPECT_EQ(Fnv1a64(""), 0xcbf29ce484222325ull);
  EXPECT_EQ(Fnv1a64("a"), 0xaf63dc4c8601ec8cull);
}

TEST(HashTest, IgnoresWhitespaceCommentsParensAndNames) {
  const std::string base = testing::ReadExample("gemm_tma_multicast_2x2");
  ASSERT_FALSE(base.empty());
  const uint64_t h = HashOf(base);
  EXPECT_EQ(HashOf(base, "elsewhere/other_name.pipe"), h);
  // Comments out, indentation changed, redundant parentheses added, schedule renamed.
  std::string stripped;
  for (size_t i = 0; i < base.size();) {
    size_t nl = base.find('\n', i);
    if (nl == std::string::npos) nl = base.size();
    std::string line = base.substr(i, nl - i);
    if (size_t c = line.find('#'); c != std::string::npos) line.resize(c);
    while (!line.empty() && line.front() == ' ') line.erase(0, 1);
    if (!line.empty()) stripped += "\t" + line + "   \n\n";
    i = nl + 1;
  }
  EXPECT_NE(stripped, base);
  EXPECT_EQ(HashOf(stripped), h);
  EXPECT_EQ(HashOf(Replace(base, "bytes A_BYTES + B_BYTES", "bytes ((A_BYTES) + (B_BYTES))")), h);
  EXPECT_EQ(HashOf(Replace(base, "schedule gemm_tma_multicast_2x2", "schedule renamed")), h);
  auto p = ParseProgram(base, "x.pipe");
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(ContentHashHex(*p).size(), 16u);
  EXPECT_EQ(std::stoull(ContentHashHex(*p), nullptr, 16), h);
}

TEST(HashTest, ChangesWithContent) {
  const std::string base = testing::ReadExample("gemm_tma_multicast_2x2");
  const uint64_t h = HashOf(base);
  const std::vector<std::pair<std::string, std::string>> edits = {
      {"param STAGES = 4", "param STAGES = 5"},                          // param default
      {"barrier full[STAGES] count 1", "barrier full[STAGES] count 2"},  // count
      {"barrier empty[STAGES] count (cluster_m + cluster_n - 1)", "barrier empty[STAGES] count (cluster_m + cluster_n)"},
      {"    use B[s]\n", "\n"},                                          // an op removed
      {"use A[s]", "write A[s]"},                                        // an op changed
      {"wait full[s] parity (k / STAGES) & 1", "wait full[s] parity (k / STAGES) & 1 ^ 1"},
      {"let s = k % STAGES", "let s = (k + 1) % STAGES"},                // an expression
      {"cluster 2x2", "cluster 2x1"},
      {"swizzle 128B", "swizzle 64B"},
      {"role consumer count CONSUMERS threads 128", "role consumer count CONSUMERS threads 64"},
      {"multicast a_mask", "multicast b_mask"},
      {"let release_mask = 0", "let release_mask = 1"},
  };
  std::set<uint64_t> seen = {h};
  for (const auto& [from, to] : edits) {
    SCOPED_TRACE(from + " -> " + to);
    const uint64_t e = HashOf(Replace(base, from, to));
    EXPECT_NE(e, h);
    seen.insert(e);
  }
  EXPECT_EQ(seen.size(), edits.size() + 1);
  // The three broken variants and the good one are all different.
  std::set<uint64_t> variants;
  for (const std::string& name : testing::ExampleNames()) {
    variants.insert(HashOf(testing::ReadExample(name)));
  }
  EXPECT_EQ(variants.size(), testing::ExampleNames().size());
}

}  // namespace
}  // namespace parity::ir
