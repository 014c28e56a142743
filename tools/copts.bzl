"""Compiler options for Parity's own code."""

PARITY_COPTS = [
    "-Wall",
    "-Wextra",
    "-Werror",
    "-Wno-unused-parameter",
]

# Hot code (the engine's step loop, the explorer): -O3, except under the asan config (.bazelrc),
# where compiling it at -O3 with the sanitizers took a minute a file and CI pays for it.
PARITY_HOT_COPTS = select({
    "//tools:asan": [],
    "//conditions:default": ["-O3"],
})
