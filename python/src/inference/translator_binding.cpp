// csan._native.Translator: tasks::Translator with the GIL released while it loads,
// translates and scores, so that Python threads calling one Translator at once are
// served together (tasks/translator.h) and other Python code runs meanwhile.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <iostream>
#include <memory>
#include <sstream>

#include "inference_bindings.h"
#include "toolkit/core/allocator_tuning.h"
#include "toolkit/core/kernel_switches.h"
#include "toolkit/nn/precision.h"
#include "toolkit/tasks/translator.h"

namespace py = pybind11;

namespace csan::python {

namespace {

std::unique_ptr<tasks::Translator> make_translator(const std::vector<std::string>& paths, const std::string& device,
                                                   const std::string& precision,
                                                   const std::vector<std::string>& quantize_skip, int64_t threads,
                                                   const std::string& shortlist, const std::string& source_lang,
                                                   const std::string& target_lang, bool verbose) {
  core::check_kernel_switches();  // as every executable does before it starts (run_main)
  tasks::TranslatorOptions options;
  options.paths = paths;
  options.device = device;
  options.precision.precision = nn::parse_precision(precision, "precision");
  options.precision.quantize_skip = quantize_skip;
  options.threads = threads;
  options.shortlist = shortlist;
  options.source_lang = source_lang;
  options.target_lang = target_lang;
  py::gil_scoped_release release;
  // As csan-generate does: the decoding steps' buffers stay in the heap instead of being
  // mapped and unmapped on every step (Python's glibc malloc, not the executables'
  // tcmalloc, serves LibTorch here; untuned, the Translator ran at ~0.9x csan-generate).
  core::keep_large_allocations_mapped();
  std::ostringstream quiet;
  return std::make_unique<tasks::Translator>(options, verbose ? static_cast<std::ostream&>(std::cerr) : quiet);
}

}  // namespace

void bind_translator(py::module_& m) {
  py::class_<tasks::TextHypothesis>(m, "Hypothesis")
      .def_readonly("text", &tasks::TextHypothesis::text)
      .def_readonly("tokens", &tasks::TextHypothesis::tokens)
      .def_readonly("score", &tasks::TextHypothesis::score)
      .def_readonly("positional_scores", &tasks::TextHypothesis::positional_scores)
      .def("__repr__", [](const tasks::TextHypothesis& h) {
        return "Hypothesis(text=" + py::repr(py::str(h.text)).cast<std::string>() +
               ", score=" + py::repr(py::float_(h.score)).cast<std::string>() + ")";
      });

  py::class_<tasks::ForcedScore>(m, "ForcedScore")
      .def_readonly("log_probability", &tasks::ForcedScore::log_probability)
      .def_readonly("tokens", &tasks::ForcedScore::tokens)
      .def_readonly("positional_scores", &tasks::ForcedScore::positional_scores);

  py::class_<tasks::Translator>(m, "Translator")
      .def(py::init(&make_translator), py::arg("paths"), py::arg("device"), py::arg("precision"),
           py::arg("quantize_skip"), py::arg("threads"), py::arg("shortlist"), py::arg("source_lang"),
           py::arg("target_lang"), py::arg("verbose"))
      .def(
          "translate",
          [](tasks::Translator& t, const std::vector<std::string>& lines, int64_t beam, int64_t nbest, double lenpen,
             double max_len_a, int64_t max_len_b, int64_t min_len, double unkpen, int64_t no_repeat_ngram_size,
             bool sampling, int64_t sampling_topk, double sampling_topp, double temperature, uint64_t seed,
             int64_t batch_size, int64_t max_tokens, int64_t parallel_batches, bool transformers_beam) {
            tasks::TranslateOptions o;
            o.search.beam = beam;
            o.search.nbest = nbest;
            o.search.lenpen = lenpen;
            o.search.max_len_a = max_len_a;
            o.search.max_len_b = max_len_b;
            o.search.min_len = min_len;
            o.search.unkpen = unkpen;
            o.search.no_repeat_ngram_size = no_repeat_ngram_size;
            o.search.sampling = sampling;
            o.search.sampling_topk = sampling_topk;
            o.search.sampling_topp = sampling_topp;
            o.search.temperature = temperature;
            o.search.seed = seed;
            o.search.transformers_rules = transformers_beam;
            o.limits = {batch_size, max_tokens, parallel_batches};
            py::gil_scoped_release release;
            return t.translate(lines, o);
          },
          py::arg("lines"), py::arg("beam"), py::arg("nbest"), py::arg("lenpen"), py::arg("max_len_a"),
          py::arg("max_len_b"), py::arg("min_len"), py::arg("unkpen"), py::arg("no_repeat_ngram_size"),
          py::arg("sampling"), py::arg("sampling_topk"), py::arg("sampling_topp"), py::arg("temperature"),
          py::arg("seed"), py::arg("batch_size"), py::arg("max_tokens"), py::arg("parallel_batches"),
          py::arg("transformers_beam") = false)
      .def(
          "score",
          [](tasks::Translator& t, const std::vector<std::string>& sources, const std::vector<std::string>& targets,
             int64_t batch_size, int64_t max_tokens) {
            py::gil_scoped_release release;
            return t.score(sources, targets, {batch_size, max_tokens, 0});
          },
          py::arg("sources"), py::arg("targets"), py::arg("batch_size"), py::arg("max_tokens"))
      .def_property_readonly("source_language", &tasks::Translator::source_language)
      .def_property_readonly("target_language", &tasks::Translator::target_language)
      .def_property_readonly("precision",
                             [](const tasks::Translator& t) { return nn::precision_name(t.precision().precision); })
      .def_property_readonly("device", &tasks::Translator::device);
}

}  // namespace csan::python
