// A compact POD encoding of a bound schedule for the GPU executor, which interprets it word for
// word (no pointers, no allocation, no strings needed to run).
//
// Everything is 32-bit words; as bytes, each word is little-endian (x86 hosts and NVIDIA GPUs
// agree, so the host copies std::vector<uint32_t>::data() to the device unchanged). An "expr
// ref" is a word offset from the start of the expression pool, or kNone = 0xffffffff.
// Offsets in the header are word offsets from word 0. Params are substituted (an expression
// never refers to a param); loops, ifs and variables are kept.
//
// Header (kHeaderWords = 29 words):
//   0 kMagic (0x59545250, the bytes "PRTY")      1 kVersion
//   2 header words (29)                          3 total words
//   4,5 ContentHash of the bound program (lo, hi) -- identifies schedule + param values
//   6 number of params       7 params offset: per param, its bound value as int64 (lo, hi)
//   8 expression pool offset 9 expression pool words
//  10 cluster_m ref  11 cluster_n ref  12 clusters ref
//  13 number of buffers      14 buffers offset: per buffer  stages, bytes, align refs, the
//        index of the buffer it aliases (kNone: none), alias offset ref       (5 words)
//  15 number of barriers     16 barriers offset: per barrier size, count           (2 refs)
//  17 number of tensor maps  18 tensor maps offset: per map
//        dtype (CUtensorMapDataType), swizzle (CUtensorMapSwizzle), interleave
//        (CUtensorMapInterleave), oob fill (CUtensorMapFloatOOBfill), rank, #strides,
//        #element strides, then rank dims refs, rank box refs, the strides refs, the
//        element strides refs
//  19 number of roles        20 roles offset: per role
//        count ref, threads ref, when ref, num_vars, body words, then the body
//  21 strings offset         22 strings words
//  23 checksum: the low 32 bits of FNV-1a 64 over the bytes of words 28 .. total-1
//  24 primary grid clusters ref (Program::primaries[0]; kNone: no primary grid; a chain of
//     more grids is not encoded; version 5)
//  25 number of global buffers  26 globals offset: per global  slots, bytes refs  (version 5)
//  27 role grids offset: per role 0 (the schedule's grid) or 1 (the primary grid; version 5)
//  28 control code offset: per role, in role order, its number of instructions n, then n
//     instructions of 6 words: kind (engine::InstrKind, sim/engine/walk.h), var, e1 ref, e2 ref,
//     target (an instruction index), and the word offset in the role body of the statement
//     record it comes from (the body's length: the implicit exit). It is the engine's
//     compilation of the body (sim/engine/control.h CompileRole), which the GPU executor and
//     the host resolution walk with the engine's walker (walk.h WalkToOp), so instruction
//     numbering and loop semantics are the engine's by construction. Differences: an assert
//     is kJumpIfFalse on the constant 0 to the next instruction (the model checks assertions),
//     and a while's kForInit has the constant 0 as e1. (Version 6.)
//
// Expression record (at pool offset r): word n, then n bytecode words, evaluated on a stack of
// int64. Each bytecode word is opcode (bits 0..7) | argument << 8; relative jumps skip `arg`
// words forward from the next instruction:
//   kConst  (arg 0) + 2 words: the int64 value (lo, hi)     push
//   kVar    arg = variable slot                               push
//   kBuiltin arg = ir::Builtin                                push
//   kUnary  arg = ir::UnaryOp                                 pop a, push op a
//   kBinary arg = ir::BinaryOp (never kAnd/kOr, see below)    pop b, pop a, push a op b
//   kJumpIfZero arg: pop c; if c == 0 jump                    ?: as  a JZ(b+1) b J(c) c
//   kJump   arg: jump
//   kAndJump arg: if top == 0 jump (keeping 0) else pop       && as  a ANDJ(b+1) b BOOL
//   kOrJump  arg: if top != 0 { top = 1; jump } else pop      || as  a ORJ(b+1) b BOOL
//   kBool   top = top != 0
// so ?:, && and || evaluate only what C would, as sim/ir/eval.h does. Arithmetic follows
// eval.h (C truncating / and %; division by zero, overflow and shift counts outside 0..63 are
// faults).
//
// Statement record: word 0 = kind (bits 0..7) | record words including word 0 (bits 8..31),
// then fields. The statement tree is what Decode reads; the executor reaches op records through
// the control code (header word 28) and reads their fields. A barrier ref is 3 words
// (barrier index, index ref, cta ref), a buffer ref 5 (buffer index, slot, offset, bytes, cta
// refs). `var` fields are slots; 0xffffffff = none.
//   kLet 1: var, value                kFor 2: var, lo, hi, step, body words, body
//   kIf 3: cond, then words, else words, then body, else body
//   kWhile 4: counter var, bound, cond, body words, body (version 3)
//   kBreak 5: -  (leaves the innermost kFor/kWhile; version 3)
//   ops: 16 + the index of the alternative in ir::Op, the fields at the offsets that
//   sim/ir/op_layout.h declares for each op (the encoder writes, the decoder and the executor
//   read them there; the decoder refuses a record whose length is not its layout's):
//   MbarrierInit bar, count            MbarrierInval bar
//   MbarrierArrive kind (| kSemRelaxedBit, kScopeClusterBit), bar, count, expect_tx, mask,
//                  token var
//   MbarrierExpectTx / MbarrierCompleteTx bar, bytes
//   MbarrierWait bar, parity, token var, test_only (| the sem/scope bits), result var
//   TmaLoad map, buf, bar, multicast, #coords, coords   TmaStore map, buf, #coords, coords
//   BulkLoad buf, bar, multicast       BulkStore buf    BulkCommit -     BulkWait pending, read
//   CpAsync buf   CpAsyncCommit -      CpAsyncWait pending               CpAsyncMbarrierArrive bar, noinc
//   StAsync buf, bar   Fence kind      ClusterArrive relaxed             ClusterWait -
//   NamedBarrier id, threads, sync     BufferAccess buf, kind (1 write | 2 atomic | 4 atom)
//   Exit -
//   MbarrierPendingCount token var, result var (kind 39, 3 words; version 2)
//   GlobalReadback buf, result var    (kind 40, 7 words; version 2)
//   GridDepControl kind (0 launch_dependents, 1 wait)   (kind 41, 2 words; version 5)
//   GlobalAccess global, slot, offset, bytes, write     (kind 42, 6 words; version 5)
//   TensormapReplace tensor map        (kind 43, 2 words). Fence's word: kind in the low byte,
//   for kProxyTensormapAcquire the tensor map's index + 1 above it.
//
// Strings (for reports only; the interpreter never needs them): each string is its byte length
// then the bytes packed 4 per word (first byte in the low bits), in this order: the schedule
// name, the param names, buffer, barrier, tensor map and role names, then each role's variable
// names, then the global buffers' names (version 5). Source locations are not encoded.
//
// Appending alternatives to ir::Op or fields at the end of a record needs a version bump; so
// does any other change.
#ifndef PARITY_SIM_IR_ENCODING_H_
#define PARITY_SIM_IR_ENCODING_H_

