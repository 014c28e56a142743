// libparity_capture.so: an LD_PRELOAD library that records every kernel launch of an unchanged
// CUDA program into a launch file (docs/launch-file.md), for `parity capture` and then
// `parity import --launch`.
//
// How launches are reached. A program linked to libcuda calls the driver's exported symbols, which
// this library defines first (it is preloaded). The CUDA runtime (libcudart, also the static one
// every nvcc binary carries) never does: it dlopen()s libcuda.so.1, looks up cuGetProcAddress
// (_v2) with dlsym on that handle, and takes every other entry point from cuGetProcAddress
// (CUDA Driver API, "Driver Entry Point Access"; cudaGetDriverEntryPoint goes the same way). So
// this library also defines dlsym (the real one comes from dlvsym(RTLD_NEXT)) and, for the
// symbols it records, hands out its own wrappers from both dlsym and cuGetProcAddress; each
// wrapper calls the driver's own function, which it remembers per variant (legacy and
// per-thread-stream `_ptsz`: cuGetProcAddress's CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM).
//
// What is recorded per launch: the mangled kernel name (cuFuncGetName, else the name the handle
// was looked up by in cuModuleGetFunction / cuLibraryGetKernel), grid, block, cluster (the
// launch's CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION, else the kernel's compile-time
// __cluster_dims__), dynamic shared memory, the raw parameter bytes at the device-side offsets
// cuKernelGetParamInfo / cuFuncGetParamInfo report (or the `extra` buffer as given), and for each 128-byte window of them that
// equals a CUtensorMap this process encoded, the arguments of that cuTensorMapEncodeTiled /
// Im2col call. This library never links libcuda: every driver function it calls itself comes
// from the driver the program loaded. Only cuda.h's types are used.
//
// Environment: PARITY_CAPTURE_OUT (the file; default parity-launches.json), PARITY_CAPTURE_MAX
// (launches recorded in full; default 256, the rest are counted), PARITY_CAPTURE_DEBUG=1 (each
// entry point wrapped, on stderr).
#include <cuda.h>
#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <vector>

// cuda.h maps these names onto their current versions; this file defines the names themselves.
#undef cuGetProcAddress
#undef cuLaunchKernel
#undef cuLaunchKernelEx
#undef cuLaunchCooperativeKernel

namespace {

constexpr int kSchemaVersion = 1;

// ---------------------------------------------------------------------------------------------
// The real dlsym and the driver's own functions.

using DlsymFn = void* (*)(void*, const char*);

DlsymFn RealDlsym() {
  // glibc 2.34 moved dlsym into libc (GLIBC_2.34); older ones export GLIBC_2.2.5 only.
  static DlsymFn fn = [] {
    void* f = dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.34");
    if (f == nullptr) f = dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.2.5");
    return reinterpret_cast<DlsymFn>(f);
  }();
  return fn;
}

using GetProcV1Fn = CUresult (*)(const char*, void**, int, cuuint64_t);
using GetProcV2Fn = CUresult (*)(const char*, void**, int, cuuint64_t,
                                 CUdriverProcAddressQueryResult*);
using LaunchKernelFn = CUresult (*)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,
                                    unsigned, unsigned, CUstream, void**, void**);
using LaunchKernelExFn = CUresult (*)(const CUlaunchConfig*, CUfunction, void**, void**);
using EncodeTiledFn = CUresult (*)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*,
                                   const cuuint64_t*, const cuuint64_t*, const cuuint32_t*,
                                   const cuuint32_t*, CUtensorMapInterleave, CUtensorMapSwizzle,
                                   CUtensorMapL2promotion, CUtensorMapFloatOOBfill);
using EncodeIm2colFn = CUresult (*)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*,
                                    const cuuint64_t*, const cuuint64_t*, const int*, const int*,
                                    cuuint32_t, cuuint32_t, const cuuint32_t*,
                                    CUtensorMapInterleave, CUtensorMapSwizzle,
                                    CUtensorMapL2promotion, CUtensorMapFloatOOBfill);
using ModuleGetFunctionFn = CUresult (*)(CUfunction*, CUmodule, const char*);
using LibraryGetKernelFn = CUresult (*)(CUkernel*, CUlibrary, const char*);
using KernelGetFunctionFn = CUresult (*)(CUfunction*, CUkernel);

// The driver's functions as the program obtained them, one slot per variant.
std::atomic<GetProcV1Fn> g_get_proc_v1{nullptr};
std::atomic<GetProcV2Fn> g_get_proc_v2{nullptr};
std::atomic<LaunchKernelFn> g_launch[2] = {nullptr, nullptr};  // [ptsz]
std::atomic<LaunchKernelExFn> g_launch_ex[2] = {nullptr, nullptr};
std::atomic<LaunchKernelFn> g_launch_coop[2] = {nullptr, nullptr};
std::atomic<EncodeTiledFn> g_encode_tiled{nullptr};
std::atomic<EncodeIm2colFn> g_encode_im2col{nullptr};
std::atomic<ModuleGetFunctionFn> g_module_get_function{nullptr};
std::atomic<LibraryGetKernelFn> g_library_get_kernel{nullptr};
std::atomic<KernelGetFunctionFn> g_kernel_get_function{nullptr};
// The handle the program found the driver through (dlopen("libcuda.so.1") in the runtime).
std::atomic<void*> g_driver_handle{nullptr};

