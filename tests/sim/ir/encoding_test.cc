#include "sim/ir/encoding.h"

#include <random>
#include <string>
#include <variant>
#include <vector>

#include "gtest/gtest.h"
#include "sim/engine/control.h"
#include "sim/ir/hash.h"
#include "sim/ir/parser.h"
#include "sim/ir/printer.h"
#include "tests/sim/ir/examples.h"

namespace parity::ir {
namespace {

struct Encoded {
  Program program;
  std::vector<int64_t> values;
  std::vector<uint32_t> words;
};

Encoded EncodeExample(const std::string& name,
                      const std::vector<std::pair<std::string, int64_t>>& overrides = {}) {
  Encoded e;
  auto p = ParseFile(testing::ExamplePath(name));
  EXPECT_TRUE(p.ok()) << p.status().ToString();
  if (!p.ok()) return e;
  e.program = std::move(p).value();
  auto v = BindParams(e.program, overrides);
  EXPECT_TRUE(v.ok()) << v.status().ToString();
  if (!v.ok()) return e;
  e.values = *v;
  auto w = Encode(e.program, e.values);
  EXPECT_TRUE(w.ok()) << w.status().ToString();
  if (w.ok()) e.words = *w;
  return e;
}

TEST(EncodingTest, ExamplesRoundTrip) {
  for (const std::string& name : testing::ExampleNames()) {
    SCOPED_TRACE(name);
    Encoded e = EncodeExample(name);
    ASSERT_GE(e.words.size(), kEncodingHeaderWords);
    auto decoded = Decode(e.words);
    ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
    const Program bound = SubstituteParams(e.program, e.values);
    EXPECT_EQ(Print(*decoded), Print(bound));
    // Re-encoding the decoded program reproduces every word (hash and checksum included).
    std::vector<int64_t> values;
    for (const Param& p : decoded->params) values.push_back(p.default_value);
    auto again = Encode(*decoded, values);
    ASSERT_TRUE(again.ok()) << again.status().ToString();
    EXPECT_EQ(*again, e.words);
  }
}

// Version 3's statements (encoding.h): kWhile (counter var, bound, cond, body words, body) and
// kBreak (no fields); the grid builtins; a round trip to the same words.
TEST(EncodingTest, WhileAndBreakWords) {
  auto p = ParseProgram(
      "clusters 2\n"
      "role r {\n"
      "  let t = grid_cta\n"
      "  while t < 5 bound num_clusters + grid_size {\n"
      "    break\n"
      "  }\n"
      "}\n",
      "w.pipe");
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  auto w = Encode(*p, {});
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  const std::vector<uint32_t>& words = *w;
  const uint32_t body = words[20] + 5;  // the first role's body (header word 20, 5 fields)
  // let t = grid_cta: 3 words; then the while record: head, var, bound, cond, n = 1, break.
  const uint32_t at = body + 3;
  EXPECT_EQ(words[at], static_cast<uint32_t>(EncodedStmtKind::kWhile) | (6u << 8));
  EXPECT_EQ(words[at + 1], 1u);  // slot 1: the hidden counter (t is slot 0)
  EXPECT_EQ(words[at + 4], 1u);  // body words
  EXPECT_EQ(words[at + 5], static_cast<uint32_t>(EncodedStmtKind::kBreak) | (1u << 8));
  auto decoded = Decode(words);
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  EXPECT_EQ(Print(*decoded), Print(*p));
  auto again = Encode(*decoded, {});
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, words);
}

// Shared-memory atomics (`red`, `atom`) are BufferAccess with the kind word's bits 1 and 2 set:
// they parse, print, hash apart from `write` and round-trip through the encoding.
TEST(EncodingTest, AtomicsRoundTrip) {
  auto p = ParseProgram(
      "cluster 2x1\n"
      "buffer h[1] bytes 256\n"
      "role r {\n"
      "  write h[0]\n"
      "  red h[0] bytes 64\n"
      "  atom h[0] @cta(1 - cta_rank)\n"
      "}\n",
      "a.pipe");
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  const std::string text = Print(*p);
  EXPECT_NE(text.find("  red h[0] bytes 64\n"), std::string::npos) << text;
  EXPECT_NE(text.find("  atom h[0] @cta(1 - cta_rank)\n"), std::string::npos) << text;
  const auto& body = p->roles[0].body;
  ASSERT_EQ(body.size(), 3u);
  const auto& red = std::get<BufferAccess>(std::get<Op>(body[1].node));
  EXPECT_TRUE(red.write && red.atomic && !red.returns);
  const auto& atom = std::get<BufferAccess>(std::get<Op>(body[2].node));
  EXPECT_TRUE(atom.write && atom.atomic && atom.returns);
  auto w = Encode(*p, {});
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  auto decoded = Decode(*w);
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  EXPECT_EQ(Print(*decoded), text);
  auto again = Encode(*decoded, {});
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, *w);
  // `red` is not `write` to the content hash.
  auto plain = ParseProgram(
      "cluster 2x1\nbuffer h[1] bytes 256\nrole r {\n  write h[0]\n  write h[0] bytes 64\n"
      "  atom h[0] @cta(1 - cta_rank)\n}\n",
      "a.pipe");
  ASSERT_TRUE(plain.ok());
  EXPECT_NE(ContentHash(*plain), ContentHash(*p));
}

