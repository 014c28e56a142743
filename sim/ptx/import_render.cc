// `parity import`: the `.pipe` text, with repeated operation sequences re-rolled into loops.

#include <algorithm>
#include <cctype>
#include <climits>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <set>
#include <sstream>
#include <tuple>
#include <utility>

#include "sim/ptx/import_text.h"
#include "sim/ptx/importer_internal.h"
#include "sim/ptx/thread_exec.h"

namespace parity::ptx::importer_internal {

// The op's text with its integers replaced by `exprs` (or the values themselves).
std::string Importer::Render(const OpRec& op, const std::vector<std::string>& exprs) {
  std::string out;
  size_t k = 0;
  for (size_t i = 0; i < op.fmt.size(); ++i) {
    if (op.fmt.compare(i, 2, "{}") == 0) {
      std::string e = k < exprs.size() ? exprs[k] : std::to_string(op.ints[k]);
      const std::pair<const std::vector<int64_t>*, const char*> terms[] = {
          {&op.agent_delta, "agent"},
          {&op.cluster_delta, "cluster_id"},
          {&op.rank_delta, "cta_rank"},
      };
      bool first_term = true;
      for (const auto& [deltas, name] : terms) {
        const int64_t d = deltas->empty() ? 0 : (*deltas)[k];
        if (d == 0) continue;
        if (first_term) {
          const bool plain = std::all_of(e.begin(), e.end(), [](char c) {
            return std::isdigit(static_cast<unsigned char>(c)) || c == 'k';
          });
          if (e == "0") {
            e.clear();
          } else if (!plain) {
            e = "(" + e + ")";
          }
          first_term = false;
        }
        const std::string term =
            (d == 1 || d == -1 ? "" : std::to_string(d < 0 ? -d : d) + " * ") + name;
        e = e.empty() ? (d < 0 ? "0 - " + term : term) : e + (d < 0 ? " - " : " + ") + term;
      }
      out += e;
      ++k;
      ++i;
    } else {
      out += op.fmt[i];
    }
  }
  return out;
}

std::string Importer::Comment(const std::set<int>& lines, const std::string& source) const {
  std::string c = "# " + Basename(m_.path) + ":";
  int shown = 0;
  for (int l : lines) {
    if (shown == 8) {
      c += ",...";
      break;
    }
    c += (shown++ ? "," : "") + std::to_string(l);
  }
  if (!source.empty()) c += " (" + source + ")";
  return c;
}

size_t Importer::Length(const std::vector<std::vector<std::string>>& exprs) {
  size_t n = 0;
  for (const auto& v : exprs) {
    for (const std::string& e : v) n += e.size();
  }
  return n;
}

// The loop's expressions with k running from `off`; nullopt unless every value fits.
std::optional<std::vector<std::vector<std::string>>> Importer::Refit(
    const std::vector<OpRec>& ops, size_t i, const Loop& loop, int64_t off) {
  std::vector<std::vector<std::string>> out;
  for (size_t q = 0; q < loop.period; ++q) {
    std::vector<std::string> exprs;
    for (size_t s = 0; s < ops[i + q].ints.size(); ++s) {
      std::vector<int64_t> vals;
      for (size_t r = 0; r < loop.reps; ++r) vals.push_back(ops[i + r * loop.period + q].ints[s]);
      auto [e, n] = Fit(vals, off);
      if (n < vals.size()) return std::nullopt;
      exprs.push_back(e);
    }
    out.push_back(exprs);
  }
  return out;
}

std::optional<Importer::Loop> Importer::FindLoop(const std::vector<OpRec>& ops, size_t i) const {
  std::optional<Loop> best;
  for (size_t p = 1; p <= 16 && i + 2 * p <= ops.size(); ++p) {
    size_t reps = 1;
    while (i + (reps + 1) * p <= ops.size()) {
      bool same = true;
      for (size_t q = 0; q < p && same; ++q) {
        const OpRec& a = ops[i + q];
        const OpRec& b = ops[i + reps * p + q];
        same = a.fmt == b.fmt && a.arrive_count == b.arrive_count &&
               a.ints.size() == b.ints.size() && a.agent_delta == b.agent_delta &&
               a.cluster_delta == b.cluster_delta && a.rank_delta == b.rank_delta;
      }
      if (!same) break;
      ++reps;
    }
    if (reps < 2) continue;
    Loop loop{p, reps, {}};
    bool varies = false;
    for (size_t q = 0; q < p; ++q) {
      std::vector<std::string> exprs;
      for (size_t s = 0; s < ops[i + q].ints.size(); ++s) {
        std::vector<int64_t> vals;
        for (size_t r = 0; r < reps; ++r) vals.push_back(ops[i + r * p + q].ints[s]);
        auto [e, n] = Fit(vals);
        if (n < vals.size()) loop.reps = std::min(loop.reps, n);
        if (vals[0] != vals[1]) varies = true;
        exprs.push_back(e);
      }
      loop.exprs.push_back(exprs);
    }
    if (loop.reps < 2 || (loop.reps < 3 && !varies)) continue;
    if (loop.reps < reps) {
      // Refit over the shorter range (a shorter prefix can only fit the same expressions).
      loop.exprs.clear();
      for (size_t q = 0; q < p; ++q) {
        std::vector<std::string> exprs;
        for (size_t s = 0; s < ops[i + q].ints.size(); ++s) {
          std::vector<int64_t> vals;
          for (size_t r = 0; r < loop.reps; ++r) vals.push_back(ops[i + r * p + q].ints[s]);
          exprs.push_back(Fit(vals).first);
        }
        loop.exprs.push_back(exprs);
      }
    }
    if (!best || loop.period * loop.reps > best->period * best->reps) best = loop;
  }
  return best;
}

void Importer::EmitBody(std::ostream& out, const std::vector<OpRec>& ops) {
  auto line = [&](const std::string& indent, const std::string& text, const std::string& c) {
    std::string l = indent + text;
    if (l.size() < 48) l.resize(48, ' ');
    out << l << "  " << c << "\n";
  };
  size_t straight = 0;
  bool looped = false;
  for (size_t i = 0; i < ops.size();) {
    auto loop = FindLoop(ops, i);
    if (!loop) {
      line("  ", Render(ops[i], {}), Comment(ops[i].ptx_lines, ops[i].source));
      ++straight;
      ++i;
      continue;
    }
    looped = true;
    // A trip count that is a kernel argument, possibly after `lo` peeled iterations (a
    // producer's first STAGES iterations skip the empty wait): k runs lo .. ARG.
    std::string hi = std::to_string(loop->reps);
    int64_t lo = 0;
    for (const auto& [index, value] : o_.args) {
      const int64_t peeled = static_cast<int64_t>(value) - static_cast<int64_t>(loop->reps);
      if (peeled < 0 || peeled > 64) continue;
      if (peeled > 0) {
        // Only where k from `peeled` reads more simply than k from 0 (the kernel's own
        // index); otherwise the peeled loop is a different one that happens to fit.
        auto shifted = Refit(ops, i, *loop, peeled);
        if (!shifted || Length(*shifted) > Length(loop->exprs)) continue;
        loop->exprs = std::move(*shifted);
      }
      lo = peeled;
      hi = "ARG" + std::to_string(index);
      used_args_.insert(index);
      break;
    }
    out << "  for k in " << lo << " .. " << hi << " {"
        << (hi[0] == 'A' ? "" : "   # the trip count for the given arguments") << "\n";
    for (size_t q = 0; q < loop->period; ++q) {
      std::set<int> lines;
      for (size_t r = 0; r < loop->reps; ++r) {
        const auto& l = ops[i + r * loop->period + q].ptx_lines;
        lines.insert(l.begin(), l.end());
      }
      line("    ", Render(ops[i + q], loop->exprs[q]), Comment(lines, ops[i + q].source));
    }
    out << "  }\n";
    i += loop->period * loop->reps;
  }
  if (!looped && straight > 8) {
    out << "  # straight-line: no repeated operation sequence was found to re-roll\n";
  }
}

void Importer::EmitHeader(std::ostream& out) {
  out << "# Imported by `parity import` from " << Basename(m_.path) << ", entry "
      << Demangle(f_.name) << "\n";
  out << "# block " << o_.block[0] << "," << o_.block[1] << "," << o_.block[2] << ", cluster "
      << o_.cluster_x << "x" << o_.cluster_y;
  for (const auto& [index, value] : o_.args) {
    if (o_.launch_args.count(index) == 0) out << ", arg " << index << " = " << value;
  }
  for (const ParamArg& p : o_.params) out << ", param " << p.spec;
  if (!o_.launch.empty()) out << ", " << o_.launch;
  out << "\n# Each operation names the PTX lines (and the CUDA source line) it came from. The "
         "schedule\n# issues exactly the kernel's operations for these arguments; a -D ARGn "
         "override changes\n# only the loops whose bound names ARGn.\n";
  out << "schedule " << Identifier(BareName(Demangle(f_.name))) << "\n\n";
  std::ostringstream& d = decls_;
  d << "cluster " << o_.cluster_x << "x" << o_.cluster_y << "\n";
  d << "clusters " << o_.clusters << "\n\n";
  for (const BufferInfo& b : buffers_) {
    d << "buffer " << b.name << "[" << b.slots << "] bytes " << b.bytes << "   # "
      << ShortName(b.symbol) << " + " << b.base;
    if (b.slots > 1) d << " + " << b.stride << " * slot";
    d << " (asynchronous copies)\n";
  }
  for (const BarrierArray& b : barriers_) {
    d << "barrier " << b.name << "[" << b.size << "] count " << b.count << "   # "
      << ShortName(b.symbol) << " + " << b.offset;
    if (!b.init_lines.empty()) d << ", init at " << Basename(m_.path) << ":";
    for (size_t i = 0; i < b.init_lines.size(); ++i) {
      d << (i ? "," : "") << b.init_lines[i];
    }
    if (b.init_lines.empty()) {
      d << ", never initialised: no mbarrier.init covers it (a use is M1001)";
    } else if (static_cast<int>(b.init_lines.size()) < b.size) {
      const size_t first = b.init_lines.size();
      const int last = b.size - 1;
      d << (static_cast<int>(first) == last ? "; element " + std::to_string(first)
                                            : "; elements " + std::to_string(first) + ".." +
                                                  std::to_string(last))
        << " never initialised: no mbarrier.init covers it (a use is M1001)";
    }
    d << "\n";
  }
  for (const TensorMapArg& t : o_.tensor_maps) {
    if (used_maps_.count(TensorMapName(t)) == 0) continue;
    d << "tensormap " << TensorMapName(t) << " dtype " << t.dtype << " dims [";
    for (size_t i = 0; i < t.dims.size(); ++i) d << (i ? ", " : "") << t.dims[i];
    d << "] box [";
    for (size_t i = 0; i < t.box.size(); ++i) d << (i ? ", " : "") << t.box[i];
    d << "]";
    if (t.swizzle != "none") d << " swizzle " << t.swizzle;
    if (t.index >= 0) {
      d << "   # kernel argument " << t.index << "\n";
    } else {
      d << "   # the CUtensorMap at " << t.param << "+" << t.offset << "\n";
    }
  }
}

}  // namespace parity::ptx::importer_internal