// A driver function this library calls itself (cuFuncGetName, cuFuncGetParamInfo, ...): from the
// driver's cuGetProcAddress when the program has one, else from the driver's handle.
void* DriverFunction(const char* name) {
  if (GetProcV2Fn gp = g_get_proc_v2.load(); gp != nullptr) {
    void* fn = nullptr;
    CUdriverProcAddressQueryResult status;
    if (gp(name, &fn, CUDA_VERSION, CU_GET_PROC_ADDRESS_DEFAULT, &status) == CUDA_SUCCESS &&
        fn != nullptr) {
      return fn;
    }
  }
  if (GetProcV1Fn gp = g_get_proc_v1.load(); gp != nullptr) {
    void* fn = nullptr;
    if (gp(name, &fn, CUDA_VERSION, CU_GET_PROC_ADDRESS_DEFAULT) == CUDA_SUCCESS && fn) return fn;
  }
  void* handle = g_driver_handle.load();
  if (handle == nullptr) handle = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  if (handle != nullptr) {
    if (void* fn = RealDlsym()(handle, name); fn != nullptr) return fn;
  }
  return RealDlsym()(RTLD_NEXT, name);
}

// The next definition of an exported driver symbol (for a program linked to libcuda directly).
template <typename Fn>
Fn NextSymbol(std::atomic<Fn>& slot, const char* name) {
  Fn fn = slot.load();
  if (fn == nullptr) {
    fn = reinterpret_cast<Fn>(RealDlsym()(RTLD_NEXT, name));
    slot.store(fn);
  }
  return fn;
}

// ---------------------------------------------------------------------------------------------
// JSON text.

std::string Quote(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

std::string Hex(const void* data, size_t n) {
  static const char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(2 * n);
  const auto* p = static_cast<const unsigned char*>(data);
  for (size_t i = 0; i < n; ++i) {
    out += kDigits[p[i] >> 4];
    out += kDigits[p[i] & 15];
  }
  return out;
}

std::string Pointer(const void* p) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "\"0x%llx\"",
                static_cast<unsigned long long>(reinterpret_cast<uintptr_t>(p)));
  return buf;
}

template <typename T>
std::string Array(const T* v, size_t n) {
  std::string out = "[";
  for (size_t i = 0; i < n; ++i) {
    out += (i ? ", " : "") + std::to_string(v != nullptr ? v[i] : 0);
  }
  return out + "]";
}

const char* DataTypeName(int t) {
  static const char* kNames[] = {"u8",  "u16",     "u32",  "s32",      "u64",
                                 "s64", "f16",     "f32",  "f64",      "bf16",
                                 "f32", "tf32",    "tf32", "16u4_align8b", "16u4_align16b",
                                 "16u6_align16b"};
  return t >= 0 && t < 16 ? kNames[t] : "unknown";
}

const char* SwizzleName(int s) {
  static const char* kNames[] = {"none", "32B", "64B", "128B", "128B_atom_32B",
                                 "128B_atom_32B_flip_8B", "128B_atom_64B"};
  return s >= 0 && s < 7 ? kNames[s] : "unknown";
}

// ---------------------------------------------------------------------------------------------
// The record.

struct EncodedMap {
  unsigned char bytes[128];
  std::string json;  // the "encode" object
};

struct State {
  std::mutex mu;
  std::vector<EncodedMap> maps;                  // every map this process encoded, oldest first
  std::map<CUfunction, std::string> func_names;  // cuModuleGetFunction / cuKernelGetFunction
  std::map<CUkernel, std::string> kernel_names;  // cuLibraryGetKernel
  std::vector<std::string> launches;             // the JSON objects
  uint64_t launches_seen = 0;
  size_t max_launches = 256;
  std::string path = "parity-launches.json";
  std::string program;  // the command line, as JSON array
};

State& S() {
  static State* s = [] {
    auto* st = new State;  // never destroyed: launches can come from other threads at exit
    if (const char* p = std::getenv("PARITY_CAPTURE_OUT"); p != nullptr && *p) st->path = p;
    if (const char* m = std::getenv("PARITY_CAPTURE_MAX"); m != nullptr && *m) {
      st->max_launches = std::strtoull(m, nullptr, 10);
    }
    std::string args = "[";
    if (FILE* f = std::fopen("/proc/self/cmdline", "rb"); f != nullptr) {
      std::string all;
      char buf[4096];
      size_t n;
      while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) all.append(buf, n);
      std::fclose(f);
      size_t start = 0;
      bool first = true;
      while (start < all.size()) {
        size_t end = all.find('\0', start);
        if (end == std::string::npos) end = all.size();
        args += (first ? "" : ", ") + Quote(all.substr(start, end - start));
        first = false;
        start = end + 1;
      }
    }
    st->program = args + "]";
    return st;
  }();
  return *s;
}

// Rewrites the whole file (written next to it, then renamed: a reader never sees half of it).
void WriteFileLocked(State& s) {
  std::string text = "{\n  \"schema\": \"parity-launches\",\n  \"version\": " +
                     std::to_string(kSchemaVersion) + ",\n  \"program\": " + s.program +
                     ",\n  \"launches_seen\": " + std::to_string(s.launches_seen) +
                     ",\n  \"launches\": [";
  for (size_t i = 0; i < s.launches.size(); ++i) {
    text += (i ? ",\n    " : "\n    ") + s.launches[i];
  }
  text += s.launches.empty() ? "]\n}\n" : "\n  ]\n}\n";
  const std::string tmp = s.path + ".part";
  FILE* f = std::fopen(tmp.c_str(), "wb");
  if (f == nullptr) {
    std::fprintf(stderr, "parity capture: cannot write %s\n", tmp.c_str());
    return;
  }
  std::fwrite(text.data(), 1, text.size(), f);
  std::fclose(f);
  std::rename(tmp.c_str(), s.path.c_str());
}

