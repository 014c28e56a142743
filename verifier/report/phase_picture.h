// The phase picture (`parity explain FILE --html OUT`, `parity replay FILE TRACE --html OUT`):
// one self-contained HTML page (inline SVG and CSS, a few lines of inline script, nothing
// fetched) that draws a run on an axis of events:
//   - a lane per (CTA, barrier element): its phases as segments labelled with their number and
//     parity and their counts as text (arrivals received/expected, tx bytes outstanding),
//     arrivals and tx bytes as they accumulate (marks and a step line per phase), and each
//     completion; a lane per (CTA, named barrier) used by bar.sync / bar.arrive, by its
//     declared name, with its instances and threads arrived;
//   - a lane per agent: its waits (returned at once / blocked then released / blocked forever),
//     each naming the phase it observed or waits for and linked to that phase's box (a wait
//     blocked forever by a red link, and named on the barrier's lane), and its uses of buffers
//     and other operations;
//   - arrows: a TMA or bulk copy from its issue to its delivery on the destination barrier (a
//     multicast fans out to every destination CTA), a remote arrive from the arriving agent to
//     the other CTA's barrier;
//   - hovering any element shows its `parity explain` narration (SVG <title>); hovering or
//     clicking a wait highlights its phase and lane, and a phase the waits on it;
//   - after a deadlock, the blocked waits and the barrier of the most likely cause highlighted
//     (the red lane is the object the headline names).
// The drawing scales to the page's width (no sideways scroll but for very long runs).
// Names are the schedule's (full[0], producer[0]).
#ifndef PARITY_VERIFIER_REPORT_PHASE_PICTURE_H_
#define PARITY_VERIFIER_REPORT_PHASE_PICTURE_H_

#include <cstddef>
#include <string>
#include <vector>

#include "sim/engine/engine.h"
#include "sim/ir/ir.h"
#include "sim/trace/event.h"
#include "verifier/deadlock.h"

namespace parity::report {

struct PictureInput {
  const ir::Program* program = nullptr;
  const engine::Engine* engine = nullptr;  // agent names and placement
  std::vector<trace::TraceEvent> events;   // the run from its start
  std::string title;                       // e.g. "explain pipelines/x.pipe (policy eager)"
  std::string outcome;                     // one line under the title
  const verifier::DeadlockReport* deadlock = nullptr;  // highlights its blocked waits and cause
  // Events from this index on are the model running on past a trace's last event (replay).
  size_t recorded_events = static_cast<size_t>(-1);
};

std::string PhasePictureHtml(const PictureInput& input);

}  // namespace parity::report

#endif  // PARITY_VERIFIER_REPORT_PHASE_PICTURE_H_
