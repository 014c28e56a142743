// Native run of tests/import/cp_async_pipeline.cu: `cp_async_pipeline_main TRACE [K_TILES]`.
#include "tests/import/cp_async_pipeline.cu"
#include "tests/import/native/native_main.cuh"

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  const int k_tiles = parity::native::IntArg(argc, argv, 2, 6);
  void* src = parity::native::DeviceZeros(static_cast<size_t>(k_tiles) * kStageBytes);
  void* out = parity::native::DeviceZeros(kThreads * 4);
  return parity::native::RunTraced("cp_async_pipeline", argv[1], [&] {
    cp_async_pipeline<<<1, kThreads>>>(static_cast<const uint8_t*>(src), k_tiles,
                                       static_cast<uint32_t*>(out));
  });
}
