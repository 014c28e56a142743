// `parity import` end to end on the kernels of tests/import/: the imported schedule of each
// correct kernel checks clean and explores VERIFIED; each seeded-bug twin's bug is found with the
// right code, at a schedule line whose comment names the culprit's PTX line.
#include "sim/ptx/importer.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
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

// The kernels of tests/import were written before the cross-proxy read rule: ws_pipeline.cu and
// cluster_pipeline.cu release ld.shared-read stages to the next TMA load without
// fence.proxy.async (DeepEP #621's pattern), and the goldens and recorded device traces are of
// plain `use` reads. These tests pin that mode; GenericReadsCheckTheCrossProxyWriteAfterRead
// checks the default (use.generic, and the P2006 it gives on those kernels).
ImportOptions Legacy() {
  ImportOptions o;
  o.generic_reads = false;
  return o;
}

Expected<std::string> Import(const std::string& ptx, ImportOptions o) {
  auto m = ReadModule("tests/import/" + ptx);
  if (!m.ok()) return m.status();
  return ImportSchedule(*m, o);
}

ImportOptions SingleTma() {
  ImportOptions o = Legacy();
  o.entry = "single_tma_load";
  o.block = {128, 1, 1};
  o.args = {{1, 0}, {2, 64}};
  o.tensor_maps = {*ParseTensorMapArg("0=u16:256x256:64x64:128B")};
  return o;
}

ImportOptions WsPipeline(const std::string& entry, int k_tiles) {
  ImportOptions o = Legacy();
  o.entry = entry;
  o.block = {96, 1, 1};
  o.args = {{1, static_cast<uint64_t>(k_tiles)}};
  o.tensor_maps = {*ParseTensorMapArg("0=u16:64x1024:64x64:128B")};
  return o;
}

