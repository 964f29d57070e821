// sacreBLEU's BLEU tokenizers (-tok): each maps one line to the exact string sacreBLEU
// produces; BLEU then splits it on whitespace.
#pragma once

#include <memory>
#include <string>
#include <string_view>

namespace csan::scoring {

class Tokenizer {
 public:
  virtual ~Tokenizer() = default;
  // The tok:... value of the signature.
  virtual std::string signature() const = 0;
  virtual std::u32string operator()(std::u32string_view line) const = 0;
  // The same on valid UTF-8; tokenizers that only look at ASCII classes override it to
  // skip the conversion to code points.
  virtual std::string tokenize_utf8(std::string_view line) const;
  // True when the output is always words joined by single ASCII spaces (the tokenizer
  // ends with a whitespace split and join), so it can be split on ' ' alone.
  virtual bool single_spaced() const { return false; }
};

std::u32string tokenize_13a(std::u32string_view line);
std::string tokenize_13a(std::string_view utf8_line);
std::u32string tokenize_intl(std::u32string_view line);
std::u32string tokenize_zh(std::u32string_view line);
std::u32string tokenize_char(std::u32string_view line);
// Code points the zh tokenizer isolates, including sacreBLEU's mis-written ranges.
bool is_zh_isolated(char32_t c);

// name: 13a, intl, zh, char, none, or a SentencePiece tokenizer (spm, flores101,
// flores200, spBLEU-1K) that needs spm_model or the file sacreBLEU would have
// downloaded into $SACREBLEU/models (default ~/.sacrebleu/models).
// Throws csan::Error for an unknown name or a missing model.
std::unique_ptr<Tokenizer> make_tokenizer(const std::string& name, const std::string& spm_model = "");

}  // namespace csan::scoring
