// The race oracle of the differential tests (issue 24, item 6): every interleaving of a small
// schedule as a path (no state caching, so every path is seen, not one per state), and on each
// path the data-race definition of verifier/races.h applied directly, written independently of
// verifier/happens_before.h: happens-before is reachability in an explicit graph over the
// trace's events (program order; every release of an mbarrier phase -> that phase's completion
// event -> every wait or successful test_wait that observes it; a copy's issue -> its delivery,
// which releases into the phase it lands in; the k-th barrier.cluster arrives -> the k-th waits;
// the arrivals of a named-barrier instance -> its bar.sync ends), found by a breadth-first
// search from each access, not by vector clocks. A phase completion event names the agent whose
// update completed it, but is not in that agent's program order: completing a phase acquires
// nothing (only a wait that observes it does).
//
// Accesses (as verifier/races.h defines them): `use` (read) and `write` of an agent, done at
// their event; a TMA / bulk load's write into each destination CTA, started at its issue and
// done for whoever observes the completion of the phase its bytes landed in, or a later phase
// of that slot; a TMA / bulk store's read of its source, started at its issue and done at the
// issuer's first cp.async.bulk.wait_group[.read] that covers its group. Byte ranges: exact, or a
// span (a `write` without `bytes`; a copy whose offset is not a constant): exact ranges overlap
// when they intersect, a span overlaps an exact range that covers it, spans are not compared.
// A race: two accesses of one (CTA, buffer, slot), overlapping, at least one a write, the later
// started not reachable from the earlier's completion. Schedules with cp.async or st.async are
// not compared (the generator writes none).
#ifndef PARITY_TESTS_VERIFIER_GEN_RACE_ORACLE_H_
#define PARITY_TESTS_VERIFIER_GEN_RACE_ORACLE_H_

#include <cstdint>
#include <set>
#include <span>
#include <tuple>
#include <vector>

#include "sim/engine/engine.h"
#include "sim/ir/ir.h"
#include "sim/trace/event.h"

namespace parity::gen {

// A race pair as the checker deduplicates it: (role, pc) of the earlier-started access, (role,
// pc) of the later one, buffer, slot.
using RacePair = std::tuple<uint32_t, uint32_t, uint32_t, uint32_t, uint32_t, uint32_t>;

// The race pairs of one run (the engine after it, with its trace).
std::set<RacePair> OracleRaces(const ir::Program& program, const engine::Engine& engine,
                               std::span<const trace::TraceEvent> trace);

// Whether the oracle covers the schedule (no cp.async, st.async).
bool OracleCovers(const ir::Program& program);

struct PathRaces {
  bool complete = true;  // false: more than max_paths paths
  uint64_t paths = 0;
  uint64_t racy_paths = 0;  // paths (of any outcome) with a race by the oracle
  // Paths on which the oracle's race pairs and verifier::CheckRaces' differ.
  uint64_t mismatches = 0;
  std::set<RacePair> first_oracle, first_checker;  // on the first mismatching path
  std::set<RacePair> all;  // the union over all paths (oracle)
  bool completed_racy = false;  // a completed run has a race
  bool bad_end = false;         // some run deadlocks, violates, or hits bad input
};

// Walks every path (depth first, no caching) of the schedule, up to max_paths; on each ended
// path compares OracleRaces with verifier::CheckRaces.
PathRaces AllPathRaces(const ir::Program& program, const std::vector<int64_t>& params,
                       uint64_t max_paths);

// The same comparison on `runs` runs of the random policy (seeds seed .. seed + runs - 1), for
// schedules with too many paths to walk: each run is one path.
PathRaces RandomRunRaces(const ir::Program& program, const std::vector<int64_t>& params,
                         uint64_t runs, uint64_t seed);

}  // namespace parity::gen

#endif  // PARITY_TESTS_VERIFIER_GEN_RACE_ORACLE_H_
