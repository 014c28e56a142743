// Parity's C++ API for kernel projects: check a pipeline schedule from your own unit tests.
//
//   #include "parity/parity.h"            // Bazel: deps = ["@parity//:parity"] or "//parity"
//
//   auto schedule = parity::api::Schedule::FromFile("my_kernel.pipe");
//   if (!schedule.ok()) FAIL() << schedule.error().ToString();
//   schedule->SetParam("STAGES", 4);
//   auto report = parity::api::Explore(*schedule, {.max_states = 1'000'000});
//   EXPECT_EQ(report->verdict, parity::api::Verdict::kVerified);
//   for (const auto& f : report->findings) ADD_FAILURE() << f.ToString();
//
// Check runs the schedule once (one interleaving, chosen by a policy); Explore searches every
// interleaving of agent steps and asynchronous completions and, when it finds a violation or a
// deadlock, returns the steps that reach it. Both report findings: a stable rule code (the table
// of `parity rules`), a severity, a message, the source location of the culprit operation and
// the locations of every other agent involved.
//
// Errors in the input (a malformed file, an unknown or illegal parameter) are returned as an
// Error, never thrown; a finding in a well-formed schedule is a result, not an error.
//
// This header needs nothing but the C++ standard library; the `parity` command line is a client
// of the same functions.
#ifndef PARITY_PARITY_PARITY_H_
#define PARITY_PARITY_PARITY_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace parity::api {

// A place in a schedule file. line and column are 1-based; 0 means unknown.
struct Location {
  std::string file;
  int line = 0;
  int column = 0;

  bool known() const { return !file.empty() || line != 0; }
  std::string ToString() const;  // "file:line:col" (as much as is known)
};

// Bad input: which rule of the input format it broke ("parse", "param.unknown", ...), a message,
// and where.
struct Error {
  std::string rule;
  std::string message;
  Location location;

  std::string ToString() const;  // "file:line:col: error[rule]: message"
};

// A value or an Error.
template <typename T>
class Result {
 public:
  Result(T value) : v_(std::move(value)) {}    // NOLINT: implicit by design.
  Result(Error error) : v_(std::move(error)) {}  // NOLINT: implicit by design.

  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }
  // value() of an error, or error() of a value, is a programming error (std::bad_variant_access).
  const T& value() const& { return std::get<0>(v_); }
  T& value() & { return std::get<0>(v_); }
  T&& value() && { return std::get<0>(std::move(v_)); }
  const T& operator*() const& { return value(); }
  T& operator*() & { return value(); }
  const T* operator->() const { return &value(); }
  T* operator->() { return &value(); }
  const Error& error() const { return std::get<1>(v_); }

 private:
  std::variant<T, Error> v_;
};

// A parsed schedule (.pipe) with its parameters. Copying shares the parsed program.
class Schedule {
 public:
  // Reads and parses a file; errors name the file, line, column and rule.
  static Result<Schedule> FromFile(const std::string& path);
  // Parses text; `file` is the name locations and messages use.
  static Result<Schedule> FromString(const std::string& text, const std::string& file = "<string>");

  Schedule(const Schedule&) = default;
  Schedule& operator=(const Schedule&) = default;
  // A move shares the program as a copy does (SetParam copies on write), so that a moved-from
  // Schedule stays a valid schedule: every member reads the program, none may find it gone.
  Schedule(Schedule&& other) noexcept : impl_(other.impl_) {}
  Schedule& operator=(Schedule&& other) noexcept {
    impl_ = other.impl_;
    return *this;
  }

  // Overrides a `param` of the schedule (as `parity check -D NAME=VALUE` does). An unknown name
  // is an Error; a value the schedule rejects (a `require` or a derived count out of range) is
  // reported by Check/Explore.
  Result<bool> SetParam(const std::string& name, int64_t value);

  struct Param {
    std::string name;
    int64_t value = 0;  // the override, else the default of the file
  };
  // Every param of the schedule, in declaration order, with the value Check/Explore will use.
  std::vector<Param> params() const;
  // The same, or the Error Check/Explore would return for a value the schedule rejects (a
  // `require` or a derived count out of range), naming the file and rule.
  Result<std::vector<Param>> BoundParams() const;

  const std::string& name() const;   // `schedule NAME` (default: the file's stem)
  const std::string& file() const;
  const std::string& source() const;  // the text parsed (`allow` comments are read from it)
  std::string hash() const;          // content hash of the program (hex), as in the reports

  struct Impl;
  const Impl& impl() const { return *impl_; }

 private:
  explicit Schedule(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}
  std::shared_ptr<Impl> impl_;
};

