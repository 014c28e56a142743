// The work of the run checkers (protocol rules, races, lifetime, happens-before), counted in
// operations: one per step of every loop whose length depends on the run (a witness recorded
// or tested, an access or pair visited, an observation, a copy in flight scanned, a clock
// component joined). Per thread, so that a search's workers do not share a cache line; nothing
// but tests reads it (tests/verifier/check_work_test.cc: the work grows near-linearly with the
// run's events), since wall-clock time is no test's to assert.
#ifndef PARITY_VERIFIER_CHECK_WORK_H_
#define PARITY_VERIFIER_CHECK_WORK_H_

#include <cstdint>

namespace parity::verifier {

inline thread_local uint64_t check_work_ops = 0;

inline void CountWork(uint64_t ops = 1) { check_work_ops += ops; }

}  // namespace parity::verifier

#endif  // PARITY_VERIFIER_CHECK_WORK_H_
