// Replays the H100 TMA placement sweep (traces/tma_sweep/tma_sweep_h100.txt, format in
// traces/tma_sweep/README.md) against the model, without a GPU:
//   - every byte each load wrote (and every byte it left alone) must equal
//     PredictTileLoadImage's prediction;
//   - the tx bytes that completed the phase must equal the model's complete_tx_bytes;
//   - the loads the H100 refused (illegal instruction) must be rejected by PlanTileLoad, and the
//     ones it ran must be accepted.
// The hardware is the authority: a failure here means the model's rule differs; the message
// names the rule and the first differing byte of a few cases.
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "sim/model/swizzle.h"
#include "sim/model/tensor_map.h"
#include "sim/model/tma.h"

namespace parity::model {
namespace {

constexpr uint8_t kSentinel = 0xA5;

// GlobalPattern fmix32-v1, as in gpu/litmus/tma_sweep.cu and the README.
uint8_t GlobalPattern(int64_t offset) {
  uint32_t x = static_cast<uint32_t>(offset) ^ (static_cast<uint32_t>(offset >> 32) * 0x27D4EB2Fu);
  x *= 0x9E3779B1u;
  x ^= x >> 16;
  x *= 0x85EBCA6Bu;
  x ^= x >> 13;
  uint8_t b = static_cast<uint8_t>(x);
  if (b == 0x00 || b == kSentinel || b == 0x7F || b == 0xFF) b ^= 0x3C;
  return b;
}

struct RecordedRun {
  uint64_t expect = 0;
  uint64_t alt = 0;
  bool done = false;
  bool done_alt = false;
  bool clean = false;
};

struct RecordedCase {
  std::map<std::string, std::string> fields;  // the key=value pairs of the case line
  std::vector<RecordedRun> runs;
  int64_t dump_begin = 0;
  std::vector<uint8_t> dump;
  bool aborted = false;
  bool encode_error = false;

  const std::string& Get(const std::string& key) const {
    static const std::string kEmpty;
    const auto it = fields.find(key);
    return it == fields.end() ? kEmpty : it->second;
  }
  uint64_t U64(const std::string& key) const { return std::stoull(Get(key), nullptr, 0); }
};

struct Recording {
  std::vector<std::string> comments;
  std::vector<RecordedCase> cases;
  std::string error;  // parse error, empty when fine
};

std::vector<int64_t> SplitInts(const std::string& s) {
  std::vector<int64_t> out;
  if (s == "-") return out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ',')) out.push_back(std::stoll(item));
  return out;
}

std::map<std::string, std::string> KeyValues(std::istringstream& in) {
  std::map<std::string, std::string> kv;
  std::string tok;
  while (in >> tok) {
    const size_t eq = tok.find('=');
    if (eq != std::string::npos) kv[tok.substr(0, eq)] = tok.substr(eq + 1);
  }
  return kv;
}

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

Recording Load(const std::string& path) {
  Recording rec;
  std::ifstream in(path);
  if (!in) {
    rec.error = "cannot open " + path;
    return rec;
  }
  std::string line;
  RecordedCase* cur = nullptr;
  bool in_dump = false;
  size_t line_no = 0;
  while (std::getline(in, line)) {
    ++line_no;
    if (line.empty()) continue;
    if (line[0] == '#') {
      rec.comments.push_back(line);
      continue;
    }
    std::istringstream ls(line);
    std::string head;
    ls >> head;
    if (head == "case") {
      rec.cases.emplace_back();
      cur = &rec.cases.back();
      cur->fields = KeyValues(ls);
      in_dump = false;
    } else if (cur == nullptr) {
      rec.error = "line " + std::to_string(line_no) + ": data before the first case";
      return rec;
    } else if (head == "run") {
      const auto kv = KeyValues(ls);
      RecordedRun r;
      r.expect = std::stoull(kv.at("expect"));
      r.alt = std::stoull(kv.at("alt"));
      r.done = kv.at("done") == "1";
      r.done_alt = kv.at("done_alt") == "1";
      r.clean = kv.at("clean") == "1";
      cur->runs.push_back(r);
      in_dump = false;
    } else if (head == "dump") {
      const auto kv = KeyValues(ls);
      cur->dump_begin = std::stoll(kv.at("begin"));
      cur->dump.reserve(std::stoull(kv.at("len")));
      in_dump = true;
    } else if (head == "end") {
      in_dump = false;
      cur = nullptr;
    } else if (head == "abort") {
      cur->aborted = true;
    } else if (head == "encode-error") {
      cur->encode_error = true;
    } else if (in_dump) {
      if (head.size() % 2 != 0) {
        rec.error = "line " + std::to_string(line_no) + ": odd hex length";
        return rec;
      }
      for (size_t i = 0; i < head.size(); i += 2) {
        const int hi = HexDigit(head[i]);
        const int lo = HexDigit(head[i + 1]);
        if (hi < 0 || lo < 0) {
          rec.error = "line " + std::to_string(line_no) + ": bad hex";
          return rec;
        }
        cur->dump.push_back(static_cast<uint8_t>(hi * 16 + lo));
      }
    } else {
      rec.error = "line " + std::to_string(line_no) + ": unexpected '" + head + "'";
      return rec;
    }
  }
  return rec;
}

