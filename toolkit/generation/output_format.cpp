#include "toolkit/generation/output_format.h"

#include <cmath>
#include <cstdio>

#include "toolkit/core/error.h"

namespace csan::generation {

namespace {

std::string fixed(double value, int decimals) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.*f", decimals, value);
  return buffer;
}

}  // namespace

OutputFormat parse_output_format(const std::string& name) {
  if (name == "fairseq") return OutputFormat::Fairseq;
  if (name == "plain") return OutputFormat::Plain;
  throw Error("--output-format: unknown format '" + name + "' (fairseq or plain)");
}

std::string format_result(const SentenceResult& r, const TextCodec& target, OutputFormat format) {
  if (format == OutputFormat::Plain)
    return (r.hypotheses.empty() ? std::string() : target.decode(r.hypotheses[0].tokens)) + "\n";
  const std::string id = std::to_string(r.id);
  std::string out = "S-" + id + "\t" + r.source + "\n";
  if (r.reference) out += "T-" + id + "\t" + *r.reference + "\n";
  if (r.hypotheses.empty()) {  // an empty input line translates to an empty line
    out += "H-" + id + "\t0.000000\t\nD-" + id + "\t0.000000\t\nP-" + id + "\t\n";
    if (r.with_alignments) out += "A-" + id + "\t\n";
    return out;
  }
  const double ln2 = std::log(2.0);
  for (size_t h = 0; h < r.hypotheses.size(); ++h) {
    const Hypothesis& hyp = r.hypotheses[h];
    const std::string score = fixed(hyp.score / ln2, 6);
    out += "H-" + id + "\t" + score + "\t" + target.pieces(hyp.tokens) + "\n";
    out += "D-" + id + "\t" + score + "\t" + target.decode(hyp.tokens) + "\n";
    out += "P-" + id + "\t";
    for (size_t t = 0; t < hyp.positional_scores.size(); ++t)
      out += (t ? " " : "") + fixed(hyp.positional_scores[t] / ln2, 4);
    out += "\n";
    if (r.with_alignments) out += "A-" + id + "\t" + r.alignments.at(h) + "\n";
  }
  return out;
}

}  // namespace csan::generation
