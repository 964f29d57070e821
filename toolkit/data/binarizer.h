// The encode + binarize stages of preprocessing, parallel over std::threads: raw lines
// -> SentencePiece pieces -> dictionary ids (+ </s>) -> .bin/.idx.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "toolkit/data/indexed_dataset_format.h"
#include "toolkit/text/dictionary.h"
#include "toolkit/text/sentencepiece.h"

namespace csan::data {

// Token ids of many sequences back to back, ready for IndexedDatasetWriter.
struct BinarizedSplit {
  std::vector<int32_t> ids;
  std::vector<int32_t> sizes;
  int64_t unknown = 0;  // pieces replaced by <unk>

  int64_t tokens() const { return static_cast<int64_t>(ids.size()); }
  void append(const BinarizedSplit& other);
};

// Lines processed so far, for a progress display; may be null.
using ProgressCounter = std::atomic<int64_t>;

// Each line as its pieces joined by single spaces (the text spm_encode would print).
std::vector<std::string> encode_to_pieces(const text::SentencePieceModel& model,
                                          const std::vector<std::string>& lines, int workers,
                                          ProgressCounter* progress = nullptr);

// Dictionary ids of space-separated piece lines; lines whose `keep` entry is false are
// skipped (keep may be empty: keep all).
BinarizedSplit binarize_pieces(const text::Dictionary& dict, const std::vector<std::string>& piece_lines,
                               const std::vector<bool>& keep, int workers,
                               ProgressCounter* progress = nullptr);

// Both stages fused, without the intermediate piece text (valid/test splits, benchmark).
BinarizedSplit encode_and_binarize(const text::SentencePieceModel& model, const text::Dictionary& dict,
                                   const std::vector<std::string>& lines, int workers,
                                   ProgressCounter* progress = nullptr);

// Writes PREFIX.bin/.idx with fairseq's dtype choice for a vocabulary of `vocab_size`.
void write_dataset(const std::string& prefix, const BinarizedSplit& split, size_t vocab_size);

}  // namespace csan::data
