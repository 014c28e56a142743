#include "sim/ptx/thread_exec.h"

#include <algorithm>
#include <bit>
#include <climits>
#include <cstring>
#include <memory>
#include <optional>
#include <set>
#include <unordered_map>
#include <utility>

#include "sim/ptx/cta_memory.h"
#include "sim/ptx/data_branch.h"
#include "sim/ptx/int_ops.h"
#include "sim/ptx/shared_bits.h"
#include "sim/ptx/special_registers.h"
#include "sim/ptx/warp_collectives.h"
#include "sim/ptx/warp_registers.h"

namespace parity::ptx {
namespace {

// The origin of an unknown value read from a kernel parameter nobody gave.
constexpr std::string_view kParamOrigin = "param:";
// The same for a scalar parameter (--arg).
constexpr std::string_view kArgOrigin = "arg:";

bool IsWarpCollective(const Instruction& inst) {
  const std::string& b = inst.base;
  return b == "shfl" || b == "vote" || b == "match" || b == "redux" || b == "activemask" ||
         b == "elect";
}

// What the runner asks of an instruction on every execution, worked out once per function and
// shared by the lanes (opcode string compares and type parsing were most of a step's time).
struct InstructionInfo {
  std::vector<OpType> types;  // Types(inst)
  bool protocol = false;      // IsProtocolInstruction
  bool shared_access = false;  // IsSharedAccess
  bool collective = false;    // IsWarpCollective
  bool branch = false;        // bra
  bool ends = false;          // ret, exit
  bool writes_first = false;  // the first operand is a destination
  int data_join = -1;         // a guarded instruction's DataOnlyJoin (data_branch.h)
  // Nothing the instruction does depends on the lane but through its register operands, and its
  // effects are on registers, the lane's pc and the lane's events: the warp may run it once for
  // every lane when those registers hold the same value in all (WarpRegisters,
  // WarpRunner::Lockstep), each lane taking the one run's event.
  bool lockstep = false;
  std::vector<int> reads;  // the register slots its guard and source operands read
  std::vector<int> writes;  // the register slots its destination operand names
};

// Every register slot `o` names, its parts' included.
void AddRegisters(const Operand& o, std::vector<int>* out) {
  if (o.kind == OperandKind::kRegister && o.reg >= 0) out->push_back(o.reg);
  for (const Operand& p : o.parts) AddRegisters(p, out);
}

// Whether the instruction's first operand is a destination (every instruction but stores,
// barriers, fences and branches writes its first operand if it is a register or a vector).
bool WritesFirstOperand(const Instruction& inst) {
  return !inst.operands.empty() && inst.base != "st" && inst.base != "bar" &&
         inst.base != "barrier" && inst.base != "fence" && inst.base != "bra";
}

std::vector<InstructionInfo> DecodeInstructions(const Function& f) {
  std::vector<InstructionInfo> out(f.instructions.size());
  for (size_t i = 0; i < out.size(); ++i) {
    const Instruction& inst = f.instructions[i];
    InstructionInfo& d = out[i];
    d.types = Types(inst);
    d.protocol = IsProtocolInstruction(inst);
    d.shared_access = IsSharedAccess(inst);
    d.collective = IsWarpCollective(inst);
    d.branch = inst.base == "bra";
    d.ends = inst.base == "ret" || inst.base == "exit";
    d.writes_first = WritesFirstOperand(inst);
    if (!inst.guard.empty()) d.data_join = DataOnlyJoin(f, static_cast<int>(i));
    // ldmatrix / stmatrix rows are given by some lanes only; named barriers, atomics and
    // ld/st.shared are followed per thread (cta_memory.h).
    const std::string& b = inst.base;
    d.lockstep = b != "ldmatrix" && b != "stmatrix" && b != "bar" && b != "barrier" &&
                 b != "atom" && b != "red" && !((b == "ld" || b == "st") && d.shared_access);
    if (!inst.guard.empty() && inst.guard_reg >= 0) d.reads.push_back(inst.guard_reg);
    // The first operand is read too when it is a memory address (cp.async's destination) or the
    // instruction is recorded (its event holds every operand's value, the old value of a register
    // it writes included).
    const OperandKind first = inst.operands.empty() ? OperandKind::kSink : inst.operands[0].kind;
    const bool first_only_written =
        d.writes_first && !d.protocol && !d.shared_access &&
        (first == OperandKind::kRegister || first == OperandKind::kVector ||
         first == OperandKind::kList);
    for (size_t k = first_only_written ? 1 : 0; k < inst.operands.size(); ++k) {
      AddRegisters(inst.operands[k], &d.reads);
    }
    if (d.writes_first) AddRegisters(inst.operands[0], &d.writes);
  }
  return out;
}

class ThreadRunner {
 public:
  ThreadRunner(const Module& m, const Function& f, const ThreadContext& ctx,
               const std::vector<SpecialRegister>& specials,
               const std::vector<InstructionInfo>& infos, WarpRegisters& regs, uint32_t lane)
      : m_(m),
        f_(f),
        ctx_(ctx),
        specials_(&specials),
        infos_(&infos),
        regs_(&regs),
        lane_(lane) {}

  enum class StepEnd { kNext, kCollective, kExited };

  // Runs the current instruction: kExited when the thread has ended, kCollective at an enabled
  // warp-collective instruction (which stays pending until Complete()), else kNext.
  Expected<StepEnd> Step() {
    const int n = static_cast<int>(f_.instructions.size());
    if (pc_ >= n) return StepEnd::kExited;
    if (++steps_ > ctx_.max_steps) {
      return Fail(f_.instructions[pc_], "the thread runs more than " +
                                            std::to_string(ctx_.max_steps) +
                                            " instructions; is a loop bound an unknown value?");
    }
    const Instruction& inst = f_.instructions[pc_];
    bool enabled = true;
    if (!inst.guard.empty()) {
      const Value g = Reg(inst.guard_reg);
      if (g.kind != Value::Kind::kInt) {
        const InstructionInfo& info = Info(inst);
        const int join = info.data_join;  // DataOnlyJoin (data_branch.h)
        if (join < 0 && (info.branch || info.protocol || info.collective)) {
          return FailUnknown(inst, "the guard " + inst.guard, g);
        }
        origin_ = g.symbol.empty() ? "#" + std::to_string(pc_) : g.symbol;
        origin_pc_ = -1;
        ClobberDestinations(inst);
        for (++pc_; pc_ < join; ++pc_) ClobberDestinations(f_.instructions[pc_]);
        return StepEnd::kNext;
      }
      enabled = (g.bits != 0) != inst.guard_negated;
    }
    if (!enabled) {
      ++pc_;
      return StepEnd::kNext;
    }
    const InstructionInfo& info = Info(inst);
    if (info.branch) {
      const int target = inst.BranchTarget();
      if (target < 0) return Fail(inst, "branch without a resolved label");
      pc_ = target;
      return StepEnd::kNext;
    }
    if (info.ends) return StepEnd::kExited;
    if (info.collective) return StepEnd::kCollective;
    PARITY_RETURN_IF_ERROR(Execute(inst, pc_));
    if (ctx_.memory != nullptr && !lockstep_) FollowMemory(inst);
    ++pc_;
    return StepEnd::kNext;
  }