// Tensor map updates: `tensormap.replace` (op kind 27) and the tensormap proxy fences (the
// acquire's map index + 1 above the fence kind byte) print and round-trip.
TEST(EncodingTest, TensormapOpsRoundTrip) {
  auto p = ParseProgram(
      "buffer A[1] bytes 4096\n"
      "barrier b[1] count 1\n"
      "tensormap t0 dtype u8 dims [64, 64] box [64, 64]\n"
      "tensormap t1 dtype u8 dims [64, 64] box [64, 64]\n"
      "role r {\n"
      "  tensormap.replace t1\n"
      "  fence.proxy.tensormap.release\n"
      "  fence.proxy.tensormap.acquire t1\n"
      "}\n",
      "t.pipe");
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  const std::string text = Print(*p);
  EXPECT_NE(text.find("  tensormap.replace t1\n  fence.proxy.tensormap.release\n"
                      "  fence.proxy.tensormap.acquire t1\n"),
            std::string::npos)
      << text;
  const auto& body = p->roles[0].body;
  ASSERT_EQ(body.size(), 3u);
  EXPECT_EQ(std::get<TensormapReplace>(std::get<Op>(body[0].node)).tensor_map, 1u);
  EXPECT_EQ(std::get<Fence>(std::get<Op>(body[2].node)).tensor_map, 1u);
  auto w = Encode(*p, {});
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  auto decoded = Decode(*w);
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  EXPECT_EQ(Print(*decoded), text);
  auto again = Encode(*decoded, {});
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, *w);
  // An unknown tensor map is bad input naming the rule.
  auto bad = ParseProgram("role r {\n  tensormap.replace nope\n}\n", "t.pipe");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().rule(), "parse.unknown-tensormap");
}

// The two observation ops appended in version 2 (encoding.h): their exact words, and a round
// trip. PendingCount = kind 16 + 23, 3 words (token var, result var); GlobalReadback = kind
// 16 + 24, 7 words (buffer ref of 5, result var).
TEST(EncodingTest, PendingCountAndReadbackWords) {
  auto p = ParseProgram(
      "schedule obs\n"
      "buffer src[2] bytes 1024\n"
      "barrier b[1] count 3\n"
      "role t {\n"
      "  arrive.nocomplete b[0] -> tok\n"
      "  pending_count tok -> n\n"
      "  readback src[1] -> v\n"
      "}\n",
      "obs.pipe");
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  auto w = Encode(*p, {});
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  const std::vector<uint32_t>& words = *w;
  EXPECT_EQ(words[1], 6u);  // kEncodingVersion
  // The role body: the arrive (8 words), then the two new records.
  const uint32_t body = words[20] + 5;
  ASSERT_EQ(words[body] & 0xff, 16u + 2u);
  const uint32_t pc_at = body + (words[body] >> 8);
  EXPECT_EQ(words[pc_at], (16u + 23u) | (3u << 8));
  EXPECT_EQ(words[pc_at + 1], 0u);  // token var slot
  EXPECT_EQ(words[pc_at + 2], 1u);  // result var slot
  const uint32_t rb_at = pc_at + 3;
  EXPECT_EQ(words[rb_at], (16u + 24u) | (7u << 8));
  EXPECT_EQ(words[rb_at + 1], 0u);                       // buffer decl
  EXPECT_NE(words[rb_at + 2], kEncodingNone);            // slot expr ref
  EXPECT_EQ(words[rb_at + 3], kEncodingNone);            // offset
  EXPECT_EQ(words[rb_at + 4], kEncodingNone);            // bytes
  EXPECT_EQ(words[rb_at + 5], kEncodingNone);            // cta
  EXPECT_EQ(words[rb_at + 6], 2u);                       // result var slot
  auto decoded = Decode(words);
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  EXPECT_EQ(Print(*decoded), Print(SubstituteParams(*p, {})));
  // A variable slot beyond the role's variables is refused, not trusted.
  std::vector<uint32_t> bad = words;
  bad[pc_at + 1] = 7;
  uint64_t h = 0xcbf29ce484222325ull;  // recompute the checksum (FNV-1a over words 24..)
  for (size_t i = kEncodingHeaderWords; i < bad.size(); ++i) {
    for (int k = 0; k < 4; ++k) {
      h ^= (bad[i] >> (8 * k)) & 0xff;
      h *= 0x100000001b3ull;
    }
  }
  bad[23] = static_cast<uint32_t>(h);
  auto refused = Decode(bad);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("variable slot out of range"), std::string::npos)
      << refused.status().ToString();
}