std::string ReadText(const std::string& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// The text of line `n` (1-based) of `text`.
std::string Line(const std::string& text, int n) {
  std::istringstream in(text);
  std::string line;
  for (int i = 0; i < n && std::getline(in, line); ++i) {
  }
  return line;
}

// The PTX lines a schedule line's comment names (`# NAME.ptx:12,40 (...)`).
std::vector<int> PtxLines(const std::string& line, const std::string& ptx) {
  std::vector<int> out;
  // A statement's comment "# X.ptx:N,M", or a barrier declaration's "init at X.ptx:N,M" (the
  // culprit of a wrong init count is the declared count the inits use).
  size_t at = line.find("# " + ptx + ":");
  size_t i = at + 3 + ptx.size();
  if (at == std::string::npos) {
    at = line.find("init at " + ptx + ":");
    if (at == std::string::npos) return out;
    i = at + 9 + ptx.size();
  }
  while (i < line.size() && std::isdigit(static_cast<unsigned char>(line[i]))) {
    int v = 0;
    while (i < line.size() && std::isdigit(static_cast<unsigned char>(line[i]))) {
      v = v * 10 + (line[i++] - '0');
    }
    out.push_back(v);
    if (i < line.size() && line[i] == ',') ++i;
  }
  return out;
}

// The opcodes of the module's instructions on `lines`.
std::vector<std::string> Opcodes(const Module& m, const std::vector<int>& lines) {
  std::vector<std::string> out;
  for (const Function& f : m.functions) {
    for (const Instruction& i : f.instructions) {
      if (std::find(lines.begin(), lines.end(), i.line) != lines.end()) out.push_back(i.opcode);
    }
  }
  return out;
}

void ExpectClean(const std::string& text, const std::string& name,
                 const std::vector<api::Policy>& policies = {
                     api::Policy::kEager, api::Policy::kLazy, api::Policy::kRoundRobin},
                 bool explore = true) {
  auto sch = api::Schedule::FromString(text, name);
  ASSERT_TRUE(sch.ok()) << sch.error().ToString() << "\n" << text;
  for (api::Policy p : policies) {
    api::CheckOptions co;
    co.policy = p;
    auto c = api::Check(*sch, co);
    ASSERT_TRUE(c.ok()) << c.error().ToString();
    EXPECT_EQ(c->outcome, api::Outcome::kCompleted) << text;
    EXPECT_FALSE(c->has_errors()) << (c->findings.empty() ? "" : c->findings[0].ToString());
  }
  if (!explore) return;
  auto e = api::Explore(*sch);
  ASSERT_TRUE(e.ok()) << e.error().ToString();
  EXPECT_EQ(e->verdict, api::Verdict::kVerified)
      << (e->findings.empty() ? "" : e->findings[0].ToString()) << "\n"
      << text;
}

TEST_F(ImporterTest, SingleTmaMatchesTheReviewedGolden) {
  auto t = Import("single_tma.ptx", SingleTma());
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(*t, ReadText("tests/import/golden/single_tma.pipe"));
}

TEST_F(ImporterTest, SingleTmaChecksCleanAndVerifies) {
  auto t = Import("single_tma.ptx", SingleTma());
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  ExpectClean(*t, "single_tma.pipe");
}

TEST_F(ImporterTest, WsPipelineRolesLoopsAndVerdict) {
  for (int k_tiles : {3, 6, 9}) {
    auto t = Import("ws_pipeline.ptx", WsPipeline("ws_pipeline", k_tiles));
    ASSERT_TRUE(t.ok()) << t.status().ToString();
    // The producer warp and the two consumer warps: one role each behaviour.
    EXPECT_NE(t->find("role warp0 threads 32 {"), std::string::npos) << *t;
    EXPECT_NE(t->find("role warp1_2 count 2 threads 32 {"), std::string::npos) << *t;
    EXPECT_NE(t->find("barrier full[4] count 1"), std::string::npos) << *t;
    EXPECT_NE(t->find("barrier empty[4] count 2"), std::string::npos) << *t;
    // The consumers' loop is re-rolled over the k_tiles argument.
    EXPECT_NE(t->find("param ARG1 = " + std::to_string(k_tiles)), std::string::npos) << *t;
    EXPECT_NE(t->find("for k in 0 .. ARG1 {"), std::string::npos) << *t;
    if (k_tiles > 4) {
      // The ring wraps: every slot is a TMA destination, the parity flips per pass.
      EXPECT_NE(t->find("buffer smem[4] bytes 8192"), std::string::npos) << *t;
      EXPECT_NE(t->find("wait full[k % 4] parity (k / 4) & 1"), std::string::npos) << *t;
    } else {
      // Only the first k_tiles slots are ever loaded.
      EXPECT_NE(t->find("buffer smem[" + std::to_string(k_tiles) + "] bytes 8192"),
                std::string::npos)
          << *t;
    }
    ExpectClean(*t, "ws_pipeline.pipe");
  }
}

struct Twin {
  std::string kernel;
  api::Policy policy;
  bool explore;
  std::string code;
  // The opcode of the culprit instruction at the PTX line the finding's schedule line names.
  std::string culprit_opcode;
};

TEST_F(ImporterTest, SeededBugsAreFoundAtTheCulpritsPtxLine) {
  const std::vector<Twin> twins = {
      // Consumers wait on k & 1: they pass a stage's wait before its copy lands and release
      // empty[s] in a phase nobody observed completing (the note M1009, defined on the H100);
      // the producer's next wait on empty[s] then names a phase nobody completes: a deadlock
      // whose cause is the consumer's wait that passed at once (parity-passed-at-once).
      {"ws_pipeline_bad_parity", api::Policy::kEager, false, "P2001",
       "mbarrier.try_wait.parity.shared::cta.b64"},
      // empty[s] counts one release while two consumer warps release every stage: the second
      // release completes the next phase early, and a wait then skips a phase; a re-run with
      // the count set to the 2 releases that come completes (verifier/culprit.h): the culprit
      // is the count of the barrier's mbarrier.init, not the wait.
      {"ws_pipeline_bad_empty", api::Policy::kEager, false, "P2001",
       "mbarrier.init.shared::cta.b64"},
      {"ws_pipeline_bad_empty", api::Policy::kEager, true, "P2001",
       "mbarrier.init.shared::cta.b64"},
  };
  for (const Twin& tw : twins) {
    SCOPED_TRACE(tw.kernel);
    auto m = ReadModule("tests/import/" + tw.kernel + ".ptx");
    ASSERT_TRUE(m.ok());
    auto t = ImportSchedule(*m, WsPipeline("ws_pipeline", 6));
    ASSERT_TRUE(t.ok()) << t.status().ToString();
    if (tw.kernel == "ws_pipeline_bad_empty") {
      // Two rings of count 1, told apart by the source line initialising each.
      EXPECT_NE(t->find("barrier full[4] count 1"), std::string::npos) << *t;
      EXPECT_NE(t->find("barrier empty[4] count 1"), std::string::npos) << *t;
    }
    auto sch = api::Schedule::FromString(*t, tw.kernel + ".pipe");
    ASSERT_TRUE(sch.ok()) << sch.error().ToString();
    std::vector<api::Finding> findings;
    if (tw.explore) {
      auto e = api::Explore(*sch);
      ASSERT_TRUE(e.ok());
      findings = e->findings;
    } else {
      api::CheckOptions co;
      co.policy = tw.policy;
      auto c = api::Check(*sch, co);
      ASSERT_TRUE(c.ok());
      findings = c->findings;
    }
    ASSERT_FALSE(findings.empty()) << *t;
    EXPECT_EQ(findings[0].code, tw.code) << findings[0].ToString();
    const std::string line = Line(*t, findings[0].location.line);
    // A culprit found by repair (a count to change) is the barrier's declaration, whose comment
    // names the PTX lines of its inits: those are the mbarrier.init instructions.
    const bool declaration = line.rfind("barrier ", 0) == 0;
    const std::vector<int> ptx_lines =
        declaration ? PtxLines("# " + line.substr(line.find(", init at ") + 10), tw.kernel + ".ptx")
                    : PtxLines(line, tw.kernel + ".ptx");
    ASSERT_FALSE(ptx_lines.empty()) << line;
    for (const std::string& op : Opcodes(*m, ptx_lines)) {
      EXPECT_EQ(op, declaration ? "mbarrier.init.shared::cta.b64" : tw.culprit_opcode) << line;
    }
    EXPECT_EQ(Opcodes(*m, ptx_lines).size(), ptx_lines.size()) << line;
  }
}

// Half the tile's bytes announced: every full barrier ends with negative tx-count (P2003) and
// the consumers deadlock waiting on it; the schedule's arrive.expect_tx on that barrier names the
// culprit instruction's PTX lines and carries the wrong byte count.
TEST_F(ImporterTest, SeededExpectTxBytesBugIsFoundOnTheFullBarrier) {
  auto m = ReadModule("tests/import/ws_pipeline_bad_tx.ptx");
  ASSERT_TRUE(m.ok());
  auto t = ImportSchedule(*m, WsPipeline("ws_pipeline", 6));
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  auto sch = api::Schedule::FromString(*t, "bad_tx.pipe");
  ASSERT_TRUE(sch.ok());
  auto c = api::Check(*sch);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->outcome, api::Outcome::kDeadlock);
  bool p2003 = false;
  for (const api::Finding& f : c->findings) {
    if (f.code == "P2003" && f.message.find("full[0]") != std::string::npos) p2003 = true;
  }
  EXPECT_TRUE(p2003) << *t;
  auto e = api::Explore(*sch);
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->verdict, api::Verdict::kDeadlock);
  // Hopper may credit the tile in pieces (traces/import/bad_tx/): the phase then completes when
  // half of it has landed and the consumers read while the other half is in flight. Check and
  // explore report that early completion (P2002) at the TMA load whose bytes the phase did not
  // expect, next to the hang.
  for (const std::vector<api::Finding>* fs : {&c->findings, &e->findings}) {
    int early = 0;
    for (const api::Finding& f : *fs) {
      if (f.code != "P2002") continue;
      ++early;
      EXPECT_NE(f.message.find("credited in pieces"), std::string::npos) << f.message;
      EXPECT_NE(f.message.find("full["), std::string::npos) << f.message;
      const std::string line = Line(*t, f.location.line);
      const std::vector<int> ptx_lines = PtxLines(line, "ws_pipeline_bad_tx.ptx");
      ASSERT_FALSE(ptx_lines.empty()) << line;
      for (const std::string& op : Opcodes(*m, ptx_lines)) {
        EXPECT_EQ(op.rfind("cp.async.bulk.tensor.2d.", 0), 0u) << line;
      }
    }
    EXPECT_GT(early, 0);
  }
  // The arrive.expect_tx lines: 4096 bytes, from the mbarrier.arrive.expect_tx instructions.
  std::istringstream in(*t);
  std::string line;
  int found = 0;
  while (std::getline(in, line)) {
    if (line.find("arrive.expect_tx full") == std::string::npos) continue;
    ++found;
    EXPECT_NE(line.find("bytes 4096"), std::string::npos) << line;
    const std::vector<int> lines = PtxLines(line, "ws_pipeline_bad_tx.ptx");
    ASSERT_FALSE(lines.empty()) << line;
    for (const std::string& op : Opcodes(*m, lines)) {
      EXPECT_EQ(op, "mbarrier.arrive.expect_tx.shared::cta.b64") << line;
    }
  }
  EXPECT_GT(found, 0);
}

