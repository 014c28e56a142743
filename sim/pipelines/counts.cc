#include "sim/pipelines/counts.h"

#include <charconv>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

namespace parity::pipelines {
namespace {

// PTX ISA 9.7.13.15 (mbarrier): the expected arrival count is 1..2^20-1 and the tx-count
// -(2^20-1)..2^20-1; a phase cannot complete while more bytes are pending than that.
constexpr int64_t kMaxCount = (int64_t{1} << 20) - 1;
constexpr int64_t kMaxTx = (int64_t{1} << 20) - 1;
constexpr int kThreadsPerWarpgroup = 128;
constexpr int kWarpsPerWarpgroup = 4;
constexpr int kMaxClusterSize = 16;  // non-portable maximum on sm_90 (portable: 8)
// cp.async copies 4, 8 or 16 bytes (.cg: 16 only); multistage mainloops use 16-byte copies.
constexpr int64_t kCpAsyncBytes = 16;
// The largest shared memory a block may opt into: compute capability 8.0 (A100) 163 KB,
// 9.0 (H100) 227 KB (CUDA C++ Programming Guide, technical specifications per compute
// capability).
constexpr int64_t kMaxSmemSm80 = 163 * 1024;
constexpr int64_t kMaxSmemSm90 = 227 * 1024;

std::string Str(int64_t v) { return std::to_string(v); }

Status Param(const std::string& message) { return Status("counts.param", message); }

// Arrivals per consumer warpgroup per released barrier.
int ArrivalsPerWarpgroup(Signal s) {
  switch (s) {
    case Signal::kWarp:
      return kWarpsPerWarpgroup;
    case Signal::kThread:
      return kThreadsPerWarpgroup;
    default:
      return 1;
  }
}

std::string_view SignalUnit(Signal s) {
  switch (s) {
    case Signal::kWarp:
      return "warp";
    case Signal::kThread:
      return "thread";
    default:
      return "warpgroup";
  }
}

Signal ResolveSignal(const CountsRequest& r) {
  if (r.signal != Signal::kAuto) return r.signal;
  return r.cluster_m * r.cluster_n == 1 ? Signal::kThread : Signal::kWarpgroup;
}

// The number of CTAs whose consumers release this CTA's stage: the CTAs it multicasts to
// (itself included), which by symmetry of the row/column masks are the CTAs that write into it.
int64_t ReleasingCtas(const CountsRequest& r) {
  switch (r.multicast) {
    case Multicast::kNone:
      return 1;
    case Multicast::kA:
      return r.cluster_n;
    case Multicast::kB:
      return r.cluster_m;
    case Multicast::kAB:
      return r.cluster_m + r.cluster_n - 1;
  }
  return 1;
}

std::string ReleasingCtasText(const CountsRequest& r) {
  if (r.cluster_m * r.cluster_n == 1) return "1 CTA";
  switch (r.multicast) {
    case Multicast::kNone:
      return "1 CTA";
    case Multicast::kA:
      return "cluster_n " + Str(r.cluster_n);
    case Multicast::kB:
      return "cluster_m " + Str(r.cluster_m);
    case Multicast::kAB:
      return "(cluster_m + cluster_n - 1)";
  }
  return "";
}

struct TmaAsyncNumbers {
  int64_t releasing_ctas = 1;
  int64_t per_wg = 1;
  int64_t empty = 0;
  int64_t a_bytes = 0;
  int64_t b_bytes = 0;
};

TmaAsyncNumbers TmaAsyncCompute(const CountsRequest& r) {
  TmaAsyncNumbers n;
  n.releasing_ctas = ReleasingCtas(r);
  n.per_wg = ArrivalsPerWarpgroup(ResolveSignal(r));
  n.empty = n.releasing_ctas * r.consumers * n.per_wg;
  n.a_bytes = r.tile_a_m * r.tile_a_k * r.elem_bytes;
  n.b_bytes = r.tile_b_n * r.tile_b_k * r.elem_bytes;
  return n;
}

Status ValidateTmaAsync(const CountsRequest& r) {
  if (r.cluster_m < 1 || r.cluster_n < 1 || r.cluster_m * r.cluster_n > kMaxClusterSize) {
    return Param("--cluster " + Str(r.cluster_m) + "x" + Str(r.cluster_n) +
                 ": each extent must be >= 1 and the cluster at most 16 CTAs (sm_90)");
  }
  if (r.consumers < 1 || r.consumers > 8) {
    return Param("--consumers " + Str(r.consumers) + ": consumer warpgroups per CTA must be 1..8");
  }
  if (r.tile_a_m < 1 || r.tile_a_k < 1 || r.tile_b_n < 1 || r.tile_b_k < 1) {
    return Param("--tile-a MxK and --tile-b NxK are required and must be positive");
  }
  if (r.tile_a_k != r.tile_b_k) {
    return Param("--tile-a K (" + Str(r.tile_a_k) + ") differs from --tile-b K (" +
                 Str(r.tile_b_k) + "): both tiles of a stage cover the same K slice");
  }
  if (r.multicast == Multicast::kA || r.multicast == Multicast::kAB) {
    if (r.tile_a_m % r.cluster_n != 0) {
      return Param("A is multicast along N in cluster_n = " + Str(r.cluster_n) +
                   " slices, but tile-a M = " + Str(r.tile_a_m) + " is not a multiple");
    }
  }
  if (r.multicast == Multicast::kB || r.multicast == Multicast::kAB) {
    if (r.tile_b_n % r.cluster_m != 0) {
      return Param("B is multicast along M in cluster_m = " + Str(r.cluster_m) +
                   " slices, but tile-b N = " + Str(r.tile_b_n) + " is not a multiple");
    }
  }
  return Status::Ok();
}

Status ValidateStages(int stages) {
  if (stages < 1 || stages > 64) return Param("--stages " + Str(stages) + " must be 1..64");
  return Status::Ok();
}

CountItem Item(std::string key, std::string_view name, int64_t value, std::string formula,
               std::string reason) {
  CountItem i;
  i.key = std::move(key);
  i.value = value;
  i.derivation = std::string(name) + " = " + (formula.empty() ? "" : formula + " = ") +
                 Str(value) + ": " + reason;
  i.formula = std::move(formula);
  i.reason = std::move(reason);
  return i;
}

Expected<CountsResult> TmaAsync(const CountsRequest& r) {
  PARITY_RETURN_IF_ERROR(ValidateTmaAsync(r));
  PARITY_RETURN_IF_ERROR(ValidateStages(r.stages));
  const TmaAsyncNumbers n = TmaAsyncCompute(r);
  const Signal sig = ResolveSignal(r);
  CountsResult out;

  out.items.push_back(Item("init.full", "full", 1, "",
                           "only the producer leader's mbarrier.arrive.expect_tx arrives; the "
                           "TMA loads (this CTA's and peers' multicast) complete bytes, not "
                           "arrivals"));

  std::string f = ReleasingCtasText(r) + " x " + Str(r.consumers) + " warpgroup" +
                  (r.consumers == 1 ? "" : "s");
  if (n.per_wg != 1) f += " x " + Str(n.per_wg) + " " + std::string(SignalUnit(sig)) + "s";
  std::string why;
  const int64_t size = int64_t{r.cluster_m} * r.cluster_n;
  if (size == 1) {
    why = "a single-CTA cluster: only this CTA's consumers release";
    if (sig == Signal::kThread) {
      why += "; CUTLASS's PipelineTmaAsync then has every consumer thread arrive "
             "(init count = num_consumers threads)";
    }
  } else if (r.multicast == Multicast::kNone) {
    why = "no multicast: only this CTA's own consumers read its buffers, so only they release";
  } else {
    const char* where = r.multicast == Multicast::kAB  ? "its row and column"
                        : r.multicast == Multicast::kA ? "its column (same cta_x)"
                                                       : "its row (same cta_y)";
    why = "a CTA receives a release from every consumer " + std::string(SignalUnit(sig)) +
          " of each CTA it multicast to (" + where + ")";
    if (r.multicast == Multicast::kAB) why += ", itself counted once";
  }
  out.items.push_back(Item("init.empty", "empty", n.empty, f, why));

  const int64_t tx = n.a_bytes + n.b_bytes;
  std::string t = "A " + Str(r.tile_a_m) + "x" + Str(r.tile_a_k) + " + B " + Str(r.tile_b_n) +
                  "x" + Str(r.tile_b_k) + " elements x " + Str(r.elem_bytes) + " bytes = " +
                  Str(n.a_bytes) + " + " + Str(n.b_bytes);
  std::string tr = "the bytes of every tile landing in THIS CTA per stage";
  if (r.multicast != Multicast::kNone && size > 1) {
    tr += " (peers' multicast slices complete_tx on this CTA's barrier at the same offset)";
  }
  out.items.push_back(Item("tx.full", "tx", tx, t, tr));
  out.items.push_back(Item("stages", "stages", r.stages, "",
                           "one full and one empty barrier per stage; the producer starts on "
                           "phase 1, consumers on phase 0"));
  if (tx > kMaxTx) {
    out.notes.push_back("tx.full = " + Str(tx) + " exceeds the mbarrier tx-count limit 2^20-1 "
                        "(PTX ISA 9.7.13.15): split the stage");
  }
  if (n.empty > kMaxCount) out.notes.push_back("init.empty exceeds the count limit 2^20-1");
  return out;
}

Expected<CountsResult> Async(const CountsRequest& r) {
  if (r.producers < 1 || r.producers > kMaxCount || r.consumers < 1 ||
      r.consumers > kMaxCount) {
    return Param("--producers and --consumers (arriving threads) must be 1..2^20-1");
  }
  PARITY_RETURN_IF_ERROR(ValidateStages(r.stages));
  CountsResult out;
  out.items.push_back(Item("init.full", "full", r.producers, "producers",
                           "every producer thread arrives once in producer_commit "
                           "(PipelineAsync: init count = producer_arv_count)"));
  out.items.push_back(Item("init.empty", "empty", r.consumers, "consumers",
                           "every consumer thread arrives once in consumer_release "
                           "(PipelineAsync: init count = consumer_arv_count)"));
  out.items.push_back(Item("stages", "stages", r.stages, "",
                           "one full and one empty barrier per stage; no tx bytes (plain "
                           "arrives)"));
  return out;
}

Expected<CountsResult> TmaStore(const CountsRequest& r) {
  PARITY_RETURN_IF_ERROR(ValidateStages(r.stages));
  CountsResult out;
  out.notes.push_back(
      "no mbarriers: TMA stores complete through bulk async-groups (cp.async.bulk.commit_group)");
  out.items.push_back(Item("wait_group.read", "wait_group.read", r.stages - 1, "stages - 1",
                           "before rewriting a buffer, wait until at most stages - 1 committed "
                           "store groups still read shared memory, so the oldest one (whose "
                           "buffer is reused) has finished reading"));
  out.items.push_back(Item("stages", "stages", r.stages, "", "one buffer per store group"));
  return out;
}

Expected<CountsResult> CpAsync(const CountsRequest& r) {
  if (r.stages < 2 || r.stages > 64) {
    return Param("--stages " + Str(r.stages) +
                 " must be 2..64: a multistage loop reads one stage while the others fill");
  }
  const bool tiles = r.tile_a_m != 0 || r.tile_a_k != 0 || r.tile_b_n != 0 || r.tile_b_k != 0;
  if (tiles) {
    if (r.tile_a_m < 1 || r.tile_a_k < 1 || r.tile_b_n < 1 || r.tile_b_k < 1) {
      return Param("--tile-a MxK and --tile-b NxK go together and must be positive");
    }
    if (r.tile_a_k != r.tile_b_k) {
      return Param("--tile-a K (" + Str(r.tile_a_k) + ") differs from --tile-b K (" +
                   Str(r.tile_b_k) + "): both tiles of a stage cover the same K slice");
    }
  }
  if (r.threads < 1 || r.threads > 1024) return Param("--threads must be 1..1024");
  CountsResult out;
  out.notes.push_back(
      "no mbarriers: cp.async copies complete through cp.async-groups (cp.async.commit_group / "
      "cp.async.wait_group), and __syncthreads after each wait makes every thread's landed "
      "copies visible to the block");
  out.items.push_back(Item("stages", "stages", r.stages, "",
                           "shared-memory buffers of A and B; one is read by the MMAs while the "
                           "others are being filled"));
  out.items.push_back(Item("prefetch", "prefetch", r.stages - 1, "stages - 1",
                           "the prologue issues this many k-tiles (one group each) before the "
                           "main loop, and each iteration issues one more into the stage read "
                           "last; the stage being read cannot be filled at the same time"));
  out.items.push_back(Item("commit.per_ktile", "commit", 1, "",
                           "one cp.async.commit_group per k-tile (also in the tail, where the "
                           "group may be empty) keeps one group per stage, which wait_group N "
                           "counts"));
  out.items.push_back(Item("wait_group", "wait_group", r.stages - 2, "prefetch - 1 = stages - 2",
                           "when a stage is about to be read, up to `prefetch` committed groups "
                           "are pending and the oldest of them holds that stage; "
                           "cp.async.wait_group N lets only the N youngest stay pending, so "
                           "N = prefetch - 1 waits for exactly the oldest"));
  if (tiles) {
    const int64_t a = r.tile_a_m * r.tile_a_k * r.elem_bytes;
    const int64_t b = r.tile_b_n * r.tile_b_k * r.elem_bytes;
    out.items.push_back(Item("bytes.stage", "stage bytes", a + b,
                             "A " + Str(r.tile_a_m) + "x" + Str(r.tile_a_k) + " + B " +
                                 Str(r.tile_b_n) + "x" + Str(r.tile_b_k) + " elements x " +
                                 Str(r.elem_bytes) + " bytes = " + Str(a) + " + " + Str(b),
                             "one k-tile of A and of B per stage"));
    const int64_t smem = r.stages * (a + b);
    out.items.push_back(Item("smem.bytes", "shared memory", smem, "stages x stage bytes",
                             "every stage is resident at once"));
    if (smem > kMaxSmemSm90) {
      out.notes.push_back("smem.bytes = " + Str(smem) + " exceeds the 227 KB a block can have "
                          "even on sm_90: fewer stages or smaller tiles");
    } else if (smem > kMaxSmemSm80) {
      out.notes.push_back("smem.bytes = " + Str(smem) + " exceeds the 163 KB a block can have "
                          "on sm_80 (A100); it fits sm_90's 227 KB");
    }
    const int64_t per_copy = kCpAsyncBytes * r.threads;
    const int64_t copies = (a + b + per_copy - 1) / per_copy;
    out.items.push_back(Item("copies.per_thread", "copies", copies,
                             "ceil(stage bytes / (16 bytes x " + Str(r.threads) + " threads))",
                             "16-byte cp.async per thread and stage (cp.async.cg copies 16 "
                             "bytes)"));
    if ((a % (kCpAsyncBytes * r.threads)) != 0 || (b % (kCpAsyncBytes * r.threads)) != 0) {
      out.notes.push_back("a tile's bytes are not a multiple of 16 x " + Str(r.threads) +
                          " threads: some threads copy less than the others, or a tail needs "
                          "narrower (4- or 8-byte .ca) copies");
    }
  }
  return out;
}

Expected<CountsResult> SingleTma(const CountsRequest& r) {
  if (r.box.empty() || r.box.size() > 5) return Param("--box needs 1..5 extents");
  for (int64_t e : r.box) {
    if (e < 1 || e > 256) return Param("--box extent " + Str(e) + " is outside 1..256");
  }
  if (r.threads < 1 || r.threads > 1024) return Param("--threads must be 1..1024");
  int64_t bytes = r.elem_bytes;
  std::string dims;
  for (size_t i = 0; i < r.box.size(); ++i) {
    bytes *= r.box[i];
    dims += (i ? "x" : "") + Str(r.box[i]);
  }
  CountsResult out;
  if (r.threads == 1) {
    out.items.push_back(Item("init.full", "full", 1, "",
                             "one thread's mbarrier.arrive.expect_tx is the only arrival; the "
                             "TMA completes bytes, not arrivals"));
  } else {
    out.items.push_back(Item("init.full", "full", r.threads, "threads",
                             "every thread arrives, one of them with arrive.expect_tx (an "
                             "arrive that also raises tx-count by the bytes), the others with a "
                             "plain arrive"));
  }
  out.items.push_back(Item("tx.full", "tx", bytes,
                           "box " + dims + " elements x " + Str(r.elem_bytes) + " bytes",
                           "complete_tx credits the whole box, out-of-bound elements included"));
  if (bytes > kMaxTx) {
    out.notes.push_back("tx.full exceeds the mbarrier tx-count limit 2^20-1 (PTX ISA 9.7.13.15)");
  }
  return out;
}

std::string ExplainTmaAsync(const CountsRequest& r, const std::string& key, int64_t yours) {
  const TmaAsyncNumbers n = TmaAsyncCompute(r);
  const int64_t size = int64_t{r.cluster_m} * r.cluster_n;
  if (key == "init.full") {
    if (yours == 0) return "a count of 0 is outside 1..2^20-1 (PTX ISA mbarrier.init)";
    if (yours == 32 || yours == 128) {
      return "only the elected producer leader arrives; the rest of its warp/warpgroup does not";
    }
    if (yours == 2 || (size > 1 && (yours == size || yours == n.releasing_ctas))) {
      return "the TMA loads (this CTA's and peers' multicast) perform complete_tx, which counts "
             "bytes, not arrivals";
    }
    return "";
  }
  if (key == "init.empty") {
    const int64_t k = r.consumers;
    if (yours == 0) return "a count of 0 is outside 1..2^20-1 (PTX ISA mbarrier.init)";
    if (size != n.releasing_ctas && yours == size * k * n.per_wg) {
      return "you counted all " + Str(size) + " CTAs of the cluster, but only the " +
             Str(n.releasing_ctas) + " in this CTA's " +
             (r.multicast == Multicast::kAB   ? "row and column"
              : r.multicast == Multicast::kA  ? "column"
              : r.multicast == Multicast::kB  ? "row"
                                              : "own position") +
             " multicast into it";
    }
    if (r.multicast == Multicast::kAB && size > 1 &&
        yours == (r.cluster_m + r.cluster_n) * k * n.per_wg) {
      return "you counted this CTA twice (it is in both its row and its column): subtract 1";
    }
    if (n.releasing_ctas > 1 && yours == k * n.per_wg) {
      return "you counted only this CTA's consumers, but the " + Str(n.releasing_ctas - 1) +
             " peers it multicasts to also release its stage";
    }
    for (Signal s : {Signal::kWarpgroup, Signal::kWarp, Signal::kThread}) {
      const int64_t per = ArrivalsPerWarpgroup(s);
      if (per != n.per_wg && yours == n.releasing_ctas * k * per) {
        return "you counted one arrival per " + std::string(SignalUnit(s)) +
               ", but the pipeline signals once per " +
               std::string(SignalUnit(ResolveSignal(r))) + " of each consumer warpgroup" +
               (r.signal == Signal::kAuto ? " (CUTLASS's choice; pass --signal " +
                                                std::string(SignalUnit(s)) +
                                                " if yours arrives once per " +
                                                std::string(SignalUnit(s)) + ")"
                                          : "");
      }
    }
    if (k > 1 && yours == n.releasing_ctas * n.per_wg) {
      return "you did not multiply by the " + Str(k) + " consumer warpgroups per CTA";
    }
    return "";
  }
  if (key == "tx.full") {
    const int64_t tx = n.a_bytes + n.b_bytes;
    if (size > 1 && yours == tx * size) {
      return "you multiplied by the cluster size; each CTA's full barrier counts only the bytes "
             "landing in that CTA";
    }
    if (n.releasing_ctas > 1 && yours == tx * n.releasing_ctas) {
      return "you multiplied by the multicast fan-out; each CTA's full barrier counts only the "
             "bytes landing in that CTA";
    }
    const int64_t a_own = (r.multicast == Multicast::kA || r.multicast == Multicast::kAB)
                              ? n.a_bytes / r.cluster_n
                              : n.a_bytes;
    const int64_t b_own = (r.multicast == Multicast::kB || r.multicast == Multicast::kAB)
                              ? n.b_bytes / r.cluster_m
                              : n.b_bytes;
    if (yours == a_own + b_own && a_own + b_own != tx) {
      return "you counted only the slices this CTA issues (" + Str(a_own) + " + " + Str(b_own) +
             "); the slices peers multicast also complete_tx on this CTA's barrier";
    }
    if (yours == n.a_bytes) return "you left out the B tile (" + Str(n.b_bytes) + " bytes)";
    if (yours == n.b_bytes) return "you left out the A tile (" + Str(n.a_bytes) + " bytes)";
    if (yours > kMaxTx) return "it is also above the tx-count limit 2^20-1";
    return "";
  }
  return "";
}

std::string ExplainCpAsync(const CountsRequest& r, const std::string& key, int64_t yours,
                           int64_t correct) {
  if (key == "wait_group") {
    if (yours > correct) {
      return "wait_group " + Str(yours) + " lets the group of the stage about to be read stay "
             "pending: the MMAs read shared memory the copies are still writing (a race; `parity "
             "check` reports P2005 on such a schedule)";
    }
    return "safe, but it also waits for the " + Str(correct - yours) + " youngest prefetch" +
           (correct - yours == 1 ? "" : "es") + ", so fewer copies overlap the MMAs" +
           (yours == 0 ? " (wait_group 0 drains the whole pipeline every k-tile)" : "");
  }
  if (key == "prefetch") {
    if (yours >= r.stages) {
      return "one stage is always being read, so at most stages - 1 can be filling; prefetching " +
             Str(yours) + " overwrites a stage the MMAs still read";
    }
    return "legal, but " + Str(correct - yours) + " stage" + (correct - yours == 1 ? "" : "s") +
           " stay idle; and wait_group must then be " + Str(yours) + " - 1, not stages - 2";
  }
  if (key == "commit.per_ktile") {
    if (yours == 0) {
      return "copies issued after the last commit join no group, and cp.async.wait_group waits "
             "for committed groups only (A1001): the stage is read before it lands";
    }
    return "with " + Str(yours) + " groups per k-tile, wait_group N counts groups, not stages: "
           "N must become (stages - 2) x " + Str(yours);
  }
  if (key == "copies.per_thread" && yours * 2 == correct) {
    return "you counted one of the two tiles (A and B both land in every stage)";
  }
  return "";
}

std::string ExplainOther(const CountsRequest& r, const std::string& key, int64_t yours,
                         int64_t correct) {
  if (yours == 0 && key.rfind("init.", 0) == 0) {
    return "a count of 0 is outside 1..2^20-1 (PTX ISA mbarrier.init)";
  }
  if (r.kind == PipelineKind::kAsync && key.rfind("init.", 0) == 0) {
    if (yours * 32 == correct) return "you counted warps, but every thread arrives";
    if (yours * 128 == correct) return "you counted warpgroups, but every thread arrives";
  }
  if (r.kind == PipelineKind::kTmaStore && key == "wait_group.read") {
    if (yours > correct) {
      return "that lets the store group still reading the buffer about to be rewritten stay in "
             "flight (a shared-memory race)";
    }
    return "safe, but it waits for more stores than needed and serialises the pipeline";
  }
  if (r.kind == PipelineKind::kSingleTma) {
    if (key == "init.full" && r.threads > 1 && yours == 1) {
      return "every one of the " + Str(r.threads) + " threads arrives, so the phase would "
             "complete early and later arrivals spill into the next phase";
    }
    if (key == "init.full" && r.threads == 1 && yours > 1) {
      return "only one thread arrives, so the phase never completes (hang)";
    }
    if (key == "tx.full" && r.threads > 1 && yours == correct * r.threads) {
      return "only one thread expects the bytes; you multiplied by the arriving threads";
    }
  }
  return "";
}

Expected<int64_t> ParseInt(std::string_view text, std::string_view what) {
  int64_t v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || v < 0) {
    return Status("counts.parse",
                  std::string(what) + ": '" + std::string(text) + "' is not a non-negative integer");
  }
  return v;
}

}  // namespace

