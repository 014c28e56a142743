#include "sim/common/check.h"

#include <cstdio>
#include <cstdlib>

namespace parity {
namespace {
CheckFailureHandler g_handler = nullptr;
}  // namespace

void SetCheckFailureHandler(CheckFailureHandler handler) { g_handler = handler; }

namespace internal {

void CheckFailed(const char* file, int line, const char* cond, std::string_view msg) {
  std::fprintf(stderr, "parity: internal error at %s:%d: check '%s' failed: %.*s\n", file, line,
               cond, static_cast<int>(msg.size()), msg.data());
  std::fflush(stderr);
  if (g_handler != nullptr) g_handler();
  std::abort();
}

}  // namespace internal
}  // namespace parity