ImportOptions ClusterPipeline(int k_tiles) {
  ImportOptions o = Legacy();
  o.entry = "cluster_pipeline";
  o.block = {64, 1, 1};
  o.cluster_x = 2;
  o.args = {{1, static_cast<uint64_t>(k_tiles)}};
  o.tensor_maps = {*ParseTensorMapArg("0=u16:64x1024:64x32:128B")};
  return o;
}

// Both CTAs of the cluster: the consumer warp behaves alike in each (one role), the producers
// differ in their half of the tile only, which grows with the rank (one role whose operands read
// `cta_rank`); the multicast and the release to both CTAs (mapa + remote arrive) are imported,
// and the schedule verifies.
TEST_F(ImporterTest, ClusterMulticastPipelineVerifies) {
  for (int k_tiles : {2, 5}) {
    auto t = Import("cluster_pipeline.ptx", ClusterPipeline(k_tiles));
    ASSERT_TRUE(t.ok()) << t.status().ToString();
    EXPECT_NE(t->find("cluster 2x1"), std::string::npos) << *t;
    EXPECT_NE(t->find("role warp1 threads 32 {"), std::string::npos) << *t;
    EXPECT_NE(t->find("role warp0 threads 32 {"), std::string::npos) << *t;
    EXPECT_EQ(t->find("when "), std::string::npos) << *t;
    EXPECT_NE(t->find("+ 32 * cta_rank] -> smem[(2 * k) + cta_rank]"), std::string::npos) << *t;
    EXPECT_NE(t->find("multicast 3"), std::string::npos) << *t;
    EXPECT_NE(t->find("@cta(1)  "), std::string::npos) << *t;  // the release to the peer
    EXPECT_NE(t->find("barrier empty[2] count 2"), std::string::npos) << *t;
    ExpectClean(*t, "cluster_pipeline.pipe");
  }
}

// The consumer releases the stage to its own CTA only: each CTA's empty[s] (count 2) gets one
// arrival per phase, and the producers deadlock at their empty wait.
TEST_F(ImporterTest, ClusterReleaseToOneCtaDeadlocksAtTheProducersWait) {
  auto m = ReadModule("tests/import/cluster_pipeline_bad_release.ptx");
  ASSERT_TRUE(m.ok());
  auto t = ImportSchedule(*m, ClusterPipeline(4));
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  // Each CTA's consumer now releases its own CTA only: one consumer role, its release to
  // `cta_rank`.
  EXPECT_NE(t->find("role warp1 threads 32 {"), std::string::npos) << *t;
  EXPECT_NE(t->find("@cta(cta_rank)"), std::string::npos) << *t;
  EXPECT_EQ(t->find("@cta(1)"), std::string::npos) << *t;
  auto sch = api::Schedule::FromString(*t, "bad_release.pipe");
  ASSERT_TRUE(sch.ok()) << sch.error().ToString();
  auto e = api::Explore(*sch);
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->verdict, api::Verdict::kDeadlock);
  ASSERT_FALSE(e->findings.empty());
  EXPECT_EQ(e->findings[0].code, "P2001");
  bool producer_wait = false;
  for (const api::Related& r : e->findings[0].related) {
    const std::string line = Line(*t, r.location.line);
    if (line.find("wait empty") == std::string::npos) continue;
    const std::vector<int> lines = PtxLines(line, "cluster_pipeline_bad_release.ptx");
    ASSERT_FALSE(lines.empty()) << line;
    for (const std::string& op : Opcodes(*m, lines)) {
      EXPECT_EQ(op, "mbarrier.try_wait.parity.shared::cta.b64") << line;
    }
    producer_wait = true;
  }
  EXPECT_TRUE(producer_wait) << e->findings[0].ToString();
}

TEST_F(ImporterTest, BadInputNamesWhatIsWrong) {
  auto m = ReadModule("tests/import/ws_pipeline.ptx");
  ASSERT_TRUE(m.ok());
  ImportOptions o = WsPipeline("ws_pipeline", 4);
  o.args.clear();
  auto a = ImportSchedule(*m, o);
  ASSERT_FALSE(a.ok());
  EXPECT_EQ(a.status().rule(), "import.missing-arg");
  EXPECT_NE(a.status().message().find("ws_pipeline_param_1"), std::string::npos);
  o = WsPipeline("ws_pipeline", 4);
  o.tensor_maps.clear();
  auto b = ImportSchedule(*m, o);
  ASSERT_FALSE(b.ok());
  EXPECT_EQ(b.status().rule(), "import.missing-tensormap");
  EXPECT_EQ(b.status().where().file, "tests/import/ws_pipeline.ptx");
  EXPECT_GT(b.status().where().line, 0);
  o = WsPipeline("no_such_kernel", 4);
  EXPECT_EQ(ImportSchedule(*m, o).status().rule(), "import.entry-not-found");
  o = WsPipeline("ws_pipeline", 4);
  o.tensor_maps[0].index = 1;  // an int, not a CUtensorMap
  EXPECT_EQ(ImportSchedule(*m, o).status().rule(), "import.bad-option");
  EXPECT_EQ(ParseTensorMapArg("0=u16:64x384").status().rule(), "import.bad-option");
  EXPECT_EQ(ParseTensorMapArg("0=q7:64x384:64x64").status().rule(), "import.bad-option");
  EXPECT_EQ(ParseTensorMapArg("0=u16:64x0:64x64").status().rule(), "import.bad-option");
  EXPECT_EQ(ParseTensorMapArg("0=u16:64x384:64x64:99B").status().rule(), "import.bad-option");
  auto ok = ParseTensorMapArg("2=bf16:64x384:64x64:128B");
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(ok->index, 2);
  EXPECT_EQ(ok->dims, (std::vector<int64_t>{64, 384}));
  EXPECT_EQ(ok->swizzle, "128B");
  // Another target.
  std::string text = ReadText("tests/import/single_tma.ptx");
  const size_t at = text.find("sm_90a");
  ASSERT_NE(at, std::string::npos);
  text.replace(at, 6, "sm_80");
  auto other = ParseModule(text, "sm80.ptx");
  ASSERT_TRUE(other.ok());
  EXPECT_EQ(ImportSchedule(*other, SingleTma()).status().rule(), "import.ptx-target");
}

