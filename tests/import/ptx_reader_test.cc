// The PTX reader on the PTX nvcc emits (in the build) for the kernels of tests/import/, and on bad
// input. The source lines asserted are found in the .cu files themselves, not hard-coded.
#include <algorithm>
#include <cstdint>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "sim/ptx/ptx.h"

namespace parity::ptx {
namespace {

std::string ReadText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream ss(text);
  std::string line;
  while (std::getline(ss, line)) out.push_back(line);
  return out;
}

// The 1-based line range [first, last] of the `asm volatile(...)` statement of a .cu file whose
// text contains `needle` (the nth occurrence).
std::pair<int, int> AsmStatement(const std::string& cu_path, const std::string& needle,
                                 int nth = 0) {
  const std::vector<std::string> lines = Lines(ReadText(cu_path));
  int found = -1;
  for (int i = 0; i < static_cast<int>(lines.size()); ++i) {
    if (lines[i].find(needle) != std::string::npos && nth-- == 0) {
      found = i;
      break;
    }
  }
  if (found < 0) return {0, 0};
  int first = found;
  while (first > 0 && lines[first].find("asm") == std::string::npos) --first;
  int last = found;
  while (last + 1 < static_cast<int>(lines.size()) && lines[last].find(");") == std::string::npos) {
    ++last;
  }
  return {first + 1, last + 1};
}

// The 1-based line of the nth line containing `needle`.
int LineOf(const std::string& cu_path, const std::string& needle, int nth = 0) {
  const std::vector<std::string> lines = Lines(ReadText(cu_path));
  for (int i = 0; i < static_cast<int>(lines.size()); ++i) {
    if (lines[i].find(needle) != std::string::npos && nth-- == 0) return i + 1;
  }
  return 0;
}

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::vector<int> FindOps(const Function& f, const std::string& prefix) {
  std::vector<int> out;
  for (int i = 0; i < static_cast<int>(f.instructions.size()); ++i) {
    if (f.instructions[i].opcode.rfind(prefix, 0) == 0) out.push_back(i);
  }
  return out;
}

constexpr char kHeader[] = ".version 9.0\n.target sm_90a\n.address_size 64\n";

constexpr char kSingleCu[] = "tests/import/reader/single_tma_asm.cu";
constexpr char kSinglePtx[] = "tests/import/reader/single_tma_asm.ptx";
constexpr char kWsCu[] = "tests/import/reader/ws_pipeline_asm.cu";
constexpr char kWsPtx[] = "tests/import/reader/ws_pipeline_asm.ptx";
constexpr char kClusterCu[] = "tests/import/cluster_multicast.cu";
constexpr char kClusterPtx[] = "tests/import/cluster_multicast.ptx";

class NvccPtxTest : public ::testing::Test {
 protected:
  void SetUp() override {
#ifdef PARITY_NO_NVCC
    GTEST_SKIP() << "CUDA (nvcc) was not found when this was built; the kernels' PTX is missing";
#endif
  }
};

TEST_F(NvccPtxTest, SingleTmaModuleHeaderAndEntry) {
  auto m = ReadModule(kSinglePtx);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(m->target, "sm_90a");
  EXPECT_EQ(m->address_size, 64);
  EXPECT_FALSE(m->version.empty());
  EXPECT_TRUE(RequireHopperTarget(*m).ok());

  auto e = FindEntry(*m, "single_tma_load");
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  const Function& f = **e;
  EXPECT_TRUE(f.is_entry);
  EXPECT_TRUE(f.visible);
  EXPECT_NE(f.name, "single_tma_load");  // mangled in the PTX
  EXPECT_EQ(Demangle(f.name), "single_tma_load(CUtensorMap_st, int, int, unsigned short*)");
  // The mangled and the full demangled names find the same entry.
  auto by_mangled = FindEntry(*m, f.name);
  ASSERT_TRUE(by_mangled.ok());
  EXPECT_EQ(*by_mangled, &f);
  auto by_signature = FindEntry(*m, "single_tma_load(CUtensorMap_st, int, int, unsigned short*)");
  ASSERT_TRUE(by_signature.ok());
  EXPECT_EQ(*by_signature, &f);

  // (const __grid_constant__ CUtensorMap, int, int, uint16_t*)
  ASSERT_EQ(f.params.size(), 4u);
  EXPECT_EQ(f.params[0].type, "b8");
  EXPECT_EQ(f.params[0].array_size, 128);
  EXPECT_EQ(f.params[0].SizeBytes(), 128);
  EXPECT_GE(f.params[0].align, 64);
  EXPECT_EQ(f.params[1].type, "u32");
  EXPECT_EQ(f.params[2].type, "u32");
  EXPECT_EQ(f.params[3].type, "u64");
  EXPECT_EQ(f.FindParam(f.params[2].name), &f.params[2]);

  // The two demoted __shared__ variables, with their alignment and size.
  ASSERT_EQ(f.variables.size(), 2u);
  const Variable* tile = nullptr;
  const Variable* bar = nullptr;
  for (const Variable& v : f.variables) {
    EXPECT_EQ(v.space, "shared");
    if (v.name.find("tile") != std::string::npos) tile = &v;
    if (v.name.find("bar") != std::string::npos) bar = &v;
  }
  ASSERT_NE(tile, nullptr);
  ASSERT_NE(bar, nullptr);
  EXPECT_EQ(tile->SizeBytes(), 64 * 64 * 2);
  EXPECT_EQ(tile->align, 128);
  EXPECT_EQ(bar->SizeBytes(), 8);
  EXPECT_EQ(bar->align, 8);

  // .reg .pred %p<3>;
  bool saw_pred_range = false;
  for (const RegDecl& r : f.regs) {
    if (r.type == "pred" && r.name == "%p") saw_pred_range = r.count > 0;
  }
  EXPECT_TRUE(saw_pred_range);
}

TEST_F(NvccPtxTest, SingleTmaProtocolInstructions) {
  auto m = ReadModule(kSinglePtx);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  auto e = FindEntry(*m, "single_tma_load");
  ASSERT_TRUE(e.ok());
  const Function& f = **e;

  // mbarrier.init.shared::cta.b64 [%rX], %rY;
  std::vector<int> init = FindOps(f, "mbarrier.init");
  ASSERT_EQ(init.size(), 1u);
  const Instruction& in = f.instructions[init[0]];
  EXPECT_EQ(in.base, "mbarrier");
  EXPECT_EQ(in.modifiers, (std::vector<std::string>{"init", "shared::cta", "b64"}));
  ASSERT_EQ(in.operands.size(), 2u);
  ASSERT_EQ(in.operands[0].kind, OperandKind::kAddress);
  ASSERT_NE(in.operands[0].AddressBase(), nullptr);
  EXPECT_EQ(in.operands[0].AddressBase()->kind, OperandKind::kRegister);
  EXPECT_EQ(in.operands[1].kind, OperandKind::kRegister);
  auto [init_first, init_last] = AsmStatement(kSingleCu, "mbarrier.init");
  EXPECT_GE(in.source.line, init_first);
  EXPECT_LE(in.source.line, init_last);
  EXPECT_TRUE(EndsWith(m->files.at(in.source.file), kSingleCu)) << m->files.at(in.source.file);
  EXPECT_GT(in.line, 0);

  // mbarrier.arrive.expect_tx.shared::cta.b64 _, [%r], %r;  (the sink operand)
  std::vector<int> expect = FindOps(f, "mbarrier.arrive.expect_tx");
  ASSERT_EQ(expect.size(), 1u);
  const Instruction& ex = f.instructions[expect[0]];
  ASSERT_EQ(ex.operands.size(), 3u);
  EXPECT_EQ(ex.operands[0].kind, OperandKind::kSink);
  EXPECT_EQ(ex.operands[1].kind, OperandKind::kAddress);

  // The tile's byte count reaches the expect_tx as `mov.u32 %rN, 8192` right before it.
  bool saw_bytes = false;
  for (int i = 0; i < expect[0]; ++i) {
    const Instruction& mv = f.instructions[i];
    if (mv.opcode == "mov.u32" && mv.operands.size() == 2 &&
        mv.operands[0].text == ex.operands[2].text &&
        mv.operands[1].kind == OperandKind::kInteger) {
      saw_bytes = mv.operands[1].integer == 8192;
    }
  }
  EXPECT_TRUE(saw_bytes);

  // cp.async.bulk.tensor.2d...: [smem], [tmap, {x, y}], [bar]
  std::vector<int> tma = FindOps(f, "cp.async.bulk.tensor");
  ASSERT_EQ(tma.size(), 1u);
  const Instruction& cp = f.instructions[tma[0]];
  EXPECT_EQ(cp.base, "cp");
  EXPECT_TRUE(cp.HasModifier("2d"));
  EXPECT_TRUE(cp.HasModifier("shared::cluster"));
  EXPECT_TRUE(cp.HasModifier("mbarrier::complete_tx::bytes"));
  EXPECT_FALSE(cp.HasModifier("multicast::cluster"));
  ASSERT_EQ(cp.operands.size(), 3u);
  const Operand& src = cp.operands[1];
  ASSERT_EQ(src.kind, OperandKind::kAddress);
  ASSERT_EQ(src.parts.size(), 2u);
  EXPECT_EQ(src.parts[0].kind, OperandKind::kRegister);
  ASSERT_EQ(src.parts[1].kind, OperandKind::kVector);
  EXPECT_EQ(src.parts[1].parts.size(), 2u);
  // The barrier operand of the copy is the expect_tx's barrier register.
  ASSERT_NE(cp.operands[2].AddressBase(), nullptr);
  EXPECT_EQ(cp.operands[2].AddressBase()->text, ex.operands[1].AddressBase()->text);
  auto [tma_first, tma_last] = AsmStatement(kSingleCu, "cp.async.bulk.tensor.2d");
  EXPECT_GE(cp.source.line, tma_first);
  EXPECT_LE(cp.source.line, tma_last);
  EXPECT_EQ(cp.call_site, cp.source);  // written in the kernel body, nothing inlined

  // Both guarded branches skip thread 0's work: `@%p1 bra $L__BB0_N` lands past the copy.
  int guarded = 0;
  for (int i = 0; i < static_cast<int>(f.instructions.size()); ++i) {
    const Instruction& b = f.instructions[i];
    if (b.base != "bra" || b.guard.empty() || b.guard_negated) continue;
    ++guarded;
    EXPECT_GT(b.BranchTarget(), i);
  }
  EXPECT_EQ(guarded, 2);
}

TEST_F(NvccPtxTest, SingleTmaTryWaitLoopResolvesToItsWait) {
  auto m = ReadModule(kSinglePtx);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  const Function& f = *FindEntry(*m, "single_tma_load").value();
  std::vector<int> waits = FindOps(f, "mbarrier.try_wait");
  ASSERT_EQ(waits.size(), 1u);
  const Instruction& w = f.instructions[waits[0]];
  EXPECT_TRUE(w.HasModifier("parity"));
  ASSERT_EQ(w.operands.size(), 3u);
  EXPECT_EQ(w.operands[0].kind, OperandKind::kRegister);  // the block-scoped `.reg .pred done`
  EXPECT_EQ(w.operands[0].text, "done");
  EXPECT_NE(w.scope, 0);  // inside the inline asm's `{ }`
  // The declaration of `done` is scoped to the block.
  bool scoped_reg = false;
  for (const RegDecl& r : f.regs) scoped_reg |= r.name == "done" && r.scope == w.scope;
  EXPECT_TRUE(scoped_reg);
  // `@!done bra WAIT_0;` right after it jumps back to it.
  const Instruction& b = f.instructions[waits[0] + 1];
  EXPECT_EQ(b.base, "bra");
  EXPECT_EQ(b.guard, "done");
  EXPECT_TRUE(b.guard_negated);
  EXPECT_EQ(b.BranchTarget(), waits[0]);
  auto [first, last] = AsmStatement(kSingleCu, "mbarrier.try_wait");
  EXPECT_GE(w.source.line, first);
  EXPECT_LE(w.source.line, last);
}

TEST_F(NvccPtxTest, WarpSpecialisedEntryAndDynamicShared) {
  auto m = ReadModule(kWsPtx);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  auto e = FindEntry(*m, "ws_pipeline");  // extern "C": not mangled
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  const Function& f = **e;
  EXPECT_EQ(f.name, "ws_pipeline");
  ASSERT_EQ(f.params.size(), 3u);
  EXPECT_EQ(f.params[0].array_size, 128);
  EXPECT_EQ(f.params[1].type, "u32");
  // __launch_bounds__(96)
  ASSERT_EQ(f.directives.count("maxntid"), 1u);
  EXPECT_EQ(f.directives.at("maxntid"), (std::vector<int64_t>{96, 1, 1}));
  // extern __shared__ __align__(1024) uint8_t smem[];
  const Variable* smem = nullptr;
  for (const Variable& v : m->globals) {
    if (v.name == "smem") smem = &v;
  }
  ASSERT_NE(smem, nullptr);
  EXPECT_TRUE(smem->is_extern);
  EXPECT_EQ(smem->space, "shared");
  EXPECT_EQ(smem->align, 1024);
  EXPECT_EQ(smem->SizeBytes(), -1);
  // Barrier addresses are `smem + offset`: `mov.u32 %r, smem` then `add.s32 %r, %r, 32768`.
  bool saw_smem_symbol = false;
  for (const Instruction& i : f.instructions) {
    if (i.opcode == "mov.u32" && i.operands.size() == 2 && i.operands[1].text == "smem") {
      saw_smem_symbol = i.operands[1].kind == OperandKind::kSymbol;
    }
  }
  EXPECT_TRUE(saw_smem_symbol);
  // %tid.x is one register operand.
  bool saw_tid = false;
  for (const Instruction& i : f.instructions) {
    for (const Operand& o : i.operands)
      saw_tid |= o.kind == OperandKind::kRegister && o.text == "%tid.x";
  }
  EXPECT_TRUE(saw_tid);
}

TEST_F(NvccPtxTest, WarpSpecialisedWaitLoopsResolveWithinTheirInlinedCopy) {
  auto m = ReadModule(kWsPtx);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  const Function& f = *FindEntry(*m, "ws_pipeline").value();
  std::vector<int> waits = FindOps(f, "mbarrier.try_wait.parity");
  // Every inlined copy of BarWait repeats the labels LAB_WAIT and DONE in its own `{ }`.
  ASSERT_GE(waits.size(), 3u);
  auto [wait_first, wait_last] = AsmStatement(kWsCu, "mbarrier.try_wait");
  const int full_call = LineOf(kWsCu, "BarWait(Smem(&full[s])");
  const int empty_call = LineOf(kWsCu, "BarWait(Smem(&empty[s])");
  ASSERT_GT(full_call, 0);
  ASSERT_GT(empty_call, 0);
  int from_consumer = 0;
  int from_producer = 0;
  std::vector<int> scopes;
  for (int w : waits) {
    const Instruction& wait = f.instructions[w];
    scopes.push_back(wait.scope);
    // `@p bra DONE; bra LAB_WAIT;` follow: DONE is past the block, LAB_WAIT is this wait.
    ASSERT_LT(w + 2, static_cast<int>(f.instructions.size()));
    const Instruction& done = f.instructions[w + 1];
    const Instruction& again = f.instructions[w + 2];
    EXPECT_EQ(done.guard, "p");
    EXPECT_FALSE(done.guard_negated);
    EXPECT_EQ(done.BranchTarget(), w + 3);
    EXPECT_TRUE(again.guard.empty());
    EXPECT_EQ(again.operands[0].text, "LAB_WAIT");
    EXPECT_EQ(again.BranchTarget(), w);
    // The wait's own line is in BarWait; its call site is the kernel body's call.
    EXPECT_GE(wait.source.line, wait_first);
    EXPECT_LE(wait.source.line, wait_last);
    if (wait.call_site.line == full_call) ++from_consumer;
    if (wait.call_site.line == empty_call) ++from_producer;
  }
  EXPECT_EQ(from_consumer + from_producer, static_cast<int>(waits.size()));
  EXPECT_GE(from_consumer, 1);
  EXPECT_GE(from_producer, 1);
  std::sort(scopes.begin(), scopes.end());
  EXPECT_EQ(std::unique(scopes.begin(), scopes.end()), scopes.end()) << "one scope per copy";
}

TEST_F(NvccPtxTest, WarpSpecialisedProducerLoopHasTheProtocol) {
  auto m = ReadModule(kWsPtx);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  const Function& f = *FindEntry(*m, "ws_pipeline").value();
  // The producer's steady-state loop: a backward guarded branch whose body waits on an `empty`
  // barrier, arms a `full` barrier with expect_tx and issues the TMA on that same barrier.
  const int copy_line_first = AsmStatement(kWsCu, "cp.async.bulk.tensor.2d").first;
  bool found = false;
  for (int i = 0; i < static_cast<int>(f.instructions.size()); ++i) {
    const Instruction& b = f.instructions[i];
    if (b.base != "bra" || b.guard.empty() || b.BranchTarget() < 0 || b.BranchTarget() >= i) {
      continue;
    }
    int wait = -1, expect = -1, copy = -1;
    for (int k = b.BranchTarget(); k < i; ++k) {
      const std::string& op = f.instructions[k].opcode;
      if (op.rfind("mbarrier.try_wait", 0) == 0) wait = k;
      if (op.rfind("mbarrier.arrive.expect_tx", 0) == 0) expect = k;
      if (op.rfind("cp.async.bulk.tensor", 0) == 0) copy = k;
    }
    if (wait < 0 || expect < 0 || copy < 0) continue;
    found = true;
    EXPECT_LT(wait, expect);
    EXPECT_LT(expect, copy);
    const Instruction& ex = f.instructions[expect];
    const Instruction& cp = f.instructions[copy];
    EXPECT_EQ(cp.operands[2].AddressBase()->text, ex.operands[1].AddressBase()->text);
    EXPECT_GE(cp.source.line, copy_line_first);
    // The loop's condition compares with the k_tiles parameter's register.
    EXPECT_EQ(b.guard[0], '%');
  }
  EXPECT_TRUE(found);
  // Loads of shared memory with an offset: `ld.shared.u16 %rs, [%r+8192]`.
  bool saw_offset = false;
  for (const Instruction& i : f.instructions) {
    if (i.opcode == "ld.shared.u16" && i.operands[1].integer == 8192) saw_offset = true;
  }
  EXPECT_TRUE(saw_offset);
  // fma with the float immediate 0f3F000000 = 0.5.
  bool saw_half = false;
  for (const Instruction& i : f.instructions) {
    for (const Operand& o : i.operands) {
      if (o.kind == OperandKind::kFloat && o.text == "0f3F000000") saw_half = o.real == 0.5;
    }
  }
  EXPECT_TRUE(saw_half);
}

TEST_F(NvccPtxTest, EveryTruncationIsAStatusNeverACrash) {
  for (const char* path : {kSinglePtx, kWsPtx, kClusterPtx}) {
    const std::string text = ReadText(path);
    ASSERT_FALSE(text.empty()) << path;
    int errors = 0;
    for (size_t cut = 1; cut < text.size(); cut += 37) {
      auto m = ParseModule(std::string_view(text).substr(0, cut), "cut.ptx");
      if (m.ok()) continue;
      ++errors;
      EXPECT_EQ(m.status().rule().rfind("import.", 0), 0u) << m.status().ToString();
      EXPECT_EQ(m.status().where().file, "cut.ptx");
    }
    EXPECT_GT(errors, 0);
  }
}

TEST_F(NvccPtxTest, MutatedPtxIsAStatusNeverACrash) {
  // Each mutation swaps one byte of real PTX for a character that matters to the grammar.
  const std::string alphabet = "{}[]();:,.@!%_|+-<>0x9f\"/*\n a";
  for (const char* path : {kSinglePtx, kWsPtx, kClusterPtx}) {
    const std::string text = ReadText(path);
    ASSERT_FALSE(text.empty()) << path;
    std::mt19937 rng(28);
    int errors = 0;
    for (int trial = 0; trial < 400; ++trial) {
      std::string mutated = text;
      for (int k = 0; k < 3; ++k) {
        mutated[rng() % mutated.size()] = alphabet[rng() % alphabet.size()];
      }
      auto m = ParseModule(mutated, "mutated.ptx");
      if (m.ok()) {
        for (const Function& f : m->functions) {
          for (const Instruction& i : f.instructions) {
            EXPECT_LT(i.BranchTarget(), static_cast<int>(f.instructions.size()) + 1);
          }
        }
        continue;
      }
      ++errors;
      EXPECT_EQ(m.status().rule().rfind("import.", 0), 0u) << m.status().ToString();
      EXPECT_GT(m.status().where().line, 0) << m.status().ToString();
    }
    EXPECT_GT(errors, 100) << path;
  }
  // Deep nesting is refused, not recursed into.
  auto deep = ParseModule(std::string(kHeader) + ".visible .entry k()\n{\n\tmov.b32 " +
                              std::string(100000, '{') + "%r1;\n}\n",
                          "deep.ptx");
  ASSERT_FALSE(deep.ok());
  EXPECT_EQ(deep.status().rule(), "import.ptx-syntax");
}

TEST_F(NvccPtxTest, UnknownEntryListsTheEntries) {
  auto m = ReadModule(kSinglePtx);
  ASSERT_TRUE(m.ok());
  auto e = FindEntry(*m, "no_such_kernel");
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.status().rule(), "import.entry-not-found");
  EXPECT_NE(e.status().message().find("single_tma_load(CUtensorMap_st"), std::string::npos)
      << e.status().message();
}