// kNote: behaviour shown defined on the H100 that a later operation can turn into a bug (M1009);
// it never changes an exit code or a verdict. A finding's severity is its own, not only its
// code's: the same rule reports an error in one case and a warning (`strict`: what only the
// formal model leaves unordered, on a pattern production code relies on) in another
// (docs/levels.md); `strict` in the options makes those errors.
enum class Severity { kError, kWarning, kNote };

// Another place a finding involves: an agent's operation (a blocked wait, the other side of a
// race, the waiter a phase was not observed by).
struct Related {
  std::string agent;    // "CTA 0 consumer[1]"
  std::string message;  // what that agent does there
  Location location;
};

struct Finding {
  std::string code;      // stable rule id, "M1005", "P2001" (parity rules CODE explains it)
  std::string slug;      // "mbarrier-over-arrival"
  std::string title;     // one line
  Severity severity = Severity::kError;
  std::string message;   // this occurrence, with names and numbers
  std::string agent;     // the agent whose operation is the culprit ("" when none)
  Location location;     // that operation (for an asynchronous copy: the statement issuing it)
  std::vector<Related> related;  // every agent involved, the culprit included
  // The barrier, buffer or global the finding is about: its declared name ("full", "smem_A"; ""
  // when none), the element or slot (-1 when none) and the CTA owning it (-1 when none). The
  // command line groups findings of one rule and statement pair over these.
  std::string object;
  int object_index = -1;
  int object_cta = -1;
  // A deadlock whose culprit a re-run proved (verifier/culprit.h): the one change at
  // `location` that makes the run complete ("set the init count of empty to 6"), and the
  // cause slug it implies. Empty otherwise.
  std::string suggested_change;
  std::string culprit_cause;
  Location culprit_location;  // the statement to change (a violation's differs from location)
  std::string culprit_text;   // why that statement is the cause, in one sentence

  std::string ToString() const;  // "file:line:col: error[M1005]: message (by agent)"
};

// One event of a run: what happened, in words, and the statement that did it.
struct Event {
  std::string text;      // "CTA 0 producer[0]: arrive.expect_tx full[1] of CTA 0 (...)"
  std::string agent;     // "" for events of no agent
  Location location;     // unknown for events of no statement (a copy landing)
};

// One step of a counterexample: an agent takes a step, or an asynchronous operation completes.
struct Step {
  // What happened, in one line: the first event's text (the operation and its object) and how
  // many more events the step had: "CTA 0 producer[0]: arrive.expect_tx full[1] of CTA 0 ...".
  std::string label;
  std::string agent;          // the stepping agent, or the agent whose operation completes
  bool asynchronous = false;  // an in-flight operation completes (a copy lands, ...)
  std::vector<Event> events;  // what the step did
};

// The engine's own account of a model violation or warning (CheckReport::violation and
// CheckReport::model_warnings), as it raised it: the message without the diagnosis a Finding
// adds.
struct Violation {
  std::string code;     // "M1005"
  std::string title;    // one line
  std::string message;  // names the barrier
  std::string agent;    // the culprit agent
  Location location;
  bool from_async = false;  // raised by an asynchronous operation's completion (a copy landing)
};

// The earlier operation that most likely caused a deadlock or violation (verifier/deadlock.h,
// verifier/culprit.h).
struct Culprit {
  bool found = false;
  std::string cause;        // "count-too-high", ... (docs: `parity check` deadlock causes)
  std::string agent;        // the agent whose operation it is
  std::string barrier;      // the barrier it concerns (deadlocks), its element, CTA and parity
  uint32_t index = 0;
  uint32_t cta = 0;
  uint32_t parity = 0;
  Location location;        // the statement
  std::string explanation;  // why, in one or two sentences
  // Set when a re-run proved it: the one change at `location` after which the run completes
  // ("set its count to 6"), and what it changes ("parity", "count" or "expect_tx").
  std::string suggested_change;
  std::string changes;
};

// An agent blocked at the end of a deadlocked run, and why.
struct BlockedAgent {
  std::string agent;
  std::string waits_on;  // "mbarrier-parity", "bar.sync", ...
  Location location;     // the wait statement
  // Waits on an mbarrier phase: the barrier, its element and CTA, the parity waited for, and
  // the barrier's state now.
  bool on_mbarrier = false;
  std::string barrier;
  uint32_t index = 0;
  uint32_t cta = 0;
  uint32_t parity = 0;
  uint32_t phase = 0;
  int32_t pending = 0;
  int32_t expected = 0;
  int32_t tx = 0;
  std::string cause;        // the cause's slug
  std::string explanation;  // one or two sentences
  bool in_cycle = false;    // on a cycle of the wait-for graph
};

