#include "sim/ptx/importer.h"

#include <algorithm>
#include <optional>
#include <set>
#include <sstream>
#include <utility>

#include "sim/ptx/thread_exec.h"

namespace parity::ptx {
namespace {

Status BadOption(const std::string& message) { return Status("import.bad-option", message); }

Expected<std::vector<int64_t>> ParseDims(std::string_view text, const std::string& what) {
  std::vector<int64_t> out;
  size_t i = 0;
  while (i <= text.size()) {
    const size_t x = std::min(text.find('x', i), text.size());
    const std::string_view part = text.substr(i, x - i);
    if (part.empty() || part.size() > 12 ||
        !std::all_of(part.begin(), part.end(), [](char c) { return c >= '0' && c <= '9'; })) {
      return BadOption("--tensormap " + what + " '" + std::string(text) +
                       "' is not WxH[xD...] of positive integers");
    }
    out.push_back(std::stoll(std::string(part)));
    if (out.back() <= 0) return BadOption("--tensormap " + what + " has a zero extent");
    i = x + 1;
  }
  if (out.size() > 5) return BadOption("--tensormap " + what + " has more than 5 dimensions");
  return out;
}

int64_t DtypeBytes(const std::string& dtype) {
  static const std::map<std::string, int64_t> kBytes = {
      {"u8", 1},  {"s8", 1},  {"u16", 2},  {"s16", 2}, {"f16", 2}, {"bf16", 2}, {"u32", 4},
      {"s32", 4}, {"f32", 4}, {"tf32", 4}, {"u64", 8}, {"s64", 8}, {"f64", 8}};
  auto it = kBytes.find(dtype);
  return it == kBytes.end() ? 0 : it->second;
}

// The .pipe words a declaration name must not be.
bool IsKeyword(const std::string& s) {
  static const std::set<std::string> kWords = {
      "bar",       "count",     "threads",    "bytes",       "parity",  "coords",   "multicast",
      "when",      "role",      "param",      "buffer",      "barrier", "for",      "in",
      "if",        "else",      "let",        "step",        "cluster", "clusters", "schedule",
      "agent",     "cta_rank",  "tensormap",  "dims",        "box",     "swizzle",  "dtype",
      "use",       "write",     "init",       "wait",        "arrive",  "mask",     "require",
      "cluster_m", "cluster_n", "cluster_id", "cluster_size"};
  return kWords.count(s) > 0;
}

std::string Identifier(std::string s) {
  for (char& c : s) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') c = '_';
  }
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) s = "v_" + s;
  if (IsKeyword(s)) s += "_";
  return s;
}

// `kernel(...)::name` of a demoted __shared__ variable -> `name`.
std::string ShortName(const std::string& symbol) {
  const std::string demangled = Demangle(symbol);
  const size_t colon = demangled.rfind("::");
  if (colon != std::string::npos && demangled.find(')', colon) == std::string::npos) {
    return demangled.substr(colon + 2);
  }
  return symbol;
}

