// The API's entry points beside Check and Explore (parity/parity.h): the rule table, the PTX
// importer, the pipeline counts and the engine's self-checks, which the `parity` command's
// rules, import and counts are clients of.
#include <charconv>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "parity/detail.h"
#include "parity/parity.h"
#include "sim/common/status.h"
#include "sim/engine/engine.h"
#include "sim/model/citations.h"
#include "sim/model/codes.h"
#include "sim/model/tma.h"
#include "sim/pipelines/counts.h"
#include "sim/ptx/importer.h"
#include "sim/ptx/launch_file.h"
#include "sim/ptx/ptx.h"

namespace parity::api {
namespace {

// "a,b[,c]" as up to `max` positive integers.
Expected<std::vector<uint32_t>> ImportSizes(const std::string& option, const std::string& text,
                                            size_t max) {
  std::vector<uint32_t> out;
  size_t pos = 0;
  while (true) {
    const size_t comma = text.find(',', pos);
    const std::string item = text.substr(pos, comma == std::string::npos ? comma : comma - pos);
    uint32_t v = 0;
    const auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), v);
    if (item.empty() || ec != std::errc() || end != item.data() + item.size() || v == 0 ||
        v > 1024) {
      return Status("import.bad-option", option + ": '" + item + "' is not an integer in 1..1024");
    }
    out.push_back(v);
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  if (out.size() > max) {
    return Status("import.bad-option", option + " takes at most " + std::to_string(max) + " sizes");
  }
  return out;
}

Expected<ptx::ImportOptions> BuildImportOptions(const ImportOptions& c) {
  ptx::ImportOptions o;
  o.entry = c.entry;
  if (c.block.empty() && c.launch.empty()) {
    return Status("import.bad-option", "--block is required (or --launch FILE.json)");
  }
  if (!c.block.empty()) {
    auto block = ImportSizes("--block", c.block, 3);
    if (!block.ok()) return block.status();
    for (size_t i = 0; i < block->size(); ++i) o.block[i] = (*block)[i];
  }
  auto cluster = ImportSizes("--cluster", c.cluster.empty() ? "1,1" : c.cluster, 2);
  if (!cluster.ok()) return cluster.status();
  o.cluster_x = (*cluster)[0];
  o.cluster_y = cluster->size() > 1 ? (*cluster)[1] : 1;
  o.clusters = c.clusters;
  o.generic_reads = c.generic_reads;
  o.source_chain = c.source_chain;
  for (const std::string& a : c.args) {
    const size_t eq = a.find('=');
    int index = -1;
    int64_t value = 0;
    bool ok = eq != std::string::npos;
    if (ok) {
      auto r1 = std::from_chars(a.data(), a.data() + eq, index);
      auto r2 = std::from_chars(a.data() + eq + 1, a.data() + a.size(), value);
      ok = r1.ec == std::errc() && r1.ptr == a.data() + eq && r2.ec == std::errc() &&
           r2.ptr == a.data() + a.size() && eq + 1 < a.size() && index >= 0;
    }
    if (!ok) return Status("import.bad-option", "--arg '" + a + "' is not INDEX=VALUE");
    o.args[index] = static_cast<uint64_t>(value);
  }
  for (const std::string& p : c.params) {
    auto pa = ptx::ParseParamArg(p);
    if (!pa.ok()) return pa.status();
    o.params.push_back(*pa);
  }
  for (const std::string& t : c.tensor_maps) {
    auto tm = ptx::ParseTensorMapArg(t);
    if (!tm.ok()) return tm.status();
    o.tensor_maps.push_back(*tm);
  }
  return o;
}

// The entry a launch file names when --entry is not given: the one entry of the PTX that has
// launches in the file.
Expected<std::string> EntryFromLaunches(const ptx::Module& module,
                                        const std::vector<ptx::Launch>& launches,
                                        const std::string& path) {
  std::vector<std::string> found;
  for (const ptx::Function& f : module.functions) {
    if (!f.is_entry) continue;
    for (const ptx::Launch& l : launches) {
      if (l.kernel == f.name) {
        found.push_back(f.name);
        break;
      }
    }
  }
  if (found.size() == 1) return found[0];
  std::string list;
  for (const std::string& n : found) list += (list.empty() ? "" : ", ") + n;
  return Status("import.bad-launch",
                found.empty() ? "no entry of " + module.path + " has a launch in the file"
                              : "entries " + list + " all have launches in the file; pick one "
                                                    "with --entry",
                {path, 0, 0});
}

}  // namespace

Result<std::string> ImportPtx(const ImportOptions& options) {
  auto o = BuildImportOptions(options);
  if (!o.ok()) return ToError(o.status());
  auto module = ptx::ReadModule(options.ptx);
  if (!module.ok()) return ToError(module.status());
  if (!options.launch.empty()) {
    auto launches = ptx::ReadLaunchFile(options.launch);
    if (!launches.ok()) return ToError(launches.status());
    if (o->entry.empty()) {
      auto name = EntryFromLaunches(*module, *launches, options.launch);
      if (!name.ok()) return ToError(name.status());
      o->entry = *name;
    }
    auto entry = ptx::FindEntry(*module, o->entry);
    if (!entry.ok()) return ToError(entry.status());
    auto launch = ptx::SelectLaunch(*launches, **entry, options.launch_index, options.launch);
    if (!launch.ok()) return ToError(launch.status());
    const Status applied = ptx::ApplyLaunch(**entry, *launch, options.launch,
                                            !options.block.empty(), !options.cluster.empty(), &*o);
    if (!applied.ok()) return ToError(applied);
    o->entry = (*entry)->name;
  } else if (o->entry.empty()) {
    return ToError(Status("import.bad-option", "--entry is required (or --launch FILE.json)"));
  } else if (options.launch_index != 0) {
    return ToError(Status("import.bad-option", "--launch-index needs --launch"));
  }
  auto text = ptx::ImportSchedule(*module, *o);
  if (!text.ok()) return ToError(text.status());
  return *std::move(text);
}

