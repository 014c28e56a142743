// A kernel project's unit test of its pipeline, built outside this repository against an
// installed copy of the API (tools/install), or of the repository through Bazel: only
// parity/parity.h and the library.
//   client CLEAN.pipe BAD.pipe
// CLEAN must complete and verify; BAD must deadlock (P2001) in check and in explore. Exit 0 when
// both hold, 1 with the first difference printed.
#include "parity/parity.h"

#include <cstdio>
#include <string>

namespace {

int Fail(const std::string& what) {
  std::fprintf(stderr, "client: %s\n", what.c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) return Fail("usage: client CLEAN.pipe BAD.pipe");
  namespace api = parity::api;

  auto clean = api::Schedule::FromFile(argv[1]);
  if (!clean.ok()) return Fail(clean.error().ToString());
  auto check = api::Check(*clean);
  if (!check.ok()) return Fail(check.error().ToString());
  if (check->outcome != api::Outcome::kCompleted || check->has_errors()) {
    return Fail(std::string("check of the clean schedule: ") + api::OutcomeName(check->outcome));
  }
  auto explore = api::Explore(*clean, {.max_states = 1'000'000});
  if (!explore.ok()) return Fail(explore.error().ToString());
  if (explore->verdict != api::Verdict::kVerified) {
    return Fail(std::string("explore of the clean schedule: ") +
                api::VerdictName(explore->verdict));
  }

  auto bad = api::Schedule::FromFile(argv[2]);
  if (!bad.ok()) return Fail(bad.error().ToString());
  auto bad_check = api::Check(*bad);
  if (!bad_check.ok()) return Fail(bad_check.error().ToString());
  if (bad_check->findings.empty() || bad_check->findings.front().code != "P2001") {
    return Fail("check of the bad schedule: no P2001 first");
  }
  auto bad_explore = api::Explore(*bad, {.max_states = 1'000'000});
  if (!bad_explore.ok()) return Fail(bad_explore.error().ToString());
  if (bad_explore->verdict != api::Verdict::kDeadlock) {
    return Fail(std::string("explore of the bad schedule: ") +
                api::VerdictName(bad_explore->verdict));
  }

  // An unknown parameter is an Error, not a finding.
  if (clean->SetParam("NO_SUCH_PARAM", 1).ok()) return Fail("SetParam accepted an unknown name");

  std::printf("client: %s verified in %llu states; %s: %s\n", clean->name().c_str(),
              static_cast<unsigned long long>(explore->states), bad->name().c_str(),
              bad_check->findings.front().ToString().c_str());
  return 0;
}
