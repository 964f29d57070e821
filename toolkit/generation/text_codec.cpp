#include "toolkit/generation/text_codec.h"

#include <algorithm>

#include "toolkit/core/text_file.h"
#include "toolkit/core/utf8.h"

namespace csan::generation {

void truncate_source(std::vector<int64_t>& ids, int64_t max_length, int64_t eos) {
  if (max_length <= 0 || static_cast<int64_t>(ids.size()) <= max_length) return;
  ids.resize(max_length);
  ids.back() = eos;
}

EncodedLine TextCodec::encode(const std::string& line, const std::string& origin, long line_number,
                              int64_t max_length) const {
  check_utf8_line(origin, line_number, line);
  const std::vector<int32_t> ids =
      model_ ? dict_.encode(model_->encode(line), /*append_eos=*/true) : dict_.encode_line(line, /*append_eos=*/true);
  EncodedLine out;
  out.ids.assign(ids.begin(), ids.end());
  out.full_length = static_cast<int64_t>(out.ids.size());
  truncate_source(out.ids, max_length, dict_.eos());
  return out;
}

std::string TextCodec::decode(const std::vector<int64_t>& ids) const {
  if (!model_) return dict_.to_string(ids);
  if (!marian_text_) return model_->decode(dict_.symbols(ids));
  std::vector<std::string> pieces = dict_.symbols(ids);
  pieces.erase(std::remove(pieces.begin(), pieces.end(), dict_.symbol(dict_.unk())), pieces.end());
  // Python's text.replace("\u2581", " ").strip(): strip() takes every Unicode white space.
  std::u32string text = utf8::decode(model_->decode(pieces));
  std::replace(text.begin(), text.end(), U'\u2581', U' ');
  auto white = [](char32_t c) {
    return (c >= 0x09 && c <= 0x0d) || (c >= 0x1c && c <= 0x20) || c == 0x85 || c == 0xa0 || c == 0x1680 ||
           (c >= 0x2000 && c <= 0x200a) || c == 0x2028 || c == 0x2029 || c == 0x202f || c == 0x205f || c == 0x3000;
  };
  const auto first = std::find_if_not(text.begin(), text.end(), white);
  const auto last = std::find_if_not(text.rbegin(), text.rend(), white).base();
  return first < last ? utf8::encode(std::u32string(first, last)) : "";
}

std::vector<int64_t> TextCodec::units(const std::vector<int64_t>& ids, bool words) const {
  static const std::string kWordStart = "\u2581";
  std::vector<int64_t> out(ids.size(), -1);
  int64_t unit = -1;
  for (size_t i = 0; i < ids.size(); ++i) {
    const int64_t id = ids[i];
    if (id == dict_.eos() || id == dict_.pad() || id == dict_.bos()) continue;
    if (!words || !model_ || unit < 0 || dict_.symbol(static_cast<int>(id)).compare(0, kWordStart.size(), kWordStart) == 0) ++unit;
    out[i] = unit;
  }
  return out;
}

}  // namespace csan::generation
