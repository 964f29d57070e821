// The parts of csan._native; each binds one area of the library.
#pragma once

#include <pybind11/pybind11.h>

namespace csan::python {

void bind_metrics(pybind11::module_& m);
void bind_significance(pybind11::module_& m);
void bind_preprocess(pybind11::module_& m);

}  // namespace csan::python
