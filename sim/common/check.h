// Error channel 3 of docs/architecture.md: internal bugs. A failed check prints where and why to
// stderr and aborts; it is never used for bad input (that is a Status).
#ifndef PARITY_SIM_COMMON_CHECK_H_
#define PARITY_SIM_COMMON_CHECK_H_

#include <string_view>

namespace parity {
// Called (after the message is printed) instead of abort(), e.g. by the command line to exit 3.
// The handler must not return.
using CheckFailureHandler = void (*)();
void SetCheckFailureHandler(CheckFailureHandler handler);
}  // namespace parity

namespace parity::internal {
[[noreturn]] void CheckFailed(const char* file, int line, const char* cond, std::string_view msg);
}  // namespace parity::internal

#define PARITY_CHECK(cond, msg)                                               \
  do {                                                                        \
    if (!(cond)) ::parity::internal::CheckFailed(__FILE__, __LINE__, #cond, (msg)); \
  } while (0)

#endif  // PARITY_SIM_COMMON_CHECK_H_
