// The depth-first strategy of Search (explore/search.h), in named steps: Push expands a state
// (its persistent set, and in a batched frame every successor at once: ExpandBatched), StepLazy
// and DescendBatched move down one level, and successor prediction (explore/predict.h) is
// carried between the frames (Carry, CarryFrom).
#include <algorithm>
#include <cassert>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "sim/common/check.h"
#include "verifier/explore/predict.h"
#include "verifier/explore/search.h"

namespace parity::verifier::explore {

// The steps of the search loop are compiled into it (they were its lambdas: a call per
// transition costs measurably on a search of millions of states).
#define PARITY_DFS_INLINE __attribute__((always_inline)) inline

// Depth-first: memory is the fingerprint table plus one engine per level of the current path.
// While the visited table is small (below options_.batch_table_bytes) a state's
// successors are made one at a time when the search comes to them: the next level's engine is
// made the state (a copy for the first successor, then Engine::RestoreStep undoing the
// previous successor's step), stepped, looked up, and descended into when new (a "lazy"
// frame). Once it is large, a state's successors are generated together when it is expanded
// (a "batched" frame): each taken step is applied to the next level's engine (a copy of the
// state, made once, when a step is first needed), fingerprinted and undone
// (Engine::RestoreStep copies back only what the step changed), prefetching the fingerprint's
// table line; then the fingerprints are inserted (their cache misses overlap) and only the new
// running successors are kept, as (record, step) pairs. The engine is left holding the last
// successor stepped (Frame::held); descending into a successor takes it as it is when it is
// that one, else undoes the held step and steps it. The last successor of a frame that the
// engine below does not hold takes the frame's own engine instead, stepped (the frame's state
// is not needed again): no copy. With successor prediction, a new successor whose fingerprint
// was predicted is not stepped at all until the search descends into it. A batched frame
// marks its successors visited when it is expanded, a lazy one when it comes to them; the
// stored states are the same (the persistent sets depend only on the state).
class DepthFirst {
 public:
  explicit DepthFirst(Search& s);
  void Run(Engine root);

 private:
  using Choice = engine::Choice;

  static constexpr size_t kNoStep = ~size_t{0};
  static constexpr size_t kNothing = ~size_t{0} - 1;
  struct Frame {
    explicit Frame(std::unique_ptr<Engine> e) : eng(std::move(e)) {}
    // The frame's engine, by pointer: the last successor takes it over by a swap.
    std::unique_ptr<Engine> eng;
    Engine& engine() { return *eng; }
    const Engine& engine() const { return *eng; }
    uint32_t id = 0;
    bool batched = false;
    // Lazy: the engine of the level below holds a successor of this frame's state, one step
    // from it (RestoreStep brings it back instead of a copy).
    bool below_ok = false;
    // The engine holds this frame's state (false once its last successor took it over).
    bool holds_state = true;
    size_t next = 0;
    // Batched: the engine of the level below holds this state and then this step (kNothing:
    // no state of this frame, it is made a copy when first needed; kNoStep, only inside the
    // expansion between an undo and the next step: this state). Set by the expansion (the
    // last successor it stepped) and by each descent.
    size_t held = kNoStep;
    // Lazy: the enabled steps and the ones to take.
    std::vector<Choice> choices;
    std::vector<uint8_t> take;
    // Batched: the new running successors.
    struct Kid {
      uint32_t id;  // its record
      uint64_t fp;
      uint32_t at;  // its step: choices[at]
    };
    std::vector<Kid> kids;
    // Successor prediction: the state's FingerprintSum, and per enabled step what it does
    // (known) and its successor's fingerprint when that is known without stepping (pred; 0:
    // not known).
    uint64_t sum = 0;
    std::vector<Known> known;
    std::vector<uint64_t> pred;
  };
  struct Succ {  // of the step choices[i] of the frame being expanded, at succ[i]
    uint64_t fp = 0;
    bool ended = false;
    bool seen = false;  // predicted to be a stored state (not stepped)
    bool used = false;  // a step taken (else not in the persistent set)
  };

