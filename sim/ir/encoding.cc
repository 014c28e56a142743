#include "sim/ir/encoding.h"

#include <map>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "sim/engine/control.h"
#include "sim/ir/hash.h"

namespace parity::ir {
namespace {

constexpr uint32_t kMaxArg = (1u << 24) - 1;

// OpKind (sim/ir/ops.h, what the executor switches on) names the alternatives of ir::Op by the
// index that Encode writes.
template <OpKind kKind, typename T>
constexpr bool IsAlternative() {
  return std::is_same_v<std::variant_alternative_t<static_cast<size_t>(kKind), Op>, T>;
}
static_assert(std::variant_size_v<Op> == kNumOpKinds, "an op without an OpKind");
static_assert(IsAlternative<OpKind::kMbarrierInit, MbarrierInit>() &&
              IsAlternative<OpKind::kMbarrierInval, MbarrierInval>() &&
              IsAlternative<OpKind::kMbarrierArrive, MbarrierArrive>() &&
              IsAlternative<OpKind::kMbarrierExpectTx, MbarrierExpectTx>() &&
              IsAlternative<OpKind::kMbarrierCompleteTx, MbarrierCompleteTx>() &&
              IsAlternative<OpKind::kMbarrierWait, MbarrierWait>() &&
              IsAlternative<OpKind::kTmaLoad, TmaLoad>() &&
              IsAlternative<OpKind::kTmaStore, TmaStore>() &&
              IsAlternative<OpKind::kBulkLoad, BulkLoad>() &&
              IsAlternative<OpKind::kBulkStore, BulkStore>() &&
              IsAlternative<OpKind::kBulkCommit, BulkCommit>() &&
              IsAlternative<OpKind::kBulkWait, BulkWait>() &&
              IsAlternative<OpKind::kCpAsync, CpAsync>() &&
              IsAlternative<OpKind::kCpAsyncCommit, CpAsyncCommit>() &&
              IsAlternative<OpKind::kCpAsyncWait, CpAsyncWait>() &&
              IsAlternative<OpKind::kCpAsyncMbarrierArrive, CpAsyncMbarrierArrive>() &&
              IsAlternative<OpKind::kStAsync, StAsync>() &&
              IsAlternative<OpKind::kFence, Fence>() &&
              IsAlternative<OpKind::kClusterArrive, ClusterArrive>() &&
              IsAlternative<OpKind::kClusterWait, ClusterWait>() &&
              IsAlternative<OpKind::kNamedBarrier, NamedBarrier>() &&
              IsAlternative<OpKind::kBufferAccess, BufferAccess>() &&
              IsAlternative<OpKind::kExit, Exit>() &&
              IsAlternative<OpKind::kMbarrierPendingCount, MbarrierPendingCount>() &&
              IsAlternative<OpKind::kGlobalReadback, GlobalReadback>() &&
              IsAlternative<OpKind::kGridDepControl, GridDepControl>() &&
              IsAlternative<OpKind::kGlobalAccess, GlobalAccess>() &&
              IsAlternative<OpKind::kTensormapReplace, TensormapReplace>(),
              "OpKind and ir::Op disagree");

const char* const kDtypes[] = {"u8",  "u16", "u32",  "s32",    "u64",  "s64",    "f16",
                               "f32", "f64", "bf16", "f32ftz", "tf32", "tf32ftz"};
const char* const kSwizzles[] = {"none", "32B", "64B", "128B"};
const char* const kInterleaves[] = {"none", "16B", "32B"};
const char* const kOobFills[] = {"zero", "nan"};

template <size_t N>
uint32_t CodeOf(const char* const (&names)[N], const std::string& s) {
  for (size_t i = 0; i < N; ++i) {
    if (s == names[i]) return static_cast<uint32_t>(i);
  }
  return kEncodingNone;
}

uint32_t Lo(int64_t v) { return static_cast<uint32_t>(static_cast<uint64_t>(v)); }
uint32_t Hi(int64_t v) { return static_cast<uint32_t>(static_cast<uint64_t>(v) >> 32); }

uint32_t Checksum(const std::vector<uint32_t>& w, size_t from) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (size_t i = from; i < w.size(); ++i) {
    for (int b = 0; b < 4; ++b) {
      h ^= (w[i] >> (8 * b)) & 0xff;
      h *= 0x100000001b3ull;
    }
  }
  return static_cast<uint32_t>(h);
}

// ---------------------------------------------------------------------------------------------
uint32_t SemScope(MemSem sem, MemScope scope) {
  return (sem == MemSem::kRelaxed ? kSemRelaxedBit : 0u) |
         (scope == MemScope::kCluster ? kScopeClusterBit : 0u);
}

class Encoder {
 public:
  explicit Encoder(const Program& p) : p_(p) {}

