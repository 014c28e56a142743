#include "sim/ir/hash.h"

#include <cstdio>

#include "sim/ir/printer.h"

namespace parity::ir {

uint64_t Fnv1a64(std::string_view bytes) {
  uint64_t h = 0xcbf29ce484222325ull;  // FNV offset basis
  for (unsigned char c : bytes) {
    h ^= c;
    h *= 0x100000001b3ull;  // FNV prime
  }
  return h;
}

uint64_t ContentHash(const Program& program) {
  // The canonical text is the canonical structure written out; only the identity fields that
  // do not change behaviour are blanked.
  const std::string text = Print(program);
  // Drop the first line (`schedule NAME`): the name is not content.
  const size_t nl = text.find('\n');
  return Fnv1a64(nl == std::string::npos ? std::string_view() : std::string_view(text).substr(nl + 1));
}

std::string ContentHashHex(const Program& program) {
  char buf[17];
  std::snprintf(buf, sizeof(buf), "%016llx", static_cast<unsigned long long>(ContentHash(program)));
  return buf;
}

}  // namespace parity::ir
