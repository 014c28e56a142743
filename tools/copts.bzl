"""Compiler options for Parity's own code."""

PARITY_COPTS = [
    "-Wall",
    "-Wextra",
    "-Werror",
    "-Wno-unused-parameter",
]

# Hot code (the engine's step loop, the explorer): -O3; -O1 under the asan config (.bazelrc),
# whose other code builds at -O0. With the sanitizers, -O3 took a minute a file to compile and
# -O0 made the explorer's tests run 5 times longer.
PARITY_HOT_COPTS = select({
    "//tools:asan": ["-O1"],
    "//conditions:default": ["-O3"],
})
