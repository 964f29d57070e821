// fairseq's mmap indexed dataset (.idx/.bin), byte-compatible in both directions.
// .idx: magic "MMIDIDX\0\0", uint64 version 1, uint8 dtype code, uint64 number of
// sequences, uint64 number of doc-index entries, int32 sizes[n], int64 pointers[n]
// (byte offsets into .bin), int64 doc_idx[m]. .bin: the token ids back to back.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace csan::data {

class IndexedDatasetWriter;  // defined in indexed_dataset_writer.h

// Read-only view of PREFIX.idx / PREFIX.bin (memory-mapped). Throws csan::Error naming
// the file when it is missing, truncated or not in this format.
class MMapIndexedDataset {
 public:
  explicit MMapIndexedDataset(const std::string& prefix);
  ~MMapIndexedDataset();
  MMapIndexedDataset(const MMapIndexedDataset&) = delete;
  MMapIndexedDataset& operator=(const MMapIndexedDataset&) = delete;

  size_t size() const;                    // number of sequences
  int64_t length(size_t i) const;         // tokens in sequence i
  std::vector<int64_t> get(size_t i) const;  // token ids of sequence i
  const std::vector<int32_t>& sizes() const;

 private:
  struct Impl;
  Impl* impl_;
};

}  // namespace csan::data
