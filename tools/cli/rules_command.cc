// `parity rules [CODE]`: the stable rule codes and what each one means.
#include <cstdio>
#include <memory>
#include <string>

#include "parity/parity.h"
#include "tools/cli/command.h"
#include "tools/cli/report_format.h"
#include "tools/cli/schedule_loader.h"

namespace parity::cli {

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
      for (const api::Rule& r : api::Rules()) {
        std::printf("%s  %-34s %-7s %s\n", r.code.c_str(), r.slug.c_str(),
                    api::SeverityName(r.severity), r.title.c_str());
      }
      ctx.exit_code = kExitClean;
      return;
    }
    api::Result<api::Rule> rule = api::FindRule(*code);
    if (!rule.ok()) return ReportBadInput(ctx, ToStatus(rule.error()));
    std::printf("%s %s (%s)\n%s\n\n%s\n", rule->code.c_str(), rule->slug.c_str(),
                api::SeverityName(rule->severity), rule->title.c_str(),
                rule->explanation.c_str());
    for (const api::Rule::Source& cite : rule->sources) {
      if (!cite.litmus.empty()) {
        std::printf("\nShown on the H100 by litmus/%s.pipe (parity litmus litmus/%s.pipe).\n",
                    cite.litmus.c_str(), cite.litmus.c_str());
      } else {
        std::printf("\nPTX ISA, %s:\n  \"%s\"\n", cite.section.c_str(), cite.quote.c_str());
      }
    }
    ctx.exit_code = kExitClean;
  });
}

}  // namespace parity::cli
