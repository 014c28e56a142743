// Chrome / Perfetto trace-event JSON of a trace file (the "JSON Array/Object format" that
// ui.perfetto.dev and chrome://tracing open): one process per CTA ("cluster C CTA R"), one thread
// (lane) per agent, and per CTA one lane for asynchronous copies in flight.
//   - instant events ("ph":"i") for arrives, expect_tx/complete_tx, phase completions, issues,
//     commits, fences, exits, violations and wait timeouts;
//   - duration slices ("ph":"X") for waits (kWaitBegin .. kWaitEnd, also cluster/named barrier
//     and async-group waits) on the agent's lane, and for TMA/bulk flights (issue .. delivery, one
//     slice per destination CTA) on the destination CTA's "async copies" lane;
//   - counters ("ph":"C") per barrier element: completed phases, after each kPhaseComplete.
// Timestamps: the trace's `time` relative to its first event, as microseconds in the JSON (the
// simulator's logical ticks or the GPU's clock64 cycles: one unit = one tick/cycle).
#ifndef PARITY_SIM_TRACE_PERFETTO_H_
#define PARITY_SIM_TRACE_PERFETTO_H_

#include <string>

#include "sim/trace/trace_file.h"

namespace parity::trace {

// The JSON text ({"traceEvents": [...], "displayTimeUnit": "ns", "otherData": {...}}).
std::string ExportPerfettoJson(const TraceFile& trace);

// The tid of an agent's lane and of the per-CTA async-copy lane (agents are numbered from 0).
inline constexpr int kAsyncLaneTid = 100000;
inline int AgentLaneTid(int agent) { return agent + 1; }
// The pid of a CTA's process.
inline int CtaPid(int cluster, int cta) { return cluster * 256 + cta + 1; }

}  // namespace parity::trace

#endif  // PARITY_SIM_TRACE_PERFETTO_H_
