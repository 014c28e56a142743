#include <cstdio>

#include "tools/cli/command.h"
#include "tools/cli/version.h"

namespace parity::cli {

void AddVersionCommand(CLI::App& app, Context& ctx) {
  CLI::App* sub = app.add_subcommand("version", "print Parity's version and what it models");
  sub->callback([&ctx] {
    std::printf("parity %s\n", kParityVersion);
    std::printf("models: PTX ISA 8.x mbarrier, cp.async, cp.async.bulk(.tensor), st.async (sm_90a)\n");
    ctx.exit_code = kExitClean;
  });
}

}  // namespace parity::cli