TEST(EncodingTest, HeaderFields) {
  Encoded e = EncodeExample("gemm_tma_multicast_2x2", {{"STAGES", 3}});
  const std::vector<uint32_t>& w = e.words;
  ASSERT_GE(w.size(), kEncodingHeaderWords);
  EXPECT_EQ(w[0], 0x59545250u);
  // "PRTY" as little-endian bytes.
  EXPECT_EQ(static_cast<char>(w[0] & 0xff), 'P');
  EXPECT_EQ(static_cast<char>(w[0] >> 24), 'Y');
  EXPECT_EQ(w[1], kEncodingVersion);
  EXPECT_EQ(w[3], w.size());
  const uint64_t hash = ContentHash(SubstituteParams(e.program, e.values));
  EXPECT_EQ(w[4], static_cast<uint32_t>(hash));
  EXPECT_EQ(w[5], static_cast<uint32_t>(hash >> 32));
  EXPECT_EQ(w[6], e.program.params.size());
  EXPECT_EQ(w[w[7]], 3u);  // STAGES = 3, lo word
  EXPECT_EQ(w[w[7] + 1], 0u);
  EXPECT_EQ(w[13], 2u);  // buffers
  EXPECT_EQ(w[15], 2u);  // barriers
  EXPECT_EQ(w[17], 2u);  // tensor maps
  EXPECT_EQ(w[19], 2u);  // roles
  // Tensor map tmA: f16 = CU_TENSOR_MAP_DATA_TYPE_FLOAT16 (6), SWIZZLE_128B (3), rank 2.
  EXPECT_EQ(w[w[18]], 6u);
  EXPECT_EQ(w[w[18] + 1], 3u);
  EXPECT_EQ(w[w[18] + 4], 2u);
  // Params are gone from the expressions: the barrier array length is the constant 3.
  const uint32_t size_ref = w[w[16]];
  const uint32_t at = w[8] + size_ref;
  EXPECT_EQ(w[at], 3u);  // kConst + 2 value words
  EXPECT_EQ(w[at + 1], static_cast<uint32_t>(EncodedExprOp::kConst));
  EXPECT_EQ(w[at + 2], 3u);
  // Different params, different encodings and hashes.
  Encoded d = EncodeExample("gemm_tma_multicast_2x2");
  EXPECT_NE(d.words[4], w[4]);
}

TEST(EncodingTest, ShortCircuitAndSelectBytecode) {
  auto p = ParseProgram("role r { let a = 1; let b = a && 2 / a; let c = a ? 1 : 2 / a }\n", "sc.pipe");
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  auto w = Encode(*p, {});
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  auto d = Decode(*w);
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  EXPECT_EQ(Print(*d), Print(*p));
  // Find the opcodes in the pool: a ?: compiles to JZ / J, && to ANDJ / BOOL, no kBinary kAnd.
  std::vector<uint32_t> ops;
  for (uint32_t i = (*w)[8]; i < (*w)[8] + (*w)[9]; ++i) ops.push_back((*w)[i] & 0xff);
  auto has = [&](EncodedExprOp op) {
    for (uint32_t o : ops) if (o == static_cast<uint32_t>(op)) return true;
    return false;
  };
  EXPECT_TRUE(has(EncodedExprOp::kJumpIfZero));
  EXPECT_TRUE(has(EncodedExprOp::kJump));
  EXPECT_TRUE(has(EncodedExprOp::kAndJump));
  EXPECT_TRUE(has(EncodedExprOp::kBool));
}

TEST(EncodingTest, WrongParamCount) {
  Encoded e = EncodeExample("single_tma_load");
  auto w = Encode(e.program, {1});
  ASSERT_FALSE(w.ok());
  EXPECT_EQ(w.status().rule(), "encoding.params");
}