  // While set, every register write is every lane's (the warp runs the step once for all).
  void set_lockstep(bool on) { lockstep_ = on; }
  // Another lane ran a step of this lane's in lockstep: this lane is where it is now.
  void Follow(const ThreadRunner& leader, int64_t steps) {
    pc_ = leader.pc_;
    steps_ += steps;
  }
  int64_t steps() const { return steps_; }
  const std::vector<ProtocolEvent>& events() const { return events_; }
  void AddEvent(const ProtocolEvent& e) { events_.push_back(e); }
  int64_t max_steps() const { return ctx_.max_steps; }

  // The pending warp-collective instruction and its operands' values in this lane.
  const Instruction& Pending() const { return f_.instructions[pc_]; }
  int pc() const { return pc_; }
  Value OperandValue(size_t i) const {
    const auto& o = Pending().operands;
    return i < o.size() ? Eval(o[i]) : Value::Unknown();
  }
  uint32_t Lane() const { return LinearTid() % 32; }

  // Completes the pending collective: its destination (and the `d|p` predicate) get the values
  // the warp computed; elect.sync is also a protocol event.
  void Complete(const Value& d, int d_bits, const Value& p) {
    const Instruction& inst = Pending();
    origin_ = "#" + std::to_string(pc_);
    origin_pc_ = -1;
    if (Info(inst).protocol) Record(inst, pc_);
    if (!inst.operands.empty()) {
      const auto& d_op = inst.operands[0];
      Set(d_op, d, d_bits);
      if (!d_op.parts.empty()) Set(d_op.parts[0], p, 1);
    }
    ++pc_;
  }

  Status Fail(const Instruction& inst, const std::string& why) const {
    return Status("import.unsupported-control", "`" + inst.opcode + "`: " + why,
                  {m_.path, inst.line, inst.column});
  }

  std::vector<ProtocolEvent> TakeEvents() { return std::move(events_); }

 private:
  // A value the control path needs is unknown: a kernel parameter nobody gave is bad input naming
  // the parameter (import.missing-param); anything else the importer cannot follow.
  Status FailUnknown(const Instruction& inst, const std::string& what, const Value& v) const {
    Status missing = MissingParameter(m_.path, inst, what, v);
    if (!missing.ok()) return missing;
    return Fail(inst, what + " depends on data the importer does not know (" +
                          DescribeOrigin(v.symbol) + ")");
  }

  Value Reg(int slot) const {
    const SpecialRegister& sr = (*specials_)[static_cast<size_t>(slot)];
    switch (sr.kind) {
      case SpecialRegister::Kind::kNone:
        return regs_->Get(slot, lane_);
      case SpecialRegister::Kind::kTid:
        return Value::Int(ctx_.tid[sr.dim]);
      case SpecialRegister::Kind::kNtid:
        return Value::Int(ctx_.ntid[sr.dim]);
      case SpecialRegister::Kind::kCtaid:
        return Value::Int(ctx_.ctaid[sr.dim]);
      case SpecialRegister::Kind::kNctaid:
        return Value::Int(ctx_.nctaid[sr.dim]);
      case SpecialRegister::Kind::kClusterCtaid:
        return Value::Int(ctx_.cluster_ctaid[sr.dim]);
      case SpecialRegister::Kind::kClusterNctaid:
        return Value::Int(ctx_.cluster_nctaid[sr.dim]);
      case SpecialRegister::Kind::kClusterid:
        return Value::Int(ctx_.clusterid[sr.dim]);
      case SpecialRegister::Kind::kNclusterid:
        return Value::Int(ctx_.nclusterid[sr.dim]);
      case SpecialRegister::Kind::kLaneid:
        return Value::Int(LinearTid() % 32);
      case SpecialRegister::Kind::kWarpid:
        return Value::Int(LinearTid() / 32);
      case SpecialRegister::Kind::kClusterCtarank:
        return Value::Int(ctx_.cluster_ctarank);
      case SpecialRegister::Kind::kClusterNctarank:
        return Value::Int(ctx_.cluster_nctarank);
    }
    return Value::Unknown();
  }

  // `inst` is one of f_'s instructions.
  const InstructionInfo& Info(const Instruction& inst) const {
    return (*infos_)[static_cast<size_t>(&inst - f_.instructions.data())];
  }

  uint32_t LinearTid() const {
    return ctx_.tid[0] + ctx_.ntid[0] * (ctx_.tid[1] + ctx_.ntid[1] * ctx_.tid[2]);
  }

  bool IsSharedVariable(const std::string& name) const {
    for (const Variable& v : f_.variables) {
      if (v.name == name && v.space == "shared") return true;
    }
    for (const Variable& v : m_.globals) {
      if (v.name == name && v.space == "shared") return true;
    }
    return false;
  }

  Value Eval(const Operand& o) const {
    switch (o.kind) {
      case OperandKind::kRegister:
        return Reg(o.reg);
      case OperandKind::kInteger:
        return Value::Int(static_cast<uint64_t>(o.integer));
      case OperandKind::kFloat:
        return Value::Int(o.bits);
      case OperandKind::kSymbol:
        if (f_.FindParam(o.text) != nullptr || IsSharedVariable(o.text)) {
          return Value::Address(o.text, static_cast<uint64_t>(o.integer));
        }
        return Value::Unknown();
      case OperandKind::kAddress: {
        if (o.address_is_absolute) return Value::Int(static_cast<uint64_t>(o.integer));
        Value base = Eval(o.parts[0]);
        if (base.kind == Value::Kind::kUnknown) return base;
        base.bits += static_cast<uint64_t>(o.integer);
        if (base.kind == Value::Kind::kAddress && IsSharedVariable(base.symbol)) {
          base.bits = Mask(base.bits, 32);
        }
        return base;
      }
      default:
        return Value::Unknown();
    }
  }

  void Set(const Operand& dst, Value v, int bits) {
    if (dst.kind != OperandKind::kRegister) return;
    if (v.kind == Value::Kind::kUnknown && v.symbol.empty()) v.symbol = Origin();
    // A 32-bit register holds a shared address modulo 2^32 (the arithmetic that built it may
    // have added a negative offset as its 32-bit two's complement).
    // A derived value's `bits` is its address: n bits of address >> shift keep it modulo
    // 2^(n + shift) (DeepGEMM's `(addr >> 4) & 0x3fff` in 16 bits keeps byte 131072).
    if (v.kind == Value::Kind::kDerived) {
      if (v.shift >= 0) v.bits = Mask(v.bits, std::min(64, bits + v.shift));
    } else if (v.kind == Value::Kind::kInt || bits <= 32) {
      v.bits = Mask(v.bits, bits);
    }
    // A shared variable's addresses fit the 32-bit shared window whatever register holds them.
    if ((v.kind == Value::Kind::kAddress || v.kind == Value::Kind::kDerived) &&
        IsSharedVariable(v.symbol)) {
      v.bits = Mask(v.bits, 32);
    }
    Write(dst.reg, std::move(v));
  }

