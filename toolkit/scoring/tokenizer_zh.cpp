// sacreBLEU's zh tokenizer: isolate "Chinese" characters, then 13a's punctuation steps
// without 13a's padding or entity handling.
#include "toolkit/scoring/regex_steps.h"
#include "toolkit/scoring/tokenizers.h"
#include "toolkit/scoring/unicode.h"

namespace csan::scoring {

bool is_zh_isolated(char32_t c) {
  // sacreBLEU writes the Ext-B and Compatibility-Supplement bounds as 5-digit \u
  // escapes ("\u20000"), which Python reads as a 4-digit escape plus a digit; comparing
  // one character with those strings turns them into U+2001-U+2A6D and U+2F81-U+2FA1
  // (both swallowed by the ranges below) and drops the real U+20000+ ideographs.
  static constexpr char32_t ranges[][2] = {
      {0x2001, 0x2A6D}, {0x2E80, 0x2FDF}, {0x2FF0, 0x303F}, {0x3100, 0x312F}, {0x31A0, 0x31EF},
      {0x3200, 0x4DB5}, {0x4E00, 0x9FBB}, {0xF900, 0xFA2D}, {0xFA30, 0xFA6A}, {0xFA70, 0xFAD9},
      {0xFE10, 0xFE1F}, {0xFE30, 0xFE4F}, {0xFF00, 0xFFEF},
  };
  if (c < 0x2001 || c > 0xFFEF) return false;
  for (const auto& range : ranges) {
    if (c >= range[0] && c <= range[1]) return true;
  }
  return false;
}

std::u32string tokenize_zh(std::u32string_view line) {
  std::u32string text = pad_each(strip(line), is_zh_isolated);
  return join_split(mteval_punctuation_steps(text));
}

}  // namespace csan::scoring