  Frame& Stack(size_t i) { return *frames_[i]; }
  PARITY_DFS_INLINE Engine& CopyBelow(const Frame& f);
  inline void CarryFrom(Frame& g, const Frame& p, size_t at);
  inline void PrefetchCarried(const Frame& p, size_t at);
  inline void Carry(Frame& g, size_t at, uint64_t sum);
  PARITY_DFS_INLINE uint64_t DescentFp(const Engine& e, uint64_t* sum);
  PARITY_DFS_INLINE uint64_t StepLearn(Frame& f, size_t i, Engine& e, uint64_t* sum);
  void CountPredicted(Frame& f, size_t i);
  PARITY_DFS_INLINE bool PredictedSeen(Frame& f, size_t i);
  inline void Push(uint32_t id, size_t at, uint64_t sum);
  inline void ExpandBatched(Frame& f, uint32_t id);
  // A lazy frame's next successor: made, looked up, and descended into when new. false: a
  // bound stopped the search.
  PARITY_DFS_INLINE bool StepLazy(Frame& f);
  // A batched frame's next kid: its state made on the engine below and descended into.
  PARITY_DFS_INLINE void DescendBatched(Frame& f);

  Search& s_;
  // Not with assertions: a successor's state is predicted from the step's marks, and an
  // assert's reads mark objects without changing them (the prediction is not checked there).
  const bool predict_;
  engine::Footprint touched_;
  std::unique_ptr<AgentMemoTable> memo_;  // with predict_
  // Frames at fixed addresses (pushing keeps references to lower frames valid), indexed
  // without a deque's arithmetic.
  std::vector<std::unique_ptr<Frame>> frames_;
  std::vector<Succ> succ_;
  size_t depth_ = 0;
};

DepthFirst::DepthFirst(Search& s)
    : s_(s),
      predict_(s.options_.predict_successors && !s.options_.reduction && !s.sym_.visited &&
               !ir::HasAssertions(s.program_) &&
               std::none_of(s.program_.roles.begin(), s.program_.roles.end(),
                            [](const ir::Role& r) { return HasReadback(r.body); })) {
  if (predict_) memo_ = std::make_unique<AgentMemoTable>();
}

// The engine of the level below f (at `depth_`), made a copy of f's state.
Engine& DepthFirst::CopyBelow(const Frame& f) {
  if (depth_ == frames_.size()) {
    frames_.push_back(std::make_unique<Frame>(std::make_unique<Engine>(f.engine())));
  } else {
    Stack(depth_).engine() = f.engine();
  }
  return Stack(depth_).engine();
}

// The part of carry that frame g takes over from its parent p (g is p's state after p's step
// `at`).
void DepthFirst::CarryFrom(Frame& g, const Frame& p, size_t at) {
  const size_t n = g.choices.size();
  const Known& t = p.known[at];
  if (!t.valid) return;
  // The same step at the parent, found by position (Engine::Choices: the ready agents by
  // index, then the in-flight operations in their order). A delivery moves the last
  // operation into its place (Deliver); steps append operations, never remove others.
  const size_t np = p.choices.size();
  size_t pa = 0;  // the parent's agent choices
  while (pa < np && p.choices[pa].kind == Choice::Kind::kAgent) ++pa;
  const size_t ops = np - pa;
  const Choice tc = p.choices[at];
  size_t q = 0;
  for (size_t j = 0; j < n; ++j) {
    const Choice c = g.choices[j];
    size_t k = np;
    if (c.kind == Choice::Kind::kAgent) {
      while (q < pa && p.choices[q].index < c.index) ++q;
      if (q < pa && p.choices[q].index == c.index) k = q;
    } else {
      size_t y = c.index;  // its index at the parent, when it was in flight there
      if (tc.kind == Choice::Kind::kAsync && y == tc.index) {
        y = tc.index + 1 < ops ? ops - 1 : ops;
      } else if (tc.kind == Choice::Kind::kAsync && y + 1 >= ops) {
        y = ops;
      }
      if (y < ops) {
        k = pa + y;
        assert(!p.holds_state ||
               p.engine().in_flight_ops()[y] == g.engine().in_flight_ops()[c.index]);
      }
    }
    if (k == np || k == at || !p.known[k].valid || p.known[k].Meets(t)) continue;
    g.known[j] = p.known[k];
    g.pred[j] = Predictor::FinishFingerprint(g.sum + g.known[j].delta, Outcome::kRunning);
    // Its table line is on its way while the other successors are stepped.
    s_.seen_.Prefetch(g.pred[j]);
  }
}

// Before descending into p's successor by step `at`: starts loading the table lines of the
// successors carry_from will predict_ there (p's steps that commute with it, from p's sum
// and their differences), so that they arrive while the successor is stepped.
void DepthFirst::PrefetchCarried(const Frame& p, size_t at) {
  const Known& t = p.known[at];
  if (!t.valid) return;
  const uint64_t base = p.sum + t.delta;
  for (size_t k = 0; k < p.known.size(); ++k) {
    const Known& u = p.known[k];
    if (k == at || !u.valid || u.Meets(t)) continue;
    s_.seen_.Prefetch(Predictor::FinishFingerprint(base + u.delta, Outcome::kRunning));
  }
}

// Successor prediction: what frame g (reached from the frame below it by its step `at`)
// knows of its steps from that frame.
void DepthFirst::Carry(Frame& g, size_t at, uint64_t sum) {
  const size_t n = g.choices.size();
  g.sum = sum;
  g.known.assign(n, Known{});
  g.pred.assign(n, 0);
  if (depth_ >= 2) CarryFrom(g, Stack(depth_ - 2), at);
  // Deliveries that the engine fingerprints without stepping (Predictor::PeekDeliveryDelta:
  // byte deliveries): they change an mbarrier slot, their issuer's in-flight operations
  // and the status of the agents a completed phase wakes, which is what the step would
  // mark.
  const std::vector<engine::Engine::InFlight>& ops = g.engine().in_flight_ops();
  uint32_t woken[Predictor::kPeekWokenMax];
  uint32_t n_woken = 0;
  for (size_t j = n; j-- > 0 && g.choices[j].kind == Choice::Kind::kAsync;) {
    if (g.pred[j] != 0) continue;
    Known& k = g.known[j];
    if (!Predictor(g.engine())
             .PeekDeliveryDelta(g.choices[j].index, &k.delta, woken, &n_woken)) {
      continue;
    }
    const engine::Engine::InFlight& op = ops[g.choices[j].index];
    k.marked = ObjectBit(op.slot) | ObjectBit(g.engine().GroupsObject(op.agent));
    for (uint32_t x = 0; x < n_woken; ++x) {
      k.marked |= ObjectBit(g.engine().GroupsObject(woken[x]));
    }
    k.objects = k.marked;
    k.valid = true;
    g.pred[j] = Predictor::FinishFingerprint(g.sum + k.delta, Outcome::kRunning);
    s_.seen_.Prefetch(g.pred[j]);
  }
  // Agent steps the memo knows (AgentMemo). Their successors are running where another
  // step is enabled and the step limit is not reached (see defer_new in push).
  if (n < 2 || g.engine().result().steps + 1 >= g.engine().options().max_steps) return;
  for (size_t j = 0; j < n && g.choices[j].kind == Choice::Kind::kAgent; ++j) {
    if (g.pred[j] != 0 || !memo_->Find(g.engine(), g.choices[j].index, &g.known[j])) continue;
    g.pred[j] = Predictor::FinishFingerprint(g.sum + g.known[j].delta, Outcome::kRunning);
    s_.seen_.Prefetch(g.pred[j]);
    ++s_.res_.stats.memo_hits;
  }
}

// The VisitedFp of a state the search descends into, and when predicting its FingerprintSum
// (the same hash, before FinishFingerprint) in *sum.
uint64_t DepthFirst::DescentFp(const Engine& e, uint64_t* sum) {
  if (!predict_) {
    *sum = 0;
    return s_.VisitedFp(e);
  }
  return FingerprintAndSum(e, sum);
}

// Takes frame f's step i on e (a copy of f's state), learning what it does when predicting;
// returns the successor's VisitedFp (with a clean fingerprint cache), and when predicting
// its FingerprintSum in *sum.
uint64_t DepthFirst::StepLearn(Frame& f, size_t i, Engine& e, uint64_t* sum) {
  if (!predict_) {
    e.Step(f.choices[i]);
    return s_.VisitedFp(e);
  }
  touched_.Clear();
  e.Step(f.choices[i], &touched_);
  const uint64_t fp = Learn(f.known[i], e, touched_, f.sum, sum);  // (VisitedFp: Fingerprint)
  if (f.known[i].valid && f.choices[i].kind == Choice::Kind::kAgent) {
    memo_->Store(f.engine(), e, f.choices[i].index, touched_, f.known[i]);
  }
  return fp;
}

// Counts frame f's step i, predicted to go to a stored state, as a transition. Builds with
// assertions check every 8th such prediction by taking the step.
void DepthFirst::CountPredicted(Frame& f, size_t i) {
#ifndef NDEBUG
  thread_local uint32_t calls = 0;
  if ((calls++ & 7) == 0 && Engine::SelfChecks()) {
    Engine e = f.engine();
    e.Step(f.choices[i]);
    // The step must not end the run either: the prediction hit a stored running state.
    PARITY_CHECK(e.outcome() == Outcome::kRunning && s_.VisitedFp(e) == f.pred[i],
                 "explore: a successor's predicted fingerprint is wrong");
  }
#endif
  ++s_.res_.stats.transitions;
  ++s_.res_.stats.predicted;
}

// Whether frame f's step i goes to a stored state, known without stepping it (then counted).
bool DepthFirst::PredictedSeen(Frame& f, size_t i) {
  if (!predict_ || f.pred[i] == 0 || !s_.seen_.Contains(f.pred[i])) return false;
  CountPredicted(f, i);
  return true;
}

// Expands the frame at `depth_` (its engine holds the state, fingerprinted) and makes it the
// top; `at`: the index of the step that led to it in the frame below, and `sum` the state's
// FingerprintSum when predicting (for carry: not computed again).
void DepthFirst::Push(uint32_t id, size_t at, uint64_t sum) {
  Frame& f = Stack(depth_++);
  f.id = id;
  f.next = 0;
  f.below_ok = false;
  f.holds_state = true;
  f.held = kNothing;
  const size_t n = s_.Expand(s_.w0_, f.engine());
  s_.res_.stats.enabled += n;
  s_.res_.stats.pruned += n - s_.w0_.selected;
  ++s_.res_.stats.expanded;
  s_.res_.stats.depth = std::max<uint32_t>(s_.res_.stats.depth, static_cast<uint32_t>(depth_));
  f.batched = s_.seen_.bytes() >= s_.options_.batch_table_bytes;
  f.choices.swap(s_.w0_.choices);
  f.take.swap(s_.w0_.take);
  if (predict_) Carry(f, at, sum);
  if (f.batched) ExpandBatched(f, id);
}

// A batched frame's successors, generated together when it is expanded (see the class
// comment): the taken steps applied to the engine below, fingerprinted, their table lines
// prefetched, then inserted, and the new running ones kept as kids.
void DepthFirst::ExpandBatched(Frame& f, uint32_t id) {
  f.kids.clear();
  // The engine below, made a copy of f's state only when a step is taken (often every
  // successor is predicted and none is new: no copy).
  Engine* e = nullptr;
  // The successors in the order of the steps (as without prediction); the predicted ones
  // are looked up after the others are stepped, so that their table lines arrive meanwhile.
  succ_.assign(f.choices.size(), Succ{});
  // e holds f's state, or f's state and then step f.held (undone only when e is needed
  // again: the search descends into the successor e holds without stepping it again), or
  // is null while f.held is kNothing (no step taken yet: no copy made).
  auto restore = [&] {
    if (f.held == kNothing) {
      e = &CopyBelow(f);
    } else if (f.held != kNoStep) {
      e->RestoreStep(f.engine());
    }
    f.held = kNoStep;
  };
  auto step = [&](size_t i) {
    restore();
    uint64_t sum;
    const uint64_t fp = StepLearn(f, i, *e, &sum);
    s_.seen_.Prefetch(fp);
    succ_[i] = {fp, e->outcome() != Outcome::kRunning, false, true};
    f.held = i;
  };
  bool deferred = false;
  // Whether a predicted successor that is not stored yet is stored without stepping it
  // (its state is needed when the search descends into it, and only then is it stepped,
  // its fingerprint checked): it is known to be running. The run ends only where no agent
  // is ready and nothing is in flight (Exec::CheckEnd), or at the step limit; a step
  // leaves every other agent that is ready ready and every other operation in flight, so
  // with another step enabled it cannot end the run; and a step that commutes with the
  // one that led here cannot violate or fault where it did not (Learn records only
  // running successors). Collected barrier values need the state when it is stored.
  const bool defer_new = !s_.options_.collect_barrier_states && f.choices.size() >= 2 &&
                         f.engine().result().steps + 1 < f.engine().options().max_steps;
  const size_t n_choices = f.choices.size();
  // Last to be stepped: the first successor that is not predicted (the first new
  // successor is often that one).
  for (size_t i = n_choices; i-- > 0;) {
    if (!f.take[i]) continue;
    if (predict_ && f.pred[i] != 0) {  // prefetched by carry
      deferred = true;
      continue;
    }
    step(i);
  }
  for (size_t i = 0; deferred && i < n_choices; ++i) {
    if (!f.take[i] || f.pred[i] == 0) continue;
    if (s_.seen_.Contains(f.pred[i])) {
      succ_[i] = {f.pred[i], false, true, true};
    } else if (defer_new) {
      // A new running state: stepped only when the search descends into it.
      succ_[i] = {f.pred[i], false, false, true};
      ++s_.res_.stats.predicted_new;
    } else {
      step(i);
    }
  }
  for (uint32_t at = 0; at < n_choices; ++at) {
    const Succ& s = succ_[at];
    if (!s.used) continue;
    if (s_.done_ || s_.OutOfBounds()) return;
    if (s.seen) {
      CountPredicted(f, at);
      continue;
    }
    const uint32_t kid = s_.Insert(s.fp, id, f.choices[at]);
    if (kid == kRoot) continue;
    if (!s.ended && !s_.options_.collect_barrier_states) {
      f.kids.push_back({kid, s.fp, at});
      continue;
    }
    if (f.held != at) {  // else e holds it
      restore();
      e->Step(f.choices[at]);
      f.held = at;
    }
    bool keep = false;
    s_.Reached(*e, s.fp, kid, &keep);
    if (keep) f.kids.push_back({kid, s.fp, at});
  }
}

bool DepthFirst::StepLazy(Frame& f) {
  if (f.next == f.choices.size()) {
    --depth_;
    return true;
  }
  const size_t i = f.next++;
  if (!f.take[i]) return true;
  if (s_.OutOfBounds()) return false;
  if (PredictedSeen(f, i)) return true;
  // The previous successor's engine (or the state of its subtree's root: the subtree
  // used the engines below it) is brought back to f's state: cheaper than a copy.
  Engine& child = f.below_ok ? Stack(depth_).engine() : CopyBelow(f);
  if (f.below_ok) child.RestoreStep(f.engine());
  f.below_ok = true;
  uint64_t sum = 0;
  const uint64_t fp = StepLearn(f, i, child, &sum);
  bool keep = false;
  const uint32_t id = s_.Visit(child, fp, f.id, f.choices[i], &keep);
  if (keep) Push(id, i, sum);
  return true;
}

void DepthFirst::DescendBatched(Frame& f) {
  if (f.next == f.kids.size()) {
    --depth_;
    return;
  }
  const Frame::Kid kid = f.kids[f.next++];
  if (predict_) PrefetchCarried(f, kid.at);
  if (f.next == f.kids.size() && f.held != kid.at) {
    // f's last successor, not held below: f's state is needed no more, so f's own engine
    // is stepped and handed to the successor's frame (no copy of the state), and the
    // engine below f takes its place. The frame below f (f's parent) no longer has f's
    // state in the engine above it.
    f.engine().Step(f.choices[kid.at]);
    if (depth_ == frames_.size()) {
      frames_.push_back(std::make_unique<Frame>(std::move(f.eng)));
      // (A placeholder: any engine of the program will do.)
      f.eng = std::make_unique<Engine>(Stack(depth_).engine());
    } else {
      std::swap(f.eng, Stack(depth_).eng);
    }
    f.holds_state = false;
    f.held = kNothing;
    if (depth_ >= 2) {
      Stack(depth_ - 2).held = kNothing;
      Stack(depth_ - 2).below_ok = false;
    }
  } else {
    // The engine below holds f's state, or f's state and then step f.held (the subtrees
    // below used the engines below it), or none of f's states yet.
    Engine& below = f.held == kNothing ? CopyBelow(f) : Stack(depth_).engine();
    if (f.held != kid.at) {
      if (f.held != kNoStep && f.held != kNothing) below.RestoreStep(f.engine());
      below.Step(f.choices[kid.at]);
      f.held = kid.at;
    }
  }
  // Also leaves the child's fingerprint cache clean, which RestoreStep needs. A successor
  // stored by its predicted fingerprint is checked here, at its first step.
  const Engine& child = Stack(depth_).engine();
  uint64_t sum;
  const uint64_t fp = DescentFp(child, &sum);
  PARITY_CHECK(fp == kid.fp && child.outcome() == Outcome::kRunning,
               "explore: a stored successor is not the state its step leads to");
  Push(kid.id, kid.at, sum);
}

void DepthFirst::Run(Engine root) {
  frames_.push_back(std::make_unique<Frame>(std::make_unique<Engine>(std::move(root))));
  Push(0, 0, predict_ ? Predictor(Stack(0).engine()).FingerprintSum() : 0);
  while (depth_ != 0 && !s_.done_ && !s_.stopped_) {
    Frame& f = Stack(depth_ - 1);
    if (!f.batched) {
      if (!StepLazy(f)) break;
    } else {
      DescendBatched(f);
    }
  }
  s_.res_.stats.peak_frontier = s_.res_.stats.depth;  // engines on the deepest path
}

void Search::Dfs(Engine root) { DepthFirst(*this).Run(std::move(root)); }

#undef PARITY_DFS_INLINE

}  // namespace parity::verifier::explore