TEST(EncodingTest, CorruptInputIsRejected) {
  Encoded e = EncodeExample("gemm_tma_multicast_2x2");
  ASSERT_FALSE(e.words.empty());
  {
    auto w = e.words;
    w[0] ^= 1;
    auto d = Decode(w);
    ASSERT_FALSE(d.ok());
    EXPECT_EQ(d.status().rule(), "encoding.bad");
    EXPECT_NE(d.status().message().find("magic"), std::string::npos);
  }
  {
    auto w = e.words;
    w[1] = 99;
    EXPECT_NE(Decode(w).status().message().find("version"), std::string::npos);
  }
  {
    auto w = e.words;
    w.pop_back();
    EXPECT_FALSE(Decode(w).ok());
  }
  {
    auto w = e.words;
    w[w.size() / 2] ^= 0x100;
    auto d = Decode(w);
    ASSERT_FALSE(d.ok());
    EXPECT_NE(d.status().message().find("checksum"), std::string::npos);
  }
  EXPECT_FALSE(Decode({}).ok());
}

// Random corruption with the checksum recomputed (so the structural checks are what is
// exercised): never a crash, either an error or a program that prints.
TEST(EncodingTest, FuzzedWordsNeverCrash) {
  std::mt19937_64 rng(7);
  int rejected = 0;
  for (const std::string& name : testing::ExampleNames()) {
    Encoded e = EncodeExample(name);
    ASSERT_FALSE(e.words.empty());
    for (int i = 0; i < 2000; ++i) {
      auto w = e.words;
      const int flips = 1 + static_cast<int>(rng() % 3);
      for (int f = 0; f < flips; ++f) {
        const size_t at = 4 + rng() % (w.size() - 4);
        switch (rng() % 3) {
          case 0: w[at] ^= 1u << (rng() % 32); break;
          case 1: w[at] = static_cast<uint32_t>(rng() % 64); break;
          default: w[at] = 0xffffffffu; break;
        }
      }
      w[3] = static_cast<uint32_t>(w.size());
      w[23] = 0;
      // Recompute the checksum the way the encoder does (re-encode is not possible here).
      uint64_t h = 0xcbf29ce484222325ull;
      for (size_t k = kEncodingHeaderWords; k < w.size(); ++k) {
        for (int b = 0; b < 4; ++b) {
          h ^= (w[k] >> (8 * b)) & 0xff;
          h *= 0x100000001b3ull;
        }
      }
      w[23] = static_cast<uint32_t>(h);  // the checksum word
      auto d = Decode(w);
      if (!d.ok()) {
        ++rejected;
        EXPECT_EQ(d.status().rule(), "encoding.bad");
      } else {
        (void)Print(*d);
      }
    }
  }
  EXPECT_GT(rejected, 1000);
}

}  // namespace
}  // namespace parity::ir

namespace parity::ir {

// Version 3: an alias (5 words per buffer), the sem/scope bits of arrive and wait, and
// fence.acq_rel.cta survive a round trip; a stray high bit in an arrive's kind word is rejected.
TEST(EncodingTest, QualifiersAndAliasesRoundTrip) {
  auto p = ParseProgram(
      "cluster 2x1\n"
      "buffer V[2] bytes 256\n"
      "buffer O[1] bytes 128 aliases V + 128\n"
      "barrier b[1] count 1\n"
      "role r {\n"
      "  arrive.relaxed.cluster b[0] @cta(1)\n"
      "  wait.cluster b[0] parity 0\n"
      "  test_wait.relaxed b[0] parity 0 -> t\n"
      "  fence.acq_rel.cta\n"
      "  use V[1] @cta(1 - cta_rank)\n"
      "  use.generic V[0] bytes 64\n"
      "  use.async V[1]\n"
      "  write O[0] @cta(1)\n"
      "}\n",
      "q.pipe");
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  auto w = Encode(*p, {});
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  auto d = Decode(*w);
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  EXPECT_EQ(Print(*d), Print(*p));
  ASSERT_EQ(d->buffers.size(), 2u);
  EXPECT_EQ(d->buffers[1].alias_of, 0u);
  // The buffer record of O: stages, bytes, align, aliased buffer 0, offset ref.
  EXPECT_EQ((*w)[(*w)[14] + 5 + 3], 0u);
  EXPECT_EQ((*w)[(*w)[14] + 3], kEncodingNone);  // V aliases nothing

  // Corrupt the first op's kind word with an undefined bit: the decoder refuses it.
  std::vector<uint32_t> bad = *w;
  bool corrupted = false;
  for (size_t i = kEncodingHeaderWords; i + 1 < bad.size() && !corrupted; ++i) {
    const uint32_t kind = bad[i] & 0xffu;
    if (kind == static_cast<uint32_t>(EncodedStmtKind::kOpBase) +
                    static_cast<uint32_t>(OpKind::kMbarrierArrive) &&
        (bad[i + 1] & 0xffu) == 0 && (bad[i + 1] & (kSemRelaxedBit | kScopeClusterBit)) ==
                                         (kSemRelaxedBit | kScopeClusterBit)) {
      bad[i + 1] |= 1u << 12;
      corrupted = true;
    }
  }
  ASSERT_TRUE(corrupted);
  // With the checksum made right again, it is the bit check that refuses the record.
  bad[23] = static_cast<uint32_t>(Fnv1a64(std::string_view(
      reinterpret_cast<const char*>(bad.data() + kEncodingHeaderWords),
      (bad.size() - kEncodingHeaderWords) * sizeof(uint32_t))));
  auto refused = Decode(bad);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().rule(), "encoding.bad");
}

