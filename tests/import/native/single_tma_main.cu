// Native run of tests/import/single_tma.cu: `single_tma_main TRACE`.
#include "tests/import/single_tma.cu"
#include "tests/import/native/native_main.cuh"

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  void* src = parity::native::DeviceZeros(256 * 256 * 2);
  void* out = parity::native::DeviceZeros(128 * 2);
  const CUtensorMap map =
      parity::native::MakeMap2d(src, 256, 256, 64, 64, CU_TENSOR_MAP_SWIZZLE_128B);
  return parity::native::RunTraced("single_tma_load", argv[1], [&] {
    single_tma_load<<<1, 128>>>(map, 0, 64, static_cast<uint16_t*>(out));
  });
}