const Instruction* FindOne(const Function& f, const std::string& prefix) {
  std::vector<int> all = FindOps(f, prefix);
  return all.size() == 1 ? &f.instructions[all[0]] : nullptr;
}

TEST_F(NvccPtxTest, ClusterKernelDirectivesAndFunctions) {
  auto m = ReadModule(kClusterPtx);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  auto e = FindEntry(*m, "cluster_multicast");
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  const Function& f = **e;
  // __cluster_dims__(2, 1, 1)
  EXPECT_EQ(f.directives.count("explicitcluster"), 1u);
  ASSERT_EQ(f.directives.count("reqnctapercluster"), 1u);
  EXPECT_EQ(f.directives.at("reqnctapercluster"), (std::vector<int64_t>{2, 1, 1}));
  // The __noinline__ Checksum: a prototype and a body, neither an entry; the kernel calls it.
  int funcs = 0;
  for (const Function& g : m->functions) {
    if (g.is_entry) continue;
    ++funcs;
    EXPECT_EQ(BareName(Demangle(g.name)), "Checksum");
    EXPECT_EQ(g.returns.size(), 1u);
  }
  EXPECT_EQ(funcs, 2);
  const Instruction* call = FindOne(f, "call");
  ASSERT_NE(call, nullptr);
  ASSERT_EQ(call->operands.size(), 3u);
  EXPECT_EQ(call->operands[0].kind, OperandKind::kList);
  EXPECT_EQ(BareName(Demangle(call->operands[1].text)), "Checksum");
  // An entry is found by name only among entries: the .func is not a kernel.
  auto not_kernel = FindEntry(*m, "Checksum");
  ASSERT_FALSE(not_kernel.ok());
  EXPECT_EQ(not_kernel.status().rule(), "import.entry-not-found");
}