// The diagnosis of a deadlocked run: its headline, the most likely cause, every blocked agent
// (root causes first).
struct Deadlock {
  std::string summary;
  Culprit culprit;
  std::vector<BlockedAgent> blocked;
};

// A `# expect:` line of the schedule's own file (docs/language.md) that applies to a run of
// Check: a check line whose -D values bind the params as the run's did and whose policy is the
// run's (or that holds under every policy: then its code only).
struct FileExpectation {
  std::string expect;      // the expectation as text
  int line = 0;            // its line in the file
  std::string difference;  // "" when the run matches it, else what differs
};

enum class Policy { kEager, kLazy, kRoundRobin, kRandom };

struct CheckOptions {
  Policy policy = Policy::kEager;
  uint64_t seed = 0;           // of Policy::kRandom
  bool collect_events = true;  // fill CheckReport::events (the whole run, narrated)
  bool strict = false;         // warnings of docs/levels.md are errors (`--strict`)
  // Stop the run after this many events (Outcome::kStepLimit): the cap on the memory its trace
  // holds (32 bytes an event). 0: no cap.
  uint64_t max_events = 0;
  bool narrate = false;  // fill CheckReport::narration (`parity explain`)
};

enum class Outcome { kCompleted, kDeadlock, kViolation, kStepLimit };

struct CheckReport {
  Outcome outcome = Outcome::kCompleted;
  uint64_t events_count = 0;
  uint64_t steps = 0;      // agent steps and completions taken
  size_t agents = 0;       // agents of the grid
  uint32_t ctas = 0;       // CTAs of the grid
  std::string policy;      // "eager", "random seed=7"
  // The engine's violation or the deadlock (P2001) first, then warnings and protocol-rule
  // findings (P2002..P2009) in the order found.
  std::vector<Finding> findings;
  std::vector<Event> events;  // CheckOptions::collect_events
  // The protocol rules (P2002..) found an error on the run's trace (with CheckOptions::strict,
  // a warning of docs/levels.md counts).
  bool rule_errors = false;
  // Outcome::kViolation: the engine's violation, and the one change a re-run proved fixes it
  // (found = false: none).
  std::optional<Violation> violation;
  Culprit violation_culprit;
  std::vector<Violation> model_warnings;  // the engine's warnings, in the order raised
  std::optional<Deadlock> deadlock;       // Outcome::kDeadlock: its diagnosis
  // The schedule's own `# expect:` lines that apply to this run, each matched against it; a
  // malformed expect line leaves them out and says why here (a comment: never an Error).
  std::vector<FileExpectation> expected_by_file;
  std::string expectations_error;
  // CheckOptions::narrate: every event of the run, one entry each: its line, then what it did
  // to its object and the state now (`parity explain`).
  std::vector<std::string> narration;

  // Errors (not warnings) among the findings, or an outcome other than completed.
  bool has_errors() const;

  // The run itself (the engine after it), which the functions below read; opaque here.
  struct Detail;
  std::shared_ptr<const Detail> detail;
};

struct ExploreReport;

struct ExploreOptions {
  uint64_t max_states = 50'000'000;  // stop (incomplete) after storing this many states
  double time_limit_s = 0;           // stop (incomplete) after this many seconds; 0: none
  // Stop (incomplete) once the process holds this many bytes of resident memory; 0: none.
  uint64_t max_memory_bytes = 0;
  int threads = 1;                   // more than one: depth-first on parallel threads (with
                                     // breadth_first: breadth-first on parallel threads)
  bool reduction = true;             // partial-order reduction (false: every interleaving)
  bool breadth_first = false;        // breadth-first throughout (default: depth-first first)
  // After a depth-first search found something: the first counterexample is shortened for at
  // most shorten_budget_s seconds (0: reported as found); with shortest_counterexample a
  // breadth-first search (bounded only by time_limit_s) gives a shortest one.
  double shorten_budget_s = 2;
  bool shortest_counterexample = false;
  bool strict = false;  // warnings of docs/levels.md are errors: a counterexample (`--strict`)
  // false: model violations and deadlocks only, no protocol rules (P2002..): what a brute-force
  // search measures the reduction against (`--measure-reduction`).
  bool check_rules = true;
  // false: search on past a finding, to count every reachable end state (the first finding is
  // still the one reported).
  bool stop_at_first = true;
  // A depth-first search that found something calls this once, before shortening, with the
  // counterexample as found: verdict, stats so far, counterexample, first_counterexample_seconds
  // and the findings at its end (not diagnosed further: no culprit search).
  std::function<void(const ExploreReport& first)> on_first_counterexample = nullptr;
};

