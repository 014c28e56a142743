// A stand-in for a CUDA program, for capture_test.cc: it reaches the driver (argv[1], the fake
// libcuda of fake_cuda.cc) the ways real programs do, and launches the kernels of tests/import
// with the arguments their import tests give by hand:
//   0. persistent_struct: the CUDA runtime's way (dlopen, dlsym of cuGetProcAddress_v2, every
//      other entry point from it, per-thread default stream): cuLaunchKernelEx_ptsz with a
//      256-byte Params struct holding a CUtensorMap at +128 (CUTLASS's launch idiom);
//   1. ws_pipeline: DeepGEMM's host code's way (dlsym of each function on the driver's handle):
//      cuLaunchKernel with a CUtensorMap parameter and two scalars;
//   2. ws_pipeline again, its parameters in one `extra` buffer (CU_LAUNCH_PARAM_BUFFER_POINTER);
//   3. cluster_pipeline through cuLibraryGetKernel, the CUkernel launched in place of a
//      CUfunction as the runtime does, its __cluster_dims__(2, 1, 1) from the kernel;
//   4. a cluster-dimension launch attribute on a kernel without a name the driver gives
//      (cuFuncGetName fails): the name it was looked up by.
// It exits 3, which `parity capture` passes through.
#include <cuda.h>
#include <dlfcn.h>

#include <cstdint>
#include <cstdio>
#include <cstring>

#undef cuGetProcAddress
#undef cuLaunchKernel
#undef cuLaunchKernelEx

namespace {

using GetProc = CUresult (*)(const char*, void**, int, cuuint64_t, CUdriverProcAddressQueryResult*);
using ModuleGetFunction = CUresult (*)(CUfunction*, CUmodule, const char*);
using LibraryGetKernel = CUresult (*)(CUkernel*, CUlibrary, const char*);
using KernelGetFunction = CUresult (*)(CUfunction*, CUkernel);
using EncodeTiled = CUresult (*)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*,
                                 const cuuint64_t*, const cuuint64_t*, const cuuint32_t*,
                                 const cuuint32_t*, CUtensorMapInterleave, CUtensorMapSwizzle,
                                 CUtensorMapL2promotion, CUtensorMapFloatOOBfill);
using LaunchKernel = CUresult (*)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,
                                  unsigned, unsigned, CUstream, void**, void**);
using LaunchKernelEx = CUresult (*)(const CUlaunchConfig*, CUfunction, void**, void**);

// persistent_struct.cu's Params.
struct Params {
  uint32_t groups;
  uint32_t tiles_per_group[4];
  uint32_t k_tiles_of_group[4];
  uint64_t total_tiles;
  alignas(128) CUtensorMap tmap_a;
};
static_assert(sizeof(Params) == 256);

