// Stands in for capture_shim.cc where CUDA's headers were not found when this was built: a
// library that records nothing. `parity capture` refuses to run with it (kParityCaptureStub).
extern "C" __attribute__((visibility("default"))) const int kParityCaptureStub = 1;
