#include "toolkit/generation/text_codec.h"

#include "toolkit/core/error.h"
#include "toolkit/core/text_file.h"

namespace csan::generation {

void truncate_source(std::vector<int64_t>& ids, int64_t max_length, int64_t eos) {
  if (max_length <= 0 || static_cast<int64_t>(ids.size()) <= max_length) return;
  ids.resize(max_length);
  ids.back() = eos;
}

EncodedLine TextCodec::encode(const std::string& line, const std::string& origin, long line_number,
                              int64_t max_length) const {
  check_utf8_line(origin, line_number, line);
  if (sentencepiece_ && !model_)
    throw Error(origin + ": raw text needs the checkpoint's SentencePiece model, which could not be loaded; "
                "binarize the text with csan-preprocess (same dictionaries) and translate it with --data");
  // Pieces never contain whitespace, so the dictionary's whitespace split recovers them.
  const std::vector<int32_t> ids =
      dict_.encode_line(sentencepiece_ ? model_->encode(line) : line, /*append_eos=*/true);
  EncodedLine out;
  out.ids.assign(ids.begin(), ids.end());
  out.full_length = static_cast<int64_t>(out.ids.size());
  truncate_source(out.ids, max_length, dict_.eos());
  return out;
}

std::string join_sentencepiece(const std::string& pieces) {
  static const std::string kSpace = "\xe2\x96\x81";  // U+2581
  std::string text;
  for (size_t i = 0; i < pieces.size();) {
    if (pieces[i] == ' ') {
      ++i;
    } else if (pieces.compare(i, kSpace.size(), kSpace) == 0) {
      if (!text.empty()) text += ' ';
      i += kSpace.size();
    } else {
      text += pieces[i++];
    }
  }
  return text;
}

std::string TextCodec::decode(const std::vector<int64_t>& ids) const {
  const std::string joined = dict_.to_string(ids);
  if (!sentencepiece_) return joined;
  return model_ ? model_->decode(joined) : join_sentencepiece(joined);
}

}  // namespace csan::generation