int Fail(const char* what) {
  std::fprintf(stderr, "capture_app: %s\n", what);
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) return Fail("usage: capture_app FAKE_LIBCUDA.so");
  void* driver = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (driver == nullptr) return Fail(dlerror());

  // 0. The runtime's way.
  auto get_proc = reinterpret_cast<GetProc>(dlsym(driver, "cuGetProcAddress_v2"));
  if (get_proc == nullptr) return Fail("no cuGetProcAddress_v2");
  auto proc = [&](const char* name, cuuint64_t flags) {
    void* fn = nullptr;
    CUdriverProcAddressQueryResult status;
    return get_proc(name, &fn, CUDA_VERSION, flags, &status) == CUDA_SUCCESS ? fn : nullptr;
  };
  auto get_function = reinterpret_cast<ModuleGetFunction>(proc("cuModuleGetFunction", 0));
  auto encode = reinterpret_cast<EncodeTiled>(proc("cuTensorMapEncodeTiled", 0));
  auto launch_ex = reinterpret_cast<LaunchKernelEx>(
      proc("cuLaunchKernelEx", CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM));
  auto launch_proc = reinterpret_cast<LaunchKernel>(proc("cuLaunchKernel", 0));
  if (!get_function || !encode || !launch_ex || !launch_proc) return Fail("missing entry point");

  CUfunction persistent = nullptr;
  get_function(&persistent, nullptr, "persistent_struct");
  Params params{};
  params.groups = 2;
  params.tiles_per_group[0] = 2;
  params.tiles_per_group[1] = 1;
  params.k_tiles_of_group[0] = 2;
  params.k_tiles_of_group[1] = 3;
  params.total_tiles = 3;
  const cuuint64_t dims[2] = {4096, 4096};
  const cuuint64_t strides[1] = {4096 * 2};
  const cuuint32_t box[2] = {64, 64};
  const cuuint32_t elem[2] = {1, 1};
  if (encode(&params.tmap_a, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, reinterpret_cast<void*>(0x7000),
             dims, strides, box, elem, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
             CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) != CUDA_SUCCESS) {
    return Fail("encode");
  }
  CUlaunchConfig config{};
  config.gridDimX = 2;
  config.gridDimY = config.gridDimZ = 1;
  config.blockDimX = 384;
  config.blockDimY = config.blockDimZ = 1;
  config.sharedMemBytes = 99328;
  void* args0[] = {&params};
  if (launch_ex(&config, persistent, args0, nullptr) != CUDA_SUCCESS) return Fail("launch 0");

  // 1. DeepGEMM's way: each function by dlsym on the driver's handle.
  auto get_function2 = reinterpret_cast<ModuleGetFunction>(dlsym(driver, "cuModuleGetFunction"));
  auto encode2 = reinterpret_cast<EncodeTiled>(dlsym(driver, "cuTensorMapEncodeTiled"));
  auto launch = reinterpret_cast<LaunchKernel>(dlsym(driver, "cuLaunchKernel"));
  if (!get_function2 || !encode2 || !launch) return Fail("missing symbol");
  CUfunction ws = nullptr;
  get_function2(&ws, nullptr, "ws_pipeline");
  CUtensorMap map;
  const cuuint64_t dims1[2] = {64, 1024};
  const cuuint64_t strides1[1] = {64 * 2};
  const cuuint32_t box1[2] = {64, 64};
  if (encode2(&map, CU_TENSOR_MAP_DATA_TYPE_UINT16, 2, reinterpret_cast<void*>(0x9000), dims1,
              strides1, box1, elem, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
              CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) != CUDA_SUCCESS) {
    return Fail("encode 1");
  }
  int k_tiles = 6;
  float* out = reinterpret_cast<float*>(0xa000);
  void* args1[] = {&map, &k_tiles, &out};
  if (launch(ws, 1, 1, 1, 96, 1, 1, 0, nullptr, args1, nullptr) != CUDA_SUCCESS) {
    return Fail("launch 1");
  }

  // 2. The same launch through an `extra` buffer.
  alignas(64) unsigned char buffer[144] = {};
  std::memcpy(buffer, &map, 128);
  std::memcpy(buffer + 128, &k_tiles, 4);
  std::memcpy(buffer + 136, &out, 8);
  size_t buffer_size = sizeof buffer;
  void* extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, buffer, CU_LAUNCH_PARAM_BUFFER_SIZE,
                   &buffer_size, CU_LAUNCH_PARAM_END};
  if (launch_proc(ws, 1, 1, 1, 96, 1, 1, 0, nullptr, nullptr, extra) != CUDA_SUCCESS) {
    return Fail("launch 2");
  }

  // 3. A library kernel with compile-time cluster dims; an unnamed one with a launch attribute.
  auto get_kernel = reinterpret_cast<LibraryGetKernel>(proc("cuLibraryGetKernel", 0));
  auto kernel_function = reinterpret_cast<KernelGetFunction>(proc("cuKernelGetFunction", 0));
  if (!get_kernel || !kernel_function) return Fail("missing library entry point");
  CUkernel ck = nullptr;
  get_kernel(&ck, nullptr, "cluster_pipeline");
  CUfunction cf = nullptr;
  if (kernel_function(&cf, ck) != CUDA_SUCCESS) return Fail("cuKernelGetFunction");
  // The runtime launches the CUkernel itself.
  cf = reinterpret_cast<CUfunction>(ck);
  CUtensorMap map3;
  const cuuint32_t box3[2] = {64, 32};
  if (encode(&map3, CU_TENSOR_MAP_DATA_TYPE_UINT16, 2, reinterpret_cast<void*>(0x9000), dims1,
             strides1, box3, elem, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
             CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) != CUDA_SUCCESS) {
    return Fail("encode 3");
  }
  int k3 = 4;
  void* args3[] = {&map3, &k3, &out};
  if (launch_proc(cf, 4, 1, 1, 64, 1, 1, 0, nullptr, args3, nullptr) != CUDA_SUCCESS) {
    return Fail("launch 3");
  }
  CUfunction anon = nullptr;
  get_function(&anon, nullptr, "anonymous");
  CUlaunchAttribute attr{};
  attr.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
  attr.value.clusterDim.x = 2;
  attr.value.clusterDim.y = 1;
  attr.value.clusterDim.z = 1;
  CUlaunchConfig config4{};
  config4.gridDimX = 8;
  config4.gridDimY = config4.gridDimZ = 1;
  config4.blockDimX = 128;
  config4.blockDimY = config4.blockDimZ = 1;
  config4.attrs = &attr;
  config4.numAttrs = 1;
  uint64_t value = 0x1122334455667788ull;
  void* args4[] = {&value};
  auto launch_ex_legacy = reinterpret_cast<LaunchKernelEx>(proc("cuLaunchKernelEx", 0));
  if (launch_ex_legacy(&config4, anon, args4, nullptr) != CUDA_SUCCESS) return Fail("launch 4");
  return 3;
}
