#ifndef PARITY_TOOLS_CLI_VERSION_H_
#define PARITY_TOOLS_CLI_VERSION_H_

namespace parity::cli {
inline constexpr const char kParityVersion[] = "0.1.0";
}  // namespace parity::cli

#endif  // PARITY_TOOLS_CLI_VERSION_H_