TEST_F(NvccPtxTest, ClusterKernelProtocolForms) {
  auto m = ReadModule(kClusterPtx);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  const Function& f = *FindEntry(*m, "cluster_multicast").value();

  // Multicast TMA: the CTA mask is a fourth (16-bit register) operand.
  const Instruction* cp = FindOne(f, "cp.async.bulk.tensor");
  ASSERT_NE(cp, nullptr);
  EXPECT_TRUE(cp->HasModifier("multicast::cluster"));
  ASSERT_EQ(cp->operands.size(), 4u);
  EXPECT_EQ(cp->operands[3].kind, OperandKind::kRegister);
  EXPECT_EQ(cp->operands[3].text.rfind("%rs", 0), 0u);
  auto [cp_first, cp_last] = AsmStatement(kClusterCu, "cp.async.bulk.tensor.2d");
  EXPECT_GE(cp->source.line, cp_first);
  EXPECT_LE(cp->source.line, cp_last);

  // elect.sync lane|elected, 0xffffffff: two destinations, both block-scoped registers.
  const Instruction* elect = FindOne(f, "elect.sync");
  ASSERT_NE(elect, nullptr);
  ASSERT_EQ(elect->operands.size(), 2u);
  EXPECT_EQ(elect->operands[0].kind, OperandKind::kRegister);
  EXPECT_EQ(elect->operands[0].text, "lane");
  ASSERT_EQ(elect->operands[0].parts.size(), 1u);
  EXPECT_EQ(elect->operands[0].parts[0].text, "elected");
  EXPECT_EQ(elect->operands[0].parts[0].kind, OperandKind::kRegister);
  EXPECT_EQ(elect->operands[1].integer, 0xffffffffLL);

  // try_wait with an explicit parity immediate and a suspend-time hint.
  const Instruction* wait = FindOne(f, "mbarrier.try_wait");
  ASSERT_NE(wait, nullptr);
  EXPECT_TRUE(wait->HasModifier("acquire"));
  EXPECT_TRUE(wait->HasModifier("cluster"));
  ASSERT_EQ(wait->operands.size(), 4u);
  EXPECT_EQ(wait->operands[2].integer, 0);
  EXPECT_EQ(wait->operands[3].integer, 10000000);
  const int wait_index = static_cast<int>(wait - f.instructions.data());
  EXPECT_EQ(f.instructions[wait_index + 1].BranchTarget(), wait_index);

  // Remote arrives go through mapa to the peer's barrier.
  std::vector<int> mapa = FindOps(f, "mapa.shared::cluster");
  EXPECT_EQ(mapa.size(), 4u);
  std::vector<int> remote_arrive = FindOps(f, "mbarrier.arrive.release.cluster.shared::cluster");
  ASSERT_EQ(remote_arrive.size(), 2u);
  for (int a : remote_arrive) {
    const std::string& bar = f.instructions[a].operands[1].AddressBase()->text;
    bool from_mapa = false;
    for (int p : mapa) from_mapa |= p < a && f.instructions[p].operands[0].text == bar;
    EXPECT_TRUE(from_mapa) << bar;
  }
  // st.async [remote], value, [remote barrier]
  const Instruction* st = FindOne(f, "st.async");
  ASSERT_NE(st, nullptr);
  EXPECT_TRUE(st->HasModifier("mbarrier::complete_tx::bytes"));
  ASSERT_EQ(st->operands.size(), 3u);
  EXPECT_EQ(st->operands[2].kind, OperandKind::kAddress);

  // Ampere cp.async and its group / mbarrier tracking.
  const Instruction* ca = FindOne(f, "cp.async.ca");
  ASSERT_NE(ca, nullptr);
  ASSERT_EQ(ca->operands.size(), 3u);
  EXPECT_EQ(ca->operands[2].integer, 4);
  EXPECT_NE(FindOne(f, "cp.async.mbarrier.arrive.noinc"), nullptr);
  EXPECT_NE(FindOne(f, "cp.async.commit_group"), nullptr);
  const Instruction* wg = FindOne(f, "cp.async.wait_group");
  ASSERT_NE(wg, nullptr);
  EXPECT_EQ(wg->operands[0].integer, 0);

  // Two asm statements of two instructions each: barrier.cluster arrive + wait, twice.
  EXPECT_EQ(FindOps(f, "barrier.cluster.arrive").size(), 2u);
  EXPECT_EQ(FindOps(f, "barrier.cluster.wait").size(), 2u);
  EXPECT_NE(FindOne(f, "fence.proxy.async"), nullptr);
  const Instruction* maxnreg = FindOne(f, "setmaxnreg");
  ASSERT_NE(maxnreg, nullptr);
  EXPECT_EQ(maxnreg->operands[0].integer, 232);
  // %cluster_ctarank is read as a special register.
  bool saw_rank = false;
  for (const Instruction& i : f.instructions) {
    for (const Operand& o : i.operands) saw_rank |= o.text == "%cluster_ctarank";
  }
  EXPECT_TRUE(saw_rank);
}