// What a search did: for those who tune it (`parity explore` prints it).
struct SearchStats {
  uint64_t states = 0;       // distinct states stored (terminal states included)
  uint64_t expanded = 0;     // states whose successors were generated
  uint64_t transitions = 0;  // steps taken in the explored (reduced) graph
  uint64_t enabled = 0;      // steps enabled at the expanded states
  uint64_t pruned = 0;       // of those, left out by the reduction
  uint64_t predicted = 0;    // transitions to stored states predicted without stepping
  uint64_t completed_ends = 0;  // distinct completed, deadlocked and violating end states
  uint64_t deadlock_ends = 0;
  uint64_t violation_ends = 0;
  uint64_t rule_paths = 0;           // completed paths the protocol rules ran on
  uint64_t rule_violation_ends = 0;  // of those, paths with an error
  uint64_t history_states = 0;       // rules on every path: (state, history) pairs stored
  uint64_t history_completed = 0;    // ... completed ones, whose rules ran
  uint32_t depth = 0;                // deepest level (breadth-first) or path (depth-first)
  uint64_t peak_frontier = 0;        // most states held at once besides the table
  uint64_t frontier_bytes = 0;       // breadth-first: the packed frontier's most bytes
  double seconds = 0;
  double states_per_second = 0;
  double bytes_per_state = 0;  // fingerprint table + parent records
};

enum class Verdict {
  kVerified,       // complete search, every run completes, no finding
  kIncomplete,     // a bound stopped the search with nothing found: NOT verified
  kDeadlock,       // a reachable interleaving deadlocks
  kViolation,      // a reachable interleaving violates a rule of the model
  kRuleViolation,  // a reachable interleaving completes but breaks a protocol rule
};

struct ExploreReport {
  Verdict verdict = Verdict::kVerified;
  uint64_t states = 0;
  uint64_t transitions = 0;
  uint32_t depth = 0;
  double seconds = 0;
  std::string bound;      // kIncomplete: which bound stopped the search
  std::string symmetry;   // whether symmetry reduction was applied, and why not
  // The findings at the end of the counterexample (empty when verified or incomplete).
  std::vector<Finding> findings;
  // Warnings (severity kWarning, docs/levels.md) on the paths the rules ran on, each once,
  // with any verdict: "verified, 2 warnings". Their `related` names agents, not places.
  std::vector<Finding> warnings;
  std::vector<Step> counterexample;  // from the initial state to the finding
  bool counterexample_shortest = true;
  // The depth-first search's first counterexample: its length and when it was found (seconds
  // from the start); 0 steps when the search was breadth-first (its first is the one above).
  size_t first_counterexample_steps = 0;
  double first_counterexample_seconds = 0;
  std::string shortening;  // how the counterexample above was obtained from the first one
  SearchStats stats;       // the search (depth-first, or breadth-first throughout)
  // The breadth-first search for a shorter counterexample after a depth-first one found one.
  bool has_shortening_stats = false;
  SearchStats shortening_stats;

  struct Detail;  // the search's statistics, for the command line
  std::shared_ptr<const Detail> detail;
};

// Runs the schedule once. An Error when the schedule cannot run (bad parameters, ...).
Result<CheckReport> Check(const Schedule& schedule, const CheckOptions& options = {});
// Searches every interleaving. An Error when the schedule cannot run.
Result<ExploreReport> Explore(const Schedule& schedule, const ExploreOptions& options = {});

// ---------------------------------------------------------------- traces

struct ReplayOptions {
  bool keep_model = false;  // keep the model's run (PhasePictureHtml of the report)
};

// A trace's order of events driven through the model (`parity replay`): legal throughout, or
// the first event it does not allow.
struct ReplayReport {
  bool diverged = false;
  struct Divergence {
    uint64_t event_number = 0;  // 1-based, as DumpTrace numbers events
    std::string kind;           // the event's kind ("arrive", ...)
    Location location;          // its statement (known for simulator traces)
    std::string reason;         // why the model does not allow it
    std::string expected;       // what the model produced instead ("" when nothing)
    std::string barrier_state;  // the state of the barrier the event acts on, if any
    std::vector<std::string> enabled;  // the model's enabled choices there
  };
  Divergence divergence;  // when diverged
  uint64_t replayed = 0;              // trace events matched
  uint64_t skipped_model_events = 0;  // model events of kinds the trace does not record
  uint64_t inferred_completions = 0;  // unrecorded completions taken to enable an event
  uint64_t timeouts = 0;              // wait timeouts checked
  uint64_t after_abort = 0;           // events after a timeout the model could not take
  uint64_t probes = 0;                // the executor's end-of-run barrier probes
  bool search_exhausted = false;      // the search over ambiguous completions hit its budget
  bool eager_completions = false;     // it replays only with completions taken eagerly
  std::string model_outcome;          // the model after the last event: "running", ...
  std::vector<std::string> unobserved_kinds;  // event kinds the trace's source cannot record

