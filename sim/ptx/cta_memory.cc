#include "sim/ptx/cta_memory.h"

#include <algorithm>
#include <string>

namespace parity::ptx {
namespace {

Value UnknownWhy(std::string why) {
  Value v = Value::Unknown();
  v.symbol = std::move(why);
  return v;
}

uint64_t MaskBits(uint64_t v, int bits) { return bits >= 64 ? v : v & ((1ull << bits) - 1); }

Status Refuse(const SourceLocation& where, const std::string& why) {
  return Status("import.unsupported-control", why, where);
}

}  // namespace

void ImportMemory::OnBarrier(uint32_t unit, uint32_t tid, const Value& id, const Value& count,
                             bool has_count, uint32_t threads, bool blocking) {
  Thread& t = At(unit, tid);
  if (id.kind != Value::Kind::kInt) {
    t.lost = true;
    return;
  }
  const uint32_t b = static_cast<uint32_t>(id.bits);
  t.ops[b].push_back(t.history.size());
  Event e;
  e.barrier = b;
  e.blocking = blocking;
  t.history.push_back(std::move(e));
  BarrierUse& use = barriers_[{unit, b}];
  use.threads.insert(tid);
  use.counts.insert(!has_count ? threads
                    : count.kind == Value::Kind::kInt ? count.bits
                                                      : kUnknownCount);
}

void ImportMemory::OnSharedStore(uint32_t unit, uint32_t tid, const Value& addr, int bytes,
                                 const Value& value) {
  if (addr.kind != Value::Kind::kAddress) {
    units_with_unknown_stores_.insert(unit);
    return;
  }
  Event e;
  e.store = true;
  e.word = Word{addr.symbol, addr.bits, bytes};
  e.value = value;
  stores_[unit].insert({e.word, tid});
  writers_[{unit, e.word}].insert(tid);
  At(unit, tid).history.push_back(std::move(e));
}

Value ImportMemory::OnSharedLoad(uint32_t unit, uint32_t tid, const Value& addr, int bytes,
                                 const SourceLocation& where) {
  if (addr.kind != Value::Kind::kAddress) return Value::Unknown();
  const Word w{addr.symbol, addr.bits, bytes};
  Thread& reader = At(unit, tid);
  // The reader's own last store, in program order.
  for (size_t i = reader.history.size(); i-- > 0;) {
    const Event& e = reader.history[i];
    if (!e.store || e.word != w) continue;
    if (e.value.kind != Value::Kind::kInt) return Value::Unknown();
    taken_.push_back(Taken{unit, w, tid, {}, tid, -1, 0, where});
    return e.value;
  }
  auto ws = writers_.find({unit, w});
  if (ws == writers_.end() || ws->second.size() != 1) return Value::Unknown();
  const uint32_t writer_id = *ws->second.begin();
  const Thread& writer = At(unit, writer_id);
  if (!writer.done || writer.lost || reader.lost) {
    return UnknownWhy("a shared word stored by thread " + std::to_string(writer_id) +
                      ", which the importer runs after this load's thread");
  }
  // The store a completed bar.sync of the reader's orders before the load: the writer's last
  // store to the word before its arrival in the same generation.
  int64_t best = -1;
  uint32_t best_barrier = 0;
  for (const auto& [b, positions] : reader.ops) {
    if (!reader.history[positions.back()].blocking) continue;
    const size_t k = positions.size() - 1;
    auto it = writer.ops.find(b);
    if (it == writer.ops.end() || it->second.size() <= k) continue;
    for (size_t i = it->second[k]; i-- > 0;) {
      const Event& e = writer.history[i];
      if (e.store && e.word == w) {
        if (static_cast<int64_t>(i) > best) {
          best = static_cast<int64_t>(i);
          best_barrier = b;
        }
        break;
      }
    }
  }
  if (best < 0) return Value::Unknown();
  const Value value = writer.history[best].value;
  if (value.kind != Value::Kind::kInt) return Value::Unknown();
  Taken taken{unit, w, writer_id, {best_barrier}, tid, -1, 0, where};
  // The writer's next store must wait for an arrival the reader makes after this load: a
  // bar.sync of the writer's between the two stores, in a generation the reader has not yet
  // reached.
  for (size_t q = best + 1; q < writer.history.size(); ++q) {
    const Event& e = writer.history[q];
    if (!e.store || e.word != w) continue;
    bool ordered = false;
    for (size_t p = q; p-- > static_cast<size_t>(best) + 1 && !ordered;) {
      const Event& s = writer.history[p];
      if (s.store || !s.blocking) continue;
      const auto& pos = writer.ops.at(s.barrier);
      const int64_t g = std::find(pos.begin(), pos.end(), p) - pos.begin();
      auto mine = reader.ops.find(s.barrier);
      const int64_t reached = mine == reader.ops.end() ? 0 : mine->second.size();
      if (reached <= g) {
        ordered = true;
        taken.ordinal = g;
        taken.later_barrier = s.barrier;
        taken.barriers.push_back(s.barrier);
      }
    }
    if (!ordered) return Value::Unknown();
    break;
  }
  taken_.push_back(std::move(taken));
  return value;
}

Value ImportMemory::OnGlobalAtomAdd(uint32_t unit, uint32_t tid, const Value& addr,
                                    const Value& operand, int bits,
                                    const SourceLocation& where) {
  std::string key;
  if (addr.kind == Value::Kind::kInt) {
    key = "global address " + std::to_string(addr.bits);
  } else if (addr.kind == Value::Kind::kUnknown && addr.symbol.rfind("param:", 0) == 0) {
    // The pointer is a kernel parameter's field nobody gave: the field names the word.
    key = addr.symbol.substr(0, addr.symbol.find(" ("));
  } else {
    return Value::Unknown();
  }
  Atom& a = atoms_[key];
  const uint32_t id = unit << 16 | tid;
  a.updaters.insert(id);
  if (!a.taken) a.where = where;
  a.taken = true;
  if (a.unknown_sums.count(id) != 0) return Value::Unknown();
  const uint64_t old = a.sums[id];
  if (operand.kind == Value::Kind::kInt) {
    a.sums[id] = old + operand.bits;
  } else {
    a.unknown_sums.insert(id);
  }
  return Value::Int(MaskBits(old, bits));
}

void ImportMemory::WarpDone(uint32_t unit, uint32_t warp) {
  for (uint32_t t = 32 * warp; t < 32 * warp + 32; ++t) {
    auto it = threads_.find({unit, t});
    if (it != threads_.end()) it->second.done = true;
  }
}

Status ImportMemory::Finish() const {
  for (const auto& [key, a] : atoms_) {
    if (!a.taken || a.updaters.size() < 2) continue;
    auto it = a.updaters.begin();
    const uint32_t x = *it++, y = *it;
    return Refuse(a.where, "atom.global.add on " + key + " is made by thread " +
                               std::to_string(x & 0xffff) + " of CTA " + std::to_string(x >> 16) +
                               " and thread " + std::to_string(y & 0xffff) + " of CTA " +
                               std::to_string(y >> 16) +
                               ": the values it returns depend on their timing (the importer "
                               "follows a word only one thread of the grid updates)");
  }
  for (const Taken& t : taken_) {
    const std::string word = t.word.symbol + "+" + std::to_string(t.word.offset);
    if (units_with_unknown_stores_.count(t.unit) != 0) {
      return Refuse(t.where, "ld.shared of " + word +
                                 ": a st.shared of the CTA at an address the importer does not "
                                 "know may write it");
    }
    for (const auto& [other, tid] : stores_.at(t.unit)) {
      const bool overlaps = other.symbol == t.word.symbol &&
                            other.offset < t.word.offset + t.word.bytes &&
                            t.word.offset < other.offset + other.bytes;
      if (overlaps && (other != t.word || tid != t.writer)) {
        return Refuse(t.where, "ld.shared of " + word + " reads a word stored by threads " +
                                   std::to_string(t.writer) + " and " + std::to_string(tid) +
                                   ": which value it reads depends on their timing");
      }
    }
    for (uint32_t b : t.barriers) {
      const BarrierUse& use = barriers_.at({t.unit, b});
      if (use.counts.size() != 1 || *use.counts.begin() != use.threads.size()) {
        return Refuse(t.where, "ld.shared of " + word + " is ordered by named barrier " +
                                   std::to_string(b) + ", whose thread count is not the " +
                                   std::to_string(use.threads.size()) +
                                   " threads that use it on every operation: its generations "
                                   "cannot be paired");
      }
    }
    if (t.ordinal >= 0) {
      const Thread& reader = threads_.at({t.unit, t.reader});
      auto it = reader.ops.find(t.later_barrier);
      if (it == reader.ops.end() || static_cast<int64_t>(it->second.size()) <= t.ordinal) {
        return Refuse(t.where, "ld.shared of " + word + ": the writer's next store waits at "
                                   "named barrier " + std::to_string(t.later_barrier) +
                                   " for an arrival this thread never makes");
      }
    }
  }
  return Status::Ok();
}

}  // namespace parity::ptx
