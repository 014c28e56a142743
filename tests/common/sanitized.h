// What the tests do differently when built with AddressSanitizer (gcc's --config=asan, or clang
// in tools/santest, which defines __SANITIZE_ADDRESS__ for them): the sanitized runs look for
// memory errors and undefined behaviour, the unsanitized run of the same test checks the logic.
#ifndef PARITY_TESTS_COMMON_SANITIZED_H_
#define PARITY_TESTS_COMMON_SANITIZED_H_

#include <gtest/gtest.h>

namespace parity::testing {

#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool kSanitized = true;
#else
inline constexpr bool kSanitized = false;
#endif

}  // namespace parity::testing

// Skips a test under the sanitizers: a check of the search's logic over large searches (brute-
// force cross-checks, memory per state, prediction against stepping), whose code the smaller
// tests run too; the unsanitized run does it whole.
#define PARITY_SKIP_LARGE_SEARCH_IF_SANITIZED()                                          \
  do {                                                                                  \
    if (::parity::testing::kSanitized) {                                                \
      GTEST_SKIP() << "a check of the search over large searches: the unsanitized run has it"; \
    }                                                                                   \
  } while (false)

#endif  // PARITY_TESTS_COMMON_SANITIZED_H_
