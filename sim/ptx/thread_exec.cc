#include "sim/ptx/thread_exec.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <optional>
#include <set>
#include <unordered_map>
#include <utility>

namespace parity::ptx {
namespace {

// The width in bits and signedness of an instruction's operation type (its last type modifier).
struct OpType {
  int bits = 64;
  bool is_signed = false;
  bool is_pred = false;
  bool is_float = false;
};

std::optional<OpType> ParseType(const std::string& m) {
  if (m == "pred") return OpType{1, false, true, false};
  if (m.size() < 2) return std::nullopt;
  const char k = m[0];
  if (k != 'b' && k != 'u' && k != 's' && k != 'f') return std::nullopt;
  int bits = 0;
  for (size_t i = 1; i < m.size(); ++i) {
    if (m[i] < '0' || m[i] > '9') return std::nullopt;
    bits = bits * 10 + (m[i] - '0');
  }
  if (bits != 8 && bits != 16 && bits != 32 && bits != 64) return std::nullopt;
  return OpType{bits, k == 's', false, k == 'f'};
}

// The types among an instruction's modifiers, in order (cvt.u32.u16 -> u32, u16).
std::vector<OpType> Types(const Instruction& inst) {
  std::vector<OpType> out;
  for (const std::string& m : inst.modifiers) {
    if (auto t = ParseType(m)) out.push_back(*t);
  }
  return out;
}

uint64_t Mask(uint64_t v, int bits) { return bits >= 64 ? v : (v & ((uint64_t{1} << bits) - 1)); }
int64_t SignExtend(uint64_t v, int bits) {
  if (bits >= 64) return static_cast<int64_t>(v);
  const uint64_t sign = uint64_t{1} << (bits - 1);
  v = Mask(v, bits);
  return static_cast<int64_t>((v ^ sign) - sign);
}

class ThreadRunner {
 public:
  ThreadRunner(const Module& m, const Function& f, const ThreadContext& ctx)
      : m_(m), f_(f), ctx_(ctx) {}

  Expected<std::vector<ProtocolEvent>> Run() {
    int pc = 0;
    int64_t steps = 0;
    const int n = static_cast<int>(f_.instructions.size());
    while (pc < n) {
      if (++steps > ctx_.max_steps) {
        return Fail(f_.instructions[pc], "the thread runs more than " +
                                             std::to_string(ctx_.max_steps) +
                                             " instructions; is a loop bound an unknown value?");
      }
      const Instruction& inst = f_.instructions[pc];
      bool enabled = true;
      if (!inst.guard.empty()) {
        const Value g = Reg(inst.guard);
        if (g.kind != Value::Kind::kInt) {
          if (inst.base == "bra" || IsProtocolInstruction(inst)) {
            return Fail(inst, "the guard " + inst.guard +
                                  " depends on data the importer does not know (a loaded value)");
          }
          ClobberDestinations(inst);
          ++pc;
          continue;
        }
        enabled = (g.bits != 0) != inst.guard_negated;
      }
      if (!enabled) {
        ++pc;
        continue;
      }
      if (inst.base == "bra") {
        const int target = inst.BranchTarget();
        if (target < 0) return Fail(inst, "branch without a resolved label");
        pc = target;
        continue;
      }
      if (inst.base == "ret" || inst.base == "exit") break;
      PARITY_RETURN_IF_ERROR(Execute(inst, pc));
      ++pc;
    }
    return std::move(events_);
  }

 private:
  Status Fail(const Instruction& inst, const std::string& why) const {
    return Status("import.unsupported-control", "`" + inst.opcode + "`: " + why,
                  {m_.path, inst.line, inst.column});
  }

