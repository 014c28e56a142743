// `parity litmus [TEST.pipe...|--all] [--h100-dir traces/litmus] [--write-sim DIR]`: the litmus
// comparison (issue 7, litmus/README.md). For every test, the set of outcomes the model allows
// (verifier/litmus.h, exhaustive search) is held against the H100 histogram
// <h100-dir>/<test>.h100.txt recorded by the GPU litmus runner: every observed outcome must be
// allowed; allowed outcomes never observed are listed.
//
// Exit codes: 0 every test that ran on the H100 agrees (or is undefined behaviour in the model,
// which is reported), 1 some observed outcome is not allowed, 2 bad input (a test that does not
// parse or cannot be enumerated, a missing or garbled histogram line, a hash mismatch).
// Tests without an H100 file are listed as "not run on H100" and do not change the exit code.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "parity/parity.h"
#include "sim/common/read_file.h"
#include "tools/cli/command.h"
#include "tools/cli/report_format.h"
#include "tools/cli/schedule_loader.h"

namespace parity::cli {
namespace {

namespace fs = std::filesystem;

struct LitmusOptions {
  std::vector<std::string> tests;
  bool all = false;
  std::string dir = "litmus";
  std::string h100_dir = "traces/litmus";
  std::string write_sim;
  bool verbose = false;
  std::string format = "text";
};

struct Row {
  std::string name;
  size_t sim_outcomes = 0;
  bool sim_ub = false;
  bool ran = false;
  uint64_t h100_runs = 0;
  size_t h100_outcomes = 0;
  api::LitmusComparison cmp;
  api::LitmusHistogram sim;
  api::LitmusHistogram h100;
};

bool ReadFile(const std::string& path, std::string* out) {
  Expected<std::string> text = ReadInputFile(path, "litmus test", "io", kMaxScheduleFileBytes);
  if (!text.ok()) return false;
  *out = std::move(text).value();
  return true;
}

int RunLitmus(const LitmusOptions& o, Context& ctx) {
  std::vector<std::string> files = o.tests;
  if (o.all) {
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(o.dir, ec)) {
      if (entry.path().extension() == ".pipe") files.push_back(entry.path().string());
    }
    if (ec) {
      ReportBadInput(ctx, Status("litmus.input", "cannot list " + o.dir + ": " + ec.message()));
      return kExitBadInput;
    }
    std::sort(files.begin(), files.end());
  }
  if (files.empty()) {
    ReportBadInput(ctx, Status("litmus.input", "name TEST.pipe files or --all"));
    return kExitBadInput;
  }
  if (!o.write_sim.empty()) {
    std::error_code ec;
    fs::create_directories(o.write_sim, ec);
  }

  std::vector<Row> rows;
  for (const std::string& file : files) {
    // A client of the C++ API (parity/parity.h).
    api::Result<api::Schedule> test = api::Schedule::FromFile(file);
    if (!test.ok()) {
      ReportBadInput(ctx, ToStatus(test.error()));
      return kExitBadInput;
    }
    Row row;
    row.name = fs::path(file).stem().string();
    api::Result<api::LitmusHistogram> sim = api::SimulateLitmus(*test, row.name);
    if (!sim.ok()) {
      ReportBadInput(ctx, ToStatus(sim.error()));
      return kExitBadInput;
    }
    row.sim = *sim;
    row.sim_outcomes = sim->counts.size();
    for (const auto& [outcome, n] : sim->counts) row.sim_ub |= outcome.starts_with("ub{");
    if (!o.write_sim.empty()) {
      const std::string out = (fs::path(o.write_sim) / (row.name + ".sim.txt")).string();
      std::ofstream f(out, std::ios::binary);
      f << sim->ToText();
      if (!f) {
        ReportBadInput(ctx, Status("litmus.output", "cannot write " + out));
        return kExitBadInput;
      }
    }
    const std::string h100_path = (fs::path(o.h100_dir) / (row.name + ".h100.txt")).string();
    std::string text;
    if (ReadFile(h100_path, &text)) {
      api::Result<api::LitmusHistogram> h100 = api::LitmusHistogram::Parse(text, h100_path);
      if (!h100.ok()) {
        ReportBadInput(ctx, ToStatus(h100.error()));
        return kExitBadInput;
      }
      api::Result<api::LitmusComparison> cmp = api::CompareLitmus(*sim, *h100);
      if (!cmp.ok()) {
        ReportBadInput(ctx, ToStatus(cmp.error()).At(SourceLocation{h100_path, 1, 0}));
        return kExitBadInput;
      }
      row.ran = true;
      row.h100 = *h100;
      row.h100_runs = h100->runs;
      row.h100_outcomes = h100->counts.size();
      row.cmp = *cmp;
    }
    rows.push_back(std::move(row));
  }