  Expected<std::vector<uint32_t>> Run(const std::vector<int64_t>& values) {
    std::vector<uint32_t> w(kEncodingHeaderWords, 0);
    w[kHdrMagic] = kEncodingMagic;
    w[kHdrVersion] = kEncodingVersion;
    w[kHdrHeaderWords] = kEncodingHeaderWords;
    const uint64_t hash = ContentHash(p_);
    w[kHdrHashLo] = static_cast<uint32_t>(hash);
    w[kHdrHashHi] = static_cast<uint32_t>(hash >> 32);

    w[kHdrNumParams] = static_cast<uint32_t>(values.size());
    w[kHdrParams] = static_cast<uint32_t>(w.size());
    for (int64_t v : values) {
      w.push_back(Lo(v));
      w.push_back(Hi(v));
    }
    // Declarations and roles first (into separate vectors), so that the pool is complete.
    std::vector<uint32_t> buffers, barriers, maps, roles;
    const uint32_t cm = Ref(p_.cluster_m), cn = Ref(p_.cluster_n), cl = Ref(p_.clusters);
    for (const BufferDecl& b : p_.buffers) {
      buffers.insert(buffers.end(),
                     {Ref(b.stages), Ref(b.bytes), Ref(b.align), b.alias_of, Ref(b.alias_offset)});
    }
    for (const BarrierDecl& b : p_.barriers) {
      barriers.insert(barriers.end(), {Ref(b.size), Ref(b.count)});
    }
    for (const TensorMapDecl& m : p_.tensor_maps) {
      maps.insert(maps.end(), {CodeOf(kDtypes, m.dtype), CodeOf(kSwizzles, m.swizzle),
                               CodeOf(kInterleaves, m.interleave), CodeOf(kOobFills, m.oob_fill),
                               static_cast<uint32_t>(m.global_dims.size()),
                               static_cast<uint32_t>(m.global_strides.size()),
                               static_cast<uint32_t>(m.element_strides.size())});
      if (m.box_dims.size() != m.global_dims.size()) {
        return Status("encoding.bad-program", "tensor map `" + m.name + "`: box rank != dims rank");
      }
      for (const auto* list : {&m.global_dims, &m.box_dims, &m.global_strides, &m.element_strides}) {
        for (ExprId e : *list) maps.push_back(Ref(e));
      }
    }
    std::vector<uint32_t> code;
    for (const Role& r : p_.roles) {
      stmt_at_.clear();
      std::vector<uint32_t> body = EncodeBlock(r.body, 0);
      roles.insert(roles.end(), {Ref(r.count), Ref(r.threads), Ref(r.when), r.num_vars,
                                 static_cast<uint32_t>(body.size())});
      roles.insert(roles.end(), body.begin(), body.end());
      RoleCode(r, static_cast<uint32_t>(body.size()), &code);
    }
    std::vector<uint32_t> globals, grids;
    // The executor runs at most two grids (a primary and its dependent); a longer chain is
    // checked by the CPU engine only.
    if (p_.primaries.size() > 1) {
      return Status("encoding.unsupported",
                    "unsupported on the GPU: a chain of " + std::to_string(p_.primaries.size() + 1) +
                        " grids; the executor runs a primary grid and its dependent only (check "
                        "the chain with `parity check` / `explore`)");
    }
    const uint32_t primary = Ref(p_.has_primary() ? p_.primaries[0].clusters : kNoExpr);
    for (const GlobalDecl& g : p_.globals) globals.insert(globals.end(), {Ref(g.slots), Ref(g.bytes)});
    for (const Role& r : p_.roles) grids.push_back(r.grid);
    if (!error_.ok()) return error_;

    w[kHdrPool] = static_cast<uint32_t>(w.size());
    w[kHdrPoolWords] = static_cast<uint32_t>(pool_.size());
    w.insert(w.end(), pool_.begin(), pool_.end());
    w[kHdrClusterM] = cm;
    w[kHdrClusterN] = cn;
    w[kHdrClusters] = cl;
    // A count word and, after it, the offset of the data appended here.
    auto section = [&](size_t count_at, uint32_t count, const std::vector<uint32_t>& data) {
      w[count_at] = count;
      w[count_at + 1] = static_cast<uint32_t>(w.size());
      w.insert(w.end(), data.begin(), data.end());
    };
    section(kHdrNumBuffers, static_cast<uint32_t>(p_.buffers.size()), buffers);
    section(kHdrNumBarriers, static_cast<uint32_t>(p_.barriers.size()), barriers);
    section(kHdrNumMaps, static_cast<uint32_t>(p_.tensor_maps.size()), maps);
    section(kHdrNumRoles, static_cast<uint32_t>(p_.roles.size()), roles);
    w[kHdrPrimary] = primary;
    section(kHdrNumGlobals, static_cast<uint32_t>(p_.globals.size()), globals);
    w[kHdrRoleGrids] = static_cast<uint32_t>(w.size());
    w.insert(w.end(), grids.begin(), grids.end());
    w[kHdrRoleCode] = static_cast<uint32_t>(w.size());
    w.insert(w.end(), code.begin(), code.end());

    w[kHdrStrings] = static_cast<uint32_t>(w.size());
    String(p_.name, &w);
    for (const Param& x : p_.params) String(x.name, &w);
    for (const BufferDecl& x : p_.buffers) String(x.name, &w);
    for (const BarrierDecl& x : p_.barriers) String(x.name, &w);
    for (const TensorMapDecl& x : p_.tensor_maps) String(x.name, &w);
    for (const Role& x : p_.roles) String(x.name, &w);
    for (const Role& x : p_.roles) {
      for (const std::string& v : x.var_names) String(v, &w);
    }
    for (const GlobalDecl& x : p_.globals) String(x.name, &w);
    w[kHdrStringWords] = static_cast<uint32_t>(w.size() - w[kHdrStrings]);
    w[kHdrTotalWords] = static_cast<uint32_t>(w.size());
    w[kHdrChecksum] = Checksum(w, kEncodingHeaderWords);
    return w;
  }

 private:
  static void String(const std::string& s, std::vector<uint32_t>* w) {
    w->push_back(static_cast<uint32_t>(s.size()));
    for (size_t i = 0; i < s.size(); i += 4) {
      uint32_t word = 0;
      for (size_t b = 0; b < 4 && i + b < s.size(); ++b) {
        word |= static_cast<uint32_t>(static_cast<unsigned char>(s[i + b])) << (8 * b);
      }
      w->push_back(word);
    }
  }

  uint32_t Arg(uint64_t v) {
    if (v > kMaxArg && error_.ok()) {
      error_ = Status("encoding.too-large", "a slot, jump or count does not fit in 24 bits");
    }
    return static_cast<uint32_t>(v & kMaxArg);
  }
  uint32_t Word(EncodedExprOp op, uint64_t arg = 0) {
    return static_cast<uint32_t>(op) | (Arg(arg) << 8);
  }

  uint32_t Ref(ExprId id) {
    if (id == kNoExpr) return kEncodingNone;
    if (auto it = memo_.find(id); it != memo_.end()) return it->second;
    const uint32_t at = static_cast<uint32_t>(pool_.size());
    std::vector<uint32_t> code = Code(id);
    pool_.push_back(static_cast<uint32_t>(code.size()));
    pool_.insert(pool_.end(), code.begin(), code.end());
    memo_[id] = at;
    return at;
  }

  // The pool entry of the constant 0 (an assertion's stand-in condition).
  uint32_t ConstZero() {
    if (zero_ == kEncodingNone) {
      zero_ = static_cast<uint32_t>(pool_.size());
      const std::vector<uint32_t> code = {Word(EncodedExprOp::kConst), Lo(0), Hi(0)};
      pool_.push_back(static_cast<uint32_t>(code.size()));
      pool_.insert(pool_.end(), code.begin(), code.end());
    }
    return zero_;
  }
  uint32_t zero_ = kEncodingNone;

