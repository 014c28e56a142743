// The API's entry points beside Check and Explore (parity/parity.h): the rule table, the PTX
// importer, the pipeline counts and the engine's self-checks, which the `parity` command's
// rules, import and counts are clients of.
#include <charconv>
#include <string>
#include <utility>
#include <vector>

#include "parity/detail.h"
#include "parity/parity.h"
#include "sim/common/status.h"
#include "sim/engine/engine.h"
#include "sim/model/citations.h"
#include "sim/model/codes.h"
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
    const Status applied = ptx::ApplyLaunch(**entry, *launch, options.launch, !options.block.empty(),
                                            !options.cluster.empty(), &*o);
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

}  // namespace parity::api
