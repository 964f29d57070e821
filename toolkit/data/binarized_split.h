// Sequences of token ids back to back and their writing as fairseq .bin/.idx files: what
// both the translation binarizer and the tagging preprocessor produce. Apart from
// binarizer.h, so that tagging (linked into LibTorch programs) never pulls in
// SentencePiece, whose bundled protobuf clashes with LibTorch's.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace csan::data {

// Token ids of many sequences back to back, ready for IndexedDatasetWriter.
struct BinarizedSplit {
  std::vector<int32_t> ids;
  std::vector<int32_t> sizes;
  int64_t unknown = 0;  // pieces replaced by <unk>

  int64_t tokens() const { return static_cast<int64_t>(ids.size()); }
  void append(const BinarizedSplit& other);
};

// Writes PREFIX.bin/.idx with fairseq's dtype choice for a vocabulary of `vocab_size`.
void write_dataset(const std::string& prefix, const BinarizedSplit& split, size_t vocab_size);

}  // namespace csan::data
