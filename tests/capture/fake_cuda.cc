// A test double of libcuda for the capture library's tests (capture_test.cc): the driver entry
// points the CUDA runtime and DeepGEMM's host code use, with the same C ABI, doing nothing on a
// GPU. Kernels are "loaded" by name (cuModuleGetFunction, cuLibraryGetKernel); their parameter
// layouts are those nvcc gives the kernels of tests/import, at device-side offsets as driver 580
// reports them (a parameter of 128 bytes or more at 112 and on: traces/capture/); a tensor map's
// 128 bytes are a function of the encode's arguments, as the real driver's are. A CUkernel
// (cuLibraryGetKernel) is launched as the CUDA runtime launches it, in place of a CUfunction; the
// CUfunction queries answer on it as driver 580 was seen to (cuFuncGetParamInfo: one parameter
// of 8 bytes; cuFuncGetAttribute: no cluster), the CUkernel queries right.
#include <cuda.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#undef cuGetProcAddress
#undef cuLaunchKernel
#undef cuLaunchKernelEx

namespace {

struct FakeFunction {
  std::string name;
  std::vector<std::pair<size_t, size_t>> layout;  // the ABI's: what a launch's params point to
  std::vector<std::pair<size_t, size_t>> device_layout;  // what the param-info queries answer
  int cluster_x = 0;      // __cluster_dims__ (cuFuncGetAttribute), 0 when none
  bool has_name = true;   // false: cuFuncGetName fails (a driver before CUDA 12.3)
  bool is_kernel = false;  // a CUkernel, not a CUfunction
};

FakeFunction* Load(const char* name) {
  auto* f = new FakeFunction;
  f->name = name;
  const std::string n = name;
  if (n == "persistent_struct") {
    f->layout = {{0, 256}};
    f->device_layout = {{112, 256}};
  } else if (n == "ws_pipeline" || n == "cluster_pipeline") {
    f->layout = {{0, 128}, {128, 4}, {136, 8}};
    f->device_layout = {{112, 128}, {240, 4}, {248, 8}};
    if (n == "cluster_pipeline") f->cluster_x = 2;
  } else if (n == "anonymous") {
    f->layout = {{0, 8}};
    f->device_layout = {{0, 8}};
    f->has_name = false;
  }
  return f;
}

// Every launch's parameters are read in full, as the driver copies them.
unsigned g_sink = 0;
void Touch(const FakeFunction* f, void** params, void** extra) {
  if (params != nullptr) {
    for (size_t i = 0; i < f->layout.size(); ++i) {
      const auto* p = static_cast<const unsigned char*>(params[i]);
      for (size_t b = 0; b < f->layout[i].second; ++b) g_sink += p[b];
    }
  }
  (void)extra;
}

}  // namespace

