// The bundled examples (//sim/examples:all), found through the test's runfiles.
#ifndef PARITY_TESTS_SIM_IR_EXAMPLES_H_
#define PARITY_TESTS_SIM_IR_EXAMPLES_H_

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace parity::ir::testing {

inline std::vector<std::string> ExampleNames() {
  return {"single_tma_load", "gemm_tma_multicast_2x2", "gemm_tx_overcount",
          "gemm_empty_count_high", "gemm_wrong_producer_phase"};
}

// Path relative to the runfiles root of the `parity` workspace (a test's working directory).
inline std::string ExamplePath(const std::string& name) { return "sim/examples/" + name + ".pipe"; }

inline std::string ReadExample(const std::string& name) {
  std::ifstream in(ExamplePath(name), std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace parity::ir::testing

#endif  // PARITY_TESTS_SIM_IR_EXAMPLES_H_
