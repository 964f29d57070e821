// mteval-v13a, as sacreBLEU's default BLEU tokenizer.
#include "toolkit/scoring/regex_steps.h"
#include "toolkit/scoring/tokenizers.h"
#include "toolkit/scoring/unicode.h"

namespace csan::scoring {

std::u32string tokenize_13a(std::u32string_view line) {
  std::u32string text = replace_all(line, U"<skipped>", U"");
  text = replace_all(text, U"-\n", U"");
  text = replace_all(text, U"\n", U" ");
  // Sequential, and only when '&' is present: "&amp;lt;" becomes "<", "&amp;quot;" stays.
  if (text.find(U'&') != std::u32string::npos) {
    text = replace_all(text, U"&quot;", U"\"");
    text = replace_all(text, U"&amp;", U"&");
    text = replace_all(text, U"&lt;", U"<");
    text = replace_all(text, U"&gt;", U">");
  }
  // The padding lets a final "5." split, unlike intl and zh.
  return join_split(mteval_punctuation_steps(U" " + text + U" "));
}

}  // namespace csan::scoring