extern "C" {

CUresult cuModuleGetFunction(CUfunction* f, CUmodule, const char* name) {
  *f = reinterpret_cast<CUfunction>(Load(name));
  return CUDA_SUCCESS;
}

CUresult cuLibraryGetKernel(CUkernel* k, CUlibrary, const char* name) {
  FakeFunction* f = Load(name);
  f->is_kernel = true;
  *k = reinterpret_cast<CUkernel>(f);
  return CUDA_SUCCESS;
}

CUresult cuKernelGetFunction(CUfunction* f, CUkernel k) {
  const auto* kk = reinterpret_cast<const FakeFunction*>(k);
  if (!kk->is_kernel) return CUDA_ERROR_INVALID_HANDLE;
  auto* fn = new FakeFunction(*kk);
  fn->is_kernel = false;
  *f = reinterpret_cast<CUfunction>(fn);
  return CUDA_SUCCESS;
}

CUresult cuKernelGetParamInfo(CUkernel k, size_t index, size_t* offset, size_t* size) {
  const auto* kk = reinterpret_cast<const FakeFunction*>(k);
  if (!kk->is_kernel || index >= kk->device_layout.size()) return CUDA_ERROR_INVALID_VALUE;
  *offset = kk->device_layout[index].first;
  *size = kk->device_layout[index].second;
  return CUDA_SUCCESS;
}

CUresult cuCtxGetDevice(CUdevice* device) {
  *device = 0;
  return CUDA_SUCCESS;
}

CUresult cuKernelGetAttribute(int* value, CUfunction_attribute attr, CUkernel k, CUdevice) {
  const auto* kk = reinterpret_cast<const FakeFunction*>(k);
  *value = 0;
  if (!kk->is_kernel) return CUDA_ERROR_INVALID_HANDLE;
  if (attr == CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH) *value = kk->cluster_x;
  if (kk->cluster_x > 0 && (attr == CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_HEIGHT ||
                            attr == CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_DEPTH)) {
    *value = 1;
  }
  return CUDA_SUCCESS;
}

CUresult cuFuncGetName(const char** name, CUfunction f) {
  const auto* ff = reinterpret_cast<const FakeFunction*>(f);
  if (!ff->has_name) return CUDA_ERROR_NOT_SUPPORTED;
  *name = ff->name.c_str();
  return CUDA_SUCCESS;
}

CUresult cuFuncGetParamInfo(CUfunction f, size_t index, size_t* offset, size_t* size) {
  const auto* ff = reinterpret_cast<const FakeFunction*>(f);
  if (ff->is_kernel) {
    if (index > 0) return CUDA_ERROR_INVALID_VALUE;
    *offset = 0;
    *size = 8;
    return CUDA_SUCCESS;
  }
  if (index >= ff->device_layout.size()) return CUDA_ERROR_INVALID_VALUE;
  *offset = ff->device_layout[index].first;
  *size = ff->device_layout[index].second;
  return CUDA_SUCCESS;
}

CUresult cuFuncGetAttribute(int* value, CUfunction_attribute attr, CUfunction f) {
  const auto* ff = reinterpret_cast<const FakeFunction*>(f);
  *value = 0;
  if (ff->is_kernel) return CUDA_SUCCESS;
  if (attr == CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH) *value = ff->cluster_x;
  if (ff->cluster_x > 0 && (attr == CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_HEIGHT ||
                            attr == CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_DEPTH)) {
    *value = 1;
  }
  return CUDA_SUCCESS;
}

CUresult cuTensorMapEncodeTiled(CUtensorMap* map, CUtensorMapDataType type, cuuint32_t rank,
                                void* address, const cuuint64_t* dims, const cuuint64_t* strides,
                                const cuuint32_t* box, const cuuint32_t* element_strides,
                                CUtensorMapInterleave interleave, CUtensorMapSwizzle swizzle,
                                CUtensorMapL2promotion l2, CUtensorMapFloatOOBfill oob) {
  uint64_t h = 1469598103934665603ull;
  auto mix = [&h](uint64_t v) {
    h ^= v;
    h *= 1099511628211ull;
  };
  mix(type);
  mix(rank);
  mix(reinterpret_cast<uintptr_t>(address));
  for (cuuint32_t i = 0; i < rank; ++i) {
    mix(dims[i]);
    mix(box[i]);
    mix(element_strides[i]);
    if (i + 1 < rank) mix(strides[i]);
  }
  mix(interleave);
  mix(swizzle);
  mix(l2);
  mix(oob);
  auto* out = reinterpret_cast<uint64_t*>(map);
  for (int i = 0; i < 16; ++i) {
    mix(static_cast<uint64_t>(i));
    out[i] = h;
  }
  return CUDA_SUCCESS;
}

CUresult cuLaunchKernel(CUfunction f, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                        unsigned, CUstream, void** params, void** extra) {
  Touch(reinterpret_cast<const FakeFunction*>(f), params, extra);
  return CUDA_SUCCESS;
}

CUresult cuLaunchKernel_ptsz(CUfunction f, unsigned, unsigned, unsigned, unsigned, unsigned,
                             unsigned, unsigned, CUstream, void** params, void** extra) {
  Touch(reinterpret_cast<const FakeFunction*>(f), params, extra);
  return CUDA_SUCCESS;
}

CUresult cuLaunchKernelEx(const CUlaunchConfig*, CUfunction f, void** params, void** extra) {
  Touch(reinterpret_cast<const FakeFunction*>(f), params, extra);
  return CUDA_SUCCESS;
}

CUresult cuLaunchKernelEx_ptsz(const CUlaunchConfig*, CUfunction f, void** params, void** extra) {
  Touch(reinterpret_cast<const FakeFunction*>(f), params, extra);
  return CUDA_SUCCESS;
}

// The driver's entry-point table, as cuGetProcAddress hands it out (the per-thread-stream
// variant where the flag asks for it).
CUresult cuGetProcAddress_v2(const char* symbol, void** pfn, int, cuuint64_t flags,
                             CUdriverProcAddressQueryResult* status) {
  const bool ptsz = (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) != 0;
  const std::string s = symbol;
  void* fn = nullptr;
  if (s == "cuGetProcAddress") fn = reinterpret_cast<void*>(&cuGetProcAddress_v2);
  if (s == "cuModuleGetFunction") fn = reinterpret_cast<void*>(&cuModuleGetFunction);
  if (s == "cuLibraryGetKernel") fn = reinterpret_cast<void*>(&cuLibraryGetKernel);
  if (s == "cuKernelGetFunction") fn = reinterpret_cast<void*>(&cuKernelGetFunction);
  if (s == "cuFuncGetName") fn = reinterpret_cast<void*>(&cuFuncGetName);
  if (s == "cuFuncGetParamInfo") fn = reinterpret_cast<void*>(&cuFuncGetParamInfo);
  if (s == "cuFuncGetAttribute") fn = reinterpret_cast<void*>(&cuFuncGetAttribute);
  if (s == "cuKernelGetParamInfo") fn = reinterpret_cast<void*>(&cuKernelGetParamInfo);
  if (s == "cuKernelGetAttribute") fn = reinterpret_cast<void*>(&cuKernelGetAttribute);
  if (s == "cuCtxGetDevice") fn = reinterpret_cast<void*>(&cuCtxGetDevice);
  if (s == "cuTensorMapEncodeTiled") fn = reinterpret_cast<void*>(&cuTensorMapEncodeTiled);
  if (s == "cuLaunchKernel") {
    fn = ptsz ? reinterpret_cast<void*>(&cuLaunchKernel_ptsz)
              : reinterpret_cast<void*>(&cuLaunchKernel);
  }
  if (s == "cuLaunchKernelEx") {
    fn = ptsz ? reinterpret_cast<void*>(&cuLaunchKernelEx_ptsz)
              : reinterpret_cast<void*>(&cuLaunchKernelEx);
  }
  if (status != nullptr) {
    *status = fn != nullptr ? CU_GET_PROC_ADDRESS_SUCCESS : CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
  }
  *pfn = fn;
  return fn != nullptr ? CUDA_SUCCESS : CUDA_ERROR_NOT_FOUND;
}

}  // extern "C"
