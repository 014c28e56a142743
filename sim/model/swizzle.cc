#include "sim/model/swizzle.h"

namespace parity::model {

std::string_view SwizzleName(TmaSwizzle s) {
  switch (s) {
    case TmaSwizzle::kNone:
      return "none";
    case TmaSwizzle::k32B:
      return "32B";
    case TmaSwizzle::k64B:
      return "64B";
    case TmaSwizzle::k128B:
      return "128B";
  }
  return "?";
}

std::optional<TmaSwizzle> ParseSwizzle(std::string_view name) {
  for (TmaSwizzle s : {TmaSwizzle::kNone, TmaSwizzle::k32B, TmaSwizzle::k64B, TmaSwizzle::k128B}) {
    if (name == SwizzleName(s)) return s;
  }
  return std::nullopt;
}

}  // namespace parity::model
