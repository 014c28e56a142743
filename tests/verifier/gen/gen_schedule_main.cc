// Prints the generated schedule of each seed given on the command line (reproducing a
// differential test's failure from its seed):
//   gen_schedule [--small] [--offsets] [--extended] [--nonws] [--chains] SEED [SEED...]
// --small: the race oracle test's options (2 agents per CTA, 2 trips, 3 operations per role);
// --offsets: GenOptions::variable_offsets; --extended: GenOptions::extended_ops; --nonws:
// GenOptions::nonws; --chains: GenOptions::cta_chains with up to 4 CTAs.
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "tests/verifier/gen/schedule_gen.h"

int main(int argc, char** argv) {
  parity::gen::GenOptions o;
  int seeds = 0;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--small") == 0) {
      o.max_agents_per_cta = 2;
      o.max_trips = 2;
      o.max_ops = 3;
      continue;
    }
    if (std::strcmp(argv[i], "--offsets") == 0) {
      o.variable_offsets = true;
      continue;
    }
    if (std::strcmp(argv[i], "--extended") == 0) {
      o.extended_ops = true;
      continue;
    }
    if (std::strcmp(argv[i], "--nonws") == 0) {
      o.nonws = true;
      continue;
    }
    if (std::strcmp(argv[i], "--chains") == 0) {
      o.cta_chains = true;
      o.max_ctas = 4;
      continue;
    }
    char* end = nullptr;
    const unsigned long long seed = std::strtoull(argv[i], &end, 0);
    if (end == argv[i] || *end != '\0') {
      std::fprintf(stderr, "gen_schedule: not a number or option: %s\n", argv[i]);
      return 2;
    }
    std::fputs(parity::gen::GenerateSchedule(seed, o).c_str(), stdout);
    ++seeds;
  }
  if (seeds == 0) {
    std::fprintf(stderr,
                 "usage: gen_schedule [--small] [--offsets] [--extended] [--nonws] [--chains] SEED...\n");
    return 2;
  }
  return 0;
}
