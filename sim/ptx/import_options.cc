// `--tensormap INDEX=DTYPE:DIMS:BOX[:SWIZZLE]` of `parity import` (sim/ptx/importer.h).
#include <algorithm>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "sim/ptx/importer.h"

namespace parity::ptx {
namespace {

Status BadOption(const std::string& message) { return Status("import.bad-option", message); }

Expected<std::vector<int64_t>> ParseDims(std::string_view text, const std::string& what) {
  std::vector<int64_t> out;
  size_t i = 0;
  while (i <= text.size()) {
    const size_t x = std::min(text.find('x', i), text.size());
    const std::string_view part = text.substr(i, x - i);
    if (part.empty() || part.size() > 12 ||
        !std::all_of(part.begin(), part.end(), [](char c) { return c >= '0' && c <= '9'; })) {
      return BadOption("--tensormap " + what + " '" + std::string(text) +
                       "' is not WxH[xD...] of positive integers");
    }
    out.push_back(std::stoll(std::string(part)));
    if (out.back() <= 0) return BadOption("--tensormap " + what + " has a zero extent");
    i = x + 1;
  }
  if (out.size() > 5) return BadOption("--tensormap " + what + " has more than 5 dimensions");
  return out;
}

}  // namespace

int64_t TensorMapDtypeBytes(const std::string& dtype) {
  static const std::map<std::string, int64_t> kBytes = {
      {"u8", 1},  {"s8", 1},  {"u16", 2},  {"s16", 2}, {"f16", 2}, {"bf16", 2}, {"u32", 4},
      {"s32", 4}, {"f32", 4}, {"tf32", 4}, {"u64", 8}, {"s64", 8}, {"f64", 8}};
  auto it = kBytes.find(dtype);
  return it == kBytes.end() ? 0 : it->second;
}

Expected<TensorMapArg> ParseTensorMapArg(std::string_view spec) {
  TensorMapArg t;
  const size_t eq = spec.find('=');
  if (eq == std::string_view::npos || eq == 0 || eq > 3) {
    return BadOption("--tensormap '" + std::string(spec) +
                     "' is not INDEX=DTYPE:DIMS:BOX[:SWIZZLE]");
  }
  for (char c : spec.substr(0, eq)) {
    if (c < '0' || c > '9') return BadOption("--tensormap index is not a number");
  }
  t.index = std::stoi(std::string(spec.substr(0, eq)));
  std::vector<std::string_view> parts;
  std::string_view rest = spec.substr(eq + 1);
  while (true) {
    const size_t colon = rest.find(':');
    parts.push_back(rest.substr(0, colon));
    if (colon == std::string_view::npos) break;
    rest = rest.substr(colon + 1);
  }
  if (parts.size() < 3 || parts.size() > 4) {
    return BadOption("--tensormap '" + std::string(spec) +
                     "' is not INDEX=DTYPE:DIMS:BOX[:SWIZZLE]");
  }
  t.dtype = std::string(parts[0]);
  if (TensorMapDtypeBytes(t.dtype) == 0) return BadOption("--tensormap dtype '" + t.dtype + "' is unknown");
  auto dims = ParseDims(parts[1], "dims");
  if (!dims.ok()) return dims.status();
  auto box = ParseDims(parts[2], "box");
  if (!box.ok()) return box.status();
  t.dims = *dims;
  t.box = *box;
  if (parts.size() == 4) {
    t.swizzle = std::string(parts[3]);
    if (t.swizzle != "none" && t.swizzle != "32B" && t.swizzle != "64B" && t.swizzle != "128B") {
      return BadOption("--tensormap swizzle '" + t.swizzle + "' is not none, 32B, 64B or 128B");
    }
  }
  return t;
}

}  // namespace parity::ptx
