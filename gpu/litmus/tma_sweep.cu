// gpu/litmus/tma_sweep (issue 3, "The H100 decides"): runs several hundred real TMA tile loads
// (cp.async.bulk.tensor, tile mode) and records exactly where every byte landed in shared memory,
// plus which tx byte count completes the mbarrier phase. The recorded file is the ground truth
// that tests/gpu:tma_sweep_replay_test checks the model (sim/model/tma.h) against, byte for byte.
//
// Sweep: swizzle (none/32B/64B/128B) x element size (1/2/4/8) x inner box bytes (16 .. span) x
// shape (2-D tall, 2-D short, 3-D) x destination base (1024-aligned, 128-aligned off the repeat)
// x coordinates (in bounds, partly past the end, negative); plus 1-D boxes, element strides > 1,
// both OOB fill modes on float types, wholly out-of-bounds boxes and 256-row boxes.
//
// Per case: global memory holds GlobalPattern(offset) (each byte a hash of its offset from the
// tensor's base address); the whole dynamic shared memory is prefilled with kSentinel; thread 0
// does init(1) / fence.mbarrier_init / arrive.expect_tx(E) / one load / bounded wait. If the phase
// does not complete, the other tx hypothesis is applied (complete_tx or expect_tx of the
// difference) and waited for again, so the record says which byte count the load credited.
// After completion an arrive on the next phase checks that no stray complete_tx arrived late.
// The dump covers [dst - 128, dst + roundup(rows x max(row bytes, span), 128) + 256).
//
// Output format: traces/tma_sweep/README.md. Exit: 0 done, 2 CUDA/usage error, 3 sticky CUDA
// error during case N (the file ends with "abort id=N ..."; rerun with --start N+1 to go on).
#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "gpu/host.cuh"
#include "gpu/ptx.cuh"

