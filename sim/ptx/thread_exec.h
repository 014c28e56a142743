// Concrete execution of one thread's control skeleton over the PTX IR (sim/ptx/ptx.h): the first
// step of `parity import` (issue 28). Thread and block indices, cluster rank, the scalar kernel
// arguments and the given fields of by-value struct parameters are concrete; data loaded from
// memory is unknown. The lanes of a warp run together, so that warp-collective instructions
// (shfl.sync, vote.sync, match.sync, redux.sync, activemask, elect.sync) compute their values
// from the lanes' own operands (RunWarp). Integer arithmetic, compares,
// selects and branches are evaluated; shared-memory addresses keep their symbol (a static
// `.shared` array or the extern dynamic segment) plus a concrete byte offset, so that barriers and
// buffers can be recovered later. Every protocol instruction the thread issues (mbarrier.*,
// cp.async*, st.async, fences, bar/barrier, elect.sync) is recorded with its operands' values;
// a wait's predicate is taken as satisfied (the schedule's `wait` blocks until it is).
//
// A branch whose predicate depends on unknown data is `import.unsupported-control` at the PTX
// line, naming where the data comes from: the importer cannot follow it. When it comes from a
// kernel parameter nobody gave, the rule is `import.missing-arg` (a scalar) or
// `import.missing-param` (a field of a by-value struct), naming the field's offset and width and
// the PTX and CUDA lines of the load.
#ifndef PARITY_SIM_PTX_THREAD_EXEC_H_
#define PARITY_SIM_PTX_THREAD_EXEC_H_

#include <array>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "sim/common/status.h"
#include "sim/ptx/ptx.h"

namespace parity::ptx {

class ImportMemory;  // cta_memory.h

struct Value {
  // kDerived: an unknown value computed from a shared address (a wgmma matrix descriptor packs
  // the address with layout bits); it keeps the address it came from so that the operand of a
  // wgmma can be traced back to the buffer it reads. It is never used as an address or a number.
  enum class Kind { kUnknown, kInt, kAddress, kDerived };
  Kind kind = Kind::kUnknown;
  // kInt: the bits; kAddress / kDerived: the byte offset from `symbol`.
  uint64_t bits = 0;
  // kAddress: a .shared variable, the extern dynamic segment, or a kernel parameter's name.
  // kUnknown: where the value comes from, for messages ("" when nothing useful is known); a
  // kernel parameter nobody gave starts with "param:".
  std::string symbol;
  // kDerived: the value's low bits hold the address shifted right by `shift` (a wgmma matrix
  // descriptor's start-address field is address >> 4), so adding k to it moves the address by
  // k << shift bytes (a stage's descriptor is the first stage's plus stage * bytes / 16); -1
  // when the relation is not known.
  int shift = -1;

  static Value Unknown() { return {}; }
  static Value Int(uint64_t v) { return {Kind::kInt, v, "", -1}; }
  static Value Address(std::string sym, uint64_t offset) {
    return {Kind::kAddress, offset, std::move(sym), -1};
  }
  static Value Derived(std::string sym, uint64_t offset, int shift = -1) {
    return {Kind::kDerived, offset, std::move(sym), shift};
  }
  bool operator==(const Value&) const = default;
  std::string ToString() const;
};

struct ThreadContext {
  std::array<uint32_t, 3> tid = {0, 0, 0};
  std::array<uint32_t, 3> ntid = {1, 1, 1};
  std::array<uint32_t, 3> ctaid = {0, 0, 0};
  std::array<uint32_t, 3> nctaid = {1, 1, 1};
  uint32_t cluster_ctarank = 0;
  uint32_t cluster_nctarank = 1;
  // %cluster_ctaid / %cluster_nctaid (the CTA's position in its cluster and the cluster's shape)
  // and %clusterid / %nclusterid (the cluster's position in the grid of clusters).
  std::array<uint32_t, 3> cluster_ctaid = {0, 0, 0};
  std::array<uint32_t, 3> cluster_nctaid = {1, 1, 1};
  std::array<uint32_t, 3> clusterid = {0, 0, 0};
  std::array<uint32_t, 3> nclusterid = {1, 1, 1};
  // Scalar kernel arguments by parameter index (the bits of an integer or pointer argument).
  std::map<int, uint64_t> args;
  // Fields of by-value parameters (a struct passed as `.param .b8 p[N]`): (parameter name, byte
  // offset in it) -> the bits; an ld.param at that offset reads them at its own width.
  std::map<std::pair<std::string, uint64_t>, uint64_t> params;
  // When set, every (parameter name, byte offset) a load reads is added here (an option that
  // gives a field nothing reads is reported rather than ignored).
  std::set<std::pair<std::string, uint64_t>>* param_reads = nullptr;
  // The whole parameter space as a recorded launch passed it (`parity import --launch`, the bytes
  // cuLaunchKernel copied): a load that no --arg or --param gives reads its bytes from here,
  // little-endian. Null: no launch.
  const std::vector<uint8_t>* param_image = nullptr;
  // Steps before the run is refused (a loop whose bound is not what the importer thinks).
  int64_t max_steps = 1'000'000;
  // Also record generic-proxy shared-memory accesses (ld.shared, st.shared, ldmatrix, wgmma): the
  // importer turns them into `use` / `write`; thread classification leaves them out.
  bool record_shared_accesses = false;
  // When set, values written to memory that the control path reads back are followed
  // (cta_memory.h): a global word one thread updates with atom.global.add, a shared word a named
  // barrier orders. `unit` is the CTA's index among the simulated ones.
  ImportMemory* memory = nullptr;
  uint32_t unit = 0;
  // Run an instruction once for all the lanes of a warp when the registers it reads hold the same
  // value in each (warp_registers.h); off, every lane runs every instruction on its own (the
  // reference the lockstep runs are tested against).
  bool lockstep = true;
};

// One protocol instruction issued by the thread.
struct ProtocolEvent {
  int instruction = 0;  // index into Function::instructions
  // The value of each operand (an address operand's value is base + offset; a vector's elements
  // are flattened after it in `elements`).
  std::vector<Value> operands;
  std::vector<std::vector<Value>> elements;  // per operand: a vector's or an address's extras

