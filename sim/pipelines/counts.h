// The correct mbarrier init counts and tx bytes of well-known Hopper pipelines, each with a
// one-line derivation, and a comparison of a user's numbers against them.
//
// The rules follow CUTLASS's include/cutlass/pipeline/sm90_pipeline.hpp (read for this library):
//   PipelineTmaAsync::init_barriers: full count = num_producers (default 1: the producer leader's
//     arrive.expect_tx); empty count = num_consumers (consumer THREADS) when the cluster has one
//     CTA, else (cluster_m + cluster_n - 1) x ceil_div(num_consumers, 128). The constructor makes
//     every consumer thread a signalling thread for a 1-CTA cluster; otherwise it spreads one
//     arrive per consumer warpgroup (or per consumer warp when num_consumers == 32) to each CTA of
//     the same row or column (is_same_row_or_col).
//     Older CUTLASS releases had no 1-CTA special case (empty = (M + N - 1) x num_consumers / 128
//     for every cluster, one elected arrive per warpgroup); pass --signal warpgroup for those.
//     CUTLASS's single-warp consumer (num_consumers == 32) is not modelled: kWarp here means
//     one arrive per warp of each consumer warpgroup (4 per warpgroup).
//   The non-CUTLASS multicast variants (A only, B only, none) follow the same rule: a CTA's
//     empty barrier needs one release from each CTA whose buffers it writes into.
//   PipelineAsync: full count = producer_arv_count, empty count = consumer_arv_count; every
//     producer thread arrives in producer_commit, every consumer thread in consumer_release.
//   PipelineTmaStore: no mbarriers; producer_acquire waits with tma_store_wait<Stages - 1>
//     (cp.async.bulk.wait_group.read), so at most Stages - 1 committed store groups still read
//     shared memory when a buffer is rewritten.
//   Ampere multistage cp.async loop (CUTLASS's MmaMultistage, CuTe's sgemm_sm80 tutorial): no
//     mbarriers; Stages shared-memory buffers, one cp.async-group committed per k-tile; the
//     prologue issues Stages - 1 k-tiles, and before a stage is read cp.async.wait_group
//     Stages - 2 (then __syncthreads) lets only the Stages - 2 youngest groups stay pending, so
//     the oldest (the stage about to be read) has landed (PTX ISA 9.7.9.25.3.5
//     cp.async.wait_group: it waits for committed groups only).
// Count ranges: PTX ISA 9.7.13.15 (mbarrier): count 1..2^20-1, tx-count -(2^20-1)..2^20-1.
//
// Pure library: no I/O. Bad input is reported through Status (rule "counts.*").
#ifndef PARITY_SIM_PIPELINES_COUNTS_H_
#define PARITY_SIM_PIPELINES_COUNTS_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sim/common/status.h"

namespace parity::pipelines {

enum class PipelineKind { kTmaAsync, kAsync, kTmaStore, kSingleTma, kCpAsync };

// How often a consumer warpgroup arrives on each empty barrier it releases.
// kAuto = what CUTLASS's PipelineTmaAsync does: kThread for a 1-CTA cluster, kWarpgroup otherwise.
enum class Signal { kAuto, kWarpgroup, kWarp, kThread };

// Which operands are multicast: A along N (to the cluster_n CTAs with the same cta_x), B along M
// (to the cluster_m CTAs with the same cta_y).
enum class Multicast { kNone, kA, kB, kAB };

struct CountsRequest {
  PipelineKind kind = PipelineKind::kTmaAsync;
  // tma-async
  int cluster_m = 1;
  int cluster_n = 1;
  Multicast multicast = Multicast::kAB;
  int consumers = 1;  // tma-async: consumer warpgroups per CTA; async: consumer arriving threads
  Signal signal = Signal::kAuto;
  // tma-async (required), cp-async (optional: the bytes of a stage and the copies per thread)
  int64_t tile_a_m = 0, tile_a_k = 0;  // A tile of one CTA, elements
  int64_t tile_b_n = 0, tile_b_k = 0;  // B tile of one CTA, elements
  int elem_bytes = 2;
  // async
  int producers = 1;  // producer arriving threads
  // tma-async, async, tma-store, cp-async
  int stages = 2;
  // single-tma
  std::vector<int64_t> box;  // box extents, elements
  int threads = 1;           // single-tma: threads arriving on the barrier; cp-async: threads
                             // issuing the copies (the block)
};

// One computed number: key (e.g. "init.empty", "tx.full", "wait_group.read"), value, and a
// one-line derivation ("empty = (cluster_m + cluster_n - 1) x 2 warpgroups = 6: ...").
struct CountItem {
  std::string key;
  int64_t value = 0;
  std::string formula;     // "(cluster_m + cluster_n - 1) x 2 warpgroups"; empty for a constant
  std::string reason;      // "a CTA receives a release from ..."
  std::string derivation;  // "<name> = <formula> = <value>: <reason>"
};

struct CountsResult {
  std::vector<CountItem> items;
  std::vector<std::string> notes;  // facts without a number (e.g. "no mbarriers")
};

// Validates the request (rule "counts.param") and computes every count of its kind.
Expected<CountsResult> ComputeCounts(const CountsRequest& request);

// One user claim ("init.empty=8") compared with the correct value.
struct CheckOutcome {
  std::string key;
  int64_t yours = 0;
  int64_t correct = 0;
  bool match = false;
  // For a mismatch: "init.empty: you have 8, correct is 6 = ...: <why yours is wrong>".
  std::string explanation;
};

// Compares claims with `result` (computed from `request`). An unknown key for this kind is bad
// input (rule "counts.key").
Expected<std::vector<CheckOutcome>> CheckCounts(
    const CountsRequest& request, const CountsResult& result,
    const std::vector<std::pair<std::string, int64_t>>& claims);

// Parsers for the command line; rule "counts.parse" on malformed text.
// tma-async async tma-store single-tma cp-async
Expected<PipelineKind> ParseKind(std::string_view text);
Expected<Signal> ParseSignal(std::string_view text);      // auto warpgroup warp thread
Expected<Multicast> ParseMulticast(std::string_view text);  // none a b ab
// Element bytes: f8/e4m3/e5m2/s8/u8 1, f16/bf16/s16/u16 2, f32/tf32/s32/u32 4, f64/s64/u64 8.
Expected<int> ParseDtypeBytes(std::string_view text);
// "MxN" (also "M,N") of positive integers.
Expected<std::pair<int64_t, int64_t>> ParsePair(std::string_view text);
// "a,b,c" or "axbxc" of 1..5 positive integers.
Expected<std::vector<int64_t>> ParseDims(std::string_view text);
// "key=value" with an integer value >= 0.
Expected<std::pair<std::string, int64_t>> ParseClaim(std::string_view text);

std::string_view KindName(PipelineKind kind);

}  // namespace parity::pipelines

#endif  // PARITY_SIM_PIPELINES_COUNTS_H_