namespace parity::gpu {
namespace {

namespace ptx = parity::gpu::ptx;

constexpr uint8_t kSentinel = 0xA5;
constexpr uint32_t kDynSmemBytes = 64 * 1024;  // > 48 KiB: raised by cudaFuncSetAttribute
constexpr int32_t kDumpBefore = 128;           // bytes dumped before dst
constexpr uint32_t kDumpAfter = 256;           // bytes dumped after the rounded-up footprint
constexpr uint32_t kMaxFootprint = 60 * 1024;
constexpr uint64_t kGlobalBytes = 16ull << 20;
constexpr uint64_t kTensorOffset = 1ull << 20;  // tensor base inside the allocation
constexpr long long kWaitBudget = 1ll << 21;    // ~1 ms at H100 clocks; a load takes ~1 us
constexpr long long kSettleCycles = 1ll << 17;  // let any late complete_tx land before probing
constexpr int kThreads = 256;

// The global pattern: a byte that identifies its offset from the tensor base (fmix32 of the
// offset). Values 0x00, 0xA5 (sentinel), 0x7F and 0xFF (NaN fill bytes) never occur, so fill,
// untouched and data bytes are told apart. Mirrored by tests/gpu/tma_sweep_replay_test.cc.
uint8_t GlobalPattern(int64_t offset) {
  uint32_t x = static_cast<uint32_t>(offset) ^ (static_cast<uint32_t>(offset >> 32) * 0x27D4EB2Fu);
  x *= 0x9E3779B1u;
  x ^= x >> 16;
  x *= 0x85EBCA6Bu;
  x ^= x >> 13;
  uint8_t b = static_cast<uint8_t>(x);
  if (b == 0x00 || b == kSentinel || b == 0x7F || b == 0xFF) b ^= 0x3C;
  return b;
}

struct LaunchParams {
  int32_t coords[5];
  uint32_t rank;
  uint32_t base_off;   // dst = (1024-aligned point) + base_off
  int32_t dump_begin;  // relative to dst
  uint32_t dump_len;
  uint32_t expect_bytes;  // arrive.expect_tx operand
  uint32_t alt_bytes;     // the other credit hypothesis, tried when the first wait times out
  uint32_t flags;         // diagnostics: kFlagNoProbe skips the next-phase probe
};
constexpr uint32_t kFlagNoProbe = 1;

struct LaunchResult {
  uint32_t smem_dst;  // shared-window address of the destination
  uint32_t done;      // phase 0 completed with expect_bytes
  uint32_t done_alt;  // ... completed only after adjusting to alt_bytes
  uint32_t clean;     // next phase completed on a plain arrive: no late complete_tx
  long long cycles;   // issue to completion of phase 0 (first wait)
};

__device__ void IssueLoad(uint32_t rank, ptx::SmemAddr dst, const void* tmap, ptx::SmemAddr bar,
                          const int32_t* c) {
  switch (rank) {
    case 1:
      ptx::TmaLoad1D(dst, tmap, bar, c[0]);
      break;
    case 2:
      ptx::TmaLoad2D(dst, tmap, bar, c[0], c[1]);
      break;
    case 3:
      ptx::TmaLoad3D(dst, tmap, bar, c[0], c[1], c[2]);
      break;
    case 4:
      ptx::TmaLoad4D(dst, tmap, bar, c[0], c[1], c[2], c[3]);
      break;
    default:
      ptx::TmaLoad5D(dst, tmap, bar, c[0], c[1], c[2], c[3], c[4]);
      break;
  }
}

__device__ void Spin(long long cycles) {
  const long long t0 = clock64();
  while (clock64() - t0 < cycles) {
  }
}

__global__ void SweepKernel(const __grid_constant__ CUtensorMap tmap, const LaunchParams p,
                            LaunchResult* result, uint8_t* dump) {
  extern __shared__ __align__(1024) uint8_t dyn[];
  __shared__ alignas(8) uint64_t bar;
  __shared__ uint32_t dst_rel;  // dst - shared address of dyn[0]

  uint32_t* dyn32 = reinterpret_cast<uint32_t*>(dyn);
  const uint32_t fill32 = 0x01010101u * kSentinel;
  for (uint32_t i = threadIdx.x; i < kDynSmemBytes / 4; i += blockDim.x) dyn32[i] = fill32;
  ptx::FenceProxyAsyncSharedCta();  // sentinel (generic proxy) before the TMA's writes (async)
  __syncthreads();

  if (threadIdx.x == 0) {
    const ptx::SmemAddr base = ptx::SmemAddress(dyn);
    const ptx::SmemAddr aligned = ((base + 1023u) & ~1023u) + 1024u;
    const ptx::SmemAddr dst = aligned + p.base_off;
    const ptx::SmemAddr b = ptx::SmemAddress(&bar);
    dst_rel = dst - base;
    LaunchResult r{};
    r.smem_dst = dst;
    ptx::MbarrierInit(b, 1);
    ptx::FenceMbarrierInit();
    const long long t0 = clock64();
    ptx::MbarrierArriveExpectTx(b, p.expect_bytes);
    IssueLoad(p.rank, dst, &tmap, b, p.coords);
    r.done = ptx::WaitParityBounded(b, 0, kWaitBudget) ? 1u : 0u;
    r.cycles = clock64() - t0;
    if (!r.done) {
      // tx-count now = expect - credited. If the load credited alt_bytes, this brings it to 0.
      if (p.alt_bytes < p.expect_bytes) {
        ptx::MbarrierCompleteTx(b, p.expect_bytes - p.alt_bytes);
      } else if (p.alt_bytes > p.expect_bytes) {
        ptx::MbarrierExpectTx(b, p.alt_bytes - p.expect_bytes);
      }
      r.done_alt = ptx::WaitParityBounded(b, 0, kWaitBudget) ? 1u : 0u;
    }
    if ((r.done || r.done_alt) && !(p.flags & kFlagNoProbe)) {
      // Phase 1 has pending count 1 and, unless a late complete_tx arrived, tx-count 0.
      Spin(kSettleCycles);
      ptx::MbarrierArrive(b);
      r.clean = ptx::WaitParityBounded(b, 1, kWaitBudget) ? 1u : 0u;
      if (r.clean) ptx::MbarrierInval(b);
    } else if (!r.done && !r.done_alt) {
      Spin(kWaitBudget);  // the data has landed long before; the barrier stays unusable
    }
    *result = r;
  }
  __syncthreads();
  const int32_t start = static_cast<int32_t>(dst_rel) + p.dump_begin;
  for (uint32_t i = threadIdx.x; i < p.dump_len; i += blockDim.x) dump[i] = dyn[start + i];
}

// ---- Cases ----

struct DType {
  CUtensorMapDataType cu;
  uint32_t bytes;
  const char* name;  // as sim/model DataTypeName
};
constexpr DType kU8{CU_TENSOR_MAP_DATA_TYPE_UINT8, 1, "u8"};
constexpr DType kU16{CU_TENSOR_MAP_DATA_TYPE_UINT16, 2, "u16"};
constexpr DType kU32{CU_TENSOR_MAP_DATA_TYPE_UINT32, 4, "u32"};
constexpr DType kU64{CU_TENSOR_MAP_DATA_TYPE_UINT64, 8, "u64"};
constexpr DType kF16{CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 2, "f16"};
constexpr DType kBF16{CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, "bf16"};
constexpr DType kF32{CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 4, "f32"};
constexpr DType kF64{CU_TENSOR_MAP_DATA_TYPE_FLOAT64, 8, "f64"};

struct Case {
  DType type = kU8;
  uint32_t rank = 2;
  uint64_t dims[5] = {1, 1, 1, 1, 1};
  uint64_t strides[4] = {0, 0, 0, 0};  // byte stride of dimension i + 1
  uint32_t box[5] = {1, 1, 1, 1, 1};
  uint32_t estr[5] = {1, 1, 1, 1, 1};
  uint32_t swizzle = 0;  // CUtensorMapSwizzle: 0 none, 1 32B, 2 64B, 3 128B
  uint32_t fill = 0;     // CUtensorMapFloatOOBfill: 0 zero, 1 NaN
  int32_t coords[5] = {0, 0, 0, 0, 0};
  uint32_t base_off = 0;
  const char* tag = "in";
};

const char* SwizzleName(uint32_t s) {
  static const char* kNames[] = {"none", "32B", "64B", "128B"};
  return kNames[s & 3];
}

uint64_t RoundUp(uint64_t v, uint64_t m) { return (v + m - 1) / m * m; }

// Elements along dim i under the "dimension 0 ignores its element stride" hypothesis.
uint32_t BoxElems(const Case& c, uint32_t i) {
  if (i == 0) return c.box[0];
  return (c.box[i] + c.estr[i] - 1) / c.estr[i];
}
uint64_t FullBytes(const Case& c) {
  uint64_t n = c.type.bytes;
  for (uint32_t i = 0; i < c.rank; ++i) n *= BoxElems(c, i);
  return n;
}
// Shared-memory extent to dump: each dimension-0 row takes max(row bytes, swizzle span) (the
// H100's layout, seen in the first run of this sweep; the model decides what it predicts).
uint64_t FootprintGuess(const Case& c) {
  const uint64_t row = uint64_t{BoxElems(c, 0)} * c.type.bytes;
  uint64_t n = std::max<uint64_t>(row, c.swizzle ? 16u << c.swizzle : 0);
  for (uint32_t i = 1; i < c.rank; ++i) n *= BoxElems(c, i);
  return n;
}
uint64_t InBoundsBytes(const Case& c) {
  uint64_t n = c.type.bytes;
  for (uint32_t i = 0; i < c.rank; ++i) {
    const int64_t step = i == 0 ? 1 : c.estr[i];
    uint64_t in = 0;
    for (uint32_t k = 0; k < BoxElems(c, i); ++k) {
      const int64_t g = int64_t{c.coords[i]} + int64_t{k} * step;
      if (g >= 0 && g < static_cast<int64_t>(c.dims[i])) ++in;
    }
    n *= in;
  }
  return n;
}

// Global dims and strides around the box: room for in-bounds, end and negative coordinates;
// each row padded by 32 bytes past the 16-byte-rounded width so strides are not tight.
void ShapeGlobal(Case& c) {
  for (uint32_t i = 0; i < c.rank; ++i) c.dims[i] = uint64_t{c.box[i]} * 2 + 3 + (i == 0 ? 0 : 2);
  uint64_t stride = RoundUp(c.dims[0] * c.type.bytes, 16) + 32;
  for (uint32_t i = 1; i < c.rank; ++i) {
    c.strides[i - 1] = stride;
    stride = stride * c.dims[i] + 16;
  }
}

// Coordinates for a placement tag. Dimension 0 coordinates are multiples of 16 bytes: on the
// H100 a tile load whose dimension-0 start is not 16-byte aligned (c0 * element size % 16 != 0)
// raises cudaErrorIllegalInstruction at the UTMALDG (measured with this program, first run;
// the "align" cases at the end of the sweep probe that rule).
void SetCoords(Case& c, const char* tag) {
  c.tag = tag;
  const int32_t q = static_cast<int32_t>(16 / c.type.bytes);  // elements per 16 bytes
  const int32_t dim0 = static_cast<int32_t>(c.dims[0]);
  for (uint32_t i = 0; i < c.rank; ++i) {
    const int32_t half = static_cast<int32_t>(std::max<uint32_t>(1, c.box[i] / 2));
    const int32_t dim = static_cast<int32_t>(c.dims[i]);
    int32_t v = 0;
    if (std::strcmp(tag, "in") == 0) {
      v = i == 0 ? q : (i == 1 ? 2 : 1);
    } else if (std::strcmp(tag, "end") == 0) {  // partly past the end in every dimension
      v = i == 0 ? (dim0 - 1) / q * q : dim - half;
    } else if (std::strcmp(tag, "neg") == 0) {  // partly before the start
      v = i == 0
              ? (static_cast<int32_t>(c.box[0]) > q ? -q : 0)
              : -static_cast<int32_t>(std::max<uint32_t>(1, std::min<uint32_t>(2, c.box[i] - 1)));
    } else if (std::strcmp(tag, "out") == 0) {  // wholly past the end in dimension 0
      v = i == 0 ? (dim0 + q) / q * q : 1;
    } else {  // "outneg": wholly before the start in the outermost dimension
      v = i + 1 == c.rank ? -static_cast<int32_t>(c.box[i]) - 1 : (i == 0 ? q : 2);
    }
    c.coords[i] = v;
  }
}

std::vector<Case> BuildCases() {
  std::vector<Case> cases;
  const uint32_t kOffBases[] = {128, 384, 640, 896, 256, 512, 768};
  uint32_t off_rot = 0;
  auto next_off = [&] { return kOffBases[off_rot++ % 7]; };

  // Main grid.
  const DType kTypes[] = {kU8, kU16, kU32, kU64};
  struct Width {
    uint32_t swizzle;
    uint32_t bytes;
  };
  const Width kWidths[] = {{0, 16}, {0, 48}, {0, 128}, {0, 256}, {1, 16}, {1, 32}, {2, 16},
                           {2, 32}, {2, 64}, {3, 16},  {3, 32},  {3, 64}, {3, 128}};
  const char* kTags[] = {"in", "end", "neg"};
  for (const DType& t : kTypes) {
    for (const Width& w : kWidths) {
      for (int shape = 0; shape < 3; ++shape) {
        for (int based = 0; based < 2; ++based) {
          for (const char* tag : kTags) {
            Case c;
            c.type = t;
            c.swizzle = w.swizzle;
            c.box[0] = w.bytes / t.bytes;
            if (shape == 0) {  // tall 2-D: more than 1 KiB, so 128B swizzle wraps its repeat
              c.rank = 2;
              // Rows take max(inner bytes, swizzle span) in shared memory (first H100 run).
              const uint32_t pitch = std::max<uint32_t>(w.bytes, w.swizzle ? 16u << w.swizzle : 0);
              c.box[1] = std::min<uint32_t>(256, 1024 / pitch + 3);
            } else if (shape == 1) {
              c.rank = 2;
              c.box[1] = 5;
            } else {
              c.rank = 3;
              c.box[1] = 6;
              c.box[2] = 3;
            }
            c.base_off = based ? next_off() : 0;
            ShapeGlobal(c);
            SetCoords(c, tag);
            cases.push_back(c);
          }
        }
      }
    }
  }
  // 1-D boxes.
  for (const Width& w : {Width{0, 64}, Width{0, 256}, Width{3, 128}, Width{2, 48}}) {
    for (const char* tag : kTags) {
      Case c;
      c.type = kU32;
      c.rank = 1;
      c.swizzle = w.swizzle;
      c.box[0] = w.bytes / 4;
      c.base_off = (w.bytes == 48) ? next_off() : 0;
      ShapeGlobal(c);
      SetCoords(c, tag);
      cases.push_back(c);
    }
  }
  // Element strides > 1 (dimension 1, dimension 2, and dimension 0 which the driver documents
  // as unsupported without interleave).
  struct Strided {
    DType t;
    uint32_t rank;
    uint32_t swizzle;
    uint32_t e0, e1, e2;
  };
  const Strided kStrided[] = {{kU16, 2, 0, 1, 2, 1}, {kU16, 2, 3, 1, 3, 1}, {kU32, 2, 3, 1, 2, 1},
                              {kU32, 3, 2, 1, 1, 2}, {kU8, 3, 0, 1, 3, 2},  {kU32, 2, 0, 2, 1, 1},
                              {kU16, 2, 3, 2, 2, 1}, {kU64, 2, 1, 1, 4, 1}};
  for (const Strided& s : kStrided) {
    for (const char* tag : {"in", "end", "neg"}) {
      Case c;
      c.type = s.t;
      c.rank = s.rank;
      c.swizzle = s.swizzle;
      const uint32_t inner = s.swizzle == 0 ? 64 : (16u << s.swizzle);
      c.box[0] = inner / s.t.bytes;
      c.box[1] = 16;
      c.box[2] = 3;
      c.estr[0] = s.e0;
      c.estr[1] = s.e1;
      c.estr[2] = s.e2;
      c.base_off = std::strcmp(tag, "end") == 0 ? next_off() : 0;
      ShapeGlobal(c);
      SetCoords(c, tag);
      cases.push_back(c);
    }
  }
  // OOB fill modes on float types.
  for (const DType& t : {kF16, kBF16, kF32, kF64}) {
    for (uint32_t fill : {0u, 1u}) {
      for (uint32_t swz : {0u, 3u}) {
        for (const char* tag : {"end", "neg", "out"}) {
          Case c;
          c.type = t;
          c.rank = 2;
          c.swizzle = swz;
          c.fill = fill;
          c.box[0] = 64 / t.bytes;
          c.box[1] = 9;
          c.base_off = swz ? next_off() : 0;
          ShapeGlobal(c);
          SetCoords(c, tag);
          cases.push_back(c);
        }
      }
    }
  }
  // Wholly out-of-bounds boxes (integer types) and 256-row boxes.
  for (const char* tag : {"out", "outneg"}) {
    for (uint32_t swz : {0u, 3u}) {
      Case c;
      c.type = kU32;
      c.rank = 2;
      c.swizzle = swz;
      c.box[0] = 32;
      c.box[1] = 8;
      ShapeGlobal(c);
      SetCoords(c, tag);
      cases.push_back(c);
    }
  }
  for (uint32_t swz : {0u, 1u, 2u, 3u}) {
    for (const char* tag : {"in", "end"}) {
      Case c;
      c.type = kU16;
      c.rank = 2;
      c.swizzle = swz;
      c.box[0] = 8;  // 16 bytes per row
      c.box[1] = 256;
      c.base_off = std::strcmp(tag, "end") == 0 ? next_off() : 0;
      ShapeGlobal(c);
      SetCoords(c, tag);
      cases.push_back(c);
    }
  }
  // Dimension-0 alignment probes, last because a misaligned start kills the CUDA context (the
  // runner restarts after each): tag "align", coordinate 0 given in elements.
  struct Align {
    DType t;
    uint32_t swizzle;
    int32_t c0;
  };
  const Align kAlign[] = {{kU8, 0, 1},  {kU8, 0, 8},  {kU8, 0, 32}, {kU8, 0, -8}, {kU8, 0, -16},
                          {kU16, 0, 4}, {kU16, 0, 8}, {kU32, 0, 2}, {kU32, 0, 4}, {kU64, 0, 1},
                          {kU64, 0, 2}, {kU32, 3, 2}, {kU32, 3, 4}, {kU64, 3, -1}};
  for (const Align& a : kAlign) {
    Case c;
    c.type = a.t;
    c.rank = 2;
    c.swizzle = a.swizzle;
    c.box[0] = 64 / a.t.bytes;
    c.box[1] = 4;
    ShapeGlobal(c);
    SetCoords(c, "in");
    c.tag = "align";
    c.coords[0] = a.c0;
    cases.push_back(c);
  }
  return cases;
}

std::string JoinU64(const uint64_t* v, uint32_t n) {
  std::string s;
  for (uint32_t i = 0; i < n; ++i) {
    if (i) s.push_back(',');
    s.append(std::to_string(v[i]));
  }
  return n ? s : "-";
}
std::string JoinU32(const uint32_t* v, uint32_t n) {
  std::string s;
  for (uint32_t i = 0; i < n; ++i) {
    if (i) s.push_back(',');
    s.append(std::to_string(v[i]));
  }
  return s;
}
std::string JoinS32(const int32_t* v, uint32_t n) {
  std::string s;
  for (uint32_t i = 0; i < n; ++i) {
    if (i) s.push_back(',');
    s.append(std::to_string(v[i]));
  }
  return s;
}

void WriteCaseLine(FILE* out, uint32_t id, const Case& c, uint32_t smem_dst) {
  std::fprintf(out,
               "case id=%u dtype=%s esize=%u rank=%u swizzle=%s oob=%s interleave=none dims=%s "
               "strides=%s box=%s estrides=%s coords=%s base_off=%u smem=0x%x full=%" PRIu64
               " inb=%" PRIu64 " tag=%s\n",
               id, c.type.name, c.type.bytes, c.rank, SwizzleName(c.swizzle),
               c.fill ? "nan" : "zero", JoinU64(c.dims, c.rank).c_str(),
               JoinU64(c.strides, c.rank - 1).c_str(), JoinU32(c.box, c.rank).c_str(),
               JoinU32(c.estr, c.rank).c_str(), JoinS32(c.coords, c.rank).c_str(), c.base_off,
               smem_dst, FullBytes(c), InBoundsBytes(c), c.tag);
}

int Usage() {
  std::fprintf(
      stderr,
      "usage: tma_sweep --out FILE [--start N] [--dry-run] [--only ID] [--c0 X] [--flags F]\n"
      "  --dry-run  list the cases and the expected file size without a GPU\n");
  return kExitCudaError;
}

int Main(int argc, char** argv) {
  const char* out_path = nullptr;
  uint32_t start = 0;
  bool dry = false;
  int64_t only = -1;       // diagnostics: run just this case
  int64_t c0 = INT64_MIN;  // diagnostics: override coordinate 0
  uint32_t flags = 0;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--out") && i + 1 < argc) {
      out_path = argv[++i];
    } else if (!std::strcmp(argv[i], "--start") && i + 1 < argc) {
      start = static_cast<uint32_t>(std::strtoul(argv[++i], nullptr, 10));
    } else if (!std::strcmp(argv[i], "--only") && i + 1 < argc) {
      only = std::strtol(argv[++i], nullptr, 10);
    } else if (!std::strcmp(argv[i], "--c0") && i + 1 < argc) {
      c0 = std::strtol(argv[++i], nullptr, 10);
    } else if (!std::strcmp(argv[i], "--flags") && i + 1 < argc) {
      flags = static_cast<uint32_t>(std::strtoul(argv[++i], nullptr, 10));
    } else if (!std::strcmp(argv[i], "--dry-run")) {
      dry = true;
    } else {
      return Usage();
    }
  }
  if (out_path == nullptr) return Usage();
  std::vector<Case> cases = BuildCases();
  if (c0 != INT64_MIN)
    for (Case& c : cases) c.coords[0] = static_cast<int32_t>(c0);

