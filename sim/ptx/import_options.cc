// The kernel-argument options of `parity import` (sim/ptx/importer.h): `--tensormap`, `--param`
// and their check against the parameters the kernel reads.
#include <algorithm>
#include <cctype>
#include <charconv>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sim/ptx/importer.h"
#include "sim/ptx/thread_exec.h"

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

// "NAME+OFFSET", "NAME" or "OFFSET" before the `=` of --param / --tensormap: the parameter's name
// ("" for a bare offset) and the offset. False when malformed.
bool ParseParamRef(std::string_view ref, std::string* name, int64_t* offset) {
  auto number = [](std::string_view t, int64_t* out) {
    if (t.empty()) return false;
    int base = 10;
    if (t.size() > 2 && t[0] == '0' && (t[1] == 'x' || t[1] == 'X')) {
      t.remove_prefix(2);
      base = 16;
    }
    const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), *out, base);
    return ec == std::errc() && end == t.data() + t.size() && *out >= 0;
  };
  const size_t plus = ref.find('+');
  if (plus == std::string_view::npos) {
    if (number(ref, offset)) {
      name->clear();
      return true;
    }
    *name = std::string(ref);
    *offset = 0;
  } else {
    *name = std::string(ref.substr(0, plus));
    if (!number(ref.substr(plus + 1), offset)) return false;
  }
  if (name->empty()) return false;
  for (char c : *name) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '$' || c == '.')) {
      return false;
    }
  }
  return !(name->front() >= '0' && name->front() <= '9');
}

}  // namespace

std::string TensorMapName(const TensorMapArg& t) {
  if (t.index >= 0) return "tmap" + std::to_string(t.index);
  // A C++ entry's parameter is `<mangled entry>_param_N`: the mangled part (often a thousand
  // characters of template arguments) says nothing the schedule needs.
  std::string param = t.param;
  const size_t at = param.rfind("_param_");
  if (param.rfind("_Z", 0) == 0 && at != std::string::npos) param = param.substr(at + 1);
  return "tmap_" + param + "_" + std::to_string(t.offset);
}

Expected<ParamArg> ParseParamArg(std::string_view spec) {
  ParamArg a;
  a.spec = std::string(spec);
  const size_t eq = spec.find('=');
  const std::string_view value = eq == std::string_view::npos ? "" : spec.substr(eq + 1);
  int64_t v = 0;
  uint64_t u = 0;
  bool ok = eq != std::string_view::npos && !value.empty() &&
            ParseParamRef(spec.substr(0, eq), &a.param, &a.offset);
  if (ok) {
    // A value is decimal (possibly negative: its two's complement at the load's width) or hex.
    if (value.size() > 2 && value[0] == '0' && (value[1] == 'x' || value[1] == 'X')) {
      const auto [end, ec] = std::from_chars(value.data() + 2, value.data() + value.size(), u, 16);
      ok = ec == std::errc() && end == value.data() + value.size();
    } else if (value[0] == '-') {
      const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
      ok = ec == std::errc() && end == value.data() + value.size();
      u = static_cast<uint64_t>(v);
    } else {
      const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), u);
      ok = ec == std::errc() && end == value.data() + value.size();
    }
  }
  if (!ok) {
    return BadOption("--param '" + a.spec +
                     "' is not NAME+OFFSET=VALUE, NAME=VALUE or OFFSET=VALUE (a byte offset in "
                     "the parameter space)");
  }
  a.value = u;
  return a;
}

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
  if (eq == std::string_view::npos || eq == 0) {
    return BadOption("--tensormap '" + std::string(spec) +
                     "' is not INDEX=DTYPE:DIMS:BOX[:SWIZZLE] or "
                     "NAME+OFFSET=DTYPE:DIMS:BOX[:SWIZZLE]");
  }
  const std::string_view ref = spec.substr(0, eq);
  if (ref.find('+') != std::string_view::npos) {
    // A CUtensorMap inside a by-value struct parameter.
    if (!ParseParamRef(ref, &t.param, &t.offset) || t.param.empty()) {
      return BadOption("--tensormap '" + std::string(ref) + "' is not NAME+OFFSET");
    }
    t.index = -1;
  } else {
    for (char c : ref) {
      if (c < '0' || c > '9' || ref.size() > 3) {
        return BadOption("--tensormap index '" + std::string(ref) +
                         "' is not a number (a field of a struct parameter is NAME+OFFSET)");
      }
    }
    t.index = std::stoi(std::string(ref));
  }
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