  std::vector<uint32_t> Code(ExprId id) {
    std::vector<uint32_t> c;
    if (id >= p_.exprs.size()) {
      if (error_.ok()) error_ = Status("encoding.bad-program", "expression id out of range");
      return c;
    }
    const Expr& e = p_.exprs[id];
    auto append = [&c](const std::vector<uint32_t>& more) { c.insert(c.end(), more.begin(), more.end()); };
    switch (e.kind) {
      case Expr::Kind::kConst:
      case Expr::Kind::kParam:  // SubstituteParams removed these; a stray one is its default.
        c = {Word(EncodedExprOp::kConst), Lo(e.value), Hi(e.value)};
        if (e.kind == Expr::Kind::kParam && error_.ok()) {
          error_ = Status("encoding.bad-program", "a param was not substituted");
        }
        break;
      case Expr::Kind::kVar: c = {Word(EncodedExprOp::kVar, e.index)}; break;
      case Expr::Kind::kBuiltin: c = {Word(EncodedExprOp::kBuiltin, e.op)}; break;
      case Expr::Kind::kUnary:
        c = Code(e.a);
        c.push_back(Word(EncodedExprOp::kUnary, e.op));
        break;
      case Expr::Kind::kBinary: {
        c = Code(e.a);
        std::vector<uint32_t> b = Code(e.b);
        const auto op = static_cast<BinaryOp>(e.op);
        if (op == BinaryOp::kAnd || op == BinaryOp::kOr) {
          c.push_back(Word(op == BinaryOp::kAnd ? EncodedExprOp::kAndJump : EncodedExprOp::kOrJump,
                           b.size() + 1));
          append(b);
          c.push_back(Word(EncodedExprOp::kBool));
        } else {
          append(b);
          c.push_back(Word(EncodedExprOp::kBinary, e.op));
        }
        break;
      }
      case Expr::Kind::kState:  // only in assertions, which are not encoded
        if (error_.ok()) error_ = Status("encoding.bad-program", "a state read outside an assertion");
        c = {Word(EncodedExprOp::kConst), Lo(0), Hi(0)};
        break;
      case Expr::Kind::kSelect: {
        c = Code(e.a);
        std::vector<uint32_t> b = Code(e.b), d = Code(e.c);
        c.push_back(Word(EncodedExprOp::kJumpIfZero, b.size() + 1));
        append(b);
        c.push_back(Word(EncodedExprOp::kJump, d.size()));
        append(d);
        break;
      }
    }
    return c;
  }

  void Bar(const BarrierRef& r, std::vector<uint32_t>* f) {
    f->insert(f->end(), {r.barrier, Ref(r.index), Ref(r.cta)});
  }
  void Buf(const BufferRef& r, std::vector<uint32_t>* f) {
    f->insert(f->end(), {r.buffer, Ref(r.slot), Ref(r.offset), Ref(r.bytes), Ref(r.cta)});
  }

  std::vector<uint32_t> OpFields(const Op& op) {
    std::vector<uint32_t> f;
    std::visit(
        [&](const auto& o) {
          using T = std::decay_t<decltype(o)>;
          if constexpr (std::is_same_v<T, MbarrierInit>) {
            Bar(o.bar, &f);
            f.push_back(Ref(o.count));
          } else if constexpr (std::is_same_v<T, MbarrierInval>) {
            Bar(o.bar, &f);
          } else if constexpr (std::is_same_v<T, MbarrierArrive>) {
            f.push_back(static_cast<uint32_t>(o.kind) | SemScope(o.sem, o.scope));
            Bar(o.bar, &f);
            f.insert(f.end(), {Ref(o.count), Ref(o.expect_tx), Ref(o.mask), o.token_var});
          } else if constexpr (std::is_same_v<T, MbarrierExpectTx> ||
                               std::is_same_v<T, MbarrierCompleteTx>) {
            Bar(o.bar, &f);
            f.push_back(Ref(o.bytes));
          } else if constexpr (std::is_same_v<T, MbarrierWait>) {
            Bar(o.bar, &f);
            f.insert(f.end(), {Ref(o.parity), o.token_var,
                               uint32_t{o.test_only} | SemScope(o.sem, o.scope), o.result_var});
          } else if constexpr (std::is_same_v<T, TmaLoad>) {
            f.push_back(o.tensor_map);
            Buf(o.dst, &f);
            Bar(o.bar, &f);
            f.push_back(Ref(o.multicast_mask));
            f.push_back(static_cast<uint32_t>(o.coords.size()));
            for (ExprId e : o.coords) f.push_back(Ref(e));
          } else if constexpr (std::is_same_v<T, TmaStore>) {
            f.push_back(o.tensor_map);
            Buf(o.src, &f);
            f.push_back(static_cast<uint32_t>(o.coords.size()));
            for (ExprId e : o.coords) f.push_back(Ref(e));
          } else if constexpr (std::is_same_v<T, BulkLoad>) {
            Buf(o.dst, &f);
            Bar(o.bar, &f);
            f.push_back(Ref(o.multicast_mask));
          } else if constexpr (std::is_same_v<T, BulkStore>) {
            Buf(o.src, &f);
          } else if constexpr (std::is_same_v<T, BulkWait>) {
            f.insert(f.end(), {Ref(o.pending), uint32_t{o.read}});
          } else if constexpr (std::is_same_v<T, CpAsync>) {
            Buf(o.dst, &f);
          } else if constexpr (std::is_same_v<T, CpAsyncWait>) {
            f.push_back(Ref(o.pending));
          } else if constexpr (std::is_same_v<T, CpAsyncMbarrierArrive>) {
            Bar(o.bar, &f);
            f.push_back(uint32_t{o.noinc});
          } else if constexpr (std::is_same_v<T, StAsync>) {
            Buf(o.dst, &f);
            Bar(o.bar, &f);
          } else if constexpr (std::is_same_v<T, Fence>) {
            // The low byte is the kind; an acquire of a tensor map adds its index + 1 above it.
            const uint32_t tm =
                o.kind == Fence::Kind::kProxyTensormapAcquire ? o.tensor_map + 1 : 0;
            f.push_back(static_cast<uint32_t>(o.kind) | tm << 8);
          } else if constexpr (std::is_same_v<T, TensormapReplace>) {
            f.push_back(o.tensor_map);
          } else if constexpr (std::is_same_v<T, ClusterArrive>) {
            f.push_back(uint32_t{o.relaxed});
          } else if constexpr (std::is_same_v<T, NamedBarrier>) {
            f.insert(f.end(), {Ref(o.id), Ref(o.threads), uint32_t{o.sync}});
          } else if constexpr (std::is_same_v<T, BufferAccess>) {
            Buf(o.buf, &f);
            // Bit 0 write, bit 1 atomic, bit 2 returns (exec.h reads bit 0 only), bits 3..4 the
            // read's proxy (0 for a plain `use`, so the words of other schedules are unchanged).
            f.push_back(uint32_t{o.write} | uint32_t{o.atomic} << 1 | uint32_t{o.returns} << 2 |
                        static_cast<uint32_t>(o.proxy) << 3);
          } else if constexpr (std::is_same_v<T, MbarrierPendingCount>) {
            f.insert(f.end(), {o.token_var, o.result_var});
          } else if constexpr (std::is_same_v<T, GlobalReadback>) {
            Buf(o.buf, &f);
            f.push_back(o.result_var);
          } else if constexpr (std::is_same_v<T, GridDepControl>) {
            f.push_back(static_cast<uint32_t>(o.kind));
          } else if constexpr (std::is_same_v<T, GlobalAccess>) {
            f.insert(f.end(), {o.global, Ref(o.slot), Ref(o.offset), Ref(o.bytes),
                               uint32_t{o.write}});
          } else {
            static_assert(std::is_same_v<T, BulkCommit> || std::is_same_v<T, CpAsyncCommit> ||
                          std::is_same_v<T, ClusterWait> || std::is_same_v<T, Exit>);
          }
        },
        op);
    return f;
  }

  void Record(uint32_t kind, const std::vector<uint32_t>& fields, std::vector<uint32_t>* out) {
    out->push_back(kind | (Arg(fields.size() + 1) << 8));
    out->insert(out->end(), fields.begin(), fields.end());
  }