  void Write(int slot, Value v) {
    if (lockstep_) {
      regs_->SetAll(slot, std::move(v));
    } else {
      regs_->SetLane(slot, lane_, std::move(v));
    }
  }

  // Marks every register an instruction may write as unknown.
  void ClobberDestinations(const Instruction& inst) {
    if (!Info(inst).writes_first) return;
    const Operand& d = inst.operands[0];
    Value unknown = Value::Unknown();
    unknown.symbol = Origin();
    if (d.kind == OperandKind::kRegister) {
      Write(d.reg, unknown);
      for (const Operand& p : d.parts) {
        if (p.reg >= 0) Write(p.reg, unknown);
      }
    } else if (d.kind == OperandKind::kVector || d.kind == OperandKind::kList) {
      for (const Operand& p : d.parts) {
        if (p.kind == OperandKind::kRegister) Write(p.reg, unknown);
      }
    }
  }

  // Integer binary arithmetic on known values; addresses take integer offsets.
  static Value Arith(const std::string& op, const Value& a, const Value& b, const OpType& t) {
    using K = Value::Kind;
    // Bit manipulation of a shared address (a wgmma descriptor) keeps its origin.
    const bool a_addr = a.kind == K::kAddress || a.kind == K::kDerived;
    const bool b_addr = b.kind == K::kAddress || b.kind == K::kDerived;
    if ((a.kind == K::kDerived && b.kind != K::kAddress) ||
        (b.kind == K::kDerived && a.kind != K::kAddress) ||
        (a_addr && b.kind == K::kInt && op != "add" && op != "sub") ||
        (b_addr && a.kind == K::kInt && op != "add" && op != "sub")) {
      const Value& origin = a_addr ? a : b;
      const Value& other = a_addr ? b : a;
      // The shift relating the value to the address: an address has 0; shr by n adds n, shl
      // takes it back; masking and or-ing layout bits keep it; adding k moves it by k << shift.
      const int shift = origin.kind == K::kAddress ? 0 : origin.shift;
      if (other.kind != K::kInt || shift < 0) return Value::Derived(origin.symbol, origin.bits);
      const uint64_t k = other.bits;
      if (op == "shr" && &origin == &a && k < 32) {
        return Value::Derived(origin.symbol, origin.bits, shift + static_cast<int>(k));
      }
      if (op == "shl" && &origin == &a && k < 32) {
        const int s = shift - static_cast<int>(k);
        return Value::Derived(origin.symbol, origin.bits, s >= 0 ? s : -1);
      }
      if (op == "and" || op == "or" || op == "xor") {
        return Value::Derived(origin.symbol, origin.bits, shift);
      }
      if (op == "add" || (op == "sub" && &origin == &a)) {
        const uint64_t delta = k << shift;
        const uint64_t moved = op == "add" ? origin.bits + delta : origin.bits - delta;
        return Value::Derived(origin.symbol, moved, shift);
      }
      return Value::Derived(origin.symbol, origin.bits);
    }
    if (op == "add") {
      if (a.kind == K::kInt && b.kind == K::kInt) return Value::Int(a.bits + b.bits);
      if (a.kind == K::kAddress && b.kind == K::kInt)
        return Value::Address(a.symbol, a.bits + b.bits);
      if (a.kind == K::kInt && b.kind == K::kAddress)
        return Value::Address(b.symbol, a.bits + b.bits);
      return Value::Unknown();
    }
    if (op == "sub") {
      if (a.kind == K::kInt && b.kind == K::kInt) return Value::Int(a.bits - b.bits);
      if (a.kind == K::kAddress && b.kind == K::kInt)
        return Value::Address(a.symbol, a.bits - b.bits);
      if (a.kind == K::kAddress && b.kind == K::kAddress && a.symbol == b.symbol) {
        return Value::Int(a.bits - b.bits);
      }
      return Value::Unknown();
    }
    if (a.kind != K::kInt || b.kind != K::kInt) return Value::Unknown();
    const uint64_t x = Mask(a.bits, t.bits);
    const uint64_t y = Mask(b.bits, t.bits);
    const int64_t sx = SignExtend(a.bits, t.bits);
    const int64_t sy = SignExtend(b.bits, t.bits);
    if (op == "and") return Value::Int(x & y);
    if (op == "or") return Value::Int(x | y);
    if (op == "xor") return Value::Int(x ^ y);
    if (op == "shl") return Value::Int(y >= static_cast<uint64_t>(t.bits) ? 0 : x << y);
    if (op == "shr") {
      const uint64_t s = std::min<uint64_t>(y, t.bits - 1);
      if (t.is_signed) return Value::Int(static_cast<uint64_t>(sx >> s));
      return Value::Int(y >= static_cast<uint64_t>(t.bits) ? 0 : x >> y);
    }
    if (op == "min")
      return Value::Int(t.is_signed ? static_cast<uint64_t>(std::min(sx, sy)) : std::min(x, y));
    if (op == "max")
      return Value::Int(t.is_signed ? static_cast<uint64_t>(std::max(sx, sy)) : std::max(x, y));
    if (op == "div" || op == "rem") {
      if (y == 0) return Value::Unknown();
      if (t.is_signed) {
        // -2^(n-1) / -1 overflows; PTX leaves it unspecified, so the value is unknown.
        if (sy == -1) return op == "rem" ? Value::Int(0) : Value::Unknown();
        return Value::Int(static_cast<uint64_t>(op == "div" ? sx / sy : sx % sy));
      }
      return Value::Int(op == "div" ? x / y : x % y);
    }
    return Value::Unknown();
  }

  static bool Compare(const std::string& cmp, const Value& a, const Value& b, const OpType& t,
                      bool* out) {
    if (a.kind != Value::Kind::kInt || b.kind != Value::Kind::kInt) return false;
    if (t.is_float) return CompareFloat(cmp, a.bits, b.bits, t.bits, out);
    const uint64_t x = Mask(a.bits, t.bits);
    const uint64_t y = Mask(b.bits, t.bits);
    const int64_t sx = SignExtend(a.bits, t.bits);
    const int64_t sy = SignExtend(b.bits, t.bits);
    if (cmp == "eq")
      *out = x == y;
    else if (cmp == "ne")
      *out = x != y;
    else if (cmp == "lt")
      *out = t.is_signed ? sx < sy : x < y;
    else if (cmp == "le")
      *out = t.is_signed ? sx <= sy : x <= y;
    else if (cmp == "gt")
      *out = t.is_signed ? sx > sy : x > y;
    else if (cmp == "ge")
      *out = t.is_signed ? sx >= sy : x >= y;
    else if (cmp == "lo")
      *out = x < y;
    else if (cmp == "ls")
      *out = x <= y;
    else if (cmp == "hi")
      *out = x > y;
    else if (cmp == "hs")
      *out = x >= y;
    else
      return false;
    return true;
  }

