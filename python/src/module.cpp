// csan._native: the compiled half of the Python package. The public API is the
// pure-Python package around it (python/csan); nothing here is meant to be called directly.
#include <pybind11/pybind11.h>

#include "bindings.h"
#include "errors.h"

PYBIND11_MODULE(_native, m) {
  m.doc() = "csan's C++ library, bound for the csan package (private: use csan.metrics)";
  m.attr("__version__") = CSAN_PYTHON_VERSION;
  csan::python::register_error_translation();
  csan::python::bind_metrics(m);
  csan::python::bind_significance(m);
  csan::python::bind_preprocess(m);
}
