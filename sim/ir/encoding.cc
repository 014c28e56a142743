#include "sim/ir/encoding.h"

#include <map>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "sim/common/check.h"
#include "sim/engine/control.h"
#include "sim/ir/encoding_internal.h"
#include "sim/ir/hash.h"
#include "sim/ir/op_layout.h"

namespace parity::ir {
namespace {

using encoding_internal::Checksum;
using encoding_internal::CodeOf;
using encoding_internal::Hi;
using encoding_internal::kDtypes;
using encoding_internal::kInterleaves;
using encoding_internal::kOobFills;
using encoding_internal::kSwizzles;
using encoding_internal::Lo;

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
      // In the order of layout::BarrierRecord.
      static_assert(layout::BarrierRecord::kSize == 0 && layout::BarrierRecord::kCount == 1 &&
                    layout::BarrierRecord::kWords == 2);
      barriers.insert(barriers.end(), {Ref(b.size), Ref(b.count)});
    }
    for (const TensorMapDecl& m : p_.tensor_maps) {
      // In the order of layout::TensorMapHead.
      using Head = layout::TensorMapHead;
      static_assert(Head::kDtype == 0 && Head::kSwizzle == 1 && Head::kInterleave == 2 &&
                    Head::kOobFill == 3 && Head::kRank == 4 && Head::kNumStrides == 5 &&
                    Head::kNumElementStrides == 6 && Head::kWords == 7);
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
      // In the order of layout::RoleHead.
      using Head = layout::RoleHead;
      static_assert(Head::kCount == 0 && Head::kThreads == 1 && Head::kWhen == 2 &&
                    Head::kNumVars == 3 && Head::kBodyWords == 4 && Head::kWords == 5);
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

  // An op's fields, written at their offsets in its layout (sim/ir/op_layout.h): `extra` words
  // past L::kWords for a TMA copy's coordinates.
  template <typename L>
  static std::vector<uint32_t> Fields(uint32_t extra = 0) {
    return std::vector<uint32_t>(L::kWords + extra, kEncodingNone);
  }
  void Bar(const BarrierRef& r, std::vector<uint32_t>* f, uint32_t at) {
    using R = layout::BarRef;
    (*f)[at + R::kBarrier] = r.barrier;
    (*f)[at + R::kIndex] = Ref(r.index);
    (*f)[at + R::kCta] = Ref(r.cta);
  }
  void Buf(const BufferRef& r, std::vector<uint32_t>* f, uint32_t at) {
    using R = layout::BufRef;
    (*f)[at + R::kBuffer] = r.buffer;
    (*f)[at + R::kSlot] = Ref(r.slot);
    (*f)[at + R::kOffset] = Ref(r.offset);
    (*f)[at + R::kBytes] = Ref(r.bytes);
    (*f)[at + R::kCta] = Ref(r.cta);
  }
  void Coords(const std::vector<ExprId>& coords, std::vector<uint32_t>* f, uint32_t rank_at) {
    (*f)[rank_at] = static_cast<uint32_t>(coords.size());
    for (size_t i = 0; i < coords.size(); ++i) (*f)[rank_at + 1 + i] = Ref(coords[i]);
  }

  std::vector<uint32_t> OpFields(const Op& op) {
    std::vector<uint32_t> f;
    std::visit(
        [&](const auto& o) {
          using T = std::decay_t<decltype(o)>;
          if constexpr (std::is_same_v<T, MbarrierInit>) {
            using L = layout::MbarrierInit;
            f = Fields<L>();
            Bar(o.bar, &f, L::kBar);
            f[L::kCount] = Ref(o.count);
          } else if constexpr (std::is_same_v<T, MbarrierInval>) {
            using L = layout::MbarrierInval;
            f = Fields<L>();
            Bar(o.bar, &f, L::kBar);
          } else if constexpr (std::is_same_v<T, MbarrierArrive>) {
            using L = layout::MbarrierArrive;
            f = Fields<L>();
            f[L::kKind] = static_cast<uint32_t>(o.kind) | SemScope(o.sem, o.scope);
            Bar(o.bar, &f, L::kBar);
            f[L::kCount] = Ref(o.count);
            f[L::kExpectTx] = Ref(o.expect_tx);
            f[L::kMask] = Ref(o.mask);
            f[L::kTokenVar] = o.token_var;
          } else if constexpr (std::is_same_v<T, MbarrierExpectTx> ||
                               std::is_same_v<T, MbarrierCompleteTx>) {
            using L = layout::MbarrierTx;
            f = Fields<L>();
            Bar(o.bar, &f, L::kBar);
            f[L::kBytes] = Ref(o.bytes);
          } else if constexpr (std::is_same_v<T, MbarrierWait>) {
            using L = layout::MbarrierWait;
            f = Fields<L>();
            Bar(o.bar, &f, L::kBar);
            f[L::kParity] = Ref(o.parity);
            f[L::kTokenVar] = o.token_var;
            f[L::kTestOnly] = uint32_t{o.test_only} | SemScope(o.sem, o.scope);
            f[L::kResultVar] = o.result_var;
          } else if constexpr (std::is_same_v<T, TmaLoad>) {
            using L = layout::TmaLoad;
            f = Fields<L>(static_cast<uint32_t>(o.coords.size()));
            f[L::kMap] = o.tensor_map;
            Buf(o.dst, &f, L::kDst);
            Bar(o.bar, &f, L::kBar);
            f[L::kMulticast] = Ref(o.multicast_mask);
            Coords(o.coords, &f, L::kRank);
          } else if constexpr (std::is_same_v<T, TmaStore>) {
            using L = layout::TmaStore;
            f = Fields<L>(static_cast<uint32_t>(o.coords.size()));
            f[L::kMap] = o.tensor_map;
            Buf(o.src, &f, L::kSrc);
            Coords(o.coords, &f, L::kRank);
          } else if constexpr (std::is_same_v<T, BulkLoad>) {
            using L = layout::BulkLoad;
            f = Fields<L>();
            Buf(o.dst, &f, L::kDst);
            Bar(o.bar, &f, L::kBar);
            f[L::kMulticast] = Ref(o.multicast_mask);
          } else if constexpr (std::is_same_v<T, BulkStore>) {
            f = Fields<layout::OneBuffer>();
            Buf(o.src, &f, layout::OneBuffer::kBuf);
          } else if constexpr (std::is_same_v<T, BulkWait>) {
            using L = layout::BulkWait;
            f = Fields<L>();
            f[L::kPending] = Ref(o.pending);
            f[L::kRead] = uint32_t{o.read};
          } else if constexpr (std::is_same_v<T, CpAsync>) {
            f = Fields<layout::OneBuffer>();
            Buf(o.dst, &f, layout::OneBuffer::kBuf);
          } else if constexpr (std::is_same_v<T, CpAsyncWait>) {
            f = Fields<layout::CpAsyncWait>();
            f[layout::CpAsyncWait::kPending] = Ref(o.pending);
          } else if constexpr (std::is_same_v<T, CpAsyncMbarrierArrive>) {
            using L = layout::CpAsyncMbarrierArrive;
            f = Fields<L>();
            Bar(o.bar, &f, L::kBar);
            f[L::kNoinc] = uint32_t{o.noinc};
          } else if constexpr (std::is_same_v<T, StAsync>) {
            using L = layout::StAsync;
            f = Fields<L>();
            Buf(o.dst, &f, L::kDst);
            Bar(o.bar, &f, L::kBar);
          } else if constexpr (std::is_same_v<T, Fence>) {
            // The low byte is the kind; an acquire of a tensor map adds its index + 1 above it.
            const uint32_t tm =
                o.kind == Fence::Kind::kProxyTensormapAcquire ? o.tensor_map + 1 : 0;
            f = Fields<layout::Fence>();
            f[layout::Fence::kKind] = static_cast<uint32_t>(o.kind) | tm << 8;
          } else if constexpr (std::is_same_v<T, TensormapReplace>) {
            f = Fields<layout::TensormapReplace>();
            f[layout::TensormapReplace::kMap] = o.tensor_map;
          } else if constexpr (std::is_same_v<T, ClusterArrive>) {
            f = Fields<layout::ClusterArrive>();
            f[layout::ClusterArrive::kRelaxed] = uint32_t{o.relaxed};
          } else if constexpr (std::is_same_v<T, NamedBarrier>) {
            using L = layout::NamedBarrier;
            f = Fields<L>();
            f[L::kId] = Ref(o.id);
            f[L::kThreads] = Ref(o.threads);
            f[L::kSync] = uint32_t{o.sync};
          } else if constexpr (std::is_same_v<T, BufferAccess>) {
            using L = layout::BufferAccess;
            f = Fields<L>();
            Buf(o.buf, &f, L::kBuf);
            // Bit 0 write, bit 1 atomic, bit 2 returns (exec.h reads bit 0 only), bits 3..4 the
            // read's proxy (0 for a plain `use`, so the words of other schedules are unchanged).
            f[L::kFlags] = uint32_t{o.write} | uint32_t{o.atomic} << 1 |
                           uint32_t{o.returns} << 2 | static_cast<uint32_t>(o.proxy) << 3;
          } else if constexpr (std::is_same_v<T, MbarrierPendingCount>) {
            using L = layout::MbarrierPendingCount;
            f = Fields<L>();
            f[L::kTokenVar] = o.token_var;
            f[L::kResultVar] = o.result_var;
          } else if constexpr (std::is_same_v<T, GlobalReadback>) {
            using L = layout::GlobalReadback;
            f = Fields<L>();
            Buf(o.buf, &f, L::kBuf);
            f[L::kResultVar] = o.result_var;
          } else if constexpr (std::is_same_v<T, GridDepControl>) {
            f = Fields<layout::GridDepControl>();
            f[layout::GridDepControl::kKind] = static_cast<uint32_t>(o.kind);
          } else if constexpr (std::is_same_v<T, GlobalAccess>) {
            using L = layout::GlobalAccess;
            f = Fields<L>();
            f[L::kGlobal] = o.global;
            f[L::kSlot] = Ref(o.slot);
            f[L::kOffset] = Ref(o.offset);
            f[L::kBytes] = Ref(o.bytes);
            f[L::kWrite] = uint32_t{o.write};
          } else {
            static_assert(std::is_same_v<T, BulkCommit> || std::is_same_v<T, CpAsyncCommit> ||
                          std::is_same_v<T, ClusterWait> || std::is_same_v<T, Exit>);
          }
        },
        op);
    // The layout this op kind is decoded and executed with (the decoder refuses any other
    // length): a mismatch here is a bug of the encoder, not of the schedule.
    PARITY_CHECK(layout::OpFieldWords(static_cast<OpKind>(op.index()), f.data(),
                                      static_cast<uint32_t>(f.size())) == f.size(),
                 "Encode: an op's fields do not match its layout (sim/ir/op_layout.h)");
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


}  // namespace parity::ir
