// Launch files: reading them and applying one launch to `parity import` (launch_file.h).
#include "sim/ptx/launch_file.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "sim/common/read_file.h"
#include "sim/ptx/thread_exec.h"

namespace parity::ptx {
namespace {

using nlohmann::json;

Status BadLaunch(const std::string& path, const std::string& message, int line = 0,
                 int column = 0) {
  return Status("import.bad-launch", message, {path, line, column});
}

// The file:line:col of byte `pos` of `text` (nlohmann's parse errors give a byte position).
std::pair<int, int> LineColumn(std::string_view text, size_t pos) {
  int line = 1, column = 1;
  for (size_t i = 0; i < pos && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  return {line, column};
}

// Reads field `key` of `object` as T, or says which launch's field is missing or of another type.
class Fields {
 public:
  Fields(const std::string& path, std::string where) : path_(path), where_(std::move(where)) {}

  template <typename T>
  Status Get(const json& object, const char* key, T* out) const {
    auto it = object.find(key);
    if (it == object.end()) return BadLaunch(path_, where_ + " has no \"" + key + "\"");
    try {
      *out = it->get<T>();
    } catch (const json::exception&) {
      return BadLaunch(path_, where_ + ": \"" + key + "\" is " + it->dump() +
                                  ", not the type docs/launch-file.md gives");
    }
    return Status::Ok();
  }

  template <typename T>
  Status Dims(const json& object, const char* key, std::array<uint32_t, 3>* out) const {
    std::vector<T> v;
    PARITY_RETURN_IF_ERROR(Get(object, key, &v));
    if (v.size() != 3 || std::any_of(v.begin(), v.end(), [](T x) { return x == 0; })) {
      return BadLaunch(path_, where_ + ": \"" + key + "\" is not three positive sizes");
    }
    for (int i = 0; i < 3; ++i) (*out)[i] = static_cast<uint32_t>(v[i]);
    return Status::Ok();
  }

  const std::string& path() const { return path_; }
  const std::string& where() const { return where_; }

 private:
  const std::string& path_;
  std::string where_;
};

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

Expected<LaunchTensorMap> ParseTensorMap(const json& j, const Fields& f) {
  LaunchTensorMap t;
  PARITY_RETURN_IF_ERROR(f.Get(j, "offset", &t.offset));
  auto encode = j.find("encode");
  if (encode == j.end() || !encode->is_object()) {
    return BadLaunch(f.path(), f.where() + ": a tensor map has no \"encode\" object");
  }
  PARITY_RETURN_IF_ERROR(f.Get(*encode, "api", &t.api));
  PARITY_RETURN_IF_ERROR(f.Get(*encode, "data_type", &t.data_type));
  PARITY_RETURN_IF_ERROR(f.Get(*encode, "rank", &t.rank));
  PARITY_RETURN_IF_ERROR(f.Get(*encode, "global_dim", &t.global_dim));
  if (t.api == "cuTensorMapEncodeTiled") {
    PARITY_RETURN_IF_ERROR(f.Get(*encode, "box_dim", &t.box_dim));
  }
  PARITY_RETURN_IF_ERROR(f.Get(*encode, "element_strides", &t.element_strides));
  PARITY_RETURN_IF_ERROR(f.Get(*encode, "interleave", &t.interleave));
  PARITY_RETURN_IF_ERROR(f.Get(*encode, "swizzle", &t.swizzle));
  return t;
}

Expected<Launch> ParseLaunch(const json& j, int index, const std::string& path) {
  const Fields f(path, "launch " + std::to_string(index));
  if (!j.is_object()) return BadLaunch(path, "launch " + std::to_string(index) + " is not an object");
  Launch l;
  l.index = index;
  PARITY_RETURN_IF_ERROR(f.Get(j, "kernel", &l.kernel));
  PARITY_RETURN_IF_ERROR(f.Get(j, "api", &l.api));
  PARITY_RETURN_IF_ERROR(f.Dims<uint64_t>(j, "grid", &l.grid));
  PARITY_RETURN_IF_ERROR(f.Dims<uint64_t>(j, "block", &l.block));
  PARITY_RETURN_IF_ERROR(f.Dims<uint64_t>(j, "cluster", &l.cluster));
  PARITY_RETURN_IF_ERROR(f.Get(j, "dynamic_smem", &l.dynamic_smem));
  auto params = j.find("params");
  if (params == j.end() || !params->is_object()) {
    return BadLaunch(path, "launch " + std::to_string(index) + " has no \"params\" object");
  }
  uint64_t size = 0;
  PARITY_RETURN_IF_ERROR(f.Get(*params, "size", &size));
  if (auto layout = params->find("layout"); layout != params->end() && layout->is_array()) {
    for (const json& item : *layout) {
      uint64_t off = 0, sz = 0;
      PARITY_RETURN_IF_ERROR(f.Get(item, "offset", &off));
      PARITY_RETURN_IF_ERROR(f.Get(item, "size", &sz));
      l.layout.emplace_back(off, sz);
    }
  }
  auto bytes = params->find("bytes");
  if (bytes != params->end() && bytes->is_string()) {
    const std::string& hex = bytes->get_ref<const std::string&>();
    if (hex.size() != 2 * size) {
      return BadLaunch(path, "launch " + std::to_string(index) + ": \"bytes\" holds " +
                                 std::to_string(hex.size() / 2) + " bytes, \"size\" says " +
                                 std::to_string(size));
    }
    l.bytes.resize(size);
    for (size_t i = 0; i < size; ++i) {
      const int hi = HexDigit(hex[2 * i]), lo = HexDigit(hex[2 * i + 1]);
      if (hi < 0 || lo < 0) {
        return BadLaunch(path, "launch " + std::to_string(index) +
                                   ": \"bytes\" is not hexadecimal at byte " + std::to_string(i));
      }
      l.bytes[i] = static_cast<uint8_t>(hi << 4 | lo);
    }
    l.has_bytes = true;
  }
  if (auto maps = j.find("tensor_maps"); maps != j.end() && maps->is_array()) {
    for (const json& m : *maps) {
      auto t = ParseTensorMap(m, f);
      if (!t.ok()) return t.status();
      l.tensor_maps.push_back(*t);
    }
  }
  return l;
}

// The --tensormap DTYPE of a launch file's data_type (import's names are PTX's); "" when the
// importer has none (the sub-byte Blackwell types).
std::string ImportDtype(const std::string& t) {
  return TensorMapDtypeBytes(t) > 0 ? t : "";
}

// The bytes of a CUtensorMap (CUDA driver API, cuTensorMapEncodeTiled: an opaque 128-byte,
// 64-byte aligned object passed by value).
constexpr uint64_t kTensorMapBytes = 128;

// The parameter (index into `spans`, each an (offset, size) of one parameter) whose bytes hold
// the whole CUtensorMap at parameter byte `offset`: a 128-byte parameter of its own or a field of
// a by-value struct. spans.size() when none does.
size_t ParamHolding(const std::vector<std::pair<uint64_t, uint64_t>>& spans, uint64_t offset) {
  size_t p = 0;
  while (p < spans.size() && !(offset >= spans[p].first &&
                               offset + kTensorMapBytes <= spans[p].first + spans[p].second)) {
    ++p;
  }
  return p;
}

}  // namespace

Expected<std::vector<Launch>> ParseLaunchFile(std::string_view text, const std::string& path) {
  json doc;
  try {
    doc = json::parse(text);
  } catch (const json::parse_error& e) {
    const auto [line, column] = LineColumn(text, e.byte > 0 ? e.byte - 1 : 0);
    return BadLaunch(path, "not JSON: " + std::string(e.what()), line, column);
  }
  if (!doc.is_object() || doc.value("schema", "") != "parity-launches") {
    return BadLaunch(path, "not a launch file (no \"schema\": \"parity-launches\"; `parity "
                           "capture` writes them, docs/launch-file.md)");
  }
  if (!doc.contains("version") || !doc["version"].is_number_integer() ||
      doc["version"].get<int>() != kLaunchFileVersion) {
    return BadLaunch(path, "launch file version " +
                               (doc.contains("version") ? doc["version"].dump() : "(none)") +
                               "; this parity reads version " +
                               std::to_string(kLaunchFileVersion));
  }
  auto launches = doc.find("launches");
  if (launches == doc.end() || !launches->is_array()) {
    return BadLaunch(path, "no \"launches\" array");
  }
  std::vector<Launch> out;
  for (size_t i = 0; i < launches->size(); ++i) {
    auto l = ParseLaunch((*launches)[i], static_cast<int>(i), path);
    if (!l.ok()) return l.status();
    out.push_back(std::move(*l));
  }
  return out;
}

Expected<std::vector<Launch>> ReadLaunchFile(const std::string& path) {
  auto text = ReadInputFile(path, "launch file", "import.bad-launch", uint64_t{1} << 30);
  if (!text.ok()) return text.status();
  return ParseLaunchFile(*text, path);
}

Expected<Launch> SelectLaunch(const std::vector<Launch>& launches, const Function& entry,
                              int index, const std::string& path) {
  std::vector<const Launch*> matching;
  std::vector<std::string> others;
  for (const Launch& l : launches) {
    if (l.kernel == entry.name) {
      matching.push_back(&l);
    } else if (std::find(others.begin(), others.end(), l.kernel) == others.end()) {
      others.push_back(l.kernel);
    }
  }
  if (matching.empty()) {
    std::string list;
    for (size_t i = 0; i < others.size() && i < 8; ++i) {
      list += (i ? ", " : "") + (others[i].empty() ? std::string("(unnamed)") : others[i]);
    }
    if (others.size() > 8) list += ", ...";
    return BadLaunch(path, "no launch of " + entry.name + " (" + std::to_string(launches.size()) +
                               " launches" + (list.empty() ? "" : ", of " + list) +
                               "): the launch file was recorded from another program or build "
                               "of the kernel");
  }
  if (index < 0 || index >= static_cast<int>(matching.size())) {
    return BadLaunch(path, "--launch-index " + std::to_string(index) + ": the file has " +
                               std::to_string(matching.size()) + " launches of " + entry.name +
                               " (indices 0.." + std::to_string(matching.size() - 1) + ")");
  }
  return *matching[index];
}

Status ApplyLaunch(const Function& entry, const Launch& recorded, const std::string& path,
                   bool block_given, bool cluster_given, ImportOptions* options) {
  const std::string which =
      "launch " + std::to_string(recorded.index) + " (" + recorded.api + ")";
  if (!recorded.has_bytes) {
    return BadLaunch(path, which + " has no parameter bytes (the driver gave no parameter "
                               "layout when it was recorded); the kernel's " +
                               std::to_string(entry.params.size()) + " parameters are unknown");
  }
  // The PTX's parameter space (each parameter at its ABI offset, as `ld.param [param_N+k]` and
  // --param count) and the launch's must agree parameter for parameter.
  const std::vector<uint64_t> offsets = ParamOffsets(entry);
  uint64_t ptx_size = 0;
  for (size_t i = 0; i < entry.params.size(); ++i) {
    ptx_size = std::max<uint64_t>(ptx_size, offsets[i] + entry.params[i].SizeBytes());
  }
  Launch launch = recorded;
  if (!recorded.layout.empty()) {
    // The driver reports each parameter's offset in the device-side parameter layout, which
    // need not be the ABI's (driver 580 puts a 64- or 128-byte aligned parameter at 112 where
    // the ABI has 0 or 64: traces/capture/): parameter i's bytes move to the PTX's offset i.
    if (recorded.layout.size() != entry.params.size()) {
      return BadLaunch(path, which + " has " + std::to_string(recorded.layout.size()) +
                                 " parameters; the PTX's entry has " +
                                 std::to_string(entry.params.size()));
    }
    launch.bytes.assign(ptx_size, 0);
    uint64_t end = 0;
    for (size_t i = 0; i < entry.params.size(); ++i) {
      const auto [off, size] = recorded.layout[i];
      if (size != static_cast<uint64_t>(entry.params[i].SizeBytes())) {
        return BadLaunch(path, which + ": parameter " + std::to_string(i) + " is " +
                                   std::to_string(size) + " bytes; the PTX's " +
                                   entry.params[i].name + " is " +
                                   std::to_string(entry.params[i].SizeBytes()) +
                                   ": the PTX and the program are different builds of the kernel");
      }
      if (off < end || off + size > recorded.bytes.size()) {
        return BadLaunch(path, which + ": parameter " + std::to_string(i) + " (" +
                                   std::to_string(size) + " bytes at " + std::to_string(off) +
                                   ") overlaps the one before it or ends past the " +
                                   std::to_string(recorded.bytes.size()) + " bytes recorded");
      }
      end = off + size;
      std::copy(recorded.bytes.begin() + static_cast<std::ptrdiff_t>(off),
                recorded.bytes.begin() + static_cast<std::ptrdiff_t>(off + size),
                launch.bytes.begin() + static_cast<std::ptrdiff_t>(offsets[i]));
    }
    for (LaunchTensorMap& m : launch.tensor_maps) {
      const size_t p = ParamHolding(recorded.layout, m.offset);
      if (p == recorded.layout.size()) {
        return BadLaunch(path, which + ": the CUtensorMap at parameter byte " +
                                   std::to_string(m.offset) + " lies in no parameter of " +
                                   entry.name);
      }
      m.offset = offsets[p] + (m.offset - recorded.layout[p].first);
    }
  } else if (launch.bytes.size() != ptx_size) {
    return BadLaunch(path, which + " passed " + std::to_string(launch.bytes.size()) +
                               " parameter bytes; " + entry.name + " in the PTX takes " +
                               std::to_string(ptx_size) +
                               ": the PTX and the program are different builds of the kernel");
  }
  // Dimensions.
  const std::array<uint32_t, 3>& b = launch.block;
  if (block_given && options->block != b) {
    return BadLaunch(path, "--block " + std::to_string(options->block[0]) + "," +
                               std::to_string(options->block[1]) + "," +
                               std::to_string(options->block[2]) + " disagrees with " + which +
                               "'s block " + std::to_string(b[0]) + "," + std::to_string(b[1]) +
                               "," + std::to_string(b[2]));
  }
  options->block = b;
  const std::array<uint32_t, 3>& c = launch.cluster;
  if (c[2] != 1) {
    return BadLaunch(path, which + " has a cluster " + std::to_string(c[0]) + "x" +
                               std::to_string(c[1]) + "x" + std::to_string(c[2]) +
                               "; the importer runs clusters of one layer (z = 1)");
  }
  if (cluster_given && (options->cluster_x != c[0] || options->cluster_y != c[1])) {
    return BadLaunch(path, "--cluster " + std::to_string(options->cluster_x) + "," +
                               std::to_string(options->cluster_y) + " disagrees with " + which +
                               "'s cluster " + std::to_string(c[0]) + "," + std::to_string(c[1]));
  }
  options->cluster_x = c[0];
  options->cluster_y = c[1];
  options->grid = launch.grid;
  options->param_bytes = launch.bytes;
  options->launch = which + " of " + path;
  // Scalar parameters are kernel arguments as --arg gives them (a loop bound that names one
  // becomes the schedule's ARGn, which -D overrides); an --arg given by hand stays.
  for (size_t i = 0; i < entry.params.size(); ++i) {
    const Param& p = entry.params[i];
    const int64_t size = p.SizeBytes();
    if (p.array_size != 0 || size <= 0 || size > 8 || options->args.count(static_cast<int>(i))) {
      continue;
    }
    uint64_t v = 0;
    for (int64_t b = size; b-- > 0;) v = v << 8 | launch.bytes[offsets[i] + b];
    options->args[static_cast<int>(i)] = v;
    options->launch_args.insert(static_cast<int>(i));
  }
  // Tensor maps, each where the launch passed it: a 128-byte parameter of its own, or a field of a
  // by-value struct.
  std::vector<std::pair<uint64_t, uint64_t>> spans;
  for (size_t i = 0; i < entry.params.size(); ++i) {
    spans.push_back({offsets[i], static_cast<uint64_t>(entry.params[i].SizeBytes())});
  }
  for (const LaunchTensorMap& m : launch.tensor_maps) {
    const std::string at = which + ": the CUtensorMap at parameter byte " + std::to_string(m.offset);
    const size_t p = ParamHolding(spans, m.offset);
    if (p == entry.params.size()) {
      return BadLaunch(path, at + " lies in no parameter of " + entry.name);
    }
    TensorMapArg t;
    t.from_launch = true;
    if (entry.params[p].SizeBytes() == kTensorMapBytes) {
      t.index = static_cast<int>(p);
    } else {
      t.index = -1;
      t.param = entry.params[p].name;
      t.offset = static_cast<int64_t>(m.offset - offsets[p]);
    }
    if (m.api != "cuTensorMapEncodeTiled") {
      return BadLaunch(path, at + " comes from " + m.api +
                                 "; the importer describes tiled tensor maps only");
    }
    t.dtype = ImportDtype(m.data_type);
    if (t.dtype.empty()) {
      return BadLaunch(path, at + " has data type " + m.data_type +
                                 ", which the importer has no element size for");
    }
    if (m.interleave != 0) {
      return BadLaunch(path, at + " is interleaved; the importer describes non-interleaved maps");
    }
    if (m.swizzle != "none" && m.swizzle != "32B" && m.swizzle != "64B" && m.swizzle != "128B") {
      return BadLaunch(path, at + " has swizzle " + m.swizzle +
                                 ", which sm_90 has not (none, 32B, 64B, 128B)");
    }
    if (m.rank < 1 || m.rank > 5 || m.global_dim.size() != static_cast<size_t>(m.rank) ||
        m.box_dim.size() != static_cast<size_t>(m.rank)) {
      return BadLaunch(path, at + " has rank " + std::to_string(m.rank) +
                                 " with dims and box of other lengths");
    }
    if (std::any_of(m.element_strides.begin(), m.element_strides.end(),
                    [](int64_t s) { return s != 1; })) {
      return BadLaunch(path, at + " has element strides other than 1, which the importer's "
                                 "box (elements per copy) does not describe");
    }
    t.dims = m.global_dim;
    t.box = m.box_dim;
    t.swizzle = m.swizzle;
    for (const TensorMapArg& given : options->tensor_maps) {
      if (given.index == t.index && given.param == t.param && given.offset == t.offset) {
        return BadLaunch(path, "--tensormap " + TensorMapName(given) + " is also " + at +
                                   ": give it once (the launch's, or drop --launch)");
      }
    }
    options->tensor_maps.push_back(std::move(t));
  }
  return Status::Ok();
}

}  // namespace parity::ptx
