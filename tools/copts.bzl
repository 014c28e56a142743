"""Compiler options for Parity's own code."""

PARITY_COPTS = [
    "-Wall",
    "-Wextra",
    "-Werror",
    "-Wno-unused-parameter",
]
