// The Tercom normaliser sacreBLEU's TER runs on each line (spec section 6.1).
#pragma once

#include <string>
#include <string_view>

namespace csan::scoring {

struct TerNormalizerOptions {
  bool case_sensitive = false;
  bool normalized = false;
  bool no_punct = false;
  bool asian_support = false;
};

// The normalised line, words separated by single spaces. TER rstrips the line before
// calling this (the normaliser itself does not: a trailing tab can block the "'s " rule).
std::u32string ter_normalize(std::u32string_view line, const TerNormalizerOptions& options);

}  // namespace csan::scoring