  Value Reg(const std::string& name) const {
    static const char* const kDims = "xyz";
    if (name.size() > 2 && name[0] == '%') {
      const size_t dot = name.find('.');
      if (dot != std::string::npos && dot + 2 == name.size()) {
        const std::string base = name.substr(1, dot - 1);
        const char* d = std::strchr(kDims, name[dot + 1]);
        if (d != nullptr) {
          const int i = static_cast<int>(d - kDims);
          if (base == "tid") return Value::Int(ctx_.tid[i]);
          if (base == "ntid") return Value::Int(ctx_.ntid[i]);
          if (base == "ctaid") return Value::Int(ctx_.ctaid[i]);
          if (base == "nctaid") return Value::Int(ctx_.nctaid[i]);
          if (base == "cluster_ctaid") return Value::Int(ctx_.cluster_ctaid[i]);
          if (base == "cluster_nctaid") return Value::Int(ctx_.cluster_nctaid[i]);
          if (base == "clusterid") return Value::Int(ctx_.clusterid[i]);
          if (base == "nclusterid") return Value::Int(ctx_.nclusterid[i]);
        }
      }
      if (name == "%laneid") return Value::Int(LinearTid() % 32);
      if (name == "%warpid") return Value::Int(LinearTid() / 32);
      if (name == "%cluster_ctarank") return Value::Int(ctx_.cluster_ctarank);
      if (name == "%cluster_nctarank") return Value::Int(ctx_.cluster_nctarank);
    }
    auto it = regs_.find(name);
    return it == regs_.end() ? Value::Unknown() : it->second;
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
        return Reg(o.text);
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
    // A 32-bit register holds a shared address modulo 2^32 (the arithmetic that built it may
    // have added a negative offset as its 32-bit two's complement).
    if (v.kind == Value::Kind::kInt || bits <= 32) v.bits = Mask(v.bits, bits);
    // A shared variable's addresses fit the 32-bit shared window whatever register holds them.
    if ((v.kind == Value::Kind::kAddress || v.kind == Value::Kind::kDerived) &&
        IsSharedVariable(v.symbol)) {
      v.bits = Mask(v.bits, 32);
    }
    regs_[dst.text] = std::move(v);
  }