  Status Execute(const Instruction& inst, int pc) {
    const InstructionInfo& info = Info(inst);
    const std::vector<OpType>& types = info.types;
    const OpType t = types.empty() ? OpType{} : types.back();
    const std::string& op = inst.base;
    const auto& o = inst.operands;
    // The origin of its unknown results is worked out only if it has one (Origin()).
    origin_pc_ = pc;
    if (info.protocol || (ctx_.record_shared_accesses && info.shared_access)) {
      // ldmatrix / stmatrix .x1 / .x2 / .x4: lanes 0-7 / 0-15 / 0-31 give the rows' addresses
      // (PTX ISA 9.7.14.5.15-16); the other lanes' address operands are not used, so they
      // access nothing of their own.
      if ((op == "ldmatrix" || op == "stmatrix") &&
          LinearTid() % 32 >= (inst.HasModifier("x4") ? 32u : inst.HasModifier("x2") ? 16u : 8u)) {
        ClobberDestinations(inst);
        return Status::Ok();
      }
      Record(inst, pc);
      if (op == "mbarrier" && (inst.HasModifier("try_wait") || inst.HasModifier("test_wait"))) {
        // The schedule's wait blocks until the phase completes: the loop exits.
        if (!o.empty()) Set(o[0], Value::Int(1), 1);
      } else {
        ClobberDestinations(inst);
      }
      return Status::Ok();
    }
    // Floating-point arithmetic is data; a float kernel parameter's bits (ld.param), its copies
    // (mov, selp) and compares of known bits (setp) are control.
    if (t.is_float && op != "mov" && op != "selp" && op != "setp" && op != "ld") {
      ClobberDestinations(inst);
      return Status::Ok();
    }
    if (op == "mov" && o.size() == 2 && o[0].kind == OperandKind::kRegister &&
        o[1].kind == OperandKind::kVector) {
      // mov.b64 %rd, {%lo, %hi}: a descriptor assembled from halves keeps an address's origin;
      // only the low half keeps the address field where adding to the whole moves it.
      Value r = Value::Unknown();
      for (size_t k = 0; k < o[1].parts.size() && r.kind == Value::Kind::kUnknown; ++k) {
        const Value v = Eval(o[1].parts[k]);
        if (v.kind == Value::Kind::kAddress || v.kind == Value::Kind::kDerived) {
          const int shift = v.kind == Value::Kind::kAddress ? 0 : v.shift;
          r = Value::Derived(v.symbol, v.bits, k == 0 ? shift : -1);
        }
      }
      Set(o[0], r, t.bits);
    } else if (op == "mov" && o.size() == 2 && o[0].kind == OperandKind::kVector) {
      const std::vector<Value> parts = SplitHalves(Eval(o[1]), o[0].parts.size(), t.bits);
      const int w = t.bits / static_cast<int>(std::max<size_t>(parts.size(), 1));
      for (size_t k = 0; k < parts.size(); ++k) Set(o[0].parts[k], parts[k], w);  // shared_bits.h
    } else if (op == "mov" && o.size() == 2 && o[0].kind == OperandKind::kRegister) {
      Set(o[0], Eval(o[1]), t.bits);
    } else if ((op == "add" || op == "sub" || op == "and" || op == "or" || op == "xor" ||
                op == "shl" || op == "shr" || op == "min" || op == "max" || op == "div" ||
                op == "rem") &&
               o.size() == 3) {
      if (t.is_pred) {
        const Value a = Eval(o[1]), b = Eval(o[2]);
        Value r = Value::Unknown();
        if (a.kind == Value::Kind::kInt && b.kind == Value::Kind::kInt) {
          const bool x = a.bits != 0, y = b.bits != 0;
          r = Value::Int(op == "and" ? (x && y) : op == "or" ? (x || y) : (x != y));
        }
        Set(o[0], r, 1);
      } else {
        const Value a = Eval(o[1]), b = Eval(o[2]);  // an address's low bits: shared_bits.h
        auto low = AddressLowBits(m_, f_, op, a, b, t.bits);
        Set(o[0], low ? *low : Arith(op, a, b, t), t.bits);
      }
    } else if ((op == "not" || op == "neg") && o.size() == 2) {
      const Value a = Eval(o[1]);
      Value r = Value::Unknown();
      if (a.kind == Value::Kind::kInt) {
        if (t.is_pred)
          r = Value::Int(a.bits == 0);
        else
          r = Value::Int(op == "not" ? ~a.bits : uint64_t{0} - a.bits);
      }
      Set(o[0], r, t.bits);
    } else if ((op == "mul" || op == "mad") && o.size() >= 3 && !inst.HasModifier("hi")) {
      const Value a = Eval(o[1]), b = Eval(o[2]);
      const bool wide = inst.HasModifier("wide");
      Value r = Value::Unknown();
      if (a.kind == Value::Kind::kInt && b.kind == Value::Kind::kInt && !inst.HasModifier("hi")) {
        uint64_t p;
        if (t.is_signed) {
          // The product's low 64 bits, in unsigned arithmetic (no signed overflow).
          p = static_cast<uint64_t>(SignExtend(a.bits, t.bits)) *
              static_cast<uint64_t>(SignExtend(b.bits, t.bits));
        } else {
          p = Mask(a.bits, t.bits) * Mask(b.bits, t.bits);
        }
        r = Value::Int(p);
      }
      if (op == "mad" && o.size() == 4)
        r = Arith("add", r, Eval(o[3]), {wide ? 2 * t.bits : t.bits});
      Set(o[0], r, wide ? std::min(64, 2 * t.bits) : t.bits);
    } else if (op == "selp" && o.size() == 4) {
      const Value p = Eval(o[3]);
      Set(o[0],
          p.kind != Value::Kind::kInt ? Value::Unknown() : (p.bits != 0 ? Eval(o[1]) : Eval(o[2])),
          t.bits);
    } else if (op == "setp" && o.size() >= 3 && !inst.modifiers.empty()) {
      bool r = false;
      const bool known = Compare(inst.modifiers[0], Eval(o[1]), Eval(o[2]), t, &r);
      std::optional<bool> c;
      if (o.size() == 4) {
        const Value cv = Eval(o[3]);
        if (cv.kind == Value::Kind::kInt) c = (cv.bits != 0) != o[3].negated;
      }
      Value out = Value::Unknown();
      Value out2 = Value::Unknown();
      if (known && (o.size() == 3 || c.has_value())) {
        bool a = r, b = !r;
        if (c.has_value()) {
          const std::string& bop = inst.modifiers.size() > 1 ? inst.modifiers[1] : "and";
          auto combine = [&](bool x) {
            return bop == "and" ? (x && *c) : bop == "or" ? (x || *c) : (x != *c);
          };
          a = combine(r);
          b = combine(!r);
        }
        out = Value::Int(a);
        out2 = Value::Int(b);
      }
      Set(o[0], out, 1);
      if (!o[0].parts.empty()) Set(o[0].parts[0], out2, 1);
    } else if (op == "cvt" && o.size() == 2 && types.size() == 2 && !types[0].is_float &&
               !types[1].is_float) {
      const Value a = Eval(o[1]);
      Value r = a;
      if (a.kind == Value::Kind::kInt) {
        r = Value::Int(types[1].is_signed ? static_cast<uint64_t>(SignExtend(a.bits, types[1].bits))
                                          : Mask(a.bits, types[1].bits));
      }
      Set(o[0], r, types[0].bits);
    } else if (op == "cvta" && o.size() == 2) {
      Set(o[0], Eval(o[1]), 64);
    } else if (op == "mapa" && o.size() == 3) {
      // The same offset in the shared window of CTA `rank` of the cluster.
      const Value a = Eval(o[1]), rank = Eval(o[2]);
      Value r = Value::Unknown();
      if (a.kind == Value::Kind::kAddress && rank.kind == Value::Kind::kInt) {
        r = Value::Address(a.symbol + "@cta" + std::to_string(rank.bits), a.bits);
      }
      Set(o[0], r, 64);
    } else if ((op == "brev" || op == "popc" || op == "clz" || op == "bfind") && o.size() == 2) {
      const Value a = Eval(o[1]);
      Value r = Value::Unknown();
      if (a.kind == Value::Kind::kInt) {
        const uint64_t x = Mask(a.bits, t.bits);
        if (op == "brev") {
          uint64_t rev = 0;
          for (int i = 0; i < t.bits; ++i) rev |= ((x >> i) & 1) << (t.bits - 1 - i);
          r = Value::Int(rev);
        } else if (op == "popc") {
          r = Value::Int(static_cast<uint64_t>(std::popcount(x)));
        } else if (op == "clz") {
          r = Value::Int(static_cast<uint64_t>(std::countl_zero(x) - (64 - t.bits)));
        } else {
          // PTX ISA bfind: the most significant non-sign bit; .shiftamt gives the left shift that
          // moves it to the top; 0xffffffff when there is none.
          uint64_t y = x;
          if (t.is_signed && SignExtend(x, t.bits) < 0) y = Mask(~x, t.bits);
          const int pos = y == 0 ? -1 : 63 - std::countl_zero(y);
          r = Value::Int(pos < 0 ? 0xffffffffu
                                 : static_cast<uint64_t>(inst.HasModifier("shiftamt")
                                                             ? t.bits - 1 - pos
                                                             : pos));
        }
      }
      Set(o[0], r, op == "brev" ? t.bits : 32);
    } else if (IsIntegerBitOp(inst) && o.size() >= 2 && o[0].kind == OperandKind::kRegister) {
      std::vector<Value> in;
      for (size_t k = 1; k < o.size(); ++k) in.push_back(Eval(o[k]));
      const IntegerResult r = EvalIntegerBitOp(inst, in, t.bits, t.is_signed);
      Set(o[0], r.value, r.bits);
    } else if (op == "ld" && o.size() == 2 &&
               (inst.HasModifier("param") || inst.HasModifier("param::entry") ||
                IsParamAddress(Eval(o[1])))) {
      // ld.param, or a generic load through cvta.param (a __grid_constant__ parameter's address).
      const Value addr = Eval(o[1]);
      if (o[0].kind == OperandKind::kVector) {
        // ld.param.v2.u32 {%r1, %r2}: consecutive fields of the load's width.
        for (size_t k = 0; k < o[0].parts.size(); ++k) {
          PARITY_RETURN_IF_ERROR(CheckFits(inst, addr, k * (t.bits / 8), t.bits));
          Set(o[0].parts[k], LoadParam(inst, addr, k * (t.bits / 8), t.bits), t.bits);
        }
      } else {
        PARITY_RETURN_IF_ERROR(CheckFits(inst, addr, 0, t.bits));
        Set(o[0], LoadParam(inst, addr, 0, t.bits), t.bits);
      }
    } else {
      // Loads, floating point, warp shuffles, calls: data the importer does not track.
      ClobberDestinations(inst);
    }
    return Status::Ok();
  }