// Bad input written here (no nvcc needed).

TEST(PtxReaderBadInputTest, NotPtx) {
  auto m = ParseModule("#include <cstdio>\nint main() { return 0; }\n", "k.cu");
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().rule(), "import.not-ptx");
  EXPECT_EQ(m.status().where().file, "k.cu");
  EXPECT_EQ(m.status().where().line, 1);
  auto empty = ParseModule("  // nothing\n", "e.ptx");
  ASSERT_FALSE(empty.ok());
  EXPECT_EQ(empty.status().rule(), "import.not-ptx");
  auto binary = ParseModule(std::string("\x7f"
                                        "ELF\x02\x01",
                                        6),
                            "a.out");
  ASSERT_FALSE(binary.ok());
  EXPECT_EQ(binary.status().rule(), "import.not-ptx");
  auto missing = ReadModule("tests/import/does_not_exist.ptx");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().rule(), "import.file");
}

TEST(PtxReaderBadInputTest, OtherTarget) {
  auto m = ParseModule(".version 8.0\n.target sm_80\n.address_size 64\n", "a.ptx");
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  Status s = RequireHopperTarget(*m);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.rule(), "import.ptx-target");
  EXPECT_EQ(s.where().line, 2);
  EXPECT_NE(s.message().find("sm_80"), std::string::npos);
}

