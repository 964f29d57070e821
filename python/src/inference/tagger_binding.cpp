// csan._inference.Tagger: tasks::Tagger with the GIL released while it loads and tags.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>
#include <tuple>

#include "inference_bindings.h"
#include "toolkit/core/allocator_tuning.h"
#include "toolkit/core/kernel_switches.h"
#include "toolkit/core/atomic_file.h"
#include "toolkit/data/conllu.h"
#include "toolkit/tasks/tagger.h"

namespace py = pybind11;

namespace csan::python {

void bind_tagger(py::module_& m) {
  py::class_<tasks::Tagger>(m, "Tagger")
      .def(py::init([](const std::vector<std::string>& paths, const std::string& device, int64_t threads) {
             core::check_kernel_switches();  // as every executable does before it starts (run_main)
             py::gil_scoped_release release;
             core::keep_large_allocations_mapped();  // as for csan.Translator (translator_binding.cpp)
             return std::make_unique<tasks::Tagger>(tasks::TaggerOptions{paths, device, threads});
           }),
           py::arg("paths"), py::arg("device"), py::arg("threads"))
      .def(
          "tag",
          [](tasks::Tagger& t, const std::vector<std::vector<std::string>>& sentences, int64_t batch_size) {
            py::gil_scoped_release release;
            return t.tag(sentences, batch_size);
          },
          py::arg("sentences"), py::arg("batch_size"))
      .def(
          "tag_conllu",
          [](tasks::Tagger& t, const std::string& in_path, const std::string& out_path, int64_t batch_size) {
            py::gil_scoped_release release;
            const auto tagged = t.tag_conllu(data::read_conllu(in_path), batch_size);
            write_file_atomically(out_path, tagged.text);
            return std::make_tuple(tagged.words, tagged.gold, tagged.correct);
          },
          py::arg("in_path"), py::arg("out_path"), py::arg("batch_size"))
      .def_property_readonly("column", [](const tasks::Tagger& t) { return data::tag_column_name(t.column()); })
      .def_property_readonly("device", &tasks::Tagger::device);
}

}  // namespace csan::python
