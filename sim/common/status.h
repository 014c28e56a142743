// Error channel 1 of docs/architecture.md: bad input, unsupported configuration, CUDA failure.
//
// A Status carries a code (which rule was broken), a message, and where the input came from
// (file, line, column) so that the command line can print `file:line:col: rule: message` and exit
// 2. Expected<T> is a value or a Status (std::expected is C++23; we build as C++20).
#ifndef PARITY_SIM_COMMON_STATUS_H_
#define PARITY_SIM_COMMON_STATUS_H_

#include <optional>
#include <string>
#include <utility>
#include <variant>

#include "sim/common/check.h"

namespace parity {

// Where a piece of input came from. line/column are 1-based; 0 means unknown.
struct SourceLocation {
  std::string file;
  int line = 0;
  int column = 0;

  std::string ToString() const;
};

class [[nodiscard]] Status {
 public:
  Status() = default;  // OK.
  // `rule` is a short stable name of the broken rule, e.g. "tensor-map.box-dim" or "parse".
  Status(std::string rule, std::string message, SourceLocation where = {})
      : ok_(false), rule_(std::move(rule)), message_(std::move(message)), where_(std::move(where)) {}

  static Status Ok() { return Status(); }

  bool ok() const { return ok_; }
  const std::string& rule() const { return rule_; }
  const std::string& message() const { return message_; }
  const SourceLocation& where() const { return where_; }

  // Returns a copy with the location filled in where this one has none.
  Status At(SourceLocation where) const;
  // "file:line:col: error[rule]: message" (the location part only where known).
  std::string ToString() const;

 private:
  bool ok_ = true;
  std::string rule_;
  std::string message_;
  SourceLocation where_;
};

template <typename T>
class [[nodiscard]] Expected {
 public:
  Expected(T value) : v_(std::move(value)) {}  // NOLINT: implicit by design.
  Expected(Status status) : v_(std::move(status)) {  // NOLINT: implicit by design.
    PARITY_CHECK(!std::get<Status>(v_).ok(), "Expected constructed from an OK status");
  }

  bool ok() const { return std::holds_alternative<T>(v_); }
  explicit operator bool() const { return ok(); }

  const T& value() const& {
    PARITY_CHECK(ok(), "value() of an error: " + std::get<Status>(v_).ToString());
    return std::get<T>(v_);
  }
  T& value() & {
    PARITY_CHECK(ok(), "value() of an error: " + std::get<Status>(v_).ToString());
    return std::get<T>(v_);
  }
  T&& value() && {
    PARITY_CHECK(ok(), "value() of an error: " + std::get<Status>(v_).ToString());
    return std::get<T>(std::move(v_));
  }
  const T& operator*() const& { return value(); }
  T& operator*() & { return value(); }
  const T* operator->() const { return &value(); }
  T* operator->() { return &value(); }

  const Status& status() const {
    static const Status kOk;
    return ok() ? kOk : std::get<Status>(v_);
  }

 private:
  std::variant<T, Status> v_;
};

}  // namespace parity

// Returns the status from the enclosing function if it is not OK.
#define PARITY_RETURN_IF_ERROR(expr)          \
  do {                                        \
    ::parity::Status parity_status_ = (expr); \
    if (!parity_status_.ok()) return parity_status_; \
  } while (0)

#endif  // PARITY_SIM_COMMON_STATUS_H_
