// How a multilingual_translation checkpoint is steered to one of its pairs: the pair
// checked against the checkpoint's, and the target language's token __TGT__ put before the
// source (lang_tok_style encoder) or given to the decoder as its first input (decoder).
// Shared by the task's training and csan-generate, and by tasks::Translator (csan.Translator,
// csan-serve).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "toolkit/checkpoint/checkpoint.h"
#include "toolkit/data/lang_pairs.h"
#include "toolkit/generation/loaded_ensemble.h"
#include "toolkit/text/dictionary.h"

namespace csan::tasks {

inline constexpr const char* kMultilingualTask = "multilingual_translation";

// Where a pair's language token goes (-1: nowhere).
struct LangTokens {
  int64_t source_prefix = -1, decoder_start = -1;
};
// Throws csan::Error naming `origin` when `dict` has no token for `tgt`.
LangTokens lang_tokens(const std::string& style, const text::Dictionary& dict, const std::string& tgt,
                       const std::string& origin);

// The pair `source_lang`-`target_lang` of the multilingual checkpoint `meta` (read from
// `path`). Throws a one-line csan::Error naming the option (`source_option`,
// `target_option`) for a language not given or not the model's, and a pair it was not
// trained on, listing the model's.
data::LangPair multilingual_pair(const checkpoint::CheckpointMeta& meta, const std::string& path,
                                 const std::string& source_lang, const std::string& target_lang,
                                 const std::string& source_option, const std::string& target_option);

// Puts the language token `source_prefix` (LoadedEnsemble::source_prefix; -1: none) before
// an encoded source; an empty line (EOS alone) stays empty and translates to nothing.
inline void add_source_prefix(std::vector<int64_t>& src, int64_t source_prefix) {
  if (source_prefix >= 0 && src.size() > 1) src.insert(src.begin(), source_prefix);
}

// Steers `ensemble`, loaded from the multilingual checkpoint `meta`, to `pair`: its
// languages and language token.
void steer_to_pair(generation::LoadedEnsemble& ensemble, const checkpoint::CheckpointMeta& meta,
                   const data::LangPair& pair, const std::string& path);

}  // namespace csan::tasks