  // The role's control code (encoding.h): the engine's compilation of its body (CompileRole),
  // with expression refs for ExprIds and each statement's record offset in the body.
  void RoleCode(const Role& role, uint32_t body_words, std::vector<uint32_t>* out) {
    const std::vector<engine::Instr> code = engine::CompileRole(role);
    out->push_back(Arg(code.size()));
    for (uint32_t pc = 0; pc < code.size(); ++pc) {
      const engine::Instr& in = code[pc];
      uint32_t kind = in.kind, var = in.var, e1 = Ref(in.e1), target = in.target;
      if (in.kind == engine::Instr::kAssert) {
        // Assertions are the model's to check (the body's record is `if 0 { }`): on the GPU
        // the instruction falls through, as that record's compilation would.
        kind = engine::Instr::kJumpIfFalse;
        var = 0;
        e1 = ConstZero();
        target = pc + 1;
      } else if (in.kind == engine::Instr::kForInit &&
                 std::get<For>(in.stmt->node).cond != kNoExpr) {
        e1 = ConstZero();  // a while's pass counter starts at 0 (the record has no `lo`)
      }
      out->insert(out->end(), {kind, var, e1, Ref(in.e2), target,
                               in.stmt == nullptr ? body_words : stmt_at_.at(in.stmt)});
    }
  }

  // `base`: the word offset of the block's first record in the role body.
  std::vector<uint32_t> EncodeBlock(const Block& block, uint32_t base) {
    std::vector<uint32_t> out;
    for (const Stmt& s : block) {
      const uint32_t at = base + static_cast<uint32_t>(out.size());
      stmt_at_[&s] = at;
      if (const auto* let = std::get_if<Let>(&s.node)) {
        Record(static_cast<uint32_t>(EncodedStmtKind::kLet), {let->var, Ref(let->value)}, &out);
      } else if (const auto* f = std::get_if<For>(&s.node); f != nullptr && f->cond != kNoExpr) {
        std::vector<uint32_t> body = EncodeBlock(f->body, at + 5);
        std::vector<uint32_t> fields = {f->var, Ref(f->hi), Ref(f->cond),
                                        static_cast<uint32_t>(body.size())};
        fields.insert(fields.end(), body.begin(), body.end());
        Record(static_cast<uint32_t>(EncodedStmtKind::kWhile), fields, &out);
      } else if (std::holds_alternative<Break>(s.node)) {
        Record(static_cast<uint32_t>(EncodedStmtKind::kBreak), {}, &out);
      } else if (const auto* f = std::get_if<For>(&s.node)) {
        std::vector<uint32_t> body = EncodeBlock(f->body, at + 6);
        std::vector<uint32_t> fields = {f->var, Ref(f->lo), Ref(f->hi), Ref(f->step),
                                        static_cast<uint32_t>(body.size())};
        fields.insert(fields.end(), body.begin(), body.end());
        Record(static_cast<uint32_t>(EncodedStmtKind::kFor), fields, &out);
      } else if (const auto* i = std::get_if<If>(&s.node)) {
        std::vector<uint32_t> then_body = EncodeBlock(i->then_body, at + 4);
        std::vector<uint32_t> else_body =
            EncodeBlock(i->else_body, at + 4 + static_cast<uint32_t>(then_body.size()));
        std::vector<uint32_t> fields = {Ref(i->cond), static_cast<uint32_t>(then_body.size()),
                                        static_cast<uint32_t>(else_body.size())};
        fields.insert(fields.end(), then_body.begin(), then_body.end());
        fields.insert(fields.end(), else_body.begin(), else_body.end());
        Record(static_cast<uint32_t>(EncodedStmtKind::kIf), fields, &out);
      } else if (std::holds_alternative<Assert>(s.node)) {
        // Assertions read the model's state and are checked by the model only. On the GPU the
        // statement is `if 0 { }`, one instruction as in the engine's numbering, so that the
        // pcs of the statements after it agree in both traces.
        Record(static_cast<uint32_t>(EncodedStmtKind::kIf), {ConstZero(), 0, 0}, &out);
      } else {
        const Op& op = std::get<Op>(s.node);
        Record(static_cast<uint32_t>(EncodedStmtKind::kOpBase) + static_cast<uint32_t>(op.index()),
               OpFields(op), &out);
      }
    }
    return out;
  }

  const Program& p_;
  std::vector<uint32_t> pool_;
  std::map<ExprId, uint32_t> memo_;
  std::map<const Stmt*, uint32_t> stmt_at_;  // the role's statements' record offsets
  Status error_;
};

// ---------------------------------------------------------------------------------------------
class Decoder {
 public:
  explicit Decoder(const std::vector<uint32_t>& w) : w_(w) {}

