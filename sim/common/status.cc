#include "sim/common/status.h"

namespace parity {

std::string SourceLocation::ToString() const {
  std::string out = file;
  if (line > 0) {
    out += ":" + std::to_string(line);
    if (column > 0) out += ":" + std::to_string(column);
  }
  return out;
}

Status Status::At(SourceLocation where) const {
  Status s = *this;
  if (s.where_.file.empty()) s.where_.file = std::move(where.file);
  if (s.where_.line == 0) {
    s.where_.line = where.line;
    s.where_.column = where.column;
  }
  return s;
}

std::string Status::ToString() const {
  if (ok_) return "OK";
  std::string loc = where_.ToString();
  std::string out;
  if (!loc.empty()) out = loc + ": ";
  out += "error[" + rule_ + "]: " + message_;
  return out;
}

}  // namespace parity