std::string DataPath() {
  const std::string rel = "traces/tma_sweep/tma_sweep_h100.txt";
  if (const char* srcdir = std::getenv("TEST_SRCDIR")) {
    const std::string p = std::string(srcdir) + "/parity/" + rel;
    if (std::ifstream(p)) return p;
  }
  return rel;
}

const Recording& TheRecording() {
  static const Recording rec = Load(DataPath());
  return rec;
}

// The tensor map, coordinates and shared address of a recorded case, in the model's terms.
struct ModelInput {
  TensorMap map;
  TmaCoords coords{};
  uint32_t smem = 0;
};

ModelInput ToModel(const RecordedCase& c) {
  ModelInput in;
  const std::optional<TmaDataType> type = ParseDataType(c.Get("dtype"));
  const std::optional<TmaSwizzle> swizzle = ParseSwizzle(c.Get("swizzle"));
  EXPECT_TRUE(type.has_value()) << c.Get("dtype");
  EXPECT_TRUE(swizzle.has_value()) << c.Get("swizzle");
  in.map.data_type = type.value_or(TmaDataType::kU8);
  in.map.swizzle = swizzle.value_or(TmaSwizzle::kNone);
  in.map.rank = static_cast<uint32_t>(c.U64("rank"));
  in.map.global_address = 0;  // the recorded tensor base is 1 MiB into a cudaMalloc block
  in.map.oob_fill = c.Get("oob") == "nan" ? TmaOobFill::kNanRequestZeroFma : TmaOobFill::kZero;
  in.map.interleave = TmaInterleave::kNone;
  const auto dims = SplitInts(c.Get("dims"));
  const auto strides = SplitInts(c.Get("strides"));
  const auto box = SplitInts(c.Get("box"));
  const auto estr = SplitInts(c.Get("estrides"));
  const auto coords = SplitInts(c.Get("coords"));
  for (uint32_t i = 0; i < in.map.rank; ++i) {
    in.map.global_dim[i] = static_cast<uint64_t>(dims.at(i));
    in.map.box_dim[i] = static_cast<uint32_t>(box.at(i));
    in.map.element_strides[i] = static_cast<uint32_t>(estr.at(i));
    in.coords[i] = static_cast<int32_t>(coords.at(i));
    if (i > 0) in.map.global_strides[i - 1] = static_cast<uint64_t>(strides.at(i - 1));
  }
  in.smem = static_cast<uint32_t>(c.U64("smem"));
  return in;
}

bool Completed(const RecordedCase& c) { return !c.aborted && !c.encode_error && !c.runs.empty(); }

// Which documented rule a mismatching case exercises (for the failure summary).
std::string RuleOf(const RecordedCase& c, const ModelInput& in) {
  const uint32_t row = in.map.box_dim[0] * ElementBytes(in.map.data_type);
  if (in.map.swizzle != TmaSwizzle::kNone && row < SwizzleSpanBytes(in.map.swizzle))
    return "row pitch (rows narrower than the swizzle span)";
  if (in.map.oob_fill == TmaOobFill::kNanRequestZeroFma && c.U64("inb") < c.U64("full"))
    return "NaN fill bytes";
  return "other placement";
}

