// `parity import KERNEL.ptx --entry NAME --block X[,Y,Z] ...`: a kernel's PTX to a `.pipe`
// schedule (api::ImportPtx), on stdout or into -o OUT.pipe. With `--launch FILE.json
// [--launch-index N]` (a launch file of `parity capture`, sim/ptx/launch_file.h) the launch gives
// the block, cluster, grid, every parameter byte and the tensor maps; --entry may then be left
// out when one entry of the PTX is in the file.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <fstream>
#include <memory>
#include <string>

#include "parity/parity.h"
#include "tools/cli/command.h"
#include "tools/cli/schedule_loader.h"

namespace parity::cli {

void AddImportCommand(CLI::App& app, Context& ctx) {
  auto opts = std::make_shared<api::ImportOptions>();
  auto no_generic_reads = std::make_shared<bool>(false);
  auto out = std::make_shared<std::string>();
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
  sub->add_flag("--no-generic-reads", *no_generic_reads,
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
  sub->add_option("-o", *out, "write the schedule here (default: stdout)");
  sub->callback([opts, no_generic_reads, out, &ctx] {
    opts->generic_reads = !*no_generic_reads;
    auto text = api::ImportPtx(*opts);
    if (!text.ok()) return ReportBadInput(ctx, ToStatus(text.error()));
    if (out->empty()) {
      std::fwrite(text->data(), 1, text->size(), stdout);
    } else {
      std::ofstream f(*out, std::ios::binary);
      f << *text;
      if (!f) {
        return ReportBadInput(ctx, Status("import.output", "cannot write '" + *out + "'"));
      }
    }
    ctx.exit_code = kExitClean;
  });
}

}  // namespace parity::cli
