// The regular-expression substitutions that 13a, zh and the TER normaliser share,
// written as Python re.sub would run them: one left-to-right pass whose matches never
// overlap, so "a.,b" needs two passes and keeps the leftover pair glued.
//
// They work on code points (std::u32string) and, for 13a's fast path, on UTF-8 bytes
// (std::string): every class here is ASCII, a multi-byte character's bytes are all
// >= 0x80 and so fall in exactly the negated classes the whole character would, and
// no pattern can match inside one, so both give the same text.
#pragma once

#include <cstdint>
#include <string>
#include <type_traits>
#include <string_view>

namespace csan::scoring {

// mteval's punctuation class [{-~[-` -&(-+:-@/]: ASCII punctuation except ' , - .
template <class Char>
inline bool is_p13(Char ch) {
  auto c = static_cast<uint32_t>(static_cast<std::make_unsigned_t<Char>>(ch));
  return (c >= 0x7B && c <= 0x7E) || (c >= 0x5B && c <= 0x60) || (c >= 0x20 && c <= 0x26) ||
         (c >= 0x28 && c <= 0x2B) || (c >= 0x3A && c <= 0x40) || c == '/';
}
template <class Char>
inline bool is_ascii_digit(Char c) {
  return c >= Char('0') && c <= Char('9');
}
template <class Char>
inline bool is_period_or_comma(Char c) {
  return c == Char('.') || c == Char(',');
}

// str.replace(from, to): every non-overlapping occurrence, left to right.
template <class Char>
std::basic_string<Char> replace_all(std::basic_string_view<Char> s, std::basic_string_view<Char> from,
                                    std::basic_string_view<Char> to) {
  std::basic_string<Char> out;
  out.reserve(s.size());
  size_t pos = 0;
  while (true) {
    size_t hit = s.find(from, pos);
    if (hit == std::basic_string_view<Char>::npos) break;
    out.append(s.substr(pos, hit - pos));
    out.append(to);
    pos = hit + from.size();
  }
  out.append(s.substr(pos));
  return out;
}
inline std::u32string replace_all(std::u32string_view s, std::u32string_view from, std::u32string_view to) {
  return replace_all<char32_t>(s, from, to);
}
inline std::string replace_all(std::string_view s, std::string_view from, std::string_view to) {
  return replace_all<char>(s, from, to);
}

// re.sub(r"(X)", r" \1 ", s) for a one-character class X.
template <class Char, class Predicate>
std::basic_string<Char> pad_each(std::basic_string_view<Char> s, Predicate in_class) {
  std::basic_string<Char> out;
  out.reserve(s.size() + 16);
  for (Char c : s) {
    if (in_class(c)) {
      out.push_back(Char(' '));
      out.push_back(c);
      out.push_back(Char(' '));
    } else {
      out.push_back(c);
    }
  }
  return out;
}
template <class Predicate>
std::u32string pad_each(std::u32string_view s, Predicate in_class) {
  return pad_each<char32_t>(s, in_class);
}

// re.sub(r"(X)(Y)", <put spaces>, s) for one-character classes X and Y: a match becomes
// "x y " (space_before false) or " x y" (space_before true), the two 13a shapes.
template <class Char, class First, class Second>
std::basic_string<Char> split_pairs(std::basic_string_view<Char> s, First first, Second second,
                                    bool space_before) {
  std::basic_string<Char> out;
  out.reserve(s.size() + 16);
  size_t i = 0;
  while (i < s.size()) {
    if (i + 1 < s.size() && first(s[i]) && second(s[i + 1])) {
      if (space_before) out.push_back(Char(' '));
      out.push_back(s[i]);
      out.push_back(Char(' '));
      out.push_back(s[i + 1]);
      if (!space_before) out.push_back(Char(' '));
      i += 2;
    } else {
      out.push_back(s[i]);
      ++i;
    }
  }
  return out;
}
template <class First, class Second>
std::u32string split_pairs(std::u32string_view s, First first, Second second, bool space_before) {
  return split_pairs<char32_t>(s, first, second, space_before);
}

// 13a steps 5-8: pad P13, split ". ," from non-digits on either side, split "digit-".
template <class Char>
std::basic_string<Char> mteval_punctuation_steps(std::basic_string_view<Char> s) {
  auto not_digit = [](Char c) { return !is_ascii_digit(c); };
  auto dash = [](Char c) { return c == Char('-'); };
  std::basic_string<Char> text = pad_each<Char>(s, is_p13<Char>);
  text = split_pairs<Char>(text, not_digit, is_period_or_comma<Char>, false);
  text = split_pairs<Char>(text, is_period_or_comma<Char>, not_digit, true);
  return split_pairs<Char>(text, is_ascii_digit<Char>, dash, false);
}
inline std::u32string mteval_punctuation_steps(std::u32string_view s) {
  return mteval_punctuation_steps<char32_t>(s);
}

}  // namespace csan::scoring