TEST(PtxReaderBadInputTest, TruncatedBody) {
  const std::string text = std::string(kHeader) +
                           ".visible .entry k(\n\t.param .u32 n\n)\n{\n\t.reg .b32 %r<3>;\n"
                           "\tmov.u32 %r1, %tid.x;\n";
  auto m = ParseModule(text, "t.ptx");
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().rule(), "import.ptx-truncated");
  EXPECT_EQ(m.status().where().line, 10);
  EXPECT_NE(m.status().message().find("k"), std::string::npos);
}

TEST(PtxReaderBadInputTest, SyntaxErrorNamesLineAndColumn) {
  const std::string text = std::string(kHeader) +
                           ".visible .entry k()\n{\n\t.reg .b32 %r<3>;\n"
                           "\tmov.u32 %r1, ;\n}\n";
  auto m = ParseModule(text, "s.ptx");
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().rule(), "import.ptx-syntax");
  EXPECT_EQ(m.status().where().line, 7);
  EXPECT_EQ(m.status().where().column, 15);
  EXPECT_EQ(m.status().ToString().rfind("s.ptx:7:15: error[import.ptx-syntax]", 0), 0u)
      << m.status().ToString();
}

TEST(PtxReaderBadInputTest, UndefinedAndDuplicateLabels) {
  auto undefined = ParseModule(
      std::string(kHeader) + ".visible .entry k()\n{\n\tbra.uni $L_nowhere;\n\tret;\n}\n", "l.ptx");
  ASSERT_FALSE(undefined.ok());
  EXPECT_EQ(undefined.status().rule(), "import.ptx-label");
  EXPECT_EQ(undefined.status().where().line, 6);
  EXPECT_EQ(undefined.status().where().column, 10);

  auto twice = ParseModule(
      std::string(kHeader) + ".visible .entry k()\n{\nA:\n\tret;\nA:\n\tret;\n}\n", "d.ptx");
  ASSERT_FALSE(twice.ok());
  EXPECT_EQ(twice.status().rule(), "import.ptx-label");
  EXPECT_EQ(twice.status().where().line, 8);

  // The same label in two sibling scopes is fine, and each branch finds its own.
  auto siblings = ParseModule(std::string(kHeader) +
                                  ".visible .entry k()\n{\n{\nA:\n\tbra A;\n}\n{\nA:\n\tbra A;\n}\n"
                                  "\tret;\n}\n",
                              "ok.ptx");
  ASSERT_TRUE(siblings.ok()) << siblings.status().ToString();
  const Function& f = siblings->functions[0];
  ASSERT_EQ(f.instructions.size(), 3u);
  EXPECT_EQ(f.instructions[0].BranchTarget(), 0);
  EXPECT_EQ(f.instructions[1].BranchTarget(), 1);
}