ImportOptions TmaRoundtrip(int clusters) {
  ImportOptions o = Legacy();
  o.entry = "tma_roundtrip";
  o.block = {128, 1, 1};
  o.clusters = clusters;
  o.args = {{2, 0}, {3, 0}};
  o.tensor_maps = {*ParseTensorMapArg("0=u16:64x256:64x64"),
                   *ParseTensorMapArg("1=u16:64x256:64x64")};
  return o;
}

ImportOptions BulkRoundtrip(int clusters) {
  ImportOptions o = Legacy();
  o.entry = "bulk_roundtrip";
  o.block = {128, 1, 1};
  o.clusters = clusters;
  return o;
}

ImportOptions CpAsyncPipeline(int k_tiles) {
  ImportOptions o = Legacy();
  o.entry = "cp_async_pipeline";
  o.block = {128, 1, 1};
  o.args = {{1, static_cast<uint64_t>(k_tiles)}};
  return o;
}

// The programming guide's TMA round trip: every thread arrives on the barrier (the leader with
// expect_tx), the tile is updated in place by generic writes, fenced, and stored back by TMA.
// Over a grid of 3 clusters (blocks) each block moves its own tile: the leader warp's
// coordinates grow with the cluster (one role whose operands read `cluster_id`).
TEST_F(ImporterTest, GuideTmaRoundTripVerifies) {
  for (int clusters : {1, 3}) {
    auto t = Import("guide_tma.ptx", TmaRoundtrip(clusters));
    ASSERT_TRUE(t.ok()) << t.status().ToString();
    EXPECT_NE(t->find("clusters " + std::to_string(clusters)), std::string::npos) << *t;
    EXPECT_NE(t->find("barrier bar_[1] count 128"), std::string::npos) << *t;
    // Lane 0 of warp 0 arms the barrier, its 31 other lanes arrive plainly.
    EXPECT_NE(t->find("arrive bar_[0] count 31"), std::string::npos) << *t;
    EXPECT_NE(t->find("role warp1_3 count 3 threads 32 {"), std::string::npos) << *t;
    EXPECT_NE(t->find("arrive bar_[0] count 32"), std::string::npos) << *t;
    EXPECT_NE(t->find("bulk.wait 0 read"), std::string::npos) << *t;
    // Each warp writes its own 64 bytes of each 256-byte row group.
    EXPECT_NE(t->find("write tile[0] + (64 + 256 * k) + 64 * agent bytes 64"), std::string::npos)
        << *t;
    if (clusters == 3) {
      EXPECT_NE(t->find("tma.load tmap0 coords [0, 64 * cluster_id] -> tile[0]"),
                std::string::npos)
          << *t;
      EXPECT_NE(t->find("tma.store tmap1 coords [0, 64 * cluster_id] <- tile[0]"),
                std::string::npos)
          << *t;
    } else {
      EXPECT_NE(t->find("tma.store tmap1 coords [0, 0] <- tile[0]"), std::string::npos) << *t;
    }
    EXPECT_EQ(t->find("when "), std::string::npos) << *t;
    ExpectClean(*t, "tma_roundtrip.pipe");
  }
}

// Roles that differ from CTA to CTA only in operands that grow with the cluster or the rank are
// one role whose operands read `cluster_id` / `cta_rank` (reviewed by hand: the leader's TMA
// coordinates per cluster; the producers' half tile and its slot per rank).
TEST_F(ImporterTest, PerCtaRolesFoldIntoExpressionsAsTheReviewedGoldens) {
  auto t = Import("guide_tma.ptx", TmaRoundtrip(3));
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(*t, ReadText("tests/import/golden/tma_roundtrip_3_clusters.pipe"));
  auto c = Import("cluster_pipeline.ptx", ClusterPipeline(5));
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(*c, ReadText("tests/import/golden/cluster_pipeline.pipe"));
}

TEST_F(ImporterTest, GuideBulkRoundTripMatchesTheReviewedGoldenAndVerifies) {
  auto t = Import("guide_tma.ptx", BulkRoundtrip(1));
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(*t, ReadText("tests/import/golden/bulk_roundtrip.pipe"));
  ExpectClean(*t, "bulk_roundtrip.pipe");
}

// The multistage cp.async loop: one role of four warps (each copies its own chunks, named by
// `agent`), the main loop re-rolled over the k_tiles argument, and the schedule verifies.
TEST_F(ImporterTest, CpAsyncPipelineMatchesTheReviewedGoldenAndVerifies) {
  auto t = Import("cp_async_pipeline.ptx", CpAsyncPipeline(6));
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(*t, ReadText("tests/import/golden/cp_async_pipeline.pipe"));
  for (int k_tiles : {1, 2, 4, 8}) {
    SCOPED_TRACE(k_tiles);
    auto u = Import("cp_async_pipeline.ptx", CpAsyncPipeline(k_tiles));
    ASSERT_TRUE(u.ok()) << u.status().ToString();
    EXPECT_NE(u->find("buffer stages[" + std::to_string(std::min(k_tiles, 3)) + "] bytes 4096"),
              std::string::npos)
        << *u;
    EXPECT_NE(u->find("role warp0_3 count 4 threads 32 {"), std::string::npos) << *u;
    EXPECT_NE(u->find("cp.async.wait 1"), std::string::npos) << *u;
    // The search once, on the shortest loop that wraps the ring (not in the sanitized build,
    // where its 5 s become minutes; the importer's memory safety is what that build checks).
#if defined(__SANITIZE_ADDRESS__)
    const bool explore = false;
#else
    const bool explore = k_tiles == 4;
#endif
    ExpectClean(*u, "cp_async_pipeline.pipe",
                {api::Policy::kEager, api::Policy::kLazy, api::Policy::kRoundRobin}, explore);
  }
}

// Every schedule line a finding names (its location and its related agents' locations): the
// PTX opcodes their comments name.
std::vector<std::string> FindingOpcodes(const Module& m, const std::string& text,
                                        const std::string& ptx, const api::Finding& f) {
  std::vector<int> lines = {f.location.line};
  for (const api::Related& r : f.related) lines.push_back(r.location.line);
  // Lines the message names ("(at NAME.pipe:40:5)").
  for (size_t at = f.message.find(".pipe:"); at != std::string::npos;
       at = f.message.find(".pipe:", at + 1)) {
    lines.push_back(std::atoi(f.message.c_str() + at + 6));
  }
  std::vector<std::string> out;
  for (int l : lines) {
    for (const std::string& op : Opcodes(m, PtxLines(Line(text, l), ptx))) out.push_back(op);
  }
  return out;
}

