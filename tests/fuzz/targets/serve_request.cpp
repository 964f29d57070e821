// serve::parse_translate_request on any body: it returns a request within the limits or
// throws RequestError with status 400 or 413 and a one-line message; nothing else.
#include "../fuzz_targets.h"
#include "toolkit/serve/translate_request.h"

namespace csan::fuzz {

void serve_request(const uint8_t* data, size_t size) {
  serve::RequestLimits limits;
  limits.max_sentences = 8;
  limits.max_sentence_bytes = 64;
  const std::string_view body(reinterpret_cast<const char*>(data), size);
  try {
    const serve::TranslateRequest request = serve::parse_translate_request(body, limits);
    expect(!request.lines.empty() || !request.single, "\"text\" gave no line");
    expect(request.lines.size() <= limits.max_sentences, "more sentences than the limit");
    for (const auto& line : request.lines) {
      expect(line.size() <= limits.max_sentence_bytes, "a sentence over the byte limit");
      expect(line.find('\n') == std::string::npos, "a line break inside a line");
    }
    const auto& s = request.search;
    expect(s.beam >= 1 && s.beam <= limits.max_beam, "beam out of range");
    expect(s.nbest >= 1 && s.nbest <= s.beam, "n_best out of range");
    expect(s.temperature > 0, "temperature not positive");
  } catch (const serve::RequestError& e) {
    expect(e.status() == 400 || e.status() == 413, "status neither 400 nor 413");
    const std::string message = e.what();
    expect(!message.empty() && message.find('\n') == std::string::npos, "not a one-line message");
  }
}

}  // namespace csan::fuzz