// ---------------------------------------------------------------- rules

std::vector<Rule> Rules() {
  std::vector<Rule> out;
  for (model::Code c : model::AllCodes()) {
    Rule rule;
    rule.code = std::string(model::CodeId(c));
    rule.slug = std::string(model::CodeSlug(c));
    rule.severity = FromModel(model::CodeSeverity(c));
    rule.title = std::string(model::CodeTitle(c));
    rule.explanation = std::string(model::CodeExplanation(c));
    // The ISA's words with their section, or the litmus test (sim/model/citations.h).
    rule.citation = model::CitationText(c);
    for (const model::Citation& cite : model::CodeCitations(c)) {
      rule.sources.push_back(Rule::Source{std::string(cite.section), std::string(cite.quote),
                                          std::string(cite.litmus)});
    }
    out.push_back(std::move(rule));
  }
  return out;
}

Result<Rule> FindRule(const std::string& code_or_slug) {
  std::optional<model::Code> c = model::CodeFromId(code_or_slug);
  if (!c) c = model::CodeFromSlug(code_or_slug);
  if (!c) {
    return Error{"cli.rule", "unknown rule code '" + code_or_slug + "'; 'parity rules' lists them",
                 Location{}};
  }
  for (Rule& r : Rules()) {
    if (r.code == model::CodeId(*c)) return std::move(r);
  }
  return Error{"cli.rule", "unknown rule code '" + code_or_slug + "'; 'parity rules' lists them",
               Location{}};
}

// ---------------------------------------------------------------- self-checks

void SetSelfChecks(bool on) { engine::Engine::SetSelfChecks(on); }
bool SelfChecks() { return engine::Engine::SelfChecks(); }

// ---------------------------------------------------------------- counts

bool CountsReport::all_match() const {
  for (const Check& c : checks) {
    if (!c.match) return false;
  }
  return true;
}

namespace {

using pipelines::CountsRequest;

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

Expected<pipelines::CountsRequest> BuildRequest(const CountsOptions& o) {
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

}  // namespace

Result<CountsReport> CountPipeline(const CountsOptions& options) {
  Expected<CountsRequest> req = BuildRequest(options);
  if (!req.ok()) return ToError(req.status());
  Expected<pipelines::CountsResult> res = pipelines::ComputeCounts(*req);
  if (!res.ok()) return ToError(res.status());
  std::vector<std::pair<std::string, int64_t>> claims;
  for (const std::string& text : options.checks) {
    auto claim = pipelines::ParseClaim(text);
    if (!claim.ok()) return ToError(claim.status());
    claims.push_back(*claim);
  }
  auto checks = pipelines::CheckCounts(*req, *res, claims);
  if (!checks.ok()) return ToError(checks.status());
  CountsReport report;
  report.kind = std::string(pipelines::KindName(req->kind));
  for (const pipelines::CountItem& item : res->items) {
    report.items.push_back(
        CountsReport::Item{item.key, item.value, item.formula, item.reason, item.derivation});
  }
  report.notes = res->notes;
  for (const pipelines::CheckOutcome& c : *checks) {
    report.checks.push_back(
        CountsReport::Check{c.key, c.yours, c.correct, c.match, c.explanation});
  }
  return report;
}

// ---------------------------------------------------------------- TMA layout

namespace {

using model::TensorMap;

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

}  // namespace

Result<TmaLayoutReport> TmaLayout(const TmaLayoutOptions& options) {
  Expected<Request> req = BuildRequest(options);
  if (!req.ok()) return ToError(req.status());
  Expected<model::TileLoadPlan> plan =
      model::PlanTileLoad(req->map, req->coords, options.smem_base);
  if (!plan.ok()) return ToError(plan.status());
  const TensorMap& m = req->map;
  TmaLayoutReport out;
  out.dtype = std::string(model::DataTypeName(m.data_type));
  out.swizzle = std::string(model::SwizzleName(m.swizzle));
  out.smem_base = options.smem_base;
  for (uint32_t d = 0; d < m.rank; ++d) {
    out.box.push_back(m.box_dim[d]);
    out.global_dims.push_back(m.global_dim[d]);
    out.coords.push_back(req->coords[d]);
    out.element_strides.push_back(m.element_strides[d]);
    if (d + 1 < m.rank) out.global_strides.push_back(m.global_strides[d]);
  }
  for (const model::BoxElementPlacement& e : plan->elements) {
    TmaLayoutReport::Element el;
    el.k.assign(e.box_index.begin(), e.box_index.begin() + m.rank);
    el.global_coord.assign(e.global_coord.begin(), e.global_coord.begin() + m.rank);
    el.smem_offset = e.smem_offset;
    el.oob = e.out_of_bounds;
    out.elements.push_back(std::move(el));
  }
  out.box_bytes = plan->footprint.box_bytes;
  out.oob_elements = plan->footprint.oob_elements;
  out.complete_tx_bytes = plan->footprint.complete_tx_bytes;
  for (const model::SmemByteRange& r : plan->footprint.smem_ranges) {
    out.smem_ranges.emplace_back(r.begin, r.end);
  }
  return out;
}

}  // namespace parity::api
