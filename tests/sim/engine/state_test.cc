// The engine's state identity: StateWords (the canonical state) against StateHash and
// Fingerprint on every reachable state of small schedules built to reach pairs of states that
// differ only where an incomplete hash would not look.
#include <algorithm>
#include <cstdint>
#include <deque>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "sim/engine/engine.h"
#include "sim/ir/ir.h"
#include "sim/ir/parser.h"
#include "sim/model/mbarrier.h"

namespace parity::engine {

// Changes one field of an engine's state in place (the fingerprint cache is then recomputed
// from scratch).
class StateTestPeer {
 public:
  static size_t Slots(const Engine& e) { return e.barriers_.size(); }
  static model::MbarrierState& Slot(Engine& e, size_t i) { return e.barriers_[i]; }
  static Engine::AgentState& Agent(Engine& e, size_t a) { return e.agents_[a]; }
  static void ForgetFingerprint(Engine& e) { e.fpc_.valid = false; }
};

namespace {

ir::Program Parse(const std::string& text) {
  auto p = ir::ParseProgram(text, "state.pipe");
  EXPECT_TRUE(p.ok()) << p.status().ToString();
  return p.ok() ? std::move(p).value() : ir::Program{};
}

// Every reachable state (breadth first, told apart by StateWords), at most `limit`.
std::vector<Engine> Reachable(const ir::Program& p, size_t limit = 20000) {
  std::vector<Engine> states;
  EngineOptions o;
  o.record_trace = false;
  auto created = Engine::Create(p, {}, o);
  EXPECT_TRUE(created.ok()) << created.status().ToString();
  if (!created.ok()) return states;
  std::map<std::vector<uint64_t>, size_t> seen;
  std::deque<Engine> frontier{*created};
  std::vector<uint64_t> words;
  std::vector<Choice> choices;
  while (!frontier.empty() && states.size() < limit) {
    Engine cur = std::move(frontier.front());
    frontier.pop_front();
    cur.StateWords(&words);
    if (!seen.emplace(words, states.size()).second) continue;
    cur.Choices(&choices);
    for (const Choice& c : choices) {
      Engine next = cur;
      next.Step(c);
      frontier.push_back(std::move(next));
    }
    states.push_back(std::move(cur));
  }
  EXPECT_LT(states.size(), limit) << "the schedule has more states than expected";
  return states;
}

// Distinct states (by StateWords) have distinct fingerprints and state hashes.
void ExpectFingerprintAndHashTellApart(const std::vector<Engine>& states) {
  std::map<uint64_t, size_t> by_fp, by_hash;
  for (size_t i = 0; i < states.size(); ++i) {
    auto [fp, fresh_fp] = by_fp.emplace(states[i].Fingerprint(), i);
    EXPECT_TRUE(fresh_fp) << "states " << fp->second << " and " << i
                          << " differ but have one fingerprint";
    auto [h, fresh_h] = by_hash.emplace(states[i].StateHash(), i);
    EXPECT_TRUE(fresh_h) << "states " << h->second << " and " << i
                         << " differ but have one StateHash";
  }
}

// Two participants both arrived on the cluster barrier and not yet waited, one in the phase
// that has completed and one in the phase in progress: p's wait passes and q's blocks, or the
// other way round. Which of the two took the early `if` depends on a racy test_wait, whose
// result is overwritten afterwards, so that their pcs and variables agree in both states:
// only the participant records (the phase each arrived in) tell the states apart.
constexpr char kClusterRecords[] = R"(
cluster 1x1
barrier b[1] count 1

role z threads 32 {
  init b[0]
  bar.sync 1, 96
  arrive b[0]
  cluster.arrive
}
role p threads 32 {
  bar.sync 1, 96
  test_wait b[0] parity 0 -> r
  if r == 1 {
    cluster.arrive
    cluster.wait
  }
  let r = 0
  cluster.arrive
  cluster.wait
}
role q threads 32 {
  bar.sync 1, 96
  test_wait b[0] parity 0 -> r
  if r == 1 {
    cluster.arrive
    cluster.wait
  }
  let r = 0
  cluster.arrive
  cluster.wait
}
)";

TEST(StateIdentityTest, ClusterParticipantRecordsTellStatesApart) {
  const ir::Program p = Parse(kClusterRecords);
  const std::vector<Engine> states = Reachable(p);
  // The pair the schedule is built for is reached: both p (agent 1) and q (agent 2) have an
  // arrival outstanding, and exactly one of their next waits passes, either one.
  bool p_passes = false, q_passes = false;
  for (const Engine& s : states) {
    if (!s.ClusterArrivalOutstanding(1) || !s.ClusterArrivalOutstanding(2)) continue;
    if (s.ClusterWaitPasses(1) && !s.ClusterWaitPasses(2)) p_passes = true;
    if (s.ClusterWaitPasses(2) && !s.ClusterWaitPasses(1)) q_passes = true;
  }
  EXPECT_TRUE(p_passes);
  EXPECT_TRUE(q_passes);
  ExpectFingerprintAndHashTellApart(states);
}

// One cp.async in flight after two commits, in group 0 (an empty group 1 follows) or in group 1
// (after an empty group 0), by the racy test_wait; the loop and the overwritten result leave
// pc and variables equal (the fence, a step of its own, brings both to the wait), and the
// copy is the same operation (same instruction, same id).
// Only the copy's group tells the states apart, and `cp.async.wait 1` passes only in the
// second.
constexpr char kAsyncGroups[] = R"(
cluster 1x1
buffer buf[1] bytes 256
barrier b[1] count 1

role z threads 32 {
  init b[0]
  bar.sync 1, 64
  arrive b[0]
}
role p threads 32 {
  bar.sync 1, 64
  test_wait b[0] parity 0 -> r
  for i in 0 .. 2 {
    if i == r {
      cp.async buf[0]
    }
    cp.async.commit
  }
  let r = 0
  fence.mbarrier_init
  cp.async.wait 1
  cp.async.wait_all
}
)";

