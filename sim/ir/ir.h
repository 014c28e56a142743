// The schedule IR: what a `.pipe` file says, after parsing and name resolution.
//
// A Program describes one cluster shape, the per-CTA shared objects (buffers, mbarrier arrays,
// tensor maps) and the roles: each role is instantiated `count` times in every CTA, and each
// instance (an *agent*: an elected thread, a warp or a warpgroup acting as one) runs the role's
// statement list. Operations are named after the PTX instructions they stand for. The IR is the
// one vocabulary shared by the parser/printer (sim/ir), the engine (sim/engine), the verifier and
// the GPU executor (through the compact encoding); keep it free of engine state.
#ifndef PARITY_SIM_IR_IR_H_
#define PARITY_SIM_IR_IR_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "sim/common/status.h"
#include "sim/ir/ops.h"

namespace parity::ir {

// ---------------------------------------------------------------------------------------------
// Integer expressions, stored in one arena per Program and referred to by index.
using ExprId = uint32_t;
inline constexpr ExprId kNoExpr = 0xffffffffu;

// Builtin, UnaryOp and BinaryOp: sim/ir/ops.h (shared with the GPU executor).

// The model-state reads of an assertion (docs/language.md, Assertions), each of one object of the
// executing agent's CTA (the CTA a top-level property is evaluated for):
//   phase(b)    phases barrier b has completed (mbarrier phase count since init);
//   pending(b)  arrivals still pending in b's current phase;
//   tx(b)       b's tx-count (bytes expected and not yet landed; negative when bytes landed early);
//   landed(B[s]) 1 when no copy that writes bytes of buffer slot B[s] is in flight (every TMA,
//               bulk, st.async and cp.async write of those bytes issued so far has landed), else 0.
enum class StateFn : uint8_t { kPhase = 0, kPending = 1, kTx = 2, kLanded = 3 };

struct Expr {
  // kState: a read of the model's state (StateFn in `op`), allowed only in assertions
  // (Assertion): `index` is the barrier or buffer decl, `a` the element or slot.
  enum class Kind : uint8_t { kConst, kParam, kVar, kBuiltin, kUnary, kBinary, kSelect, kState };
  Kind kind = Kind::kConst;
  uint8_t op = 0;         // UnaryOp, BinaryOp, Builtin or StateFn, by kind
  uint32_t index = 0;     // kParam: index into Program::params; kVar: agent variable slot
  int64_t value = 0;      // kConst
  // kConst: 0 for a literal; 1 + an index into Program::named_barriers when the constant was
  // written as that named barrier's name (`bar.sync q_empty, 256`), so that the printer writes
  // the name back. Evaluation reads `value` only.
  ExprId a = kNoExpr;     // operands (kSelect: a ? b : c)
  ExprId b = kNoExpr;
  ExprId c = kNoExpr;
  SourceLocation where;
};

// ---------------------------------------------------------------------------------------------
// Declarations (per CTA; every CTA of the cluster has the same objects at the same offsets).

struct Param {
  std::string name;
  int64_t default_value = 0;  // default_expr evaluated with the defaults of earlier params
  // The default as written (`param A_BYTES = BLOCK_M * 64 * 2`); may use earlier params, so that
  // BindParams re-evaluates it after overrides (-D BLOCK_M=64 also changes A_BYTES). kNoExpr:
  // a plain constant default_value (programs built in code).
  ExprId default_expr = kNoExpr;
  SourceLocation where;
};

// `buffer A[STAGES] bytes TILE` : `stages` slots of `bytes` each, in shared memory.
// `buffer O[1] bytes N aliases V + OFF` : O takes no memory of its own; its slot 0 starts OFF
// bytes (default 0) into buffer V's slot 0, and all of O must lie inside V's slots (a union
// of shared memory, as FA3 puts its O tile over V). An access of O and one of V that share a
// byte are accesses of the same memory (verifier/races.cc compares CTA byte addresses).
struct BufferDecl {
  std::string name;
  ExprId stages;  // number of slots (array length)
  ExprId bytes;   // bytes per slot
  ExprId align;   // alignment of slot 0 in bytes (default 1024, as TMA swizzle needs)
  uint32_t alias_of = kNoAlias;  // index of an earlier buffer whose bytes this one reuses
  ExprId alias_offset = kNoExpr;  // bytes into alias_of's slot 0 (kNoExpr = 0)
  SourceLocation where;
  static constexpr uint32_t kNoAlias = 0xffffffffu;
};

// `barrier full[STAGES] count 1` : an array of mbarriers and the count each is initialised with.
struct BarrierDecl {
  std::string name;
  ExprId size;   // array length
  ExprId count;  // init count (expression over params and builtins such as cluster_m)
  SourceLocation where;
};

// `tensormap tmA dtype f16 dims [K, M] box [64, 64] swizzle 128B ...` (rank 1..5, innermost
// first, as in cuTensorMapEncodeTiled). Validated by sim/model/tensor_map.h after binding params.
struct TensorMapDecl {
  std::string name;
  std::string dtype;                 // u8, u16, f16, bf16, u32, f32, f64, ...
  std::vector<ExprId> global_dims;   // elements, innermost first
  std::vector<ExprId> global_strides;  // bytes, for dims 1..rank-1 (empty: packed)
  std::vector<ExprId> box_dims;      // elements
  std::vector<ExprId> element_strides;  // empty: all 1
  std::string swizzle = "none";      // none, 32B, 64B, 128B
  std::string interleave = "none";   // none, 16B, 32B
  std::string oob_fill = "zero";     // zero, nan
  SourceLocation where;
};

// `named_barrier q_empty = 3` : a name for one of the CTA's 16 named barriers (PTX ISA, bar /
// barrier: ids 0..15), as CUTLASS and FA3 name theirs with an enum. The name is an integer
// constant wherever an expression may stand (`bar.sync q_empty, 256`, `bar.arrive q_empty + 1,
// 128`), and reports print the name for its id (NamedBarrierName).
struct NamedBarrierDecl {
  std::string name;
  int64_t id = 0;
  SourceLocation where;
};

// ---------------------------------------------------------------------------------------------
// Operations (one event each in a trace). Barrier and buffer references are resolved to indices.

// `full[s]` or `full[s] @cta(r)` (a barrier of another CTA of the cluster, shared::cluster).
struct BarrierRef {
  uint32_t barrier = 0;      // index into Program::barriers
  ExprId index = kNoExpr;    // element of the array
  ExprId cta = kNoExpr;      // target CTA rank; kNoExpr = own CTA
};

// Memory-ordering qualifiers of arrive, wait and test_wait (PTX ISA, Memory Consistency Model).
// The zero value is PTX's default when the qualifier is omitted: mbarrier.arrive is
// .release.cta, mbarrier.try_wait / test_wait .acquire.cta.
enum class MemSem : uint8_t {
  kStrong = 0,   // .release on an arrive, .acquire on a wait
  kRelaxed = 1,  // .relaxed: orders no memory access
};
enum class MemScope : uint8_t {
  kCta = 0,      // .cta: synchronises with threads of the same CTA only
  kCluster = 1,  // .cluster: with every thread of the cluster
};

// `A[s]`, optionally `+ offset` bytes and `bytes N` (default: the whole slot).
struct BufferRef {
  uint32_t buffer = 0;       // index into Program::buffers
  ExprId slot = kNoExpr;
  ExprId offset = kNoExpr;   // bytes into the slot; kNoExpr = 0
  ExprId bytes = kNoExpr;    // kNoExpr = the slot's size minus offset
  // st.async: the destination CTA rank; use / write: the CTA whose shared memory is accessed
  // through the cluster window (mapa + ld/st.shared::cluster); kNoExpr = own CTA.
  ExprId cta = kNoExpr;
};

struct MbarrierInit { BarrierRef bar; ExprId count = kNoExpr; };  // kNoExpr: the declared count
struct MbarrierInval { BarrierRef bar; };
// mbarrier.arrive[.noComplete] / arrive_drop / arrive.expect_tx; local or remote (bar.cta).
// `mask`, if set, sends the same arrive to every CTA whose bit is set (a loop of remote arrives,
// as CUTLASS's ClusterBarrier::arrive(cta_id, pred) is used per destination).
struct MbarrierArrive {
  enum class Kind : uint8_t { kArrive, kNoComplete, kDrop };
  Kind kind = Kind::kArrive;
  BarrierRef bar;
  ExprId count = kNoExpr;      // kNoExpr = 1
  ExprId expect_tx = kNoExpr;  // arrive.expect_tx bytes; kNoExpr = plain arrive
  ExprId mask = kNoExpr;       // multicast-style arrive to several CTAs
  uint32_t token_var = 0xffffffffu;  // agent variable slot that receives the state token, if any
  MemSem sem = MemSem::kStrong;      // .release (default) or .relaxed
  MemScope scope = MemScope::kCta;   // .cta (default) or .cluster
};
struct MbarrierExpectTx { BarrierRef bar; ExprId bytes; };
struct MbarrierCompleteTx { BarrierRef bar; ExprId bytes; };
// Waits until the phase completes: a try_wait loop (the engine may make try_wait fail
// spuriously). Either a parity or a token variable.
struct MbarrierWait {
  BarrierRef bar;
  ExprId parity = kNoExpr;
  uint32_t token_var = 0xffffffffu;
  bool test_only = false;  // test_wait once, result into result_var (no blocking)
  uint32_t result_var = 0xffffffffu;
  MemSem sem = MemSem::kStrong;      // .acquire (default) or .relaxed
  MemScope scope = MemScope::kCta;   // .cta (default) or .cluster
};
// cp.async.bulk.tensor.Nd.shared::cluster.global.mbarrier::complete_tx::bytes[.multicast::cluster]
struct TmaLoad {
  uint32_t tensor_map = 0;
  std::vector<ExprId> coords;  // innermost first, elements
  BufferRef dst;
  BarrierRef bar;
  ExprId multicast_mask = kNoExpr;  // 16-bit ctaMask; kNoExpr = own CTA only
};
// cp.async.bulk.tensor.Nd.global.shared::cta.bulk_group (then commit/wait below).
struct TmaStore {
  uint32_t tensor_map = 0;
  std::vector<ExprId> coords;
  BufferRef src;
};
// cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes (1-D bulk load).
struct BulkLoad { BufferRef dst; BarrierRef bar; ExprId multicast_mask = kNoExpr; };
// cp.async.bulk.global.shared::cta.bulk_group (1-D bulk store).
struct BulkStore { BufferRef src; };
struct BulkCommit {};                                     // cp.async.bulk.commit_group
struct BulkWait { ExprId pending = kNoExpr; bool read = false; };  // cp.async.bulk.wait_group[.read] N
// cp.async (LDGSTS) of `dst.bytes` bytes (as 4/8/16-byte copies by the threads of the agent).
struct CpAsync { BufferRef dst; };
struct CpAsyncCommit {};                                  // cp.async.commit_group
struct CpAsyncWait { ExprId pending = kNoExpr; };         // cp.async.wait_group N (kNoExpr: wait_all)
struct CpAsyncMbarrierArrive { BarrierRef bar; bool noinc = false; };
// st.async...mbarrier::complete_tx::bytes: write dst.bytes into CTA dst.cta, complete_tx there.
struct StAsync { BufferRef dst; BarrierRef bar; };
// fence.acq_rel.cta / .cluster: with a .relaxed arrive after it, a release pattern; with a
// .relaxed wait before it, an acquire pattern (PTX ISA, Memory Consistency Model).
struct Fence {
  enum class Kind : uint8_t {
    kMbarrierInit, kProxyAsync, kProxyAsyncGlobal, kAcqRelCluster, kAcqRelCta,
    // fence.proxy.tensormap::generic.release.gpu / .acquire.gpu [tm], 128: order a generic
    // update of a tensor map (TensormapReplace) before a TMA's read of it through the tensormap
    // proxy; the acquire names the tensor map (`tensor_map`).
    kProxyTensormapRelease, kProxyTensormapAcquire,
  };
  Kind kind = Kind::kProxyAsync;
  uint32_t tensor_map = 0xffffffffu;  // kProxyTensormapAcquire: index into Program::tensor_maps
};
struct ClusterArrive { bool relaxed = false; };           // barrier.cluster.arrive
struct ClusterWait {};                                    // barrier.cluster.wait
// bar.sync / bar.arrive id, threads (named barriers; `threads` counts the participating threads,
// each agent contributes its role's thread count).
struct NamedBarrier { ExprId id; ExprId threads; bool sync = true; };
// Accesses of a buffer by the agent's threads: `use` reads (consumers), `write` writes (ordinary
// stores, e.g. an epilogue writing a tile that a TMA store then reads). A read names its proxy
// (PTX ISA, Memory Consistency Model, proxies): `use.generic` (ld.shared, ldmatrix,
// ld.shared::cluster), `use.async` (wgmma.mma_async operands), or plain `use`, whose proxy is not
// stated (docs/language.md §8.8, Proxies, says which rules each form meets). A write is
// generic-proxy.
// `red` / `atom` (write and atomic set): atomic read-modify-writes (red.shared{::cluster}.add,
// atom.shared{::cluster}.add, atomicAdd on shared memory; `atom` also returns the old value).
// Atomics of one location do not race with each other (PTX ISA, Memory Consistency Model: two
// morally strong operations do not form a data race; atom/red default to .gpu scope, which
// includes every thread of the cluster), but an atomic and a plain access or a copy of the same
// bytes do, unless happens-before orders them.
enum class ReadProxy : uint8_t { kUnstated = 0, kGeneric = 1, kAsync = 2 };
struct BufferAccess {
  BufferRef buf;
  bool write = false;
  bool atomic = false;
  bool returns = false;  // `atom` (the old value is read) rather than `red`
  ReadProxy proxy = ReadProxy::kUnstated;  // plain reads only
};
struct Exit {};
// mbarrier.pending_count.b64 count, state: the pending arrival count recorded in a state token
// (PTX ISA, mbarrier.pending_count: the count of the mbarrier object prior to the arrive-on that
// returned the token; defined only for tokens of arrive.noComplete / arrive_drop.noComplete).
// Reads no barrier: the token is the only operand. `pending_count tok -> v`.
struct MbarrierPendingCount {
  uint32_t token_var = 0xffffffffu;   // the state token (from `arrive.nocomplete ... -> tok`)
  uint32_t result_var = 0xffffffffu;  // receives the count
};
// A generic-proxy read of the global destination of `buf`'s bulk/TMA store region (every CTA's
// store of a buffer slot lands at the same global bytes, as on the GPU runner), classified
// against what the executing agent's own `write` of that region puts there:
//   0 every byte still holds the global memory's initial contents,
//   1 every byte holds the executing agent's `write` data (a store of it completed),
//   2 a mix of those two (per 4-byte word: each old or new),
//   3 anything else (another agent's data, a torn word).
// The litmus observation of the bulk async-group question (issue 7). `readback buf -> v`.
struct GlobalReadback {
  BufferRef buf;
  uint32_t result_var = 0xffffffffu;
};

// Programmatic dependent launch (PTX ISA griddepcontrol; CUDA Programming Guide, "Programmatic
// Dependent Launch"). `griddepcontrol.launch_dependents`: the executing CTA lets the grid's
// dependents be scheduled early; it orders no memory access and does not say that this grid
// completed. `griddepcontrol.wait`: blocks until every prerequisite grid (here: the grid
// launched just before the executing one, Program::primaries) has completed and its memory
// operations are visible; in the first grid launched it returns at once, as on the GPU without
// the launch attribute.
struct GridDepControl {
  enum class Kind : uint8_t { kLaunchDependents, kWait };
  Kind kind = Kind::kWait;
};
// A generic read (`use`) or write (`write`) of global memory: `dst.bytes` bytes at `offset` into
// slot `slot` of global buffer `global` (Program::globals). Both grids see the same bytes.
struct GlobalAccess {
  uint32_t global = 0;       // index into Program::globals
  ExprId slot = kNoExpr;
  ExprId offset = kNoExpr;   // bytes into the slot; kNoExpr = 0
  ExprId bytes = kNoExpr;    // kNoExpr = the slot's size minus offset
  bool write = false;
};

// An update of the tensor map (CUtensorMap, 128 bytes) that TMAs of `tensor_map` read: the
// tensormap.replace.tile.* instructions on it, or generic stores of a new descriptor into its
// memory (DeepGEMM copies a descriptor edited in shared memory into the global one). A TMA reads
// its tensor map through the tensormap proxy when it is issued and until it completes, so an
// update must not overlap a TMA of the map in flight, and a TMA after it must be ordered after
// it by fence.proxy.tensormap::generic.release (the updater), happens-before, and
// fence.proxy.tensormap::generic.acquire of the map (the TMA's issuer): verifier/tensormap.h.
struct TensormapReplace {
  uint32_t tensor_map = 0;
};

// Alternatives are appended only (the index is the encoded op kind, sim/ir/encoding.h).
using Op = std::variant<MbarrierInit, MbarrierInval, MbarrierArrive, MbarrierExpectTx,
                        MbarrierCompleteTx, MbarrierWait, TmaLoad, TmaStore, BulkLoad, BulkStore,
                        BulkCommit, BulkWait, CpAsync, CpAsyncCommit, CpAsyncWait,
                        CpAsyncMbarrierArrive, StAsync, Fence, ClusterArrive, ClusterWait,
                        NamedBarrier, BufferAccess, Exit, MbarrierPendingCount, GlobalReadback,
                        GridDepControl, GlobalAccess, TensormapReplace>;

// ---------------------------------------------------------------------------------------------
// Statements.
struct Stmt;
using Block = std::vector<Stmt>;

struct Let { uint32_t var = 0; ExprId value = kNoExpr; };     // let x = e (also reassignment)
struct For {                                                 // for v in lo .. hi [step s] { }
  uint32_t var = 0;
  ExprId lo = kNoExpr, hi = kNoExpr, step = kNoExpr;         // hi exclusive; step default 1
  // `while cond bound hi { }` when set: `var` is the loop's own pass counter (lo = 0, no step),
  // each pass first tests `cond` (false: leave) and then the counter against the bound `hi`
  // (reached with `cond` still true: the run stops, engine.while-bound). A while is a For so
  // that every walk of the statement tree that visits loop bodies visits its body too.
  ExprId cond = kNoExpr;
  Block body;
};
struct If { ExprId cond = kNoExpr; Block then_body; Block else_body; };
struct Break {};                                             // leaves the innermost for/while
// `assert EXPR [-- message]`: Program::assertions[id] (kind kAssert) must hold whenever the agent
// reaches it. A statement, not an Op: it reads the model's state and changes none, is checked in
// the same step as the agent's next operation (the state it sees is one the agent's next step
// may start from), and has no instruction on the GPU.
struct Assert { uint32_t id = 0; };

struct Stmt {
  std::variant<Let, For, If, Op, Break, Assert> node;
  SourceLocation where;
};

// `role consumer count 2 threads 128 { ... }`: `count` agents in every CTA (optionally only in
// CTAs where `when` holds), each standing for `threads` threads acting together.
struct Role {
  std::string name;
  ExprId count = kNoExpr;    // agents per CTA (default 1)
  ExprId threads = kNoExpr;  // threads per agent (default 1: an elected thread)
  ExprId when = kNoExpr;     // optional: only in CTAs where this holds
  // Which grid runs the role: 0 the schedule's own grid (the last one launched), g >= 1 the grid
  // launched g launches before it (Program::primaries[g - 1]; a role inside a `primary` block).
  uint8_t grid = 0;
  uint32_t num_vars = 0;     // variable slots used by the body (lets, loops, tokens)
  std::vector<std::string> var_names;  // slot -> name, for diagnostics and the printer
  Block body;
  SourceLocation where;
};

// `global OUT[TILES] bytes N` : global memory, `slots` slots of `bytes` each, one instance for the
// whole launch (both grids of a programmatic dependent launch see the same bytes).
struct GlobalDecl {
  std::string name;
  ExprId slots = kNoExpr;
  ExprId bytes = kNoExpr;
  SourceLocation where;
};

// A user assertion (docs/language.md, Assertions): an `assert` statement, or a top-level
// end-of-run property in herd7's sense: `forall` holds in the final state of every complete run,
// `exists` in the final state of at least one. A property is evaluated once per CTA of the grid
// (its builtins and state reads are that CTA's) and holds in a state when it holds for every CTA.
struct Assertion {
  enum class Kind : uint8_t { kAssert, kForall, kExists };
  Kind kind = Kind::kAssert;
  ExprId cond = kNoExpr;
  std::string text;     // the expression as written
  std::string message;  // after `--` (may be empty)
  SourceLocation where;
};

struct Program {
  std::string file;              // the path the program was read from
  std::string name;              // `schedule NAME` (default: file stem)
  ExprId cluster_m = kNoExpr;    // `cluster 2x2` (M = x, N = y)
  ExprId cluster_n = kNoExpr;
  ExprId clusters = kNoExpr;     // `clusters 66`: independent clusters in the grid (default 1)
  // `primary clusters 4 { role ... }` blocks: the earlier grids of a chain of programmatic
  // dependent launches, all of the schedule's cluster shape. primaries[g - 1] is grid g, the
  // grid launched g launches before the schedule's own (whose roles have `grid` g): grid 1 is
  // the own grid's prerequisite, grid g + 1 grid g's. The file declares them in launch order,
  // so the last `primary` block is grid 1. Empty: a single grid.
  struct PrimaryGrid {
    ExprId clusters = kNoExpr;
    SourceLocation where;
  };
  std::vector<PrimaryGrid> primaries;
  bool has_primary() const { return !primaries.empty(); }
  std::vector<Param> params;
  std::vector<BufferDecl> buffers;
  std::vector<BarrierDecl> barriers;
  std::vector<TensorMapDecl> tensor_maps;
  std::vector<GlobalDecl> globals;
  std::vector<NamedBarrierDecl> named_barriers;
  std::vector<Role> roles;
  std::vector<Expr> exprs;       // the expression arena
  // `assert` statements (ir::Assert::id) and top-level `forall` / `exists` properties.
  std::vector<Assertion> assertions;

  const Expr& expr(ExprId id) const { return exprs[id]; }
};

// Whether the program states any assertion, and whether any reads `landed`.
bool HasAssertions(const Program& p);
bool ReadsLanded(const Program& p);

// How reports name named barrier `id`: its declared name (`named_barrier q_empty = 3` gives
// "q_empty"), else the number ("3").
std::string NamedBarrierName(const Program& p, int64_t id);

// Whether two expressions are the same tree (so they evaluate equal for one agent at one time).
bool SameExpr(const Program& p, ExprId a, ExprId b);

// Values for the program's params: defaults overridden by -D NAME=VALUE. Unknown names are an
// error (rule "param.unknown") naming the parameter and the file. Params are bound in declaration
// order: an overridden param takes the given value, any other is its default_expr evaluated over
// the values bound so far (so derived defaults follow overrides). Evaluation errors (division by
// zero, overflow, shift count outside 0..63) are "param.eval".
Expected<std::vector<int64_t>> BindParams(const Program& program,
                                          const std::vector<std::pair<std::string, int64_t>>& overrides);

}  // namespace parity::ir

#endif  // PARITY_SIM_IR_IR_H_