TEST(TmaSweepReplayTest, RecordingIsWellFormed) {
  const Recording& rec = TheRecording();
  ASSERT_TRUE(rec.error.empty()) << rec.error;
  ASSERT_GE(rec.comments.size(), 3u);
  EXPECT_EQ(rec.comments[0], "# parity-tma-sweep 1");
  EXPECT_NE(rec.comments[1].find("sm_90"), std::string::npos) << rec.comments[1];
  ASSERT_GE(rec.cases.size(), 1000u);
  EXPECT_NE(rec.comments[2].find("cases=" + std::to_string(rec.cases.size())), std::string::npos);
  for (size_t i = 0; i < rec.cases.size(); ++i) {
    const RecordedCase& c = rec.cases[i];
    ASSERT_EQ(c.U64("id"), i);
    EXPECT_FALSE(c.encode_error) << "case " << i;
    if (c.aborted) {
      EXPECT_EQ(c.Get("tag"), "align") << "case " << i << " aborted outside the alignment probes";
      continue;
    }
    ASSERT_FALSE(c.runs.empty()) << "case " << i;
    // The dump spans [-128, roundup(footprint) + 256): at least the full box plus the margins.
    EXPECT_EQ(c.dump_begin, -128) << "case " << i;
    EXPECT_GE(c.dump.size(), c.U64("full") + 128 + 256) << "case " << i;
  }
}

// Independent of the model: in an unswizzled, in-bounds box the first row must be the global
// pattern at the box origin. Catches a wrong GlobalPattern or parser here, before blaming the
// model.
TEST(TmaSweepReplayTest, PatternAndParserAgreeWithHardware) {
  const Recording& rec = TheRecording();
  ASSERT_TRUE(rec.error.empty()) << rec.error;
  int checked = 0;
  for (const RecordedCase& c : rec.cases) {
    if (!Completed(c) || c.Get("swizzle") != "none" || c.Get("tag") != "in") continue;
    const ModelInput in = ToModel(c);
    int64_t origin = in.coords[0] * static_cast<int64_t>(ElementBytes(in.map.data_type));
    for (uint32_t i = 1; i < in.map.rank; ++i)
      origin += in.coords[i] * static_cast<int64_t>(in.map.global_strides[i - 1]);
    const uint32_t row = in.map.box_dim[0] * ElementBytes(in.map.data_type);
    for (uint32_t j = 0; j < row; ++j) {
      ASSERT_EQ(c.dump.at(static_cast<size_t>(-c.dump_begin) + j), GlobalPattern(origin + j))
          << "case " << c.Get("id") << " byte " << j;
    }
    // Nothing before the destination was written.
    for (int64_t j = 0; j < -c.dump_begin; ++j) ASSERT_EQ(c.dump[j], kSentinel);
    ++checked;
  }
  EXPECT_GT(checked, 50);
}

TEST(TmaSweepReplayTest, ModelPredictsEveryByte) {
  const Recording& rec = TheRecording();
  ASSERT_TRUE(rec.error.empty()) << rec.error;
  const GlobalByteFn global = [](uint64_t off) { return GlobalPattern(static_cast<int64_t>(off)); };
  int compared = 0;
  std::map<std::string, int> bad_by_rule;
  std::vector<std::string> examples;
  for (const RecordedCase& c : rec.cases) {
    if (!Completed(c)) continue;
    const ModelInput in = ToModel(c);
    const Expected<std::vector<uint8_t>> image =
        PredictTileLoadImage(in.map, in.coords, in.smem, global, kSentinel);
    ASSERT_TRUE(image.ok()) << "case " << c.Get("id") << ": the model refused a load the H100 ran: "
                            << image.status().ToString();
    ++compared;
    const std::vector<uint8_t>& img = *image;
    // The dump must cover the model's whole footprint, or bytes it predicts would go unchecked.
    const int64_t dump_end = c.dump_begin + static_cast<int64_t>(c.dump.size());
    size_t mismatches = 0;
    std::string first;
    if (static_cast<int64_t>(img.size()) > dump_end) {
      mismatches = 1;
      first = "model footprint ends at " + std::to_string(img.size()) + ", beyond the dump (" +
              std::to_string(dump_end) + ")";
    }
    for (size_t k = 0; k < c.dump.size(); ++k) {
      const int64_t off = c.dump_begin + static_cast<int64_t>(k);
      const uint8_t want =
          off >= 0 && off < static_cast<int64_t>(img.size()) ? img[off] : kSentinel;
      if (c.dump[k] != want) {
        if (mismatches++ == 0) {
          char buf[128];
          std::snprintf(buf, sizeof(buf), "offset %lld: H100 0x%02x, model 0x%02x",
                        static_cast<long long>(off), c.dump[k], want);
          first = buf;
        }
      }
    }
    if (mismatches != 0) {
      const std::string rule = RuleOf(c, in);
      if (bad_by_rule[rule]++ < 3) {
        examples.push_back("case " + c.Get("id") + " [" + rule + "] " + c.Get("dtype") + " " +
                           c.Get("swizzle") + " box=" + c.Get("box") + " coords=" +
                           c.Get("coords") + " smem=" + c.Get("smem") + " oob=" + c.Get("oob") +
                           ": " + std::to_string(mismatches) + " bytes differ, first at " + first);
      }
    }
  }
  EXPECT_GT(compared, 1000);
  std::string summary;
  for (const auto& [rule, n] : bad_by_rule)
    summary += "  " + rule + ": " + std::to_string(n) + " cases\n";
  for (const std::string& e : examples) summary += "  " + e + "\n";
  EXPECT_TRUE(bad_by_rule.empty()) << "the model's shared-memory image differs from the H100 in:\n"
                                   << summary;
}

