#include "toolkit/scoring/report.h"

#include <algorithm>

#include "toolkit/scoring/report_format.h"

namespace csan::scoring {

std::vector<SignatureField> make_signature(const Metric& metric, const CommonSignature& common) {
  std::vector<SignatureField> fields{{"nrefs", "#", common.nrefs}};
  if (common.bootstrap) fields.push_back({"bs", "bs", *common.bootstrap});
  if (common.randomization) fields.push_back({"ar", "ar", *common.randomization});
  if (common.seed) fields.push_back({"seed", "rs", *common.seed});
  for (const auto& field : metric.signature_fields()) fields.push_back(field);
  fields.push_back({"version", "v", kSacrebleuVersion});
  return fields;
}

std::string format_signature(const std::vector<SignatureField>& fields, bool short_form) {
  std::string out;
  for (const auto& field : fields) {
    if (!out.empty()) out += '|';
    out += (short_form ? field.short_key : field.key) + ":" + field.value;
  }
  return out;
}

std::string format_score(const ScoreReport& report, int width, bool score_only, const std::string& signature,
                         bool json) {
  std::string score_text = format_fixed(report.score, width);
  std::vector<std::pair<std::string, std::string>> object{
      {"name", json_string(report.name, false)},
      {"score", python_repr(round_to_width(report.score, width))},
      {"signature", json_string(signature, false)}};
  if (report.confidence && report.confidence->mean > 0) {
    const std::string mean = format_fixed(report.confidence->mean, width);
    const std::string ci = format_fixed(report.confidence->ci, width);
    const std::string confidence = "μ = " + mean + " ± " + ci;
    score_text += " (" + confidence + ")";
    object.push_back({"confidence_mean", python_repr(round_to_width(report.confidence->mean, width))});
    object.push_back({"confidence_var", python_repr(round_to_width(report.confidence->ci, width))});
    object.push_back({"confidence", json_string(confidence, false)});
  }
  std::string line = (signature.empty() ? report.name : report.name + "|" + signature) + " = " + score_text;
  if (!report.verbose.empty()) {
    line += " " + report.verbose;
    object.push_back({"verbose_score", json_string(report.verbose, false)});
  }
  if (score_only) return score_text;
  if (!json) return line;

  // sacreBLEU splits the signature back into "key:value" pairs.
  std::size_t start = 0;
  while (!signature.empty() && start <= signature.size()) {
    std::size_t end = signature.find('|', start);
    if (end == std::string::npos) end = signature.size();
    const std::string pair = signature.substr(start, end - start);
    const std::size_t colon = pair.find(':');
    const std::string key = pair.substr(0, colon);
    const std::string value = colon == std::string::npos ? "" : pair.substr(colon + 1);
    auto existing = std::find_if(object.begin(), object.end(), [&](const auto& kv) { return kv.first == key; });
    if (existing != object.end()) existing->second = json_string(value, false);
    else object.push_back({key, json_string(value, false)});
    start = end + 1;
  }
  std::string out = "{\n";
  for (std::size_t i = 0; i < object.size(); ++i) {
    out += " " + json_string(object[i].first, false) + ": " + object[i].second;
    out += i + 1 < object.size() ? ",\n" : "\n";
  }
  return out + "}";
}

std::string single_system_output(const std::vector<std::string>& results, bool json) {
  std::string out;
  if (results.empty()) return out;
  if (json) {
    if (results.size() == 1) return results[0] + "\n";
    out = "[\n";
    for (std::size_t i = 0; i < results.size(); ++i) out += results[i] + (i + 1 < results.size() ? ",\n" : "\n");
    return out + "]\n";
  }
  if (results.size() == 1) return results[0] + "\n";
  // Align on the first '='. Lines without one are printed at once, and (as in
  // sacreBLEU) the remaining offsets are paired with the lines from the first on.
  std::vector<std::size_t> offsets;
  for (const auto& line : results) {
    const std::size_t equals = line.find('=');
    if (equals == std::string::npos) out += line + "\n";
    else offsets.push_back(std::max<std::size_t>(code_points(line.substr(0, equals)), 1) - 1);
  }
  if (offsets.empty()) return out;
  const std::size_t widest = *std::max_element(offsets.begin(), offsets.end());
  for (std::size_t i = 0; i < offsets.size(); ++i) {
    const std::size_t left = std::min(offsets[i], code_points(results[i]));
    out += std::string(widest - left, ' ') + results[i] + "\n";
  }
  return out;
}

}  // namespace csan::scoring
