// The named codes that the schedule IR (sim/ir/ir.h), the CPU evaluator (sim/ir/eval.h), the
// compact encoding (sim/ir/encoding.h) and the shared executor (sim/ir/exec.h, also compiled by
// nvcc) all use: builtins, operators, evaluation errors, encoded expression opcodes, statement
// kinds and op kinds. Only <cstdint>, so that nvcc can include it.
#ifndef PARITY_SIM_IR_OPS_H_
#define PARITY_SIM_IR_OPS_H_

#include <cstdint>

namespace parity::ir {

// Values known per agent at run time (PTX special registers and schedule facts).
enum class Builtin : uint8_t {
  kCtaRank,      // %cluster_ctarank: 0 .. cluster_size-1, x fastest
  kCtaX,         // %cluster_ctaid.x: 0 .. cluster_m-1
  kCtaY,         // %cluster_ctaid.y: 0 .. cluster_n-1
  kClusterM,     // %cluster_nctaid.x
  kClusterN,     // %cluster_nctaid.y
  kClusterSize,  // cluster_m * cluster_n
  kClusterId,    // which cluster of the grid (0 .. clusters-1)
  kAgent,        // index of this agent within its role in its CTA (0 .. count-1)
  kNumClusters,  // %nclusterid: clusters in the grid (`clusters N`)
  kGridCta,      // the CTA's linear index in the grid: cluster_id * cluster_size + cta_rank
  kGridSize,     // CTAs in the grid: num_clusters * cluster_size (%nctaid of a 1-D grid)
};
inline constexpr uint32_t kNumBuiltinCodes = 11;

enum class UnaryOp : uint8_t { kNeg, kNot, kBitNot };
enum class BinaryOp : uint8_t {
  kAdd, kSub, kMul, kDiv, kMod, kShl, kShr, kBitAnd, kBitOr, kBitXor,
  kEq, kNe, kLt, kLe, kGt, kGe, kAnd, kOr, kMin, kMax,
};

// Why an evaluation failed. Rule names (Status::rule(), sim/ir/eval.h) in parentheses.
enum class EvalError : uint8_t {
  kNone = 0,
  kDivByZero,       // "eval.div-by-zero": x / 0 or x % 0
  kOverflow,        // "eval.overflow": result outside int64 (incl. INT64_MIN / -1)
  kShiftRange,      // "eval.shift-range": shift count outside 0..63
  kBadReference,    // "eval.bad-reference": param/var slot out of range, no builtins, bad id
  kBadOp,           // "eval.bad-op": malformed node (unknown operator or missing operand)
  kTooDeep,         // "eval.too-deep": a tree deeper than the walker recurses (built in code)
};

// Bytecode opcodes of an encoded expression (sim/ir/encoding.h describes each).
enum class EncodedExprOp : uint8_t {
  kConst = 1, kVar = 2, kBuiltin = 3, kUnary = 4, kBinary = 5,
  kJumpIfZero = 6, kJump = 7, kAndJump = 8, kOrJump = 9, kBool = 10,
};
// Memory-ordering qualifiers in an encoded arrive's kind word and a wait's test_only word (bits
// above the low byte that holds the kind or the flag): ir::MemSem::kRelaxed and
// ir::MemScope::kCluster.
inline constexpr uint32_t kSemRelaxedBit = 1u << 8;
inline constexpr uint32_t kScopeClusterBit = 1u << 9;

// The words of the encoding's header, by index (sim/ir/encoding.h describes each; offsets are
// word offsets from word 0). Every reader and writer of the header names them from here.
enum EncodedHeader : uint32_t {
  kHdrMagic = 0,
  kHdrVersion = 1,
  kHdrHeaderWords = 2,
  kHdrTotalWords = 3,
  kHdrHashLo = 4,
  kHdrHashHi = 5,
  kHdrNumParams = 6,
  kHdrParams = 7,
  kHdrPool = 8,
  kHdrPoolWords = 9,
  kHdrClusterM = 10,
  kHdrClusterN = 11,
  kHdrClusters = 12,
  kHdrNumBuffers = 13,
  kHdrBuffers = 14,
  kHdrNumBarriers = 15,
  kHdrBarriers = 16,
  kHdrNumMaps = 17,
  kHdrMaps = 18,
  kHdrNumRoles = 19,
  kHdrRoles = 20,
  kHdrStrings = 21,
  kHdrStringWords = 22,
  kHdrChecksum = 23,
  kHdrPrimary = 24,
  kHdrNumGlobals = 25,
  kHdrGlobals = 26,
  kHdrRoleGrids = 27,
  kHdrRoleCode = 28,
  kHdrSize = 29,  // ir::kEncodingHeaderWords
};

// Kinds of an encoded statement record: control flow, then kOpBase + OpKind.
enum class EncodedStmtKind : uint8_t {
  kLet = 1, kFor = 2, kIf = 3, kWhile = 4, kBreak = 5, kOpBase = 16,
};

// The ops, in the order of the alternatives of ir::Op (sim/ir/ir.h; encoding.cc asserts that
// each one's index matches). Appended only: the numbers are part of the encoding.
enum class OpKind : uint8_t {
  kMbarrierInit = 0,
  kMbarrierInval = 1,
  kMbarrierArrive = 2,
  kMbarrierExpectTx = 3,
  kMbarrierCompleteTx = 4,
  kMbarrierWait = 5,
  kTmaLoad = 6,
  kTmaStore = 7,
  kBulkLoad = 8,
  kBulkStore = 9,
  kBulkCommit = 10,
  kBulkWait = 11,
  kCpAsync = 12,
  kCpAsyncCommit = 13,
  kCpAsyncWait = 14,
  kCpAsyncMbarrierArrive = 15,
  kStAsync = 16,
  kFence = 17,
  kClusterArrive = 18,
  kClusterWait = 19,
  kNamedBarrier = 20,
  kBufferAccess = 21,
  kExit = 22,
  kMbarrierPendingCount = 23,
  kGlobalReadback = 24,
  kGridDepControl = 25,
  kGlobalAccess = 26,
  kTensormapReplace = 27,
};
inline constexpr uint32_t kNumOpKinds = 28;

}  // namespace parity::ir

#endif  // PARITY_SIM_IR_OPS_H_