  // Values followed through memory (cta_memory.h): a known value replaces Execute's unknown.
  void FollowMemory(const Instruction& inst) {
    ImportMemory& mem = *ctx_.memory;
    const std::vector<OpType>& types = Info(inst).types;
    const int bits = types.empty() ? 32 : types.back().bits;
    const auto& o = inst.operands;
    const std::string& op = inst.base;
    const uint32_t tid = LinearTid();
    const SourceLocation where{m_.path, inst.line, inst.column};
    if ((op == "bar" || op == "barrier") && !inst.HasModifier("warp") &&
        !inst.HasModifier("cluster")) {
      // bar.red's first operand is its result: the barrier id and count follow it.
      const size_t first = inst.HasModifier("red") ? 1 : 0;
      const bool has_count = o.size() > first + 1 + (inst.HasModifier("red") ? 1 : 0);
      mem.OnBarrier(ctx_.unit, tid, o.size() > first ? Eval(o[first]) : Value::Int(0),
                    has_count ? Eval(o[first + 1]) : Value::Unknown(), has_count,
                    ctx_.ntid[0] * ctx_.ntid[1] * ctx_.ntid[2], !inst.HasModifier("arrive"));
    } else if (op == "st" && IsSharedAccess(inst) && o.size() == 2) {
      const bool vector = o[1].kind == OperandKind::kVector;
      const int bytes = bits / 8 * (vector ? static_cast<int>(o[1].parts.size()) : 1);
      mem.OnSharedStore(ctx_.unit, tid, Eval(o[0]), bytes,
                        vector ? Value::Unknown() : Eval(o[1]));
    } else if (op == "ld" && IsSharedAccess(inst) && o.size() == 2 &&
               o[0].kind == OperandKind::kRegister) {
      const Value v = mem.OnSharedLoad(ctx_.unit, tid, Eval(o[1]), bits / 8, where);
      if (v.kind == Value::Kind::kInt) Set(o[0], v, bits);
    } else if (op == "atom" && inst.HasModifier("global") && inst.HasModifier("add") &&
               o.size() == 3 && o[0].kind == OperandKind::kRegister) {
      const Value v = mem.OnGlobalAtomAdd(ctx_.unit, tid, Eval(o[1]), Eval(o[2]), bits, where);
      if (v.kind == Value::Kind::kInt) Set(o[0], v, bits);
    }
  }

  bool IsParamAddress(const Value& v) const {
    return v.kind == Value::Kind::kAddress && f_.FindParam(v.symbol) != nullptr;
  }

  // A --param value must fit the width of the load that reads it (as an unsigned or a signed
  // number): a wider value names the wrong field or the wrong offset.
  Status CheckFits(const Instruction& inst, const Value& addr, uint64_t delta, int bits) const {
    if (addr.kind != Value::Kind::kAddress || bits >= 64) return Status::Ok();
    auto it = ctx_.params.find({addr.symbol, addr.bits + delta});
    if (it == ctx_.params.end()) return Status::Ok();
    const uint64_t v = it->second;
    if (Mask(v, bits) == v || static_cast<uint64_t>(SignExtend(v, bits)) == v) return Status::Ok();
    return Status("import.bad-option",
                  "--param " + addr.symbol + "+" + std::to_string(addr.bits + delta) + "=" +
                      std::to_string(v) + " does not fit the " + std::to_string(bits / 8) +
                      "-byte field `" + inst.opcode + "` reads there",
                  {m_.path, inst.line, inst.column});
  }