  struct Detail;  // the trace and the model's run, which the functions below read
  std::shared_ptr<const Detail> detail;
};

struct CompareReport;
struct KernelReplayReport;

// A trace file (`parity run --trace`, the H100 executor's `parity gpu run --trace`, a kernel's
// own): read once, replayed on a schedule's model by Replay. Copying shares it.
class Trace {
 public:
  // Reads a trace; errors name the file and rule (sim/trace/trace_file.h).
  static Result<Trace> FromFile(const std::string& path);

  const std::string& path() const;
  const std::string& source() const;    // "sim", "gpu" (the executor), "kernel" (its own)
  const std::string& device() const;
  const std::string& schedule() const;  // the schedule it was recorded from
  const std::string& policy() const;
  uint64_t events() const;

  struct Impl;
  const Impl& impl() const { return *impl_; }

 private:
  // The reports keep the traces they read (FormatReplay, FormatCompare).
  friend Result<ReplayReport> Replay(const Schedule& schedule, const Trace& trace,
                                     const ReplayOptions& options);
  friend Result<CompareReport> Compare(const Trace& a, const Trace& b);
  friend Result<KernelReplayReport> ReplayKernel(const Schedule& schedule, const Trace& trace);
  explicit Trace(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}
  std::shared_ptr<const Impl> impl_;
};

// Replays a simulator or executor trace (not a kernel's own: source "kernel") on the schedule.
// An Error when the trace was recorded from another schedule, its params do not bind, or the
// schedule's overridden params differ from the trace's; a divergence is a result.
Result<ReplayReport> Replay(const Schedule& schedule, const Trace& trace,
                            const ReplayOptions& options = {});
// The report as `parity replay` prints it: "OK: all N events ..." or the divergence in context.
std::string FormatReplay(const ReplayReport& report);
// The phase picture of the replayed run (ReplayOptions::keep_model), then of the model running
// on alone from where the trace ends, headed by `title`; empty without the model's run.
std::string PhasePictureHtml(const ReplayReport& report, const std::string& title);

// Two traces of one schedule held against each other (`parity compare`, e.g. the simulator's
// and the H100's): phase completions, program order, copies, wait timeouts.
struct CompareReport {
  std::vector<std::string> differences;   // one line each; empty: the traces agree
  std::vector<std::string> notes;         // what could not be compared and why
  std::vector<std::string> compared;      // the aspects compared ("program order", ...)
  std::vector<std::string> not_compared;  // those one trace does not record
  bool same() const { return differences.empty(); }

  struct Detail;  // the two traces, which FormatCompare reads
  std::shared_ptr<const Detail> detail;
};

// An Error when the traces are of different schedules (the Error names b's file).
Result<CompareReport> Compare(const Trace& a, const Trace& b);
// The report as `parity compare` prints it.
std::string FormatCompare(const CompareReport& report);

// A wait the GPU gave up on (a hang) in an executor trace: where, on what, by whom.
struct WaitTimeout {
  uint32_t cluster = 0;
  uint32_t cta = 0;
  uint32_t parity = 0;
  std::string barrier;  // "full[1] of CTA 0"
  std::string agent;    // "CTA 0 consumer[0]" ("" when the trace's agent is not the schedule's)
};
// The wait timeouts of `trace`, named by the schedule's barriers and agents.
std::vector<WaitTimeout> WaitTimeouts(const Schedule& schedule, const Trace& trace);

// A kernel's own trace (source "kernel", gpu/include/parity/trace.cuh) matched with the
// operations of the schedule `parity import` made of the kernel, and replayed on its model
// (`parity replay` of such a trace). The params are the schedule's (a kernel trace records
// none): the kernel must have run with the arguments it was imported with.
struct KernelReplayReport {
  bool diverged = false;
  uint64_t records = 0;          // records of the kernel trace
  uint64_t matched = 0;          // records matched with their agents' operations
  uint64_t barriers_bound = 0;   // the kernel's barrier addresses bound to the schedule's
  uint64_t addresses_bound = 0;  // barrier and buffer addresses bound
  uint64_t replayed = 0;         // records replayed on the model
  uint64_t timeouts = 0;         // wait timeouts checked
  std::string model_outcome;     // the model after the last record: "running", ...
  struct Divergence {
    uint64_t record = 0;          // 1-based, in the kernel trace's (time) order
    std::string kind;             // the record's kind ("arrive", ...)
    std::string kernel_did;       // the record in the kernel's terms (warp, address, CUDA line)
    uint64_t source_line = 0;     // the kernel's source line the record carries
    std::string reason;           // why the schedule does not allow it
    std::string agent;            // the schedule's agent ("warp1_2[0] of CTA 0, cluster 0")
    std::string schedule_op;      // the agent's operation in the schedule ("" if none)
    Location location;            // its .pipe line (when schedule_op is not empty)
    std::string imported_from;    // the importer's note on that line: PTX lines (CUDA line)
    bool found_by_order = false;  // the replay's order found it (else the per-warp match)
  };
  Divergence divergence;  // when diverged