struct NewTwin {
  std::string kernel;
  ImportOptions options = Legacy();
  std::string code;
  std::string culprit_opcode;  // an opcode among the PTX lines the finding names
  std::string cause;           // a word of the finding's message ("" = any)
};

TEST_F(ImporterTest, SeededBugsOfTheNewKernelsAreFoundAtTheCulpritsPtxLine) {
  const std::vector<NewTwin> twins = {
      // wait_group 2 instead of 1: the stage read may still be in flight.
      {"cp_async_pipeline_short_wait", CpAsyncPipeline(6), "P2005", "ld.shared.u32", "cp.async"},
      // No wait on the TMA load's barrier before the tile is read and rewritten.
      {"guide_tma_no_wait", TmaRoundtrip(1), "P2005", "ld.shared.u16", ""},
      // A consumer warp returns after its first stage: the producer's empty wait never ends.
      {"ws_pipeline_early_exit", WsPipeline("ws_pipeline", 6), "P2001",
       "mbarrier.try_wait.parity.shared::cta.b64", "signaller-exited"},
  };
  for (const NewTwin& tw : twins) {
    SCOPED_TRACE(tw.kernel);
    auto m = ReadModule("tests/import/" + tw.kernel + ".ptx");
    ASSERT_TRUE(m.ok());
    auto t = ImportSchedule(*m, tw.options);
    ASSERT_TRUE(t.ok()) << t.status().ToString();
    auto sch = api::Schedule::FromString(*t, tw.kernel + ".pipe");
    ASSERT_TRUE(sch.ok()) << sch.error().ToString();
    auto c = api::Check(*sch);
    ASSERT_TRUE(c.ok());
    const api::Finding* found = nullptr;
    for (const api::Finding& f : c->findings) {
      if (f.code == tw.code) {
        found = &f;
        break;
      }
    }
    ASSERT_NE(found, nullptr) << *t;
    EXPECT_NE(found->message.find(tw.cause), std::string::npos) << found->message;
    const std::vector<std::string> ops = FindingOpcodes(*m, *t, tw.kernel + ".ptx", *found);
    EXPECT_NE(std::find(ops.begin(), ops.end(), tw.culprit_opcode), ops.end())
        << found->ToString() << "\n" << *t;
  }
}

// elect.sync elects the lowest lane of its member mask: a kernel electing within 0xfffffffe
// issues its warp-0 operations from lane 1, and a lane outside the mask is refused.
TEST_F(ImporterTest, ElectSyncElectsTheLowestLaneOfItsMask) {
  const std::string text = std::string(R"(.version 8.7
.target sm_90a
.address_size 64
.visible .entry elect_mask(.param .u32 mask)
{
  .reg .pred %p<3>;
  .reg .b32 %r<8>;
  .shared .align 8 .b64 bar;
  ld.param.u32 %r1, [mask];
  mov.u32 %r2, %tid.x;
  setp.ne.s32 %p1, %r2, 0;
  @%p1 bra SKIP;
  mov.u32 %r3, bar;
  mbarrier.init.shared::cta.b64 [%r3], 1;
SKIP:
  bar.sync 0;
  elect.sync %r4|%p2, %r1;
  @!%p2 bra DONE;
  mov.u32 %r5, bar;
  mbarrier.arrive.shared::cta.b64 _, [%r5];
  st.shared.u32 [%r5+8], %r4;
DONE:
  ret;
}
)");
  auto m = ParseModule(text, "elect.ptx");
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  ImportOptions o = Legacy();
  o.entry = "elect_mask";
  o.block = {32, 1, 1};
  o.args = {{0, 0xffffffff}};
  auto all = ImportSchedule(*m, o);
  ASSERT_TRUE(all.ok()) << all.status().ToString();
  EXPECT_NE(all->find("arrive bar_[0]"), std::string::npos) << *all;
  ExpectClean(*all, "elect.pipe");
  // Lane 0 is outside the mask but executes the elect.sync: undefined in PTX, refused.
  o.args = {{0, 0xfffffffe}};
  auto outside = ImportSchedule(*m, o);
  ASSERT_FALSE(outside.ok());
  EXPECT_EQ(outside.status().rule(), "import.unsupported-control");
  EXPECT_NE(outside.status().message().find("member mask"), std::string::npos);
  EXPECT_EQ(outside.status().where().line, 17);
}

// A branch on loaded data around code that only computes (FA3's softmax: `1 / sum` unless the
// sum is 0) is followed to where its paths join, the registers the region writes unknown; one
// around a protocol instruction, or a loop, stays refused at the branch.
TEST_F(ImporterTest, BranchOnDataAroundArithmeticJoins) {
  auto kernel = [](const std::string& region) {
    return std::string(R"(.version 8.7
.target sm_90a
.address_size 64
.visible .entry data_branch(.param .u64 src, .param .f32 scale)
{
  .reg .pred %p<4>;
  .reg .b32 %r<8>;
  .reg .b64 %rd<4>;
  .reg .f32 %f<8>;
  .shared .align 8 .b64 bar;
  ld.param.u64 %rd1, [src];
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, bar;
  setp.ne.s32 %p1, %r1, 0;
  @%p1 bra SYNC;
  mbarrier.init.shared::cta.b64 [%r2], 32;
SYNC:
  bar.sync 0;
  ld.global.f32 %f1, [%rd1];
  setp.equ.f32 %p2, %f1, 0f00000000;
  mov.f32 %f2, 0f00000000;
  @%p2 bra JOIN;
)") + region + R"(JOIN:
  mbarrier.arrive.shared::cta.b64 _, [%r2];
  ret;
}
)";
  };
  ImportOptions o = Legacy();
  o.entry = "data_branch";
  o.block = {32, 1, 1};
  const std::string arithmetic = R"(  rcp.approx.ftz.f32 %f2, %f1;
  ld.param.f32 %f3, [scale];
  setp.gt.f32 %p3, %f2, %f3;
  @%p3 bra INNER;
  mul.f32 %f2, %f2, %f3;
INNER:
  add.f32 %f2, %f2, %f3;
)";
  auto m = ParseModule(kernel(arithmetic), "data_branch.ptx");
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  auto t = ImportSchedule(*m, o);
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_NE(t->find("arrive bar_[0]"), std::string::npos) << *t;
  ExpectClean(*t, "data_branch.pipe");

  // The arrive would happen on one path only: which one the data picks is unknown.
  o.args = {{0, 0x10000}, {1, 0}};  // the loaded value, not an argument, is what is unknown
  auto protocol = ParseModule(kernel("  mbarrier.arrive.shared::cta.b64 _, [%r2];\n"), "p.ptx");
  ASSERT_TRUE(protocol.ok()) << protocol.status().ToString();
  auto refused = ImportSchedule(*protocol, o);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().rule(), "import.unsupported-control");
  EXPECT_EQ(refused.status().where().line, 22);
  // A backward branch in the region: the paths may never join.
  auto loop = ParseModule(kernel("AGAIN:\n  add.f32 %f2, %f2, %f1;\n  @%p2 bra AGAIN;\n"), "l.ptx");
  ASSERT_TRUE(loop.ok()) << loop.status().ToString();
  auto refused_loop = ImportSchedule(*loop, o);
  ASSERT_FALSE(refused_loop.ok());
  EXPECT_EQ(refused_loop.status().where().line, 22);
}

