#include "toolkit/tasks/multilingual_steering.h"

#include <algorithm>

#include "toolkit/core/error.h"

namespace csan::tasks {

LangTokens lang_tokens(const std::string& style, const text::Dictionary& dict, const std::string& tgt,
                       const std::string& origin) {
  const int token = dict.index(data::lang_token(tgt));
  if (token == dict.unk())
    throw Error(origin + ": the dictionary has no " + data::lang_token(tgt) +
                " (write the data with csan-preprocess --task multilingual_translation)");
  return style == "decoder" ? LangTokens{-1, token} : LangTokens{token, -1};
}

data::LangPair multilingual_pair(const checkpoint::CheckpointMeta& meta, const std::string& path,
                                 const std::string& source_lang, const std::string& target_lang,
                                 const std::string& source_option, const std::string& target_option) {
  const auto pairs = data::parse_lang_pairs(meta.get("lang_pairs"), path + " (lang_pairs)");
  const auto langs = data::pair_languages(pairs);
  std::string known;
  for (const auto& lang : langs) known += (known.empty() ? "" : ", ") + lang;
  const std::pair<const std::string&, const std::string&> given[] = {{source_option, source_lang},
                                                                     {target_option, target_lang}};
  for (const auto& [option, lang] : given) {
    if (lang.empty())
      throw Error(
          option + ": required for a multilingual model (" + path + " translates " + meta.get("lang_pairs") + ")",
          ErrorKind::bad_option);
    if (std::find(langs.begin(), langs.end(), lang) == langs.end())
      throw Error(option + ": '" + lang + "' is not a language of " + path + " (" + known + ")", ErrorKind::bad_option);
  }
  const data::LangPair pair{source_lang, target_lang};
  if (std::find(pairs.begin(), pairs.end(), pair) == pairs.end())
    throw Error(source_option + "/" + target_option + ": " + pair.name() + " is not a pair of " + path + " (" +
                    meta.get("lang_pairs") + ")",
                ErrorKind::bad_option);
  return pair;
}

void steer_to_pair(generation::LoadedEnsemble& ensemble, const checkpoint::CheckpointMeta& meta,
                   const data::LangPair& pair, const std::string& path) {
  const LangTokens tokens = lang_tokens(meta.get("lang_tok_style"), ensemble.tgt_dict, pair.tgt, path);
  ensemble.source_prefix = tokens.source_prefix;
  ensemble.decoder_start = tokens.decoder_start;
  ensemble.src_lang = pair.src;
  ensemble.tgt_lang = pair.tgt;
}

}  // namespace csan::tasks