  struct Detail;  // the kernel trace and its replay, which FormatKernelReplay reads
  std::shared_ptr<const Detail> detail;
};

// An Error when the trace is not a kernel's own, the schedule carries no kernel map (it is not
// one `parity import` made) or its model cannot be built; a divergence is a result.
Result<KernelReplayReport> ReplayKernel(const Schedule& schedule, const Trace& trace);
// The report as `parity replay` prints it: "OK: ..." or the divergence with both sides' lines.
std::string FormatKernelReplay(const KernelReplayReport& report);

struct PerfettoOptions {
  // The SM clock that converts a GPU trace's clock64 cycles to microseconds; 0: the one the
  // runner recorded in the trace's sidecar (TRACE.agents), else the times stay in cycles.
  double sm_clock_ghz = 0;
};

struct PerfettoExport {
  std::string json;                // Chrome/Perfetto trace-event JSON (ui.perfetto.dev)
  std::vector<std::string> notes;  // what is inferred or unknown, one line each
};

// `parity trace export`. With a schedule (null: none) the lanes get its names (full[0],
// producer[0]), and a GPU trace's phase completions and copy deliveries, which the GPU cannot
// record, are inferred by replaying the trace on the schedule's model with the trace's params.
// An Error when the trace's params do not bind to the schedule or its model cannot be built.
Result<PerfettoExport> ExportPerfetto(const Trace& trace, const Schedule* schedule,
                                      const PerfettoOptions& options = {});

// A deadlock found by Explore in full, as `parity explore` prints it: every blocked agent, what
// it waits for and why it cannot come, and the culprit; the first `detailed_blocked` agents in
// detail. Empty unless the verdict is kDeadlock.
std::string FormatDiagnosis(const ExploreReport& report, size_t detailed_blocked);

// What a Check run holds besides its report, as `parity check`, `explain` and `run` print it;
// each needs a report made by Check (an empty string otherwise).
// The deadlock in full (every blocked agent, what it waits for and why it cannot come, the
// culprit; the first `detailed_blocked` agents in detail). Empty unless Outcome::kDeadlock.
std::string FormatDiagnosis(const CheckReport& report, size_t detailed_blocked);
// The run's last `last` events (0: every event), numbered from 1 at the start, one a line.
std::string FormatBehaviour(const CheckReport& report, size_t last);
// The wait-for graph of a deadlock in Graphviz DOT. Empty unless Outcome::kDeadlock.
std::string WaitForGraphDot(const CheckReport& report);
// The phase picture of the run: one self-contained HTML page (lanes per barrier and agent,
// phases, waits, copies and remote arrives as arrows), headed by `title` and `outcome`.
std::string PhasePictureHtml(const CheckReport& report, const std::string& title,
                             const std::string& outcome);
// Writes the run's events to `path` as a trace file (`parity replay` reads it back), headed by
// the schedule's hash, name, policy and params: the number of events written, or an Error.
Result<uint64_t> WriteTrace(const CheckReport& report, const std::string& path);
// That trace as text, one event a line.
std::string DumpTrace(const CheckReport& report);

const char* SeverityName(Severity s);  // "error", "warning"
const char* OutcomeName(Outcome o);    // "completed", "deadlock", "violation", "step-limit"
const char* VerdictName(Verdict v);    // "verified", "incomplete", "deadlock", "violation",
                                       // "rule-violation"

// The rule table behind `parity rules`: every code Parity reports.
struct Rule {
  std::string code;         // "M1005"
  std::string slug;         // "mbarrier-over-arrival"
  Severity severity = Severity::kError;
  std::string title;        // one line
  std::string explanation;  // the rule, why it matters, the usual bug
  // Where it comes from (sim/model/citations.h): `PTX ISA (SECTION): "the ISA's words"` or
  // `litmus NAME`, several separated by "; ".
  std::string citation;
  // The same, one entry per source: an ISA section and its words, or a litmus test of litmus/
  // (the H100 shows the behaviour), or neither (a rule the schedule's author states).
  struct Source {
    std::string section;  // "9.7.13.15.16 mbarrier.test_wait / mbarrier.try_wait"
    std::string quote;    // the ISA's words
    std::string litmus;   // the litmus test's name ("" for a quote)
  };
  std::vector<Source> sources;
};
// Every rule, in the order of `parity rules`.
std::vector<Rule> Rules();
// The rule of a code ("M1005") or slug ("mbarrier-over-arrival"); an Error (rule "cli.rule")
// naming it when there is none.
Result<Rule> FindRule(const std::string& code_or_slug);

