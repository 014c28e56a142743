#include "sim/common/read_file.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

namespace parity {

Expected<std::string> ReadInputFile(const std::string& path, const std::string& what,
                                    const std::string& rule, uint64_t max_bytes) {
  const SourceLocation at{path, 0, 0};
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    return Status(rule, "cannot read the " + what + " file: " + std::strerror(errno), at);
  }
  if (S_ISDIR(st.st_mode)) {
    return Status(rule, "is a directory, not a " + what + " file", at);
  }
  if (!S_ISREG(st.st_mode) && !S_ISFIFO(st.st_mode)) {
    return Status(rule, "is not a regular file (a device or socket), not a " + what + " file", at);
  }
  const std::string limit = "the " + what + " file is larger than " +
                            std::to_string(max_bytes >> 20) + " MiB, the most Parity reads";
  if (S_ISREG(st.st_mode) && static_cast<uint64_t>(st.st_size) > max_bytes) {
    return Status(rule, limit, at);
  }
  std::unique_ptr<FILE, int (*)(FILE*)> f(std::fopen(path.c_str(), "rb"), &std::fclose);
  if (!f) return Status(rule, "cannot open the " + what + " file: " + std::strerror(errno), at);
  std::string out;
  char buf[1 << 16];
  while (true) {
    const size_t n = std::fread(buf, 1, sizeof buf, f.get());
    if (n > 0) {
      if (out.size() + n > max_bytes) return Status(rule, limit, at);
      out.append(buf, n);
    }
    if (n < sizeof buf) break;
  }
  if (std::ferror(f.get())) {
    return Status(rule, "cannot read the " + what + " file: " + std::strerror(errno), at);
  }
  return out;
}

}  // namespace parity
