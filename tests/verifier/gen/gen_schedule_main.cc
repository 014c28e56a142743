// Prints the generated schedule of each seed given on the command line (reproducing a
// differential test's failure from its seed): gen_schedule SEED [SEED...].
#include <cstdio>
#include <cstdlib>

#include "tests/verifier/gen/schedule_gen.h"

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: gen_schedule SEED [SEED...]\n");
    return 2;
  }
  for (int i = 1; i < argc; ++i) {
    char* end = nullptr;
    const unsigned long long seed = std::strtoull(argv[i], &end, 0);
    if (end == argv[i] || *end != '\0') {
      std::fprintf(stderr, "gen_schedule: not a number: %s\n", argv[i]);
      return 2;
    }
    std::fputs(parity::gen::GenerateSchedule(seed).c_str(), stdout);
  }
  return 0;
}
