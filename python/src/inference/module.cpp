// csan._inference: the half of the package that links LibTorch, loaded with the first
// model or training run. The public API is the pure-Python package (python/csan).
#include <pybind11/pybind11.h>

#include "errors.h"
#include "inference_bindings.h"

PYBIND11_MODULE(_inference, m) {
  m.doc() =
      "csan's models and training, bound for the csan package (private: use csan.Translator, csan.Tagger, "
      "csan.train)";
  csan::python::register_error_translation();
  csan::python::bind_translator(m);
  csan::python::bind_tagger(m);
  csan::python::bind_training(m);
}
