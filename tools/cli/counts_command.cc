// `parity counts KIND ...`: the correct init count of every barrier and the tx bytes per stage of
// a well-known pipeline (api::CountPipeline), each with a one-line derivation; with --check,
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

#include "parity/parity.h"
#include "sim/common/json_text.h"
#include "tools/cli/command.h"
#include "tools/cli/report_format.h"
#include "tools/cli/schedule_loader.h"

namespace parity::cli {
namespace {

struct CountsCliOptions {
  api::CountsOptions counts;
  std::string format = "text";
};

void PrintText(const api::CountsReport& res) {
  const auto& checks = res.checks;
  std::printf("%s\n", res.kind.c_str());
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

void PrintJson(const api::CountsReport& res) {
  const auto& checks = res.checks;
  using nlohmann::json;
  json j;
  j["schema"] = SchemaId("counts");
  j["kind"] = res.kind;
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
  auto cli = std::make_shared<CountsCliOptions>();
  api::CountsOptions* opts = &cli->counts;
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
  AddFormatOption(sub, cli->format, "counts");
  sub->callback([cli, &ctx] {
    ctx.format = cli->format;
    api::Result<api::CountsReport> res = api::CountPipeline(cli->counts);
    if (!res.ok()) return ReportBadInput(ctx, ToStatus(res.error()));
    if (cli->format == "json") {
      PrintJson(*res);
    } else {
      PrintText(*res);
    }
    ctx.exit_code = res->all_match() ? kExitClean : kExitViolations;
  });
}

}  // namespace parity::cli
