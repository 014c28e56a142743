// The importer's internals (sim/ptx/importer.h), shared by the files of its stages: importer.cc
// runs the threads and groups warps into roles, import_decls.cc recovers the barrier and buffer
// declarations from the run, import_ops.cc turns one thread's protocol events into schedule
// operations, import_render.cc re-rolls loops and renders the `.pipe` text.
#ifndef PARITY_SIM_PTX_IMPORTER_INTERNAL_H_
#define PARITY_SIM_PTX_IMPORTER_INTERNAL_H_

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <iterator>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "sim/common/status.h"
#include "sim/ptx/importer.h"
#include "sim/ptx/ptx.h"
#include "sim/ptx/thread_exec.h"

namespace parity::ptx::importer_internal {

inline Status BadOption(const std::string& message) { return Status("import.bad-option", message); }

// `kernel(...)::name` of a demoted __shared__ variable -> `name`.
inline std::string ShortName(const std::string& symbol) {
  const std::string demangled = Demangle(symbol);
  const size_t colon = demangled.rfind("::");
  if (colon != std::string::npos && demangled.find(')', colon) == std::string::npos) {
    return demangled.substr(colon + 2);
  }
  return symbol;
}

inline std::string Basename(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// A shared address, possibly mapped to another CTA by mapa (`symbol@ctaN`).
struct SharedAddr {
  std::string symbol;
  uint64_t offset = 0;
  int cta = -1;  // -1: own CTA
};

inline std::optional<SharedAddr> AsShared(const Value& v) {
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
  // kCollapse: the lanes' copies are one operation of the warp. kCountLanes: one arrive whose
  // count is the lanes'. kOneLane: exactly one lane may issue it. kLaneLoop: each lane's
  // operation is one of the warp's (a `for` over the lanes: cp.async.mbarrier.arrive, whose
  // arrive-on is per thread). kUnion: the lanes' byte ranges of one slot are one
  // operation over their union, one access per contiguous piece of it (cp.async, st.async,
  // ld/st.shared, ldmatrix/stmatrix); `tail` follows each piece's range.
  enum class Merge { kCollapse, kCountLanes, kOneLane, kLaneLoop, kUnion };
  Merge merge = Merge::kCollapse;
  int64_t arrive_count = 1;  // kCountLanes: per lane
  int lanes = 1;
  int64_t lo = 0, hi = 0, sum = 0;  // kUnion: the hull of the bytes and the bytes the lanes issue
  // kUnion: the byte ranges [first, second) the lanes access, sorted, disjoint and not adjacent.
  // A warp's accesses need not be one range: CuTe's swizzled stmatrix rows (Swizzle<3,4,3>)
  // interleave with another warp's, and a hull would overlap bytes the warp never touches.
  std::vector<std::pair<int64_t, int64_t>> pieces;
  int64_t slot_bytes = -1;          // kUnion: the slot's size (a whole-slot range is implicit)
  bool contiguous = false;          // kUnion: the lanes' ranges must tile [lo, hi) (st.async)
  // Per integer: how much it grows per agent of the role (empty: every agent's is the same).
  std::vector<int64_t> agent_delta;
  // Per integer: how much it grows per cluster (`cluster_id`) and per CTA rank (`cta_rank`) in a
  // role emitted once for several CTAs (empty: every CTA's is the same).
  std::vector<int64_t> cluster_delta;
  std::vector<int64_t> rank_delta;
  std::string tail;
  std::vector<int64_t> tail_ints;
  std::set<int> ptx_lines;
  std::string source;  // "file.cu:LINE" or ""

  // What SameOp compares (and SameOpLess orders by).
  auto SameOpKey() const {
    return std::tie(fmt, ints, arrive_count, tail, tail_ints, agent_delta, cluster_delta,
                    rank_delta);
  }
  bool SameOp(const OpRec& o) const { return SameOpKey() == o.SameOpKey(); }
  // The same operation up to its integers (which may differ from CTA to CTA).
  bool SameShape(const OpRec& o) const {
    return fmt == o.fmt && arrive_count == o.arrive_count && ints.size() == o.ints.size() &&
           tail == o.tail && tail_ints == o.tail_ints && agent_delta == o.agent_delta;
  }
  // kUnion: the access of the `n` bytes from `offset` of the slot.
  void SetRange(int64_t offset, int64_t n) {
    lo = offset;
    hi = offset + n;
    sum = n;
    pieces.assign(1, {lo, hi});
  }
  // Folds another lane's (or the same lane's next) bytes of the same operation into this one:
  // the union of the pieces, adjacent or overlapping ones joined.
  void Unite(const OpRec& o) {
    lo = std::min(lo, o.lo);
    hi = std::max(hi, o.hi);
    sum += o.sum;
    ptx_lines.insert(o.ptx_lines.begin(), o.ptx_lines.end());
    std::vector<std::pair<int64_t, int64_t>> all;
    all.reserve(pieces.size() + o.pieces.size());
    std::merge(pieces.begin(), pieces.end(), o.pieces.begin(), o.pieces.end(),
               std::back_inserter(all));
    pieces.clear();
    for (const auto& p : all) {
      if (!pieces.empty() && p.first <= pieces.back().second) {
        pieces.back().second = std::max(pieces.back().second, p.second);
      } else {
        pieces.push_back(p);
      }
    }
  }
};

// An order whose equivalence classes are SameOp's (MergeLanes numbers operations by it).
struct SameOpLess {
  bool operator()(const OpRec* a, const OpRec* b) const { return a->SameOpKey() < b->SameOpKey(); }
};

struct BufferInfo {
  std::string name;
  std::string symbol;
  uint64_t base = 0;
  uint64_t stride = 0;
  int slots = 1;
  int64_t bytes = 0;
  // The copies that address it when the symbol's buffers are told apart by them (`tmap4`).
  std::string filled_by;
};

struct RoleRec {
  std::vector<OpRec> ops;
  int count = 0;
  int threads = 32;
  std::vector<int> warps;
  std::string name;  // "" for a role of warps (named by them); `tensor_core_wgG`
};

class Importer {
 public:
  Importer(const Module& m, const Function& f, const ImportOptions& o) : m_(m), f_(f), o_(o) {}

  Expected<std::string> Run();
 private:

  // The same role up to integer operands (which may differ from CTA to CTA).
  static bool SameShapeRole(const RoleRec& a, const RoleRec& b);

  // A role every CTA of the grid has alike is emitted once; one every cluster has alike in a
  // given rank once per rank (`when cta_rank == r`); the others once per CTA of the grid
  // (`when cluster_id == c && cta_rank == r`).
  void EmitRoles(std::ostream& roles, std::vector<std::vector<RoleRec>>& unit_roles);

  Status CheckOptions();

  // A run that cannot follow a branch while a scalar argument is missing: name the argument.
  Status MissingArgOr(const Status& s) const;

  Status Unsupported(const Instruction& inst, const std::string& why) const {
    return Status("import.unsupported-op", "`" + inst.opcode + "`: " + why,
                  {m_.path, inst.line, inst.column});
  }

  const TensorMapArg* TensorMapOf(const Value& v) const;

  static bool IsTensorCopy(const Instruction& inst) {
    return inst.base == "cp" && inst.HasModifier("bulk") && inst.HasModifier("tensor") &&
           !inst.HasModifier("prefetch");
  }
  // cp.async.bulk.tensor.Nd.shared::cluster.global...: a load into shared memory.
  static bool IsTmaLoad(const Instruction& inst) {
    return IsTensorCopy(inst) && FirstSpace(inst).rfind("shared", 0) == 0;
  }
  // cp.async.bulk.tensor.Nd.global.shared::cta.bulk_group: a store from shared memory.
  static bool IsTmaStore(const Instruction& inst) {
    return IsTensorCopy(inst) && FirstSpace(inst) == "global";
  }

  // Barriers from the inits, buffers from the TMA destinations, and the tensor maps used.
  Status RecoverDeclarations();
  // Names barriers without a variable of their own by their role (`full`, `empty`).
  void NameBarriersByRole();
  // Whether two of the buffers' address ranges (first slot to last) overlap.
  static bool Overlapping(const std::vector<BufferInfo>& buffers);

  // "full[{}]" (+ " @cta({})") with its integers, or an error. An address no mbarrier.init
  // covers is a kernel bug, not bad input: it becomes an element the schedule never `init`s (the
  // next element of the ring it follows, or a barrier of its own), so that `check` and `explore`
  // report M1001 at the operation (PTX ISA 9.7.13.15: an mbarrier must be initialised before any
  // other mbarrier operation on it).
  Status BarrierRef(const Instruction& inst, const Value& v, std::string* fmt,
                    std::vector<int64_t>* ints);

  // The buffer slot holding a shared address, or nullopt.
  std::optional<std::pair<const BufferInfo*, int>> BufferSlot(const SharedAddr& a) const;

  // `file:line` of the kernel's own frame of the instruction (shared_frames_), or "".
  std::string SourceLine(const Instruction& inst) const;
  // Sets shared_frames_: the outer frames the protocol instructions' chains share (those of the
  // largest group with one outermost frame).
  void FindSharedFrames();
  Expected<std::vector<OpRec>> ToOps(const std::vector<ProtocolEvent>& events);

  // Turns the CTA's wgmma markers (ToOps) into each warpgroup's tensor-core agent, appended to
  // `tensor_roles`, and the warps' arrivals and waits on its barriers (import_wgmma.cc).
  // `import.unsupported-op` at the PTX line for warps of one warpgroup that issue different
  // wgmma-groups.
  Status LowerWgmma(uint32_t unit, std::vector<std::vector<OpRec>>* warp_ops,
                    std::vector<RoleRec>* tensor_roles);

  // The first (k = 0) or second (k = 1) state space among an instruction's modifiers: a copy's
  // destination then its source.
  static std::string FirstSpace(const Instruction& inst, int k = 0);

  struct StoreWidth {
    int64_t bytes = 0;
    int64_t vector = 1;
  };
  // The bytes of st.async's element type and its vector width.
  static StoreWidth ParseTypeBits(const Instruction& inst);

  Status Coords(const Instruction& inst, const std::vector<Value>& coords, OpRec* op) const;

  // ` + OFF` of a tensor copy's box in its slot (a buffer merged from aliased layouts).
  static void SlotOffset(const std::pair<const BufferInfo*, int>& slot, const SharedAddr& a,
                         OpRec* op);

  // ` + OFF bytes N` of a bulk copy (OFF omitted when 0, bytes when the copy fills the slot).
  static void SlotRange(const std::pair<const BufferInfo*, int>& slot, const SharedAddr& a,
                        int64_t n, OpRec* op);

  static int64_t SignExtend32(uint64_t v) {
    return static_cast<int64_t>(static_cast<int32_t>(static_cast<uint32_t>(v)));
  }

  // One agent per warp: every lane's operations must be a subsequence of the leading lane's.
  Expected<std::vector<OpRec>> MergeLanes(uint32_t cta, uint32_t warp,
                                          std::vector<std::vector<OpRec>>& lanes) const;

  // Renders the CTA's shared-memory accesses (Merge::kUnion, per warp): an access whose bytes
  // are not one range is its hull, unless another warp's access of the same kind to the same
  // slot lies in the hull's gaps: then one access per piece.
  static void SplitAccesses(std::vector<std::vector<OpRec>>* warps);

  // Whether a warp issuing `ops` can be the next agent of `role`: the same operations, with
  // every integer operand either the same or the first agent's plus the agent's index times a
  // step (a warp's own part of a tile: `use t[0] + 64 * agent bytes 64`). Sets the steps.
  static bool JoinRole(RoleRec* role, const std::vector<OpRec>& ops);

  // Whether an operation may block its agent (a wait of any kind, a barrier).
  static bool Blocks(const OpRec& op);

  // The op's text with its integers replaced by `exprs` (or the values themselves).
  static std::string Render(const OpRec& op, const std::vector<std::string>& exprs);

  std::string Comment(const std::set<int>& lines, const std::string& source) const;

  static std::pair<std::string, size_t> Fit(const std::vector<int64_t>& v, int64_t off = 0) {
    return FitLoopExpression(v, off);
  }

  struct Loop {
    size_t period = 0;
    size_t reps = 0;
    std::vector<std::vector<std::string>> exprs;  // per op of the body, per integer
  };

  static size_t Length(const std::vector<std::vector<std::string>>& exprs);

  // The loop's expressions with k running from `off`; nullopt unless every value fits.
  static std::optional<std::vector<std::vector<std::string>>> Refit(const std::vector<OpRec>& ops,
                                                                    size_t i, const Loop& loop,
                                                                    int64_t off);

  // The length of the loop body's text.
  static size_t BodyLength(const std::vector<OpRec>& ops, size_t i, const Loop& loop);
  std::optional<Loop> FindLoop(const std::vector<OpRec>& ops, size_t i) const;

  void EmitBody(std::ostream& out, const std::vector<OpRec>& ops);

  void EmitHeader(std::ostream& out);

  const Module& m_;
  const Function& f_;
  const ImportOptions& o_;
  uint32_t ctas_ = 1;  // CTAs per cluster
  std::vector<SourcePos> shared_frames_;  // the frames the protocol instructions' chains share
  // Per instruction: false for a try_wait / test_wait whose result decides nothing (a probe,
  // wait_results.h), which is no wait of the schedule.
  std::vector<bool> wait_results_read_;
  std::vector<std::vector<std::vector<ProtocolEvent>>> events_;
  std::vector<BarrierArray> barriers_;
  std::vector<BufferInfo> buffers_;
  std::set<std::string> used_maps_;
  std::set<int> used_args_;
  std::ostringstream decls_;
  // LowerWgmma's barrier rings: name -> (elements, count), and its named barrier's id.
  std::map<std::string, std::pair<int64_t, int64_t>> wgmma_barriers_;
  int64_t wgmma_start_id_ = -1;
};

}  // namespace parity::ptx::importer_internal

#endif  // PARITY_SIM_PTX_IMPORTER_INTERNAL_H_