  if (o.format == "json") {
    int fails = 0;
    nlohmann::json tests = nlohmann::json::array();
    for (const Row& r : rows) {
      const api::LitmusVerdict v = r.ran ? r.cmp.verdict : api::LitmusVerdict::kNotRun;
      fails += v == api::LitmusVerdict::kFail;
      nlohmann::json t = {{"name", r.name},
                          {"verdict", api::LitmusVerdictName(v)},
                          {"sim_outcomes", r.sim_outcomes},
                          {"sim_undefined", r.sim_ub},
                          {"ran_on_h100", r.ran},
                          {"h100_runs", r.h100_runs},
                          {"h100_outcomes", r.h100_outcomes},
                          {"unexpected", r.cmp.unexpected},
                          {"never_observed", r.ran ? r.cmp.never_observed
                                                   : std::vector<std::string>{}}};
      if (o.verbose) {
        t["sim"] = r.sim.counts;
        t["h100"] = r.h100.counts;
      }
      tests.push_back(std::move(t));
    }
    const int exit_code = fails > 0 ? kExitViolations : kExitClean;
    PrintDocument(nlohmann::json{{"schema", SchemaId("litmus")},
                                 {"exit_code", exit_code},
                                 {"tests", tests}});
    return exit_code;
  }
  std::printf("%-40s %12s %10s %14s  %s\n", "test", "sim outcomes", "h100 runs", "h100 outcomes",
              "verdict");
  int fails = 0, undefined = 0, not_run = 0, agree = 0;
  for (const Row& r : rows) {
    const api::LitmusVerdict v = r.ran ? r.cmp.verdict : api::LitmusVerdict::kNotRun;
    std::string sim_col = std::to_string(r.sim_outcomes) + (r.sim_ub ? " (ub)" : "");
    if (r.ran) {
      std::printf("%-40s %12s %10llu %14zu  %s\n", r.name.c_str(), sim_col.c_str(),
                  static_cast<unsigned long long>(r.h100_runs), r.h100_outcomes,
                  api::LitmusVerdictName(v));
    } else {
      std::printf("%-40s %12s %10s %14s  %s\n", r.name.c_str(), sim_col.c_str(), "-", "-",
                  api::LitmusVerdictName(v));
    }
    switch (v) {
      case api::LitmusVerdict::kAgree: ++agree; break;
      case api::LitmusVerdict::kFail: ++fails; break;
      case api::LitmusVerdict::kUndefined: ++undefined; break;
      case api::LitmusVerdict::kNotRun: ++not_run; break;
    }
    for (const std::string& u : r.cmp.unexpected) {
      std::printf("    observed, not allowed: %s  (%llu runs)\n", u.c_str(),
                  static_cast<unsigned long long>(r.h100.counts.at(u)));
    }
    if (r.ran) {
      for (const std::string& n : r.cmp.never_observed) {
        std::printf("    allowed, never observed: %s\n", n.c_str());
      }
    }
    if (o.verbose) {
      for (const auto& [outcome, n] : r.sim.counts) std::printf("    sim  %s\n", outcome.c_str());
      for (const auto& [outcome, n] : r.h100.counts) {
        std::printf("    h100 %8llu  %s\n", static_cast<unsigned long long>(n), outcome.c_str());
      }
    }
  }
  std::printf("%zu tests: %d agree, %d undefined in the model (H100 behaviour reported), %d FAIL, "
              "%d not run on H100\n",
              rows.size(), agree, undefined, fails, not_run);
  if (not_run > 0) {
    std::printf("not run on H100:");
    for (const Row& r : rows) {
      if (!r.ran) std::printf(" %s", r.name.c_str());
    }
    std::printf("\n");
  }
  return fails > 0 ? kExitViolations : kExitClean;
}

}  // namespace

void AddLitmusCommand(CLI::App& app, Context& ctx) {
  auto o = std::make_shared<LitmusOptions>();
  CLI::App* sub = app.add_subcommand(
      "litmus",
      "Hold the model against the H100: allowed outcomes of each litmus test (exhaustive search) "
      "vs the recorded H100 histograms");
  sub->add_option("tests", o->tests, "litmus tests (.pipe)");
  sub->add_flag("--all", o->all, "every .pipe in --dir");
  sub->add_option("--dir", o->dir, "where --all looks for tests (default litmus)");
  sub->add_option("--h100-dir", o->h100_dir,
                  "where the H100 histograms <test>.h100.txt are (default traces/litmus)");
  sub->add_option("--write-sim", o->write_sim, "also write <test>.sim.txt histograms here");
  sub->add_flag("--outcomes", o->verbose, "print every allowed and observed outcome");
  AddFormatOption(sub, o->format, "litmus");
  sub->callback([o, &ctx] {
    ctx.format = o->format;
    ctx.exit_code = RunLitmus(*o, ctx);
  });
}

}  // namespace parity::cli
