// traces/races: the H100 histograms of the known-bad race variants (gpu/race_evidence.sh). Each
// belongs to the current schedule of pipelines/races (content hash), every outcome it shows is
// one the model allows, and where the silicon saw wrong bytes the schedule's expect lines name
// the race (P2005 / P2009): the race the checker reports is real.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "sim/ir/hash.h"
#include "sim/ir/parser.h"
#include "sim/litmus/outcome.h"
#include "verifier/expect.h"
#include "verifier/litmus.h"

namespace parity::verifier {
namespace {

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The count of "# runs with wrong data (...): N" in a histogram's comments; -1 when absent.
long WrongRuns(const std::string& text) {
  const size_t at = text.find("# runs with wrong data");
  if (at == std::string::npos) return -1;
  const size_t colon = text.find("): ", at);
  if (colon == std::string::npos) return -1;
  return std::strtol(text.c_str() + colon + 3, nullptr, 10);
}

TEST(RaceEvidenceTest, HistogramsBelongToTheSchedulesAndAgreeWithTheModel) {
  size_t files = 0, races_shown = 0;
  for (const auto& e : std::filesystem::directory_iterator("traces/races")) {
    const std::string path = e.path().string();
    if (path.size() < 9 || path.substr(path.size() - 9) != ".h100.txt") continue;
    SCOPED_TRACE(path);
    ++files;
    const std::string text = ReadAll(path);
    auto h100 = litmus::ParseHistogram(text, path);
    ASSERT_TRUE(h100.ok()) << h100.status().ToString();
    const std::string pipe = "pipelines/races/" + h100->name + ".pipe";
    auto program = ir::ParseProgram(ReadAll(pipe), pipe);
    ASSERT_TRUE(program.ok()) << program.status().ToString();
    EXPECT_EQ(h100->hash, ir::ContentHashHex(*program)) << "recorded for another version";
    auto sim = SimulateLitmus(*program, h100->name);
    ASSERT_TRUE(sim.ok()) << sim.status().ToString();
    auto cmp = CompareLitmus(*sim, *h100);
    ASSERT_TRUE(cmp.ok());
    EXPECT_EQ(cmp->verdict, LitmusVerdict::kAgree);
    const long wrong = WrongRuns(text);
    ASSERT_GE(wrong, 0) << "no wrong-data count";
    if (wrong == 0) continue;
    ++races_shown;
    auto expects = ReadExpectationsFile(pipe);
    ASSERT_TRUE(expects.ok());
    bool race = false;
    for (const Expectation& x : *expects) race |= x.code == "P2005" || x.code == "P2009";
    EXPECT_TRUE(race) << pipe << ": wrong bytes on the H100, but no race among its expect lines";
  }
  EXPECT_GE(files, 11u);
  // bad_fresh_barrier_parity, bad_loop_parity_start, bad_st_async_use_before_wait,
  // bad_multicast_use_before_wait (the last two under --op-jitter 50000).
  EXPECT_GE(races_shown, 4u);
}

}  // namespace
}  // namespace parity::verifier
