// `parity import`: the barrier and buffer declarations recovered from the threads' run.

#include <algorithm>
#include <cctype>
#include <climits>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <set>
#include <sstream>
#include <tuple>
#include <utility>

#include "sim/ptx/import_text.h"
#include "sim/ptx/importer_internal.h"
#include "sim/ptx/thread_exec.h"

namespace parity::ptx::importer_internal {

const TensorMapArg* Importer::TensorMapOf(const Value& v) const {
  if (v.kind != Value::Kind::kAddress) return nullptr;
  for (const TensorMapArg& t : o_.tensor_maps) {
    const std::string& name = t.index >= 0 ? f_.params[t.index].name : t.param;
    const uint64_t offset = t.index >= 0 ? 0 : static_cast<uint64_t>(t.offset);
    if (name == v.symbol && offset == v.bits) return &t;
  }
  return nullptr;
}

// Barriers from the inits, buffers from the TMA destinations, and the tensor maps used.
Status Importer::RecoverDeclarations() {
  // RecoverBarriers reads the inits only: a copy of every thread's inits, not of its events.
  std::vector<ThreadClass> all;
  for (const auto& cta : events_) {
    for (const auto& t : cta) {
      ThreadClass c;
      for (const ProtocolEvent& e : t) {
        const Instruction& inst = f_.instructions[e.instruction];
        if (inst.base == "mbarrier" && inst.HasModifier("init")) c.events.push_back(e);
      }
      all.push_back(std::move(c));
    }
  }
  auto bars = RecoverBarriers(m_, f_, all);
  if (!bars.ok()) return bars.status();
  barriers_ = std::move(bars).value();
  std::set<std::string> names;
  for (BarrierArray& b : barriers_) {
    b.name = Identifier(b.name);
    while (!names.insert(b.name).second) b.name += "_";
  }
  // The regions the asynchronous copies fill or read: symbol -> offset -> bytes, and how each
  // region is addressed: symbol -> offset -> the copies' kinds (`tma.load tmap4`, `cp`, ...).
  std::map<std::string, std::map<uint64_t, int64_t>> regions;
  std::map<std::string, std::map<uint64_t, std::set<std::string>>> families;
  std::string family;  // the kind of the copy being added
  auto add = [&](const Instruction& inst, const std::string& symbol, uint64_t offset,
                 int64_t bytes) -> Status {
    // Copies of different sizes from one address alias (a tile stored whole, loaded in
    // parts): the largest is the region, the buffers below merge what overlaps it.
    (void)inst;
    int64_t& region = regions[symbol][offset];
    region = std::max(region, bytes);
    families[symbol][offset].insert(family);
    return Status::Ok();
  };
  for (const auto& unit : events_) {
    // cp.async copies between group boundaries and runs of st.async on one barrier fill one
    // region: the hull of the destinations of the n-th such run of every thread of the CTA
    // (per copy kind, per symbol).
    struct Hull {
      const Instruction* inst = nullptr;
      uint64_t lo = UINT64_MAX, hi = 0;
    };
    std::map<std::tuple<std::string, int, std::string>, Hull> hulls;
    for (const auto& t : unit) {
      std::map<std::string, Hull> run;
      std::string run_kind;
      Value run_bar;
      std::map<std::string, int> ordinal;
      auto close = [&]() -> Status {
        if (!run_kind.empty()) {
          const int n = ordinal[run_kind]++;
          for (const auto& [symbol, h] : run) {
            Hull& all = hulls[{run_kind, n, symbol}];
            all.inst = h.inst;
            all.lo = std::min(all.lo, h.lo);
            all.hi = std::max(all.hi, h.hi);
          }
        }
        run.clear();
        run_kind.clear();
        return Status::Ok();
      };
      for (const ProtocolEvent& e : t) {
        const Instruction& inst = f_.instructions[e.instruction];
        const auto& v = e.operands;
        const bool cp_async = inst.base == "cp" && !inst.HasModifier("bulk") &&
                              !inst.HasModifier("commit_group") &&
                              !inst.HasModifier("wait_group") &&
                              !inst.HasModifier("wait_all") && !inst.HasModifier("mbarrier");
        const bool st_async = inst.base == "st" && inst.HasModifier("async");
        if (cp_async || st_async) {
          const std::string kind = cp_async ? "cp" : "st";
          const Value bar = st_async && v.size() >= 3 ? v[2] : Value::Unknown();
          if (run_kind != kind || (st_async && !(bar == run_bar))) {
            PARITY_RETURN_IF_ERROR(close());
          }
          run_kind = kind;
          run_bar = bar;
          int64_t n = 0;
          if (cp_async) {
            n = v.size() >= 3 && v[2].kind == Value::Kind::kInt
                    ? static_cast<int64_t>(v[2].bits) : 0;
          } else {
            const StoreWidth w = ParseTypeBits(inst);
            n = w.bytes * w.vector;
          }
          auto d = v.empty() ? std::nullopt : AsShared(v[0]);
          if (!d || n <= 0) {
            return Unsupported(inst, "the destination " +
                                         (v.empty() ? std::string("?") : v[0].ToString()) +
                                         " or the size is not known");
          }
          Hull& h = run[d->symbol];
          h.inst = &inst;
          h.lo = std::min(h.lo, d->offset);
          h.hi = std::max(h.hi, d->offset + static_cast<uint64_t>(n));
          continue;
        }
        if (!run.empty() && !(inst.base == "elect")) PARITY_RETURN_IF_ERROR(close());
        if (inst.base == "cp" && inst.HasModifier("bulk") && !IsTensorCopy(inst) &&
            !inst.HasModifier("commit_group") && !inst.HasModifier("wait_group") &&
            !inst.HasModifier("prefetch") && !inst.HasModifier("reduce")) {
          // cp.async.bulk: the shared side (the destination of a load, the source of a
          // store) holds `size` bytes.
          const int side = FirstSpace(inst) == "global" ? 1 : 0;
          auto a = static_cast<size_t>(side) < v.size() ? AsShared(v[side]) : std::nullopt;
          if (!a || v.size() < 3 || v[2].kind != Value::Kind::kInt) {
            return Unsupported(inst, "the shared address or the size is not known");
          }
          family = side == 1 ? "bulk.store" : "bulk.load";
          PARITY_RETURN_IF_ERROR(add(inst, a->symbol, a->offset, static_cast<int64_t>(v[2].bits)));
          continue;
        }
        if (!IsTensorCopy(inst) || inst.HasModifier("reduce")) continue;
        const bool store = IsTmaStore(inst);
        const size_t map_operand = store ? 0 : 1;
        if (e.operands.size() < 2 + (store ? 0 : 1)) {
          return Unsupported(inst, "too few operands");
        }
        const TensorMapArg* tm = TensorMapOf(e.operands[map_operand]);
        if (tm == nullptr) {
          const Value& mv = e.operands[map_operand];
          for (size_t i = 0; i < f_.params.size(); ++i) {
            if (mv.kind == Value::Kind::kAddress && f_.params[i].name == mv.symbol) {
              const bool field = mv.bits != 0 || f_.params[i].array_size > 0;
              const std::string ref =
                  field ? mv.symbol + "+" + std::to_string(mv.bits) : std::to_string(i);
              return Status("import.missing-tensormap",
                            "the TMA copy uses the CUtensorMap at " + mv.symbol + "+" +
                                std::to_string(mv.bits) + " (kernel argument " +
                                std::to_string(i) + "); describe it with --tensormap " + ref +
                                "=DTYPE:DIMS:BOX[:SWIZZLE]",
                            {m_.path, inst.line, inst.column});
            }
          }
          return Unsupported(inst,
                             "the tensor map is not a kernel argument (" + mv.ToString() + ")");
        }
        auto sh = AsShared(e.operands[store ? 1 : 0]);
        if (!sh || sh->cta >= 0) {
          return Unsupported(inst, "the shared address " +
                                       e.operands[store ? 1 : 0].ToString() +
                                       " is not a known address of this CTA's shared memory");
        }
        int64_t bytes = TensorMapDtypeBytes(tm->dtype);
        for (int64_t b : tm->box) bytes *= b;
        used_maps_.insert(TensorMapName(*tm));
        family = TensorMapName(*tm);
        PARITY_RETURN_IF_ERROR(add(inst, sh->symbol, sh->offset, bytes));
      }
      PARITY_RETURN_IF_ERROR(close());
    }
    for (const auto& [key, h] : hulls) {
      family = std::get<0>(key);
      PARITY_RETURN_IF_ERROR(
          add(*h.inst, std::get<2>(key), h.lo, static_cast<int64_t>(h.hi - h.lo)));
    }
  }
  // Per symbol, regions of one size evenly spaced are one buffer of slots; others are
  // buffers of one slot. Regions that different copies address (the A and B stages that two
  // tensor maps load, the D tile a third one stores) are separate buffers, unless their layouts
  // interleave, when all of the symbol's regions of one size are one buffer.
  for (const auto& region_of_symbol : regions) {
    // Named references, not a structured binding: the lambda below captures them (C++20 allows
    // capturing bindings, clang 14 of the sanitized build does not).
    const std::string& symbol = region_of_symbol.first;
    const std::map<uint64_t, int64_t>& offsets = region_of_symbol.second;
    const std::string stem = ShortName(symbol);
    auto group = [&](bool by_family) {
      std::vector<BufferInfo> out;
      std::map<std::pair<int64_t, std::string>, std::vector<uint64_t>> by_key;
      for (const auto& [off, b] : offsets) {
        std::string fam;
        if (by_family) {
          for (const std::string& f : families[symbol][off]) fam += (fam.empty() ? "" : ", ") + f;
        }
        by_key[{b, fam}].push_back(off);
      }
      std::set<std::string> kinds;
      for (const auto& [key, offs] : by_key) kinds.insert(key.second);
      const bool told_apart = kinds.size() > 1;
      for (const auto& [key, offs] : by_key) {
        const int64_t bytes = key.first;
        const std::string& name = stem;
        const uint64_t base = offs[0];
        const uint64_t stride = offs.size() > 1 ? offs[1] - base : 0;
        bool even = offs.size() > 1 && stride >= static_cast<uint64_t>(bytes);
        for (size_t k = 0; k < offs.size() && even; ++k) even = offs[k] == base + k * stride;
        if (even) {
          BufferInfo bi{name, symbol, base, stride, static_cast<int>(offs.size()), bytes, ""};
          if (base != 0) bi.name += "_" + std::to_string(base);
          if (told_apart) bi.filled_by = key.second;
          out.push_back(bi);
        } else {
          for (uint64_t off : offs) {
            BufferInfo bi{name, symbol, off, static_cast<uint64_t>(bytes), 1, bytes, ""};
            if (off != 0) bi.name += "_" + std::to_string(off);
            if (told_apart) bi.filled_by = key.second;
            out.push_back(bi);
          }
        }
      }
      return out;
    };
    std::vector<BufferInfo> split = group(true);
    if (Overlapping(split)) split = group(false);
    buffers_.insert(buffers_.end(), split.begin(), split.end());
  }
  // Copies of different layouts over the same bytes (a union: FA3's output tile `smem_o`
  // aliases the V stages, flash_fwd_kernel_sm90.h) become one buffer of one slot spanning both,
  // every access at its byte offset in it, so that the aliasing stays visible to the race rules
  // rather than splitting one address into two slots.
  for (bool merged = true; merged;) {
    merged = false;
    for (size_t i = 0; i < buffers_.size() && !merged; ++i) {
      for (size_t j = i + 1; j < buffers_.size() && !merged; ++j) {
        BufferInfo& x = buffers_[i];
        const BufferInfo& y = buffers_[j];
        const uint64_t xe = x.base + x.stride * (x.slots - 1) + x.bytes;
        const uint64_t ye = y.base + y.stride * (y.slots - 1) + y.bytes;
        if (x.symbol != y.symbol || x.base >= ye || y.base >= xe) continue;
        const uint64_t lo = std::min(x.base, y.base), hi = std::max(xe, ye);
        x.name = ShortName(x.symbol) + (lo != 0 ? "_" + std::to_string(lo) : "");
        x.base = lo;
        x.stride = hi - lo;
        x.slots = 1;
        x.bytes = static_cast<int64_t>(hi - lo);
        buffers_.erase(buffers_.begin() + static_cast<std::ptrdiff_t>(j));
        merged = true;
      }
    }
  }
  std::sort(buffers_.begin(), buffers_.end(), [](const BufferInfo& x, const BufferInfo& y) {
    return std::tie(x.symbol, x.base) < std::tie(y.symbol, y.base);
  });
  std::set<std::string> bnames;
  for (const BarrierArray& b : barriers_) bnames.insert(b.name);
  for (BufferInfo& b : buffers_) {
    b.name = Identifier(b.name);
    while (bnames.count(b.name) > 0 || !names.insert(b.name).second) b.name += "_";
  }
  return Status::Ok();
}

// Barriers that share a variable with others (nvcc's dynamic shared memory, one struct) have
// no source name of their own in the PTX: they are named by their role in the protocol. A
// barrier that transactions or cp.async completions fill is a `full` barrier (data ready); one
// only plain arrives fill and only the warps that issue the loads wait on is an `empty` barrier
// (a stage released). Several of one role are told apart by the buffers the loads completing on
// them fill (`full_smem_q`), else by a trailing `_`.
void Importer::NameBarriersByRole() {
  std::map<std::string, int> per_symbol;
  for (const BarrierArray& b : barriers_) ++per_symbol[b.symbol];
  std::set<std::string> buffer_symbols;
  for (const BufferInfo& x : buffers_) buffer_symbols.insert(x.symbol);
  auto array_of = [&](const Value& v) -> int {
    auto a = AsShared(v);
    if (!a) return -1;
    for (size_t i = 0; i < barriers_.size(); ++i) {
      const BarrierArray& b = barriers_[i];
      if (b.symbol == a->symbol && a->offset >= b.offset &&
          a->offset < b.offset + 8 * static_cast<uint64_t>(b.size)) {
        return static_cast<int>(i);
      }
    }
    return -1;
  };
  const size_t n = barriers_.size();
  std::vector<bool> filled(n, false), plain(n, false), other(n, false);
  std::vector<std::set<std::string>> fills(n);
  for (const auto& unit : events_) {
    // Per warp: whether one of its lanes issues copies into shared memory or arms transactions
    // (the warp's other lanes wait with it), and the arrays its lanes wait on.
    std::map<size_t, bool> loads;
    std::map<size_t, std::set<int>> waits, arrives;
    for (size_t t = 0; t < unit.size(); ++t) {
      for (const ProtocolEvent& e : unit[t]) {
        const Instruction& inst = f_.instructions[e.instruction];
        const auto& v = e.operands;
        auto at = [&](size_t k) { return k < v.size() ? array_of(v[k]) : -1; };
        int tx = -1;
        if (inst.base == "mbarrier" &&
            (inst.HasModifier("try_wait") || inst.HasModifier("test_wait"))) {
          if (at(1) >= 0) waits[t / 32].insert(at(1));
        } else if (inst.base == "mbarrier" && inst.HasModifier("arrive")) {
          if (inst.HasModifier("expect_tx")) {
            tx = at(1);
          } else if (at(1) >= 0) {
            arrives[t / 32].insert(at(1));
          }
        } else if (inst.base == "mbarrier" && inst.HasModifier("expect_tx")) {
          tx = at(0);
        } else if (IsTmaLoad(inst)) {
          tx = at(2);
          auto d = v.empty() ? std::nullopt : AsShared(v[0]);
          if (d && tx >= 0) {
            if (auto slot = BufferSlot(*d)) fills[tx].insert(slot->first->name);
          }
        } else if (inst.base == "cp" && inst.HasModifier("mbarrier") &&
                   inst.HasModifier("arrive")) {
          tx = at(0);
        } else if (inst.base == "cp" && inst.HasModifier("bulk") && !IsTensorCopy(inst) &&
                   FirstSpace(inst).rfind("shared", 0) == 0) {
          tx = at(3);
        } else if (inst.base == "st" && inst.HasModifier("async")) {
          tx = at(2);
        }
        if (tx >= 0) {
          filled[tx] = true;
          loads[t / 32] = true;
        }
      }
    }
    // An empty barrier's arrivals come from warps that load nothing (the consumers releasing a
    // stage) and its waiters are loading warps; a loading warp arriving (CUTLASS's load-warp
    // order barrier) or another warp waiting makes it a barrier of another kind.
    for (const auto& [warp, arrays] : waits) {
      for (int w : arrays) {
        if (!loads[warp]) other[w] = true;
      }
    }
    for (const auto& [warp, arrays] : arrives) {
      for (int a : arrays) {
        plain[a] = true;
        if (loads[warp]) other[a] = true;
      }
    }
  }
  std::vector<std::string> role(n);
  std::map<std::string, int> how_many;
  for (size_t i = 0; i < n; ++i) {
    const BarrierArray& b = barriers_[i];
    const bool own_variable =
        b.offset == 0 && per_symbol[b.symbol] == 1 && buffer_symbols.count(b.symbol) == 0;
    if (own_variable) continue;
    if (filled[i]) {
      role[i] = "full";
    } else if (plain[i] && !other[i]) {
      role[i] = "empty";
    }
    if (!role[i].empty()) ++how_many[role[i]];
  }
  std::set<std::string> taken;
  for (size_t i = 0; i < n; ++i) {
    if (role[i].empty()) taken.insert(barriers_[i].name);
  }
  for (const BufferInfo& x : buffers_) taken.insert(x.name);
  for (size_t i = 0; i < n; ++i) {
    if (role[i].empty()) continue;
    std::string name = role[i];
    if (how_many[role[i]] > 1 && !fills[i].empty()) {
      for (const std::string& f : fills[i]) name += "_" + f;
    }
    name = Identifier(name);
    while (!taken.insert(name).second) name += "_";
    barriers_[i].name = name;
  }
}

bool Importer::Overlapping(const std::vector<BufferInfo>& buffers) {
  for (size_t i = 0; i < buffers.size(); ++i) {
    for (size_t j = i + 1; j < buffers.size(); ++j) {
      const BufferInfo& x = buffers[i];
      const BufferInfo& y = buffers[j];
      const uint64_t xe = x.base + x.stride * (x.slots - 1) + x.bytes;
      const uint64_t ye = y.base + y.stride * (y.slots - 1) + y.bytes;
      if (x.symbol == y.symbol && x.base < ye && y.base < xe) return true;
    }
  }
  return false;
}

// "full[{}]" (+ " @cta({})") with its integers, or an error. An address no mbarrier.init
// covers is a kernel bug, not bad input: it becomes an element the schedule never `init`s (the
// next element of the ring it follows, or a barrier of its own), so that `check` and `explore`
// report M1001 at the operation (PTX ISA 9.7.13.15: an mbarrier must be initialised before any
// other mbarrier operation on it).
Status Importer::BarrierRef(const Instruction& inst, const Value& v, std::string* fmt,
                            std::vector<int64_t>* ints) {
  auto a = AsShared(v);
  if (!a) {
    return Unsupported(inst, "the mbarrier address " + v.ToString() +
                                 " is not a shared-memory address the importer knows");
  }
  for (int pass = 0; pass < 2; ++pass) {
    for (BarrierArray& b : barriers_) {
      if (b.symbol != a->symbol || a->offset < b.offset) continue;
      const uint64_t d = a->offset - b.offset;
      if (d % 8 != 0) continue;
      if (pass == 1 && d / 8 == static_cast<uint64_t>(b.size)) {
        ++b.size;  // the ring's next element, never initialised
      }
      if (d / 8 >= static_cast<uint64_t>(b.size)) continue;
      *fmt += b.name + "[{}]";
      ints->push_back(static_cast<int64_t>(d / 8));
      if (a->cta >= 0) {
        *fmt += " @cta({})";
        ints->push_back(a->cta);
      }
      return Status::Ok();
    }
  }
  BarrierArray b;
  b.symbol = a->symbol;
  b.offset = a->offset;
  b.count = 1;
  b.name = Identifier(ShortName(a->symbol) + "_" + std::to_string(a->offset));
  std::set<std::string> taken;
  for (const BarrierArray& x : barriers_) taken.insert(x.name);
  for (const BufferInfo& x : buffers_) taken.insert(x.name);
  while (taken.count(b.name) > 0) b.name += "_";
  barriers_.push_back(b);
  return BarrierRef(inst, v, fmt, ints);
}

// The buffer slot holding a shared address, or nullopt.
std::optional<std::pair<const BufferInfo*, int>> Importer::BufferSlot(const SharedAddr& a) const {
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

}  // namespace parity::ptx::importer_internal