// Copies of different layouts over the same bytes (FA3's output tile aliases its V stages): one
// buffer of one slot spanning both, each copy at its byte offset in it, so that a store of the
// whole tile and the loads of its halves are seen to touch the same bytes.
TEST_F(ImporterTest, AliasedCopyLayoutsShareOneBuffer) {
  const std::string text = R"(.version 8.7
.target sm_90a
.address_size 64
.visible .entry alias(.param .align 64 .b8 in[128], .param .align 64 .b8 out[128])
{
  .reg .pred %p<3>;
  .reg .b32 %r<8>;
  .reg .b64 %rd<4>;
  .shared .align 1024 .b8 tile[8192];
  .shared .align 8 .b64 bar;
  mov.u32 %r1, %tid.x;
  setp.ne.s32 %p1, %r1, 0;
  @%p1 bra DONE;
  mov.u32 %r2, bar;
  mbarrier.init.shared::cta.b64 [%r2], 1;
  fence.mbarrier_init.release.cluster;
  mov.u64 %rd1, in;
  mov.u64 %rd2, out;
  mov.u32 %r3, tile;
  add.s32 %r4, %r3, 4096;
  mov.u32 %r5, 0;
  mov.u32 %r6, 32;
  mbarrier.arrive.expect_tx.shared::cta.b64 _, [%r2], 8192;
  cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%r3], [%rd1, {%r5, %r5}], [%r2];
  cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%r4], [%rd1, {%r5, %r6}], [%r2];
WAIT:
  mbarrier.try_wait.parity.shared::cta.b64 %p2, [%r2], 0;
  @!%p2 bra WAIT;
  cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%rd2, {%r5, %r5}], [%r3];
  cp.async.bulk.commit_group;
  cp.async.bulk.wait_group.read 0;
DONE:
  ret;
}
)";
  auto m = ParseModule(text, "alias.ptx");
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  ImportOptions o = Legacy();
  o.entry = "alias";
  o.block = {32, 1, 1};
  o.tensor_maps = {*ParseTensorMapArg("0=u16:64x1024:64x32:128B"),
                   *ParseTensorMapArg("1=u16:64x1024:64x64:128B")};
  auto t = ImportSchedule(*m, o);
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_NE(t->find("buffer tile[1] bytes 8192"), std::string::npos) << *t;
  EXPECT_NE(t->find("-> tile[0] bar"), std::string::npos) << *t;
  EXPECT_NE(t->find("-> tile[0] + 4096 bar"), std::string::npos) << *t;
  EXPECT_NE(t->find("<- tile[0]"), std::string::npos) << *t;
  ExpectClean(*t, "alias.pipe");
}

// A wgmma reads its shared operands through matrix descriptors (the address, shifted and masked,
// or-ed with layout bits): the stage it reads is a `use` where wgmma.wait_group retires the
// group, after the bulk load's wait; reading before the wait is a race.
TEST_F(ImporterTest, WgmmaDescriptorsBecomeUsesOfTheirStage) {
  auto kernel = [](bool wait) {
    return std::string(R"(.version 8.7
.target sm_90a
.address_size 64
.visible .entry wg(.param .u64 src)
{
  .reg .pred %p<3>;
  .reg .b32 %r<12>;
  .reg .b64 %rd<8>;
  .reg .f32 %f<5>;
  .shared .align 1024 .b8 tile[8192];
  .shared .align 8 .b64 bar;
  ld.param.u64 %rd1, [src];
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, bar;
  setp.ne.s32 %p1, %r1, 0;
  @%p1 bra SYNC;
  mbarrier.init.shared::cta.b64 [%r2], 1;
  fence.mbarrier_init.release.cluster;
SYNC:
  bar.sync 0;
  @%p1 bra WAIT;
  mbarrier.arrive.expect_tx.shared::cta.b64 _, [%r2], 8192;
  mov.u32 %r3, tile;
  cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%r3], [%rd1], 8192, [%r2];
WAIT:
)") + (wait ? R"(  mbarrier.try_wait.parity.shared::cta.b64 %p2, [%r2], 0;
  @!%p2 bra WAIT;
)"
                : "") +
           R"(  mov.u32 %r4, tile;
  shr.u32 %r5, %r4, 4;
  and.b32 %r6, %r5, 16383;
  cvt.u64.u32 %rd2, %r6;
  or.b64 %rd3, %rd2, 4611686018427387904;
  add.s64 %rd4, %rd3, 64;
  wgmma.fence.sync.aligned;
  wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%f1, %f2, %f3, %f4}, %rd3, %rd4, 1, 1, 1, 1, 1;
  wgmma.commit_group.sync.aligned;
  wgmma.wait_group.sync.aligned 0;
  bar.sync 0;
  @%p1 bra DONE;
  mbarrier.inval.shared::cta.b64 [%r2];
DONE:
  ret;
}
)";
  };
  ImportOptions o = Legacy();
  o.entry = "wg";
  o.block = {128, 1, 1};
  auto m = ParseModule(kernel(true), "wg.ptx");
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  auto t = ImportSchedule(*m, o);
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  const size_t wait = t->find("wait bar_[0] parity 0");
  const size_t use = t->find("use.async tile[0]");  // wgmma reads through the async proxy
  ASSERT_NE(wait, std::string::npos) << *t;
  ASSERT_NE(use, std::string::npos) << *t;
  EXPECT_LT(wait, use) << *t;
  EXPECT_NE(t->find("inval bar_[0]"), std::string::npos) << *t;
  // The use names the wgmma's PTX line (where the descriptors are read).
  EXPECT_NE(t->find("# wg.ptx:35"), std::string::npos) << *t;
  ExpectClean(*t, "wg.pipe");

  auto racy = ParseModule(kernel(false), "wg_nowait.ptx");
  ASSERT_TRUE(racy.ok()) << racy.status().ToString();
  auto r = ImportSchedule(*racy, o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  auto sch = api::Schedule::FromString(*r, "wg_nowait.pipe");
  ASSERT_TRUE(sch.ok()) << sch.error().ToString();
  auto c = api::Check(*sch);
  ASSERT_TRUE(c.ok());
  bool race = false;
  for (const api::Finding& f : c->findings) race = race || f.code == "P2005";
  EXPECT_TRUE(race) << *r;
}

