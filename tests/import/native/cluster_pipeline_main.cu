// Native run of tests/import/cluster_pipeline.cu (a 2x1 cluster): `cluster_pipeline_main TRACE
// [K_TILES]`.
#include "tests/import/cluster_pipeline.cu"
#include "tests/import/native/native_main.cuh"

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  const int k_tiles = parity::native::IntArg(argc, argv, 2, 5);
  void* src = parity::native::DeviceZeros(64 * 1024 * 2);
  void* out = parity::native::DeviceZeros(2 * 64 * 4);
  const CUtensorMap map =
      parity::native::MakeMap2d(src, 64, 1024, 64, 32, CU_TENSOR_MAP_SWIZZLE_128B);
  const int smem = kStages * 2 * kHalfBytes + 2 * kStages * 8;
  return parity::native::RunTraced("cluster_pipeline", argv[1], [&] {
    cluster_pipeline<<<2, 64, smem>>>(map, k_tiles, static_cast<float*>(out));
  });
}
