// Metrics (BLEU, chrF, TER), their statistics, signatures and score formatting.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <memory>

#include "bindings.h"
#include "segment_statistics.h"
#include "sequences.h"
#include "toolkit/core/error.h"
#include "toolkit/scoring/bleu.h"
#include "toolkit/scoring/chrf.h"
#include "toolkit/scoring/partial_references.h"
#include "toolkit/scoring/report.h"
#include "toolkit/scoring/resampling.h"
#include "toolkit/scoring/ter.h"

namespace py = pybind11;

namespace csan::python {

namespace {

using scoring::Metric;
using scoring::ReferenceStreams;
using scoring::Stats;

// Statistics of `hyps` against `refs`, computed without the GIL.
std::shared_ptr<SegmentStatistics> extract(const Metric& metric, py::handle hyps, const ReferenceStreams& refs) {
  std::vector<std::string> lines = to_lines(hyps, "hypotheses");
  const std::size_t n_refs = refs.streams.empty() ? 0 : refs.streams[0].size();
  if (lines.size() != n_refs)
    throw Error("hypotheses have " + std::to_string(lines.size()) + " segments, references " + std::to_string(n_refs),
                ErrorKind::bad_input);
  auto stats = std::make_shared<SegmentStatistics>();
  stats->num_refs = refs.count_per_segment();
  py::gil_scoped_release unlocked;
  stats->rows = scoring::segment_stats(metric, lines, refs);
  return stats;
}

// The signature's fields in sacreBLEU's order (nrefs|bs|ar|seed|<metric's>|version).
// The common fields' values are None: the Python Signature fills them from the run.
py::list signature_layout(const Metric& metric) {
  const scoring::CommonSignature all{"", "", "", ""};
  const std::vector<scoring::SignatureField> own = metric.signature_fields();
  py::list fields;
  for (const auto& field : scoring::make_signature(metric, all)) {
    const bool has_value = field.key == "version" ||
                           std::any_of(own.begin(), own.end(), [&](const auto& f) { return f.key == field.key; });
    fields.append(py::make_tuple(field.key, field.short_key,
                                 has_value ? py::object(py::str(field.value)) : py::object(py::none())));
  }
  return fields;
}

py::dict bleu_fields(const scoring::BleuResult& result) {
  py::dict fields;
  fields["score"] = result.score;
  fields["counts"] = std::vector<double>(result.counts.begin(), result.counts.end());
  fields["totals"] = std::vector<double>(result.totals.begin(), result.totals.end());
  fields["precisions"] = std::vector<double>(result.precisions.begin(), result.precisions.end());
  fields["bp"] = result.bp;
  fields["sys_len"] = result.sys_len;
  fields["ref_len"] = result.ref_len;
  return fields;
}

}  // namespace

void bind_metrics(py::module_& m) {
  m.attr("SACREBLEU_VERSION") = scoring::kSacrebleuVersion;

  py::class_<ReferenceStreams, std::shared_ptr<ReferenceStreams>>(m, "References")
      .def(py::init([](py::handle refs) {
             return std::make_shared<ReferenceStreams>(to_reference_streams(refs, "references"));
           }),
           py::arg("references"))
      .def_property_readonly("num_refs", &ReferenceStreams::count_per_segment)
      .def("__len__", [](const ReferenceStreams& refs) { return refs.streams.empty() ? 0 : refs.streams[0].size(); });

  py::class_<SegmentStatistics, std::shared_ptr<SegmentStatistics>>(m, "SegmentStatistics")
      .def("__len__", [](const SegmentStatistics& s) { return s.rows.size(); })
      .def("__getitem__",
           [](const SegmentStatistics& s, std::size_t i) {
             if (i >= s.rows.size()) throw py::index_error("segment statistics index out of range");
             return s.rows[i];
           })
      .def("sum", [](const SegmentStatistics& s) { return scoring::sum_stats(s.rows); })
      .def_readonly("num_refs", &SegmentStatistics::num_refs);

  py::class_<Metric, std::shared_ptr<Metric>>(m, "Metric")
      .def_property_readonly("name", &Metric::name)
      .def("signature_layout", &signature_layout)
      .def("segment_stats", &extract, py::arg("hypotheses"), py::arg("references"))
      .def("score", &Metric::score, py::arg("summed_stats"))
      .def("verbose", &Metric::verbose, py::arg("summed_stats"));

  py::class_<scoring::Bleu, Metric, std::shared_ptr<scoring::Bleu>>(m, "Bleu")
      .def(py::init([](const std::string& tokenize, const std::string& spm_model, bool lowercase,
                       const std::string& smooth_method, std::optional<double> smooth_value, bool effective_order) {
             scoring::BleuOptions options;
             options.tokenize = tokenize;
             options.spm_model = spm_model;
             options.lowercase = lowercase;
             options.smooth_method = smooth_method;
             options.smooth_value = smooth_value;
             options.effective_order = effective_order;
             return std::make_shared<scoring::Bleu>(options);
           }),
           py::kw_only(), py::arg("tokenize"), py::arg("spm_model"), py::arg("lowercase"), py::arg("smooth_method"),
           py::arg("smooth_value"), py::arg("effective_order"))
      .def("compute", [](const scoring::Bleu& bleu, const Stats& sum) { return bleu_fields(bleu.compute(sum)); });

  py::class_<scoring::Chrf, Metric, std::shared_ptr<scoring::Chrf>>(m, "Chrf").def(
      py::init([](int char_order, int word_order, int beta, bool lowercase, bool whitespace, bool eps_smoothing) {
        return std::make_shared<scoring::Chrf>(
            scoring::ChrfOptions{char_order, word_order, beta, lowercase, whitespace, eps_smoothing});
      }),
      py::kw_only(), py::arg("char_order"), py::arg("word_order"), py::arg("beta"), py::arg("lowercase"),
      py::arg("whitespace"), py::arg("eps_smoothing"));

  py::class_<scoring::Ter, Metric, std::shared_ptr<scoring::Ter>>(m, "Ter")
      .def(py::init([](bool case_sensitive, bool normalized, bool no_punct, bool asian_support) {
             return std::make_shared<scoring::Ter>(
                 scoring::TerOptions{case_sensitive, normalized, no_punct, asian_support});
           }),
           py::kw_only(), py::arg("case_sensitive"), py::arg("normalized"), py::arg("no_punct"),
           py::arg("asian_support"))
      .def("compute", [](const scoring::Ter& ter, const Stats& sum) {
        const scoring::TerResult result = ter.compute(sum);
        return py::make_tuple(result.score, result.num_edits, result.ref_length);
      });

  m.def(
      "bleu_verbose",
      [](const std::vector<double>& precisions, double bp, double ratio, long long sys_len, long long ref_len) {
        scoring::BleuResult result;
        if (precisions.size() != result.precisions.size())
          throw Error("BLEU has " + std::to_string(result.precisions.size()) + " precisions, got " +
                          std::to_string(precisions.size()),
                      ErrorKind::bad_option);
        std::copy(precisions.begin(), precisions.end(), result.precisions.begin());
        result.bp = bp;
        result.ratio = ratio;
        result.sys_len = sys_len;
        result.ref_len = ref_len;
        return result.verbose();
      },
      py::arg("precisions"), py::arg("bp"), py::arg("ratio"), py::arg("sys_len"), py::arg("ref_len"));

  m.def(
      "format_score",
      [](const std::string& name, double score, std::optional<double> mean, std::optional<double> ci,
         const std::string& verbose, int width, bool score_only, const std::string& signature, bool is_json) {
        scoring::ScoreReport report{name, score, std::nullopt, verbose};
        if (mean && ci) report.confidence = scoring::Confidence{*mean, *ci};
        return scoring::format_score(report, width, score_only, signature, is_json);
      },
      py::arg("name"), py::arg("score"), py::arg("mean"), py::arg("ci"), py::arg("verbose"), py::arg("width"),
      py::arg("score_only"), py::arg("signature"), py::arg("is_json"));
}

}  // namespace csan::python
