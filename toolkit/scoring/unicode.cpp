#include "toolkit/scoring/unicode.h"

#include <algorithm>
#include <array>
#include <cstdint>

#include "toolkit/core/error.h"
#include "toolkit/core/utf8.h"
#include "toolkit/scoring/unicode_tables.h"

namespace csan::scoring {
namespace {

enum Flag : uint8_t {
  kSpace = 1,
  kPunct = 2,
  kSymbol = 4,
  kNumber = 8,
  kCased = 16,
  kCaseIgnorable = 32,
};

bool in_ranges(const tables::CodeRange* ranges, size_t size, char32_t c) {
  const tables::CodeRange* end = ranges + size;
  const tables::CodeRange* it = std::upper_bound(
      ranges, end, c, [](char32_t value, const tables::CodeRange& r) { return value < r.first; });
  return it != ranges && c <= (it - 1)->last;
}

// The BMP is looked up in flat tables (built once); the rest by binary search.
struct BmpTables {
  std::array<uint8_t, 0x10000> flags{};
  std::array<char16_t, 0x10000> lower{};

  BmpTables() {
    auto mark = [&](const tables::CodeRange* ranges, size_t size, uint8_t flag) {
      for (size_t i = 0; i < size; ++i) {
        for (char32_t c = ranges[i].first; c <= ranges[i].last && c < 0x10000; ++c) flags[c] |= flag;
      }
    };
    mark(tables::whitespace, tables::whitespace_size, kSpace);
    mark(tables::punctuation, tables::punctuation_size, kPunct);
    mark(tables::symbol, tables::symbol_size, kSymbol);
    mark(tables::number, tables::number_size, kNumber);
    mark(tables::cased, tables::cased_size, kCased);
    mark(tables::case_ignorable, tables::case_ignorable_size, kCaseIgnorable);
    for (size_t c = 0; c < lower.size(); ++c) lower[c] = static_cast<char16_t>(c);
    for (size_t i = 0; i < tables::lower_simple_size; ++i) {
      const auto& pair = tables::lower_simple[i];
      if (pair.from < 0x10000) lower[pair.from] = static_cast<char16_t>(pair.to);
    }
  }
};

const BmpTables& bmp() {
  static const BmpTables instance;
  return instance;
}

bool has_flag(char32_t c, uint8_t flag, const tables::CodeRange* ranges, size_t size) {
  if (c < 0x10000) return (bmp().flags[c] & flag) != 0;
  return in_ranges(ranges, size, c);
}

char32_t lower_one(char32_t c) {
  if (c < 0x10000) return bmp().lower[c];
  const tables::LowerPair* begin = tables::lower_simple;
  const tables::LowerPair* end = begin + tables::lower_simple_size;
  const tables::LowerPair* it = std::lower_bound(
      begin, end, c, [](const tables::LowerPair& p, char32_t value) { return p.from < value; });
  return (it != end && it->from == c) ? it->to : c;
}

bool is_cased(char32_t c) { return has_flag(c, kCased, tables::cased, tables::cased_size); }
bool is_case_ignorable(char32_t c) {
  return has_flag(c, kCaseIgnorable, tables::case_ignorable, tables::case_ignorable_size);
}

// Python's Final_Sigma test: a cased letter before (skipping case-ignorables) and none
// after (same skipping).
bool is_final_sigma(std::u32string_view s, size_t pos) {
  size_t i = pos;
  while (i > 0 && is_case_ignorable(s[i - 1])) --i;
  if (i == 0 || !is_cased(s[i - 1])) return false;
  size_t j = pos + 1;
  while (j < s.size() && is_case_ignorable(s[j])) ++j;
  return j == s.size() || !is_cased(s[j]);
}

}  // namespace

bool is_space(char32_t c) {
  if (c < 0x80) return (c >= 9 && c <= 13) || (c >= 28 && c <= 32);
  return has_flag(c, kSpace, tables::whitespace, tables::whitespace_size);
}
bool is_punctuation(char32_t c) {
  return has_flag(c, kPunct, tables::punctuation, tables::punctuation_size);
}
bool is_symbol(char32_t c) { return has_flag(c, kSymbol, tables::symbol, tables::symbol_size); }
bool is_number(char32_t c) { return has_flag(c, kNumber, tables::number, tables::number_size); }

std::u32string lower(std::u32string_view s) {
  std::u32string out(s.size() + 8, U'\0');
  size_t o = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    if (o + 2 > out.size()) out.resize(2 * out.size());  // U+0130 grows by one
    char32_t c = s[i];
    if (c < 0x80) {
      out[o++] = (c >= 'A' && c <= 'Z') ? c + 32 : c;
    } else if (c == tables::lower_expanding_from) {
      out[o++] = tables::lower_expanding_to[0];
      out[o++] = tables::lower_expanding_to[1];
    } else if (c == 0x3A3) {
      out[o++] = is_final_sigma(s, i) ? 0x3C2 : 0x3C3;
    } else {
      out[o++] = lower_one(c);
    }
  }
  out.resize(o);
  return out;
}

