// bench/explore_bench: the explorer's throughput (stored states per second on one core), bytes per
// stored state and the reduction factor (states of the brute-force search / states of the
// reduced search), on the 2-producer 2-consumer 4-stage ring
// (sim/examples/explore/ring_2p2c.pipe) and on the 2x2 multicast GEMM main loop
// (sim/examples/gemm_tma_multicast_2x2.pipe).
//   bazel run -c opt //bench:explore_bench -- [--seconds S] [--skip-brute] [--skip-reduced]
//   bazel run -c opt //bench:explore_bench -- --file F.pipe [-D NAME=V ...] [--seconds S]
//   ... --max-states N: every search stops after storing N states (equal work for comparing
//   builds; a time bound gives the faster build a larger table).
//   ... --threads T: also the breadth-first search on one thread and on T threads (the
//   parallel search is breadth-first), with the speed-up.
// Each search has a time bound; a search that hits it is reported as incomplete, and a reduction
// factor against an incomplete brute-force search as a lower bound. Peak resident memory of the
// process is printed at the end (/proc/self/status VmHWM).
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "sim/ir/ir.h"
#include "sim/ir/parser.h"
#include "verifier/explore.h"

namespace {

using parity::verifier::Explore;
using parity::verifier::ExploreOptions;
using parity::verifier::ExploreResult;
using parity::verifier::ExploreVerdict;
using parity::verifier::ExploreVerdictName;

// CPU time of the whole process (all threads): on a machine shared with other work the wall
// clock also counts time the search was not scheduled.
double CpuSeconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return double(t.tv_sec) + double(t.tv_nsec) * 1e-9;
}

// A search that takes less than a second of CPU is repeated until the repetitions took one (at
// most 1000 times): *cpu and the result's seconds are then per search, averaged, so that a small
// search's rate is not a single timer reading of a few milliseconds.
ExploreResult Timed(const parity::ir::Program& p, const std::vector<int64_t>& v,
                    const ExploreOptions& o, double* cpu) {
  const double c0 = CpuSeconds();
  ExploreResult r = Explore(p, v, o);
  double total = CpuSeconds() - c0, wall = r.stats.seconds;
  int reps = 1;
  while (total < 1.0 && reps < 1000) {
    const double c1 = CpuSeconds();
    wall += Explore(p, v, o).stats.seconds;
    total += CpuSeconds() - c1;
    ++reps;
  }
  *cpu = total / reps;
  r.stats.seconds = wall / reps;
  return r;
}

void Line(const char* what, const ExploreResult& r, double cpu) {
  std::printf(
      "  %-18s %-10s %11llu states %8.2f s %10.0f states/s %5.1f B/state (table) "
      "peak frontier %llu depth %u\n"
      "  %-18s CPU %.2f s (%.0f states per CPU-second); %llu expanded, %llu transitions taken "
      "of %llu enabled (%llu to stored states predicted without stepping, %llu new states "
      "stored by their predicted fingerprint; %llu agent steps from the memo)\n",
      what, ExploreVerdictName(r.verdict), static_cast<unsigned long long>(r.stats.states),
      r.stats.seconds, r.stats.states_per_second(), r.stats.bytes_per_state(),
      static_cast<unsigned long long>(r.stats.peak_frontier), r.stats.depth, "", cpu,
      cpu > 0 ? double(r.stats.states) / cpu : 0.0,
      static_cast<unsigned long long>(r.stats.expanded),
      static_cast<unsigned long long>(r.stats.transitions),
      static_cast<unsigned long long>(r.stats.enabled),
      static_cast<unsigned long long>(r.stats.predicted),
      static_cast<unsigned long long>(r.stats.predicted_new),
      static_cast<unsigned long long>(r.stats.memo_hits));
}

std::string PeakRss() {
  std::ifstream f("/proc/self/status");
  std::string line;
  while (std::getline(f, line)) {
    if (line.rfind("VmHWM:", 0) == 0) return line.substr(6);
  }
  return "?";
}

