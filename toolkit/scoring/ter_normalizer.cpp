#include "toolkit/scoring/ter_normalizer.h"

#include "toolkit/scoring/regex_steps.h"
#include "toolkit/scoring/unicode.h"

namespace csan::scoring {
namespace {

bool is_asian_punctuation(char32_t c) {
  return c == 0x3001 || c == 0x3002 || (c >= 0x3008 && c <= 0x3011) || (c >= 0x3014 && c <= 0x301F) ||
         (c >= 0xFF61 && c <= 0xFF65) || c == 0x30FB;
}

bool is_full_width_punctuation(char32_t c) {
  switch (c) {
    case 0xFF0E: case 0xFF0C: case 0xFF1F: case 0xFF1A: case 0xFF1B:
    case 0xFF01: case 0xFF02: case 0xFF08: case 0xFF09:
      return true;
    default:
      return false;
  }
}

// Tercom's CJK blocks. The kana rules of the original are anchored so that they can
// never match after the western step's padding, so they are left out.
bool is_cjk_isolated(char32_t c) {
  return (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0x3400 && c <= 0x4DBF) || (c >= 0x31C0 && c <= 0x31EF) ||
         (c >= 0x2E80 && c <= 0x2EFF) || (c >= 0x3300 && c <= 0x33FF) || (c >= 0xF900 && c <= 0xFAFF) ||
         (c >= 0xFE30 && c <= 0xFE4F) || (c >= 0x3200 && c <= 0x3F22) || is_asian_punctuation(c) ||
         is_full_width_punctuation(c);
}

bool is_removed_punctuation(char32_t c) {
  switch (c) {
    case U'.': case U',': case U'?': case U':': case U';': case U'!': case U'"': case U'(': case U')':
      return true;
    default:
      return false;
  }
}

std::u32string normalize_western(std::u32string_view line) {
  std::u32string text = replace_all(line, U"\n-", U"");
  text = replace_all(text, U"\n", U" ");
  text = replace_all(text, U"&quot;", U"\"");
  text = replace_all(text, U"&amp;", U"&");
  text = replace_all(text, U"&lt;", U"<");
  text = replace_all(text, U"&gt;", U">");
  text = pad_each(U" " + text + U" ", is_p13<char32_t>);
  text = replace_all(text, U"'s ", U" 's ");
  // Tercom's "'s$" rule cannot fire here: the padding above leaves a final space.
  auto not_digit = [](char32_t c) { return !is_ascii_digit(c); };
  auto period_or_comma = [](char32_t c) { return c == U'.' || c == U','; };
  text = split_pairs(text, not_digit, period_or_comma, false);
  text = split_pairs(text, period_or_comma, not_digit, true);
  return split_pairs(text, is_ascii_digit<char32_t>, [](char32_t c) { return c == U'-'; }, false);
}

}  // namespace

std::u32string ter_normalize(std::u32string_view line, const TerNormalizerOptions& options) {
  std::u32string text(line);
  if (text.empty()) return text;
  if (!options.case_sensitive) text = lower(text);
  if (options.normalized) {
    text = normalize_western(text);
    // Isolating characters is whitespace-only, so the four block passes of the original
    // and its punctuation passes collapse into one pass over their union.
    if (options.asian_support) text = pad_each(text, is_cjk_isolated);
  }
  if (options.no_punct) {
    std::u32string kept;
    kept.reserve(text.size());
    for (char32_t c : text) {
      bool removed = is_removed_punctuation(c) ||
                     (options.asian_support && (is_asian_punctuation(c) || is_full_width_punctuation(c)));
      if (!removed) kept.push_back(c);
    }
    text = std::move(kept);
  }
  return join_split(text);
}

}  // namespace csan::scoring