  // What the executing instruction's unknown results come from: the first unknown source's
  // origin (what the control path needed and nobody gave), or the instruction itself ("#pc",
  // short enough to stay in the string's own buffer: most unknown results are never asked
  // about). A load's result is unknown because memory is, whatever its address was.
  const std::string& Origin() {
    if (origin_pc_ < 0) return origin_;
    const Instruction& inst = f_.instructions[origin_pc_];
    const std::string& op = inst.base;
    const auto& o = inst.operands;
    origin_.clear();
    const bool loads = op == "ld" || op == "ldu" || op == "atom" || op == "tex" || op == "suld";
    for (size_t i = 1; i < o.size() && origin_.empty() && !loads; ++i) {
      const Value v = Eval(o[i]);
      if (v.kind == Value::Kind::kUnknown) origin_ = v.symbol;
      for (const Operand& part : o[i].parts) {
        if (!origin_.empty()) break;
        const Value pv = Eval(part);
        if (pv.kind == Value::Kind::kUnknown) origin_ = pv.symbol;
      }
    }
    if (origin_.empty()) origin_ = "#" + std::to_string(origin_pc_);
    origin_pc_ = -1;
    return origin_;
  }

  // "the result of `ld.global.u32` at PTX line 19" for an origin "#pc".
  std::string DescribeOrigin(const std::string& origin) const {
    if (origin.empty()) return "a loaded value";
    if (origin[0] != '#') return origin;
    const int pc = std::stoi(origin.substr(1));
    const Instruction& inst = f_.instructions[pc];
    return "the result of `" + inst.opcode + "` at PTX line " + std::to_string(inst.line);
  }

  // ld.param: a scalar argument (--arg) or a field of a by-value parameter (--param) at the
  // load's width. A field nobody gave is unknown and remembers which field it is, so that a
  // branch on it names the parameter.
  Value LoadParam(const Instruction& inst, const Value& addr, uint64_t delta, int bits) const {
    if (addr.kind != Value::Kind::kAddress) return Value::Unknown();
    for (size_t i = 0; i < f_.params.size(); ++i) {
      const Param& p = f_.params[i];
      if (p.name != addr.symbol) continue;
      const uint64_t off = addr.bits + delta;
      if (ctx_.param_reads != nullptr) ctx_.param_reads->insert({p.name, off});
      if (p.array_size == 0 && off == 0) {
        auto it = ctx_.args.find(static_cast<int>(i));
        if (it != ctx_.args.end()) return Value::Int(Mask(it->second, bits));
      }
      auto it = ctx_.params.find({p.name, off});
      if (it != ctx_.params.end()) return Value::Int(Mask(it->second, bits));
      if (ctx_.param_image != nullptr) {
        const uint64_t at = ParamOffsets(f_)[i] + off;
        const uint64_t width = static_cast<uint64_t>(bits + 7) / 8;
        if (at + width <= ctx_.param_image->size()) {
          uint64_t v = 0;
          for (uint64_t b = width; b-- > 0;) v = v << 8 | (*ctx_.param_image)[at + b];
          return Value::Int(Mask(v, bits));
        }
      }
      const SourcePos& src = inst.call_site.known() ? inst.call_site : inst.source;
      const bool scalar = p.array_size == 0 && off == 0 && delta == 0;
      Value u = Value::Unknown();
      u.symbol = std::string(scalar ? kArgOrigin : kParamOrigin) + p.name +
                 (scalar ? "" : "+" + std::to_string(off)) + " (" +
                 std::to_string(bits / 8) + " bytes at parameter-space byte " +
                 std::to_string(ParamOffsets(f_)[i] + off) + "), read by `" + inst.opcode +
                 "` at PTX line " + std::to_string(inst.line) +
                 (src.known() ? " (" + m_.SourceString(src) + ")" : "") +
                 (scalar ? "; pass --arg " + std::to_string(i) + "=VALUE"
                         : "; pass --param " + p.name + "+" + std::to_string(off) + "=VALUE");
      return u;
    }
    return Value::Unknown();
  }

  void Record(const Instruction& inst, int pc) {
    ProtocolEvent e;
    e.instruction = pc;
    e.operands.reserve(inst.operands.size());
    e.elements.reserve(inst.operands.size());
    // An unknown operand's origin is a diagnostic, not part of the event (lanes compare equal),
    // except a kernel parameter nobody gave: the importer names it (every lane reads it alike).
    auto eval = [this](const Operand& x) {
      Value v = Eval(x);
      if (v.kind == Value::Kind::kUnknown && v.symbol.rfind(kParamOrigin, 0) != 0 &&
          v.symbol.rfind(kArgOrigin, 0) != 0) {
        v.symbol.clear();
      }
      return v;
    };
    // A vector the instruction writes (wgmma's 64 accumulators, ldmatrix's fragments) holds
    // its registers' old contents, which nothing reads: its elements are not kept (per lane and
    // per wgmma they were most of the import's memory).
    const bool skip_written = Info(inst).writes_first;
    for (const Operand& o : inst.operands) {
      e.operands.push_back(eval(o));
      std::vector<Value> extra;
      const size_t first = o.kind == OperandKind::kAddress ? 1 : 0;
      const bool written = skip_written && &o == &inst.operands.front();
      if (o.kind == OperandKind::kAddress || (o.kind == OperandKind::kVector && !written)) {
        for (size_t k = first; k < o.parts.size(); ++k) {
          if (o.parts[k].kind == OperandKind::kVector) {
            for (const Operand& x : o.parts[k].parts) extra.push_back(eval(x));
          } else {
            extra.push_back(eval(o.parts[k]));
          }
        }
      }
      e.elements.push_back(std::move(extra));
    }
    events_.push_back(std::move(e));
  }

