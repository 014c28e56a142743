// `parity rules [CODE]`: the stable rule codes and what each one means.
#include <cstdio>
#include <memory>
#include <string>

#include "sim/model/codes.h"
#include "tools/cli/command.h"

namespace parity::cli {

void AddRulesCommand(CLI::App& app, Context& ctx) {
  auto code = std::make_shared<std::string>();
  CLI::App* sub = app.add_subcommand(
      "rules", "list the rule codes (violations Parity reports), or explain one: rules M1005");
  sub->add_option("code", *code, "a code (M1005) or slug (mbarrier-over-arrival) to explain");
  sub->callback([&ctx, code] {
    if (code->empty()) {
      for (model::Code c : model::AllCodes()) {
        std::printf("%s  %-34s %-7s %s\n", std::string(model::CodeId(c)).c_str(),
                    std::string(model::CodeSlug(c)).c_str(),
                    model::CodeSeverity(c) == model::Severity::kWarning ? "warning" : "error",
                    std::string(model::CodeTitle(c)).c_str());
      }
      ctx.exit_code = kExitClean;
      return;
    }
    std::optional<model::Code> c = model::CodeFromId(*code);
    if (!c) c = model::CodeFromSlug(*code);
    if (!c) {
      ReportBadInput(ctx, Status("cli.rule", "unknown rule code '" + *code +
                                                 "'; 'parity rules' lists them"));
      return;
    }
    std::printf("%s %s (%s)\n%s\n\n%s\n", std::string(model::CodeId(*c)).c_str(),
                std::string(model::CodeSlug(*c)).c_str(),
                model::CodeSeverity(*c) == model::Severity::kWarning ? "warning" : "error",
                std::string(model::CodeTitle(*c)).c_str(),
                std::string(model::CodeExplanation(*c)).c_str());
    ctx.exit_code = kExitClean;
  });
}

}  // namespace parity::cli
