#include "sim/ptx/import_text.h"

#include <cctype>
#include <set>

namespace parity::ptx {

// The .pipe words a declaration name must not be.
bool IsKeyword(const std::string& s) {
  static const std::set<std::string> kWords = {
      "bar",       "count",     "threads",    "bytes",       "parity",  "coords",   "multicast",
      "when",      "role",      "param",      "buffer",      "barrier", "for",      "in",
      "if",        "else",      "let",        "step",        "cluster", "clusters", "schedule",
      "agent",     "cta_rank",  "tensormap",  "dims",        "box",     "swizzle",  "dtype",
      "use",       "write",     "init",       "wait",        "arrive",  "mask",     "require",
      "cluster_m", "cluster_n", "cluster_id", "cluster_size"};
  return kWords.count(s) > 0;
}

std::string Identifier(std::string s) {
  for (char& c : s) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') c = '_';
  }
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) s = "v_" + s;
  if (IsKeyword(s)) s += "_";
  return s;
}

// The loop expression over `k` (off .. off + n) reproducing the longest prefix of `v`.
std::pair<std::string, size_t> FitLoopExpression(const std::vector<int64_t>& v, int64_t off) {
  std::string best;
  size_t best_len = 0;
  auto consider = [&](const std::string& e, const auto& f) {
    size_t n = 0;
    while (n < v.size() && f(static_cast<int64_t>(n) + off) == v[n]) ++n;
    if (n > best_len) {
      best_len = n;
      best = e;
    }
  };
  consider(std::to_string(v[0]), [&](int64_t) { return v[0]; });
  if (v.size() > 1) {
    const int64_t d = v[1] - v[0];
    const int64_t v0 = v[0] - d * off;  // the value at k = 0
    std::string e = d == 1 ? "k" : std::to_string(d) + " * k";
    if (d < 0) e = "0 - " + std::to_string(-d) + " * k";
    if (v0 != 0) e = std::to_string(v0) + " + " + e;
    consider(e, [&](int64_t k) { return v0 + d * k; });
  }
  for (int64_t s = 2; s <= 64 && best_len < v.size(); ++s) {
    for (int64_t a = 0; a < s; ++a) {
      const std::string k = a == 0 ? "k" : "(k + " + std::to_string(a) + ")";
      consider(k + " % " + std::to_string(s), [&](int64_t j) { return (j + a) % s; });
    }
  }
  for (int64_t s = 1; s <= 64 && best_len < v.size(); ++s) {
    for (int64_t a = 0; a < 2 * s; ++a) {
      for (int x = 0; x < 2; ++x) {
        std::string k = a == 0 ? "k" : "(k + " + std::to_string(a) + ")";
        std::string e = s == 1 ? k + " & 1" : "(" + k + " / " + std::to_string(s) + ") & 1";
        if (x) e = "(" + e + ") ^ 1";
        consider(e, [&](int64_t j) { return (((j + a) / s) & 1) ^ x; });
      }
    }
  }
  return {best, best_len};
}

}  // namespace parity::ptx
