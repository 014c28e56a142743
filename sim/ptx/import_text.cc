#include "sim/ptx/import_text.h"

#include <algorithm>
#include <cctype>
#include <functional>
#include <numeric>
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
  // Candidates are tried by value; a text is made only for a candidate that fits further than
  // the best so far (the texts dominate the cost: thousands of candidates per call).
  std::function<std::string()> best_text;
  size_t best_len = 0;
  auto consider = [&](const auto& text, const auto& f) {
    size_t n = 0;
    while (n < v.size() && f(static_cast<int64_t>(n) + off) == v[n]) ++n;
    if (n > best_len) {
      best_len = n;
      best_text = text;
    }
  };
  const int64_t first = v[0];
  consider([first] { return std::to_string(first); }, [&](int64_t) { return first; });
  if (v.size() > 1) {
    const int64_t d = v[1] - v[0];
    const int64_t v0 = v[0] - d * off;  // the value at k = 0
    consider(
        [d, v0] {
          std::string e = d == 1 ? "k" : std::to_string(d) + " * k";
          if (d < 0) e = "0 - " + std::to_string(-d) + " * k";
          if (v0 != 0) e = std::to_string(v0) + " + " + e;
          return e;
        },
        [&](int64_t k) { return v0 + d * k; });
  }
  auto k_plus = [](int64_t a) {
    return a == 0 ? std::string("k") : "(k + " + std::to_string(a) + ")";
  };
  // `base + scale * ((k + a) % s)`: a ring index (scale 1, base 0), or a slot of a ring whose
  // stages span `scale` slots from `base` (CUTLASS's multicast halves: `2 * ((k + 1) % 7)`).
  int64_t base = v[0];
  for (int64_t x : v) base = std::min(base, x);
  int64_t scale = 0;
  for (int64_t x : v) scale = std::gcd(scale, x - base);
  if (scale == 0) scale = 1;
  for (int64_t s = 2; s <= 64 && best_len < v.size(); ++s) {
    for (int64_t a = 0; a < s; ++a) {
      consider(
          [=] {
            std::string e = k_plus(a) + " % " + std::to_string(s);
            if (scale != 1) e = std::to_string(scale) + " * (" + e + ")";
            if (base != 0) e = std::to_string(base) + " + " + (scale != 1 ? e : "(" + e + ")");
            return e;
          },
          [&](int64_t j) { return base + scale * ((j + a) % s); });
    }
  }
  for (int64_t s = 1; s <= 64 && best_len < v.size(); ++s) {
    for (int64_t a = 0; a < 2 * s; ++a) {
      for (int x = 0; x < 2; ++x) {
        consider(
            [=] {
              const std::string k = k_plus(a);
              std::string e = s == 1 ? k + " & 1" : "(" + k + " / " + std::to_string(s) + ") & 1";
              if (x) e = "(" + e + ") ^ 1";
              return e;
            },
            [&](int64_t j) { return (((j + a) / s) & 1) ^ x; });
      }
    }
  }
  return {best_text(), best_len};
}

}  // namespace parity::ptx
