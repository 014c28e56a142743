// Where each rule of the registry (sim/model/codes.h) comes from, in a form a reader can check
// (issue 24): the exact words of the PTX ISA with the section they are in, or the name of a
// litmus test (litmus/NAME.pipe, its H100 histogram in traces/litmus/) that shows the behaviour
// on silicon. A rule may have several. Rules that are properties of a schedule rather than PTX
// rules (a deadlock, its culprit) cite the PTX text their reasoning rests on.
//
// The quotes are the ISA's words (PTX ISA 9.1 unless a section says otherwise), with the
// document's markup (italics, code font) dropped and 2^20 written for the superscript.
#ifndef PARITY_SIM_MODEL_CITATIONS_H_
#define PARITY_SIM_MODEL_CITATIONS_H_

#include <span>
#include <string>
#include <string_view>

#include "sim/model/codes.h"

namespace parity::model {

struct Citation {
  std::string_view section;  // "9.7.13.15.16 mbarrier.test_wait / mbarrier.try_wait" ("" for a litmus)
  std::string_view quote;    // the ISA's words ("" for a litmus)
  std::string_view litmus;   // a test of litmus/ ("" for a quote)
  // A rule the schedule's author states (P2033, P2034): its only source is the assertion.
  bool user = false;
};

// The citations of a code (empty for an unknown code).
std::span<const Citation> CodeCitations(Code code);

// One line for reports, SARIF and `parity rules`: each citation as
// `PTX ISA (SECTION): "QUOTE"`, `litmus NAME` or `user assertion`, separated by "; ".
std::string CitationText(Code code);

}  // namespace parity::model

#endif  // PARITY_SIM_MODEL_CITATIONS_H_