std::vector<std::u32string_view> split(std::u32string_view s) {
  std::vector<std::u32string_view> words;
  auto space = [](char32_t c) {
    return c < 0x80 ? (c >= 9 && c <= 13) || (c >= 28 && c <= 32) : is_space(c);
  };
  const size_t n = s.size();
  size_t i = 0;
  while (i < n) {
    while (i < n && space(s[i])) ++i;
    size_t start = i;
    while (i < n && !space(s[i])) ++i;
    if (i > start) words.push_back(s.substr(start, i - start));
  }
  return words;
}

std::u32string_view rstrip(std::u32string_view s) {
  size_t end = s.size();
  while (end > 0 && is_space(s[end - 1])) --end;
  return s.substr(0, end);
}

std::u32string_view strip(std::u32string_view s) {
  s = rstrip(s);
  size_t start = 0;
  while (start < s.size() && is_space(s[start])) ++start;
  return s.substr(start);
}

std::u32string join_split(std::u32string_view s) {
  std::u32string out;
  out.reserve(s.size());
  for (std::u32string_view word : split(s)) {
    if (!out.empty()) out.push_back(U' ');
    out.append(word);
  }
  return out;
}

namespace {

// Length of the UTF-8 whitespace character starting at s[i], or 0 if it is not one.
size_t space_length_at(std::string_view s, size_t i) {
  auto byte = static_cast<unsigned char>(s[i]);
  if (byte < 0x80) return is_space(byte) ? 1 : 0;
  // Non-ASCII whitespace starts with one of these lead bytes (U+0085, U+00A0, U+1680,
  // U+2000-U+205F, U+3000); anything else (continuations, other letters) is not one.
  if (byte != 0xC2 && byte != 0xE1 && byte != 0xE2 && byte != 0xE3) return 0;
  size_t length = byte >= 0xF0 ? 4 : byte >= 0xE0 ? 3 : 2;
  if (i + length > s.size()) return 0;
  char32_t c = byte & (0x7F >> length);
  for (size_t k = 1; k < length; ++k) c = (c << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3F);
  return is_space(c) ? length : 0;
}

}  // namespace

std::vector<std::string_view> split(std::string_view s) {
  std::vector<std::string_view> words;
  split_into(s, words);
  return words;
}

void split_into(std::string_view s, std::vector<std::string_view>& words) {
  words.clear();
  const size_t n = s.size();
  size_t i = 0;
  // Bytes 0x09-0x0D, 0x1C-0x20 are ASCII whitespace; bytes >= 0x80 go the slow way.
  auto ascii_space = [](unsigned char b) { return (b >= 0x09 && b <= 0x0D) || (b >= 0x1C && b <= 0x20); };
  while (i < n) {
    while (i < n) {
      auto byte = static_cast<unsigned char>(s[i]);
      if (byte < 0x80) {
        if (!ascii_space(byte)) break;
        ++i;
      } else {
        size_t skip = space_length_at(s, i);
        if (skip == 0) break;
        i += skip;
      }
    }
    size_t start = i;
    while (i < n) {
      auto byte = static_cast<unsigned char>(s[i]);
      if (byte < 0x80) {
        if (ascii_space(byte)) break;
        ++i;
      } else {
        if (space_length_at(s, i) != 0) break;
        i += byte >= 0xF0 ? 4 : byte >= 0xE0 ? 3 : 2;
      }
    }
    if (i > start) words.push_back(s.substr(start, std::min(i, n) - start));
  }
}

std::string_view rstrip(std::string_view s) {
  size_t end = s.size();
  while (end > 0) {
    size_t start = end - 1;
    while (start > 0 && (static_cast<unsigned char>(s[start]) & 0xC0) == 0x80) --start;
    if (space_length_at(s, start) != end - start) break;
    end = start;
  }
  return s.substr(0, end);
}

std::string join_split(std::string_view s) {
  // One pass writing through a pointer: this runs on every line of BLEU's 13a path.
  std::string out(s.size(), '\0');
  char* const begin = out.data();
  char* o = begin;
  const size_t n = s.size();
  size_t i = 0;
  bool pending_space = false;  // a separator is due before the next word character
  while (i < n) {
    auto byte = static_cast<unsigned char>(s[i]);
    if (byte < 0x80) {
      if ((byte >= 0x09 && byte <= 0x0D) || (byte >= 0x1C && byte <= 0x20)) {
        pending_space = o != begin;
      } else {
        if (pending_space) *o++ = ' ';
        pending_space = false;
        *o++ = static_cast<char>(byte);
      }
      ++i;
      continue;
    }
    size_t length = byte >= 0xF0 ? 4 : byte >= 0xE0 ? 3 : 2;
    if (space_length_at(s, i) != 0) {
      pending_space = o != begin;
    } else {
      if (pending_space) *o++ = ' ';
      pending_space = false;
      for (size_t k = 0; k < length && i + k < n; ++k) *o++ = s[i + k];
    }
    i += length;
  }
  out.resize(static_cast<size_t>(o - begin));
  return out;
}

std::u32string to_u32(std::string_view utf8) {
  size_t bad = utf8::find_invalid(utf8);
  if (bad != std::string_view::npos) {
    throw Error("invalid UTF-8 at byte " + std::to_string(bad) + " of a segment", ErrorKind::bad_input);
  }
  return utf8::decode(utf8);
}

std::string to_utf8(std::u32string_view s) { return utf8::encode(s); }

}  // namespace csan::scoring
