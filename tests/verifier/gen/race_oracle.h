// The race oracle of the differential tests (issue 24, item 6): every interleaving of a small
// schedule as a path (no state caching, so every path is seen, not one per state), and on each
// path the data-race definition of verifier/races.h applied directly, written independently of
// verifier/happens_before.h: happens-before is reachability in an explicit graph over the
// trace's events, found by a search from each access, not by vector clocks. Edges: program
// order; every release into an mbarrier phase -> every acquire that observes the phase's
// completion (a wait or successful test_wait; a .relaxed one acquires at its agent's next
// fence.acq_rel), where a release is a .release arrive or arrive.expect_tx, or for a .relaxed
// update (arrive.relaxed, and expect_tx / complete_tx, which PTX makes .relaxed) the agent's
// last fence.acq_rel before it; the edge is weak when the two are in different CTAs and not both
// .cluster-scoped (it orders reads and asynchronous copy writes, not generic writes: P2013);
// the phase's completion event -> its acquires (for the copies whose bytes completed on it);
// the k-th barrier.cluster arrives (.release, or a fence.acq_rel.cluster before a .relaxed one)
// -> the k-th waits; the arrivals of a named-barrier instance -> its bar.sync ends. A copy's
// delivery publishes nothing of its issuer (PTX ISA 8.9.1.1). A phase completion event names
// the agent whose update completed it, but is not in that agent's program order: completing a
// phase acquires nothing (only a wait that observes it does).
//
// Accesses (as verifier/races.h defines them): `use` (read) and `write` of an agent, done at
// their event; a TMA / bulk load's write into each destination CTA and an st.async's write into
// its CTA, started at their issue and done for whoever observes the completion of the phase
// their bytes landed in, or a later phase of that slot; a cp.async's write (generic proxy),
// started at its issue and done at its issuer's first cp.async.wait_group / wait_all that
// covers its group, and for observers of the phase in which a later cp.async.mbarrier.arrive of
// its issuer landed (or a later one); a TMA / bulk store's read of its source, started at its
// issue and done at the issuer's first cp.async.bulk.wait_group[.read] that covers its group.
// Byte ranges are the oracle's own: it runs each agent's program itself (loops, lets and
// conditions over params, builtins and loop indices) and evaluates every buffer operand there,
// so that a loop-indexed stage offset `tile[0] + (k % 2) * 128` is the bytes of that iteration;
// an access event that is not the next buffer operation of that run is a disagreement, reported
// as a mismatch. No span or "compared only when covered" rule: ranges overlap when they
// intersect. A landing (a delivery, an st.async's complete-tx, a cp.async.mbarrier.arrive's
// arrive) is matched with the operation whose issuer, slot and offset the engine says landed
// (Engine::trace_places: which of the operations in flight a step completed is the engine's
// choice) and must be one the oracle issued. A race: two accesses of one (CTA, buffer, slot),
// overlapping, at least one a write, the later started not reachable from the earlier's
// completion (through strong edges only, for a generic write). Schedules whose buffers alias
// are not compared.
#ifndef PARITY_TESTS_VERIFIER_GEN_RACE_ORACLE_H_
#define PARITY_TESTS_VERIFIER_GEN_RACE_ORACLE_H_

#include <cstdint>
#include <set>
#include <span>
#include <string>
#include <tuple>
#include <vector>

#include "sim/engine/engine.h"
#include "sim/ir/ir.h"
#include "sim/trace/event.h"

namespace parity::gen {

// A race pair as the checker deduplicates it: (role, pc) of the earlier-started access, (role,
// pc) of the later one, buffer, slot.
using RacePair = std::tuple<uint32_t, uint32_t, uint32_t, uint32_t, uint32_t, uint32_t>;

// The race pairs of one run (the engine after it, with its trace). `problem`, if given, says
// where the trace and the oracle's own run of the program disagree (empty when they agree).
std::set<RacePair> OracleRaces(const ir::Program& program, const engine::Engine& engine,
                               std::span<const trace::TraceEvent> trace,
                               std::string* problem = nullptr);

// Whether the oracle covers the schedule (no buffer aliases another).
bool OracleCovers(const ir::Program& program);

struct PathRaces {
  bool complete = true;  // false: more than max_paths paths
  uint64_t paths = 0;
  uint64_t racy_paths = 0;  // paths (of any outcome) with a race by the oracle
  // Paths on which the oracle's race pairs and verifier::CheckRaces' differ.
  uint64_t mismatches = 0;
  std::set<RacePair> first_oracle, first_checker;  // on the first mismatching path
  std::string problem;  // the first disagreement of the trace with the oracle's own run
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