std::string_view KindName(PipelineKind kind) {
  switch (kind) {
    case PipelineKind::kTmaAsync:
      return "tma-async";
    case PipelineKind::kAsync:
      return "async";
    case PipelineKind::kTmaStore:
      return "tma-store";
    case PipelineKind::kSingleTma:
      return "single-tma";
    case PipelineKind::kCpAsync:
      return "cp-async";
  }
  return "?";
}

Expected<CountsResult> ComputeCounts(const CountsRequest& request) {
  switch (request.kind) {
    case PipelineKind::kTmaAsync:
      return TmaAsync(request);
    case PipelineKind::kAsync:
      return Async(request);
    case PipelineKind::kTmaStore:
      return TmaStore(request);
    case PipelineKind::kSingleTma:
      return SingleTma(request);
    case PipelineKind::kCpAsync:
      return CpAsync(request);
  }
  return Param("unknown pipeline kind");
}

Expected<std::vector<CheckOutcome>> CheckCounts(
    const CountsRequest& request, const CountsResult& result,
    const std::vector<std::pair<std::string, int64_t>>& claims) {
  std::vector<CheckOutcome> out;
  for (const auto& [key, yours] : claims) {
    const CountItem* item = nullptr;
    for (const CountItem& i : result.items) {
      if (i.key == key) item = &i;
    }
    if (item == nullptr) {
      std::string known;
      for (const CountItem& i : result.items) known += (known.empty() ? "" : ", ") + i.key;
      return Status("counts.key", "--check key '" + key + "' is not a count of " +
                                      std::string(KindName(request.kind)) + " (known: " +
                                      known + ")");
    }
    CheckOutcome o;
    o.key = key;
    o.yours = yours;
    o.correct = item->value;
    o.match = yours == item->value;
    if (!o.match) {
      std::string why = request.kind == PipelineKind::kTmaAsync
                            ? ExplainTmaAsync(request, key, yours)
                        : request.kind == PipelineKind::kCpAsync
                            ? ExplainCpAsync(request, key, yours, item->value)
                            : ExplainOther(request, key, yours, item->value);
      o.explanation = key + ": you have " + Str(yours) + ", correct is " + Str(item->value) +
                      (item->formula.empty() ? "" : " = " + item->formula) + ": " +
                      (why.empty() ? item->reason : why);
    }
    out.push_back(std::move(o));
  }
  return out;
}

