// `parity import`: one thread's protocol events as schedule operations.

#include <algorithm>
#include <cctype>
#include <climits>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <tuple>
#include <utility>
#include <vector>

#include "sim/ptx/import_text.h"
#include "sim/ptx/importer_internal.h"
#include "sim/ptx/thread_exec.h"

namespace parity::ptx::importer_internal {

// The kernel's own frame of the instruction's inlining chain: past the frames the protocol
// instructions share (CUTLASS's device_kernel wrapper calling the kernel's operator()), the
// outermost one, so that a wait cites the kernel's `pipeline.consumer_wait(...)` line rather than
// the header line of the mbarrier.try_wait that the call inlines. A chain rooted elsewhere (in a
// function the compiler did not inline) cites its own outermost frame.
std::string Importer::SourceLine(const Instruction& inst) const {
  const std::vector<SourcePos>& chain = inst.inline_chain;
  SourcePos src = inst.call_site.known() ? inst.call_site : inst.source;
  size_t first = 0;
  if (!chain.empty()) {
    const bool under = chain.size() > shared_frames_.size() &&
                       std::equal(shared_frames_.begin(), shared_frames_.end(), chain.begin());
    first = under ? shared_frames_.size() : 0;
    src = chain[first];
  }
  if (!src.known()) return "";
  auto name = [&](const SourcePos& pos) {
    auto it = m_.files.find(pos.file);
    return (it == m_.files.end() ? std::string("?") : Basename(it->second)) + ":" +
           std::to_string(pos.line);
  };
  std::string cited = name(src);
  if (!o_.source_chain) return cited;
  // The inner frames, each the line the frame before it called (ImportOptions::source_chain);
  // a frame repeated on the same line (a call and its argument's inlined helper) is named once.
  std::string last = cited;
  for (size_t k = first + 1; k < chain.size(); ++k) {
    if (!chain[k].known()) continue;
    std::string inner = name(chain[k]);
    if (inner == last) continue;
    cited += " > " + inner;
    last = std::move(inner);
  }
  return cited;
}

void Importer::FindSharedFrames() {
  // The protocol instructions' chains (of more than one frame: a single frame has no call to
  // share), grouped by their outermost frame; the largest group's common prefix is the
  // kernel's wrapper.
  std::map<std::pair<int, int>, std::vector<const std::vector<SourcePos>*>> by_root;
  std::set<int> seen;
  for (const auto& unit : events_) {
    for (const auto& thread : unit) {
      for (const ProtocolEvent& e : thread) {
        if (!seen.insert(e.instruction).second) continue;
        const std::vector<SourcePos>& chain = f_.instructions[e.instruction].inline_chain;
        if (chain.size() <= 1) continue;
        by_root[{chain[0].file, chain[0].line}].push_back(&chain);
      }
    }
  }
  shared_frames_.clear();
  const std::vector<const std::vector<SourcePos>*>* group = nullptr;
  for (const auto& [root, chains] : by_root) {
    if (group == nullptr || chains.size() > group->size()) group = &chains;
  }
  if (group == nullptr) return;
  const std::vector<SourcePos>& first = *group->front();
  size_t shared = first.size();
  for (const std::vector<SourcePos>* chain : *group) {
    size_t k = 0;
    while (k < shared && k < chain->size() && (*chain)[k] == first[k]) ++k;
    shared = k;
  }
  shared_frames_.assign(first.begin(), first.begin() + static_cast<std::ptrdiff_t>(shared));
}

Expected<std::vector<OpRec>> Importer::ToOps(const std::vector<ProtocolEvent>& events) {
  std::vector<OpRec> out;
  // wgmma is an operation of the whole warpgroup: this thread's mma_async, commit_group and
  // wait_group become markers (`wgmma.mma`, `wgmma.read ...` for each buffer operand of the
  // mma, `wgmma.commit`, `wgmma.wait N`) that LowerWgmma (import_wgmma.cc) turns into the
  // warpgroup's tensor-core agent once every warp of the CTA is merged.
  size_t mma_at = 0;  // where the markers of the current mma_async begin
  for (const ProtocolEvent& e : events) {
    const Instruction& inst = f_.instructions[e.instruction];
    const auto& v = e.operands;
    OpRec op;
    op.ptx_lines.insert(inst.line);
    op.source = SourceLine(inst);
    const std::string& b = inst.base;
    auto int_operand = [&](size_t i, int64_t* out_v) -> Status {
      if (i < v.size()) {
        // A byte count or arrival count read from a parameter nobody gave (CUTLASS's
        // tma_transaction_bytes) is a missing option, not an unsupported kernel.
        Status missing =
            MissingParameter(m_.path, inst, "operand " + std::to_string(i + 1), v[i]);
        if (!missing.ok()) return missing;
      }
      if (i >= v.size() || v[i].kind != Value::Kind::kInt) {
        return Unsupported(
            inst, "operand " + std::to_string(i + 1) + " is not a value the importer knows (" +
                      (i < v.size() ? v[i].ToString() : std::string("absent")) + ")");
      }
      *out_v = static_cast<int64_t>(v[i].bits);
      return Status::Ok();
    };
    if (b == "elect") continue;
    if (b == "cp" && inst.HasModifier("reduce")) {
      return Unsupported(inst, "reductions into global memory are not modelled");
    }
    if (b == "mbarrier") {
      if (inst.HasModifier("init")) {
        op.fmt = "init ";
        if (v.empty()) return Unsupported(inst, "no address");
        PARITY_RETURN_IF_ERROR(BarrierRef(inst, v[0], &op.fmt, &op.ints));
        op.merge = OpRec::Merge::kOneLane;
      } else if (inst.HasModifier("inval")) {
        op.fmt = "inval ";
        if (v.empty()) return Unsupported(inst, "no address");
        PARITY_RETURN_IF_ERROR(BarrierRef(inst, v[0], &op.fmt, &op.ints));
        op.merge = OpRec::Merge::kOneLane;
      } else if (inst.HasModifier("try_wait") || inst.HasModifier("test_wait")) {
        // A probe whose result nothing reads orders nothing (wait_results.h).
        if (!wait_results_read_[static_cast<size_t>(e.instruction)]) continue;
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
      } else if (inst.HasModifier("proxy") && inst.HasModifier("async") &&
                 inst.HasModifier("global")) {
        op.fmt = "fence.proxy.async.global";
      } else if (inst.HasModifier("proxy") && inst.HasModifier("async")) {
        op.fmt = "fence.proxy.async";
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
      if (inst.HasModifier("im2col")) {
        return Unsupported(inst, "only tiled TMA copies are modelled");
      }
      const TensorMapArg* tm = TensorMapOf(v[1]);
      op.fmt = "tma.load " + TensorMapName(*tm) + " coords [";
      PARITY_RETURN_IF_ERROR(Coords(inst, e.elements[1], &op));
      auto slot = BufferSlot(*AsShared(v[0]));
      op.fmt += "] -> " + slot->first->name + "[{}]";
      op.ints.push_back(slot->second);
      SlotOffset(*slot, *AsShared(v[0]), &op);
      op.fmt += " bar ";
      PARITY_RETURN_IF_ERROR(BarrierRef(inst, v[2], &op.fmt, &op.ints));
      if (inst.HasModifier("multicast::cluster")) {
        int64_t mask = 0;
        PARITY_RETURN_IF_ERROR(int_operand(3, &mask));
        op.fmt += " multicast {}";
        op.ints.push_back(mask & 0xffff);
      }
      op.merge = OpRec::Merge::kOneLane;
    } else if (IsTmaStore(inst)) {
      const TensorMapArg* tm = TensorMapOf(v[0]);
      op.fmt = "tma.store " + TensorMapName(*tm) + " coords [";
      PARITY_RETURN_IF_ERROR(Coords(inst, e.elements[0], &op));
      auto src = v.size() >= 2 ? AsShared(v[1]) : std::nullopt;
      auto slot = src ? BufferSlot(*src) : std::nullopt;
      if (!slot) return Unsupported(inst, "the source is not a known shared-memory address");
      op.fmt += "] <- " + slot->first->name + "[{}]";
      op.ints.push_back(slot->second);
      SlotOffset(*slot, *src, &op);
      op.merge = OpRec::Merge::kOneLane;
    } else if (b == "cp" && inst.HasModifier("bulk") &&
               (inst.HasModifier("commit_group") || inst.HasModifier("wait_group"))) {
      if (inst.HasModifier("commit_group")) {
        op.fmt = "bulk.commit";
      } else {
        int64_t n = 0;
        PARITY_RETURN_IF_ERROR(int_operand(0, &n));
        op.fmt = inst.HasModifier("read") ? "bulk.wait {} read" : "bulk.wait {}";
        op.ints = {n};
      }
    } else if (b == "cp" && inst.HasModifier("bulk") && inst.HasModifier("prefetch")) {
      continue;  // a hint to the L2: no effect on the protocol
    } else if (b == "cp" && inst.HasModifier("bulk")) {
      const std::string dst = FirstSpace(inst);
      if (dst == "global") {
        // cp.async.bulk.global.shared::cta.bulk_group [dst], [src], size
        int64_t n = 0;
        PARITY_RETURN_IF_ERROR(int_operand(2, &n));
        auto src = AsShared(v[1]);
        auto slot = src ? BufferSlot(*src) : std::nullopt;
        if (!slot) return Unsupported(inst, "the source is not a known shared-memory address");
        op.fmt = "bulk.store " + slot->first->name + "[{}]";
        op.ints = {slot->second};
        SlotRange(*slot, *src, n, &op);
      } else if (dst.rfind("shared", 0) == 0 && FirstSpace(inst, 1) == "global") {
        // cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [dst], [src],
        // size, [mbar]{, ctaMask}
        int64_t n = 0;
        PARITY_RETURN_IF_ERROR(int_operand(2, &n));
        auto d = AsShared(v[0]);
        auto slot = d && d->cta < 0 ? BufferSlot(*d) : std::nullopt;
        if (!slot) {
          return Unsupported(inst, "the destination is not a known address of this CTA's "
                                   "shared memory");
        }
        op.fmt = "bulk.load " + slot->first->name + "[{}]";
        op.ints = {slot->second};
        SlotRange(*slot, *d, n, &op);
        op.fmt += " bar ";
        PARITY_RETURN_IF_ERROR(BarrierRef(inst, v[3], &op.fmt, &op.ints));
        if (inst.HasModifier("multicast::cluster")) {
          int64_t mask = 0;
          PARITY_RETURN_IF_ERROR(int_operand(4, &mask));
          op.fmt += " multicast {}";
          op.ints.push_back(mask & 0xffff);
        }
      } else {
        return Unsupported(inst, "only bulk copies global -> shared and shared -> global "
                                 "are modelled");
      }
      op.merge = OpRec::Merge::kOneLane;
    } else if (b == "cp" && inst.HasModifier("commit_group")) {
      op.fmt = "cp.async.commit";
    } else if (b == "cp" && inst.HasModifier("wait_group")) {
      int64_t n = 0;
      PARITY_RETURN_IF_ERROR(int_operand(0, &n));
      op.fmt = "cp.async.wait {}";
      op.ints = {n};
    } else if (b == "cp" && inst.HasModifier("wait_all")) {
      op.fmt = "cp.async.wait_all";
    } else if (b == "cp" && inst.HasModifier("mbarrier") && inst.HasModifier("arrive")) {
      op.fmt = "cp.async.arrive ";
      if (v.empty()) return Unsupported(inst, "no address");
      PARITY_RETURN_IF_ERROR(BarrierRef(inst, v[0], &op.fmt, &op.ints));
      if (inst.HasModifier("noinc")) op.fmt += " noinc";
      op.merge = OpRec::Merge::kLaneLoop;
    } else if (b == "cp") {
      // cp.async.ca/cg.shared.global [dst], [src], cp-size{, src-size}{, cache-policy}
      int64_t n = 0;
      PARITY_RETURN_IF_ERROR(int_operand(2, &n));
      auto d = AsShared(v[0]);
      auto slot = d && d->cta < 0 ? BufferSlot(*d) : std::nullopt;
      if (!slot) {
        return Unsupported(inst, "the destination " + v[0].ToString() +
                                     " is not a known address of this CTA's shared memory");
      }
      op.fmt = "cp.async " + slot->first->name + "[{}]";
      op.ints = {slot->second};
      op.slot_bytes = slot->first->bytes;
      op.SetRange(static_cast<int64_t>(d->offset - slot->first->base -
                                       slot->second * slot->first->stride),
                  n);
      op.merge = OpRec::Merge::kUnion;
    } else if (b == "st" && inst.HasModifier("async")) {
      // st.async.shared::cluster.mbarrier::complete_tx::bytes{.vN}.type [addr], v, [bar]
      auto d = AsShared(v[0]);
      auto bar = v.size() >= 3 ? AsShared(v[2]) : std::nullopt;
      auto slot = d ? BufferSlot(*d) : std::nullopt;
      if (!slot || !bar) {
        return Unsupported(inst, "the destination or the barrier is not a known "
                                 "shared-memory address");
      }
      if (bar->cta != d->cta) {
        return Unsupported(inst, "the data and the barrier are in different CTAs");
      }
      int64_t n = 0;
      const StoreWidth w = ParseTypeBits(inst);
      n = w.bytes * w.vector;
      if (n == 0) return Unsupported(inst, "the store's width is not known");
      op.fmt = "st.async " + slot->first->name + "[{}]";
      op.ints = {slot->second};
      op.slot_bytes = slot->first->bytes;
      op.SetRange(static_cast<int64_t>(d->offset - slot->first->base -
                                       slot->second * slot->first->stride),
                  n);
      op.contiguous = true;
      op.merge = OpRec::Merge::kUnion;
      op.tail = d->cta >= 0 ? " @cta({}) bar " : " bar ";
      if (d->cta >= 0) op.tail_ints.push_back(d->cta);
      SharedAddr local = *bar;
      local.cta = -1;
      PARITY_RETURN_IF_ERROR(BarrierRef(inst, Value::Address(local.symbol, local.offset),
                                        &op.tail, &op.tail_ints));
    } else if (b == "wgmma") {
      if (inst.HasModifier("fence")) continue;
      if (inst.HasModifier("commit_group")) {
        op.fmt = "wgmma.commit";
        out.push_back(std::move(op));
        continue;
      }
      if (inst.HasModifier("wait_group")) {
        int64_t n = 0;
        PARITY_RETURN_IF_ERROR(int_operand(0, &n));
        op.fmt = "wgmma.wait {}";
        op.ints = {n};
        out.push_back(std::move(op));
        continue;
      }
      // wgmma.mma_async: the operands that are (descriptors of) shared addresses.
      OpRec mma = op;
      mma.fmt = "wgmma.mma";
      out.push_back(std::move(mma));
      mma_at = out.size();
      for (const Value& x : v) {
        if (x.kind != Value::Kind::kDerived && x.kind != Value::Kind::kAddress) continue;
        auto slot = BufferSlot(SharedAddr{x.symbol, x.bits, -1});
        if (!slot) continue;
        OpRec u = op;
        // wgmma reads its shared operands through the async proxy (docs/language.md §8.8):
        // a `write` of those bytes before it needs fence.proxy.async (P2006).
        u.fmt = "wgmma.read " + slot->first->name + "[{}]";
        u.ints = {slot->second};
        if (std::none_of(out.begin() + static_cast<std::ptrdiff_t>(mma_at), out.end(),
                         [&](const OpRec& w) { return w.SameOp(u); })) {
          out.push_back(u);
        }
      }
      continue;
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
      // ldmatrix / stmatrix: each lane gives one 16-byte row of a matrix.
      const StoreWidth w = ParseTypeBits(inst);
      const int64_t n = b == "ldmatrix" || b == "stmatrix" ? 16 : w.bytes * w.vector;
      // ld.shared / ldmatrix read through the generic proxy: a TMA or bulk write of the bytes
      // after them needs fence.proxy.async on the path (P2006, DeepEP #621's write-after-read),
      // checked when the reads say so (ImportOptions::generic_reads).
      op.fmt = std::string(write ? "write " : o_.generic_reads ? "use.generic " : "use ") +
               slot->first->name + "[{}]";
      op.ints.push_back(slot->second);
      op.SetRange(static_cast<int64_t>(a->offset - slot->first->base -
                                       slot->second * slot->first->stride),
                  std::max<int64_t>(n, 1));
      op.slot_bytes = slot->first->bytes;
      op.merge = OpRec::Merge::kUnion;
    } else {
      return Unsupported(inst, "the importer does not model this instruction yet");
    }
    // A lane's consecutive accesses of adjacent or overlapping bytes of one slot are one
    // operation over their union.
    if (op.merge == OpRec::Merge::kUnion && !out.empty() && out.back().SameOp(op) &&
        op.lo <= out.back().hi && op.hi >= out.back().lo) {
      out.back().Unite(op);
      continue;
    }
    out.push_back(std::move(op));
  }
  return out;
}

// A warp's access whose lanes' bytes are not one range (strided reads, swizzled stmatrix rows)
// is rendered as its hull or as one access per piece. Both keep every byte the lanes touch, so
// neither hides a race; the hull may only add one: the warps of one epilogue write their
// stmatrix rows of a tile unordered among them, and with CuTe's Swizzle<3,4,3> (CUTLASS
// 7107b055, sm90_epilogue_tma_warpspecialized.hpp) the rows of two warps interleave, so their
// hulls overlap where their bytes do not (a false P2009). The pieces are used where another
// warp's access of the same kind (write and write, cp.async and cp.async) to the same slot has
// bytes in the hull's gaps; elsewhere the hull keeps the schedule short (a warp's strided reads
// stay one `use`, as reads do not race with reads).
void Importer::SplitAccesses(std::vector<std::vector<OpRec>>* warps) {
  struct Piece {
    size_t warp;
    int64_t lo, hi;
  };
  // By the access's kind and buffer (its format before the range) and its slot.
  std::map<std::pair<std::string, int64_t>, std::vector<Piece>> by_slot;
  for (size_t w = 0; w < warps->size(); ++w) {
    for (const OpRec& op : (*warps)[w]) {
      if (op.merge != OpRec::Merge::kUnion) continue;
      for (const auto& p : op.pieces) {
        by_slot[{op.fmt, op.ints.at(0)}].push_back(Piece{w, p.first, p.second});
      }
    }
  }
  for (size_t w = 0; w < warps->size(); ++w) {
    std::vector<OpRec> out;
    out.reserve((*warps)[w].size());
    for (OpRec& op : (*warps)[w]) {
      if (op.merge != OpRec::Merge::kUnion) {
        out.push_back(std::move(op));
        continue;
      }
      const bool writes = op.fmt.rfind("write ", 0) == 0 || op.fmt.rfind("cp.async ", 0) == 0 ||
                          op.fmt.rfind("st.async ", 0) == 0;
      bool split = false;
      if (writes && op.pieces.size() > 1) {
        for (const Piece& p : by_slot[{op.fmt, op.ints.at(0)}]) {
          const int64_t lo = std::max(p.lo, op.lo), hi = std::min(p.hi, op.hi);
          if (p.warp == w || lo >= hi) continue;
          // Inside the hull: in a gap unless one piece holds all of it (pieces are disjoint and
          // not adjacent).
          split = std::none_of(op.pieces.begin(), op.pieces.end(), [&](const auto& q) {
            return q.first <= lo && hi <= q.second;
          });
          if (split) break;
        }
      }
      std::vector<std::pair<int64_t, int64_t>> ranges;
      if (split) {
        ranges = op.pieces;
      } else {
        ranges.assign(1, {op.lo, op.hi});
      }
      for (const auto& [lo, hi] : ranges) {
        OpRec r = op;
        r.pieces.clear();
        r.lo = lo;
        r.hi = hi;
        // Part of a slot: ` + OFF bytes N` (also for OFF 0, so that the operations of a loop
        // over a slot's parts share one form).
        if (lo != 0 || hi != op.slot_bytes) {
          r.fmt += " + {} bytes {}";
          r.ints.push_back(lo);
          r.ints.push_back(hi - lo);
        }
        r.fmt += op.tail;
        r.ints.insert(r.ints.end(), op.tail_ints.begin(), op.tail_ints.end());
        r.tail.clear();
        r.tail_ints.clear();
        r.merge = OpRec::Merge::kCollapse;
        out.push_back(std::move(r));
      }
    }
    (*warps)[w] = std::move(out);
  }
}

// The first (k = 0) or second (k = 1) state space among an instruction's modifiers: a copy's
// destination then its source.
std::string Importer::FirstSpace(const Instruction& inst, int k) {
  for (const std::string& m : inst.modifiers) {
    if (m == "global" || m.rfind("shared", 0) == 0) {
      if (k-- == 0) return m;
    }
  }
  return "";
}

// The bytes of st.async's element type and its vector width.
Importer::StoreWidth Importer::ParseTypeBits(const Instruction& inst) {
  StoreWidth w;
  for (const std::string& m : inst.modifiers) {
    if (m == "v2") w.vector = 2;
    if (m == "v4") w.vector = 4;
    if (m.size() >= 3 && (m[0] == 'b' || m[0] == 'u' || m[0] == 's' || m[0] == 'f') &&
        std::isdigit(static_cast<unsigned char>(m[1]))) {
      w.bytes = std::atoi(m.c_str() + 1) / 8;
    }
  }
  return w;
}

Status Importer::Coords(const Instruction& inst, const std::vector<Value>& coords,
                        OpRec* op) const {
  for (size_t i = 0; i < coords.size(); ++i) {
    if (coords[i].kind != Value::Kind::kInt) {
      // A coordinate computed from a parameter nobody gave (FA3's head index from the
      // scheduler's fields) is a missing option, not an unsupported kernel.
      Status missing =
          MissingParameter(m_.path, inst, "coordinate " + std::to_string(i), coords[i]);
      if (!missing.ok()) return missing;
      return Unsupported(inst, "coordinate " + std::to_string(i) +
                                   " is a value the importer does not know (" +
                                   coords[i].ToString() + ")");
    }
    op->fmt += i ? ", {}" : "{}";
    op->ints.push_back(SignExtend32(coords[i].bits));
  }
  return Status::Ok();
}

void Importer::SlotOffset(const std::pair<const BufferInfo*, int>& slot, const SharedAddr& a,
                          OpRec* op) {
  const uint64_t off = a.offset - slot.first->base - slot.second * slot.first->stride;
  if (off != 0) {
    op->fmt += " + {}";
    op->ints.push_back(static_cast<int64_t>(off));
  }
}

// ` + OFF bytes N` of a bulk copy (OFF omitted when 0, bytes when the copy fills the slot).
void Importer::SlotRange(const std::pair<const BufferInfo*, int>& slot, const SharedAddr& a,
                         int64_t n, OpRec* op) {
  const int64_t off =
      static_cast<int64_t>(a.offset - slot.first->base - slot.second * slot.first->stride);
  if (off != 0) {
    op->fmt += " + {}";
    op->ints.push_back(off);
  }
  if (off != 0 || n != slot.first->bytes) {
    op->fmt += " bytes {}";
    op->ints.push_back(n);
  }
}

}  // namespace parity::ptx::importer_internal