TEST(PtxReaderBadInputTest, OperandForms) {
  auto m = ParseModule(std::string(kHeader) +
                           ".visible .entry k(.param .align 64 .b8 k_param_0[128])\n{\n"
                           "\t.reg .pred %p<2>;\n\t.reg .b32 %r<4>;\n\t.reg .f64 %fd<2>;\n"
                           "\t.shared .align 16 .b8 buf[2][64];\n"
                           "\tmov.b32 %r1, 0x1F; /* hex */ mov.b32 %r2, -7;\n"
                           "\tmov.f64 %fd1, 0d3FF0000000000000;\n"
                           "\tsetp.lt.s32 %p1|%p2, %r1, %r2;\n"
                           "\tld.shared.u32 %r3, [buf+-4];\n"
                           "\tst.shared.u32 [64], %r3;\n"
                           "\t@!%p1 exit;\n"
                           "\tmov.b64 %rd1, -0x8000000000000000;\n}\n",
                       "o.ptx");
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  const Function& f = m->functions[0];
  EXPECT_EQ(f.params[0].align, 64);
  EXPECT_EQ(f.params[0].array_size, 128);
  ASSERT_EQ(f.variables.size(), 1u);
  EXPECT_EQ(f.variables[0].SizeBytes(), 128);
  ASSERT_EQ(f.instructions.size(), 8u);
  EXPECT_EQ(f.instructions[7].operands[1].integer, INT64_MIN);
  EXPECT_EQ(f.instructions[0].operands[1].integer, 31);
  EXPECT_EQ(f.instructions[1].operands[1].integer, -7);
  EXPECT_EQ(f.instructions[2].operands[1].real, 1.0);
  ASSERT_EQ(f.instructions[3].operands[0].parts.size(), 1u);
  EXPECT_EQ(f.instructions[3].operands[0].parts[0].text, "%p2");
  const Operand& a = f.instructions[4].operands[1];
  ASSERT_NE(a.AddressBase(), nullptr);
  EXPECT_EQ(a.AddressBase()->kind, OperandKind::kSymbol);
  EXPECT_EQ(a.AddressBase()->text, "buf");
  EXPECT_EQ(a.integer, -4);
  EXPECT_TRUE(f.instructions[5].operands[0].address_is_absolute);
  EXPECT_EQ(f.instructions[5].operands[0].integer, 64);
  EXPECT_EQ(f.instructions[6].guard, "%p1");
  EXPECT_TRUE(f.instructions[6].guard_negated);
  EXPECT_EQ(f.instructions[6].opcode, "exit");
}

