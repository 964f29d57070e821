// mteval-v13a, as sacreBLEU's default BLEU tokenizer.
#include "toolkit/scoring/regex_steps.h"
#include "toolkit/scoring/tokenizers.h"
#include "toolkit/scoring/unicode.h"

namespace csan::scoring {
namespace {

// Whether c could be (the first byte of) a non-ASCII whitespace character. In UTF-8
// those all start with 0xC2, 0xE1, 0xE2 or 0xE3, bytes that never occur inside others.
inline bool may_start_non_ascii_space(char c) {
  auto byte = static_cast<unsigned char>(c);
  return byte == 0xC2 || byte == 0xE1 || byte == 0xE2 || byte == 0xE3;
}
inline bool may_start_non_ascii_space(char32_t c) { return c >= 0x80 && is_space(c); }

// Every step matches ASCII only, so the same code runs on code points and on UTF-8.
template <class Char>
std::basic_string<Char> tokenize_13a_text(std::basic_string_view<Char> line) {
  // Common case first: no '<', '&' or newline, so only the punctuation passes apply,
  // and with no non-ASCII whitespace the final split-and-join folds into them.
  bool plain = true, ascii_whitespace = true;
  for (Char c : line) {
    plain &= c != Char('<') && c != Char('&') && c != Char('\n');
    ascii_whitespace &= !may_start_non_ascii_space(c);
  }
  if (plain) {
    static thread_local std::basic_string<Char> padded;
    padded.assign(1, Char(' '));
    padded.append(line);
    padded.push_back(Char(' '));
    if (ascii_whitespace) return mteval_punctuation_steps_joined<Char>(padded);
    return join_split(mteval_punctuation_steps_view<Char>(padded));
  }
  using View = std::basic_string_view<Char>;
  static const Char skipped[] = {'<', 's', 'k', 'i', 'p', 'p', 'e', 'd', '>', 0};
  static const Char quot[] = {'&', 'q', 'u', 'o', 't', ';', 0};
  static const Char amp[] = {'&', 'a', 'm', 'p', ';', 0};
  static const Char lt[] = {'&', 'l', 't', ';', 0};
  static const Char gt[] = {'&', 'g', 't', ';', 0};
  static const Char hyphen_newline[] = {'-', '\n', 0};
  auto literal = [](const Char* text, size_t length) { return View(text, length); };
  auto single = [](char c) { return std::basic_string<Char>(1, Char(c)); };

  std::basic_string<Char> text(line);
  if (text.find(literal(skipped, 9)) != View::npos) text = replace_all<Char>(text, literal(skipped, 9), View());
  if (text.find(Char('\n')) != View::npos) {
    text = replace_all<Char>(text, literal(hyphen_newline, 2), View());
    text = replace_all<Char>(text, single('\n'), single(' '));
  }
  // Sequential, and only when '&' is present: "&amp;lt;" becomes "<", "&amp;quot;" stays.
  if (text.find(Char('&')) != View::npos) {
    text = replace_all<Char>(text, literal(quot, 6), single('"'));
    text = replace_all<Char>(text, literal(amp, 5), single('&'));
    text = replace_all<Char>(text, literal(lt, 4), single('<'));
    text = replace_all<Char>(text, literal(gt, 4), single('>'));
  }
  // The padding lets a final "5." split, unlike intl and zh.
  text.insert(text.begin(), Char(' '));
  text.push_back(Char(' '));
  return join_split(mteval_punctuation_steps_view<Char>(text));
}

}  // namespace

std::u32string tokenize_13a(std::u32string_view line) { return tokenize_13a_text<char32_t>(line); }

std::string tokenize_13a(std::string_view utf8_line) { return tokenize_13a_text<char>(utf8_line); }

}  // namespace csan::scoring