// Lanes of one warp that diverge merge into one agent with the side that does not block placed
// before the other side's first blocking operation: lane 0 issues a bulk load and waits for it
// while the other lanes read the tile without waiting, so the reads come after the issue and
// before the wait in the agent, and the race is found. Lanes that block on different
// operations cannot be one agent.
TEST_F(ImporterTest, DivergentLanesKeepTheNonBlockingSideFirst) {
  auto kernel = [](const std::string& other_lanes) {
    return std::string(R"(.version 8.7
.target sm_90a
.address_size 64
.visible .entry div(.param .u64 src)
{
  .reg .pred %p<4>;
  .reg .b32 %r<12>;
  .reg .b64 %rd<4>;
  .shared .align 1024 .b8 tile[4096];
  .shared .align 8 .b64 bar;
  .shared .align 8 .b64 bar2;
  ld.param.u64 %rd1, [src];
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, bar;
  mov.u32 %r3, tile;
  mov.u32 %r9, bar2;
  setp.ne.s32 %p1, %r1, 0;
  @%p1 bra OTHER;
  mbarrier.init.shared::cta.b64 [%r2], 1;
  mbarrier.init.shared::cta.b64 [%r9], 1;
  mbarrier.arrive.expect_tx.shared::cta.b64 _, [%r2], 4096;
  cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%r3], [%rd1], 4096, [%r2];
WAIT:
  mbarrier.try_wait.parity.shared::cta.b64 %p2, [%r2], 0;
  @!%p2 bra WAIT;
  bra.uni DONE;
OTHER:
)") + other_lanes + R"(DONE:
  ret;
}
)";
  };
  ImportOptions o = Legacy();
  o.entry = "div";
  o.block = {32, 1, 1};
  auto m = ParseModule(kernel("  ld.shared.u32 %r4, [%r3];\n"), "div.ptx");
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  auto t = ImportSchedule(*m, o);
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  const size_t load = t->find("bulk.load tile[0]");
  const size_t use = t->find("use tile[0]");
  const size_t wait = t->find("wait bar_[0] parity 0");
  ASSERT_NE(use, std::string::npos) << *t;
  ASSERT_NE(wait, std::string::npos) << *t;
  EXPECT_LT(load, use) << *t;
  EXPECT_LT(use, wait) << *t;
  auto sch = api::Schedule::FromString(*t, "div.pipe");
  ASSERT_TRUE(sch.ok()) << sch.error().ToString();
  auto e = api::Explore(*sch);
  ASSERT_TRUE(e.ok());
  bool race = false;
  for (const api::Finding& f : e->findings) race = race || f.code == "P2005" || f.code == "P2009";
  EXPECT_TRUE(race) << *t;
  // The other lanes wait on another barrier: two blocking sides.
  auto both = ParseModule(kernel("WAIT2:\n  mbarrier.try_wait.parity.shared::cta.b64 %p3, [%r9], 0;\n"
                                 "  @!%p3 bra WAIT2;\n"),
                          "div2.ptx");
  ASSERT_TRUE(both.ok()) << both.status().ToString();
  auto b = ImportSchedule(*both, o);
  ASSERT_FALSE(b.ok());
  EXPECT_EQ(b.status().rule(), "import.divergent-warp");
}

// A kernel instruction the importer does not model on the protocol path is exit 2 at its line:
// single_tma's TMA load turned into an im2col load.
// persistent_struct.cu's launch: 3 tiles over 2 CTAs, fields of the by-value Params struct.
ImportOptions PersistentStruct() {
  ImportOptions o = Legacy();
  o.entry = "persistent_struct";
  o.block = {384, 1, 1};
  o.clusters = 2;
  const std::string p = "persistent_struct_param_0";
  for (const std::string f : {"+40=3", "+0=2", "+4=2", "+8=1", "+20=2", "+24=3"}) {
    o.params.push_back(*ParseParamArg(p + f));
  }
  o.tensor_maps = {*ParseTensorMapArg(p + "+128=bf16:4096x4096:64x64:128B")};
  return o;
}

// A kernel bug is a finding, not bad input: each twin of persistent_struct.cu imports, and
// `check` reports the bug's rule at a schedule line whose comment names the culprit's PTX lines
// (and its CUDA line).
TEST_F(ImporterTest, KernelBugsInTheStructKernelAreFindingsAtTheirPtxLines) {
  struct Case {
    std::string kernel;
    std::string code;
    std::string culprit_opcode;
  };
  const std::vector<Case> cases = {
      // The init loop stops a stage short: the consumers' wait on the last stage's full barrier
      // is an operation on an uninitialised mbarrier.
      {"persistent_struct_short_init", "M1001", "mbarrier.try_wait.parity.shared::cta.b64"},
      // No __syncthreads after the inits: a consumer can wait before the init.
      {"persistent_struct_no_sync", "M1001", "mbarrier.try_wait.parity.shared::cta.b64"},
      // empty[s] counts one consumer group while two release: the producer's ring laps.
      {"persistent_struct_bad_empty", "P2001", ""},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.kernel);
    auto m = ReadModule("tests/import/" + c.kernel + ".ptx");
    ASSERT_TRUE(m.ok()) << m.status().ToString();
    auto t = ImportSchedule(*m, PersistentStruct());
    ASSERT_TRUE(t.ok()) << t.status().ToString();
    if (c.kernel == "persistent_struct_short_init") {
      EXPECT_NE(t->find("barrier full[3] count 1   # smem + 24576, init at " + c.kernel +
                        ".ptx:"),
                std::string::npos)
          << *t;
      EXPECT_NE(t->find("; element 2 never initialised: no mbarrier.init covers it (a use is "
                        "M1001)"),
                std::string::npos)
          << *t;
    }
    auto sch = api::Schedule::FromString(*t, c.kernel + ".pipe");
    ASSERT_TRUE(sch.ok()) << sch.error().ToString();
    api::CheckOptions co;
    co.policy = api::Policy::kEager;
    auto r = api::Check(*sch, co);
    ASSERT_TRUE(r.ok());
    ASSERT_TRUE(r->has_errors()) << *t;
    const api::Finding* f = nullptr;
    for (const api::Finding& x : r->findings) {
      if (x.severity == api::Severity::kError && f == nullptr) f = &x;
    }
    ASSERT_NE(f, nullptr);
    EXPECT_EQ(f->code, c.code) << f->ToString();
    if (c.culprit_opcode.empty()) continue;
    const std::string line = Line(*t, f->location.line);
    const std::vector<int> ptx_lines = PtxLines(line, c.kernel + ".ptx");
    ASSERT_FALSE(ptx_lines.empty()) << line;
    for (const std::string& op : Opcodes(*m, ptx_lines)) EXPECT_EQ(op, c.culprit_opcode) << line;
    EXPECT_NE(line.find("(" + c.kernel + ".cu:"), std::string::npos) << line;
  }
}