TEST(PtxReaderBadInputTest, BareNames) {
  EXPECT_EQ(BareName("ns::ws_good<128>(CUtensorMap_st, int*)"), "ws_good");
  EXPECT_EQ(BareName("void f<int>(int)"), "f");
  EXPECT_EQ(BareName("plain"), "plain");
  EXPECT_EQ(BareName("(anonymous namespace)::Checksum(unsigned short const*, int)"), "Checksum");
  EXPECT_EQ(BareName("a::b<(anonymous namespace)::T>::run<2>(int) const"), "run");
  EXPECT_EQ(Demangle("_Z7ws_good14CUtensorMap_stPii"), "ws_good(CUtensorMap_st, int*, int)");
  EXPECT_EQ(Demangle("not_mangled"), "not_mangled");
  // A mangled name the demangler gives up on: the function's own identifier.
  EXPECT_EQ(BareName("_ZN7cutlass13device_kernelINS_4gemmEEEvNT_6ParamsE@"), "device_kernel");
  EXPECT_EQ(BareName("_Z7ws_goodIiEvv@"), "ws_good");
}

// nvcc writes a deeper inlined frame's .loc after a .loc of the kernel body, with `inlined_at`
// naming a frame whose own .loc came earlier (DeepGEMM's waits: `.loc 1 169`, then
// `.loc 6 424, inlined_at 6 371`): the chain is rebuilt from where 6:371 was inlined, so the
// outermost frame is the kernel's line, not the header's.
TEST(PtxReaderInlineTest, ChainIsRebuiltThroughEarlierInlineSites) {
  const std::string text = std::string(kHeader) +
                           ".file 1 \"kernel.cuh\"\n.file 6 \"barrier.h\"\n"
                           ".visible .entry k()\n{\n\t.reg .b32 %r<3>;\n"
                           "\t.loc 1 169 21\n"
                           "\t.loc 6 371 5, function_name $L__info_string18, inlined_at 1 169 21\n"
                           "\t.loc 6 410 5, function_name $L__info_string19, inlined_at 6 371 5\n"
                           "\tmov.u32 %r1, 1;\n"
                           "\t.loc 1 169 21\n"
                           "\tmov.u32 %r2, 2;\n"
                           "\t.loc 6 424 15, function_name $L__info_string19, inlined_at 6 371 5\n"
                           "\tmov.u32 %r1, 3;\n"
                           "\tret;\n}\n";
  auto m = ParseModule(text, "c.ptx");
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  const Function& f = *FindEntry(*m, "k").value();
  ASSERT_GE(f.instructions.size(), 3u);
  const Instruction& first = f.instructions[0];
  ASSERT_EQ(first.inline_chain.size(), 3u);
  EXPECT_EQ(first.inline_chain[0], (SourcePos{1, 169, 21}));
  EXPECT_EQ(first.inline_chain[2], (SourcePos{6, 410, 5}));
  EXPECT_EQ(f.instructions[1].inline_chain.size(), 1u);
  const Instruction& deep = f.instructions[2];
  ASSERT_EQ(deep.inline_chain.size(), 3u);
  EXPECT_EQ(deep.inline_chain[0], (SourcePos{1, 169, 21}));
  EXPECT_EQ(deep.inline_chain[1], (SourcePos{6, 371, 5}));
  EXPECT_EQ(deep.inline_chain[2], (SourcePos{6, 424, 15}));
  EXPECT_EQ(deep.call_site, (SourcePos{1, 169, 21}));
  EXPECT_EQ(deep.source, (SourcePos{6, 424, 15}));
}

