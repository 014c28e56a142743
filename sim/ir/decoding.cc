// Decode of sim/ir/encoding.h: the words back into the program they encode, every offset,
// count and field checked first (a malformed encoding is refused, never crashes), op records
// read by op kind at the offsets of their layout (sim/ir/op_layout.h).
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "sim/common/status.h"
#include "sim/engine/control.h"
#include "sim/ir/encoding.h"
#include "sim/ir/encoding_internal.h"
#include "sim/ir/ir.h"
#include "sim/ir/op_layout.h"
#include "sim/ir/ops.h"

namespace parity::ir {
namespace {

using encoding_internal::Checksum;
using encoding_internal::kDtypes;
using encoding_internal::kInterleaves;
using encoding_internal::kOobFills;
using encoding_internal::kSwizzles;

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
    using BarrierRec = layout::BarrierRecord;
    if (!Range(w_[kHdrBarriers], uint64_t{w_[kHdrNumBarriers]} * BarrierRec::kWords)) {
      return Bad("barriers out of range");
    }
    p.barriers.resize(w_[kHdrNumBarriers]);
    for (uint32_t i = 0; i < w_[kHdrNumBarriers]; ++i) {
      const uint32_t rec = w_[kHdrBarriers] + BarrierRec::kWords * i;
      p.barriers[i].size = Expr_(w_[rec + BarrierRec::kSize]);
      p.barriers[i].count = Expr_(w_[rec + BarrierRec::kCount]);
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
    using RoleHead = layout::RoleHead;
    for (Role& r : p.roles) {
      if (!Range(at, RoleHead::kWords)) return Bad("role out of range");
      role_ = nullptr;  // count/threads/when see no variables
      r.count = Expr_(w_[at + RoleHead::kCount]);
      r.threads = Expr_(w_[at + RoleHead::kThreads]);
      r.when = Expr_(w_[at + RoleHead::kWhen]);
      r.num_vars = w_[at + RoleHead::kNumVars];
      const uint32_t grid = w_[w_[kHdrRoleGrids] + static_cast<size_t>(&r - p.roles.data())];
      if (grid > 1) return Bad("role grid out of range");
      if (grid == 1 && !p.has_primary()) return Bad("a primary role without a primary grid");
      r.grid = static_cast<uint8_t>(grid);
      if (r.num_vars > w_.size()) return Bad("role variable count out of range");
      const uint32_t body = w_[at + RoleHead::kBodyWords];
      at += RoleHead::kWords;
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
  // Bits 8 (relaxed) and 9 (cluster scope) of an arrive's kind word or a wait's test_only word;
  // any other high bit is malformed.
  void DecodeSemScope(uint32_t word, MemSem* sem, MemScope* scope) {
    if ((word & ~0x3ffu) != 0) Fail("bad semantics or scope bits");
    *sem = (word & kSemRelaxedBit) != 0 ? MemSem::kRelaxed : MemSem::kStrong;
    *scope = (word & kScopeClusterBit) != 0 ? MemScope::kCluster : MemScope::kCta;
  }
  // The fields of an op record, read at their layout's offsets (sim/ir/op_layout.h).
  struct OpRecord {
    Decoder* d;
    const uint32_t* w;  // the fields (the record after its head word)
    uint32_t n;         // their number
    uint32_t operator[](uint32_t i) const {
      if (i >= n) {
        d->Fail("statement record too short");
        return kEncodingNone;
      }
      return w[i];
    }
  };
  BarrierRef Bar(const OpRecord& f, uint32_t at) {
    using R = layout::BarRef;
    BarrierRef r;
    r.barrier = f[at + R::kBarrier];
    if (r.barrier >= p_->barriers.size()) Fail("barrier index out of range");
    r.index = Expr_(f[at + R::kIndex]);
    r.cta = Expr_(f[at + R::kCta]);
    return r;
  }
  BufferRef Buf(const OpRecord& f, uint32_t at) {
    using R = layout::BufRef;
    BufferRef r;
    r.buffer = f[at + R::kBuffer];
    if (r.buffer >= p_->buffers.size()) Fail("buffer index out of range");
    r.slot = Expr_(f[at + R::kSlot]);
    r.offset = Expr_(f[at + R::kOffset]);
    r.bytes = Expr_(f[at + R::kBytes]);
    r.cta = Expr_(f[at + R::kCta]);
    return r;
  }
  bool Flag(uint32_t v) {
    if (v > 1) Fail("flag out of range");
    return v == 1;
  }
  uint32_t TensorMap(uint32_t m) {
    if (m >= p_->tensor_maps.size()) Fail("tensor map index out of range");
    return m;
  }
  void Coords(const OpRecord& f, uint32_t rank_at, std::vector<ExprId>* out) {
    const uint32_t n = f[rank_at];
    if (n > 16) {
      Fail("too many coordinates");
      return;
    }
    for (uint32_t i = 0; i < n; ++i) out->push_back(Expr_(f[rank_at + 1 + i]));
  }

  // By op kind (OpKind's numbers are the encoding's, ops.h), each field at its offset in the
  // op's layout; a record whose length is not its layout's is malformed.
  Op DecodeOp(uint32_t index, Fields* fields) {
    // A word past the last kind is refused before the cast, which would wrap it into range.
    if (index >= kNumOpKinds) {
      Fail("bad operation kind " + std::to_string(index));
      return Exit{};
    }
    const OpKind kind = static_cast<OpKind>(index);
    const OpRecord f{this, w_.data() + fields->at, static_cast<uint32_t>(fields->end - fields->at)};
    if (layout::OpFieldWords(kind, f.w, f.n) != f.n) {
      Fail("statement record length mismatch");
      return Exit{};
    }
    fields->at = fields->end;
    switch (kind) {
      case OpKind::kMbarrierInit: {
        using L = layout::MbarrierInit;
        MbarrierInit o;
        o.bar = Bar(f, L::kBar);
        o.count = Expr_(f[L::kCount]);
        return o;
      }
      case OpKind::kMbarrierInval: {
        MbarrierInval o;
        o.bar = Bar(f, layout::MbarrierInval::kBar);
        return o;
      }
      case OpKind::kMbarrierArrive: {
        using L = layout::MbarrierArrive;
        MbarrierArrive o;
        const uint32_t word = f[L::kKind];
        const uint32_t k = word & 0xffu;
        if (k > static_cast<uint32_t>(MbarrierArrive::Kind::kDrop)) Fail("bad arrive kind");
        o.kind = static_cast<MbarrierArrive::Kind>(k & 3);
        DecodeSemScope(word, &o.sem, &o.scope);
        o.bar = Bar(f, L::kBar);
        o.count = Expr_(f[L::kCount]);
        o.expect_tx = Expr_(f[L::kExpectTx]);
        o.mask = Expr_(f[L::kMask]);
        o.token_var = Var(f[L::kTokenVar], true);
        return o;
      }
      case OpKind::kMbarrierExpectTx: {
        using L = layout::MbarrierTx;
        MbarrierExpectTx o;
        o.bar = Bar(f, L::kBar);
        o.bytes = Expr_(f[L::kBytes]);
        return o;
      }
      case OpKind::kMbarrierCompleteTx: {
        using L = layout::MbarrierTx;
        MbarrierCompleteTx o;
        o.bar = Bar(f, L::kBar);
        o.bytes = Expr_(f[L::kBytes]);
        return o;
      }
      case OpKind::kMbarrierWait: {
        using L = layout::MbarrierWait;
        MbarrierWait o;
        o.bar = Bar(f, L::kBar);
        o.parity = Expr_(f[L::kParity]);
        o.token_var = Var(f[L::kTokenVar], true);
        const uint32_t word = f[L::kTestOnly];
        if ((word & 0xffu) > 1) Fail("flag out of range");
        o.test_only = (word & 1u) != 0;
        DecodeSemScope(word, &o.sem, &o.scope);
        o.result_var = Var(f[L::kResultVar], true);
        return o;
      }
      case OpKind::kTmaLoad: {
        using L = layout::TmaLoad;
        TmaLoad o;
        o.tensor_map = TensorMap(f[L::kMap]);
        o.dst = Buf(f, L::kDst);
        o.bar = Bar(f, L::kBar);
        o.multicast_mask = Expr_(f[L::kMulticast]);
        Coords(f, L::kRank, &o.coords);
        return o;
      }
      case OpKind::kTmaStore: {
        using L = layout::TmaStore;
        TmaStore o;
        o.tensor_map = TensorMap(f[L::kMap]);
        o.src = Buf(f, L::kSrc);
        Coords(f, L::kRank, &o.coords);
        return o;
      }
      case OpKind::kBulkLoad: {
        using L = layout::BulkLoad;
        BulkLoad o;
        o.dst = Buf(f, L::kDst);
        o.bar = Bar(f, L::kBar);
        o.multicast_mask = Expr_(f[L::kMulticast]);
        return o;
      }
      case OpKind::kBulkStore: {
        BulkStore o;
        o.src = Buf(f, layout::OneBuffer::kBuf);
        return o;
      }
      case OpKind::kBulkCommit:
        return BulkCommit{};
      case OpKind::kBulkWait: {
        using L = layout::BulkWait;
        BulkWait o;
        o.pending = Expr_(f[L::kPending]);
        o.read = Flag(f[L::kRead]);
        return o;
      }
      case OpKind::kCpAsync: {
        CpAsync o;
        o.dst = Buf(f, layout::OneBuffer::kBuf);
        return o;
      }
      case OpKind::kCpAsyncCommit:
        return CpAsyncCommit{};
      case OpKind::kCpAsyncWait: {
        CpAsyncWait o;
        o.pending = Expr_(f[layout::CpAsyncWait::kPending]);
        return o;
      }
      case OpKind::kCpAsyncMbarrierArrive: {
        using L = layout::CpAsyncMbarrierArrive;
        CpAsyncMbarrierArrive o;
        o.bar = Bar(f, L::kBar);
        o.noinc = Flag(f[L::kNoinc]);
        return o;
      }
      case OpKind::kStAsync: {
        using L = layout::StAsync;
        StAsync o;
        o.dst = Buf(f, L::kDst);
        o.bar = Bar(f, L::kBar);
        return o;
      }
      case OpKind::kFence: {
        Fence o;
        const uint32_t k = f[layout::Fence::kKind];
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
      case OpKind::kClusterArrive:
        return ClusterArrive{Flag(f[layout::ClusterArrive::kRelaxed])};
      case OpKind::kClusterWait:
        return ClusterWait{};
      case OpKind::kNamedBarrier: {
        using L = layout::NamedBarrier;
        NamedBarrier o;
        o.id = Expr_(f[L::kId]);
        o.threads = Expr_(f[L::kThreads]);
        o.sync = Flag(f[L::kSync]);
        return o;
      }
      case OpKind::kBufferAccess: {
        using L = layout::BufferAccess;
        BufferAccess o;
        o.buf = Buf(f, L::kBuf);
        const uint32_t w = f[L::kFlags];
        const uint32_t k = w & 7u, proxy = w >> 3;
        if (k > 7 || (k > 1 && k != 3 && k != 7)) Fail("bad buffer access kind");
        if (proxy > static_cast<uint32_t>(ReadProxy::kAsync) || (proxy != 0 && k != 0)) {
          Fail("bad read proxy");
        }
        o.write = (w & 1) != 0;
        o.atomic = (w & 2) != 0;
        o.returns = (w & 4) != 0;
        o.proxy = static_cast<ReadProxy>(proxy);
        return o;
      }
      case OpKind::kExit:
        return Exit{};
      case OpKind::kMbarrierPendingCount: {
        using L = layout::MbarrierPendingCount;
        MbarrierPendingCount o;
        o.token_var = Var(f[L::kTokenVar], false);
        o.result_var = Var(f[L::kResultVar], false);
        return o;
      }
      case OpKind::kGlobalReadback: {
        using L = layout::GlobalReadback;
        GlobalReadback o;
        o.buf = Buf(f, L::kBuf);
        o.result_var = Var(f[L::kResultVar], false);
        return o;
      }
      case OpKind::kGridDepControl: {
        GridDepControl o;
        const uint32_t k = f[layout::GridDepControl::kKind];
        if (k > static_cast<uint32_t>(GridDepControl::Kind::kWait)) Fail("bad griddepcontrol kind");
        o.kind = static_cast<GridDepControl::Kind>(k & 1);
        return o;
      }
      case OpKind::kGlobalAccess: {
        using L = layout::GlobalAccess;
        GlobalAccess o;
        o.global = f[L::kGlobal];
        if (o.global >= p_->globals.size()) Fail("global buffer index out of range");
        o.slot = Expr_(f[L::kSlot]);
        o.offset = Expr_(f[L::kOffset]);
        o.bytes = Expr_(f[L::kBytes]);
        o.write = Flag(f[L::kWrite]);
        return o;
      }
      case OpKind::kTensormapReplace: {
        TensormapReplace o;
        o.tensor_map = TensorMap(f[layout::TensormapReplace::kMap]);
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

Expected<Program> Decode(const std::vector<uint32_t>& words) { return Decoder(words).Run(); }

}  // namespace parity::ir