// ---------------------------------------------------------------- engine self-checks

// The engine's self-checks of its incremental state: every 8th fingerprint and state restore of
// a thread is compared with the same computed from scratch (sim/engine/engine.h). They exist only
// in builds with assertions (no NDEBUG), where they are on unless turned off here: a test build
// of a kernel project gets them, a release build of libparity pays nothing. Process-wide; they
// took half of a brute-force Explore's time, so the `parity` command turns them off unless
// PARITY_SELF_CHECKS=1 is set.
void SetSelfChecks(bool on);
bool SelfChecks();

// ---------------------------------------------------------------- PTX import

// What `parity import` is given: a kernel's PTX (nvcc, sm_90a) and its launch. Sizes and
// arguments are text as on the command line; a malformed one is an Error (rule
// "import.bad-option") naming the option.
struct ImportOptions {
  std::string ptx;      // the kernel's .ptx file
  std::string entry;    // mangled, demangled or bare name ("": the launch file's one entry)
  std::string block;    // threads per CTA "X[,Y,Z]" (required unless `launch`)
  std::string cluster;  // CTAs per cluster "X[,Y]" ("": 1,1, or the launch's)
  int64_t clusters = 1;               // independent clusters
  std::vector<std::string> args;      // scalar arguments "INDEX=VALUE"
  std::vector<std::string> params;    // by-value struct fields "NAME+OFFSET=VALUE", "OFFSET=VALUE"
  std::vector<std::string> tensor_maps;  // "INDEX=DTYPE:DIMS:BOX[:SWIZZLE]" or "NAME+OFFSET=..."
  // ld.shared / ldmatrix reads are use.generic (a later TMA or bulk load needs
  // fence.proxy.async: P2006); false: plain `use`.
  bool generic_reads = true;
  bool source_chain = false;  // comments name the whole inlined call chain
  std::string launch;         // a launch file of `parity capture` (docs/launch-file.md), or ""
  int launch_index = 0;       // which launch of the kernel in it
};

// The `.pipe` schedule of the kernel's protocol (sim/ptx/importer.h), as text. An Error naming
// the file, line and rule when the PTX, the launch or an option is bad or the kernel does
// something the importer cannot express.
Result<std::string> ImportPtx(const ImportOptions& options);

// ---------------------------------------------------------------- pipeline counts

// What `parity counts` is given: a well-known pipeline and its shape, as text as on the command
// line (sim/pipelines/counts.h), and the user's numbers to check ("init.empty=8").
struct CountsOptions {
  std::string kind;              // tma-async, async, tma-store, single-tma or cp-async
  std::string cluster = "1x1";   // tma-async: MxN
  std::string multicast = "ab";  // tma-async: none, a, b or ab
  int consumers = 1;
  int producers = 1;
  std::string signal = "auto";  // tma-async: warpgroup, warp, thread or auto
  std::string tile_a;           // MxK
  std::string tile_b;           // NxK
  std::string dtype = "f16";
  int stages = 2;
  std::string box;  // single-tma: WxH...
  int threads = 1;
  std::vector<std::string> checks;  // KEY=VALUE
};

struct CountsReport {
  std::string kind;  // the pipeline's name
  struct Item {
    std::string key;         // "init.full"
    int64_t value = 0;
    std::string formula;     // "" for a constant
    std::string reason;
    std::string derivation;  // "<name> = <formula> = <value>: <reason>"
  };
  std::vector<Item> items;
  std::vector<std::string> notes;  // facts without a number
  struct Check {
    std::string key;
    int64_t yours = 0;
    int64_t correct = 0;
    bool match = false;
    std::string explanation;  // for a mismatch: why yours is wrong
  };
  std::vector<Check> checks;  // one per CountsOptions::checks entry
  bool all_match() const;
};

// The correct barrier init counts and tx bytes of the pipeline, each with its derivation, and
// the checks. An Error (rules "counts.param", "counts.parse", "counts.key") on bad input; a
// check that differs is a result.
Result<CountsReport> CountPipeline(const CountsOptions& options);

// ---------------------------------------------------------------- TMA layout

