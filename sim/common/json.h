// The one way Parity writes a JSON document: every command's --format json, the SARIF log, and
// anything else machine-readable goes through DumpJson.
//
// Names and messages come from users' files (schedule names, paths, parameters), which need not be
// UTF-8; nlohmann::json::dump throws on invalid UTF-8 by default, which would turn a bad input into
// a crash. DumpJson replaces invalid bytes with U+FFFD instead, so a report is always written.
#ifndef PARITY_SIM_COMMON_JSON_H_
#define PARITY_SIM_COMMON_JSON_H_

#include <nlohmann/json.hpp>
#include <string>

namespace parity {

// indent < 0: one line; otherwise pretty-printed with that many spaces.
inline std::string DumpJson(const nlohmann::json& j, int indent = 2) {
  return j.dump(indent, ' ', /*ensure_ascii=*/false, nlohmann::json::error_handler_t::replace);
}

}  // namespace parity

#endif  // PARITY_SIM_COMMON_JSON_H_
