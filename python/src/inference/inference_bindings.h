// The parts of csan._inference; each binds one library class or call.
#pragma once

#include <pybind11/pybind11.h>

namespace csan::python {

void bind_translator(pybind11::module_& m);
void bind_tagger(pybind11::module_& m);
void bind_training(pybind11::module_& m);

}  // namespace csan::python
