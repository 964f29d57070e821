// The encode + binarize stages of preprocessing, parallel over std::threads: raw lines
// -> SentencePiece ids -> dictionary ids (+ </s>) -> .bin/.idx. Pieces travel as
// SentencePiece ids rather than strings (the hot path does no string work); the result
// is the same as spm_encode's piece text looked up in dict.txt, as fairseq does it.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "toolkit/text/dictionary.h"
#include "toolkit/text/sentencepiece.h"

namespace csan::data {

// Token ids of many sequences back to back, ready for IndexedDatasetWriter (the tagging
// preprocessor builds its splits the same way).
struct BinarizedSplit {
  std::vector<int32_t> ids;
  std::vector<int32_t> sizes;
  int64_t unknown = 0;  // pieces replaced by <unk>

  int64_t tokens() const { return static_cast<int64_t>(ids.size()); }
  void append(const BinarizedSplit& other);
};

// Writes PREFIX.bin/.idx with fairseq's dtype choice for a vocabulary of `vocab_size`.
void write_dataset(const std::string& prefix, const BinarizedSplit& split, size_t vocab_size);

// Lines processed so far, for a progress display; may be null.
using ProgressCounter = std::atomic<int64_t>;

// Encoded lines of one language. A token >= 0 is a SentencePiece id; a piece the model
// does not know (the surface text of unknown characters) is token -1-k, surfaces[k].
struct PieceCorpus {
  const text::SentencePieceModel* model = nullptr;
  std::vector<int32_t> tokens;
  std::vector<size_t> offsets{0};  // line i is tokens[offsets[i], offsets[i + 1])
  std::vector<std::string> surfaces;

  size_t lines() const { return offsets.size() - 1; }
  int64_t length(size_t i) const { return static_cast<int64_t>(offsets[i + 1] - offsets[i]); }
};

PieceCorpus encode_corpus(const text::SentencePieceModel& model, const std::vector<std::string>& lines,
                          int workers, ProgressCounter* progress = nullptr);

// fairseq's build_dictionary over the kept lines of `corpora` (keep empty: all lines).
text::Dictionary build_dictionary(const std::vector<const PieceCorpus*>& corpora, const std::vector<bool>& keep,
                                  int64_t threshold, int64_t nwords, int padding_factor);

// Dictionary ids (with </s>) of the kept lines of `corpus`.
BinarizedSplit binarize_corpus(const text::Dictionary& dict, const PieceCorpus& corpus,
                               const std::vector<bool>& keep, int workers, ProgressCounter* progress = nullptr);

// Both stages fused, without keeping the encoded corpus (valid/test splits, benchmark).
BinarizedSplit encode_and_binarize(const text::SentencePieceModel& model, const text::Dictionary& dict,
                                   const std::vector<std::string>& lines, int workers,
                                   ProgressCounter* progress = nullptr);

}  // namespace csan::data