// Version 6: each role's control code (header word 28) is the engine's compilation of its body,
// which the GPU executor walks; every corruption of a field of it that the checksum does not
// catch is refused by Decode.
TEST(EncodingTest, ControlCodeIsTheEnginesCompilationAndCorruptionIsRefused) {
  auto p = ParseProgram(
      "barrier b[2] count 1\n"
      "role r {\n"
      "  let n = 3\n"
      "  for i in 0 .. n step 2 {\n"
      "    if i == 2 { break } else { arrive b[0] }\n"
      "  }\n"
      "  while n > 0 bound 5 { let n = n - 1 }\n"
      "  wait b[1] parity 0\n"
      "}\n",
      "c.pipe");
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  auto w = Encode(*p, {});
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  const std::vector<uint32_t>& words = *w;
  const std::vector<engine::Instr> want = engine::CompileRole(p->roles[0]);
  const uint32_t code = words[28];
  ASSERT_EQ(words[code], want.size());
  const uint32_t body = words[20] + 5;
  for (uint32_t pc = 0; pc < want.size(); ++pc) {
    const uint32_t* in = &words[code + 1 + 6 * pc];
    EXPECT_EQ(in[0], static_cast<uint32_t>(want[pc].kind)) << "instruction " << pc;
    EXPECT_EQ(in[1], want[pc].var) << "instruction " << pc;
    EXPECT_EQ(in[4], want[pc].target) << "instruction " << pc;
    if (want[pc].kind == engine::Instr::kOp) {
      // An op's statement offset is its record: the kind word of the same op.
      EXPECT_EQ(words[body + in[5]] & 0xffu,
                static_cast<uint32_t>(EncodedStmtKind::kOpBase) + want[pc].op->index());
    }
  }
  EXPECT_EQ(words[code + 1 + 6 * (want.size() - 1) + 5], words[words[20] + 4]);  // the exit
  auto recheck = [](std::vector<uint32_t>* v) {
    (*v)[23] = static_cast<uint32_t>(Fnv1a64(std::string_view(
        reinterpret_cast<const char*>(v->data() + kEncodingHeaderWords),
        (v->size() - kEncodingHeaderWords) * sizeof(uint32_t))));
  };
  int refused = 0;
  for (uint32_t pc = 0; pc < want.size(); ++pc) {
    for (uint32_t field = 0; field < 6; ++field) {
      std::vector<uint32_t> bad = words;
      bad[code + 1 + 6 * pc + field] += field == 2 || field == 3 ? 3 : 1;
      recheck(&bad);
      auto d = Decode(bad);
      // A ref moved by 3 words may land on another record that decodes to an equal
      // expression only by chance; every other change must be refused.
      if (field == 2 || field == 3) {
        if (!d.ok()) ++refused;
        continue;
      }
      ASSERT_FALSE(d.ok()) << "instruction " << pc << " field " << field;
      EXPECT_EQ(d.status().rule(), "encoding.bad");
      EXPECT_NE(d.status().message().find("control code"), std::string::npos)
          << d.status().ToString();
      ++refused;
    }
  }
  EXPECT_GT(refused, static_cast<int>(4 * want.size()));
  std::vector<uint32_t> short_code = words;
  short_code[code] += 1;
  recheck(&short_code);
  EXPECT_FALSE(Decode(short_code).ok());
}

}  // namespace parity::ir