// What `parity tma-layout` is given: a tensor map and a box start, as text as on the command
// line ("a,b,c" lists, dimension 0 first; sim/model/tma.h).
struct TmaLayoutOptions {
  std::string dtype;            // u8,u16,u32,s32,u64,s64,f16,bf16,f32,tf32,f64
  std::string box;              // box dims W[,H,...] (1..5 values)
  std::string swizzle = "none";  // none, 32B, 64B or 128B
  uint32_t smem_base = 0;       // destination shared address, 128-byte aligned
  std::string global_dims;      // "": the box
  std::string global_strides;   // byte strides of dims 1..rank-1 ("": packed, rows to 16 bytes)
  std::string coords;           // box start, may be negative ("": 0s)
  std::string element_strides;  // traversal strides ("": 1s)
  std::string oob_fill = "zero";  // zero or nan
};

// Where each element of a TMA tile load lands in shared memory (PTX ISA 5.5.5-5.5.7, the
// tensor copy's box traversal, out-of-bound fill and swizzle).
struct TmaLayoutReport {
  std::string dtype;    // the element type's name
  std::string swizzle;  // "none", "128B", ...
  uint32_t smem_base = 0;
  std::vector<uint32_t> box;              // one per dimension
  std::vector<uint64_t> global_dims;      // one per dimension
  std::vector<uint64_t> global_strides;   // dims 1..rank-1
  std::vector<int32_t> coords;            // one per dimension
  std::vector<uint32_t> element_strides;  // one per dimension
  struct Element {
    std::vector<uint32_t> k;             // the box coordinates
    std::vector<int64_t> global_coord;   // the tensor coordinates
    uint32_t smem_offset = 0;            // bytes from smem_base, swizzle applied
    bool oob = false;                    // filled instead of read
  };
  std::vector<Element> elements;  // in coordinate order, dimension 0 fastest
  uint64_t box_bytes = 0;          // shared bytes written
  uint64_t oob_elements = 0;
  uint64_t complete_tx_bytes = 0;  // credited to the mbarrier
  std::vector<std::pair<uint32_t, uint32_t>> smem_ranges;  // [begin, end), sorted, disjoint
};

// The placement of every box element. An Error (rules "cli.list", "cli.rank", "cli.dtype",
// "cli.swizzle", "cli.oob-fill", "tensor-map.*", "tma.*") on a malformed or illegal map.
Result<TmaLayoutReport> TmaLayout(const TmaLayoutOptions& options);

// ---------------------------------------------------------------- litmus tests

// A litmus test's outcomes (litmus/README.md): the model's (every outcome it allows, found by
// an exhaustive search) or the H100's (the GPU litmus runner's histogram <test>.h100.txt).
struct LitmusHistogram {
  std::string name;    // the test (its file's stem)
  std::string hash;    // the schedule's content hash, 16 hex digits
  std::string source;  // "sim" or "h100"
  uint64_t runs = 0;   // the model: distinct end states; the H100: runs
  std::map<std::string, uint64_t> counts;  // outcome -> runs (end states) showing it

  std::string ToText() const;  // the histogram file's text (<test>.sim.txt, <test>.h100.txt)
  // Parses a histogram file's text; errors name `file` and the line (rule "litmus.format").
  static Result<LitmusHistogram> Parse(const std::string& text, const std::string& file);
};

// Every outcome the model allows for `test` (with its default params), named `name`. An Error
// when the model refuses the test, a run ends in an engine error or its step limit, or the test
// is too big to enumerate exactly (rule "litmus.too-big"); the Error names the test's file.
Result<LitmusHistogram> SimulateLitmus(const Schedule& test, const std::string& name);

enum class LitmusVerdict {
  kAgree,      // every observed outcome is allowed by the model
  kFail,       // some observed outcome is not allowed
  kUndefined,  // the model calls the test undefined behaviour and the H100 showed outcomes
               // outside the defined ones: reported, not failed
  kNotRun,     // no H100 histogram for the test
};
const char* LitmusVerdictName(LitmusVerdict v);  // "agree", "FAIL", ...

struct LitmusComparison {
  LitmusVerdict verdict = LitmusVerdict::kNotRun;
  std::vector<std::string> unexpected;      // observed, not allowed (kFail, kUndefined)
  std::vector<std::string> never_observed;  // allowed, never observed on the H100
};

// The model's outcomes held against the H100's (`parity litmus`). An Error (rule
// "litmus.hash") when they are of different schedules or their sources are not sim and h100.
Result<LitmusComparison> CompareLitmus(const LitmusHistogram& sim, const LitmusHistogram& h100);

}  // namespace parity::api

#endif  // PARITY_PARITY_PARITY_H_
