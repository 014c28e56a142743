// CI holds the model against the silicon: every litmus test (litmus/*.pipe) has its allowed
// outcome set computed by the simulator (verifier/litmus.h) and, where the H100 histogram
// traces/litmus/<test>.h100.txt is committed, every outcome observed there must be allowed.
// One test per litmus file (sharded: the exhaustive searches add up under ASan).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "sim/ir/hash.h"
#include "sim/ir/parser.h"
#include "sim/litmus/outcome.h"
#include "verifier/litmus.h"

namespace parity::verifier {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> LitmusFiles() {
  std::vector<std::string> files;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator("litmus", ec)) {
    if (e.path().extension() == ".pipe") files.push_back(e.path().stem().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(LitmusSuite, AtLeastFortyTestsAndEveryH100FileHasItsTest) {
  const std::vector<std::string> tests = LitmusFiles();
  EXPECT_GE(tests.size(), 40u);
  std::error_code ec;
  for (const auto& e : fs::directory_iterator("traces/litmus", ec)) {
    const std::string file = e.path().filename().string();
    const std::string suffix = ".h100.txt";
    if (file.size() <= suffix.size() || file.substr(file.size() - suffix.size()) != suffix) {
      continue;
    }
    const std::string name = file.substr(0, file.size() - suffix.size());
    EXPECT_TRUE(std::binary_search(tests.begin(), tests.end(), name))
        << "traces/litmus/" << file << " has no litmus/" << name << ".pipe";
  }
}

class LitmusFile : public ::testing::TestWithParam<std::string> {};

TEST_P(LitmusFile, ModelAllowsEveryObservedOutcome) {
  const std::string name = GetParam();
  auto program = ir::ParseFile("litmus/" + name + ".pipe");
  ASSERT_TRUE(program.ok()) << program.status().ToString();
  auto sim = SimulateLitmus(*program, name);
  ASSERT_TRUE(sim.ok()) << sim.status().ToString();
  ASSERT_FALSE(sim->counts.empty());
  const std::string h100_path = "traces/litmus/" + name + ".h100.txt";
  // Every litmus test must have its H100 histogram (issue 7): a new test is not done until it
  // has run on the silicon (parity_gpu litmus, see traces/litmus/README.md).
  ASSERT_TRUE(fs::exists(h100_path))
      << h100_path << " missing: run the test on the H100 and commit its histogram";
  auto h100 = litmus::ParseHistogram(ReadFile(h100_path), h100_path);
  ASSERT_TRUE(h100.ok()) << h100.status().ToString();
  EXPECT_EQ(h100->name, name);
  EXPECT_GT(h100->runs, 0u);
  auto cmp = CompareLitmus(*sim, *h100);
  ASSERT_TRUE(cmp.ok()) << cmp.status().ToString();
  for (const std::string& u : cmp->unexpected) {
    if (cmp->verdict == LitmusVerdict::kFail) {
      ADD_FAILURE() << "observed on the H100, not allowed by the model: " << u;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(All, LitmusFile, ::testing::ValuesIn(LitmusFiles()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return info.param;
                         });

}  // namespace
}  // namespace parity::verifier
