// Barriers recovered from a CTA's mbarrier.init events (thread_exec.h, RecoverBarriers).
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "sim/ptx/thread_exec.h"

namespace parity::ptx {

Expected<std::vector<BarrierArray>> RecoverBarriers(const Module& module, const Function& entry,
                                                    const std::vector<ThreadClass>& classes) {
  struct Init {
    std::string symbol;
    uint64_t offset;
    uint64_t count;
    int line;
  };
  std::map<std::pair<std::string, uint64_t>, Init> inits;
  for (const ThreadClass& c : classes) {
    for (const ProtocolEvent& e : c.events) {
      const Instruction& inst = entry.instructions[e.instruction];
      if (inst.base != "mbarrier" || !inst.HasModifier("init") || e.operands.size() < 2) continue;
      const Value& addr = e.operands[0];
      const Value& count = e.operands[1];
      if (addr.kind != Value::Kind::kAddress || count.kind != Value::Kind::kInt) {
        return Status("import.unsupported-barrier",
                      "mbarrier.init on an address or with a count the importer does not know "
                      "(address " +
                          addr.ToString() + ", count " + count.ToString() + ")",
                      {module.path, inst.line, inst.column});
      }
      inits.emplace(std::make_pair(addr.symbol, addr.bits),
                    Init{addr.symbol, addr.bits, count.bits, inst.line});
    }
  }
  // Rings: in one thread's inits (program order), the barrier 8 bytes after another with the
  // same count, initialised a fixed number of inits later, is its next element; a chain keeps
  // that distance (`for s: init full[s]; init empty[s]` alternates two rings, distance 2).
  // Unrolled init loops leave no other trace of the arrays (nvcc attributes the unrolled inits
  // to one source line).
  using Key = std::pair<std::string, uint64_t>;
  std::map<Key, Key> next;
  std::set<Key> has_prev;
  for (const ThreadClass& c : classes) {
    std::vector<Key> seq;
    for (const ProtocolEvent& e : c.events) {
      const Instruction& inst = entry.instructions[e.instruction];
      if (inst.base != "mbarrier" || !inst.HasModifier("init") || e.operands.size() < 2) continue;
      seq.emplace_back(e.operands[0].symbol, e.operands[0].bits);
    }
    std::map<Key, size_t> distance;  // the distance of the link into a key
    for (size_t i = 0; i < seq.size(); ++i) {
      if (next.count(seq[i]) > 0) continue;
      for (size_t j = i + 1; j < seq.size(); ++j) {
        const Key want{seq[i].first, seq[i].second + 8};
        if (seq[j] != want) continue;
        if (inits.at(seq[j]).count != inits.at(seq[i]).count || has_prev.count(seq[j]) > 0) break;
        auto d = distance.find(seq[i]);
        if (d != distance.end() && d->second != j - i) break;
        next[seq[i]] = seq[j];
        has_prev.insert(seq[j]);
        distance[seq[j]] = j - i;
        break;
      }
    }
  }
  std::vector<BarrierArray> out;
  for (const auto& [key, head] : inits) {
    if (has_prev.count(key) > 0) continue;
    BarrierArray a;
    a.symbol = head.symbol;
    a.offset = head.offset;
    a.count = head.count;
    a.init_lines = {head.line};
    for (auto it = next.find(key); it != next.end(); it = next.find(it->second)) {
      ++a.size;
      a.init_lines.push_back(inits.at(it->second).line);
    }
    // A demoted __shared__ variable demangles to `kernel(...)::name`.
    const std::string demangled = Demangle(head.symbol);
    const size_t colon = demangled.rfind("::");
    a.name = colon != std::string::npos && demangled.find(')', colon) == std::string::npos
                 ? demangled.substr(colon + 2)
                 : head.symbol;
    if (head.offset != 0) a.name += "_" + std::to_string(head.offset);
    out.push_back(std::move(a));
  }
  return out;
}

}  // namespace parity::ptx
