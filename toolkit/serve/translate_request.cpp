#include "toolkit/serve/translate_request.h"

#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>

#include "toolkit/core/utf8.h"

namespace csan::serve {

namespace {

using json = nlohmann::json;

[[noreturn]] void bad_field(const std::string& field, const std::string& why) { throw RequestError(400, field, why); }

int64_t integer_field(const json& value, const std::string& field, int64_t low, int64_t high) {
  if (!value.is_number_integer()) bad_field(field, "must be an integer");
  if (value.is_number_unsigned() && value.get<uint64_t>() > static_cast<uint64_t>(high))
    bad_field(field, "must be between " + std::to_string(low) + " and " + std::to_string(high));
  const int64_t v = value.get<int64_t>();
  if (v < low || v > high) bad_field(field, "must be between " + std::to_string(low) + " and " + std::to_string(high));
  return v;
}

double number_field(const json& value, const std::string& field) {
  if (!value.is_number()) bad_field(field, "must be a number");
  const double v = value.get<double>();
  if (!std::isfinite(v)) bad_field(field, "must be a finite number");
  return v;
}

bool boolean_field(const json& value, const std::string& field) {
  if (!value.is_boolean()) bad_field(field, "must be true or false");
  return value.get<bool>();
}

std::string line_field(const json& value, const std::string& field, const RequestLimits& limits) {
  if (!value.is_string()) bad_field(field, "must be a string");
  std::string text = value.get<std::string>();
  if (text.size() > limits.max_sentence_bytes)
    throw RequestError(413, field,
                       std::to_string(text.size()) + " bytes, more than the server's limit of " +
                           std::to_string(limits.max_sentence_bytes) + " per sentence");
  if (text.find_first_of("\r\n") != std::string::npos)
    bad_field(field, "contains a line break (send each line as an item of \"q\")");
  return text;
}

}  // namespace

TranslateRequest parse_translate_request(std::string_view body, const RequestLimits& limits) {
  if (const size_t at = utf8::find_invalid(body); at != std::string_view::npos)
    throw RequestError(400, "", "the body is not valid UTF-8 (byte " + std::to_string(at) + ")");
  json root;
  try {
    root = json::parse(body.begin(), body.end());
  } catch (const json::exception& e) {
    // parse_error names the position ("[json.exception.parse_error.101] parse error at line 1, column 2: ...");
    // out_of_range is a number that overflows a double ("... number overflow parsing '1e999'").
    std::string why = e.what();
    if (const size_t bracket = why.find("] "); why.rfind("[json.exception.", 0) == 0 && bracket != std::string::npos)
      why.erase(0, bracket + 2);
    throw RequestError(400, "", "malformed JSON: " + why);
  }
  if (!root.is_object()) bad_field("", "the body must be a JSON object");

  TranslateRequest request;
  generation::SearchOptions& s = request.search;
  bool beam_given = false, nbest_given = false;
  for (const auto& [key, value] : root.items()) {
    if (key == "model") {
      if (!value.is_string() || value.get<std::string>().empty())
        bad_field(key, "must be a model's name (see GET /models)");
      request.model = value.get<std::string>();
    } else if (key == "text") {
      request.lines = {line_field(value, key, limits)};
      request.single = true;
    } else if (key == "q") {
      if (!value.is_array()) bad_field(key, "must be a list of strings");
      if (value.size() > limits.max_sentences)
        throw RequestError(413, key,
                           std::to_string(value.size()) + " sentences, more than the server's limit of " +
                               std::to_string(limits.max_sentences) + " per request");
      for (size_t i = 0; i < value.size(); ++i)
        request.lines.push_back(line_field(value[i], "q[" + std::to_string(i) + "]", limits));
    } else if (key == "beam") {
      s.beam = integer_field(value, key, 1, limits.max_beam);
      beam_given = true;
    } else if (key == "n_best") {
      s.nbest = integer_field(value, key, 1, limits.max_beam);
      nbest_given = true;
    } else if (key == "lenpen") {
      s.lenpen = number_field(value, key);
    } else if (key == "max_len_a") {
      s.max_len_a = number_field(value, key);
      if (s.max_len_a < 0 || s.max_len_a > 16) bad_field(key, "must be between 0 and 16");
    } else if (key == "max_len_b") {
      s.max_len_b = integer_field(value, key, 0, limits.max_length);
    } else if (key == "min_len") {
      s.min_len = integer_field(value, key, 0, limits.max_length);
    } else if (key == "unkpen") {
      s.unkpen = number_field(value, key);
    } else if (key == "no_repeat_ngram_size") {
      s.no_repeat_ngram_size = integer_field(value, key, 0, limits.max_length);
    } else if (key == "sampling") {
      s.sampling = boolean_field(value, key);
    } else if (key == "sampling_topk") {
      s.sampling_topk = integer_field(value, key, -1, std::numeric_limits<int32_t>::max());
      if (s.sampling_topk == 0) bad_field(key, "must be positive (or -1 for all)");
    } else if (key == "sampling_topp") {
      s.sampling_topp = number_field(value, key);
      if (s.sampling_topp != -1.0 && !(s.sampling_topp > 0 && s.sampling_topp <= 1))
        bad_field(key, "must be in (0, 1] (or -1 for all)");
    } else if (key == "temperature") {
      s.temperature = number_field(value, key);
      if (!(s.temperature > 0)) bad_field(key, "must be greater than 0");
    } else if (key == "seed") {
      s.seed = static_cast<uint64_t>(integer_field(value, key, 0, std::numeric_limits<int64_t>::max()));
    } else if (key == "scores") {
      request.positional_scores = boolean_field(value, key);
    } else {
      bad_field(key,
                "unknown field (model, text, q, beam, n_best, lenpen, max_len_a, max_len_b, min_len, unkpen, "
                "no_repeat_ngram_size, sampling, sampling_topk, sampling_topp, temperature, seed, scores)");
    }
  }
  if (root.contains("text") && root.contains("q")) bad_field("q", "give either \"text\" or \"q\", not both");
  if (!root.contains("text") && !root.contains("q"))
    bad_field("text", "missing (give \"text\": a line, or \"q\": a list of lines)");
  // n_best alone raises the beam to it, as a client asking for 8 alternatives expects.
  if (nbest_given && !beam_given && s.nbest > s.beam) s.beam = s.nbest;
  if (s.nbest > s.beam) bad_field("n_best", "must not exceed beam (" + std::to_string(s.beam) + ")");
  if (!s.sampling && (s.sampling_topk > 0 || s.sampling_topp > 0))
    bad_field(s.sampling_topk > 0 ? "sampling_topk" : "sampling_topp", "needs \"sampling\": true");
  return request;
}

}  // namespace csan::serve
