// A generator mode for the differential tests of symmetry reduction (issue 26, item 1): small
// schedules whose warps of one role read `agent`, in ways that keep them interchangeable (stripe
// byte offsets, `if agent == 0` guards that split off one warp, the same value for several
// warps) and in ways that must not be merged (barrier indices, parities, loop trips and arrive
// counts that depend on the index, an index mixed with a loop variable, overlapping or
// out-of-slot offsets, another role reading part of a striped buffer). The same seed gives the
// same text on every platform (splitmix64).
#ifndef PARITY_TESTS_VERIFIER_GEN_SYMMETRY_GEN_H_
#define PARITY_TESTS_VERIFIER_GEN_SYMMETRY_GEN_H_

#include <cstdint>
#include <string>

namespace parity::gen {

// The schedule for `seed`, as `.pipe` text. Deterministic.
std::string GenerateSymmetrySchedule(uint64_t seed);

// The CTA mode: a cluster of 2 to 4 CTAs (a ring of 2, 3 or 4, or 2x2) whose agents read
// `cta_rank` in ways that keep CTAs interchangeable under rotations or reflections (ring
// neighbours as `@cta` targets and masks, stripes `cta_rank * 1024` of a buffer, local barriers)
// and in ways that must not be merged (`if cta_rank == 0`, `@cta(0)`, a parity, index or loop
// trip that the rank decides, overlapping stripes, a target two ranks away on a reflected ring).
std::string GenerateCtaSymmetrySchedule(uint64_t seed);

}  // namespace parity::gen

#endif  // PARITY_TESTS_VERIFIER_GEN_SYMMETRY_GEN_H_
