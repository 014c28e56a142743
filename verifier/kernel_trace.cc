#include "verifier/kernel_trace.h"

#include <algorithm>
#include <optional>
#include <sstream>
#include <tuple>
#include <utility>

#include "sim/engine/engine.h"
#include "sim/ir/hash.h"
#include "verifier/pc_map.h"

namespace parity::verifier {
namespace {

using trace::EventKind;
using trace::TraceEvent;

constexpr uint8_t K(EventKind k) { return static_cast<uint8_t>(k); }

// trace.cuh's object field of a kernel record (parity::dev::kKernelObject).
constexpr uint16_t kKernelObject = 0xfffe;

std::string Trim(std::string s) {
  const size_t b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  const size_t e = s.find_last_not_of(" \t\r");
  return s.substr(b, e - b + 1);
}

std::string Hex(uint32_t v) {
  std::ostringstream o;
  o << "0x" << std::hex << v;
  return o.str();
}

// Copies whose (object, index) name a buffer side (an address in a kernel
// record).
bool NamesCopySide(uint8_t kind) {
  switch (static_cast<EventKind>(kind)) {
    case EventKind::kTmaIssue:
    case EventKind::kTmaStoreIssue:
    case EventKind::kBulkIssue:
    case EventKind::kCpAsyncIssue:
      return true;
    default:
      return false;
  }
}

bool WaitKind(uint8_t kind) {
  return kind == K(EventKind::kWaitBegin) || kind == K(EventKind::kWaitEnd) ||
         kind == K(EventKind::kWaitTimeout);
}

// The importer's note on an operation names the PTX line of each time the
// kernel issues it
// ("k.ptx:348,364,380,396 (k.cu:60)") when they differ. Where the note has one
// line per execution of the statement by the agent, the one of the
// `occurrence`-th execution is kept.
std::string PickPtxLine(const std::string &note, size_t occurrence, size_t executions) {
  const size_t colon = note.find(':');
  const size_t end = note.find(' ');
  if (colon == std::string::npos || executions == 0) return note;
  const std::string lines =
      note.substr(colon + 1, (end == std::string::npos ? note.size() : end) - colon - 1);
  std::vector<std::string> list;
  size_t start = 0;
  while (start <= lines.size()) {
    const size_t comma = lines.find(',', start);
    list.push_back(
        lines.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (list.size() < 2 || list.size() != executions || occurrence >= list.size()) return note;
  return note.substr(0, colon + 1) + list[occurrence] +
         (end == std::string::npos ? "" : note.substr(end));
}

// The kernel record in the kernel's own terms.
std::string KernelDid(const TraceEvent &e, const std::string &source_file) {
  std::string s = trace::EventKindName(e.kind) + " by warp " + std::to_string(e.agent) +
                  " of CTA " + std::to_string(e.cta) + ", cluster " + std::to_string(e.cluster);
  if (trace::NamesMbarrier(e.kind)) {
    s += ", barrier at shared " + Hex(uint32_t{e.index} * 8);
    if (e.target_cta != e.cta) s += " of CTA " + std::to_string(e.target_cta);
  } else if (NamesCopySide(e.kind)) {
    s += ", shared " + Hex(uint32_t{e.index} * 8);
  }
  switch (static_cast<EventKind>(e.kind)) {
    case EventKind::kInit:
      s += ", count " + std::to_string(e.value);
      break;
    case EventKind::kArrive:
      s += ", count " + std::to_string(e.value);
      break;
    case EventKind::kArriveExpectTx:
      s += ", " + std::to_string(e.value2) + " bytes";
      break;
    case EventKind::kExpectTx:
    case EventKind::kTmaIssue:
    case EventKind::kTmaStoreIssue:
    case EventKind::kBulkIssue:
    case EventKind::kCpAsyncIssue:
    case EventKind::kStAsync:
      s += ", " + std::to_string(e.value) + " bytes";
      if (e.kind == K(EventKind::kTmaIssue) && e.value2 != 0) {
        s += ", multicast mask " + std::to_string(e.value2);
      }
      break;
    default:
      break;
  }
  if (WaitKind(e.kind)) s += ", parity " + std::to_string(e.parity);
  s += ", at " + (source_file.empty() ? std::string("line") : source_file) + ":" +
       std::to_string(e.pc);
  return s;
}

// Why a kernel record differs from the model's event of the same agent, or "".
std::string Differs(const TraceEvent &r, const TraceEvent &m) {
  if (r.kind != m.kind) {
    return "the kernel's warp issued a " + trace::EventKindName(r.kind) +
           " where its agent's next operation in the schedule is a " + trace::EventKindName(m.kind);
  }
  auto diff = [](const std::string &what, int64_t kernel, int64_t schedule) {
    return "the " + what + " differs: the kernel's is " + std::to_string(kernel) +
           ", the schedule's " + std::to_string(schedule);
  };
  if (trace::NamesMbarrier(r.kind) && r.target_cta != m.target_cta) {
    return diff("target CTA", r.target_cta, m.target_cta);
  }
  switch (static_cast<EventKind>(r.kind)) {
    case EventKind::kInit:
      if (r.value != m.value) return diff("init count", r.value, m.value);
      break;
    case EventKind::kArrive:
      if (r.value != m.value) return diff("arrive count", r.value, m.value);
      break;
    case EventKind::kArriveExpectTx:
      if (r.value2 != m.value2) return diff("expect_tx byte count", r.value2, m.value2);
      if (r.value != m.value) return diff("arrive count", r.value, m.value);
      break;
    case EventKind::kExpectTx:
      if (r.value != m.value) return diff("expect_tx byte count", r.value, m.value);
      break;
    case EventKind::kWaitBegin:
    case EventKind::kWaitEnd:
      if (r.parity != m.parity) return diff("parity waited on", r.parity, m.parity);
      break;
    case EventKind::kTmaIssue:
      if (r.value != m.value) return diff("box byte count", r.value, m.value);
      // The model's mask is -1 for a load without .multicast, a kernel record's
      // 0.
      if (std::max(r.value2, 0) != std::max(m.value2, 0)) {
        return diff("multicast mask", r.value2, m.value2);
      }
      break;
    case EventKind::kTmaStoreIssue:
    case EventKind::kBulkIssue:
    case EventKind::kCpAsyncIssue:
    case EventKind::kStAsync:
      if (r.value != m.value) return diff("byte count", r.value, m.value);
      break;
    case EventKind::kBulkWaitBegin:
    case EventKind::kBulkWaitEnd:
      if (r.value != m.value) return diff("groups allowed pending", r.value, m.value);
      if (r.value2 != m.value2) return diff(".read flag", r.value2, m.value2);
      break;
    case EventKind::kCpAsyncWaitBegin:
    case EventKind::kCpAsyncWaitEnd:
      if (r.value != m.value) return diff("groups allowed pending", r.value, m.value);
      break;
    case EventKind::kCpAsyncArrive:
      if (r.value != m.value) return diff(".noinc flag", r.value, m.value);
      break;
    case EventKind::kFence:
      // trace.cuh: value 0 fence.mbarrier_init, 1 fence.proxy.async; the model's
      // object is ir::Fence::Kind, whose first two are the same two.
      if (r.value != m.object) return diff("fence kind", r.value, m.object);
      break;
    default:
      break;  // commits, cluster and CTA barriers: the kind is all a kernel record
              // says
  }
  return "";
}

class KernelReplayer {
 public:
  KernelReplayer(const ir::Program &program, const std::vector<int64_t> &params,
                 const KernelMap &map, const trace::TraceFile &kernel, engine::Engine engine)
      : program_(program),
        params_(params),
        map_(map),
        kernel_(kernel),
        engine_(std::move(engine)),
        pcs_(program) {
    // The CUDA file of the records' lines: the importer's notes name it,
    // "(file.cu:LINE)".
    for (const std::string &line : map_.lines) {
      const size_t open = line.rfind(" (");
      const size_t colon = line.rfind(':');
      if (line.find('#') != std::string::npos && open != std::string::npos &&
          colon != std::string::npos && colon > open && line.back() == ')') {
        source_file_ = line.substr(open + 2, colon - open - 2);
        break;
      }
    }
  }

  // Matches the kernel's records with the model's operations, agent by agent, and replays the
  // matched prefix: MapWarps, RunModel, then rounds of MatchRecords, each followed, while the
  // first divergence is a record past what the model's run reached, by RunOnFromTheKernel;
  // Finish replays and reports.
  Expected<KernelReplayResult> Run() {
    PARITY_RETURN_IF_ERROR(MapWarps());
    RunModel();
    for (int round = 0;; ++round) {
      MatchRecords();
      if (!first_bad_ || !past_the_run_ || round >= kMaxRounds) break;
      Expected<bool> grew = RunOnFromTheKernel();
      if (!grew.ok()) return grew.status();
      if (!*grew) break;
    }
    return Finish();
  }

 private:
  static constexpr int kMaxRounds = 64;
  using WarpKey = std::tuple<uint32_t, uint32_t, uint32_t>;  // cluster, CTA, warp or agent

  // Warps to agents (`# kernel: role R = warps ...`), and the model's event numbering of agents
  // (cluster, CTA, index in the CTA) to agents.
  Status MapWarps() {
    for (uint32_t a = 0; a < engine_.num_agents(); ++a) {
      const engine::AgentInfo &info = engine_.agent_info(a);
      const std::string &role = program_.roles[info.role].name;
      auto it = map_.role_warps.find(role);
      if (it == map_.role_warps.end() || info.index_in_role >= it->second.size()) {
        return Status("replay.kernel-map",
                      "role " + role + " (instance " + std::to_string(info.index_in_role) +
                          ") has no `# kernel: role " + role + " = warps ...` line",
                      SourceLocation{map_.file, 0, 0});
      }
      agent_of_warp_[{info.cluster, info.cta,
                      static_cast<uint32_t>(it->second[info.index_in_role])}] = a;
    }
    for (uint32_t a = 0; a < engine_.num_agents(); ++a) {
      const engine::AgentInfo &info = engine_.agent_info(a);
      agent_of_event_[{info.cluster, info.cta, info.index_in_cta}] = a;
    }
    return Status::Ok();
  }

  // Appends each agent's operations among `events` (only the kinds a kernel records) to its
  // list in `into`, in program order.
  void Collect(const std::vector<TraceEvent> &events,
               std::vector<std::vector<TraceEvent>> *into) const {
    for (const TraceEvent &e : events) {
      if (e.agent == trace::kNoAgent || !KernelTraceRecords(e.kind)) continue;
      if (e.kind == K(EventKind::kWaitTimeout)) continue;
      auto it = agent_of_event_.find({e.cluster, e.cta, e.agent});
      if (it != agent_of_event_.end()) (*into)[it->second].push_back(e);
    }
  }

  // Every agent's operations, in program order, as one run of the model issues them.
  void RunModel() {
    ops_.assign(engine_.num_agents(), {});
    engine::Engine run(engine_);
    run.Run();
    Collect(run.trace(), &ops_);
    model_complete_ = run.outcome() == engine::Outcome::kCompleted;
  }

  // How many times the agent's operations before position `at` ran the instruction of the one
  // at `at`, and how many times all of them do.
  std::pair<size_t, size_t> Executions(uint32_t a, size_t at) const {
    if (at >= ops_[a].size()) return {0, 0};
    const TraceEvent &x = ops_[a][at];
    size_t before = 0, all = 0;
    for (size_t j = 0; j < ops_[a].size(); ++j) {
      if (ops_[a][j].pc != x.pc || ops_[a][j].kind != x.kind) continue;
      if (j < at) ++before;
      ++all;
    }
    return {before, model_complete_ ? all : 0};
  }

  // Record i diverges (kept when it is the first so far).
  void Fail(size_t i, std::string reason, std::optional<uint32_t> agent, const TraceEvent *m) {
    if (first_bad_ && *first_bad_ <= i) return;
    first_bad_ = i;
    std::pair<size_t, size_t> n{0, 0};
    if (agent && m != nullptr) n = Executions(*agent, next_[*agent]);
    bad_ = Describe(i, std::move(reason), agent, m, n.first, n.second);
  }

  // One round of matching each warp's records with its agent's operations (ops_), from the
  // start. Where the schedule can deadlock, how far an agent gets depends on the order of the
  // run: a warp's records that go past the end of its agent's operations in the model's run
  // set past_the_run_, and Run gets longer sequences from RunOnFromTheKernel.
  void MatchRecords() {
    const std::vector<TraceEvent> &ev = kernel_.events;
    next_.assign(engine_.num_agents(), 0);
    last_pc_.assign(engine_.num_agents(), 0);
    out_.assign(ev.size(), std::nullopt);
    merged_.assign(ev.size(), false);
    aborted_agent_.assign(engine_.num_agents(), false);
    first_bad_.reset();
    past_the_run_ = false;
    after_abort_ = 0;
    matched_ = 0;
    barrier_of_.clear();
    address_of_.clear();
    slot_of_.clear();
    for (size_t i = 0; i < ev.size(); ++i) {
      if (!merged_[i]) MatchRecord(i);
    }
    // A run the kernel completed issued every operation of every agent.
    const bool aborted = std::any_of(ev.begin(), ev.end(), [](const TraceEvent &e) {
      return e.kind == K(EventKind::kWaitTimeout);
    });
    if (!aborted) {
      for (uint32_t a = 0; a < engine_.num_agents(); ++a) {
        if (next_[a] >= ops_[a].size()) continue;
        Fail(ev.size(),
             "the kernel's run ended, but its warp " + std::to_string(WarpOf(a)) +
                 " never issued this operation of its agent",
             a, &ops_[a][next_[a]]);
        break;
      }
    }
  }

  // Record i against the next operation of its warp's agent.
  void MatchRecord(size_t i) {
    const std::vector<TraceEvent> &ev = kernel_.events;
    const TraceEvent &r = ev[i];
    auto ag = agent_of_warp_.find({r.cluster, r.cta, r.agent});
    if (ag == agent_of_warp_.end()) {
      Fail(i,
           "the schedule has no agent for this warp (the importer found no "
           "protocol "
           "operation in it)",
           std::nullopt, nullptr);
      return;
    }
    const uint32_t a = ag->second;
    if (aborted_agent_[a]) {
      // The lane that timed out left the kernel; the warp's other lanes go
      // on past the wait it never finished: not a run of the agent's
      // program any more.
      ++after_abort_;
      return;
    }
    if (r.kind == K(EventKind::kWaitTimeout)) {
      aborted_agent_[a] = true;
      // The bounded wait of the last kWaitBegin gave up: named like it.
      TraceEvent t = r;
      t.agent = static_cast<uint16_t>(engine_.agent_info(a).index_in_cta);
      if (!TranslateBarrier(&t)) {
        Fail(i,
             "the timed-out wait names a barrier address no earlier record "
             "bound",
             a, nullptr);
        return;
      }
      t.flags = 0;
      t.pc = last_pc_[a];  // the wait's own instruction (its kWaitBegin
                           // matched last)
      out_[i] = t;
      return;
    }
    if (!KernelTraceRecords(r.kind) || r.object != kKernelObject) {
      Fail(i, "not a record of the trace API (gpu/include/parity/trace.cuh)", a, nullptr);
      return;
    }
    if (next_[a] >= ops_[a].size()) {
      if (!model_complete_ && (!first_bad_ || i < *first_bad_)) past_the_run_ = true;
      Fail(i,
           model_complete_ ? "the kernel's warp issued this after every operation of "
                             "its agent in the "
                             "schedule"
                           : "the kernel's warp issued this after the last operation "
                             "its agent reaches "
                             "in a run of the schedule (which does not complete)",
           a, nullptr);
      return;
    }
    TraceEvent m = ops_[a][next_[a]];
    TraceEvent rec = r;
    // A single-thread operation done by several lanes is one record per
    // lane and one operation of the lanes' count in the schedule: sum this
    // warp's identical records.
    if (r.kind == K(EventKind::kArrive) && r.value < m.value) {
      for (size_t j = i + 1; j < ev.size() && rec.value < m.value; ++j) {
        const TraceEvent &o = ev[j];
        if (o.cluster != r.cluster || o.cta != r.cta || o.agent != r.agent) continue;
        if (o.kind != r.kind || o.index != r.index || o.target_cta != r.target_cta ||
            o.pc != r.pc) {
          break;
        }
        rec.value += o.value;
        merged_[j] = true;
      }
    }
    std::string why = Differs(rec, m);
    if (why.empty()) why = Bind(rec, m);
    if (!why.empty()) {
      Fail(i, why, a, &m);
      return;
    }
    ++next_[a];
    ++matched_;
    m.time = r.time;  // the model's pc stays: it names the schedule's operation
    last_pc_[a] = m.pc;
    out_[i] = m;
  }

  // Runs the model on from the kernel's order up to the record past the run (the records
  // matched so far, replayed); true when some agent's operations got longer (ops_ then holds
  // them), false when the matching cannot get further.
  Expected<bool> RunOnFromTheKernel() {
    trace::TraceFile prefix = Translated(out_, *first_bad_, nullptr);
    Expected<ReplayResult> upto = ReplayTrace(program_, params_, prefix, true);
    if (!upto.ok()) return upto.status();
    // A divergence inside the prefix is reported below; one at its end only says that the
    // last step taken also produced the record the prefix stops before.
    if (!upto->model_engine ||
        (upto->diverged && upto->divergence.event_number <= prefix.events.size())) {
      return false;
    }
    engine::Engine on(*upto->model_engine);
    const size_t before = on.trace().size();
    on.Run();
    std::vector<std::vector<TraceEvent>> longer(engine_.num_agents());
    Collect(upto->model_trace, &longer);
    Collect(std::vector<TraceEvent>(on.trace().begin() + static_cast<std::ptrdiff_t>(before),
                                    on.trace().end()),
            &longer);
    bool grew = false;
    for (uint32_t a = 0; a < engine_.num_agents(); ++a)
      grew = grew || longer[a].size() > ops_[a].size();
    if (!grew) return false;
    ops_ = std::move(longer);
    model_complete_ = on.outcome() == engine::Outcome::kCompleted;
    return true;
  }

  // The matched records in the schedule's names, up to the first divergence, replayed; the
  // replay's own divergence where it comes before the matching's.
  Expected<KernelReplayResult> Finish() {
    const std::vector<TraceEvent> &ev = kernel_.events;
    KernelReplayResult result;
    result.records = ev.size();
    result.schedule = program_.name;
    trace::TraceFile &t = result.translated;
    const size_t end = first_bad_ ? *first_bad_ : ev.size();
    t = Translated(out_, end, &result.origin);
    Expected<ReplayResult> replay = ReplayTrace(program_, params_, t);
    if (!replay.ok()) return replay.status();
    result.replay = std::move(replay).value();
    result.matched = matched_;
    result.after_abort = after_abort_;
    result.merged = static_cast<size_t>(std::count(merged_.begin(), merged_.end(), true));
    result.barriers_bound = barrier_of_.size();
    result.addresses_bound = barrier_of_.size() + slot_of_.size();
    if (result.replay.diverged) {
      const ReplayDivergence &d = result.replay.divergence;
      const size_t k = d.event_number - 1;
      const size_t i = k < result.origin.size() ? result.origin[k] : end;
      std::optional<uint32_t> a;
      if (i < ev.size()) {
        auto ag = agent_of_warp_.find({ev[i].cluster, ev[i].cta, ev[i].agent});
        if (ag != agent_of_warp_.end()) a = ag->second;
      }
      const TraceEvent *m = k < t.events.size() ? &t.events[k] : nullptr;
      std::string reason = d.reason;
      if (!d.barrier_state.empty()) reason += "; " + d.barrier_state;
      // The replay ran the records before the first per-warp divergence: one of
      // its own there is earlier (a replay that only ran out of records there
      // leaves the match's report).
      if (!first_bad_ || i < *first_bad_) {
        // The matched operation's execution: its position among the agent's
        // operations.
        std::pair<size_t, size_t> n{0, 0};
        if (a && m != nullptr && i < ev.size()) {
          size_t pos = 0;
          for (size_t j = 0; j < k; ++j) {
            const TraceEvent &x = t.events[j];
            if (x.cluster == m->cluster && x.cta == m->cta && x.agent == m->agent &&
                x.kind != K(EventKind::kWaitTimeout)) {
              ++pos;
            }
          }
          n = Executions(*a, pos);
        }
        bad_ = Describe(i, reason, a, m, n.first, n.second);
        bad_.from_replay = true;
        first_bad_ = i;
      }
    }
    if (first_bad_) {
      result.diverged = true;
      result.divergence = bad_;
    }
    return result;
  }


  // The matched records before `end` in the schedule's names, as a trace of the
  // schedule.
  trace::TraceFile Translated(const std::vector<std::optional<TraceEvent>> &out, size_t end,
                              std::vector<size_t> *origin) const {
    trace::TraceFile t;
    t.header = kernel_.header;
    t.header.schedule_hash = ir::ContentHash(program_);
    t.header.schedule = program_.name;
    t.header.params.clear();
    for (size_t p = 0; p < program_.params.size() && p < params_.size(); ++p) {
      t.header.params.push_back({program_.params[p].name, params_[p]});
    }
    for (size_t i = 0; i < end && i < out.size(); ++i) {
      if (!out[i]) continue;
      t.events.push_back(*out[i]);
      if (origin != nullptr) origin->push_back(i);
    }
    return t;
  }

  uint32_t WarpOf(uint32_t agent) const {
    const engine::AgentInfo &info = engine_.agent_info(agent);
    return static_cast<uint32_t>(
        map_.role_warps.at(program_.roles[info.role].name)[info.index_in_role]);
  }

  std::string AgentName(uint32_t a) const {
    const engine::AgentInfo &info = engine_.agent_info(a);
    return engine_.role_name(a) + "[" + std::to_string(info.index_in_role) + "] of CTA " +
           std::to_string(info.cta) + ", cluster " + std::to_string(info.cluster);
  }

  // Binds the record's address to the model event's barrier or buffer slot; ""
  // or why not.
  std::string Bind(const TraceEvent &r, const TraceEvent &m) {
    const uint32_t addr = uint32_t{r.index} * 8;
    if (trace::NamesMbarrier(r.kind)) {
      const std::pair<uint16_t, uint16_t> bar{m.object, m.index};
      auto it = barrier_of_.find(r.index);
      if (it != barrier_of_.end() && it->second != bar) {
        return "the kernel acts on the barrier at shared " + Hex(addr) + ", which is " +
               BarrierName(it->second) +
               " by the kernel's earlier records, where the schedule's "
               "operation acts on " +
               BarrierName(bar);
      }
      auto back = address_of_.find(bar);
      if (back != address_of_.end() && back->second != r.index) {
        return "the schedule's operation acts on " + BarrierName(bar) +
               ", which is the barrier "
               "at shared " +
               Hex(uint32_t{back->second} * 8) +
               " by the kernel's earlier "
               "records, where the kernel acts on the one at shared " +
               Hex(addr);
      }
      barrier_of_[r.index] = bar;
      address_of_[bar] = r.index;
      return "";
    }
    if (NamesCopySide(r.kind)) {
      const std::pair<uint32_t, uint16_t> slot{BufferOf(m), m.index};
      auto it = slot_of_.find(r.index);
      if (it != slot_of_.end() && it->second != slot) {
        return "the kernel's copy uses shared " + Hex(addr) + ", which is " + SlotName(it->second) +
               " by the kernel's earlier records, where the schedule's "
               "copy uses " +
               SlotName(slot);
      }
      slot_of_[r.index] = slot;
    }
    return "";
  }

  // The buffer of a copy event: TMA events name the tensor map, so the buffer
  // comes from the op.
  uint32_t BufferOf(const TraceEvent &m) const {
    if (m.kind != K(EventKind::kTmaIssue) && m.kind != K(EventKind::kTmaStoreIssue)) {
      return m.object;
    }
    for (uint32_t a = 0; a < engine_.num_agents(); ++a) {
      const engine::AgentInfo &info = engine_.agent_info(a);
      if (info.cluster != m.cluster || info.cta != m.cta || info.index_in_cta != m.agent) continue;
      const ir::Op *op = pcs_.op(info.role, m.pc);
      if (op == nullptr) break;
      if (const auto *load = std::get_if<ir::TmaLoad>(op)) return load->dst.buffer;
      if (const auto *store = std::get_if<ir::TmaStore>(op)) return store->src.buffer;
    }
    return 0xffffffffu;
  }

  bool TranslateBarrier(TraceEvent *e) const {
    auto it = barrier_of_.find(e->index);
    if (it == barrier_of_.end()) return false;
    e->object = it->second.first;
    e->index = it->second.second;
    return true;
  }

  std::string BarrierName(std::pair<uint16_t, uint16_t> b) const {
    const std::string name = b.first < program_.barriers.size() ? program_.barriers[b.first].name
                                                                : "#" + std::to_string(b.first);
    return name + "[" + std::to_string(b.second) + "]";
  }

  std::string SlotName(std::pair<uint32_t, uint16_t> s) const {
    const std::string name = s.first < program_.buffers.size()
                                 ? program_.buffers[s.first].name
                                 : "buffer #" + std::to_string(s.first);
    return name + "[" + std::to_string(s.second) + "]";
  }

  // A divergence at kernel record i (ev.size(): the end of the trace); `m` is
  // the schedule's event of `agent` (its pc an instruction of the agent's
  // role), if any.
  KernelDivergence Describe(size_t i, std::string reason, std::optional<uint32_t> agent,
                            const TraceEvent *m, size_t occurrence = 0,
                            size_t executions = 0) const {
    KernelDivergence d;
    d.record = i + 1;
    d.reason = std::move(reason);
    if (i < kernel_.events.size()) {
      d.observed = kernel_.events[i];
      d.kernel_did = KernelDid(d.observed, source_file_);
    } else {
      d.kernel_did = "(the trace ends)";
    }
    if (!agent) return d;
    d.agent = AgentName(*agent);
    std::optional<uint32_t> pc;
    if (m != nullptr && m->pc != 0xffff) {
      pc = m->pc;
    } else if (m == nullptr) {
      return d;
    }
    // A translated event's pc is its kernel record; the model's own events
    // carry the instruction. Find the instruction: the agent's operation
    // matched or expected here.
    if (pc) {
      const uint32_t role = engine_.agent_info(*agent).role;
      const ir::Stmt *stmt = pcs_.stmt(role, *pc);
      if (stmt != nullptr) {
        d.schedule_at = stmt->where;
        if (d.schedule_at.line >= 1 &&
            static_cast<size_t>(d.schedule_at.line) <= map_.lines.size()) {
          const std::string &text = map_.lines[d.schedule_at.line - 1];
          const size_t hash = text.find('#');
          d.schedule_op = Trim(text.substr(0, hash));
          if (hash != std::string::npos) {
            d.ptx = PickPtxLine(Trim(text.substr(hash + 1)), occurrence, executions);
          }
        }
      }
    }
    return d;
  }

  const ir::Program &program_;
  const std::vector<int64_t> &params_;
  const KernelMap &map_;
  const trace::TraceFile &kernel_;
  engine::Engine engine_;
  PcMap pcs_;
  std::string source_file_;
  bool model_complete_ = false;
  size_t matched_ = 0;
  size_t after_abort_ = 0;
  std::map<uint16_t, std::pair<uint16_t, uint16_t>> barrier_of_;  // address / 8 -> barrier
  std::map<std::pair<uint16_t, uint16_t>, uint16_t> address_of_;  // barrier -> address / 8
  std::map<uint16_t, std::pair<uint32_t, uint16_t>> slot_of_;     // address / 8 -> slot
  std::map<WarpKey, uint32_t> agent_of_warp_;   // (cluster, CTA, warp) -> agent
  std::map<WarpKey, uint32_t> agent_of_event_;  // (cluster, CTA, index in CTA) -> agent
  std::vector<std::vector<TraceEvent>> ops_;    // per agent: its operations in the model's run
  // MatchRecords's state: per agent, its next operation and the pc matched last, and whether
  // its warp timed out; per record, its translation and whether an earlier one absorbed it.
  std::vector<size_t> next_;
  std::vector<uint16_t> last_pc_;
  std::vector<bool> aborted_agent_;
  std::vector<std::optional<TraceEvent>> out_;
  std::vector<bool> merged_;
  std::optional<size_t> first_bad_;  // the first divergent record (ev.size(): the end)
  KernelDivergence bad_;             // and its description
  bool past_the_run_ = false;  // the first divergence is a record past its agent's sequence
};

}  // namespace

Expected<KernelMap> ParseKernelMap(std::string_view pipe_text, const std::string &file) {
  KernelMap map;
  map.file = file;
  std::string text(pipe_text);
  std::istringstream in(text);
  std::string line;
  int number = 0;
  constexpr std::string_view kTag = "# kernel: role ";
  while (std::getline(in, line)) {
    ++number;
    map.lines.push_back(line);
    const std::string t = Trim(line);
    if (t.rfind(kTag, 0) != 0) continue;
    std::istringstream words(t.substr(kTag.size()));
    std::string role, eq, warps;
    words >> role >> eq >> warps;
    if (warps == "wgmma") {
      // `wgmma of warps A-B`: a warpgroup's tensor core, no warp of the kernel.
      std::string of, warps_word, range;
      words >> of >> warps_word >> range;
      KernelTensorCore tc;
      tc.line = number;
      char dash = 0;
      std::istringstream r(range);
      r >> tc.first_warp >> dash >> tc.last_warp;
      std::string rest;
      if (role.empty() || eq != "=" || of != "of" || warps_word != "warps" || r.fail() ||
          dash != '-' || !r.eof() || (words >> rest)) {
        return Status("replay.kernel-map",
                      "malformed kernel line (expected `# kernel: role NAME = wgmma of warps "
                      "A-B`)",
                      SourceLocation{file, number, 1});
      }
      map.tensor_cores[role] = tc;
      continue;
    }
    std::vector<int> list;
    int w = 0;
    while (words >> w) list.push_back(w);
    if (role.empty() || eq != "=" || warps != "warps" || list.empty() || !words.eof()) {
      return Status("replay.kernel-map",
                    "malformed kernel line (expected `# kernel: role NAME = "
                    "warps W ...`)",
                    SourceLocation{file, number, 1});
    }
    map.role_warps[role] = list;
  }
  if (map.role_warps.empty()) {
    return Status("replay.kernel-map",
                  "the schedule has no `# kernel: role NAME = warps ...` lines: a "
                  "kernel's trace "
                  "replays only on the schedule `parity import` made of that kernel",
                  SourceLocation{file, 0, 0});
  }
  return map;
}

Expected<KernelReplayResult> ReplayKernelTrace(const ir::Program &program,
                                               const std::vector<int64_t> &params,
                                               const KernelMap &map,
                                               const trace::TraceFile &kernel) {
  if (kernel.header.source != "kernel") {
    return Status("replay.kernel-trace", "the trace's source is '" + kernel.header.source +
                                             "', not 'kernel' (gpu/include/parity/trace.cuh)");
  }
  // The schedule's tensor cores are agents no record of the trace is by, and the warps' own
  // wgmma steps (arrive on wgmma_issued_wgG, wait on wgmma_done_wgG) are not recorded either:
  // matching would stop at the first of them with a divergence that is no fault of the kernel.
  // Refused until trace.cuh records wgmma issue and retire.
  if (!map.tensor_cores.empty()) {
    const auto& [role, tc] = *map.tensor_cores.begin();
    return Status("replay.kernel-wgmma",
                  "role " + role + " is the tensor core of warps " +
                      std::to_string(tc.first_warp) + "-" + std::to_string(tc.last_warp) +
                      " (their wgmma.mma_async, docs/language.md section 8.8), not a warp: a "
                      "kernel trace (gpu/include/parity/trace.cuh) records no wgmma.mma_async "
                      "or wgmma.wait_group, so neither the tensor core's steps nor the warps' "
                      "arrives on wgmma_issued / waits on wgmma_done can be matched or ordered; "
                      "replaying kernel traces of wgmma kernels is unsupported",
                  SourceLocation{map.file, tc.line, 1});
  }
  engine::EngineOptions options;
  options.record_trace = true;
  options.max_events = 4 * static_cast<uint64_t>(kernel.events.size()) + 1'000'000;
  // As ReplayTrace: the whole box credited at once, else loads credited in pieces.
  Expected<KernelReplayResult> first = KernelReplayResult{};
  for (bool pieces : {false, true}) {
    options.tx_pieces = pieces;
    Expected<engine::Engine> engine = engine::Engine::Create(program, params, options);
    if (!engine.ok()) return engine.status();
    KernelReplayer replayer(program, params, map, kernel, std::move(engine).value());
    Expected<KernelReplayResult> r = replayer.Run();
    if (!r.ok()) return r;
    r->replay.tx_pieces = r->replay.tx_pieces || pieces;
    if (!pieces) first = std::move(r);
    if (!pieces && !first->diverged) return first;
    if (pieces && !r->diverged) return r;
  }
  return first;
}

std::string FormatKernelReplayResult(const KernelReplayResult &r, const trace::TraceFile &kernel) {
  std::string out;
  if (!r.diverged) {
    out +=
        "OK: all " + std::to_string(r.records) +
        " records of the kernel trace match the "
        "schedule (" +
        std::to_string(r.matched) + " matched with their agents' operations" +
        (r.merged ? " after " + std::to_string(r.merged) + " per-lane records were summed" : "") +
        ", " + std::to_string(r.barriers_bound) + " barrier addresses and " +
        std::to_string(r.addresses_bound - r.barriers_bound) + " copy addresses bound";
    if (r.replay.timeouts) {
      out += ", " + std::to_string(r.replay.timeouts) + " wait timeout(s) confirmed";
    }
    if (r.after_abort) {
      out += ", " + std::to_string(r.after_abort) +
             " record(s) of timed-out warps' other lanes after the timeout not "
             "matched";
    }
    out += ") and their order replays on the model\n";
    if (r.replay.tx_pieces) {
      out += "only with a copy's bytes credited in pieces: a phase completed when its tx-count "
             "passed through 0 while the rest of a copy was still in flight (an early "
             "completion, P2002: the copy carries more bytes than the phase expected)\n";
    }
    out += ModelStateSentence(r.replay) + "\n";
    return out;
  }
  const KernelDivergence &d = r.divergence;
  if (!r.schedule.empty() && kernel.header.schedule != r.schedule) {
    out += "note: the trace is of kernel '" + kernel.header.schedule + "', the schedule of '" +
           r.schedule + "'\n";
  }
  out += "DIVERGENCE at kernel record " + std::to_string(d.record) + " of " +
         std::to_string(kernel.events.size()) + "\n";
  out += "  the kernel did:  " + d.kernel_did + "\n";
  out += "  why:             " + d.reason + "\n";
  if (!d.agent.empty()) out += "  schedule agent:  " + d.agent + "\n";
  if (!d.schedule_op.empty()) {
    out += "  the schedule:    " + d.schedule_op + "   at " + d.schedule_at.ToString() + "\n";
  }
  if (!d.ptx.empty()) out += "  imported from:   " + d.ptx + "\n";
  if (d.from_replay && !r.replay.divergence.enabled.empty()) {
    out += "  enabled in the model:\n";
    for (const std::string &s : r.replay.divergence.enabled) out += "    - " + s + "\n";
  }
  return out;
}

}  // namespace parity::verifier
