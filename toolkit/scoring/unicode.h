// The Unicode primitives sacreBLEU gets from Python: code-point strings, str.isspace(),
// str.split()/rstrip()/strip(), str.lower() (Unicode 14.0, final sigma, U+0130), and the
// regex module's \p{P}, \p{S}, \p{N} (Unicode 15.0) used by the intl tokenizer.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace csan::scoring {

bool is_space(char32_t c);
bool is_punctuation(char32_t c);  // General_Category P*
bool is_symbol(char32_t c);       // General_Category S*
bool is_number(char32_t c);       // General_Category N*

// Python str.lower() on a whole string (context matters for capital sigma).
std::u32string lower(std::u32string_view s);

// Python str.split() with no argument: views into `s`.
std::vector<std::u32string_view> split(std::u32string_view s);
std::u32string_view rstrip(std::u32string_view s);
std::u32string_view strip(std::u32string_view s);
// ' '.join(s.split()).
std::u32string join_split(std::u32string_view s);

// The same on UTF-8 text (the fast path of the default BLEU tokenizer); the input must
// be valid UTF-8.
std::vector<std::string_view> split(std::string_view utf8);
void split_into(std::string_view utf8, std::vector<std::string_view>& words);  // reuses `words`
std::string_view rstrip(std::string_view utf8);
std::string join_split(std::string_view utf8);

// UTF-8 <-> code points; to_u32 throws csan::Error on invalid UTF-8.
std::u32string to_u32(std::string_view utf8);
std::string to_utf8(std::u32string_view s);

}  // namespace csan::scoring
