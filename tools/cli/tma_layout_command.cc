// `parity tma-layout`: where each element of a TMA tile load lands in shared memory.
//
// Prints the placement computed by api::TmaLayout (sim/model/tma.h's PlanTileLoad) so that a
// kernel engineer can check a swizzled shared-memory layout, or an OOB box, before writing the
// kernel:
//   csv:  a header, then one line per box element in coordinate order (dimension 0 fastest):
//         the box coordinates k0..k{rank-1}, the byte offset relative to the destination
//         address, and oob (1 when the element is filled instead of read).
//   json: the same elements plus the footprint and the complete_tx byte count.
#include <nlohmann/json.hpp>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <memory>
#include <string>

#include "parity/parity.h"
#include "sim/common/json_text.h"
#include "tools/cli/command.h"
#include "tools/cli/report_format.h"
#include "tools/cli/schedule_loader.h"

namespace parity::cli {
namespace {

struct TmaLayoutCliOptions {
  api::TmaLayoutOptions layout;
  std::string format = "csv";
};

void PrintCsv(const api::TmaLayoutReport& plan) {
  const size_t rank = plan.box.size();
  std::string line;
  for (size_t d = 0; d < rank; ++d) line += "k" + std::to_string(d) + ",";
  std::printf("%ssmem_offset,oob\n", line.c_str());
  for (const api::TmaLayoutReport::Element& e : plan.elements) {
    line.clear();
    for (size_t d = 0; d < rank; ++d) line += std::to_string(e.k[d]) + ",";
    std::printf("%s%u,%d\n", line.c_str(), e.smem_offset, e.oob ? 1 : 0);
  }
}

void PrintJson(const api::TmaLayoutReport& plan) {
  using nlohmann::json;
  json j;
  j["schema"] = SchemaId("tma-layout");
  j["dtype"] = plan.dtype;
  j["swizzle"] = plan.swizzle;
  j["smem_base"] = plan.smem_base;
  j["box"] = plan.box;
  j["global_dims"] = plan.global_dims;
  j["global_strides"] = plan.global_strides;
  j["coords"] = plan.coords;
  j["element_strides"] = plan.element_strides;
  json elements = json::array();
  for (const api::TmaLayoutReport::Element& e : plan.elements) {
    elements.push_back({{"k", e.k},
                        {"global_coord", e.global_coord},
                        {"smem_offset", e.smem_offset},
                        {"oob", e.oob}});
  }
  j["elements"] = elements;
  json ranges = json::array();
  for (const auto& [begin, end] : plan.smem_ranges) ranges.push_back(json::array({begin, end}));
  j["footprint"] = {{"box_bytes", plan.box_bytes},
                    {"oob_elements", plan.oob_elements},
                    {"smem_ranges", ranges}};
  j["complete_tx_bytes"] = plan.complete_tx_bytes;
  std::printf("%s\n", JsonText(j, 2).c_str());
}

}  // namespace

void AddTmaLayoutCommand(CLI::App& app, Context& ctx) {
  auto cli = std::make_shared<TmaLayoutCliOptions>();
  api::TmaLayoutOptions* opts = &cli->layout;
  CLI::App* sub = app.add_subcommand(
      "tma-layout", "print where each element of a TMA tile load lands in shared memory");
  sub->add_option("--dtype", opts->dtype, "element type: u8,u16,u32,s32,u64,s64,f16,bf16,f32,tf32,f64")
      ->required();
  sub->add_option("--box", opts->box, "box dims W[,H,...], dimension 0 first (1..5 values)")
      ->required();
  sub->add_option("--swizzle", opts->swizzle, "none, 32B, 64B or 128B (default none)");
  sub->add_option("--smem-base", opts->smem_base,
                  "destination shared address, 128-byte aligned (default 0)");
  sub->add_option("--global-dims", opts->global_dims, "tensor dims, one per box dim (default: the box)");
  sub->add_option("--global-strides", opts->global_strides,
                  "byte strides of dims 1..rank-1 (default: packed, rows rounded up to 16 bytes)");
  sub->add_option("--coords", opts->coords, "box start coordinates, may be negative (default 0s)");
  sub->add_option("--element-strides", opts->element_strides, "traversal strides (default 1s)");
  sub->add_option("--oob-fill", opts->oob_fill, "zero or nan (default zero)");
  sub->add_option("--format", cli->format, "csv or json (default csv)")
      ->check(CLI::IsMember({"csv", "json"}));
  sub->callback([cli, &ctx] {
    ctx.format = cli->format;
    api::Result<api::TmaLayoutReport> plan = api::TmaLayout(cli->layout);
    if (!plan.ok()) return ReportBadInput(ctx, ToStatus(plan.error()));
    if (cli->format == "json") {
      PrintJson(*plan);
    } else {
      PrintCsv(*plan);
    }
    ctx.exit_code = kExitClean;
  });
}

}  // namespace parity::cli
