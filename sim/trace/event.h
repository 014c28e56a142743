// The one trace event record shared by the engine (sim/engine), the verifier and the GPU
// executor (gpu/). A fixed-width 32-byte POD so that a kernel can append it to a global-memory
// ring with plain stores and the host can read a trace file with one memcpy per record; the
// header is usable from nvcc (only <cstdint>, no std:: containers, no constructors).
//
// Field meaning by kind (unused fields are 0). "barrier" = (object, index) of a `barrier` array
// of the schedule in CTA `target_cta` of the cluster; "after" values are the mbarrier state right
// after the event (as the model computed it in the simulator; read back with mbarrier.test_wait
// or left 0 by the GPU executor where it cannot observe them).
//
//   kind              object/index        value            value2              phase / parity
//   kInit             barrier             init count       -                   0 / -
//   kInval            barrier             -                -                   -
//   kArrive           barrier             arrive count     pending after       phase after / -
//   kArriveExpectTx   barrier             arrive count     tx bytes added      phase after / -
//   kExpectTx         barrier             tx bytes         tx_count after      phase after / -
//   kCompleteTx       barrier             tx bytes         tx_count after      phase after / -
//   kWaitBegin        barrier             -                -                   phase now / parity waited
//   kWaitEnd          barrier             1 (success)      -                   phase now / parity waited
//   kTestWait         barrier             result 0/1       -                   phase now / parity
//   kPhaseComplete    barrier             completed phase number (low 32 bits) - new phase bit / -
//   kTmaIssue         tensor map / slot   box bytes        multicast mask      -
//   kTmaDeliver       barrier             bytes delivered  tx_count after      phase after / slot (kFlagSlot)
//   kTmaStoreIssue    tensor map / slot   box bytes        -                   -
//   kTmaStoreRead     buffer / slot       bytes            -                   (the source may be reused)
//   kTmaStoreWrite    buffer / slot       bytes            -                   (globally written)
//   kBulkIssue        buffer / slot       bytes            multicast mask (loads) -
//   kBulkCommit       -                   group number     groups pending      -
//   kBulkWaitBegin/End -                  N (pending allowed) read flag        -
//   kCpAsyncIssue     buffer / slot       bytes            -                   -
//   kCpAsyncComplete  buffer / slot       bytes            -                   -
//   kCpAsyncCommit    -                   group number     groups pending      -
//   kCpAsyncWaitBegin/End -               N                -                   -
//   kCpAsyncArrive    barrier             noinc (0/1)      -                   - (the deferred arrive
//                                                                                 is a later kArrive)
//   kStAsync          barrier             bytes            -                   - (issue; delivery is
//                                                                                 kCompleteTx)
//   kFence            fence kind (ir::Fence::Kind)         -                   -
//   kClusterArrive    -                   relaxed (0/1)    arrivals so far     -
//   kClusterWaitBegin/End -               -                -                   phase
//   kNamedBarrierArrive/SyncBegin/SyncEnd id / -  threads  threads arrived     -
//   kUse / kWrite     buffer / slot       bytes            offset              -
//   kExit             -                   -                -                   -
//   kWaitTimeout      barrier             -                -                   phase / parity (GPU:
//                                                                                 bounded wait trapped)
//   kViolation        barrier or object   violation code (model/codes.h)  detail  -
//   kPendingCount     - (0 / 0)           the count read   -                   - (mbarrier.pending_count
//                                                                                 of a state token)
//   kGlobalReadback   buffer / slot       class 0..3       bytes read          - (`readback`: the
//                                                                                 global destination of
//                                                                                 a bulk/TMA store region,
//                                                                                 ir::GlobalReadback)
//   kGridDepLaunch    -                   -                -                   - (griddepcontrol.
//                                                                                 launch_dependents)
//   kGridDepWait      -                   primary agents that exited  -        - (griddepcontrol.wait
//                                                                                 returns)
//   kGlobalUse / kGlobalWrite  global buffer / slot  bytes  offset            - (`use`/`write` of a
//                                                                                 `global` buffer)
//
// `time` is a logical clock in the simulator (one tick per event) and %clock64 (or %globaltimer)
// on the GPU. `pc` is the index of the agent instruction that caused the event (deliveries carry
// the issuing instruction), so that a report can point to the source line.
#ifndef PARITY_SIM_TRACE_EVENT_H_
#define PARITY_SIM_TRACE_EVENT_H_

