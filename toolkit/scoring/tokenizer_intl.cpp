// mteval-v14 "international" tokenizer: Unicode punctuation and symbols.
#include "toolkit/scoring/regex_steps.h"
#include "toolkit/scoring/tokenizers.h"
#include "toolkit/scoring/unicode.h"

namespace csan::scoring {

std::u32string tokenize_intl(std::u32string_view line) {
  auto not_number = [](char32_t c) { return !is_number(c); };
  std::u32string text = split_pairs(line, not_number, is_punctuation, false);
  text = split_pairs(text, is_punctuation, not_number, true);
  return join_split(pad_each(text, is_symbol));
}

}  // namespace csan::scoring