int Bench(const char* title, const std::string& path,
          const std::vector<std::pair<std::string, int64_t>>& defs, double seconds,
          uint64_t max_states, bool reduced, bool brute, int threads) {
  auto p = parity::ir::ParseFile(path);
  if (!p.ok()) {
    std::fprintf(stderr, "%s\n", p.status().ToString().c_str());
    return 2;
  }
  auto v = parity::ir::BindParams(*p, defs);
  if (!v.ok()) {
    std::fprintf(stderr, "%s\n", v.status().ToString().c_str());
    return 2;
  }
  std::printf("%s\n", title);
  ExploreOptions o;
  o.time_limit_s = seconds;
  if (max_states != 0) o.max_states = max_states;
  o.stop_at_first = false;
  o.check_rules = false;  // raw search throughput
  double cpu = 0;
  ExploreResult red;
  if (reduced) {
    red = Timed(*p, *v, o, &cpu);
    Line("reduced", red, cpu);
    std::printf("  %s\n", red.symmetry.c_str());
  }
  if (threads > 1) {
    // The parallel search is breadth-first: compare with the breadth-first search on one thread.
    ExploreOptions b = o;
    b.breadth_first = true;
    double cpu1 = 0, cpuT = 0;
    const ExploreResult r1 = Timed(*p, *v, b, &cpu1);
    Line("reduced BFS 1 thr", r1, cpu1);
    b.threads = threads;
    const ExploreResult rt = Timed(*p, *v, b, &cpuT);
    char label[32];
    std::snprintf(label, sizeof label, "reduced BFS %d thr", threads);
    Line(label, rt, cpuT);
    std::printf("  speed-up with %d threads (wall clock, breadth-first): %.2fx; same states: %s\n",
                threads, rt.stats.seconds > 0 ? r1.stats.seconds / rt.stats.seconds : 0.0,
                r1.stats.states == rt.stats.states && r1.verdict == rt.verdict ? "yes" : "NO");
  }
  if (!brute) return 0;
  o.reduction = false;
  const ExploreResult full = Timed(*p, *v, o, &cpu);
  Line("brute force", full, cpu);
  if (!reduced) return 0;
  std::printf("  reduction factor %.1fx%s\n",
              double(full.stats.states) / double(red.stats.states ? red.stats.states : 1),
              red.verdict == ExploreVerdict::kIncomplete ? " (reduced search incomplete: no factor)"
              : full.verdict == ExploreVerdict::kIncomplete
                  ? " (at least: the brute-force search hit the time bound)"
                  : "");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  double seconds = 60;
  uint64_t max_states = 0;  // 0: the explorer's default
  bool brute = true;
  bool reduced = true;
  int threads = 1;
  std::string file;
  std::vector<std::pair<std::string, int64_t>> defs;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--seconds" && i + 1 < argc) {
      seconds = std::atof(argv[++i]);
    } else if (a == "--max-states" && i + 1 < argc) {
      max_states = std::strtoull(argv[++i], nullptr, 10);
    } else if (a == "--threads" && i + 1 < argc) {
      threads = std::atoi(argv[++i]);
    } else if (a == "--skip-reduced") {
      reduced = false;
    } else if (a == "--skip-brute") {
      brute = false;
    } else if (a == "--file" && i + 1 < argc) {
      file = argv[++i];
    } else if (a == "-D" && i + 1 < argc) {
      const std::string d = argv[++i];
      const size_t eq = d.find('=');
      if (eq == std::string::npos) return 2;
      defs.emplace_back(d.substr(0, eq), std::atoll(d.c_str() + eq + 1));
    } else {
      std::fprintf(stderr, "unknown argument %s\n", a.c_str());
      return 2;
    }
  }
  int rc = 0;
  if (!file.empty()) {
    rc = Bench(file.c_str(), file, defs, seconds, max_states, reduced, brute, threads);
  } else {
    // bazel run: the runfiles tree holds the schedules under their workspace paths.
    rc |= Bench("ring_2p2c: 2 producers, 2 consumers, 4 stages, 8 k-tiles, 1 CTA",
                "sim/examples/explore/ring_2p2c.pipe", {}, seconds, max_states, reduced, brute,
                threads);
    rc |= Bench("gemm_tma_multicast_2x2: STAGES=2 K_TILES=2 CONSUMERS=1",
                "sim/examples/gemm_tma_multicast_2x2.pipe",
                {{"STAGES", 2}, {"K_TILES", 2}, {"CONSUMERS", 1}}, seconds, max_states, reduced,
                brute, threads);
    rc |= Bench("gemm_tma_multicast_2x2: STAGES=4 K_TILES=3 CONSUMERS=2",
                "sim/examples/gemm_tma_multicast_2x2.pipe",
                {{"STAGES", 4}, {"K_TILES", 3}, {"CONSUMERS", 2}}, seconds, max_states, reduced,
                false, threads);
  }
  std::printf("peak resident memory:%s\n", PeakRss().c_str());
  return rc;
}
