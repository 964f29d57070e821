// UTF-8 validation and decoding. Text files are read as strict UTF-8 everywhere so
// that a bad byte is reported with its file and line instead of corrupting a model.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace csan::utf8 {

// Byte offset of the first invalid sequence, or npos if `s` is valid UTF-8
// (overlong forms, surrogates and code points above U+10FFFF are invalid).
size_t find_invalid(std::string_view s);
inline bool is_valid(std::string_view s) { return find_invalid(s) == std::string_view::npos; }

// Decodes valid UTF-8 into code points (call is_valid first for untrusted input).
std::u32string decode(std::string_view s);
void append(std::string& out, char32_t cp);
std::string encode(std::u32string_view s);

// `s` for a one-line message: control characters as \xNN, and at most `longest` bytes of it
// (cut before a multi-byte sequence, then "...") so that valid UTF-8 stays valid.
std::string printable(std::string_view s, size_t longest = std::string_view::npos);

}  // namespace csan::utf8