  Expected<Program> Run() {
    Program p;
    p.file = "<encoded>";
    p_ = &p;
    if (w_.size() < kEncodingHeaderWords) return Bad("shorter than the header");
    if (w_[kHdrMagic] != kEncodingMagic) return Bad("bad magic (not a Parity schedule encoding)");
    if (w_[kHdrVersion] != kEncodingVersion) {
      return Bad("version " + std::to_string(w_[kHdrVersion]) + ", expected " + std::to_string(kEncodingVersion));
    }
    if (w_[kHdrHeaderWords] != kEncodingHeaderWords || w_[kHdrTotalWords] != w_.size()) return Bad("header/total size mismatch");
    if (w_[kHdrChecksum] != Checksum(w_, kEncodingHeaderWords)) return Bad("checksum mismatch");
    pool_begin_ = w_[kHdrPool];
    pool_end_ = static_cast<uint64_t>(w_[kHdrPool]) + w_[kHdrPoolWords];
    if (pool_begin_ < kEncodingHeaderWords || pool_end_ > w_.size()) return Bad("expression pool out of range");

    // Params.
    const uint32_t np = w_[kHdrNumParams];
    if (!Range(w_[kHdrParams], uint64_t{np} * 2)) return Bad("params out of range");
    p.params.resize(np);
    for (uint32_t i = 0; i < np; ++i) {
      p.params[i].default_value = static_cast<int64_t>(
          static_cast<uint64_t>(w_[w_[kHdrParams] + 2 * i]) | static_cast<uint64_t>(w_[w_[kHdrParams] + 2 * i + 1]) << 32);
    }
    p.cluster_m = Expr_(w_[kHdrClusterM]);
    p.cluster_n = Expr_(w_[kHdrClusterN]);
    p.clusters = Expr_(w_[kHdrClusters]);

    if (!Range(w_[kHdrBuffers], uint64_t{w_[kHdrNumBuffers]} * 5)) return Bad("buffers out of range");
    p.buffers.resize(w_[kHdrNumBuffers]);
    for (uint32_t i = 0; i < w_[kHdrNumBuffers]; ++i) {
      const uint32_t at = w_[kHdrBuffers] + 5 * i;
      p.buffers[i].stages = Expr_(w_[at]);
      p.buffers[i].bytes = Expr_(w_[at + 1]);
      p.buffers[i].align = Expr_(w_[at + 2]);
      // An alias names an earlier buffer (the parser's rule), so layouts never loop.
      if (w_[at + 3] != BufferDecl::kNoAlias && w_[at + 3] >= i) return Bad("bad buffer alias");
      p.buffers[i].alias_of = w_[at + 3];
      p.buffers[i].alias_offset = Expr_(w_[at + 4]);
    }
    if (!Range(w_[kHdrBarriers], uint64_t{w_[kHdrNumBarriers]} * 2)) return Bad("barriers out of range");
    p.barriers.resize(w_[kHdrNumBarriers]);
    for (uint32_t i = 0; i < w_[kHdrNumBarriers]; ++i) {
      p.barriers[i].size = Expr_(w_[w_[kHdrBarriers] + 2 * i]);
      p.barriers[i].count = Expr_(w_[w_[kHdrBarriers] + 2 * i + 1]);
    }
    size_t at = w_[kHdrMaps];
    if (w_[kHdrNumMaps] > w_.size()) return Bad("tensor map count out of range");
    p.tensor_maps.resize(w_[kHdrNumMaps]);
    for (TensorMapDecl& m : p.tensor_maps) {
      if (!Range(at, 7)) return Bad("tensor map out of range");
      if (!Name(kDtypes, w_[at], &m.dtype) || !Name(kSwizzles, w_[at + 1], &m.swizzle) ||
          !Name(kInterleaves, w_[at + 2], &m.interleave) || !Name(kOobFills, w_[at + 3], &m.oob_fill)) {
        return Bad("tensor map enum out of range");
      }
      const uint32_t rank = w_[at + 4], ns = w_[at + 5], ne = w_[at + 6];
      if (rank > 16 || ns > 16 || ne > 16) return Bad("tensor map rank out of range");
      at += 7;
      if (!Range(at, 2 * rank + ns + ne)) return Bad("tensor map out of range");
      for (auto [list, n] : {std::pair{&m.global_dims, rank}, std::pair{&m.box_dims, rank},
                             std::pair{&m.global_strides, ns}, std::pair{&m.element_strides, ne}}) {
        for (uint32_t k = 0; k < n; ++k) list->push_back(Expr_(w_[at++]));
      }
    }
    if (const ExprId pc = Expr_(w_[kHdrPrimary]); pc != kNoExpr) p.primaries.push_back({pc, {}});
    if (!Range(w_[kHdrGlobals], uint64_t{w_[kHdrNumGlobals]} * 2)) return Bad("globals out of range");
    p.globals.resize(w_[kHdrNumGlobals]);
    for (uint32_t i = 0; i < w_[kHdrNumGlobals]; ++i) {
      p.globals[i].slots = Expr_(w_[w_[kHdrGlobals] + 2 * i]);
      p.globals[i].bytes = Expr_(w_[w_[kHdrGlobals] + 2 * i + 1]);
    }
    if (w_[kHdrNumRoles] > w_.size() || !Range(w_[kHdrRoleGrids], w_[kHdrNumRoles])) return Bad("role grids out of range");
    at = w_[kHdrRoles];
    if (w_[kHdrNumRoles] > w_.size()) return Bad("role count out of range");
    p.roles.resize(w_[kHdrNumRoles]);
    for (Role& r : p.roles) {
      if (!Range(at, 5)) return Bad("role out of range");
      role_ = nullptr;  // count/threads/when see no variables
      r.count = Expr_(w_[at]);
      r.threads = Expr_(w_[at + 1]);
      r.when = Expr_(w_[at + 2]);
      r.num_vars = w_[at + 3];
      const uint32_t grid = w_[w_[kHdrRoleGrids] + static_cast<size_t>(&r - p.roles.data())];
      if (grid > 1) return Bad("role grid out of range");
      if (grid == 1 && !p.has_primary()) return Bad("a primary role without a primary grid");
      r.grid = static_cast<uint8_t>(grid);
      if (r.num_vars > w_.size()) return Bad("role variable count out of range");
      const uint32_t body = w_[at + 4];
      at += 5;
      if (!Range(at, body)) return Bad("role body out of range");
      role_ = &r;
      body_begin_ = at;
      records_.clear();
      r.body = Block_(at, at + body, 0);
      if (why_.empty()) RoleCode(r, body);
      at += body;
    }

    // Strings.
    at = w_[kHdrStrings];
    const uint64_t strings_end = uint64_t{w_[kHdrStrings]} + w_[kHdrStringWords];
    if (strings_end > w_.size()) return Bad("strings out of range");
    auto str = [&](std::string* s) {
      if (at >= strings_end) return Fail("string table too short");
      const uint32_t len = w_[at++];
      const uint64_t words = (uint64_t{len} + 3) / 4;
      if (at + words > strings_end) return Fail("string out of range");
      s->clear();
      for (uint32_t i = 0; i < len; ++i) s->push_back(static_cast<char>((w_[at + i / 4] >> (8 * (i % 4))) & 0xff));
      at += words;
    };
    str(&p.name);
    for (Param& x : p.params) str(&x.name);
    for (BufferDecl& x : p.buffers) str(&x.name);
    for (BarrierDecl& x : p.barriers) str(&x.name);
    for (TensorMapDecl& x : p.tensor_maps) str(&x.name);
    for (Role& x : p.roles) str(&x.name);
    for (Role& x : p.roles) {
      x.var_names.resize(x.num_vars);
      for (std::string& v : x.var_names) str(&v);
    }
    for (GlobalDecl& x : p.globals) str(&x.name);
    if (!why_.empty()) return Bad(why_);
    return p;
  }

 private:
  Status Bad(const std::string& why) const { return Status("encoding.bad", why, SourceLocation{"<encoded>", 0, 0}); }
  void Fail(const std::string& why) {
    if (why_.empty()) why_ = why;
  }
  bool Range(uint64_t begin, uint64_t n) const { return begin <= w_.size() && n <= w_.size() - begin; }
  template <size_t N>
  static bool Name(const char* const (&names)[N], uint32_t code, std::string* out) {
    if (code >= N) return false;
    *out = names[code];
    return true;
  }

  ExprId Add(Expr e) {
    p_->exprs.push_back(e);
    return static_cast<ExprId>(p_->exprs.size() - 1);
  }

