// Raw text <-> token ids for generation. Detokenizing SentencePiece pieces is done
// here (pieces are concatenated and U+2581 becomes a space, which is what SentencePiece's
// decoder does for ordinary pieces), because libsentencepiece cannot be loaded in a
// process with LibTorch on this platform: both carry their own, incompatible copy of
// protobuf and the process aborts at start-up. Encoding raw text therefore works only
// for data without a SentencePiece model (whitespace-separated symbols); over-long
// sources are cut to the model's positions.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "toolkit/text/dictionary.h"

namespace csan::generation {

struct EncodedLine {
  std::vector<int64_t> ids;  // ends with </s>
  int64_t full_length = 0;   // length before truncation (</s> included)
  bool truncated() const { return full_length > static_cast<int64_t>(ids.size()); }
};

class TextCodec {
 public:
  // `dict` must outlive the codec; `sentencepiece`: the symbols are SentencePiece pieces.
  TextCodec(const text::Dictionary& dict, bool sentencepiece) : dict_(dict), sentencepiece_(sentencepiece) {}

  // Throws csan::Error "ORIGIN:LINE: invalid UTF-8 ..." for bad bytes, and for
  // SentencePiece data (see above). At most
  // max_length ids are kept (the last one stays </s>); <= 0 means no limit.
  EncodedLine encode(const std::string& line, const std::string& origin, long line_number, int64_t max_length) const;
  // Dictionary symbols joined by spaces (stops at </s>; drops <pad>, <s>).
  std::string pieces(const std::vector<int64_t>& ids) const { return dict_.to_string(ids); }
  // Detokenized text.
  std::string decode(const std::vector<int64_t>& ids) const;

 private:
  const text::Dictionary& dict_;
  bool sentencepiece_;
};

// SentencePiece pieces -> text: "▁the ▁ca t" -> "the cat".
std::string join_sentencepiece(const std::string& pieces);

// Keeps the first max_length - 1 ids and a final </s> (ids must end with </s>).
void truncate_source(std::vector<int64_t>& ids, int64_t max_length, int64_t eos);

}  // namespace csan::generation