void RecordEncode(const CUtensorMap* map, std::string json) {
  State& s = S();
  std::lock_guard<std::mutex> lock(s.mu);
  EncodedMap m;
  std::memcpy(m.bytes, map, 128);
  m.json = std::move(json);
  // A later encode into the same bytes (a reused CUtensorMap) supersedes the older one.
  s.maps.push_back(std::move(m));
  if (s.maps.size() > 65536) s.maps.erase(s.maps.begin(), s.maps.begin() + 32768);
}

std::string KernelName(CUfunction f) {
  using GetNameFn = CUresult (*)(const char**, CUfunction);
  static auto get_name = reinterpret_cast<GetNameFn>(DriverFunction("cuFuncGetName"));
  const char* name = nullptr;
  if (get_name != nullptr && get_name(&name, f) == CUDA_SUCCESS && name != nullptr) return name;
  State& s = S();
  {
    std::lock_guard<std::mutex> lock(s.mu);
    if (auto it = s.func_names.find(f); it != s.func_names.end()) return it->second;
    // A CUkernel passed where a CUfunction goes (cuLibraryGetKernel's handle, CUDA 12).
    if (auto it = s.kernel_names.find(reinterpret_cast<CUkernel>(f)); it != s.kernel_names.end()) {
      return it->second;
    }
  }
  using KernelGetNameFn = CUresult (*)(const char**, CUkernel);
  static auto kernel_get_name = reinterpret_cast<KernelGetNameFn>(DriverFunction("cuKernelGetName"));
  if (kernel_get_name != nullptr &&
      kernel_get_name(&name, reinterpret_cast<CUkernel>(f)) == CUDA_SUCCESS && name != nullptr) {
    return name;
  }
  return "";
}

bool Debug() {
  static const bool debug = [] {
    const char* d = std::getenv("PARITY_CAPTURE_DEBUG");
    return d != nullptr && d[0] == '1';
  }();
  return debug;
}

using Layout = std::vector<std::pair<size_t, size_t>>;

// A parameter layout in the device-side parameter layout the queries describe: parameters in
// order, none overlapping the one before. The first need not be at 0 (driver 580 reports a
// 128-byte aligned by-value struct, CUTLASS's Params, at 112: traces/capture/). What a query
// returns for a handle of the other kind (a CUkernel passed where a CUfunction goes) may still
// pass this test, so the handle's kind decides which query is asked first (ParamLayout).
bool PlausibleLayout(const Layout& l) {
  if (l.empty()) return false;
  for (size_t i = 1; i < l.size(); ++i) {
    if (l[i].first < l[i - 1].first + l[i - 1].second) return false;
  }
  return true;
}

// (offset, size) of each parameter of the launched handle; `source` says which query gave it.
// The CUDA runtime launches a CUkernel (cuLibraryGetKernel) through cuLaunchKernel(Ex) where a
// CUfunction goes (allowed since CUDA 12.0); cuFuncGetParamInfo on it answers with a wrong
// layout (seen on driver 580 with DeepGEMM's kernel: its 7 parameters as one of 8 bytes), so the
// handle's kind decides the query: cuKernelGetParamInfo for a kernel this process looked
// up, else cuFuncGetParamInfo, else either query on the other reading of the handle.
// `known` is false when no query gave a plausible layout (a kernel without parameters gives none
// from every query: its layout is empty and known).
Layout ParamLayout(CUfunction f, const char** source, bool* known) {
  using ParamInfoFn = CUresult (*)(CUfunction, size_t, size_t*, size_t*);
  static auto info = reinterpret_cast<ParamInfoFn>(DriverFunction("cuFuncGetParamInfo"));
  using KernelParamInfoFn = CUresult (*)(CUkernel, size_t, size_t*, size_t*);
  static auto kinfo = reinterpret_cast<KernelParamInfoFn>(DriverFunction("cuKernelGetParamInfo"));
  using KernelGetFunctionFn2 = CUresult (*)(CUfunction*, CUkernel);
  static auto kernel_function =
      reinterpret_cast<KernelGetFunctionFn2>(DriverFunction("cuKernelGetFunction"));
  auto query_func = [](CUfunction fn) {
    Layout out;
    for (size_t i = 0; info != nullptr && i < 4096; ++i) {
      size_t off = 0, size = 0;
      if (info(fn, i, &off, &size) != CUDA_SUCCESS) break;
      out.emplace_back(off, size);
    }
    return out;
  };
  auto query_kernel = [](CUkernel k) {
    Layout out;
    for (size_t i = 0; kinfo != nullptr && i < 4096; ++i) {
      size_t off = 0, size = 0;
      if (kinfo(k, i, &off, &size) != CUDA_SUCCESS) break;
      out.emplace_back(off, size);
    }
    return out;
  };
  bool is_kernel = false;
  {
    State& s = S();
    std::lock_guard<std::mutex> lock(s.mu);
    is_kernel = s.kernel_names.count(reinterpret_cast<CUkernel>(f)) > 0;
  }
  const auto k = reinterpret_cast<CUkernel>(f);
  struct Candidate {
    const char* source;
    Layout layout;
  };
  std::vector<Candidate> tried;
  auto consider = [&](const char* src, Layout l) {
    tried.push_back({src, std::move(l)});
    return PlausibleLayout(tried.back().layout);
  };
  bool found = false;
  if (is_kernel) found = consider("cuKernelGetParamInfo", query_kernel(k));
  if (!found) found = consider("cuFuncGetParamInfo", query_func(f));
  if (!found && !is_kernel) found = consider("cuKernelGetParamInfo", query_kernel(k));
  if (!found && kernel_function != nullptr) {
    CUfunction g = nullptr;
    if (kernel_function(&g, k) == CUDA_SUCCESS && g != nullptr && g != f) {
      found = consider("cuKernelGetFunction+cuFuncGetParamInfo", query_func(g));
    }
  }
  if (Debug()) {
    for (const Candidate& c : tried) {
      std::fprintf(stderr, "parity capture: %s%s:", c.source, is_kernel ? " (a CUkernel)" : "");
      for (const auto& [off, size] : c.layout) std::fprintf(stderr, " %zu+%zu", off, size);
      std::fprintf(stderr, "\n");
    }
  }
  if (found) {
    *source = tried.back().source;
    *known = true;
    return tried.back().layout;
  }
  const bool none = std::all_of(tried.begin(), tried.end(),
                                [](const Candidate& c) { return c.layout.empty(); });
  *source = none ? "no parameters" : "unknown";
  *known = none;
  return {};
}

