// Every JSON document Parity writes goes through JsonText: names in a schedule or a trace header
// are bytes, not necessarily UTF-8, and nlohmann::json throws (type_error.316) on invalid UTF-8
// when it serialises. Here invalid bytes become U+FFFD instead, so no input can make a writer
// fail, and every writer (check/explore reports, trace export, tma-layout, counts, and formats
// added later) behaves the same.
#ifndef PARITY_SIM_COMMON_JSON_TEXT_H_
#define PARITY_SIM_COMMON_JSON_TEXT_H_

#include <nlohmann/json.hpp>
#include <string>

namespace parity {

// `j` serialised; indent as nlohmann::json::dump (-1: compact).
inline std::string JsonText(const nlohmann::json& j, int indent = -1) {
  return j.dump(indent, ' ', /*ensure_ascii=*/false, nlohmann::json::error_handler_t::replace);
}

}  // namespace parity

#endif  // PARITY_SIM_COMMON_JSON_TEXT_H_
