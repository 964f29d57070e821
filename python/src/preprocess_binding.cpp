// csan._native.preprocess: csan-preprocess's command (commands::run_preprocess) on an
// argument list built by csan.preprocess, without the GIL; what it logs is returned.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <sstream>

#include "bindings.h"
#include "toolkit/commands/preprocess_command_line.h"

namespace py = pybind11;

namespace csan::python {

void bind_preprocess(py::module_& m) {
  m.def(
      "preprocess",
      [](const std::vector<std::string>& args) {
        std::istringstream in;
        std::ostringstream out;
        {
          py::gil_scoped_release release;
          commands::run_preprocess(args, {in, out, out});
        }
        return out.str();
      },
      py::arg("args"));
}

}  // namespace csan::python