// The kernel's compile-time cluster shape (__cluster_dims__), or {0, 0, 0}; a CUkernel's from
// cuKernelGetAttribute on the current device (see ParamLayout on the runtime's CUkernels).
void CompiledCluster(CUfunction f, int dims[3]) {
  using AttrFn = CUresult (*)(int*, CUfunction_attribute, CUfunction);
  static auto attr = reinterpret_cast<AttrFn>(DriverFunction("cuFuncGetAttribute"));
  using KernelAttrFn = CUresult (*)(int*, CUfunction_attribute, CUkernel, CUdevice);
  static auto kattr = reinterpret_cast<KernelAttrFn>(DriverFunction("cuKernelGetAttribute"));
  using CtxDeviceFn = CUresult (*)(CUdevice*);
  static auto ctx_device = reinterpret_cast<CtxDeviceFn>(DriverFunction("cuCtxGetDevice"));
  bool is_kernel = false;
  {
    State& s = S();
    std::lock_guard<std::mutex> lock(s.mu);
    is_kernel = s.kernel_names.count(reinterpret_cast<CUkernel>(f)) > 0;
  }
  CUdevice device = 0;
  if (is_kernel && (ctx_device == nullptr || ctx_device(&device) != CUDA_SUCCESS)) device = 0;
  const CUfunction_attribute kAttrs[3] = {CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH,
                                          CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_HEIGHT,
                                          CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_DEPTH};
  for (int i = 0; i < 3; ++i) {
    dims[i] = 0;
    const CUresult r =
        is_kernel ? (kattr != nullptr ? kattr(&dims[i], kAttrs[i], reinterpret_cast<CUkernel>(f),
                                              device)
                                      : CUDA_ERROR_NOT_FOUND)
                  : (attr != nullptr ? attr(&dims[i], kAttrs[i], f) : CUDA_ERROR_NOT_FOUND);
    if (r != CUDA_SUCCESS) dims[i] = 0;
  }
}

struct LaunchDesc {
  const char* api;
  bool ptsz;
  CUfunction f;
  unsigned grid[3];
  unsigned block[3];
  unsigned smem;
  CUstream stream;
  const CUlaunchAttribute* attrs;
  unsigned num_attrs;
  void** params;
  void** extra;
};

