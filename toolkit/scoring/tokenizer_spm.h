// SentencePiece tokenization for BLEU (sacreBLEU's spm/flores101/flores200/spBLEU-1K):
// the line becomes its pieces, "▁" markers kept, joined by spaces.
#pragma once

#include <memory>
#include <string>

#include "toolkit/scoring/tokenizers.h"

namespace sentencepiece {
class SentencePieceProcessor;
}

namespace csan::scoring {

class SpmTokenizer : public Tokenizer {
 public:
  SpmTokenizer(const std::string& model_path, const std::string& signature);
  ~SpmTokenizer() override;
  std::string signature() const override { return signature_; }
  std::u32string operator()(std::u32string_view line) const override;

 private:
  std::unique_ptr<sentencepiece::SentencePieceProcessor> processor_;
  std::string signature_;
};

}  // namespace csan::scoring