namespace {

// The (parameter name, byte offset in it) a --param names.
Expected<std::pair<std::string, uint64_t>> ResolveParamRef(const Function& entry,
                                                           const ParamArg& a) {
  if (a.param.empty()) {
    const std::vector<uint64_t> offsets = ParamOffsets(entry);
    for (size_t i = 0; i < entry.params.size(); ++i) {
      const int64_t start = static_cast<int64_t>(offsets[i]);
      if (a.offset >= start && a.offset < start + entry.params[i].SizeBytes()) {
        return std::make_pair(entry.params[i].name, static_cast<uint64_t>(a.offset - start));
      }
    }
    return BadOption("--param " + a.spec + ": byte " + std::to_string(a.offset) +
                     " of the parameter space is in no parameter of the entry");
  }
  const Param* p = entry.FindParam(a.param);
  if (p == nullptr) {
    std::string names;
    for (const Param& q : entry.params) names += (names.empty() ? "" : ", ") + q.name;
    return BadOption("--param " + a.spec + ": the entry has no parameter " + a.param +
                     " (it has " + names + ")");
  }
  if (a.offset >= p->SizeBytes()) {
    return BadOption("--param " + a.spec + ": " + a.param + " has " +
                     std::to_string(p->SizeBytes()) + " bytes");
  }
  return std::make_pair(a.param, static_cast<uint64_t>(a.offset));
}

}  // namespace

void ExpandParamNames(const Function& entry, ImportOptions* options) {
  auto expand = [&](std::string* name) {
    if (name->empty() || entry.FindParam(*name) != nullptr) return;
    for (const Param& p : entry.params) {
      if (p.name.size() > name->size() &&
          p.name.compare(p.name.size() - name->size(), name->size(), *name) == 0 &&
          p.name[p.name.size() - name->size() - 1] == '_') {
        *name = p.name;
        return;
      }
    }
  };
  for (ParamArg& a : options->params) expand(&a.param);
  for (TensorMapArg& t : options->tensor_maps) expand(&t.param);
}

Expected<std::map<std::pair<std::string, uint64_t>, uint64_t>> ResolveParamOptions(
    const Module& module, const Function& entry, const ImportOptions& options) {
  (void)module;
  std::map<std::pair<std::string, uint64_t>, uint64_t> fields;
  for (const auto& [index, value] : options.args) {
    if (index < 0 || index >= static_cast<int>(entry.params.size())) {
      return BadOption("--arg " + std::to_string(index) + ": the entry has " +
                       std::to_string(entry.params.size()) + " parameters");
    }
    const Param& p = entry.params[index];
    if (p.array_size > 0) {
      return BadOption("--arg " + std::to_string(index) + ": parameter " + p.name + " is a " +
                       std::to_string(p.SizeBytes()) +
                       "-byte by-value struct, not a scalar; give its fields with --param " +
                       p.name + "+OFFSET=VALUE");
    }
  }
  for (const ParamArg& a : options.params) {
    auto key = ResolveParamRef(entry, a);
    if (!key.ok()) return key.status();
    if (!fields.emplace(*key, a.value).second) {
      return BadOption("--param " + a.spec + ": " + key->first + "+" +
                       std::to_string(key->second) + " is given twice");
    }
  }
  for (const TensorMapArg& t : options.tensor_maps) {
    if (t.index >= 0) continue;
    const Param* p = entry.FindParam(t.param);
    if (p == nullptr) return BadOption("--tensormap: the entry has no parameter " + t.param);
    // A CUtensorMap is 128 bytes, 64-byte aligned (CUDA driver API, cuTensorMapEncodeTiled).
    if (t.offset % 64 != 0 || t.offset + 128 > p->SizeBytes()) {
      return BadOption("--tensormap " + t.param + "+" + std::to_string(t.offset) +
                       ": a 128-byte, 64-byte aligned CUtensorMap does not fit there (" + t.param +
                       " has " + std::to_string(p->SizeBytes()) + " bytes)");
    }
  }
  return fields;
}

Status CheckParamsRead(const Function& entry, const ImportOptions& options,
                       const std::set<std::pair<std::string, uint64_t>>& reads) {
  auto read_list = [&](const std::string& name) {
    std::string out;
    int shown = 0;
    for (const auto& [n, off] : reads) {
      if (n != name) continue;
      if (shown++ == 24) {
        out += ", ...";
        break;
      }
      out += (out.empty() ? "" : ", ") + std::to_string(off);
    }
    return out.empty() ? std::string("none") : out;
  };
  for (const auto& [index, value] : options.args) {
    if (options.launch_args.count(index) > 0) continue;
    const std::string& name = entry.params[index].name;
    if (reads.count({name, 0}) == 0) {
      return BadOption("--arg " + std::to_string(index) + ": the kernel never reads parameter " +
                       name + " in this launch, so the option would change nothing");
    }
  }
  for (const ParamArg& a : options.params) {
    auto key = ResolveParamRef(entry, a);
    if (!key.ok()) return key.status();
    if (reads.count(*key) == 0) {
      return BadOption("--param " + a.spec + ": no load of the kernel reads " + key->first +
                       " at byte " + std::to_string(key->second) +
                       " in this launch (it reads bytes " + read_list(key->first) + ")");
    }
  }
  return Status::Ok();
}

}  // namespace parity::ptx
