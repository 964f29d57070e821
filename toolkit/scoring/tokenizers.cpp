// char and none, and the factory that maps -tok names to tokenizers.
#include <cstdlib>
#include <fstream>
#include <functional>

#include "toolkit/core/error.h"
#include "toolkit/scoring/tokenizer_spm.h"
#include "toolkit/scoring/tokenizers.h"
#include "toolkit/scoring/unicode.h"

namespace csan::scoring {
namespace {

class Tokenizer13a : public Tokenizer {
 public:
  std::string signature() const override { return "13a"; }
  std::u32string operator()(std::u32string_view line) const override { return tokenize_13a(line); }
  std::string tokenize_utf8(std::string_view line) const override { return tokenize_13a(line); }
  bool single_spaced() const override { return true; }
};

class NoneTokenizer : public Tokenizer {
 public:
  std::string signature() const override { return "none"; }
  std::u32string operator()(std::u32string_view line) const override { return std::u32string(line); }
  std::string tokenize_utf8(std::string_view line) const override { return std::string(line); }
};

class FunctionTokenizer : public Tokenizer {
 public:
  using Function = std::u32string (*)(std::u32string_view);
  FunctionTokenizer(std::string signature, Function function, bool single_spaced)
      : signature_(std::move(signature)), function_(function), single_spaced_(single_spaced) {}
  std::string signature() const override { return signature_; }
  std::u32string operator()(std::u32string_view line) const override { return function_(line); }
  bool single_spaced() const override { return single_spaced_; }

 private:
  std::string signature_;
  Function function_;
  bool single_spaced_;
};

struct SpmVariant {
  const char* name;
  const char* signature;
  const char* file;  // the base name sacreBLEU downloads the model to
};

const SpmVariant kSpmVariants[] = {
    {"spm", "flores101", "sacrebleu_tokenizer_spm.model"},
    {"flores101", "flores101", "sacrebleu_tokenizer_spm.model"},
    {"flores200", "flores200", "flores200sacrebleuspm"},
    {"spBLEU-1K", "spBLEU-1K", "spbleu-1k_tokenizer_spm.model"},
};

bool file_exists(const std::string& path) { return std::ifstream(path).good(); }

// Where sacreBLEU would have cached the model: $SACREBLEU/models or ~/.sacrebleu/models.
std::string cached_model_path(const char* file) {
  std::string dir;
  if (const char* env = std::getenv("SACREBLEU")) {
    dir = env;
  } else if (const char* home = std::getenv("HOME")) {
    dir = std::string(home) + "/.sacrebleu";
  } else {
    return "";
  }
  return dir + "/models/" + file;
}

}  // namespace

std::string Tokenizer::tokenize_utf8(std::string_view line) const { return to_utf8((*this)(to_u32(line))); }

std::u32string tokenize_char(std::u32string_view line) {
  std::u32string out;
  out.reserve(line.size() * 2);
  for (char32_t c : line) {
    if (!out.empty()) out.push_back(U' ');
    out.push_back(c);
  }
  return out;
}

std::unique_ptr<Tokenizer> make_tokenizer(const std::string& name, const std::string& spm_model) {
  if (name == "13a") return std::make_unique<Tokenizer13a>();
  if (name == "intl") return std::make_unique<FunctionTokenizer>("intl", tokenize_intl, true);
  if (name == "zh") return std::make_unique<FunctionTokenizer>("zh", tokenize_zh, true);
  if (name == "char") return std::make_unique<FunctionTokenizer>("char", tokenize_char, false);
  if (name == "none") return std::make_unique<NoneTokenizer>();
  for (const SpmVariant& variant : kSpmVariants) {
    if (name != variant.name) continue;
    std::string path = spm_model;
    if (path.empty()) {
      std::string cached = cached_model_path(variant.file);
      if (cached.empty() || !file_exists(cached)) {
        throw Error::for_key("tokenize", "tokenizer '" + name +
                             "' needs a SentencePiece model file (sacreBLEU's " + variant.file +
                             "); nothing can be downloaded, so give its path");
      }
      path = cached;
    } else if (!file_exists(path)) {
      throw Error(path + ": SentencePiece model file not found", ErrorKind::missing_file);
    }
    return std::make_unique<SpmTokenizer>(path, variant.signature);
  }
  throw Error::for_key("tokenize", "unknown tokenizer '" + name +
                       "' (choose from 13a, intl, zh, char, none, spm, flores101, flores200, spBLEU-1K)");
}

}  // namespace csan::scoring
