// `parity counts KIND ...`: the correct init count of every barrier and the tx bytes per stage of
// a well-known pipeline (sim/pipelines/counts.h), each with a one-line derivation; with --check,
// compares the user's numbers and explains each difference.
//
// Exit codes: 0 computed (and every --check matched), 1 some --check differs, 2 bad input
// (unknown kind or --check key, malformed or out-of-range value).
#include <nlohmann/json.hpp>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "sim/common/json_text.h"
#include "sim/pipelines/counts.h"
#include "tools/cli/command.h"
#include "tools/cli/report_format.h"

namespace parity::cli {
namespace {

using pipelines::CheckOutcome;
using pipelines::CountsRequest;
using pipelines::CountsResult;

struct CountsOptions {
  std::string kind;
  std::string cluster = "1x1";
  std::string multicast = "ab";
  int consumers = 1;
  int producers = 1;
  std::string signal = "auto";
  std::string tile_a;
  std::string tile_b;
  std::string dtype = "f16";
  int stages = 2;
  std::string box;
  int threads = 1;
  std::vector<std::string> checks;
  std::string format = "text";
};

// --tile-a MxK and --tile-b NxK into the request (both given).
Status ReadTiles(const CountsOptions& o, CountsRequest* r) {
  auto a = pipelines::ParsePair(o.tile_a);
  if (!a.ok()) return a.status();
  auto b = pipelines::ParsePair(o.tile_b);
  if (!b.ok()) return b.status();
  r->tile_a_m = a->first;
  r->tile_a_k = a->second;
  r->tile_b_n = b->first;
  r->tile_b_k = b->second;
  return Status::Ok();
}

Expected<CountsRequest> BuildRequest(const CountsOptions& o) {
  CountsRequest r;
  auto kind = pipelines::ParseKind(o.kind);
  if (!kind.ok()) return kind.status();
  r.kind = *kind;
  auto bytes = pipelines::ParseDtypeBytes(o.dtype);
  if (!bytes.ok()) return bytes.status();
  r.elem_bytes = *bytes;
  r.stages = o.stages;
  r.producers = o.producers;
  r.threads = o.threads;
  r.consumers = o.consumers;
  if (r.kind == pipelines::PipelineKind::kTmaAsync) {
    auto cluster = pipelines::ParsePair(o.cluster);
    if (!cluster.ok()) return cluster.status();
    if (cluster->first > 16 || cluster->second > 16) {
      return Status("counts.param", "--cluster " + o.cluster + " is larger than 16 CTAs");
    }
    r.cluster_m = static_cast<int>(cluster->first);
    r.cluster_n = static_cast<int>(cluster->second);
    auto mc = pipelines::ParseMulticast(o.multicast);
    if (!mc.ok()) return mc.status();
    r.multicast = *mc;
    auto sig = pipelines::ParseSignal(o.signal);
    if (!sig.ok()) return sig.status();
    r.signal = *sig;
    if (o.tile_a.empty() || o.tile_b.empty()) {
      return Status("counts.param", "tma-async needs --tile-a MxK and --tile-b NxK");
    }
    PARITY_RETURN_IF_ERROR(ReadTiles(o, &r));
  } else if (r.kind == pipelines::PipelineKind::kAsync) {
  } else if (r.kind == pipelines::PipelineKind::kCpAsync) {
    // The tiles are optional: without them, the stage arithmetic alone.
    if (!o.tile_a.empty() || !o.tile_b.empty()) {
      if (o.tile_a.empty() || o.tile_b.empty()) {
        return Status("counts.param", "cp-async takes --tile-a MxK and --tile-b NxK together");
      }
      PARITY_RETURN_IF_ERROR(ReadTiles(o, &r));
    }
  } else if (r.kind == pipelines::PipelineKind::kSingleTma) {
    if (o.box.empty()) return Status("counts.param", "single-tma needs --box W[xH...]");
    auto box = pipelines::ParseDims(o.box);
    if (!box.ok()) return box.status();
    r.box = *box;
  }
  return r;
}

void PrintText(const CountsRequest& req, const CountsResult& res,
               const std::vector<CheckOutcome>& checks) {
  std::printf("%s\n", std::string(pipelines::KindName(req.kind)).c_str());
  for (const auto& note : res.notes) std::printf("  note: %s\n", note.c_str());
  for (const auto& item : res.items) {
    std::printf("  %s = %lld\n    %s\n", item.key.c_str(), static_cast<long long>(item.value),
                item.derivation.c_str());
  }
  for (const auto& c : checks) {
    if (c.match) {
      std::printf("ok %s = %lld\n", c.key.c_str(), static_cast<long long>(c.yours));
    } else {
      std::printf("MISMATCH %s\n", c.explanation.c_str());
    }
  }
}

void PrintJson(const CountsRequest& req, const CountsResult& res,
               const std::vector<CheckOutcome>& checks) {
  using nlohmann::json;
  json j;
  j["schema"] = SchemaId("counts");
  j["kind"] = std::string(pipelines::KindName(req.kind));
  json items = json::object();
  for (const auto& item : res.items) {
    items[item.key] = {{"value", item.value},
                       {"formula", item.formula},
                       {"reason", item.reason},
                       {"derivation", item.derivation}};
  }
  j["counts"] = std::move(items);
  j["notes"] = res.notes;
  json cs = json::array();
  for (const auto& c : checks) {
    cs.push_back({{"key", c.key},
                  {"yours", c.yours},
                  {"correct", c.correct},
                  {"match", c.match},
                  {"explanation", c.explanation}});
  }
  j["checks"] = std::move(cs);
  std::printf("%s\n", JsonText(j, 2).c_str());
}

}  // namespace

void AddCountsCommand(CLI::App& app, Context& ctx) {
  auto opts = std::make_shared<CountsOptions>();
  CLI::App* sub = app.add_subcommand(
      "counts",
      "print the correct barrier init counts and tx bytes of a well-known pipeline, with "
      "derivations; --check compares yours");
  sub->add_option("kind", opts->kind, "tma-async, async, tma-store, single-tma or cp-async")
      ->required();
  sub->add_option("--cluster", opts->cluster, "tma-async: cluster MxN (default 1x1)");
  sub->add_option("--multicast", opts->multicast,
                  "tma-async: none, a (A along N), b (B along M) or ab (default ab)");
  sub->add_option("--consumers", opts->consumers,
                  "tma-async: consumer warpgroups per CTA; async: consumer arriving threads "
                  "(default 1)");
  sub->add_option("--producers", opts->producers, "async: producer arriving threads (default 1)");
  sub->add_option("--signal", opts->signal,
                  "tma-async: arrivals per consumer warpgroup: warpgroup, warp, thread or auto "
                  "(CUTLASS: thread for a 1-CTA cluster, else warpgroup; default auto)");
  sub->add_option("--tile-a", opts->tile_a,
                  "tma-async, cp-async (optional): A tile of one CTA, MxK elements");
  sub->add_option("--tile-b", opts->tile_b,
                  "tma-async, cp-async (optional): B tile of one CTA, NxK elements");
  sub->add_option("--dtype", opts->dtype,
                  "element type (f8 e4m3 e5m2 s8 u8 f16 bf16 s16 u16 f32 tf32 s32 u32 f64 s64 "
                  "u64; default f16)");
  sub->add_option("--stages", opts->stages, "pipeline stages (default 2)");
  sub->add_option("--box", opts->box, "single-tma: box extents WxH... (elements)");
  sub->add_option("--threads", opts->threads,
                  "single-tma: threads arriving on the barrier; cp-async: threads of the block "
                  "issuing the copies (default 1)");
  sub->add_option("--check", opts->checks,
                  "KEY=VALUE to compare (repeatable): init.full, init.empty, tx.full, "
                  "wait_group.read, stages; cp-async: prefetch, wait_group, commit.per_ktile, "
                  "bytes.stage, smem.bytes, copies.per_thread");
  AddFormatOption(sub, opts->format, "counts");
  sub->callback([opts, &ctx] {
    ctx.format = opts->format;
    Expected<CountsRequest> req = BuildRequest(*opts);
    if (!req.ok()) return ReportBadInput(ctx, req.status());
    Expected<CountsResult> res = pipelines::ComputeCounts(*req);
    if (!res.ok()) return ReportBadInput(ctx, res.status());
    std::vector<std::pair<std::string, int64_t>> claims;
    for (const std::string& text : opts->checks) {
      auto claim = pipelines::ParseClaim(text);
      if (!claim.ok()) return ReportBadInput(ctx, claim.status());
      claims.push_back(*claim);
    }
    Expected<std::vector<CheckOutcome>> checks = pipelines::CheckCounts(*req, *res, claims);
    if (!checks.ok()) return ReportBadInput(ctx, checks.status());
    if (opts->format == "json") {
      PrintJson(*req, *res, *checks);
    } else {
      PrintText(*req, *res, *checks);
    }
    ctx.exit_code = kExitClean;
    for (const auto& c : *checks) {
      if (!c.match) ctx.exit_code = kExitViolations;
    }
  });
}

}  // namespace parity::cli
