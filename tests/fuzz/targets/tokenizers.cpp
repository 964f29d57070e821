// The BLEU tokenizers, the TER normaliser, chrF++'s words and the metrics on one
// hypothesis/reference pair. Invalid UTF-8 must be an error; valid text must give the
// same tokens on the UTF-8 fast paths as on code points, and scores in range.
#include "toolkit/scoring/tokenizers.h"

#include <cmath>

#include "../fuzz_targets.h"
#include "toolkit/core/error.h"
#include "toolkit/core/utf8.h"
#include "toolkit/scoring/chrf.h"
#include "toolkit/scoring/metrics.h"
#include "toolkit/scoring/ter_normalizer.h"
#include "toolkit/scoring/unicode.h"

namespace csan::fuzz {

namespace {

void check_score(const scoring::Metric& metric, const std::string& hyp, const std::string& ref) {
  std::vector<scoring::Stats> stats;
  try {
    stats = metric.segment_stats({hyp}, {{ref}});
  } catch (const Error&) {
    expect(!utf8::is_valid(hyp) || !utf8::is_valid(ref), metric.name() + " refused valid UTF-8");
    return;
  }
  expect(utf8::is_valid(hyp) && utf8::is_valid(ref), metric.name() + " accepted invalid UTF-8");
  expect(stats.size() == 1, metric.name() + ": one segment, one statistics vector");
  const double score = metric.score(stats[0]);
  expect(std::isfinite(score) && score >= 0, metric.name() + ": score out of range");
  if (metric.name() != "TER") expect(score <= 100.0 + 1e-9, metric.name() + ": score above 100");
  std::vector<float> narrow(stats[0].begin(), stats[0].end());
  expect(std::isfinite(metric.score_float32(narrow)), metric.name() + ": float32 score not finite");
}

}  // namespace

void tokenizers(const uint8_t* data, size_t size) {
  const std::vector<std::string> pieces = split_at_nul(data, size, 2);
  const std::string& hyp = pieces[0];
  const std::string ref = pieces.size() > 1 ? pieces[1] : "";

  if (utf8::is_valid(hyp)) {
    const std::u32string text = scoring::to_u32(hyp);
    for (const char* name : {"13a", "intl", "zh", "char", "none"}) {
      auto tokenizer = scoring::make_tokenizer(name);
      expect(tokenizer->tokenize_utf8(hyp) == scoring::to_utf8((*tokenizer)(text)),
             std::string(name) + ": the UTF-8 path differs from the code-point path");
    }
    for (int flags = 0; flags < 16; ++flags) {
      const scoring::TerNormalizerOptions o{(flags & 1) != 0, (flags & 2) != 0, (flags & 4) != 0, (flags & 8) != 0};
      (void)scoring::ter_normalize(scoring::rstrip(std::u32string_view(text)), o);
    }
    (void)scoring::chrf_words(text);
    (void)scoring::lower(text);
  }

  for (const char* tokenize : {"13a", "intl", "zh", "char", "none"}) {
    scoring::BleuOptions bleu;
    bleu.tokenize = tokenize;
    bleu.lowercase = tokenize[0] == 'i';
    bleu.effective_order = tokenize[0] == 'c';
    check_score(*scoring::make_bleu(bleu), hyp, ref);
  }
  scoring::ChrfOptions chrf;
  check_score(*scoring::make_chrf(chrf), hyp, ref);
  chrf.word_order = 2;
  chrf.whitespace = chrf.lowercase = chrf.eps_smoothing = true;
  check_score(*scoring::make_chrf(chrf), hyp, ref);
  scoring::TerOptions ter;
  check_score(*scoring::make_ter(ter), hyp, ref);
  ter.normalized = ter.no_punct = ter.asian_support = ter.case_sensitive = true;
  check_score(*scoring::make_ter(ter), hyp, ref);
}

}  // namespace csan::fuzz