// ImportOptions::generic_reads (issue 34, item 4; on by default): the consumer warps' ld.shared
// reads of a stage become use.generic, and releasing the stage to the next TMA load with no fence.proxy.async on
// the path is P2006 at the load (DeepEP #621's cross-proxy write-after-read; ws_pipeline.cu
// releases with a bare mbarrier.arrive). The same kernel with fence.proxy.async before each
// release (DeepEP PR #642's fix) verifies; wgmma consumers (use.async, the tests around this
// one) stay clean without it.
TEST_F(ImporterTest, GenericReadsCheckTheCrossProxyWriteAfterRead) {
  EXPECT_TRUE(ImportOptions{}.generic_reads);  // the default
  ImportOptions o = WsPipeline("ws_pipeline", 6);
  o.generic_reads = true;
  auto t = Import("ws_pipeline.ptx", o);
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_NE(t->find("use.generic smem["), std::string::npos) << *t;
  auto sch = api::Schedule::FromString(*t, "ws_generic.pipe");
  ASSERT_TRUE(sch.ok()) << sch.error().ToString();
  auto c = api::Check(*sch, api::CheckOptions{});
  ASSERT_TRUE(c.ok()) << c.error().ToString();
  bool war = false;
  for (const api::Finding& f : c->findings) {
    war = war || (f.code == "P2006" && f.message.find("use.generic") != std::string::npos);
  }
  EXPECT_TRUE(war) << *t;
  auto e = api::Explore(*sch);
  ASSERT_TRUE(e.ok());
  EXPECT_NE(e->verdict, api::Verdict::kVerified);
  ASSERT_FALSE(e->findings.empty());
  EXPECT_EQ(e->findings[0].code, "P2006");
  // With the option off (--no-generic-reads) the reads state no proxy: no proxy rule applies.
  ImportOptions off = WsPipeline("ws_pipeline", 6);
  off.generic_reads = false;
  auto plain = Import("ws_pipeline.ptx", off);
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(plain->find("use.generic"), std::string::npos);

  std::string text = ReadText("tests/import/ws_pipeline.ptx");
  const std::string arrive = "\tmbarrier.arrive.release.cta.shared::cta.b64 _,";
  size_t fences = 0;
  for (size_t at = text.find(arrive); at != std::string::npos;
       at = text.find(arrive, at + arrive.size() + 40)) {
    text.insert(at, "\tfence.proxy.async.shared::cta;\n");
    ++fences;
  }
  ASSERT_GT(fences, 0u);
  auto m = ParseModule(text, "ws_pipeline_fenced.ptx");
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  auto f = ImportSchedule(*m, o);
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  EXPECT_NE(f->find("fence.proxy.async"), std::string::npos) << *f;
  ExpectClean(*f, "ws_pipeline_fenced.pipe");
}

// DeepGEMM's descriptors: built once for stage 0, broadcast with __shfl_sync, then stage * bytes
// / 16 added to the low word per k-block. The stage survives: each k-block's wgmma is a use of
// stage k % 2, after the wait on that stage's full barrier, and the kernel verifies; the twin
// whose A descriptor forgets the stage reads stage 0 while the producer refills it (P2005).
TEST_F(ImporterTest, WgmmaDescriptorPlusStageOffsetKeepsTheStage) {
  ImportOptions o = Legacy();
  o.entry = "stage_desc";
  o.block = {160, 1, 1};
  o.args = {{2, 4}};
  o.tensor_maps = {*ParseTensorMapArg("0=bf16:64x4096:64x64:128B"),
                   *ParseTensorMapArg("1=bf16:64x4096:64x8:128B")};
  auto t = Import("stage_desc.ptx", o);
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  const size_t wait = t->find("    wait full[k % 2] parity (k / 2) & 1");
  const size_t use_a = t->find("    use.async smem[k % 2]");
  const size_t use_b = t->find("    use.async smem_16384[k % 2]");
  ASSERT_NE(wait, std::string::npos) << *t;
  ASSERT_NE(use_a, std::string::npos) << *t;
  ASSERT_NE(use_b, std::string::npos) << *t;
  EXPECT_LT(wait, use_a) << *t;
  EXPECT_EQ(t->find("use.async smem[0]"), std::string::npos) << *t;
  ExpectClean(*t, "stage_desc.pipe");

  auto bad = Import("stage_desc_no_stage.ptx", o);
  ASSERT_TRUE(bad.ok()) << bad.status().ToString();
  EXPECT_NE(bad->find("use.async smem[0]"), std::string::npos) << *bad;
  auto sch = api::Schedule::FromString(*bad, "stage_desc_no_stage.pipe");
  ASSERT_TRUE(sch.ok()) << sch.error().ToString();
  auto e = api::Explore(*sch);
  ASSERT_TRUE(e.ok());
  ASSERT_FALSE(e->findings.empty()) << *bad;
  EXPECT_EQ(e->findings[0].code, "P2005") << e->findings[0].ToString();
}

TEST_F(ImporterTest, UnmodelledProtocolInstructionIsNamedAtItsPtxLine) {
  std::string text = ReadText("tests/import/single_tma.ptx");
  const std::string tiled = "global.tile.mbarrier";
  const size_t at = text.find(tiled);
  ASSERT_NE(at, std::string::npos);
  text.replace(at, tiled.size(), "global.im2col.mbarrier");
  auto m = ParseModule(text, "im2col.ptx");
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  auto t = ImportSchedule(*m, SingleTma());
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().rule(), "import.unsupported-op");
  EXPECT_EQ(t.status().where().file, "im2col.ptx");
  const std::vector<std::string> ops = Opcodes(*m, {t.status().where().line});
  ASSERT_EQ(ops.size(), 1u);
  EXPECT_NE(ops[0].find("im2col"), std::string::npos);
  EXPECT_NE(t.status().message().find(ops[0]), std::string::npos) << t.status().ToString();
}

}  // namespace
}  // namespace parity::ptx
