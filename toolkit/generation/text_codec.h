// Raw text <-> token ids for generation. SentencePiece data is encoded and detokenized
// by the checkpoint's model served from an isolated link namespace
// (isolated_sentencepiece.h), because libsentencepiece cannot be linked into a process
// with LibTorch on this platform. Without that model, pieces are detokenized directly
// (concatenated, U+2581 becomes a space, which is what SentencePiece's decoder does for
// ordinary pieces) and raw SentencePiece input is an error. Over-long sources are cut
// to the model's positions.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "toolkit/generation/isolated_sentencepiece.h"
#include "toolkit/text/dictionary.h"

namespace csan::generation {

struct EncodedLine {
  std::vector<int64_t> ids;  // ends with </s>
  int64_t full_length = 0;   // length before truncation (</s> included)
  bool truncated() const { return full_length > static_cast<int64_t>(ids.size()); }
};

class TextCodec {
 public:
  // `dict` (and `model`, when given) must outlive the codec; `sentencepiece`: the symbols
  // are SentencePiece pieces, of `model` when it is not null.
  TextCodec(const text::Dictionary& dict, bool sentencepiece, const IsolatedSentencePiece* model = nullptr)
      : dict_(dict), sentencepiece_(sentencepiece), model_(model) {}

  // Throws csan::Error "ORIGIN:LINE: invalid UTF-8 ..." for bad bytes, and for
  // SentencePiece data without a model (see above). At most
  // max_length ids are kept (the last one stays </s>); <= 0 means no limit.
  EncodedLine encode(const std::string& line, const std::string& origin, long line_number, int64_t max_length) const;
  // Dictionary symbols joined by spaces (stops at </s>; drops <pad>, <s>).
  std::string pieces(const std::vector<int64_t>& ids) const { return dict_.to_string(ids); }
  // Detokenized text.
  std::string decode(const std::vector<int64_t>& ids) const;

 private:
  const text::Dictionary& dict_;
  bool sentencepiece_;
  const IsolatedSentencePiece* model_;
};

// SentencePiece pieces -> text: "▁the ▁ca t" -> "the cat".
std::string join_sentencepiece(const std::string& pieces);

// Keeps the first max_length - 1 ids and a final </s> (ids must end with </s>).
void truncate_source(std::vector<int64_t>& ids, int64_t max_length, int64_t eos);

}  // namespace csan::generation
