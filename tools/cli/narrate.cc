#include "tools/cli/narrate.h"

#include <sstream>

#include "sim/model/codes.h"
#include "sim/trace/trace_file.h"
#include "verifier/deadlock.h"

namespace parity::cli {
namespace {

using trace::EventKind;

std::string Who(const ir::Program& program, const engine::Engine& engine,
                const trace::TraceEvent& e) {
  if (e.agent == trace::kNoAgent) return "async";
  for (uint32_t a = 0; a < engine.num_agents(); ++a) {
    const engine::AgentInfo& info = engine.agent_info(a);
    if (info.cluster == e.cluster && info.cta == e.cta && info.index_in_cta == e.agent) {
      return verifier::AgentLabel(program, engine, a);
    }
  }
  return "CTA " + std::to_string(e.cta) + " agent " + std::to_string(e.agent);
}

std::string Bar(const ir::Program& program, const trace::TraceEvent& e) {
  return verifier::BarrierLabel(program, e.object, e.index, e.target_cta);
}

std::string Buf(const ir::Program& program, const trace::TraceEvent& e) {
  std::string name = e.object < program.buffers.size() ? program.buffers[e.object].name
                                                        : "buffer#" + std::to_string(e.object);
  return name + "[" + std::to_string(e.index) + "]";
}

std::string Tm(const ir::Program& program, const trace::TraceEvent& e) {
  return e.object < program.tensor_maps.size() ? program.tensor_maps[e.object].name
                                               : "tensormap#" + std::to_string(e.object);
}

// " multicast mask 0x.." for a multicast copy's issue (value2 holds the mask), else "".
std::string Multicast(const trace::TraceEvent& e) {
  if ((e.flags & trace::kFlagMulticast) == 0) return "";
  std::ostringstream os;
  os << " multicast mask 0x" << std::hex << e.value2;
  return os.str();
}

}  // namespace

std::string EventLine(const ir::Program& program, const engine::Engine& engine,
                      const trace::TraceEvent& e) {
  std::ostringstream os;
  os << Who(program, engine, e) << ": ";
  auto kind = static_cast<EventKind>(e.kind);
  switch (kind) {
    case EventKind::kInit:
      os << "init " << Bar(program, e) << " count " << e.value;
      break;
    case EventKind::kInval:
      os << "inval " << Bar(program, e);
      break;
    case EventKind::kArrive:
      os << "arrive " << Bar(program, e) << " count " << e.value << " -> pending " << e.value2;
      break;
    case EventKind::kArriveExpectTx:
      os << "arrive.expect_tx " << Bar(program, e) << " count " << e.value << ", +" << e.value2
         << " tx bytes";
      break;
    case EventKind::kExpectTx:
      os << "expect_tx " << Bar(program, e) << " +" << e.value << " bytes -> tx " << e.value2;
      break;
    case EventKind::kCompleteTx:
      os << "complete_tx " << Bar(program, e) << " -" << e.value << " bytes -> tx " << e.value2;
      break;
    case EventKind::kTmaDeliver:
      os << "TMA bytes land: complete_tx " << Bar(program, e) << " -" << e.value << " bytes";
      break;
    case EventKind::kWaitBegin:
      os << "wait " << Bar(program, e) << " parity " << int{e.parity}
         << " (the phase with that parity is not complete yet)";
      break;
    case EventKind::kWaitEnd:
      os << "wait " << Bar(program, e) << " parity " << int{e.parity} << " returns";
      break;
    case EventKind::kTestWait:
      os << "test_wait " << Bar(program, e) << " parity " << int{e.parity} << " = " << e.value;
      break;
    case EventKind::kPendingCount:
      os << "pending_count of a state token = " << e.value;
      break;
    case EventKind::kGlobalReadback:
      os << "readback of the bulk.store destination of " << Buf(program, e) << " = class "
         << e.value
         << (e.value == 0   ? " (initial contents)"
             : e.value == 1 ? " (this agent's write data)"
             : e.value == 2 ? " (a mix of old and new)"
                            : " (other data)");
      break;
    case EventKind::kPhaseComplete:
      os << "PHASE COMPLETE " << Bar(program, e) << ": phase " << e.value
         << " done, now parity " << int{e.phase};
      break;
    case EventKind::kTmaIssue:
      os << "tma.load " << Tm(program, e) << " (" << e.value << " bytes)";
      os << Multicast(e);
      break;
    case EventKind::kTmaStoreIssue:
      os << "tma.store " << Tm(program, e) << " (" << e.value << " bytes)";
      break;
    case EventKind::kUse:
      os << "use " << Buf(program, e) << " (" << e.value << " bytes)";
      break;
    case EventKind::kWrite:
      os << "write " << Buf(program, e) << " (" << e.value << " bytes)";
      break;
    case EventKind::kFence: {
      static const char* const kFences[] = {"fence.mbarrier_init.release.cluster",
                                             "fence.proxy.async.shared::cta",
                                             "fence.proxy.async.global", "fence.acq_rel.cluster"};
      os << (e.object < 4 ? kFences[e.object] : "fence");
      break;
    }
    case EventKind::kExit:
      os << "exit";
      break;
    case EventKind::kClusterArrive:
      os << "barrier.cluster.arrive" << (e.value ? ".relaxed" : "") << " (" << e.value2
         << " arrived)";
      break;
    case EventKind::kClusterWaitBegin:
      os << "barrier.cluster.wait (blocks until every agent of the cluster arrived)";
      break;
    case EventKind::kClusterWaitEnd:
      os << "barrier.cluster.wait returns";
      break;
    case EventKind::kTmaStoreRead:
      os << "TMA store has read its source " << Buf(program, e) << " (" << e.value
         << " bytes): the buffer may be written again";
      break;
    case EventKind::kTmaStoreWrite:
      os << "TMA store's " << e.value << " bytes from " << Buf(program, e)
         << " are written to global memory";
      break;
    case EventKind::kBulkIssue:
      os << "cp.async.bulk issued on " << Buf(program, e) << " (" << e.value << " bytes)";
      os << Multicast(e);
      break;
    case EventKind::kBulkComplete:
      os << "bulk copy bytes land: complete_tx " << Bar(program, e) << " -" << e.value
         << " bytes -> tx " << e.value2;
      break;
    case EventKind::kBulkCommit:
      os << "cp.async.bulk.commit_group (this agent's bulk group " << e.value << ")";
      break;
    case EventKind::kBulkWaitBegin:
      os << "cp.async.bulk.wait_group" << (e.value2 ? ".read " : " ") << e.value
         << " (waits until at most " << e.value << " of its bulk groups are still "
         << (e.value2 ? "reading their source" : "pending") << ")";
      break;
    case EventKind::kBulkWaitEnd:
      os << "cp.async.bulk.wait_group" << (e.value2 ? ".read " : " ") << e.value << " returns";
      break;
    case EventKind::kCpAsyncIssue:
      os << "cp.async -> " << Buf(program, e) << " (" << e.value << " bytes)";
      break;
    case EventKind::kCpAsyncComplete:
      os << "cp.async bytes land in " << Buf(program, e) << " (" << e.value << " bytes)";
      break;
    case EventKind::kCpAsyncCommit:
      os << "cp.async.commit_group (this agent's cp.async group " << e.value << ")";
      break;
    case EventKind::kCpAsyncWaitBegin:
      os << "cp.async.wait_group " << e.value << " (waits until at most " << e.value
         << " of its cp.async groups are pending)";
      break;
    case EventKind::kCpAsyncWaitEnd:
      os << "cp.async.wait_group " << e.value << " returns";
      break;
    case EventKind::kCpAsyncArrive:
      os << "cp.async.mbarrier.arrive" << (e.value ? ".noinc " : " ") << Bar(program, e)
         << " (the arrive happens once this agent's earlier cp.async copies have landed)";
      break;
    case EventKind::kStAsync:
      os << "st.async " << e.value << " bytes, complete_tx on " << Bar(program, e)
         << " when they land";
      break;
    case EventKind::kNamedBarrierArrive:
    case EventKind::kNamedBarrierSyncBegin:
      os << (kind == EventKind::kNamedBarrierArrive ? "bar.arrive " : "bar.sync ") << e.object
         << ", " << e.value << " threads";
      if (e.value2 == 0) {
        os << " (all arrived: the barrier completes)";
      } else {
        os << " (" << e.value2 << " of " << e.value << " arrived";
        if (kind == EventKind::kNamedBarrierSyncBegin) os << "; blocks until all have";
        os << ")";
      }
      break;
    case EventKind::kNamedBarrierSyncEnd:
      os << "bar.sync " << e.object << " returns";
      break;
    case EventKind::kWaitTimeout:
      os << "wait " << Bar(program, e) << " parity " << int{e.parity}
         << " timed out (the GPU's bounded wait gave up: the phase never completed)";
      break;
    case EventKind::kViolation: {
      model::Violation v{static_cast<model::Code>(e.value), e.value2, 0};
      os << "VIOLATION " << model::CodeId(v.code) << " " << model::CodeTitle(v.code);
      break;
    }
    default:
      os << trace::FormatEvent(e);
      break;
  }
  return os.str();
}

std::string NarrateEvent(const ir::Program& program, const engine::Engine& engine,
                         const trace::TraceEvent& e) {
  std::ostringstream os;
  os << EventLine(program, engine, e);
  auto kind = static_cast<EventKind>(e.kind);
  switch (kind) {
    case EventKind::kInit:
      os << "\n      phase 0 begins (parity 0): it completes after " << e.value
         << " arrivals and once the tx-count is back to 0. A wait for parity 1 passes at once "
            "(it asks about the phase before phase 0).";
      break;
    case EventKind::kArrive:
    case EventKind::kArriveExpectTx:
      if (kind == EventKind::kArriveExpectTx) {
        os << "\n      expect_tx raises the tx-count by " << e.value2
           << " bytes first, then the arrive lowers the pending count by " << e.value << ".";
      } else if (e.value2 == 0) {
        os << "\n      pending count reached 0: the phase completes as soon as the tx-count is 0.";
      } else {
        os << "\n      " << e.value2 << " more arrivals needed in this phase.";
      }
      break;
    case EventKind::kTmaDeliver:
    case EventKind::kCompleteTx:
      os << "\n      the copy's bytes are credited to the barrier (complete_tx); the phase can "
            "only complete when every expected byte has landed.";
      break;
    case EventKind::kPhaseComplete:
      os << "\n      why: the pending count reached 0 and the tx-count is 0. The phase bit flips to "
         << int{e.phase} << "; waiters for parity " << (1 - e.phase)
         << " are released, and the pending count is reset to the expected count.";
      break;
    case EventKind::kWaitBegin:
      os << "\n      the agent spins in try_wait until that phase completes.";
      break;
    case EventKind::kCpAsyncCommit:
    case EventKind::kBulkCommit:
      os << "\n      every copy this agent issued since its last commit forms one group; a later "
            "wait_group N waits until at most the N newest groups are pending.";
      break;
    case EventKind::kCpAsyncWaitEnd:
      os << "\n      the copies of every older group have landed and are visible to this agent; "
            "other agents see them only after a barrier (e.g. bar.sync).";
      break;
    case EventKind::kBulkWaitEnd:
      os << (e.value2 ? "\n      .read: the older groups have finished reading their sources (which "
                        "may now be overwritten); their writes may still be in flight."
                      : "\n      the older groups are complete: their writes are done.");
      break;
    case EventKind::kCpAsyncArrive:
      os << (e.value ? "\n      .noinc: the arrive counts toward the barrier's expected count "
                       "(the init count must include it)."
                     : "\n      without .noinc the pending count is raised by one now and lowered "
                       "by the arrive later: it does not count toward the init count.");
      break;
    case EventKind::kStAsync:
      os << "\n      the bytes go to the target CTA's shared memory; its barrier must expect them "
            "(expect_tx) in the same phase; if they land first, its tx-count is negative until "
            "the expect_tx.";
      break;
    case EventKind::kNamedBarrierSyncBegin:
    case EventKind::kNamedBarrierArrive:
      os << "\n      bar.sync waits until the barrier's thread count has arrived; bar.arrive "
            "arrives without waiting.";
      break;
    default:
      break;
  }
  return os.str();
}

std::string BehaviourPrefix(const ir::Program& program, const engine::Engine& engine,
                            size_t max_events) {
  const auto& t = engine.trace();
  size_t first = (max_events == 0 || t.size() <= max_events) ? 0 : t.size() - max_events;
  std::ostringstream os;
  if (first > 0) {
    os << "  ... " << first << " earlier events (--full prints all)\n";
  }
  for (size_t i = first; i < t.size(); ++i) {
    os << "  " << (i + 1) << ". " << EventLine(program, engine, t[i]) << "\n";
  }
  return os.str();
}

}  // namespace parity::cli