void RecordLaunch(const LaunchDesc& d) {
  State& s = S();
  {
    std::lock_guard<std::mutex> lock(s.mu);
    ++s.launches_seen;
    if (s.launches.size() >= s.max_launches) {
      if (s.launches_seen == s.max_launches + 1) {
        std::fprintf(stderr, "parity capture: %zu launches recorded; later ones are counted only\n",
                     s.max_launches);
      }
      return;
    }
  }
  const std::string name = KernelName(d.f);

  // The parameter bytes: from the `extra` buffer as given, else laid out from kernelParams.
  std::vector<unsigned char> bytes;
  std::string layout_json = "[]";
  std::string layout_source = "unknown";
  bool have_bytes = false;
  if (d.extra != nullptr) {
    const void* buffer = nullptr;
    size_t size = 0;
    for (size_t i = 0; d.extra[i] != CU_LAUNCH_PARAM_END && i < 64; i += 2) {
      if (d.extra[i] == CU_LAUNCH_PARAM_BUFFER_POINTER) buffer = d.extra[i + 1];
      if (d.extra[i] == CU_LAUNCH_PARAM_BUFFER_SIZE) size = *static_cast<size_t*>(d.extra[i + 1]);
    }
    if (buffer != nullptr) {
      bytes.assign(static_cast<const unsigned char*>(buffer),
                   static_cast<const unsigned char*>(buffer) + size);
      have_bytes = true;
      layout_source = "extra";
    }
  }
  if (!have_bytes) {
    const char* source = "unknown";
    bool known = false;
    const Layout layout = ParamLayout(d.f, &source, &known);
    if (known) {
      size_t total = 0;
      for (const auto& [off, size] : layout) total = std::max(total, off + size);
      bytes.assign(total, 0);
      layout_json = "[";
      for (size_t i = 0; i < layout.size(); ++i) {
        const auto& [off, size] = layout[i];
        if (d.params != nullptr && d.params[i] != nullptr) {
          std::memcpy(bytes.data() + off, d.params[i], size);
        }
        layout_json += std::string(i ? ", " : "") + "{\"offset\": " + std::to_string(off) +
                       ", \"size\": " + std::to_string(size) + "}";
      }
      layout_json += "]";
      have_bytes = true;
      layout_source = source;
    }
  }

  // Cluster: the launch's attribute, else the kernel's own __cluster_dims__.
  int cluster[3] = {1, 1, 1};
  const char* cluster_source = "none";
  std::string attrs_json = "[";
  for (unsigned i = 0; i < d.num_attrs && d.attrs != nullptr; ++i) {
    const CUlaunchAttribute& a = d.attrs[i];
    if (a.id == CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION) {
      cluster[0] = static_cast<int>(a.value.clusterDim.x);
      cluster[1] = static_cast<int>(a.value.clusterDim.y);
      cluster[2] = static_cast<int>(a.value.clusterDim.z);
      cluster_source = "launch-attribute";
    }
    attrs_json += std::string(i ? ", " : "") + "{\"id\": " + std::to_string(a.id) +
                  ", \"value\": \"" + Hex(&a.value, sizeof a.value) + "\"}";
  }
  attrs_json += "]";
  if (std::strcmp(cluster_source, "none") == 0) {
    int compiled[3];
    CompiledCluster(d.f, compiled);
    if (compiled[0] > 0) {
      for (int i = 0; i < 3; ++i) cluster[i] = compiled[i] > 0 ? compiled[i] : 1;
      cluster_source = "kernel";
    }
  }

  std::string json = "{\"kernel\": " + Quote(name) + ", \"api\": " + Quote(d.api) +
                     (d.ptsz ? ", \"per_thread_stream\": true" : "") +
                     ", \"grid\": " + Array(d.grid, 3) + ", \"block\": " + Array(d.block, 3) +
                     ", \"cluster\": " + Array(cluster, 3) + ", \"cluster_source\": " +
                     Quote(cluster_source) + ", \"dynamic_smem\": " + std::to_string(d.smem) +
                     ", \"stream\": " + Pointer(d.stream) + ", \"attributes\": " + attrs_json +
                     ",\n      \"params\": {\"size\": " + std::to_string(bytes.size()) +
                     ", \"layout_source\": " + Quote(layout_source) +
                     ", \"layout\": " + layout_json + ", \"bytes\": " +
                     (have_bytes ? Quote(Hex(bytes.data(), bytes.size())) : "null") + "}";

  std::lock_guard<std::mutex> lock(s.mu);
  // Tensor maps: every 128-byte window equal to one this process encoded, at any 4-byte
  // boundary (a parameter's device-side offset is not always 64-byte aligned: a CUtensorMap
  // parameter of DeepGEMM's kernel is at 112); the newest encode of those bytes wins. A found
  // window is skipped over, so that one map is not reported twice.
  std::string maps_json = "[";
  int found = 0;
  for (size_t off = 0; have_bytes && off + 128 <= bytes.size(); off += 4) {
    for (size_t k = s.maps.size(); k-- > 0;) {
      if (std::memcmp(s.maps[k].bytes, bytes.data() + off, 128) == 0) {
        maps_json += std::string(found++ ? ",\n        " : "\n        ") +
                     "{\"offset\": " + std::to_string(off) + ", \"encode\": " + s.maps[k].json +
                     "}";
        off += 124;
        break;
      }
    }
  }
  maps_json += found ? "\n      ]" : "]";
  json += ",\n      \"tensor_maps\": " + maps_json + "}";
  if (s.launches.size() < s.max_launches) {
    s.launches.push_back(std::move(json));
    WriteFileLocked(s);
  }
}

// ---------------------------------------------------------------------------------------------
// The wrappers.

template <int kPtsz>
CUresult WrapLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                          unsigned by, unsigned bz, unsigned smem, CUstream stream, void** params,
                          void** extra) {
  LaunchDesc d{kPtsz ? "cuLaunchKernel_ptsz" : "cuLaunchKernel", kPtsz != 0, f, {gx, gy, gz},
               {bx, by, bz}, smem, stream, nullptr, 0, params, extra};
  RecordLaunch(d);
  return g_launch[kPtsz].load()(f, gx, gy, gz, bx, by, bz, smem, stream, params, extra);
}

template <int kPtsz>
CUresult WrapLaunchCooperativeKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz,
                                     unsigned bx, unsigned by, unsigned bz, unsigned smem,
                                     CUstream stream, void** params, void** extra) {
  LaunchDesc d{kPtsz ? "cuLaunchCooperativeKernel_ptsz" : "cuLaunchCooperativeKernel",
               kPtsz != 0, f, {gx, gy, gz}, {bx, by, bz}, smem, stream, nullptr, 0, params,
               nullptr};
  RecordLaunch(d);
  return g_launch_coop[kPtsz].load()(f, gx, gy, gz, bx, by, bz, smem, stream, params, extra);
}

template <int kPtsz>
CUresult WrapLaunchKernelEx(const CUlaunchConfig* c, CUfunction f, void** params, void** extra) {
  if (c != nullptr) {
    LaunchDesc d{kPtsz ? "cuLaunchKernelEx_ptsz" : "cuLaunchKernelEx",
                 kPtsz != 0,
                 f,
                 {c->gridDimX, c->gridDimY, c->gridDimZ},
                 {c->blockDimX, c->blockDimY, c->blockDimZ},
                 c->sharedMemBytes,
                 c->hStream,
                 c->attrs,
                 c->numAttrs,
                 params,
                 extra};
    RecordLaunch(d);
  }
  return g_launch_ex[kPtsz].load()(c, f, params, extra);
}

