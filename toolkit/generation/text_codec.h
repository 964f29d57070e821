// Raw text <-> token ids for generation. Data with a SentencePiece model is encoded and
// detokenized by that model (the checkpoint's, or the data's during validation); data without
// one is whitespace-separated dictionary symbols, read and written as they are. Over-long
// sources are cut to the model's positions.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "toolkit/text/dictionary.h"
#include "toolkit/text/sentencepiece.h"

namespace csan::generation {

struct EncodedLine {
  std::vector<int64_t> ids;  // ends with </s>
  int64_t full_length = 0;   // length before truncation (</s> included)
  bool truncated() const { return full_length > static_cast<int64_t>(ids.size()); }
};

class TextCodec {
 public:
  // `dict` and `model` (null: no SentencePiece) must outlive the codec.
  // `marian_text`: decode as transformers' MarianTokenizer (skip_special_tokens): <unk> is
  // left out, and after SentencePiece every remaining U+2581 (of pieces the target model
  // lacks, which SentencePiece passes through) becomes a space and the ends are trimmed.
  TextCodec(const text::Dictionary& dict, const text::SentencePieceModel* model, bool marian_text = false)
      : dict_(dict), model_(model), marian_text_(marian_text) {}

  // Throws csan::Error "ORIGIN:LINE: invalid UTF-8 ..." for bad bytes. At most max_length
  // ids are kept (the last one stays </s>); <= 0 means no limit.
  EncodedLine encode(const std::string& line, const std::string& origin, long line_number, int64_t max_length) const;
  // Dictionary symbols joined by spaces (stops at </s>; drops <pad>, <s>).
  std::string pieces(const std::vector<int64_t>& ids) const { return dict_.to_string(ids); }
  // Detokenized text.
  std::string decode(const std::vector<int64_t>& ids) const;
  // For alignments: the unit each id belongs to, counted from 0; -1 for </s>, <pad> and <s>.
  // A unit is a token, or with `words` a whitespace word of the text: with SentencePiece a
  // piece starting with U+2581 starts a word, without it every symbol is one.
  std::vector<int64_t> units(const std::vector<int64_t>& ids, bool words) const;

 private:
  const text::Dictionary& dict_;
  const text::SentencePieceModel* model_;
  bool marian_text_;
};

// Keeps the first max_length - 1 ids and a final </s> (ids must end with </s>).
void truncate_source(std::vector<int64_t>& ids, int64_t max_length, int64_t eos);

}  // namespace csan::generation
