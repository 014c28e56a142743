// Native run of tests/import/ws_pipeline.cu (or a seeded-bug twin, by the genrule that rewrites
// the include): `ws_pipeline_main TRACE [K_TILES]`.
#include "tests/import/ws_pipeline.cu"
#include "tests/import/native/native_main.cuh"

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  const int k_tiles = parity::native::IntArg(argc, argv, 2, 6);
  void* src = parity::native::DeviceZeros(64 * 1024 * 2);
  void* out = parity::native::DeviceZeros(96 * 4);
  const CUtensorMap map =
      parity::native::MakeMap2d(src, 64, 1024, 64, 64, CU_TENSOR_MAP_SWIZZLE_128B);
  const int smem = kStages * kTileBytes + 2 * kStages * 8;
  return parity::native::RunTraced("ws_pipeline", argv[1], [&] {
    ws_pipeline<<<1, 96, smem>>>(map, k_tiles, static_cast<float*>(out));
  });
}
