// A shared module built from the csan library, for python_interop_test.py: Python loads it
// with ctypes beside torch (and Debian's sentencepiece module) and calls its C functions,
// each of which runs SentencePiece, LibTorch and the scorer. The seed of the Python package:
// its static libraries are compiled position-independent, and it exports only these
// functions (CMake hides everything else, the static libraries' symbols included).
#include <torch/torch.h>

#include <cstring>
#include <exception>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "toolkit/core/text_file.h"
#include "toolkit/scoring/bleu.h"
#include "toolkit/scoring/resampling.h"
#include "toolkit/text/sentencepiece.h"

namespace {

// Copies `text` into out (NUL-terminated, cut to out_size - 1 bytes); returns `status`.
int answer(int status, const std::string& text, char* out, size_t out_size) {
  if (out_size == 0) return status;
  const size_t n = std::min(text.size(), out_size - 1);
  std::memcpy(out, text.data(), n);
  out[n] = '\0';
  return status;
}

}  // namespace

extern "C" {

// Trains a unigram SentencePiece model of `vocab_size` pieces on the lines of `corpus_path`
// and writes it to `model_path`. Returns 0, or 1 with the error in `out`.
__attribute__((visibility("default"))) int csan_interop_train(const char* corpus_path, const char* model_path,
                                                               int vocab_size, char* out, size_t out_size) {
  try {
    const std::vector<std::string> lines = csan::read_lines(corpus_path);
    csan::text::SentencePieceTrainOptions options;
    options.vocab_size = vocab_size;
    csan::text::SentencePieceModel::train({&lines}, options).save(model_path);
    return answer(0, "", out, out_size);
  } catch (const std::exception& e) {
    return answer(1, e.what(), out, out_size);
  }
}

// Encodes `text` with the model at `model_path`, sums the piece ids with LibTorch, decodes
// the pieces back and scores the decoded text against `text` with BLEU on the model's
// pieces (sacreBLEU's spm tokenizer). Writes {"pieces": [...], "ids": [...], "torch_sum": N,
// "decoded": "...", "bleu": B} to `out` and returns 0, or 1 with the error in `out`.
__attribute__((visibility("default"))) int csan_interop_run(const char* model_path, const char* text, char* out,
                                                             size_t out_size) {
  try {
    const auto model = csan::text::SentencePieceModel::load(model_path);
    const std::vector<std::string> pieces = model.encode(text);
    std::vector<int> ids;
    model.encode_ids(text, ids);
    const auto sum = torch::tensor(std::vector<int64_t>(ids.begin(), ids.end()), torch::kLong).sum();
    const std::string decoded = model.decode(pieces);

    csan::scoring::BleuOptions options;
    options.tokenize = "spm";
    options.spm_model = model_path;
    const csan::scoring::Bleu bleu(options);
    const double score = bleu.score(csan::scoring::sum_stats(bleu.segment_stats({decoded}, {{text}})));

    const nlohmann::json result = {{"pieces", pieces}, {"ids", ids}, {"torch_sum", sum.item<int64_t>()},
                                   {"decoded", decoded}, {"bleu", score}};
    return answer(0, result.dump(), out, out_size);
  } catch (const std::exception& e) {
    return answer(1, e.what(), out, out_size);
  }
}

}  // extern "C"
