// The layout of each op's statement record in the compact encoding (sim/ir/encoding.h): the
// word offset of every field after the record's head word, one declaration per op (and the
// layouts of the header tables' records). The encoder
// writes the fields at these offsets, the decoder checks each record's length against them, and
// the executor shared by the GPU kernel and the host (sim/ir/exec.h, gpu/) reads the fields by
// these names. Only <cstdint> and host_device.h, so that nvcc can include it.
#ifndef PARITY_SIM_IR_OP_LAYOUT_H_
#define PARITY_SIM_IR_OP_LAYOUT_H_

#include <cstdint>

#include "sim/common/host_device.h"
#include "sim/ir/ops.h"

namespace parity::ir::layout {

// A barrier ref: the barrier's index, then the element and the CTA rank (expr refs).
struct BarRef {
  static constexpr uint32_t kBarrier = 0;
  static constexpr uint32_t kIndex = 1;
  static constexpr uint32_t kCta = 2;
  static constexpr uint32_t kWords = 3;
};
// A buffer ref: the buffer's index, then the slot, offset, bytes and CTA rank (expr refs).
struct BufRef {
  static constexpr uint32_t kBuffer = 0;
  static constexpr uint32_t kSlot = 1;
  static constexpr uint32_t kOffset = 2;
  static constexpr uint32_t kBytes = 3;
  static constexpr uint32_t kCta = 4;
  static constexpr uint32_t kWords = 5;
};

// The header's tables (EncodedHeader): a barrier's record, and the heads of a tensor map's and
// a role's records (what follows the head is described in sim/ir/encoding.h).
struct BarrierRecord {  // expr refs
  static constexpr uint32_t kSize = 0;
  static constexpr uint32_t kCount = kSize + 1;
  static constexpr uint32_t kWords = kCount + 1;
};
struct TensorMapHead {
  // Then rank dims refs, rank box refs, kNumStrides strides refs, kNumElementStrides refs.
  static constexpr uint32_t kDtype = 0;
  static constexpr uint32_t kSwizzle = kDtype + 1;
  static constexpr uint32_t kInterleave = kSwizzle + 1;
  static constexpr uint32_t kOobFill = kInterleave + 1;
  static constexpr uint32_t kRank = kOobFill + 1;
  static constexpr uint32_t kNumStrides = kRank + 1;
  static constexpr uint32_t kNumElementStrides = kNumStrides + 1;
  static constexpr uint32_t kWords = kNumElementStrides + 1;
};
struct RoleHead {
  // Then kBodyWords words of the role's statement records.
  static constexpr uint32_t kCount = 0;
  static constexpr uint32_t kThreads = kCount + 1;
  static constexpr uint32_t kWhen = kThreads + 1;
  static constexpr uint32_t kNumVars = kWhen + 1;
  static constexpr uint32_t kBodyWords = kNumVars + 1;
  static constexpr uint32_t kWords = kBodyWords + 1;
};

// Per op: its fields' offsets and kWords, the record's fields in words (the head word not
// counted). A field named after a ref starts that ref's words.
struct MbarrierInit {
  static constexpr uint32_t kBar = 0;
  static constexpr uint32_t kCount = kBar + BarRef::kWords;
  static constexpr uint32_t kWords = kCount + 1;
};
struct MbarrierInval {
  static constexpr uint32_t kBar = 0;
  static constexpr uint32_t kWords = kBar + BarRef::kWords;
};
struct MbarrierArrive {
  // kKind: the arrive's kind in the low byte, kSemRelaxedBit and kScopeClusterBit above it.
  static constexpr uint32_t kKind = 0;
  static constexpr uint32_t kBar = kKind + 1;
  static constexpr uint32_t kCount = kBar + BarRef::kWords;
  static constexpr uint32_t kExpectTx = kCount + 1;
  static constexpr uint32_t kMask = kExpectTx + 1;
  static constexpr uint32_t kTokenVar = kMask + 1;
  static constexpr uint32_t kWords = kTokenVar + 1;
};
// MbarrierExpectTx and MbarrierCompleteTx.
struct MbarrierTx {
  static constexpr uint32_t kBar = 0;
  static constexpr uint32_t kBytes = kBar + BarRef::kWords;
  static constexpr uint32_t kWords = kBytes + 1;
};
struct MbarrierWait {
  // kTestOnly: bit 0 test_wait, kSemRelaxedBit and kScopeClusterBit above it.
  static constexpr uint32_t kBar = 0;
  static constexpr uint32_t kParity = kBar + BarRef::kWords;
  static constexpr uint32_t kTokenVar = kParity + 1;
  static constexpr uint32_t kTestOnly = kTokenVar + 1;
  static constexpr uint32_t kResultVar = kTestOnly + 1;
  static constexpr uint32_t kWords = kResultVar + 1;
};
// TmaLoad and TmaStore end in their coordinates: kRank words of expr refs from kCoords.
struct TmaLoad {
  static constexpr uint32_t kMap = 0;
  static constexpr uint32_t kDst = kMap + 1;
  static constexpr uint32_t kBar = kDst + BufRef::kWords;
  static constexpr uint32_t kMulticast = kBar + BarRef::kWords;
  static constexpr uint32_t kRank = kMulticast + 1;
  static constexpr uint32_t kCoords = kRank + 1;
  static constexpr uint32_t kWords = kCoords;  // plus the rank
};
struct TmaStore {
  static constexpr uint32_t kMap = 0;
  static constexpr uint32_t kSrc = kMap + 1;
  static constexpr uint32_t kRank = kSrc + BufRef::kWords;
  static constexpr uint32_t kCoords = kRank + 1;
  static constexpr uint32_t kWords = kCoords;
};
struct BulkLoad {
  static constexpr uint32_t kDst = 0;
  static constexpr uint32_t kBar = kDst + BufRef::kWords;
  static constexpr uint32_t kMulticast = kBar + BarRef::kWords;
  static constexpr uint32_t kWords = kMulticast + 1;
};
// BulkStore and CpAsync.
struct OneBuffer {
  static constexpr uint32_t kBuf = 0;
  static constexpr uint32_t kWords = kBuf + BufRef::kWords;
};
struct BulkWait {
  static constexpr uint32_t kPending = 0;
  static constexpr uint32_t kRead = kPending + 1;
  static constexpr uint32_t kWords = kRead + 1;
};
struct CpAsyncWait {
  static constexpr uint32_t kPending = 0;
  static constexpr uint32_t kWords = kPending + 1;
};
struct CpAsyncMbarrierArrive {
  static constexpr uint32_t kBar = 0;
  static constexpr uint32_t kNoinc = kBar + BarRef::kWords;
  static constexpr uint32_t kWords = kNoinc + 1;
};
struct StAsync {
  static constexpr uint32_t kDst = 0;
  static constexpr uint32_t kBar = kDst + BufRef::kWords;
  static constexpr uint32_t kWords = kBar + BarRef::kWords;
};
struct Fence {
  // The kind in the low byte; a tensormap acquire's map index + 1 above it.
  static constexpr uint32_t kKind = 0;
  static constexpr uint32_t kWords = kKind + 1;
};
struct ClusterArrive {
  static constexpr uint32_t kRelaxed = 0;
  static constexpr uint32_t kWords = kRelaxed + 1;
};
struct NamedBarrier {
  static constexpr uint32_t kId = 0;
  static constexpr uint32_t kThreads = kId + 1;
  static constexpr uint32_t kSync = kThreads + 1;
  static constexpr uint32_t kWords = kSync + 1;
};
struct BufferAccess {
  // kFlags: bit 0 write, 1 atomic, 2 returns, bits 3..4 a read's proxy.
  static constexpr uint32_t kBuf = 0;
  static constexpr uint32_t kFlags = kBuf + BufRef::kWords;
  static constexpr uint32_t kWords = kFlags + 1;
};
struct MbarrierPendingCount {
  static constexpr uint32_t kTokenVar = 0;
  static constexpr uint32_t kResultVar = kTokenVar + 1;
  static constexpr uint32_t kWords = kResultVar + 1;
};
struct GlobalReadback {
  static constexpr uint32_t kBuf = 0;
  static constexpr uint32_t kResultVar = kBuf + BufRef::kWords;
  static constexpr uint32_t kWords = kResultVar + 1;
};
struct GridDepControl {
  static constexpr uint32_t kKind = 0;
  static constexpr uint32_t kWords = kKind + 1;  // 0 launch_dependents, 1 wait
};
struct GlobalAccess {
  static constexpr uint32_t kGlobal = 0;
  static constexpr uint32_t kSlot = kGlobal + 1;
  static constexpr uint32_t kOffset = kSlot + 1;
  static constexpr uint32_t kBytes = kOffset + 1;
  static constexpr uint32_t kWrite = kBytes + 1;
  static constexpr uint32_t kWords = kWrite + 1;
};
struct TensormapReplace {
  static constexpr uint32_t kMap = 0;
  static constexpr uint32_t kWords = kMap + 1;
};
// BulkCommit, CpAsyncCommit, ClusterWait, Exit.
struct NoFields {
  static constexpr uint32_t kWords = 0;
};

// The words of op `op`'s fields given the first `available` of them at `f` (the rank of a TMA
// copy is a field); kBadOp for a kind past the last (or a TMA record too short to hold its rank).
inline constexpr uint32_t kBadOp = 0xffffffffu;
PARITY_HD inline uint32_t OpFieldWords(OpKind op, const uint32_t* f, uint32_t available) {
  switch (op) {
    case OpKind::kMbarrierInit: return MbarrierInit::kWords;
    case OpKind::kMbarrierInval: return MbarrierInval::kWords;
    case OpKind::kMbarrierArrive: return MbarrierArrive::kWords;
    case OpKind::kMbarrierExpectTx:
    case OpKind::kMbarrierCompleteTx: return MbarrierTx::kWords;
    case OpKind::kMbarrierWait: return MbarrierWait::kWords;
    case OpKind::kTmaLoad:
      return available > TmaLoad::kRank ? TmaLoad::kWords + f[TmaLoad::kRank] : kBadOp;
    case OpKind::kTmaStore:
      return available > TmaStore::kRank ? TmaStore::kWords + f[TmaStore::kRank] : kBadOp;
    case OpKind::kBulkLoad: return BulkLoad::kWords;
    case OpKind::kBulkStore:
    case OpKind::kCpAsync: return OneBuffer::kWords;
    case OpKind::kBulkWait: return BulkWait::kWords;
    case OpKind::kCpAsyncWait: return CpAsyncWait::kWords;
    case OpKind::kCpAsyncMbarrierArrive: return CpAsyncMbarrierArrive::kWords;
    case OpKind::kStAsync: return StAsync::kWords;
    case OpKind::kFence: return Fence::kWords;
    case OpKind::kClusterArrive: return ClusterArrive::kWords;
    case OpKind::kNamedBarrier: return NamedBarrier::kWords;
    case OpKind::kBufferAccess: return BufferAccess::kWords;
    case OpKind::kMbarrierPendingCount: return MbarrierPendingCount::kWords;
    case OpKind::kGlobalReadback: return GlobalReadback::kWords;
    case OpKind::kGridDepControl: return GridDepControl::kWords;
    case OpKind::kGlobalAccess: return GlobalAccess::kWords;
    case OpKind::kTensormapReplace: return TensormapReplace::kWords;
    case OpKind::kBulkCommit:
    case OpKind::kCpAsyncCommit:
    case OpKind::kClusterWait:
    case OpKind::kExit: return NoFields::kWords;
  }
  return kBadOp;
}

}  // namespace parity::ir::layout

#endif  // PARITY_SIM_IR_OP_LAYOUT_H_
