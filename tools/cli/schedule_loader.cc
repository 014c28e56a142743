#include "tools/cli/schedule_loader.h"

#include <charconv>

namespace parity::cli {
namespace {

Expected<std::pair<std::string, int64_t>> ParseDefine(const std::string& text) {
  size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0) {
    return Status("cli.define", "-D '" + text + "': expected NAME=VALUE, e.g. -D STAGES=4");
  }
  std::string name = text.substr(0, eq);
  std::string value = text.substr(eq + 1);
  int64_t v = 0;
  int base = 10;
  std::string_view digits = value;
  bool negative = false;
  if (!digits.empty() && digits[0] == '-') {
    negative = true;
    digits.remove_prefix(1);
  }
  // from_chars takes a sign of its own: `--4` must not read as -(-4).
  if (!digits.empty() && (digits[0] == '-' || digits[0] == '+')) digits = {};
  if (digits.size() > 2 && digits[0] == '0' && (digits[1] == 'x' || digits[1] == 'X')) {
    base = 16;
    digits.remove_prefix(2);
  }
  auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v, base);
  if (digits.empty() || ec != std::errc() || ptr != digits.data() + digits.size()) {
    return Status("cli.define", "-D " + text + ": '" + value + "' is not an integer");
  }
  return std::make_pair(name, negative ? -v : v);
}

}  // namespace

void AddScheduleOptions(CLI::App* sub, ScheduleOptions& options) {
  sub->add_option("file", options.file, "the schedule (.pipe)")->required();
  sub->add_option("-D,--define", options.defines, "override a param: -D STAGES=4 (repeatable)")
      ->take_all();
  sub->add_option("--policy", options.policy,
                  "scheduling policy: eager, lazy, round-robin, random")
      ->capture_default_str();
  sub->add_option("--seed", options.seed, "seed of the random policy")->capture_default_str();
}

Status ToStatus(const api::Error& error) {
  return Status(error.rule, error.message,
                SourceLocation{error.location.file, error.location.line, error.location.column});
}

Expected<api::Policy> ParseSchedulePolicy(const std::string& name) {
  if (name == "eager") return api::Policy::kEager;
  if (name == "lazy") return api::Policy::kLazy;
  if (name == "round-robin" || name == "rr") return api::Policy::kRoundRobin;
  if (name == "random") return api::Policy::kRandom;
  return Status("cli.policy", "unknown policy '" + name +
                                  "' (expected eager, lazy, round-robin or random)");
}

Expected<api::Schedule> LoadApiSchedule(const ScheduleOptions& options) {
  api::Result<api::Schedule> schedule = api::Schedule::FromFile(options.file);
  if (!schedule.ok()) return ToStatus(schedule.error());
  for (const std::string& d : options.defines) {
    auto parsed = ParseDefine(d);
    if (!parsed.ok()) return parsed.status();
    api::Result<bool> set = schedule->SetParam(parsed->first, parsed->second);
    if (!set.ok()) return ToStatus(set.error());
  }
  return std::move(schedule).value();
}

}  // namespace parity::cli