std::string EncodeCommon(const char* api, CUtensorMapDataType type, cuuint32_t rank,
                         void* address, const cuuint64_t* dims, const cuuint64_t* strides) {
  const cuuint32_t r = rank <= 5 ? rank : 5;
  return std::string("{\"api\": ") + Quote(api) + ", \"data_type\": " +
         Quote(DataTypeName(type)) + ", \"data_type_code\": " + std::to_string(type) +
         ", \"rank\": " + std::to_string(rank) + ", \"global_address\": " + Pointer(address) +
         ", \"global_dim\": " + Array(dims, r) +
         ", \"global_strides\": " + Array(strides, r > 0 ? r - 1 : 0);
}

std::string EncodeTail(const cuuint32_t* element_strides, cuuint32_t rank,
                       CUtensorMapInterleave interleave, CUtensorMapSwizzle swizzle,
                       CUtensorMapL2promotion l2, CUtensorMapFloatOOBfill oob) {
  return ", \"element_strides\": " + Array(element_strides, rank <= 5 ? rank : 5) +
         ", \"interleave\": " + std::to_string(interleave) + ", \"swizzle\": " +
         Quote(SwizzleName(swizzle)) + ", \"swizzle_code\": " + std::to_string(swizzle) +
         ", \"l2_promotion\": " + std::to_string(l2) + ", \"oob_fill\": " + std::to_string(oob) +
         "}";
}

CUresult WrapEncodeTiled(CUtensorMap* map, CUtensorMapDataType type, cuuint32_t rank,
                         void* address, const cuuint64_t* dims, const cuuint64_t* strides,
                         const cuuint32_t* box, const cuuint32_t* element_strides,
                         CUtensorMapInterleave interleave, CUtensorMapSwizzle swizzle,
                         CUtensorMapL2promotion l2, CUtensorMapFloatOOBfill oob) {
  const CUresult r = g_encode_tiled.load()(map, type, rank, address, dims, strides, box,
                                           element_strides, interleave, swizzle, l2, oob);
  if (r == CUDA_SUCCESS && map != nullptr) {
    RecordEncode(map, EncodeCommon("cuTensorMapEncodeTiled", type, rank, address, dims, strides) +
                          ", \"box_dim\": " + Array(box, rank <= 5 ? rank : 5) +
                          EncodeTail(element_strides, rank, interleave, swizzle, l2, oob));
  }
  return r;
}

CUresult WrapEncodeIm2col(CUtensorMap* map, CUtensorMapDataType type, cuuint32_t rank,
                          void* address, const cuuint64_t* dims, const cuuint64_t* strides,
                          const int* lower, const int* upper, cuuint32_t channels,
                          cuuint32_t pixels, const cuuint32_t* element_strides,
                          CUtensorMapInterleave interleave, CUtensorMapSwizzle swizzle,
                          CUtensorMapL2promotion l2, CUtensorMapFloatOOBfill oob) {
  const CUresult r =
      g_encode_im2col.load()(map, type, rank, address, dims, strides, lower, upper, channels,
                             pixels, element_strides, interleave, swizzle, l2, oob);
  if (r == CUDA_SUCCESS && map != nullptr) {
    // The pixel box has rank - 2 spatial corners (cuTensorMapEncodeIm2col).
    const size_t corners = rank >= 3 && rank <= 5 ? rank - 2 : 0;
    RecordEncode(map, EncodeCommon("cuTensorMapEncodeIm2col", type, rank, address, dims, strides) +
                          ", \"pixel_box_lower_corner\": " + Array(lower, corners) +
                          ", \"pixel_box_upper_corner\": " + Array(upper, corners) +
                          ", \"channels_per_pixel\": " + std::to_string(channels) +
                          ", \"pixels_per_column\": " + std::to_string(pixels) +
                          EncodeTail(element_strides, rank, interleave, swizzle, l2, oob));
  }
  return r;
}

CUresult WrapModuleGetFunction(CUfunction* f, CUmodule m, const char* name) {
  const CUresult r = g_module_get_function.load()(f, m, name);
  if (r == CUDA_SUCCESS && f != nullptr && name != nullptr) {
    State& s = S();
    std::lock_guard<std::mutex> lock(s.mu);
    s.func_names[*f] = name;
  }
  return r;
}

CUresult WrapLibraryGetKernel(CUkernel* k, CUlibrary lib, const char* name) {
  const CUresult r = g_library_get_kernel.load()(k, lib, name);
  if (r == CUDA_SUCCESS && k != nullptr && name != nullptr) {
    State& s = S();
    std::lock_guard<std::mutex> lock(s.mu);
    s.kernel_names[*k] = name;
  }
  return r;
}

CUresult WrapKernelGetFunction(CUfunction* f, CUkernel k) {
  const CUresult r = g_kernel_get_function.load()(f, k);
  if (r == CUDA_SUCCESS && f != nullptr) {
    State& s = S();
    std::lock_guard<std::mutex> lock(s.mu);
    if (auto it = s.kernel_names.find(k); it != s.kernel_names.end()) s.func_names[*f] = it->second;
  }
  return r;
}

// Whether `p` is in this library (an exported symbol found through RTLD_DEFAULT is ours already
// and records by itself: wrapping it again would make it call itself).
bool IsOurs(void* p) {
  static void* base = [] {
    Dl_info info{};
    return dladdr(reinterpret_cast<void*>(&RealDlsym), &info) != 0 ? info.dli_fbase : nullptr;
  }();
  Dl_info info{};
  return base != nullptr && dladdr(p, &info) != 0 && info.dli_fbase == base;
}