  FILE* out = std::fopen(out_path, start == 0 ? "w" : "a");
  if (out == nullptr) {
    std::fprintf(stderr, "tma_sweep: cannot open %s: %s\n", out_path, std::strerror(errno));
    return kExitCudaError;
  }
  if (dry) {
    uint64_t bytes = 0;
    for (uint32_t id = 0; id < cases.size(); ++id) {
      const Case& c = cases[id];
      WriteCaseLine(out, id, c, 0);
      const uint64_t len = kDumpBefore + RoundUp(FootprintGuess(c), 128) + kDumpAfter;
      bytes += 2 * len + len / 64 + 200;
      if (FootprintGuess(c) > kMaxFootprint) std::fprintf(stderr, "case %u too large\n", id);
    }
    std::fclose(out);
    std::printf("tma_sweep: %zu cases, about %" PRIu64 " bytes of output\n", cases.size(), bytes);
    return 0;
  }

  int device = 0;
  PARITY_CUDA_CHECK(cudaGetDevice(&device));
  cudaDeviceProp prop{};
  PARITY_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  int driver = 0;
  int runtime = 0;
  PARITY_CUDA_CHECK(cudaDriverGetVersion(&driver));
  PARITY_CUDA_CHECK(cudaRuntimeGetVersion(&runtime));
  if (prop.major != 9) {
    std::fprintf(stderr, "tma_sweep: needs sm_90, found sm_%d%d\n", prop.major, prop.minor);
    return kExitCudaError;
  }
  if (start == 0) {
    std::fprintf(out, "# parity-tma-sweep 1\n");
    std::fprintf(out, "# device %s sm_%d%d driver=%d runtime=%d\n", prop.name, prop.major,
                 prop.minor, driver, runtime);
    std::fprintf(out, "# pattern fmix32-v1 sentinel=%02x cases=%zu\n", kSentinel, cases.size());
  }