// Every register name an instruction uses has one slot (Function::registers): the same name in
// two instructions, a guard and an operand, and a scoped `.reg` of two inline asm blocks (which
// share a name's value) read one slot; immediates and labels have none.
TEST(PtxReaderRegistersTest, OneSlotPerRegisterName) {
  const std::string text = std::string(kHeader) +
                           ".visible .entry k()\n{\n"
                           "\t.reg .pred %p<2>;\n\t.reg .b32 %r<3>;\n"
                           "\tmov.u32 %r1, %tid.x;\n"
                           "\tsetp.eq.u32 %p1, %r1, 0;\n"
                           "\t@%p1 bra $L1;\n"
                           "\t{\n\t.reg .pred p;\n\tsetp.ne.u32 p, %r1, 1;\n"
                           "\t@p add.u32 %r2, %r1, 1;\n\t}\n"
                           "\t{\n\t.reg .pred p;\n\tsetp.ne.u32 p, %r2, 2;\n\t}\n"
                           "$L1:\n\tret;\n}\n";
  auto m = ParseModule(text, "r.ptx");
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  const Function& f = *FindEntry(*m, "k").value();
  ASSERT_EQ(f.instructions.size(), 7u);
  EXPECT_EQ(f.registers, (std::vector<std::string>{"%r1", "%tid.x", "%p1", "p", "%r2"}));
  const auto& in = f.instructions;
  for (const Instruction& inst : in) {
    for (const Operand& o : inst.operands) {
      if (o.kind != OperandKind::kRegister) {
        EXPECT_EQ(o.reg, -1) << o.text;
        continue;
      }
      ASSERT_GE(o.reg, 0) << o.text;
      EXPECT_EQ(f.registers[static_cast<size_t>(o.reg)], o.text);
    }
    if (inst.guard.empty()) {
      EXPECT_EQ(inst.guard_reg, -1);
    }
  }
  EXPECT_EQ(in[0].operands[0].reg, in[1].operands[1].reg);  // %r1
  EXPECT_EQ(in[2].guard_reg, in[1].operands[0].reg);        // @%p1
  EXPECT_EQ(in[2].operands[0].reg, -1);                     // $L1
  EXPECT_EQ(in[3].operands[0].reg, in[5].operands[0].reg);  // p of both blocks
  EXPECT_EQ(in[4].guard_reg, in[3].operands[0].reg);        // @p
  EXPECT_EQ(in[4].operands[2].reg, -1);                     // 1
  EXPECT_NE(in[4].operands[0].reg, in[4].operands[1].reg);  // %r2, %r1
}

}  // namespace
}  // namespace parity::ptx