std::string Basename(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// A shared address, possibly mapped to another CTA by mapa (`symbol@ctaN`).
struct SharedAddr {
  std::string symbol;
  uint64_t offset = 0;
  int cta = -1;  // -1: own CTA
};

std::optional<SharedAddr> AsShared(const Value& v) {
  if (v.kind != Value::Kind::kAddress) return std::nullopt;
  SharedAddr a{v.symbol, v.bits, -1};
  const size_t at = v.symbol.rfind("@cta");
  if (at != std::string::npos) {
    a.symbol = v.symbol.substr(0, at);
    a.cta = std::atoi(v.symbol.c_str() + at + 4);
  }
  return a;
}

// One operation of the schedule: a format with `{}` for each integer operand, so that repeated
// operations differing only in those integers can be re-rolled into a loop.
struct OpRec {
  std::string fmt;
  std::vector<int64_t> ints;
  enum class Merge { kCollapse, kCountLanes, kOneLane };
  Merge merge = Merge::kCollapse;
  int64_t arrive_count = 1;  // kCountLanes: per lane
  int lanes = 1;
  std::set<int> ptx_lines;
  std::string source;  // "file.cu:LINE" or ""

  bool SameOp(const OpRec& o) const {
    return fmt == o.fmt && ints == o.ints && arrive_count == o.arrive_count;
  }
};

struct BufferInfo {
  std::string name;
  std::string symbol;
  uint64_t base = 0;
  uint64_t stride = 0;
  int slots = 1;
  int64_t bytes = 0;
};

class Importer {
 public:
  Importer(const Module& m, const Function& f, const ImportOptions& o) : m_(m), f_(f), o_(o) {}

  Expected<std::string> Run() {
    PARITY_RETURN_IF_ERROR(CheckOptions());
    const uint32_t ctas = o_.cluster_x * o_.cluster_y;
    const uint32_t threads = o_.block[0] * o_.block[1] * o_.block[2];
    // events_[cta][thread]
    events_.assign(ctas, {});
    for (uint32_t r = 0; r < ctas; ++r) {
      ThreadContext ctx;
      ctx.ntid = o_.block;
      ctx.ctaid = {r % o_.cluster_x, r / o_.cluster_x, 0};
      ctx.nctaid = {o_.cluster_x, o_.cluster_y, 1};
      ctx.cluster_ctarank = r;
      ctx.cluster_nctarank = ctas;
      ctx.args = o_.args;
      ctx.record_shared_accesses = true;
      for (uint32_t t = 0; t < threads; ++t) {
        ctx.tid = {t % o_.block[0], (t / o_.block[0]) % o_.block[1],
                   t / (o_.block[0] * o_.block[1])};
        auto ev = RunThread(m_, f_, ctx);
        if (!ev.ok()) return MissingArgOr(ev.status());
        events_[r].push_back(std::move(ev).value());
      }
    }
    PARITY_RETURN_IF_ERROR(RecoverDeclarations());
    // Per CTA: each warp's merged operations; then roles.
    struct RoleRec {
      std::string name;
      std::vector<OpRec> ops;
      int count = 0;
      int threads = 32;
      std::vector<int> warps;
    };
    std::vector<std::vector<RoleRec>> cta_roles(ctas);
    const uint32_t warps = (threads + 31) / 32;
    for (uint32_t r = 0; r < ctas; ++r) {
      for (uint32_t w = 0; w < warps; ++w) {
        const uint32_t first = 32 * w;
        const uint32_t last = std::min(threads, first + 32);
        std::vector<std::vector<OpRec>> lanes;
        for (uint32_t t = first; t < last; ++t) {
          auto ops = ToOps(r, events_[r][t]);
          if (!ops.ok()) return ops.status();
          lanes.push_back(std::move(ops).value());
        }
        auto merged = MergeLanes(r, w, lanes);
        if (!merged.ok()) return merged.status();
        if (merged->empty()) continue;
        bool placed = false;
        for (RoleRec& role : cta_roles[r]) {
          if (SameStream(role.ops, *merged) && role.threads == static_cast<int>(last - first)) {
            ++role.count;
            role.warps.push_back(static_cast<int>(w));
            placed = true;
            break;
          }
        }
        if (!placed) {
          cta_roles[r].push_back(RoleRec{"",
                                         std::move(merged).value(),
                                         1,
                                         static_cast<int>(last - first),
                                         {static_cast<int>(w)}});
        }
      }
    }
    // A role every CTA has alike is emitted once; the others once per CTA, `when cta_rank == r`.
    auto same_role = [](const RoleRec& a, const RoleRec& b) {
      return a.count == b.count && a.threads == b.threads && a.warps == b.warps &&
             SameStream(a.ops, b.ops);
    };
    std::vector<std::vector<bool>> emitted(ctas);
    for (uint32_t r = 0; r < ctas; ++r) emitted[r].assign(cta_roles[r].size(), false);
    std::ostringstream out;
    EmitHeader(out);
    std::ostringstream roles;
    auto emit = [&](RoleRec& role, int cta) {
      std::string name = "warp" + std::to_string(role.warps[0]);
      if (role.warps.size() > 1) name += "_" + std::to_string(role.warps.back());
      if (cta >= 0) name += "_cta" + std::to_string(cta);
      roles << (role.warps.size() > 1 ? "\n# warps" : "\n# warp");
      for (int w : role.warps) roles << " " << w;
      roles << (cta < 0 ? " of every CTA" : " of CTA " + std::to_string(cta)) << "\n";
      roles << "role " << name;
      if (role.count > 1) roles << " count " << role.count;
      roles << " threads " << role.threads;
      if (cta >= 0) roles << " when cta_rank == " << cta;
      roles << " {\n";
      EmitBody(roles, role.ops);
      roles << "}\n";
    };
    for (size_t i = 0; i < cta_roles[0].size(); ++i) {
      std::vector<size_t> match(ctas, 0);
      bool everywhere = true;
      for (uint32_t r = 1; r < ctas && everywhere; ++r) {
        everywhere = false;
        for (size_t j = 0; j < cta_roles[r].size(); ++j) {
          if (!emitted[r][j] && same_role(cta_roles[r][j], cta_roles[0][i])) {
            match[r] = j;
            everywhere = true;
            break;
          }
        }
      }
      if (!everywhere) continue;
      match[0] = i;
      for (uint32_t r = 0; r < ctas; ++r) emitted[r][match[r]] = true;
      emit(cta_roles[0][i], -1);
    }
    for (uint32_t r = 0; r < ctas; ++r) {
      for (size_t j = 0; j < cta_roles[r].size(); ++j) {
        if (!emitted[r][j]) emit(cta_roles[r][j], static_cast<int>(r));
      }
    }
    // Loop bounds may name kernel arguments: declare those params first.
    for (int index : used_args_) {
      out << "param ARG" << index << " = " << static_cast<int64_t>(o_.args.at(index))
          << "   # kernel argument " << index << " (" << f_.params[index].name << ")\n";
    }
    if (!used_args_.empty()) out << "\n";
    out << decls_.str() << roles.str();
    return out.str();
  }

 private:
  Status CheckOptions() {
    for (const auto& [index, value] : o_.args) {
      if (index < 0 || index >= static_cast<int>(f_.params.size())) {
        return BadOption("--arg " + std::to_string(index) + ": the entry has " +
                         std::to_string(f_.params.size()) + " parameters");
      }
    }
    for (const TensorMapArg& t : o_.tensor_maps) {
      if (t.index < 0 || t.index >= static_cast<int>(f_.params.size())) {
        return BadOption("--tensormap " + std::to_string(t.index) + ": the entry has " +
                         std::to_string(f_.params.size()) + " parameters");
      }
      if (f_.params[t.index].SizeBytes() != 128) {
        return BadOption("--tensormap " + std::to_string(t.index) + ": parameter " +
                         f_.params[t.index].name + " is not a 128-byte CUtensorMap");
      }
      if (t.dims.size() != t.box.size()) {
        return BadOption("--tensormap " + std::to_string(t.index) +
                         ": dims and box have different ranks");
      }
    }
    if (o_.block[0] * o_.block[1] * o_.block[2] == 0 || o_.cluster_x == 0 || o_.cluster_y == 0 ||
        o_.clusters <= 0) {
      return BadOption("--block, --cluster and --clusters need positive sizes");
    }
    if (o_.block[0] * o_.block[1] * o_.block[2] > 1024) {
      return BadOption("--block has more than 1024 threads");
    }
    if (o_.cluster_x * o_.cluster_y > 16) return BadOption("--cluster has more than 16 CTAs");
    return Status::Ok();
  }

  // A run that cannot follow a branch while a scalar argument is missing: name the argument.
  Status MissingArgOr(const Status& s) const {
    if (s.rule() != "import.unsupported-control") return s;
    std::string missing;
    for (size_t i = 0; i < f_.params.size(); ++i) {
      const Param& p = f_.params[i];
      if (p.array_size != 0 || o_.args.count(static_cast<int>(i)) > 0) continue;
      if (!missing.empty()) missing += ", ";
      missing += std::to_string(i) + " (" + p.name + ", ." + p.type + ")";
    }
    if (missing.empty()) return s;
    return Status("import.missing-arg",
                  "the control flow depends on kernel arguments that were not given: " + missing +
                      "; pass --arg INDEX=VALUE (" + s.message() + ")",
                  s.where());
  }

  Status Unsupported(const Instruction& inst, const std::string& why) const {
    return Status("import.unsupported-op", "`" + inst.opcode + "`: " + why,
                  {m_.path, inst.line, inst.column});
  }

  const TensorMapArg* TensorMapOf(const Value& v) const {
    if (v.kind != Value::Kind::kAddress || v.bits != 0) return nullptr;
    for (size_t i = 0; i < f_.params.size(); ++i) {
      if (f_.params[i].name != v.symbol) continue;
      for (const TensorMapArg& t : o_.tensor_maps) {
        if (t.index == static_cast<int>(i)) return &t;
      }
    }
    return nullptr;
  }

  static bool IsTmaLoad(const Instruction& inst) {
    return inst.base == "cp" && inst.HasModifier("bulk") && inst.HasModifier("tensor");
  }

  // Barriers from the inits, buffers from the TMA destinations, and the tensor maps used.
  Status RecoverDeclarations() {
    std::vector<ThreadClass> all;
    for (const auto& cta : events_) {
      for (const auto& t : cta) all.push_back(ThreadClass{{}, t});
    }
    auto bars = RecoverBarriers(m_, f_, all);
    if (!bars.ok()) return bars.status();
    barriers_ = std::move(bars).value();
    std::set<std::string> names;
    for (BarrierArray& b : barriers_) {
      b.name = Identifier(b.name);
      while (!names.insert(b.name).second) b.name += "_";
    }
    // TMA destinations: symbol -> offset -> bytes.
    std::map<std::string, std::map<uint64_t, int64_t>> dsts;
    for (const auto& cta : events_) {
      for (const auto& t : cta) {
        for (const ProtocolEvent& e : t) {
          const Instruction& inst = f_.instructions[e.instruction];
          if (!IsTmaLoad(inst)) continue;
          if (e.operands.size() < 3) return Unsupported(inst, "too few operands");
          const TensorMapArg* tm = TensorMapOf(e.operands[1]);
          if (tm == nullptr) {
            const Value& v = e.operands[1];
            for (size_t i = 0; i < f_.params.size(); ++i) {
              if (v.kind == Value::Kind::kAddress && f_.params[i].name == v.symbol) {
                return Status("import.missing-tensormap",
                              "the TMA copy uses kernel argument " + std::to_string(i) + " (" +
                                  v.symbol + "); describe it with --tensormap " +
                                  std::to_string(i) + "=DTYPE:DIMS:BOX[:SWIZZLE]",
                              {m_.path, inst.line, inst.column});
              }
            }
            return Unsupported(inst,
                               "the tensor map is not a kernel argument (" + v.ToString() + ")");
          }
          auto dst = AsShared(e.operands[0]);
          if (!dst || dst->cta >= 0) {
            return Unsupported(inst, "the destination " + e.operands[0].ToString() +
                                         " is not a known address of this CTA's shared memory");
          }
          int64_t bytes = DtypeBytes(tm->dtype);
          for (int64_t b : tm->box) bytes *= b;
          used_maps_.insert(tm->index);
          auto [it, fresh] = dsts[dst->symbol].emplace(dst->offset, bytes);
          if (!fresh && it->second != bytes) {
            return Unsupported(inst, "copies of different sizes land at the same address");
          }
        }
      }
    }
    for (const auto& [symbol, offsets] : dsts) {
      const int64_t bytes = offsets.begin()->second;
      bool even = offsets.size() > 1;
      const uint64_t base = offsets.begin()->first;
      const uint64_t stride = offsets.size() > 1 ? std::next(offsets.begin())->first - base : 0;
      uint64_t k = 0;
      for (const auto& [off, b] : offsets) {
        if (b != bytes || off != base + k * stride || stride < static_cast<uint64_t>(bytes)) {
          even = false;
        }
        ++k;
      }
      const std::string stem = ShortName(symbol);
      if (even) {
        BufferInfo bi{stem, symbol, base, stride, static_cast<int>(offsets.size()), bytes};
        if (base != 0) bi.name += "_" + std::to_string(base);
        buffers_.push_back(bi);
      } else {
        for (const auto& [off, b] : offsets) {
          BufferInfo bi{stem, symbol, off, static_cast<uint64_t>(b), 1, b};
          if (off != 0) bi.name += "_" + std::to_string(off);
          buffers_.push_back(bi);
        }
      }
    }
    std::set<std::string> bnames;
    for (const BarrierArray& b : barriers_) bnames.insert(b.name);
    for (BufferInfo& b : buffers_) {
      b.name = Identifier(b.name);
      while (bnames.count(b.name) > 0 || !names.insert(b.name).second) b.name += "_";
    }
    return Status::Ok();
  }

  // "full[{}]" (+ " @cta({})") with its integers, or an error.
  Status BarrierRef(const Instruction& inst, const Value& v, std::string* fmt,
                    std::vector<int64_t>* ints) const {
    auto a = AsShared(v);
    if (a) {
      for (const BarrierArray& b : barriers_) {
        if (b.symbol != a->symbol || a->offset < b.offset) continue;
        const uint64_t d = a->offset - b.offset;
        if (d % 8 != 0 || d / 8 >= static_cast<uint64_t>(b.size)) continue;
        *fmt += b.name + "[{}]";
        ints->push_back(static_cast<int64_t>(d / 8));
        if (a->cta >= 0) {
          *fmt += " @cta({})";
          ints->push_back(a->cta);
        }
        return Status::Ok();
      }
    }
    return Unsupported(inst, "the mbarrier address " + v.ToString() +
                                 " is not one the kernel initialises with mbarrier.init");
  }

  // The buffer slot holding a shared address, or nullopt.
  std::optional<std::pair<const BufferInfo*, int>> BufferSlot(const SharedAddr& a) const {
    for (const BufferInfo& b : buffers_) {
      if (b.symbol != a.symbol || a.offset < b.base) continue;
      const uint64_t d = a.offset - b.base;
      const uint64_t slot = b.stride == 0 ? 0 : d / b.stride;
      if (slot < static_cast<uint64_t>(b.slots) &&
          d - slot * b.stride < static_cast<uint64_t>(b.bytes)) {
        return std::make_pair(&b, static_cast<int>(slot));
      }
    }
    return std::nullopt;
  }

  Expected<std::vector<OpRec>> ToOps(uint32_t cta, const std::vector<ProtocolEvent>& events) {
    (void)cta;
    std::vector<OpRec> out;
    for (const ProtocolEvent& e : events) {
      const Instruction& inst = f_.instructions[e.instruction];
      const auto& v = e.operands;
      OpRec op;
      op.ptx_lines.insert(inst.line);
      const SourcePos& src = inst.call_site.known() ? inst.call_site : inst.source;
      if (src.known()) {
        auto it = m_.files.find(src.file);
        op.source = (it == m_.files.end() ? std::string("?") : Basename(it->second)) + ":" +
                    std::to_string(src.line);
      }
      const std::string& b = inst.base;
      auto int_operand = [&](size_t i, int64_t* out_v) -> Status {
        if (i >= v.size() || v[i].kind != Value::Kind::kInt) {
          return Unsupported(
              inst, "operand " + std::to_string(i + 1) + " is not a value the importer knows");
        }
        *out_v = static_cast<int64_t>(v[i].bits);
        return Status::Ok();
      };
      if (b == "elect") continue;
      if (b == "mbarrier") {
        if (inst.HasModifier("init")) {
          op.fmt = "init ";
          if (v.empty()) return Unsupported(inst, "no address");
          PARITY_RETURN_IF_ERROR(BarrierRef(inst, v[0], &op.fmt, &op.ints));
          op.merge = OpRec::Merge::kOneLane;
        } else if (inst.HasModifier("try_wait") || inst.HasModifier("test_wait")) {
          if (!inst.HasModifier("parity")) {
            return Unsupported(inst, "a wait on a state token (only .parity waits are modelled)");
          }
          op.fmt = "wait ";
          if (v.size() < 3) return Unsupported(inst, "too few operands");
          PARITY_RETURN_IF_ERROR(BarrierRef(inst, v[1], &op.fmt, &op.ints));
          int64_t parity = 0;
          PARITY_RETURN_IF_ERROR(int_operand(2, &parity));
          op.fmt += " parity {}";
          op.ints.push_back(parity & 1);
        } else if (inst.HasModifier("arrive")) {
          if (inst.HasModifier("noComplete")) return Unsupported(inst, "not modelled");
          if (v.size() < 2) return Unsupported(inst, "too few operands");
          const bool tx = inst.HasModifier("expect_tx");
          op.fmt = tx ? "arrive.expect_tx " : "arrive ";
          PARITY_RETURN_IF_ERROR(BarrierRef(inst, v[1], &op.fmt, &op.ints));
          if (tx) {
            int64_t bytes = 0;
            PARITY_RETURN_IF_ERROR(int_operand(2, &bytes));
            op.fmt += " bytes {}";
            op.ints.push_back(bytes);
          } else if (v.size() >= 3) {
            PARITY_RETURN_IF_ERROR(int_operand(2, &op.arrive_count));
          }
          op.merge = tx ? OpRec::Merge::kOneLane : OpRec::Merge::kCountLanes;
        } else if (inst.HasModifier("expect_tx")) {
          if (v.size() < 2) return Unsupported(inst, "too few operands");
          op.fmt = "expect_tx ";
          PARITY_RETURN_IF_ERROR(BarrierRef(inst, v[0], &op.fmt, &op.ints));
          int64_t bytes = 0;
          PARITY_RETURN_IF_ERROR(int_operand(1, &bytes));
          op.fmt += " bytes {}";
          op.ints.push_back(bytes);
          op.merge = OpRec::Merge::kOneLane;
        } else {
          return Unsupported(inst, "this mbarrier operation is not modelled by the importer");
        }
      } else if (b == "fence") {
        if (inst.HasModifier("mbarrier_init")) {
          op.fmt = "fence.mbarrier_init";
        } else if (inst.HasModifier("proxy") && inst.HasModifier("async")) {
          op.fmt = "fence.proxy.async";
        } else if (inst.HasModifier("proxy") && inst.HasModifier("async::global")) {
          op.fmt = "fence.proxy.async.global";
        } else if (inst.HasModifier("acq_rel") && inst.HasModifier("cluster")) {
          op.fmt = "fence.acq_rel.cluster";
        } else {
          return Unsupported(inst, "this fence is not modelled by the importer");
        }
      } else if (b == "barrier" && inst.HasModifier("cluster")) {
        if (inst.HasModifier("arrive")) {
          op.fmt = inst.HasModifier("relaxed") ? "cluster.arrive relaxed" : "cluster.arrive";
        } else if (inst.HasModifier("wait")) {
          op.fmt = "cluster.wait";
        } else {
          return Unsupported(inst, "not modelled");
        }
      } else if (b == "bar" || b == "barrier") {
        const bool arrive = inst.HasModifier("arrive");
        if (!arrive && !inst.HasModifier("sync") && inst.modifiers.size() > 0 &&
            !inst.HasModifier("aligned")) {
          return Unsupported(inst, "this named-barrier form is not modelled");
        }
        int64_t id = 0;
        PARITY_RETURN_IF_ERROR(int_operand(0, &id));
        int64_t n = o_.block[0] * o_.block[1] * o_.block[2];
        if (v.size() >= 2) PARITY_RETURN_IF_ERROR(int_operand(1, &n));
        op.fmt = arrive ? "bar.arrive {}, {}" : "bar.sync {}, {}";
        op.ints = {id, n};
      } else if (IsTmaLoad(inst)) {
        if (inst.HasModifier("im2col") || !inst.HasModifier("global")) {
          return Unsupported(inst, "only tiled TMA loads into shared memory are modelled");
        }
        const TensorMapArg* tm = TensorMapOf(v[1]);
        op.fmt = "tma.load tmap" + std::to_string(tm->index) + " coords [";
        const std::vector<Value>& coords = e.elements[1];
        for (size_t i = 0; i < coords.size(); ++i) {
          if (coords[i].kind != Value::Kind::kInt) {
            return Unsupported(inst, "a coordinate the importer does not know");
          }
          op.fmt += i ? ", {}" : "{}";
          op.ints.push_back(SignExtend32(coords[i].bits));
        }
        auto slot = BufferSlot(*AsShared(v[0]));
        op.fmt += "] -> " + slot->first->name + "[{}] bar ";
        op.ints.push_back(slot->second);
        PARITY_RETURN_IF_ERROR(BarrierRef(inst, v[2], &op.fmt, &op.ints));
        if (inst.HasModifier("multicast::cluster")) {
          int64_t mask = 0;
          PARITY_RETURN_IF_ERROR(int_operand(3, &mask));
          op.fmt += " multicast {}";
          op.ints.push_back(mask & 0xffff);
        }
        op.merge = OpRec::Merge::kOneLane;
      } else if (b == "ld" || b == "st" || b == "ldmatrix" || b == "stmatrix") {
        const bool write = b == "st" || b == "stmatrix";
        const size_t ai = write ? 0 : 1;
        auto a = ai < v.size() ? AsShared(v[ai]) : std::nullopt;
        if (!a) {
          return Unsupported(inst,
                             "a shared-memory access at an address the importer does not "
                             "know");
        }
        auto slot = BufferSlot(*a);
        if (!slot) continue;  // outside every buffer the asynchronous copies fill
        op.fmt = std::string(write ? "write " : "use ") + slot->first->name + "[{}]";
        op.ints.push_back(slot->second);
        // Consecutive accesses of one slot are one use.
        if (!out.empty() && out.back().SameOp(op)) {
          out.back().ptx_lines.insert(inst.line);
          continue;
        }
      } else {
        return Unsupported(inst, "the importer does not model this instruction yet");
      }
      out.push_back(std::move(op));
    }
    return out;
  }

  static int64_t SignExtend32(uint64_t v) {
    return static_cast<int64_t>(static_cast<int32_t>(static_cast<uint32_t>(v)));
  }

  // One agent per warp: every lane's operations must be a subsequence of the leading lane's.
  Expected<std::vector<OpRec>> MergeLanes(uint32_t cta, uint32_t warp,
                                          std::vector<std::vector<OpRec>>& lanes) const {
    size_t lead = 0;
    for (size_t l = 1; l < lanes.size(); ++l) {
      if (lanes[l].size() > lanes[lead].size()) lead = l;
    }
    std::vector<OpRec> merged = lanes[lead];
    for (OpRec& op : merged) op.lanes = 1;
    for (size_t l = 0; l < lanes.size(); ++l) {
      if (l == lead) continue;
      size_t j = 0;
      for (const OpRec& op : lanes[l]) {
        while (j < merged.size() && !merged[j].SameOp(op)) ++j;
        if (j == merged.size()) {
          return Status("import.divergent-warp",
                        "lane " + std::to_string(l) + " of warp " + std::to_string(warp) +
                            " of CTA " + std::to_string(cta) + " issues `" + Render(op, {}) +
                            "` (PTX line " + std::to_string(*op.ptx_lines.begin()) +
                            ") outside the order lane " + std::to_string(lead) +
                            " issues its operations in; the importer keeps a warp's lanes "
                            "together");
        }
        ++merged[j].lanes;
        merged[j].ptx_lines.insert(op.ptx_lines.begin(), op.ptx_lines.end());
        ++j;
      }
    }
    for (OpRec& op : merged) {
      if (op.merge == OpRec::Merge::kOneLane && op.lanes > 1) {
        return Status("import.divergent-warp",
                      std::to_string(op.lanes) + " lanes of warp " + std::to_string(warp) +
                          " of CTA " + std::to_string(cta) + " each issue `" + Render(op, {}) +
                          "` (PTX line " + std::to_string(*op.ptx_lines.begin()) +
                          "); the importer models it issued by one lane");
      }
      if (op.merge == OpRec::Merge::kCountLanes) {
        const int64_t total = op.arrive_count * op.lanes;
        if (total != 1) {
          op.fmt += " count {}";
          op.ints.push_back(total);
        }
        op.merge = OpRec::Merge::kCollapse;
      }
    }
    return merged;
  }

  static bool SameStream(const std::vector<OpRec>& a, const std::vector<OpRec>& b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i) {
      if (!a[i].SameOp(b[i])) return false;
    }
    return true;
  }

  // The op's text with its integers replaced by `exprs` (or the values themselves).
  static std::string Render(const OpRec& op, const std::vector<std::string>& exprs) {
    std::string out;
    size_t k = 0;
    for (size_t i = 0; i < op.fmt.size(); ++i) {
      if (op.fmt.compare(i, 2, "{}") == 0) {
        out += k < exprs.size() ? exprs[k] : std::to_string(op.ints[k]);
        ++k;
        ++i;
      } else {
        out += op.fmt[i];
      }
    }
    return out;
  }

  std::string Comment(const std::set<int>& lines, const std::string& source) const {
    std::string c = "# " + Basename(m_.path) + ":";
    int shown = 0;
    for (int l : lines) {
      if (shown == 8) {
        c += ",...";
        break;
      }
      c += (shown++ ? "," : "") + std::to_string(l);
    }
    if (!source.empty()) c += " (" + source + ")";
    return c;
  }

  // The loop expression over `k` (off .. off + n) reproducing the longest prefix of `v`.
  static std::pair<std::string, size_t> Fit(const std::vector<int64_t>& v, int64_t off = 0) {
    std::string best;
    size_t best_len = 0;
    auto consider = [&](const std::string& e, const auto& f) {
      size_t n = 0;
      while (n < v.size() && f(static_cast<int64_t>(n) + off) == v[n]) ++n;
      if (n > best_len) {
        best_len = n;
        best = e;
      }
    };
    consider(std::to_string(v[0]), [&](int64_t) { return v[0]; });
    if (v.size() > 1) {
      const int64_t d = v[1] - v[0];
      const int64_t v0 = v[0] - d * off;  // the value at k = 0
      std::string e = d == 1 ? "k" : std::to_string(d) + " * k";
      if (d < 0) e = "0 - " + std::to_string(-d) + " * k";
      if (v0 != 0) e = std::to_string(v0) + " + " + e;
      consider(e, [&](int64_t k) { return v0 + d * k; });
    }
    for (int64_t s = 2; s <= 64 && best_len < v.size(); ++s) {
      for (int64_t a = 0; a < s; ++a) {
        const std::string k = a == 0 ? "k" : "(k + " + std::to_string(a) + ")";
        consider(k + " % " + std::to_string(s), [&](int64_t j) { return (j + a) % s; });
      }
    }
    for (int64_t s = 1; s <= 64 && best_len < v.size(); ++s) {
      for (int64_t a = 0; a < 2 * s; ++a) {
        for (int x = 0; x < 2; ++x) {
          std::string k = a == 0 ? "k" : "(k + " + std::to_string(a) + ")";
          std::string e = s == 1 ? k + " & 1" : "(" + k + " / " + std::to_string(s) + ") & 1";
          if (x) e = "(" + e + ") ^ 1";
          consider(e, [&](int64_t j) { return (((j + a) / s) & 1) ^ x; });
        }
      }
    }
    return {best, best_len};
  }

  struct Loop {
    size_t period = 0;
    size_t reps = 0;
    std::vector<std::vector<std::string>> exprs;  // per op of the body, per integer
  };

  static size_t Length(const std::vector<std::vector<std::string>>& exprs) {
    size_t n = 0;
    for (const auto& v : exprs) {
      for (const std::string& e : v) n += e.size();
    }
    return n;
  }

  // The loop's expressions with k running from `off`; nullopt unless every value fits.
  static std::optional<std::vector<std::vector<std::string>>> Refit(const std::vector<OpRec>& ops,
                                                                    size_t i, const Loop& loop,
                                                                    int64_t off) {
    std::vector<std::vector<std::string>> out;
    for (size_t q = 0; q < loop.period; ++q) {
      std::vector<std::string> exprs;
      for (size_t s = 0; s < ops[i + q].ints.size(); ++s) {
        std::vector<int64_t> vals;
        for (size_t r = 0; r < loop.reps; ++r) vals.push_back(ops[i + r * loop.period + q].ints[s]);
        auto [e, n] = Fit(vals, off);
        if (n < vals.size()) return std::nullopt;
        exprs.push_back(e);
      }
      out.push_back(exprs);
    }
    return out;
  }

  std::optional<Loop> FindLoop(const std::vector<OpRec>& ops, size_t i) const {
    std::optional<Loop> best;
    for (size_t p = 1; p <= 16 && i + 2 * p <= ops.size(); ++p) {
      size_t reps = 1;
      while (i + (reps + 1) * p <= ops.size()) {
        bool same = true;
        for (size_t q = 0; q < p && same; ++q) {
          const OpRec& a = ops[i + q];
          const OpRec& b = ops[i + reps * p + q];
          same =
              a.fmt == b.fmt && a.arrive_count == b.arrive_count && a.ints.size() == b.ints.size();
        }
        if (!same) break;
        ++reps;
      }
      if (reps < 2) continue;
      Loop loop{p, reps, {}};
      bool varies = false;
      for (size_t q = 0; q < p; ++q) {
        std::vector<std::string> exprs;
        for (size_t s = 0; s < ops[i + q].ints.size(); ++s) {
          std::vector<int64_t> vals;
          for (size_t r = 0; r < reps; ++r) vals.push_back(ops[i + r * p + q].ints[s]);
          auto [e, n] = Fit(vals);
          if (n < vals.size()) loop.reps = std::min(loop.reps, n);
          if (vals[0] != vals[1]) varies = true;
          exprs.push_back(e);
        }
        loop.exprs.push_back(exprs);
      }
      if (loop.reps < 2 || (loop.reps < 3 && !varies)) continue;
      if (loop.reps < reps) {
        // Refit over the shorter range (a shorter prefix can only fit the same expressions).
        loop.exprs.clear();
        for (size_t q = 0; q < p; ++q) {
          std::vector<std::string> exprs;
          for (size_t s = 0; s < ops[i + q].ints.size(); ++s) {
            std::vector<int64_t> vals;
            for (size_t r = 0; r < loop.reps; ++r) vals.push_back(ops[i + r * p + q].ints[s]);
            exprs.push_back(Fit(vals).first);
          }
          loop.exprs.push_back(exprs);
        }
      }
      if (!best || loop.period * loop.reps > best->period * best->reps) best = loop;
    }
    return best;
  }

  void EmitBody(std::ostream& out, const std::vector<OpRec>& ops) {
    auto line = [&](const std::string& indent, const std::string& text, const std::string& c) {
      std::string l = indent + text;
      if (l.size() < 48) l.resize(48, ' ');
      out << l << "  " << c << "\n";
    };
    size_t straight = 0;
    bool looped = false;
    for (size_t i = 0; i < ops.size();) {
      auto loop = FindLoop(ops, i);
      if (!loop) {
        line("  ", Render(ops[i], {}), Comment(ops[i].ptx_lines, ops[i].source));
        ++straight;
        ++i;
        continue;
      }
      looped = true;
      // A trip count that is a kernel argument, possibly after `lo` peeled iterations (a
      // producer's first STAGES iterations skip the empty wait): k runs lo .. ARG.
      std::string hi = std::to_string(loop->reps);
      int64_t lo = 0;
      for (const auto& [index, value] : o_.args) {
        const int64_t peeled = static_cast<int64_t>(value) - static_cast<int64_t>(loop->reps);
        if (peeled < 0 || peeled > 64) continue;
        if (peeled > 0) {
          // Only where k from `peeled` reads more simply than k from 0 (the kernel's own
          // index); otherwise the peeled loop is a different one that happens to fit.
          auto shifted = Refit(ops, i, *loop, peeled);
          if (!shifted || Length(*shifted) > Length(loop->exprs)) continue;
          loop->exprs = std::move(*shifted);
        }
        lo = peeled;
        hi = "ARG" + std::to_string(index);
        used_args_.insert(index);
        break;
      }
      out << "  for k in " << lo << " .. " << hi << " {"
          << (hi[0] == 'A' ? "" : "   # the trip count for the given arguments") << "\n";
      for (size_t q = 0; q < loop->period; ++q) {
        std::set<int> lines;
        for (size_t r = 0; r < loop->reps; ++r) {
          const auto& l = ops[i + r * loop->period + q].ptx_lines;
          lines.insert(l.begin(), l.end());
        }
        line("    ", Render(ops[i + q], loop->exprs[q]), Comment(lines, ops[i + q].source));
      }
      out << "  }\n";
      i += loop->period * loop->reps;
    }
    if (!looped && straight > 8) {
      out << "  # straight-line: no repeated operation sequence was found to re-roll\n";
    }
  }

  void EmitHeader(std::ostream& out) {
    out << "# Imported by `parity import` from " << Basename(m_.path) << ", entry "
        << Demangle(f_.name) << "\n";
    out << "# block " << o_.block[0] << "," << o_.block[1] << "," << o_.block[2] << ", cluster "
        << o_.cluster_x << "x" << o_.cluster_y;
    for (const auto& [index, value] : o_.args) out << ", arg " << index << " = " << value;
    out << "\n# Each operation names the PTX lines (and the CUDA source line) it came from. The "
           "schedule\n# issues exactly the kernel's operations for these arguments; a -D ARGn "
           "override changes\n# only the loops whose bound names ARGn.\n";
    out << "schedule " << Identifier(BareName(Demangle(f_.name))) << "\n\n";
    std::ostringstream& d = decls_;
    d << "cluster " << o_.cluster_x << "x" << o_.cluster_y << "\n";
    d << "clusters " << o_.clusters << "\n\n";
    for (const BufferInfo& b : buffers_) {
      d << "buffer " << b.name << "[" << b.slots << "] bytes " << b.bytes << "   # "
        << ShortName(b.symbol) << " + " << b.base;
      if (b.slots > 1) d << " + " << b.stride << " * slot";
      d << " (TMA destinations)\n";
    }
    for (const BarrierArray& b : barriers_) {
      d << "barrier " << b.name << "[" << b.size << "] count " << b.count << "   # "
        << ShortName(b.symbol) << " + " << b.offset << ", init at " << Basename(m_.path) << ":";
      for (size_t i = 0; i < b.init_lines.size(); ++i) {
        d << (i ? "," : "") << b.init_lines[i];
      }
      d << "\n";
    }
    for (const TensorMapArg& t : o_.tensor_maps) {
      if (used_maps_.count(t.index) == 0) continue;
      d << "tensormap tmap" << t.index << " dtype " << t.dtype << " dims [";
      for (size_t i = 0; i < t.dims.size(); ++i) d << (i ? ", " : "") << t.dims[i];
      d << "] box [";
      for (size_t i = 0; i < t.box.size(); ++i) d << (i ? ", " : "") << t.box[i];
      d << "]";
      if (t.swizzle != "none") d << " swizzle " << t.swizzle;
      d << "   # kernel argument " << t.index << "\n";
    }
  }

  const Module& m_;
  const Function& f_;
  const ImportOptions& o_;
  std::vector<std::vector<std::vector<ProtocolEvent>>> events_;
  std::vector<BarrierArray> barriers_;
  std::vector<BufferInfo> buffers_;
  std::set<int> used_maps_;
  std::set<int> used_args_;
  std::ostringstream decls_;
};

}  // namespace