  std::vector<uint8_t> host_global(kGlobalBytes);
  for (uint64_t i = 0; i < kGlobalBytes; ++i)
    host_global[i] = GlobalPattern(static_cast<int64_t>(i) - static_cast<int64_t>(kTensorOffset));
  uint8_t* global = nullptr;
  PARITY_CUDA_CHECK(cudaMalloc(&global, kGlobalBytes));
  PARITY_CUDA_CHECK(cudaMemcpy(global, host_global.data(), kGlobalBytes, cudaMemcpyHostToDevice));
  uint8_t* tensor = global + kTensorOffset;
  LaunchResult* d_result = nullptr;
  uint8_t* d_dump = nullptr;
  PARITY_CUDA_CHECK(cudaMalloc(&d_result, sizeof(LaunchResult)));
  PARITY_CUDA_CHECK(cudaFuncSetAttribute(SweepKernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         kDynSmemBytes));
  PARITY_CUDA_CHECK(cudaMalloc(&d_dump, kDynSmemBytes));
  std::vector<uint8_t> dump(kDynSmemBytes);

  uint32_t n_enc_err = 0, n_done = 0, n_alt = 0, n_stuck = 0;
  for (uint32_t id = start; id < cases.size(); ++id) {
    if (only >= 0 && id != only) continue;
    const Case& c = cases[id];
    CUtensorMap tmap{};
    cuuint64_t dims[5], strides[4];
    cuuint32_t box[5], estr[5];
    for (uint32_t i = 0; i < 5; ++i) {
      dims[i] = c.dims[i];
      box[i] = c.box[i];
      estr[i] = c.estr[i];
      if (i < 4) strides[i] = c.strides[i];
    }
    const CUresult enc = GetTensorMapEncodeTiled()(
        &tmap, c.type.cu, c.rank, tensor, dims, strides, box, estr, CU_TENSOR_MAP_INTERLEAVE_NONE,
        static_cast<CUtensorMapSwizzle>(c.swizzle), CU_TENSOR_MAP_L2_PROMOTION_NONE,
        static_cast<CUtensorMapFloatOOBfill>(c.fill));
    const uint64_t full = FullBytes(c);
    const uint64_t inb = InBoundsBytes(c);
    if (enc != CUDA_SUCCESS) {
      WriteCaseLine(out, id, c, 0);
      std::fprintf(out, "encode-error cuda=%d\nend\n", static_cast<int>(enc));
      ++n_enc_err;
      continue;
    }
    // Run 0: expect the full box (alt: in-bounds bytes), with the dump. Run 1: expect only the
    // in-bounds bytes (alt: full), when they differ and are not zero.
    std::string runs;
    uint32_t smem_dst = 0;
    for (int run = 0; run < 2; ++run) {
      if (run == 1 && (inb == full || inb == 0)) break;
      LaunchParams p{};
      for (uint32_t i = 0; i < 5; ++i) p.coords[i] = c.coords[i];
      p.rank = c.rank;
      p.base_off = c.base_off;
      p.dump_begin = -kDumpBefore;
      p.dump_len =
          run == 0
              ? static_cast<uint32_t>(kDumpBefore + RoundUp(FootprintGuess(c), 128) + kDumpAfter)
              : 0;
      p.expect_bytes = static_cast<uint32_t>(run == 0 ? full : inb);
      p.alt_bytes = static_cast<uint32_t>(run == 0 ? inb : full);
      p.flags = flags;
      PARITY_CUDA_CHECK(cudaMemset(d_result, 0, sizeof(LaunchResult)));
      SweepKernel<<<1, kThreads, kDynSmemBytes>>>(tmap, p, d_result, d_dump);
      cudaError_t err = cudaGetLastError();
      if (err == cudaSuccess) err = cudaDeviceSynchronize();
      if (err != cudaSuccess) {
        WriteCaseLine(out, id, c, 0);
        std::fprintf(out, "abort id=%u run=%d cuda=%s\n", id, run, cudaGetErrorName(err));
        std::fclose(out);
        std::fprintf(stderr, "tma_sweep: case %u run %d: %s (%s)\n", id, run, cudaGetErrorName(err),
                     cudaGetErrorString(err));
        return 3;
      }
      LaunchResult r{};
      PARITY_CUDA_CHECK(cudaMemcpy(&r, d_result, sizeof(r), cudaMemcpyDeviceToHost));
      if (run == 0) {
        smem_dst = r.smem_dst;
        PARITY_CUDA_CHECK(cudaMemcpy(dump.data(), d_dump, p.dump_len, cudaMemcpyDeviceToHost));
        n_done += r.done;
        n_alt += r.done_alt;
        n_stuck += (!r.done && !r.done_alt);
      }
      char line[256];
      std::snprintf(line, sizeof(line),
                    "run expect=%u alt=%u done=%u done_alt=%u clean=%u cycles=%lld\n",
                    p.expect_bytes, p.alt_bytes, r.done, r.done_alt, r.clean, r.cycles);
      runs += line;
      if (run == 0) {
        runs += "dump begin=" + std::to_string(p.dump_begin) +
                " len=" + std::to_string(p.dump_len) + "\n";
        static const char kHex[] = "0123456789abcdef";
        for (uint32_t i = 0; i < p.dump_len; i += 64) {
          for (uint32_t j = i; j < std::min(p.dump_len, i + 64); ++j) {
            runs += kHex[dump[j] >> 4];
            runs += kHex[dump[j] & 15];
          }
          runs += '\n';
        }
      }
    }
    WriteCaseLine(out, id, c, smem_dst);
    std::fputs(runs.c_str(), out);
    std::fputs("end\n", out);
  }
  std::fclose(out);
  PARITY_CUDA_CHECK(cudaFree(d_dump));
  PARITY_CUDA_CHECK(cudaFree(d_result));
  PARITY_CUDA_CHECK(cudaFree(global));
  std::printf(
      "tma_sweep: %s, cases %u..%zu: full-box expect completed %u, only the in-bounds credit %u, "
      "neither %u, encode errors %u\n",
      prop.name, start, cases.size() - 1, n_done, n_alt, n_stuck, n_enc_err);
  return 0;
}

}  // namespace
}  // namespace parity::gpu

int main(int argc, char** argv) { return parity::gpu::Main(argc, argv); }
