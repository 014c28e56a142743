"""Compiler options for Parity's own code."""

PARITY_COPTS = [
    "-Wall",
    "-Wextra",
    "-Werror",
    "-Wno-unused-parameter",
]

# Code that runs once per command or per test case, not per state or step: the tests and the
# command line's glue. -O0 (the rest builds at -O2, .bazelrc): their compilation is most of CI's
# build (the CLI11, JSON, spdlog and GoogleTest headers parsed in every file), and what they run
# hot lives in the libraries they call.
PARITY_COLD_COPTS = PARITY_COPTS + ["-O0"]

# Hot code (the engine's step loop, the explorer): -O3; -O1 under the asan config (.bazelrc),
# whose other code builds at -O0. With the sanitizers, -O3 took a minute a file to compile and
# -O0 made the explorer's tests run 5 times longer.
PARITY_HOT_COPTS = select({
    "//tools:asan": ["-O1"],
    "//conditions:default": ["-O3"],
})
