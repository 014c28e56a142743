// `parity tma-layout`: where each element of a TMA tile load lands in shared memory.
//
// Prints the placement computed by sim/model/tma.h (PlanTileLoad) so that a kernel engineer can
// check a swizzled shared-memory layout, or an OOB box, before writing the kernel:
//   csv:  a header, then one line per box element in coordinate order (dimension 0 fastest):
//         the box coordinates k0..k{rank-1}, the byte offset relative to the destination
//         address, and oob (1 when the element is filled instead of read).
//   json: the same elements plus the footprint and the complete_tx byte count.
#include <nlohmann/json.hpp>

#include <CLI/CLI.hpp>
#include <charconv>
#include <cstdio>
#include <string>
#include <vector>

#include "sim/common/json_text.h"
#include "sim/model/tma.h"
#include "tools/cli/command.h"
#include "tools/cli/report_format.h"

namespace parity::cli {
namespace {

using model::TensorMap;

struct TmaLayoutOptions {
  std::string dtype;
  std::string box;
  std::string swizzle = "none";
  uint32_t smem_base = 0;
  std::string global_dims;
  std::string global_strides;
  std::string coords;
  std::string element_strides;
  std::string oob_fill = "zero";
  std::string format = "csv";
};

// Parses "a,b,c" into integers in [lo, hi]; rule "cli.list" on anything else.
template <typename T>
Expected<std::vector<T>> ParseList(const std::string& option, const std::string& text, T lo,
                                   T hi) {
  std::vector<T> out;
  size_t pos = 0;
  while (true) {
    const size_t comma = text.find(',', pos);
    const std::string item = text.substr(pos, comma == std::string::npos ? comma : comma - pos);
    T value{};
    const auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), value);
    if (item.empty() || ec != std::errc() || end != item.data() + item.size() || value < lo ||
        value > hi) {
      return Status("cli.list", option + ": '" + item + "' is not an integer in " +
                                    std::to_string(lo) + ".." + std::to_string(hi));
    }
    out.push_back(value);
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return out;
}

Status CheckCount(const std::string& option, size_t got, uint32_t rank) {
  if (got != rank) {
    return Status("cli.rank", option + " has " + std::to_string(got) + " values but --box has " +
                                  std::to_string(rank));
  }
  return Status::Ok();
}

struct Request {
  TensorMap map;
  model::TmaCoords coords{};
};

Expected<Request> BuildRequest(const TmaLayoutOptions& o) {
  Request r;
  TensorMap& m = r.map;
  const auto dtype = model::ParseDataType(o.dtype);
  if (!dtype) return Status("cli.dtype", "unknown --dtype '" + o.dtype + "'");
  m.data_type = *dtype;
  const auto swizzle = model::ParseSwizzle(o.swizzle);
  if (!swizzle) {
    return Status("cli.swizzle", "unknown --swizzle '" + o.swizzle + "' (none, 32B, 64B, 128B)");
  }
  m.swizzle = *swizzle;
  if (o.oob_fill == "nan") {
    m.oob_fill = model::TmaOobFill::kNanRequestZeroFma;
  } else if (o.oob_fill != "zero") {
    return Status("cli.oob-fill", "unknown --oob-fill '" + o.oob_fill + "' (zero, nan)");
  }

  // Box dims are range-checked by ValidateTensorMap (rule tensor-map.box-dim), not here.
  auto box = ParseList<uint32_t>("--box", o.box, 0, UINT32_MAX);
  if (!box.ok()) return box.status();
  if (box->empty() || box->size() > model::kTmaMaxRank) {
    return Status("tensor-map.rank",
                  "--box has " + std::to_string(box->size()) + " values; tensorRank is 1..5");
  }
  m.rank = static_cast<uint32_t>(box->size());
  for (uint32_t i = 0; i < m.rank; ++i) {
    m.box_dim[i] = (*box)[i];
    m.global_dim[i] = (*box)[i];  // default: the box itself
  }
  if (!o.global_dims.empty()) {
    auto dims = ParseList<uint64_t>("--global-dims", o.global_dims, 0, UINT64_MAX);
    if (!dims.ok()) return dims.status();
    PARITY_RETURN_IF_ERROR(CheckCount("--global-dims", dims->size(), m.rank));
    for (uint32_t i = 0; i < m.rank; ++i) m.global_dim[i] = (*dims)[i];
  }
  if (!o.element_strides.empty()) {
    auto es = ParseList<uint32_t>("--element-strides", o.element_strides, 0, UINT32_MAX);
    if (!es.ok()) return es.status();
    PARITY_RETURN_IF_ERROR(CheckCount("--element-strides", es->size(), m.rank));
    for (uint32_t i = 0; i < m.rank; ++i) m.element_strides[i] = (*es)[i];
  }
  if (!o.coords.empty()) {
    auto c = ParseList<int32_t>("--coords", o.coords, INT32_MIN, INT32_MAX);
    if (!c.ok()) return c.status();
    PARITY_RETURN_IF_ERROR(CheckCount("--coords", c->size(), m.rank));
    for (uint32_t i = 0; i < m.rank; ++i) r.coords[i] = (*c)[i];
  }
  if (!o.global_strides.empty()) {
    auto s = ParseList<uint64_t>("--global-strides", o.global_strides, 0, UINT64_MAX);
    if (!s.ok()) return s.status();
    PARITY_RETURN_IF_ERROR(CheckCount("--global-strides", s->size() + 1, m.rank));
    for (uint32_t i = 0; i + 1 < m.rank; ++i) m.global_strides[i] = (*s)[i];
  } else {
    // Default: a packed tensor whose rows are padded to the 16-byte stride granule.
    uint64_t stride = (m.global_dim[0] * model::ElementBytes(m.data_type) + 15) / 16 * 16;
    for (uint32_t i = 0; i + 1 < m.rank; ++i) {
      m.global_strides[i] = stride;
      stride *= m.global_dim[i + 1];
    }
  }
  return r;
}

void PrintCsv(const Request& req, const model::TileLoadPlan& plan) {
  std::string line;
  for (uint32_t d = 0; d < req.map.rank; ++d) line += "k" + std::to_string(d) + ",";
  std::printf("%ssmem_offset,oob\n", line.c_str());
  for (const model::BoxElementPlacement& e : plan.elements) {
    line.clear();
    for (uint32_t d = 0; d < req.map.rank; ++d) line += std::to_string(e.box_index[d]) + ",";
    std::printf("%s%u,%d\n", line.c_str(), e.smem_offset, e.out_of_bounds ? 1 : 0);
  }
}

void PrintJson(const Request& req, const TmaLayoutOptions& o, const model::TileLoadPlan& plan) {
  using nlohmann::json;
  const TensorMap& m = req.map;
  json j;
  j["schema"] = SchemaId("tma-layout");
  j["dtype"] = std::string(model::DataTypeName(m.data_type));
  j["swizzle"] = std::string(model::SwizzleName(m.swizzle));
  j["smem_base"] = o.smem_base;
  json box = json::array(), dims = json::array(), coords = json::array(),
       strides = json::array(), es = json::array();
  for (uint32_t d = 0; d < m.rank; ++d) {
    box.push_back(m.box_dim[d]);
    dims.push_back(m.global_dim[d]);
    coords.push_back(req.coords[d]);
    es.push_back(m.element_strides[d]);
    if (d + 1 < m.rank) strides.push_back(m.global_strides[d]);
  }
  j["box"] = box;
  j["global_dims"] = dims;
  j["global_strides"] = strides;
  j["coords"] = coords;
  j["element_strides"] = es;
  json elements = json::array();
  for (const model::BoxElementPlacement& e : plan.elements) {
    json k = json::array(), g = json::array();
    for (uint32_t d = 0; d < m.rank; ++d) {
      k.push_back(e.box_index[d]);
      g.push_back(e.global_coord[d]);
    }
    elements.push_back(
        {{"k", k}, {"global_coord", g}, {"smem_offset", e.smem_offset}, {"oob", e.out_of_bounds}});
  }
  j["elements"] = elements;
  json ranges = json::array();
  for (const model::SmemByteRange& r : plan.footprint.smem_ranges) {
    ranges.push_back(json::array({r.begin, r.end}));
  }
  j["footprint"] = {{"box_bytes", plan.footprint.box_bytes},
                    {"oob_elements", plan.footprint.oob_elements},
                    {"smem_ranges", ranges}};
  j["complete_tx_bytes"] = plan.footprint.complete_tx_bytes;
  std::printf("%s\n", JsonText(j, 2).c_str());
}

}  // namespace

void AddTmaLayoutCommand(CLI::App& app, Context& ctx) {
  auto opts = std::make_shared<TmaLayoutOptions>();
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
  sub->add_option("--format", opts->format, "csv or json (default csv)")
      ->check(CLI::IsMember({"csv", "json"}));
  sub->callback([opts, &ctx] {
    ctx.format = opts->format;
    Expected<Request> req = BuildRequest(*opts);
    if (!req.ok()) return ReportBadInput(ctx, req.status());
    Expected<model::TileLoadPlan> plan = model::PlanTileLoad(req->map, req->coords, opts->smem_base);
    if (!plan.ok()) return ReportBadInput(ctx, plan.status());
    if (opts->format == "json") {
      PrintJson(*req, *opts, *plan);
    } else {
      PrintCsv(*req, *plan);
    }
    ctx.exit_code = kExitClean;
  });
}

}  // namespace parity::cli