void* Intercept(const char* symbol, void* real, int cuda_version, bool ptsz);

CUresult WrapGetProcAddressV2(const char* symbol, void** pfn, int version, cuuint64_t flags,
                              CUdriverProcAddressQueryResult* status) {
  const CUresult r = g_get_proc_v2.load()(symbol, pfn, version, flags, status);
  if (r == CUDA_SUCCESS && symbol != nullptr && pfn != nullptr && *pfn != nullptr) {
    *pfn = Intercept(symbol, *pfn, version,
                     (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) != 0);
  }
  return r;
}

CUresult WrapGetProcAddressV1(const char* symbol, void** pfn, int version, cuuint64_t flags) {
  const CUresult r = g_get_proc_v1.load()(symbol, pfn, version, flags);
  if (r == CUDA_SUCCESS && symbol != nullptr && pfn != nullptr && *pfn != nullptr) {
    *pfn = Intercept(symbol, *pfn, version,
                     (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) != 0);
  }
  return r;
}

template <typename Fn>
void* Keep(std::atomic<Fn>& slot, void* real, Fn wrapper) {
  // Never store a wrapper as the real function (a program may hand ours back to dlsym's caller).
  if (real != reinterpret_cast<void*>(wrapper)) slot.store(reinterpret_cast<Fn>(real));
  return reinterpret_cast<void*>(wrapper);
}

// The wrapper to hand out for the driver's `real` function `symbol` (a base name, or one with a
// _ptsz / _v2 suffix as dlsym sees it), remembering `real`; `real` itself for symbols not recorded.
// `cuda_version` picks cuGetProcAddress's ABI (the _v2 one from CUDA 12.0).
void* InterceptSymbol(const char* symbol, void* real, int cuda_version, bool ptsz);

// PARITY_CAPTURE_DEBUG=1: each entry point handed out wrapped, and how (to see which way a
// program reaches the driver).
void* Intercept(const char* symbol, void* real, int cuda_version, bool ptsz) {
  void* out = InterceptSymbol(symbol, real, cuda_version, ptsz);
  if (Debug() && out != real) {
    std::fprintf(stderr, "parity capture: %s%s (cuda %d) wrapped\n", symbol,
                 ptsz ? " per-thread-stream" : "", cuda_version);
  }
  return out;
}