  // The role's control code (header word 28; the roles' code follows in role order): each
  // instruction as the compilation of the decoded body gives it, its expressions the body's,
  // and its statement offset that of its statement's record. The GPU walks this code, so
  // nothing in it is trusted.
  void RoleCode(const Role& r, uint32_t body_words) {
    if (&r == &p_->roles.front()) code_at_ = w_[kHdrRoleCode];
    if (!Range(code_at_, 1)) return Fail("control code out of range");
    const std::vector<engine::Instr> want = engine::CompileRole(r);
    // Each statement's record: the statements in pre-order are the records in decoding order.
    std::map<const Stmt*, uint32_t> record_of;
    auto number = [&](auto&& self, const Block& block) -> void {
      for (const Stmt& st : block) {
        const size_t k = record_of.size();
        if (k < records_.size()) record_of[&st] = records_[k];
        if (const auto* f = std::get_if<For>(&st.node)) self(self, f->body);
        if (const auto* i = std::get_if<If>(&st.node)) {
          self(self, i->then_body);
          self(self, i->else_body);
        }
      }
    };
    number(number, r.body);
    const uint32_t n = w_[code_at_++];
    if (n != want.size() || !Range(code_at_, uint64_t{n} * 6)) {
      return Fail("control code does not match the role body");
    }
    for (uint32_t pc = 0; pc < n; ++pc, code_at_ += 6) {
      const uint32_t* in = &w_[code_at_];
      const engine::Instr& c = want[pc];
      const ExprId e1 = Expr_(in[2]), e2 = Expr_(in[3]);
      // A while's pass counter starts at the constant 0 (the record has no `lo`), and an
      // assertion's `if 0 { }` record and its code each hold a constant 0 of their own.
      auto is_zero = [&](ExprId e) {
        return e != kNoExpr && p_->exprs[e].kind == Expr::Kind::kConst && p_->exprs[e].value == 0;
      };
      const bool e1_ok = e1 == c.e1 || (c.kind == engine::Instr::kForInit && is_zero(e1)) ||
                         (c.kind == engine::Instr::kJumpIfFalse && is_zero(e1) && is_zero(c.e1));
      const auto record = record_of.find(c.stmt);
      const bool at_ok = c.stmt == nullptr ? in[5] == body_words
                                           : record != record_of.end() && record->second == in[5];
      if (in[0] != c.kind || in[1] != c.var || !e1_ok || e2 != c.e2 || in[4] != c.target || !at_ok) {
        return Fail("control code does not match the role body (instruction " +
                    std::to_string(pc) + ")");
      }
    }
  }

  // An expression ref -> an ExprId (shared refs decode once).
  ExprId Expr_(uint32_t ref) {
    if (ref == kEncodingNone) return kNoExpr;
    if (auto it = memo_.find(ref); it != memo_.end()) return it->second;
    const uint64_t at = pool_begin_ + uint64_t{ref};
    if (at >= pool_end_) {
      Fail("expression ref out of range");
      return Add(Expr{});
    }
    const uint64_t end = at + 1 + w_[at];
    if (end > pool_end_) {
      Fail("expression record out of range");
      return Add(Expr{});
    }
    const ExprId id = Range_(at + 1, end, 0);
    memo_[ref] = id;
    return id;
  }

  // Runs the bytecode in [b, e) symbolically; it must leave exactly one value.
  ExprId Range_(uint64_t b, uint64_t e, int depth) {
    std::vector<ExprId> stack;
    auto pop = [&]() -> ExprId {
      if (stack.empty()) {
        Fail("expression stack underflow");
        return Add(Expr{});
      }
      const ExprId x = stack.back();
      stack.pop_back();
      return x;
    };
    if (depth > 1000) {
      Fail("expression nested too deeply");
      return Add(Expr{});
    }
    uint64_t pc = b;
    while (pc < e && why_.empty()) {
      const uint32_t word = w_[pc];
      const auto op = static_cast<EncodedExprOp>(word & 0xff);
      const uint32_t arg = word >> 8;
      Expr x;
      switch (op) {
        case EncodedExprOp::kConst:
          if (pc + 2 >= e) {
            Fail("truncated constant");
            break;
          }
          x.kind = Expr::Kind::kConst;
          x.value = static_cast<int64_t>(static_cast<uint64_t>(w_[pc + 1]) |
                                         static_cast<uint64_t>(w_[pc + 2]) << 32);
          stack.push_back(Add(x));
          pc += 3;
          continue;
        case EncodedExprOp::kVar:
          if (role_ == nullptr || arg >= role_->num_vars) Fail("variable slot out of range");
          x.kind = Expr::Kind::kVar;
          x.index = arg;
          break;
        case EncodedExprOp::kBuiltin:
          if (arg >= kNumBuiltinCodes) Fail("bad builtin");
          x.kind = Expr::Kind::kBuiltin;
          x.op = static_cast<uint8_t>(arg);
          break;
        case EncodedExprOp::kUnary:
          if (arg > static_cast<uint32_t>(UnaryOp::kBitNot)) Fail("bad unary operator");
          x.kind = Expr::Kind::kUnary;
          x.op = static_cast<uint8_t>(arg);
          x.a = pop();
          break;
        case EncodedExprOp::kBinary:
          if (arg > static_cast<uint32_t>(BinaryOp::kMax) || arg == static_cast<uint32_t>(BinaryOp::kAnd) ||
              arg == static_cast<uint32_t>(BinaryOp::kOr)) {
            Fail("bad binary operator");
          }
          x.kind = Expr::Kind::kBinary;
          x.op = static_cast<uint8_t>(arg);
          x.b = pop();
          x.a = pop();
          break;
        case EncodedExprOp::kJumpIfZero: {
          // cond JZ(n) <b ...> J(m) <c ...>
          const uint64_t target = pc + 1 + arg;
          if (arg == 0 || target > e || (w_[target - 1] & 0xff) != static_cast<uint32_t>(EncodedExprOp::kJump)) {
            Fail("malformed ?:");
            break;
          }
          const uint64_t end = target + (w_[target - 1] >> 8);
          if (end > e) {
            Fail("malformed ?:");
            break;
          }
          x.kind = Expr::Kind::kSelect;
          x.a = pop();
          x.b = Range_(pc + 1, target - 1, depth + 1);
          x.c = Range_(target, end, depth + 1);
          stack.push_back(Add(x));
          pc = end;
          continue;
        }
        case EncodedExprOp::kAndJump:
        case EncodedExprOp::kOrJump: {
          const uint64_t end = pc + 1 + arg;
          if (arg == 0 || end > e || (w_[end - 1] & 0xff) != static_cast<uint32_t>(EncodedExprOp::kBool)) {
            Fail("malformed && or ||");
            break;
          }
          x.kind = Expr::Kind::kBinary;
          x.op = static_cast<uint8_t>(op == EncodedExprOp::kAndJump ? BinaryOp::kAnd : BinaryOp::kOr);
          x.a = pop();
          x.b = Range_(pc + 1, end - 1, depth + 1);
          stack.push_back(Add(x));
          pc = end;
          continue;
        }
        default:
          Fail("bad expression opcode " + std::to_string(word & 0xff));
          break;
      }
      if (!why_.empty()) break;
      stack.push_back(Add(x));
      ++pc;
    }
    if (why_.empty() && stack.size() != 1) Fail("expression does not leave exactly one value");
    return stack.empty() ? Add(Expr{}) : stack.back();
  }