TEST(StateIdentityTest, AsyncGroupMembershipTellsStatesApart) {
  const ir::Program p = Parse(kAsyncGroups);
  const std::vector<Engine> states = Reachable(p);
  // Both memberships are reached with the copy in flight, p (agent 1) ready and z and p's
  // variables alike: p's next step blocks in one (`wait 1` with the copy in group 0) and passes
  // in the other.
  std::map<std::vector<int64_t>, std::set<bool>> blocks;
  for (const Engine& s : states) {
    if (s.in_flight() != 1 || s.agent_state(1).status != 0) continue;
    Engine t = s;
    t.Step({Choice::Kind::kAgent, 1});
    const int64_t* v = s.agent_vars(1);
    std::vector<int64_t> key{s.agent_state(0).pc, s.agent_state(0).status, s.agent_state(1).pc};
    key.insert(key.end(), v, v + s.agent_num_vars(1));
    blocks[key].insert(t.agent_state(1).status == 1);
  }
  bool pair = false;
  for (const auto& [key, outcomes] : blocks) pair = pair || outcomes.size() == 2;
  EXPECT_TRUE(pair);
  ExpectFingerprintAndHashTellApart(states);
}

// Every bundled schedule (the data of this test): the pipeline library, the examples, the
// litmus suite.
std::vector<std::string> BundledSchedules() {
  std::vector<std::string> files;
  for (const char* dir : {"pipelines", "sim/examples", "litmus"}) {
    for (const auto& entry : std::filesystem::recursive_directory_iterator(dir)) {
      if (entry.path().extension() == ".pipe") files.push_back(entry.path().string());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

struct Lcg {
  uint64_t state;
  size_t operator()(size_t n) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<size_t>((state >> 33) % n);
  }
};

// The state identity as a hash verifier checks it (in the manner of absl's
// VerifyTypeImplementsAbslHashCorrectly), along random runs of every bundled schedule: two
// states reached are equal (StateWords) exactly when their fingerprints are equal: no false
// merge (a field the fingerprint leaves out) and no false split (a field it hashes that is not
// state, or a component the incremental update left stale); StateHash likewise; and a packed
// state unpacks to the same words and, its fingerprint computed from scratch, the same
// fingerprint; a copy is the same state, and so is the undo of a step. Runs from one start
// meet in equal states by different paths (steps that commute), which the no-false-split half
// needs: the test counts those meetings.
TEST(StateIdentityTest, FingerprintsAndPackedStatesAgreeAlongRandomRunsOfEverySchedule) {
  Lcg next{2024};
  size_t schedules = 0, states = 0, meetings = 0;
  std::vector<uint64_t> words, unpacked_words;
  std::vector<uint8_t> packed;
  std::vector<Choice> choices;
  for (const std::string& f : BundledSchedules()) {
    SCOPED_TRACE(f);
    auto program = ir::ParseFile(f);
    if (!program.ok()) continue;  // a known-bad schedule refused at parse: no state to check
    auto params = ir::BindParams(*program, {});
    if (!params.ok()) continue;
    EngineOptions o;
    o.record_trace = false;
    auto created = Engine::Create(*program, *params, o);
    if (!created.ok()) continue;  // refused at Create (bad declarations): likewise
    ++schedules;
    const Engine base = *created;
    Engine u = base;
    // Per distinct state (its words): its fingerprint, StateHash and the path that first
    // reached it; per fingerprint and per StateHash: the state.
    struct Seen {
      uint64_t fp, hash, path;
    };
    std::map<std::vector<uint64_t>, Seen> by_words;
    std::unordered_map<uint64_t, const std::vector<uint64_t>*> by_fp, by_hash;
    for (int run = 0; run < 10; ++run) {
      Engine s = base;
      uint64_t path = 0;
      for (int depth = 0; depth < 200; ++depth) {
        s.StateWords(&words);
        const uint64_t fp = s.Fingerprint(), hash = s.StateHash();
        ++states;
        auto [it, fresh] = by_words.emplace(words, Seen{fp, hash, path});
        if (!fresh) {
          ASSERT_EQ(it->second.fp, fp) << "a false split: one state, two fingerprints (depth "
                                       << depth << ")";
          ASSERT_EQ(it->second.hash, hash) << "one state, two StateHashes (depth " << depth << ")";
          if (it->second.path != path) ++meetings;
        }
        auto [fi, fp_fresh] = by_fp.emplace(fp, &it->first);
        ASSERT_TRUE(fp_fresh || *fi->second == words)
            << "a false merge: two states, one fingerprint (depth " << depth << ")";
        auto [hi, hash_fresh] = by_hash.emplace(hash, &it->first);
        ASSERT_TRUE(hash_fresh || *hi->second == words)
            << "two states, one StateHash (depth " << depth << ")";
        // A copy (construction, assignment over another state) is the same state: every
        // member the state has is copied.
        Engine copied = s;
        copied.StateWords(&unpacked_words);
        ASSERT_EQ(unpacked_words, words) << "a copy changed the state (depth " << depth << ")";
        u = s;
        u.StateWords(&unpacked_words);
        ASSERT_EQ(unpacked_words, words) << "an assignment changed the state (depth " << depth
                                         << ")";
        ASSERT_EQ(u.Fingerprint(), fp);
        if (s.outcome() == Outcome::kRunning) {
          packed.clear();
          s.Pack(base, &packed);
          u.Unpack(base, packed.data(), packed.size());
          u.StateWords(&unpacked_words);
          ASSERT_EQ(unpacked_words, words) << "Pack/Unpack changed the state (depth " << depth
                                           << ")";
          ASSERT_EQ(u.Fingerprint(), fp) << "the incremental fingerprint differs from one "
                                            "computed from scratch (depth " << depth << ")";
        }
        if (s.outcome() != Outcome::kRunning) break;
        s.Choices(&choices);
        if (choices.empty()) break;
        const size_t pick = next(choices.size());
        path = path * 0x9e3779b97f4a7c15ull + pick + 1;
        // The undo of a step (RestoreStep copies back the parts of the objects the step
        // marked, Engine::Table) gives this state again: a part a step changes without its
        // accessor marking it, or that the table leaves out of an object, fails here.
        u = s;
        u.Step(choices[pick]);
        u.Fingerprint();
        u.RestoreStep(s);
        u.StateWords(&unpacked_words);
        ASSERT_EQ(unpacked_words, words) << "RestoreStep did not undo the step (depth " << depth
                                         << ")";
        ASSERT_EQ(u.Fingerprint(), fp) << "RestoreStep did not restore the fingerprint (depth "
                                       << depth << ")";
        s.Step(choices[pick]);
      }
    }
  }
  EXPECT_GT(schedules, size_t{100});
  EXPECT_GT(states, size_t{50000});
  EXPECT_GT(meetings, size_t{1000});
  RecordProperty("schedules", static_cast<int>(schedules));
  RecordProperty("states", static_cast<int>(states));
  RecordProperty("meetings", static_cast<int>(meetings));
}

// Each field of a live barrier slot (phase, pending and expected counts, tx-count, the
// preceding-phase flag) and each live agent's pc, changed by one in a reachable state, changes
// StateWords, StateHash and the fingerprint: a field that one of them leaves out fails here even
// where no two reachable states differ only in it.
TEST(StateIdentityTest, EveryBarrierFieldAndPcChangesWordsHashAndFingerprint) {
  Lcg next{77};
  size_t schedules = 0, mutations = 0;
  std::vector<uint64_t> words, mutated_words;
  std::vector<Choice> choices;
  using Mutation = void (*)(model::MbarrierState&);
  const std::pair<const char*, Mutation> kFields[] = {
      {"phase", [](model::MbarrierState& m) { ++m.phase; }},
      {"pending_count", [](model::MbarrierState& m) { ++m.pending_count; }},
      {"expected_count", [](model::MbarrierState& m) { ++m.expected_count; }},
      {"tx_count", [](model::MbarrierState& m) { ++m.tx_count; }},
      {"preceding_phase_observed",
       [](model::MbarrierState& m) { m.preceding_phase_observed = !m.preceding_phase_observed; }},
  };
  for (const std::string& f : BundledSchedules()) {
    SCOPED_TRACE(f);
    auto program = ir::ParseFile(f);
    if (!program.ok()) continue;
    auto params = ir::BindParams(*program, {});
    if (!params.ok()) continue;
    EngineOptions o;
    o.record_trace = false;
    auto created = Engine::Create(*program, *params, o);
    if (!created.ok()) continue;
    ++schedules;
    Engine s = *created;
    for (int depth = 0; depth < 40 && s.outcome() == Outcome::kRunning; ++depth) {
      if (depth % 8 == 0) {
        s.StateWords(&words);
        const uint64_t fp = s.Fingerprint(), hash = s.StateHash();
        auto expect_seen = [&](Engine& m, const std::string& what) {
          StateTestPeer::ForgetFingerprint(m);
          m.StateWords(&mutated_words);
          EXPECT_NE(mutated_words, words) << what << " is not in StateWords (depth " << depth
                                          << ")";
          EXPECT_NE(m.StateHash(), hash) << what << " is not in StateHash (depth " << depth << ")";
          EXPECT_NE(m.Fingerprint(), fp) << what << " is not in the fingerprint (depth " << depth
                                         << ")";
          ++mutations;
        };
        for (size_t i = 0; i < StateTestPeer::Slots(s); ++i) {
          if (StateTestPeer::Slot(s, i).life != model::MbarrierLife::kLive) continue;
          for (const auto& [name, mutate] : kFields) {
            Engine m = s;
            mutate(StateTestPeer::Slot(m, i));
            expect_seen(m, "slot " + std::to_string(i) + "'s " + name);
          }
        }
        for (uint32_t a = 0; a < s.num_agents(); ++a) {
          if (StateTestPeer::Agent(s, a).status == 2) continue;  // exited: its pc is not read
          Engine m = s;
          ++StateTestPeer::Agent(m, a).pc;
          expect_seen(m, "agent " + std::to_string(a) + "'s pc");
        }
        if (HasFailure()) return;
      }
      s.Choices(&choices);
      if (choices.empty()) break;
      s.Step(choices[next(choices.size())]);
    }
  }
  EXPECT_GT(schedules, size_t{100});
  EXPECT_GT(mutations, size_t{5000});
  RecordProperty("mutations", static_cast<int>(mutations));
}

}  // namespace
}  // namespace parity::engine
