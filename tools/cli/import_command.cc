// `parity import KERNEL.ptx --entry NAME --block X[,Y,Z] ...`: a kernel's PTX to a `.pipe`
// schedule (sim/ptx/importer.h), on stdout or into -o OUT.pipe.
#include <CLI/CLI.hpp>
#include <charconv>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "sim/ptx/importer.h"
#include "sim/ptx/ptx.h"
#include "tools/cli/command.h"

namespace parity::cli {
namespace {

struct ImportCliOptions {
  std::string ptx;
  std::string entry;
  std::string block;
  std::string cluster = "1,1";
  int64_t clusters = 1;
  std::vector<std::string> args;
  std::vector<std::string> params;
  std::vector<std::string> tensor_maps;
  bool generic_reads = false;
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
  auto block = ImportSizes("--block", c.block, 3);
  if (!block.ok()) return block.status();
  for (size_t i = 0; i < block->size(); ++i) o.block[i] = (*block)[i];
  auto cluster = ImportSizes("--cluster", c.cluster, 2);
  if (!cluster.ok()) return cluster.status();
  o.cluster_x = (*cluster)[0];
  o.cluster_y = cluster->size() > 1 ? (*cluster)[1] : 1;
  o.clusters = c.clusters;
  o.generic_reads = c.generic_reads;
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

}  // namespace

void AddImportCommand(CLI::App& app, Context& ctx) {
  auto opts = std::make_shared<ImportCliOptions>();
  CLI::App* sub = app.add_subcommand(
      "import", "turn a kernel's PTX (nvcc, sm_90a) into a .pipe schedule of its protocol");
  sub->add_option("kernel", opts->ptx, "the kernel's .ptx file")->required();
  sub->add_option("--entry", opts->entry, "the kernel: mangled, demangled or bare name")
      ->required();
  sub->add_option("--block", opts->block, "threads per CTA: X[,Y,Z]")->required();
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
  sub->add_flag("--generic-reads", opts->generic_reads,
                "ld.shared / ldmatrix reads become use.generic, so a TMA or bulk load after them "
                "needs fence.proxy.async on the path (P2006); wgmma operands are use.async "
                "always");
  sub->add_option("-o", opts->out, "write the schedule here (default: stdout)");
  sub->callback([opts, &ctx] {
    auto o = BuildImportOptions(*opts);
    if (!o.ok()) return ReportBadInput(ctx, o.status());
    auto module = ptx::ReadModule(opts->ptx);
    if (!module.ok()) return ReportBadInput(ctx, module.status());
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
