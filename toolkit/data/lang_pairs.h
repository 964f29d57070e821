// The language pairs of a multilingual model (fairseq's --lang-pairs en-de,de-en), their
// language tokens (fairseq's "multilingual" style, __en__) and temperature sampling
// across pairs (fairseq's sampling_method.temperature_sampling).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace csan::data {

struct LangPair {
  std::string src, tgt;
  std::string name() const { return src + "-" + tgt; }  // "en-de"
  bool operator==(const LangPair& o) const { return src == o.src && tgt == o.tgt; }
};

// "en-de,de-en" -> pairs in the given order. Throws csan::Error naming `option` for an
// empty list, a malformed item (not SRC-TGT, a language with '.', '-' or whitespace), a
// pair of one language with itself and a repeated pair.
std::vector<LangPair> parse_lang_pairs(const std::string& list, const std::string& option);
// "en-de,de-en" again.
std::string format_lang_pairs(const std::vector<LangPair>& pairs);
// Every language of `pairs`, sorted, once.
std::vector<std::string> pair_languages(const std::vector<LangPair>& pairs);

// "__en__": the token that names a language in the joint dictionary.
std::string lang_token(const std::string& lang);

// The share of each dataset in a sampled epoch: p_i proportional to (n_i / N)^(1/T),
// normalized to sum to 1 (T = 1: proportional to the sizes; larger T: closer to uniform).
// Throws csan::Error naming `option` unless T > 0, and for an empty list or a total of 0.
std::vector<double> temperature_sampling_ratios(const std::vector<int64_t>& sizes, double temperature,
                                                const std::string& option);

// How many examples of each dataset a sampled epoch draws, as fairseq's
// SampledMultiDataset with its default virtual size: the largest dataset keeps its size,
// the others get ratio_i / ratio_largest of it, and the epoch is at most 1.5 times the
// data. Shares are rounded down and the remainder goes to the largest fractional parts
// (fairseq draws it at random).
std::vector<int64_t> sampled_counts(const std::vector<int64_t>& sizes, const std::vector<double>& ratios);

// Indices into a dataset of `size` examples for `count` draws: every example count / size
// times, the rest a seeded sample without replacement (fairseq's random_choice_in_dataset).
std::vector<int64_t> sample_indices(int64_t size, int64_t count, uint64_t seed);

}  // namespace csan::data