  const Module& m_;
  const Function& f_;
  const ThreadContext& ctx_;
  // Per register slot (Function::registers): its value; a register never written is unknown.
  const std::vector<SpecialRegister>* specials_;
  const std::vector<InstructionInfo>* infos_;  // per instruction of f_
  WarpRegisters* regs_;
  uint32_t lane_;  // this lane's index in regs_
  bool lockstep_ = false;
  std::vector<ProtocolEvent> events_;
  int pc_ = 0;
  int64_t steps_ = 0;
  // What the unknown results of the executing instruction come from (Value::symbol of kUnknown).
  std::string origin_;
  int origin_pc_ = -1;  // >= 0: origin_ is still to be worked out for that instruction
};

// The lanes of one warp run together: each runs on its own until it exits or reaches a
// warp-collective instruction (shfl.sync, vote.sync, match.sync, redux.sync, activemask,
// elect.sync); a collective completes once every non-exited lane of its member mask waits at one
// with the same qualifiers and mask (PTX ISA 9.7.8.6 and 9.7.13: "wait until all non-exited
// threads corresponding to membermask have executed ... with the same qualifiers and same
// membermask value"), and its results are computed from the lanes' own operand values.
class WarpRunner {
 public:
  WarpRunner(const Module& m, const Function& f, const ThreadContext& cta, uint32_t warp)
      : warp_(warp), lockstep_(cta.lockstep) {
    const uint32_t threads = cta.ntid[0] * cta.ntid[1] * cta.ntid[2];
    const uint32_t first = 32 * warp;
    const uint32_t n = first < threads ? std::min<uint32_t>(32, threads - first) : 0;
    ctxs_.assign(n, cta);
    for (uint32_t i = 0; i < n; ++i) {
      const uint32_t t = first + i;
      ctxs_[i].tid = {t % cta.ntid[0], (t / cta.ntid[0]) % cta.ntid[1],
                      t / (cta.ntid[0] * cta.ntid[1])};
    }
    specials_.reserve(f.registers.size());
    for (const std::string& name : f.registers) specials_.push_back(ClassifyRegister(name));
    infos_ = DecodeInstructions(f);
    // %tid and %laneid are each lane's own: an instruction reading them runs per lane.
    for (InstructionInfo& info : infos_) {
      for (int slot : info.reads) {
        const SpecialRegister::Kind k = specials_[static_cast<size_t>(slot)].kind;
        if (k == SpecialRegister::Kind::kTid || k == SpecialRegister::Kind::kLaneid) {
          info.lockstep = false;
        }
      }
    }
    regs_ = std::make_unique<WarpRegisters>(f.registers.size(), n);
    // ThreadRunner keeps a reference to its context: ctxs_ is not resized from here on.
    for (uint32_t i = 0; i < n; ++i) {
      lanes_.push_back(
          std::make_unique<ThreadRunner>(m, f, ctxs_[i], specials_, infos_, *regs_, i));
    }
  }

  Expected<std::vector<std::vector<ProtocolEvent>>> Run() {
    const uint32_t n = static_cast<uint32_t>(lanes_.size());
    std::vector<bool> exited(n, false), running(n, true);
    while (true) {
      PARITY_RETURN_IF_ERROR(AdvanceLanes(exited, running));
      uint32_t alive = 0;
      for (uint32_t i = 0; i < n; ++i) alive |= exited[i] ? 0u : (1u << i);
      if (alive == 0) break;
      bool progressed = false;
      for (uint32_t i = 0; i < n && !progressed; ++i) {
        if (exited[i]) continue;
        ThreadRunner& lane = *lanes_[i];
        const Instruction& inst = lane.Pending();
        uint32_t group = 0;
        if (inst.base == "activemask") {
          // The lanes converged at this instruction (every lane that has not exited has reached
          // a collective, so the warp is as converged as it will be).
          for (uint32_t j = 0; j < n; ++j) {
            if (!exited[j] && lanes_[j]->pc() == lane.pc()) group |= 1u << j;
          }
        } else {
          const Value mask = MaskOf(i);
          if (mask.kind != Value::Kind::kInt) {
            return lane.Fail(inst, "the member mask depends on data the importer does not know");
          }
          if ((mask.bits >> i & 1) == 0) {
            return lane.Fail(inst, "lane " + std::to_string(i) + " executes `" + inst.opcode +
                                       "` outside its member mask " + Hex(mask.bits) +
                                       " (PTX leaves that undefined)");
          }
          group = static_cast<uint32_t>(mask.bits) & alive;
          bool ready = true;
          for (uint32_t j = 0; j < n && ready; ++j) {
            if ((group >> j & 1) == 0) continue;
            const Instruction& other = lanes_[j]->Pending();
            ready = other.opcode == inst.opcode && MaskOf(j) == mask;
          }
          if (!ready) continue;
        }
        std::vector<LaneResult> results(n);
        const LaneOperand operand = [this](uint32_t lane, size_t i) {
          return lanes_[lane]->OperandValue(i);
        };
        for (uint32_t j = 0; j < n; ++j) {
          if (group >> j & 1) results[j] = ResolveCollective(inst, group, j, operand);
        }
        for (uint32_t j = 0; j < n; ++j) {
          if ((group >> j & 1) == 0) continue;
          lanes_[j]->Complete(results[j].d, results[j].d_bits, results[j].p);
          running[j] = true;
        }
        for (int slot : infos_[static_cast<size_t>(lane.pc() - 1)].writes) {
          regs_->Collapse(slot, alive);
        }
        progressed = true;
      }
      if (!progressed) {
        // Each run of lanes waiting alike: "lanes 0-15 at PTX line 18 (`vote...`, mask 0x...)".
        std::string waits;
        for (uint32_t j = 0; j < n;) {
          if (exited[j]) {
            ++j;
            continue;
          }
          const Instruction& w = lanes_[j]->Pending();
          const Value mask = MaskOf(j);
          uint32_t last = j;
          while (last + 1 < n && !exited[last + 1] && &lanes_[last + 1]->Pending() == &w &&
                 MaskOf(last + 1) == mask) {
            ++last;
          }
          if (!waits.empty()) waits += "; ";
          waits += (last == j ? "lane " + std::to_string(j)
                              : "lanes " + std::to_string(j) + "-" + std::to_string(last)) +
                   " at PTX line " + std::to_string(w.line) + " (`" + w.opcode + "`, mask " +
                   (mask.kind == Value::Kind::kInt ? Hex(mask.bits) : mask.ToString()) + ")";
          j = last + 1;
        }
        uint32_t first = 0;
        while (exited[first]) ++first;
        return lanes_[first]->Fail(
            lanes_[first]->Pending(),
            "the lanes of warp " + std::to_string(warp_) +
                " wait at warp-collective instructions that no member mask lets complete: " +
                waits);
      }
    }
    std::vector<std::vector<ProtocolEvent>> out;
    for (auto& lane : lanes_) out.push_back(lane->TakeEvents());
    return out;
  }