#include <cstdint>
#include <vector>

#include "sim/common/status.h"
#include "sim/ir/ir.h"

namespace parity::ir {

inline constexpr uint32_t kEncodingMagic = 0x59545250u;  // "PRTY"
// 2: MbarrierPendingCount (op 23) and GlobalReadback (op 24) appended.
// 3: kWhile and kBreak statements.
// 4: buffer aliases (5 words per buffer), sem/scope bits on arrive and wait, Fence kAcqRelCta.
// 5: programmatic dependent launch: header words 24..27 (primary grid, global buffers, role
//    grids), GridDepControl (op 25) and GlobalAccess (op 26) appended.
// 6: the roles' compiled control code (header word 28).
inline constexpr uint32_t kEncodingVersion = 6;
inline constexpr uint32_t kEncodingHeaderWords = kHdrSize;  // sim/ir/ops.h EncodedHeader
inline constexpr uint32_t kEncodingNone = 0xffffffffu;

// EncodedExprOp, EncodedStmtKind and OpKind: sim/ir/ops.h. The executor of this encoding,
// shared by the GPU kernel and the host: sim/ir/exec.h.

// The program with params substituted: every kParam expression becomes the constant of
// `values` (from BindParams), params keep their names with default_value = the bound value and
// no default_expr; named barriers are their ids (the names and their declarations dropped, as
// the encoding carries no names for them). This is what Encode writes and Decode gives back.
Program SubstituteParams(const Program& program, const std::vector<int64_t>& values);

// `values` must come from BindParams(program, ...) (one per param). Errors: "encoding.params"
// (wrong number of values), "encoding.too-large" (a count does not fit its field).
Expected<std::vector<uint32_t>> Encode(const Program& program, const std::vector<int64_t>& values);

// Checks magic, version, sizes, checksum and every offset; never crashes on bad input (rule
// "encoding.bad"). The result has file "<encoded>".
Expected<Program> Decode(const std::vector<uint32_t>& words);

}  // namespace parity::ir

#endif  // PARITY_SIM_IR_ENCODING_H_