  // Field reader for one statement record.
  struct Fields {
    Decoder* d;
    uint64_t at, end;
    uint32_t Next() {
      if (at >= end) {
        d->Fail("statement record too short");
        return kEncodingNone;
      }
      return d->w_[at++];
    }
  };

  uint32_t Var(uint32_t slot, bool optional) {
    if (slot == kEncodingNone && optional) return slot;
    if (role_ == nullptr || slot >= role_->num_vars) Fail("variable slot out of range");
    return slot;
  }
  BarrierRef Bar(Fields* f) {
    BarrierRef r;
    r.barrier = f->Next();
    if (r.barrier >= p_->barriers.size()) Fail("barrier index out of range");
    r.index = Expr_(f->Next());
    r.cta = Expr_(f->Next());
    return r;
  }
  BufferRef Buf(Fields* f) {
    BufferRef r;
    r.buffer = f->Next();
    if (r.buffer >= p_->buffers.size()) Fail("buffer index out of range");
    r.slot = Expr_(f->Next());
    r.offset = Expr_(f->Next());
    r.bytes = Expr_(f->Next());
    r.cta = Expr_(f->Next());
    return r;
  }
  // Bits 8 (relaxed) and 9 (cluster scope) of an arrive's kind word or a wait's test_only word;
  // any other high bit is malformed.
  void DecodeSemScope(uint32_t word, MemSem* sem, MemScope* scope) {
    if ((word & ~0x3ffu) != 0) Fail("bad semantics or scope bits");
    *sem = (word & kSemRelaxedBit) != 0 ? MemSem::kRelaxed : MemSem::kStrong;
    *scope = (word & kScopeClusterBit) != 0 ? MemScope::kCluster : MemScope::kCta;
  }
  bool Flag(Fields* f) {
    const uint32_t v = f->Next();
    if (v > 1) Fail("flag out of range");
    return v == 1;
  }
  uint32_t TensorMap(Fields* f) {
    const uint32_t m = f->Next();
    if (m >= p_->tensor_maps.size()) Fail("tensor map index out of range");
    return m;
  }
  void Coords(Fields* f, std::vector<ExprId>* out) {
    const uint32_t n = f->Next();
    if (n > 16) {
      Fail("too many coordinates");
      return;
    }
    for (uint32_t i = 0; i < n; ++i) out->push_back(Expr_(f->Next()));
  }

  Op DecodeOp(uint32_t index, Fields* f) {
    // By op kind (OpKind's numbers are the encoding's, ops.h); a word past the last kind is
    // refused before the cast, which would wrap it into range.
    if (index >= kNumOpKinds) {
      Fail("bad operation kind " + std::to_string(index));
      return Exit{};
    }
    switch (static_cast<OpKind>(index)) {
      case OpKind::kMbarrierInit: { MbarrierInit o; o.bar = Bar(f); o.count = Expr_(f->Next()); return o; }
      case OpKind::kMbarrierInval: { MbarrierInval o; o.bar = Bar(f); return o; }
      case OpKind::kMbarrierArrive: {
        MbarrierArrive o;
        const uint32_t word = f->Next();
        const uint32_t kind = word & 0xffu;
        if (kind > static_cast<uint32_t>(MbarrierArrive::Kind::kDrop)) Fail("bad arrive kind");
        o.kind = static_cast<MbarrierArrive::Kind>(kind & 3);
        DecodeSemScope(word, &o.sem, &o.scope);
        o.bar = Bar(f);
        o.count = Expr_(f->Next());
        o.expect_tx = Expr_(f->Next());
        o.mask = Expr_(f->Next());
        o.token_var = Var(f->Next(), true);
        return o;
      }
      case OpKind::kMbarrierExpectTx: { MbarrierExpectTx o; o.bar = Bar(f); o.bytes = Expr_(f->Next()); return o; }
      case OpKind::kMbarrierCompleteTx: { MbarrierCompleteTx o; o.bar = Bar(f); o.bytes = Expr_(f->Next()); return o; }
      case OpKind::kMbarrierWait: {
        MbarrierWait o;
        o.bar = Bar(f);
        o.parity = Expr_(f->Next());
        o.token_var = Var(f->Next(), true);
        const uint32_t word = f->Next();
        if ((word & 0xffu) > 1) Fail("flag out of range");
        o.test_only = (word & 1u) != 0;
        DecodeSemScope(word, &o.sem, &o.scope);
        o.result_var = Var(f->Next(), true);
        return o;
      }
      case OpKind::kTmaLoad: {
        TmaLoad o;
        o.tensor_map = TensorMap(f);
        o.dst = Buf(f);
        o.bar = Bar(f);
        o.multicast_mask = Expr_(f->Next());
        Coords(f, &o.coords);
        return o;
      }
      case OpKind::kTmaStore: { TmaStore o; o.tensor_map = TensorMap(f); o.src = Buf(f); Coords(f, &o.coords); return o; }
      case OpKind::kBulkLoad: { BulkLoad o; o.dst = Buf(f); o.bar = Bar(f); o.multicast_mask = Expr_(f->Next()); return o; }
      case OpKind::kBulkStore: { BulkStore o; o.src = Buf(f); return o; }
      case OpKind::kBulkCommit: return BulkCommit{};
      case OpKind::kBulkWait: { BulkWait o; o.pending = Expr_(f->Next()); o.read = Flag(f); return o; }
      case OpKind::kCpAsync: { CpAsync o; o.dst = Buf(f); return o; }
      case OpKind::kCpAsyncCommit: return CpAsyncCommit{};
      case OpKind::kCpAsyncWait: { CpAsyncWait o; o.pending = Expr_(f->Next()); return o; }
      case OpKind::kCpAsyncMbarrierArrive: { CpAsyncMbarrierArrive o; o.bar = Bar(f); o.noinc = Flag(f); return o; }
      case OpKind::kStAsync: { StAsync o; o.dst = Buf(f); o.bar = Bar(f); return o; }
      case OpKind::kFence: {
        Fence o;
        const uint32_t k = f->Next();
        if ((k & 0xff) > static_cast<uint32_t>(Fence::Kind::kProxyTensormapAcquire)) {
          Fail("bad fence kind");
        }
        o.kind = static_cast<Fence::Kind>(k & 0xff);
        if (o.kind == Fence::Kind::kProxyTensormapAcquire) {
          if ((k >> 8) == 0 || (k >> 8) - 1 >= p_->tensor_maps.size()) {
            Fail("tensor map index out of range");
          }
          o.tensor_map = (k >> 8) - 1;
        } else if ((k >> 8) != 0) {
          Fail("bad fence kind");
        }
        return o;
      }
      case OpKind::kClusterArrive: return ClusterArrive{Flag(f)};
      case OpKind::kClusterWait: return ClusterWait{};
      case OpKind::kNamedBarrier: {
        NamedBarrier o;
        o.id = Expr_(f->Next());
        o.threads = Expr_(f->Next());
        o.sync = Flag(f);
        return o;
      }
      case OpKind::kBufferAccess: {
        BufferAccess o;
        o.buf = Buf(f);
        const uint32_t w = f->Next();
        const uint32_t kind = w & 7u, proxy = w >> 3;
        if (kind > 7 || (kind > 1 && kind != 3 && kind != 7)) Fail("bad buffer access kind");
        if (proxy > static_cast<uint32_t>(ReadProxy::kAsync) || (proxy != 0 && kind != 0)) {
          Fail("bad read proxy");
        }
        o.write = (w & 1) != 0;
        o.atomic = (w & 2) != 0;
        o.returns = (w & 4) != 0;
        o.proxy = static_cast<ReadProxy>(proxy);
        return o;
      }
      case OpKind::kExit: return Exit{};
      case OpKind::kMbarrierPendingCount: {
        MbarrierPendingCount o;
        o.token_var = Var(f->Next(), false);
        o.result_var = Var(f->Next(), false);
        return o;
      }
      case OpKind::kGlobalReadback: { GlobalReadback o; o.buf = Buf(f); o.result_var = Var(f->Next(), false); return o; }
      case OpKind::kGridDepControl: {
        GridDepControl o;
        const uint32_t k = f->Next();
        if (k > static_cast<uint32_t>(GridDepControl::Kind::kWait)) Fail("bad griddepcontrol kind");
        o.kind = static_cast<GridDepControl::Kind>(k & 1);
        return o;
      }
      case OpKind::kGlobalAccess: {
        GlobalAccess o;
        o.global = f->Next();
        if (o.global >= p_->globals.size()) Fail("global buffer index out of range");
        o.slot = Expr_(f->Next());
        o.offset = Expr_(f->Next());
        o.bytes = Expr_(f->Next());
        o.write = Flag(f);
        return o;
      }
      case OpKind::kTensormapReplace: {
        TensormapReplace o;
        o.tensor_map = f->Next();
        if (o.tensor_map >= p_->tensor_maps.size()) Fail("tensor map index out of range");
        return o;
      }
    }
    Fail("bad operation kind " + std::to_string(index));
    return Exit{};
  }