void* InterceptSymbol(const char* symbol, void* real, int cuda_version, bool ptsz) {
  if (IsOurs(real)) return real;
  std::string name = symbol;
  const auto strip = [&name](const char* suffix) {
    const size_t n = std::strlen(suffix);
    if (name.size() > n && name.compare(name.size() - n, n, suffix) == 0) {
      name.resize(name.size() - n);
      return true;
    }
    return false;
  };
  if (strip("_ptsz")) ptsz = true;
  if (name == "cuGetProcAddress_v2") return Keep(g_get_proc_v2, real, &WrapGetProcAddressV2);
  if (name == "cuGetProcAddress") {
    return cuda_version >= 12000 ? Keep(g_get_proc_v2, real, &WrapGetProcAddressV2)
                                 : Keep(g_get_proc_v1, real, &WrapGetProcAddressV1);
  }
  const int v = ptsz ? 1 : 0;
  if (name == "cuLaunchKernel") {
    return Keep(g_launch[v], real, ptsz ? &WrapLaunchKernel<1> : &WrapLaunchKernel<0>);
  }
  if (name == "cuLaunchKernelEx") {
    return Keep(g_launch_ex[v], real, ptsz ? &WrapLaunchKernelEx<1> : &WrapLaunchKernelEx<0>);
  }
  if (name == "cuLaunchCooperativeKernel") {
    return Keep(g_launch_coop[v], real,
                ptsz ? &WrapLaunchCooperativeKernel<1> : &WrapLaunchCooperativeKernel<0>);
  }
  if (name == "cuTensorMapEncodeTiled") return Keep(g_encode_tiled, real, &WrapEncodeTiled);
  if (name == "cuTensorMapEncodeIm2col") return Keep(g_encode_im2col, real, &WrapEncodeIm2col);
  if (name == "cuModuleGetFunction") {
    return Keep(g_module_get_function, real, &WrapModuleGetFunction);
  }
  if (name == "cuLibraryGetKernel") return Keep(g_library_get_kernel, real, &WrapLibraryGetKernel);
  if (name == "cuKernelGetFunction") {
    return Keep(g_kernel_get_function, real, &WrapKernelGetFunction);
  }
  return real;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// The exported symbols.

extern "C" {

__attribute__((visibility("default"))) void* dlsym(void* __restrict handle,
                                                   const char* __restrict name) noexcept {
  DlsymFn real_dlsym = RealDlsym();
  void* real = real_dlsym(handle, name);
  if (real == nullptr || name[0] != 'c' || name[1] != 'u') return real;
  // The handle a driver symbol came from is the driver (the runtime's dlopen of libcuda.so.1).
  if (handle != RTLD_DEFAULT && handle != RTLD_NEXT) g_driver_handle.store(handle);
  // dlsym's "cuGetProcAddress" is the unversioned (pre-12.0) ABI.
  return Intercept(name, real, std::strcmp(name, "cuGetProcAddress") == 0 ? 11000 : CUDA_VERSION,
                   false);
}

// A program linked to libcuda reaches these directly.

__attribute__((visibility("default"))) CUresult cuGetProcAddress_v2(
    const char* symbol, void** pfn, int version, cuuint64_t flags,
    CUdriverProcAddressQueryResult* status) {
  if (NextSymbol(g_get_proc_v2, "cuGetProcAddress_v2") == nullptr) return CUDA_ERROR_NOT_FOUND;
  return WrapGetProcAddressV2(symbol, pfn, version, flags, status);
}

__attribute__((visibility("default"))) CUresult cuGetProcAddress(const char* symbol, void** pfn,
                                                                 int version, cuuint64_t flags) {
  if (NextSymbol(g_get_proc_v1, "cuGetProcAddress") == nullptr) return CUDA_ERROR_NOT_FOUND;
  return WrapGetProcAddressV1(symbol, pfn, version, flags);
}

__attribute__((visibility("default"))) CUresult cuLaunchKernel(
    CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
    unsigned smem, CUstream stream, void** params, void** extra) {
  if (NextSymbol(g_launch[0], "cuLaunchKernel") == nullptr) return CUDA_ERROR_NOT_FOUND;
  return WrapLaunchKernel<0>(f, gx, gy, gz, bx, by, bz, smem, stream, params, extra);
}

__attribute__((visibility("default"))) CUresult cuLaunchKernel_ptsz(
    CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
    unsigned smem, CUstream stream, void** params, void** extra) {
  if (NextSymbol(g_launch[1], "cuLaunchKernel_ptsz") == nullptr) return CUDA_ERROR_NOT_FOUND;
  return WrapLaunchKernel<1>(f, gx, gy, gz, bx, by, bz, smem, stream, params, extra);
}

__attribute__((visibility("default"))) CUresult cuLaunchKernelEx(const CUlaunchConfig* c,
                                                                 CUfunction f, void** params,
                                                                 void** extra) {
  if (NextSymbol(g_launch_ex[0], "cuLaunchKernelEx") == nullptr) return CUDA_ERROR_NOT_FOUND;
  return WrapLaunchKernelEx<0>(c, f, params, extra);
}

__attribute__((visibility("default"))) CUresult cuLaunchKernelEx_ptsz(const CUlaunchConfig* c,
                                                                      CUfunction f, void** params,
                                                                      void** extra) {
  if (NextSymbol(g_launch_ex[1], "cuLaunchKernelEx_ptsz") == nullptr) return CUDA_ERROR_NOT_FOUND;
  return WrapLaunchKernelEx<1>(c, f, params, extra);
}

__attribute__((visibility("default"))) CUresult cuLaunchCooperativeKernel(
    CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
    unsigned smem, CUstream stream, void** params) {
  if (NextSymbol(g_launch_coop[0], "cuLaunchCooperativeKernel") == nullptr) {
    return CUDA_ERROR_NOT_FOUND;
  }
  return WrapLaunchCooperativeKernel<0>(f, gx, gy, gz, bx, by, bz, smem, stream, params, nullptr);
}

__attribute__((visibility("default"))) CUresult cuTensorMapEncodeTiled(
    CUtensorMap* map, CUtensorMapDataType type, cuuint32_t rank, void* address,
    const cuuint64_t* dims, const cuuint64_t* strides, const cuuint32_t* box,
    const cuuint32_t* element_strides, CUtensorMapInterleave interleave,
    CUtensorMapSwizzle swizzle, CUtensorMapL2promotion l2, CUtensorMapFloatOOBfill oob) {
  if (NextSymbol(g_encode_tiled, "cuTensorMapEncodeTiled") == nullptr) return CUDA_ERROR_NOT_FOUND;
  return WrapEncodeTiled(map, type, rank, address, dims, strides, box, element_strides,
                         interleave, swizzle, l2, oob);
}

__attribute__((visibility("default"))) CUresult cuTensorMapEncodeIm2col(
    CUtensorMap* map, CUtensorMapDataType type, cuuint32_t rank, void* address,
    const cuuint64_t* dims, const cuuint64_t* strides, const int* lower, const int* upper,
    cuuint32_t channels, cuuint32_t pixels, const cuuint32_t* element_strides,
    CUtensorMapInterleave interleave, CUtensorMapSwizzle swizzle, CUtensorMapL2promotion l2,
    CUtensorMapFloatOOBfill oob) {
  if (NextSymbol(g_encode_im2col, "cuTensorMapEncodeIm2col") == nullptr) {
    return CUDA_ERROR_NOT_FOUND;
  }
  return WrapEncodeIm2col(map, type, rank, address, dims, strides, lower, upper, channels, pixels,
                          element_strides, interleave, swizzle, l2, oob);
}

__attribute__((visibility("default"))) CUresult cuModuleGetFunction(CUfunction* f, CUmodule m,
                                                                    const char* name) {
  if (NextSymbol(g_module_get_function, "cuModuleGetFunction") == nullptr) {
    return CUDA_ERROR_NOT_FOUND;
  }
  return WrapModuleGetFunction(f, m, name);
}

__attribute__((visibility("default"))) CUresult cuLibraryGetKernel(CUkernel* k, CUlibrary lib,
                                                                   const char* name) {
  if (NextSymbol(g_library_get_kernel, "cuLibraryGetKernel") == nullptr) {
    return CUDA_ERROR_NOT_FOUND;
  }
  return WrapLibraryGetKernel(k, lib, name);
}

__attribute__((visibility("default"))) CUresult cuKernelGetFunction(CUfunction* f, CUkernel k) {
  if (NextSymbol(g_kernel_get_function, "cuKernelGetFunction") == nullptr) {
    return CUDA_ERROR_NOT_FOUND;
  }
  return WrapKernelGetFunction(f, k);
}

}  // extern "C"
