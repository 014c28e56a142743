// `parity import KERNEL.ptx --entry NAME --block X[,Y,Z] ...`: a kernel's PTX to a `.pipe`
// schedule (sim/ptx/importer.h), on stdout or into -o OUT.pipe. With `--launch FILE.json
// [--launch-index N]` (a launch file of `parity capture`, sim/ptx/launch_file.h) the launch gives
// the block, cluster, grid, every parameter byte and the tensor maps; --entry may then be left
// out when one entry of the PTX is in the file.
#include <CLI/CLI.hpp>
#include <charconv>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "sim/ptx/importer.h"
#include "sim/ptx/launch_file.h"
#include "sim/ptx/ptx.h"
#include "tools/cli/command.h"

namespace parity::cli {
namespace {

struct ImportCliOptions {
  std::string ptx;
  std::string entry;
  std::string block;
  std::string cluster;  // "" = 1,1 (or the launch's)
  int64_t clusters = 1;
  std::vector<std::string> args;
  std::vector<std::string> params;
  std::vector<std::string> tensor_maps;
  bool no_generic_reads = false;
  bool source_chain = false;
  std::string launch;
  int launch_index = 0;
  std::string out;
};

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

Expected<ptx::ImportOptions> BuildImportOptions(const ImportCliOptions& c) {
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
  o.generic_reads = !c.no_generic_reads;
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

void AddImportCommand(CLI::App& app, Context& ctx) {
  auto opts = std::make_shared<ImportCliOptions>();
  CLI::App* sub = app.add_subcommand(
      "import", "turn a kernel's PTX (nvcc, sm_90a) into a .pipe schedule of its protocol");
  sub->add_option("kernel", opts->ptx, "the kernel's .ptx file")->required();
  sub->add_option("--entry", opts->entry,
                  "the kernel: mangled, demangled or bare name (required unless --launch "
                  "names one entry of the PTX)");
  sub->add_option("--block", opts->block, "threads per CTA: X[,Y,Z] (required unless --launch)");
  sub->add_option("--cluster", opts->cluster, "CTAs per cluster: X[,Y] (default 1,1)");
  sub->add_option("--clusters", opts->clusters, "independent clusters (default 1)");
  sub->add_option("--arg", opts->args, "a scalar kernel argument: INDEX=VALUE");
  sub->add_option("--param", opts->params,
                  "a field of a by-value struct parameter: NAME+OFFSET=VALUE (e.g. "
                  "param_0+344=7), or OFFSET=VALUE with a byte offset in the whole parameter "
                  "space; the ld.param that reads it gives the width");
  sub->add_option("--tensormap", opts->tensor_maps,
                  "a CUtensorMap argument: INDEX=DTYPE:DIMS:BOX[:SWIZZLE], e.g. "
                  "0=u16:64x384:64x64:128B, or one inside a struct parameter: "
                  "NAME+OFFSET=DTYPE:DIMS:BOX[:SWIZZLE]");
  sub->add_flag("--no-generic-reads", opts->no_generic_reads,
                "ld.shared / ldmatrix reads become plain `use` instead of use.generic, so a TMA "
                "or bulk load after them needs no fence.proxy.async (by default it does: P2006, "
                "DeepEP #621); wgmma operands are use.async always");
  sub->add_flag("--source-chain", opts->source_chain,
                "each operation's comment names its whole inlined call chain, from the kernel's "
                "own frame inward (a > b > c), not that frame alone");
  sub->add_option("--launch", opts->launch,
                  "a launch file of `parity capture` (docs/launch-file.md): the launch gives "
                  "block, cluster, grid, every parameter byte and the tensor maps");
  sub->add_option("--launch-index", opts->launch_index,
                  "which launch of the kernel in the --launch file (default 0, the first)");
  sub->add_option("-o", opts->out, "write the schedule here (default: stdout)");
  sub->callback([opts, &ctx] {
    auto o = BuildImportOptions(*opts);
    if (!o.ok()) return ReportBadInput(ctx, o.status());
    auto module = ptx::ReadModule(opts->ptx);
    if (!module.ok()) return ReportBadInput(ctx, module.status());
    if (!opts->launch.empty()) {
      auto launches = ptx::ReadLaunchFile(opts->launch);
      if (!launches.ok()) return ReportBadInput(ctx, launches.status());
      if (o->entry.empty()) {
        auto name = EntryFromLaunches(*module, *launches, opts->launch);
        if (!name.ok()) return ReportBadInput(ctx, name.status());
        o->entry = *name;
      }
      auto entry = ptx::FindEntry(*module, o->entry);
      if (!entry.ok()) return ReportBadInput(ctx, entry.status());
      auto launch = ptx::SelectLaunch(*launches, **entry, opts->launch_index, opts->launch);
      if (!launch.ok()) return ReportBadInput(ctx, launch.status());
      const Status applied = ptx::ApplyLaunch(**entry, *launch, opts->launch, !opts->block.empty(),
                                              !opts->cluster.empty(), &*o);
      if (!applied.ok()) return ReportBadInput(ctx, applied);
      o->entry = (*entry)->name;
    } else if (o->entry.empty()) {
      return ReportBadInput(ctx, Status("import.bad-option",
                                        "--entry is required (or --launch FILE.json)"));
    } else if (opts->launch_index != 0) {
      return ReportBadInput(ctx, Status("import.bad-option", "--launch-index needs --launch"));
    }
    auto text = ptx::ImportSchedule(*module, *o);
    if (!text.ok()) return ReportBadInput(ctx, text.status());
    if (opts->out.empty()) {
      std::fwrite(text->data(), 1, text->size(), stdout);
    } else {
      std::ofstream f(opts->out, std::ios::binary);
      f << *text;
      if (!f) {
        return ReportBadInput(ctx, Status("import.output", "cannot write '" + opts->out + "'"));
      }
    }
    ctx.exit_code = kExitClean;
  });
}

}  // namespace parity::cli
