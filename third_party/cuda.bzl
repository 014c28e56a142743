"""Finds CUDA's nvcc and builds Hopper (sm_90a) binaries with it.

`cuda_configure` is a repository rule: it looks for `$CUDA_PATH/bin/nvcc`, else
`/usr/local/cuda/bin/nvcc`, and writes `@local_cuda//:defs.bzl` with `CUDA_AVAILABLE`. Without
CUDA every GPU target built by `cuda_binary` becomes a stub that says it was skipped and why, so
the rest of the tree still builds and tests.
"""

def _cuda_configure_impl(ctx):
    candidates = []
    if ctx.os.environ.get("PARITY_NO_CUDA", "") not in ("", "0"):
        # Lets a machine with CUDA prove that the tree builds and tests without it.
        print("PARITY_NO_CUDA is set; GPU targets will be skipped.")
        ctx.file("defs.bzl", "CUDA_AVAILABLE = False\nCUDA_PATH = \"\"\nNVCC = \"\"\n")
        ctx.file("BUILD", "package(default_visibility = [\"//visibility:public\"])\n" +
                          "cc_library(name = \"cudart_static\")\n" +
                          "cc_library(name = \"driver_headers\")\n")
        return
    env_path = ctx.os.environ.get("CUDA_PATH", "")
    if env_path:
        candidates.append(env_path)
    candidates.append("/usr/local/cuda")
    cuda_path = None
    for c in candidates:
        if ctx.path(c + "/bin/nvcc").exists and ctx.path(c + "/lib64/libcudart_static.a").exists:
            cuda_path = c
            break
    if cuda_path == None:
        print("CUDA not found (looked for nvcc in: %s); GPU targets will be skipped." %
              ", ".join([c + "/bin" for c in candidates]))
        ctx.file("defs.bzl", "CUDA_AVAILABLE = False\nCUDA_PATH = \"\"\nNVCC = \"\"\n")
        ctx.file("BUILD", "package(default_visibility = [\"//visibility:public\"])\n" +
                          "cc_library(name = \"cudart_static\")\n" +
                          "cc_library(name = \"driver_headers\")\n")
        return
    real = str(ctx.path(cuda_path).realpath)
    ctx.symlink(real + "/include", "include")
    ctx.symlink(real + "/lib64/libcudart_static.a", "lib64/libcudart_static.a")
    ctx.file("defs.bzl", "CUDA_AVAILABLE = True\nCUDA_PATH = \"%s\"\nNVCC = \"%s/bin/nvcc\"\n" %
                         (real, real))
    ctx.file("BUILD", """package(default_visibility = ["//visibility:public"])

# The CUDA runtime, linked statically so that GPU binaries run on machines with only a driver.
cc_library(
    name = "cudart_static",
    srcs = ["lib64/libcudart_static.a"],
    hdrs = glob(["include/**/*.h", "include/**/*.hpp"]),
    includes = ["include"],
    linkopts = ["-ldl", "-lpthread", "-lrt"],
    linkstatic = 1,
)

# cuda.h and the headers it includes, with nothing to link: the capture library (tools/capture)
# takes the driver's types from them and its functions from the driver the program loads.
cc_library(
    name = "driver_headers",
    hdrs = glob(["include/*.h"]),
    includes = ["include"],
)
""")

cuda_configure = repository_rule(
    implementation = _cuda_configure_impl,
    environ = ["CUDA_PATH", "PARITY_NO_CUDA"],
    local = True,
)
