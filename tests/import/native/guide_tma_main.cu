// Native run of tests/import/guide_tma.cu: `guide_tma_main tma|bulk TRACE [BLOCKS]`.
#include "tests/import/guide_tma.cu"
#include "tests/import/native/native_main.cuh"

int main(int argc, char** argv) {
  if (argc < 3) return 2;
  const std::string which = argv[1];
  const int blocks = parity::native::IntArg(argc, argv, 3, 4);
  if (which == "tma") {
    void* in = parity::native::DeviceZeros(64 * 256 * 2);
    void* out = parity::native::DeviceZeros(64 * 256 * 2);
    const CUtensorMap a =
        parity::native::MakeMap2d(in, 64, 256, 64, 64, CU_TENSOR_MAP_SWIZZLE_NONE);
    const CUtensorMap b =
        parity::native::MakeMap2d(out, 64, 256, 64, 64, CU_TENSOR_MAP_SWIZZLE_NONE);
    return parity::native::RunTraced("tma_roundtrip", argv[2], [&] {
      tma_roundtrip<<<blocks, 128>>>(a, b, 0, 0);
    });
  }
  void* src = parity::native::DeviceZeros(static_cast<size_t>(blocks) * kBulkBytes);
  void* dst = parity::native::DeviceZeros(static_cast<size_t>(blocks) * kBulkBytes);
  return parity::native::RunTraced("bulk_roundtrip", argv[2], [&] {
    bulk_roundtrip<<<blocks, 128>>>(static_cast<const uint32_t*>(src),
                                    static_cast<uint32_t*>(dst));
  });
}
