// PARITY_HD marks the functions that both compilers build: g++ for the simulator, the tools and
// their tests, nvcc for the GPU executor's kernel (gpu/executor.cu). Code marked with it uses
// fixed-size arrays and plain structs only: no std:: containers, no exceptions, no allocation.
#ifndef PARITY_SIM_COMMON_HOST_DEVICE_H_
#define PARITY_SIM_COMMON_HOST_DEVICE_H_

// PARITY_HD_NOINLINE: a function called from many places of the kernel (the expression
// evaluator) stays one out-of-line copy on the device, where inlining every call site would
// multiply the interpreter's code and registers.
#if defined(__CUDACC__)
#define PARITY_HD __host__ __device__
#define PARITY_HD_NOINLINE __host__ __device__ __noinline__
#else
#define PARITY_HD
#define PARITY_HD_NOINLINE
#endif

#endif  // PARITY_SIM_COMMON_HOST_DEVICE_H_
