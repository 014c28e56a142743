// Chrome / Perfetto trace-event JSON of a trace file (the "JSON Object format" that
// ui.perfetto.dev and chrome://tracing open). One process per CTA ("cluster C CTA R"); in it,
// threads (lanes):
//   - one per agent, named from the schedule ("producer[0]"; "agent N" without names): waits as
//     duration slices ("ph":"X", begin .. end, "never ended" to the last event for a deadlock or
//     a hang), other events as instants ("ph":"i"), and a short slice at each remote arrive and
//     each copy issue, where flow arrows start;
//   - one per barrier element the trace touches ("full[0]"): its phases as slices
//     ("phase 3 (parity 1)", from the previous completion to this one) with arrivals, tx bytes and
//     completions as instants;
//   - "async copies #k": copies in flight (issue .. delivery) landing in this CTA, one slice per
//     destination CTA, spread over as many lanes as copies overlap (slices on one lane nest);
//   - "remote arrivals": a short slice where an arrive from another CTA lands.
// Counters ("ph":"C"): per barrier element, completed phases after each kPhaseComplete.
// Flows ("ph":"s" / "ph":"f", "bp":"e", one id each): from a remote arrive to where it lands, and
// from a copy's issue to each destination's flight (a multicast fans out to every CTA of its mask).
// Timestamps ("ts", "dur": microseconds in this format): simulator traces, one logical tick = 1
// µs; H100 traces, clock64 cycles / (SM clock in GHz x 1000), when the SM clock is known (the
// runner records it beside the trace, see SidecarClockGhz), else raw cycles (otherData.time_unit
// says which). Events are sorted by ts, so every lane's ts is non-decreasing.
#ifndef PARITY_SIM_TRACE_PERFETTO_H_
#define PARITY_SIM_TRACE_PERFETTO_H_

#include <map>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "sim/trace/trace_file.h"

namespace parity::trace {

// Names from the schedule (empty: numbered lanes "bar0[1]", "agent 2").
struct TraceNames {
  std::vector<std::string> barriers;     // by TraceEvent::object of barrier kinds
  std::vector<std::string> buffers;      // by object of buffer kinds
  std::vector<std::string> tensor_maps;  // by object of tma.issue / tma.store
  // (cluster, CTA rank, agent index in the CTA) -> "producer[0]".
  std::map<std::tuple<int, int, int>, std::string> agents;
};

struct PerfettoOptions {
  const TraceNames* names = nullptr;
  // H100 traces: the SM clock in GHz (clock64 cycles -> µs); 0 = unknown, ts stay in cycles.
  double clock_ghz = 0;
};

// Set (in memory only, never in a trace file) on events a replay inferred because the trace
// cannot record them (an H100 trace's phase completions and deliveries): args.inferred = true.
inline constexpr uint8_t kFlagInferred = 0x80;

// The JSON text ({"traceEvents": [...], "displayTimeUnit": "ns", "otherData": {...}}).
std::string ExportPerfettoJson(const TraceFile& trace, const PerfettoOptions& options = {});

// The SM clock the H100 runner records in a trace's sidecar (TRACE.agents, first line
// "# cta_global warp sm events dropped (clock 1.980 GHz)"); 0 when absent.
double SidecarClockGhz(std::string_view sidecar_text);

// The tids of a CTA's lanes (agents are numbered from 0).
inline constexpr int kAsyncLaneTid = 100000;   // + k: the k-th lane of copies in flight
inline constexpr int kRemoteLaneTid = 99999;   // remote arrivals landing in this CTA
inline constexpr int kBarrierLaneTid = 200000;  // + object * 4096 + index
inline int AgentLaneTid(int agent) { return agent + 1; }
inline int BarrierLaneTid(int object, int index) {
  return kBarrierLaneTid + object * 4096 + index;
}
// The pid of a CTA's process.
inline int CtaPid(int cluster, int cta) { return cluster * 256 + cta + 1; }

}  // namespace parity::trace

#endif  // PARITY_SIM_TRACE_PERFETTO_H_
