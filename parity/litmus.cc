// The litmus tests of parity/parity.h: the model's outcomes of a test (verifier/litmus.h) and
// their comparison with an H100 histogram, in the histogram format of sim/litmus/outcome.h.
#include <string>
#include <utility>

#include "parity/detail.h"
#include "parity/parity.h"
#include "sim/litmus/outcome.h"
#include "verifier/litmus.h"

namespace parity::api {
namespace {

LitmusHistogram FromModel(litmus::Histogram h) {
  LitmusHistogram out;
  out.name = std::move(h.name);
  out.hash = std::move(h.hash);
  out.source = std::move(h.source);
  out.runs = h.runs;
  out.counts = std::move(h.counts);
  return out;
}

litmus::Histogram ToModel(const LitmusHistogram& h) {
  litmus::Histogram out;
  out.name = h.name;
  out.hash = h.hash;
  out.source = h.source;
  out.runs = h.runs;
  out.counts = h.counts;
  return out;
}

// The API's verdicts are the verifier's, one for one.
LitmusVerdict FromModel(verifier::LitmusVerdict v) {
  switch (v) {
    case verifier::LitmusVerdict::kAgree:
      return LitmusVerdict::kAgree;
    case verifier::LitmusVerdict::kFail:
      return LitmusVerdict::kFail;
    case verifier::LitmusVerdict::kUndefined:
      return LitmusVerdict::kUndefined;
    case verifier::LitmusVerdict::kNotRun:
      return LitmusVerdict::kNotRun;
  }
  return LitmusVerdict::kNotRun;
}

verifier::LitmusVerdict ToModel(LitmusVerdict v) {
  switch (v) {
    case LitmusVerdict::kAgree:
      return verifier::LitmusVerdict::kAgree;
    case LitmusVerdict::kFail:
      return verifier::LitmusVerdict::kFail;
    case LitmusVerdict::kUndefined:
      return verifier::LitmusVerdict::kUndefined;
    case LitmusVerdict::kNotRun:
      return verifier::LitmusVerdict::kNotRun;
  }
  return verifier::LitmusVerdict::kNotRun;
}

}  // namespace

std::string LitmusHistogram::ToText() const { return litmus::FormatHistogram(ToModel(*this)); }

Result<LitmusHistogram> LitmusHistogram::Parse(const std::string& text, const std::string& file) {
  Expected<litmus::Histogram> h = litmus::ParseHistogram(text, file);
  if (!h.ok()) return ToError(h.status());
  return FromModel(std::move(h).value());
}

Result<LitmusHistogram> SimulateLitmus(const Schedule& test, const std::string& name) {
  const Schedule::Impl& impl = test.impl();
  Expected<litmus::Histogram> h = verifier::SimulateLitmus(*impl.program, name);
  if (!h.ok()) return ToError(h.status().At(SourceLocation{impl.file, 0, 0}));
  return FromModel(std::move(h).value());
}

const char* LitmusVerdictName(LitmusVerdict v) {
  return verifier::LitmusVerdictName(ToModel(v));
}

Result<LitmusComparison> CompareLitmus(const LitmusHistogram& sim, const LitmusHistogram& h100) {
  Expected<verifier::LitmusComparison> c = verifier::CompareLitmus(ToModel(sim), ToModel(h100));
  if (!c.ok()) return ToError(c.status());
  LitmusComparison out;
  out.verdict = FromModel(c->verdict);
  out.unexpected = std::move(c->unexpected);
  out.never_observed = std::move(c->never_observed);
  return out;
}

}  // namespace parity::api
