// Comparing two traces of one schedule (e.g. the simulator's and the H100's): the facts that
// must agree whatever the interleaving was, listed as differences.
//
// Compared (per cluster, CTA and agent; herdtools7-style, never across schedules):
//   - phase completions per mbarrier (kPhaseComplete events; only when both traces record them),
//   - each agent's program order: the sequence of operations it issued (kind, barrier or buffer,
//     target CTA, pc, and the count/bytes of arrives and copies) — wait results such as test_wait
//     outcomes depend on timing and are left out, as are the state fields the GPU cannot read,
//   - the bytes and destination CTAs of every copy: per issuing instruction (issuing CTA, pc),
//     the multiset of deliveries (target CTA, barrier/buffer, element, bytes),
//   - waits that never completed (agent, barrier, CTA, parity): the GPU's wait-timeout records,
//     and waits begun but never ended (a simulator trace that stops at a deadlock), so that a
//     simulated deadlock and an observed hang are held against each other.
// A trace recorded with a different schedule hash is refused (rule compare.hash-mismatch).
#ifndef PARITY_VERIFIER_COMPARE_H_
#define PARITY_VERIFIER_COMPARE_H_

#include <string>
#include <vector>

#include "sim/common/status.h"
#include "sim/trace/trace_file.h"

namespace parity::verifier {

struct CompareResult {
  std::vector<std::string> differences;  // one line each; empty: the traces agree
  std::vector<std::string> notes;        // what could not be compared and why
  // The aspects compared ("program order", ...) and those one trace does not record, so that
  // SAME names only what was actually held against each other.
  std::vector<std::string> compared;
  std::vector<std::string> not_compared;
  bool same() const { return differences.empty(); }
};

Expected<CompareResult> CompareTraces(const trace::TraceFile& a, const trace::TraceFile& b);

std::string FormatCompareResult(const CompareResult& result, const trace::TraceFile& a,
                                const trace::TraceFile& b);

}  // namespace parity::verifier

#endif  // PARITY_VERIFIER_COMPARE_H_
