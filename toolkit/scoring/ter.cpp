#include "toolkit/scoring/ter.h"

#include <cstdint>
#include <string_view>

#include "toolkit/core/error.h"
#include "toolkit/scoring/ngram_counts.h"
#include "toolkit/scoring/parallel.h"
#include "toolkit/scoring/ter_edits.h"
#include "toolkit/scoring/unicode.h"

namespace csan::scoring {

Ter::Ter(const TerOptions& options)
    : normalizer_{options.case_sensitive, options.normalized, options.no_punct, options.asian_support} {}

std::vector<SignatureField> Ter::signature_fields() const {
  return {
      {"case", "c", normalizer_.case_sensitive ? "mixed" : "lc"},
      {"tok", "t", "tercom"},
      {"norm", "nr", normalizer_.normalized ? "yes" : "no"},
      {"punct", "pn", normalizer_.no_punct ? "no" : "yes"},
      {"asian", "as", normalizer_.asian_support ? "yes" : "no"},
  };
}

std::vector<Stats> Ter::segment_stats(const std::vector<std::string>& hyps,
                                      const std::vector<std::vector<std::string>>& refs) const {
  for (const auto& stream : refs) {
    if (stream.size() != hyps.size()) throw Error("System and reference streams have different lengths.", ErrorKind::bad_input);
  }
  if (refs.empty()) throw Error("TER needs at least one reference stream", ErrorKind::bad_input);
  std::vector<Stats> all(hyps.size());
  // The words of the normalised line. Without normalisation or punctuation removal the
  // normaliser is lowercase + split + join, and splitting the joined text again gives
  // the same words, so the join is skipped.
  const bool only_case = !normalizer_.normalized && !normalizer_.no_punct;
  auto normalize = [&](const std::string& line) {
    std::u32string text = to_u32(line);
    if (!only_case) return ter_normalize(rstrip(text), normalizer_);
    text.resize(rstrip(text).size());
    return normalizer_.case_sensitive ? text : lower(text);
  };
  // TER segments cost very different amounts (long lines are quadratic), so hand them
  // out in small chunks.
  parallel_for(
      hyps.size(),
      [&](size_t begin, size_t end) {
        Interner<std::u32string_view> interner;
        std::vector<std::u32string> ref_texts(refs.size());
        std::vector<std::vector<std::u32string_view>> ref_words(refs.size());
        for (size_t i = begin; i < end; ++i) {
          std::u32string hyp_text = normalize(hyps[i]);
          std::vector<std::u32string_view> hyp_words = split(hyp_text);
          size_t word_count = hyp_words.size();
          for (size_t r = 0; r < refs.size(); ++r) {
            ref_texts[r] = normalize(refs[r][i]);
            ref_words[r] = split(ref_texts[r]);
            word_count += ref_words[r].size();
          }
          interner.reset(word_count);
          auto to_ids = [&](const std::vector<std::u32string_view>& words) {
            std::vector<uint32_t> ids;
            ids.reserve(words.size());
            for (auto word : words) ids.push_back(interner(word));
            return ids;
          };
          std::vector<uint32_t> hyp_ids = to_ids(hyp_words);
          int64_t best_edits = -1;
          double ref_lengths = 0.0;
          for (size_t r = 0; r < refs.size(); ++r) {
            std::vector<uint32_t> ref_ids = to_ids(ref_words[r]);
            int64_t edits = ter_edits(hyp_ids, ref_ids);
            ref_lengths += static_cast<double>(ref_ids.size());
            if (best_edits < 0 || edits < best_edits) best_edits = edits;
          }
          all[i] = {static_cast<double>(best_edits), ref_lengths / static_cast<double>(refs.size())};
        }
      },
      64);
  return all;
}

TerResult Ter::compute(const Stats& sum) const {
  if (sum.size() != 2) throw Error("TER statistics must have 2 values");
  TerResult result;
  result.num_edits = sum[0];
  result.ref_length = sum[1];
  double rate;
  if (sum[1] > 0) {
    rate = sum[0] / sum[1];
  } else {
    rate = sum[0] > 0 ? 1.0 : 0.0;  // empty references: all edits, or nothing to do
  }
  result.score = 100 * rate;
  return result;
}

double Ter::score_float32(const std::vector<float>& sum) const {
  if (sum.size() != 2) throw Error("TER statistics must have 2 values");
  if (sum[1] > 0) return 100.0 * static_cast<double>(sum[0] / sum[1]);
  return sum[0] > 0 ? 100.0 : 0.0;
}

}  // namespace csan::scoring
