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
  // Bit c of this 128-bit mask is set for each member c: 0x20-0x26, 0x28-0x2B, 0x2F,
  // 0x3A-0x40, 0x5B-0x60, 0x7B-0x7E.
  constexpr uint64_t low = 0xFC008F7F00000000ULL;
  constexpr uint64_t high = 0x78000001F8000001ULL;
  auto c = static_cast<uint32_t>(static_cast<std::make_unsigned_t<Char>>(ch));
  if (c >= 128) return false;
  return c < 64 ? (low >> c) & 1 : (high >> (c - 64)) & 1;
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
  // Written through a pointer into a worst-case-sized buffer: this is the hot loop of
  // BLEU's default tokenizer.
  std::basic_string<Char> out(3 * s.size(), Char());
  Char* o = out.data();
  for (Char c : s) {
    if (in_class(c)) {
      o[0] = Char(' ');
      o[1] = c;
      o[2] = Char(' ');
      o += 3;
    } else {
      *o++ = c;
    }
  }
  out.resize(static_cast<size_t>(o - out.data()));
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
  std::basic_string<Char> out(2 * s.size(), Char());  // a match of 2 becomes 4
  Char* o = out.data();
  size_t i = 0;
  const size_t n = s.size();
  while (i < n) {
    if (i + 1 < n && first(s[i]) && second(s[i + 1])) {
      if (space_before) *o++ = Char(' ');
      o[0] = s[i];
      o[1] = Char(' ');
      o[2] = s[i + 1];
      o += 3;
      if (!space_before) *o++ = Char(' ');
      i += 2;
    } else {
      *o++ = s[i++];
    }
  }
  out.resize(static_cast<size_t>(o - out.data()));
  return out;
}

template <class First, class Second>
std::u32string split_pairs(std::u32string_view s, First first, Second second, bool space_before) {
  return split_pairs<char32_t>(s, first, second, space_before);
}

// Streaming forms of the passes, so that 13a's four passes run as one loop over the
// text with no intermediate strings. A pass that sees one character at a time and holds
// back at most one is exactly Python's left-to-right, non-overlapping re.sub for a
// two-character pattern: the held character is tried as X against the next one as Y;
// on a match both are consumed, otherwise the held one is released.
template <class Char>
struct CollectStage {
  Char* out;  // the caller sized the buffer for the worst case
  void push(Char c) { *out++ = c; }
  void flush() {}
};

// Collects while doing ' '.join(text.split()) for text whose only whitespace is ASCII.
template <class Char>
struct AsciiJoinStage {
  Char* begin;
  Char* out;
  bool pending_space = false;
  void push(Char c) {
    if ((c >= Char(0x09) && c <= Char(0x0D)) || (c >= Char(0x1C) && c <= Char(0x20))) {
      pending_space = out != begin;
      return;
    }
    if (pending_space) *out++ = Char(' ');
    pending_space = false;
    *out++ = c;
  }
  void flush() {}
};

// (X)(Y) -> "X Y " (space_before false) or " X Y" (space_before true).
template <class Char, class First, class Second, bool space_before, class Next>
struct PairStage {
  Next& next;
  bool holding = false;
  Char held{};
  void push(Char c) {
    if (holding) {
      if (First{}(held) && Second{}(c)) {
        if (space_before) next.push(Char(' '));
        next.push(held);
        next.push(Char(' '));
        next.push(c);
        if (!space_before) next.push(Char(' '));
        holding = false;
        return;
      }
      next.push(held);
    }
    held = c;
    holding = true;
  }
  void flush() {
    if (holding) next.push(held);
    holding = false;
    next.flush();
  }
};

template <class Char>
struct NotDigit {
  bool operator()(Char c) const { return !is_ascii_digit(c); }
};
template <class Char>
struct Digit {
  bool operator()(Char c) const { return is_ascii_digit(c); }
};
template <class Char>
struct PeriodOrComma {
  bool operator()(Char c) const { return is_period_or_comma(c); }
};
template <class Char>
struct Dash {
  bool operator()(Char c) const { return c == Char('-'); }
};

// Runs 13a steps 5-8 over s into `last` (a CollectStage or AsciiJoinStage).
template <class Char, class Last>
void run_mteval_punctuation_steps(std::basic_string_view<Char> s, Last& last) {
  PairStage<Char, Digit<Char>, Dash<Char>, false, Last> digit_dash{last};
  PairStage<Char, PeriodOrComma<Char>, NotDigit<Char>, true, decltype(digit_dash)> after_period{digit_dash};
  PairStage<Char, NotDigit<Char>, PeriodOrComma<Char>, false, decltype(after_period)> before_period{after_period};
  for (Char c : s) {
    if (is_p13(c)) {
      before_period.push(Char(' '));
      before_period.push(c);
      before_period.push(Char(' '));
    } else {
      before_period.push(c);
    }
  }
  before_period.flush();
}

// Padding at most triples the text and each pair pass at most doubles it.
inline size_t mteval_output_bound(size_t input_size) { return 24 * input_size + 16; }

// 13a steps 5-8: pad P13, split ". ," from non-digits on either side, split "digit-".
// The result is a view into a per-thread buffer, valid until the next call.
template <class Char>
std::basic_string_view<Char> mteval_punctuation_steps_view(std::basic_string_view<Char> s) {
  static thread_local std::basic_string<Char> buffer;
  if (buffer.size() < mteval_output_bound(s.size())) buffer.resize(mteval_output_bound(s.size()));
  CollectStage<Char> collect{buffer.data()};
  run_mteval_punctuation_steps(s, collect);
  return std::basic_string_view<Char>(buffer.data(), static_cast<size_t>(collect.out - buffer.data()));
}

// Steps 5-8 followed by ' '.join(split()), for text whose whitespace is all ASCII.
template <class Char>
std::basic_string<Char> mteval_punctuation_steps_joined(std::basic_string_view<Char> s) {
  static thread_local std::basic_string<Char> buffer;
  if (buffer.size() < mteval_output_bound(s.size())) buffer.resize(mteval_output_bound(s.size()));
  AsciiJoinStage<Char> join{buffer.data(), buffer.data()};
  run_mteval_punctuation_steps(s, join);
  return std::basic_string<Char>(buffer.data(), static_cast<size_t>(join.out - buffer.data()));
}

template <class Char>
std::basic_string<Char> mteval_punctuation_steps(std::basic_string_view<Char> s) {
  return std::basic_string<Char>(mteval_punctuation_steps_view<Char>(s));
}

// The same as four separate passes (the reference the streaming form is tested against).
template <class Char>
std::basic_string<Char> mteval_punctuation_passes(std::basic_string_view<Char> s) {
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
