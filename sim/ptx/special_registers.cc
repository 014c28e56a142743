#include "sim/ptx/special_registers.h"

#include <cstring>

namespace parity::ptx {

SpecialRegister ClassifyRegister(const std::string& name) {
  using K = SpecialRegister::Kind;
  static const char* const kDims = "xyz";
  if (name.size() <= 2 || name[0] != '%') return {};
  const size_t dot = name.find('.');
  if (dot != std::string::npos && dot + 2 == name.size()) {
    const std::string base = name.substr(1, dot - 1);
    const char* d = std::strchr(kDims, name[dot + 1]);
    if (d != nullptr) {
      const auto dim = static_cast<uint8_t>(d - kDims);
      if (base == "tid") return {K::kTid, dim};
      if (base == "ntid") return {K::kNtid, dim};
      if (base == "ctaid") return {K::kCtaid, dim};
      if (base == "nctaid") return {K::kNctaid, dim};
      if (base == "cluster_ctaid") return {K::kClusterCtaid, dim};
      if (base == "cluster_nctaid") return {K::kClusterNctaid, dim};
      if (base == "clusterid") return {K::kClusterid, dim};
      if (base == "nclusterid") return {K::kNclusterid, dim};
    }
  }
  if (name == "%laneid") return {K::kLaneid, 0};
  if (name == "%warpid") return {K::kWarpid, 0};
  if (name == "%cluster_ctarank") return {K::kClusterCtarank, 0};
  if (name == "%cluster_nctarank") return {K::kClusterNctarank, 0};
  return {};
}

}  // namespace parity::ptx
