#include "toolkit/scoring/regex_steps.h"

namespace csan::scoring {

bool is_p13(char32_t c) {
  return (c >= 0x7B && c <= 0x7E) || (c >= 0x5B && c <= 0x60) || (c >= 0x20 && c <= 0x26) ||
         (c >= 0x28 && c <= 0x2B) || (c >= 0x3A && c <= 0x40) || c == U'/';
}

std::u32string replace_all(std::u32string_view s, std::u32string_view from, std::u32string_view to) {
  std::u32string out;
  out.reserve(s.size());
  size_t pos = 0;
  while (true) {
    size_t hit = s.find(from, pos);
    if (hit == std::u32string_view::npos) break;
    out.append(s.substr(pos, hit - pos));
    out.append(to);
    pos = hit + from.size();
  }
  out.append(s.substr(pos));
  return out;
}

std::u32string mteval_punctuation_steps(std::u32string_view s) {
  auto not_digit = [](char32_t c) { return !is_ascii_digit(c); };
  auto period_or_comma = [](char32_t c) { return c == U'.' || c == U','; };
  std::u32string text = pad_each(s, is_p13);
  text = split_pairs(text, not_digit, period_or_comma, false);
  text = split_pairs(text, period_or_comma, not_digit, true);
  return split_pairs(text, is_ascii_digit, [](char32_t c) { return c == U'-'; }, false);
}

}  // namespace csan::scoring