Expected<TensorMapArg> ParseTensorMapArg(std::string_view spec) {
  TensorMapArg t;
  const size_t eq = spec.find('=');
  if (eq == std::string_view::npos || eq == 0 || eq > 3) {
    return BadOption("--tensormap '" + std::string(spec) +
                     "' is not INDEX=DTYPE:DIMS:BOX[:SWIZZLE]");
  }
  for (char c : spec.substr(0, eq)) {
    if (c < '0' || c > '9') return BadOption("--tensormap index is not a number");
  }
  t.index = std::stoi(std::string(spec.substr(0, eq)));
  std::vector<std::string_view> parts;
  std::string_view rest = spec.substr(eq + 1);
  while (true) {
    const size_t colon = rest.find(':');
    parts.push_back(rest.substr(0, colon));
    if (colon == std::string_view::npos) break;
    rest = rest.substr(colon + 1);
  }
  if (parts.size() < 3 || parts.size() > 4) {
    return BadOption("--tensormap '" + std::string(spec) +
                     "' is not INDEX=DTYPE:DIMS:BOX[:SWIZZLE]");
  }
  t.dtype = std::string(parts[0]);
  if (DtypeBytes(t.dtype) == 0) return BadOption("--tensormap dtype '" + t.dtype + "' is unknown");
  auto dims = ParseDims(parts[1], "dims");
  if (!dims.ok()) return dims.status();
  auto box = ParseDims(parts[2], "box");
  if (!box.ok()) return box.status();
  t.dims = *dims;
  t.box = *box;
  if (parts.size() == 4) {
    t.swizzle = std::string(parts[3]);
    if (t.swizzle != "none" && t.swizzle != "32B" && t.swizzle != "64B" && t.swizzle != "128B") {
      return BadOption("--tensormap swizzle '" + t.swizzle + "' is not none, 32B, 64B or 128B");
    }
  }
  return t;
}

Expected<std::string> ImportSchedule(const Module& module, const ImportOptions& options) {
  PARITY_RETURN_IF_ERROR(RequireHopperTarget(module));
  auto entry = FindEntry(module, options.entry);
  if (!entry.ok()) return entry.status();
  return Importer(module, **entry, options).Run();
}

}  // namespace parity::ptx