Expected<PipelineKind> ParseKind(std::string_view text) {
  for (PipelineKind k : {PipelineKind::kTmaAsync, PipelineKind::kAsync, PipelineKind::kTmaStore,
                         PipelineKind::kSingleTma, PipelineKind::kCpAsync}) {
    if (text == KindName(k)) return k;
  }
  return Status("counts.parse", "unknown pipeline kind '" + std::string(text) +
                                    "' (tma-async, async, tma-store, single-tma, cp-async)");
}

Expected<Signal> ParseSignal(std::string_view text) {
  if (text == "auto") return Signal::kAuto;
  if (text == "warpgroup") return Signal::kWarpgroup;
  if (text == "warp") return Signal::kWarp;
  if (text == "thread") return Signal::kThread;
  return Status("counts.parse",
                "--signal '" + std::string(text) + "' (auto, warpgroup, warp, thread)");
}

Expected<Multicast> ParseMulticast(std::string_view text) {
  if (text == "none") return Multicast::kNone;
  if (text == "a") return Multicast::kA;
  if (text == "b") return Multicast::kB;
  if (text == "ab") return Multicast::kAB;
  return Status("counts.parse", "--multicast '" + std::string(text) + "' (none, a, b, ab)");
}

Expected<int> ParseDtypeBytes(std::string_view t) {
  for (std::string_view n : {"f8", "e4m3", "e5m2", "s8", "u8"}) {
    if (t == n) return 1;
  }
  for (std::string_view n : {"f16", "bf16", "s16", "u16"}) {
    if (t == n) return 2;
  }
  for (std::string_view n : {"f32", "tf32", "s32", "u32"}) {
    if (t == n) return 4;
  }
  for (std::string_view n : {"f64", "s64", "u64"}) {
    if (t == n) return 8;
  }
  return Status("counts.parse", "unknown --dtype '" + std::string(t) + "'");
}

