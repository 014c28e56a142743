// Human-readable event lines: barrier, buffer and tensor-map names from the schedule instead of
// numbers, and (for `explain`) what each event did to its barrier. Below the C++ API
// (parity/parity.h: Event::text, Finding::message) and shared by every report of the command line.
#ifndef PARITY_VERIFIER_REPORT_NARRATE_H_
#define PARITY_VERIFIER_REPORT_NARRATE_H_

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "sim/engine/engine.h"
#include "sim/ir/ir.h"
#include "sim/model/mbarrier.h"
#include "sim/trace/event.h"
#include "verifier/rules.h"

namespace parity::report {

// "CTA 0 producer[0]: arrive.expect_tx full[1] of CTA 0 (count 1, +32768 tx bytes)".
std::string EventLine(const ir::Program& program, const engine::Engine& engine,
                      const trace::TraceEvent& e);

// The barrier state a narration states right after its event: the numbers every sentence of
// that event is made from, so that a test can hold each one against the engine's state.
struct BarrierClaim {
  uint16_t cluster = 0;
  uint8_t cta = 0;  // the barrier's CTA (TraceEvent::target_cta)
  uint16_t barrier = 0;
  uint16_t index = 0;
  model::MbarrierState state;
};

// What a wait or test_wait event says about its phase.
enum class WaitVerdict : uint8_t {
  kNone,
  kReturnsAtOnce,  // wait begin: the parity names the preceding phase, complete
  kBlocks,         // wait begin: the parity names the current phase, not complete
  kReleased,       // wait end after blocking: the phase it waited for completed
  kTestTrue,       // test_wait = 1: the preceding phase, complete
  kTestFalse,      // test_wait = 0: the current phase, not complete
  kTimedOut,       // the GPU's bounded wait gave up: the phase was still incomplete
};

// One event of `parity explain` as data and as text.
struct Narration {
  size_t number = 0;                   // 1-based position in the run
  std::string line;                    // EventLine
  std::vector<std::string> sentences;  // what the event did and the state now
  std::optional<BarrierClaim> claim;   // the barrier state the sentences state
  WaitVerdict wait = WaitVerdict::kNone;
  bool completes_phase = false;        // this event completes its barrier's current phase
  size_t completed_phase = 0;          // which phase it completes (completes_phase)
  // Concepts met here for the first time, each with its general rule (stated once per run).
  struct Rule {
    std::string concept_name;
    std::string text;
  };
  std::vector<Rule> rules;

  // "  7. line\n      sentence ...\n      rule: ...".
  std::string Text() const;
};

// Narrates a run event by event. It keeps its own model of every barrier (sim/model/mbarrier.h
// applied to each event), so that it can say what a wait will do before the wait's end event,
// and what remains after an arrive; the op kind of an arrive (plain, noComplete, drop) comes from
// the program at the event's instruction.
class Narrator {
 public:
  Narrator(const ir::Program& program, const engine::Engine& engine);
  Narration Next(const trace::TraceEvent& e);

  // The narrator's state of a barrier (an uninitialised state when it has seen no event on it).
  model::MbarrierState State(uint16_t cluster, uint8_t cta, uint16_t barrier,
                             uint16_t index) const;

 private:
  using BarKey = std::tuple<uint16_t, uint8_t, uint16_t, uint16_t>;
  using AgentKey = std::tuple<uint16_t, uint8_t, uint16_t>;
  struct OpenWait {
    BarKey bar;
    uint8_t parity = 0;
    WaitVerdict verdict = WaitVerdict::kNone;
    size_t begun = 0;
  };
  std::string Label(const BarKey& k) const;
  std::string Who(const AgentKey& k) const;
  std::string StateText(const BarKey& k) const;
  void Concept(Narration& n, const std::string& name, const std::string& rule);
  // The arrive-on transition the event's instruction performed (plain, noComplete, drop).
  model::MbarrierArriveResult ApplyArrive(const trace::TraceEvent& e, model::MbarrierState& s);

  const ir::Program& program_;
  const engine::Engine& engine_;
  verifier::PcMap pcs_;
  std::map<BarKey, model::MbarrierState> bars_;
  std::map<BarKey, size_t> last_completion_;  // event number of the last phase completion
  std::map<AgentKey, OpenWait> waits_;
  std::map<AgentKey, uint32_t> role_;
  std::set<std::string> concepts_;
  size_t n_ = 0;
  const char* arrive_form_ = nullptr;  // set by ApplyArrive for arrive_drop / noComplete
};

// An engine violation's message: the barrier it is about first for the mbarrier rules ("ready[0]
// of CTA 0: this update completes phase 1 ..."), then model::Describe() without its "CODE slug: "
// heading, which reports print apart (check, explain, explore, JSON, SARIF alike).
std::string ViolationText(const ir::Program& program, const engine::ViolationInfo& v);

// The teaching form of a whole run: every event narrated in order.
std::vector<Narration> NarrateRun(const ir::Program& program, const engine::Engine& engine,
                                  const std::vector<trace::TraceEvent>& events);

// The last `max_events` events (all when max_events == 0), numbered from 1 at the start of the
// run, as the behaviour prefix of a report.
std::string BehaviourPrefix(const ir::Program& program, const engine::Engine& engine,
                            size_t max_events);

}  // namespace parity::report

#endif  // PARITY_VERIFIER_REPORT_NARRATE_H_
