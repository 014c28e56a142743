// `parity rules [CODE]`: the stable rule codes and what each one means.
#include <cstdio>
#include <memory>
#include <string>

#include "sim/model/citations.h"
#include "sim/model/codes.h"
#include "parity/parity.h"
#include "tools/cli/command.h"
#include "tools/cli/report_format.h"

namespace parity::cli {
namespace {

const char* SeverityText(model::Severity s) {
  return s == model::Severity::kError ? "error" : s == model::Severity::kNote ? "note" : "warning";
}

}  // namespace

void AddRulesCommand(CLI::App& app, Context& ctx) {
  auto code = std::make_shared<std::string>();
  auto format = std::make_shared<std::string>("text");
  CLI::App* sub = app.add_subcommand(
      "rules", "list the rule codes (violations Parity reports), or explain one: rules M1005");
  sub->add_option("code", *code, "a code (M1005) or slug (mbarrier-over-arrival) to explain");
  AddFormatOption(sub, *format, "rules");
  sub->callback([&ctx, code, format] {
    ctx.format = *format;
    if (*format == "json") {
      // The table of the C++ API (parity/parity.h), which SARIF logs carry too.
      nlohmann::json rules = nlohmann::json::array();
      for (const api::Rule& r : api::Rules()) {
        if (code->empty() || r.code == *code || r.slug == *code) rules.push_back(RuleJson(r));
      }
      if (rules.empty()) {
        ReportBadInput(ctx, Status("cli.rule", "unknown rule code '" + *code +
                                                   "'; 'parity rules' lists them"));
        return;
      }
      PrintDocument(nlohmann::json{{"schema", SchemaId("rules")}, {"rules", rules}});
      ctx.exit_code = kExitClean;
      return;
    }
    if (code->empty()) {
      for (model::Code c : model::AllCodes()) {
        std::printf("%s  %-34s %-7s %s\n", std::string(model::CodeId(c)).c_str(),
                    std::string(model::CodeSlug(c)).c_str(),
                    SeverityText(model::CodeSeverity(c)),
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
                SeverityText(model::CodeSeverity(*c)),
                std::string(model::CodeTitle(*c)).c_str(),
                std::string(model::CodeExplanation(*c)).c_str());
    for (const model::Citation& cite : model::CodeCitations(*c)) {
      if (!cite.litmus.empty()) {
        std::printf("\nShown on the H100 by litmus/%s.pipe (parity litmus litmus/%s.pipe).\n",
                    std::string(cite.litmus).c_str(), std::string(cite.litmus).c_str());
      } else {
        std::printf("\nPTX ISA, %s:\n  \"%s\"\n", std::string(cite.section).c_str(),
                    std::string(cite.quote).c_str());
      }
    }
    ctx.exit_code = kExitClean;
  });
}

}  // namespace parity::cli