  bool operator==(const ProtocolEvent&) const = default;
};

// Threads of one CTA that issue the same protocol events, in the same order, on the same
// operands: one behaviour (a candidate role of the imported schedule).
struct ThreadClass {
  std::vector<uint32_t> threads;  // linear thread indices, ascending
  std::vector<ProtocolEvent> events;
};

// Runs the lanes of warp `warp` of the CTA described by `cta` (its tid is ignored) together, to
// `ret`/`exit`, and returns each lane's protocol events in issue order. Warp-collective
// instructions (shfl.sync, vote.sync, match.sync, redux.sync, activemask, elect.sync) complete
// when every non-exited lane of their member mask has reached one with the same qualifiers and
// mask, and give each lane the value the PTX ISA defines from the lanes' operands (unknown where
// an operand is); lanes that cannot all complete are `import.unsupported-control`.
Expected<std::vector<std::vector<ProtocolEvent>>> RunWarp(const Module& module,
                                                          const Function& entry,
                                                          const ThreadContext& cta, uint32_t warp);

// Runs the warp of one thread of `entry` (RunWarp) and returns that thread's protocol events.
Expected<std::vector<ProtocolEvent>> RunThread(const Module& module, const Function& entry,
                                               const ThreadContext& ctx);

// Runs every thread of the CTA described by `cta` (its ntid; its tid is ignored) and groups the
// threads by their event streams, in order of each class's first thread. The first thread whose
// run fails fails the whole CTA.
Expected<std::vector<ThreadClass>> ClassifyThreads(const Module& module, const Function& entry,
                                                   const ThreadContext& cta);

// Barriers recovered from the mbarrier.init events of a CTA's threads: a barrier is identified by
// its shared address (symbol + offset); runs of barriers 8 bytes apart in one symbol with the
// same count become one array (a `full[STAGES]` ring).
struct BarrierArray {
  std::string name;    // the variable's source name, or the symbol and the first offset
  std::string symbol;  // the .shared variable or the extern dynamic segment
  uint64_t offset = 0;
  int size = 1;
  uint64_t count = 0;           // the arrival count of mbarrier.init
  std::vector<int> init_lines;  // PTX lines of the inits, one per element
};

// `import.unsupported-barrier` (at the init's PTX line) when an init's address or count is not
// known.
Expected<std::vector<BarrierArray>> RecoverBarriers(const Module& module, const Function& entry,
                                                    const std::vector<ThreadClass>& classes);

// The byte offset of each of `entry`'s parameters in the parameter space (the buffer a launch
// passes: parameters in order, each at its .align or natural alignment).
std::vector<uint64_t> ParamOffsets(const Function& entry);

// import.missing-param / import.missing-arg at `inst` when `v` is unknown because it was read from
// a kernel parameter nobody gave (`what` says what needed it: "the guard %p1", "operand 3");
// Ok otherwise.
Status MissingParameter(const std::string& path, const Instruction& inst, const std::string& what,
                        const Value& v);

// Whether an instruction belongs to the protocol the importer records.
bool IsProtocolInstruction(const Instruction& inst);
// ld.shared / st.shared (not st.async), ldmatrix, stmatrix, wgmma: the generic-proxy shared
// accesses recorded under ThreadContext::record_shared_accesses.
bool IsSharedAccess(const Instruction& inst);

}  // namespace parity::ptx

#endif  // PARITY_SIM_PTX_THREAD_EXEC_H_
