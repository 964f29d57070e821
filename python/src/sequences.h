// Python arguments (sequences of str) converted to what the C++ library takes, with
// errors that name the argument and the index: TypeError for a wrong type,
// csan.BadInputError for text that cannot be encoded as UTF-8 or mismatched lengths.
#pragma once

#include <pybind11/pybind11.h>

#include <string>
#include <vector>

#include "toolkit/scoring/partial_references.h"

namespace csan::python {

// A sequence (not a str) of str; `what` names it in errors ("hypotheses").
std::vector<std::string> to_lines(pybind11::handle sequence, const std::string& what);

// A sequence of reference streams, each a sequence of str or None (a segment without a
// reference in that stream). Every stream must have the same length.
scoring::ReferenceStreams to_reference_streams(pybind11::handle sequence, const std::string& what);

}  // namespace csan::python
