#!/bin/bash
# Sourced by the GPU binary tests. non_runtime_libs BINARY prints the shared libraries BINARY
# needs beyond the C/C++ runtime (empty when it is self-contained and runs on a machine with just
# the driver). The sanitizer runtimes are allowed: the --config=asan build of the suite links them
# into every binary, and that build is never carried to a GPU machine.
non_runtime_libs() {
  ldd "$1" | awk '{print $1}' | grep -v -E \
    '^(linux-vdso\.so\.1|/lib64/ld-linux-x86-64\.so\.2|libc\.so\.6|libstdc\+\+\.so\.6|libm\.so\.6|libgcc_s\.so\.1|libdl\.so\.2|libpthread\.so\.0|librt\.so\.1|libasan\.so\.[0-9]+|libubsan\.so\.[0-9]+)$' || true
}