#include <bit>
#include <cstddef>
#include <cstdint>

#include "sim/common/host_device.h"

namespace parity::trace {

// Numbered kinds: the numbers are part of the trace file format (never renumber; append).
enum class EventKind : uint8_t {
  kInit = 1,
  kInval = 2,
  kArrive = 3,
  kArriveExpectTx = 4,
  kExpectTx = 5,
  kCompleteTx = 6,
  kWaitBegin = 7,
  kWaitEnd = 8,
  kTestWait = 9,
  kPhaseComplete = 10,
  kTmaIssue = 11,
  kTmaDeliver = 12,
  kTmaStoreIssue = 13,
  kTmaStoreRead = 14,
  kTmaStoreWrite = 15,
  kBulkIssue = 16,
  kBulkCommit = 17,
  kBulkWaitBegin = 18,
  kBulkWaitEnd = 19,
  kCpAsyncIssue = 20,
  kCpAsyncComplete = 21,
  kCpAsyncCommit = 22,
  kCpAsyncWaitBegin = 23,
  kCpAsyncWaitEnd = 24,
  kCpAsyncArrive = 25,
  kStAsync = 26,
  kFence = 27,
  kClusterArrive = 28,
  kClusterWaitBegin = 29,
  kClusterWaitEnd = 30,
  kNamedBarrierArrive = 31,
  kNamedBarrierSyncBegin = 32,
  kNamedBarrierSyncEnd = 33,
  kUse = 34,
  kWrite = 35,
  kExit = 36,
  kWaitTimeout = 37,
  kViolation = 38,
  kBulkComplete = 39,  // a bulk copy (load or store) finished: value = bytes
  kPendingCount = 40,    // mbarrier.pending_count: value = the count
  kGlobalReadback = 41,  // `readback`: value = class 0..3 (ir::GlobalReadback)
  kGridDepLaunch = 42,   // griddepcontrol.launch_dependents (ir::GridDepControl)
  kGridDepWait = 43,     // griddepcontrol.wait returns
  kGlobalUse = 44,       // `use` of a global buffer (ir::GlobalAccess)
  kGlobalWrite = 45,     // `write` of a global buffer
  kTensormapReplace = 46,  // an update of tensor map `object` (ir::TensormapReplace)
};
inline constexpr uint8_t kFirstEventKind = 1;
inline constexpr uint8_t kLastEventKind = 46;

// Agent id used by events that no agent caused directly (deliveries carry the issuing agent).
inline constexpr uint16_t kNoAgent = 0xffff;

struct TraceEvent {
  uint64_t time;        // logical time (simulator) or clock64 (GPU)
  uint8_t kind;         // EventKind
  uint8_t flags;        // kind-specific bits (e.g. 1 = remote: target_cta != cta)
  uint16_t cluster;     // cluster id within the grid
  uint8_t cta;          // %cluster_ctarank of the agent that caused the event
  uint8_t target_cta;   // CTA whose object the event acts on (== cta when local)
  uint16_t agent;       // agent index within its CTA (all roles numbered in order), or kNoAgent
  uint16_t object;      // barrier / buffer / tensor map / named barrier id (by kind)
  uint16_t index;       // array element (barrier index, buffer slot)
  int32_t value;        // count, bytes, code (by kind)
  int32_t value2;       // second value (by kind)
  uint8_t phase;        // mbarrier phase bit after the event (by kind)
  uint8_t parity;       // parity waited on (by kind)
  uint16_t pc;          // instruction index of the agent (source line via the program)
};

// The layout is part of the trace file and of the GPU ring: every field at a fixed offset, no
// padding, so that the file reader, the GPU packing below and the writer agree on every ABI.
static_assert(sizeof(TraceEvent) == 32, "TraceEvent is part of the file and GPU ring format");
static_assert(offsetof(TraceEvent, time) == 0, "TraceEvent layout");
static_assert(offsetof(TraceEvent, kind) == 8, "TraceEvent layout");
static_assert(offsetof(TraceEvent, flags) == 9, "TraceEvent layout");
static_assert(offsetof(TraceEvent, cluster) == 10, "TraceEvent layout");
static_assert(offsetof(TraceEvent, cta) == 12, "TraceEvent layout");
static_assert(offsetof(TraceEvent, target_cta) == 13, "TraceEvent layout");
static_assert(offsetof(TraceEvent, agent) == 14, "TraceEvent layout");
static_assert(offsetof(TraceEvent, object) == 16, "TraceEvent layout");
static_assert(offsetof(TraceEvent, index) == 18, "TraceEvent layout");
static_assert(offsetof(TraceEvent, value) == 20, "TraceEvent layout");
static_assert(offsetof(TraceEvent, value2) == 24, "TraceEvent layout");
static_assert(offsetof(TraceEvent, phase) == 28, "TraceEvent layout");
static_assert(offsetof(TraceEvent, parity) == 29, "TraceEvent layout");
static_assert(offsetof(TraceEvent, pc) == 30, "TraceEvent layout");
#if !defined(__CUDA_ARCH__)
// The file format and the GPU ring are little-endian; PackTraceEvent's words match the struct's
// bytes only on a little-endian host (x86-64 and aarch64 Linux both are).
static_assert(std::endian::native == std::endian::little, "TraceEvent words are little-endian");
#endif

// A TraceEvent as eight 32-bit words (word k = bytes 4k..4k+3, little-endian): what a GPU agent
// builds in registers and writes to its ring with two 16-byte stores, without a byte-wise struct
// in local memory. Each field goes to the word and bit position of its offsetof above.
struct TraceEventWords {
  uint32_t w[8];
};

namespace internal {
// ORs `v` into the words at the field of byte offset kOffset and size kSize.
template <size_t kOffset, size_t kSize>
PARITY_HD constexpr void PutField(TraceEventWords& e, uint64_t v) {
  static_assert(kOffset + kSize <= sizeof(TraceEvent), "field inside the record");
  if constexpr (kSize == 8) {
    static_assert(kOffset % 8 == 0, "64-bit field on a 64-bit boundary");
    e.w[kOffset / 4] = static_cast<uint32_t>(v);
    e.w[kOffset / 4 + 1] = static_cast<uint32_t>(v >> 32);
  } else {
    static_assert(kOffset / 4 == (kOffset + kSize - 1) / 4, "a field within one word");
    constexpr uint32_t kMask = kSize == 4 ? 0xffffffffu : (1u << (8 * kSize)) - 1u;
    e.w[kOffset / 4] |= (static_cast<uint32_t>(v) & kMask) << (8 * (kOffset % 4));
  }
}
}  // namespace internal

// The words of the TraceEvent with these fields (same order and meaning as the struct's).
PARITY_HD constexpr TraceEventWords PackTraceEvent(uint64_t time, EventKind kind, uint32_t flags,
                                                   uint32_t cluster, uint32_t cta,
                                                   uint32_t target_cta, uint32_t agent,
                                                   uint32_t object, uint32_t index, int32_t value,
                                                   int32_t value2, uint32_t phase, uint32_t parity,
                                                   uint32_t pc) {
  TraceEventWords e{};
#define PARITY_TRACE_PUT(field, v) \
  internal::PutField<offsetof(TraceEvent, field), sizeof(TraceEvent::field)>(e, v)
  PARITY_TRACE_PUT(time, time);
  PARITY_TRACE_PUT(kind, static_cast<uint32_t>(kind));
  PARITY_TRACE_PUT(flags, flags);
  PARITY_TRACE_PUT(cluster, cluster);
  PARITY_TRACE_PUT(cta, cta);
  PARITY_TRACE_PUT(target_cta, target_cta);
  PARITY_TRACE_PUT(agent, agent);
  PARITY_TRACE_PUT(object, object);
  PARITY_TRACE_PUT(index, index);
  PARITY_TRACE_PUT(value, static_cast<uint32_t>(value));
  PARITY_TRACE_PUT(value2, static_cast<uint32_t>(value2));
  PARITY_TRACE_PUT(phase, phase);
  PARITY_TRACE_PUT(parity, parity);
  PARITY_TRACE_PUT(pc, pc);
#undef PARITY_TRACE_PUT
  return e;
}

// Whether an event's (object, index) names an mbarrier of CTA target_cta (the table above).
inline constexpr bool NamesMbarrier(uint8_t kind) {
  switch (static_cast<EventKind>(kind)) {
    case EventKind::kInit:
    case EventKind::kInval:
    case EventKind::kArrive:
    case EventKind::kArriveExpectTx:
    case EventKind::kExpectTx:
    case EventKind::kCompleteTx:
    case EventKind::kWaitBegin:
    case EventKind::kWaitEnd:
    case EventKind::kTestWait:
    case EventKind::kPhaseComplete:
    case EventKind::kTmaDeliver:
    case EventKind::kBulkComplete:  // emitted for bulk loads only: their delivery
    case EventKind::kCpAsyncArrive:
    case EventKind::kStAsync:
    case EventKind::kWaitTimeout:
      return true;
    default:
      return false;
  }
}

// Whether an event begins / ends a blocking wait of its agent (an mbarrier wait, a bulk or
// cp.async group wait, a cluster barrier wait, a named barrier's bar.sync).
inline constexpr bool IsWaitBegin(uint8_t kind) {
  switch (static_cast<EventKind>(kind)) {
    case EventKind::kWaitBegin:
    case EventKind::kBulkWaitBegin:
    case EventKind::kCpAsyncWaitBegin:
    case EventKind::kClusterWaitBegin:
    case EventKind::kNamedBarrierSyncBegin:
      return true;
    default:
      return false;
  }
}
inline constexpr bool IsWaitEnd(uint8_t kind) {
  switch (static_cast<EventKind>(kind)) {
    case EventKind::kWaitEnd:
    case EventKind::kBulkWaitEnd:
    case EventKind::kCpAsyncWaitEnd:
    case EventKind::kClusterWaitEnd:
    case EventKind::kNamedBarrierSyncEnd:
      return true;
    default:
      return false;
  }
}

inline constexpr uint8_t kFlagRemote = 1;      // the event acts on another CTA's object
inline constexpr uint8_t kFlagMulticast = 2;   // part of a multicast (TMA, bulk, masked arrive)
// A load's delivery (kTmaDeliver, a bulk load's kBulkComplete) names the buffer slot its bytes
// landed in, in `parity` (which deliveries do not otherwise use). Copies of one instruction in
// flight together can complete in any order, so without it a reader cannot tell which slot a
// delivery filled. Traces without the flag (older ones, GPU traces) leave the reader to infer it.
inline constexpr uint8_t kFlagSlot = 4;
inline constexpr uint64_t kMaxEventSlot = 255;  // slots above this are not named
// An arrive (kArrive, kArriveExpectTx) or a wait (kWaitEnd, kTestWait) with .relaxed semantics,
// and with .cluster scope (ir::MemSem, ir::MemScope); without them, PTX's defaults
// .release/.acquire and .cta.
inline constexpr uint8_t kFlagRelaxed = 8;
inline constexpr uint8_t kFlagScopeCluster = 16;
// A delivery (kTmaDeliver, kBulkComplete) that credits only part of its copy's bytes: the tx-count
// it met was smaller than the copy, and the rest of the same copy lands later in a delivery of
// its own (engine::EngineOptions::tx_pieces).
inline constexpr uint8_t kFlagPiece = 32;
// A kWrite of `red` / `atom` (ir::BufferAccess::atomic): an atomic read-modify-write, which does
// not race with another atomic of the same bytes (verifier/races.cc).
inline constexpr uint8_t kFlagAtomic = 64;
PARITY_HD constexpr uint8_t OrderFlags(bool relaxed, bool cluster) {
  return static_cast<uint8_t>((relaxed ? kFlagRelaxed : 0) | (cluster ? kFlagScopeCluster : 0));
}

}  // namespace parity::trace

#endif  // PARITY_SIM_TRACE_EVENT_H_
