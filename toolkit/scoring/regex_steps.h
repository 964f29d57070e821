// The regular-expression substitutions that 13a, zh and the TER normaliser share,
// written as Python re.sub would run them: one left-to-right pass whose matches never
// overlap, so "a.,b" needs two passes and keeps the leftover pair glued.
#pragma once

#include <string>
#include <string_view>

namespace csan::scoring {

// mteval's punctuation class [{-~[-` -&(-+:-@/]: ASCII punctuation except ' , - .
bool is_p13(char32_t c);
inline bool is_ascii_digit(char32_t c) { return c >= U'0' && c <= U'9'; }

// str.replace(from, to): every non-overlapping occurrence, left to right.
std::u32string replace_all(std::u32string_view s, std::u32string_view from, std::u32string_view to);
// re.sub(r"(X)", r" \1 ", s) for a one-character class X.
template <class Predicate>
std::u32string pad_each(std::u32string_view s, Predicate in_class) {
  std::u32string out;
  out.reserve(s.size() + 8);
  for (char32_t c : s) {
    if (in_class(c)) {
      out.push_back(U' ');
      out.push_back(c);
      out.push_back(U' ');
    } else {
      out.push_back(c);
    }
  }
  return out;
}
// re.sub(r"(X)(Y)", <put spaces>, s) for one-character classes X and Y: a match becomes
// "x y " (space_before false) or " x y" (space_before true), the two 13a shapes.
template <class First, class Second>
std::u32string split_pairs(std::u32string_view s, First first, Second second, bool space_before) {
  std::u32string out;
  out.reserve(s.size() + 8);
  size_t i = 0;
  while (i < s.size()) {
    if (i + 1 < s.size() && first(s[i]) && second(s[i + 1])) {
      if (space_before) out.push_back(U' ');
      out.push_back(s[i]);
      out.push_back(U' ');
      out.push_back(s[i + 1]);
      if (!space_before) out.push_back(U' ');
      i += 2;
    } else {
      out.push_back(s[i]);
      ++i;
    }
  }
  return out;
}

// 13a steps 5-8 (pad P13, split ". ," from non-digits on either side, split "digit-").
std::u32string mteval_punctuation_steps(std::u32string_view s);

}  // namespace csan::scoring