  // Marks every register an instruction may write as unknown.
  void ClobberDestinations(const Instruction& inst) {
    if (inst.operands.empty() || inst.base == "st" || inst.base == "bar" ||
        inst.base == "barrier" || inst.base == "fence" || inst.base == "bra") {
      return;
    }
    const Operand& d = inst.operands[0];
    if (d.kind == OperandKind::kRegister) {
      regs_[d.text] = Value::Unknown();
      for (const Operand& p : d.parts) regs_[p.text] = Value::Unknown();
    } else if (d.kind == OperandKind::kVector || d.kind == OperandKind::kList) {
      for (const Operand& p : d.parts) {
        if (p.kind == OperandKind::kRegister) regs_[p.text] = Value::Unknown();
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
    const std::vector<OpType> types = Types(inst);
    const OpType t = types.empty() ? OpType{} : types.back();
    const std::string& op = inst.base;
    const auto& o = inst.operands;
    if (IsProtocolInstruction(inst) || (ctx_.record_shared_accesses && IsSharedAccess(inst))) {
      Record(inst, pc);
      if (op == "mbarrier" && (inst.HasModifier("try_wait") || inst.HasModifier("test_wait"))) {
        // The schedule's wait blocks until the phase completes: the loop exits.
        if (!o.empty()) Set(o[0], Value::Int(1), 1);
      } else if (op == "elect") {
        // A convergent warp elects the lowest lane that is both in the member mask and present
        // (a warp's trailing lanes are absent when the block is not a multiple of 32).
        const Value mask = o.size() >= 2 ? Eval(o[1]) : Value::Int(0xffffffff);
        if (mask.kind != Value::Kind::kInt) {
          return Fail(inst, "the member mask depends on data the importer does not know");
        }
        const uint32_t threads = ctx_.ntid[0] * ctx_.ntid[1] * ctx_.ntid[2];
        const uint32_t warp_first = LinearTid() / 32 * 32;
        const uint32_t present = threads - warp_first >= 32
                                     ? 0xffffffffu
                                     : (uint32_t{1} << (threads - warp_first)) - 1;
        const uint32_t members = static_cast<uint32_t>(mask.bits) & present;
        if (members == 0 || (members >> (LinearTid() % 32) & 1) == 0) {
          // PTX leaves elect.sync undefined unless the executing lane is in the mask.
          return Fail(inst, "lane " + std::to_string(LinearTid() % 32) +
                                " executes elect.sync outside its member mask " +
                                Value::Int(mask.bits).ToString());
        }
        const uint32_t leader = static_cast<uint32_t>(std::countr_zero(members));
        const bool elected = LinearTid() % 32 == leader;
        if (!o.empty()) {
          Set(o[0], Value::Int(leader), 32);
          if (!o[0].parts.empty()) Set(o[0].parts[0], Value::Int(elected ? 1 : 0), 1);
        }
      } else {
        ClobberDestinations(inst);
      }
      return Status::Ok();
    }
    if (t.is_float && op != "mov") {
      ClobberDestinations(inst);
      return Status::Ok();
    }
    if (op == "mov" && o.size() == 2 && o[0].kind == OperandKind::kRegister &&
        o[1].kind == OperandKind::kVector) {
      // mov.b64 %rd, {%lo, %hi}: a descriptor assembled from halves keeps an address's origin.
      Value r = Value::Unknown();
      for (const Operand& p : o[1].parts) {
        const Value v = Eval(p);
        if (v.kind == Value::Kind::kAddress || v.kind == Value::Kind::kDerived) {
          r = Value::Derived(v.symbol, v.bits);
        }
      }
      Set(o[0], r, t.bits);
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
        Set(o[0], Arith(op, Eval(o[1]), Eval(o[2]), t), t.bits);
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
    } else if ((op == "mul" || op == "mad") && o.size() >= 3) {
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
    } else if (op == "ld" && inst.HasModifier("param") && o.size() == 2) {
      Set(o[0], LoadParam(Eval(o[1])), t.bits);
    } else {
      // Loads, floating point, warp shuffles, calls: their results are data the importer does
      // not track.
      ClobberDestinations(inst);
    }
    return Status::Ok();
  }

  Value LoadParam(const Value& addr) const {
    if (addr.kind != Value::Kind::kAddress || addr.bits != 0) return Value::Unknown();
    for (size_t i = 0; i < f_.params.size(); ++i) {
      if (f_.params[i].name != addr.symbol || f_.params[i].array_size > 0) continue;
      auto it = ctx_.args.find(static_cast<int>(i));
      return it == ctx_.args.end() ? Value::Unknown() : Value::Int(it->second);
    }
    return Value::Unknown();
  }

  void Record(const Instruction& inst, int pc) {
    ProtocolEvent e;
    e.instruction = pc;
    for (const Operand& o : inst.operands) {
      e.operands.push_back(Eval(o));
      std::vector<Value> extra;
      const size_t first = o.kind == OperandKind::kAddress ? 1 : 0;
      if (o.kind == OperandKind::kAddress || o.kind == OperandKind::kVector) {
        for (size_t k = first; k < o.parts.size(); ++k) {
          if (o.parts[k].kind == OperandKind::kVector) {
            for (const Operand& x : o.parts[k].parts) extra.push_back(Eval(x));
          } else {
            extra.push_back(Eval(o.parts[k]));
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
  std::unordered_map<std::string, Value> regs_;
  std::vector<ProtocolEvent> events_;
};

}  // namespace

std::string Value::ToString() const {
  switch (kind) {
    case Kind::kUnknown:
      return "?";
    case Kind::kInt:
      return std::to_string(bits);
    case Kind::kAddress:
      return symbol + "+" + std::to_string(bits);
    case Kind::kDerived:
      return "desc(" + symbol + "+" + std::to_string(bits) + ")";
  }
  return "?";
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

Expected<std::vector<ProtocolEvent>> RunThread(const Module& module, const Function& entry,
                                               const ThreadContext& ctx) {
  return ThreadRunner(module, entry, ctx).Run();
}

Expected<std::vector<ThreadClass>> ClassifyThreads(const Module& module, const Function& entry,
                                                   const ThreadContext& cta) {
  std::vector<ThreadClass> classes;
  ThreadContext ctx = cta;
  for (uint32_t z = 0; z < cta.ntid[2]; ++z) {
    for (uint32_t y = 0; y < cta.ntid[1]; ++y) {
      for (uint32_t x = 0; x < cta.ntid[0]; ++x) {
        ctx.tid = {x, y, z};
        auto events = RunThread(module, entry, ctx);
        if (!events.ok()) return events.status();
        const uint32_t linear = x + cta.ntid[0] * (y + cta.ntid[1] * z);
        bool placed = false;
        for (ThreadClass& c : classes) {
          if (c.events == *events) {
            c.threads.push_back(linear);
            placed = true;
            break;
          }
        }
        if (!placed) classes.push_back(ThreadClass{{linear}, std::move(events).value()});
      }
    }
  }
  return classes;
}

Expected<std::vector<BarrierArray>> RecoverBarriers(const Module& module, const Function& entry,
                                                    const std::vector<ThreadClass>& classes) {
  struct Init {
    std::string symbol;
    uint64_t offset;
    uint64_t count;
    int line;
  };
  std::map<std::pair<std::string, uint64_t>, Init> inits;
  for (const ThreadClass& c : classes) {
    for (const ProtocolEvent& e : c.events) {
      const Instruction& inst = entry.instructions[e.instruction];
      if (inst.base != "mbarrier" || !inst.HasModifier("init") || e.operands.size() < 2) continue;
      const Value& addr = e.operands[0];
      const Value& count = e.operands[1];
      if (addr.kind != Value::Kind::kAddress || count.kind != Value::Kind::kInt) {
        return Status("import.unsupported-barrier",
                      "mbarrier.init on an address or with a count the importer does not know "
                      "(address " +
                          addr.ToString() + ", count " + count.ToString() + ")",
                      {module.path, inst.line, inst.column});
      }
      inits.emplace(std::make_pair(addr.symbol, addr.bits),
                    Init{addr.symbol, addr.bits, count.bits, inst.line});
    }
  }
  // Rings: in one thread's inits (program order), the barrier 8 bytes after another with the
  // same count, initialised a fixed number of inits later, is its next element; a chain keeps
  // that distance (`for s: init full[s]; init empty[s]` alternates two rings, distance 2).
  // Unrolled init loops leave no other trace of the arrays (nvcc attributes the unrolled inits
  // to one source line).
  using Key = std::pair<std::string, uint64_t>;
  std::map<Key, Key> next;
  std::set<Key> has_prev;
  for (const ThreadClass& c : classes) {
    std::vector<Key> seq;
    for (const ProtocolEvent& e : c.events) {
      const Instruction& inst = entry.instructions[e.instruction];
      if (inst.base != "mbarrier" || !inst.HasModifier("init") || e.operands.size() < 2) continue;
      seq.emplace_back(e.operands[0].symbol, e.operands[0].bits);
    }
    std::map<Key, size_t> distance;  // the distance of the link into a key
    for (size_t i = 0; i < seq.size(); ++i) {
      if (next.count(seq[i]) > 0) continue;
      for (size_t j = i + 1; j < seq.size(); ++j) {
        const Key want{seq[i].first, seq[i].second + 8};
        if (seq[j] != want) continue;
        if (inits.at(seq[j]).count != inits.at(seq[i]).count || has_prev.count(seq[j]) > 0) break;
        auto d = distance.find(seq[i]);
        if (d != distance.end() && d->second != j - i) break;
        next[seq[i]] = seq[j];
        has_prev.insert(seq[j]);
        distance[seq[j]] = j - i;
        break;
      }
    }
  }
  std::vector<BarrierArray> out;
  for (const auto& [key, head] : inits) {
    if (has_prev.count(key) > 0) continue;
    BarrierArray a;
    a.symbol = head.symbol;
    a.offset = head.offset;
    a.count = head.count;
    a.init_lines = {head.line};
    for (auto it = next.find(key); it != next.end(); it = next.find(it->second)) {
      ++a.size;
      a.init_lines.push_back(inits.at(it->second).line);
    }
    // A demoted __shared__ variable demangles to `kernel(...)::name`.
    const std::string demangled = Demangle(head.symbol);
    const size_t colon = demangled.rfind("::");
    a.name = colon != std::string::npos && demangled.find(')', colon) == std::string::npos
                 ? demangled.substr(colon + 2)
                 : head.symbol;
    if (head.offset != 0) a.name += "_" + std::to_string(head.offset);
    out.push_back(std::move(a));
  }
  return out;
}

}  // namespace parity::ptx
