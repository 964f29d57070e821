// csan's C++ errors as Python exceptions (the classes of csan/errors.py).
#pragma once

#include <pybind11/pybind11.h>

namespace csan::python {

// Installs the one translation of csan::Error (by its kind) and of filesystem errors.
void register_error_translation();

}  // namespace csan::python