 private:
  // Runs the running lanes until each has exited or waits at a warp-collective instruction. The
  // lanes at the lowest pc step first, together: lanes that branched apart meet again where
  // their paths join (the earlier path runs first, a loop's later iterations before its exit),
  // and a step of every lane that has not exited whose registers read alike runs once for all
  // (WarpRegisters). The lanes interact only at collectives, so the order in which their steps
  // run changes no lane's events.
  Status AdvanceLanes(std::vector<bool>& exited, std::vector<bool>& running) {
    const uint32_t n = static_cast<uint32_t>(lanes_.size());
    using StepEnd = ThreadRunner::StepEnd;
    while (true) {
      int pc = INT_MAX, next = INT_MAX;  // the lowest pc of a running lane, and the next one
      uint32_t group = 0, alive = 0;
      for (uint32_t j = 0; j < n; ++j) {
        if (exited[j]) continue;
        alive |= 1u << j;
        if (!running[j]) continue;
        const int p = lanes_[j]->pc();
        if (p < pc) {
          next = pc;
          pc = p;
          group = 1u << j;
        } else if (p == pc) {
          group |= 1u << j;
        } else if (p < next) {
          next = p;
        }
      }
      if (group == 0) return Status::Ok();
      ThreadRunner& leader = *lanes_[static_cast<size_t>(std::countr_zero(group))];
      // The group steps until it splits, stops or reaches another running lane's pc.
      while (true) {
        if (group == alive && Lockstep(pc, group)) {
          const int64_t before = leader.steps();
          const size_t events = leader.events().size();
          leader.set_lockstep(true);
          auto end = leader.Step();
          leader.set_lockstep(false);
          if (!end.ok()) return end.status();
          const bool recorded = leader.events().size() > events;
          for (uint32_t j = 0; j < n; ++j) {
            if ((group >> j & 1) == 0) continue;
            if (&leader != lanes_[j].get()) {
              lanes_[j]->Follow(leader, leader.steps() - before);
              if (recorded) lanes_[j]->AddEvent(leader.events().back());
            }
            if (*end == StepEnd::kExited) exited[j] = true;
            if (*end == StepEnd::kCollective) running[j] = false;
          }
          if (*end != StepEnd::kNext) break;
          pc = leader.pc();
        } else {
          bool together = true;
          for (uint32_t j = 0; j < n; ++j) {
            if ((group >> j & 1) == 0) continue;
            auto end = lanes_[j]->Step();
            if (!end.ok()) return end.status();
            if (*end == StepEnd::kExited) exited[j] = true;
            if (*end == StepEnd::kCollective) running[j] = false;
            together &= *end == StepEnd::kNext && lanes_[j]->pc() == leader.pc();
          }
          if (group == alive && pc < static_cast<int>(infos_.size())) {
            for (int slot : infos_[static_cast<size_t>(pc)].writes) regs_->Collapse(slot, alive);
          }
          if (!together) break;
          pc = leader.pc();
        }
        if (pc >= next) break;
      }
    }
  }

  // Whether the lanes of `group`, every lane that has not exited, may run the instruction at
  // `pc` once for all: it is a lockstep one, the registers it reads hold one value for every
  // lane, and no lane is at its step limit (which the lane's own step reports).
  bool Lockstep(int pc, uint32_t group) const {
    if (!lockstep_ || pc >= static_cast<int>(infos_.size())) return false;
    const InstructionInfo& info = infos_[static_cast<size_t>(pc)];
    if (!info.lockstep) return false;
    for (int slot : info.reads) {
      if (specials_[static_cast<size_t>(slot)].kind == SpecialRegister::Kind::kNone &&
          !regs_->Uniform(slot)) {
        return false;
      }
    }
    for (uint32_t j = 0; j < lanes_.size(); ++j) {
      if ((group >> j & 1) != 0 && lanes_[j]->steps() >= lanes_[j]->max_steps()) return false;
    }
    return true;
  }

  static size_t MaskOperand(const Instruction& inst) {
    if (inst.base == "elect") return 1;
    return inst.operands.empty() ? 0 : inst.operands.size() - 1;
  }

  // A lane's member mask: 32 bits (an immediate -1 and a register holding 0xffffffff agree).
  Value MaskOf(uint32_t lane) const {
    Value v = lanes_[lane]->OperandValue(MaskOperand(lanes_[lane]->Pending()));
    if (v.kind == Value::Kind::kInt) v.bits = Mask(v.bits, 32);
    return v;
  }

  uint32_t warp_;
  std::vector<SpecialRegister> specials_;
  std::vector<InstructionInfo> infos_;
  bool lockstep_;
  std::vector<ThreadContext> ctxs_;
  std::unique_ptr<WarpRegisters> regs_;
  std::vector<std::unique_ptr<ThreadRunner>> lanes_;
};

}  // namespace

Status MissingParameter(const std::string& path, const Instruction& inst, const std::string& what,
                        const Value& v) {
  if (v.kind != Value::Kind::kUnknown) return Status::Ok();
  const bool field = v.symbol.rfind(kParamOrigin, 0) == 0;
  if (!field && v.symbol.rfind(kArgOrigin, 0) != 0) return Status::Ok();
  const std::string what_param = v.symbol.substr(field ? kParamOrigin.size() : kArgOrigin.size());
  const size_t cut = std::min(what_param.find("; pass "), what_param.size());
  return Status(field ? "import.missing-param" : "import.missing-arg",
                "`" + inst.opcode + "`: " + what + " depends on kernel parameter " +
                    what_param.substr(0, cut) + ", which no --param or --arg gives" +
                    what_param.substr(cut),
                {path, inst.line, inst.column});
}

std::string Value::ToString() const {
  switch (kind) {
    case Kind::kUnknown:
      return symbol.empty() ? "?" : "? from " + symbol;
    case Kind::kInt:
      return std::to_string(bits);
    case Kind::kAddress:
      return symbol + "+" + std::to_string(bits);
    case Kind::kDerived:
      return "desc(" + symbol + "+" + std::to_string(bits) + ")";
  }
  return "?";
}

std::vector<uint64_t> ParamOffsets(const Function& entry) {
  std::vector<uint64_t> out;
  uint64_t at = 0;
  for (const Param& p : entry.params) {
    const int64_t size = p.SizeBytes();
    int64_t align = p.align;
    if (align <= 0) align = p.array_size > 0 ? std::max<int64_t>(1, size / p.array_size) : size;
    if (align <= 0) align = 1;
    at = (at + static_cast<uint64_t>(align) - 1) / static_cast<uint64_t>(align) *
         static_cast<uint64_t>(align);
    out.push_back(at);
    at += static_cast<uint64_t>(std::max<int64_t>(size, 0));
  }
  return out;
}

bool IsProtocolInstruction(const Instruction& inst) {
  const std::string& b = inst.base;
  if (b == "mbarrier" || b == "fence" || b == "barrier" || b == "elect") return true;
  if (b == "bar") return !inst.HasModifier("warp");
  if (b == "cp" || b == "st") return inst.HasModifier("async");
  return false;
}

bool IsSharedAccess(const Instruction& inst) {
  const std::string& b = inst.base;
  if (b == "wgmma" || b == "ldmatrix" || b == "stmatrix") return true;
  if ((b != "ld" && b != "st") || inst.HasModifier("async")) return false;
  for (const std::string& m : inst.modifiers) {
    if (m.rfind("shared", 0) == 0) return true;  // shared, shared::cta, shared::cluster
  }
  return false;
}

Expected<std::vector<std::vector<ProtocolEvent>>> RunWarp(const Module& module,
                                                          const Function& entry,
                                                          const ThreadContext& cta,
                                                          uint32_t warp) {
  return WarpRunner(module, entry, cta, warp).Run();
}

Expected<std::vector<ProtocolEvent>> RunThread(const Module& module, const Function& entry,
                                               const ThreadContext& ctx) {
  const uint32_t linear = ctx.tid[0] + ctx.ntid[0] * (ctx.tid[1] + ctx.ntid[1] * ctx.tid[2]);
  auto lanes = RunWarp(module, entry, ctx, linear / 32);
  if (!lanes.ok()) return lanes.status();
  return std::move((*lanes)[linear % 32]);
}

}  // namespace parity::ptx
