// POST /translate's JSON body, read and checked before anything is queued: which model,
// which lines, and the search options a client may set. Torch-free, so that the libFuzzer
// target (tests/fuzz/targets/serve_request.cpp) runs it on its own.
//
// Accepted fields: "model" (optional when the server has one model), either "text" (one
// line) or "q" (a list of lines), and the search options "beam", "n_best", "lenpen",
// "max_len_a", "max_len_b", "min_len", "unkpen", "no_repeat_ngram_size", "sampling",
// "sampling_topk", "sampling_topp", "temperature", "seed", plus "scores" (also return
// each token's log-probability). Any other field is refused, so that a misspelt option
// is an error rather than silently ignored.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "toolkit/core/error.h"
#include "toolkit/core/utf8.h"
#include "toolkit/generation/search_options.h"

namespace csan::serve {

// What one request may ask for (csan-serve's --max-sentences and --max-sentence-bytes;
// the body's own size is checked by the HTTP layer before parsing).
struct RequestLimits {
  size_t max_sentences = 256;
  size_t max_sentence_bytes = 4096;
  // A large beam or length bound makes one request hold the model for long: csan-serve
  // keeps them to what interactive translation needs.
  int64_t max_beam = 32;
  int64_t max_length = 1024;
};

// A request refused: the HTTP status (400 bad request, 413 too large) and a one-line
// message that starts with the JSON field at fault ("beam: must be >= 1").
class RequestError : public Error {
 public:
  // The message names the field on one line (an unknown field's name may hold anything).
  RequestError(int status, const std::string& field, const std::string& message)
      : Error(field.empty() ? message : utf8::printable(field, 80) + ": " + message, ErrorKind::bad_input),
        status_(status),
        field_(field) {}
  int status() const { return status_; }
  const std::string& field() const { return field_; }

 private:
  int status_;
  std::string field_;
};

struct TranslateRequest {
  std::string model;               // "" : the server's only model
  std::vector<std::string> lines;  // one line each, no line breaks
  bool single = false;             // sent as "text" (the reply then also has "translation")
  generation::SearchOptions search;
  bool positional_scores = false;  // "scores": true
};

// Throws RequestError for anything but a well-formed request within `limits`: a body that
// is not UTF-8 or not a JSON object, an unknown field, a value of the wrong type or out of
// range, no text or both "text" and "q", too many or too long lines (413).
TranslateRequest parse_translate_request(std::string_view body, const RequestLimits& limits);

}  // namespace csan::serve
