"""`cuda_binary`: a self-contained Hopper binary from .cu (nvcc) and .cc (the C++ toolchain) sources."""

load("@local_cuda//:defs.bzl", "CUDA_AVAILABLE", "NVCC")

HOPPER_GENCODE = "-gencode=arch=compute_90a,code=sm_90a"

def cuda_binary(name, cu_srcs, cu_hdrs = [], srcs = [], deps = [], defines = [], testonly = 0, **kwargs):
    """Compiles each of `cu_srcs` with nvcc for sm_90a and links them with `srcs` and `deps`.

    `cu_hdrs` are the headers (labels) the .cu files include; they are passed to nvcc's sandbox.
    Without CUDA, builds a stub that prints why the target was skipped and exits 0.
    """
    if not CUDA_AVAILABLE:
        native.genrule(
            name = name + "_skip_src",
            outs = [name + "_skip.cc"],
            cmd = "cat > $@ <<'EOF'\n#include <cstdio>\nint main() {\n  std::puts(\"" + name +
                  ": skipped: CUDA (nvcc) was not found when this was built; set CUDA_PATH or install CUDA in /usr/local/cuda\");\n  return 0;\n}\nEOF",
            testonly = testonly,
        )
        native.cc_binary(name = name, srcs = [name + "_skip.cc"], testonly = testonly, **kwargs)
        return
    objs = []
    define_flags = " ".join(["-D" + d for d in defines])
    for src in cu_srcs:
        obj = name + "_cu/" + src.replace("/", "_").replace(".cu", ".o")
        native.genrule(
            name = name + "_nvcc_" + src.replace("/", "_").replace(".", "_"),
            srcs = [src] + cu_hdrs,
            outs = [obj],
            cmd = (NVCC + " -c -std=c++20 -O3 " + HOPPER_GENCODE +
                   " -Xcompiler=-fPIC,-Wall -Werror=all-warnings -I. -I$(GENDIR) " + define_flags +
                   " -o $@ $(location " + src + ")"),
            testonly = testonly,
        )
        objs.append(obj)
    native.cc_binary(
        name = name,
        srcs = srcs + objs,
        deps = deps + ["@local_cuda//:cudart_static"],
        linkstatic = 1,
        defines = defines,
        testonly = testonly,
        **kwargs
    )
