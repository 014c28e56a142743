// Text helpers of `parity import` (sim/ptx/importer.cc): names that the schedule language
// accepts, and the loop expressions over `k` that re-roll repeated operations.
#ifndef PARITY_SIM_PTX_IMPORT_TEXT_H_
#define PARITY_SIM_PTX_IMPORT_TEXT_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace parity::ptx {

// Whether `s` is a word of the .pipe language that a declaration name must not be.
bool IsKeyword(const std::string& s);

// `s` as a .pipe identifier: other characters become `_`, a leading digit gets `v_`, a keyword
// a trailing `_`.
std::string Identifier(std::string s);

// The loop expression over `k` (k = off .. off + n) reproducing the longest prefix of `v`, and
// the length of that prefix: a constant, an arithmetic progression, `(k + a) % s`, or a parity
// `((k + a) / s) & 1` (possibly `^ 1`).
std::pair<std::string, size_t> FitLoopExpression(const std::vector<int64_t>& v, int64_t off = 0);

}  // namespace parity::ptx

#endif  // PARITY_SIM_PTX_IMPORT_TEXT_H_