  Block Block_(uint64_t b, uint64_t e, int depth) {
    Block out;
    if (depth > 1000) {
      Fail("blocks nested too deeply");
      return out;
    }
    uint64_t pc = b;
    while (pc < e && why_.empty()) {
      const uint32_t head = w_[pc];
      const uint32_t kind = head & 0xff, len = head >> 8;
      if (len == 0 || pc + len > e) {
        Fail("statement length out of range");
        break;
      }
      Fields f{this, pc + 1, pc + len};
      records_.push_back(static_cast<uint32_t>(pc - body_begin_));
      Stmt s;
      if (kind == static_cast<uint32_t>(EncodedStmtKind::kLet)) {
        Let let;
        let.var = Var(f.Next(), false);
        let.value = Expr_(f.Next());
        s.node = let;
      } else if (kind == static_cast<uint32_t>(EncodedStmtKind::kFor)) {
        For loop;
        loop.var = Var(f.Next(), false);
        loop.lo = Expr_(f.Next());
        loop.hi = Expr_(f.Next());
        loop.step = Expr_(f.Next());
        const uint32_t n = f.Next();
        if (why_.empty() && f.at + n == f.end) loop.body = Block_(f.at, f.end, depth + 1);
        else Fail("loop body length mismatch");
        f.at = f.end;
        s.node = std::move(loop);
      } else if (kind == static_cast<uint32_t>(EncodedStmtKind::kWhile)) {
        For loop;
        loop.var = Var(f.Next(), false);
        loop.hi = Expr_(f.Next());
        loop.cond = Expr_(f.Next());
        Expr zero;
        zero.kind = Expr::Kind::kConst;
        loop.lo = Add(zero);
        const uint32_t n = f.Next();
        if (why_.empty() && loop.cond == kNoExpr) Fail("while without a condition");
        if (why_.empty() && f.at + n == f.end) loop.body = Block_(f.at, f.end, depth + 1);
        else Fail("loop body length mismatch");
        f.at = f.end;
        s.node = std::move(loop);
      } else if (kind == static_cast<uint32_t>(EncodedStmtKind::kBreak)) {
        s.node = Break{};
      } else if (kind == static_cast<uint32_t>(EncodedStmtKind::kIf)) {
        If i;
        i.cond = Expr_(f.Next());
        const uint32_t nt = f.Next(), ne = f.Next();
        if (why_.empty() && f.at + nt + ne == f.end) {
          i.then_body = Block_(f.at, f.at + nt, depth + 1);
          i.else_body = Block_(f.at + nt, f.end, depth + 1);
        } else {
          Fail("if body length mismatch");
        }
        f.at = f.end;
        s.node = std::move(i);
      } else if (kind >= static_cast<uint32_t>(EncodedStmtKind::kOpBase)) {
        s.node = DecodeOp(kind - static_cast<uint32_t>(EncodedStmtKind::kOpBase), &f);
      } else {
        Fail("bad statement kind " + std::to_string(kind));
      }
      if (why_.empty() && f.at != f.end) Fail("statement record length mismatch");
      out.push_back(std::move(s));
      pc += len;
    }
    return out;
  }

  const std::vector<uint32_t>& w_;
  Program* p_ = nullptr;
  const Role* role_ = nullptr;
  uint64_t pool_begin_ = 0, pool_end_ = 0;
  std::map<uint32_t, ExprId> memo_;
  uint64_t body_begin_ = 0;              // the role body's first word
  // The role's records' offsets in its body, in decoding order (the statements' pre-order).
  std::vector<uint32_t> records_;
  uint64_t code_at_ = 0;                 // the next role's control code
  std::string why_;
};

}  // namespace

Program SubstituteParams(const Program& program, const std::vector<int64_t>& values) {
  Program p = program;
  for (Expr& e : p.exprs) {
    if (e.kind == Expr::Kind::kParam) {
      e.kind = Expr::Kind::kConst;
      e.value = e.index < values.size() ? values[e.index] : 0;
      e.index = 0;
    } else if (e.kind == Expr::Kind::kConst) {
      e.index = 0;  // a named barrier's name: the encoding carries ids, not names
    }
  }
  p.named_barriers.clear();
  for (size_t i = 0; i < p.params.size(); ++i) {
    if (i < values.size()) p.params[i].default_value = values[i];
    p.params[i].default_expr = kNoExpr;
  }
  return p;
}

Expected<std::vector<uint32_t>> Encode(const Program& program, const std::vector<int64_t>& values) {
  if (values.size() != program.params.size()) {
    return Status("encoding.params", "got " + std::to_string(values.size()) + " param values for " +
                                         std::to_string(program.params.size()) + " params");
  }
  const Program bound = SubstituteParams(program, values);
  return Encoder(bound).Run(values);
}

Expected<Program> Decode(const std::vector<uint32_t>& words) { return Decoder(words).Run(); }

}  // namespace parity::ir