TEST(TmaSweepReplayTest, CompleteTxCreditsWhatTheHardwareCredits) {
  const Recording& rec = TheRecording();
  ASSERT_TRUE(rec.error.empty()) << rec.error;
  int partly_oob = 0;
  int wholly_oob = 0;
  for (const RecordedCase& c : rec.cases) {
    if (!Completed(c)) continue;
    const ModelInput in = ToModel(c);
    const Expected<TileLoadPlan> plan = PlanTileLoad(in.map, in.coords, in.smem);
    ASSERT_TRUE(plan.ok()) << "case " << c.Get("id") << ": " << plan.status().ToString();
    // Run 0 expected `full` bytes and completed cleanly, so the load credited exactly that.
    const RecordedRun& r0 = c.runs[0];
    ASSERT_TRUE(r0.done && r0.clean) << "case " << c.Get("id") << " run 0 did not complete";
    EXPECT_EQ(plan->footprint.complete_tx_bytes, r0.expect) << "case " << c.Get("id");
    EXPECT_EQ(plan->footprint.box_bytes, r0.expect) << "case " << c.Get("id");
    const uint64_t oob_bytes = plan->footprint.oob_elements * ElementBytes(in.map.data_type);
    EXPECT_EQ(r0.expect - oob_bytes, c.U64("inb")) << "case " << c.Get("id");
    if (c.U64("inb") == 0) ++wholly_oob;
    // Run 1 expected only the in-bounds bytes: it must never have completed cleanly (it either
    // needed the remainder added, or completed early and leaked credit into the next phase).
    if (c.runs.size() > 1) {
      ++partly_oob;
      const RecordedRun& r1 = c.runs[1];
      EXPECT_FALSE(r1.done && r1.clean) << "case " << c.Get("id");
      EXPECT_TRUE(r1.done_alt || (r1.done && !r1.clean)) << "case " << c.Get("id");
    }
  }
  EXPECT_GT(partly_oob, 500);
  EXPECT_GT(wholly_oob, 10);
}

// The H100 raises an illegal instruction for a load whose dimension-0 start is not 16-byte
// aligned (coords[0] x element size % 16 != 0). The model must reject exactly those.
TEST(TmaSweepReplayTest, ModelRejectsExactlyTheLoadsTheHardwareRefused) {
  const Recording& rec = TheRecording();
  ASSERT_TRUE(rec.error.empty()) << rec.error;
  int refused = 0;
  std::string wrong;
  for (const RecordedCase& c : rec.cases) {
    if (c.encode_error) continue;
    const ModelInput in = ToModel(c);
    const Expected<TileLoadPlan> plan = PlanTileLoad(in.map, in.coords, in.smem);
    if (c.aborted) {
      ++refused;
      if (plan.ok()) {
        wrong += "  case " + c.Get("id") + " (" + c.Get("dtype") + " coords=" + c.Get("coords") +
                 "): the H100 refused it (illegal instruction), the model accepts it\n";
      } else if (plan.status().rule() != "tma.coord-alignment") {
        wrong += "  case " + c.Get("id") + ": refused for the wrong reason: " +
                 plan.status().ToString() + "\n";
      }
    } else if (!plan.ok()) {
      wrong += "  case " + c.Get("id") +
               ": the H100 ran it, the model rejects it: " + plan.status().ToString() + "\n";
    }
  }
  EXPECT_GE(refused, 8);
  EXPECT_TRUE(wrong.empty()) << "rule: dimension-0 start must be 16-byte aligned\n" << wrong;
}

}  // namespace
}  // namespace parity::model
