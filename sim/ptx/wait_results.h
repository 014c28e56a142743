// Whether the result of an mbarrier.try_wait / test_wait decides anything.
//
// The importer models a try_wait as the blocking `wait` of the schedule language: the code around
// it retries until the phase completes (a spin loop on the predicate, or CUTLASS's
// `consumer_try_wait` token followed by `if (token == WaitAgain) wait(phase)`,
// include/cutlass/pipeline/sm90_pipeline.hpp). That holds only if the result decides something.
// A try_wait whose result no branch reads (the retry removed) is a probe: PTX lets it return
// false (PTX ISA, mbarrier.test_wait / try_wait: "potentially blocking ... returns false on
// timeout"), and nothing then orders what follows after the phase. Modelling it as a wait would
// hide the race; dropping it keeps the model sound (its ordering is only ever missing).
#ifndef PARITY_SIM_PTX_WAIT_RESULTS_H_
#define PARITY_SIM_PTX_WAIT_RESULTS_H_

#include <vector>

#include "sim/ptx/ptx.h"

namespace parity::ptx {

// Per instruction of `f`: false for an mbarrier.try_wait / test_wait whose result predicate (and
// the registers computed from it: selp, setp, mov, logic) reaches no guard of an instruction, no
// store and no call on any path before it is overwritten or the thread exits; true for every
// other instruction. Where the search gives up (too long a path) the result counts as read.
std::vector<bool> WaitResultsRead(const Function& f);

}  // namespace parity::ptx

#endif  // PARITY_SIM_PTX_WAIT_RESULTS_H_
