// The engine's compiled program (Engine::Code) and what its parts share: the flat
// instruction form, the agent status values, state-token encoding. Internal to sim/engine: the
// engine's translation units (create, state, execution, fingerprint) include it.
#ifndef PARITY_SIM_ENGINE_CODE_H_
#define PARITY_SIM_ENGINE_CODE_H_

#include <algorithm>
#include <cstdint>
#include <deque>
#include <string>
#include <variant>
#include <vector>

#include "sim/engine/control.h"
#include "sim/engine/engine.h"
#include "sim/model/tensor_map.h"
#include "sim/model/tma.h"

namespace parity::engine {

using trace::EventKind;
using trace::TraceEvent;

// ---------------------------------------------------------------------------------------------
// The compiled program.

namespace internal {

inline constexpr uint8_t kReady = 0, kBlocked = 1, kExited = 2;
inline constexpr uint32_t kNoGroups = 0xffffffffu;  // Code::group_state of an agent without one

// Content tags of the data tracked for `readback` (Code::tracks_data): the global memory's
// initial contents, data the model does not name, or 1 + the index in its CTA of the agent whose
// `write` the bytes are (the GPU runner's `write` data depends only on that and the offset).
inline constexpr uint16_t kDataInitial = 0;
inline constexpr uint16_t kDataOther = 0xffff;

// A state token in an agent variable: the phase number in bits 0..31 (what waits on a token
// read); a token of a .noComplete arrive also carries the pending count before the arrive in
// bits 32..51 and a flag in bit 52, which mbarrier.pending_count reads (sim/model/mbarrier.h
// MbarrierToken). Other tokens carry only the phase, so that two arrivals' tokens that differ
// only in a count nobody may read do not split equal states.
inline constexpr int kTokenCountShift = 32;
inline constexpr uint64_t kTokenNoCompleteBit = uint64_t{1} << 52;
inline int64_t EncodeToken(const model::MbarrierToken& t) {
  uint64_t v = t.phase;
  if (t.from_no_complete) {
    v |= (static_cast<uint64_t>(static_cast<uint32_t>(t.pending_count)) & 0xfffffu)
             << kTokenCountShift |
         kTokenNoCompleteBit;
  }
  return static_cast<int64_t>(v);
}
inline model::MbarrierToken DecodeToken(int64_t var) {
  const uint64_t v = static_cast<uint64_t>(var);
  model::MbarrierToken t;
  t.phase = static_cast<uint32_t>(v);
  t.from_no_complete = (v & kTokenNoCompleteBit) != 0;
  if (t.from_no_complete) t.pending_count = static_cast<int32_t>((v >> kTokenCountShift) & 0xfffffu);
  return t;
}

// Calls f(fn, decl, index expression) for every state read (ir::Expr::Kind::kState) in the
// expression tree `root` (an assertion's condition).
template <typename F>
void ForEachStateRead(const ir::Program& p, ir::ExprId root, F&& f) {
  if (root == ir::kNoExpr || root >= p.exprs.size()) return;
  const ir::Expr& x = p.exprs[root];
  if (x.kind == ir::Expr::Kind::kState) f(static_cast<ir::StateFn>(x.op), x.index, x.a);
  ForEachStateRead(p, x.a, f);
  ForEachStateRead(p, x.b, f);
  ForEachStateRead(p, x.c, f);
}

inline uint64_t SplitMix(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

}  // namespace internal
using namespace internal;  // NOLINT: the engine's own translation units only

struct Engine::Code {
  const ir::Program* program = nullptr;
  std::vector<int64_t> params;
  uint32_t cluster_m = 1, cluster_n = 1, cluster_size = 1, clusters = 1, num_ctas = 1;
  // Programmatic dependent launch (ir::Program::primaries): grid 0 is the schedule's own, grid g
  // the one launched g launches before it. Grid g's clusters are [grid_cluster[g],
  // grid_cluster[g + 1]) and its agents [grid_agent[g], grid_agent[g + 1]); the own grid comes
  // first. primary_cluster / primary_agent: where grid 1 starts (clusters / agents.size():
  // no primary grid). The prerequisite of grid g (what its griddepcontrol.wait waits for) is
  // grid g + 1, if there is one.
  uint32_t primary_cluster = 1, primary_agent = 0;
  std::vector<uint32_t> grid_cluster, grid_agent;
  bool has_primary() const { return primary_cluster < clusters; }
  uint32_t grids() const { return static_cast<uint32_t>(grid_cluster.size()) - 1; }
  std::vector<std::vector<Instr>> roles;  // per role
  // Assertions (ir::Program::assertions): some `landed` read (issues of copies into shared
  // memory then mark their issuer's groups object, Exec::ReadState), some `forall` property
  // (checked when a run completes, Exec::CheckForall).
  bool tracks_landed = false;
  bool has_forall = false;
  std::vector<uint8_t> role_solo_ok;       // per role: see Engine::AgentFuture
  // Per role: it issues a cp.async or bulk async-group operation (a TMA or bulk store, a commit,
  // a wait_group, cp.async.mbarrier.arrive). Only such roles' agents get an entry in Engine::cp_
  // and bulk_: the others' stay in the initial state, and the explorer copies every state it
  // steps, so per-agent states nobody uses would be copied (each a nested vector) for nothing.
  std::vector<uint8_t> role_groups;
  std::vector<uint32_t> group_state;        // per agent: its index in cp_ / bulk_, or kNoGroups
  std::vector<AgentInfo> agents;
  std::vector<ir::BuiltinValues> builtins;  // per agent
  std::vector<uint32_t> var_offset;         // per agent
  std::vector<uint32_t> cta_first_agent;    // per global CTA, plus one end entry
  std::vector<uint32_t> cluster_first_agent;  // per cluster, plus one end entry
  std::vector<uint32_t> barrier_base;       // per decl: first slot within a CTA
  std::vector<uint32_t> barrier_size;       // per decl
  uint32_t barriers_per_cta = 0;
  std::vector<int64_t> barrier_count;       // per global slot: the declared init count
  struct Buffer {
    uint32_t base = 0;   // shared address of slot 0
    uint32_t bytes = 0;  // per slot
    uint32_t stages = 0;
  };
  std::vector<Buffer> buffers;
  // `global` buffers (ir::GlobalDecl): one for the launch; only their sizes matter here.
  struct Global {
    int64_t slots = 0;
    int64_t bytes = 0;
  };
  std::vector<Global> globals;
  // Data tracking for `readback` (ir::GlobalReadback), on only when the program has one (every
  // other program runs, hashes and explores exactly as without it): a content tag per shared
  // buffer slot of every CTA and per global image of a buffer slot (grid-wide, as the GPU
  // runner's one bulk global). Slot k of buffer decl b is global slot index buffer_slot_base[b]+k.
  bool tracks_data = false;
  std::vector<uint32_t> buffer_slot_base;  // per buffer decl
  uint32_t buffer_slots = 0;               // slots of all buffer decls
  struct Map {
    model::TensorMap map;
    uint32_t box_bytes = 0;
    // The model's ValidateTmaSharedAddress answer per 128-byte-granular shared address
    // (0 unknown, 1 ok, 2 rejected: ask again for the Status). Other addresses always ask.
    mutable std::vector<uint8_t> smem_ok;
  };
  std::vector<Map> maps;
  // Agent-invariant expressions (no variable reference: params, builtins, constants) are
  // evaluated once per agent at Create: static_slot[expr] is the column in static_values (one
  // row of num_static values per agent) or -1; static_ok says the evaluation succeeded (a fault
  // is re-raised by evaluating at run time, with its location).
  std::vector<int32_t> static_slot;
  // Per expression, how the hot path evaluates it without the tree walker.
  struct FastExpr {
    // kBinary: a binary operator whose result the engine computes inline from its two operands
    // (each again a FastExpr); anything that could fault (overflow, division by zero) falls back
    // to ir::EvalFast, which reports it.
    enum Class : uint8_t { kConst, kVar, kStatic, kBinary, kGeneral };
    Class cls = kGeneral;
    uint8_t op = 0;     // kBinary: ir::BinaryOp
    uint32_t arg = 0;   // kVar: slot; kStatic: column
    int64_t value = 0;  // kConst
    ir::ExprId a = ir::kNoExpr, b = ir::kNoExpr;  // kBinary operands
  };
  std::vector<FastExpr> fast;
  uint32_t num_static = 0;
  std::vector<int64_t> static_values;
  std::vector<uint8_t> static_ok;
  // Multicast destinations by 16-bit mask, as the model answered (filled on first use).
  // (The index is a flat 64K table so the hot path is one load; std::deque keeps the answers
  // at stable addresses.)
  mutable std::vector<int32_t> multicast_index;
  mutable std::deque<Expected<std::vector<uint32_t>>> multicast;
};

// AgentState::gen values: numbers never used before by any engine on any thread (create.cc).
uint64_t NextAgentGen();

}  // namespace parity::engine

#endif  // PARITY_SIM_ENGINE_CODE_H_