Expected<std::vector<int64_t>> ParseDims(std::string_view text) {
  std::vector<int64_t> out;
  size_t pos = 0;
  while (true) {
    const size_t sep = text.find_first_of("x,", pos);
    const std::string_view item =
        text.substr(pos, sep == std::string_view::npos ? std::string_view::npos : sep - pos);
    Expected<int64_t> v = ParseInt(item, "dimension");
    if (!v.ok()) return v.status();
    if (*v == 0) return Status("counts.parse", "dimension '" + std::string(text) + "' has a 0");
    out.push_back(*v);
    if (sep == std::string_view::npos) break;
    pos = sep + 1;
  }
  if (out.size() > 5) return Status("counts.parse", "'" + std::string(text) + "': at most 5 dims");
  return out;
}

Expected<std::pair<int64_t, int64_t>> ParsePair(std::string_view text) {
  Expected<std::vector<int64_t>> d = ParseDims(text);
  if (!d.ok()) return d.status();
  if (d->size() != 2) {
    return Status("counts.parse", "'" + std::string(text) + "' is not of the form MxN");
  }
  return std::make_pair((*d)[0], (*d)[1]);
}

Expected<std::pair<std::string, int64_t>> ParseClaim(std::string_view text) {
  const size_t eq = text.find('=');
  if (eq == std::string_view::npos || eq == 0) {
    return Status("counts.parse", "--check '" + std::string(text) + "' is not key=value");
  }
  Expected<int64_t> v = ParseInt(text.substr(eq + 1), "--check " + std::string(text.substr(0, eq)));
  if (!v.ok()) return v.status();
  return std::make_pair(std::string(text.substr(0, eq)), *v);
}

}  // namespace parity::pipelines
