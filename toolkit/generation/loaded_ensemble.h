// Translation models ready to decode, with what decoding needs from their checkpoints:
// the dictionaries, the language pair and the SentencePiece model. Several models form
// an ensemble; they share the dictionaries (the search averages their distributions
// over one target vocabulary). The translation task loads it (toolkit/tasks/).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "toolkit/models/encoder_decoder_model.h"
#include "toolkit/text/dictionary.h"

namespace csan::generation {

struct LoadedEnsemble {
  std::vector<std::shared_ptr<models::EncoderDecoderModel>> models;  // in eval mode
  std::string src_lang, tgt_lang;
  text::Dictionary src_dict, tgt_dict;
  std::string spm_model;  // SentencePiece model bytes ("" when the data had none)
  // The target side's model where it differs from the source's (an imported Marian or
  // fairseq model with one per side); "": spm_model serves both sides.
  std::string tgt_spm_model;
  // "marian": output text as transformers' MarianTokenizer decodes it (TextCodec's marian_text;
  // csan-import --marian sets it); "": SentencePiece's.
  std::string detokenizer;
  // A multilingual model's target-language token (the multilingual_translation task sets
  // them for --target-lang): put before every source sentence, or the decoder's first
  // input instead of the model's own. -1: none.
  int64_t source_prefix = -1;
  int64_t decoder_start = -1;

  bool sentencepiece() const { return !spm_model.empty(); }
};

// "a.pt:b.pt" -> {"a.pt", "b.pt"} (fairseq's --path separator).
std::vector<std::string> split_paths(const std::string& joined);

}  // namespace csan::generation
