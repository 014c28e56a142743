#include "sim/ir/qualifiers.h"

namespace parity::ir {
namespace {

bool TakesQualifiers(std::string_view base) {
  static constexpr std::string_view kOps[] = {
      "arrive", "arrive.expect_tx", "arrive.nocomplete", "arrive_drop", "wait", "test_wait",
      "fence.acq_rel", "cluster.arrive", "cluster.wait"};
  for (std::string_view o : kOps) {
    if (o == base) return true;
  }
  return false;
}

bool IsQualifier(std::string_view q) {
  return q == "release" || q == "relaxed" || q == "acquire" || q == "cta" || q == "cluster";
}

}  // namespace

std::string SplitQualifiers(std::string_view word, std::string* base, Qualifiers* q) {
  *base = std::string(word);
  std::string rest(word);
  std::vector<std::string> stripped;
  while (true) {
    const size_t dot = rest.rfind('.');
    if (dot == std::string::npos || !IsQualifier(std::string_view(rest).substr(dot + 1))) break;
    stripped.insert(stripped.begin(), rest.substr(dot + 1));
    rest = rest.substr(0, dot);
    if (TakesQualifiers(rest)) {
      *base = rest;
      q->words = stripped;
    }
  }
  for (const std::string& w : q->words) {
    const bool is_sem = w == "release" || w == "relaxed" || w == "acquire";
    if (is_sem ? q->sem.has_value() : q->scope.has_value()) {
      return "`" + std::string(word) + "` gives two " + (is_sem ? "semantics" : "scopes") +
             " (at most one of .release/.acquire/.relaxed and one of .cta/.cluster)";
    }
    if (is_sem) {
      q->sem = w == "relaxed" ? MemSem::kRelaxed : MemSem::kStrong;
      q->sem_acquire = w == "acquire";
      q->sem_release = w == "release";
    } else {
      q->scope = w == "cluster" ? MemScope::kCluster : MemScope::kCta;
    }
  }
  return "";
}

std::string CheckQualifiers(std::string_view base, const Qualifiers& q, std::string_view sem_word,
                            bool relaxed_ok, bool scoped) {
  auto bad = [&](const std::string& what) {
    std::string allowed;
    if (!sem_word.empty()) allowed += "." + std::string(sem_word);
    if (relaxed_ok) allowed += std::string(allowed.empty() ? "" : ", ") + ".relaxed";
    if (scoped) allowed += std::string(allowed.empty() ? "" : ", ") + ".cta, .cluster";
    return "`" + std::string(base) + "` does not take " + what + " (it takes " +
           (allowed.empty() ? "no qualifier" : allowed) + ")";
  };
  if (q.sem_acquire && sem_word != "acquire") return bad("`.acquire`");
  if (q.sem_release && sem_word != "release") return bad("`.release`");
  if (q.sem == MemSem::kRelaxed && !relaxed_ok) return bad("`.relaxed`");
  if (q.scope && !scoped) return bad("a scope");
  return "";
}

}  // namespace parity::ir
