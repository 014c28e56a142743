// PTX memory-ordering qualifiers written as dotted suffixes of a `.pipe` op word
// (`arrive.relaxed.cluster`, `wait.acquire.cluster`, `fence.acq_rel.cta`,
// `cluster.arrive.release`): the parser's helper (sim/ir/parser.cc), kept apart so that the op
// grammar stays in one place. docs/language.md §8.2, §8.4, §8.7.
#ifndef PARITY_SIM_IR_QUALIFIERS_H_
#define PARITY_SIM_IR_QUALIFIERS_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/ir/ir.h"

namespace parity::ir {

struct Qualifiers {
  std::vector<std::string> words;  // as written, in order
  std::optional<MemSem> sem;
  bool sem_acquire = false;  // `.acquire` (waits), as opposed to `.release` (arrives)
  bool sem_release = false;
  std::optional<MemScope> scope;
};

// Splits `word` into the op it names and its qualifiers: the suffixes (release, relaxed,
// acquire, cta, cluster) come off the longest prefix that names an op taking them
// (`fence.acq_rel.cluster` is `fence.acq_rel` + cluster); a word without any keeps `base` =
// `word`. Returns "" or why the word is bad (two semantics or two scopes).
std::string SplitQualifiers(std::string_view word, std::string* base, Qualifiers* q);

// Checks the qualifiers `base` allows: `sem_word` is the strong semantics it takes ("release",
// "acquire" or "" for none), `relaxed_ok` whether `.relaxed` is allowed, `scoped` whether a
// scope is. Returns "" or why not.
std::string CheckQualifiers(std::string_view base, const Qualifiers& q, std::string_view sem_word,
                            bool relaxed_ok, bool scoped);

}  // namespace parity::ir

#endif  // PARITY_SIM_IR_QUALIFIERS_H_
